/*
 * intercept: the proxy's side of a bound secret (issue 24). A CONNECT to
 * a host a secret is bound to is not a blind tunnel: the proxy connects
 * to the real host over TLS first (its certificate checked against the
 * system's store or --egress-ca: a failure is the CONNECT's 502), then
 * answers the program's TLS with a certificate its own CA issues for that
 * host (the sandbox trusts the CA through its bundle), reads one request
 * head, rewrites it (px_rewrite_head: the Host must be the CONNECT host,
 * placeholders become values, the secret's header is set, compression is
 * not offered, the connection closes after the answer) and relays the
 * rest: the program's bytes as they are, the server's with every value
 * replaced by its placeholder. One request per connection: clients open
 * the next one themselves (the answer says Connection: close), and bytes
 * a program sends past the first request reach the same host without a
 * secret. Plain http:// to a bound host is refused unless the secret
 * allows it (then the same rewrite, without TLS).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "egress.h"
#include "proxy_impl.h"
#include "tls.h"

/*
 * One step of the relay: up to four TLS records' payload read (those
 * already decrypted are taken at once), scrubbed and written together:
 * one record a step moved 0.45x a tunnel's bulk rate, four 0.50-0.59x.
 */
#define PX_CHUNK	(4 * 16384)

static int
tls_wait(void *arg, int fd, short events)
{
	return px_wait_fd(arg, fd, events);
}

/* Names of the secrets in mask, "A, B", into buf. */
static void
mask_names(const struct egress_secrets *ss, uint32_t mask, char *buf,
    size_t len)
{
	size_t i, w = 0;
	int n;

	buf[0] = '\0';
	for (i = 0; i < ss->n && w < len; i++) {
		if ((mask & (1u << i)) == 0)
			continue;
		n = snprintf(buf + w, len - w, "%s%s", w > 0 ? ", " : "",
		    ss->s[i].name);
		w += n > 0 ? (size_t)n : 0;
	}
}

int
px_plain_allowed(struct egress_call *c, int cfd, uint32_t mask,
    const char *host, struct egress_record *r)
{
	const struct egress_secrets *ss = c->rules->secrets;
	size_t i;

	for (i = 0; i < ss->n; i++) {
		if ((mask & (1u << i)) == 0 || ss->s[i].allow_http)
			continue;
		px_set_reason(r, "%s is bound to '%s' over HTTPS only: plain "
		    "http:// would carry it in clear (use https://, or "
		    "allow_http in the policy's secret)", ss->s[i].name, host);
		px_refuse(c, cfd, r, 403);
		return -1;
	}
	return 0;
}

/* Does a Host value name host:port (port def_port when it gives none)? */
static bool
host_value_ok(const char *v, size_t vl, const char *host, uint16_t port,
    uint16_t def_port)
{
	struct egress_request q;
	char line[EGRESS_MAX_HOST + 64], err[64], h[EGRESS_MAX_HOST + 3];
	uint8_t a[16];
	int fam, n;

	if (vl > EGRESS_MAX_HOST + 8)
		return false;
	/* the authority rules of a request line: "http://" + v, port 80 */
	n = snprintf(line, sizeof(line), "GET http://%.*s/ HTTP/1.1\r\n\r\n",
	    (int)vl, v);
	if (n < 0 || (size_t)n >= sizeof(line) || egress_http_parse(line,
	    (size_t)n, &q, err, sizeof(err)) != 1)
		return false;
	(void)snprintf(h, sizeof(h), "%s", q.host);
	if (egress_host_normalize(h, &fam, a) == 0 || strcmp(h, host) != 0)
		return false;
	/* no port written: the parser said 80; the scheme's default is ours */
	if (memchr(v, ']', vl) != NULL ? v[vl - 1] == ']' :
	    memchr(v, ':', vl) == NULL)
		return port == def_port;
	return q.port == port;
}

static bool
named(const char *p, size_t nl, const char *name)
{
	return nl == strlen(name) && strncasecmp(p, name, nl) == 0;
}

/* Headers a rewritten head never passes on. */
static bool
dropped(const struct egress_secrets *ss, uint32_t mask, const char *p,
    size_t nl)
{
	static const char *const drop[] = { "accept-encoding", "connection",
	    "keep-alive", "proxy-connection", "te", "upgrade", NULL };
	size_t i;

	for (i = 0; drop[i] != NULL; i++)
		if (named(p, nl, drop[i]))
			return true;
	for (i = 0; i < ss->n; i++)
		if ((mask & (1u << i)) != 0 && ss->s[i].header[0] != '\0' &&
		    named(p, nl, ss->s[i].header))
			return true;
	return false;
}

