/*
 * egress-bench: what the egress proxy costs (issue 13), measured in one
 * run on this machine, every figure against its reference in the same
 * run, interleaved round by round:
 *
 *   start  sb_run(/bin/true) with the proxy wired in (SB_NET_PROXY, the
 *          call's proxy made, started and ended as tools/sbcall.c does)
 *          against the same run without network; pooled netns (root).
 *   bulk   curl downloading a file from a loopback HTTP server: inside a
 *          sandbox through the proxy, against curl on the host fetching
 *          it directly; curl's own %{speed_download}.
 *   small  the same with a 1 KiB file, fetched twice by one curl; curl's
 *          own %{time_total} of the second fetch (the target: what a fetch
 *          costs), and of the first (a fresh sandbox's first request also
 *          competes with the sandbox's own start-up, the init's release of
 *          its server memory among it).
 *   extra  with --cmd TEMPLATE, the small and bulk fetches also run as
 *          /bin/sh -c TEMPLATE, its %s the curl command line (srt: see
 *          egress_bench.sh), as a comparison; that curl fetches
 *          http://127.0.0.1:PORT/ through its proxy (--noproxy '').
 *
 * The HTTP server is a thread here: it answers any GET with the bytes of
 * a memfd (sendfile), "/big" or "/small". Medians are printed with the
 * ratios and a verdict per target: bulk >= 0.8x direct, small +0.3 ms at
 * most, start +0.2 ms at most. Exit 0 when all are met, 1 when one is not,
 * 2 when it could not measure.
 *
 * usage: egress-bench [--rounds N] [--big-mib M] [--port P] [--cmd TEMPLATE]
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "egress.h"
#include "sandbox.h"

/* Default rounds of start and small (bulk runs a tenth of them). */
#define BENCH_ROUNDS		200
/* Default size of the bulk file: long enough that a start is noise. */
#define BENCH_BIG_MIB		256
#define BENCH_SMALL_BYTES	1024
/* The targets of issue 13. */
#define TARGET_BULK_RATIO	0.8
#define TARGET_SMALL_MS		0.3
#define TARGET_START_MS		0.2

extern char **environ;

static int big_fd, small_fd;
static size_t big_len;

static double
now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp);
	return v[n / 2];
}

/* ---- the loopback HTTP server ---- */

static void *
http_conn(void *arg)
{
	int fd = (int)(intptr_t)arg, src;
	char buf[4096], head[128];
	size_t len = 0, size;
	off_t off = 0;
	ssize_t n;

	while (len < sizeof(buf) - 1) {
		n = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (n <= 0)
			goto out;
		len += (size_t)n;
		buf[len] = '\0';
		if (strstr(buf, "\r\n\r\n") != NULL)
			break;
	}
	src = strstr(buf, " /big ") != NULL ? big_fd : small_fd;
	size = src == big_fd ? big_len : BENCH_SMALL_BYTES;
	n = snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Length: "
	    "%zu\r\nConnection: close\r\n\r\n", size);
	if (write(fd, head, (size_t)n) != n)
		goto out;
	while ((size_t)off < size)
		if (sendfile(fd, src, &off, size - (size_t)off) <= 0)
			break;
 out:
	(void)close(fd);
	return NULL;
}

static void *
http_main(void *arg)
{
	int lfd = (int)(intptr_t)arg, fd;
	pthread_t t;

	while ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		if (pthread_create(&t, NULL, http_conn, (void *)(intptr_t)fd))
			(void)close(fd);
		else
			(void)pthread_detach(t);
	}
	return NULL;
}

static int
http_start(int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
	    .sin_port = htons((uint16_t)port),
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sin);
	pthread_t t;
	int lfd;

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || bind(lfd, (void *)&sin, sizeof(sin)) < 0 ||
	    listen(lfd, 128) < 0 || getsockname(lfd, (void *)&sin, &sl) < 0 ||
	    pthread_create(&t, NULL, http_main, (void *)(intptr_t)lfd) != 0)
		return -1;
	return ntohs(sin.sin_port);
}

static int
memfile(size_t len)
{
	int fd = memfd_create("bench", MFD_CLOEXEC);
	char *buf = malloc(1 << 20);
	size_t w = 0, k;

	if (fd < 0 || buf == NULL)
		return -1;
	memset(buf, 'x', 1 << 20);
	while (w < len) {
		k = len - w < (1u << 20) ? len - w : (1u << 20);
		if (write(fd, buf, k) != (ssize_t)k)
			return -1;
		w += k;
	}
	free(buf);
	return fd;
}

