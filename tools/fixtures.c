/*
 * Conformance fixture tools: fixed answers in the shapes the suite's
 * scenarios check (content blocks of every type, an isError result, log
 * and progress notifications spaced in time). Test-only; registered with
 * .fixture = true so a normal server never lists them.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_build.h"
#include "fixtures.h"
#include "sandbox.h"

/*
 * Pause between the notifications of the logging and progress fixtures.
 * The scenarios ask for "~50ms" so that a client sees them arrive one by
 * one on the stream, not in one burst.
 */
#define FIXTURE_STEP_MS		50

/*
 * Longest test_wait_cancel waits for its cancellation: a test that forgets
 * to cancel gets an answer instead of a call held forever.
 */
#define FIXTURE_WAIT_MAX_MS	60000

/* A 1x1 red PNG, made for this file. */
static const char fixture_png[] =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ"
    "/pLvAAAAAElFTkSuQmCC";

/* A WAV file: 8 kHz, mono, 8 bit, 16 samples of silence. */
static const char fixture_wav[] =
    "UklGRjQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YRAAAACAgICAgICAgICA"
    "gICAgICA";

/* Waits FIXTURE_STEP_MS, or less if the call is cancelled meanwhile.
 * Returns whether it was cancelled. */
static bool
step_wait(const struct tool_call *call)
{
	struct pollfd pfd;

	if (call->cancel == NULL) {
		(void)poll(NULL, 0, FIXTURE_STEP_MS);
		return false;
	}
	pfd.fd = call->cancel->efd;
	pfd.events = POLLIN;
	(void)poll(&pfd, 1, FIXTURE_STEP_MS);
	return sb_cancel_fired(call->cancel);
}

/* {"type":"text","text":...}, new reference. */
static struct json_object *
text_block(const char *text)
{
	struct json_object *b = json_object_new_object();

	return jb_built(b, jb_add(b, "type", json_object_new_string("text")) ||
	    jb_add(b, "text", json_object_new_string(text)));
}

/* An image or audio block with base64 data, new reference. */
static struct json_object *
media_block(const char *type, const char *data, const char *mime)
{
	struct json_object *b = json_object_new_object();

	return jb_built(b, jb_add(b, "type", json_object_new_string(type)) ||
	    jb_add(b, "data", json_object_new_string(data)) ||
	    jb_add(b, "mimeType", json_object_new_string(mime)));
}

/* An embedded text resource block, new reference. */
static struct json_object *
resource_block(const char *uri, const char *mime, const char *text)
{
	struct json_object *b = json_object_new_object();
	struct json_object *r = json_object_new_object();

	if ((r = jb_built(r, jb_add(r, "uri", json_object_new_string(uri)) ||
	    jb_add(r, "mimeType", json_object_new_string(mime)) ||
	    jb_add(r, "text", json_object_new_string(text)))) == NULL) {
		json_object_put(b);
		return NULL;
	}
	return jb_built(b, jb_add(b, "type", json_object_new_string("resource")) ||
	    jb_add(b, "resource", r));
}

/* {"content":[blocks...]}; takes ownership of the n blocks (NULL ones
 * failed to be built). */
static enum mcp_err
result_of(struct json_object **blocks, size_t n,
    struct json_object **ret_result)
{
	struct json_object *res = json_object_new_object();
	struct json_object *content = json_object_new_array();
	int failed = res == NULL || content == NULL;
	size_t i;

	for (i = 0; i < n; i++) {
		if (!failed && blocks[i] != NULL &&
		    json_object_array_add(content, blocks[i]) == 0)
			continue;
		failed = 1;
		json_object_put(blocks[i]);
	}
	if (failed || jb_add(res, "content", content) != 0) {
		if (!failed)
			content = NULL;	/* jb_add() released it */
		json_object_put(content);
		json_object_put(res);
		return MCP_ERR_NOMEM;
	}
	*ret_result = res;
	return MCP_OK;
}

