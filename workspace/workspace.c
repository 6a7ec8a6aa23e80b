/*
 * Workspace directories: a user's (kept) or a fresh private one (removed).
 *
 * Fresh workspaces (and skill copies) live in one parent per server,
 * "$TMPDIR/mcp-sandbox-XXXXXX", mode 0700 and owned by the server: no
 * other local user can traverse to them, whatever a sandbox does to the
 * modes inside its own workspace (a sandbox reaches its workspace only
 * through its bind, never through the parent).
 *
 * With a size cap (workspace_setup(), policy workspace_mb) each fresh
 * workspace is a tmpfs of that size mounted in the server's own mount
 * namespace, which its sandboxes are cloned from and its file tools work
 * in: a run that fills it gets ENOSPC, the host's file systems are never
 * filled, and the mounts end with the server (nothing to clean up after a
 * crash but an empty parent). A root server unshares the mount namespace
 * alone; an unprivileged one first enters a user namespace of its own that
 * maps only its uid and gid to themselves (own_user_ns).
 *
 * Removal walks directory fds with openat/unlinkat and O_NOFOLLOW, so a
 * symlink a tool planted is unlinked, never followed; a tree deeper than
 * WORKSPACE_MAX_DEPTH is flattened by renaming its deep parts to the top
 * instead of holding an fd per level.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "workspace.h"

#define WORKSPACE_PREFIX	"mcp-sandbox-ws-"
#define WORKSPACE_PARENT_PREFIX	"mcp-sandbox-"
/*
 * Inodes of a capped workspace per MiB of its cap: a tmpfs inode costs
 * about 1 KiB of unswappable memory, so a cap on bytes alone would let a
 * run hold memory in millions of empty files; 256 per MiB bounds that at
 * a quarter of the cap and still allows 65536 files in 256 MiB.
 */
#define WORKSPACE_INODES_PER_MB	256

/* Set once (workspace_setup, or the first fresh workspace), then read. */
static struct {
	char parent[PATH_MAX];	/* "" until made */
	uint32_t cap_mb;	/* 0: no cap */
	bool capped;		/* fresh workspaces are size-capped tmpfs */
	char why[256];		/* when not capped: the cause */
	int err;		/* making the parent failed: its errno */
	pid_t creator;		/* only it removes the parent */
	int lockfd;		/* the parent, LOCK_SH for the server's life */
	/* the server-wide bound on fresh workspaces (capped ones only) */
	pthread_mutex_t lock;
	unsigned max_fresh;	/* 0: none */
	unsigned reserve;	/* of them kept from sessions (skill copies) */
	unsigned n_fresh;	/* made and not yet freed */
	uint32_t total_mb;
} wsc = { .lockfd = -1, .lock = PTHREAD_MUTEX_INITIALIZER };
static pthread_once_t parent_once = PTHREAD_ONCE_INIT;

const char *
workspace_tmp_base(void)
{
	const char *base = getenv("TMPDIR");
	struct stat st;

	/* one that is not there (srt sets TMPDIR=/tmp/claude and may not
	 * make it) is passed over, as mkstemp's callers do */
	return base != NULL && base[0] == '/' && stat(base, &st) == 0 &&
	    S_ISDIR(st.st_mode) ? base : "/tmp";
}

static void
make_parent(void)
{
	const char *base = workspace_tmp_base();
	int fd;

	/* held until the server is gone: the reapers' proof that it lives */
	if ((fd = workspace_parent_make(wsc.parent, sizeof(wsc.parent),
	    base)) < 0) {
		wsc.err = -fd;
		wsc.parent[0] = '\0';
		return;
	}
	wsc.lockfd = fd;
	wsc.creator = getpid();
	(void)atexit(workspace_teardown);
	/* what servers killed before us left behind (SIGKILL) */
	(void)workspace_reap_dead(base);
}

/* The private parent; NULL with errno when it cannot be made. */
static const char *
parent_dir(void)
{
	(void)pthread_once(&parent_once, make_parent);
	if (wsc.parent[0] == '\0') {
		errno = wsc.err != 0 ? wsc.err : EIO;
		return NULL;
	}
	return wsc.parent;
}

