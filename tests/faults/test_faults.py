"""Fault tests on the real binary: SIGKILL and SIGTERM with sandboxed
calls running, the workspaces a killed server leaves, and disconnect
storms mid-body and mid-SSE in both HTTP eras. Each asserts exact
outcomes: nothing of the server left running, the workspaces where they
should be, the server still serving with its fds and threads back.

usage: test_faults.py MCP_SANDBOX_BIN [unittest args]"""
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

# the helpers the test scripts share: tests/lib
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from http_client import (Conn, Server, initialize_body,  # noqa: E402
                         modern_headers, modern_meta, raw_post)
from mcptest import (POLL_ATTEMPTS, POLL_PAUSE_S, descendants,  # noqa: E402
                     pids_with, poll_until)

BIN = None
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# A server's fresh workspaces live in one private parent of its own in
# $TMPDIR (workspace/workspace.c), named after the server (workspace_reap.c).
PARENT_PREFIX = "mcp-sandbox-"

# Connections of a disconnect storm (each cut at a different point).
STORM = 64
# Samples in a row that must agree before fds/threads/processes count as
# settled (QUIET_SAMPLES x POLL_PAUSE_S = 1 s).
QUIET_SAMPLES = 40


def workspaces(tmp):
    """The servers' private parents in tmp (each holds its workspaces)."""
    return sorted(n for n in os.listdir(tmp) if n.startswith(PARENT_PREFIX))


class Stdio:
    """A stdio server with its own TMPDIR."""

    def __init__(self, tmp, *args):
        env = {"PATH": PATH, "TMPDIR": tmp, "LANG": "C.UTF-8"}
        self.p = subprocess.Popen([BIN, *args], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=env)
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                   "params": {"protocolVersion": "2025-11-25",
                              "capabilities": {}}})
        assert self.recv()["id"] == 0
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.p.stdin.write(json.dumps(msg).encode() + b"\n")
        self.p.stdin.flush()

    def recv(self):
        line = self.p.stdout.readline()
        if not line:
            raise EOFError("the server closed stdout")
        return json.loads(line)

    def call(self, rid, name, args):
        self.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                   "params": {"name": name, "arguments": args}})

    def close(self):
        for f in (self.p.stdin, self.p.stdout, self.p.stderr):
            try:
                f.close()
            except OSError:
                pass


def sandbox_works():
    with tempfile.TemporaryDirectory() as tmp:
        s = Stdio(tmp)
        s.call(1, "run_command", {"command": "true"})
        r = s.recv()
        s.p.stdin.close()
        s.p.wait(10)
        s.close()
        return not r["result"].get("isError")


