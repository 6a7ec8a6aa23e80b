/*
 * The closed tool table and the toolset built from it at start. This is
 * the only file that names tools. Schemas come from the embedded files;
 * each is compiled once here. A schema that fails stops an HTTP server's
 * start; a stdio server, which builds them while it answers initialize,
 * answers tools/list and tools/call with why (registry.h).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calculate.h"
#include "fixtures.h"
#include "policy.h"
#include "registry.h"
#include "repl.h"
#include "sandboxed.h"
#include "schema_files.h"
#include "validator.h"

/* Deterministic order: tools/list lists them as written here. */
static const struct tool_def tool_defs[] = {
	{
		.name = "calculate",
		.title = CALC_TOOL_TITLE,
		.description = CALC_TOOL_DESCRIPTION,
		.input_schema = "calculate.input.json",
		.output_schema = "calculate.output.json",
		.annotations = { .read_only = true, .destructive = false,
		    .idempotent = true, .open_world = false },
		.handler = tool_calculate,
		.quick = true,
	},
	{
		.name = "run_command",
		.title = RUN_COMMAND_TITLE,
		.description = RUN_COMMAND_DESCRIPTION,
		.input_schema = "run_command.input.json",
		.output_schema = "run_command.output.json",
		.annotations = { .read_only = false,
		    .destructive = true, .idempotent = false, .open_world = false },
		.handler = tool_run_command,
		.task_support = true,
		.may_ask = true,
		.tailor = tool_run_command_tailor,
	},
	{
		.name = "run_code",
		.title = RUN_CODE_TITLE,
		.description = RUN_CODE_DESCRIPTION,
		.input_schema = "run_code.input.json",
		.output_schema = "run_code.output.json",
		.annotations = { .read_only = false,
		    .destructive = true, .idempotent = false, .open_world = false },
		.handler = tool_run_code,
		.task_support = true,
		.may_ask = true,
		.tailor = tool_run_code_tailor,
	},
	{
		.name = "end_session",
		.title = END_SESSION_TITLE,
		.description = END_SESSION_DESCRIPTION,
		.input_schema = "end_session.input.json",
		.output_schema = "end_session.output.json",
		.annotations = { .read_only = false,
		    .destructive = true, .idempotent = true, .open_world = false },
		.handler = tool_end_session,
	},
	{
		.name = "list_sessions",
		.title = LIST_SESSIONS_TITLE,
		.description = LIST_SESSIONS_DESCRIPTION,
		.input_schema = "list_sessions.input.json",
		.output_schema = "list_sessions.output.json",
		.annotations = { .read_only = true,
		    .destructive = false, .idempotent = true, .open_world = false },
		.handler = tool_list_sessions,
	},
	{
		.name = "read_file",
		.title = READ_FILE_TITLE,
		.description = READ_FILE_DESCRIPTION,
		.input_schema = "read_file.input.json",
		.output_schema = "read_file.output.json",
		.annotations = { .read_only = true,
		    .destructive = false, .idempotent = true, .open_world = false },
		.handler = tool_read_file,
	},
	{
		.name = "write_file",
		.title = WRITE_FILE_TITLE,
		.description = WRITE_FILE_DESCRIPTION,
		.input_schema = "write_file.input.json",
		.output_schema = "write_file.output.json",
		.annotations = { .read_only = false,
		    .destructive = true, .idempotent = false, .open_world = false },
		.handler = tool_write_file,
	},
	{
		.name = "list_directory",
		.title = LIST_DIRECTORY_TITLE,
		.description = LIST_DIRECTORY_DESCRIPTION,
		.input_schema = "list_directory.input.json",
		.output_schema = "list_directory.output.json",
		.annotations = { .read_only = true,
		    .destructive = false, .idempotent = true, .open_world = false },
		.handler = tool_list_directory,
	},
	{
		.name = "search_files",
		.title = SEARCH_FILES_TITLE,
		.description = SEARCH_FILES_DESCRIPTION,
		.input_schema = "search_files.input.json",
		.output_schema = "search_files.output.json",
		.annotations = { .read_only = true,
		    .destructive = false, .idempotent = true, .open_world = false },
		.handler = tool_search_files,
	},
	{
		.name = "run_skill_script",
		.title = RUN_SKILL_SCRIPT_TITLE,
		.description = RUN_SKILL_SCRIPT_DESCRIPTION,
		.input_schema = "run_skill_script.input.json",
		.output_schema = "run_skill_script.output.json",
		.annotations = { .read_only = false,
		    .destructive = false, .idempotent = false, .open_world = false },
		.handler = tool_run_skill_script,
		.task_support = true,
		.tailor = tool_run_skill_script_tailor,
	},
	{
		.name = "query_sqlite",
		.title = QUERY_SQLITE_TITLE,
		.description = QUERY_SQLITE_DESCRIPTION,
		.input_schema = "query_sqlite.input.json",
		.output_schema = "query_sqlite.output.json",
		.annotations = { .read_only = true,
		    .destructive = false, .idempotent = true, .open_world = false },
		.handler = tool_query_sqlite,
		.tailor = tool_query_sqlite_tailor,
	},
	/*
	 * Conformance fixtures (tests/conformance): listed and callable only
	 * with the test-only --conformance-fixtures flag.
	 */
	{
		.name = "test_simple_text",
		.title = "Simple text (fixture)",
		.description = "Conformance fixture: returns one fixed text block.",
		.input_schema = "fixture_none.input.json",
		.annotations = { .read_only = true, .destructive = false,
		    .idempotent = true, .open_world = false },
		.handler = fixture_simple_text,
		.fixture = true,
	},
	{
		.name = "test_image_content",
		.title = "Image content (fixture)",
		.description = "Conformance fixture: returns one image block (a 1x1 PNG).",
		.input_schema = "fixture_none.input.json",
		.annotations = { .read_only = true, .destructive = false,
		    .idempotent = true, .open_world = false },
		.handler = fixture_image_content,
		.fixture = true,
	},
	{
		.name = "test_audio_content",
		.title = "Audio content (fixture)",
		.description = "Conformance fixture: returns one audio block (a short WAV).",
		.input_schema = "fixture_none.input.json",
		.annotations = { .read_only = true, .destructive = false,
		    .idempotent = true, .open_world = false },
		.handler = fixture_audio_content,
		.fixture = true,
	},
	{
		.name = "test_embedded_resource",
		.title = "Embedded resource (fixture)",
		.description = "Conformance fixture: returns one embedded text resource.",
		.input_schema = "fixture_none.input.json",
		.annotations = { .read_only = true, .destructive = false,
		    .idempotent = true, .open_world = false },
		.handler = fixture_embedded_resource,
		.fixture = true,
	},
	{
		.name = "test_multiple_content_types",
		.title = "Mixed content (fixture)",
		.description = "Conformance fixture: returns a text, an image "
		    "and an embedded resource block.",
		.input_schema = "fixture_none.input.json",
		.annotations = { .read_only = true, .destructive = false,
		    .idempotent = true, .open_world = false },
		.handler = fixture_multiple_content_types,
		.fixture = true,
	},
	{
		.name = "test_tool_with_logging",
		.title = "Logging (fixture)",
		.description = "Conformance fixture: sends three info log "
		    "notifications 50 ms apart, then returns.",
		.input_schema = "fixture_none.input.json",
		.annotations = { .read_only = true, .destructive = false,
		    .idempotent = true, .open_world = false },
		.handler = fixture_tool_with_logging,
		.fixture = true,
	},
	{
		.name = "test_error_handling",
		.title = "Error result (fixture)",
		.description = "Conformance fixture: always returns a tool error (isError).",
		.input_schema = "fixture_none.input.json",
		.annotations = { .read_only = true, .destructive = false,
		    .idempotent = true, .open_world = false },
		.handler = fixture_error_handling,
		.fixture = true,
	},
	{
		.name = "test_tool_with_progress",
		.title = "Progress (fixture)",
		.description = "Conformance fixture: reports progress 0, 50, "
		    "100 of 100, 50 ms apart, then returns.",
		.input_schema = "fixture_none.input.json",
		.annotations = { .read_only = true, .destructive = false,
		    .idempotent = true, .open_world = false },
		.handler = fixture_tool_with_progress,
		.fixture = true,
	},
	{
		.name = "test_logging_tool",
		.title = "Logging, filtered (fixture)",
		.description = "Conformance fixture: sends one info log "
		    "notification (only if the request set a log level), then "
		    "returns.",
		.input_schema = "fixture_none.input.json",
		.annotations = { .read_only = true, .destructive = false,
		    .idempotent = true, .open_world = false },
		.handler = fixture_logging_tool,
		.fixture = true,
	},
	{
		.name = "test_missing_capability",
		.title = "Needs sampling (fixture)",
		.description = "Conformance fixture: needs the client's "
		    "sampling capability; refused with -32021 when a "
		    "2026-07-28 request does not declare it.",
		.input_schema = "fixture_none.input.json",
		.annotations = { .read_only = true, .destructive = false,
		    .idempotent = true, .open_world = false },
		.handler = fixture_missing_capability,
		.fixture = true,
		.client_capability = "sampling",
	},
	{
		.name = "test_streaming_elicitation",
		.title = "Needs elicitation (fixture)",
		.description = "Conformance fixture: needs the client's "
		    "elicitation capability; this server never sends requests "
		    "to the client, so it answers with a tool error.",
		.input_schema = "fixture_none.input.json",
		.annotations = { .read_only = true, .destructive = false,
		    .idempotent = true, .open_world = false },
		.handler = fixture_streaming_elicitation,
		.fixture = true,
		.client_capability = "elicitation",
	},
	{
		.name = "test_input_required_result_elicitation",
		.title = "Asks a name (fixture)",
		.description = "Conformance fixture (2026-07-28): asks the client for a "
		    "name (input_required, elicitation), then greets.",
		.input_schema = "fixture_none.input.json",
		.annotations = { .read_only = true, .destructive = false,
		    .idempotent = true, .open_world = false },
		.handler = fixture_mrtr_elicitation,
		.fixture = true,
		.client_capability = "elicitation",
	},
	{
		.name = "test_input_required_result_sampling",
		.title = "Asks the model (fixture)",
		.description = "Conformance fixture (2026-07-28): asks the client to "
		    "sample (input_required, sampling/createMessage), then "
		    "quotes it.",
		.input_schema = "fixture_none.input.json",
		.annotations = { .read_only = true, .destructive = false,
		    .idempotent = true, .open_world = false },
		.handler = fixture_mrtr_sampling,
		.fixture = true,
		.client_capability = "sampling",
	},
	{
		.name = "test_input_required_result_list_roots",
		.title = "Asks for roots (fixture)",
		.description = "Conformance fixture (2026-07-28): asks the client for "
		    "its roots (input_required, roots/list), then lists them.",
		.input_schema = "fixture_none.input.json",
		.annotations = { .read_only = true, .destructive = false,
		    .idempotent = true, .open_world = false },
		.handler = fixture_mrtr_list_roots,
		.fixture = true,
		.client_capability = "roots",
	},
	{
		.name = "test_input_required_result_request_state",
		.title = "Keeps a state (fixture)",
		.description = "Conformance fixture (2026-07-28): asks a confirmation "
		    "with a sealed requestState, then says state-ok.",
		.input_schema = "fixture_none.input.json",
		.annotations = { .read_only = true, .destructive = false,
		    .idempotent = true, .open_world = false },
		.handler = fixture_mrtr_request_state,
		.fixture = true,
		.client_capability = "elicitation",
	},
	{
		.name = "test_input_required_result_tampered_state",
		.title = "Refuses a tampered state (fixture)",
		.description = "Conformance fixture (2026-07-28): asks a confirmation "
		    "with a sealed requestState; an altered one is a -32602.",
		.input_schema = "fixture_none.input.json",
		.annotations = { .read_only = true, .destructive = false,
		    .idempotent = true, .open_world = false },
		.handler = fixture_mrtr_tampered_state,
		.fixture = true,
		.client_capability = "elicitation",
	},
	{
		.name = "test_input_required_result_multiple_inputs",
		.title = "Asks three things (fixture)",
		.description = "Conformance fixture (2026-07-28): asks an elicitation, a "
		    "sampling and the roots at once, with a requestState.",
		.input_schema = "fixture_none.input.json",
		.annotations = { .read_only = true, .destructive = false,
		    .idempotent = true, .open_world = false },
		.handler = fixture_mrtr_multiple_inputs,
		.fixture = true,
	},
	{
		.name = "test_input_required_result_multi_round",
		.title = "Asks twice (fixture)",
		.description = "Conformance fixture (2026-07-28): asks a name, then a "
		    "color, each round with its own requestState.",
		.input_schema = "fixture_none.input.json",
		.annotations = { .read_only = true, .destructive = false,
		    .idempotent = true, .open_world = false },
		.handler = fixture_mrtr_multi_round,
		.fixture = true,
		.client_capability = "elicitation",
	},
	{
		.name = "test_input_required_result_capabilities",
		.title = "Asks what it may (fixture)",
		.description = "Conformance fixture (2026-07-28): asks only with the "
		    "capabilities the request declares.",
		.input_schema = "fixture_none.input.json",
		.annotations = { .read_only = true, .destructive = false,
		    .idempotent = true, .open_world = false },
		.handler = fixture_mrtr_capabilities,
		.fixture = true,
	},
	{
		.name = "test_sampling",
		.title = "Samples (fixture)",
		.description = "Conformance fixture (2025-11-25): asks the client's "
		    "model (sampling/createMessage), then says the answer.",
		.input_schema = "fixture_sampling.input.json",
		.annotations = { .read_only = true, .destructive = false,
		    .idempotent = true, .open_world = false },
		.handler = fixture_sampling,
		.fixture = true,
		.asks_client = true,
	},
	{
		.name = "test_elicitation",
		.title = "Elicits (fixture)",
		.description = "Conformance fixture (2025-11-25): asks the client for a "
		    "username and an email (elicitation/create), then says the answer.",
		.input_schema = "fixture_elicitation.input.json",
		.annotations = { .read_only = true, .destructive = false,
		    .idempotent = true, .open_world = false },
		.handler = fixture_elicitation,
		.fixture = true,
		.asks_client = true,
	},
	{
		.name = "test_elicitation_sep1034_defaults",
		.title = "Elicits (fixture)",
		.description = "Conformance fixture (2025-11-25): an elicitation form "
		    "whose fields have defaults (SEP-1034).",
		.input_schema = "fixture_none.input.json",
		.annotations = { .read_only = true, .destructive = false,
		    .idempotent = true, .open_world = false },
		.handler = fixture_elicitation_defaults,
		.fixture = true,
		.asks_client = true,
	},
	{
		.name = "test_elicitation_sep1330_enums",
		.title = "Elicits (fixture)",
		.description = "Conformance fixture (2025-11-25): an elicitation form "
		    "with each kind of enum (SEP-1330).",
		.input_schema = "fixture_none.input.json",
		.annotations = { .read_only = true, .destructive = false,
		    .idempotent = true, .open_world = false },
		.handler = fixture_elicitation_enums,
		.fixture = true,
		.asks_client = true,
	},
	{
		.name = "test_header_param",
		.title = "Mirrored header (fixture)",
		.description = "Conformance fixture: its \"region\" argument "
		    "is mirrored into the Mcp-Param-Region header (SEP-2243); "
		    "returns it.",
		.input_schema = "fixture_header_param.input.json",
		.annotations = { .read_only = true, .destructive = false,
		    .idempotent = true, .open_world = false },
		.handler = fixture_header_param,
		.fixture = true,
	},
	{
		.name = "test_wait_cancel",
		.title = "Wait for cancellation (fixture)",
		.description = "Test fixture: reports progress 0, then waits "
		    "until the call is cancelled (at most 60 s) and says which "
		    "came first.",
		.input_schema = "fixture_none.input.json",
		.annotations = { .read_only = true, .destructive = false,
		    .idempotent = true, .open_world = false },
		.handler = fixture_wait_cancel,
		.fixture = true,
	},
	{
		.name = "greet",
		.title = "Greet (fixture)",
		.description = "Conformance fixture of the tasks extension: "
		    "answers at once with Hello, {name}!",
		.input_schema = "fixture_greet.input.json",
		.annotations = { .read_only = true, .destructive = false,
		    .idempotent = true, .open_world = false },
		.handler = fixture_greet,
		.quick = true,
		.fixture = true,
	},
	{
		.name = "slow_compute",
		.title = "Slow compute (fixture)",
		.description = "Conformance fixture of the tasks extension: "
		    "waits `seconds` (or until cancelled), then answers; a "
		    "task for clients that declare the extension.",
		.input_schema = "fixture_slow_compute.input.json",
		.annotations = { .read_only = true, .destructive = false,
		    .idempotent = true, .open_world = false },
		.handler = fixture_slow_compute,
		.fixture = true,
		.task_support = true,
		.task_always = true,
	},
	{
		.name = "failing_job",
		.title = "Failing job (fixture)",
		.description = "Conformance fixture of the tasks extension: "
		    "after a second, a tool error; only as a task.",
		.input_schema = "fixture_none.input.json",
		.annotations = { .read_only = true, .destructive = false,
		    .idempotent = true, .open_world = false },
		.handler = fixture_failing_job,
		.fixture = true,
		.task_support = true,
		.task_always = true,
		.task_required = true,
	},
	{
		.name = "protocol_error_job",
		.title = "Protocol error job (fixture)",
		.description = "Conformance fixture of the tasks extension: "
		    "ends in a JSON-RPC internal error.",
		.input_schema = "fixture_none.input.json",
		.annotations = { .read_only = true, .destructive = false,
		    .idempotent = true, .open_world = false },
		.handler = fixture_protocol_error_job,
		.fixture = true,
		.task_support = true,
		.task_always = true,
	},
	{
		.name = "json_schema_2020_12_tool",
		.title = "JSON Schema 2020-12 (fixture)",
		.description = "Tool with JSON Schema 2020-12 features",
		.input_schema = "fixture_json_schema_2020_12.input.json",
		.annotations = { .read_only = true, .destructive = false,
		    .idempotent = true, .open_world = false },
		.handler = fixture_json_schema_2020_12,
		.fixture = true,
	},
};

