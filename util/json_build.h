/*
 * Building json-c values with every allocation checked: each step takes
 * the value it is given (NULL when that value's own allocation failed)
 * and releases it when it cannot be added, since json-c leaves it to the
 * caller then. A builder ORs the steps' results and ends with jb_built(),
 * so one failure anywhere releases the whole object. Header only, for
 * server/ and tools/ (both link json-c).
 */
#ifndef UTIL_JSON_BUILD_H
#define UTIL_JSON_BUILD_H

#include <stddef.h>

#include <json-c/json.h>

/* Adds val (taken) to o under key; -1 if it could not. */
static inline int
jb_add(struct json_object *o, const char *key, struct json_object *val)
{
	if (o == NULL || val == NULL || json_object_object_add(o, key,
	    val) != 0) {
		json_object_put(val);
		return -1;
	}
	return 0;
}

/* Appends val (taken) to a; -1 if it could not. */
static inline int
jb_push(struct json_object *a, struct json_object *val)
{
	if (a == NULL || val == NULL || json_object_array_add(a, val) != 0) {
		json_object_put(val);
		return -1;
	}
	return 0;
}

/* o once built, or NULL (o released) when one of its steps failed. */
static inline struct json_object *
jb_built(struct json_object *o, int failed)
{
	if (failed) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

#endif /* UTIL_JSON_BUILD_H */
