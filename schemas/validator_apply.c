/*
 * In-place applicators (allOf anyOf oneOf not if/then/else $ref) and the
 * annotations unevaluatedProperties/unevaluatedItems need: which members of
 * the current instance were evaluated by a passing (sub)schema. The member
 * sets are inline up to 64 * SACC_INLINE_WORDS members, allocated beyond.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "validator_impl.h"

static size_t
member_count(const struct json_object *inst)
{
	if (json_object_is_type(inst, json_type_object))
		return (size_t)json_object_object_length(inst);
	if (json_object_is_type(inst, json_type_array))
		return json_object_array_length(inst);
	return 0;
}

int
sv_acc_init(struct vctx *c, struct sacc *a, const struct json_object *inst)
{
	size_t words;

	a->n = member_count(inst);
	words = (a->n + 63) / 64;
	memset(a->inl, 0, sizeof(a->inl));
	a->bits = a->inl;
	if (words > SACC_INLINE_WORDS && (a->bits = calloc(words, sizeof(uint64_t))) == NULL) {
		a->bits = a->inl;
		a->n = 0;
		return sv_abort(c, MCP_ERR_NOMEM, "unevaluated", "out of memory");
	}
	return V_OK;
}

void
sv_acc_fini(struct sacc *a)
{
	if (a->bits != a->inl)
		free(a->bits);
}

void
sv_acc_mark(struct sacc *a, size_t i)
{
	if (a != NULL && i < a->n)
		a->bits[i / 64] |= (uint64_t)1 << (i % 64);
}

bool
sv_acc_has(const struct sacc *a, size_t i)
{
	return i < a->n && (a->bits[i / 64] >> (i % 64)) & 1;
}

void
sv_acc_merge(struct sacc *dst, const struct sacc *src)
{
	size_t i;

	if (dst == NULL)
		return;
	for (i = 0; i < (dst->n + 63) / 64 && i < (src->n + 63) / 64; i++)
		dst->bits[i] |= src->bits[i];
}

static int
sv_quiet(struct vctx *c, const struct snode *n, const struct json_object *inst,
    struct sacc *acc)
{
	struct sacc tmp;
	int r;

	if (acc != NULL && (r = sv_acc_init(c, &tmp, inst)) != V_OK)
		return r;
	c->quiet++;
	r = sv_node(c, n, inst, acc != NULL ? &tmp : NULL);
	c->quiet--;
	if (acc != NULL) {
		if (r == V_OK)	/* only a passing subschema contributes annotations */
			sv_acc_merge(acc, &tmp);
		sv_acc_fini(&tmp);
	}
	return r;
}

int
sv_explain(struct vctx *c, const struct snode *n, const struct json_object *inst,
    char *why, size_t size, char *kw, size_t kwsize)
{
	struct schema_error sub, *saved = c->err;
	char here[SCHEMA_ERR_PATH_MAX];
	unsigned quiet = c->quiet;
	int r;

	why[0] = '\0';
	sv_path(c, here, sizeof(here));
	c->err = &sub;
	c->quiet = 0;
	r = sv_node(c, n, inst, NULL);
	c->err = saved;
	c->quiet = quiet;
	if (r < 0) {
		if (saved != NULL)
			*saved = sub;
		return r;
	}
	if (r == V_OK)
		return V_OK;
	snprintf(kw, kwsize, "%s", sub.keyword);
	if (strcmp(sub.path, here) == 0)
		snprintf(why, size, "%s", sub.message + c->raw_off);
	else
		snprintf(why, size, "at %s: %s", sub.path, sub.message + c->raw_off);
	return V_FAIL;
}

/*
 * anyOf/oneOf matched nothing: say why, from the first alternative that got
 * past "type" (else the first). Failure path only.
 */
