/*
 * mcp-sandbox: argv -> policy -> sandbox context -> tools -> transport. No
 * protocol logic here. Only main() may exit the process; everything it
 * builds is immutable once serving starts.
 */
#include <errno.h>
#include <pthread.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "approval.h"
#include "audit.h"
#include "policy_binds.h"
#include "cmd_check.h"
#include "cmd_exec.h"
#include "dispatch.h"
#include "tasks.h"
#include "egress.h"
#include "log.h"
#include "policy.h"
#include "registry.h"
#include "repl.h"
#include "sandbox.h"
#include "session.h"
#include "slots.h"
#include "tool.h"
#include "transport_http.h"
#include "transport_stdio.h"
#include "version.h"
#include "pool.h"
#include "workspace.h"

#define EXIT_USAGE	2	/* bad flags or values, like most CLIs */

/* getopt_long values: ours below 0x100, policy flags from OPT_POLICY. */
enum {
	OPT_CONFIG = 0x100,
	OPT_PRINT_CONFIG,
	OPT_CHECK,
	OPT_LOG_LEVEL,
	OPT_FIXTURES,
	OPT_CONTENT_ONLY,
	OPT_POLICY = 0x1000,
	OPT_HTTP = 0x2000,	/* HTTP transport flags (http_flags[]) */
};

static const struct option own_opts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "print-config", no_argument, NULL, OPT_PRINT_CONFIG },
	{ "check", no_argument, NULL, OPT_CHECK },
	{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
	{ "content-only", no_argument, NULL, OPT_CONTENT_ONLY },
	/* test-only: the conformance suite's fixture tools; not in --help */
	{ "conformance-fixtures", no_argument, NULL, OPT_FIXTURES },
};
#define N_OWN_OPTS	(sizeof(own_opts) / sizeof(own_opts[0]))

/* A policy flag seen on the command line, applied after --config. */
struct pending_flag {
	const char *name;
	const char *value;
};

struct cli {
	const char *config;
	bool print_config;
	bool check;
	bool fixtures;
	bool content_only;
	struct pending_flag *flags;	/* owned; argc entries at most */
	size_t nflags;
	struct http_config http;	/* --http and its flags */
};

static void
usage(FILE *out)
{
	char left[64];
	size_t i;

	fprintf(out,
	    "usage: mcp-sandbox [options]\n"
	    "       mcp-sandbox exec [limits] -- PROGRAM [ARGS...]\n"
	    "\n"
	    "An MCP server on stdio (newline-delimited JSON-RPC) that offers a "
	    "fixed list of\n"
	    "tools and runs commands and code in a namespace sandbox with no "
	    "network.\n"
	    "\n"
	    "options:\n"
	    "  -h, --help               show this help and exit\n"
	    "  -V, --version            show the version and exit\n"
	    "      --check              report which isolation layers work "
	    "here, and exit\n"
	    "      --config FILE        read the policy from a JSON file\n"
	    "      --print-config       print the effective policy as JSON "
	    "and exit\n"
	    "      --log-level LEVEL    stderr log level: debug, info, warn, "
	    "error, quiet\n"
	    "      --content-only       results without structuredContent, "
	    "tools without\n"
	    "                           outputSchema: for clients that show "
	    "the model only\n"
	    "                           structuredContent (and so drop "
	    "images)\n"
	    "\n"
	    "policy (override the embedded default and --config):\n");
	for (i = 0; policy_flags[i].name != NULL; i++) {
		(void)snprintf(left, sizeof(left), "--%s%s%s",
		    policy_flags[i].name, policy_flags[i].metavar ? " " : "",
		    policy_flags[i].metavar ? policy_flags[i].metavar : "");
		fprintf(out, "      %-22s %s\n", left, policy_flags[i].help);
	}
	/* ---- HTTP transport flags (transport/http_config.c) ---- */
	fprintf(out, "\nStreamable HTTP (instead of stdio):\n");
	for (i = 0; http_flags[i].name != NULL; i++) {
		(void)snprintf(left, sizeof(left), "--%s%s%s",
		    http_flags[i].name, http_flags[i].metavar ? " " : "",
		    http_flags[i].metavar ? http_flags[i].metavar : "");
		fprintf(out, "      %-22s %s\n", left, http_flags[i].help);
	}
	/* ---- end of HTTP transport flags ---- */
	fprintf(out, "\n`mcp-sandbox exec --help` lists the limits of exec.\n");
}