/* ---- runs ---- */

static int
proxy_cb(void *arg, int lfd, enum sb_net_event ev)
{
	if (ev == SB_NET_CLOSING) {
		egress_call_end(arg);
		return 0;
	}
	if (ev == SB_NET_READY)
		return egress_call_accept(arg);
	return egress_call_start(arg, lfd);
}

/* sb_run of argv, with the proxy when rules != NULL; stdout into out. */
static int
sandboxed(struct sb_ctx *ctx, const struct egress_rules *rules,
    const char *const *argv, char *out, size_t outlen)
{
	static const char *const envp[] = {
		"PATH=/usr/bin:/bin", "HOME=/tmp",
		"http_proxy=http://127.0.0.1:3128", NULL,
	};
	struct sb_request req = { .program = argv[0], .argv = argv,
	    .envp = envp };
	struct egress_call *ec = NULL;
	struct sb_result res;
	int rc;

	sb_limits_default(&req.limits);
	req.limits.wall_ms = 60000;
	if (rules != NULL) {
		if ((ec = egress_call_new(rules)) == NULL)
			return -1;
		req.network = SB_NET_PROXY;
		req.net_listener = proxy_cb;
		req.net_arg = ec;
	}
	rc = sb_run(ctx, &req, NULL, &res);
	if (rc == 0 && (!res.exited || res.exit_code != 0)) {
		fprintf(stderr, "egress-bench: %s failed: %.300s\n", argv[0],
		    res.err_out.data ? res.err_out.data : "");
		rc = -1;
	}
	if (rc == 0 && out != NULL)
		(void)snprintf(out, outlen, "%s", res.out.data ? res.out.data :
		    "");
	if (rc < 0 && res.message[0])
		fprintf(stderr, "egress-bench: %s\n", res.message);
	sb_result_fini(&res);
	egress_call_free(ec);
	return rc;
}

/* argv on the host; its stdout into out. */
static int
host(const char *const *argv, char *out, size_t outlen)
{
	posix_spawn_file_actions_t fa;
	int p[2], st;
	size_t len = 0;
	ssize_t n;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	if (posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv,
	    environ) != 0) {
		(void)close(p[0]);
		(void)close(p[1]);
		return -1;
	}
	posix_spawn_file_actions_destroy(&fa);
	(void)close(p[1]);
	while (len < outlen - 1 && (n = read(p[0], out + len,
	    outlen - 1 - len)) > 0)
		len += (size_t)n;
	out[len] = '\0';
	(void)close(p[0]);
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		return -1;
	return 0;
}

/* "T1 T2" of curl's -w, in seconds, as ms. */
static int
two(const char *out, double *first, double *second)
{
	char *end;

	*first = strtod(out, &end) * 1e3;
	if (end == out)
		return -1;
	*second = strtod(end, NULL) * 1e3;
	return 0;
}

/* /bin/sh -c TEMPLATE, its (one) %s the curl command line, for --cmd */
static int
prefixed(const char *tmpl, const char *curl_args, char *out, size_t outlen)
{
	char cmd[2048], line[1024];
	const char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	const char *at = strstr(tmpl, "%s");

	if (at == NULL)
		return -1;
	(void)snprintf(line, sizeof(line), "/usr/bin/curl --noproxy '' %s",
	    curl_args);
	(void)snprintf(cmd, sizeof(cmd), "%.*s%s%s", (int)(at - tmpl), tmpl,
	    line, at + 2);
	return host(argv, out, outlen);
}

