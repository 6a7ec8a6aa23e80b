/*
 * The sandbox library driven from threads, as the server drives it (Check,
 * CK_FORK): cancellation from another thread, progress, deadlines, runs in
 * parallel (with and without the netns pool), sandboxes that must not reach
 * each other, fail-closed refusals, and no fd leaked into the server.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"	/* struct sb_sched_attr */
#include "sandbox.h"

#define PY	"/usr/bin/python3"

static struct sb_ctx *
new_ctx(unsigned pool)
{
	struct sb_config cfg = { .netns_pool = pool,
	    .init_path = MCP_TEST_INIT };
	struct sb_result res;
	struct sb_ctx *ctx = NULL;

	ck_assert_msg(sb_ctx_new(&cfg, &ctx, &res) == 0, "%s", res.message);
	return ctx;
}

static void
request(struct sb_request *req, const char *const *argv)
{
	memset(req, 0, sizeof(*req));
	req->program = argv[0];
	req->argv = argv;
	sb_limits_default(&req->limits);
}

static int
count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	while (readdir(d) != NULL)
		n++;
	closedir(d);
	return n;
}

/* A host dir the sandbox uid may write (the kernel uid is 65534 as root). */
static char *
make_workspace(void)
{
	char tmpl[] = "/tmp/mcp-sbx-lib-XXXXXX";
	char *d = strdup(mkdtemp(tmpl));

	ck_assert_ptr_nonnull(d);
	chmod(d, 0755);
	if (geteuid() == 0)
		ck_assert_int_eq(chown(d, 65534, 65534), 0);
	return d;
}

START_TEST(run_captures_output_and_exit_code)
{
	static const char *const argv[] = { "/bin/sh", "-c",
	    "echo out; echo err >&2; exit 3", NULL };
	struct sb_ctx *ctx = new_ctx(0);
	struct sb_request req;
	struct sb_result res;

	request(&req, argv);
	ck_assert_int_eq(sb_run(ctx, &req, NULL, &res), 0);
	ck_assert(res.exited);
	ck_assert_int_eq(res.exit_code, 3);
	ck_assert_str_eq(res.out.data, "out\n");
	ck_assert_str_eq(res.err_out.data, "err\n");
	ck_assert(!res.timed_out && !res.cancelled && !res.out.truncated);
	ck_assert_uint_gt(res.duration_us, 0);
	sb_result_fini(&res);
	sb_ctx_free(ctx);
}
END_TEST

START_TEST(server_signal_mask_and_ignores_do_not_leak)
{
	static const char *const argv[] = { "/bin/sh", "-c",
	    "exec grep -E '^Sig(Blk|Ign)' /proc/self/status", NULL };
	struct sb_ctx *ctx = new_ctx(0);
	struct sb_request req;
	struct sb_result res;
	sigset_t set;

	signal(SIGPIPE, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	ck_assert_int_eq(pthread_sigmask(SIG_BLOCK, &set, NULL), 0);
	request(&req, argv);
	ck_assert_int_eq(sb_run(ctx, &req, NULL, &res), 0);
	ck_assert_str_eq(res.out.data, "SigBlk:\t0000000000000000\n"
	    "SigIgn:\t0000000000000000\n");
	sb_result_fini(&res);
	sb_ctx_free(ctx);
}
END_TEST

/*
 * The init holds every capability of the sandbox's namespaces while it
 * builds the root (its exec kept them ambient): it drops them before the
 * program's vfork, so the program's first instruction already sees a
 * pid 1 without any, and has none itself.
 */
START_TEST(no_capability_is_left_when_the_program_starts)
{
	static const char *const argv[] = { "/bin/grep", "-h", "^Cap",
	    "/proc/1/status", "/proc/self/status", NULL };
	static const char zero[] = "CapInh:\t0000000000000000\n"
	    "CapPrm:\t0000000000000000\nCapEff:\t0000000000000000\n"
	    "CapBnd:\t0000000000000000\nCapAmb:\t0000000000000000\n";
	struct sb_ctx *ctx = new_ctx(0);
	struct sb_request req;
	struct sb_result res;
	char want[2 * sizeof(zero)];

	(void)snprintf(want, sizeof(want), "%s%s", zero, zero);
	request(&req, argv);
	ck_assert_int_eq(sb_run(ctx, &req, NULL, &res), 0);
	ck_assert_str_eq(res.out.data, want);
	sb_result_fini(&res);
	sb_ctx_free(ctx);
}
END_TEST

START_TEST(peak_memory_of_a_large_program_is_measured)
{
	static const char *const argv[] = { PY, "-I", "-c",
	    "b = bytearray(64 << 20)", NULL };
	struct sb_ctx *ctx = new_ctx(0);
	struct sb_request req;
	struct sb_result res;

	request(&req, argv);
	ck_assert_int_eq(sb_run(ctx, &req, NULL, &res), 0);
	ck_assert(res.exited && res.exit_code == 0);
	ck_assert_uint_ge(res.peak_rss_bytes, 64ULL << 20);
	ck_assert_uint_lt(res.peak_rss_bytes, 256ULL << 20);
	ck_assert_uint_gt(res.cpu_us, 0);
	sb_result_fini(&res);
	sb_ctx_free(ctx);
}
END_TEST

START_TEST(stdin_bytes_reach_the_program)
{
	static const char *const argv[] = { "/bin/cat", NULL };
	struct sb_ctx *ctx = new_ctx(0);
	struct sb_request req;
	struct sb_result res;

	request(&req, argv);
	req.stdin_data = "a\0b";
	req.stdin_len = 3;
	ck_assert_int_eq(sb_run(ctx, &req, NULL, &res), 0);
	ck_assert_uint_eq(res.out.len, 3);
	ck_assert_int_eq(memcmp(res.out.data, "a\0b", 3), 0);
	sb_result_fini(&res);
	sb_ctx_free(ctx);
}
END_TEST

START_TEST(deadline_kills_the_whole_tree)
{
	static const char *const argv[] = { "/bin/sh", "-c",
	    "setsid sleep 1000 & sleep 1000", NULL };
	struct sb_ctx *ctx = new_ctx(0);
	struct sb_request req;
	struct sb_result res;

	request(&req, argv);
	req.limits.wall_ms = 300;
	ck_assert_int_eq(sb_run(ctx, &req, NULL, &res), 0);
	ck_assert(res.timed_out && !res.exited);
	ck_assert_int_eq(res.signal, SIGKILL);
	ck_assert_uint_ge(res.duration_us, 300000);
	sb_result_fini(&res);
	sb_ctx_free(ctx);
}
END_TEST

/* Host processes whose argv is exactly argv0 arg1 (zombies have none). */
static int
count_procs(const char *argv0, const char *arg1)
{
	char path[300], buf[256], want[128];
	size_t wlen;
	struct dirent *e;
	ssize_t n;
	DIR *d;
	int fd, found = 0;

	wlen = (size_t)snprintf(want, sizeof(want), "%s%c%s%c", argv0, 0,
	    arg1, 0);
	ck_assert_ptr_nonnull(d = opendir("/proc"));
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		(void)snprintf(path, sizeof(path), "/proc/%s/cmdline",
		    e->d_name);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		n = read(fd, buf, sizeof(buf));
		(void)close(fd);
		if (n == (ssize_t)wlen && memcmp(buf, want, wlen) == 0)
			found++;
	}
	closedir(d);
	return found;
}

/* Host processes with an argument equal to arg, anywhere in argv. */
static int
count_procs_with(const char *arg)
{
	char path[300], buf[4096];
	size_t alen = strlen(arg) + 1;
	struct dirent *e;
	ssize_t n, i;
	DIR *d;
	int fd, found = 0;

	ck_assert_ptr_nonnull(d = opendir("/proc"));
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		(void)snprintf(path, sizeof(path), "/proc/%s/cmdline",
		    e->d_name);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		n = read(fd, buf, sizeof(buf));
		(void)close(fd);
		for (i = 0; n > 0 && i + (ssize_t)alen <= n; i++) {
			if ((i == 0 || buf[i - 1] == '\0') &&
			    memcmp(buf + i, arg, alen) == 0) {
				found++;
				break;
			}
		}
	}
	closedir(d);
	return found;
}

/* The file's bytes ("" when absent), for comparing one moment to the next. */
static void
read_small(const char *path, char *buf, size_t len)
{
	ssize_t n = -1;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		n = read(fd, buf, len - 1);
		(void)close(fd);
	}
	buf[n > 0 ? n : 0] = '\0';
}

/*
 * A fork bomb with a writer beside it, then the program ends (exits, or
 * is killed at the deadline): when sb_run() returns, no process of the
 * run is alive and the writer's file does not change any more. The
 * file is read again for a bounded time (STOP_WATCH_MS); a writer still
 * running rewrites it within microseconds. The marker argument is ours
 * (the pid), so that the root and unprivileged runs of this test do not
 * count each other. The bomb is started in the background, and the
 * shell forks nothing after it but the last sleep: a shell that cannot
 * fork exits (code 2), and round 1 must still be running at its deadline.
 */
