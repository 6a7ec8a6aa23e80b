/*
 * Approvals (approval.h): grants, the signed requestState of 2026-07-28,
 * and the elicitation form both eras show the user.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "approval.h"
#include "approval_state.h"
#include "audit.h"
#include "jsonrpc.h"
#include "json_build.h"
#include "log.h"
#include "session.h"
#include "sha256.h"
#include "tool.h"

/* The key of inputRequests / inputResponses, and of our request ids. */
#define ASK_KEY		"approval"
#define ASK_ID_PREFIX	"mcp-sandbox-approval-"
#define NONCE_LEN	APPROVAL_NONCE_LEN

struct grant {
	char owner[SESSION_OWNER_KEY];
	bool is_timeout;
	char host[TOOL_ASK_HOST_LEN];
	uint32_t timeout_ms;
	uint64_t expires_ms;		/* CLOCK_MONOTONIC; 0: with its owner */
};

struct used_state {
	uint8_t nonce[NONCE_LEN];
	uint64_t expires_ms;
	char owner[SESSION_OWNER_KEY];
};

struct approvals {
	pthread_mutex_t lock;
	uint8_t key[SHA256_LEN];	/* the requestState MAC's, this run's */
	struct grant grants[APPROVAL_MAX_GRANTS];
	size_t ngrants;
	struct used_state used[APPROVAL_MAX_USED];
	size_t nused;
	uint64_t next_id;
};

/* What the user answered. */
enum answer {
	ANS_ONCE,
	ANS_SESSION,
	ANS_DENY,		/* accepted the form, chose deny */
	ANS_DECLINE,
	ANS_CANCEL,
	ANS_TIMEOUT,
	ANS_MALFORMED,
	ANS_GONE,		/* the client went, the call was cancelled */
};

static const char *const answer_names[] = {
	"once", "session", "deny", "decline", "cancel", "timeout", "malformed",
	"gone",
};

