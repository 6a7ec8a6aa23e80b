/*
 * ctx: the server-wide sandbox context (compiled filter, host sources of
 * the system binds, netns pool, probes) and cancellation. Built once,
 * before any worker thread runs a sandbox; read-only afterwards except for
 * the pool's own lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION	(1U << 0)
#endif

int
sb_landlock_abi(void)
{
	long v;

	v = syscall(SYS_landlock_create_ruleset, NULL, 0,
	    LANDLOCK_CREATE_RULESET_VERSION);
	return v < 0 ? 0 : (int)v;
}

int
sb_seccomp_selftest(void)
{
	struct sock_fprog f = {
		.len = sb_bpf_len,
		.filter = (struct sock_filter *)sb_bpf_insns,
	};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return errno;
	if (syscall(SYS_seccomp, 1 /* SET_MODE_FILTER */, 0U, &f) < 0)
		return errno;
	return syscall(1000) < 0 && errno == ENOSYS ? 0 : EPERM;
}

void
sb_ctx_bounds(const struct sb_ctx *ctx, struct sb_bounds *b)
{
	*b = ctx->cg.info;
	b->ipc = ctx->ipc_home_fd >= 0;
	b->netns_pool = ctx->pool_on;
	b->uid_pool = ctx->uid_pool_on;
	b->uid = ctx->uid;
	if (ctx->uid_pool_on) {
		b->uid_first = ctx->uids.base;
		b->uid_last = ctx->uids.base + ctx->uids.n - 1;
	}
	(void)snprintf(b->uid_why, sizeof(b->uid_why), "%s", ctx->uids.why);
	b->ipc_shmmni = SB_IPC_SHMMNI;
	b->ipc_msgmni = SB_IPC_MSGMNI;
	b->ipc_msgmnb = SB_IPC_MSGMNB;
	b->ipc_sem = SB_IPC_SEM;
	b->inotify_instances = SB_INOTIFY_INSTANCES;
	b->inotify_watches = SB_INOTIFY_WATCHES;
	b->rlim_memlock = SB_RLIM_MEMLOCK;
	b->rlim_sigpending = SB_RLIM_SIGPENDING;
	b->rlim_msgqueue = SB_RLIM_MSGQUEUE;
}

static int
read_last_cap(void)
{
	char buf[16];
	ssize_t n;
	int fd, v;

	if ((fd = open("/proc/sys/kernel/cap_last_cap", O_RDONLY | O_CLOEXEC)) < 0)
		return CAP_LAST_CAP;
	n = read(fd, buf, sizeof(buf) - 1);
	(void)close(fd);
	if (n <= 0)
		return CAP_LAST_CAP;
	buf[n] = '\0';
	v = atoi(buf);
	return v > 0 && v < 64 ? v : CAP_LAST_CAP;
}

/* 1 if id is an inside id of the map file of this process (uid_map). */
static int
id_mapped(const char *path, unsigned id)
{
	unsigned out, count;

	return sb_map_lookup(path, id, &out, &count) == 1;
}

/*
 * Whether id, in our user namespace, is its parent's 0 (path: our
 * uid_map or gid_map), in a namespace that is not the initial one; true
 * when the map cannot be read (assume the worst).
 */
static bool
maps_to_root(const char *path, unsigned id)
{
	unsigned out, count;
	int rc = sb_map_lookup(path, id, &out, &count);

	return rc < 0 || (rc == 1 && count != SB_INITIAL_MAP_COUNT && out == 0);
}

bool
sb_host_root(void)
{
	return geteuid() == 0 && id_mapped("/proc/self/uid_map",
	    SB_DEFAULT_UID) && id_mapped("/proc/self/gid_map", SB_DEFAULT_GID);
}

static int
add_sysent(struct sb_ctx *ctx, const struct sb_sys_path *sp)
{
	struct sb_sysent *e = &ctx->sys[ctx->nsys];
	struct stat st;
	ssize_t n;

	if (lstat(sp->path, &st) < 0)
		return errno == ENOENT && !sp->required ? 0 : -errno;
	e->path = sp->path;
	if (S_ISLNK(st.st_mode)) {
		n = readlink(sp->path, e->link, sizeof(e->link) - 1);
		if (n < 0)
			return -errno;
		e->link[n] = '\0';
		e->kind = SB_SYS_SYMLINK;
	} else if (S_ISDIR(st.st_mode) && !sp->device) {
		e->kind = SB_SYS_BIND_DIR;
	} else if (S_ISREG(st.st_mode) && !sp->device) {
		e->kind = SB_SYS_BIND_FILE;
	} else if (S_ISCHR(st.st_mode) && sp->device) {
		e->kind = SB_SYS_DEVICE;
	} else {
		return -EINVAL;
	}
	ctx->nsys++;
	return 0;
}

