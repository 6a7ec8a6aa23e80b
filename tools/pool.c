/*
 * pool: sandboxes built ahead of their calls (see pool.h).
 *
 * A python of the pool runs warm_wrapper with -c. It reads one call from its
 * stdin, then runs the code as `python3 -I -c CODE ARGS...` would: in the
 * real __main__ namespace (the wrapper's names removed first), with
 * sys.argv ["-c", ARGS...], sys.orig_argv as that command line, the code
 * compiled as "<string>", the rest of stdin left to the code, and an
 * uncaught exception printed by sys.excepthook without the wrapper's frame
 * (exit status 1), a SyntaxError without a traceback. What still shows the
 * wrapper: /proc/self/cmdline; the caller of the code's frame (stack
 * introspection, and the traceback of a KeyboardInterrupt, which must
 * propagate to end the interpreter by SIGINT); and the CPU rlimit, which
 * is the policy's longest deadline (the call's own deadline, shorter, is
 * what kills).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "policy.h"
#include "sbcall.h"
#include "slots.h"
#include "timespec.h"
#include "pool.h"
#include "repl.h"



static const char warm_wrapper[] =
    "def _w():\n"
    " import os, sys\n"
    " def take(n):\n"
    "  b = bytearray()\n"
    "  while len(b) < n:\n"
    "   c = os.read(0, n - len(b))\n"
    "   if not c:\n"
    "    os._exit(0)\n"
    "   b += c\n"
    "  return bytes(b)\n"
    " h = bytearray()\n"
    " while not h.endswith(b'\\n'):\n"
    "  c = os.read(0, 1)\n"
    "  if not c:\n"
    "   os._exit(0)\n"
    "  h += c\n"
    " n = [int(x) for x in h.split()]\n"
    " code = take(n[0]).decode('utf-8', 'surrogateescape')\n"
    " args = [take(k).decode('utf-8', 'surrogateescape') for k in n[1:]]\n"

    " sys.argv[:] = ['-c'] + args\n"
    " sys.orig_argv[:] = sys.orig_argv[:1] + ['-I', '-c', code] + args\n"
    " try:\n"
    "  return compile(code, '<string>', 'exec')\n"
    " except SyntaxError as e:\n"
    "  sys.excepthook(type(e), e.with_traceback(None), None)\n"
    "  raise SystemExit(1)\n"
    "_w = _w()\n"
    "try:\n"
    " exec(globals().pop('_w'), globals())\n"
    "except (SystemExit, KeyboardInterrupt):\n"
    " raise\n"
    "except BaseException as _e:\n"
    " _e.__traceback__ = _e.__traceback__.tb_next\n"
    " __import__('sys').excepthook(type(_e), _e, _e.__traceback__)\n"
    " raise SystemExit(1)\n";

/* One kind's part of the pool. */
struct pool_kind {
	unsigned cap;			/* policy: pool_size, warm_python */
	/* the shape to keep: binds borrowed, workspace owned */
	const struct prog_binds *want_binds;
	char *want_ws;
};

struct pool_one {
	enum tool_shape_kind kind;
	const struct prog_binds *binds;	/* borrowed from the policy */
	char *workspace;		/* owned */
	struct sb_started *run;		/* owned */
};

/*
 * The longest a sandbox being built ahead may take to be ready (a few ms
 * on a quiet host, tens under load): past it, it is stuck and discarded.
 */
#define POOL_READY_MS	5000

/* The most waiting at once: both kinds' policy maximums. */
#define POOL_MAX	(POLICY_MAX_POOL + POLICY_MAX_WARM_PYTHON)

struct pool {
	struct sb_ctx *sb;		/* borrowed */
	const struct policy *policy;	/* borrowed */
	struct tool_slots *slots;	/* borrowed; NULL: no other work */
	struct pool_kind kind[2];	/* by enum tool_shape_kind */
	pthread_mutex_t lock;
	pthread_cond_t wake;		/* asked to refill, or stop */
	pthread_cond_t added;		/* one more is ready */
	struct pool_one ready[POOL_MAX];
	unsigned n;
	bool thread_on, stop;
	pthread_t thread;
};

