/*
 * stdio transport. Leader and followers: one thread at a time holds the
 * reading role. It reads stdin, frames lines (capped at MCP_MAX_MSG; a
 * longer line is discarded up to its newline and answered with an error)
 * and answers quick methods itself. On a tools/call that may run long it
 * hands the reading role to an idle thread (started if none waits), then
 * runs the call itself: the call starts on the thread that read it, with
 * no hand-off between reading and running, and the next message is read
 * meanwhile. Responses go out as each call finishes, one write per message
 * under a lock, so lines never interleave.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/uio.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "dispatch.h"
#include "jsonrpc.h"
#include "mcp_limits.h"
#include "log.h"
#include "timespec.h"
#include "transport_stdio.h"

/*
 * Replies the reading thread produces while it works through one read()
 * are gathered and written together: a client that pipelines requests gets
 * one write per batch instead of one per reply. Calls write at once.
 */
#define STDIO_BATCH_MAX	(256u * 1024)

struct out {
	pthread_mutex_t lock;
	bool broken;		/* stdout closed by the client */
	char *batch;		/* owned; STDIO_BATCH_MAX bytes; the reader's */
	size_t blen;
};

/* This thread holds the reading role and is inside one read's lines. */
static __thread bool out_batching;

static int out_write(struct out *o, const char *a, size_t alen,
    const char *b, size_t blen);

/* Writes the gathered replies, if any. Reading thread only. */
static void
out_flush(struct out *o)
{
	if (o->blen > 0) {
		(void)out_write(o, o->batch, o->blen, NULL, 0);
		o->blen = 0;
	}
}

/*
 * The reading role's state. Only the thread holding the role touches it;
 * the role passes between threads under the pool's lock.
 */
struct reader {
	char *buf;		/* owned; MCP_MAX_MSG + one read chunk */
	size_t have;		/* bytes in buf */
	size_t start;		/* first byte not yet framed into a line */
	size_t scan;		/* bytes from start known to hold no newline */
	bool discarding;	/* inside an oversized line */
	bool ended;		/* stdin ended: never read again (a tty would
				 * block rather than say EOF twice) */
	/*
	 * stdin, and the signal fd. It shows the signals sent to the process
	 * (kill(1), a terminal, a service manager); one sent to a single
	 * thread (tgkill) shows once that thread reads again.
	 */
	struct pollfd pfd[2];
	struct json_tokener *tok;	/* owned */
};

struct pool {
	pthread_mutex_t lock;
	pthread_cond_t turn;	/* the reading role is free, or stop was set */
	pthread_cond_t done;	/* a call finished or a thread exited */
	bool role_free;		/* no thread reads: the next idle one will */
	size_t running;		/* calls registered and running */
	size_t threads;		/* started threads (the main one not counted) */
	size_t idle;		/* threads waiting for the reading role */
	bool stop;		/* input over and calls done: leave */
	const struct server *srv;
	struct session *sess;
	struct msg_sink sink;
	struct out *out;
	struct reader rd;
};

/* Writes a then b to stdout in full, under the lock. */
static int
out_write(struct out *o, const char *a, size_t alen, const char *b,
    size_t blen)
{
	struct iovec iov[2];
	size_t off = 0, total = alen + blen;
	ssize_t n;
	int rc = 0;

	(void)pthread_mutex_lock(&o->lock);
	if (o->broken) {
		rc = -1;
		goto out;
	}
	while (off < total) {
		if (off < alen) {
			iov[0].iov_base = (char *)a + off;
			iov[0].iov_len = alen - off;
			iov[1].iov_base = (char *)b;
			iov[1].iov_len = blen;
			n = writev(STDOUT_FILENO, iov, blen > 0 ? 2 : 1);
		} else
			n = write(STDOUT_FILENO, b + (off - alen),
			    total - off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			o->broken = true;
			rc = -1;
			goto out;
		}
		off += (size_t)n;
	}
 out:
	(void)pthread_mutex_unlock(&o->lock);
	return rc;
}

static int
out_send(void *arg, const char *msg, size_t len)
{
	struct out *o = arg;

	/* the batch is the reading thread's: calls never touch it */
	if (out_batching) {
		if (o->blen + len + 1 > STDIO_BATCH_MAX)
			out_flush(o);
		if (len + 1 <= STDIO_BATCH_MAX) {
			memcpy(o->batch + o->blen, msg, len);
			o->batch[o->blen + len] = '\n';
			o->blen += len + 1;
			return 0;	/* a broken stdout shows at the flush */
		}
	}
	return out_write(o, msg, len, "\n", 1);
}

