/*
 * Schema compile: a JSON Schema 2020-12 document -> an immutable tree of
 * struct snode. Trusts the schema author no further than the supported subset:
 * an unknown keyword, a wrong keyword value, or a $ref leaving the document
 * fails the compile with a JSON pointer and a reason. Never fetches anything.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "validator_impl.h"


int
sc_fail(struct cctx *c, const char *fmt, ...)
{
	char msg[SCHEMA_ERR_MESSAGE_MAX];
	va_list ap;

	if (c->st != MCP_OK)
		return -1;
	c->st = MCP_ERR_SCHEMA;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->err != NULL && c->errlen > 0)
		snprintf(c->err, c->errlen, "%s at %s", msg,
		    c->pathlen == 0 ? "the schema root" : c->path);
	return -1;
}

int
sc_nomem(struct cctx *c)
{
	if (c->st == MCP_OK) {
		c->st = MCP_ERR_NOMEM;
		if (c->err != NULL && c->errlen > 0)
			snprintf(c->err, c->errlen, "out of memory compiling the schema");
	}
	return -1;
}

void *
sc_calloc(struct cctx *c, size_t n, size_t size)
{
	struct salloc *a;

	if (n != 0 && size > (SIZE_MAX - sizeof(*a)) / n) {
		sc_nomem(c);
		return NULL;
	}
	if ((a = calloc(1, sizeof(*a) + n * size)) == NULL) {
		sc_nomem(c);
		return NULL;
	}
	a->next = c->s->allocs;
	c->s->allocs = a;
	return a->data;
}

/* Appends one reference token (escaped) to the schema path; returns the old length. */
size_t
sc_path_push(struct cctx *c, const char *tok)
{
	size_t old = c->pathlen, n = c->pathlen;

	if (n + 1 < sizeof(c->path))
		c->path[n++] = '/';
	for (; *tok != '\0' && n + 2 < sizeof(c->path); tok++) {
		if (*tok == '~' || *tok == '/') {
			c->path[n++] = '~';
			c->path[n++] = *tok == '~' ? '0' : '1';
		} else {
			c->path[n++] = *tok;
		}
	}
	c->path[n] = '\0';
	c->pathlen = n;
	return old;
}

size_t
sc_path_push_idx(struct cctx *c, size_t i)
{
	char b[24];

	snprintf(b, sizeof(b), "%zu", i);
	return sc_path_push(c, b);
}

void
sc_path_pop(struct cctx *c, size_t old)
{
	c->pathlen = old;
	c->path[old] = '\0';
}

static size_t
ptr_hash(const void *p, size_t cap)
{
	uintptr_t v = (uintptr_t)p;

	v ^= v >> 17;
	v *= (uintptr_t)0x9e3779b97f4a7c15ull;
	return (size_t)(v >> 7) & (cap - 1);
}

void *
sc_map_get(const struct smap *m, const void *k)
{
	size_t h;

	if (m->cap == 0)
		return NULL;
	for (h = ptr_hash(k, m->cap); m->e[h].k != NULL; h = (h + 1) & (m->cap - 1))
		if (m->e[h].k == k)
			return m->e[h].v;
	return NULL;
}

int
sc_map_put(struct cctx *c, struct smap *m, const void *k, void *v)
{
	struct smap_ent *old = m->e, *ne;
	size_t oldcap = m->cap, i, h;

	if ((m->n + 1) * 2 > m->cap) {
		m->cap = oldcap == 0 ? 64 : oldcap * 2;
		if ((ne = calloc(m->cap, sizeof(*ne))) == NULL) {
			m->cap = oldcap;
			return sc_nomem(c);
		}
		for (i = 0; i < oldcap; i++) {
			if (old[i].k == NULL)
				continue;
			for (h = ptr_hash(old[i].k, m->cap); ne[h].k != NULL; h = (h + 1) & (m->cap - 1))
				;
			ne[h] = old[i];
		}
		free(old);
		m->e = ne;
	}
	for (h = ptr_hash(k, m->cap); m->e[h].k != NULL && m->e[h].k != k;
	    h = (h + 1) & (m->cap - 1))
		;
	if (m->e[h].k == NULL)
		m->n++;
	m->e[h].k = k;
	m->e[h].v = v;
	return 0;
}

