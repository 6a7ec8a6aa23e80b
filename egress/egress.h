/*
 * egress: the filtering proxy behind a sandbox's network. A sandbox that
 * may reach the network keeps its own empty network namespace; its init
 * listens on 127.0.0.1:SB_PROXY_PORT inside it and hands that listening
 * socket to the server at launch (sandbox/). egress_call_start() accepts
 * on it from a thread of the server, so every connection the program makes
 * to its proxy is served here, outside the sandbox, against the rules:
 * CONNECT (the CONNECT host is checked, then the TLS server name against
 * it) and plain HTTP (absolute target, Host checked against it, forwarded
 * as one request). Names are resolved here, after the check; the address
 * actually connected to is checked again. Links libc and pthreads only:
 * no JSON (tools/ renders the records), nothing of MCP.
 */
#ifndef EGRESS_H
#define EGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A DNS name's longest text form (RFC 1035: 253 without the root dot). */
#define EGRESS_MAX_HOST		253
/* Rules per list: a policy names registries and forges, not the web. */
#define EGRESS_MAX_RULES	128
/* --resolve pins: one per name and port an operator routes by hand. */
#define EGRESS_MAX_PINS		32
/* A rule as written ("*.example.com:8443", "[fd00::/8]:*"). */
#define EGRESS_MAX_PATTERN	(EGRESS_MAX_HOST + 16)
/*
 * The request head the proxy reads before it decides: request line and
 * headers. 16 KiB is what common servers accept (nginx's large buffers
 * are 8 KiB a line); a client proxy request is a few hundred bytes.
 */
#define EGRESS_MAX_HEAD		16384
/* Header lines of one request head. */
#define EGRESS_MAX_HEADERS	100
/* A TLS record is at most 16 KiB plus its 5-byte header (RFC 8446 5.1). */
#define EGRESS_MAX_HELLO	(16384 + 5)
/* Text of a refusal or an ending, as the model reads it: room for a
 * name, a rule and an address in one sentence. */
#define EGRESS_MAX_REASON	640
/* The method of a request line, as recorded. */
#define EGRESS_MAX_METHOD	16

/* Default bounds of one call (policy network.* overrides them). */
#define EGRESS_DEFAULT_CONNECTIONS	64	/* a pip install opens a few */
#define EGRESS_DEFAULT_BYTES		(1024ull << 20)	/* a big wheel or two */
#define EGRESS_DEFAULT_IDLE_MS		30000	/* a slow registry answers */
/* The most a policy may set them to. */
#define EGRESS_MAX_CONNECTIONS		1024	/* records are kept for each */
#define EGRESS_MAX_IDLE_MS		600000
/*
 * Name lookups in flight in the server, all calls together. A lookup runs
 * on a detached thread of its own (getaddrinfo() takes no time bound and
 * cannot be interrupted), and one the connection stopped waiting for
 * lives on until the resolver gives up, which its settings may put
 * minutes away: a thread, its stack and a socket each. A program that
 * connects in a loop to names under an allowed wildcard whose DNS it
 * controls could otherwise pile them up past any call's end; 64 is far
 * more than package managers resolve at once (a lookup takes
 * milliseconds), and past it a connection gets a 503 at once.
 */
#define EGRESS_MAX_LOOKUPS		64
/*
 * A call's share of them, those it stopped waiting for included (they
 * still hold a slot until the resolver gives up, after the call too):
 * one call alone cannot take every slot from the others. Four calls that
 * each left their share behind can, until the resolver gives up; that is
 * the residual, until the resolver gives up on them (Debian's defaults,
 * timeout:5 attempts:2: 10 s per nameserver, at most three).
 */
#define EGRESS_CALL_LOOKUPS		(EGRESS_MAX_LOOKUPS / 4)
/*
 * The server's descriptors one tunnel holds at most: the program's side,
 * the upstream socket, a name lookup's socket and the files the
 * resolver opens meanwhile (measured: six). Tunnels of all calls
 * together hold at most 1/EGRESS_FD_SHARE of the server's soft
 * RLIMIT_NOFILE (the server raises it to the hard limit at start); the
 * rest is the server's own (sandboxes' channels, HTTP connections,
 * files, other sessions). Past it a new tunnel gets a 503 that says so,
 * before any other call runs out of descriptors.
 */