enum mcp_err
fixture_simple_text(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result)
{
	struct json_object *b[] = {
		text_block("This is a simple text response for testing."),
	};

	return result_of(b, 1, ret_result);
}

enum mcp_err
fixture_image_content(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result)
{
	struct json_object *b[] = {
		media_block("image", fixture_png, "image/png"),
	};

	return result_of(b, 1, ret_result);
}

enum mcp_err
fixture_audio_content(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result)
{
	struct json_object *b[] = {
		media_block("audio", fixture_wav, "audio/wav"),
	};

	return result_of(b, 1, ret_result);
}

enum mcp_err
fixture_embedded_resource(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result)
{
	struct json_object *b[] = {
		resource_block("test://embedded-resource", "text/plain",
		    "This is an embedded resource content."),
	};

	return result_of(b, 1, ret_result);
}

enum mcp_err
fixture_multiple_content_types(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result)
{
	struct json_object *b[] = {
		text_block("Multiple content types test:"),
		media_block("image", fixture_png, "image/png"),
		resource_block("test://mixed-content-resource",
		    "application/json", "{\"test\":\"data\",\"value\":123}"),
	};

	return result_of(b, 3, ret_result);
}

enum mcp_err
fixture_tool_with_logging(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result)
{
	static const char *const lines[] = {
		"Tool execution started",
		"Tool processing data",
		"Tool execution completed",
	};
	struct json_object *b[1];
	size_t i;

	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		if (i > 0 && step_wait(call))
			break;
		call->log(call->cb_arg, TOOL_LOG_INFO, "conformance", lines[i]);
	}
	b[0] = text_block("Tool with logging executed successfully");
	return result_of(b, 1, ret_result);
}

enum mcp_err
fixture_error_handling(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result)
{
	struct json_object *res;

	res = tool_result_error("This tool intentionally returns an error "
	    "for testing");
	if (res == NULL)
		return MCP_ERR_NOMEM;
	*ret_result = res;
	return MCP_OK;
}

enum mcp_err
fixture_tool_with_progress(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result)
{
	static const double steps[] = { 0, 50, 100 };
	struct json_object *b[1];
	size_t i;

	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		if (i > 0 && step_wait(call))
			break;
		call->progress(call->cb_arg, steps[i], 100, NULL);
	}
	b[0] = text_block("Tool with progress executed successfully");
	return result_of(b, 1, ret_result);
}

enum mcp_err
fixture_logging_tool(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result)
{
	struct json_object *b[1];

	/* dispatch drops it unless the request asked for logs */
	call->log(call->cb_arg, TOOL_LOG_INFO, "conformance",
	    "test_logging_tool ran");
	b[0] = text_block("Logging tool executed");
	return result_of(b, 1, ret_result);
}

enum mcp_err
fixture_missing_capability(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result)
{
	struct json_object *b[1];

	/* reached only when the client declared sampling (or in the
	 * handshake era, which has no per-request capabilities) */
	b[0] = text_block("The client declared sampling; this fixture does "
	    "not need to use it.");
	return result_of(b, 1, ret_result);
}

enum mcp_err
fixture_streaming_elicitation(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result)
{
	struct json_object *res;

	res = tool_result_error("This server never sends requests to the "
	    "client: elicitation is not available");
	if (res == NULL)
		return MCP_ERR_NOMEM;
	*ret_result = res;
	return MCP_OK;
}

enum mcp_err
fixture_header_param(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result)
{
	struct json_object *b[1], *region;
	char text[320];

	/* the schema requires it: a string of at most 256 characters */
	if (!json_object_object_get_ex(args, "region", &region))
		return MCP_ERR_INTERNAL;
	(void)snprintf(text, sizeof(text), "region: %s",
	    json_object_get_string(region));
	b[0] = text_block(text);
	return result_of(b, 1, ret_result);
}

