/*
 * rules: the allow and deny lists, --resolve pins, and what kind of
 * address a destination is. Pure functions over caller memory: no
 * allocation, no system call, so the unit tests and the fuzzer call them
 * directly. Deny wins over allow; an empty allow list allows nothing.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "egress.h"

/* A DNS label is at most 63 bytes (RFC 1035 2.3.4). */
#define EGRESS_MAX_LABEL	63

/* The first 12 bytes of an IPv4-mapped IPv6 address (RFC 4291 2.5.5.2). */
static const uint8_t v4_mapped[12] = { [10] = 0xff, [11] = 0xff };
/* ... and of the NAT64 well-known prefix 64:ff9b::/96 (RFC 6052 2.1). */
static const uint8_t v4_nat64[12] = { 0, 0x64, 0xff, 0x9b };

void
egress_rules_init(struct egress_rules *r)
{
	memset(r, 0, sizeof(*r));
	r->max_connections = EGRESS_DEFAULT_CONNECTIONS;
	r->max_bytes = EGRESS_DEFAULT_BYTES;
	r->idle_timeout_ms = EGRESS_DEFAULT_IDLE_MS;
}

bool
egress_rules_enabled(const struct egress_rules *r)
{
	return r->nallow > 0;
}

static void
set_err(char *err, size_t errlen, const char *msg)
{
	if (err != NULL && errlen > 0)
		(void)snprintf(err, errlen, "%s", msg);
}

/*
 * [a-z0-9_-] labels of 1..63 bytes, not starting or ending with '-', the
 * last one not starting with a digit: no top-level domain does, and the
 * resolver reads such names as numbers (inet_aton's 0x7f.1, 2130706433).
 */
static bool
name_ok(const char *s)
{
	size_t label = 0, n = strlen(s), i;
	const char *last = strrchr(s, '.');

	last = last != NULL ? last + 1 : s;
	if (*last >= '0' && *last <= '9')
		return false;
	if (n == 0 || n > EGRESS_MAX_HOST)
		return false;
	for (i = 0; i < n; i++) {
		char ch = s[i];

		if (ch == '.') {
			if (label == 0 || s[i - 1] == '-')
				return false;
			label = 0;
			continue;
		}
		if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
		    ch == '-' || ch == '_'))
			return false;
		if (label == 0 && ch == '-')
			return false;
		if (++label > EGRESS_MAX_LABEL)
			return false;
	}
	return label > 0 && s[n - 1] != '-';
}

/* dst = src when it fits (callers checked that it does), else "". */
static void
copy_str(char *dst, size_t len, const char *src)
{
	size_t n = strlen(src);

	if (n >= len)
		n = 0;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

static void
lower(char *s)
{
	for (; *s != '\0'; s++)
		if (*s >= 'A' && *s <= 'Z')
			*s = (char)(*s - 'A' + 'a');
}

/* "80", 1..65535, or "*" (*any). */
static int
parse_port(const char *s, uint16_t *port, bool *any)
{
	unsigned long v = 0;

	*any = false;
	if (strcmp(s, "*") == 0) {
		*any = true;
		*port = 0;
		return 0;
	}
	if (*s == '\0' || strlen(s) > 5)
		return -1;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (unsigned long)(*s - '0');
	}
	if (v == 0 || v > 65535)
		return -1;
	*port = (uint16_t)v;
	return 0;
}

/* "a.b.c.d" or a v6 address (no brackets) with an optional "/n". */
static int
parse_addr(char *s, struct egress_pattern *p)
{
	char *slash = strchr(s, '/');
	unsigned long n = 0;
	const char *q;

	p->family = strchr(s, ':') != NULL ? AF_INET6 : AF_INET;
	p->prefix = p->family == AF_INET ? 32 : 128;
	if (slash != NULL) {
		*slash = '\0';
		q = slash + 1;
		if (*q == '\0' || strlen(q) > 3)
			return -1;
		for (; *q != '\0'; q++) {
			if (*q < '0' || *q > '9')
				return -1;
			n = n * 10 + (unsigned long)(*q - '0');
		}
		if (n > p->prefix)
			return -1;
		p->prefix = (unsigned)n;
	}
	if (inet_pton(p->family, s, p->addr) != 1)
		return -1;
	p->is_addr = true;
	/* [::ffff:a.b.c.d/n], n >= 96, is the IPv4 block (see addr_match) */
	if (p->family == AF_INET6 && p->prefix >= 96 &&
	    memcmp(p->addr, v4_mapped, sizeof(v4_mapped)) == 0) {
		memmove(p->addr, p->addr + 12, 4);
		memset(p->addr + 4, 0, 12);
		p->family = AF_INET;
		p->prefix -= 96;
	}
	return 0;
}

