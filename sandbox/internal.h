/*
 * Internals of mcp_sandbox shared by its files: the context, the plan the
 * child follows, the policy tables. Nothing here is part of the interface
 * in sandbox.h; tests reach it through this header only (like curl's
 * UNITTEST), never through statics.
 */
#ifndef SB_INTERNAL_H
#define SB_INTERNAL_H

#include <linux/filter.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "sandbox.h"

/*
 * Mount operations in one plan: the system entries (some 35: dirs, /dev,
 * /etc files, symlinks), /tmp, /proc, the workspace and its protected
 * names, then up to SB_MAX_BINDS binds, each with the directories made
 * for its parents (a pyenv python's three binds take nine operations, a
 * bind four levels down up to five).
 */
#define SB_MAX_MOPS		(160 + SB_MAX_PROTECTED)
/* Extra binds a request may ask for (read-only unless asked). */
#define SB_MAX_BINDS		16
/* Mounts a run with a uid of its own gets id-mapped by the parent: the
 * workspace and each writable bind (uids.c, sb_uid_trees). */
#define SB_MAX_TREES		(1 + SB_MAX_BINDS)
/* Protected names of the workspace (sb_request.workspace_protect). */
#define SB_MAX_PROTECT		8
/*
 * Paths a run's plan watches under them: each name, and in a .git the
 * entries of each git dir (its own, its submodules', its worktrees') and
 * the dirs that lead to them; some 8 per git dir. Each present entry is a
 * mount in every run's namespace and each path a lookup at every run's
 * end: a repository with more than some 15 submodules and worktrees fails
 * the request (clearly) instead of slowing every run.
 */
#define SB_MAX_PROTECTED	128
/* Pre-created network namespaces a context may keep (one per worker). */
#define SB_MAX_NETNS_POOL	64
/*
 * The ids a program sees. Mapped to the kernel ids of the context, and
 * distinct from the overflow id 65534 that unmapped host files (root's)
 * show as, so nothing looks owned by the sandbox user that is not.
 */
#define SB_INSIDE_UID		1000
#define SB_INSIDE_GID		1000
/*
 * The weight of a started-ahead run's session (limits.start_low) until
 * its call comes: the lowest nice, so that it takes only CPU time that
 * nothing else wants.
 */
#define SB_IDLE_NICE		19
/*
 * Its time slice meanwhile: the kernel's shortest (0.1 ms). With the
 * default one a starting python held a CPU against the server's and the
 * client's wake-ups for up to a tick (p90 of the MCP layer 2-3 ms).
 */
#define SB_IDLE_SLICE_NS	100000
/* The kernel's struct sched_attr, first version (glibc 2.36 has none). */
struct sb_sched_attr {
	uint32_t size, policy;
	uint64_t flags;
	int32_t nice;
	uint32_t priority;
	uint64_t runtime;	/* fair policies: the time slice, 0 = default */
	uint64_t deadline, period;
};
_Static_assert(sizeof(struct sb_sched_attr) == 48, "SCHED_ATTR_SIZE_VER0");

/* Bytes of one path the sandbox handles (the kernel's PATH_MAX). */
#define SB_PATH_MAX		4096

/*
 * Fixed fd numbers in the child after its fd shuffle. Everything else is
 * closed before the first mount, so a concurrent run's pipes never leak in.
 */
enum sb_child_fd {
	SB_FD_STATUS = 3,	/* status pipe, write end, CLOEXEC */
	SB_FD_SYNC,		/* socket: parent says "maps written"; EOF: it died */
	SB_FD_STDOUT,		/* pipe, write end */
	SB_FD_STDERR,		/* pipe, write end */
	SB_FD_STDIN,		/* pipe, read end: the launch, then stdin */
	SB_FD_PLAN,		/* memfd with the packed plan (plan_wire.c) */
	SB_FD_EXE,		/* the init program (a sealed memfd), until its exec */
	/* detached mounts made by the parent (uid pool): the workspace and
	 * the writable binds, SB_MAX_TREES fds, unused ones -1 */
	SB_FD_TREE,
	SB_FD_FIRST_BIND = SB_FD_TREE + SB_MAX_TREES,	/* O_PATH sources of
				 * binds, opened by the child */
};

