/*
 * Unit tests of schemas/validator: exact messages for a model, the named
 * bounds (work, depth, regex), compile refusals (unknown keyword, external
 * $ref), and the number and equality semantics of 2020-12.
 * Exposes validator_suite() for a unit runner.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <json-c/json.h>

#include <sys/mman.h>
#include <unistd.h>

#include "validator.h"
#include "validator_impl.h"

Suite *validator_suite(void);

/* Nesting our test documents may reach (deeper than every validator bound). */
#define TEST_JSON_DEPTH 1024

static struct json_object *
parse(const char *text)
{
	struct json_tokener *tok = json_tokener_new_ex(TEST_JSON_DEPTH);
	struct json_object *j;

	ck_assert_ptr_nonnull(tok);
	j = json_tokener_parse_ex(tok, text, (int)strlen(text) + 1);	/* NUL ends a bare number */
	ck_assert_msg(json_tokener_get_error(tok) == json_tokener_success, "bad test JSON: %s",
	    text);
	json_tokener_free(tok);
	return j;
}

static struct schema *
compile_ok(const char *text)
{
	struct json_object *doc = parse(text);
	struct schema *s = NULL;
	char err[512];

	ck_assert_msg(schema_compile(doc, &s, err, sizeof(err)) == MCP_OK, "%s: %s", text, err);
	json_object_put(doc);	/* the schema keeps its own reference */
	return s;
}

static void
compile_fails(const char *text, const char *want)
{
	struct json_object *doc = parse(text);
	struct schema *s = NULL;
	char err[512];

	ck_assert_int_eq(schema_compile(doc, &s, err, sizeof(err)), MCP_ERR_SCHEMA);
	ck_assert_ptr_null(s);
	ck_assert_str_eq(err, want);
	json_object_put(doc);
}

static enum mcp_err
check(const char *schema, const char *instance, struct schema_error *e)
{
	struct schema *s = compile_ok(schema);
	struct json_object *inst = parse(instance);
	enum mcp_err st;

	st = schema_validate(s, inst, e);
	json_object_put(inst);
	schema_free(s);
	return st;
}

static void
valid(const char *schema, const char *instance)
{
	struct schema_error e;

	ck_assert_msg(check(schema, instance, &e) == MCP_OK, "%s / %s: %s", schema, instance,
	    e.message);
}

static void
invalid(const char *schema, const char *instance, const char *path, const char *kw,
    const char *msg)
{
	struct schema_error e;

	ck_assert_int_eq(check(schema, instance, &e), MCP_ERR_INVALID_PARAMS);
	ck_assert_str_eq(e.path, path);
	ck_assert_str_eq(e.keyword, kw);
	ck_assert_str_eq(e.message, msg);
}

#define EXPR_SCHEMA "{\"type\":\"object\",\"properties\":{\"expression\":" \
	"{\"type\":\"string\",\"maxLength\":4096}},\"required\":[\"expression\"]," \
	"\"additionalProperties\":false}"

START_TEST(max_length_message_names_argument_length_and_limit)
{
	char *inst = malloc(5100);

	ck_assert_ptr_nonnull(inst);
	strcpy(inst, "{\"expression\":\"");
	memset(inst + 15, 'x', 5000);
	strcpy(inst + 5015, "\"}");
	invalid(EXPR_SCHEMA, inst, "/expression", "maxLength",
	    "argument \"expression\": string is 5000 characters long, longer than maxLength 4096");
	free(inst);
}
END_TEST

START_TEST(length_counts_code_points_not_bytes)
{
	/* 3 code points, 6 and 12 bytes. */
	valid("{\"maxLength\":3}", "\"\\u00e9\\u00e9\\u00e9\"");
	valid("{\"maxLength\":3,\"minLength\":3}", "\"\\ud83d\\ude00\\ud83d\\ude00\\ud83d\\ude00\"");
	invalid("{\"minLength\":4}", "\"\\u00e9\\u00e9\\u00e9\"", "", "minLength",
	    "arguments: string is 3 characters long, shorter than minLength 4");
}
END_TEST

START_TEST(required_message_names_missing_property)
{
	invalid(EXPR_SCHEMA, "{}", "", "required",
	    "arguments: missing required property \"expression\"");
}
END_TEST

START_TEST(additional_property_message_lists_allowed)
{
	invalid(EXPR_SCHEMA, "{\"expression\":\"1\",\"exprssion\":\"2\"}", "",
	    "additionalProperties",
	    "arguments: unexpected property \"exprssion\" (allowed: \"expression\")");
}
END_TEST