class Kill(unittest.TestCase):
    """SIGKILL and SIGTERM with sandboxed calls running."""

    def start_sleepers(self, s, marker, n):
        for i in range(n):
            s.call(100 + i, "run_code",
                   {"language": "python3", "timeout_ms": 60000,
                    "code": "import time\n%s_%d = 1\ntime.sleep(60)\n" %
                    (marker, i)})
        self.assertTrue(poll_until(lambda: len(pids_with(marker.encode()))
                                   >= n), "the sandboxed calls never ran")

    def test_sigkill_leaves_nothing_running_and_the_next_start_reaps(self):
        with tempfile.TemporaryDirectory() as tmp:
            marker = "killmark_%d_%d" % (os.getpid(), time.monotonic_ns())
            s = Stdio(tmp)
            s.call(1, "write_file", {"path": "left.txt", "content": "x"})
            self.assertFalse(s.recv()["result"].get("isError"))
            self.assertEqual(len(workspaces(tmp)), 1)
            dead_ws = workspaces(tmp)[0]
            self.start_sleepers(s, marker, 2)
            kids = descendants(s.p.pid)
            s.p.send_signal(signal.SIGKILL)
            s.p.wait(10)
            s.close()
            # the sandboxes die with their server (PR_SET_PDEATHSIG and
            # the pid namespace), leaving nothing
            self.assertTrue(poll_until(lambda: not pids_with(
                marker.encode())), "a sandbox outlived its killed server")
            self.assertTrue(poll_until(lambda: not any(
                os.path.exists("/proc/%d" % k) for k in kids)))
            # nobody could remove its workspace: the next server does,
            # when it makes its own, and keeps its own
            self.assertEqual(workspaces(tmp), [dead_ws])
            t = Stdio(tmp)
            t.call(2, "write_file", {"path": "mine.txt", "content": "y"})
            self.assertFalse(t.recv()["result"].get("isError"))
            ws = workspaces(tmp)
            self.assertEqual(len(ws), 1, ws)
            self.assertNotEqual(ws[0], dead_ws)
            t.p.stdin.close()
            self.assertEqual(t.p.wait(10), 0)
            t.close()
            self.assertEqual(workspaces(tmp), [])

    def test_a_calls_effects_end_before_its_answer(self):
        """Issue 25, class 8: a shell fork bomb (within the pids limit)
        that is still forking when its program ends: at the answer, no
        process of that sandbox is left (its init is reaped only once its
        pid namespace is empty), nor does one appear after it."""
        with tempfile.TemporaryDirectory() as tmp:
            s = Stdio(tmp, "--max-processes", "32")
            # the first run is built on its call's path, the second is
            # taken from the pool
            for i in (1, 2):
                marker = "bombmark_%d_%d" % (os.getpid(),
                                             time.monotonic_ns())
                s.call(i, "run_code", {"language": "sh",
                                       "timeout_ms": 20000,
                                       "code": "f(){ f|f& }; f; sleep 1 "
                                       "# %s" % marker})
                r = s.recv()
                self.assertFalse(r["result"].get("isError"), r)
                self.assertTrue(r["result"]["structuredContent"][
                    "process_limit_reached"], "no bomb: proves nothing")
                self.assertEqual(pids_with(marker.encode()), [],
                                 "processes of the call outlived its answer")
                # and none comes back: a write after it would be one
                s.call(10 + i, "run_command", {"command": "true"})
                self.assertFalse(s.recv()["result"].get("isError"))
                self.assertEqual(pids_with(marker.encode()), [])
            s.p.stdin.close()
            self.assertEqual(s.p.wait(10), 0)
            s.close()

    def test_sigkill_leaves_no_sandbox_built_ahead(self):
        """The pool's sandboxes (built after a call, waiting for the next)
        die with a killed server: every process of theirs, and so their
        namespaces and mounts; the next server removes their cgroups."""
        with tempfile.TemporaryDirectory() as tmp:
            s = Stdio(tmp, "--pool-size", "2", "--warm-python", "0")
            s.call(1, "run_command", {"command": "true"})
            self.assertFalse(s.recv()["result"].get("isError"))

            def pooled():
                out = []
                for k in descendants(s.p.pid):
                    try:
                        with open("/proc/%d/cmdline" % k, "rb") as f:
                            if f.read().startswith(b"sandbox-init"):
                                out.append(k)
                    except OSError:
                        pass
                return out
            # two sandboxes: each an init and the process that waits
            self.assertTrue(poll_until(lambda: len(pooled()) == 4),
                            "the pool never filled: %r" % pooled())
            kids = pooled()
            dead = s.p.pid
            s.p.send_signal(signal.SIGKILL)
            s.p.wait(10)
            s.close()
            self.assertTrue(poll_until(lambda: not any(
                os.path.exists("/proc/%d" % k) for k in kids)),
                "a pooled sandbox outlived its killed server")
            t = Stdio(tmp)
            t.call(2, "run_command", {"command": "true"})
            self.assertFalse(t.recv()["result"].get("isError"))
            left = []
            for root, dirs, _ in os.walk("/sys/fs/cgroup"):
                left += [os.path.join(root, d) for d in dirs
                         if d.startswith("mcp-sandbox.%d." % dead)]
                dirs[:] = [d for d in dirs if d.startswith("mcp-sandbox") or
                           root.count("/") < 6]
            self.assertEqual(left, [], "the killed server's cgroups")
            t.p.stdin.close()
            self.assertEqual(t.p.wait(10), 0)
            t.close()

    def test_sigterm_answers_cancels_and_removes_the_workspace(self):
        with tempfile.TemporaryDirectory() as tmp:
            marker = "termmark_%d_%d" % (os.getpid(), time.monotonic_ns())
            s = Stdio(tmp)
            self.start_sleepers(s, marker, 2)
            s.p.send_signal(signal.SIGTERM)
            self.assertEqual(s.p.wait(20), 0)
            out = [json.loads(ln) for ln in s.p.stdout.read().splitlines()]
            s.close()
            # cancelled calls send nothing more; nothing is left running
            self.assertEqual([m for m in out if "id" in m], [])
            self.assertEqual(pids_with(marker.encode()), [])
            self.assertEqual(workspaces(tmp), [])

    def test_http_sigkill_and_sigterm_with_calls_in_both_eras(self):
        for sig in (signal.SIGKILL, signal.SIGTERM):
            with tempfile.TemporaryDirectory() as tmp:
                self.http_signal(tmp, sig)

    def http_signal(self, tmp, sig):
        marker = "httpmark_%d_%d" % (os.getpid(), time.monotonic_ns())
        # the calls never end on their own: SIGTERM stops them after the
        # grace, the shortest here (1 s, not 10)
        srv = Server(BIN, "--shutdown-grace", "1",
                     env={"PATH": PATH, "TMPDIR": tmp})
        held = []
        r = srv.post(initialize_body())
        sid = r.header("Mcp-Session-Id")
        srv.post({"jsonrpc": "2.0", "method": "notifications/initialized"},
                 {"Mcp-Session-Id": sid})
        for i, modern in enumerate((False, True)):
            code = "import time\n%s_%d = 1\ntime.sleep(60)\n" % (marker, i)
            body = {"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call",
                    "params": {"name": "run_code",
                               "arguments": {"language": "python3",
                                             "code": code,
                                             "timeout_ms": 60000}}}
            h = {"Mcp-Session-Id": sid}
            if modern:
                body["params"]["_meta"] = modern_meta()
                h = modern_headers("tools/call", "run_code")
            c = srv.conn()
            held.append(c)
            c.send_raw(raw_post(srv.port, json.dumps(body).encode(), h))
        self.assertTrue(poll_until(lambda: len(pids_with(marker.encode()))
                                   == 2), "the sandboxed calls never ran")
        self.assertGreaterEqual(len(workspaces(tmp)), 1)
        srv.proc.send_signal(sig)
        rc = srv.stop()
        for c in held:
            c.close()
        self.assertTrue(poll_until(lambda: not pids_with(marker.encode())),
                        "a sandbox outlived its server (signal %d)" % sig)
        if sig == signal.SIGTERM:
            self.assertEqual(rc, 0)
            self.assertEqual(workspaces(tmp), [])
        else:
            self.assertEqual(rc, -signal.SIGKILL)