/* --- keyword values --- */

/* A non-negative integer (1.0 counts, per 2020-12). */
int
sc_count(struct cctx *c, const char *kw, const struct json_object *v, uint64_t *ret)
{
	struct snum n;

	if (!snum_from_json(v, &n) || !snum_is_integral(&n))
		return sc_fail(c, "\"%s\" must be a non-negative integer", kw);
	if (n.is_int) {
		if (n.i < 0)
			return sc_fail(c, "\"%s\" must be a non-negative integer", kw);
		*ret = n.i > (__int128)UINT64_MAX ? UINT64_MAX : (uint64_t)n.i;
	} else {
		if (n.d < 0)
			return sc_fail(c, "\"%s\" must be a non-negative integer", kw);
		*ret = n.d >= 0x1p64 ? UINT64_MAX : (uint64_t)n.d;
	}
	return 0;
}

int
sc_number(struct cctx *c, const char *kw, const struct json_object *v, struct snum *ret)
{
	if (!snum_from_json(v, ret))
		return sc_fail(c, "\"%s\" must be a finite number", kw);
	return 0;
}

int
sc_string(struct cctx *c, const char *kw, const struct json_object *v, const char **ret)
{
	if (!json_object_is_type(v, json_type_string))
		return sc_fail(c, "\"%s\" must be a string", kw);
	*ret = json_object_get_string((struct json_object *)v);
	return 0;
}

/* An array of unique strings (required, dependentRequired values). */
int
sc_names(struct cctx *c, const char *kw, const struct json_object *v,
    const char ***ret, size_t *retn)
{
	const char **names;
	struct json_object *e;
	size_t i, k, n;

	if (!json_object_is_type(v, json_type_array))
		return sc_fail(c, "\"%s\" must be an array of strings", kw);
	n = json_object_array_length(v);
	if ((names = sc_calloc(c, n == 0 ? 1 : n, sizeof(*names))) == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		e = json_object_array_get_idx(v, i);
		if (!json_object_is_type(e, json_type_string))
			return sc_fail(c, "\"%s\" must be an array of strings", kw);
		names[i] = json_object_get_string(e);
		for (k = 0; k < i; k++)
			if (strcmp(names[k], names[i]) == 0)
				return sc_fail(c, "\"%s\" lists \"%s\" twice", kw, names[i]);
	}
	*ret = names;
	*retn = n;
	return 0;
}

