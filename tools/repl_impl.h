/*
 * Inside the session table (repl.c, repl_tools.c): its structs, and the
 * helpers both files use. Locking as repl.c's opening comment says.
 */
#ifndef REPL_IMPL_H
#define REPL_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "repl.h"

/* An owner key: "s:" or "p:" and an id (tool.h, tool_call.owner). */
#define REPL_OWNER_MAX		96

struct egress_call;
struct sb_started;

/* A call waiting for its session, or running on it (the queue's head). */
struct repl_waiter {
	struct repl_waiter *next;
};

struct repl {
	struct repls *t;
	char owner[REPL_OWNER_MAX];
	char name[REPL_NAME_MAX + 1];
	int lang;
	struct sb_started *sb;		/* NULL until its first call starts it */
	uint64_t born_ms, last_ms;	/* started; its last call ended */
	unsigned calls;
	unsigned refs;			/* calls queued or running */
	struct repl_waiter *head, *tail;
	pthread_cond_t moved;		/* the queue moved */
	/* a python built ahead runs the driver as its call's code: what
	 * goes before the first call's input (pool.h, warm_stdin) */
	char *prefix;
	size_t prefix_len;
	/* with network: the proxy's listening socket in its netns (the
	 * sandbox's), and the call serving it now (the turn's only) */
	bool net;
	int lfd;
	struct egress_call *cur_ec;
	bool in_table;
	bool dead;			/* ended: why says so */
	char why[160];
};

struct repl_ended {
	char owner[REPL_OWNER_MAX];
	char name[REPL_NAME_MAX + 1];
	int lang;
	char why[160];
	bool used;
};

/*
 * A session's sandbox, started on the table's own thread: the init dies
 * with the thread that cloned it (PR_SET_PDEATHSIG is per thread), and a
 * call's thread may be gone long before its session (HTTP's are per
 * connection).
 */
struct start_job {
	struct repl *r;
	struct sb_ctx *sb;
	const struct sb_request *req;
	struct sb_result *res;
	int rc;
	bool done;
};

struct repls {
	pthread_mutex_t lock;
	pthread_cond_t wake;		/* the thread's: a job, an end, stop */
	pthread_cond_t job_done;	/* a start_job is done or taken */
	struct start_job *job;
	const struct policy *p;
	struct repl *open[REPL_MAX];
	size_t n;
	struct repl_ended ended[REPL_ENDED_KEPT];
	size_t next_ended;
	pthread_t reaper;
	bool reaper_on, stop;
};

/* A refusal: the audit's reason, then the message (printf). */
#define REFUSE(call, reason, ...) \
	(render_refused((call)->audit, (reason)), tool_result_error(__VA_ARGS__))

uint64_t repl_now_ms(void);
/* What an interval reads as in a message: "10 min", "90 s". */
void repl_say_ms(uint64_t ms, char *buf, size_t len);
/* t->lock held: */
struct repl *repl_find_locked(struct repls *t, const char *owner,
    const char *name);
struct repl_ended *repl_find_ended_locked(struct repls *t, const char *owner,
    const char *name);
void repl_end_locked(struct repls *t, struct repl *r, const char *why);
struct json_object *repl_queue_on(struct repls *t,
    const struct tool_call *call, struct repl *r, struct repl_waiter *w,
    bool *gone);
bool repl_dequeue_locked(struct repls *t, struct repl *r,
    struct repl_waiter *w);
/* Its sandbox killed, its memory freed: no call holds it any more. */
void repl_free(struct repl *r);

#endif
