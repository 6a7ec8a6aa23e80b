/*
 * JSON Schema draft 2020-12 validator over json-c, for tool arguments.
 * A schema is compiled once into an immutable tree; any keyword outside the
 * supported subset fails the compile (never passes silently), and no $ref is
 * ever fetched from outside the document. Validation trusts nothing in the
 * instance: its depth and the work it causes are bounded by the limits below.
 */
#ifndef VALIDATOR_H
#define VALIDATOR_H

#include <stddef.h>

#include <json-c/json.h>

#include "mcp_err.h"

/* Room for a JSON pointer to the failing instance location; longer ones are cut. */
#define SCHEMA_ERR_PATH_MAX 256
/* Longest given value an enum failure quotes back (serialised JSON); a
 * longer one is called "value", so messages stay short. */
#define SCHEMA_ENUM_ECHO_MAX	80
/* Longest keyword name we report ("additionalProperties" is 20). */
#define SCHEMA_ERR_KEYWORD_MAX 32
/* One sentence for a model, naming argument, rule and limit. */
#define SCHEMA_ERR_MESSAGE_MAX 512

/* Subschema nesting at compile time, counted through $ref: tool schemas are <10 deep. */
#define SCHEMA_MAX_SCHEMA_DEPTH 64
/* Instance nesting the validator descends into: tool arguments are a few levels deep. */
#define SCHEMA_MAX_INSTANCE_DEPTH 64
/* Nested subschema applications per validate call: bounds $ref recursion and stack use. */
#define SCHEMA_MAX_EVAL_DEPTH 512
/* Keyword evaluations (and equality steps) per validate call: ~10 ms, far above honest input. */
#define SCHEMA_MAX_WORK 1000000
/* Compiled subschemas per schema: bounds compile time and memory of one schema. */
#define SCHEMA_MAX_NODES 20000
/* PCRE2 backtracking steps per pattern match: stops catastrophic backtracking. */
#define SCHEMA_PCRE2_MATCH_LIMIT 100000
/* PCRE2 backtracking depth per match: bounds nested group recursion. */
#define SCHEMA_PCRE2_DEPTH_LIMIT 1000
/* PCRE2 heap per match, in KiB: a pattern match must not eat the server's memory. */
#define SCHEMA_PCRE2_HEAP_LIMIT_KIB 4096
/* Pattern items tried (PCRE2 auto-callouts) per validate call, over all matches:
 * the match limit bounds one match, this bounds many near-limit ones (~30 ms). */
#define SCHEMA_MAX_REGEX_STEPS 1000000

struct schema;	/* compiled, immutable, thread-safe to use concurrently once built */

/*
 * doc borrowed (the schema takes its own reference if it keeps it; it does:
 * the doc must not be modified while the schema lives). On failure err says
 * where (JSON pointer into the schema) and why, e.g.
 * "unsupported keyword \"$dynamicRef\" at /properties/x".
 * MCP_OK, MCP_ERR_SCHEMA (the schema is not supported or not valid),
 * MCP_ERR_NOMEM.
 */
enum mcp_err schema_compile(const struct json_object *doc, struct schema **ret,
    char *err, size_t errlen) __attribute__((warn_unused_result));
void schema_free(struct schema *s);	/* NULL ok */

struct schema_error {
	char path[SCHEMA_ERR_PATH_MAX];	/* JSON pointer of the failing instance location, "" = root */
	char keyword[SCHEMA_ERR_KEYWORD_MAX];	/* the rule that failed, e.g. "maxLength" */
	char message[SCHEMA_ERR_MESSAGE_MAX];	/* for a model: names the argument, the rule and the limit,
	   e.g. "argument \"expression\": string is 5000 characters long, longer than maxLength 4096" */
};

/*
 * MCP_OK: valid. MCP_ERR_INVALID_PARAMS: invalid, *err filled.
 * MCP_ERR_TOO_DEEP / MCP_ERR_TOO_LARGE: the instance or the work exceeded a
 * named bound (err filled too). MCP_ERR_NOMEM, MCP_ERR_INTERNAL (a regex
 * engine error). err may be NULL.
 * instance borrowed, only read.
 */
enum mcp_err schema_validate(const struct schema *s,
    const struct json_object *instance, struct schema_error *err)
    __attribute__((warn_unused_result));

#endif