static int
write_proc(const char *path, const char *text)
{
	ssize_t n;
	int fd;

	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
		return -1;
	n = write(fd, text, strlen(text));
	(void)close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/*
 * An unprivileged server: a user namespace of its own in which it keeps
 * its uid and gid (mapped to themselves, nothing else mapped, setgroups
 * denied), so that it may own a mount namespace. Its rights on host files
 * stay those of its uid; its sandboxes nest their user namespaces in it
 * and map their uid to the same host uid as before.
 */
static int
own_user_ns(char *why, size_t whylen)
{
	char map[64];	/* "ID ID 1\n" */
	uid_t u = geteuid();
	gid_t g = getegid();

	if (unshare(CLONE_NEWUSER) != 0) {
		(void)snprintf(why, whylen, "an unprivileged server needs a "
		    "user namespace of its own to mount a tmpfs, and "
		    "unshare(CLONE_NEWUSER) failed: %s", strerror(errno));
		return -1;
	}
	(void)snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)u,
	    (unsigned)u);
	if (write_proc("/proc/self/setgroups", "deny") != 0 ||
	    write_proc("/proc/self/uid_map", map) != 0) {
		(void)snprintf(why, whylen, "mapping the server's uid in its "
		    "user namespace: %s", strerror(errno));
		return -1;
	}
	(void)snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)g,
	    (unsigned)g);
	if (write_proc("/proc/self/gid_map", map) != 0) {
		(void)snprintf(why, whylen, "mapping the server's gid in its "
		    "user namespace: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Enters a mount namespace of the server's own, a slave of the host's
 * (host mounts still appear, ours never leave): 0, or -1 with the cause.
 */
static int
own_mount_ns(char *why, size_t whylen)
{
	if (geteuid() != 0 && own_user_ns(why, whylen) != 0)
		return -1;
	if (unshare(CLONE_NEWNS) != 0) {
		(void)snprintf(why, whylen, "unshare(CLONE_NEWNS): %s",
		    strerror(errno));
		return -1;
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) != 0) {
		(void)snprintf(why, whylen, "making / a slave mount: %s",
		    strerror(errno));
		return -1;
	}
	return 0;
}

int
workspace_setup(uint32_t cap_mb, uint32_t total_mb, unsigned reserve)
{
	if (parent_dir() == NULL)
		return -1;
	wsc.total_mb = total_mb;
	wsc.reserve = reserve;
	wsc.max_fresh = 0;
	wsc.cap_mb = cap_mb;
	wsc.capped = false;
	wsc.why[0] = '\0';
	if (cap_mb == 0) {
		(void)snprintf(wsc.why, sizeof(wsc.why), "%s",
		    "workspace_mb is 0 (no cap asked for)");
		return 0;
	}
	if (own_mount_ns(wsc.why, sizeof(wsc.why)) == 0)
		wsc.capped = true;
	/* at least one, and the reserve beside it */
	if (wsc.capped && total_mb > 0) {
		wsc.max_fresh = total_mb / cap_mb;
		if (wsc.max_fresh < reserve + 1)
			wsc.max_fresh = reserve + 1;
	}
	return 0;
}

unsigned
workspace_budget(void)
{
	return wsc.max_fresh > 0 ? wsc.max_fresh - wsc.reserve : 0;
}

/* Takes one of the bound's workspaces; false: all are in use (err). */
static bool
take_fresh(char *err, size_t errlen)
{
	bool ok;

	(void)pthread_mutex_lock(&wsc.lock);
	ok = wsc.max_fresh == 0 || wsc.n_fresh < wsc.max_fresh;
	if (ok)
		wsc.n_fresh++;
	(void)pthread_mutex_unlock(&wsc.lock);
	if (!ok)
		(void)snprintf(err, errlen, "the server's fresh workspaces are "
		    "all in use (%u of %u MiB each: workspaces_mb is %u MiB): "
		    "end a session (an HTTP DELETE of it), or have the "
		    "operator raise workspaces_mb", wsc.max_fresh, wsc.cap_mb,
		    wsc.total_mb);
	return ok;
}

static void
give_fresh(void)
{
	(void)pthread_mutex_lock(&wsc.lock);
	if (wsc.n_fresh > 0)
		wsc.n_fresh--;
	(void)pthread_mutex_unlock(&wsc.lock);
}

void
workspace_teardown(void)
{
	/* empty by now; a forked child that exits leaves it alone */
	if (wsc.parent[0] != '\0' && getpid() == wsc.creator)
		(void)rmdir(wsc.parent);
}

const char *
workspace_parent(void)
{
	return wsc.parent[0] != '\0' ? wsc.parent : NULL;
}

bool
workspace_capped(uint32_t *ret_mb, const char **ret_why)
{
	if (ret_mb != NULL)
		*ret_mb = wsc.capped ? wsc.cap_mb : 0;
	if (ret_why != NULL)
		*ret_why = wsc.why[0] != '\0' ? wsc.why :
		    "workspace_setup() was not called";
	return wsc.capped;
}

/*
 * Probe for --check: in a child, a mount namespace of its own and a 1 MiB
 * tmpfs that a 2 MiB write must overflow with ENOSPC. Exit status: 0 ok,
 * 1 no mount namespace (why in the pipe), 2 no tmpfs, 3 no ENOSPC.
 */
#define CHECK_CAP_MB	1	/* the probe's tmpfs */
static void
say(int fd, const char *why)
{
	if (write(fd, why, strlen(why)) < 0)
		return;	/* the parent then reports the exit status alone */
}

static int
probe_child(const char *dir, int wfd)
{
	char why[256], buf[65536];
	char file[PATH_MAX];
	int fd, i;

	if (own_mount_ns(why, sizeof(why)) != 0) {
		say(wfd, why);
		return 1;
	}
	if (mount("mcp-check", dir, "tmpfs", MS_NOSUID | MS_NODEV,
	    "size=1m") != 0) {
		(void)snprintf(why, sizeof(why), "mount tmpfs: %s",
		    strerror(errno));
		say(wfd, why);
		return 2;
	}
	(void)snprintf(file, sizeof(file), "%s/fill", dir);
	if ((fd = open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0600)) < 0)
		return 3;
	memset(buf, 'x', sizeof(buf));
	for (i = 0; i < 2 * CHECK_CAP_MB * 16; i++)
		if (write(fd, buf, sizeof(buf)) < 0)
			return errno == ENOSPC ? 0 : 3;
	return 3;
}

