/*
 * list_directory and search_files: bounded walks of a workspace directory.
 * The start is resolved beneath the workspace (files.h); the walk itself
 * never follows a symlink (fstatat AT_SYMLINK_NOFOLLOW, O_NOFOLLOW), holds
 * one fd per level up to a small depth, and stops at entry, file and byte
 * caps with a truncation flag. Only regular files are read, never FIFOs.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "toolargs.h"
#include "files.h"
#include "policy.h"
#include "render.h"
#include "sandboxed.h"

#define WALK_MAX_DIR_ENTRIES	10000	/* names sorted per directory */
#define WALK_MAX_FILES		20000	/* files a search looks at */
#define WALK_MAX_BYTES		(64u << 20)	/* bytes a search reads */
#define WALK_MAX_LINE_TEXT	200	/* bytes of a matching line shown */

/* Arguments that become C strings; files holding U+0000 are not searched. */
static const char *const nul_free[] = { "path", "name", "content", NULL };

struct walk {
	const struct tool_call *call;
	bool search;
	size_t max_items;	/* entries (list) or matches (search) */
	int max_depth;		/* 1: the directory itself only */
	bool hidden;		/* list: include names starting with '.' */
	const char *glob;	/* search: on the base name, or NULL */
	const char *needle;	/* search: literal text, or NULL */
	size_t needle_len;
	bool icase;
	size_t read_cap;	/* bytes read per file */
	char *buf;		/* owned: read_cap + 1 */
	size_t files;		/* regular files looked at */
	size_t bytes;		/* bytes read in all */
	size_t skipped_binary;
	bool truncated;
	struct json_object *items;	/* owned array */
};

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool
full(struct walk *w)
{
	if (json_object_array_length(w->items) >= w->max_items ||
	    w->files >= WALK_MAX_FILES || w->bytes >= WALK_MAX_BYTES) {
		w->truncated = true;
		return true;
	}
	return false;
}

static int
add_entry(struct walk *w, const char *rel, const struct stat *st, int dfd,
    const char *name)
{
	struct json_object *e;
	char target[PATH_MAX];
	ssize_t n;

	if ((e = json_object_new_object()) == NULL)
		return -1;
	json_object_object_add(e, "path", render_string(rel, strlen(rel),
	    NULL));
	json_object_object_add(e, "type",
	    json_object_new_string(files_type_name(st->st_mode)));
	json_object_object_add(e, "size", json_object_new_int64(
	    S_ISREG(st->st_mode) ? st->st_size : 0));
	if (S_ISLNK(st->st_mode) &&
	    (n = readlinkat(dfd, name, target, sizeof(target) - 1)) >= 0)
		json_object_object_add(e, "target", render_string(target,
		    (size_t)n, NULL));
	return json_object_array_add(w->items, e);
}

static const char *
find_text(struct walk *w, const char *hay, size_t len)
{
	size_t i;

	if (!w->icase)
		return memmem(hay, len, w->needle, w->needle_len);
	for (i = 0; i + w->needle_len <= len; i++)
		if (strncasecmp(hay + i, w->needle, w->needle_len) == 0)
			return hay + i;
	return NULL;
}

static int
add_match(struct walk *w, const char *rel, long line, const char *text,
    size_t len)
{
	struct json_object *e;

	if ((e = json_object_new_object()) == NULL)
		return -1;
	json_object_object_add(e, "path", render_string(rel, strlen(rel),
	    NULL));
	if (text != NULL) {
		if (len > WALK_MAX_LINE_TEXT)
			len = render_utf8_cut(text, WALK_MAX_LINE_TEXT);
		json_object_object_add(e, "line", json_object_new_int64(line));
		json_object_object_add(e, "text", render_string(text, len,
		    NULL));
	}
	return json_object_array_add(w->items, e);
}

