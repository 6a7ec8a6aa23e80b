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

static int
seg_push(struct vctx *c, const char *key, size_t idx)
{
	if (c->nseg >= SCHEMA_MAX_INSTANCE_DEPTH)
		return sv_abort(c, MCP_ERR_TOO_DEEP, "depth",
		    "arguments are nested deeper than %d levels", SCHEMA_MAX_INSTANCE_DEPTH);
	c->seg[c->nseg].key = key;
	c->seg[c->nseg].idx = idx;
	c->nseg++;
	return V_OK;
}

int
sv_at(struct vctx *c, const struct snode *n, const struct json_object *inst,
    const char *key, size_t idx)
{
	int r;

	if ((r = seg_push(c, key, idx)) != V_OK)
		return r;
	r = sv_node(c, n, inst, NULL);
	c->nseg--;
	return r;
}

/* "<value> <rel> <limit>", formatted only when someone reads it. */
static int
fail_bound(struct vctx *c, const char *kw, const struct snum *v, const char *rel,
    const struct snum *limit)
{
	char a[48], b[48];

	if (c->quiet > 0 || c->err == NULL)
		return V_FAIL;
	snum_format(v, a, sizeof(a));
	snum_format(limit, b, sizeof(b));
	return sv_fail(c, kw, "%s %s %s", a, rel, b);
}