/* Records on the status pipe, child -> parent; one write() each. */
enum sb_status_kind {
	SB_STATUS_FAIL = 1,	/* a setup step failed: stage + err */
	SB_STATUS_EXIT,		/* init reaped the program: wstatus + maxrss */
	SB_STATUS_FORKED,	/* setup done, init forked the program */
	SB_STATUS_READY,	/* built, waiting for its launch */
};

struct sb_status {
	uint32_t kind;		/* enum sb_status_kind */
	uint32_t stage;		/* enum sb_stage */
	int32_t err;		/* errno */
	int32_t wstatus;	/* EXIT: wait status; FAIL: 1 + mop index */
	uint64_t maxrss_kib;	/* high-water RSS of the program tree */
	uint64_t base_kib;	/* init's own high-water RSS (the program's
				 * until its execve: a vfork) */
};

/*
 * A run's launch: what the server writes first on the program's stdin,
 * and the waiting process reads before its execve (init.c): at once for
 * sb_run() and a started run's sb_start(), at sb_finish() for a deferred
 * one (sb_request.deferred). After the head, len bytes: the program's path, then
 * argc strings, then envc strings, each NUL-terminated; the call's own
 * stdin follows. At most SB_LAUNCH_MAX bytes: execve takes no more than
 * a quarter of the 8 MiB default stack for argv and envp together.
 */
#define SB_LAUNCH_MAGIC		0x6d63702d72756e21ULL	/* "mcp-run!" */
#define SB_LAUNCH_MAX		(2u << 20)
/*
 * Strings of one launch, argv and envp together: its pointers are room
 * the waiting process sets aside before its limits (RLIMIT_AS may leave
 * it none after: a sanitizer's shadow maps terabytes), 1 MiB of them.
 */
#define SB_LAUNCH_MAX_STRINGS	(1u << 17)
struct sb_launch_head {
	uint64_t magic;
	uint32_t len;		/* bytes of strings after the head */
	uint32_t cpu_s;		/* RLIMIT_CPU, lowered to it (0: kept) */
	uint32_t argc, envc;
};

enum sb_mop_kind {
	SB_MOP_DIR,		/* mkdir path, mode */
	SB_MOP_FILE,		/* create path with arg (len arg_len), mode */
	SB_MOP_SYMLINK,		/* symlink arg -> path */
	SB_MOP_BIND,		/* bind fd -> path; ro unless writable */
	SB_MOP_TMPFS,		/* tmpfs at path with options arg */
	SB_MOP_PROC,		/* procfs at path with options arg */
	SB_MOP_PROTECT,		/* path (in the workspace) read-only over itself */
	SB_MOP_TREE,		/* the parent's detached mount fd -> path */
};

/* One step of building the new root; paths are relative to it. */
struct sb_mop {
	enum sb_mop_kind kind;
	enum sb_stage stage;	/* reported if this step fails */
	const char *path;	/* no leading '/'; borrowed from the plan */
	const char *arg;	/* see kind; borrowed */
	size_t arg_len;
	mode_t mode;
	const char *host;	/* SB_MOP_BIND: host source, symlink-free */
	int fd;			/* SB_MOP_BIND: the child's fd number */
	char src[32];		/* SB_MOP_BIND: "/proc/self/fd/N" */
	bool src_dir;		/* SB_MOP_BIND: source is a directory */
	bool writable;		/* SB_MOP_BIND: rw (still nosuid, nodev) */
	bool device;		/* SB_MOP_BIND: a device node (no nodev) */
	/* SB_MOP_PROTECT: what the plan noted there (sb_prot): the init
	 * binds read-only that inode only, or fails (ESTALE) */
	dev_t dev;
	ino_t ino;
};

/*
 * The rlimits a sandbox inherits nothing of: every one is set (plan.c),
 * whatever limits.conf or a unit's LimitX= gave the server.
 *   RTPRIO 0, RTTIME 0: no realtime scheduling (a SCHED_FIFO loop would
 *     own a CPU of the host); RTTIME only ever counts realtime tasks.
 *   NICE 0: the nice value can be raised, never lowered (ceiling 20 - 0).
 *   MEMLOCK: pinned pages cannot be swapped or reclaimed; a few buffers
 *     of secrets (gpg, ssh) need this much, nothing in a sandbox more.
 *   MSGQUEUE: bytes of POSIX message queues, counted per (user namespace,
 *     uid), so per sandbox; the kernel's default, made explicit.
 *   SIGPENDING: queued signals (kernel memory), also per sandbox.
 *   STACK: glibc's main and thread stack size; never unlimited, which
 *     would switch the process to the legacy, less random mmap layout.
 *   DATA: brk and private writable mappings, at most the address space.
 *   RSS, LOCKS: not enforced by Linux; set so that nothing is inherited.
 */
