/*
 * repl: run_code's sessions (repl.h). A session is a started sandbox
 * (sb_start, then sb_converse) whose program is one of the drivers below:
 * a fixed program per language that reads one call at a time from its
 * stdin, runs it in the interpreter's lasting state, and frames what the
 * call printed between two copies of the call's boundary, a string the
 * server draws at random for that call. Output before the first copy
 * (left over from an earlier call's background work) and after the
 * second is dropped, so no call's output is taken for another's. The
 * user's code reads /dev/null as its stdin: the drivers keep the real
 * one for themselves (sh closes it around the user's code; python and
 * node hold it on a descriptor of their own). What this framing does not
 * stand against is code that sets out to break it: it runs in the
 * driver's own process and can reach its descriptors and variables, and
 * so the next calls' input of the same session, the owner's own; no
 * other owner's, and no other sandbox's.
 *
 * Locking: t->lock guards the table, the ended records and every
 * session's queue, refs and dead/why; a session's sandbox is touched only
 * by the call at the head of its queue, or by whoever took the session
 * out of the table with no call left on it.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "egress.h"
#include "policy.h"
#include "warm.h"
#include "render.h"
#include "repl.h"
#include "sandbox.h"
#include "toolargs.h"

/* Random bytes of a boundary (hex-encoded after its prefix). */
#define REPL_BOUNDARY_BYTES	16
#define REPL_BOUNDARY_PREFIX	"\x1emcp-sandbox-turn-"
#define REPL_BOUNDARY_LEN	(sizeof(REPL_BOUNDARY_PREFIX) - 1 + \
	2 * REPL_BOUNDARY_BYTES)
/* The status line a driver writes after its second boundary. */
#define REPL_STATUS_MAX		32
/* The pieces the framing scans at once (a sandbox read is 64 KiB). */
#define REPL_PIECE		65536
/* How often a call queued on a busy session looks at its cancel. */
#define REPL_QUEUE_POLL_MS	100
/* An owner key: "s:" or "p:" and an id (tool.h, tool_call.owner). */
#define REPL_OWNER_MAX		96

/*
 * python3: a fresh __main__ module is the session's namespace; the value
 * of a final expression is printed as a REPL does (and kept in _). SIGINT
 * raises KeyboardInterrupt only while the user's code runs. Only builtin
 * modules at start (_ast, not ast; traceback at the first error): a
 * session's first call should cost no more than a plain one.
 */
static const char py_driver[] =
"import _ast, os, signal, sys\n"
"def _mcp_session():\n"
"    rd = os.fdopen(os.dup(0), 'rb')\n"
"    nul = os.open(os.devnull, os.O_RDONLY)\n"
"    os.dup2(nul, 0)\n"
"    os.close(nul)\n"
"    m = type(sys)('__main__')\n"
"    m.__builtins__ = __builtins__\n"
"    sys.modules['__main__'] = m\n"
"    g = m.__dict__\n"
"    on = [False]\n"
"    def intr(sig, frame):\n"
"        if on[0]:\n"
"            raise KeyboardInterrupt\n"
"    signal.signal(signal.SIGINT, intr)\n"
"    def run(src):\n"
"        try:\n"
"            on[0] = True\n"
"            try:\n"
"                t = compile(src, '<session>', 'exec', _ast.PyCF_ONLY_AST)\n"
"                last = None\n"
"                if t.body and isinstance(t.body[-1], _ast.Expr):\n"
"                    last = _ast.Expression(t.body.pop().value)\n"
"                exec(compile(t, '<session>', 'exec'), g)\n"
"                if last is not None:\n"
"                    v = eval(compile(last, '<session>', 'eval'), g)\n"
"                    if v is not None:\n"
"                        g['_'] = v\n"
"                        print(repr(v))\n"
"                return 0\n"
"            finally:\n"
"                on[0] = False\n"
"        except KeyboardInterrupt:\n"
"            print('KeyboardInterrupt', file=sys.stderr)\n"
"            return 130\n"
"        except SystemExit:\n"
"            raise\n"
"        except BaseException as e:\n"
"            import traceback\n"
"            tb = e.__traceback__\n"
"            tb = tb.tb_next if tb is not None else None\n"
"            traceback.print_exception(type(e), e, tb)\n"
"            return 1\n"
"    while True:\n"
"        h = rd.readline()\n"
"        if not h:\n"
"            return\n"
"        b, n = h.split()\n"
"        src = rd.read(int(n)).decode('utf-8', 'surrogateescape')\n"
"        b = b.decode()\n"
"        sys.stdout.write(b); sys.stdout.flush()\n"
"        sys.stderr.write(b); sys.stderr.flush()\n"
"        rc = run(src)\n"
"        for f in (sys.stdout, sys.stderr):\n"
"            try:\n"
"                f.flush()\n"
"            except Exception:\n"
"                pass\n"
"        os.write(1, ('%s%d\\n' % (b, rc)).encode())\n"
"        os.write(2, b.encode())\n"
"_mcp_session()\n";

/*
 * sh: one shell. The call's code is read up to a line that is its
 * boundary, then eval'd through `command` (a syntax error then fails the
 * call, not the shell) in a function that the interrupt's trap returns
 * from; the trap does nothing outside it (the interrupt is repeated, and
 * may come between calls). cd, variables, functions and traps of the
 * user's stay.
 */
static const char sh_driver[] =
"exec 3<&0 </dev/null\n"
"mcp_run() { command eval \"$mcp_c\"; mcp_x=$?; mcp_in=0; return $mcp_x; }\n"
"trap '[ \"$mcp_in\" = 1 ] && { mcp_i=130; mcp_in=0; return 130; }' INT\n"
"while IFS= read -r mcp_b <&3; do\n"
"  mcp_c=\n"
"  while IFS= read -r mcp_l <&3 && [ \"$mcp_l\" != \"$mcp_b\" ]; do\n"
"    mcp_c=\"$mcp_c$mcp_l\n\"\n"
"  done\n"
"  printf %s \"$mcp_b\"; printf %s \"$mcp_b\" >&2\n"
"  mcp_i=0; mcp_in=1\n"
"  mcp_run 3<&-\n"
"  mcp_r=$?\n"
"  [ \"$mcp_i\" = 0 ] || mcp_r=130\n"
"  printf '%s%s\\n' \"$mcp_b\" \"$mcp_r\"; printf %s \"$mcp_b\" >&2\n"
"done\n";

/*
 * node: the code runs in the global context (breakOnSigint: SIGINT breaks
 * a running script), so that let and const last; code with a top-level
 * await is rewritten as the REPL rewrites it (node's own transform, with
 * --expose-internals; without it such code is a syntax error), and an
 * interrupt ends the wait for it. A final expression's value is shown.
 * It reads its calls on fd 3 (node_exec): the user's stdin is /dev/null.
 */