static int
head_fail(struct egress_record *r, int status, char *out, const char *why)
{
	free(out);
	r->status = status;
	px_set_reason(r, "%s", why);
	return -1;
}

/* Longest Basic credentials looked into: a user and a token, not a file. */
#define PX_MAX_BASIC	3072

static const char b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Standard base64 with padding: the decoded length, or -1. */
static int
b64_decode(const char *in, size_t len, unsigned char *out)
{
	size_t i, w = 0;
	unsigned v = 0;
	int bits = 0, pad = 0;
	const char *p;

	if (len % 4 != 0 || len / 4 * 3 > PX_MAX_BASIC)
		return -1;
	for (i = 0; i < len; i++) {
		if (in[i] == '=') {
			if (i < len - 2 || (i == len - 2 && in[len - 1] != '='))
				return -1;
			pad++;
			continue;
		}
		if ((p = memchr(b64, in[i], 64)) == NULL || in[i] == '\0')
			return -1;
		v = v << 6 | (unsigned)(p - b64);
		if ((bits += 6) >= 8) {
			bits -= 8;
			out[w++] = (unsigned char)(v >> bits);
		}
	}
	return pad > 2 ? -1 : (int)w;
}

/* Encodes in[0..n) over out (the same length it was decoded from). */
static void
b64_encode(const unsigned char *in, size_t n, char *out)
{
	size_t i;
	unsigned v;

	for (i = 0; i + 2 < n; i += 3, out += 4) {
		v = (unsigned)in[i] << 16 | (unsigned)in[i + 1] << 8 | in[i + 2];
		out[0] = b64[v >> 18];
		out[1] = b64[v >> 12 & 63];
		out[2] = b64[v >> 6 & 63];
		out[3] = b64[v & 63];
	}
	if (n - i == 1) {
		v = (unsigned)in[i] << 16;
		out[0] = b64[v >> 18];
		out[1] = b64[v >> 12 & 63];
		out[2] = out[3] = '=';
	} else if (n - i == 2) {
		v = (unsigned)in[i] << 16 | (unsigned)in[i + 1] << 8;
		out[0] = b64[v >> 18];
		out[1] = b64[v >> 12 & 63];
		out[2] = b64[v >> 6 & 63];
		out[3] = '=';
	}
}

/*
 * "Authorization: Basic B64": a placeholder inside user:password (git's
 * https://user:$TOKEN@host, curl -u) becomes the value there too. The
 * same length decoded, the same length encoded: line[0..len) in place.
 */
