/*
 * Streamable HTTP (libmicrohttpd, one thread per connection). One endpoint,
 * /mcp, serves both protocol eras: initialize, an Mcp-Session-Id or a
 * handshake-era MCP-Protocol-Version selects sessions (2025-11-25 and
 * older); anything else is a stateless 2026-07-28 request whose headers
 * must match its body (http_headers.c). Every request first passes the
 * endpoint's guards (http_guard.c); bodies are capped while they arrive.
 * Quick calls are answered on the connection's thread; calls that notify,
 * and stateless calls that may run long, run on their own thread so that
 * the connection can stream them and notice a client that leaves
 * (http_stream.c). Dispatch never sees HTTP.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "http_internal.h"
#include "jsonrpc.h"
#include "log.h"
#include "mcp_limits.h"
#include "timespec.h"

#define H_SESSION	"Mcp-Session-Id"
#define H_VERSION	"MCP-Protocol-Version"

/* Largest first allocation of a body sized from its Content-Length;
 * beyond it the buffer grows with the bytes that really arrive. */
#define HTTP_BODY_FIRST_MAX	(64u * 1024)

/* One HTTP request; MHD's req_cls. Freed when MHD completes it. */
struct http_req {
	struct timespec start;		/* monotonic, headers received */
	char *body;			/* owned, body bytes so far */
	size_t len, cap;
	bool too_large;			/* over MCP_MAX_MSG: discarded */
	bool too_slow;			/* past the body deadline */
	bool answered;			/* a response is queued */
	size_t clen;			/* Content-Length, 0 if none */
	uint8_t principal[SHA256_LEN];	/* digest of the bearer token */
};

/* ---- responses ---- */

/*
 * CORS for a browser client at an allowed Origin (the guards refused any
 * other): it may read our answers and the session id. Never "*".
 */
static void
add_cors(struct http_ctx *ctx, struct MHD_Connection *conn,
    struct MHD_Response *resp)
{
	const char *origin = ctx->mhd.lookup_connection_value(conn,
	    MHD_HEADER_KIND, "Origin");

	if (origin == NULL || !http_origin_allowed(ctx, origin))
		return;
	(void)ctx->mhd.add_response_header(resp,
	    "Access-Control-Allow-Origin", origin);
	(void)ctx->mhd.add_response_header(resp, "Vary", "Origin");
	(void)ctx->mhd.add_response_header(resp,
	    "Access-Control-Expose-Headers",
	    "Mcp-Session-Id, WWW-Authenticate");
}

