/*
 * Unit tests of egress/: the rule patterns and their exact errors, the
 * decision (ports, wildcards, deny over allow, addresses), the address
 * classes, host normalisation, the proxy request parser and the TLS
 * server-name reader.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>

#include "egress.h"

static void
expect_pattern_error(const char *text, const char *want)
{
	struct egress_pattern p;
	char err[160] = "";

	ck_assert_msg(egress_pattern_parse(text, &p, err, sizeof(err)) == -1,
	    "'%s' was accepted", text);
	ck_assert_str_eq(err, want);
}

START_TEST(patterns_parse_or_say_why)
{
	struct egress_pattern p;
	char err[160];

	ck_assert_int_eq(egress_pattern_parse("PyPI.org", &p, err,
	    sizeof(err)), 0);
	ck_assert_str_eq(p.host, "pypi.org");
	ck_assert_str_eq(p.text, "PyPI.org");
	ck_assert(!p.wildcard && !p.is_addr && p.port == 0 && !p.any_port);
	ck_assert_int_eq(egress_pattern_parse("*.example.com:8443", &p, err,
	    sizeof(err)), 0);
	ck_assert(p.wildcard);
	ck_assert_str_eq(p.host, "example.com");
	ck_assert_uint_eq(p.port, 8443);
	ck_assert_int_eq(egress_pattern_parse("10.0.0.0/8:*", &p, err,
	    sizeof(err)), 0);
	ck_assert(p.is_addr && p.any_port && p.prefix == 8 &&
	    p.family == AF_INET);
	ck_assert_int_eq(egress_pattern_parse("[fd00::/8]:443", &p, err,
	    sizeof(err)), 0);
	ck_assert(p.is_addr && p.family == AF_INET6 && p.prefix == 8);
	expect_pattern_error("*.com", "a wildcard needs a domain with a dot "
	    "under it ('*.example.com', not '*.com')");
	expect_pattern_error("pypi.org:0", "the port must be 1..65535 or '*'");
	expect_pattern_error("pypi.org:65536",
	    "the port must be 1..65535 or '*'");
	expect_pattern_error("::1", "an IPv6 address goes in brackets: "
	    "[::1]:443");
	expect_pattern_error("[::1", "'[' without ']'");
	expect_pattern_error("10.0.0.0/33",
	    "not an IPv4 address or CIDR block");
	expect_pattern_error("a b.org", "expected a domain name (letters, "
	    "digits, '-', '.'), '*.' and a domain, or an IP address");
	expect_pattern_error("-a.org", "expected a domain name (letters, "
	    "digits, '-', '.'), '*.' and a domain, or an IP address");
	expect_pattern_error("a..org", "expected a domain name (letters, "
	    "digits, '-', '.'), '*.' and a domain, or an IP address");
	expect_pattern_error("*.*.org", "expected a domain name (letters, "
	    "digits, '-', '.'), '*.' and a domain, or an IP address");
}
END_TEST

static struct egress_rules *
rules(const char *const *allow, const char *const *deny)
{
	static struct egress_rules r;
	char err[160];

	egress_rules_init(&r);
	for (; allow != NULL && *allow != NULL; allow++)
		ck_assert_msg(egress_rules_allow(&r, *allow, err,
		    sizeof(err)) == 0, "%s: %s", *allow, err);
	for (; deny != NULL && *deny != NULL; deny++)
		ck_assert_msg(egress_rules_deny(&r, *deny, err,
		    sizeof(err)) == 0, "%s: %s", *deny, err);
	return &r;
}

static void
expect(const struct egress_rules *r, const char *host, uint16_t port,
    const char *reason)
{
	struct egress_verdict v;

	egress_decide(r, host, port, &v);
	if (reason == NULL) {
		ck_assert_msg(v.allowed, "%s:%u refused: %s", host, port,
		    v.reason);
		ck_assert_ptr_nonnull(v.rule);
	} else {
		ck_assert_msg(!v.allowed, "%s:%u allowed", host, port);
		ck_assert_str_eq(v.reason, reason);
	}
}

START_TEST(decide_ports_wildcards_and_deny)
{
	static const char *const allow[] = { "pypi.org", "*.example.com",
	    "git.example.org:*", "api.test:8443", NULL };
	static const char *const deny[] = { "evil.example.com",
	    "git.example.org:22", NULL };
	const struct egress_rules *r = rules(allow, deny);

	expect(r, "pypi.org", 443, NULL);
	expect(r, "PYPI.ORG.", 80, NULL);
	expect(r, "pypi.org", 8080, "port 8080 of 'pypi.org' is not allowed "
	    "(allowed_domains rule 'pypi.org' allows 80 and 443)");
	expect(r, "a.example.com", 443, NULL);
	expect(r, "a.b.example.com", 80, NULL);
	expect(r, "example.com", 443, "'example.com' is not in "
	    "allowed_domains");
	expect(r, "evil-example.com", 443, "'evil-example.com' is not in "
	    "allowed_domains");
	expect(r, "evil.example.com", 443, "denied by denied_domains rule "
	    "'evil.example.com'");
	expect(r, "evil.example.com", 8080, "denied by denied_domains rule "
	    "'evil.example.com'");
	expect(r, "git.example.org", 9418, NULL);
	expect(r, "git.example.org", 22, "denied by denied_domains rule "
	    "'git.example.org:22'");
	expect(r, "api.test", 8443, NULL);
	expect(r, "api.test", 443, "port 443 of 'api.test' is not allowed "
	    "(allowed_domains rule 'api.test:8443' allows 8443 only)");
	expect(r, "1.2.3.4", 443, "IP address 1.2.3.4 is not allowed "
	    "(allowed_domains names no address or block covering it)");
	expect(r, "127.1", 80, "'127.1' is not a domain name or IP address");
	expect(r, "0x7f.0.0.1", 80, "'0x7f.0.0.1' is not a domain name or "
	    "IP address");
	expect(r, "017700000001", 80, "'017700000001' is not a domain name "
	    "or IP address");
	expect(r, "::1", 80, "'::1' is not a domain name or IP address");
	expect(r, "[::1]", 80, "IP address ::1 is not allowed "
	    "(allowed_domains names no address or block covering it)");
	expect(r, "a_b.example.com", 443, NULL);
}
END_TEST

START_TEST(addresses_by_rule_and_class)
{
	static const char *const allow[] = { "10.0.0.0/8:*", "[fd00::/8]",
	    "192.168.1.7:8080", NULL };
	const struct egress_rules *r = rules(allow, NULL);
	static const struct { const char *a; const char *cls; } t[] = {
		{ "127.0.0.1", "loopback" }, { "10.1.2.3", "private" },
		{ "172.16.0.1", "private" }, { "172.32.0.1", NULL },
		{ "192.168.0.1", "private" },
		{ "169.254.169.254", "link-local" },
		{ "100.64.0.1", "shared (carrier-grade NAT)" },
		{ "0.0.0.0", "unspecified" }, { "224.0.0.1", "multicast" },
		{ "255.255.255.255", "reserved" }, { "8.8.8.8", NULL },
		{ "::1", "loopback" }, { "::", "unspecified" },
		{ "fd12::1", "unique-local" }, { "fe80::1", "link-local" },
		{ "ff02::1", "multicast" }, { "::ffff:127.0.0.1", "loopback" },
		{ "::ffff:8.8.8.8", "IPv4-mapped" },
		{ "2001:db8::1", "reserved (documentation)" },
		{ "2606:4700::1111", NULL },
	};
	uint8_t a[16];
	size_t i;
	int fam;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		fam = strchr(t[i].a, ':') != NULL ? AF_INET6 : AF_INET;
		ck_assert_int_eq(inet_pton(fam, t[i].a, a), 1);
		if (t[i].cls == NULL)
			ck_assert_msg(egress_addr_class(fam, a) == NULL,
			    "%s is %s", t[i].a, egress_addr_class(fam, a));
		else
			ck_assert_str_eq(egress_addr_class(fam, a), t[i].cls);
	}
	expect(r, "10.9.9.9", 5432, NULL);
	expect(r, "[fd00::5]", 443, NULL);
	expect(r, "192.168.1.7", 8080, NULL);
	expect(r, "192.168.1.8", 8080, "IP address 192.168.1.8 is not "
	    "allowed (allowed_domains names no address or block covering "
	    "it)");
	/* an IPv4-mapped IPv6 literal is its IPv4 address */
	expect(r, "[::ffff:10.9.9.9]", 5432, NULL);
	ck_assert_int_eq(inet_pton(AF_INET, "10.200.0.1", a), 1);
	ck_assert(egress_addr_allowed(r, AF_INET, a));
	ck_assert_int_eq(inet_pton(AF_INET, "11.0.0.1", a), 1);
	ck_assert(!egress_addr_allowed(r, AF_INET, a));
	{
		static const char *const deny[] = { "10.9.0.0/16:443", NULL };
		const struct egress_rules *d = rules(allow, deny);

		ck_assert_int_eq(inet_pton(AF_INET, "10.9.1.1", a), 1);
		ck_assert_ptr_nonnull(egress_addr_denied(d, AF_INET, a));
		ck_assert_str_eq(egress_addr_denied(d, AF_INET, a)->text,
		    "10.9.0.0/16:443");
		ck_assert_int_eq(inet_pton(AF_INET, "10.8.1.1", a), 1);
		ck_assert_ptr_null(egress_addr_denied(d, AF_INET, a));
	}
	{
		/*
		 * connect(2) to ::ffff:a.b.c.d reaches a.b.c.d: an IPv4 deny
		 * rule covers that form too, also where an IPv6 block is
		 * allowed, and a rule written in that form covers IPv4
		 */
		static const char *const all6[] = { "[::/0]:*", NULL };
		static const char *const deny4[] = { "169.254.169.254",
		    "10.0.0.0/8:*", "[::ffff:192.168.0.0/112]", NULL };
		const struct egress_rules *d = rules(all6, deny4);

		expect(d, "[::ffff:169.254.169.254]", 80, "denied by "
		    "denied_domains rule '169.254.169.254'");
		expect(d, "[::FFFF:a01:203]", 443, "denied by denied_domains "
		    "rule '10.0.0.0/8:*'");
		expect(d, "[2606:4700::1111]", 443, NULL);
		expect(d, "[64:ff9b::a9fe:a9fe]", 80, "denied by "
		    "denied_domains rule '169.254.169.254'");
		ck_assert_int_eq(inet_pton(AF_INET6, "::ffff:10.1.2.3", a), 1);
		ck_assert_ptr_nonnull(egress_addr_denied(d, AF_INET6, a));
		ck_assert_str_eq(egress_addr_denied(d, AF_INET6, a)->text,
		    "10.0.0.0/8:*");
		ck_assert_int_eq(inet_pton(AF_INET, "192.168.3.4", a), 1);
		ck_assert_ptr_nonnull(egress_addr_denied(d, AF_INET, a));
		ck_assert_str_eq(egress_addr_denied(d, AF_INET, a)->text,
		    "[::ffff:192.168.0.0/112]");
		ck_assert_int_eq(inet_pton(AF_INET6, "::ffff:192.169.0.1", a),
		    1);
		ck_assert_ptr_null(egress_addr_denied(d, AF_INET6, a));
	}
}
END_TEST

