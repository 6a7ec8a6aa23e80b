/* Session state and the table of calls in flight. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session.h"
#include "tool.h"
#include "workspace.h"

void
session_init(struct session *s, const char *workspace)
{
	pthread_condattr_t ca;

	memset(s, 0, sizeof(*s));
	(void)pthread_mutex_init(&s->lock, NULL);
	(void)pthread_cond_init(&s->idle, NULL);
	(void)pthread_condattr_init(&ca);
	(void)pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	(void)pthread_cond_init(&s->answered, &ca);
	(void)pthread_condattr_destroy(&ca);
	s->log_level = -1;
	s->workspace = workspace;
	(void)snprintf(s->id, sizeof(s->id), "stdio");
	(void)snprintf(s->owner, sizeof(s->owner), "stdio");
}

void
session_owner_key(const struct session *s, bool modern, char *buf)
{
	(void)snprintf(buf, SESSION_OWNER_KEY, "%s:%s", modern ? "p" : "s",
	    modern ? s->owner : s->id);
}

void
session_init_lazy(struct session *s, const char *dir, uid_t owner)
{
	session_init(s, NULL);
	s->ws_lazy = true;
	s->ws_dir = dir;
	s->ws_owner = owner;
}

const char *
session_workspace(struct session *s, char *err, size_t errlen)
{
	const char *path;

	(void)pthread_mutex_lock(&s->lock);
	if (s->workspace == NULL && s->ws_lazy && s->ws == NULL &&
	    workspace_open(s->ws_dir, s->ws_owner, &s->ws, err, errlen) == 0)
		s->workspace = s->ws->path;
	path = s->workspace;
	if (path == NULL && !s->ws_lazy)
		(void)snprintf(err, errlen, "this session has no workspace");
	(void)pthread_mutex_unlock(&s->lock);
	return path;
}

int
session_ws_open(const char *dir, uid_t owner, struct workspace **ret,
    char *err, size_t errlen)
{
	return workspace_open(dir, owner, ret, err, errlen);
}

size_t
session_ws_budget(void)
{
	return workspace_budget();
}

const char *
session_ws_path(const struct workspace *ws)
{
	return ws->path;
}

void
session_ws_free(struct workspace *ws)
{
	workspace_free(ws);
}

void
session_fini(struct session *s)
{
	size_t i;

	workspace_free(s->ws);
	s->ws = NULL;
	for (i = 0; i < s->nsubs; i++)
		free(s->subs[i]);
	free(s->subs);
	s->subs = NULL;
	s->nsubs = 0;
	(void)pthread_cond_destroy(&s->idle);
	(void)pthread_cond_destroy(&s->answered);
	(void)pthread_mutex_destroy(&s->lock);
}

int
session_begin(struct session *s, struct inflight *f)
{
	int rc = -1;

	(void)pthread_mutex_lock(&s->lock);
	if (s->n_inflight < MCP_MAX_INFLIGHT) {
		f->cancelled = f->asks_closed = false;
		f->next = s->inflight;
		s->inflight = f;
		s->n_inflight++;
		rc = 0;
	}
	(void)pthread_mutex_unlock(&s->lock);
	return rc;
}

void
session_begin_uncapped(struct session *s, struct inflight *f)
{
	(void)pthread_mutex_lock(&s->lock);
	f->cancelled = f->asks_closed = false;
	f->next = s->inflight;
	s->inflight = f;
	s->n_inflight++;
	(void)pthread_mutex_unlock(&s->lock);
}

bool
session_end(struct session *s, struct inflight *f)
{
	struct inflight **pp;
	bool cancelled;

	(void)pthread_mutex_lock(&s->lock);
	for (pp = &s->inflight; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == f) {
			*pp = f->next;
			s->n_inflight--;
			break;
		}
	}
	cancelled = f->cancelled;
	if (s->n_inflight == 0)
		(void)pthread_cond_broadcast(&s->idle);
	(void)pthread_mutex_unlock(&s->lock);
	return cancelled;
}

bool
session_is_cancelled(struct session *s, const struct inflight *f)
{
	bool c;

	(void)pthread_mutex_lock(&s->lock);
	c = f->cancelled;
	(void)pthread_mutex_unlock(&s->lock);
	return c;
}

void
session_attach(struct session *s, struct inflight *f, struct tool_call *call)
{
	(void)pthread_mutex_lock(&s->lock);
	f->call = call;
	if (f->cancelled)
		tool_call_cancel(call);
	(void)pthread_mutex_unlock(&s->lock);
}

void
session_detach(struct session *s, struct inflight *f)
{
	(void)pthread_mutex_lock(&s->lock);
	f->call = NULL;
	(void)pthread_mutex_unlock(&s->lock);
}

int
session_send(struct session *s, const struct inflight *f,
    int (*send)(void *arg, const char *msg, size_t len), void *arg,
    const char *msg, size_t len)
{
	int rc = 0;

	(void)pthread_mutex_lock(&s->lock);
	if (!f->cancelled)
		rc = send(arg, msg, len);
	(void)pthread_mutex_unlock(&s->lock);
	return rc;
}

void
session_set_version(struct session *s, const char *version)
{
	(void)pthread_mutex_lock(&s->lock);
	s->initialized = true;
	(void)snprintf(s->version, sizeof(s->version), "%s", version);
	(void)pthread_mutex_unlock(&s->lock);
}

void
session_set_client_caps(struct session *s, bool elicits, bool samples)
{
	(void)pthread_mutex_lock(&s->lock);
	s->client_elicits = elicits;
	s->client_samples = samples;
	(void)pthread_mutex_unlock(&s->lock);
}

bool
session_client_samples(struct session *s)
{
	bool v;

	(void)pthread_mutex_lock(&s->lock);
	v = s->client_samples;
	(void)pthread_mutex_unlock(&s->lock);
	return v;
}

bool
session_client_elicits(struct session *s)
{
	bool v;

	(void)pthread_mutex_lock(&s->lock);
	v = s->client_elicits;
	(void)pthread_mutex_unlock(&s->lock);
	return v;
}

bool
session_initialized(struct session *s)
{
	bool v;

	(void)pthread_mutex_lock(&s->lock);
	v = s->initialized;
	(void)pthread_mutex_unlock(&s->lock);
	return v;
}

void
session_set_log_level(struct session *s, int level)
{
	(void)pthread_mutex_lock(&s->lock);
	s->log_level = level;
	(void)pthread_mutex_unlock(&s->lock);
}

int
session_log_level(struct session *s)
{
	int level;

	(void)pthread_mutex_lock(&s->lock);
	level = s->log_level;
	(void)pthread_mutex_unlock(&s->lock);
	return level;
}

static void
cancel_one(struct inflight *f)
{
	f->cancelled = true;
	if (f->call != NULL)
		tool_call_cancel(f->call);
}

void
session_cancel(struct session *s, const char *key)
{
	struct inflight *f;

	(void)pthread_mutex_lock(&s->lock);
	for (f = s->inflight; f != NULL; f = f->next)
		if (strcmp(f->key, key) == 0)
			cancel_one(f);
	(void)pthread_cond_broadcast(&s->answered);
	(void)pthread_mutex_unlock(&s->lock);
}

void
session_cancel_all(struct session *s)
{
	struct inflight *f;

	(void)pthread_mutex_lock(&s->lock);
	for (f = s->inflight; f != NULL; f = f->next)
		cancel_one(f);
	(void)pthread_cond_broadcast(&s->answered);
	(void)pthread_mutex_unlock(&s->lock);
}

void
session_abort_all(struct session *s)
{
	struct inflight *f;

	struct session_ask *a;

	(void)pthread_mutex_lock(&s->lock);
	for (f = s->inflight; f != NULL; f = f->next)
		if (f->call != NULL)
			tool_call_cancel(f->call);
	for (a = s->asks; a != NULL; a = a->next)
		a->aborted = true;	/* stopping: no answer is a no */
	(void)pthread_cond_broadcast(&s->answered);
	(void)pthread_mutex_unlock(&s->lock);
}

