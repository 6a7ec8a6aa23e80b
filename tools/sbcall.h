/*
 * One sandboxed run for a tool handler, from its struct sbcall to the
 * call's finished result: environment (policy defaults, then the request's
 * checked overrides), limits from the policy, read-only binds of the
 * toolchain, a sandbox slot (bounded wait), progress and cancellation, then
 * the result rendered with the files the run made. Beside it, what the
 * sandboxed tools share for reading their common arguments and tailoring
 * their tools/list entries.
 */
#ifndef SBCALL_H
#define SBCALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "mcp_err.h"
#include "sandbox.h"
#include "tool.h"

struct policy;
struct prog_binds;
struct repl_call;
struct sbcall;
struct tool_audit;

#define SBCALL_MAX_ENV		32	/* request overrides per call */
/* a program's own binds and the policy's allowed paths (policy_binds.h): the
 * sandbox's SB_MAX_BINDS */
#define SBCALL_MAX_BINDS	16

/*
 * A tool's own CallToolResult of a program that ran (sb_run returned 0),
 * filling the audit facts: NULL on allocation failure. *files_always
 * (true when called) says whether the files report adds files and
 * files_omitted even when none changed (sbcall_run).
 */
typedef struct json_object *(*sbcall_render_fn)(const struct sb_result *res,
    const struct sbcall *c, struct tool_audit *audit, bool *files_always);

struct sbcall {
	const char *program;		/* absolute, as inside */
	const char *const *argv;	/* NULL-terminated */
	const struct json_object *env;	/* borrowed: {NAME: VALUE}, or NULL */
	const void *stdin_data;
	size_t stdin_len;
	uint32_t timeout_ms;		/* 0: the policy's default */
	const char *workspace_host;	/* NULL: the call's workspace */
	const char *workspace_path;	/* inside; NULL: /workspace */
	bool workspace_writable;
	bool empty_env;			/* no variables at all (skills) */
	/* what the program needs bound (policy_binds.c), or NULL; the policy's
	 * allow_read / allow_read_write paths are added to every run */
	const struct prog_binds *prog_binds;
	const char *what;		/* "the command", for messages */
	/*
	 * The tool may use the policy's network (run_command, run_code);
	 * network_arg is the call's "network" argument: -1 absent, 0 false
	 * (this call goes without), 1 true (refused where the policy has
	 * none: a call narrows the policy, never widens it).
	 */
	bool network;
	int network_arg;
	/*
	 * Set only by run_code for python3: the same call as stdin for a
	 * python started ahead (warm.h), when one is waiting; else the run
	 * is the cold one described above.
	 */
	const void *warm_stdin;
	size_t warm_stdin_len;
	/* the result of a run; NULL: render_run_result's, files always */
	sbcall_render_fn render;
	/*
	 * Set only by run_code with a session (repl.h): the run is one call
	 * of that session's interpreter, which program and argv would start
	 * if it is new (they are then ignored; the policy's interpreter and
	 * the session's driver are used).
	 */
	struct repl_call *session;
};

/*
 * Runs c and returns the call's finished result in *ret_result (owned by
 * the caller; the audit facts are filled): a refusal (busy, cancelled,
 * bad environment, sandbox not built, the sandbox could not start it), or
 * what the program did, rendered by c->render, with the files it created
 * or changed in the directory it got (workspace_files.h: walked once a
 * slot is held, right before the run, and again after it; links for the
 * workspace, none for a directory of c's own, a skill's copy gone after
 * the call). MCP_OK, or an internal error and no result.
 */
enum mcp_err sbcall_run(const struct tool_call *call, const struct sbcall *c,
    struct json_object **ret_result) __attribute__((warn_unused_result));

/*
 * The sandbox request c describes (limits from the policy; workspace: the
 * call's, unless c names one), its binds in binds; everything borrowed.
 */
void sbcall_request(const struct policy *p, const struct sbcall *c,
    const char *workspace, const char *const *envp,
    struct sb_bind binds[SBCALL_MAX_BINDS], struct sb_request *req);

/* The policy's environment as an owned envp (NULL: no memory). */
char **sbcall_env(const struct policy *p);
void sbcall_env_free(char **envp);

/*
 * A NULL-terminated argv: the nhead strings of head, then the strings of
 * the JSON array extra (borrowed; may be NULL). The array is owned (free
 * it), the strings are borrowed. NULL on allocation failure.
 */
const char **sbcall_argv(const char *const *head, size_t nhead,
    const struct json_object *extra);

/*
 * tools/list helpers for tailor callbacks: the schema property prop of
 * tool (borrowed), and a description replaced by text (copied).
 */
struct json_object *sbcall_schema_prop(struct json_object *tool,
    const char *prop);
enum mcp_err sbcall_set_description(struct json_object *obj,
    const char *text);
/* Sets the maximum of tool's "timeout_ms" to the policy's longest deadline. */
enum mcp_err sbcall_tailor_timeout(struct json_object *tool,
    const struct policy *p);

/*
 * Where the policy allows domains: the "no network" of tool's description
 * becomes what the sandbox has instead (the proxy, the domains).
 */
enum mcp_err sbcall_tailor_network(struct json_object *tool,
    const struct policy *p);

/* The deadline a call gets: requested (0: default), clamped to the policy. */
uint32_t sbcall_timeout(const struct tool_call *call, int64_t requested_ms);

/* The arguments every sandboxed tool takes the same way into c: "stdin"
 * (bytes, borrowed from args), "timeout_ms" (bounded by the policy) and
 * "network" (network_arg). */
void sbcall_common_args(const struct tool_call *call,
    const struct json_object *args, struct sbcall *c);

/*
 * A handler's last step: st if it failed, else the result r (NULL means
 * it could not be built: out of memory) into *ret_result.
 */
enum mcp_err sbcall_return(enum mcp_err st, struct json_object *r,
    struct json_object **ret_result);

#endif
