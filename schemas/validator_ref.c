/*
 * $id, $anchor and $ref inside one schema document. A scan before compiling
 * finds every schema resource ($id, resolved per RFC 3986 against its parent's
 * base) and every $anchor (per resource); $ref is resolved against the base of
 * the schema it is in and must land on one of those resources: a JSON pointer
 * (percent-decoded, ~0 ~1) or an anchor below it. Anything else is refused,
 * never fetched. Also refuses $ref loops that never descend into the instance.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "validator_impl.h"

/* Longest absolute URI we resolve; a $id or $ref beyond it fails the compile. */
#define SCHEMA_URI_MAX 1024

struct uri {
	const char *scheme, *auth, *path, *query, *frag;
	size_t nscheme, nauth, npath, nquery, nfrag;
	bool has_scheme, has_auth, has_query, has_frag;
};

static void
uri_parse(const char *s, struct uri *u)
{
	const char *p = s, *e;

	memset(u, 0, sizeof(*u));
	if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z')) {
		for (e = p; (*e >= 'A' && *e <= 'Z') || (*e >= 'a' && *e <= 'z') ||
		    (*e >= '0' && *e <= '9') || *e == '+' || *e == '-' || *e == '.'; e++)
			;
		if (*e == ':') {
			u->has_scheme = true;
			u->scheme = p;
			u->nscheme = (size_t)(e - p);
			p = e + 1;
		}
	}
	if (p[0] == '/' && p[1] == '/') {
		u->has_auth = true;
		u->auth = p + 2;
		u->nauth = strcspn(p + 2, "/?#");
		p = u->auth + u->nauth;
	}
	u->path = p;
	u->npath = strcspn(p, "?#");
	p += u->npath;
	if (*p == '?') {
		u->has_query = true;
		u->query = p + 1;
		u->nquery = strcspn(p + 1, "#");
		p = u->query + u->nquery;
	}
	if (*p == '#') {
		u->has_frag = true;
		u->frag = p + 1;
		u->nfrag = strlen(p + 1);
	}
}

/* RFC 3986 5.2.4, in place on a NUL-terminated path shorter than SCHEMA_URI_MAX. */
static void
remove_dots(char *path)
{
	char out[SCHEMA_URI_MAX], *in = path, *slash;
	size_t o = 0, seg;

	while (*in != '\0') {
		if (strncmp(in, "../", 3) == 0) {
			in += 3;
		} else if (strncmp(in, "./", 2) == 0) {
			in += 2;
		} else if (strncmp(in, "/./", 3) == 0) {
			in += 2;
		} else if (strcmp(in, "/.") == 0) {
			in[1] = '\0';
		} else if (strncmp(in, "/../", 4) == 0 || strcmp(in, "/..") == 0) {
			if (in[3] == '\0')
				in[2] = '/', in[3] = '\0', in += 2;	/* "/.." -> "/" */
			else
				in += 3;	/* "/../x" -> "/x" */
			out[o] = '\0';
			slash = strrchr(out, '/');
			o = slash != NULL ? (size_t)(slash - out) : 0;
		} else if (strcmp(in, ".") == 0 || strcmp(in, "..") == 0) {
			in += strlen(in);
		} else {
			seg = *in == '/' ? 1 + strcspn(in + 1, "/") : strcspn(in, "/");
			memcpy(out + o, in, seg);
			o += seg;
			in += seg;
		}
	}
	out[o] = '\0';
	memcpy(path, out, o + 1);
}

/* Appends n bytes to out (size SCHEMA_URI_MAX); false if it does not fit. */
static bool
cat(char *out, size_t *o, const char *s, size_t n)
{
	if (*o + n >= SCHEMA_URI_MAX)
		return false;
	memcpy(out + *o, s, n);
	*o += n;
	out[*o] = '\0';
	return true;
}

