/*
 * boot: the sandbox context and its pool, made on a thread of their own
 * while the server already answers (tool.h, struct tool_boot). Building
 * them costs milliseconds (cgroups, the per-run uids' user namespaces,
 * the pooled netns, the init's sealed copy): a client's initialize and
 * tools/list never wait for it; the first sandboxed call does.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "tool.h"

struct tool_boot {
	pthread_mutex_t lock;
	pthread_cond_t cv;
	bool done;
	struct sb_ctx *sb;		/* borrowed from the builder */
	struct tool_prestart prestart;
	char why[320];			/* sb NULL: why it could not be built */
};

struct tool_boot *
tool_boot_new(void)
{
	struct tool_boot *b = calloc(1, sizeof(*b));

	if (b == NULL)
		return NULL;
	(void)pthread_mutex_init(&b->lock, NULL);
	(void)pthread_cond_init(&b->cv, NULL);
	return b;
}

void
tool_boot_free(struct tool_boot *b)
{
	if (b == NULL)
		return;
	(void)pthread_cond_destroy(&b->cv);
	(void)pthread_mutex_destroy(&b->lock);
	free(b);
}

void
tool_boot_done(struct tool_boot *b, struct sb_ctx *sb,
    const struct tool_prestart *ps, const char *why)
{
	(void)pthread_mutex_lock(&b->lock);
	b->sb = sb;
	(void)snprintf(b->why, sizeof(b->why), "%s", why != NULL ? why : "");
	if (ps != NULL)
		b->prestart = *ps;
	b->done = true;
	(void)pthread_cond_broadcast(&b->cv);
	(void)pthread_mutex_unlock(&b->lock);
}

void
tool_env_sandbox(const struct tool_env *env, struct sb_ctx **sb,
    struct tool_prestart *ps, char *why, size_t whylen)
{
	struct tool_boot *b = env->boot;

	if (why != NULL && whylen > 0)
		why[0] = '\0';
	if (b == NULL) {
		*sb = env->sb;
		*ps = env->prestart;
		return;
	}
	(void)pthread_mutex_lock(&b->lock);
	while (!b->done)
		(void)pthread_cond_wait(&b->cv, &b->lock);
	*sb = b->sb;
	*ps = b->prestart;
	if (why != NULL && whylen > 0)
		(void)snprintf(why, whylen, "%s", b->why);
	(void)pthread_mutex_unlock(&b->lock);
}

void
tool_env_answered(const struct tool_env *env)
{
	struct tool_prestart ps = env->prestart;
	struct tool_boot *b = env->boot;

	if (b != NULL) {
		(void)pthread_mutex_lock(&b->lock);
		ps = b->prestart;	/* all NULL until it is done */
		(void)pthread_mutex_unlock(&b->lock);
	}
	if (ps.refill != NULL)
		ps.refill(ps.arg);
}
