/*
 * Dispatch: the closed method table, the two protocol eras, and the life of
 * one tools/call read top to bottom in req_tools_call(): lookup, validation,
 * approval, the handler, the output check, the audit facts (its tasks are
 * dispatch_task.c's, what every request needs dispatch_req.c's). The sandbox stage lives
 * inside each sandboxed tool's handler, which reaches the sandbox through
 * one seam (tools/sbcall.c); dispatch reaches it only through tool.h's
 * tool_call_open/_cancel/_close. A method name from the client is only a
 * key into methods[]; a tool name only a key into the registry. Every
 * response to a message dispatch is given is built here; the transports
 * answer only what never reaches it (a message too long or that does not
 * decode, a request the HTTP guards refuse, no thread to run a call).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json_build.h"
#include "approval.h"
#include "dispatch_impl.h"
#include "audit.h"
#include "dispatch.h"
#include "log.h"
#include "registry.h"
#include "resources.h"
#include "repl.h"
#include "skill_catalog.h"
#include "tasks.h"
#include "timespec.h"
#include "tool.h"
#include "utf8.h"
#include "validator.h"
#include "version.h"

const char *const dispatch_legacy_versions[] = {
	"2025-11-25", "2025-06-18", "2025-03-26", NULL
};
const char *const dispatch_modern_versions[] = { "2026-07-28", NULL };

#ifdef MCP_VERIFY_ALL_OUTPUT
static const bool verify_quick_output = true;
#else
static const bool verify_quick_output = false;
#endif

#define STR_(x)		#x
#define STR(x)		STR_(x)

/* RFC 5424 names, in the order of enum tool_log_level. */
static const char *const log_level_names[] = {
	"debug", "info", "notice", "warning", "error", "critical", "alert",
	"emergency", NULL
};

typedef enum mcp_err (*method_fn)(struct req *r, struct json_object **ret);

/* Where a method may be called. */
#define M_LEGACY	0x1	/* handshake era (after initialize) */
#define M_MODERN	0x2	/* 2026-07-28 with per-request _meta */
#define M_PREINIT	0x4	/* legacy: allowed before initialize */
/* What a method needs. */
#define M_WORKSPACE	0x8	/* may touch the session's workspace */

struct method {
	const char *name;
	method_fn fn;
	unsigned int flags;
};

static int
level_from_name(const char *s)
{
	int i;

	for (i = 0; log_level_names[i] != NULL; i++)
		if (strcmp(s, log_level_names[i]) == 0)
			return i;
	return -1;
}



#define SERVER_NAME	"mcp-sandbox"
#define SERVER_TITLE	"MCP Sandbox"
#define SERVER_DESC	"A fixed list of tools; commands and code run in a " \
	"namespace sandbox with no network."
/* The same object as server_info(), as text, for cached results. */
#define SERVER_INFO_JSON	"{\"name\":\"" SERVER_NAME "\",\"title\":\"" \
	SERVER_TITLE "\",\"version\":\"" MCP_SANDBOX_VERSION "\"," \
	"\"description\":\"" SERVER_DESC "\"}"

/*
 * json-c allocations are checked as tools/ checks them: a builder returns
 * NULL when any of its allocations failed, and a method that returns
 * MCP_OK without a result answers -32603 "out of memory" instead
 * (dispatch_message_queued), as does an error whose data cannot be
 * built. Notifications are best effort: without memory a progress or log
 * notification is dropped. jb_add() and jb_push() take val,
 * NULL when its own allocation failed, and release it when it cannot be
 * added (json-c leaves it to the caller then).
 */


static struct json_object *
server_info(void)
{
	struct json_object *o = json_object_new_object();

	return jb_built(o, jb_add(o, "name", json_object_new_string(SERVER_NAME)) ||
	    jb_add(o, "title", json_object_new_string(SERVER_TITLE)) ||
	    jb_add(o, "version", json_object_new_string(MCP_SANDBOX_VERSION)) ||
	    jb_add(o, "description", json_object_new_string(SERVER_DESC)));
}

/* 2025-11-25 tasks: list, cancel, and tools/call made a task. */
static struct json_object *
tasks_capability(void)
{
	struct json_object *t = json_object_new_object();

	return jb_built(t, jb_add(t, "list", json_object_new_object()) ||
	    jb_add(t, "cancel", json_object_new_object()) ||
	    jb_add(t, "requests", req_obj1("tools", req_obj1("call",
	    json_object_new_object()))));
}

/* The extensions we declare: tasks (2026-07-28), skills (when the policy
 * has some; both eras); NULL when none. */
static struct json_object *
extensions(const struct server *srv, enum era era, int *failed)
{
	bool tasks = srv->tasks != NULL && era == ERA_MODERN;
	bool skills = skill_catalog_on(srv->env);
	struct json_object *e;

	*failed = 0;
	if (!tasks && !skills)
		return NULL;
	e = json_object_new_object();
	*failed = e == NULL || (tasks && jb_add(e, TASKS_EXTENSION,
	    json_object_new_object())) || (skills && jb_add(e,
	    SKILLS_EXTENSION, req_obj1("directoryRead",
	    json_object_new_boolean(1))));
	return e;
}

static struct json_object *
capabilities(const struct server *srv, enum era era)
{
	struct json_object *caps = json_object_new_object(), *ext;
	int failed;

	ext = extensions(srv, era, &failed);
	if (failed) {
		json_object_put(ext);
		json_object_put(caps);
		return NULL;
	}
	return jb_built(caps, jb_add(caps, "tools", req_obj1("listChanged",
	    json_object_new_boolean(0))) ||
	    jb_add(caps, "logging", json_object_new_object()) ||
	    jb_add(caps, "resources", resources_capability(era == ERA_MODERN)) ||
	    (srv->tasks != NULL && era == ERA_LEGACY &&
	    jb_add(caps, "tasks", tasks_capability())) ||
	    (ext != NULL && jb_add(caps, "extensions", ext)));
}

/* The versions we speak: the modern ones, then (all) the legacy ones. */
static struct json_object *
versions(bool all)
{
	struct json_object *a = json_object_new_array();
	int failed = 0;
	size_t i;

	for (i = 0; dispatch_modern_versions[i] != NULL; i++)
		failed |= jb_push(a, json_object_new_string(
		    dispatch_modern_versions[i]));
	for (i = 0; all && dispatch_legacy_versions[i] != NULL; i++)
		failed |= jb_push(a, json_object_new_string(
		    dispatch_legacy_versions[i]));
	return jb_built(a, failed);
}

/* ---- handshake era ---- */


static bool
declares_form(struct json_object *params)
{
	struct json_object *caps;

	return json_object_object_get_ex(params, "capabilities", &caps) &&
	    req_elicits_form(caps);
}