START_TEST(type_message_names_expected_and_actual)
{
	invalid("{\"properties\":{\"n\":{\"type\":\"integer\"}}}", "{\"n\":\"5\"}", "/n", "type",
	    "argument \"n\": expected integer, got string");
	invalid("{\"properties\":{\"n\":{\"type\":[\"string\",\"null\",\"array\"]}}}",
	    "{\"n\":true}", "/n", "type",
	    "argument \"n\": expected null, array or string, got boolean");
	invalid("{\"type\":\"integer\"}", "1.5", "", "type", "arguments: expected integer, got number");
}
END_TEST

START_TEST(integer_type_accepts_integral_numbers)
{
	valid("{\"type\":\"integer\"}", "1.0");
	valid("{\"type\":\"integer\"}", "1e308");
	valid("{\"type\":\"integer\"}", "-9223372036854775808");
	valid("{\"type\":\"integer\"}", "18446744073709551615");
}
END_TEST

START_TEST(enum_message_lists_allowed_values)
{
	invalid("{\"properties\":{\"mode\":{\"enum\":[\"fast\",\"slow\",1,null]}}}",
	    "{\"mode\":\"quick\"}", "/mode", "enum",
	    "argument \"mode\": \"quick\" is not one of the allowed values: \"fast\", \"slow\", 1, null");
}
END_TEST

START_TEST(const_message_names_value)
{
	invalid("{\"const\":\"v1\"}", "\"v2\"", "", "const", "arguments: value must be \"v1\"");
}
END_TEST

START_TEST(pattern_message_names_pattern)
{
	invalid("{\"properties\":{\"name\":{\"pattern\":\"^[a-z]+$\"}}}", "{\"name\":\"Abc\"}",
	    "/name", "pattern", "argument \"name\": string does not match pattern \"^[a-z]+$\"");
}
END_TEST

START_TEST(numeric_bound_messages)
{
	invalid("{\"properties\":{\"n\":{\"minimum\":5}}}", "{\"n\":3}", "/n", "minimum",
	    "argument \"n\": 3 is less than minimum 5");
	invalid("{\"properties\":{\"n\":{\"maximum\":2}}}", "{\"n\":2.5}", "/n", "maximum",
	    "argument \"n\": 2.5 is greater than maximum 2");
	invalid("{\"exclusiveMinimum\":0}", "0", "", "exclusiveMinimum",
	    "arguments: 0 is not greater than exclusiveMinimum 0");
	invalid("{\"exclusiveMaximum\":1.5}", "1.5", "", "exclusiveMaximum",
	    "arguments: 1.5 is not less than exclusiveMaximum 1.5");
	valid("{\"minimum\":1.5,\"maximum\":2}", "2");
}
END_TEST

START_TEST(multiple_of_is_exact_for_decimals)
{
	valid("{\"multipleOf\":0.0001}", "0.0075");
	valid("{\"multipleOf\":0.01}", "19.99");
	valid("{\"multipleOf\":0.5}", "1e308");
	valid("{\"multipleOf\":3}", "-9");
	valid("{\"multipleOf\":3}", "6.0");
	/* Decimal meaning of the text, not the binary double 1000000000000019884624838656. */
	invalid("{\"multipleOf\":7}", "1e30", "", "multipleOf",
	    "arguments: 1e+30 is not a multiple of 7");
	invalid("{\"multipleOf\":0.0001}", "0.00751", "", "multipleOf",
	    "arguments: 0.00751 is not a multiple of 0.0001");
	invalid("{\"multipleOf\":2}", "7", "", "multipleOf", "arguments: 7 is not a multiple of 2");
}
END_TEST

START_TEST(big_integers_compare_exactly)
{
	valid("{\"maximum\":18446744073709551615}", "18446744073709551615");
	invalid("{\"minimum\":9223372036854775808}", "9223372036854775807", "", "minimum",
	    "arguments: 9223372036854775807 is less than minimum 9223372036854775808");
	invalid("{\"maximum\":9007199254740992}", "9007199254740993", "", "maximum",
	    "arguments: 9007199254740993 is greater than maximum 9007199254740992");
}
END_TEST

START_TEST(equality_is_json_equality)
{
	valid("{\"enum\":[1]}", "1.0");
	valid("{\"const\":{\"a\":1,\"b\":[1,2]}}", "{\"b\":[1.0,2],\"a\":1}");
	invalid("{\"const\":false}", "0", "", "const", "arguments: value must be false");
	invalid("{\"uniqueItems\":true}", "[1,{\"a\":[2]},{\"a\":[2.0]}]", "", "uniqueItems",
	    "arguments: array items 1 and 2 are equal, but uniqueItems is true");
	valid("{\"uniqueItems\":true}", "[1,true,\"1\",[1],{\"a\":1}]");
}
END_TEST

