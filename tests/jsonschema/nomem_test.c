/*
 * Exit paths under allocation failure: the validator's own malloc/calloc/
 * realloc calls (wrapped with ld --wrap; json-c and PCRE2 are shared
 * libraries and keep theirs) fail at the Nth call, for every N until a run
 * needs fewer. Each run must end in MCP_OK or MCP_ERR_NOMEM, never crash,
 * and leak nothing (run under -DMCP_SANITIZE=ON for LeakSanitizer).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "validator.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);

/* Test-only state: this program is single-threaded. */
static long fail_at = -1, calls;

static int
should_fail(void)
{
	return fail_at > 0 && ++calls == fail_at;
}

void *
__wrap_malloc(size_t n)
{
	return should_fail() ? NULL : __real_malloc(n);
}

void *
__wrap_calloc(size_t n, size_t size)
{
	return should_fail() ? NULL : __real_calloc(n, size);
}

void *
__wrap_realloc(void *p, size_t n)
{
	return should_fail() ? NULL : __real_realloc(p, n);
}

static const char schema_text[] =
    "{\"$defs\":{\"n\":{\"$anchor\":\"num\",\"type\":\"number\",\"multipleOf\":0.5},"
    "\"s\":{\"type\":\"string\",\"pattern\":\"^[a-z]+\\\\d*$\",\"maxLength\":8}},"
    "\"type\":\"object\",\"properties\":{\"a\":{\"$ref\":\"#num\"},\"b\":{\"$ref\":\"#/$defs/s\"},"
    "\"c\":{\"enum\":[\"x\",\"y\",1]}},\"patternProperties\":{\"^p\":{\"$ref\":\"#/$defs/s\"}},"
    "\"propertyNames\":{\"maxLength\":8},\"anyOf\":[{\"required\":[\"a\"]},{\"required\":[\"b\"]}],"
    "\"unevaluatedProperties\":{\"type\":\"integer\"}}";

int
main(void)
{
	struct json_object *doc, *inst;
	struct schema_error e;
	struct schema *s;
	char err[256], key[16];
	enum mcp_err st;
	long n;
	int i;

	doc = json_tokener_parse(schema_text);
	inst = json_object_new_object();
	if (doc == NULL || inst == NULL)
		return 2;
	json_object_object_add(inst, "a", json_object_new_double(1.5));
	json_object_object_add(inst, "b", json_object_new_string("abc1"));
	json_object_object_add(inst, "p1", json_object_new_string("x"));
	for (i = 0; i < 300; i++) {	/* past the inline member set */
		snprintf(key, sizeof(key), "u%d", i);
		json_object_object_add(inst, key, json_object_new_int(i));
	}
	for (n = 1;; n++) {
		fail_at = n;
		calls = 0;
		s = NULL;
		st = schema_compile(doc, &s, err, sizeof(err));
		if (st == MCP_OK)
			st = schema_validate(s, inst, &e);
		schema_free(s);
		if (st != MCP_OK && st != MCP_ERR_NOMEM) {
			printf("allocation %ld failing: status %d (%s / %s)\n", n, (int)st, err,
			    e.message);
			return 1;
		}
		if (calls < fail_at) {
			if (st != MCP_OK) {
				printf("no allocation failed, but status %d\n", (int)st);
				return 1;
			}
			break;
		}
	}
	printf("validator allocation failures: %ld exit paths tried, all clean\n", n - 1);
	fail_at = -1;
	json_object_put(inst);
	json_object_put(doc);
	return 0;
}
