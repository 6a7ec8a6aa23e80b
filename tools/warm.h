/*
 * Warm python: run_code's python3 started ahead of the call. Each one is a
 * fresh sandbox (the same request a cold python3 run gets, for the same
 * workspace) whose interpreter has started and waits on its stdin for one
 * call: code, args, then the call's stdin (warm.c's wrapper). Used once,
 * then gone; a background thread keeps up to the policy's warm_python of
 * them ready for the workspace last asked for. Python's own start-up
 * (most of a run_code python3 call) is then off the call's path.
 */
#ifndef WARM_H
#define WARM_H

#include <stddef.h>

#include "sandbox.h"

struct policy;
struct warm;

/*
 * NULL when the policy asks for none, python3 is unavailable, or no
 * memory; the tools then run python cold. While calls hold every slot of
 * slots (or wait for one), none is started: under load they would only take
 * CPU from those calls. slots may be NULL.
 */
struct tool_slots;
struct warm *warm_new(struct sb_ctx *sb, const struct policy *p,
    struct tool_slots *slots);
/* Stops the thread, kills and reaps every waiting python. */
void warm_free(struct warm *w);

/* The tool_env hooks (tool.h) that reach w; all NULL when w is NULL. */
struct tool_prestart;
void warm_prestart(struct warm *w, struct tool_prestart *ps);

/*
 * A waiting python for this workspace (the caller feeds it with
 * sb_finish()), or NULL: none is ready. Either way the workspace becomes
 * the one to keep warm. Thread-safe.
 */
struct sb_started *warm_take(struct warm *w, const char *workspace);

/*
 * Starts the pythons missing for that workspace, in the background. Called
 * once a call has been answered: starting one costs a python start-up of
 * CPU, which should not compete with the answer. NULL-safe, thread-safe.
 */
void warm_refill(struct warm *w);

/*
 * How many pythons wait for that workspace, once there are n of them or
 * timeout_ms has passed, whichever comes first (tests, diagnostics).
 */
unsigned warm_ready(struct warm *w, const char *workspace, unsigned n,
    unsigned timeout_ms);

/*
 * The stdin a warm python takes for one call, owned (free it): a header
 * line with the byte lengths of the code and of each argument, then
 * those bytes, then the call's stdin. NULL on allocation failure.
 */
char *warm_stdin(const char *code, const char *const *args, size_t nargs,
    const void *in, size_t in_len, size_t *ret_len);

#endif
