/*
 * cgroup: one cgroup per run, so that memory (shared memory, memfd and
 * tmpfs pages included, no swap), processes and CPU are bounded for the
 * run as a whole, not per process as rlimits are. This file: the per-run
 * part (a run's cgroup, its limits, its accounting, its removal), the
 * context's start and end, and what both versions share; the setup of
 * each version, finding or making the server's own dir, is in
 * cgroup_v1.c and cgroup_v2.c (cgroup.h between them).
 *
 * Where: under a directory of the server's own, "mcp-sandbox.<pid>.<n>.<r>"
 * (r random: unique across pid namespaces; the pid is for people, never
 * a proof), holding "run.<seq>" per run. The server holds a shared flock
 * on that directory for its life: the one proof that it lives, which
 * holds across pid namespaces and goes when it dies.
 *
 * A run joins its cgroup before its program can run: on v2 its init is
 * cloned into it (CLONE_INTO_CGROUP), on v1 the parent writes the init's
 * pid into each cgroup.procs before releasing it (exec.c). After the init
 * is reaped, its cgroup is empty and removed. At start, the cgroups of
 * servers that died (SIGKILL) are removed, and only those: a dir of our
 * prefix whose lock we can take exclusively (its server's went with it).
 *
 * Host paths, written for a sandbox: every directory is reached from an fd
 * of the server's own dir (openat, O_NOFOLLOW); a sandbox has no cgroupfs
 * and cannot move itself out (no mount, no capability, seccomp).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"

/* A run's directory: prefix, then a sequence number. */
#define SB_CG_RUN_PREFIX	"run."
/* Tasks of ours in a run's cgroup besides the program's: the init. */
#define SB_CG_INIT_TASKS	1
/*
 * The CPU bound of a run: one CPU's worth of time per period, whatever
 * its threads, so that a run cannot take every core from the server and
 * the other runs. The period is the kernel's default.
 */
#define SB_CG_CPU_PERIOD_US	100000
#define SB_CG_CPU_QUOTA_US	100000
/*
 * How long removing a cgroup waits for its processes to be gone: killed
 * ones (our own run's, which is never needed once its init is reaped) or,
 * at start, a dead server's sandboxes dying by PR_SET_PDEATHSIG.
 */
#define SB_CG_EMPTY_WAIT_MS	2000
#define SB_CG_EMPTY_STEP_US	1000
/*
 * Times the server makes its dir again when another server's start took
 * it for a dead one's and removed it before our lock was on it (between
 * our mkdir and our flock): once is the race, a few more and something
 * else removes it.
 */
#define SB_CG_MAKE_TRIES	3

const char *const sb_cg_ctl_names[SB_CG_NCTL] = {
	[SB_CG_MEMORY] = "memory",
	[SB_CG_PIDS] = "pids",
	[SB_CG_CPU] = "cpu",
};

static void
close_fd(int *fd)
{
	if (*fd >= 0)
		(void)close(*fd);
	*fd = -1;
}

