/* stderr logging: one line, one write(2), so threads never interleave. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

/* Written once by main before threads start, read-only afterwards. */
static enum log_level log_threshold = LOG_INFO;

void
log_set_level(enum log_level level)
{
	log_threshold = level;
}

int
log_parse_level(const char *s, enum log_level *ret)
{
	static const char *const names[] = { "debug", "info", "warn",
	    "error", "quiet" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(s, names[i]) == 0) {
			*ret = (enum log_level)i;
			return 0;
		}
	}
	return -1;
}

void
log_msg(enum log_level level, const char *fmt, ...)
{
	static const char *const tags[] = { "debug", "info", "warn", "error" };
	char line[2048];	/* longer lines are cut, never split */
	struct timespec ts;
	struct tm tm;
	va_list ap;
	int n, m;

	if (level < log_threshold || level >= LOG_QUIET)
		return;
	(void)clock_gettime(CLOCK_REALTIME, &ts);
	(void)gmtime_r(&ts.tv_sec, &tm);
	n = snprintf(line, sizeof(line),
	    "mcp-sandbox: %04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s: ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000, tags[level]);
	if (n < 0)
		return;
	va_start(ap, fmt);
	m = vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	if (m < 0)
		return;
	n += m;
	if ((size_t)n >= sizeof(line) - 1)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	(void)!write(STDERR_FILENO, line, (size_t)n);
}
