#!/usr/bin/env python3
"""Soak: one HTTP server and one stdio server under SOAK_HTTP_CONNS HTTP
connections and SOAK_STDIO_INFLIGHT stdio requests in flight at once,
for SOAK_SECONDS, of mixed calculate, run_command and run_code calls
(both eras on HTTP). Asserts:
  - every call answered; errors only of the kinds the named limits make
    (a sandbox queue that is full or waited too long: tools/sbcall.c);
  - fds, threads and processes of each server back to their baseline
    (taken after a warm-up round at the same concurrency);
  - RSS after the soak within SOAK_RSS_MARGIN_KB (or SOAK_RSS_MARGIN_PCT)
    of the baseline.
Prints the figures (calls, errors by kind, RSS and fds before/after).

usage: soak.py MCP_SANDBOX_BIN"""
import json
import os
import subprocess
import sys
import threading
import time

# the helpers the test scripts share: tests/lib
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from http_client import Conn, Server, initialize_body  # noqa: E402
from http_client import modern_headers, modern_meta  # noqa: E402
from mcptest import descendants  # noqa: E402

PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

# Concurrency of the issue: 64 HTTP connections, 64 stdio requests.
SOAK_HTTP_CONNS = 64
SOAK_STDIO_INFLIGHT = 64
# Seconds of load after the warm-up: long enough for thousands of calls
# and for a leak of a few hundred bytes a call to show in RSS.
SOAK_SECONDS = 40
# Seconds of the warm-up round that sets the baseline.
SOAK_WARMUP_SECONDS = 8
# RSS may end at most this far above its baseline: thread stacks and
# allocator arenas touched by a burst are kept, a leak grows without end.
SOAK_RSS_MARGIN_KB = 8192
SOAK_RSS_MARGIN_PCT = 10
# Bounded polling for the servers to settle after the load: a server is
# quiet when SOAK_QUIET_SAMPLES samples in a row agree (idle workers and
# pooled namespaces come and go for a moment after a burst).
POLL_ATTEMPTS = 1200
POLL_PAUSE_S = 0.025
SOAK_QUIET_SAMPLES = 40

# Network namespaces the server keeps for reuse: one per sandbox slot and
# per warm python (cli/main.c: netns_pool; policy defaults max_sandboxes
# = the cores, warm_python = 2, though the soak turns the pythons off), and
# the server's own to come back to
# (sandbox/netns.c). They are counted apart from other fds: the pool fills
# up to this bound as concurrency needs it.
NETNS_POOL_MAX = (os.cpu_count() or 1) + 2 + 1
# Idle threads the stdio server keeps ready (server/mcp_limits.h:
# MCP_IDLE_WORKERS): how many of them are left after a burst varies, so
# its thread count may end that many above its baseline, never more.
MCP_IDLE_WORKERS = 8

# The only tool errors the load may cause: a sandbox queue at its named
# limits (policy limits.queue, limits.queue_wait_ms).
ALLOWED = ("the server is busy", "no sandbox became free")

CALLS = [
    ("calculate", {"expression": "2^100 / 3 + 7"}),
    ("run_command", {"command": "echo", "args": ["soak"]}),
    ("run_code", {"language": "python3", "code": "print(6*7)"}),
    ("run_code", {"language": "sh", "code": "echo $((6*7))"}),
]


def fd_targets(pid):
    out = {}
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            out[fd] = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            pass
    return out


def counts(pid):
    t = fd_targets(pid)
    fds = len([v for v in t.values() if not v.startswith("net:")])
    with open("/proc/%d/status" % pid) as f:
        st = dict(l.split(":", 1) for l in f if ":" in l)
    return {"fds": fds, "netns": len(t) - fds,
            "threads": int(st["Threads"]),
            "procs": len(descendants(pid)),
            "rss_kb": int(st["VmRSS"].split()[0])}


class Tally:
    def __init__(self):
        self.lock = threading.Lock()
        self.calls = 0
        self.errors = {}

    def add(self, kind):
        with self.lock:
            self.calls += 1
            if kind is not None:
                self.errors[kind] = self.errors.get(kind, 0) + 1


def classify(msg):
    """None for a good answer, else the kind of error."""
    if "error" in msg:
        return "rpc %d %s" % (msg["error"]["code"], msg["error"]["message"])
    res = msg.get("result", {})
    if res.get("isError"):
        text = res["content"][0]["text"]
        for a in ALLOWED:
            if a in text:
                return "limit: " + a
        return "tool: " + text[:80]
    return None


