/*
 * Conformance fixtures that ask the client. 2026-07-28's multi-round-trip
 * requests (SEP-2322, the input-required-result-* scenarios): tools that
 * answer with an input_required result naming what they need, and finish
 * once the retried call carries it; their requestStates are sealed with
 * the server run's key (tool_call.seal), one altered is a -32602 (the
 * handler returns MCP_ERR_INVALID_PARAMS). 2025-11-25's elicitation
 * (tools-call-elicitation, SEP-1034's defaults, SEP-1330's enums): tools
 * that send elicitation/create on their call's stream (tool_call.ask_client; and sampling/createMessage).
 * Test-only, with --conformance-fixtures; the approvals of the real tools
 * are server/approval.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "json_build.h"

static const char ask_name[] = "{\"message\":\"What is your name?\","
    "\"requestedSchema\":{\"type\":\"object\",\"properties\":{\"name\":"
    "{\"type\":\"string\"}},\"required\":[\"name\"]}}";
static const char ask_capital[] = "{\"messages\":[{\"role\":\"user\","
    "\"content\":{\"type\":\"text\",\"text\":\"What is the capital of "
    "France?\"}}],\"maxTokens\":100}";
static const char ask_greeting[] = "{\"messages\":[{\"role\":\"user\","
    "\"content\":{\"type\":\"text\",\"text\":\"Generate a greeting\"}}],"
    "\"maxTokens\":50}";
static const char ask_confirm[] = "{\"message\":\"Please confirm\","
    "\"requestedSchema\":{\"type\":\"object\",\"properties\":{\"ok\":"
    "{\"type\":\"boolean\"}},\"required\":[\"ok\"]}}";
static const char ask_step1[] = "{\"message\":\"Step 1: What is your "
    "name?\",\"requestedSchema\":{\"type\":\"object\",\"properties\":"
    "{\"name\":{\"type\":\"string\"}},\"required\":[\"name\"]}}";
static const char ask_step2[] = "{\"message\":\"Step 2: What is your "
    "favorite color?\",\"requestedSchema\":{\"type\":\"object\","
    "\"properties\":{\"color\":{\"type\":\"string\"}},\"required\":"
    "[\"color\"]}}";

/* One entry of inputRequests: {method, params} (params from JSON text). */
static int
add_request(struct json_object *reqs, const char *key, const char *method,
    const char *params)
{
	struct json_object *e = json_object_new_object();

	return jb_add(reqs, key, jb_built(e, jb_add(e, "method",
	    json_object_new_string(method)) ||
	    jb_add(e, "params", json_tokener_parse(params))));
}

/* The input_required result of reqs (taken), with state sealed (or none). */
static enum mcp_err
input_required(const struct tool_call *call, struct json_object *reqs,
    const char *state, struct json_object **ret)
{
	struct json_object *res = json_object_new_object();
	char *sealed = NULL;

	if (state != NULL && (sealed = call->seal(call->cb_arg, state)) ==
	    NULL) {
		json_object_put(reqs);
		json_object_put(res);
		return MCP_ERR_NOMEM;
	}
	res = jb_built(res, jb_add(res, "resultType",
	    json_object_new_string("input_required")) ||
	    jb_add(res, "inputRequests", reqs) ||
	    (sealed != NULL && jb_add(res, "requestState",
	    json_object_new_string(sealed))));
	free(sealed);
	if (res == NULL)
		return MCP_ERR_NOMEM;
	*ret = res;
	return MCP_OK;
}

/* input_required of reqs once built (failed: it could not be, no memory). */
static enum mcp_err
ask(const struct tool_call *call, struct json_object *reqs, int failed,
    const char *state, struct json_object **ret)
{
	if (failed) {
		json_object_put(reqs);
		return MCP_ERR_NOMEM;
	}
	return input_required(call, reqs, state, ret);
}