#define STOP_WATCH_MS	300
START_TEST(a_run_is_stopped_when_it_returns)
{
	static const char script[] =
	    "i=0; while :; do i=$((i+1)); echo $i > late; done &"
	    " while [ ! -s late ]; do :; done;"
	    " f(){ f|f& }; f &"
	    " if [ \"$1\" = spin ]; then while :; do :; done; fi; sleep 2";
	char marker[64], late[300], was[64], now[64];
	const char *argv[] = { "/bin/sh", "-c", script, marker, NULL, NULL };
	char *ws = make_workspace();
	struct sb_ctx *ctx = new_ctx(1);
	struct sb_request req;
	struct sb_result res;
	int round, waited;

	(void)snprintf(marker, sizeof(marker), "c8stop-%ld", (long)getpid());
	(void)snprintf(late, sizeof(late), "%s/late", ws);
	for (round = 0; round < 2; round++) {
		argv[4] = round == 0 ? "exit" : "spin";
		request(&req, argv);
		req.workspace_host = ws;
		req.workspace_writable = true;
		req.limits.nproc = 48;
		req.limits.wall_ms = round == 0 ? 20000 : 1500;
		(void)unlink(late);
		ck_assert_int_eq(sb_run(ctx, &req, NULL, &res), 0);
		ck_assert_int_eq(count_procs_with(marker), 0);
		/* it wrote (may be killed between truncating and writing) */
		ck_assert_int_eq(access(late, F_OK), 0);
		read_small(late, was, sizeof(was));
		for (waited = 0; waited < STOP_WATCH_MS; waited += 10) {
			(void)usleep(10000);
			read_small(late, now, sizeof(now));
			ck_assert_msg(strcmp(was, now) == 0, "round %d: the "
			    "run's file went from %s to %s after sb_run()",
			    round, was, now);
		}
		if (round == 0)
			ck_assert_msg(res.exited, "exited");
		else
			ck_assert_msg(res.timed_out, "timed out (exited %d, "
			    "code %d)", res.exited, res.exit_code);
		sb_result_fini(&res);
	}
	(void)unlink(late);
	(void)rmdir(ws);
	free(ws);
	sb_ctx_free(ctx);
}
END_TEST

/*
 * sb_start() then sb_finish(): stdin larger than a pipe reaches the program
 * as it reads, the output is counted past its cap, and nothing is left.
 */
START_TEST(started_run_takes_stdin_as_it_drains)
{
	static const char *const argv[] = { "/bin/cat", NULL };
	const size_t big = 1u << 20;
	int fds = count_fds();
	struct sb_ctx *ctx = new_ctx(1);
	struct sb_started *s = NULL;
	struct sb_request req;
	struct sb_result res;
	char *data = malloc(big);

	ck_assert_ptr_nonnull(data);
	memset(data, 'x', big);
	request(&req, argv);
	ck_assert_int_eq(sb_start(ctx, &req, &s, &res), 0);
	sb_result_fini(&res);
	ck_assert(sb_started_alive(s));
	req.stdin_data = data;
	req.stdin_len = big;
	ck_assert_int_eq(sb_finish(s, &req, NULL, &res), 0);
	ck_assert(res.exited && res.exit_code == 0 && !res.timed_out);
	ck_assert_uint_eq(res.out.total, big);
	ck_assert(res.out.truncated);
	sb_result_fini(&res);
	sb_ctx_free(ctx);	/* its netns pool holds an fd until then */
	ck_assert_int_eq(count_fds(), fds);
	free(data);
}
END_TEST

/* A program that never reads its stdin: the writer stops, no SIGPIPE. */
START_TEST(started_run_survives_a_program_that_ignores_stdin)
{
	static const char *const argv[] = { "/bin/sh", "-c",
	    "exec 0<&-; echo done", NULL };
	const size_t big = 1u << 20;
	struct sb_ctx *ctx = new_ctx(0);
	struct sb_started *s = NULL;
	struct sb_request req;
	struct sb_result res;
	char *data = calloc(1, big);

	ck_assert_ptr_nonnull(data);
	request(&req, argv);
	ck_assert_int_eq(sb_start(ctx, &req, &s, &res), 0);
	sb_result_fini(&res);
	req.stdin_data = data;
	req.stdin_len = big;
	ck_assert_int_eq(sb_finish(s, &req, NULL, &res), 0);
	ck_assert(res.exited && res.exit_code == 0);
	ck_assert_str_eq(res.out.data, "done\n");
	sb_result_fini(&res);
	sb_ctx_free(ctx);
	free(data);
}
END_TEST

/*
 * The deadline is sb_finish()'s: it kills a started run that hangs. The
 * sleep's argument is ours alone (the root and unprivileged suites run
 * at once, and count_procs looks at the whole host).
 */
START_TEST(started_run_deadline_starts_at_finish)
{
	char script[96], secs[16];
	const char *argv[] = { "/bin/sh", "-c", script, NULL };
	struct sb_ctx *ctx = new_ctx(1);
	struct sb_started *s = NULL;
	struct sb_request req;
	struct sb_result res;

	(void)snprintf(secs, sizeof(secs), "%ld", 900000000L + (long)getpid());
	(void)snprintf(script, sizeof(script), "read x; echo \"got $x\"; "
	    "sleep %s", secs);
	request(&req, argv);
	ck_assert_int_eq(sb_start(ctx, &req, &s, &res), 0);
	sb_result_fini(&res);
	req.stdin_data = "hi\n";
	req.stdin_len = 3;
	req.limits.wall_ms = 300;
	ck_assert_int_eq(sb_finish(s, &req, NULL, &res), 0);
	ck_assert(res.timed_out && !res.exited);
	ck_assert_str_eq(res.out.data, "got hi\n");
	ck_assert_uint_ge(res.duration_us, 300000);
	sb_result_fini(&res);
	ck_assert_int_eq(count_procs("sleep", secs), 0);
	sb_ctx_free(ctx);
}
END_TEST

/* A started run given up on is killed and reaped, its fds released. */
START_TEST(started_run_discarded_leaves_nothing)
{
	char secs[16];
	const char *argv[] = { "/bin/sleep", secs, NULL };
	int fds = count_fds();
	struct sb_ctx *ctx = new_ctx(1);
	struct sb_started *s = NULL;
	struct sb_request req;
	struct sb_result res;

	(void)snprintf(secs, sizeof(secs), "%ld", 900000000L + (long)getpid());
	request(&req, argv);
	ck_assert_int_eq(sb_start(ctx, &req, &s, &res), 0);
	sb_result_fini(&res);
	ck_assert(sb_started_alive(s));
	sb_discard(s);
	ck_assert_int_eq(count_procs("/bin/sleep", secs), 0);
	sb_ctx_free(ctx);	/* its netns pool holds an fd until then */
	ck_assert_int_eq(count_fds(), fds);
}
END_TEST

/*
 * A sandbox built ahead (deferred) for a writable workspace ws; *req is
 * left as the call that takes it: argv's program, the same shape.
 */
static struct sb_started *
start_deferred(struct sb_ctx *ctx, const char *ws, const char *const *argv,
    struct sb_request *req)
{
	struct sb_started *s = NULL;
	struct sb_result res;

	memset(req, 0, sizeof(*req));
	sb_limits_default(&req->limits);
	req->workspace_host = ws;
	req->workspace_writable = true;
	req->deferred = true;
	ck_assert_int_eq(sb_start(ctx, req, &s, &res), 0);
	sb_result_fini(&res);
	req->deferred = false;
	req->program = argv[0];
	req->argv = argv;
	return s;
}

/*
 * A sandbox built ahead (deferred) runs exactly the call sb_finish() gives
 * it: program, argv, envp, stdin after the launch, and its CPU limit.
 */
START_TEST(a_deferred_sandbox_runs_the_call_it_is_given)
{
	static const char *const argv[] = { "/bin/sh", "-c",
	    "echo \"$1 $FOO $(ulimit -t) $(pwd)\"; cat", "sh", "one arg",
	    NULL };
	static const char *const envp[] = { "FOO=bar baz", NULL };
	char *ws = make_workspace();
	struct sb_ctx *ctx = new_ctx(1);
	struct sb_started *s = NULL;
	struct sb_request req;
	struct sb_result res;

	s = start_deferred(ctx, ws, argv, &req);
	ck_assert(sb_started_alive(s));
	req.envp = envp;
	req.stdin_data = "stdin bytes\n";
	req.stdin_len = 12;
	req.limits.cpu_s = 3;
	ck_assert_int_eq(sb_finish(s, &req, NULL, &res), 0);
	ck_assert_msg(res.exited && res.exit_code == 0, "%s|%s", res.out.data,
	    res.err_out.data);
	ck_assert_str_eq(res.out.data, "one arg bar baz 3 /workspace\n"
	    "stdin bytes\n");
	ck_assert_str_eq(res.err_out.data, "");
	sb_result_fini(&res);
	sb_ctx_free(ctx);
	(void)rmdir(ws);
	free(ws);
}
END_TEST

/*
 * A sandbox built for one shape never serves another: a call with another
 * workspace, bind or limit is refused and nothing runs; a program that
 * is not there fails its execve inside. Each refusal ends the sandbox,
 * with nothing left.
 */
START_TEST(a_deferred_sandbox_refuses_another_shape)
{
	char marker[64];
	const char *argv[] = { "/bin/sh", "-c", marker, NULL };
	static const char *const missing[] = { "/usr/bin/no-such-program",
	    NULL };
	static const struct sb_bind bind = { "/etc", "/opt/etc", false };
	int fds = count_fds(), k;
	char *ws = make_workspace(), *ws2 = make_workspace();
	struct sb_ctx *ctx = new_ctx(1);
	struct sb_started *s = NULL;
	struct sb_request req;
	struct sb_result res;

	(void)snprintf(marker, sizeof(marker), "touch /workspace/ran-%ld",
	    (long)getpid());
	for (k = 0; k < 5; k++) {
		s = start_deferred(ctx, ws, argv, &req);
		switch (k) {
		case 0: req.workspace_host = ws2; break;
		case 1: req.workspace_writable = false; break;
		case 2: req.binds = &bind; req.nbinds = 1; break;
		case 3: req.limits.memory_bytes = 64u << 20; break;
		case 4: req.program = missing[0]; req.argv = missing; break;
		}
		ck_assert_int_lt(sb_finish(s, &req, NULL, &res), 0);
		ck_assert_int_eq(res.failed_stage, k < 4 ? SB_STAGE_REQUEST :
		    SB_STAGE_EXEC);
		if (k == 4)
			ck_assert_int_eq(res.err, ENOENT);
		if (k < 4)
			ck_assert_msg(strstr(res.message, "the request's shape "
			    "is not the one the sandbox was built for") != NULL,
			    "%d: %s", k, res.message);
		sb_result_fini(&res);
	}
	ck_assert_int_eq(count_procs_with(marker), 0);
	sb_ctx_free(ctx);
	ck_assert_int_eq(count_fds(), fds);
	(void)snprintf(marker, sizeof(marker), "%s/ran-%ld", ws, (long)getpid());
	ck_assert_int_eq(access(marker, F_OK), -1);
	(void)rmdir(ws);
	(void)rmdir(ws2);
	free(ws);
	free(ws2);
}
END_TEST

