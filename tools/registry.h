/*
 * The closed tool table. A tool name from the model is only ever a key into
 * the const table in registry.c; nothing resolves a name any other way.
 * At start the toolset compiles each tool's schemas once and prebuilds the
 * tools/list array and its text; after that it is immutable and shared by
 * every thread.
 */
#ifndef REGISTRY_H
#define REGISTRY_H

#include <stddef.h>

#include <json-c/json.h>

#include "mcp_err.h"
#include "tool.h"

struct schema;

struct tool_entry {
	const struct tool_def *def;	/* static */
	struct schema *input;		/* owned by the toolset */
	struct schema *output;		/* owned by the toolset; may be NULL */
	/* def->task_support: the input schema of a call run as a task, whose
	 * timeout_ms may reach task_timeout_ms; owned; else NULL */
	struct schema *task_input;
};

struct toolset;

/* Builds the toolset for env (fixtures only if env->fixtures). On failure
 * err names the tool, the schema file and the reason. */
enum mcp_err toolset_new(const struct tool_env *env, struct toolset **ret,
    char *err, size_t errlen) __attribute__((warn_unused_result));
/*
 * The same, built on a thread of its own: returns at once (MCP_ERR_NOMEM
 * only when not even the toolset could be allocated), and every function
 * below but toolset_count waits until the build has ended. A stdio server
 * answers initialize meanwhile: the build is most of its start. env must
 * outlive the toolset; toolset_free waits for the build.
 */
enum mcp_err toolset_start(const struct tool_env *env, struct toolset **ret)
    __attribute__((warn_unused_result));
/* NULL once built; else why the build failed (tool, file, reason): then
 * no tool is found and there is no list text. */
const char *toolset_error(const struct toolset *ts);
void toolset_free(struct toolset *ts);

/* The entry called name, or NULL (unknown tool, or the build failed). */
const struct tool_entry *toolset_lookup(const struct toolset *ts,
    const char *name);

/* The prebuilt "tools" array for tools/list. Borrowed; valid for the
 * toolset's life. Callers that add it to a response take a reference. */
struct json_object *toolset_list(const struct toolset *ts);

/* The same array serialised (compact JSON), made with it. Borrowed; NULL
 * when the build failed. */
const char *toolset_list_text(const struct toolset *ts, size_t *ret_len);

/* The tools offered (fixtures or not), known before the build ends. */
size_t toolset_count(const struct toolset *ts);

#endif
