/*
 * The stdio transport: newline-delimited JSON-RPC on stdin/stdout. stdout
 * carries MCP messages and nothing else; this file is its only writer.
 */
#ifndef TRANSPORT_STDIO_H
#define TRANSPORT_STDIO_H

struct server;
struct session;

/*
 * Serves until stdin ends (in-flight calls finish, then return 0) or
 * SIGTERM/SIGINT/SIGHUP arrives (in-flight calls are cancelled, then
 * return 0). The caller must have blocked those signals in every thread
 * (transport_stdio_block_signals) before starting any thread.
 */
int transport_stdio_run(const struct server *srv, struct session *sess);
int transport_stdio_block_signals(void);

#endif