static int
search_file(struct walk *w, int dfd, const char *name, const char *rel)
{
	struct stat st;
	size_t len = 0, want;
	const char *line, *end, *stop;
	long lineno = 1;
	ssize_t n;
	int fd;

	w->files++;
	if (w->needle == NULL)
		return add_match(w, rel, 0, NULL, 0);
	fd = files_openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		(void)close(fd);
		return 0;
	}
	want = w->read_cap;
	if (WALK_MAX_BYTES - w->bytes < want)
		want = WALK_MAX_BYTES - w->bytes;
	while (len < want && (n = read(fd, w->buf + len, want - len)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		len += (size_t)n;
	}
	(void)close(fd);
	w->bytes += len;
	if ((off_t)len < st.st_size)
		w->truncated = true;	/* a file was searched only in part */
	if (memchr(w->buf, '\0', len) != NULL) {
		w->skipped_binary++;
		return 0;
	}
	stop = w->buf + len;
	for (line = w->buf; line < stop; line = end + 1, lineno++) {
		end = memchr(line, '\n', (size_t)(stop - line));
		if (end == NULL)
			end = stop;
		if (find_text(w, line, (size_t)(end - line)) != NULL) {
			if (full(w))
				return 0;
			if (add_match(w, rel, lineno, line,
			    (size_t)(end - line)) != 0)
				return -1;
		}
	}
	return 0;
}

