/*
 * The supported keywords, one compile handler each ($id, $anchor and $ref
 * are in validator_ref.c). A keyword absent from kwdefs[] fails the compile.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "validator_impl.h"

#define SCHEMA_DIALECT "https://json-schema.org/draft/2020-12/schema"

static const struct {
	const char *name;
	uint8_t bit;
} type_names[] = {
	{ "null", SNT_NULL },
	{ "boolean", SNT_BOOLEAN },
	{ "object", SNT_OBJECT },
	{ "array", SNT_ARRAY },
	{ "number", SNT_NUMBER },
	{ "string", SNT_STRING },
	{ "integer", SNT_INTEGER },
};

static int
type_bit(struct cctx *c, const struct json_object *v, uint8_t *ret)
{
	const char *s;
	size_t i;

	if (!json_object_is_type(v, json_type_string))
		return sc_fail(c, "\"type\" must be a type name or an array of them");
	s = json_object_get_string((struct json_object *)v);
	for (i = 0; i < sizeof(type_names) / sizeof(type_names[0]); i++) {
		if (strcmp(s, type_names[i].name) == 0) {
			*ret = type_names[i].bit;
			return 0;
		}
	}
	return sc_fail(c, "unknown type \"%s\"", s);
}

static int
kw_type(struct cctx *c, struct snode *n, const char *kw, const struct json_object *v)
{
	uint8_t b = 0;	/* type_bit() sets it when it returns 0; gcc -O3 cannot see that */
	size_t i, len;

	n->kw |= SK_TYPE;
	if (!json_object_is_type(v, json_type_array))
		return type_bit(c, v, &n->types);
	if ((len = json_object_array_length(v)) == 0)
		return sc_fail(c, "\"type\" must not be an empty array");
	for (i = 0; i < len; i++) {
		if (type_bit(c, json_object_array_get_idx(v, i), &b) < 0)
			return -1;
		if (n->types & b)
			return sc_fail(c, "\"type\" lists a type twice");
		n->types |= b;
	}
	return 0;
}

static int
render_values(struct cctx *c, struct snode *n, const struct json_object *v, bool list)
{
	char one[SCHEMA_TEXT_MAX];
	size_t i, len, used = 0;

	if ((n->enum_text = sc_calloc(c, SCHEMA_TEXT_MAX, 1)) == NULL)
		return -1;
	if (!list) {
		sjson_render(v, n->enum_text, SCHEMA_TEXT_MAX);
		return 0;
	}
	len = json_object_array_length(v);
	for (i = 0; i < len; i++) {
		sjson_render(json_object_array_get_idx(v, i), one, sizeof(one));
		if (used + strlen(one) + 2 + 4 >= SCHEMA_TEXT_MAX) {
			snprintf(n->enum_text + used, SCHEMA_TEXT_MAX - used, "%s...",
			    i > 0 ? ", " : "");
			break;
		}
		used += (size_t)snprintf(n->enum_text + used, SCHEMA_TEXT_MAX - used,
		    "%s%s", i > 0 ? ", " : "", one);
	}
	return 0;
}

static int
kw_enum(struct cctx *c, struct snode *n, const char *kw, const struct json_object *v)
{
	if (!json_object_is_type(v, json_type_array))
		return sc_fail(c, "\"enum\" must be an array");
	n->kw |= SK_ENUM;
	n->enum_val = v;
	return render_values(c, n, v, true);
}

static int
kw_const(struct cctx *c, struct snode *n, const char *kw, const struct json_object *v)
{
	n->kw |= SK_CONST;
	n->const_val = v;
	/* enum_text is shared: a node with both enum and const reports enum. */
	if (n->enum_text != NULL)
		return 0;
	return render_values(c, n, v, false);
}

static int
kw_number(struct cctx *c, struct snode *n, const char *kw, const struct json_object *v)
{
	struct snum *dst;
	uint32_t bit;

	if (strcmp(kw, "minimum") == 0)
		dst = &n->minimum, bit = SK_MINIMUM;
	else if (strcmp(kw, "maximum") == 0)
		dst = &n->maximum, bit = SK_MAXIMUM;
	else if (strcmp(kw, "exclusiveMinimum") == 0)
		dst = &n->exmin, bit = SK_EXMIN;
	else
		dst = &n->exmax, bit = SK_EXMAX;
	n->kw |= bit;
	return sc_number(c, kw, v, dst);
}

