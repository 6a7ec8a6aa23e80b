/*
 * cgroup_dir: what both cgroup versions share, below cgroup.c and the
 * setup of each version (cgroup_v1.c, cgroup_v2.c): small-file access,
 * killing what a cgroup holds and removing it once empty, finding the
 * server's own cgroup, making the server's dir and holding its flock, and
 * removing the dirs of dead servers: a dir of our prefix whose lock can
 * be taken exclusively (its server's went with it), and only those.
 *
 * Host paths, written for a sandbox: every directory is reached from an
 * fd (openat, O_NOFOLLOW); a sandbox has no cgroupfs.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"

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
int
sb_cg_remove_when_empty(int parent, const char *name)
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
void
sb_cg_kill_all(int version, int dirfd)
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
			sb_cg_kill_all(version, sub);
		(void)close(sub);
		if (ok && sb_cg_remove_when_empty(fd, de->d_name) < 0)
			ok = 0;
	}
	(void)closedir(d);
	/*
	 * Removed while our lock is still on it: a server that made a dir
	 * of this name just now waits in its flock until we are done, then
	 * finds it gone and makes it again (sb_cg_make_own_dir). Unlocked
	 * first, it would take the lock, find the dir still there and use
	 * it, and we would remove it under it (its first run's mkdir then
	 * fails with ENOENT: seen with four CLIs started at once).
	 */
	ok = ok && unlinkat(base, name, AT_REMOVEDIR) == 0;
	(void)close(fd);
	return ok;
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