enum mcp_err
fixture_greet(const struct tool_call *call, const struct json_object *args,
    struct json_object **ret_result)
{
	struct json_object *b[1], *name;
	char text[300];

	(void)call;
	if (!json_object_object_get_ex(args, "name", &name))
		return MCP_ERR_INTERNAL;	/* the schema requires it */
	(void)snprintf(text, sizeof(text), "Hello, %s!",
	    json_object_get_string(name));
	b[0] = text_block(text);
	return result_of(b, 1, ret_result);
}

/* Waits ms or until the call is cancelled; whether it was. */
static bool
wait_or_cancel(const struct tool_call *call, int ms)
{
	struct pollfd pfd;

	if (call->cancel == NULL)
		return false;
	pfd.fd = call->cancel->efd;
	pfd.events = POLLIN;
	(void)poll(&pfd, 1, ms);
	return sb_cancel_fired(call->cancel);
}

enum mcp_err
fixture_slow_compute(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result)
{
	struct json_object *b[1], *v;
	double s = 0;
	char text[320];

	if (json_object_object_get_ex(args, "seconds", &v))
		s = json_object_get_double(v);
	if (wait_or_cancel(call, (int)(s * 1000)))
		b[0] = text_block("cancelled");
	else {
		(void)snprintf(text, sizeof(text), "computed %s after %g s",
		    json_object_object_get_ex(args, "label", &v) ?
		    json_object_get_string(v) : "", s);
		b[0] = text_block(text);
	}
	return result_of(b, 1, ret_result);
}

enum mcp_err
fixture_failing_job(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result)
{
	struct json_object *res;

	(void)args;
	(void)wait_or_cancel(call, 1000);
	if ((res = tool_result_error("failing_job failed, as it always "
	    "does")) == NULL)
		return MCP_ERR_NOMEM;
	*ret_result = res;
	return MCP_OK;
}

enum mcp_err
fixture_protocol_error_job(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result)
{
	(void)call;
	(void)args;
	(void)ret_result;
	return MCP_ERR_INTERNAL;
}

enum mcp_err
fixture_wait_cancel(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result)
{
	struct json_object *b[1];
	struct pollfd pfd;
	bool cancelled = false;

	/* progress first, so an HTTP client knows the call is running */
	call->progress(call->cb_arg, 0, 0, "waiting for cancellation");
	if (call->cancel != NULL) {
		pfd.fd = call->cancel->efd;
		pfd.events = POLLIN;
		(void)poll(&pfd, 1, FIXTURE_WAIT_MAX_MS);
		cancelled = sb_cancel_fired(call->cancel);
	}
	b[0] = text_block(cancelled ? "cancelled" : "not cancelled in time");
	return result_of(b, 1, ret_result);
}

enum mcp_err
fixture_json_schema_2020_12(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result)
{
	struct json_object *b[1];
	char text[512];

	/* args passed the schema: at most "name" and "address" */
	(void)snprintf(text, sizeof(text), "Received arguments: %s",
	    json_object_to_json_string_ext((struct json_object *)args,
	    JSON_C_TO_STRING_PLAIN));
	b[0] = text_block(text);
	return result_of(b, 1, ret_result);
}

/* ---- resources ---- */

#define FIXTURE_TEXT_URI	"test://static-text"
#define FIXTURE_BINARY_URI	"test://static-binary"
#define FIXTURE_WATCHED_URI	"test://watched-resource"
#define FIXTURE_TEMPLATE	"test://template/{id}/data"
#define FIXTURE_TEMPLATE_HEAD	"test://template/"
#define FIXTURE_TEMPLATE_TAIL	"/data"
/* Bytes of the {id} a template read accepts (the scenario sends "123"). */
#define FIXTURE_ID_MAX		64

static const char fixture_text[] =
    "This is the content of the static text resource.";
static const char fixture_watched[] = "The watched resource.";