static const char node_driver[] =
"const vm = require('vm'), util = require('util');\n"
"globalThis.require = require;\n"
"let tla = null;\n"
"try { tla = require('internal/repl/await').processTopLevelAwait; } catch (e) {}\n"
"let onInt = null;\n"
"process.on('SIGINT', () => { if (onInt) onInt(); });\n"
"function run(code, done) {\n"
"  let src = code, wrapped = false, v;\n"
"  try { new vm.Script(code); } catch (e) {\n"
"    const w = tla && e instanceof SyntaxError ? tla(code) : null;\n"
"    if (w !== null) { src = w; wrapped = true; }\n"
"  }\n"
"  try {\n"
"    v = vm.runInThisContext(src, { filename: '<session>', breakOnSigint: true });\n"
"  } catch (e) { return done(e); }\n"
"  if (!wrapped) return done(null, v);\n"
"  let over = false;\n"
"  const end = (e, x) => { if (!over) { over = true; onInt = null; done(e, x); } };\n"
"  onInt = () => end(new Error('Script execution was interrupted by `SIGINT`'));\n"
"  Promise.resolve(v).then((x) => end(null, x === undefined ? x : x.value), end);\n"
"}\n"
"function say(e) {\n"
"  try { if (!(e instanceof Error) || !e.stack) return String(e); }\n"
"  catch (x) { return 'an exception that cannot be shown'; }\n"
"  const l = e.stack.split('\\n'), k = l.findIndex((x) => /node:vm|\\[eval\\]/.test(x));\n"
"  return (k < 0 ? l : l.slice(0, k)).join('\\n');\n"
"}\n"
"let buf = Buffer.alloc(0), busy = false;\n"
"function next() {\n"
"  if (busy) return;\n"
"  const nl = buf.indexOf(10);\n"
"  if (nl < 0) return;\n"
"  const [b, n] = buf.subarray(0, nl).toString().split(' ');\n"
"  const len = Number(n);\n"
"  if (buf.length < nl + 1 + len) return;\n"
"  const code = buf.subarray(nl + 1, nl + 1 + len).toString();\n"
"  buf = buf.subarray(nl + 1 + len);\n"
"  busy = true;\n"
"  process.stdout.write(b); process.stderr.write(b);\n"
"  run(code, (err, v) => {\n"
"    let rc = 0;\n"
"    if (err) {\n"
"      rc = /interrupted by/.test(String(err && err.message)) ? 130 : 1;\n"
"      process.stderr.write(say(err) + '\\n');\n"
"    } else if (v !== undefined) {\n"
"      let t;\n"
"      try { t = util.inspect(v); } catch (x) { t = '(a value that cannot be shown)'; }\n"
"      process.stdout.write(t + '\\n');\n"
"    }\n"
"    process.stdout.write(b + rc + '\\n'); process.stderr.write(b);\n"
"    busy = false;\n"
"    setImmediate(next);\n"
"  });\n"
"}\n"
"const input = require('fs').createReadStream(null, { fd: 3 });\n"
"input.on('data', (d) => { buf = Buffer.concat([buf, d]); next(); });\n"
"input.on('end', () => process.exit(0));\n";

/* node's start: its driver reads fd 3; its stdin is /dev/null. */
static const char node_exec[] =
    "exec \"$0\" --expose-internals -e \"$1\" 3<&0 </dev/null";

/* A call waiting for its session, or running on it (the queue's head). */
struct repl_waiter {
	struct repl_waiter *next;
};

struct repl {
	struct repls *t;
	char owner[REPL_OWNER_MAX];
	char name[REPL_NAME_MAX + 1];
	int lang;
	struct sb_started *sb;		/* NULL until its first call starts it */
	uint64_t born_ms, last_ms;	/* started; its last call ended */
	unsigned calls;
	unsigned refs;			/* calls queued or running */
	struct repl_waiter *head, *tail;
	pthread_cond_t moved;		/* the queue moved */
	/* a python built ahead runs the driver as its call's code: what
	 * goes before the first call's input (pool.h, warm_stdin) */
	char *prefix;
	size_t prefix_len;
	/* with network: the proxy's listening socket in its netns (the
	 * sandbox's), and the call serving it now (the turn's only) */
	bool net;
	int lfd;
	struct egress_call *cur_ec;
	bool in_table;
	bool dead;			/* ended: why says so */
	char why[160];
};

struct ended {
	char owner[REPL_OWNER_MAX];
	char name[REPL_NAME_MAX + 1];
	int lang;
	char why[160];
	bool used;
};

/*
 * A session's sandbox, started on the table's own thread: the init dies
 * with the thread that cloned it (PR_SET_PDEATHSIG is per thread), and a
 * call's thread may be gone long before its session (HTTP's are per
 * connection).
 */
struct start_job {
	struct repl *r;
	struct sb_ctx *sb;
	const struct sb_request *req;
	struct sb_result *res;
	int rc;
	bool done;
};

struct repls {
	pthread_mutex_t lock;
	pthread_cond_t wake;		/* the thread's: a job, an end, stop */
	pthread_cond_t job_done;	/* a start_job is done or taken */
	struct start_job *job;
	const struct policy *p;
	struct repl *open[REPL_MAX];
	size_t n;
	struct ended ended[REPL_ENDED_KEPT];
	size_t next_ended;
	pthread_t reaper;
	bool reaper_on, stop;
};

/* The framing of one call's output: see the top of this file. */
enum frame_phase { BEFORE, BODY, STATUS, DONE };
struct frame {
	char b[REPL_BOUNDARY_LEN + 1];
	struct {
		enum frame_phase phase;
		char hold[REPL_BOUNDARY_LEN];
		size_t hold_len;
	} s[2];
	char status[REPL_STATUS_MAX + 1];
	size_t status_len;
	/* the session's first call: what comes before its boundary is the
	 * interpreter's start (an error there), kept, not dropped */
	bool first;
	char *work;			/* REPL_PIECE + REPL_BOUNDARY_LEN */
};

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* What an interval reads as in a message: "10 min", "90 s". */
static void
say_ms(uint64_t ms, char *buf, size_t len)
{
	if (ms >= 60000 && ms % 60000 == 0)
		(void)snprintf(buf, len, "%llu min",
		    (unsigned long long)(ms / 60000));
	else
		(void)snprintf(buf, len, "%llu s",
		    (unsigned long long)((ms + 999) / 1000));
}

/* ---- the table (t->lock held) ---- */

static struct repl *
find_locked(struct repls *t, const char *owner, const char *name)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (strcmp(t->open[i]->owner, owner) == 0 &&
		    strcmp(t->open[i]->name, name) == 0)
			return t->open[i];
	return NULL;
}