START_TEST(nested_path_in_message)
{
	invalid("{\"properties\":{\"items\":{\"items\":{\"properties\":{\"name\":"
	    "{\"type\":\"string\"}}}}}}", "{\"items\":[{},{},{\"name\":5}]}", "/items/2/name",
	    "type", "argument \"items\" at /items/2/name: expected string, got integer");
	invalid("{\"properties\":{\"a/b~c\":{\"type\":\"string\"}}}", "{\"a/b~c\":1}",
	    "/a~1b~0c", "type", "argument \"a/b~c\": expected string, got integer");
	invalid("{\"additionalProperties\":{\"additionalProperties\":{\"type\":\"string\"}}}",
	    "{\"a\\n\\\"b\":{\"c\\td\":1}}", "/a\n\"b/c\td", "type",
	    "argument \"a?\\\"b\" at /a?\"b/c?d: expected string, got integer");
}
END_TEST

START_TEST(combinator_messages)
{
	invalid("{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"integer\"}]}", "true", "", "anyOf",
	    "arguments: value matches none of the 2 anyOf alternatives (alternative 0: expected "
	    "string, got boolean)");
	invalid("{\"properties\":{\"opt\":{\"oneOf\":[{\"type\":\"string\"},{\"type\":\"object\","
	    "\"properties\":{\"n\":{\"maximum\":3}}}]}}}", "{\"opt\":{\"n\":5}}", "/opt", "oneOf",
	    "argument \"opt\": value matches none of the 2 oneOf alternatives (alternative 1: at "
	    "/opt/n: 5 is greater than maximum 3)");
	invalid("{\"oneOf\":[{\"minimum\":1},{\"minimum\":2}]}", "3", "", "oneOf",
	    "arguments: value matches oneOf alternatives 0 and 1, but must match exactly one");
	invalid("{\"not\":{\"type\":\"null\"}}", "null", "", "not",
	    "arguments: value must not match the \"not\" schema");
	invalid("{\"if\":{\"required\":[\"a\"]},\"then\":{\"required\":[\"b\"]}}", "{\"a\":1}", "",
	    "required", "arguments: missing required property \"b\"");
}
END_TEST

START_TEST(object_keyword_messages)
{
	invalid("{\"dependentRequired\":{\"user\":[\"password\"]}}", "{\"user\":\"x\"}", "",
	    "dependentRequired", "arguments: property \"user\" requires property \"password\"");
	invalid("{\"propertyNames\":{\"maxLength\":3}}", "{\"abcd\":1}", "", "propertyNames",
	    "arguments: property name \"abcd\" is not allowed: string is 4 characters long, "
	    "longer than maxLength 3");
	invalid("{\"properties\":{\"x\":false}}", "{\"x\":1}", "", "properties",
	    "arguments: property \"x\" is not allowed");
	invalid("{\"maxProperties\":1}", "{\"a\":1,\"b\":2}", "", "maxProperties",
	    "arguments: object has 2 properties, more than maxProperties 1");
}
END_TEST

START_TEST(array_keyword_messages)
{
	invalid("{\"prefixItems\":[{}],\"items\":false}", "[1,2,3]", "", "items",
	    "arguments: array has 3 items, at most 1 allowed");
	invalid("{\"maxItems\":2}", "[1,2,3]", "", "maxItems",
	    "arguments: array has 3 items, more than maxItems 2");
	invalid("{\"contains\":{\"type\":\"string\"}}", "[1,2]", "", "contains",
	    "arguments: array has no item matching \"contains\"");
	invalid("{\"contains\":{\"type\":\"string\"},\"minContains\":2}", "[\"a\",2]", "",
	    "minContains",
	    "arguments: array has 1 items matching \"contains\", fewer than minContains 2");
	invalid("{\"contains\":{\"type\":\"string\"},\"maxContains\":1}", "[\"a\",\"b\"]", "",
	    "maxContains", "arguments: array has more than maxContains 1 items matching \"contains\"");
}
END_TEST

START_TEST(work_budget_stops_quadratic_unique_items)
{
	struct schema *s = compile_ok("{\"uniqueItems\":true}");
	struct json_object *arr = json_object_new_array();
	struct schema_error e;
	int i;

	for (i = 0; i < 3000; i++)	/* ~4.5M comparisons */
		json_object_array_add(arr, json_object_new_int(i));
	ck_assert_int_eq(schema_validate(s, arr, &e), MCP_ERR_TOO_LARGE);
	ck_assert_str_eq(e.keyword, "uniqueItems");
	ck_assert_str_eq(e.message,
	    "arguments: validation work exceeded the budget of 1000000 steps");
	json_object_put(arr);
	schema_free(s);
}
END_TEST