#define EGRESS_FDS_PER_TUNNEL	6
/*
 * The buffers of each of the proxy's own sockets (both sides of a
 * tunnel), fixed: the kernel's autotuning lets a socket grow to 4-6 MiB
 * each way, and a program that writes into a tunnel whose server never
 * reads (or never reads what it asked for) made the server hold ~14 MiB
 * a tunnel, charged to the server, not the run. The kernel doubles the
 * figure for its bookkeeping: 512 KiB a buffer, 2 MiB and a pipe a
 * tunnel at most; still a 5 MB/s window at 100 ms of round trip.
 */
#define EGRESS_SOCKBUF		(256 * 1024)
#define EGRESS_FD_SHARE		2
/* The tunnels the server's descriptors allow now (see above). */
unsigned egress_tunnel_budget(void);

/*
 * When accept cannot take what waits (out of file descriptors with none
 * spare to refuse with, or the kernel out of memory for the socket): how
 * long the run's poll leaves the listener alone (egress_call_accept's
 * return). The connection that waits keeps it readable, so polling it
 * again at once would spin the supervising thread; 100 ms is a short
 * stall for a program and a few wake-ups a second for the server.
 */
#define EGRESS_ACCEPT_PAUSE_MS		100

/* One allow or deny rule. */
struct egress_pattern {
	char text[EGRESS_MAX_PATTERN + 1];	/* as written, for messages */
	char host[EGRESS_MAX_HOST + 1];	/* lowercase; after "*." if wildcard */
	bool wildcard;		/* "*.host": strict subdomains only */
	bool is_addr;		/* an IP address or CIDR block */
	int family;		/* AF_INET or AF_INET6 when is_addr */
	uint8_t addr[16];	/* network address, family's length */
	unsigned prefix;	/* CIDR prefix length (32 / 128 for one) */
	bool any_port;		/* ":*" */
	uint16_t port;		/* 0: none given */
};

/* curl's --resolve HOST:PORT:ADDR; PORT may be '*'. */
struct egress_pin {
	char host[EGRESS_MAX_HOST + 1];
	uint16_t port;		/* 0: any */
	int family;
	uint8_t addr[16];
	char text[EGRESS_MAX_PATTERN + 48];	/* as written */
};

/*
 * What a CONNECT tunnel may carry. TLS whose ClientHello names the
 * CONNECT host, everywhere but where the operator names another protocol
 * for a port: a sniffer that refused only what looked like HTTP let
 * through requests split on other whitespace (VT, FF) or shaped like
 * HTTP/0.9, which a shared front end serves for a name never allowed.
 */
enum egress_tunnel_proto {
	EGRESS_TUNNEL_TLS,	/* the default */
	EGRESS_TUNNEL_SSH,	/* "SSH-" first, from either side */
	EGRESS_TUNNEL_ANY,	/* anything: the operator's word */
};
struct egress_tunnel {
	uint16_t port;
	enum egress_tunnel_proto proto;
	char text[16];		/* "22:ssh", as written */
};
/* Ports with a protocol of their own: a handful (ssh, a database). */
#define EGRESS_MAX_TUNNELS	16
/* Where a refusal points for another protocol. */
#define EGRESS_TUNNEL_HINT	"an operator can name another protocol for " \
	"a port: network.tunnels, --egress-tunnel PORT:ssh|any"

/*
 * Secrets bound to hosts (issue 24): the sandbox sees a placeholder, and
 * the proxy puts the value in the requests to those hosts only, and takes
 * it out of what comes back. The placeholder has the value's length, so a
 * swap never changes a message's framing (Content-Length, chunk sizes):
 * it tells the sandbox the value's length, nothing else.
 */
#define EGRESS_MAX_SECRETS	16	/* a few tokens per server */
#define EGRESS_MAX_SECRET_HOSTS	8	/* a forge and its API, a mirror */
#define EGRESS_MAX_SECRET_NAME	64	/* an environment variable's name */
/*
 * The shortest value: its placeholder is that many random letters and
 * digits, and below 16 (95 bits) one could be guessed or collide with
 * text a response carries anyway.
 */
#define EGRESS_MIN_SECRET	16
/* The longest: a JWT or a PEM-less key, not a file. */
#define EGRESS_MAX_SECRET	4096
#define EGRESS_MAX_SECRET_HEADER	64	/* a header's name */
#define EGRESS_MAX_SECRET_FORMAT	128	/* "Bearer {}" */
#define EGRESS_MAX_SECRET_SOURCE	(4096 + 8)	/* "file:" PATH */

