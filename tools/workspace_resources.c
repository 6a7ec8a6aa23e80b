/*
 * The workspace as resources (workspace_resources.h). Listing reuses the
 * walk of workspace_files.c (symlinks never followed, bounded); reading
 * repeats read_file's steps: O_PATH beneath the workspace, a type check
 * that refuses what is not a regular file before it is really opened, the
 * real open, the same inode.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json_build.h"
#include "files.h"
#include "media.h"
#include "policy.h"
#include "render.h"
#include "workspace_files.h"
#include "tool.h"
#include "workspace_resources.h"

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int
wsr_path_from_uri(const char *uri, char *out, size_t outlen)
{
	const char *p;
	size_t w = 0;
	int hi, lo;

	if (strncmp(uri, FILES_URI_PREFIX, sizeof(FILES_URI_PREFIX) - 1) != 0)
		return -EINVAL;
	for (p = uri + sizeof(FILES_URI_PREFIX) - 1; *p != '\0'; p++) {
		char c = *p;

		if (c == '?' || c == '#')
			return -EINVAL;	/* no query or fragment names a file */
		if (c == '%') {
			if ((hi = hexval(p[1])) < 0 || (lo = hexval(p[2])) < 0)
				return -EINVAL;
			c = (char)(hi << 4 | lo);
			if (c == '\0')
				return -EINVAL;	/* would cut the path */
			p += 2;
		}
		if (w + 1 >= outlen)
			return -ENAMETOOLONG;
		out[w++] = c;
	}
	if (w == 0)
		return -EINVAL;		/* the root is not a file */
	out[w] = '\0';
	return 0;
}

static struct json_object *
resource_obj(const struct wsf_entry *e, const char *type)
{
	struct json_object *o;
	char *uri, *name;

	if ((uri = media_uri(FILES_URI_PREFIX, e->path)) == NULL)
		return NULL;
	/* the name is shown, so escaped (render_name_text); the uri exact */
	if ((name = render_name_text(e->path, strlen(e->path))) == NULL) {
		free(uri);
		return NULL;
	}
	o = json_object_new_object();
	o = jb_built(o, jb_add(o, "uri", json_object_new_string(uri)) ||
	    jb_add(o, "name", json_object_new_string(name)) ||
	    jb_add(o, "mimeType", json_object_new_string(type)) ||
	    jb_add(o, "size", json_object_new_int64(e->size)));
	free(name);
	free(uri);
	return o;
}

/* The path a cursor of ours names, owned and NUL-terminated. */
static int
decode_cursor(const char *cursor, char **ret)
{
	size_t clen = strlen(cursor), alen;
	char *d, *p;

	if (clen == 0 || clen > WSR_MAX_CURSOR)
		return -EINVAL;
	errno = 0;
	if ((d = render_base64_decode(cursor, clen, &alen)) == NULL)
		return errno == ENOMEM ? -ENOMEM : -EINVAL;
	if (alen == 0 || memchr(d, '\0', alen) != NULL) {
		free(d);
		return -EINVAL;
	}
	if ((p = malloc(alen + 1)) == NULL) {
		free(d);
		return -ENOMEM;
	}
	memcpy(p, d, alen);
	p[alen] = '\0';
	free(d);
	*ret = p;
	return 0;
}

int
wsr_list(const char *dir, const char *cursor, struct json_object *resources,
    char **next)
{
	struct wsf_scan s;
	struct json_object *o;
	char *after = NULL;
	size_t i = 0, n = 0;
	int root = -1, rc = 0;

	*next = NULL;
	if (cursor != NULL && (rc = decode_cursor(cursor, &after)) != 0)
		return rc;
	if ((rc = wsf_scan_take(dir, &s)) != 0) {
		free(after);
		/* no workspace yet: nothing to list */
		return rc == -ENOMEM ? rc : 0;
	}
	if ((root = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		goto out;
	if (after != NULL)
		while (i < s.n && strcmp(s.e[i].path, after) <= 0)
			i++;
	for (; i < s.n && n < WSR_PAGE_SIZE; i++, n++) {
		if ((o = resource_obj(&s.e[i], wsf_sniff_entry(root,
		    &s.e[i]))) == NULL ||
		    json_object_array_add(resources, o) != 0) {
			json_object_put(o);
			rc = -ENOMEM;
			goto out;
		}
	}
	if (i < s.n && (*next = render_base64(s.e[i - 1].path,
	    strlen(s.e[i - 1].path))) == NULL)
		rc = -ENOMEM;
 out:
	if (root >= 0)
		(void)close(root);
	wsf_scan_free(&s);
	free(after);
	return rc;
}

int
wsr_read(const char *dir, const char *path, const char *uri, size_t max,
    struct json_object **ret)
{
	struct json_object *o;
	struct stat pst, fst;
	unsigned char *buf = NULL;
	char *b64;
	size_t len = 0;
	ssize_t n;
	int root, pfd = -1, fd = -1, rc = 0;

	if ((root = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -errno;
	/* O_PATH first: a FIFO or device is never really opened */
	if ((pfd = files_openat(root, path, O_PATH, 0)) < 0) {
		rc = pfd;
		goto out;
	}
	if (fstat(pfd, &pst) != 0) {
		rc = -errno;
		goto out;
	}
	if (S_ISDIR(pst.st_mode)) {
		rc = -EISDIR;
		goto out;
	}
	if (!S_ISREG(pst.st_mode)) {
		rc = -EINVAL;
		goto out;
	}
	if (pst.st_size > (off_t)max) {
		rc = -EFBIG;
		goto out;
	}
	if ((fd = files_openat(root, path, O_RDONLY | O_NONBLOCK, 0)) < 0) {
		rc = fd;
		goto out;
	}
	if (fstat(fd, &fst) != 0 || fst.st_ino != pst.st_ino ||
	    fst.st_dev != pst.st_dev || !S_ISREG(fst.st_mode)) {
		rc = -EAGAIN;
		goto out;
	}
	if ((buf = malloc(max + 1)) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	/* one byte over the cap tells a file that grew since its fstat */
	while (len < max + 1) {
		n = pread(fd, buf + len, max + 1 - len, (off_t)len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > max) {
		rc = -EFBIG;
		goto out;
	}
	o = json_object_new_object();
	if (render_utf8_valid((const char *)buf, len) &&
	    memchr(buf, '\0', len) == NULL)
		o = jb_built(o, jb_add(o, "uri", json_object_new_string(uri)) ||
		    jb_add(o, "mimeType", json_object_new_string("text/plain")) ||
		    jb_add(o, "text", json_object_new_string_len(
		    (const char *)buf, (int)len)));
	else {
		b64 = render_base64(buf, len);
		o = jb_built(o, b64 == NULL ||
		    jb_add(o, "uri", json_object_new_string(uri)) ||
		    jb_add(o, "mimeType", json_object_new_string(media_sniff_type(
		    buf, len < MEDIA_SNIFF_BYTES ? len : MEDIA_SNIFF_BYTES))) ||
		    jb_add(o, "blob", json_object_new_string(b64)));
		free(b64);
	}
	if (o == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	*ret = o;
 out:
	free(buf);
	if (fd >= 0)
		(void)close(fd);
	if (pfd >= 0)
		(void)close(pfd);
	(void)close(root);
	return rc;
}

char *
wsr_uri(const char *path)
{
	return media_uri(FILES_URI_PREFIX, path);
}

size_t
wsr_max_read(const struct tool_env *env)
{
	return (size_t)env->policy->limits.read_bytes;
}