static struct json_object *
resource(const char *uri, const char *name, const char *desc,
    const char *type)
{
	struct json_object *o = json_object_new_object();

	return jb_built(o, jb_add(o, "uri", json_object_new_string(uri)) ||
	    jb_add(o, "name", json_object_new_string(name)) ||
	    jb_add(o, "description", json_object_new_string(desc)) ||
	    jb_add(o, "mimeType", json_object_new_string(type)));
}

int
fixture_resources_list(struct json_object *arr)
{
	return jb_push(arr, resource(FIXTURE_TEXT_URI, "static-text",
	    "Conformance fixture: a fixed text resource.", "text/plain")) ||
	    jb_push(arr, resource(FIXTURE_BINARY_URI, "static-binary",
	    "Conformance fixture: a fixed PNG.", "image/png")) ||
	    jb_push(arr, resource(FIXTURE_WATCHED_URI, "watched-resource",
	    "Conformance fixture: a subscribable resource.", "text/plain")) ?
	    -1 : 0;
}

int
fixture_resource_templates(struct json_object *arr)
{
	struct json_object *o = json_object_new_object();

	return jb_push(arr, jb_built(o, jb_add(o, "uriTemplate",
	    json_object_new_string(FIXTURE_TEMPLATE)) ||
	    jb_add(o, "name", json_object_new_string("template")) ||
	    jb_add(o, "description", json_object_new_string(
	    "Conformance fixture: JSON data for any id.")) ||
	    jb_add(o, "mimeType", json_object_new_string("application/json"))));
}

static struct json_object *
contents(const char *uri, const char *type, const char *key, const char *v)
{
	struct json_object *o = json_object_new_object();

	if (v == NULL)
		return jb_built(o, 1);
	return jb_built(o, jb_add(o, "uri", json_object_new_string(uri)) ||
	    jb_add(o, "mimeType", json_object_new_string(type)) ||
	    jb_add(o, key, json_object_new_string(v)));
}

int
fixture_resource_read(const char *uri, struct json_object **ret)
{
	size_t hl = sizeof(FIXTURE_TEMPLATE_HEAD) - 1, tl, n, i;
	char id[FIXTURE_ID_MAX + 1], text[FIXTURE_ID_MAX + 16];
	struct json_object *d;

	if (strcmp(uri, FIXTURE_TEXT_URI) == 0)
		*ret = contents(uri, "text/plain", "text", fixture_text);
	else if (strcmp(uri, FIXTURE_BINARY_URI) == 0)
		*ret = contents(uri, "image/png", "blob", fixture_png);
	else if (strcmp(uri, FIXTURE_WATCHED_URI) == 0)
		*ret = contents(uri, "text/plain", "text", fixture_watched);
	else {
		n = strlen(uri);
		tl = sizeof(FIXTURE_TEMPLATE_TAIL) - 1;
		if (n <= hl + tl || n - hl - tl > FIXTURE_ID_MAX ||
		    strncmp(uri, FIXTURE_TEMPLATE_HEAD, hl) != 0 ||
		    strcmp(uri + n - tl, FIXTURE_TEMPLATE_TAIL) != 0)
			return 0;
		memcpy(id, uri + hl, n - hl - tl);
		id[n - hl - tl] = '\0';
		for (i = 0; id[i] != '\0'; i++)
			if (strchr("/?#%", id[i]) != NULL)
				return 0;	/* one segment, no escapes */
		(void)snprintf(text, sizeof(text), "Data for ID: %s", id);
		d = json_object_new_object();
		d = jb_built(d, jb_add(d, "id", json_object_new_string(id)) ||
		    jb_add(d, "templateTest", json_object_new_boolean(1)) ||
		    jb_add(d, "data", json_object_new_string(text)));
		*ret = d == NULL ? NULL : contents(uri, "application/json",
		    "text", json_object_to_json_string_ext(d,
		    JSON_C_TO_STRING_PLAIN));
		json_object_put(d);
	}
	return *ret != NULL ? 1 : -1;
}
