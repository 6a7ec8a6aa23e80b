/*
 * sandbox: run one program under full isolation and report what happened.
 * The whole interface of mcp_sandbox. It trusts its caller (tools/) for the
 * program, argv and envp, and trusts nothing the program does. It never
 * writes to stdout or stderr, never links json-c, and never runs a program
 * with a layer missing: sb_run() fails closed with the stage that broke.
 */
#ifndef SANDBOX_H
#define SANDBOX_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The kernel uid/gid a root server runs sandboxes as: the overflow "nobody". */
#define SB_DEFAULT_UID		65534
#define SB_DEFAULT_GID		65534
/* Where the workspace appears inside, and the program's cwd. */
#define SB_DEFAULT_WORKSPACE	"/workspace"
/* Default output caps: what a model can usefully read back in one result. */
#define SB_DEFAULT_OUTPUT_CAP	8000
/*
 * The defaults of struct sb_limits, each named here once: what a run gets
 * for a zero field (sb_limits_default(), `mcp-sandbox exec`). The server
 * sets every one of them but nofile from its policy, whose own defaults
 * are policy/default-policy.json's "limits".
 */
#define SB_DEFAULT_WALL_MS	(10 * 1000)	/* a command, not a service */
#define SB_DEFAULT_CPU_S	10		/* no more than the wall time */
#define SB_DEFAULT_AS_BYTES	(4ULL << 30)	/* node reserves a lot */
#define SB_DEFAULT_FSIZE_BYTES	(64ULL << 20)	/* the workspace is host disk */
#define SB_DEFAULT_NOFILE	256		/* ample for one program */
#define SB_DEFAULT_NPROC	64		/* a build, not a fork bomb */
#define SB_DEFAULT_TMP_BYTES	(64ULL << 20)	/* tmpfs: it is memory */
/*
 * The most sb_limits.nproc may be: the run's pids.max is it plus the init,
 * and the kernel takes no pids.max above PID_MAX_LIMIT (4194304 on 64-bit,
 * the most pids there can be); more is refused at the request (EINVAL),
 * not wrapped or failed at the cgroup stage.
 */
#define SB_MAX_NPROC		4194303U

/* Every step of building a sandbox; a failed run names exactly one. */
enum sb_stage {
	SB_STAGE_NONE = 0,	/* no failure */
	SB_STAGE_REQUEST,	/* request refused before anything was built */
	SB_STAGE_RESOURCES,	/* parent: pipes, memfd, memory */
	SB_STAGE_NETNS,		/* joining or creating the network namespace */
	SB_STAGE_CGROUP,	/* the run's cgroup: made, limited, joined */
	SB_STAGE_CLONE,		/* clone() with the user/mount/pid/... namespaces */
	SB_STAGE_USERNS_MAP,	/* setgroups, uid_map, gid_map */
	SB_STAGE_CREDENTIALS,	/* setresgid/setresuid to the sandbox ids */
	SB_STAGE_NESTED_USERNS,	/* user.max_user_namespaces = 0 inside */
	SB_STAGE_MOUNTS,	/* private propagation, tmpfs root, binds */
	SB_STAGE_PROC,		/* fresh procfs */
	SB_STAGE_DEV,		/* minimal /dev */
	SB_STAGE_PIVOT,		/* pivot_root and detaching the old root */
	SB_STAGE_HOSTNAME,	/* sethostname in the uts namespace */
	SB_STAGE_INIT,		/* the pid-1 reaper: fork, or died unexpectedly */
	SB_STAGE_SESSION,	/* setsid, stdio */
	SB_STAGE_RLIMITS,	/* setrlimit */
	SB_STAGE_CAPS,		/* dropping every capability */
	SB_STAGE_NO_NEW_PRIVS,	/* PR_SET_NO_NEW_PRIVS */
	SB_STAGE_PDEATHSIG,	/* die with the parent */
	SB_STAGE_FDS,		/* close every fd but stdio */
	SB_STAGE_LANDLOCK,	/* Landlock ruleset */
	SB_STAGE_SECCOMP,	/* loading the seccomp filter */
	SB_STAGE_EXEC,		/* execve of the program */
	SB_STAGE_WAIT,		/* parent: poll, read, wait */
	SB_STAGE_IPC,		/* the ipc namespace and its limits */
	SB_STAGE_UIDS,		/* the per-run uid range (root servers) */
	SB_STAGE_COUNT
};

