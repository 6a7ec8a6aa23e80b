/*
 * What dispatch.c and dispatch_task.c (the tasks of tools/call) share
 * inside the server library: the two eras, one request being answered,
 * and the helpers both answer with. Not for the transports (dispatch.h is
 * theirs).
 */
#ifndef DISPATCH_IMPL_H
#define DISPATCH_IMPL_H

#include <stdarg.h>
#include <stdbool.h>

#include <json-c/json.h>

#include "approval.h"
#include "audit.h"
#include "dispatch.h"
#include "tool.h"

struct tool_entry;
struct task;

#define META_VERSION	MCP_META_VERSION
#define META_CAPS	MCP_META_CAPS
#define META_LOGLEVEL	MCP_META_LOGLEVEL
#define META_SERVERINFO	MCP_META_SERVERINFO
#define META_RELATED_TASK	"io.modelcontextprotocol/related-task"
#define TASKS_EXTENSION		"io.modelcontextprotocol/tasks"

enum era {
	ERA_LEGACY,
	ERA_MODERN,
};

/* One request being answered: what handlers need besides params. */
struct req {
	const struct server *srv;
	struct session *sess;
	const struct rpc_msg *msg;
	const struct msg_sink *sink;
	enum era era;
	int log_level;			/* modern: from _meta; -1 = none */
	const char *err_msg;		/* static text for a protocol error */
	char err_buf[256];		/* or formatted here */
	struct json_object *err_data;	/* owned; error data, may be NULL */
	struct inflight *fl;		/* this request in the session table */
	char *raw;			/* owned: a result already serialised
					 * (the cached tools/list), or NULL */
	size_t raw_len;
	/*
	 * A tools/call's audit line, written once the response is out: the
	 * client does not wait for the log. Owned references.
	 */
	bool audit_pending;
	const char *audit_tool;		/* static, from the registry */
	struct json_object *audit_args;
	struct json_object *audit_result;	/* NULL: a protocol error */
	struct tool_audit audit;
	bool sandboxed;			/* a sandboxed tool was called */
	struct task *task;		/* a task's own run of tools/call */
	/* a task's run: what the user allowed before the task started (the
	 * task has no channel to ask on), or NULL */
	const struct approval_out *approved;
};

/* A protocol error answers r: st, its message formatted (UTF-8 kept
 * whole); returns st. */
enum mcp_err req_fail(struct req *r, enum mcp_err st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
enum mcp_err req_vfail(struct req *r, enum mcp_err st, const char *fmt,
    va_list ap) __attribute__((format(printf, 3, 0)));
/*
 * -32021 for a client that did not declare what this request needs: the
 * client capability cap, or (cap NULL) the extension ext, named in the
 * error's data as requiredCapabilities, the way the client declares it.
 */
enum mcp_err req_missing_capability(struct req *r, const char *cap,
    const char *ext, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* {key: val}, taking val; NULL when it could not be built. */
struct json_object *req_obj1(const char *key, struct json_object *val);
/* The log level r's notifications go at: the request's, or the session's. */
int req_log_level(struct req *r);
/* After the answer is out: the audit line, the pythons to start again. */
void req_after_answer(struct req *r);
/* What the approval stage needs of r (owner: SESSION_OWNER_KEY bytes). */
void req_approval_ctx(struct req *r, const struct tool_def *def,
    const struct json_object *args, char *owner, struct approval_call *ac);
/* Whether client capabilities (an object) offer elicitation's form mode:
 * there and empty (2025-06-18's only mode), or naming "form". */
bool req_elicits_form(struct json_object *caps);

/* tools/call, top to bottom; a task's run calls it again (task_call_as()
 * gets it, so that dispatch_task.c never calls back into dispatch.c). */
enum mcp_err req_tools_call(struct req *r, struct json_object **ret);
typedef enum mcp_err (*req_method_fn)(struct req *r, struct json_object **ret);

/* ---- dispatch_req.c: the above but req_tools_call (dispatch.c) ---- */

/* ---- dispatch_task.c ---- */

/* Whether a 2026-07-28 request's client declares the tasks extension. */
bool task_declared(const struct rpc_msg *msg);
/* tools/call made a task (*made): its answer in *ret; else a plain call. */
enum mcp_err task_call_as(struct req *r, const struct tool_entry *tool,
    struct json_object *args, struct json_object **ret, bool *made,
    req_method_fn run);
enum mcp_err m_tasks_get(struct req *r, struct json_object **ret);
enum mcp_err m_tasks_result(struct req *r, struct json_object **ret);
enum mcp_err m_tasks_list(struct req *r, struct json_object **ret);
enum mcp_err m_tasks_cancel(struct req *r, struct json_object **ret);
enum mcp_err m_tasks_update(struct req *r, struct json_object **ret);

#endif
