/*
 * Reading validated tool arguments. Every key read here is declared in the
 * tool's input schema; the schema already checked types and bounds, so a
 * missing optional key yields the default and nothing else can happen.
 */
#ifndef TOOLARGS_H
#define TOOLARGS_H

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

/* Borrowed string of args[key], or def. */
static inline const char *
toolargs_str(const struct json_object *args, const char *key, const char *def)
{
	struct json_object *v;	/* borrowed */

	if (!json_object_object_get_ex(args, key, &v))
		return def;
	return json_object_get_string(v);
}

static inline int64_t
toolargs_int(const struct json_object *args, const char *key, int64_t def)
{
	struct json_object *v;	/* borrowed */

	if (!json_object_object_get_ex(args, key, &v))
		return def;
	return json_object_get_int64(v);
}

static inline bool
toolargs_bool(const struct json_object *args, const char *key, bool def)
{
	struct json_object *v;	/* borrowed */

	if (!json_object_object_get_ex(args, key, &v))
		return def;
	return json_object_get_boolean(v);
}

/* Borrowed args[key] (any type), or NULL. */
static inline struct json_object *
toolargs_get(const struct json_object *args, const char *key)
{
	struct json_object *v;	/* borrowed */

	if (!json_object_object_get_ex(args, key, &v))
		return NULL;
	return v;
}

#endif