/* The first line of a /proc file, or "" when there is none. */
static void
proc_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	buf[0] = '\0';
	if (f != NULL) {
		if (fgets(buf, (int)len, f) == NULL)
			buf[0] = '\0';
		fclose(f);
	}
}

/*
 * The time slice this kernel grants a task of ours that asks for
 * SB_IDLE_SLICE_NS and then SCHED_IDLE, the way the sandbox's start_idle()
 * does, as sched_getattr() reports it afterwards: what the kernel does,
 * found by doing it, rather than guessed from its version. A forked child
 * asks, so that this process keeps its own policy.
 */
static uint64_t
kernel_idle_slice(void)
{
	struct sb_sched_attr a;
	uint64_t got = 0;
	int pfd[2], status;
	pid_t pid;

	ck_assert_int_eq(pipe(pfd), 0);
	ck_assert_int_ge(pid = fork(), 0);
	if (pid == 0) {
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.policy = SCHED_OTHER;
		a.runtime = SB_IDLE_SLICE_NS;
		if (syscall(SYS_sched_setattr, 0, &a, 0U) == 0) {
			a.policy = SCHED_IDLE;
			(void)syscall(SYS_sched_setattr, 0, &a, 0U);
		}
		memset(&a, 0, sizeof(a));
		if (syscall(SYS_sched_getattr, 0, &a, (unsigned)sizeof(a),
		    0U) != 0)
			_exit(1);
		_exit(write(pfd[1], &a.runtime, sizeof(a.runtime)) ==
		    (ssize_t)sizeof(a.runtime) ? 0 : 1);
	}
	(void)close(pfd[1]);
	ck_assert_int_eq(read(pfd[0], &got, sizeof(got)), (ssize_t)sizeof(got));
	(void)close(pfd[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return got;
}

/*
 * As root, the init of a run started low is SCHED_IDLE with the slice the
 * kernel grants for SB_IDLE_SLICE_NS (the kernel's shortest, 0.1 ms, where
 * it has custom slices; its default where it has none).
 */
static void
check_start_slice(pid_t init)
{
	struct sb_sched_attr a;

	if (geteuid() != 0)
		return;
	memset(&a, 0, sizeof(a));
	ck_assert_int_eq(syscall(SYS_sched_getattr, init, &a,
	    (unsigned)sizeof(a), 0U), 0);
	ck_assert_uint_eq(a.policy, SCHED_IDLE);
	ck_assert_uint_eq(a.runtime, kernel_idle_slice());
}

/*
 * A run started low (limits.start_low, a root launcher) has its session
 * weighed as nice 19 where the kernel groups CPU time by session
 * (autogroup) until sb_finish() gives it nice 0 back; the program shares
 * the init's session (pid 1's, inside); the server's own group is never
 * touched. Without root nothing is lowered.
 */
START_TEST(started_low_run_weighs_least_until_its_call)
{
	static const char *const argv[] = { "/bin/sh", "-c",
	    "read x; cut -d' ' -f6 /proc/self/stat; "
	    "sed 's/.* nice //' /proc/self/autogroup", NULL };
	struct sb_ctx *ctx = new_ctx(1);
	struct sb_started *s = NULL;
	struct sb_request req;
	struct sb_result res;
	char own[64], own_after[64], path[64], kids[64], init_ag[64];

	proc_line("/proc/self/autogroup", own, sizeof(own));
	request(&req, argv);
	req.limits.start_low = true;
	ck_assert_int_eq(sb_start(ctx, &req, &s, &res), 0);
	sb_result_fini(&res);
	/* the init is our only child while it waits for its call */
	(void)snprintf(path, sizeof(path), "/proc/self/task/%d/children",
	    (int)gettid());
	proc_line(path, kids, sizeof(kids));
	ck_assert_msg(atoi(kids) > 0, "no child: \"%s\"", kids);
	(void)snprintf(path, sizeof(path), "/proc/%d/autogroup", atoi(kids));
	proc_line(path, init_ag, sizeof(init_ag));
	check_start_slice(atoi(kids));
	req.stdin_data = "go\n";
	req.stdin_len = 3;
	ck_assert_int_eq(sb_finish(s, &req, NULL, &res), 0);
	ck_assert(res.exited && res.exit_code == 0);
	proc_line("/proc/self/autogroup", own_after, sizeof(own_after));
	ck_assert_str_eq(own_after, own);
	/*
	 * The file exists where the kernel has autogroups. Ours is empty in
	 * the boot-time group (a process whose ancestors never made a
	 * session, as CI's); the init's own session always has a group.
	 */
	if (access("/proc/self/autogroup", F_OK) != 0) {
		fprintf(stderr, "started_low_run_weighs_least_until_its_call: "
		    "no autogroup in this kernel: only the session checked\n");
		ck_assert_str_eq(res.out.data, "1\n");
	} else {
		if (geteuid() == 0) {
			/* sb_start() returned once the session was made */
			ck_assert_str_ne(init_ag, own);
			ck_assert_ptr_nonnull(strstr(init_ag, " nice 19\n"));
		} else if (init_ag[0] != '\0') {
			/* read before or after its setsid(): never lowered */
			ck_assert_ptr_nonnull(strstr(init_ag, " nice 0\n"));
		}
		ck_assert_str_eq(res.out.data, "1\n0\n");
	}
	sb_result_fini(&res);
	sb_ctx_free(ctx);
}
END_TEST

/* Mappings larger than this are skipped by the memory scan below: only
 * AddressSanitizer's shadow is, and it holds no program data. */
#define SCAN_MAX_MAPPING	(1ull << 30)

/*
 * Whether pid's memory holds needle: every readable mapping of
 * /proc/PID/maps read through /proc/PID/mem; *bytes counts what was read.
 */
static bool
mem_holds(pid_t pid, const char *needle, size_t nlen, size_t *bytes)
{
	char path[64], line[512], perm[8];
	unsigned long long lo, hi, at;
	bool found = false;
	char *buf = malloc(1 << 16);
	FILE *maps;
	int mem;

	ck_assert_ptr_nonnull(buf);
	(void)snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	ck_assert_ptr_nonnull(maps = fopen(path, "r"));
	(void)snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	if ((mem = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		/* a non-dumpable process's is root's (see the test) */
		ck_assert_msg(errno == EACCES, "%s: %s", path, strerror(errno));
		fclose(maps);
		free(buf);
		return false;
	}
	while (!found && fgets(line, sizeof(line), maps) != NULL) {
		if (sscanf(line, "%llx-%llx %7s", &lo, &hi, perm) != 3 ||
		    perm[0] != 'r' || hi - lo > SCAN_MAX_MAPPING)
			continue;
		/* chunks overlap by nlen - 1: a needle across two is seen */
		for (at = lo; !found && at < hi; at += (1 << 16) - nlen) {
			size_t want = hi - at < (1 << 16) ? hi - at : (1 << 16);
			ssize_t n = pread(mem, buf, want, (off_t)at);

			if (n <= 0)
				break;		/* [vvar] and the like */
			*bytes += (size_t)n;
			found = memmem(buf, (size_t)n, needle, nlen) != NULL;
			if ((size_t)n < want)
				break;
		}
	}
	(void)close(mem);
	fclose(maps);
	free(buf);
	return found;
}

/*
 * Nothing of the launcher's memory is in a sandbox: its init is a
 * program of its own, exec'd before anything of a call is touched. A
 * fresh marker in the launcher's heap, stack and data is looked for in
 * the memory of the init and of the program, once the program waits in
 * read (its comm is sh: exec'd). The scan reads something of both, and
 * finds the marker in the launcher itself. Unprivileged, the init's
 * /proc/PID/mem is not ours to open: a non-dumpable process's files are
 * owned by the root of its user namespace, which the sandbox's does not
 * map (so the host's root); then only the program is read, and the
 * init's refusal (EACCES) is what is checked.
 */
static char marker_data[40];

START_TEST(the_sandbox_holds_nothing_of_the_launchers_memory)
{
	static const char *const argv[] = { "/bin/sh", "-c", "read x", NULL };
	struct sb_ctx *ctx = new_ctx(1);
	struct sb_started *s = NULL;
	struct sb_request req;
	struct sb_result res;
	char path[80], kids[64], comm[32] = "", marker_stack[40];
	struct timespec tick = { 0, 10 * 1000000L };
	unsigned char rnd[16];
	char *marker_heap = malloc(40);
	size_t bytes_init = 0, bytes_prog = 0, bytes_self = 0, i;
	pid_t init, prog = 0;
	int tries;

	ck_assert_ptr_nonnull(marker_heap);
	ck_assert_int_eq(getrandom(rnd, sizeof(rnd), 0), (ssize_t)sizeof(rnd));
	for (i = 0; i < sizeof(rnd); i++)
		(void)snprintf(marker_data + 2 * i, 3, "%02x", rnd[i]);
	memcpy(marker_heap, marker_data, 33);
	memcpy(marker_stack, marker_data, 33);
	request(&req, argv);
	ck_assert_int_eq(sb_start(ctx, &req, &s, &res), 0);
	sb_result_fini(&res);
	(void)snprintf(path, sizeof(path), "/proc/self/task/%d/children",
	    (int)gettid());
	proc_line(path, kids, sizeof(kids));
	init = atoi(kids);
	ck_assert_int_gt(init, 0);
	for (tries = 0; tries < 500 && strcmp(comm, "sh\n") != 0; tries++) {
		(void)nanosleep(&tick, NULL);
		(void)snprintf(path, sizeof(path), "/proc/%d/task/%d/children",
		    (int)init, (int)init);
		proc_line(path, kids, sizeof(kids));
		if ((prog = atoi(kids)) <= 0)
			continue;
		(void)snprintf(path, sizeof(path), "/proc/%d/comm", (int)prog);
		proc_line(path, comm, sizeof(comm));
	}
	ck_assert_msg(strcmp(comm, "sh\n") == 0, "the program did not start");
	ck_assert_msg(!mem_holds(init, marker_data, 32, &bytes_init),
	    "the init (pid %d) holds the launcher's marker", (int)init);
	ck_assert_msg(!mem_holds(prog, marker_data, 32, &bytes_prog),
	    "the program (pid %d) holds the launcher's marker", (int)prog);
	ck_assert_uint_gt(bytes_prog, 0);
	if (geteuid() == 0)
		ck_assert_uint_gt(bytes_init, 0);
	else
		ck_assert_uint_eq(bytes_init, 0);
	ck_assert(mem_holds(getpid(), marker_heap, 32, &bytes_self));
	ck_assert(memcmp(marker_stack, marker_heap, 32) == 0);
	req.stdin_data = "\n";
	req.stdin_len = 1;
	ck_assert_int_eq(sb_finish(s, &req, NULL, &res), 0);
	ck_assert(res.exited && res.exit_code == 0);
	sb_result_fini(&res);
	sb_ctx_free(ctx);
	free(marker_heap);
}
END_TEST

/*
 * A server out of descriptors cannot build a sandbox: the failure says
 * that, not what the stage it happened in usually fails for (issue 25:
 * one blamed the mount layer). The launcher's soft RLIMIT_NOFILE is cut
 * to what it has open (this test runs in a process of its own).
 */
START_TEST(out_of_descriptors_says_so)
{
	static const char *const argv[] = { "/bin/true", NULL };
	struct sb_ctx *ctx = new_ctx(1);
	struct sb_request req;
	struct sb_result res;
	struct rlimit rl, was;
	int fd, rc;

	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	was = rl;
	ck_assert_int_ge(fd = dup(0), 0);
	(void)close(fd);
	rl.rlim_cur = (rlim_t)fd;	/* every number below it is taken */
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	request(&req, argv);
	rc = sb_run(ctx, &req, NULL, &res);
	/* back before any check: LeakSanitizer needs descriptors at exit */
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &was), 0);
	ck_assert_int_eq(rc, -EMFILE);
	ck_assert_int_eq(res.err, EMFILE);
	ck_assert_msg(strstr(res.message, "the server is out of file "
	    "descriptors (its RLIMIT_NOFILE") != NULL, "%s", res.message);
	sb_result_fini(&res);
	sb_ctx_free(ctx);
}
END_TEST

/*
 * The init file rewritten in place after the context was made (whoever
 * may write it: a build tree in a workspace a sandbox writes) changes
 * nothing: runs exec the sealed copy the context took. The rewrite is a
 * script that would leave a marker; the run still answers as the init.
 */
START_TEST(an_init_rewritten_later_is_not_run)
{
	static const char *const argv[] = { "/bin/echo", "still ours", NULL };
	char path[] = "/tmp/sb-init-XXXXXX", marker[64], cmd[512];
	struct sb_config cfg = { .init_path = path };
	struct sb_ctx *ctx = NULL;
	struct sb_request req;
	struct sb_result res;
	FILE *f;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	(void)close(fd);
	(void)snprintf(cmd, sizeof(cmd), "cp %s %s && chmod 755 %s",
	    MCP_TEST_INIT, path, path);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_msg(sb_ctx_new(&cfg, &ctx, &res) == 0, "%s", res.message);
	sb_result_fini(&res);
	(void)snprintf(marker, sizeof(marker), "/tmp/sb-init-ran-%ld",
	    (long)getpid());
	(void)unlink(marker);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));	/* in place */
	fprintf(f, "#!/bin/sh\ntouch %s\n", marker);
	ck_assert_int_eq(fclose(f), 0);
	request(&req, argv);
	ck_assert_int_eq(sb_run(ctx, &req, NULL, &res), 0);
	ck_assert_str_eq(res.out.data, "still ours\n");
	ck_assert_int_eq(access(marker, F_OK), -1);
	sb_result_fini(&res);
	sb_ctx_free(ctx);
	ck_assert_int_eq(unlink(path), 0);
}
END_TEST

