/*
 * ECMA-262 pattern -> PCRE2 pattern. JSON Schema patterns are ECMA-262
 * (unicode mode); PCRE2 with UTF|UCP differs in a few classes, so the ones a
 * schema author is likely to write are rewritten to their ECMA meaning:
 * \d \w \s (and \D \W \S outside brackets) as ASCII digits/word characters and
 * ECMA whitespace, \v as the VT character, '.' not matching line
 * terminators, [] and [^], and long General_Category names in \p{...}.
 * PCRE2-only syntax (inline options, \Q..\E, \A \z, possessive and atomic
 * forms, verbs, POSIX classes) is refused: a JavaScript client would read
 * the pattern differently. What stays different is listed in
 * tests/jsonschema/README.md. Pure string work on the schema's own text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "validator_impl.h"

/* ECMA WhiteSpace + LineTerminator, as class contents (PCRE2_ALT_BSUX syntax). */
#define ECMA_SPACE "\\t\\n\\x0b\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
#define ECMA_DIGIT "0-9"
#define ECMA_WORD "A-Za-z0-9_"
/* ECMA LineTerminator: what '.' does not match. */
#define ECMA_NOT_LT "[^\\n\\r\\u2028\\u2029]"

/* Long General_Category names (and ECMA aliases) PCRE2 10.42 does not know. */
static const struct {
	const char *lng;
	const char *shrt;
} gc_names[] = {
	{ "Cased_Letter", "L&" }, { "Close_Punctuation", "Pe" },
	{ "Connector_Punctuation", "Pc" }, { "Control", "Cc" }, { "Currency_Symbol", "Sc" },
	{ "Dash_Punctuation", "Pd" }, { "Decimal_Number", "Nd" }, { "Enclosing_Mark", "Me" },
	{ "Final_Punctuation", "Pf" }, { "Format", "Cf" }, { "Initial_Punctuation", "Pi" },
	{ "Letter", "L" }, { "Letter_Number", "Nl" }, { "Line_Separator", "Zl" },
	{ "Lowercase_Letter", "Ll" }, { "Mark", "M" }, { "Math_Symbol", "Sm" },
	{ "Modifier_Letter", "Lm" }, { "Modifier_Symbol", "Sk" }, { "Nonspacing_Mark", "Mn" },
	{ "Number", "N" }, { "Open_Punctuation", "Ps" }, { "Other", "C" },
	{ "Other_Letter", "Lo" }, { "Other_Number", "No" }, { "Other_Punctuation", "Po" },
	{ "Other_Symbol", "So" }, { "Paragraph_Separator", "Zp" }, { "Private_Use", "Co" },
	{ "Punctuation", "P" }, { "Separator", "Z" }, { "Space_Separator", "Zs" },
	{ "Spacing_Mark", "Mc" }, { "Surrogate", "Cs" }, { "Symbol", "S" },
	{ "Titlecase_Letter", "Lt" }, { "Unassigned", "Cn" }, { "Uppercase_Letter", "Lu" },
	{ "cntrl", "Cc" }, { "Combining_Mark", "M" }, { "digit", "Nd" }, { "punct", "P" },
};

struct out {
	char *buf;
	size_t len, cap;
};

static void
put(struct out *o, const char *s, size_t n)
{
	if (o->len + n < o->cap)
		memcpy(o->buf + o->len, s, n);
	o->len += n;
}