START_TEST(work_budget_stops_nested_any_of)
{
	/* l<i> = anyOf [l<i-1>, l<i-1>], 24 levels, all failing: 2^24 evaluations unbounded. */
	char schema[8192], *p = schema;
	struct schema_error e;
	int i;

	p += sprintf(p, "{\"$defs\":{\"l0\":{\"type\":\"string\"}");
	for (i = 1; i <= 24; i++)
		p += sprintf(p, ",\"l%d\":{\"anyOf\":[{\"$ref\":\"#/$defs/l%d\"},"
		    "{\"$ref\":\"#/$defs/l%d\"}]}", i, i - 1, i - 1);
	sprintf(p, "},\"$ref\":\"#/$defs/l24\"}");
	ck_assert_int_eq(check(schema, "1", &e), MCP_ERR_TOO_LARGE);
	ck_assert_str_eq(e.keyword, "work");
	ck_assert_str_eq(e.message, "arguments: validation work exceeded the budget of 1000000 steps");
}
END_TEST

START_TEST(instance_depth_bound)
{
	char inst[512];
	struct schema_error e;
	int i;

	for (i = 0; i < 100; i++)
		inst[i] = '[';
	for (i = 0; i < 100; i++)
		inst[100 + i] = ']';
	inst[200] = '\0';
	ck_assert_int_eq(check("{\"items\":{\"$ref\":\"#\"}}", inst, &e), MCP_ERR_TOO_DEEP);
	ck_assert_str_eq(e.keyword, "depth");
	ck_assert_ptr_nonnull(strstr(e.message, ": arguments are nested deeper than 64 levels"));
	inst[60] = '\0';	/* 60 levels: fine (the text is cut, rebuild it) */
	for (i = 0; i < 60; i++)
		inst[60 + i] = ']';
	inst[120] = '\0';
	valid("{\"items\":{\"$ref\":\"#\"}}", inst);
}
END_TEST

START_TEST(ref_cycle_fails_compile)
{
	compile_fails("{\"$defs\":{\"a\":{\"$ref\":\"#/$defs/b\"},\"b\":{\"allOf\":[{\"$ref\":"
	    "\"#/$defs/a\"}]}},\"$ref\":\"#/$defs/a\"}",
	    "$ref \"#/$defs/a\" loops back to itself without descending into the value at "
	    "/$defs/b/allOf/0/$ref");
	compile_fails("{\"anyOf\":[{\"type\":\"string\"},{\"$ref\":\"#\"}]}",
	    "$ref \"#\" loops back to itself without descending into the value at /anyOf/1/$ref");
	/* Recursion through the instance is fine. */
	valid("{\"properties\":{\"next\":{\"$ref\":\"#\"}}}", "{\"next\":{\"next\":{}}}");
}
END_TEST

START_TEST(eval_depth_bound)
{
	/* l9 -> l8 -> ... -> l0 -> items -> l9: ten frames per instance level. */
	char schema[2048], inst[256], *p = schema;
	struct schema_error e;
	int i;

	p += sprintf(p, "{\"$defs\":{\"l0\":{\"items\":{\"$ref\":\"#/$defs/l9\"}}");
	for (i = 1; i < 10; i++)
		p += sprintf(p, ",\"l%d\":{\"$ref\":\"#/$defs/l%d\"}", i, i - 1);
	sprintf(p, "},\"$ref\":\"#/$defs/l9\"}");
	memset(inst, '[', 60);
	memset(inst + 60, ']', 60);
	inst[120] = '\0';
	ck_assert_int_eq(check(schema, inst, &e), MCP_ERR_TOO_DEEP);
	ck_assert_str_eq(e.keyword, "depth");
	ck_assert_ptr_nonnull(strstr(e.message,
	    ": schema evaluation nested deeper than 512 levels (recursive $ref?)"));
	inst[40] = '\0';
	memset(inst + 20, ']', 20);
	valid(schema, inst);
}
END_TEST

START_TEST(schema_depth_bound)
{
	char schema[2048] = "", *p = schema;
	struct json_object *doc;
	struct schema *s = NULL;
	char err[512];
	int i;

	for (i = 0; i < 70; i++)
		p += sprintf(p, "{\"not\":");
	p += sprintf(p, "{}");
	for (i = 0; i < 70; i++)
		p += sprintf(p, "}");
	doc = parse(schema);
	ck_assert_int_eq(schema_compile(doc, &s, err, sizeof(err)), MCP_ERR_SCHEMA);
	ck_assert_ptr_nonnull(strstr(err, "schema nested deeper than 64 levels at /not/not/"));
	json_object_put(doc);
}
END_TEST

START_TEST(regex_match_limit_is_too_large)
{
	struct schema_error e;

	ck_assert_int_eq(check("{\"pattern\":\"^(a+)+$\"}", "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!\"",
	    &e), MCP_ERR_TOO_LARGE);
	ck_assert_str_eq(e.keyword, "pattern");
	ck_assert_str_eq(e.message, "arguments: matching pattern \"^(a+)+$\" exceeded the regex "
	    "limits (100000 steps, depth 1000)");
}
END_TEST