static void
send_owned(struct out *o, char *text)
{
	if (text != NULL) {
		(void)out_send(o, text, strlen(text));
		free(text);
	}
}

static void
send_too_large(struct out *o)
{
	char why[96];

	(void)snprintf(why, sizeof(why), "Invalid Request: message larger "
	    "than %u bytes", MCP_MAX_MSG);
	send_owned(o, jsonrpc_error(NULL, MCP_ERR_TOO_LARGE, why, NULL, NULL));
}

static void *follower_main(void *arg);

/*
 * A thread waiting for the reading role is SCHED_BATCH: woken to take the
 * role, it does not preempt the thread that woke it, which goes on into
 * its call at once; it reads once a CPU is free, at the latest when that
 * call waits on its sandbox. It is SCHED_OTHER again while it holds the
 * role and runs its own call. Best effort: both are allowed unprivileged.
 */
static void
set_waiting(bool waiting)
{
	static __thread bool batch;
	struct sched_param sp = { 0 };

	if (waiting != batch && sched_setscheduler(0,
	    waiting ? SCHED_BATCH : SCHED_OTHER, &sp) == 0)
		batch = waiting;
}

/*
 * Registers a call and gives the reading role up (lock held): to an idle
 * thread, or to one started now. When the call cannot run, nothing was
 * registered: -1 at the in-flight cap, -2 when no thread could be started
 * to read while it runs.
 */
static int
give_up_reading(struct pool *p, const struct rpc_msg *msg,
    struct inflight *fl)
{
	pthread_attr_t attr;
	pthread_t tid;
	int rc;

	if (p->running >= MCP_MAX_INFLIGHT)
		return -1;
	if (p->idle == 0) {
		(void)pthread_attr_init(&attr);
		(void)pthread_attr_setdetachstate(&attr,
		    PTHREAD_CREATE_DETACHED);
		(void)pthread_attr_setstacksize(&attr, MCP_WORKER_STACK);
		rc = pthread_create(&tid, &attr, follower_main, p);
		(void)pthread_attr_destroy(&attr);
		if (rc != 0) {
			log_err("cannot start a thread: %s", strerror(rc));
			return -2;
		}
		p->threads++;	/* it waits for the role once it runs */
	}
	if (dispatch_enqueue(p->sess, msg, fl) != 0)
		return -1;
	p->running++;
	p->role_free = true;
	(void)pthread_cond_signal(&p->turn);
	return 0;
}

/*
 * Handles one complete line (without its newline). Returns a call that may
 * run long, registered in *fl, once the reading role is given up: the
 * caller runs it. NULL when the line was answered here.
 */
static struct rpc_msg *
handle_line(struct pool *p, char *line, size_t len, struct inflight *fl)
{
	struct rpc_msg *msg;
	char *reply;
	size_t i;
	bool batching = out_batching;
	int rc;

	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' ' ||
	    line[len - 1] == '\t'))
		len--;
	for (i = 0; i < len && (line[i] == ' ' || line[i] == '\t'); i++)
		;
	if (i == len)
		return NULL;	/* blank lines are keep-alives, not messages */
	if (jsonrpc_decode_tok(p->rd.tok, line + i, len - i, &msg,
	    &reply) != MCP_OK) {
		send_owned(p->out, reply);
		return NULL;
	}
	if (!dispatch_is_quick(p->srv, msg)) {
		/* what this read answered goes out before the call's own */
		out_batching = false;	/* and the call's, at once */
		out_flush(p->out);
		memset(fl, 0, sizeof(*fl));
		(void)pthread_mutex_lock(&p->lock);
		rc = give_up_reading(p, msg, fl);
		(void)pthread_mutex_unlock(&p->lock);
		if (rc == 0)
			return msg;
		reply = jsonrpc_error(msg->id, MCP_ERR_INTERNAL, rc == -1 ?
		    "Server busy: too many requests in flight" :
		    "Server busy: out of threads to run the request; try "
		    "again in a moment", NULL, NULL);
		rpc_msg_free(msg);
		out_batching = batching;
		send_owned(p->out, reply);
		return NULL;
	}
	(void)dispatch_message(p->srv, p->sess, msg, &p->sink);
	rpc_msg_free(msg);
	return NULL;
}

enum read_end {
	READ_CALL,		/* a call to run; the role was given up */
	READ_EOF,		/* stdin ended (or failed) */
	READ_SIGNAL,		/* a termination signal */
};