static uint32_t
swap_basic(const struct egress_secrets *ss, uint32_t mask, char *line,
    size_t len, struct egress_scrub *sc)
{
	unsigned char dec[PX_MAX_BASIC];
	char sent[EGRESS_MAX_SECRET];
	const char *v = memchr(line, ':', len);
	size_t vl;
	uint32_t hits;
	int n;

	if (v == NULL)
		return 0;
	for (v++; v < line + len && (*v == ' ' || *v == '\t'); v++)
		;
	if ((size_t)(line + len - v) < 6 || strncasecmp(v, "Basic ", 6) != 0)
		return 0;
	for (v += 6; v < line + len && *v == ' '; v++)
		;
	vl = (size_t)(line + len - v);
	while (vl > 0 && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
		vl--;
	if ((n = b64_decode(v, vl, dec)) <= 0)
		return 0;
	if ((hits = egress_swap_in(ss, mask, (char *)dec, (size_t)n)) != 0) {
		/* an answer that echoes it gets the program's form back */
		memcpy(sent, v, vl);
		b64_encode(dec, (size_t)n, (char *)v);
		(void)egress_scrub_pair(sc, v, sent, vl, hits);
	}
	explicit_bzero(dec, sizeof(dec));
	explicit_bzero(sent, sizeof(sent));
	return hits;
}

/* The secrets' own headers ("Authorization: Bearer VALUE"), at out + w. */
static size_t
add_headers(const struct egress_secrets *ss, uint32_t mask, char *out,
    uint32_t *used)
{
	size_t i, w = 0;

	for (i = 0; i < ss->n; i++) {
		const struct egress_secret *s = &ss->s[i];
		const char *at;

		if ((mask & (1u << i)) == 0 || s->header[0] == '\0')
			continue;
		at = strstr(s->format, "{}");
		w += (size_t)sprintf(out + w, "%s: %.*s", s->header,
		    (int)(at - s->format), s->format);
		memcpy(out + w, s->value, s->len);
		w += s->len;
		w += (size_t)sprintf(out + w, "%s\r\n", at + 2);
		*used |= 1u << i;
	}
	return w;
}

int
px_rewrite_head(struct egress_call *c, const char *head, size_t len,
    uint32_t mask, const char *host, uint16_t port, uint16_t def_port,
    struct egress_scrub *sc, char **ret, size_t *ret_len,
    struct egress_record *r)
{
	const struct egress_secrets *ss = c->rules->secrets;
	const char *p, *eol, *end = head + len - 2, *colon;
	size_t w, cap = len + 64, i, hosts = 0;
	uint32_t used, basic = 0;
	char *out;

	for (i = 0; i < ss->n; i++)
		if ((mask & (1u << i)) != 0)
			cap += sizeof(ss->s[i].header) +
			    sizeof(ss->s[i].format) + ss->s[i].len + 4;
	if ((out = malloc(cap)) == NULL)
		return head_fail(r, 503, NULL, "out of memory");
	/* a bare LF or an obs-fold would let a header hide from the drop */
	for (i = 0; i < len; i++)
		if (head[i] == '\n' && (i == 0 || head[i - 1] != '\r'))
			return head_fail(r, 400, out, "a request head with a "
			    "bare LF is refused where a secret is added");
	if ((eol = memmem(head, len, "\r\n", 2)) == NULL)
		return head_fail(r, 400, out, "no request line");
	w = (size_t)(eol - head) + 2;
	memcpy(out, head, w);
	for (p = eol + 2; p < end; p = eol + 2) {
		eol = memmem(p, (size_t)(end - p) + 2, "\r\n", 2);
		if (*p == ' ' || *p == '\t' || (colon = memchr(p, ':',
		    (size_t)(eol - p))) == NULL)
			return head_fail(r, 400, out, "a header line the proxy "
			    "cannot read (folded, or without a colon)");
		if (named(p, (size_t)(colon - p), "host")) {
			const char *v = colon + 1, *ve = eol;

			while (v < ve && (*v == ' ' || *v == '\t'))
				v++;
			while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
				ve--;
			if (hosts++ > 0 || !host_value_ok(v, (size_t)(ve - v),
			    host, port, def_port)) {
				px_set_reason(r, "Host header '%.*s' is not "
				    "'%s', the host the secret is added for",
				    (int)(ve - v > 80 ? 80 : ve - v), v, host);
				free(out);
				r->status = 403;
				return -1;
			}
		}
		if (dropped(ss, mask, p, (size_t)(colon - p)))
			continue;
		memcpy(out + w, p, (size_t)(eol - p) + 2);
		if (named(p, (size_t)(colon - p), "authorization"))
			basic |= swap_basic(ss, mask, out + w,
			    (size_t)(eol - p), sc);
		w += (size_t)(eol - p) + 2;
	}
	if (hosts == 0)
		return head_fail(r, 400, out, "a request without a Host header "
		    "gets no secret");
	used = egress_swap_in(ss, mask, out, w) | basic;
	w += add_headers(ss, mask, out + w, &used);
	memcpy(out + w, "Connection: close\r\n\r\n", 21);
	w += 21;
	r->secrets |= used;
	*ret = out;
	*ret_len = w;
	return 0;
}

/* One side of the relay: a TLS session or the socket itself. */
struct end {
	int fd;
	struct egress_tls_conn *k;
};

static ssize_t
end_recv(struct end *e, char *buf, size_t len)
{
	ssize_t n;

	if (e->k != NULL)
		return egress_tls_recv_now(e->k, buf, len);
	n = recv(e->fd, buf, len, MSG_DONTWAIT);
	return n >= 0 ? n : errno == EAGAIN || errno == EINTR ? -EAGAIN :
	    -errno;
}

static int
end_send(struct egress_call *c, struct end *e, const char *buf, size_t len)
{
	if (len == 0)
		return 0;
	if (e->k != NULL)
		return egress_tls_send(e->k, buf, len);
	return px_send_all(c, e->fd, buf, len);
}

static bool
end_pending(const struct end *e)
{
	return e->k != NULL && egress_tls_pending(e->k);
}

/*
 * Moves one chunk from src to dst (scrubbed when sc), counted against the
 * call's bytes. 1 moved, 0 src ended, -1 with the reason set.
 */
static int
move(struct egress_call *c, struct end *src, struct end *dst,
    struct egress_scrub *sc, uint64_t *left, uint64_t *count, char *buf,
    char *out, struct egress_record *r)
{
	uint64_t got, want = *left < PX_CHUNK ? *left : PX_CHUNK;
	ssize_t n;
	size_t m;

	if (want == 0)
		return 0;
	if ((got = px_reserve(c, want)) == 0) {
		px_set_reason(r, "byte cap reached (max_bytes %llu per call)",
		    (unsigned long long)c->rules->max_bytes);
		return -1;
	}
	n = end_recv(src, buf, (size_t)got);
	while (n > 0 && (uint64_t)n < got) {
		ssize_t more = end_recv(src, buf + n, (size_t)(got -
		    (uint64_t)n));

		if (more <= 0)
			break;	/* the end, or an error: the next step sees it */
		n += more;
	}
	px_give_back(c, n > 0 ? got - (uint64_t)n : got);
	if (n == -EAGAIN)
		return 1;
	if (n <= 0) {
		if (sc != NULL && (m = egress_scrub_end(sc, out)) > 0 &&
		    end_send(c, dst, out, m) < 0)
			return -1;
		return 0;
	}
	*count += (uint64_t)n;
	if (*left != UINT64_MAX)
		*left -= (uint64_t)n;
	if (sc != NULL) {
		m = egress_scrub_feed(sc, buf, (size_t)n, out);
		if (end_send(c, dst, out, m) < 0)
			goto lost;
	} else if (end_send(c, dst, buf, (size_t)n) < 0)
		goto lost;
	return 1;
 lost:
	px_set_reason(r, "the %s went away mid-answer", sc != NULL ?
	    "program" : "server");
	return -1;
}

void
px_relay_scrubbed(struct egress_call *c, int cfd, int ufd,
    struct egress_tls_conn *ck, struct egress_tls_conn *uk, uint64_t up_left,
    struct egress_scrub *sc, struct egress_record *r)
{
	struct end ce = { cfd, ck }, ue = { ufd, uk };
	struct pollfd p[3];
	uint64_t down_left = UINT64_MAX;
	char *buf, *out;
	bool up_done = up_left == 0;
	int n, rc;

	buf = malloc(PX_CHUNK);
	out = malloc(PX_CHUNK + EGRESS_MAX_SECRET);
	if (buf == NULL || out == NULL) {
		px_set_reason(r, "out of memory");
		goto out;
	}
	for (;;) {
		bool pend = end_pending(&ue) || (!up_done && end_pending(&ce));

		p[0] = (struct pollfd){ .fd = up_done ? -1 : cfd,
		    .events = POLLIN };
		p[1] = (struct pollfd){ .fd = ufd, .events = POLLIN };
		p[2] = (struct pollfd){ .fd = c->stop_efd, .events = POLLIN };
		n = poll(p, 3, pend ? 0 : (int)c->rules->idle_timeout_ms);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || p[2].revents != 0)
			break;
		if (n == 0 && !pend) {
			px_set_reason(r, "no byte either way for %u ms "
			    "(idle_timeout_ms)", c->rules->idle_timeout_ms);
			break;
		}
		if (!up_done && (p[0].revents != 0 || end_pending(&ce))) {
			rc = move(c, &ce, &ue, NULL, &up_left, &r->bytes_up,
			    buf, out, r);
			if (rc < 0)
				break;
			up_done = rc == 0 || up_left == 0;
		}
		if (p[1].revents != 0 || end_pending(&ue)) {
			rc = move(c, &ue, &ce, sc, &down_left, &r->bytes_down,
			    buf, out, r);
			if (rc <= 0)
				break;
		}
	}
	if (sc->hits != 0 && r->reason[0] == '\0') {
		char names[EGRESS_MAX_REASON / 2];

		mask_names(c->rules->secrets, sc->hits, names, sizeof(names));
		px_set_reason(r, "the server's answer carried the value of %s: "
		    "the program got the placeholder", names);
	}
 out:
	free(buf);
	if (out != NULL)
		explicit_bzero(out, PX_CHUNK + EGRESS_MAX_SECRET);
	free(out);
}

