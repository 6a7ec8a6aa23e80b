/*
 * Schema validate: walks the compiled tree over a json-c instance. The
 * instance is untrusted: its nesting, the total work and every regex match are
 * bounded (limits in validator.h). Only the first failure is reported; nothing
 * is allocated on the common path (a pattern match allocates one match block,
 * propertyNames one string, per call). Never writes to the instance or schema.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "validator_impl.h"

/* Longest argument name quoted in a message. */
#define ARG_NAME_MAX 72

enum {
	V_ABORT = -1,	/* a bound was exceeded; c->fatal says which */
	V_OK = 0,
	V_FAIL = 1,
};

struct vseg {
	const char *key;	/* borrowed from the instance; NULL: idx */
	size_t idx;
};

struct vctx {
	const struct schema *s;
	struct schema_error *err;	/* borrowed from the caller; may be NULL */
	unsigned quiet;			/* >0: inside anyOf/oneOf/not/if/contains */
	unsigned depth;			/* nested eval_node calls */
	unsigned nseg;
	unsigned long work;
	enum mcp_err fatal;
	pcre2_match_data *md;		/* owned, made on first match */
	struct json_object *name;	/* owned, made on first propertyNames */
	struct vseg seg[SCHEMA_MAX_INSTANCE_DEPTH];
};

/*
 * Which members of one instance object or array some keyword has evaluated
 * (by position), for unevaluatedProperties/unevaluatedItems. Only built
 * below a node that has one of those; NULL everywhere else.
 */
