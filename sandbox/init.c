/*
 * init: the sandbox's pid 1, a program of its own (mcp-sandbox-init),
 * exec'd by the cloned child (spawn.c) before anything of a call is
 * touched, so that nothing of the server's memory is in the sandbox. It
 * reads its plan from a memfd (plan_wire.c), builds the root and forks
 * the program. Each failing step writes {stage, errno} on the status pipe
 * and exits; nothing is ever run with a layer missing. It reaps every
 * process of the namespace and exits when the program does, which takes
 * every other process of the namespace with it.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"

/* Landlock constants newer than Debian 12's headers (ABI 3 to 6). */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE	(1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV	(1ULL << 15)
#endif
#define SB_LL_NET_BIND_TCP		(1ULL << 0)
#define SB_LL_NET_CONNECT_TCP		(1ULL << 1)
#define SB_LL_SCOPE_ABSTRACT_UNIX	(1ULL << 0)
#define SB_LL_SCOPE_SIGNAL		(1ULL << 1)

/* The program's umask, whatever the server's: files 0644, dirs 0755. */
#define SB_UMASK			022

/* Signals of the kernel's sigset (64 on every Linux arch we build for). */
#define SB_NSIG				65

/* Landlock ABI 4's network rule (Debian 12's headers predate it). */
#define SB_LL_RULE_NET_PORT		2
struct sb_ll_net_port_attr {
	uint64_t allowed_access;
	uint64_t port;
} __attribute__((packed));

/* The ruleset attribute as of Landlock ABI 6; older ABIs take a prefix. */
struct sb_ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

#define child_fail_at	sb_child_fail
#define child_fail(fd, stage, err)	sb_child_fail(fd, stage, err, 0)

/* Open every bind source at its planned fd, in our own mount namespace. */
static void
open_sources(const struct sb_plan *p)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC,
		.resolve = RESOLVE_NO_SYMLINKS,
	};
	size_t i;
	int fd;

	for (i = 0; i < p->nmops; i++) {
		const struct sb_mop *m = &p->mops[i];

		if (m->kind != SB_MOP_BIND)
			continue;
		fd = (int)syscall(SYS_openat2, AT_FDCWD, m->host, &how,
		    sizeof(how));
		if (fd < 0)
			child_fail_at(SB_FD_STATUS, m->stage, errno, (int)i + 1);
		if (fd != m->fd) {
			if (dup3(fd, m->fd, O_CLOEXEC) < 0)
				child_fail_at(SB_FD_STATUS, m->stage, errno,
				    (int)i + 1);
			(void)close(fd);
		}
	}
}

static int
bind_flags(const struct sb_mop *m)
{
	struct mount_attr attr = { 0 };

	attr.attr_set = MOUNT_ATTR_NOSUID;
	if (!m->device)
		attr.attr_set |= MOUNT_ATTR_NODEV;
	if (!m->writable)
		attr.attr_set |= MOUNT_ATTR_RDONLY;
	if (syscall(SYS_mount_setattr, AT_FDCWD, m->path, 0U, &attr,
	    sizeof(attr)) < 0)
		return -errno;
	return 0;
}

/*
 * A protected entry of the workspace, read-only over itself, all through
 * fds: opened beneath the new root without following any symlink (a
 * symlink or a missing name fails the run), cloned, made read-only, and
 * moved onto the very dentry that was opened.
 */
