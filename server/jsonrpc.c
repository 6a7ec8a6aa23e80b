/*
 * JSON-RPC 2.0 decoding and encoding. Trusts nothing in its input: sizes
 * are capped by the transport, depth here, and every field is type-checked
 * before anyone else sees the message.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_finite.h"
#include "jsonrpc.h"

int
jsonrpc_code(enum mcp_err err)
{
	switch (err) {
	case MCP_ERR_PARSE:
		return -32700;
	case MCP_ERR_INVALID_REQUEST:
	case MCP_ERR_TOO_LARGE:
	case MCP_ERR_TOO_DEEP:
		return -32600;
	case MCP_ERR_NO_METHOD:
		return -32601;
	case MCP_ERR_INVALID_PARAMS:
		return -32602;
	case MCP_ERR_HEADER_MISMATCH:
		return -32020;
	case MCP_ERR_MISSING_CAPABILITY:
		return -32021;
	case MCP_ERR_UNSUPPORTED_VERSION:
		return -32022;
	case MCP_ERR_NO_RESOURCE:
		return -32002;
	case MCP_OK:
	case MCP_ERR_INTERNAL:
	case MCP_ERR_NOMEM:
	case MCP_ERR_SCHEMA:
	default:
		return -32603;
	}
}

char *
jsonrpc_serialize(struct json_object *obj, size_t *ret_len)
{
	const char *s;
	size_t len;
	char *out;

	s = json_object_to_json_string_length(obj,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
	if (s == NULL || (out = malloc(len + 1)) == NULL)
		return NULL;
	memcpy(out, s, len + 1);
	if (ret_len != NULL)
		*ret_len = len;
	return out;
}

/*
 * Adds val (owned) to obj under key; on failure val is released. val NULL
 * is a failed allocation, never JSON null: json-c would add a null.
 */
static int
add_owned(struct json_object *obj, const char *key, struct json_object *val)
{
	if (val == NULL || json_object_object_add(obj, key, val) != 0) {
		json_object_put(val);
		return -1;
	}
	return 0;
}

/* A fresh envelope {"jsonrpc":"2.0","id":id}; id borrowed, NULL for a
 * JSON null id. */
static struct json_object *
envelope_new(struct json_object *id, int with_id)
{
	struct json_object *env;

	if ((env = json_object_new_object()) == NULL)
		return NULL;
	if (add_owned(env, "jsonrpc", json_object_new_string("2.0")) != 0)
		goto fail;
	if (with_id && (id == NULL ? json_object_object_add(env, "id",
	    NULL) : add_owned(env, "id", json_object_get(id))) != 0)
		goto fail;
	return env;
 fail:
	json_object_put(env);
	return NULL;
}

char *
jsonrpc_result(struct json_object *id, struct json_object *result,
    size_t *ret_len)
{
	struct json_object *env;
	char *out = NULL;

	if ((env = envelope_new(id, 1)) == NULL) {
		json_object_put(result);
		return NULL;
	}
	if (add_owned(env, "result", result) == 0)
		out = jsonrpc_serialize(env, ret_len);
	json_object_put(env);
	return out;
}

char *
jsonrpc_result_raw(struct json_object *id, const char *result,
    size_t result_len, size_t *ret_len)
{
	static const char head[] = "{\"jsonrpc\":\"2.0\",\"id\":";
	static const char mid[] = ",\"result\":";
	const char *idtext;
	size_t idlen, n, off = 0;
	char *out;

	idtext = json_object_to_json_string_length(id, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE, &idlen);
	if (idtext == NULL)
		return NULL;
	n = sizeof(head) - 1 + idlen + sizeof(mid) - 1 + result_len + 1;
	if ((out = malloc(n + 1)) == NULL)
		return NULL;
	memcpy(out + off, head, sizeof(head) - 1);
	off += sizeof(head) - 1;
	memcpy(out + off, idtext, idlen);
	off += idlen;
	memcpy(out + off, mid, sizeof(mid) - 1);
	off += sizeof(mid) - 1;
	memcpy(out + off, result, result_len);
	off += result_len;
	out[off++] = '}';
	out[off] = '\0';
	if (ret_len != NULL)
		*ret_len = off;
	return out;
}

char *
jsonrpc_error(struct json_object *id, enum mcp_err err, const char *message,
    struct json_object *data, size_t *ret_len)
{
	struct json_object *env, *eobj;
	char *out = NULL;

