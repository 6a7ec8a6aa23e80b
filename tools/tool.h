/*
 * The interface between dispatch and one tool. A handler receives arguments
 * that already passed the tool's input schema, and returns a CallToolResult
 * object: content[] + structuredContent, with isError for tool failures.
 * Handlers know nothing of transports or JSON-RPC; only the registry names
 * tools.
 */
#ifndef TOOL_H
#define TOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "mcp_err.h"

struct policy;		/* policy/policy.h */
struct sb_ctx;		/* sandbox/sandbox.h */
struct sb_cancel;	/* sandbox/sandbox.h */
struct sb_started;	/* sandbox/sandbox.h */
struct tool_slots;	/* tools/slots.h: bounded concurrency of sandboxes */
struct repls;		/* tools/repl.h: run_code's sessions */
struct tool_ask;	/* tools/approve.h: what a call was granted */

/*
 * Sandboxes built ahead of their calls (pool.h), reached through these
 * hooks: the sandboxed-call seam (sbcall.c) takes one, dispatch asks for
 * a refill once an answer is out, and neither knows what provides them.
 * take NULL: none are kept.
 */
enum tool_shape_kind {
	TOOL_SHAPE_EXEC,	/* any program, named at the call */
	TOOL_SHAPE_PYTHON,	/* a started python3 (run_code) */
};
struct prog_binds;
struct tool_shape {
	enum tool_shape_kind kind;
	const struct prog_binds *binds;	/* the program's (the policy's), or NULL */
	const char *workspace;		/* host dir */
};
struct tool_prestart {
	/* one built for this shape (feed it with sb_finish()), or NULL;
	 * either way the shape becomes the one of its kind to keep */
	struct sb_started *(*take)(void *arg, const struct tool_shape *sh);
	/* builds the missing ones in the background; NULL-safe to skip */
	void (*refill)(void *arg);
	void *arg;
};

/*
 * The sandbox context and its pool, made on a thread of their own while
 * the server already answers (boot.c): the builder calls tool_boot_done()
 * once, with the context (NULL: it could not be built) and the pool's
 * hooks (NULL: none); a sandboxed call waits for that.
 */
struct tool_boot;
struct tool_boot *tool_boot_new(void);
void tool_boot_done(struct tool_boot *b, struct sb_ctx *sb,
    const struct tool_prestart *ps, const char *why);
/* Once the builder has ended and nothing calls any more. */
void tool_boot_free(struct tool_boot *b);

/* Server-wide, immutable once serving starts; shared by every thread. */
struct tool_env {
	const struct policy *policy;	/* borrowed, never NULL once built */
	/*
	 * Where the sandbox comes from: boot (being built, see above) or,
	 * with boot NULL, sb and prestart as they are (tests). sb NULL: the
	 * sandbox could not be built, sandboxed tools refuse; prestart all
	 * NULL: nothing is started ahead. Read with tool_env_sandbox().
	 */
	struct tool_boot *boot;		/* borrowed; internally locked */
	struct sb_ctx *sb;		/* borrowed */
	struct tool_slots *slots;	/* borrowed; shared, internally locked */
	struct tool_prestart prestart;
	/* run_code's sessions (repl.h), internally locked; NULL: none */
	struct repls *repls;
	bool fixtures;			/* conformance fixture tools offered */
	/*
	 * --content-only: no outputSchema in tools/list and no
	 * structuredContent in results, for clients that give the model
	 * JSON.stringify(structuredContent) alone when it is present and drop
	 * content[] (images included): Claude Code, Codex, opencode.
	 */
	bool content_only;
};

/* Severity of a log line a tool sends to the client (RFC 5424 order). */
enum tool_log_level {
	TOOL_LOG_DEBUG = 0,
	TOOL_LOG_INFO,
	TOOL_LOG_NOTICE,
	TOOL_LOG_WARNING,
	TOOL_LOG_ERROR,
	TOOL_LOG_CRITICAL,
	TOOL_LOG_ALERT,
	TOOL_LOG_EMERGENCY,
};

