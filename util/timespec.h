/*
 * Time arithmetic on struct timespec, in the units our limits are named in
 * (milliseconds for deadlines, microseconds for durations). Header only,
 * for every layer above the sandbox; sandbox/ keeps its one line of it
 * (exec.c's mono_us) so that it stays a library of libc alone.
 */
#ifndef UTIL_TIMESPEC_H
#define UTIL_TIMESPEC_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define TS_NS_PER_S	1000000000L

/* *t moved ms milliseconds later. */
static inline void
ts_add_ms(struct timespec *t, uint64_t ms)
{
	t->tv_sec += (time_t)(ms / 1000);
	t->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t->tv_nsec >= TS_NS_PER_S) {
		t->tv_sec++;
		t->tv_nsec -= TS_NS_PER_S;
	}
}

/* ms milliseconds from now on clock: CLOCK_REALTIME for
 * pthread_cond_timedwait(), CLOCK_MONOTONIC for deadlines we poll. */
static inline struct timespec
ts_after_ms(clockid_t clock, uint64_t ms)
{
	struct timespec t;

	(void)clock_gettime(clock, &t);
	ts_add_ms(&t, ms);
	return t;
}

/* Whether a is strictly earlier than b. */
static inline bool
ts_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec ||
	    (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* Microseconds from a to b; 0 when b is not later. */
static inline uint64_t
ts_us_between(const struct timespec *a, const struct timespec *b)
{
	int64_t ns;

	if (!ts_before(a, b))
		return 0;
	ns = (int64_t)(b->tv_sec - a->tv_sec) * TS_NS_PER_S +
	    (b->tv_nsec - a->tv_nsec);
	return (uint64_t)ns / 1000;
}

/* Microseconds of CLOCK_MONOTONIC since t0 (taken on that clock). */
static inline uint64_t
ts_us_since(const struct timespec *t0)
{
	struct timespec now;

	(void)clock_gettime(CLOCK_MONOTONIC, &now);
	return ts_us_between(t0, &now);
}

/* Bytes of ts_now_iso()'s text with its NUL: "2026-12-03T18:54:53.123Z". */
#define TS_ISO_LEN	32

/* Now, in UTC, to the millisecond, as RFC 3339 text (the audit's, the log's
 * and the tasks' timestamps). */
static inline void
ts_now_iso(char buf[TS_ISO_LEN])
{
	struct timespec ts;
	struct tm tm;

	(void)clock_gettime(CLOCK_REALTIME, &ts);
	(void)gmtime_r(&ts.tv_sec, &tm);
	if (strftime(buf, TS_ISO_LEN - 5, "%Y-%m-%dT%H:%M:%S", &tm) == 0)
		buf[0] = '\0';
	(void)snprintf(buf + strlen(buf), 6, ".%03uZ",
	    (unsigned)(ts.tv_nsec / 1000000) % 1000u);
}

#endif
