/*
 * A server's private workspace parent, and the reaping of the parents
 * that servers killed before they could remove theirs (SIGKILL) leave in
 * $TMPDIR. A parent is named "mcp-sandbox-" and mkdtemp's six random
 * characters, and its server holds a shared flock on it from before
 * anything is made in it until it dies (the kernel drops the lock then,
 * whatever pid namespace the server was in; its forked children share
 * it). That lock is the one proof: a parent of ours (a directory, never
 * a symlink to one, owned by our euid) that a reaper can lock
 * exclusively is a dead server's, and is removed while the reaper holds
 * it; one it cannot lock is kept. The name proves nothing: it is matched
 * only to leave alone whatever else $TMPDIR holds (--check's
 * "mcp-sandbox-check-XXXXXX" among it). Removal is
 * workspace_tree_remove(): nothing is followed.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "workspace.h"

#define REAP_PREFIX	"mcp-sandbox-"
/* mkdtemp's random part: six characters of [A-Za-z0-9]. */
#define REAP_RANDOM	6
/* Entries of $TMPDIR one reap looks at: bounds the time a start can spend
 * on a crowded directory. */
#define REAP_MAX_SCAN	100000
/*
 * Times a parent is made again when another server's reap took it for a
 * dead one's between our mkdtemp and our flock: once is the race, a few
 * more and something else removes it.
 */
#define REAP_MAKE_TRIES	3

int
workspace_parent_make(char *path, size_t len, const char *base)
{
	struct stat a, b;
	int fd, tries, e;

	for (tries = 0; tries < REAP_MAKE_TRIES; tries++) {
		e = snprintf(path, len, "%s/%sXXXXXX", base, REAP_PREFIX);
		if (e < 0 || (size_t)e >= len)
			return -ENAMETOOLONG;
		/* a random name, mode 0700, ours; fails if it exists */
		if (mkdtemp(path) == NULL)
			return -errno;
		if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC)) < 0) {
			if (errno == ENOENT)
				continue;	/* reaped already */
			e = -errno;
			(void)rmdir(path);
			return e;
		}
		/* a reap holding it exclusively: wait for it to finish */
		while ((e = flock(fd, LOCK_SH)) < 0 && errno == EINTR)
			;
		if (e < 0 || fchmod(fd, 0700) < 0) {
			e = -errno;
			(void)close(fd);
			(void)rmdir(path);
			return e;
		}
		if (fstat(fd, &a) == 0 && lstat(path, &b) == 0 &&
		    a.st_dev == b.st_dev && a.st_ino == b.st_ino)
			return fd;
		(void)close(fd);
	}
	return -EAGAIN;
}

/* Whether name is shaped as workspace_parent_make() names a parent. */
static bool
parent_name(const char *name)
{
	size_t i, n = sizeof(REAP_PREFIX) - 1;

	if (strncmp(name, REAP_PREFIX, n) != 0 ||
	    strlen(name) != n + REAP_RANDOM)
		return false;
	for (i = n; name[i] != '\0'; i++)
		if (!isalnum((unsigned char)name[i]))
			return false;
	return true;
}

int
workspace_reap_dead(const char *base)
{
	struct dirent *de;
	struct stat st;
	char path[PATH_MAX];
	DIR *d;
	int dfd, lfd, n = 0, scanned = 0;

	if ((dfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return 0;
	if ((d = fdopendir(dfd)) == NULL) {
		(void)close(dfd);
		return 0;
	}
	while ((de = readdir(d)) != NULL && scanned++ < REAP_MAX_SCAN) {
		if (!parent_name(de->d_name) ||
		    (size_t)snprintf(path, sizeof(path), "%s/%s", base,
		    de->d_name) >= sizeof(path))
			continue;
		/* a directory itself (no symlink, no file), and ours */
		if ((lfd = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC)) < 0)
			continue;
		if (fstat(lfd, &st) == 0 && st.st_uid == geteuid() &&
		    flock(lfd, LOCK_EX | LOCK_NB) == 0 &&
		    workspace_tree_remove(path) == 0)
			n++;
		(void)close(lfd);
	}
	(void)closedir(d);
	return n;
}
