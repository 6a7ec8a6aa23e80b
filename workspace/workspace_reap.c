/*
 * The name of a server's private workspace parent, and the reaping of the
 * parents that servers killed before they could remove theirs (SIGKILL)
 * leave in $TMPDIR. The parent is named
 *   mcp-sandbox-<boot>-<pid ns>-<pid>-<start time>-XXXXXX
 * (the first hex digits of the boot id, the inode of the pid namespace,
 * the pid and the start time in clock ticks of the server that made it,
 * then mkdtemp's random part), so that a later server can prove its maker
 * gone: made in an earlier boot, or in our pid namespace by a pid that no
 * longer exists or is now another process (another start time). One of
 * another pid namespace in this boot cannot be judged and is kept, as is
 * anything not named exactly so, not a directory itself (a symlink to one
 * is not followed), or not owned by our euid (a parent is always its
 * server's). A name is a claim, not a proof: another boot id may be
 * another machine sharing $TMPDIR (a home on NFS), and an error reading
 * /proc reads as a gone pid. So a server also holds a shared flock on its
 * parent for its life (workspace.c), and a parent is removed only while
 * the reaper holds it exclusively; one it cannot lock is kept. Removal is
 * workspace_tree_remove(): nothing is followed.
 * Kept apart from workspace.c so that where and how the parent is made can
 * change without this.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "workspace.h"

#define REAP_PREFIX	"mcp-sandbox-"
/* Hex digits of the boot id in a name: enough to tell one boot from
 * another (32 bits), short enough for a readable name. */
#define REAP_BOOT_HEX	8
/* Entries of $TMPDIR one reap looks at: bounds the time a start can spend
 * on a crowded directory. */
#define REAP_MAX_SCAN	100000

/* This process's identity in a parent's name. */
struct ws_self {
	char boot[REAP_BOOT_HEX + 1];
	unsigned long long pidns;
	long pid;
	unsigned long long start;
	bool ok;
};

/* Field 22 of /proc/<pid>/stat (starttime), or 0 when there is none. */
static unsigned long long
proc_start(long pid)
{
	char path[64], buf[1024], *p;
	unsigned long long v = 0;
	ssize_t n;
	int fd, field;

	(void)snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	(void)close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* the command name may hold spaces and ')': count after the last */
	if ((p = strrchr(buf, ')')) == NULL)
		return 0;
	for (field = 2; *p != '\0' && field < 22; p++)
		if (*p == ' ')
			field++;
	if (field != 22 || sscanf(p, "%llu", &v) != 1)
		return 0;
	return v;
}

static void
self_identity(struct ws_self *me)
{
	char buf[64];
	struct stat st;
	ssize_t n;
	size_t i, j;
	int fd;

	memset(me, 0, sizeof(*me));
	if ((fd = open("/proc/sys/kernel/random/boot_id",
	    O_RDONLY | O_CLOEXEC)) < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	(void)close(fd);
	for (i = j = 0; n > 0 && i < (size_t)n && j < REAP_BOOT_HEX; i++)
		if ((buf[i] >= '0' && buf[i] <= '9') ||
		    (buf[i] >= 'a' && buf[i] <= 'f'))
			me->boot[j++] = buf[i];
	if (j != REAP_BOOT_HEX || stat("/proc/self/ns/pid", &st) != 0)
		return;
	me->pidns = (unsigned long long)st.st_ino;
	me->pid = (long)getpid();
	if ((me->start = proc_start(me->pid)) == 0)
		return;
	me->ok = true;
}

int
workspace_parent_template(char *tmpl, size_t len, const char *base)
{
	struct ws_self me;
	int n;

	self_identity(&me);
	if (me.ok)
		n = snprintf(tmpl, len, "%s/%s%s-%llu-%ld-%llu-XXXXXX", base,
		    REAP_PREFIX, me.boot, me.pidns, me.pid, me.start);
	else	/* without /proc: a name nobody will ever reap */
		n = snprintf(tmpl, len, "%s/%sXXXXXX", base, REAP_PREFIX);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* Whether name is a parent whose server is provably gone. */
static bool
name_of_dead_server(const char *name, const struct ws_self *me)
{
	char boot[REAP_BOOT_HEX + 1], rnd[8];
	unsigned long long pidns, start;
	long pid;
	int end = 0;

	if (strncmp(name, REAP_PREFIX, sizeof(REAP_PREFIX) - 1) != 0)
		return false;
	name += sizeof(REAP_PREFIX) - 1;
	if (sscanf(name, "%8[0-9a-f]-%llu-%ld-%llu-%6[A-Za-z0-9]%n", boot,
	    &pidns, &pid, &start, rnd, &end) != 5 || name[end] != '\0' ||
	    strlen(boot) != REAP_BOOT_HEX || strlen(rnd) != 6 || pid <= 0)
		return false;
	if (strcmp(boot, me->boot) != 0)
		return true;		/* every server of that boot is gone */
	if (pidns != me->pidns)
		return false;
	if (pid == me->pid && start == me->start)
		return false;		/* ours */
	return proc_start(pid) != start;
}

int
workspace_reap_dead(const char *base)
{
	struct ws_self me;
	struct dirent *de;
	struct stat st;
	char path[PATH_MAX];
	DIR *d;
	int dfd, lfd, n = 0, scanned = 0;

	self_identity(&me);
	if (!me.ok)
		return 0;
	if ((dfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return 0;
	if ((d = fdopendir(dfd)) == NULL) {
		(void)close(dfd);
		return 0;
	}
	while ((de = readdir(d)) != NULL && scanned++ < REAP_MAX_SCAN) {
		if (!name_of_dead_server(de->d_name, &me))
			continue;
		if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", base,
		    de->d_name) >= sizeof(path))
			continue;
		/* its server (or one of its children) still holds it */
		if ((lfd = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC)) < 0)
			continue;
		if (flock(lfd, LOCK_EX | LOCK_NB) == 0 &&
		    workspace_tree_remove(path) == 0)
			n++;
		(void)close(lfd);
	}
	(void)closedir(d);
	return n;
}
