/*
 * stderr-only logging. stdout belongs to the stdio transport: nothing here
 * ever writes to it. Thread-safe: each line is one write(2).
 */
#ifndef LOG_H
#define LOG_H

enum log_level {
	LOG_DEBUG = 0,
	LOG_INFO,
	LOG_WARN,
	LOG_ERR,
	LOG_QUIET,
};

/* Set once in main before any thread starts. */
void log_set_level(enum log_level level);
int log_parse_level(const char *s, enum log_level *ret);

void log_msg(enum log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define log_debug(...)	log_msg(LOG_DEBUG, __VA_ARGS__)
#define log_info(...)	log_msg(LOG_INFO, __VA_ARGS__)
#define log_warn(...)	log_msg(LOG_WARN, __VA_ARGS__)
#define log_err(...)	log_msg(LOG_ERR, __VA_ARGS__)

#endif
