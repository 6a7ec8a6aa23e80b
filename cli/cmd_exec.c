/*
 * `mcp-sandbox exec [limits] -- PROGRAM ARGS`: one sandboxed run from the
 * shell. Flags map one to one onto struct sb_limits and struct sb_request;
 * the environment is empty but for sb_default_env and --env. The program's
 * captured output goes to this process's stdout and stderr (a CLI mode).
 * Killing this process kills the sandbox with it (die-with-parent).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd_exec.h"
#include "sandbox.h"

/* --env and --bind may each be given this many times. */
#define EXEC_MAX_ENV		64
#define EXEC_MAX_BINDS		16
/* --protect may be given this many times (the sandbox's own bound). */
#define EXEC_MAX_PROTECT	8
/* --stdin reads at most this much of our stdin. */
#define EXEC_MAX_STDIN		(16 << 20)
/* Where a bare PROGRAM name is looked up (inside == host for these). */
static const char *const exec_path[] = { "/usr/local/bin", "/usr/bin", "/bin" };

enum {
	EXIT_BAD_FLAGS = 2,
	EXIT_TIMEOUT = 124,	/* as timeout(1) */
	EXIT_NOT_RUN = 125,	/* the sandbox could not be built */
	EXIT_SIGNAL_BASE = 128,
};

struct exec_opts {
	struct sb_config cfg;
	struct sb_request req;
	const char *env[EXEC_MAX_ENV + 1];
	size_t nenv;
	struct sb_bind binds[EXEC_MAX_BINDS];
	const char *protect[EXEC_MAX_PROTECT + 1];
	size_t nprotect;
	bool protect_given;
	char *bind_copies[EXEC_MAX_BINDS];
	bool read_stdin;
	bool verbose;
	char program[PATH_MAX];
};

static int
bad(const char *msg, const char *arg)
{
	fprintf(stderr, "mcp-sandbox exec: %s%s%s (try mcp-sandbox exec "
	    "--help)\n", msg, arg ? ": " : "", arg ? arg : "");
	return -1;
}

static int
parse_u64(const char *s, uint64_t max, uint64_t *ret)
{
	unsigned long long v;
	char *end;

	errno = 0;
	if (s[0] < '0' || s[0] > '9')
		return -1;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v > max)
		return -1;
	*ret = v;
	return 0;
}

static void
usage_line(FILE *out)
{
	fprintf(out, "usage: mcp-sandbox exec [--timeout MS] [--cpu S] "
	    "[--memory BYTES] [--memory-total BYTES] [--fsize BYTES] "
	    "[--nofile N] [--nproc N] "
	    "[--tmp BYTES] [--stdout-cap BYTES] [--stderr-cap BYTES] "
	    "[--workspace DIR] [--read-only] [--protect NAME] [--no-protect] "
	    "[--bind HOST:INSIDE] [--env K=V] "
	    "[--stdin] [--netns-pool N] [--verbose] -- PROGRAM [ARGS...]\n");
}

