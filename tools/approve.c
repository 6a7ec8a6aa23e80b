/*
 * Approvals, the tools' half (approve.h): each host of allow_domains is
 * already allowed (nothing to ask), denied or outside the ceiling (the
 * call is refused at once, naming the rule), or inside the ceiling (the
 * user is asked); a timeout_ms past the plain maximum likewise against
 * limits.ask_timeout_ms.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "approve.h"
#include "egress.h"
#include "policy.h"
#include "tool.h"
#include "toolargs.h"

_Static_assert(TOOL_ASK_HOST_LEN >= EGRESS_MAX_HOST + sizeof(":65535"),
    "TOOL_ASK_HOST_LEN holds a host and a port");

/* The ports a host without one means: the proxy's defaults. */
static const uint16_t default_ports[] = { 80, 443 };

/* Whether the rule v decided by is one of r's deny rules. */
static bool
by_deny(const struct egress_rules *r, const struct egress_verdict *v)
{
	return v->rule != NULL && v->rule >= r->deny &&
	    v->rule < r->deny + r->ndeny;
}

/*
 * One item of allow_domains, "host" or "host:port" (the schema's
 * pattern): 0 nothing to ask, 1 to ask (text into out), -1 refused.
 */
static int
assess_host(const struct policy *p, const char *item,
    char out[TOOL_ASK_HOST_LEN], char *why, size_t whylen)
{
	struct egress_pattern pat;
	struct egress_verdict v;
	const uint16_t *ports = default_ports;
	size_t i, nports = 2;
	bool all_allowed = true;
	char err[160];

	if (egress_pattern_parse(item, &pat, err, sizeof(err)) != 0 ||
	    pat.wildcard || pat.is_addr || pat.any_port) {
		(void)snprintf(why, whylen, "allow_domains item '%s' is not a "
		    "host name with an optional port%s%s.", item,
		    pat.is_addr ? " (an address cannot be asked for)" : "",
		    "");
		return -1;
	}
	if (pat.port != 0) {
		ports = &pat.port;
		nports = 1;
	}
	for (i = 0; i < nports; i++) {
		egress_decide(p->egress, pat.host, ports[i], &v);
		if (by_deny(p->egress, &v)) {
			(void)snprintf(why, whylen, "%s is refused by the "
			    "server's policy (%s); nothing can allow it.",
			    item, v.reason);
			return -1;
		}
		if (!v.allowed)
			all_allowed = false;
	}
	if (all_allowed)
		return 0;
	for (i = 0; i < nports; i++) {
		egress_decide(p->ask, pat.host, ports[i], &v);
		if (!v.allowed) {
			(void)snprintf(why, whylen, "%s%s is outside what this "
			    "server may ask its user for (%s): an operator can "
			    "allow it ahead with --allow-domain %s, or let "
			    "calls ask for it with --ask-domain %s.",
			    item, pat.port != 0 ? "" : ports[i] == 80 ?
			    " (port 80)" : " (port 443)", policy_asks(p) ?
			    "not in network.ask_domains" : "no "
			    "network.ask_domains: approvals are off",
			    item, item);
			return -1;
		}
	}
	if (pat.port != 0)
		(void)snprintf(out, TOOL_ASK_HOST_LEN, "%s:%u", pat.host,
		    pat.port);
	else
		(void)snprintf(out, TOOL_ASK_HOST_LEN, "%s", pat.host);
	return 1;
}

static enum tool_ask_rc
assess_domains(const struct policy *p, const struct json_object *list,
    struct tool_ask *ask, char *why, size_t whylen)
{
	size_t i, n = json_object_array_length(list);

	for (i = 0; i < n && i < TOOL_MAX_ASK_DOMAINS; i++) {
		const char *item = json_object_get_string(
		    json_object_array_get_idx(list, i));
		int rc = assess_host(p, item, ask->domains[ask->ndomains], why,
		    whylen);

		if (rc < 0)
			return TOOL_ASK_REFUSED;
		if (rc > 0)
			ask->ndomains++;
	}
	if (ask->ndomains > 0 && !policy_network_enabled(p)) {
		if (!p->ask_network) {
			(void)snprintf(why, whylen, "the server's policy gives "
			    "no network and its calls may not ask for any "
			    "(network.ask_network is off).");
			return TOOL_ASK_REFUSED;
		}
		ask->network = true;
	}
	return ask->ndomains > 0 ? TOOL_ASK_NEEDED : TOOL_ASK_NONE;
}

enum tool_ask_rc
tool_ask_assess(const struct tool_env *env, const struct tool_def *def,
    const struct json_object *args, uint32_t plain_max_ms,
    struct tool_ask *ask, char *why, size_t whylen)
{
	const struct policy *p = env->policy;
	const struct json_object *list = toolargs_get(args, "allow_domains");
	int64_t t = toolargs_int(args, "timeout_ms", 0);
	enum tool_ask_rc rc = TOOL_ASK_NONE;

	memset(ask, 0, sizeof(*ask));
	if (plain_max_ms == 0)
		plain_max_ms = p->limits.max_timeout_ms;
	ask->plain_max_ms = plain_max_ms;
	if (!def->may_ask)
		return TOOL_ASK_NONE;
	if (list != NULL && json_object_array_length(list) > 0) {
		if (!toolargs_bool(args, "network", true)) {
			(void)snprintf(why, whylen, "network: false and "
			    "allow_domains contradict each other: drop one.");
			return TOOL_ASK_REFUSED;
		}
		if ((rc = assess_domains(p, list, ask, why, whylen)) ==
		    TOOL_ASK_REFUSED)
			return rc;
	}
	if (t > (int64_t)plain_max_ms) {
		if (p->limits.ask_timeout_ms == 0 ||
		    t > (int64_t)p->limits.ask_timeout_ms) {
			(void)snprintf(why, whylen, "timeout_ms %lld is over the "
			    "longest deadline this call may have (%u ms)%s.",
			    (long long)t, plain_max_ms,
			    p->limits.ask_timeout_ms == 0 ? "" : " and over "
			    "what may be asked for (limits.ask_timeout_ms)");
			return TOOL_ASK_REFUSED;
		}
		ask->timeout_ms = (uint32_t)t;
		rc = TOOL_ASK_NEEDED;
	}
	return rc;
}

bool
tool_ask_enabled(const struct tool_env *env)
{
	return policy_asks(env->policy) ||
	    env->policy->limits.ask_timeout_ms > 0;
}

bool
tool_ask_network(const struct tool_env *env, const struct tool_def *def,
    const struct json_object *args)
{
	const struct policy *p = env->policy;

	return def->may_ask && toolargs_bool(args, "network", true) &&
	    (policy_network_enabled(p) || p->ask_network);
}

void
tool_ask_bounds(const struct tool_env *env, uint32_t *wait_ms,
    uint32_t *grant_ttl_ms)
{
	*wait_ms = env->policy->limits.ask_wait_ms;
	*grant_ttl_ms = env->policy->limits.grant_ttl_ms;
}

struct egress_rules *
tool_ask_rules(const struct egress_rules *base, const struct tool_ask *g)
{
	struct egress_rules *r;
	char err[160];
	size_t i;

	if ((r = malloc(sizeof(*r))) == NULL)
		return NULL;
	*r = *base;
	for (i = 0; i < g->ndomains; i++) {
		if (egress_rules_allow(r, g->domains[i], err,
		    sizeof(err)) != 0) {
			free(r);
			return NULL;
		}
	}
	return r;
}
