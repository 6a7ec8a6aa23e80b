/*
 * 2026-07-28 request headers (SEP-2243): MCP-Protocol-Version, Mcp-Method,
 * Mcp-Name and the Mcp-Param-<Name> mirrors of arguments whose schema
 * property carries "x-mcp-header" must be present and equal what the body
 * says; values may be wrapped as =?base64?...?=. Header names are matched
 * case-insensitively (MHD does), values exactly, after trimming the
 * optional whitespace around them (RFC 9110 5.5).
 */
#include <stdio.h>
#include <string.h>

#include <microhttpd.h>

#include "http_internal.h"

#define H_VERSION	"MCP-Protocol-Version"
#define H_METHOD	"Mcp-Method"
#define H_NAME		"Mcp-Name"

/* Longest decoded header value we compare: a tool name is at most 128
 * bytes; mirrored arguments are short by the spec's advice. */
#define HTTP_MAX_HEADER_VALUE	1024

/* A header value without the optional whitespace around it. */
struct hval {
	const char *p;
	size_t n;
};

static bool
get_value(const struct http_ctx *ctx, struct MHD_Connection *conn,
    const char *name, struct hval *v)
{
	const char *s = ctx->mhd.lookup_connection_value(conn,
	    MHD_HEADER_KIND, name);

	if (s == NULL)
		return false;
	while (*s == ' ' || *s == '\t')
		s++;
	v->p = s;
	v->n = strlen(s);
	while (v->n > 0 && (s[v->n - 1] == ' ' || s[v->n - 1] == '\t'))
		v->n--;
	return true;
}

static bool
value_is(const struct hval *v, const char *want, size_t wl)
{
	return v->n == wl && memcmp(v->p, want, wl) == 0;
}

/*
 * Decodes padded RFC 4648 base64 into out (NUL-terminated). -1 when the
 * length is not a multiple of 4, a character is outside the alphabet,
 * padding is misplaced, or the result would not fit.
 */
static int
b64_decode(const char *in, size_t n, char *out, size_t outcap,
    size_t *ret_len)
{
	uint32_t acc = 0;
	size_t i, o = 0, pad = 0;
	int bits = 0, v;
	char c;

	if (n == 0 || n % 4 != 0)
		return -1;
	for (i = 0; i < n; i++) {
		c = in[i];
		if (c == '=' && i >= n - 2) {
			pad++;
			continue;
		}
		if (pad > 0)
			return -1;	/* data after padding */
		if (c >= 'A' && c <= 'Z')
			v = c - 'A';
		else if (c >= 'a' && c <= 'z')
			v = c - 'a' + 26;
		else if (c >= '0' && c <= '9')
			v = c - '0' + 52;
		else if (c == '+')
			v = 62;
		else if (c == '/')
			v = 63;
		else
			return -1;
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (o + 1 >= outcap)
				return -1;
			out[o++] = (char)(acc >> bits & 0xff);
		}
	}
	out[o] = '\0';
	*ret_len = o;
	return 0;
}

/*
 * A header value as the client meant it: the base64 form decoded, else
 * the literal (which must be printable ASCII). Returns NULL when it is
 * neither, else a pointer to the bytes (in buf or the header) and *len.
 */
static const char *
header_bytes(const struct hval *v, char *buf, size_t cap, size_t *len)
{
	static const char pre[] = "=?base64?", post[] = "?=";
	const size_t pl = sizeof(pre) - 1, ql = sizeof(post) - 1;
	size_t i;

	if (v->n >= pl + ql && memcmp(v->p, pre, pl) == 0 &&
	    memcmp(v->p + v->n - ql, post, ql) == 0) {
		if (b64_decode(v->p + pl, v->n - pl - ql, buf, cap, len) != 0)
			return NULL;
		return buf;
	}
	for (i = 0; i < v->n; i++)
		if ((unsigned char)v->p[i] < 0x20 ||
		    (unsigned char)v->p[i] > 0x7e)
			return NULL;
	*len = v->n;
	return v->p;
}

/* The text form of an argument mirrored into a header; NULL for types
 * that cannot be mirrored. */
static const char *
arg_text(struct json_object *a, char *buf, size_t cap)
{
	switch (json_object_get_type(a)) {
	case json_type_string:
		return json_object_get_string(a);
	case json_type_int:
		(void)snprintf(buf, cap, "%lld",
		    (long long)json_object_get_int64(a));
		return buf;
	case json_type_boolean:
		return json_object_get_boolean(a) ? "true" : "false";
	default:
		return NULL;
	}
}