static struct ended *
find_ended_locked(struct repls *t, const char *owner, const char *name)
{
	size_t i;

	for (i = 0; i < REPL_ENDED_KEPT; i++)
		if (t->ended[i].used && strcmp(t->ended[i].owner, owner) == 0 &&
		    strcmp(t->ended[i].name, name) == 0)
			return &t->ended[i];
	return NULL;
}

static size_t
count_locked(struct repls *t, const char *owner)
{
	size_t i, n = 0;

	for (i = 0; i < t->n; i++)
		n += strcmp(t->open[i]->owner, owner) == 0;
	return n;
}

/* r leaves the table, remembered as ended with its why. */
static void
unlink_locked(struct repls *t, struct repl *r)
{
	struct ended *e;
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->open[i] == r) {
			t->open[i] = t->open[--t->n];
			break;
		}
	r->in_table = false;
	if ((e = find_ended_locked(t, r->owner, r->name)) == NULL) {
		e = &t->ended[t->next_ended];
		t->next_ended = (t->next_ended + 1) % REPL_ENDED_KEPT;
	}
	(void)snprintf(e->owner, sizeof(e->owner), "%s", r->owner);
	(void)snprintf(e->name, sizeof(e->name), "%s", r->name);
	(void)snprintf(e->why, sizeof(e->why), "%s", r->why);
	e->lang = r->lang;
	e->used = true;
}

static void
end_locked(struct repls *t, struct repl *r, const char *why)
{
	if (!r->dead)
		(void)snprintf(r->why, sizeof(r->why), "%s", why);
	r->dead = true;
	if (r->in_table)
		unlink_locked(t, r);
}

static void
repl_free(struct repl *r)
{
	sb_discard(r->sb);
	free(r->prefix);
	(void)pthread_cond_destroy(&r->moved);
	free(r);
}

static int start(struct repl *r, struct sb_ctx *sb,
    const struct sb_request *req, const struct policy *p,
    struct sb_result *res);

/* ---- the table's thread: starts, idle and age ends ---- */

static void *
reaper_main(void *arg)
{
	struct repls *t = arg;
	const struct policy_limits *l = &t->p->limits;
	struct repl *gone[REPL_MAX];
	struct timespec until;
	uint64_t now, next, at;
	size_t i, ngone;
	char say[32], why[160];

	(void)pthread_mutex_lock(&t->lock);
	for (;;) {
		/* a start asked for is done even when stopping: its caller
		 * waits for it */
		if (t->job != NULL && !t->job->done) {
			struct start_job *j = t->job;

			(void)pthread_mutex_unlock(&t->lock);
			j->rc = start(j->r, j->sb, j->req, t->p, j->res);
			(void)pthread_mutex_lock(&t->lock);
			j->done = true;
			t->job = NULL;
			(void)pthread_cond_broadcast(&t->job_done);
			continue;
		}
		if (t->stop)
			break;
		now = now_ms();
		next = now + 60000;
		ngone = 0;
		for (i = 0; i < t->n; i++) {
			struct repl *r = t->open[i];

			if (r->refs > 0)
				continue;
			why[0] = '\0';
			if (now - r->last_ms >= l->session_idle_ms) {
				say_ms(l->session_idle_ms, say, sizeof(say));
				(void)snprintf(why, sizeof(why),
				    "it was idle for %s", say);
			} else if (now - r->born_ms >= l->session_max_age_ms) {
				say_ms(l->session_max_age_ms, say, sizeof(say));
				(void)snprintf(why, sizeof(why),
				    "it reached the maximum age of %s", say);
			}
			if (why[0] != '\0') {
				end_locked(t, r, why);
				gone[ngone++] = r;
				i--;	/* unlink moved the last one here */
				continue;
			}
			at = r->last_ms + l->session_idle_ms;
			if (r->born_ms + l->session_max_age_ms < at)
				at = r->born_ms + l->session_max_age_ms;
			if (at < next)
				next = at;
		}
		if (ngone > 0) {
			(void)pthread_mutex_unlock(&t->lock);
			for (i = 0; i < ngone; i++)
				repl_free(gone[i]);
			(void)pthread_mutex_lock(&t->lock);
			continue;
		}
		(void)clock_gettime(CLOCK_MONOTONIC, &until);
		next -= now;
		until.tv_sec += (time_t)(next / 1000);
		until.tv_nsec += (long)(next % 1000) * 1000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		(void)pthread_cond_timedwait(&t->wake, &t->lock, &until);
	}
	(void)pthread_mutex_unlock(&t->lock);
	return NULL;
}

