/*
 * The sandboxed-call seam. Dispatch opens, cancels and closes a call here
 * (tool_call_open() and friends, declared in tool.h: the only way the
 * protocol layer reaches the sandbox), and each sandboxed tool's handler
 * runs its sandbox stage through sbcall_run(), the only way a tool starts
 * a sandbox.
 *
 * The shared path of the sandboxed tools from a plain request to sb_run()
 * and back to a CallToolResult. Trusts that args passed the schema; still
 * refuses environment names the policy forbids (LD_*, interpreter hooks),
 * because a schema pattern cannot express the whole list. Never waits for
 * a slot longer than the policy's queue_wait_ms.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "approve.h"
#include "egress.h"
#include "files.h"
#include "policy.h"
#include "render.h"
#include "repl.h"
#include "policy_binds.h"
#include "sbcall.h"
#include "slots.h"
#include "toolargs.h"
#include "workspace_files.h"

#define SBCALL_PROGRESS_MS	1000	/* one progress notification a second */

/*
 * What a sandbox with network reads to find its proxy: curl, wget,
 * Python, pip, git (libcurl) and most HTTP libraries read the first four;
 * npm its own config names. The proxy is at 127.0.0.1 inside the
 * sandbox's own netns, where nothing else is.
 */
#define SBCALL_PROXY_URL	"http://127.0.0.1:3128"
static const char *const proxy_env[] = {
	"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy",
	"npm_config_proxy", "npm_config_https_proxy", "PIP_PROXY",
};
#define SBCALL_NPROXY_ENV	(sizeof(proxy_env) / sizeof(proxy_env[0]))
/*
 * With secrets bound (issue 24): where the sandbox finds the bundle of
 * the system's CAs and the proxy's own, and the variables that point the
 * usual clients at it (OpenSSL's, Python requests', Node's, curl's,
 * pip's, git's). Each secret's NAME holds its placeholder.
 */
#define SBCALL_CA_PATH		"/run/mcp-sandbox/egress-ca.pem"
static const char *const ca_env[] = {
	"SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
	"CURL_CA_BUNDLE", "PIP_CERT", "GIT_SSL_CAINFO",
};
#define SBCALL_NCA_ENV	(sizeof(ca_env) / sizeof(ca_env[0]))
/* What a call with network adds to its environment at most. */
#define SBCALL_NET_ENV	(SBCALL_NPROXY_ENV + SBCALL_NCA_ENV + EGRESS_MAX_SECRETS)
_Static_assert(SB_PROXY_PORT == 3128, "SBCALL_PROXY_URL's port");

struct progress_bridge {
	const struct tool_call *call;
	uint32_t timeout_ms;
};

/* Bytes of the last line of output a progress message quotes. */
#define SBCALL_PROGRESS_LINE	120

/* The last non-empty line of what o kept, into line (capped, cut at a
 * character boundary); "" when none, or when it is not UTF-8 (a binary
 * tail has nothing to show a person, and json-c would copy it as is). */
static void
last_line(const struct sb_output *o, char *line, size_t len)
{
	size_t end = o->len, start;

	line[0] = '\0';
	while (end > 0 && (o->data[end - 1] == '\n' ||
	    o->data[end - 1] == '\r'))
		end--;
	for (start = end; start > 0 && o->data[start - 1] != '\n'; start--)
		;
	if (end == start)
		return;
	if (end - start >= len)
		start = end - (len - 1);
	/* not in the middle of a UTF-8 sequence */
	while (start < end && ((unsigned char)o->data[start] & 0xc0) == 0x80)
		start++;
	if (!render_utf8_valid(o->data + start, end - start) ||
	    memchr(o->data + start, '\0', end - start) != NULL)
		return;
	memcpy(line, o->data + start, end - start);
	line[end - start] = '\0';
}

