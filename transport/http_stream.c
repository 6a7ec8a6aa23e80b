/*
 * One tools/call that may notify, answered over HTTP. The call runs on its
 * own thread and writes its messages (progress, log lines, then the
 * response) into a queue; the connection's thread answers with plain JSON
 * when the response came alone, or turns the queue into an SSE stream.
 * A client that hangs up is noticed on the socket: in the stateless era
 * that cancels the call and kills its sandbox; in the handshake era the
 * call finishes and its output is dropped (2025-11-25: a disconnect is
 * not a cancellation). A FIN alone does not tell a client that closed
 * from one that half-closed and still reads: the answer then turns into
 * SSE and a comment goes out at once; a closed client resets the
 * connection (POLLERR), a half-closed one reads on.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <microhttpd.h>

#include "http_internal.h"
#include "log.h"

struct http_msgq {
	char *text;		/* owned, compact JSON */
	size_t len;
	struct http_msgq *next;
};

/*
 * Whether a message dispatch sent is a notification (progress, log) or a
 * request of ours (approval.c's elicitation/create), not the response:
 * both write "jsonrpc" first, then "method"; a response has "id" next.
 */
static bool
is_notification(const char *msg, size_t len)
{
	static const char pre[] = "{\"jsonrpc\":\"2.0\",\"method\":";

	return len >= sizeof(pre) - 1 && memcmp(msg, pre, sizeof(pre) - 1) == 0;
}

static void
wake(struct http_stream *st)
{
	uint64_t one = 1;

	/* can only fail if the counter would overflow: then it is set */
	if (write(st->efd, &one, sizeof(one)) < 0)
		return;
}

static void
drain_wake(struct http_stream *st)
{
	uint64_t v;

	/* EAGAIN when already drained is fine */
	if (read(st->efd, &v, sizeof(v)) < 0)
		return;
}

/* The sink dispatch writes to; called on the call thread. */
static int
stream_send(void *arg, const char *msg, size_t len)
{
	struct http_stream *st = arg;
	struct http_msgq *q;
	int rc = -1;

	(void)pthread_mutex_lock(&st->lock);
	if (st->closed)
		goto out;
	if ((q = malloc(sizeof(*q))) == NULL ||
	    (q->text = malloc(len + 1)) == NULL) {
		free(q);
		goto out;
	}
	memcpy(q->text, msg, len);
	q->text[len] = '\0';
	q->len = len;
	q->next = NULL;
	if (st->tail != NULL)
		st->tail->next = q;
	else
		st->head = q;
	st->tail = q;
	st->n_queued++;
	if (is_notification(msg, len))
		st->n_notes++;
	rc = 0;
	wake(st);
 out:
	(void)pthread_mutex_unlock(&st->lock);
	return rc;
}