#define TOOL_DEFS_N	(sizeof(tool_defs) / sizeof(tool_defs[0]))

/*
 * A toolset is built once, by toolset_new() on the caller's thread or by
 * toolset_start() on a thread of its own; every reader waits until it is
 * (struct built), and nothing changes after.
 */
struct toolset {
	const struct tool_def *defs[TOOL_DEFS_N];	/* the offered ones */
	size_t n;			/* of defs and entries; fixed */
	struct tool_entry *entries;	/* owned; n of them */
	struct json_object *list;	/* owned: the tools/list array */
	char *text;			/* owned: the array serialised */
	size_t text_len;
	const struct tool_env *env;	/* borrowed */
	struct built *built;		/* owned */
};

/* Whether the build has ended, and how: the only part that changes. */
struct built {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;
	bool threaded;		/* thread to join */
	pthread_t thread;
	enum mcp_err st;
	char err[512];		/* st != MCP_OK: the tool, file and reason */
};

/* Parses an embedded schema file into a new tree (owned by the caller). */
static struct json_object *
load_schema_file(const char *name, char *err, size_t errlen)
{
	const struct schema_file *f;
	struct json_tokener *tok;
	struct json_object *doc;

	if ((f = schema_file_find(name)) == NULL) {
		(void)snprintf(err, errlen, "schema file %s is not embedded",
		    name);
		return NULL;
	}
	/* our own schemas nest a few levels; 64 is generous */
	if ((tok = json_tokener_new_ex(64)) == NULL) {
		(void)snprintf(err, errlen, "out of memory");
		return NULL;
	}
	doc = json_tokener_parse_ex(tok, f->text, (int)f->len);
	if (json_tokener_get_error(tok) != json_tokener_success ||
	    json_tokener_get_parse_end(tok) != f->len) {
		(void)snprintf(err, errlen, "schema file %s is not valid JSON: "
		    "%s", name, json_tokener_error_desc(
		    json_tokener_get_error(tok)));
		json_object_put(doc);
		doc = NULL;
	}
	json_tokener_free(tok);
	return doc;
}

