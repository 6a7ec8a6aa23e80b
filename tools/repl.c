/*
 * repl: run_code's sessions (repl.h). A session is a started sandbox
 * (sb_start, then sb_converse) whose program is one of the drivers below:
 * a fixed program per language that reads one call at a time from its
 * stdin, runs it in the interpreter's lasting state, and frames what the
 * call printed between two copies of the call's boundary, a string the
 * server draws at random for that call. Output before the first copy
 * (left over from an earlier call's background work) and after the
 * second is dropped, so no call's output is taken for another's. The
 * user's code reads /dev/null as its stdin: the drivers keep the real
 * one for themselves (sh closes it around the user's code; python and
 * node hold it on a descriptor of their own). What this framing does not
 * stand against is code that sets out to break it: it runs in the
 * driver's own process and can reach its descriptors and variables, and
 * so the next calls' input of the same session, the owner's own; no
 * other owner's, and no other sandbox's.
 *
 * Locking: t->lock guards the table, the ended records and every
 * session's queue, refs and dead/why; a session's sandbox is touched only
 * by the call at the head of its queue, or by whoever took the session
 * out of the table with no call left on it.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "egress.h"
#include "policy.h"
#include "render.h"
#include "repl.h"
#include "repl_driver.h"
#include "repl_impl.h"
#include "sandbox.h"
#include "warm.h"

/* How often a call queued on a busy session looks at its cancel. */
#define REPL_QUEUE_POLL_MS	100

uint64_t
repl_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void
repl_say_ms(uint64_t ms, char *buf, size_t len)
{
	if (ms >= 60000 && ms % 60000 == 0)
		(void)snprintf(buf, len, "%llu min",
		    (unsigned long long)(ms / 60000));
	else
		(void)snprintf(buf, len, "%llu s",
		    (unsigned long long)((ms + 999) / 1000));
}

/* ---- the table (t->lock held) ---- */

struct repl *
repl_find_locked(struct repls *t, const char *owner, const char *name)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (strcmp(t->open[i]->owner, owner) == 0 &&
		    strcmp(t->open[i]->name, name) == 0)
			return t->open[i];
	return NULL;
}

struct repl_ended *
repl_find_ended_locked(struct repls *t, const char *owner, const char *name)
{
	size_t i;

	for (i = 0; i < REPL_ENDED_KEPT; i++)
		if (t->ended[i].used && strcmp(t->ended[i].owner, owner) == 0 &&
		    strcmp(t->ended[i].name, name) == 0)
			return &t->ended[i];
	return NULL;
}

static size_t
count_locked(struct repls *t, const char *owner)
{
	size_t i, n = 0;

	for (i = 0; i < t->n; i++)
		n += strcmp(t->open[i]->owner, owner) == 0;
	return n;
}

/* r leaves the table, remembered as ended with its why. */
static void
unlink_locked(struct repls *t, struct repl *r)
{
	struct repl_ended *e;
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->open[i] == r) {
			t->open[i] = t->open[--t->n];
			break;
		}
	r->in_table = false;
	if ((e = repl_find_ended_locked(t, r->owner, r->name)) == NULL) {
		e = &t->ended[t->next_ended];
		t->next_ended = (t->next_ended + 1) % REPL_ENDED_KEPT;
	}
	(void)snprintf(e->owner, sizeof(e->owner), "%s", r->owner);
	(void)snprintf(e->name, sizeof(e->name), "%s", r->name);
	(void)snprintf(e->why, sizeof(e->why), "%s", r->why);
	e->lang = r->lang;
	e->used = true;
}

void
repl_end_locked(struct repls *t, struct repl *r, const char *why)
{
	if (!r->dead)
		(void)snprintf(r->why, sizeof(r->why), "%s", why);
	r->dead = true;
	if (r->in_table)
		unlink_locked(t, r);
}

void
repl_free(struct repl *r)
{
	sb_discard(r->sb);
	free(r->prefix);
	(void)pthread_cond_destroy(&r->moved);
	free(r);
}

static int start(struct repl *r, struct sb_ctx *sb,
    const struct sb_request *req, const struct policy *p,
    struct sb_result *res);