	if ((env = envelope_new(id, 1)) == NULL ||
	    (eobj = json_object_new_object()) == NULL) {
		json_object_put(env);
		json_object_put(data);
		return NULL;
	}
	if (add_owned(eobj, "code", json_object_new_int(jsonrpc_code(err))) ||
	    add_owned(eobj, "message", json_object_new_string(message))) {
		json_object_put(eobj);
		json_object_put(data);
		goto out;
	}
	if (data != NULL && add_owned(eobj, "data", data) != 0) {
		json_object_put(eobj);
		goto out;
	}
	if (add_owned(env, "error", eobj) == 0)
		out = jsonrpc_serialize(env, ret_len);
 out:
	json_object_put(env);
	return out;
}

char *
jsonrpc_notification(const char *method, struct json_object *params,
    size_t *ret_len)
{
	struct json_object *env;
	char *out = NULL;

	if ((env = envelope_new(NULL, 0)) == NULL) {
		json_object_put(params);
		return NULL;
	}
	if (add_owned(env, "method", json_object_new_string(method)) != 0)
		json_object_put(params);
	else if (add_owned(env, "params", params) == 0)
		out = jsonrpc_serialize(env, ret_len);
	json_object_put(env);
	return out;
}

void
rpc_msg_free(struct rpc_msg *msg)
{
	if (msg == NULL)
		return;
	json_object_put(msg->root);
	free(msg);
}

/* Only whitespace allowed after the value. */
static int
only_space(const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r' &&
		    p[i] != '\n')
			return 0;
	return 1;
}

struct json_tokener *
jsonrpc_tokener_new(void)
{
	struct json_tokener *tok;

	if ((tok = json_tokener_new_ex(MCP_MAX_DEPTH)) != NULL)
		json_tokener_set_flags(tok, JSON_TOKENER_STRICT |
		    JSON_TOKENER_ALLOW_TRAILING_CHARS |
		    JSON_TOKENER_VALIDATE_UTF8);
	return tok;
}

/* Parses bytes into a tree, bounded by MCP_MAX_DEPTH. reuse, if not
 * NULL, is a tokener from jsonrpc_tokener_new() that the caller owns. */
static enum mcp_err
parse_tree(struct json_tokener *reuse, const char *buf, size_t len,
    struct json_object **ret)
{
	struct json_tokener *tok;
	struct json_object *obj;
	enum json_tokener_error jerr;
	enum mcp_err st;
	size_t used;

	if (len > (size_t)INT32_MAX)
		return MCP_ERR_TOO_LARGE;
	if ((tok = reuse) != NULL)
		json_tokener_reset(tok);
	else if ((tok = jsonrpc_tokener_new()) == NULL)
		return MCP_ERR_NOMEM;
	obj = json_tokener_parse_ex(tok, buf, (int)len);
	jerr = json_tokener_get_error(tok);
	used = json_tokener_get_parse_end(tok);
	if (jerr == json_tokener_continue) {
		/* a complete text may still be pending: "123" needs EOF */
		obj = json_tokener_parse_ex(tok, "", 1);
		jerr = json_tokener_get_error(tok);
		used = len;
	}
	if (tok != reuse)
		json_tokener_free(tok);
	if (jerr == json_tokener_error_depth)
		st = MCP_ERR_TOO_DEEP;
	else if (jerr != json_tokener_success || obj == NULL)
		st = MCP_ERR_PARSE;
	else if (used < len && !only_space(buf + used, len - used))
		st = MCP_ERR_PARSE;
	else if (!json_all_finite(obj))
		st = MCP_ERR_PARSE;
	else {
		*ret = obj;
		return MCP_OK;
	}
	json_object_put(obj);
	return st;
}

int
jsonrpc_id_key(struct json_object *id, char *key, size_t keylen)
{
	int64_t i;
	int n;

	if (json_object_is_type(id, json_type_string)) {
		if ((size_t)json_object_get_string_len(id) > MCP_MAX_ID_LEN)
			return -1;
		n = snprintf(key, keylen, "s:%s", json_object_get_string(id));
	} else if (json_object_is_type(id, json_type_int)) {
		/* json-c keeps integers above INT64_MAX as unsigned */
		if ((i = json_object_get_int64(id)) == INT64_MAX)
			n = snprintf(key, keylen, "u:%llu", (unsigned long long)
			    json_object_get_uint64(id));
		else
			n = snprintf(key, keylen, "i:%lld", (long long)i);
	} else
		return -1;
	return n < 0 || (size_t)n >= keylen ? -1 : 0;
}