static void
progress_cb(void *arg, uint64_t elapsed_ms, const struct sb_output *out,
    const struct sb_output *err)
{
	struct progress_bridge *b = arg;
	char msg[96 + SBCALL_PROGRESS_LINE + 16], line[SBCALL_PROGRESS_LINE];

	/* stdout's last line, else stderr's: what a person would watch */
	last_line(out, line, sizeof(line));
	if (line[0] == '\0')
		last_line(err, line, sizeof(line));
	(void)snprintf(msg, sizeof(msg), "running for %.1f s, %llu output "
	    "bytes%s%s", (double)elapsed_ms / 1000.0,
	    (unsigned long long)(out->total + err->total),
	    line[0] != '\0' ? "; last line: " : "", line);
	b->call->progress(b->call->cb_arg, (double)elapsed_ms,
	    (double)b->timeout_ms, msg);
}

static bool
cancel_polled(void *arg)
{
	return sb_cancel_fired(arg);
}

enum mcp_err
tool_call_open(struct tool_call *call, const struct tool_def *def)
{
	call->cancel = NULL;
	if (def->quick)
		return MCP_OK;
	if ((call->cancel = malloc(sizeof(*call->cancel))) == NULL)
		return MCP_ERR_NOMEM;
	if (sb_cancel_init(call->cancel) != 0) {
		free(call->cancel);
		call->cancel = NULL;
		return MCP_ERR_INTERNAL;
	}
	return MCP_OK;
}

void
tool_call_cancel(struct tool_call *call)
{
	if (call->cancel != NULL)
		sb_cancel_fire(call->cancel);
}

void
tool_call_close(struct tool_call *call)
{
	if (call->cancel == NULL)
		return;
	sb_cancel_fini(call->cancel);
	free(call->cancel);
	call->cancel = NULL;
}

uint32_t
sbcall_timeout(const struct tool_call *call, int64_t requested_ms)
{
	const struct policy_limits *l = &call->env->policy->limits;
	uint32_t max = call->max_timeout_ms != 0 ? call->max_timeout_ms :
	    l->max_timeout_ms;

	if (requested_ms <= 0)
		return l->timeout_ms;
	if (requested_ms > max)
		return max;
	return (uint32_t)requested_ms;
}

void
sbcall_common_args(const struct tool_call *call,
    const struct json_object *args, struct sbcall *c)
{
	const struct json_object *in = toolargs_get(args, "stdin");

	if (in != NULL && json_object_is_type(in, json_type_string)) {
		c->stdin_data = json_object_get_string(
		    (struct json_object *)in);
		c->stdin_len = (size_t)json_object_get_string_len(in);
	}
	c->timeout_ms = sbcall_timeout(call, toolargs_int(args, "timeout_ms",
	    0));
	c->network_arg = toolargs_get(args, "network") == NULL ? -1 :
	    toolargs_bool(args, "network", false) ? 1 : 0;
}

enum mcp_err
sbcall_return(enum mcp_err st, struct json_object *r,
    struct json_object **ret_result)
{
	if (st != MCP_OK) {
		json_object_put(r);
		return st;
	}
	if (r == NULL)
		return MCP_ERR_NOMEM;
	*ret_result = r;
	return MCP_OK;
}

/* envp: policy base, then overrides (replacing same names). Owned array of
 * owned strings; NULL with *bad naming a refused variable or on ENOMEM. */
static int
set_var(char **envp, size_t *n, size_t max, const char *name,
    const char *value)
{
	size_t nl = strlen(name), k;

	for (k = 0; k < *n; k++)
		if (strncmp(envp[k], name, nl) == 0 && envp[k][nl] == '=')
			break;
	if (k == *n && *n + 1 >= max)
		return -1;
	if (k < *n)
		free(envp[k]);
	else
		(*n)++;
	if (asprintf(&envp[k], "%s=%s", name, value) < 0) {
		envp[k] = NULL;
		return -1;
	}
	return 0;
}

/* The proxy variables, over any of the same name; with secrets bound,
 * their placeholders and the CA bundle's variables. */