static int
protect_mop(const struct sb_mop *m)
{
	struct open_how how = {
		.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH,
	};
	struct mount_attr attr = {
		.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
		    MOUNT_ATTR_NODEV,
	};
	struct stat st;
	int fd, tree, rc = 0;

	if ((fd = (int)syscall(SYS_openat2, AT_FDCWD, m->path, &how,
	    sizeof(how))) < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !(S_ISDIR(st.st_mode) ||
	    S_ISREG(st.st_mode))) {
		rc = S_ISLNK(st.st_mode) ? -ELOOP : -EINVAL;
		(void)close(fd);
		return rc;
	}
	/* the inode the plan noted, not one swapped in since */
	if (st.st_dev != m->dev || st.st_ino != m->ino) {
		(void)close(fd);
		return -ESTALE;
	}
	tree = (int)syscall(SYS_open_tree, fd, "", OPEN_TREE_CLONE |
	    OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	if (tree < 0 || syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH,
	    &attr, sizeof(attr)) < 0 || syscall(SYS_move_mount, tree, "", fd,
	    "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		rc = -errno;
	if (tree >= 0)
		(void)close(tree);
	(void)close(fd);
	return rc;
}

static int
do_mop(const struct sb_mop *m)
{
	int fd, rc;

	switch (m->kind) {
	case SB_MOP_DIR:
		if (mkdir(m->path, m->mode) < 0 && errno != EEXIST)
			return -errno;
		return 0;
	case SB_MOP_FILE:
		fd = open(m->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
		    m->mode);
		if (fd < 0)
			return -errno;
		rc = sb_write_all(fd, m->arg, m->arg_len);
		(void)close(fd);
		return rc;
	case SB_MOP_SYMLINK:
		if (symlink(m->arg, m->path) < 0)
			return -errno;
		return 0;
	case SB_MOP_BIND:
		if (m->src_dir) {
			if (mkdir(m->path, 0755) < 0 && errno != EEXIST)
				return -errno;
		} else {
			fd = open(m->path, O_WRONLY | O_CREAT | O_CLOEXEC,
			    0444);
			if (fd < 0)
				return -errno;
			(void)close(fd);
		}
		if (mount(m->src, m->path, NULL, MS_BIND, NULL) < 0)
			return -errno;
		return bind_flags(m);
	case SB_MOP_TMPFS:
		if (mkdir(m->path, m->mode) < 0 && errno != EEXIST)
			return -errno;
		if (mount("tmpfs", m->path, "tmpfs", MS_NOSUID | MS_NODEV,
		    m->arg) < 0)
			return -errno;
		return 0;
	case SB_MOP_PROTECT:
		return protect_mop(m);
	case SB_MOP_TREE:
		/* made, flagged and id-mapped by the parent (exec.c) */
		if (mkdir(m->path, 0755) < 0 && errno != EEXIST)
			return -errno;
		if (syscall(SYS_move_mount, m->fd, "", AT_FDCWD, m->path,
		    MOVE_MOUNT_F_EMPTY_PATH) < 0)
			return -errno;
		return 0;
	case SB_MOP_PROC:
		if (mkdir(m->path, 0555) < 0 && errno != EEXIST)
			return -errno;
		if (mount("proc", m->path, "proc",
		    MS_NOSUID | MS_NODEV | MS_NOEXEC, m->arg) < 0)
			return -errno;
		return 0;
	}
	return -EINVAL;
}

/* Write decimal v to a sysctl of our own user namespace, or fail. */
static void
write_user_sysctl(const char *path, unsigned v)
{
	char buf[16], *q = buf + sizeof(buf);
	int fd, rc;

	*--q = '\n';
	do {
		*--q = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0 && q > buf);
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
		child_fail(SB_FD_STATUS, SB_STAGE_NESTED_USERNS, errno);
	rc = sb_write_all(fd, q, (size_t)(buf + sizeof(buf) - q));
	(void)close(fd);
	if (rc < 0)
		child_fail(SB_FD_STATUS, SB_STAGE_NESTED_USERNS, -rc);
}

static void
build_root(const struct sb_plan *p)
{
	size_t i;
	int rc;

	/* Our userns's own limit: nothing below it may nest another. */
	if (p->limit_nested_userns)
		write_user_sysctl("/proc/sys/user/max_user_namespaces", 0);
	/* Our share of the per-uid inotify pool (SB_INOTIFY_* says why). */
	if (p->inotify_instances > 0) {
		write_user_sysctl("/proc/sys/user/max_inotify_instances",
		    p->inotify_instances);
		write_user_sysctl("/proc/sys/user/max_inotify_watches",
		    p->inotify_watches);
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		child_fail(SB_FD_STATUS, SB_STAGE_MOUNTS, errno);
	/* The root holds only mount points, links and three small files. */
	if (mount("tmpfs", p->staging, "tmpfs", MS_NOSUID | MS_NODEV |
	    MS_NOEXEC, p->root_opts) < 0 || chdir(p->staging) < 0)
		child_fail(SB_FD_STATUS, SB_STAGE_MOUNTS, errno);
	for (i = 0; i < p->nmops; i++)
		if ((rc = do_mop(&p->mops[i])) < 0)
			child_fail_at(SB_FD_STATUS, p->mops[i].stage, -rc,
			    (int)i + 1);
	if (mount(NULL, ".", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY |
	    MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		child_fail(SB_FD_STATUS, SB_STAGE_MOUNTS, errno);
	/* New root on top of the old, then detach the old from under it. */
	if (syscall(SYS_pivot_root, ".", ".") < 0 ||
	    umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
		child_fail(SB_FD_STATUS, SB_STAGE_PIVOT, errno);
	if (sethostname(p->hostname, strlen(p->hostname)) < 0)
		child_fail(SB_FD_STATUS, SB_STAGE_HOSTNAME, errno);
}

/*
 * Every capability gone: bounding (those still there: dropping needs
 * CAP_SETPCAP, which the init gave up before the program's vfork),
 * ambient, then the three sets.
 */
static int
drop_caps(int last_cap)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];
	int i;

	for (i = 0; i <= last_cap; i++)
		if (prctl(PR_CAPBSET_READ, i, 0, 0, 0) == 1 &&
		    prctl(PR_CAPBSET_DROP, i, 0, 0, 0) < 0)
			return -errno;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 &&
	    errno != EINVAL)
		return -errno;
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capset, &hdr, data) < 0)
		return -errno;
	return 0;
}

static int
apply_landlock(const struct sb_plan *p)
{
	struct sb_ll_ruleset_attr attr = { 0 };
	struct landlock_path_beneath_attr rule;
	size_t attr_size, i;
	int rfd, fd, rc = 0;

	if (p->landlock_abi <= 0)
		return 0;
	attr.handled_access_fs = (LANDLOCK_ACCESS_FS_REFER << 1) - 1;
	if (p->landlock_abi < 2)
		attr.handled_access_fs &= ~LANDLOCK_ACCESS_FS_REFER;
	if (p->landlock_abi >= 3)
		attr.handled_access_fs |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (p->landlock_abi >= 5)
		attr.handled_access_fs |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	attr_size = sizeof(uint64_t);
	if (p->landlock_abi >= 4) {
		/* No TCP rule at all: bind and connect are denied. */
		attr.handled_access_net = SB_LL_NET_BIND_TCP |
		    SB_LL_NET_CONNECT_TCP;
		attr_size = 2 * sizeof(uint64_t);
	}
	if (p->landlock_abi >= 6) {
		/* No abstract unix socket or signal reaches outside. */
		attr.scoped = SB_LL_SCOPE_ABSTRACT_UNIX | SB_LL_SCOPE_SIGNAL;
		attr_size = sizeof(attr);
	}
	rfd = (int)syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0U);
	if (rfd < 0)
		return -errno;
	for (i = 0; i < p->nll_rules; i++) {
		fd = open(p->ll_rules[i].path, O_PATH | O_CLOEXEC);
		if (fd < 0) {
			rc = -errno;
			goto out;
		}
		rule.allowed_access = p->ll_rules[i].access &
		    attr.handled_access_fs;
		rule.parent_fd = fd;
		if (syscall(SYS_landlock_add_rule, rfd,
		    LANDLOCK_RULE_PATH_BENEATH, &rule, 0U) < 0)
			rc = -errno;
		(void)close(fd);
		if (rc < 0)
			goto out;
	}
	if (p->net_proxy && p->landlock_abi >= 4) {
		/* the one TCP port the program may connect to: its proxy */
		struct sb_ll_net_port_attr np = {
			.allowed_access = SB_LL_NET_CONNECT_TCP,
			.port = SB_PROXY_PORT,
		};

		if (syscall(SYS_landlock_add_rule, rfd, SB_LL_RULE_NET_PORT,
		    &np, 0U) < 0) {
			rc = -errno;
			goto out;
		}
	}
	if (syscall(SYS_landlock_restrict_self, rfd, 0U) < 0)
		rc = -errno;
 out:
	(void)close(rfd);
	return rc;
}

