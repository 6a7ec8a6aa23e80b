/*
 * query_sqlite's databases, opened the way they were found at start.
 *
 * SQLite's unix VFS opens a database by path, and again for its journals
 * (path-journal, path-wal, path-shm); its xFullPathname follows every
 * symlink in the path. query_sqlite runs in the server, with the server's
 * rights, in the host's mount namespace: if the database's directory is
 * one a sandbox can write, sandboxed code could swap the file for a
 * symlink (or rename another file over it) between two calls and have the
 * server open a file of its choosing.
 *
 * So every database is pinned at start (policy_pin_database): its
 * directory is opened once, O_PATH, and the file's st_dev/st_ino noted.
 * The VFS "mcp-pinned" is the unix VFS with two changes:
 *   - xFullPathname returns the (canonical, checked at start) name as is:
 *     nothing is resolved again by path;
 *   - its open(), stat() and access() system calls (xSetSystemCall), for
 *     the names of the database the calling thread is querying
 *     (sqlvfs_enter), go beneath the pinned directory fd with openat2
 *     RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, O_NOFOLLOW and O_NONBLOCK (a
 *     FIFO planted there cannot block the server); the main file must be
 *     a regular file with the pinned inode, a journal a regular file owned
 *     by the database's owner or by the server (journal_ours);
 *   - its unlink() (xDelete: a -wal beside an empty database, a journal)
 *     removes the journal's name in the pinned directory (unlinkat), never
 *     by the path, whose directory may be a symlink by now; the main file
 *     is never removed.
 *   Any other name goes to the original system call unchanged.
 * The system-call table is the unix VFS's, shared by the process: only
 * query_sqlite uses SQLite here, and names not being queried by the
 * calling thread pass through untouched.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <sqlite3.h>

#include "policy.h"
#include "sqlite_vfs.h"

#define SQLVFS_OPEN_RETRIES	8	/* openat2 EAGAIN: a rename raced */

/* The files SQLite opens for one database: itself, then its journals. */
static const char *const db_suffixes[] = { "", "-journal", "-wal", "-shm" };

static sqlite3_vfs pinned_vfs;
static sqlite3_vfs *unix_vfs;
static int (*orig_open)(const char *, int, int);
static int (*orig_stat)(const char *, struct stat *);
static int (*orig_access)(const char *, int);
static int (*orig_unlink)(const char *);
static pthread_once_t vfs_once = PTHREAD_ONCE_INIT;
static int vfs_rc = SQLITE_ERROR;

/* The database this thread is querying (sqlvfs_enter), or NULL. */
static _Thread_local const struct policy_database *cur_db;
/* Its owner, as sqlvfs_enter found it. */
static _Thread_local uid_t cur_owner;

/*
 * A journal (-journal, -wal, -shm) SQLite may use: one the database's
 * owner or the server made (SQLite running as root gives its journals to
 * the database's owner). Sandboxed code that can write the directory but
 * not the database could otherwise plant a -wal whose pages replace the
 * database's, or a -shm it keeps mapped: shared memory with the server.
 */
static bool
journal_ours(const struct stat *st)
{
	return S_ISREG(st->st_mode) && (st->st_uid == cur_owner ||
	    st->st_uid == geteuid());
}

/*
 * The suffix index when path is one of cur_db's files, else -1. The names
 * come from xFullPathname, which hands back d->path unchanged.
 */
static int
pinned_name(const char *path, const struct policy_database *d)
{
	size_t n, i;

	if (d == NULL || path == NULL)
		return -1;
	n = strlen(d->path);
	if (strncmp(path, d->path, n) != 0)
		return -1;
	for (i = 0; i < sizeof(db_suffixes) / sizeof(db_suffixes[0]); i++)
		if (strcmp(path + n, db_suffixes[i]) == 0)
			return (int)i;
	return -1;
}

/* openat2 beneath the pinned directory, no symlink anywhere; -1/errno. */
static int
open_beneath(const struct policy_database *d, const char *name, int flags,
    mode_t mode)
{
	struct open_how how;
	int i, fd = -1;

	memset(&how, 0, sizeof(how));
	how.flags = (uint64_t)(flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC |
	    O_NOCTTY);
	how.mode = (flags & O_CREAT) ? mode : 0;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
	    RESOLVE_NO_MAGICLINKS;
	for (i = 0; i < SQLVFS_OPEN_RETRIES; i++) {
		fd = (int)syscall(SYS_openat2, d->dirfd, name, &how,
		    sizeof(how));
		if (fd >= 0 || errno != EAGAIN)
			break;
	}
	return fd;
}