/* initialize's capabilities has cap (an object). */
static bool
declares(struct json_object *params, const char *cap)
{
	struct json_object *caps, *v;

	return json_object_object_get_ex(params, "capabilities", &caps) &&
	    json_object_is_type(caps, json_type_object) &&
	    json_object_object_get_ex(caps, cap, &v) &&
	    json_object_is_type(v, json_type_object);
}

static enum mcp_err
m_initialize(struct req *r, struct json_object **ret)
{
	struct json_object *v, *res;
	const char *want, *got = dispatch_legacy_versions[0];
	size_t i;

	if (r->msg->params == NULL ||
	    !json_object_object_get_ex(r->msg->params, "protocolVersion", &v) ||
	    !json_object_is_type(v, json_type_string))
		return req_fail(r, MCP_ERR_INVALID_PARAMS, "Invalid params: "
		    "initialize needs \"protocolVersion\" (a string)");
	want = json_object_get_string(v);
	for (i = 0; dispatch_legacy_versions[i] != NULL; i++)
		if (strcmp(want, dispatch_legacy_versions[i]) == 0)
			got = dispatch_legacy_versions[i];

	session_set_version(r->sess, got);
	session_set_client_caps(r->sess, declares_form(r->msg->params),
	    declares(r->msg->params, "sampling"));

	res = json_object_new_object();
	*ret = jb_built(res, jb_add(res, "protocolVersion",
	    json_object_new_string(got)) ||
	    jb_add(res, "capabilities", capabilities(r->srv, ERA_LEGACY)) ||
	    jb_add(res, "serverInfo", server_info()) ||
	    (r->srv->instructions != NULL && jb_add(res, "instructions",
	    json_object_new_string(r->srv->instructions))));
	return MCP_OK;
}

static enum mcp_err
m_ping(struct req *r, struct json_object **ret)
{
	*ret = json_object_new_object();
	return MCP_OK;
}

