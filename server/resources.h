/*
 * The resources capability: resources/list, resources/read,
 * resources/templates/list in both eras, resources/subscribe and
 * resources/unsubscribe in the handshake era, and the
 * notifications/resources/updated a tool call that changed a watched file
 * sends. The resources are the files of the session's workspace (the same
 * workspace its tool calls see: per stdio server, per HTTP session, or the
 * principal's one for stateless requests), plus the conformance fixtures
 * under --conformance-fixtures. dispatch.c only names the methods in its
 * table and hands them here.
 */
#ifndef RESOURCES_H
#define RESOURCES_H

#include <stdbool.h>

#include <json-c/json.h>

#include "mcp_err.h"

struct server;
struct session;

/* One resources request, as dispatch hands it over. */
struct rsrc_req {
	const struct server *srv;
	struct session *sess;
	struct json_object *params;	/* borrowed; may be NULL */
	bool modern;			/* 2026-07-28: caching hints, -32602 */
	char err[256];			/* the message of a protocol error */
	struct json_object *err_data;	/* owned; error data, or NULL */
};

/*
 * Answers method (one of the resources/ methods of dispatch's table). On
 * MCP_OK *ret is the new result; otherwise q->err (and maybe q->err_data)
 * describe the error.
 */
enum mcp_err resources_handle(const char *method, struct rsrc_req *q,
    struct json_object **ret);

/* The resources capability object for the era (subscribe only where
 * resources/subscribe exists: the handshake era). Owned. */
struct json_object *resources_capability(bool modern);

/*
 * After a tools/call of tool that returned result: for every workspace
 * file it reports created or changed (structuredContent.files[].uri, or
 * write_file's path) that sess watches, send("notifications/resources/
 * updated", {uri}) through send (which takes the params).
 */
void resources_notify_changed(struct session *sess, const char *tool,
    const struct json_object *result,
    void (*send)(void *arg, const char *method, struct json_object *params),
    void *arg);

#endif
