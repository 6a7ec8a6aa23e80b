/*
 * policy_finalize(): binds the policy to this machine at start, before the
 * environment is emptied. Programs become absolute paths (plus, when they
 * live outside the system directories, exactly the files they need:
 * policy_binds.c), languages
 * whose toolchain is missing become unavailable, skills are scanned from
 * their SKILL.md front matter and scripts/ folder, databases must exist.
 * Runs once, single-threaded; never runs a program.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "egress.h"
#include "policy.h"
#include "policy_secret.h"
#include "policy_internal.h"
#include "policy_binds.h"

#define RESOLVE_DEFAULT_PATH	"/usr/local/bin:/usr/bin:/bin"
#define SKILL_MD_MAX		(64 * 1024)	/* front matter is at the top */
#define SKILL_MAX_ENTRIES	1024	/* folders scanned in skills_dir */

static bool
in_system_dir(const char *path)
{
	return binds_system_path(path);
}

/* Trees the sandbox makes afresh; nothing from the host can appear there. */
static bool
in_sandbox_owned_dir(const char *path)
{
	static const char *const dirs[] = { "/tmp/", "/dev/", "/proc/",
	    "/sys/" };
	size_t i;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (strncmp(path, dirs[i], strlen(dirs[i])) == 0)
			return true;
	return false;
}

static bool
is_executable_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	    access(path, X_OK) == 0;
}

static bool is_script(const char *path);

/*
 * First executable called name on PATH; *ret owned. With skip_scripts,
 * "#!" files are passed over: a python3 shim (pyenv, asdf) would have to be
 * run to learn what it runs, which costs hundreds of milliseconds at every
 * start and runs host code; the real interpreter further down PATH (or in
 * /usr/bin) is what the sandbox can use anyway.
 */
static int
path_search(const char *name, bool skip_scripts, char **ret)
{
	const char *path = getenv("PATH"), *dir, *end;
	char buf[PATH_MAX];

	if (path == NULL || path[0] == '\0')
		path = RESOLVE_DEFAULT_PATH;
	for (dir = path; *dir != '\0'; dir = *end ? end + 1 : end) {
		size_t dl;

		end = strchrnul(dir, ':');
		dl = (size_t)(end - dir);
		if (dl == 0 || dir[0] != '/')
			continue;	/* relative PATH entries are ignored */
		if (dl + 1 + strlen(name) + 1 > sizeof(buf))
			continue;
		memcpy(buf, dir, dl);
		buf[dl] = '/';
		strcpy(buf + dl + 1, name);
		if (is_executable_file(buf) &&
		    !(skip_scripts && is_script(buf))) {
			*ret = strdup(buf);
			return *ret != NULL ? 0 : -1;
		}
	}
	return -1;
}

/* Last resort for interpreters hidden behind shims on PATH. */
static int
path_search_dirs(const char *name, char **ret)
{
	static const char *const dirs[] = { "/usr/local/bin", "/usr/bin",
	    "/bin" };
	char buf[PATH_MAX];
	size_t i;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		if (snprintf(buf, sizeof(buf), "%s/%s", dirs[i], name) >=
		    (int)sizeof(buf))
			continue;
		if (is_executable_file(buf) && !is_script(buf)) {
			*ret = strdup(buf);
			return *ret != NULL ? 0 : -1;
		}
	}
	return -1;
}

static bool
is_script(const char *path)
{
	char head[2];
	int fd;
	bool r = false;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) < 0)
		return false;
	r = read(fd, head, 2) == 2 && head[0] == '#' && head[1] == '!';
	(void)close(fd);
	return r;
}

/* A start-up note for the log (policy.h: notes): "what: why". */
static void
note(struct policy *p, const char *what, const char *why)
{
	char buf[1024];	/* a program and a sentence */

	if (p->nnotes == POLICY_MAX_NOTES)
		return;
	(void)snprintf(buf, sizeof(buf), "%s: %s", what, why);
	if ((p->notes[p->nnotes] = strdup(buf)) != NULL)
		p->nnotes++;
}