/*
 * A root server's per-slot kernel uids (sb_config.uid_slots): slot i runs
 * as base + i, so that per-uid kernel pools (pipe pages, epoll watches,
 * fds in flight) are not one for all sandboxes. The default range starts
 * here, just above systemd-nspawn's container range (0x80000-0x6fffffff)
 * and below systemd's foreign range (0x7ffe0000), which no distribution
 * hands out: blocks of 64, one per server on the host (16384 uids in all).
 * sb_ctx_new() takes one no other server holds; it does not look whether
 * the host uses it (nothing can tell): a host that does names another
 * range (sb_config.uid_base).
 */
#define SB_SLOT_UID_BASE	0x70000000u
/* The most sb_config.uid_slots may be: one block; more runs share uid. */
#define SB_MAX_UID_SLOTS	64

/*
 * Whether runs get a cgroup of their own (cgroup.c). AUTO: where one can
 * be had, else rlimits only (sb_ctx_bounds() says why); REQUIRED: no
 * cgroup is an error of sb_ctx_new() (fail closed); OFF: rlimits only.
 */
enum sb_cgroup_mode {
	SB_CGROUP_AUTO = 0,
	SB_CGROUP_REQUIRED,
	SB_CGROUP_OFF,
};

/* Server-wide settings, read once by sb_ctx_new(). Zero means default. */
struct sb_config {
	uid_t uid;		/* kernel uid when the server is root (65534) */
	gid_t gid;		/* kernel gid when the server is root (65534) */
	/*
	 * Root only: this many runs at once get a kernel uid of their own
	 * (uid_base + i; the workspace is mounted id-mapped so that its
	 * files stay owned by uid on disk); the rest, and every run of an
	 * unprivileged server, run as uid. 0: none.
	 */
	unsigned uid_slots;
	/*
	 * The first of them, a range the host leaves to the server; another
	 * server holding a uid of it fails sb_ctx_new(). 0: a free block of
	 * the default range (SB_SLOT_UID_BASE).
	 */
	uid_t uid_base;
	unsigned netns_pool;	/* pre-created empty netns (0: a fresh one per run) */
	const char *staging;	/* host dir the new root is built on ("/tmp") */
	enum sb_cgroup_mode cgroup;
	/*
	 * cgroup v2: the delegated directory the server works in, absolute
	 * under /sys/fs/cgroup (NULL: the server's own cgroup, when it is
	 * delegated or a cgroup namespace's root). Ignored on cgroup v1,
	 * where runs always nest under the server's own cgroups.
	 */
	const char *cgroup_parent;
	/*
	 * The sandbox's init program, mcp-sandbox-init (NULL: installed
	 * beside the executable, see ctx.c).
	 */
	const char *init_path;
	/*
	 * The context serves one run (`mcp-sandbox exec`): the init is
	 * exec'd from the fd checked at sb_ctx_new(), not from a sealed
	 * copy (which a long-lived context needs: a file a later run could
	 * rewrite in place, see ctx.c), saving the copy's ~0.7 ms.
	 */
	bool one_run;
};

/*
 * Built once at server start: compiled seccomp program, netns pool, cached
 * probes and host fds. sb_run() may be called on it from several threads at
 * once. Opaque.
 */
struct sb_ctx;

/* A bind of a host path (file or directory) into the sandbox. */
struct sb_bind {
	const char *host_path;		/* absolute, no symlinks in it */
	const char *sandbox_path;	/* absolute, normalised, outside reserved dirs */
	bool writable;			/* read-write (a directory: Landlock too) */
};

/*
 * Resource limits of one run. Zero means the SB_DEFAULT_ named. Where the
 * run has a cgroup (sb_result.cgroup), memory_bytes and nproc are totals
 * of the whole run, whatever its processes do.
 */
