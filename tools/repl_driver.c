/*
 * repl_driver: what runs inside a run_code session, and the framing of
 * its output (repl_driver.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "repl_driver.h"

/*
 * python3: a fresh __main__ module is the session's namespace; the value
 * of a final expression is printed as a REPL does (and kept in _). SIGINT
 * raises KeyboardInterrupt only while the user's code runs. Only builtin
 * modules at start (_ast, not ast; traceback at the first error): a
 * session's first call should cost no more than a plain one.
 */
const char repl_py_driver[] =
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
const char repl_sh_driver[] =
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
 * It reads its calls on fd 3 (repl_node_exec): the user's stdin is /dev/null.
 */
const char repl_node_driver[] =
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
const char repl_node_exec[] =
    "exec \"$0\" --expose-internals -e \"$1\" 3<&0 </dev/null";

int
repl_frame_init(struct repl_frame *f, const char *code, bool first)
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

void
repl_frame_fini(struct repl_frame *f)
{
	free(f->work);
	f->work = NULL;
}

/* One piece of a stream: held-back bytes, then buf (n <= REPL_PIECE). */
static void
frame_piece(struct repl_frame *f, int i, const char *buf, size_t n,
    struct sb_output *o)
{
	size_t len = f->s[i].hold_len + n, off = 0, keep, take;
	char *w = f->work, *m, *nl;

	memcpy(w, f->s[i].hold, f->s[i].hold_len);
	memcpy(w + f->s[i].hold_len, buf, n);
	f->s[i].hold_len = 0;
	while (off < len && f->s[i].phase != REPL_DONE) {
		if (f->s[i].phase == REPL_STATUS) {
			nl = memchr(w + off, '\n', len - off);
			take = nl != NULL ? (size_t)(nl - (w + off)) : len - off;
			if (take > REPL_STATUS_MAX - f->status_len)
				take = REPL_STATUS_MAX - f->status_len;
			memcpy(f->status + f->status_len, w + off, take);
			f->status_len += take;
			if (nl != NULL) {
				f->s[i].phase = REPL_DONE;
				break;
			}
			return;
		}
		m = memmem(w + off, len - off, f->b, REPL_BOUNDARY_LEN);
		if (m == NULL) {
			/* a boundary may start in the last bytes: held back */
			keep = len - off < REPL_BOUNDARY_LEN - 1 ? len - off :
			    REPL_BOUNDARY_LEN - 1;
			if (f->s[i].phase == REPL_BODY || (f->s[i].phase == REPL_BEFORE &&
			    f->first))
				sb_output_append(o, w + off, len - off - keep);
			memcpy(f->s[i].hold, w + len - keep, keep);
			f->s[i].hold_len = keep;
			return;
		}
		if (f->s[i].phase == REPL_BODY || (f->s[i].phase == REPL_BEFORE &&
		    f->first))
			sb_output_append(o, w + off, (size_t)(m - (w + off)));
		off = (size_t)(m - w) + REPL_BOUNDARY_LEN;
		f->s[i].phase = f->s[i].phase == REPL_BEFORE ? REPL_BODY :
		    i == 0 ? REPL_STATUS : REPL_DONE;
	}
}

bool
repl_frame_sink(void *arg, int stream, const char *buf, size_t n,
    struct sb_output *o)
{
	struct repl_frame *f = arg;
	int i = stream == 1 ? 0 : 1;
	size_t k;

	while (n > 0) {
		k = n < REPL_PIECE ? n : REPL_PIECE;
		frame_piece(f, i, buf, k, o);
		buf += k;
		n -= k;
	}
	return f->s[0].phase == REPL_DONE && f->s[1].phase == REPL_DONE;
}

