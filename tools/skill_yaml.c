/*
 * skill_yaml: a SKILL.md's YAML frontmatter as a JSON object, for the
 * Skills extension's entries (skill_catalog.h), which must carry it
 * verbatim. The subset the Agent Skills format uses, and nothing more:
 * top-level keys whose values are scalars (plain, typed as YAML 1.2's core
 * schema types them: null, booleans, integers, floats; or quoted), block
 * scalars (| and >, clipped), a map of such scalars one level down
 * (metadata:) or a list of them (- item). Anything else (flow collections,
 * anchors, tags, deeper nesting) is refused with the line it is on, so
 * that an entry never says other than what the file says.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "skill_catalog.h"
#include "tool.h"

/* One line of the frontmatter: its text (no newline) and indent. */
struct line {
	const char *s;
	size_t len;
	size_t indent;
	int no;			/* 1-based, in the file */
};

/* Lines of the frontmatter, at most this many (a SKILL.md's is short). */
#define YAML_MAX_LINES	512

struct doc {
	struct line l[YAML_MAX_LINES];
	size_t n;
	char *err;
	size_t errlen;
};

static int
bad(struct doc *d, int no, const char *what)
{
	(void)snprintf(d->err, d->errlen, "line %d of the frontmatter: %s", no,
	    what);
	return -EINVAL;
}

static bool
blank_or_comment(const struct line *l)
{
	size_t i = l->indent;

	return i >= l->len || l->s[i] == '#';
}

/* Splits text's frontmatter (between the first two --- lines) into d. */
static int
split(struct doc *d, const char *text, size_t len)
{
	const char *p = text, *end = text + len, *nl;
	int no = 1;

	if (len < 4 || strncmp(text, "---", 3) != 0 ||
	    (text[3] != '\n' && text[3] != '\r'))
		return bad(d, 1, "SKILL.md does not begin with a --- line");
	p = memchr(text, '\n', len);
	p = p != NULL ? p + 1 : end;
	for (no = 2; p < end; no++) {
		size_t n, ind = 0;

		nl = memchr(p, '\n', (size_t)(end - p));
		n = (size_t)((nl != NULL ? nl : end) - p);
		if (n > 0 && p[n - 1] == '\r')
			n--;
		if (n == 3 && strncmp(p, "---", 3) == 0)
			return 0;
		if (d->n == YAML_MAX_LINES)
			return bad(d, no, "too many lines");
		while (ind < n && p[ind] == ' ')
			ind++;
		if (ind < n && p[ind] == '\t')
			return bad(d, no, "a tab in the indentation");
		d->l[d->n++] = (struct line){ p, n, ind, no };
		p = nl != NULL ? nl + 1 : end;
	}
	return bad(d, no, "no closing --- line");
}

/* A plain scalar that YAML 1.2's core schema reads as null. */
static bool
is_null(const char *s, size_t n)
{
	return n == 0 || (n == 1 && s[0] == '~') || (n == 4 &&
	    (strncmp(s, "null", 4) == 0 || strncmp(s, "Null", 4) == 0 ||
	    strncmp(s, "NULL", 4) == 0));
}

/* A plain scalar, typed as YAML 1.2's core schema types it (NULL: null,
 * or no memory: is_null() tells which). */
