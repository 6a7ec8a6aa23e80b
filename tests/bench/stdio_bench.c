/*
 * stdio_bench: measures an MCP server over stdio with raw JSON-RPC lines.
 *
 *   stdio_bench [options] -- server-command [args...]
 *   stdio_bench --spawn-only [options] -- command [args...]
 *   stdio_bench --responder
 *
 * MCP mode, in this order:
 *   1. cold starts (--cold N): spawn, send initialize, wait for its answer,
 *      send notifications/initialized and tools/list as a client does and
 *      wait for that answer, close stdin, reap the exit.  Reports the time to
 *      the initialize answer, to the tools/list answer (what a client waits
 *      for before it can call anything) and to the reaped exit (the "cold
 *      start").
 *   2. one long-lived session: initialize + notifications/initialized, wait
 *      --settle-ms, then the idle memory of the server's process tree (sum of
 *      Rss and Pss from /proc/PID/smaps_rollup over every descendant).
 *   3. for every --req and every level of --inflight: --warmup untimed round
 *      trips, then --calls timed ones, pipelined: K requests stay outstanding,
 *      responses are matched by id, whatever their order.  Reports calls/s and
 *      the p50/p99 latency (send of a request to arrival of its response).
 *   4. the memory again, then stdin is closed and the exit is reaped; a server
 *      that does not exit within --timeout-ms of EOF is a failure.
 *
 * Spawn-only mode (the sandbox on its own, e.g. `mcp-sandbox exec -- ...`):
 * runs the command --calls times with K copies at once (every --inflight
 * level), stdin and stdout on /dev/null, and reports p50/p99 from spawn to
 * reaped exit.  A non-zero exit is a failure.
 *
 * Every figure is one line of key=value pairs on stdout (tests/bench/run.sh
 * parses them); errors go to stderr and the exit code is 1.
 *
 * Server-to-client messages (notifications, requests) and lines that are not
 * JSON (some reference servers log to stdout) are skipped: only a line whose
 * top-level object has an integer "id" and no "method" counts as a response.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A response line longer than this is a broken server, not a benchmark. */
#define BENCH_LINE_MAX		(64u * 1024u * 1024u)
/* Request lines are built from the command line; params beyond this are a typo. */
#define BENCH_REQ_MAX		(64u * 1024u)
/* More outstanding requests than this measures the pipe buffer, not the server. */
#define BENCH_INFLIGHT_MAX	256
/* Levels of --inflight one run measures; more is a typo. */
#define BENCH_LEVELS_MAX	8
/* Kinds of --req one run measures; more is a typo. */
#define BENCH_REQS_MAX		8
/* Enough for a stable p99; more only makes a run slow. */
#define BENCH_CALLS_MAX		10000000L
/* Default wait for any single answer or exit, in milliseconds. */
#define BENCH_TIMEOUT_MS_DEFAULT	10000
/* Read chunk from the server's stdout. */
#define BENCH_READ_CHUNK	(64u * 1024u)
/* Cold starts made even when --cold-seconds has run out: a median of fewer is noise. */
#define BENCH_COLD_MIN		5
/* Processes scanned in /proc when summing a process tree. */
#define BENCH_PROCS_MAX		65536

/* Options that take a value, for telling "unknown" from "missing value". */
#define BENCH_VALUE_OPTS	" cold cold-seconds calls warmup settle-ms timeout-ms inflight protocol dump req method params expect reject count "

extern char **environ;

struct bench_req {
	const char	*br_label;
	const char	*br_method;
	const char	*br_params;	/* JSON object text, or NULL for none */
	const char	*br_expect;	/* substring every response must hold, or NULL */
	const char	*br_reject;	/* substring no response may hold, or NULL */
	int		 br_errors_ok;	/* JSON-RPC error answers are expected */
	int		 br_wrong_ok;	/* count answers failing expect/reject, go on */
	long		 br_calls;	/* timed round trips; 0: --calls */
};

struct bench_opts {
	long		 bo_cold;
	long		 bo_cold_seconds;	/* stop the cold starts after this; 0: never */
	long		 bo_calls;
	long		 bo_warmup;
	long		 bo_settle_ms;
	long		 bo_timeout_ms;
	int		 bo_levels[BENCH_LEVELS_MAX];
	int		 bo_nlevels;
	struct bench_req bo_reqs[BENCH_REQS_MAX];
	int		 bo_nreqs;
	const char	*bo_protocol;
	const char	*bo_dump;	/* file for per-call latencies, or NULL */
	int		 bo_spawn_only;
	int		 bo_keep_stderr;
	char	       **bo_argv;	/* borrowed from main's argv */
};

/* One running server with pipes to its stdin and stdout. */
struct bench_proc {
	pid_t	 bp_pid;
	int	 bp_pidfd;
	int	 bp_in;		/* write end: server's stdin, -1 once closed */
	int	 bp_out;	/* read end: server's stdout */
	char	*bp_buf;	/* bytes read, not yet consumed as lines */
	size_t	 bp_len;
	size_t	 bp_cap;
	long long bp_next_id;
};

/* What the scanner found in one line. */
struct bench_msg {
	int		bm_has_id;
	long long	bm_id;
	int		bm_has_method;
	int		bm_has_error;
};