static enum MHD_Result
respond(struct http_ctx *ctx, struct http_req *rq, struct MHD_Connection *conn,
    unsigned int status, const char *ctype, char *body, size_t len,
    const struct http_hdr *extra)
{
	struct MHD_Response *resp;
	enum MHD_Result r;

	resp = ctx->mhd.response_from_buffer(len, body != NULL ? body : "",
	    body != NULL ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
	if (resp == NULL) {
		free(body);
		return MHD_NO;
	}
	if (ctype != NULL)
		(void)ctx->mhd.add_response_header(resp, "Content-Type", ctype);
	for (; extra != NULL && extra->name != NULL; extra++)
		(void)ctx->mhd.add_response_header(resp, extra->name,
		    extra->value);
	add_cors(ctx, conn, resp);
	if (atomic_load(&ctx->draining))
		(void)ctx->mhd.add_response_header(resp, "Connection", "close");
	r = ctx->mhd.queue_response(conn, status, resp);
	ctx->mhd.destroy_response(resp);
	if (rq != NULL)
		rq->answered = true;
	http_metrics_status(&ctx->metrics, status);
	return r;
}

/* A JSON-RPC error body (id borrowed, may be NULL; data taken). */
static enum MHD_Result
respond_error(struct http_ctx *ctx, struct http_req *rq,
    struct MHD_Connection *conn, unsigned int status,
    struct json_object *id, enum mcp_err err, const char *message,
    struct json_object *data, const struct http_hdr *extra)
{
	char *text;
	size_t len = 0;

	text = jsonrpc_error(id, err, message, data, &len);
	return respond(ctx, rq, conn, status, "application/json", text,
	    text != NULL ? len : 0, extra);
}

/* A refusal before dispatch: counted, then a JSON-RPC error without id. */
static enum MHD_Result
reject(struct http_ctx *ctx, struct http_req *rq, struct MHD_Connection *conn,
    unsigned int status, enum http_reject why, enum mcp_err err,
    const char *message, const struct http_hdr *extra)
{
	http_metrics_reject(&ctx->metrics, why);
	log_debug("http: %u: %s", status, message);
	return respond_error(ctx, rq, conn, status, NULL, err, message, NULL,
	    extra);
}

/* ---- helpers ---- */

static const char *
header(const struct http_ctx *ctx, struct MHD_Connection *conn,
    const char *name)
{
	return ctx->mhd.lookup_connection_value(conn, MHD_HEADER_KIND, name);
}

static bool
in_list(const char *const *list, const char *v)
{
	for (; *list != NULL; list++)
		if (strcmp(*list, v) == 0)
			return true;
	return false;
}

/* ---- answering one message ---- */

/* Keeps the last message dispatch sends (the response). */
struct capture {
	char *text;
	size_t len;
};

static int
capture_send(void *arg, const char *msg, size_t len)
{
	struct capture *c = arg;
	char *t;

	if ((t = malloc(len + 1)) == NULL)
		return -1;
	memcpy(t, msg, len);
	t[len] = '\0';
	free(c->text);
	c->text = t;
	c->len = len;
	return 0;
}

static unsigned int
status_for(enum mcp_err st, bool modern)
{
	switch (st) {
	case MCP_OK:
		return MHD_HTTP_OK;
	case MCP_ERR_PARSE:
	case MCP_ERR_INVALID_REQUEST:
	case MCP_ERR_TOO_DEEP:
		return MHD_HTTP_BAD_REQUEST;
	case MCP_ERR_TOO_LARGE:
		return MHD_HTTP_CONTENT_TOO_LARGE;
	default:
		break;
	}
	if (!modern)
		return MHD_HTTP_OK;	/* handshake era: errors on a 200 */
	switch (st) {
	case MCP_ERR_NO_METHOD:
		return MHD_HTTP_NOT_FOUND;
	case MCP_ERR_INVALID_PARAMS:
	case MCP_ERR_HEADER_MISMATCH:
	case MCP_ERR_MISSING_CAPABILITY:
	case MCP_ERR_UNSUPPORTED_VERSION:
		return MHD_HTTP_BAD_REQUEST;
	default:
		return MHD_HTTP_INTERNAL_SERVER_ERROR;
	}
}

/*
 * Runs msg (ownership taken) in sess and answers: 202 for notifications,
 * JSON for a response that came alone, SSE when a tools/call sends
 * notifications first. hs (one ref, NULL for stateless) is released here.
 */
static enum MHD_Result
answer(struct http_ctx *ctx, struct http_req *rq, struct MHD_Connection *conn,
    struct rpc_msg *msg, struct http_session *hs, bool modern,
    const struct http_hdr *extra)
{
	static const struct http_hdr h_sse[] = {
		{ "Cache-Control", "no-cache" }, { "X-Accel-Buffering", "no" },
		{ NULL, NULL },
	};
	const union MHD_ConnectionInfo *ci;
	struct capture cap = { NULL, 0 };
	struct msg_sink sink = { .send = capture_send, .arg = &cap };
	struct session own, *sess;
	struct http_live live;
	struct http_stream *st;
	struct MHD_Response *resp;
	enum MHD_Result r;
	enum mcp_err rc;
	const char *ws = NULL;
	char *body;
	size_t len, i;
	int w;

	if (hs == NULL) {
		/* the principal's own: never another token's */
		ws = dispatch_uses_workspace(msg) ?
		    http_tenant_workspace(&ctx->tenants, rq->principal) : NULL;
		session_init(&own, ws);
		(void)snprintf(own.id, sizeof(own.id), "stateless");
		http_owner_key(rq->principal, own.owner, sizeof(own.owner));
		sess = &own;
	} else
		sess = &hs->sess;
	/*
	 * On this thread: everything but calls that will notify (they need a
	 * stream) and stateless calls that may run long (closing their
	 * response must cancel them, so someone has to watch the socket).
	 */
	if (msg->kind != RPC_REQUEST || !dispatch_runs_long(msg) ||
	    (!dispatch_may_notify(&ctx->srv, sess, msg) &&
	    (!modern || dispatch_is_quick(&ctx->srv, msg)))) {
		if (hs == NULL)
			http_live_add(ctx, &live, sess);
		rc = dispatch_message(&ctx->srv, sess, msg, &sink);
		if (hs == NULL)
			http_live_remove(ctx, &live);
		if (msg->kind != RPC_REQUEST || cap.text == NULL) {
			free(cap.text);
			r = respond(ctx, rq, conn, MHD_HTTP_ACCEPTED, NULL,
			    NULL, 0, extra);
		} else
			r = respond(ctx, rq, conn, status_for(rc, modern),
			    "application/json", cap.text, cap.len, extra);
		rpc_msg_free(msg);
		if (hs != NULL)
			http_session_release(&ctx->sessions, hs);
		else
			session_fini(&own);
		return r;
	}
	if (hs == NULL)
		session_fini(&own);	/* the stream has its own */

	ci = ctx->mhd.get_connection_info(conn,
	    MHD_CONNECTION_INFO_CONNECTION_FD);
	st = http_stream_new(ctx, msg, hs, modern, ci != NULL ?
	    ci->connect_fd : -1, ws, rq->principal);
	if (st == NULL) {
		rpc_msg_free(msg);
		if (hs != NULL)
			http_session_release(&ctx->sessions, hs);
		return respond_error(ctx, rq, conn,
		    MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, MCP_ERR_NOMEM,
		    "Internal error: out of memory", NULL, NULL);
	}
	if (http_stream_start(st) != 0) {
		http_stream_unref(st);
		return respond_error(ctx, rq, conn,
		    MHD_HTTP_SERVICE_UNAVAILABLE, NULL, MCP_ERR_INTERNAL,
		    "Server busy: cannot start the call", NULL, NULL);
	}
	w = http_stream_wait_first(st, &body, &len, &rc);
	if (w < 0) {
		http_stream_unref(st);
		return MHD_NO;		/* the client is gone */
	}
	if (w > 0) {
		http_stream_unref(st);
		if (body == NULL)
			return respond(ctx, rq, conn, MHD_HTTP_ACCEPTED, NULL,
			    NULL, 0, extra);
		return respond(ctx, rq, conn, status_for(rc, modern),
		    "application/json", body, len, extra);
	}
	resp = ctx->mhd.response_from_callback(MHD_SIZE_UNKNOWN, 4096,
	    http_stream_read, st, http_stream_free_cb);
	if (resp == NULL) {
		http_stream_free_cb(st);
		return MHD_NO;
	}
	(void)ctx->mhd.add_response_header(resp, "Content-Type",
	    "text/event-stream");
	for (i = 0; h_sse[i].name != NULL; i++)
		(void)ctx->mhd.add_response_header(resp, h_sse[i].name,
		    h_sse[i].value);
	for (; extra != NULL && extra->name != NULL; extra++)
		(void)ctx->mhd.add_response_header(resp, extra->name,
		    extra->value);
	add_cors(ctx, conn, resp);
	if (atomic_load(&ctx->draining))
		(void)ctx->mhd.add_response_header(resp, "Connection", "close");
	r = ctx->mhd.queue_response(conn, MHD_HTTP_OK, resp);
	ctx->mhd.destroy_response(resp);
	rq->answered = true;
	http_metrics_status(&ctx->metrics, MHD_HTTP_OK);
	return r;
}

/* An unsupported MCP-Protocol-Version header: 400 and -32022. */
static enum MHD_Result
bad_version(struct http_ctx *ctx, struct http_req *rq,
    struct MHD_Connection *conn, const struct rpc_msg *msg, const char *hv)
{
	struct json_object *data, *sup;
	size_t i;

	data = json_object_new_object();
	sup = json_object_new_array();
	for (i = 0; dispatch_modern_versions[i] != NULL; i++)
		json_object_array_add(sup,
		    json_object_new_string(dispatch_modern_versions[i]));
	for (i = 0; dispatch_legacy_versions[i] != NULL; i++)
		json_object_array_add(sup,
		    json_object_new_string(dispatch_legacy_versions[i]));
	json_object_object_add(data, "supported", sup);
	json_object_object_add(data, "requested", json_object_new_string(hv));
	http_metrics_reject(&ctx->metrics, HTTP_REJ_PROTOCOL);
	return respond_error(ctx, rq, conn, MHD_HTTP_BAD_REQUEST, msg->id,
	    MCP_ERR_UNSUPPORTED_VERSION, "Unsupported protocol version "
	    "(MCP-Protocol-Version header)", data, NULL);
}

/* The handshake era: sessions. msg ownership taken. */
static enum MHD_Result
post_legacy(struct http_ctx *ctx, struct http_req *rq,
    struct MHD_Connection *conn, struct rpc_msg *msg)
{
	static const struct http_hdr h_busy[] = { { "Retry-After", "1" },
	    { NULL, NULL } };
	struct capture cap = { NULL, 0 };
	struct msg_sink sink = { .send = capture_send, .arg = &cap };
	struct http_session *hs = NULL;
	struct http_hdr h_sid[2] = { { H_SESSION, NULL }, { NULL, NULL } };
	const char *sid = header(ctx, conn, H_SESSION);
	enum http_sess_rc src;
	enum MHD_Result r;
	enum mcp_err rc;

	if (msg->kind == RPC_REQUEST &&
	    strcmp(msg->method, "initialize") == 0) {
		src = http_session_create(&ctx->sessions, rq->principal, &hs);
		if (src != HTTP_SESS_OK) {
			rpc_msg_free(msg);
			if (src == HTTP_SESS_FULL)
				return reject(ctx, rq, conn,
				    MHD_HTTP_SERVICE_UNAVAILABLE,
				    HTTP_REJ_SESSIONS, MCP_ERR_INTERNAL,
				    "Server busy: too many sessions", h_busy);
			return respond_error(ctx, rq, conn,
			    MHD_HTTP_INTERNAL_SERVER_ERROR, NULL,
			    MCP_ERR_INTERNAL, "Internal error: cannot create "
			    "a session", NULL, NULL);
		}
		rc = dispatch_message(&ctx->srv, &hs->sess, msg, &sink);
		if (rc != MCP_OK || cap.text == NULL) {
			http_session_discard(&ctx->sessions, hs);
			r = respond(ctx, rq, conn, MHD_HTTP_BAD_REQUEST,
			    "application/json", cap.text, cap.len, NULL);
		} else {
			h_sid[0].value = hs->id;
			r = respond(ctx, rq, conn, MHD_HTTP_OK,
			    "application/json", cap.text, cap.len, h_sid);
			log_info("http: session %.8s... started", hs->id);
			http_session_release(&ctx->sessions, hs);
		}
		rpc_msg_free(msg);
		return r;
	}
	if (sid == NULL) {
		rpc_msg_free(msg);
		return reject(ctx, rq, conn, MHD_HTTP_BAD_REQUEST,
		    HTTP_REJ_SESSION, MCP_ERR_INVALID_REQUEST, "Bad Request: "
		    "Mcp-Session-Id header is required (send initialize "
		    "first)", NULL);
	}
	src = http_session_acquire(&ctx->sessions, sid, rq->principal, &hs);
	if (src != HTTP_SESS_OK) {
		rpc_msg_free(msg);
		if (src == HTTP_SESS_BUSY)
			return reject(ctx, rq, conn,
			    MHD_HTTP_TOO_MANY_REQUESTS, HTTP_REJ_SESSION_CALLS,
			    MCP_ERR_INTERNAL, "Too many requests in flight "
			    "for this session", h_busy);
		return reject(ctx, rq, conn, MHD_HTTP_NOT_FOUND,
		    HTTP_REJ_SESSION, MCP_ERR_INVALID_REQUEST, "Session not "
		    "found (it ended or expired): initialize again", NULL);
	}
	return answer(ctx, rq, conn, msg, hs, false, NULL);
}

/* The stateless era: headers must match the body. */
static enum MHD_Result
post_modern(struct http_ctx *ctx, struct http_req *rq,
    struct MHD_Connection *conn, struct rpc_msg *msg)
{
	const char *why;
	enum MHD_Result r;

	if ((why = http_header_mismatch(ctx, conn, msg)) != NULL) {
		http_metrics_reject(&ctx->metrics, HTTP_REJ_PROTOCOL);
		r = respond_error(ctx, rq, conn, MHD_HTTP_BAD_REQUEST, msg->id,
		    MCP_ERR_HEADER_MISMATCH, why, NULL, NULL);
		rpc_msg_free(msg);
		return r;
	}
	return answer(ctx, rq, conn, msg, NULL, true, NULL);
}

static enum MHD_Result
handle_post(struct http_ctx *ctx, struct http_req *rq,
    struct MHD_Connection *conn)
{
	struct rpc_msg *msg;
	const char *hv;
	char *reply = NULL;
	enum mcp_err rc;
	bool legacy;

	if (rq->too_large)
		return reject(ctx, rq, conn, MHD_HTTP_CONTENT_TOO_LARGE,
		    HTTP_REJ_BODY, MCP_ERR_TOO_LARGE, "Request body larger "
		    "than 4194304 bytes", NULL);
	if (rq->too_slow)
		return reject(ctx, rq, conn, MHD_HTTP_REQUEST_TIMEOUT,
		    HTTP_REJ_DEADLINE, MCP_ERR_INVALID_REQUEST, "Request "
		    "Timeout: the body took too long to arrive", NULL);
	rc = jsonrpc_decode(rq->body != NULL ? rq->body : "", rq->len, &msg,
	    &reply);
	if (rc != MCP_OK) {
		if (reply == NULL)
			reply = jsonrpc_error(NULL, rc, "Invalid Request", NULL,
			    NULL);
		http_metrics_reject(&ctx->metrics, HTTP_REJ_PROTOCOL);
		return respond(ctx, rq, conn, status_for(rc, false),
		    "application/json", reply, reply != NULL ?
		    strlen(reply) : 0, NULL);
	}
	/*
	 * Route by era (the spec's dual-era routing on one endpoint,
	 * 2026-07-28 basic/transports/streamable-http), first match wins:
	 * a modern MCP-Protocol-Version is modern, even for initialize;
	 * initialize, or a legacy version, is the handshake era; a version
	 * equal to the body's _meta one is modern (dispatch answers an
	 * unsupported one); any other version is refused here; without the
	 * header, an Mcp-Session-Id or no _meta version is the handshake era.
	 */
	hv = header(ctx, conn, H_VERSION);
	if (hv != NULL && in_list(dispatch_modern_versions, hv))
		legacy = false;		/* even initialize: a 404 */
	else if (msg->kind == RPC_REQUEST &&
	    strcmp(msg->method, "initialize") == 0)
		legacy = true;
	else if (hv != NULL && in_list(dispatch_legacy_versions, hv))
		legacy = true;
	else if (hv != NULL && dispatch_modern_version(msg) != NULL &&
	    strcmp(dispatch_modern_version(msg), hv) == 0)
		legacy = false;		/* dispatch's -32022, as on stdio */
	else if (hv != NULL) {
		enum MHD_Result r = bad_version(ctx, rq, conn, msg, hv);

		rpc_msg_free(msg);
		return r;
	} else
		legacy = header(ctx, conn, H_SESSION) != NULL ||
		    dispatch_modern_version(msg) == NULL;
	if (legacy)
		return post_legacy(ctx, rq, conn, msg);
	return post_modern(ctx, rq, conn, msg);
}

static enum MHD_Result
handle_delete(struct http_ctx *ctx, struct http_req *rq,
    struct MHD_Connection *conn)
{
	const char *sid = header(ctx, conn, H_SESSION);

	if (sid == NULL)
		return reject(ctx, rq, conn, MHD_HTTP_BAD_REQUEST,
		    HTTP_REJ_SESSION, MCP_ERR_INVALID_REQUEST, "Bad Request: "
		    "Mcp-Session-Id header is required", NULL);
	if (http_session_delete(&ctx->sessions, sid, rq->principal) !=
	    HTTP_SESS_OK)
		return reject(ctx, rq, conn, MHD_HTTP_NOT_FOUND,
		    HTTP_REJ_SESSION, MCP_ERR_INVALID_REQUEST, "Session not "
		    "found", NULL);
	log_info("http: session %.8s... ended by DELETE", sid);
	return respond(ctx, rq, conn, MHD_HTTP_OK, NULL, NULL, 0, NULL);
}

/* Appends one chunk of the body, enforcing the size cap and the deadline
 * (--body-deadline). */
static void
take_body(const struct http_ctx *ctx, struct http_req *rq, const char *data,
    size_t n)
{
	size_t want;
	char *nb;

	if (ts_us_since(&rq->start) >
	    (uint64_t)ctx->cfg->body_deadline_s * 1000000)
		rq->too_slow = true;
	if (rq->too_large || rq->too_slow)
		return;
	if (n > MCP_MAX_MSG - rq->len) {
		rq->too_large = true;
		free(rq->body);
		rq->body = NULL;
		rq->len = rq->cap = 0;
		return;
	}
	if (rq->len + n + 1 > rq->cap) {
		/* the announced length when small: most bodies are a few
		 * hundred bytes, and a lie cannot make us reserve much */
		want = rq->cap == 0 && rq->clen > 0 &&
		    rq->clen < HTTP_BODY_FIRST_MAX ? rq->clen + 1 :
		    rq->cap == 0 ? 4096 : rq->cap;
		while (want < rq->len + n + 1)
			want *= 2;
		if (want > MCP_MAX_MSG + 1)
			want = MCP_MAX_MSG + 1;
		if ((nb = realloc(rq->body, want)) == NULL) {
			rq->too_large = true;	/* answered as too large */
			return;
		}
		rq->body = nb;
		rq->cap = want;
	}
	memcpy(rq->body + rq->len, data, n);
	rq->len += n;
	rq->body[rq->len] = '\0';
}

/* The socket context of conn: its entry in ctx->conns, or NULL. */
static void *
conn_entry(struct http_ctx *ctx, struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci;

	ci = ctx->mhd.get_connection_info(conn,
	    MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci != NULL ? ci->socket_context : NULL;
}

/* A request's headers are in: it counts as in flight until completed. */
static void
request_begins(struct http_ctx *ctx, struct MHD_Connection *conn)
{
	http_conn_headers_done(&ctx->conns, conn_entry(ctx, conn),
	    ctx->cfg->body_deadline_s + MCP_HTTP_BODY_GRACE_S);
	(void)pthread_mutex_lock(&ctx->req_lock);
	ctx->requests++;
	(void)pthread_mutex_unlock(&ctx->req_lock);
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *conn, const char *url,
    const char *method, const char *version, const char *upload,
    size_t *upload_size, void **req_cls)
{
	static const struct http_hdr h_preflight[] = {
		{ "Allow", "POST, DELETE, OPTIONS" },
		{ "Access-Control-Allow-Methods", "POST, DELETE" },
		{ "Access-Control-Allow-Headers", "Content-Type, Accept, "
		    "Authorization, Mcp-Session-Id, MCP-Protocol-Version, "
		    "Mcp-Method, Mcp-Name" },
		{ "Access-Control-Max-Age", "600" },
		{ NULL, NULL },
	};
	static const struct http_hdr h_down[] = { { "Retry-After", "1" },
	    { NULL, NULL } };
	struct http_ctx *ctx = cls;
	struct http_req *rq = *req_cls;
	struct http_refusal no;
	const char *v;
	size_t n;
	char *text;

	if (rq == NULL) {
		if ((rq = calloc(1, sizeof(*rq))) == NULL)
			return MHD_NO;
		(void)clock_gettime(CLOCK_MONOTONIC, &rq->start);
		*req_cls = rq;
		request_begins(ctx, conn);
		if (atomic_load(&ctx->draining))
			return reject(ctx, rq, conn,
			    MHD_HTTP_SERVICE_UNAVAILABLE, HTTP_REJ_SHUTDOWN,
			    MCP_ERR_INTERNAL, "Server shutting down", h_down);
		if ((v = header(ctx, conn, "Content-Length")) != NULL)
			rq->clen = (size_t)strtoull(v, NULL, 10);
		if (http_guard(ctx, conn, url, method, rq->principal, &no) != 0)
			return reject(ctx, rq, conn, no.status, no.why, no.err,
			    no.message, no.extra);
		return MHD_YES;
	}
	if (*upload_size > 0) {
		if (!rq->answered)
			take_body(ctx, rq, upload, *upload_size);
		*upload_size = 0;
		return MHD_YES;
	}
	http_conn_body_done(&ctx->conns, conn_entry(ctx, conn));
	if (rq->answered)
		return MHD_YES;
	if (strcmp(url, "/healthz") == 0) {
		if ((text = strdup("ok\n")) == NULL)
			return MHD_NO;
		return respond(ctx, rq, conn, MHD_HTTP_OK, "text/plain", text,
		    3, NULL);
	}
	if (strcmp(url, "/metrics") == 0) {
		text = http_metrics_render(&ctx->metrics,
		    http_sessions_count(&ctx->sessions), &n);
		if (text == NULL)
			return MHD_NO;
		return respond(ctx, rq, conn, MHD_HTTP_OK,
		    "text/plain; version=0.0.4", text, n, NULL);
	}
	if (strcmp(method, "DELETE") == 0)
		return handle_delete(ctx, rq, conn);
	if (strcmp(method, "OPTIONS") == 0)
		return respond(ctx, rq, conn, MHD_HTTP_NO_CONTENT, NULL, NULL,
		    0, h_preflight);
	return handle_post(ctx, rq, conn);
}

static void
on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
    enum MHD_RequestTerminationCode toe)
{
	struct http_ctx *ctx = cls;
	struct http_req *rq = *req_cls;

	if (rq == NULL)
		return;
	free(rq->body);
	free(rq);
	*req_cls = NULL;
	http_conn_request_done(&ctx->conns, conn_entry(ctx, conn));
	(void)pthread_mutex_lock(&ctx->req_lock);
	if (--ctx->requests == 0)
		(void)pthread_cond_broadcast(&ctx->req_done);
	(void)pthread_mutex_unlock(&ctx->req_lock);
}

static void
on_connection(void *cls, struct MHD_Connection *conn, void **socket_ctx,
    enum MHD_ConnectionNotificationCode toe)
{
	struct http_ctx *ctx = cls;
	const union MHD_ConnectionInfo *fd, *addr;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		atomic_fetch_add(&ctx->metrics.connections, 1);
		fd = ctx->mhd.get_connection_info(conn,
		    MHD_CONNECTION_INFO_CONNECTION_FD);
		addr = ctx->mhd.get_connection_info(conn,
		    MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		http_conn_started(&ctx->conns, addr != NULL ?
		    addr->client_addr : NULL, fd != NULL ? fd->connect_fd : -1,
		    socket_ctx);
	} else {
		http_conn_closed(&ctx->conns, socket_ctx);
		atomic_fetch_sub(&ctx->metrics.connections, 1);
	}
}

/* MHD's accept policy: the per-address connection cap. */
static enum MHD_Result
on_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
	struct http_ctx *ctx = cls;

	if (addr == NULL || http_conn_admit(&ctx->conns, addr))
		return MHD_YES;
	http_metrics_reject(&ctx->metrics, HTTP_REJ_ADDR_CONNECTIONS);
	log_debug("http: connection refused: its address holds %d already",
	    MCP_HTTP_MAX_CONN_PER_ADDR);
	return MHD_NO;
}