/* ---- the table's thread: starts, idle and age ends ---- */

static void *
reaper_main(void *arg)
{
	struct repls *t = arg;
	const struct policy_limits *l = &t->p->limits;
	struct repl *gone[REPL_MAX];
	struct timespec until;
	uint64_t now, next, at;
	size_t i, ngone;
	char say[32], why[160];

	(void)pthread_mutex_lock(&t->lock);
	for (;;) {
		/* a start asked for is done even when stopping: its caller
		 * waits for it */
		if (t->job != NULL && !t->job->done) {
			struct start_job *j = t->job;

			(void)pthread_mutex_unlock(&t->lock);
			j->rc = start(j->r, j->sb, j->req, t->p, j->res);
			(void)pthread_mutex_lock(&t->lock);
			j->done = true;
			t->job = NULL;
			(void)pthread_cond_broadcast(&t->job_done);
			continue;
		}
		if (t->stop)
			break;
		now = repl_now_ms();
		next = now + 60000;
		ngone = 0;
		for (i = 0; i < t->n; i++) {
			struct repl *r = t->open[i];

			if (r->refs > 0)
				continue;
			why[0] = '\0';
			if (now - r->last_ms >= l->session_idle_ms) {
				repl_say_ms(l->session_idle_ms, say, sizeof(say));
				(void)snprintf(why, sizeof(why),
				    "it was idle for %s", say);
			} else if (now - r->born_ms >= l->session_max_age_ms) {
				repl_say_ms(l->session_max_age_ms, say, sizeof(say));
				(void)snprintf(why, sizeof(why),
				    "it reached the maximum age of %s", say);
			}
			if (why[0] != '\0') {
				repl_end_locked(t, r, why);
				gone[ngone++] = r;
				i--;	/* unlink moved the last one here */
				continue;
			}
			at = r->last_ms + l->session_idle_ms;
			if (r->born_ms + l->session_max_age_ms < at)
				at = r->born_ms + l->session_max_age_ms;
			if (at < next)
				next = at;
		}
		if (ngone > 0) {
			(void)pthread_mutex_unlock(&t->lock);
			for (i = 0; i < ngone; i++)
				repl_free(gone[i]);
			(void)pthread_mutex_lock(&t->lock);
			continue;
		}
		(void)clock_gettime(CLOCK_MONOTONIC, &until);
		next -= now;
		until.tv_sec += (time_t)(next / 1000);
		until.tv_nsec += (long)(next % 1000) * 1000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		(void)pthread_cond_timedwait(&t->wake, &t->lock, &until);
	}
	(void)pthread_mutex_unlock(&t->lock);
	return NULL;
}