static uint64_t
now_ms(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

struct approvals *
approvals_new(void)
{
	struct approvals *ap;

	if ((ap = calloc(1, sizeof(*ap))) == NULL)
		return NULL;
	if (getrandom(ap->key, sizeof(ap->key), 0) != (ssize_t)sizeof(ap->key)) {
		free(ap);
		return NULL;
	}
	(void)pthread_mutex_init(&ap->lock, NULL);
	return ap;
}

void
approvals_free(struct approvals *ap)
{
	if (ap == NULL)
		return;
	(void)pthread_mutex_destroy(&ap->lock);
	explicit_bzero(ap->key, sizeof(ap->key));
	free(ap);
}

char *
approvals_seal(struct approvals *ap, const char *text)
{
	return ap == NULL ? NULL : approval_seal(ap->key, "fixture", text,
	    strlen(text));
}

int
approvals_unseal(struct approvals *ap, const char *sealed, char **text)
{
	size_t len;

	*text = NULL;
	return ap == NULL ? -1 : approval_unseal(ap->key, "fixture", sealed,
	    text, &len);
}

/* Drops grants that expired, or (owner != NULL) all of owner's. Locked. */
static void
grants_sweep(struct approvals *ap, const char *owner, uint64_t now)
{
	size_t i = 0;

	while (i < ap->ngrants) {
		struct grant *g = &ap->grants[i];

		if ((owner != NULL && strcmp(g->owner, owner) == 0) ||
		    (g->expires_ms != 0 && g->expires_ms <= now))
			*g = ap->grants[--ap->ngrants];
		else
			i++;
	}
}

void
approvals_forget(struct approvals *ap, const char *owner)
{
	if (ap == NULL)
		return;
	(void)pthread_mutex_lock(&ap->lock);
	grants_sweep(ap, owner, now_ms());
	(void)pthread_mutex_unlock(&ap->lock);
}

/* Whether owner holds a grant covering host, or a deadline of t. Locked. */
static bool
granted(struct approvals *ap, const char *owner, const char *host,
    uint32_t t)
{
	size_t i;

	for (i = 0; i < ap->ngrants; i++) {
		const struct grant *g = &ap->grants[i];

		if (strcmp(g->owner, owner) != 0)
			continue;
		if (host != NULL ? !g->is_timeout && strcmp(g->host, host) == 0 :
		    g->is_timeout && g->timeout_ms >= t)
			return true;
	}
	return false;
}

/* Stores one grant; false when the tables are full (it then covers its
 * call only). Locked. */
static bool
grant_add(struct approvals *ap, const char *owner, const char *host,
    uint32_t t, uint64_t expires)
{
	struct grant *g;
	size_t i, mine = 0;

	for (i = 0; i < ap->ngrants; i++)
		if (strcmp(ap->grants[i].owner, owner) == 0)
			mine++;
	if (mine >= APPROVAL_GRANTS_PER_OWNER ||
	    ap->ngrants >= APPROVAL_MAX_GRANTS)
		return false;
	g = &ap->grants[ap->ngrants++];
	memset(g, 0, sizeof(*g));
	(void)snprintf(g->owner, sizeof(g->owner), "%s", owner);
	g->is_timeout = host == NULL;
	if (host != NULL)
		(void)snprintf(g->host, sizeof(g->host), "%s", host);
	g->timeout_ms = t;
	g->expires_ms = expires;
	return true;
}

/* ---- what is asked, in words ---- */

/* "a.org (ports 80 and 443)", "b.org:8443" */
static int
host_words(const char *host, char *buf, size_t len)
{
	return snprintf(buf, len, "%s%s", host, strchr(host, ':') == NULL ?
	    " (ports 80 and 443)" : "");
}

/* The question, one sentence a person can weigh. */
static void
question(const struct approval_call *c, const struct tool_ask *ask,
    char *buf, size_t len)
{
	size_t i, w;
	int n;

	n = snprintf(buf, len, "Allow %s", c->def->name);
	w = n > 0 ? (size_t)n : 0;
	for (i = 0; i < ask->ndomains && w < len; i++) {
		n = snprintf(buf + w, len - w, "%s", i == 0 ? (ask->network ?
		    " network access (the server gives it none otherwise) to " :
		    " network access to ") : ", ");
		w += n > 0 ? (size_t)n : 0;
		if (w < len) {
			n = host_words(ask->domains[i], buf + w, len - w);
			w += n > 0 ? (size_t)n : 0;
		}
	}
	if (ask->timeout_ms > 0 && w < len) {
		n = snprintf(buf + w, len - w, "%s a deadline of %u ms (the "
		    "policy's longest is %u ms)", ask->ndomains > 0 ? " and" :
		    "", ask->timeout_ms, ask->plain_max_ms);
		w += n > 0 ? (size_t)n : 0;
	}
	if (w < len)
		(void)snprintf(buf + w, len - w, "? The server's policy does "
		    "not give it. Once: this call only; for this session: "
		    "later calls too.");
}

/* The elicitation/create params: a form with one choice. Owned. */
static struct json_object *
form_params(const struct approval_call *c, const struct tool_ask *ask)
{
	static const char *const choices[][2] = {
		{ "once", "Allow once (this call only)" },
		{ "session", "Allow for this session" },
		{ "deny", "Deny" },
	};
	struct json_object *p, *schema, *props, *dec, *one, *req, *o;
	char text[2048];
	size_t i;

	question(c, ask, text, sizeof(text));
	one = json_object_new_array();
	for (i = 0; i < 3; i++) {
		o = json_object_new_object();
		if (jb_push(one, jb_built(o, jb_add(o, "const",
		    json_object_new_string(choices[i][0])) ||
		    jb_add(o, "title", json_object_new_string(
		    choices[i][1])))) != 0) {
			json_object_put(one);
			return NULL;
		}
	}
	dec = json_object_new_object();
	dec = jb_built(dec, jb_add(dec, "oneOf", one) ||
	    jb_add(dec, "type", json_object_new_string("string")) ||
	    jb_add(dec, "title", json_object_new_string("Decision")));
	props = json_object_new_object();
	props = jb_built(props, jb_add(props, "decision", dec));
	req = json_object_new_array();
	req = jb_built(req, jb_push(req, json_object_new_string("decision")));
	schema = json_object_new_object();
	if ((schema = jb_built(schema, jb_add(schema, "properties", props) ||
	    jb_add(schema, "required", req) ||
	    jb_add(schema, "type", json_object_new_string("object")))) == NULL)
		return NULL;
	p = json_object_new_object();
	return jb_built(p, jb_add(p, "mode", json_object_new_string("form")) ||
	    jb_add(p, "message", json_object_new_string(text)) ||
	    jb_add(p, "requestedSchema", schema));
}

/* An ElicitResult ({action, content}) as an answer. */
static enum answer
parse_result(struct json_object *res)
{
	struct json_object *v, *content, *d;
	const char *action, *dec;

	if (!json_object_is_type(res, json_type_object) ||
	    !json_object_object_get_ex(res, "action", &v) ||
	    !json_object_is_type(v, json_type_string))
		return ANS_MALFORMED;
	action = json_object_get_string(v);
	if (strcmp(action, "decline") == 0)
		return ANS_DECLINE;
	if (strcmp(action, "cancel") == 0)
		return ANS_CANCEL;
	if (strcmp(action, "accept") != 0 ||
	    !json_object_object_get_ex(res, "content", &content) ||
	    !json_object_is_type(content, json_type_object) ||
	    !json_object_object_get_ex(content, "decision", &d) ||
	    !json_object_is_type(d, json_type_string))
		return ANS_MALFORMED;
	dec = json_object_get_string(d);
	if (strcmp(dec, "once") == 0)
		return ANS_ONCE;
	if (strcmp(dec, "session") == 0)
		return ANS_SESSION;
	if (strcmp(dec, "deny") == 0)
		return ANS_DENY;
	return ANS_MALFORMED;
}

/* ---- 2025-11-25: elicitation/create on the call's stream ---- */

/* notifications/cancelled of our own request: a form the client still
 * shows would take an answer nobody reads. Sent as it is (the call may be
 * cancelled itself; its stream may be gone: then nothing is sent). */
static void
withdraw(const struct approval_call *c, const char *id, const char *why)
{
	struct json_object *p = json_object_new_object();
	char *text;
	size_t len;

	if ((p = jb_built(p, jb_add(p, "requestId",
	    json_object_new_string(id)) ||
	    jb_add(p, "reason", json_object_new_string(why)))) == NULL)
		return;
	if ((text = jsonrpc_notification("notifications/cancelled", p,
	    &len)) != NULL) {
		(void)c->send(c->send_arg, text, len);
		free(text);
	}
}

int
approval_client_request(const struct approval_call *c, const char *method,
    struct json_object *params, uint32_t wait_ms, struct json_object **result)
{
	struct json_object *req, *id, *resp, *v;
	struct session_ask a;
	struct timespec dl;
	char idtext[64];
	char *text;
	size_t len;
	uint64_t n;
	int rc;

	*result = NULL;
	(void)pthread_mutex_lock(&c->ap->lock);
	n = ++c->ap->next_id;
	(void)pthread_mutex_unlock(&c->ap->lock);
	(void)snprintf(idtext, sizeof(idtext), ASK_ID_PREFIX "%llu",
	    (unsigned long long)n);
	req = json_object_new_object();
	id = json_object_new_string(idtext);
	/* "method" before "id": the HTTP stream tells our messages from the
	 * response by that order (transport/http_stream.c) */
	if ((req = jb_built(req, jb_add(req, "jsonrpc",
	    json_object_new_string("2.0")) ||
	    jb_add(req, "method", json_object_new_string(method)) ||
	    jb_add(req, "id", json_object_get(id)) ||
	    jb_add(req, "params", params))) == NULL ||
	    jsonrpc_id_key(id, a.key, sizeof(a.key)) != 0) {
		json_object_put(id);
		json_object_put(req);
		return APPROVAL_REQ_FAILED;
	}
	json_object_put(id);
	text = jsonrpc_serialize(req, &len);
	json_object_put(req);
	if (text == NULL)
		return APPROVAL_REQ_FAILED;
	session_ask_open(c->sess, &a);
	if (session_send(c->sess, c->fl, c->send, c->send_arg, text,
	    len) < 0) {
		free(text);
		session_ask_close(c->sess, &a);
		return APPROVAL_REQ_GONE;
	}
	free(text);
	(void)clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += wait_ms / 1000;
	dl.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	resp = session_ask_wait(c->sess, c->fl, &a, &dl);
	session_ask_close(c->sess, &a);
	if (resp == NULL) {
		rc = session_is_cancelled(c->sess, c->fl) || a.aborted ?
		    APPROVAL_REQ_GONE : APPROVAL_REQ_TIMEOUT;
		withdraw(c, idtext, rc == APPROVAL_REQ_TIMEOUT ?
		    "no answer in time" : "the call no longer waits");
		return rc;
	}
	rc = APPROVAL_REQ_ERROR;	/* an error response */
	if (json_object_object_get_ex(resp, "result", &v)) {
		*result = json_object_get(v);
		rc = APPROVAL_REQ_OK;
	}
	json_object_put(resp);
	return rc;
}

/* The approval form on the call's stream, and its answer. */
static enum answer
ask_on_stream(const struct approval_call *c, const struct tool_ask *ask,
    uint32_t wait_ms)
{
	struct json_object *res;
	enum answer ans;

	switch (approval_client_request(c, "elicitation/create",
	    form_params(c, ask), wait_ms, &res)) {
	case APPROVAL_REQ_OK:
		ans = parse_result(res);
		json_object_put(res);
		return ans;
	case APPROVAL_REQ_GONE:
		return ANS_GONE;
	case APPROVAL_REQ_TIMEOUT:
		return ANS_TIMEOUT;
	default:
		return ANS_MALFORMED;	/* an error response: no */
	}
}

/* ---- 2026-07-28: the signed requestState (approval_state.c) ---- */

/*
 * Checks state against this call; on success *asked is what it asked
 * (and its nonce is spent when spend: no state serves twice). NULL, or
 * why it is refused.
 */
static const char *
state_check(const struct approval_call *c, const char *state,
    struct tool_ask *asked, bool spend)
{
	struct approval_state st;
	const char *why;
	uint64_t now = now_ms();
	size_t i, mine = 0;

	if ((why = approval_state_open(c->ap->key, state, c->owner,
	    c->def->name, c->args, now, &st)) != NULL)
		return why;
	*asked = st.asked;
	(void)pthread_mutex_lock(&c->ap->lock);
	for (i = 0; i < c->ap->nused; i++)
		if (memcmp(c->ap->used[i].nonce, st.nonce, NONCE_LEN) == 0)
			break;
	if (i < c->ap->nused)
		why = "it was used already: each answer covers one call";
	else if (spend) {
		for (i = 0; i < c->ap->nused;)	/* forget the expired */
			if (c->ap->used[i].expires_ms <= now)
				c->ap->used[i] = c->ap->used[--c->ap->nused];
			else
				mine += strcmp(c->ap->used[i++].owner,
				    c->owner) == 0;
		if (c->ap->nused >= APPROVAL_MAX_USED ||
		    mine >= APPROVAL_USED_PER_OWNER)
			why = "too many approvals were answered lately; call "
			    "again in a moment";
		else {
			struct used_state *u = &c->ap->used[c->ap->nused++];

			memcpy(u->nonce, st.nonce, NONCE_LEN);
			u->expires_ms = st.expires_ms;
			(void)snprintf(u->owner, sizeof(u->owner), "%s",
			    c->owner);
		}
	}
	(void)pthread_mutex_unlock(&c->ap->lock);
	return why;
}

static const char *
jstr(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) &&
	    json_object_is_type(v, json_type_string) ?
	    json_object_get_string(v) : NULL;
}

