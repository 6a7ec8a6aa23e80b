/*
 * skill_catalog: the Skills extension's entries and resources over the
 * policy's skills (skill_catalog.h). Every file is found and read beneath
 * the skill's folder as pinned at start (policy.h, policy_skill.dirfd),
 * with no symlink followed: a skill is its regular files, and a folder
 * swapped after start is not served. Entries are made on each request
 * (skills are small; a digest is never older than the file).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "policy.h"
#include "sha256.h"
#include "skill_catalog.h"
#include "tool.h"
#include "workspace_resources.h"

/* Directory levels a skill's files are looked for in. */
#define SKILL_MAX_DEPTH		16
/* Bytes of a skill-relative path (the workspace's file path bound). */
#define SKILL_PATH_MAX		4096

/* A skill's regular files: paths relative to its folder, sorted. */
struct files {
	char **path;
	size_t n, cap;
};

static void
files_free(struct files *f)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		free(f->path[i]);
	free(f->path);
	memset(f, 0, sizeof(*f));
}

static int
files_add(struct files *f, const char *rel)
{
	char **np;

	if (f->n == f->cap) {
		f->cap = f->cap ? 2 * f->cap : 16;
		if ((np = realloc(f->path, f->cap * sizeof(*np))) == NULL)
			return -ENOMEM;
		f->path = np;
	}
	if ((f->path[f->n] = strdup(rel)) == NULL)
		return -ENOMEM;
	f->n++;
	return 0;
}

/* The regular files under rel ("" the folder) of dfd, symlinks not
 * followed; -E2BIG past SKILL_MAX_FILES. */
static int
walk(int dfd, const char *rel, struct files *f, int depth)
{
	char sub[SKILL_PATH_MAX];
	struct dirent *e;
	struct stat st;
	DIR *dir;
	int fd, rc = 0;

	if (depth > SKILL_MAX_DEPTH)
		return 0;
	fd = files_openat_strict(dfd, rel[0] != '\0' ? rel : ".",
	    O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return fd;
	if ((dir = fdopendir(fd)) == NULL) {
		rc = -errno;
		(void)close(fd);
		return rc;
	}
	while (rc == 0 && (e = readdir(dir)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if ((size_t)snprintf(sub, sizeof(sub), "%s%s%s", rel,
		    rel[0] != '\0' ? "/" : "", e->d_name) >= sizeof(sub))
			continue;
		if (S_ISDIR(st.st_mode))
			rc = walk(dfd, sub, f, depth + 1);
		else if (S_ISREG(st.st_mode))
			rc = f->n >= SKILL_MAX_FILES ? -E2BIG : files_add(f, sub);
	}
	(void)closedir(dir);
	return rc;
}

static int
path_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* rel beneath dfd, whole, at most max bytes (*len); NULL and *err. */
static unsigned char *
slurp(int dfd, const char *rel, size_t max, size_t *len, int *err)
{
	unsigned char *buf = NULL;
	struct stat st;
	size_t got = 0;
	ssize_t n;
	int fd;

	*err = 0;
	if ((fd = files_openat_strict(dfd, rel, O_RDONLY | O_NONBLOCK)) < 0) {
		*err = -fd;
		return NULL;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		*err = EINVAL;
		goto out;
	}
	if ((uint64_t)st.st_size > max) {
		*err = EFBIG;
		goto out;
	}
	if ((buf = malloc((size_t)st.st_size + 1)) == NULL) {
		*err = ENOMEM;
		goto out;
	}
	while (got < (size_t)st.st_size) {
		n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;		/* shrank meanwhile: what is there */
		got += (size_t)n;
	}
	buf[got] = '\0';
	*len = got;
 out:
	(void)close(fd);
	if (*err != 0) {
		free(buf);
		buf = NULL;
	}
	return buf;
}

/* The Agent Skills naming rules: 1-64 of a-z, 0-9 and single hyphens
 * inside. */
static bool
name_ok(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > 64 || s[0] == '-' || s[n - 1] == '-')
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= '0' && s[i] <= '9') ||
		    (s[i] == '-' && s[i + 1] != '-')))
			return false;
	return true;
}

/* A skill-relative path as it goes in a uri: bytes outside the
 * unreserved set and '/' as %XX. */
