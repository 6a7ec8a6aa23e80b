/*
 * /metrics for the HTTP transport: lock-free counters (C11 atomics) hung
 * off the transport context, rendered in the Prometheus text format.
 * Labels are tool names from the closed registry and fixed reason words,
 * never anything a client sent.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_internal.h"

/* Upper bounds of the duration buckets, in microseconds: from a quick
 * in-process tool to a sandbox run near its time limit. */
static const uint64_t bucket_us[HTTP_METRIC_BUCKETS] = {
	1000, 10000, 100000, 500000, 2000000, 10000000, 60000000,
};

/* The status codes we count by name, in metrics order. */
static const unsigned int status_codes[HTTP_METRIC_CODES] = {
	200, 202, 400, 401, 403, 404, 405, 406, 408, 413, 415, 429, 431, 500,
	503, 204,
};

static const char *const reject_names[HTTP_REJ_N] = {
	[HTTP_REJ_HOST] = "host",
	[HTTP_REJ_ORIGIN] = "origin",
	[HTTP_REJ_AUTH] = "auth",
	[HTTP_REJ_CONNECTIONS] = "connections",
	[HTTP_REJ_HEADERS] = "headers",
	[HTTP_REJ_BODY] = "body_size",
	[HTTP_REJ_DEADLINE] = "body_deadline",
	[HTTP_REJ_SESSIONS] = "sessions",
	[HTTP_REJ_SESSION_CALLS] = "session_calls",
	[HTTP_REJ_SESSION] = "session",
	[HTTP_REJ_HEADER_DEADLINE] = "header_deadline",
	[HTTP_REJ_ADDR_CONNECTIONS] = "address_connections",
	[HTTP_REJ_SHUTDOWN] = "shutting_down",
	[HTTP_REJ_PROTOCOL] = "protocol",
};

int
http_metrics_init(struct http_metrics *m, const struct server *srv)
{
	const char *name;
	size_t i, n;

	memset(m, 0, sizeof(*m));
	n = dispatch_tool_count(srv);
	if (n > 0 && (m->tools = calloc(n, sizeof(*m->tools))) == NULL)
		return -1;
	for (i = 0; i < n; i++)
		if ((name = dispatch_tool_name(srv, i)) != NULL)
			m->tools[m->n_tools++].name = name;
	return 0;
}

void
http_metrics_fini(struct http_metrics *m)
{
	free(m->tools);
	m->tools = NULL;
	m->n_tools = 0;
}

void
http_metrics_status(struct http_metrics *m, unsigned int code)
{
	size_t i;

	for (i = 0; i < HTTP_METRIC_CODES; i++)
		if (status_codes[i] == code)
			break;
	atomic_fetch_add(&m->status[i], 1);
}

void
http_metrics_reject(struct http_metrics *m, enum http_reject why)
{
	atomic_fetch_add(&m->rejected[why], 1);
}

void
http_metrics_on_call(void *arg, const char *tool, enum mcp_err st,
    bool is_error, bool ran, uint64_t duration_us)
{
	struct http_metrics *m = arg;
	struct http_tool_metrics *tm = NULL;
	size_t i;

	for (i = 0; i < m->n_tools; i++)
		if (strcmp(m->tools[i].name, tool) == 0)
			tm = &m->tools[i];
	if (tm == NULL)
		return;
	if (st != MCP_OK)
		atomic_fetch_add(&tm->protocol_error, 1);
	else if (is_error)
		atomic_fetch_add(&tm->tool_error, 1);
	else
		atomic_fetch_add(&tm->ok, 1);
	if (!ran)
		return;
	atomic_fetch_add(&tm->runs, 1);
	atomic_fetch_add(&tm->sum_us, duration_us);
	for (i = 0; i < HTTP_METRIC_BUCKETS; i++)
		if (duration_us <= bucket_us[i])
			atomic_fetch_add(&tm->bucket[i], 1);
}

/* A growing text buffer with a sticky error, for the exposition. */
struct mbuf {
	char *p;
	size_t len, cap;
	bool err;
};

