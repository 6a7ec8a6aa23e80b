/*
 * What the HTTP transport keeps per principal beyond sessions: the
 * workspace of its stateless (2026-07-28) requests. A principal is the
 * digest of a bearer token, or, without --token-file, everyone (the
 * all-zero digest). Each principal's stateless calls share one workspace,
 * made at the principal's first stateless request and kept for the
 * server's life; no two principals ever share one. A handshake-era session
 * has its own workspace besides (http_session.c).
 */
#include <stdio.h>
#include <string.h>

#include "http_internal.h"
#include "log.h"

void
http_tenants_init(struct http_tenants *ts, const char *ws_dir,
    uid_t ws_owner)
{
	memset(ts, 0, sizeof(*ts));
	(void)pthread_mutex_init(&ts->lock, NULL);
	ts->ws_dir = ws_dir;
	ts->ws_owner = ws_owner;
}

void
http_tenants_fini(struct http_tenants *ts)
{
	size_t i;

	for (i = 0; i < ts->n; i++)
		session_ws_free(ts->t[i].ws);
	ts->n = 0;
	(void)pthread_mutex_destroy(&ts->lock);
}

void
http_owner_key(const uint8_t principal[SHA256_LEN], char *dst, size_t len)
{
	size_t i;

	for (i = 0; i < SHA256_LEN && 2 * i + 2 < len; i++)
		(void)snprintf(dst + 2 * i, 3, "%02x", principal[i]);
}

const char *
http_tenant_workspace(struct http_tenants *ts,
    const uint8_t principal[SHA256_LEN])
{
	struct http_tenant *t = NULL;
	const char *path = NULL;
	char err[256];
	size_t i;

	(void)pthread_mutex_lock(&ts->lock);
	/* digests of valid tokens: no secret to keep from timing here */
	for (i = 0; i < ts->n && t == NULL; i++)
		if (memcmp(ts->t[i].principal, principal, SHA256_LEN) == 0)
			t = &ts->t[i];
	if (t == NULL && ts->n < sizeof(ts->t) / sizeof(ts->t[0])) {
		/* the first stateless request of this principal */
		t = &ts->t[ts->n];
		memcpy(t->principal, principal, SHA256_LEN);
		if (session_ws_open(ts->ws_dir, ts->ws_owner, &t->ws, err,
		    sizeof(err)) != 0) {
			log_err("stateless workspace: %s", err);
			t = NULL;
		} else
			ts->n++;
	}
	if (t != NULL)
		path = session_ws_path(t->ws);
	(void)pthread_mutex_unlock(&ts->lock);
	return path;
}
