#!/usr/bin/env python3
"""The issue-21 benchmark: run_code sessions over stdio, in one run.

Figures, each with the reference measured beside it:
  - a call on an open python3 session (`x += 1`), round trip p50/p99 at 1
    in flight, vs a fresh run_code python3 call (`pass`) of the same
    server, interleaved in blocks;
  - a session's first call (a new name: its sandbox and interpreter start)
    vs a fresh call, in turns;
  - a session's idle memory: the PSS of its sandbox's processes (init and
    interpreter), from /proc (root).
Targets (issue 21): p50 on a session <= 1 ms and <= 0.1x a fresh call; a
first call no slower than a fresh one (its p50 <= 1.1x: the fresh call may
take a sandbox built ahead, the first call of a session builds its own).
Exit 0 when met, 1 when missed, 2 when it could not measure.

usage: tests/bench/session_bench.py [path/to/mcp-sandbox]
BENCH_QUICK=1: a tenth of the calls (a smoke run, not figures)."""
import glob
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PATH = os.environ.get("BENCH_PATH", "/usr/local/bin:/usr/bin:/bin")
Q = 10 if os.environ.get("BENCH_QUICK") else 1
BLOCKS = 5
SESSION_CALLS = 200 // Q      # per block
FRESH_CALLS = 20 // Q         # per block
FIRSTS = 30 // Q
DRIVER = b"_mcp_session"      # on every python session's command line


def find_ours():
    if len(sys.argv) > 1:
        return sys.argv[1]
    if os.environ.get("MCP_SANDBOX_BIN"):
        return os.environ["MCP_SANDBOX_BIN"]
    c = glob.glob(os.path.join(ROOT, "build*", "server", "mcp-sandbox"))
    return max(c, key=os.path.getmtime) if c else None


class Client:
    def __init__(self, argv):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL,
                                  env={"PATH": PATH, "LANG": "C.UTF-8"})
        self.n = 0
        self.req("initialize", {"protocolVersion": "2025-11-25",
                                "capabilities": {},
                                "clientInfo": {"name": "b", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, m):
        self.p.stdin.write((json.dumps(m) + "\n").encode())
        self.p.stdin.flush()

    def req(self, method, params):
        self.n += 1
        self.send({"jsonrpc": "2.0", "id": self.n, "method": method,
                   "params": params})
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("the server closed its stdout")
            m = json.loads(line)
            if m.get("id") == self.n:
                return m

    def timed(self, args):
        t0 = time.perf_counter()
        m = self.req("tools/call", {"name": "run_code", "arguments": args})
        dt = time.perf_counter() - t0
        r = m.get("result", {})
        if r.get("isError"):
            raise RuntimeError("a timed call failed: %s" % json.dumps(m))
        return dt * 1000

    def close(self):
        self.p.stdin.close()
        return self.p.wait(timeout=30)


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, max(0, int(len(v) * p + 0.999999) - 1))]


def pss_kib(pids):
    total = 0
    for pid in pids:
        try:
            with open("/proc/%d/smaps_rollup" % pid) as f:
                for line in f:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total


def session_pids():
    """The interpreters of python sessions and their inits (parents)."""
    out = set()
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                if DRIVER not in f.read():
                    continue
            with open("/proc/%s/stat" % d) as f:
                st = f.read()
            out.add(int(d))
            out.add(int(st[st.rindex(")") + 2:].split()[1]))
        except (OSError, ValueError):
            pass
    return out


def main():
    ours = find_ours()
    if ours is None or not os.access(ours, os.X_OK):
        print("session_bench: no mcp-sandbox binary", file=sys.stderr)
        return 2
    print("mcp-sandbox session benchmark, %s, %d cores, load %s" % (
        time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()), os.cpu_count(),
        open("/proc/loadavg").read().split()[0]))
    c = Client([ours])
    fresh_args = {"language": "python3", "code": "pass"}
    sess_args = {"language": "python3", "code": "x += 1", "session": "b"}
    c.timed({"language": "python3", "code": "x = 0", "session": "b"})
    for _ in range(3):
        c.timed(fresh_args)
    sess, fresh = [], []
    for _ in range(BLOCKS):
        sess += [c.timed(sess_args) for _ in range(SESSION_CALLS)]
        fresh += [c.timed(fresh_args) for _ in range(FRESH_CALLS)]
    pids = session_pids()
    idle = pss_kib(pids) if os.geteuid() == 0 else 0
    first, fresh2 = [], []
    for i in range(FIRSTS):
        fresh2.append(c.timed(fresh_args))
        first.append(c.timed({"language": "python3", "code": "pass",
                              "session": "f%d" % i}))
        c.req("tools/call", {"name": "end_session",
                             "arguments": {"session": "f%d" % i}})
    rc = c.close()
    s50, s99 = pct(sess, 0.5), pct(sess, 0.99)
    f50, f99 = pct(fresh, 0.5), pct(fresh, 0.99)
    a50, b50 = pct(first, 0.5), pct(fresh2, 0.5)
    print("session  n=%d p50_ms=%.3f p99_ms=%.3f" % (len(sess), s50, s99))
    print("fresh    n=%d p50_ms=%.3f p99_ms=%.3f" % (len(fresh), f50, f99))
    print("first    n=%d p50_ms=%.3f   fresh beside it p50_ms=%.3f" % (
        len(first), a50, b50))
    if idle:
        print("idle session memory: %d KiB PSS (%d processes)" % (
            idle, len(pids)))
    ok = True
    for what, met in (
            ("session p50 <= 1 ms (%.3f)" % s50, s50 <= 1.0),
            ("session p50 <= 0.1x fresh (%.3fx)" % (s50 / f50),
             s50 <= 0.1 * f50),
            ("first call <= 1.1x fresh (%.2fx)" % (a50 / b50),
             a50 <= 1.1 * b50)):
        print(("MET    " if met else "MISSED ") + what)
        ok = ok and met
    if rc != 0:
        print("session_bench: the server exited %d" % rc, file=sys.stderr)
        return 2
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
