/*
 * warm: pythons for run_code started ahead of their call (see warm.h).
 *
 * The interpreter runs WARM_WRAPPER with -c. It reads one call from its
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
#include "warm.h"

/* The most decimal digits a size_t has (2^64 - 1). */
#define SIZE_DIGITS	20


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

struct warm_one {
	char *workspace;		/* owned */
	struct sb_started *run;		/* owned */
};

struct warm {
	struct sb_ctx *sb;		/* borrowed */
	const struct policy *policy;	/* borrowed */
	struct tool_slots *slots;	/* borrowed; NULL: no other work */
	unsigned cap;
	pthread_mutex_t lock;
	pthread_cond_t wake;		/* asked to refill, or stop */
	pthread_cond_t added;		/* one more is ready */
	struct warm_one ready[POLICY_MAX_WARM_PYTHON];
	unsigned n;
	char *want;			/* owned: the workspace to keep warm */
	bool thread_on, stop;
	pthread_t thread;
};

static unsigned
count_for(const struct warm *w, const char *ws)
{
	unsigned i, k = 0;

	for (i = 0; i < w->n; i++)
		if (strcmp(w->ready[i].workspace, ws) == 0)
			k++;
	return k;
}

/* Removes entry i (lock held); returns its run for the caller. */
static struct sb_started *
remove_at(struct warm *w, unsigned i)
{
	struct sb_started *s = w->ready[i].run;

	free(w->ready[i].workspace);
	w->ready[i] = w->ready[--w->n];
	return s;
}

/* One python for ws, started the way run_code would start it cold. */
static struct sb_started *
start_one(struct warm *w, const char *ws)
{
	const struct policy *p = w->policy;
	const struct policy_language *lang =
	    &p->languages[POLICY_LANG_PYTHON3];
	const char *argv[] = { "python3", "-I", "-c", warm_wrapper, NULL };
	struct sb_bind binds[SBCALL_MAX_BINDS];
	struct sb_started *s = NULL;
	struct sb_request req;
	struct sb_result res;
	struct sbcall c;
	char **envp;

	if ((envp = sbcall_env(p)) == NULL)
		return NULL;
	memset(&c, 0, sizeof(c));
	c.program = lang->path;
	c.argv = argv;
	c.prog_binds = lang->binds;
	c.workspace_writable = true;
	/* the call's deadline is set at sb_finish(); this bounds the CPU */
	c.timeout_ms = p->limits.max_timeout_ms;
	sbcall_request(p, &c, ws, (const char *const *)envp, binds, &req);
	req.limits.start_low = true;
	if (sb_start(w->sb, &req, &s, &res) != 0)
		s = NULL;
	sb_result_fini(&res);
	sbcall_env_free(envp);
	return s;
}

/*
 * Calls are using every sandbox slot, or waiting for one: starting a
 * python now would take CPU from them (the next answer asks again).
 */
static bool
busy(const struct warm *w)
{
	uint32_t running, queued;

	if (w->slots == NULL)
		return false;
	tool_slots_stats(w->slots, &running, &queued);
	return running + queued >= w->policy->limits.max_sandboxes;
}

static void *
warm_main(void *arg)
{
	struct warm *w = arg;
	struct sb_started *s, *old;
	char *ws;
	unsigned i;

	(void)pthread_mutex_lock(&w->lock);
	while (!w->stop) {
		if (w->want == NULL || count_for(w, w->want) >= w->cap ||
		    busy(w)) {
			(void)pthread_cond_wait(&w->wake, &w->lock);
			continue;
		}
		if ((ws = strdup(w->want)) == NULL)
			break;
		(void)pthread_mutex_unlock(&w->lock);
		s = start_one(w, ws);
		old = NULL;
		(void)pthread_mutex_lock(&w->lock);
		if (s == NULL || w->stop) {
			/* cannot start one now: wait to be asked again */
			free(ws);
			sb_discard(s);
			if (!w->stop)
				(void)pthread_cond_wait(&w->wake, &w->lock);
			continue;
		}
		if (w->n == w->cap) {
			/* full of another workspace's: the oldest goes */
			for (i = 0; i < w->n; i++)
				if (strcmp(w->ready[i].workspace, ws) != 0)
					break;
			old = remove_at(w, i < w->n ? i : 0);
		}
		w->ready[w->n].workspace = ws;
		w->ready[w->n].run = s;
		w->n++;
		(void)pthread_cond_broadcast(&w->added);
		if (old != NULL) {
			(void)pthread_mutex_unlock(&w->lock);
			sb_discard(old);
			(void)pthread_mutex_lock(&w->lock);
		}
	}
	(void)pthread_mutex_unlock(&w->lock);
	return NULL;
}

