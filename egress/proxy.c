/*
 * proxy: one call's egress. The sandbox's init listens inside its own
 * network namespace and hands the socket out; the thread that supervises
 * the run accepts on it when it polls readable (egress_call_accept(),
 * never blocking: the same thread also runs the sandbox), and each
 * connection gets a thread of its own that reads the proxy request
 * (bounded), asks the rules, resolves the name itself (on a thread of
 * its own, waited for within the connection's time: lookup_wait()),
 * refuses addresses by class (loopback, private, link-local, ...:
 * egress_addr_class()) and the host's own (host_own_addr()) unless
 * pinned or allowed by address, connects,
 * checks the peer again, and then moves the bytes with splice(2) (socket
 * -> pipe -> socket, no copy in user space) under the call's byte and
 * idle bounds. Every
 * connection leaves one record: what was asked, what the rules said and
 * why, the address used and the bytes each way. Nothing here trusts the
 * program: it can send anything, hold connections open, or never read.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "egress.h"
#include "proxy_impl.h"

/*
 * Bytes one splice moves, and the pipe between the sockets sized to
 * match: 64 KiB pipes (the default) cost ~15% of loopback throughput in
 * extra wake-ups; 256 KiB is within an unprivileged user's pipe budget.
 */
#define EGRESS_PIPE_BYTES	(256 * 1024)
/* A connection thread's stack: no big buffers live on it (they are heap). */
#define EGRESS_THREAD_STACK	(128 * 1024)
/*
 * Connections taken per wake-up of the run's poll: a program connecting
 * in a loop must not keep the thread that also watches its deadline.
 */
#define EGRESS_ACCEPT_BATCH	64
/* Addresses of one name tried in turn before giving up. */
#define EGRESS_MAX_ADDRS	8

static void
close_fd(int *fd)
{
	if (*fd >= 0)
		(void)close(*fd);
	*fd = -1;
}

/* Whether a refusal by no rule (not a deny) is of a host:port inside the
 * approvals ceiling. */
static bool
askable(const struct egress_rules *r, const struct egress_verdict *v,
    const char *host, uint16_t port)
{
	struct egress_verdict cv;

	if (r->ceiling == NULL || (v->rule != NULL && v->rule >= r->deny &&
	    v->rule < r->deny + r->ndeny))
		return false;
	egress_decide(r->ceiling, host, port, &cv);
	return cv.allowed;
}

/*
 * Reads a request head into buf (EGRESS_MAX_HEAD + 1 bytes). Returns 1
 * with req filled (*len: bytes read, maybe past the head), or 0 with
 * r->reason and *status set.
 */
static int
read_head(struct egress_call *c, int cfd, char *buf, size_t *len,
    struct egress_request *req, struct egress_record *r, int *status)
{
	char err[128];
	ssize_t n;
	int rc;

	*len = 0;
	for (;;) {
		rc = egress_http_parse(buf, *len, req, err, sizeof(err));
		if (rc == 1)
			return 1;
		if (rc < 0) {
			*status = *len >= EGRESS_MAX_HEAD ? 431 : 400;
			px_set_reason(r, "malformed request: %s", err);
			return 0;
		}
		n = recv(cfd, buf + *len, EGRESS_MAX_HEAD - *len, 0);
		if (n > 0) {
			*len += (size_t)n;
			continue;
		}
		if (n == 0) {
			*status = 400;
			px_set_reason(r, "malformed request: the connection "
			    "closed before a complete request head");
			return 0;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN) {
			*status = 400;
			px_set_reason(r, "reading the request: %s",
			    strerror(errno));
			return 0;
		}
		if ((rc = px_wait_fd(c, cfd, POLLIN)) < 0) {
			*status = 408;
			if (rc == -ETIMEDOUT)
				px_set_reason(r, "no request within %u ms "
				    "(idle_timeout_ms)",
				    c->rules->idle_timeout_ms);
			else
				px_set_reason(r, "the call ended before a "
				    "request came");
			return 0;
		}
	}
}

static void
addr_text(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)ss;

		(void)inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
		(void)snprintf(buf, len, "[%s]:%u", a, ntohs(s6->sin6_port));
	} else {
		const struct sockaddr_in *s4 = (const void *)ss;

		(void)inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
		(void)snprintf(buf, len, "%s:%u", a, ntohs(s4->sin_port));
	}
}

static const uint8_t *
ss_addr(const struct sockaddr_storage *ss, int *family)
{
	*family = ss->ss_family;
	if (ss->ss_family == AF_INET6)
		return (const uint8_t *)&((const struct sockaddr_in6 *)
		    (const void *)ss)->sin6_addr;
	return (const uint8_t *)&((const struct sockaddr_in *)
	    (const void *)ss)->sin_addr;
}

static void
make_ss(int family, const uint8_t *addr, uint16_t port,
    struct sockaddr_storage *ss, socklen_t *sl)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET6) {
		struct sockaddr_in6 *s6 = (void *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		memcpy(&s6->sin6_addr, addr, 16);
		*sl = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (void *)ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		memcpy(&s4->sin_addr, addr, 4);
		*sl = sizeof(*s4);
	}
}

/* A socket of ours with EGRESS_SOCKBUF each way (egress.h says why). */
static void
fix_buffers(int fd)
{
	int v = EGRESS_SOCKBUF;

	(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v));
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v));
}

/* Non-blocking connect within the idle bound: the fd, or -errno. */
static int
connect_to(const struct egress_call *c, const struct sockaddr_storage *ss,
    socklen_t sl)
{
	int fd, rc, one = 1;
	socklen_t el = sizeof(rc);

	fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0);
	if (fd < 0)
		return -errno;
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	fix_buffers(fd);
	if (connect(fd, (const struct sockaddr *)ss, sl) == 0)
		return fd;
	if (errno != EINPROGRESS) {
		rc = -errno;
		(void)close(fd);
		return rc;
	}
	if ((rc = px_wait_fd(c, fd, POLLOUT)) < 0) {
		(void)close(fd);
		return rc;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &rc, &el) < 0)
		rc = errno;
	if (rc != 0) {
		(void)close(fd);
		return -rc;
	}
	return fd;
}

/*
 * A call's lookups still running, abandoned ones too: EGRESS_CALL_LOOKUPS
 * at most. Held by the call and by each of its lookups, so that one that
 * outlives the call still counts until it ends.
 */
struct lookup_share {
	atomic_uint refs;
	atomic_uint running;
};