#define SB_RLIM_MEMLOCK		(64u * 1024)
#define SB_RLIM_MSGQUEUE	819200u
#define SB_RLIM_SIGPENDING	1024u
#define SB_RLIM_STACK		(8u * 1024 * 1024)
/* Every resource getrlimit knows (RLIMIT_NLIMITS on Linux). */
#define SB_MAX_RLIMITS		16

/*
 * Each sandbox's share of the per-uid inotify pool (fs.inotify.* of the
 * host, 128 instances and ~8k-1M watches by default), written into its own
 * user namespace's user.max_inotify_* so that no sandbox can exhaust what
 * the next one (or any host process of the same kernel uid) needs: all
 * sandboxes of a server share one kernel uid, and the kernel counts
 * inotify per uid up the user namespace chain.
 */
#define SB_INOTIFY_INSTANCES	16
#define SB_INOTIFY_WATCHES	4096

/*
 * The System V IPC limits of a sandbox's own ipc namespace (a root
 * server's: see exec.c), from its memory figure (limits.as_bytes):
 * shared memory at most that many bytes in all (shmall, in pages) and per
 * segment (shmmax), in at most SB_IPC_SHMMNI segments; message queues at
 * most SB_IPC_MSGMNI of SB_IPC_MSGMNB bytes (256 KiB in all), messages of
 * at most SB_IPC_MSGMAX bytes (the kernel's defaults for these two).
 */
#define SB_IPC_SHMMNI		64
#define SB_IPC_MSGMNI		16
#define SB_IPC_MSGMNB		16384
#define SB_IPC_MSGMAX		8192
/* semaphores: SEMMSL SEMMNS SEMOPM SEMMNI, ~8000 semaphores in all */
#define SB_IPC_SEM		"250 8000 32 128"

/* An rlimit the child sets. */
struct sb_rlimit {
	int resource;
	uint64_t soft;
	uint64_t hard;
};

/* Paths and access rights for Landlock, opened by the child after pivot. */
struct sb_landlock_rule {
	const char *path;	/* absolute inside the sandbox */
	uint64_t access;
};

#define SB_MAX_LANDLOCK_RULES	(SB_MAX_BINDS + 8)

/* A protected path at a run's start: relative to the workspace (".git",
 * ".git/hooks"), its last component at path + name_off. */
struct sb_prot {
	const char *path;
	size_t name_off;
	bool present;		/* dev and ino are its */
	dev_t dev;
	ino_t ino;
	/* a dir of git dirs (modules, worktrees): its ctime then, changed
	 * by an entry added since, which no run started then has bound */
	bool list;
	struct timespec ctime;
};

/*
 * Everything the init needs, built before clone(). The cloned child reads
 * only its fd slots; the init gets the rest packed in a memfd (plan_wire.c)
 * and only reads it.
 */
struct sb_plan {
	/* fd shuffle: from[i] (parent's number) becomes SB_FD_STATUS + i */
	int fd_from[SB_FD_FIRST_BIND - SB_FD_STATUS];
	int nfds;
	int nbind_fds;			/* bind sources: SB_FD_FIRST_BIND.. */

	uid_t uid, gid;			/* ids inside (SB_INSIDE_UID/GID) */
	bool drop_groups;		/* setgroups(0): a root server's gid 0 */
	bool limit_nested_userns;	/* write max_user_namespaces = 0 */
	const char *staging;		/* absolute host dir for the new root */
	const char *root_opts;		/* tmpfs options of the root */
	struct sb_mop mops[SB_MAX_MOPS];
	size_t nmops;
	const char *hostname;