/*
 * Resolves a program name (or absolute path) to its real absolute path
 * and, when it lives outside the system directories, the files it needs
 * bound (policy_binds.c; NULL for a system program). 0; -1 when not found (why
 * empty) or when it cannot run in a sandbox (why says so).
 */
static int
resolve_program(const char *spec, bool python, char **ret_path,
    struct prog_binds **ret_binds, char *why, size_t whylen)
{
	char *found = NULL, real[PATH_MAX];
	int rc = -1;

	why[0] = '\0';
	*ret_binds = NULL;
	if (spec[0] == '/') {
		if (!is_executable_file(spec) || (found = strdup(spec)) == NULL)
			return -1;
	} else if (path_search(spec, python, &found) != 0 &&
	    (!python || path_search_dirs(spec, &found) != 0))
		return -1;
	if (realpath(found, real) == NULL)
		goto out;
	/* the sandbox mounts its own /tmp, /dev and /proc: a toolchain that
	 * lives there cannot be bound in at its own path, so it is absent */
	if (!in_system_dir(real) && in_sandbox_owned_dir(real)) {
		if ((size_t)snprintf(why, whylen, "%s lies in /tmp, /dev, "
		    "/proc or /sys, which every sandbox makes afresh, so it "
		    "cannot be bound at its own path; install it elsewhere",
		    real) >= whylen)
			why[whylen - 1] = '\0';	/* cut; still a reason */
		goto out;
	}
	if (!in_system_dir(real) &&
	    binds_for_program(real, python, ret_binds, why, whylen) != 0)
		goto out;
	if ((*ret_path = strdup(real)) == NULL) {
		prog_binds_free(*ret_binds);
		*ret_binds = NULL;
		goto out;
	}
	rc = 0;
 out:
	free(found);
	return rc;
}

static bool
is_python_name(const char *name)
{
	return strcmp(name, "python3") == 0 || strcmp(name, "python") == 0;
}

/* "cannot run in a sandbox: " before resolve_program()'s reason. */
static void
absent_prefix(char *why, size_t len)
{
	static const char head[] = "cannot run in a sandbox: ";
	size_t n = strlen(why), h = sizeof(head) - 1;

	if (n + h >= len)
		n = len - h - 1;	/* cut; still a reason */
	memmove(why + h, why, n);
	memcpy(why, head, h);
	why[h + n] = '\0';
}

/* Remembers the name of a default command this machine does not have. */
static void
note_dropped(struct policy *p, const char *name)
{
	char *copy;

	if (p->ndropped < POLICY_MAX_COMMANDS &&
	    (copy = strdup(name)) != NULL)
		p->dropped[p->ndropped++] = copy;
}

static int
resolve_commands(struct policy *p, char *err, size_t errlen)
{
	size_t i = 0;

	while (i < p->ncommands) {
		struct policy_command *c = &p->commands[i];
		const char *spec = c->path != NULL ? c->path : c->name;
		struct prog_binds *binds = NULL;
		char *path = NULL, why[768];	/* policy_binds.c's text */

		if (resolve_program(spec, is_python_name(c->name), &path,
		    &binds, why, sizeof(why)) == 0) {
			free(c->path);
			prog_binds_free(c->binds);
			c->path = path;
			c->binds = binds;
			i++;
			continue;
		}
		if (!c->optional) {
			bool named = why[0] == '\0' && spec[0] == '/';

			if (why[0] == '\0')
				(void)snprintf(why, sizeof(why), "%s",
				    spec[0] == '/' ? "not an executable file" :
				    "not found on PATH");
			else
				absent_prefix(why, sizeof(why));
			/* where it was asked for, and the path when the
			 * sentence does not name it */
			policy_set_err(err, errlen, "%s: command '%s': %s%s%s",
			    c->origin != NULL ? c->origin : "policy", c->name,
			    named ? spec : "", named ? ": " : "", why);
			return -1;
		}
		if (why[0] != '\0')
		{
			char what[POLICY_MAX_NAME + 32];	/* the name */
			(void)snprintf(what, sizeof(what), "command '%s' is "
			    "left out", c->name);
			note(p, what, why);
		} else
			note_dropped(p, c->name);
		free(c->origin);
		free(c->name);
		free(c->path);
		prog_binds_free(c->binds);
		memmove(c, c + 1, (p->ncommands - i - 1) * sizeof(*c));
		p->ncommands--;
		memset(&p->commands[p->ncommands], 0, sizeof(*c));
	}
	return 0;
}