/*
 * One name's lookup. getaddrinfo() has no time bound of its own (the
 * resolver's settings may hold it for minutes) and no way to stop it, and
 * a connection must give up when its idle bound passes or the call ends,
 * and the call's end must never wait on DNS. So each lookup runs on a
 * detached thread, and two hold it: the connection that asked and that
 * thread. A connection that stops waiting lets go and returns at once;
 * whoever lets go last frees it, so an answer that comes after the call
 * ended is freed unread. getaddrinfo_a() would do the same with glibc's
 * own threads, but its gai_cancel() cannot stop a running lookup either,
 * and an abandoned request would then live in a pool shared with every
 * other lookup of the process, unbounded.
 */
struct lookup {
	atomic_int refs;		/* the connection and the thread */
	struct lookup_share *share;	/* the call's; one ref is ours */
	atomic_bool done;		/* gr and res are set */
	int efd;			/* readable once done */
	int gr;				/* getaddrinfo()'s return */
	struct addrinfo *res;		/* the connection takes it, or freed */
	char host[EGRESS_MAX_HOST + 3];	/* as the request's (serve()) */
};

/*
 * Whether addr is one of this host's own (an address of any interface of
 * the server's network namespace, read now: they change). A public one
 * there reaches every service bound to 0.0.0.0 from the host itself
 * (sshd, databases, the server's own HTTP endpoint), which the classes
 * of egress_addr_class() do not cover. An IPv4-mapped address is its
 * IPv4 one. Fails closed: when the interfaces cannot be read, every
 * address counts as the host's.
 */
static bool
host_own_addr(int family, const uint8_t *addr)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
	struct ifaddrs *ifs, *i;
	bool own = false;

	if (family == AF_INET6 && memcmp(addr, mapped, 12) == 0) {
		family = AF_INET;
		addr += 12;
	}
	if (getifaddrs(&ifs) != 0)
		return true;
	for (i = ifs; i != NULL && !own; i = i->ifa_next) {
		if (i->ifa_addr == NULL || i->ifa_addr->sa_family != family)
			continue;
		if (family == AF_INET)
			own = memcmp(&((struct sockaddr_in *)(void *)
			    i->ifa_addr)->sin_addr, addr, 4) == 0;
		else
			own = memcmp(&((struct sockaddr_in6 *)(void *)
			    i->ifa_addr)->sin6_addr, addr, 16) == 0;
	}
	freeifaddrs(ifs);
	return own;
}

/* Connections holding a thread and their fds: egress_tunnel_budget(). */
static atomic_uint tunnels_open;

unsigned
egress_tunnel_budget(void)
{
	struct rlimit rl;
	rlim_t n;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 0;
	n = rl.rlim_cur / EGRESS_FD_SHARE / EGRESS_FDS_PER_TUNNEL;
	return n > UINT_MAX ? UINT_MAX : (unsigned)n;
}

/* Lookup threads alive in the server: EGRESS_MAX_LOOKUPS at most. */
static atomic_uint lookups_in_flight;

static void
share_drop(struct lookup_share *sh)
{
	if (sh != NULL && atomic_fetch_sub(&sh->refs, 1) == 1)
		free(sh);
}

static void
lookup_drop(struct lookup *l)
{
	if (atomic_fetch_sub(&l->refs, 1) != 1)
		return;
	if (l->res != NULL)
		freeaddrinfo(l->res);
	(void)close(l->efd);
	share_drop(l->share);
	free(l);
}

/* One slot of the server's lookups and one of the call's share, or -1. */
static int
lookup_slot_take(struct egress_call *c, struct egress_record *r)
{
	/* the call's first: a call at its share never holds a server slot,
	 * not even for the moment of a refused attempt */
	if (atomic_fetch_add(&c->lookups->running, 1) >= EGRESS_CALL_LOOKUPS) {
		atomic_fetch_sub(&c->lookups->running, 1);
		px_set_reason(r, "this call has %d DNS lookups in flight, its "
		    "share of the server's %d (EGRESS_CALL_LOOKUPS)",
		    EGRESS_CALL_LOOKUPS, EGRESS_MAX_LOOKUPS);
		return -1;
	}
	if (atomic_fetch_add(&lookups_in_flight, 1) >= EGRESS_MAX_LOOKUPS) {
		atomic_fetch_sub(&lookups_in_flight, 1);
		atomic_fetch_sub(&c->lookups->running, 1);
		px_set_reason(r, "too many DNS lookups in flight (%d in the "
		    "server: EGRESS_MAX_LOOKUPS)", EGRESS_MAX_LOOKUPS);
		return -1;
	}
	return 0;
}

static void
lookup_slot_give(struct lookup_share *sh)
{
	atomic_fetch_sub(&sh->running, 1);
	atomic_fetch_sub(&lookups_in_flight, 1);
}

static void *
lookup_main(void *arg)
{
	struct lookup *l = arg;
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
	    .ai_socktype = SOCK_STREAM };
	uint64_t one = 1;

	l->gr = getaddrinfo(l->host, NULL, &hints, &l->res);
	/* the slot first: a program told the answer may connect again */
	lookup_slot_give(l->share);
	atomic_store(&l->done, true);
	(void)!write(l->efd, &one, sizeof(one));
	lookup_drop(l);
	return NULL;
}

static long
ms_since(const struct timespec *t0)
{
	struct timespec now;

	(void)clock_gettime(CLOCK_MONOTONIC, &now);
	return (long)(now.tv_sec - t0->tv_sec) * 1000 +
	    (now.tv_nsec - t0->tv_nsec) / 1000000;
}

/*
 * Resolves host within the connection's time: idle_timeout_ms, or until
 * the call ends (its deadline, a cancel, the program's exit). Returns 0
 * with *res set (the caller frees it), or -1 with the record's reason
 * and *status set: the resolver's error, no answer in time (504), the
 * call's end (503), or no lookup could start (503).
 */
static int
lookup_wait(struct egress_call *c, const char *host, struct addrinfo **res,
    struct egress_record *r, int *status)
{
	struct pollfd p[2];
	struct timespec t0;
	pthread_attr_t attr;
	pthread_t t;
	struct lookup *l;
	long left;
	int n, rc = -1;

