/*
 * The network activity of one call (its proxy's records, egress/) as the
 * model reads it: structuredContent.network, a "--- network ---" part of
 * the text, and the same objects for the audit log's lines. Host names
 * and reasons come from the program's own requests: every string goes
 * through render_string (well-formed UTF-8), bounded by the records.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egress.h"
#include "render.h"

/* Text lines of the network part at most; the structure has them all. */
#define RENDER_NET_LINES	32

static struct json_object *
str(const char *s)
{
	return render_string(s, strlen(s), NULL);
}

static struct json_object *
record_json(const struct egress_record *e)
{
	struct json_object *o = json_object_new_object();

	if (o == NULL)
		return NULL;
	json_object_object_add(o, "method", str(e->method));
	json_object_object_add(o, "host", str(e->host));
	json_object_object_add(o, "port", json_object_new_int(e->port));
	json_object_object_add(o, "allowed", json_object_new_boolean(
	    e->allowed));
	json_object_object_add(o, "rule", str(e->rule));
	json_object_object_add(o, "address", str(e->addr));
	json_object_object_add(o, "status", json_object_new_int(e->status));
	json_object_object_add(o, "reason", str(e->reason));
	json_object_object_add(o, "bytes_up", json_object_new_int64(
	    (int64_t)e->bytes_up));
	json_object_object_add(o, "bytes_down", json_object_new_int64(
	    (int64_t)e->bytes_down));
	return o;
}

struct json_object *
render_network(const struct egress_call *ec)
{
	const struct egress_record *recs;
	struct egress_totals t;
	struct json_object *o, *a;
	size_t n, i;

	recs = egress_call_records(ec, &n);
	egress_call_totals(ec, &t);
	if ((o = json_object_new_object()) == NULL)
		return NULL;
	if ((a = json_object_new_array_ext((int)n)) == NULL) {
		json_object_put(o);
		return NULL;
	}
	for (i = 0; i < n; i++)
		json_object_array_add(a, record_json(&recs[i]));
	json_object_object_add(o, "connections", a);
	json_object_object_add(o, "connection_count",
	    json_object_new_int64(t.connections));
	json_object_object_add(o, "refused", json_object_new_int64(t.refused));
	json_object_object_add(o, "bytes_up",
	    json_object_new_int64((int64_t)t.bytes_up));
	json_object_object_add(o, "bytes_down",
	    json_object_new_int64((int64_t)t.bytes_down));
	json_object_object_add(o, "connection_cap_hit",
	    json_object_new_boolean(t.connection_cap_hit));
	json_object_object_add(o, "byte_cap_hit",
	    json_object_new_boolean(t.byte_cap_hit));
	json_object_object_add(o, "not_recorded",
	    json_object_new_int64(t.not_recorded));
	return o;
}

static const char *
get_s(struct json_object *o, const char *k)
{
	struct json_object *v;	/* borrowed */

	return json_object_object_get_ex(o, k, &v) ?
	    json_object_get_string(v) : "";
}

static int64_t
get_i(struct json_object *o, const char *k)
{
	struct json_object *v;	/* borrowed */

	return json_object_object_get_ex(o, k, &v) ?
	    json_object_get_int64(v) : 0;
}

char *
render_network_text(const char *text, struct json_object *net)
{
	struct json_object *conns, *e;
	size_t n, i, cap, w;
	char *out;
	int k;

	if (!json_object_object_get_ex(net, "connections", &conns))
		return strdup(text);
	n = json_object_array_length(conns);
	/* one line a record: method, host, rule, address, reason, figures */
	cap = strlen(text) + 128 + (n < RENDER_NET_LINES ? n :
	    RENDER_NET_LINES) * (2 * EGRESS_MAX_HOST + 3 * EGRESS_MAX_PATTERN +
	    EGRESS_MAX_REASON + 128);
	if ((out = malloc(cap)) == NULL)
		return NULL;
	w = (size_t)snprintf(out, cap, "%s\n--- network ---\n", text);
	if (n == 0)
		w += (size_t)snprintf(out + w, cap - w, "no connection\n");
	for (i = 0; i < n && i < RENDER_NET_LINES && w < cap; i++) {
		e = json_object_array_get_idx(conns, i);
		if (json_object_get_boolean(json_object_object_get(e,
		    "allowed")))
			k = snprintf(out + w, cap - w, "%s %s:%lld allowed "
			    "(rule %s) via %s: %lld bytes up, %lld down%s%s\n",
			    get_s(e, "method"), get_s(e, "host"),
			    (long long)get_i(e, "port"), get_s(e, "rule"),
			    get_s(e, "address"), (long long)get_i(e,
			    "bytes_up"), (long long)get_i(e, "bytes_down"),
			    get_s(e, "reason")[0] ? "; ended: " : "",
			    get_s(e, "reason"));
		else
			k = snprintf(out + w, cap - w, "%s %s:%lld refused "
			    "(%lld): %s\n", get_s(e, "method")[0] ?
			    get_s(e, "method") : "?", get_s(e, "host")[0] ?
			    get_s(e, "host") : "?", (long long)get_i(e, "port"),
			    (long long)get_i(e, "status"), get_s(e, "reason"));
		if (k > 0)
			w = (size_t)k >= cap - w ? cap - 1 : w + (size_t)k;
	}
	if (n > RENDER_NET_LINES && w < cap) {
		k = snprintf(out + w, cap - w, "[%zu more in structuredContent."
		    "network]\n", n - RENDER_NET_LINES);
		if (k > 0)
			w = (size_t)k >= cap - w ? cap - 1 : w + (size_t)k;
	}
	if (get_i(net, "not_recorded") > 0 && w < cap)
		(void)snprintf(out + w, cap - w, "[%lld more connections "
		    "refused past the cap, not recorded]\n",
		    (long long)get_i(net, "not_recorded"));
	return out;
}