/* RFC 3986 5.2.2: ref against base, into out[SCHEMA_URI_MAX]. -1: too long. */
static int
uri_resolve(const char *base, const char *ref, char *out)
{
	char path[SCHEMA_URI_MAX];
	struct uri b, r;
	const struct uri *auth, *query;
	size_t o = 0, p = 0;
	const char *slash;
	bool ok = true;

	uri_parse(base, &b);
	uri_parse(ref, &r);
	path[0] = out[0] = '\0';
	if (r.has_scheme || r.has_auth) {
		auth = &r;
		query = &r;
		ok = cat(path, &p, r.path, r.npath);
	} else if (r.npath == 0) {
		auth = &b;
		query = r.has_query ? &r : &b;
		ok = cat(path, &p, b.path, b.npath);
	} else {
		auth = &b;
		query = &r;
		if (r.path[0] != '/') {	/* merge with the base path */
			if (b.has_auth && b.npath == 0) {
				ok = cat(path, &p, "/", 1);
			} else {
				for (slash = b.path + b.npath; slash > b.path && slash[-1] != '/'; slash--)
					;
				ok = cat(path, &p, b.path, (size_t)(slash - b.path));
			}
		}
		ok = ok && cat(path, &p, r.path, r.npath);
	}
	if (!ok)
		return -1;
	remove_dots(path);
	if (r.has_scheme)
		ok = cat(out, &o, r.scheme, r.nscheme) && cat(out, &o, ":", 1);
	else if (b.has_scheme)
		ok = cat(out, &o, b.scheme, b.nscheme) && cat(out, &o, ":", 1);
	if (ok && auth->has_auth)
		ok = cat(out, &o, "//", 2) && cat(out, &o, auth->auth, auth->nauth);
	ok = ok && cat(out, &o, path, strlen(path));
	if (ok && query->has_query)
		ok = cat(out, &o, "?", 1) && cat(out, &o, query->query, query->nquery);
	if (ok && r.has_frag)
		ok = cat(out, &o, "#", 1) && cat(out, &o, r.frag, r.nfrag);
	return ok ? 0 : -1;
}

static char *
sc_strdup(struct cctx *c, const char *s)
{
	char *d;

	if ((d = sc_calloc(c, strlen(s) + 1, 1)) != NULL)
		memcpy(d, s, strlen(s));
	return d;
}

static bool
anchor_name_ok(const char *name)
{
	const char *p;

	/* 2020-12: ^[A-Za-z_][-A-Za-z0-9._]*$ */
	for (p = name; *p != '\0'; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || *p == '_' ||
		    (p > name && ((*p >= '0' && *p <= '9') || *p == '-' || *p == '.'))))
			return false;
	return p != name;
}

/* Appends a resource ($id) or an anchor (name != NULL) found by the scan. */
static int
res_add(struct cctx *c, const char *uri, const char *name, const struct json_object *j)
{
	struct sres *nr;
	size_t i;

	for (i = 0; i < c->nres; i++) {
		if (strcmp(c->res[i].uri, uri) != 0 || (c->res[i].name == NULL) != (name == NULL))
			continue;
		if (name == NULL)
			return sc_fail(c, "\"$id\" \"%s\" identifies two schemas", uri);
		if (strcmp(c->res[i].name, name) == 0)
			return sc_fail(c, "\"$anchor\" \"%s\" is defined twice", name);
	}
	if (c->nres == c->cres) {
		size_t cap = c->cres == 0 ? 8 : c->cres * 2;

		if ((nr = realloc(c->res, cap * sizeof(*nr))) == NULL)
			return sc_nomem(c);
		c->res = nr;
		c->cres = cap;
	}
	c->res[c->nres].uri = uri;
	c->res[c->nres].name = name;
	c->res[c->nres].j = j;
	if ((c->res[c->nres].path = sc_strdup(c, c->path)) == NULL)
		return -1;
	c->nres++;
	return 0;
}

