/*
 * Approvals, the protocol's half (issue 23): a tools/call that asks for
 * more than the policy gives, inside the operator's ceiling (tools/
 * approve.h decides what that is), runs only once the user said yes:
 *
 *   2025-11-25  an elicitation/create form on the call's own stream, to a
 *               client that declared elicitation; the call waits for the
 *               answer (limits.ask_wait_ms).
 *   2026-07-28  an input_required result carrying the same form and a
 *               requestState; the retried call's inputResponses answer it.
 *               The state is the client's to hold and so an attacker's to
 *               forge: it is MACed with a key of this server run and names
 *               the principal, the tool, a digest of the exact arguments,
 *               what was asked and an expiry; each is used once.
 *
 * No answer, a decline, a cancel, a timeout, a malformed answer: no. A
 * client that cannot ask gets a refusal naming the flag an operator would
 * set ahead. Grants "for this session" last the MCP session (2025-11-25)
 * or limits.grant_ttl_ms for the principal (2026-07-28); they never cross
 * owners and never cover more than was asked.
 */
#ifndef APPROVAL_H
#define APPROVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "approve.h"
#include "mcp_err.h"

struct audit;
struct inflight;
struct rpc_msg;
struct session;
struct tool_def;
struct tool_env;

/* Every grant the server holds, all owners together: each is a host or a
 * deadline one user allowed; a table, not a database (~400 KiB, touched
 * only as it fills). */
#define APPROVAL_MAX_GRANTS		1024
/* Of them, one owner's (an MCP session, a principal): more than the
 * ceiling has names, so only a ceiling of wildcards reaches it; past it a
 * "for this session" answer covers its call alone. 64 HTTP sessions
 * (MCP_HTTP_MAX_SESSIONS) each holding all theirs fill the table, so no
 * session's grants can crowd out another's. */
#define APPROVAL_GRANTS_PER_OWNER	16
/* requestStates answered and not yet expired, remembered so that none is
 * used twice: one per approval a user answered within ask_wait_ms. Past
 * it a retried call is refused until the oldest expire; one principal may
 * hold APPROVAL_USED_PER_OWNER of them, so that no token's retries can
 * shut out the others'. */
#define APPROVAL_MAX_USED		4096
#define APPROVAL_USED_PER_OWNER		64
/* Questions one call's proxy may put to the user mid-run, one at a time:
 * a program that connects in a loop to names under a wildcard of the
 * ceiling must not flood the user; after a no, it asks no more. */
#define APPROVAL_MID_ASKS		4

struct approvals;

/* NULL when no key can be drawn (getrandom) or no memory. */
struct approvals *approvals_new(void);
void approvals_free(struct approvals *ap);
/* A text sealed with the run's key, and opened (approval_state.h's
 * approval_seal, approval_unseal): the fixtures' requestStates. */
char *approvals_seal(struct approvals *ap, const char *text);
int approvals_unseal(struct approvals *ap, const char *sealed, char **text);
/* An MCP session ended: its grants go (owner: session_owner_key). */
void approvals_forget(struct approvals *ap, const char *owner);

/* What the approval stage of one tools/call needs; all borrowed. */
struct approval_call {
	struct approvals *ap;		/* NULL: this server cannot ask */
	const struct tool_env *env;
	struct audit *audit;		/* NULL: no audit log */
	struct session *sess;
	struct inflight *fl;
	/* the call's stream (dispatch.h's msg_sink) */
	int (*send)(void *arg, const char *msg, size_t len);
	void *send_arg;
	const struct rpc_msg *msg;
	bool modern;
	bool client_elicits;		/* declared elicitation (form mode) */
	bool in_task;			/* a task's run: nothing to ask on */
	const char *owner;		/* session_owner_key() */
	const struct tool_def *def;
	const struct json_object *args;	/* validated */
	uint32_t plain_max_ms;		/* the call's deadline without asking */
};

/* The stage's outcome: run (with granted), or answer instead. */
struct approval_out {
	struct tool_ask granted;	/* beyond the policy; empty: nothing */
	struct json_object *approvals;	/* owned: structuredContent.approvals,
					 * or NULL */
	struct json_object *result;	/* owned: answer with this (a refusal,
					 * input_required), or NULL: run */
	enum mcp_err err;		/* != MCP_OK: a protocol error */
	char errmsg[256];
	char reason[128];		/* the audit's, when result refuses */
};

void approval_check(const struct approval_call *c, struct approval_out *out);

/*
 * 2025-11-25: a request of ours (method, params taken) on the call's
 * stream, its response awaited up to wait_ms (c: ap, sess, fl and send
 * are used). OK with *result (owned: the response's result), or why not.
 */
enum {
	APPROVAL_REQ_OK,
	APPROVAL_REQ_ERROR,	/* the client answered with an error */
	APPROVAL_REQ_TIMEOUT,
	APPROVAL_REQ_GONE,	/* cancelled, the client or session went */
	APPROVAL_REQ_FAILED,	/* no memory */
};
int approval_client_request(const struct approval_call *c,
    const char *method, struct json_object *params, uint32_t wait_ms,
    struct json_object **result);
void approval_out_fini(struct approval_out *out);

/*
 * 2025-11-25, mid-run: the call's proxy holds a connection to host_port
 * (inside the ceiling, not allowed) while the user is asked on the call's
 * stream. true when it may go through (a grant of the owner covered it,
 * or the user said once: *session false, or for this session: stored,
 * *session true); *asked says whether a question went to the user.
 */
bool approval_ask_host(const struct approval_call *c, const char *host_port,
    bool *session, bool *asked);
/* One more entry of out->approvals (made if need be): a host the user let
 * through mid-run. 0, or -1 (no memory). */
int approval_note_host(struct approval_out *out, const char *host_port,
    bool session);

/*
 * A ran call's result with what it was granted: structuredContent's
 * approvals and one text line. 0, or -1 (no memory).
 */
int approval_decorate(struct json_object *result,
    const struct approval_out *out);

#endif