struct http_stream *
http_stream_new(struct http_ctx *ctx, struct rpc_msg *msg,
    struct http_session *hs, bool modern, int sock, const char *ws,
    const uint8_t principal[SHA256_LEN])
{
	struct http_stream *st;

	if ((st = calloc(1, sizeof(*st))) == NULL)
		return NULL;
	if ((st->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
		free(st);
		return NULL;
	}
	(void)pthread_mutex_init(&st->lock, NULL);
	st->refs = 1;
	st->ctx = ctx;
	st->msg = msg;
	st->hs = hs;
	st->modern = modern;
	st->sock = sock;
	if (hs == NULL) {
		session_init(&st->own, ws);
		(void)snprintf(st->own.id, sizeof(st->own.id), "stateless");
		http_owner_key(principal, st->own.owner, sizeof(st->own.owner));
	}
	return st;
}

static struct session *
stream_session(struct http_stream *st)
{
	return st->hs != NULL ? &st->hs->sess : &st->own;
}

void
http_stream_unref(struct http_stream *st)
{
	struct http_msgq *q, *next;
	bool last;

	if (st == NULL)
		return;
	(void)pthread_mutex_lock(&st->lock);
	last = --st->refs == 0;
	(void)pthread_mutex_unlock(&st->lock);
	if (!last)
		return;
	for (q = st->head; q != NULL; q = next) {
		next = q->next;
		free(q->text);
		free(q);
	}
	free(st->cur);
	rpc_msg_free(st->msg);
	if (st->hs != NULL)
		http_session_release(&st->ctx->sessions, st->hs);
	else
		session_fini(&st->own);
	(void)close(st->efd);
	(void)pthread_mutex_destroy(&st->lock);
	free(st);
}

static void *
call_main(void *arg)
{
	struct http_stream *st = arg;
	struct http_ctx *ctx = st->ctx;
	struct msg_sink sink = { .send = stream_send, .arg = st };
	enum mcp_err rc;

	if (st->hs == NULL)
		http_live_add(ctx, &st->live, &st->own);
	rc = dispatch_message(&ctx->srv, stream_session(st), st->msg, &sink);
	if (st->hs == NULL)
		http_live_remove(ctx, &st->live);
	(void)pthread_mutex_lock(&st->lock);
	st->done = true;
	st->st = rc;
	wake(st);
	(void)pthread_mutex_unlock(&st->lock);
	http_stream_unref(st);

	(void)pthread_mutex_lock(&ctx->calls_lock);
	if (--ctx->calls == 0)
		(void)pthread_cond_broadcast(&ctx->calls_done);
	(void)pthread_mutex_unlock(&ctx->calls_lock);
	return NULL;
}

int
http_stream_start(struct http_stream *st)
{
	struct http_ctx *ctx = st->ctx;
	pthread_attr_t attr;
	pthread_t tid;
	int rc;

	(void)pthread_mutex_lock(&st->lock);
	st->refs++;
	(void)pthread_mutex_unlock(&st->lock);
	(void)pthread_mutex_lock(&ctx->calls_lock);
	ctx->calls++;
	(void)pthread_mutex_unlock(&ctx->calls_lock);

	(void)pthread_attr_init(&attr);
	(void)pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	(void)pthread_attr_setstacksize(&attr, MCP_HTTP_THREAD_STACK);
	rc = pthread_create(&tid, &attr, call_main, st);
	(void)pthread_attr_destroy(&attr);
	if (rc == 0)
		return 0;
	log_err("cannot start a call thread: %s", strerror(rc));
	(void)pthread_mutex_lock(&ctx->calls_lock);
	if (--ctx->calls == 0)
		(void)pthread_cond_broadcast(&ctx->calls_done);
	(void)pthread_mutex_unlock(&ctx->calls_lock);
	http_stream_unref(st);
	return -1;
}

/* The client went away: stop queueing; in the stateless era, cancel. */
static void
client_gone(struct http_stream *st)
{
	struct http_metrics *m = &st->ctx->metrics;
	bool first, done;

	(void)pthread_mutex_lock(&st->lock);
	st->closed = true;
	first = !st->gone;
	st->gone = true;
	done = st->done;
	(void)pthread_mutex_unlock(&st->lock);
	if (!first || done)
		return;
	atomic_fetch_add(&m->streams_closed, 1);
	if (st->modern) {
		session_cancel(stream_session(st), st->msg->id_key);
		atomic_fetch_add(&m->calls_cancelled, 1);
	}
}

/*
 * Sleeps until the queue may have changed, the socket hangs up, or
 * timeout_ms passes. Returns -1 when the client is gone (the connection
 * is reset or fully shut), 2 when it sent FIN for the first time (a
 * half-close, or a close that only a write will tell), 1 on timeout,
 * else 0. After a FIN only a reset or a full shutdown wakes it.
 */
static int
wait_event(struct http_stream *st, int timeout_ms)
{
	struct pollfd pfd[2];
	int n;

	pfd[0].fd = st->efd;
	pfd[0].events = POLLIN;
	pfd[1].fd = st->sock;
	pfd[1].events = st->peer_eof ? 0 : POLLRDHUP;
	pfd[1].revents = 0;
	n = poll(pfd, st->sock >= 0 ? 2 : 1, timeout_ms);
	if (n < 0 && errno != EINTR)
		return -1;
	if (n > 0 && (pfd[1].revents & (POLLHUP | POLLERR)))
		return -1;
	if (n > 0 && (pfd[1].revents & POLLRDHUP)) {
		st->peer_eof = true;
		st->probe = true;
		return 2;
	}
	if (n == 0)
		return 1;
	if (n > 0 && (pfd[0].revents & POLLIN))
		drain_wake(st);
	return 0;
}

int
http_stream_wait_first(struct http_stream *st, char **ret_body,
    size_t *ret_len, enum mcp_err *ret_st)
{
	struct http_msgq *q;

	for (;;) {
		(void)pthread_mutex_lock(&st->lock);
		if (st->n_notes > 0) {
			(void)pthread_mutex_unlock(&st->lock);
			return 0;	/* a notification first: SSE */
		}
		if (st->done) {
			q = st->head;
			st->head = st->tail = NULL;
			st->n_queued = 0;
			*ret_st = st->st;
			(void)pthread_mutex_unlock(&st->lock);
			if (q == NULL) {
				*ret_body = NULL;	/* cancelled */
				*ret_len = 0;
			} else {
				*ret_body = q->text;
				*ret_len = q->len;
				free(q);
			}
			return 1;
		}
		(void)pthread_mutex_unlock(&st->lock);
		switch (wait_event(st, -1)) {
		case -1:
			client_gone(st);
			return -1;
		case 2:
			/* FIN: answer as SSE, whose first bytes tell a client
			 * that still reads from one that is gone */
			return 0;
		default:
			break;
		}
	}
}

/* Formats q as one SSE event into st->cur (ownership of q taken). */
static int
format_event(struct http_stream *st, struct http_msgq *q)
{
	static const char pre[] = "event: message\ndata: ";
	size_t n = sizeof(pre) - 1 + q->len + 2;

	free(st->cur);
	st->cur = malloc(n);
	if (st->cur != NULL) {
		memcpy(st->cur, pre, sizeof(pre) - 1);
		memcpy(st->cur + sizeof(pre) - 1, q->text, q->len);
		memcpy(st->cur + n - 2, "\n\n", 2);
	}
	st->cur_len = st->cur != NULL ? n : 0;
	st->cur_off = 0;
	free(q->text);
	free(q);
	return st->cur != NULL ? 0 : -1;
}

ssize_t
http_stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	static const char keepalive[] = ": keep-alive\n\n";
	struct http_stream *st = cls;
	struct http_msgq *q;
	size_t n;

	for (;;) {
		if (st->probe && st->cur_off >= st->cur_len) {
			/* after a FIN: bytes now, so that a client that has
			 * closed answers with a reset (then POLLERR) */
			st->probe = false;
			free(st->cur);
			if ((st->cur = strdup(keepalive)) == NULL)
				return MHD_CONTENT_READER_END_WITH_ERROR;
			st->cur_len = sizeof(keepalive) - 1;
			st->cur_off = 0;
		}
		if (st->cur_off < st->cur_len) {
			n = st->cur_len - st->cur_off;
			if (n > max)
				n = max;
			memcpy(buf, st->cur + st->cur_off, n);
			st->cur_off += n;
			return (ssize_t)n;
		}
		(void)pthread_mutex_lock(&st->lock);
		if ((q = st->head) != NULL) {
			st->head = q->next;
			if (st->head == NULL)
				st->tail = NULL;
			st->n_queued--;
			(void)pthread_mutex_unlock(&st->lock);
			if (format_event(st, q) != 0)
				return MHD_CONTENT_READER_END_WITH_ERROR;
			continue;
		}
		if (st->done) {
			(void)pthread_mutex_unlock(&st->lock);
			return MHD_CONTENT_READER_END_OF_STREAM;
		}
		(void)pthread_mutex_unlock(&st->lock);
		switch (wait_event(st, MCP_HTTP_SSE_KEEPALIVE_MS)) {
		case -1:
			client_gone(st);
			return MHD_CONTENT_READER_END_WITH_ERROR;
		case 2:
			break;		/* the probe goes out next turn */
		case 1:
			/* quiet a while: a comment keeps it alive */
			free(st->cur);
			if ((st->cur = strdup(keepalive)) == NULL)
				return MHD_CONTENT_READER_END_WITH_ERROR;
			st->cur_len = sizeof(keepalive) - 1;
			st->cur_off = 0;
			break;
		default:
			break;
		}
	}
}

void
http_stream_free_cb(void *cls)
{
	struct http_stream *st = cls;
	bool unfinished;

	/* a response torn down before the end: the client is gone */
	(void)pthread_mutex_lock(&st->lock);
	unfinished = !st->done;
	(void)pthread_mutex_unlock(&st->lock);
	if (unfinished)
		client_gone(st);
	http_stream_unref(st);
}