static int
add_proxy_env(const struct policy *p, char **envp, size_t max)
{
	const struct egress_secrets *ss = p->egress->secrets;
	char ph[EGRESS_MAX_SECRET + 1];
	size_t n = 0, i;

	while (envp[n] != NULL)
		n++;
	for (i = 0; i < SBCALL_NPROXY_ENV; i++)
		if (set_var(envp, &n, max, proxy_env[i], SBCALL_PROXY_URL) != 0)
			return -1;
	for (i = 0; ss != NULL && i < ss->n; i++) {
		memcpy(ph, ss->s[i].placeholder, ss->s[i].len);
		ph[ss->s[i].len] = '\0';
		if (set_var(envp, &n, max, ss->s[i].name, ph) != 0)
			return -1;
	}
	for (i = 0; ss != NULL && ss->n > 0 && i < SBCALL_NCA_ENV; i++)
		if (set_var(envp, &n, max, ca_env[i], SBCALL_CA_PATH) != 0)
			return -1;
	return 0;
}

static char **
build_env(const struct policy *p, const struct json_object *over,
    const char **bad)
{
	size_t n = 0, i, max = p->nenv + SBCALL_MAX_ENV + SBCALL_NET_ENV + 1;
	char **envp;

	*bad = NULL;
	if ((envp = calloc(max, sizeof(char *))) == NULL)
		return NULL;
	for (i = 0; i < p->nenv; i++)
		if (asprintf(&envp[n++], "%s=%s", p->env[i].name,
		    p->env[i].value) < 0)
			goto fail;
	if (over == NULL)
		return envp;
	json_object_object_foreach((struct json_object *)over, name, val) {
		size_t nl = strlen(name), k;
		const char *v = json_object_get_string(val);

		if (!policy_env_name_ok(name) ||
		    policy_env_name_forbidden(name)) {
			*bad = name;
			goto fail;
		}
		for (k = 0; k < n; k++)
			if (strncmp(envp[k], name, nl) == 0 &&
			    envp[k][nl] == '=')
				break;
		if (k == n && n + 1 >= max) {
			*bad = name;
			goto fail;
		}
		if (k < n)
			free(envp[k]);
		else
			n++;
		if (asprintf(&envp[k], "%s=%s", name, v ? v : "") < 0) {
			envp[k] = NULL;
			goto fail;
		}
	}
	return envp;
 fail:
	for (i = 0; i < max; i++)
		free(envp[i]);
	free(envp);
	return NULL;
}

/* sb_listener_fn: the sandbox's listener, to the call's proxy. */
static int
proxy_event(void *arg, int lfd, enum sb_net_event ev)
{
	switch (ev) {
	case SB_NET_LISTENING:
		return egress_call_start(arg, lfd);
	case SB_NET_READY:
		return egress_call_accept(arg);
	case SB_NET_CLOSING:
		egress_call_end(arg);
		return 0;
	}
	return -EINVAL;
}

static void
env_free(char **envp)
{
	size_t i;

	for (i = 0; envp != NULL && envp[i] != NULL; i++)
		free(envp[i]);
	free(envp);
}

/* The binds of one run: prog's (may be NULL), then the policy's allowed
 * paths, into out[max]; *n set. Borrowed strings. */
static void
binds_request(const struct policy *p, const struct prog_binds *prog,
    struct sb_bind *out, size_t max, size_t *n)
{
	size_t i, k = 0;

	for (i = 0; prog != NULL && i < prog->n && k < max; i++, k++) {
		out[k].host_path = prog->b[i].host;
		out[k].sandbox_path = prog->b[i].inside;
		out[k].writable = false;
	}
	for (i = 0; i < p->nallow && k < max; i++, k++) {
		out[k].host_path = p->allow[i].path;
		out[k].sandbox_path = p->allow[i].path;
		out[k].writable = p->allow[i].writable;
	}
	*n = k;
}

void
sbcall_request(const struct policy *p, const struct sbcall *c,
    const char *workspace, const char *const *envp,
    struct sb_bind binds[SBCALL_MAX_BINDS], struct sb_request *req)
{
	size_t nb = 0;

