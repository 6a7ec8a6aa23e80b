"""MCP tasks (issue 22): a call whose work outlives its request, in both
forms: 2025-11-25 (params.task, tasks/get, tasks/result, tasks/list,
tasks/cancel) over HTTP and stdio, and the 2026-07-28 extension
io.modelcontextprotocol/tasks (resultType "task", tasks/get with the
result inlined, tasks/update, tasks/cancel) over HTTP. No test waits on a
clock: a job runs until the test creates /workspace/go-TAG, so a task is
known to be working when it is looked at.

usage: test_tasks.py MCP_SANDBOX_BIN [--unpriv] [unittest args]
  --unpriv: the server runs as uid 65534 (setpriv)."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from http_client import (START_DEADLINE_S, Server,  # noqa: E402
                         initialize_body, modern_headers, modern_meta)
from mcptest import pids_with, poll_until  # noqa: E402

BIN = None
UNPRIV = False
AS_NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
NOBODY = 65534
EXT = "io.modelcontextprotocol/tasks"
RELATED = "io.modelcontextprotocol/related-task"
# server/mcp_limits.h
TASKS_PER_OWNER = 32
TASK_CANCEL_MS = 1000
TOKEN_A = "a" * 40
TOKEN_B = "b" * 40
PLAIN_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"


def job(tag, timeout_ms=120000):
    """run_code arguments: prints, waits for /workspace/go-TAG, prints."""
    code = ("import os, time\nprint('started %s', flush=True)\n"
            "while not os.path.exists('/workspace/go-%s'):\n"
            "    time.sleep(0.02)\nprint('done %s')\n" % (tag, tag, tag))
    return {"language": "python3", "code": code, "timeout_ms": timeout_ms}


class TaskServer(Server):
    """http_client.Server behind setpriv when --unpriv."""

    def __init__(self, *flags):
        if not UNPRIV:
            super().__init__(BIN, *flags, fixtures=False,
                             env={"PATH": PLAIN_PATH})
            return
        self.log = tempfile.NamedTemporaryFile(prefix="mcp-http-",
                                               suffix=".log", delete=False)
        os.chmod(self.log.name, 0o644)
        self.proc = subprocess.Popen(
            AS_NOBODY + [BIN, "--http", "127.0.0.1:0", "--log-level",
                         "debug", *flags],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=self.log, env={"PATH": PLAIN_PATH})
        self.port = None
        deadline = time.monotonic() + START_DEADLINE_S
        while time.monotonic() < deadline and self.port is None:
            m = re.search(r"\(port (\d+)\)", self.stderr())
            if m:
                self.port = int(m.group(1))
            elif self.proc.poll() is not None:
                raise RuntimeError("server exited: " + self.stderr())
            else:
                time.sleep(0.02)
        if self.port is None:
            self.proc.kill()
            raise RuntimeError("server did not log its port")


def workspace_dir():
    d = tempfile.mkdtemp(prefix="mcp-tasks-")
    if os.geteuid() == 0:
        # a root server runs tools as 65534; an unprivileged one is 65534
        os.chown(d, NOBODY, NOBODY)
    return d


def go(ws, tag):
    with open(os.path.join(ws, "go-" + tag), "w"):
        pass
    if os.geteuid() == 0:
        os.chown(os.path.join(ws, "go-" + tag), NOBODY, NOBODY)


class Legacy:
    """A 2025-11-25 client over HTTP: a session, the token's principal."""

    def __init__(self, srv, token=TOKEN_A):
        self.srv = srv
        self.auth = {"Authorization": "Bearer " + token}
        r = srv.post(initialize_body(), self.auth)
        assert r.status == 200, (r.status, r.body)
        self.sid = r.header("Mcp-Session-Id")
        self.h = dict(self.auth, **{"Mcp-Session-Id": self.sid,
                                    "MCP-Protocol-Version": "2025-11-25"})
        r = srv.post({"jsonrpc": "2.0",
                      "method": "notifications/initialized"}, self.h)
        assert r.status == 202, r.status
        self.n = 10

    def rpc(self, method, params):
        self.n += 1
        r = self.srv.post({"jsonrpc": "2.0", "id": self.n, "method": method,
                           "params": params}, self.h)
        if r.header("Content-Type") == "text/event-stream":
            for e in r.events():
                if e.get("id") == self.n:
                    return e
        return r.json()

    def call(self, name, args, task=None):
        p = {"name": name, "arguments": args}
        if task is not None:
            p["task"] = task
        return self.rpc("tools/call", p)

    def delete(self):
        c = self.srv.conn()
        try:
            return c.request("DELETE", "/mcp", None, self.h).status
        finally:
            c.close()