	struct sb_rlimit rlimits[SB_MAX_RLIMITS];
	size_t nrlimits;
	int last_cap;			/* highest capability number */
	int landlock_abi;		/* 0: not available */
	bool start_idle;		/* SCHED_IDLE until sb_finish() */
	bool net_proxy;			/* SB_NET_PROXY: listen on loopback */
	bool net_lo_down;		/* a fresh netns: the init raises lo */
	struct sb_landlock_rule ll_rules[SB_MAX_LANDLOCK_RULES];
	size_t nll_rules;
	const struct sock_fprog *filter;	/* borrowed from the context */
	const struct sock_fprog *sysv_filter;	/* NULL, or sb_sysv_deny */
	const struct sock_fprog *memfd_filter;	/* NULL, or sb_memfd_deny */
	/* the ipc namespace: made by the parent thread with these limits */
	bool ipc_by_parent;
	uint64_t shmmax, shmall;		/* bytes, pages */
	/* the sandbox's share of the per-uid inotify pool (child writes) */
	unsigned inotify_instances, inotify_watches;
	/* the run has a cgroup: the init waits for a second byte ('c',
	 * attached) before it starts the program (exec.c, launch), then
	 * makes its cgroup namespace (the clone does not) */
	bool cg_sync;
	/* what the protected paths of a writable workspace's run named at
	 * its start (plan.c, add_protected); one that names something else
	 * at its end is moved aside (protect.c, sb_protect_finish) */
	struct sb_prot prot[SB_MAX_PROTECTED];
	size_t nprot;
	const char *ws_host;		/* the workspace's host dir (a copy) */
	/* mounts made by the parent (uid pool): their mops' indices, the
	 * i-th at fd SB_FD_TREE + i */
	size_t tree_mop[SB_MAX_TREES];
	size_t ntrees;

	struct sb_limits limits;	/* request limits, defaults filled in */
	const char *cwd;		/* inside */

	/* Strings the plan owns (paths, options); freed by sb_plan_fini. */
	char *owned[SB_MAX_MOPS + SB_MAX_PROTECTED + 8];
	size_t nowned;
};

/* A host file or directory the system layout exposes. */
enum sb_sys_kind {
	SB_SYS_BIND_DIR,
	SB_SYS_BIND_FILE,
	SB_SYS_DEVICE,
	SB_SYS_SYMLINK,
};

struct sb_sysent {
	const char *path;	/* inside == host path; static storage */
	enum sb_sys_kind kind;
	char link[SB_PATH_MAX];	/* SB_SYS_SYMLINK: target as on the host */
};

#define SB_MAX_SYSENTS		24

struct sb_netns_pool {
	pthread_mutex_t lock;
	int fds[SB_MAX_NETNS_POOL];	/* netns fds, owned */
	bool busy[SB_MAX_NETNS_POOL];
	bool lo_up[SB_MAX_NETNS_POOL];	/* made for SB_NET_PROXY runs */
	unsigned n;			/* made so far */
	unsigned cap;			/* made at most (on demand) */
	int home_fd;			/* the server's own netns, owned */
};

_Static_assert(SB_MAX_UID_SLOTS == SB_MAX_NETNS_POOL, "a slot per netns");
/*
 * The default range is this many blocks of SB_MAX_UID_SLOTS uids from
 * SB_SLOT_UID_BASE (0x70000000..0x70003fff): a server without a range of
 * its own takes the first block no other server holds.
 */
#define SB_UID_BLOCKS		256
/*
 * The one lock file of every range (root-only /run): a server holds an
 * OFD write lock on its range's uids as byte offsets (uids.c).
 */
#define SB_UID_LOCK		"/run/mcp-sandbox-uids.lock"
/* What a refused range's message tells to do. */
#define SB_UID_FLAG		"another range (--uid-base)"
/* The highest uid a map can name ((uid_t)-1 is none). */
#define SB_ID_LAST_UID		4294967294U

struct sb_uid_pool {
	pthread_mutex_t lock;
	uid_t base;
	unsigned n;
	bool busy[SB_MAX_UID_SLOTS];
	/*
	 * A user namespace per slot whose uid map swaps ctx->uid and base + i
	 * (every other id maps to itself):
	 * the workspace's id mapping (MOUNT_ATTR_IDMAP), so that files owned
	 * by ctx->uid on disk are the slot uid's inside, and its new files
	 * ctx->uid's on disk, whichever slot a session's call lands in.
	 */
	int userns_fd[SB_MAX_UID_SLOTS];
	int lock_fd;		/* SB_UID_LOCK, the range's lock on it, or -1 */
	char why[200];		/* why there is no pool, for --check */
};

/*
 * RLIMIT_NPROC above the run's pids.max (nproc + the init), where a pids
 * cgroup holds: the init counts for both, and the cgroup must be what
 * refuses a fork, since it refuses for the run as a whole and counts
 * what it refused (pids.events). The rlimit stays as a backstop.
 */
