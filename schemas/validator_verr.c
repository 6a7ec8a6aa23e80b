/*
 * Validation failures: the instance path as a JSON pointer, the message for a
 * model ("argument \"x\": ..."), the abort on a bound, and the checks whose
 * failure needs a list in the message (type, additionalProperties) or a regex
 * engine (pattern). Reads the instance only; writes only the caller's error.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"
#include "validator_impl.h"

void
sv_path(const struct vctx *c, char *buf, size_t size)
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

static void fill_error(struct vctx *c, const char *kw, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

static void
fill_error(struct vctx *c, const char *kw, const char *fmt, va_list ap)
{
	struct schema_error *e = c->err;
	char who[SCHEMA_ARG_NAME_MAX + SCHEMA_ERR_PATH_MAX + 32], name[SCHEMA_ARG_NAME_MAX];
	char path[SCHEMA_ERR_PATH_MAX];
	size_t i;
	int o;

	sv_path(c, e->path, sizeof(e->path));
	snprintf(e->keyword, sizeof(e->keyword), "%s", kw);
	if (c->nseg == 0) {
		snprintf(who, sizeof(who), "arguments");
	} else {
		if (c->seg[0].key != NULL)
			squote(c->seg[0].key, strlen(c->seg[0].key), name, sizeof(name));
		else
			snprintf(name, sizeof(name), "%zu", c->seg[0].idx);
		if (c->nseg == 1) {
			snprintf(who, sizeof(who), "argument %s", name);
		} else {
			/* e->path is the raw pointer; the message gets no control bytes. */
			snprintf(path, sizeof(path), "%s", e->path);
			for (i = 0; path[i] != '\0'; i++)
				if ((unsigned char)path[i] < 0x20 || path[i] == 0x7f)
					path[i] = '?';
			snprintf(who, sizeof(who), "argument %s at %s", name, path);
		}
	}
	utf8_trim(who);		/* the path may have been cut mid-character */
	o = snprintf(e->message, sizeof(e->message), "%s: ", who);
	if (o < 0 || (size_t)o >= sizeof(e->message)) {
		utf8_trim(e->message);
		c->raw_off = strlen(e->message);
		return;
	}
	c->raw_off = (size_t)o;
	vsnprintf(e->message + o, sizeof(e->message) - (size_t)o, fmt, ap);
	utf8_trim(e->message);
}

int
sv_fail(struct vctx *c, const char *kw, const char *fmt, ...)
{
	va_list ap;

	if (c->quiet > 0 || c->err == NULL)
		return V_FAIL;
	va_start(ap, fmt);
	fill_error(c, kw, fmt, ap);
	va_end(ap);
	return V_FAIL;
}

int
sv_abort(struct vctx *c, enum mcp_err st, const char *kw, const char *fmt, ...)
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

/*
 * Patterns are compiled with PCRE2_AUTO_CALLOUT: this runs before each
 * pattern item is tried, so it counts backtracking across all matches of one
 * call (the match limit only bounds one match). Negative ends the match.
 */
static int
count_step(pcre2_callout_block *b, void *data)
{
	struct vctx *c = data;

	(void)b;
	return ++c->regex_steps > SCHEMA_MAX_REGEX_STEPS ? PCRE2_ERROR_CALLOUT : 0;
}

int
sv_match(struct vctx *c, const struct spattern *p, const char *s, size_t len)
{
	PCRE2_UCHAR msg[120];
	int rc;

	if (c->md == NULL) {
		/* Per call: the step counter is this call's, the limits the schema's. */
		if ((c->md = pcre2_match_data_create(1, NULL)) == NULL ||
		    (c->mctx = pcre2_match_context_copy(c->s->mctx)) == NULL)
			return sv_abort(c, MCP_ERR_NOMEM, "pattern", "out of memory");
		pcre2_set_callout(c->mctx, count_step, c);
	}
	rc = pcre2_match(p->code, (PCRE2_SPTR)s, len, 0, 0, c->md, c->mctx);
	if (rc >= 0)
		return 1;
	if (rc == PCRE2_ERROR_NOMATCH)
		return 0;
	if (rc <= PCRE2_ERROR_UTF8_ERR1 && rc >= PCRE2_ERROR_UTF8_ERR21)
		return 2;
	if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT ||
	    rc == PCRE2_ERROR_HEAPLIMIT)
		return sv_abort(c, MCP_ERR_TOO_LARGE, "pattern",
		    "matching pattern \"%s\" exceeded the regex limits (%d steps, depth %d)",
		    p->src, SCHEMA_PCRE2_MATCH_LIMIT, SCHEMA_PCRE2_DEPTH_LIMIT);
	if (rc == PCRE2_ERROR_CALLOUT)
		return sv_abort(c, MCP_ERR_TOO_LARGE, "pattern",
		    "regular expression work exceeded the budget of %d steps", SCHEMA_MAX_REGEX_STEPS);
	if (rc == PCRE2_ERROR_NOMEMORY)
		return sv_abort(c, MCP_ERR_NOMEM, "pattern", "out of memory");
	pcre2_get_error_message(rc, msg, sizeof(msg));
	return sv_abort(c, MCP_ERR_INTERNAL, "pattern", "matching pattern \"%s\" failed: %s",
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

uint8_t
sv_type_mask(const struct json_object *j)
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

int
sv_fail_type(struct vctx *c, const struct snode *n, const struct json_object *inst)
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
	return sv_fail(c, "type", "expected %s, got %s", list, type_name(inst));
}

int
sv_fail_additional(struct vctx *c, const struct snode *n, const char *k)
{
	char name[SCHEMA_ARG_NAME_MAX], allowed[SCHEMA_TEXT_MAX], one[SCHEMA_ARG_NAME_MAX];
	size_t i, o = 0;

	squote(k, strlen(k), name, sizeof(name));
	if (n->nprops == 0 || n->npatprops > 0)
		return sv_fail(c, "additionalProperties", "unexpected property %s", name);
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
	return sv_fail(c, "additionalProperties", "unexpected property %s (allowed: %s)",
	    name, allowed);
}
