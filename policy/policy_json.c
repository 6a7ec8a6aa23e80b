/*
 * What RFC 8259 refuses and json-c accepts even with JSON_TOKENER_STRICT
 * (json-c 0.16): comments, single-quoted strings, NaN and Infinity, a
 * number ending in '.', raw control characters inside strings. A policy
 * file is JSON, so these are refused with the place they are at; the
 * structure (trailing commas, missing separators) is json-c's strict
 * mode's business. One pass, no allocation.
 */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "policy_internal.h"

static bool
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool
is_word(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    is_digit(c) || c == '_';
}

/* A string starting at text[*i] == '"'; *i ends past its closing quote. */
static const char *
scan_string(const char *text, size_t len, size_t *i)
{
	size_t j;

	for (j = *i + 1; j < len; j++) {
		if (text[j] == '"') {
			*i = j + 1;
			return NULL;
		}
		if ((unsigned char)text[j] < 0x20) {
			*i = j;
			return "a control character (a tab, a line break) "
			    "inside a string must be written as an escape "
			    "such as \\t or \\n";
		}
		if (text[j] == '\\')
			j++;
	}
	*i = j;
	return NULL;	/* unterminated: json-c says so */
}

/* A number starting at text[*i]; *i ends past it. */
static const char *
scan_number(const char *text, size_t len, size_t *i)
{
	size_t j = *i;

	if (text[j] == '-')
		j++;
	while (j < len && (is_digit(text[j]) || text[j] == '.' ||
	    text[j] == 'e' || text[j] == 'E' || text[j] == '+' ||
	    text[j] == '-')) {
		if (text[j] == '.' && (j + 1 == len || !is_digit(text[j + 1]))) {
			*i = j;
			return "a number needs a digit after its '.'";
		}
		j++;
	}
	if (j < len && is_word(text[j])) {
		*i = j;
		return "NaN and Infinity are not JSON numbers";
	}
	*i = j;
	return NULL;
}

const char *
policy_json_not_rfc8259(const char *text, size_t len, size_t *where)
{
	const char *why = NULL;
	size_t i = 0, w;

	while (i < len && why == NULL) {
		char c = text[i];

		if (c == '"') {
			why = scan_string(text, len, &i);
		} else if (c == '-' || is_digit(c)) {
			why = scan_number(text, len, &i);
		} else if (c == '/') {
			why = "comments are not JSON";
		} else if (c == '\'') {
			why = "strings are written in double quotes in JSON";
		} else if (is_word(c)) {
			for (w = i; w < len && is_word(text[w]); w++)
				;
			if ((w - i == 4 && (memcmp(text + i, "true", 4) == 0 ||
			    memcmp(text + i, "null", 4) == 0)) ||
			    (w - i == 5 && memcmp(text + i, "false", 5) == 0))
				i = w;
			else
				why = "only true, false and null are bare words "
				    "in JSON (NaN and Infinity are not numbers "
				    "there)";
		} else
			i++;
	}
	*where = i;
	return why;
}

const char *
policy_json_explain(const char *text, size_t end)
{
	size_t i = end;

	if (text[end] != '}' && text[end] != ']')
		return NULL;
	while (i > 0 && strchr(" \t\r\n", text[i - 1]) != NULL)
		i--;
	if (i > 0 && text[i - 1] == ',')
		return text[end] == '}' ? "a comma before '}' is not JSON "
		    "(trailing comma)" : "a comma before ']' is not JSON "
		    "(trailing comma)";
	return NULL;
}