static struct json_object *
annotations_json(const struct tool_def *d)
{
	struct json_object *a = json_object_new_object();

	json_object_object_add(a, "title", json_object_new_string(d->title));
	json_object_object_add(a, "readOnlyHint",
	    json_object_new_boolean(d->annotations.read_only));
	json_object_object_add(a, "destructiveHint",
	    json_object_new_boolean(d->annotations.destructive));
	json_object_object_add(a, "idempotentHint",
	    json_object_new_boolean(d->annotations.idempotent));
	json_object_object_add(a, "openWorldHint",
	    json_object_new_boolean(d->annotations.open_world));
	return a;
}

/* 2025-11-25 execution.taskSupport: "optional" for tools that may run
 * as tasks, "forbidden" (the default, said anyway) for the rest. */
static struct json_object *
exec_json(const struct tool_def *d)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "taskSupport", json_object_new_string(
	    d->task_required ? "required" : d->task_support ? "optional" :
	    "forbidden"));
	return o;
}

/* The input schema of a call run as a task: the listed one with
 * timeout_ms up to the policy's task_timeout_ms. */
static enum mcp_err
task_schema(const struct tool_env *env, struct json_object *tj,
    struct tool_entry *e, char *why, size_t whylen)
{
	struct json_object *in, *copy = NULL, *props, *to;
	enum mcp_err st = MCP_ERR_SCHEMA;