START_TEST(pins_parse)
{
	struct egress_pin p;
	char err[160];

	ck_assert_int_eq(egress_pin_parse("PyPI.org:443:127.0.0.1", &p, err,
	    sizeof(err)), 0);
	ck_assert_str_eq(p.host, "pypi.org");
	ck_assert_uint_eq(p.port, 443);
	ck_assert_int_eq(p.family, AF_INET);
	ck_assert_int_eq(egress_pin_parse("a.test:*:[::1]", &p, err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(p.port, 0);
	ck_assert_int_eq(p.family, AF_INET6);
	ck_assert_int_eq(egress_pin_parse("a.test:443", &p, err, sizeof(err)),
	    -1);
	ck_assert_str_eq(err, "expected HOST:PORT:ADDR");
	ck_assert_int_eq(egress_pin_parse("a.test:443:example.com", &p, err,
	    sizeof(err)), -1);
	ck_assert_str_eq(err, "ADDR must be an IPv4 or IPv6 address");
}
END_TEST

static int
parse(const char *s, struct egress_request *q, char *err)
{
	return egress_http_parse(s, strlen(s), q, err, 160);
}

START_TEST(http_requests)
{
	struct egress_request q;
	char err[160];

	ck_assert_int_eq(parse("CONNECT PyPI.org:443 HTTP/1.1\r\nHost: x\r\n"
	    "\r\n", &q, err), 1);
	ck_assert(q.connect);
	ck_assert_str_eq(q.host, "PyPI.org");
	ck_assert_uint_eq(q.port, 443);
	ck_assert_int_eq(parse("GET http://a.test:8080/p?q=1 HTTP/1.0\r\n"
	    "Host: a.test:8080\r\nContent-Length: 12\r\n\r\nbody", &q, err), 1);
	ck_assert(!q.connect);
	ck_assert_str_eq(q.host, "a.test");
	ck_assert_uint_eq(q.port, 8080);
	ck_assert_int_eq(q.minor, 0);
	ck_assert_uint_eq(q.path_len, strlen("/p?q=1"));
	ck_assert_str_eq(q.host_hdr, "a.test:8080");
	ck_assert(q.has_length && q.content_length == 12);
	ck_assert_uint_eq(q.head_len, strlen("GET http://a.test:8080/p?q=1 "
	    "HTTP/1.0\r\nHost: a.test:8080\r\nContent-Length: 12\r\n\r\n"));
	ck_assert_int_eq(parse("GET http://[::1]/ HTTP/1.1\r\n\r\n", &q, err),
	    1);
	ck_assert_str_eq(q.host, "[::1]");
	ck_assert_uint_eq(q.port, 80);
	ck_assert_int_eq(parse("GET http://a.test/ HTTP/1.1\r\nHost: a", &q,
	    err), 0);
	ck_assert_int_eq(parse("GET http://a.test/ HTTP/2.0\r\n\r\n", &q, err),
	    -1);
	ck_assert_str_eq(err, "malformed request line (only HTTP/1.0 and "
	    "HTTP/1.1)");
	ck_assert_int_eq(parse("GET https://a.test/ HTTP/1.1\r\n\r\n", &q,
	    err), -1);
	ck_assert_str_eq(err, "an https:// target goes through CONNECT, not as "
	    "a plain request");
	ck_assert_int_eq(parse("GET http://u:p@a.test/ HTTP/1.1\r\n\r\n", &q,
	    err), -1);
	ck_assert_str_eq(err, "a target with user information is refused");
	/* a Host that a URL's authority would cut short: not host[:port] */
	{
		static const char *const bad[] = { "a.test/x", "a.test?x",
		    "a.test#x", "user@a.test", "a.test:80/x", "a.test\\x",
		    "a.test x", NULL };
		char req[128];
		int i;

		for (i = 0; bad[i] != NULL; i++) {
			(void)snprintf(req, sizeof(req), "GET http://a.test/ "
			    "HTTP/1.1\r\nHost: %s\r\n\r\n", bad[i]);
			ck_assert_int_eq(parse(req, &q, err), -1);
			ck_assert_str_eq(err, "the Host header is not "
			    "host[:port]");
		}
	}
	ck_assert_int_eq(parse("GET http://[::1]:8080/ HTTP/1.1\r\nHost: "
	    "[::1]:8080\r\n\r\n", &q, err), 1);
	ck_assert_str_eq(q.host_hdr, "[::1]:8080");
	ck_assert_int_eq(parse("GET http://a.test/ HTTP/1.1\r\nContent-Length:"
	    " 1\r\nContent-Length: 1\r\n\r\n", &q, err), -1);
	ck_assert_str_eq(err, "more than one Content-Length header");
	ck_assert_int_eq(parse("GET http://a.test/ HTTP/1.1\r\nHost: a\r\n"
	    "Host: b\r\n\r\n", &q, err), -1);
	ck_assert_str_eq(err, "more than one Host header");
	ck_assert_int_eq(parse("GET http://a.test/ HTTP/1.1\rX\r\n\r\n", &q,
	    err), -1);
	ck_assert_str_eq(err, "a CR without LF");
	ck_assert_int_eq(parse("GET http://a.test/ HTTP/1.1\r\nX-A: \x01\r\n"
	    "\r\n", &q, err), -1);
	ck_assert_str_eq(err, "a control character in a header value");
	ck_assert_int_eq(parse("CONNECT a.test:99999 HTTP/1.1\r\n\r\n", &q,
	    err), -1);
	ck_assert_str_eq(err, "CONNECT needs host:port");
	ck_assert_int_eq(parse("\r\n\r\n", &q, err), -1);
}
END_TEST

/* the Host a request without one is forwarded with */
START_TEST(http_host_value)
{
	char out[EGRESS_MAX_HOST + 9], small[8];

	ck_assert_int_eq(egress_http_host_value("a.test", 80, out,
	    sizeof(out)), 6);
	ck_assert_str_eq(out, "a.test");
	ck_assert_int_eq(egress_http_host_value("a.test", 8080, out,
	    sizeof(out)), 11);
	ck_assert_str_eq(out, "a.test:8080");
	ck_assert_int_eq(egress_http_host_value("::1", 80, out,
	    sizeof(out)), 5);
	ck_assert_str_eq(out, "[::1]");
	ck_assert_int_eq(egress_http_host_value("fd00::5", 65535, out,
	    sizeof(out)), 15);
	ck_assert_str_eq(out, "[fd00::5]:65535");
	ck_assert_int_eq(egress_http_host_value("10.0.0.1", 443, out,
	    sizeof(out)), 12);
	ck_assert_str_eq(out, "10.0.0.1:443");
	ck_assert_int_eq(egress_http_host_value("a.test", 8080, small,
	    sizeof(small)), -1);
}
END_TEST

START_TEST(http_head_bound)
{
	struct egress_request q;
	char err[160], *big = malloc(EGRESS_MAX_HEAD + 64);

	ck_assert_ptr_nonnull(big);
	memset(big, 'a', EGRESS_MAX_HEAD + 64);
	memcpy(big, "GET http://a.test/ HTTP/1.1\r\nX: ", 32);
	ck_assert_int_eq(egress_http_parse(big, EGRESS_MAX_HEAD - 1, &q, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(egress_http_parse(big, EGRESS_MAX_HEAD, &q, err,
	    sizeof(err)), -1);
	ck_assert_str_eq(err, "request head larger than 16384 bytes");
	free(big);
}
END_TEST

static size_t
load(const char *name, uint8_t *buf, size_t cap)
{
	char path[1024];
	FILE *f;
	size_t n;

	(void)snprintf(path, sizeof(path), "%s/%s", EGRESS_CORPUS, name);
	f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "%s", path);
	n = fread(buf, 1, cap, f);
	(void)fclose(f);
	return n;
}

START_TEST(tls_server_name)
{
	uint8_t buf[4096];
	char name[EGRESS_MAX_HOST + 1];
	size_t n = load("hello-a", buf, sizeof(buf)), i;

	ck_assert_int_eq(egress_tls_sni(buf, n, name), 1);
	ck_assert_str_eq(name, "a.example.com");
	/* every prefix is "more", never a wrong answer */
	for (i = 0; i < n; i++)
		ck_assert_int_eq(egress_tls_sni(buf, i, name), -2);
	ck_assert_int_eq(egress_tls_sni((const uint8_t *)"SSH-2.0-x\r\n", 11,
	    name), -1);
	/* a hello whose length runs past its record */
	buf[7] = 0xff;
	ck_assert_int_eq(egress_tls_sni(buf, n, name), -1);
}
END_TEST

START_TEST(http_in_tunnel)
{
#define T(lit, want)	{ lit, sizeof(lit) - 1, want }
	static const struct { const char *s; size_t n; int want; } t[] = {
		T("GET / HTTP/1.1\r\nHost: x\r\n\r\n", 1),
		T("\r\n\r\nget  /a b   http/1.0\r\n", 1),
		T("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 1),
		T("GET\t/\tHTTP/1.1", 1),
		T("GET / HT", -2), T("GET / ", -2), T("GET", -2), T("", -2),
		T("\r\n", -2),
		T("SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n", 0),
		T("0032git-upload-pack /x.git\0host=a\0", 0),
		T("HELO x\r\n", 0), T("*1\r\n$4\r\nPING\r\n", 0),
		T("GET /\r\n", 0), T("GET /\xc3\xa9 HTTP/1.1", 1),
		T(" \t\r\n GET / HTTP/1.1", 1), T("\x16\x03\x01", 0),
		T("\0\0\0\x08\x04\xd2\x16\x2f", 0), T("G\x01T / HTTP/1.1", 0),
	};
#undef T
	char *big = malloc(EGRESS_MAX_HEAD);
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		ck_assert_msg(egress_http_sniff((const uint8_t *)t[i].s,
		    t[i].n) == t[i].want, "case %zu: %d", i,
		    egress_http_sniff((const uint8_t *)t[i].s, t[i].n));
	/* undecided at the head bound: refused, not waited on */
	ck_assert_ptr_nonnull(big);
	memset(big, 'a', EGRESS_MAX_HEAD);
	memcpy(big, "GET /", 5);
	ck_assert_int_eq(egress_http_sniff((const uint8_t *)big,
	    EGRESS_MAX_HEAD - 1), -2);
	ck_assert_int_eq(egress_http_sniff((const uint8_t *)big,
	    EGRESS_MAX_HEAD), 1);
	free(big);
}
END_TEST

/* Connections the thread-failure case makes: 2 slots, 3 past the cap. */
#define FAIL_CONNS	5

/* Fails with what went wrong (stderr) or 0; runs in a child of its own. */
static int
threads_fail_child(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	static const char want503[] = "HTTP/1.1 503 Service Unavailable\r\n";
	static const char nothread[] = "the proxy could not start a thread "
	    "for this connection";
	static const char cap[] = "connection cap reached (max_connections 2 "
	    "per call)";
	const struct egress_record *recs;
	struct egress_totals t;
	struct egress_rules r;
	struct egress_call *c = NULL;
	struct rlimit rl, none;
	socklen_t sl = sizeof(sa);
	int lfd, cl[FAIL_CONNS], i, got;
	char buf[64];
	size_t n;

	egress_rules_init(&r);
	r.max_connections = 2;
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sl) != 0 ||
	    listen(lfd, 16) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&sa, &sl) != 0 ||
	    (c = egress_call_new(&r)) == NULL || egress_call_start(c, lfd) != 0)
		return 2;
	for (i = 0; i < FAIL_CONNS; i++)
		if ((cl[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC,
		    0)) < 0 || connect(cl[i], (struct sockaddr *)&sa,
		    sizeof(sa)) != 0)
			return 3;
	/* no thread can start: an unprivileged uid at RLIMIT_NPROC 0 */
	if (getrlimit(RLIMIT_NPROC, &rl) != 0 ||
	    (geteuid() == 0 && setresuid(65534, 65534, 65534) != 0))
		return 4;
	none = rl;
	none.rlim_cur = 0;
	if (setrlimit(RLIMIT_NPROC, &none) != 0)
		return 5;
	got = egress_call_accept(c);
	if (setrlimit(RLIMIT_NPROC, &rl) != 0)
		return 6;
	egress_call_end(c);
	recs = egress_call_records(c, &n);
	egress_call_totals(c, &t);
	if (got != 0) {
		fprintf(stderr, "accept returned %d\n", got);
		return 7;
	}
	/* two slots and the cap's record: max_connections + 1, no more */
	if (n != 3 || strcmp(recs[0].reason, nothread) != 0 ||
	    strcmp(recs[1].reason, nothread) != 0 || recs[0].status != 503 ||
	    strcmp(recs[2].reason, cap) != 0) {
		fprintf(stderr, "%zu records: '%s' '%s'\n", n,
		    n > 0 ? recs[0].reason : "", n > 2 ? recs[2].reason : "");
		return 8;
	}
	if (t.connections != FAIL_CONNS || t.not_recorded != 2 ||
	    t.refused != FAIL_CONNS || !t.connection_cap_hit)
		return 9;
	/* answered at once, and the ones past the cap closed */
	for (i = 0; i < FAIL_CONNS; i++) {
		ssize_t k = recv(cl[i], buf, sizeof(want503) - 1, MSG_WAITALL);

		if (i < 2 && (k != (ssize_t)sizeof(want503) - 1 ||
		    memcmp(buf, want503, sizeof(want503) - 1) != 0))
			return 10;
		if (i >= 2 && k > 0)
			return 11;
		(void)close(cl[i]);
	}
	egress_call_free(c);
	(void)close(lfd);
	return 0;
}

/*
 * When no connection thread can start (the server at its thread or
 * process limit), each connection still takes its slot: the records never
 * outgrow max_connections + 1, and the accepting thread (the sandbox's
 * run loop) answers without waiting on the program.
 */
START_TEST(threads_fail_records_bounded)
{
	pid_t pid;
	int st;

	ck_assert_int_ge(pid = fork(), 0);
	if (pid == 0)
		_exit(threads_fail_child());
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "the child failed: status %#x", st);
}
END_TEST