struct warm *
warm_new(struct sb_ctx *sb, const struct policy *p, struct tool_slots *slots)
{
	struct warm *w;

	if (sb == NULL || p->limits.warm_python == 0 ||
	    !p->languages[POLICY_LANG_PYTHON3].available)
		return NULL;
	if ((w = calloc(1, sizeof(*w))) == NULL)
		return NULL;
	w->sb = sb;
	w->policy = p;
	w->slots = slots;
	/* policy.c refuses more; the clamp keeps ready[] safe regardless */
	w->cap = p->limits.warm_python < POLICY_MAX_WARM_PYTHON ?
	    p->limits.warm_python : POLICY_MAX_WARM_PYTHON;
	(void)pthread_mutex_init(&w->lock, NULL);
	(void)pthread_cond_init(&w->wake, NULL);
	(void)pthread_cond_init(&w->added, NULL);
	return w;
}

void
warm_free(struct warm *w)
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
	free(w->want);
	(void)pthread_cond_destroy(&w->added);
	(void)pthread_cond_destroy(&w->wake);
	(void)pthread_mutex_destroy(&w->lock);
	free(w);
}

struct sb_started *
warm_take(struct warm *w, const char *workspace)
{
	struct sb_started *s = NULL, *dead[POLICY_MAX_WARM_PYTHON];
	unsigned i = 0, ndead = 0;
	char *ws;

	if (workspace == NULL)
		return NULL;
	(void)pthread_mutex_lock(&w->lock);
	while (s == NULL && i < w->n) {
		if (strcmp(w->ready[i].workspace, workspace) != 0) {
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
	if (w->want == NULL || strcmp(w->want, workspace) != 0) {
		if ((ws = strdup(workspace)) != NULL) {
			free(w->want);
			w->want = ws;
		}
	}
	(void)pthread_mutex_unlock(&w->lock);
	for (i = 0; i < ndead; i++)
		sb_discard(dead[i]);
	return s;
}

void
warm_refill(struct warm *w)
{
	if (w == NULL)
		return;
	(void)pthread_mutex_lock(&w->lock);
	if (w->want != NULL && count_for(w, w->want) < w->cap) {
		if (!w->thread_on && !w->stop &&
		    pthread_create(&w->thread, NULL, warm_main, w) == 0)
			w->thread_on = true;
		(void)pthread_cond_signal(&w->wake);
	}
	(void)pthread_mutex_unlock(&w->lock);
}

static struct sb_started *
prestart_take(void *arg, const char *workspace)
{
	return warm_take(arg, workspace);
}

static void
prestart_refill(void *arg)
{
	warm_refill(arg);
}

void
warm_prestart(struct warm *w, struct tool_prestart *ps)
{
	memset(ps, 0, sizeof(*ps));
	if (w == NULL)
		return;
	ps->take = prestart_take;
	ps->refill = prestart_refill;
	ps->arg = w;
}

unsigned
warm_ready(struct warm *w, const char *workspace, unsigned n,
    unsigned timeout_ms)
{
	struct timespec until = ts_after_ms(CLOCK_REALTIME, timeout_ms);
	unsigned k;

	(void)pthread_mutex_lock(&w->lock);
	while ((k = count_for(w, workspace)) < n &&
	    pthread_cond_timedwait(&w->added, &w->lock, &until) == 0)
		;
	k = count_for(w, workspace);
	(void)pthread_mutex_unlock(&w->lock);
	return k;
}

char *
warm_stdin(const char *code, const char *const *args, size_t nargs,
    const void *in, size_t in_len, size_t *ret_len)
{
	size_t clen = strlen(code), len, off, i;
	char *buf;

	/* header: up to SIZE_DIGITS digits and a separator per length */
	len = clen + in_len + (nargs + 1) * (SIZE_DIGITS + 1);
	for (i = 0; i < nargs; i++)
		len += strlen(args[i]);
	if ((buf = malloc(len + 1)) == NULL)
		return NULL;
	off = (size_t)sprintf(buf, "%zu", clen);
	for (i = 0; i < nargs; i++)
		off += (size_t)sprintf(buf + off, " %zu", strlen(args[i]));
	buf[off++] = '\n';
	memcpy(buf + off, code, clen);
	off += clen;
	for (i = 0; i < nargs; i++) {
		memcpy(buf + off, args[i], strlen(args[i]));
		off += strlen(args[i]);
	}
	if (in_len > 0)
		memcpy(buf + off, in, in_len);
	off += in_len;
	buf[off] = '\0';
	*ret_len = off;
	return buf;
}
