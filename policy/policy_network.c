/*
 * The policy's "network" key and its flags (issue 13): which domains the
 * sandboxes' proxy lets through, which it refuses whatever the allow list
 * says, the operator's --resolve pins and the per-call bounds. Kept apart
 * from policy.c so that the JSON and flag handling of the egress rules is
 * one small file; the rules themselves, and their checks, are egress/.
 * The proxy's environment and the tools' texts are tools/sbcall.c's.
 *
 *   "network": false                   no network (the default)
 *   "network": { "allowed_domains": ["pypi.org", "*.pythonhosted.org"],
 *                "denied_domains": ["evil.pypi.org"],
 *                "resolve": ["pypi.internal:443:10.0.0.5"],
 *                "tunnels": ["22:ssh"],   (CONNECT carries TLS elsewhere)
 *                "max_connections": 64, "max_bytes": 1073741824,
 *                "idle_timeout_ms": 30000,
 *                "ask_domains": ["files.pythonhosted.org"],
 *                "ask_network": false }
 *
 * ask_domains is the approvals ceiling (server/approval.c): what a call
 * may ask the user to allow for it (allow_domains), never more. It widens
 * a policy that has network; ask_network lets it widen one that has none.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "egress.h"
#include "policy.h"
#include "policy_network.h"

/* A byte cap below a TLS handshake would refuse everything: 4 KiB. */
#define POLICY_MIN_EGRESS_BYTES		4096
/* At most 1 TiB per call: a bound, not a quota system. */
#define POLICY_MAX_EGRESS_BYTES		(1ull << 40)
/* Shortest idle bound: a loopback round trip is well under 10 ms. */
#define POLICY_MIN_EGRESS_IDLE_MS	10

struct bound_def {
	const char *key;	/* network.<key> */
	const char *flag;	/* --<flag> */
	uint64_t min, max;
};

static const struct bound_def bounds[] = {
	{ "max_connections", "egress-max-connections", 1,
	    EGRESS_MAX_CONNECTIONS },
	{ "max_bytes", "egress-max-bytes", POLICY_MIN_EGRESS_BYTES,
	    POLICY_MAX_EGRESS_BYTES },
	{ "idle_timeout_ms", "egress-idle-ms", POLICY_MIN_EGRESS_IDLE_MS,
	    EGRESS_MAX_IDLE_MS },
};
#define NBOUNDS (sizeof(bounds) / sizeof(bounds[0]))

static void
bound_set(struct egress_rules *r, size_t i, uint64_t v)
{
	switch (i) {
	case 0:
		r->max_connections = (uint32_t)v;
		break;
	case 1:
		r->max_bytes = v;
		break;
	default:
		r->idle_timeout_ms = (uint32_t)v;
		break;
	}
}

static uint64_t
bound_get(const struct egress_rules *r, size_t i)
{
	return i == 0 ? r->max_connections : i == 1 ? r->max_bytes :
	    r->idle_timeout_ms;
}

