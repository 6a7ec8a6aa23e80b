/*
 * plan: turn a request into the straight-line plan the child follows. All
 * checks on caller input happen here, in the parent, before any fork: paths
 * normalised, nothing mounted on or under a reserved or writable tree.
 * Whether the program is there is the execve's to say, inside the root it
 * names it in (SB_STAGE_EXEC). Allocates; the child never does.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

_Static_assert(RLIM_NLIMITS == SB_MAX_RLIMITS, "a slot for every rlimit");

/* Landlock rights, as bits of the ABI: read+exec, and everything (rw). */
#define SB_LL_RO	((1ULL << 0) | (1ULL << 2) | (1ULL << 3))
#define SB_LL_RW	((1ULL << 16) - 1)
#define SB_LL_DEV	((1ULL << 1) | (1ULL << 2) | (1ULL << 3) | \
			 (1ULL << 14) | (1ULL << 15))
/* inodes of /tmp: one per 4 KiB page of its size, like tmpfs's default. */
#define SB_TMP_INODE_BYTES	4096
/* ...plus a few, so a tiny /tmp still holds a handful of empty files. */
#define SB_TMP_INODE_SLACK	64
/* The root tmpfs only holds mount points, symlinks and three tiny files. */
#define SB_ROOT_OPTS		"mode=0755,size=256k,nr_inodes=256"

const char *
sb_plan_strdup(struct sb_plan *p, const char *s)
{
	char *d;

	if (p->nowned >= sizeof(p->owned) / sizeof(p->owned[0]))
		return NULL;
	if ((d = strdup(s)) == NULL)
		return NULL;
	p->owned[p->nowned++] = d;
	return d;
}

struct sb_mop *
sb_plan_add_mop(struct sb_plan *p, enum sb_mop_kind kind, enum sb_stage stage,
    const char *abs_path)
{
	struct sb_mop *m;

	if (p->nmops >= SB_MAX_MOPS)
		return NULL;
	m = &p->mops[p->nmops++];
	memset(m, 0, sizeof(*m));
	m->kind = kind;
	m->stage = stage;
	m->path = abs_path + 1;	/* relative to the new root */
	m->fd = -1;
	return m;
}

static bool
have_dir(const struct sb_plan *p, const char *rel, size_t len)
{
	size_t i;

	for (i = 0; i < p->nmops; i++) {
		const struct sb_mop *m = &p->mops[i];

		if ((m->kind == SB_MOP_DIR || (m->kind == SB_MOP_BIND &&
		    m->src_dir)) && strlen(m->path) == len &&
		    strncmp(m->path, rel, len) == 0)
			return true;
	}
	return false;
}

/* mkdir every missing ancestor of abs_path (a normal path) in the new root. */
static int
add_parents(struct sb_plan *p, const char *abs_path, enum sb_stage stage)
{
	const char *c;
	char *copy;
	struct sb_mop *m;

	for (c = strchr(abs_path + 1, '/'); c != NULL; c = strchr(c + 1, '/')) {
		size_t len = (size_t)(c - abs_path);

		if (have_dir(p, abs_path + 1, len - 1))
			continue;
		if ((copy = strndup(abs_path, len)) == NULL)
			return -ENOMEM;
		if (p->nowned >= sizeof(p->owned) / sizeof(p->owned[0])) {
			free(copy);
			return -E2BIG;
		}
		p->owned[p->nowned++] = copy;
		if ((m = sb_plan_add_mop(p, SB_MOP_DIR, stage, copy)) == NULL)
			return -E2BIG;
		m->mode = 0755;
	}
	return 0;
}

/*
 * The child opens host (O_PATH, no symlinks) itself, after it entered its
 * mount namespace: the kernel binds only mounts of the caller's namespace.
 */