/* Connections the out-of-fds case makes: 2 refused, 1 left waiting. */
#define NOFD_CONNS	3

/* Fails with what went wrong (stderr) or 0; runs in a child of its own. */
static int
nofd_child(bool unpriv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	static const char want503[] = "HTTP/1.1 503 Service Unavailable\r\n";
	static const char nofd[] = "the server is out of file descriptors";
	const struct egress_record *recs;
	struct egress_totals t;
	struct egress_rules r;
	struct egress_call *c = NULL;
	struct rlimit rl, low;
	struct pollfd p;
	socklen_t sl = sizeof(sa);
	int lfd, cl[NOFD_CONNS], i, fd, got1, got2, ready1, ready2;
	char buf[512];
	ssize_t k;
	size_t n;

	if (unpriv && geteuid() == 0 && setresuid(65534, 65534, 65534) != 0)
		return 2;
	egress_rules_init(&r);
	r.max_connections = 4;
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sl) != 0 ||
	    listen(lfd, 16) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&sa, &sl) != 0 ||
	    (c = egress_call_new(&r)) == NULL || egress_call_start(c, lfd) != 0)
		return 2;
	for (i = 0; i < NOFD_CONNS; i++)
		if ((cl[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC,
		    0)) < 0)
			return 3;
	for (i = 0; i < 2; i++)
		if (connect(cl[i], (struct sockaddr *)&sa, sizeof(sa)) != 0)
			return 3;
	/* every fd below the limit taken: accept gets EMFILE */
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 ||
	    (fd = dup(0)) < 0 || close(fd) != 0)
		return 4;
	low = rl;
	low.rlim_cur = (rlim_t)fd + 1;
	if (setrlimit(RLIMIT_NOFILE, &low) != 0)
		return 5;
	while (dup(0) >= 0)
		;
	got1 = egress_call_accept(c);
	p = (struct pollfd){ .fd = lfd, .events = POLLIN };
	ready1 = poll(&p, 1, 0);
	/* not even the spare: the caller is told to leave lfd alone */
	if (connect(cl[2], (struct sockaddr *)&sa, sizeof(sa)) != 0)
		return 6;
	low.rlim_cur = 0;
	if (setrlimit(RLIMIT_NOFILE, &low) != 0)
		return 6;
	got2 = egress_call_accept(c);
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 6;
	ready2 = poll(&p, 1, 0);	/* nfds past RLIMIT_NOFILE: EINVAL */
	egress_call_end(c);
	recs = egress_call_records(c, &n);
	egress_call_totals(c, &t);
	if (got1 != 0 || ready1 != 0 || got2 != EGRESS_ACCEPT_PAUSE_MS ||
	    ready2 != 1) {
		fprintf(stderr, "accept %d then %d, readable %d then %d\n",
		    got1, got2, ready1, ready2);
		return 7;
	}
	if (n != 2 || strcmp(recs[0].reason, nofd) != 0 ||
	    strcmp(recs[1].reason, nofd) != 0 || recs[0].status != 503 ||
	    recs[1].status != 503 || recs[0].allowed || recs[1].allowed) {
		fprintf(stderr, "%zu records: '%s'\n", n,
		    n > 0 ? recs[0].reason : "");
		return 8;
	}
	if (t.connections != 2 || t.refused != 2 || t.not_recorded != 0)
		return 9;
	for (i = 0; i < 2; i++) {
		k = recv(cl[i], buf, sizeof(buf) - 1, MSG_WAITALL);
		if (k < (ssize_t)sizeof(want503) - 1 ||
		    memcmp(buf, want503, sizeof(want503) - 1) != 0)
			return 10;
		buf[k] = '\0';
		if (strstr(buf, "\r\nX-Egress-Denied: the server is out of "
		    "file descriptors\r\n") == NULL)
			return 11;
		(void)close(cl[i]);
	}
	(void)close(cl[2]);
	egress_call_free(c);
	(void)close(lfd);
	return 0;
}

