/*
 * JSON has no NaN or Infinity, but json-c 0.16 parses them (and 1e999 as
 * infinity) even in strict mode, and would write them back bare. Every
 * tree that comes from outside (a request, a script's stdout) is checked
 * with this before use.
 */
#ifndef JSON_FINITE_H
#define JSON_FINITE_H

#include <stdbool.h>

#include <json-c/json.h>

/* true if no number in o is NaN or infinite. o borrowed. The recursion is
 * bounded by the depth the tokener that built o enforced. */
bool json_all_finite(struct json_object *o);

#endif
