/*
 * The pool: sandboxes built ahead of their calls (issue 20). Each one is
 * a whole sandbox (namespaces, root, workspace, cgroup, uid, netns, the
 * exec'd init, every layer applied) for one shape of call: a workspace
 * and what its program needs bound (struct tool_shape). Two kinds:
 *   exec    the program's process waits for the call's program, argv and
 *           env (sb_request.deferred), for run_command and run_code;
 *   python  a python3 that has started and waits on its stdin for one
 *           call (pool.c's wrapper), for run_code's python3.
 * Each is used once, then gone: taken by a call, never put back. A
 * background thread keeps up to the policy's pool_size (exec) and
 * warm_python (python) ready for the shape last asked for of each kind,
 * at idle priority where the server can give it back (root), and never
 * while calls hold every sandbox slot. Networked calls run cold.
 */
#ifndef POOL_H
#define POOL_H

#include <stddef.h>
#include <stdint.h>

#include "sandbox.h"
#include "tool.h"

/*
 * What one waiting sandbox holds, for --check: descriptors of the server
 * (its stdio and status pipes, pidfd, sync socket, cgroup dirs and OOM
 * event, its netns; 11-12 measured on cgroup v1 as root) and memory (the
 * PSS of its init and waiting process: 0.55-0.9 MiB measured, less the
 * more there are, as they share the init's pages; a python adds its
 * interpreter's). The kernel's own objects (namespaces, mounts, the
 * cgroup) come on top and count in no cgroup of the server's.
 */
#define POOL_FDS_EACH	12
#define POOL_KIB_EACH	1024

struct policy;
struct pool;
struct tool_slots;

/*
 * NULL when the policy asks for none, or no memory; the tools then run
 * every call cold. While calls hold every slot of slots (or wait for one),
 * none is built: under load it would only take CPU from those calls.
 * slots may be NULL.
 */
struct pool *pool_new(struct sb_ctx *sb, const struct policy *p,
    struct tool_slots *slots);
/* Stops the thread, kills and reaps every waiting sandbox. */
void pool_free(struct pool *w);

/* The tool_env hooks (tool.h) that reach w; all NULL when w is NULL. */
void pool_prestart(struct pool *w, struct tool_prestart *ps);

/*
 * A waiting sandbox of that shape (the caller feeds it with sb_finish()),
 * or NULL: none is ready. Either way the shape becomes the one of its kind
 * to keep. Thread-safe.
 */
struct sb_started *pool_take(struct pool *w, const struct tool_shape *sh);

/*
 * Builds the missing ones in the background. Called once a call has been
 * answered, so that the work does not compete with the answer. NULL-safe,
 * thread-safe.
 */
void pool_refill(struct pool *w);

/*
 * How many wait for that shape, once there are n of them or timeout_ms
 * has passed, whichever comes first (tests, diagnostics).
 */
unsigned pool_ready(struct pool *w, const struct tool_shape *sh, unsigned n,
    unsigned timeout_ms);

#endif