/* Does prefix bits of a equal those of b? */
static bool
prefix_eq(const uint8_t *a, const uint8_t *b, unsigned bits)
{
	unsigned full = bits / 8, rest = bits % 8;

	if (memcmp(a, b, full) != 0)
		return false;
	if (rest == 0)
		return true;
	return ((a[full] ^ b[full]) & (uint8_t)(0xff << (8 - rest))) == 0;
}

/*
 * Does address rule p cover addr? An IPv4-mapped IPv6 address
 * (::ffff:a.b.c.d) is also that IPv4 address: connect(2) on an AF_INET6
 * socket reaches a.b.c.d through it, so an IPv4 rule must cover it too;
 * so must it 64:ff9b::a.b.c.d, which a NAT64 gateway takes to a.b.c.d.
 */
static bool
addr_match(const struct egress_pattern *p, int family, const uint8_t *addr)
{
	if (family == p->family)
		return prefix_eq(addr, p->addr, p->prefix);
	return family == AF_INET6 && p->family == AF_INET &&
	    (memcmp(addr, v4_mapped, sizeof(v4_mapped)) == 0 ||
	    memcmp(addr, v4_nat64, sizeof(v4_nat64)) == 0) &&
	    prefix_eq(addr + 12, p->addr, p->prefix);
}

int
egress_pattern_parse(const char *text, struct egress_pattern *p, char *err,
    size_t errlen)
{
	char buf[EGRESS_MAX_PATTERN + 1], *host, *colon = NULL, *end;

	memset(p, 0, sizeof(*p));
	if (strlen(text) > EGRESS_MAX_PATTERN) {
		set_err(err, errlen, "longer than a domain name and port");
		return -1;
	}
	(void)snprintf(p->text, sizeof(p->text), "%s", text);
	(void)snprintf(buf, sizeof(buf), "%s", text);
	lower(buf);
	host = buf;
	if (buf[0] == '[') {
		if ((end = strchr(buf, ']')) == NULL) {
			set_err(err, errlen, "'[' without ']'");
			return -1;
		}
		*end = '\0';
		host = buf + 1;
		if (end[1] == ':')
			colon = end + 1;
		else if (end[1] != '\0') {
			set_err(err, errlen, "expected ':PORT' after ']'");
			return -1;
		}
		if (strchr(host, ':') == NULL || parse_addr(host, p) != 0) {
			set_err(err, errlen, "not an IPv6 address or block "
			    "inside [ ]");
			return -1;
		}
	} else {
		colon = strchr(buf, ':');
		if (colon != NULL && strchr(colon + 1, ':') != NULL) {
			set_err(err, errlen, "an IPv6 address goes in brackets: "
			    "[::1]:443");
			return -1;
		}
	}
	if (colon != NULL) {
		*colon = '\0';
		if (parse_port(colon + 1, &p->port, &p->any_port) != 0) {
			set_err(err, errlen, "the port must be 1..65535 or '*'");
			return -1;
		}
	}
	if (p->is_addr)
		return 0;
	if (host[0] != '\0' && strspn(host, "0123456789./") == strlen(host)) {
		if (parse_addr(host, p) != 0) {
			set_err(err, errlen, "not an IPv4 address or CIDR block");
			return -1;
		}
		return 0;
	}
	if (strncmp(host, "*.", 2) == 0) {
		p->wildcard = true;
		host += 2;
	}
	if (strlen(host) > 1 && host[strlen(host) - 1] == '.')
		host[strlen(host) - 1] = '\0';
	if (!name_ok(host)) {
		set_err(err, errlen, "expected a domain name (letters, digits, "
		    "'-', '.'), '*.' and a domain, or an IP address");
		return -1;
	}
	if (p->wildcard && strchr(host, '.') == NULL) {
		set_err(err, errlen, "a wildcard needs a domain with a dot "
		    "under it ('*.example.com', not '*.com')");
		return -1;
	}
	copy_str(p->host, sizeof(p->host), host);
	return 0;
}

