/*
 * sandbox-inproc-bench: what one sandboxed run costs a long-lived server
 * (the context built once, as the server does), against a bare fork+exec
 * from the same process. Prints median and p95 in microseconds of N runs of
 * /bin/true: bare, sandbox with a fresh netns per run, sandbox with a netns
 * pool; then the cost of the cgroup per run: the pooled run without and
 * with its cgroup, alternating run by run (so that both see the same
 * machine), and the median of the pairwise differences.
 * Usage: sandbox-inproc-bench [N]
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "sandbox.h"

/* Runs measured per row (default); a warm-up of a tenth comes first. */
#define INPROC_RUNS	300

extern char **environ;

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

static void
row(const char *name, double *t, int n)
{
	qsort(t, n, sizeof(*t), cmp);
	printf("%-34s n=%d median=%8.1f us  p95=%8.1f us\n", name, n,
	    t[n / 2], t[(int)(0.95 * (n - 1) + 0.5)]);
}

static int
bare(void)
{
	char *argv[] = { "/bin/true", NULL };
	pid_t pid;
	int st;

	if (posix_spawn(&pid, argv[0], NULL, NULL, argv, environ) != 0 ||
	    waitpid(pid, &st, 0) < 0)
		return -1;
	return 0;
}

static int
sandboxed(struct sb_ctx *ctx)
{
	static const char *const argv[] = { "/bin/true", NULL };
	struct sb_request req = { .program = argv[0], .argv = argv };
	struct sb_result res;
	int rc;

	sb_limits_default(&req.limits);
	rc = sb_run(ctx, &req, NULL, &res);
	if (rc == 0 && (!res.exited || res.exit_code != 0))
		rc = -1;
	sb_result_fini(&res);
	return rc;
}

static int
measure(const char *name, struct sb_ctx *ctx, int n)
{
	double *t = calloc(n, sizeof(*t)), s;
	int i;

	for (i = -n / 10; i < n; i++) {
		s = now_us();
		if ((ctx != NULL ? sandboxed(ctx) : bare()) < 0) {
			fprintf(stderr, "%s: run failed\n", name);
			free(t);
			return -1;
		}
		if (i >= 0)
			t[i] = now_us() - s;
	}
	row(name, t, n);
	free(t);
	return 0;
}

/*
 * A run taken from the pool: the sandbox built ahead (sb_start, deferred:
 * not timed, as a pool's refill is off the call's path), then the call
 * alone timed: sb_finish() naming /bin/true, to its reaped end.
 */
static int
measure_taken(const char *name, struct sb_ctx *ctx, int n)
{
	static const char *const argv[] = { "/bin/true", NULL };
	double *t = calloc(n, sizeof(*t)), s;
	struct sb_request req;
	struct sb_started *st;
	struct sb_result res;
	int i, rc;

	for (i = -n / 10; i < n; i++) {
		memset(&req, 0, sizeof(req));
		sb_limits_default(&req.limits);
		req.deferred = true;
		if (sb_start(ctx, &req, &st, &res) < 0) {
			fprintf(stderr, "%s: %s\n", name, res.message);
			sb_result_fini(&res);
			free(t);
			return -1;
		}
		sb_result_fini(&res);
		/* built through, as a pooled one is when its call comes */
		if (!sb_started_ready(st, 5000)) {
			fprintf(stderr, "%s: not ready\n", name);
			sb_discard(st);
			free(t);
			return -1;
		}
		req.deferred = false;
		req.program = argv[0];
		req.argv = argv;
		s = now_us();
		rc = sb_finish(st, &req, NULL, &res);
		if (i >= 0)
			t[i] = now_us() - s;
		if (rc < 0 || !res.exited || res.exit_code != 0) {
			fprintf(stderr, "%s: run failed: %s\n", name,
			    res.message);
			sb_result_fini(&res);
			free(t);
			return -1;
		}
		sb_result_fini(&res);
	}
	row(name, t, n);
	free(t);
	return 0;
}

/* Runs of off and on taken in turns; rows, then the paired difference. */
static int
measure_pair(struct sb_ctx *off, struct sb_ctx *on, int n)
{
	double *t0 = calloc(n, sizeof(double)), *t1 = calloc(n, sizeof(double));
	double *d = calloc(n, sizeof(double)), s;
	int i, k, rc = -1;

	for (i = -n / 10; i < n; i++) {
		for (k = 0; k < 2; k++) {
			/* alternate which goes first, too */
			struct sb_ctx *c = (k ^ (i & 1)) ? on : off;

			s = now_us();
			if (sandboxed(c) < 0) {
				fprintf(stderr, "cgroup pair: run failed\n");
				goto out;
			}
			if (i >= 0)
				(c == on ? t1 : t0)[i] = now_us() - s;
		}
		if (i >= 0)
			d[i] = t1[i] - t0[i];
	}
	row("sb_run /bin/true, pool, no cgroup", t0, n);
	row("sb_run /bin/true, pool, cgroup", t1, n);
	qsort(d, n, sizeof(*d), cmp);
	printf("cgroup per run: median %+.1f us (of the pairwise "
	    "differences), medians %+.1f us\n", d[n / 2], t1[n / 2] - t0[n / 2]);
	rc = 0;
 out:
	free(t0);
	free(t1);
	free(d);
	return rc;
}

int
main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : INPROC_RUNS;
	struct sb_config fresh = { .init_path = MCP_TEST_INIT };
	struct sb_config pooled = { .netns_pool = 1, .init_path = MCP_TEST_INIT };
	struct sb_config nocg = { .netns_pool = 1, .cgroup = SB_CGROUP_OFF,
	    .init_path = MCP_TEST_INIT };
	struct sb_ctx *a = NULL, *b = NULL, *c = NULL;
	struct sb_bounds bounds;
	struct sb_result res;
	int rc = 1;

	if (n < 10)
		n = 10;
	if (sb_ctx_new(&fresh, &a, &res) < 0 ||
	    sb_ctx_new(&pooled, &b, &res) < 0 ||
	    sb_ctx_new(&nocg, &c, &res) < 0) {
		fprintf(stderr, "sandbox-inproc-bench: %s\n", res.message);
		goto out;
	}
	if (measure("bare posix_spawn+wait /bin/true", NULL, n) < 0 ||
	    measure("sb_run /bin/true, fresh netns", a, n) < 0 ||
	    measure("sb_run /bin/true, netns pool", b, n) < 0 ||
	    measure_taken("taken from the pool, no cgroup", c, n) < 0 ||
	    measure_taken("taken from the pool, cgroup", b, n) < 0)
		goto out;
	sb_ctx_bounds(b, &bounds);
	if (bounds.cgroup_version == 0)
		printf("cgroup per run: none here (%s)\n", bounds.why);
	else if (measure_pair(c, b, n) < 0)
		goto out;
	rc = 0;
 out:
	sb_ctx_free(a);
	sb_ctx_free(b);
	sb_ctx_free(c);
	return rc;
}