static int vabort(struct vctx *c, enum mcp_err st, const char *kw, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

struct sacc {
	size_t n;
	uint64_t *bits;			/* inl, or owned if n > SACC_INLINE_BITS */
	uint64_t inl[SACC_INLINE_WORDS];
};

static int eval_node(struct vctx *c, const struct snode *n, const struct json_object *inst,
    struct sacc *acc);

static size_t
member_count(const struct json_object *inst)
{
	if (json_object_is_type(inst, json_type_object))
		return (size_t)json_object_object_length(inst);
	if (json_object_is_type(inst, json_type_array))
		return json_object_array_length(inst);
	return 0;
}

static int
sacc_init(struct vctx *c, struct sacc *a, const struct json_object *inst)
{
	size_t words;

	a->n = member_count(inst);
	words = (a->n + 63) / 64;
	memset(a->inl, 0, sizeof(a->inl));
	a->bits = a->inl;
	if (words > SACC_INLINE_WORDS && (a->bits = calloc(words, sizeof(uint64_t))) == NULL) {
		a->bits = a->inl;
		a->n = 0;
		return vabort(c, MCP_ERR_NOMEM, "unevaluated", "out of memory");
	}
	return V_OK;
}

static void
sacc_fini(struct sacc *a)
{
	if (a->bits != a->inl)
		free(a->bits);
}

static void
sacc_mark(struct sacc *a, size_t i)
{
	if (a != NULL && i < a->n)
		a->bits[i / 64] |= (uint64_t)1 << (i % 64);
}

static bool
sacc_has(const struct sacc *a, size_t i)
{
	return i < a->n && (a->bits[i / 64] >> (i % 64)) & 1;
}

static void
sacc_merge(struct sacc *dst, const struct sacc *src)
{
	size_t i;

	if (dst == NULL)
		return;
	for (i = 0; i < (dst->n + 63) / 64 && i < (src->n + 63) / 64; i++)
		dst->bits[i] |= src->bits[i];
}

static void
fill_path(const struct vctx *c, char *buf, size_t size)
{
	char tok[32];
	const char *t;
	size_t o = 0, need, i;
	unsigned k;

	buf[0] = '\0';
	for (k = 0; k < c->nseg; k++) {
		if (c->seg[k].key == NULL) {
			snprintf(tok, sizeof(tok), "%zu", c->seg[k].idx);
			t = tok;
		} else {
			t = c->seg[k].key;
		}
		for (need = 1, i = 0; t[i] != '\0'; i++)
			need += (t[i] == '~' || t[i] == '/') ? 2 : 1;
		if (o + need + 1 > size)
			return;	/* cut at a whole reference token */
		buf[o++] = '/';
		for (i = 0; t[i] != '\0'; i++) {
			if (t[i] == '~' || t[i] == '/') {
				buf[o++] = '~';
				buf[o++] = t[i] == '~' ? '0' : '1';
			} else {
				buf[o++] = t[i];
			}
		}
		buf[o] = '\0';
	}
}

static void
fill_error(struct vctx *c, const char *kw, const char *fmt, va_list ap)
{
	struct schema_error *e = c->err;
	char who[ARG_NAME_MAX + SCHEMA_ERR_PATH_MAX + 32], name[ARG_NAME_MAX];
	int o;

	fill_path(c, e->path, sizeof(e->path));
	snprintf(e->keyword, sizeof(e->keyword), "%s", kw);
	if (c->nseg == 0) {
		snprintf(who, sizeof(who), "arguments");
	} else {
		if (c->seg[0].key != NULL)
			squote(c->seg[0].key, strlen(c->seg[0].key), name, sizeof(name));
		else
			snprintf(name, sizeof(name), "%zu", c->seg[0].idx);
		if (c->nseg == 1)
			snprintf(who, sizeof(who), "argument %s", name);
		else
			snprintf(who, sizeof(who), "argument %s at %s", name, e->path);
	}
	o = snprintf(e->message, sizeof(e->message), "%s: ", who);
	if (o < 0 || (size_t)o >= sizeof(e->message))
		return;
	vsnprintf(e->message + o, sizeof(e->message) - (size_t)o, fmt, ap);
}

static int __attribute__((format(printf, 3, 4)))
vfail(struct vctx *c, const char *kw, const char *fmt, ...)
{
	va_list ap;

	if (c->quiet > 0 || c->err == NULL)
		return V_FAIL;
	va_start(ap, fmt);
	fill_error(c, kw, fmt, ap);
	va_end(ap);
	return V_FAIL;
}

static int
vabort(struct vctx *c, enum mcp_err st, const char *kw, const char *fmt, ...)
{
	va_list ap;

	c->fatal = st;
	if (c->err == NULL)
		return V_ABORT;
	va_start(ap, fmt);
	fill_error(c, kw, fmt, ap);
	va_end(ap);
	return V_ABORT;
}

static int
seg_push(struct vctx *c, const char *key, size_t idx)
{
	if (c->nseg >= SCHEMA_MAX_INSTANCE_DEPTH)
		return vabort(c, MCP_ERR_TOO_DEEP, "depth",
		    "arguments are nested deeper than %d levels", SCHEMA_MAX_INSTANCE_DEPTH);
	c->seg[c->nseg].key = key;
	c->seg[c->nseg].idx = idx;
	c->nseg++;
	return V_OK;
}

static int
eval_at(struct vctx *c, const struct snode *n, const struct json_object *inst,
    const char *key, size_t idx)
{
	int r;

	if ((r = seg_push(c, key, idx)) != V_OK)
		return r;
	r = eval_node(c, n, inst, NULL);
	c->nseg--;
	return r;
}

/* 1 match, 0 no match, V_FAIL+1 not UTF-8, V_ABORT. */
static int
match(struct vctx *c, const struct spattern *p, const char *s, size_t len)
{
	PCRE2_UCHAR msg[120];
	int rc;

	if (c->md == NULL && (c->md = pcre2_match_data_create(1, NULL)) == NULL)
		return vabort(c, MCP_ERR_NOMEM, "pattern", "out of memory");
	rc = pcre2_match(p->code, (PCRE2_SPTR)s, len, 0, 0, c->md, c->s->mctx);
	if (rc >= 0)
		return 1;
	if (rc == PCRE2_ERROR_NOMATCH)
		return 0;
	if (rc <= PCRE2_ERROR_UTF8_ERR1 && rc >= PCRE2_ERROR_UTF8_ERR21)
		return 2;
	if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT ||
	    rc == PCRE2_ERROR_HEAPLIMIT)
		return vabort(c, MCP_ERR_TOO_LARGE, "pattern",
		    "matching pattern \"%s\" exceeded the regex limits (%d steps, depth %d)",
		    p->src, SCHEMA_PCRE2_MATCH_LIMIT, SCHEMA_PCRE2_DEPTH_LIMIT);
	if (rc == PCRE2_ERROR_NOMEMORY)
		return vabort(c, MCP_ERR_NOMEM, "pattern", "out of memory");
	pcre2_get_error_message(rc, msg, sizeof(msg));
	return vabort(c, MCP_ERR_INTERNAL, "pattern", "matching pattern \"%s\" failed: %s",
	    p->src, (const char *)msg);
}

