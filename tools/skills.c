/*
 * run_skill_script: runs a script of an Agent Skill (a folder with SKILL.md
 * and scripts/, found at start by policy_finalize). The script must be one
 * the policy listed: a regular file directly under scripts/ with an
 * allowed extension; its interpreter follows from the extension. It runs
 * on a disposable copy of the skill folder (the original is never mounted,
 * so never modified), with an empty environment, argv only, the limits and
 * the deadline. JSON on stdout becomes structuredContent; exit 2 with
 * stderr means the script rejected its input.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json_finite.h"
#include "policy.h"
#include "render.h"
#include "sandboxed.h"
#include "sbcall.h"
#include "toolargs.h"
#include "workspace.h"

#define SKILL_COPY_MAX_BYTES	(64u << 20)	/* scripts and docs, not data */
#define SKILL_COPY_MAX_ENTRIES	10000	/* files and folders copied */
#define SKILL_COPY_MAX_DEPTH	16	/* nesting inside a skill folder */
#define SKILL_JSON_DEPTH	64	/* nesting of a script's JSON output */
#define SKILL_DESC_MAX		(16 * 1024)	/* the tools/list description */
#define SKILL_MOUNT		"/skill"	/* the copy, seen inside */

/* Arguments that become C strings (stdin is data, passed whole). */
static const char *const nul_free[] = { "skill", "script", "args", NULL };

struct copy_budget {
	size_t bytes;
	size_t entries;
	uid_t uid;		/* owner to give copies to, or -1 */
	gid_t gid;
};

static void
give(int fd, const struct copy_budget *b)
{
	/* best effort: without it the sandbox uid can only read the copy */
	if (b->uid != (uid_t)-1 && fchown(fd, b->uid, b->gid) != 0)
		return;
}

static int
copy_file(int sfd, int dfd, const char *name, mode_t mode,
    struct copy_budget *b)
{
	char buf[65536];	/* one read */
	ssize_t n;
	int in, out, rc = 0;

	in = openat(sfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (in < 0)
		return -errno;
	out = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, mode & 0755);
	if (out < 0) {
		rc = -errno;
		(void)close(in);
		return rc;
	}
	give(out, b);
	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			break;
		}
		if (b->bytes + (size_t)n > SKILL_COPY_MAX_BYTES) {
			rc = -EFBIG;
			break;
		}
		b->bytes += (size_t)n;
		if (write(out, buf, (size_t)n) != n) {
			rc = -EIO;
			break;
		}
	}
	(void)close(in);
	(void)close(out);
	return rc;
}

/* Copies regular files and folders of sfd into dfd; symlinks, FIFOs and
 * devices are left out. Both fds are borrowed. */
