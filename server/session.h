/*
 * One conversation: the stdio process, or one HTTP session (handshake era),
 * or one stateless HTTP request (2026-07-28). Holds the negotiated version,
 * the log level, the workspace and the calls in flight (for cancellation).
 * Workers and the reader touch it concurrently: every field after lock is
 * guarded by it, and only the functions below take it (callers never do).
 */
#ifndef SESSION_H
#define SESSION_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include <json-c/json.h>

#include "mcp_limits.h"

struct tool_call;
struct workspace;

/* One request being handled; lives on the handling thread's stack. */
struct inflight {
	char key[MCP_MAX_ID_LEN + 3];	/* rpc_msg id_key */
	struct tool_call *call;		/* borrowed; a tool call to cancel
					 * (tool_call_cancel), or NULL */
	bool cancelled;			/* no response may follow */
	bool asks_closed;		/* none of its asks may wait any more */
	struct inflight *next;
};

/*
 * A request of ours to the client (elicitation/create), waiting for its
 * response; lives on the asking thread's stack, listed in the session.
 */
struct session_ask {
	char key[MCP_MAX_ID_LEN + 3];	/* our id, as rpc_msg id_key */
	struct json_object *response;	/* owned once answered: the message */
	bool answered;
	bool aborted;			/* the session is stopping */
	struct session_ask *next;
};

struct session {
	pthread_mutex_t lock;
	pthread_cond_t idle;		/* signalled when n_inflight drops */
	pthread_cond_t answered;	/* an ask answered, a call cancelled
					 * (CLOCK_MONOTONIC) */
	bool initialized;		/* legacy: initialize answered */
	bool client_elicits;		/* legacy: initialize declared
					 * elicitation (form mode) */
	bool client_samples;		/* legacy: and sampling */
	char version[16];		/* legacy: negotiated protocol version */
	int log_level;			/* legacy logging/setLevel; -1 = none */
	const char *workspace;		/* borrowed from the transport, or
					 * ws->path once made; NULL until then */
	/* A lazy workspace: made at the first call that needs one, so a
	 * session that only lists tools or calculates never touches disk. */
	bool ws_lazy;
	const char *ws_dir;		/* borrowed: the user's dir, or NULL
					 * for a fresh private one */
	uid_t ws_owner;			/* owner of a fresh one, or -1 */
	struct workspace *ws;		/* owned once made */
	char id[48];			/* for the audit log: "stdio" or the
					 * HTTP session id */
	struct inflight *inflight;	/* list, guarded by lock */
	size_t n_inflight;
	/*
	 * Set by the transport before the session serves, then constant:
	 * whose tasks it sees (tasks.h: "stdio", or the hex digest of the
	 * HTTP principal); a sink that outlives each request (stdio's
	 * stdout), for a task's notifications, or NULL; and, for a session
	 * that may end before a task it started, hold(arg, +1 / -1), which
	 * keeps it (and its workspace) alive, or NULL when it lives as long
	 * as the tasks do.
	 */
	char owner[72];
	int (*bg_send)(void *arg, const char *msg, size_t len);
	void *bg_arg;
	void (*hold)(void *arg, int delta);
	void *hold_arg;
	/* legacy resources/subscribe: owned uris, guarded by lock */
	char **subs;
	size_t nsubs;
	struct session_ask *asks;	/* waiting, guarded by lock */
	bool answers_over;		/* no response can come any more */
};

/*
 * Resources one session may watch at once: each is a string compared
 * after every tool call that changed files.
 */
#define SESSION_MAX_SUBSCRIPTIONS	256

void session_init(struct session *s, const char *workspace);
/* Like session_init, with the workspace made on first use. */
void session_init_lazy(struct session *s, const char *dir, uid_t owner);
void session_fini(struct session *s);
/* The workspace path, making it now if it is lazy and not made yet. NULL
 * with err filled when it cannot be made. Thread-safe. */
const char *session_workspace(struct session *s, char *err, size_t errlen);

/* Registers f under its key; -1 if MCP_MAX_INFLIGHT are running. */
int session_begin(struct session *s, struct inflight *f);
/* The same without the cap, for requests answered at once on the calling
 * thread (they cannot pile up). */