static const char *
type_name(const struct json_object *j)
{
	switch (json_object_get_type(j)) {
	case json_type_null:
		return "null";
	case json_type_boolean:
		return "boolean";
	case json_type_int:
		return "integer";
	case json_type_double:
		return isfinite(json_object_get_double(j)) ? "number" :
		    "a non-finite number (NaN and Infinity are not JSON)";
	case json_type_string:
		return "string";
	case json_type_array:
		return "array";
	case json_type_object:
		return "object";
	}
	return "unknown";
}

static uint8_t
type_mask(const struct json_object *j)
{
	struct snum n;

	switch (json_object_get_type(j)) {
	case json_type_null:
		return SNT_NULL;
	case json_type_boolean:
		return SNT_BOOLEAN;
	case json_type_int:
		return SNT_NUMBER | SNT_INTEGER;
	case json_type_double:
		/* 2020-12: 1.0 is an integer. json-c accepts NaN and Infinity even
		 * in strict mode; they are no JSON type at all. */
		if (!snum_from_json(j, &n))
			return 0;
		if (snum_is_integral(&n))
			return SNT_NUMBER | SNT_INTEGER;
		return SNT_NUMBER;
	case json_type_string:
		return SNT_STRING;
	case json_type_array:
		return SNT_ARRAY;
	case json_type_object:
		return SNT_OBJECT;
	}
	return 0;
}

static int
fail_type(struct vctx *c, const struct snode *n, const struct json_object *inst)
{
	static const char *const names[] = { "null", "boolean", "object", "array",
		"number", "string", "integer" };
	char list[128];
	size_t o = 0;
	unsigned b, cnt = 0, total = 0;

	for (b = 0; b < 7; b++)
		total += (n->types >> b) & 1;
	list[0] = '\0';
	for (b = 0; b < 7; b++) {
		if (!(n->types & (1u << b)))
			continue;
		cnt++;
		o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s",
		    cnt == 1 ? "" : cnt == total ? " or " : ", ", names[b]);
	}
	return vfail(c, "type", "expected %s, got %s", list, type_name(inst));
}

static int
eval_number(struct vctx *c, const struct snode *n, const struct json_object *inst)
{
	char a[48], b[48];
	struct snum v;
	struct sdec d;

	if (!snum_from_json(inst, &v))
		return vfail(c, "type", "number is not finite");
	snum_format(&v, a, sizeof(a));
	if ((n->kw & SK_MINIMUM) && snum_cmp(&v, &n->minimum) < 0) {
		snum_format(&n->minimum, b, sizeof(b));
		return vfail(c, "minimum", "%s is less than minimum %s", a, b);
	}
	if ((n->kw & SK_MAXIMUM) && snum_cmp(&v, &n->maximum) > 0) {
		snum_format(&n->maximum, b, sizeof(b));
		return vfail(c, "maximum", "%s is greater than maximum %s", a, b);
	}
	if ((n->kw & SK_EXMIN) && snum_cmp(&v, &n->exmin) <= 0) {
		snum_format(&n->exmin, b, sizeof(b));
		return vfail(c, "exclusiveMinimum",
		    "%s is not greater than exclusiveMinimum %s", a, b);
	}
	if ((n->kw & SK_EXMAX) && snum_cmp(&v, &n->exmax) >= 0) {
		snum_format(&n->exmax, b, sizeof(b));
		return vfail(c, "exclusiveMaximum",
		    "%s is not less than exclusiveMaximum %s", a, b);
	}
	if (n->kw & SK_MULTIPLE) {
		snum_to_dec(&v, &d);
		if (!sdec_is_multiple(&d, &n->multiple_dec)) {
			snum_format(&n->multiple, b, sizeof(b));
			return vfail(c, "multipleOf", "%s is not a multiple of %s", a, b);
		}
	}
	return V_OK;
}

