/*
 * uids: a root server's per-slot kernel uids (sb_config.uid_slots). A run
 * takes a free slot and runs as base + slot, so that the kernel's per-uid
 * counters (inotify instances and watches, pipe buffer pages, and the
 * parent levels of the rlimit counts) are not one pool for every sandbox.
 * Sessions share a workspace across slots, and its files must keep one
 * owner on disk (the context's uid): each slot has a user namespace
 * swapping that uid and the slot's (every other id kept), which the
 * run's trees (the workspace, writable binds: detached clones the child
 * moves in) are id-mapped with, here (sb_uid_trees).
 *
 * The range is declared, not discovered: sb_config.uid_base (the server's
 * --uid-base), or the first block of the default range (SB_SLOT_UID_BASE)
 * that no other server holds. Nothing checks that the host leaves those
 * uids alone (no scan of passwd, subuid, processes or files can: a uid can
 * be taken after it); whoever runs the server declares them its own. Servers
 * share the range among themselves by one OFD lock on the range's bytes
 * of one file (SB_UID_LOCK), held for the server's life: ranges that
 * overlap conflict on the overlap only, and a dead server's goes with it.
 * A slot is given back only when its run's init was reaped (the pid
 * namespace, and every process of the run, gone).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"

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
 * The uids base..base+n-1 locked for this process's life: an OFD write
 * lock on those bytes of SB_UID_LOCK, so that two servers conflict on
 * exactly the uids their ranges share (the kernel drops the lock with the
 * last holder of fd). 0; -EADDRINUSE with *held set to a lock in the way
 * (l_type F_UNLCK if it went meanwhile); or -errno.
 */
static int
lock_range(int fd, uid_t base, unsigned n, struct flock *held)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
	    .l_start = (off_t)base, .l_len = (off_t)n };

	if (fcntl(fd, F_OFD_SETLK, &fl) == 0)
		return 0;
	if (errno != EAGAIN && errno != EACCES)
		return -errno;
	*held = fl;
	held->l_pid = 0;	/* F_OFD_GETLK wants it so */
	if (fcntl(fd, F_OFD_GETLK, held) < 0)
		held->l_type = F_UNLCK;
	return -EADDRINUSE;
}

/* The default range: its first block that no other server holds. */
static int
lock_default(struct sb_uid_pool *u, struct flock *held)
{
	unsigned k;
	int rc = -EADDRINUSE;

	for (k = 0; k < SB_UID_BLOCKS && rc == -EADDRINUSE; k++) {
		u->base = SB_SLOT_UID_BASE + k * SB_MAX_UID_SLOTS;
		rc = lock_range(u->lock_fd, u->base, u->n, held);
	}
	return rc;
}

/* Why base..base+n-1 cannot be had (rc from lock_range). */
static void
held_why(char *buf, size_t len, const struct sb_uid_pool *u, int rc,
    const struct flock *held)
{
	unsigned lo = (unsigned)u->base, hi = lo + u->n - 1;

	if (rc != -EADDRINUSE)
		(void)snprintf(buf, len, "cannot lock " SB_UID_LOCK ": %s",
		    strerror(-rc));
	else if (held->l_type == F_UNLCK)
		(void)snprintf(buf, len, "per-slot uids %u..%u: another server "
		    "holds some (" SB_UID_LOCK "); give this one " SB_UID_FLAG,
		    lo, hi);
	else
		(void)snprintf(buf, len, "per-slot uids %u..%u: another server "
		    "holds %u..%u (" SB_UID_LOCK "); give this one "
		    SB_UID_FLAG, lo, hi, (unsigned)held->l_start,
		    (unsigned)(held->l_start + held->l_len - 1));
}

/*
 * 0: the pool is ready; 1: not here (u->why says why; runs use the shared
 * uid); < 0: an error in res (an explicit range that is bad or held).
 */