START_TEST(regex_work_is_bounded_per_call)
{
	/* Each match backtracks below the per-match limit and fails over to the
	 * second branch, so only the per-call budget stops the array. */
	struct schema *s = compile_ok("{\"items\":{\"anyOf\":[{\"pattern\":\"^(a|aa)+$\"},"
	    "{\"type\":\"string\"}]}}");
	struct json_object *arr = json_object_new_array();
	struct schema_error e;
	int i;

	json_object_array_add(arr, json_object_new_string("aaaaaaaaaaaaaaaaaab"));
	ck_assert_int_eq(schema_validate(s, arr, &e), MCP_OK);
	for (i = 0; i < 2000; i++)
		json_object_array_add(arr, json_object_new_string("aaaaaaaaaaaaaaaaaab"));
	ck_assert_int_eq(schema_validate(s, arr, &e), MCP_ERR_TOO_LARGE);
	ck_assert_str_eq(e.keyword, "pattern");
	ck_assert_ptr_nonnull(strstr(e.message,
	    ": regular expression work exceeded the budget of 1000000 steps"));
	json_object_put(arr);
	schema_free(s);
}
END_TEST

START_TEST(external_ref_fails_compile)
{
	compile_fails("{\"properties\":{\"x\":{\"$ref\":\"http://example.com/s.json#/a\"}}}",
	    "external $ref \"http://example.com/s.json#/a\" unsupported (no network fetch) at "
	    "/properties/x/$ref");
	compile_fails("{\"$ref\":\"other.json\"}",
	    "external $ref \"other.json\" unsupported (no network fetch) at /$ref");
	compile_fails("{\"$ref\":\"#/$defs/missing\"}",
	    "$ref \"#/$defs/missing\" points to nothing in this document at /$ref");
}
END_TEST

START_TEST(unknown_keyword_fails_compile)
{
	compile_fails("{\"properties\":{\"x\":{\"type\":\"string\",\"maxLenght\":5}}}",
	    "unsupported keyword \"maxLenght\" at /properties/x");
	compile_fails("{\"properties\":{\"x\":{\"$dynamicRef\":\"#a\"}}}",
	    "unsupported keyword \"$dynamicRef\" at /properties/x");
	compile_fails("{\"$dynamicAnchor\":\"a\"}",
	    "unsupported keyword \"$dynamicAnchor\" at the schema root");
	compile_fails("{\"contentEncoding\":\"base64\"}",
	    "unsupported keyword \"contentEncoding\" at the schema root");
	compile_fails("{\"items\":[{}]}",
	    "\"items\" must be a schema (2020-12 uses prefixItems for tuples) at /items");
	compile_fails("{\"minLength\":-1}", "\"minLength\" must be a non-negative integer at /minLength");
	compile_fails("{\"type\":\"text\"}", "unknown type \"text\" at /type");
	compile_fails("{\"properties\":{\"a\":null}}",
	    "a schema must be an object or a boolean at /properties/a");
	compile_fails("[]", "a schema must be an object or a boolean at the schema root");
	compile_fails("{\"pattern\":\"(\"}", "\"pattern\" is not a valid regular expression "
	    "(missing closing parenthesis near offset 1) at /pattern");
	compile_fails("{\"$schema\":\"http://json-schema.org/draft-07/schema#\"}",
	    "unsupported dialect \"http://json-schema.org/draft-07/schema#\" (only "
	    "https://json-schema.org/draft/2020-12/schema) at /$schema");
	compile_fails("{\"$defs\":{\"a\":{\"$id\":\"x#frag\"}}}",
	    "\"$id\" must not have a fragment at /$defs/a/$id");
	compile_fails("{\"$defs\":{\"a\":{\"$id\":\"x\"},\"b\":{\"$id\":\"./x\"}}}",
	    "\"$id\" \"x\" identifies two schemas at /$defs/b");
}
END_TEST

START_TEST(annotations_and_vendor_keywords_accepted)
{
	valid("{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"$id\":"
	    "\"https://example.com/t\",\"title\":\"t\",\"description\":\"d\",\"default\":1,"
	    "\"examples\":[1],\"$comment\":\"c\",\"deprecated\":false,\"readOnly\":true,"
	    "\"writeOnly\":false,\"format\":\"email\",\"x-vendor\":{\"any\":1}}", "\"not-an-email\"");
}
END_TEST