static int
eval_string(struct vctx *c, const struct snode *n, const struct json_object *inst)
{
	const char *s = json_object_get_string((struct json_object *)inst);
	size_t len = (size_t)json_object_get_string_len(inst), cp;
	int m;

	if (n->kw & (SK_MINLEN | SK_MAXLEN)) {
		cp = sutf8_len(s, len);
		if ((n->kw & SK_MINLEN) && cp < n->min_len)
			return vfail(c, "minLength",
			    "string is %zu characters long, shorter than minLength %llu",
			    cp, (unsigned long long)n->min_len);
		if ((n->kw & SK_MAXLEN) && cp > n->max_len)
			return vfail(c, "maxLength",
			    "string is %zu characters long, longer than maxLength %llu",
			    cp, (unsigned long long)n->max_len);
	}
	if (n->kw & SK_PATTERN) {
		if ((m = match(c, &n->pattern, s, len)) < 0)
			return m;
		if (m == 2)
			return vfail(c, "pattern", "string is not valid UTF-8");
		if (m == 0)
			return vfail(c, "pattern", "string does not match pattern \"%s\"",
			    n->pattern.src);
	}
	return V_OK;
}

static int
eval_unique(struct vctx *c, const struct json_object *inst, size_t len)
{
	size_t i, j;
	int r;

	for (i = 1; i < len; i++) {
		for (j = 0; j < i; j++) {
			r = sjson_equal(json_object_array_get_idx(inst, j),
			    json_object_array_get_idx(inst, i), 0, &c->work);
			if (r == 1)
				return vfail(c, "uniqueItems",
				    "array items %zu and %zu are equal, but uniqueItems is true", j, i);
			if (r < 0 && c->work > SCHEMA_MAX_WORK)
				return vabort(c, MCP_ERR_TOO_LARGE, "uniqueItems",
				    "validation work exceeded the budget of %d steps", SCHEMA_MAX_WORK);
			if (r < 0)
				return vabort(c, MCP_ERR_TOO_DEEP, "uniqueItems",
				    "array items are nested deeper than %d levels",
				    SCHEMA_MAX_INSTANCE_DEPTH);
		}
	}
	return V_OK;
}

static int
eval_contains(struct vctx *c, const struct snode *n, const struct json_object *inst, size_t len,
    struct sacc *acc)
{
	uint64_t min = (n->kw & SK_MINCONTAINS) ? n->min_contains : 1, cnt = 0;
	bool hasmax = (n->kw & SK_MAXCONTAINS) != 0;
	size_t i;
	int r;

	if (min == 0 && !hasmax && acc == NULL)
		return V_OK;
	c->quiet++;
	for (i = 0; i < len; i++) {
		r = eval_at(c, n->contains, json_object_array_get_idx(inst, i), NULL, i);
		if (r < 0) {
			c->quiet--;
			return r;
		}
		if (r == V_OK) {
			cnt++;
			sacc_mark(acc, i);
		}
		if (acc == NULL && ((!hasmax && cnt >= min) || (hasmax && cnt > n->max_contains)))
			break;
	}
	c->quiet--;
	if (cnt < min && !(n->kw & SK_MINCONTAINS))
		return vfail(c, "contains", "array has no item matching \"contains\"");
	if (cnt < min)
		return vfail(c, "minContains",
		    "array has %llu items matching \"contains\", fewer than minContains %llu",
		    (unsigned long long)cnt, (unsigned long long)min);
	if (hasmax && cnt > n->max_contains)
		return vfail(c, "maxContains",
		    "array has more than maxContains %llu items matching \"contains\"",
		    (unsigned long long)n->max_contains);
	return V_OK;
}

