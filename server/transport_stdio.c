/*
 * stdio transport. The main thread reads stdin, frames lines (capped at
 * MCP_MAX_MSG; a longer line is discarded up to its newline and answered
 * with an error), and answers quick methods itself. tools/call runs on a
 * pool of worker threads so that a slow call holds up nothing else;
 * responses go out as each call finishes, one write per message under a
 * lock, so lines never interleave.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
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
#include "transport_stdio.h"

/*
 * Replies the reading thread produces while it works through one read()
 * are gathered and written together: a client that pipelines requests gets
 * one write per batch instead of one per reply. Workers write at once.
 */
#define STDIO_BATCH_MAX	(256u * 1024)

struct out {
	pthread_mutex_t lock;
	bool broken;		/* stdout closed by the client */
	pthread_t reader;	/* the thread that owns the batch */
	bool batching;		/* reader is inside one read's lines */
	char *batch;		/* owned; STDIO_BATCH_MAX bytes */
	size_t blen;
};

static int out_write(struct out *o, const char *a, size_t alen,
    const char *b, size_t blen);

/* Writes the gathered replies, if any. Reader thread only. */
static void
out_flush(struct out *o)
{
	if (o->blen > 0) {
		(void)out_write(o, o->batch, o->blen, NULL, 0);
		o->blen = 0;
	}
}

struct job {
	struct rpc_msg *msg;	/* owned */
	struct inflight fl;	/* registered at submit, for cancellation */
	struct job *next;
};

struct pool {
	pthread_mutex_t lock;
	pthread_cond_t work;	/* a job was queued or stop was set */
	pthread_cond_t done;	/* a job finished or a thread exited */
	struct job *head, *tail;
	size_t pending;		/* queued + running */
	size_t queued;		/* waiting for a worker */
	size_t threads, idle;
	bool stop;
	const struct server *srv;
	struct session *sess;
	struct msg_sink sink;
	struct json_tokener *tok;	/* owned; the reading thread's */
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