static bool
is_shape(const struct pool_one *o, enum tool_shape_kind k,
    const struct prog_binds *binds, const char *ws)
{
	return o->kind == k && o->binds == binds &&
	    strcmp(o->workspace, ws) == 0;
}

static unsigned
count_kind(const struct pool *w, enum tool_shape_kind k)
{
	unsigned i, n = 0;

	for (i = 0; i < w->n; i++)
		n += w->ready[i].kind == k;
	return n;
}

static unsigned
count_shape(const struct pool *w, enum tool_shape_kind k,
    const struct prog_binds *binds, const char *ws)
{
	unsigned i, n = 0;

	for (i = 0; i < w->n; i++)
		n += is_shape(&w->ready[i], k, binds, ws);
	return n;
}

/* Removes entry i (lock held); returns its run for the caller. */
static struct sb_started *
remove_at(struct pool *w, unsigned i)
{
	struct sb_started *s = w->ready[i].run;

	free(w->ready[i].workspace);
	w->ready[i] = w->ready[--w->n];
	return s;
}

/*
 * One sandbox of a shape, built as the call would build it cold: the same
 * request (sbcall_request) but for the program (named at the call) and the
 * deadline (the longest: the call's own is set at sb_finish(), and its
 * CPU limit lowered to it), started at idle priority.
 */
static struct sb_started *
start_one(struct pool *w, enum tool_shape_kind k,
    const struct prog_binds *binds, const char *ws)
{
	const struct policy *p = w->policy;
	const char *argv[] = { "python3", "-I", "-c", warm_wrapper, NULL };
	struct sb_bind sbinds[SBCALL_MAX_BINDS];
	struct sb_started *s = NULL;
	struct sb_request req;
	struct sb_result res;
	struct sbcall c;
	char **envp = NULL;

	memset(&c, 0, sizeof(c));
	if (k == TOOL_SHAPE_PYTHON) {
		if ((envp = sbcall_env(p)) == NULL)
			return NULL;
		c.program = p->languages[POLICY_LANG_PYTHON3].path;
		c.argv = argv;
	}
	c.prog_binds = binds;
	c.workspace_writable = true;
	c.timeout_ms = p->limits.max_timeout_ms;
	sbcall_request(p, &c, ws, (const char *const *)envp, sbinds, &req);
	req.deferred = k == TOOL_SHAPE_EXEC;
	/* a session may take it (repl.h); a plain call lowers it to its
	 * own (sb_finish: the launch, or prlimit on a started python) */
	if (p->limits.max_sessions > 0 && req.limits.cpu_s < REPL_CPU_S(p))
		req.limits.cpu_s = REPL_CPU_S(p);
	req.limits.start_low = true;
	if (sb_start(w->sb, &req, &s, &res) != 0)
		s = NULL;
	/* ready means built: a call that takes it waits for nothing */
	if (s != NULL && !sb_started_ready(s, POOL_READY_MS)) {
		sb_discard(s);
		s = NULL;
	}
	sb_result_fini(&res);
	sbcall_env_free(envp);
	return s;
}

/*
 * Calls are using every sandbox slot, or waiting for one: building one
 * now would take CPU from them (the next answer asks again).
 */
static bool
busy(const struct pool *w)
{
	uint32_t running, queued;

	if (w->slots == NULL)
		return false;
	tool_slots_stats(w->slots, &running, &queued);
	return running + queued >= w->policy->limits.max_sandboxes;
}

/* The kind to build one of next (lock held), or -1: all are full. */
static int
next_kind(const struct pool *w)
{
	int k;

	/* the pythons first: theirs is the longer start */
	for (k = TOOL_SHAPE_PYTHON; k >= TOOL_SHAPE_EXEC; k--) {
		const struct pool_kind *pk = &w->kind[k];

		if (pk->want_ws != NULL && count_shape(w,
		    (enum tool_shape_kind)k, pk->want_binds, pk->want_ws) <
		    pk->cap)
			return k;
	}
	return -1;
}