void
session_ask_open(struct session *s, struct session_ask *a)
{
	a->response = NULL;
	a->answered = a->aborted = false;
	(void)pthread_mutex_lock(&s->lock);
	a->next = s->asks;
	s->asks = a;
	(void)pthread_mutex_unlock(&s->lock);
}

struct json_object *
session_ask_wait(struct session *s, const struct inflight *f,
    struct session_ask *a, const struct timespec *deadline)
{
	struct json_object *r = NULL;
	int rc = 0;

	(void)pthread_mutex_lock(&s->lock);
	while (!a->answered && !a->aborted && !f->cancelled &&
	    !f->asks_closed && !s->answers_over && rc == 0)
		rc = pthread_cond_timedwait(&s->answered, &s->lock, deadline);
	/* a call cancelled meanwhile runs nothing, whatever the answer */
	if (a->answered && !f->cancelled) {
		r = a->response;
		a->response = NULL;
	} else if (s->answers_over || f->asks_closed)
		a->aborted = true;	/* nobody will answer: not a timeout */
	(void)pthread_mutex_unlock(&s->lock);
	return r;
}

void
session_answers_over(struct session *s)
{
	(void)pthread_mutex_lock(&s->lock);
	s->answers_over = true;
	(void)pthread_cond_broadcast(&s->answered);
	(void)pthread_mutex_unlock(&s->lock);
}

