/*
 * Tasks: calls whose work outlives the request that started them (MCP
 * tasks, 2025-11-25 core and the 2026-07-28 extension). This is the store:
 * ids, owners, status, the message of a running task, the result held
 * until its time to live has passed, and the thread that runs the work.
 * What the work is, and how results are shaped on the wire, is dispatch's.
 *
 * Everything is in memory: a server restart loses every task, and the
 * running work is killed with the server. Each task belongs to one owner
 * (the stdio client, or an HTTP principal); an id asked for by another
 * owner is answered exactly as an unknown one.
 */
#ifndef TASKS_H
#define TASKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcp_limits.h"

/* A task id: 128 random bits, in hex. */
#define TASK_ID_LEN		32
/* An owner key: "stdio", or the hex digest of an HTTP principal. */
#define TASK_OWNER_MAX		72
/* statusMessage, bytes (what the run is doing, its last line capped). */
#define TASK_MESSAGE_MAX	256

enum task_status {
	TASK_WORKING,
	TASK_COMPLETED,
	TASK_FAILED,
	TASK_CANCELLED,
};

struct task;
struct tasks;

/* The work of one task, handed to the store. */
struct task_work {
	/* On the task's own thread; ends with task_finish(). */
	void (*run)(void *arg, struct task *t);
	/* Any thread, at most once, after the status became cancelled:
	 * stop the work now (kill its sandbox). */
	void (*cancel)(void *arg);
	/* Once run has returned (or the task could not start). */
	void (*free)(void *arg);
	void *arg;
};

/* What one task looks like now: a copy, owned by the caller. */
struct task_view {
	char id[TASK_ID_LEN + 1];
	enum task_status status;
	char message[TASK_MESSAGE_MAX];	/* "" when none */
	char created[32];		/* RFC 3339, UTC, ms: TS_ISO_LEN */
	char updated[32];
	uint64_t ttl_ms;
	uint32_t poll_ms;
	bool tool_error;		/* completed with a result with isError */
	/* with a result asked for, once terminal: the JSON text of the
	 * result (completed) or of the JSON-RPC error object (failed);
	 * malloc'd, NULL otherwise */
	char *payload;
	size_t payload_len;
};

void task_view_fini(struct task_view *v);
const char *task_status_name(enum task_status st);

struct tasks *tasks_new(void);
/*
 * Cancels every running task and waits for their threads; no task starts
 * after. Transports call it before what tasks borrow (sessions,
 * workspaces) goes. tasks_free() does it too, then frees. NULL-safe.
 */
void tasks_shutdown(struct tasks *ts);
void tasks_free(struct tasks *ts);

/*
 * Starts a task of owner, kept for ttl_ms once ended, and its thread.
 * 0 and *ret filled; -1 with err filled (a cap, no thread): then the work
 * was not started and w->free was not called.
 */
int tasks_create(struct tasks *ts, const char *owner, uint64_t ttl_ms,
    const struct task_work *w, struct task_view *ret, char *err,
    size_t errlen) __attribute__((warn_unused_result));

/* On the task's thread. */
const char *task_id(const struct task *t);
/* What a working task is doing now (copied, capped, control characters
 * replaced). */
void task_set_message(struct task *t, const char *msg);
/*
 * The end of the work: payload (malloc'd JSON text of len bytes and a
 * NUL, ownership taken) is the result (tool_error: one with isError), or
 * with failed the JSON-RPC error object. A task cancelled meanwhile stays cancelled and the payload
 * is dropped. A payload past what the store may still hold
 * (MCP_TASKS_RESULT_BYTES) ends it failed with an error saying so. Returns
 * the status it ended with.
 */
enum task_status task_finish(struct task *t, char *payload, size_t len,
    bool failed, bool tool_error, const char *message);

enum tasks_rc {
	TASKS_OK,
	TASKS_UNKNOWN,		/* no such id, expired, or another owner's */
	TASKS_TERMINAL,		/* cancel: it has ended already */
	TASKS_STOPPED,		/* wait: stop() said so */
};

/* A view of id (with its payload when with_payload and terminal). */
enum tasks_rc tasks_get(struct tasks *ts, const char *owner, const char *id,
    bool with_payload, struct task_view *v);
/*
 * Waits until id is terminal, then as tasks_get with its payload. stop
 * (polled every MCP_TASK_WAIT_POLL_MS, and at server shutdown) ends the
 * wait early with TASKS_STOPPED.
 */
enum tasks_rc tasks_wait(struct tasks *ts, const char *owner, const char *id,
    bool (*stop)(void *arg), void *stop_arg, struct task_view *v);
/*
 * Cancels a working task: its status is cancelled when this returns, and
 * its run has ended (its sandbox killed and gone), or MCP_TASK_CANCEL_MS
 * has passed. *v is the task after that.
 */
enum tasks_rc tasks_cancel(struct tasks *ts, const char *owner,
    const char *id, struct task_view *v);
/*
 * owner's tasks, oldest first, after the task cursor names (NULL: from
 * the start); at most max into out. *ret_n views; next (TASK_ID_LEN + 1
 * bytes) is the cursor of the next page, or "" at the end. TASKS_UNKNOWN
 * when cursor names no task of owner.
 */
enum tasks_rc tasks_list(struct tasks *ts, const char *owner,
    const char *cursor, struct task_view *out, size_t max, size_t *ret_n,
    char *next);

#endif