	memset(req, 0, sizeof(*req));
	/* one kept for the CA bundle of a call with secrets (run()) */
	binds_request(p, c->prog_binds, binds, SBCALL_MAX_BINDS - 1, &nb);
	req->program = c->program;
	req->argv = c->argv;
	req->envp = envp;
	req->stdin_data = c->stdin_data;
	req->stdin_len = c->stdin_len;
	req->workspace_host = c->workspace_host != NULL ? c->workspace_host :
	    workspace;
	req->workspace_path = c->workspace_path != NULL ? c->workspace_path :
	    SB_DEFAULT_WORKSPACE;
	req->workspace_writable = c->workspace_writable;
	req->workspace_protect = (const char *const *)p->protect;
	req->binds = nb > 0 ? binds : NULL;
	req->nbinds = nb;
	sb_limits_default(&req->limits);
	req->limits.wall_ms = c->timeout_ms != 0 ? c->timeout_ms :
	    p->limits.timeout_ms;
	/* CPU time per process: the whole deadline, rounded up */
	req->limits.cpu_s = (req->limits.wall_ms + 999) / 1000;
	req->limits.as_bytes = (uint64_t)p->limits.memory_mb << 20;
	req->limits.fsize_bytes = (uint64_t)p->limits.file_size_mb << 20;
	req->limits.nproc = p->limits.processes;
	req->limits.tmp_bytes = (uint64_t)p->limits.tmp_mb << 20;
	req->limits.stdout_cap = p->limits.output_bytes;
	req->limits.stderr_cap = p->limits.output_bytes;
	req->network = SB_NET_NONE;
}

char **
sbcall_env(const struct policy *p)
{
	const char *bad;

	return build_env(p, NULL, &bad);
}

void
sbcall_env_free(char **envp)
{
	env_free(envp);
}

/*
 * A sandbox built ahead for c's shape (pool.h), or NULL: the run is cold.
 * None has a proxy (a call with network is cold), nor a skill's copy.
 */
static struct sb_started *
take_built(const struct tool_prestart *ps, const struct sbcall *c,
    const struct sb_request *req, const struct egress_call *ec,
    bool long_deadline)
{
	struct tool_shape sh = { c->warm_stdin != NULL ? TOOL_SHAPE_PYTHON :
	    TOOL_SHAPE_EXEC, c->prog_binds, req->workspace_host };

	/* one built ahead has the CPU limit of the plain maximum deadline:
	 * not for a task's longer one */
	if (ps->take == NULL || ec != NULL || c->workspace_host != NULL ||
	    !c->workspace_writable || c->empty_env || long_deadline)
		return NULL;
	return ps->take(ps->arg, &sh);
}

/*
 * The run of c, with the files of its directory walked into before once a
 * slot is held. MCP_OK and either *ret_refusal (an isError result, the
 * audit facts filled) or a filled *res (it ran; sb_result_fini it in any
 * case). Any other return is an internal error.
 */
static enum mcp_err
run(const struct tool_call *call, const struct sbcall *c,
    struct wsf_scan *before, struct sb_result *res,
    struct json_object **ret_refusal)
{
	const struct tool_env *env = call->env;
	const struct policy *p = env->policy;
	struct progress_bridge bridge = { call, 0 };
	struct sb_bind binds[SBCALL_MAX_BINDS];
	struct sb_request req;
	struct json_object *refusal = NULL;
	const char *bad = NULL;
	char **envp = NULL;
	enum tool_slot_rc slot = TOOL_SLOT_BUSY;
	struct sb_started *started;
	struct egress_call *ec = NULL;
	struct egress_rules *own_rules = NULL;	/* a grant's, owned */
	struct tool_prestart ps;
	struct sb_ctx *sb;
	char why[320];
	bool have_slot = false, net, nomem, granted;
	int rc;