def proc_counts(pid):
    """(open fds, threads, descendant processes) of pid."""
    fds = len(os.listdir("/proc/%d/fd" % pid))
    with open("/proc/%d/status" % pid) as f:
        threads = int([l for l in f if l.startswith("Threads:")][0].split()[1])
    return fds, threads, len(descendants(pid))


class Storms(unittest.TestCase):
    """Disconnect storms: STORM clients cut off mid-body or mid-SSE, in
    both eras. The server keeps serving, every call ends, and its fds,
    threads and processes come back to where they were."""

    @classmethod
    def setUpClass(cls):
        cls.srv = Server(BIN, env={"PATH": PATH})
        # a first call of each kind, so that lazy state (warm pythons,
        # stateless workspace) is in the baseline
        r = cls.srv.post({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                          "params": {"name": "test_tool_with_progress",
                                     "_meta": modern_meta()}},
                         modern_headers("tools/call",
                                        "test_tool_with_progress"))
        assert r.status == 200, r.body

    @classmethod
    def tearDownClass(cls):
        assert cls.srv.stop() == 0

    def quiet(self, want=None):
        """Counts once QUIET_SAMPLES samples in a row agree (a connection
        thread ends a moment after its response), and equal want if
        given; None if that never happens within the polling bound."""
        pid, last, same = self.srv.proc.pid, None, 0
        for _ in range(POLL_ATTEMPTS):
            now = proc_counts(pid)
            same = same + 1 if now == last else 0
            last = now
            if same >= QUIET_SAMPLES and (want is None or now == want):
                return now
            time.sleep(POLL_PAUSE_S)
        return None

    def baseline(self):
        # the /metrics request's own connection is the one counted
        self.assertTrue(poll_until(lambda: self.srv.metric(
            "mcp_http_connections") == 1))
        base = self.quiet()
        self.assertIsNotNone(base, "the server never went quiet")
        return base

    def assert_back(self, base):
        pid = self.srv.proc.pid
        self.assertEqual(self.quiet(base), base,
                         "fds/threads/processes %r, were %r" %
                         (proc_counts(pid), base))
        self.assertEqual(self.srv.get("/healthz").status, 200)

    def session(self):
        r = self.srv.post(initialize_body())
        sid = r.header("Mcp-Session-Id")
        self.srv.post({"jsonrpc": "2.0", "method": "notifications/initialized"},
                      {"Mcp-Session-Id": sid})
        return sid

    def call_bytes(self, rid, modern, sid):
        body = {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                "params": {"name": "test_tool_with_progress",
                           "_meta": {"progressToken": rid}}}
        h = {"Mcp-Session-Id": sid}
        if modern:
            body["params"]["_meta"] = modern_meta(progressToken=rid)
            h = modern_headers("tools/call", "test_tool_with_progress")
        return raw_post(self.srv.port, json.dumps(body).encode(), h)

    def test_storm_mid_body_in_both_eras(self):
        base = self.baseline()
        sid = self.session()
        for i in range(STORM):
            data = self.call_bytes(100 + i, i % 2 == 1, sid)
            cut = data.index(b"\r\n\r\n") + 4 + (i % 7) * 3 + 1
            s = socket.create_connection(("127.0.0.1", self.srv.port),
                                         timeout=10)
            s.sendall(data[:cut])
            if i % 3 == 0:      # a reset instead of a FIN
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                             b"\x01\x00\x00\x00\x00\x00\x00\x00")
            s.close()
        self.assert_back(base)
        self.assertEqual(self.srv.post({"jsonrpc": "2.0", "id": 2,
                                        "method": "ping"},
                                       {"Mcp-Session-Id": sid}).status, 200)

    def test_storm_mid_sse_in_both_eras(self):
        name = 'mcp_tool_calls_total{tool="test_tool_with_progress",outcome="ok"}'
        base = self.baseline()
        done = self.srv.metric(name)
        # the legacy half in sessions of at most MCP_HTTP_MAX_SESSION_CALLS
        sids = [self.session() for _ in range(STORM // 2 // 16)]
        cut = []
        for i in range(STORM):
            modern = i % 2 == 1
            c = Conn(self.srv.port)
            c.send_raw(self.call_bytes(200 + i, modern,
                                       sids[(i // 2) % len(sids)]))
            self.assertTrue(c.f.readline().startswith(b"HTTP/1.1 200"))
            while b"notifications/progress" not in c.f.readline():
                pass
            cut.append(c)
        for i, c in enumerate(cut):
            if i % 3 == 0:
                c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                  b"\x01\x00\x00\x00\x00\x00\x00\x00")
            c.close()
        # every call ended: the legacy ones ran to the end, the stateless
        # ones were cancelled (both count as finished calls)
        self.assertTrue(poll_until(lambda: self.srv.metric(name) ==
                                   done + STORM))
        self.assert_back(base)


if __name__ == "__main__":
    BIN = sys.argv.pop(1)
    if not sandbox_works():
        print("SKIP: the sandbox cannot run here")
        sys.exit(77)
    unittest.main(verbosity=2)
