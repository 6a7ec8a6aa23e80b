/*
 * exec: sb_run() and the started runs (sb_start, sb_finish), the parent
 * side of one run. Builds the plan, has launch.c clone the sandbox's init
 * into fresh namespaces, then polls its output, status pipe, pidfd and
 * the cancel eventfd until the init is reaped. The deadline and
 * cancellation kill the init, which takes the whole pid namespace down
 * (a conversation's, turn.c, interrupts first). Safe to call from several
 * threads at once.
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
#include "run.h"

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

enum { PFD_OUT, PFD_ERR, PFD_STATUS, PFD_PID, PFD_CANCEL, PFD_IN,
	PFD_OOM, PFD_NET, PFD_COUNT };

uint64_t
sb_mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
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
		sb_close_fd(fd);
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
			sb_close_fd(&r->status);
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
void
sb_feed(struct run *r)
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
		sb_close_fd(&r->in_w);
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

/* What sb_supervise() waits for now. */
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
int
sb_supervise(struct run *r, const struct sb_request *req,
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
		now = sb_mono_us();
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
			sb_feed(r);
		if (pfd[PFD_NET].fd >= 0 && pfd[PFD_NET].revents != 0 &&
		    (pause = r->net_fn(r->net_arg, r->net_lfd,
		    SB_NET_READY)) > 0)
			net_resume = sb_mono_us() + (uint64_t)(pause <
			    SB_NET_MAX_PAUSE_MS ? pause : SB_NET_MAX_PAUSE_MS) *
			    1000;
		if (pfd[PFD_PID].fd >= 0 && pfd[PFD_PID].revents != 0) {
			reap(r, WNOHANG);
			if (r->reaped)
				drain_until = sb_mono_us() + SB_DRAIN_MS * 1000;
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
				deadline = interrupt(r, res, sb_mono_us());
			else
				kill_init(r);
			res->cancelled = true;
		}
		if (req->progress != NULL && sb_mono_us() >= next_progress) {
			req->progress(req->progress_arg,
			    (sb_mono_us() - t0) / 1000, &res->out, &res->err_out);
			next_progress = sb_mono_us() + interval;
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
	    .stat = { -1, -1 }, .sync = { -1, -1 }, .in = { -1, -1 },
	    .plan = -1 };
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
		sb_close_fd(&s->r.net_lfd);
	}
	sb_cg_run_remove(&s->ctx->cg, &s->cg);
	if (s->slot >= 0)
		sb_netns_pool_give(&s->ctx->pool, s->slot);
	s->slot = -1;
	/* after the reap: no process of the run holds the uid any more */
	if (s->uid_slot >= 0)
		sb_uid_pool_give(&s->ctx->uids, s->uid_slot);
	s->uid_slot = -1;
	sb_close_fd(&s->r.out);
	sb_close_fd(&s->r.err);
	sb_close_fd(&s->r.status);
	sb_close_fd(&s->r.pidfd);
	sb_close_fd(&s->r.in_w);
	sb_chans_close(&s->c);
	free(s->shape);
	free(s->launch);
	free(s->queued);
	s->shape = s->launch = s->queued = NULL;
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
 * Plan, build and launch: on success the init builds the sandbox, whose
 * program's process then waits for its launch on its stdin (s->r.in_w).
 * Unless the request is deferred, the launch is the request's, with its
 * stdin bytes, queued there now (sb_feed writes it).
 */
static int
start_run(struct sb_started *s, const struct sb_request *req, bool started,
    struct sb_result *res)
{
	size_t len = 0;
	int rc;

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
	if (started && (s->shape = sb_shape_bytes(req,
	    &s->shape_len)) == NULL) {
		sb_fail(res, SB_STAGE_RESOURCES, ENOMEM, "the shape");
		return -ENOMEM;
	}
	s->deferred = req->deferred;
	if (!s->deferred) {
		struct sb_request now = *req;

		/* sb_start()'s request brings no stdin: its call does */
		if (started)
			now.stdin_len = 0;
		if ((s->launch = sb_launch_bytes(&now, &len, res)) == NULL)
			return -res->err;
	}
	if ((rc = run_trees(s, res)) < 0 ||
	    (rc = sb_chans_open(&s->c, s->ctx, s->uid, res)) < 0 ||
	    (rc = sb_cg_run_make(&s->ctx->cg, &s->p->limits, &s->cg, res)) < 0)
		return rc;
	s->p->cg_sync = s->cg.made;
	if ((rc = sb_launch(s->ctx, s->p, req, &s->c, &s->slot, s->uid,
	    &s->cg, &s->r, res)) < 0)
		return rc;
	s->r.in_data = s->launch;
	s->r.in_len = len;
	return 0;
}

