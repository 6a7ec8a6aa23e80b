/* Builders for CallToolResult objects; every tool returns through these. */
#include <stdarg.h>
#include <stdio.h>

#include "tool.h"
#include "utf8.h"

static struct json_object *
result_new(struct json_object *structured, const char *text, bool is_error)
{
	struct json_object *res, *content, *block;

	res = json_object_new_object();
	content = json_object_new_array_ext(1);
	block = json_object_new_object();
	if (res == NULL || content == NULL || block == NULL)
		goto fail;
	if (tool_json_add(block, "type", json_object_new_string("text")) != 0 ||
	    tool_json_add(block, "text", json_object_new_string(text)) != 0)
		goto fail;
	if (json_object_array_add(content, block) != 0)
		goto fail;
	block = NULL;		/* owned by content */
	if (json_object_object_add(res, "content", content) != 0)
		goto fail;
	content = NULL;		/* owned by res */
	if (structured != NULL) {
		/* json-c leaves val to the caller when the add fails */
		if (json_object_object_add(res, "structuredContent",
		    structured) != 0)
			goto fail;
		structured = NULL;
	}
	if (is_error && tool_json_add(res, "isError",
	    json_object_new_boolean(1)) != 0)
		goto fail;
	return res;
 fail:
	json_object_put(block);
	json_object_put(content);
	json_object_put(res);
	json_object_put(structured);
	return NULL;
}

int
tool_json_add(struct json_object *o, const char *key, struct json_object *val)
{
	if (o == NULL || val == NULL || json_object_object_add(o, key,
	    val) != 0) {
		json_object_put(val);
		return -1;
	}
	return 0;
}

struct json_object *
tool_result_ok(struct json_object *structured, const char *text)
{
	return result_new(structured, text, false);
}

struct json_object *
tool_result_error_structured(struct json_object *structured, const char *text)
{
	return result_new(structured, text, true);
}

struct json_object *
tool_result_error(const char *fmt, ...)
{
	char msg[1024];	/* a tool error is one or two sentences */
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	utf8_trim(msg);
	return result_new(NULL, msg, true);
}