/* libmicrohttpd hands us its own printf formats: the one non-literal
 * format we accept, so the check is told it is one. */
static void on_mhd_log(void *cls, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

static void
on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	char line[512];
	size_t n;

	(void)vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n > 0 && line[n - 1] == '\n')
		line[--n] = '\0';
	/* our own MHD_NO for a client that left: expected, not a fault */
	if (strncmp(line, "Application reported internal error", 35) == 0)
		log_debug("libmicrohttpd: %s", line);
	else
		log_warn("libmicrohttpd: %s", line);
}

/* ---- start and stop ---- */

/* Closes connections past their header deadline, and counts them. */
static void
http_deadlines(struct http_ctx *ctx)
{
	size_t i, bodies, n = http_conns_sweep(&ctx->conns, &bodies);

	for (i = 0; i < n; i++)
		http_metrics_reject(&ctx->metrics, HTTP_REJ_HEADER_DEADLINE);
	for (i = 0; i < bodies; i++)
		http_metrics_reject(&ctx->metrics, HTTP_REJ_DEADLINE);
	if (n > 0)
		log_debug("http: %zu connection(s) closed: no request headers "
		    "within the deadline", n);
	if (bodies > 0)
		log_debug("http: %zu connection(s) closed: a body still "
		    "arriving %d s past its deadline", bodies,
		    MCP_HTTP_BODY_GRACE_S);
}