static const struct sres *
res_find(const struct cctx *c, const char *uri, const char *name)
{
	size_t i;

	for (i = 0; i < c->nres; i++)
		if (strcmp(c->res[i].uri, uri) == 0 && (name == NULL ? c->res[i].name == NULL :
		    c->res[i].name != NULL && strcmp(c->res[i].name, name) == 0))
			return &c->res[i];
	return NULL;
}

static int scan(struct cctx *c, const struct json_object *j, const char *base, unsigned depth);

static int
scan_sub(struct cctx *c, const char *kw, const char *name, const struct json_object *v,
    const char *base, unsigned depth)
{
	size_t old = sc_path_push(c, kw);
	int r;

	if (name != NULL)
		sc_path_push(c, name);
	r = scan(c, v, base, depth + 1);
	sc_path_pop(c, old);
	return r;
}

/* Keywords whose value is a schema, an array of schemas, or a map of schemas. */
static const char *const scan_single[] = { "items", "contains", "additionalProperties",
	"propertyNames", "not", "if", "then", "else", "unevaluatedItems",
	"unevaluatedProperties", NULL };
static const char *const scan_array[] = { "allOf", "anyOf", "oneOf", "prefixItems", NULL };
static const char *const scan_map[] = { "properties", "patternProperties", "$defs",
	"dependentSchemas", NULL };

static bool
in_list(const char *const *l, const char *k)
{
	for (; *l != NULL; l++)
		if (strcmp(*l, k) == 0)
			return true;
	return false;
}

/* Records the base URI of every schema object, each $id resource and $anchor. */
static int
scan(struct cctx *c, const struct json_object *j, const char *base, unsigned depth)
{
	char abs[SCHEMA_URI_MAX], idx[24], *hash;
	struct json_object *v;
	size_t i;

	if (!json_object_is_type(j, json_type_object) || depth > SCHEMA_MAX_SCHEMA_DEPTH)
		return 0;	/* not a schema object, or too deep: the compile says so */
	if (json_object_object_get_ex(j, "$id", &v) && json_object_is_type(v, json_type_string)) {
		if (uri_resolve(base, json_object_get_string(v), abs) < 0)
			return sc_fail(c, "\"$id\" is longer than %d bytes", SCHEMA_URI_MAX);
		if ((hash = strchr(abs, '#')) != NULL) {
			if (hash[1] != '\0') {
				sc_path_push(c, "$id");
				return sc_fail(c, "\"$id\" must not have a fragment");
			}
			*hash = '\0';
		}
		if ((base = sc_strdup(c, abs)) == NULL || res_add(c, base, NULL, j) < 0)
			return -1;
	} else if (depth == 0 && res_add(c, base, NULL, j) < 0) {
		return -1;	/* the document itself, base "" */
	}
	if (sc_map_put(c, &c->bases, j, (void *)(uintptr_t)base) < 0)
		return -1;
	if (json_object_object_get_ex(j, "$anchor", &v) && json_object_is_type(v, json_type_string) &&
	    anchor_name_ok(json_object_get_string(v)) &&
	    res_add(c, base, json_object_get_string(v), j) < 0)
		return -1;
	json_object_object_foreach((struct json_object *)j, k, sv) {
		if (in_list(scan_single, k) && scan_sub(c, k, NULL, sv, base, depth) < 0)
			return -1;
		if (in_list(scan_array, k) && json_object_is_type(sv, json_type_array)) {
			for (i = 0; i < json_object_array_length(sv); i++) {
				snprintf(idx, sizeof(idx), "%zu", i);
				if (scan_sub(c, k, idx, json_object_array_get_idx(sv, i), base,
				    depth) < 0)
					return -1;
			}
		}
		if (in_list(scan_map, k) && json_object_is_type(sv, json_type_object)) {
			json_object_object_foreach(sv, mk, mv) {
				if (scan_sub(c, k, mk, mv, base, depth) < 0)
					return -1;
			}
		}
	}
	return 0;
}

int
sc_scan(struct cctx *c, const struct json_object *doc)
{
	int r = scan(c, doc, "", 0);

	if (r == 0)
		sc_path_set(c, "", 0);
	return r;
}

