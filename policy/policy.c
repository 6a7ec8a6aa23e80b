/*
 * Policy: embedded default, JSON config overlay, flag overrides and the
 * --print-config rendering. Config files and flags are user input: every
 * key is known, every number is range-checked, and an error names the file,
 * the line and the key. Resolution against the machine is policy_resolve.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "policy.h"
#include "policy_internal.h"
#include "policy_binds.h"
#include "policy_network.h"
#include "policy_secret.h"

#define POLICY_JSON_DEPTH	8	/* the config is three levels deep */

/* The embedded default (generated from default-policy.json). */
extern const char policy_default_json[];

struct limit_def {
	const char *key;	/* config key under "limits" */
	const char *flag;	/* command-line flag */
	size_t off;		/* offset in struct policy_limits */
	uint32_t min, max;	/* accepted range, inclusive */
};

#define LIM(f) offsetof(struct policy_limits, f)
static const struct limit_def limit_defs[] = {
	{ "timeout_ms", "timeout-ms", LIM(timeout_ms), 100, 600000 },
	{ "max_timeout_ms", "max-timeout-ms", LIM(max_timeout_ms), 100,
	    600000 },
	/* a task's deadline, and how long its result is held: a day at most */
	{ "task_timeout_ms", "task-timeout-ms", LIM(task_timeout_ms), 100,
	    86400000 },
	{ "task_ttl_ms", "task-ttl-ms", LIM(task_ttl_ms), 100, 86400000 },
	{ "task_threshold_ms", "task-threshold-ms", LIM(task_threshold_ms), 0,
	    86400000 },
	{ "memory_mb", "memory-mb", LIM(memory_mb), 16, 65536 },
	{ "processes", "max-processes", LIM(processes), 1, 4096 },
	{ "file_size_mb", "max-file-size-mb", LIM(file_size_mb), 1, 4096 },
	{ "output_bytes", "output-cap", LIM(output_bytes), 1024, 64 << 20 },
	{ "max_sandboxes", "max-sandboxes", LIM(max_sandboxes), 0, 256 },
	{ "queue", "queue", LIM(queue), 0, 4096 },
	{ "queue_wait_ms", "queue-wait-ms", LIM(queue_wait_ms), 1, 600000 },
	{ "read_bytes", "read-cap", LIM(read_bytes), 1024, 64 << 20 },
	{ "sql_rows", "sql-rows", LIM(sql_rows), 1, 100000 },
	{ "sql_bytes", "sql-bytes", LIM(sql_bytes), 1024, 64 << 20 },
	{ "sql_timeout_ms", "sql-timeout-ms", LIM(sql_timeout_ms), 10, 600000 },
	{ "tmp_mb", "tmp-mb", LIM(tmp_mb), 1, 4096 },
	{ "workspace_mb", "workspace-mb", LIM(workspace_mb), 0, 65536 },
	{ "workspaces_mb", "workspaces-mb", LIM(workspaces_mb), 0, 1 << 20 },
	{ "warm_python", "warm-python", LIM(warm_python), 0,
	    POLICY_MAX_WARM_PYTHON },
	{ "pool_size", "pool-size", LIM(pool_size), 0, POLICY_MAX_POOL },
	/* run_code sessions (tools/repl.h): idle end, age end, how many;
	 * each holds a sandbox (and its memory) for its life */
	{ "session_idle_ms", "session-idle-ms", LIM(session_idle_ms), 1000,
	    86400000 },
	{ "session_max_age_ms", "session-max-age-ms", LIM(session_max_age_ms),
	    1000, 86400000 },
	{ "max_sessions", "max-sessions", LIM(max_sessions), 0,
	    POLICY_MAX_SESSIONS },
	{ "sessions_per_client", "sessions-per-client",
	    LIM(sessions_per_client), 1, POLICY_MAX_SESSIONS },
	/* the sandbox library refuses a range below 65536 or past 2^31-1 */
	{ "uid_base", "uid-base", LIM(uid_base), 0, 0x7fffffffu },
	/*
	 * Approvals (server/approval.c): the longest deadline a call may get
	 * with the user's yes (0: none above max_timeout_ms; a day, as a
	 * task's); how long a call waits for the answer (a person reads the
	 * question: an hour at most, the call holds its request meanwhile);
	 * how long a grant "for this session" lasts where there is no MCP
	 * session (2026-07-28: the principal's), a day at most.
	 */
	{ "ask_timeout_ms", "ask-timeout-ms", LIM(ask_timeout_ms), 0,
	    86400000 },
	{ "ask_wait_ms", "ask-wait-ms", LIM(ask_wait_ms), 1000, 3600000 },
	{ "grant_ttl_ms", "grant-ttl-ms", LIM(grant_ttl_ms), 1000, 86400000 },
};
#undef LIM
#define NLIMITS (sizeof(limit_defs) / sizeof(limit_defs[0]))