static void
puts_(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

/* \p{...} or \P{...} at s (s[0] == '\\'); returns bytes consumed. */
static size_t
property(struct out *o, const char *s)
{
	const char *name, *end;
	size_t n, i;

	/* s[2] first: at a lone \\p ending the pattern, s + 3 is past its NUL */
	if (s[2] != '{' || (end = strchr(s + 3, '}')) == NULL) {
		put(o, s, 2);
		return 2;
	}
	name = s + 3;
	if (strncmp(name, "General_Category=", 17) == 0)
		name += 17;
	else if (strncmp(name, "gc=", 3) == 0)
		name += 3;
	n = (size_t)(end - name);
	put(o, s, 3);
	for (i = 0; i < sizeof(gc_names) / sizeof(gc_names[0]); i++) {
		if (strlen(gc_names[i].lng) == n && strncmp(gc_names[i].lng, name, n) == 0) {
			puts_(o, gc_names[i].shrt);
			puts_(o, "}");
			return (size_t)(end - s) + 1;
		}
	}
	put(o, name, n + 1);
	return (size_t)(end - s) + 1;
}

/*
 * PCRE2 syntax ECMA-262 does not have (so the pattern would mean something
 * else, or not compile, in a JavaScript client): a description, or NULL.
 * quant: the previous character was an unescaped quantifier.
 */
static const char *
pcre_only(const char *p, bool cls, bool quant)
{
	if (p[0] == '\\' && p[1] != '\0' && strchr("AzZGKRXhHNgeaoQE", p[1]) != NULL)
		return "a PCRE-only escape";
	if (cls)
		return p[0] == '[' && p[1] == ':' ? "a POSIX class [:...:]" : NULL;
	if (p[0] == '(' && p[1] == '*')
		return "a (*VERB)";
	if (p[0] == '(' && p[1] == '?' && strchr(":=!<", p[2]) == NULL)
		return "a (? group other than (?: (?= (?! (?<";
	if (p[0] == '(' && p[1] == '?' && p[2] == '<' && p[3] != '\0' &&
	    strchr("=!", p[3]) == NULL && !((p[3] >= 'A' && p[3] <= 'Z') ||
	    (p[3] >= 'a' && p[3] <= 'z') || p[3] == '_' || p[3] == '$'))
		return "a (?< group other than lookbehind or a named group";
	if (quant && p[0] == '+')
		return "a possessive quantifier";
	return NULL;
}

/* Translates src; returns a malloc'd PCRE2 pattern, or NULL: *bad says what
 * ECMA-262 lacks, or is NULL for out of memory. */
char *
sc_regex_translate(const char *src, const char **bad)
{
	struct out o = { 0 };
	const char *p;
	bool cls, quant;
	char ch;
	int pass;

	*bad = NULL;
	for (p = src, cls = false, quant = false; *p != '\0'; p++) {
		if ((*bad = pcre_only(p, cls, quant)) != NULL)
			return NULL;
		quant = false;
		if (*p == '\\' && p[1] != '\0') {
			p++;
			if (strchr("pPu", *p) != NULL && p[1] == '{' && strchr(p, '}') != NULL)
				p = strchr(p, '}');	/* \p{..} \u{..}: braces are no quantifier */
			continue;
		}
		if (!cls && *p == '[') {
			cls = true;
			if (p[1] == '^')
				p++;
			if (p[1] == ']')	/* [] and [^] end at once in ECMA */
				cls = false, p++;
		} else if (cls && *p == ']') {
			cls = false;
		} else if (!cls && *p == '(' && p[1] == '?') {
			p++;	/* the ? of a group is no quantifier */
		} else if (!cls && strchr("*+?}", *p) != NULL) {
			quant = !(*p == '?' && p > src && strchr("*+?}", p[-1]) != NULL);
		}
	}

	/* Pass 0 measures, pass 1 writes. */
	for (pass = 0; pass < 2; pass++) {
		if (pass == 1) {
			o.cap = o.len + 1;
			o.len = 0;
			if ((o.buf = malloc(o.cap)) == NULL)
				return NULL;
		}
		cls = false;
		for (p = src; *p != '\0'; p++) {
			if (*p == '\\' && p[1] != '\0') {
				ch = p[1];
				if (ch == 'p' || ch == 'P') {
					p += property(&o, p) - 1;
					continue;
				}
				if (ch == 'v') {
					puts_(&o, "\\x0b");	/* ECMA: the VT character, not a class */
				} else if (cls && (ch == 'd' || ch == 'w' || ch == 's')) {
					puts_(&o, ch == 'd' ? ECMA_DIGIT : ch == 'w' ? ECMA_WORD : ECMA_SPACE);
				} else if (!cls && strchr("dDwWsS", ch) != NULL) {
					puts_(&o, ch >= 'a' ? "[" : "[^");
					puts_(&o, ch == 'd' || ch == 'D' ? ECMA_DIGIT :
					    ch == 'w' || ch == 'W' ? ECMA_WORD : ECMA_SPACE);
					puts_(&o, "]");
				} else {
					put(&o, p, 2);
				}
				p++;
				continue;
			}
			if (!cls && *p == '[') {
				if (strncmp(p, "[]", 2) == 0) {
					puts_(&o, "(?!)");	/* ECMA: empty class, matches nothing */
					p++;
					continue;
				}
				if (strncmp(p, "[^]", 3) == 0) {
					puts_(&o, "[\\s\\S]");	/* ECMA: any character */
					p += 2;
					continue;
				}
				cls = true;
				put(&o, p, 1);
				if (p[1] == '^')
					put(&o, ++p, 1);
				continue;
			}
			if (cls && *p == ']')
				cls = false;
			if (!cls && *p == '.') {
				puts_(&o, ECMA_NOT_LT);
				continue;
			}
			put(&o, p, 1);
		}
	}
	o.buf[o.len] = '\0';
	return o.buf;
}
