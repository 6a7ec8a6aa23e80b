/*
 * The table of handshake-era HTTP sessions. Ids come from the kernel's
 * CSPRNG; each session is bound to the digest of the token that created it
 * (a session id is never authentication) and owns a private workspace.
 * Idle sessions expire; the last reference removes the workspace, after
 * every call of the session has ended.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "http_internal.h"
#include "log.h"
#include "timespec.h"

/* Constant-time equality of two digests. */
static bool
same_principal(const uint8_t a[SHA256_LEN], const uint8_t b[SHA256_LEN])
{
	uint8_t d = 0;
	size_t i;

	for (i = 0; i < SHA256_LEN; i++)
		d |= a[i] ^ b[i];
	return d == 0;
}

static int
new_id(char out[2 * MCP_HTTP_SESSION_ID_BYTES + 1])
{
	static const char hex[] = "0123456789abcdef";
	uint8_t raw[MCP_HTTP_SESSION_ID_BYTES];
	size_t i, got = 0;
	ssize_t n;

	while (got < sizeof(raw)) {
		n = getrandom(raw + got, sizeof(raw) - got, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		got += (size_t)n;
	}
	for (i = 0; i < sizeof(raw); i++) {
		out[2 * i] = hex[raw[i] >> 4];
		out[2 * i + 1] = hex[raw[i] & 0xf];
	}
	out[2 * sizeof(raw)] = '\0';
	return 0;
}

/* Last reference gone: nothing else can reach s. */
static void
session_destroy(struct http_sessions *t, struct http_session *s)
{
	session_cancel_all(&s->sess);
	session_wait_idle(&s->sess);
	if (t->srv != NULL)
		dispatch_session_gone(t->srv, &s->sess);
	session_fini(&s->sess);
	session_ws_free(s->ws);
	free(s);
}

/* Unlinks s (table lock held); the table's ref goes to the caller. */
static void
unlink_locked(struct http_sessions *t, struct http_session *s)
{
	struct http_session **pp;

	for (pp = &t->head; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == s) {
			*pp = s->next;
			t->n--;
			s->dead = true;
			s->next = NULL;
			return;
		}
	}
}

/* Drops one ref; destroys at zero (outside the lock). */
static void
unref(struct http_sessions *t, struct http_session *s)
{
	bool last;

	(void)pthread_mutex_lock(&t->lock);
	last = --s->refs == 0;
	(void)pthread_mutex_unlock(&t->lock);
	if (last)
		session_destroy(t, s);
}

/* A task of s began (+1) or ended (-1): a ref of its own. */
static void
task_hold(void *arg, int delta)
{
	struct http_session *s = arg;

	if (delta < 0) {
		unref(s->table, s);
		return;
	}
	(void)pthread_mutex_lock(&s->table->lock);
	s->refs++;
	(void)pthread_mutex_unlock(&s->table->lock);
}

/*
 * Expires sessions unused for MCP_HTTP_SESSION_IDLE_S with nothing in
 * flight (lock held); their table refs are moved onto *gone for the
 * caller to drop once unlocked.
 */
static void
expire_locked(struct http_sessions *t, struct http_session **gone)
{
	struct http_session *s, *next;

	for (s = t->head; s != NULL; s = next) {
		next = s->next;
		if (s->active == 0 &&
		    ts_us_since(&s->last_used) >=
		    (uint64_t)MCP_HTTP_SESSION_IDLE_S * 1000000) {
			unlink_locked(t, s);
			s->next = *gone;
			*gone = s;
			atomic_fetch_add(&t->metrics->sessions_expired, 1);
		}
	}
}

/* Sessions of principal in the table (lock held). */
static size_t
count_of_locked(struct http_sessions *t, const uint8_t principal[SHA256_LEN])
{
	struct http_session *s;
	size_t n = 0;

	for (s = t->head; s != NULL; s = s->next)
		if (same_principal(s->principal, principal))
			n++;
	return n;
}

/*
 * A principal at its share makes room in its own sessions only: its
 * oldest idle one (nothing in flight) goes onto *gone. Lock held. Nothing
 * goes when all of its sessions have calls running.
 */