static struct json_object *
plain(const char *s, size_t n)
{
	char buf[64], *e;
	long long v;
	double f;

	if (is_null(s, n))
		return NULL;	/* JSON null: json-c's NULL */
	if ((n == 4 && (strncmp(s, "true", 4) == 0 ||
	    strncmp(s, "True", 4) == 0 || strncmp(s, "TRUE", 4) == 0)))
		return json_object_new_boolean(1);
	if ((n == 5 && (strncmp(s, "false", 5) == 0 ||
	    strncmp(s, "False", 5) == 0 || strncmp(s, "FALSE", 5) == 0)))
		return json_object_new_boolean(0);
	if (n < sizeof(buf)) {
		size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0, digits = 0;
		bool dot = false, ok = i < n;

		memcpy(buf, s, n);
		buf[n] = '\0';
		/* [-+]?[0-9]+ : an integer */
		for (; i < n && isdigit((unsigned char)s[i]); i++)
			digits++;
		if (ok && i == n && digits > 0) {
			errno = 0;
			v = strtoll(buf, &e, 10);
			if (errno == 0 && *e == '\0')
				return json_object_new_int64(v);
		}
		/* [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
		i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
		digits = 0;
		for (; i < n && isdigit((unsigned char)s[i]); i++)
			digits++;
		if (i < n && s[i] == '.') {
			dot = true;
			for (i++; i < n && isdigit((unsigned char)s[i]); i++)
				digits++;
		}
		if (digits > 0 && i < n && (s[i] == 'e' || s[i] == 'E')) {
			size_t j = i + 1, ed = 0;

			if (j < n && (s[j] == '-' || s[j] == '+'))
				j++;
			for (; j < n && isdigit((unsigned char)s[j]); j++)
				ed++;
			if (ed > 0)
				i = j;
		}
		if (digits > 0 && i == n && (dot || strpbrk(buf, "eE"))) {
			f = strtod(buf, &e);
			if (*e == '\0' && isfinite(f))
				return json_object_new_double(f);
		}
	}
	return json_object_new_string_len(s, (int)n);
}

/* A quoted scalar (s at the quote): its value, *used set to its bytes. */
static struct json_object *
quoted(struct doc *d, const struct line *l, const char *s, size_t n,
    size_t *used, bool *failed)
{
	char q = s[0], *out;
	size_t i, w = 0;
	struct json_object *v;

	*failed = false;
	if ((out = malloc(n + 1)) == NULL) {
		*failed = true;
		return NULL;
	}
	for (i = 1; i < n; i++) {
		if (s[i] == q && q == '\'' && i + 1 < n && s[i + 1] == '\'') {
			out[w++] = '\'';
			i++;
			continue;
		}
		if (s[i] == q)
			break;
		if (q == '"' && s[i] == '\\' && i + 1 < n) {
			char c = s[++i];

			out[w++] = c == 'n' ? '\n' : c == 't' ? '\t' :
			    c == 'r' ? '\r' : c == '0' ? '\0' : c;
			if (strchr("ntr0\"\\/ ", c) == NULL) {
				free(out);
				*failed = true;
				(void)bad(d, l->no, "an escape this reader does "
				    "not take (only \\n \\t \\r \\0 \\\" \\\\)");
				return NULL;
			}
			continue;
		}
		out[w++] = s[i];
	}
	if (i >= n) {
		free(out);
		*failed = true;
		(void)bad(d, l->no, "a quoted scalar that does not end on its "
		    "line");
		return NULL;
	}
	*used = i + 1;
	v = json_object_new_string_len(out, (int)w);
	free(out);
	if (v == NULL)
		*failed = true;
	return v;
}

/*
 * The scalar at s (n bytes, the rest of a line after "key:" or "- "):
 * quoted, or plain with any " #" comment cut. *failed on an error.
 */
static struct json_object *
scalar(struct doc *d, const struct line *l, const char *s, size_t n,
    bool *failed)
{
	struct json_object *v;
	size_t used, i;

	*failed = false;
	while (n > 0 && s[0] == ' ')
		s++, n--;
	while (n > 0 && s[n - 1] == ' ')
		n--;
	if (n > 0 && (s[0] == '"' || s[0] == '\'')) {
		if ((v = quoted(d, l, s, n, &used, failed)) == NULL)
			return NULL;
		for (i = used; i < n && s[i] == ' '; i++)
			;
		if (i < n && s[i] != '#') {
			json_object_put(v);
			*failed = true;
			(void)bad(d, l->no, "text after a quoted scalar");
			return NULL;
		}
		return v;
	}
	if (n > 0 && strchr("[{&*!%@`|>", s[0]) != NULL) {
		*failed = true;
		(void)bad(d, l->no, "YAML this reader does not take (flow "
		    "collections, anchors, aliases, tags, directives)");
		return NULL;
	}
	for (i = 0; i + 1 < n; i++)
		if (s[i] == ' ' && s[i + 1] == '#') {
			n = i;
			break;
		}
	while (n > 0 && s[n - 1] == ' ')
		n--;
	if (n > 0 && s[n - 1] == ':') {
		*failed = true;
		(void)bad(d, l->no, "a mapping where a scalar is expected");
		return NULL;
	}
	v = plain(s, n);
	if (v == NULL && !is_null(s, n))
		*failed = true;		/* no memory */
	return v;
}

/*
 * A | or > block scalar after line *i, clipped (one final newline; none
 * when empty): | keeps the line breaks, > folds them into spaces (an
 * empty line stays a break). *i moved to its last line.
 */
static struct json_object *
block(struct doc *d, size_t *i, char style)
{
	size_t j, k, ind = 0, cap = 2, w = 0, last = *i;
	bool first = true, prev_empty = false;
	struct json_object *v;
	char *out;

	for (k = *i + 1; k < d->n; k++)
		cap += d->l[k].len + 1;
	if ((out = malloc(cap)) == NULL)
		return NULL;
	for (j = *i + 1; j < d->n; j++) {
		const struct line *l = &d->l[j];
		bool empty = l->indent >= l->len;

		if (!empty && ind == 0)
			ind = l->indent;
		if (!empty && (ind == 0 || l->indent < ind))
			break;
		last = j;
		if (empty) {
			out[w++] = '\n';
			prev_empty = true;
			continue;
		}
		if (!first && style == '|')
			out[w++] = '\n';
		else if (!first && !prev_empty)
			out[w++] = ' ';
		memcpy(out + w, l->s + ind, l->len - ind);
		w += l->len - ind;
		first = prev_empty = false;
	}
	while (w > 0 && out[w - 1] == '\n')
		w--;
	if (!first)
		out[w++] = '\n';
	*i = last;
	v = json_object_new_string_len(out, (int)w);
	free(out);
	return v;
}

/* The indented map or list under line *i: *i moved to its last line. */
static struct json_object *
nested(struct doc *d, size_t *i, bool *failed)
{
	struct json_object *o = NULL, *v;
	size_t j, ind = d->l[*i + 1].indent;
	bool list = d->l[*i + 1].s[ind] == '-';

	*failed = true;
	if ((o = list ? json_object_new_array() : json_object_new_object()) ==
	    NULL)
		return NULL;
	for (j = *i + 1; j < d->n; j++) {
		const struct line *l = &d->l[j];
		const char *s = l->s + l->indent, *colon;
		size_t n = l->len - l->indent;
		char key[256];
		bool f;

		if (blank_or_comment(l))
			continue;
		if (l->indent == 0)
			break;
		if (l->indent != ind) {
			json_object_put(o);
			(void)bad(d, l->no, "nesting deeper than one level");
			return NULL;
		}
		if (list) {
			if (s[0] != '-' || (n > 1 && s[1] != ' ')) {
				json_object_put(o);
				(void)bad(d, l->no, "a list item without \"- \"");
				return NULL;
			}
			v = scalar(d, l, s + 1, n - 1, &f);
			if (f || json_object_array_add(o, v) != 0) {
				json_object_put(v);
				json_object_put(o);
				return NULL;
			}
			continue;
		}
		if ((colon = memchr(s, ':', n)) == NULL || colon == s ||
		    (size_t)(colon - s) >= sizeof(key) || (colon + 1 < s + n &&
		    colon[1] != ' ')) {
			json_object_put(o);
			(void)bad(d, l->no, "a line that is not \"key: value\"");
			return NULL;
		}
		memcpy(key, s, (size_t)(colon - s));
		key[colon - s] = '\0';
		v = scalar(d, l, colon + 1, n - (size_t)(colon + 1 - s), &f);
		if (f || json_object_object_add(o, key, v) != 0) {
			json_object_put(v);
			json_object_put(o);
			return NULL;
		}
	}
	*i = j - 1;
	*failed = false;
	return o;
}

struct json_object *
skill_frontmatter(const char *text, size_t len, char *err, size_t errlen)
{
	struct json_object *o, *v;
	struct doc *d;
	size_t i;
	bool f;

	if ((d = calloc(1, sizeof(*d))) == NULL) {
		(void)snprintf(err, errlen, "out of memory");
		return NULL;
	}
	d->err = err;
	d->errlen = errlen;
	if (split(d, text, len) < 0 || (o = json_object_new_object()) == NULL) {
		free(d);
		return NULL;
	}
	for (i = 0; i < d->n; i++) {
		const struct line *l = &d->l[i];
		const char *colon, *rest;
		size_t klen, rlen;
		char key[256];

		if (blank_or_comment(l))
			continue;
		colon = memchr(l->s, ':', l->len);
		if (l->indent > 0 || colon == NULL || colon == l->s ||
		    (colon + 1 < l->s + l->len && colon[1] != ' ') ||
		    (size_t)(colon - l->s) >= sizeof(key)) {
			(void)bad(d, l->no, "a line that is not \"key: value\" "
			    "at the top level");
			goto fail;
		}
		klen = (size_t)(colon - l->s);
		memcpy(key, l->s, klen);
		key[klen] = '\0';
		if (key[0] == '"' || key[0] == '\'' || key[0] == '?') {
			(void)bad(d, l->no, "a quoted or complex key");
			goto fail;
		}
		rest = colon + 1;
		rlen = l->len - klen - 1;
		while (rlen > 0 && rest[0] == ' ')
			rest++, rlen--;
		if (rlen > 0 && (rest[0] == '|' || rest[0] == '>') &&
		    (rlen == 1 || rest[1] == ' ' || rest[1] == '-')) {
			if (rlen > 1 && rest[1] == '-') {
				(void)bad(d, l->no, "a block scalar's chomping "
				    "indicator");
				goto fail;
			}
			if ((v = block(d, &i, rest[0])) == NULL)
				goto nomem;
		} else if ((rlen == 0 || rest[0] == '#') && i + 1 < d->n &&
		    d->l[i + 1].indent > 0 && !blank_or_comment(&d->l[i + 1])) {
			if ((v = nested(d, &i, &f)) == NULL)
				goto fail;
		} else {
			v = scalar(d, l, rest, rlen, &f);
			if (f)
				goto fail;
		}
		if (json_object_object_get_ex(o, key, NULL)) {
			json_object_put(v);
			(void)bad(d, l->no, "a key given twice");
			goto fail;
		}
		if (json_object_object_add(o, key, v) != 0) {
			json_object_put(v);
			goto nomem;
		}
	}
	free(d);
	return o;
 nomem:
	(void)snprintf(err, errlen, "out of memory");
 fail:
	json_object_put(o);
	free(d);
	return NULL;
}