int
sc_pattern(struct cctx *c, const char *kw, const char *src, struct spattern *ret)
{
	PCRE2_UCHAR msg[160];
	pcre2_compile_context *cc;
	PCRE2_SIZE off;
	struct spattern **np;
	const char *bad;
	char *pat;
	int ec;

	/*
	 * ECMA-262 is the dialect JSON Schema names. The pattern is first
	 * rewritten to ECMA meanings (validator_regex.c), then compiled with
	 * UTF+UCP (code points, Unicode case folding and \p), DOLLAR_ENDONLY
	 * ($ does not match before a final newline) and ALT_BSUX (\uHHHH,
	 * \u{H..}, \xHH as in ECMA); AUTO_CALLOUT lets validate count
	 * backtracking over a whole call (validator_verr.c). Remaining
	 * differences: see tests/jsonschema/README.md.
	 */
	ret->src = src;
	if ((pat = sc_regex_translate(src, &bad)) == NULL && bad != NULL)
		return sc_fail(c, "\"%s\" uses %s, which ECMA-262 does not have", kw, bad);
	if (pat == NULL)
		return sc_nomem(c);
	if ((cc = pcre2_compile_context_create(NULL)) == NULL) {
		free(pat);
		return sc_nomem(c);
	}
	pcre2_set_compile_extra_options(cc, PCRE2_EXTRA_ALT_BSUX);
	ret->code = pcre2_compile((PCRE2_SPTR)pat, PCRE2_ZERO_TERMINATED,
	    PCRE2_UTF | PCRE2_UCP | PCRE2_DOLLAR_ENDONLY | PCRE2_ALT_BSUX |
	    PCRE2_NEVER_BACKSLASH_C | PCRE2_AUTO_CALLOUT, &ec, &off, cc);
	pcre2_compile_context_free(cc);
	free(pat);
	if (ret->code == NULL) {
		if (ec == PCRE2_ERROR_HEAP_FAILED)
			return sc_nomem(c);	/* not the pattern's fault */
		pcre2_get_error_message(ec, msg, sizeof(msg));
		return sc_fail(c, "\"%s\" is not a valid regular expression (%s near offset %zu)",
		    kw, (const char *)msg, (size_t)off);
	}
	if (c->s->npatterns == c->s->cpatterns) {
		size_t cap = c->s->cpatterns == 0 ? 8 : c->s->cpatterns * 2;

		if ((np = realloc(c->s->patterns, cap * sizeof(*np))) == NULL) {
			pcre2_code_free(ret->code);
			ret->code = NULL;
			return sc_nomem(c);
		}
		c->s->patterns = np;
		c->s->cpatterns = cap;
	}
	c->s->patterns[c->s->npatterns++] = ret;
	return 0;
}

/* A subschema under key kw (and optional index or name below it). */
int
sc_sub(struct cctx *c, const char *kw, const char *name, size_t idx, bool use_idx,
    const struct json_object *v, struct snode **ret)
{
	size_t old = c->pathlen;	/* the keyword itself is already on the path */
	int r;

	if (name != NULL)
		sc_path_push(c, name);
	else if (use_idx)
		sc_path_push_idx(c, idx);
	r = sc_node(c, v, ret);
	sc_path_pop(c, old);
	return r;
}

int
sc_sub_array(struct cctx *c, const char *kw, const struct json_object *v,
    struct snode ***ret, size_t *retn)
{
	struct snode **a;
	size_t i, n;

	if (!json_object_is_type(v, json_type_array) ||
	    (n = json_object_array_length(v)) == 0)
		return sc_fail(c, "\"%s\" must be a non-empty array of schemas", kw);
	if ((a = sc_calloc(c, n, sizeof(*a))) == NULL)
		return -1;
	for (i = 0; i < n; i++)
		if (sc_sub(c, kw, NULL, i, true, json_object_array_get_idx(v, i), &a[i]) < 0)
			return -1;
	*ret = a;
	*retn = n;
	return 0;
}

int
sc_sub_map(struct cctx *c, const char *kw, const struct json_object *v,
    struct sprop **ret, size_t *retn)
{
	struct sprop *a;
	size_t i = 0, n;

	if (!json_object_is_type(v, json_type_object))
		return sc_fail(c, "\"%s\" must be an object of schemas", kw);
	n = (size_t)json_object_object_length(v);
	if ((a = sc_calloc(c, n == 0 ? 1 : n, sizeof(*a))) == NULL)
		return -1;
	json_object_object_foreach((struct json_object *)v, k, sv) {
		a[i].name = k;
		if (sc_sub(c, kw, k, 0, false, sv, &a[i].node) < 0)
			return -1;
		i++;
	}
	*ret = a;
	*retn = i;
	return 0;
}

static int
prop_cmp(const void *a, const void *b)
{
	return strcmp(((const struct sprop *)a)->name, ((const struct sprop *)b)->name);
}

void
sc_path_set(struct cctx *c, const char *p, size_t len)
{
	if (len >= sizeof(c->path))
		len = sizeof(c->path) - 1;
	memcpy(c->path, p, len);
	c->path[len] = '\0';
	c->pathlen = len;
}

