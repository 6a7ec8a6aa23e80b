/*
 * launch: a run's init cloned into its namespaces and connected to the
 * server: the channels (pipes, the sync socket, the stdin and plan
 * memfds, the trees), the namespaces this thread joins around the clone
 * (a pooled netns, a root server's ipc namespace), the id maps, the
 * cgroup move where the clone could not, and the releases ('g', 'c') the
 * init waits for (exec.c supervises what follows).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "run.h"

#define SB_NS_FLAGS (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | \
	CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP)

void
sb_close_fd(int *fd)
{
	if (*fd >= 0)
		(void)close(*fd);
	*fd = -1;
}

static int
write_file(const char *path, const char *s)
{
	size_t len = strlen(s);
	ssize_t n;
	int fd, rc = 0;

	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
		return -errno;
	n = write(fd, s, len);
	if (n < 0)
		rc = -errno;
	else if ((size_t)n != len)
		rc = -EIO;
	(void)close(fd);
	return rc;
}

static int
write_maps(const struct sb_ctx *ctx, pid_t pid, uid_t uid)
{
	char path[64], map[64];
	int rc;

	if (!ctx->host_root) {
		/* An unprivileged writer may map its own gid only after this. */
		(void)snprintf(path, sizeof(path), "/proc/%d/setgroups", pid);
		if ((rc = write_file(path, "deny")) < 0)
			return rc;
	}
	(void)snprintf(path, sizeof(path), "/proc/%d/uid_map", pid);
	(void)snprintf(map, sizeof(map), "%u %u 1\n", SB_INSIDE_UID,
	    (unsigned)uid);
	if ((rc = write_file(path, map)) < 0)
		return rc;
	(void)snprintf(path, sizeof(path), "/proc/%d/gid_map", pid);
	(void)snprintf(map, sizeof(map), "%u %u 1\n", SB_INSIDE_GID,
	    (unsigned)ctx->gid);
	return write_file(path, map);
}

void
sb_chans_close(struct chans *c)
{
	int i;

	for (i = 0; i < 2; i++) {
		sb_close_fd(&c->out[i]);
		sb_close_fd(&c->err[i]);
		sb_close_fd(&c->stat[i]);
		sb_close_fd(&c->sync[i]);
		sb_close_fd(&c->in[i]);
	}
	sb_close_fd(&c->plan);
	for (i = 0; i < SB_MAX_TREES; i++)
		sb_close_fd(&c->tree[i]);
}

int
sb_chans_open(struct chans *c, const struct sb_ctx *ctx, uid_t uid,
    struct sb_result *res)
{
	int rc;

	if (pipe2(c->out, O_CLOEXEC) < 0 || pipe2(c->err, O_CLOEXEC) < 0 ||
	    pipe2(c->stat, O_CLOEXEC) < 0 || pipe2(c->in, O_CLOEXEC) < 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, c->sync) < 0) {
		rc = -errno;
		sb_fail(res, SB_STAGE_RESOURCES, -rc, "pipes");
		return rc;
	}
	/* /dev/stdout reopens the pipe: let the sandbox uid own its ends. */
	if (ctx->host_root && (fchown(c->out[1], uid, ctx->gid) < 0 ||
	    fchown(c->err[1], uid, ctx->gid) < 0)) {
		rc = -errno;
		sb_fail(res, SB_STAGE_RESOURCES, -rc, "pipe owner");
		return rc;
	}
	if (fcntl(c->out[0], F_SETFL, O_NONBLOCK) < 0 ||
	    fcntl(c->err[0], F_SETFL, O_NONBLOCK) < 0 ||
	    fcntl(c->stat[0], F_SETFL, O_NONBLOCK) < 0 ||
	    fcntl(c->in[1], F_SETFL, O_NONBLOCK) < 0) {
		rc = -errno;
		sb_fail(res, SB_STAGE_RESOURCES, -rc, "non-blocking pipes");
		return rc;
	}
	return 0;
}

/*
 * Sets the CPU weight of the session (autogroup) pid is in, as a nice
 * value. Where the kernel shares CPU time out by session (autogroup, on
 * in Debian's kernels), SCHED_IDLE only orders the tasks within the
 * sandbox's session; the session itself competes as the equal of the
 * server's. Best effort: without autogroup there is no such file.
 */