static int
add_bind(struct sb_plan *p, const char *abs_path, const char *host, bool dir,
    bool writable, bool device, enum sb_stage stage)
{
	struct sb_mop *m;
	int rc;

	if ((rc = add_parents(p, abs_path, stage)) < 0)
		return rc;
	if ((m = sb_plan_add_mop(p, SB_MOP_BIND, stage, abs_path)) == NULL)
		return -E2BIG;
	m->host = host;
	m->fd = SB_FD_FIRST_BIND + p->nbind_fds++;
	m->src_dir = dir;
	m->writable = writable;
	m->device = device;
	(void)snprintf(m->src, sizeof(m->src), "/proc/self/fd/%d", m->fd);
	return 0;
}

static int
add_simple(struct sb_plan *p, enum sb_mop_kind kind, enum sb_stage stage,
    const char *abs_path, const char *arg, mode_t mode)
{
	struct sb_mop *m;
	int rc;

	if ((rc = add_parents(p, abs_path, stage)) < 0)
		return rc;
	if ((m = sb_plan_add_mop(p, kind, stage, abs_path)) == NULL)
		return -E2BIG;
	m->arg = arg;
	m->arg_len = arg != NULL ? strlen(arg) : 0;
	m->mode = mode;
	return 0;
}

static bool
is_reserved(const char *path)
{
	size_t i;

	if (strcmp(path, "/") == 0)
		return true;
	for (i = 0; i < sb_nreserved_paths; i++)
		if (sb_path_under(path, sb_reserved_paths[i]) ||
		    sb_path_under(sb_reserved_paths[i], path))
			return true;
	return false;
}

int
sb_request_fail(struct sb_result *res, int err, const char *what)
{
	sb_fail(res, SB_STAGE_REQUEST, err, what);
	return -err;
}

static int
check_request(const struct sb_request *req, const char *ws,
    struct sb_result *res)
{
	size_t i, j;

	/* a deferred run's program is checked at sb_finish() */
	if (!req->deferred && !sb_path_is_normal(req->program))
		return sb_request_fail(res, EINVAL,
		    "program must be an absolute, normalised path");
	if (!req->deferred && (req->argv == NULL || req->argv[0] == NULL))
		return sb_request_fail(res, EINVAL, "argv must hold argv[0]");
	if (req->network != SB_NET_NONE && req->network != SB_NET_PROXY)
		return sb_request_fail(res, EINVAL, "unknown network mode");
	if (req->network == SB_NET_PROXY && req->net_listener == NULL)
		return sb_request_fail(res, EINVAL,
		    "network proxy without a listener callback");
	if (req->stdin_len > 0 && req->stdin_data == NULL)
		return sb_request_fail(res, EINVAL, "stdin_len without stdin_data");
	if (req->limits.nproc > SB_MAX_NPROC)
		return sb_request_fail(res, EINVAL, "limits.nproc is above "
		    "SB_MAX_NPROC (4194303: the kernel's most pids, less the "
		    "init)");
	if (req->workspace_host != NULL) {
		if (req->workspace_host[0] != '/')
			return sb_request_fail(res, EINVAL,
			    "workspace host dir must be absolute");
		if (!sb_path_is_normal(ws) || is_reserved(ws))
			return sb_request_fail(res, EINVAL,
			    "workspace path inside is reserved or not normal");
	}
	if (req->nbinds > SB_MAX_BINDS || (req->nbinds > 0 &&
	    req->binds == NULL))
		return sb_request_fail(res, E2BIG, "too many binds");
	for (i = 0; i < req->nbinds; i++) {
		const struct sb_bind *b = &req->binds[i];

		if (b->host_path == NULL || b->host_path[0] != '/' ||
		    !sb_path_is_normal(b->sandbox_path) ||
		    is_reserved(b->sandbox_path))
			return sb_request_fail(res, EINVAL,
			    "bind path reserved, relative or not normal");
		if (req->workspace_host != NULL &&
		    (sb_path_under(b->sandbox_path, ws) ||
		    sb_path_under(ws, b->sandbox_path)))
			return sb_request_fail(res, EINVAL,
			    "bind overlaps the workspace");
		for (j = 0; j < i; j++)
			if (sb_path_under(b->sandbox_path,
			    req->binds[j].sandbox_path) ||
			    sb_path_under(req->binds[j].sandbox_path,
			    b->sandbox_path))
				return sb_request_fail(res, EINVAL,
				    "two binds overlap");
	}
	return 0;
}