/*
 * What a handler reports for the audit log (dispatch writes the line). Never
 * contents of arguments or output: only these facts.
 */
struct tool_audit {
	bool ran;		/* a sandbox or an in-process engine ran */
	bool refused;		/* refused before running (policy, path, busy) */
	char reason[128];	/* why refused, short, no argument contents */
	int exit_code;		/* -1 if none */
	int term_signal;	/* 0 if none */
	uint64_t duration_us;
	bool timed_out;
	bool truncated;
	/* owned: the call's network activity (render_network), or NULL;
	 * dispatch writes one audit line per connection, then puts it */
	struct json_object *network;
};

/*
 * One call in flight. Everything here is borrowed from dispatch and lives
 * until the handler returns. The callbacks may be called from the handler's
 * thread only; they are never NULL (dispatch passes no-ops when the client
 * gave no progressToken or set no log level).
 */
struct tool_call {
	const struct tool_env *env;
	const char *workspace;		/* absolute host path; per server or session */
	/* whose run_code sessions the call reaches: "s:" and the MCP
	 * session's id (2025-11-25, stdio), or "p:" and the principal's
	 * digest (2026-07-28); never NULL */
	const char *owner;
	struct sb_cancel *cancel;	/* fired by notifications/cancelled */
	struct tool_audit *audit;	/* written by the handler; zeroed, exit -1 */
	/* longest deadline the call may ask: a task's (task_timeout_ms), or 0
	 * for the policy's max_timeout_ms */
	uint32_t max_timeout_ms;
	/* what the user allowed this call beyond the policy (approve.h:
	 * hosts for its proxy; its longer deadline is max_timeout_ms), or
	 * NULL */
	const struct tool_ask *granted;
	/*
	 * 2026-07-28 multi-round-trip requests (the conformance fixtures
	 * only): the retried request's inputResponses (an object) and
	 * requestState, and the client's declared capabilities, or NULL;
	 * seal() signs a state with the server run's key (owned, NULL: no
	 * memory), unseal() opens one: 0 with *text (owned), -2 when it was
	 * altered, -1 when it is not one.
	 */
	const struct json_object *input_responses;
	const char *request_state;
	const struct json_object *client_caps;
	char *(*seal)(void *arg, const char *text);
	int (*unseal)(void *arg, const char *state, char **text);
	/*
	 * 2025-11-25 (the conformance fixtures only): sends method
	 * (elicitation/create, sampling/createMessage) with params (taken) on
	 * the call's stream and waits for the answer: 0 with *result (owned),
	 * -1 (an error answer, none in time, the call cancelled), -2 (the
	 * client declared no such capability: nothing sent). NULL in
	 * 2026-07-28 and in a task.
	 */
	int (*ask_client)(void *arg, const char *method,
	    struct json_object *params, struct json_object **result);
	/*
	 * 2025-11-25, a client that can ask its user: the call's proxy asks
	 * whether host:port (inside the ceiling, not allowed) may be let
	 * through now (blocks; true: yes), and ask_abort() ends a wait (the
	 * proxy is ending). NULL: the proxy refuses such a host at once.
	 */
	bool (*ask_host)(void *arg, const char *host, uint16_t port);
	void (*ask_abort)(void *arg);
	/* notifications/progress: progress must grow; total <= 0 means unknown */
	void (*progress)(void *arg, double progress, double total,
	    const char *message);
	/* notifications/message, filtered by the client's level */
	void (*log)(void *arg, enum tool_log_level level, const char *logger,
	    const char *text);
	void *cb_arg;
};

/*
 * The most a quick tool may take for one call. A transport that runs quick
 * calls on its reading thread delays other requests by at most this.
 */
#define TOOL_QUICK_BUDGET_MS	10

struct tool_annotations {
	bool read_only;
	bool destructive;
	bool idempotent;
	bool open_world;
};

/*
 * A handler. args is borrowed and valid against the input schema. On MCP_OK,
 * *ret_result is a new CallToolResult object owned by the caller (tool
 * failures are MCP_OK with isError set). Any other return is a protocol
 * error (-32603 for MCP_ERR_INTERNAL), and *ret_result is untouched.
 */
