/*
 * repl_tools: what run_code's sessions show, the session part of a call's
 * result, end_session, list_sessions and the session:// resources.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "render.h"
#include "repl.h"
#include "repl_impl.h"
#include "sandbox.h"
#include "toolargs.h"

static struct json_object *
session_json(const char *name, int lang, bool started, uint64_t age_ms,
    unsigned calls, uint32_t idle_ms, uint64_t memory, const char *ended)
{
	struct json_object *o = json_object_new_object();

	if (o == NULL ||
	    tool_json_add(o, "name", json_object_new_string(name)) != 0 ||
	    tool_json_add(o, "language", json_object_new_string(
	    policy_lang_name(lang))) != 0 ||
	    tool_json_add(o, "started", json_object_new_boolean(started)) != 0 ||
	    tool_json_add(o, "age_ms", json_object_new_int64(
	    (int64_t)age_ms)) != 0 ||
	    tool_json_add(o, "calls", json_object_new_int64(calls)) != 0 ||
	    tool_json_add(o, "idle_timeout_ms", json_object_new_int64(
	    idle_ms)) != 0 ||
	    (memory > 0 ? tool_json_add(o, "memory_bytes",
	    json_object_new_int64((int64_t)memory)) :
	    json_object_object_add(o, "memory_bytes", NULL)) != 0 ||
	    (ended != NULL && tool_json_add(o, "ended",
	    json_object_new_string(ended)) != 0)) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* ---- resources ---- */

/* A session's facts as JSON text (t->lock held); NULL: no memory. */
static char *
resource_text_locked(struct repls *t, struct repl *r)
{
	struct json_object *o;
	uint64_t mem = r->refs == 0 && r->sb != NULL ?
	    sb_started_memory(r->sb) : 0;
	const char *s;
	char *text;

	o = session_json(r->name, r->lang, false, repl_now_ms() - r->born_ms,
	    r->calls, t->p->limits.session_idle_ms, mem, NULL);
	if (o != NULL && tool_json_add(o, "busy", json_object_new_boolean(
	    r->refs > 0)) != 0) {
		json_object_put(o);
		o = NULL;
	}
	s = o != NULL ? json_object_to_json_string_ext(o,
	    JSON_C_TO_STRING_PLAIN) : NULL;
	text = s != NULL ? strdup(s) : NULL;
	json_object_put(o);
	return text;
}

int
repl_resources_list(struct repls *t, const char *owner,
    struct json_object *arr)
{
	struct json_object *o;
	char uri[sizeof(REPL_URI_PREFIX) + REPL_NAME_MAX];
	size_t i;
	int rc = 0;

	if (t == NULL)
		return 0;
	(void)pthread_mutex_lock(&t->lock);
	for (i = 0; i < t->n && rc == 0; i++) {
		struct repl *r = t->open[i];

		if (strcmp(r->owner, owner) != 0)
			continue;
		(void)snprintf(uri, sizeof(uri), "%s%s", REPL_URI_PREFIX,
		    r->name);
		if ((o = json_object_new_object()) == NULL ||
		    tool_json_add(o, "uri", json_object_new_string(uri)) != 0 ||
		    tool_json_add(o, "name", json_object_new_string(uri)) != 0 ||
		    tool_json_add(o, "title", json_object_new_string(
		    policy_lang_name(r->lang))) != 0 ||
		    tool_json_add(o, "description", json_object_new_string(
		    "An open run_code session: its language, age, calls and "
		    "memory")) != 0 ||
		    tool_json_add(o, "mimeType", json_object_new_string(
		    "application/json")) != 0 ||
		    json_object_array_add(arr, o) != 0) {
			json_object_put(o);
			rc = -ENOMEM;
		}
	}
	(void)pthread_mutex_unlock(&t->lock);
	return rc;
}

int
repl_resource_read(struct repls *t, const char *owner, const char *uri,
    struct json_object **ret)
{
	const char *name = uri + strlen(REPL_URI_PREFIX);
	struct json_object *c;
	struct repl *r;
	char *text = NULL;