	if (!json_object_object_get_ex(tj, "inputSchema", &in) ||
	    json_object_deep_copy(in, &copy, NULL) != 0) {
		(void)snprintf(why, whylen, "cannot copy the input schema");
		return MCP_ERR_NOMEM;
	}
	if (!json_object_object_get_ex(copy, "properties", &props) ||
	    !json_object_object_get_ex(props, "timeout_ms", &to))
		st = MCP_OK;	/* no deadline to widen: the listed schema */
	else {
		json_object_object_add(to, "maximum", json_object_new_int64(
		    env->policy->limits.task_timeout_ms));
		st = schema_compile(copy, &e->task_input, why, whylen);
	}
	json_object_put(copy);
	return st;
}

/* Builds one entry and its tools/list object (*ret_json, owned). */
static enum mcp_err
entry_build(const struct tool_env *env, const struct tool_def *d,
    struct tool_entry *e, struct json_object **ret_json, char *err,
    size_t errlen)
{
	struct json_object *tj, *in = NULL, *out = NULL, *v;
	char why[256];
	enum mcp_err st = MCP_ERR_SCHEMA;

	e->def = d;
	tj = json_object_new_object();
	json_object_object_add(tj, "name", json_object_new_string(d->name));
	json_object_object_add(tj, "title", json_object_new_string(d->title));
	json_object_object_add(tj, "description",
	    json_object_new_string(d->description));
	if ((in = load_schema_file(d->input_schema, err, errlen)) == NULL)
		goto out;
	json_object_object_add(tj, "inputSchema", in);
	if (d->output_schema != NULL && !env->content_only) {
		if ((out = load_schema_file(d->output_schema, err,
		    errlen)) == NULL)
			goto out;
		json_object_object_add(tj, "outputSchema", out);
	}
	json_object_object_add(tj, "annotations", annotations_json(d));
	if (d->tailor != NULL && (st = d->tailor(env, tj)) != MCP_OK) {
		(void)snprintf(err, errlen, "tool %s: cannot adapt its "
		    "schema to the policy", d->name);
		goto out;
	}
	st = MCP_ERR_SCHEMA;
	/* tailor may have replaced the schemas: compile what is listed */
	if (!json_object_object_get_ex(tj, "inputSchema", &v) ||
	    schema_compile(v, &e->input, why, sizeof(why)) != MCP_OK) {
		(void)snprintf(err, errlen, "tool %s: input schema %s: %s",
		    d->name, d->input_schema, why);
		goto out;
	}
	if (json_object_object_get_ex(tj, "outputSchema", &v) &&
	    schema_compile(v, &e->output, why, sizeof(why)) != MCP_OK) {
		(void)snprintf(err, errlen, "tool %s: output schema %s: %s",
		    d->name, d->output_schema, why);
		goto out;
	}
	if (d->task_support && task_schema(env, tj, e, why,
	    sizeof(why)) != MCP_OK) {
		(void)snprintf(err, errlen, "tool %s: task input schema: %s",
		    d->name, why);
		goto out;
	}
	json_object_object_add(tj, "execution", exec_json(d));
	*ret_json = tj;
	return MCP_OK;
 out:
	json_object_put(tj);
	return st;
}

