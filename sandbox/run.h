/*
 * Inside exec.c and launch.c: a run in flight as the server sees it, the
 * channels between the server and its init, and the launch that makes
 * them. Nothing here is the library's interface (sandbox.h).
 */
#ifndef SB_RUN_H
#define SB_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "internal.h"

/* The parent's view of one run in flight. */
struct run {
	pid_t pid;
	int pidfd;
	int out, err, status;	/* read ends, non-blocking; -1 once at EOF */
	bool reaped, killed, forked, got_exit, got_fail;
	bool ready;		/* deferred: SB_STATUS_READY came */
	struct sb_status exit_rec, fail_rec;
	int init_ws;
	struct rusage ru;
	/* the program's stdin: a pipe we write as it drains (the launch,
	 * then the call's bytes), then close */
	int in_w;		/* non-blocking; -1 when done */
	const char *in_data;
	size_t in_len, in_off;
	int oom_efd;		/* v1 cgroup: readable at an OOM kill; borrowed */
	bool oom_fired;		/* it was */
	/* SB_NET_PROXY: the init's listening socket (-1: none), its caller */
	int net_lfd;
	sb_listener_fn net_fn;
	void *net_arg;
	/* a conversation (sb_turn): stdin stays open after in_data; what
	 * is read goes through sink, which ends the turn (turn_done); its
	 * deadline interrupts, grace_ms before the kill */
	bool keep_in, turn_done, interrupted;
	sb_sink_fn sink;
	void *sink_arg;
	uint32_t grace_ms;
	uint64_t next_int;	/* interrupted: the next SIGINT (mono_us) */
};

/* Both ends of every channel between the server and one sandbox. */
struct chans {
	int out[2], err[2];	/* program's stdout, stderr */
	int stat[2];		/* status records, child -> parent */
	int sync[2];		/* socket: "maps written"; held open by us */
	int in[2];		/* the program's stdin: the launch, then stdin */
	int plan;		/* memfd with the packed plan, or -1 */
	/* the plan's trees (workspace, writable binds) as detached mounts */
	int tree[SB_MAX_TREES];
};

/* A run between its launch and its supervision (see sb_start()). */
struct sb_started {
	struct sb_ctx *ctx;
	struct sb_plan *p;
	struct chans c;
	struct run r;
	int slot;		/* netns pool slot, or -1 */
	int uid_slot;		/* uid pool slot, or -1: the shared uid */
	uid_t uid;		/* the run's kernel uid */
	struct sb_cg_run cg;	/* the run's cgroup, if the context has them */
	bool deferred;		/* built ahead: the launch comes with the call */
	/* started ahead: the request's shape; the launch (with the stdin
	 * of its request); the call's stdin behind what is left of it */
	char *shape, *launch, *queued;
	size_t shape_len;
	bool over;		/* a conversation whose run has ended */
};

/* exec.c: what turn.c shares of a run's supervision */
uint64_t sb_mono_us(void);
void sb_feed(struct run *r);
int sb_supervise(struct run *r, const struct sb_request *req,
    const struct sb_plan *p, struct sb_cancel *cancel, struct sb_result *res,
    uint64_t t0);
int sb_end_run(struct sb_started *s, struct sb_result *res);
int sb_take_call(struct sb_started *s, const struct sb_request *req,
    struct sb_result *res);
int sb_queue_input(struct run *r, const void *in, size_t in_len,
    char **owned);

/* close(*fd) if open; *fd is -1 after. */
void sb_close_fd(int *fd);
int sb_chans_open(struct chans *c, const struct sb_ctx *ctx, uid_t uid,
    struct sb_result *res);
void sb_chans_close(struct chans *c);
/* The CPU weight of the session (autogroup) pid is in, as a nice value. */
void sb_autogroup_nice(pid_t pid, int nice);
/*
 * Clone the sandbox's init, in a pooled netns when one is free (joined by
 * this thread only around the clone), write its id maps and release it.
 * On success r->pid runs; on failure res says why and r->pid, if set, is
 * for the caller to kill and reap.
 */
int sb_launch(struct sb_ctx *ctx, struct sb_plan *p,
    const struct sb_request *req, struct chans *c, int *slot, uid_t uid,
    struct sb_cg_run *cg, struct run *r, struct sb_result *res);

#endif
