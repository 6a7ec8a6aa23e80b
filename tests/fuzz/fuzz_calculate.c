/*
 * libFuzzer harness: the calculate tool's parser and evaluator, on the raw
 * expression bytes (the tool gets them after the schema's maxLength).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "calculate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct calc_value v;
	struct calc_error e;
	enum calc_status st;

	if (size > CALC_MAX_EXPR_LEN)
		return -1;
	memset(&v, 0, sizeof(v));
	memset(&e, 0, sizeof(e));
	st = calc_evaluate((const char *)data, size, &v, &e);
	if (st == CALC_OK) {
		/* a result has both forms; an error has none and a message */
		if (v.value == NULL || v.decimal == NULL)
			abort();
		calc_value_fini(&v);
	} else if (v.value != NULL || v.decimal != NULL ||
	    memchr(e.msg, '\0', sizeof(e.msg)) == NULL || e.msg[0] == '\0')
		abort();
	return 0;
}