int
sc_kw_id(struct cctx *c, struct snode *n, const char *kw, const struct json_object *v)
{
	if (!json_object_is_type(v, json_type_string))
		return sc_fail(c, "\"$id\" must be a string");
	return 0;	/* resolved and recorded by the scan */
}

int
sc_kw_anchor(struct cctx *c, struct snode *n, const char *kw, const struct json_object *v)
{
	const char *name;

	if (!json_object_is_type(v, json_type_string))
		return sc_fail(c, "\"$anchor\" must be a string");
	name = json_object_get_string((struct json_object *)v);
	if (!anchor_name_ok(name))
		return sc_fail(c, "\"$anchor\" \"%s\" is not a valid anchor name", name);
	return 0;	/* recorded by the scan */
}

static int
hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* Walks the percent-decoded JSON pointer p from cur; NULL if absent. */
static const struct json_object *
ref_walk(const struct json_object *cur, const char *p)
{
	struct json_object *next;
	char tok[SCHEMA_URI_MAX];
	size_t t, idx;
	char *end;

	while (*p == '/') {
		p++;
		for (t = 0; *p != '\0' && *p != '/'; p++) {
			if (*p == '~') {
				if (p[1] != '0' && p[1] != '1')
					return NULL;
				tok[t++] = p[1] == '0' ? '~' : '/';
				p++;
			} else {
				tok[t++] = *p;
			}
		}
		tok[t] = '\0';
		if (json_object_is_type(cur, json_type_object)) {
			if (!json_object_object_get_ex(cur, tok, &next))
				return NULL;
		} else if (json_object_is_type(cur, json_type_array)) {
			if (t == 0 || (tok[0] == '0' && t > 1) || tok[0] < '0' || tok[0] > '9')
				return NULL;
			idx = strtoul(tok, &end, 10);
			if (*end != '\0' || idx >= json_object_array_length(cur))
				return NULL;
			next = json_object_array_get_idx(cur, idx);
		} else {
			return NULL;
		}
		cur = next;
	}
	return *p == '\0' ? cur : NULL;
}

/* Percent-decodes the fragment into out[SCHEMA_URI_MAX]; -1 on a bad escape. */
static int
frag_decode(const char *frag, char *out)
{
	size_t o = 0;
	int hi, lo;

	for (; *frag != '\0'; frag++) {
		if (*frag == '%') {
			if ((hi = hexval(frag[1])) < 0 || (lo = hexval(frag[2])) < 0 ||
			    (hi == 0 && lo == 0))
				return -1;
			out[o++] = (char)(hi * 16 + lo);
			frag += 2;
		} else {
			out[o++] = *frag;
		}
	}
	out[o] = '\0';
	return 0;
}

static int
ref_note(struct cctx *c, struct snode *n, const char *ref)
{
	struct snode **nr;

	n->ref_src = ref;
	if ((n->ref_path = sc_strdup(c, c->path)) == NULL)
		return -1;
	if (c->nrefs == c->crefs) {
		size_t cap = c->crefs == 0 ? 16 : c->crefs * 2;

		if ((nr = realloc(c->refs, cap * sizeof(*nr))) == NULL)
			return sc_nomem(c);
		c->refs = nr;
		c->crefs = cap;
	}
	c->refs[c->nrefs++] = n;
	return 0;
}

