/*
 * The stateless sessions in use (each on its request's thread or stream),
 * listed so that a stop can cancel their calls. Its own file so that
 * http_stream.c and transport_http.c both use it without using each other.
 */
#include <pthread.h>

#include "http_internal.h"

void
http_live_add(struct http_ctx *ctx, struct http_live *l, struct session *s)
{
	l->sess = s;
	(void)pthread_mutex_lock(&ctx->live_lock);
	l->next = ctx->live;
	ctx->live = l;
	(void)pthread_mutex_unlock(&ctx->live_lock);
}

void
http_live_remove(struct http_ctx *ctx, struct http_live *l)
{
	struct http_live **pp;

	(void)pthread_mutex_lock(&ctx->live_lock);
	for (pp = &ctx->live; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == l) {
			*pp = l->next;
			break;
		}
	}
	(void)pthread_mutex_unlock(&ctx->live_lock);
}

void
http_live_cancel_all(struct http_ctx *ctx)
{
	struct http_live *l;

	(void)pthread_mutex_lock(&ctx->live_lock);
	ctx->stopping = true;
	for (l = ctx->live; l != NULL; l = l->next)
		session_cancel_all(l->sess);
	(void)pthread_mutex_unlock(&ctx->live_lock);
}

void
http_live_abort_all(struct http_ctx *ctx)
{
	struct http_live *l;

	(void)pthread_mutex_lock(&ctx->live_lock);
	for (l = ctx->live; l != NULL; l = l->next)
		session_abort_all(l->sess);
	(void)pthread_mutex_unlock(&ctx->live_lock);
}
