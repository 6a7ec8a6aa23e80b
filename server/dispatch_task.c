/*
 * The tasks of tools/call (tasks.h): a call whose work outlives its
 * request, run on a copy in a session of its own by a thread of the store,
 * and the methods of tasks that reach it. Split from dispatch.c, whose
 * tools/call the task's run calls again (handed over as task_run.run).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dispatch_impl.h"
#include "json_build.h"
#include "log.h"
#include "registry.h"
#include "tasks.h"
#include "timespec.h"
#include "validator.h"

/* ---- tasks (tasks.h): a tools/call whose work outlives its request ---- */

/* The run of one task: a copy of the request and a session of its own on
 * the creating session's workspace, so neither the request's buffers nor
 * a session that ends (an HTTP DELETE, an idle expiry) cut the work. */
struct task_run {
	const struct server *srv;
	req_method_fn run;		/* tools/call (dispatch.c's) */
	struct session sess;		/* the task's own */
	/* the creating session may be gone (a stateless request's): what
	 * the task needs of it is copied */
	void (*hold)(void *arg, int delta);	/* origin's, held +1 */
	void *hold_arg;
	struct rpc_msg *msg;		/* owned copy */
	enum era era;
	int log_level;
	struct inflight fl;		/* in sess: what tasks/cancel reaches */
	struct msg_sink sink;		/* origin's bg_send, or none */
	const char *tool;		/* static */
	struct timespec t0;
	struct approval_out appr;	/* asked before it started */
};

static int
no_send(void *arg, const char *msg, size_t len)
{
	(void)arg;
	(void)msg;
	(void)len;
	return 0;
}

/*
 * The status a form shows. A tool result with isError: 2025-11-25 says
 * "the task should reach failed" (its tasks/result still answers the
 * result); the extension keeps it completed, failed being only for a
 * JSON-RPC error there.
 */
static const char *
task_wire_status(enum task_status st, bool tool_error, bool modern)
{
	if (!modern && st == TASK_COMPLETED && tool_error)
		return task_status_name(TASK_FAILED);
	return task_status_name(st);
}

/* A task as the wire shows it: 2025-11-25 names ttl and pollInterval,
 * the extension ttlMs and pollIntervalMs. */
static struct json_object *
task_json(const struct task_view *v, bool modern)
{
	struct json_object *o = json_object_new_object();

	return jb_built(o, jb_add(o, "taskId", json_object_new_string(v->id)) ||
	    jb_add(o, "status", json_object_new_string(
	    task_wire_status(v->status, v->tool_error, modern))) ||
	    (v->message[0] != '\0' && jb_add(o, "statusMessage",
	    json_object_new_string(v->message))) ||
	    jb_add(o, "createdAt", json_object_new_string(v->created)) ||
	    jb_add(o, "lastUpdatedAt", json_object_new_string(v->updated)) ||
	    jb_add(o, modern ? "ttlMs" : "ttl",
	    json_object_new_int64((int64_t)v->ttl_ms)) ||
	    jb_add(o, modern ? "pollIntervalMs" : "pollInterval",
	    json_object_new_int64(v->poll_ms)));
}

static struct json_object *
parse_payload(const struct task_view *v)
{
	return v->payload != NULL ? json_tokener_parse(v->payload) : NULL;
}

static void
task_status_notify(struct task_run *tr, struct task *t)
{
	struct task_view v;
	struct json_object *p;
	char *text;
	size_t len;

	if (tr->sink.send == no_send || tr->era != ERA_LEGACY ||
	    tasks_get(tr->srv->tasks, tr->sess.owner, task_id(t), false,
	    &v) != TASKS_OK)
		return;
	if ((p = task_json(&v, false)) != NULL &&
	    (text = jsonrpc_notification("notifications/tasks/status", p,
	    &len)) != NULL) {
		(void)tr->sink.send(tr->sink.arg, text, len);
		free(text);
	}
}

