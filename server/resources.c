/*
 * The resources methods (resources.h). The workspace's files are read by
 * tools/workspace_resources.c under the same kernel confinement as the
 * file tools; here are the JSON-RPC shapes, the errors of each era, the
 * fixtures and the subscriptions.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_build.h"
#include "dispatch.h"
#include "fixtures.h"
#include "repl.h"
#include "resources.h"
#include "skill_catalog.h"
#include "session.h"
#include "tool.h"
#include "utf8.h"
#include "workspace_resources.h"

/*
 * ttlMs of resources results (2026-07-28 caching hints): 0, since a tool
 * call may change any workspace file the next moment. cacheScope is
 * "private": the files are those of one session or principal.
 */
#define RSRC_TTL_MS		0
/* Bytes of a uri echoed in an error message. */
#define RSRC_ECHO_URI		200

#define NOMEM_TEXT	"Internal error: out of memory"

static enum mcp_err
fail(struct rsrc_req *q, enum mcp_err st, const char *uri, const char *fmt,
    ...) __attribute__((format(printf, 4, 5)));

static enum mcp_err
fail(struct rsrc_req *q, enum mcp_err st, const char *uri, const char *fmt,
    ...)
{
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(q->err, sizeof(q->err), fmt, ap);
	va_end(ap);
	utf8_trim(q->err);
	if (uri != NULL) {
		q->err_data = json_object_new_object();
		if ((q->err_data = jb_built(q->err_data, jb_add(q->err_data, "uri",
		    json_object_new_string(uri)))) == NULL) {
			/* an error without its data would be another answer */
			(void)snprintf(q->err, sizeof(q->err), NOMEM_TEXT);
			return MCP_ERR_NOMEM;
		}
	}
	return st;
}

/* The uri as echoed in a message: its first RSRC_ECHO_URI bytes. */
#define ECHO(u)	(int)utf8_prefix((u), strlen(u), RSRC_ECHO_URI), (u)

/* Out of memory: the one answer dispatch_nomem accepts besides the real. */
static enum mcp_err
nomem(struct rsrc_req *q)
{
	return fail(q, MCP_ERR_NOMEM, NULL, NOMEM_TEXT);
}

/*
 * The result res (taken, NULL or failed: out of memory) with the caching
 * hints of 2026-07-28 into *ret.
 */
static enum mcp_err
result(struct rsrc_req *q, struct json_object *res, int failed,
    struct json_object **ret)
{
	if (q->modern && !failed)
		failed = jb_add(res, "ttlMs", json_object_new_int(RSRC_TTL_MS)) ||
		    jb_add(res, "cacheScope", json_object_new_string("private"));
	if ((*ret = jb_built(res, failed || res == NULL)) == NULL)
		return nomem(q);
	return MCP_OK;
}