static int
parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *ret)
{
	char *end;
	unsigned long long v;

	if (s[0] < '0' || s[0] > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -1;
	*ret = v;
	return 0;
}

struct egress_rules *
policy_network_new(void)
{
	struct egress_rules *r = malloc(sizeof(*r));

	if (r != NULL)
		egress_rules_init(r);
	return r;
}

/*
 * One pattern of allowed_domains, or of ask_domains: a call asks for names
 * and ports, so the ceiling holds names (a wildcard among them), never
 * addresses: an approval "to 10.0.0.0/8" is one no user can weigh.
 */
static int
cfg_ask_pattern(struct egress_rules *r, const char *key, const char *s,
    char *err, size_t errlen)
{
	struct egress_pattern pat;

	if (strcmp(key, "ask_domains") == 0) {
		if (egress_pattern_parse(s, &pat, err, errlen) != 0)
			return -1;
		if (pat.is_addr) {
			(void)snprintf(err, errlen, "the approvals ceiling "
			    "names hosts, not addresses");
			return -1;
		}
	}
	return egress_rules_allow(r, s, err, errlen);
}

/* One list of strings into the rules (replacing that list). */
static int
cfg_list(struct egress_rules *r, const char *key, struct json_object *v,
    char *msg, size_t msglen)
{
	char err[160];
	size_t i, n;

	if (!json_object_is_type(v, json_type_array)) {
		(void)snprintf(msg, msglen, "must be an array of strings");
		return -1;
	}
	if (strcmp(key, "allowed_domains") == 0 ||
	    strcmp(key, "ask_domains") == 0)
		r->nallow = 0;
	else if (strcmp(key, "denied_domains") == 0)
		r->ndeny = 0;
	else if (strcmp(key, "tunnels") == 0)
		r->ntunnels = 0;
	else
		r->npins = 0;
	n = json_object_array_length(v);
	for (i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(v, i);
		const char *s;
		int rc;

		if (!json_object_is_type(e, json_type_string)) {
			(void)snprintf(msg, msglen, "item %zu: must be a "
			    "string", i);
			return -1;
		}
		s = json_object_get_string(e);
		if (key[0] == 't')
			rc = egress_rules_tunnel(r, s, err, sizeof(err));
		else if (key[0] == 'a')
			rc = cfg_ask_pattern(r, key, s, err, sizeof(err));
		else if (key[0] == 'd')
			rc = egress_rules_deny(r, s, err, sizeof(err));
		else
			rc = egress_rules_pin(r, s, err, sizeof(err));
		if (rc != 0) {
			(void)snprintf(msg, msglen, "'%.*s': %s", 80, s, err);
			return -1;
		}
	}
	return 0;
}

int
policy_network_cfg(struct policy *p, struct json_object *v, const char **key,
    char *msg, size_t msglen)
{
	struct egress_rules *r = p->egress;
	size_t i;

	*key = NULL;
	if (json_object_is_type(v, json_type_boolean)) {
		if (json_object_get_boolean(v)) {
			(void)snprintf(msg, msglen, "true says nothing about "
			    "where to: give an object with allowed_domains");
			return -1;
		}
		r->nallow = r->ndeny = r->npins = 0;
		p->ask->nallow = 0;
		p->ask_network = false;
		return 0;
	}
	if (!json_object_is_type(v, json_type_object)) {
		(void)snprintf(msg, msglen, "must be false or an object with "
		    "allowed_domains");
		return -1;
	}
	json_object_object_foreach(v, k, val) {
		*key = k;
		if (k[0] == '_')
			continue;
		if (strcmp(k, "allowed_domains") == 0 ||
		    strcmp(k, "denied_domains") == 0 ||
		    strcmp(k, "resolve") == 0 || strcmp(k, "tunnels") == 0 ||
		    strcmp(k, "ask_domains") == 0) {
			if (cfg_list(k[1] == 's' ? p->ask : r, k, val, msg,
			    msglen) != 0)
				return -1;
			continue;
		}
		if (strcmp(k, "ask_network") == 0) {
			if (!json_object_is_type(val, json_type_boolean)) {
				(void)snprintf(msg, msglen, "must be true or "
				    "false");
				return -1;
			}
			p->ask_network = json_object_get_boolean(val);
			continue;
		}
		for (i = 0; i < NBOUNDS; i++)
			if (strcmp(bounds[i].key, k) == 0)
				break;
		if (i == NBOUNDS) {
			(void)snprintf(msg, msglen, "unknown key (allowed_domains, "
			    "denied_domains, resolve, tunnels, max_connections, "
			    "max_bytes, idle_timeout_ms, ask_domains, "
			    "ask_network)");
			return -1;
		}
		if (!json_object_is_type(val, json_type_int) ||
		    json_object_get_int64(val) < (int64_t)bounds[i].min ||
		    (uint64_t)json_object_get_int64(val) > bounds[i].max) {
			(void)snprintf(msg, msglen, "must be an integer in "
			    "%llu..%llu", (unsigned long long)bounds[i].min,
			    (unsigned long long)bounds[i].max);
			return -1;
		}
		bound_set(r, i, (uint64_t)json_object_get_int64(val));
	}
	*key = NULL;
	return 0;
}

int
policy_network_flag(struct policy *p, const char *flag, const char *value,
    char *msg, size_t msglen)
{
	struct egress_rules *r = p->egress;
	char err[160];
	uint64_t v;
	size_t i;
	int rc;

	for (i = 0; i < NBOUNDS; i++) {
		if (strcmp(bounds[i].flag, flag) != 0)
			continue;
		if (parse_u64(value, bounds[i].min, bounds[i].max, &v) != 0) {
			(void)snprintf(msg, msglen, "expected an integer in "
			    "%llu..%llu, got '%.*s'",
			    (unsigned long long)bounds[i].min,
			    (unsigned long long)bounds[i].max, 40, value);
			return -1;
		}
		bound_set(r, i, v);
		return 1;
	}
	if (strcmp(flag, "ask-network") == 0) {
		p->ask_network = true;
		return 1;
	}
	if (strcmp(flag, "allow-domain") == 0)
		rc = egress_rules_allow(r, value, err, sizeof(err));
	else if (strcmp(flag, "ask-domain") == 0)
		rc = cfg_ask_pattern(p->ask, "ask_domains", value, err,
		    sizeof(err));
	else if (strcmp(flag, "deny-domain") == 0)
		rc = egress_rules_deny(r, value, err, sizeof(err));
	else if (strcmp(flag, "resolve") == 0)
		rc = egress_rules_pin(r, value, err, sizeof(err));
	else if (strcmp(flag, "egress-tunnel") == 0)
		rc = egress_rules_tunnel(r, value, err, sizeof(err));
	else
		return 0;
	if (rc != 0) {
		(void)snprintf(msg, msglen, "'%.*s': %s", 80, value, err);
		return -1;
	}
	return 1;
}

bool
policy_network_enabled(const struct policy *p)
{
	return p->egress != NULL && egress_rules_enabled(p->egress);
}

struct json_object *
policy_network_json(const struct policy *p)
{
	const struct egress_rules *r = p->egress;
	struct json_object *o, *a;
	size_t i;

	if (!policy_network_enabled(p) && !policy_asks(p))
		return json_object_new_boolean(0);
	if ((o = json_object_new_object()) == NULL)
		return NULL;
	a = json_object_new_array();
	for (i = 0; i < r->nallow; i++)
		json_object_array_add(a, json_object_new_string(
		    r->allow[i].text));
	json_object_object_add(o, "allowed_domains", a);
	a = json_object_new_array();
	for (i = 0; i < r->ndeny; i++)
		json_object_array_add(a, json_object_new_string(
		    r->deny[i].text));
	json_object_object_add(o, "denied_domains", a);
	a = json_object_new_array();
	for (i = 0; i < r->npins; i++)
		json_object_array_add(a, json_object_new_string(
		    r->pins[i].text));
	json_object_object_add(o, "resolve", a);
	a = json_object_new_array();
	for (i = 0; i < r->ntunnels; i++)
		json_object_array_add(a, json_object_new_string(
		    r->tunnels[i].text));
	json_object_object_add(o, "tunnels", a);
	for (i = 0; i < NBOUNDS; i++)
		json_object_object_add(o, bounds[i].key,
		    json_object_new_int64((int64_t)bound_get(r, i)));
	a = json_object_new_array();
	for (i = 0; i < p->ask->nallow; i++)
		json_object_array_add(a, json_object_new_string(
		    p->ask->allow[i].text));
	json_object_object_add(o, "ask_domains", a);
	json_object_object_add(o, "ask_network",
	    json_object_new_boolean(p->ask_network));
	return o;
}

bool
policy_asks(const struct policy *p)
{
	return p->ask != NULL && p->ask->nallow > 0;
}

void
policy_ask_summary(const struct policy *p, char *buf, size_t len)
{
	size_t i, w;
	int n;

	if (!policy_asks(p) && p->limits.ask_timeout_ms == 0) {
		(void)snprintf(buf, len, "off: nothing is ever asked "
		    "(no network.ask_domains, no limits.ask_timeout_ms)");
		return;
	}
	n = snprintf(buf, len, "a call may ask the user for");
	w = n > 0 ? (size_t)n : 0;
	for (i = 0; i < p->ask->nallow && w < len; i++) {
		n = snprintf(buf + w, len - w, " %s", p->ask->allow[i].text);
		w += n > 0 ? (size_t)n : 0;
	}
	if (p->ask->nallow > 0 && !policy_network_enabled(p) && w < len) {
		n = snprintf(buf + w, len - w, " (network where the policy "
		    "has none)");
		w += n > 0 ? (size_t)n : 0;
	}
	if (p->limits.ask_timeout_ms > 0 && w < len) {
		n = snprintf(buf + w, len - w, "%s a deadline up to %u ms",
		    p->ask->nallow > 0 ? ";" : "", p->limits.ask_timeout_ms);
		w += n > 0 ? (size_t)n : 0;
	}
	if (w < len)
		(void)snprintf(buf + w, len - w, "; a call waits %u ms for the "
		    "answer; a 2026-07-28 session grant lasts %u ms",
		    p->limits.ask_wait_ms, p->limits.grant_ttl_ms);
}

void
policy_network_summary(const struct policy *p, char *buf, size_t len)
{
	const struct egress_rules *r = p->egress;
	size_t i, w;
	int n;

	if (!policy_network_enabled(p)) {
		(void)snprintf(buf, len, "off (no allowed_domains)");
		return;
	}
	n = snprintf(buf, len, "through the proxy to");
	w = n > 0 ? (size_t)n : 0;
	for (i = 0; i < r->nallow && w < len; i++) {
		n = snprintf(buf + w, len - w, " %s", r->allow[i].text);
		w += n > 0 ? (size_t)n : 0;
	}
	for (i = 0; i < r->ndeny && w < len; i++) {
		n = snprintf(buf + w, len - w, " !%s", r->deny[i].text);
		w += n > 0 ? (size_t)n : 0;
	}
	for (i = 0; i < r->npins && w < len; i++) {
		n = snprintf(buf + w, len - w, " (pin %s)", r->pins[i].text);
		w += n > 0 ? (size_t)n : 0;
	}
	for (i = 0; i < r->ntunnels && w < len; i++) {
		n = snprintf(buf + w, len - w, " (tunnel %s)",
		    r->tunnels[i].text);
		w += n > 0 ? (size_t)n : 0;
	}
	if (w < len)
		(void)snprintf(buf + w, len - w, "; max_connections %u, "
		    "max_bytes %llu, idle_timeout_ms %u per call",
		    r->max_connections, (unsigned long long)r->max_bytes,
		    r->idle_timeout_ms);
}