/* The first request head inside the program's TLS, into buf. */
static int
read_tls_head(struct egress_tls_conn *ck, char *buf, size_t *len,
    size_t *head_len, struct egress_record *r)
{
	const char *e;
	ssize_t n;

	*len = 0;
	while (*len < EGRESS_MAX_HEAD) {
		n = egress_tls_recv(ck, buf + *len, EGRESS_MAX_HEAD - *len);
		if (n <= 0) {
			px_set_reason(r, n == 0 ? "the program closed before "
			    "a request" : n == -ETIMEDOUT ? "no request within "
			    "idle_timeout_ms" : "reading the request failed");
			return -1;
		}
		*len += (size_t)n;
		if ((e = memmem(buf, *len, "\r\n\r\n", 4)) != NULL) {
			*head_len = (size_t)(e - buf) + 4;
			return 0;
		}
	}
	r->status = 431;
	px_set_reason(r, "a request head over %d bytes", EGRESS_MAX_HEAD);
	return -1;
}

/* The proxy's answer inside the program's TLS. */
static void
tls_refuse(struct egress_tls_conn *ck, struct egress_record *r, int status)
{
	char msg[EGRESS_MAX_REASON + 256];
	int n;

	n = snprintf(msg, sizeof(msg), "HTTP/1.1 %d Refused\r\n"
	    "Content-Type: text/plain; charset=utf-8\r\nX-Egress-Denied: %s\r\n"
	    "Content-Length: %zu\r\nConnection: close\r\n\r\n%s\n", status,
	    r->reason, strlen(r->reason) + 1, r->reason);
	r->status = status;
	if (n > 0 && (size_t)n < sizeof(msg))
		(void)egress_tls_send(ck, msg, (size_t)n);
}