def events_or_json(r):
    if r.header("Content-Type") == "text/event-stream":
        return r.events()[-1]
    return r.json()


def http_worker(srv, idx, until, tally):
    c = Conn(srv.port)
    modern = idx % 2 == 1
    sid = None
    if not modern:
        r = c.request("POST", "/mcp", initialize_body(),
                      {"Content-Type": "application/json",
                       "Accept": "application/json, text/event-stream"})
        sid = r.header("Mcp-Session-Id")
        c.request("POST", "/mcp", {"jsonrpc": "2.0",
                                   "method": "notifications/initialized"},
                  {"Content-Type": "application/json",
                   "Accept": "application/json, text/event-stream",
                   "Mcp-Session-Id": sid})
    n = 0
    try:
        while time.monotonic() < until:
            name, args = CALLS[(idx + n) % len(CALLS)]
            n += 1
            body = {"jsonrpc": "2.0", "id": n, "method": "tools/call",
                    "params": {"name": name, "arguments": args}}
            h = {"Content-Type": "application/json",
                 "Accept": "application/json, text/event-stream"}
            if modern:
                body["params"]["_meta"] = modern_meta()
                h.update(modern_headers("tools/call", name))
            else:
                h["Mcp-Session-Id"] = sid
            r = c.request("POST", "/mcp", body, h)
            if r.status != 200:
                tally.add("http %d" % r.status)
                continue
            m = events_or_json(r)
            tally.add("wrong id" if m.get("id") != n else classify(m))
        if sid is not None:
            c.request("DELETE", "/mcp", None, {"Mcp-Session-Id": sid})
    finally:
        c.close()


def http_round(srv, seconds, tally):
    until = time.monotonic() + seconds
    ts = [threading.Thread(target=http_worker, args=(srv, i, until, tally))
          for i in range(SOAK_HTTP_CONNS)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def stdio_round(p, seconds, tally, next_id):
    """Keeps SOAK_STDIO_INFLIGHT requests in flight for seconds."""
    until = time.monotonic() + seconds
    pending = {}

    def send():
        rid = next_id[0]
        next_id[0] += 1
        name, args = CALLS[rid % len(CALLS)]
        pending[rid] = True
        p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": rid,
                                  "method": "tools/call",
                                  "params": {"name": name,
                                             "arguments": args}}).encode()
                      + b"\n")
    for _ in range(SOAK_STDIO_INFLIGHT):
        send()
    p.stdin.flush()
    while pending:
        line = p.stdout.readline()
        if not line:
            raise RuntimeError("stdio server closed stdout")
        m = json.loads(line)
        if "id" not in m:
            continue
        if pending.pop(m["id"], None) is None:
            tally.add("unknown id")
            continue
        tally.add(classify(m))
        if time.monotonic() < until:
            send()
            p.stdin.flush()


def quiet(pid, want=None):
    """Polls until fds, threads and processes stay the same for
    SOAK_QUIET_SAMPLES samples in a row (and equal want, if given);
    returns the last counts."""
    keys = ("fds", "threads", "procs")
    last, same = None, 0
    for _ in range(POLL_ATTEMPTS):
        now = counts(pid)
        key = tuple(now[k] for k in keys)
        same = same + 1 if key == last else 0
        last = key
        if same >= SOAK_QUIET_SAMPLES and (
                want is None or (now["fds"], now["procs"]) ==
                (want["fds"], want["procs"])):
            return now
        time.sleep(POLL_PAUSE_S)
    return counts(pid)


# The servers run without sandboxes built ahead: the pool refills only
# when a sandbox slot is free, at a moment no test can pin, so whether its
# sandboxes (2 processes and about 12 fds each, cgroup fds included) exist
# at the baseline or at the end is chance, not a leak. What is measured
# here is what the calls leave behind; the pool has tests of its own
# (tests/unit/tools_run.c: nothing left once it is freed).
# 64 HTTP sessions of one principal: the session table's own cap, no
# workspace bound below it (workspaces_mb's share would end the oldest).
SOAK_SERVER_FLAGS = ["--warm-python", "0", "--pool-size", "0",
                     "--workspaces-mb", "0"]