START_TEST(local_refs_resolve_pointers)
{
	const char *s = "{\"$id\":\"https://example.com/root\",\"$defs\":{\"a/b\":{\"type\":\"integer\"},"
	    "\"c~d\":{\"type\":\"string\"},\"e f\":{\"minimum\":10}},\"properties\":{"
	    "\"x\":{\"$ref\":\"#/$defs/a~1b\"},\"y\":{\"$ref\":\"#/$defs/c~0d\"},"
	    "\"z\":{\"$ref\":\"#/$defs/e%20f\"},\"w\":{\"$ref\":\"https://example.com/root#/$defs/a~1b\"},"
	    "\"t\":{\"properties\":{\"t\":{\"$ref\":\"#/properties/t\"}}}}}";

	valid(s, "{\"x\":1,\"y\":\"s\",\"z\":11,\"w\":2,\"t\":{\"t\":{\"t\":{}}}}");
	invalid(s, "{\"z\":9}", "/z", "minimum", "argument \"z\": 9 is less than minimum 10");
	invalid(s, "{\"w\":\"no\"}", "/w", "type", "argument \"w\": expected integer, got string");
}
END_TEST

START_TEST(anchor_refs_resolve_after_the_whole_tree)
{
	const char *s = "{\"properties\":{\"a\":{\"$ref\":\"#pos\"}},"
	    "\"$defs\":{\"p\":{\"$anchor\":\"pos\",\"minimum\":0}}}";

	valid(s, "{\"a\":1}");
	invalid(s, "{\"a\":-1}", "/a", "minimum", "argument \"a\": -1 is less than minimum 0");
	compile_fails("{\"properties\":{\"a\":{\"$ref\":\"#nope\"}}}",
	    "$ref \"#nope\" names no $anchor in this document at /properties/a/$ref");
	compile_fails("{\"$defs\":{\"a\":{\"$anchor\":\"x\"},\"b\":{\"$anchor\":\"x\"}}}",
	    "\"$anchor\" \"x\" is defined twice at /$defs/b");
	compile_fails("{\"$anchor\":\"1x\"}", "\"$anchor\" \"1x\" is not a valid anchor name "
	    "at /$anchor");
}
END_TEST

START_TEST(embedded_ids_set_the_base_for_refs)
{
	/* RFC 3986 resolution: relative $id against the parent's, $ref against its schema's. */
	const char *s = "{\"$id\":\"http://example.com/root/main.json\","
	    "\"properties\":{\"a\":{\"$ref\":\"item.json\"},\"b\":{\"$ref\":\"/other/x.json#pos\"},"
	    "\"c\":{\"$id\":\"sub/c.json\",\"$ref\":\"../item.json#/$defs/any\"}},"
	    "\"$defs\":{\"i\":{\"$id\":\"item.json\",\"type\":\"integer\",\"$defs\":{\"any\":true}},"
	    "\"o\":{\"$id\":\"../other/x.json\",\"$defs\":{\"p\":{\"$anchor\":\"pos\","
	    "\"exclusiveMinimum\":0}}}}}";

	valid(s, "{\"a\":1,\"b\":2,\"c\":\"anything\"}");
	invalid(s, "{\"a\":\"1\"}", "/a", "type", "argument \"a\": expected integer, got string");
	invalid(s, "{\"b\":0}", "/b", "exclusiveMinimum",
	    "argument \"b\": 0 is not greater than exclusiveMinimum 0");
	compile_fails("{\"$id\":\"http://example.com/a.json\",\"$ref\":\"b.json\"}",
	    "external $ref \"b.json\" unsupported (no network fetch) at /$ref");
	/* $id in a non-schema place (enum) names nothing. */
	compile_fails("{\"enum\":[{\"$id\":\"http://x/y\"}],\"$ref\":\"http://x/y\"}",
	    "external $ref \"http://x/y\" unsupported (no network fetch) at /$ref");
}
END_TEST

START_TEST(ecma_regex_classes_are_ascii)
{
	valid("{\"pattern\":\"^\\\\w+$\"}", "\"abc_09\"");
	invalid("{\"pattern\":\"^\\\\w+$\"}", "\"\\u00e9t\\u00e9\"", "", "pattern",
	    "arguments: string does not match pattern \"^\\w+$\"");
	invalid("{\"pattern\":\"^\\\\d$\"}", "\"\\u0663\"", "", "pattern",
	    "arguments: string does not match pattern \"^\\d$\"");
	invalid("{\"pattern\":\"^abc$\"}", "\"abc\\n\"", "", "pattern",
	    "arguments: string does not match pattern \"^abc$\"");
	valid("{\"pattern\":\"^\\\\p{Letter}+$\"}", "\"\\u00e9t\\u00e9\"");
}
END_TEST