static int
usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* One-line error and exit code 2, for every bad flag or value. */
static int
usage_error(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "mcp-sandbox: %s (try --help)\n", msg);
	return EXIT_USAGE;
}

/* Builds the getopt_long table: our options, then the policy's. */
static struct option *
options_new(void)
{
	struct option *o;
	size_t n = 0, nh = 0, i;

	while (policy_flags[n].name != NULL)
		n++;
	while (http_flags[nh].name != NULL)
		nh++;
	if ((o = calloc(N_OWN_OPTS + n + nh + 1, sizeof(*o))) == NULL)
		return NULL;
	memcpy(o, own_opts, sizeof(own_opts));
	for (i = 0; i < n; i++) {
		o[N_OWN_OPTS + i].name = policy_flags[i].name;
		o[N_OWN_OPTS + i].has_arg = policy_flags[i].has_arg;
		o[N_OWN_OPTS + i].val = OPT_POLICY + (int)i;
	}
	/* ---- HTTP transport flags ---- */
	for (i = 0; i < nh; i++) {
		o[N_OWN_OPTS + n + i].name = http_flags[i].name;
		o[N_OWN_OPTS + n + i].has_arg = http_flags[i].has_arg;
		o[N_OWN_OPTS + n + i].val = OPT_HTTP + (int)i;
	}
	return o;
}

/* Parses argv into cli. Returns -1 to continue, or an exit code. */
static int
parse_args(int argc, char **argv, struct cli *cli)
{
	struct option *opts;
	enum log_level level;
	char err[512];
	int c, rc = -1;

	if ((opts = options_new()) == NULL ||
	    (cli->flags = calloc((size_t)argc, sizeof(*cli->flags))) == NULL) {
		free(opts);
		fprintf(stderr, "mcp-sandbox: out of memory\n");
		return 1;
	}
	http_config_init(&cli->http);
	opterr = 0;
	while (rc < 0 && (c = getopt_long(argc, argv, ":hV", opts,
	    NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			rc = 0;
			break;
		case 'V':
			printf("mcp-sandbox %s\n", MCP_SANDBOX_VERSION);
			rc = 0;
			break;
		case OPT_CONFIG:
			cli->config = optarg;
			break;
		case OPT_PRINT_CONFIG:
			cli->print_config = true;
			break;
		case OPT_CHECK:
			cli->check = true;
			break;
		case OPT_LOG_LEVEL:
			if (log_parse_level(optarg, &level) != 0)
				rc = usage_error("bad --log-level \"%s\": use "
				    "debug, info, warn, error or quiet", optarg);
			else
				log_set_level(level);
			break;
		case OPT_FIXTURES:
			cli->fixtures = true;
			break;
		case OPT_CONTENT_ONLY:
			cli->content_only = true;
			break;
		case ':':
			rc = usage_error("option %s needs a value",
			    argv[optind - 1]);
			break;
		case '?':
			rc = usage_error("unknown option \"%s\"",
			    argv[optind - 1]);
			break;
		default:
			/* ---- HTTP transport flags ---- */
			if (c >= OPT_HTTP) {
				if (http_config_set_flag(&cli->http,
				    http_flags[c - OPT_HTTP].name, optarg, err,
				    sizeof(err)) != 0)
					rc = usage_error("%s", err);
				break;
			}
			if (c >= OPT_POLICY) {
				cli->flags[cli->nflags].name =
				    policy_flags[c - OPT_POLICY].name;
				cli->flags[cli->nflags].value = optarg;
				cli->nflags++;
				break;
			}
			rc = usage_error("unknown option \"%s\"",
			    argv[optind - 1]);
			break;
		}
	}
	if (rc < 0 && optind < argc)
		rc = usage_error("unexpected argument \"%s\"", argv[optind]);
	if (rc < 0 && http_config_check(&cli->http, err, sizeof(err)) != 0)
		rc = usage_error("%s", err);
	free(opts);
	return rc;
}

/* Default policy, then --config, then flags, then resolution. */
static int
build_policy(const struct cli *cli, struct policy **ret)
{
	struct policy *p;
	char err[512];
	size_t i;

	if ((p = policy_new_default(err, sizeof(err))) == NULL) {
		fprintf(stderr, "mcp-sandbox: %s\n", err);
		return 1;
	}
	if (cli->config != NULL &&
	    policy_load_file(p, cli->config, err, sizeof(err)) != 0) {
		fprintf(stderr, "mcp-sandbox: %s\n", err);
		policy_free(p);
		return EXIT_USAGE;
	}
	for (i = 0; i < cli->nflags; i++) {
		if (policy_set_flag(p, cli->flags[i].name, cli->flags[i].value,
		    err, sizeof(err)) != 0) {
			policy_free(p);
			return usage_error("%s", err);
		}
	}
	if (policy_finalize(p, err, sizeof(err)) != 0) {
		fprintf(stderr, "mcp-sandbox: %s\n", err);
		policy_free(p);
		return EXIT_USAGE;
	}
	*ret = p;
	return -1;
}

/*
 * Files the server itself reads or writes with its own rights (the config
 * at the next start, the audit log, the token file) may not lie where
 * sandboxed code can replace them: the user's workspace or an
 * allow_read_write path. 0, or -1 after saying why.
 */
static int
check_host_files(const struct cli *cli, const struct policy *pol)
{
	const struct { const char *what, *path; } files[] = {
		{ "--config", cli->config },
		{ "audit_log", pol->audit_log },
		{ "--token-file", cli->http.token_file },
		{ "--metrics-token-file", cli->http.metrics_token_file },
	};
	char dir[PATH_MAX];
	const char *tmp;
	size_t i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		if (files[i].path == NULL ||
		    binds_sandbox_writable(pol, files[i].path, dir,
		    sizeof(dir)) == NULL)
			continue;
		fprintf(stderr, "mcp-sandbox: %s %s lies in %s, which "
		    "sandboxed code can write: it could replace the file the "
		    "server trusts; keep it outside\n", files[i].what,
		    files[i].path, dir);
		return -1;
	}
	/*
	 * The private parent: what sandboxed code reaches there, it can
	 * rename or swap for a symlink the server's file tools then follow.
	 * TMPDIR as given, even where it is not there yet (then /tmp is
	 * used): a sandbox could make it.
	 */
	tmp = getenv("TMPDIR");
	if (tmp == NULL || tmp[0] != '/')
		tmp = workspace_tmp_base();
	if (binds_sandbox_reachable(pol, tmp, dir, sizeof(dir)) != NULL) {
		fprintf(stderr, "mcp-sandbox: TMPDIR %s lies in %s, which "
		    "sandboxed code can reach: the private parent of fresh "
		    "workspaces and skill copies would be in its reach; set "
		    "TMPDIR outside it\n", tmp, dir);
		return -1;
	}
	return 0;
}