/* {"content":[{"type":"text","text":text}]} */
static enum mcp_err
complete(const char *text, struct json_object **ret)
{
	struct json_object *res = json_object_new_object();
	struct json_object *content = json_object_new_array();
	struct json_object *b = json_object_new_object();

	b = jb_built(b, jb_add(b, "type", json_object_new_string("text")) ||
	    jb_add(b, "text", json_object_new_string(text)));
	if ((res = jb_built(res, jb_push(content, b) ||
	    jb_add(res, "content", content))) == NULL)
		return MCP_ERR_NOMEM;
	*ret = res;
	return MCP_OK;
}

/* inputResponses[key], an object, or NULL. */
static struct json_object *
response(const struct tool_call *call, const char *key)
{
	struct json_object *v;

	if (call->input_responses == NULL || !json_object_object_get_ex(
	    (struct json_object *)call->input_responses, key, &v) ||
	    !json_object_is_type(v, json_type_object))
		return NULL;
	return v;
}

/* path "a.b" of o as a string, or NULL. */
static const char *
str_at(struct json_object *o, const char *a, const char *b)
{
	struct json_object *v;

	if (o == NULL || !json_object_object_get_ex(o, a, &v) ||
	    (b != NULL && !json_object_object_get_ex(v, b, &v)) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* An accepted elicitation's content.field (a string), or NULL. */
static const char *
accepted(struct json_object *r, const char *field)
{
	const char *action = str_at(r, "action", NULL);

	return action != NULL && strcmp(action, "accept") == 0 ?
	    str_at(r, "content", field) : NULL;
}

/*
 * The requestState, opened: 1 with *text (owned), 0 when there is none,
 * -1 when it was altered or is not ours.
 */
static int
state_of(const struct tool_call *call, char **text)
{
	*text = NULL;
	if (call->request_state == NULL)
		return 0;
	return call->unseal(call->cb_arg, call->request_state, text) == 0 ? 1 :
	    -1;
}

enum mcp_err
fixture_mrtr_elicitation(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result)
{
	const char *name = accepted(response(call, "user_name"), "name");
	struct json_object *reqs = json_object_new_object();
	char text[512];

	(void)args;
	if (name != NULL) {
		json_object_put(reqs);
		(void)snprintf(text, sizeof(text), "Hello, %s!", name);
		return complete(text, ret_result);
	}
	/* missing, wrong keys or a malformed answer: ask again */
	return ask(call, reqs, add_request(reqs, "user_name",
	    "elicitation/create", ask_name), NULL, ret_result);
}

enum mcp_err
fixture_mrtr_sampling(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result)
{
	const char *said = str_at(response(call, "capital_question"),
	    "content", "text");
	struct json_object *reqs = json_object_new_object();
	char text[512];

	(void)args;
	if (said != NULL) {
		json_object_put(reqs);
		(void)snprintf(text, sizeof(text), "The model said: %s", said);
		return complete(text, ret_result);
	}
	return ask(call, reqs, add_request(reqs, "capital_question",
	    "sampling/createMessage", ask_capital), NULL, ret_result);
}

/* "file:///a, file:///b" of a ListRootsResult, into buf; -1 if none. */
static int
roots_text(struct json_object *r, char *buf, size_t len)
{
	struct json_object *roots;
	size_t i, n, w = 0;
	int k;

	if (r == NULL || !json_object_object_get_ex(r, "roots", &roots) ||
	    !json_object_is_type(roots, json_type_array))
		return -1;
	n = json_object_array_length(roots);
	buf[0] = '\0';
	for (i = 0; i < n && w < len; i++) {
		const char *uri = str_at(json_object_array_get_idx(roots, i),
		    "uri", NULL);

		k = snprintf(buf + w, len - w, "%s%s", i > 0 ? ", " : "",
		    uri != NULL ? uri : "?");
		w += k > 0 ? (size_t)k : 0;
	}
	return 0;
}

enum mcp_err
fixture_mrtr_list_roots(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result)
{
	struct json_object *reqs = json_object_new_object();
	char roots[1024], text[1100];

	(void)args;
	if (roots_text(response(call, "client_roots"), roots,
	    sizeof(roots)) == 0) {
		json_object_put(reqs);
		(void)snprintf(text, sizeof(text), "The client's roots: %s",
		    roots);
		return complete(text, ret_result);
	}
	return ask(call, reqs, add_request(reqs, "client_roots", "roots/list",
	    "{}"), NULL, ret_result);
}

/* A fixture of one elicitation and a state: request_state and
 * tampered_state (the scenarios differ in what they check). */
static enum mcp_err
confirm_with_state(const struct tool_call *call, const char *state,
    struct json_object **ret_result)
{
	struct json_object *reqs, *r = response(call, "confirm"), *ok;
	char *text;
	int st = state_of(call, &text);
	bool good = st > 0 && strcmp(text, state) == 0;

	free(text);
	if (st < 0 || (st > 0 && !good))
		return MCP_ERR_INVALID_PARAMS;
	if (good && r != NULL && json_object_object_get_ex(r, "content", &ok))
		return complete("state-ok: confirmed", ret_result);
	reqs = json_object_new_object();
	return ask(call, reqs, add_request(reqs, "confirm",
	    "elicitation/create", ask_confirm), state, ret_result);
}

enum mcp_err
fixture_mrtr_request_state(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result)
{
	(void)args;
	return confirm_with_state(call, "request_state:confirm", ret_result);
}

enum mcp_err
fixture_mrtr_tampered_state(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result)
{
	(void)args;
	return confirm_with_state(call, "tampered_state:confirm", ret_result);
}

enum mcp_err
fixture_mrtr_multiple_inputs(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result)
{
	static const char state[] = "multiple_inputs";
	const char *name = accepted(response(call, "user_name"), "name");
	const char *greeting = str_at(response(call, "greeting"), "content",
	    "text");
	struct json_object *reqs;
	char roots[512], out[1200], *text;
	int st = state_of(call, &text);
	bool good = st > 0 && strcmp(text, state) == 0;

	(void)args;
	free(text);
	if (st < 0 || (st > 0 && !good))
		return MCP_ERR_INVALID_PARAMS;
	if (good && name != NULL && greeting != NULL && roots_text(
	    response(call, "client_roots"), roots, sizeof(roots)) == 0) {
		(void)snprintf(out, sizeof(out), "state-ok: %s, %s; roots %s",
		    greeting, name, roots);
		return complete(out, ret_result);
	}
	reqs = json_object_new_object();
	return ask(call, reqs, add_request(reqs, "user_name",
	    "elicitation/create", ask_name) || add_request(reqs, "greeting",
	    "sampling/createMessage", ask_greeting) || add_request(reqs,
	    "client_roots", "roots/list", "{}"), state, ret_result);
}

/* Round 1 asks step1 (state "multi_round:1"), round 2 step2 (state
 * "multi_round:2:NAME"), round 3 completes. */
enum mcp_err
fixture_mrtr_multi_round(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result)
{
	static const char r1[] = "multi_round:1", r2[] = "multi_round:2:";
	const char *name = accepted(response(call, "step1"), "name");
	const char *color = accepted(response(call, "step2"), "color");
	struct json_object *reqs;
	char next[600], *text;
	enum mcp_err rc;
	int st = state_of(call, &text);

	(void)args;
	if (st < 0 || (st > 0 && strcmp(text, r1) != 0 &&
	    strncmp(text, r2, sizeof(r2) - 1) != 0)) {
		free(text);
		return MCP_ERR_INVALID_PARAMS;
	}
	reqs = json_object_new_object();
	if (st > 0 && strncmp(text, r2, sizeof(r2) - 1) == 0 && color != NULL) {
		json_object_put(reqs);
		(void)snprintf(next, sizeof(next), "%s's favorite color is %s",
		    text + sizeof(r2) - 1, color);
		rc = complete(next, ret_result);
	} else if (st > 0 && strcmp(text, r1) == 0 && name != NULL) {
		(void)snprintf(next, sizeof(next), "%s%s", r2, name);
		rc = ask(call, reqs, add_request(reqs, "step2",
		    "elicitation/create", ask_step2), next, ret_result);
	} else
		rc = ask(call, reqs, add_request(reqs, "step1",
		    "elicitation/create", ask_step1), r1, ret_result);
	free(text);
	return rc;
}

/* Whether the client's capabilities name cap. */
static bool
declared(const struct tool_call *call, const char *cap)
{
	return call->client_caps != NULL && json_object_object_get_ex(
	    (struct json_object *)call->client_caps, cap, NULL);
}

/* Asks only with what the client declared (elicitation, sampling,
 * roots); complete once every asked key is answered. */
enum mcp_err
fixture_mrtr_capabilities(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result)
{
	struct json_object *reqs = json_object_new_object();
	bool e = declared(call, "elicitation"), s = declared(call, "sampling");
	bool r = declared(call, "roots"), all;

	(void)args;
	all = (!e || response(call, "user_name") != NULL) &&
	    (!s || response(call, "capital_question") != NULL) &&
	    (!r || response(call, "client_roots") != NULL);
	if (all) {
		json_object_put(reqs);
		return complete((e || s || r) ? "every declared capability "
		    "answered" : "the client declared nothing to ask with",
		    ret_result);
	}
	return ask(call, reqs, (e && add_request(reqs, "user_name",
	    "elicitation/create", ask_name)) || (s && add_request(reqs,
	    "capital_question", "sampling/createMessage", ask_capital)) ||
	    (r && add_request(reqs, "client_roots", "roots/list", "{}")), NULL,
	    ret_result);
}

/* ---- 2025-11-25: elicitation/create of the tool's own ---- */

/* Sends method with p (taken): 0 with *res (owned), else *ret is the
 * tool error that says why. */
static int
ask_client(const struct tool_call *call, const char *method,
    struct json_object *p, struct json_object **res, struct json_object **ret)
{
	int rc = -2;

	if (call->ask_client != NULL)
		rc = call->ask_client(call->cb_arg, method, p, res);
	else
		json_object_put(p);
	if (rc == 0)
		return 0;
	*ret = tool_result_error(rc == -2 ? "The client declared no "
	    "capability for %s: there is no one to ask." : "%s got no "
	    "answer.", method);
	return -1;
}

/* Elicits params (JSON text, or the object p when text is NULL) and
 * answers with prefix and what came back. */
static enum mcp_err
elicit_and_say(const struct tool_call *call, const char *text,
    struct json_object *p, const char *prefix, struct json_object **ret)
{
	struct json_object *res, *v;
	const char *action, *content;
	char out[4096];
	enum mcp_err rc;

	if (p == NULL && (p = json_tokener_parse(text)) == NULL)
		return MCP_ERR_NOMEM;
	if (ask_client(call, "elicitation/create", p, &res, ret) != 0)
		return *ret != NULL ? MCP_OK : MCP_ERR_NOMEM;
	action = str_at(res, "action", NULL);
	content = json_object_object_get_ex(res, "content", &v) ?
	    json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN) : "{}";
	(void)snprintf(out, sizeof(out), "%saction=%s, content=%s", prefix,
	    action != NULL ? action : "?", content);
	rc = complete(out, ret);
	json_object_put(res);
	return rc;
}

enum mcp_err
fixture_elicitation(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result)
{
	static const char schema[] = "{\"type\":\"object\",\"properties\":"
	    "{\"username\":{\"type\":\"string\",\"description\":"
	    "\"User's response\"},\"email\":{\"type\":\"string\","
	    "\"description\":\"User's email address\"}},\"required\":"
	    "[\"username\",\"email\"]}";
	struct json_object *msg, *p;

	if (!json_object_object_get_ex((struct json_object *)args, "message",
	    &msg))
		return MCP_ERR_INTERNAL;	/* the schema requires it */
	p = json_object_new_object();
	if ((p = jb_built(p, jb_add(p, "message", json_object_get(msg)) ||
	    jb_add(p, "requestedSchema", json_tokener_parse(schema)))) == NULL)
		return MCP_ERR_NOMEM;
	return elicit_and_say(call, NULL, p, "User response: ", ret_result);
}

enum mcp_err
fixture_elicitation_defaults(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result)
{
	static const char params[] = "{\"message\":\"Please review and "
	    "update the form fields with defaults\",\"requestedSchema\":"
	    "{\"type\":\"object\",\"properties\":{"
	    "\"name\":{\"type\":\"string\",\"default\":\"John Doe\"},"
	    "\"age\":{\"type\":\"integer\",\"default\":30},"
	    "\"score\":{\"type\":\"number\",\"default\":95.5},"
	    "\"status\":{\"type\":\"string\",\"enum\":[\"active\","
	    "\"inactive\",\"pending\"],\"default\":\"active\"},"
	    "\"verified\":{\"type\":\"boolean\",\"default\":true}}}}";

	(void)args;
	return elicit_and_say(call, params, NULL, "Elicitation completed: ",
	    ret_result);
}

enum mcp_err
fixture_elicitation_enums(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result)
{
	static const char params[] = "{\"message\":\"Please pick from each "
	    "list\",\"requestedSchema\":{\"type\":\"object\","
	    "\"properties\":{"
	    "\"untitledSingle\":{\"type\":\"string\",\"enum\":"
	    "[\"option1\",\"option2\",\"option3\"]},"
	    "\"titledSingle\":{\"type\":\"string\",\"oneOf\":["
	    "{\"const\":\"value1\",\"title\":\"First Option\"},"
	    "{\"const\":\"value2\",\"title\":\"Second Option\"},"
	    "{\"const\":\"value3\",\"title\":\"Third Option\"}]},"
	    "\"legacyEnum\":{\"type\":\"string\",\"enum\":[\"opt1\","
	    "\"opt2\",\"opt3\"],\"enumNames\":[\"Option One\","
	    "\"Option Two\",\"Option Three\"]},"
	    "\"untitledMulti\":{\"type\":\"array\",\"items\":{\"type\":"
	    "\"string\",\"enum\":[\"option1\",\"option2\","
	    "\"option3\"]}},"
	    "\"titledMulti\":{\"type\":\"array\",\"items\":{\"anyOf\":["
	    "{\"const\":\"value1\",\"title\":\"First Choice\"},"
	    "{\"const\":\"value2\",\"title\":\"Second Choice\"},"
	    "{\"const\":\"value3\",\"title\":\"Third Choice\"}]}}}}}";

	(void)args;
	return elicit_and_say(call, params, NULL, "Elicitation completed: ",
	    ret_result);
}

enum mcp_err
fixture_sampling(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result)
{
	struct json_object *prompt, *p, *m, *c, *msgs, *res;
	const char *said;
	char out[4096];
	enum mcp_err rc;

	if (!json_object_object_get_ex((struct json_object *)args, "prompt",
	    &prompt))
		return MCP_ERR_INTERNAL;	/* the schema requires it */
	c = json_object_new_object();
	c = jb_built(c, jb_add(c, "type", json_object_new_string("text")) ||
	    jb_add(c, "text", json_object_get(prompt)));
	m = json_object_new_object();
	m = jb_built(m, jb_add(m, "role", json_object_new_string("user")) ||
	    jb_add(m, "content", c));
	msgs = json_object_new_array();
	msgs = jb_built(msgs, jb_push(msgs, m));
	p = json_object_new_object();
	if ((p = jb_built(p, jb_add(p, "messages", msgs) ||
	    jb_add(p, "maxTokens", json_object_new_int(100)))) == NULL)
		return MCP_ERR_NOMEM;
	if (ask_client(call, "sampling/createMessage", p, &res,
	    ret_result) != 0)
		return *ret_result != NULL ? MCP_OK : MCP_ERR_NOMEM;
	said = str_at(res, "content", "text");
	(void)snprintf(out, sizeof(out), "LLM response: %s",
	    said != NULL ? said : "(no text)");
	rc = complete(out, ret_result);
	json_object_put(res);
	return rc;
}