static int
eval_array(struct vctx *c, const struct snode *n, const struct json_object *inst,
    struct sacc *acc)
{
	size_t len = json_object_array_length(inst), i;
	const struct snode *item;
	int r;

	if ((n->kw & SK_MINITEMS) && len < n->min_items)
		return vfail(c, "minItems", "array has %zu items, fewer than minItems %llu",
		    len, (unsigned long long)n->min_items);
	if ((n->kw & SK_MAXITEMS) && len > n->max_items)
		return vfail(c, "maxItems", "array has %zu items, more than maxItems %llu",
		    len, (unsigned long long)n->max_items);
	if ((n->kw & SK_UNIQUE) && (r = eval_unique(c, inst, len)) != V_OK)
		return r;
	for (i = 0; i < len; i++) {
		if (i < n->nprefix)
			item = n->prefix[i];
		else if ((item = n->items) == NULL)
			break;
		if (i >= n->nprefix && (item->kw & SK_FALSE))
			return vfail(c, "items", "array has %zu items, at most %zu allowed",
			    len, n->nprefix);
		if ((r = eval_at(c, item, json_object_array_get_idx(inst, i), NULL, i)) != V_OK)
			return r;
		sacc_mark(acc, i);
	}
	if (n->contains != NULL)
		return eval_contains(c, n, inst, len, acc);
	return V_OK;
}

static int
prop_key_cmp(const void *key, const void *ent)
{
	return strcmp(key, ((const struct sprop *)ent)->name);
}

static int
fail_additional(struct vctx *c, const struct snode *n, const char *k)
{
	char name[ARG_NAME_MAX], allowed[SCHEMA_TEXT_MAX], one[ARG_NAME_MAX];
	size_t i, o = 0;

	squote(k, strlen(k), name, sizeof(name));
	if (n->nprops == 0 || n->npatprops > 0)
		return vfail(c, "additionalProperties", "unexpected property %s", name);
	allowed[0] = '\0';
	for (i = 0; i < n->nprops; i++) {
		squote(n->props[i].name, strlen(n->props[i].name), one, sizeof(one));
		if (o + strlen(one) + 6 >= sizeof(allowed)) {
			snprintf(allowed + o, sizeof(allowed) - o, ", ...");
			break;
		}
		o += (size_t)snprintf(allowed + o, sizeof(allowed) - o, "%s%s",
		    i > 0 ? ", " : "", one);
	}
	return vfail(c, "additionalProperties", "unexpected property %s (allowed: %s)",
	    name, allowed);
}

static int
eval_name(struct vctx *c, const struct snode *n, const char *k)
{
	char name[ARG_NAME_MAX];
	int r;

	if (c->name == NULL) {
		if ((c->name = json_object_new_string(k)) == NULL)
			return vabort(c, MCP_ERR_NOMEM, "propertyNames", "out of memory");
	} else if (json_object_set_string(c->name, k) == 0) {
		return vabort(c, MCP_ERR_NOMEM, "propertyNames", "out of memory");
	}
	c->quiet++;
	r = eval_node(c, n->propnames, c->name, NULL);
	c->quiet--;
	if (r != V_FAIL)
		return r;
	squote(k, strlen(k), name, sizeof(name));
	return vfail(c, "propertyNames", "property name %s is not allowed by propertyNames",
	    name);
}

