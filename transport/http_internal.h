/*
 * Internals shared by the HTTP transport's files: the transport context
 * (everything the MHD threads share), the session table, the metrics and
 * the per-request message stream. Nothing here is global: one struct
 * http_ctx lives on transport_http_run()'s stack.
 */
#ifndef HTTP_INTERNAL_H
#define HTTP_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "dispatch.h"
#include "http_mhd.h"
#include "http_limits.h"
#include "mcp_err.h"
#include "session.h"
#include "sha256.h"
#include "transport_http.h"

struct workspace;

/* ---- metrics (http_metrics.c): lock-free counters ---- */

/* Why a request was refused before dispatch; one counter each. */
enum http_reject {
	HTTP_REJ_HOST,		/* Host not loopback (DNS rebinding) */
	HTTP_REJ_ORIGIN,	/* Origin present and not allowed */
	HTTP_REJ_AUTH,		/* bearer token missing or wrong */
	HTTP_REJ_CONNECTIONS,	/* connection cap */
	HTTP_REJ_HEADERS,	/* header bytes cap */
	HTTP_REJ_BODY,		/* body size cap */
	HTTP_REJ_DEADLINE,	/* body too slow */
	HTTP_REJ_SESSIONS,	/* session cap */
	HTTP_REJ_SESSION_CALLS,	/* per-session concurrency cap */
	HTTP_REJ_SESSION,	/* session id missing, unknown or not yours */
	HTTP_REJ_HEADER_DEADLINE, /* headers not complete in time */
	HTTP_REJ_ADDR_CONNECTIONS, /* per-address connection cap */
	HTTP_REJ_SHUTDOWN,	/* a request after SIGTERM */
	HTTP_REJ_PROTOCOL,	/* method, Accept, types, version, headers */
	HTTP_REJ_N,
};

/* Duration buckets of tool runs, upper bounds in microseconds. */
#define HTTP_METRIC_BUCKETS	7

struct http_tool_metrics {
	const char *name;		/* borrowed from the toolset */
	atomic_uint_fast64_t ok, tool_error, protocol_error;
	atomic_uint_fast64_t runs;	/* ran a sandbox or engine */
	atomic_uint_fast64_t bucket[HTTP_METRIC_BUCKETS];
	atomic_uint_fast64_t sum_us;
};

/* HTTP status codes we count one by one; others fall in "other". */
#define HTTP_METRIC_CODES	16

struct http_metrics {
	struct http_tool_metrics *tools;	/* owned; n_tools */
	size_t n_tools;
	atomic_uint_fast64_t rejected[HTTP_REJ_N];
	atomic_uint_fast64_t status[HTTP_METRIC_CODES + 1];
	atomic_uint_fast64_t sessions_created, sessions_expired,
	    sessions_deleted, sessions_evicted;
	atomic_uint_fast64_t streams_closed;	/* hung up mid-call */
	atomic_uint_fast64_t calls_cancelled;	/* ...cancelling it */
	atomic_int connections;		/* open right now */
};

int http_metrics_init(struct http_metrics *m, const struct server *srv);
void http_metrics_fini(struct http_metrics *m);
void http_metrics_status(struct http_metrics *m, unsigned int code);
void http_metrics_reject(struct http_metrics *m, enum http_reject why);
/* struct server.on_call hook: one finished tools/call. */
void http_metrics_on_call(void *arg, const char *tool, enum mcp_err st,
    bool is_error, bool ran, uint64_t duration_us);
/* Prometheus text exposition, malloc'd; sessions_active from the table. */
char *http_metrics_render(struct http_metrics *m, size_t sessions_active,
    size_t *ret_len);

/* ---- sessions (http_session.c) ---- */

/* One handshake-era session. Shared by its requests; freed at refs 0. */
struct http_session {
	char id[2 * MCP_HTTP_SESSION_ID_BYTES + 1];	/* hex */
	uint8_t principal[SHA256_LEN];	/* digest of the creating token */
	struct session sess;		/* dispatch's state */
	struct workspace *ws;		/* owned */
	int refs;			/* guarded by the table lock */
	int active;			/* requests in flight; table lock */
	bool dead;			/* removed from the table */
	struct timespec last_used;	/* monotonic; table lock */
	struct http_sessions *table;	/* borrowed: for a task's hold */
	struct http_session *next;
};