static int
pinned_open(const char *path, int flags, int mode)
{
	const struct policy_database *d = cur_db;
	char name[NAME_MAX + 16];	/* base + the longest suffix */
	struct stat st;
	int k, fd, e;

	if ((k = pinned_name(path, d)) < 0)
		return orig_open(path, flags, mode);
	if ((size_t)snprintf(name, sizeof(name), "%s%s", d->base,
	    db_suffixes[k]) >= sizeof(name)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	/*
	 * A read-only query makes no file: a -wal or -shm it made would be
	 * the server's, left in a directory a sandbox may write, which can
	 * rename it away and plant its own (refused: every later query
	 * failed). A WAL database without a journal of its owner's is read
	 * immutable instead (sqlvfs_wal_immutable).
	 */
	if (k > 0 && (flags & O_CREAT) != 0) {
		if ((fd = open_beneath(d, name, flags & ~(O_CREAT | O_EXCL),
		    0)) < 0) {
			if (errno == ENOENT)
				errno = EACCES;
			return -1;
		}
	} else if ((fd = open_beneath(d, name, flags, (mode_t)mode)) < 0) {
		return -1;
	}
	if (fstat(fd, &st) != 0)
		goto fail;
	if (!S_ISREG(st.st_mode) || (k > 0 && !journal_ours(&st))) {
		errno = EINVAL;
		goto fail;
	}
	if (k == 0 && (st.st_dev != d->dev || st.st_ino != d->ino)) {
		errno = ESTALE;	/* another file now has the name */
		goto fail;
	}
	/* SQLite does blocking I/O on a regular file: clear O_NONBLOCK */
	if ((flags & O_NONBLOCK) == 0 &&
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0)
		goto fail;
	return fd;
 fail:
	e = errno;
	(void)close(fd);
	errno = e;
	return -1;
}

static int
pinned_stat(const char *path, struct stat *st)
{
	const struct policy_database *d = cur_db;
	char name[NAME_MAX + 16];
	int k;

	if ((k = pinned_name(path, d)) < 0)
		return orig_stat(path, st);
	if ((size_t)snprintf(name, sizeof(name), "%s%s", d->base,
	    db_suffixes[k]) >= sizeof(name)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (fstatat(d->dirfd, name, st, AT_SYMLINK_NOFOLLOW) != 0)
		return -1;
	if (k > 0 && !journal_ours(st)) {
		errno = ENOENT;	/* a planted journal: never opened, absent */
		return -1;
	}
	return 0;
}

static int
pinned_access(const char *path, int mode)
{
	const struct policy_database *d = cur_db;
	char name[NAME_MAX + 16];
	struct stat st;
	int k;

	if ((k = pinned_name(path, d)) < 0)
		return orig_access(path, mode);
	if ((size_t)snprintf(name, sizeof(name), "%s%s", d->base,
	    db_suffixes[k]) >= sizeof(name)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (fstatat(d->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return -1;
	if (k > 0 && !journal_ours(&st)) {
		errno = ENOENT;	/* as in pinned_stat */
		return -1;
	}
	return faccessat(d->dirfd, name, mode, AT_SYMLINK_NOFOLLOW);
}

static int
pinned_unlink(const char *path)
{
	const struct policy_database *d = cur_db;
	char name[NAME_MAX + 16];
	int k;

	if ((k = pinned_name(path, d)) < 0)
		return orig_unlink(path);
	if (k == 0) {
		errno = EPERM;	/* a read-only query removes no database */
		return -1;
	}
	if ((size_t)snprintf(name, sizeof(name), "%s%s", d->base,
	    db_suffixes[k]) >= sizeof(name)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return unlinkat(d->dirfd, name, 0);
}

/* The name SQLite gave (d->path, canonical since start), unresolved. */
static int
pinned_full_pathname(sqlite3_vfs *vfs, const char *name, int nout, char *out)
{
	(void)vfs;
	if (name == NULL || name[0] != '/' || (int)strlen(name) >= nout)
		return SQLITE_CANTOPEN;
	memcpy(out, name, strlen(name) + 1);
	return SQLITE_OK;
}

static int
pinned_xopen(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *f,
    int flags, int *out_flags)
{
	(void)vfs;
	return unix_vfs->xOpen(unix_vfs, name, f, flags, out_flags);
}

static void
vfs_register(void)
{
	if ((unix_vfs = sqlite3_vfs_find("unix")) == NULL ||
	    unix_vfs->iVersion < 3 || unix_vfs->xGetSystemCall == NULL)
		return;
	orig_open = (int (*)(const char *, int, int))
	    unix_vfs->xGetSystemCall(unix_vfs, "open");
	orig_stat = (int (*)(const char *, struct stat *))
	    unix_vfs->xGetSystemCall(unix_vfs, "stat");
	orig_access = (int (*)(const char *, int))
	    unix_vfs->xGetSystemCall(unix_vfs, "access");
	orig_unlink = (int (*)(const char *))
	    unix_vfs->xGetSystemCall(unix_vfs, "unlink");
	if (orig_open == NULL || orig_stat == NULL || orig_access == NULL ||
	    orig_unlink == NULL)
		return;
	if (unix_vfs->xSetSystemCall(unix_vfs, "open",
	    (sqlite3_syscall_ptr)pinned_open) != SQLITE_OK ||
	    unix_vfs->xSetSystemCall(unix_vfs, "stat",
	    (sqlite3_syscall_ptr)pinned_stat) != SQLITE_OK ||
	    unix_vfs->xSetSystemCall(unix_vfs, "access",
	    (sqlite3_syscall_ptr)pinned_access) != SQLITE_OK ||
	    unix_vfs->xSetSystemCall(unix_vfs, "unlink",
	    (sqlite3_syscall_ptr)pinned_unlink) != SQLITE_OK)
		return;
	pinned_vfs = *unix_vfs;
	pinned_vfs.zName = SQLVFS_NAME;
	pinned_vfs.pNext = NULL;
	pinned_vfs.xOpen = pinned_xopen;
	pinned_vfs.xFullPathname = pinned_full_pathname;
	/* the system calls are unix_vfs's; ours would not be consulted */
	pinned_vfs.xSetSystemCall = NULL;
	pinned_vfs.xGetSystemCall = NULL;
	pinned_vfs.xNextSystemCall = NULL;
	vfs_rc = sqlite3_vfs_register(&pinned_vfs, 0);
}

int
sqlvfs_enter(const struct policy_database *d, char *msg, size_t msglen)
{
	struct stat st;

	(void)pthread_once(&vfs_once, vfs_register);
	if (vfs_rc != SQLITE_OK) {
		(void)snprintf(msg, msglen, "%s", "The database cannot be "
		    "opened safely: SQLite's unix VFS does not let its system "
		    "calls be replaced.");
		return -1;
	}
	if (!d->pinned) {
		(void)snprintf(msg, msglen, "%s", "The database was not "
		    "checked at start.");
		return -1;
	}
	if (fstatat(d->dirfd, d->base, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		(void)snprintf(msg, msglen, "The database file is gone from "
		    "its directory since the server started (%s).",
		    strerror(errno));
		return -1;
	}
	if (S_ISLNK(st.st_mode)) {
		(void)snprintf(msg, msglen, "%s", "The database file was "
		    "replaced by a symbolic link since the server started; "
		    "it is not followed.");
		return -1;
	}
	if (!S_ISREG(st.st_mode) || st.st_dev != d->dev ||
	    st.st_ino != d->ino) {
		(void)snprintf(msg, msglen, "%s", "The database file was "
		    "replaced by another file since the server started; only "
		    "the file found at start is opened (restart the server "
		    "to use the new one).");
		return -1;
	}
	cur_db = d;
	cur_owner = st.st_uid;
	return 0;
}

bool
sqlvfs_wal_immutable(const struct policy_database *d)
{
	char name[NAME_MAX + 16];
	uint8_t hdr[20];
	struct stat st;
	int fd;
	ssize_t n;

	if ((fd = open_beneath(d, d->base, O_RDONLY, 0)) < 0)
		return false;
	n = pread(fd, hdr, sizeof(hdr), 0);
	(void)close(fd);
	/* bytes 18 and 19 of the header: the write and read versions, 2
	 * for WAL (https://sqlite.org/fileformat2.html#walformat) */
	if (n != (ssize_t)sizeof(hdr) || hdr[18] != 2 || hdr[19] != 2)
		return false;
	if ((size_t)snprintf(name, sizeof(name), "%s-wal", d->base) >=
	    sizeof(name))
		return true;
	return fstatat(d->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
	    !journal_ours(&st) || st.st_size == 0;
}

void
sqlvfs_leave(void)
{
	cur_db = NULL;
}
