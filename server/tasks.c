/*
 * The task store: one list in creation order under one lock. A task is
 * held until its thread has ended and its time to live has passed since
 * it ended (the TTL a client sees is counted from creation; keeping a
 * result longer than promised is harmless, losing it early is not). Old
 * tasks are swept at every use of the store, so no timer thread is needed.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "tasks.h"
#include "timespec.h"
#include "utf8.h"

_Static_assert(sizeof(((struct task_view *)0)->created) == TS_ISO_LEN,
    "a view holds a timestamp");

struct task {
	char id[TASK_ID_LEN + 1];
	char owner[TASK_OWNER_MAX];
	enum task_status status;
	char message[TASK_MESSAGE_MAX];
	char created[TS_ISO_LEN];
	char updated[TS_ISO_LEN];
	uint64_t ttl_ms;
	struct timespec ended;		/* monotonic, once terminal */
	char *payload;			/* owned, once terminal */
	size_t payload_len;
	int cancel_refs;		/* cancels holding t and its work */
	bool run_done;			/* w.run has returned */
	bool tool_error;		/* its result has isError */
	bool thread_done;		/* w.free has run: may be freed */
	struct task_work w;
	struct tasks *ts;
	struct task *next;
};

struct tasks {
	pthread_mutex_t lock;
	pthread_cond_t changed;		/* a status, a thread or a cancel ended */
	struct task *head;		/* oldest first */
	size_t n;
	size_t running;			/* threads not done */
	size_t bytes;			/* payload bytes held */
	bool stopping;
};

static const char *const status_names[] = {
	[TASK_WORKING] = "working",
	[TASK_COMPLETED] = "completed",
	[TASK_FAILED] = "failed",
	[TASK_CANCELLED] = "cancelled",
};

const char *
task_status_name(enum task_status st)
{
	return status_names[st];
}

/* Copies msg, capped, with control characters (and DEL) as spaces: it is
 * the run's own output, shown to a person or a model. */
static void
copy_message(char dst[TASK_MESSAGE_MAX], const char *msg)
{
	size_t i;

	(void)snprintf(dst, TASK_MESSAGE_MAX, "%s", msg);
	utf8_trim(dst);
	for (i = 0; dst[i] != '\0'; i++)
		if ((unsigned char)dst[i] < 0x20 || dst[i] == 0x7f)
			dst[i] = ' ';
}

struct tasks *
tasks_new(void)
{
	struct tasks *ts = calloc(1, sizeof(*ts));

	if (ts == NULL)
		return NULL;
	(void)pthread_mutex_init(&ts->lock, NULL);
	(void)pthread_cond_init(&ts->changed, NULL);
	return ts;
}

static void
task_destroy(struct tasks *ts, struct task *t)
{
	ts->bytes -= t->payload_len;
	free(t->payload);
	free(t);
}

/* Removes ended tasks whose time is up (lock held). */
static void
sweep_locked(struct tasks *ts)
{
	struct task **pp = &ts->head, *t;

	while ((t = *pp) != NULL) {
		if (t->thread_done && t->status != TASK_WORKING &&
		    ts_us_since(&t->ended) >= t->ttl_ms * 1000) {
			*pp = t->next;
			ts->n--;
			task_destroy(ts, t);
		} else
			pp = &t->next;
	}
}

static struct task *
find_locked(struct tasks *ts, const char *owner, const char *id)
{
	struct task *t;

	for (t = ts->head; t != NULL; t = t->next)
		if (strcmp(t->id, id) == 0)
			/* another owner's looks exactly like none */
			return strcmp(t->owner, owner) == 0 ? t : NULL;
	return NULL;
}

static int
view_locked(const struct task *t, bool with_payload, struct task_view *v)
{
	memset(v, 0, sizeof(*v));
	memcpy(v->id, t->id, sizeof(v->id));
	v->status = t->status;
	memcpy(v->message, t->message, sizeof(v->message));
	memcpy(v->created, t->created, sizeof(v->created));
	memcpy(v->updated, t->updated, sizeof(v->updated));
	v->ttl_ms = t->ttl_ms;
	v->poll_ms = MCP_TASK_POLL_MS;
	v->tool_error = t->tool_error;
	if (!with_payload || t->payload == NULL)
		return 0;
	if ((v->payload = malloc(t->payload_len + 1)) == NULL)
		return -1;
	memcpy(v->payload, t->payload, t->payload_len + 1);
	v->payload_len = t->payload_len;
	return 0;
}