struct repls *
repls_new(const struct policy *p)
{
	struct repls *t;
	pthread_condattr_t ca;

	if ((t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	t->p = p;
	(void)pthread_mutex_init(&t->lock, NULL);
	(void)pthread_condattr_init(&ca);
	(void)pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	(void)pthread_cond_init(&t->wake, &ca);
	(void)pthread_condattr_destroy(&ca);
	(void)pthread_cond_init(&t->job_done, NULL);
	if (pthread_create(&t->reaper, NULL, reaper_main, t) != 0) {
		repls_free(t);
		return NULL;
	}
	t->reaper_on = true;
	return t;
}

void
repls_free(struct repls *t)
{
	size_t i;

	if (t == NULL)
		return;
	(void)pthread_mutex_lock(&t->lock);
	t->stop = true;
	(void)pthread_cond_signal(&t->wake);
	(void)pthread_mutex_unlock(&t->lock);
	if (t->reaper_on)
		(void)pthread_join(t->reaper, NULL);
	/* no call runs any more (the transports are done) */
	for (i = 0; i < t->n; i++)
		repl_free(t->open[i]);
	(void)pthread_cond_destroy(&t->wake);
	(void)pthread_cond_destroy(&t->job_done);
	(void)pthread_mutex_destroy(&t->lock);
	free(t);
}

void
repls_end_owner(struct repls *t, const char *owner, const char *why)
{
	struct repl *gone[REPL_MAX];
	size_t i, n = 0;

	if (t == NULL)
		return;
	(void)pthread_mutex_lock(&t->lock);
	for (i = 0; i < t->n; i++) {
		struct repl *r = t->open[i];

		if (owner != NULL && strcmp(r->owner, owner) != 0)
			continue;
		repl_end_locked(t, r, why);
		i--;	/* unlink moved the last one here */
		if (r->refs == 0)
			gone[n++] = r;
	}
	(void)pthread_mutex_unlock(&t->lock);
	for (i = 0; i < n; i++)
		repl_free(gone[i]);
}

/* ---- a call's turn ---- */

/*
 * The server holds its most sessions: room for owner's next one, if
 * another owner holds more than one more than owner does, from that
 * owner's least recently used idle session, ended (returned for the
 * caller to free once the lock is let go); NULL: none to take. So no
 * client keeps more than its share from another that asks for one.
 */
static struct repl *
make_room_locked(struct repls *t, const char *owner)
{
	size_t i, mine = count_locked(t, owner), most = 0, n;
	struct repl *victim = NULL, *r;
	const char *rich = NULL;

	for (i = 0; i < t->n; i++)
		if ((n = count_locked(t, t->open[i]->owner)) > most) {
			most = n;
			rich = t->open[i]->owner;
		}
	if (rich == NULL || most <= mine + 1)
		return NULL;
	for (i = 0; i < t->n; i++) {
		r = t->open[i];
		if (strcmp(r->owner, rich) == 0 && r->refs == 0 &&
		    (victim == NULL || r->last_ms < victim->last_ms))
			victim = r;
	}
	if (victim != NULL)
		repl_end_locked(t, victim, "the server needed room for another "
		    "client's session (max_sessions), and this client held "
		    "more than its share");
	return victim;
}

/* A new session in the table for q, or a refusal (t->lock held). */
static struct json_object *
open_locked(struct repls *t, const struct tool_call *call,
    struct repl_call *q, bool *nomem, struct repl **gone)
{
	const struct policy_limits *l = &t->p->limits;
	struct repl_ended *e = repl_find_ended_locked(t, call->owner, q->name);
	struct repl *r;

	if (e != NULL && !q->restart)
		return REFUSE(call, "session ended", "The session '%s' ended "
		    "(%s), so what it held is gone. Call again with \"restart\": "
		    "true to start it afresh, or use another name.", q->name,
		    e->why);
	if (l->max_sessions == 0)
		return REFUSE(call, "sessions off", "This server takes no "
		    "sessions (max_sessions is 0): call run_code without "
		    "session.");
	if (count_locked(t, call->owner) >= l->sessions_per_client)
		return REFUSE(call, "too many sessions", "%u session%s open for "
		    "this client, its most (sessions_per_client); end one with "
		    "end_session (list_sessions lists them).",
		    l->sessions_per_client, l->sessions_per_client == 1 ?
		    " is" : "s are");
	if ((t->n >= l->max_sessions || t->n >= REPL_MAX) &&
	    (*gone = make_room_locked(t, call->owner)) == NULL)
		return REFUSE(call, "too many sessions", "The server holds its "
		    "most sessions (max_sessions: %zu); end one of this "
		    "client's with end_session, or try again later.",
		    (size_t)(l->max_sessions < REPL_MAX ? l->max_sessions :
		    REPL_MAX));
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		*nomem = true;
		return NULL;
	}
	(void)snprintf(r->owner, sizeof(r->owner), "%s", call->owner);
	(void)snprintf(r->name, sizeof(r->name), "%s", q->name);
	r->t = t;
	r->lfd = -1;
	r->lang = q->lang;
	r->born_ms = r->last_ms = repl_now_ms();
	(void)pthread_cond_init(&r->moved, NULL);
	r->in_table = true;
	t->open[t->n++] = r;
	if (e != NULL)
		e->used = false;
	q->started = true;
	return NULL;
}

/*
 * w leaves r's queue (t->lock held), and the next call gets its turn.
 * true: r ended and nothing holds it any more, the caller frees it.
 */
bool
repl_dequeue_locked(struct repls *t, struct repl *r, struct repl_waiter *w)
{
	struct repl_waiter **pp;

	for (pp = &r->head; *pp != NULL; pp = &(*pp)->next)
		if (*pp == w) {
			*pp = w->next;
			break;
		}
	r->tail = r->head;
	while (r->tail != NULL && r->tail->next != NULL)
		r->tail = r->tail->next;
	r->refs--;
	(void)pthread_cond_broadcast(&r->moved);
	(void)pthread_cond_signal(&t->wake);
	return r->dead && r->refs == 0;
}

/*
 * Takes a place at the end of r's queue and waits until it heads it:
 * NULL, or the refusal of a call cancelled meanwhile (out of the queue
 * then; *gone: r is the caller's to free).
 */
struct json_object *
repl_queue_on(struct repls *t, const struct tool_call *call, struct repl *r,
    struct repl_waiter *w, bool *gone)
{
	struct timespec until;

	w->next = NULL;
	if (r->tail != NULL)
		r->tail->next = w;
	else
		r->head = w;
	r->tail = w;
	r->refs++;
	while (r->head != w) {
		if (call->cancel != NULL && sb_cancel_fired(call->cancel)) {
			*gone = repl_dequeue_locked(t, r, w);
			return REFUSE(call, "cancelled while queued", "The "
			    "call was cancelled while it waited for its "
			    "session.");
		}
		(void)clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += REPL_QUEUE_POLL_MS * 1000000L;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		(void)pthread_cond_timedwait(&r->moved, &t->lock, &until);
	}
	return NULL;
}

struct json_object *
repl_enter(const struct tool_call *call, struct repl_call *q, bool *nomem)
{
	struct repls *t = call->env->repls;
	struct json_object *no = NULL;
	struct repl *r, *gone1 = NULL, *gone2 = NULL, *gone3 = NULL;
	struct repl_waiter *w;
	bool gone = false;

	*nomem = false;
	q->r = NULL;
	q->w = NULL;
	if (t == NULL)
		return REFUSE(call, "sessions off", "This server takes no "
		    "sessions: call run_code without session.");
	if ((w = calloc(1, sizeof(*w))) == NULL) {
		*nomem = true;
		return NULL;
	}
	(void)pthread_mutex_lock(&t->lock);
	r = repl_find_locked(t, call->owner, q->name);
	if (r != NULL && q->restart) {
		/* after the calls queued before ours, it ends */
		if ((no = repl_queue_on(t, call, r, w, &gone)) != NULL) {
			gone1 = gone ? r : NULL;
			goto out;
		}
		repl_end_locked(t, r, "a call restarted it (restart: true)");
		gone1 = repl_dequeue_locked(t, r, w) ? r : NULL;
		/* one another call opened meanwhile is as fresh: ours too */
		r = repl_find_locked(t, call->owner, q->name);
	}
	if (r != NULL && r->lang != q->lang) {
		no = REFUSE(call, "session of another language", "The session "
		    "'%s' is a %s session, and this call is %s. Call again with "
		    "that language, with restart: true to start it afresh in "
		    "yours, or with another session name.", q->name,
		    policy_lang_name(r->lang), policy_lang_name(q->lang));
		goto out;
	}
	if (r == NULL) {
		if ((no = open_locked(t, call, q, nomem, &gone3)) != NULL ||
		    *nomem)
			goto out;
		r = t->open[t->n - 1];
	}
	if ((no = repl_queue_on(t, call, r, w, &gone)) != NULL) {
		gone2 = gone ? r : NULL;
		goto out;
	}
	if (r->dead) {
		no = REFUSE(call, "session ended", "The session '%s' ended (%s) "
		    "while this call waited. Call again with \"restart\": true "
		    "to start it afresh.", q->name, r->why);
		gone2 = repl_dequeue_locked(t, r, w) ? r : NULL;
		goto out;
	}
	q->r = r;
	q->w = w;
	w = NULL;
 out:
	(void)pthread_mutex_unlock(&t->lock);
	free(w);
	if (gone1 != NULL)
		repl_free(gone1);
	if (gone2 != NULL)
		repl_free(gone2);
	if (gone3 != NULL)
		repl_free(gone3);
	return no;
}

void
repl_leave(struct repl_call *q)
{
	struct repl *r = q->r;
	struct repls *t;
	uint64_t now = repl_now_ms();
	bool gone;
	char say[32], why[96];

	if (r == NULL)
		return;
	t = r->t;
	(void)pthread_mutex_lock(&t->lock);
	r->last_ms = now;
	if (!r->dead && now - r->born_ms >= t->p->limits.session_max_age_ms) {
		repl_say_ms(t->p->limits.session_max_age_ms, say, sizeof(say));
		(void)snprintf(why, sizeof(why), "it reached the maximum age "
		    "of %s", say);
		repl_end_locked(t, r, why);
		if (q->ended[0] == '\0')
			(void)snprintf(q->ended, sizeof(q->ended), "%s", why);
	}
	gone = repl_dequeue_locked(t, r, q->w);
	(void)pthread_mutex_unlock(&t->lock);
	free(q->w);
	q->w = NULL;
	q->r = NULL;
	if (gone)
		repl_free(r);
}

/* ---- starting and running ---- */

/*
 * The driver's input for one call: its boundary, then the code; the
 * first call's behind the prefix, if any (which it takes).
 */
static char *
turn_input(struct repl *r, const struct repl_frame *f, const char *code,
    size_t *ret_len)
{
	size_t len = strlen(code), cap = r->prefix_len + len +
	    2 * REPL_BOUNDARY_LEN + 32;
	char *in;
	int n;

	if ((in = malloc(cap)) == NULL)
		return NULL;
	if (r->prefix_len > 0)
		memcpy(in, r->prefix, r->prefix_len);
	if (r->lang == POLICY_LANG_SH)
		n = snprintf(in + r->prefix_len, cap - r->prefix_len,
		    "%s\n%s\n%s\n", f->b, code, f->b);
	else
		n = snprintf(in + r->prefix_len, cap - r->prefix_len,
		    "%s %zu\n%s", f->b, len, code);
	*ret_len = r->prefix_len + (size_t)n;
	free(r->prefix);
	r->prefix = NULL;
	r->prefix_len = 0;
	return in;
}

/*
 * The sandbox's proxy socket (sb_request.net_listener): kept at the start,
 * served by the call of the turn (repl_turn) and by nothing between two.
 */
static int
net_event(void *arg, int lfd, enum sb_net_event ev)
{
	struct repl *r = arg;

	switch (ev) {
	case SB_NET_LISTENING:
		r->lfd = lfd;
		return 0;
	case SB_NET_READY:
		return r->cur_ec != NULL ? egress_call_accept(r->cur_ec) : 0;
	case SB_NET_CLOSING:
		r->lfd = -1;
		return 0;
	}
	return -EINVAL;
}

const char *
repl_net_refusal(const struct repl_call *q, bool net)
{
	if (q->r->sb == NULL || q->r->net == net)
		return NULL;
	return q->r->net ? "the session was started with network, and keeps "
	    "it: call again without network: false, or with another session" :
	    "the session was started without network, and keeps to that: "
	    "call again with network: false, or start another session for a "
	    "call with network";
}

/* A session's request: req's sandbox, with its interpreter and driver. */
static void
driver_request(struct repl *r, const struct sb_request *req,
    const struct policy *p, const char *argv[6], struct sb_request *s)
{
	*s = *req;
	if (s->network == SB_NET_PROXY) {
		s->net_listener = net_event;
		s->net_arg = r;
	}
	argv[0] = policy_lang_name(r->lang);
	switch (r->lang) {
	case POLICY_LANG_PYTHON3:
		argv[1] = "-I";
		argv[2] = "-c";
		argv[3] = repl_py_driver;
		argv[4] = NULL;
		break;
	case POLICY_LANG_NODE:
		/* node cannot move its stdin aside itself: sh does */
		argv[0] = "sh";
		argv[1] = "-c";
		argv[2] = repl_node_exec;
		argv[3] = p->languages[r->lang].path;
		argv[4] = repl_node_driver;
		argv[5] = NULL;
		break;
	default:
		argv[1] = "-c";
		argv[2] = repl_sh_driver;
		argv[3] = NULL;
		break;
	}
	s->program = r->lang == POLICY_LANG_NODE ? p->sh_path :
	    p->languages[r->lang].path;
	s->argv = argv;
	s->stdin_data = NULL;
	s->stdin_len = 0;
	s->deferred = false;
	s->limits.start_low = false;
	s->limits.cpu_s = REPL_CPU_S(p);
}

/*
 * A sandbox built ahead for the call's shape, if one waits (pool.h): the
 * pool's thread cloned it, and outlives every session. 0, or -1: none.
 */
static int
take_pooled(struct repl *r, const struct tool_prestart *ps,
    const struct prog_binds *binds, const struct sb_request *req,
    const struct policy *p, struct sb_result *res)
{
	struct tool_shape sh = { TOOL_SHAPE_PYTHON, binds, req->workspace_host };
	const char *argv[6];
	struct sb_request s;

	/* none is built with network */
	if (ps->take == NULL || req->network != SB_NET_NONE)
		return -1;
	/* a python that has started: the driver is its call's code */
	if (r->lang == POLICY_LANG_PYTHON3 && p->limits.warm_python > 0 &&
	    (r->sb = ps->take(ps->arg, &sh)) != NULL) {
		/* the session's CPU limit, not one call's (sb_converse
		 * would lower it to req's) */
		s = *req;
		s.limits.cpu_s = REPL_CPU_S(p);
		if ((r->prefix = warm_stdin(repl_py_driver, NULL, 0, NULL, 0,
		    &r->prefix_len)) != NULL && sb_converse(r->sb, &s,
		    res) == 0)
			return 0;
		free(r->prefix);
		r->prefix = NULL;
		sb_discard(r->sb);
		r->sb = NULL;
		memset(res, 0, sizeof(*res));
	}
	sh.kind = TOOL_SHAPE_EXEC;
	if ((r->sb = ps->take(ps->arg, &sh)) == NULL)
		return -1;
	driver_request(r, req, p, argv, &s);
	if (sb_converse(r->sb, &s, res) == 0)
		return 0;
	sb_discard(r->sb);
	r->sb = NULL;
	memset(res, 0, sizeof(*res));
	return -1;
}

/* A sandbox of the session's own (on the table's thread). */
static int
start(struct repl *r, struct sb_ctx *sb, const struct sb_request *req,
    const struct policy *p, struct sb_result *res)
{
	const char *argv[6];
	struct sb_request s;
	int rc;

	driver_request(r, req, p, argv, &s);
	r->net = s.network == SB_NET_PROXY;
	if ((rc = sb_start(sb, &s, &r->sb, res)) < 0) {
		r->sb = NULL;
		return rc;
	}
	if ((rc = sb_converse(r->sb, &s, res)) < 0) {
		sb_discard(r->sb);
		r->sb = NULL;
	}
	return rc;
}

/* start() on the table's thread (struct start_job says why). */
static int
start_there(struct repl *r, struct sb_ctx *sb, const struct sb_request *req,
    struct sb_result *res)
{
	struct repls *t = r->t;
	struct start_job j = { r, sb, req, res, 0, false };

	(void)pthread_mutex_lock(&t->lock);
	while (t->job != NULL)
		(void)pthread_cond_wait(&t->job_done, &t->lock);
	if (t->stop) {
		(void)pthread_mutex_unlock(&t->lock);
		(void)snprintf(res->message, sizeof(res->message), "the server "
		    "is stopping");
		res->failed_stage = SB_STAGE_RESOURCES;
		res->err = ESHUTDOWN;
		return -ESHUTDOWN;
	}
	t->job = &j;
	(void)pthread_cond_signal(&t->wake);
	while (!j.done)
		(void)pthread_cond_wait(&t->job_done, &t->lock);
	(void)pthread_mutex_unlock(&t->lock);
	return j.rc;
}

/* How a session's run ended, for the next call and this one's result. */
static void
ended_why(const struct sb_result *res, char *why, size_t len)
{
	if (res->oom)
		(void)snprintf(why, len, "it ran out of memory at %llu MiB",
		    (unsigned long long)(res->memory_limit_bytes >> 20));
	else if (res->interrupted && res->signal == SIGKILL && !res->exited)
		(void)snprintf(why, len, "it did not come back within %u ms "
		    "of the interrupt and was killed", REPL_GRACE_MS);
	else if (res->exited)
		(void)snprintf(why, len, "its interpreter exited with status %d",
		    res->exit_code);
	else
		(void)snprintf(why, len, "its interpreter was killed by signal "
		    "%d", res->signal);
}

int
repl_turn(struct repl_call *q, struct sb_ctx *sb,
    const struct tool_prestart *ps, const struct prog_binds *binds,
    const struct sb_request *req, struct egress_call *ec,
    struct sb_cancel *cancel, struct sb_result *res)
{
	struct repl *r = q->r;
	const struct policy *p = r->t->p;
	struct sb_turn turn;
	struct repl_frame f;
	char *in = NULL;
	size_t in_len;
	long st;
	int rc;

	memset(res, 0, sizeof(*res));
	/* one built ahead is the pool thread's; else ours builds one */
	if (r->sb == NULL && take_pooled(r, ps, binds, req, p, res) < 0 &&
	    (rc = start_there(r, sb, req, res)) < 0) {
		(void)snprintf(q->ended, sizeof(q->ended), "its sandbox could "
		    "not start");
		goto dead;
	}
	if ((rc = repl_frame_init(&f, q->code, r->calls == 0)) < 0 ||
	    (in = turn_input(r, &f, q->code, &in_len)) == NULL) {
		repl_frame_fini(&f);
		rc = rc < 0 ? rc : -ENOMEM;
		memset(res, 0, sizeof(*res));
		(void)snprintf(res->message, sizeof(res->message), "%s",
		    rc == -ENOMEM ? "no memory for the call" :
		    "no random bytes for the call's boundary (getrandom)");
		res->failed_stage = SB_STAGE_RESOURCES;
		res->err = -rc;
		return rc;
	}
	memset(&turn, 0, sizeof(turn));
	turn.in = in;
	turn.in_len = in_len;
	turn.wall_ms = req->limits.wall_ms;
	turn.grace_ms = REPL_GRACE_MS;
	turn.sink = repl_frame_sink;
	turn.sink_arg = &f;
	turn.progress = req->progress;
	turn.progress_arg = req->progress_arg;
	turn.progress_ms = req->progress_ms;
	/* this call's proxy serves the session's socket, for the call */
	if (r->net && ec != NULL && r->lfd >= 0 &&
	    (rc = egress_call_start(ec, r->lfd)) < 0) {
		free(in);
		repl_frame_fini(&f);
		memset(res, 0, sizeof(*res));
		(void)snprintf(res->message, sizeof(res->message), "the "
		    "network proxy could not start (%s)", strerror(-rc));
		res->failed_stage = SB_STAGE_NETNS;
		res->err = -rc;
		return rc;
	}
	r->cur_ec = ec;
	rc = sb_turn(r->sb, &turn, cancel, res);
	r->cur_ec = NULL;
	free(in);
	repl_frame_fini(&f);
	(void)pthread_mutex_lock(&r->t->lock);
	r->calls++;
	(void)pthread_mutex_unlock(&r->t->lock);
	if (rc == 0) {
		f.status[f.status_len] = '\0';
		st = strtol(f.status, NULL, 10);
		res->exited = true;
		res->exit_code = (int)st;
		res->timed_out = res->interrupted && !res->cancelled;
		q->memory_bytes = sb_started_memory(r->sb);
	} else if (rc == 1) {
		ended_why(res, q->ended, sizeof(q->ended));
		rc = 0;
		goto dead;
	} else {
		(void)snprintf(q->ended, sizeof(q->ended), "its sandbox failed "
		    "(%.160s)", res->message);
		goto dead;
	}
	q->calls = r->calls;
	q->age_ms = repl_now_ms() - r->born_ms;
	q->idle_ms = p->limits.session_idle_ms;
	return 0;
 dead:
	sb_discard(r->sb);
	r->sb = NULL;
	q->calls = r->calls;
	q->age_ms = repl_now_ms() - r->born_ms;
	(void)pthread_mutex_lock(&r->t->lock);
	repl_end_locked(r->t, r, q->ended);
	(void)pthread_mutex_unlock(&r->t->lock);
	return rc;
}