def modern(srv, rid, method, params, caps=True, token=TOKEN_A, name=None):
    meta = modern_meta({"extensions": {EXT: {}}} if caps else {})
    p = dict(params, _meta=meta)
    if method == "tools/call":
        name = params["name"]
    h = modern_headers(method, name)
    h["Authorization"] = "Bearer " + token
    r = srv.post({"jsonrpc": "2.0", "id": rid, "method": method,
                  "params": p}, h)
    if r.header("Content-Type") == "text/event-stream":
        for e in r.events():
            if e.get("id") == rid:
                return e
    return r.json()


def stable(result):
    """A tool result without what differs between two runs (the times,
    and the go- file the task's run saw made)."""
    sc = dict(result.get("structuredContent", {}))
    for k in ("duration_ms", "memory_peak_bytes", "cpu_ms", "files"):
        sc.pop(k, None)
    return result["content"][0]["text"], sc


class Tasks(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ws = workspace_dir()
        cls.tokens = tempfile.NamedTemporaryFile("w", delete=False)
        cls.tokens.write("%s\n%s\n" % (TOKEN_A, TOKEN_B))
        cls.tokens.close()
        os.chmod(cls.tokens.name, 0o600)
        if UNPRIV:
            os.chown(cls.tokens.name, NOBODY, NOBODY)
        cls.srv = TaskServer("--token-file", cls.tokens.name,
                             "--workspace", cls.ws,
                             "--allow-command", "sleep")

    @classmethod
    def tearDownClass(cls):
        rc = cls.srv.stop()
        os.unlink(cls.tokens.name)
        shutil.rmtree(cls.ws, ignore_errors=True)
        assert rc == 0, rc

    def test_status_message_quotes_only_whole_utf8_lines(self):
        # the run's own output becomes statusMessage: a binary line is not
        # quoted, a long line is cut at a character, never inside one (a
        # strict decode of every answer would fail on a split character)
        c = Legacy(self.srv)
        code = ("import os, sys, time\n"
                "def wait(t):\n"
                "    while not os.path.exists('/workspace/go-' + t):\n"
                "        time.sleep(0.02)\n"
                "sys.stdout.buffer.write(b'\\xff\\xfe bin\\n')\n"
                "sys.stdout.flush()\n"
                "wait('u8a')\n"
                "print('\\u00e9' * 200, flush=True)\n"
                "wait('u8b')\n")
        r = c.call("run_code", {"language": "python3", "code": code,
                                "timeout_ms": 120000}, task={"ttl": 60000})
        tid = r["result"]["task"]["taskId"]

        def message():
            return c.rpc("tasks/get", {"taskId": tid})["result"].get(
                "statusMessage", "")
        self.assertTrue(poll_until(lambda: re.fullmatch(
            r"running for [0-9.]+ s, 7 output bytes", message())),
            "a binary last line was quoted: " + message())
        go(self.ws, "u8a")
        # 120 bytes a quote, the cut lands inside a 2-byte character
        self.assertTrue(poll_until(lambda: re.fullmatch(
            r"running for [0-9.]+ s, 408 output bytes; last line: "
            + "\u00e9" * 59, message())), message())
        go(self.ws, "u8b")
        res = c.rpc("tasks/result", {"taskId": tid})["result"]
        self.assertEqual(res["structuredContent"]["exit_code"], 0)

    def test_legacy_polled_then_result_equals_the_plain_call(self):
        c = Legacy(self.srv)
        init = self.srv.post(initialize_body(), c.auth).json()
        self.assertEqual(init["result"]["capabilities"]["tasks"],
                         {"list": {}, "cancel": {},
                          "requests": {"tools": {"call": {}}}})
        tools = c.rpc("tools/list", {})["result"]["tools"]
        support = {t["name"]: t["execution"]["taskSupport"] for t in tools}
        self.assertEqual(support["run_code"], "optional")
        self.assertEqual(support["run_command"], "optional")
        self.assertEqual(support["calculate"], "forbidden")

        r = c.call("run_code", job("l1"), task={"ttl": 60000})
        t = r["result"]["task"]
        self.assertRegex(t["taskId"], r"^[0-9a-f]{32}$")
        self.assertEqual(t["status"], "working")
        self.assertEqual(t["ttl"], 60000)
        self.assertEqual(t["pollInterval"], 1000)
        g = c.rpc("tasks/get", {"taskId": t["taskId"]})["result"]
        self.assertEqual(g["status"], "working")
        self.assertEqual(g["taskId"], t["taskId"])
        self.assertTrue(poll_until(lambda: re.fullmatch(
            r"running for [0-9.]+ s, 11 output bytes; last line: started l1",
            c.rpc("tasks/get", {"taskId": t["taskId"]})["result"].get(
                "statusMessage", ""))), "statusMessage never said the progress")
        ids = [x["taskId"] for x in c.rpc("tasks/list", {})["result"]["tasks"]]
        self.assertIn(t["taskId"], ids)
        go(self.ws, "l1")
        res = c.rpc("tasks/result", {"taskId": t["taskId"]})["result"]
        self.assertEqual(res["_meta"][RELATED], {"taskId": t["taskId"]})
        self.assertEqual(res["structuredContent"]["stdout"],
                         "started l1\ndone l1\n")
        g = c.rpc("tasks/get", {"taskId": t["taskId"]})["result"]
        self.assertEqual(g["status"], "completed")
        self.assertEqual(g["statusMessage"], "finished: exit 0")
        # the same call made plainly gives the same result
        plain = c.call("run_code", job("l1", 30000))["result"]
        self.assertEqual(stable(plain), stable(res))
        # cancelling it now: the spec's error for a terminal task
        e = c.rpc("tasks/cancel", {"taskId": t["taskId"]})["error"]
        self.assertEqual(e["code"], -32602)
        self.assertEqual(e["message"], "Cannot cancel task: already in "
                         "terminal status \"completed\"")

    def test_tool_error_fails_a_legacy_task_completes_a_modern_one(self):
        # 2025-11-25: "when the tool result has isError set to true, the
        # task should reach failed", and tasks/result still answers the
        # result; the extension: completed, failed only for JSON-RPC errors
        c = Legacy(self.srv)
        tid = c.call("run_command", {"command": "false"},
                     task={})["result"]["task"]["taskId"]
        res = c.rpc("tasks/result", {"taskId": tid})["result"]
        self.assertEqual((res["isError"], res["structuredContent"]
                          ["exit_code"]), (True, 1))
        self.assertEqual(res["_meta"][RELATED], {"taskId": tid})
        g = c.rpc("tasks/get", {"taskId": tid})["result"]
        self.assertEqual((g["status"], g["statusMessage"]),
                         ("failed", "finished: exit 1"))
        r = modern(self.srv, 1, "tools/call", {"name": "run_command",
                   "arguments": {"command": "false", "background": True}})
        mid = r["result"]["taskId"]
        self.assertTrue(poll_until(lambda: modern(
            self.srv, 2, "tasks/get", {"taskId": mid}, name=mid)["result"]
            ["status"] != "working"), "the task never ended")
        g = modern(self.srv, 3, "tasks/get", {"taskId": mid},
                   name=mid)["result"]
        self.assertEqual(g["status"], "completed")
        self.assertEqual((g["result"]["isError"], g["result"]
                          ["structuredContent"]["exit_code"]), (True, 1))
        self.assertNotIn("error", g)

    def test_legacy_task_on_a_tool_that_forbids_it(self):
        c = Legacy(self.srv)
        e = c.call("calculate", {"expression": "1+1"}, task={})["error"]
        self.assertEqual(e["code"], -32601)
        self.assertIn("calculate does not run as a task", e["message"])

    def test_plain_call_unchanged_without_tasks(self):
        c = Legacy(self.srv)
        r = c.call("run_command", {"command": "echo", "args": ["x"]})
        self.assertEqual(r["result"]["structuredContent"]["stdout"], "x\n")
        self.assertNotIn("task", r["result"])
        # past the plain maximum without a task: refused, as before
        r = c.call("run_command", {"command": "echo", "args": ["x"],
                                   "timeout_ms": 120000})
        self.assertTrue(r["result"]["isError"])
        self.assertIn("timeout_ms", r["result"]["content"][0]["text"])

    def test_cancel_kills_the_run(self):
        c = Legacy(self.srv)
        r = c.call("run_command", {"command": "sleep", "args": ["987"],
                                   "timeout_ms": 120000}, task={})
        tid = r["result"]["task"]["taskId"]
        self.assertTrue(poll_until(lambda: pids_with(b"sleep\x00987\x00")),
                        "the task's sleep never started")
        t0 = time.monotonic()
        t = c.rpc("tasks/cancel", {"taskId": tid})["result"]
        took = time.monotonic() - t0
        self.assertEqual(t["status"], "cancelled")
        # the answer comes once the run is gone (MCP_TASK_CANCEL_MS at most)
        self.assertEqual(pids_with(b"sleep\x00987\x00"), [],
                         "the task's sleep outlived its cancel's answer")
        self.assertLess(took, TASK_CANCEL_MS / 1000.0)
        self.assertEqual(c.rpc("tasks/get", {"taskId": tid})["result"]
                         ["status"], "cancelled")
        e = c.rpc("tasks/result", {"taskId": tid})["error"]
        self.assertEqual(e["code"], -32602)
        self.assertIn("was cancelled", e["message"])

    def test_task_outlives_its_session(self):
        a = Legacy(self.srv)
        tid = a.call("run_code", job("s1"), task={})["result"]["task"][
            "taskId"]
        self.assertEqual(a.delete(), 200)
        b = Legacy(self.srv)   # a client restart: a new session, same token
        self.assertEqual(b.rpc("tasks/get", {"taskId": tid})["result"]
                         ["status"], "working")
        go(self.ws, "s1")
        res = b.rpc("tasks/result", {"taskId": tid})["result"]
        self.assertEqual(res["structuredContent"]["stdout"],
                         "started s1\ndone s1\n")

    def test_another_principal_sees_nothing(self):
        a = Legacy(self.srv)
        tid = a.call("run_code", job("p1"), task={})["result"]["task"][
            "taskId"]
        b = Legacy(self.srv, TOKEN_B)
        unknown = b.rpc("tasks/get", {"taskId": "0" * 32})["error"]
        for m in ("tasks/get", "tasks/result", "tasks/cancel"):
            e = b.rpc(m, {"taskId": tid})["error"]
            self.assertEqual(e, unknown, m)
        self.assertEqual(b.rpc("tasks/list", {})["result"]["tasks"], [])
        self.assertEqual(modern(self.srv, 5, "tasks/get", {"taskId": tid},
                                token=TOKEN_B, name=tid)["error"],
                         modern(self.srv, 5, "tasks/get",
                                {"taskId": "0" * 32}, token=TOKEN_B,
                                name="0" * 32)["error"])
        self.assertEqual(a.rpc("tasks/get", {"taskId": tid})["result"]
                         ["status"], "working")
        go(self.ws, "p1")
        self.assertEqual(a.rpc("tasks/result", {"taskId": tid})["result"]
                         ["structuredContent"]["exit_code"], 0)

    def test_modern_background_and_threshold(self):
        d = modern(self.srv, 1, "server/discover", {})["result"]
        self.assertEqual(d["capabilities"]["extensions"], {EXT: {}})
        args = dict(job("m1"), background=True, timeout_ms=5000)
        r = modern(self.srv, 2, "tools/call", {"name": "run_code",
                                               "arguments": args})["result"]
        self.assertEqual(r["resultType"], "task")
        self.assertEqual(r["status"], "working")
        self.assertEqual(r["pollIntervalMs"], 1000)
        tid = r["taskId"]
        g = modern(self.srv, 3, "tasks/get", {"taskId": tid},
                   name=tid)["result"]
        self.assertEqual((g["resultType"], g["status"]),
                         ("complete", "working"))
        self.assertNotIn("result", g)
        # without the extension declared: -32021
        e = modern(self.srv, 4, "tasks/get", {"taskId": tid}, caps=False,
                   name=tid)["error"]
        self.assertEqual(e["code"], -32021)
        self.assertEqual(e["data"], {"requiredCapabilities":
                                     {"extensions": {EXT: {}}}})
        self.assertEqual(modern(self.srv, 5, "tasks/update",
                                {"taskId": tid, "inputResponses": {}},
                                name=tid)["result"],
                         {"resultType": "complete", "_meta":
                          g["_meta"]})
        go(self.ws, "m1")
        self.assertTrue(poll_until(lambda: modern(
            self.srv, 6, "tasks/get", {"taskId": tid}, name=tid)["result"]
            ["status"] == "completed"), "the task never completed")
        g = modern(self.srv, 7, "tasks/get", {"taskId": tid},
                   name=tid)["result"]
        self.assertEqual(g["result"]["structuredContent"]["stdout"],
                         "started m1\ndone m1\n")
        # a deadline past task_threshold_ms (10 s) is a task too
        r = modern(self.srv, 8, "tools/call", {"name": "run_command",
                   "arguments": {"command": "echo", "args": ["t"],
                                 "timeout_ms": 20000}})["result"]
        self.assertEqual(r["resultType"], "task")
        # the same call from a client without the extension: plain
        r = modern(self.srv, 9, "tools/call", {"name": "run_command",
                   "arguments": {"command": "echo", "args": ["t"],
                                 "timeout_ms": 20000}}, caps=False)["result"]
        self.assertEqual(r["resultType"], "complete")
        self.assertEqual(r["structuredContent"]["stdout"], "t\n")

    def test_modern_cancel(self):
        r = modern(self.srv, 1, "tools/call", {"name": "run_command",
                   "arguments": {"command": "sleep", "args": ["986"],
                                 "background": True}})["result"]
        tid = r["taskId"]
        self.assertTrue(poll_until(lambda: pids_with(b"sleep\x00986\x00")))
        self.assertEqual(modern(self.srv, 2, "tasks/cancel", {"taskId": tid},
                                name=tid)["result"]["resultType"], "complete")
        self.assertEqual(pids_with(b"sleep\x00986\x00"), [])
        self.assertEqual(modern(self.srv, 3, "tasks/get", {"taskId": tid},
                                name=tid)["result"]["status"], "cancelled")


class Bounds(unittest.TestCase):
    """Caps, TTL and the task deadline, each on a server of its own."""

    def setUp(self):
        self.ws = workspace_dir()

    def tearDown(self):
        shutil.rmtree(self.ws, ignore_errors=True)

    def test_per_owner_cap(self):
        srv = TaskServer("--workspace", self.ws)
        try:
            c = Legacy(srv)
            for i in range(TASKS_PER_OWNER):
                r = c.call("run_command", {"command": "true"}, task={})
                self.assertIn("task", r["result"], i)
            r = c.call("run_command", {"command": "true"}, task={})["result"]
            self.assertTrue(r["isError"])
            self.assertEqual(r["content"][0]["text"], "This call was not "
                             "started: this client holds 32 tasks, its most "
                             "(MCP_TASKS_PER_OWNER); a task is held until its "
                             "result has been kept for its ttl after it "
                             "ended, or it is cancelled and expired.")
            listed = c.rpc("tasks/list", {})["result"]
            self.assertEqual(len(listed["tasks"]), 32)
            self.assertNotIn("nextCursor", listed)   # one page of 50
        finally:
            self.assertEqual(srv.stop(), 0)

    def test_audit_lines(self):
        log = os.path.join(self.ws, "..", os.path.basename(self.ws) +
                           ".audit")
        srv = TaskServer("--workspace", self.ws, "--audit-log", log)
        try:
            c = Legacy(srv)
            tid = c.call("run_command", {"command": "echo", "args": ["a"]},
                         task={})["result"]["task"]["taskId"]
            c.rpc("tasks/result", {"taskId": tid})

            def lines():
                with open(log) as f:
                    return [json.loads(x) for x in f]
            self.assertTrue(poll_until(lambda: any(
                x.get("event") == "task_end" for x in lines())))
            got = [(x.get("event"), x.get("task"), x.get("status"),
                    x["tool"]) for x in lines()]
            self.assertEqual(got, [("task_start", tid, "working",
                                    "run_command"),
                                   (None, None, None, "run_command"),
                                   ("task_end", tid, "completed",
                                    "run_command")])
            with open(log) as f:
                self.assertNotIn('"a"', f.read())   # never the arguments
        finally:
            self.assertEqual(srv.stop(), 0)
            if os.path.exists(log):
                os.unlink(log)

    def test_ttl_expiry(self):
        srv = TaskServer("--workspace", self.ws, "--task-ttl-ms", "1000")
        try:
            c = Legacy(srv)
            tid = c.call("run_command", {"command": "echo", "args": ["e"]},
                         task={"ttl": 999999})["result"]["task"]
            self.assertEqual(tid["ttl"], 1000)   # capped by the policy
            tid = tid["taskId"]
            res = c.rpc("tasks/result", {"taskId": tid})["result"]
            self.assertEqual(res["structuredContent"]["stdout"], "e\n")
            self.assertTrue(poll_until(lambda: "error" in c.rpc(
                "tasks/get", {"taskId": tid}), attempts=100),
                "the task outlived its ttl")
            self.assertEqual(c.rpc("tasks/get", {"taskId": tid})["error"]
                             ["code"], -32602)
        finally:
            self.assertEqual(srv.stop(), 0)

    def test_task_deadline(self):
        srv = TaskServer("--workspace", self.ws, "--timeout-ms", "500",
                         "--max-timeout-ms", "1000", "--task-timeout-ms",
                         "2000", "--allow-command", "sleep")
        try:
            c = Legacy(srv)
            e = c.call("run_command", {"command": "sleep", "args": ["60"],
                                       "timeout_ms": 2000}, task={})
            tid = e["result"]["task"]["taskId"]
            r = c.rpc("tasks/result", {"taskId": tid})["result"]
            self.assertTrue(r["isError"])
            self.assertTrue(r["structuredContent"]["timed_out"])
            self.assertIn("2000 ms", r["content"][0]["text"])
            g = c.rpc("tasks/get", {"taskId": tid})["result"]
            self.assertEqual(g["status"], "failed")
        finally:
            self.assertEqual(srv.stop(), 0)


class Stdio(unittest.TestCase):
    """The 2025-11-25 form over stdio, with notifications/tasks/status."""

    def test_stdio_task(self):
        ws = workspace_dir()
        cmd = ([] if not UNPRIV else AS_NOBODY) + [BIN, "--workspace", ws]
        p = subprocess.Popen(cmd, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True,
                             env={"PATH": PLAIN_PATH})
        try:
            def send(m):
                p.stdin.write(json.dumps(m) + "\n")
                p.stdin.flush()

            def until(rid):
                seen = []
                while True:
                    m = json.loads(p.stdout.readline())
                    if m.get("id") == rid:
                        return m, seen
                    seen.append(m)
            send(initialize_body())
            caps = until(1)[0]["result"]["capabilities"]
            self.assertIn("tasks", caps)
            send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                  "params": {"name": "run_code", "arguments": job("o1"),
                             "task": {}, "_meta": {"progressToken": "p1"}}})
            tid = until(2)[0]["result"]["task"]["taskId"]
            # the task's progress flows on stdio, saying whose it is
            while True:
                m = json.loads(p.stdout.readline())
                if m.get("method") == "notifications/progress":
                    break
            self.assertEqual(m["params"]["progressToken"], "p1")
            self.assertEqual(m["params"]["_meta"][RELATED], {"taskId": tid})
            send({"jsonrpc": "2.0", "id": 3, "method": "tasks/get",
                  "params": {"taskId": tid}})
            self.assertEqual(until(3)[0]["result"]["status"], "working")
            go(ws, "o1")
            send({"jsonrpc": "2.0", "id": 4, "method": "tasks/result",
                  "params": {"taskId": tid}})
            res, seen = until(4)
            self.assertEqual(res["result"]["structuredContent"]["stdout"],
                             "started o1\ndone o1\n")
            # the task's end wakes tasks/result and then notifies: either
            # may reach the client first
            if not any(m.get("method") == "notifications/tasks/status"
                       for m in seen):
                seen.append(json.loads(p.stdout.readline()))
            status = [m["params"] for m in seen
                      if m.get("method") == "notifications/tasks/status"]
            self.assertEqual([(s["taskId"], s["status"]) for s in status],
                             [(tid, "completed")])
            p.stdin.close()
            self.assertEqual(p.wait(timeout=30), 0)
        finally:
            if p.poll() is None:
                p.kill()
            shutil.rmtree(ws, ignore_errors=True)

    def test_stdio_eof_ends_tasks(self):
        """The client is gone: its tasks are killed, and a tasks/result
        waiting on one does not keep the server up."""
        cmd = ([] if not UNPRIV else AS_NOBODY) + [BIN, "--allow-command",
                                                   "sleep"]
        p = subprocess.Popen(cmd, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True,
                             env={"PATH": PLAIN_PATH})
        try:
            for m in (initialize_body(),
                      {"jsonrpc": "2.0", "method": "notifications/initialized"},
                      {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                       "params": {"name": "run_command", "arguments": {
                           "command": "sleep", "args": ["985"],
                           "timeout_ms": 120000}, "task": {}}}):
                p.stdin.write(json.dumps(m) + "\n")
            p.stdin.flush()
            p.stdout.readline()
            tid = json.loads(p.stdout.readline())["result"]["task"]["taskId"]
            self.assertTrue(poll_until(lambda: pids_with(b"sleep\x00985\x00")))
            p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 3,
                                      "method": "tasks/result",
                                      "params": {"taskId": tid}}) + "\n")
            p.stdin.close()
            self.assertEqual(p.wait(timeout=30), 0)
            self.assertEqual(pids_with(b"sleep\x00985\x00"), [])
        finally:
            if p.poll() is None:
                p.kill()


if __name__ == "__main__":
    BIN = os.path.abspath(sys.argv.pop(1))
    if "--unpriv" in sys.argv:
        sys.argv.remove("--unpriv")
        UNPRIV = True
        if os.geteuid() != 0 or not shutil.which("setpriv"):
            print("SKIP: --unpriv needs root and setpriv")
            sys.exit(77)
    unittest.main(verbosity=2)
