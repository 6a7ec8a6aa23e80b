/*
 * Sessions of run_code (issue 21): an interpreter whose state lasts from
 * one call to the next, in a sandbox of its own that keeps every bound of
 * a run (cgroup, seccomp, Landlock, namespaces, uid) for its whole life.
 * A session is reached by (owner, name): its owner is the MCP session
 * (2025-11-25) or the principal (2026-07-28) that started it, and no other
 * owner can reach it. Its calls run one after the other in arrival order;
 * each call's output is framed by a boundary the server draws at random
 * for that call, so that nothing of one call is taken for another's.
 */
#ifndef REPL_H
#define REPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "mcp_err.h"
#include "tool.h"

struct policy;
struct repl;
struct repl_waiter;
struct repls;
struct sb_request;
struct sb_result;

/* A session's name: what run_code's schema allows (1-64 of A-Za-z0-9_.-). */
#define REPL_NAME_MAX		64
/*
 * After a call's deadline or cancel interrupts it (SIGINT: python's
 * KeyboardInterrupt, node's interrupted script, sh's trap), how long the
 * interpreter has to come back before the session is killed.
 */
#define REPL_GRACE_MS		2000
/* Sessions a server may hold at all (max_sessions' ceiling). */
#define REPL_MAX		64
/*
 * A session's RLIMIT_CPU: the rlimit counts a process's whole life, so a
 * session's interpreter gets its age's worth (the cgroup's CPU quota, where
 * there is one, bounds its rate). Sandboxes built ahead for any program
 * get it too, so that a session may take one; a plain call's launch lowers
 * it to the call's own.
 */
#define REPL_CPU_S(p)	((p)->limits.session_max_age_ms / 1000 + 1)
/* Ended sessions remembered per server, to tell a later call why. */
#define REPL_ENDED_KEPT		256

/* One run_code call on a session, from run_code through sbcall.c. */
struct repl_call {
	const char *name;
	int lang;			/* POLICY_LANG_* */
	bool restart;			/* start it afresh */
	const char *code;
	/* filled by repl_enter() and repl_turn() */
	struct repl *r;			/* held until repl_leave() */
	struct repl_waiter *w;		/* its place in r's queue */
	bool started;			/* this call started it */
	uint64_t age_ms;		/* at the call's end */
	unsigned calls;			/* calls it has run, this one included */
	uint64_t memory_bytes;		/* its cgroup's now; 0: unknown */
	uint32_t idle_ms;		/* it ends if idle this long */
	char ended[192];		/* why it ended during the call, or "" */
};

/* NULL on allocation failure. */
struct repls *repls_new(const struct policy *p);
/* Ends every session ("the server stopped"); NULL-safe. */
void repls_free(struct repls *t);
/*
 * Ends every session of owner (NULL: of everyone), remembered with why;
 * one a call holds goes when that call leaves. NULL-safe.
 */
void repls_end_owner(struct repls *t, const char *owner, const char *why);

/*
 * Waits for the call's turn on its session (made if new, or afresh with
 * restart): NULL, and q->r held; or a refusal (isError result, the audit
 * facts filled; NULL q->r). *nomem on allocation failure.
 */
struct json_object *repl_enter(const struct tool_call *call,
    struct repl_call *q, bool *nomem);
/*
 * The call's code in its session, the interpreter started with req's
 * sandbox (binds, workspace, limits) when new, in one built ahead of that
 * shape (ps, binds) when there is one. With network, ec (the call's, which
 * the caller ends and renders after) serves the session's proxy socket
 * for this call only: a connection lasts as long as the call that opened
 * it, and one opened between calls waits for the next. As sb_run(), 0 when it
 * ran (res: its output; exit_code 0 done, 1 an exception or an error
 * status, 130 interrupted; how the session ended if it did) or < 0 when
 * the sandbox could not start it (res says why).
 */
struct prog_binds;
struct egress_call;
int repl_turn(struct repl_call *q, struct sb_ctx *sb,
    const struct tool_prestart *ps, const struct prog_binds *binds,
    const struct sb_request *req, struct egress_call *ec,
    struct sb_cancel *cancel, struct sb_result *res);
/*
 * A session has network (the policy's, through its proxy) when the call
 * that started it had; each later call must have the same: NULL, or why
 * not (static text). After repl_enter().
 */
const char *repl_net_refusal(const struct repl_call *q, bool net);
void repl_leave(struct repl_call *q);
/* structuredContent.session and a line of text about it, into r. */
enum mcp_err repl_add_result(const struct repl_call *q,
    struct json_object *r);

/*
 * Open sessions as resources, session://NAME (application/json: name,
 * language, age, calls, memory): owner's appended to arr (0, or -ENOMEM);
 * one read into a new contents entry (*ret): 0, -ENOENT (not owner's, or
 * not open), -EINVAL (not a session uri), -ENOMEM.
 */
#define REPL_URI_PREFIX		"session://"
int repl_resources_list(struct repls *t, const char *owner,
    struct json_object *arr);
int repl_resource_read(struct repls *t, const char *owner, const char *uri,
    struct json_object **ret);

/* The tools end_session and list_sessions (sandboxed.h's pattern). */
enum mcp_err tool_end_session(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);
enum mcp_err tool_list_sessions(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result);

#endif
