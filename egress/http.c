/*
 * http: what the proxy reads from a sandboxed program before it decides,
 * parsed without allocating and within fixed bounds: a proxy request head
 * (RFC 9112: request line and header fields, CRLF only, no obs-fold), the
 * server name of a TLS ClientHello (RFC 8446 4.1.2, RFC 6066 3), and
 * whether a tunnel's first bytes are an HTTP request line. Anything it
 * cannot read exactly is refused, never guessed.
 * tests/fuzz/proxy_fuzz.c drives both with arbitrary bytes.
 */
#include <stdio.h>
#include <string.h>

#include "egress.h"

/* Content-Length digits: 2^63 has 19. */
#define EGRESS_MAX_LENGTH_DIGITS	18

static int
fail(char *err, size_t errlen, const char *msg)
{
	if (err != NULL && errlen > 0)
		(void)snprintf(err, errlen, "%s", msg);
	return -1;
}

/* RFC 9110 tchar */
static bool
is_tchar(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9'))
		return true;
	return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/*
 * What a Host value may hold: a name, an IPv4 address or a bracketed IPv6
 * one, and ":port". Anything else ('/', '?', '#', '@', white space...)
 * would pass the comparison with the target (which parses it as a URL's
 * authority and drops the rest) and reach the server as sent.
 */
static bool
is_host_char(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9'))
		return true;
	return c != '\0' && strchr("-._~:[]", c) != NULL;
}

static bool
ieq(const char *a, size_t alen, const char *b)
{
	size_t i;

	if (alen != strlen(b))
		return false;
	for (i = 0; i < alen; i++) {
		char x = a[i], y = b[i];

		if (x >= 'A' && x <= 'Z')
			x = (char)(x - 'A' + 'a');
		if (y >= 'A' && y <= 'Z')
			y = (char)(y - 'A' + 'a');
		if (x != y)
			return false;
	}
	return true;
}

/* "host[:port]" or "[v6][:port]" of s[0..n) into req; port default dflt. */
static int
parse_authority(const char *s, size_t n, uint16_t dflt, bool need_port,
    struct egress_request *req)
{
	size_t hlen, i;
	const char *port = NULL;
	unsigned long v = 0;

	if (n == 0)
		return -1;
	if (s[0] == '[') {
		const char *rb = memchr(s, ']', n);

		if (rb == NULL)
			return -1;
		hlen = (size_t)(rb - s) + 1;
		if (hlen < n) {
			if (s[hlen] != ':')
				return -1;
			port = s + hlen + 1;
		}
	} else {
		const char *c = memchr(s, ':', n);

		hlen = c != NULL ? (size_t)(c - s) : n;
		if (c != NULL)
			port = c + 1;
	}
	if (hlen == 0 || hlen >= sizeof(req->host))
		return -1;
	for (i = 0; i < hlen; i++)
		if (s[i] <= ' ' || s[i] >= 0x7f || s[i] == '@' || s[i] == '/')
			return -1;
	memcpy(req->host, s, hlen);
	req->host[hlen] = '\0';
	if (port == NULL) {
		if (need_port)
			return -1;
		req->port = dflt;
		return 0;
	}
	if (port == s + n || s + n - port > 5)
		return -1;
	for (; port < s + n; port++) {
		if (*port < '0' || *port > '9')
			return -1;
		v = v * 10 + (unsigned long)(*port - '0');
	}
	if (v == 0 || v > 65535)
		return -1;
	req->port = (uint16_t)v;
	return 0;
}

/* The request line buf[0..n) (without CRLF). */
static int
parse_request_line(const char *buf, size_t n, struct egress_request *req,
    char *err, size_t errlen)
{
	const char *sp1, *sp2, *t;
	size_t mlen, tlen, i;

	if ((sp1 = memchr(buf, ' ', n)) == NULL)
		return fail(err, errlen, "malformed request line");
	mlen = (size_t)(sp1 - buf);
	if (mlen == 0 || mlen >= sizeof(req->method))
		return fail(err, errlen, "malformed request line (method)");
	for (i = 0; i < mlen; i++)
		if (!is_tchar((unsigned char)buf[i]))
			return fail(err, errlen,
			    "malformed request line (method)");
	memcpy(req->method, buf, mlen);
	req->method[mlen] = '\0';
	t = sp1 + 1;
	if ((sp2 = memchr(t, ' ', (size_t)(buf + n - t))) == NULL)
		return fail(err, errlen, "malformed request line");
	tlen = (size_t)(sp2 - t);
	if (buf + n - (sp2 + 1) != 8 || memcmp(sp2 + 1, "HTTP/1.", 7) != 0 ||
	    (sp2[8] != '0' && sp2[8] != '1'))
		return fail(err, errlen, "malformed request line (only HTTP/1.0 "
		    "and HTTP/1.1)");
	req->minor = sp2[8] - '0';
	for (i = 0; i < tlen; i++)
		if ((unsigned char)t[i] <= ' ' || (unsigned char)t[i] >= 0x7f)
			return fail(err, errlen,
			    "malformed request line (target)");
	if (strcmp(req->method, "CONNECT") == 0) {
		req->connect = true;
		if (parse_authority(t, tlen, 0, true, req) != 0)
			return fail(err, errlen, "CONNECT needs host:port");
		return 0;
	}
	if (tlen < 7 || !ieq(t, 7, "http://")) {
		if (tlen >= 8 && ieq(t, 8, "https://"))
			return fail(err, errlen, "an https:// target goes "
			    "through CONNECT, not as a plain request");
		return fail(err, errlen, "the target must be an absolute "
		    "http:// URL (this is a proxy)");
	}
	t += 7;
	tlen -= 7;
	{
		const char *slash = memchr(t, '/', tlen);
		const char *q = memchr(t, '?', tlen);
		size_t alen;

		if (q != NULL && (slash == NULL || q < slash))
			slash = q;
		alen = slash != NULL ? (size_t)(slash - t) : tlen;
		if (memchr(t, '@', alen) != NULL)
			return fail(err, errlen,
			    "a target with user information is refused");
		if (parse_authority(t, alen, 80, false, req) != 0)
			return fail(err, errlen,
			    "malformed request line (authority)");
		req->path_off = (size_t)(t + alen - buf);
		req->path_len = tlen - alen;
	}
	return 0;
}

/* One header line buf[0..n) (without CRLF). */
static int
parse_header(const char *buf, size_t n, struct egress_request *req,
    char *err, size_t errlen)
{
	const char *colon = memchr(buf, ':', n), *v, *e;
	size_t nlen, i;
	uint64_t cl = 0;

	if (n > 0 && (buf[0] == ' ' || buf[0] == '\t'))
		return fail(err, errlen, "folded header lines are refused");
	if (colon == NULL || colon == buf)
		return fail(err, errlen, "a header line without a name and ':'");
	nlen = (size_t)(colon - buf);
	for (i = 0; i < nlen; i++)
		if (!is_tchar((unsigned char)buf[i]))
			return fail(err, errlen, "malformed header name");
	for (i = nlen + 1; i < n; i++)
		if ((unsigned char)buf[i] < ' ' && buf[i] != '\t')
			return fail(err, errlen,
			    "a control character in a header value");
		else if ((unsigned char)buf[i] == 0x7f)
			return fail(err, errlen,
			    "a control character in a header value");
	v = colon + 1;
	e = buf + n;
	while (v < e && (*v == ' ' || *v == '\t'))
		v++;
	while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	if (ieq(buf, nlen, "host")) {
		if (req->has_host)
			return fail(err, errlen, "more than one Host header");
		if ((size_t)(e - v) >= sizeof(req->host_hdr))
			return fail(err, errlen, "Host header too long");
		for (i = 0; v + i < e; i++)
			if (!is_host_char((unsigned char)v[i]))
				return fail(err, errlen, "the Host header is "
				    "not host[:port]");
		memcpy(req->host_hdr, v, (size_t)(e - v));
		req->host_hdr[e - v] = '\0';
		req->has_host = true;
	} else if (ieq(buf, nlen, "content-length")) {
		if (req->has_length)
			return fail(err, errlen,
			    "more than one Content-Length header");
		if (v == e || e - v > EGRESS_MAX_LENGTH_DIGITS)
			return fail(err, errlen, "malformed Content-Length");
		for (; v < e; v++) {
			if (*v < '0' || *v > '9')
				return fail(err, errlen,
				    "malformed Content-Length");
			cl = cl * 10 + (uint64_t)(*v - '0');
		}
		req->has_length = true;
		req->content_length = cl;
	} else if (ieq(buf, nlen, "transfer-encoding")) {
		req->chunked = true;
	}
	return 0;
}

int
egress_http_parse(const char *buf, size_t len, struct egress_request *req,
    char *err, size_t errlen)
{
	const char *p = buf, *end, *eol;
	size_t nheaders = 0, i, scan;
	bool first = true;

	memset(req, 0, sizeof(*req));
	scan = len < EGRESS_MAX_HEAD ? len : EGRESS_MAX_HEAD;
	/* every CR is followed by LF, every LF preceded by CR */
	for (i = 0; i < scan; i++) {
		if (buf[i] == '\0')
			return fail(err, errlen, "a NUL byte in the request head");
		if (buf[i] == '\r' && i + 1 < scan && buf[i + 1] != '\n')
			return fail(err, errlen, "a CR without LF");
		if (buf[i] == '\n' && (i == 0 || buf[i - 1] != '\r'))
			return fail(err, errlen, "a LF without CR");
		if (i >= 3 && memcmp(buf + i - 3, "\r\n\r\n", 4) == 0)
			break;
	}
	if (i == scan) {
		if (len >= EGRESS_MAX_HEAD)
			return fail(err, errlen, "request head larger than "
			    "16384 bytes");
		return 0;
	}
	req->head_len = i + 1;
	end = buf + req->head_len - 2;	/* the last CRLF ends the head */
	while (p < end) {
		eol = memchr(p, '\r', (size_t)(end - p));
		if (eol == NULL)
			eol = end;
		if (first) {
			if (parse_request_line(p, (size_t)(eol - p), req, err,
			    errlen) != 0)
				return -1;
			req->hdr_off = (size_t)(eol + 2 - buf);
			first = false;
		} else {
			if (++nheaders > EGRESS_MAX_HEADERS)
				return fail(err, errlen, "more than 100 "
				    "header lines");
			if (parse_header(p, (size_t)(eol - p), req, err,
			    errlen) != 0)
				return -1;
		}
		p = eol + 2;
	}
	if (first)
		return fail(err, errlen, "an empty request");
	return 1;
}

static unsigned
be16(const uint8_t *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

int
egress_tls_sni(const uint8_t *buf, size_t len, char name[EGRESS_MAX_HOST + 1])
{
	size_t rec, hl, off, lim, n, elim;
	unsigned type, elen, i;

	name[0] = '\0';
	if (len < 1)
		return -2;
	if (buf[0] != 0x16)
		return -1;
	if (len < 5)
		return -2;
	if (buf[1] != 3)
		return -1;
	rec = be16(buf + 3);
	if (rec < 4 || rec > EGRESS_MAX_HELLO - 5)
		return -1;
	if (len < 5 + rec)
		return -2;
	if (buf[5] != 1)			/* ClientHello */
		return -1;
	hl = (size_t)buf[6] << 16 | (size_t)buf[7] << 8 | buf[8];
	if (hl > rec - 4)
		return -1;	/* spread over records: not read here */
	off = 9;
	lim = 9 + hl;
	/* version, random */
	if (lim - off < 34)
		return -1;
	off += 34;
	/* session id */
	if (lim - off < 1 || buf[off] > 32 || lim - off < 1u + buf[off])
		return -1;
	off += 1u + buf[off];
	/* cipher suites */
	if (lim - off < 2)
		return -1;
	n = be16(buf + off);
	if (n < 2 || n % 2 != 0 || lim - off < 2 + n)
		return -1;
	off += 2 + n;
	/* compression methods */
	if (lim - off < 1 || buf[off] < 1 || lim - off < 1u + buf[off])
		return -1;
	off += 1u + buf[off];
	if (off == lim)
		return 0;		/* no extensions */
	if (lim - off < 2)
		return -1;
	n = be16(buf + off);
	off += 2;
	if (n != lim - off)
		return -1;
	while (off < lim) {
		if (lim - off < 4)
			return -1;
		type = be16(buf + off);
		elen = be16(buf + off + 2);
		off += 4;
		if (lim - off < elen)
			return -1;
		if (type != 0) {
			off += elen;
			continue;
		}
		/* server_name: list length, then (type, length, name)... */
		if (elen < 2 || be16(buf + off) != elen - 2u)
			return -1;
		elim = off + elen;
		off += 2;
		while (off < elim) {
			if (elim - off < 3)
				return -1;
			n = be16(buf + off + 1);
			if (elim - off - 3 < n)
				return -1;
			if (buf[off] == 0) {
				if (n == 0 || n > EGRESS_MAX_HOST)
					return -1;
				for (i = 0; i < n; i++) {
					uint8_t ch = buf[off + 3 + i];

					if (ch <= ' ' || ch >= 0x7f)
						return -1;
					if (ch >= 'A' && ch <= 'Z')
						ch = (uint8_t)(ch - 'A' + 'a');
					name[i] = (char)ch;
				}
				name[n] = '\0';
				return 1;
			}
			off += 3 + n;
		}
		return 0;
	}
	return 0;
}

/* A sniff still undecided after len bytes: at the head bound it is
 * refused rather than waited on. */
static int
undecided(size_t len)
{
	return len >= EGRESS_MAX_HEAD ? 1 : -2;
}

int
egress_http_sniff(const uint8_t *buf, size_t len)
{
	static const char version[] = "http/";
	size_t i = 0, m, v;

	/* what servers skip before a request line: empty lines (RFC 9112
	 * 2.2), and for some (Varnish) any white space */
	while (i < len && (buf[i] == '\r' || buf[i] == '\n' || buf[i] == ' ' ||
	    buf[i] == '\t'))
		i++;
	/* a method: visible characters, then white space */
	for (m = i; i < len && buf[i] > ' ' && buf[i] < 0x7f; i++)
		;
	if (i == len)
		return undecided(len);
	if (i == m || (buf[i] != ' ' && buf[i] != '\t'))
		return 0;
	/*
	 * The rest of the line (bytes past 0x7f too: servers take UTF-8
	 * paths), up to a control character, which ends it or that servers
	 * refuse in a request line: white space, then "HTTP/".
	 */
	for (; i < len; i++) {
		if ((buf[i] < ' ' && buf[i] != '\t') || buf[i] == 0x7f)
			return 0;
		if (buf[i] != ' ' && buf[i] != '\t')
			continue;
		for (v = 0; v < 5 && i + 1 + v < len; v++) {
			uint8_t ch = buf[i + 1 + v];

			if (ch >= 'A' && ch <= 'Z')
				ch = (uint8_t)(ch - 'A' + 'a');
			if (ch != (uint8_t)version[v])
				break;
		}
		if (v == 5)
			return 1;
		if (i + 1 + v == len)
			return undecided(len);
	}
	return undecided(len);
}

int
egress_http_host_value(const char *host, unsigned port, char *out,
    size_t outlen)
{
	bool v6 = strchr(host, ':') != NULL;	/* a name never has one */
	char tail[8] = "";
	int n;

	if (port != 80)
		(void)snprintf(tail, sizeof(tail), ":%u", port);
	n = snprintf(out, outlen, "%s%s%s%s", v6 ? "[" : "", host,
	    v6 ? "]" : "", tail);
	return n < 0 || (size_t)n >= outlen ? -1 : n;
}