#define SB_NPROC_OVER_CGROUP	2

/* cgroup.c: the controllers a run's cgroup uses. */
enum sb_cg_ctl {
	SB_CG_MEMORY,
	SB_CG_PIDS,
	SB_CG_CPU,
	SB_CG_NCTL
};

/* Server-wide: where run cgroups are made (built by sb_cgroup_init). */
struct sb_cgroups {
	int version;			/* 1 or 2; 0: none, rlimits only */
	/* the server's own dir, "mcp-sandbox.<pid>.<n>.<r>": v1 one per
	 * hierarchy, v2 dir[SB_CG_MEMORY] only; O_DIRECTORY fds or -1 */
	int dir[SB_CG_NCTL];
	int base[SB_CG_NCTL];		/* its parent (ours to nest in), or -1 */
	bool have[SB_CG_NCTL];		/* the controller bounds every run */
	bool memsw;			/* v1 memory.memsw.* / v2 memory.swap.max */
	/* v1 memory.kmem.tcp.limit_in_bytes: socket buffers are counted
	 * only once it is set (v2 counts them in memory.current always) */
	bool tcp_mem;
	bool no_swap;			/* no swap on this host at all */
	/* v2: the base's subtree_control had these before we came */
	bool base_had_memory, base_had_pids, base_had_cpu;
	char name[64];			/* the server dir's name */
	struct sb_bounds info;		/* for sb_ctx_bounds() */
	atomic_uint seq;		/* run cgroup names: run.<seq> */
};

/* One run's cgroup (dirs under each sb_cgroups.dir). */
struct sb_cg_run {
	int dir[SB_CG_NCTL];		/* O_DIRECTORY fds or -1 */
	char name[32];			/* "run.<seq>" */
	bool made;
	int oom_efd;			/* v1: eventfd fired at an OOM, or -1 */
	uint64_t mem_bytes;
	uint32_t pids_max;
};

struct sb_ctx {
	uid_t uid, gid;			/* kernel ids of the sandboxed process */
	bool host_root;			/* server runs with euid 0 */
	const char *staging;
	struct sock_fprog filter;	/* points to the const sb_bpf_insns */
	struct sb_sysent sys[SB_MAX_SYSENTS];
	size_t nsys;
	char passwd[256];		/* generated /etc/passwd */
	char group[256];		/* generated /etc/group */
	int last_cap;
	int landlock_abi;
	bool pool_on;
	struct sb_netns_pool pool;
	/*
	 * A root server makes each sandbox's ipc namespace itself, to set
	 * its limits (exec.c), and comes back to this one (owned; -1 when
	 * it cannot, see ctx.c): then System V IPC is refused instead.
	 */
	int ipc_home_fd;
	bool uid_pool_on;
	bool uid_map_all;		/* our user namespace maps every uid */
	struct sb_uid_pool uids;
	bool cg_on;			/* cg was initialised */
	struct sb_cgroups cg;
	/* the init program (init.c), a sealed memfd copy of it (ctx.c);
	 * what every run execs first */
	int init_fd;
	char init_path[SB_PATH_MAX];
};

/* policy.c: the const tables. */
enum sb_sys_action {
	SB_SYS_ALLOW,
	SB_SYS_EPERM,
	SB_SYS_ENOSYS,
};

struct sb_syscall_rule {
	const char *name;
	enum sb_sys_action action;
};

struct sb_sys_path {
	const char *path;
	bool required;		/* missing on the host: the context fails */
	bool device;
};

extern const struct sb_syscall_rule sb_syscall_rules[];
extern const size_t sb_nsyscall_rules;
extern const struct sb_sys_path sb_sys_paths[];
extern const size_t sb_nsys_paths;
extern const char *const sb_reserved_paths[];
extern const size_t sb_nreserved_paths;
extern const int sb_socket_families[];
extern const size_t sb_nsocket_families;
extern const uint32_t sb_socket_protocols[];
extern const size_t sb_nsocket_protocols;

