/*
 * The one error enum of the JSON layers (schemas/, tools/, server/). Only
 * server/jsonrpc.c maps it to wire codes; nothing else picks a number.
 * sandbox/ is syscall-shaped and does not use it.
 */
#ifndef MCP_ERR_H
#define MCP_ERR_H

enum mcp_err {
	MCP_OK = 0,
	MCP_ERR_PARSE,		/* -32700: not JSON */
	MCP_ERR_INVALID_REQUEST,	/* -32600: not a JSON-RPC request, batch */
	MCP_ERR_NO_METHOD,	/* -32601: unknown method */
	MCP_ERR_INVALID_PARAMS,	/* -32602: bad params, unknown tool */
	MCP_ERR_INTERNAL,	/* -32603 */
	MCP_ERR_TOO_LARGE,	/* -32600 with a message naming the cap */
	MCP_ERR_TOO_DEEP,	/* -32600/-32700: JSON nesting over the cap */
	MCP_ERR_NOMEM,		/* -32603 */
	MCP_ERR_HEADER_MISMATCH,	/* -32020 (2026-07-28) */
	MCP_ERR_MISSING_CAPABILITY,	/* -32021 (2026-07-28) */
	MCP_ERR_UNSUPPORTED_VERSION,	/* -32022 (2026-07-28) */
	MCP_ERR_SCHEMA,		/* a schema failed to compile (start-up only) */
	MCP_ERR_NO_RESOURCE,	/* -32002: resources/read of an unknown uri,
				 * handshake era only (2026-07-28: -32602) */
};

#endif