void session_begin_uncapped(struct session *s, struct inflight *f);
/* Unregisters f; returns whether it was cancelled (then send nothing). */
bool session_end(struct session *s, struct inflight *f);
/* notifications/cancelled: marks and kills the call with key, if any. */
void session_cancel(struct session *s, const char *key);
/* Cancels every call in flight (SIGTERM, session DELETE). */
void session_cancel_all(struct session *s);
/* Kills the sandbox of every call in flight without cancelling the
 * calls: each still answers, with the error of a killed run (shutdown). */
void session_abort_all(struct session *s);
/* Waits until no call is in flight. */
void session_wait_idle(struct session *s);
bool session_is_cancelled(struct session *s, const struct inflight *f);
/*
 * While f runs call: a cancel of f cancels call too (at once, if f was
 * cancelled already). session_detach() before call ends.
 */
void session_attach(struct session *s, struct inflight *f,
    struct tool_call *call);
void session_detach(struct session *s, struct inflight *f);
/*
 * send(arg, msg, len) unless f is cancelled, checked and sent under the
 * lock: a cancel handled in between would otherwise let one message of f
 * through after it. Returns send's value, or 0 when nothing was sent.
 */
int session_send(struct session *s, const struct inflight *f,
    int (*send)(void *arg, const char *msg, size_t len), void *arg,
    const char *msg, size_t len);

/*
 * Whose run_code sessions a request of s reaches (tool.h, tool_call.owner):
 * "s:" and its id in the handshake era, "p:" and its owner (the principal)
 * in the stateless one. buf of SESSION_OWNER_KEY bytes.
 */
#define SESSION_OWNER_KEY	(2 + sizeof(((struct session *)0)->owner) + \
	sizeof(((struct session *)0)->id))
void session_owner_key(const struct session *s, bool modern, char *buf);

/*
 * Our requests to the client: open a (its key set) before sending it,
 * wait until its response came (owned, returned: the whole message), f
 * was cancelled, the session aborts, or the CLOCK_MONOTONIC deadline
 * passes (NULL for those), then close it. A response the transport
 * reads goes to session_ask_answer(): true when an ask took it (root
 * borrowed, a reference is taken).
 */
void session_ask_open(struct session *s, struct session_ask *a);
struct json_object *session_ask_wait(struct session *s,
    const struct inflight *f, struct session_ask *a,
    const struct timespec *deadline);
void session_ask_close(struct session *s, struct session_ask *a);
/* f's asks waiting now return, and later ones do not wait (the call's
 * proxy ends: approval.c's mid-run asks). */
void session_asks_close(struct session *s, struct inflight *f);
/* No response can reach this session any more (stdin ended): every ask
 * returns at once, now and later. */
void session_answers_over(struct session *s);
bool session_ask_answer(struct session *s, const char *key,
    struct json_object *root);

/* Handshake era: initialize answered with version (now initialized). */
void session_set_version(struct session *s, const char *version);
/* Handshake era: what initialize's capabilities declared. */
void session_set_client_caps(struct session *s, bool elicits, bool samples);
bool session_client_elicits(struct session *s);
bool session_client_samples(struct session *s);
bool session_initialized(struct session *s);
/* logging/setLevel; -1 = none set */
void session_set_log_level(struct session *s, int level);
int session_log_level(struct session *s);

/*
 * A workspace a transport owns for its sessions (workspace/workspace.h's,
 * reached through this layer so that transports never include it):
 * a fresh private one when dir is NULL (owned by owner, or -1), else dir.
 * 0, or -1 with err filled. The path is borrowed for the workspace's life;
 * session_ws_free() removes a private one. NULL-safe.
 */
int session_ws_open(const char *dir, uid_t owner, struct workspace **ret,
    char *err, size_t errlen) __attribute__((warn_unused_result));
const char *session_ws_path(const struct workspace *ws);
void session_ws_free(struct workspace *ws);
/* How many fresh workspaces sessions and principals share (0: no bound). */
size_t session_ws_budget(void);

/* resources/subscribe: 0 (also when already watched), -ENOSPC past
 * SESSION_MAX_SUBSCRIPTIONS, -ENOMEM. */
int session_subscribe(struct session *s, const char *uri);
/* resources/unsubscribe; an uri not watched is no error. */
void session_unsubscribe(struct session *s, const char *uri);
bool session_is_subscribed(struct session *s, const char *uri);
bool session_has_subscriptions(const struct session *s);

#endif
