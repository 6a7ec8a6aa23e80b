/*
 * fuzz_proxy: libFuzzer harness for what the egress proxy parses from a
 * sandboxed program before it decides (egress/http.c): the request head,
 * the Host header's authority as the proxy re-reads it, a TLS
 * ClientHello's server name and whether a tunnel's first bytes are HTTP,
 * then the rules' host normalisation and decision on whatever came out,
 * and the same bytes as an operator's pattern, pin and tunnel rule.
 * Any input must leave every output bounded and NUL-terminated, and the
 * parser's offsets inside the input.
 *
 * Built as the other harnesses (tests/fuzz/README.md, target fuzz_proxy,
 * seeds in corpus/proxy), or alone:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE \
 *     -Iegress tests/fuzz/fuzz_proxy.c egress/http.c egress/rules.c \
 *     -o fuzz_proxy && ./fuzz_proxy tests/fuzz/corpus/proxy
 *
 * Built with -DPROXY_FUZZ_REPLAY (any compiler) it is a plain program
 * that runs every file of the directories or files it is given through
 * the same entry point: ctest's proxy_fuzz_replay does that with the seed
 * corpus in both builds.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egress.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
must(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_proxy: broken invariant: %s\n", what);
		abort();
	}
}

static void
decide(const char *host, uint16_t port)
{
	static struct egress_rules rules;
	static int ready;
	struct egress_verdict v;
	char err[160];

	if (!ready) {
		egress_rules_init(&rules);
		must(egress_rules_allow(&rules, "*.example.com", err,
		    sizeof(err)) == 0, "allow rule");
		must(egress_rules_allow(&rules, "10.0.0.0/8:*", err,
		    sizeof(err)) == 0, "cidr rule");
		must(egress_rules_allow(&rules, "[fd00::/8]:443", err,
		    sizeof(err)) == 0, "v6 rule");
		must(egress_rules_deny(&rules, "bad.example.com", err,
		    sizeof(err)) == 0, "deny rule");
		ready = 1;
	}
	egress_decide(&rules, host, port, &v);
	must(memchr(v.reason, '\0', sizeof(v.reason)) != NULL, "reason bound");
	must(!v.allowed || v.rule != NULL, "an allow names its rule");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct egress_request q;
	struct egress_pattern pat;
	struct egress_pin pin;
	char err[160], sni[EGRESS_MAX_HOST + 1], *s;
	uint8_t addr[16];
	int rc, fam;

	rc = egress_http_parse((const char *)data, size, &q, err, sizeof(err));
	must(rc >= -1 && rc <= 1, "parse result");
	if (rc == 1) {
		must(q.head_len <= size && q.head_len <= EGRESS_MAX_HEAD,
		    "head inside the input");
		must(q.hdr_off <= q.head_len, "headers inside the head");
		must(q.path_off + q.path_len <= q.head_len, "path inside");
		must(memchr(q.host, '\0', sizeof(q.host)) != NULL, "host bound");
		must(memchr(q.host_hdr, '\0', sizeof(q.host_hdr)) != NULL,
		    "host header bound");
		must(q.connect || q.port != 0, "a port");
		fam = 0;
		if (egress_host_normalize(q.host, &fam, addr) != 0)
			decide(q.host, q.port);
	} else if (rc == -1) {
		must(memchr(err, '\0', sizeof(err)) != NULL, "error bound");
	}
	rc = egress_tls_sni(data, size, sni);
	must(rc >= -2 && rc <= 1, "sni result");
	if (rc == 1)
		must(strlen(sni) <= EGRESS_MAX_HOST, "sni bound");
	rc = egress_http_sniff(data, size);
	must(rc == -2 || rc == 0 || rc == 1, "sniff result");
	must(rc != -2 || size < EGRESS_MAX_HEAD, "sniff decides at the bound");
	/* the same bytes as a rule and a pin, as an operator might type */
	if ((s = malloc(size + 1)) == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (egress_pattern_parse(s, &pat, err, sizeof(err)) == 0)
		must(pat.is_addr || strlen(pat.host) > 0, "a pattern's host");
	if (egress_pin_parse(s, &pin, err, sizeof(err)) == 0)
		must(pin.family != 0 && strlen(pin.host) > 0, "a pin's host");
	/* and as what a port's tunnels carry (network.tunnels) */
	{
		static struct egress_rules tr;

		tr.ntunnels = 0;
		if (egress_rules_tunnel(&tr, s, err, sizeof(err)) == 0) {
			must(tr.ntunnels == 1 && tr.tunnels[0].port != 0,
			    "a tunnel's port");
			must(memchr(tr.tunnels[0].text, '\0',
			    sizeof(tr.tunnels[0].text)) != NULL, "its text");
			must(egress_tunnel_proto(&tr, tr.tunnels[0].port) ==
			    tr.tunnels[0].proto, "the port's protocol");
		} else {
			must(tr.ntunnels == 0, "a refused rule adds nothing");
		}
	}
	if (strlen(s) <= EGRESS_MAX_HOST + 2 &&
	    egress_host_normalize(s, &fam, addr) != 0)
		decide(s, 443);
	free(s);
	return 0;
}

#ifdef PROXY_FUZZ_REPLAY
/* Bytes of one seed file read at most (a head and a hello fit). */
#define REPLAY_MAX	(64 * 1024)

static int
replay_file(const char *path)
{
	static uint8_t buf[REPLAY_MAX];
	size_t n;
	FILE *f;

	if ((f = fopen(path, "rb")) == NULL) {
		perror(path);
		return 1;
	}
	n = fread(buf, 1, sizeof(buf), f);
	(void)fclose(f);
	(void)LLVMFuzzerTestOneInput(buf, n);
	return 0;
}

int
main(int argc, char **argv)
{
	char path[4096];
	struct dirent *e;
	int i, n = 0, bad = 0;
	DIR *d;

	for (i = 1; i < argc; i++) {
		if ((d = opendir(argv[i])) == NULL) {
			bad |= replay_file(argv[i]);
			n++;
			continue;
		}
		while ((e = readdir(d)) != NULL) {
			if (e->d_name[0] == '.')
				continue;
			(void)snprintf(path, sizeof(path), "%s/%s", argv[i],
			    e->d_name);
			bad |= replay_file(path);
			n++;
		}
		(void)closedir(d);
	}
	printf("fuzz_proxy: %d inputs replayed\n", n);
	return bad || n == 0;
}
#endif