struct http_sessions {
	pthread_mutex_t lock;
	struct http_session *head;	/* owned (one ref each) */
	size_t n;
	const char *ws_dir;		/* borrowed: user's dir or NULL */
	uid_t ws_owner;
	struct http_metrics *metrics;	/* borrowed */
	size_t share;			/* sessions one principal may hold */
	const struct server *srv;	/* borrowed: whom an end is told */
};

enum http_sess_rc {
	HTTP_SESS_OK,
	HTTP_SESS_FULL,		/* cap reached, nothing expirable */
	HTTP_SESS_UNKNOWN,	/* no such id, ended, or another principal */
	HTTP_SESS_BUSY,		/* the session's call cap is reached */
	HTTP_SESS_ERROR,	/* getrandom or workspace failure */
};

void http_sessions_init(struct http_sessions *t, const char *ws_dir,
    uid_t ws_owner, struct http_metrics *metrics);
/* n principals share the session cap equally (MCP_HTTP_MAX_SESSIONS / n
 * each; n 0 or 1: one principal holds them all). */
void http_sessions_set_principals(struct http_sessions *t, size_t n);
/* Ends every session (cancels its calls, waits, removes workspaces). */
void http_sessions_fini(struct http_sessions *t);
/* A new session, in the table, with one ref and one active request for
 * the caller. */
enum http_sess_rc http_session_create(struct http_sessions *t,
    const uint8_t principal[SHA256_LEN], struct http_session **ret);
/* Finds id for principal: one ref and one active request for the caller. */
enum http_sess_rc http_session_acquire(struct http_sessions *t,
    const char *id, const uint8_t principal[SHA256_LEN],
    struct http_session **ret);
/* Ends the caller's request and drops its ref. */
void http_session_release(struct http_sessions *t, struct http_session *s);
/* DELETE: removes id (cancelling its calls). HTTP_SESS_OK or _UNKNOWN. */
enum http_sess_rc http_session_delete(struct http_sessions *t,
    const char *id, const uint8_t principal[SHA256_LEN]);
/* Forgets a session whose initialize failed (the caller's ref goes too). */
void http_session_discard(struct http_sessions *t, struct http_session *s);
size_t http_sessions_count(struct http_sessions *t);
/* Expires sessions idle for MCP_HTTP_SESSION_IDLE_S (and their workspaces). */
void http_sessions_sweep(struct http_sessions *t);

/* ---- open connections (http_conn.c): header deadline, address cap ---- */

struct http_conn;
struct sockaddr;

struct http_conns {
	pthread_mutex_t lock;
	struct http_conn *head;		/* owned */
	int header_s;			/* first headers due this long after
					 * accept (--header-deadline) */
};

void http_conns_init(struct http_conns *cs, unsigned int header_s);
void http_conns_fini(struct http_conns *cs);
/* Whether a client at addr may open one more connection. */
bool http_conn_admit(struct http_conns *cs, const struct sockaddr *addr);
/* At accept (MHD's connection-started notification); sets *socket_ctx. */
void http_conn_started(struct http_conns *cs, const struct sockaddr *addr,
    int fd, void **socket_ctx);
/* At close (MHD's connection-closed notification, before the socket is). */
void http_conn_closed(struct http_conns *cs, void **socket_ctx);
/* A request's headers are complete (its first access-handler call): its
 * body, if any, must be in within body_s. */
void http_conn_headers_done(struct http_conns *cs, void *socket_ctx,
    unsigned int body_s);
/* A request's body is complete (its last access-handler call). */
void http_conn_body_done(struct http_conns *cs, void *socket_ctx);
/* A request ended: the next one on the connection has a deadline too. */
void http_conn_request_done(struct http_conns *cs, void *socket_ctx);
/* Shuts down connections past their header deadline (how many; returned)
 * or their body's (how many: *ret_bodies). */
