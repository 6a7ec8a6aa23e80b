/*
 * exec: sb_run(), the parent side of one run. Builds the plan, clones the
 * sandbox's init into fresh namespaces, writes its id maps, then polls its
 * output, status pipe, pidfd and the cancel eventfd until the init is
 * reaped. The deadline and cancellation kill the init, which takes the
 * whole pid namespace down. Safe to call from several threads at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/* After the init is reaped, how long leaked pipe ends may delay the end. */
#define SB_DRAIN_MS		2000
/* Bytes read from a pipe per read(); a pipe holds 64 KiB by default. */
#define SB_READ_CHUNK		65536
/* Reads per stream per wake-up: a flood must not starve the deadline. */
#define SB_DRAIN_CHUNKS		16
/* Default minimum interval between progress callbacks. */
#define SB_PROGRESS_MS		1000
/*
 * A conversation's interrupt is sent again this often until its grace
 * ends: one that came before the program could take it (still reading
 * its input), or that the program swallowed once, is not the last.
 */
#define SB_INTERRUPT_EVERY_MS	100

#define SB_NS_FLAGS (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | \
	CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP)

enum { PFD_OUT, PFD_ERR, PFD_STATUS, PFD_PID, PFD_CANCEL, PFD_IN,
	PFD_OOM, PFD_NET, PFD_COUNT };

/* The parent's view of one run in flight. */
struct run {
	pid_t pid;
	int pidfd;
	int out, err, status;	/* read ends, non-blocking; -1 once at EOF */
	bool reaped, killed, forked, got_exit, got_fail;
	bool ready;		/* deferred: SB_STATUS_READY came */
	struct sb_status exit_rec, fail_rec;
	int init_ws;
	struct rusage ru;
	/* a started run's stdin: a pipe we write as it drains, then close */
	int in_w;		/* non-blocking; -1 when none or done */
	const char *in_data;
	size_t in_len, in_off;
	int oom_efd;		/* v1 cgroup: readable at an OOM kill; borrowed */
	bool oom_fired;		/* it was */
	/* SB_NET_PROXY: the init's listening socket (-1: none), its caller */
	int net_lfd;
	sb_listener_fn net_fn;
	void *net_arg;
	/* a conversation (sb_turn): stdin stays open after in_data; what
	 * is read goes through sink, which ends the turn (turn_done); its
	 * deadline interrupts, grace_ms before the kill */
	bool keep_in, turn_done, interrupted;
	sb_sink_fn sink;
	void *sink_arg;
	uint32_t grace_ms;
	uint64_t next_int;	/* interrupted: the next SIGINT (mono_us) */
};

static uint64_t
mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
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

static void
close_fd(int *fd)
{
	if (*fd >= 0)
		(void)close(*fd);
	*fd = -1;
}

