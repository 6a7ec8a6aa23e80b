/*
 * run_code: a snippet in one of the policy's languages, in the sandbox.
 * python3 runs isolated (-I: no user site, no PYTHON* variables, no cwd on
 * sys.path); node and sh get the code as their -e / -c argument; C is
 * compiled and run inside the same sandbox, with the same limits and
 * deadline, by a fixed sh driver that receives the compiler path and the
 * source as positional arguments (data, never interpolated into the
 * script). Only languages whose toolchain was found at start are offered.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "render.h"
#include "sandboxed.h"
#include "sbcall.h"
#include "pool.h"
#include "warm.h"
#include "repl.h"
#include "toolargs.h"

/* execve refuses one argument longer than MAX_ARG_STRLEN (32 pages). */
#define CODE_MAX_BYTES		(128 * 1024 - 1)

/* Arguments that become C strings (stdin is data, passed whole). */
static const char *const nul_free[] = { "language", "code", "args", NULL };

/*
 * The C driver: $1 compiler, $2 source; the rest are the program's args.
 * The binary goes to the sandbox's private /tmp (exec allowed there).
 */
static const char c_driver[] =
    "cc=\"$1\"; printf '%s' \"$2\" > /tmp/main.c || exit 126; shift 2; "
    "\"$cc\" -std=gnu17 -O1 -pipe -o /tmp/main /tmp/main.c -lm || "
    "{ echo 'mcp-sandbox: compilation failed' >&2; exit 1; }; "
    "exec /tmp/main \"$@\"";

/* What a call with a session cannot have: a refusal, or NULL. */
static struct json_object *
session_refusal(const struct tool_call *call, const struct json_object *args,
    int l)
{
	const char *what = toolargs_get(args, "args") != NULL ? "args" :
	    toolargs_get(args, "stdin") != NULL ? "stdin" :
	    toolargs_get(args, "background") != NULL ? "background" : NULL;

	if (l == POLICY_LANG_C) {
		render_refused(call->audit, "session in c");
		return tool_result_error("The code was not run: c has no "
		    "session (it is compiled, not interpreted); sessions are "
		    "python3, node and sh. Call again without session.");
	}
	if (what != NULL) {
		render_refused(call->audit, "session with args or stdin");
		return tool_result_error("The code was not run: %s cannot be "
		    "given to a session, whose interpreter is already "
		    "running; set what the code needs in the code itself, or "
		    "call without session.", what);
	}
	return NULL;
}

static size_t
argv_count(const char *const *v)
{
	size_t n = 0;

	while (v[n] != NULL)
		n++;
	return n;
}

enum mcp_err
tool_run_code(const struct tool_call *call,
    const struct json_object *args,
    struct json_object **ret_result)
{
	const struct policy *p = call->env->policy;
	const char *lang_name = toolargs_str(args, "language", "");
	const char *code = toolargs_str(args, "code", "");
	const struct policy_language *lang;
	const char *bad;
	struct json_object *r = NULL;
	struct sbcall c;
	const char **argv = NULL, *head[6];
	char *warm_in = NULL;
	struct repl_call sess;
	size_t nhead = 0;
	enum mcp_err st = MCP_OK;
	int l;

	memset(&c, 0, sizeof(c));
	memset(&sess, 0, sizeof(sess));
	if ((bad = render_nul_key(args, nul_free)) != NULL) {
		r = render_nul_refusal(call->audit, bad);
		goto out;
	}
	l = policy_lang_from_name(lang_name);
	if (l < 0 || !(lang = &p->languages[l])->available) {
		render_refused(call->audit, "language not available");
		r = tool_result_error("The language '%s' is not available on "
		    "this server, so the code was not run; the enum of "
		    "language lists those that are.", lang_name);
		goto out;
	}
	if (strlen(code) > CODE_MAX_BYTES) {
		render_refused(call->audit, "code too long");
		r = tool_result_error("The code is %zu bytes; at most %d bytes "
		    "can be run. Write longer programs to the workspace with "
		    "write_file and run them with run_command.", strlen(code),
		    CODE_MAX_BYTES);
		goto out;
	}
	if (toolargs_get(args, "session") != NULL &&
	    (r = session_refusal(call, args, l)) != NULL)
		goto out;
	c.program = lang->path;
	c.prog_binds = lang->binds;
	switch (l) {
	case POLICY_LANG_PYTHON3:
		head[nhead++] = "python3";
		head[nhead++] = "-I";	/* isolated mode */
		head[nhead++] = "-c";
		head[nhead++] = code;
		break;
	case POLICY_LANG_NODE:
		head[nhead++] = "node";
		head[nhead++] = "-e";
		head[nhead++] = code;
		head[nhead++] = "--";
		break;
	case POLICY_LANG_SH:
		head[nhead++] = "sh";
		head[nhead++] = "-c";
		head[nhead++] = code;
		head[nhead++] = "sh";	/* $0; args are $1... */
		break;
	case POLICY_LANG_C:
		c.program = p->sh_path;
		head[nhead++] = "sh";
		head[nhead++] = "-c";
		head[nhead++] = c_driver;
		head[nhead++] = "sh";
		head[nhead++] = lang->path;
		head[nhead++] = code;
		break;
	}
	if ((argv = sbcall_argv(head, nhead, toolargs_get(args, "args"))) ==
	    NULL)
		return MCP_ERR_NOMEM;
	c.argv = argv;
	sbcall_common_args(call, args, &c);
	c.workspace_writable = true;
	c.what = "the code";
	c.network = true;
	if (toolargs_get(args, "session") != NULL) {
		sess.name = toolargs_str(args, "session", "");
		sess.lang = l;
		sess.restart = toolargs_bool(args, "restart", false);
		sess.code = code;
		c.session = &sess;
	} else if (l == POLICY_LANG_PYTHON3 && p->limits.warm_python > 0) {
		/* the same call, for a python started ahead if one waits */
		if ((warm_in = warm_stdin(code, argv + nhead, argv_count(
		    argv + nhead), c.stdin_data, c.stdin_len,
		    &c.warm_stdin_len)) == NULL) {
			st = MCP_ERR_NOMEM;
			goto out;
		}
		c.warm_stdin = warm_in;
	}
	st = sbcall_run(call, &c, &r);
 out:
	free(warm_in);
	free(argv);
	return sbcall_return(st, r, ret_result);
}

/* The enum of language lists only the toolchains found at start. */
enum mcp_err
tool_run_code_tailor(const struct tool_env *env,
    struct json_object *tool)
{
	const struct policy *p = env->policy;
	struct json_object *lang;	/* borrowed */
	struct json_object *en;		/* owned until added */
	enum mcp_err st;
	int l;

	if ((lang = sbcall_schema_prop(tool, "language")) == NULL)
		return MCP_ERR_INTERNAL;
	if ((st = sbcall_tailor_timeout(tool, p)) != MCP_OK ||
	    (st = sbcall_tailor_network(tool, p)) != MCP_OK)
		return st;
	if ((en = json_object_new_array()) == NULL)
		return MCP_ERR_NOMEM;
	for (l = 0; l < POLICY_LANG_COUNT; l++)
		if (p->languages[l].available)
			json_object_array_add(en,
			    json_object_new_string(policy_lang_name(l)));
	if (json_object_array_length(en) == 0) {
		/* nothing to offer: an enum that no string can match */
		json_object_array_add(en, json_object_new_string(
		    "(no language available)"));
	}
	if (json_object_object_add(lang, "enum", en) != 0) {
		json_object_put(en);
		return MCP_ERR_NOMEM;
	}
	return MCP_OK;
}