	if (strncmp(uri, REPL_URI_PREFIX, strlen(REPL_URI_PREFIX)) != 0)
		return -EINVAL;
	if (t == NULL)
		return -ENOENT;
	(void)pthread_mutex_lock(&t->lock);
	if ((r = repl_find_locked(t, owner, name)) != NULL)
		text = resource_text_locked(t, r);
	(void)pthread_mutex_unlock(&t->lock);
	if (r == NULL)
		return -ENOENT;
	if (text == NULL)
		return -ENOMEM;
	if ((c = json_object_new_object()) == NULL ||
	    tool_json_add(c, "uri", json_object_new_string(uri)) != 0 ||
	    tool_json_add(c, "mimeType", json_object_new_string(
	    "application/json")) != 0 ||
	    tool_json_add(c, "text", json_object_new_string(text)) != 0) {
		json_object_put(c);
		free(text);
		return -ENOMEM;
	}
	free(text);
	*ret = c;
	return 0;
}

enum mcp_err
repl_add_result(const struct repl_call *q, struct json_object *r)
{
	struct json_object *sc, *content, *block, *text, *o;	/* borrowed */
	char line[512], say[32];
	const char *old;
	char *joined;

	o = session_json(q->name, q->lang, q->started, q->age_ms, q->calls,
	    q->idle_ms, q->memory_bytes, q->ended[0] != '\0' ? q->ended : NULL);
	if (o == NULL)
		return MCP_ERR_NOMEM;
	if (json_object_object_get_ex(r, "structuredContent", &sc)) {
		if (tool_json_add(sc, "session", json_object_get(o)) != 0) {
			json_object_put(o);
			return MCP_ERR_NOMEM;
		}
	}
	json_object_put(o);
	repl_say_ms(q->idle_ms, say, sizeof(say));
	if (q->ended[0] != '\0')
		(void)snprintf(line, sizeof(line), "Session '%s' (%s) ended "
		    "during this call: %s. Its state is gone; a call with "
		    "restart: true starts it afresh.", q->name,
		    policy_lang_name(q->lang), q->ended);
	else
		(void)snprintf(line, sizeof(line), "Session '%s' (%s): %s, "
		    "call %u; it keeps its state for the next call (ends "
		    "after %s idle).", q->name, policy_lang_name(q->lang),
		    q->started ? "started by this call" : "continued", q->calls,
		    say);
	if (!json_object_object_get_ex(r, "content", &content) ||
	    (block = json_object_array_get_idx(content, 0)) == NULL ||
	    !json_object_object_get_ex(block, "text", &text))
		return MCP_OK;
	old = json_object_get_string(text);
	if ((joined = malloc(strlen(old) + strlen(line) + 2)) == NULL)
		return MCP_ERR_NOMEM;
	(void)sprintf(joined, "%s\n%s", old, line);
	if (tool_json_add(block, "text", json_object_new_string(joined)) != 0) {
		free(joined);
		return MCP_ERR_NOMEM;
	}
	free(joined);
	return MCP_OK;
}

enum mcp_err
tool_end_session(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result)
{
	struct repls *t = call->env->repls;
	const char *name = toolargs_str(args, "session", "");
	struct json_object *r = NULL, *o = NULL;
	struct repl_waiter *w = NULL;
	struct repl_ended *e;
	struct repl *s;
	bool gone = false;
	char text[320];

	if (t == NULL) {
		*ret_result = tool_result_error("This server takes no sessions.");
		return *ret_result != NULL ? MCP_OK : MCP_ERR_NOMEM;
	}
	if ((w = calloc(1, sizeof(*w))) == NULL)
		return MCP_ERR_NOMEM;
	(void)pthread_mutex_lock(&t->lock);
	if ((s = repl_find_locked(t, call->owner, name)) == NULL) {
		e = repl_find_ended_locked(t, call->owner, name);
		render_refused(call->audit, "no such session");
		if (e != NULL)
			r = tool_result_error("The session '%s' has ended "
			    "already: %s.", name, e->why);
		else
			r = tool_result_error("No session '%s' is open for this "
			    "client (list_sessions lists those that are).", name);
		(void)pthread_mutex_unlock(&t->lock);
		free(w);
		*ret_result = r;
		return r != NULL ? MCP_OK : MCP_ERR_NOMEM;
	}
	/* after the calls queued on it */
	if ((r = repl_queue_on(t, call, s, w, &gone)) == NULL) {
		o = session_json(s->name, s->lang, false, repl_now_ms() - s->born_ms,
		    s->calls, t->p->limits.session_idle_ms, 0, "end_session");
		(void)snprintf(text, sizeof(text), "Session '%s' (%s) ended "
		    "after %u calls; its interpreter and sandbox are gone.",
		    name, policy_lang_name(s->lang), s->calls);
		repl_end_locked(t, s, "end_session ended it");
		gone = repl_dequeue_locked(t, s, w);
		r = o != NULL ? tool_result_ok(o, text) : NULL;
	}
	(void)pthread_mutex_unlock(&t->lock);
	free(w);
	if (gone)
		repl_free(s);
	*ret_result = r;
	return r != NULL ? MCP_OK : MCP_ERR_NOMEM;
}