void
session_asks_close(struct session *s, struct inflight *f)
{
	(void)pthread_mutex_lock(&s->lock);
	f->asks_closed = true;
	(void)pthread_cond_broadcast(&s->answered);
	(void)pthread_mutex_unlock(&s->lock);
}

void
session_ask_close(struct session *s, struct session_ask *a)
{
	struct session_ask **pp;

	(void)pthread_mutex_lock(&s->lock);
	for (pp = &s->asks; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == a) {
			*pp = a->next;
			break;
		}
	}
	(void)pthread_mutex_unlock(&s->lock);
	json_object_put(a->response);
	a->response = NULL;
}

bool
session_ask_answer(struct session *s, const char *key,
    struct json_object *root)
{
	struct session_ask *a;
	bool took = false;

	(void)pthread_mutex_lock(&s->lock);
	for (a = s->asks; a != NULL; a = a->next) {
		/* the first response to each ask counts, once */
		if (!a->answered && strcmp(a->key, key) == 0) {
			a->response = json_object_get(root);
			a->answered = took = true;
			(void)pthread_cond_broadcast(&s->answered);
			break;
		}
	}
	(void)pthread_mutex_unlock(&s->lock);
	return took;
}

void
session_wait_idle(struct session *s)
{
	(void)pthread_mutex_lock(&s->lock);
	while (s->n_inflight > 0)
		(void)pthread_cond_wait(&s->idle, &s->lock);
	(void)pthread_mutex_unlock(&s->lock);
}

/* The index of uri among the subscriptions, or nsubs. Lock held. */
static size_t
sub_index(const struct session *s, const char *uri)
{
	size_t i;

	for (i = 0; i < s->nsubs; i++)
		if (strcmp(s->subs[i], uri) == 0)
			break;
	return i;
}

int
session_subscribe(struct session *s, const char *uri)
{
	char **ns, *copy;
	int rc = 0;

	(void)pthread_mutex_lock(&s->lock);
	if (sub_index(s, uri) < s->nsubs)
		goto out;
	if (s->nsubs >= SESSION_MAX_SUBSCRIPTIONS) {
		rc = -ENOSPC;
		goto out;
	}
	if ((copy = strdup(uri)) == NULL ||
	    (ns = realloc(s->subs, (s->nsubs + 1) * sizeof(*ns))) == NULL) {
		free(copy);
		rc = -ENOMEM;
		goto out;
	}
	s->subs = ns;
	s->subs[s->nsubs++] = copy;
 out:
	(void)pthread_mutex_unlock(&s->lock);
	return rc;
}

void
session_unsubscribe(struct session *s, const char *uri)
{
	size_t i;

	(void)pthread_mutex_lock(&s->lock);
	if ((i = sub_index(s, uri)) < s->nsubs) {
		free(s->subs[i]);
		s->subs[i] = s->subs[--s->nsubs];
	}
	(void)pthread_mutex_unlock(&s->lock);
}

bool
session_is_subscribed(struct session *s, const char *uri)
{
	bool yes;

	(void)pthread_mutex_lock(&s->lock);
	yes = sub_index(s, uri) < s->nsubs;
	(void)pthread_mutex_unlock(&s->lock);
	return yes;
}

bool
session_has_subscriptions(const struct session *s)
{
	bool yes;

	(void)pthread_mutex_lock((pthread_mutex_t *)&s->lock);
	yes = s->nsubs > 0;
	(void)pthread_mutex_unlock((pthread_mutex_t *)&s->lock);
	return yes;
}