static void
mb_printf(struct mbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
mb_printf(struct mbuf *b, const char *fmt, ...)
{
	va_list ap;
	size_t need;
	char *np;
	int n;

	if (b->err)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->err = true;
			return;
		}
		if ((size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		need = b->cap * 2 + (size_t)n;
		if ((np = realloc(b->p, need)) == NULL) {
			b->err = true;
			return;
		}
		b->p = np;
		b->cap = need;
	}
}

static uint64_t
ld(atomic_uint_fast64_t *v)
{
	return (uint64_t)atomic_load(v);
}

static void
render_tools(struct mbuf *b, struct http_metrics *m)
{
	struct http_tool_metrics *t;
	uint64_t cum;
	size_t i, j;

	mb_printf(b, "# HELP mcp_tool_calls_total Finished tools/call "
	    "requests by tool and outcome.\n"
	    "# TYPE mcp_tool_calls_total counter\n");
	for (i = 0; i < m->n_tools; i++) {
		t = &m->tools[i];
		mb_printf(b, "mcp_tool_calls_total{tool=\"%s\",outcome=\"ok\"} "
		    "%llu\n", t->name, (unsigned long long)ld(&t->ok));
		mb_printf(b, "mcp_tool_calls_total{tool=\"%s\",outcome="
		    "\"tool_error\"} %llu\n", t->name,
		    (unsigned long long)ld(&t->tool_error));
		mb_printf(b, "mcp_tool_calls_total{tool=\"%s\",outcome="
		    "\"protocol_error\"} %llu\n", t->name,
		    (unsigned long long)ld(&t->protocol_error));
	}
	mb_printf(b, "# HELP mcp_tool_run_seconds Time of tool runs "
	    "(sandbox or in-process engine), by tool.\n"
	    "# TYPE mcp_tool_run_seconds histogram\n");
	for (i = 0; i < m->n_tools; i++) {
		t = &m->tools[i];
		cum = 0;
		for (j = 0; j < HTTP_METRIC_BUCKETS; j++) {
			cum = ld(&t->bucket[j]);
			mb_printf(b, "mcp_tool_run_seconds_bucket{tool=\"%s\","
			    "le=\"%g\"} %llu\n", t->name,
			    (double)bucket_us[j] / 1e6,
			    (unsigned long long)cum);
		}
		mb_printf(b, "mcp_tool_run_seconds_bucket{tool=\"%s\","
		    "le=\"+Inf\"} %llu\n", t->name,
		    (unsigned long long)ld(&t->runs));
		mb_printf(b, "mcp_tool_run_seconds_sum{tool=\"%s\"} %.6f\n",
		    t->name, (double)ld(&t->sum_us) / 1e6);
		mb_printf(b, "mcp_tool_run_seconds_count{tool=\"%s\"} %llu\n",
		    t->name, (unsigned long long)ld(&t->runs));
	}
}

char *
http_metrics_render(struct http_metrics *m, size_t sessions_active,
    size_t *ret_len)
{
	struct mbuf b = { 0 };
	size_t i;

	if ((b.p = malloc(4096)) == NULL)
		return NULL;
	b.cap = 4096;
	b.p[0] = '\0';
	render_tools(&b, m);
	mb_printf(&b, "# HELP mcp_http_responses_total HTTP responses by "
	    "status code.\n# TYPE mcp_http_responses_total counter\n");
	for (i = 0; i < HTTP_METRIC_CODES; i++)
		mb_printf(&b, "mcp_http_responses_total{code=\"%u\"} %llu\n",
		    status_codes[i], (unsigned long long)ld(&m->status[i]));
	mb_printf(&b, "mcp_http_responses_total{code=\"other\"} %llu\n",
	    (unsigned long long)ld(&m->status[HTTP_METRIC_CODES]));
	mb_printf(&b, "# HELP mcp_http_rejected_total Requests refused "
	    "before dispatch, by reason.\n"
	    "# TYPE mcp_http_rejected_total counter\n");
	for (i = 0; i < HTTP_REJ_N; i++)
		mb_printf(&b, "mcp_http_rejected_total{reason=\"%s\"} %llu\n",
		    reject_names[i], (unsigned long long)ld(&m->rejected[i]));
	mb_printf(&b, "# HELP mcp_http_connections Open connections.\n"
	    "# TYPE mcp_http_connections gauge\n"
	    "mcp_http_connections %d\n", atomic_load(&m->connections));
	mb_printf(&b, "# HELP mcp_sessions Handshake-era sessions alive.\n"
	    "# TYPE mcp_sessions gauge\nmcp_sessions %zu\n", sessions_active);
	mb_printf(&b, "# HELP mcp_sessions_total Sessions by how they "
	    "began or ended.\n# TYPE mcp_sessions_total counter\n"
	    "mcp_sessions_total{event=\"created\"} %llu\n"
	    "mcp_sessions_total{event=\"deleted\"} %llu\n"
	    "mcp_sessions_total{event=\"expired\"} %llu\n"
	    "mcp_sessions_total{event=\"evicted\"} %llu\n",
	    (unsigned long long)ld(&m->sessions_created),
	    (unsigned long long)ld(&m->sessions_deleted),
	    (unsigned long long)ld(&m->sessions_expired),
	    (unsigned long long)ld(&m->sessions_evicted));
	mb_printf(&b, "# HELP mcp_http_streams_closed_total Response "
	    "streams the client closed before the call ended, and how many "
	    "of those cancelled the call (2026-07-28).\n"
	    "# TYPE mcp_http_streams_closed_total counter\n"
	    "mcp_http_streams_closed_total{cancelled=\"false\"} %llu\n"
	    "mcp_http_streams_closed_total{cancelled=\"true\"} %llu\n",
	    (unsigned long long)(ld(&m->streams_closed) -
	    ld(&m->calls_cancelled)),
	    (unsigned long long)ld(&m->calls_cancelled));
	if (b.err) {
		free(b.p);
		return NULL;
	}
	*ret_len = b.len;
	return b.p;
}
