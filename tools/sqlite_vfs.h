/*
 * The databases query_sqlite opens, pinned at start: a directory fd and an
 * inode per database, and an SQLite VFS ("mcp-pinned") whose opens of the
 * database and its journals go beneath that fd and follow no symlink.
 * The server opens these files with its own rights in the host's mount
 * namespace; the directory may be one a sandbox can write (a workspace).
 */
#ifndef SQLITE_VFS_H
#define SQLITE_VFS_H

#include <stdbool.h>
#include <stddef.h>

struct policy_database;

#define SQLVFS_NAME	"mcp-pinned"

/*
 * Before sqlite3_open_v2(d->path, ..., SQLVFS_NAME): registers the VFS
 * (once per process) and makes d the database this thread opens, until
 * sqlvfs_leave(). Returns 0, or -1 with a sentence in msg for the model
 * (the file is not the one pinned at start, or is gone).
 */
int sqlvfs_enter(const struct policy_database *d, char *msg, size_t msglen)
    __attribute__((warn_unused_result));
void sqlvfs_leave(void);
/*
 * Between enter and leave: d is a WAL database with no -wal of its
 * owner's (none, empty, or planted), which a read-only connection could
 * only open by making a -wal and -shm of the server's: it is read
 * immutable instead (its main file, as a -wal-less reader sees it).
 */
bool sqlvfs_wal_immutable(const struct policy_database *d);

#endif
