/*
 * check_report: the isolation probe behind `mcp-sandbox --check`. Tries
 * each layer alone in a throw-away child, then a whole sandboxed /bin/true,
 * and says for every layer whether it works, why not, and how to fix it.
 * Reads a few sysctls to name the cause. Never writes anything itself: it
 * reports through the caller's callback. It forks plain helpers, so it is
 * for a single-threaded process (the CLI), not for a serving server. It is
 * diagnostics, not isolation: it sees the sandbox through sandbox.h only
 * (sb_ctx_bounds() for a context's figures).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd_check.h"
#include "sandbox.h"

/* Run fn in a forked child; 0 if it exited 0, else the errno it exited with. */
static int
probe(int (*fn)(void))
{
	pid_t pid;
	int ws;

	pid = fork();
	if (pid < 0)
		return errno;
	if (pid == 0)
		_exit(fn());
	while (waitpid(pid, &ws, 0) < 0)
		if (errno != EINTR)
			return errno;
	if (WIFEXITED(ws))
		return WEXITSTATUS(ws);
	return EINTR;
}

static int
p_userns(void)
{
	return unshare(CLONE_NEWUSER) < 0 ? errno : 0;
}

static int
p_all_ns(void)
{
	return unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID |
	    CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP | CLONE_NEWNET) < 0 ?
	    errno : 0;
}

static int
p_close_range(void)
{
	return syscall(SYS_close_range, 1000U, 1001U, 0U) < 0 ? errno : 0;
}

static int
read_sysctl(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, len - 1);
	(void)close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static void
userns_reason(char *buf, size_t len)
{
	const char *what, *fix;
	char v[32];

	if (sb_nested(&what, &fix))
		(void)snprintf(buf, len, "%s", what);
	else if (read_sysctl("/proc/sys/user/max_user_namespaces", v,
	    sizeof(v)) == 0 && strcmp(v, "0") == 0)
		(void)snprintf(buf, len, "user.max_user_namespaces is 0");
	else if (read_sysctl(
	    "/proc/sys/kernel/apparmor_restrict_unprivileged_userns", v,
	    sizeof(v)) == 0 && strcmp(v, "1") == 0)
		(void)snprintf(buf, len, "AppArmor restricts unprivileged "
		    "user namespaces (Ubuntu 23.10+)");
	else if (read_sysctl("/proc/sys/kernel/unprivileged_userns_clone", v,
	    sizeof(v)) == 0 && strcmp(v, "0") == 0)
		(void)snprintf(buf, len, "kernel.unprivileged_userns_clone is 0");
	else if (access("/.dockerenv", F_OK) == 0)
		(void)snprintf(buf, len, "inside a container whose seccomp "
		    "profile blocks unshare/clone with namespace flags");
	else
		(void)snprintf(buf, len, "refused by the kernel or an LSM");
}

/* What bounds a sandbox as a whole here, from the context's cgroups. */
static void
cgroup_report(const struct sb_bounds *b, const struct sb_config *cfg,
    cmd_check_line_fn fn, void *arg)
{
	bool required = cfg != NULL && cfg->cgroup == SB_CGROUP_REQUIRED;
	char why[sizeof(b->why) + sizeof(b->where) + 512];
	const char *v1 = "memory.limit_in_bytes", *v2 = "memory.max";

	if (b->cgroup_version == 0) {
		(void)snprintf(why, sizeof(why), "%s; what holds instead: "
		    "RLIMIT_AS per process (shared memory, memfd and tmpfs "
		    "pages are not counted, so a sandbox's total is not "
		    "bounded), RLIMIT_NPROC per sandbox user namespace, "
		    "RLIMIT_CPU per process; TCP buffers only by the host's "
		    "tcp_mem; peak memory from wait4()%s",
		    b->why, required ? "; the policy requires a cgroup: "
		    "sandboxed tools refuse to run" : "");
		fn(arg, "cgroup per sandbox (memory, pids)", false, required,
		    why, b->fix);
		return;
	}
	(void)snprintf(why, sizeof(why), "cgroup v%d, a run.N per sandbox "
	    "under %s: %s of the whole sandbox (shared memory, memfd and "
	    "tmpfs pages included), %s; out of memory ends the run",
	    b->cgroup_version, b->where, b->cgroup_version == 1 ? v1 : v2,
	    b->swap_off ? "no swap" : "SWAP NOT BOUNDED (no memsw accounting: "
	    "boot with swapaccount=1)");
	fn(arg, "cgroup memory", b->memory, required, why, "");
	fn(arg, "cgroup pids", b->pids, required, "pids.max of the whole "
	    "sandbox: its processes and threads, the init included", "");
	fn(arg, "cgroup socket memory", b->tcp_mem, false, b->tcp_mem ?
	    (b->cgroup_version == 1 ? "memory.kmem.tcp.limit_in_bytes = the "
	    "memory figure: the sandbox's TCP buffers (its side of the "
	    "proxy's connections) are bounded like its memory" :
	    "memory.max counts the sandbox's TCP buffers (its side of the "
	    "proxy's connections)") : "the sandbox's TCP buffers are not "
	    "counted (no memory.kmem.tcp.limit_in_bytes): up to the host's "
	    "tcp_mem", "a kernel with the v1 kmem accounting, or cgroup v2");
	fn(arg, "cgroup cpu", b->cpu, false, b->cpu ? "one CPU's worth of time "
	    "per sandbox (quota 100 ms per 100 ms)" : b->why, b->fix);
}