void
sb_autogroup_nice(pid_t pid, int nice)
{
	char path[48], v[8];
	int fd, n;

	(void)snprintf(path, sizeof(path), "/proc/%d/autogroup", (int)pid);
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
		return;
	n = snprintf(v, sizeof(v), "%d", nice);
	(void)!write(fd, v, (size_t)n);
	(void)close(fd);
}

/*
 * A run started at idle priority: its session weighs the least there is
 * (nice 19), once its init says the session is made. Never before: the
 * init is in the server's session until then, and the write would weigh
 * the server down. A child that died first simply gets nothing.
 */
static void
start_low(struct chans *c, pid_t init)
{
	char b;
	ssize_t n;

	do
		n = recv(c->sync[1], &b, 1, 0);
	while (n < 0 && errno == EINTR);
	if (n == 1 && b == 's')
		sb_autogroup_nice(init, SB_IDLE_NICE);
}

/*
 * A root server makes the sandbox's ipc namespace in this thread (only),
 * before the clone, and the init inherits it. Made by us, it is owned by
 * our user namespace, so its sysctls are ours to write: in one the
 * sandbox's user namespace owns (clone's CLONE_NEWIPC) they belong to that
 * namespace's uid 0, which the sandbox does not map, and nobody could set
 * them. The limits follow the plan's memory figure (SB_IPC_* in
 * internal.h). On failure the thread is back in its own namespace.
 */
static int
ipc_enter(const struct sb_ctx *ctx, const struct sb_plan *p)
{
	char shmmax[24], shmall[24], shmmni[16], msgmni[16], msgmnb[16];
	char msgmax[16];
	const struct { const char *path, *val; } lim[] = {
		{ "/proc/sys/kernel/shmmax", shmmax },
		{ "/proc/sys/kernel/shmall", shmall },
		{ "/proc/sys/kernel/shmmni", shmmni },
		{ "/proc/sys/kernel/msgmni", msgmni },
		{ "/proc/sys/kernel/msgmnb", msgmnb },
		{ "/proc/sys/kernel/msgmax", msgmax },
		{ "/proc/sys/kernel/sem", SB_IPC_SEM },
	};
	size_t i;
	int rc;

	(void)snprintf(shmmax, sizeof(shmmax), "%llu",
	    (unsigned long long)p->shmmax);
	(void)snprintf(shmall, sizeof(shmall), "%llu",
	    (unsigned long long)p->shmall);
	(void)snprintf(shmmni, sizeof(shmmni), "%d", SB_IPC_SHMMNI);
	(void)snprintf(msgmni, sizeof(msgmni), "%d", SB_IPC_MSGMNI);
	(void)snprintf(msgmnb, sizeof(msgmnb), "%d", SB_IPC_MSGMNB);
	(void)snprintf(msgmax, sizeof(msgmax), "%d", SB_IPC_MSGMAX);
	if (unshare(CLONE_NEWIPC) < 0)
		return -errno;
	for (i = 0; i < sizeof(lim) / sizeof(lim[0]); i++)
		if ((rc = write_file(lim[i].path, lim[i].val)) < 0) {
			(void)setns(ctx->ipc_home_fd, CLONE_NEWIPC);
			return rc;
		}
	return 0;
}

/*
 * A SB_NET_PROXY run: the listening socket its init made in its netns,
 * handed to the request's callback. When none comes, the init failed:
 * its status record says why (it wrote that before it exited).
 */
static int
take_listener(struct chans *c, const struct sb_request *req, struct run *r,
    struct sb_result *res)
{
	struct sb_status st;
	int fd, rc;