static int
add_system(struct sb_ctx *ctx, struct sb_plan *p)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < ctx->nsys && rc == 0; i++) {
		const struct sb_sysent *e = &ctx->sys[i];
		enum sb_stage stage = strncmp(e->path, "/dev/", 5) == 0 ?
		    SB_STAGE_DEV : SB_STAGE_MOUNTS;

		switch (e->kind) {
		case SB_SYS_SYMLINK:
			rc = add_simple(p, SB_MOP_SYMLINK, stage, e->path,
			    e->link, 0);
			break;
		case SB_SYS_BIND_DIR:
			rc = add_bind(p, e->path, e->path, true, false, false,
			    stage);
			break;
		case SB_SYS_BIND_FILE:
			rc = add_bind(p, e->path, e->path, false, false, false,
			    stage);
			break;
		case SB_SYS_DEVICE:
			rc = add_bind(p, e->path, e->path, false, false, true,
			    stage);
			break;
		}
	}
	if (rc < 0)
		return rc;
	if ((rc = add_simple(p, SB_MOP_FILE, SB_STAGE_MOUNTS, "/etc/passwd",
	    ctx->passwd, 0444)) < 0 ||
	    (rc = add_simple(p, SB_MOP_FILE, SB_STAGE_MOUNTS, "/etc/group",
	    ctx->group, 0444)) < 0 ||
	    (rc = add_simple(p, SB_MOP_FILE, SB_STAGE_MOUNTS, "/etc/hosts",
	    sb_etc_hosts, 0444)) < 0 ||
	    (rc = add_simple(p, SB_MOP_SYMLINK, SB_STAGE_DEV, "/dev/fd",
	    "/proc/self/fd", 0)) < 0 ||
	    (rc = add_simple(p, SB_MOP_SYMLINK, SB_STAGE_DEV, "/dev/stdin",
	    "/proc/self/fd/0", 0)) < 0 ||
	    (rc = add_simple(p, SB_MOP_SYMLINK, SB_STAGE_DEV, "/dev/stdout",
	    "/proc/self/fd/1", 0)) < 0 ||
	    (rc = add_simple(p, SB_MOP_SYMLINK, SB_STAGE_DEV, "/dev/stderr",
	    "/proc/self/fd/2", 0)) < 0 ||
	    (rc = add_simple(p, SB_MOP_SYMLINK, SB_STAGE_DEV, "/dev/shm",
	    "/tmp", 0)) < 0 ||
	    (rc = add_simple(p, SB_MOP_PROC, SB_STAGE_PROC, "/proc",
	    sb_proc_opts, 0)) < 0)
		return rc;
	return 0;
}

static void
add_rlimit(struct sb_plan *p, int resource, uint64_t soft, uint64_t hard)
{
	struct sb_rlimit *r = &p->rlimits[p->nrlimits++];

	r->resource = resource;
	r->soft = soft;
	r->hard = hard;
}

static void
add_ll_rule(struct sb_plan *p, const char *path, uint64_t access)
{
	p->ll_rules[p->nll_rules].path = path;
	p->ll_rules[p->nll_rules].access = access;
	p->nll_rules++;
}

void
sb_limits_default(struct sb_limits *l)
{
	memset(l, 0, sizeof(*l));
	l->wall_ms = SB_DEFAULT_WALL_MS;
	l->cpu_s = SB_DEFAULT_CPU_S;
	l->as_bytes = SB_DEFAULT_AS_BYTES;
	l->fsize_bytes = SB_DEFAULT_FSIZE_BYTES;
	l->nofile = SB_DEFAULT_NOFILE;
	l->nproc = SB_DEFAULT_NPROC;
	l->tmp_bytes = SB_DEFAULT_TMP_BYTES;
	l->stdout_cap = SB_DEFAULT_OUTPUT_CAP;
	l->stderr_cap = SB_DEFAULT_OUTPUT_CAP;
}