	*res = NULL;
	*status = 503;
	if (lookup_slot_take(c, r) < 0)
		return -1;
	if ((l = calloc(1, sizeof(*l))) == NULL) {
		lookup_slot_give(c->lookups);
		px_set_reason(r, "out of memory");
		return -1;
	}
	(void)snprintf(l->host, sizeof(l->host), "%s", host);
	atomic_init(&l->refs, 2);
	atomic_init(&l->done, false);
	if ((l->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
		px_set_reason(r, "the proxy could not start a DNS lookup: %s",
		    strerror(errno));
		lookup_slot_give(c->lookups);
		free(l);
		return -1;
	}
	atomic_fetch_add(&c->lookups->refs, 1);
	l->share = c->lookups;
	if ((n = pthread_attr_init(&attr)) == 0) {
		(void)pthread_attr_setstacksize(&attr, EGRESS_THREAD_STACK);
		(void)pthread_attr_setdetachstate(&attr,
		    PTHREAD_CREATE_DETACHED);
		n = pthread_create(&t, &attr, lookup_main, l);
		(void)pthread_attr_destroy(&attr);
	}
	if (n != 0) {
		px_set_reason(r, "the proxy could not start a DNS lookup: %s",
		    strerror(n));
		lookup_slot_give(c->lookups);
		(void)close(l->efd);
		share_drop(l->share);
		free(l);
		return -1;
	}
	(void)clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if (atomic_load(&l->done)) {
			if (l->gr != 0) {
				*status = 502;
				px_set_reason(r, "cannot resolve '%s': %s", host,
				    gai_strerror(l->gr));
				break;
			}
			*res = l->res;
			l->res = NULL;
			rc = 0;
			break;
		}
		left = (long)c->rules->idle_timeout_ms - ms_since(&t0);
		if (left <= 0) {
			*status = 504;
			px_set_reason(r, "DNS gave no answer for '%s' within "
			    "%u ms (idle_timeout_ms)", host,
			    c->rules->idle_timeout_ms);
			break;
		}
		p[0] = (struct pollfd){ .fd = l->efd, .events = POLLIN };
		p[1] = (struct pollfd){ .fd = c->stop_efd, .events = POLLIN };
		n = poll(p, 2, (int)left);
		if (n < 0 && errno != EINTR) {
			px_set_reason(r, "waiting for DNS: %s", strerror(errno));
			break;
		}
		if (n > 0 && p[1].revents != 0 && !atomic_load(&l->done)) {
			px_set_reason(r, "the call ended while resolving '%s' "
			    "(DNS had not answered in %ld ms)", host,
			    ms_since(&t0));
			break;
		}
	}
	lookup_drop(l);
	return rc;
}

/*
 * Where host:port goes: a pin, the literal itself (allowed by an address
 * rule, or decide() would have refused it), or what the resolver says,
 * each address checked before it is tried and the peer checked again
 * once connected. Returns the connected fd, or -1 with the record's
 * reason and *status set.
 */
static int
dial(struct egress_call *c, const char *host, uint16_t port,
    struct egress_record *r, int *status)
{
	const struct egress_rules *ru = c->rules;
	struct sockaddr_storage cand[EGRESS_MAX_ADDRS], peer;
	socklen_t cl[EGRESS_MAX_ADDRS], pl = sizeof(peer);
	bool trusted = false;
	char first_refusal[EGRESS_MAX_REASON] = "";
	uint8_t lit[16];
	const struct egress_pattern *deny;
	size_t n = 0, i;
	int fam, fd = -1, err = 0;
	const char *cls;

	for (i = 0; i < ru->npins; i++) {
		if (strcmp(ru->pins[i].host, host) == 0 &&
		    (ru->pins[i].port == 0 || ru->pins[i].port == port)) {
			make_ss(ru->pins[i].family, ru->pins[i].addr, port,
			    &cand[0], &cl[0]);
			n = 1;
			trusted = true;
			break;
		}
	}
	if (n == 0 && inet_pton(AF_INET6, host, lit) == 1) {
		make_ss(AF_INET6, lit, port, &cand[0], &cl[0]);
		n = 1;
	} else if (n == 0 && inet_pton(AF_INET, host, lit) == 1) {
		make_ss(AF_INET, lit, port, &cand[0], &cl[0]);
		n = 1;
	} else if (n == 0) {
		struct addrinfo *res, *a;

		if (lookup_wait(c, host, &res, r, status) < 0)
			return -1;
		for (a = res; a != NULL && n < EGRESS_MAX_ADDRS; a = a->ai_next) {
			int f;
			const uint8_t *ad;

			if (a->ai_family != AF_INET && a->ai_family != AF_INET6)
				continue;
			struct sockaddr_storage tmp;
			uint8_t ab[16];

			memset(&tmp, 0, sizeof(tmp));
			memcpy(&tmp, a->ai_addr, a->ai_addrlen <= sizeof(tmp) ?
			    a->ai_addrlen : sizeof(tmp));
			ad = ss_addr(&tmp, &f);
			memcpy(ab, ad, f == AF_INET6 ? 16 : 4);
			make_ss(f, ab, port, &cand[n], &cl[n]);
			n++;
		}
		freeaddrinfo(res);
	}
	for (i = 0; i < n; i++) {
		const uint8_t *ad = ss_addr(&cand[i], &fam);

		cls = egress_addr_class(fam, ad);
		if ((deny = egress_addr_denied(ru, fam, ad)) != NULL) {
			if (first_refusal[0] == '\0') {
				char at[64];

				addr_text(&cand[i], at, sizeof(at));
				(void)snprintf(first_refusal,
				    sizeof(first_refusal), "'%s' resolves to "
				    "%s, denied by denied_domains rule '%s'",
				    host, at, deny->text);
			}
			continue;
		}
		if (!trusted && (cls != NULL || host_own_addr(fam, ad)) &&
		    !egress_addr_allowed(ru, fam, ad)) {
			if (first_refusal[0] == '\0') {
				char at[64];

				addr_text(&cand[i], at, sizeof(at));
				(void)snprintf(first_refusal,
				    sizeof(first_refusal), "'%s' resolves to "
				    "%s%s address (%s), which is refused "
				    "unless pinned with --resolve or allowed "
				    "by address", host, cls != NULL ? "a " :
				    "this host's own", cls != NULL ? cls : "",
				    at);
			}
			continue;
		}
		if ((fd = connect_to(c, &cand[i], cl[i])) >= 0)
			break;
		err = -fd;
		addr_text(&cand[i], r->addr, sizeof(r->addr));
	}
	if (fd < 0) {
		if (err == 0 && first_refusal[0] != '\0') {
			*status = 403;
			px_set_reason(r, "%s", first_refusal);
		} else if (err == ETIMEDOUT) {
			*status = 504;
			px_set_reason(r, "connecting to %s took longer than %u ms "
			    "(idle_timeout_ms)", r->addr,
			    ru->idle_timeout_ms);
		} else if (err == ECANCELED) {
			*status = 503;
			px_set_reason(r, "the call ended while connecting");
		} else if (err != 0) {
			*status = 502;
			px_set_reason(r, "connecting to %s failed: %s", r->addr,
			    strerror(err));
		} else {
			*status = 502;
			px_set_reason(r, "'%s' has no address", host);
		}
		return -1;
	}
	/* the address actually connected to, checked once more */
	if (getpeername(fd, (struct sockaddr *)&peer, &pl) < 0) {
		*status = 502;
		px_set_reason(r, "the connection was lost at once");
		(void)close(fd);
		return -1;
	}
	addr_text(&peer, r->addr, sizeof(r->addr));
	{
		const uint8_t *ad = ss_addr(&peer, &fam);

		cls = egress_addr_class(fam, ad);
		if (egress_addr_denied(ru, fam, ad) != NULL || (!trusted &&
		    (cls != NULL || host_own_addr(fam, ad)) &&
		    !egress_addr_allowed(ru, fam, ad))) {
			*status = 403;
			px_set_reason(r, "connected to a refused address (%s)",
			    r->addr);
			(void)close(fd);
			return -1;
		}
	}
	return fd;
}