/* The sandbox context's settings from the policy. */
static void
sb_config_from_policy(const struct policy *pol, struct sb_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	/* one empty network namespace per sandbox slot and per warm python,
	 * made once and lent to one run at a time: no per-call netns creation
	 * (~0.6 ms, and as much again torn down in a kernel worker) */
	cfg->netns_pool = pol->limits.max_sandboxes + pol->limits.warm_python +
	    pol->limits.pool_size + pol->limits.max_sessions;
	cfg->cgroup = pol->require_cgroup ? SB_CGROUP_REQUIRED :
	    SB_CGROUP_AUTO;
	cfg->cgroup_parent = pol->cgroup_parent;
	cfg->uid_base = pol->limits.uid_base;
}

/* One line at start: what bounds a sandbox as a whole, or why nothing. */
static void
log_bounds(const struct sb_ctx *sb)
{
	struct sb_bounds b;

	sb_ctx_bounds(sb, &b);
	if (b.cgroup_version == 0)
		log_warn("no cgroup per sandbox (%s): memory and processes are "
		    "bounded per process by rlimits only; fix: %s", b.why,
		    b.fix);
	else
		log_info("a cgroup v%d per sandbox under %s: memory%s, pids%s"
		    "%s; %u stale cgroup(s) of dead servers removed",
		    b.cgroup_version, b.where, b.swap_off ? " (no swap)" : "",
		    b.cpu ? ", cpu" : "", b.cpu ? "" : " (no cpu controller)",
		    b.stale_removed);
}

/* The user's --workspace (or config "workspace"); errors name where it
 * was set. */
static int
open_user_workspace(const struct policy *pol, struct workspace **ws)
{
	char err[512];

	if (workspace_open(pol->workspace, sb_host_root() ? SB_DEFAULT_UID :
	    (uid_t)-1, ws, err, sizeof(err)) == 0)
		return 0;
	log_err("%s: %s", pol->workspace_origin != NULL ?
	    pol->workspace_origin : "workspace", err);
	return -1;
}