void
task_view_fini(struct task_view *v)
{
	free(v->payload);
	v->payload = NULL;
	v->payload_len = 0;
}

static void *
task_main(void *arg)
{
	struct task *t = arg;
	struct tasks *ts = t->ts;

	t->w.run(t->w.arg, t);
	(void)pthread_mutex_lock(&ts->lock);
	t->run_done = true;
	(void)pthread_cond_broadcast(&ts->changed);
	/* a cancel may be calling into the work: free it after */
	while (t->cancel_refs > 0)
		(void)pthread_cond_wait(&ts->changed, &ts->lock);
	(void)pthread_mutex_unlock(&ts->lock);
	t->w.free(t->w.arg);
	(void)pthread_mutex_lock(&ts->lock);
	t->thread_done = true;	/* t may be swept from here on */
	ts->running--;
	(void)pthread_cond_broadcast(&ts->changed);
	(void)pthread_mutex_unlock(&ts->lock);
	return NULL;
}

static size_t
count_of_locked(const struct tasks *ts, const char *owner)
{
	const struct task *t;
	size_t n = 0;

	for (t = ts->head; t != NULL; t = t->next)
		n += strcmp(t->owner, owner) == 0;
	return n;
}

static int
random_id(char id[TASK_ID_LEN + 1])
{
	unsigned char raw[TASK_ID_LEN / 2];
	size_t got = 0, i;
	ssize_t n;

	while (got < sizeof(raw)) {
		n = getrandom(raw + got, sizeof(raw) - got, 0);
		if (n < 0 && errno != EINTR)
			return -1;
		if (n > 0)
			got += (size_t)n;
	}
	for (i = 0; i < sizeof(raw); i++)
		(void)snprintf(id + 2 * i, 3, "%02x", raw[i]);
	return 0;
}