/* Until SIGTERM, SIGINT or SIGHUP: enforces header deadlines and sweeps
 * idle sessions meanwhile. */
static int
wait_for_signal(struct http_ctx *ctx)
{
	struct signalfd_siginfo si;
	struct timespec swept, now;
	struct pollfd pfd;
	sigset_t set;
	int fd, n;

	(void)sigemptyset(&set);
	(void)sigaddset(&set, SIGTERM);
	(void)sigaddset(&set, SIGINT);
	(void)sigaddset(&set, SIGHUP);
	if ((fd = signalfd(-1, &set, SFD_CLOEXEC)) < 0) {
		log_err("signalfd: %s", strerror(errno));
		return -1;
	}
	pfd.fd = fd;
	pfd.events = POLLIN;
	(void)clock_gettime(CLOCK_MONOTONIC, &swept);
	for (;;) {
		n = poll(&pfd, 1, MCP_HTTP_DEADLINE_TICK_MS);
		if (n == 0) {
			http_deadlines(ctx);
			(void)clock_gettime(CLOCK_MONOTONIC, &now);
			if (now.tv_sec - swept.tv_sec >= MCP_HTTP_SWEEP_S) {
				http_sessions_sweep(&ctx->sessions);
				swept = now;
			}
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n > 0 && read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			break;
		if (n < 0) {
			si.ssi_signo = 0;
			break;
		}
	}
	(void)close(fd);
	return (int)si.ssi_signo;
}

/* Stop: cancels every call of every session, stateless ones included. */
static void
cancel_everything(struct http_ctx *ctx)
{
	struct http_session *s;

	(void)pthread_mutex_lock(&ctx->sessions.lock);
	for (s = ctx->sessions.head; s != NULL; s = s->next)
		session_cancel_all(&s->sess);
	(void)pthread_mutex_unlock(&ctx->sessions.lock);
	http_live_cancel_all(ctx);
}

/* Grace period over: kills every sandbox without cancelling the calls,
 * so that each still answers (with the tool error of a killed run). */
static void
abort_everything(struct http_ctx *ctx)
{
	struct http_session *s;

	(void)pthread_mutex_lock(&ctx->sessions.lock);
	for (s = ctx->sessions.head; s != NULL; s = s->next)
		session_abort_all(&s->sess);
	(void)pthread_mutex_unlock(&ctx->sessions.lock);
	http_live_abort_all(ctx);
}

/* Waits until no request is in flight, for at most seconds; whether none
 * is. */
static bool
wait_requests(struct http_ctx *ctx, int seconds)
{
	struct timespec until;
	bool idle;

	(void)clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += seconds;
	(void)pthread_mutex_lock(&ctx->req_lock);
	while (ctx->requests > 0 && pthread_cond_timedwait(&ctx->req_done,
	    &ctx->req_lock, &until) == 0)
		;
	idle = ctx->requests == 0;
	(void)pthread_mutex_unlock(&ctx->req_lock);
	return idle;
}

/*
 * Everything the daemon's callbacks need, ready before it starts: metrics,
 * sessions, tokens, the stateless workspace. 0, or -1 (logged); either way
 * http_ctx_close() undoes it.
 */
int
http_ctx_open(struct http_ctx *ctx, const struct server *srv,
    const struct http_config *cfg, const char *workspace_dir, uid_t ws_owner)
{
	char err[256];

	memset(ctx, 0, sizeof(*ctx));
	ctx->srv = *srv;
	ctx->cfg = cfg;
	(void)pthread_mutex_init(&ctx->calls_lock, NULL);
	(void)pthread_cond_init(&ctx->calls_done, NULL);
	(void)pthread_mutex_init(&ctx->live_lock, NULL);
	(void)pthread_mutex_init(&ctx->req_lock, NULL);
	(void)pthread_cond_init(&ctx->req_done, NULL);
	atomic_init(&ctx->draining, false);
	http_sessions_init(&ctx->sessions, workspace_dir, ws_owner,
	    &ctx->metrics);
	ctx->sessions.srv = &ctx->srv;
	http_tenants_init(&ctx->tenants, workspace_dir, ws_owner);
	http_conns_init(&ctx->conns, cfg->header_deadline_s);
	if (http_mhd_load(&ctx->mhd, err, sizeof(err)) != 0) {
		log_err("%s", err);
		return -1;
	}
	if (http_metrics_init(&ctx->metrics, srv) != 0) {
		log_err("out of memory");
		return -1;
	}
	ctx->srv.on_call = http_metrics_on_call;
	ctx->srv.on_call_arg = &ctx->metrics;
	if ((cfg->token_file != NULL && http_load_tokens("--token-file",
	    cfg->token_file, ctx->tokens, &ctx->n_tokens) != 0) ||
	    (cfg->metrics_token_file != NULL && http_load_tokens(
	    "--metrics-token-file", cfg->metrics_token_file,
	    ctx->metrics_tokens, &ctx->n_metrics_tokens) != 0))
		return -1;
	/* each token a principal with its share; without tokens, one */
	http_sessions_set_principals(&ctx->sessions, ctx->n_tokens);
	return 0;
}

/* Pending connections the kernel queues before MHD accepts them. */
#define HTTP_LISTEN_BACKLOG	128

/*
 * The listening socket, made here rather than by libmicrohttpd so that a
 * failure names the address, the port and the errno (MHD's own message
 * says "port 0" when given an address). Returns the fd, or -1 logged.
 */
static int
http_listen(const struct http_config *cfg)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)&cfg->addr;
	const struct sockaddr_in6 *sin6 =
	    (const struct sockaddr_in6 *)&cfg->addr;
	unsigned int port = ntohs(cfg->addr.ss_family == AF_INET6 ?
	    sin6->sin6_port : sin->sin_port);
	int fd, on = 1, e;

	fd = socket(cfg->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		log_err("cannot listen on %s: socket: %s", cfg->listen_text,
		    strerror(errno));
		return -1;
	}
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	if (cfg->addr.ss_family == AF_INET6)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on,
		    sizeof(on));
	if (bind(fd, (const struct sockaddr *)&cfg->addr, cfg->addrlen) != 0) {
		e = errno;
		if (e == EADDRINUSE)
			log_err("cannot listen on %s: port %u is in use "
			    "(another server holds it; choose another with "
			    "--http ADDR:PORT)", cfg->listen_text, port);
		else if (e == EADDRNOTAVAIL)
			log_err("cannot listen on %s: that address is not one "
			    "of this host's", cfg->listen_text);
		else if (e == EACCES)
			log_err("cannot listen on %s: port %u is privileged "
			    "(below 1024) and the server may not bind it",
			    cfg->listen_text, port);
		else
			log_err("cannot listen on %s: bind: %s",
			    cfg->listen_text, strerror(e));
		(void)close(fd);
		return -1;
	}
	if (listen(fd, HTTP_LISTEN_BACKLOG) != 0) {
		log_err("cannot listen on %s: listen: %s", cfg->listen_text,
		    strerror(errno));
		(void)close(fd);
		return -1;
	}
	return fd;
}