const struct policy_flag policy_flags[] = {
	{ "workspace", required_argument, "DIR",
	    "use DIR as the workspace (default: a fresh private one)" },
	{ "allow-command", required_argument, "NAME",
	    "add a program (name on PATH, or absolute path) to run_command" },
	{ "deny-command", required_argument, "NAME",
	    "remove a program from run_command's allow-list" },
	{ "languages", required_argument, "LIST",
	    "run_code languages, comma-separated (python3,node,sh,c)" },
	{ "skills-dir", required_argument, "DIR",
	    "offer the Agent Skills in DIR to run_skill_script" },
	{ "database", required_argument, "NAME=PATH",
	    "offer the SQLite file PATH to query_sqlite as NAME" },
	{ "env", required_argument, "NAME=VALUE",
	    "set a variable in every sandboxed tool's environment" },
	{ "audit-log", required_argument, "PATH",
	    "append one JSON line per tool call to PATH" },
	{ "timeout-ms", required_argument, "MS", "default deadline of a call" },
	{ "max-timeout-ms", required_argument, "MS",
	    "longest deadline a call may ask for" },
	{ "task-timeout-ms", required_argument, "MS",
	    "longest deadline a call run as a task may ask for" },
	{ "task-ttl-ms", required_argument, "MS",
	    "how long a task's result is kept after it ends" },
	{ "task-threshold-ms", required_argument, "MS",
	    "2026-07-28: a call asking a longer deadline runs as a task" },
	{ "memory-mb", required_argument, "MB",
	    "memory of one sandbox, all its processes (cgroup)" },
	{ "max-processes", required_argument, "N",
	    "processes of one sandbox, in total (cgroup)" },
	{ "max-file-size-mb", required_argument, "MB",
	    "largest file a tool may write" },
	{ "output-cap", required_argument, "BYTES",
	    "stdout and stderr kept per call, each" },
	{ "max-sandboxes", required_argument, "N",
	    "sandboxes at once (0: number of cores)" },
	{ "queue", required_argument, "N",
	    "calls that may wait for a sandbox; beyond: busy" },
	{ "queue-wait-ms", required_argument, "MS",
	    "longest a call waits for a sandbox" },
	{ "read-cap", required_argument, "BYTES",
	    "bytes read_file and search_files read per file" },
	{ "sql-rows", required_argument, "N", "rows a query returns at most" },
	{ "sql-bytes", required_argument, "BYTES",
	    "bytes a query returns at most" },
	{ "sql-timeout-ms", required_argument, "MS", "deadline of a query" },
	{ "tmp-mb", required_argument, "MB", "size of a sandbox's /tmp" },
	{ "session-idle-ms", required_argument, "MS",
	    "a run_code session ends after this long without a call" },
	{ "session-max-age-ms", required_argument, "MS",
	    "a run_code session ends at this age" },
	{ "max-sessions", required_argument, "N",
	    "run_code sessions open at once (0: no sessions)" },
	{ "sessions-per-client", required_argument, "N",
	    "run_code sessions one client may hold" },
	{ "workspace-mb", required_argument, "MB",
	    "size cap of a fresh workspace (0: none)" },
	{ "workspaces-mb", required_argument, "MB",
	    "all fresh workspaces at once, each counted at workspace-mb "
	    "(0: no bound)" },
	{ "warm-python", required_argument, "N",
	    "run_code pythons kept started ahead (0: none)" },
	{ "pool-size", required_argument, "N",
	    "sandboxes kept built ahead for run_command and run_code "
	    "(0: none)" },
	{ "uid-base", required_argument, "UID",
	    "root server: the first of the sandboxes' own kernel uids "
	    "(0: a free block from 0x70000000)" },
	{ "require-cgroup", no_argument, NULL,
	    "refuse sandboxed tools where a sandbox gets no cgroup" },
	{ "cgroup-parent", required_argument, "DIR",
	    "cgroup v2 directory delegated to the server" },
	{ "allow-domain", required_argument, "PATTERN",
	    "let sandboxes reach PATTERN (name, *.name, IP or CIDR, "
	    "[:PORT|:*]; default ports 80 and 443) through the proxy" },
	{ "deny-domain", required_argument, "PATTERN",
	    "refuse PATTERN (every port unless one is given), over any allow" },
	{ "resolve", required_argument, "HOST:PORT:ADDR",
	    "the proxy connects to ADDR for HOST:PORT (trusted even if "
	    "private)" },
	{ "egress-tunnel", required_argument, "PORT:PROTO",
	    "CONNECT to PORT carries PROTO (ssh, any) instead of TLS" },
	{ "egress-max-connections", required_argument, "N",
	    "proxy connections a call may open" },
	{ "egress-max-bytes", required_argument, "BYTES",
	    "bytes a call may move through the proxy, both ways" },
	{ "egress-idle-ms", required_argument, "MS",
	    "a proxy connection without a byte for MS ends" },
	{ "secret", required_argument, "NAME=HOSTS:SOURCE",
	    "bind a secret (SOURCE file:PATH or env:VAR) to HOSTS: the "
	    "sandbox sees a placeholder, the proxy adds the value" },
	{ "egress-ca", required_argument, "FILE",
	    "PEM trust for the hosts secrets are bound to (default: the "
	    "system's)" },
	{ "ask-domain", required_argument, "PATTERN",
	    "a call may ask the user for PATTERN (allow_domains): the "
	    "approvals ceiling" },
	{ "ask-network", no_argument, NULL,
	    "with no --allow-domain, a call may still ask for network "
	    "(to --ask-domain names only)" },
	{ "ask-timeout-ms", required_argument, "MS",
	    "longest deadline a call may get with the user's approval" },
	{ "ask-wait-ms", required_argument, "MS",
	    "how long a call waits for the user's answer" },
	{ "grant-ttl-ms", required_argument, "MS",
	    "2026-07-28: how long a grant for this session lasts" },
	{ NULL, 0, NULL, NULL },
};

/* Config context: where errors point. */
struct cfg {
	const char *path;	/* borrowed: file name, or "<default>" */
	const char *text;	/* borrowed: the text, for line numbers */
	char *err;
	size_t errlen;
};

static int
line_of_offset(const char *text, size_t off)
{
	int line = 1;
	size_t i;

	for (i = 0; i < off && text[i] != '\0'; i++)
		if (text[i] == '\n')
			line++;
	return line;
}

/* Best effort: the line of "key" (after "parent" if given). */
static int
line_of_key(const struct cfg *c, const char *parent, const char *key)
{
	char q[POLICY_MAX_NAME + 8];
	const char *from = c->text, *hit;

	if (c->text == NULL)
		return 0;
	if (parent != NULL) {
		(void)snprintf(q, sizeof(q), "\"%s\"", parent);
		if ((hit = strstr(from, q)) != NULL)
			from = hit;
	}
	(void)snprintf(q, sizeof(q), "\"%s\"", key);
	if ((hit = strstr(from, q)) == NULL)
		return 0;
	return line_of_offset(c->text, (size_t)(hit - c->text));
}

static int __attribute__((format(printf, 4, 5)))
cfg_fail(const struct cfg *c, const char *parent, const char *key,
    const char *fmt, ...)
{
	char msg[512];	/* one sentence about one key */
	va_list ap;
	int line;

	va_start(ap, fmt);
	(void)vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	line = line_of_key(c, parent, key);
	if (line > 0)
		(void)snprintf(c->err, c->errlen, "%s:%d: %s%s%s: %s", c->path,
		    line, parent ? parent : "", parent ? "." : "", key, msg);
	else
		(void)snprintf(c->err, c->errlen, "%s: %s%s%s: %s", c->path,
		    parent ? parent : "", parent ? "." : "", key, msg);
	return -1;
}

