/*
 * Unit tests of run_command, run_code and run_skill_script through the
 * real sandbox: outputs, exit codes, deadlines, the allow-list, argument
 * data that looks like shell, refused environment names, busy and
 * cancelled calls, files shared with the file tools, and skill scripts
 * (listed only, JSON stdout, exit 2, the original folder never modified).
 * The skills directory is generated here.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>

#include "sandbox.h"
#include "slots.h"
#include "tools_harness.h"
#include "pool.h"

#define CONCURRENT_CALLS	16	/* threads in the isolation test */
#define SKILL_COPY_ENTRIES	10000	/* tools/skills.c's copy limit */

static struct th T;
static struct sb_ctx *SB;
static struct tool_slots *SLOTS;
static char SKILLS[64];	/* /tmp/tools-run-skills-XXXXXX */

/* Outside a test (fixtures for all of them): stop the run on failure. */
static void
must(bool ok, const char *what)
{
	if (!ok) {
		perror(what);
		exit(EXIT_FAILURE);
	}
}

static void
put(const char *dir, const char *name, const char *text, mode_t mode)
{
	char path[PATH_MAX];
	int fd, n;

	n = snprintf(path, sizeof(path), "%s/%s", dir, name);
	must(n >= 0 && (size_t)n < sizeof(path), name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	must(fd >= 0, path);
	must(write(fd, text, strlen(text)) == (ssize_t)strlen(text), path);
	close(fd);
}

static void
make_skills(void)
{
	char d[PATH_MAX];
	int dfd, i;

	(void)snprintf(SKILLS, sizeof(SKILLS), "/tmp/tools-run-skills-XXXXXX");
	must(mkdtemp(SKILLS) != NULL, "mkdtemp");
	must(chmod(SKILLS, 0755) == 0, "chmod");
	(void)snprintf(d, sizeof(d), "%s/greeter", SKILLS);
	must(mkdir(d, 0755) == 0, d);
	put(d, "SKILL.md", "---\nname: greeter\ndescription: >\n  Greets "
	    "people\n  by name.\n---\n# Greeter\n", 0644);
	(void)snprintf(d, sizeof(d), "%s/greeter/scripts", SKILLS);
	must(mkdir(d, 0755) == 0, d);
	put(d, "greet.py", "import json, sys\n"
	    "if len(sys.argv) < 2:\n"
	    "    print('usage: greet.py NAME', file=sys.stderr)\n"
	    "    sys.exit(2)\n"
	    "print(json.dumps({'greeting': 'hello ' + sys.argv[1]}))\n",
	    0644);
	put(d, "plain.sh", "echo plain $1; pwd; env | wc -l\n", 0644);
	/* what Python's json.dumps(float('nan')) prints, and an overflow */
	put(d, "nan.sh", "case \"$1\" in inf) echo '{\"v\": 1e999}';; "
	    "*) echo '{\"v\": NaN}';; esac\n", 0644);
	put(d, "vandal.sh", "echo changed > ../SKILL.md; rm -f greet.py; "
	    "echo new > extra; ls /skill/scripts | wc -l\n", 0644);
	put(d, "notes.txt", "not a script\n", 0644);
	dfd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	must(dfd >= 0 && symlinkat("/etc/passwd", dfd, "link.sh") == 0,
	    "symlink");
	close(dfd);
	/* a skill with more entries than one copy may hold */
	(void)snprintf(d, sizeof(d), "%s/bulky", SKILLS);
	must(mkdir(d, 0755) == 0, d);
	put(d, "SKILL.md", "---\nname: bulky\ndescription: Big.\n---\n", 0644);
	(void)snprintf(d, sizeof(d), "%s/bulky/scripts", SKILLS);
	must(mkdir(d, 0755) == 0, d);
	put(d, "run.sh", "echo ran\n", 0644);
	(void)snprintf(d, sizeof(d), "%s/bulky/data", SKILLS);
	must(mkdir(d, 0755) == 0, d);
	for (i = 0; i <= SKILL_COPY_ENTRIES; i++) {
		char name[32];	/* f<number> */
		(void)snprintf(name, sizeof(name), "f%d", i);
		put(d, name, "", 0644);
	}
}

static void
setup_with(const char *const *flags)
{
	struct sb_config cfg;
	struct sb_result r;

	memset(&cfg, 0, sizeof(cfg));
	cfg.init_path = MCP_TEST_INIT;
	th_init_flags(&T, flags);
	ck_assert_msg(sb_ctx_new(&cfg, &SB, &r) == 0, "sandbox: %s",
	    r.message);
	SLOTS = tool_slots_new(2, 64, 30000);
	ck_assert_ptr_nonnull(SLOTS);
	T.env.sb = SB;
	T.env.slots = SLOTS;
	/* the sandbox uid must be able to write the workspace */
	if (geteuid() == 0)
		ck_assert_int_eq(chown(T.ws->path, SB_DEFAULT_UID,
		    SB_DEFAULT_GID), 0);
}

static void
setup(void)
{
	const char *flags[] = { "allow-command", "printenv", "skills-dir",
	    SKILLS, NULL };

	setup_with(flags);
}

static void
teardown(void)
{
	th_fini(&T);
	tool_slots_free(SLOTS);
	sb_ctx_free(SB);
}

static struct json_object *
call(const char *name, const char *args)
{
	return th_call(&T, name, args);
}

START_TEST(run_command_runs_echo_and_reports_output)
{
	struct json_object *r = call("run_command",
	    "{\"command\":\"echo\",\"args\":[\"hello\"]}");

	ck_assert(!th_is_error(r));
	ck_assert_str_eq(th_text(r),
	    "The command exited with status 0.\n--- stdout ---\nhello\n");
	ck_assert_str_eq(json_object_get_string(th_sc(r, "stdout")), "hello\n");
	ck_assert_int_eq(json_object_get_int(th_sc(r, "exit_code")), 0);
	ck_assert(T.audit.ran && !T.audit.refused);
	ck_assert_int_eq(T.audit.exit_code, 0);
	json_object_put(r);
}
END_TEST

START_TEST(run_command_passes_shell_metacharacters_as_data)
{
	struct json_object *r = call("run_command",
	    "{\"command\":\"echo\",\"args\":[\"$(id)\",\";\",\"rm -rf /\","
	    "\"|\",\"cat\",\"/etc/shadow\",\">\",\"x\",\"*\"]}");

	ck_assert_str_eq(json_object_get_string(th_sc(r, "stdout")),
	    "$(id) ; rm -rf / | cat /etc/shadow > x *\n");
	json_object_put(r);
	ck_assert_int_eq(access(th_ws(&T, "x"), F_OK), -1);
}
END_TEST

START_TEST(run_command_refuses_programs_off_the_allow_list)
{
	struct json_object *r;

	ck_assert(!th_valid(&T, "run_command",
	    "{\"command\":\"/bin/sh\"}"));
	ck_assert(!th_valid(&T, "run_command",
	    "{\"command\":\"echo hi\"}"));
	r = th_call_past_schema(&T, "run_command", "{\"command\":\"bash\"}");
	ck_assert(th_is_error(r));
	ck_assert_msg(strncmp(th_text(r), "'bash' is not an allowed command, "
	    "so it was not run. Allowed: cat, ls, ", 63) == 0, "%s",
	    th_text(r));
	ck_assert(T.audit.refused && !T.audit.ran);
	ck_assert_str_eq(T.audit.reason, "command not allowed");
	json_object_put(r);
}
END_TEST

START_TEST(run_command_reports_failure_exit_as_error)
{
	struct json_object *r = call("run_command",
	    "{\"command\":\"ls\",\"args\":[\"/nonexistent\"]}");

	ck_assert(th_is_error(r));
	ck_assert_int_eq(json_object_get_int(th_sc(r, "exit_code")), 2);
	ck_assert_msg(strncmp(th_text(r), "The command exited with status 2."
	    "\n--- stderr ---\nls: cannot access '/nonexistent'", 80) == 0,
	    "%s", th_text(r));
	json_object_put(r);
}
END_TEST

START_TEST(run_command_sets_checked_environment)
{
	struct json_object *r;

	r = call("run_command", "{\"command\":\"printenv\","
	    "\"args\":[\"GREETING\",\"PATH\"],\"env\":{\"GREETING\":\"hi\"}}");
	ck_assert_str_eq(json_object_get_string(th_sc(r, "stdout")),
	    "hi\n/usr/local/bin:/usr/bin:/bin\n");
	json_object_put(r);
	r = call("run_command", "{\"command\":\"printenv\","
	    "\"env\":{\"LD_PRELOAD\":\"/tmp/x.so\"}}");
	ck_assert(th_is_error(r));
	ck_assert_str_eq(th_text(r), "the command was not run: the environment "
	    "variable 'LD_PRELOAD' may not be set (loader, interpreter and "
	    "shell hooks such as LD_*, PYTHON*, NODE_OPTIONS, BASH_ENV are "
	    "refused). Remove it and call again.");
	ck_assert(T.audit.refused && !T.audit.ran);
	json_object_put(r);
	ck_assert(!th_valid(&T, "run_command", "{\"command\":\"printenv\","
	    "\"env\":{\"A=B\":\"x\"}}"));
}
END_TEST

START_TEST(run_code_runs_each_available_language)
{
	static const char *const cases[][2] = {
		{ "{\"language\":\"python3\",\"code\":\"import sys; "
		    "print(2**10, sys.argv[1:])\",\"args\":[\"a b\"]}",
		    "1024 ['a b']\n" },
		{ "{\"language\":\"node\",\"code\":\"console.log(6*7, "
		    "process.argv.slice(1))\",\"args\":[\"x\"]}",
		    "42 [ 'x' ]\n" },
		{ "{\"language\":\"sh\",\"code\":\"echo $1 $#\","
		    "\"args\":[\"one\",\"two\"]}", "one 2\n" },
		{ "{\"language\":\"c\",\"code\":\"#include <stdio.h>\\n"
		    "int main(int c, char **v) { printf(\\\"%d %s\\\\n\\\", c, "
		    "v[1]); return 0; }\",\"args\":[\"z\"]}", "2 z\n" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct json_object *r;

		if (!T.p->languages[i].available)
			continue;
		r = call("run_code", cases[i][0]);
		ck_assert_msg(!th_is_error(r), "%s: %s", cases[i][0],
		    th_text(r));
		ck_assert_str_eq(json_object_get_string(th_sc(r, "stdout")),
		    cases[i][1]);
		json_object_put(r);
	}
}
END_TEST

START_TEST(run_code_python_is_isolated_and_reads_stdin)
{
	struct json_object *r;

	if (!T.p->languages[POLICY_LANG_PYTHON3].available)
		return;
	r = call("run_code", "{\"language\":\"python3\",\"code\":"
	    "\"import sys; print(sys.flags.isolated, sys.stdin.read())\","
	    "\"stdin\":\"fed\"}");
	ck_assert_str_eq(json_object_get_string(th_sc(r, "stdout")), "1 fed\n");
	json_object_put(r);
}
END_TEST

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

/* Our live children (a pooled sandbox's init is one). */
static int
count_children(void)
{
	char path[64], buf[4096];
	ssize_t n;
	int fd, k = 0;

	(void)snprintf(path, sizeof(path), "/proc/self/task/%d/children",
	    (int)getpid());
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	(void)close(fd);
	for (ssize_t i = 0; i < n; i++)
		k += buf[i] == ' ';
	return k;
}

/* The pool's shape of a run_code python3 or sh call in the test's workspace. */
static struct tool_shape
shape_of(enum tool_shape_kind k, int lang)
{
	struct tool_shape sh = { k, T.p->languages[lang].binds, T.ws->path };

	return sh;
}

/*
 * Each snippet run cold, then on a sandbox of the pool (py: a started
 * python3; else one built ahead): the same exit code, stdout and stderr,
 * and each pooled call is checked to have taken one.
 */
static void
pooled_answers_as_cold(const char *const *snippets, size_t n, bool py)
{
	static const char *const keys[] = { "exit_code", "stdout", "stderr" };
	struct tool_shape sh = py ? shape_of(TOOL_SHAPE_PYTHON,
	    POLICY_LANG_PYTHON3) : shape_of(TOOL_SHAPE_EXEC, POLICY_LANG_SH);
	struct json_object *cold, *warm;
	struct pool *w;
	unsigned cap;
	size_t i, k;
	int fds = count_fds();

	ck_assert_ptr_nonnull(w = pool_new(SB, T.p, SLOTS));
	cap = py ? T.p->limits.warm_python : T.p->limits.pool_size;
	ck_assert_uint_ge(cap, 1);
	ck_assert_ptr_null(pool_take(w, &sh));	/* none yet */
	for (i = 0; i < n; i++) {
		pool_prestart(NULL, &T.env.prestart);
		cold = call("run_code", snippets[i]);
		pool_prestart(w, &T.env.prestart);
		pool_refill(w);
		ck_assert_uint_eq(pool_ready(w, &sh, cap, 20000), cap);
		warm = call("run_code", snippets[i]);
		/* it took one (nothing refills here: dispatch does that) */
		ck_assert_uint_eq(pool_ready(w, &sh, cap, 0), cap - 1);
		for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			ck_assert_msg(json_object_equal(th_sc(cold, keys[k]),
			    th_sc(warm, keys[k])), "%s: %s: cold %s, warm %s",
			    snippets[i], keys[k], json_object_to_json_string(
			    th_sc(cold, keys[k])), json_object_to_json_string(
			    th_sc(warm, keys[k])));
		json_object_put(cold);
		json_object_put(warm);
	}
	pool_prestart(NULL, &T.env.prestart);
	pool_free(w);
	/* nothing of the taken, finished and discarded sandboxes is left */
	ck_assert_int_eq(count_fds(), fds);
	ck_assert_int_eq(count_children(), 0);
}

/*
 * A python started ahead (pool.c) gives each call what `python3 -I -c`
 * started for it gives: the same stdout, stderr (tracebacks without the
 * wrapper's frame, a SyntaxError without a traceback) and exit status,
 * with args and stdin.
 */
START_TEST(run_code_warm_python_answers_as_a_cold_one)
{
	static const char *const snippets[] = {
		"{\"language\":\"python3\",\"code\":\"import sys; print("
		    "sys.argv, sys.orig_argv[1:], sys.stdin.read())\","
		    "\"args\":[\"a b\",\"\\u00e7\"],\"stdin\":\"fed\\nx\"}",
		"{\"language\":\"python3\",\"code\":\"print(sorted(dir()),"
		    " __name__, __spec__)\"}",
		"{\"language\":\"python3\",\"code\":\"import sys\\n"
		    "raise ValueError(len(sys.argv))\",\"args\":[\"x\"]}",
		"{\"language\":\"python3\",\"code\":\"def f(:\\n pass\"}",
		"{\"language\":\"python3\",\"code\":\"try:\\n 1/0\\n"
		    "except Exception as e:\\n raise KeyError(1) from e\"}",
		"{\"language\":\"python3\",\"code\":\"import atexit, sys; "
		    "atexit.register(print, 'bye'); sys.exit(3)\"}",
		"{\"language\":\"python3\",\"code\":\"print(input(), "
		    "input())\",\"stdin\":\"l1\\nl2\\n\"}",
	};

	if (!T.p->languages[POLICY_LANG_PYTHON3].available)
		return;
	pooled_answers_as_cold(snippets, sizeof(snippets) /
	    sizeof(snippets[0]), true);
}
END_TEST

/*
 * A sandbox built ahead runs the call's own program as a cold one does:
 * argv, env, stdin, exit status, limits (ulimit -t is the call's
 * deadline, not the pool's longest), the cwd and the ids.
 */
START_TEST(run_code_pooled_sandbox_answers_as_a_cold_one)
{
	static const char *const snippets[] = {
		"{\"language\":\"sh\",\"code\":\"echo \\\"$# $1|$2\\\"; "
		    "cat; exit 7\",\"args\":[\"a b\",\"\\u00e7\"],"
		    "\"stdin\":\"fed\\nx\"}",
		"{\"language\":\"sh\",\"code\":\"ulimit -t; ulimit -n; ulimit "
		    "-u; pwd; id -u; id -g; env | sort\",\"timeout_ms\":2500}",
		"{\"language\":\"sh\",\"code\":\"echo err >&2; "
		    "exec /no/such/program\"}",
		"{\"language\":\"sh\",\"code\":\"ls -a /tmp /workspace | "
		    "wc -l; tr '\\\\0' ' ' < /proc/1/cmdline\"}",
	};

	if (!T.p->languages[POLICY_LANG_SH].available)
		return;
	pooled_answers_as_cold(snippets, sizeof(snippets) /
	    sizeof(snippets[0]), false);
}
END_TEST

/*
 * A call of another shape (here: another workspace, as another HTTP
 * session's) makes it the one kept: the old shape's sandboxes are
 * replaced by the new one's, none of them left waiting.
 */
START_TEST(a_new_shape_drains_the_old_one)
{
	char other[] = "/tmp/tools-run-other-XXXXXX";
	struct tool_shape a = shape_of(TOOL_SHAPE_EXEC, POLICY_LANG_SH), b;
	unsigned cap = T.p->limits.pool_size;
	struct pool *w;
	int fds = count_fds();

	ck_assert_ptr_nonnull(mkdtemp(other));
	if (geteuid() == 0)
		ck_assert_int_eq(chown(other, 65534, 65534), 0);
	b = a;
	b.workspace = other;
	ck_assert_ptr_nonnull(w = pool_new(SB, T.p, SLOTS));
	ck_assert_ptr_null(pool_take(w, &a));
	pool_refill(w);
	ck_assert_uint_eq(pool_ready(w, &a, cap, 20000), cap);
	ck_assert_ptr_null(pool_take(w, &b));	/* none of b yet */
	pool_refill(w);
	ck_assert_uint_eq(pool_ready(w, &b, cap, 20000), cap);
	ck_assert_uint_eq(pool_ready(w, &a, cap, 0), 0);
	pool_free(w);
	ck_assert_int_eq(count_fds(), fds);
	ck_assert_int_eq(count_children(), 0);
	ck_assert_int_eq(rmdir(other), 0);
}
END_TEST

/*
 * A pooled sandbox is never handed to two calls: what one call leaves
 * behind (a file in /tmp, a process, a SysV segment, a variable it
 * exported) is absent in the next, which runs on another sandbox.
 */
START_TEST(a_pooled_sandbox_is_never_reused)
{
	static const char leave[] = "{\"language\":\"sh\",\"code\":\""
	    "echo x > /tmp/left-behind; export LEFT=1; "
	    "(setsid sleep 600 &); ipcmk -M 4096 >/dev/null; "
	    "ipcs -m | grep -c ^0x; ls /tmp\"}";
	static const char look[] = "{\"language\":\"sh\",\"code\":\""
	    "ls /tmp; echo \\\"LEFT=$LEFT\\\"; ipcs -m | grep -c ^0x; "
	    "for p in /proc/[0-9]*; do tr '\\\\0' ' ' < $p/cmdline; "
	    "echo; done | grep -c '^sleep 600'\"}";
	struct tool_shape sh = shape_of(TOOL_SHAPE_EXEC, POLICY_LANG_SH);
	struct json_object *r;
	struct pool *w;

	if (!T.p->languages[POLICY_LANG_SH].available)
		return;
	ck_assert_ptr_nonnull(w = pool_new(SB, T.p, SLOTS));
	ck_assert_ptr_null(pool_take(w, &sh));
	pool_prestart(w, &T.env.prestart);
	pool_refill(w);
	ck_assert_uint_eq(pool_ready(w, &sh, 2, 20000), 2);
	r = call("run_code", leave);
	ck_assert_str_eq(json_object_get_string(th_sc(r, "stdout")),
	    "1\nleft-behind\n");
	json_object_put(r);
	ck_assert_uint_eq(pool_ready(w, &sh, 2, 0), 1);
	r = call("run_code", look);
	ck_assert_uint_eq(pool_ready(w, &sh, 2, 0), 0);
	ck_assert_str_eq(json_object_get_string(th_sc(r, "stdout")),
	    "LEFT=\n0\n0\n");
	json_object_put(r);
	pool_prestart(NULL, &T.env.prestart);
	pool_free(w);
}
END_TEST

START_TEST(run_code_c_compile_error_is_reported)
{
	struct json_object *r;

	if (!T.p->languages[POLICY_LANG_C].available)
		return;
	r = call("run_code", "{\"language\":\"c\",\"code\":"
	    "\"int main( {\"}");
	ck_assert(th_is_error(r));
	ck_assert_int_eq(json_object_get_int(th_sc(r, "exit_code")), 1);
	ck_assert_ptr_nonnull(strstr(json_object_get_string(th_sc(r, "stderr")),
	    "mcp-sandbox: compilation failed\n"));
	json_object_put(r);
}
END_TEST

START_TEST(run_code_is_killed_at_the_deadline)
{
	struct json_object *r = call("run_code", "{\"language\":\"sh\","
	    "\"code\":\"echo started; sleep 30\",\"timeout_ms\":300}");

	ck_assert(th_is_error(r));
	ck_assert(json_object_get_boolean(th_sc(r, "timed_out")));
	ck_assert_str_eq(th_text(r), "Timed out: the code was killed after "
	    "300 ms (the deadline). Make it faster, or ask for a longer "
	    "timeout_ms within the policy.\n--- stdout ---\nstarted\n");
	ck_assert(T.audit.timed_out);
	json_object_put(r);
}
END_TEST

START_TEST(run_code_output_is_capped_and_made_valid_utf8)
{
	static const char *const flags[] = { "output-cap", "1024", NULL };
	struct json_object *r;

	teardown();
	setup_with(flags);
	r = call("run_code", "{\"language\":\"sh\",\"code\":"
	    "\"printf 'ab\\\\377cd'; yes | head -c 5000 >&2\"}");
	ck_assert(!th_is_error(r));
	ck_assert_str_eq(json_object_get_string(th_sc(r, "stdout")),
	    "ab\xef\xbf\xbd" "cd");
	ck_assert(json_object_get_boolean(th_sc(r, "stderr_truncated")));
	ck_assert_int_eq(json_object_get_int(th_sc(r, "stderr_bytes")), 5000);
	ck_assert_int_eq(strlen(json_object_get_string(th_sc(r, "stderr"))),
	    1024);
	ck_assert(T.audit.truncated);
	json_object_put(r);
}
END_TEST

START_TEST(run_tools_share_the_workspace_with_file_tools)
{
	struct json_object *r;

	r = call("write_file",
	    "{\"path\":\"in.txt\",\"content\":\"from write_file\"}");
	json_object_put(r);
	r = call("run_command", "{\"command\":\"cat\","
	    "\"args\":[\"in.txt\"]}");
	ck_assert_str_eq(json_object_get_string(th_sc(r, "stdout")),
	    "from write_file");
	json_object_put(r);
	r = call("run_code", "{\"language\":\"sh\",\"code\":"
	    "\"echo from sandbox > out.txt; echo more >> in.txt\"}");
	ck_assert_msg(!th_is_error(r), "%s", th_text(r));
	json_object_put(r);
	r = call("read_file", "{\"path\":\"out.txt\"}");
	ck_assert_str_eq(th_text(r), "from sandbox\n");
	json_object_put(r);
	r = call("read_file", "{\"path\":\"in.txt\"}");
	ck_assert_str_eq(th_text(r), "from write_filemore\n");
	json_object_put(r);
}
END_TEST

START_TEST(run_command_is_busy_when_slots_and_queue_are_full)
{
	struct json_object *r;
	struct tool_slots *full = tool_slots_new(1, 0, 1000);
	char want[256];

	ck_assert_int_eq(tool_slots_acquire(full, NULL, NULL), TOOL_SLOT_OK);
	T.env.slots = full;
	r = call("run_command", "{\"command\":\"true\"}");
	ck_assert(th_is_error(r));
	(void)snprintf(want, sizeof(want), "the command was not run: the "
	    "server is busy (%u sandboxes running and %u calls waiting). Try "
	    "again in a moment.", T.p->limits.max_sandboxes,
	    T.p->limits.queue);
	ck_assert_str_eq(th_text(r), want);
	ck_assert_str_eq(T.audit.reason, "busy");
	json_object_put(r);
	T.env.slots = SLOTS;
	tool_slots_release(full);
	tool_slots_free(full);
}
END_TEST

START_TEST(run_code_cancelled_call_does_not_run)
{
	struct sb_cancel cancel;
	struct json_object *r;

	ck_assert_int_eq(sb_cancel_init(&cancel), 0);
	sb_cancel_fire(&cancel);
	T.call.cancel = &cancel;
	r = call("run_code", "{\"language\":\"sh\",\"code\":"
	    "\"touch ran\"}");
	ck_assert(th_is_error(r));
	ck_assert_str_eq(th_text(r), "the code was not run: the call was "
	    "cancelled.");
	json_object_put(r);
	T.call.cancel = NULL;
	sb_cancel_fini(&cancel);
	ck_assert_int_eq(access(th_ws(&T, "ran"), F_OK), -1);
}
END_TEST

struct par {
	int i;
	char out[64];
	struct th *t;
	tool_handler_fn handler;	/* run_code's, from the toolset */
};

static void *
par_run(void *arg)
{
	struct par *p = arg;
	struct tool_audit audit = { 0 };
	struct tool_call c = p->t->call;
	struct json_object *args, *res = NULL, *v;
	char json[256];

	c.audit = &audit;
	(void)snprintf(json, sizeof(json), "{\"language\":\"sh\",\"code\":"
	    "\"echo value-%d\"}", p->i);
	args = json_tokener_parse(json);
	if (p->handler(&c, args, &res) != MCP_OK)
		(void)snprintf(p->out, sizeof(p->out), "handler failed");
	else if (json_object_object_get_ex(res, "structuredContent", &v) &&
	    json_object_object_get_ex(v, "stdout", &v) &&
	    json_object_get_string_len(v) > 0)
		(void)snprintf(p->out, sizeof(p->out), "%s",
		    json_object_get_string(v));
	else
		fprintf(stderr, "%s\n", json_object_to_json_string(res));
	json_object_put(res);
	json_object_put(args);
	return NULL;
}

START_TEST(concurrent_run_code_calls_each_get_their_own_output)
{
	pthread_t th[CONCURRENT_CALLS];
	struct par p[CONCURRENT_CALLS];
	char want[64];
	int i;

	for (i = 0; i < CONCURRENT_CALLS; i++) {
		memset(&p[i], 0, sizeof(p[i]));
		p[i].i = i;
		p[i].t = &T;
		p[i].handler = th_entry(&T, "run_code")->def->handler;
		ck_assert_int_eq(pthread_create(&th[i], NULL, par_run, &p[i]),
		    0);
	}
	for (i = 0; i < CONCURRENT_CALLS; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < CONCURRENT_CALLS; i++) {
		(void)snprintf(want, sizeof(want), "value-%d\n", i);
		ck_assert_str_eq(p[i].out, want);
	}
}
END_TEST

/* ---- skills ---- */

START_TEST(skills_are_scanned_from_front_matter_and_scripts)
{
	const struct policy_skill *sk = policy_find_skill(T.p, "greeter");

	ck_assert_ptr_nonnull(sk);
	ck_assert_str_eq(sk->summary, "Greets people by name.");
	ck_assert_uint_eq(sk->nscripts, 4);	/* not notes.txt, not link.sh */
	ck_assert_str_eq(sk->scripts[0].name, "greet.py");
	ck_assert_str_eq(sk->scripts[1].name, "nan.sh");
	ck_assert_str_eq(sk->scripts[2].name, "plain.sh");
	ck_assert_str_eq(sk->scripts[3].name, "vandal.sh");
}
END_TEST

START_TEST(skill_script_json_stdout_becomes_structured_content)
{
	struct json_object *r, *sc, *v;

	if (!T.p->languages[POLICY_LANG_PYTHON3].available)
		return;
	r = call("run_skill_script", "{\"skill\":\"greeter\","
	    "\"script\":\"greet.py\",\"args\":[\"Ada\"]}");
	ck_assert_msg(!th_is_error(r), "%s", th_text(r));
	ck_assert(json_object_object_get_ex(r, "structuredContent", &sc));
	ck_assert(json_object_object_get_ex(sc, "greeting", &v));
	ck_assert_str_eq(json_object_get_string(v), "hello Ada");
	ck_assert_str_eq(th_text(r), "{\"greeting\": \"hello Ada\"}\n");
	json_object_put(r);
}
END_TEST

START_TEST(skill_script_exit_2_is_invalid_input)
{
	struct json_object *r;

	if (!T.p->languages[POLICY_LANG_PYTHON3].available)
		return;
	r = call("run_skill_script", "{\"skill\":\"greeter\","
	    "\"script\":\"scripts/greet.py\"}");
	ck_assert(th_is_error(r));
	ck_assert_str_eq(th_text(r), "The script rejected its input (exit 2): "
	    "usage: greet.py NAME\n");
	json_object_put(r);
}
END_TEST

START_TEST(skill_script_runs_with_an_empty_environment_in_a_copy)
{
	struct json_object *r = call("run_skill_script",
	    "{\"skill\":\"greeter\",\"script\":\"plain.sh\",\"args\":[\"x\"]}");

	ck_assert_msg(!th_is_error(r), "%s", th_text(r));
	/* dash sets PWD (and nothing else comes from us) */
	ck_assert_str_eq(json_object_get_string(th_sc(r, "stdout")),
	    "plain x\n/skill\n1\n");
	json_object_put(r);
}
END_TEST

START_TEST(skill_script_never_modifies_the_original_folder)
{
	char path[PATH_MAX];
	struct json_object *r;
	struct stat st;
	FILE *f;
	char buf[64] = "";

	r = call("run_skill_script", "{\"skill\":\"greeter\","
	    "\"script\":\"vandal.sh\"}");
	ck_assert_msg(!th_is_error(r), "%s", th_text(r));
	/* inside, the copy was changed: greet.py gone, extra added */
	ck_assert_str_eq(json_object_get_string(th_sc(r, "stdout")), "5\n");
	json_object_put(r);
	(void)snprintf(path, sizeof(path), "%s/greeter/SKILL.md", SKILLS);
	f = fopen(path, "re");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
	fclose(f);
	ck_assert_str_eq(buf, "---\n");
	(void)snprintf(path, sizeof(path), "%s/greeter/scripts/greet.py",
	    SKILLS);
	ck_assert_int_eq(stat(path, &st), 0);
	(void)snprintf(path, sizeof(path), "%s/greeter/scripts/extra",
	    SKILLS);
	ck_assert_int_eq(stat(path, &st), -1);
}
END_TEST

START_TEST(skill_script_must_be_a_listed_script)
{
	struct json_object *r;
	static const char *const refused[] = { "notes.txt", "link.sh",
	    "missing.py" };
	size_t i;

	for (i = 0; i < 3; i++) {
		char args[128], want[512];

		(void)snprintf(args, sizeof(args), "{\"skill\":\"greeter\","
		    "\"script\":\"%s\"}", refused[i]);
		r = call("run_skill_script", args);
		ck_assert(th_is_error(r));
		(void)snprintf(want, sizeof(want), "'%s' is not a script of "
		    "the skill 'greeter', so nothing was run. Its scripts "
		    "(files directly under scripts/ with an extension .py, "
		    ".sh, .js or .mjs) are: greet.py, nan.sh, plain.sh, "
		    "vandal.sh.",
		    refused[i]);
		ck_assert_str_eq(th_text(r), want);
		ck_assert(T.audit.refused);
		json_object_put(r);
	}
	ck_assert(!th_valid(&T, "run_skill_script",
	    "{\"skill\":\"greeter\",\"script\":\"../SKILL.md\"}"));
	ck_assert(!th_valid(&T, "run_skill_script",
	    "{\"skill\":\"greeter\",\"script\":\"scripts/../../x.py\"}"));
	ck_assert(!th_valid(&T, "run_skill_script",
	    "{\"skill\":\"greeter\",\"script\":\"/etc/passwd\"}"));
	r = th_call_past_schema(&T, "run_skill_script", "{\"skill\":\"nope\","
	    "\"script\":\"greet.py\"}");
	ck_assert_str_eq(th_text(r), "There is no skill called 'nope'; the "
	    "tool's description lists the skills offered.");
	json_object_put(r);
}
END_TEST

START_TEST(skill_json_with_nan_or_infinity_stays_plain_text)
{
	static const char *const arg[] = { "nan", "inf" };
	static const char *const out[] = { "{\"v\": NaN}\n",
	    "{\"v\": 1e999}\n" };
	struct json_object *r, *back;
	char args[128], want[128];
	int i;

	for (i = 0; i < 2; i++) {
		(void)snprintf(args, sizeof(args), "{\"skill\":\"greeter\","
		    "\"script\":\"nan.sh\",\"args\":[\"%s\"]}", arg[i]);
		r = call("run_skill_script", args);
		ck_assert_msg(!th_is_error(r), "%s", th_text(r));
		ck_assert_ptr_null(th_sc(r, "v"));
		ck_assert_str_eq(json_object_get_string(th_sc(r, "stdout")),
		    out[i]);
		(void)snprintf(want, sizeof(want), "The script exited with "
		    "status 0.\n--- stdout ---\n%s", out[i]);
		ck_assert_str_eq(th_text(r), want);
		/* the whole result is still JSON a strict reader accepts */
		back = json_tokener_parse(json_object_to_json_string(r));
		ck_assert_ptr_nonnull(back);
		json_object_put(back);
		json_object_put(r);
	}
}
END_TEST

START_TEST(skill_script_runs_with_a_root_owned_workspace)
{
	struct json_object *r;

	if (geteuid() != 0)
		return;	/* only a root server gives the copy away */
	/* a workspace owned by root (main refuses such a --workspace, but
	 * an embedder of the tools may pass one) */
	ck_assert_int_eq(chown(T.ws->path, 0, 0), 0);
	ck_assert_int_eq(chmod(T.ws->path, 0700), 0);
	r = call("run_skill_script", "{\"skill\":\"greeter\","
	    "\"script\":\"plain.sh\",\"args\":[\"x\"]}");
	ck_assert_msg(!th_is_error(r), "%s", th_text(r));
	ck_assert_str_eq(json_object_get_string(th_sc(r, "stdout")),
	    "plain x\n/skill\n1\n");
	json_object_put(r);
}
END_TEST

START_TEST(skill_copy_failure_is_a_fixed_sentence)
{
	struct json_object *r = call("run_skill_script",
	    "{\"skill\":\"bulky\",\"script\":\"run.sh\"}");

	ck_assert(th_is_error(r));
	ck_assert_str_eq(th_text(r), "The script was not run: its skill "
	    "folder could not be copied (it is larger than the copy limits).");
	ck_assert(T.audit.refused && !T.audit.ran);
	json_object_put(r);
}
END_TEST

#define NUL_TEXT(key)	key " contains a NUL character (U+0000); paths, " \
	"names, arguments, environment values and code cannot hold one, so " \
	"nothing was done."

static void
expect_nul(const char *name, const char *args, const char *text)
{
	struct json_object *r = call(name, args);

	ck_assert_msg(th_is_error(r), "%s: not an error: %s", args,
	    th_text(r));
	ck_assert_str_eq(th_text(r), text);
	ck_assert(T.audit.refused && !T.audit.ran);
	json_object_put(r);
}

START_TEST(arguments_with_nul_are_refused_and_stdin_is_whole)
{
	struct json_object *r;

	expect_nul("run_command", "{\"command\":\"echo\",\"args\":"
	    "[\"a\", \"b\\u0000c\"]}", NUL_TEXT("args"));
	expect_nul("run_command", "{\"command\":\"printenv\",\"env\":"
	    "{\"FOO\":\"x\\u0000y\"}}", NUL_TEXT("env"));
	expect_nul("run_code", "{\"language\":\"sh\",\"code\":"
	    "\"echo hi\\u0000rm -rf x\"}", NUL_TEXT("code"));
	expect_nul("run_skill_script", "{\"skill\":\"greeter\","
	    "\"script\":\"plain.sh\",\"args\":[\"x\\u0000\"]}",
	    NUL_TEXT("args"));
	/* stdin is data: every byte reaches the program */
	r = call("run_code", "{\"language\":\"sh\",\"code\":\"wc -c\","
	    "\"stdin\":\"ab\\u0000cd\"}");
	ck_assert_msg(!th_is_error(r), "%s", th_text(r));
	ck_assert_str_eq(json_object_get_string(th_sc(r, "stdout")), "5\n");
	json_object_put(r);
	r = call("run_command", "{\"command\":\"wc\",\"args\":[\"-c\"],"
	    "\"stdin\":\"ab\\u0000cd\"}");
	ck_assert_msg(!th_is_error(r), "%s", th_text(r));
	ck_assert_str_eq(json_object_get_string(th_sc(r, "stdout")), "5\n");
	json_object_put(r);
}
END_TEST

static Suite *
run_suite(void)
{
	Suite *s = suite_create("tools_run");
	TCase *tc = tcase_create("run");

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, run_command_runs_echo_and_reports_output);
	tcase_add_test(tc, run_command_passes_shell_metacharacters_as_data);
	tcase_add_test(tc, run_command_refuses_programs_off_the_allow_list);
	tcase_add_test(tc, run_command_reports_failure_exit_as_error);
	tcase_add_test(tc, run_command_sets_checked_environment);
	tcase_add_test(tc, run_code_runs_each_available_language);
	tcase_add_test(tc, run_code_python_is_isolated_and_reads_stdin);
	tcase_add_test(tc, run_code_warm_python_answers_as_a_cold_one);
	tcase_add_test(tc, run_code_pooled_sandbox_answers_as_a_cold_one);
	tcase_add_test(tc, a_pooled_sandbox_is_never_reused);
	tcase_add_test(tc, a_new_shape_drains_the_old_one);
	tcase_add_test(tc, run_code_c_compile_error_is_reported);
	tcase_add_test(tc, run_code_is_killed_at_the_deadline);
	tcase_add_test(tc, run_code_output_is_capped_and_made_valid_utf8);
	tcase_add_test(tc, run_tools_share_the_workspace_with_file_tools);
	tcase_add_test(tc, run_command_is_busy_when_slots_and_queue_are_full);
	tcase_add_test(tc, run_code_cancelled_call_does_not_run);
	tcase_add_test(tc, concurrent_run_code_calls_each_get_their_own_output);
	tcase_add_test(tc, skills_are_scanned_from_front_matter_and_scripts);
	tcase_add_test(tc, skill_script_json_stdout_becomes_structured_content);
	tcase_add_test(tc, skill_script_exit_2_is_invalid_input);
	tcase_add_test(tc, skill_script_runs_with_an_empty_environment_in_a_copy);
	tcase_add_test(tc, skill_script_never_modifies_the_original_folder);
	tcase_add_test(tc, skill_script_must_be_a_listed_script);
	tcase_add_test(tc, skill_json_with_nan_or_infinity_stays_plain_text);
	tcase_add_test(tc, skill_script_runs_with_a_root_owned_workspace);
	tcase_add_test(tc, skill_copy_failure_is_a_fixed_sentence);
	tcase_add_test(tc, arguments_with_nul_are_refused_and_stdin_is_whole);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr;
	int failed;

	make_skills();
	sr = srunner_create(run_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	(void)workspace_remove_tree(SKILLS);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