size_t http_conns_sweep(struct http_conns *cs, size_t *ret_bodies);

/* ---- what belongs to a principal (http_tenant.c) ---- */

/* The owner key of principal's tasks (session.h's owner): its hex. */
void http_owner_key(const uint8_t principal[SHA256_LEN], char *dst,
    size_t len);

/* A principal's workspace for its stateless (2026-07-28) requests. */
struct http_tenant {
	uint8_t principal[SHA256_LEN];
	struct workspace *ws;		/* owned */
};

struct http_tenants {
	pthread_mutex_t lock;
	/* one per token, or one for everyone without tokens */
	struct http_tenant t[MCP_HTTP_MAX_TOKENS + 1];
	size_t n;
	const char *ws_dir;		/* borrowed: user's dir or NULL */
	uid_t ws_owner;
};

void http_tenants_init(struct http_tenants *ts, const char *ws_dir,
    uid_t ws_owner);
/* Removes every principal's fresh workspace. */
void http_tenants_fini(struct http_tenants *ts);
/* The workspace of principal's stateless requests, made at its first use
 * and kept for the server's life; NULL (logged) if it cannot be made. */
const char *http_tenant_workspace(struct http_tenants *ts,
    const uint8_t principal[SHA256_LEN]);

/* Extra response headers, terminated by a NULL name. */
struct http_hdr {
	const char *name;
	const char *value;
};

/* ---- the transport context ---- */

/* A stateless session in use, so that a stop can cancel its calls. */
struct http_live {
	struct session *sess;		/* borrowed */
	struct http_live *next;
};

struct http_ctx {
	struct server srv;		/* copy of main's, with on_call set */
	struct http_mhd mhd;		/* libmicrohttpd, loaded at start */
	const struct http_config *cfg;	/* borrowed */
	uint8_t tokens[MCP_HTTP_MAX_TOKENS][SHA256_LEN];	/* digests */
	size_t n_tokens;		/* 0: no authentication */
	/* --metrics-token-file: the only tokens /metrics answers, if any */
	uint8_t metrics_tokens[MCP_HTTP_MAX_TOKENS][SHA256_LEN];
	size_t n_metrics_tokens;
	struct http_sessions sessions;
	struct http_metrics metrics;
	struct http_tenants tenants;	/* stateless workspaces */
	struct http_conns conns;	/* open connections */
	/* requests between headers and completion; SIGTERM waits on it */
	pthread_mutex_t req_lock;
	pthread_cond_t req_done;
	int requests;
	atomic_bool draining;		/* SIGTERM: no new requests */
	/* call threads still running (detached): stop waits for 0 */
	pthread_mutex_t calls_lock;
	pthread_cond_t calls_done;
	int calls;
	/* stateless sessions in use (on their threads' stacks or streams) */
	pthread_mutex_t live_lock;
	struct http_live *live;
	bool stopping;			/* set once, under live_lock */
};

/* transport_http_run() in parts, so that tests/fuzz can drive the same
 * callbacks without a listening socket (transport_http.c). */
struct MHD_Daemon;
struct sockaddr;
int http_ctx_open(struct http_ctx *ctx, const struct server *srv,
    const struct http_config *cfg, const char *workspace_dir, uid_t ws_owner);
struct MHD_Daemon *http_daemon_start(struct http_ctx *ctx, unsigned int flags,
    int listen_fd);
void http_ctx_stop(struct http_ctx *ctx, struct MHD_Daemon *d);
void http_ctx_close(struct http_ctx *ctx);

/* ---- stateless sessions in use (http_live.c) ---- */

void http_live_add(struct http_ctx *ctx, struct http_live *l,
    struct session *s);
void http_live_remove(struct http_ctx *ctx, struct http_live *l);
/* Stop: marks ctx stopping and cancels every listed session's calls. */
void http_live_cancel_all(struct http_ctx *ctx);
/* Stop, after the grace period: kills their sandboxes, the calls answer. */
void http_live_abort_all(struct http_ctx *ctx);