/*
 * Default dispositions and an empty mask: a server may ignore SIGPIPE or
 * block SIGTERM, and both would survive execve into the program.
 */
static int
reset_signals(void)
{
	struct sigaction_raw {
		void (*handler)(int);
		unsigned long flags;
		void (*restorer)(void);
		uint64_t mask;
	} dfl = { .handler = SIG_DFL };
	uint64_t none = 0;
	int sig;

	for (sig = 1; sig < SB_NSIG; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		(void)syscall(SYS_rt_sigaction, sig, &dfl, NULL, sizeof(uint64_t));
	}
	if (syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL,
	    sizeof(none)) < 0)
		return -errno;
	return 0;
}

/* Exactly n bytes of stdin (the pipe also holds the call's own stdin). */
static int
read_exact(char *buf, size_t n)
{
	ssize_t k;

	while (n > 0) {
		k = read(0, buf, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -EPIPE;
		buf += k;
		n -= (size_t)k;
	}
	return 0;
}

/*
 * The launch's buffer: set aside before the limits (see
 * SB_LAUNCH_MAX_STRINGS), the strings, then argv and envp. Untouched
 * pages cost nothing.
 */
#define LAUNCH_BUF	((size_t)SB_LAUNCH_MAX + \
	((size_t)SB_LAUNCH_MAX_STRINGS + 2) * sizeof(char *))

