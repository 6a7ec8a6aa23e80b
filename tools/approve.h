/*
 * Approvals, the tools' half (issue 23): what a call of run_command or
 * run_code asks beyond the policy (allow_domains, a timeout_ms above the
 * plain maximum), checked against the operator's ceiling
 * (network.ask_domains, limits.ask_timeout_ms); and, once the user said
 * yes, what the call's sandbox gets (sbcall.c: the grant's hosts added to
 * the call's own copy of the egress rules, the longer deadline). Asking,
 * and the grants that outlive a call, are the protocol's: server/approval.c.
 */
#ifndef APPROVE_H
#define APPROVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

struct egress_rules;
struct tool_def;
struct tool_env;

/* Hosts one call may ask for: the schemas' allow_domains maxItems. */
#define TOOL_MAX_ASK_DOMAINS	16
/* "host:port" as the call wrote it, lowercased: EGRESS_MAX_HOST (253)
 * and ":65535", NUL (approve.c checks it against egress.h). */
#define TOOL_ASK_HOST_LEN	261

/*
 * What a call asks for beyond the policy, or what it was granted (the
 * same shape: a grant is never wider than what was asked).
 */
struct tool_ask {
	size_t ndomains;
	char domains[TOOL_MAX_ASK_DOMAINS][TOOL_ASK_HOST_LEN];
	uint32_t timeout_ms;		/* 0: no longer deadline */
	uint32_t plain_max_ms;		/* the deadline it goes past */
	bool network;			/* the policy has none: a grant
					 * brings the proxy too */
};

enum tool_ask_rc {
	TOOL_ASK_NONE,		/* nothing beyond the policy: run */
	TOOL_ASK_NEEDED,	/* *ask holds what the user must allow */
	TOOL_ASK_REFUSED,	/* outside the ceiling: why says so */
};

/*
 * What the call of def with args (validated) asks beyond the policy;
 * plain_max_ms is the longest deadline it has without asking (the
 * policy's max_timeout_ms when 0, a task's task_timeout_ms). why gets a
 * sentence for the model on TOOL_ASK_REFUSED.
 */
enum tool_ask_rc tool_ask_assess(const struct tool_env *env,
    const struct tool_def *def, const struct json_object *args,
    uint32_t plain_max_ms, struct tool_ask *ask, char *why, size_t whylen);

/* Whether the policy lets any call ask its user for anything. */
bool tool_ask_enabled(const struct tool_env *env);

/* Whether a call of def with args may take hosts a session was granted
 * earlier (it has network, or may be given it). */
bool tool_ask_network(const struct tool_env *env, const struct tool_def *def,
    const struct json_object *args);

/* The policy's approval bounds: how long a call waits for an answer, how
 * long a 2026-07-28 grant for this session lasts. */
void tool_ask_bounds(const struct tool_env *env, uint32_t *wait_ms,
    uint32_t *grant_ttl_ms);

/*
 * The egress rules of a call granted g: a copy of the policy's with g's
 * hosts allowed (owned, free()), or NULL on allocation failure or when a
 * list is full (the call then does not run).
 */
struct egress_rules *tool_ask_rules(const struct egress_rules *base,
    const struct tool_ask *g);

#endif