/* Adds s (lock held); the kind full of other shapes: the oldest goes. */
static struct sb_started *
add_one(struct pool *w, enum tool_shape_kind k,
    const struct prog_binds *binds, char *ws, struct sb_started *s)
{
	struct sb_started *old = NULL;
	unsigned i;

	if (count_kind(w, k) >= w->kind[k].cap) {
		for (i = 0; i < w->n; i++)
			if (w->ready[i].kind == k &&
			    !is_shape(&w->ready[i], k, binds, ws))
				break;
		if (i < w->n)
			old = remove_at(w, i);
	}
	if (w->n == POOL_MAX || count_kind(w, k) >= w->kind[k].cap) {
		free(ws);
		return s;	/* cannot be: the caller discards it */
	}
	w->ready[w->n++] = (struct pool_one){ k, binds, ws, s };
	(void)pthread_cond_broadcast(&w->added);
	return old;
}

static void *
pool_main(void *arg)
{
	struct pool *w = arg;
	const struct prog_binds *binds;
	struct sb_started *s, *old;
	char *ws;
	int k;

	/*
	 * This thread stays at the normal policy: it takes locks the calls
	 * take too (the slots', the netns and uid pools', the kernel's
	 * cgroup and mount locks), and at SCHED_IDLE under load it could
	 * hold one for long. Its sandboxes start idle (start_low).
	 */
	(void)pthread_mutex_lock(&w->lock);
	while (!w->stop) {
		if ((k = next_kind(w)) < 0 || busy(w)) {
			(void)pthread_cond_wait(&w->wake, &w->lock);
			continue;
		}
		binds = w->kind[k].want_binds;
		if ((ws = strdup(w->kind[k].want_ws)) == NULL)
			break;
		(void)pthread_mutex_unlock(&w->lock);
		s = start_one(w, (enum tool_shape_kind)k, binds, ws);
		(void)pthread_mutex_lock(&w->lock);
		if (s == NULL || w->stop) {
			/* cannot build one now: wait to be asked again */
			free(ws);
			(void)pthread_mutex_unlock(&w->lock);
			sb_discard(s);
			(void)pthread_mutex_lock(&w->lock);
			if (!w->stop)
				(void)pthread_cond_wait(&w->wake, &w->lock);
			continue;
		}
		if ((old = add_one(w, (enum tool_shape_kind)k, binds, ws, s)) !=
		    NULL) {
			(void)pthread_mutex_unlock(&w->lock);
			sb_discard(old);
			(void)pthread_mutex_lock(&w->lock);
		}
	}
	(void)pthread_mutex_unlock(&w->lock);
	return NULL;
}

struct pool *
pool_new(struct sb_ctx *sb, const struct policy *p, struct tool_slots *slots)
{
	struct pool *w;
	unsigned py = p->languages[POLICY_LANG_PYTHON3].available ?
	    p->limits.warm_python : 0;

	if (sb == NULL || (p->limits.pool_size == 0 && py == 0))
		return NULL;
	if ((w = calloc(1, sizeof(*w))) == NULL)
		return NULL;
	w->sb = sb;
	w->policy = p;
	w->slots = slots;
	/* policy.c refuses more; the clamps keep ready[] safe regardless */
	w->kind[TOOL_SHAPE_EXEC].cap = p->limits.pool_size < POLICY_MAX_POOL ?
	    p->limits.pool_size : POLICY_MAX_POOL;
	w->kind[TOOL_SHAPE_PYTHON].cap = py < POLICY_MAX_WARM_PYTHON ? py :
	    POLICY_MAX_WARM_PYTHON;
	(void)pthread_mutex_init(&w->lock, NULL);
	(void)pthread_cond_init(&w->wake, NULL);
	(void)pthread_cond_init(&w->added, NULL);
	return w;
}