/*
 * The reading role: frames what is already buffered, then reads more,
 * until a call must run here (READ_CALL, *ret the call) or input ends.
 */
static enum read_end
read_lines(struct pool *p, struct rpc_msg **ret, struct inflight *fl)
{
	struct reader *rd = &p->rd;
	struct rpc_msg *msg;
	char *nl, *line;
	size_t end, len;
	ssize_t n;

	for (;;) {
		out_batching = true;
		while ((nl = memchr(rd->buf + rd->start + rd->scan, '\n',
		    rd->have - rd->start - rd->scan)) != NULL) {
			end = (size_t)(nl - rd->buf);
			line = rd->buf + rd->start;
			len = end - rd->start;
			/* framed before handle_line(): the role may go */
			rd->start = end + 1;
			rd->scan = 0;
			msg = NULL;
			/* the cap is on the line itself, not on the buffer,
			 * which holds up to a read more */
			if (rd->discarding || len > MCP_MAX_MSG) {
				rd->discarding = false;
				send_too_large(p->out);
			} else
				msg = handle_line(p, line, len, fl);
			if (msg != NULL) {
				*ret = msg;
				return READ_CALL;
			}
		}
		rd->scan = rd->have - rd->start;
		out_batching = false;
		out_flush(p->out);
		if (rd->start > 0) {
			memmove(rd->buf, rd->buf + rd->start,
			    rd->have - rd->start);
			rd->have -= rd->start;
			rd->start = 0;
		}
		if (rd->have > MCP_MAX_MSG) {
			rd->discarding = true;	/* until the next newline */
			rd->have = rd->scan = 0;
		}

		if (rd->ended)
			return READ_EOF;
		if (poll(rd->pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			log_err("poll: %s", strerror(errno));
			return READ_EOF;
		}
		if (rd->pfd[1].revents & POLLIN) {
			log_info("signal received: cancelling calls in flight");
			return READ_SIGNAL;
		}
		if (!(rd->pfd[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		n = read(STDIN_FILENO, rd->buf + rd->have,
		    MCP_STDIO_READ_CHUNK);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			log_err("read stdin: %s", strerror(errno));
			rd->ended = true;
			return READ_EOF;
		}
		if (n == 0) {
			rd->ended = true;
			/* a last line without its newline */
			len = rd->discarding ? 0 : rd->have;
			rd->have = rd->scan = 0;
			if (len > MCP_MAX_MSG) {
				send_too_large(p->out);
				return READ_EOF;
			}
			if (len > 0 &&
			    (msg = handle_line(p, rd->buf, len, fl)) != NULL) {
				*ret = msg;
				return READ_CALL;	/* the next holder ends */
			}
			return READ_EOF;
		}
		rd->have += (size_t)n;
	}
}

/*
 * Input is over. After stdin ends, calls in flight may finish and answer;
 * a signal in the meantime cancels them, as does one that ended input.
 * Waits on the calls, waking every 100 ms to look at the signal fd (a
 * bounded poll, not a timing assumption). Then everyone leaves.
 */
#define FINISH_POLL_MS	100	/* a signal is seen within this */

static void
finish(struct pool *p, enum read_end why)
{
	struct signalfd_siginfo si;
	struct timespec ts;
	bool cancelled = why == READ_SIGNAL;

	/* input is over: the client's tasks end now (nobody can fetch them
	 * any more), which also ends a tasks/result waiting on one */
	dispatch_end_tasks(p->srv);
	/* and no answer to a question of ours can come (approvals): the
	 * calls that wait for one are told no at once */
	session_answers_over(p->sess);
	if (cancelled)
		session_cancel_all(p->sess);
	(void)pthread_mutex_lock(&p->lock);
	while (p->running > 0) {
		ts = ts_after_ms(CLOCK_REALTIME, FINISH_POLL_MS);
		(void)pthread_cond_timedwait(&p->done, &p->lock, &ts);
		if (!cancelled && read(p->rd.pfd[1].fd, &si, sizeof(si)) > 0) {
			cancelled = true;
			(void)pthread_mutex_unlock(&p->lock);
			session_cancel_all(p->sess);
			(void)pthread_mutex_lock(&p->lock);
		}
	}
	p->stop = true;
	(void)pthread_cond_broadcast(&p->turn);
	(void)pthread_mutex_unlock(&p->lock);
}

/*
 * A thread's life: wait for the reading role, read until a call comes,
 * run it, and again. The main thread starts holding the role; started
 * threads leave when more than MCP_IDLE_WORKERS would be waiting.
 */
static void
serve(struct pool *p, bool main_thread)
{
	struct rpc_msg *msg = NULL;
	struct inflight fl;
	enum read_end why;

	(void)pthread_mutex_lock(&p->lock);
	for (;;) {
		p->idle++;
		if (!p->role_free && !p->stop) {
			(void)pthread_mutex_unlock(&p->lock);
			set_waiting(true);
			(void)pthread_mutex_lock(&p->lock);
		}
		while (!p->role_free && !p->stop)
			(void)pthread_cond_wait(&p->turn, &p->lock);
		p->idle--;
		if (p->stop)
			break;
		p->role_free = false;
		(void)pthread_mutex_unlock(&p->lock);
		set_waiting(false);

		why = read_lines(p, &msg, &fl);
		if (why != READ_CALL) {
			finish(p, why);
			(void)pthread_mutex_lock(&p->lock);
			break;
		}
		(void)dispatch_message_queued(p->srv, p->sess, msg, &p->sink,
		    &fl);
		rpc_msg_free(msg);

		(void)pthread_mutex_lock(&p->lock);
		p->running--;
		(void)pthread_cond_broadcast(&p->done);
		/* a burst is over: do not keep its threads forever */
		if (!main_thread && p->idle >= MCP_IDLE_WORKERS)
			break;
	}
	if (!main_thread) {
		p->threads--;
		(void)pthread_cond_broadcast(&p->done);
	}
	(void)pthread_mutex_unlock(&p->lock);
}

static void *
follower_main(void *arg)
{
	serve(arg, false);
	return NULL;
}

int
transport_stdio_block_signals(void)
{
	sigset_t set;

	(void)sigemptyset(&set);
	(void)sigaddset(&set, SIGTERM);
	(void)sigaddset(&set, SIGINT);
	(void)sigaddset(&set, SIGHUP);
	if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0)
		return -1;
	(void)signal(SIGPIPE, SIG_IGN);
	return 0;
}

int
transport_stdio_run(const struct server *srv, struct session *sess)
{
	struct out o = { .broken = false };
	struct pool p;
	sigset_t set;
	int sfd = -1, rc = 1;

	memset(&p, 0, sizeof(p));
	(void)pthread_mutex_init(&o.lock, NULL);
	(void)pthread_mutex_init(&p.lock, NULL);
	(void)pthread_cond_init(&p.turn, NULL);
	(void)pthread_cond_init(&p.done, NULL);
	p.srv = srv;
	p.sess = sess;
	p.sink.send = out_send;
	p.sink.arg = &o;
	p.out = &o;
	/* a task's notifications outlive the request that started it */
	sess->bg_send = out_send;
	sess->bg_arg = &o;

	(void)sigemptyset(&set);
	(void)sigaddset(&set, SIGTERM);
	(void)sigaddset(&set, SIGINT);
	(void)sigaddset(&set, SIGHUP);
	if ((sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
		log_err("signalfd: %s", strerror(errno));
		goto out;
	}
	if ((p.rd.tok = jsonrpc_tokener_new()) == NULL) {
		log_err("out of memory");
		goto out;
	}
	/* one message plus one read chunk: never more in memory per line */
	if ((o.batch = malloc(STDIO_BATCH_MAX)) == NULL ||
	    (p.rd.buf = malloc(MCP_MAX_MSG + MCP_STDIO_READ_CHUNK)) == NULL) {
		log_err("out of memory");
		goto out;
	}
	p.rd.pfd[0].fd = STDIN_FILENO;
	p.rd.pfd[0].events = POLLIN;
	p.rd.pfd[1].fd = sfd;
	p.rd.pfd[1].events = POLLIN;
	p.role_free = true;
	serve(&p, true);
	set_waiting(false);
	/* the threads still waiting for the role see stop and leave */
	(void)pthread_mutex_lock(&p.lock);
	while (p.threads > 0)
		(void)pthread_cond_wait(&p.done, &p.lock);
	(void)pthread_mutex_unlock(&p.lock);
	rc = 0;
 out:
	/* tasks write to o and use the session's workspace */
	dispatch_end_tasks(srv);
	sess->bg_send = NULL;
	if (p.rd.tok != NULL)
		json_tokener_free(p.rd.tok);
	free(p.rd.buf);
	free(o.batch);
	if (sfd >= 0)
		(void)close(sfd);
	(void)pthread_cond_destroy(&p.done);
	(void)pthread_cond_destroy(&p.turn);
	(void)pthread_mutex_destroy(&p.lock);
	(void)pthread_mutex_destroy(&o.lock);
	return rc;
}