static void
evict_for_share_locked(struct http_sessions *t,
    const uint8_t principal[SHA256_LEN], struct http_session **gone)
{
	struct http_session *s, *oldest = NULL;

	if (count_of_locked(t, principal) < t->share)
		return;
	for (s = t->head; s != NULL; s = s->next)
		if (s->active == 0 && same_principal(s->principal, principal) &&
		    (oldest == NULL ||
		    s->last_used.tv_sec < oldest->last_used.tv_sec ||
		    (s->last_used.tv_sec == oldest->last_used.tv_sec &&
		    s->last_used.tv_nsec < oldest->last_used.tv_nsec)))
			oldest = s;
	if (oldest == NULL)
		return;
	unlink_locked(t, oldest);
	oldest->next = *gone;
	*gone = oldest;
	atomic_fetch_add(&t->metrics->sessions_evicted, 1);
	log_info("http: session %.8s... ended: its principal is at its share "
	    "of %zu sessions and started another", oldest->id, t->share);
}

static void
drop_list(struct http_sessions *t, struct http_session *gone)
{
	struct http_session *next;

	for (; gone != NULL; gone = next) {
		next = gone->next;
		session_cancel_all(&gone->sess);
		unref(t, gone);
	}
}

void
http_sessions_init(struct http_sessions *t, const char *ws_dir,
    uid_t ws_owner, struct http_metrics *metrics)
{
	memset(t, 0, sizeof(*t));
	(void)pthread_mutex_init(&t->lock, NULL);
	t->ws_dir = ws_dir;
	t->ws_owner = ws_owner;
	t->metrics = metrics;
	t->share = MCP_HTTP_MAX_SESSIONS;
}

void
http_sessions_set_principals(struct http_sessions *t, size_t n)
{
	size_t cap = MCP_HTTP_MAX_SESSIONS, budget = session_ws_budget();

	if (n == 0)
		n = 1;
	/* each session has a fresh workspace, each principal one more for
	 * its stateless calls: all of them within the server's bound */
	if (budget > 0 && t->ws_dir == NULL)
		cap = budget > n ? (budget - n < cap ? budget - n : cap) : 1;
	t->share = cap / n;
	if (t->share == 0)
		t->share = 1;
}

void
http_sessions_fini(struct http_sessions *t)
{
	struct http_session *gone = NULL, *s;

	(void)pthread_mutex_lock(&t->lock);
	while ((s = t->head) != NULL) {
		unlink_locked(t, s);
		s->next = gone;
		gone = s;
	}
	(void)pthread_mutex_unlock(&t->lock);
	drop_list(t, gone);
	(void)pthread_mutex_destroy(&t->lock);
}

enum http_sess_rc
http_session_create(struct http_sessions *t,
    const uint8_t principal[SHA256_LEN], struct http_session **ret)
{
	struct http_session *s, *gone = NULL;
	char err[256];
	enum http_sess_rc rc = HTTP_SESS_ERROR;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return HTTP_SESS_ERROR;
	if (new_id(s->id) != 0) {
		log_err("getrandom: %s", strerror(errno));
		goto fail;
	}
	/* the workspace first: no lock is held during file system work */
	if (session_ws_open(t->ws_dir, t->ws_owner, &s->ws, err,
	    sizeof(err)) != 0) {
		log_err("session workspace: %s", err);
		goto fail;
	}
	session_init(&s->sess, session_ws_path(s->ws));
	(void)snprintf(s->sess.id, sizeof(s->sess.id), "%s", s->id);
	http_owner_key(principal, s->sess.owner, sizeof(s->sess.owner));
	/* a task it starts keeps it, and its workspace, until it ends */
	s->table = t;
	s->sess.hold = task_hold;
	s->sess.hold_arg = s;
	memcpy(s->principal, principal, SHA256_LEN);
	(void)clock_gettime(CLOCK_MONOTONIC, &s->last_used);
	s->refs = 2;		/* the table's and the caller's */
	s->active = 1;

	(void)pthread_mutex_lock(&t->lock);
	expire_locked(t, &gone);
	evict_for_share_locked(t, principal, &gone);
	if (t->n >= MCP_HTTP_MAX_SESSIONS ||
	    count_of_locked(t, principal) >= t->share) {
		(void)pthread_mutex_unlock(&t->lock);
		drop_list(t, gone);
		session_fini(&s->sess);
		rc = HTTP_SESS_FULL;
		goto fail;
	}
	s->next = t->head;
	t->head = s;
	t->n++;
	(void)pthread_mutex_unlock(&t->lock);
	drop_list(t, gone);
	atomic_fetch_add(&t->metrics->sessions_created, 1);
	log_debug("http: session %.8s... workspace %s", s->id,
	    session_ws_path(s->ws));
	*ret = s;
	return HTTP_SESS_OK;
 fail:
	session_ws_free(s->ws);
	free(s);
	return rc;
}