static void bench_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
bench_err(const char *fmt, ...)
{
	va_list ap;

	fputs("stdio_bench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static double
bench_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int
bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Nearest-rank percentile of a sorted array. */
static double
bench_pct(const double *sorted, long n, double pct)
{
	long rank;

	if (n <= 0)
		return 0.0;
	rank = (long)(pct / 100.0 * (double)n + 0.999999);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return sorted[rank - 1];
}

/*
 * Finds the top-level "id", "method" and "error" keys of one JSON-RPC line
 * without building a tree: tracks nesting and strings only.  A line that is
 * not an object yields nothing (bm_has_id 0), which the caller skips.
 */
static void
bench_scan(const char *p, size_t n, struct bench_msg *m)
{
	size_t i, j, k;
	int depth = 0, expect_key = 0;

	memset(m, 0, sizeof(*m));
	for (i = 0; i < n; i++) {
		char c = p[i];

		if (c == '"') {
			for (j = i + 1; j < n && p[j] != '"'; j++)
				if (p[j] == '\\')
					j++;
			if (j >= n)
				return;
			if (depth == 1 && expect_key) {
				size_t klen = j - i - 1;
				const char *key = p + i + 1;

				expect_key = 0;
				for (k = j + 1; k < n && (p[k] == ' ' || p[k] == '\t'); k++)
					;
				if (k >= n || p[k] != ':')
					return;
				for (k++; k < n && (p[k] == ' ' || p[k] == '\t'); k++)
					;
				if (klen == 2 && memcmp(key, "id", 2) == 0 &&
				    k < n && (p[k] == '-' || (p[k] >= '0' && p[k] <= '9'))) {
					char *end;

					errno = 0;
					m->bm_id = strtoll(p + k, &end, 10);
					if (errno == 0 && end != p + k)
						m->bm_has_id = 1;
				} else if (klen == 6 && memcmp(key, "method", 6) == 0)
					m->bm_has_method = 1;
				else if (klen == 5 && memcmp(key, "error", 5) == 0)
					m->bm_has_error = 1;
				i = k - 1;
				continue;
			}
			i = j;
			continue;
		}
		switch (c) {
		case '{':
			if (++depth == 1)
				expect_key = 1;
			break;
		case '[':
			depth++;
			break;
		case '}':
		case ']':
			depth--;
			break;
		case ',':
			if (depth == 1)
				expect_key = 1;
			break;
		default:
			break;
		}
	}
}

static int
bench_write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * Spawns argv with its stdin and stdout on pipes (MCP mode) or on /dev/null
 * (spawn_only).  stderr goes to /dev/null unless keep_stderr.
 */
static int
bench_spawn(struct bench_proc *bp, char **argv, int spawn_only, int keep_stderr)
{
	posix_spawn_file_actions_t fa;
	int in[2] = { -1, -1 }, out[2] = { -1, -1 };
	int rc = -1, fa_ok = 0, err;

	memset(bp, 0, sizeof(*bp));
	bp->bp_pid = -1;
	bp->bp_pidfd = bp->bp_in = bp->bp_out = -1;
	bp->bp_next_id = 1;
	if (posix_spawn_file_actions_init(&fa) != 0)
		goto out;
	fa_ok = 1;
	if (spawn_only) {
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	} else {
		if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) {
			bench_err("pipe2: %s", strerror(errno));
			goto out;
		}
		/* dup2 clears O_CLOEXEC on the child's copies only. */
		posix_spawn_file_actions_adddup2(&fa, in[0], 0);
		posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	}
	if (!keep_stderr)
		posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	err = posix_spawnp(&bp->bp_pid, argv[0], &fa, NULL, argv, environ);
	if (err != 0) {
		bench_err("cannot run %s: %s", argv[0], strerror(err));
		bp->bp_pid = -1;
		goto out;
	}
	bp->bp_pidfd = pidfd_open(bp->bp_pid, 0);
	if (bp->bp_pidfd < 0) {
		bench_err("pidfd_open: %s", strerror(errno));
		goto out;
	}
	if (!spawn_only) {
		bp->bp_in = in[1];
		bp->bp_out = out[0];
		in[1] = out[0] = -1;
	}
	rc = 0;
 out:
	if (fa_ok)
		posix_spawn_file_actions_destroy(&fa);
	for (int i = 0; i < 2; i++) {
		if (in[i] >= 0)
			close(in[i]);
		if (out[i] >= 0)
			close(out[i]);
	}
	return rc;
}

static void
bench_close_in(struct bench_proc *bp)
{
	if (bp->bp_in >= 0) {
		close(bp->bp_in);
		bp->bp_in = -1;
	}
}

/* Kills (if still running) and reaps the process; frees everything. */
static void
bench_kill(struct bench_proc *bp)
{
	bench_close_in(bp);
	if (bp->bp_pid > 0) {
		kill(bp->bp_pid, SIGKILL);
		waitpid(bp->bp_pid, NULL, 0);
		bp->bp_pid = -1;
	}
	if (bp->bp_out >= 0)
		close(bp->bp_out);
	if (bp->bp_pidfd >= 0)
		close(bp->bp_pidfd);
	bp->bp_out = bp->bp_pidfd = -1;
	free(bp->bp_buf);
	bp->bp_buf = NULL;
}

/*
 * Waits up to timeout_ms for the process to exit and reaps it.  Returns its
 * wait status, or -1 on timeout (the process is left running).
 */
static int
bench_reap(struct bench_proc *bp, long timeout_ms)
{
	struct pollfd pfd = { .fd = bp->bp_pidfd, .events = POLLIN };
	int status, r;

	do
		r = poll(&pfd, 1, (int)timeout_ms);
	while (r < 0 && errno == EINTR);
	if (r <= 0)
		return -1;
	if (waitpid(bp->bp_pid, &status, 0) != bp->bp_pid)
		return -1;
	bp->bp_pid = -1;
	return status;
}

static int
bench_send(struct bench_proc *bp, long long id, const struct bench_req *rq)
{
	char line[BENCH_REQ_MAX];
	int n;

	if (rq->br_params != NULL)
		n = snprintf(line, sizeof(line),
		    "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":\"%s\",\"params\":%s}\n",
		    id, rq->br_method, rq->br_params);
	else
		n = snprintf(line, sizeof(line),
		    "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":\"%s\"}\n",
		    id, rq->br_method);
	if (n < 0 || (size_t)n >= sizeof(line)) {
		bench_err("request for %s is over %u bytes", rq->br_method, BENCH_REQ_MAX);
		return -1;
	}
	if (bench_write_all(bp->bp_in, line, (size_t)n) != 0) {
		bench_err("write to server: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Callback for every response line: id, whether it was an error, the line,
 * and the arrival time.  Returns -1 to abort.
 */
typedef int bench_on_response(void *ctx, const struct bench_msg *m,
    const char *line, size_t len, double now_us);

/*
 * Reads what the server has written (waiting up to timeout_ms for the first
 * byte) and hands every complete response line to cb.  Returns 0, or -1 on
 * EOF, timeout, an oversized line or a callback failure.
 */
static int
bench_pump(struct bench_proc *bp, long timeout_ms, bench_on_response *cb, void *ctx)
{
	struct pollfd pfd = { .fd = bp->bp_out, .events = POLLIN };
	size_t start = 0;
	double now;
	ssize_t r;
	int pr;

	do
		pr = poll(&pfd, 1, (int)timeout_ms);
	while (pr < 0 && errno == EINTR);
	if (pr == 0) {
		bench_err("no answer from the server within %ld ms", timeout_ms);
		return -1;
	}
	if (pr < 0) {
		bench_err("poll: %s", strerror(errno));
		return -1;
	}
	if (bp->bp_cap - bp->bp_len < BENCH_READ_CHUNK) {
		size_t ncap = bp->bp_cap ? bp->bp_cap * 2 : 4 * BENCH_READ_CHUNK;
		char *nbuf;

		if (ncap > BENCH_LINE_MAX + BENCH_READ_CHUNK) {
			bench_err("server line over %u bytes", BENCH_LINE_MAX);
			return -1;
		}
		nbuf = realloc(bp->bp_buf, ncap);
		if (nbuf == NULL) {
			bench_err("out of memory");
			return -1;
		}
		bp->bp_buf = nbuf;
		bp->bp_cap = ncap;
	}
	do
		r = read(bp->bp_out, bp->bp_buf + bp->bp_len, bp->bp_cap - bp->bp_len);
	while (r < 0 && errno == EINTR);
	if (r <= 0) {
		bench_err("server closed its stdout%s%s", r < 0 ? ": " : "",
		    r < 0 ? strerror(errno) : "");
		return -1;
	}
	now = bench_now_us();
	bp->bp_len += (size_t)r;
	for (;;) {
		char *nl = memchr(bp->bp_buf + start, '\n', bp->bp_len - start);
		struct bench_msg m;
		size_t len;

		if (nl == NULL)
			break;
		len = (size_t)(nl - (bp->bp_buf + start));
		bench_scan(bp->bp_buf + start, len, &m);
		if (m.bm_has_id && !m.bm_has_method &&
		    cb(ctx, &m, bp->bp_buf + start, len, now) != 0)
			return -1;
		start += len + 1;
	}
	memmove(bp->bp_buf, bp->bp_buf + start, bp->bp_len - start);
	bp->bp_len -= start;
	return 0;
}

/* Waiting for one id (initialize). */
struct bench_one {
	long long	bo1_id;
	int		bo1_done;
	int		bo1_error;
};

static int
bench_on_one(void *ctx, const struct bench_msg *m, const char *line, size_t len,
    double now_us)
{
	struct bench_one *o = ctx;

	if (m->bm_id == o->bo1_id) {
		o->bo1_done = 1;
		o->bo1_error = m->bm_has_error;
		if (m->bm_has_error)
			bench_err("error answer: %.*s", (int)(len > 300 ? 300 : len), line);
	}
	return 0;
}

/* Sends initialize (and optionally notifications/initialized) and waits. */
static int
bench_initialize(struct bench_proc *bp, const struct bench_opts *o, int notify)
{
	char params[512];
	struct bench_req rq = {
		.br_label = "initialize", .br_method = "initialize", .br_params = params
	};
	struct bench_one one = { bp->bp_next_id++, 0, 0 };
	static const char initialized[] =
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";

	snprintf(params, sizeof(params),
	    "{\"protocolVersion\":\"%s\",\"capabilities\":{},"
	    "\"clientInfo\":{\"name\":\"stdio_bench\",\"version\":\"1.0.0\"}}",
	    o->bo_protocol);
	if (bench_send(bp, one.bo1_id, &rq) != 0)
		return -1;
	while (!one.bo1_done)
		if (bench_pump(bp, o->bo_timeout_ms, bench_on_one, &one) != 0)
			return -1;
	if (one.bo1_error)
		return -1;
	if (notify && bench_write_all(bp->bp_in, initialized, sizeof(initialized) - 1) != 0) {
		bench_err("write to server: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* After initialize: tools/list, as a client's first request, answered. */
static int
bench_first_list(struct bench_proc *bp, const struct bench_opts *o)
{
	struct bench_req rq = { .br_label = "tools/list", .br_method = "tools/list" };
	struct bench_one one = { bp->bp_next_id++, 0, 0 };

	if (bench_send(bp, one.bo1_id, &rq) != 0)
		return -1;
	while (!one.bo1_done)
		if (bench_pump(bp, o->bo_timeout_ms, bench_on_one, &one) != 0)
			return -1;
	return one.bo1_error ? -1 : 0;
}

static int
bench_cold(const struct bench_opts *o)
{
	double *init = NULL, *list = NULL, *total = NULL, t_start;
	struct bench_proc bp;
	int rc = -1, status;
	long i, n;

	if (o->bo_cold <= 0)
		return 0;
	init = calloc((size_t)o->bo_cold, sizeof(*init));
	list = calloc((size_t)o->bo_cold, sizeof(*list));
	total = calloc((size_t)o->bo_cold, sizeof(*total));
	if (init == NULL || list == NULL || total == NULL) {
		bench_err("out of memory");
		goto out;
	}
	t_start = bench_now_us();
	for (i = 0; i < o->bo_cold; i++) {
		double t0 = bench_now_us();

		if (o->bo_cold_seconds > 0 && i >= BENCH_COLD_MIN &&
		    t0 - t_start > (double)o->bo_cold_seconds * 1e6)
			break;
		if (bench_spawn(&bp, o->bo_argv, 0, o->bo_keep_stderr) != 0)
			goto out;
		if (bench_initialize(&bp, o, 1) != 0) {
			bench_kill(&bp);
			goto out;
		}
		init[i] = bench_now_us() - t0;
		if (bench_first_list(&bp, o) != 0) {
			bench_kill(&bp);
			goto out;
		}
		list[i] = bench_now_us() - t0;
		bench_close_in(&bp);
		status = bench_reap(&bp, o->bo_timeout_ms);
		total[i] = bench_now_us() - t0;
		if (status == -1) {
			bench_err("server did not exit within %ld ms of stdin EOF",
			    o->bo_timeout_ms);
			bench_kill(&bp);
			goto out;
		}
		bench_kill(&bp);
	}
	n = i;
	qsort(init, (size_t)n, sizeof(*init), bench_cmp_double);
	qsort(list, (size_t)n, sizeof(*list), bench_cmp_double);
	qsort(total, (size_t)n, sizeof(*total), bench_cmp_double);
	printf("cold n=%ld init_p50_ms=%.3f init_p99_ms=%.3f list_p50_ms=%.3f "
	    "list_p99_ms=%.3f exit_p50_ms=%.3f exit_p99_ms=%.3f exit_min_ms=%.3f\n",
	    n, bench_pct(init, n, 50) / 1e3, bench_pct(init, n, 99) / 1e3,
	    bench_pct(list, n, 50) / 1e3, bench_pct(list, n, 99) / 1e3,
	    bench_pct(total, n, 50) / 1e3, bench_pct(total, n, 99) / 1e3,
	    total[0] / 1e3);
	fflush(stdout);
	rc = 0;
 out:
	free(init);
	free(list);
	free(total);
	return rc;
}

/* Reads "Rss:" and "Pss:" (KiB) of one process; 0 if it is gone. */
static void
bench_smaps(pid_t pid, long *rss, long *pss)
{
	char path[64], line[256];
	FILE *f;
	long v;

	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
	f = fopen(path, "re");
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "Rss: %ld kB", &v) == 1)
			*rss += v;
		else if (sscanf(line, "Pss: %ld kB", &v) == 1)
			*pss += v;
	}
	fclose(f);
}

/* Parent pid from /proc/PID/stat, -1 if unreadable. */
static pid_t
bench_ppid(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd, ppid;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* comm may hold spaces and parentheses: the state follows the last ')'. */
	p = strrchr(buf, ')');
	if (p == NULL || sscanf(p + 1, " %*c %d", &ppid) != 1)
		return -1;
	return ppid;
}

/* Sums Rss and Pss over root and all its descendants. */
static void
bench_memory(const char *tag, pid_t root)
{
	pid_t *pids = NULL, *ppids = NULL, *tree = NULL;
	long rss = 0, pss = 0;
	int n = 0, nt = 0, i, t;
	struct dirent *de;
	DIR *d;

	pids = calloc(BENCH_PROCS_MAX, sizeof(*pids));
	ppids = calloc(BENCH_PROCS_MAX, sizeof(*ppids));
	tree = calloc(BENCH_PROCS_MAX, sizeof(*tree));
	d = opendir("/proc");
	if (pids == NULL || ppids == NULL || tree == NULL || d == NULL) {
		bench_err("cannot list /proc");
		goto out;
	}
	while (n < BENCH_PROCS_MAX && (de = readdir(d)) != NULL) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (end == de->d_name || *end != '\0')
			continue;
		pids[n] = (pid_t)pid;
		ppids[n] = bench_ppid((pid_t)pid);
		n++;
	}
	tree[nt++] = root;
	for (t = 0; t < nt; t++)
		for (i = 0; i < n && nt < BENCH_PROCS_MAX; i++)
			if (ppids[i] == tree[t])
				tree[nt++] = pids[i];
	for (t = 0; t < nt; t++)
		bench_smaps(tree[t], &rss, &pss);
	printf("%s procs=%d rss_kib=%ld pss_kib=%ld\n", tag, nt, rss, pss);
	fflush(stdout);
 out:
	if (d != NULL)
		closedir(d);
	free(pids);
	free(ppids);
	free(tree);
}

/* State of one pipelined measurement. */
struct bench_run {
	long long		 br_base;	/* id of the first request */
	long			 br_total;
	long			 br_sent;
	long			 br_done;
	long			 br_errors;	/* JSON-RPC error answers */
	long			 br_bad;	/* answers without the expected text */
	double			*br_sent_at;	/* per request, send time */
	double			*br_lat;	/* per request, latency; <0 while pending */
	const struct bench_req	*br_req;
};

static int
bench_on_run(void *ctx, const struct bench_msg *m, const char *line, size_t len,
    double now_us)
{
	struct bench_run *r = ctx;
	long long k = m->bm_id - r->br_base;

	if (k < 0 || k >= r->br_sent)
		return 0;		/* not one of ours: ignore */
	if (r->br_lat[k] >= 0) {
		bench_err("second answer to id %lld", m->bm_id);
		return -1;
	}
	r->br_lat[k] = now_us - r->br_sent_at[k];
	r->br_done++;
	if (m->bm_has_error) {
		if (r->br_errors == 0 && !r->br_req->br_errors_ok)
			bench_err("%s: error answer: %.*s", r->br_req->br_label,
			    (int)(len > 300 ? 300 : len), line);
		r->br_errors++;
	}
	if (r->br_req->br_expect != NULL &&
	    memmem(line, len, r->br_req->br_expect, strlen(r->br_req->br_expect)) == NULL) {
		if (r->br_bad == 0)
			bench_err("%s: answer without \"%s\": %.*s", r->br_req->br_label,
			    r->br_req->br_expect, (int)(len > 300 ? 300 : len), line);
		r->br_bad++;
	} else if (r->br_req->br_reject != NULL &&
	    memmem(line, len, r->br_req->br_reject, strlen(r->br_req->br_reject)) != NULL) {
		if (r->br_bad == 0)
			bench_err("%s: answer with \"%s\": %.*s", r->br_req->br_label,
			    r->br_req->br_reject, (int)(len > 300 ? 300 : len), line);
		r->br_bad++;
	}
	return 0;
}

/*
 * Appends "label inflight index latency_us" for every call of r, in the
 * order they were sent, to path (so that they can be paired with what the
 * server logged about the same calls).
 */
static int
bench_dump(const char *path, const struct bench_req *rq, int k,
    const struct bench_run *r)
{
	FILE *f;
	long i;
	int rc = 0;

	if ((f = fopen(path, "ae")) == NULL) {
		bench_err("%s: %s", path, strerror(errno));
		return -1;
	}
	for (i = 0; i < r->br_total; i++)
		fprintf(f, "%s %d %ld %.1f\n", rq->br_label, k, i, r->br_lat[i]);
	if (fclose(f) != 0) {
		bench_err("%s: %s", path, strerror(errno));
		rc = -1;
	}
	return rc;
}

/*
 * Runs n requests with k outstanding.  Prints a figure line unless quiet
 * (warmup).  Returns 0, or -1 on a transport failure or a wrong answer.
 */
static int
bench_pipeline(struct bench_proc *bp, const struct bench_opts *o,
    const struct bench_req *rq, long n, int k, int quiet)
{
	struct bench_run r;
	double t0, elapsed;
	int rc = -1;
	long i;

	memset(&r, 0, sizeof(r));
	r.br_base = bp->bp_next_id;
	r.br_total = n;
	r.br_req = rq;
	bp->bp_next_id += n;
	r.br_sent_at = calloc((size_t)n, sizeof(double));
	r.br_lat = calloc((size_t)n, sizeof(double));
	if (r.br_sent_at == NULL || r.br_lat == NULL) {
		bench_err("out of memory");
		goto out;
	}
	for (i = 0; i < n; i++)
		r.br_lat[i] = -1.0;
	t0 = bench_now_us();
	while (r.br_done < n) {
		while (r.br_sent < n && r.br_sent - r.br_done < k) {
			r.br_sent_at[r.br_sent] = bench_now_us();
			if (bench_send(bp, r.br_base + r.br_sent, rq) != 0)
				goto out;
			r.br_sent++;
		}
		if (bench_pump(bp, o->bo_timeout_ms, bench_on_run, &r) != 0)
			goto out;
	}
	elapsed = bench_now_us() - t0;
	if ((r.br_errors > 0 && !rq->br_errors_ok) || (r.br_bad > 0 && !rq->br_wrong_ok)) {
		bench_err("%s: %ld error answers, %ld unexpected answers of %ld",
		    rq->br_label, r.br_errors, r.br_bad, n);
		goto out;
	}
	if (!quiet && o->bo_dump != NULL && bench_dump(o->bo_dump, rq, k, &r) != 0)
		goto out;
	if (!quiet) {
		qsort(r.br_lat, (size_t)n, sizeof(double), bench_cmp_double);
		printf("rt label=%s inflight=%d n=%ld calls_per_s=%.0f p50_us=%.1f "
		    "p99_us=%.1f errors=%ld wrong=%ld\n", rq->br_label, k, n,
		    (double)n / (elapsed / 1e6), bench_pct(r.br_lat, n, 50),
		    bench_pct(r.br_lat, n, 99), r.br_errors, r.br_bad);
		fflush(stdout);
	}
	rc = 0;
 out:
	free(r.br_sent_at);
	free(r.br_lat);
	return rc;
}

static int
bench_session(const struct bench_opts *o)
{
	struct timespec settle;
	struct bench_proc bp;
	int rc = -1, status, q, l;

	if (bench_spawn(&bp, o->bo_argv, 0, o->bo_keep_stderr) != 0)
		return -1;
	if (bench_initialize(&bp, o, 1) != 0)
		goto out;
	settle.tv_sec = o->bo_settle_ms / 1000;
	settle.tv_nsec = (o->bo_settle_ms % 1000) * 1000000L;
	nanosleep(&settle, NULL);
	bench_memory("idle", bp.bp_pid);
	for (q = 0; q < o->bo_nreqs; q++) {
		if (o->bo_warmup > 0 &&
		    bench_pipeline(&bp, o, &o->bo_reqs[q], o->bo_warmup, 1, 1) != 0)
			goto out;
		for (l = 0; l < o->bo_nlevels; l++)
			if (bench_pipeline(&bp, o, &o->bo_reqs[q],
			    o->bo_reqs[q].br_calls > 0 ? o->bo_reqs[q].br_calls : o->bo_calls,
			    o->bo_levels[l], 0) != 0)
				goto out;
	}
	bench_memory("after", bp.bp_pid);
	bench_close_in(&bp);
	status = bench_reap(&bp, o->bo_timeout_ms);
	if (status == -1) {
		bench_err("server did not exit within %ld ms of stdin EOF", o->bo_timeout_ms);
		goto out;
	}
	printf("exit status=%d\n", WIFEXITED(status) ? WEXITSTATUS(status) :
	    128 + WTERMSIG(status));
	rc = 0;
 out:
	bench_kill(&bp);
	return rc;
}

/* Runs the command n times, k at once; each run from spawn to reaped exit. */
static int
bench_spawn_level(const struct bench_opts *o, long n, int k, int quiet)
{
	pid_t running[BENCH_INFLIGHT_MAX];
	double started[BENCH_INFLIGHT_MAX];
	double *lat = NULL, t0, elapsed;
	long launched = 0, done = 0, failed = 0;
	int nrun = 0, rc = -1, status, i, err;

	lat = calloc((size_t)n, sizeof(*lat));
	if (lat == NULL) {
		bench_err("out of memory");
		goto out;
	}
	t0 = bench_now_us();
	while (done < n) {
		pid_t pid;

		while (launched < n && nrun < k) {
			posix_spawn_file_actions_t fa;

			posix_spawn_file_actions_init(&fa);
			posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
			posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
			if (!o->bo_keep_stderr)
				posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
			started[nrun] = bench_now_us();
			err = posix_spawnp(&running[nrun], o->bo_argv[0], &fa, NULL,
			    o->bo_argv, environ);
			posix_spawn_file_actions_destroy(&fa);
			if (err != 0) {
				bench_err("cannot run %s: %s", o->bo_argv[0], strerror(err));
				goto out;
			}
			nrun++;
			launched++;
		}
		do
			pid = waitpid(-1, &status, 0);
		while (pid < 0 && errno == EINTR);
		if (pid < 0) {
			bench_err("waitpid: %s", strerror(errno));
			goto out;
		}
		for (i = 0; i < nrun && running[i] != pid; i++)
			;
		if (i == nrun)
			continue;
		lat[done++] = bench_now_us() - started[i];
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			if (failed == 0)
				bench_err("%s exited with status %d", o->bo_argv[0],
				    WIFEXITED(status) ? WEXITSTATUS(status) :
				    128 + WTERMSIG(status));
			failed++;
		}
		running[i] = running[nrun - 1];
		started[i] = started[nrun - 1];
		nrun--;
	}
	elapsed = bench_now_us() - t0;
	if (failed > 0) {
		bench_err("%ld of %ld runs failed", failed, n);
		goto out;
	}
	if (!quiet) {
		qsort(lat, (size_t)n, sizeof(*lat), bench_cmp_double);
		printf("spawn inflight=%d n=%ld runs_per_s=%.0f p50_us=%.1f p99_us=%.1f\n",
		    k, n, (double)n / (elapsed / 1e6), bench_pct(lat, n, 50),
		    bench_pct(lat, n, 99));
		fflush(stdout);
	}
	rc = 0;
 out:
	while (nrun > 0)
		waitpid(running[--nrun], NULL, 0);
	free(lat);
	return rc;
}

static int
bench_spawn_only(const struct bench_opts *o)
{
	int l;

	if (o->bo_warmup > 0 && bench_spawn_level(o, o->bo_warmup, 1, 1) != 0)
		return -1;
	for (l = 0; l < o->bo_nlevels; l++)
		if (bench_spawn_level(o, o->bo_calls, o->bo_levels[l], 0) != 0)
			return -1;
	return 0;
}

/*
 * --responder: the cheapest possible stdio "server", for the transport floor.
 * Answers every line that has an integer top-level id with an empty result
 * and exits on EOF.  run.sh times it like the real servers, so the figures
 * show what the pipes and this driver cost on the machine at hand.
 */
static int
bench_responder(void)
{
	struct bench_proc in;
	char out[128];

	memset(&in, 0, sizeof(in));
	in.bp_out = 0;
	in.bp_in = -1;
	for (;;) {
		struct pollfd pfd = { .fd = 0, .events = POLLIN };
		size_t start = 0;
		ssize_t r;

		if (in.bp_cap - in.bp_len < BENCH_READ_CHUNK) {
			size_t ncap = in.bp_cap ? in.bp_cap * 2 : 4 * BENCH_READ_CHUNK;
			char *nbuf;

			if (ncap > BENCH_LINE_MAX + BENCH_READ_CHUNK ||
			    (nbuf = realloc(in.bp_buf, ncap)) == NULL)
				break;
			in.bp_buf = nbuf;
			in.bp_cap = ncap;
		}
		if (poll(&pfd, 1, -1) < 0 && errno != EINTR)
			break;
		r = read(0, in.bp_buf + in.bp_len, in.bp_cap - in.bp_len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		in.bp_len += (size_t)r;
		for (;;) {
			char *nl = memchr(in.bp_buf + start, '\n', in.bp_len - start);
			struct bench_msg m;
			size_t len;
			int n;

			if (nl == NULL)
				break;
			len = (size_t)(nl - (in.bp_buf + start));
			bench_scan(in.bp_buf + start, len, &m);
			start += len + 1;
			if (!m.bm_has_id)
				continue;
			n = snprintf(out, sizeof(out),
			    "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{}}\n", m.bm_id);
			if (bench_write_all(1, out, (size_t)n) != 0)
				goto out;
		}
		memmove(in.bp_buf, in.bp_buf + start, in.bp_len - start);
		in.bp_len -= start;
	}
 out:
	free(in.bp_buf);
	return 0;
}

static void
bench_usage(FILE *f)
{
	fputs("usage: stdio_bench [options] -- server-command [args...]\n"
	    "       stdio_bench --spawn-only [options] -- command [args...]\n"
	    "options:\n"
	    "  --cold N          cold starts to time (default 20; 0 skips)\n"
	    "  --cold-seconds S  stop the cold starts after S seconds (at least 5 made)\n"
	    "  --calls N         timed round trips per request and level (default 2000)\n"
	    "  --warmup N        untimed round trips before each request (default 200)\n"
	    "  --inflight LIST   comma-separated requests in flight (default 1,8)\n"
	    "  --req LABEL       start a request kind; then:\n"
	    "    --method M      its method (default tools/list)\n"
	    "    --params JSON   its params object (default none)\n"
	    "    --expect TEXT   text every answer must contain\n"
	    "    --reject TEXT   text no answer may contain (e.g. '\"isError\":true')\n"
	    "    --errors-ok     JSON-RPC error answers are expected, not a failure\n"
	    "    --wrong-ok      answers failing --expect/--reject are counted, not a failure\n"
	    "    --count N       timed round trips for this request (default --calls)\n"
	    "  --protocol VER    initialize protocolVersion (default 2025-11-25)\n"
	    "  --dump FILE       append every timed call's latency, in send order\n"
	    "  --settle-ms N     wait after initialize before the idle memory (default 200)\n"
	    "  --timeout-ms N    wait for any answer or exit (default 10000)\n"
	    "  --stderr          keep the server's stderr (default: /dev/null)\n"
	    "  --spawn-only      time the command itself from spawn to exit\n"
	    "  --responder       be a trivial stdio server (the transport floor)\n", f);
}

/* Is a one of the options that take a value? */
static int
bench_value_opt(const char *a)
{
	char word[32];
	int n;

	if (strncmp(a, "--", 2) != 0)
		return 0;
	n = snprintf(word, sizeof(word), " %s ", a + 2);
	return n > 0 && (size_t)n < sizeof(word) && strstr(BENCH_VALUE_OPTS, word) != NULL;
}

static int
bench_number(const char *s, long lo, long hi, long *v)
{
	char *end;

	errno = 0;
	*v = strtol(s, &end, 10);
	return (errno != 0 || end == s || *end != '\0' || *v < lo || *v > hi) ? -1 : 0;
}

static int
bench_parse_levels(const char *s, struct bench_opts *o)
{
	char buf[128], *tok, *save = NULL;
	long v;

	if (snprintf(buf, sizeof(buf), "%s", s) >= (int)sizeof(buf))
		return -1;
	o->bo_nlevels = 0;
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		if (o->bo_nlevels == BENCH_LEVELS_MAX ||
		    bench_number(tok, 1, BENCH_INFLIGHT_MAX, &v) != 0)
			return -1;
		o->bo_levels[o->bo_nlevels++] = (int)v;
	}
	return o->bo_nlevels > 0 ? 0 : -1;
}

int
main(int argc, char **argv)
{
	struct bench_opts o;
	struct bench_req *cur = NULL;
	int i;

	memset(&o, 0, sizeof(o));
	o.bo_cold = 20;
	o.bo_calls = 2000;
	o.bo_warmup = 200;
	o.bo_settle_ms = 200;
	o.bo_timeout_ms = BENCH_TIMEOUT_MS_DEFAULT;
	o.bo_levels[0] = 1;
	o.bo_levels[1] = 8;
	o.bo_nlevels = 2;
	o.bo_protocol = "2025-11-25";
	signal(SIGPIPE, SIG_IGN);
	if (argc == 2 && strcmp(argv[1], "--responder") == 0)
		return bench_responder();

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int bad = 0;

		if (strcmp(a, "--") == 0) {
			i++;
			break;
		} else if (strcmp(a, "--help") == 0) {
			bench_usage(stdout);
			return 0;
		} else if (strcmp(a, "--spawn-only") == 0) {
			o.bo_spawn_only = 1;
			continue;
		} else if (strcmp(a, "--errors-ok") == 0 || strcmp(a, "--wrong-ok") == 0) {
			if (cur == NULL) {
				bench_err("%s must follow --req", a);
				return 2;
			}
			if (a[2] == 'e')
				cur->br_errors_ok = 1;
			else
				cur->br_wrong_ok = 1;
			continue;
		} else if (strcmp(a, "--stderr") == 0) {
			o.bo_keep_stderr = 1;
			continue;
		}
		if (!bench_value_opt(a)) {
			bench_err("unknown option %s", a);
			bench_usage(stderr);
			return 2;
		}
		if (v == NULL) {
			bench_err("%s needs a value", a);
			return 2;
		}
		i++;
		if (strcmp(a, "--cold") == 0)
			bad = bench_number(v, 0, BENCH_CALLS_MAX, &o.bo_cold);
		else if (strcmp(a, "--cold-seconds") == 0)
			bad = bench_number(v, 0, 3600, &o.bo_cold_seconds);
		else if (strcmp(a, "--calls") == 0)
			bad = bench_number(v, 1, BENCH_CALLS_MAX, &o.bo_calls);
		else if (strcmp(a, "--warmup") == 0)
			bad = bench_number(v, 0, BENCH_CALLS_MAX, &o.bo_warmup);
		else if (strcmp(a, "--settle-ms") == 0)
			bad = bench_number(v, 0, 60000, &o.bo_settle_ms);
		else if (strcmp(a, "--timeout-ms") == 0)
			bad = bench_number(v, 1, 600000, &o.bo_timeout_ms);
		else if (strcmp(a, "--inflight") == 0)
			bad = bench_parse_levels(v, &o);
		else if (strcmp(a, "--protocol") == 0)
			o.bo_protocol = v;
		else if (strcmp(a, "--dump") == 0)
			o.bo_dump = v;
		else if (strcmp(a, "--req") == 0) {
			if (o.bo_nreqs == BENCH_REQS_MAX) {
				bench_err("at most %d --req", BENCH_REQS_MAX);
				return 2;
			}
			cur = &o.bo_reqs[o.bo_nreqs++];
			cur->br_label = v;
			cur->br_method = "tools/list";
		} else if (strcmp(a, "--count") == 0) {
			if (cur == NULL) {
				bench_err("%s must follow --req", a);
				return 2;
			}
			bad = bench_number(v, 1, BENCH_CALLS_MAX, &cur->br_calls);
		} else if (strcmp(a, "--method") == 0 || strcmp(a, "--params") == 0 ||
		    strcmp(a, "--expect") == 0 || strcmp(a, "--reject") == 0) {
			if (cur == NULL) {
				bench_err("%s must follow --req", a);
				return 2;
			}
			if (a[2] == 'm')
				cur->br_method = v;
			else if (a[2] == 'p')
				cur->br_params = v;
			else if (a[2] == 'r')
				cur->br_reject = v;
			else
				cur->br_expect = v;
		} else {
			bench_err("unknown option %s", a);
			bench_usage(stderr);
			return 2;
		}
		if (bad) {
			bench_err("bad value for %s: %s", a, v);
			return 2;
		}
	}
	if (i >= argc) {
		bench_err("no command given (put it after --)");
		bench_usage(stderr);
		return 2;
	}
	o.bo_argv = argv + i;
	if (o.bo_spawn_only)
		return bench_spawn_only(&o) == 0 ? 0 : 1;
	if (bench_cold(&o) != 0)
		return 1;
	if (o.bo_nreqs == 0 && o.bo_calls > 0) {
		o.bo_reqs[0].br_label = "list";
		o.bo_reqs[0].br_method = "tools/list";
		o.bo_nreqs = 1;
	}
	return bench_session(&o) == 0 ? 0 : 1;
}