/* Walks the open directory dfd (consumed) whose relative path is rel. */
static int
walk_dir(struct walk *w, int dfd, const char *rel, int depth)
{
	struct dirent *de;
	char **names = NULL, sub[PATH_MAX];
	size_t n = 0, i;
	DIR *d;
	int rc = -1;

	if ((d = fdopendir(dfd)) == NULL) {
		(void)close(dfd);
		return 0;
	}
	if ((names = calloc(WALK_MAX_DIR_ENTRIES, sizeof(char *))) == NULL)
		goto out;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (!w->hidden && de->d_name[0] == '.')
			continue;
		if (n == WALK_MAX_DIR_ENTRIES) {
			w->truncated = true;
			break;
		}
		if ((names[n] = strdup(de->d_name)) == NULL)
			goto out;
		n++;
	}
	qsort(names, n, sizeof(char *), name_cmp);
	for (i = 0; i < n; i++) {
		struct stat st;

		if (full(w))
			break;
		if ((size_t)snprintf(sub, sizeof(sub), "%s%s%s", rel,
		    rel[0] ? "/" : "", names[i]) >= sizeof(sub))
			continue;
		if (fstatat(dirfd(d), names[i], &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		if (!w->search) {
			if (add_entry(w, sub, &st, dirfd(d), names[i]) != 0)
				goto out;
		} else if (S_ISREG(st.st_mode) && (w->glob == NULL ||
		    fnmatch(w->glob, names[i], 0) == 0)) {
			if (search_file(w, dirfd(d), names[i], sub) != 0)
				goto out;
		}
		if (S_ISDIR(st.st_mode) && depth + 1 < w->max_depth) {
			int cfd = files_openat(dirfd(d), names[i], O_RDONLY |
			    O_DIRECTORY | O_NOFOLLOW, 0);
			if (cfd >= 0 && walk_dir(w, cfd, sub, depth + 1) != 0)
				goto out;
		}
	}
	rc = 0;
 out:
	for (i = 0; names != NULL && i < n; i++)
		free(names[i]);
	free(names);
	(void)closedir(d);
	return rc;
}



/* The walk's base for relative paths: path without "./", trailing '/'. */
static char *
base_rel(const char *path)
{
	char *s, *e;

	while (path[0] == '.' && path[1] == '/')
		path += 2;
	if (strcmp(path, ".") == 0)
		path = "";
	if ((s = strdup(path)) == NULL)
		return NULL;
	e = s + strlen(s);
	while (e > s && e[-1] == '/')
		*--e = '\0';
	return s;
}

static enum mcp_err
walk_tool(const struct tool_call *call, const struct json_object *args,
    struct walk *w, struct json_object **ret_result)
{
	const char *path = toolargs_str(args, "path", ".");
	struct json_object *st = NULL, *r = NULL;
	struct stat dst;
	char *rel = NULL;
	const char *bad;
	int root, dfd = -1, rc;

	if ((bad = render_nul_key(args, nul_free)) != NULL) {
		*ret_result = render_nul_refusal(call->audit, bad);
		return *ret_result != NULL ? MCP_OK : MCP_ERR_NOMEM;
	}
	if ((w->items = json_object_new_array()) == NULL)
		return MCP_ERR_NOMEM;
	if ((root = files_root(call)) < 0) {
		r = files_path_error(call, ".", -root);
		goto done;
	}
	/* O_PATH first: a FIFO given as the directory is never opened */
	dfd = files_openat(root, path[0] ? path : ".", O_PATH, 0);
	if (dfd >= 0 && fstat(dfd, &dst) == 0 && !S_ISDIR(dst.st_mode)) {
		r = files_type_error(call, path, dst.st_mode, "directory");
		goto done;
	}
	if (dfd >= 0) {
		(void)close(dfd);
		dfd = files_openat(root, path[0] ? path : ".", O_RDONLY |
		    O_DIRECTORY, 0);
	}
	if (dfd < 0) {
		r = files_path_error(call, path, -dfd);
		goto done;
	}
	if ((rel = base_rel(path)) == NULL)
		goto nomem;
	rc = walk_dir(w, dfd, rel, 0);
	dfd = -1;	/* walk_dir closed it, failing or not */
	if (rc != 0)
		goto nomem;
	call->audit->ran = true;
	call->audit->truncated = w->truncated;
	if ((st = json_object_new_object()) == NULL)
		goto nomem;
	json_object_object_add(st, "path", json_object_new_string(path));
	json_object_object_add(st, w->search ? "matches" : "entries",
	    w->items);
	w->items = NULL;
	if (w->search) {
		json_object_object_add(st, "files_scanned",
		    json_object_new_int64((int64_t)w->files));
		json_object_object_add(st, "skipped_binary",
		    json_object_new_int64((int64_t)w->skipped_binary));
	}
	json_object_object_add(st, "truncated",
	    json_object_new_boolean(w->truncated));
	r = render_ok_json(st);
	goto done;
 nomem:
	json_object_put(st);
	r = NULL;
 done:
	free(rel);
	json_object_put(w->items);
	if (dfd >= 0)
		(void)close(dfd);
	if (root >= 0)
		(void)close(root);
	if (r == NULL)
		return MCP_ERR_NOMEM;
	*ret_result = r;
	return MCP_OK;
}

enum mcp_err
tool_list_directory(const struct tool_call *call,
    const struct json_object *args,
    struct json_object **ret_result)
{
	struct json_object *v;	/* borrowed */
	struct walk w;

	memset(&w, 0, sizeof(w));
	w.call = call;
	w.max_items = (size_t)toolargs_int(args, "max_entries", 500);
	w.max_depth = (int)toolargs_int(args, "depth", 1);
	w.hidden = !json_object_object_get_ex(args, "include_hidden", &v) ||
	    json_object_get_boolean(v);
	return walk_tool(call, args, &w, ret_result);
}

enum mcp_err
tool_search_files(const struct tool_call *call,
    const struct json_object *args,
    struct json_object **ret_result)
{
	const struct policy *p = call->env->policy;
	struct json_object *v;	/* borrowed */
	struct walk w;
	enum mcp_err st;

	memset(&w, 0, sizeof(w));
	w.call = call;
	w.search = true;
	w.hidden = true;
	w.max_items = (size_t)toolargs_int(args, "max_results", 100);
	w.max_depth = (int)toolargs_int(args, "max_depth", 16);
	w.glob = toolargs_str(args, "name", NULL);
	w.needle = toolargs_str(args, "content", NULL);
	w.needle_len = w.needle != NULL ? strlen(w.needle) : 0;
	w.icase = json_object_object_get_ex(args, "case_sensitive", &v) &&
	    !json_object_get_boolean(v);
	w.read_cap = p->limits.read_bytes;
	if (w.glob == NULL && w.needle == NULL) {
		render_refused(call->audit, "no criteria");
		*ret_result = tool_result_error("Give name (a glob such as "
		    "\"*.py\"), content (text to find), or both.");
		return *ret_result != NULL ? MCP_OK : MCP_ERR_NOMEM;
	}
	if (w.needle != NULL && (w.buf = malloc(w.read_cap + 1)) == NULL)
		return MCP_ERR_NOMEM;
	st = walk_tool(call, args, &w, ret_result);
	free(w.buf);
	return st;
}