/* The default policy's programs this machine lacks: said once at start. */
static void
log_dropped_commands(const struct policy *pol)
{
	char list[1024];	/* names of at most POLICY_MAX_COMMANDS */
	size_t i, n = 0;
	int w;

	if (pol->ndropped == 0)
		return;
	list[0] = '\0';
	for (i = 0; i < pol->ndropped && n < sizeof(list); i++) {
		w = snprintf(list + n, sizeof(list) - n, "%s%s",
		    i > 0 ? ", " : "", pol->dropped[i]);
		if (w < 0)
			break;
		n += (size_t)w;
	}
	log_info("run_command: not on this machine, left out of the default "
	    "list: %s", list);
}

/*
 * The sandbox context and the pool, built on a thread of their own once
 * the server serves (tool.h, struct tool_boot): initialize and tools/list
 * never wait for them, the first sandboxed call does.
 */
struct boot {
	const struct policy *pol;
	const struct toolset *tools;	/* borrowed: built first */
	struct tool_slots *slots;
	struct tool_boot *latch;
	struct sb_ctx *sb;		/* owned: made here */
	struct pool *pool;		/* owned: made here */
	char why[320];			/* no context: why */
	pthread_t thread;
	bool started;
};

static void *
boot_main(void *arg)
{
	struct boot *b = arg;
	struct sb_config cfg;
	struct sb_result err;
	struct tool_prestart ps;
	const char *why;

	/* every client lists the tools first: their build has the cores
	 * before the sandbox's (registry.h, toolset_start) */
	if ((why = toolset_error(b->tools)) != NULL)
		log_err("cannot load the tools: %s; tools/list and tools/call "
		    "answer with why", why);
	memset(&err, 0, sizeof(err));
	sb_config_from_policy(b->pol, &cfg);
	/* a root server: as many kernel uids of their own (sandbox/uids.c),
	 * so per-uid kernel pools (pipe pages, epoll watches, fds in flight)
	 * are not one for all sandboxes */
	cfg.uid_slots = cfg.netns_pool < SB_MAX_UID_SLOTS ? cfg.netns_pool :
	    SB_MAX_UID_SLOTS;
	if (sb_ctx_new(&cfg, &b->sb, &err) != 0) {
		/* fail closed: serve the pure tools, refuse sandboxed ones */
		log_err("sandbox unavailable (%s): sandboxed tools will refuse "
		    "to run; see mcp-sandbox --check", err.message);
		(void)snprintf(b->why, sizeof(b->why), "%s", err.message);
		b->sb = NULL;
	} else {
		log_bounds(b->sb);
	}
	sb_result_fini(&err);
	/* sandboxes built ahead (pool.h), for the shape of the first call */
	b->pool = pool_new(b->sb, b->pol, b->slots);
	pool_prestart(b->pool, &ps);
	tool_boot_done(b->latch, b->sb, &ps, b->sb == NULL ? b->why : NULL);
	return NULL;
}

/* Waits for the builder; then no pooled sandbox is left, nor the context. */
static void
boot_end(struct boot *b)
{
	if (b->started)
		(void)pthread_join(b->thread, NULL);
	b->started = false;
	pool_free(b->pool);
	b->pool = NULL;
	sb_ctx_free(b->sb);
	b->sb = NULL;
}