def main():
    binary = sys.argv[1]
    env = {"PATH": PATH, "LANG": "C.UTF-8"}
    srv = Server(binary, *SOAK_SERVER_FLAGS, fixtures=False, env=env)
    p = subprocess.Popen([binary] + SOAK_SERVER_FLAGS, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         env=env)
    p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 0,
                              "method": "initialize",
                              "params": {"protocolVersion": "2025-11-25",
                                         "capabilities": {}}}).encode() +
                  b"\n")
    p.stdin.flush()
    json.loads(p.stdout.readline())
    next_id = [1]
    probe = Tally()
    stdio_round(p, 0, probe, next_id)
    if any(k.startswith("tool: ") and "sandbox" in k for k in probe.errors):
        print("SKIP: the sandbox cannot run here: %r" % probe.errors)
        p.stdin.close()
        p.wait(30)
        srv.stop()
        return 77

    # warm-up at full concurrency: its end state is the baseline
    warm = Tally()
    th = threading.Thread(target=http_round,
                          args=(srv, SOAK_WARMUP_SECONDS, warm))
    th.start()
    stdio_round(p, SOAK_WARMUP_SECONDS, warm, next_id)
    th.join()
    base_h = quiet(srv.proc.pid)
    base_s = quiet(p.pid)
    fds_h, fds_s = fd_targets(srv.proc.pid), fd_targets(p.pid)

    t0 = time.monotonic()
    load = Tally()
    th = threading.Thread(target=http_round, args=(srv, SOAK_SECONDS, load))
    th.start()
    stdio_round(p, SOAK_SECONDS, load, next_id)
    th.join()
    took = time.monotonic() - t0
    end_h = quiet(srv.proc.pid, base_h)
    end_s = quiet(p.pid, base_s)
    for name, pid, before in (("http", srv.proc.pid, fds_h),
                              ("stdio", p.pid, fds_s)):
        after = fd_targets(pid)
        if len(after) != len(before):
            print("soak: %s server fds changed: %r -> %r" % (
                name, {k: v for k, v in before.items() if after.get(k) != v},
                {k: v for k, v in after.items() if before.get(k) != v}))

    p.stdin.close()
    rc_s = p.wait(60)
    rc_h = srv.stop()

    print("soak: %d calls in %.0f s (%d HTTP connections, %d stdio in "
          "flight); errors by kind: %s" % (load.calls, took,
                                           SOAK_HTTP_CONNS,
                                           SOAK_STDIO_INFLIGHT,
                                           load.errors or "none"))
    for name, b, e in (("http", base_h, end_h), ("stdio", base_s, end_s)):
        print("soak: %s server: rss %d -> %d KiB, fds %d -> %d (+ %d -> %d "
              "pooled netns), threads %d -> %d, processes %d -> %d" % (
                  name, b["rss_kb"], e["rss_kb"], b["fds"], e["fds"],
                  b["netns"], e["netns"], b["threads"], e["threads"],
                  b["procs"], e["procs"]))
    bad = []
    for kind in list(load.errors) + list(warm.errors):
        if not kind.startswith("limit: "):
            bad.append(kind)
    if bad:
        print("FAIL: errors beyond the named limits: %r" % bad)
    for name, b, e, slack in (("http", base_h, end_h, 0),
                              ("stdio", base_s, end_s, MCP_IDLE_WORKERS)):
        for k in ("fds", "procs"):
            if b[k] != e[k]:
                bad.append(k)
                print("FAIL: %s server %s: %d at baseline, %d after" %
                      (name, k, b[k], e[k]))
        if e["threads"] > b["threads"] + slack:
            bad.append("threads")
            print("FAIL: %s server threads: %d at baseline, %d after" %
                  (name, b["threads"], e["threads"]))
        if e["netns"] > NETNS_POOL_MAX:
            bad.append("netns")
            print("FAIL: %s server holds %d network namespaces" %
                  (name, e["netns"]))
        margin = max(SOAK_RSS_MARGIN_KB, b["rss_kb"] * SOAK_RSS_MARGIN_PCT
                     // 100)
        if e["rss_kb"] > b["rss_kb"] + margin:
            bad.append("rss")
            print("FAIL: %s server RSS grew %d KiB (margin %d)" %
                  (name, e["rss_kb"] - b["rss_kb"], margin))
    if load.calls < SOAK_HTTP_CONNS + SOAK_STDIO_INFLIGHT:
        bad.append("calls")
        print("FAIL: only %d calls" % load.calls)
    if rc_s != 0 or rc_h != 0:
        bad.append("exit")
        print("FAIL: exit codes stdio %d http %d" % (rc_s, rc_h))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
