/*
 * What a call made (workspace_files.h): two walks and their difference.
 * A file counts as created or changed when the walk after the run finds a
 * regular file the walk before did not, or one whose inode, size,
 * modification or change time differ. When the walk before was cut short
 * (WSF_MAX_SCAN), a file it did not see counts only if its change time is
 * not older than the walk: the kernel sets ctime on every write, chmod or
 * rename, and no program can set it back.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json_build.h"
#include "files.h"
#include "render.h"
#include "workspace_files.h"

static int
entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct wsf_entry *)a)->path,
	    ((const struct wsf_entry *)b)->path);
}

static int
add_entry(struct wsf_scan *s, const char *path, const struct stat *st)
{
	struct wsf_entry *ne;
	size_t ncap;

	if (s->n == s->cap) {
		ncap = s->cap ? s->cap * 2 : 64;
		if ((ne = realloc(s->e, ncap * sizeof(*ne))) == NULL)
			return -ENOMEM;
		s->e = ne;
		s->cap = ncap;
	}
	if ((s->e[s->n].path = strdup(path)) == NULL)
		return -ENOMEM;
	s->e[s->n].dev = st->st_dev;
	s->e[s->n].ino = st->st_ino;
	s->e[s->n].size = st->st_size;
	s->e[s->n].mtime = st->st_mtim;
	s->e[s->n].ctime = st->st_ctim;
	s->n++;
	return 0;
}

/*
 * Walks the directory dfd (taken: closed here) whose path relative to the
 * top is prefix (len bytes in buf). *seen counts entries against the bound.
 */
static int
walk(int dfd, char *buf, size_t len, int depth, size_t *seen,
    struct wsf_scan *s)
{
	struct dirent *de;
	struct stat st;
	DIR *d;
	size_t nl;
	int rc = 0, cfd;

	if ((d = fdopendir(dfd)) == NULL) {
		rc = errno == ENOMEM ? -ENOMEM : 0;
		(void)close(dfd);
		s->complete = false;
		return rc;
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (++*seen > WSF_MAX_SCAN) {
			s->complete = false;
			break;
		}
		nl = strlen(de->d_name);
		if (len + nl + 2 > PATH_MAX) {
			s->complete = false;
			continue;
		}
		if (fstatat(dirfd(d), de->d_name, &st,
		    AT_SYMLINK_NOFOLLOW) != 0)
			continue;	/* gone meanwhile */
		if (len > 0)
			buf[len] = '/';
		memcpy(buf + len + (len > 0), de->d_name, nl + 1);
		if (S_ISREG(st.st_mode))
			rc = add_entry(s, buf, &st);
		else if (S_ISDIR(st.st_mode)) {
			if (depth + 1 >= WSF_MAX_DEPTH) {
				s->complete = false;
			} else if ((cfd = openat(dirfd(d), de->d_name,
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			    O_CLOEXEC)) >= 0)
				rc = walk(cfd, buf, len + (len > 0) + nl,
				    depth + 1, seen, s);
		}
		buf[len] = '\0';
	}
	(void)closedir(d);
	return rc;
}

int
wsf_scan_take(const char *dir, struct wsf_scan *s)
{
	char buf[PATH_MAX];
	size_t seen = 0;
	int fd, rc;

	memset(s, 0, sizeof(*s));
	(void)clock_gettime(CLOCK_REALTIME_COARSE, &s->start);
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -errno;
	s->complete = true;
	buf[0] = '\0';
	if ((rc = walk(fd, buf, 0, 0, &seen, s)) != 0) {
		wsf_scan_free(s);
		return rc;
	}
	if (s->n > 1)	/* qsort and bsearch take no NULL array */
		qsort(s->e, s->n, sizeof(*s->e), entry_cmp);
	return 0;
}

void
wsf_scan_free(struct wsf_scan *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->e[i].path);
	free(s->e);
	memset(s, 0, sizeof(*s));
}

static const struct wsf_entry *
find(const struct wsf_scan *s, const char *path)
{
	struct wsf_entry key;

	if (s->n == 0)
		return NULL;
	key.path = (char *)path;
	return bsearch(&key, s->e, s->n, sizeof(*s->e), entry_cmp);
}