static char *
launch_reserve(void)
{
	char *buf = mmap(NULL, LAUNCH_BUF, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (buf == MAP_FAILED)
		child_fail(SB_FD_STATUS, SB_STAGE_EXEC, errno);
	return buf;
}

/*
 * Every layer is on: wait for the program, argv and envp (struct
 * sb_launch_head, from the server: at once, or when a sandbox built ahead
 * gets its call), then exec it, all in buf (launch_reserve(): we are a
 * vfork of the init, and past our limits). An EOF before the launch (the
 * sandbox was discarded) exits quietly.
 */
static void __attribute__((noreturn))
launch(char *buf)
{
	struct sb_launch_head h;
	struct rlimit rl;
	char *s, *end, *nul, *prog = NULL, **argv, **envp;
	size_t i;
	int rc;

	{
		struct sb_status rd = { .kind = SB_STATUS_READY };

		(void)!write(SB_FD_STATUS, &rd, sizeof(rd));
	}
	if ((rc = read_exact((char *)&h, sizeof(h))) == -EPIPE)
		_exit(0);
	if (rc < 0 || h.magic != SB_LAUNCH_MAGIC || h.len == 0 ||
	    h.len > SB_LAUNCH_MAX || h.argc == 0 ||
	    (size_t)h.argc + h.envc > SB_LAUNCH_MAX_STRINGS)
		child_fail(SB_FD_STATUS, SB_STAGE_EXEC, rc < 0 ? -rc : EINVAL);
	argv = (char **)(void *)(buf + SB_LAUNCH_MAX);
	envp = argv + h.argc + 1;
	if ((rc = read_exact(buf, h.len)) < 0)
		child_fail(SB_FD_STATUS, SB_STAGE_EXEC, -rc);
	end = buf + h.len;
	s = buf;
	for (i = 0; i < 1 + (size_t)h.argc + h.envc; i++) {
		if ((nul = memchr(s, '\0', (size_t)(end - s))) == NULL)
			child_fail(SB_FD_STATUS, SB_STAGE_EXEC, EINVAL);
		if (i == 0)
			prog = s;
		else if (i <= h.argc)
			argv[i - 1] = s;
		else
			envp[i - 1 - h.argc] = s;
		s = nul + 1;
	}
	if (s != end)
		child_fail(SB_FD_STATUS, SB_STAGE_EXEC, EINVAL);
	argv[h.argc] = NULL;
	envp[h.envc] = NULL;
	if (h.cpu_s > 0 && getrlimit(RLIMIT_CPU, &rl) == 0 &&
	    h.cpu_s < rl.rlim_cur) {
		rl.rlim_cur = rl.rlim_max = h.cpu_s;
		if (setrlimit(RLIMIT_CPU, &rl) < 0)
			child_fail(SB_FD_STATUS, SB_STAGE_RLIMITS, errno);
	}
	execve(prog, argv, envp);
	child_fail(SB_FD_STATUS, SB_STAGE_EXEC, errno);
}

/* The program's own process: signals, stdio, limits, privileges, exec. */
static void __attribute__((noreturn))
program(const struct sb_plan *p)
{
	const int st = SB_FD_STATUS;
	struct rlimit rl;
	char *buf = launch_reserve();
	size_t i;
	int rc;

	/* the session is the init's (init_run) */
	if ((rc = reset_signals()) < 0)
		child_fail(st, SB_STAGE_SESSION, -rc);
	(void)umask(SB_UMASK);
	if (dup2(SB_FD_STDIN, 0) < 0 || dup2(SB_FD_STDOUT, 1) < 0 ||
	    dup2(SB_FD_STDERR, 2) < 0 || chdir(p->cwd) < 0)
		child_fail(st, SB_STAGE_SESSION, errno);
	for (i = 0; i < p->nrlimits; i++) {
		struct rlimit cur;

		rl.rlim_cur = p->rlimits[i].soft;
		rl.rlim_max = p->rlimits[i].hard;
		/*
		 * Never above what holds already: the server may have lowered
		 * one meanwhile (a python started ahead, taken by a call with
		 * a shorter deadline: exec.c, adjust_program), and without
		 * capabilities a raise is refused. Lower is only stricter.
		 */
		if (getrlimit(p->rlimits[i].resource, &cur) == 0 &&
		    cur.rlim_max < rl.rlim_max) {
			rl.rlim_max = cur.rlim_max;
			if (rl.rlim_cur > rl.rlim_max)
				rl.rlim_cur = rl.rlim_max;
		}
		if (setrlimit(p->rlimits[i].resource, &rl) < 0)
			child_fail(st, SB_STAGE_RLIMITS, errno);
	}
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		child_fail(st, SB_STAGE_PDEATHSIG, errno);
	if ((rc = drop_caps(p->last_cap)) < 0)
		child_fail(st, SB_STAGE_CAPS, -rc);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		child_fail(st, SB_STAGE_NO_NEW_PRIVS, errno);
	if (syscall(SYS_close_range, 3U, ~0U, (unsigned)CLOSE_RANGE_CLOEXEC) < 0)
		child_fail(st, SB_STAGE_FDS, errno);
	if ((rc = apply_landlock(p)) < 0)
		child_fail(st, SB_STAGE_LANDLOCK, -rc);
	if (p->sysv_filter != NULL && syscall(SYS_seccomp,
	    SECCOMP_SET_MODE_FILTER, 0U, p->sysv_filter) < 0)
		child_fail(st, SB_STAGE_SECCOMP, errno);
	if (p->memfd_filter != NULL && syscall(SYS_seccomp,
	    SECCOMP_SET_MODE_FILTER, 0U, p->memfd_filter) < 0)
		child_fail(st, SB_STAGE_SECCOMP, errno);
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0U, p->filter) < 0)
		child_fail(st, SB_STAGE_SECCOMP, errno);
	launch(buf);
}