/* A short summary of a finished call, for statusMessage. */
static void
task_summary(struct json_object *result, char *buf, size_t len)
{
	struct json_object *sc, *v;

	if (json_object_object_get_ex(result, "structuredContent", &sc) &&
	    json_object_object_get_ex(sc, "exit_code", &v) &&
	    json_object_is_type(v, json_type_int))
		(void)snprintf(buf, len, "finished: exit %d",
		    json_object_get_int(v));
	else if (json_object_object_get_ex(result, "isError", &v) &&
	    json_object_get_boolean(v))
		(void)snprintf(buf, len, "finished with a tool error");
	else
		(void)snprintf(buf, len, "finished");
}

static void
task_run_main(void *arg, struct task *t)
{
	struct task_run *tr = arg;
	struct json_object *result = NULL, *e;
	enum task_status end;
	struct req r;
	enum mcp_err st;
	char *payload = NULL, summary[96];
	const char *shown;
	size_t len = 0;
	bool tool_error = false;

	memset(&r, 0, sizeof(r));
	r.srv = tr->srv;
	r.sess = &tr->sess;
	r.msg = tr->msg;
	r.sink = &tr->sink;
	r.era = tr->era;
	r.log_level = tr->log_level;
	r.fl = &tr->fl;
	r.task = t;
	r.approved = &tr->appr;
	st = session_is_cancelled(&tr->sess, &tr->fl) ? MCP_ERR_INTERNAL :
	    tr->run(&r, &result);
	(void)session_end(&tr->sess, &tr->fl);
	if (st == MCP_OK && result == NULL)
		st = req_fail(&r, MCP_ERR_NOMEM, "Internal error: out of memory");
	if (st == MCP_OK) {
		tool_error = json_object_object_get_ex(result, "isError", &e) &&
		    json_object_get_boolean(e);
		task_summary(result, summary, sizeof(summary));
		payload = jsonrpc_serialize(result, &len);
	} else {
		(void)snprintf(summary, sizeof(summary), "%s", r.err_msg != NULL ?
		    r.err_msg : "Internal error");
		e = json_object_new_object();
		if ((e = jb_built(e, jb_add(e, "code", json_object_new_int(
		    jsonrpc_code(st))) || jb_add(e, "message",
		    json_object_new_string(summary)) || (r.err_data != NULL &&
		    jb_add(e, "data", json_object_get(r.err_data))))) != NULL) {
			payload = jsonrpc_serialize(e, &len);
			json_object_put(e);
		}
	}
	json_object_put(result);
	json_object_put(r.err_data);
	end = task_finish(t, payload, len, st != MCP_OK, tool_error, summary);
	req_after_answer(&r);
	shown = task_wire_status(end, tool_error, tr->era == ERA_MODERN);
	log_info("task %.8s... %s: %s, %llu ms", task_id(t), tr->tool, shown,
	    (unsigned long long)(ts_us_since(&tr->t0) / 1000));
	audit_task(tr->srv->audit, &tr->sess, tr->tool, task_id(t), "task_end",
	    shown, ts_us_since(&tr->t0));
	task_status_notify(tr, t);
}

static void
task_run_cancel(void *arg)
{
	struct task_run *tr = arg;

	session_cancel(&tr->sess, tr->fl.key);
}

static void
task_run_free(void *arg)
{
	struct task_run *tr = arg;

	session_fini(&tr->sess);
	rpc_msg_free(tr->msg);
	approval_out_fini(&tr->appr);
	if (tr->hold != NULL)
		tr->hold(tr->hold_arg, -1);
	free(tr);
}

/* Whether a modern request's client capabilities declare the extension. */
bool
task_declared(const struct rpc_msg *msg)
{
	struct json_object *caps, *ext;

	return msg->meta != NULL &&
	    json_object_object_get_ex(msg->meta, META_CAPS, &caps) &&
	    json_object_object_get_ex(caps, "extensions", &ext) &&
	    json_object_is_type(ext, json_type_object) &&
	    json_object_object_get_ex(ext, TASKS_EXTENSION, NULL);
}

/*
 * Whether this call runs as a task: 2025-11-25, when it carries
 * params.task (of a tool that may: -32601 for the rest, as the spec
 * says); 2026-07-28, when the client declared the extension and the call
 * asks a deadline past task_threshold_ms or to run in the background.
 * *ttl: what the client asked (legacy), 0 for none.
 */