void
pool_free(struct pool *w)
{
	unsigned i;

	if (w == NULL)
		return;
	(void)pthread_mutex_lock(&w->lock);
	w->stop = true;
	(void)pthread_cond_broadcast(&w->wake);
	(void)pthread_mutex_unlock(&w->lock);
	if (w->thread_on)
		(void)pthread_join(w->thread, NULL);
	for (i = 0; i < w->n; i++) {
		sb_discard(w->ready[i].run);
		free(w->ready[i].workspace);
	}
	for (i = 0; i < 2; i++)
		free(w->kind[i].want_ws);
	(void)pthread_cond_destroy(&w->added);
	(void)pthread_cond_destroy(&w->wake);
	(void)pthread_mutex_destroy(&w->lock);
	free(w);
}

struct sb_started *
pool_take(struct pool *w, const struct tool_shape *sh)
{
	struct sb_started *s = NULL, *dead[POOL_MAX];
	struct pool_kind *pk;
	unsigned i = 0, ndead = 0;
	char *ws;

	if (sh->workspace == NULL || (unsigned)sh->kind > TOOL_SHAPE_PYTHON)
		return NULL;
	pk = &w->kind[sh->kind];
	if (pk->cap == 0)
		return NULL;
	(void)pthread_mutex_lock(&w->lock);
	while (s == NULL && i < w->n) {
		if (!is_shape(&w->ready[i], sh->kind, sh->binds,
		    sh->workspace)) {
			i++;
			continue;
		}
		/* and its protected names still those of its start */
		if (sb_started_alive(w->ready[i].run) &&
		    sb_started_current(w->ready[i].run))
			s = remove_at(w, i);
		else
			dead[ndead++] = remove_at(w, i);
	}
	if (pk->want_ws == NULL || pk->want_binds != sh->binds ||
	    strcmp(pk->want_ws, sh->workspace) != 0) {
		if ((ws = strdup(sh->workspace)) != NULL) {
			free(pk->want_ws);
			pk->want_ws = ws;
			pk->want_binds = sh->binds;
		}
	}
	(void)pthread_mutex_unlock(&w->lock);
	for (i = 0; i < ndead; i++)
		sb_discard(dead[i]);
	return s;
}

void
pool_refill(struct pool *w)
{
	if (w == NULL)
		return;
	(void)pthread_mutex_lock(&w->lock);
	if (next_kind(w) >= 0) {
		if (!w->thread_on && !w->stop &&
		    pthread_create(&w->thread, NULL, pool_main, w) == 0)
			w->thread_on = true;
		(void)pthread_cond_signal(&w->wake);
	}
	(void)pthread_mutex_unlock(&w->lock);
}

static struct sb_started *
prestart_take(void *arg, const struct tool_shape *sh)
{
	return pool_take(arg, sh);
}

static void
prestart_refill(void *arg)
{
	pool_refill(arg);
}

void
pool_prestart(struct pool *w, struct tool_prestart *ps)
{
	memset(ps, 0, sizeof(*ps));
	if (w == NULL)
		return;
	ps->take = prestart_take;
	ps->refill = prestart_refill;
	ps->arg = w;
}

unsigned
pool_ready(struct pool *w, const struct tool_shape *sh, unsigned n,
    unsigned timeout_ms)
{
	struct timespec until = ts_after_ms(CLOCK_REALTIME, timeout_ms);
	unsigned k;

	(void)pthread_mutex_lock(&w->lock);
	while ((k = count_shape(w, sh->kind, sh->binds, sh->workspace)) < n &&
	    pthread_cond_timedwait(&w->added, &w->lock, &until) == 0)
		;
	k = count_shape(w, sh->kind, sh->binds, sh->workspace);
	(void)pthread_mutex_unlock(&w->lock);
	return k;
}