int
tasks_create(struct tasks *ts, const char *owner, uint64_t ttl_ms,
    const struct task_work *w, struct task_view *ret, char *err,
    size_t errlen)
{
	struct task *t, **pp;
	pthread_attr_t attr;
	bool refused = true;
	int rc;

	if ((t = calloc(1, sizeof(*t))) == NULL) {
		(void)snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (random_id(t->id) != 0) {
		(void)snprintf(err, errlen, "no random bytes for a task id");
		free(t);
		return -1;
	}
	(void)snprintf(t->owner, sizeof(t->owner), "%s", owner);
	t->status = TASK_WORKING;
	copy_message(t->message, "started");
	ts_now_iso(t->created);
	memcpy(t->updated, t->created, sizeof(t->updated));
	t->ttl_ms = ttl_ms;
	t->w = *w;
	t->ts = ts;

	(void)pthread_mutex_lock(&ts->lock);
	sweep_locked(ts);
	if (ts->stopping)
		(void)snprintf(err, errlen, "the server is stopping");
	else if (count_of_locked(ts, owner) >= MCP_TASKS_PER_OWNER)
		(void)snprintf(err, errlen, "this client holds %d tasks, its "
		    "most (MCP_TASKS_PER_OWNER); a task is held until its "
		    "result has been kept for its ttl after it ended, or it "
		    "is cancelled and expired", MCP_TASKS_PER_OWNER);
	else if (ts->n >= MCP_TASKS_MAX)
		(void)snprintf(err, errlen, "the server holds %d tasks, its "
		    "most (MCP_TASKS_MAX)", MCP_TASKS_MAX);
	else
		refused = false;
	if (refused) {
		(void)pthread_mutex_unlock(&ts->lock);
		free(t);
		return -1;
	}
	rc = pthread_attr_init(&attr);
	if (rc == 0) {
		(void)pthread_attr_setdetachstate(&attr,
		    PTHREAD_CREATE_DETACHED);
		(void)pthread_attr_setstacksize(&attr, MCP_WORKER_STACK);
		ts->running++;
		/* in the list before its thread can finish and sweep */
		for (pp = &ts->head; *pp != NULL; pp = &(*pp)->next)
			;
		*pp = t;
		ts->n++;
		(void)view_locked(t, false, ret);
		rc = pthread_create(&(pthread_t){ 0 }, &attr, task_main, t);
		(void)pthread_attr_destroy(&attr);
		if (rc != 0) {
			*pp = NULL;
			ts->n--;
			ts->running--;
		}
	}
	(void)pthread_mutex_unlock(&ts->lock);
	if (rc != 0) {
		(void)snprintf(err, errlen,
		    "no thread for the task: %s", strerror(rc));
		free(t);
		return -1;
	}
	return 0;
}

const char *
task_id(const struct task *t)
{
	return t->id;
}

void
task_set_message(struct task *t, const char *msg)
{
	struct tasks *ts = t->ts;

	(void)pthread_mutex_lock(&ts->lock);
	if (t->status == TASK_WORKING) {
		copy_message(t->message, msg);
		ts_now_iso(t->updated);
	}
	(void)pthread_mutex_unlock(&ts->lock);
}

/* The status becomes terminal (lock held). */
static void
end_locked(struct tasks *ts, struct task *t, enum task_status st,
    const char *message)
{
	t->status = st;
	if (message != NULL)
		copy_message(t->message, message);
	ts_now_iso(t->updated);
	(void)clock_gettime(CLOCK_MONOTONIC, &t->ended);
	(void)pthread_cond_broadcast(&ts->changed);
}

enum task_status
task_finish(struct task *t, char *payload, size_t len, bool failed,
    bool tool_error, const char *message)
{
	struct tasks *ts = t->ts;
	enum task_status st;
	char text[320];
	int n;

	(void)pthread_mutex_lock(&ts->lock);
	if (t->status != TASK_WORKING) {
		st = t->status;
		(void)pthread_mutex_unlock(&ts->lock);
		free(payload);
		return st;
	}
	if (payload != NULL && ts->bytes + len > MCP_TASKS_RESULT_BYTES) {
		free(payload);
		n = snprintf(text, sizeof(text), "{\"code\":-32603,\"message\":"
		    "\"Internal error: the task's result (%zu bytes) is more "
		    "than the server may still hold (MCP_TASKS_RESULT_BYTES, "
		    "%u MiB, for all tasks); the files it made are in the "
		    "workspace\"}", len, MCP_TASKS_RESULT_BYTES >> 20);
		payload = n > 0 ? strdup(text) : NULL;
		len = payload != NULL ? strlen(payload) : 0;
		failed = true;
		message = "its result was too large to hold";
	}
	t->payload = payload;
	t->payload_len = payload != NULL ? len : 0;
	ts->bytes += t->payload_len;
	st = failed ? TASK_FAILED : TASK_COMPLETED;
	t->tool_error = !failed && tool_error;
	end_locked(ts, t, st, message);
	(void)pthread_mutex_unlock(&ts->lock);
	return st;
}

enum tasks_rc
tasks_get(struct tasks *ts, const char *owner, const char *id,
    bool with_payload, struct task_view *v)
{
	struct task *t;
	enum tasks_rc rc = TASKS_UNKNOWN;

	(void)pthread_mutex_lock(&ts->lock);
	sweep_locked(ts);
	if ((t = find_locked(ts, owner, id)) != NULL) {
		rc = TASKS_OK;
		if (view_locked(t, with_payload, v) != 0)
			rc = TASKS_UNKNOWN;	/* no memory: as if gone */
	}
	(void)pthread_mutex_unlock(&ts->lock);
	return rc;
}

enum tasks_rc
tasks_wait(struct tasks *ts, const char *owner, const char *id,
    bool (*stop)(void *arg), void *stop_arg, struct task_view *v)
{
	struct task *t;
	struct timespec until;
	enum tasks_rc rc;

	(void)pthread_mutex_lock(&ts->lock);
	for (;;) {
		sweep_locked(ts);
		if ((t = find_locked(ts, owner, id)) == NULL) {
			rc = TASKS_UNKNOWN;
			break;
		}
		if (t->status != TASK_WORKING) {
			rc = view_locked(t, true, v) == 0 ? TASKS_OK :
			    TASKS_UNKNOWN;
			break;
		}
		if (ts->stopping) {
			rc = TASKS_STOPPED;
			break;
		}
		(void)clock_gettime(CLOCK_REALTIME, &until);
		ts_add_ms(&until, MCP_TASK_WAIT_POLL_MS);
		(void)pthread_cond_timedwait(&ts->changed, &ts->lock, &until);
		if (stop != NULL) {
			(void)pthread_mutex_unlock(&ts->lock);
			if (stop(stop_arg))
				return TASKS_STOPPED;
			(void)pthread_mutex_lock(&ts->lock);
		}
	}
	(void)pthread_mutex_unlock(&ts->lock);
	return rc;
}

/* Marks t cancelled and calls into its work (lock held on entry and on
 * return; dropped around the call and the wait, which t's thread waits
 * for); then waits MCP_TASK_CANCEL_MS at most for its run to end, so that
 * the answer comes when nothing of the run is left. */
static void
cancel_locked(struct tasks *ts, struct task *t, const char *message)
{
	struct timespec until = ts_after_ms(CLOCK_REALTIME,
	    MCP_TASK_CANCEL_MS);

	end_locked(ts, t, TASK_CANCELLED, message);
	t->cancel_refs++;
	(void)pthread_mutex_unlock(&ts->lock);
	t->w.cancel(t->w.arg);
	(void)pthread_mutex_lock(&ts->lock);
	while (!t->run_done &&
	    pthread_cond_timedwait(&ts->changed, &ts->lock, &until) !=
	    ETIMEDOUT)
		;
	t->cancel_refs--;
	(void)pthread_cond_broadcast(&ts->changed);
}

enum tasks_rc
tasks_cancel(struct tasks *ts, const char *owner, const char *id,
    struct task_view *v)
{
	struct task *t;
	enum tasks_rc rc = TASKS_UNKNOWN;

	(void)pthread_mutex_lock(&ts->lock);
	sweep_locked(ts);
	if ((t = find_locked(ts, owner, id)) != NULL) {
		rc = t->status == TASK_WORKING ? TASKS_OK : TASKS_TERMINAL;
		if (rc == TASKS_OK)
			cancel_locked(ts, t, "cancelled by the client");
		/* t is not swept while its thread runs; after, it may be,
		 * but the lock was held since */
		if (view_locked(t, false, v) != 0)
			rc = TASKS_UNKNOWN;
	}
	(void)pthread_mutex_unlock(&ts->lock);
	return rc;
}

enum tasks_rc
tasks_list(struct tasks *ts, const char *owner, const char *cursor,
    struct task_view *out, size_t max, size_t *ret_n, char *next)
{
	struct task *t;
	size_t n = 0;

	next[0] = '\0';
	(void)pthread_mutex_lock(&ts->lock);
	sweep_locked(ts);
	t = ts->head;
	if (cursor != NULL) {
		t = find_locked(ts, owner, cursor);
		if (t == NULL) {
			(void)pthread_mutex_unlock(&ts->lock);
			*ret_n = 0;
			return TASKS_UNKNOWN;
		}
		t = t->next;
	}
	for (; t != NULL; t = t->next) {
		if (strcmp(t->owner, owner) != 0)
			continue;
		if (n == max) {
			memcpy(next, out[n - 1].id, TASK_ID_LEN + 1);
			break;
		}
		if (view_locked(t, false, &out[n]) == 0)
			n++;
	}
	(void)pthread_mutex_unlock(&ts->lock);
	*ret_n = n;
	return TASKS_OK;
}

void
tasks_shutdown(struct tasks *ts)
{
	struct task *t, *mine[MCP_TASKS_MAX];
	size_t n = 0, i;

	if (ts == NULL)
		return;
	(void)pthread_mutex_lock(&ts->lock);
	ts->stopping = true;
	for (t = ts->head; t != NULL; t = t->next) {
		if (t->status != TASK_WORKING || n == MCP_TASKS_MAX)
			continue;
		end_locked(ts, t, TASK_CANCELLED, "the server is stopping");
		t->cancel_refs++;
		mine[n++] = t;
	}
	(void)pthread_mutex_unlock(&ts->lock);
	/* their threads wait for cancel_refs: none of them is freed */
	for (i = 0; i < n; i++)
		mine[i]->w.cancel(mine[i]->w.arg);
	(void)pthread_mutex_lock(&ts->lock);
	for (i = 0; i < n; i++)
		mine[i]->cancel_refs--;
	(void)pthread_cond_broadcast(&ts->changed);
	while (ts->running > 0)
		(void)pthread_cond_wait(&ts->changed, &ts->lock);
	(void)pthread_mutex_unlock(&ts->lock);
}

void
tasks_free(struct tasks *ts)
{
	struct task *t;

	if (ts == NULL)
		return;
	tasks_shutdown(ts);
	while ((t = ts->head) != NULL) {
		ts->head = t->next;
		task_destroy(ts, t);
	}
	(void)pthread_cond_destroy(&ts->changed);
	(void)pthread_mutex_destroy(&ts->lock);
	free(ts);
}