	/* batch and batching belong to the reader: workers never read them */
	if (pthread_equal(pthread_self(), o->reader) && o->batching) {
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

static void *
worker_main(void *arg)
{
	struct pool *p = arg;
	struct job *j;

	(void)pthread_mutex_lock(&p->lock);
	for (;;) {
		while (p->head == NULL && !p->stop)
			(void)pthread_cond_wait(&p->work, &p->lock);
		if (p->head == NULL)
			break;
		j = p->head;
		p->head = j->next;
		if (p->head == NULL)
			p->tail = NULL;
		p->queued--;
		p->idle--;
		(void)pthread_mutex_unlock(&p->lock);

		(void)dispatch_message_queued(p->srv, p->sess, j->msg,
		    &p->sink, &j->fl);
		rpc_msg_free(j->msg);
		free(j);

		(void)pthread_mutex_lock(&p->lock);
		p->pending--;
		p->idle++;
		(void)pthread_cond_broadcast(&p->done);
		/* a burst is over: do not keep its threads forever */
		if (p->idle > MCP_IDLE_WORKERS && p->head == NULL)
			break;
	}
	p->idle--;
	p->threads--;
	(void)pthread_cond_broadcast(&p->done);
	(void)pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* Queues msg (ownership taken). -1 when the in-flight cap is reached. */
static int
pool_submit(struct pool *p, struct rpc_msg *msg)
{
	pthread_attr_t attr;
	pthread_t tid;
	struct job *j;
	int rc = 0;

	if ((j = calloc(1, sizeof(*j))) == NULL)
		return -1;
	j->msg = msg;
	(void)pthread_mutex_lock(&p->lock);
	if (p->pending >= MCP_MAX_INFLIGHT ||
	    dispatch_enqueue(p->sess, msg, &j->fl) != 0) {
		(void)pthread_mutex_unlock(&p->lock);
		free(j);
		return -1;
	}
	if (p->tail != NULL)
		p->tail->next = j;
	else
		p->head = j;
	p->tail = j;
	p->pending++;
	p->queued++;
	/* one idle worker per queued job, or a slow call holds up the next */
	if (p->idle < p->queued) {
		(void)pthread_attr_init(&attr);
		(void)pthread_attr_setdetachstate(&attr,
		    PTHREAD_CREATE_DETACHED);
		(void)pthread_attr_setstacksize(&attr, MCP_WORKER_STACK);
		if (pthread_create(&tid, &attr, worker_main, p) == 0) {
			p->threads++;
			p->idle++;
		} else if (p->threads == 0)
			rc = -1;	/* nobody would ever run it */
		(void)pthread_attr_destroy(&attr);
	}
	if (rc != 0) {
		p->head = p->tail = NULL;
		p->pending--;
		p->queued--;
		(void)session_end(p->sess, &j->fl);
		free(j);
	} else
		(void)pthread_cond_signal(&p->work);
	(void)pthread_mutex_unlock(&p->lock);
	return rc;
}

/* Waits for every job, then for every thread to leave. */
static void
pool_drain(struct pool *p)
{
	(void)pthread_mutex_lock(&p->lock);
	while (p->pending > 0)
		(void)pthread_cond_wait(&p->done, &p->lock);
	p->stop = true;
	(void)pthread_cond_broadcast(&p->work);
	while (p->threads > 0)
		(void)pthread_cond_wait(&p->done, &p->lock);
	(void)pthread_mutex_unlock(&p->lock);
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

/*
 * After stdin ends, calls in flight may finish and answer; a signal in the
 * meantime cancels them. Waits on the pool, waking every 100 ms to look at
 * the signal fd (a bounded poll, not a timing assumption).
 */
static void
drain_watching(struct pool *p, struct session *sess, int sfd)
{
	struct signalfd_siginfo si;
	struct timespec ts;
	bool cancelled = false;

	(void)pthread_mutex_lock(&p->lock);
	while (p->pending > 0) {
		(void)clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		(void)pthread_cond_timedwait(&p->done, &p->lock, &ts);
		if (!cancelled && read(sfd, &si, sizeof(si)) > 0) {
			cancelled = true;
			(void)pthread_mutex_unlock(&p->lock);
			session_cancel_all(sess);
			(void)pthread_mutex_lock(&p->lock);
		}
	}
	(void)pthread_mutex_unlock(&p->lock);
}

/* Handles one complete line (without its newline). */
static void
handle_line(struct pool *p, struct out *o, char *line, size_t len)
{
	struct rpc_msg *msg;
	char *reply;
	size_t i;

	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' ' ||
	    line[len - 1] == '\t'))
		len--;
	for (i = 0; i < len && (line[i] == ' ' || line[i] == '\t'); i++)
		;
	if (i == len)
		return;		/* blank lines are keep-alives, not messages */
	if (jsonrpc_decode_tok(p->tok, line + i, len - i, &msg,
	    &reply) != MCP_OK) {
		send_owned(o, reply);
		return;
	}
	if (!dispatch_is_quick(p->srv, msg)) {
		if (pool_submit(p, msg) != 0) {
			reply = jsonrpc_error(msg->id, MCP_ERR_INTERNAL,
			    "Server busy: too many requests in flight", NULL,
			    NULL);
			rpc_msg_free(msg);
			send_owned(o, reply);
		}
		return;
	}
	(void)dispatch_message(p->srv, p->sess, msg, &p->sink);
	rpc_msg_free(msg);
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
	struct pollfd pfd[2];
	sigset_t set;
	char *buf = NULL, *nl;
	size_t have = 0, start, scan;
	bool discarding = false, terminated = false;
	ssize_t n;
	int sfd = -1, rc = 1;

	memset(&p, 0, sizeof(p));
	(void)pthread_mutex_init(&o.lock, NULL);
	(void)pthread_mutex_init(&p.lock, NULL);
	(void)pthread_cond_init(&p.work, NULL);
	(void)pthread_cond_init(&p.done, NULL);
	p.srv = srv;
	p.sess = sess;
	p.sink.send = out_send;
	p.sink.arg = &o;

	(void)sigemptyset(&set);
	(void)sigaddset(&set, SIGTERM);
	(void)sigaddset(&set, SIGINT);
	(void)sigaddset(&set, SIGHUP);
	if ((sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
		log_err("signalfd: %s", strerror(errno));
		goto out;
	}
	/* one message plus one read chunk: never more in memory per line */
	o.reader = pthread_self();
	if ((p.tok = jsonrpc_tokener_new()) == NULL) {
		log_err("out of memory");
		goto out;
	}
	if ((o.batch = malloc(STDIO_BATCH_MAX)) == NULL ||
	    (buf = malloc(MCP_MAX_MSG + MCP_STDIO_READ_CHUNK)) == NULL) {
		log_err("out of memory");
		goto out;
	}
	pfd[0].fd = STDIN_FILENO;
	pfd[0].events = POLLIN;
	pfd[1].fd = sfd;
	pfd[1].events = POLLIN;
	for (;;) {
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			log_err("poll: %s", strerror(errno));
			break;
		}
		if (pfd[1].revents & POLLIN) {
			log_info("signal received: cancelling calls in flight");
			terminated = true;
			break;
		}
		if (!(pfd[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		n = read(STDIN_FILENO, buf + have, MCP_STDIO_READ_CHUNK);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			log_err("read stdin: %s", strerror(errno));
			break;
		}
		if (n == 0) {
			if (have > 0 && !discarding)
				handle_line(&p, &o, buf, have);
			break;
		}
		scan = have;
		have += (size_t)n;
		start = 0;
		o.batching = true;
		while ((nl = memchr(buf + scan, '\n', have - scan)) != NULL) {
			size_t end = (size_t)(nl - buf);

			if (discarding) {
				discarding = false;
				send_too_large(&o);
			} else
				handle_line(&p, &o, buf + start, end - start);
			start = end + 1;
			scan = start;
		}
		o.batching = false;
		out_flush(&o);
		if (start > 0) {
			memmove(buf, buf + start, have - start);
			have -= start;
		}
		if (have > MCP_MAX_MSG) {
			discarding = true;	/* until the next newline */
			have = 0;
		}
	}
	if (terminated)
		session_cancel_all(sess);
	else
		drain_watching(&p, sess, sfd);
	pool_drain(&p);
	rc = 0;
 out:
	if (p.tok != NULL)
		json_tokener_free(p.tok);
	free(buf);
	free(o.batch);
	if (sfd >= 0)
		(void)close(sfd);
	(void)pthread_cond_destroy(&p.done);
	(void)pthread_cond_destroy(&p.work);
	(void)pthread_mutex_destroy(&p.lock);
	(void)pthread_mutex_destroy(&o.lock);
	return rc;
}