/* Read what a stream has now (a bounded amount); at EOF close it. */
static void
drain(struct run *r, int *fd, int stream, struct sb_output *o, char *buf)
{
	ssize_t n;
	int i;

	for (i = 0; i < SB_DRAIN_CHUNKS; i++) {
		n = read(*fd, buf, SB_READ_CHUNK);
		if (n > 0 && r->sink != NULL) {
			if (r->sink(r->sink_arg, stream, buf, (size_t)n, o))
				r->turn_done = true;
			continue;
		}
		if (n > 0) {
			sb_output_append(o, buf, (size_t)n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		close_fd(fd);
		return;
	}
}

static void
read_status(struct run *r)
{
	struct sb_status recs[8];
	ssize_t n;
	size_t i;

	for (;;) {
		n = read(r->status, recs, sizeof(recs));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			close_fd(&r->status);
			return;
		}
		for (i = 0; i < (size_t)n / sizeof(recs[0]); i++) {
			if (recs[i].kind == SB_STATUS_FAIL && !r->got_fail) {
				r->fail_rec = recs[i];
				r->got_fail = true;
			} else if (recs[i].kind == SB_STATUS_EXIT) {
				r->exit_rec = recs[i];
				r->got_exit = true;
			} else if (recs[i].kind == SB_STATUS_FORKED) {
				r->forked = true;
			} else if (recs[i].kind == SB_STATUS_READY) {
				r->ready = true;
			}
		}
	}
}

static void
kill_init(struct run *r)
{
	if (!r->killed && !r->reaped)
		(void)kill(r->pid, SIGKILL);
	r->killed = true;
}

static void
reap(struct run *r, int flags)
{
	pid_t w;

	if (r->reaped)
		return;
	do {
		w = wait4(r->pid, &r->init_ws, flags | __WALL, &r->ru);
	} while (w < 0 && errno == EINTR);
	if (w == r->pid || (w < 0 && errno == ECHILD))
		r->reaped = true;
}

/*
 * write() that cannot kill the process with SIGPIPE when the program has
 * closed its stdin: the signal is blocked in this thread around the write
 * and, if the write raised it, taken back.
 */
static ssize_t
write_nosigpipe(int fd, const void *buf, size_t len)
{
	static const struct timespec zero = { 0, 0 };
	sigset_t pipe_set, old, pending;
	bool was_pending;
	ssize_t n;
	int err;

	(void)sigemptyset(&pipe_set);
	(void)sigaddset(&pipe_set, SIGPIPE);
	(void)pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	(void)sigpending(&pending);
	was_pending = sigismember(&pending, SIGPIPE) == 1;
	n = write(fd, buf, len);
	err = errno;
	if (n < 0 && err == EPIPE && !was_pending)
		(void)sigtimedwait(&pipe_set, NULL, &zero);
	(void)pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = err;
	return n;
}

/* Feed the program's stdin what it can take now; at the end, EOF. */
static void
feed(struct run *r)
{
	ssize_t n;

	while (r->in_w >= 0 && r->in_off < r->in_len) {
		n = write_nosigpipe(r->in_w, r->in_data + r->in_off,
		    r->in_len - r->in_off < SB_READ_CHUNK ?
		    r->in_len - r->in_off : SB_READ_CHUNK);
		if (n > 0) {
			r->in_off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		break;		/* EPIPE: the program will not read more */
	}
	if (!r->keep_in || r->in_off < r->in_len)
		close_fd(&r->in_w);
}

/*
 * A conversation's deadline or cancel: SIGINT to every process of the
 * run but the init, which forwards it to them (init.c); the kill follows
 * grace_ms later, at the deadline this returns.
 */
static uint64_t
interrupt(struct run *r, struct sb_result *res, uint64_t now)
{
	(void)kill(r->pid, SIGINT);
	r->interrupted = res->interrupted = true;
	r->next_int = now + SB_INTERRUPT_EVERY_MS * 1000;
	return now + (uint64_t)r->grace_ms * 1000;
}

static int
poll_timeout(uint64_t now, uint64_t until)
{
	uint64_t ms;

	if (until <= now)
		return 0;
	ms = (until - now + 999) / 1000;
	return ms > 60000 ? 60000 : (int)ms;
}

/*
 * The deadline of a run that is neither killed nor reaped: a run's kills
 * it; a conversation's interrupts, again every SB_INTERRUPT_EVERY_MS,
 * and kills at the end of the grace. The deadline from now on.
 */
static uint64_t
at_deadline(struct run *r, struct sb_result *res, uint64_t now,
    uint64_t deadline)
{
	if (now >= deadline && r->grace_ms != 0 && !r->interrupted)
		return interrupt(r, res, now);
	if (r->interrupted && now >= r->next_int && now < deadline)
		(void)interrupt(r, res, now);
	else if (now >= deadline) {
		kill_init(r);
		/* a cancel's grace ending is no deadline's */
		res->timed_out = !res->cancelled;
	}
	return deadline;
}

/* What supervise() waits for now. */
static void
poll_set(const struct run *r, const struct sb_cancel *cancel, bool net_paused,
    struct pollfd pfd[PFD_COUNT])
{
	pfd[PFD_OUT] = (struct pollfd){ .fd = r->out, .events = POLLIN };
	pfd[PFD_ERR] = (struct pollfd){ .fd = r->err, .events = POLLIN };
	pfd[PFD_STATUS] = (struct pollfd){ .fd = r->status, .events = POLLIN };
	pfd[PFD_PID] = (struct pollfd){ .fd = r->reaped ? -1 : r->pidfd,
	    .events = POLLIN };
	pfd[PFD_CANCEL] = (struct pollfd){ .fd = cancel != NULL &&
	    !r->killed && !r->interrupted ? cancel->efd : -1,
	    .events = POLLIN };
	pfd[PFD_IN] = (struct pollfd){ .fd = r->in_off < r->in_len ? r->in_w :
	    -1, .events = POLLOUT };
	pfd[PFD_OOM] = (struct pollfd){ .fd = r->killed || r->reaped ? -1 :
	    r->oom_efd, .events = POLLIN };
	pfd[PFD_NET] = (struct pollfd){ .fd = r->reaped || net_paused ? -1 :
	    r->net_lfd, .events = POLLIN };
}

/* Poll until the init is reaped and the streams are at EOF. */
static int
supervise(struct run *r, const struct sb_request *req,
    const struct sb_plan *p, struct sb_cancel *cancel, struct sb_result *res,
    uint64_t t0)
{
	uint64_t deadline = t0 + (uint64_t)p->limits.wall_ms * 1000;
	uint64_t interval = (uint64_t)(req->progress_ms != 0 ?
	    req->progress_ms : SB_PROGRESS_MS) * 1000;
	uint64_t next_progress = t0 + interval, drain_until = 0, now, until;
	uint64_t net_resume = 0;	/* the listener's READY pause ends */
	struct pollfd pfd[PFD_COUNT];
	char *buf;
	int n, pause;

	if ((buf = malloc(SB_READ_CHUNK)) == NULL)
		return -ENOMEM;
	while ((r->out >= 0 || r->err >= 0 || r->status >= 0 || !r->reaped) &&
	    !r->turn_done) {
		now = mono_us();
		if (!r->killed && !r->reaped)
			deadline = at_deadline(r, res, now, deadline);
		if (r->reaped && now >= drain_until)
			break;
		until = UINT64_MAX;
		if (!r->killed && !r->reaped)
			until = deadline;
		if (req->progress != NULL && next_progress < until)
			until = next_progress;
		if (r->reaped && drain_until < until)
			until = drain_until;
		if (!r->reaped && now < net_resume && net_resume < until)
			until = net_resume;
		if (r->interrupted && !r->killed && !r->reaped &&
		    r->next_int < until)
			until = r->next_int;
		poll_set(r, cancel, now < net_resume, pfd);
		n = poll(pfd, PFD_COUNT, until == UINT64_MAX ? -1 :
		    poll_timeout(now, until));
		if (n < 0 && errno != EINTR) {
			free(buf);
			return -errno;
		}
		if (r->out >= 0 && pfd[PFD_OUT].revents != 0)
			drain(r, &r->out, 1, &res->out, buf);
		if (r->err >= 0 && pfd[PFD_ERR].revents != 0)
			drain(r, &r->err, 2, &res->err_out, buf);
		if (r->status >= 0 && pfd[PFD_STATUS].revents != 0)
			read_status(r);
		if (r->in_w >= 0 && pfd[PFD_IN].revents != 0)
			feed(r);
		if (pfd[PFD_NET].fd >= 0 && pfd[PFD_NET].revents != 0 &&
		    (pause = r->net_fn(r->net_arg, r->net_lfd,
		    SB_NET_READY)) > 0)
			net_resume = mono_us() + (uint64_t)(pause <
			    SB_NET_MAX_PAUSE_MS ? pause : SB_NET_MAX_PAUSE_MS) *
			    1000;
		if (pfd[PFD_PID].fd >= 0 && pfd[PFD_PID].revents != 0) {
			reap(r, WNOHANG);
			if (r->reaped)
				drain_until = mono_us() + SB_DRAIN_MS * 1000;
		}
		/* out of memory (v1): the run ends, as on v2 (oom.group) */
		if (pfd[PFD_OOM].fd >= 0 && pfd[PFD_OOM].revents != 0) {
			r->oom_fired = true;
			kill_init(r);
		}
		if (pfd[PFD_CANCEL].fd >= 0 && pfd[PFD_CANCEL].revents != 0 &&
		    sb_cancel_fired(cancel)) {
			/* a conversation's is an interrupt; a run's, its end */
			if (r->grace_ms != 0)
				deadline = interrupt(r, res, mono_us());
			else
				kill_init(r);
			res->cancelled = true;
		}
		if (req->progress != NULL && mono_us() >= next_progress) {
			req->progress(req->progress_arg,
			    (mono_us() - t0) / 1000, &res->out, &res->err_out);
			next_progress = mono_us() + interval;
		}
	}
	free(buf);
	return 0;
}

static void
fill_result(struct run *r, struct sb_result *res)
{
	int ws;

	res->cpu_us = (uint64_t)r->ru.ru_utime.tv_sec * 1000000 +
	    (uint64_t)r->ru.ru_utime.tv_usec +
	    (uint64_t)r->ru.ru_stime.tv_sec * 1000000 +
	    (uint64_t)r->ru.ru_stime.tv_usec;
	if (r->got_exit) {
		/* The program ended before any kill: that is its result. */
		res->timed_out = res->cancelled = false;
		ws = r->exit_rec.wstatus;
		/* At or below the launcher's own size it says nothing. */
		if (r->exit_rec.maxrss_kib > r->exit_rec.base_kib)
			res->peak_rss_bytes = r->exit_rec.maxrss_kib * 1024;
		if (WIFEXITED(ws)) {
			res->exited = true;
			res->exit_code = WEXITSTATUS(ws);
		} else if (WIFSIGNALED(ws)) {
			res->signal = WTERMSIG(ws);
		}
		return;
	}
	/* Killed by us, or the init died: the whole tree went with it. */
	res->signal = WIFSIGNALED(r->init_ws) ? WTERMSIG(r->init_ws) : SIGKILL;
}

static int
make_stdin(const struct sb_request *req)
{
	const char *p = req->stdin_data;
	size_t left = req->stdin_len;
	ssize_t n;
	int fd;

	if ((fd = memfd_create("sb-stdin", MFD_CLOEXEC)) < 0)
		return -errno;
	while (left > 0) {
		n = write(fd, p, left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			n = errno;
			(void)close(fd);
			return -(int)n;
		}
		p += n;
		left -= (size_t)n;
	}
	if (lseek(fd, 0, SEEK_SET) < 0) {
		n = errno;
		(void)close(fd);
		return -(int)n;
	}
	return fd;
}

/* Both ends of every channel between the server and one sandbox. */
struct chans {
	int out[2], err[2];	/* program's stdout, stderr */
	int stat[2];		/* status records, child -> parent */
	int sync[2];		/* socket: "maps written"; held open by us */
	int in;			/* memfd with stdin bytes, or -1 */
	int plan;		/* memfd with the packed plan, or -1 */
	/* the plan's trees (workspace, writable binds) as detached mounts */
	int tree[SB_MAX_TREES];
};

static void
chans_close(struct chans *c)
{
	int i;

	for (i = 0; i < 2; i++) {
		close_fd(&c->out[i]);
		close_fd(&c->err[i]);
		close_fd(&c->stat[i]);
		close_fd(&c->sync[i]);
	}
	close_fd(&c->in);
	close_fd(&c->plan);
	for (i = 0; i < SB_MAX_TREES; i++)
		close_fd(&c->tree[i]);
}

static int
chans_open(struct chans *c, const struct sb_ctx *ctx, uid_t uid,
    const struct sb_request *req, struct sb_result *res)
{
	int rc;

	if (pipe2(c->out, O_CLOEXEC) < 0 || pipe2(c->err, O_CLOEXEC) < 0 ||
	    pipe2(c->stat, O_CLOEXEC) < 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, c->sync) < 0) {
		rc = -errno;
		sb_fail(res, SB_STAGE_RESOURCES, -rc, "pipes");
		return rc;
	}
	if (req->stdin_len > 0 && (c->in = make_stdin(req)) < 0) {
		rc = c->in;
		sb_fail(res, SB_STAGE_RESOURCES, -rc, "stdin memfd");
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
	    fcntl(c->stat[0], F_SETFL, O_NONBLOCK) < 0) {
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
static void
autogroup_nice(pid_t pid, int nice)
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
		autogroup_nice(init, SB_IDLE_NICE);
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
	close_fd(&c->out[1]);
	close_fd(&c->err[1]);
	close_fd(&c->stat[1]);
	close_fd(&c->sync[0]);
	close_fd(&c->in);
	close_fd(&c->plan);
	for (i = 0; i < SB_MAX_TREES; i++)
		close_fd(&c->tree[i]);
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
	c->out[0] = c->err[0] = c->stat[0] = -1;
	return 0;
}

/*
 * Clone the sandbox's init, in a pooled netns when one is free (joined by
 * this thread only around the clone), write its id maps and release it.
 * On success r->pid runs; on failure res says why and r->pid, if set, is
 * for the caller to kill and reap.
 */
static int
launch(struct sb_ctx *ctx, struct sb_plan *p, const struct sb_request *req,
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
	p->fd_from[SB_FD_STDIN - SB_FD_STATUS] = c->in;
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

/* A setup step failed in the child: name it, and the mount if it was one. */
static int
child_failure(const struct run *r, const struct sb_plan *p,
    struct sb_result *res)
{
	int err = r->fail_rec.err != 0 ? r->fail_rec.err : EIO;
	char what[96] = "";

	if (r->fail_rec.wstatus > 0 && (size_t)r->fail_rec.wstatus <= p->nmops)
		(void)snprintf(what, sizeof(what), "/%.90s",
		    p->mops[r->fail_rec.wstatus - 1].path);
	sb_fail(res, (enum sb_stage)r->fail_rec.stage, err,
	    what[0] != '\0' ? what : NULL);
	return -err;
}

/* A run between its launch and its supervision (see sb_start()). */
struct sb_started {
	struct sb_ctx *ctx;
	struct sb_plan *p;
	struct chans c;
	struct run r;
	int slot;		/* netns pool slot, or -1 */
	int uid_slot;		/* uid pool slot, or -1: the shared uid */
	uid_t uid;		/* the run's kernel uid */
	struct sb_cg_run cg;	/* the run's cgroup, if the context has them */
	/* deferred (built ahead): the request's shape, then the launch */
	char *shape, *launch;
	size_t shape_len;
	bool over;		/* a conversation whose run has ended */
};

static void
started_init(struct sb_started *s, struct sb_ctx *ctx)
{
	memset(s, 0, sizeof(*s));
	s->ctx = ctx;
	s->slot = -1;
	s->uid_slot = -1;
	s->uid = ctx->uid;
	s->r = (struct run){ .pid = -1, .pidfd = -1, .out = -1, .err = -1,
	    .status = -1, .in_w = -1, .oom_efd = -1, .net_lfd = -1 };
	s->c = (struct chans){ .out = { -1, -1 }, .err = { -1, -1 },
	    .stat = { -1, -1 }, .sync = { -1, -1 }, .in = -1, .plan = -1 };
	for (size_t i = 0; i < SB_MAX_TREES; i++)
		s->c.tree[i] = -1;
	sb_cg_run_init(&s->cg);
}

/* Kills what runs, if anything, and releases everything s holds. */
static void
started_fini(struct sb_started *s)
{
	if (s->r.pid > 0 && !s->r.reaped) {
		kill_init(&s->r);
		reap(&s->r, 0);
	}
	if (s->r.net_lfd >= 0) {
		/*
		 * The proxy lets go before the netns can serve another run,
		 * and the socket stops listening for every copy of it: a
		 * concurrent clone() may hold one until its fd shuffle.
		 */
		(void)s->r.net_fn(s->r.net_arg, s->r.net_lfd, SB_NET_CLOSING);
		(void)shutdown(s->r.net_lfd, SHUT_RDWR);
		close_fd(&s->r.net_lfd);
	}
	sb_cg_run_remove(&s->ctx->cg, &s->cg);
	if (s->slot >= 0)
		sb_netns_pool_give(&s->ctx->pool, s->slot);
	s->slot = -1;
	/* after the reap: no process of the run holds the uid any more */
	if (s->uid_slot >= 0)
		sb_uid_pool_give(&s->ctx->uids, s->uid_slot);
	s->uid_slot = -1;
	close_fd(&s->r.out);
	close_fd(&s->r.err);
	close_fd(&s->r.status);
	close_fd(&s->r.pidfd);
	close_fd(&s->r.in_w);
	chans_close(&s->c);
	free(s->shape);
	free(s->launch);
	s->shape = s->launch = NULL;
	if (s->p != NULL) {
		sb_plan_fini(s->p);
		free(s->p);
		s->p = NULL;
	}
}

/*
 * The plan's trees for this run (uids.c): id-mapped to its slot, or,
 * where one cannot be, every one plain and the run on the shared uid.
 */
static int
run_trees(struct sb_started *s, struct sb_result *res)
{
	int rc;

	rc = sb_uid_trees(&s->ctx->uids, s->p, &s->uid_slot, s->c.tree, res);
	if (s->uid_slot < 0)
		s->uid = s->ctx->uid;
	return rc;
}

/*
 * Plan, check and launch: on success the program runs (or is about to),
 * its stdin the request's bytes (a memfd) or, with pipe_stdin, a pipe
 * whose write end is s->r.in_w.
 */
static int
start_run(struct sb_started *s, const struct sb_request *req,
    bool pipe_stdin, struct sb_result *res)
{
	int in[2], rc;

	if ((s->p = malloc(sizeof(*s->p))) == NULL) {
		sb_fail(res, SB_STAGE_RESOURCES, ENOMEM, "plan");
		return -ENOMEM;
	}
	if ((rc = sb_plan_build(s->ctx, req, s->p, res)) < 0) {
		free(s->p);
		s->p = NULL;
		return rc;
	}
	if ((rc = sb_protect_plan(s->p, req, res)) < 0)
		return rc;
	if (s->ctx->uid_pool_on &&
	    (s->uid_slot = sb_uid_pool_take(&s->ctx->uids)) >= 0) {
		s->uid = s->ctx->uids.base + (uid_t)s->uid_slot;
	}
	/* started ahead (a pooled sandbox, a warm python): its shape */
	if (pipe_stdin && (s->shape = sb_shape_bytes(req,
	    &s->shape_len)) == NULL) {
		sb_fail(res, SB_STAGE_RESOURCES, ENOMEM, "the shape");
		return -ENOMEM;
	}
	if ((!req->deferred && (rc = sb_program_check(s->ctx, req, res)) < 0) ||
	    (rc = run_trees(s, res)) < 0 ||
	    (rc = chans_open(&s->c, s->ctx, s->uid, req, res)) < 0 ||
	    (rc = sb_cg_run_make(&s->ctx->cg, &s->p->limits, &s->cg, res)) < 0)
		return rc;
	s->p->cg_sync = s->cg.made;
	if (pipe_stdin) {
		if (pipe2(in, O_CLOEXEC) < 0 ||
		    fcntl(in[1], F_SETFL, O_NONBLOCK) < 0) {
			rc = -errno;
			sb_fail(res, SB_STAGE_RESOURCES, -rc, "stdin pipe");
			return rc;
		}
		s->c.in = in[0];
		s->r.in_w = in[1];
	}
	return launch(s->ctx, s->p, req, &s->c, &s->slot, s->uid, &s->cg,
	    &s->r, res);
}

/* A supervised run is over: how it ended, into res. */
static int
end_run(struct sb_started *s, struct sb_result *res)
{
	struct run *r = &s->r;

	if (r->got_fail)
		return child_failure(r, s->p, res);
	if (!r->forked && !r->killed) {
		sb_fail(res, SB_STAGE_INIT, ECHILD,
		    "the sandbox init died during setup");
		return -ECHILD;
	}
	fill_result(r, res);
	/* the init is reaped: its cgroup is empty */
	sb_cg_run_finish(&s->ctx->cg, &s->cg, r->oom_fired, res);
	sb_protect_finish(s->p, res);
	return 0;
}

/*
 * Supervise a launched run to its end under req's deadline and progress,
 * feeding its stdin pipe (if any) with req's bytes; fills res. Releases
 * everything s holds.
 */
static int
finish_run(struct sb_started *s, const struct sb_request *req,
    struct sb_cancel *cancel, struct sb_result *res, uint64_t t0)
{
	struct run *r = &s->r;
	int rc;

	if ((rc = sb_output_init(&res->out, s->p->limits.stdout_cap)) < 0 ||
	    (rc = sb_output_init(&res->err_out, s->p->limits.stderr_cap)) < 0) {
		sb_fail(res, SB_STAGE_RESOURCES, -rc, "output buffers");
		goto out;
	}
	if (r->in_w >= 0 && s->launch == NULL) {
		r->in_data = req->stdin_data;
		r->in_len = req->stdin_len;
	}
	if (r->in_w >= 0)
		feed(r);
	if ((rc = supervise(r, req, s->p, cancel, res, t0)) < 0) {
		sb_fail(res, SB_STAGE_WAIT, -rc, "supervising the run");
		goto out;
	}
	rc = end_run(s, res);
 out:
	sb_output_finish(&res->out);
	sb_output_finish(&res->err_out);
	started_fini(s);
	return rc;
}

int
sb_run(struct sb_ctx *ctx, const struct sb_request *req,
    struct sb_cancel *cancel, struct sb_result *res)
{
	struct sb_started s;
	uint64_t t0 = mono_us();	/* the run's cost starts with its plan */
	int rc;

	memset(res, 0, sizeof(*res));
	started_init(&s, ctx);
	if ((rc = start_run(&s, req, false, res)) < 0) {
		started_fini(&s);
		res->duration_us = mono_us() - t0;
		return rc;
	}
	rc = finish_run(&s, req, cancel, res, t0);
	res->duration_us = mono_us() - t0;
	return rc;
}

int
sb_start(struct sb_ctx *ctx, const struct sb_request *req,
    struct sb_started **ret, struct sb_result *res)
{
	struct sb_started *s;
	int rc;

	memset(res, 0, sizeof(*res));
	if ((s = malloc(sizeof(*s))) == NULL) {
		sb_fail(res, SB_STAGE_RESOURCES, ENOMEM, "run");
		return -ENOMEM;
	}
	started_init(s, ctx);
	if ((rc = start_run(s, req, true, res)) < 0) {
		started_fini(s);
		free(s);
		return rc;
	}
	*ret = s;
	return 0;
}

/* Current: its protected paths as at its start (protect.c). */
bool
sb_started_current(struct sb_started *s)
{
	return s->p == NULL || sb_protect_current(s->p);
}

bool
sb_started_ready(struct sb_started *s, unsigned timeout_ms)
{
	uint64_t until = mono_us() + (uint64_t)timeout_ms * 1000, now;
	struct pollfd pfd = { .fd = s->r.status, .events = POLLIN };

	while (s->p->deferred && !s->r.ready && !s->r.got_fail &&
	    s->r.status >= 0 && (now = mono_us()) < until) {
		if (poll(&pfd, 1, poll_timeout(now, until)) < 0 &&
		    errno != EINTR)
			break;
		read_status(&s->r);
	}
	return !s->p->deferred || s->r.ready;
}

bool
sb_started_alive(struct sb_started *s)
{
	struct pollfd pfd = { .fd = s->r.pidfd, .events = POLLIN };

	/* its init exits with the program: a readable pidfd means gone */
	return poll(&pfd, 1, 0) == 0;
}

/*
 * A started run's program as its call comes (the init's children, from
 * /proc), best effort: with renice (started at idle priority: we are
 * root, see plan.c), the normal policy and its session's weight back, even
 * while still starting (a failure leaves it SCHED_IDLE); and RLIMIT_CPU
 * lowered to cpu_s where it was started with more (a python started
 * ahead; the call's deadline kills it in any case).
 */
static void
adjust_program(pid_t init, bool renice, uint32_t cpu_s)
{
	struct sb_sched_attr a = { .size = sizeof(a), .policy = SCHED_OTHER };
	struct rlimit cpu = { cpu_s, cpu_s };
	struct sched_param sp = { 0 };
	char path[64], buf[256], *p, *end;
	long pid;
	ssize_t n;
	int fd;

	(void)snprintf(path, sizeof(path), "/proc/%d/task/%d/children",
	    (int)init, (int)init);
	if (renice)
		autogroup_nice(init, 0);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	(void)close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	for (p = buf; *p != '\0'; p = end) {
		errno = 0;
		pid = strtol(p, &end, 10);
		if (end == p || errno != 0 || pid <= 0)
			break;
		/* the default slice too (runtime 0): sched_setscheduler()
		 * would keep the short one */
		if (renice && syscall(SYS_sched_setattr, (pid_t)pid, &a, 0U) != 0)
			(void)sched_setscheduler((pid_t)pid, SCHED_OTHER, &sp);
		if (cpu_s > 0)
			(void)prlimit((pid_t)pid, RLIMIT_CPU, &cpu, NULL);
	}
}

/* A started run serves only a call of the shape it was started for. */
static int
same_shape(struct sb_started *s, const struct sb_request *req,
    struct sb_result *res)
{
	size_t len;
	char *shape;
	int rc;

	if ((shape = sb_shape_bytes(req, &len)) == NULL) {
		sb_fail(res, SB_STAGE_RESOURCES, ENOMEM, "the shape");
		return -ENOMEM;
	}
	rc = len == s->shape_len && memcmp(shape, s->shape, len) == 0;
	free(shape);
	if (!rc)
		return sb_request_fail(res, EINVAL, "the request's shape is "
		    "not the one the sandbox was built for");
	return 0;
}

/*
 * A sandbox built ahead takes its call: a program that is there, and the
 * launch as the first bytes of its stdin.
 */
static int
take_deferred(struct sb_started *s, const struct sb_request *req,
    struct sb_result *res)
{
	size_t len;
	int rc;

	if (req->argv == NULL || req->argv[0] == NULL)
		return sb_request_fail(res, EINVAL, "argv must hold argv[0]");
	if ((rc = sb_program_check(s->ctx, req, res)) < 0)
		return rc;
	if ((s->launch = sb_launch_bytes(req, &len, res)) == NULL)
		return -res->err;
	s->r.in_data = s->launch;
	s->r.in_len = len;
	return 0;
}

/* The call's program into a started run: shape, launch, priority. */
static int
take_call(struct sb_started *s, const struct sb_request *req,
    struct sb_result *res)
{
	bool lower;
	int rc;

	if ((s->shape != NULL && (rc = same_shape(s, req, res)) < 0) ||
	    (s->p->deferred && (rc = take_deferred(s, req, res)) < 0))
		return rc;
	/* a deferred one's launch sets the call's CPU limit itself */
	lower = !s->p->deferred && req->limits.cpu_s != 0 &&
	    req->limits.cpu_s < s->p->limits.cpu_s;
	if (s->p->start_idle || lower)
		adjust_program(s->r.pid, s->p->start_idle,
		    lower ? req->limits.cpu_s : 0);
	return 0;
}

int
sb_finish(struct sb_started *s, const struct sb_request *req,
    struct sb_cancel *cancel, struct sb_result *res)
{
	uint64_t t0 = mono_us();
	int rc;

	memset(res, 0, sizeof(*res));
	if ((rc = take_call(s, req, res)) < 0) {
		sb_discard(s);
		return rc;
	}
	if (req->limits.wall_ms != 0)
		s->p->limits.wall_ms = req->limits.wall_ms;
	rc = finish_run(s, req, cancel, res, t0);
	res->duration_us = mono_us() - t0;
	free(s);
	return rc;
}

void
sb_discard(struct sb_started *s)
{
	struct sb_result gone;

	if (s == NULL)
		return;
	/* a conversation ended between two turns: its workspace swept as
	 * at every run's end, once all of its processes are gone */
	if (s->r.keep_in && s->r.forked && !s->over && s->p != NULL &&
	    s->r.pid > 0) {
		kill_init(&s->r);
		reap(&s->r, 0);
		memset(&gone, 0, sizeof(gone));
		sb_protect_finish(s->p, &gone);
	}
	started_fini(s);
	free(s);
}

int
sb_converse(struct sb_started *s, const struct sb_request *req,
    struct sb_result *res)
{
	memset(res, 0, sizeof(*res));
	s->r.keep_in = true;
	return take_call(s, req, res);
}

/* A turn's input, behind what is left of a deferred run's launch. */
static int
turn_input(struct run *r, const struct sb_turn *t, char **owned)
{
	size_t left = r->in_len - r->in_off;

	*owned = NULL;
	if (left > 0) {
		if ((*owned = malloc(left + t->in_len)) == NULL)
			return -ENOMEM;
		memcpy(*owned, r->in_data + r->in_off, left);
		if (t->in_len > 0)
			memcpy(*owned + left, t->in, t->in_len);
		r->in_data = *owned;
		r->in_len = left + t->in_len;
	} else {
		r->in_data = t->in;
		r->in_len = t->in_len;
	}
	r->in_off = 0;
	return 0;
}

int
sb_turn(struct sb_started *s, const struct sb_turn *t,
    struct sb_cancel *cancel, struct sb_result *res)
{
	const struct sb_request preq = { .progress = t->progress,
	    .progress_arg = t->progress_arg, .progress_ms = t->progress_ms };
	struct run *r = &s->r;
	uint64_t t0 = mono_us();
	char *owned;
	int rc;

	memset(res, 0, sizeof(*res));
	if (s->over || !r->keep_in)
		return sb_request_fail(res, ESRCH, "the sandbox's program "
		    "has ended");
	if ((rc = sb_output_init(&res->out, s->p->limits.stdout_cap)) < 0 ||
	    (rc = sb_output_init(&res->err_out, s->p->limits.stderr_cap)) < 0 ||
	    (rc = turn_input(r, t, &owned)) < 0) {
		sb_fail(res, SB_STAGE_RESOURCES, -rc, "the turn's buffers");
		s->over = true;
		return rc;
	}
	r->sink = t->sink;
	r->sink_arg = t->sink_arg;
	r->turn_done = r->interrupted = false;
	r->grace_ms = t->grace_ms != 0 ? t->grace_ms : 1;
	s->p->limits.wall_ms = t->wall_ms;
	if (r->in_w >= 0)
		feed(r);
	if ((rc = supervise(r, &preq, s->p, cancel, res, t0)) < 0) {
		sb_fail(res, SB_STAGE_WAIT, -rc, "supervising the run");
		s->over = true;
	} else if (!r->turn_done) {
		s->over = true;
		rc = end_run(s, res);
		rc = rc < 0 ? rc : 1;
	}
	/*
	 * A turn done: what the session made in the workspace's protected
	 * names goes aside now, as at a run's end, not at the session's
	 * only (its processes may make them again: so does a long run).
	 */
	if (rc == 0)
		sb_protect_finish(s->p, res);
	/* the program has read it all: it answered after its input */
	r->in_data = NULL;
	r->in_len = r->in_off = 0;
	r->sink = NULL;
	r->sink_arg = NULL;
	free(owned);
	sb_output_finish(&res->out);
	sb_output_finish(&res->err_out);
	res->duration_us = mono_us() - t0;
	return rc;
}

uint64_t
sb_started_memory(struct sb_started *s)
{
	return sb_cg_run_memory(&s->ctx->cg, &s->cg);
}