	if ((fd = sb_recv_fd(c->sync[1])) < 0) {
		if (read(c->stat[0], &st, sizeof(st)) == (ssize_t)sizeof(st) &&
		    st.kind == SB_STATUS_FAIL && st.err != 0) {
			sb_fail(res, (enum sb_stage)st.stage, st.err,
			    "the proxy's listening socket");
			return -st.err;
		}
		sb_fail(res, SB_STAGE_NETNS, -fd,
		    "receiving the proxy's listening socket");
		return fd;
	}
	if (fcntl(fd, F_SETFL, O_NONBLOCK) < 0)
		rc = -errno;
	else
		rc = req->net_listener(req->net_arg, fd, SB_NET_LISTENING);
	if (rc < 0) {
		(void)close(fd);
		sb_fail(res, SB_STAGE_NETNS, -rc, "starting the network proxy");
		return rc;
	}
	r->net_lfd = fd;
	r->net_fn = req->net_listener;
	r->net_arg = req->net_arg;
	return 0;
}

/*
 * This thread into the namespaces the init is cloned in that the clone
 * cannot make itself: a pooled netns when one is free (*slot), and with
 * ipc_by_parent an ipc namespace of ours with its limits written. *flags
 * loses what is joined instead of made.
 */
static int
ns_enter(struct sb_ctx *ctx, struct sb_plan *p, int *slot,
    unsigned long *flags, struct sb_result *res)
{
	int rc;

	if (ctx->pool_on &&
	    (*slot = sb_netns_pool_take(&ctx->pool, p->net_proxy)) >= 0) {
		if (setns(ctx->pool.fds[*slot], CLONE_NEWNET) < 0) {
			rc = -errno;
			sb_fail(res, SB_STAGE_NETNS, -rc, "joining a pooled netns");
			return rc;
		}
	} else {
		*flags |= CLONE_NEWNET;
		p->net_lo_down = true;	/* ours: the init raises lo */
	}
	if (p->ipc_by_parent) {
		if ((rc = ipc_enter(ctx, p)) < 0) {
			sb_fail(res, SB_STAGE_IPC, -rc, "the sandbox's ipc "
			    "namespace and its limits");
			if (*slot >= 0)
				(void)setns(ctx->pool.home_fd, CLONE_NEWNET);
			return rc;
		}
		*flags &= ~(unsigned long)CLONE_NEWIPC;
	}
	return 0;
}

/* This thread back in the server's own netns and ipc namespace. */
static int
ns_leave(struct sb_ctx *ctx, const struct sb_plan *p, int slot,
    struct sb_result *res)
{
	int rc;

	if (p->ipc_by_parent && setns(ctx->ipc_home_fd, CLONE_NEWIPC) < 0) {
		rc = -errno;
		sb_fail(res, SB_STAGE_IPC, -rc,
		    "returning the server thread to its ipc namespace");
		if (slot >= 0)
			(void)setns(ctx->pool.home_fd, CLONE_NEWNET);
		return rc;
	}
	if (slot >= 0 && setns(ctx->pool.home_fd, CLONE_NEWNET) < 0) {
		rc = -errno;
		sb_fail(res, SB_STAGE_NETNS, -rc,
		    "returning the server thread to its netns");
		return rc;
	}
	return 0;
}

/*
 * The init cloned: the child's ends closed here, its id maps written,
 * released ('g'), moved into its cgroup where the clone could not put it,
 * then allowed to start the program ('c').
 */
static int
release_init(struct sb_ctx *ctx, struct sb_plan *p,
    const struct sb_request *req, struct chans *c, uid_t uid,
    struct sb_cg_run *cg, bool joined, struct run *r, struct sb_result *res)
{
	size_t i;
	int rc;