/* The value of hex digit c, or -1. */
static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The code unit of a \uXXXX escape at p (n bytes left), or -1. */
static long
u_escape(const char *p, size_t n)
{
	long v = 0;
	int i, d;

	if (n < 6 || p[0] != '\\' || p[1] != 'u')
		return -1;
	for (i = 2; i < 6; i++) {
		if ((d = hexval((unsigned char)p[i])) < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

/*
 * Whether the message text has a \u escape of a surrogate that is not half
 * of a pair: json-c reads it as U+FFFD, so a string holding U+FFFD may not
 * be what was sent. Backslashes occur only inside strings in valid JSON,
 * and every escape is skipped whole, so "\\\\ud800" is not one.
 */
static bool
has_lone_surrogate(const char *buf, size_t len)
{
	size_t i;
	long u, lo;

	for (i = 0; i + 1 < len; i++) {
		if (buf[i] != '\\')
			continue;
		if ((u = u_escape(buf + i, len - i)) < 0xd800 || u > 0xdfff) {
			i++;	/* the escaped character */
			continue;
		}
		if (u >= 0xdc00)
			return true;	/* a low half first */
		lo = u_escape(buf + i + 6, len - i - 6);
		if (lo < 0xdc00 || lo > 0xdfff)
			return true;
		i += 11;	/* the pair */
	}
	return false;
}

/*
 * Whether id can be echoed exactly as it was sent (buf is the message).
 * json-c clamps integers beyond 64 bits to INT64_MIN and UINT64_MAX, so
 * those two values are refused: one sent as such cannot be told from one
 * clamped. A string with U+FFFD is refused when the message has a lone
 * surrogate escape, which json-c reads as U+FFFD.
 */
static const char *
id_not_echoable(struct json_object *id, const char *buf, size_t len)
{
	if (json_object_is_type(id, json_type_int)) {
		if (json_object_get_int64(id) == INT64_MIN ||
		    (json_object_get_int64(id) == INT64_MAX &&
		    json_object_get_uint64(id) == UINT64_MAX))
			return "Invalid Request: integer \"id\" must be within "
			    "-9223372036854775807..18446744073709551614";
		return NULL;
	}
	if (memmem(json_object_get_string(id),
	    (size_t)json_object_get_string_len(id), "\xef\xbf\xbd", 3) != NULL &&
	    has_lone_surrogate(buf, len))
		return "Invalid Request: \"id\" has a lone surrogate escape "
		    "(\\ud800-\\udfff), which cannot be echoed";
	return NULL;
}

/*
 * Checks the envelope of an object message (buf, len: its text) and fills
 * msg. On error the message text is in *ret_why. The id is read first, so
 * that every later error can echo it.
 */
static enum mcp_err
check_envelope(struct rpc_msg *msg, const char *buf, size_t len,
    const char **ret_why)
{
	struct json_object *root = msg->root, *v, *id = NULL, *method;
	int has_id;

	has_id = json_object_object_get_ex(root, "id", &id);
	if (has_id) {
		/* MCP: string or integer, never null; the type is echoed */
		if (!json_object_is_type(id, json_type_string) &&
		    !json_object_is_type(id, json_type_int)) {
			*ret_why = "Invalid Request: \"id\" must be a string "
			    "or an integer";
			return MCP_ERR_INVALID_REQUEST;
		}
		if (jsonrpc_id_key(id, msg->id_key, sizeof(msg->id_key)) != 0) {
			*ret_why = "Invalid Request: \"id\" is longer than "
			    "256 bytes";
			return MCP_ERR_INVALID_REQUEST;
		}
		if ((*ret_why = id_not_echoable(id, buf, len)) != NULL)
			return MCP_ERR_INVALID_REQUEST;
		msg->id = id;
	}
	if (!json_object_object_get_ex(root, "jsonrpc", &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    strcmp(json_object_get_string(v), "2.0") != 0) {
		*ret_why = "Invalid Request: \"jsonrpc\" must be \"2.0\"";
		return MCP_ERR_INVALID_REQUEST;
	}
	if (!json_object_object_get_ex(root, "method", &method)) {
		if (has_id && (json_object_object_get_ex(root, "result",
		    NULL) || json_object_object_get_ex(root, "error", NULL))) {
			msg->kind = RPC_RESPONSE;
			return MCP_OK;
		}
		*ret_why = "Invalid Request: \"method\" is missing";
		return MCP_ERR_INVALID_REQUEST;
	}
	if (!json_object_is_type(method, json_type_string)) {
		*ret_why = "Invalid Request: \"method\" must be a string";
		return MCP_ERR_INVALID_REQUEST;
	}
	msg->method = json_object_get_string(method);
	if (json_object_object_get_ex(root, "params", &v)) {
		if (!json_object_is_type(v, json_type_object)) {
			*ret_why = "Invalid params: \"params\" must be an "
			    "object";
			return MCP_ERR_INVALID_PARAMS;
		}
		msg->params = v;
	}
	msg->kind = has_id ? RPC_REQUEST : RPC_NOTIFICATION;
	return MCP_OK;
}

/* Fills the MCP fields of a request or notification (see jsonrpc.h). */
static void
decode_mcp(struct rpc_msg *msg)
{
	struct json_object *v;

	if (msg->params == NULL)
		return;
	if (json_object_object_get_ex(msg->params, "_meta", &v) &&
	    json_object_is_type(v, json_type_object)) {
		msg->meta = v;
		if (json_object_object_get_ex(v, MCP_META_VERSION, &v) &&
		    json_object_is_type(v, json_type_string))
			msg->meta_version = json_object_get_string(v);
		msg->meta_log_level = json_object_object_get_ex(msg->meta,
		    MCP_META_LOGLEVEL, NULL);
		if (json_object_object_get_ex(msg->meta, "progressToken", &v) &&
		    (json_object_is_type(v, json_type_string) ||
		    json_object_is_type(v, json_type_int)))
			msg->progress_token = v;
	}
	if (strcmp(msg->method, "tools/call") != 0)
		return;
	if (json_object_object_get_ex(msg->params, "name", &v) &&
	    json_object_is_type(v, json_type_string))
		msg->tool_name = json_object_get_string(v);
	(void)json_object_object_get_ex(msg->params, "arguments",
	    &msg->arguments);
}

enum mcp_err
jsonrpc_decode(const char *buf, size_t len, struct rpc_msg **ret,
    char **ret_reply)
{
	return jsonrpc_decode_tok(NULL, buf, len, ret, ret_reply);
}

enum mcp_err
jsonrpc_decode_tok(struct json_tokener *tok, const char *buf, size_t len,
    struct rpc_msg **ret, char **ret_reply)
{
	struct rpc_msg *msg = NULL;
	struct json_object *root = NULL;
	const char *why = NULL;
	char whybuf[128];
	enum mcp_err st;

	*ret_reply = NULL;
	if ((st = parse_tree(tok, buf, len, &root)) != MCP_OK) {
		if (st == MCP_ERR_TOO_DEEP) {
			(void)snprintf(whybuf, sizeof(whybuf), "Invalid "
			    "Request: JSON nested deeper than %d levels",
			    MCP_MAX_DEPTH);
			why = whybuf;
		} else if (st == MCP_ERR_TOO_LARGE)
			why = "Invalid Request: message too large";
		else if (st == MCP_ERR_NOMEM)
			why = "Internal error: out of memory";
		else
			why = "Parse error: not valid JSON";
		goto fail;
	}
	if (json_object_is_type(root, json_type_array)) {
		st = MCP_ERR_INVALID_REQUEST;
		why = "Invalid Request: batch arrays are not supported";
		goto fail;
	}
	if (!json_object_is_type(root, json_type_object)) {
		st = MCP_ERR_INVALID_REQUEST;
		why = "Invalid Request: a message must be a JSON object";
		goto fail;
	}
	if ((msg = calloc(1, sizeof(*msg))) == NULL) {
		st = MCP_ERR_NOMEM;
		why = "Internal error: out of memory";
		goto fail;
	}
	msg->root = root;
	root = NULL;
	if ((st = check_envelope(msg, buf, len, &why)) != MCP_OK) {
		/* a malformed notification gets no answer; a request does */
		if (msg->id == NULL && st == MCP_ERR_INVALID_PARAMS)
			goto quiet;
		goto fail;
	}
	if (msg->kind != RPC_RESPONSE)
		decode_mcp(msg);
	*ret = msg;
	return MCP_OK;
 fail:
	*ret_reply = jsonrpc_error(msg != NULL ? msg->id : NULL, st, why,
	    NULL, NULL);
 quiet:
	rpc_msg_free(msg);
	json_object_put(root);
	return st;
}