static enum mcp_err
task_wanted(struct req *r, const struct tool_entry *tool,
    struct json_object *args, bool *want, uint64_t *ttl)
{
	struct json_object *v, *t;

	*want = false;
	*ttl = 0;
	if (r->srv->tasks == NULL)
		return MCP_OK;
	if (r->era == ERA_LEGACY) {
		if (r->msg->params == NULL || !json_object_object_get_ex(
		    r->msg->params, "task", &t))
			return MCP_OK;
		if (!json_object_is_type(t, json_type_object))
			return req_fail(r, MCP_ERR_INVALID_PARAMS, "Invalid params: "
			    "\"task\" must be an object");
		if (!tool->def->task_support)
			return req_fail(r, MCP_ERR_NO_METHOD, "Method not found: "
			    "tool %s does not run as a task (its "
			    "execution.taskSupport is \"forbidden\")",
			    tool->def->name);
		if (json_object_object_get_ex(t, "ttl", &v) &&
		    json_object_is_type(v, json_type_int) &&
		    json_object_get_int64(v) > 0)
			*ttl = (uint64_t)json_object_get_int64(v);
		*want = true;
		return MCP_OK;
	}
	if (tool->def->task_required && !task_declared(r->msg)) {
		return req_missing_capability(r, NULL, TASKS_EXTENSION, "Missing "
		    "required client capability: tool %s runs only as a task "
		    "(the extension \"%s\")", tool->def->name,
		    TASKS_EXTENSION);
	}
	if (!tool->def->task_support || !task_declared(r->msg))
		return MCP_OK;
	if (tool->def->task_always)
		*want = true;
	if (json_object_object_get_ex(args, "background", &v) &&
	    json_object_is_type(v, json_type_boolean) &&
	    json_object_get_boolean(v))
		*want = true;
	if (json_object_object_get_ex(args, "timeout_ms", &v) &&
	    json_object_is_type(v, json_type_int) &&
	    json_object_get_int64(v) > (int64_t)r->srv->task_threshold_ms)
		*want = true;
	return MCP_OK;
}

/*
 * The approval stage of a call about to become a task, in the request:
 * MCP_OK with *ret the answer instead of a task (a refusal, 2026-07-28's
 * input_required), or with *ret NULL and *out what the task may have
 * (owned: approval_out_fini). Arguments the task's schema refuses are
 * left for the task's own run to refuse.
 */
static enum mcp_err
task_approve(struct req *r, const struct tool_entry *tool,
    struct json_object *args, struct approval_out *out,
    struct json_object **ret)
{
	struct schema_error verr;
	struct approval_call ac;
	char owner[SESSION_OWNER_KEY];

	memset(out, 0, sizeof(*out));
	*ret = NULL;
	if (schema_validate(tool->task_input != NULL ? tool->task_input :
	    tool->input, args, &verr) != MCP_OK)
		return MCP_OK;
	req_approval_ctx(r, tool->def, args, owner, &ac);
	ac.plain_max_ms = r->srv->task_timeout_ms;
	approval_check(&ac, out);
	if (out->err != MCP_OK) {
		approval_out_fini(out);
		return req_fail(r, out->err, "%s", out->err == MCP_ERR_NOMEM ?
		    "Internal error: out of memory" : out->errmsg);
	}
	if (out->result != NULL) {
		*ret = out->result;
		out->result = NULL;
		approval_out_fini(out);
		log_info("call %s: not started as a task: %s", tool->def->name,
		    out->reason);
	}
	return MCP_OK;
}

/*
 * tools/call made a task: the answer is the task at once, and a thread of
 * the store runs the same call (lookup, validation against the task
 * schema, the handler, the output check, the audit) on a copy. Not a
 * task: *made false, and the call goes on as a plain one.
 */