/* Reads a small file at dirfd/name, NUL-terminated; bytes or -errno. */
ssize_t
sb_cg_read_at(int dirfd, const char *name, char *buf, size_t len)
{
	ssize_t n, got = 0;
	int fd, err;

	if ((fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return -errno;
	while ((size_t)got < len - 1) {
		n = read(fd, buf + got, len - 1 - (size_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = errno;
			(void)close(fd);
			return -err;
		}
		if (n == 0)
			break;
		got += n;
	}
	(void)close(fd);
	buf[got] = '\0';
	return got;
}

/* Writes s to dirfd/name in one write(); 0 or -errno. */
int
sb_cg_write_at(int dirfd, const char *name, const char *s)
{
	size_t len = strlen(s);
	ssize_t n;
	int fd, rc = 0;

	if ((fd = openat(dirfd, name, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return -errno;
	do
		n = write(fd, s, len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		rc = -errno;
	else if ((size_t)n != len)
		rc = -EIO;
	(void)close(fd);
	return rc;
}

static int
write_u64_at(int dirfd, const char *name, uint64_t v)
{
	char s[24];

	(void)snprintf(s, sizeof(s), "%llu", (unsigned long long)v);
	return sb_cg_write_at(dirfd, name, s);
}

/* The value of "key N" in a flat-keyed file (memory.events, ...). */
static uint64_t
keyed_value(int dirfd, const char *file, const char *key)
{
	char buf[SB_CG_READ_MAX], *line, *save = NULL;
	size_t klen = strlen(key);

	if (sb_cg_read_at(dirfd, file, buf, sizeof(buf)) <= 0)
		return 0;
	for (line = strtok_r(buf, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save))
		if (strncmp(line, key, klen) == 0 && line[klen] == ' ')
			return strtoull(line + klen + 1, NULL, 10);
	return 0;
}

static uint64_t
value_at(int dirfd, const char *file)
{
	char buf[32];

	if (sb_cg_read_at(dirfd, file, buf, sizeof(buf)) <= 0)
		return 0;
	return strtoull(buf, NULL, 10);
}

int
sb_cg_open_dir_at(int dirfd, const char *name)
{
	return openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC |
	    O_NOFOLLOW);
}

/* True while the cgroup at dirfd has a process (cgroup.procs not empty). */
bool
sb_cg_populated(int dirfd)
{
	char buf[8];

	return sb_cg_read_at(dirfd, "cgroup.procs", buf, sizeof(buf)) > 0;
}

static void
pause_step(void)
{
	struct timespec ts = { 0, SB_CG_EMPTY_STEP_US * 1000L };

	(void)nanosleep(&ts, NULL);
}

/*
 * rmdir parent/name once it has no process, waiting up to
 * SB_CG_EMPTY_WAIT_MS for them to be gone. 0 or -errno.
 */
static int
remove_when_empty(int parent, const char *name)
{
	unsigned waited;
	int fd, rc;

	for (waited = 0;; waited++) {
		if (unlinkat(parent, name, AT_REMOVEDIR) == 0 ||
		    errno == ENOENT)
			return 0;
		rc = -errno;
		if (rc != -EBUSY ||
		    waited * SB_CG_EMPTY_STEP_US >= SB_CG_EMPTY_WAIT_MS * 1000u)
			return rc;
		if ((fd = sb_cg_open_dir_at(parent, name)) < 0)
			return -errno;
		if (!sb_cg_populated(fd)) {
			/* empty, yet busy: a child cgroup, not ours to wait */
			(void)close(fd);
			return rc;
		}
		(void)close(fd);
		pause_step();
	}
}

/*
 * Kills every process in the cgroup at dirfd. v2: cgroup.kill. v1: each
 * pid in cgroup.procs through a pidfd taken before checking that pid is
 * still listed, so a pid reused meanwhile is never signalled.
 */
static void
kill_all(int version, int dirfd)
{
	char buf[SB_CG_READ_MAX], again[SB_CG_READ_MAX], *p, *end, key[24];
	long pid;
	int pfd;

	if (version == 2 && sb_cg_write_at(dirfd, "cgroup.kill", "1") == 0)
		return;
	if (sb_cg_read_at(dirfd, "cgroup.procs", buf, sizeof(buf)) <= 0)
		return;
	for (p = buf; *p != '\0'; p = end) {
		pid = strtol(p, &end, 10);
		if (end == p)
			break;
		while (*end == '\n')
			end++;
		if (pid <= 0)
			continue;
		if ((pfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0U)) < 0)
			continue;
		(void)snprintf(key, sizeof(key), "\n%ld\n", pid);
		again[0] = '\n';	/* each line between \n */
		if (sb_cg_read_at(dirfd, "cgroup.procs", again + 1,
		    sizeof(again) - 1) > 0 && strstr(again, key) != NULL)
			(void)syscall(SYS_pidfd_send_signal, pfd, SIGKILL, NULL,
			    0U);
		(void)close(pfd);
	}
}

/*
 * The dir name under base of a server that is gone: its lock is free
 * (a live server holds it shared, from before it makes anything in it,
 * across pid namespaces; its forked children share it). What is left in
 * each child cgroup is killed (a dead server's sandboxes die by
 * PDEATHSIG anyway), the children removed, then the dir. A v2 leaf with
 * a process, or a child that has children, and the dir is left alone.
 * Returns 1 if removed.
 */
static int
remove_stale(int version, int base, const char *name)
{
	struct dirent *de;
	DIR *d;
	int fd, dfd, sub, ok = 1;

	if ((fd = sb_cg_open_dir_at(base, name)) < 0)
		return 0;
	/* CLOEXEC: another thread may fork and exec while we read it */
	if (flock(fd, LOCK_EX | LOCK_NB) < 0 ||
	    (dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0) {
		(void)close(fd);
		return 0;
	}
	if ((d = fdopendir(dfd)) == NULL) {
		(void)close(dfd);
		(void)close(fd);
		return 0;
	}
	while (ok && (de = readdir(d)) != NULL) {
		if (de->d_type != DT_DIR || strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if ((sub = sb_cg_open_dir_at(fd, de->d_name)) < 0) {
			ok = 0;
			break;
		}
		if (version == 2 && strcmp(de->d_name, SB_CG_SERVER_LEAF) == 0)
			ok = !sb_cg_populated(sub);
		else
			kill_all(version, sub);
		(void)close(sub);
		if (ok && remove_when_empty(fd, de->d_name) < 0)
			ok = 0;
	}
	(void)closedir(d);
	(void)close(fd);
	return ok && unlinkat(base, name, AT_REMOVEDIR) == 0;
}

/* Removes the dirs of dead servers under base (any name of ours but
 * own: names prove nothing, the lock does); how many. */
unsigned
sb_cg_clean_stale(int version, int base, const char *own)
{
	struct dirent *de;
	unsigned n = 0;
	DIR *d;
	int dfd;

	if ((dfd = fcntl(base, F_DUPFD_CLOEXEC, 0)) < 0)
		return 0;
	if ((d = fdopendir(dfd)) == NULL) {
		(void)close(dfd);
		return 0;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_type != DT_DIR || strcmp(de->d_name, own) == 0 ||
		    strncmp(de->d_name, SB_CG_PREFIX,
		    sizeof(SB_CG_PREFIX) - 1) != 0)
			continue;
		n += (unsigned)remove_stale(version, base, de->d_name);
	}
	(void)closedir(d);
	return n;
}

/*
 * This process's cgroup path in the hierarchy whose /proc/self/cgroup
 * controller list holds ctl (v1; ctl NULL: the v2 line "0::"). mnt gets
 * the list (the hierarchy's directory under /sys/fs/cgroup). 0 or -1.
 */
int
sb_cg_own_path(const char *ctl, char *mnt, size_t mntlen, char *path,
    size_t pathlen)
{
	char buf[SB_CG_READ_MAX], list[128], *line, *save = NULL, *c, *s2;
	char *p1, *p2;

	if (sb_cg_read_at(AT_FDCWD, "/proc/self/cgroup", buf, sizeof(buf)) <= 0)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if ((p1 = strchr(line, ':')) == NULL ||
		    (p2 = strchr(p1 + 1, ':')) == NULL || p2[1] != '/')
			continue;
		*p2 = '\0';
		if (ctl == NULL) {
			/* "0::/path": hierarchy 0, no controller list */
			if (p1 != line + 1 || line[0] != '0' || p2 != p1 + 1)
				continue;
			mnt[0] = '\0';
		} else {
			if ((size_t)(p2 - p1) >= sizeof(list) ||
			    (size_t)(p2 - p1) > mntlen)
				continue;
			(void)snprintf(list, sizeof(list), "%s", p1 + 1);
			s2 = NULL;
			for (c = strtok_r(list, ",", &s2); c != NULL;
			    c = strtok_r(NULL, ",", &s2))
				if (strcmp(c, ctl) == 0)
					break;
			if (c == NULL)
				continue;
			(void)snprintf(mnt, mntlen, "%s", p1 + 1);
		}
		if (strlen(p2 + 1) >= pathlen)
			return -1;
		(void)snprintf(path, pathlen, "%s", p2 + 1);
		return 0;
	}
	return -1;
}

/* Opens a cgroup directory by absolute path and checks its filesystem. */
int
sb_cg_open_fs(const char *path, long magic)
{
	struct statfs sf;
	int fd;

	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -errno;
	if (fstatfs(fd, &sf) < 0 || sf.f_type != magic) {
		(void)close(fd);
		return -ENOTDIR;
	}
	return fd;
}

/*
 * Makes the server's dir, name under base, and holds a shared flock on
 * it for the server's life (the lock goes with the fd, in cg_release).
 * Another server's sb_cg_clean_stale may take its lock between our mkdir and
 * ours, and remove it: the lock waits for that one to finish, and if
 * name is no longer the dir we locked, it is made again. The fd, or
 * -errno.
 */
int
sb_cg_make_own_dir(int base, const char *name)
{
	struct stat a, b;
	int fd, tries, e;

	for (tries = 0; tries < SB_CG_MAKE_TRIES; tries++) {
		if (mkdirat(base, name, 0755) < 0)
			return -errno;
		if ((fd = sb_cg_open_dir_at(base, name)) < 0) {
			if (errno == ENOENT)
				continue;
			return -errno;
		}
		while ((e = flock(fd, LOCK_SH)) < 0 && errno == EINTR)
			;
		if (e < 0) {
			e = errno;
			(void)close(fd);
			(void)unlinkat(base, name, AT_REMOVEDIR);
			return -e;
		}
		if (fstat(fd, &a) == 0 && fstatat(base, name, &b,
		    AT_SYMLINK_NOFOLLOW) == 0 && a.st_dev == b.st_dev &&
		    a.st_ino == b.st_ino)
			return fd;
		(void)close(fd);
	}
	return -EAGAIN;
}

void
sb_cg_why(struct sb_cgroups *cg, const char *fix, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(cg->info.why, sizeof(cg->info.why), fmt, ap);
	va_end(ap);
	(void)snprintf(cg->info.fix, sizeof(cg->info.fix), "%s", fix);
}

static bool
host_has_swap(void)
{
	char buf[512];

	/* the header line only: no swap device or file */
	return sb_cg_read_at(AT_FDCWD, "/proc/swaps", buf, sizeof(buf)) > 0 &&
	    strchr(buf, '\n') != NULL && strchr(buf, '\n')[1] != '\0';
}

static void
cg_release(struct sb_cgroups *cg)
{
	int c;

	if (cg->version == 2 && cg->have[SB_CG_MEMORY])
		sb_cg_v2_restore(cg);
	for (c = 0; c < SB_CG_NCTL; c++) {
		if (cg->dir[c] >= 0 && cg->base[c] >= 0 && cg->version == 1)
			(void)unlinkat(cg->base[c], cg->name, AT_REMOVEDIR);
		close_fd(&cg->dir[c]);
		close_fd(&cg->base[c]);
		cg->have[c] = false;
	}
}

int
sb_cgroup_init(struct sb_cgroups *cg, const struct sb_config *cfg,
    struct sb_result *res)
{
	/* the one count a process shares: its contexts' names differ */
	static atomic_uint contexts;

	struct statfs sf;
	uint64_t rnd;
	int c, rc = 0;

	memset(cg, 0, sizeof(*cg));
	for (c = 0; c < SB_CG_NCTL; c++)
		cg->dir[c] = cg->base[c] = -1;
	atomic_init(&cg->seq, 0);
	if (cfg->cgroup == SB_CGROUP_OFF) {
		sb_cg_why(cg, "leave sb_config.cgroup at SB_CGROUP_AUTO",
		    "turned off (sb_config.cgroup is SB_CGROUP_OFF)");
		return 0;
	}
	/* unique across pid namespaces sharing a base: random bits */
	if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd))
		rnd = (uint64_t)time(NULL) << 20;
	(void)snprintf(cg->name, sizeof(cg->name), SB_CG_PREFIX
	    "%ld.%u.%016llx", (long)getpid(), atomic_fetch_add(&contexts, 1),
	    (unsigned long long)rnd);
	if (statfs(SB_CG_MNT, &sf) < 0) {
		sb_cg_why(cg, "mount cgroup2 at " SB_CG_MNT " (a container: "
		    "give it its cgroup filesystem)", "no cgroup filesystem "
		    "at " SB_CG_MNT ": %s", strerror(errno));
		rc = -ENOENT;
	} else if (sf.f_type == CGROUP2_SUPER_MAGIC) {
		cg->version = 2;
		rc = sb_cg_v2_init(cg, cfg);
	} else {
		cg->version = 1;
		rc = sb_cg_v1_init(cg);
	}
	if (rc < 0) {
		cg_release(cg);
		cg->version = 0;
	} else {
		cg->no_swap = !host_has_swap();
	}
	cg->info.cgroup_version = cg->version;
	cg->info.memory = cg->have[SB_CG_MEMORY];
	cg->info.pids = cg->have[SB_CG_PIDS];
	cg->info.cpu = cg->have[SB_CG_CPU];
	cg->info.swap_off = cg->version != 0 && (cg->memsw || cg->no_swap);
	if (cg->version != 0 && !cg->have[SB_CG_CPU])
		sb_cg_why(cg, cg->version == 1 ? "mount the v1 cpu hierarchy" :
		    "delegate the cpu controller too", "no cpu controller in "
		    "reach: CPU time is bounded by RLIMIT_CPU per process");
	if (rc < 0 && cfg->cgroup == SB_CGROUP_REQUIRED) {
		sb_fail(res, SB_STAGE_CGROUP, -rc, cg->info.why);
		return rc;
	}
	return 0;
}

void
sb_cgroup_fini(struct sb_cgroups *cg)
{
	cg_release(cg);
}

void
sb_cg_run_init(struct sb_cg_run *r)
{
	int c;

	memset(r, 0, sizeof(*r));
	for (c = 0; c < SB_CG_NCTL; c++)
		r->dir[c] = -1;
	r->oom_efd = -1;
}

/*
 * v1 has no memory.oom.group: the kernel kills one process at the limit
 * and the rest run on. An eventfd on memory.oom_control tells exec.c,
 * which then ends the whole run as v2 does.
 */
static int
oom_event(struct sb_cg_run *r)
{
	char line[32];
	int ofd, rc;

	if ((r->oom_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
		return -errno;
	if ((ofd = openat(r->dir[SB_CG_MEMORY], "memory.oom_control",
	    O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return -errno;
	(void)snprintf(line, sizeof(line), "%d %d", r->oom_efd, ofd);
	rc = sb_cg_write_at(r->dir[SB_CG_MEMORY], "cgroup.event_control", line);
	(void)close(ofd);
	return rc;
}

/* The limits of one controller's run cgroup (v1), or all of them (v2). */
static int
set_limits(struct sb_cgroups *cg, int c, int fd, struct sb_cg_run *r,
    const char **what)
{
	char cpu[48];
	int rc;

	if (cg->version == 2) {
		*what = "memory.max";
		if ((rc = write_u64_at(fd, "memory.max", r->mem_bytes)) < 0)
			return rc;
		*what = "memory.swap.max";
		if (cg->memsw && (rc = sb_cg_write_at(fd, "memory.swap.max",
		    "0")) < 0)
			return rc;
		/* out of memory: the whole run goes, not one process */
		*what = "memory.oom.group";
		if ((rc = sb_cg_write_at(fd, "memory.oom.group", "1")) < 0)
			return rc;
		*what = "pids.max";
		if ((rc = write_u64_at(fd, "pids.max", r->pids_max)) < 0)
			return rc;
		*what = "cpu.max";
		(void)snprintf(cpu, sizeof(cpu), "%u %u", SB_CG_CPU_QUOTA_US,
		    SB_CG_CPU_PERIOD_US);
		if (cg->have[SB_CG_CPU] && (rc = sb_cg_write_at(fd, "cpu.max",
		    cpu)) < 0)
			return rc;
		return 0;
	}
	switch (c) {
	case SB_CG_MEMORY:
		*what = "memory.limit_in_bytes";
		if ((rc = write_u64_at(fd, "memory.limit_in_bytes",
		    r->mem_bytes)) < 0)
			return rc;
		/* memory + swap no more than memory: no swap */
		*what = "memory.memsw.limit_in_bytes";
		if (cg->memsw && (rc = write_u64_at(fd,
		    "memory.memsw.limit_in_bytes", r->mem_bytes)) < 0)
			return rc;
		if (!cg->memsw)
			(void)sb_cg_write_at(fd, "memory.swappiness", "0");
		return 0;
	case SB_CG_PIDS:
		*what = "pids.max";
		return write_u64_at(fd, "pids.max", r->pids_max);
	case SB_CG_CPU:
		*what = "cpu.cfs_quota_us";
		if ((rc = write_u64_at(fd, "cpu.cfs_period_us",
		    SB_CG_CPU_PERIOD_US)) < 0)
			return rc;
		return write_u64_at(fd, "cpu.cfs_quota_us", SB_CG_CPU_QUOTA_US);
	default:
		return -EINVAL;
	}
}

int
sb_cg_run_make(struct sb_cgroups *cg, const struct sb_limits *l,
    struct sb_cg_run *r, struct sb_result *res)
{
	const char *what = "mkdir";
	char msg[160];
	int c, fd, rc;

	sb_cg_run_init(r);
	if (cg->version == 0)
		return 0;
	(void)snprintf(r->name, sizeof(r->name), SB_CG_RUN_PREFIX "%u",
	    atomic_fetch_add(&cg->seq, 1));
	r->mem_bytes = l->memory_bytes;
	r->pids_max = l->nproc + SB_CG_INIT_TASKS;
	r->made = true;
	for (c = 0; c < SB_CG_NCTL; c++) {
		if (cg->dir[c] < 0 || (cg->version == 1 && !cg->have[c]))
			continue;
		what = "mkdir";
		if (mkdirat(cg->dir[c], r->name, 0755) < 0 ||
		    (fd = sb_cg_open_dir_at(cg->dir[c], r->name)) < 0) {
			rc = -errno;
			goto fail;
		}
		r->dir[c] = fd;
		if ((rc = set_limits(cg, c, fd, r, &what)) < 0)
			goto fail;
	}
	what = "cgroup.event_control";
	c = SB_CG_MEMORY;	/* the message's; the loop left c past all */
	if (cg->version == 1 && (rc = oom_event(r)) < 0)
		goto fail;
	return 0;
 fail:
	(void)snprintf(msg, sizeof(msg), "%.40s %.63s/%.31s", what,
	    cg->version == 1 ?
	    sb_cg_ctl_names[c] : cg->name, r->name);
	sb_fail(res, SB_STAGE_CGROUP, -rc, msg);
	sb_cg_run_remove(cg, r);
	return rc;
}

int
sb_cg_run_attach(struct sb_cgroups *cg, struct sb_cg_run *r, pid_t pid,
    struct sb_result *res)
{
	char msg[128];
	int c, rc;

	for (c = 0; c < SB_CG_NCTL; c++) {
		if (r->dir[c] < 0)
			continue;
		if ((rc = write_u64_at(r->dir[c], "cgroup.procs",
		    (uint64_t)pid)) < 0) {
			(void)snprintf(msg, sizeof(msg), "joining %.63s/%.31s",
			    cg->version == 1 ? sb_cg_ctl_names[c] : cg->name,
			    r->name);
			sb_fail(res, SB_STAGE_CGROUP, -rc, msg);
			return rc;
		}
	}
	return 0;
}

/*
 * oom_fired: the v1 OOM eventfd woke the supervisor, which then killed the
 * run; the kernel may then find its victim already dying and count no
 * OOM kill, yet the run did reach its limit.
 */
void
sb_cg_run_finish(struct sb_cgroups *cg, struct sb_cg_run *r,
    bool oom_fired, struct sb_result *res)
{
	int mem = r->dir[SB_CG_MEMORY];
	int pids = cg->version == 2 ? mem : r->dir[SB_CG_PIDS];

	if (!r->made)
		return;
	res->cgroup = true;
	res->memory_limit_bytes = r->mem_bytes;
	res->pids_limit = r->pids_max - SB_CG_INIT_TASKS;
	if (cg->version == 2) {
		res->memory_peak_bytes = value_at(mem, "memory.peak");
		res->oom_kills = (uint32_t)keyed_value(mem, "memory.events",
		    "oom_kill");
		/* "oom": the limit was reached and an allocation would fail */
		res->oom = res->oom_kills > 0 ||
		    keyed_value(mem, "memory.events", "oom") > 0;
	} else {
		res->memory_peak_bytes = value_at(mem,
		    "memory.max_usage_in_bytes");
		res->oom_kills = (uint32_t)keyed_value(mem,
		    "memory.oom_control", "oom_kill");
		res->oom = res->oom_kills > 0 || oom_fired;
	}
	if (pids >= 0)
		res->forks_refused = keyed_value(pids, "pids.events", "max");
	sb_cg_run_remove(cg, r);
}

void
sb_cg_run_remove(struct sb_cgroups *cg, struct sb_cg_run *r)
{
	int c;

	if (!r->made)
		return;
	for (c = 0; c < SB_CG_NCTL; c++) {
		if (r->dir[c] < 0)
			continue;
		if (unlinkat(cg->dir[c], r->name, AT_REMOVEDIR) < 0 &&
		    errno == EBUSY) {
			kill_all(cg->version, r->dir[c]);
			(void)remove_when_empty(cg->dir[c], r->name);
		}
		close_fd(&r->dir[c]);
	}
	close_fd(&r->oom_efd);
	r->made = false;
}

void
sb_ctx_bounds(const struct sb_ctx *ctx, struct sb_bounds *b)
{
	*b = ctx->cg.info;
}