enum mcp_err
tool_list_sessions(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result)
{
	struct repls *t = call->env->repls;
	struct json_object *open, *ended, *o, *r;
	uint64_t now = repl_now_ms();
	size_t i, nopen = 0;
	bool nomem = false;
	char text[4096];
	size_t w = 0;
	int n;

	(void)args;
	open = json_object_new_array();
	ended = json_object_new_array();
	o = json_object_new_object();
	if (open == NULL || ended == NULL || o == NULL) {
		json_object_put(open);
		json_object_put(ended);
		json_object_put(o);
		return MCP_ERR_NOMEM;
	}
	text[0] = '\0';
	if (t != NULL) {
		(void)pthread_mutex_lock(&t->lock);
		for (i = 0; i < t->n; i++) {
			struct repl *s = t->open[i];
			struct json_object *j;

			if (strcmp(s->owner, call->owner) != 0)
				continue;
			j = session_json(s->name, s->lang, false,
			    now - s->born_ms, s->calls,
			    t->p->limits.session_idle_ms, 0, NULL);
			if (j != NULL && s->refs > 0 && tool_json_add(j, "busy",
			    json_object_new_boolean(true)) != 0) {
				json_object_put(j);
				j = NULL;
			}
			if (j == NULL || json_object_array_add(open, j) != 0) {
				json_object_put(j);
				nomem = true;
				break;
			}
			nopen++;
			n = snprintf(text + w, sizeof(text) - w, "%s%s (%s, %u "
			    "calls)", nopen > 1 ? ", " : "", s->name,
			    policy_lang_name(s->lang), s->calls);
			if (n > 0 && (size_t)n < sizeof(text) - w)
				w += (size_t)n;
		}
		for (i = 0; i < REPL_ENDED_KEPT && !nomem; i++) {
			struct repl_ended *e = &t->ended[i];
			struct json_object *j;

			if (!e->used || strcmp(e->owner, call->owner) != 0)
				continue;
			if ((j = json_object_new_object()) != NULL &&
			    (tool_json_add(j, "name", json_object_new_string(
			    e->name)) != 0 || tool_json_add(j, "language",
			    json_object_new_string(policy_lang_name(
			    e->lang))) != 0 || tool_json_add(j, "why",
			    json_object_new_string(e->why)) != 0)) {
				json_object_put(j);
				j = NULL;
			}
			if (j == NULL || json_object_array_add(ended, j) != 0) {
				json_object_put(j);
				nomem = true;
				break;
			}
		}
		(void)pthread_mutex_unlock(&t->lock);
	}
	if (nomem) {
		json_object_put(open);
		json_object_put(ended);
		json_object_put(o);
		return MCP_ERR_NOMEM;
	}
	if (tool_json_add(o, "sessions", open) != 0 ||
	    tool_json_add(o, "ended", ended) != 0) {
		json_object_put(o);
		return MCP_ERR_NOMEM;
	}
	if (nopen == 0)
		(void)snprintf(text, sizeof(text), "No session is open for this "
		    "client.");
	r = tool_result_ok(o, text);
	*ret_result = r;
	return r != NULL ? MCP_OK : MCP_ERR_NOMEM;
}
