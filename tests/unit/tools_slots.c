/*
 * Unit tests of the sandbox slots: a free slot is taken at once, a full
 * queue answers busy at once, a queued caller gets a released slot, and
 * no caller waits past the bound or after being cancelled.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include <check.h>

#include "slots.h"

static long
ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1000 +
	    (t1.tv_nsec - t0->tv_nsec) / 1000000;
}

START_TEST(free_slots_are_taken_at_once)
{
	struct tool_slots *s = tool_slots_new(2, 0, 1000);
	uint32_t run, q;

	ck_assert_int_eq(tool_slots_acquire(s, NULL, NULL), TOOL_SLOT_OK);
	ck_assert_int_eq(tool_slots_acquire(s, NULL, NULL), TOOL_SLOT_OK);
	tool_slots_stats(s, &run, &q);
	ck_assert_uint_eq(run, 2);
	ck_assert_uint_eq(q, 0);
	/* queue bound 0: the third is busy without waiting */
	ck_assert_int_eq(tool_slots_acquire(s, NULL, NULL), TOOL_SLOT_BUSY);
	tool_slots_release(s);
	ck_assert_int_eq(tool_slots_acquire(s, NULL, NULL), TOOL_SLOT_OK);
	tool_slots_release(s);
	tool_slots_release(s);
	tool_slots_free(s);
}
END_TEST

START_TEST(queued_caller_times_out_at_the_bound)
{
	struct tool_slots *s = tool_slots_new(1, 1, 150);
	struct timespec t0;
	long ms;

	ck_assert_int_eq(tool_slots_acquire(s, NULL, NULL), TOOL_SLOT_OK);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(tool_slots_acquire(s, NULL, NULL), TOOL_SLOT_TIMEOUT);
	ms = ms_since(&t0);
	ck_assert_int_ge(ms, 150);
	ck_assert_int_lt(ms, 5000);
	tool_slots_release(s);
	tool_slots_free(s);
}
END_TEST

static bool
flag_set(void *arg)
{
	return atomic_load((atomic_bool *)arg);
}

struct waiter {
	struct tool_slots *s;
	atomic_bool *cancel;
	enum tool_slot_rc rc;
};

static void *
wait_slot(void *arg)
{
	struct waiter *w = arg;

	w->rc = tool_slots_acquire(w->s, w->cancel ? flag_set : NULL,
	    w->cancel);
	return NULL;
}

/* Spins until n callers are queued (bounded: the test's timeout). */
static void
until_queued(struct tool_slots *s, uint32_t n)
{
	uint32_t run, q;
	struct timespec d = { 0, 1000000 };

	for (;;) {
		tool_slots_stats(s, &run, &q);
		if (q == n)
			return;
		nanosleep(&d, NULL);
	}
}

START_TEST(queued_caller_gets_a_released_slot)
{
	struct tool_slots *s = tool_slots_new(1, 4, 30000);
	struct waiter w = { s, NULL, TOOL_SLOT_BUSY };
	pthread_t th;

	ck_assert_int_eq(tool_slots_acquire(s, NULL, NULL), TOOL_SLOT_OK);
	ck_assert_int_eq(pthread_create(&th, NULL, wait_slot, &w), 0);
	until_queued(s, 1);
	tool_slots_release(s);
	pthread_join(th, NULL);
	ck_assert_int_eq(w.rc, TOOL_SLOT_OK);
	tool_slots_release(s);
	tool_slots_free(s);
}
END_TEST

START_TEST(cancelled_caller_leaves_the_queue)
{
	struct tool_slots *s = tool_slots_new(1, 4, 30000);
	atomic_bool cancel = false;
	struct waiter w = { s, &cancel, TOOL_SLOT_OK };
	struct timespec t0;
	pthread_t th;
	uint32_t run, q;

	ck_assert_int_eq(tool_slots_acquire(s, NULL, NULL), TOOL_SLOT_OK);
	ck_assert_int_eq(pthread_create(&th, NULL, wait_slot, &w), 0);
	until_queued(s, 1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	atomic_store(&cancel, true);
	pthread_join(th, NULL);
	ck_assert_int_eq(w.rc, TOOL_SLOT_CANCELLED);
	ck_assert_int_lt(ms_since(&t0), 5000);
	tool_slots_stats(s, &run, &q);
	ck_assert_uint_eq(run, 1);
	ck_assert_uint_eq(q, 0);
	tool_slots_release(s);
	tool_slots_free(s);
}
END_TEST

START_TEST(full_queue_answers_busy_at_once)
{
	struct tool_slots *s = tool_slots_new(1, 1, 30000);
	atomic_bool cancel = false;
	struct waiter w = { s, &cancel, TOOL_SLOT_OK };
	pthread_t th;

	ck_assert_int_eq(tool_slots_acquire(s, NULL, NULL), TOOL_SLOT_OK);
	ck_assert_int_eq(pthread_create(&th, NULL, wait_slot, &w), 0);
	until_queued(s, 1);
	ck_assert_int_eq(tool_slots_acquire(s, NULL, NULL), TOOL_SLOT_BUSY);
	atomic_store(&cancel, true);
	pthread_join(th, NULL);
	tool_slots_release(s);
	tool_slots_free(s);
}
END_TEST

START_TEST(invalid_bounds_are_refused)
{
	ck_assert_ptr_null(tool_slots_new(0, 1, 1));
	ck_assert_ptr_null(tool_slots_new(1, 1, 0));
}
END_TEST

static Suite *
slots_suite(void)
{
	Suite *s = suite_create("tools_slots");
	TCase *tc = tcase_create("slots");

	tcase_add_test(tc, free_slots_are_taken_at_once);
	tcase_add_test(tc, queued_caller_times_out_at_the_bound);
	tcase_add_test(tc, queued_caller_gets_a_released_slot);
	tcase_add_test(tc, cancelled_caller_leaves_the_queue);
	tcase_add_test(tc, full_queue_answers_busy_at_once);
	tcase_add_test(tc, invalid_bounds_are_refused);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(slots_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