struct sb_limits {
	uint32_t wall_ms;	/* deadline; then the whole pid namespace dies
				 * (SB_DEFAULT_WALL_MS) */
	uint32_t cpu_s;		/* RLIMIT_CPU per process (SB_DEFAULT_CPU_S) */
	uint64_t as_bytes;	/* RLIMIT_AS per process (SB_DEFAULT_AS_BYTES) */
	/* cgroup: memory of the whole run, page cache, shm, memfd and tmpfs
	 * pages included, swap off (as_bytes) */
	uint64_t memory_bytes;
	uint64_t fsize_bytes;	/* RLIMIT_FSIZE (SB_DEFAULT_FSIZE_BYTES) */
	uint32_t nofile;	/* RLIMIT_NOFILE (SB_DEFAULT_NOFILE) */
	/* processes and threads of the program: cgroup pids.max (the init
	 * added); also RLIMIT_NPROC, per sandbox userns (SB_DEFAULT_NPROC;
	 * at most SB_MAX_NPROC) */
	uint32_t nproc;
	uint64_t tmp_bytes;	/* size of the /tmp tmpfs (SB_DEFAULT_TMP_BYTES) */
	size_t stdout_cap;	/* bytes kept of stdout (SB_DEFAULT_OUTPUT_CAP) */
	size_t stderr_cap;	/* bytes kept of stderr (SB_DEFAULT_OUTPUT_CAP) */
	/*
	 * For sb_start(): the sandbox starts SCHED_IDLE, its session (the
	 * kernel's autogroup, where there is one) at nice 19, so that getting
	 * ready yields at once to any other work, and sb_finish() gives the
	 * program the normal policy and weight back when its call comes. Only
	 * when the launcher runs as root (leaving SCHED_IDLE needs
	 * CAP_SYS_NICE); else ignored.
	 */
	bool start_low;
};

/*
 * Network. None: an empty netns of its own, loopback down. Proxy: the
 * same empty netns with only loopback up, and the sandbox's init
 * listening on 127.0.0.1:SB_PROXY_PORT in it before the program starts;
 * that listening socket is handed to req->net_listener (outside, in the
 * server), and the program may connect (Landlock, where it has network
 * rules) to that port only. Nothing else leaves the namespace.
 */
enum sb_network {
	SB_NET_NONE = 0,
	SB_NET_PROXY,
};

/* The proxy's port inside a SB_NET_PROXY sandbox (squid's, by habit). */
#define SB_PROXY_PORT		3128

/*
 * What a SB_NET_PROXY run tells its caller about the listening socket the
 * sandbox's init made (lfd: non-blocking, borrowed, it stays the
 * sandbox's):
 *   LISTENING  from the launching thread, before the program runs; a
 *              negative return fails the run (the program never starts);
 *   READY      from the supervising thread (sb_run's, sb_finish's), each
 *              time a connection waits: accept what is there, never block;
 *              a positive return (the caller cannot take what waits, e.g.
 *              out of fds) is how many ms the socket is left unpolled,
 *              at most SB_NET_MAX_PAUSE_MS, so the run does not spin;
 *   CLOSING    once the sandbox is gone, before the socket is closed and
 *              its netns goes back to the pool: stop using it and every
 *              connection accepted on it, there and then (a pooled
 *              netns's next run listens on the same port).
 * So no thread of the caller's waits on the socket: the run's own poll
 * does. Before sb_finish() (a started run), connections wait in the
 * socket's backlog.
 */
/*
 * The longest READY pause taken: a listener's caller cannot stall its
 * connections for longer (a program's connect waits in the backlog).
 */
#define SB_NET_MAX_PAUSE_MS	1000
enum sb_net_event {
	SB_NET_LISTENING,
	SB_NET_READY,
	SB_NET_CLOSING,
};
typedef int (*sb_listener_fn)(void *arg, int lfd, enum sb_net_event ev);

/*
 * Progress callback, called from sb_run()'s own thread at most every
 * progress_ms with the elapsed time and the output captured so far
 * (borrowed, for the call only).
 */
struct sb_output;
typedef void (*sb_progress_fn)(void *arg, uint64_t elapsed_ms,
    const struct sb_output *out, const struct sb_output *err);