struct egress_secret {
	char name[EGRESS_MAX_SECRET_NAME + 1];
	struct egress_pattern hosts[EGRESS_MAX_SECRET_HOSTS];
	size_t nhosts;
	char source[EGRESS_MAX_SECRET_SOURCE + 1];	/* as written */
	char header[EGRESS_MAX_SECRET_HEADER + 1];	/* "": none */
	char format[EGRESS_MAX_SECRET_FORMAT + 1];	/* with header */
	bool allow_http;		/* plain http:// gets it too */
	char *value;			/* len bytes; wiped at the end */
	char *placeholder;		/* len bytes, random, this run's */
	size_t len;
};

struct egress_tls;
struct egress_secrets {
	struct egress_secret s[EGRESS_MAX_SECRETS];
	size_t n;
	/* the CA and the trust for the real hosts: made when n > 0 */
	struct egress_tls *tls;
};

struct egress_rules {
	struct egress_pattern allow[EGRESS_MAX_RULES];
	size_t nallow;
	struct egress_pattern deny[EGRESS_MAX_RULES];
	size_t ndeny;
	struct egress_pin pins[EGRESS_MAX_PINS];
	size_t npins;
	struct egress_tunnel tunnels[EGRESS_MAX_TUNNELS];
	size_t ntunnels;
	uint32_t max_connections;	/* per call */
	uint64_t max_bytes;		/* per call, both ways together */
	uint32_t idle_timeout_ms;	/* per connection, without a byte */
	/*
	 * What a call may ask its user for (the approvals ceiling: its allow
	 * list), or NULL: a refusal of a name inside it says how to ask
	 * (call again with allow_domains). Never allows anything itself.
	 */
	const struct egress_rules *ceiling;
	/* Secrets bound to hosts, or NULL (nothing is intercepted). */
	const struct egress_secrets *secrets;
};

/* Defaults: empty lists (no network), default bounds. */
void egress_rules_init(struct egress_rules *r);
/* true when the allow list is not empty: sandboxes get the proxy. */
bool egress_rules_enabled(const struct egress_rules *r);

/*
 * Parse one pattern: "name", "*.name", "a.b.c.d", "a.b.c.d/n", "[v6]",
 * "[v6/n]", each with an optional ":PORT" or ":*". 0, or -1 with err
 * saying what is wrong with it.
 */
int egress_pattern_parse(const char *text, struct egress_pattern *ret,
    char *err, size_t errlen) __attribute__((warn_unused_result));
/* Parse HOST:PORT:ADDR (ADDR v4, or v6 with or without brackets). */
int egress_pin_parse(const char *text, struct egress_pin *ret, char *err,
    size_t errlen) __attribute__((warn_unused_result));

/* Appends to the lists; -1 with err when full or malformed. */
int egress_rules_allow(struct egress_rules *r, const char *text, char *err,
    size_t errlen) __attribute__((warn_unused_result));
int egress_rules_deny(struct egress_rules *r, const char *text, char *err,
    size_t errlen) __attribute__((warn_unused_result));
int egress_rules_pin(struct egress_rules *r, const char *text, char *err,
    size_t errlen) __attribute__((warn_unused_result));
/* "PORT:PROTO" (tls, ssh, any): what a tunnel to PORT may carry. */
int egress_rules_tunnel(struct egress_rules *r, const char *text, char *err,
    size_t errlen) __attribute__((warn_unused_result));
enum egress_tunnel_proto egress_tunnel_proto(const struct egress_rules *r,
    uint16_t port);

/*
 * Normalise a request's host in place: lowercase, one trailing dot
 * dropped, brackets of a v6 literal removed. Returns 1 for a name, 2 for
 * an IP literal (*family and addr set), 0 when it is neither (refused).
 */
int egress_host_normalize(char *host, int *family, uint8_t addr[16]);

/* Whether one pattern allows host:port, as an allow rule would. */
bool egress_pattern_covers(const struct egress_pattern *p, const char *host,
    uint16_t port);

/* What the rules say about one host and port. */
struct egress_verdict {
	bool allowed;
	const struct egress_pattern *rule;	/* the deciding rule, or NULL */
	char reason[EGRESS_MAX_REASON];		/* when refused */
};

/* host normalised (egress_host_normalize). */
void egress_decide(const struct egress_rules *r, const char *host,
    uint16_t port, struct egress_verdict *v);

/*
 * Kinds of address the proxy will not connect to unless pinned or allowed
 * by address; NULL for a public one. "loopback", "private", "link-local",
 * "unique-local", "multicast", "unspecified", "reserved", ...
 */
const char *egress_addr_class(int family, const uint8_t *addr);
/*
 * The deny list's address rule covering addr (whatever its port: a name's
 * address is refused outright), or NULL. It wins over pins and allows.
 */