enum mcp_err
task_call_as(struct req *r, const struct tool_entry *tool,
    struct json_object *args, struct json_object **ret, bool *made,
    req_method_fn run)
{
	struct task_work w = { task_run_main, task_run_cancel, task_run_free,
	    NULL };
	struct task_run *tr;
	struct task_view v;
	struct approval_out pre;
	const char *ws;
	char *text, err[320], *reply = NULL;
	uint64_t ttl;
	size_t len;
	enum mcp_err st;
	bool want;

	*made = false;
	if ((st = task_wanted(r, tool, args, &want, &ttl)) != MCP_OK || !want)
		return st;
	*made = true;
	/* what it asks beyond the policy is asked now, on the request's own
	 * channel: the task will have none (a refusal or input_required
	 * answers instead of a task) */
	if ((st = task_approve(r, tool, args, &pre, ret)) != MCP_OK ||
	    *ret != NULL)
		return st;
	if (ttl == 0 || ttl > r->srv->task_ttl_ms)
		ttl = r->srv->task_ttl_ms;
	if ((ws = session_workspace(r->sess, err, sizeof(err))) == NULL) {
		log_err("workspace: %s", err);
		approval_out_fini(&pre);
		*ret = tool_result_error("The workspace could not be made, so "
		    "nothing was run; the server log says why.");
		return *ret != NULL ? MCP_OK : req_fail(r, MCP_ERR_NOMEM,
		    "Internal error: out of memory");
	}
	if ((tr = calloc(1, sizeof(*tr))) == NULL ||
	    (text = jsonrpc_serialize(r->msg->root, &len)) == NULL) {
		free(tr);
		approval_out_fini(&pre);
		return req_fail(r, MCP_ERR_NOMEM, "Internal error: out of memory");
	}
	st = jsonrpc_decode(text, len, &tr->msg, &reply);
	free(text);
	free(reply);
	if (st != MCP_OK) {
		free(tr);
		approval_out_fini(&pre);
		return req_fail(r, MCP_ERR_NOMEM, "Internal error: out of memory");
	}
	tr->appr = pre;		/* its grant, for the task's run */
	tr->srv = r->srv;
	tr->hold = r->sess->hold;
	tr->hold_arg = r->sess->hold_arg;
	tr->era = r->era;
	tr->log_level = req_log_level(r);
	tr->tool = tool->def->name;
	tr->run = run;
	/* 2025-11-25 lets a task's progress flow where a sink outlives the
	 * request (stdio); the extension has none on tasks */
	tr->sink.send = r->era == ERA_LEGACY && r->sess->bg_send != NULL ?
	    r->sess->bg_send : no_send;
	tr->sink.arg = r->sess->bg_arg;
	(void)clock_gettime(CLOCK_MONOTONIC, &tr->t0);
	session_init(&tr->sess, ws);
	memcpy(tr->sess.id, r->sess->id, sizeof(tr->sess.id));
	memcpy(tr->sess.owner, r->sess->owner, sizeof(tr->sess.owner));
	tr->sess.log_level = r->sess->log_level;
	(void)snprintf(tr->fl.key, sizeof(tr->fl.key), "task");
	session_begin_uncapped(&tr->sess, &tr->fl);
	if (r->sess->hold != NULL)
		r->sess->hold(r->sess->hold_arg, +1);
	w.arg = tr;
	if (tasks_create(r->srv->tasks, r->sess->owner, ttl, &w, &v, err,
	    sizeof(err)) != 0) {
		(void)session_end(&tr->sess, &tr->fl);
		task_run_free(tr);
		log_info("call %s: not started as a task: %s", tool->def->name,
		    err);
		*ret = tool_result_error("This call was not started: %s.", err);
		return *ret != NULL ? MCP_OK : req_fail(r, MCP_ERR_NOMEM,
		    "Internal error: out of memory");
	}
	log_info("task %.8s... %s: started", v.id, tool->def->name);
	audit_task(r->srv->audit, r->sess, tool->def->name, v.id, "task_start",
	    "working", 0);
	if (r->era == ERA_MODERN) {
		*ret = task_json(&v, true);
		if (*ret != NULL && jb_add(*ret, "resultType",
		    json_object_new_string("task")) != 0) {
			json_object_put(*ret);
			*ret = NULL;
		}
	} else
		*ret = req_obj1("task", task_json(&v, false));
	return *ret != NULL ? MCP_OK : req_fail(r, MCP_ERR_NOMEM,
	    "Internal error: out of memory");
}