int
egress_pin_parse(const char *text, struct egress_pin *pin, char *err,
    size_t errlen)
{
	char buf[sizeof(pin->text)], *c1, *c2, *addr;
	bool any;
	int fam;

	memset(pin, 0, sizeof(*pin));
	if (strlen(text) >= sizeof(buf)) {
		set_err(err, errlen, "too long for HOST:PORT:ADDR");
		return -1;
	}
	(void)snprintf(pin->text, sizeof(pin->text), "%s", text);
	(void)snprintf(buf, sizeof(buf), "%s", text);
	if ((c1 = strchr(buf, ':')) == NULL ||
	    (c2 = strchr(c1 + 1, ':')) == NULL) {
		set_err(err, errlen, "expected HOST:PORT:ADDR");
		return -1;
	}
	*c1 = *c2 = '\0';
	lower(buf);
	if (strlen(buf) > 1 && buf[strlen(buf) - 1] == '.')
		buf[strlen(buf) - 1] = '\0';
	if (!name_ok(buf)) {
		set_err(err, errlen, "HOST must be a domain name");
		return -1;
	}
	if (parse_port(c1 + 1, &pin->port, &any) != 0) {
		set_err(err, errlen, "PORT must be 1..65535 or '*'");
		return -1;
	}
	addr = c2 + 1;
	if (addr[0] == '[' && addr[strlen(addr) - 1] == ']') {
		addr[strlen(addr) - 1] = '\0';
		addr++;
	}
	fam = strchr(addr, ':') != NULL ? AF_INET6 : AF_INET;
	if (inet_pton(fam, addr, pin->addr) != 1) {
		set_err(err, errlen, "ADDR must be an IPv4 or IPv6 address");
		return -1;
	}
	pin->family = fam;
	copy_str(pin->host, sizeof(pin->host), buf);
	return 0;
}

static int
add_pattern(struct egress_pattern *list, size_t *n, const char *text,
    char *err, size_t errlen)
{
	if (*n >= EGRESS_MAX_RULES) {
		(void)snprintf(err, errlen, "more than %d rules",
		    EGRESS_MAX_RULES);
		return -1;
	}
	if (egress_pattern_parse(text, &list[*n], err, errlen) != 0)
		return -1;
	(*n)++;
	return 0;
}

int
egress_rules_allow(struct egress_rules *r, const char *text, char *err,
    size_t errlen)
{
	return add_pattern(r->allow, &r->nallow, text, err, errlen);
}

int
egress_rules_deny(struct egress_rules *r, const char *text, char *err,
    size_t errlen)
{
	return add_pattern(r->deny, &r->ndeny, text, err, errlen);
}

int
egress_rules_pin(struct egress_rules *r, const char *text, char *err,
    size_t errlen)
{
	if (r->npins >= EGRESS_MAX_PINS) {
		(void)snprintf(err, errlen, "more than %d pins",
		    EGRESS_MAX_PINS);
		return -1;
	}
	if (egress_pin_parse(text, &r->pins[r->npins], err, errlen) != 0)
		return -1;
	r->npins++;
	return 0;
}