/* A call whose mode argument may not carry the set-id bits (policy.c). */
struct sb_mode_rule {
	const char *name;
	int mode_arg;		/* index of the mode argument */
	int flags_arg;		/* open's flags: checked only if they create; -1 */
};
extern const struct sb_mode_rule sb_mode_rules[];
extern const size_t sb_nmode_rules;
/* Mode bits refused, and open flags that make the mode count. */
#define SB_SETID_BITS		06000U		/* S_ISUID | S_ISGID */
#define SB_CREATE_FLAGS		020000100U	/* O_CREAT | __O_TMPFILE */
/* The kernel's __O_TMPFILE (glibc's O_TMPFILE adds O_DIRECTORY). */
#define SB_O_TMPFILE_BIT	020000000U
extern const uint32_t sb_personalities[];
extern const size_t sb_npersonalities;
extern const uint32_t sb_denied_ioctls[2];
extern const char sb_etc_hosts[];
/* The second filter of sandboxes whose ipc limits cannot be set. */
extern const struct sock_fprog sb_sysv_deny;
/* The second filter of sandboxes without a memory cgroup: no memfd. */
extern const struct sock_fprog sb_memfd_deny;
/* The sandbox init's command line (what /proc/1/cmdline shows). */
extern const char sb_init_name[];
/* Its program's file name (ctx.c finds it). */
#define SB_INIT_NAME		"mcp-sandbox-init"

/* Every namespace flag of clone() (CLONE_NEWTIME shares CSIGNAL's bits). */
#define SB_CLONE_NS_MASK	0x7e020000UL
extern const char sb_proc_opts[];
extern const char sb_hostname[];

/* seccomp_bpf.c (generated at build time from this policy) */
extern const struct sock_filter *const sb_bpf_insns;
extern const unsigned short sb_bpf_len;

/* tests/adversarial/seccomp_reference.c: the policy through libseccomp,
 * the oracle of the unit test that checks the compact program */
int sb_seccomp_reference(struct sock_fprog *ret)
    __attribute__((warn_unused_result));
/* seccomp_compact.c: the same policy as a shallow range tree (loaded);
 * in mcp_sandbox_bpf, for the generator and the tests only */
int sb_seccomp_build(struct sock_fprog *ret)
    __attribute__((warn_unused_result));

/* stage.c: a failure recorded against its stage */
void sb_fail(struct sb_result *res, enum sb_stage stage, int err,
    const char *what);

/* path.c */
int sb_path_is_normal(const char *p);
int sb_path_under(const char *p, const char *dir);
int sb_open_host(const char *path, bool want_dir);

/* plan.c, and the helpers protect.c adds to a plan with */
const char *sb_plan_strdup(struct sb_plan *p, const char *s);
struct sb_mop *sb_plan_add_mop(struct sb_plan *p, enum sb_mop_kind kind,
    enum sb_stage stage, const char *abs_path);
int sb_request_fail(struct sb_result *res, int err, const char *what);
int sb_plan_build(struct sb_ctx *ctx, const struct sb_request *req,
    struct sb_plan *plan, struct sb_result *res)
    __attribute__((warn_unused_result));
void sb_plan_fini(struct sb_plan *plan);
/*
 * stage.c: id looked up in a map file of this process (uid_map,
 * gid_map): 1 with the parent namespace's id (*out) and the size of its
 * range (*count), 0 when unmapped, -1 when the file cannot be read; and
 * whether this is the initial user namespace, which maps all of
 * 0..2^32-2 to itself (SB_INITIAL_MAP_COUNT ids).
 */
#define SB_INITIAL_MAP_COUNT	4294967295u
int sb_map_lookup(const char *path, unsigned id, unsigned *out,
    unsigned *count);
bool sb_initial_userns(void);

/*
 * For the init and the cloned child (init.c, spawn.c): report a failed
 * step (detail: 1 + the mop index, or 0) on fd, and exit 127.
 */
void sb_child_fail(int fd, enum sb_stage stage, int err, int detail)
    __attribute__((noreturn));
/* write() all of buf; 0 or -errno (-EIO: nothing written). */
int sb_write_all(int fd, const char *buf, size_t len);

/*
 * deferred.c: a request's shape (what building its sandbox used) and a
 * run's launch (struct sb_launch_head, then the call's stdin),
 * malloc'd; NULL: no memory (res filled for the launch, also E2BIG).
 */
char *sb_shape_bytes(const struct sb_request *req, size_t *ret_len);
char *sb_launch_bytes(const struct sb_request *req, size_t *ret_len,
    struct sb_result *res);


