/*
 * Stand-in schema tables for testing schemas/schema_check.c: linked before
 * mcp_schemas, they replace the embedded table. CHECK_TABLE selects one:
 * 0 empty, 1 all good (input and output schemas), 2 broken files.
 */
#include "schema_files.h"

#if CHECK_TABLE == 0
const struct schema_file schema_files[] = { { "unused", "", 0 } };
const size_t schema_files_count = 0;
#elif CHECK_TABLE == 1
#define GOOD_IN "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"}}}\n"
#define GOOD_OUT "{\"type\":\"object\",\"properties\":{\"result\":{\"type\":\"string\"}}," \
	"\"required\":[\"result\"]}"
const struct schema_file schema_files[] = {
	{ "a.input.json", GOOD_IN, sizeof(GOOD_IN) - 1 },
	{ "a.output.json", GOOD_OUT, sizeof(GOOD_OUT) - 1 },
};
const size_t schema_files_count = 2;
#else
#define GOOD "{\"type\":\"object\"}"
#define TRAILING "{\"type\":\"object\"} {}"
#define UNKNOWN "{\"properties\":{\"x\":{\"maxLenght\":3}}}"
#define TRUNCATED "{\"type\":"
#define TRAILING_COMMA "{\"type\":\"object\",}"
const struct schema_file schema_files[] = {
	{ "good.input.json", GOOD, sizeof(GOOD) - 1 },
	{ "trailing.input.json", TRAILING, sizeof(TRAILING) - 1 },
	{ "unknown.input.json", UNKNOWN, sizeof(UNKNOWN) - 1 },
	{ "truncated.input.json", TRUNCATED, sizeof(TRUNCATED) - 1 },
	{ "comma.input.json", TRAILING_COMMA, sizeof(TRAILING_COMMA) - 1 },
};
const size_t schema_files_count = 5;
#endif
