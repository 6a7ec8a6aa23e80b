/*
 * Workspace file access for the file tools, confined by the kernel: every
 * path is resolved with openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)
 * from an fd of the workspace, so absolute paths, ".." above it and
 * symlinks pointing out fail in the kernel (EXDEV), whatever the string.
 * Shared by files.c (read, write) and files_walk.c (list, search).
 */
#ifndef FILES_H
#define FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "tool.h"

#define FILES_MAX_PATH		4096	/* schema maxLength of a path */
#define FILES_ECHO_PATH		200	/* path bytes echoed in a message */

/* An fd of the call's workspace (O_PATH | O_DIRECTORY), or -errno. */
int files_root(const struct tool_call *call);

/* openat2 beneath dirfd; returns an fd or -errno (EAGAIN retried). */
int files_openat(int dirfd, const char *path, int flags, mode_t mode);

/* The same with no symlink followed anywhere in path (RESOLVE_NO_SYMLINKS):
 * for files a walk found, which must be the very file it saw. */
int files_openat_strict(int dirfd, const char *path, int flags);

/* The uri of a workspace file, as resources/read resolves it. */
#define FILES_URI_PREFIX	"file:///workspace/"

/*
 * The isError result for a failed resolution or open of path (-err is the
 * errno), with a sentence the model can act on. Fills the audit reason.
 */
struct json_object *files_path_error(const struct tool_call *call,
    const char *path, int err);

/* The isError result for a path that exists but is not a regular file. */
struct json_object *files_type_error(const struct tool_call *call,
    const char *path, mode_t mode, const char *want);

/* "file", "directory", "symlink", "fifo", "socket", "device". */
const char *files_type_name(mode_t mode);

#endif