static int
kw_multiple(struct cctx *c, struct snode *n, const char *kw, const struct json_object *v)
{
	struct snum zero = { .is_int = true };

	if (sc_number(c, kw, v, &n->multiple) < 0)
		return -1;
	if (snum_cmp(&n->multiple, &zero) <= 0)
		return sc_fail(c, "\"multipleOf\" must be greater than 0");
	snum_to_dec(&n->multiple, &n->multiple_dec);
	n->kw |= SK_MULTIPLE;
	return 0;
}

/* minLength maxLength minItems maxItems minContains maxContains minProperties maxProperties */
static int
kw_count(struct cctx *c, struct snode *n, const char *kw, const struct json_object *v)
{
	static const struct {
		const char *name;
		uint32_t bit;
		size_t off;
	} tab[] = {
		{ "minLength", SK_MINLEN, offsetof(struct snode, min_len) },
		{ "maxLength", SK_MAXLEN, offsetof(struct snode, max_len) },
		{ "minItems", SK_MINITEMS, offsetof(struct snode, min_items) },
		{ "maxItems", SK_MAXITEMS, offsetof(struct snode, max_items) },
		{ "minContains", SK_MINCONTAINS, offsetof(struct snode, min_contains) },
		{ "maxContains", SK_MAXCONTAINS, offsetof(struct snode, max_contains) },
		{ "minProperties", SK_MINPROPS, offsetof(struct snode, min_props) },
		{ "maxProperties", SK_MAXPROPS, offsetof(struct snode, max_props) },
	};
	size_t i;

	for (i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		if (strcmp(kw, tab[i].name) != 0)
			continue;
		n->kw |= tab[i].bit;
		if (tab[i].bit & (SK_MINITEMS | SK_MAXITEMS | SK_MINCONTAINS | SK_MAXCONTAINS))
			n->has_array = true;
		if (tab[i].bit & (SK_MINPROPS | SK_MAXPROPS))
			n->has_object = true;
		return sc_count(c, kw, v, (uint64_t *)(void *)((char *)n + tab[i].off));
	}
	return sc_fail(c, "internal: no counter for \"%s\"", kw);
}

static int
kw_pattern(struct cctx *c, struct snode *n, const char *kw, const struct json_object *v)
{
	const char *src;

	if (sc_string(c, kw, v, &src) < 0)
		return -1;
	n->kw |= SK_PATTERN;
	return sc_pattern(c, kw, src, &n->pattern);
}

static int
kw_unique(struct cctx *c, struct snode *n, const char *kw, const struct json_object *v)
{
	if (!json_object_is_type(v, json_type_boolean))
		return sc_fail(c, "\"uniqueItems\" must be a boolean");
	if (json_object_get_boolean(v)) {
		n->kw |= SK_UNIQUE;
		n->has_array = true;
	}
	return 0;
}

static int
kw_prefix(struct cctx *c, struct snode *n, const char *kw, const struct json_object *v)
{
	n->has_array = true;
	return sc_sub_array(c, kw, v, &n->prefix, &n->nprefix);
}

static int
kw_items(struct cctx *c, struct snode *n, const char *kw, const struct json_object *v)
{
	if (json_object_is_type(v, json_type_array))
		return sc_fail(c, "\"items\" must be a schema (2020-12 uses prefixItems for tuples)");
	n->has_array = true;
	return sc_sub(c, kw, NULL, 0, false, v, &n->items);
}

static int
kw_contains(struct cctx *c, struct snode *n, const char *kw, const struct json_object *v)
{
	n->has_array = true;
	return sc_sub(c, kw, NULL, 0, false, v, &n->contains);
}

static int
kw_properties(struct cctx *c, struct snode *n, const char *kw, const struct json_object *v)
{
	n->has_object = true;
	return sc_sub_map(c, kw, v, &n->props, &n->nprops);
}