/* One run. Everything is borrowed for the duration of sb_run(). */
struct sb_request {
	const char *program;		/* absolute path as seen inside */
	const char *const *argv;	/* NULL-terminated; argv[0] given by caller */
	const char *const *envp;	/* NULL-terminated; NULL: sb_default_env */
	const void *stdin_data;		/* may be NULL when stdin_len == 0 (EOF) */
	size_t stdin_len;
	const char *workspace_host;	/* absolute host dir, or NULL for none */
	const char *workspace_path;	/* inside; NULL: SB_DEFAULT_WORKSPACE */
	bool workspace_writable;
	/*
	 * Names in a writable workspace's top directory, NULL-terminated, or
	 * NULL: what in them runs code on the host at the owner's next
	 * command is read-only inside (a .git dir's config, config.worktree,
	 * commondir, hooks, info, also of its submodules and worktrees; a .hg
	 * dir's hgrc, hgrc-not-shared, sharedpath; anything else whole). One
	 * normal component each; a symlink there fails the request.
	 */
	const char *const *workspace_protect;
	const struct sb_bind *binds;	/* extra binds, read-only by default */
	size_t nbinds;
	struct sb_limits limits;
	enum sb_network network;
	sb_listener_fn net_listener;	/* SB_NET_PROXY: required */
	void *net_arg;
	sb_progress_fn progress;	/* optional */
	void *progress_arg;
	uint32_t progress_ms;		/* minimum interval (0: 1000 ms) */
	/*
	 * For sb_start(): a sandbox built ahead of its call. Everything is
	 * built and every layer applied, then the program's process waits
	 * for what sb_finish()'s request names (program, argv, envp, and a
	 * cpu_s no higher than this one's): program and argv here are
	 * ignored. See sb_finish() for the shape the call must match.
	 */
	bool deferred;
};

/*
 * Fired from any thread (or a signal handler) to kill a run at once. One
 * sb_cancel serves one run at a time; sb_cancel_init() before, _fini() after.
 */
struct sb_cancel {
	int efd;		/* eventfd the run polls; owned */
	atomic_bool fired;
};

/* Captured output of one stream. data is malloc'd, owned by the result. */
struct sb_output {
	char *data;		/* NUL-terminated for convenience; len bytes */
	size_t len;		/* bytes kept, <= cap */
	size_t cap;		/* fixed at creation */
	uint64_t total;		/* bytes the program wrote, kept or not */
	bool truncated;		/* total > len */
};

struct sb_result {
	/* Set when sb_run() returns < 0: nothing ran. */
	enum sb_stage failed_stage;
	int err;			/* errno of the failed step */
	char message[320];		/* layer, error and likely cause */

	/* Set when sb_run() returns 0. */
	bool exited;			/* exit_code is valid */
	int exit_code;
	int signal;			/* killing signal, 0 if exited */
	bool timed_out;			/* killed at the wall deadline */
	bool cancelled;			/* killed by sb_cancel_fire() */
	/* sb_turn(): the turn's deadline or cancel sent SIGINT */
	bool interrupted;
	struct sb_output out;
	struct sb_output err_out;
	uint64_t duration_us;		/* all of sb_run(): plan, launch, run, reap */
	uint64_t peak_rss_bytes;	/* 0 if not measurable; see sb_run() */
	uint64_t cpu_us;		/* user + system time of the whole tree */
	/* The run's cgroup, when it had one (cgroup is then true). */
	bool cgroup;
	uint64_t memory_limit_bytes;	/* memory_bytes as the cgroup held it */
	uint64_t memory_peak_bytes;	/* the cgroup's high-water mark, 0: unknown */
	uint32_t oom_kills;		/* processes killed at the memory limit */
	bool oom;			/* it reached the limit and was ended */
	uint32_t pids_limit;		/* nproc (pids.max less the init) */
	uint64_t forks_refused;		/* forks refused at pids.max */
	/*
	 * Protected paths (workspace_protect) that named something at the
	 * run's end that they did not at its start: moved aside on the host
	 * so that git or hg there never reads what a sandbox wrote. "PATH
	 * moved to PATH.from-sandbox-<16 hex>" or "PATH could not be moved
	 * aside (reason)", joined by "; "; empty: none.
	 */
	char protect_moved[400];
};

/* The environment used when a request gives none. */
extern const char *const sb_default_env[];
/* The workspace names `mcp-sandbox exec` protects by default (.git, .hg). */
extern const char *const sb_default_protect[];

int sb_ctx_new(const struct sb_config *cfg, struct sb_ctx **ret,
    struct sb_result *err) __attribute__((warn_unused_result));