/* One direction of the relay: src -> pipe -> dst. */
struct flow {
	int src, dst;
	int pipe[2];
	size_t in_pipe;
	bool src_eof;		/* nothing more to read */
	bool done;		/* src at EOF and the pipe drained */
	bool half_close;	/* then shut dst's writing side */
	uint64_t left;		/* bytes this direction may still carry */
	uint64_t *count;
};

static int
flow_init(struct flow *f, int src, int dst, uint64_t left, uint64_t *count)
{
	f->src = src;
	f->dst = dst;
	f->in_pipe = 0;
	f->src_eof = f->done = false;
	f->left = left;
	f->count = count;
	/* a plain request's body ends by its length, not a half-close */
	f->half_close = left == UINT64_MAX;
	if (pipe2(f->pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		return -errno;
	(void)fcntl(f->pipe[1], F_SETPIPE_SZ, EGRESS_PIPE_BYTES);
	if (left == 0) {
		f->src_eof = f->done = true;
	}
	return 0;
}

static void
flow_fini(struct flow *f)
{
	close_fd(&f->pipe[0]);
	close_fd(&f->pipe[1]);
}

/*
 * Moves what can move now. Returns 0, or -1 with a reason set (the
 * byte cap, or an error on a socket).
 */
static int
flow_step(struct egress_call *c, struct flow *f, struct egress_record *r,
    bool readable, bool writable)
{
	ssize_t n;
	uint64_t want, got;

	if (readable && !f->src_eof && f->in_pipe == 0) {
		want = f->left < EGRESS_PIPE_BYTES ? f->left :
		    EGRESS_PIPE_BYTES;
		if ((got = px_reserve(c, want)) == 0) {
			px_set_reason(r, "byte cap reached (max_bytes %llu per "
			    "call)", (unsigned long long)c->rules->max_bytes);
			return -1;
		}
		n = splice(f->src, NULL, f->pipe[1], NULL, got,
		    SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (n > 0) {
			px_give_back(c, got - (uint64_t)n);
			f->in_pipe += (size_t)n;
			*f->count += (uint64_t)n;
			if (f->left != UINT64_MAX) {
				f->left -= (uint64_t)n;
				if (f->left == 0)
					f->src_eof = true;
			}
		} else {
			px_give_back(c, got);
			if (n == 0 || (errno != EAGAIN && errno != EINTR))
				f->src_eof = true;
		}
		writable = true;	/* try to pass it on at once */
	}
	if (f->in_pipe > 0 && writable) {
		n = splice(f->pipe[0], NULL, f->dst, NULL, f->in_pipe,
		    SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (n > 0)
			f->in_pipe -= (size_t)n;
		else if (n < 0 && errno != EAGAIN && errno != EINTR) {
			f->src_eof = f->done = true;
			return 0;	/* the reader went away */
		}
	}
	if (f->src_eof && f->in_pipe == 0 && !f->done) {
		f->done = true;
		if (f->half_close)
			(void)shutdown(f->dst, SHUT_WR);
	}
	return 0;
}

/*
 * The relay between the program (cfd) and the server (ufd) until both
 * directions are done (a plain request: the response is done), an
 * error, the idle bound, a cap, or the end of the call.
 */
static void
relay(struct egress_call *c, int cfd, int ufd, uint64_t up_left,
    struct egress_record *r)
{
	struct flow up, down;
	struct pollfd p[3];
	bool plain = up_left != UINT64_MAX;
	int n;

	if (flow_init(&up, cfd, ufd, up_left, &r->bytes_up) < 0) {
		px_set_reason(r, "no pipe for the relay: %s", strerror(errno));
		return;
	}
	if (flow_init(&down, ufd, cfd, UINT64_MAX, &r->bytes_down) < 0) {
		px_set_reason(r, "no pipe for the relay: %s", strerror(errno));
		flow_fini(&up);
		return;
	}
	while (!down.done || !up.done) {
		p[0] = (struct pollfd){ .fd = cfd, .events = 0 };
		p[1] = (struct pollfd){ .fd = ufd, .events = 0 };
		p[2] = (struct pollfd){ .fd = c->stop_efd, .events = POLLIN };
		if (!up.src_eof && up.in_pipe == 0)
			p[0].events |= POLLIN;
		if (down.in_pipe > 0)
			p[0].events |= POLLOUT;
		if (!down.src_eof && down.in_pipe == 0)
			p[1].events |= POLLIN;
		if (up.in_pipe > 0)
			p[1].events |= POLLOUT;
		/* no interest, no wake-up: a hung-up peer must not spin us */
		if (p[0].events == 0)
			p[0].fd = -1;
		if (p[1].events == 0)
			p[1].fd = -1;
		n = poll(p, 3, (int)c->rules->idle_timeout_ms);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			px_set_reason(r, "poll: %s", strerror(errno));
			break;
		}
		if (n == 0) {
			px_set_reason(r, "no byte either way for %u ms "
			    "(idle_timeout_ms)", c->rules->idle_timeout_ms);
			break;
		}
		/*
		 * The call ended: the sandbox is gone, so its side is closed
		 * (killed or done, the call's result says which) and what is
		 * left is the server's close. Not a reason of this record's:
		 * when it was set here, it said only whether the server had
		 * closed first, a race (curl_https saw it one run in ten).
		 */
		if (p[2].revents != 0)
			break;
		if (flow_step(c, &up, r, p[0].revents != 0,
		    p[1].revents & (POLLOUT | POLLERR | POLLHUP)) < 0 ||
		    flow_step(c, &down, r, p[1].revents != 0,
		    p[0].revents & (POLLOUT | POLLERR | POLLHUP)) < 0)
			break;
		/* the server is done: so is a plain request's exchange */
		if (down.done && plain)
			break;
	}
	flow_fini(&up);
	flow_fini(&down);
}

/*
 * The buffered bytes read past a head (or a ClientHello) go on first,
 * counted against the budget.
 */
static int
send_buffered(struct egress_call *c, int ufd, const char *buf, size_t len,
    struct egress_record *r)
{
	if (len == 0)
		return 0;
	if (px_reserve(c, len) < len) {
		px_set_reason(r, "byte cap reached (max_bytes %llu per call)",
		    (unsigned long long)c->rules->max_bytes);
		return -1;
	}
	r->bytes_up += len;
	if (px_send_all(c, ufd, buf, len) < 0) {
		px_set_reason(r, "sending to the server failed");
		return -1;
	}
	return 0;
}

/* host[:port] of a Host header against the target (both normalised). */
static bool
host_header_matches(const struct egress_request *q, const char *target)
{
	struct egress_request h;
	uint8_t a[16];
	int fam;

	memset(&h, 0, sizeof(h));
	{
		/* reuse the authority rules of the request line */
		char line[sizeof(q->host_hdr) + 32];
		char err[64];
		struct egress_request t;
		int n = snprintf(line, sizeof(line), "GET http://%s/ HTTP/1.1"
		    "\r\n\r\n", q->host_hdr);

		if (n < 0 || (size_t)n >= sizeof(line) ||
		    egress_http_parse(line, (size_t)n, &t, err,
		    sizeof(err)) != 1)
			return false;
		h = t;
	}
	if (egress_host_normalize(h.host, &fam, a) == 0)
		return false;
	return strcmp(h.host, target) == 0 && h.port == q->port;
}

/*
 * A plain request goes on in origin form, one per connection: the
 * request line rewritten, hop-by-hop and proxy headers dropped,
 * "Connection: close" added, then exactly the body its Content-Length
 * says. Nothing after it reaches the server, so a second request on the
 * same connection (to another Host) never does.
 */
static int
forward_plain(struct egress_call *c, int ufd, const char *buf, size_t len,
    const struct egress_request *q, struct egress_record *r,
    uint64_t *body_left, uint32_t mask, struct egress_scrub *sc)
{
	static const char *const drop[] = { "proxy-connection",
	    "proxy-authorization", "connection", "keep-alive", "te",
	    "upgrade", NULL };
	char *out, hv[EGRESS_MAX_HOST + 9];	/* [host]:port */
	size_t w = 0, cap = q->head_len + 128;
	const char *p = buf + q->hdr_off, *end = buf + q->head_len - 2, *eol;
	int n, rc, i;

	if ((out = malloc(cap)) == NULL) {
		px_set_reason(r, "out of memory");
		return -1;
	}
	/* origin form: the path, "/" when there is none (or only a query) */
	n = snprintf(out, cap, "%s %s%.*s HTTP/1.%d\r\n", q->method,
	    q->path_len == 0 || buf[q->path_off] == '?' ? "/" : "",
	    (int)q->path_len, buf + q->path_off, q->minor);
	w = (size_t)n;
	if (!q->has_host) {
		/* RFC 9112 3.2.2: the target's authority, as the server
		 * would read it from the URL */
		if (egress_http_host_value(r->host, q->port, hv,
		    sizeof(hv)) < 0) {
			px_set_reason(r, "the target's host does not fit a Host "
			    "header");
			free(out);
			return -1;
		}
		n = snprintf(out + w, cap - w, "Host: %s\r\n", hv);
		w += (size_t)n;
	}
	for (; p < end; p = eol + 2) {
		const char *colon;
		bool skip = false;

		eol = memchr(p, '\r', (size_t)(end - p));
		colon = memchr(p, ':', (size_t)(eol - p));
		for (i = 0; drop[i] != NULL; i++)
			if ((size_t)(colon - p) == strlen(drop[i]) &&
			    strncasecmp(p, drop[i], strlen(drop[i])) == 0)
				skip = true;
		if (skip)
			continue;
		memcpy(out + w, p, (size_t)(eol - p) + 2);
		w += (size_t)(eol - p) + 2;
	}
	memcpy(out + w, "Connection: close\r\n\r\n", 21);
	w += 21;
	if (mask != 0) {
		/* a bound secret's host (allow_http): its swap and header */
		char *sw;
		size_t sl;

		if (px_rewrite_head(c, out, w, mask, r->host, q->port, 80,
		    sc, &sw, &sl, r) < 0) {
			free(out);
			return -1;
		}
		free(out);
		out = sw;
		w = sl;
	}
	rc = send_buffered(c, ufd, out, w, r);
	free(out);
	if (rc < 0)
		return -1;
	*body_left = q->has_length ? q->content_length : 0;
	/* the body bytes already read, at most what it announced */
	if (len > q->head_len) {
		size_t extra = len - q->head_len;

		if (extra > *body_left)
			extra = (size_t)*body_left;
		if (send_buffered(c, ufd, buf + q->head_len, extra, r) < 0)
			return -1;
		*body_left -= extra;
	}
	return 0;
}

/*
 * After "200 Connection established": the first bytes, by what the port
 * may carry (egress_tunnel_proto()). TLS, the default: the program's
 * ClientHello must name the CONNECT host (or none, for an address: an
 * SSLv2-format one never names one, so it passes for an address only),
 * and anything else is refused, a server that speaks first too (an HTTP
 * request's Host, which a shared front end routes by, would go unchecked:
 * plain HTTP goes as a plain request). SSH: "SSH-" first, from either
 * side. Any: the operator's word, nothing read. Returns 0 with what was
 * read forwarded, or -1 with the reason set.
 */
static int
check_tunnel(struct egress_call *c, int cfd, int ufd, const char *host,
    uint16_t port, int lit, struct egress_record *r)
{
	enum egress_tunnel_proto proto = egress_tunnel_proto(c->rules, port);
	struct pollfd p[3];
	char sni[EGRESS_MAX_HOST + 1];
	uint8_t *buf;
	size_t len = 0;
	ssize_t n;
	int rc = -2, k;
	bool tls = false, v2 = false;

	if (proto == EGRESS_TUNNEL_ANY)
		return 0;
	if ((buf = malloc(EGRESS_MAX_HELLO)) == NULL) {
		px_set_reason(r, "out of memory");
		return -1;
	}
	while (rc == -2 && len < EGRESS_MAX_HELLO) {
		p[0] = (struct pollfd){ .fd = cfd, .events = POLLIN };
		p[1] = (struct pollfd){ .fd = len == 0 ? ufd : -1,
		    .events = POLLIN };
		p[2] = (struct pollfd){ .fd = c->stop_efd, .events = POLLIN };
		k = poll(p, 3, (int)c->rules->idle_timeout_ms);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0 || p[2].revents != 0) {
			px_set_reason(r, k == 0 ? "no byte either way for %u ms "
			    "(idle_timeout_ms)" : "the call ended",
			    c->rules->idle_timeout_ms);
			free(buf);
			return -1;
		}
		if (len == 0 && p[1].revents != 0 && p[0].revents == 0) {
			free(buf);
			if (proto == EGRESS_TUNNEL_SSH)
				return 0;	/* its banner comes first */
			px_set_reason(r, "the server at port %u spoke first: a "
			    "CONNECT tunnel there carries TLS only (%s)",
			    (unsigned)port, EGRESS_TUNNEL_HINT);
			return -1;
		}
		n = recv(cfd, buf + len, EGRESS_MAX_HELLO - len, 0);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		if (proto == EGRESS_TUNNEL_SSH) {
			if (len >= 4 || memcmp(buf, "SSH-", len) != 0)
				rc = len >= 4 && memcmp(buf, "SSH-", 4) == 0 ?
				    1 : -1;
			continue;
		}
		/*
		 * Any TLS record type (RFC 8446 5.1: change_cipher_spec 20 to
		 * heartbeat 24) is TLS, and its first record must be the
		 * hello: one before it (a warning alert, which some servers
		 * skip) would carry the hello past this check.
		 */
		tls = buf[0] >= 0x14 && buf[0] <= 0x18;
		if (buf[0] >= 0x80) {
			/*
			 * SSLv2's record header (high bit set, RFC 6101 E.2):
			 * its hello has no extensions, so no server name.
			 */
			tls = v2 = true;
			rc = 0;
		} else if (tls)
			rc = egress_tls_sni(buf, len, sni);
		else
			rc = -1;	/* not TLS: decided */
	}
	if (len == 0) {
		free(buf);
		return 0;	/* it closed before a byte: nothing went */
	}
	if (proto == EGRESS_TUNNEL_SSH && rc != 1) {
		px_set_reason(r, "a CONNECT tunnel to port %u carries SSH only "
		    "(\"SSH-\" first)", (unsigned)port);
		free(buf);
		return -1;
	}
	if (proto == EGRESS_TUNNEL_TLS && !tls) {
		if (egress_http_sniff(buf, len) == 1)
			px_set_reason(r, "an HTTP request inside a CONNECT tunnel "
			    "is refused (its Host header would go unchecked): "
			    "send http:// URLs to the proxy as plain requests");
		else
			px_set_reason(r, "a CONNECT tunnel to port %u carries TLS "
			    "only, whose ClientHello names '%s' (%s)",
			    (unsigned)port, host, EGRESS_TUNNEL_HINT);
		free(buf);
		return -1;
	}
	if (tls) {
		if (rc == 1) {
			int fam;
			uint8_t a[16];

			if (egress_host_normalize(sni, &fam, a) == 0 ||
			    strcmp(sni, host) != 0) {
				px_set_reason(r, "TLS server name '%s' differs "
				    "from the CONNECT host '%s'", sni, host);
				free(buf);
				return -1;
			}
		} else if (rc == 0 && lit != 2) {
			px_set_reason(r, v2 ? "an SSLv2-format ClientHello, which "
			    "cannot carry a server name, for '%s'" : "a TLS "
			    "ClientHello without a server name for '%s'", host);
			free(buf);
			return -1;
		} else if (rc < 0) {
			px_set_reason(r, "a TLS ClientHello the proxy cannot "
			    "read");
			free(buf);
			return -1;
		}
	}
	rc = send_buffered(c, ufd, (const char *)buf, len, r);
	free(buf);
	return rc;
}

static void
serve(struct egress_call *c, int cfd, struct egress_record *r)
{
	struct egress_request q;
	struct egress_verdict v;
	char *buf, host[EGRESS_MAX_HOST + 3];
	uint8_t a[16];
	size_t len = 0;
	uint64_t body_left = UINT64_MAX;
	uint32_t mask;
	int status = 0, ufd = -1, fam, lit;

	if ((buf = malloc(EGRESS_MAX_HEAD + 1)) == NULL) {
		px_set_reason(r, "out of memory");
		return;
	}
	if (read_head(c, cfd, buf, &len, &q, r, &status) == 0) {
		px_refuse(c, cfd, r, status);
		goto out;
	}
	(void)snprintf(r->method, sizeof(r->method), "%s", q.method);
	(void)snprintf(host, sizeof(host), "%s", q.host);
	lit = egress_host_normalize(host, &fam, a);
	(void)snprintf(r->host, sizeof(r->host), "%s", lit != 0 ? host :
	    q.host);
	r->port = q.port;
	egress_decide(c->rules, q.host, q.port, &v);
	if (v.rule != NULL)
		(void)snprintf(r->rule, sizeof(r->rule), "%s", v.rule->text);
	if (!v.allowed && askable(c->rules, &v, q.host, q.port)) {
		/* the user may let it through now (2025-11-25), else the model
		 * is told how to ask */
		if (c->asker.ask != NULL && c->asker.ask(c->asker.arg, host,
		    q.port)) {
			v.allowed = true;
			(void)snprintf(r->rule, sizeof(r->rule),
			    "(the user's approval)");
		} else {
			px_set_reason(r, "%s; %s", v.reason, c->asker.ask != NULL ?
			    "the user did not allow it" : "the user may be "
			    "asked for it: call again with allow_domains "
			    "naming it");
			px_refuse(c, cfd, r, 403);
			goto out;
		}
	}
	if (!v.allowed) {
		px_set_reason(r, "%s", v.reason);
		px_refuse(c, cfd, r, 403);
		goto out;
	}
	if (!q.connect) {
		if (q.has_host && !host_header_matches(&q, host)) {
			px_set_reason(r, "Host header '%s' differs from the "
			    "request target '%s:%u'", q.host_hdr, host, q.port);
			px_refuse(c, cfd, r, 403);
			goto out;
		}
		if (q.chunked) {
			px_set_reason(r, "a request body with Transfer-Encoding "
			    "is not forwarded (send Content-Length)");
			px_refuse(c, cfd, r, 411);
			goto out;
		}
	}
	mask = egress_secrets_bound(c->rules->secrets, host, q.port);
	if (!q.connect && mask != 0 && px_plain_allowed(c, cfd, mask, host,
	    r) < 0)
		goto out;
	if ((ufd = dial(c, host, q.port, r, &status)) < 0) {
		px_refuse(c, cfd, r, status);
		goto out;
	}
	r->allowed = true;
	if (q.connect && mask != 0) {
		if (len > q.head_len) {
			px_set_reason(r, "data sent before the tunnel was open");
			px_refuse(c, cfd, r, 400);
			goto out;
		}
		px_intercept_tunnel(c, cfd, ufd, host, q.port, mask, r);
		goto out;
	}
	if (!q.connect && mask != 0) {
		struct egress_scrub *sc = malloc(sizeof(*sc));

		if (sc == NULL) {
			px_set_reason(r, "out of memory");
			px_refuse(c, cfd, r, 503);
			goto out;
		}
		egress_scrub_init(sc, c->rules->secrets, mask);
		if (forward_plain(c, ufd, buf, len, &q, r, &body_left,
		    mask, sc) == 0)
			px_relay_scrubbed(c, cfd, ufd, NULL, NULL, body_left,
			    sc, r);
		else if (r->status >= 400)
			px_refuse(c, cfd, r, r->status);
		explicit_bzero(sc, sizeof(*sc));
		free(sc);
		goto out;
	}
	if (q.connect) {
		static const char ok[] =
		    "HTTP/1.1 200 Connection established\r\n\r\n";

		r->status = 200;
		if (px_send_all(c, cfd, ok, sizeof(ok) - 1) < 0)
			goto out;
		/* bytes the program sent before our answer: the hello */
		if (len > q.head_len) {
			px_set_reason(r, "data sent before the tunnel was open");
			r->allowed = false;
			goto out;
		}
		if (check_tunnel(c, cfd, ufd, host, q.port, lit, r) < 0) {
			r->allowed = false;
			goto out;
		}
	} else if (forward_plain(c, ufd, buf, len, &q, r, &body_left, 0,
	    NULL) < 0)
		goto out;
	free(buf);
	buf = NULL;
	relay(c, cfd, ufd, body_left, r);
 out:
	free(buf);
	close_fd(&ufd);
}

static void *
conn_main(void *arg)
{
	struct conn *k = arg;

	serve(k->call, k->cfd, k->rec);
	close_fd(&k->cfd);
	(void)atomic_fetch_sub(&tunnels_open, 1);
	return NULL;
}

/* Beyond the connection cap: read the request, answer 403. */
static void *
refuser_main(void *arg)
{
	struct refuser *k = arg;
	struct egress_call *c = k->call;
	struct egress_record *r = k->rec;
	struct egress_request q;
	char *buf;
	size_t len;
	int status;

	if ((buf = malloc(EGRESS_MAX_HEAD + 1)) != NULL &&
	    read_head(c, k->cfd, buf, &len, &q, r, &status) == 1) {
		(void)snprintf(r->method, sizeof(r->method), "%s", q.method);
		(void)snprintf(r->host, sizeof(r->host), "%s", q.host);
		r->port = q.port;
	}
	free(buf);
	px_set_reason(r, "connection cap reached (max_connections %u per call)",
	    c->rules->max_connections);
	px_refuse(c, k->cfd, r, 403);
	close_fd(&k->cfd);
	atomic_store(&k->done, true);
	return NULL;
}

/*
 * A connection past the cap: the first is recorded, the rest counted;
 * each is answered 403 by a refuser thread while one of the few is free,
 * else closed at once.
 */
static void
over_cap(struct egress_call *c, int cfd)
{
	struct refuser *k = NULL;
	size_t i;

	for (i = 0; i < EGRESS_MAX_REFUSERS && k == NULL; i++) {
		if (!c->refusers[i].used)
			k = &c->refusers[i];
		else if (atomic_load(&c->refusers[i].done)) {
			(void)pthread_join(c->refusers[i].thread, NULL);
			c->refusers[i].used = false;
			k = &c->refusers[i];
		}
	}
	if (c->conn_cap_hit)
		c->not_recorded++;
	if (k == NULL) {
		(void)close(cfd);
		if (!c->conn_cap_hit) {
			c->conn_cap_hit = true;
			px_set_reason(&c->recs[c->nrecs], "connection cap reached "
			    "(max_connections %u per call)",
			    c->rules->max_connections);
			c->nrecs++;
		}
		return;
	}
	memset(&k->scratch, 0, sizeof(k->scratch));
	k->rec = c->conn_cap_hit ? &k->scratch : &c->recs[c->nrecs++];
	c->conn_cap_hit = true;
	k->call = c;
	k->cfd = cfd;
	atomic_store(&k->done, false);
	if (pthread_create(&k->thread, &c->attr, refuser_main, k) != 0) {
		px_set_reason(k->rec, "connection cap reached (max_connections "
		    "%u per call)", c->rules->max_connections);
		(void)close(cfd);
		return;
	}
	k->used = true;
}

static int
open_spare(void)
{
	return open("/dev/null", O_RDONLY | O_CLOEXEC);
}

/*
 * Out of fds (EMFILE, ENFILE): the connection that waits keeps the
 * listener readable, and the run's poll would spin on it. The spare fd is
 * given up to take it: answered 503 and closed, in a slot of its own like
 * any connection (or counted past the cap), and the spare taken again.
 * Returns 0, or EGRESS_ACCEPT_PAUSE_MS when even that fails (no spare, or
 * another thread took the fd it freed).
 */
static int
refuse_no_fd(struct egress_call *c)
{
	struct conn *k;
	int cfd, err;

	close_fd(&c->spare_fd);
	cfd = accept4(c->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (cfd < 0) {
		err = errno;
		c->spare_fd = open_spare();
		return err == EMFILE || err == ENFILE ?
		    EGRESS_ACCEPT_PAUSE_MS : 0;
	}
	if (c->nconns >= c->rules->max_connections) {
		if (c->conn_cap_hit)
			c->not_recorded++;
		else {
			c->conn_cap_hit = true;
			px_set_reason(&c->recs[c->nrecs++], "connection cap "
			    "reached (max_connections %u per call)",
			    c->rules->max_connections);
		}
	} else {
		k = &c->conns[c->nconns++];
		k->call = c;
		k->cfd = -1;
		k->started = false;
		k->rec = &c->recs[c->nrecs++];
		memset(k->rec, 0, sizeof(*k->rec));
		px_set_reason(k->rec, "the server is out of file descriptors");
		px_refuse_how(c, cfd, k->rec, 503, false);
	}
	(void)close(cfd);
	c->spare_fd = open_spare();
	return c->spare_fd < 0 ? EGRESS_ACCEPT_PAUSE_MS : 0;
}

int
egress_call_accept(struct egress_call *c)
{
	struct conn *k;
	unsigned budget;
	int cfd, n = 0, one = 1;

	if (c->lfd < 0 || c->ended)
		return 0;
	if (c->spare_fd < 0)
		c->spare_fd = open_spare();
	while (n < EGRESS_ACCEPT_BATCH) {
		cfd = accept4(c->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (cfd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;	/* all taken */
			if (errno == ENOBUFS || errno == ENOMEM)
				return EGRESS_ACCEPT_PAUSE_MS;
			n++;
			if ((errno == EMFILE || errno == ENFILE) &&
			    refuse_no_fd(c) != 0)
				return EGRESS_ACCEPT_PAUSE_MS;
			continue;	/* else that connection's error: gone */
		}
		n++;
		fix_buffers(cfd);
		/*
		 * What the proxy writes to the program goes at once: with
		 * Nagle a reply's second segment waited for the program's
		 * delayed ACK, 40 ms on every fetch whose server wrote its
		 * headers and body apart (measured, secrets_bench.py).
		 */
		(void)setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one,
		    sizeof(one));
		if (c->nconns >= c->rules->max_connections) {
			over_cap(c, cfd);
			continue;
		}
		/*
		 * The slot and its record are taken, thread or not: records
		 * hold max_connections + 1 (the cap's), no more.
		 */
		k = &c->conns[c->nconns++];
		k->call = c;
		k->cfd = cfd;
		k->rec = &c->recs[c->nrecs++];
		memset(k->rec, 0, sizeof(*k->rec));
		budget = egress_tunnel_budget();
		if (atomic_fetch_add(&tunnels_open, 1) >= budget) {
			(void)atomic_fetch_sub(&tunnels_open, 1);
			k->started = false;
			px_set_reason(k->rec, "the server's descriptors for "
			    "tunnels are in use: %u tunnels (of %u fds each, "
			    "1/%u of its RLIMIT_NOFILE)", budget,
			    EGRESS_FDS_PER_TUNNEL, EGRESS_FD_SHARE);
			px_refuse_how(c, cfd, k->rec, 503, false);
			close_fd(&k->cfd);
			continue;
		}
		k->started = pthread_create(&k->thread, &c->attr, conn_main,
		    k) == 0;
		if (!k->started)
			(void)atomic_fetch_sub(&tunnels_open, 1);
		if (!k->started) {
			/* this thread also runs the sandbox: no waiting here */
			px_set_reason(k->rec, "the proxy could not start a thread "
			    "for this connection");
			px_refuse_how(c, cfd, k->rec, 503, false);
			close_fd(&k->cfd);
		}
	}
	return 0;
}

struct egress_call *
egress_call_new(const struct egress_rules *rules)
{
	struct egress_call *c;
	size_t n = rules->max_connections;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->rules = rules;
	c->lfd = -1;
	c->spare_fd = open_spare();
	c->conns = calloc(n, sizeof(*c->conns));
	c->recs = calloc(n + 1, sizeof(*c->recs));
	c->stop_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if ((c->lookups = calloc(1, sizeof(*c->lookups))) != NULL) {
		atomic_init(&c->lookups->refs, 1);
		atomic_init(&c->lookups->running, 0);
	}
	atomic_init(&c->bytes, 0);
	atomic_init(&c->byte_cap_hit, false);
	if (c->conns == NULL || c->recs == NULL || c->stop_efd < 0 ||
	    c->lookups == NULL || pthread_attr_init(&c->attr) != 0) {
		free(c->lookups);
		free(c->conns);
		free(c->recs);
		if (c->stop_efd >= 0)
			(void)close(c->stop_efd);
		close_fd(&c->spare_fd);
		free(c);
		return NULL;
	}
	(void)pthread_attr_setstacksize(&c->attr, EGRESS_THREAD_STACK);
	return c;
}

int
egress_call_start(struct egress_call *c, int lfd)
{
	int fl;

	if (c->lfd >= 0 || c->ended)
		return -EBUSY;
	if ((fl = fcntl(lfd, F_GETFL)) < 0 ||
	    fcntl(lfd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	c->lfd = lfd;
	return 0;
}

void
egress_call_set_asker(struct egress_call *c, const struct egress_asker *a)
{
	c->asker = *a;
}

void
egress_call_end(struct egress_call *c)
{
	uint64_t one = 1;
	size_t i;

	if (c == NULL || c->ended)
		return;
	c->ended = true;
	if (c->asker.abort != NULL)
		c->asker.abort(c->asker.arg);	/* no connection waits on one */
	(void)!write(c->stop_efd, &one, sizeof(one));
	for (i = 0; i < c->nconns; i++)
		if (c->conns[i].started)
			(void)pthread_join(c->conns[i].thread, NULL);
	for (i = 0; i < EGRESS_MAX_REFUSERS; i++)
		if (c->refusers[i].used)
			(void)pthread_join(c->refusers[i].thread, NULL);
	c->lfd = -1;		/* the sandbox's */
}

const struct egress_record *
egress_call_records(const struct egress_call *c, size_t *n)
{
	*n = c->ended ? c->nrecs : 0;
	return c->recs;
}

void
egress_call_totals(const struct egress_call *c, struct egress_totals *t)
{
	size_t i;

	memset(t, 0, sizeof(*t));
	if (!c->ended)
		return;
	for (i = 0; i < c->nrecs; i++) {
		t->bytes_up += c->recs[i].bytes_up;
		t->bytes_down += c->recs[i].bytes_down;
		if (!c->recs[i].allowed)
			t->refused++;
	}
	t->connections = (uint32_t)c->nrecs + c->not_recorded;
	t->refused += c->not_recorded;
	t->connection_cap_hit = c->conn_cap_hit;
	t->byte_cap_hit = atomic_load(&c->byte_cap_hit);
	t->not_recorded = c->not_recorded;
}

const struct egress_secrets *
egress_call_secrets(const struct egress_call *c)
{
	return c->rules->secrets;
}

void
egress_call_free(struct egress_call *c)
{
	if (c == NULL)
		return;
	egress_call_end(c);
	if (c->stop_efd >= 0)
		(void)close(c->stop_efd);
	close_fd(&c->spare_fd);
	(void)pthread_attr_destroy(&c->attr);
	share_drop(c->lookups);
	free(c->conns);
	free(c->recs);
	free(c);
}