static void
resolve_languages(struct policy *p)
{
	static const char *const programs[POLICY_LANG_COUNT][2] = {
		[POLICY_LANG_PYTHON3] = { "python3", NULL },
		[POLICY_LANG_NODE] = { "node", "nodejs" },
		[POLICY_LANG_SH] = { "sh", NULL },
		[POLICY_LANG_C] = { "cc", "gcc" },
	};
	char why[768], real[PATH_MAX];	/* policy_binds.c's sentence */
	int l, k;

	for (l = 0; l < POLICY_LANG_COUNT; l++) {
		struct policy_language *lang = &p->languages[l];
		bool py = l == POLICY_LANG_PYTHON3;

		lang->available = false;
		if (!lang->enabled)
			continue;
		/* the C driver is a fixed sh script: C needs sh too */
		if (l == POLICY_LANG_C && p->sh_path == NULL)
			continue;
		for (k = 0; k < 2 && programs[l][k] != NULL; k++) {
			free(lang->path);
			prog_binds_free(lang->binds);
			lang->path = NULL;
			lang->binds = NULL;
			if (resolve_program(programs[l][k], py, &lang->path,
			    &lang->binds, why, sizeof(why)) == 0) {
				lang->available = true;
				break;
			}
			/* the first on PATH cannot run inside: the system's */
			if (why[0] != '\0') {
				char *path = NULL;
				char what[64];	/* a program name */
				(void)snprintf(what, sizeof(what), "%s: the "
				    "first on PATH is passed over",
				    programs[l][k]);
				note(p, what, why);
				if (path_search_dirs(programs[l][k], &path) ==
				    0 && realpath(path, real) != NULL &&
				    in_system_dir(real) &&
				    (lang->path = strdup(real)) != NULL) {
					free(path);
					lang->available = true;
					break;
				}
				free(path);
			}
		}
	}
}

/* ---- skills ---- */

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted entry names of an open directory fd (consumed); owned array. */
static char **
dir_names(int dfd, size_t *ret_n)
{
	DIR *d;
	struct dirent *de;
	char **names = NULL;
	size_t n = 0;

	if ((d = fdopendir(dfd)) == NULL) {
		(void)close(dfd);
		return NULL;
	}
	if ((names = calloc(SKILL_MAX_ENTRIES, sizeof(char *))) == NULL)
		goto out;
	while ((de = readdir(d)) != NULL && n < SKILL_MAX_ENTRIES) {
		if (de->d_name[0] == '.')
			continue;
		if ((names[n] = strdup(de->d_name)) == NULL)
			break;
		n++;
	}
	qsort(names, n, sizeof(char *), name_cmp);
 out:
	(void)closedir(d);
	*ret_n = n;
	return names;
}

static void
names_free(char **names, size_t n)
{
	size_t i;

	for (i = 0; names != NULL && i < n; i++)
		free(names[i]);
	free(names);
}

/* Collapses whitespace and control characters, trims, bounds the length
 * (at a UTF-8 boundary). In place. */
static void
one_line(char *s, size_t max)
{
	char *w = s, *r;
	bool space = true;

	for (r = s; *r != '\0'; r++) {
		unsigned char c = (unsigned char)*r;
		if (c < 0x20 || c == 0x7f || c == ' ') {
			if (!space)
				*w++ = ' ';
			space = true;
			continue;
		}
		*w++ = (char)c;
		space = false;
	}
	while (w > s && w[-1] == ' ')
		w--;
	*w = '\0';
	if (strlen(s) > max) {
		size_t n = max;
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
		s[n] = '\0';
	}
}

static void
unquote(char *v)
{
	size_t n = strlen(v);

	if (n >= 2 && ((v[0] == '"' && v[n - 1] == '"') ||
	    (v[0] == '\'' && v[n - 1] == '\''))) {
		memmove(v, v + 1, n - 2);
		v[n - 2] = '\0';
	}
}