/* The built toolset, once its build has ended. */
static const struct toolset *
wait_built(const struct toolset *ts)
{
	struct built *b = ts->built;

	(void)pthread_mutex_lock(&b->lock);
	while (!b->done)
		(void)pthread_cond_wait(&b->cond, &b->lock);
	(void)pthread_mutex_unlock(&b->lock);
	return ts;
}

void
toolset_free(struct toolset *ts)
{
	size_t i;

	if (ts == NULL)
		return;
	if (ts->built != NULL) {
		if (ts->built->threaded)
			(void)pthread_join(ts->built->thread, NULL);
		(void)pthread_cond_destroy(&ts->built->cond);
		(void)pthread_mutex_destroy(&ts->built->lock);
		free(ts->built);
	}
	for (i = 0; ts->entries != NULL && i < ts->n; i++) {
		schema_free(ts->entries[i].input);
		schema_free(ts->entries[i].output);
		schema_free(ts->entries[i].task_input);
	}
	free(ts->entries);
	free(ts->text);
	json_object_put(ts->list);
	free(ts);
}

/* Builds every other entry of a toolset being made: a second core does
 * half the schema parsing and compiling, which is most of a start. */
struct build_half {
	const struct toolset *ts;	/* borrowed */
	struct json_object **jsons;	/* borrowed; owned by the slots */
	size_t first;			/* 0 or 1: which half */
	enum mcp_err st;
	char err[512];
};