/* Processes (other than ours) whose real uid is uid; -1 if /proc fails. */
static int
count_uid_procs(uid_t uid)
{
	char path[300], buf[512], *u;	/* "/proc/" + a d_name + "/status" */
	struct dirent *e;
	int fd, n = 0;
	ssize_t len;
	DIR *d;

	if ((d = opendir("/proc")) == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9' ||
		    atoi(e->d_name) == (int)getpid())
			continue;
		(void)snprintf(path, sizeof(path), "/proc/%s/status",
		    e->d_name);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		(void)close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		if ((u = strstr(buf, "\nUid:\t")) != NULL &&
		    strtoul(u + 6, NULL, 10) == (unsigned long)uid)
			n++;
	}
	(void)closedir(d);
	return n;
}

/*
 * What bounds a sandbox's memory and its share of the per-uid kernel
 * pools, as this server would run it (issue 10, classes 4 and 5).
 */
static void
limits_report(const struct sb_bounds *b, cmd_check_line_fn fn, void *arg)
{
	char why[640];
	int n;

	if (b->ipc)
		(void)snprintf(why, sizeof(why), "each sandbox has an ipc "
		    "namespace the server made: System V shared memory at most "
		    "the memory figure in all (shmall, shmmax), %u segments; "
		    "%u message queues of %u bytes; semaphores %s",
		    b->ipc_shmmni, b->ipc_msgmni, b->ipc_msgmnb, b->ipc_sem);
	else
		(void)snprintf(why, sizeof(why), "the server cannot make the "
		    "sandboxes' ipc namespaces (it is not root of the user "
		    "namespace that owns its own), so their limits cannot be "
		    "set: System V shm, message queues and semaphores are "
		    "refused inside (ENOSYS)");
	fn(arg, "ipc limits", b->ipc, false, why,
	    "run the server as root (tools still run as an unprivileged "
	    "uid) to allow System V IPC within limits");
	if (b->memory)
		(void)snprintf(why, sizeof(why), "what bounds a sandbox's "
		    "memory: its cgroup, the memory figure for the whole run "
		    "(see cgroup memory: every page it charges, kernel memory "
		    "too, so memfd_create is allowed); also RLIMIT_AS and "
		    "RLIMIT_DATA per process; System V shm (see ipc limits); "
		    "/tmp, a tmpfs of its own size; RLIMIT_MEMLOCK %u KiB",
		    b->rlim_memlock / 1024);
	else
		(void)snprintf(why, sizeof(why), "what bounds a sandbox's "
		    "memory: RLIMIT_AS and RLIMIT_DATA per process (the memory "
		    "figure), so processes x memory in all; System V shm (see "
		    "ipc limits); /tmp, a tmpfs of its own size; RLIMIT_MEMLOCK "
		    "%u KiB; memfd_create refused (its pages no rlimit counts). "
		    "Not bounded without cgroups: kernel memory (page tables, "
		    "socket and pipe buffers)", b->rlim_memlock / 1024);
	fn(arg, "memory bounds", true, false, why, "");
	n = b->uid_pool ? 0 : count_uid_procs(b->uid);
	if (b->uid_pool)
		(void)snprintf(why, sizeof(why), "each run at once has a kernel "
		    "uid of its own, %u..%u (checked unused at start: no passwd "
		    "entry, subuid range or process of it), the workspace "
		    "mounted id-mapped so that its files stay uid %u's on disk: "
		    "pipe pages, epoll watches and fds in flight are per run. "
		    "inotify is counted against the server's own uid whatever "
		    "the run's: each run takes %u instances and %u watches of "
		    "it", (unsigned)b->uid_first, (unsigned)b->uid_last,
		    (unsigned)b->uid, b->inotify_instances, b->inotify_watches);
	else
		(void)snprintf(why, sizeof(why), "every run is kernel uid %u "
		    "(%.200s): pipe pages (fs.pipe-user-pages-soft, past it pipes "
		    "get two pages), epoll watches and fds in flight are one "
		    "pool for all runs and %d other process%s of this uid here; "
		    "inotify is counted against the server's uid: each run "
		    "takes %u instances and %u watches of it; pending signals "
		    "and mqueue bytes are per run (RLIMIT_SIGPENDING %u, "
		    "RLIMIT_MSGQUEUE %u)", (unsigned)b->uid, !sb_host_root() ?
		    "an unprivileged server has only its own" :
		    b->uid_why[0] != '\0' ? b->uid_why :
		    "no per-slot uids asked for", n < 0 ? 0 : n,
		    n == 1 ? "" : "es", b->inotify_instances,
		    b->inotify_watches, b->rlim_sigpending, b->rlim_msgqueue);
	fn(arg, "kernel uid", b->uid_pool, false, why,
	    b->uid_pool ? "keep fs.inotify.max_user_instances above "
	    "16 x the runs at once plus the server uid's own use" :
	    sb_host_root() ? "a server sets sb_config.uid_slots (mcp-sandbox "
	    "does, one per sandbox slot)" : "run the server as root (tools "
	    "still run unprivileged) for a uid per run");
}