struct repls *
repls_new(const struct policy *p)
{
	struct repls *t;
	pthread_condattr_t ca;

	if ((t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	t->p = p;
	(void)pthread_mutex_init(&t->lock, NULL);
	(void)pthread_condattr_init(&ca);
	(void)pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	(void)pthread_cond_init(&t->wake, &ca);
	(void)pthread_condattr_destroy(&ca);
	(void)pthread_cond_init(&t->job_done, NULL);
	if (pthread_create(&t->reaper, NULL, reaper_main, t) != 0) {
		repls_free(t);
		return NULL;
	}
	t->reaper_on = true;
	return t;
}

void
repls_free(struct repls *t)
{
	size_t i;

	if (t == NULL)
		return;
	(void)pthread_mutex_lock(&t->lock);
	t->stop = true;
	(void)pthread_cond_signal(&t->wake);
	(void)pthread_mutex_unlock(&t->lock);
	if (t->reaper_on)
		(void)pthread_join(t->reaper, NULL);
	/* no call runs any more (the transports are done) */
	for (i = 0; i < t->n; i++)
		repl_free(t->open[i]);
	(void)pthread_cond_destroy(&t->wake);
	(void)pthread_cond_destroy(&t->job_done);
	(void)pthread_mutex_destroy(&t->lock);
	free(t);
}

void
repls_end_owner(struct repls *t, const char *owner, const char *why)
{
	struct repl *gone[REPL_MAX];
	size_t i, n = 0;

	if (t == NULL)
		return;
	(void)pthread_mutex_lock(&t->lock);
	for (i = 0; i < t->n; i++) {
		struct repl *r = t->open[i];

		if (owner != NULL && strcmp(r->owner, owner) != 0)
			continue;
		end_locked(t, r, why);
		i--;	/* unlink moved the last one here */
		if (r->refs == 0)
			gone[n++] = r;
	}
	(void)pthread_mutex_unlock(&t->lock);
	for (i = 0; i < n; i++)
		repl_free(gone[i]);
}

/* ---- a call's turn ---- */

/* A refusal: the audit's reason, then the message (printf). */
#define REFUSE(call, reason, ...) \
	(render_refused((call)->audit, (reason)), tool_result_error(__VA_ARGS__))

/* A new session in the table for q, or a refusal (t->lock held). */
static struct json_object *
open_locked(struct repls *t, const struct tool_call *call,
    struct repl_call *q, bool *nomem)
{
	const struct policy_limits *l = &t->p->limits;
	struct ended *e = find_ended_locked(t, call->owner, q->name);
	struct repl *r;
	char n[24];

	if (e != NULL && !q->restart)
		return REFUSE(call, "session ended", "The session '%s' ended "
		    "(%s), so what it held is gone. Call again with \"restart\": "
		    "true to start it afresh, or use another name.", q->name,
		    e->why);
	if (l->max_sessions == 0)
		return REFUSE(call, "sessions off", "This server takes no "
		    "sessions (max_sessions is 0): call run_code without "
		    "session.");
	if (count_locked(t, call->owner) >= l->sessions_per_client) {
		(void)snprintf(n, sizeof(n), "%u", l->sessions_per_client);
		return REFUSE(call, "too many sessions", "%s sessions are open "
		    "for this client, its most; end one with end_session "
		    "(list_sessions lists them).", n);
	}
	if (t->n >= l->max_sessions || t->n >= REPL_MAX) {
		(void)snprintf(n, sizeof(n), "%zu", t->n);
		return REFUSE(call, "too many sessions", "The server holds %s "
		    "sessions, its most (max_sessions); end one of yours "
		    "with end_session or try again later.", n);
	}
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		*nomem = true;
		return NULL;
	}
	(void)snprintf(r->owner, sizeof(r->owner), "%s", call->owner);
	(void)snprintf(r->name, sizeof(r->name), "%s", q->name);
	r->t = t;
	r->lfd = -1;
	r->lang = q->lang;
	r->born_ms = r->last_ms = now_ms();
	(void)pthread_cond_init(&r->moved, NULL);
	r->in_table = true;
	t->open[t->n++] = r;
	if (e != NULL)
		e->used = false;
	q->started = true;
	return NULL;
}

/*
 * w leaves r's queue (t->lock held), and the next call gets its turn.
 * true: r ended and nothing holds it any more, the caller frees it.
 */
static bool
dequeue_locked(struct repls *t, struct repl *r, struct repl_waiter *w)
{
	struct repl_waiter **pp;

	for (pp = &r->head; *pp != NULL; pp = &(*pp)->next)
		if (*pp == w) {
			*pp = w->next;
			break;
		}
	r->tail = r->head;
	while (r->tail != NULL && r->tail->next != NULL)
		r->tail = r->tail->next;
	r->refs--;
	(void)pthread_cond_broadcast(&r->moved);
	(void)pthread_cond_signal(&t->wake);
	return r->dead && r->refs == 0;
}

/*
 * Takes a place at the end of r's queue and waits until it heads it:
 * NULL, or the refusal of a call cancelled meanwhile (out of the queue
 * then; *gone: r is the caller's to free).
 */
static struct json_object *
queue_on(struct repls *t, const struct tool_call *call, struct repl *r,
    struct repl_waiter *w, bool *gone)
{
	struct timespec until;

	w->next = NULL;
	if (r->tail != NULL)
		r->tail->next = w;
	else
		r->head = w;
	r->tail = w;
	r->refs++;
	while (r->head != w) {
		if (call->cancel != NULL && sb_cancel_fired(call->cancel)) {
			*gone = dequeue_locked(t, r, w);
			return REFUSE(call, "cancelled while queued", "The "
			    "call was cancelled while it waited for its "
			    "session.");
		}
		(void)clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += REPL_QUEUE_POLL_MS * 1000000L;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		(void)pthread_cond_timedwait(&r->moved, &t->lock, &until);
	}
	return NULL;
}

struct json_object *
repl_enter(const struct tool_call *call, struct repl_call *q, bool *nomem)
{
	struct repls *t = call->env->repls;
	struct json_object *no = NULL;
	struct repl *r, *gone1 = NULL, *gone2 = NULL;
	struct repl_waiter *w;
	bool gone = false;

	*nomem = false;
	q->r = NULL;
	q->w = NULL;
	if (t == NULL)
		return REFUSE(call, "sessions off", "This server takes no "
		    "sessions: call run_code without session.");
	if ((w = calloc(1, sizeof(*w))) == NULL) {
		*nomem = true;
		return NULL;
	}
	(void)pthread_mutex_lock(&t->lock);
	r = find_locked(t, call->owner, q->name);
	if (r != NULL && q->restart) {
		/* after the calls queued before ours, it ends */
		if ((no = queue_on(t, call, r, w, &gone)) != NULL) {
			gone1 = gone ? r : NULL;
			goto out;
		}
		end_locked(t, r, "a call restarted it (restart: true)");
		gone1 = dequeue_locked(t, r, w) ? r : NULL;
		/* one another call opened meanwhile is as fresh: ours too */
		r = find_locked(t, call->owner, q->name);
	}
	if (r != NULL && r->lang != q->lang) {
		no = REFUSE(call, "session of another language", "The session "
		    "'%s' is a %s session, and this call is %s. Call again with "
		    "that language, with restart: true to start it afresh in "
		    "yours, or with another session name.", q->name,
		    policy_lang_name(r->lang), policy_lang_name(q->lang));
		goto out;
	}
	if (r == NULL) {
		if ((no = open_locked(t, call, q, nomem)) != NULL || *nomem)
			goto out;
		r = t->open[t->n - 1];
	}
	if ((no = queue_on(t, call, r, w, &gone)) != NULL) {
		gone2 = gone ? r : NULL;
		goto out;
	}
	if (r->dead) {
		no = REFUSE(call, "session ended", "The session '%s' ended (%s) "
		    "while this call waited. Call again with \"restart\": true "
		    "to start it afresh.", q->name, r->why);
		gone2 = dequeue_locked(t, r, w) ? r : NULL;
		goto out;
	}
	q->r = r;
	q->w = w;
	w = NULL;
 out:
	(void)pthread_mutex_unlock(&t->lock);
	free(w);
	if (gone1 != NULL)
		repl_free(gone1);
	if (gone2 != NULL)
		repl_free(gone2);
	return no;
}

void
repl_leave(struct repl_call *q)
{
	struct repl *r = q->r;
	struct repls *t;
	uint64_t now = now_ms();
	bool gone;
	char say[32], why[96];

	if (r == NULL)
		return;
	t = r->t;
	(void)pthread_mutex_lock(&t->lock);
	r->last_ms = now;
	if (!r->dead && now - r->born_ms >= t->p->limits.session_max_age_ms) {
		say_ms(t->p->limits.session_max_age_ms, say, sizeof(say));
		(void)snprintf(why, sizeof(why), "it reached the maximum age "
		    "of %s", say);
		end_locked(t, r, why);
		if (q->ended[0] == '\0')
			(void)snprintf(q->ended, sizeof(q->ended), "%s", why);
	}
	gone = dequeue_locked(t, r, q->w);
	(void)pthread_mutex_unlock(&t->lock);
	free(q->w);
	q->w = NULL;
	q->r = NULL;
	if (gone)
		repl_free(r);
}

/* ---- the framing ---- */

static int
frame_init(struct frame *f, const char *code, bool first)
{
	unsigned char rnd[REPL_BOUNDARY_BYTES];
	size_t i, w;

	memset(f, 0, sizeof(*f));
	do {
		if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
			return -EIO;
		w = (size_t)snprintf(f->b, sizeof(f->b), "%s",
		    REPL_BOUNDARY_PREFIX);
		for (i = 0; i < sizeof(rnd); i++, w += 2)
			(void)snprintf(f->b + w, sizeof(f->b) - w, "%02x",
			    rnd[i]);
	} while (strstr(code, f->b) != NULL);	/* 2^-128: never, but exact */
	f->first = first;
	if ((f->work = malloc(REPL_PIECE + REPL_BOUNDARY_LEN)) == NULL)
		return -ENOMEM;
	return 0;
}

/* One piece of a stream: held-back bytes, then buf (n <= REPL_PIECE). */
static void
frame_piece(struct frame *f, int i, const char *buf, size_t n,
    struct sb_output *o)
{
	size_t len = f->s[i].hold_len + n, off = 0, keep, take;
	char *w = f->work, *m, *nl;

	memcpy(w, f->s[i].hold, f->s[i].hold_len);
	memcpy(w + f->s[i].hold_len, buf, n);
	f->s[i].hold_len = 0;
	while (off < len && f->s[i].phase != DONE) {
		if (f->s[i].phase == STATUS) {
			nl = memchr(w + off, '\n', len - off);
			take = nl != NULL ? (size_t)(nl - (w + off)) : len - off;
			if (take > REPL_STATUS_MAX - f->status_len)
				take = REPL_STATUS_MAX - f->status_len;
			memcpy(f->status + f->status_len, w + off, take);
			f->status_len += take;
			if (nl != NULL) {
				f->s[i].phase = DONE;
				break;
			}
			return;
		}
		m = memmem(w + off, len - off, f->b, REPL_BOUNDARY_LEN);
		if (m == NULL) {
			/* a boundary may start in the last bytes: held back */
			keep = len - off < REPL_BOUNDARY_LEN - 1 ? len - off :
			    REPL_BOUNDARY_LEN - 1;
			if (f->s[i].phase == BODY || (f->s[i].phase == BEFORE &&
			    f->first))
				sb_output_append(o, w + off, len - off - keep);
			memcpy(f->s[i].hold, w + len - keep, keep);
			f->s[i].hold_len = keep;
			return;
		}
		if (f->s[i].phase == BODY || (f->s[i].phase == BEFORE &&
		    f->first))
			sb_output_append(o, w + off, (size_t)(m - (w + off)));
		off = (size_t)(m - w) + REPL_BOUNDARY_LEN;
		f->s[i].phase = f->s[i].phase == BEFORE ? BODY :
		    i == 0 ? STATUS : DONE;
	}
}

static bool
frame_sink(void *arg, int stream, const char *buf, size_t n,
    struct sb_output *o)
{
	struct frame *f = arg;
	int i = stream == 1 ? 0 : 1;
	size_t k;

	while (n > 0) {
		k = n < REPL_PIECE ? n : REPL_PIECE;
		frame_piece(f, i, buf, k, o);
		buf += k;
		n -= k;
	}
	return f->s[0].phase == DONE && f->s[1].phase == DONE;
}

/*
 * The driver's input for one call: its boundary, then the code; the
 * first call's behind the prefix, if any (which it takes).
 */
static char *
turn_input(struct repl *r, const struct frame *f, const char *code,
    size_t *ret_len)
{
	size_t len = strlen(code), cap = r->prefix_len + len +
	    2 * REPL_BOUNDARY_LEN + 32;
	char *in;
	int n;

	if ((in = malloc(cap)) == NULL)
		return NULL;
	if (r->prefix_len > 0)
		memcpy(in, r->prefix, r->prefix_len);
	if (r->lang == POLICY_LANG_SH)
		n = snprintf(in + r->prefix_len, cap - r->prefix_len,
		    "%s\n%s\n%s\n", f->b, code, f->b);
	else
		n = snprintf(in + r->prefix_len, cap - r->prefix_len,
		    "%s %zu\n%s", f->b, len, code);
	*ret_len = r->prefix_len + (size_t)n;
	free(r->prefix);
	r->prefix = NULL;
	r->prefix_len = 0;
	return in;
}

/* ---- starting and running ---- */

/*
 * The sandbox's proxy socket (sb_request.net_listener): kept at the start,
 * served by the call of the turn (repl_turn) and by nothing between two.
 */
static int
net_event(void *arg, int lfd, enum sb_net_event ev)
{
	struct repl *r = arg;

	switch (ev) {
	case SB_NET_LISTENING:
		r->lfd = lfd;
		return 0;
	case SB_NET_READY:
		return r->cur_ec != NULL ? egress_call_accept(r->cur_ec) : 0;
	case SB_NET_CLOSING:
		r->lfd = -1;
		return 0;
	}
	return -EINVAL;
}

const char *
repl_net_refusal(const struct repl_call *q, bool net)
{
	if (q->r->sb == NULL || q->r->net == net)
		return NULL;
	return q->r->net ? "the session was started with network, and keeps "
	    "it: call again without network: false, or with another session" :
	    "the session was started without network, and keeps to that: "
	    "call again with network: false, or start another session for a "
	    "call with network";
}

/* A session's request: req's sandbox, with its interpreter and driver. */
static void
driver_request(struct repl *r, const struct sb_request *req,
    const struct policy *p, const char *argv[6], struct sb_request *s)
{
	*s = *req;
	if (s->network == SB_NET_PROXY) {
		s->net_listener = net_event;
		s->net_arg = r;
	}
	argv[0] = policy_lang_name(r->lang);
	switch (r->lang) {
	case POLICY_LANG_PYTHON3:
		argv[1] = "-I";
		argv[2] = "-c";
		argv[3] = py_driver;
		argv[4] = NULL;
		break;
	case POLICY_LANG_NODE:
		/* node cannot move its stdin aside itself: sh does */
		argv[0] = "sh";
		argv[1] = "-c";
		argv[2] = node_exec;
		argv[3] = p->languages[r->lang].path;
		argv[4] = node_driver;
		argv[5] = NULL;
		break;
	default:
		argv[1] = "-c";
		argv[2] = sh_driver;
		argv[3] = NULL;
		break;
	}
	s->program = r->lang == POLICY_LANG_NODE ? p->sh_path :
	    p->languages[r->lang].path;
	s->argv = argv;
	s->stdin_data = NULL;
	s->stdin_len = 0;
	s->deferred = false;
	s->limits.start_low = false;
	s->limits.cpu_s = REPL_CPU_S(p);
}

/*
 * A sandbox built ahead for the call's shape, if one waits (pool.h): the
 * pool's thread cloned it, and outlives every session. 0, or -1: none.
 */
static int
take_pooled(struct repl *r, const struct tool_prestart *ps,
    const struct prog_binds *binds, const struct sb_request *req,
    const struct policy *p, struct sb_result *res)
{
	struct tool_shape sh = { TOOL_SHAPE_PYTHON, binds, req->workspace_host };
	const char *argv[6];
	struct sb_request s;

	/* none is built with network */
	if (ps->take == NULL || req->network != SB_NET_NONE)
		return -1;
	/* a python that has started: the driver is its call's code */
	if (r->lang == POLICY_LANG_PYTHON3 && p->limits.warm_python > 0 &&
	    (r->sb = ps->take(ps->arg, &sh)) != NULL) {
		if ((r->prefix = warm_stdin(py_driver, NULL, 0, NULL, 0, 0,
		    &r->prefix_len)) != NULL && sb_converse(r->sb, req,
		    res) == 0)
			return 0;
		free(r->prefix);
		r->prefix = NULL;
		sb_discard(r->sb);
		r->sb = NULL;
		memset(res, 0, sizeof(*res));
	}
	sh.kind = TOOL_SHAPE_EXEC;
	if ((r->sb = ps->take(ps->arg, &sh)) == NULL)
		return -1;
	driver_request(r, req, p, argv, &s);
	if (sb_converse(r->sb, &s, res) == 0)
		return 0;
	sb_discard(r->sb);
	r->sb = NULL;
	memset(res, 0, sizeof(*res));
	return -1;
}

/* A sandbox of the session's own (on the table's thread). */
static int
start(struct repl *r, struct sb_ctx *sb, const struct sb_request *req,
    const struct policy *p, struct sb_result *res)
{
	const char *argv[6];
	struct sb_request s;
	int rc;

	driver_request(r, req, p, argv, &s);
	r->net = s.network == SB_NET_PROXY;
	if ((rc = sb_start(sb, &s, &r->sb, res)) < 0) {
		r->sb = NULL;
		return rc;
	}
	if ((rc = sb_converse(r->sb, &s, res)) < 0) {
		sb_discard(r->sb);
		r->sb = NULL;
	}
	return rc;
}

/* start() on the table's thread (struct start_job says why). */
static int
start_there(struct repl *r, struct sb_ctx *sb, const struct sb_request *req,
    struct sb_result *res)
{
	struct repls *t = r->t;
	struct start_job j = { r, sb, req, res, 0, false };

	(void)pthread_mutex_lock(&t->lock);
	while (t->job != NULL)
		(void)pthread_cond_wait(&t->job_done, &t->lock);
	if (t->stop) {
		(void)pthread_mutex_unlock(&t->lock);
		(void)snprintf(res->message, sizeof(res->message), "the server "
		    "is stopping");
		res->failed_stage = SB_STAGE_RESOURCES;
		res->err = ESHUTDOWN;
		return -ESHUTDOWN;
	}
	t->job = &j;
	(void)pthread_cond_signal(&t->wake);
	while (!j.done)
		(void)pthread_cond_wait(&t->job_done, &t->lock);
	(void)pthread_mutex_unlock(&t->lock);
	return j.rc;
}

/* How a session's run ended, for the next call and this one's result. */
static void
ended_why(const struct sb_result *res, char *why, size_t len)
{
	if (res->oom)
		(void)snprintf(why, len, "it ran out of memory at %llu MiB",
		    (unsigned long long)(res->memory_limit_bytes >> 20));
	else if (res->interrupted && res->signal == SIGKILL && !res->exited)
		(void)snprintf(why, len, "it did not come back within %u ms "
		    "of the interrupt and was killed", REPL_GRACE_MS);
	else if (res->exited)
		(void)snprintf(why, len, "its interpreter exited with status %d",
		    res->exit_code);
	else
		(void)snprintf(why, len, "its interpreter was killed by signal "
		    "%d", res->signal);
}

int
repl_turn(struct repl_call *q, struct sb_ctx *sb,
    const struct tool_prestart *ps, const struct prog_binds *binds,
    const struct sb_request *req, struct egress_call *ec,
    struct sb_cancel *cancel, struct sb_result *res)
{
	struct repl *r = q->r;
	const struct policy *p = r->t->p;
	struct sb_turn turn;
	struct frame f;
	char *in = NULL;
	size_t in_len;
	long st;
	int rc;

	memset(res, 0, sizeof(*res));
	/* one built ahead is the pool thread's; else ours builds one */
	if (r->sb == NULL && take_pooled(r, ps, binds, req, p, res) < 0 &&
	    (rc = start_there(r, sb, req, res)) < 0) {
		(void)snprintf(q->ended, sizeof(q->ended), "its sandbox could "
		    "not start");
		goto dead;
	}
	if ((rc = frame_init(&f, q->code, r->calls == 0)) < 0 ||
	    (in = turn_input(r, &f, q->code, &in_len)) == NULL) {
		free(f.work);
		rc = rc < 0 ? rc : -ENOMEM;
		memset(res, 0, sizeof(*res));
		(void)snprintf(res->message, sizeof(res->message), "%s",
		    rc == -ENOMEM ? "no memory for the call" :
		    "no random bytes for the call's boundary (getrandom)");
		res->failed_stage = SB_STAGE_RESOURCES;
		res->err = -rc;
		return rc;
	}
	memset(&turn, 0, sizeof(turn));
	turn.in = in;
	turn.in_len = in_len;
	turn.wall_ms = req->limits.wall_ms;
	turn.grace_ms = REPL_GRACE_MS;
	turn.sink = frame_sink;
	turn.sink_arg = &f;
	turn.progress = req->progress;
	turn.progress_arg = req->progress_arg;
	turn.progress_ms = req->progress_ms;
	/* this call's proxy serves the session's socket, for the call */
	if (r->net && ec != NULL && r->lfd >= 0 &&
	    (rc = egress_call_start(ec, r->lfd)) < 0) {
		free(in);
		free(f.work);
		memset(res, 0, sizeof(*res));
		(void)snprintf(res->message, sizeof(res->message), "the "
		    "network proxy could not start (%s)", strerror(-rc));
		res->failed_stage = SB_STAGE_NETNS;
		res->err = -rc;
		return rc;
	}
	r->cur_ec = ec;
	rc = sb_turn(r->sb, &turn, cancel, res);
	r->cur_ec = NULL;
	free(in);
	free(f.work);
	(void)pthread_mutex_lock(&r->t->lock);
	r->calls++;
	(void)pthread_mutex_unlock(&r->t->lock);
	if (rc == 0) {
		f.status[f.status_len] = '\0';
		st = strtol(f.status, NULL, 10);
		res->exited = true;
		res->exit_code = (int)st;
		res->timed_out = res->interrupted && !res->cancelled;
		q->memory_bytes = sb_started_memory(r->sb);
	} else if (rc == 1) {
		ended_why(res, q->ended, sizeof(q->ended));
		rc = 0;
		goto dead;
	} else {
		(void)snprintf(q->ended, sizeof(q->ended), "its sandbox failed "
		    "(%.160s)", res->message);
		goto dead;
	}
	q->calls = r->calls;
	q->age_ms = now_ms() - r->born_ms;
	q->idle_ms = p->limits.session_idle_ms;
	return 0;
 dead:
	sb_discard(r->sb);
	r->sb = NULL;
	q->calls = r->calls;
	q->age_ms = now_ms() - r->born_ms;
	(void)pthread_mutex_lock(&r->t->lock);
	end_locked(r->t, r, q->ended);
	(void)pthread_mutex_unlock(&r->t->lock);
	return rc;
}

/* ---- results and the two tools ---- */

static struct json_object *
session_json(const char *name, int lang, bool started, uint64_t age_ms,
    unsigned calls, uint32_t idle_ms, uint64_t memory, const char *ended)
{
	struct json_object *o = json_object_new_object();

	if (o == NULL ||
	    tool_json_add(o, "name", json_object_new_string(name)) != 0 ||
	    tool_json_add(o, "language", json_object_new_string(
	    policy_lang_name(lang))) != 0 ||
	    tool_json_add(o, "started", json_object_new_boolean(started)) != 0 ||
	    tool_json_add(o, "age_ms", json_object_new_int64(
	    (int64_t)age_ms)) != 0 ||
	    tool_json_add(o, "calls", json_object_new_int64(calls)) != 0 ||
	    tool_json_add(o, "idle_timeout_ms", json_object_new_int64(
	    idle_ms)) != 0 ||
	    (memory > 0 ? tool_json_add(o, "memory_bytes",
	    json_object_new_int64((int64_t)memory)) :
	    json_object_object_add(o, "memory_bytes", NULL)) != 0 ||
	    (ended != NULL && tool_json_add(o, "ended",
	    json_object_new_string(ended)) != 0)) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* ---- resources ---- */

/* A session's facts as JSON text (t->lock held); NULL: no memory. */
static char *
resource_text_locked(struct repls *t, struct repl *r)
{
	struct json_object *o;
	uint64_t mem = r->refs == 0 && r->sb != NULL ?
	    sb_started_memory(r->sb) : 0;
	const char *s;
	char *text;

	o = session_json(r->name, r->lang, false, now_ms() - r->born_ms,
	    r->calls, t->p->limits.session_idle_ms, mem, NULL);
	if (o != NULL && tool_json_add(o, "busy", json_object_new_boolean(
	    r->refs > 0)) != 0) {
		json_object_put(o);
		o = NULL;
	}
	s = o != NULL ? json_object_to_json_string_ext(o,
	    JSON_C_TO_STRING_PLAIN) : NULL;
	text = s != NULL ? strdup(s) : NULL;
	json_object_put(o);
	return text;
}

int
repl_resources_list(struct repls *t, const char *owner,
    struct json_object *arr)
{
	struct json_object *o;
	char uri[sizeof(REPL_URI_PREFIX) + REPL_NAME_MAX];
	size_t i;
	int rc = 0;

	if (t == NULL)
		return 0;
	(void)pthread_mutex_lock(&t->lock);
	for (i = 0; i < t->n && rc == 0; i++) {
		struct repl *r = t->open[i];

		if (strcmp(r->owner, owner) != 0)
			continue;
		(void)snprintf(uri, sizeof(uri), "%s%s", REPL_URI_PREFIX,
		    r->name);
		if ((o = json_object_new_object()) == NULL ||
		    tool_json_add(o, "uri", json_object_new_string(uri)) != 0 ||
		    tool_json_add(o, "name", json_object_new_string(uri)) != 0 ||
		    tool_json_add(o, "title", json_object_new_string(
		    policy_lang_name(r->lang))) != 0 ||
		    tool_json_add(o, "description", json_object_new_string(
		    "An open run_code session: its language, age, calls and "
		    "memory")) != 0 ||
		    tool_json_add(o, "mimeType", json_object_new_string(
		    "application/json")) != 0 ||
		    json_object_array_add(arr, o) != 0) {
			json_object_put(o);
			rc = -ENOMEM;
		}
	}
	(void)pthread_mutex_unlock(&t->lock);
	return rc;
}

int
repl_resource_read(struct repls *t, const char *owner, const char *uri,
    struct json_object **ret)
{
	const char *name = uri + strlen(REPL_URI_PREFIX);
	struct json_object *c;
	struct repl *r;
	char *text = NULL;

	if (strncmp(uri, REPL_URI_PREFIX, strlen(REPL_URI_PREFIX)) != 0)
		return -EINVAL;
	if (t == NULL)
		return -ENOENT;
	(void)pthread_mutex_lock(&t->lock);
	if ((r = find_locked(t, owner, name)) != NULL)
		text = resource_text_locked(t, r);
	(void)pthread_mutex_unlock(&t->lock);
	if (r == NULL)
		return -ENOENT;
	if (text == NULL)
		return -ENOMEM;
	if ((c = json_object_new_object()) == NULL ||
	    tool_json_add(c, "uri", json_object_new_string(uri)) != 0 ||
	    tool_json_add(c, "mimeType", json_object_new_string(
	    "application/json")) != 0 ||
	    tool_json_add(c, "text", json_object_new_string(text)) != 0) {
		json_object_put(c);
		free(text);
		return -ENOMEM;
	}
	free(text);
	*ret = c;
	return 0;
}

enum mcp_err
repl_add_result(const struct repl_call *q, struct json_object *r)
{
	struct json_object *sc, *content, *block, *text, *o;	/* borrowed */
	char line[512], say[32];
	const char *old;
	char *joined;

	o = session_json(q->name, q->lang, q->started, q->age_ms, q->calls,
	    q->idle_ms, q->memory_bytes, q->ended[0] != '\0' ? q->ended : NULL);
	if (o == NULL)
		return MCP_ERR_NOMEM;
	if (json_object_object_get_ex(r, "structuredContent", &sc)) {
		if (tool_json_add(sc, "session", json_object_get(o)) != 0) {
			json_object_put(o);
			return MCP_ERR_NOMEM;
		}
	}
	json_object_put(o);
	say_ms(q->idle_ms, say, sizeof(say));
	if (q->ended[0] != '\0')
		(void)snprintf(line, sizeof(line), "Session '%s' (%s) ended "
		    "during this call: %s. Its state is gone; a call with "
		    "restart: true starts it afresh.", q->name,
		    policy_lang_name(q->lang), q->ended);
	else
		(void)snprintf(line, sizeof(line), "Session '%s' (%s): %s, "
		    "call %u; it keeps its state for the next call (ends "
		    "after %s idle).", q->name, policy_lang_name(q->lang),
		    q->started ? "started by this call" : "continued", q->calls,
		    say);
	if (!json_object_object_get_ex(r, "content", &content) ||
	    (block = json_object_array_get_idx(content, 0)) == NULL ||
	    !json_object_object_get_ex(block, "text", &text))
		return MCP_OK;
	old = json_object_get_string(text);
	if ((joined = malloc(strlen(old) + strlen(line) + 2)) == NULL)
		return MCP_ERR_NOMEM;
	(void)sprintf(joined, "%s\n%s", old, line);
	if (tool_json_add(block, "text", json_object_new_string(joined)) != 0) {
		free(joined);
		return MCP_ERR_NOMEM;
	}
	free(joined);
	return MCP_OK;
}

enum mcp_err
tool_end_session(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result)
{
	struct repls *t = call->env->repls;
	const char *name = toolargs_str(args, "session", "");
	struct json_object *r = NULL, *o = NULL;
	struct repl_waiter *w = NULL;
	struct ended *e;
	struct repl *s;
	bool gone = false;
	char text[320];

	if (t == NULL) {
		*ret_result = tool_result_error("This server takes no sessions.");
		return *ret_result != NULL ? MCP_OK : MCP_ERR_NOMEM;
	}
	if ((w = calloc(1, sizeof(*w))) == NULL)
		return MCP_ERR_NOMEM;
	(void)pthread_mutex_lock(&t->lock);
	if ((s = find_locked(t, call->owner, name)) == NULL) {
		e = find_ended_locked(t, call->owner, name);
		render_refused(call->audit, "no such session");
		if (e != NULL)
			r = tool_result_error("The session '%s' has ended "
			    "already: %s.", name, e->why);
		else
			r = tool_result_error("No session '%s' is open for this "
			    "client (list_sessions lists those that are).", name);
		(void)pthread_mutex_unlock(&t->lock);
		free(w);
		*ret_result = r;
		return r != NULL ? MCP_OK : MCP_ERR_NOMEM;
	}
	/* after the calls queued on it */
	if ((r = queue_on(t, call, s, w, &gone)) == NULL) {
		o = session_json(s->name, s->lang, false, now_ms() - s->born_ms,
		    s->calls, t->p->limits.session_idle_ms, 0, "end_session");
		(void)snprintf(text, sizeof(text), "Session '%s' (%s) ended "
		    "after %u calls; its interpreter and sandbox are gone.",
		    name, policy_lang_name(s->lang), s->calls);
		end_locked(t, s, "end_session ended it");
		gone = dequeue_locked(t, s, w);
		r = o != NULL ? tool_result_ok(o, text) : NULL;
	}
	(void)pthread_mutex_unlock(&t->lock);
	free(w);
	if (gone)
		repl_free(s);
	*ret_result = r;
	return r != NULL ? MCP_OK : MCP_ERR_NOMEM;
}

enum mcp_err
tool_list_sessions(const struct tool_call *call,
    const struct json_object *args, struct json_object **ret_result)
{
	struct repls *t = call->env->repls;
	struct json_object *open, *ended, *o, *r;
	uint64_t now = now_ms();
	size_t i, nopen = 0;
	bool nomem = false;
	char text[4096];
	size_t w = 0;
	int n;

	(void)args;
	open = json_object_new_array();
	ended = json_object_new_array();
	o = json_object_new_object();
	if (open == NULL || ended == NULL || o == NULL) {
		json_object_put(open);
		json_object_put(ended);
		json_object_put(o);
		return MCP_ERR_NOMEM;
	}
	text[0] = '\0';
	if (t != NULL) {
		(void)pthread_mutex_lock(&t->lock);
		for (i = 0; i < t->n; i++) {
			struct repl *s = t->open[i];
			struct json_object *j;

			if (strcmp(s->owner, call->owner) != 0)
				continue;
			j = session_json(s->name, s->lang, false,
			    now - s->born_ms, s->calls,
			    t->p->limits.session_idle_ms, 0, NULL);
			if (j != NULL && s->refs > 0 && tool_json_add(j, "busy",
			    json_object_new_boolean(true)) != 0) {
				json_object_put(j);
				j = NULL;
			}
			if (j == NULL || json_object_array_add(open, j) != 0) {
				json_object_put(j);
				nomem = true;
				break;
			}
			nopen++;
			n = snprintf(text + w, sizeof(text) - w, "%s%s (%s, %u "
			    "calls)", nopen > 1 ? ", " : "", s->name,
			    policy_lang_name(s->lang), s->calls);
			if (n > 0 && (size_t)n < sizeof(text) - w)
				w += (size_t)n;
		}
		for (i = 0; i < REPL_ENDED_KEPT && !nomem; i++) {
			struct ended *e = &t->ended[i];
			struct json_object *j;

			if (!e->used || strcmp(e->owner, call->owner) != 0)
				continue;
			if ((j = json_object_new_object()) != NULL &&
			    (tool_json_add(j, "name", json_object_new_string(
			    e->name)) != 0 || tool_json_add(j, "language",
			    json_object_new_string(policy_lang_name(
			    e->lang))) != 0 || tool_json_add(j, "why",
			    json_object_new_string(e->why)) != 0)) {
				json_object_put(j);
				j = NULL;
			}
			if (j == NULL || json_object_array_add(ended, j) != 0) {
				json_object_put(j);
				nomem = true;
				break;
			}
		}
		(void)pthread_mutex_unlock(&t->lock);
	}
	if (nomem) {
		json_object_put(open);
		json_object_put(ended);
		json_object_put(o);
		return MCP_ERR_NOMEM;
	}
	if (tool_json_add(o, "sessions", open) != 0 ||
	    tool_json_add(o, "ended", ended) != 0) {
		json_object_put(o);
		return MCP_ERR_NOMEM;
	}
	if (nopen == 0)
		(void)snprintf(text, sizeof(text), "No session is open for this "
		    "client.");
	r = tool_result_ok(o, text);
	*ret_result = r;
	return r != NULL ? MCP_OK : MCP_ERR_NOMEM;
}