/*
 * Starts libmicrohttpd with our callbacks and caps. flags choose the
 * threading (the server: a thread per connection; tests/fuzz: none, with
 * connections it adds itself); listen_fd -1: no listening socket, else
 * one of http_listen()'s, which MHD then owns.
 */
struct MHD_Daemon *
http_daemon_start(struct http_ctx *ctx, unsigned int flags, int listen_fd)
{
	if (listen_fd < 0)
		return ctx->mhd.start_daemon(flags, 0, on_accept, ctx,
		    on_request, ctx, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, ctx,
		    MHD_OPTION_CONNECTION_LIMIT,
		    (unsigned int)(MCP_HTTP_MAX_CONNECTIONS +
		    MCP_HTTP_CONN_SLACK),
		    MHD_OPTION_CONNECTION_TIMEOUT,
		    (unsigned int)MCP_HTTP_IDLE_TIMEOUT_S,
		    MHD_OPTION_CONNECTION_MEMORY_LIMIT,
		    (size_t)MCP_HTTP_CONN_MEMORY,
		    MHD_OPTION_NOTIFY_COMPLETED, on_completed, ctx,
		    MHD_OPTION_NOTIFY_CONNECTION, on_connection, ctx,
		    MHD_OPTION_END);
	return ctx->mhd.start_daemon(flags, 0, on_accept, ctx, on_request, ctx,
	    MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, ctx,
	    MHD_OPTION_LISTEN_SOCKET, (MHD_socket)listen_fd,
	    MHD_OPTION_CONNECTION_LIMIT,
	    (unsigned int)(MCP_HTTP_MAX_CONNECTIONS + MCP_HTTP_CONN_SLACK),
	    MHD_OPTION_CONNECTION_TIMEOUT,
	    (unsigned int)MCP_HTTP_IDLE_TIMEOUT_S,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)MCP_HTTP_CONN_MEMORY,
	    MHD_OPTION_THREAD_STACK_SIZE, (size_t)MCP_HTTP_THREAD_STACK,
	    MHD_OPTION_NOTIFY_COMPLETED, on_completed, ctx,
	    MHD_OPTION_NOTIFY_CONNECTION, on_connection, ctx,
	    MHD_OPTION_END);
}