/* Every flag of exec, with its meaning and default (sb_limits_default). */
static void
exec_help(FILE *out)
{
	struct sb_limits d;

	sb_limits_default(&d);
	usage_line(out);
	fprintf(out, "\n"
	    "Runs PROGRAM once in the sandbox the server uses for its tools "
	    "and exits with\n"
	    "its exit code. PROGRAM is an absolute path or a name looked up "
	    "in\n"
	    "/usr/local/bin:/usr/bin:/bin; the environment is only PATH, LANG, "
	    "HOME=/tmp,\n"
	    "TMPDIR=/tmp and --env. Sizes are in bytes, times in ms (--cpu in "
	    "seconds).\n"
	    "\n"
	    "limits (default in brackets):\n"
	    "  --timeout MS        deadline; then the sandbox's pid namespace, "
	    "and every\n"
	    "                      process in it, is killed [%u]\n"
	    "  --cpu S             CPU seconds per process (RLIMIT_CPU) [%u]\n"
	    "  --memory BYTES      address space per process (RLIMIT_AS) "
	    "[%llu]\n"
	    "  --memory-total BYTES\n"
	    "                      memory of the whole run (its cgroup, where "
	    "one can be had:\n"
	    "                      shm, memfd and tmpfs pages too) [--memory]\n"
	    "  --fsize BYTES       largest file a process may write "
	    "(RLIMIT_FSIZE) [%llu]\n"
	    "  --nofile N          open files per process (RLIMIT_NOFILE) "
	    "[%u]\n"
	    "  --nproc N           processes in the sandbox (RLIMIT_NPROC) "
	    "[%u]\n"
	    "  --tmp BYTES         size of the sandbox's own /tmp (a tmpfs) "
	    "[%llu]\n"
	    "  --stdout-cap BYTES  stdout kept; the rest is counted and said "
	    "truncated [%zu]\n"
	    "  --stderr-cap BYTES  stderr kept, likewise [%zu]\n"
	    "\n"
	    "files and input:\n"
	    "  --workspace DIR     bind DIR read-write at /workspace and start "
	    "there [none:\n"
	    "                      the program starts in its /tmp]\n"
	    "  --read-only         bind the workspace read-only\n"
	    "  --protect NAME      protect NAME of the workspace (.git, .hg: "
	    "what runs code\n"
	    "                      read-only, what the run makes there moved "
	    "aside; other\n"
	    "                      names read-only whole); up to %d times "
	    "[.git and .hg]\n"
	    "  --no-protect        protect nothing of the workspace\n"
	    "  --bind HOST[:IN]    also bind HOST read-only at IN (default: "
	    "the same path);\n"
	    "                      up to %d times\n"
	    "  --env NAME=VALUE    add a variable to the environment; up to "
	    "%d times\n"
	    "  --stdin             feed this process's stdin to PROGRAM (up to "
	    "%d bytes);\n"
	    "                      without it PROGRAM's stdin is empty\n"
	    "\n"
	    "other:\n"
	    "  --netns-pool N      empty network namespaces made ahead (0..64) "
	    "[0]\n"
	    "  --verbose           after the run, print exit status, wall and "
	    "CPU time and\n"
	    "                      peak memory to stderr\n"
	    "  --help              show this help and exit\n"
	    "\n"
	    "exit status: PROGRAM's own; 128+N when it was killed by signal "
	    "N; 124 when the\n"
	    "deadline killed it (stderr says so); 125 when nothing ran (the "
	    "sandbox could\n"
	    "not be built: see mcp-sandbox --check); 2 for bad flags.\n",
	    d.wall_ms, d.cpu_s, (unsigned long long)d.as_bytes,
	    (unsigned long long)d.fsize_bytes, d.nofile, d.nproc,
	    (unsigned long long)d.tmp_bytes, d.stdout_cap, d.stderr_cap,
	    EXEC_MAX_PROTECT, EXEC_MAX_BINDS, EXEC_MAX_ENV, EXEC_MAX_STDIN);
}

static int
set_limit(struct exec_opts *o, int opt, const char *arg)
{
	struct sb_limits *l = &o->req.limits;
	uint64_t v;

	if (parse_u64(arg, UINT32_MAX * 1024ULL * 1024ULL, &v) < 0 ||
	    (v == 0 && opt != 'n'))
		return bad("not a positive number", arg);
	switch (opt) {
	case 't': if (v > UINT32_MAX) return bad("too large", arg);
		l->wall_ms = (uint32_t)v; break;
	case 'c': if (v > UINT32_MAX) return bad("too large", arg);
		l->cpu_s = (uint32_t)v; break;
	case 'm': l->as_bytes = v; break;
	case 'M': l->memory_bytes = v; break;
	case 'f': l->fsize_bytes = v; break;
	case 'o': if (v > UINT32_MAX) return bad("too large", arg);
		l->nofile = (uint32_t)v; break;
	case 'p': if (v > UINT32_MAX) return bad("too large", arg);
		l->nproc = (uint32_t)v; break;
	case 'T': l->tmp_bytes = v; break;
	case '1': l->stdout_cap = (size_t)v; break;
	case '2': l->stderr_cap = (size_t)v; break;
	case 'n': if (v > 64) return bad("netns pool too large", arg);
		o->cfg.netns_pool = (unsigned)v; break;
	}
	return 0;
}

static int
add_bind(struct exec_opts *o, const char *arg)
{
	char *copy, *colon;
	size_t n = o->req.nbinds;

	if (n >= EXEC_MAX_BINDS)
		return bad("too many --bind", arg);
	if ((copy = strdup(arg)) == NULL)
		return bad("out of memory", NULL);
	o->bind_copies[n] = copy;
	if ((colon = strchr(copy, ':')) == NULL) {
		o->binds[n].host_path = copy;
		o->binds[n].sandbox_path = copy;
	} else {
		*colon = '\0';
		o->binds[n].host_path = copy;
		o->binds[n].sandbox_path = colon + 1;
	}
	o->req.nbinds = n + 1;
	return 0;
}