struct canceller {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool started;
	struct sb_cancel cancel;
	unsigned calls;
	uint64_t last_ms;
};

/* Progress from sb_run's thread: wakes the canceller once the run is up. */
static void
on_progress(void *arg, uint64_t elapsed_ms, const struct sb_output *out,
    const struct sb_output *err)
{
	struct canceller *c = arg;

	(void)out;
	(void)err;
	pthread_mutex_lock(&c->lock);
	ck_assert_uint_ge(elapsed_ms, c->last_ms);
	c->last_ms = elapsed_ms;
	c->calls++;
	c->started = true;
	pthread_cond_signal(&c->cond);
	pthread_mutex_unlock(&c->lock);
}

static void *
cancel_thread(void *arg)
{
	struct canceller *c = arg;

	pthread_mutex_lock(&c->lock);
	while (!c->started)
		pthread_cond_wait(&c->cond, &c->lock);
	pthread_mutex_unlock(&c->lock);
	sb_cancel_fire(&c->cancel);
	return NULL;
}

START_TEST(cancel_from_another_thread_kills_at_once)
{
	static const char *const argv[] = { "/bin/sleep", "1000", NULL };
	struct canceller c = { .lock = PTHREAD_MUTEX_INITIALIZER,
	    .cond = PTHREAD_COND_INITIALIZER };
	struct sb_ctx *ctx = new_ctx(0);
	struct sb_request req;
	struct sb_result res;
	pthread_t t;

	ck_assert_int_eq(sb_cancel_init(&c.cancel), 0);
	request(&req, argv);
	req.limits.wall_ms = 60000;
	req.progress = on_progress;
	req.progress_arg = &c;
	req.progress_ms = 50;
	ck_assert_int_eq(pthread_create(&t, NULL, cancel_thread, &c), 0);
	ck_assert_int_eq(sb_run(ctx, &req, &c.cancel, &res), 0);
	pthread_join(t, NULL);
	ck_assert(res.cancelled && !res.timed_out && !res.exited);
	ck_assert_int_eq(res.signal, SIGKILL);
	ck_assert_uint_lt(res.duration_us, 30000000);
	ck_assert_uint_ge(c.calls, 1);
	ck_assert(sb_cancel_fired(&c.cancel));
	sb_cancel_fini(&c.cancel);
	sb_result_fini(&res);
	sb_ctx_free(ctx);
}
END_TEST

struct worker {
	struct sb_ctx *ctx;
	int id;
	int ok;
};

#define WORKERS		4
#define RUNS_EACH	8

static void *
worker_main(void *arg)
{
	struct worker *w = arg;
	char text[32], want[40];
	const char *argv[] = { "/bin/echo", text, NULL };
	struct sb_request req;
	struct sb_result res;
	int i;

	for (i = 0; i < RUNS_EACH; i++) {
		snprintf(text, sizeof(text), "w%d-%d", w->id, i);
		snprintf(want, sizeof(want), "%s\n", text);
		request(&req, argv);
		if (sb_run(w->ctx, &req, NULL, &res) == 0 && res.exited &&
		    res.exit_code == 0 && strcmp(res.out.data, want) == 0)
			w->ok++;
		else
			fprintf(stderr, "worker %d run %d: %s exited=%d code=%d "
			    "signal=%d out='%s' err='%s'\n", w->id, i,
			    res.message, res.exited, res.exit_code, res.signal,
			    res.out.data ? res.out.data : "",
			    res.err_out.data ? res.err_out.data : "");
		sb_result_fini(&res);
	}
	return NULL;
}

static void
parallel_runs(unsigned pool)
{
	int i, fds = count_fds();
	struct sb_ctx *ctx = new_ctx(pool);
	struct worker w[WORKERS];
	pthread_t t[WORKERS];
	char before[64], after[64];
	ssize_t n;

	n = readlink("/proc/thread-self/ns/net", before, sizeof(before) - 1);
	ck_assert_int_gt(n, 0);
	before[n] = '\0';
	for (i = 0; i < WORKERS; i++) {
		w[i] = (struct worker){ .ctx = ctx, .id = i };
		ck_assert_int_eq(pthread_create(&t[i], NULL, worker_main,
		    &w[i]), 0);
	}
	for (i = 0; i < WORKERS; i++) {
		pthread_join(t[i], NULL);
		ck_assert_int_eq(w[i].ok, RUNS_EACH);
	}
	n = readlink("/proc/thread-self/ns/net", after, sizeof(after) - 1);
	after[n] = '\0';
	ck_assert_str_eq(before, after);
	sb_ctx_free(ctx);
	ck_assert_int_eq(count_fds(), fds);
}

START_TEST(parallel_runs_with_fresh_netns)
{
	parallel_runs(0);
}
END_TEST

