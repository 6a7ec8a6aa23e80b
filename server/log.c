/* stderr logging: one line, one write(2), so threads never interleave. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "timespec.h"

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
	char when[TS_ISO_LEN];
	va_list ap;
	int n, m;

	if (level < log_threshold || level >= LOG_QUIET)
		return;
	ts_now_iso(when);
	n = snprintf(line, sizeof(line), "mcp-sandbox: %s %s: ", when,
	    tags[level]);
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