/* "FILE:LINE" of key (after parent), or "FILE" when it cannot be found. */
static void
cfg_origin(const struct cfg *c, const char *parent, const char *key,
    char *buf, size_t len)
{
	int line = line_of_key(c, parent, key);

	if (line > 0)
		(void)snprintf(buf, len, "%s:%d", c->path, line);
	else
		(void)snprintf(buf, len, "%s", c->path);
}

static int
set_str(char **dst, const char *src)
{
	char *s = NULL;

	if (src != NULL && (s = strdup(src)) == NULL)
		return -1;
	free(*dst);
	*dst = s;
	return 0;
}

static void
commands_clear(struct policy *p)
{
	size_t i;

	for (i = 0; i < p->ncommands; i++) {
		free(p->commands[i].name);
		free(p->commands[i].path);
		prog_binds_free(p->commands[i].binds);
		free(p->commands[i].origin);
	}
	memset(p->commands, 0, sizeof(p->commands));
	p->ncommands = 0;
}

/* Drops a command's binds (set again at finalize); 0 for set_str's use. */
static int
binds_clear(struct prog_binds **b)
{
	prog_binds_free(*b);
	*b = NULL;
	return 0;
}

static void
allow_clear(struct policy *p, bool writable)
{
	size_t i, j = 0;

	for (i = 0; i < p->nallow; i++) {
		if (p->allow[i].writable == writable) {
			free(p->allow[i].path);
			continue;
		}
		p->allow[j++] = p->allow[i];
	}
	memset(&p->allow[j], 0, (p->nallow - j) * sizeof(p->allow[0]));
	p->nallow = j;
}

static void
databases_clear(struct policy *p)
{
	size_t i;

	for (i = 0; i < p->ndatabases; i++) {
		free(p->databases[i].name);
		free(p->databases[i].path);
		policy_unpin_database(&p->databases[i]);
	}
	memset(p->databases, 0, sizeof(p->databases));
	p->ndatabases = 0;
}

static void
env_clear(struct policy *p)
{
	size_t i;

	for (i = 0; i < p->nenv; i++) {
		free(p->env[i].name);
		free(p->env[i].value);
	}
	memset(p->env, 0, sizeof(p->env));
	p->nenv = 0;
}

void
policy_skills_clear(struct policy *p)
{
	size_t i, j;

	for (i = 0; i < p->nskills; i++) {
		free(p->skills[i].name);
		free(p->skills[i].summary);
		free(p->skills[i].dir);
		if (p->skills[i].pinned)
			(void)close(p->skills[i].dirfd);
		for (j = 0; j < p->skills[i].nscripts; j++)
			free(p->skills[i].scripts[j].name);
	}
	memset(p->skills, 0, sizeof(p->skills));
	p->nskills = 0;
}