/* Serves stdio (or HTTP with --http) until EOF or a signal. */
static int
serve_stdio(const struct cli *cli, struct policy *pol)
{
	struct tool_env env = { 0 };
	struct server srv = { 0 };
	struct boot boot = { 0 };
	struct toolset *tools = NULL;
	struct workspace *ws = NULL;
	struct session sess;
	char err[512];
	int rc = 1;

	/* before any thread exists, so every thread inherits the mask */
	if (transport_stdio_block_signals() != 0) {
		log_err("cannot block signals");
		return 1;
	}
	/* before any thread: the private parent, the capped workspaces'
	 * mount namespace (unshare needs a single-threaded process) */
	if (workspace_setup(pol->limits.workspace_mb, pol->limits.workspaces_mb,
	    pol->limits.max_sandboxes) != 0) {
		log_err("cannot make the private parent of workspaces: %s",
		    strerror(errno));
		return 1;
	}
	{
		uint32_t mb;
		const char *why;

		if (workspace_capped(&mb, &why))
			log_info("fresh workspaces: tmpfs of %u MiB each", mb);
		else if (pol->limits.workspace_mb > 0)
			log_warn("fresh workspaces are not size-capped: %s "
			    "(see mcp-sandbox --check)", why);
	}
	log_dropped_commands(pol);
	env.policy = pol;
	env.fixtures = cli->fixtures;
	env.content_only = cli->content_only;
	if ((env.slots = tool_slots_new(pol->limits.max_sandboxes,
	    pol->limits.queue, pol->limits.queue_wait_ms)) == NULL ||
	    (boot.latch = tool_boot_new()) == NULL ||
	    (pol->limits.max_sessions > 0 &&
	    (env.repls = repls_new(pol)) == NULL)) {
		log_err("out of memory");
		goto out;
	}
	boot.pol = pol;
	boot.slots = env.slots;
	env.boot = boot.latch;
	/*
	 * A user's directory is checked now, for both transports; HTTP then
	 * opens it per session (transport_http_run). Otherwise a fresh one
	 * is made at the first call that needs it (session_workspace).
	 */
	if (pol->workspace != NULL && open_user_workspace(pol, &ws) != 0)
		goto out;
	if (cli->http.enabled) {
		workspace_free(ws);	/* a user's: kept */
		ws = NULL;
	}
	if (pol->audit_log != NULL && (srv.audit = audit_open(pol->audit_log,
	    err, sizeof(err))) == NULL) {
		log_err("%s", err);
		goto out;
	}
	/*
	 * Parsing and compiling the schemas is most of a start: a stdio
	 * server answers initialize while a thread does it (tools/list and
	 * calls wait for it); an HTTP server, which serves for long, builds
	 * them before it listens, and a failure stops its start.
	 */
	if (!cli->http.enabled) {
		if (toolset_start(&env, &tools) != MCP_OK) {
			log_err("out of memory");
			goto out;
		}
	} else if (toolset_new(&env, &tools, err, sizeof(err)) != MCP_OK) {
		log_err("cannot load the tools: %s", err);
		goto out;
	}
	srv.tools = tools;
	srv.env = &env;
	boot.tools = tools;
	if ((srv.tasks = tasks_new()) == NULL) {
		log_err("out of memory");
		goto out;
	}
	/* the requestState key is drawn even with no ceiling: cheap, and a
	 * policy that asks nothing never uses it */
	if ((srv.approvals = approvals_new()) == NULL) {
		log_err("cannot draw the approvals key: %s", strerror(errno));
		goto out;
	}
	srv.task_timeout_ms = pol->limits.task_timeout_ms;
	srv.task_ttl_ms = pol->limits.task_ttl_ms;
	srv.task_threshold_ms = pol->limits.task_threshold_ms;
	/*
	 * The sandbox: an HTTP server builds it before it listens (it serves
	 * for long, and a start-up error stays its last word); a stdio
	 * server answers its client meanwhile (initialize, tools/list), once
	 * every check that can stop the start is passed.
	 */
	if (cli->http.enabled)
		(void)boot_main(&boot);
	else if (pthread_create(&boot.thread, NULL, boot_main, &boot) == 0)
		boot.started = true;
	else {
		log_err("cannot start the sandbox's builder");
		goto out;
	}
	/* ---- HTTP transport: serves instead of stdio ---- */
	if (cli->http.enabled) {
		rc = transport_http_run(&srv, &cli->http, pol->workspace,
		    sb_host_root() ? SB_DEFAULT_UID : (uid_t)-1);
		goto out;	/* sessions, their workspaces are gone */
	}
	/* ---- end of HTTP transport ---- */
	if (ws != NULL)
		session_init(&sess, ws->path);
	else
		session_init_lazy(&sess, NULL, sb_host_root() ?
		    SB_DEFAULT_UID : (uid_t)-1);
	log_info("serving %zu tools on stdio; workspace %s",
	    toolset_count(tools), ws != NULL ? ws->path :
	    "fresh at first use");
	rc = transport_stdio_run(&srv, &sess);
	/* the sessions' and pooled sandboxes bind the workspace: gone
	 * before it is */
	repls_free(env.repls);
	env.repls = NULL;
	boot_end(&boot);
	session_fini(&sess);
 out:
	repls_free(env.repls);	/* their sandboxes are the context's */
	boot_end(&boot);	/* its builder reads the toolset */
	tasks_free(srv.tasks);
	approvals_free(srv.approvals);
	toolset_free(tools);
	audit_close(srv.audit);
	workspace_free(ws);
	tool_slots_free(env.slots);
	tool_boot_free(boot.latch);
	return rc;
}