/* params.taskId, or a protocol error; modern requests must declare the
 * extension (-32021 otherwise, as the extension says). */
static enum mcp_err
task_param(struct req *r, const char **id)
{
	struct json_object *v;

	if (r->srv->tasks == NULL)
		return req_fail(r, MCP_ERR_NO_METHOD, "Method not found: %s (tasks "
		    "are not offered)", r->msg->method);
	if (r->era == ERA_MODERN && !task_declared(r->msg)) {
		return req_missing_capability(r, NULL, TASKS_EXTENSION, "Missing "
		    "required client capability: %s needs the extension \"%s\"",
		    r->msg->method, TASKS_EXTENSION);
	}
	if (r->msg->params == NULL ||
	    !json_object_object_get_ex(r->msg->params, "taskId", &v) ||
	    !json_object_is_type(v, json_type_string))
		return req_fail(r, MCP_ERR_INVALID_PARAMS, "Invalid params: "
		    "\"taskId\" (a string) is required");
	*id = json_object_get_string(v);
	return MCP_OK;
}

static enum mcp_err
task_unknown(struct req *r)
{
	return req_fail(r, MCP_ERR_INVALID_PARAMS, "Failed to retrieve task: Task "
	    "not found (unknown, expired, or never this client's)");
}

static const char *
owner_of(const struct req *r)
{
	return r->sess->owner;
}

enum mcp_err
m_tasks_get(struct req *r, struct json_object **ret)
{
	struct json_object *o, *p;
	struct task_view v;
	const char *id = NULL;
	enum mcp_err st;

	if ((st = task_param(r, &id)) != MCP_OK)
		return st;
	if (tasks_get(r->srv->tasks, owner_of(r), id, r->era == ERA_MODERN,
	    &v) != TASKS_OK)
		return task_unknown(r);
	o = task_json(&v, r->era == ERA_MODERN);
	/* the extension inlines the end: result, or the JSON-RPC error */
	if (o != NULL && v.payload != NULL &&
	    ((p = parse_payload(&v)) == NULL || jb_add(o, v.status ==
	    TASK_FAILED ? "error" : "result", p) != 0)) {
		json_object_put(o);
		o = NULL;
	}
	task_view_fini(&v);
	*ret = o;
	return MCP_OK;
}

static bool
wait_stopped(void *arg)
{
	struct req *r = arg;

	return session_is_cancelled(r->sess, r->fl);
}

/* A stored JSON-RPC error code, back to ours (what tools/call returns). */
static enum mcp_err
err_of_code(int code)
{
	switch (code) {
	case -32601:
		return MCP_ERR_NO_METHOD;
	case -32602:
		return MCP_ERR_INVALID_PARAMS;
	case -32021:
		return MCP_ERR_MISSING_CAPABILITY;
	default:
		return MCP_ERR_INTERNAL;
	}
}

/*
 * tasks/result (2025-11-25): blocks until the task has ended, then answers
 * exactly what the plain call would have, with the related-task _meta; a
 * call that failed answers its error.
 */
enum mcp_err
m_tasks_result(struct req *r, struct json_object **ret)
{
	struct json_object *p, *meta, *v;
	struct task_view tv;
	const char *id = NULL;
	enum tasks_rc rc;
	enum mcp_err st;

	if ((st = task_param(r, &id)) != MCP_OK)
		return st;
	rc = tasks_wait(r->srv->tasks, owner_of(r), id, wait_stopped, r, &tv);
	if (rc == TASKS_STOPPED)
		return req_fail(r, MCP_ERR_INTERNAL, "Internal error: the server "
		    "is stopping");
	if (rc != TASKS_OK)
		return task_unknown(r);
	if (tv.status == TASK_CANCELLED) {
		task_view_fini(&tv);
		return req_fail(r, MCP_ERR_INVALID_PARAMS, "Invalid params: task "
		    "%s was cancelled: it has no result", id);
	}
	p = parse_payload(&tv);
	task_view_fini(&tv);
	if (p == NULL)
		return req_fail(r, MCP_ERR_NOMEM, "Internal error: out of memory");
	if (tv.status == TASK_FAILED) {
		st = err_of_code(json_object_object_get_ex(p, "code", &v) ?
		    json_object_get_int(v) : -32603);
		if (json_object_object_get_ex(p, "data", &v))
			r->err_data = json_object_get(v);
		(void)req_fail(r, st, "%s", json_object_object_get_ex(p, "message",
		    &v) ? json_object_get_string(v) : "Internal error");
		json_object_put(p);
		return st;
	}
	if ((json_object_object_get_ex(p, "_meta", &meta) ||
	    jb_add(p, "_meta", meta = json_object_new_object()) == 0) &&
	    jb_add(meta, META_RELATED_TASK, req_obj1("taskId",
	    json_object_new_string(id))) == 0) {
		*ret = p;
		return MCP_OK;
	}
	json_object_put(p);
	return req_fail(r, MCP_ERR_NOMEM, "Internal error: out of memory");
}

