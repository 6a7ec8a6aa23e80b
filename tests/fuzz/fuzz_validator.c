/*
 * libFuzzer harness: the JSON Schema validator. An input is a schema and
 * an instance separated by the first NUL byte: the schema is compiled and,
 * if it compiles, the instance validated against it. The instance (the
 * whole input when there is no NUL) is also validated against every
 * schema the server ships, compiled once, as a client's arguments are.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "schema_files.h"
#include "validator.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* JSON nesting the harness parses: deeper than the validator's own bounds,
 * so that they, not the parser, are what is exercised. */
#define FUZZ_JSON_DEPTH	(2 * SCHEMA_MAX_SCHEMA_DEPTH)

static struct schema *shipped[64];
static struct json_object *shipped_doc[64];
static size_t n_shipped;

static struct json_object *
parse(const char *buf, size_t len)
{
	struct json_tokener *tok;
	struct json_object *obj;

	if (len > (size_t)INT32_MAX ||
	    (tok = json_tokener_new_ex(FUZZ_JSON_DEPTH)) == NULL)
		return NULL;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT |
	    JSON_TOKENER_VALIDATE_UTF8);
	obj = json_tokener_parse_ex(tok, buf, (int)len);
	if (obj == NULL && json_tokener_get_error(tok) == json_tokener_continue)
		obj = json_tokener_parse_ex(tok, "", 1);
	json_tokener_free(tok);
	return obj;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[SCHEMA_ERR_MESSAGE_MAX];
	size_t i;

	for (i = 0; i < schema_files_count; i++) {
		if (n_shipped == sizeof(shipped) / sizeof(shipped[0]))
			abort();
		shipped_doc[n_shipped] = parse(schema_files[i].text,
		    schema_files[i].len);
		if (shipped_doc[n_shipped] == NULL ||
		    schema_compile(shipped_doc[n_shipped], &shipped[n_shipped],
		    err, sizeof(err)) != MCP_OK) {
			fprintf(stderr, "fuzz_validator: %s: %s\n",
			    schema_files[i].name, err);
			abort();
		}
		n_shipped++;
	}
	return 0;
}

static void
check_error(enum mcp_err st, const struct schema_error *e)
{
	/* every refusal says where, which rule and why, NUL-terminated */
	if (st == MCP_OK)
		return;
	if (memchr(e->path, '\0', sizeof(e->path)) == NULL ||
	    memchr(e->keyword, '\0', sizeof(e->keyword)) == NULL ||
	    memchr(e->message, '\0', sizeof(e->message)) == NULL)
		abort();
	if (st == MCP_ERR_INVALID_PARAMS && e->message[0] == '\0')
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data, *nul;
	struct json_object *sdoc = NULL, *inst;
	struct schema *s = NULL;
	struct schema_error e;
	char err[SCHEMA_ERR_MESSAGE_MAX];
	size_t i;

	if ((nul = memchr(buf, '\0', size)) != NULL) {
		sdoc = parse(buf, (size_t)(nul - buf));
		buf = nul + 1;
		size -= (size_t)(nul - (const char *)data) + 1;
	}
	inst = parse(buf, size);
	if (sdoc != NULL && schema_compile(sdoc, &s, err, sizeof(err)) ==
	    MCP_OK && inst != NULL) {
		memset(&e, 0, sizeof(e));
		check_error(schema_validate(s, inst, &e), &e);
		/* the same answer the second time: compiled schemas are
		 * immutable */
		(void)schema_validate(s, inst, NULL);
	}
	schema_free(s);
	if (inst != NULL)
		for (i = 0; i < n_shipped; i++) {
			memset(&e, 0, sizeof(e));
			check_error(schema_validate(shipped[i], inst, &e), &e);
		}
	json_object_put(sdoc);
	json_object_put(inst);
	return 0;
}
