/*
 * What proxy.c, conn.c and intercept.c share (the secrets' TLS, issue 24): one
 * call's state and the bounded helpers every connection uses. egress/
 * only; egress.h is the interface.
 */
#ifndef EGRESS_PROXY_IMPL_H
#define EGRESS_PROXY_IMPL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egress.h"

/*
 * Threads answering connections past the cap at once: a program looping
 * on connect() gets 403s from these few and closed sockets beyond them.
 */
#define EGRESS_MAX_REFUSERS	4

struct conn {
	struct egress_call *call;
	pthread_t thread;
	bool started;			/* thread runs (or ran): join it */
	int cfd;			/* the program's side; the thread's */
	struct egress_record *rec;	/* its own, written by it only */
};

/* A thread answering a connection past the cap. */
struct refuser {
	struct egress_call *call;
	pthread_t thread;
	bool used;		/* thread started, not joined yet */
	atomic_bool done;	/* it has closed its connection */
	int cfd;
	struct egress_record *rec;	/* the call's, or scratch */
	struct egress_record scratch;
};

struct egress_call {
	const struct egress_rules *rules;	/* borrowed */
	struct lookup_share *lookups;	/* one ref is the call's */
	int lfd;			/* listening, in the sandbox's netns; borrowed */
	int stop_efd;			/* readable once the call ends */
	int spare_fd;			/* given up to refuse when out of fds */
	pthread_attr_t attr;		/* connection threads' */
	bool ended;
	struct conn *conns;		/* max_connections */
	size_t nconns;			/* the accepting thread's */
	struct refuser refusers[EGRESS_MAX_REFUSERS];
	struct egress_record *recs;	/* max_connections + 1 */
	size_t nrecs;
	bool conn_cap_hit;
	uint32_t not_recorded;
	_Atomic uint64_t bytes;		/* reserved against max_bytes */
	atomic_bool byte_cap_hit;
	struct egress_asker asker;	/* all NULL: none */
};

/* Reserves up to want bytes of the call's budget: how many (0: the cap). */
uint64_t px_reserve(struct egress_call *c, uint64_t want);
void px_give_back(struct egress_call *c, uint64_t n);
/* fd ready for events, or -ECANCELED (the call ended), -ETIMEDOUT (idle). */
int px_wait_fd(const struct egress_call *c, int fd, short events);
/* All of buf to a non-blocking socket within the idle bound. */
int px_send_all(const struct egress_call *c, int fd, const char *buf,
    size_t len);
void px_set_reason(struct egress_record *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/*
 * The proxy's own answer with status and the record's reason (conn.c);
 * wait: write it within the idle bound and linger, else one try.
 */
void px_refuse_how(struct egress_call *c, int cfd, struct egress_record *r,
    int status, bool wait);
void px_refuse(struct egress_call *c, int cfd, struct egress_record *r,
    int status);

/*
 * intercept.c: a CONNECT tunnel (ufd connected) to a host secrets in mask
 * are bound to: the program's TLS ended with a certificate of the
 * proxy's CA, the real host's checked, one request's head rewritten
 * (px_rewrite_head), the answer scrubbed of the values. Serves the
 * exchange to its end; the record says what happened.
 */
void px_intercept_tunnel(struct egress_call *c, int cfd, int ufd,
    const char *host, uint16_t port, uint32_t mask, struct egress_record *r);
/* A plain request a secret in mask keeps to HTTPS: refused, -1. */
int px_plain_allowed(struct egress_call *c, int cfd, uint32_t mask,
    const char *host, struct egress_record *r);
/*
 * A request head head[0..len) (origin form, CRLFCRLF-terminated) to
 * host:port, rewritten for the secrets in mask: the Host must name
 * host (def_port when it gives none), placeholders become values, each
 * secret's header is set, Accept-Encoding and Connection go and
 * "Connection: close" ends it. *ret (owned) and *ret_len; -1 with the
 * record's reason and status set (the caller answers).
 */
int px_rewrite_head(struct egress_call *c, const char *head, size_t len,
    uint32_t mask, const char *host, uint16_t port, uint16_t def_port,
    struct egress_scrub *sc, char **ret, size_t *ret_len,
    struct egress_record *r);
/*
 * The exchange after the head: the program's bytes to the server as they
 * are (at most up_left, UINT64_MAX: to its end), the server's to the
 * program with every value in mask replaced by its placeholder, until
 * the server ends. ck, uk: the TLS of each side, or NULL for the socket.
 * sc: the scrubber, set up (and given the Basic forms) by the caller.
 */
struct egress_tls_conn;
void px_relay_scrubbed(struct egress_call *c, int cfd, int ufd,
    struct egress_tls_conn *ck, struct egress_tls_conn *uk, uint64_t up_left,
    struct egress_scrub *sc, struct egress_record *r);

#endif /* EGRESS_PROXY_IMPL_H */