/*
 * Bytes for the program's stdin, behind what it has not read yet (of its
 * launch, or a turn's input); *owned: the copy that joins them, to free
 * once written, or NULL. -ENOMEM.
 */
int
sb_queue_input(struct run *r, const void *in, size_t in_len, char **owned)
{
	size_t left = r->in_len - r->in_off;

	*owned = NULL;
	if (left > 0) {
		if ((*owned = malloc(left + in_len)) == NULL)
			return -ENOMEM;
		memcpy(*owned, r->in_data + r->in_off, left);
		if (in_len > 0)
			memcpy(*owned + left, in, in_len);
		r->in_data = *owned;
		r->in_len = left + in_len;
	} else {
		r->in_data = in;
		r->in_len = in_len;
	}
	r->in_off = 0;
	return 0;
}

/* A supervised run is over: how it ended, into res. */
int
sb_end_run(struct sb_started *s, struct sb_result *res)
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
	sb_feed(r);
	if ((rc = sb_supervise(r, req, s->p, cancel, res, t0)) < 0) {
		sb_fail(res, SB_STAGE_WAIT, -rc, "supervising the run");
		goto out;
	}
	rc = sb_end_run(s, res);
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
	uint64_t t0 = sb_mono_us();	/* the run's cost starts with its plan */
	int rc;

	memset(res, 0, sizeof(*res));
	started_init(&s, ctx);
	if ((rc = start_run(&s, req, false, res)) < 0) {
		started_fini(&s);
		res->duration_us = sb_mono_us() - t0;
		return rc;
	}
	rc = finish_run(&s, req, cancel, res, t0);
	res->duration_us = sb_mono_us() - t0;
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
	/* a program started ahead: its launch now, its stdin still open */
	s->r.keep_in = true;
	sb_feed(&s->r);
	s->r.keep_in = false;
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
	uint64_t until = sb_mono_us() + (uint64_t)timeout_ms * 1000, now;
	struct pollfd pfd = { .fd = s->r.status, .events = POLLIN };

	while (s->deferred && !s->r.ready && !s->r.got_fail &&
	    s->r.status >= 0 && (now = sb_mono_us()) < until) {
		if (poll(&pfd, 1, poll_timeout(now, until)) < 0 &&
		    errno != EINTR)
			break;
		read_status(&s->r);
	}
	return !s->deferred || s->r.ready;
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
		sb_autogroup_nice(init, 0);
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
 * A sandbox built ahead takes its call: the launch as the first bytes of
 * its stdin. Whether the program is there is the execve's to say, inside
 * (SB_STAGE_EXEC), as for every run.
 */
static int
take_deferred(struct sb_started *s, const struct sb_request *req,
    struct sb_result *res)
{
	size_t len;

	if (!sb_path_is_normal(req->program))
		return sb_request_fail(res, EINVAL,
		    "program must be an absolute, normalised path");
	if (req->argv == NULL || req->argv[0] == NULL)
		return sb_request_fail(res, EINVAL, "argv must hold argv[0]");
	if ((s->launch = sb_launch_bytes(req, &len, res)) == NULL)
		return -res->err;
	s->r.in_data = s->launch;
	s->r.in_len = len;
	return 0;
}

/* The call's program into a started run: shape, launch, priority. */
int
sb_take_call(struct sb_started *s, const struct sb_request *req,
    struct sb_result *res)
{
	bool lower;
	int rc;

	if ((s->shape != NULL && (rc = same_shape(s, req, res)) < 0) ||
	    (s->deferred && (rc = take_deferred(s, req, res)) < 0))
		return rc;
	/* a program started ahead: the call's stdin behind its launch */
	if (!s->deferred && sb_queue_input(&s->r, req->stdin_data,
	    req->stdin_len, &s->queued) < 0) {
		sb_fail(res, SB_STAGE_RESOURCES, ENOMEM, "the call's stdin");
		return -ENOMEM;
	}
	/* a deferred one's launch sets the call's CPU limit itself */
	lower = !s->deferred && req->limits.cpu_s != 0 &&
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
	uint64_t t0 = sb_mono_us();
	int rc;

	memset(res, 0, sizeof(*res));
	if ((rc = sb_take_call(s, req, res)) < 0) {
		sb_discard(s);
		return rc;
	}
	if (req->limits.wall_ms != 0)
		s->p->limits.wall_ms = req->limits.wall_ms;
	rc = finish_run(s, req, cancel, res, t0);
	res->duration_us = sb_mono_us() - t0;
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