static int
copy_tree(int sfd, int dfd, int depth, struct copy_budget *b)
{
	struct dirent *de;
	DIR *d;
	int fd, rc = 0;

	if (depth > SKILL_COPY_MAX_DEPTH)
		return -ELOOP;
	if ((fd = fcntl(sfd, F_DUPFD_CLOEXEC, 0)) < 0)
		return -errno;
	if ((d = fdopendir(fd)) == NULL) {
		rc = -errno;
		(void)close(fd);
		return rc;
	}
	rewinddir(d);
	while (rc == 0 && (de = readdir(d)) != NULL) {
		struct stat st;
		int cs, cd;

		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (++b->entries > SKILL_COPY_MAX_ENTRIES) {
			rc = -EFBIG;
			break;
		}
		if (fstatat(sfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		if (S_ISREG(st.st_mode)) {
			rc = copy_file(sfd, dfd, de->d_name, st.st_mode, b);
		} else if (S_ISDIR(st.st_mode)) {
			if (mkdirat(dfd, de->d_name, 0755) != 0) {
				rc = -errno;
				break;
			}
			cs = openat(sfd, de->d_name, O_RDONLY | O_DIRECTORY |
			    O_NOFOLLOW | O_CLOEXEC);
			cd = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY |
			    O_NOFOLLOW | O_CLOEXEC);
			if (cs >= 0 && cd >= 0) {
				give(cd, b);
				rc = copy_tree(cs, cd, depth + 1, b);
			} else
				rc = -EIO;
			if (cs >= 0)
				(void)close(cs);
			if (cd >= 0)
				(void)close(cd);
		}
	}
	(void)closedir(d);
	return rc;
}

/*
 * A fresh copy of the skill folder under $TMPDIR; *ret owned: a workspace
 * of the server's bound until workspace_free() removes it after the run.
 */
static int
skill_copy(const struct policy_skill *sk, struct workspace **ret)
{
	struct copy_budget b = { 0, 0, (uid_t)-1, (gid_t)-1 };
	struct workspace *tmp = NULL;
	char err[256];	/* workspace_open's message, unused beyond rc */
	int sfd = -1, dfd = -1, rc;

	if (sb_host_root()) {
		/* a root server's sandboxes run as this uid, whoever owns
		 * the workspace (a root-owned --workspace DIR included) */
		b.uid = SB_DEFAULT_UID;
		b.gid = SB_DEFAULT_GID;
	}
	if (workspace_open(NULL, b.uid, &tmp, err, sizeof(err)) != 0)
		return -EIO;
	/* the folder found at start, whatever its path leads to now */
	sfd = sk->pinned ? openat(sk->dirfd, ".", O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC) : -1;
	if (!sk->pinned)
		errno = EBADF;
	dfd = open(tmp->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0 || dfd < 0)
		rc = -errno;
	else
		rc = copy_tree(sfd, dfd, 0, &b);
	if (sfd >= 0)
		(void)close(sfd);
	if (dfd >= 0)
		(void)close(dfd);
	if (rc == 0)
		*ret = tmp;	/* the caller frees it: the tree goes */
	else
		workspace_free(tmp);
	return rc;
}

static const struct policy_script *
find_script(const struct policy_skill *sk, const char *name)
{
	size_t i;

	if (strncmp(name, "scripts/", 8) == 0)
		name += 8;
	for (i = 0; i < sk->nscripts; i++)
		if (strcmp(sk->scripts[i].name, name) == 0)
			return &sk->scripts[i];
	return NULL;
}

static struct json_object *
not_listed(const struct tool_call *call, const struct policy_skill *sk,
    const char *script)
{
	char list[1024];	/* the skill's script names */
	size_t i, w = 0;

	list[0] = '\0';
	for (i = 0; i < sk->nscripts && w < sizeof(list); i++) {
		int n = snprintf(list + w, sizeof(list) - w, "%s%s",
		    i ? ", " : "", sk->scripts[i].name);
		if (n < 0)
			break;
		w += (size_t)n;
	}
	render_refused(call->audit, "script not listed");
	return tool_result_error("'%s' is not a script of the skill '%s', so "
	    "nothing was run. Its scripts (files directly under scripts/ with "
	    "an extension .py, .sh, .js or .mjs) are: %s.", script, sk->name,
	    sk->nscripts > 0 ? list : "none");
}

/*
 * stdout as a JSON object (owned), or NULL if it is not exactly one
 * (strictly parsed; NaN and Infinity, which json-c accepts even then and
 * would write back bare, make it plain text).
 */
static struct json_object *
stdout_json(const struct sb_result *res)
{
	struct json_tokener *tok;
	struct json_object *o;
	size_t end;

	if (res->out.truncated || res->out.len == 0 ||
	    !render_utf8_valid(res->out.data, res->out.len))
		return NULL;
	if ((tok = json_tokener_new_ex(SKILL_JSON_DEPTH)) == NULL)
		return NULL;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	o = json_tokener_parse_ex(tok, res->out.data, (int)res->out.len);
	end = json_tokener_get_parse_end(tok);
	if (json_tokener_get_error(tok) != json_tokener_success ||
	    !json_object_is_type(o, json_type_object) || !json_all_finite(o)) {
		json_object_put(o);
		o = NULL;
	}
	for (; o != NULL && end < res->out.len; end++)
		if (strchr(" \t\r\n", res->out.data[end]) == NULL) {
			json_object_put(o);
			o = NULL;
		}
	json_tokener_free(tok);
	return o;
}

/*
 * sbcall_render_fn: a script's own JSON object on stdout is the structured
 * result, and keeps its shape unless files changed (*files_always false).
 */
static struct json_object *
skill_result(const struct sb_result *res, const struct sbcall *c,
    struct tool_audit *audit, bool *files_always)
{
	struct json_object *o, *st, *err_text, *r = NULL;
	char *msg;

	if (res->exited && res->exit_code == 0 &&
	    (o = stdout_json(res)) != NULL) {
		*files_always = false;
		render_audit_run(res, audit);
		/* stdout_json checked it is UTF-8 */
		return tool_result_ok(o, res->out.data);
	}
	if (!(res->exited && res->exit_code == 2 && res->err_out.len > 0))
		return render_run_result(res, c->what, c->timeout_ms, audit);
	render_audit_run(res, audit);
	if ((st = render_run_structured(res)) == NULL)
		return NULL;
	err_text = render_string(res->err_out.data, res->err_out.len, NULL);
	if (err_text != NULL && asprintf(&msg, "The script rejected its input "
	    "(exit 2): %s", json_object_get_string(err_text)) >= 0) {
		r = tool_result_error_structured(st, msg);	/* takes st */
		st = NULL;
		free(msg);
	}
	json_object_put(err_text);
	json_object_put(st);
	return r;
}

enum mcp_err
tool_run_skill_script(const struct tool_call *call,
    const struct json_object *args,
    struct json_object **ret_result)
{
	const struct policy *p = call->env->policy;
	const char *skill = toolargs_str(args, "skill", "");
	const char *script = toolargs_str(args, "script", "");
	const struct policy_skill *sk;
	const struct policy_script *sc;
	const struct policy_language *lang;
	const char *bad;
	struct json_object *r = NULL;
	struct sbcall c;
	struct workspace *copy = NULL;
	char path[PATH_MAX];
	const char **argv = NULL, *head[3];
	size_t nhead = 0;
	enum mcp_err st = MCP_OK;
	int rc;

	memset(&c, 0, sizeof(c));
	if ((bad = render_nul_key(args, nul_free)) != NULL) {
		r = render_nul_refusal(call->audit, bad);
		goto out;
	}
	if ((sk = policy_find_skill(p, skill)) == NULL) {
		render_refused(call->audit, "unknown skill");
		r = tool_result_error("There is no skill called '%s'; the "
		    "tool's description lists the skills offered.", skill);
		goto out;
	}
	if ((sc = find_script(sk, script)) == NULL) {
		r = not_listed(call, sk, script);
		goto out;
	}
	lang = &p->languages[sc->lang];
	(void)snprintf(path, sizeof(path), "%s/scripts/%s", SKILL_MOUNT,
	    sc->name);
	head[nhead++] = policy_lang_name(sc->lang);
	if (sc->lang == POLICY_LANG_PYTHON3)
		head[nhead++] = "-I";
	head[nhead++] = path;
	if ((argv = sbcall_argv(head, nhead, toolargs_get(args, "args"))) ==
	    NULL)
		return MCP_ERR_NOMEM;
	if ((rc = skill_copy(sk, &copy)) != 0) {
		render_refused(call->audit, "skill copy failed");
		r = tool_result_error("The script was not run: its skill "
		    "folder could not be copied (%s).", rc == -EFBIG ?
		    "it is larger than the copy limits" : rc == -ELOOP ?
		    "it is nested too deeply" : "a file or folder in it could "
		    "not be read or written");
		goto out;
	}
	c.program = lang->path;
	c.argv = argv;
	c.empty_env = true;
	sbcall_common_args(call, args, &c);
	c.workspace_host = copy->path;
	c.workspace_path = SKILL_MOUNT;
	c.workspace_writable = true;	/* the copy is thrown away */
	c.prog_binds = lang->binds;
	c.what = "the script";
	c.render = skill_result;
	st = sbcall_run(call, &c, &r);
 out:
	workspace_free(copy);
	free(argv);
	return sbcall_return(st, r, ret_result);
}

/* Lists each skill (name, summary, scripts) in the description and makes
 * the skill names the enum of "skill". */
enum mcp_err
tool_run_skill_script_tailor(const struct tool_env *env,
    struct json_object *tool)
{
	const struct policy *p = env->policy;
	struct json_object *skill, *cur;	/* borrowed */
	struct json_object *en;			/* owned until added */
	char *desc = NULL;
	size_t i, j, len = 0;
	enum mcp_err st;
	FILE *f;

	if ((skill = sbcall_schema_prop(tool, "skill")) == NULL ||
	    !json_object_object_get_ex(tool, "description", &cur))
		return MCP_ERR_INTERNAL;
	if ((st = sbcall_tailor_timeout(tool, p)) != MCP_OK)
		return st;
	if ((en = json_object_new_array()) == NULL)
		return MCP_ERR_NOMEM;
	if ((f = open_memstream(&desc, &len)) == NULL) {
		json_object_put(en);
		return MCP_ERR_NOMEM;
	}
	(void)fputs(json_object_get_string(cur), f);
	if (p->nskills == 0) {
		(void)fputs(" No skills are configured on this server.", f);
		json_object_array_add(en,
		    json_object_new_string("(no skills configured)"));
	} else
		(void)fputs(" Skills:", f);
	for (i = 0; i < p->nskills; i++) {
		const struct policy_skill *sk = &p->skills[i];

		json_object_array_add(en, json_object_new_string(sk->name));
		if (ftell(f) > SKILL_DESC_MAX)
			continue;	/* the enum still lists it */
		(void)fprintf(f, "\n- %s: %s (scripts:", sk->name,
		    sk->summary[0] ? sk->summary : "no description");
		for (j = 0; j < sk->nscripts; j++)
			(void)fprintf(f, "%s %s", j ? "," : "",
			    sk->scripts[j].name);
		(void)fputs(sk->nscripts ? ")" : " none)", f);
	}
	if (fclose(f) != 0) {
		free(desc);
		json_object_put(en);
		return MCP_ERR_NOMEM;
	}
	st = sbcall_set_description(tool, desc);
	free(desc);
	if (st != MCP_OK) {
		json_object_put(en);
		return st;
	}
	json_object_object_del(skill, "pattern");
	if (json_object_object_add(skill, "enum", en) != 0) {
		json_object_put(en);
		return MCP_ERR_NOMEM;
	}
	return MCP_OK;
}