static int
fail_none(struct vctx *c, const char *kw, struct snode *const *alts, size_t nalts,
    const struct json_object *inst)
{
	char why[SCHEMA_ERR_MESSAGE_MAX], one[SCHEMA_ERR_MESSAGE_MAX];
	char subkw[SCHEMA_ERR_KEYWORD_MAX];
	size_t i, pick = 0;
	int r;

	if (c->quiet > 0 || c->err == NULL)
		return V_FAIL;
	why[0] = '\0';
	for (i = 0; i < nalts; i++) {
		if ((r = sv_explain(c, alts[i], inst, one, sizeof(one), subkw, sizeof(subkw))) < 0)
			return r;
		if (r == V_OK)
			continue;
		if (i == 0 || strcmp(subkw, "type") != 0) {
			pick = i;
			snprintf(why, sizeof(why), "%s", one);
		}
		if (strcmp(subkw, "type") != 0)
			break;
	}
	return sv_fail(c, kw, "value matches none of the %zu %s alternatives "
	    "(alternative %zu: %s)", nalts, kw, pick, why);
}

int
sv_logic(struct vctx *c, const struct snode *n, const struct json_object *inst,
    struct sacc *acc)
{
	bool any = false;
	size_t i, hits = 0, first = 0;
	int r;

	for (i = 0; i < n->nallof; i++)
		if ((r = sv_node(c, n->allof[i], inst, acc)) != V_OK)
			return r;
	if (n->nanyof > 0) {
		for (i = 0; i < n->nanyof; i++) {
			if ((r = sv_quiet(c, n->anyof[i], inst, acc)) < 0)
				return r;
			if (r == V_OK)
				any = true;
			if (r == V_OK && acc == NULL)
				break;	/* all branches only when collecting annotations */
		}
		if (!any)
			return fail_none(c, "anyOf", n->anyof, n->nanyof, inst);
	}
	if (n->noneof > 0) {
		for (i = 0; i < n->noneof; i++) {
			if ((r = sv_quiet(c, n->oneof[i], inst, acc)) < 0)
				return r;
			if (r != V_OK)
				continue;
			if (++hits == 2)
				return sv_fail(c, "oneOf",
				    "value matches oneOf alternatives %zu and %zu, but must match exactly one",
				    first, i);
			first = i;
		}
		if (hits == 0)
			return fail_none(c, "oneOf", n->oneof, n->noneof, inst);
	}
	if (n->not_ != NULL) {
		if ((r = sv_quiet(c, n->not_, inst, NULL)) < 0)
			return r;
		if (r == V_OK)
			return sv_fail(c, "not", "value must not match the \"not\" schema");
	}
	if (n->if_ != NULL) {
		if ((r = sv_quiet(c, n->if_, inst, acc)) < 0)
			return r;
		if (r == V_OK && n->then_ != NULL && (r = sv_node(c, n->then_, inst, acc)) != V_OK)
			return r;
		if (r == V_FAIL && n->else_ != NULL && (r = sv_node(c, n->else_, inst, acc)) != V_OK)
			return r;
	}
	if (n->ref != NULL)
		return sv_node(c, n->ref, inst, acc);
	return V_OK;
}

/* unevaluatedProperties / unevaluatedItems: members no other keyword evaluated. */
int
sv_unevaluated(struct vctx *c, const struct snode *n, const struct json_object *inst,
    struct sacc *acc)
{
	char name[SCHEMA_ARG_NAME_MAX];
	size_t i = 0, len;
	int r;

	if (json_object_is_type(inst, json_type_object) && n->uneval_props != NULL) {
		json_object_object_foreach((struct json_object *)inst, k, v) {
			if (!sv_acc_has(acc, i)) {
				if (n->uneval_props->kw & SK_FALSE) {
					squote(k, strlen(k), name, sizeof(name));
					return sv_fail(c, "unevaluatedProperties",
					    "unexpected property %s", name);
				}
				if ((r = sv_at(c, n->uneval_props, v, k, 0)) != V_OK)
					return r;
				sv_acc_mark(acc, i);
			}
			i++;
		}
	}
	if (json_object_is_type(inst, json_type_array) && n->uneval_items != NULL) {
		len = json_object_array_length(inst);
		for (i = 0; i < len; i++) {
			if (sv_acc_has(acc, i))
				continue;
			if (n->uneval_items->kw & SK_FALSE)
				return sv_fail(c, "unevaluatedItems",
				    "array item %zu is not allowed (unevaluatedItems)", i);
			r = sv_at(c, n->uneval_items, json_object_array_get_idx(inst, i), NULL, i);
			if (r != V_OK)
				return r;
			sv_acc_mark(acc, i);
		}
	}
	return V_OK;
}