	memset(res, 0, sizeof(*res));
	memset(&req, 0, sizeof(req));
	tool_env_sandbox(env, &sb, &ps, why, sizeof(why));
	if (sb == NULL) {
		render_refused(call->audit, "no sandbox");
		refusal = tool_result_error("%s was not run: the sandbox is "
		    "not available on this server%s%s (see mcp-sandbox "
		    "--check).", c->what, why[0] != '\0' ? ": " : "", why);
		goto out;
	}
	granted = call->granted != NULL && call->granted->ndomains > 0 &&
	    c->network;
	net = c->network && c->network_arg != 0 &&
	    (policy_network_enabled(p) || granted);
	if (c->network_arg == 1 && !net) {
		render_refused(call->audit, "network not allowed");
		refusal = tool_result_error("%s was not run: the call asked for "
		    "network: true, but %s. A call can narrow the policy, never "
		    "widen it: call again without network.", c->what,
		    c->network ? "the server's policy allows no network (no "
		    "network.allowed_domains)" : "this tool never has network");
		goto out;
	}
	if (c->empty_env)
		envp = calloc(1 + SBCALL_NET_ENV, sizeof(char *));
	else
		envp = build_env(p, c->env, &bad);
	if (envp == NULL) {
		if (bad == NULL)
			return MCP_ERR_NOMEM;
		render_refused(call->audit, "environment variable refused");
		refusal = tool_result_error("%s was not run: the environment "
		    "variable '%s' may not be set (loader, interpreter and "
		    "shell hooks such as LD_*, PYTHON*, NODE_OPTIONS, BASH_ENV "
		    "are refused). Remove it and call again.", c->what, bad);
		goto out;
	}
	if (net) {
		/* a grant's hosts: the call's own copy of the rules */
		if (granted && (own_rules = tool_ask_rules(p->egress,
		    call->granted)) == NULL) {
			env_free(envp);
			return MCP_ERR_NOMEM;
		}
		if ((ec = egress_call_new(own_rules != NULL ? own_rules :
		    p->egress)) == NULL ||
		    add_proxy_env(p, envp, (c->empty_env ? 0 : p->nenv +
		    SBCALL_MAX_ENV) + SBCALL_NET_ENV + 1) != 0) {
			env_free(envp);
			egress_call_free(ec);
			free(own_rules);
			return MCP_ERR_NOMEM;
		}
	}
	sbcall_request(p, c, call->workspace, (const char *const *)envp,
	    binds, &req);
	if (ec != NULL && call->ask_host != NULL) {
		struct egress_asker asker = { call->ask_host, call->ask_abort,
		    call->cb_arg };

		egress_call_set_asker(ec, &asker);
	}
	if (ec != NULL && p->ca_bundle != NULL) {
		binds[req.nbinds].host_path = p->ca_bundle;
		binds[req.nbinds].sandbox_path = SBCALL_CA_PATH;
		binds[req.nbinds].writable = false;
		req.binds = binds;
		req.nbinds++;
	}
	if (ec != NULL) {
		req.network = SB_NET_PROXY;
		req.net_listener = proxy_event;
		req.net_arg = ec;
	}
	bridge.timeout_ms = req.limits.wall_ms;
	/* a session's call waits for its turn before it takes a slot */
	if (c->session != NULL) {
		const char *no;

		if ((refusal = repl_enter(call, c->session, &nomem)) != NULL)
			goto out;
		if (nomem) {
			env_free(envp);
			egress_call_free(ec);
			free(own_rules);
			return MCP_ERR_NOMEM;
		}
		if ((no = repl_net_refusal(c->session, ec != NULL)) != NULL) {
			render_refused(call->audit, "network of a session");
			refusal = tool_result_error("%s was not run: %s", c->what,
			    no);
			goto out;
		}
	}
	req.progress = progress_cb;
	req.progress_arg = &bridge;
	req.progress_ms = SBCALL_PROGRESS_MS;