START_TEST(parallel_runs_with_a_netns_pool_smaller_than_the_load)
{
	parallel_runs(2);
}
END_TEST

struct pair_side {
	struct sb_ctx *ctx;
	struct sb_request req;
	struct sb_result res;
	int rc;
};

static void *
pair_main(void *arg)
{
	struct pair_side *p = arg;

	p->rc = sb_run(p->ctx, &p->req, NULL, &p->res);
	return NULL;
}

/*
 * Sandbox A listens on an abstract unix socket and says so in a shared
 * dir; sandbox B, running at the same time, waits for that and connects:
 * it must not reach A (own network namespace each, Landlock scope).
 */
static void
pair(unsigned pool)
{
	static const char *const a_argv[] = { PY, "-I", "-c",
	    "import socket,os,select\n"
	    "s=socket.socket(socket.AF_UNIX); s.bind(b'\\0mcp-sbx-pair'); "
	    "s.listen()\n"
	    "open('/workspace/ready','w').close()\n"
	    "while not os.path.exists('/workspace/done'):\n"
	    " if select.select([s],[],[],0.05)[0]: print('accepted'); break\n"
	    "else: print('alone')\n", NULL };
	static const char *const b_argv[] = { PY, "-I", "-c",
	    "import socket,os,errno\n"
	    "while not os.path.exists('/shared/ready'): pass\n"
	    "c=socket.socket(socket.AF_UNIX)\n"
	    "try: c.connect(b'\\0mcp-sbx-pair'); print('connected')\n"
	    "except OSError as e: print(errno.errorcode[e.errno])\n"
	    "open('/out/done','w').close()\n", NULL };
	struct sb_ctx *ctx = new_ctx(pool);
	char *ws = make_workspace(), *out = make_workspace();
	struct sb_bind binds[1] = { { ws, "/shared", false } };
	struct pair_side a = { .ctx = ctx }, b = { .ctx = ctx };
	char path[256];
	pthread_t ta, tb;

	request(&a.req, a_argv);
	a.req.workspace_host = ws;
	a.req.workspace_writable = true;
	a.req.limits.wall_ms = 20000;
	request(&b.req, b_argv);
	/* B writes "done" through its own writable workspace = A's dir... */
	b.req.workspace_host = out;
	b.req.workspace_path = "/out";
	b.req.workspace_writable = true;
	b.req.binds = binds;
	b.req.nbinds = 1;
	b.req.limits.wall_ms = 20000;
	ck_assert_int_eq(pthread_create(&ta, NULL, pair_main, &a), 0);
	ck_assert_int_eq(pthread_create(&tb, NULL, pair_main, &b), 0);
	pthread_join(tb, NULL);
	/* ...and the test moves it to where A looks. */
	snprintf(path, sizeof(path), "%s/done", ws);
	close(open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	pthread_join(ta, NULL);
	ck_assert_msg(b.rc == 0, "%s", b.res.message);
	ck_assert_msg(a.rc == 0, "%s", a.res.message);
	ck_assert_msg(strcmp(b.res.out.data, "ECONNREFUSED\n") == 0,
	    "B: out '%s' err '%s' exited %d code %d signal %d", b.res.out.data,
	    b.res.err_out.data, b.res.exited, b.res.exit_code, b.res.signal);
	ck_assert_str_eq(a.res.out.data, "alone\n");
	sb_result_fini(&a.res);
	sb_result_fini(&b.res);
	sb_ctx_free(ctx);
	snprintf(path, sizeof(path), "rm -rf '%s' '%s'", ws, out);
	ck_assert_int_eq(system(path), 0);
	free(ws);
	free(out);
}

START_TEST(concurrent_sandboxes_do_not_share_abstract_sockets)
{
	pair(0);
}
END_TEST

START_TEST(pooled_sandboxes_do_not_share_abstract_sockets)
{
	pair(2);
}
END_TEST

START_TEST(missing_bind_source_fails_closed)
{
	static const char *const argv[] = { "/bin/true", NULL };
	struct sb_bind b = { "/nonexistent-mcp-sbx", "/opt/x", false };
	struct sb_ctx *ctx = new_ctx(0);
	struct sb_request req;
	struct sb_result res;

	request(&req, argv);
	req.binds = &b;
	req.nbinds = 1;
	ck_assert_int_eq(sb_run(ctx, &req, NULL, &res), -ENOENT);
	ck_assert_int_eq(res.failed_stage, SB_STAGE_REQUEST);
	ck_assert_int_eq(res.err, ENOENT);
	ck_assert(!res.exited);
	ck_assert_ptr_null(res.out.data);
	sb_result_fini(&res);
	sb_ctx_free(ctx);
}
END_TEST

START_TEST(exec_failure_inside_is_a_sandbox_error)
{
	static const char *const argv[] = { "/workspace/script", NULL };
	struct sb_ctx *ctx = new_ctx(0);
	char *ws = make_workspace(), path[256];
	struct sb_request req;
	struct sb_result res;
	FILE *f;

	snprintf(path, sizeof(path), "%s/script", ws);
	f = fopen(path, "w");
	fputs("#!/nonexistent/interpreter\n", f);
	fclose(f);
	chmod(path, 0755);
	request(&req, argv);
	req.workspace_host = ws;
	ck_assert_int_eq(sb_run(ctx, &req, NULL, &res), -ENOENT);
	ck_assert_int_eq(res.failed_stage, SB_STAGE_EXEC);
	ck_assert_ptr_nonnull(strstr(res.message, "sandbox exec failed"));
	sb_result_fini(&res);
	sb_ctx_free(ctx);
	unlink(path);
	rmdir(ws);
	free(ws);
}
END_TEST

START_TEST(runs_leak_no_fd_into_the_server)
{
	static const char *const argv[] = { "/bin/true", NULL };
	int i, fds = count_fds();
	struct sb_ctx *ctx = new_ctx(1);
	struct sb_request req;
	struct sb_result res;

	request(&req, argv);
	req.stdin_data = "x";
	req.stdin_len = 1;
	for (i = 0; i < 10; i++) {
		ck_assert_int_eq(sb_run(ctx, &req, NULL, &res), 0);
		sb_result_fini(&res);
	}
	sb_ctx_free(ctx);
	ck_assert_int_eq(count_fds(), fds);
}
END_TEST

/* path holds exactly want. */
static void
assert_file_is(const char *path, const char *want)
{
	char buf[256];
	size_t n;
	FILE *f = fopen(path, "r");

	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	ck_assert_str_eq(buf, want);
}

/*
 * A server out of fds (a flood of proxy connections, say) fails each run
 * cleanly, whichever of its steps runs out: every fd limit from what the
 * context holds up to what a run needs gives a failed stage and a message,
 * never a crash, and the context runs again once the fds are back. On
 * cgroup v1 one of these limits fails the run's OOM eventfd (cgroup.c,
 * oom_event), whose message names the memory controller.
 */
START_TEST(fd_exhaustion_fails_each_step_cleanly)
{
	static const char *const argv[] = { "/bin/true", NULL };
	struct sb_ctx *ctx = new_ctx(0);
	struct sb_request req;
	struct sb_result res;
	struct rlimit old, rl;
	int lim, base, rc, ok = 0, events = 0;

	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &old), 0);
	/* the lowest free fd */
	ck_assert_int_ge(base = open("/dev/null", O_RDONLY | O_CLOEXEC), 0);
	close(base);
	request(&req, argv);
	for (lim = base; lim < base + 40; lim++) {
		rl.rlim_cur = (rlim_t)lim;
		rl.rlim_max = old.rlim_max;
		ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
		rc = sb_run(ctx, &req, NULL, &res);
		ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &old), 0);
		if (rc == 0) {
			ok++;
		} else {
			ck_assert_int_ne(res.failed_stage, SB_STAGE_NONE);
			ck_assert_msg(strncmp(res.message, "sandbox ", 8) == 0,
			    "%s", res.message);
			if (strstr(res.message, "cgroup.event_control") != NULL) {
				events++;
				ck_assert_msg(strstr(res.message,
				    "cgroup.event_control memory/run.") != NULL,
				    "%s", res.message);
			}
		}
		sb_result_fini(&res);
	}
	ck_assert_int_gt(ok, 0);
	if (ctx->cg.version == 1)
		ck_assert_int_gt(events, 0);
	ck_assert_int_eq(sb_run(ctx, &req, NULL, &res), 0);
	sb_result_fini(&res);
	sb_ctx_free(ctx);
}
END_TEST

/* A context with per-slot uids (ignored unless we are root). */
static struct sb_ctx *
uid_ctx(unsigned slots, uid_t base, struct sb_result *res, int *rc)
{
	struct sb_config cfg = { .init_path = MCP_TEST_INIT,
	    .netns_pool = slots, .uid_slots = slots,
	    .uid_base = base };
	struct sb_ctx *ctx = NULL;

	*rc = sb_ctx_new(&cfg, &ctx, res);
	return ctx;
}

/* The second field of "1000 KUID 1", the program's uid map. */
static unsigned long
kuid_of(const char *uid_map)
{
	unsigned long in = 0, out = 0, n = 0;

	ck_assert_int_eq(sscanf(uid_map, "%lu %lu %lu", &in, &out, &n), 3);
	ck_assert_uint_eq(in, 1000);
	ck_assert_uint_eq(n, 1);
	return out;
}

/*
 * Issue 10, class 5: two runs at once of a root server get two kernel
 * uids of the range and both write the one workspace (id-mapped: its files
 * stay the context uid's on disk). One run filling its uid's pipe buffer
 * pages (fs.pipe-user-pages-soft: then that uid's new pipes get one page)
 * leaves the other's pipes whole, and one exhausting its share of inotify
 * instances leaves the other's inotify_init1 working. Unprivileged, the
 * range is ignored: every run is the server's uid, and pipe pages are one
 * pool (the documented residual).
 */