/*
 * Reap everything until the program exits; report its status; exit. The
 * program's high-water RSS includes the pages it shared with us before
 * execve (it is vforked), so our own is sent as a baseline.
 */
static void __attribute__((noreturn))
reap(pid_t prog, uint64_t base_kib)
{
	struct sb_status st = { .kind = SB_STATUS_EXIT, .base_kib = base_kib };
	struct rusage ru;
	int ws;
	pid_t r;

	for (;;) {
		r = wait4(-1, &ws, 0, &ru);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			child_fail(SB_FD_STATUS, SB_STAGE_INIT, errno);
		}
		if ((uint64_t)ru.ru_maxrss > st.maxrss_kib)
			st.maxrss_kib = (uint64_t)ru.ru_maxrss;
		if (r == prog)
			break;
	}
	st.wstatus = ws;
	(void)!write(SB_FD_STATUS, &st, sizeof(st));
	_exit(0);
}

/*
 * SCHED_IDLE, with the shortest time slice the kernel grants (6.12 and
 * later; before, the attribute is ignored or refused and the policy alone
 * is set). Our session's group then keeps a CPU from a waking thread of
 * the server or its client for at most that slice, not for the default
 * one (a few ms, rounded up to a tick). The program inherits both;
 * sb_finish() gives it the normal policy and slice back.
 */