struct MHD_Connection;

/* ---- the guards (http_guard.c) ---- */

/* Why and how a request is refused before dispatch. */
struct http_refusal {
	unsigned int status;		/* HTTP status */
	enum http_reject why;		/* the metrics counter */
	enum mcp_err err;		/* the JSON-RPC error of the body */
	const char *message;		/* static */
	const struct http_hdr *extra;	/* static, may be NULL */
};

/*
 * The checks before the body: 0 to go on (*principal is the digest of the
 * bearer token, zeros without authentication), 1 with *no filled.
 */
int http_guard(const struct http_ctx *ctx, struct MHD_Connection *conn,
    const char *url, const char *method, uint8_t principal[SHA256_LEN],
    struct http_refusal *no);
/* Whether a browser at origin may talk to us (loopback or configured). */
bool http_origin_allowed(const struct http_ctx *ctx, const char *origin);
/* Reads --token-file into ctx->tokens (digests only). 0 or -1 (logged). */
int http_load_tokens(const char *flag, const char *path,
    uint8_t tokens[][SHA256_LEN], size_t *n_tokens);

/* ---- 2026-07-28 request headers (http_headers.c) ---- */

/* NULL when the request's headers match its body, else why not (a static
 * message for a 400 with -32020). */
const char *http_header_mismatch(const struct http_ctx *ctx,
    struct MHD_Connection *conn, const struct rpc_msg *msg);

/* ---- one request's messages (http_stream.c) ---- */

struct http_msgq;

/*
 * The queue between a tools/call running on its own thread and the
 * connection that answers it (as JSON when only the response came, as SSE
 * once a notification came first). Reference counted: the call thread and
 * the HTTP response each hold one.
 */
struct http_stream {
	pthread_mutex_t lock;
	int efd;			/* eventfd: a message or the end */
	struct http_msgq *head, *tail;	/* owned, queued messages */
	size_t n_queued;
	size_t n_notes;			/* notifications queued, ever */
	bool done;			/* the call returned */
	enum mcp_err st;		/* what its response carried */
	bool closed;			/* the client went away */
	int refs;
	int sock;			/* the connection, for hangups */
	/* the call */
	struct http_ctx *ctx;		/* borrowed */
	struct rpc_msg *msg;		/* owned */
	struct http_session *hs;	/* one ref, or NULL (stateless) */
	struct session own;		/* stateless: a transient session */
	struct http_live live;		/* own, listed while running */
	bool modern;			/* a closed stream cancels */
	bool gone;			/* client_gone() ran (once) */
	/*
	 * The client sent FIN: it half-closed (it still reads) or closed.
	 * Only a write can tell, so the answer becomes SSE and a comment
	 * goes out at once; a closed client then resets the connection.
	 */
	bool peer_eof;
	bool probe;			/* that comment is still to send */
	/* SSE writer state, used only by the response callback */
	char *cur;			/* owned: bytes being sent */
	size_t cur_len, cur_off;
};

/* ws: the workspace of a stateless call (hs NULL), borrowed; may be NULL */
struct http_stream *http_stream_new(struct http_ctx *ctx,
    struct rpc_msg *msg, struct http_session *hs, bool modern, int sock,
    const char *ws, const uint8_t principal[SHA256_LEN]);
void http_stream_unref(struct http_stream *st);
/* Starts the call thread (takes a ref). -1 if the thread cannot start. */
int http_stream_start(struct http_stream *st);
/*
 * Blocks until the first notification or the end. Returns 1 when the
 * answer is plain JSON (the call ended without notifying: *ret_body, its
 * response, malloc'd, or NULL if cancelled; *ret_st), 0 when it must be
 * SSE, -1 when the client went away.
 */
int http_stream_wait_first(struct http_stream *st, char **ret_body,
    size_t *ret_len, enum mcp_err *ret_st);
/* MHD content reader and its free callback for the SSE response. */
ssize_t http_stream_read(void *cls, uint64_t pos, char *buf, size_t max);
void http_stream_free_cb(void *cls);

#endif