/* Whether what the call asks now is all inside what the state asked. */
static bool
inside(const struct tool_ask *now, const struct tool_ask *then)
{
	size_t i, j;

	for (i = 0; i < now->ndomains; i++) {
		for (j = 0; j < then->ndomains; j++)
			if (strcmp(now->domains[i], then->domains[j]) == 0)
				break;
		if (j == then->ndomains)
			return false;
	}
	return now->timeout_ms <= then->timeout_ms;
}

/* The input_required result asking for ask. */
static struct json_object *
input_required(const struct approval_call *c, const struct tool_ask *ask,
    uint32_t wait_ms)
{
	struct json_object *res, *reqs, *one;
	char *state;

	if ((state = approval_state_make(c->ap->key, c->owner, c->def->name,
	    c->args, ask, now_ms() + wait_ms)) == NULL)
		return NULL;
	one = json_object_new_object();
	one = jb_built(one, jb_add(one, "method",
	    json_object_new_string("elicitation/create")) ||
	    jb_add(one, "params", form_params(c, ask)));
	reqs = json_object_new_object();
	reqs = jb_built(reqs, jb_add(reqs, ASK_KEY, one));
	res = json_object_new_object();
	res = jb_built(res, jb_add(res, "resultType",
	    json_object_new_string("input_required")) ||
	    jb_add(res, "inputRequests", reqs) ||
	    jb_add(res, "requestState", json_object_new_string(state)));
	free(state);
	return res;
}

