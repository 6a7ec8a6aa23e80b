/*
 * The connections the HTTP transport has open, tracked from accept to
 * close for limits libmicrohttpd does not have in this form: a deadline
 * for a request's headers that no amount of trickled bytes extends
 * (--header-deadline), the same for its body (--body-deadline and
 * MCP_HTTP_BODY_GRACE_S), and a cap on the connections one client
 * address may hold (MCP_HTTP_MAX_CONN_PER_ADDR). A connection past a
 * deadline is shut down (shutdown(2)): libmicrohttpd then reads end of
 * file and closes it as its own. The entry leaves the table in the
 * connection-closed notification, which libmicrohttpd gives before it
 * closes the socket, so a shut down fd is always still ours.
 */
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <microhttpd.h>

#include "http_internal.h"
#include "log.h"

struct http_conn {
	struct sockaddr_storage addr;	/* the client's, port ignored */
	int fd;				/* MHD's socket, borrowed */
	struct timespec deadline;	/* monotonic: headers done by then */
	bool in_headers;		/* waiting for a request's headers */
	struct timespec body_deadline;	/* monotonic: body done by then */
	bool in_body;			/* waiting for the rest of a body */
	struct http_conn *next;
};

/* Same client address (the port is not part of it). */
static bool
same_addr(const struct sockaddr *a, const struct sockaddr *b)
{
	if (a->sa_family != b->sa_family)
		return false;
	if (a->sa_family == AF_INET)
		return memcmp(&((const struct sockaddr_in *)a)->sin_addr,
		    &((const struct sockaddr_in *)b)->sin_addr,
		    sizeof(struct in_addr)) == 0;
	if (a->sa_family == AF_INET6)
		return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		    &((const struct sockaddr_in6 *)b)->sin6_addr,
		    sizeof(struct in6_addr)) == 0;
	return true;		/* no address to tell clients apart by */
}

static size_t
addr_len(const struct sockaddr *a)
{
	return a->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
	    a->sa_family == AF_INET ? sizeof(struct sockaddr_in) :
	    sizeof(struct sockaddr);
}

static void
deadline_in(struct timespec *t, int seconds)
{
	(void)clock_gettime(CLOCK_MONOTONIC, t);
	t->tv_sec += seconds;
}

static bool
past(const struct timespec *t, const struct timespec *now)
{
	return now->tv_sec > t->tv_sec || (now->tv_sec == t->tv_sec &&
	    now->tv_nsec >= t->tv_nsec);
}

void
http_conns_init(struct http_conns *cs, unsigned int header_s)
{
	memset(cs, 0, sizeof(*cs));
	cs->header_s = (int)header_s;
	(void)pthread_mutex_init(&cs->lock, NULL);
}

void
http_conns_fini(struct http_conns *cs)
{
	struct http_conn *c, *next;

	for (c = cs->head; c != NULL; c = next) {
		next = c->next;
		free(c);
	}
	cs->head = NULL;
	(void)pthread_mutex_destroy(&cs->lock);
}

bool
http_conn_admit(struct http_conns *cs, const struct sockaddr *addr)
{
	struct http_conn *c;
	size_t n = 0;

	(void)pthread_mutex_lock(&cs->lock);
	for (c = cs->head; c != NULL; c = c->next)
		if (same_addr((const struct sockaddr *)&c->addr, addr))
			n++;
	(void)pthread_mutex_unlock(&cs->lock);
	return n < MCP_HTTP_MAX_CONN_PER_ADDR;
}

void
http_conn_started(struct http_conns *cs, const struct sockaddr *addr,
    int fd, void **socket_ctx)
{
	struct http_conn *c;

	/* without an entry the connection has only the idle timeout */
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return;
	if (addr != NULL)
		memcpy(&c->addr, addr, addr_len(addr));
	c->fd = fd;
	c->in_headers = true;
	deadline_in(&c->deadline, cs->header_s);
	(void)pthread_mutex_lock(&cs->lock);
	c->next = cs->head;
	cs->head = c;
	(void)pthread_mutex_unlock(&cs->lock);
	*socket_ctx = c;
}

void
http_conn_closed(struct http_conns *cs, void **socket_ctx)
{
	struct http_conn *c = *socket_ctx, **pp;

	if (c == NULL)
		return;
	(void)pthread_mutex_lock(&cs->lock);
	for (pp = &cs->head; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	(void)pthread_mutex_unlock(&cs->lock);
	free(c);
	*socket_ctx = NULL;
}

void
http_conn_headers_done(struct http_conns *cs, void *socket_ctx,
    unsigned int body_s)
{
	struct http_conn *c = socket_ctx;

	if (c == NULL)
		return;
	(void)pthread_mutex_lock(&cs->lock);
	c->in_headers = false;
	c->in_body = true;
	deadline_in(&c->body_deadline, (int)body_s);
	(void)pthread_mutex_unlock(&cs->lock);
}

void
http_conn_body_done(struct http_conns *cs, void *socket_ctx)
{
	struct http_conn *c = socket_ctx;

	if (c == NULL)
		return;
	(void)pthread_mutex_lock(&cs->lock);
	c->in_body = false;
	(void)pthread_mutex_unlock(&cs->lock);
}

void
http_conn_request_done(struct http_conns *cs, void *socket_ctx)
{
	struct http_conn *c = socket_ctx;

	if (c == NULL)
		return;
	/* keep-alive: the next request's headers within the idle time,
	 * counted from now and not reset by its bytes either */
	(void)pthread_mutex_lock(&cs->lock);
	c->in_headers = true;
	c->in_body = false;
	deadline_in(&c->deadline, MCP_HTTP_IDLE_TIMEOUT_S);
	(void)pthread_mutex_unlock(&cs->lock);
}

size_t
http_conns_sweep(struct http_conns *cs, size_t *ret_bodies)
{
	struct http_conn *c;
	struct timespec now;
	size_t n = 0;
	bool late_head, late_body;

	*ret_bodies = 0;
	(void)clock_gettime(CLOCK_MONOTONIC, &now);
	(void)pthread_mutex_lock(&cs->lock);
	for (c = cs->head; c != NULL; c = c->next) {
		late_head = c->in_headers && past(&c->deadline, &now);
		late_body = c->in_body && past(&c->body_deadline, &now);
		if ((!late_head && !late_body) || c->fd < 0)
			continue;
		/* MHD reads end of file and closes it; once is enough */
		(void)shutdown(c->fd, SHUT_RDWR);
		c->fd = -1;
		if (late_head)
			n++;
		else
			(*ret_bodies)++;
	}
	(void)pthread_mutex_unlock(&cs->lock);
	return n;
}