	if (env->slots != NULL) {
		slot = tool_slots_acquire(env->slots,
		    call->cancel != NULL ? cancel_polled : NULL, call->cancel);
		switch (slot) {
		case TOOL_SLOT_OK:
			have_slot = true;
			break;
		case TOOL_SLOT_BUSY:
			render_refused(call->audit, "busy");
			refusal = tool_result_error("%s was not run: the "
			    "server is busy (%u sandboxes running and %u calls "
			    "waiting). Try again in a moment.", c->what,
			    p->limits.max_sandboxes, p->limits.queue);
			goto out;
		case TOOL_SLOT_TIMEOUT:
			render_refused(call->audit, "busy: queue wait expired");
			refusal = tool_result_error("%s was not run: the "
			    "server is busy; no sandbox became free within "
			    "%u ms. Try again in a moment.", c->what,
			    p->limits.queue_wait_ms);
			goto out;
		case TOOL_SLOT_CANCELLED:
			render_refused(call->audit, "cancelled while queued");
			refusal = tool_result_error("%s was not run: the call "
			    "was cancelled.", c->what);
			goto out;
		}
	}
	if (call->cancel != NULL && sb_cancel_fired(call->cancel)) {
		render_refused(call->audit, "cancelled");
		refusal = tool_result_error("%s was not run: the call was "
		    "cancelled.", c->what);
		goto out;
	}
	(void)wsf_scan_take(req.workspace_host, before);
	if (c->session != NULL)
		rc = repl_turn(c->session, sb, &ps, c->prog_binds, &req, ec,
		    call->cancel, res);
	else if ((started = take_built(&ps, c, &req, ec, req.limits.wall_ms >
	    p->limits.max_timeout_ms)) != NULL) {
		/* a python started ahead: the call is its stdin */
		if (c->warm_stdin != NULL) {
			req.stdin_data = c->warm_stdin;
			req.stdin_len = c->warm_stdin_len;
		}
		rc = sb_finish(started, &req, call->cancel, res);
	} else
		rc = sb_run(sb, &req, call->cancel, res);
	if (rc < 0)
		refusal = render_sandbox_failure(res, c->what, call->audit);
 out:
	if (ec != NULL) {
		/* the sandbox is gone: end its connections, keep the records */
		egress_call_end(ec);
		call->audit->network = render_network(ec);
		egress_call_free(ec);
	}
	free(own_rules);
	if (have_slot)
		tool_slots_release(env->slots);
	if (c->session != NULL)
		repl_leave(c->session);
	env_free(envp);
	if (refusal == NULL && (call->audit->refused || sb == NULL))
		return MCP_ERR_NOMEM;
	*ret_refusal = refusal;
	return MCP_OK;
}

/*
 * Adds to r what the run of c created or changed since before: with links
 * for the workspace, without for a directory of c's own. always:
 * structuredContent gets files and files_omitted even when none changed
 * (false for a skill script's own JSON object, which keeps its shape then).
 */
static enum mcp_err
report_files(const struct tool_call *call, const struct sbcall *c,
    const struct wsf_scan *before, bool always, struct json_object *r)
{
	if (c->workspace_host != NULL)
		return wsf_report(c->workspace_host, before, NULL, always, r);
	return wsf_report(call->workspace, before, FILES_URI_PREFIX, always,
	    r);
}

enum mcp_err
sbcall_run(const struct tool_call *call, const struct sbcall *c,
    struct json_object **ret_result)
{
	struct json_object *r = NULL;
	struct sb_result res;
	struct wsf_scan before;
	enum mcp_err st;
	bool always = true;

	memset(&before, 0, sizeof(before));
	if ((st = run(call, c, &before, &res, &r)) == MCP_OK && r == NULL) {
		if (c->render != NULL)
			r = c->render(&res, c, call->audit, &always);
		else
			r = render_run_result(&res, c->what, c->timeout_ms,
			    call->audit);
		if (r != NULL && c->session != NULL)
			st = repl_add_result(c->session, r);
		if (r != NULL && st == MCP_OK)
			st = report_files(call, c, &before, always, r);
	}
	wsf_scan_free(&before);
	sb_result_fini(&res);
	return sbcall_return(st, r, ret_result);
}