START_TEST(runs_at_once_get_their_own_kernel_uid)
{
	static const char *const hold[] = { PY, "-I", "-c",
	    "import ctypes, fcntl, os, sys\n"
	    "libc = ctypes.CDLL(None, use_errno=True)\n"
	    "n = 0\n"
	    "while n < 900 and libc.inotify_init1(0) >= 0: n += 1\n"
	    "e = ctypes.get_errno()\n"
	    "big = []\n"
	    "try:\n"
	    " while len(big) < 400:\n"
	    "  r, w = os.pipe(); big.append(w); fcntl.fcntl(w, 1031, 1 << 20)\n"
	    "except OSError: pass\n"
	    "full = False\n"
	    "while not full and len(big) < 600:\n"
	    " r, w = os.pipe(); big.append(w)\n"
	    " full = fcntl.fcntl(r, 1032) < 65536\n"
	    "print(open('/proc/self/uid_map').read().split()[1], n, e,"
	    " full, flush=True)\n"
	    "open('a', 'w').write('a\\n')\n"
	    "os.rename('a', 'held')\n"
	    "sys.stdin.read()\n", NULL };
	static const char *const next[] = { "/bin/sh", "-c",
	    "read x < held && echo b >> held && cat /proc/self/uid_map &&"
	    " exec " PY " -I -c 'import ctypes, fcntl, os; l = ctypes.CDLL("
	    "None, use_errno=True); r, w = os.pipe(); print("
	    "l.inotify_init1(0) >= 0, fcntl.fcntl(r, 1032))'", NULL };
	uid_t base;
	struct sb_request ra, rb;
	struct sb_result res, resb;
	struct sb_started *a = NULL;
	struct sb_ctx *ctx;
	char *ws = make_workspace(), path[256], big[8];
	unsigned long ka, kb, n, e;
	struct stat st;
	int i, rc;

	ctx = uid_ctx(2, 0, &res, &rc);
	ck_assert_msg(rc == 0, "%s", res.message);
	/* a free block of the default range: other servers may hold some */
	base = ctx->uids.base;
	ck_assert(!ctx->uid_pool_on || (base >= SB_SLOT_UID_BASE &&
	    (base - SB_SLOT_UID_BASE) % SB_MAX_UID_SLOTS == 0));
	request(&ra, hold);
	ra.workspace_host = ws;
	ra.workspace_writable = true;
	ra.limits.nofile = 1400;	/* 16 inotify + 64 big and small pipes */
	ck_assert_int_eq(sb_start(ctx, &ra, &a, &res), 0);
	sb_result_fini(&res);
	(void)snprintf(path, sizeof(path), "%s/held", ws);
	for (i = 0; i < 3000 && access(path, F_OK) != 0; i++)
		usleep(2000);
	ck_assert_int_eq(access(path, F_OK), 0);
	request(&rb, next);
	rb.workspace_host = ws;
	rb.workspace_writable = true;
	ck_assert_int_eq(sb_run(ctx, &rb, NULL, &resb), 0);
	ck_assert_msg(resb.exited && resb.exit_code == 0, "%s",
	    resb.err_out.data);
	ck_assert_int_eq(sb_finish(a, &ra, NULL, &res), 0);
	ck_assert_int_eq(sscanf(res.out.data, "%lu %lu %lu %7s", &ka, &n, &e,
	    big), 4);
	ck_assert_str_eq(big, "True");
	ck_assert_uint_eq(n, 16);	/* SB_INOTIFY_INSTANCES */
	ck_assert_uint_eq(e, EMFILE);
	kb = kuid_of(resb.out.data);
	ck_assert_ptr_nonnull(strchr(resb.out.data, '\n'));
	if (geteuid() == 0) {
		ck_assert_uint_eq(ka, base);
		ck_assert_uint_eq(kb, base + 1);
		ck_assert_str_eq(strchr(resb.out.data, '\n') + 1,
		    "True 65536\n");
	} else {
		ck_assert_uint_eq(ka, geteuid());
		ck_assert_uint_eq(kb, geteuid());
		ck_assert_str_eq(strchr(resb.out.data, '\n') + 1,
		    "True 8192\n");	/* PIPE_MIN_DEF_BUFFERS pages */
	}
	/* written by both runs, owned on disk by the context's uid */
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_uid, geteuid() == 0 ? 65534 : geteuid());
	assert_file_is(path, "a\nb\n");
	sb_result_fini(&res);
	sb_result_fini(&resb);
	sb_ctx_free(ctx);
	(void)unlink(path);
	(void)rmdir(ws);
	free(ws);
}
END_TEST

/*
 * Issue 10, class 5: a writable bind (allow_read_write) is cloned and
 * id-mapped like the workspace, so a root server's run with one keeps a
 * kernel uid of its own, and what it writes there, appended or created,
 * stays the context uid's on disk. Unprivileged: the server's uid.
 */
START_TEST(a_writable_bind_keeps_the_runs_own_uid)
{
	static const char *const argv[] = { "/bin/sh", "-c",
	    "cat /proc/self/uid_map && echo b >> /opt/rw/old &&"
	    " echo c > /opt/rw/new", NULL };
	char *dir = make_workspace(), old[256], made[256];
	struct sb_bind b = { dir, "/opt/rw", true };
	uid_t owner = geteuid() == 0 ? 65534 : geteuid();
	struct sb_request req;
	struct sb_result res;
	struct sb_ctx *ctx;
	struct stat st;
	FILE *f;
	int rc;

	ctx = uid_ctx(1, 0, &res, &rc);
	ck_assert_msg(rc == 0, "%s", res.message);
	(void)snprintf(old, sizeof(old), "%s/old", dir);
	(void)snprintf(made, sizeof(made), "%s/new", dir);
	f = fopen(old, "w");
	ck_assert_ptr_nonnull(f);
	fputs("a\n", f);
	fclose(f);
	ck_assert_int_eq(chown(old, owner, owner), 0);
	request(&req, argv);
	req.binds = &b;
	req.nbinds = 1;
	ck_assert_int_eq(sb_run(ctx, &req, NULL, &res), 0);
	ck_assert_msg(res.exited && res.exit_code == 0, "%s",
	    res.err_out.data);
	if (geteuid() == 0) {
		ck_assert(ctx->uid_pool_on);
		ck_assert_uint_eq(kuid_of(res.out.data), ctx->uids.base);
	} else {
		ck_assert_uint_eq(kuid_of(res.out.data), geteuid());
	}
	ck_assert_int_eq(stat(old, &st), 0);
	ck_assert_uint_eq(st.st_uid, owner);
	ck_assert_int_eq(stat(made, &st), 0);
	ck_assert_uint_eq(st.st_uid, owner);
	ck_assert_uint_eq(st.st_gid, owner);
	assert_file_is(old, "a\nb\n");
	sb_result_fini(&res);
	sb_ctx_free(ctx);
	(void)unlink(old);
	(void)unlink(made);
	(void)rmdir(dir);
	free(dir);
}
END_TEST

/*
 * A range of this test process's own, outside the default blocks: pids
 * are unique below 2^22, so no other suite running at once asks for it,
 * and no server (they take the default blocks, 0x70000000 on).
 */
static uid_t
test_uid_base(void)
{
	return 0x40000000u + ((uid_t)getpid() & 0x3fffffu) * 128;
}

/* The message of a range lo..lo+3 refused for another's held..held+n-1. */
static void
assert_held(const struct sb_result *res, uid_t lo, uid_t held, unsigned n)
{
	char want[400];

	ck_assert_int_eq(res->failed_stage, SB_STAGE_UIDS);
	ck_assert_int_eq(res->err, EADDRINUSE);
	(void)snprintf(want, sizeof(want), "sandbox uid-range failed: "
	    "per-slot uids %u..%u: another server holds %u..%u "
	    "(/run/mcp-sandbox-uids.lock); give this one another range "
	    "(--uid-base): Address already in use (likely cause: a uid "
	    "range given to this server that it cannot take (out of bounds, "
	    "or held by another server))",
	    (unsigned)lo, (unsigned)lo + 3, (unsigned)held,
	    (unsigned)(held + n - 1));
	ck_assert_str_eq(res->message, want);
}

/*
 * Two servers whose ranges overlap, by all of it or by one uid: the
 * second is refused, EADDRINUSE, naming the first's range and the flag;
 * disjoint ranges, even adjacent, are both had; once the first is gone
 * its range is free. A default block another server holds is refused to
 * an explicit range the same way.
 */
START_TEST(an_explicit_uid_range_is_held)
{
	const uid_t base = test_uid_base();
	struct sb_ctx *c1, *c2;
	struct sb_result res;
	int rc;

	if (geteuid() != 0)
		return;	/* unprivileged servers have no range */
	c1 = uid_ctx(4, base, &res, &rc);
	ck_assert_msg(rc == 0, "%s", res.message);
	ck_assert_uint_eq(c1->uids.base, base);
	c2 = uid_ctx(4, base, &res, &rc);
	ck_assert_int_eq(rc, -EADDRINUSE);
	ck_assert_ptr_null(c2);
	assert_held(&res, base, base, 4);
	sb_result_fini(&res);
	/* one uid in common is one too many */
	c2 = uid_ctx(4, base + 3, &res, &rc);
	ck_assert_int_eq(rc, -EADDRINUSE);
	assert_held(&res, base + 3, base, 4);
	sb_result_fini(&res);
	/* next to it, nothing shared: fine */
	c2 = uid_ctx(4, base + 4, &res, &rc);
	ck_assert_msg(rc == 0, "%s", res.message);
	sb_ctx_free(c2);
	sb_ctx_free(c1);
	c2 = uid_ctx(4, base, &res, &rc);
	ck_assert_msg(rc == 0, "%s", res.message);
	sb_ctx_free(c2);
	/* a default block another server holds */
	c1 = uid_ctx(2, 0, &res, &rc);
	ck_assert_msg(rc == 0, "%s", res.message);
	c2 = uid_ctx(4, c1->uids.base + 1, &res, &rc);
	ck_assert_int_eq(rc, -EADDRINUSE);
	assert_held(&res, c1->uids.base + 1, c1->uids.base, 2);
	sb_result_fini(&res);
	sb_ctx_free(c1);
}
END_TEST