int
egress_rules_tunnel(struct egress_rules *r, const char *text, char *err,
    size_t errlen)
{
	static const char *const names[] = { "tls", "ssh", "any" };
	const char *colon = strchr(text, ':');
	unsigned long port;
	char *end;
	size_t i, k;

	if (colon == NULL || colon == text) {
		(void)snprintf(err, errlen, "expected PORT:PROTO (tls, ssh or "
		    "any)");
		return -1;
	}
	errno = 0;
	port = strtoul(text, &end, 10);
	if (errno != 0 || end != colon || port == 0 || port > 65535 ||
	    text[0] < '0' || text[0] > '9') {
		(void)snprintf(err, errlen, "the port must be 1..65535");
		return -1;
	}
	for (k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		if (strcmp(colon + 1, names[k]) == 0)
			break;
	if (k == sizeof(names) / sizeof(names[0])) {
		(void)snprintf(err, errlen, "unknown protocol (tls, ssh or "
		    "any)");
		return -1;
	}
	for (i = 0; i < r->ntunnels; i++)
		if (r->tunnels[i].port == port) {
			(void)snprintf(err, errlen, "port %lu is named twice",
			    port);
			return -1;
		}
	if (r->ntunnels >= EGRESS_MAX_TUNNELS) {
		(void)snprintf(err, errlen, "more than %d tunnel ports",
		    EGRESS_MAX_TUNNELS);
		return -1;
	}
	r->tunnels[r->ntunnels].port = (uint16_t)port;
	r->tunnels[r->ntunnels].proto = (enum egress_tunnel_proto)k;
	(void)snprintf(r->tunnels[r->ntunnels].text,
	    sizeof(r->tunnels[r->ntunnels].text), "%lu:%s", port, names[k]);
	r->ntunnels++;
	return 0;
}

enum egress_tunnel_proto
egress_tunnel_proto(const struct egress_rules *r, uint16_t port)
{
	size_t i;

	for (i = 0; i < r->ntunnels; i++)
		if (r->tunnels[i].port == port)
			return r->tunnels[i].proto;
	return EGRESS_TUNNEL_TLS;
}

int
egress_host_normalize(char *host, int *family, uint8_t addr[16])
{
	size_t n;

	lower(host);
	n = strlen(host);
	if (n >= 2 && host[0] == '[' && host[n - 1] == ']') {
		memmove(host, host + 1, n - 2);
		host[n - 2] = '\0';
		if (inet_pton(AF_INET6, host, addr) != 1)
			return 0;
		*family = AF_INET6;
		return 2;
	}
	if (inet_pton(AF_INET, host, addr) == 1) {
		*family = AF_INET;
		return 2;
	}
	if (strchr(host, ':') != NULL)
		return 0;	/* a v6 literal must be bracketed */
	if (n > 1 && host[n - 1] == '.')
		host[--n] = '\0';
	/* digits and dots only but not a dotted quad: 127.1, 0x7f.1 ... */
	if (strspn(host, "0123456789.") == n)
		return 0;
	return name_ok(host) ? 1 : 0;
}

/* Does pattern p cover host (normalised), ignoring the port? */
static bool
host_match(const struct egress_pattern *p, const char *host, int lit,
    int family, const uint8_t *addr)
{
	size_t hl, pl;

	if (p->is_addr)
		return lit == 2 && addr_match(p, family, addr);
	if (lit != 1)
		return false;
	if (!p->wildcard)
		return strcmp(host, p->host) == 0;
	hl = strlen(host);
	pl = strlen(p->host);
	return hl > pl + 1 && host[hl - pl - 1] == '.' &&
	    strcmp(host + hl - pl, p->host) == 0;
}

static bool
allow_port(const struct egress_pattern *p, uint16_t port)
{
	if (p->any_port)
		return true;
	if (p->port == 0)
		return port == 80 || port == 443;
	return port == p->port;
}

static bool
deny_port(const struct egress_pattern *p, uint16_t port)
{
	return p->any_port || p->port == 0 || p->port == port;
}

bool
egress_pattern_covers(const struct egress_pattern *p, const char *host,
    uint16_t port)
{
	char tmp[EGRESS_MAX_HOST + 3];
	uint8_t addr[16];
	int family = 0, lit;

	(void)snprintf(tmp, sizeof(tmp), "%s", host);
	if ((lit = egress_host_normalize(tmp, &family, addr)) == 0)
		return false;
	return host_match(p, tmp, lit, family, addr) && allow_port(p, port);
}

static void
port_list(const struct egress_pattern *p, char *buf, size_t len)
{
	if (p->any_port)
		(void)snprintf(buf, len, "every port");
	else if (p->port == 0)
		(void)snprintf(buf, len, "80 and 443");
	else
		(void)snprintf(buf, len, "%u only", p->port);
}

void
egress_decide(const struct egress_rules *r, const char *host, uint16_t port,
    struct egress_verdict *v)
{
	const struct egress_pattern *port_miss = NULL;
	char tmp[EGRESS_MAX_HOST + 3], ports[32];
	uint8_t addr[16];
	int family = 0, lit;
	size_t i;

	memset(v, 0, sizeof(*v));
	(void)snprintf(tmp, sizeof(tmp), "%s", host);
	lit = egress_host_normalize(tmp, &family, addr);
	if (lit == 0) {
		(void)snprintf(v->reason, sizeof(v->reason),
		    "'%.*s' is not a domain name or IP address", 64, host);
		return;
	}
	for (i = 0; i < r->ndeny; i++) {
		if (host_match(&r->deny[i], tmp, lit, family, addr) &&
		    deny_port(&r->deny[i], port)) {
			v->rule = &r->deny[i];
			(void)snprintf(v->reason, sizeof(v->reason),
			    "denied by denied_domains rule '%s'",
			    r->deny[i].text);
			return;
		}
	}
	for (i = 0; i < r->nallow; i++) {
		if (!host_match(&r->allow[i], tmp, lit, family, addr))
			continue;
		if (allow_port(&r->allow[i], port)) {
			v->allowed = true;
			v->rule = &r->allow[i];
			return;
		}
		if (port_miss == NULL)
			port_miss = &r->allow[i];
	}
	if (port_miss != NULL) {
		port_list(port_miss, ports, sizeof(ports));
		v->rule = port_miss;
		(void)snprintf(v->reason, sizeof(v->reason),
		    "port %u of '%s' is not allowed (allowed_domains rule "
		    "'%s' allows %s)", port, tmp, port_miss->text, ports);
		return;
	}
	if (lit == 2)
		(void)snprintf(v->reason, sizeof(v->reason),
		    "IP address %s is not allowed (allowed_domains names no "
		    "address or block covering it)", tmp);
	else
		(void)snprintf(v->reason, sizeof(v->reason),
		    "'%s' is not in allowed_domains", tmp);
}

const char *
egress_addr_class(int family, const uint8_t *a)
{
	static const uint8_t zero[16];
	static const uint8_t loop6[16] = { [15] = 1 };
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (family == AF_INET) {
		if (a[0] == 0)
			return "unspecified";
		if (a[0] == 127)
			return "loopback";
		if (a[0] == 10 || (a[0] == 172 && (a[1] & 0xf0) == 16) ||
		    (a[0] == 192 && a[1] == 168))
			return "private";
		if (a[0] == 100 && (a[1] & 0xc0) == 64)
			return "shared (carrier-grade NAT)";
		if (a[0] == 169 && a[1] == 254)
			return "link-local";
		if (a[0] == 192 && a[1] == 0 && a[2] == 0)
			return "reserved (IETF protocol)";
		if (a[0] == 198 && (a[1] & 0xfe) == 18)
			return "reserved (benchmarking)";
		if ((a[0] == 192 && a[1] == 0 && a[2] == 2) ||
		    (a[0] == 198 && a[1] == 51 && a[2] == 100) ||
		    (a[0] == 203 && a[1] == 0 && a[2] == 113))
			return "reserved (documentation)";
		if (a[0] >= 224 && a[0] <= 239)
			return "multicast";
		if (a[0] >= 240)
			return "reserved";
		return NULL;
	}
	if (memcmp(a, zero, 16) == 0)
		return "unspecified";
	if (memcmp(a, loop6, 16) == 0)
		return "loopback";
	if (memcmp(a, mapped, 12) == 0)
		return egress_addr_class(AF_INET, a + 12) != NULL ?
		    egress_addr_class(AF_INET, a + 12) : "IPv4-mapped";
	if (a[0] == 0 && a[1] == 0x64 && a[2] == 0xff && a[3] == 0x9b)
		return "reserved (NAT64)";
	if ((a[0] & 0xfe) == 0xfc)
		return "unique-local";
	if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80)
		return "link-local";
	if (a[0] == 0xfe && (a[1] & 0xc0) == 0xc0)
		return "site-local";
	if (a[0] == 0xff)
		return "multicast";
	if (a[0] == 0x20 && a[1] == 0x01 && a[2] == 0x0d && a[3] == 0xb8)
		return "reserved (documentation)";
	if (a[0] == 0x20 && a[1] == 0x02)
		return "reserved (6to4)";
	if (a[0] == 0x20 && a[1] == 0x01 && a[2] == 0 && a[3] == 0)
		return "reserved (Teredo)";
	if ((a[0] & 0xe0) != 0x20)
		return "reserved";	/* outside 2000::/3, global unicast */
	return NULL;
}

const struct egress_pattern *
egress_addr_denied(const struct egress_rules *r, int family,
    const uint8_t *addr)
{
	size_t i;

	for (i = 0; i < r->ndeny; i++)
		if (r->deny[i].is_addr && addr_match(&r->deny[i], family, addr))
			return &r->deny[i];
	return NULL;
}

bool
egress_addr_allowed(const struct egress_rules *r, int family,
    const uint8_t *addr)
{
	size_t i;

	for (i = 0; i < r->nallow; i++)
		if (r->allow[i].is_addr && addr_match(&r->allow[i], family,
		    addr))
			return true;
	return false;
}