/* The listener callback of the probe: the socket came, and it listens. */
static int
probe_listener(void *arg, int lfd, enum sb_net_event ev)
{
	int *got = arg, v = 0;
	socklen_t l = sizeof(v);

	if (ev == SB_NET_LISTENING && getsockopt(lfd, SOL_SOCKET,
	    SO_ACCEPTCONN, &v, &l) == 0 && v)
		*got = 1;
	return 0;
}

/* SB_NET_PROXY: loopback raised inside, the listening socket handed out. */
static void
check_proxy(struct sb_ctx *ctx, struct sb_request *req, cmd_check_line_fn fn,
    void *arg)
{
	struct sb_result res;
	char why[sizeof(res.message)];
	int got = 0;

	req->network = SB_NET_PROXY;
	req->net_listener = probe_listener;
	req->net_arg = &got;
	if (sb_run(ctx, req, NULL, &res) < 0)
		(void)snprintf(why, sizeof(why), "%s", res.message);
	else if (!got)
		(void)snprintf(why, sizeof(why), "no listening socket came out");
	else
		(void)snprintf(why, sizeof(why), "works: 127.0.0.1:%d listens "
		    "inside the sandbox's netns, served from outside",
		    SB_PROXY_PORT);
	fn(arg, "network proxy (egress)", got && res.exited &&
	    res.exit_code == 0, false, why, "see the layer named in the "
	    "message; without it, a policy with network.allowed_domains "
	    "fails its calls closed");
	sb_result_fini(&res);
	req->network = SB_NET_NONE;
}