/*
 * A range too low (the host's own users), or of more than 64 uids, is
 * refused; two default-range servers take two blocks, never one, and
 * the lock goes with the server (a child's dies with it).
 */
START_TEST(a_uid_range_out_of_bounds_is_refused)
{
	struct sb_ctx *ctx, *c1, *c2;
	struct sb_result res;
	int rc, ws;
	pid_t pid;

	if (geteuid() != 0)
		return;	/* unprivileged servers have no range */
	ctx = uid_ctx(2, 1000, &res, &rc);
	ck_assert_int_eq(rc, -EINVAL);
	ck_assert_ptr_null(ctx);
	ck_assert_str_eq(res.message, "sandbox uid-range failed: the "
	    "per-slot uid range must lie in 65536..2^31-1 and hold at most "
	    "64: Invalid argument (likely cause: a uid range given to this "
	    "server that it cannot take (out of bounds, or held by another "
	    "server))");
	sb_result_fini(&res);
	ctx = uid_ctx(2, 0x7ffffffeu, &res, &rc);
	ck_assert_int_eq(rc, -EINVAL);
	sb_result_fini(&res);
	c1 = uid_ctx(2, 0, &res, &rc);
	ck_assert_msg(rc == 0, "%s", res.message);
	c2 = uid_ctx(2, 0, &res, &rc);
	ck_assert_msg(rc == 0, "%s", res.message);
	ck_assert(c1->uid_pool_on && c2->uid_pool_on);
	ck_assert_uint_ne(c1->uids.base, c2->uids.base);
	sb_ctx_free(c2);
	/* a server that dies (no fini) frees its range with it */
	pid = fork();
	if (pid == 0) {
		c2 = uid_ctx(2, test_uid_base(), &res, &rc);
		_exit(rc == 0 ? 0 : 1);
	}
	ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
	ck_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
	c2 = uid_ctx(2, test_uid_base(), &res, &rc);
	ck_assert_msg(rc == 0, "%s", res.message);
	sb_ctx_free(c2);
	sb_ctx_free(c1);
}
END_TEST

/*
 * A started (warm) run binds the .git/config there at its start
 * read-only. Renamed away on the host, .git names nothing: still current
 * (a .git this run makes is moved aside at its end). A new .git in its
 * place is not read-only inside: not current; nor is one that gained a
 * submodule git dir since (not bound in this run). Finished anyway, the
 * new .git (another inode than at the start) is moved aside.
 */