enum http_sess_rc
http_session_acquire(struct http_sessions *t, const char *id,
    const uint8_t principal[SHA256_LEN], struct http_session **ret)
{
	struct http_session *s, *gone = NULL;
	enum http_sess_rc rc = HTTP_SESS_UNKNOWN;

	(void)pthread_mutex_lock(&t->lock);
	expire_locked(t, &gone);
	for (s = t->head; s != NULL; s = s->next)
		if (strcmp(s->id, id) == 0)
			break;
	/* another principal's session looks exactly like an unknown one */
	if (s != NULL && same_principal(s->principal, principal)) {
		if (s->active >= MCP_HTTP_MAX_SESSION_CALLS)
			rc = HTTP_SESS_BUSY;
		else {
			s->refs++;
			s->active++;
			(void)clock_gettime(CLOCK_MONOTONIC, &s->last_used);
			*ret = s;
			rc = HTTP_SESS_OK;
		}
	}
	(void)pthread_mutex_unlock(&t->lock);
	drop_list(t, gone);
	return rc;
}

void
http_session_release(struct http_sessions *t, struct http_session *s)
{
	(void)pthread_mutex_lock(&t->lock);
	s->active--;
	(void)clock_gettime(CLOCK_MONOTONIC, &s->last_used);
	(void)pthread_mutex_unlock(&t->lock);
	unref(t, s);
}

enum http_sess_rc
http_session_delete(struct http_sessions *t, const char *id,
    const uint8_t principal[SHA256_LEN])
{
	struct http_session *s;

	(void)pthread_mutex_lock(&t->lock);
	for (s = t->head; s != NULL; s = s->next)
		if (strcmp(s->id, id) == 0)
			break;
	if (s == NULL || !same_principal(s->principal, principal)) {
		(void)pthread_mutex_unlock(&t->lock);
		return HTTP_SESS_UNKNOWN;
	}
	unlink_locked(t, s);
	(void)pthread_mutex_unlock(&t->lock);
	atomic_fetch_add(&t->metrics->sessions_deleted, 1);
	/* kill its sandboxes now; the workspace goes with the last ref */
	session_cancel_all(&s->sess);
	unref(t, s);
	return HTTP_SESS_OK;
}

void
http_session_discard(struct http_sessions *t, struct http_session *s)
{
	bool in_table;

	(void)pthread_mutex_lock(&t->lock);
	in_table = !s->dead;
	if (in_table)
		unlink_locked(t, s);
	s->active--;
	(void)pthread_mutex_unlock(&t->lock);
	if (in_table)
		unref(t, s);
	unref(t, s);
}

void
http_sessions_sweep(struct http_sessions *t)
{
	struct http_session *gone = NULL;

	(void)pthread_mutex_lock(&t->lock);
	expire_locked(t, &gone);
	(void)pthread_mutex_unlock(&t->lock);
	drop_list(t, gone);
}

size_t
http_sessions_count(struct http_sessions *t)
{
	size_t n;

	(void)pthread_mutex_lock(&t->lock);
	n = t->n;
	(void)pthread_mutex_unlock(&t->lock);
	return n;
}