/* --check lines of the server's own layers (workspace/workspace.c). */
static void
check_server_layers(cmd_check_line_fn fn, void *arg)
{
	struct policy *p;
	char err[256];	/* the embedded default never fails */
	uint32_t mb = 0;

	if ((p = policy_new_default(err, sizeof(err))) != NULL) {
		mb = p->limits.workspace_mb;
		policy_free(p);
	}
	workspace_check(mb, fn, arg);
}

/*
 * Every descriptor the host lets the server have: the soft RLIMIT_NOFILE
 * is often 1024 (a desktop client's, a container's default), which three
 * calls' tunnels used up before (issue 25). Nothing of ours uses
 * select(), whose sets end at 1024; sandboxes set their own limit.
 */
static void
raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/*
 * What the policy's tunnels may need at worst against what the server's
 * descriptors give them (egress.h, EGRESS_FD_SHARE), for --check.
 */
static void
print_fd_budget(const struct policy *pol)
{
	struct rlimit rl = { 0 };
	unsigned budget = egress_tunnel_budget();
	uint64_t worst = 0;

	(void)getrlimit(RLIMIT_NOFILE, &rl);
	if (policy_network_enabled(pol))
		worst = (uint64_t)pol->limits.max_sandboxes *
		    pol->egress->max_connections;
	printf("%-8s descriptors: RLIMIT_NOFILE %llu (the hard limit); "
	    "tunnels may hold 1/%u of it: %u tunnels of %u fds", "info",
	    (unsigned long long)rl.rlim_cur, EGRESS_FD_SHARE, budget,
	    EGRESS_FDS_PER_TUNNEL);
	if (!policy_network_enabled(pol))
		printf("; the policy opens none (no network)\n");
	else
		printf("; the policy's worst case %llu (%u sandboxes x "
		    "max_connections %u)%s\n", (unsigned long long)worst,
		    pol->limits.max_sandboxes, pol->egress->max_connections,
		    worst > budget ? ": tunnels past the budget get a 503" :
		    ": fits");
}

/* --check: what the sandboxes built ahead hold while they wait. */
static void
print_pool(const struct policy *pol)
{
	unsigned n = pol->limits.pool_size, py = pol->limits.warm_python;

	if (n + py == 0) {
		printf("%-8s sandboxes built ahead: none (pool_size and "
		    "warm_python 0): every call builds its own\n", "info");
		return;
	}
	printf("%-8s sandboxes built ahead: %u for run_command and run_code, "
	    "%u pythons, for the shape of the last call of each kind; while "
	    "they wait, at most %u descriptors and %u KiB of processes (%u and "
	    "%u each, a python's interpreter on top)\n", "info", n, py,
	    (n + py) * POOL_FDS_EACH, (n + py) * POOL_KIB_EACH, POOL_FDS_EACH,
	    POOL_KIB_EACH);
}

int
main(int argc, char **argv)
{
	struct cli cli = { 0 };
	struct policy *pol = NULL;
	size_t i;
	int rc;

	if (argc > 1 && strcmp(argv[1], "exec") == 0)
		return cmd_exec_main(argc - 1, argv + 1);
	if ((rc = parse_args(argc, argv, &cli)) >= 0)
		goto out;
	if ((rc = build_policy(&cli, &pol)) >= 0)
		goto out;
	raise_nofile();
	if (cli.check) {
		struct sb_config cfg = { 0 };
		char line[2048];	/* the rules, one line; cut if longer */

		/* what the policy does with the network first: the verdict
		 * stays the last line, which scripts and tests read */
		policy_network_summary(pol, line, sizeof(line));
		printf("%-8s egress policy: %s\n", "info", line);
		policy_ask_summary(pol, line, sizeof(line));
		printf("%-8s approvals: %s\n", "info", line);
		policy_secret_summary(pol, line, sizeof(line));
		printf("%-8s secrets: %s\n", "info", line);
		print_fd_budget(pol);
		print_pool(pol);
		(void)fflush(stdout);	/* the probes fork */
		/* the policy's cgroup settings decide what --check requires */
		sb_config_from_policy(pol, &cfg);
		rc = cmd_check_run(&cfg, check_server_layers);
		goto out;
	}
	if (cli.print_config) {
		policy_print(pol, stdout);
		rc = 0;
		goto out;
	}
	for (i = 0; i < pol->nnotes; i++)
		log_warn("policy: %s", pol->notes[i]);
	if (check_host_files(&cli, pol) != 0) {
		rc = EXIT_USAGE;
		goto out;
	}
	rc = serve_stdio(&cli, pol);
 out:
	policy_free(pol);
	free(cli.flags);
	return rc;
}