enum mcp_err
m_tasks_list(struct req *r, struct json_object **ret)
{
	struct json_object *v, *a, *o;
	struct task_view *page;
	const char *cursor = NULL;
	char next[TASK_ID_LEN + 1];
	size_t n, i;
	int failed = 0;

	if (r->srv->tasks == NULL)
		return req_fail(r, MCP_ERR_NO_METHOD, "Method not found: tasks/list");
	if (r->msg->params != NULL &&
	    json_object_object_get_ex(r->msg->params, "cursor", &v)) {
		if (!json_object_is_type(v, json_type_string))
			return req_fail(r, MCP_ERR_INVALID_PARAMS, "Invalid params: "
			    "\"cursor\" must be a string");
		cursor = json_object_get_string(v);
	}
	if ((page = calloc(MCP_TASKS_PAGE, sizeof(*page))) == NULL)
		return req_fail(r, MCP_ERR_NOMEM, "Internal error: out of memory");
	if (tasks_list(r->srv->tasks, owner_of(r), cursor, page,
	    MCP_TASKS_PAGE, &n, next) != TASKS_OK) {
		free(page);
		return req_fail(r, MCP_ERR_INVALID_PARAMS, "Invalid params: "
		    "unknown cursor");
	}
	a = json_object_new_array();
	for (i = 0; i < n; i++)
		failed |= jb_push(a, task_json(&page[i], false));
	free(page);
	a = jb_built(a, failed);
	o = json_object_new_object();
	*ret = jb_built(o, jb_add(o, "tasks", a) || (next[0] != '\0' &&
	    jb_add(o, "nextCursor", json_object_new_string(next))));
	return MCP_OK;
}

/*
 * tasks/cancel: the status is cancelled before the answer, and the
 * task's sandbox is being killed (its init first: the whole tree and its
 * cgroup go with it). 2025-11-25 answers the task, and -32602 for one
 * ended already; the extension an empty acknowledgement either way.
 */
enum mcp_err
m_tasks_cancel(struct req *r, struct json_object **ret)
{
	struct task_view v;
	const char *id = NULL;
	enum tasks_rc rc;
	enum mcp_err st;

	if ((st = task_param(r, &id)) != MCP_OK)
		return st;
	rc = tasks_cancel(r->srv->tasks, owner_of(r), id, &v);
	if (rc == TASKS_UNKNOWN)
		return task_unknown(r);
	if (r->era == ERA_MODERN) {
		*ret = json_object_new_object();
		return MCP_OK;
	}
	if (rc == TASKS_TERMINAL)
		return req_fail(r, MCP_ERR_INVALID_PARAMS, "Cannot cancel task: "
		    "already in terminal status \"%s\"",
		    task_status_name(v.status));
	*ret = task_json(&v, false);
	return MCP_OK;
}

/* tasks/update (the extension): our tasks never ask for input, so there
 * is nothing to take; a known task is acknowledged. */
enum mcp_err
m_tasks_update(struct req *r, struct json_object **ret)
{
	struct task_view v;
	const char *id = NULL;
	enum mcp_err st;

	if ((st = task_param(r, &id)) != MCP_OK)
		return st;
	if (tasks_get(r->srv->tasks, owner_of(r), id, false, &v) != TASKS_OK)
		return task_unknown(r);
	*ret = json_object_new_object();
	return MCP_OK;
}