static void *
build_half(void *arg)
{
	struct build_half *h = arg;
	const struct toolset *ts = h->ts;
	size_t k;

	for (k = h->first; k < ts->n && h->st == MCP_OK; k += 2)
		h->st = entry_build(ts->env, ts->defs[k], &ts->entries[k],
		    &h->jsons[k], h->err, sizeof(h->err));
	return NULL;
}

/* Fewer tools than this are not worth a thread. */
#define TOOLSET_PARALLEL_MIN	4

/*
 * Builds the entries, the list and its text; then the build has ended (st
 * and err in ts->built). On failure no entry is found and there is no
 * text (toolset_error says why).
 */
static void
build(struct toolset *ts)
{
	struct json_object *jsons[TOOL_DEFS_N];
	struct built *b = ts->built;
	struct build_half half[2];
	pthread_t tid;
	bool threaded = false;
	const char *t;
	size_t i;
	enum mcp_err st = MCP_OK;

	memset(jsons, 0, sizeof(jsons));
	memset(half, 0, sizeof(half));
	for (i = 0; i < 2; i++) {
		half[i].ts = ts;
		half[i].jsons = jsons;
		half[i].first = i;
	}
	if (ts->n >= TOOLSET_PARALLEL_MIN &&
	    pthread_create(&tid, NULL, build_half, &half[1]) == 0)
		threaded = true;
	(void)build_half(&half[0]);
	if (threaded)
		(void)pthread_join(tid, NULL);
	else
		(void)build_half(&half[1]);
	for (i = 0; i < 2 && st == MCP_OK; i++)
		if ((st = half[i].st) != MCP_OK)
			(void)snprintf(b->err, sizeof(b->err), "%s",
			    half[i].err);
	/* the slots are all filled or NULL: the list or this takes them */
	for (i = 0; i < ts->n; i++) {
		if (st == MCP_OK)
			json_object_array_add(ts->list, jsons[i]);
		else
			json_object_put(jsons[i]);
	}
	/* the list is never modified after this: its text is made once */
	if (st == MCP_OK && ((t = json_object_to_json_string_length(ts->list,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE,
	    &ts->text_len)) == NULL || (ts->text = strdup(t)) == NULL)) {
		st = MCP_ERR_NOMEM;
		(void)snprintf(b->err, sizeof(b->err), "out of memory");
	}
	(void)pthread_mutex_lock(&b->lock);
	b->st = st;
	b->done = true;
	(void)pthread_cond_broadcast(&b->cond);
	(void)pthread_mutex_unlock(&b->lock);
}

