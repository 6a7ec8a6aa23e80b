/*
 * The conformance suite's fixture tools (npm @modelcontextprotocol/
 * conformance, server scenarios tools-call-*, json-schema-2020-12). They
 * exist only when the server runs with --conformance-fixtures, a test-only
 * flag: absent from --help and from a normal tools/list. They touch no
 * file, run no sandbox and hold no state.
 */
#ifndef FIXTURES_H
#define FIXTURES_H

#include "tool.h"

enum mcp_err fixture_simple_text(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);
enum mcp_err fixture_image_content(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);
enum mcp_err fixture_audio_content(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);
enum mcp_err fixture_embedded_resource(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);
enum mcp_err fixture_multiple_content_types(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);
enum mcp_err fixture_tool_with_logging(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);
enum mcp_err fixture_error_handling(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);
enum mcp_err fixture_tool_with_progress(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);
enum mcp_err fixture_logging_tool(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);
enum mcp_err fixture_missing_capability(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);
enum mcp_err fixture_streaming_elicitation(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);
enum mcp_err fixture_header_param(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);
enum mcp_err fixture_greet(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);
enum mcp_err fixture_slow_compute(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);
enum mcp_err fixture_failing_job(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);
enum mcp_err fixture_protocol_error_job(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);
enum mcp_err fixture_wait_cancel(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);
enum mcp_err fixture_json_schema_2020_12(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);

/*
 * The fixture resources of the resources-* scenarios, offered beside the
 * workspace's files with --conformance-fixtures only: test://static-text,
 * test://static-binary, test://watched-resource (subscribable) and the
 * template test://template/{id}/data.
 */
/* Appends the fixture resources ({uri, name, ...}) to arr; -1 when out
 * of memory. */
/* 2026-07-28 multi-round-trip requests (fixtures_mrtr.c) */
enum mcp_err fixture_mrtr_elicitation(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);
enum mcp_err fixture_mrtr_sampling(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);
enum mcp_err fixture_mrtr_list_roots(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);
enum mcp_err fixture_mrtr_request_state(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);
enum mcp_err fixture_mrtr_tampered_state(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);
enum mcp_err fixture_mrtr_multiple_inputs(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);
enum mcp_err fixture_mrtr_multi_round(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);
enum mcp_err fixture_mrtr_capabilities(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);

/* 2025-11-25 elicitation of the tool's own (fixtures_mrtr.c) */
enum mcp_err fixture_sampling(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);
enum mcp_err fixture_elicitation(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);
enum mcp_err fixture_elicitation_defaults(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);
enum mcp_err fixture_elicitation_enums(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);

int fixture_resources_list(struct json_object *arr);
/* Appends the fixture resource templates to arr; -1 when out of memory. */
int fixture_resource_templates(struct json_object *arr);
/*
 * 1 and *ret (a new {uri, mimeType, text|blob}) when uri is a fixture
 * resource; 0 when it is not one; -1 out of memory.
 */
int fixture_resource_read(const char *uri, struct json_object **ret);

#endif
