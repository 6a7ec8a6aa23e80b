/*
 * uids: a root server's per-slot kernel uids (sb_config.uid_slots). A run
 * takes a free slot and runs as base + slot, so that the kernel's per-uid
 * counters (inotify instances and watches, pipe buffer pages, and the
 * parent levels of the rlimit counts) are not one pool for every sandbox.
 * Sessions share a workspace across slots, and its files must keep one
 * owner on disk (the context's uid): each slot has a user namespace
 * swapping that uid and the slot's (every other id kept), which the
 * workspace's mount is id-mapped with (exec.c). At start the range is checked unused: no
 * passwd entry, no /etc/subuid range over it, no process of it, nothing
 * in uid_check_dir owned by it; a server without a range of its own takes
 * the first block of SB_MAX_UID_SLOTS uids that no other server holds (a
 * lock file in /run) and nothing uses; an explicit range is locked too
 * (SB_UID_RANGE_LOCK), and refused when another server holds a uid of it. A slot is given back only when its run's
 * init was reaped (the pid namespace, and every process of the run, gone).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"

/* One line of /etc/passwd or /etc/subuid, or of /proc/PID/status. */
#define SB_UIDS_LINE		1024

static bool
in_range(unsigned long v, uid_t base, unsigned n)
{
	return v >= base && v - base < n;
}

/* passwd: "name:x:UID:..."; subuid: "name:START:COUNT". */
static int
file_uses(const char *path, bool subuid, uid_t base, unsigned n,
    char *why, size_t len)
{
	char line[SB_UIDS_LINE], *f;
	unsigned long a, c;
	FILE *fp;
	int hit = 0;

	if ((fp = fopen(path, "re")) == NULL)
		return 0;	/* no such file: nothing named there */
	while (!hit && fgets(line, sizeof(line), fp) != NULL) {
		if ((f = strchr(line, ':')) == NULL)
			continue;
		if (!subuid && (f = strchr(f + 1, ':')) == NULL)
			continue;
		a = strtoul(f + 1, &f, 10);
		if (subuid) {
			if (*f != ':')
				continue;
			c = strtoul(f + 1, NULL, 10);
			hit = a < (unsigned long)base + n && a + c > base;
		} else {
			hit = in_range(a, base, n);
		}
		if (hit)
			(void)snprintf(why, len, "%s names it: %.*s", path,
			    (int)strcspn(line, ":"), line);
	}
	(void)fclose(fp);
	return hit;
}

static int
procs_use(uid_t base, unsigned n, char *why, size_t len)
{
	char path[300], buf[SB_UIDS_LINE], *u;
	struct dirent *e;
	unsigned long v;
	ssize_t r;
	int fd, i, hit = 0;
	DIR *d;

	if ((d = opendir("/proc")) == NULL)
		return 0;
	while (!hit && (e = readdir(d)) != NULL) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		(void)snprintf(path, sizeof(path), "/proc/%s/status",
		    e->d_name);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		r = read(fd, buf, sizeof(buf) - 1);
		(void)close(fd);
		if (r <= 0)
			continue;
		buf[r] = '\0';
		if ((u = strstr(buf, "\nUid:")) == NULL)
			continue;
		u += 5;
		for (i = 0; i < 4 && !hit; i++) {
			v = strtoul(u, &u, 10);
			hit = in_range(v, base, n);
		}
		if (hit)
			(void)snprintf(why, len, "process %.32s runs as it",
			    e->d_name);
	}
	(void)closedir(d);
	return hit;
}

static int
dir_uses(const char *dir, uid_t base, unsigned n, char *why, size_t len)
{
	struct dirent *e;
	struct stat st;
	int hit = 0;
	DIR *d;

	if (dir == NULL || (d = opendir(dir)) == NULL)
		return 0;
	while (!hit && (e = readdir(d)) != NULL)
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) ==
		    0 && in_range(st.st_uid, base, n)) {
			hit = 1;
			(void)snprintf(why, len, "%.120s/%.64s is owned by it", dir,
			    e->d_name);
		}
	(void)closedir(d);
	return hit;
}

static int
write_map(pid_t pid, const char *file, const char *map)
{
	char path[64];
	ssize_t w;
	int fd;

	(void)snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
		return -errno;
	w = write(fd, map, strlen(map));
	(void)close(fd);
	return w == (ssize_t)strlen(map) ? 0 : w < 0 ? -errno : -EIO;
}

