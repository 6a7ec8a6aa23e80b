/*
 * read_file and write_file, in-process on the workspace. Confinement is the
 * kernel's (openat2 beneath the workspace fd, see files.h); on top, the
 * last component is never followed when writing (O_NOFOLLOW), only regular
 * files are read or written (FIFOs and devices are refused before any
 * blocking or side-effecting open), and sizes are bounded by the policy.
 * Binary content is returned as a base64 resource, never as broken text.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "files.h"
#include "policy.h"
#include "render.h"
#include "sandbox.h"
#include "sandboxed.h"
#include "toolargs.h"
#include "media.h"

#define FILES_OPENAT2_RETRIES	8	/* EAGAIN: a rename raced the walk */
#define FILES_MAX_WRITE		(8 << 20)	/* schema bound of content */
/* Names tried for write_file's temporary file before giving up: each is 64
 * random bits, so a second try only follows a planted name. */
#define FILES_TMP_TRIES		4

int
files_root(const struct tool_call *call)
{
	int fd;

	fd = open(call->workspace, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static int
openat2_beneath(int dirfd, const char *path, int flags, mode_t mode,
    uint64_t resolve)
{
	struct open_how how;
	int i, fd = -EAGAIN;

	memset(&how, 0, sizeof(how));
	/* openat2 refuses O_PATH with any flag but these */
	how.flags = (uint64_t)(flags | O_CLOEXEC |
	    ((flags & O_PATH) ? 0 : O_NOCTTY));
	how.mode = (flags & O_CREAT) ? mode : 0;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | resolve;
	for (i = 0; i < FILES_OPENAT2_RETRIES && fd == -EAGAIN; i++) {
		fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
		if (fd < 0)
			fd = -errno;
	}
	return fd;
}

int
files_openat(int dirfd, const char *path, int flags, mode_t mode)
{
	return openat2_beneath(dirfd, path, flags, mode, 0);
}

int
files_openat_strict(int dirfd, const char *path, int flags)
{
	return openat2_beneath(dirfd, path, flags, 0, RESOLVE_NO_SYMLINKS);
}

const char *
files_type_name(mode_t mode)
{
	if (S_ISREG(mode))
		return "file";
	if (S_ISDIR(mode))
		return "directory";
	if (S_ISLNK(mode))
		return "symlink";
	if (S_ISFIFO(mode))
		return "fifo";
	if (S_ISSOCK(mode))
		return "socket";
	return "device";
}

/* The path as echoed in messages: bounded, valid UTF-8 (owned json). */
static struct json_object *
echo(const char *path)
{
	size_t n = strlen(path);

	if (n > FILES_ECHO_PATH)
		n = render_utf8_cut(path, FILES_ECHO_PATH);
	return render_string(path, n, NULL);
}

struct json_object *
files_path_error(const struct tool_call *call, const char *path, int err)
{
	struct json_object *e = echo(path), *r;
	const char *p = e != NULL ? json_object_get_string(e) : "";

	switch (err) {
	case EXDEV:
		render_refused(call->audit, "path outside the workspace");
		r = tool_result_error("'%s' is outside the workspace: %s. "
		    "Use a path relative to the workspace root, without '..' "
		    "that climbs above it.", p, path[0] == '/' ?
		    "absolute paths are refused" : "'..' above the workspace "
		    "and symbolic links pointing out of it are refused");
		break;
	case ENOENT:
		render_refused(call->audit, "no such path");
		r = tool_result_error("'%s' does not exist in the workspace "
		    "(paths are relative to the workspace root; list_directory "
		    "shows what is there).", p);
		break;
	case ELOOP:
		render_refused(call->audit, "symlink refused");
		r = tool_result_error("'%s' is a symbolic link (or goes "
		    "through one where links are not followed); refusing to "
		    "follow it. Use the path of the file itself.", p);
		break;
	case ENOTDIR:
		render_refused(call->audit, "not a directory");
		r = tool_result_error("A component of '%s' is not a directory "
		    "(or is a symbolic link, which writes do not follow).", p);
		break;
	case EISDIR:
		render_refused(call->audit, "is a directory");
		r = tool_result_error("'%s' is a directory; use list_directory "
		    "for directories.", p);
		break;
	case EEXIST:
		render_refused(call->audit, "exists");
		r = tool_result_error("'%s' already exists (mode \"create\" "
		    "never replaces a file; use \"overwrite\" or \"append\").",
		    p);
		break;
	case EACCES:
	case EPERM:
		render_refused(call->audit, "permission denied");
		r = tool_result_error("Permission denied for '%s'.", p);
		break;
	case ENAMETOOLONG:
		render_refused(call->audit, "name too long");
		r = tool_result_error("'%s': a name in the path is too long.",
		    p);
		break;
	case ENOSPC:
	case EDQUOT:
		render_refused(call->audit, "no space");
		r = tool_result_error("No space left for '%s': the workspace "
		    "is full (a fresh workspace holds at most workspace_mb = %u "
		    "MiB; a --workspace directory, what its file system has "
		    "free). Nothing was changed: a file is replaced whole or "
		    "not at all. Remove files and try again.", p,
		    call->env->policy->limits.workspace_mb);
		break;
	case ENOSYS:
		render_refused(call->audit, "openat2 missing");
		r = tool_result_error("File tools need openat2 (Linux 5.6 or "
		    "later); this kernel lacks it, so '%s' was not opened.", p);
		break;
	case EAGAIN:
		render_refused(call->audit, "changed while opened");
		r = tool_result_error("'%s' changed while it was being opened; "
		    "nothing was done. Try again.", p);
		break;
	case EROFS:
		render_refused(call->audit, "read-only file system");
		r = tool_result_error("'%s' is on a read-only file system.", p);
		break;
	case EFBIG:
		render_refused(call->audit, "file too large");
		r = tool_result_error("'%s' is too large for this operation.",
		    p);
		break;
	case EMFILE:
	case ENFILE:
	case ENOMEM:
		render_refused(call->audit, "server short of resources");
		r = tool_result_error("The server is short of resources, so "
		    "'%s' was not opened; try again later.", p);
		break;
	default:
		/* the errno goes to the audit log, not to the client */
		(void)snprintf(call->audit->reason, sizeof(call->audit->reason),
		    "open failed: errno %d", err);
		call->audit->refused = true;
		r = tool_result_error("'%s' could not be opened or written (an "
		    "error on the server's side).", p);
		break;
	}
	json_object_put(e);
	return r;
}

struct json_object *
files_type_error(const struct tool_call *call, const char *path, mode_t mode,
    const char *want)
{
	struct json_object *e = echo(path), *r;

	render_refused(call->audit, "not a regular file");
	r = tool_result_error("'%s' is a %s, not a %s; %s.",
	    e != NULL ? json_object_get_string(e) : "", files_type_name(mode),
	    want, S_ISFIFO(mode) || S_ISCHR(mode) || S_ISBLK(mode) ||
	    S_ISSOCK(mode) ? "FIFOs, devices and sockets are refused" :
	    "pick another path");
	json_object_put(e);
	return r;
}

/* ---- read_file ---- */

/* Arguments that become C strings (write_file's content is data). */
static const char *const nul_free[] = { "path", NULL };




/* Result for binary bytes: a resource block with the base64 blob. */
static struct json_object *
binary_result(const char *path, struct json_object *st, const char *b64)
{
	struct json_object *r = NULL, *content, *block, *res;
	char *uri;

	if ((uri = media_uri(FILES_URI_PREFIX, path)) == NULL) {
		json_object_put(st);
		return NULL;
	}
	r = json_object_new_object();
	content = json_object_new_array();
	block = json_object_new_object();
	res = json_object_new_object();
	json_object_object_add(res, "uri", json_object_new_string(uri));
	json_object_object_add(res, "mimeType",
	    json_object_new_string("application/octet-stream"));
	json_object_object_add(res, "blob", json_object_new_string(b64));
	json_object_object_add(block, "type",
	    json_object_new_string("resource"));
	json_object_object_add(block, "resource", res);
	json_object_array_add(content, block);
	json_object_object_add(r, "content", content);
	json_object_object_add(r, "structuredContent", st);
	free(uri);
	return r;
}

/*
 * Result for a whole image file within the per-image cap: a line of text
 * and the image itself, so a model that can see images sees it.
 */
static struct json_object *
image_result(const char *path, struct json_object *st, const char *b64,
    const char *type, size_t len)
{
	struct json_object *e = echo(path), *r, *content, *block;
	char line[FILES_ECHO_PATH * 4 + 96];	/* the echo may be escaped */

	(void)snprintf(line, sizeof(line), "'%s': %s, %zu bytes (the image "
	    "follows).", e != NULL ? json_object_get_string(e) : "", type,
	    len);
	json_object_put(e);
	if ((r = tool_result_ok(st, line)) == NULL)
		return NULL;
	(void)json_object_object_get_ex(r, "content", &content);
	if ((block = json_object_new_object()) == NULL ||
	    json_object_object_add(block, "type",
	    json_object_new_string("image")) != 0 ||
	    json_object_object_add(block, "data",
	    json_object_new_string(b64)) != 0 ||
	    json_object_object_add(block, "mimeType",
	    json_object_new_string(type)) != 0 ||
	    json_object_array_add(content, block) != 0) {
		/* json-c leaves a value it could not add to the caller */
		json_object_put(block);
		json_object_put(r);
		return NULL;
	}
	return r;
}

/*
 * read_file's stages, in the order tool_read_file() runs them. Each
 * returns 0 to go on, or -1 with *r the result that answers (a refusal),
 * NULL when out of memory.
 */

/*
 * 1. The file opened for reading, only if it is a regular file of the
 * workspace: an O_PATH look first (a FIFO or device is never really
 * opened), then the open, which must find the same inode (the look's fd
 * holds it, so its number cannot be reused in between).
 */
static int
read_open(const struct tool_call *call, const char *path, int *ret_fd,
    struct stat *fst, struct json_object **r)
{
	struct stat pst;
	int root, pfd, fd = -1;

	*r = NULL;
	*ret_fd = -1;
	if ((root = files_root(call)) < 0) {
		*r = files_path_error(call, ".", -root);
		return -1;
	}
	if ((pfd = files_openat(root, path, O_PATH, 0)) < 0)
		*r = files_path_error(call, path, -pfd);
	else if (fstat(pfd, &pst) != 0)
		*r = files_path_error(call, path, errno);
	else if (S_ISDIR(pst.st_mode))
		*r = files_path_error(call, path, EISDIR);
	else if (!S_ISREG(pst.st_mode))
		*r = files_type_error(call, path, pst.st_mode, "regular file");
	else if ((fd = files_openat(root, path, O_RDONLY | O_NONBLOCK,
	    0)) < 0)
		*r = files_path_error(call, path, -fd);
	else if (fstat(fd, fst) != 0 || fst->st_ino != pst.st_ino ||
	    fst->st_dev != pst.st_dev || !S_ISREG(fst->st_mode))
		*r = files_path_error(call, path, EAGAIN);
	else
		*ret_fd = fd;
	if (*ret_fd < 0 && fd >= 0)
		(void)close(fd);
	if (pfd >= 0)
		(void)close(pfd);
	(void)close(root);
	return *ret_fd >= 0 ? 0 : -1;
}

/* 2. At most max bytes from offset, NUL-terminated, in *ret_buf (owned). */
static int
read_bytes(const struct tool_call *call, const char *path, int fd,
    int64_t offset, int64_t max, char **ret_buf, size_t *ret_len,
    struct json_object **r)
{
	size_t len = 0;
	ssize_t n;
	char *buf;

	*r = NULL;
	if ((buf = malloc((size_t)max + 1)) == NULL)
		return -1;
	while (len < (size_t)max) {
		n = pread(fd, buf + len, (size_t)max - len,
		    offset + (off_t)len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			*r = files_path_error(call, path, errno);
			free(buf);
			return -1;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	*ret_buf = buf;
	*ret_len = len;
	return 0;
}

/*
 * 3. How the bytes go back: base64 when asked, or when they are binary
 * and "text" was not asked (then they are refused); text is cut to whole
 * characters.
 */
static int
read_encoding(const struct tool_call *call, const char *path,
    const char *enc, char *buf, size_t *len, bool *ret_binary,
    struct json_object **r)
{
	bool is_binary = render_is_binary(buf, render_utf8_cut(buf, *len));
	struct json_object *e;

	*ret_binary = strcmp(enc, "base64") == 0 ||
	    (is_binary && strcmp(enc, "text") != 0);
	if (!*ret_binary && strcmp(enc, "text") == 0 && is_binary) {
		e = echo(path);
		render_refused(call->audit, "binary file as text");
		*r = tool_result_error("'%s' is binary (it has NUL bytes or is "
		    "not UTF-8), so it cannot be returned as text. Call again "
		    "with encoding \"base64\" (or \"auto\").",
		    e ? json_object_get_string(e) : "");
		json_object_put(e);
		return -1;
	}
	if (!*ret_binary) {
		*len = render_utf8_cut(buf, *len);	/* whole characters */
		buf[*len] = '\0';
	}
	return 0;
}

/* 4. The result: text, an image, or a base64 resource (NULL: no memory). */
static struct json_object *
read_result(const struct tool_call *call, const char *path,
    const char *path_b64, const char *buf, size_t len,
    const struct stat *fst, int64_t offset, bool binary)
{
	bool truncated = offset + (int64_t)len < fst->st_size;
	struct json_object *st, *r;
	const char *itype;
	char *b64 = NULL;

	if ((st = json_object_new_object()) == NULL)
		return NULL;
	call->audit->ran = true;
	call->audit->truncated = truncated;
	/* a path given as bytes may be anything: its JSON text, and them */
	if (tool_json_add(st, "path", render_string(path, strlen(path),
	    NULL)) != 0 || (path_b64 != NULL && tool_json_add(st,
	    "path_bytes", json_object_new_string(path_b64)) != 0) ||
	    tool_json_add(st, "size",
	    json_object_new_int64(fst->st_size)) != 0 ||
	    tool_json_add(st, "offset", json_object_new_int64(offset)) != 0 ||
	    tool_json_add(st, "bytes",
	    json_object_new_int64((int64_t)len)) != 0 ||
	    tool_json_add(st, "truncated",
	    json_object_new_boolean(truncated)) != 0 ||
	    tool_json_add(st, "encoding",
	    json_object_new_string(binary ? "base64" : "utf8")) != 0)
		goto fail;
	if (!binary) {
		if (tool_json_add(st, "content",
		    json_object_new_string_len(buf, (int)len)) != 0)
			goto fail;
		return tool_result_ok(st, buf);
	}
	if ((b64 = render_base64(buf, len)) == NULL || tool_json_add(st,
	    "content", json_object_new_string(b64)) != 0)
		goto fail;
	itype = media_image_type((const unsigned char *)buf, len);
	if (itype != NULL && offset == 0 && (off_t)len == fst->st_size &&
	    len <= MEDIA_IMAGE_MAX_BYTES)
		r = image_result(path, st, b64, itype, len);
	else
		r = binary_result(path, st, b64);
	free(b64);
	return r;
 fail:
	free(b64);
	json_object_put(st);
	return NULL;
}

/*
 * The path of a call that names its file by path_bytes too: the base64 of
 * the name's bytes, as structuredContent.files[].path_bytes gives them, for
 * a name no JSON string holds (bytes that are not UTF-8). path stays
 * required (clients refuse schemas that choose between keys at the top)
 * and must be those bytes' JSON text, files[].path: a mix-up of two files
 * is refused. 0 and *ret (owned, NUL-terminated); -1 with *ret_result a
 * refusal; -ENOMEM.
 */
static int
path_from_bytes(const struct tool_call *call, const char *path,
    const char *b64, char **ret, struct json_object **ret_result)
{
	struct json_object *shown;
	char *raw = NULL;
	size_t len;
	int rc = -1;

	*ret = NULL;
	errno = 0;
	if ((raw = render_base64_decode(b64, strlen(b64), &len)) == NULL &&
	    errno == ENOMEM)
		return -ENOMEM;
	if (raw == NULL || len == 0) {
		render_refused(call->audit, "path_bytes not base64");
		*ret_result = tool_result_error("path_bytes is not base64 "
		    "(RFC 4648): give it as structuredContent.files[]."
		    "path_bytes shows it, or leave it out.");
		goto out;
	}
	if (memchr(raw, '\0', len) != NULL) {
		*ret_result = render_nul_refusal(call->audit, "path_bytes");
		goto out;
	}
	if ((shown = render_string(raw, len, NULL)) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	if (strcmp(json_object_get_string(shown), path) != 0) {
		json_object_put(shown);
		render_refused(call->audit, "path_bytes not path");
		*ret_result = tool_result_error("path_bytes are not the bytes "
		    "of path: give path as structuredContent.files[].path "
		    "shows it and path_bytes as files[].path_bytes does.");
		goto out;
	}
	json_object_put(shown);
	*ret = raw;	/* NUL-terminated by the decoder, no NUL inside */
	raw = NULL;
	rc = 0;
 out:
	free(raw);
	if (rc == -1 && *ret_result == NULL)
		rc = -ENOMEM;
	return rc;
}

enum mcp_err
tool_read_file(const struct tool_call *call,
    const struct json_object *args,
    struct json_object **ret_result)
{
	const struct policy *p = call->env->policy;
	const char *path = toolargs_str(args, "path", "");
	const char *path_b64 = toolargs_str(args, "path_bytes", NULL);
	char *bpath = NULL;
	const char *enc = toolargs_str(args, "encoding", "auto");
	int64_t offset = toolargs_int(args, "offset", 0);
	int64_t max = toolargs_int(args, "max_bytes", p->limits.read_bytes);
	struct json_object *r = NULL;
	struct stat fst;
	char *buf = NULL;
	size_t len = 0;
	bool binary;
	int fd = -1;

	if (max > p->limits.read_bytes)
		max = p->limits.read_bytes;
	if (render_nul_key(args, nul_free) != NULL)
		r = render_nul_refusal(call->audit, "path");
	else if (path_b64 != NULL && path_from_bytes(call, path, path_b64,
	    &bpath, &r) != 0)
		;	/* r is the refusal, or NULL: out of memory */
	else {
		if (bpath != NULL)
			path = bpath;
		if (read_open(call, path, &fd, &fst, &r) == 0 &&
		    read_bytes(call, path, fd, offset, max, &buf, &len,
		    &r) == 0 && read_encoding(call, path, enc, buf, &len,
		    &binary, &r) == 0)
			r = read_result(call, path, path_b64, buf, len, &fst,
			    offset, binary);
	}
	free(bpath);
	free(buf);
	if (fd >= 0)
		(void)close(fd);
	if (r == NULL)
		return MCP_ERR_NOMEM;
	*ret_result = r;
	return MCP_OK;
}

/* ---- write_file ---- */

/* New files and directories belong to the workspace's owner (the uid
 * sandboxed programs run as), so later runs can change them. */
static void
give_to_owner(int fd, const struct stat *root_st)
{
	/* best effort: a file we cannot give away stays readable to all */
	if (sb_host_root() && root_st->st_uid != 0 &&
	    fchown(fd, root_st->st_uid, root_st->st_gid) != 0)
		return;
}

/* A file that replaces old gets old's owner (before its mode: a chown
 * clears set-id bits). Best effort, as above: only root can give away. */
static void
keep_owner(int fd, const struct stat *old)
{
	if (sb_host_root() && fchown(fd, old->st_uid, old->st_gid) != 0)
		return;
}

/*
 * Walks the directories of path (all but the last component) from root,
 * one component at a time, never following symlinks, creating missing ones
 * if create. Returns an O_PATH fd of the parent or -errno; *ret_base points
 * into path at the last component.
 */
static int
open_parent(int root, const struct stat *root_st, char *path, bool create,
    const char **ret_base)
{
	char *comp = path, *slash;
	int cur, next;

	if (path[0] == '/') {
		/* let the kernel judge it (RESOLVE_BENEATH: EXDEV) */
		next = files_openat(root, path, O_PATH, 0);
		if (next >= 0)
			(void)close(next);
		return next >= 0 ? -EXDEV : next;
	}
	if ((cur = fcntl(root, F_DUPFD_CLOEXEC, 0)) < 0)
		return -errno;
	for (;;) {
		slash = strchr(comp, '/');
		if (slash == NULL)
			break;
		*slash = '\0';
		if (comp[0] == '\0' || strcmp(comp, ".") == 0) {
			comp = slash + 1;
			continue;
		}
		next = files_openat(cur, comp, O_PATH | O_DIRECTORY |
		    O_NOFOLLOW, 0);
		if (next == -ENOENT && create) {
			struct stat st;
			bool made;
			int dfd;

			made = mkdirat(cur, comp, 0755) == 0;
			if (!made && errno != EEXIST) {
				next = -errno;
			} else {
				dfd = files_openat(cur, comp, O_RDONLY |
				    O_DIRECTORY | O_NOFOLLOW, 0);
				/*
				 * Given away only if we made it and it still
				 * looks so (ours, empty): after EEXIST, or a
				 * rename over it since, the dir at this name is
				 * someone else's, and root would hand it over.
				 */
				if (dfd >= 0 && made && fstat(dfd, &st) == 0 &&
				    st.st_uid == geteuid() && st.st_nlink == 2)
					give_to_owner(dfd, root_st);
				if (dfd >= 0)
					(void)close(dfd);
				next = files_openat(cur, comp, O_PATH |
				    O_DIRECTORY | O_NOFOLLOW, 0);
			}
		}
		*slash = '/';
		(void)close(cur);
		if (next < 0)
			return next;
		cur = next;
		comp = slash + 1;
	}
	*ret_base = comp;
	return cur;
}

/* Writes len bytes of data to fd in full: 0 or an errno. */
static int
write_all(int fd, const char *data, size_t len)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = write(fd, data + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno;
		done += (size_t)n;
	}
	return 0;
}

/* Makes the directory entry changes in parent durable: 0 or an errno. */
static int
sync_dir(int parent)
{
	int dfd, rc = 0;

	if ((dfd = files_openat(parent, ".", O_RDONLY | O_DIRECTORY, 0)) < 0)
		return -dfd;
	if (fsync(dfd) != 0)
		rc = errno;
	(void)close(dfd);
	return rc;
}

/*
 * Appends to the file open at fd (size old_size): all of data, or on
 * failure nothing (the file is cut back to old_size). 0 or an errno.
 */
static int
append_whole(int fd, off_t old_size, const char *data, size_t len)
{
	int err;

	if ((err = write_all(fd, data, len)) != 0 ||
	    (fsync(fd) != 0 && (err = errno) != 0)) {
		/* what can fail here (EIO) leaves nothing better to do */
		if (ftruncate(fd, old_size) != 0)
			return err;
		return err;
	}
	return 0;
}

/*
 * Puts data at base in parent as a new file, whole or not at all: a
 * temporary file in the same directory is written, given old's mode and
 * owner (old NULL: a new file, given to the workspace's owner), synced,
 * then renamed over base (replace) or to base only if nothing is there.
 * On failure base is untouched and the temporary file is gone. Returns
 * 0 or an errno (EEXIST: !replace and base appeared meanwhile).
 */
static int
replace_whole(int parent, const char *base, const struct stat *old,
    const struct stat *root_st, bool replace, const char *data, size_t len,
    int *ret_fd)
{
	char tmp[32];
	uint64_t r;
	int fd = -1, err, i;

	for (i = 0; i < FILES_TMP_TRIES && fd < 0; i++) {
		if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
			return EAGAIN;
		(void)snprintf(tmp, sizeof(tmp), ".mcp-write.%016llx",
		    (unsigned long long)r);
		fd = files_openat(parent, tmp, O_RDWR | O_CREAT | O_EXCL |
		    O_NOFOLLOW, 0644);
		if (fd < 0 && fd != -EEXIST)
			return -fd;
	}
	if (fd < 0)
		return EEXIST;
	if (old != NULL) {
		/* best effort, as give_to_owner: only root can give away */
		keep_owner(fd, old);
		err = fchmod(fd, old->st_mode & 07777) != 0 ? errno : 0;
	} else {
		give_to_owner(fd, root_st);
		err = 0;
	}
	if (err == 0)
		err = write_all(fd, data, len);
	if (err == 0 && fsync(fd) != 0)
		err = errno;
	if (err == 0 && (replace ? renameat(parent, tmp, parent, base) :
	    renameat2(parent, tmp, parent, base, RENAME_NOREPLACE)) != 0)
		err = errno;
	if (err != 0) {
		(void)unlinkat(parent, tmp, 0);
		(void)close(fd);
		return err;
	}
	*ret_fd = fd;
	return sync_dir(parent);
}

/*
 * One write_file call through the stages tool_write_file() runs in order.
 * Each returns 0 to go on, or -1 with *r the result that answers (a
 * refusal), NULL when out of memory.
 */
struct write_op {
	const struct tool_call *call;
	const char *path;		/* borrowed from args */
	const char *mode;		/* "overwrite", "append" or "create" */
	const char *data;		/* the content, or decoded */
	size_t len;
	void *decoded;			/* owned: content decoded from base64 */
	char *copy;			/* owned: path, cut by open_parent() */
	const char *base;		/* in copy: the last component */
	struct stat root_st;
	struct stat pst;		/* what is there, when existed */
	bool existed;
	int root, parent, pfd, fd;	/* owned, -1 if none; pfd holds the
					 * inode pst names */
};

/* 1. The bytes to write: content as it is (it may hold U+0000: its
 * whole length), or decoded from base64. */
static int
write_content(struct write_op *w, const struct json_object *args,
    struct json_object **r)
{
	const char *content = toolargs_str(args, "content", "");
	const char *enc = toolargs_str(args, "encoding", "utf8");
	size_t clen;

	*r = NULL;
	clen = (size_t)json_object_get_string_len(toolargs_get(args,
	    "content"));
	if (strcmp(enc, "base64") != 0) {
		w->data = content;
		w->len = clen;
		return 0;
	}
	if ((w->decoded = render_base64_decode(content, clen,
	    &w->len)) == NULL) {
		if (errno == ENOMEM)
			return -1;
		render_refused(w->call->audit, "bad base64");
		*r = tool_result_error("content is not valid base64 "
		    "(RFC 4648 alphabet, no whitespace).");
		return -1;
	}
	w->data = w->decoded;
	return 0;
}

/*
 * The first directory on the way to path (a copy, cut) that is not there,
 * beneath root and never through a symlink; NULL when each one is.
 */
static const char *
first_missing_dir(int root, char *path)
{
	char *slash = path;
	int fd;

	while ((slash = strchr(slash, '/')) != NULL) {
		*slash = '\0';
		fd = files_openat(root, path, O_PATH | O_DIRECTORY |
		    O_NOFOLLOW, 0);
		if (fd == -ENOENT)
			return path;
		if (fd < 0)
			return NULL;
		(void)close(fd);
		*slash++ = '/';
	}
	return NULL;
}

/*
 * 2. Where: not under a protected name (what every sandbox sees
 * read-only, here existing or not), and the parent directory opened
 * beneath the workspace (made when create_dirs).
 */
static int
write_parent(struct write_op *w, bool create_dirs, struct json_object **r)
{
	const struct tool_call *call = w->call;
	const char *base = NULL;

	*r = NULL;
	if (policy_path_protected(call->env->policy, w->path)) {
		render_refused(call->audit, "protected path");
		*r = tool_result_error("%s is under a protected name of the "
		    "workspace (the policy's protected_paths, e.g. .git: what "
		    "it holds runs on the host); nothing was written.",
		    w->path);
		return -1;
	}
	if ((w->root = files_root(call)) < 0) {
		*r = files_path_error(call, ".", -w->root);
		return -1;
	}
	if (fstat(w->root, &w->root_st) != 0) {
		*r = files_path_error(call, ".", errno);
		return -1;
	}
	if ((w->copy = strdup(w->path)) == NULL)
		return -1;
	w->parent = open_parent(w->root, &w->root_st, w->copy, create_dirs,
	    &base);
	if (w->parent == -ENOENT && !create_dirs) {
		char *copy = strdup(w->path);
		const char *dir = copy != NULL ?
		    first_missing_dir(w->root, copy) : NULL;

		if (dir != NULL) {
			render_refused(call->audit, "no such directory");
			*r = tool_result_error("'%s' was not written: the "
			    "directory '%s' does not exist in the workspace. "
			    "Call write_file again with \"create_dirs\": true "
			    "to make the missing directories.", w->path, dir);
		}
		free(copy);
		if (*r != NULL)
			return -1;
	}
	if (w->parent < 0) {
		*r = files_path_error(call, w->path, -w->parent);
		return -1;
	}
	w->base = base;
	if (base[0] == '\0' || strcmp(base, ".") == 0 ||
	    strcmp(base, "..") == 0) {
		*r = files_path_error(call, w->path,
		    strcmp(base, "..") == 0 ? EXDEV : EISDIR);
		return -1;
	}
	return 0;
}

/* 3. What is there now, without following or opening it for real:
 * nothing, or a regular file (which mode "create" refuses). */
static int
write_existing(struct write_op *w, struct json_object **r)
{
	const struct tool_call *call = w->call;

	w->pfd = files_openat(w->parent, w->base, O_PATH | O_NOFOLLOW, 0);
	if (w->pfd < 0) {
		if (w->pfd == -ENOENT)
			return 0;
		*r = files_path_error(call, w->path, -w->pfd);
		return -1;
	}
	if (fstat(w->pfd, &w->pst) != 0)
		*r = files_path_error(call, w->path, errno);
	else if (S_ISLNK(w->pst.st_mode))
		*r = files_path_error(call, w->path, ELOOP);
	else if (S_ISDIR(w->pst.st_mode))
		*r = files_path_error(call, w->path, EISDIR);
	else if (!S_ISREG(w->pst.st_mode))
		*r = files_type_error(call, w->path, w->pst.st_mode,
		    "regular file");
	else if (strcmp(w->mode, "create") == 0)
		*r = files_path_error(call, w->path, EEXIST);
	else {
		w->existed = true;
		return 0;
	}
	return -1;
}

/*
 * 4. The write, after the policy's size limit: an append to an existing
 * file in place (a copy of up to the cap per append would cost more than
 * it saves; a failure cuts the file back), anything else a new file
 * renamed into place, whole or not at all.
 */
static int
write_data(struct write_op *w, struct json_object **r)
{
	const struct tool_call *call = w->call;
	uint32_t cap_mb = call->env->policy->limits.file_size_mb;
	bool append = strcmp(w->mode, "append") == 0;
	struct stat fst;
	int err;

	*r = NULL;
	if ((append ? (uint64_t)(w->existed ? w->pst.st_size : 0) : 0) +
	    w->len > (uint64_t)cap_mb << 20) {
		render_refused(call->audit, "file size limit");
		*r = tool_result_error("Writing %zu bytes would make the file "
		    "larger than the policy's limit of %u MiB; nothing was "
		    "written.", w->len, cap_mb);
		return -1;
	}
	if (append && w->existed) {
		if ((w->fd = files_openat(w->parent, w->base, O_WRONLY |
		    O_APPEND | O_NOFOLLOW | O_NONBLOCK, 0)) < 0) {
			*r = files_path_error(call, w->path, -w->fd);
			return -1;
		}
		if (fstat(w->fd, &fst) != 0 || !S_ISREG(fst.st_mode) ||
		    fst.st_ino != w->pst.st_ino || fst.st_dev != w->pst.st_dev) {
			*r = files_path_error(call, w->path, EAGAIN);
			return -1;
		}
		err = append_whole(w->fd, fst.st_size, w->data, w->len);
	} else {
		err = replace_whole(w->parent, w->base, w->existed ? &w->pst :
		    NULL, &w->root_st, w->existed, w->data, w->len, &w->fd);
		if (err == EEXIST && append)
			err = EAGAIN;	/* it appeared while we wrote */
	}
	if (err != 0) {
		*r = files_path_error(call, w->path, err);
		return -1;
	}
	return 0;
}

/* 5. The result, from the file as written (NULL: out of memory). */
static struct json_object *
write_result(struct write_op *w)
{
	const struct tool_call *call = w->call;
	struct json_object *st;
	struct stat fst;

	if (fstat(w->fd, &fst) != 0)
		return files_path_error(call, w->path, errno);
	call->audit->ran = true;
	if ((st = json_object_new_object()) == NULL)
		return NULL;
	if (tool_json_add(st, "path", json_object_new_string(w->path)) != 0 ||
	    tool_json_add(st, "bytes_written",
	    json_object_new_int64((int64_t)w->len)) != 0 ||
	    tool_json_add(st, "size",
	    json_object_new_int64(fst.st_size)) != 0 ||
	    tool_json_add(st, "created",
	    json_object_new_boolean(!w->existed)) != 0) {
		json_object_put(st);
		return NULL;
	}
	return render_ok_json(st);
}

enum mcp_err
tool_write_file(const struct tool_call *call,
    const struct json_object *args,
    struct json_object **ret_result)
{
	struct write_op w;
	struct json_object *r = NULL;
	int *fds[] = { &w.fd, &w.pfd, &w.parent, &w.root };
	size_t i;

	memset(&w, 0, sizeof(w));
	w.call = call;
	w.path = toolargs_str(args, "path", "");
	w.mode = toolargs_str(args, "mode", "overwrite");
	w.root = w.parent = w.pfd = w.fd = -1;
	if (render_nul_key(args, nul_free) != NULL)
		r = render_nul_refusal(call->audit, "path");
	else if (write_content(&w, args, &r) == 0 &&
	    write_parent(&w, toolargs_bool(args, "create_dirs", false),
	    &r) == 0 && write_existing(&w, &r) == 0 &&
	    write_data(&w, &r) == 0)
		r = write_result(&w);
	free(w.copy);
	free(w.decoded);
	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (*fds[i] >= 0)
			(void)close(*fds[i]);
	if (r == NULL)
		return MCP_ERR_NOMEM;
	*ret_result = r;
	return MCP_OK;
}