START_TEST(pcre_only_pattern_syntax_fails_compile)
{
	compile_fails("{\"pattern\":\"(?i)abc\"}", "\"pattern\" uses a (? group other than "
	    "(?: (?= (?! (?<, which ECMA-262 does not have at /pattern");
	compile_fails("{\"pattern\":\"^\\\\Aabc\\\\z\"}",
	    "\"pattern\" uses a PCRE-only escape, which ECMA-262 does not have at /pattern");
	compile_fails("{\"pattern\":\"a++\"}",
	    "\"pattern\" uses a possessive quantifier, which ECMA-262 does not have at /pattern");
	compile_fails("{\"patternProperties\":{\"[[:alpha:]]\":{}}}", "\"patternProperties\" uses "
	    "a POSIX class [:...:], which ECMA-262 does not have at /patternProperties/[[:alpha:]]");
	/* ECMA forms that look alike stay accepted. */
	valid("{\"pattern\":\"^(?:a|b)+?(?=c)c(?<n>d)\\\\k<n>\\\\p{Lu}{1,2}\\\\u{41}$\"}",
	    "\"abcddAA\"");
	valid("{\"pattern\":\"^\\\\v$\"}", "\"\\u000b\"");
	invalid("{\"pattern\":\"^\\\\v$\"}", "\"\\n\"", "", "pattern",
	    "arguments: string does not match pattern \"^\\v$\"");
}
END_TEST

/*
 * A pattern ending in a lone \p or \P: the translation must not read past
 * the pattern's NUL. The pattern sits at the very end of a page whose next
 * page is inaccessible, so a read past it faults in any build.
 */
START_TEST(lone_property_escape_at_end_reads_nothing_past_it)
{
	static const char *pats[] = { "\\p", "a\\P", "\\p{", "[\\p" };
	long pg = sysconf(_SC_PAGESIZE);
	const char *bad;
	char *mem, *at, *out;
	size_t i, n;

	for (i = 0; i < sizeof(pats) / sizeof(pats[0]); i++) {
		mem = mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ck_assert_ptr_ne(mem, MAP_FAILED);
		ck_assert_int_eq(mprotect(mem + pg, (size_t)pg, PROT_NONE), 0);
		n = strlen(pats[i]) + 1;
		at = mem + pg - n;
		memcpy(at, pats[i], n);
		out = sc_regex_translate(at, &bad);
		ck_assert_ptr_nonnull(out);
		ck_assert_str_eq(out, pats[i][0] == 'a' ? "a\\P" : pats[i]);
		free(out);
		(void)munmap(mem, 2 * (size_t)pg);
	}
	/* and the schema is refused, as PCRE2 refuses the escape */
	compile_fails("{\"pattern\":\"a\\\\p\"}", "\"pattern\" is not a valid "
	    "regular expression (malformed \\P or \\p sequence near offset 3) at /pattern");
}
END_TEST

/*
 * propertyNames over "a", a long name, then "": json-c 0.16's
 * json_object_set_string() turns a string that moved to its own buffer
 * back into an inline one when set to "", leaking the buffer and reading
 * the pointer's bytes as the name. Every name here is allowed; each must
 * be seen as itself.
 */
START_TEST(property_names_are_seen_exactly_in_any_order)
{
	const char *schema = "{\"propertyNames\":{\"enum\":[\"a\","
	    "\"a_long_name_that_does_not_fit_in_place_0123456789\",\"\"]}}";

	valid(schema, "{\"a\":1,\"a_long_name_that_does_not_fit_in_place_"
	    "0123456789\":2,\"\":3}");
	valid(schema, "{\"\":3,\"a_long_name_that_does_not_fit_in_place_"
	    "0123456789\":2,\"a\":1}");
	valid(schema, "{\"a_long_name_that_does_not_fit_in_place_0123456789"
	    "\":2,\"\":3,\"a\":1}");
	invalid(schema, "{\"a\":1,\"a_long_name_that_does_not_fit_in_place_"
	    "0123456789\":2,\"b\":3}", "", "propertyNames",
	    "arguments: property name \"b\" is not allowed: \"b\" is not one of the allowed values: "
	    "\"a\", \"a_long_name_that_does_not_fit_in_place_0123456789\", \"\"");
}
END_TEST

START_TEST(non_finite_numbers_have_no_type)
{
	invalid("{\"type\":\"number\"}", "NaN", "", "type",
	    "arguments: expected number, got a non-finite number (NaN and Infinity are not JSON)");
	invalid("{\"maximum\":1}", "-Infinity", "", "type", "arguments: number is not finite");
}
END_TEST

START_TEST(validate_without_error_struct)
{
	struct schema *s = compile_ok(EXPR_SCHEMA);
	struct json_object *bad = parse("{}"), *good = parse("{\"expression\":\"1+1\"}");

	ck_assert_int_eq(schema_validate(s, bad, NULL), MCP_ERR_INVALID_PARAMS);
	ck_assert_int_eq(schema_validate(s, good, NULL), MCP_OK);
	json_object_put(bad);
	json_object_put(good);
	schema_free(s);
	schema_free(NULL);
}
END_TEST