static int
eval_member(struct vctx *c, const struct snode *n, const char *k,
    const struct json_object *v, size_t pos, struct sacc *acc)
{
	char name[ARG_NAME_MAX];
	const struct sprop *p;
	bool matched = false;
	size_t i;
	int r;

	if (n->propnames != NULL && (r = eval_name(c, n, k)) != V_OK)
		return r;
	if (n->nprops > 0 && (p = bsearch(k, n->props, n->nprops, sizeof(*p),
	    prop_key_cmp)) != NULL) {
		matched = true;
		if (p->node->kw & SK_FALSE) {
			squote(k, strlen(k), name, sizeof(name));
			return vfail(c, "properties", "property %s is not allowed", name);
		}
		if ((r = eval_at(c, p->node, v, k, 0)) != V_OK)
			return r;
	}
	for (i = 0; i < n->npatprops; i++) {
		if ((r = match(c, &n->patprops[i].pat, k, strlen(k))) < 0)
			return r;
		if (r != 1)
			continue;
		matched = true;
		if ((r = eval_at(c, n->patprops[i].node, v, k, 0)) != V_OK)
			return r;
	}
	if (matched)
		sacc_mark(acc, pos);
	if (matched || n->additional == NULL)
		return V_OK;
	if (n->additional->kw & SK_FALSE)
		return fail_additional(c, n, k);
	sacc_mark(acc, pos);
	return eval_at(c, n->additional, v, k, 0);
}

static int
eval_object(struct vctx *c, const struct snode *n, const struct json_object *inst,
    struct sacc *acc)
{
	char a[ARG_NAME_MAX], b[ARG_NAME_MAX];
	size_t cnt = (size_t)json_object_object_length(inst), i, k, pos = 0;
	int r;

	if ((n->kw & SK_MINPROPS) && cnt < n->min_props)
		return vfail(c, "minProperties",
		    "object has %zu properties, fewer than minProperties %llu",
		    cnt, (unsigned long long)n->min_props);
	if ((n->kw & SK_MAXPROPS) && cnt > n->max_props)
		return vfail(c, "maxProperties",
		    "object has %zu properties, more than maxProperties %llu",
		    cnt, (unsigned long long)n->max_props);
	for (i = 0; i < n->nrequired; i++) {
		if (json_object_object_get_ex(inst, n->required[i], NULL))
			continue;
		squote(n->required[i], strlen(n->required[i]), a, sizeof(a));
		return vfail(c, "required", "missing required property %s", a);
	}
	for (i = 0; i < n->ndepreq; i++) {
		if (!json_object_object_get_ex(inst, n->depreq[i].name, NULL))
			continue;
		for (k = 0; k < n->depreq[i].nreq; k++) {
			if (json_object_object_get_ex(inst, n->depreq[i].req[k], NULL))
				continue;
			squote(n->depreq[i].name, strlen(n->depreq[i].name), a, sizeof(a));
			squote(n->depreq[i].req[k], strlen(n->depreq[i].req[k]), b, sizeof(b));
			return vfail(c, "dependentRequired", "property %s requires property %s",
			    a, b);
		}
	}
	if (n->nprops > 0 || n->npatprops > 0 || n->additional != NULL ||
	    n->propnames != NULL) {
		json_object_object_foreach((struct json_object *)inst, key, val) {
			if (++c->work > SCHEMA_MAX_WORK)
				return vabort(c, MCP_ERR_TOO_LARGE, "work",
				    "validation work exceeded the budget of %d steps",
				    SCHEMA_MAX_WORK);
			if ((r = eval_member(c, n, key, val, pos++, acc)) != V_OK)
				return r;
		}
	}
	for (i = 0; i < n->ndepsch; i++) {
		if (!json_object_object_get_ex(inst, n->depsch[i].name, NULL))
			continue;
		if ((r = eval_node(c, n->depsch[i].node, inst, acc)) != V_OK)
			return r;
	}
	return V_OK;
}