static enum mcp_err
m_set_level(struct req *r, struct json_object **ret)
{
	struct json_object *v;
	int level;

	if (r->msg->params == NULL ||
	    !json_object_object_get_ex(r->msg->params, "level", &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    (level = level_from_name(json_object_get_string(v))) < 0)
		return req_fail(r, MCP_ERR_INVALID_PARAMS, "Invalid params: "
		    "\"level\" must be one of debug, info, notice, warning, "
		    "error, critical, alert, emergency");
	session_set_log_level(r->sess, level);
	*ret = json_object_new_object();
	return MCP_OK;
}

/* ---- both eras ---- */

static enum mcp_err
m_discover(struct req *r, struct json_object **ret)
{
	struct json_object *res = json_object_new_object();

	*ret = jb_built(res, jb_add(res, "supportedVersions", versions(true)) ||
	    jb_add(res, "capabilities", capabilities(r->srv, ERA_MODERN)) ||
	    (r->srv->instructions != NULL && jb_add(res, "instructions",
	    json_object_new_string(r->srv->instructions))) ||
	    jb_add(res, "ttlMs", json_object_new_int(MCP_LIST_TTL_MS)) ||
	    jb_add(res, "cacheScope", json_object_new_string("public")));
	return MCP_OK;
}

/* The toolset's build failed (registry.h: out of memory at start; the
 * server logged it then). */
static enum mcp_err
tools_missing(struct req *r)
{
	return req_fail(r, MCP_ERR_INTERNAL, "Internal error: the tools could "
	    "not be loaded: %s", toolset_error(r->srv->tools));
}

/*
 * tools/list answers with the array the toolset serialised at start: the
 * list is fixed, and rebuilding it per call would cost more than the rest
 * of the request.
 */

static enum mcp_err
m_tools_list(struct req *r, struct json_object **ret)
{
	static const char modern_tail[] = ",\"ttlMs\":" STR(MCP_LIST_TTL_MS)
	    ",\"cacheScope\":\"public\",\"resultType\":\"complete\","
	    "\"_meta\":{\"" META_SERVERINFO "\":" SERVER_INFO_JSON "}}";
	struct json_object *v;
	const char *list;
	size_t len, tail, off;

	if (r->msg->params != NULL &&
	    json_object_object_get_ex(r->msg->params, "cursor", &v))
		return req_fail(r, MCP_ERR_INVALID_PARAMS, "Invalid params: "
		    "unknown cursor (the tool list has a single page)");
	if ((list = toolset_list_text(r->srv->tools, &len)) == NULL)
		return tools_missing(r);
	tail = r->era == ERA_MODERN ? sizeof(modern_tail) - 1 : 1;
	if ((r->raw = malloc(len + tail + 16)) == NULL)
		return req_fail(r, MCP_ERR_NOMEM, "Internal error: out of memory");
	memcpy(r->raw, "{\"tools\":", 9);
	off = 9;
	memcpy(r->raw + off, list, len);
	off += len;
	memcpy(r->raw + off, r->era == ERA_MODERN ? modern_tail : "}", tail);
	off += tail;
	r->raw[off] = '\0';
	r->raw_len = off;
	*ret = NULL;
	return MCP_OK;
}

/*
 * subscriptions/listen (2026-07-28): our tool list never changes, and the
 * resources are offered without subscriptions in this era (no
 * resourceSubscriptions: resources.c), so no notification type is
 * honoured. The stream is acknowledged with the empty filter and then
 * ended by the server with its completion result, as the subscriptions
 * pattern allows.
 */
static enum mcp_err
m_listen(struct req *r, struct json_object **ret)
{
	struct json_object *v, *p;
	char *text;
	size_t len;

	if (r->msg->params == NULL ||
	    !json_object_object_get_ex(r->msg->params, "notifications", &v) ||
	    !json_object_is_type(v, json_type_object))
		return req_fail(r, MCP_ERR_INVALID_PARAMS, "Invalid params: "
		    "\"notifications\" (an object) is required");
	p = json_object_new_object();
	if ((p = jb_built(p, jb_add(p, "notifications", json_object_new_object()) ||
	    jb_add(p, "_meta", req_obj1("io.modelcontextprotocol/subscriptionId",
	    json_object_get(r->msg->id))))) == NULL ||
	    (text = jsonrpc_notification(
	    "notifications/subscriptions/acknowledged", p, &len)) == NULL)
		return req_fail(r, MCP_ERR_NOMEM, "Internal error: out of memory");
	(void)session_send(r->sess, r->fl, r->sink->send, r->sink->arg, text,
	    len);
	free(text);
	*ret = json_object_new_object();
	return MCP_OK;
}

/* ---- tools/call ---- */

/* Per-call state that the tool's callbacks reach through cb_arg. */
struct call_ctx {
	struct req *r;
	struct inflight *fl;
	char owner[SESSION_OWNER_KEY];	/* tool_call.owner */
	struct json_object *progress_token;	/* borrowed from the request */
	double last_progress;
	bool sent_progress;
	/* mid-run asks (approval_ask_host), from the proxy's threads */
	const struct tool_def *def;
	const struct json_object *args;
	pthread_mutex_t mid_lock;
	struct tool_ask mid;		/* hosts let through this call */
	bool mid_session[TOOL_MAX_ASK_DOMAINS];
	bool mid_closed;		/* the proxy is ending */
	bool mid_refused;		/* the user said no: ask no more */
	unsigned mid_asked;		/* of APPROVAL_MID_ASKS */
	pthread_mutex_t mid_one;	/* one question at a time */
};


/* 1: hp was let through this call; 0: no more are (closed, a no, the
 * cap of questions); -1: it may be asked. */
static int
mid_known(struct call_ctx *cc, const char *hp)
{
	size_t i;
	int rc = -1;

	(void)pthread_mutex_lock(&cc->mid_lock);
	for (i = 0; i < cc->mid.ndomains && rc < 0; i++)
		if (strcmp(cc->mid.domains[i], hp) == 0)
			rc = 1;
	if (rc < 0 && (cc->mid_closed || cc->mid_refused ||
	    cc->mid_asked >= APPROVAL_MID_ASKS))
		rc = 0;
	(void)pthread_mutex_unlock(&cc->mid_lock);
	return rc;
}

/* The call's proxy holds a connection to host:port while the user is
 * asked; once let through, the host goes for the rest of the call. */
static bool
call_ask_host(void *arg, const char *host, uint16_t port)
{
	struct call_ctx *cc = arg;
	struct approval_call ac;
	char hp[TOOL_ASK_HOST_LEN], owner[SESSION_OWNER_KEY];
	bool ok, session, asked;
	int known;

	(void)snprintf(hp, sizeof(hp), "%s:%u", host, port);
	/* a host let through already goes without waiting its turn */
	if ((known = mid_known(cc, hp)) >= 0)
		return known == 1;
	(void)pthread_mutex_lock(&cc->mid_one);
	if ((known = mid_known(cc, hp)) >= 0) {
		(void)pthread_mutex_unlock(&cc->mid_one);
		return known == 1;
	}
	req_approval_ctx(cc->r, cc->def, cc->args, owner, &ac);
	ac.fl = cc->fl;
	ok = approval_ask_host(&ac, hp, &session, &asked);
	(void)pthread_mutex_lock(&cc->mid_lock);
	if (asked)
		cc->mid_asked++;
	if (!ok)
		cc->mid_refused = true;
	else if (cc->mid.ndomains < TOOL_MAX_ASK_DOMAINS) {
		cc->mid_session[cc->mid.ndomains] = session;
		(void)snprintf(cc->mid.domains[cc->mid.ndomains++],
		    TOOL_ASK_HOST_LEN, "%s", hp);
	}
	(void)pthread_mutex_unlock(&cc->mid_lock);
	(void)pthread_mutex_unlock(&cc->mid_one);
	return ok;
}

static void
call_ask_abort(void *arg)
{
	struct call_ctx *cc = arg;

	(void)pthread_mutex_lock(&cc->mid_lock);
	cc->mid_closed = true;
	(void)pthread_mutex_unlock(&cc->mid_lock);
	session_asks_close(cc->r->sess, cc->fl);
}

static void
call_send(struct call_ctx *cc, const char *method, struct json_object *params)
{
	struct json_object *meta;
	char *text;
	size_t len;

	/* a task's messages say which task they belong to */
	if (cc->r->task != NULL && params != NULL &&
	    (json_object_object_get_ex(params, "_meta", &meta) ||
	    jb_add(params, "_meta", meta = json_object_new_object()) == 0))
		(void)jb_add(meta, META_RELATED_TASK, req_obj1("taskId",
		    json_object_new_string(task_id(cc->r->task))));
	if ((text = jsonrpc_notification(method, params, &len)) == NULL)
		return;
	(void)session_send(cc->r->sess, cc->fl, cc->r->sink->send,
	    cc->r->sink->arg, text, len);
	free(text);
}

/* The fixtures' requestStates, sealed with the run's key. */
static char *
call_seal(void *arg, const char *text)
{
	struct call_ctx *cc = arg;

	return approvals_seal(cc->r->srv->approvals, text);
}

static int
call_unseal(void *arg, const char *state, char **text)
{
	struct call_ctx *cc = arg;

	return approvals_unseal(cc->r->srv->approvals, state, text);
}

/* A fixture's own elicitation/create or sampling/createMessage, on the
 * call's stream, to a client that declared it. */
static int
call_ask_client(void *arg, const char *method, struct json_object *params,
    struct json_object **result)
{
	struct call_ctx *cc = arg;
	struct approval_call ac;
	uint32_t wait_ms, ttl_ms;

	*result = NULL;
	if (cc->r->srv->approvals == NULL || !(strcmp(method,
	    "elicitation/create") == 0 ? session_client_elicits(cc->r->sess) :
	    strcmp(method, "sampling/createMessage") == 0 &&
	    session_client_samples(cc->r->sess))) {
		json_object_put(params);
		return -2;	/* not declared: not asked */
	}
	memset(&ac, 0, sizeof(ac));
	ac.ap = cc->r->srv->approvals;
	ac.sess = cc->r->sess;
	ac.fl = cc->fl;
	ac.send = cc->r->sink->send;
	ac.send_arg = cc->r->sink->arg;
	tool_ask_bounds(cc->r->srv->env, &wait_ms, &ttl_ms);
	return approval_client_request(&ac, method, params, wait_ms,
	    result) == APPROVAL_REQ_OK ? 0 : -1;
}

/* notifications/resources/updated of a call (resources.c) */
static void
call_notify(void *arg, const char *method, struct json_object *params)
{
	call_send(arg, method, params);
}

static void
call_progress(void *arg, double progress, double total, const char *message)
{
	struct call_ctx *cc = arg;
	struct json_object *p;

	if (cc->r->task != NULL && message != NULL)
		task_set_message(cc->r->task, message);
	if (cc->progress_token == NULL)
		return;
	/* the spec wants progress to grow with every notification */
	if (cc->sent_progress && progress <= cc->last_progress)
		return;
	cc->sent_progress = true;
	cc->last_progress = progress;
	p = json_object_new_object();
	if ((p = jb_built(p, jb_add(p, "progressToken",
	    json_object_get(cc->progress_token)) ||
	    jb_add(p, "progress", json_object_new_double(progress)) ||
	    (total > 0 && jb_add(p, "total", json_object_new_double(total))) ||
	    (message != NULL && jb_add(p, "message",
	    json_object_new_string(message))))) != NULL)
		call_send(cc, "notifications/progress", p);
}


static void
call_log(void *arg, enum tool_log_level level, const char *logger,
    const char *text)
{
	struct call_ctx *cc = arg;
	struct json_object *p;
	int min = req_log_level(cc->r);

	if (min < 0 || (int)level < min)
		return;
	p = json_object_new_object();
	if ((p = jb_built(p, jb_add(p, "level",
	    json_object_new_string(log_level_names[level])) ||
	    (logger != NULL && jb_add(p, "logger",
	    json_object_new_string(logger))) ||
	    jb_add(p, "data", json_object_new_string(text)))) != NULL)
		call_send(cc, "notifications/message", p);
}

/* Whether a modern request's _meta clientCapabilities has cap. */
bool
dispatch_client_declares(const struct rpc_msg *msg, const char *cap)
{
	struct json_object *caps;

	return msg->meta != NULL &&
	    json_object_object_get_ex(msg->meta, META_CAPS, &caps) &&
	    json_object_is_type(caps, json_type_object) &&
	    json_object_object_get_ex(caps, cap, NULL);
}

/*
 * The stages of a tools/call, in the order req_tools_call() runs them. Each
 * returns MCP_OK to go on, or the protocol error that answers; a stage
 * that answers with a result instead (a refusal, isError) leaves it in
 * *result, and the stages after it do not run.
 */

/* 1. Lookup: the name is only a key into the closed table. *args is a new
 * reference (an empty object when the call gave none). */
static enum mcp_err
call_lookup(struct req *r, const struct tool_entry **ret_tool,
    struct json_object **ret_args)
{
	const struct tool_entry *tool;
	const char *name = r->msg->tool_name, *cap;
	struct json_object *args = r->msg->arguments;

	if (name == NULL)
		return req_fail(r, MCP_ERR_INVALID_PARAMS,
		    "Invalid params: tools/call needs \"name\" (a string)");
	if (args != NULL && !json_object_is_type(args, json_type_object))
		return req_fail(r, MCP_ERR_INVALID_PARAMS, "Invalid params: "
		    "\"arguments\" must be an object");
	if (toolset_error(r->srv->tools) != NULL)
		return tools_missing(r);
	if ((tool = toolset_lookup(r->srv->tools, name)) == NULL)
		return req_fail(r, MCP_ERR_INVALID_PARAMS, "Unknown tool: \"%.*s\"",
		    (int)utf8_prefix(name, strlen(name), 64), name);
	cap = tool->def->client_capability;
	if (cap != NULL && r->era == ERA_MODERN &&
	    !dispatch_client_declares(r->msg, cap)) {
		return req_missing_capability(r, cap, NULL, "Missing required "
		    "client capability: tool %s needs \"%s\"", tool->def->name,
		    cap);
	}
	if ((args = args == NULL ? json_object_new_object() :
	    json_object_get(args)) == NULL)
		return req_fail(r, MCP_ERR_NOMEM, "Internal error: out of memory");
	*ret_tool = tool;
	*ret_args = args;
	return MCP_OK;
}

/* A refusal before the handler: the audit says why, the client gets an
 * isError result (out of memory if even that cannot be built). */
static enum mcp_err
call_refuse(struct req *r, struct tool_audit *audit, const char *why,
    struct json_object *res, struct json_object **result)
{
	audit->refused = true;
	(void)snprintf(audit->reason, sizeof(audit->reason), "%s", why);
	if (res == NULL)
		return req_fail(r, MCP_ERR_NOMEM, "Internal error: out of memory");
	*result = res;
	return MCP_OK;
}

/* 2. Validation against the input schema. */
static enum mcp_err
call_validate(struct req *r, const struct tool_entry *tool,
    struct json_object *args, struct tool_audit *audit,
    struct json_object **result)
{
	struct schema_error verr;
	char why[sizeof(audit->reason)];
	enum mcp_err st;

	if ((st = schema_validate(r->task != NULL && tool->task_input != NULL ?
	    tool->task_input : tool->input, args, &verr)) == MCP_OK)
		return MCP_OK;
	if (st == MCP_ERR_NOMEM)
		return req_fail(r, st, "Internal error: out of memory");
	(void)snprintf(why, sizeof(why), "invalid arguments: %s",
	    verr.keyword);
	return call_refuse(r, audit, why, tool_result_error("Invalid arguments "
	    "for tool %s: %s", tool->def->name, verr.message), result);
}

/* 2026-07-28's multi-round-trip fields, for the fixtures that use them. */
static void
call_mrtr(struct req *r, struct tool_call *call)
{
	struct json_object *v;

	if (r->msg->params != NULL && json_object_object_get_ex(r->msg->params,
	    "inputResponses", &v) && json_object_is_type(v, json_type_object))
		call->input_responses = v;
	if (r->msg->params != NULL && json_object_object_get_ex(r->msg->params,
	    "requestState", &v) && json_object_is_type(v, json_type_string))
		call->request_state = json_object_get_string(v);
	if (r->msg->meta != NULL && json_object_object_get_ex(r->msg->meta,
	    META_CAPS, &v) && json_object_is_type(v, json_type_object))
		call->client_caps = v;
	call->seal = call_seal;
	call->unseal = call_unseal;
}

/* 3a. What the handler gets: the workspace (none for quick tools, which
 * are pure), the callbacks, and a cancellation handle that a
 * notifications/cancelled of this request reaches from now on. */
static enum mcp_err
call_prepare(struct req *r, const struct tool_entry *tool,
    const struct json_object *args, struct tool_call *call,
    struct call_ctx *cc, struct tool_audit *audit,
    struct json_object **result)
{
	char wserr[256];
	enum mcp_err st;

	memset(cc, 0, sizeof(*cc));
	cc->r = r;
	cc->fl = r->fl;
	cc->def = tool->def;
	cc->args = args;
	(void)pthread_mutex_init(&cc->mid_lock, NULL);
	(void)pthread_mutex_init(&cc->mid_one, NULL);
	cc->progress_token = r->msg->progress_token;
	memset(call, 0, sizeof(*call));
	call->env = r->srv->env;
	call->audit = audit;
	session_owner_key(r->sess, r->era == ERA_MODERN, cc->owner);
	call->owner = cc->owner;
	call->max_timeout_ms = r->task != NULL ? r->srv->task_timeout_ms : 0;
	call->progress = call_progress;
	call->log = call_log;
	call->cb_arg = cc;
	if (r->era == ERA_MODERN && tool->def->fixture)
		call_mrtr(r, call);
	if (r->era == ERA_LEGACY && tool->def->asks_client && r->task == NULL)
		call->ask_client = call_ask_client;
	if (r->era == ERA_LEGACY && tool->def->may_ask && r->task == NULL &&
	    r->srv->approvals != NULL && session_client_elicits(r->sess)) {
		call->ask_host = call_ask_host;
		call->ask_abort = call_ask_abort;
	}
	if (!tool->def->quick && (call->workspace = session_workspace(r->sess,
	    wserr, sizeof(wserr))) == NULL) {
		log_err("workspace: %s", wserr);
		return call_refuse(r, audit, "no workspace", tool_result_error(
		    "The workspace could not be made, so nothing was run; "
		    "the server log says why."), result);
	}
	if ((st = tool_call_open(call, tool->def)) == MCP_ERR_NOMEM)
		return req_fail(r, st, "Internal error: out of memory");
	if (st != MCP_OK)
		return req_fail(r, st, "Internal error: cannot create a "
		    "cancellation handle");
	if (!tool->def->quick)
		session_attach(r->sess, r->fl, call);
	return MCP_OK;
}

/* 3b. The handler. A sandboxed tool's sandbox stage is inside it, behind
 * the seam of tools/sbcall.c. */
static enum mcp_err
call_handler(struct req *r, const struct tool_entry *tool,
    struct json_object *args, struct tool_call *call,
    struct json_object **result)
{
	enum mcp_err st;

	r->sandboxed = !tool->def->quick;
	st = tool->def->handler(call, args, result);
	if (!tool->def->quick)
		session_detach(r->sess, r->fl);
	tool_call_close(call);
	if (st == MCP_ERR_NOMEM)
		return req_fail(r, st, "Internal error: out of memory");
	if (st == MCP_ERR_INVALID_PARAMS)	/* a fixture's requestState */
		return req_fail(r, st, "Invalid params: the requestState was "
		    "altered or is not this server's");
	if (st != MCP_OK)
		return req_fail(r, st, "Internal error: tool %s failed",
		    tool->def->name);
	return MCP_OK;
}

/*
 * 4. A result must match the tool's own output schema, or it is ours that
 * is broken: say so rather than send it. Checked on every call of a tool
 * that runs for milliseconds; for quick (pure, microsecond) tools only in
 * checking builds (Debug, sanitizers), where the whole test suite runs:
 * there the check would cost more than the tool.
 */
static enum mcp_err
call_check_output(struct req *r, const struct tool_entry *tool,
    struct json_object **result)
{
	struct schema_error verr;
	struct json_object *sc;

	if (tool->output == NULL || (tool->def->quick && !verify_quick_output) ||
	    !json_object_object_get_ex(*result, "structuredContent", &sc) ||
	    schema_validate(tool->output, sc, &verr) == MCP_OK)
		return MCP_OK;
	log_err("tool %s: structuredContent fails its output schema: %s",
	    tool->def->name, verr.message);
	json_object_put(*result);
	*result = NULL;
	return req_fail(r, MCP_ERR_INTERNAL, "Internal error: tool %s produced a "
	    "result that fails its output schema", tool->def->name);
}

/* 5. The audit facts: the line is written once the answer is out
 * (after_answer), and the transport's observer sees the call now. */
static void
call_audit(struct req *r, const struct tool_entry *tool,
    struct json_object *args, struct json_object *result, enum mcp_err st,
    struct tool_audit *audit, const struct timespec *t0)
{
	if (audit->duration_us == 0)
		audit->duration_us = ts_us_since(t0);
	audit_log_call(tool->def->name, result, audit);
	if (r->srv->audit != NULL) {
		r->audit_pending = true;
		r->audit_tool = tool->def->name;
		r->audit_args = json_object_get(args);
		r->audit_result = json_object_get(result);
		r->audit = *audit;	/* audit->network's reference moves too */
	} else
		json_object_put(audit->network);
	if (r->srv->on_call != NULL)
		r->srv->on_call(r->srv->on_call_arg, tool->def->name, st,
		    result != NULL && json_object_object_get_ex(result,
		    "isError", NULL), audit->ran, audit->duration_us);
}

/*
 * 4b. What the result means beyond its caller: the watched resources it
 * changed are announced; then with --content-only its structured copy goes
 * (the text blocks carry the same facts).
 */
static void
call_finish(struct req *r, const struct tool_entry *tool,
    struct json_object *result, struct call_ctx *cc)
{
	resources_notify_changed(r->sess, tool->def->name, result,
	    call_notify, cc);
	if (r->srv->env->content_only)
		json_object_object_del(result, "structuredContent");
}


/* The hosts the user let through mid-run, into the call's approvals. */
static int
call_noted(struct call_ctx *cc, struct approval_out *appr)
{
	size_t i;

	for (i = 0; i < cc->mid.ndomains; i++)
		if (approval_note_host(appr, cc->mid.domains[i],
		    cc->mid_session[i]) != 0)
			return -1;
	return 0;
}

/* 3c. What the user granted reaches the handler: the hosts (its sandbox's
 * proxy), the longer deadline (the call's maximum). */
static void
call_grant(struct tool_call *call, const struct approval_out *appr)
{
	if (appr->approvals == NULL)
		return;
	call->granted = &appr->granted;
	if (appr->granted.timeout_ms > call->max_timeout_ms)
		call->max_timeout_ms = appr->granted.timeout_ms;
}

/*
 * 2b. Approval (approval.h): a call asking beyond the policy, inside the
 * operator's ceiling, runs only on the user's yes; outside it, or with no
 * yes, it is answered instead (a refusal, 2026-07-28's input_required).
 */
static enum mcp_err
call_approve(struct req *r, const struct tool_entry *tool,
    struct json_object *args, struct approval_out *out,
    struct tool_audit *audit, struct json_object **result)
{
	struct approval_call ac;
	char owner[SESSION_OWNER_KEY];

	req_approval_ctx(r, tool->def, args, owner, &ac);
	approval_check(&ac, out);
	if (out->err != MCP_OK)
		return req_fail(r, out->err, "%s", out->err == MCP_ERR_NOMEM ?
		    "Internal error: out of memory" : out->errmsg);
	if (out->result != NULL) {
		if (out->reason[0] != '\0') {
			audit->refused = true;
			(void)snprintf(audit->reason, sizeof(audit->reason),
			    "%s", out->reason);
		}
		*result = out->result;
		out->result = NULL;
	}
	return MCP_OK;
}

/*
 * tools/call, top to bottom: lookup in the closed table, validation
 * against the input schema, the handler (with what it needs), a check of
 * the structured result against the output schema, and the audit facts.
 */
enum mcp_err
req_tools_call(struct req *r, struct json_object **ret)
{
	const struct tool_entry *tool = NULL;
	struct json_object *args = NULL, *result = NULL;
	struct tool_audit audit = { .exit_code = -1 };
	struct tool_call call;
	struct call_ctx cc;
	struct approval_out appr;
	struct timespec t0;
	enum mcp_err st;
	bool as_task = false, prepared = false;

	memset(&appr, 0, sizeof(appr));
	(void)clock_gettime(CLOCK_MONOTONIC, &t0);
	if ((st = call_lookup(r, &tool, &args)) != MCP_OK)
		return st;
	if (r->task == NULL && ((st = task_call_as(r, tool, args, ret,
	    &as_task, req_tools_call)) != MCP_OK || as_task)) {
		json_object_put(args);
		return st;
	}
	st = call_validate(r, tool, args, &audit, &result);
	if (st == MCP_OK && result == NULL && r->approved != NULL) {
		/* a task's run: asked before it started */
		appr.granted = r->approved->granted;
		appr.approvals = r->approved->approvals != NULL ?
		    json_object_get(r->approved->approvals) : NULL;
	} else if (st == MCP_OK && result == NULL)
		st = call_approve(r, tool, args, &appr, &audit, &result);
	if (st == MCP_OK && result == NULL) {
		prepared = true;	/* cc's mutexes are made */
		st = call_prepare(r, tool, args, &call, &cc, &audit, &result);
	}
	if (st == MCP_OK && result == NULL) {
		call_grant(&call, &appr);
		if ((st = call_handler(r, tool, args, &call, &result)) ==
		    MCP_OK && (call_noted(&cc, &appr) != 0 ||
		    (appr.approvals != NULL &&
		    approval_decorate(result, &appr) != 0)))
			st = req_fail(r, MCP_ERR_NOMEM, "Internal error: out of "
			    "memory");
		if (st == MCP_OK && (st = call_check_output(r, tool,
		    &result)) == MCP_OK)
			call_finish(r, tool, result, &cc);
	}
	call_audit(r, tool, args, result, st, &audit, &t0);
	if (prepared) {
		(void)pthread_mutex_destroy(&cc.mid_lock);
		(void)pthread_mutex_destroy(&cc.mid_one);
	}
	approval_out_fini(&appr);
	json_object_put(args);
	if (st == MCP_OK)
		*ret = result;
	return st;
}

/* ---- the Skills extension (tools/skill_catalog.h) ---- */

/* ttlMs of skills results: 0, a skill's files may change any time. */
#define SKILLS_TTL_MS	0

static enum mcp_err
skills_result(struct req *r, struct json_object *res, int failed,
    struct json_object **ret)
{
	if (!failed && r->era == ERA_MODERN)
		failed = jb_add(res, "ttlMs", json_object_new_int(SKILLS_TTL_MS)) ||
		    jb_add(res, "cacheScope", json_object_new_string("public"));
	if (failed || res == NULL) {
		json_object_put(res);
		return req_fail(r, MCP_ERR_NOMEM, "Internal error: out of memory");
	}
	*ret = res;
	return MCP_OK;
}

static enum mcp_err
m_skills_list(struct req *r, struct json_object **ret)
{
	struct json_object *res, *arr, *v;

	if (!skill_catalog_on(r->srv->env))
		return req_fail(r, MCP_ERR_NO_METHOD, "Method not found: skills/list "
		    "(this server has no skills: --skills-dir)");
	if (r->msg->params != NULL &&
	    json_object_object_get_ex(r->msg->params, "cursor", &v))
		return req_fail(r, MCP_ERR_INVALID_PARAMS, "Invalid params: unknown "
		    "cursor (the skill list has a single page)");
	if ((arr = json_object_new_array()) == NULL ||
	    skill_catalog_list(r->srv->env, arr) != 0) {
		json_object_put(arr);
		return req_fail(r, MCP_ERR_NOMEM, "Internal error: out of memory");
	}
	res = json_object_new_object();
	return skills_result(r, res, res == NULL || jb_add(res, "skills", arr),
	    ret);
}

static enum mcp_err
m_skills_get(struct req *r, struct json_object **ret)
{
	struct json_object *res, *v, *entry;
	const char *uri;
	int rc;

	if (!skill_catalog_on(r->srv->env))
		return req_fail(r, MCP_ERR_NO_METHOD, "Method not found: skills/get "
		    "(this server has no skills: --skills-dir)");
	if (r->msg->params == NULL ||
	    !json_object_object_get_ex(r->msg->params, "uri", &v) ||
	    !json_object_is_type(v, json_type_string))
		return req_fail(r, MCP_ERR_INVALID_PARAMS, "Invalid params: "
		    "skills/get needs \"uri\" (a string: a skill's SKILL.md)");
	uri = json_object_get_string(v);
	if ((rc = skill_catalog_get(r->srv->env, uri, &entry)) == -ENOMEM)
		return req_fail(r, MCP_ERR_NOMEM, "Internal error: out of memory");
	if (rc != 0)
		return req_fail(r, MCP_ERR_INVALID_PARAMS, "Invalid params: %.200s "
		    "is not the SKILL.md of a skill this server serves "
		    "(skills/list lists them)", uri);
	res = json_object_new_object();
	return skills_result(r, res, res == NULL || jb_add(res, "skill", entry),
	    ret);
}

static enum mcp_err
m_skills_dir(struct req *r, struct json_object **ret)
{
	struct json_object *res, *arr, *v;
	const char *uri;
	int rc;

	if (!skill_catalog_on(r->srv->env))
		return req_fail(r, MCP_ERR_NO_METHOD, "Method not found: "
		    "resources/directory/read (this server has no skills: "
		    "--skills-dir)");
	if (r->msg->params == NULL ||
	    !json_object_object_get_ex(r->msg->params, "uri", &v) ||
	    !json_object_is_type(v, json_type_string))
		return req_fail(r, MCP_ERR_INVALID_PARAMS, "Invalid params: "
		    "resources/directory/read needs \"uri\" (a string)");
	uri = json_object_get_string(v);
	if (json_object_object_get_ex(r->msg->params, "cursor", &v))
		return req_fail(r, MCP_ERR_INVALID_PARAMS, "Invalid params: unknown "
		    "cursor (a directory is listed in a single page)");
	if ((arr = json_object_new_array()) == NULL)
		return req_fail(r, MCP_ERR_NOMEM, "Internal error: out of memory");
	if ((rc = skill_catalog_directory(r->srv->env, uri, arr)) != 0) {
		json_object_put(arr);
		if (rc == -ENOMEM)
			return req_fail(r, MCP_ERR_NOMEM, "Internal error: out of "
			    "memory");
		return req_fail(r, MCP_ERR_INVALID_PARAMS, "Invalid params: %.200s "
		    "is not a directory resource this server serves (a skill's "
		    "skill://NAME, or a folder under it)", uri);
	}
	res = json_object_new_object();
	if (res == NULL || jb_add(res, "resources", arr)) {
		json_object_put(res);
		return req_fail(r, MCP_ERR_NOMEM, "Internal error: out of memory");
	}
	*ret = res;
	return MCP_OK;
}

void
dispatch_end_tasks(const struct server *srv)
{
	tasks_shutdown(srv->tasks);
	repls_end_owner(srv->env->repls, NULL, "the server stopped");
}

void
dispatch_session_gone(const struct server *srv, const struct session *sess)
{
	char owner[SESSION_OWNER_KEY];

	session_owner_key(sess, false, owner);
	repls_end_owner(srv->env->repls, owner, "its MCP session ended");
	approvals_forget(srv->approvals, owner);
}

/* The resources methods live in resources.c; this hands them over. */
static enum mcp_err
m_resources(struct req *r, struct json_object **ret)
{
	struct rsrc_req q;
	enum mcp_err st;

	memset(&q, 0, sizeof(q));
	q.srv = r->srv;
	q.sess = r->sess;
	q.params = r->msg->params;
	q.modern = r->era == ERA_MODERN;
	if ((st = resources_handle(r->msg->method, &q, ret)) != MCP_OK) {
		r->err_data = q.err_data;
		(void)req_fail(r, st, "%s", q.err);
	}
	return st;
}

static const struct method methods[] = {
	{ "initialize", m_initialize, M_LEGACY | M_PREINIT },
	{ "ping", m_ping, M_LEGACY | M_PREINIT },
	{ "logging/setLevel", m_set_level, M_LEGACY },
	{ "server/discover", m_discover, M_MODERN },
	{ "tools/list", m_tools_list, M_LEGACY | M_MODERN },
	{ "tools/call", req_tools_call, M_LEGACY | M_MODERN | M_WORKSPACE },
	{ "subscriptions/listen", m_listen, M_MODERN },
	{ "resources/list", m_resources, M_LEGACY | M_MODERN | M_WORKSPACE },
	{ "resources/read", m_resources, M_LEGACY | M_MODERN | M_WORKSPACE },
	{ "resources/templates/list", m_resources, M_LEGACY | M_MODERN },
	{ "resources/subscribe", m_resources, M_LEGACY },
	{ "tasks/get", m_tasks_get, M_LEGACY | M_MODERN },
	{ "tasks/result", m_tasks_result, M_LEGACY },
	{ "tasks/list", m_tasks_list, M_LEGACY },
	{ "tasks/cancel", m_tasks_cancel, M_LEGACY | M_MODERN },
	{ "tasks/update", m_tasks_update, M_MODERN },
	{ "resources/unsubscribe", m_resources, M_LEGACY },
	{ "skills/list", m_skills_list, M_LEGACY | M_MODERN },
	{ "skills/get", m_skills_get, M_LEGACY | M_MODERN },
	{ "resources/directory/read", m_skills_dir, M_LEGACY | M_MODERN },
};

static const struct method *
method_lookup(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		if (strcmp(methods[i].name, name) == 0)
			return &methods[i];
	return NULL;
}

bool
dispatch_uses_workspace(const struct rpc_msg *msg)
{
	const struct method *m;

	return msg->kind == RPC_REQUEST &&
	    (m = method_lookup(msg->method)) != NULL &&
	    (m->flags & M_WORKSPACE) != 0;
}

const char *
dispatch_modern_version(const struct rpc_msg *msg)
{
	return msg->meta_version;
}

/*
 * 2026-07-28: every request names its version and the client's
 * capabilities in _meta. Checked before the method runs.
 */
static enum mcp_err
check_modern_meta(struct req *r)
{
	struct json_object *meta = r->msg->meta, *v;
	const char *want = r->msg->meta_version;
	size_t i;

	if (want == NULL)
		return req_fail(r, MCP_ERR_INVALID_PARAMS, "Invalid params: "
		    "_meta \"%s\" is required (or send initialize first)",
		    META_VERSION);
	for (i = 0; dispatch_modern_versions[i] != NULL; i++)
		if (strcmp(want, dispatch_modern_versions[i]) == 0)
			break;
	if (dispatch_modern_versions[i] == NULL) {
		r->err_data = json_object_new_object();
		if ((r->err_data = jb_built(r->err_data, jb_add(r->err_data,
		    "supported", versions(false)) || jb_add(r->err_data,
		    "requested", json_object_new_string(want)))) == NULL)
			return req_fail(r, MCP_ERR_NOMEM, "Internal error: out of "
			    "memory");
		return req_fail(r, MCP_ERR_UNSUPPORTED_VERSION, "Unsupported "
		    "protocol version: %.*s", (int)utf8_prefix(want,
		    strlen(want), 32), want);
	}
	if (!json_object_object_get_ex(meta, META_CAPS, &v) ||
	    !json_object_is_type(v, json_type_object))
		return req_fail(r, MCP_ERR_INVALID_PARAMS, "Invalid params: "
		    "_meta \"%s\" is required (an object)", META_CAPS);
	if (json_object_object_get_ex(meta, META_LOGLEVEL, &v)) {
		if (!json_object_is_type(v, json_type_string) ||
		    (r->log_level = level_from_name(
		    json_object_get_string(v))) < 0)
			return req_fail(r, MCP_ERR_INVALID_PARAMS, "Invalid params: "
			    "_meta \"%s\" must be a log level name",
			    META_LOGLEVEL);
	}
	return MCP_OK;
}

/* Modern results carry resultType and our serverInfo. -1: no memory. */
static int
decorate_modern(struct json_object *res)
{
	struct json_object *meta;

	if (!json_object_is_type(res, json_type_object))
		return 0;
	if (!json_object_object_get_ex(res, "resultType", NULL) &&
	    jb_add(res, "resultType", json_object_new_string("complete")) != 0)
		return -1;
	if (!json_object_object_get_ex(res, "_meta", &meta) &&
	    jb_add(res, "_meta", meta = json_object_new_object()) != 0)
		return -1;
	return jb_add(meta, META_SERVERINFO, server_info());
}


static void
send_text(const struct msg_sink *sink, char *text, size_t len)
{
	if (text == NULL) {
		log_err("out of memory building a response");
		return;
	}
	(void)sink->send(sink->arg, text, len);
	free(text);
}

static void
handle_notification(const struct server *srv, struct session *sess,
    const struct rpc_msg *msg)
{
	struct json_object *v;
	char key[MCP_MAX_ID_LEN + 3];

	if (strcmp(msg->method, "notifications/cancelled") != 0)
		return;		/* initialized, progress, roots: nothing to do */
	if (msg->params == NULL ||
	    !json_object_object_get_ex(msg->params, "requestId", &v))
		return;
	if (jsonrpc_id_key(v, key, sizeof(key)) != 0)
		return;		/* not an id we could have: nothing to cancel */
	session_cancel(sess, key);
}

static bool
is_listen(const struct rpc_msg *msg)
{
	return msg->kind == RPC_REQUEST &&
	    strcmp(msg->method, "subscriptions/listen") == 0;
}

/* tasks/result blocks until its task has ended. */
static bool
is_task_wait(const struct rpc_msg *msg)
{
	return msg->kind == RPC_REQUEST &&
	    strcmp(msg->method, "tasks/result") == 0;
}

bool
dispatch_runs_long(const struct rpc_msg *msg)
{
	return msg->kind == RPC_REQUEST && (strcmp(msg->method,
	    "tools/call") == 0 || is_listen(msg) || is_task_wait(msg));
}

bool
dispatch_is_quick(const struct server *srv, const struct rpc_msg *msg)
{
	const struct tool_entry *tool;

	if (is_task_wait(msg))
		return false;
	if (!dispatch_runs_long(msg) || is_listen(msg))
		return true;	/* listen answers at once, after its ack */
	if (msg->tool_name == NULL)
		return true;	/* answered at once with -32602 */
	tool = toolset_lookup(srv->tools, msg->tool_name);
	return tool == NULL || tool->def->quick;
}

bool
dispatch_may_notify(const struct server *srv, struct session *sess,
    const struct rpc_msg *msg)
{
	const struct tool_entry *tool;

	if (!dispatch_runs_long(msg))
		return false;
	/* it may send requests of its own (a fixture), or ask its user
	 * (approval.c: before it runs, or its proxy mid-run): on the
	 * call's stream */
	if (msg->tool_name != NULL && (session_client_elicits(sess) ||
	    session_client_samples(sess)) &&
	    (tool = toolset_lookup(srv->tools, msg->tool_name)) != NULL &&
	    (tool->def->asks_client || (tool->def->may_ask &&
	    session_client_elicits(sess) && tool_ask_enabled(srv->env))))
		return true;
	if (is_listen(msg) || msg->progress_token != NULL ||
	    msg->meta_log_level || session_has_subscriptions(sess))
		return true;	/* resources/updated may precede the result */
	return session_log_level(sess) >= 0;
}

size_t
dispatch_tool_count(const struct server *srv)
{
	return toolset_count(srv->tools);
}

const char *
dispatch_tool_name(const struct server *srv, size_t i)
{
	struct json_object *t, *n;

	t = json_object_array_get_idx(toolset_list(srv->tools), i);
	if (t == NULL || !json_object_object_get_ex(t, "name", &n))
		return NULL;
	return json_object_get_string(n);
}

struct json_object *
dispatch_tool_listing(const struct server *srv, const char *name)
{
	struct json_object *list = toolset_list(srv->tools), *t, *n;
	size_t i, len = json_object_array_length(list);

	for (i = 0; i < len; i++) {
		t = json_object_array_get_idx(list, i);
		if (json_object_object_get_ex(t, "name", &n) &&
		    strcmp(json_object_get_string(n), name) == 0)
			return t;
	}
	return NULL;
}

enum mcp_err
dispatch_message(const struct server *srv, struct session *sess,
    const struct rpc_msg *msg, const struct msg_sink *sink)
{
	return dispatch_message_queued(srv, sess, msg, sink, NULL);
}

int
dispatch_enqueue(struct session *sess, const struct rpc_msg *msg,
    struct inflight *fl)
{
	memset(fl, 0, sizeof(*fl));
	(void)snprintf(fl->key, sizeof(fl->key), "%s", msg->id_key);
	return session_begin(sess, fl);
}

enum mcp_err
dispatch_message_queued(const struct server *srv, struct session *sess,
    const struct rpc_msg *msg, const struct msg_sink *sink,
    struct inflight *queued)
{
	const struct method *m;
	struct json_object *result = NULL;
	struct inflight local, *flp;
	struct req r;
	int mlen;
	enum mcp_err st;
	bool initialized, cancelled;
	char *text;
	size_t len;

	if (msg->kind == RPC_RESPONSE) {
		/* the answer to one of our asks (approval.c), or nothing */
		if (!session_ask_answer(sess, msg->id_key, msg->root))
			log_debug("a response to no request of ours: dropped");
		return MCP_OK;
	}
	if (msg->kind == RPC_NOTIFICATION) {
		handle_notification(srv, sess, msg);
		return MCP_OK;
	}

	memset(&r, 0, sizeof(r));
	r.srv = srv;
	r.sess = sess;
	r.msg = msg;
	r.sink = sink;
	r.log_level = -1;
	r.era = dispatch_modern_version(msg) != NULL ||
	    strcmp(msg->method, "server/discover") == 0 ? ERA_MODERN :
	    ERA_LEGACY;

	if ((flp = queued) == NULL) {
		/* answered on this thread now: not counted against the cap,
		 * so ping and tools/list work while calls fill the table */
		flp = &local;
		memset(flp, 0, sizeof(*flp));
		(void)snprintf(flp->key, sizeof(flp->key), "%s", msg->id_key);
		session_begin_uncapped(sess, flp);
	}
	r.fl = flp;
	mlen = (int)utf8_prefix(msg->method, strlen(msg->method),
	    MCP_MAX_METHOD_LEN);
	/* cancelled while it waited in a queue: run nothing, answer nothing */
	if (session_is_cancelled(sess, flp)) {
		st = MCP_ERR_INTERNAL;
		goto reply;
	}

	if ((m = method_lookup(msg->method)) == NULL) {
		st = req_fail(&r, MCP_ERR_NO_METHOD, "Method not found: %.*s",
		    mlen, msg->method);
		goto reply;
	}
	if (r.era == ERA_MODERN) {
		if ((st = check_modern_meta(&r)) != MCP_OK)
			goto reply;
		if (!(m->flags & M_MODERN)) {
			st = req_fail(&r, MCP_ERR_NO_METHOD, "Method not found: "
			    "%.*s is not part of protocol 2026-07-28",
			    mlen, msg->method);
			goto reply;
		}
	} else {
		initialized = session_initialized(sess);
		if (!(m->flags & M_LEGACY)) {
			st = req_fail(&r, MCP_ERR_NO_METHOD, "Method not found: "
			    "%.*s", mlen, msg->method);
			goto reply;
		}
		if (!initialized && !(m->flags & M_PREINIT)) {
			st = req_fail(&r, MCP_ERR_INVALID_PARAMS, "Invalid params: "
			    "_meta \"%s\" is required (or send initialize "
			    "first)", META_VERSION);
			goto reply;
		}
	}
	st = m->fn(&r, &result);
	if (st == MCP_OK && result == NULL && r.raw == NULL)
		st = req_fail(&r, MCP_ERR_NOMEM, "Internal error: out of memory");
	if (st == MCP_OK && r.era == ERA_MODERN && r.raw == NULL &&
	    decorate_modern(result) != 0) {
		json_object_put(result);
		result = NULL;
		st = req_fail(&r, MCP_ERR_NOMEM, "Internal error: out of memory");
	}
 reply:
	cancelled = session_end(sess, flp);
	if (cancelled) {
		json_object_put(result);
		json_object_put(r.err_data);
		free(r.raw);
		req_after_answer(&r);
		return MCP_OK;	/* a cancelled request gets no response */
	}
	if (st == MCP_OK && r.raw != NULL) {
		text = jsonrpc_result_raw(msg->id, r.raw, r.raw_len, &len);
		free(r.raw);
	} else if (st == MCP_OK) {
		text = jsonrpc_result(msg->id, result, &len);
	} else {
		text = jsonrpc_error(msg->id, st, r.err_msg != NULL ?
		    r.err_msg : "Internal error", r.err_data, &len);
	}
	send_text(sink, text, len);
	req_after_answer(&r);
	return st;
}