static void
start_idle(void)
{
	struct sb_sched_attr a = { .size = sizeof(a),
	    .runtime = SB_IDLE_SLICE_NS };
	struct sched_param sp = { 0 };

	/* from SCHED_OTHER, or the kernel keeps its default slice for IDLE */
	a.policy = SCHED_OTHER;
	if (syscall(SYS_sched_setattr, 0, &a, 0U) == 0) {
		a.policy = SCHED_IDLE;
		if (syscall(SYS_sched_setattr, 0, &a, 0U) == 0)
			return;
	}
	(void)sched_setscheduler(0, SCHED_IDLE, &sp);
}

/* The sandbox's session; with net_proxy, its proxy listener sent out. */
static void
init_session(const struct sb_plan *p)
{
	/*
	 * The sandbox's own session, made here so that the program shares
	 * it: no controlling terminal, so no TIOCSTI into the server's; and,
	 * where the kernel shares CPU time out by session (autogroup), one
	 * group for the whole sandbox, the one start_idle lowers.
	 */
	if (setsid() < 0)
		child_fail(SB_FD_STATUS, SB_STAGE_SESSION, errno);
	if (p->start_idle) {
		start_idle();
		/* the parent weighs our session's group down on this byte */
		(void)!write(SB_FD_SYNC, "s", 1);
	}
	if (p->net_proxy) {
		/* the proxy's listening socket, for the server; see proxy_port.c */
		int lfd = sb_proxy_listen(p->net_lo_down), rc;

		if (lfd < 0)
			child_fail(SB_FD_STATUS, SB_STAGE_NETNS, -lfd);
		if ((rc = sb_send_fd(SB_FD_SYNC, lfd)) < 0)
			child_fail(SB_FD_STATUS, SB_STAGE_NETNS, -rc);
		(void)close(lfd);
	}
}

/* The run's ids, then death with the parent armed. */
static void
take_ids(const struct sb_plan *p)
{
	/*
	 * Raw system calls: glibc's set*id() in a process it believes
	 * multi-threaded broadcasts to threads this copy does not have, and
	 * waits for them forever.
	 */
	if (p->drop_groups && syscall(SYS_setgroups, 0, NULL) < 0)
		child_fail(SB_FD_STATUS, SB_STAGE_CREDENTIALS, errno);
	if (syscall(SYS_setresgid, p->gid, p->gid, p->gid) < 0 ||
	    syscall(SYS_setresuid, p->uid, p->uid, p->uid) < 0)
		child_fail(SB_FD_STATUS, SB_STAGE_CREDENTIALS, errno);
	/*
	 * Die with the parent. A credential change clears this, hence after
	 * setresuid; the parent keeps the sync pipe open for the whole run, so
	 * a hang-up now means it died before the signal was armed.
	 */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		child_fail(SB_FD_STATUS, SB_STAGE_PDEATHSIG, errno);
}

/*
 * SIGINT from the server (the only sender that matters: as pid 1 we get
 * none from inside without a handler, and inside it gains nothing that
 * kill(-1) does not give the program already): to every other process of
 * the pid namespace, as a terminal's ^C would.
 */
static void
forward_signal(int sig)
{
	int err = errno;

	(void)kill(-1, sig);
	errno = err;
}