void
px_intercept_tunnel(struct egress_call *c, int cfd, int ufd,
    const char *host, uint16_t port, uint32_t mask, struct egress_record *r)
{
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	struct egress_tls *tls = c->rules->secrets->tls;
	struct egress_tls_conn *uk = NULL, *ck = NULL;
	struct egress_scrub *sc = NULL;
	char err[EGRESS_MAX_REASON], *buf = NULL, *head = NULL;
	size_t len, head_len, hl = 0;

	if ((uk = egress_tls_connect(tls, ufd, host, tls_wait, c, err,
	    sizeof(err))) == NULL) {
		px_set_reason(r, "%s", err);
		px_refuse(c, cfd, r, 502);
		return;
	}
	r->status = 200;
	if (px_send_all(c, cfd, ok, sizeof(ok) - 1) < 0)
		goto out;
	if ((ck = egress_tls_accept(tls, cfd, host, tls_wait, c, err,
	    sizeof(err))) == NULL) {
		px_set_reason(r, "%s", err);
		goto out;
	}
	r->intercepted = true;
	if ((buf = malloc(EGRESS_MAX_HEAD)) == NULL ||
	    (sc = malloc(sizeof(*sc))) == NULL) {
		px_set_reason(r, "out of memory");
		goto out;
	}
	egress_scrub_init(sc, c->rules->secrets, mask);
	if (read_tls_head(ck, buf, &len, &head_len, r) < 0) {
		if (r->status >= 400)
			tls_refuse(ck, r, r->status);
		goto out;
	}
	if (px_rewrite_head(c, buf, head_len, mask, host, port, 443, sc, &head,
	    &hl, r) < 0) {
		tls_refuse(ck, r, r->status);
		goto out;
	}
	if (px_reserve(c, hl + len - head_len) < hl + len - head_len) {
		px_set_reason(r, "byte cap reached (max_bytes %llu per call)",
		    (unsigned long long)c->rules->max_bytes);
		goto out;
	}
	r->bytes_up += len;
	if (egress_tls_send(uk, head, hl) < 0 || egress_tls_send(uk,
	    buf + head_len, len - head_len) < 0) {
		px_set_reason(r, "sending to '%s' failed", host);
		goto out;
	}
	px_relay_scrubbed(c, cfd, ufd, ck, uk, UINT64_MAX, sc, r);
 out:
	if (sc != NULL)
		explicit_bzero(sc, sizeof(*sc));
	free(sc);
	if (head != NULL)
		explicit_bzero(head, hl);
	free(head);
	if (buf != NULL)
		explicit_bzero(buf, EGRESS_MAX_HEAD);
	free(buf);
	egress_tls_close(ck);
	egress_tls_close(uk);
}