static int
parse(struct exec_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "memory", required_argument, NULL, 'm' },
		{ "memory-total", required_argument, NULL, 'M' },
		{ "fsize", required_argument, NULL, 'f' },
		{ "nofile", required_argument, NULL, 'o' },
		{ "nproc", required_argument, NULL, 'p' },
		{ "tmp", required_argument, NULL, 'T' },
		{ "stdout-cap", required_argument, NULL, '1' },
		{ "stderr-cap", required_argument, NULL, '2' },
		{ "netns-pool", required_argument, NULL, 'n' },
		{ "workspace", required_argument, NULL, 'w' },
		{ "read-only", no_argument, NULL, 'r' },
		{ "protect", required_argument, NULL, 'P' },
		{ "no-protect", no_argument, NULL, 'N' },
		{ "bind", required_argument, NULL, 'b' },
		{ "env", required_argument, NULL, 'e' },
		{ "stdin", no_argument, NULL, 'i' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	sb_limits_default(&o->req.limits);
	o->req.workspace_writable = true;
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
		switch (opt) {
		case 'w':
			o->req.workspace_host = optarg;
			break;
		case 'r':
			o->req.workspace_writable = false;
			break;
		case 'P':
			if (o->nprotect >= EXEC_MAX_PROTECT)
				return bad("too many --protect", optarg);
			o->protect[o->nprotect++] = optarg;
			o->protect_given = true;
			break;
		case 'N':
			o->protect_given = true;
			break;
		case 'b':
			if (add_bind(o, optarg) < 0)
				return -1;
			break;
		case 'e':
			if (o->nenv >= EXEC_MAX_ENV || strchr(optarg, '=') ==
			    NULL || optarg[0] == '=')
				return bad("bad or too many --env", optarg);
			o->env[o->nenv++] = optarg;
			break;
		case 'i':
			o->read_stdin = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			exec_help(stdout);
			return -2;	/* done: exit 0 */
		case '?':
			return bad("unknown or incomplete flag",
			    argv[optind - 1]);
		default:
			if (set_limit(o, opt, optarg) < 0)
				return -1;
		}
	}
	if (optind >= argc || strcmp(argv[optind - 1], "--") != 0)
		return bad("expected -- PROGRAM [ARGS...]", NULL);
	/* the workspace's .git (...) read-only unless told otherwise */
	o->protect[o->nprotect] = NULL;
	o->req.workspace_protect = o->protect_given ? o->protect :
	    sb_default_protect;
	return optind;
}

/* A bare name is looked up in the system dirs the sandbox shows. */
static int
resolve_program(struct exec_opts *o, const char *name)
{
	size_t i;

	if (name[0] == '/') {
		if (strlen(name) >= sizeof(o->program))
			return bad("program path too long", name);
		strcpy(o->program, name);
		return 0;
	}
	if (strchr(name, '/') != NULL)
		return bad("PROGRAM must be absolute or a bare name", name);
	for (i = 0; i < sizeof(exec_path) / sizeof(exec_path[0]); i++) {
		(void)snprintf(o->program, sizeof(o->program), "%s/%s",
		    exec_path[i], name);
		if (access(o->program, X_OK) == 0)
			return 0;
	}
	return bad("program not found in /usr/local/bin:/usr/bin:/bin", name);
}