int
main(int argc, char **argv)
{
	struct sb_config cfg = { .netns_pool = 4, .init_path = MCP_TEST_INIT };
	struct egress_rules rules;
	struct sb_ctx *ctx;
	struct sb_result err;
	const char *prefix = NULL;
	int rounds = BENCH_ROUNDS, big_mib = BENCH_BIG_MIB, port = 0, i;
	int fails = 0;
	double *t_none, *t_proxy, *s_direct, *s_proxy, *b_direct, *b_proxy;
	double *f_direct, *f_proxy, *f_extra, fd, fp, fe = 0;
	double *s_extra, *b_extra, mn, mp, sd, sp, bd, bp, se = 0, be = 0;
	char url_small[128], url_big[128], url_small_p[128], url_big_p[128];
	char out[256], e[160], pin[128], allow[64], extra_args[256];
	int nbulk;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (strcmp(argv[i], "--big-mib") == 0 && i + 1 < argc)
			big_mib = atoi(argv[++i]);
		else if (strcmp(argv[i], "--port") == 0 && i + 1 < argc)
			port = atoi(argv[++i]);
		else if (strcmp(argv[i], "--cmd") == 0 && i + 1 < argc)
			prefix = argv[++i];
		else {
			fprintf(stderr, "usage: egress-bench [--rounds N] "
			    "[--big-mib M] [--port P] [--cmd TEMPLATE]\n");
			return 2;
		}
	}
	if (rounds < 10)
		rounds = 10;
	nbulk = rounds / 10 > 3 ? rounds / 10 : 3;
	big_len = (size_t)big_mib << 20;
	if ((big_fd = memfile(big_len)) < 0 ||
	    (small_fd = memfile(BENCH_SMALL_BYTES)) < 0 ||
	    (port = http_start(port)) < 0) {
		perror("egress-bench: setup");
		return 2;
	}
	egress_rules_init(&rules);
	rules.max_bytes = 1ull << 40;
	(void)snprintf(allow, sizeof(allow), "bench.test:%d", port);
	(void)snprintf(pin, sizeof(pin), "bench.test:%d:127.0.0.1", port);
	if (egress_rules_allow(&rules, allow, e, sizeof(e)) != 0 ||
	    egress_rules_pin(&rules, pin, e, sizeof(e)) != 0) {
		fprintf(stderr, "egress-bench: rules: %s\n", e);
		return 2;
	}
	if (sb_ctx_new(&cfg, &ctx, &err) < 0) {
		fprintf(stderr, "egress-bench: %s\n", err.message);
		return 2;
	}
	(void)snprintf(url_small, sizeof(url_small),
	    "http://127.0.0.1:%d/small", port);
	(void)snprintf(url_big, sizeof(url_big), "http://127.0.0.1:%d/big",
	    port);
	(void)snprintf(url_small_p, sizeof(url_small_p),
	    "http://bench.test:%d/small", port);
	(void)snprintf(url_big_p, sizeof(url_big_p),
	    "http://bench.test:%d/big", port);
	t_none = calloc(rounds, sizeof(double));
	t_proxy = calloc(rounds, sizeof(double));
	s_direct = calloc(rounds, sizeof(double));
	s_proxy = calloc(rounds, sizeof(double));
	f_direct = calloc(rounds, sizeof(double));
	f_proxy = calloc(rounds, sizeof(double));
	f_extra = calloc(rounds, sizeof(double));
	s_extra = calloc(rounds, sizeof(double));
	b_direct = calloc(nbulk, sizeof(double));
	b_proxy = calloc(nbulk, sizeof(double));
	b_extra = calloc(nbulk, sizeof(double));

	{
		static const char *const t[] = { "/bin/true", NULL };
		const char *cs[] = { "/usr/bin/curl", "-sS", "-o", "/dev/null",
		    "-w", "%{time_total} ", url_small, "-o", "/dev/null",
		    url_small, NULL };
		const char *csp[] = { "/usr/bin/curl", "-sS", "-o", "/dev/null",
		    "-w", "%{time_total} ", url_small_p, "-o", "/dev/null",
		    url_small_p, NULL };

		/* warm-up: the pool's namespaces, page cache, the JIT */
		for (i = 0; i < 10; i++)
			if (sandboxed(ctx, NULL, t, NULL, 0) < 0 ||
			    sandboxed(ctx, &rules, t, NULL, 0) < 0 ||
			    sandboxed(ctx, &rules, csp, out, sizeof(out)) < 0)
				return 2;
		for (i = 0; i < rounds; i++) {
			double a = now_us();

			if (sandboxed(ctx, NULL, t, NULL, 0) < 0)
				return 2;
			t_none[i] = now_us() - a;
			a = now_us();
			if (sandboxed(ctx, &rules, t, NULL, 0) < 0)
				return 2;
			t_proxy[i] = now_us() - a;
			if (host(cs, out, sizeof(out)) < 0)
				return 2;
			if (two(out, &f_direct[i], &s_direct[i]) < 0)
				return 2;
			if (sandboxed(ctx, &rules, csp, out, sizeof(out)) < 0)
				return 2;
			if (two(out, &f_proxy[i], &s_proxy[i]) < 0)
				return 2;
			if (prefix != NULL) {
				(void)snprintf(extra_args, sizeof(extra_args),
				    "-sS -o /dev/null -w '%%{time_total} ' "
				    "http://127.0.0.1:%d/small -o /dev/null "
				    "http://127.0.0.1:%d/small", port, port);
				if (prefixed(prefix, extra_args, out,
				    sizeof(out)) < 0 || two(out, &f_extra[i],
				    &s_extra[i]) < 0) {
					fprintf(stderr, "egress-bench: --cmd "
					    "failed; dropping it\n");
					prefix = NULL;
				}
			}
		}
	}
	{
		const char *cb[] = { "/usr/bin/curl", "-sS", "-o", "/dev/null",
		    "-w", "%{speed_download}", url_big, NULL };
		const char *cbp[] = { "/usr/bin/curl", "-sS", "-o", "/dev/null",
		    "-w", "%{speed_download}", url_big_p, NULL };

		for (i = 0; i < nbulk; i++) {
			if (host(cb, out, sizeof(out)) < 0)
				return 2;
			b_direct[i] = atof(out) / 1e6;
			if (sandboxed(ctx, &rules, cbp, out, sizeof(out)) < 0)
				return 2;
			b_proxy[i] = atof(out) / 1e6;
			if (prefix != NULL) {
				(void)snprintf(extra_args, sizeof(extra_args),
				    "-sS -o /dev/null -w '%%{speed_download}' "
				    "http://127.0.0.1:%d/big", port);
				if (prefixed(prefix, extra_args, out,
				    sizeof(out)) == 0)
					b_extra[i] = atof(out) / 1e6;
			}
		}
	}
	mn = median(t_none, rounds) / 1e3;
	mp = median(t_proxy, rounds) / 1e3;
	sd = median(s_direct, rounds);
	sp = median(s_proxy, rounds);
	fd = median(f_direct, rounds);
	fp = median(f_proxy, rounds);
	bd = median(b_direct, nbulk);
	bp = median(b_proxy, nbulk);
	if (prefix != NULL) {
		se = median(s_extra, rounds);
		fe = median(f_extra, rounds);
		be = median(b_extra, nbulk);
	}
	printf("start  n=%d  no network %.3f ms  proxy wired %.3f ms  "
	    "delta %+.3f ms (target <= +%.1f)  %s\n", rounds, mn, mp, mp - mn,
	    TARGET_START_MS, mp - mn <= TARGET_START_MS ? "MET" : "MISSED");
	fails += mp - mn > TARGET_START_MS;
	printf("small  n=%d  direct %.3f ms  proxy %.3f ms  delta %+.3f ms "
	    "(target <= +%.1f)  %s\n", rounds, sd, sp, sp - sd, TARGET_SMALL_MS,
	    sp - sd <= TARGET_SMALL_MS ? "MET" : "MISSED");
	fails += sp - sd > TARGET_SMALL_MS;
	printf("first  n=%d  direct %.3f ms  proxy %.3f ms  delta %+.3f ms "
	    "(a fresh sandbox's first request; no target)\n", rounds, fd, fp,
	    fp - fd);
	printf("bulk   n=%d  %d MiB  direct %.0f MB/s  proxy %.0f MB/s  ratio "
	    "%.2f (target >= %.1f)  %s\n", nbulk, big_mib, bd, bp, bp / bd,
	    TARGET_BULK_RATIO, bp / bd >= TARGET_BULK_RATIO ? "MET" : "MISSED");
	fails += bp / bd < TARGET_BULK_RATIO;
	if (prefix != NULL)
		printf("extra  small %.3f ms (ours %.3f: theirs/ours %.2f)  "
		    "first %.3f ms (ours %.3f: theirs/ours %.2f)  bulk %.0f MB/s "
		    "(ours %.0f: ours/theirs %.2f)\n  via: %s\n", se, sp, se / sp,
		    fe, fp, fe / fp, be, bp, bp / be, prefix);
	sb_ctx_free(ctx);
	return fails ? 1 : 0;
}
