/*
 * What answering one request takes whatever the method (dispatch_impl.h):
 * its protocol errors, its log level, the approval stage's view of it,
 * and what follows its answer. Apart from dispatch.c so that the tasks
 * (dispatch_task.c) use them without calling into the method table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch_impl.h"
#include "json_build.h"
#include "utf8.h"

enum mcp_err
req_vfail(struct req *r, enum mcp_err st, const char *fmt, va_list ap)
{
	(void)vsnprintf(r->err_buf, sizeof(r->err_buf), fmt, ap);
	utf8_trim(r->err_buf);	/* a cut name must not split a character */
	r->err_msg = r->err_buf;
	return st;
}

enum mcp_err
req_fail(struct req *r, enum mcp_err st, const char *fmt, ...)
{
	enum mcp_err ret;
	va_list ap;

	va_start(ap, fmt);
	ret = req_vfail(r, st, fmt, ap);
	va_end(ap);
	return ret;
}

/* {key: val}, taking val. */
struct json_object *
req_obj1(const char *key, struct json_object *val)
{
	struct json_object *o = json_object_new_object();

	return jb_built(o, jb_add(o, key, val));
}

enum mcp_err
req_missing_capability(struct req *r, const char *cap, const char *ext,
    const char *fmt, ...)
{
	enum mcp_err ret;
	va_list ap;

	r->err_data = req_obj1("requiredCapabilities", cap != NULL ?
	    req_obj1(cap, json_object_new_object()) :
	    req_obj1("extensions", req_obj1(ext, json_object_new_object())));
	if (r->err_data == NULL)
		return req_fail(r, MCP_ERR_NOMEM, "Internal error: out of memory");
	va_start(ap, fmt);
	ret = req_vfail(r, MCP_ERR_MISSING_CAPABILITY, fmt, ap);
	va_end(ap);
	return ret;
}

/*
 * initialize's capabilities.elicitation: form mode where it is there and
 * empty (2025-06-18's only mode) or names "form"; a client offering only
 * "url" cannot show our form.
 */
bool
req_elicits_form(struct json_object *caps)
{
	struct json_object *el;

	return caps != NULL && json_object_is_type(caps, json_type_object) &&
	    json_object_object_get_ex(caps, "elicitation", &el) &&
	    json_object_is_type(el, json_type_object) &&
	    (json_object_object_length(el) == 0 ||
	    json_object_object_get_ex(el, "form", NULL));
}

int
req_log_level(struct req *r)
{
	if (r->era == ERA_MODERN)
		return r->log_level;
	return session_log_level(r->sess);
}

/* What the approval stage needs of r (owner: SESSION_OWNER_KEY bytes). */
void
req_approval_ctx(struct req *r, const struct tool_def *def,
    const struct json_object *args, char *owner, struct approval_call *ac)
{
	struct json_object *caps;

	memset(ac, 0, sizeof(*ac));
	session_owner_key(r->sess, r->era == ERA_MODERN, owner);
	ac->ap = r->srv->approvals;
	ac->env = r->srv->env;
	ac->audit = r->srv->audit;
	ac->sess = r->sess;
	ac->fl = r->fl;
	ac->send = r->sink->send;
	ac->send_arg = r->sink->arg;
	ac->msg = r->msg;
	ac->modern = r->era == ERA_MODERN;
	ac->client_elicits = ac->modern ? r->msg->meta != NULL &&
	    json_object_object_get_ex(r->msg->meta, META_CAPS, &caps) &&
	    req_elicits_form(caps) : session_client_elicits(r->sess);
	ac->in_task = r->task != NULL;
	ac->owner = owner;
	ac->def = def;
	ac->args = args;
	ac->plain_max_ms = r->task != NULL ? r->srv->task_timeout_ms : 0;
}

/*
 * After the answer: the audit line a tools/call left, if any, and the warm
 * pythons that call may have used, started again now that the client has
 * what it waited for.
 */
void
req_after_answer(struct req *r)
{
	if (r->sandboxed)
		tool_env_answered(r->srv->env);
	if (!r->audit_pending)
		return;
	audit_call(r->srv->audit, r->sess, r->audit_tool, r->audit_args,
	    r->audit_result, &r->audit);
	json_object_put(r->audit_args);
	json_object_put(r->audit_result);
	json_object_put(r->audit.network);
	r->audit.network = NULL;
	r->audit_pending = false;
}