/* Adds or replaces a command; name may be an absolute path. */
static int
command_add(struct policy *p, const char *spec, bool optional,
    const char *origin, char *err, size_t errlen)
{
	const char *name = spec, *slash;
	struct policy_command *c;
	size_t i;

	if (spec[0] == '/') {
		slash = strrchr(spec, '/');
		name = slash + 1;
	}
	if (!policy_name_ok(name)) {
		policy_set_err(err, errlen, "'%s' is not a valid command name",
		    spec);
		return -1;
	}
	for (i = 0; i < p->ncommands; i++)
		if (strcmp(p->commands[i].name, name) == 0)
			break;
	if (i == p->ncommands) {
		if (p->ncommands == POLICY_MAX_COMMANDS) {
			policy_set_err(err, errlen,
			    "more than %d commands", POLICY_MAX_COMMANDS);
			return -1;
		}
		p->ncommands++;
	}
	c = &p->commands[i];
	c->optional = optional;
	if (set_str(&c->name, name) != 0 ||
	    set_str(&c->path, spec[0] == '/' ? spec : NULL) != 0 ||
	    binds_clear(&c->binds) != 0 ||
	    set_str(&c->origin, origin) != 0) {
		policy_set_err(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

/* Returns 0, or -1 when name is not on the list. */
static int
command_remove(struct policy *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->ncommands; i++) {
		if (strcmp(p->commands[i].name, name) != 0)
			continue;
		free(p->commands[i].name);
		free(p->commands[i].path);
		prog_binds_free(p->commands[i].binds);
		free(p->commands[i].origin);
		memmove(&p->commands[i], &p->commands[i + 1],
		    (p->ncommands - i - 1) * sizeof(p->commands[0]));
		p->ncommands--;
		memset(&p->commands[p->ncommands], 0, sizeof(p->commands[0]));
		return 0;
	}
	return -1;
}


static int
database_add(struct policy *p, const char *name, const char *path, char *err,
    size_t errlen)
{
	size_t i;

	if (!policy_name_ok(name)) {
		policy_set_err(err, errlen, "'%s' is not a valid database name",
		    name);
		return -1;
	}
	if (path[0] == '\0') {
		policy_set_err(err, errlen, "database '%s' has an empty path",
		    name);
		return -1;
	}
	for (i = 0; i < p->ndatabases; i++)
		if (strcmp(p->databases[i].name, name) == 0)
			break;
	if (i == p->ndatabases) {
		if (p->ndatabases == POLICY_MAX_DATABASES) {
			policy_set_err(err, errlen, "more than %d databases",
			    POLICY_MAX_DATABASES);
			return -1;
		}
		p->ndatabases++;
	}
	if (set_str(&p->databases[i].name, name) != 0 ||
	    set_str(&p->databases[i].path, path) != 0) {
		policy_set_err(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

static int
env_add(struct policy *p, const char *name, const char *value, char *err,
    size_t errlen)
{
	size_t i;

	if (!policy_env_name_ok(name)) {
		policy_set_err(err, errlen,
		    "'%s' is not a valid environment variable name", name);
		return -1;
	}
	if (policy_env_name_forbidden(name)) {
		policy_set_err(err, errlen,
		    "'%s' may not be set for sandboxed tools", name);
		return -1;
	}
	if (strlen(value) > POLICY_MAX_ENV_VALUE) {
		policy_set_err(err, errlen,
		    "the value of '%s' is over %d bytes", name,
		    POLICY_MAX_ENV_VALUE);
		return -1;
	}
	for (i = 0; i < p->nenv; i++)
		if (strcmp(p->env[i].name, name) == 0)
			break;
	if (i == p->nenv) {
		if (p->nenv == POLICY_MAX_ENV) {
			policy_set_err(err, errlen,
			    "more than %d environment variables",
			    POLICY_MAX_ENV);
			return -1;
		}
		p->nenv++;
	}
	if (set_str(&p->env[i].name, name) != 0 ||
	    set_str(&p->env[i].value, value) != 0) {
		policy_set_err(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

/* Comma-separated or JSON-array language list -> enabled flags. */
static int
language_enable(struct policy *p, const char *name, char *err, size_t errlen)
{
	int l = policy_lang_from_name(name);

	if (l < 0) {
		policy_set_err(err, errlen,
		    "unknown language '%s' (known: python3, node, sh, c)",
		    name);
		return -1;
	}
	p->languages[l].enabled = true;
	return 0;
}

static void
languages_clear(struct policy *p)
{
	int i;

	for (i = 0; i < POLICY_LANG_COUNT; i++) {
		p->languages[i].enabled = false;
		p->languages[i].available = false;
		free(p->languages[i].path);
		prog_binds_free(p->languages[i].binds);
		p->languages[i].path = NULL;
		p->languages[i].binds = NULL;
	}
}

static int
parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *ret)
{
	unsigned long long v;
	char *end;

	if (s[0] < '0' || s[0] > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -1;
	*ret = (uint32_t)v;
	return 0;
}

/* ---- config file ---- */

static int
cfg_string_or_null(const struct cfg *c, const char *key,
    struct json_object *v, char **dst)
{
	if (v == NULL || json_object_is_type(v, json_type_null))
		return set_str(dst, NULL) == 0 ? 0 :
		    cfg_fail(c, NULL, key, "out of memory");
	if (!json_object_is_type(v, json_type_string) ||
	    json_object_get_string_len(v) == 0 ||
	    json_object_get_string_len(v) >= PATH_MAX)
		return cfg_fail(c, NULL, key,
		    "must be a non-empty path string or null");
	if (set_str(dst, json_object_get_string(v)) != 0)
		return cfg_fail(c, NULL, key, "out of memory");
	return 0;
}

/* An absolute path under /sys/fs/cgroup, or null. */
static bool
cgroup_parent_ok(const char *s)
{
	return strncmp(s, POLICY_CGROUP_MNT "/", sizeof(POLICY_CGROUP_MNT)) ==
	    0 && strstr(s, "/../") == NULL && strstr(s, "/./") == NULL &&
	    strstr(s, "//") == NULL && s[strlen(s) - 1] != '/' &&
	    strcmp(s + strlen(s) - 3, "/..") != 0 &&
	    strcmp(s + strlen(s) - 2, "/.") != 0;
}

static int
cfg_cgroup_parent(struct policy *p, const struct cfg *c,
    struct json_object *v)
{
	if (cfg_string_or_null(c, "cgroup_parent", v, &p->cgroup_parent) != 0)
		return -1;
	if (p->cgroup_parent != NULL && !cgroup_parent_ok(p->cgroup_parent))
		return cfg_fail(c, NULL, "cgroup_parent", "must be a "
		    "directory under " POLICY_CGROUP_MNT ", without '.', '..' "
		    "or empty components");
	return 0;
}

static int
cfg_workspace(struct policy *p, const struct cfg *c, struct json_object *v)
{
	char where[PATH_MAX + 16];	/* "FILE:LINE" */

	if (cfg_string_or_null(c, "workspace", v, &p->workspace) != 0)
		return -1;
	cfg_origin(c, NULL, "workspace", where, sizeof(where));
	if (set_str(&p->workspace_origin, p->workspace != NULL ? where :
	    NULL) != 0)
		return cfg_fail(c, NULL, "workspace", "out of memory");
	return 0;
}

static int
cfg_commands(struct policy *p, const struct cfg *c, struct json_object *v,
    bool optional)
{
	char msg[256];	/* one command's complaint */
	char where[PATH_MAX + 16];	/* "FILE:LINE" */
	size_t i, n;

	if (!json_object_is_type(v, json_type_array) &&
	    !json_object_is_type(v, json_type_object))
		return cfg_fail(c, NULL, "commands",
		    "must be an array of names or an object name -> path");
	commands_clear(p);
	if (json_object_is_type(v, json_type_array)) {
		n = json_object_array_length(v);
		for (i = 0; i < n; i++) {
			struct json_object *e = json_object_array_get_idx(v, i);
			if (!json_object_is_type(e, json_type_string))
				return cfg_fail(c, NULL, "commands",
				    "item %zu is not a string", i);
			cfg_origin(c, "commands", json_object_get_string(e),
			    where, sizeof(where));
			if (command_add(p, json_object_get_string(e), optional,
			    where, msg, sizeof(msg)) != 0)
				return cfg_fail(c, NULL, "commands", "%s", msg);
		}
		return 0;
	}
	json_object_object_foreach(v, name, path) {
		const char *spec = name;
		if (json_object_is_type(path, json_type_string)) {
			spec = json_object_get_string(path);
			if (spec[0] != '/')
				return cfg_fail(c, "commands", name,
				    "the path must be absolute");
		} else if (!json_object_is_type(path, json_type_null))
			return cfg_fail(c, "commands", name,
			    "must be an absolute path or null");
		cfg_origin(c, "commands", name, where, sizeof(where));
		if (command_add(p, spec, optional, where, msg,
		    sizeof(msg)) != 0)
			return cfg_fail(c, "commands", name, "%s", msg);
		/* an explicit path keeps the key as the name */
		if (spec != name && strcmp(p->commands[p->ncommands - 1].name,
		    name) != 0) {
			free(p->commands[p->ncommands - 1].name);
			if ((p->commands[p->ncommands - 1].name =
			    strdup(name)) == NULL)
				return cfg_fail(c, "commands", name,
				    "out of memory");
		}
	}
	return 0;
}

static int
cfg_languages(struct policy *p, const struct cfg *c, struct json_object *v)
{
	char msg[256];	/* one language's complaint */
	size_t i, n;

	if (!json_object_is_type(v, json_type_array))
		return cfg_fail(c, NULL, "languages",
		    "must be an array of language names");
	languages_clear(p);
	n = json_object_array_length(v);
	for (i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(v, i);
		if (!json_object_is_type(e, json_type_string))
			return cfg_fail(c, NULL, "languages",
			    "item %zu is not a string", i);
		if (language_enable(p, json_object_get_string(e), msg,
		    sizeof(msg)) != 0)
			return cfg_fail(c, NULL, "languages", "%s", msg);
	}
	return 0;
}

static int
cfg_databases(struct policy *p, const struct cfg *c, struct json_object *v)
{
	char msg[256];	/* one database's complaint */

	if (!json_object_is_type(v, json_type_object))
		return cfg_fail(c, NULL, "databases",
		    "must be an object name -> path");
	databases_clear(p);
	json_object_object_foreach(v, name, path) {
		if (!json_object_is_type(path, json_type_string))
			return cfg_fail(c, "databases", name,
			    "must be a path string");
		if (database_add(p, name, json_object_get_string(path), msg,
		    sizeof(msg)) != 0)
			return cfg_fail(c, "databases", name, "%s", msg);
	}
	return 0;
}

/* "allow_read" / "allow_read_write": host paths bound in every sandbox. */
static int
cfg_allow(struct policy *p, const struct cfg *c, const char *key,
    struct json_object *v)
{
	bool writable = strcmp(key, "allow_read_write") == 0;
	size_t i, n;

	if (!json_object_is_type(v, json_type_array))
		return cfg_fail(c, NULL, key, "must be an array of absolute "
		    "paths");
	allow_clear(p, writable);
	n = json_object_array_length(v);
	for (i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(v, i);
		const char *path = json_object_get_string(e);

		if (!json_object_is_type(e, json_type_string) ||
		    path[0] != '/')
			return cfg_fail(c, NULL, key, "item %zu is not an "
			    "absolute path", i);
		if (p->nallow == POLICY_MAX_ALLOW)
			return cfg_fail(c, NULL, key, "more than %d paths in "
			    "allow_read and allow_read_write together",
			    POLICY_MAX_ALLOW);
		if ((p->allow[p->nallow].path = strdup(path)) == NULL)
			return cfg_fail(c, NULL, key, "out of memory");
		p->allow[p->nallow++].writable = writable;
	}
	return 0;
}

static int
cfg_env(struct policy *p, const struct cfg *c, struct json_object *v)
{
	char msg[256];	/* one variable's complaint */

	if (!json_object_is_type(v, json_type_object))
		return cfg_fail(c, NULL, "env",
		    "must be an object name -> value");
	env_clear(p);
	json_object_object_foreach(v, name, val) {
		if (!json_object_is_type(val, json_type_string))
			return cfg_fail(c, "env", name, "must be a string");
		if (env_add(p, name, json_object_get_string(val), msg,
		    sizeof(msg)) != 0)
			return cfg_fail(c, "env", name, "%s", msg);
	}
	return 0;
}

static int
cfg_limits(struct policy *p, const struct cfg *c, struct json_object *v)
{
	size_t i;

	if (!json_object_is_type(v, json_type_object))
		return cfg_fail(c, NULL, "limits", "must be an object");
	json_object_object_foreach(v, key, val) {
		const struct limit_def *d = NULL;
		int64_t n;

		for (i = 0; i < NLIMITS; i++)
			if (strcmp(limit_defs[i].key, key) == 0)
				d = &limit_defs[i];
		if (d == NULL) {
			if (key[0] == '_')
				continue;
			return cfg_fail(c, "limits", key, "unknown limit");
		}
		if (!json_object_is_type(val, json_type_int))
			return cfg_fail(c, "limits", key,
			    "must be an integer in %u..%u", d->min, d->max);
		n = json_object_get_int64(val);
		if (n < d->min || n > d->max)
			return cfg_fail(c, "limits", key,
			    "must be an integer in %u..%u", d->min, d->max);
		*(uint32_t *)((char *)&p->limits + d->off) = (uint32_t)n;
	}
	return 0;
}

static int
cfg_protect(struct policy *p, const struct cfg *c, const char *key,
    struct json_object *v)
{
	char msg[256];

	if (policy_protect_set(p, v, msg, sizeof(msg)) != 0)
		return cfg_fail(c, NULL, key, "%s", msg);
	return 0;
}

static int
cfg_apply(struct policy *p, const struct cfg *c, struct json_object *root,
    bool optional_commands)
{
	if (!json_object_is_type(root, json_type_object)) {
		policy_set_err(c->err, c->errlen,
		    "%s:1: the config must be a JSON object", c->path);
		return -1;
	}
	json_object_object_foreach(root, key, v) {
		int rc;

		if (key[0] == '_')
			rc = 0;		/* comments, and print-config's notes */
		else if (strcmp(key, "workspace") == 0)
			rc = cfg_workspace(p, c, v);
		else if (strcmp(key, "skills_dir") == 0)
			rc = cfg_string_or_null(c, key, v, &p->skills_dir);
		else if (strcmp(key, "audit_log") == 0)
			rc = cfg_string_or_null(c, key, v, &p->audit_log);
		else if (strcmp(key, "cgroup_parent") == 0)
			rc = cfg_cgroup_parent(p, c, v);
		else if (strcmp(key, "require_cgroup") == 0) {
			if (!json_object_is_type(v, json_type_boolean))
				rc = cfg_fail(c, NULL, key,
				    "must be true or false");
			else {
				p->require_cgroup = json_object_get_boolean(v);
				rc = 0;
			}
		}
		else if (strcmp(key, "commands") == 0)
			rc = cfg_commands(p, c, v, optional_commands);
		else if (strcmp(key, "languages") == 0)
			rc = cfg_languages(p, c, v);
		else if (strcmp(key, "databases") == 0)
			rc = cfg_databases(p, c, v);
		else if (strcmp(key, "env") == 0)
			rc = cfg_env(p, c, v);
		else if (strcmp(key, "allow_read") == 0 ||
		    strcmp(key, "allow_read_write") == 0)
			rc = cfg_allow(p, c, key, v);
		else if (strcmp(key, "limits") == 0)
			rc = cfg_limits(p, c, v);
		else if (strcmp(key, "protected_paths") == 0)
			rc = cfg_protect(p, c, key, v);
		else if (strcmp(key, "egress_ca") == 0) {
			char msg[256];

			if (json_object_is_type(v, json_type_null)) {
				free(p->egress_ca);
				p->egress_ca = NULL;
				rc = 0;
			} else if (!json_object_is_type(v, json_type_string))
				rc = cfg_fail(c, NULL, key, "must be a path or "
				    "null");
			else if ((rc = policy_secret_flag(p, "egress-ca",
			    json_object_get_string(v), msg, sizeof(msg))) < 0)
				rc = cfg_fail(c, NULL, key, "%s", msg);
			else
				rc = 0;
		} else if (strcmp(key, "secrets") == 0) {
			char msg[256];

			if ((rc = policy_secret_cfg(p, v, msg, sizeof(msg))) != 0)
				rc = cfg_fail(c, NULL, key, "%s", msg);
		} else if (strcmp(key, "network") == 0) {
			const char *sub;
			char msg[256];

			rc = policy_network_cfg(p, v, &sub, msg, sizeof(msg));
			if (rc != 0)
				rc = cfg_fail(c, sub != NULL ? "network" : NULL,
				    sub != NULL ? sub : key, "%s", msg);
		} else
			rc = cfg_fail(c, NULL, key, "unknown key");
		if (rc != 0)
			return -1;
	}
	return 0;
}

/*
 * One pass of json-c over text: NULL with err (naming the line) when it
 * stops short. strict: JSON_TOKENER_STRICT, which also refuses trailing
 * commas; the lax pass first says "text after the object" where the strict
 * one would only say "unexpected character". *end: where it stopped.
 */
static struct json_object *
cfg_parse_pass(const char *label, const char *text, size_t len, bool strict,
    size_t *end, char *err, size_t errlen)
{
	struct json_tokener *tok;
	struct json_object *root;
	enum json_tokener_error jerr;
	const char *why;
	size_t bad;

	if ((tok = json_tokener_new_ex(POLICY_JSON_DEPTH)) == NULL) {
		policy_set_err(err, errlen, "out of memory");
		return NULL;
	}
	if (strict)
		json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	root = json_tokener_parse_ex(tok, text, (int)len);
	jerr = json_tokener_get_error(tok);
	*end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (root == NULL && jerr == json_tokener_continue)
		jerr = json_tokener_error_parse_eof;
	if (jerr == json_tokener_success)
		return root;
	json_object_put(root);
	/* what json-c read and the character it stopped at: a comment, a
	 * quote, NaN there is named as such */
	if ((why = policy_json_not_rfc8259(text, *end < len ? *end + 1 : len,
	    &bad)) != NULL) {
		policy_set_err(err, errlen, "%s:%d: invalid JSON: %s", label,
		    line_of_offset(text, bad), why);
		return NULL;
	}
	if ((why = policy_json_explain(text, *end)) == NULL)
		why = json_tokener_error_desc(jerr);
	policy_set_err(err, errlen, "%s:%d: invalid JSON: %s", label,
	    line_of_offset(text, *end), why);
	return NULL;
}

/*
 * A policy file is JSON: what RFC 8259 refuses is refused, with its line.
 * Owned result, or NULL with err.
 */
static struct json_object *
cfg_parse(const char *label, const char *text, size_t len, char *err,
    size_t errlen)
{
	struct json_object *root;
	const char *why;
	size_t end, bad;

	if ((root = cfg_parse_pass(label, text, len, false, &end, err,
	    errlen)) == NULL)
		return NULL;
	if ((why = policy_json_not_rfc8259(text, end, &bad)) != NULL) {
		policy_set_err(err, errlen, "%s:%d: invalid JSON: %s", label,
		    line_of_offset(text, bad), why);
		goto fail;
	}
	for (; end < len; end++) {
		if (strchr(" \t\r\n", text[end]) == NULL) {
			policy_set_err(err, errlen,
			    "%s:%d: invalid JSON: text after the object", label,
			    line_of_offset(text, end));
			goto fail;
		}
	}
	json_object_put(root);
	return cfg_parse_pass(label, text, len, true, &end, err, errlen);
 fail:
	json_object_put(root);
	return NULL;
}

/* Parses text (NUL-terminated, len bytes) and applies it. */
static int
cfg_load_text(struct policy *p, const char *label, const char *text,
    size_t len, bool optional_commands, char *err, size_t errlen)
{
	struct cfg c = { label, text, err, errlen };
	struct json_object *root;	/* owned */
	int rc;

	if ((root = cfg_parse(label, text, len, err, errlen)) == NULL)
		return -1;
	rc = cfg_apply(p, &c, root, optional_commands);
	json_object_put(root);
	return rc;
}

struct policy *
policy_new_default(char *err, size_t errlen)
{
	struct policy *p;

	if ((p = calloc(1, sizeof(*p))) == NULL ||
	    (p->egress = policy_network_new()) == NULL ||
	    (p->ask = policy_network_new()) == NULL) {
		if (p != NULL)
			free(p->egress);
		free(p);
		policy_set_err(err, errlen, "out of memory");
		return NULL;
	}
	if (cfg_load_text(p, "<default policy>", policy_default_json,
	    strlen(policy_default_json), true, err, errlen) != 0) {
		policy_free(p);
		return NULL;
	}
	return p;
}

int
policy_load_file(struct policy *p, const char *path, char *err,
    size_t errlen)
{
	char *text = NULL;
	struct stat st;
	size_t len = 0;
	ssize_t n;
	int fd, rc = -1;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) < 0) {
		policy_set_err(err, errlen, "%s: cannot open: %s", path,
		    strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		policy_set_err(err, errlen, "%s: not a regular file", path);
		goto out;
	}
	if (st.st_size > POLICY_MAX_CONFIG) {
		policy_set_err(err, errlen, "%s: larger than %d bytes", path,
		    POLICY_MAX_CONFIG);
		goto out;
	}
	if ((text = malloc(POLICY_MAX_CONFIG + 1)) == NULL) {
		policy_set_err(err, errlen, "out of memory");
		goto out;
	}
	while (len < POLICY_MAX_CONFIG &&
	    (n = read(fd, text + len, POLICY_MAX_CONFIG - len)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			policy_set_err(err, errlen, "%s: read: %s", path,
			    strerror(errno));
			goto out;
		}
		len += (size_t)n;
	}
	text[len] = '\0';
	if (strlen(text) != len) {
		policy_set_err(err, errlen, "%s:%d: NUL byte in the file", path,
		    line_of_offset(text, strlen(text)));
		goto out;
	}
	rc = cfg_load_text(p, path, text, len, false, err, errlen);
 out:
	free(text);
	(void)close(fd);
	return rc;
}

/* ---- flags ---- */

static int
split_pair(const char *flag, const char *value, char *name, size_t namelen,
    const char **rest, char *err, size_t errlen)
{
	const char *eq = strchr(value, '=');

	if (eq == NULL || eq == value || (size_t)(eq - value) >= namelen) {
		policy_set_err(err, errlen,
		    "--%s: expected NAME=VALUE, got '%s'", flag, value);
		return -1;
	}
	memcpy(name, value, (size_t)(eq - value));
	name[eq - value] = '\0';
	*rest = eq + 1;
	return 0;
}

int
policy_set_flag(struct policy *p, const char *flag, const char *value,
    char *err, size_t errlen)
{
	char name[POLICY_MAX_NAME + 2], msg[256];
	const char *rest;
	size_t i;

	if (p->finalized) {
		policy_set_err(err, errlen, "--%s: the policy is final", flag);
		return -1;
	}
	if (value == NULL)
		value = "";
	for (i = 0; i < NLIMITS; i++) {
		const struct limit_def *d = &limit_defs[i];
		uint32_t v;

		if (strcmp(d->flag, flag) != 0)
			continue;
		if (parse_u32(value, d->min, d->max, &v) != 0) {
			policy_set_err(err, errlen,
			    "--%s: expected an integer in %u..%u, got '%s'",
			    flag, d->min, d->max, value);
			return -1;
		}
		*(uint32_t *)((char *)&p->limits + d->off) = v;
		return 0;
	}
	if (strcmp(flag, "workspace") == 0 || strcmp(flag, "skills-dir") == 0 ||
	    strcmp(flag, "audit-log") == 0) {
		char **dst = flag[0] == 'w' ? &p->workspace :
		    flag[0] == 's' ? &p->skills_dir : &p->audit_log;
		if (value[0] == '\0' || strlen(value) >= PATH_MAX) {
			policy_set_err(err, errlen, "--%s: expected a path",
			    flag);
			return -1;
		}
		if (set_str(dst, value) != 0 || (dst == &p->workspace &&
		    set_str(&p->workspace_origin, "--workspace") != 0))
			goto nomem;
		return 0;
	}
	if (strcmp(flag, "require-cgroup") == 0) {
		p->require_cgroup = true;
		return 0;
	}
	if (strcmp(flag, "cgroup-parent") == 0) {
		if (!cgroup_parent_ok(value) || strlen(value) >= PATH_MAX) {
			policy_set_err(err, errlen, "--%s: expected a directory "
			    "under " POLICY_CGROUP_MNT ", got '%s'", flag, value);
			return -1;
		}
		if (set_str(&p->cgroup_parent, value) != 0)
			goto nomem;
		return 0;
	}
	if (strcmp(flag, "allow-command") == 0) {
		if (command_add(p, value, false, "--allow-command", msg,
		    sizeof(msg)) != 0)
			goto fail;
		return 0;
	}
	if (strcmp(flag, "deny-command") == 0) {
		if (command_remove(p, value) == 0)
			return 0;
		policy_set_err(err, errlen, "--deny-command: '%s' is not on "
		    "run_command's list, so there is nothing to remove "
		    "(--print-config shows the list)", value);
		return -1;
	}
	if (strcmp(flag, "languages") == 0) {
		char *list, *tok, *save = NULL;
		int rc = 0;

		if ((list = strdup(value)) == NULL)
			goto nomem;
		languages_clear(p);
		for (tok = strtok_r(list, ",", &save); tok != NULL && rc == 0;
		    tok = strtok_r(NULL, ",", &save))
			rc = language_enable(p, tok, msg, sizeof(msg));
		free(list);
		if (rc != 0)
			goto fail;
		return 0;
	}
	if (strcmp(flag, "database") == 0 || strcmp(flag, "env") == 0) {
		if (split_pair(flag, value, name, sizeof(name), &rest, err,
		    errlen) != 0)
			return -1;
		if (flag[0] == 'd' ? database_add(p, name, rest, msg,
		    sizeof(msg)) != 0 : env_add(p, name, rest, msg,
		    sizeof(msg)) != 0)
			goto fail;
		return 0;
	}
	switch (policy_network_flag(p, flag, value, msg, sizeof(msg))) {
	case 1:
		return 0;
	case -1:
		goto fail;
	default:
		break;
	}
	switch (policy_secret_flag(p, flag, value, msg, sizeof(msg))) {
	case 1:
		return 0;
	case -1:
		goto fail;
	default:
		break;
	}
	policy_set_err(err, errlen, "--%s: unknown policy flag", flag);
	return -1;
 fail:
	policy_set_err(err, errlen, "--%s: %s", flag, msg);
	return -1;
 nomem:
	policy_set_err(err, errlen, "out of memory");
	return -1;
}

/* ---- look-ups, print, free ---- */

const struct policy_command *
policy_find_command(const struct policy *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->ncommands; i++)
		if (strcmp(p->commands[i].name, name) == 0 &&
		    p->commands[i].path != NULL)
			return &p->commands[i];
	return NULL;
}

const struct policy_database *
policy_find_database(const struct policy *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->ndatabases; i++)
		if (strcmp(p->databases[i].name, name) == 0)
			return &p->databases[i];
	return NULL;
}

const struct policy_skill *
policy_find_skill(const struct policy *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->nskills; i++)
		if (strcmp(p->skills[i].name, name) == 0)
			return &p->skills[i];
	return NULL;
}

static struct json_object *
str_or_null(const char *s)
{
	return s != NULL ? json_object_new_string(s) : NULL;
}

/* Owned result; NULL on allocation failure. */
static struct json_object *
policy_to_json(const struct policy *p)
{
	struct json_object *o, *a, *r, *s;
	size_t i, j;
	int l;

	o = json_object_new_object();
	if (o == NULL)
		return NULL;
	json_object_object_add(o, "workspace", str_or_null(p->workspace));
	a = json_object_new_object();
	for (i = 0; i < p->ncommands; i++)
		json_object_object_add(a, p->commands[i].name,
		    str_or_null(p->commands[i].path));
	json_object_object_add(o, "commands", a);
	a = json_object_new_array();
	for (l = 0; l < POLICY_LANG_COUNT; l++)
		if (p->languages[l].enabled && (!p->finalized ||
		    p->languages[l].available))
			json_object_array_add(a, json_object_new_string(
			    policy_lang_name((enum policy_lang)l)));
	json_object_object_add(o, "languages", a);
	json_object_object_add(o, "skills_dir", str_or_null(p->skills_dir));
	a = json_object_new_object();
	for (i = 0; i < p->ndatabases; i++)
		json_object_object_add(a, p->databases[i].name,
		    json_object_new_string(p->databases[i].path));
	json_object_object_add(o, "databases", a);
	a = json_object_new_object();
	for (i = 0; i < p->nenv; i++)
		json_object_object_add(a, p->env[i].name,
		    json_object_new_string(p->env[i].value));
	json_object_object_add(o, "env", a);
	a = json_object_new_object();
	for (i = 0; i < NLIMITS; i++)
		json_object_object_add(a, limit_defs[i].key,
		    json_object_new_int64(*(const uint32_t *)((const char *)
		    &p->limits + limit_defs[i].off)));
	json_object_object_add(o, "limits", a);
	json_object_object_add(o, "network", policy_network_json(p));
	json_object_object_add(o, "secrets", policy_secret_json(p));
	json_object_object_add(o, "egress_ca", p->egress_ca != NULL ?
	    json_object_new_string(p->egress_ca) : NULL);
	json_object_object_add(o, "audit_log", str_or_null(p->audit_log));
	json_object_object_add(o, "protected_paths", policy_protect_json(p));
	a = json_object_new_array();
	s = json_object_new_array();
	for (i = 0; i < p->nallow; i++)
		json_object_array_add(p->allow[i].writable ? s : a,
		    json_object_new_string(p->allow[i].path));
	json_object_object_add(o, "allow_read", a);
	json_object_object_add(o, "allow_read_write", s);
	json_object_object_add(o, "require_cgroup",
	    json_object_new_boolean(p->require_cgroup));
	json_object_object_add(o, "cgroup_parent",
	    str_or_null(p->cgroup_parent));
	/* what the limits mean; ignored when loaded back */
	a = json_object_new_object();
	json_object_object_add(a, "memory_mb", json_object_new_string(
	    "per sandbox, in total: its cgroup's memory limit (shared memory, "
	    "memfd and tmpfs pages included, no swap); also RLIMIT_AS of each "
	    "process. Without a cgroup (see mcp-sandbox --check): RLIMIT_AS "
	    "per process only"));
	json_object_object_add(a, "processes", json_object_new_string(
	    "per sandbox, in total: its cgroup's pids.max (processes and "
	    "threads; the sandbox's own init is added). Without a cgroup: "
	    "RLIMIT_NPROC, per sandbox user namespace"));
	/* the sandboxes, then every fresh workspace full (tmpfs: memory) */
	json_object_object_add(a, "worst_case_workspaces_mb",
	    p->limits.workspaces_mb > 0 && p->limits.workspace_mb > 0 ?
	    json_object_new_int64(p->limits.workspaces_mb) : NULL);
	json_object_object_add(a, "worst_case_memory_mb", json_object_new_int64(
	    (int64_t)p->limits.memory_mb * ((int64_t)p->limits.max_sandboxes +
	    p->limits.warm_python + p->limits.pool_size +
	    p->limits.max_sessions) +
	    (p->limits.workspace_mb > 0 ? p->limits.workspaces_mb : 0)));
	json_object_object_add(o, "_limits", a);

	/* what finalize found on this machine; ignored when loaded back */
	r = json_object_new_object();
	a = json_object_new_object();
	for (l = 0; l < POLICY_LANG_COUNT; l++)
		if (p->languages[l].enabled)
			json_object_object_add(a,
			    policy_lang_name((enum policy_lang)l),
			    str_or_null(p->languages[l].path));
	json_object_object_add(r, "languages", a);
	a = json_object_new_array();
	for (i = 0; i < p->nskills; i++) {
		struct json_object *sk = json_object_new_object();
		json_object_object_add(sk, "name",
		    json_object_new_string(p->skills[i].name));
		json_object_object_add(sk, "summary",
		    json_object_new_string(p->skills[i].summary));
		s = json_object_new_array();
		for (j = 0; j < p->skills[i].nscripts; j++)
			json_object_array_add(s, json_object_new_string(
			    p->skills[i].scripts[j].name));
		json_object_object_add(sk, "scripts", s);
		json_object_array_add(a, sk);
	}
	json_object_object_add(r, "skills", a);
	json_object_object_add(r, "binds", binds_to_json(p));
	json_object_object_add(o, "_resolved", r);
	return o;
}

void
policy_print(const struct policy *p, FILE *out)
{
	struct json_object *o = policy_to_json(p);	/* owned */

	if (o == NULL) {
		(void)fputs("{}\n", out);
		return;
	}
	(void)fprintf(out, "%s\n", json_object_to_json_string_ext(o,
	    JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_PRETTY_TAB |
	    JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

void
policy_free(struct policy *p)
{
	if (p == NULL)
		return;
	commands_clear(p);
	languages_clear(p);
	databases_clear(p);
	env_clear(p);
	policy_skills_clear(p);
	policy_protect_clear(p);
	allow_clear(p, false);
	allow_clear(p, true);
	while (p->nnotes > 0)
		free(p->notes[--p->nnotes]);
	while (p->ndropped > 0)
		free(p->dropped[--p->ndropped]);
	free(p->workspace);
	free(p->workspace_origin);
	free(p->skills_dir);
	free(p->audit_log);
	free(p->cgroup_parent);
	free(p->sh_path);
	policy_secrets_free(p);
	free(p->egress);
	free(p->ask);
	free(p);
}
