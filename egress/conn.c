/*
 * conn: what every connection of the proxy does the same way, plain,
 * tunnelled or intercepted (proxy.c, intercept.c): the call's byte
 * budget, the bounded wait and write, and the proxy's own refusal.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "egress.h"
#include "proxy_impl.h"

/*
 * After a refusal, how long and how much of what the program still sends
 * is read and dropped before closing (see linger_drain): a request body or
 * an oversized head, not a stream.
 */
#define EGRESS_LINGER_MS	1000
#define EGRESS_LINGER_BYTES	(256 * 1024)

/*
 * Reserves up to want bytes of the call's budget; returns how many (0:
 * the cap is reached, and the call says so). px_give_back() returns what a
 * transfer did not use.
 */
uint64_t
px_reserve(struct egress_call *c, uint64_t want)
{
	uint64_t old = atomic_fetch_add(&c->bytes, want), got;

	if (old >= c->rules->max_bytes) {
		atomic_fetch_sub(&c->bytes, want);
		atomic_store(&c->byte_cap_hit, true);
		return 0;
	}
	got = c->rules->max_bytes - old < want ? c->rules->max_bytes - old :
	    want;
	if (got < want)
		atomic_fetch_sub(&c->bytes, want - got);
	return got;
}

void
px_give_back(struct egress_call *c, uint64_t n)
{
	if (n > 0)
		atomic_fetch_sub(&c->bytes, n);
}

void
px_set_reason(struct egress_record *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
	va_end(ap);
}

/* Waits for fd to be ready (events) or the call to end or idle_ms. */
int
px_wait_fd(const struct egress_call *c, int fd, short events)
{
	struct pollfd p[2] = {
		{ .fd = fd, .events = events },
		{ .fd = c->stop_efd, .events = POLLIN },
	};
	int n;

	do
		n = poll(p, 2, (int)c->rules->idle_timeout_ms);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (p[1].revents != 0)
		return -ECANCELED;
	if (n == 0)
		return -ETIMEDOUT;
	return 0;
}

/* Writes all of buf to a non-blocking socket within the idle bound. */
int
px_send_all(const struct egress_call *c, int fd, const char *buf, size_t len)
{
	ssize_t n;
	int rc;

	while (len > 0) {
		n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n > 0) {
			buf += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN)
			return -errno;
		if ((rc = px_wait_fd(c, fd, POLLOUT)) < 0)
			return rc;
	}
	return 0;
}

static const char *
status_text(int status)
{
	switch (status) {
	case 400: return "Bad Request";
	case 403: return "Forbidden";
	case 408: return "Request Timeout";
	case 411: return "Length Required";
	case 431: return "Request Header Fields Too Large";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	default: return "Error";
	}
}

/*
 * After a refusal: what the program still sends is read and dropped until
 * it closes (bounded in bytes and time), so that closing our end does not
 * reset the connection before the program has read our answer.
 */
static void
linger_drain(const struct egress_call *c, int cfd)
{
	struct pollfd p[2] = {
		{ .fd = cfd, .events = POLLIN },
		{ .fd = c->stop_efd, .events = POLLIN },
	};
	struct timespec t0, now;
	char buf[4096];
	size_t total = 0;
	ssize_t n;
	long left;

	(void)clock_gettime(CLOCK_MONOTONIC, &t0);
	while (total < EGRESS_LINGER_BYTES) {
		n = recv(cfd, buf, sizeof(buf), 0);
		if (n > 0) {
			total += (size_t)n;
			continue;
		}
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			return;
		/* EGRESS_LINGER_MS in all: a trickle must not extend it */
		(void)clock_gettime(CLOCK_MONOTONIC, &now);
		left = EGRESS_LINGER_MS - ((long)(now.tv_sec - t0.tv_sec) *
		    1000 + (now.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0 || poll(p, 2, (int)left) <= 0 ||
		    p[1].revents != 0)
			return;
	}
}

/*
 * The proxy's own refusal: the status, a header naming the reason (the
 * rule that decided is in it) and the same sentence as the body, so that
 * curl -v, pip's and npm's error messages all show it to the model.
 */
void
px_refuse_how(struct egress_call *c, int cfd, struct egress_record *r,
    int status, bool wait)
{
	char body[EGRESS_MAX_REASON + 2 * EGRESS_MAX_HOST + 64];
	char head[sizeof(body) + 256];
	int blen, hlen;

	r->status = status;
	r->allowed = false;
	blen = snprintf(body, sizeof(body), "mcp-sandbox egress proxy refused "
	    "%s %s:%u: %s\n", r->method[0] ? r->method : "the request",
	    r->host[0] ? r->host : "?", r->port, r->reason);
	if (blen < 0)
		return;
	if ((size_t)blen >= sizeof(body))
		blen = (int)sizeof(body) - 1;
	hlen = snprintf(head, sizeof(head), "HTTP/1.1 %d %s\r\n"
	    "Content-Type: text/plain; charset=utf-8\r\n"
	    "X-Egress-Denied: %s\r\n"
	    "Content-Length: %d\r\nConnection: close\r\n\r\n%s", status,
	    status_text(status), r->reason, blen, body);
	if (hlen > 0 && (size_t)hlen < sizeof(head)) {
		if (wait)
			(void)px_send_all(c, cfd, head, (size_t)hlen);
		else
			(void)send(cfd, head, (size_t)hlen, MSG_NOSIGNAL |
			    MSG_DONTWAIT);
	}
	(void)shutdown(cfd, SHUT_WR);
	if (wait)
		linger_drain(c, cfd);
}

void
px_refuse(struct egress_call *c, int cfd, struct egress_record *r, int status)
{
	px_refuse_how(c, cfd, r, status, true);
}