/*
 * Reads "name:" and "description:" from YAML front matter (between two
 * "---" lines at the top). Handles plain, quoted and folded (>, |) scalars;
 * anything else in the front matter is ignored. text is modified.
 */
static void
front_matter(char *text, char **ret_name, char **ret_desc)
{
	char *line, *next, *end;

	*ret_name = *ret_desc = NULL;
	if (strncmp(text, "---\n", 4) != 0 && strncmp(text, "---\r\n", 5) != 0)
		return;
	line = strchr(text, '\n') + 1;
	for (; line != NULL && *line != '\0'; line = next) {
		char *colon, *val, **dst = NULL;

		end = strchr(line, '\n');
		next = end != NULL ? end + 1 : NULL;
		if (end != NULL)
			*end = '\0';
		if (end != NULL && end > line && end[-1] == '\r')
			end[-1] = '\0';
		if (strcmp(line, "---") == 0)
			break;
		if (line[0] == ' ' || line[0] == '\t' ||
		    (colon = strchr(line, ':')) == NULL)
			continue;
		*colon = '\0';
		if (strcmp(line, "name") == 0)
			dst = ret_name;
		else if (strcmp(line, "description") == 0)
			dst = ret_desc;
		if (dst == NULL || *dst != NULL)
			continue;
		val = colon + 1;
		while (*val == ' ' || *val == '\t')
			val++;
		if (val[0] == '>' || val[0] == '|') {
			/* folded: the following indented lines, joined */
			char *start = next, *p = next;
			while (p != NULL && (*p == ' ' || *p == '\t')) {
				char *e = strchr(p, '\n');
				if (e == NULL) {
					p = NULL;
					break;
				}
				*e = ' ';
				p = e + 1;
			}
			if (start == NULL)
				continue;
			if (p != NULL)
				p[-1] = '\0';
			next = p;
			val = start;
		}
		unquote(val);
		one_line(val, POLICY_MAX_SUMMARY);
		*dst = strdup(val);
	}
}