static void *
build_main(void *arg)
{
	build(arg);
	return NULL;
}

/* A toolset not built yet: the offered defs chosen. */
static struct toolset *
toolset_alloc(const struct tool_env *env)
{
	struct toolset *ts;
	size_t i;

	if ((ts = calloc(1, sizeof(*ts))) == NULL)
		return NULL;
	ts->env = env;
	if ((ts->entries = calloc(TOOL_DEFS_N, sizeof(*ts->entries))) == NULL ||
	    (ts->list = json_object_new_array()) == NULL ||
	    (ts->built = calloc(1, sizeof(*ts->built))) == NULL) {
		toolset_free(ts);
		return NULL;
	}
	(void)pthread_mutex_init(&ts->built->lock, NULL);
	(void)pthread_cond_init(&ts->built->cond, NULL);
	for (i = 0; i < TOOL_DEFS_N; i++)
		if (!tool_defs[i].fixture || env->fixtures)
			ts->defs[ts->n++] = &tool_defs[i];
	return ts;
}

enum mcp_err
toolset_new(const struct tool_env *env, struct toolset **ret, char *err,
    size_t errlen)
{
	struct toolset *ts;
	enum mcp_err st;

	if ((ts = toolset_alloc(env)) == NULL) {
		(void)snprintf(err, errlen, "out of memory");
		return MCP_ERR_NOMEM;
	}
	build(ts);
	if ((st = ts->built->st) != MCP_OK) {
		(void)snprintf(err, errlen, "%s", ts->built->err);
		toolset_free(ts);
		return st;
	}
	*ret = ts;
	return MCP_OK;
}