const char **
sbcall_argv(const char *const *head, size_t nhead,
    const struct json_object *extra)
{
	size_t n = extra != NULL ? json_object_array_length(extra) : 0, i;
	const char **argv;

	if ((argv = calloc(nhead + n + 1, sizeof(char *))) == NULL)
		return NULL;
	for (i = 0; i < nhead; i++)
		argv[i] = head[i];
	for (i = 0; i < n; i++)
		argv[nhead + i] = json_object_get_string(
		    json_object_array_get_idx(extra, i));
	return argv;
}

struct json_object *
sbcall_schema_prop(struct json_object *tool, const char *prop)
{
	struct json_object *schema, *props, *v;	/* borrowed */

	if (!json_object_object_get_ex(tool, "inputSchema", &schema) ||
	    !json_object_object_get_ex(schema, "properties", &props) ||
	    !json_object_object_get_ex(props, prop, &v))
		return NULL;
	return v;
}

enum mcp_err
sbcall_tailor_timeout(struct json_object *tool, const struct policy *p)
{
	struct json_object *to, *max;	/* borrowed; owned until added */

	if ((to = sbcall_schema_prop(tool, "timeout_ms")) == NULL)
		return MCP_ERR_INTERNAL;
	/* past max_timeout_ms, up to the approvals ceiling: asked first */
	if (p->limits.ask_timeout_ms > p->limits.max_timeout_ms &&
	    sbcall_set_description(to, "Deadline in milliseconds (default: "
	    "the policy's). Past the policy's maximum the user is asked "
	    "first, through the client, up to this schema's maximum. The "
	    "whole process tree is killed at the deadline.") != MCP_OK)
		return MCP_ERR_NOMEM;
	if ((max = json_object_new_int64(p->limits.ask_timeout_ms >
	    p->limits.max_timeout_ms ? p->limits.ask_timeout_ms :
	    p->limits.max_timeout_ms)) == NULL)
		return MCP_ERR_NOMEM;
	if (json_object_object_add(to, "maximum", max) != 0) {
		json_object_put(max);
		return MCP_ERR_NOMEM;
	}
	return MCP_OK;
}

/* Bytes of a description with its network sentence replaced. */
#define SBCALL_DESCRIPTION_MAX	4096

enum mcp_err
sbcall_tailor_network(struct json_object *tool, const struct policy *p)
{
	static const char *const from[] = { "no network", "No network" };
	struct json_object *d;	/* borrowed */
	char buf[SBCALL_DESCRIPTION_MAX], list[1024];
	const char *s, *at = NULL;
	size_t i, w = 0;
	int n;

	if (!policy_network_enabled(p) ||
	    !json_object_object_get_ex(tool, "description", &d))
		return MCP_OK;
	s = json_object_get_string(d);
	for (i = 0; i < 2 && at == NULL; i++)
		if ((at = strstr(s, from[i])) != NULL)
			break;
	if (at == NULL)
		return MCP_OK;
	list[0] = '\0';
	for (i = 0; i < p->egress->nallow; i++) {
		n = snprintf(list + w, sizeof(list) - w, "%s%s", i ? ", " : "",
		    p->egress->allow[i].text);
		if (n < 0 || (size_t)n >= sizeof(list) - w)
			break;
		w += (size_t)n;
	}
	n = snprintf(buf, sizeof(buf), "%.*s%s network only through the "
	    "sandbox's HTTP(S) proxy to %s (HTTP_PROXY and HTTPS_PROXY are "
	    "set, no DNS inside; a refusal is a 403 saying why; network: false "
	    "runs a call without it)%s", (int)(at - s), s,
	    at[0] == 'N' ? "Has" : "has", list, at + strlen(from[0]));
	if (n < 0 || (size_t)n >= sizeof(buf))
		return MCP_OK;	/* too long to say: the old text stays */
	return sbcall_set_description(tool, buf);
}

enum mcp_err
sbcall_set_description(struct json_object *obj, const char *text)
{
	struct json_object *s = json_object_new_string(text);	/* owned */

	if (s == NULL)
		return MCP_ERR_NOMEM;
	if (json_object_object_add(obj, "description", s) != 0) {
		json_object_put(s);
		return MCP_ERR_NOMEM;
	}
	return MCP_OK;
}