int
sc_node(struct cctx *c, const struct json_object *j, struct snode **ret)
{
	const char *saved_base = c->base, *base;
	struct snode *n;
	int r = 0;

	if (j == NULL)	/* JSON null */
		return sc_fail(c, "a schema must be an object or a boolean");
	if ((n = sc_map_get(&c->cache, j)) != NULL) {
		*ret = n;
		return 0;
	}
	if (c->depth >= SCHEMA_MAX_SCHEMA_DEPTH)
		return sc_fail(c, "schema nested deeper than %d levels", SCHEMA_MAX_SCHEMA_DEPTH);
	if (c->nnodes >= SCHEMA_MAX_NODES)
		return sc_fail(c, "schema has more than %d subschemas", SCHEMA_MAX_NODES);
	if ((n = sc_calloc(c, 1, sizeof(*n))) == NULL)
		return -1;
	if (sc_map_put(c, &c->cache, j, n) < 0)
		return -1;
	c->nnodes++;
	*ret = n;
	if (json_object_is_type(j, json_type_boolean)) {
		if (!json_object_get_boolean(j))
			n->kw = SK_FALSE;
		return 0;
	}
	if (!json_object_is_type(j, json_type_object))
		return sc_fail(c, "a schema must be an object or a boolean");
	if ((base = sc_map_get(&c->bases, j)) != NULL)
		c->base = base;	/* this schema's own $id, or its resource's */
	c->depth++;
	json_object_object_foreach((struct json_object *)j, k, v) {
		const struct kwdef *kd = sc_kw_find(k);
		size_t old;

		if (kd == NULL) {
			if (strncmp(k, "x-", 2) == 0)
				continue;	/* vendor extension, annotation only */
			r = sc_fail(c, "unsupported keyword \"%s\"", k);
			break;
		}
		if (kd->fn == NULL)
			continue;	/* annotation */
		old = sc_path_push(c, k);
		r = kd->fn(c, n, k, v);
		if (r < 0)
			break;
		sc_path_pop(c, old);
	}
	c->depth--;
	c->base = saved_base;
	if (r < 0)
		return -1;
	if (n->nprops > 1)
		qsort(n->props, n->nprops, sizeof(*n->props), prop_cmp);
	return 0;
}

static int
compile_root(struct cctx *c, const struct json_object *doc)
{
	if (sc_scan(c, doc) < 0 || sc_node(c, doc, &c->s->root) < 0)
		return -1;
	return sc_check_cycles(c);
}

enum mcp_err
schema_compile(const struct json_object *doc, struct schema **ret, char *err,
    size_t errlen)
{
	struct cctx c = { 0 };
	struct schema *s;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "out of memory compiling the schema");
		return MCP_ERR_NOMEM;
	}
	c.s = s;
	c.doc = doc;
	c.err = err;
	c.errlen = errlen;
	if (doc == NULL) {
		sc_fail(&c, "the schema is null");
		goto out;
	}
	s->doc = json_object_get((struct json_object *)doc);
	if ((s->mctx = pcre2_match_context_create(NULL)) == NULL) {
		sc_nomem(&c);
		goto out;
	}
	pcre2_set_match_limit(s->mctx, SCHEMA_PCRE2_MATCH_LIMIT);
	pcre2_set_depth_limit(s->mctx, SCHEMA_PCRE2_DEPTH_LIMIT);
	pcre2_set_heap_limit(s->mctx, SCHEMA_PCRE2_HEAP_LIMIT_KIB);
	(void)compile_root(&c, doc);
 out:
	free(c.cache.e);
	free(c.bases.e);
	free(c.res);
	free(c.refs);
	if (c.st != MCP_OK) {
		schema_free(s);
		return c.st;
	}
	*ret = s;
	return MCP_OK;
}

void
schema_free(struct schema *s)
{
	struct salloc *a, *next;
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < s->npatterns; i++)
		pcre2_code_free(s->patterns[i]->code);
	free(s->patterns);
	for (a = s->allocs; a != NULL; a = next) {
		next = a->next;
		free(a);
	}
	pcre2_match_context_free(s->mctx);
	if (s->doc != NULL)
		json_object_put(s->doc);
	free(s);
}
