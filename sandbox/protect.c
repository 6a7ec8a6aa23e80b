/*
 * protect: the workspace's protected names (sb_request.workspace_protect,
 * default .git and .hg), by one rule. At the plan, what makes git or
 * Mercurial run code or read config elsewhere (a git dir's config,
 * config.worktree, commondir, hooks and info, in the top .git and in every
 * submodule and worktree git dir; .hg's hgrc, hgrc-not-shared and
 * sharedpath) is bound read-only over itself, and every protected path is
 * noted as it is. After the run, once every process of it is gone, what a
 * protected path names that it did not at the start is renamed aside to a
 * random name. sandbox/README.md, "Auto-run files", says what this covers
 * and what it does not.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

/* 1 if name is one normal path component (no '/', not "." or ".."). */
static int
protect_name_ok(const char *name)
{
	size_t n = strlen(name);

	return n > 0 && n < NAME_MAX && strchr(name, '/') == NULL &&
	    strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
}

/*
 * Protected path pr beneath the workspace (ws_fd): its dir (O_PATH) in
 * *dir_fd, or -1, and what its name is now in *st. 0, 1 for nothing (its
 * dir gone, or no dir), or -errno: a symlink on the way (each dir on it
 * is a protected path of its own, checked before it).
 */
static int
prot_stat(int ws_fd, const struct sb_prot *pr, int *dir_fd, struct stat *st)
{
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH,
	};
	char dir[SB_PATH_MAX] = ".";

	if (pr->name_off > 0)
		(void)snprintf(dir, sizeof(dir), "%.*s",
		    (int)pr->name_off - 1, pr->path);
	if ((*dir_fd = (int)syscall(SYS_openat2, ws_fd, dir, &how,
	    sizeof(how))) < 0)
		return errno == ENOENT || errno == ENOTDIR ? 1 : -errno;
	if (fstatat(*dir_fd, pr->path + pr->name_off, st,
	    AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 1 : -errno;
	return 0;
}

/*
 * 1 if protected path pr names something now that it did not at the
 * start (nothing then, or another inode; with lists, a list of git dirs
 * that gained or lost an entry), else 0, or -errno; *dir_fd as prot_stat.
 */
static int
prot_changed(int ws_fd, const struct sb_prot *pr, bool lists,
    int *dir_fd)
{
	struct stat st;
	int rc;

	if ((rc = prot_stat(ws_fd, pr, dir_fd, &st)) != 0)
		return rc < 0 ? rc : 0;
	if (!pr->present || st.st_dev != pr->dev || st.st_ino != pr->ino)
		return 1;
	return lists && pr->list && (st.st_ctim.tv_sec != pr->ctime.tv_sec ||
	    st.st_ctim.tv_nsec != pr->ctime.tv_nsec);
}

/*
 * Protected path dir/name (dir: "." at the top) as it is at the run's
 * start, noted for its end; *type gets its S_IFMT, 0 when absent. A
 * symlink, or what is neither a file nor a dir, cannot be kept read-only:
 * it fails the request.
 */
static int
prot_note(struct sb_plan *p, int ws_fd, const char *dir, const char *name,
    mode_t *type, struct sb_result *res)
{
	struct sb_prot *pr = &p->prot[p->nprot];
	char path[SB_PATH_MAX];
	struct stat st;
	int fd, n, rc;

	if (p->nprot == SB_MAX_PROTECTED)
		return sb_request_fail(res, E2BIG, "more protected workspace "
		    "entries than SB_MAX_PROTECTED (submodules, worktrees)");
	n = strcmp(dir, ".") == 0 ? snprintf(path, sizeof(path), "%s", name) :
	    snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (n < 0 || (size_t)n >= sizeof(path))
		return sb_request_fail(res, ENAMETOOLONG,
		    "a protected workspace path is too long");
	if ((pr->path = sb_plan_strdup(p, path)) == NULL)
		return sb_request_fail(res, ENOMEM, "the plan's strings");
	pr->name_off = (size_t)n - strlen(name);
	pr->present = pr->list = false;
	rc = prot_stat(ws_fd, pr, &fd, &st);
	if (fd >= 0)
		(void)close(fd);
	if (rc < 0 || fd < 0)
		return sb_request_fail(res, rc < 0 ? -rc : ENOENT, "cannot look "
		    "up a protected workspace path");
	*type = rc == 0 ? st.st_mode & S_IFMT : 0;
	if (*type != 0 && *type != S_IFDIR && *type != S_IFREG)
		return sb_request_fail(res, *type == S_IFLNK ? ELOOP : EINVAL,
		    "a protected workspace path (.git, .git/config, ...) is a "
		    "symlink or neither a file nor a dir: it cannot be kept "
		    "read-only");
	if (*type != 0) {
		pr->present = true;
		pr->dev = st.st_dev;
		pr->ino = st.st_ino;
		pr->ctime = st.st_ctim;
	}
	p->nprot++;
	return 0;
}

/*
 * The protected path just noted (relative to the workspace, ws inside)
 * read-only: that inode, as noted. Another one at that name when the
 * init binds it (a run of the same workspace swapping it meanwhile, as
 * while a sandbox is built ahead) fails the build.
 */
static int
prot_bind(struct sb_plan *p, const char *ws, const char *path,
    struct sb_result *res)
{
	const struct sb_prot *pr = &p->prot[p->nprot - 1];
	char inside[SB_PATH_MAX];
	struct sb_mop *m;
	const char *in;
	int n;

	n = snprintf(inside, sizeof(inside), "%s/%s", ws, path);
	if (n < 0 || (size_t)n >= sizeof(inside))
		return sb_request_fail(res, ENAMETOOLONG,
		    "a protected workspace path is too long");
	if ((in = sb_plan_strdup(p, inside)) == NULL || (m = sb_plan_add_mop(p,
	    SB_MOP_PROTECT, SB_STAGE_MOUNTS, in)) == NULL)
		return sb_request_fail(res, E2BIG, "the sandbox plan does not "
		    "fit");
	m->dev = pr->dev;
	m->ino = pr->ino;
	return 0;
}

/* Each of names in dir noted, and bound read-only if there. */
static int
prot_entries(struct sb_plan *p, int ws_fd, const char *ws, const char *dir,
    const char *const *names, struct sb_result *res)
{
	mode_t type;
	int rc;

	for (; *names != NULL; names++) {
		if ((rc = prot_note(p, ws_fd, dir, *names, &type, res)) < 0)
			return rc;
		if (type != 0 && (rc = prot_bind(p, ws,
		    p->prot[p->nprot - 1].path, res)) < 0)
			return rc;
	}
	return 0;
}

/*
 * A git dir (the top .git, a submodule's under modules/, nesting, a
 * worktree's under worktrees/): what makes git run code or read its
 * config elsewhere, read-only; objects, refs, the index, HEAD and logs
 * stay writable (git add, git commit).
 */
static int
prot_git_dir(struct sb_plan *p, int ws_fd, const char *ws, const char *dir,
    struct sb_result *res)
{
	static const char *const entries[] = { "config", "config.worktree",
	    "commondir", "hooks", "info", NULL };
	static const char *const lists[] = { "modules", "worktrees" };
	const char *sub;
	struct dirent *e;
	size_t i;
	mode_t type;
	DIR *d;
	int fd, rc;

	if ((rc = prot_entries(p, ws_fd, ws, dir, entries, res)) < 0)
		return rc;
	for (i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		if ((rc = prot_note(p, ws_fd, dir, lists[i], &type, res)) < 0)
			return rc;
		if (type != S_IFDIR)
			continue;
		p->prot[p->nprot - 1].list = true;
		fd = (int)syscall(SYS_openat2, ws_fd,
		    p->prot[p->nprot - 1].path,
		    &(struct open_how){ .flags = O_RDONLY | O_DIRECTORY |
		    O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS |
		    RESOLVE_BENEATH }, sizeof(struct open_how));
		if (fd < 0 || (d = fdopendir(fd)) == NULL) {
			rc = errno;
			if (fd >= 0)
				(void)close(fd);
			return sb_request_fail(res, rc, "cannot list a protected "
			    "workspace dir");
		}
		sub = p->prot[p->nprot - 1].path;
		while (rc == 0 && (e = readdir(d)) != NULL) {
			if (strcmp(e->d_name, ".") == 0 ||
			    strcmp(e->d_name, "..") == 0)
				continue;
			if ((rc = prot_note(p, ws_fd, sub, e->d_name, &type,
			    res)) == 0 && type == S_IFDIR)
				rc = prot_git_dir(p, ws_fd, ws,
				    p->prot[p->nprot - 1].path, res);
		}
		(void)closedir(d);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/*
 * The protected names of a writable workspace (a read-only one keeps
 * everything), added to a built plan (exec.c), so bound after every other
 * mount of it, the workspace's among them (init.c, by fd).
 * A dir named .git is a git dir; in a .hg dir, what Mercurial reads as
 * config (hooks) or where it finds the store; anything else there (a
 * .git file, another name of the list) is read-only whole. Each path is
 * noted as it is now: what names something else at the run's end is
 * moved aside (sb_protect_finish). A mount point inside can be
 * neither written, renamed nor removed.
 */
int
sb_protect_plan(struct sb_plan *p, const struct sb_request *req,
    struct sb_result *res)
{
	static const char *const hg[] = { "hgrc", "hgrc-not-shared",
	    "sharedpath", NULL };
	const char *ws = req->workspace_path != NULL ? req->workspace_path :
	    SB_DEFAULT_WORKSPACE;
	const char *name;
	mode_t type;
	size_t i;
	int ws_fd, rc = 0;

	if (req->workspace_host == NULL || req->workspace_protect == NULL ||
	    !req->workspace_writable)
		return 0;	/* nothing it can change */
	if ((ws_fd = sb_open_host(req->workspace_host, true)) < 0)
		return sb_request_fail(res, -ws_fd, "cannot open the workspace "
		    "dir");
	for (i = 0; rc == 0 && (name = req->workspace_protect[i]) != NULL;
	    i++) {
		if (i >= SB_MAX_PROTECT || !protect_name_ok(name))
			rc = sb_request_fail(res, EINVAL, "a protected "
			    "workspace name is not one path component, or "
			    "there are too many");
		else if ((rc = prot_note(p, ws_fd, ".", name, &type,
		    res)) < 0 || type == 0)
			continue;
		else if (type == S_IFDIR && strcmp(name, ".git") == 0)
			rc = prot_git_dir(p, ws_fd, ws, name, res);
		else if (type == S_IFDIR && strcmp(name, ".hg") == 0)
			rc = prot_entries(p, ws_fd, ws, name, hg, res);
		else
			rc = prot_bind(p, ws, name, res);
	}
	(void)close(ws_fd);
	return rc;
}

/*
 * Once every process of the run is gone: each protected path that names
 * something it did not at the start (nothing then, or another inode: this
 * run or another of the workspace made it) is renamed aside on the host,
 * the entry itself and never what a symlink points at, to NAME.from-
 * sandbox- and 64 random bits (RENAME_NOREPLACE), so that git or hg there
 * never reads what a sandbox wrote in their place. Paths are looked up
 * beneath the workspace without following symlinks, each dir on the way
 * before its entries. The root server's too: git's ownership check
 * refuses a .git of the sandboxes' uid, but not a hooks/ or commondir of
 * theirs in the owner's .git. What was done goes in res.
 */
void
sb_protect_finish(const struct sb_plan *p, struct sb_result *res)
{
	char to[NAME_MAX + 1], *buf = res->protect_moved;
	const size_t len = sizeof(res->protect_moved);
	const struct sb_prot *pr;
	uint64_t rnd = 0;
	size_t i, w = 0;
	int ws_fd, fd, n, rc;

	if (p->nprot == 0)
		return;
	ws_fd = sb_open_host(p->ws_host, true);
	for (i = 0; i < p->nprot; i++) {
		pr = &p->prot[i];
		fd = -1;
		if ((rc = ws_fd) >= 0 &&
		    (rc = prot_changed(ws_fd, pr, false, &fd)) == 0) {
			if (fd >= 0)
				(void)close(fd);
			continue;	/* as at the start, or gone */
		}
		if (rc > 0 && getrandom(&rnd, sizeof(rnd), 0) !=
		    (ssize_t)sizeof(rnd))
			rc = -EIO;
		n = snprintf(to, sizeof(to), "%s.from-sandbox-%016llx",
		    pr->path + pr->name_off, (unsigned long long)rnd);
		if (rc > 0 && (n < 0 || (size_t)n >= sizeof(to)))
			rc = -ENAMETOOLONG;
		if (rc > 0 && renameat2(fd, pr->path + pr->name_off, fd, to,
		    RENAME_NOREPLACE) < 0)
			rc = -errno;
		if (fd >= 0)
			(void)close(fd);
		if (rc > 0)
			n = snprintf(buf + w, len - w, "%s%s moved to %.*s%s",
			    w > 0 ? "; " : "", pr->path, (int)pr->name_off,
			    pr->path, to);
		else
			n = snprintf(buf + w, len - w, "%s%s could not be "
			    "moved aside (%s)", w > 0 ? "; " : "", pr->path,
			    strerror(-rc));
		if (n > 0)
			w = (size_t)n >= len - w ? len - 1 : w + (size_t)n;
		if (ws_fd < 0)
			break;
	}
	if (ws_fd >= 0)
		(void)close(ws_fd);
}

/* Current: no protected path names what it did not at the start, and
 * no submodule or worktree came since (unbound in this run). */
bool
sb_protect_current(const struct sb_plan *p)
{
	size_t i;
	int ws_fd, fd, rc = 0;

	if (p->nprot == 0)
		return true;
	if ((ws_fd = sb_open_host(p->ws_host, true)) < 0)
		return false;
	for (i = 0; rc == 0 && i < p->nprot; i++) {
		rc = prot_changed(ws_fd, &p->prot[i], true, &fd);
		if (fd >= 0)
			(void)close(fd);
	}
	(void)close(ws_fd);
	return rc == 0;
}
