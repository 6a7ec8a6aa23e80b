/*
 * Bounded concurrency of sandboxes: at most max_running at once, at most
 * max_queued callers waiting, and no caller waits longer than wait_ms.
 * Shared by every thread (internally locked). A caller beyond the queue is
 * told "busy" at once; that becomes an isError result, never a hang.
 */
#ifndef SLOTS_H
#define SLOTS_H

#include <stdbool.h>
#include <stdint.h>

struct tool_slots;

enum tool_slot_rc {
	TOOL_SLOT_OK = 0,	/* a slot is held: call tool_slots_release */
	TOOL_SLOT_BUSY,		/* all running and the queue is full */
	TOOL_SLOT_TIMEOUT,	/* queued, but no slot within wait_ms */
	TOOL_SLOT_CANCELLED,	/* *cancelled became true while queued */
};

/* NULL on allocation failure. max_running and wait_ms must be > 0. */
struct tool_slots *tool_slots_new(uint32_t max_running, uint32_t max_queued,
    uint32_t wait_ms);
void tool_slots_free(struct tool_slots *s);

/*
 * Takes a slot, waiting in the queue if needed. cancelled, if non-NULL, is
 * polled while waiting (a call cancelled in the queue leaves it); may be
 * called with NULL.
 */
enum tool_slot_rc tool_slots_acquire(struct tool_slots *s,
    bool (*cancelled)(void *arg), void *arg)
    __attribute__((warn_unused_result));
void tool_slots_release(struct tool_slots *s);

/* Snapshot for tests and --print-config: running and queued now. */
void tool_slots_stats(struct tool_slots *s, uint32_t *running,
    uint32_t *queued);

#endif
