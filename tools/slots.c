/*
 * Sandbox slots: a counting semaphore with a bounded queue and a bounded
 * wait. Every path out of tool_slots_acquire() is taken in bounded time:
 * at once (a free slot, or busy), by a release, by cancellation (polled),
 * or by the wait deadline.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "slots.h"
#include "timespec.h"

#define SLOTS_POLL_MS	20	/* how soon a cancelled waiter notices */

struct tool_slots {
	pthread_mutex_t mu;
	pthread_cond_t cv;	/* CLOCK_MONOTONIC: a slot was released */
	uint32_t max_running;
	uint32_t max_queued;
	uint32_t wait_ms;
	uint32_t running;	/* under mu */
	uint32_t queued;	/* under mu */
};

struct tool_slots *
tool_slots_new(uint32_t max_running, uint32_t max_queued, uint32_t wait_ms)
{
	struct tool_slots *s;
	pthread_condattr_t ca;

	if (max_running == 0 || wait_ms == 0)
		return NULL;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	s->max_running = max_running;
	s->max_queued = max_queued;
	s->wait_ms = wait_ms;
	if (pthread_condattr_init(&ca) != 0)
		goto fail;
	if (pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 ||
	    pthread_cond_init(&s->cv, &ca) != 0) {
		(void)pthread_condattr_destroy(&ca);
		goto fail;
	}
	(void)pthread_condattr_destroy(&ca);
	if (pthread_mutex_init(&s->mu, NULL) != 0) {
		(void)pthread_cond_destroy(&s->cv);
		goto fail;
	}
	return s;
 fail:
	free(s);
	return NULL;
}

void
tool_slots_free(struct tool_slots *s)
{
	if (s == NULL)
		return;
	(void)pthread_cond_destroy(&s->cv);
	(void)pthread_mutex_destroy(&s->mu);
	free(s);
}

enum tool_slot_rc
tool_slots_acquire(struct tool_slots *s, bool (*cancelled)(void *arg),
    void *arg)
{
	struct timespec now, deadline, wake;
	enum tool_slot_rc rc;

	(void)pthread_mutex_lock(&s->mu);
	if (s->running < s->max_running && s->queued == 0) {
		s->running++;
		rc = TOOL_SLOT_OK;
		goto out;
	}
	if (s->queued >= s->max_queued) {
		rc = TOOL_SLOT_BUSY;
		goto out;
	}
	s->queued++;
	deadline = ts_after_ms(CLOCK_MONOTONIC, s->wait_ms);
	for (;;) {
		if (s->running < s->max_running) {
			s->running++;
			rc = TOOL_SLOT_OK;
			break;
		}
		if (cancelled != NULL && cancelled(arg)) {
			rc = TOOL_SLOT_CANCELLED;
			break;
		}
		(void)clock_gettime(CLOCK_MONOTONIC, &now);
		if (!ts_before(&now, &deadline)) {
			rc = TOOL_SLOT_TIMEOUT;
			break;
		}
		wake = now;
		if (cancelled != NULL)
			ts_add_ms(&wake, SLOTS_POLL_MS);
		if (cancelled == NULL || ts_before(&deadline, &wake))
			wake = deadline;
		(void)pthread_cond_timedwait(&s->cv, &s->mu, &wake);
	}
	s->queued--;
 out:
	(void)pthread_mutex_unlock(&s->mu);
	return rc;
}

void
tool_slots_release(struct tool_slots *s)
{
	(void)pthread_mutex_lock(&s->mu);
	if (s->running > 0)
		s->running--;
	(void)pthread_cond_broadcast(&s->cv);
	(void)pthread_mutex_unlock(&s->mu);
}

void
tool_slots_stats(struct tool_slots *s, uint32_t *running, uint32_t *queued)
{
	(void)pthread_mutex_lock(&s->mu);
	*running = s->running;
	*queued = s->queued;
	(void)pthread_mutex_unlock(&s->mu);
}