/* Fill zero fields of *l from the defaults. */
static void
limits_complete(struct sb_limits *l)
{
	struct sb_limits d;

	sb_limits_default(&d);
	if (l->wall_ms == 0)
		l->wall_ms = d.wall_ms;
	if (l->cpu_s == 0)
		l->cpu_s = d.cpu_s;
	if (l->as_bytes == 0)
		l->as_bytes = d.as_bytes;
	if (l->memory_bytes == 0)
		l->memory_bytes = l->as_bytes;
	if (l->fsize_bytes == 0)
		l->fsize_bytes = d.fsize_bytes;
	if (l->nofile == 0)
		l->nofile = d.nofile;
	if (l->nproc == 0)
		l->nproc = d.nproc;
	if (l->tmp_bytes == 0)
		l->tmp_bytes = d.tmp_bytes;
	if (l->stdout_cap == 0)
		l->stdout_cap = d.stdout_cap;
	if (l->stderr_cap == 0)
		l->stderr_cap = d.stderr_cap;
}

/*
 * What a host source the server named is: S_IFDIR or S_IFREG, or -errno
 * (missing, a symlink somewhere in its path, or something else). The
 * child opens it again itself, the same way, inside its namespace.
 */
static int
host_kind(const char *path)
{
	struct stat st;
	int fd, rc;

	if ((fd = sb_open_host(path, false)) < 0)
		return fd;
	if (fstat(fd, &st) < 0)
		rc = -errno;
	else if (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))
		rc = (int)(st.st_mode & S_IFMT);
	else
		rc = -EINVAL;
	(void)close(fd);
	return rc;
}

/*
 * With per-slot uids the parent mounts the workspace and each writable
 * bind itself, id-mapped to the run's uid (uids.c, sb_uid_trees), as detached
 * trees the child moves in.
 */
static int
add_tree(struct sb_plan *p, const char *abs_path, const char *host,
    bool writable)
{
	struct sb_mop *m;
	int rc;

	if (p->ntrees == SB_MAX_TREES)
		return -E2BIG;
	if ((rc = add_parents(p, abs_path, SB_STAGE_MOUNTS)) < 0)
		return rc;
	p->tree_mop[p->ntrees] = p->nmops;
	if ((m = sb_plan_add_mop(p, SB_MOP_TREE, SB_STAGE_MOUNTS, abs_path)) == NULL)
		return -E2BIG;
	m->host = host;
	m->fd = SB_FD_TREE + (int)p->ntrees++;
	m->src_dir = true;
	m->writable = writable;
	return 0;
}