static int
eval_values(struct vctx *c, const struct snode *n, const struct json_object *inst)
{
	size_t i, len;
	int r;

	if (n->kw & SK_ENUM) {
		len = json_object_array_length(n->enum_val);
		for (i = 0; i < len; i++) {
			r = sjson_equal(json_object_array_get_idx(n->enum_val, i), inst, 0, &c->work);
			if (r == 1)
				break;
			if (r < 0)
				return vabort(c, MCP_ERR_TOO_LARGE, "enum",
				    "comparing with enum values exceeded the work or depth bound");
		}
		if (i == len)
			return vfail(c, "enum", "value is not one of the allowed values: %s",
			    n->enum_text);
	}
	if (n->kw & SK_CONST) {
		r = sjson_equal(n->const_val, inst, 0, &c->work);
		if (r < 0)
			return vabort(c, MCP_ERR_TOO_LARGE, "const",
			    "comparing with const exceeded the work or depth bound");
		if (r == 0) {
			char want[SCHEMA_TEXT_MAX];

			sjson_render(n->const_val, want, sizeof(want));
			return vfail(c, "const", "value must be %s", want);
		}
	}
	return V_OK;
}

static int
eval_quiet(struct vctx *c, const struct snode *n, const struct json_object *inst,
    struct sacc *acc)
{
	struct sacc tmp;
	int r;

	if (acc != NULL && (r = sacc_init(c, &tmp, inst)) != V_OK)
		return r;
	c->quiet++;
	r = eval_node(c, n, inst, acc != NULL ? &tmp : NULL);
	c->quiet--;
	if (acc != NULL) {
		if (r == V_OK)	/* only a passing subschema contributes annotations */
			sacc_merge(acc, &tmp);
		sacc_fini(&tmp);
	}
	return r;
}

static int
eval_logic(struct vctx *c, const struct snode *n, const struct json_object *inst,
    struct sacc *acc)
{
	bool any = false;
	size_t i, hits = 0, first = 0;
	int r;

	for (i = 0; i < n->nallof; i++)
		if ((r = eval_node(c, n->allof[i], inst, acc)) != V_OK)
			return r;
	if (n->nanyof > 0) {
		for (i = 0; i < n->nanyof; i++) {
			if ((r = eval_quiet(c, n->anyof[i], inst, acc)) < 0)
				return r;
			if (r == V_OK)
				any = true;
			if (r == V_OK && acc == NULL)
				break;	/* all branches only when collecting annotations */
		}
		if (!any)
			return vfail(c, "anyOf", "value matches none of the %zu anyOf alternatives",
			    n->nanyof);
	}
	if (n->noneof > 0) {
		for (i = 0; i < n->noneof; i++) {
			if ((r = eval_quiet(c, n->oneof[i], inst, acc)) < 0)
				return r;
			if (r != V_OK)
				continue;
			if (++hits == 2)
				return vfail(c, "oneOf",
				    "value matches oneOf alternatives %zu and %zu, but must match exactly one",
				    first, i);
			first = i;
		}
		if (hits == 0)
			return vfail(c, "oneOf", "value matches none of the %zu oneOf alternatives",
			    n->noneof);
	}
	if (n->not_ != NULL) {
		if ((r = eval_quiet(c, n->not_, inst, NULL)) < 0)
			return r;
		if (r == V_OK)
			return vfail(c, "not", "value must not match the \"not\" schema");
	}
	if (n->if_ != NULL) {
		if ((r = eval_quiet(c, n->if_, inst, acc)) < 0)
			return r;
		if (r == V_OK && n->then_ != NULL && (r = eval_node(c, n->then_, inst, acc)) != V_OK)
			return r;
		if (r == V_FAIL && n->else_ != NULL && (r = eval_node(c, n->else_, inst, acc)) != V_OK)
			return r;
	}
	if (n->ref != NULL)
		return eval_node(c, n->ref, inst, acc);
	return V_OK;
}

static int
eval_body(struct vctx *c, const struct snode *n, const struct json_object *inst,
    struct sacc *acc)
{
	int r;

	if ((n->kw & SK_TYPE) && !(type_mask(inst) & n->types))
		return fail_type(c, n, inst);
	if ((n->kw & (SK_ENUM | SK_CONST)) && (r = eval_values(c, n, inst)) != V_OK)
		return r;
	switch (json_object_get_type(inst)) {
	case json_type_int:
	case json_type_double:
		if ((n->kw & SK_NUMERIC) && (r = eval_number(c, n, inst)) != V_OK)
			return r;
		break;
	case json_type_string:
		if ((n->kw & SK_STRING) && (r = eval_string(c, n, inst)) != V_OK)
			return r;
		break;
	case json_type_array:
		if (n->has_array && (r = eval_array(c, n, inst, acc)) != V_OK)
			return r;
		break;
	case json_type_object:
		if (n->has_object && (r = eval_object(c, n, inst, acc)) != V_OK)
			return r;
		break;
	default:
		break;
	}
	return eval_logic(c, n, inst, acc);
}

