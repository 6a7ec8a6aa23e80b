/*
 * Build-time check: every embedded schema file (schemas/ *.json) must parse as strict JSON
 * (no trailing bytes) and compile with our validator, or the build stops
 * with a message naming the file. Reads only the embedded table; writes only
 * to stderr (it is a build step, not a transport).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "schema_files.h"
#include "validator.h"

/* JSON nesting accepted in a schema file: twice the validator's schema depth. */
#define SCHEMA_CHECK_JSON_DEPTH (2 * SCHEMA_MAX_SCHEMA_DEPTH)

static int
check_one(const struct schema_file *f)
{
	char err[SCHEMA_ERR_MESSAGE_MAX];
	struct json_tokener *tok;
	struct json_object *doc = NULL;	/* owned */
	struct schema *s = NULL;
	enum json_tokener_error jerr;
	size_t end;
	int rc = -1;

	if ((tok = json_tokener_new_ex(SCHEMA_CHECK_JSON_DEPTH)) == NULL) {
		fprintf(stderr, "schema-check: %s: out of memory\n", f->name);
		return -1;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	doc = json_tokener_parse_ex(tok, f->text, (int)f->len);
	jerr = json_tokener_get_error(tok);
	if (doc == NULL || jerr != json_tokener_success) {
		fprintf(stderr, "schema-check: %s: not valid JSON at offset %zu: %s\n", f->name,
		    json_tokener_get_parse_end(tok),
		    jerr == json_tokener_continue ? "unexpected end of input" :
		    json_tokener_error_desc(jerr));
		goto out;
	}
	for (end = json_tokener_get_parse_end(tok); end < f->len; end++) {
		if (strchr(" \t\r\n", f->text[end]) == NULL) {
			fprintf(stderr, "schema-check: %s: trailing bytes after the JSON value "
			    "at offset %zu\n", f->name, end);
			goto out;
		}
	}
	if (schema_compile(doc, &s, err, sizeof(err)) != MCP_OK) {
		fprintf(stderr, "schema-check: %s: %s\n", f->name, err);
		goto out;
	}
	rc = 0;
 out:
	schema_free(s);
	if (doc != NULL)
		json_object_put(doc);
	json_tokener_free(tok);
	return rc;
}

int
main(void)
{
	size_t i, bad = 0;

	for (i = 0; i < schema_files_count; i++)
		if (check_one(&schema_files[i]) < 0)
			bad++;
	if (bad > 0) {
		fprintf(stderr, "schema-check: %zu of %zu schema files failed\n", bad,
		    schema_files_count);
		return EXIT_FAILURE;
	}
	return EXIT_SUCCESS;
}