/*
 * Stops serving: the listening socket closes at once; requests in flight
 * get --shutdown-grace (MCP_HTTP_SHUTDOWN_GRACE_S) to finish (new ones on
 * open connections get 503, every response says Connection: close); then
 * the sandboxes of calls still running are killed and those calls answer
 * with their tool error, for MCP_HTTP_SHUTDOWN_ABORT_S; what is left then
 * is cancelled.
 * The daemon stops, and every call thread is gone when this returns.
 */
void
http_ctx_stop(struct http_ctx *ctx, struct MHD_Daemon *d)
{
	int lfd;

	if ((lfd = ctx->mhd.quiesce_daemon(d)) >= 0)
		(void)close(lfd);
	atomic_store(&ctx->draining, true);
	if (!wait_requests(ctx, (int)ctx->cfg->shutdown_grace_s)) {
		log_info("shutdown: requests still running after %u s; "
		    "killing their sandboxes", ctx->cfg->shutdown_grace_s);
		abort_everything(ctx);
		if (!wait_requests(ctx, MCP_HTTP_SHUTDOWN_ABORT_S))
			log_info("shutdown: cancelling what is left");
	}
	cancel_everything(ctx);
	ctx->mhd.stop_daemon(d);
	(void)pthread_mutex_lock(&ctx->calls_lock);
	while (ctx->calls > 0)
		(void)pthread_cond_wait(&ctx->calls_done, &ctx->calls_lock);
	(void)pthread_mutex_unlock(&ctx->calls_lock);
}

