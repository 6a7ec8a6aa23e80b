/*
 * Shared helpers of the policy-tool unit tests: a finalized default policy,
 * the real toolset built for it (tools/registry.c, the only place that names
 * tools), a fresh workspace, a tool_call with no-op callbacks, and a call
 * path that validates the arguments against the toolset's compiled,
 * policy-tailored input schema and the structuredContent against its output
 * schema, as dispatch does.
 */
#ifndef TOOLS_HARNESS_H
#define TOOLS_HARNESS_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "policy.h"
#include "registry.h"
#include "tool.h"
#include "validator.h"
#include "workspace.h"

struct th {
	struct policy *p;
	struct tool_env env;	/* sb and slots NULL unless a test sets them */
	struct toolset *ts;	/* built for env at init */
	struct tool_audit audit;
	struct tool_call call;
	struct workspace *ws;
	char path[PATH_MAX];	/* scratch */
};

static void
th_progress(void *arg, double progress, double total, const char *message)
{
	(void)arg;
	(void)progress;
	(void)total;
	(void)message;
}

static void
th_log(void *arg, enum tool_log_level level, const char *logger,
    const char *text)
{
	(void)arg;
	(void)level;
	(void)logger;
	(void)text;
}

/* A default policy changed by flags (pairs, NULL-terminated), finalized. */
static __attribute__((unused)) void
th_init_flags(struct th *t, const char *const *flags)
{
	char err[512];

	memset(t, 0, sizeof(*t));
	t->p = policy_new_default(err, sizeof(err));
	ck_assert_msg(t->p != NULL, "%s", err);
	for (; flags != NULL && flags[0] != NULL; flags += 2)
		ck_assert_msg(policy_set_flag(t->p, flags[0], flags[1], err,
		    sizeof(err)) == 0, "%s", err);
	ck_assert_msg(policy_finalize(t->p, err, sizeof(err)) == 0, "%s", err);
	t->env.policy = t->p;
	/* the tailors read only the policy; handlers read env at call time */
	ck_assert_msg(toolset_new(&t->env, &t->ts, err, sizeof(err)) ==
	    MCP_OK, "%s", err);
	ck_assert_msg(workspace_open(NULL, (uid_t)-1, &t->ws, err,
	    sizeof(err)) == 0, "%s", err);
	t->call.env = &t->env;
	t->call.workspace = t->ws->path;
	t->call.audit = &t->audit;
	t->call.progress = th_progress;
	t->call.log = th_log;
}

static __attribute__((unused)) void
th_init(struct th *t)
{
	th_init_flags(t, NULL);
}

static __attribute__((unused)) void
th_fini(struct th *t)
{
	workspace_free(t->ws);
	toolset_free(t->ts);
	policy_free(t->p);
}

/* Absolute host path of rel in the workspace (in t->path). */
static __attribute__((unused)) const char *
th_ws(struct th *t, const char *rel)
{
	(void)snprintf(t->path, sizeof(t->path), "%s/%s", t->ws->path, rel);
	return t->path;
}

static __attribute__((unused)) void
th_write(struct th *t, const char *rel, const char *data, size_t len)
{
	FILE *f = fopen(th_ws(t, rel), "wbe");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

/* The toolset's entry for the tool called name (borrowed). */
static const struct tool_entry *
th_entry(struct th *t, const char *name)
{
	const struct tool_entry *e = toolset_lookup(t->ts, name);

	ck_assert_msg(e != NULL, "no tool called %s in the toolset", name);
	return e;
}

/* true if args_json passes the input schema of the tool called name. */
static __attribute__((unused)) bool
th_valid(struct th *t, const char *name, const char *args_json)
{
	const struct tool_entry *e = th_entry(t, name);
	struct json_object *args = json_tokener_parse(args_json);
	struct schema_error err;
	bool ok;

	ck_assert_msg(args != NULL, "bad test JSON: %s", args_json);
	ok = schema_validate(e->input, args, &err) == MCP_OK;
	json_object_put(args);
	return ok;
}

/*
 * Calls the tool called name with args_json (which must pass its input
 * schema). The audit is reset first. Returns the owned result; the
 * structuredContent of a result that is not an error must pass the output
 * schema.
 */
static __attribute__((unused)) struct json_object *
th_call(struct th *t, const char *name, const char *args_json)
{
	const struct tool_entry *e = th_entry(t, name);
	struct json_object *args, *res = NULL, *sc, *ie;
	struct schema_error err;

	memset(&t->audit, 0, sizeof(t->audit));
	t->audit.exit_code = -1;
	args = json_tokener_parse(args_json);
	ck_assert_msg(args != NULL, "bad test JSON: %s", args_json);
	ck_assert_msg(schema_validate(e->input, args, &err) == MCP_OK,
	    "%s: invalid args %s: %s", name, args_json, err.message);
	ck_assert_int_eq(e->def->handler(&t->call, args, &res), MCP_OK);
	ck_assert_ptr_nonnull(res);
	json_object_put(args);
	if (e->output != NULL &&
	    !(json_object_object_get_ex(res, "isError", &ie) &&
	    json_object_get_boolean(ie)) &&
	    json_object_object_get_ex(res, "structuredContent", &sc))
		ck_assert_msg(schema_validate(e->output, sc, &err) == MCP_OK,
		    "%s: output fails its schema: %s: %s", name,
		    err.message, json_object_to_json_string(sc));
	return res;
}

/*
 * Calls the tool called name with args_json that its tailored input schema
 * refuses (asserted), as if dispatch had not validated: for the handler's
 * own check behind the schema, which the server never reaches. The audit
 * is reset first. Returns the owned result.
 */
static __attribute__((unused)) struct json_object *
th_call_past_schema(struct th *t, const char *name, const char *args_json)
{
	const struct tool_entry *e = th_entry(t, name);
	struct json_object *args, *res = NULL;

	ck_assert_msg(!th_valid(t, name, args_json),
	    "%s: the input schema accepts %s", name, args_json);
	memset(&t->audit, 0, sizeof(t->audit));
	t->audit.exit_code = -1;
	args = json_tokener_parse(args_json);
	ck_assert_int_eq(e->def->handler(&t->call, args, &res), MCP_OK);
	ck_assert_ptr_nonnull(res);
	json_object_put(args);
	return res;
}

static __attribute__((unused)) bool
th_is_error(struct json_object *res)
{
	struct json_object *ie;

	return json_object_object_get_ex(res, "isError", &ie) &&
	    json_object_get_boolean(ie);
}

/* content[0].text, or "" */
static __attribute__((unused)) const char *
th_text(struct json_object *res)
{
	struct json_object *c, *b, *x;

	if (!json_object_object_get_ex(res, "content", &c) ||
	    (b = json_object_array_get_idx(c, 0)) == NULL ||
	    !json_object_object_get_ex(b, "text", &x))
		return "";
	return json_object_get_string(x);
}

/* structuredContent.key (borrowed) or NULL */
static __attribute__((unused)) struct json_object *
th_sc(struct json_object *res, const char *key)
{
	struct json_object *sc, *v;

	if (!json_object_object_get_ex(res, "structuredContent", &sc) ||
	    !json_object_object_get_ex(sc, key, &v))
		return NULL;
	return v;
}

#endif