void
workspace_check(uint32_t cap_mb, workspace_check_fn fn, void *arg)
{
	const char *base = getenv("TMPDIR");
	char dir[PATH_MAX], why[256] = "", detail[512];
	int p[2], status = 0;
	ssize_t n;
	pid_t pid;

	if (base == NULL || base[0] != '/')
		base = "/tmp";
	(void)snprintf(dir, sizeof(dir), "%s/%scheck-XXXXXX", base,
	    WORKSPACE_PARENT_PREFIX);
	if (mkdtemp(dir) == NULL || pipe2(p, O_CLOEXEC) != 0) {
		(void)snprintf(detail, sizeof(detail), "cannot probe: %s",
		    strerror(errno));
		fn(arg, "workspace cap", false, false, detail, "");
		return;
	}
	if ((pid = fork()) == 0) {
		(void)close(p[0]);
		_exit(probe_child(dir, p[1]));
	}
	(void)close(p[1]);
	n = pid > 0 ? read(p[0], why, sizeof(why) - 1) : -1;
	why[n > 0 ? n : 0] = '\0';
	(void)close(p[0]);
	if (pid > 0)
		(void)waitpid(pid, &status, 0);
	(void)rmdir(dir);
	if (pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		(void)snprintf(detail, sizeof(detail), "fresh workspaces and "
		    "skill copies are tmpfs of workspace_mb (default %u MiB) in "
		    "the server's own mount namespace; a full one gives ENOSPC",
		    cap_mb);
		fn(arg, "workspace cap", true, false, detail, NULL);
		return;
	}
	(void)snprintf(detail, sizeof(detail), "fresh workspaces are not "
	    "size-capped: %s; a run can fill the file system of $TMPDIR "
	    "(%s)", why[0] ? why : "the tmpfs does not cap writes", base);
	fn(arg, "workspace cap", false, false, detail, "let the server make "
	    "a user and a mount namespace (unprivileged user namespaces "
	    "allowed, no seccomp filter or container policy refusing "
	    "unshare), or run it as root, or give --workspace DIR on a file "
	    "system with a quota or a size limit of its own (and set TMPDIR "
	    "there for skill copies)");
}

/* A size-capped tmpfs on the fresh directory dir, owned by uid. */
static int
cap_dir(const char *dir, uid_t uid)
{
	char opts[128];	/* size, nr_inodes, mode, uid, gid */
	uid_t u = uid != (uid_t)-1 ? uid : geteuid();

	(void)snprintf(opts, sizeof(opts),
	    "size=%um,nr_inodes=%llu,mode=0700,uid=%u,gid=%u", wsc.cap_mb,
	    (unsigned long long)wsc.cap_mb * WORKSPACE_INODES_PER_MB,
	    (unsigned)u, (unsigned)(uid != (uid_t)-1 ? uid : getegid()));
	if (mount("mcp-workspace", dir, "tmpfs", MS_NOSUID | MS_NODEV,
	    opts) != 0)
		return -1;
	return 0;
}