void sb_ctx_free(struct sb_ctx *ctx);

int sb_cancel_init(struct sb_cancel *c) __attribute__((warn_unused_result));
void sb_cancel_fire(struct sb_cancel *c);
bool sb_cancel_fired(struct sb_cancel *c);
void sb_cancel_fini(struct sb_cancel *c);

/* Fill *l with the defaults above (so callers can override a few). */
void sb_limits_default(struct sb_limits *l);

/*
 * Run req. Returns 0 if the program ran (whatever its exit), or a negative
 * errno if the sandbox could not be built: then nothing ran and res names the
 * failed stage, errno and a message. cancel may be NULL. res is always
 * initialised and must be released with sb_result_fini(). peak_rss_bytes is
 * the kernel's high-water RSS of the program tree (wait4 rusage); the
 * program's figure includes the launcher pages it had before execve, so a
 * peak not above the launcher's own size is reported as 0 (unknown).
 */
int sb_run(struct sb_ctx *ctx, const struct sb_request *req,
    struct sb_cancel *cancel, struct sb_result *res)
    __attribute__((warn_unused_result));
void sb_result_fini(struct sb_result *res);

/*
 * sb_run() in two steps, for a program started ahead of the request that
 * will feed it (a warm interpreter). sb_start() does everything sb_run()
 * does up to the program running (its stdin a pipe, open); req's stdin is
 * not used, its limits set the rlimits. sb_finish() writes the stdin bytes
 * of its own req (then EOF) as the program reads them and supervises the
 * run to its end under that req's wall_ms, progress and the cancel handle,
 * as sb_run() does; duration_us counts from sb_finish(). Both fill res as
 * sb_run() does; sb_finish() and sb_discard() (kill, reap, release) end a
 * started run. sb_started_alive() says whether its program is still there.
 * The program's output before sb_finish() stays in its pipes (64 KiB).
 *
 * sb_finish()'s request must have the shape sb_start()'s had (workspace,
 * its path, writability and protected names; binds; network; every limit
 * but wall_ms and cpu_s), or it is refused (SB_STAGE_REQUEST, nothing
 * runs and the sandbox is gone). A deferred start (req->deferred) is a
 * pooled sandbox: its call's program is sent to the waiting process,
 * which execs it as every run's does (SB_STAGE_EXEC when it is not
 * there: the sandbox is spent). So a sandbox built
 * for one shape never serves another, and serves one call only.
 */
struct sb_started;
int sb_start(struct sb_ctx *ctx, const struct sb_request *req,
    struct sb_started **ret, struct sb_result *res)
    __attribute__((warn_unused_result));
bool sb_started_alive(struct sb_started *s);
/*
 * A deferred start is built through to its last layer and waits for its
 * call, once the init says so, or timeout_ms has passed (then false: it
 * is still being built, or it failed, which sb_finish() reports). true at
 * once for a start that is not deferred.
 */
bool sb_started_ready(struct sb_started *s, unsigned timeout_ms);
/*
 * Whether the workspace's protected paths are as they were at sb_start():
 * one that names something else now (its owner ran git init meanwhile),
 * or a submodule or worktree added since, is not read-only inside the
 * started run, which must then not serve.
 */
bool sb_started_current(struct sb_started *s);
int sb_finish(struct sb_started *s, const struct sb_request *req,
    struct sb_cancel *cancel, struct sb_result *res)
    __attribute__((warn_unused_result));
void sb_discard(struct sb_started *s);

/*
 * A started run as a conversation (a session's interpreter): sb_converse()
 * hands it its program as sb_finish() would (a deferred one gets req's
 * program, argv and env; either must match the shape it was started for),
 * but stdin stays open after each input, and sb_turn() then writes one
 * input and supervises until the turn's output is complete, as the sink
 * says: each chunk the program writes (stream 1 stdout, 2 stderr) goes to
 * sink, which appends to o what belongs to the turn and returns true once
 * both streams have ended it. At wall_ms, or when cancel fires, every
 * process of the run but its init gets SIGINT; grace_ms later the run is
 * killed. sb_turn() returns 0 when the turn completed and the run lives
 * on; 1 when the run ended during it (res says how, as sb_run() does);
 * < 0 when it could not be supervised. After 1 or < 0 (or a failed
 * sb_converse()), only sb_discard() is left. Output the program writes
 * between turns stays in its pipes until the next turn's sink sees it.
 */