/*
 * Out of file descriptors, a waiting connection keeps the listener
 * readable: the proxy gives up its spare fd to answer it 503 and close it
 * (the listener is then quiet, so the run's poll does not spin), and with
 * no spare it tells the run to leave the listener alone for a while.
 */
START_TEST(out_of_fds_no_spin)
{
	pid_t pid;
	int st, unpriv;

	/* the server as it runs: root, and uid 65534 */
	for (unpriv = 0; unpriv < 2; unpriv++) {
		ck_assert_int_ge(pid = fork(), 0);
		if (pid == 0)
			_exit(nofd_child(unpriv));
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		    "the child (unpriv %d) failed: status %#x", unpriv, st);
	}
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("egress");
	TCase *tc = tcase_create("egress");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, patterns_parse_or_say_why);
	tcase_add_test(tc, decide_ports_wildcards_and_deny);
	tcase_add_test(tc, addresses_by_rule_and_class);
	tcase_add_test(tc, pins_parse);
	tcase_add_test(tc, http_requests);
	tcase_add_test(tc, http_host_value);
	tcase_add_test(tc, http_head_bound);
	tcase_add_test(tc, tls_server_name);
	tcase_add_test(tc, http_in_tunnel);
	tcase_add_test(tc, threads_fail_records_bounded);
	tcase_add_test(tc, out_of_fds_no_spin);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