/* The last id a map may name (4294967295 is (uid_t)-1, never an id). */
#define SB_ID_LAST		4294967294UL

/*
 * "disk <-> slot" swapped, every other id to itself: a file of any other
 * owner keeps its owner through the mapping (the kernel refuses writes to
 * an inode whose uid or gid the mapping lacks, HAS_UNMAPPED_ID).
 */
static void
swap_map(char *buf, size_t len, unsigned long a, unsigned long b)
{
	unsigned long lo = a < b ? a : b, hi = a < b ? b : a;
	int n = 0;

	if (lo > 0)
		n += snprintf(buf + n, len - (size_t)n, "0 0 %lu\n", lo);
	n += snprintf(buf + n, len - (size_t)n, "%lu %lu 1\n", lo, hi);
	if (hi - lo > 1)
		n += snprintf(buf + n, len - (size_t)n, "%lu %lu %lu\n",
		    lo + 1, lo + 1, hi - lo - 1);
	n += snprintf(buf + n, len - (size_t)n, "%lu %lu 1\n", hi, lo);
	if (hi < SB_ID_LAST)
		(void)snprintf(buf + n, len - (size_t)n, "%lu %lu %lu\n",
		    hi + 1, hi + 1, SB_ID_LAST - hi);
}

/*
 * The id mapping of a slot's workspace: a user namespace whose uid map
 * swaps disk and slot and keeps every other uid, and whose gid map keeps
 * every gid. A helper child unshares it and waits; we map it, keep an fd
 * of it, and let the helper go.
 */
static int
idmap_userns(uid_t disk, uid_t slot)
{
	char map[256], path[64], c = 0;
	int go[2], ready[2], fd = -1, rc, ws;
	pid_t pid;

	if (pipe2(go, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(ready, O_CLOEXEC) < 0) {
		rc = -errno;
		(void)close(go[0]);
		(void)close(go[1]);
		return rc;
	}
	pid = fork();
	if (pid == 0) {
		/* async-signal-safe calls only: we may be a threaded copy */
		(void)close(go[1]);	/* or its EOF would never come */
		(void)close(ready[0]);
		if (unshare(CLONE_NEWUSER) < 0 || write(ready[1], "r", 1) != 1)
			_exit(1);
		(void)!read(go[0], &c, 1);	/* EOF: we are done */
		_exit(0);
	}
	(void)close(ready[1]);
	(void)close(go[0]);
	rc = pid < 0 ? -errno : 0;
	if (rc == 0 && read(ready[0], &c, 1) != 1)
		rc = -ECHILD;
	if (rc == 0) {
		swap_map(map, sizeof(map), disk, slot);
		rc = write_map(pid, "uid_map", map);
	}
	if (rc == 0) {
		(void)snprintf(map, sizeof(map), "0 0 %lu\n", SB_ID_LAST + 1);
		rc = write_map(pid, "gid_map", map);
	}
	if (rc == 0) {
		(void)snprintf(path, sizeof(path), "/proc/%d/ns/user",
		    (int)pid);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			rc = -errno;
	}
	(void)close(go[1]);
	(void)close(ready[0]);
	if (pid > 0)
		while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
			;
	return rc < 0 ? rc : fd;
}

/*
 * Block k of the default range, locked for this process's life: another
 * server on the host takes another block (the kernel drops the lock when
 * the fd's last holder goes). -1 and errno when another holds it.
 */
static int
lock_block(unsigned k)
{
	char path[64];
	int fd;

	(void)snprintf(path, sizeof(path), SB_UID_LOCK_FMT, k);
	if ((fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
	    0600)) < 0)
		return -1;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		(void)close(fd);
		return -1;
	}
	return fd;
}

/*
 * An explicit range base..base+n-1, locked for this process's life (see
 * SB_UID_RANGE_LOCK): 0, or -errno with why set (EADDRINUSE: another
 * server holds a uid of it).
 */
