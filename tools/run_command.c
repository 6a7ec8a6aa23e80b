/*
 * run_command: one program from the policy's allow-list, with an argv array
 * (no shell: metacharacters in arguments are data), optional stdin, a
 * deadline within the policy and checked extra environment, in the
 * sandbox with the workspace writable at /workspace. The program name is a
 * key into the policy; its absolute path was resolved at start.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "render.h"
#include "sandboxed.h"
#include "sbcall.h"
#include "toolargs.h"

#define RUN_LIST_NAMES	2048	/* bytes of allowed names in a refusal */

/* Arguments that become C strings (stdin is data, passed whole). */
static const char *const nul_free[] = { "command", "args", "env", NULL };

/* "cat, grep, ..." of the allowed commands, bounded; owned. */
static char *
allowed_names(const struct policy *p)
{
	char *buf;
	size_t i, w = 0;

	if ((buf = malloc(RUN_LIST_NAMES)) == NULL)
		return NULL;
	buf[0] = '\0';
	for (i = 0; i < p->ncommands; i++) {
		int n = snprintf(buf + w, RUN_LIST_NAMES - w, "%s%s",
		    i ? ", " : "", p->commands[i].name);
		if (n < 0 || (size_t)n >= RUN_LIST_NAMES - w) {
			buf[w] = '\0';
			break;
		}
		w += (size_t)n;
	}
	return buf;
}

enum mcp_err
tool_run_command(const struct tool_call *call,
    const struct json_object *args,
    struct json_object **ret_result)
{
	const struct policy *p = call->env->policy;
	const char *name = toolargs_str(args, "command", "");
	const struct policy_command *cmd;
	const char *bad;
	struct json_object *r = NULL;
	struct sbcall c;
	const char **argv = NULL, *head[1];
	enum mcp_err st = MCP_OK;

	if ((bad = render_nul_key(args, nul_free)) != NULL) {
		r = render_nul_refusal(call->audit, bad);
		goto out;
	}
	if ((cmd = policy_find_command(p, name)) == NULL) {
		char *names = allowed_names(p);
		render_refused(call->audit, "command not allowed");
		r = tool_result_error("'%s' is not an allowed command, so it "
		    "was not run. Allowed: %s. Pass the program name in "
		    "command and each argument as one item of args (there is "
		    "no shell).", name, names ? names : "");
		free(names);
		goto out;
	}
	head[0] = cmd->name;	/* argv[0]: the name the model used */
	if ((argv = sbcall_argv(head, 1, toolargs_get(args, "args"))) == NULL)
		return MCP_ERR_NOMEM;
	memset(&c, 0, sizeof(c));
	c.program = cmd->path;
	c.argv = argv;
	c.env = toolargs_get(args, "env");
	sbcall_common_args(call, args, &c);
	c.workspace_writable = true;
	c.prog_binds = cmd->binds;
	c.what = "the command";
	c.network = true;
	st = sbcall_run(call, &c, &r);
 out:
	free(argv);
	return sbcall_return(st, r, ret_result);
}

/* The allowed names become the enum of "command"; timeout_ms's maximum
 * becomes the policy's. */
enum mcp_err
tool_run_command_tailor(const struct tool_env *env,
    struct json_object *tool)
{
	const struct policy *p = env->policy;
	struct json_object *cmd;	/* borrowed */
	struct json_object *en;		/* owned until added */
	enum mcp_err st;
	size_t i;

	if ((cmd = sbcall_schema_prop(tool, "command")) == NULL)
		return MCP_ERR_INTERNAL;
	if ((st = sbcall_tailor_timeout(tool, p)) != MCP_OK ||
	    (st = sbcall_tailor_network(tool, p)) != MCP_OK)
		return st;
	if (p->ncommands == 0)
		return MCP_OK;
	if ((en = json_object_new_array()) == NULL)
		return MCP_ERR_NOMEM;
	for (i = 0; i < p->ncommands; i++)
		json_object_array_add(en,
		    json_object_new_string(p->commands[i].name));
	json_object_object_del(cmd, "pattern");
	if (json_object_object_add(cmd, "enum", en) != 0) {
		json_object_put(en);
		return MCP_ERR_NOMEM;
	}
	return MCP_OK;
}