static bool
ts_eq(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

static bool
ts_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec ||
	    (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static bool
changed(const struct wsf_scan *before, const struct wsf_entry *now)
{
	const struct wsf_entry *was = find(before, now->path);

	if (was == NULL)
		return before->complete ||
		    !ts_before(&now->ctime, &before->start);
	return was->ino != now->ino || was->dev != now->dev ||
	    was->size != now->size || !ts_eq(&was->mtime, &now->mtime) ||
	    !ts_eq(&was->ctime, &now->ctime);
}

/*
 * Opens path beneath root for reading, never through a symlink, and checks
 * it is still the regular file e the walk saw. fd or -errno.
 */
static int
open_seen(int root, const struct wsf_entry *e)
{
	struct stat st;
	int fd;

	fd = files_openat_strict(root, e->path, O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_ino != e->ino || st.st_dev != e->dev) {
		(void)close(fd);
		return -EAGAIN;
	}
	return fd;
}

/* Reads up to max bytes from fd at 0 into buf; the count or -errno. */
static ssize_t
read_upto(int fd, unsigned char *buf, size_t max)
{
	size_t len = 0;
	ssize_t n;

	while (len < max) {
		n = pread(fd, buf + len, max - len, (off_t)len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	return (ssize_t)len;
}

static struct json_object *
image_block(const unsigned char *data, size_t len, const char *type)
{
	struct json_object *b;
	char *b64;

	if ((b64 = render_base64(data, len)) == NULL)
		return NULL;
	b = json_object_new_object();
	b = jb_built(b, jb_add(b, "type", json_object_new_string("image")) ||
	    jb_add(b, "data", json_object_new_string(b64)) ||
	    jb_add(b, "mimeType", json_object_new_string(type)));
	free(b64);
	return b;
}

/*
 * A name as the server's text shows it (render_name_text): the program
 * chose it, so a newline in it must not start a line of ours, nor an ESC
 * reach a terminal. Owned JSON string, or NULL.
 */
static struct json_object *
name_text(const char *path)
{
	struct json_object *o;
	char *t;

	if ((t = render_name_text(path, strlen(path))) == NULL)
		return NULL;
	o = json_object_new_string(t);
	free(t);
	return o;
}

/*
 * Adds path_bytes (base64 of the name's bytes) to o when path alone is not
 * the name (render_name_plain): ill-formed bytes became U+FFFD there, or
 * it holds controls. 0, or -1 on allocation failure.
 */
static int
add_path_bytes(struct json_object *o, const char *path)
{
	char *b64;
	int rc;

	if (render_name_plain(path, strlen(path)))
		return 0;
	if ((b64 = render_base64(path, strlen(path))) == NULL)
		return -1;
	rc = jb_add(o, "path_bytes", json_object_new_string(b64));
	free(b64);
	return rc;
}

static struct json_object *
link_block(const char *uri, const char *path, const char *type, off_t size)
{
	struct json_object *b = json_object_new_object();

	return jb_built(b, jb_add(b, "type",
	    json_object_new_string("resource_link")) ||
	    jb_add(b, "uri", json_object_new_string(uri)) ||
	    jb_add(b, "name", name_text(path)) ||
	    jb_add(b, "mimeType", json_object_new_string(type)) ||
	    jb_add(b, "size", json_object_new_int64(size)));
}

/* One file of the report; what was done with it goes into the text. */
struct item {
	const struct wsf_entry *e;
	const char *type;	/* static */
	const char *shown;	/* static: how the image came back, or NULL */
};

/*
 * The image content (or link) of one changed image file, within what the
 * caps leave (*left bytes, *nimg images). Sets it->shown.
 */
static enum mcp_err
add_image(int root, struct item *it, const char *uri_prefix,
    struct json_object *content, size_t *left, size_t *nimg)
{
	struct json_object *b = NULL;
	unsigned char *buf;
	char *uri;
	ssize_t n;
	int fd;

	if ((off_t)WSF_IMAGE_MAX_BYTES >= it->e->size &&
	    (size_t)it->e->size <= *left && *nimg < WSF_MAX_IMAGES) {
		if ((fd = open_seen(root, it->e)) < 0) {
			it->shown = "changed while it was read: not shown";
			return MCP_OK;
		}
		if ((buf = malloc((size_t)it->e->size + 1)) == NULL) {
			(void)close(fd);
			return MCP_ERR_NOMEM;
		}
		/* one byte more than the walk saw: a file still growing */
		n = read_upto(fd, buf, (size_t)it->e->size + 1);
		(void)close(fd);
		if (n != (ssize_t)it->e->size || media_image_type(buf,
		    (size_t)n) != it->type) {
			free(buf);
			it->shown = "changed while it was read: not shown";
			return MCP_OK;
		}
		b = image_block(buf, (size_t)n, it->type);
		free(buf);
		if (jb_push(content, b) != 0)
			return MCP_ERR_NOMEM;
		*left -= (size_t)n;
		(*nimg)++;
		it->shown = "shown below as an image";
		return MCP_OK;
	}
	if (uri_prefix == NULL) {
		it->shown = "too large to show here";
		return MCP_OK;
	}
	if ((uri = media_uri(uri_prefix, it->e->path)) == NULL)
		return MCP_ERR_NOMEM;
	b = link_block(uri, it->e->path, it->type, it->e->size);
	free(uri);
	if (jb_push(content, b) != 0)
		return MCP_ERR_NOMEM;
	it->shown = "too large to show here: linked below (resources/read)";
	return MCP_OK;
}

const char *
wsf_sniff_entry(int root, const struct wsf_entry *e)
{
	unsigned char buf[MEDIA_SNIFF_BYTES];
	ssize_t n;
	int fd;

	if ((fd = open_seen(root, e)) < 0)
		return "application/octet-stream";
	n = read_upto(fd, buf, sizeof(buf));
	(void)close(fd);
	return media_sniff_type(buf, n > 0 ? (size_t)n : 0);
}

enum mcp_err
wsf_report(const char *dir, const struct wsf_scan *before,
    const char *uri_prefix, bool always, struct json_object *r)
{
	struct wsf_scan after;
	struct json_object *content, *sc = NULL, *files = NULL, *o, *v;
	struct json_object *imgs = NULL;	/* image and link blocks */
	struct item *items = NULL;
	size_t n = 0, i, left = WSF_RESULT_MAX_BYTES, nimg = 0, listed;
	enum mcp_err st = MCP_OK;
	char *text = NULL, *uri, *name;
	size_t tlen = 0;
	bool add_sc;
	FILE *f = NULL;
	int root = -1;

	if (!json_object_object_get_ex(r, "content", &content))
		return MCP_ERR_INTERNAL;
	if (wsf_scan_take(dir, &after) != 0)
		memset(&after, 0, sizeof(after));	/* nothing to report */
	if ((items = calloc(after.n + 1, sizeof(*items))) == NULL ||
	    (imgs = json_object_new_array()) == NULL) {
		st = MCP_ERR_NOMEM;
		goto out;
	}
	for (i = 0; i < after.n; i++)
		if (changed(before, &after.e[i]))
			items[n++].e = &after.e[i];
	add_sc = (always || n > 0) &&
	    json_object_object_get_ex(r, "structuredContent", &sc) &&
	    json_object_is_type(sc, json_type_object) &&
	    !json_object_object_get_ex(sc, "files", NULL) &&
	    !json_object_object_get_ex(sc, "files_omitted", NULL);
	if (n > 0 && (root = open(dir, O_PATH | O_DIRECTORY |
	    O_CLOEXEC)) < 0) {
		n = 0;		/* the directory went: nothing to read */
	}
	listed = n < WSF_MAX_LISTED ? n : WSF_MAX_LISTED;
	for (i = 0; i < listed; i++) {
		items[i].type = wsf_sniff_entry(root, items[i].e);
		if (strncmp(items[i].type, "image/", 6) == 0 &&
		    (st = add_image(root, &items[i], uri_prefix, imgs,
		    &left, &nimg)) != MCP_OK)
			goto out;
	}
	if (add_sc) {
		if ((files = json_object_new_array()) == NULL) {
			st = MCP_ERR_NOMEM;
			goto out;
		}
		for (i = 0; i < listed; i++) {
			uri = uri_prefix != NULL ? media_uri(uri_prefix,
			    items[i].e->path) : NULL;
			o = json_object_new_object();
			o = jb_built(o, (uri_prefix != NULL && uri == NULL) ||
			    jb_add(o, "path", render_string(items[i].e->path,
			    strlen(items[i].e->path), NULL)) ||
			    add_path_bytes(o, items[i].e->path) != 0 ||
			    jb_add(o, "size", json_object_new_int64(
			    items[i].e->size)) ||
			    jb_add(o, "type", json_object_new_string(
			    items[i].type)) ||
			    (uri != NULL && jb_add(o, "uri",
			    json_object_new_string(uri))));
			free(uri);
			if (jb_push(files, o) != 0) {
				st = MCP_ERR_NOMEM;
				goto out;
			}
		}
		v = files;
		files = NULL;
		if (jb_add(sc, "files", v) || jb_add(sc, "files_omitted",
		    json_object_new_int64((int64_t)(n - listed)))) {
			st = MCP_ERR_NOMEM;
			goto out;
		}
	}
	if (n == 0)
		goto out;
	if ((f = open_memstream(&text, &tlen)) == NULL) {
		st = MCP_ERR_NOMEM;
		goto out;
	}
	(void)fprintf(f, "Files created or changed (%zu):", n);
	for (i = 0; i < listed; i++) {
		if ((name = render_name_text(items[i].e->path,
		    strlen(items[i].e->path))) == NULL) {
			st = MCP_ERR_NOMEM;
			goto out;
		}
		(void)fprintf(f, "\n- %s (%lld bytes, %s%s%s)", name,
		    (long long)items[i].e->size, items[i].type,
		    items[i].shown != NULL ? "; " : "",
		    items[i].shown != NULL ? items[i].shown : "");
		free(name);
	}
	if (n > listed)
		(void)fprintf(f, "\n- and %zu more, not listed", n - listed);
	if (fclose(f) != 0) {
		f = NULL;
		st = MCP_ERR_NOMEM;
		goto out;
	}
	f = NULL;
	o = json_object_new_object();
	o = jb_built(o, jb_add(o, "type", json_object_new_string("text")) ||
	    jb_add(o, "text", json_object_new_string(text)));
	/* after the run's own text, before the images it describes */
	if (jb_push(content, o) != 0) {
		st = MCP_ERR_NOMEM;
		goto out;
	}
	for (i = 0; i < json_object_array_length(imgs); i++)
		if (jb_push(content, json_object_get(
		    json_object_array_get_idx(imgs, i))) != 0) {
			st = MCP_ERR_NOMEM;
			goto out;
		}
 out:
	json_object_put(imgs);
	if (f != NULL)
		(void)fclose(f);
	free(text);
	json_object_put(files);
	free(items);
	if (root >= 0)
		(void)close(root);
	wsf_scan_free(&after);
	return st;
}