	/* the child's ends: only it may hold them now */
	sb_close_fd(&c->out[1]);
	sb_close_fd(&c->err[1]);
	sb_close_fd(&c->stat[1]);
	sb_close_fd(&c->sync[0]);
	sb_close_fd(&c->in[0]);
	sb_close_fd(&c->plan);
	for (i = 0; i < SB_MAX_TREES; i++)
		sb_close_fd(&c->tree[i]);
	r->oom_efd = cg->oom_efd;
	if (p->start_idle)
		start_low(c, r->pid);
	if (p->net_proxy && (rc = take_listener(c, req, r, res)) < 0)
		return rc;
	if ((rc = write_maps(ctx, r->pid, uid)) < 0) {
		sb_fail(res, SB_STAGE_USERNS_MAP, -rc, "writing the id maps");
		return rc;
	}
	/*
	 * A socket, not a pipe: a child that already died gives EPIPE, not a
	 * SIGPIPE that would kill the server. Our end stays open until the
	 * run is over: its hang-up tells the child we died.
	 */
	if (send(c->sync[1], "g", 1, MSG_NOSIGNAL) != 1) {
		rc = -errno;
		sb_fail(res, SB_STAGE_WAIT, -rc, "releasing the child");
		return rc;
	}
	/*
	 * v1 (or v2 without CLONE_INTO_CGROUP): the move into the run's
	 * cgroup, while the init builds its root. Writing cgroup.procs takes
	 * the kernel's threadgroup lock for writing, which can wait for an
	 * RCU grace period (milliseconds on a quiet host): done here, that
	 * wait overlaps the init's mounts instead of preceding them. The
	 * init starts nothing of the program before our 'c'.
	 */
	if (cg->made && !joined &&
	    (rc = sb_cg_run_attach(&ctx->cg, cg, r->pid, res)) < 0) {
		if (rc != -ESRCH)
			return rc;
		/* it died building its root: its status record says why */
		res->failed_stage = SB_STAGE_NONE;
		res->err = 0;
		res->message[0] = '\0';
	}
	/* (a child that died meanwhile gives EPIPE: the same record) */
	if (p->cg_sync)
		(void)send(c->sync[1], "c", 1, MSG_NOSIGNAL);
	r->out = c->out[0];
	r->err = c->err[0];
	r->status = c->stat[0];
	r->in_w = c->in[1];
	c->out[0] = c->err[0] = c->stat[0] = c->in[1] = -1;
	return 0;
}

/* run.h */
int
sb_launch(struct sb_ctx *ctx, struct sb_plan *p, const struct sb_request *req,
    struct chans *c, int *slot, uid_t uid, struct sb_cg_run *cg, struct run *r,
    struct sb_result *res)
{
	unsigned long flags = SB_NS_FLAGS;
	bool joined;
	size_t i;
	int rc;

	p->fd_from[SB_FD_STATUS - SB_FD_STATUS] = c->stat[1];
	p->fd_from[SB_FD_SYNC - SB_FD_STATUS] = c->sync[0];
	p->fd_from[SB_FD_STDOUT - SB_FD_STATUS] = c->out[1];
	p->fd_from[SB_FD_STDERR - SB_FD_STATUS] = c->err[1];
	p->fd_from[SB_FD_STDIN - SB_FD_STATUS] = c->in[0];
	for (i = 0; i < SB_MAX_TREES; i++)
		p->fd_from[SB_FD_TREE + (int)i - SB_FD_STATUS] = c->tree[i];
	p->fd_from[SB_FD_EXE - SB_FD_STATUS] = ctx->init_fd;
	if ((rc = ns_enter(ctx, p, slot, &flags, res)) < 0)
		return rc;
	/* complete now (ns_enter says whether lo is down): for the init */
	if ((rc = sb_plan_pack(p, &c->plan)) < 0) {
		sb_fail(res, SB_STAGE_RESOURCES, -rc, "the plan for the init");
		(void)ns_leave(ctx, p, *slot, res);
		return rc;
	}
	p->fd_from[SB_FD_PLAN - SB_FD_STATUS] = c->plan;
	/*
	 * The init makes its cgroup namespace once it is in the run's
	 * cgroup (init.c, after our 'c'): made at the clone, in ours, its
	 * root would be our cgroup, and /proc/self/cgroup inside would name
	 * our dir and the run's.
	 */
	if (p->cg_sync)
		flags &= ~(unsigned long)CLONE_NEWCGROUP;
	r->pid = sb_spawn(p, flags, ctx->cg.version == 2 && cg->made ?
	    cg->dir[SB_CG_MEMORY] : -1, &r->pidfd, &joined);
	rc = r->pid < 0 ? -errno : 0;
	if (ns_leave(ctx, p, *slot, res) < 0)
		return -res->err;
	if (r->pid < 0) {
		sb_fail(res, SB_STAGE_CLONE, -rc, "creating the namespaces");
		return rc;
	}
	return release_init(ctx, p, req, c, uid, cg, joined, r, res);
}