int
sc_kw_ref(struct cctx *c, struct snode *n, const char *kw, const struct json_object *v)
{
	char abs[SCHEMA_URI_MAX], ptr[SCHEMA_URI_MAX], saved[SCHEMA_CPATH_MAX], *hash;
	const struct json_object *target = NULL;
	const struct sres *res;
	const char *ref;
	size_t savedlen;
	int r;

	if (!json_object_is_type(v, json_type_string))
		return sc_fail(c, "\"$ref\" must be a string");
	ref = json_object_get_string((struct json_object *)v);
	if (ref_note(c, n, ref) < 0)
		return -1;
	if (uri_resolve(c->base != NULL ? c->base : "", ref, abs) < 0)
		return sc_fail(c, "$ref \"%s\" is longer than %d bytes", ref, SCHEMA_URI_MAX);
	if ((hash = strchr(abs, '#')) != NULL)
		*hash++ = '\0';
	if ((res = res_find(c, abs, NULL)) == NULL)
		return sc_fail(c, "external $ref \"%s\" unsupported (no network fetch)", ref);
	if (frag_decode(hash != NULL ? hash : "", ptr) < 0)
		return sc_fail(c, "$ref \"%s\": bad percent-encoding", ref);
	if (ptr[0] == '\0' || ptr[0] == '/') {
		if ((target = ref_walk(res->j, ptr)) == NULL)
			return sc_fail(c, "$ref \"%s\" points to nothing in this document", ref);
		savedlen = c->pathlen;
		memcpy(saved, c->path, savedlen + 1);
		sc_path_set(c, res->path, strlen(res->path));
		if (c->pathlen + strlen(ptr) < sizeof(c->path)) {	/* else keep the resource's */
			memcpy(c->path + c->pathlen, ptr, strlen(ptr) + 1);
			c->pathlen += strlen(ptr);
		}
	} else {
		if ((res = res_find(c, abs, ptr)) == NULL)
			return sc_fail(c, "$ref \"%s\" names no $anchor in this document", ref);
		target = res->j;
		savedlen = c->pathlen;
		memcpy(saved, c->path, savedlen + 1);
		sc_path_set(c, res->path, strlen(res->path));
	}
	r = sc_node(c, target, &n->ref);
	if (r == 0)
		sc_path_set(c, saved, savedlen);
	return r;
}

enum { MARK_NEW, MARK_ON_PATH, MARK_DONE };

/*
 * Depth-first over the edges that apply a schema to the same instance
 * location. Reaching a node already on the path is a loop: validation would
 * recurse without end (the eval depth bound would stop it, but such a schema
 * is broken, so refuse it here). via: the last $ref on the path.
 */
static int
cycle_visit(struct cctx *c, struct snode *n, const struct snode *via, unsigned depth)
{
	struct snode *next[4] = { n->not_, n->if_, n->then_, n->else_ };
	size_t i;

	if (n->mark == MARK_DONE)
		return 0;
	if (n->mark == MARK_ON_PATH) {
		sc_path_set(c, via->ref_path, strlen(via->ref_path));
		return sc_fail(c, "$ref \"%s\" loops back to itself without descending "
		    "into the value", via->ref_src);
	}
	if (depth >= SCHEMA_MAX_EVAL_DEPTH)
		return 0;	/* left to the eval depth bound */
	n->mark = MARK_ON_PATH;
	for (i = 0; i < 4; i++)
		if (next[i] != NULL && cycle_visit(c, next[i], via, depth + 1) < 0)
			return -1;
	for (i = 0; i < n->nallof; i++)
		if (cycle_visit(c, n->allof[i], via, depth + 1) < 0)
			return -1;
	for (i = 0; i < n->nanyof; i++)
		if (cycle_visit(c, n->anyof[i], via, depth + 1) < 0)
			return -1;
	for (i = 0; i < n->noneof; i++)
		if (cycle_visit(c, n->oneof[i], via, depth + 1) < 0)
			return -1;
	for (i = 0; i < n->ndepsch; i++)
		if (cycle_visit(c, n->depsch[i].node, via, depth + 1) < 0)
			return -1;
	if (n->ref != NULL && cycle_visit(c, n->ref, n, depth + 1) < 0)
		return -1;
	n->mark = MARK_DONE;
	return 0;
}

int
sc_check_cycles(struct cctx *c)
{
	size_t i;

	for (i = 0; i < c->nrefs; i++)
		if (cycle_visit(c, c->refs[i], c->refs[i], 0) < 0)
			return -1;
	return 0;
}