static int
uri_of(const char *name, const char *rel, char *out, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t w;
	int n;

	n = snprintf(out, len, "%s%s/", SKILL_URI_SCHEME, name);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	w = (size_t)n;
	for (; *rel != '\0'; rel++) {
		unsigned char c = (unsigned char)*rel;

		if (w + 4 >= len)
			return -ENAMETOOLONG;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || strchr("-._~/", c) != NULL) {
			out[w++] = (char)c;
		} else {
			out[w++] = '%';
			out[w++] = hex[c >> 4];
			out[w++] = hex[c & 15];
		}
	}
	out[w] = '\0';
	return 0;
}

static int
unhex(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ?
	    c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* The frontmatter of sk's SKILL.md, checked as the extension wants it
 * (name and description strings, name the skill's own and well-formed);
 * NULL when it is not servable. The file's bytes in *md (owned). */
static struct json_object *
skill_front(const struct policy_skill *sk, unsigned char **md, size_t *mdlen)
{
	struct json_object *fm, *name, *desc;
	char err[256];
	int e;

	*md = NULL;
	if (!sk->pinned || !name_ok(sk->name) || (*md = slurp(sk->dirfd,
	    "SKILL.md", SKILL_MAX_BYTES, mdlen, &e)) == NULL)
		return NULL;
	fm = skill_frontmatter((const char *)*md, *mdlen, err, sizeof(err));
	if (fm == NULL || !json_object_object_get_ex(fm, "name", &name) ||
	    !json_object_is_type(name, json_type_string) ||
	    strcmp(json_object_get_string(name), sk->name) != 0 ||
	    !json_object_object_get_ex(fm, "description", &desc) ||
	    !json_object_is_type(desc, json_type_string)) {
		json_object_put(fm);
		free(*md);
		*md = NULL;
		return NULL;
	}
	return fm;
}

/* One file's manifest line: {uri, digest, size}. */
static struct json_object *
resource_of(const char *uri, const unsigned char *data, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	uint8_t d[SHA256_LEN];
	char digest[8 + 2 * SHA256_LEN + 1];
	struct json_object *o;
	size_t i;

	sha256(data, len, d);
	memcpy(digest, "sha256:", 7);
	for (i = 0; i < SHA256_LEN; i++) {
		digest[7 + 2 * i] = hex[d[i] >> 4];
		digest[7 + 2 * i + 1] = hex[d[i] & 15];
	}
	digest[7 + 2 * SHA256_LEN] = '\0';
	if ((o = json_object_new_object()) == NULL ||
	    tool_json_add(o, "uri", json_object_new_string(uri)) != 0 ||
	    tool_json_add(o, "digest", json_object_new_string(digest)) != 0 ||
	    tool_json_add(o, "size", json_object_new_int64((int64_t)len)) != 0) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* sk's entry; NULL and *nomem false when it is not servable. */
static struct json_object *
entry(const struct policy_skill *sk, bool *nomem)
{
	struct json_object *o = NULL, *fm, *arr = NULL, *r;
	char uri[SKILL_PATH_MAX + 128];
	struct files f = { NULL, 0, 0 };
	unsigned char *md, *data;
	size_t mdlen, len, i, total = 0;
	bool failed;
	int e;

	*nomem = false;
	if ((fm = skill_front(sk, &md, &mdlen)) == NULL)
		return NULL;
	if ((e = walk(sk->dirfd, "", &f, 0)) < 0 ||
	    (arr = json_object_new_array()) == NULL) {
		*nomem = e == -ENOMEM || e == 0;
		goto fail;
	}
	qsort(f.path, f.n, sizeof(*f.path), path_cmp);
	for (i = 0; i < f.n; i++) {
		/* SKILL.md's digest of the very bytes its frontmatter came
		 * from, not of a second read that a change could come between */
		bool is_md = strcmp(f.path[i], "SKILL.md") == 0;

		data = is_md ? md : NULL;
		len = is_md ? mdlen : 0;
		if (uri_of(sk->name, f.path[i], uri, sizeof(uri)) < 0 ||
		    (!is_md && (data = slurp(sk->dirfd, f.path[i],
		    SKILL_MAX_BYTES - total, &len, &e)) == NULL) ||
		    len > SKILL_MAX_BYTES - total) {
			*nomem = !is_md && data == NULL && e == ENOMEM;
			if (!is_md)
				free(data);
			goto fail;
		}
		total += len;
		r = resource_of(uri, data, len);
		if (!is_md)
			free(data);
		if (r == NULL || json_object_array_add(arr, r) != 0) {
			json_object_put(r);
			*nomem = true;
			goto fail;
		}
	}
	(void)snprintf(uri, sizeof(uri), "%s%s/SKILL.md", SKILL_URI_SCHEME,
	    sk->name);
	if ((o = json_object_new_object()) == NULL) {
		*nomem = true;
		goto fail;
	}
	/* each called, so that each value is taken */
	failed = tool_json_add(o, "uri", json_object_new_string(uri)) != 0;
	failed |= tool_json_add(o, "frontmatter", fm) != 0;
	failed |= tool_json_add(o, "resources", arr) != 0;
	if (failed) {
		json_object_put(o);
		*nomem = true;
		files_free(&f);
		free(md);
		return NULL;
	}
	files_free(&f);
	free(md);
	return o;
 fail:
	json_object_put(fm);
	json_object_put(arr);
	files_free(&f);
	free(md);
	return NULL;
}

bool
skill_catalog_on(const struct tool_env *env)
{
	return env->policy != NULL && env->policy->nskills > 0;
}

int
skill_catalog_list(const struct tool_env *env, struct json_object *arr)
{
	const struct policy *p = env->policy;
	struct json_object *o;
	bool nomem;
	size_t i;

	for (i = 0; i < p->nskills; i++) {
		if ((o = entry(&p->skills[i], &nomem)) == NULL) {
			if (nomem)
				return -ENOMEM;
			continue;
		}
		if (json_object_array_add(arr, o) != 0) {
			json_object_put(o);
			return -ENOMEM;
		}
	}
	return 0;
}

/* The skill a skill://NAME/... uri names, and where its path starts
 * ("" for skill://NAME itself, the skill's root directory). */
static const struct policy_skill *
skill_of(const struct tool_env *env, const char *uri, const char **rest)
{
	const struct policy *p = env->policy;
	const char *name, *slash;
	size_t i;

	if (strncmp(uri, SKILL_URI_SCHEME, strlen(SKILL_URI_SCHEME)) != 0)
		return NULL;
	name = uri + strlen(SKILL_URI_SCHEME);
	if ((slash = strchr(name, '/')) == NULL)
		slash = name + strlen(name);
	for (i = 0; i < p->nskills; i++)
		if (strlen(p->skills[i].name) == (size_t)(slash - name) &&
		    strncmp(p->skills[i].name, name, (size_t)(slash - name)) ==
		    0 && name_ok(p->skills[i].name)) {
			*rest = *slash == '/' ? slash + 1 : slash;
			return &p->skills[i];
		}
	return NULL;
}

/* A uri's skill-relative path, %XX decoded: 0, or -ENOENT. */
static int
rel_of(const char *rest, char rel[SKILL_PATH_MAX])
{
	size_t w = 0;
	int hi, lo;

	for (; *rest != '\0'; rest++) {
		if (w + 1 >= SKILL_PATH_MAX)
			return -ENOENT;
		if (*rest == '%') {
			if ((hi = unhex(rest[1])) < 0 || (lo = unhex(rest[2])) < 0 ||
			    (hi == 0 && lo == 0))
				return -ENOENT;
			rel[w++] = (char)(hi << 4 | lo);
			rest += 2;
		} else if (*rest == '?' || *rest == '#') {
			return -ENOENT;
		} else {
			rel[w++] = *rest;
		}
	}
	rel[w] = '\0';
	return 0;
}

/* The type a skill file is listed with, from its name (NULL: none). */
static const char *
mime_of(const char *name)
{
	static const struct { const char *ext, *type; } t[] = {
		{ ".md", "text/markdown" }, { ".txt", "text/plain" },
		{ ".py", "text/x-python" }, { ".sh", "text/x-shellscript" },
		{ ".js", "text/javascript" }, { ".json", "application/json" },
	};
	size_t i, n = strlen(name), k;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (n > (k = strlen(t[i].ext)) &&
		    strcmp(name + n - k, t[i].ext) == 0)
			return t[i].type;
	return NULL;
}

int
skill_catalog_directory(const struct tool_env *env, const char *uri,
    struct json_object *arr)
{
	const struct policy_skill *sk;
	char rel[SKILL_PATH_MAX], sub[SKILL_PATH_MAX], curi[SKILL_PATH_MAX + 128];
	struct files f = { NULL, 0, 0 };
	struct json_object *o;
	const char *rest, *type;
	struct dirent *e;
	struct stat st;
	size_t i, n;
	DIR *dir;
	int fd, rc = 0;

	if ((sk = skill_of(env, uri, &rest)) == NULL || !sk->pinned ||
	    rel_of(rest, rel) < 0)
		return -ENOTDIR;
	n = strlen(rel);
	if (n > 0 && rel[n - 1] == '/')
		return -ENOTDIR;	/* directory uris have no trailing slash */
	if ((fd = files_openat_strict(sk->dirfd, n > 0 ? rel : ".",
	    O_RDONLY | O_DIRECTORY)) < 0)
		return -ENOTDIR;
	if ((dir = fdopendir(fd)) == NULL) {
		(void)close(fd);
		return -ENOMEM;
	}
	while (rc == 0 && (e = readdir(dir)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
		    fstatat(dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) ==
		    0 && (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)))
			rc = files_add(&f, e->d_name);
	(void)closedir(dir);
	qsort(f.path, f.n, sizeof(*f.path), path_cmp);
	for (i = 0; rc == 0 && i < f.n; i++) {
		(void)snprintf(sub, sizeof(sub), "%s%s%s", rel, n > 0 ? "/" : "",
		    f.path[i]);
		if (fstatat(sk->dirfd, sub, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    uri_of(sk->name, sub, curi, sizeof(curi)) < 0)
			continue;
		type = S_ISDIR(st.st_mode) ? "inode/directory" :
		    mime_of(f.path[i]);
		o = json_object_new_object();
		if (o == NULL ||
		    tool_json_add(o, "uri", json_object_new_string(curi)) != 0 ||
		    tool_json_add(o, "name", json_object_new_string(
		    f.path[i])) != 0 ||
		    (type != NULL && tool_json_add(o, "mimeType",
		    json_object_new_string(type)) != 0) ||
		    json_object_array_add(arr, o) != 0) {
			json_object_put(o);
			rc = -ENOMEM;
		}
	}
	files_free(&f);
	return rc;
}

int
skill_catalog_get(const struct tool_env *env, const char *uri,
    struct json_object **ret)
{
	const struct policy_skill *sk;
	const char *rest;
	bool nomem;

	if ((sk = skill_of(env, uri, &rest)) == NULL ||
	    strcmp(rest, "SKILL.md") != 0)
		return -ENOENT;
	if ((*ret = entry(sk, &nomem)) == NULL)
		return nomem ? -ENOMEM : -ENOENT;
	return 0;
}

int
skill_catalog_resources(const struct tool_env *env, struct json_object *arr)
{
	const struct policy *p = env->policy;
	struct json_object *o, *fm, *v;
	char uri[SKILL_PATH_MAX];
	unsigned char *md;
	size_t mdlen, i;
	int failed;

	for (i = 0; i < p->nskills; i++) {
		const struct policy_skill *sk = &p->skills[i];

		if ((fm = skill_front(sk, &md, &mdlen)) == NULL)
			continue;
		free(md);
		(void)snprintf(uri, sizeof(uri), "%s%s/SKILL.md",
		    SKILL_URI_SCHEME, sk->name);
		(void)json_object_object_get_ex(fm, "description", &v);
		o = json_object_new_object();
		failed = o == NULL ||
		    tool_json_add(o, "uri", json_object_new_string(uri)) != 0 ||
		    tool_json_add(o, "name", json_object_new_string(
		    sk->name)) != 0 ||
		    tool_json_add(o, "description", json_object_get(v)) != 0 ||
		    tool_json_add(o, "mimeType", json_object_new_string(
		    "text/markdown")) != 0 ||
		    json_object_array_add(arr, o) != 0;
		json_object_put(fm);
		if (failed) {
			json_object_put(o);
			return -ENOMEM;
		}
	}
	return 0;
}

int
skill_catalog_read(const struct tool_env *env, const char *uri,
    struct json_object **ret)
{
	const struct policy_skill *sk;
	char rel[SKILL_PATH_MAX], root[32];
	const char *rest;
	size_t n;
	int rc;

	if (strncmp(uri, SKILL_URI_SCHEME, strlen(SKILL_URI_SCHEME)) != 0)
		return -EINVAL;
	if ((sk = skill_of(env, uri, &rest)) == NULL || !sk->pinned ||
	    *rest == '\0' || rel_of(rest, rel) < 0)
		return -ENOENT;
	(void)snprintf(root, sizeof(root), "/proc/self/fd/%d", sk->dirfd);
	if ((rc = wsr_read(root, rel, uri, wsr_max_read(env), ret)) != 0)
		return rc;
	/* SKILL.md and the skill's other markdown: what the extension asks */
	n = strlen(rel);
	if (n >= 3 && strcmp(rel + n - 3, ".md") == 0 &&
	    tool_json_add(*ret, "mimeType", json_object_new_string(
	    "text/markdown")) != 0) {
		json_object_put(*ret);
		*ret = NULL;
		return -ENOMEM;
	}
	return 0;
}