/* MFD_EXEC (Linux 6.3): an executable memfd where vm.memfd_noexec asks. */
#ifndef MFD_EXEC
#define MFD_EXEC	0x0010U
#endif

/*
 * The checked init's bytes in a sealed memfd, which every run execs: the
 * file's inode could still be rewritten in place by whoever may write it
 * (a build tree in a workspace a sandbox writes: the next run would exec
 * its code with every capability of the new namespaces), the sealed copy
 * cannot (runc does the same since CVE-2019-5736). -errno, or the fd.
 */
static int
sealed_copy(int fd, size_t size)
{
	const unsigned seals = F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW |
	    F_SEAL_SEAL;
	size_t done = 0;
	ssize_t n;
	int m, e;

	m = memfd_create(SB_INIT_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING |
	    MFD_EXEC);
	if (m < 0 && errno == EINVAL)	/* before 6.3: no such flag */
		m = memfd_create(SB_INIT_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (m < 0)
		return -errno;
	while (done < size) {
		n = sendfile(m, fd, NULL, size - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			e = n < 0 ? errno : EIO;	/* shorter than its size */
			(void)close(m);
			return -e;
		}
		done += (size_t)n;
	}
	if (fcntl(m, F_ADD_SEALS, seals) < 0) {
		e = errno;
		(void)close(m);
		return -e;
	}
	return m;
}

/*
 * The init program every run execs (init.c), opened once and copied into
 * a sealed memfd (sealed_copy): what runs is the file checked here. cfg's path, or else where an install
 * puts it from our executable (../libexec/mcp-sandbox/), or beside it (a
 * build tree). It runs with every capability of the sandbox's namespaces
 * and, as a root server's child, as root on the host's files until it
 * takes the sandbox's ids: only root, we or the owner of the executable
 * we run (it is as trusted as that) may write it.
 */
static int
open_init(struct sb_ctx *ctx, const struct sb_config *cfg,
    struct sb_result *res)
{
	static const char *const rel[] = {
		"/../libexec/mcp-sandbox/" SB_INIT_NAME, "/" SB_INIT_NAME,
	};
	char exe[SB_PATH_MAX], *slash;
	struct stat st, self;
	ssize_t n;
	size_t i;
	int m;

	if (cfg->init_path != NULL) {
		(void)snprintf(ctx->init_path, sizeof(ctx->init_path), "%s",
		    cfg->init_path);
		ctx->init_fd = open(ctx->init_path, O_RDONLY | O_CLOEXEC);
	} else if ((n = readlink("/proc/self/exe", exe,
	    sizeof(exe) - 1)) > 0 && (size_t)n < sizeof(exe) - 1) {
		exe[n] = '\0';
		if ((slash = strrchr(exe, '/')) != NULL)
			*slash = '\0';
		for (i = 0; i < sizeof(rel) / sizeof(rel[0]) &&
		    ctx->init_fd < 0; i++) {
			if (snprintf(ctx->init_path, sizeof(ctx->init_path),
			    "%s%s", exe, rel[i]) < (int)sizeof(ctx->init_path))
				ctx->init_fd = open(ctx->init_path,
				    O_RDONLY | O_CLOEXEC);
		}
	}
	if (ctx->init_fd < 0 && cfg->init_path != NULL) {
		sb_fail(res, SB_STAGE_INIT, errno, ctx->init_path);
		return -ENOENT;
	}
	if (ctx->init_fd < 0) {
		sb_fail(res, SB_STAGE_INIT, ENOENT, "the sandbox's init "
		    "program " SB_INIT_NAME " is not installed beside this "
		    "executable (../libexec/mcp-sandbox/ or its own dir)");
		return -ENOENT;
	}
	if (fstat(ctx->init_fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (st.st_mode & S_IXUSR) == 0) {
		sb_fail(res, SB_STAGE_INIT, ENOEXEC, ctx->init_path);
		return -ENOEXEC;
	}
	/* the owner of our own executable too: an unprivileged server in
	 * a user namespace of its own (workspace.c) sees root's as 65534 */
	if (stat("/proc/self/exe", &self) < 0)
		self.st_uid = 0;
	if ((st.st_uid != 0 && st.st_uid != geteuid() &&
	    st.st_uid != self.st_uid) ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
		sb_fail(res, SB_STAGE_INIT, EPERM, "the sandbox's init "
		    "program may be written by others than root, us and "
		    "our executable's owner");
		return -EPERM;
	}
	/* one run: nothing of ours runs between this check and its exec */
	if (cfg->one_run)
		return 0;
	if ((m = sealed_copy(ctx->init_fd, (size_t)st.st_size)) < 0) {
		/* a host that forbids executable memfds (vm.memfd_noexec 2)
		 * gets the file itself: checked above, not sealed */
		if (m != -EACCES && m != -EPERM) {
			sb_fail(res, SB_STAGE_INIT, -m, "copying the sandbox's "
			    "init program into a sealed memfd");
			return m;
		}
		return 0;
	}
	(void)close(ctx->init_fd);
	ctx->init_fd = m;
	return 0;
}

/*
 * The kernel ids runs get: a root server's sandbox uid/gid, which its user
 * namespace must map; else our own, unless they are our parent's root.
 */
static int
run_ids(struct sb_ctx *ctx, const struct sb_config *cfg,
    struct sb_result *res)
{
	if (ctx->host_root) {
		ctx->uid = cfg->uid != 0 ? cfg->uid : SB_DEFAULT_UID;
		ctx->gid = cfg->gid != 0 ? cfg->gid : SB_DEFAULT_GID;
		/* Root of a user namespace without that id: never run as root. */
		if (!id_mapped("/proc/self/uid_map", ctx->uid) ||
		    !id_mapped("/proc/self/gid_map", ctx->gid)) {
			sb_fail(res, SB_STAGE_CREDENTIALS, EINVAL, "the server "
			    "is root but the unprivileged sandbox uid/gid is not "
			    "mapped in its user namespace");
			return -EINVAL;
		}
	} else if (maps_to_root("/proc/self/uid_map", geteuid()) ||
	    maps_to_root("/proc/self/gid_map", getegid())) {
		/*
		 * Our own ids, which runs get here, are our parent's root
		 * (srt run by root: its uid 0; unshare --map-user from root:
		 * any uid), and there is no sandbox uid to give them instead.
		 * As our own ids, they would be that root. Never.
		 */
		const char *what, *fix;

		if (sb_nested(&what, &fix))
			sb_fail(res, SB_STAGE_CREDENTIALS, EPERM, "the server "
			    "is root in a user namespace that maps no sandbox "
			    "uid");
		else
			sb_fail(res, SB_STAGE_CREDENTIALS, EPERM, "the server is "
			    "root in a user namespace that maps uid 0 to its "
			    "parent's root and no sandbox uid (65534): its "
			    "sandboxes would run as that root; run the wrapper "
			    "(srt) as a normal user, or give its namespace uid "
			    "and gid 65534");
		return -EPERM;
	} else {
		ctx->uid = geteuid();
		ctx->gid = getegid();
	}
	return 0;
}

int
sb_ctx_new(const struct sb_config *cfg, struct sb_ctx **ret,
    struct sb_result *res)
{
	static const struct sb_config defaults = { 0 };
	struct sb_ctx *ctx;
	struct stat st;
	size_t i;
	int rc = 0;

	memset(res, 0, sizeof(*res));
	if (cfg == NULL)
		cfg = &defaults;
	if ((ctx = calloc(1, sizeof(*ctx))) == NULL) {
		sb_fail(res, SB_STAGE_RESOURCES, ENOMEM, "context");
		return -ENOMEM;
	}
	ctx->ipc_home_fd = -1;
	ctx->init_fd = -1;
	ctx->host_root = sb_host_root();
	if ((rc = open_init(ctx, cfg, res)) < 0)
		goto fail;
	if ((rc = run_ids(ctx, cfg, res)) < 0)
		goto fail;
	ctx->staging = cfg->staging != NULL ? cfg->staging : "/tmp";
	if (stat(ctx->staging, &st) < 0 || !S_ISDIR(st.st_mode)) {
		rc = -ENOTDIR;
		sb_fail(res, SB_STAGE_MOUNTS, ENOTDIR, "staging dir");
		goto fail;
	}
	ctx->filter.len = sb_bpf_len;
	ctx->filter.filter = (struct sock_filter *)sb_bpf_insns;
	for (i = 0; i < sb_nsys_paths; i++) {
		if (ctx->nsys >= SB_MAX_SYSENTS)
			break;
		if ((rc = add_sysent(ctx, &sb_sys_paths[i])) < 0) {
			sb_fail(res, SB_STAGE_MOUNTS, -rc, sb_sys_paths[i].path);
			goto fail;
		}
	}
	(void)snprintf(ctx->passwd, sizeof(ctx->passwd),
	    "root:x:0:0:root:/root:/usr/sbin/nologin\n"
	    "sandbox:x:%u:%u:sandbox:/tmp:/bin/sh\n"
	    "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
	    SB_INSIDE_UID, SB_INSIDE_GID);
	(void)snprintf(ctx->group, sizeof(ctx->group),
	    "root:x:0:\nsandbox:x:%u:\nnogroup:x:65534:\n", SB_INSIDE_GID);
	/*
	 * Only a server that may come back to its own ipc namespace (root of
	 * the user namespace that owns it) makes the sandboxes' (exec.c);
	 * root of a user namespace made under someone else's ipc namespace
	 * cannot, and is treated as unprivileged there (sb_sysv_deny).
	 */
	if (ctx->host_root && (ctx->ipc_home_fd = open("/proc/thread-self/ns/ipc",
	    O_RDONLY | O_CLOEXEC)) >= 0 && setns(ctx->ipc_home_fd,
	    CLONE_NEWIPC) < 0) {
		(void)close(ctx->ipc_home_fd);
		ctx->ipc_home_fd = -1;
	}
	ctx->uid_map_all = id_mapped("/proc/self/uid_map", 0) &&
	    id_mapped("/proc/self/uid_map", SB_ID_LAST_UID);
	if (ctx->host_root && cfg->uid_slots > 0) {
		if ((rc = sb_uid_pool_init(&ctx->uids, ctx, cfg, res)) < 0)
			goto fail;
		ctx->uid_pool_on = rc == 0;
		rc = 0;
	}
	ctx->last_cap = read_last_cap();
	ctx->landlock_abi = sb_landlock_abi();
	if (cfg->netns_pool > 0 && ctx->host_root &&
	    sb_netns_pool_init(&ctx->pool, cfg->netns_pool) == 0)
		ctx->pool_on = true;
	if ((rc = sb_cgroup_init(&ctx->cg, cfg, res)) < 0)
		goto fail;
	ctx->cg_on = true;
	*ret = ctx;
	return 0;
 fail:
	sb_ctx_free(ctx);
	return rc;
}

void
sb_ctx_free(struct sb_ctx *ctx)
{
	if (ctx == NULL)
		return;
	if (ctx->pool_on)
		sb_netns_pool_fini(&ctx->pool);
	if (ctx->ipc_home_fd >= 0)
		(void)close(ctx->ipc_home_fd);
	if (ctx->uid_pool_on)
		sb_uid_pool_fini(&ctx->uids);
	if (ctx->cg_on)
		sb_cgroup_fini(&ctx->cg);
	if (ctx->init_fd >= 0)
		(void)close(ctx->init_fd);
	free(ctx);
}

int
sb_cancel_init(struct sb_cancel *c)
{
	atomic_init(&c->fired, false);
	c->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	return c->efd < 0 ? -errno : 0;
}

/* Async-signal-safe: an atomic store and one write(). */
void
sb_cancel_fire(struct sb_cancel *c)
{
	uint64_t one = 1;

	atomic_store(&c->fired, true);
	(void)!write(c->efd, &one, sizeof(one));
}

bool
sb_cancel_fired(struct sb_cancel *c)
{
	return atomic_load(&c->fired);
}

void
sb_cancel_fini(struct sb_cancel *c)
{
	if (c->efd >= 0)
		(void)close(c->efd);
	c->efd = -1;
}

void
sb_result_fini(struct sb_result *res)
{
	sb_output_fini(&res->out);
	sb_output_fini(&res->err_out);
}