static void __attribute__((noreturn))
init_run(const struct sb_plan *p)
{
	struct rusage ru;
	struct pollfd pfd;
	char go;
	pid_t prog;
	int rc;

	init_session(p);
	/* Still the creator's kernel ids here, while the parent maps ours. */
	open_sources(p);
	/* The parent writes our uid/gid maps, then one byte; EOF: it died. */
	if (read(SB_FD_SYNC, &go, 1) != 1)
		_exit(127);
	take_ids(p);
	pfd.fd = SB_FD_SYNC;
	pfd.events = POLLIN;
	if (!p->cg_sync && poll(&pfd, 1, 0) != 0)
		_exit(127);
	build_root(p);
	/*
	 * With a cgroup (v1: the parent moves us in while we built the root,
	 * which is our own code, not the program's), nothing of the program
	 * runs before the parent says we are in it; EOF: it died. The 'c'
	 * may have come just before it died, and before PR_SET_PDEATHSIG
	 * was armed: the hang-up after it says so, as the poll above does
	 * without a cgroup (the parent sends nothing after 'c').
	 */
	if (p->cg_sync && (read(SB_FD_SYNC, &go, 1) != 1 || go != 'c' ||
	    poll(&pfd, 1, 0) != 0))
		_exit(127);
	/*
	 * In the run's cgroup now: the root of our cgroup namespace (made
	 * at the clone, its root was the server's cgroup, exec.c says why).
	 * Still with our capabilities in our user namespace: the uid we
	 * took was never its root.
	 */
	if (p->cg_sync && unshare(CLONE_NEWCGROUP) < 0)
		child_fail(SB_FD_STATUS, SB_STAGE_CGROUP, errno);
	(void)close(SB_FD_SYNC);
	/* the trees and the bind sources: mounted by now */
	(void)syscall(SYS_close_range, (unsigned)SB_FD_TREE, ~0U, 0U);
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		child_fail(SB_FD_STATUS, SB_STAGE_INIT, errno);
	/*
	 * Nothing more needs a capability (the program only lowers limits
	 * and restricts itself): none is left when the program starts, so it
	 * never sees a pid 1 that holds one.
	 */
	if ((rc = drop_caps(p->last_cap)) < 0)
		child_fail(SB_FD_STATUS, SB_STAGE_CAPS, -rc);
	/*
	 * vfork: the program borrows our memory until its execve instead of
	 * copying the page tables of a (copied) server; program() never
	 * returns, and we are suspended until it has exec'd or exited.
	 */
	if (getrusage(RUSAGE_SELF, &ru) < 0)
		ru.ru_maxrss = 0;
	prog = vfork();
	if (prog < 0)
		child_fail(SB_FD_STATUS, SB_STAGE_INIT, errno);
	if (prog == 0)
		program(p);
	{
		struct sb_status fk = { .kind = SB_STATUS_FORKED };
		struct sigaction sa = { .sa_handler = forward_signal };
		sigset_t intr;

		/* a session's interrupt (exec.c, sb_turn), to everyone; the
		 * server's threads block it, and we inherited that */
		(void)sigaction(SIGINT, &sa, NULL);
		(void)sigemptyset(&intr);
		(void)sigaddset(&intr, SIGINT);
		(void)sigprocmask(SIG_UNBLOCK, &intr, NULL);
		(void)!write(SB_FD_STATUS, &fk, sizeof(fk));
	}
	(void)close(SB_FD_STDOUT);
	(void)close(SB_FD_STDERR);
	(void)close(SB_FD_STDIN);
	reap(prog, (uint64_t)ru.ru_maxrss);
}

int
main(int argc, char **argv)
{
	struct sock_fprog filter = {
		.len = sb_bpf_len,
		.filter = (struct sock_filter *)(uintptr_t)sb_bpf_insns,
	};
	const struct sb_filters f = {
		.main = &filter, .sysv = &sb_sysv_deny, .memfd = &sb_memfd_deny,
	};
	struct sb_plan *p;
	int rc;

	(void)argc;
	(void)argv;
	/* run by hand, not by mcp-sandbox: nothing at SB_FD_PLAN */
	if (fcntl(SB_FD_PLAN, F_GETFD) < 0 || fcntl(SB_FD_STATUS, F_GETFD) < 0) {
		static const char msg[] = "mcp-sandbox-init: the init of "
		    "mcp-sandbox's sandboxes, started by it only\n";

		(void)!write(2, msg, sizeof(msg) - 1);
		return 2;
	}
	(void)prctl(PR_SET_NAME, sb_init_name, 0, 0, 0);
	if ((rc = sb_plan_unpack(SB_FD_PLAN, &f, &p)) < 0)
		child_fail(SB_FD_STATUS, SB_STAGE_INIT, -rc);
	(void)close(SB_FD_PLAN);
	init_run(p);
}
