/*
 * JSON-RPC 2.0 envelope: decoding one framed message and encoding replies.
 * This is the only place that maps enum mcp_err to wire codes. It does not
 * log; it returns errors. Decoding also picks out, once, the few MCP fields
 * of params that several layers ask about (struct rpc_msg), so that no
 * layer parses them again.
 */
#ifndef JSONRPC_H
#define JSONRPC_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "mcp_limits.h"
#include "mcp_err.h"

enum rpc_kind {
	RPC_REQUEST,		/* method + id: needs exactly one response */
	RPC_NOTIFICATION,	/* method, no id: never answered */
	RPC_RESPONSE,		/* result or error: we send no requests */
};

/* The _meta keys of 2026-07-28 requests and results. */
#define MCP_META_VERSION	"io.modelcontextprotocol/protocolVersion"
#define MCP_META_CAPS		"io.modelcontextprotocol/clientCapabilities"
#define MCP_META_LOGLEVEL	"io.modelcontextprotocol/logLevel"
#define MCP_META_SERVERINFO	"io.modelcontextprotocol/serverInfo"

/*
 * One decoded message. root owns the tree; every other pointer is borrowed
 * from it and lives as long as the message.
 */
struct rpc_msg {
	struct json_object *root;	/* owned */
	enum rpc_kind kind;
	struct json_object *id;		/* borrowed; NULL for notifications */
	const char *method;		/* borrowed; NULL for responses */
	struct json_object *params;	/* borrowed; NULL if absent */
	char id_key[MCP_MAX_ID_LEN + 3];	/* "s:..." or "i:...", for cancel */
	/*
	 * MCP's fields, decoded once here; NULL (false) when absent or not
	 * of the type named. Checking them is dispatch's work.
	 */
	struct json_object *meta;	/* params._meta, an object */
	const char *meta_version;	/* _meta MCP_META_VERSION, a string */
	bool meta_log_level;		/* _meta has MCP_META_LOGLEVEL */
	struct json_object *progress_token;	/* _meta.progressToken, a
					 * string or an integer */
	const char *tool_name;		/* tools/call: params.name, a string */
	struct json_object *arguments;	/* tools/call: params.arguments,
					 * present whatever its type */
};

/*
 * Decodes one message of len bytes (no framing newline). On MCP_OK *ret is
 * owned by the caller (rpc_msg_free). Otherwise *ret_reply is the error
 * response to send (malloc'd, owned by the caller), or NULL when the bytes
 * were a notification-shaped mistake that must not be answered.
 */
enum mcp_err jsonrpc_decode(const char *buf, size_t len, struct rpc_msg **ret,
    char **ret_reply) __attribute__((warn_unused_result));
/* The same with a tokener the caller keeps across messages (one thread at
 * a time; from jsonrpc_tokener_new(), freed with json_tokener_free()). */
enum mcp_err jsonrpc_decode_tok(struct json_tokener *tok, const char *buf,
    size_t len, struct rpc_msg **ret, char **ret_reply)
    __attribute__((warn_unused_result));
struct json_tokener *jsonrpc_tokener_new(void);
void rpc_msg_free(struct rpc_msg *msg);

/* The key a request id is known by in a session ("s:text", "i:-3",
 * "u:18446744073709551615"); -1 for ids that are not string or integer, or
 * longer than MCP_MAX_ID_LEN. */
int jsonrpc_id_key(struct json_object *id, char *key, size_t keylen);

/* The wire code of an error. */
int jsonrpc_code(enum mcp_err err);

/*
 * Serialised replies, malloc'd and owned by the caller; NULL only when out
 * of memory. id is borrowed (NULL means JSON null). result ownership is
 * taken. data (may be NULL) ownership is taken.
 */
char *jsonrpc_result(struct json_object *id, struct json_object *result,
    size_t *ret_len);
/* The same, for a result that is already serialised JSON (borrowed). */
char *jsonrpc_result_raw(struct json_object *id, const char *result,
    size_t result_len, size_t *ret_len);
char *jsonrpc_error(struct json_object *id, enum mcp_err err,
    const char *message, struct json_object *data, size_t *ret_len);
/* A notification {method, params}; params ownership is taken. */
char *jsonrpc_notification(const char *method, struct json_object *params,
    size_t *ret_len);

/* Compact serialisation of any tree, malloc'd; obj borrowed. */
char *jsonrpc_serialize(struct json_object *obj, size_t *ret_len);

#endif