const struct egress_pattern *egress_addr_denied(const struct egress_rules *r,
    int family, const uint8_t *addr);
/* true when an address rule of the allow list covers addr. */
bool egress_addr_allowed(const struct egress_rules *r, int family,
    const uint8_t *addr);

/* ---- the request parser (http.c): pure, bounded, fuzzed ---- */

struct egress_request {
	char method[EGRESS_MAX_METHOD];
	bool connect;			/* CONNECT authority */
	char host[EGRESS_MAX_HOST + 3];	/* as in the target (v6 bracketed) */
	uint16_t port;
	/* plain HTTP: the path (origin form) within the head buffer */
	size_t path_off, path_len;
	int minor;			/* HTTP/1.minor */
	size_t head_len;		/* bytes of the head with its CRLFCRLF */
	/* header lines [hdr_off, end of headers), each checked */
	size_t hdr_off;
	bool has_host;
	char host_hdr[EGRESS_MAX_HOST + 9];	/* Host: value, as sent */
	bool has_length;
	uint64_t content_length;
	bool chunked;			/* any Transfer-Encoding */
};

/*
 * Parses the request head in buf[0..len). Returns 1 when complete (*req
 * filled), 0 when more bytes are needed (and len < EGRESS_MAX_HEAD), -1
 * when malformed, with err saying why (a request line that is not
 * "METHOD target HTTP/1.x", a target that is not absolute, a header line
 * without a colon, a bare CR, too many headers, a second Content-Length).
 */
int egress_http_parse(const char *buf, size_t len, struct egress_request *req,
    char *err, size_t errlen) __attribute__((warn_unused_result));

/*
 * The server name of a TLS ClientHello in buf[0..len). Returns 1 with
 * name set (lowercase, NUL-terminated), 0 when the hello has none, -2
 * when more bytes are needed, -1 when buf is not a ClientHello (then it
 * is not TLS, or not one the proxy can read).
 */
int egress_tls_sni(const uint8_t *buf, size_t len, char name[EGRESS_MAX_HOST + 1]);

/*
 * Whether the first bytes of a CONNECT tunnel, buf[0..len), are an HTTP
 * request line (HTTP/1.x, or HTTP/2's "PRI * HTTP/2.0"): 1 when they are
 * (or are still undecided at EGRESS_MAX_HEAD bytes), 0 when they cannot
 * be, -2 when more bytes are needed. A request in a tunnel names its
 * Host where the proxy does not look: it goes as a plain request instead.
 */
int egress_http_sniff(const uint8_t *buf, size_t len);
/*
 * The Host value of an http:// target the proxy forwards (host
 * normalised): an IPv6 address bracketed, the port unless it is 80.
 * The length written (out is NUL-terminated), or -1 when it does not fit.
 */
int egress_http_host_value(const char *host, unsigned port, char *out,
    size_t outlen);

/* ---- secrets (secret.c): pure but for the random placeholder ---- */

/*
 * Takes value[0..len) (copied; the caller wipes its own) for s and draws
 * its placeholder. -1 with err when the value is too short or long, or
 * holds a byte a header cannot carry (a control byte, a space, non-ASCII).
 */
int egress_secret_set(struct egress_secret *s, const char *value, size_t len,
    char *err, size_t errlen) __attribute__((warn_unused_result));
/* Wipes and frees every value and placeholder. */
void egress_secrets_wipe(struct egress_secrets *ss);
/* Bitmask of the secrets bound to host:port (host normalised). */
uint32_t egress_secrets_bound(const struct egress_secrets *ss,
    const char *host, uint16_t port);
/* The first secret with the placeholder in buf[0..len), or -1. */
int egress_secrets_find(const struct egress_secrets *ss, uint32_t mask,
    const char *buf, size_t len, bool placeholder);

/*
 * Replaces, in buf[0..len) in place, every placeholder of the secrets in
 * mask by its value. Returns the mask of those replaced.
 */
uint32_t egress_swap_in(const struct egress_secrets *ss, uint32_t mask,
    char *buf, size_t len);

/*
 * The other way, on a stream: every value of the secrets in mask becomes
 * its placeholder, across the boundaries of the chunks it arrives in.
 * egress_scrub_feed() writes as many bytes out as it keeps back less
 * (the tail that may begin a value): out must hold len + the longest
 * value. egress_scrub_end() writes what is kept back. Same lengths in,
 * same lengths out overall.
 */