static char *
slurp_stdin(size_t *len)
{
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap), *nb;
	ssize_t r;

	while (buf != NULL) {
		if (n == cap) {
			if (cap >= EXEC_MAX_STDIN) {
				free(buf);
				return NULL;
			}
			cap *= 2;
			if ((nb = realloc(buf, cap)) == NULL) {
				free(buf);
				return NULL;
			}
			buf = nb;
		}
		r = read(0, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(buf);
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*len = n;
	return buf;
}

static void
write_all(FILE *f, const struct sb_output *o)
{
	if (o->len > 0)
		(void)fwrite(o->data, 1, o->len, f);
	if (o->truncated)
		fprintf(stderr, "[mcp-sandbox: %s truncated: %llu of %llu "
		    "bytes kept]\n", f == stdout ? "stdout" : "stderr",
		    (unsigned long long)o->len, (unsigned long long)o->total);
}

int
cmd_exec_main(int argc, char **argv)
{
	struct exec_opts *o;
	struct sb_ctx *ctx = NULL;
	struct sb_result res;
	char *in = NULL;
	size_t i;
	int first, code = EXIT_NOT_RUN;

	if ((o = calloc(1, sizeof(*o))) == NULL)
		return EXIT_NOT_RUN;
	if ((first = parse(o, argc, argv)) == -2) {
		code = 0;	/* --help */
		goto out;
	}
	if (first < 0 || resolve_program(o, argv[first]) < 0) {
		code = EXIT_BAD_FLAGS;
		goto out;
	}
	o->req.program = o->program;
	o->req.argv = (const char *const *)&argv[first];
	if (o->nenv > 0) {
		o->env[o->nenv] = NULL;
		o->req.envp = o->env;
	}
	o->req.binds = o->binds;
	if (o->read_stdin) {
		if ((in = slurp_stdin(&o->req.stdin_len)) == NULL) {
			fprintf(stderr, "mcp-sandbox exec: cannot read stdin "
			    "(over %d bytes?)\n", EXEC_MAX_STDIN);
			goto out;
		}
		o->req.stdin_data = in;
	}
	o->cfg.one_run = true;	/* its context serves this run alone */
	if (sb_ctx_new(&o->cfg, &ctx, &res) < 0) {
		fprintf(stderr, "mcp-sandbox exec: not run: %s\n", res.message);
		goto out;
	}
	if (sb_run(ctx, &o->req, NULL, &res) < 0) {
		fprintf(stderr, "mcp-sandbox exec: not run: %s\n", res.message);
		sb_result_fini(&res);
		goto out;
	}
	write_all(stdout, &res.out);
	(void)fflush(stdout);
	write_all(stderr, &res.err_out);
	if (res.timed_out) {
		fprintf(stderr, "mcp-sandbox exec: the deadline of %u ms was "
		    "reached: the sandbox was killed with everything in it "
		    "(exit %d)\n", o->req.limits.wall_ms, EXIT_TIMEOUT);
		code = EXIT_TIMEOUT;
	} else if (res.exited)
		code = res.exit_code;
	else
		code = EXIT_SIGNAL_BASE + res.signal;
	if (o->verbose)
		fprintf(stderr, "[mcp-sandbox: %s %d%s%s, %llu us, cpu %llu us, "
		    "peak rss <= %llu KiB]\n", res.exited ? "exit" : "signal",
		    res.exited ? res.exit_code : res.signal,
		    res.timed_out ? ", timed out" : "",
		    res.cancelled ? ", cancelled" : "",
		    (unsigned long long)res.duration_us,
		    (unsigned long long)res.cpu_us,
		    (unsigned long long)(res.peak_rss_bytes / 1024));
	if (o->verbose && res.cgroup)
		fprintf(stderr, "[mcp-sandbox: cgroup: memory peak %llu KiB of "
		    "%llu KiB, %u killed at the limit; %llu forks refused at "
		    "%u processes]\n",
		    (unsigned long long)(res.memory_peak_bytes / 1024),
		    (unsigned long long)(res.memory_limit_bytes / 1024),
		    res.oom_kills, (unsigned long long)res.forks_refused,
		    res.pids_limit);
	if (res.oom)
		fprintf(stderr, "mcp-sandbox exec: the run reached its memory "
		    "limit of %llu MiB\n",
		    (unsigned long long)(res.memory_limit_bytes >> 20));
	if (res.protect_moved[0] != '\0')
		fprintf(stderr, "mcp-sandbox exec: protected names appeared in "
		    "the workspace: %s (--protect, --no-protect)\n",
		    res.protect_moved);
	if (res.forks_refused > 0)
		fprintf(stderr, "mcp-sandbox exec: the run reached its process "
		    "limit of %u (%llu forks refused)\n", res.pids_limit,
		    (unsigned long long)res.forks_refused);
	sb_result_fini(&res);
 out:
	sb_ctx_free(ctx);
	free(in);
	for (i = 0; i < EXEC_MAX_BINDS; i++)
		free(o->bind_copies[i]);
	free(o);
	return code;
}