/* Each layer alone, in a throw-away child: before any context is made. */
static void
layers_report(cmd_check_line_fn fn, void *arg)
{
	const char *nested, *nfix = NULL;
	char why[512];
	int e, abi;

	e = probe(p_userns);
	userns_reason(why, sizeof(why));
	if (!sb_nested(&nested, &nfix))
		nfix = NULL;
	fn(arg, "user namespace", e == 0, true, e == 0 ? (sb_host_root() ?
	    "server is root: sandboxes run as kernel uid 65534" :
	    "sandboxes run as the server's own uid") : why, nfix != NULL ?
	    nfix : "sysctl -w user.max_user_namespaces=15000; on Ubuntu "
	    "24.04 an AppArmor profile with 'userns,' for this binary; in "
	    "Docker --security-opt seccomp=unconfined (or a profile allowing "
	    "unshare/clone)");
	e = probe(p_all_ns);
	(void)snprintf(why, sizeof(why), "unshare(user|mnt|pid|ipc|uts|"
	    "cgroup|net): %s", e == 0 ? "ok" : strerror(e));
	fn(arg, "mount, pid, ipc, uts, cgroup, net namespaces", e == 0, true,
	    why, nfix != NULL ? "as for the user namespace" : "as for the "
	    "user namespace; CONFIG_*_NS in the kernel");
	e = probe(sb_seccomp_selftest);
	(void)snprintf(why, sizeof(why), "allow-list (ENOSYS default, EPERM "
	    "groups, other ABIs killed): %s", e == 0 ? "ok" : strerror(e));
	fn(arg, "seccomp filter", e == 0, true, why,
	    "a kernel with CONFIG_SECCOMP_FILTER");
	e = probe(p_close_range);
	fn(arg, "close_range", e == 0, true, e == 0 ? "ok" : strerror(e),
	    "Linux 5.11 or newer");
	abi = sb_landlock_abi();
	if (abi > 0)
		(void)snprintf(why, sizeof(why), "ABI %d%s", abi, abi >= 6 ?
		    " (fs, tcp, abstract unix and signal scoping)" : "");
	else
		(void)snprintf(why, sizeof(why),
		    "not available: defence in depth only");
	fn(arg, "landlock", abi > 0, false, why,
	    "Linux 5.13+ with lsm=...,landlock on the kernel command line");
	fn(arg, "rlimits", true, true, "RLIMIT_AS, CPU, FSIZE, NOFILE, NPROC "
	    "and CORE=0 on every process", "");
}

/* A whole sandboxed /bin/true, then the proxy; -1 if it cannot run. */
static int
run_report(struct sb_ctx *ctx, cmd_check_line_fn fn, void *arg)
{
	static const char *const argv[] = { "/bin/true", NULL };
	struct sb_request req = { 0 };
	struct sb_result res;
	char why[256];
	int rc = 0;

	req.program = argv[0];
	req.argv = argv;
	sb_limits_default(&req.limits);
	if (sb_run(ctx, &req, NULL, &res) < 0) {
		fn(arg, "full sandbox (/bin/true)", false, true, res.message,
		    sb_stage_fix(res.failed_stage));
		rc = -1;
	} else if (!res.exited || res.exit_code != 0) {
		(void)snprintf(why, sizeof(why), "ran but ended with %s %d",
		    res.exited ? "exit" : "signal",
		    res.exited ? res.exit_code : res.signal);
		fn(arg, "full sandbox (/bin/true)", false, true, why,
		    "report a bug");
		rc = -1;
	} else {
		(void)snprintf(why, sizeof(why), "ran in %llu us",
		    (unsigned long long)res.duration_us);
		fn(arg, "full sandbox (/bin/true)", true, true, why, "");
	}
	sb_result_fini(&res);
	if (rc == 0)
		check_proxy(ctx, &req, fn, arg);
	return rc;
}

int
check_report(const struct sb_config *cfg, cmd_check_line_fn fn, void *arg)
{
	struct sb_config probe_cfg = { 0 };
	struct sb_result res;
	struct sb_bounds b;
	struct sb_ctx *ctx = NULL;
	int rc;

	layers_report(fn, arg);
	/* One pooled netns at least, to see whether pooling works here. */
	if (cfg != NULL)
		probe_cfg = *cfg;
	if (probe_cfg.netns_pool == 0)
		probe_cfg.netns_pool = 1;
	/* and one per-slot uid, to check the range as a server would */
	if (probe_cfg.uid_slots == 0)
		probe_cfg.uid_slots = 1;
	if (sb_ctx_new(&probe_cfg, &ctx, &res) < 0) {
		fn(arg, res.failed_stage == SB_STAGE_CGROUP ?
		    "cgroup per sandbox (memory, pids)" : "sandbox context",
		    false, true, res.message, res.failed_stage ==
		    SB_STAGE_CGROUP ? "as the message says; or drop "
		    "require_cgroup from the policy" :
		    sb_stage_fix(res.failed_stage));
		return -1;
	}
	sb_ctx_bounds(ctx, &b);
	cgroup_report(&b, cfg, fn, arg);
	limits_report(&b, fn, arg);
	fn(arg, "netns pool", b.netns_pool, false, b.netns_pool ?
	    "works: a server with sb_config.netns_pool joins pre-created "
	    "empty network namespaces (one per concurrent run)" :
	    "unavailable (needs CAP_SYS_ADMIN): each run creates a fresh "
	    "network namespace (~0.6 ms more)", "run the server as root, or "
	    "accept the cost");
	rc = run_report(ctx, fn, arg);
	sb_ctx_free(ctx);
	return rc;
}