/* The workspace (also the cwd) and the extra read-only binds. */
static int
add_request_binds(const struct sb_ctx *ctx, struct sb_plan *p,
    const struct sb_request *req, const char *ws, struct sb_result *res)
{
	const char *s;
	size_t i;
	int kind, rc;

	if (req->workspace_host != NULL) {
		if ((kind = host_kind(req->workspace_host)) != S_IFDIR) {
			sb_fail(res, SB_STAGE_REQUEST, kind < 0 ? -kind : ENOTDIR,
			    "cannot open the workspace dir (missing, not a "
			    "dir, or a symlink in its path)");
			return kind < 0 ? kind : -ENOTDIR;
		}
		if ((s = sb_plan_strdup(p, ws)) == NULL)
			return -ENOMEM;
		if (ctx->uid_pool_on)
			rc = add_tree(p, s, req->workspace_host,
			    req->workspace_writable);
		else
			rc = add_bind(p, s, req->workspace_host, true,
			    req->workspace_writable, false, SB_STAGE_MOUNTS);
		if (rc < 0)
			return rc;
		p->cwd = s;
		/* its protected names: exec.c adds them (protect.c) */
		if ((p->ws_host = sb_plan_strdup(p, req->workspace_host)) == NULL)
			return -ENOMEM;
	}
	for (i = 0; i < req->nbinds; i++) {
		if ((kind = host_kind(req->binds[i].host_path)) < 0) {
			sb_fail(res, SB_STAGE_REQUEST, -kind, "cannot open a "
			    "bind source (missing, a symlink in its path, or "
			    "neither a file nor a dir)");
			return kind;
		}
		if (req->binds[i].writable && kind != S_IFDIR) {
			sb_fail(res, SB_STAGE_REQUEST, EINVAL, "a writable "
			    "bind must be a directory");
			return -EINVAL;
		}
		if ((s = sb_plan_strdup(p, req->binds[i].sandbox_path)) == NULL)
			return -ENOMEM;
		/* Landlock: writes beneath it, as in the workspace */
		if (req->binds[i].writable)
			add_ll_rule(p, s, SB_LL_RW);
		/* writable: its files keep their owner on disk, as in the
		 * workspace, whatever slot uid the run has */
		if (req->binds[i].writable && ctx->uid_pool_on)
			rc = add_tree(p, s, req->binds[i].host_path, true);
		else
			rc = add_bind(p, s, req->binds[i].host_path,
			    kind == S_IFDIR, req->binds[i].writable, false,
			    SB_STAGE_MOUNTS);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int
add_tmp(struct sb_plan *p, uint64_t bytes)
{
	char opts[96];
	const char *s;

	(void)snprintf(opts, sizeof(opts), "mode=1777,size=%llu,nr_inodes=%llu",
	    (unsigned long long)bytes,
	    (unsigned long long)(bytes / SB_TMP_INODE_BYTES + SB_TMP_INODE_SLACK));
	if ((s = sb_plan_strdup(p, opts)) == NULL)
		return -ENOMEM;
	return add_simple(p, SB_MOP_TMPFS, SB_STAGE_MOUNTS, "/tmp", s, 01777);
}

static void
add_limits(struct sb_plan *p, const struct sb_limits *l, bool ws_rw,
    bool pids_cgroup)
{
	uint64_t nproc = (uint64_t)l->nproc +
	    (pids_cgroup ? SB_NPROC_OVER_CGROUP : 0);

	add_rlimit(p, RLIMIT_CPU, l->cpu_s, (uint64_t)l->cpu_s + 1);
	add_rlimit(p, RLIMIT_AS, l->as_bytes, l->as_bytes);
	add_rlimit(p, RLIMIT_FSIZE, l->fsize_bytes, l->fsize_bytes);
	add_rlimit(p, RLIMIT_NOFILE, l->nofile, l->nofile);
	add_rlimit(p, RLIMIT_NPROC, nproc, nproc);
	add_rlimit(p, RLIMIT_CORE, 0, 0);
	/* the rest: see SB_RLIM_* in internal.h for each reason */
	add_rlimit(p, RLIMIT_RTPRIO, 0, 0);
	add_rlimit(p, RLIMIT_RTTIME, 0, 0);
	add_rlimit(p, RLIMIT_NICE, 0, 0);
	add_rlimit(p, RLIMIT_MEMLOCK, SB_RLIM_MEMLOCK, SB_RLIM_MEMLOCK);
	add_rlimit(p, RLIMIT_MSGQUEUE, SB_RLIM_MSGQUEUE, SB_RLIM_MSGQUEUE);
	add_rlimit(p, RLIMIT_SIGPENDING, SB_RLIM_SIGPENDING,
	    SB_RLIM_SIGPENDING);
	add_rlimit(p, RLIMIT_STACK, SB_RLIM_STACK, SB_RLIM_STACK);
	add_rlimit(p, RLIMIT_DATA, l->as_bytes, l->as_bytes);
	add_rlimit(p, RLIMIT_RSS, l->as_bytes, l->as_bytes);
	add_rlimit(p, RLIMIT_LOCKS, l->nofile, l->nofile);
	add_ll_rule(p, "/", SB_LL_RO);
	add_ll_rule(p, "/tmp", SB_LL_RW);
	add_ll_rule(p, "/dev", SB_LL_DEV);
	if (ws_rw)
		add_ll_rule(p, p->cwd, SB_LL_RW);
}

/*
 * Limits kept by the kernel outside rlimits: System V IPC (a root server's
 * ipc namespace gets the plan's memory figure, see exec.c; an unprivileged
 * one cannot set them and refuses System V IPC instead), and the
 * sandbox's share of the per-uid inotify pool.
 */
static void
add_kernel_limits(const struct sb_ctx *ctx, struct sb_plan *p)
{
	long page = sysconf(_SC_PAGESIZE);

	p->ipc_by_parent = ctx->ipc_home_fd >= 0;
	p->sysv_filter = p->ipc_by_parent ? NULL : &sb_sysv_deny;
	/* memfd pages: counted by the run's memory cgroup, else by nothing */
	p->memfd_filter = ctx->cg.have[SB_CG_MEMORY] ? NULL : &sb_memfd_deny;
	p->shmmax = p->limits.as_bytes;
	p->shmall = p->limits.as_bytes / (uint64_t)(page > 0 ? page : 4096);
	p->inotify_instances = SB_INOTIFY_INSTANCES;
	p->inotify_watches = SB_INOTIFY_WATCHES;
}

/*
 * Build plan p for req. Everything the child needs is in p (strings owned
 * by it, released by sb_plan_fini). On error res says why and p holds
 * nothing. The fd_from slots (status, sync, stdio) are the caller's.
 */
int
sb_plan_build(struct sb_ctx *ctx, const struct sb_request *req,
    struct sb_plan *p, struct sb_result *res)
{
	const char *ws = req->workspace_path != NULL ? req->workspace_path :
	    SB_DEFAULT_WORKSPACE;
	size_t i;
	int rc;

	memset(p, 0, sizeof(*p));
	if ((rc = check_request(req, ws, res)) < 0)
		return rc;
	p->limits = req->limits;
	limits_complete(&p->limits);
	p->nfds = SB_FD_FIRST_BIND - SB_FD_STATUS;
	for (i = 0; i < (size_t)p->nfds; i++)
		p->fd_from[i] = -1;
	p->uid = SB_INSIDE_UID;
	p->gid = SB_INSIDE_GID;
	p->drop_groups = ctx->host_root;
	p->limit_nested_userns = true;
	p->staging = ctx->staging;
	p->root_opts = SB_ROOT_OPTS;
	p->hostname = sb_hostname;
	p->last_cap = ctx->last_cap;
	p->landlock_abi = ctx->landlock_abi;
	/* only a root launcher can give the priority back (sb_finish) */
	p->start_idle = req->limits.start_low && ctx->host_root;
	p->net_proxy = req->network == SB_NET_PROXY;
	p->filter = &ctx->filter;
	p->cwd = "/tmp";
	if ((rc = add_system(ctx, p)) < 0 ||
	    (rc = add_tmp(p, p->limits.tmp_bytes)) < 0)
		goto fail;
	if ((rc = add_request_binds(ctx, p, req, ws, res)) < 0) {
		if (res->failed_stage == SB_STAGE_NONE)
			goto fail;
		sb_plan_fini(p);
		return rc;
	}
	add_limits(p, &p->limits, req->workspace_host != NULL &&
	    req->workspace_writable, ctx->cg.have[SB_CG_PIDS]);
	add_kernel_limits(ctx, p);
	return 0;
 fail:
	sb_fail(res, SB_STAGE_REQUEST, -rc, "the sandbox plan does not fit");
	sb_plan_fini(p);
	return rc;
}

void
sb_plan_fini(struct sb_plan *p)
{
	size_t i;

	for (i = 0; i < p->nowned; i++)
		free(p->owned[i]);
	p->nowned = 0;
	p->nprot = 0;
}