typedef bool (*sb_sink_fn)(void *arg, int stream, const char *buf, size_t n,
    struct sb_output *o);
struct sb_turn {
	const void *in;			/* written to the program's stdin */
	size_t in_len;
	uint32_t wall_ms;		/* then SIGINT */
	uint32_t grace_ms;		/* after it, the kill; > 0 */
	sb_sink_fn sink;
	void *sink_arg;
	sb_progress_fn progress;	/* optional, as sb_request's */
	void *progress_arg;
	uint32_t progress_ms;
};
/* What a sink keeps of a stream: up to o's cap, the rest counted. */
void sb_output_append(struct sb_output *o, const char *buf, size_t n);
int sb_converse(struct sb_started *s, const struct sb_request *req,
    struct sb_result *res) __attribute__((warn_unused_result));
int sb_turn(struct sb_started *s, const struct sb_turn *t,
    struct sb_cancel *cancel, struct sb_result *res)
    __attribute__((warn_unused_result));
/* The memory its cgroup holds now (0: none, or unknown). */
uint64_t sb_started_memory(struct sb_started *s);

const char *sb_stage_name(enum sb_stage stage);
/* What to do about a failed stage, with exact flags (stage.c). */
const char *sb_stage_fix(enum sb_stage stage);

/*
 * The bounds a context's runs get beyond rlimits (ctx.c), what `mcp-sandbox
 * --check` reports: the cgroup version in use (0: none), which controllers
 * hold, where the runs' cgroups are made, and when none can be had, why and
 * the fix; then the per-run kernel namespaces, uids and fixed limits.
 */
struct sb_bounds {
	int cgroup_version;		/* 1, 2, or 0: rlimits only */
	bool memory, pids, cpu;		/* the controller holds for every run */
	bool swap_off;			/* memsw / swap.max written, or no swap */
	bool tcp_mem;			/* socket buffers count in the memory
					 * limit (v2; v1 kmem.tcp written) */
	char where[256];		/* the server's cgroup dir(s) */
	char why[384];			/* no cgroup (or a controller missing) */
	char fix[384];
	unsigned stale_removed;		/* dead servers' cgroups cleaned at start */
	bool ipc;			/* an ipc namespace with limits per run */
	bool netns_pool;		/* runs join pre-created netns */
	bool uid_pool;			/* a kernel uid per run, uid_first.. */
	uid_t uid, uid_first, uid_last;	/* the runs' shared uid; the range */
	char uid_why[200];		/* root and no uid_pool: why */
	unsigned ipc_shmmni, ipc_msgmni, ipc_msgmnb;
	const char *ipc_sem;		/* "SEMMSL SEMMNS SEMOPM SEMMNI" */
	unsigned inotify_instances, inotify_watches;	/* a run's share */
	unsigned rlim_memlock, rlim_sigpending, rlim_msgqueue;
};
void sb_ctx_bounds(const struct sb_ctx *ctx, struct sb_bounds *b);

/*
 * Whether this process acts as a root server: euid 0 in a user namespace
 * that maps the sandbox ids (SB_DEFAULT_UID/GID), so that it can give its
 * sandboxes, and the files they make, to them. Root of a namespace that
 * maps fewer (srt's, which maps uid 0 alone) acts as an unprivileged
 * server: its sandboxes run as its own uid (issue 26).
 */
bool sb_host_root(void);

/*
 * Inside another sandbox that leaves us no user namespace of our own
 * (srt, as VS Code and Claude Code run a server in; bubblewrap with
 * --disable-userns; any user namespace whose user.max_user_namespaces is
 * 0): what it is, and the fix for that wrapper; false when not so.
 * Static strings.
 */
bool sb_nested(const char **what, const char **fix);

/* The kernel's Landlock ABI version, 0: none (--check's probe). */
int sb_landlock_abi(void);
/*
 * --check's probe, for a throw-away child only: loads the sandbox's seccomp
 * filter into the caller for good and sees an unknown syscall fail with
 * ENOSYS. 0, or the errno.
 */
int sb_seccomp_selftest(void);

#endif /* SANDBOX_H */