/* ---- the stage ---- */

static void
refuse(struct approval_out *out, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
refuse(struct approval_out *out, const char *reason, const char *fmt, ...)
{
	char text[1536];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	(void)snprintf(out->reason, sizeof(out->reason), "%s", reason);
	out->result = tool_result_error("%s", text);
	if (out->result == NULL)
		out->err = MCP_ERR_NOMEM;
}

static void
protocol_error(struct approval_out *out, const char *why)
{
	out->err = MCP_ERR_INVALID_PARAMS;
	(void)snprintf(out->errmsg, sizeof(out->errmsg), "Invalid params: "
	    "requestState refused: %s", why);
}

/* The flags an operator would set to allow ask ahead, for a refusal. */
static void
flags_for(const struct tool_ask *ask, char *buf, size_t len)
{
	size_t i, w = 0;
	int n;

	buf[0] = '\0';
	for (i = 0; i < ask->ndomains && w < len; i++) {
		n = snprintf(buf + w, len - w, "%s--allow-domain %s",
		    w > 0 ? " " : "", ask->domains[i]);
		w += n > 0 ? (size_t)n : 0;
	}
	if (ask->timeout_ms > 0 && w < len)
		(void)snprintf(buf + w, len - w, "%s--max-timeout-ms %u",
		    w > 0 ? " " : "", ask->timeout_ms);
}

static void
audit_line(const struct approval_call *c, const struct tool_ask *ask,
    const char *answer)
{
	struct json_object *asked, *d;
	size_t i;

	if (c->audit == NULL)
		return;
	asked = json_object_new_object();
	d = json_object_new_array();
	for (i = 0; d != NULL && i < ask->ndomains; i++)
		(void)jb_push(d, json_object_new_string(ask->domains[i]));
	if ((asked = jb_built(asked, jb_add(asked, "domains", d) ||
	    (ask->timeout_ms > 0 && jb_add(asked, "timeout_ms",
	    json_object_new_int64(ask->timeout_ms))) ||
	    (ask->network && jb_add(asked, "network",
	    json_object_new_boolean(1))))) == NULL)
		return;
	audit_approval(c->audit, c->sess, c->def->name, asked, answer);
	json_object_put(asked);
}

/* One entry of structuredContent.approvals. */
static int
add_entry(struct json_object *list, const char *kind, const char *value,
    const char *granted_as, bool asked)
{
	struct json_object *e = json_object_new_object();

	if ((e = jb_built(e, jb_add(e, "kind", json_object_new_string(kind)) ||
	    jb_add(e, "value", json_object_new_string(value)) ||
	    jb_add(e, "granted", json_object_new_string(granted_as)) ||
	    jb_add(e, "asked", json_object_new_boolean(asked)))) == NULL)
		return -1;
	return jb_push(list, e);
}

/*
 * The user said once or session to the items of need: the call gets all
 * of full (need and what earlier grants covered); a session answer is
 * stored for the owner.
 */
static void
grant_all(const struct approval_call *c, const struct tool_ask *full,
    const struct tool_ask *need, enum answer ans, struct approval_out *out)
{
	uint32_t wait_ms, ttl_ms;
	uint64_t expires;
	char tbuf[16];
	size_t i, j;
	bool stored, asked;
	int rc = 0;

	tool_ask_bounds(c->env, &wait_ms, &ttl_ms);
	expires = c->modern ? now_ms() + ttl_ms : 0;
	out->granted = *full;
	if ((out->approvals = json_object_new_array()) == NULL) {
		out->err = MCP_ERR_NOMEM;
		return;
	}
	(void)pthread_mutex_lock(&c->ap->lock);
	grants_sweep(c->ap, NULL, now_ms());
	for (i = 0; i < full->ndomains; i++) {
		for (j = 0; j < need->ndomains; j++)
			if (strcmp(need->domains[j], full->domains[i]) == 0)
				break;
		asked = j < need->ndomains;
		stored = !asked || (ans == ANS_SESSION && grant_add(c->ap,
		    c->owner, full->domains[i], 0, expires));
		rc |= add_entry(out->approvals, "domain", full->domains[i],
		    stored ? "session" : "once", asked);
	}
	if (full->timeout_ms > 0) {
		asked = need->timeout_ms > 0;
		stored = !asked || (ans == ANS_SESSION && grant_add(c->ap,
		    c->owner, NULL, full->timeout_ms, expires));
		(void)snprintf(tbuf, sizeof(tbuf), "%u", full->timeout_ms);
		rc |= add_entry(out->approvals, "timeout", tbuf,
		    stored ? "session" : "once", asked);
	}
	(void)pthread_mutex_unlock(&c->ap->lock);
	if (rc != 0)
		out->err = MCP_ERR_NOMEM;
}

/* The hosts the owner was granted for its session, added to what a call
 * of a tool with network has (it need not list them again). */
static void
add_session_hosts(const struct approval_call *c, struct tool_ask *full)
{
	size_t i, j;

	if (c->ap == NULL)
		return;
	(void)pthread_mutex_lock(&c->ap->lock);
	grants_sweep(c->ap, NULL, now_ms());
	for (i = 0; i < c->ap->ngrants &&
	    full->ndomains < TOOL_MAX_ASK_DOMAINS; i++) {
		const struct grant *g = &c->ap->grants[i];

		if (g->is_timeout || strcmp(g->owner, c->owner) != 0)
			continue;
		for (j = 0; j < full->ndomains; j++)
			if (strcmp(full->domains[j], g->host) == 0)
				break;
		if (j == full->ndomains)
			(void)snprintf(full->domains[full->ndomains++],
			    TOOL_ASK_HOST_LEN, "%s", g->host);
	}
	(void)pthread_mutex_unlock(&c->ap->lock);
}

/* need = what full asks that no grant of the owner covers. */
static void
subtract_grants(const struct approval_call *c, const struct tool_ask *full,
    struct tool_ask *need)
{
	size_t i;

	*need = *full;
	if (c->ap == NULL)
		return;
	need->ndomains = 0;
	(void)pthread_mutex_lock(&c->ap->lock);
	grants_sweep(c->ap, NULL, now_ms());
	for (i = 0; i < full->ndomains; i++)
		if (!granted(c->ap, c->owner, full->domains[i], 0))
			(void)snprintf(need->domains[need->ndomains++],
			    TOOL_ASK_HOST_LEN, "%s", full->domains[i]);
	if (full->timeout_ms > 0 && granted(c->ap, c->owner, NULL,
	    full->timeout_ms))
		need->timeout_ms = 0;
	(void)pthread_mutex_unlock(&c->ap->lock);
}

/* 2026-07-28: the answer a retried call carries, or an input_required. */
static bool
modern_answer(const struct approval_call *c, const struct tool_ask *need,
    uint32_t wait_ms, struct approval_out *out, enum answer *ans)
{
	struct json_object *params = c->msg->params, *st, *resp, *one;
	struct tool_ask then;
	const char *why;

	if (params != NULL && json_object_object_get_ex(params,
	    "requestState", &st)) {
		if (!json_object_is_type(st, json_type_string)) {
			protocol_error(out, "it must be a string");
			return false;
		}
		/* an answer for this state? else ask again, state unspent */
		if (!json_object_object_get_ex(params, "inputResponses",
		    &resp) || !json_object_is_type(resp, json_type_object) ||
		    !json_object_object_get_ex(resp, ASK_KEY, &one)) {
			if ((why = state_check(c, json_object_get_string(st),
			    &then, false)) != NULL) {
				protocol_error(out, why);
				return false;
			}
			goto ask;
		}
		if ((why = state_check(c, json_object_get_string(st), &then,
		    true)) != NULL) {
			protocol_error(out, why);
			return false;
		}
		if (!inside(need, &then)) {
			protocol_error(out, "the call asks for more than was "
			    "approved");
			return false;
		}
		*ans = parse_result(one);
		return true;
	}
 ask:
	if ((out->result = input_required(c, need, wait_ms)) == NULL)
		out->err = MCP_ERR_NOMEM;
	(void)snprintf(out->reason, sizeof(out->reason),
	    "approval: input required");
	return false;
}

static void
answer_no(const struct approval_call *c, const struct tool_ask *need,
    enum answer ans, uint32_t wait_ms, struct approval_out *out)
{
	char what[1024], reason[64];

	question(c, need, what, sizeof(what));
	(void)snprintf(reason, sizeof(reason), "approval: %s",
	    answer_names[ans]);
	switch (ans) {
	case ANS_TIMEOUT:
		refuse(out, reason, "%s was not run: it needs the user's "
		    "approval and no answer came within %u ms "
		    "(limits.ask_wait_ms). Asked: %s", c->def->name, wait_ms,
		    what);
		break;
	case ANS_MALFORMED:
		refuse(out, reason, "%s was not run: the client's answer to "
		    "the approval was not one of once, session or deny, so it "
		    "counts as no.", c->def->name);
		break;
	case ANS_GONE:
		refuse(out, reason, "%s was not run: the request ended before "
		    "the user answered.", c->def->name);
		break;
	default:
		refuse(out, reason, "%s was not run: the user did not allow it "
		    "(%s). Do the task without it, or ask the user in the "
		    "conversation.", c->def->name, answer_names[ans]);
		break;
	}
}

void
approval_check(const struct approval_call *c, struct approval_out *out)
{
	struct tool_ask full, need;
	uint32_t wait_ms, ttl_ms;
	enum answer ans;
	char why[1024], flags[1024];

	memset(out, 0, sizeof(*out));
	if (tool_ask_assess(c->env, c->def, c->args, c->plain_max_ms, &full,
	    why, sizeof(why)) == TOOL_ASK_REFUSED) {
		refuse(out, "approval: outside the ceiling", "%s was not run: "
		    "%s", c->def->name, why);
		return;
	}
	if (tool_ask_network(c->env, c->def, c->args))
		add_session_hosts(c, &full);
	if (full.ndomains == 0 && full.timeout_ms == 0)
		return;		/* nothing beyond the policy */
	tool_ask_bounds(c->env, &wait_ms, &ttl_ms);
	subtract_grants(c, &full, &need);
	if (need.ndomains == 0 && need.timeout_ms == 0) {
		grant_all(c, &full, &need, ANS_SESSION, out);
		return;
	}
	flags_for(&need, flags, sizeof(flags));
	question(c, &need, why, sizeof(why));
	if (c->ap == NULL || c->in_task || !c->client_elicits) {
		audit_line(c, &need, "no-client");
		refuse(out, "approval: client cannot ask", "%s was not run: it "
		    "needs the user's approval and %s. An operator can allow "
		    "it ahead: start the server with %s. Asked: %s",
		    c->def->name, c->in_task ? "a call run as a task cannot "
		    "ask (call it without background; in 2026-07-28, with a "
		    "timeout_ms under the server's task threshold)" : "this client cannot "
		    "ask (it declared no elicitation capability)", flags, why);
		return;
	}
	if (c->modern) {
		if (!modern_answer(c, &need, wait_ms, out, &ans))
			return;
	} else
		ans = ask_on_stream(c, &need, wait_ms);
	audit_line(c, &need, answer_names[ans]);
	log_info("approval of %s: %s", c->def->name, answer_names[ans]);
	if (ans == ANS_ONCE || ans == ANS_SESSION)
		grant_all(c, &full, &need, ans, out);
	else
		answer_no(c, &need, ans, wait_ms, out);
}

bool
approval_ask_host(const struct approval_call *c, const char *host_port,
    bool *session, bool *asked)
{
	struct tool_ask ask;
	uint32_t wait_ms, ttl_ms;
	enum answer ans;
	bool ok;

	*session = *asked = false;
	if (c->ap == NULL)
		return false;
	memset(&ask, 0, sizeof(ask));
	ask.ndomains = 1;
	(void)snprintf(ask.domains[0], TOOL_ASK_HOST_LEN, "%s", host_port);
	(void)pthread_mutex_lock(&c->ap->lock);
	grants_sweep(c->ap, NULL, now_ms());
	ok = granted(c->ap, c->owner, host_port, 0);
	(void)pthread_mutex_unlock(&c->ap->lock);
	if (ok)
		return *session = true;
	if (!c->client_elicits)
		return false;
	tool_ask_bounds(c->env, &wait_ms, &ttl_ms);
	*asked = true;
	ans = ask_on_stream(c, &ask, wait_ms);
	audit_line(c, &ask, answer_names[ans]);
	log_info("approval of %s (mid-run): %s", c->def->name,
	    answer_names[ans]);
	if (ans == ANS_SESSION) {
		(void)pthread_mutex_lock(&c->ap->lock);
		*session = grant_add(c->ap, c->owner, host_port, 0, c->modern ?
		    now_ms() + ttl_ms : 0);
		(void)pthread_mutex_unlock(&c->ap->lock);
	}
	return ans == ANS_ONCE || ans == ANS_SESSION;
}

int
approval_note_host(struct approval_out *out, const char *host_port,
    bool session)
{
	if (out->approvals == NULL &&
	    (out->approvals = json_object_new_array()) == NULL)
		return -1;
	return add_entry(out->approvals, "domain", host_port, session ?
	    "session" : "once", true);
}

void
approval_out_fini(struct approval_out *out)
{
	json_object_put(out->approvals);
	out->approvals = NULL;
	json_object_put(out->result);
	out->result = NULL;
}

int
approval_decorate(struct json_object *result, const struct approval_out *out)
{
	struct json_object *sc, *content, *t;
	char line[2048];
	size_t i, w;
	int n;

	if (out->approvals == NULL)
		return 0;
	if (json_object_object_get_ex(result, "structuredContent", &sc) &&
	    jb_add(sc, "approvals", json_object_get(out->approvals)) != 0)
		return -1;
	if (!json_object_object_get_ex(result, "content", &content) ||
	    !json_object_is_type(content, json_type_array))
		return 0;
	n = snprintf(line, sizeof(line), "Ran with the user's approval:");
	w = n > 0 ? (size_t)n : 0;
	for (i = 0; i < json_object_array_length(out->approvals) &&
	    w < sizeof(line); i++) {
		struct json_object *e = json_object_array_get_idx(
		    out->approvals, i);

		n = snprintf(line + w, sizeof(line) - w, "%s %s %s (%s)",
		    i > 0 ? ";" : "", jstr(e, "kind"), jstr(e, "value"),
		    strcmp(jstr(e, "granted"), "session") == 0 ?
		    "for this session" : "this call only");
		w += n > 0 ? (size_t)n : 0;
	}
	t = json_object_new_object();
	if ((t = jb_built(t, jb_add(t, "type", json_object_new_string(
	    "text")) || jb_add(t, "text", json_object_new_string(line)))) ==
	    NULL)
		return -1;
	return jb_push(content, t);
}