START_TEST(unevaluated_properties_sees_in_place_applicators)
{
	const char *s = "{\"properties\":{\"kind\":{\"enum\":[\"a\",\"b\"]}},"
	    "\"oneOf\":[{\"properties\":{\"kind\":{\"const\":\"a\"},\"x\":{}}},"
	    "{\"properties\":{\"kind\":{\"const\":\"b\"},\"y\":{}}}],"
	    "\"unevaluatedProperties\":false}";

	valid(s, "{\"kind\":\"a\",\"x\":1}");
	valid(s, "{\"kind\":\"b\",\"y\":1}");
	invalid(s, "{\"kind\":\"a\",\"y\":1}", "", "unevaluatedProperties",
	    "arguments: unexpected property \"y\"");
	invalid("{\"prefixItems\":[{}],\"unevaluatedItems\":false}", "[1,2]", "",
	    "unevaluatedItems", "arguments: array item 1 is not allowed (unevaluatedItems)");
	valid("{\"prefixItems\":[{}],\"contains\":{\"type\":\"string\"},"
	    "\"unevaluatedItems\":false}", "[1,\"s\",\"t\"]");
}
END_TEST

START_TEST(boolean_schemas)
{
	valid("true", "{\"anything\":[1]}");
	valid("{\"type\":\"null\"}", "null");
	valid("{\"prefixItems\":[{\"type\":\"null\"}],\"uniqueItems\":true}", "[null,1]");
	invalid("false", "1", "", "false", "arguments: no value is allowed here");
}
END_TEST

Suite *
validator_suite(void)
{
	Suite *s = suite_create("validator");
	TCase *msg = tcase_create("messages");
	TCase *sem = tcase_create("semantics");
	TCase *bounds = tcase_create("bounds");
	TCase *comp = tcase_create("compile");

	tcase_add_test(msg, max_length_message_names_argument_length_and_limit);
	tcase_add_test(msg, required_message_names_missing_property);
	tcase_add_test(msg, additional_property_message_lists_allowed);
	tcase_add_test(msg, type_message_names_expected_and_actual);
	tcase_add_test(msg, enum_message_lists_allowed_values);
	tcase_add_test(msg, const_message_names_value);
	tcase_add_test(msg, pattern_message_names_pattern);
	tcase_add_test(msg, numeric_bound_messages);
	tcase_add_test(msg, nested_path_in_message);
	tcase_add_test(msg, combinator_messages);
	tcase_add_test(msg, object_keyword_messages);
	tcase_add_test(msg, array_keyword_messages);
	suite_add_tcase(s, msg);

	tcase_add_test(sem, length_counts_code_points_not_bytes);
	tcase_add_test(sem, integer_type_accepts_integral_numbers);
	tcase_add_test(sem, multiple_of_is_exact_for_decimals);
	tcase_add_test(sem, big_integers_compare_exactly);
	tcase_add_test(sem, equality_is_json_equality);
	tcase_add_test(sem, local_refs_resolve_pointers);
	tcase_add_test(sem, anchor_refs_resolve_after_the_whole_tree);
	tcase_add_test(sem, embedded_ids_set_the_base_for_refs);
	tcase_add_test(sem, ecma_regex_classes_are_ascii);
	tcase_add_test(comp, pcre_only_pattern_syntax_fails_compile);
	tcase_add_test(sem, non_finite_numbers_have_no_type);
	tcase_add_test(comp, lone_property_escape_at_end_reads_nothing_past_it);
	tcase_add_test(sem, property_names_are_seen_exactly_in_any_order);
	tcase_add_test(sem, validate_without_error_struct);
	tcase_add_test(sem, boolean_schemas);
	tcase_add_test(sem, unevaluated_properties_sees_in_place_applicators);
	suite_add_tcase(s, sem);

	tcase_add_test(bounds, work_budget_stops_quadratic_unique_items);
	tcase_add_test(bounds, work_budget_stops_nested_any_of);
	tcase_add_test(bounds, instance_depth_bound);
	tcase_add_test(bounds, eval_depth_bound);
	tcase_add_test(comp, ref_cycle_fails_compile);
	tcase_add_test(bounds, schema_depth_bound);
	tcase_add_test(bounds, regex_match_limit_is_too_large);
	tcase_add_test(bounds, regex_work_is_bounded_per_call);
	suite_add_tcase(s, bounds);

	tcase_add_test(comp, external_ref_fails_compile);
	tcase_add_test(comp, unknown_keyword_fails_compile);
	tcase_add_test(comp, annotations_and_vendor_keywords_accepted);
	suite_add_tcase(s, comp);
	return s;
}