static int
lock_range(struct sb_uid_pool *u, char *why, size_t len)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
	    .l_start = (off_t)u->base, .l_len = (off_t)u->n };
	uint64_t first = SB_SLOT_UID_BASE, end = first +
	    (uint64_t)SB_UID_BLOCKS * SB_MAX_UID_SLOTS, lo, hi;
	unsigned k, i = 0;
	int e;

	if ((u->range_fd = open(SB_UID_RANGE_LOCK, O_RDWR | O_CREAT |
	    O_NOFOLLOW | O_CLOEXEC, 0600)) < 0) {
		e = errno;
		(void)snprintf(why, len, "cannot open " SB_UID_RANGE_LOCK
		    ": %s", strerror(e));
		return -e;
	}
	if (fcntl(u->range_fd, F_OFD_SETLK, &fl) < 0) {
		if (errno == EAGAIN || errno == EACCES) {
			(void)snprintf(why, len, "another server holds uids "
			    "of it (" SB_UID_RANGE_LOCK ")");
			return -EADDRINUSE;
		}
		e = errno;
		(void)snprintf(why, len, "cannot lock " SB_UID_RANGE_LOCK
		    ": %s", strerror(e));
		return -e;
	}
	lo = u->base;
	hi = (uint64_t)u->base + u->n;
	if (hi <= first || lo >= end)
		return 0;
	lo = lo < first ? first : lo;
	hi = hi > end ? end : hi;
	for (k = (unsigned)((lo - first) / SB_MAX_UID_SLOTS);
	    k <= (unsigned)((hi - 1 - first) / SB_MAX_UID_SLOTS); k++) {
		if ((u->span_fd[i++] = lock_block(k)) >= 0)
			continue;
		if (errno == EWOULDBLOCK) {
			(void)snprintf(why, len, "another server holds uids "
			    "of it (" SB_UID_LOCK_FMT ")", k);
			return -EADDRINUSE;
		}
		e = errno;
		(void)snprintf(why, len, "cannot lock " SB_UID_LOCK_FMT ": %s",
		    k, strerror(e));
		return -e;
	}
	return 0;
}

/* 1 with why set if anything on the host uses base..base+n-1. */
static int
range_used(uid_t base, unsigned n, const char *dir, char *why, size_t len)
{
	return file_uses("/etc/passwd", false, base, n, why, len) ||
	    file_uses("/etc/subuid", true, base, n, why, len) ||
	    procs_use(base, n, why, len) || dir_uses(dir, base, n, why, len);
}

/*
 * 0: the pool is ready; 1: not here (u->why says why; runs use the shared
 * uid); < 0: an error in res (an explicit range that is bad or in use).
 */
