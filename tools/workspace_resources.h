/*
 * The workspace as MCP resources: its regular files listed page by page,
 * and one file read by its uri (file:///workspace/<path>, the uri tool
 * results carry). Reads are confined exactly as read_file's: the path is
 * resolved by openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS) from an fd
 * of the workspace, so absolute paths, ".." above it and symlinks pointing
 * out fail in the kernel; FIFOs, devices and sockets are refused before
 * any open that could block or act; the file read is the inode checked.
 * No JSON-RPC here: server/resources.c turns the errnos into errors.
 */
#ifndef WORKSPACE_RESOURCES_H
#define WORKSPACE_RESOURCES_H

#include <stddef.h>

#include <json-c/json.h>

#include "files.h"	/* FILES_URI_PREFIX, FILES_MAX_PATH */

/* Resources of one resources/list page. */
#define WSR_PAGE_SIZE		100
/* Bytes of a cursor (base64 of the last path of the previous page). */
#define WSR_MAX_CURSOR		8192

/* The uri template of workspace files (RFC 6570 reserved expansion). */
#define WSR_URI_TEMPLATE	"file:///workspace/{+path}"

/*
 * The workspace path a uri names, percent-decoded into out: 0, -EINVAL if
 * it is not a workspace uri (other scheme, query, fragment, bad or NUL
 * escape), -ENAMETOOLONG past outlen.
 */
int wsr_path_from_uri(const char *uri, char *out, size_t outlen);

/*
 * One page of the regular files under dir, in path order, after cursor
 * (NULL: the first page). Appends {uri, name, mimeType, size} objects to
 * resources; *next is an owned cursor when more follow, else NULL. 0,
 * -EINVAL for a cursor we did not make, -ENOMEM.
 */
int wsr_list(const char *dir, const char *cursor,
    struct json_object *resources, char **next);

/*
 * Reads the file path of dir, at most max bytes: *ret is a new
 * {uri, mimeType, text} (UTF-8) or {uri, mimeType, blob} object. 0 or
 * -errno: ENOENT, EXDEV (outside), ELOOP, EISDIR, EINVAL (not a regular
 * file: FIFO, device, socket), EFBIG (over max), EAGAIN (swapped), ENOMEM.
 */
int wsr_read(const char *dir, const char *path, const char *uri, size_t max,
    struct json_object **ret);

struct tool_env;

/* The uri of the workspace file path (FILES_URI_PREFIX + path, percent-
 * encoded). Owned, or NULL out of memory. */
char *wsr_uri(const char *path);

/* The most bytes resources/read returns of one file: the policy's read
 * bound, as for read_file. */
size_t wsr_max_read(const struct tool_env *env);

#endif