int
sb_uid_pool_init(struct sb_uid_pool *u, const struct sb_ctx *ctx,
    const struct sb_config *cfg, struct sb_result *res)
{
	struct flock held = { .l_type = F_UNLCK };
	char why[200];
	unsigned i;
	int fd, rc;

	memset(u, 0, sizeof(*u));
	u->lock_fd = -1;
	for (i = 0; i < SB_MAX_UID_SLOTS; i++)
		u->userns_fd[i] = -1;
	u->n = cfg->uid_slots;
	/* only where we may map any uid: root of the initial namespace */
	if (!ctx->uid_map_all) {
		(void)snprintf(u->why, sizeof(u->why), "the server's user "
		    "namespace maps too few uids to give runs their own");
		return 1;
	}
	if (u->n > SB_MAX_UID_SLOTS || (cfg->uid_base != 0 &&
	    (cfg->uid_base <= 65535 ||
	    (uint64_t)cfg->uid_base + u->n > 0x7fffffffu))) {
		sb_fail(res, SB_STAGE_UIDS, EINVAL, "the per-slot uid "
		    "range must lie in 65536..2^31-1 and hold at most 64");
		return -EINVAL;
	}
	if ((u->lock_fd = open(SB_UID_LOCK, O_RDWR | O_CREAT | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) < 0)
		rc = -errno;
	else if (cfg->uid_base != 0) {
		u->base = cfg->uid_base;
		rc = lock_range(u->lock_fd, u->base, u->n, &held);
	} else
		rc = lock_default(u, &held);
	if (rc < 0) {
		held_why(why, sizeof(why), u, rc, &held);
		sb_uid_pool_fini(u);
		if (cfg->uid_base != 0) {
			/* a range of the caller's: that one or none */
			sb_fail(res, SB_STAGE_UIDS, -rc, why);
			return rc;
		}
		/* hardening we cannot have here (no /run of ours, every
		 * block held): the shared uid, and --check says why */
		(void)snprintf(u->why, sizeof(u->why), "%s", why);
		return 1;
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

/* Closes the namespaces and the lock's fd (that releases the range). */
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
}

/*
 * One tree of a run with per-slot uids (the workspace, a writable bind),
 * as a detached mount the child moves into place: a clone of the host dir
 * (opened without following any symlink), nosuid, nodev, read-only unless
 * writable, and, with a slot, id-mapped so that its on-disk owner (the
 * context's uid) is the run's slot uid inside and what the run creates is
 * the context's uid on disk. 0, 1 when the filesystem cannot be id-mapped
 * (EINVAL, EOPNOTSUPP; no fd kept), or < 0 with res set.
 */
static int
tree_make(const struct sb_uid_pool *u, int slot, const struct sb_mop *m,
    int *tree, struct sb_result *res)
{
	struct mount_attr attr = { 0 };
	bool idmap = slot >= 0;
	int fd, rc = 0;

	if ((fd = sb_open_host(m->host, true)) < 0) {
		rc = fd;
		sb_fail(res, SB_STAGE_MOUNTS, -rc, "opening the workspace or "
		    "a writable bind");
		return rc;
	}
	*tree = (int)syscall(SYS_open_tree, fd, "", OPEN_TREE_CLONE |
	    OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	rc = *tree < 0 ? -errno : 0;
	(void)close(fd);
	if (rc < 0) {
		sb_fail(res, SB_STAGE_MOUNTS, -rc, "cloning the workspace or "
		    "a writable bind");
		return rc;
	}
	attr.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
	    (m->writable ? 0 : MOUNT_ATTR_RDONLY);
	/*
	 * A clone of a shared mount (systemd makes / shared) is a peer of
	 * it: the mounts the child makes on the tree (its protected entries)
	 * would propagate into our mount namespace and every peer's, and
	 * stay there after the run. Private, as a bind inside the child is.
	 */
	attr.propagation = MS_PRIVATE;
	if (idmap) {
		attr.attr_set |= MOUNT_ATTR_IDMAP;
		attr.userns_fd = (uint64_t)u->userns_fd[slot];
	}
	if (syscall(SYS_mount_setattr, *tree, "", AT_EMPTY_PATH, &attr,
	    sizeof(attr)) == 0)
		return 0;
	rc = -errno;
	(void)close(*tree);
	*tree = -1;
	if (idmap && (rc == -EINVAL || rc == -EOPNOTSUPP))
		return 1;
	sb_fail(res, SB_STAGE_MOUNTS, -rc, idmap ? "id-mapping the workspace "
	    "or a writable bind" : "the flags of the workspace or a writable "
	    "bind");
	return rc;
}

/*
 * Every tree of the plan into trees[] (the child's fds). All are
 * id-mapped to *slot, or, when one filesystem cannot be, none is and the
 * slot is given back (*slot -1: the run takes the shared uid): a slot
 * uid writing a tree that is not mapped would leave its files owned by
 * the slot on disk.
 */
int
sb_uid_trees(struct sb_uid_pool *u, const struct sb_plan *p, int *slot,
    int *trees, struct sb_result *res)
{
	size_t i;
	int rc;

	for (i = 0; i < p->ntrees; i++) {
		rc = tree_make(u, *slot, &p->mops[p->tree_mop[i]], &trees[i],
		    res);
		if (rc < 0)
			return rc;
		if (rc == 0)
			continue;
		/* not id-mappable: start again, every tree plain */
		while (i > 0) {
			i--;
			(void)close(trees[i]);
			trees[i] = -1;
		}
		sb_uid_pool_give(u, *slot);
		*slot = -1;
		i = (size_t)-1;	/* the loop's i++ makes it 0 */
	}
	return 0;
}