static int
kw_patprops(struct cctx *c, struct snode *n, const char *kw, const struct json_object *v)
{
	size_t i = 0, cnt;

	if (!json_object_is_type(v, json_type_object))
		return sc_fail(c, "\"patternProperties\" must be an object of schemas");
	n->has_object = true;
	cnt = (size_t)json_object_object_length(v);
	if ((n->patprops = sc_calloc(c, cnt == 0 ? 1 : cnt, sizeof(*n->patprops))) == NULL)
		return -1;
	json_object_object_foreach((struct json_object *)v, k, sv) {
		size_t old = sc_path_push(c, k);

		if (sc_pattern(c, kw, k, &n->patprops[i].pat) < 0)
			return -1;
		sc_path_pop(c, old);
		if (sc_sub(c, kw, k, 0, false, sv, &n->patprops[i].node) < 0)
			return -1;
		i++;
		n->npatprops = i;
	}
	return 0;
}

static int
kw_additional(struct cctx *c, struct snode *n, const char *kw, const struct json_object *v)
{
	n->has_object = true;
	return sc_sub(c, kw, NULL, 0, false, v, &n->additional);
}

static int
kw_propnames(struct cctx *c, struct snode *n, const char *kw, const struct json_object *v)
{
	n->has_object = true;
	return sc_sub(c, kw, NULL, 0, false, v, &n->propnames);
}

static int
kw_required(struct cctx *c, struct snode *n, const char *kw, const struct json_object *v)
{
	n->has_object = true;
	return sc_names(c, kw, v, &n->required, &n->nrequired);
}

static int
kw_depreq(struct cctx *c, struct snode *n, const char *kw, const struct json_object *v)
{
	size_t i = 0, cnt;

	if (!json_object_is_type(v, json_type_object))
		return sc_fail(c, "\"dependentRequired\" must be an object of string arrays");
	n->has_object = true;
	cnt = (size_t)json_object_object_length(v);
	if ((n->depreq = sc_calloc(c, cnt == 0 ? 1 : cnt, sizeof(*n->depreq))) == NULL)
		return -1;
	json_object_object_foreach((struct json_object *)v, k, sv) {
		size_t old = sc_path_push(c, k);

		n->depreq[i].name = k;
		if (sc_names(c, kw, sv, &n->depreq[i].req, &n->depreq[i].nreq) < 0)
			return -1;
		sc_path_pop(c, old);
		n->ndepreq = ++i;
	}
	return 0;
}

static int
kw_depsch(struct cctx *c, struct snode *n, const char *kw, const struct json_object *v)
{
	n->has_object = true;
	return sc_sub_map(c, kw, v, &n->depsch, &n->ndepsch);
}

static int
kw_allof(struct cctx *c, struct snode *n, const char *kw, const struct json_object *v)
{
	if (kw[0] == 'a' && kw[1] == 'l')
		return sc_sub_array(c, kw, v, &n->allof, &n->nallof);
	if (kw[0] == 'a')
		return sc_sub_array(c, kw, v, &n->anyof, &n->nanyof);
	return sc_sub_array(c, kw, v, &n->oneof, &n->noneof);
}

static int
kw_single(struct cctx *c, struct snode *n, const char *kw, const struct json_object *v)
{
	struct snode **dst;

	if (strcmp(kw, "not") == 0)
		dst = &n->not_;
	else if (strcmp(kw, "if") == 0)
		dst = &n->if_;
	else if (strcmp(kw, "then") == 0)
		dst = &n->then_;
	else
		dst = &n->else_;
	return sc_sub(c, kw, NULL, 0, false, v, dst);
}

static int
kw_uneval(struct cctx *c, struct snode *n, const char *kw, const struct json_object *v)
{
	if (strcmp(kw, "unevaluatedItems") == 0) {
		n->has_array = true;
		return sc_sub(c, kw, NULL, 0, false, v, &n->uneval_items);
	}
	n->has_object = true;
	return sc_sub(c, kw, NULL, 0, false, v, &n->uneval_props);
}