/*
 * Other forms of a value one connection sent (the base64 of Basic
 * credentials with a value inside), each replaced by the form the
 * program sent: a few a request.
 */
#define EGRESS_SCRUB_EXTRA	4
struct egress_scrub {
	const struct egress_secrets *ss;
	uint32_t mask;
	char keep[EGRESS_MAX_SECRET];	/* the kept-back tail */
	size_t nkeep;
	uint32_t hits;			/* mask of values seen */
	struct {
		char from[EGRESS_MAX_SECRET], to[EGRESS_MAX_SECRET];
		size_t len;
		uint32_t mask;		/* the secrets inside */
	} extra[EGRESS_SCRUB_EXTRA];
	size_t nextra;
};
void egress_scrub_init(struct egress_scrub *sc, const struct egress_secrets *ss,
    uint32_t mask);
/* One more from -> to (len <= EGRESS_MAX_SECRET); false when full. */
bool egress_scrub_pair(struct egress_scrub *sc, const char *from,
    const char *to, size_t len, uint32_t mask);
size_t egress_scrub_feed(struct egress_scrub *sc, const char *in, size_t len,
    char *out);
size_t egress_scrub_end(struct egress_scrub *sc, char *out);

/* ---- one call's proxy (proxy.c) ---- */

/* One connection the program made to its proxy. */
struct egress_record {
	char method[EGRESS_MAX_METHOD];	/* "CONNECT", "GET", ... or "" */
	char host[EGRESS_MAX_HOST + 3];	/* "" when the request was unreadable */
	uint16_t port;
	bool allowed;			/* the rules let it through */
	char rule[EGRESS_MAX_PATTERN + 1];	/* the rule that decided, or "" */
	char addr[64];			/* "[v6]:port" connected to, or "" */
	int status;			/* the proxy's own answer: 200, 403... */
	char reason[EGRESS_MAX_REASON];	/* why refused, or what ended it */
	uint64_t bytes_up;		/* program -> server */
	uint64_t bytes_down;		/* server -> program */
	bool intercepted;		/* the proxy ended the program's TLS */
	uint32_t secrets;		/* mask of the secrets added */
};

struct egress_call;

/*
 * The proxy of one call, under rules (borrowed; they outlive the call).
 * NULL on allocation failure.
 */
struct egress_call *egress_call_new(const struct egress_rules *rules);

/*
 * Who may let one more host through while the call runs (the approvals
 * of 2025-11-25: the user is asked). ask() runs on a connection's thread
 * for a host:port the rules refuse by no rule (never a deny) and the
 * ceiling covers; it may block, and returns true to let that connection
 * through (the address checks still apply). egress_call_end() calls
 * abort() first, after which a blocked ask() returns false and no new
 * one blocks. Set before egress_call_start(); all NULL: none.
 */
struct egress_asker {
	bool (*ask)(void *arg, const char *host, uint16_t port);
	void (*abort)(void *arg);
	void *arg;
};
void egress_call_set_asker(struct egress_call *c, const struct egress_asker *a);
/*
 * Serve the listening socket lfd (borrowed: the sandbox closes it after
 * egress_call_end()) until egress_call_end(). 0, or a negative errno.
 * No thread waits on it: egress_call_accept() takes what is waiting
 * (never blocks), called when lfd is readable (SB_NET_READY); each
 * connection gets a thread of its own. Returns 0, or (it cannot take
 * what waits: see EGRESS_ACCEPT_PAUSE_MS) how many ms the caller should
 * leave lfd unpolled: SB_NET_READY's pause.
 */
int egress_call_start(struct egress_call *c, int lfd);
int egress_call_accept(struct egress_call *c);
/* Stop, end every connection, join every thread. Idempotent. */
void egress_call_end(struct egress_call *c);
/* After end: the records, in the order connections were accepted. */
const struct egress_record *egress_call_records(const struct egress_call *c,
    size_t *n);
/* Bounds hit during the call (each also in a record's reason). */
struct egress_totals {
	uint64_t bytes_up, bytes_down;
	uint32_t connections;		/* accepted, allowed or not */
	uint32_t refused;
	bool connection_cap_hit;
	bool byte_cap_hit;
	uint32_t not_recorded;		/* beyond max_connections */
};
void egress_call_totals(const struct egress_call *c, struct egress_totals *t);
/* The secrets its rules bind (a record's mask indexes them), or NULL. */
const struct egress_secrets *egress_call_secrets(const struct egress_call *c);
void egress_call_free(struct egress_call *c);

#endif /* EGRESS_H */
