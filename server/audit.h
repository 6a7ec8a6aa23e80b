/*
 * The audit log: one JSON line per tools/call, appended to a file the user
 * names. It records facts only (time, session, tool, a SHA-256 of the
 * arguments, accepted or refused and why, exit, duration, timed out,
 * truncated), never the contents of arguments or output.
 */
#ifndef AUDIT_H
#define AUDIT_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

struct audit;
struct session;
struct tool_audit;

/* Opens path for appending (created 0600). NULL with err filled on failure. */
struct audit *audit_open(const char *path, char *err, size_t errlen);
void audit_close(struct audit *a);

/* Writes one line. args and result are borrowed; result may be NULL (a
 * protocol error). Thread-safe: one write(2) per line on O_APPEND. */
void audit_call(struct audit *a, const struct session *sess,
    const char *tool, const struct json_object *args,
    const struct json_object *result, const struct tool_audit *facts);

/* One line for a task's start or end: {"time", "session", "tool",
 * "event": "task_start" | "task_end", "task", "status", "duration_us"}.
 * a may be NULL (no audit log): nothing is written. */
void audit_task(struct audit *a, const struct session *sess,
    const char *tool, const char *task, const char *event,
    const char *status, uint64_t duration_us);

/* One line for an approval asked of the user: {"time", "session",
 * "principal", "tool", "event": "approval", "asked", "answer"}; asked
 * (borrowed) says what, never the call's arguments. NULL-safe. */
void audit_approval(struct audit *a, const struct session *sess,
    const char *tool, const struct json_object *asked, const char *answer);

/* "ok", "tool_error", "refused", or "error" (result NULL: a protocol
 * error). */
const char *audit_outcome(const struct json_object *result,
    const struct tool_audit *facts);

/* The call's line in the server log, at info level: tool, outcome (and the
 * reason of a refusal), exit, timed out or truncated, duration. Never the
 * arguments, the output, or the session id (over HTTP it is a credential). */
void audit_log_call(const char *tool, const struct json_object *result,
    const struct tool_audit *facts);

#endif