static int
read_small(int dfd, const char *name, size_t max, char **ret)
{
	char *buf;
	size_t len = 0;
	ssize_t n;
	int fd;

	fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY |
	    O_NONBLOCK);
	if (fd < 0)
		return -1;
	if ((buf = malloc(max + 1)) == NULL) {
		(void)close(fd);
		return -1;
	}
	while (len < max && (n = read(fd, buf + len, max - len)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	(void)close(fd);
	*ret = buf;
	return 0;
}

static int
script_lang(const char *name)
{
	const char *dot = strrchr(name, '.');

	if (dot == NULL)
		return -1;
	if (strcmp(dot, ".py") == 0)
		return POLICY_LANG_PYTHON3;
	if (strcmp(dot, ".sh") == 0)
		return POLICY_LANG_SH;
	if (strcmp(dot, ".js") == 0 || strcmp(dot, ".mjs") == 0)
		return POLICY_LANG_NODE;
	return -1;
}

static int
scan_scripts(struct policy *p, struct policy_skill *sk, int skfd)
{
	char **names;
	size_t n, i;
	int sfd;

	sfd = openat(skfd, "scripts", O_RDONLY | O_DIRECTORY | O_CLOEXEC |
	    O_NOFOLLOW);
	if (sfd < 0)
		return 0;	/* a skill without scripts: nothing to run */
	names = dir_names(fcntl(sfd, F_DUPFD_CLOEXEC, 0), &n);
	if (names == NULL) {
		(void)close(sfd);
		return -1;
	}
	for (i = 0; i < n && sk->nscripts < POLICY_MAX_SCRIPTS; i++) {
		struct stat st;
		int l = script_lang(names[i]);

		if (l < 0 || !policy_name_ok(names[i]) ||
		    fstatat(sfd, names[i], &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(st.st_mode) || !p->languages[l].available)
			continue;
		if ((sk->scripts[sk->nscripts].name = strdup(names[i])) == NULL)
			break;
		sk->scripts[sk->nscripts++].lang = (enum policy_lang)l;
	}
	names_free(names, n);
	(void)close(sfd);
	return 0;
}

static int
scan_skills(struct policy *p, char *err, size_t errlen)
{
	char real[PATH_MAX], **names = NULL;
	size_t n = 0, i, j;
	int dfd = -1, rc = -1;

	if (realpath(p->skills_dir, real) == NULL) {
		policy_set_err(err, errlen, "skills directory %s: %s",
		    p->skills_dir, strerror(errno));
		return -1;
	}
	free(p->skills_dir);
	if ((p->skills_dir = strdup(real)) == NULL)
		goto nomem;
	dfd = open(real, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		policy_set_err(err, errlen, "skills directory %s: %s", real,
		    strerror(errno));
		return -1;
	}
	names = dir_names(fcntl(dfd, F_DUPFD_CLOEXEC, 0), &n);
	if (names == NULL)
		goto nomem;
	for (i = 0; i < n; i++) {
		struct policy_skill *sk;
		char *md = NULL, *name = NULL, *desc = NULL, dir[PATH_MAX];
		int skfd;

		skfd = openat(dfd, names[i], O_RDONLY | O_DIRECTORY |
		    O_CLOEXEC | O_NOFOLLOW);
		if (skfd < 0)
			continue;	/* files and symlinks are not skills */
		if (read_small(skfd, "SKILL.md", SKILL_MD_MAX, &md) != 0) {
			(void)close(skfd);
			continue;	/* no SKILL.md: not a skill */
		}
		front_matter(md, &name, &desc);
		free(md);
		if (name == NULL)
			name = strdup(names[i]);
		if (name == NULL || !policy_name_ok(name)) {
			policy_set_err(err, errlen,
			    "skill %s/%s: '%s' is not a valid skill name", real,
			    names[i], name ? name : "");
			goto skill_fail;
		}
		for (j = 0; j < p->nskills; j++)
			if (strcmp(p->skills[j].name, name) == 0)
				break;
		if (j < p->nskills) {
			policy_set_err(err, errlen,
			    "skill %s/%s: the name '%s' is used twice", real,
			    names[i], name);
			goto skill_fail;
		}
		if (p->nskills == POLICY_MAX_SKILLS) {
			policy_set_err(err, errlen, "%s: more than %d skills",
			    real, POLICY_MAX_SKILLS);
			goto skill_fail;
		}
		if ((size_t)snprintf(dir, sizeof(dir), "%s/%s", real,
		    names[i]) >= sizeof(dir)) {
			policy_set_err(err, errlen, "%s/%s: path too long",
			    real, names[i]);
			goto skill_fail;
		}
		sk = &p->skills[p->nskills++];
		sk->name = name;
		sk->summary = desc != NULL ? desc : strdup("");
		sk->dir = strdup(dir);
		name = desc = NULL;
		if ((sk->dirfd = openat(skfd, ".", O_PATH | O_DIRECTORY |
		    O_CLOEXEC)) >= 0)
			sk->pinned = true;
		else {
			policy_set_err(err, errlen, "skill %s: %s", dir,
			    strerror(errno));
			(void)close(skfd);
			goto out;
		}
		if (sk->summary == NULL || sk->dir == NULL ||
		    scan_scripts(p, sk, skfd) != 0) {
			(void)close(skfd);
			goto nomem;
		}
		(void)close(skfd);
		continue;
 skill_fail:
		free(name);
		free(desc);
		(void)close(skfd);
		goto out;
	}
	rc = 0;
	goto out;
 nomem:
	policy_set_err(err, errlen, "out of memory");
 out:
	names_free(names, n);
	if (dfd >= 0)
		(void)close(dfd);
	return rc;
}

static int
resolve_databases(struct policy *p, char *err, size_t errlen)
{
	char real[PATH_MAX];
	struct stat st;
	size_t i;

	for (i = 0; i < p->ndatabases; i++) {
		struct policy_database *d = &p->databases[i];

		if (realpath(d->path, real) == NULL || stat(real, &st) != 0) {
			policy_set_err(err, errlen, "database '%s': %s: %s",
			    d->name, d->path, strerror(errno));
			return -1;
		}
		if (!S_ISREG(st.st_mode)) {
			policy_set_err(err, errlen,
			    "database '%s': %s is not a regular file", d->name,
			    d->path);
			return -1;
		}
		free(d->path);
		if ((d->path = strdup(real)) == NULL) {
			policy_set_err(err, errlen, "out of memory");
			return -1;
		}
		/* opened beneath this directory, as this inode, from now on */
		policy_unpin_database(d);
		if (policy_pin_database(d, err, errlen) != 0)
			return -1;
	}
	return 0;
}

/*
 * The approvals ceiling must say something a call could get: each part
 * that cannot apply is an error naming the fix, not a silent no-op.
 */
static int
check_ceiling(const struct policy *p, char *err, size_t errlen)
{
	if (policy_asks(p) && !policy_network_enabled(p) && !p->ask_network) {
		policy_set_err(err, errlen, "network.ask_domains widens network "
		    "the policy gives, and it gives none (no "
		    "network.allowed_domains): set network.ask_network: true "
		    "(--ask-network) to let a call ask for network at all");
		return -1;
	}
	if (p->ask_network && !policy_asks(p)) {
		policy_set_err(err, errlen, "network.ask_network lets a call ask "
		    "for network, but network.ask_domains names nothing it "
		    "could ask for (--ask-domain PATTERN)");
		return -1;
	}
	if (p->limits.ask_timeout_ms != 0 &&
	    p->limits.ask_timeout_ms <= p->limits.max_timeout_ms) {
		policy_set_err(err, errlen, "limits: ask_timeout_ms (%u) is not "
		    "over max_timeout_ms (%u): a deadline up to that needs no "
		    "approval (0 turns asking for one off)",
		    p->limits.ask_timeout_ms, p->limits.max_timeout_ms);
		return -1;
	}
	return 0;
}

int
policy_finalize(struct policy *p, char *err, size_t errlen)
{
	struct prog_binds *binds = NULL;
	char why[768];	/* policy_binds.c's sentence */

	if (p->finalized)
		return 0;
	if (p->limits.timeout_ms > p->limits.max_timeout_ms) {
		policy_set_err(err, errlen,
		    "limits: timeout_ms (%u) is over max_timeout_ms (%u)",
		    p->limits.timeout_ms, p->limits.max_timeout_ms);
		return -1;
	}
	if (p->limits.task_timeout_ms < p->limits.max_timeout_ms) {
		policy_set_err(err, errlen, "limits: task_timeout_ms (%u) is "
		    "under max_timeout_ms (%u): a task may run at least as "
		    "long as a plain call", p->limits.task_timeout_ms,
		    p->limits.max_timeout_ms);
		return -1;
	}
	if (check_ceiling(p, err, errlen) != 0)
		return -1;
	p->egress->ceiling = policy_asks(p) ? p->ask : NULL;
	if (policy_secrets_finalize(p, err, errlen) != 0)
		return -1;
	free(p->sh_path);
	p->sh_path = NULL;
	if (resolve_program("sh", false, &p->sh_path, &binds, why,
	    sizeof(why)) == 0 && binds != NULL) {
		/* the fixed drivers run sh by this path with no binds */
		prog_binds_free(binds);
		free(p->sh_path);
		p->sh_path = NULL;
	}
	if (resolve_commands(p, err, errlen) != 0)
		return -1;
	resolve_languages(p);
	policy_skills_clear(p);
	if (p->skills_dir != NULL && scan_skills(p, err, errlen) != 0)
		return -1;
	if (resolve_databases(p, err, errlen) != 0)
		return -1;
	if (binds_resolve_allow(p, err, errlen) != 0)
		return -1;
	p->cores = sysconf(_SC_NPROCESSORS_ONLN);
	if (p->cores < 1)
		p->cores = 1;
	if (p->limits.max_sandboxes == 0)
		p->limits.max_sandboxes = (uint32_t)p->cores;
	p->finalized = true;
	return 0;
}