/* Mcp-Param-<Name> for every x-mcp-header property of the tool. */
static const char *
param_mismatch(const struct http_ctx *ctx, struct MHD_Connection *conn,
    const char *tool, struct json_object *args)
{
	struct json_object *t, *schema, *props, *hname, *arg = NULL;
	char hdr[160], buf[HTTP_MAX_HEADER_VALUE], num[32];
	const char *got, *want;
	struct hval v;
	size_t len;
	bool present;

	if ((t = dispatch_tool_listing(&ctx->srv, tool)) == NULL ||
	    !json_object_object_get_ex(t, "inputSchema", &schema) ||
	    !json_object_object_get_ex(schema, "properties", &props) ||
	    !json_object_is_type(props, json_type_object))
		return NULL;
	json_object_object_foreach(props, key, prop) {
		if (!json_object_is_type(prop, json_type_object) ||
		    !json_object_object_get_ex(prop, "x-mcp-header", &hname) ||
		    !json_object_is_type(hname, json_type_string))
			continue;
		(void)snprintf(hdr, sizeof(hdr), "Mcp-Param-%s",
		    json_object_get_string(hname));
		arg = NULL;
		if (args != NULL && json_object_is_type(args, json_type_object))
			(void)json_object_object_get_ex(args, key, &arg);
		present = get_value(ctx, conn, hdr, &v);
		if (arg == NULL && !present)
			continue;
		if (arg == NULL)
			return "Header mismatch: an Mcp-Param header names an "
			    "argument the body does not have";
		if (!present)
			return "Header mismatch: an Mcp-Param header is "
			    "required for an argument the tool mirrors";
		if ((got = header_bytes(&v, buf, sizeof(buf), &len)) == NULL)
			return "Header mismatch: an Mcp-Param header is not "
			    "valid (bad base64 or characters)";
		if ((want = arg_text(arg, num, sizeof(num))) == NULL ||
		    strlen(want) != len || memcmp(want, got, len) != 0)
			return "Header mismatch: an Mcp-Param header differs "
			    "from its argument";
	}
	return NULL;
}

/*
 * Mcp-Name carries a string of params: resources/read's uri, and the
 * taskId of tasks/get, tasks/update and tasks/cancel (the tasks
 * extension, so that a router can send them where the task is).
 */
static const char *
param_name_mismatch(const struct http_ctx *ctx, struct MHD_Connection *conn,
    const struct rpc_msg *msg, const char *key)
{
	struct json_object *obj;
	char buf[HTTP_MAX_HEADER_VALUE];
	const char *want, *got;
	struct hval v;
	size_t len;

	if (msg->params == NULL ||
	    !json_object_object_get_ex(msg->params, key, &obj) ||
	    !json_object_is_type(obj, json_type_string))
		return NULL;	/* dispatch answers the malformed request */
	want = json_object_get_string(obj);
	if (!get_value(ctx, conn, H_NAME, &v))
		return strcmp(key, "uri") == 0 ? "Header mismatch: Mcp-Name is "
		    "required for resources/read" : "Header mismatch: Mcp-Name "
		    "is required for tasks/get, tasks/update and tasks/cancel";
	if ((got = header_bytes(&v, buf, sizeof(buf), &len)) == NULL)
		return "Header mismatch: Mcp-Name is not valid (bad base64 or "
		    "characters)";
	if (len != strlen(want) || memcmp(got, want, len) != 0)
		return strcmp(key, "uri") == 0 ? "Header mismatch: Mcp-Name "
		    "differs from the resource uri" : "Header mismatch: "
		    "Mcp-Name differs from the taskId";
	return NULL;
}

const char *
http_header_mismatch(const struct http_ctx *ctx, struct MHD_Connection *conn,
    const struct rpc_msg *msg)
{
	const char *mv, *name, *got;
	char buf[HTTP_MAX_HEADER_VALUE];
	struct hval v;
	size_t len;

	if (!get_value(ctx, conn, H_VERSION, &v))
		return "Header mismatch: MCP-Protocol-Version is required";
	if ((mv = dispatch_modern_version(msg)) != NULL &&
	    !value_is(&v, mv, strlen(mv)))
		return "Header mismatch: MCP-Protocol-Version differs from "
		    "_meta protocolVersion";
	if (msg->method == NULL)
		return NULL;
	if (!get_value(ctx, conn, H_METHOD, &v))
		return "Header mismatch: Mcp-Method is required";
	if (!value_is(&v, msg->method, strlen(msg->method)))
		return "Header mismatch: Mcp-Method differs from the body's "
		    "method";
	if (strcmp(msg->method, "resources/read") == 0)
		return param_name_mismatch(ctx, conn, msg, "uri");
	if (strcmp(msg->method, "tasks/get") == 0 ||
	    strcmp(msg->method, "tasks/update") == 0 ||
	    strcmp(msg->method, "tasks/cancel") == 0)
		return param_name_mismatch(ctx, conn, msg, "taskId");
	if (strcmp(msg->method, "tools/call") != 0)
		return NULL;
	if ((name = msg->tool_name) == NULL)
		return NULL;	/* dispatch answers the malformed call */
	if (!get_value(ctx, conn, H_NAME, &v))
		return "Header mismatch: Mcp-Name is required for tools/call";
	if ((got = header_bytes(&v, buf, sizeof(buf), &len)) == NULL)
		return "Header mismatch: Mcp-Name is not valid (bad base64 or "
		    "characters)";
	if (len != strlen(name) || memcmp(got, name, len) != 0)
		return "Header mismatch: Mcp-Name differs from the tool name";
	return param_mismatch(ctx, conn, name, msg->arguments);
}