static void
set_err(char *err, size_t errlen, const char *what, const char *path, int e)
{
	(void)snprintf(err, errlen, "workspace %s: %s: %s", path, what,
	    strerror(e));
}

/*
 * A root server runs sandboxed programs as owner_uid (65534) while its
 * in-process file tools run as root: a user's directory owned by anyone
 * else would half-work (write_file writes, run_command cannot touch what it
 * wrote). So it must belong to owner_uid; true (with err) when it does not.
 */
static bool
not_the_sandboxes(const char *real, const struct stat *st, uid_t owner_uid,
    char *err, size_t errlen)
{
	if (owner_uid == (uid_t)-1 || st->st_uid == owner_uid)
		return false;
	(void)snprintf(err, errlen, "workspace %s: owned by uid %u, but a "
	    "root server runs its sandboxed tools as uid %u, which could not "
	    "write there while write_file could; give the directory to that "
	    "uid (chown -R %u:%u %s) or run the server as the non-root user "
	    "who owns it", real, (unsigned int)st->st_uid,
	    (unsigned int)owner_uid, (unsigned int)owner_uid,
	    (unsigned int)owner_uid, real);
	return true;
}

int
workspace_open(const char *dir, uid_t owner_uid, struct workspace **ret,
    char *err, size_t errlen)
{
	struct workspace *ws;
	char tmpl[PATH_MAX], real[PATH_MAX];
	const char *base;
	struct stat st;
	bool counted = false;

	if ((ws = calloc(1, sizeof(*ws))) == NULL) {
		(void)snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (dir != NULL) {
		if (realpath(dir, real) == NULL || stat(real, &st) != 0) {
			set_err(err, errlen, "cannot use it", dir, errno);
			goto fail;
		}
		if (!S_ISDIR(st.st_mode)) {
			set_err(err, errlen, "cannot use it", dir, ENOTDIR);
			goto fail;
		}
		if (not_the_sandboxes(real, &st, owner_uid, err, errlen))
			goto fail;
	} else {
		if (!take_fresh(err, errlen))
			goto fail;
		counted = true;
		if ((base = parent_dir()) == NULL) {
			set_err(err, errlen, "cannot create its parent",
			    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
			    errno);
			goto fail;
		}
		if ((size_t)snprintf(tmpl, sizeof(tmpl), "%s/%sXXXXXX", base,
		    WORKSPACE_PREFIX) >= sizeof(tmpl)) {
			set_err(err, errlen, "cannot create it", base,
			    ENAMETOOLONG);
			goto fail;
		}
		/* mkdtemp: random name, mode 0700, fails if it exists */
		if (mkdtemp(tmpl) == NULL) {
			set_err(err, errlen, "cannot create it", tmpl, errno);
			goto fail;
		}
		ws->owned = true;
		if (wsc.capped && cap_dir(tmpl, owner_uid) != 0) {
			set_err(err, errlen, "cannot mount its size-capped "
			    "tmpfs", tmpl, errno);
			(void)rmdir(tmpl);
			goto fail;
		}
		if (owner_uid != (uid_t)-1 &&
		    chown(tmpl, owner_uid, (gid_t)-1) != 0) {
			set_err(err, errlen,
			    "cannot give it to the sandbox uid", tmpl, errno);
			(void)rmdir(tmpl);
			goto fail;
		}
		if (realpath(tmpl, real) == NULL) {
			set_err(err, errlen, "cannot resolve it", tmpl, errno);
			(void)rmdir(tmpl);
			goto fail;
		}
	}
	if ((ws->path = strdup(real)) == NULL) {
		(void)snprintf(err, errlen, "out of memory");
		if (ws->owned)
			(void)rmdir(real);
		goto fail;
	}
	ws->counted = counted;
	*ret = ws;
	return 0;
 fail:
	if (counted)
		give_fresh();
	free(ws);
	return -1;
}

void
workspace_free(struct workspace *ws)
{
	if (ws == NULL)
		return;
	if (ws->owned && ws->path != NULL)
		(void)workspace_remove_tree(ws->path);
	if (ws->counted)
		give_fresh();
	free(ws->path);
	free(ws);
}

/*
 * A workspace of ours: a capped one is its own tmpfs, which goes with
 * everything in it; the rest is removed entry by entry (workspace_tree.c).
 */
int
workspace_remove_tree(const char *path)
{
	if (wsc.capped && umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW) == 0 &&
	    rmdir(path) == 0)
		return 0;
	return workspace_tree_remove(path);
}