void
http_ctx_close(struct http_ctx *ctx)
{
	/* tasks hold sessions and use the principals' workspaces */
	dispatch_end_tasks(&ctx->srv);
	http_sessions_fini(&ctx->sessions);
	http_tenants_fini(&ctx->tenants);
	http_conns_fini(&ctx->conns);
	explicit_bzero(ctx->tokens, sizeof(ctx->tokens));
	http_metrics_fini(&ctx->metrics);
	http_mhd_unload(&ctx->mhd);
	(void)pthread_mutex_destroy(&ctx->live_lock);
	(void)pthread_cond_destroy(&ctx->req_done);
	(void)pthread_mutex_destroy(&ctx->req_lock);
	(void)pthread_cond_destroy(&ctx->calls_done);
	(void)pthread_mutex_destroy(&ctx->calls_lock);
}

int
transport_http_run(const struct server *srv, const struct http_config *cfg,
    const char *workspace_dir, uid_t ws_owner)
{
	struct http_ctx ctx;
	struct MHD_Daemon *d;
	const union MHD_DaemonInfo *di;
	unsigned int flags;
	int rc = 1, sig, lfd;

	if (http_ctx_open(&ctx, srv, cfg, workspace_dir, ws_owner) != 0)
		goto out;
	flags = MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_THREAD_PER_CONNECTION |
	    MHD_USE_ITC | MHD_USE_ERROR_LOG;
	if (cfg->addr.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	if ((lfd = http_listen(cfg)) < 0)
		goto out;
	if ((d = http_daemon_start(&ctx, flags, lfd)) == NULL) {
		log_err("cannot serve on %s: libmicrohttpd did not start",
		    cfg->listen_text);
		(void)close(lfd);
		goto out;
	}
	di = ctx.mhd.get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	log_info("serving %zu tools on http://%s/mcp (port %u)%s",
	    dispatch_tool_count(srv), cfg->listen_text,
	    di != NULL ? (unsigned int)di->port : 0,
	    ctx.n_tokens > 0 ? ", bearer token required" : "");

	sig = wait_for_signal(&ctx);
	log_info("signal %d: stopping; requests in flight have %u s to "
	    "finish", sig, cfg->shutdown_grace_s);
	http_ctx_stop(&ctx, d);
	rc = 0;
 out:
	http_ctx_close(&ctx);
	return rc;
}