static int
kw_defs(struct cctx *c, struct snode *n, const char *kw, const struct json_object *v)
{
	struct sprop *defs;
	size_t ndefs;

	/* Compiled so that a broken definition fails even if nothing uses it. */
	return sc_sub_map(c, kw, v, &defs, &ndefs);
}

static int
kw_schema(struct cctx *c, struct snode *n, const char *kw, const struct json_object *v)
{
	const char *s;

	if (sc_string(c, kw, v, &s) < 0)
		return -1;
	if (strcmp(s, SCHEMA_DIALECT) != 0 && strcmp(s, SCHEMA_DIALECT "#") != 0)
		return sc_fail(c, "unsupported dialect \"%s\" (only %s)", s, SCHEMA_DIALECT);
	return 0;
}

static int
annot_string(struct cctx *c, struct snode *n, const char *kw, const struct json_object *v)
{
	if (!json_object_is_type(v, json_type_string))
		return sc_fail(c, "\"%s\" must be a string", kw);
	return 0;
}

static int
annot_bool(struct cctx *c, struct snode *n, const char *kw, const struct json_object *v)
{
	if (!json_object_is_type(v, json_type_boolean))
		return sc_fail(c, "\"%s\" must be a boolean", kw);
	return 0;
}

static int
annot_array(struct cctx *c, struct snode *n, const char *kw, const struct json_object *v)
{
	if (!json_object_is_type(v, json_type_array))
		return sc_fail(c, "\"%s\" must be an array", kw);
	return 0;
}

/* Sorted by name for bsearch. Not here: $dynamicRef, $dynamicAnchor,
 * $vocabulary, content*, dependencies,
 * definitions: they fail the compile as unsupported. */
static const struct kwdef kwdefs[] = {
	{ "$anchor", sc_kw_anchor },
	{ "$comment", annot_string },
	{ "$defs", kw_defs },
	{ "$id", sc_kw_id },
	{ "$ref", sc_kw_ref },
	{ "$schema", kw_schema },
	{ "additionalProperties", kw_additional },
	{ "allOf", kw_allof },
	{ "anyOf", kw_allof },
	{ "const", kw_const },
	{ "contains", kw_contains },
	{ "default", NULL },
	{ "dependentRequired", kw_depreq },
	{ "dependentSchemas", kw_depsch },
	{ "deprecated", annot_bool },
	{ "description", annot_string },
	{ "else", kw_single },
	{ "enum", kw_enum },
	{ "examples", annot_array },
	{ "exclusiveMaximum", kw_number },
	{ "exclusiveMinimum", kw_number },
	{ "format", annot_string },
	{ "if", kw_single },
	{ "items", kw_items },
	{ "maxContains", kw_count },
	{ "maxItems", kw_count },
	{ "maxLength", kw_count },
	{ "maxProperties", kw_count },
	{ "maximum", kw_number },
	{ "minContains", kw_count },
	{ "minItems", kw_count },
	{ "minLength", kw_count },
	{ "minProperties", kw_count },
	{ "minimum", kw_number },
	{ "multipleOf", kw_multiple },
	{ "not", kw_single },
	{ "oneOf", kw_allof },
	{ "pattern", kw_pattern },
	{ "patternProperties", kw_patprops },
	{ "prefixItems", kw_prefix },
	{ "properties", kw_properties },
	{ "propertyNames", kw_propnames },
	{ "readOnly", annot_bool },
	{ "required", kw_required },
	{ "then", kw_single },
	{ "title", annot_string },
	{ "type", kw_type },
	{ "unevaluatedItems", kw_uneval },
	{ "unevaluatedProperties", kw_uneval },
	{ "uniqueItems", kw_unique },
	{ "writeOnly", annot_bool },
};

static int
kwdef_cmp(const void *key, const void *ent)
{
	return strcmp(key, ((const struct kwdef *)ent)->name);
}

const struct kwdef *
sc_kw_find(const char *k)
{
	return bsearch(k, kwdefs, sizeof(kwdefs) / sizeof(kwdefs[0]), sizeof(kwdefs[0]),
	    kwdef_cmp);
}