typedef enum mcp_err (*tool_handler_fn)(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);

struct tool_def {
	const char *name;
	const char *title;
	const char *description;
	const char *input_schema;	/* embedded file, e.g. "calculate.input.json" */
	const char *output_schema;	/* embedded file, or NULL */
	struct tool_annotations annotations;
	tool_handler_fn handler;
	/*
	 * Optional: adapts this tool's tools/list entry to the policy before
	 * its input schema is compiled (the languages present in an enum, the
	 * skills listed in the description). tool_json is the entry being
	 * built, borrowed: {name, title, description, inputSchema, ...}.
	 */
	enum mcp_err (*tailor)(const struct tool_env *env,
	    struct json_object *tool_json);
	/*
	 * Pure and bounded: it never blocks and its own limits keep one call
	 * under TOOL_QUICK_BUDGET_MS, so a transport may run it on its
	 * reading thread (no thread hand-off, no cancellation handle).
	 */
	bool quick;
	bool fixture;			/* conformance fixture: test-only flag */
	/*
	 * A client capability the tool cannot work without ("sampling"), or
	 * NULL. 2026-07-28 requests that do not declare it get -32021
	 * before the handler runs. None of the real tools needs one.
	 */
	const char *client_capability;
	/* May run as an MCP task (execution.taskSupport "optional"): its
	 * timeout_ms may then reach the policy's task_timeout_ms. */
	bool task_support;
	/* Conformance fixtures of the tasks extension: a task whenever the
	 * client declares the extension (server-directed), and refused
	 * with -32021 when it does not (taskSupport "required"). */
	bool task_always;
	bool task_required;
	/* Takes allow_domains and a timeout_ms past the policy's, asked of
	 * the user (approve.h); a session's grants reach its later calls. */
	bool may_ask;
	/* Sends the client requests itself (fixtures: ask_client): its
	 * call gets a stream to send them on. */
	bool asks_client;
};

/*
 * A call's life as dispatch sees it, through the sandboxed-call seam
 * (tools/sbcall.c): the protocol layer reaches the sandbox only through
 * these. tool_call_open() readies call for def's handler: a cancellation
 * handle (call->cancel) unless def is quick, since quick tools finish
 * within their bound and have nothing to kill. MCP_OK, MCP_ERR_NOMEM, or
 * MCP_ERR_INTERNAL when the kernel gives no eventfd. tool_call_cancel() may come from any thread, any number of
 * times, between open and close; the handler sees call->cancel fired.
 * tool_call_close() once the handler has returned.
 */
enum mcp_err tool_call_open(struct tool_call *call,
    const struct tool_def *def) __attribute__((warn_unused_result));
void tool_call_cancel(struct tool_call *call);
void tool_call_close(struct tool_call *call);
/*
 * Once the answer of a call that was not quick is out: the tools restart
 * what it used up (env->prestart's sandboxes), off the answer's path.
 */
void tool_env_answered(const struct tool_env *env);
/*
 * The sandbox context and pool hooks of env; waits for its boot. why
 * (may be NULL) gets why there is no context, or "".
 */
void tool_env_sandbox(const struct tool_env *env, struct sb_ctx **sb,
    struct tool_prestart *ps, char *why, size_t whylen);

/*
 * Adds val to o under key, taking val: 0, or -1 when o or val is NULL (an
 * allocation failed: json-c would store a JSON null) or the add fails,
 * and then val is released. The check every builder of a result makes.
 */
int tool_json_add(struct json_object *o, const char *key,
    struct json_object *val) __attribute__((warn_unused_result));

/*
 * Result builders (tools/result.c). All return a new object owned by the
 * caller, or NULL on allocation failure.
 */
/* Success: structured (ownership taken, may be NULL) + one text block. */
struct json_object *tool_result_ok(struct json_object *structured,
    const char *text);
/* Tool failure: isError true, one text block with the message. */
struct json_object *tool_result_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
/* Tool failure that still carries structured data (ownership taken). */
struct json_object *tool_result_error_structured(struct json_object *structured,
    const char *text);

#endif