static int
eval_number(struct vctx *c, const struct snode *n, const struct json_object *inst)
{
	struct snum v;
	struct sdec d;
	bool multiple;

	if (!snum_from_json(inst, &v))
		return sv_fail(c, "type", "number is not finite");
	if ((n->kw & SK_MINIMUM) && snum_cmp(&v, &n->minimum) < 0)
		return fail_bound(c, "minimum", &v, "is less than minimum", &n->minimum);
	if ((n->kw & SK_MAXIMUM) && snum_cmp(&v, &n->maximum) > 0)
		return fail_bound(c, "maximum", &v, "is greater than maximum", &n->maximum);
	if ((n->kw & SK_EXMIN) && snum_cmp(&v, &n->exmin) <= 0)
		return fail_bound(c, "exclusiveMinimum", &v,
		    "is not greater than exclusiveMinimum", &n->exmin);
	if ((n->kw & SK_EXMAX) && snum_cmp(&v, &n->exmax) >= 0)
		return fail_bound(c, "exclusiveMaximum", &v,
		    "is not less than exclusiveMaximum", &n->exmax);
	if (n->kw & SK_MULTIPLE) {
		if (n->multiple.is_int && (v.is_int || (snum_is_integral(&v) &&
		    fabs(v.d) < 0x1p53))) {
			/* Integers (doubles below 2^53 are their own shortest decimal). */
			multiple = (v.is_int ? v.i : (__int128)v.d) % n->multiple.i == 0;
		} else {
			snum_to_dec(&v, &d);
			multiple = sdec_is_multiple(&d, &n->multiple_dec);
		}
		if (!multiple)
			return fail_bound(c, "multipleOf", &v, "is not a multiple of",
			    &n->multiple);
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
			return sv_fail(c, "minLength",
			    "string is %zu characters long, shorter than minLength %llu",
			    cp, (unsigned long long)n->min_len);
		if ((n->kw & SK_MAXLEN) && cp > n->max_len)
			return sv_fail(c, "maxLength",
			    "string is %zu characters long, longer than maxLength %llu",
			    cp, (unsigned long long)n->max_len);
	}
	if (n->kw & SK_PATTERN) {
		if ((m = sv_match(c, &n->pattern, s, len)) < 0)
			return m;
		if (m == 2)
			return sv_fail(c, "pattern", "string is not valid UTF-8");
		if (m == 0)
			return sv_fail(c, "pattern", "string does not match pattern \"%s\"",
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
				return sv_fail(c, "uniqueItems",
				    "array items %zu and %zu are equal, but uniqueItems is true", j, i);
			if (r < 0 && c->work > SCHEMA_MAX_WORK)
				return sv_abort(c, MCP_ERR_TOO_LARGE, "uniqueItems",
				    "validation work exceeded the budget of %d steps", SCHEMA_MAX_WORK);
			if (r < 0)
				return sv_abort(c, MCP_ERR_TOO_DEEP, "uniqueItems",
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
		r = sv_at(c, n->contains, json_object_array_get_idx(inst, i), NULL, i);
		if (r < 0) {
			c->quiet--;
			return r;
		}
		if (r == V_OK) {
			cnt++;
			sv_acc_mark(acc, i);
		}
		if (acc == NULL && ((!hasmax && cnt >= min) || (hasmax && cnt > n->max_contains)))
			break;
	}
	c->quiet--;
	if (cnt < min && !(n->kw & SK_MINCONTAINS))
		return sv_fail(c, "contains", "array has no item matching \"contains\"");
	if (cnt < min)
		return sv_fail(c, "minContains",
		    "array has %llu items matching \"contains\", fewer than minContains %llu",
		    (unsigned long long)cnt, (unsigned long long)min);
	if (hasmax && cnt > n->max_contains)
		return sv_fail(c, "maxContains",
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
		return sv_fail(c, "minItems", "array has %zu items, fewer than minItems %llu",
		    len, (unsigned long long)n->min_items);
	if ((n->kw & SK_MAXITEMS) && len > n->max_items)
		return sv_fail(c, "maxItems", "array has %zu items, more than maxItems %llu",
		    len, (unsigned long long)n->max_items);
	if ((n->kw & SK_UNIQUE) && (r = eval_unique(c, inst, len)) != V_OK)
		return r;
	for (i = 0; i < len; i++) {
		if (i < n->nprefix)
			item = n->prefix[i];
		else if ((item = n->items) == NULL)
			break;
		if (i >= n->nprefix && (item->kw & SK_FALSE))
			return sv_fail(c, "items", "array has %zu items, at most %zu allowed",
			    len, n->nprefix);
		if ((r = sv_at(c, item, json_object_array_get_idx(inst, i), NULL, i)) != V_OK)
			return r;
		sv_acc_mark(acc, i);
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
eval_name(struct vctx *c, const struct snode *n, const char *k)
{
	char name[SCHEMA_ARG_NAME_MAX], why[SCHEMA_ERR_MESSAGE_MAX], kw[SCHEMA_ERR_KEYWORD_MAX];
	int r;

	/*
	 * A fresh string per name, never json_object_set_string() on the
	 * last one: json-c 0.16 turns a string that outgrew its object back
	 * into an in-place one when set to "", losing (leaking) its buffer
	 * and reading the pointer's bytes as the name.
	 */
	json_object_put(c->name);
	if ((c->name = json_object_new_string(k)) == NULL)
		return sv_abort(c, MCP_ERR_NOMEM, "propertyNames", "out of memory");
	c->quiet++;
	r = sv_node(c, n->propnames, c->name, NULL);
	c->quiet--;
	if (r != V_FAIL || c->quiet > 0 || c->err == NULL)
		return r;
	if ((r = sv_explain(c, n->propnames, c->name, why, sizeof(why), kw, sizeof(kw))) != V_FAIL)
		return r;
	squote(k, strlen(k), name, sizeof(name));
	return sv_fail(c, "propertyNames", "property name %s is not allowed: %s", name, why);
}

static int
eval_member(struct vctx *c, const struct snode *n, const char *k,
    const struct json_object *v, size_t pos, struct sacc *acc)
{
	char name[SCHEMA_ARG_NAME_MAX];
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
			return sv_fail(c, "properties", "property %s is not allowed", name);
		}
		if ((r = sv_at(c, p->node, v, k, 0)) != V_OK)
			return r;
	}
	for (i = 0; i < n->npatprops; i++) {
		if ((r = sv_match(c, &n->patprops[i].pat, k, strlen(k))) < 0)
			return r;
		if (r != 1)
			continue;
		matched = true;
		if ((r = sv_at(c, n->patprops[i].node, v, k, 0)) != V_OK)
			return r;
	}
	if (matched)
		sv_acc_mark(acc, pos);
	if (matched || n->additional == NULL)
		return V_OK;
	if (n->additional->kw & SK_FALSE)
		return sv_fail_additional(c, n, k);
	sv_acc_mark(acc, pos);
	return sv_at(c, n->additional, v, k, 0);
}

static int
eval_object(struct vctx *c, const struct snode *n, const struct json_object *inst,
    struct sacc *acc)
{
	char a[SCHEMA_ARG_NAME_MAX], b[SCHEMA_ARG_NAME_MAX];
	size_t cnt = (size_t)json_object_object_length(inst), i, k, pos = 0;
	int r;

	if ((n->kw & SK_MINPROPS) && cnt < n->min_props)
		return sv_fail(c, "minProperties",
		    "object has %zu properties, fewer than minProperties %llu",
		    cnt, (unsigned long long)n->min_props);
	if ((n->kw & SK_MAXPROPS) && cnt > n->max_props)
		return sv_fail(c, "maxProperties",
		    "object has %zu properties, more than maxProperties %llu",
		    cnt, (unsigned long long)n->max_props);
	for (i = 0; i < n->nrequired; i++) {
		if (json_object_object_get_ex(inst, n->required[i], NULL))
			continue;
		squote(n->required[i], strlen(n->required[i]), a, sizeof(a));
		return sv_fail(c, "required", "missing required property %s", a);
	}
	for (i = 0; i < n->ndepreq; i++) {
		if (!json_object_object_get_ex(inst, n->depreq[i].name, NULL))
			continue;
		for (k = 0; k < n->depreq[i].nreq; k++) {
			if (json_object_object_get_ex(inst, n->depreq[i].req[k], NULL))
				continue;
			squote(n->depreq[i].name, strlen(n->depreq[i].name), a, sizeof(a));
			squote(n->depreq[i].req[k], strlen(n->depreq[i].req[k]), b, sizeof(b));
			return sv_fail(c, "dependentRequired", "property %s requires property %s",
			    a, b);
		}
	}
	if (n->nprops > 0 || n->npatprops > 0 || n->additional != NULL ||
	    n->propnames != NULL) {
		json_object_object_foreach((struct json_object *)inst, key, val) {
			if (++c->work > SCHEMA_MAX_WORK)
				return sv_abort(c, MCP_ERR_TOO_LARGE, "work",
				    "validation work exceeded the budget of %d steps",
				    SCHEMA_MAX_WORK);
			if ((r = eval_member(c, n, key, val, pos++, acc)) != V_OK)
				return r;
		}
	}
	for (i = 0; i < n->ndepsch; i++) {
		if (!json_object_object_get_ex(inst, n->depsch[i].name, NULL))
			continue;
		if ((r = sv_node(c, n->depsch[i].node, inst, acc)) != V_OK)
			return r;
	}
	return V_OK;
}

/*
 * A short rendering of a scalar for an enum failure: a string in quotes
 * (printable ASCII kept, anything else as '?'), a number or literal as is,
 * and "value" for containers or long strings. Allocates nothing and does
 * not touch the instance (json-c would cache a serialisation in it).
 */
static void
enum_echo(const struct json_object *inst, char *buf, size_t size)
{
	const char *s;
	size_t len, i, o = 0;

	switch (json_object_get_type(inst)) {
	case json_type_string:
		s = json_object_get_string((struct json_object *)inst);
		len = (size_t)json_object_get_string_len(inst);
		if (len + 3 > size || len > SCHEMA_ENUM_ECHO_MAX)
			break;
		buf[o++] = '"';
		for (i = 0; i < len; i++)
			buf[o++] = s[i] >= 0x20 && s[i] < 0x7f && s[i] != '"' &&
			    s[i] != '\\' ? s[i] : '?';
		buf[o++] = '"';
		buf[o] = '\0';
		return;
	case json_type_int:
		(void)snprintf(buf, size, "%lld", (long long)json_object_get_int64(inst));
		return;
	case json_type_double:
		(void)snprintf(buf, size, "%.17g", json_object_get_double(inst));
		return;
	case json_type_boolean:
		(void)snprintf(buf, size, "%s", json_object_get_boolean(inst) ? "true" : "false");
		return;
	case json_type_null:
		(void)snprintf(buf, size, "null");
		return;
	case json_type_object:
	case json_type_array:
	default:
		break;
	}
	(void)snprintf(buf, size, "value");
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
				return sv_abort(c, MCP_ERR_TOO_LARGE, "enum",
				    "comparing with enum values exceeded the work or depth bound");
		}
		if (i == len) {
			/* name what was given, when it is short enough to help */
			char given[SCHEMA_ENUM_ECHO_MAX + 8];

			enum_echo(inst, given, sizeof(given));
			return sv_fail(c, "enum", "%s is not one of the allowed values: %s",
			    given, n->enum_text);
		}
	}
	if (n->kw & SK_CONST) {
		r = sjson_equal(n->const_val, inst, 0, &c->work);
		if (r < 0)
			return sv_abort(c, MCP_ERR_TOO_LARGE, "const",
			    "comparing with const exceeded the work or depth bound");
		if (r == 0) {
			char want[SCHEMA_TEXT_MAX];

			sjson_render(n->const_val, want, sizeof(want));
			return sv_fail(c, "const", "value must be %s", want);
		}
	}
	return V_OK;
}

static int
eval_body(struct vctx *c, const struct snode *n, const struct json_object *inst,
    struct sacc *acc)
{
	int r;

	if ((n->kw & SK_TYPE) && !(sv_type_mask(inst) & n->types))
		return sv_fail_type(c, n, inst);
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
	return sv_logic(c, n, inst, acc);
}

int
sv_node(struct vctx *c, const struct snode *n, const struct json_object *inst,
    struct sacc *acc)
{
	struct sacc local;
	bool own;
	int r;

	if (++c->work > SCHEMA_MAX_WORK)
		return sv_abort(c, MCP_ERR_TOO_LARGE, "work",
		    "validation work exceeded the budget of %d steps", SCHEMA_MAX_WORK);
	if (c->depth >= SCHEMA_MAX_EVAL_DEPTH)
		return sv_abort(c, MCP_ERR_TOO_DEEP, "depth",
		    "schema evaluation nested deeper than %d levels (recursive $ref?)",
		    SCHEMA_MAX_EVAL_DEPTH);
	if (n->kw & SK_FALSE)
		return sv_fail(c, "false", "no value is allowed here");
	own = (n->uneval_props != NULL && json_object_is_type(inst, json_type_object)) ||
	    (n->uneval_items != NULL && json_object_is_type(inst, json_type_array));
	if (own && (r = sv_acc_init(c, &local, inst)) != V_OK)
		return r;
	c->depth++;
	r = eval_body(c, n, inst, own ? &local : acc);
	if (own) {
		if (r == V_OK)
			r = sv_unevaluated(c, n, inst, &local);
		if (r == V_OK)
			sv_acc_merge(acc, &local);
		sv_acc_fini(&local);
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
	r = sv_node(&c, s->root, instance, NULL);
	st = r == V_OK ? MCP_OK : r == V_FAIL ? MCP_ERR_INVALID_PARAMS : c.fatal;
	pcre2_match_data_free(c.md);
	pcre2_match_context_free(c.mctx);
	if (c.name != NULL)
		json_object_put(c.name);
	return st;
}
