/*
 * The closed method table and the life of one call. Both transports hand
 * decoded messages here; dispatch answers through a sink and never knows
 * which transport it serves.
 */
#ifndef DISPATCH_H
#define DISPATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jsonrpc.h"
#include "mcp_err.h"
#include "session.h"

struct json_object;
struct toolset;
struct tool_env;
struct audit;
struct approvals;

/* Server-wide and immutable while serving; shared by every thread. */
struct server {
	const struct toolset *tools;	/* borrowed from main */
	const struct tool_env *env;	/* borrowed from main */
	struct audit *audit;		/* borrowed; NULL when not auditing */
	const char *instructions;	/* static, may be NULL */
	/*
	 * Optional observer of every finished tools/call (the HTTP
	 * transport's metrics). Called on the calling thread, so it must be
	 * thread-safe; tool is static. ran: a sandbox or an engine ran, for
	 * duration_us.
	 */
	void (*on_call)(void *arg, const char *tool, enum mcp_err st,
	    bool is_error, bool ran, uint64_t duration_us);
	void *on_call_arg;
	/*
	 * MCP tasks (tasks.h): the store, or NULL when none are offered; and
	 * the policy's bounds: the longest deadline of a task, how long its
	 * result is kept once ended, and (2026-07-28, where the server
	 * decides) the deadline past which a call becomes a task.
	 */
	struct tasks *tasks;		/* borrowed */
	/* approvals (approval.h): grants and the requestState key; NULL:
	 * a call that needs the user's yes is refused */
	struct approvals *approvals;	/* borrowed */
	uint32_t task_timeout_ms;
	uint32_t task_ttl_ms;
	uint32_t task_threshold_ms;
};

/*
 * Where one request's messages go: notifications tied to it (progress, log)
 * and then its response. send is thread-safe and returns -1 once the peer
 * is gone. msg is compact JSON without a trailing newline, borrowed.
 */
struct msg_sink {
	int (*send)(void *arg, const char *msg, size_t len);
	void *arg;
};

/* Ends every task (tasks.h: cancelled, their threads waited for) and
 * every run_code session (tools/repl.h): a transport calls it before its
 * sessions and workspaces go. */
void dispatch_end_tasks(const struct server *srv);
/* An MCP session of the handshake era ended: so do its run_code
 * sessions, before its workspace goes. */
void dispatch_session_gone(const struct server *srv,
    const struct session *sess);

/* The protocol versions we speak, newest first, NULL-terminated. */
extern const char *const dispatch_legacy_versions[];
extern const char *const dispatch_modern_versions[];

/*
 * Handles one message and sends its response (if any) through sink. Blocks
 * for as long as the call runs. Returns the error the response carried
 * (MCP_OK for a result, for a notification, or when nothing was sent), so
 * an HTTP transport can pick its status code.
 */
enum mcp_err dispatch_message(const struct server *srv, struct session *sess,
    const struct rpc_msg *msg, const struct msg_sink *sink);

/*
 * For transports that queue a request before a thread runs it: register it
 * now (on the reading thread), so a notifications/cancelled that arrives
 * while it waits finds it; then run it with dispatch_message_queued(),
 * which ends the registration. fl must stay valid until then. -1 when the
 * session has MCP_MAX_INFLIGHT requests already.
 */
int dispatch_enqueue(struct session *sess, const struct rpc_msg *msg,
    struct inflight *fl);
enum mcp_err dispatch_message_queued(const struct server *srv,
    struct session *sess, const struct rpc_msg *msg,
    const struct msg_sink *sink, struct inflight *fl);

/* Whether a 2026-07-28 request's _meta clientCapabilities has cap. */
bool dispatch_client_declares(const struct rpc_msg *msg, const char *cap);

/* Whether this message may run long (tools/call): transports run those off
 * the reading thread. */
bool dispatch_runs_long(const struct rpc_msg *msg);

/* Whether a request may touch its session's workspace (tools/call, the
 * workspace's resources), so that a transport gives it one. */
bool dispatch_uses_workspace(const struct rpc_msg *msg);

/*
 * Whether a message is answered within a small bound: everything but a
 * tools/call of a tool that is not marked quick (see tool.h). Transports
 * may answer quick messages on their reading thread.
 */
bool dispatch_is_quick(const struct server *srv, const struct rpc_msg *msg);

/* Whether a tools/call may send notifications before its result (it asked
 * for progress, a log level is set) or requests of ours (it may ask the
 * user: approval.c, an eliciting fixture): HTTP then answers with SSE. */
bool dispatch_may_notify(const struct server *srv, struct session *sess,
    const struct rpc_msg *msg);

/* The modern protocol version a message names in its _meta, or NULL. */
const char *dispatch_modern_version(const struct rpc_msg *msg);

/*
 * The tools offered, for transports (metric labels, headers mirrored from
 * arguments), which never include tools/: how many, the name of the i-th
 * (i < count; static), and the tools/list entry of name (borrowed for the
 * server's life, or NULL).
 */
size_t dispatch_tool_count(const struct server *srv);
const char *dispatch_tool_name(const struct server *srv, size_t i);
struct json_object *dispatch_tool_listing(const struct server *srv,
    const char *name);

#endif