enum mcp_err
toolset_start(const struct tool_env *env, struct toolset **ret)
{
	struct toolset *ts;

	if ((ts = toolset_alloc(env)) == NULL)
		return MCP_ERR_NOMEM;
	if (pthread_create(&ts->built->thread, NULL, build_main, ts) == 0)
		ts->built->threaded = true;
	else
		build(ts);	/* no thread: built here, all the same */
	*ret = ts;
	return MCP_OK;
}

const char *
toolset_error(const struct toolset *ts)
{
	const struct built *b = wait_built(ts)->built;

	return b->st == MCP_OK ? NULL : b->err;
}

const struct tool_entry *
toolset_lookup(const struct toolset *ts, const char *name)
{
	size_t i;

	if (wait_built(ts)->built->st != MCP_OK)
		return NULL;
	for (i = 0; i < ts->n; i++)
		if (strcmp(ts->entries[i].def->name, name) == 0)
			return &ts->entries[i];
	return NULL;
}

struct json_object *
toolset_list(const struct toolset *ts)
{
	return wait_built(ts)->list;
}

const char *
toolset_list_text(const struct toolset *ts, size_t *ret_len)
{
	ts = wait_built(ts);
	*ret_len = ts->text_len;
	return ts->text;
}

size_t
toolset_count(const struct toolset *ts)
{
	return ts->n;	/* chosen before the build: never waits */
}
