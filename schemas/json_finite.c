/* The NaN/Infinity check for trees from outside (json_finite.h). */
#include <math.h>
#include <stddef.h>

#include "json_finite.h"

bool
json_all_finite(struct json_object *o)
{
	size_t i, n;

	switch (json_object_get_type(o)) {
	case json_type_double:
		return isfinite(json_object_get_double(o));
	case json_type_array:
		n = json_object_array_length(o);
		for (i = 0; i < n; i++)
			if (!json_all_finite(json_object_array_get_idx(o, i)))
				return false;
		return true;
	case json_type_object: {
		json_object_object_foreach(o, k, v) {
			(void)k;
			if (!json_all_finite(v))
				return false;
		}
		return true;
	}
	case json_type_null:
	case json_type_boolean:
	case json_type_int:
	case json_type_string:
	default:
		return true;
	}
}