START_TEST(a_protected_name_replaced_after_start_is_not_current)
{
	static const char *const argv[] = { "/bin/sh", "-c", "touch started",
	    NULL };
	static const char *const prot[] = { ".git", NULL };
	char *ws = make_workspace(), git[256], aside[256], cfg[300];
	char started[256], mods[300], sub[300], moved[700];
	int i, fd;
	uid_t owner = geteuid() == 0 ? 65534 : geteuid();
	struct sb_ctx *ctx = new_ctx(0);
	struct sb_started *s = NULL;
	struct sb_request req;
	struct sb_result res;

	(void)snprintf(git, sizeof(git), "%s/.git", ws);
	(void)snprintf(aside, sizeof(aside), "%s/.git.old", ws);
	(void)snprintf(cfg, sizeof(cfg), "%s/config", git);
	(void)snprintf(mods, sizeof(mods), "%s/modules", git);
	(void)snprintf(sub, sizeof(sub), "%s/modules/m", git);
	ck_assert_int_eq(mkdir(git, 0755), 0);
	ck_assert_int_eq(mkdir(mods, 0755), 0);
	ck_assert((fd = open(cfg, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) >= 0);
	(void)close(fd);
	ck_assert_int_eq(chown(git, owner, owner), 0);
	ck_assert_int_eq(chown(cfg, owner, owner), 0);
	request(&req, argv);
	req.workspace_host = ws;
	req.workspace_writable = true;
	req.workspace_protect = prot;
	(void)snprintf(started, sizeof(started), "%s/started", ws);
	ck_assert_int_eq(sb_start(ctx, &req, &s, &res), 0);
	sb_result_fini(&res);
	/* its root (and .git/config over itself) made, before we change it */
	for (i = 0; i < 3000 && access(started, F_OK) != 0; i++)
		(void)nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
	ck_assert_int_eq(access(started, F_OK), 0);
	ck_assert(sb_started_current(s));
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	ck_assert(!sb_started_current(s));
	ck_assert_int_eq(rmdir(sub), 0);
	ck_assert_int_eq(rename(git, aside), 0);
	ck_assert(sb_started_current(s));
	ck_assert_int_eq(mkdir(git, 0755), 0);
	ck_assert_int_eq(chown(git, owner, owner), 0);
	ck_assert(!sb_started_current(s));
	ck_assert_int_eq(sb_finish(s, &req, NULL, &res), 0);
	ck_assert(res.exited && res.exit_code == 0);
	ck_assert_msg(strncmp(res.protect_moved, ".git moved to "
	    ".git.from-sandbox-", 32) == 0 && strlen(res.protect_moved) ==
	    32 + 16, "%s", res.protect_moved);
	(void)snprintf(moved, sizeof(moved), "%s/%s", ws,
	    res.protect_moved + 14);
	sb_result_fini(&res);
	sb_ctx_free(ctx);
	ck_assert_int_eq(rmdir(moved), 0);
	(void)snprintf(cfg, sizeof(cfg), "%s/config", aside);
	(void)snprintf(mods, sizeof(mods), "%s/modules", aside);
	ck_assert_int_eq(unlink(cfg), 0);
	ck_assert_int_eq(rmdir(mods), 0);
	ck_assert_int_eq(rmdir(aside), 0);
	ck_assert_int_eq(unlink(started), 0);
	ck_assert_int_eq(rmdir(ws), 0);
	free(ws);
}
END_TEST

/*
 * SB_NET_LISTENING comes from the launching thread before it writes the
 * init's maps: the init (this thread's only child) is stopped there, before
 * it armed PR_SET_PDEATHSIG, and its pid goes to the pipe *arg.
 */
static int
stop_the_init(void *arg, int lfd, enum sb_net_event ev)
{
	char buf[32];
	siginfo_t si;
	pid_t pid;
	ssize_t n;
	int fd;

	(void)lfd;
	if (ev != SB_NET_LISTENING)
		return 0;
	if ((fd = open("/proc/thread-self/children", O_RDONLY)) < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	(void)close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	pid = (pid_t)atoi(buf);
	if (pid <= 0 || kill(pid, SIGSTOP) < 0 ||
	    waitid(P_PID, (id_t)pid, &si, WSTOPPED | WNOWAIT) < 0)
		return -EIO;
	return write(*(int *)arg, &pid, sizeof(pid)) == sizeof(pid) ? 0 : -EIO;
}

/*
 * The server dies after it released the init ("g", and with a cgroup
 * "c": the init waits for it before the program) and before the init
 * armed PR_SET_PDEATHSIG (the test stops it there), so no SIGKILL will
 * come: the init must see its parent gone and start nothing, cgroup or
 * not. Else the program would run unsupervised, past any deadline.
 */
START_TEST(an_init_whose_server_died_before_its_deathsig_starts_nothing)
{
	static const char *const argv[] = { "/bin/sh", "-c",
	    "echo ran > marker", NULL };
	char *ws = make_workspace(), marker[256];
	struct sb_started *s = NULL;
	struct sb_request req;
	struct sb_result res;
	struct sb_ctx *ctx;
	int pfd[2], ws_status;
	pid_t server, init;

	(void)snprintf(marker, sizeof(marker), "%s/marker", ws);
	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	ck_assert_int_eq(pipe(pfd), 0);
	server = fork();
	ck_assert_int_ge(server, 0);
	if (server == 0) {
		ctx = new_ctx(0);
		request(&req, argv);
		req.workspace_host = ws;
		req.workspace_writable = true;
		req.network = SB_NET_PROXY;
		req.net_listener = stop_the_init;
		req.net_arg = &pfd[1];
		/* dies with the init stopped, its bytes sent */
		_exit(sb_start(ctx, &req, &s, &res) == 0 ? 0 : 1);
	}
	(void)close(pfd[1]);
	ck_assert_int_eq(read(pfd[0], &init, sizeof(init)),
	    (ssize_t)sizeof(init));
	(void)close(pfd[0]);
	ck_assert_int_eq(waitpid(server, &ws_status, 0), server);
	ck_assert(WIFEXITED(ws_status) && WEXITSTATUS(ws_status) == 0);
	/* ours now (the subreaper), still stopped */
	ck_assert_int_eq(kill(init, SIGCONT), 0);
	ck_assert_int_eq(waitpid(init, &ws_status, 0), init);
	ck_assert_msg(WIFEXITED(ws_status) && WEXITSTATUS(ws_status) == 127,
	    "the init went on: status %#x", ws_status);
	ck_assert_int_eq(access(marker, F_OK), -1);
	ck_assert_int_eq(rmdir(ws), 0);
	free(ws);
}
END_TEST

/* SB_NET_PROXY: how often READY came, and the pause each answers. */
struct ready_count {
	int calls;
	int pause_ms;
};

static int
count_ready(void *arg, int lfd, enum sb_net_event ev)
{
	struct ready_count *rc = arg;

	(void)lfd;
	if (ev != SB_NET_READY)
		return 0;
	rc->calls++;
	return rc->pause_ms;
}

/*
 * A listener's caller that cannot take the connection that waits (the
 * egress proxy out of fds) answers READY with a pause: the run's poll
 * leaves the socket alone that long instead of spinning on it. A second
 * of a waiting connection at 100 ms is about 10 calls; spinning, many
 * thousands.
 */
START_TEST(a_listener_that_cannot_accept_pauses_the_poll)
{
	char code[160];
	const char *argv[] = { PY, "-c", code, NULL };
	struct ready_count rc = { 0, 100 };
	struct sb_ctx *ctx = new_ctx(0);
	struct sb_request req;
	struct sb_result res;

	(void)snprintf(code, sizeof(code), "import socket, time\n"
	    "s = socket.create_connection(('127.0.0.1', %d))\n"
	    "time.sleep(1)\n", SB_PROXY_PORT);
	request(&req, argv);
	req.network = SB_NET_PROXY;
	req.net_listener = count_ready;
	req.net_arg = &rc;
	ck_assert_int_eq(sb_run(ctx, &req, NULL, &res), 0);
	ck_assert_msg(res.exited && res.exit_code == 0, "exit %d: %s",
	    res.exit_code, res.err_out.data != NULL ? res.err_out.data : "");
	ck_assert_msg(rc.calls >= 2 && rc.calls <= 20, "%d READY calls",
	    rc.calls);
	sb_result_fini(&res);
	sb_ctx_free(ctx);
}
END_TEST

/* Mounts whose mount point is path in our mount table. */
static int
mounts_at(const char *path)
{
	char line[1024], *f;
	FILE *mi = fopen("/proc/self/mountinfo", "r");
	int i, n = 0;

	ck_assert_ptr_nonnull(mi);
	while (fgets(line, sizeof(line), mi) != NULL) {
		/* "ID PARENT MAJ:MIN ROOT MOUNTPOINT ..." */
		for (f = line, i = 0; i < 4 && f != NULL; i++)
			if ((f = strchr(f, ' ')) != NULL)
				f++;
		if (f != NULL && strncmp(f, path, strlen(path)) == 0 &&
		    f[strlen(path)] == ' ')
			n++;
	}
	fclose(mi);
	return n;
}

/*
 * A root server with per-slot uids clones the workspace's mount itself
 * (exec.c, ws_tree) and the child binds the protected names read-only
 * over themselves on that clone. Where the workspace lies on a shared
 * mount (systemd makes / shared), a clone left in its peer group would
 * send those binds back into the server's mount namespace (and every
 * peer's), one more per run, never removed: the owner's .git read-only
 * on the host. Here, in a mount namespace of the test's own, a shared
 * tmpfs is the workspace: after a run its .git/config is no mount point
 * and still writable from outside, while it was read-only inside.
 */
START_TEST(protected_names_stay_in_the_sandbox)
{
	static const char *const argv[] = { "/bin/sh", "-c",
	    "if echo x 2>/dev/null > .git/config; then echo written; "
	    "else echo refused; fi", NULL };
	static const char *const protect[] = { ".git", NULL };
	struct sb_request req;
	struct sb_result res;
	struct sb_ctx *ctx;
	char *ws, git[256], after[300];
	int i, fd, rc;

	if (geteuid() != 0)
		return;	/* per-slot uids and ws_tree are a root server's */
	ck_assert_int_eq(unshare(CLONE_NEWNS), 0);
	ck_assert_int_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
	ws = make_workspace();
	ck_assert_int_eq(mount("tmpfs", ws, "tmpfs", 0,
	    "size=1m,mode=0755,uid=65534,gid=65534"), 0);
	ck_assert_int_eq(mount(NULL, ws, NULL, MS_SHARED, NULL), 0);
	(void)snprintf(git, sizeof(git), "%s/.git", ws);
	ck_assert_int_eq(mkdir(git, 0755), 0);
	ck_assert_int_eq(chown(git, 65534, 65534), 0);
	(void)snprintf(after, sizeof(after), "%s/config", git);
	fd = open(after, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	ck_assert_msg(fd >= 0, "%s: %s", after, strerror(errno));
	close(fd);
	ctx = uid_ctx(1, 0, &res, &rc);
	ck_assert_msg(rc == 0, "%s", res.message);
	request(&req, argv);
	req.workspace_host = ws;
	req.workspace_writable = true;
	req.workspace_protect = protect;
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(sb_run(ctx, &req, NULL, &res), 0);
		ck_assert_msg(res.exited && res.exit_code == 0, "%s",
		    res.err_out.data);
		ck_assert_str_eq(res.out.data, "refused\n");
		sb_result_fini(&res);
	}
	sb_ctx_free(ctx);
	ck_assert_int_eq(mounts_at(after), 0);
	fd = open(after, O_WRONLY | O_APPEND | O_CLOEXEC);
	ck_assert_msg(fd >= 0, "%s: %s", after, strerror(errno));
	close(fd);
	ck_assert_int_eq(umount2(ws, MNT_DETACH), 0);
	(void)rmdir(ws);
	free(ws);
}
END_TEST

/*
 * --check's layers of issue 10, as sb_ctx_bounds() gives them: root makes
 * the sandboxes' ipc namespaces and has a uid per run; uid 65534 neither.
 */
START_TEST(bounds_report_the_perimeter_layers)
{
	struct sb_config cfg = { .uid_slots = 1, .uid_base = test_uid_base(),
	    .init_path = MCP_TEST_INIT };
	struct sb_result res;
	struct sb_bounds b;
	struct sb_ctx *ctx;
	bool root = geteuid() == 0;

	ck_assert_msg(sb_ctx_new(&cfg, &ctx, &res) == 0, "%s", res.message);
	sb_ctx_bounds(ctx, &b);
	ck_assert(b.ipc == root);
	ck_assert(b.uid_pool == root);
	if (root)
		ck_assert_uint_eq(b.uid_first, cfg.uid_base);
	ck_assert_uint_eq(b.uid_last, root ? cfg.uid_base : 0);
	ck_assert_uint_eq(b.uid, root ? SB_DEFAULT_UID : geteuid());
	ck_assert_uint_eq(b.inotify_instances, 16);
	ck_assert_uint_eq(b.ipc_shmmni, SB_IPC_SHMMNI);
	ck_assert_str_eq(b.ipc_sem, SB_IPC_SEM);
	ck_assert_uint_eq(b.rlim_memlock, SB_RLIM_MEMLOCK);
	sb_ctx_free(ctx);
}
END_TEST

static Suite *
lib_suite(void)
{
	Suite *s = suite_create("sandbox-lib");
	TCase *t = tcase_create("runs");

	tcase_set_timeout(t, 60);
	tcase_add_test(t, run_captures_output_and_exit_code);
	tcase_add_test(t, a_listener_that_cannot_accept_pauses_the_poll);
	tcase_add_test(t, stdin_bytes_reach_the_program);
	tcase_add_test(t, peak_memory_of_a_large_program_is_measured);
	tcase_add_test(t, server_signal_mask_and_ignores_do_not_leak);
	tcase_add_test(t, deadline_kills_the_whole_tree);
	tcase_add_test(t, a_run_is_stopped_when_it_returns);
	tcase_add_test(t, started_run_takes_stdin_as_it_drains);
	tcase_add_test(t, started_run_survives_a_program_that_ignores_stdin);
	tcase_add_test(t, started_run_deadline_starts_at_finish);
	tcase_add_test(t, started_run_discarded_leaves_nothing);
	tcase_add_test(t, a_deferred_sandbox_runs_the_call_it_is_given);
	tcase_add_test(t, a_deferred_sandbox_refuses_another_shape);
	tcase_add_test(t, started_low_run_weighs_least_until_its_call);
	tcase_add_test(t, the_sandbox_holds_nothing_of_the_launchers_memory);
	tcase_add_test(t, out_of_descriptors_says_so);
	tcase_add_test(t, no_capability_is_left_when_the_program_starts);
	tcase_add_test(t, an_init_rewritten_later_is_not_run);
	tcase_add_test(t, cancel_from_another_thread_kills_at_once);
	tcase_add_test(t, parallel_runs_with_fresh_netns);
	tcase_add_test(t, parallel_runs_with_a_netns_pool_smaller_than_the_load);
	tcase_add_test(t, concurrent_sandboxes_do_not_share_abstract_sockets);
	tcase_add_test(t, pooled_sandboxes_do_not_share_abstract_sockets);
	tcase_add_test(t, missing_bind_source_fails_closed);
	tcase_add_test(t, exec_failure_inside_is_a_sandbox_error);
	tcase_add_test(t, runs_leak_no_fd_into_the_server);
	tcase_add_test(t, fd_exhaustion_fails_each_step_cleanly);
	tcase_add_test(t, bounds_report_the_perimeter_layers);
	tcase_add_test(t, runs_at_once_get_their_own_kernel_uid);
	tcase_add_test(t, a_uid_range_out_of_bounds_is_refused);
	tcase_add_test(t, a_writable_bind_keeps_the_runs_own_uid);
	tcase_add_test(t, an_explicit_uid_range_is_held);
	tcase_add_test(t, protected_names_stay_in_the_sandbox);
	tcase_add_test(t, a_protected_name_replaced_after_start_is_not_current);
	tcase_add_test(t, an_init_whose_server_died_before_its_deathsig_starts_nothing);
	suite_add_tcase(s, t);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(lib_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