int
sb_uid_pool_init(struct sb_uid_pool *u, const struct sb_ctx *ctx,
    const struct sb_config *cfg, struct sb_result *res)
{
	char why[256] = "", msg[400];
	unsigned i, k;
	int fd, rc;

	memset(u, 0, sizeof(*u));
	u->lock_fd = u->range_fd = -1;
	for (i = 0; i < SB_UID_SPAN_BLOCKS; i++)
		u->span_fd[i] = -1;
	for (i = 0; i < SB_MAX_UID_SLOTS; i++)
		u->userns_fd[i] = -1;
	u->n = cfg->uid_slots;
	/* only where we may map any uid: root of the initial namespace */
	if (!ctx->uid_map_all) {
		(void)snprintf(u->why, sizeof(u->why), "the server's user "
		    "namespace maps too few uids to give runs their own");
		return 1;
	}
	if (cfg->uid_base != 0) {
		/* a range of the caller's: that one or none */
		u->base = cfg->uid_base;
		if (u->n > SB_MAX_UID_SLOTS || u->base <= 65535 ||
		    (uint64_t)u->base + u->n > 0x7fffffffu) {
			sb_fail(res, SB_STAGE_CREDENTIALS, EINVAL, "the "
			    "per-slot uid range must lie in 65536..2^31-1 and "
			    "hold at most 64");
			return -EINVAL;
		}
		if ((rc = lock_range(u, why, sizeof(why))) < 0) {
			(void)snprintf(msg, sizeof(msg), "the per-slot uid "
			    "range %u..%u cannot be had: %.200s%s",
			    (unsigned)u->base, (unsigned)(u->base + u->n - 1),
			    why, rc == -EADDRINUSE ? ": give the sandboxes "
			    "another range (sb_config.uid_base)" : "");
			sb_fail(res, SB_STAGE_CREDENTIALS, -rc, msg);
			sb_uid_pool_fini(u);
			return rc;
		}
		if (range_used(u->base, u->n, cfg->uid_check_dir, why,
		    sizeof(why))) {
			(void)snprintf(msg, sizeof(msg), "the per-slot uid "
			    "range %u..%u is in use (%.200s): give the sandboxes "
			    "another range (sb_config.uid_base)",
			    (unsigned)u->base, (unsigned)(u->base + u->n - 1),
			    why);
			sb_fail(res, SB_STAGE_CREDENTIALS, EADDRINUSE, msg);
			sb_uid_pool_fini(u);
			return -EADDRINUSE;
		}
	} else {
		if (u->n > SB_MAX_UID_SLOTS) {
			sb_fail(res, SB_STAGE_CREDENTIALS, EINVAL, "at most 64 "
			    "per-slot uids");
			return -EINVAL;
		}
		/* the first block no other server holds and nothing uses */
		for (k = 0; k < SB_UID_BLOCKS; k++) {
			if ((u->lock_fd = lock_block(k)) < 0 &&
			    errno != EWOULDBLOCK) {
				/* no /run of ours (a container, a user ns) */
				(void)snprintf(u->why, sizeof(u->why), "cannot "
				    "lock " SB_UID_LOCK_FMT ": %.60s", k,
				    strerror(errno));
				return 1;
			}
			if (u->lock_fd < 0)
				continue;
			u->base = SB_SLOT_UID_BASE + k * SB_MAX_UID_SLOTS;
			if (!range_used(u->base, u->n, cfg->uid_check_dir, why,
			    sizeof(why)))
				break;
			(void)close(u->lock_fd);
			u->lock_fd = -1;
		}
		if (k == SB_UID_BLOCKS) {
			/* hardening we cannot have here: the shared uid; a
			 * long reason is cut, so the length is not looked at */
			if (snprintf(u->why, sizeof(u->why), "no block of "
			    "%u uids free in %u..%u (locked by other servers, "
			    "or in use: %.80s)", u->n, SB_SLOT_UID_BASE,
			    SB_SLOT_UID_BASE + SB_UID_BLOCKS *
			    SB_MAX_UID_SLOTS - 1, why[0] ? why : "locks") < 0)
				u->why[0] = '\0';
			return 1;
		}
	}
	for (i = 0; i < u->n; i++) {
		if ((fd = idmap_userns(ctx->uid, u->base + i)) < 0) {
			sb_fail(res, SB_STAGE_USERNS_MAP, -fd, "the per-slot "
			    "uid's id mapping");
			sb_uid_pool_fini(u);
			return fd;
		}
		u->userns_fd[i] = fd;
	}
	if (pthread_mutex_init(&u->lock, NULL) != 0) {
		sb_uid_pool_fini(u);
		sb_fail(res, SB_STAGE_RESOURCES, ENOMEM, "uid pool lock");
		return -ENOMEM;
	}
	return 0;
}

/* A free slot, or -1 when all are taken (the run uses the shared uid). */
int
sb_uid_pool_take(struct sb_uid_pool *u)
{
	unsigned i;
	int slot = -1;

	(void)pthread_mutex_lock(&u->lock);
	for (i = 0; i < u->n; i++)
		if (!u->busy[i]) {
			u->busy[i] = true;
			slot = (int)i;
			break;
		}
	(void)pthread_mutex_unlock(&u->lock);
	return slot;
}

void
sb_uid_pool_give(struct sb_uid_pool *u, int slot)
{
	(void)pthread_mutex_lock(&u->lock);
	u->busy[slot] = false;
	(void)pthread_mutex_unlock(&u->lock);
}

/* Closes the namespaces and the locks' fds (that releases them). */
void
sb_uid_pool_fini(struct sb_uid_pool *u)
{
	unsigned i;

	for (i = 0; i < SB_MAX_UID_SLOTS; i++)
		if (u->userns_fd[i] >= 0) {
			(void)close(u->userns_fd[i]);
			u->userns_fd[i] = -1;
		}
	if (u->lock_fd >= 0)
		(void)close(u->lock_fd);
	u->lock_fd = -1;
	if (u->range_fd >= 0)
		(void)close(u->range_fd);
	u->range_fd = -1;
	for (i = 0; i < SB_UID_SPAN_BLOCKS; i++)
		if (u->span_fd[i] >= 0) {
			(void)close(u->span_fd[i]);
			u->span_fd[i] = -1;
		}
}