/* protect.c: the protected names at the plan, after the run, and now */
int sb_protect_plan(struct sb_plan *p, const struct sb_request *req,
    struct sb_result *res)
    __attribute__((warn_unused_result));
void sb_protect_finish(const struct sb_plan *p, struct sb_result *res);
bool sb_protect_current(const struct sb_plan *p);

/* proxy_port.c: in the init, before the program (raw system calls). */
int sb_proxy_listen(bool raise_lo);
int sb_lo_up(void);
int sb_send_fd(int sock, int fd);
int sb_recv_fd(int sock);

/*
 * A packed plan's most bytes: the struct (some 40 KiB) and its strings,
 * two paths of at most SB_PATH_MAX for each of SB_MAX_MOPS mounts and
 * one per Landlock rule (2.5 MiB); the program comes in its launch.
 */
#define SB_PLAN_WIRE_MAX	(sizeof(struct sb_plan) + 4u * 1024 * 1024)

/* The filters a plan names, as the reading side has them. */
struct sb_filters {
	const struct sock_fprog *main, *sysv, *memfd;
};

/* plan_wire.c: the plan in a memfd (*fd), and back in the init. */
int sb_plan_pack(const struct sb_plan *p, int *fd)
    __attribute__((warn_unused_result));
int sb_plan_unpack(int fd, const struct sb_filters *f, struct sb_plan **p)
    __attribute__((warn_unused_result));

/*
 * spawn.c: the init cloned with flags (into the cgroup cgfd, if >= 0 and
 * the kernel can: *joined) and exec'd; its pid, or -1 and errno.
 */
pid_t sb_spawn(const struct sb_plan *p, unsigned long flags, int cgfd,
    int *pidfd, bool *joined);

/* output.c: capped capture. */
int sb_output_init(struct sb_output *o, size_t cap)
    __attribute__((warn_unused_result));
void sb_output_finish(struct sb_output *o);
void sb_output_fini(struct sb_output *o);

/* uids.c: the per-slot uid pool */
int sb_uid_pool_init(struct sb_uid_pool *u, const struct sb_ctx *ctx,
    const struct sb_config *cfg, struct sb_result *res)
    __attribute__((warn_unused_result));
int sb_uid_pool_take(struct sb_uid_pool *u);
void sb_uid_pool_give(struct sb_uid_pool *u, int slot);
void sb_uid_pool_fini(struct sb_uid_pool *u);
/* The plan's trees for a run on slot (-1: none), id-mapped to it. */
int sb_uid_trees(struct sb_uid_pool *u, const struct sb_plan *p, int *slot,
    int *trees, struct sb_result *res) __attribute__((warn_unused_result));

/* netns.c */
int sb_netns_pool_init(struct sb_netns_pool *p, unsigned n)
    __attribute__((warn_unused_result));
int sb_netns_pool_take(struct sb_netns_pool *p, bool lo_up);
void sb_netns_pool_give(struct sb_netns_pool *p, int slot);
void sb_netns_pool_fini(struct sb_netns_pool *p);

/* cgroup.c */
int sb_cgroup_init(struct sb_cgroups *cg, const struct sb_config *cfg,
    struct sb_result *res) __attribute__((warn_unused_result));
void sb_cgroup_fini(struct sb_cgroups *cg);
void sb_cg_run_init(struct sb_cg_run *r);
int sb_cg_run_make(struct sb_cgroups *cg, const struct sb_limits *l,
    struct sb_cg_run *r, struct sb_result *res)
    __attribute__((warn_unused_result));
/* v1 (or a kernel without CLONE_INTO_CGROUP): pid joins each cgroup */
int sb_cg_run_attach(struct sb_cgroups *cg, struct sb_cg_run *r, pid_t pid,
    struct sb_result *res) __attribute__((warn_unused_result));
/* The run's processes are gone: its accounting into res, then rmdir. */
void sb_cg_run_finish(struct sb_cgroups *cg, struct sb_cg_run *r,
    bool oom_fired, struct sb_result *res);
/* The processes that are left, if any, killed; the cgroups removed. */
void sb_cg_run_remove(struct sb_cgroups *cg, struct sb_cg_run *r);
/* The memory it holds now, page cache included (0: unknown). */
uint64_t sb_cg_run_memory(const struct sb_cgroups *cg,
    const struct sb_cg_run *r);

#endif /* SB_INTERNAL_H */