/* unevaluatedProperties / unevaluatedItems: members no other keyword evaluated. */
static int
eval_unevaluated(struct vctx *c, const struct snode *n, const struct json_object *inst,
    struct sacc *acc)
{
	char name[ARG_NAME_MAX];
	size_t i = 0, len;
	int r;

	if (json_object_is_type(inst, json_type_object) && n->uneval_props != NULL) {
		json_object_object_foreach((struct json_object *)inst, k, v) {
			if (!sacc_has(acc, i)) {
				if (n->uneval_props->kw & SK_FALSE) {
					squote(k, strlen(k), name, sizeof(name));
					return vfail(c, "unevaluatedProperties",
					    "unexpected property %s", name);
				}
				if ((r = eval_at(c, n->uneval_props, v, k, 0)) != V_OK)
					return r;
				sacc_mark(acc, i);
			}
			i++;
		}
	}
	if (json_object_is_type(inst, json_type_array) && n->uneval_items != NULL) {
		len = json_object_array_length(inst);
		for (i = 0; i < len; i++) {
			if (sacc_has(acc, i))
				continue;
			if (n->uneval_items->kw & SK_FALSE)
				return vfail(c, "unevaluatedItems",
				    "array item %zu is not allowed (unevaluatedItems)", i);
			r = eval_at(c, n->uneval_items, json_object_array_get_idx(inst, i), NULL, i);
			if (r != V_OK)
				return r;
			sacc_mark(acc, i);
		}
	}
	return V_OK;
}

static int
eval_node(struct vctx *c, const struct snode *n, const struct json_object *inst,
    struct sacc *acc)
{
	struct sacc local;
	bool own;
	int r;

	if (++c->work > SCHEMA_MAX_WORK)
		return vabort(c, MCP_ERR_TOO_LARGE, "work",
		    "validation work exceeded the budget of %d steps", SCHEMA_MAX_WORK);
	if (c->depth >= SCHEMA_MAX_EVAL_DEPTH)
		return vabort(c, MCP_ERR_TOO_DEEP, "depth",
		    "schema evaluation nested deeper than %d levels (recursive $ref?)",
		    SCHEMA_MAX_EVAL_DEPTH);
	if (n->kw & SK_FALSE)
		return vfail(c, "false", "no value is allowed here");
	own = (n->uneval_props != NULL && json_object_is_type(inst, json_type_object)) ||
	    (n->uneval_items != NULL && json_object_is_type(inst, json_type_array));
	if (own && (r = sacc_init(c, &local, inst)) != V_OK)
		return r;
	c->depth++;
	r = eval_body(c, n, inst, own ? &local : acc);
	if (own) {
		if (r == V_OK)
			r = eval_unevaluated(c, n, inst, &local);
		if (r == V_OK)
			sacc_merge(acc, &local);
		sacc_fini(&local);
	}
	c->depth--;
	return r;
}

enum mcp_err
schema_validate(const struct schema *s, const struct json_object *instance,
    struct schema_error *err)
{
	struct vctx c = { .s = s, .err = err };
	enum mcp_err st;
	int r;

	if (err != NULL) {
		err->path[0] = '\0';
		err->keyword[0] = '\0';
		err->message[0] = '\0';
	}
	r = eval_node(&c, s->root, instance, NULL);
	st = r == V_OK ? MCP_OK : r == V_FAIL ? MCP_ERR_INVALID_PARAMS : c.fatal;
	pcre2_match_data_free(c.md);
	if (c.name != NULL)
		json_object_put(c.name);
	return st;
}