/* A string param, or NULL. */
static const char *
str_param(struct rsrc_req *q, const char *key)
{
	struct json_object *v;

	if (q->params == NULL || !json_object_object_get_ex(q->params, key, &v)
	    || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static const char *
workspace(struct rsrc_req *q, enum mcp_err *st)
{
	char err[256];
	const char *ws;

	if ((ws = session_workspace(q->sess, err, sizeof(err))) == NULL)
		*st = fail(q, MCP_ERR_INTERNAL, NULL, "Internal error: the "
		    "workspace could not be made; the server log says why");
	return ws;
}

/* Whose run_code sessions the request sees (session.h). */
static const char *
owner_key(const struct rsrc_req *q, char buf[SESSION_OWNER_KEY])
{
	session_owner_key(q->sess, q->modern, buf);
	return buf;
}

static bool
fixtures_on(const struct rsrc_req *q)
{
	return q->srv->env != NULL && q->srv->env->fixtures;
}

static enum mcp_err
m_list(struct rsrc_req *q, struct json_object **ret)
{
	struct json_object *res, *arr, *v;
	const char *cursor = NULL, *ws;
	enum mcp_err st = MCP_OK;
	char okey[SESSION_OWNER_KEY];
	char *next = NULL;
	int rc, failed;

	if (q->params != NULL &&
	    json_object_object_get_ex(q->params, "cursor", &v)) {
		if (!json_object_is_type(v, json_type_string))
			return fail(q, MCP_ERR_INVALID_PARAMS, NULL, "Invalid "
			    "params: \"cursor\" must be a string");
		cursor = json_object_get_string(v);
	}
	if ((ws = workspace(q, &st)) == NULL)
		return st;
	if ((arr = json_object_new_array()) == NULL)
		return nomem(q);
	if (cursor == NULL && fixtures_on(q) &&
	    fixture_resources_list(arr) != 0) {
		json_object_put(arr);
		return nomem(q);
	}
	if (cursor == NULL && (repl_resources_list(q->srv->env->repls,
	    owner_key(q, okey), arr) != 0 ||
	    skill_catalog_resources(q->srv->env, arr) != 0)) {
		json_object_put(arr);
		return nomem(q);
	}
	if ((rc = wsr_list(ws, cursor, arr, &next)) != 0) {
		json_object_put(arr);
		if (rc == -ENOMEM)
			return nomem(q);
		return fail(q, MCP_ERR_INVALID_PARAMS, NULL, "Invalid params: "
		    "unknown cursor (pass the nextCursor of the previous "
		    "page)");
	}
	res = json_object_new_object();
	failed = jb_add(res, "resources", arr) || (next != NULL &&
	    jb_add(res, "nextCursor", json_object_new_string(next)));
	free(next);
	return result(q, res, failed, ret);
}

static enum mcp_err
m_templates(struct rsrc_req *q, struct json_object **ret)
{
	struct json_object *res, *arr, *t, *v;

	if (q->params != NULL &&
	    json_object_object_get_ex(q->params, "cursor", &v))
		return fail(q, MCP_ERR_INVALID_PARAMS, NULL, "Invalid params: "
		    "unknown cursor (the template list has a single page)");
	arr = json_object_new_array();
	t = json_object_new_object();
	t = jb_built(t, jb_add(t, "uriTemplate",
	    json_object_new_string(WSR_URI_TEMPLATE)) ||
	    jb_add(t, "name", json_object_new_string("workspace-file")) ||
	    jb_add(t, "title", json_object_new_string("Workspace file")) ||
	    jb_add(t, "description", json_object_new_string(
	    "A file of the workspace, by its path relative to the workspace "
	    "root (the path read_file takes; the same files run_command and "
	    "run_code see under /workspace).")));
	arr = jb_built(arr, jb_push(arr, t) || (fixtures_on(q) &&
	    fixture_resource_templates(arr) != 0));
	res = json_object_new_object();
	return result(q, res, jb_add(res, "resourceTemplates", arr), ret);
}

static enum mcp_err
not_found(struct rsrc_req *q, const char *uri)
{
	/* 2026-07-28 (SEP-2164): -32602; before it, -32002 */
	return fail(q, q->modern ? MCP_ERR_INVALID_PARAMS : MCP_ERR_NO_RESOURCE,
	    uri, "Resource not found: %.*s", ECHO(uri));
}

static enum mcp_err
read_error(struct rsrc_req *q, const char *uri, int err)
{
	switch (err) {
	case ENOENT:
	case ENOTDIR:
		return not_found(q, uri);
	case EXDEV:
		return fail(q, MCP_ERR_INVALID_PARAMS, uri, "Invalid params: "
		    "%.*s is outside the workspace ('..' above it, absolute "
		    "paths and symbolic links pointing out are refused)",
		    ECHO(uri));
	case ELOOP:
		return fail(q, MCP_ERR_INVALID_PARAMS, uri, "Invalid params: "
		    "%.*s goes through a link that is not followed", ECHO(uri));
	case EISDIR:
		return fail(q, MCP_ERR_INVALID_PARAMS, uri, "Invalid params: "
		    "%.*s is a directory; resources/list lists the files",
		    ECHO(uri));
	case EINVAL:
		return fail(q, MCP_ERR_INVALID_PARAMS, uri, "Invalid params: "
		    "%.*s is not a regular file (FIFOs, devices and sockets "
		    "are refused)", ECHO(uri));
	case EFBIG:
		return fail(q, MCP_ERR_INVALID_PARAMS, uri, "Invalid params: "
		    "%.*s is larger than the read limit of %zu bytes; "
		    "read_file reads it in parts (offset, max_bytes)", ECHO(uri),
		    wsr_max_read(q->srv->env));
	case EACCES:
	case EPERM:
		return fail(q, MCP_ERR_INVALID_PARAMS, uri, "Invalid params: "
		    "permission denied for %.*s", ECHO(uri));
	case ENAMETOOLONG:
		return fail(q, MCP_ERR_INVALID_PARAMS, uri, "Invalid params: "
		    "a name in %.*s is too long", ECHO(uri));
	case ENOMEM:
		return nomem(q);
	case EAGAIN:
		return fail(q, MCP_ERR_INTERNAL, uri, "Internal error: %.*s "
		    "changed while it was opened; try again", ECHO(uri));
	default:
		return fail(q, MCP_ERR_INTERNAL, uri, "Internal error: %.*s "
		    "could not be read (errno %d)", ECHO(uri), err);
	}
}

static enum mcp_err
m_read(struct rsrc_req *q, struct json_object **ret)
{
	struct json_object *c = NULL, *res, *arr;
	const char *uri = str_param(q, "uri"), *ws;
	char path[FILES_MAX_PATH + 1], okey[SESSION_OWNER_KEY];
	enum mcp_err st = MCP_OK;
	int rc;

	if (uri == NULL)
		return fail(q, MCP_ERR_INVALID_PARAMS, NULL, "Invalid params: "
		    "resources/read needs \"uri\" (a string)");
	if (fixtures_on(q) && (rc = fixture_resource_read(uri, &c)) != 0) {
		if (rc < 0)
			return nomem(q);
	} else if ((rc = skill_catalog_read(q->srv->env, uri, &c)) !=
	    -EINVAL) {
		if (rc == -ENOMEM)
			return nomem(q);
		if (rc != 0)
			return read_error(q, uri, -rc);
	} else if ((rc = repl_resource_read(q->srv->env->repls, owner_key(q,
	    okey), uri, &c)) != -EINVAL) {
		if (rc == -ENOMEM)
			return nomem(q);
		if (rc != 0)
			return not_found(q, uri);
	} else {
		rc = wsr_path_from_uri(uri, path, sizeof(path));
		if (rc == -ENAMETOOLONG)
			return read_error(q, uri, ENAMETOOLONG);
		if (rc != 0)
			return not_found(q, uri);
		if ((ws = workspace(q, &st)) == NULL)
			return st;
		if ((rc = wsr_read(ws, path, uri, wsr_max_read(q->srv->env),
		    &c)) != 0)
			return read_error(q, uri, -rc);
	}
	arr = json_object_new_array();
	arr = jb_built(arr, jb_push(arr, c));
	res = json_object_new_object();
	return result(q, res, jb_add(res, "contents", arr), ret);
}

/* What resources/subscribe accepts: a workspace uri (the file may not
 * exist yet: a call may make it) or a fixture. */
static enum mcp_err
subscribable(struct rsrc_req *q, const char *uri)
{
	struct json_object *c = NULL;
	char path[FILES_MAX_PATH + 1];
	int rc;

	if (uri == NULL)
		return fail(q, MCP_ERR_INVALID_PARAMS, NULL, "Invalid params: "
		    "\"uri\" (a string) is required");
	if (wsr_path_from_uri(uri, path, sizeof(path)) == 0)
		return MCP_OK;
	if (fixtures_on(q) && (rc = fixture_resource_read(uri, &c)) != 0) {
		json_object_put(c);
		return rc > 0 ? MCP_OK : nomem(q);
	}
	return fail(q, MCP_ERR_INVALID_PARAMS, uri, "Invalid params: %.*s is "
	    "not a resource of this server (workspace files are %s<path>)",
	    ECHO(uri), FILES_URI_PREFIX);
}

static enum mcp_err
m_subscribe(struct rsrc_req *q, struct json_object **ret)
{
	const char *uri = str_param(q, "uri");
	enum mcp_err st;
	int rc;

	if ((st = subscribable(q, uri)) != MCP_OK)
		return st;
	if ((rc = session_subscribe(q->sess, uri)) == -ENOSPC)
		return fail(q, MCP_ERR_INVALID_PARAMS, uri, "Invalid params: "
		    "this session already watches %d resources; unsubscribe "
		    "from some first", SESSION_MAX_SUBSCRIPTIONS);
	if (rc != 0)
		return nomem(q);
	return result(q, json_object_new_object(), 0, ret);
}

static enum mcp_err
m_unsubscribe(struct rsrc_req *q, struct json_object **ret)
{
	const char *uri = str_param(q, "uri");

	if (uri == NULL)
		return fail(q, MCP_ERR_INVALID_PARAMS, NULL, "Invalid params: "
		    "\"uri\" (a string) is required");
	session_unsubscribe(q->sess, uri);
	return result(q, json_object_new_object(), 0, ret);
}

static const struct {
	const char *name;
	enum mcp_err (*fn)(struct rsrc_req *, struct json_object **);
} rsrc_methods[] = {
	{ "resources/list", m_list },
	{ "resources/read", m_read },
	{ "resources/templates/list", m_templates },
	{ "resources/subscribe", m_subscribe },
	{ "resources/unsubscribe", m_unsubscribe },
};

enum mcp_err
resources_handle(const char *method, struct rsrc_req *q,
    struct json_object **ret)
{
	size_t i;

	for (i = 0; i < sizeof(rsrc_methods) / sizeof(rsrc_methods[0]); i++)
		if (strcmp(rsrc_methods[i].name, method) == 0)
			return rsrc_methods[i].fn(q, ret);
	return fail(q, MCP_ERR_NO_METHOD, NULL, "Method not found: %.*s",
	    ECHO(method));
}

struct json_object *
resources_capability(bool modern)
{
	struct json_object *o = json_object_new_object();

	/* 2026-07-28 watches resources through subscriptions/listen, which
	 * we acknowledge without resourceSubscriptions: no subscribe there */
	return jb_built(o, jb_add(o, "subscribe", json_object_new_boolean(!modern)) ||
	    jb_add(o, "listChanged", json_object_new_boolean(0)));
}

static void
notify_uri(struct session *sess, const char *uri,
    void (*send)(void *, const char *, struct json_object *), void *arg)
{
	struct json_object *p;

	if (!session_is_subscribed(sess, uri))
		return;
	p = json_object_new_object();
	/* a notification that cannot be built is dropped, as progress is */
	if ((p = jb_built(p, jb_add(p, "uri", json_object_new_string(uri)))) != NULL)
		send(arg, "notifications/resources/updated", p);
}

void
resources_notify_changed(struct session *sess, const char *tool,
    const struct json_object *result,
    void (*send)(void *, const char *, struct json_object *), void *arg)
{
	struct json_object *sc, *files, *f, *uri, *path, *v;
	size_t i, n;
	char *u;

	if (!session_has_subscriptions(sess) || result == NULL ||
	    !json_object_object_get_ex(result, "structuredContent", &sc))
		return;
	if (strcmp(tool, "write_file") == 0) {
		/* it succeeded if it says how much it wrote */
		if (json_object_object_get_ex(sc, "bytes_written", &v) &&
		    json_object_object_get_ex(sc, "path", &path) &&
		    (u = wsr_uri(json_object_get_string(path))) != NULL) {
			notify_uri(sess, u, send, arg);
			free(u);
		}
		return;
	}
	if (!json_object_object_get_ex(sc, "files", &files) ||
	    !json_object_is_type(files, json_type_array))
		return;
	n = json_object_array_length(files);
	for (i = 0; i < n; i++) {
		f = json_object_array_get_idx(files, i);
		if (json_object_object_get_ex(f, "uri", &uri) &&
		    json_object_is_type(uri, json_type_string))
			notify_uri(sess, json_object_get_string(uri), send,
			    arg);
	}
}
