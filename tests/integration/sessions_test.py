#!/usr/bin/env python3
"""run_code sessions (issue 21) over stdio, against the real binary:
state across calls in python3, node and sh; a final expression's value;
an exception, a syntax error and an interrupt that leave the session
alive; an interpreter that ignores the interrupt, killed and said so; the
end of a session by end_session, by idle time, by its memory limit, each
told to the next call, which restarts only when it says so; a language
mismatch; the per-client cap; output framing that a printed fake
boundary and a background thread cannot break; two clients' sessions
apart. As root, and with --unpriv as uid 65534.

usage: sessions_test.py MCP_SANDBOX [--unpriv]"""
import json
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(
    __file__)), "..", "lib"))
from mcptest import (AS_NOBODY, NOBODY, Report, StdioServer,  # noqa: E402
                     nobody_can, poll_until)

SERVER = sys.argv[1]
UNPRIV = "--unpriv" in sys.argv[2:]
R = Report("sessions" + (" (uid 65534)" if UNPRIV else ""))
# what a plain system gives; no developer shims decide which python runs
ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}


class Client(StdioServer):
    """One stdio server (as uid 65534 with --unpriv) and its client."""

    def __init__(self, *flags):
        super().__init__(([] if not UNPRIV else AS_NOBODY) + [SERVER, *flags],
                         env=ENV)
        assert "result" in self.init, self.init

    def req(self, method, params):
        return self.request(method, params)

    def call(self, name, args):
        return self.request("tools/call", {"name": name,
                                           "arguments": args})["result"]

    def code(self, lang, code, session, **kw):
        return self.call("run_code", dict(language=lang, code=code,
                                          session=session, **kw))

    def close(self):
        """EOF on stdin; the server's exit is checked (0: under the
        sanitizers, also no leak and no error)."""
        rc = super().close()
        R.check("the server exits 0 at EOF", rc == 0, rc)
        return rc


def sc(r):
    return r.get("structuredContent", {})


def out(r):
    return sc(r).get("stdout")


def err_text(r):
    return r["content"][0]["text"]


def state_across_calls(c):
    with R.step("state across calls"):
        r = c.code("python3", "import os\nx = 41\nos.chdir('/tmp')", "py")
        s = sc(r).get("session", {})
        R.check("python3: the first call starts it",
                s.get("started") is True and s.get("calls") == 1 and
                s.get("name") == "py" and s.get("language") == "python3" and
                sc(r).get("exit_code") == 0, r)
        r = c.code("python3", "x += 1\nprint(os.getcwd())\nx", "py")
        R.check("python3: variables, imports, cwd last; the final value",
                out(r) == "/tmp\n42\n" and
                sc(r)["session"]["started"] is False and
                sc(r)["session"]["calls"] == 2, r)
        r = c.code("sh", "cd /tmp; v=5; f() { echo \"f$1\"; }", "sh")
        r = c.code("sh", "pwd; echo $v; f 7", "sh")
        R.check("sh: cd, variables, functions last",
                out(r) == "/tmp\n5\nf7\n" and sc(r)["exit_code"] == 0, r)
        r = c.code("sh", "false", "sh")
        R.check("sh: the last status is the call's",
                sc(r)["exit_code"] == 1 and r.get("isError") is True, r)
        r = c.code("node", "let z = 3; const w = await "
                   "Promise.resolve(4); z + w", "js")
        R.check("node: top-level await and a final value",
                out(r) == "7\n" and sc(r)["exit_code"] == 0, r)
        r = c.code("node", "z * w", "js")
        R.check("node: let and const last", out(r) == "12\n", r)


def errors_keep_it(c):
    with R.step("errors leave the session alive"):
        r = c.code("python3", "1/0", "py")
        R.check("python3: an exception is the call's error",
                r.get("isError") is True and sc(r)["exit_code"] == 1 and
                "ZeroDivisionError: division by zero" in sc(r)["stderr"] and
                "_mcp_session" not in sc(r)["stderr"], r)
        r = c.code("python3", "def (:", "py")
        R.check("python3: a syntax error too",
                "SyntaxError" in sc(r)["stderr"], r)
        r = c.code("python3", "x", "py")
        R.check("python3: its state survives both", out(r) == "42\n", r)
        r = c.code("sh", "if then", "sh")
        R.check("sh: a syntax error fails the call, not the shell",
                sc(r)["exit_code"] == 2 and
                "Syntax error" in sc(r)["stderr"], r)
        r = c.code("sh", "echo $v", "sh")
        R.check("sh: its state survives", out(r) == "5\n", r)
        r = c.code("node", "null.x", "js")
        R.check("node: an exception is the call's error",
                sc(r)["exit_code"] == 1 and "TypeError" in sc(r)["stderr"],
                r)


def interrupts(c):
    with R.step("deadlines"):
        r = c.code("python3", "import time\nwhile True: time.sleep(0.01)",
                   "py", timeout_ms=300)
        R.check("python3: the deadline interrupts (KeyboardInterrupt)",
                sc(r)["exit_code"] == 130 and sc(r)["timed_out"] is True and
                "KeyboardInterrupt" in sc(r)["stderr"] and
                "ended" not in sc(r)["session"], r)
        r = c.code("python3", "x", "py")
        R.check("python3: and it lives on", out(r) == "42\n", r)
        r = c.code("sh", "while :; do sleep 0.05; done; echo no", "sh",
                   timeout_ms=300)
        R.check("sh: the deadline interrupts the loop",
                sc(r)["exit_code"] == 130 and out(r) == "", r)
        r = c.code("node", "while (true) {}", "js", timeout_ms=300)
        R.check("node: the deadline breaks a busy script",
                sc(r)["exit_code"] == 130 and
                "interrupted" in sc(r)["stderr"], r)
        r = c.code("node", "z", "js")
        R.check("node: and it lives on", out(r) == "3\n", r)
        r = c.code("python3", "import signal, time\n"
                   "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                   "while True: time.sleep(0.01)", "stubborn",
                   timeout_ms=200)
        s = sc(r).get("session", {})
        R.check("an interpreter that ignores the interrupt is killed",
                s.get("ended") == "it did not come back within 2000 ms of "
                "the interrupt and was killed" and
                sc(r)["timed_out"] is True and r.get("isError") is True, r)
        r = c.code("python3", "1", "stubborn")
        R.check("the next call is told why, and not run",
                r.get("isError") is True and err_text(r) ==
                "The session 'stubborn' ended (it did not come back within "
                "2000 ms of the interrupt and was killed), so what it held "
                "is gone. Call again with \"restart\": true to start it "
                "afresh, or use another name.", r)
        r = c.code("python3", "'fresh'", "stubborn", restart=True)
        R.check("restart: true starts it afresh",
                out(r) == "'fresh'\n" and sc(r)["session"]["started"], r)


def bounds(c):
    with R.step("a session keeps a run's bounds"):
        r = c.code("python3", "import os, socket, subprocess\n"
                   "print(os.getuid(), open('/proc/1/comm').read().strip())\n"
                   "print(sorted(int(p) for p in os.listdir('/proc') "
                   "if p.isdigit())[:2])\n"
                   "s = socket.socket()\n"
                   "try:\n    s.connect(('127.0.0.1', 1)); print('net')\n"
                   "except OSError as e:\n    print('no net', e.errno)\n"
                   "print(subprocess.run(['unshare', '-U', 'true'], "
                   "capture_output=True).returncode != 0)", "bounds")
        cpu = c.code("python3", "import resource\n"
                     "resource.getrlimit(resource.RLIMIT_CPU)[0]", "bounds")
        R.check("its CPU rlimit is the session's age, not a call's deadline",
                out(cpu) == "14401\n", cpu)
        R.check("the sandbox's uid, its own init as pid 1, no network, no "
                "nested user namespace",
                re.fullmatch(r"1000 sandbox-init\n\[1, 2\]\nno net \d+\nTrue\n",
                             out(r) or "") is not None, r)
        c.call("end_session", {"session": "bounds"})


def cancel(c):
    with R.step("cancel"):
        rid = c.start("tools/call", {"name": "run_code", "arguments": {
            "language": "python3", "session": "py",
            "code": "import time\nwhile True: time.sleep(0.01)"}})
        # the call is running once the session is busy
        R.check("a long call on the session runs",
                poll_until(lambda: any(
                    x.get("busy") for x in sc(c.call("list_sessions", {}))[
                        "sessions"] if x["name"] == "py")))
        c.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": rid, "reason": "test"}})
        r = c.code("python3", "x", "py")
        R.check("notifications/cancelled interrupts it; the session lives",
                out(r) == "42\n" and "ended" not in sc(r)["session"], r)


def framing(c):
    with R.step("framing"):
        fake = "\x1emcp-sandbox-turn-" + "0" * 32
        r = c.code("python3", "print(%r, end='')\nprint('after')" % fake,
                   "py")
        R.check("a printed fake boundary is output like any other",
                out(r) == fake + "after\n" and sc(r)["exit_code"] == 0, r)
        r = c.code("python3", "import sys\nsys.stdout.write('a' * 200000)"
                   "\nsys.stdout.flush()\nprint()\n'end'", "py")
        R.check("output past a pipe's size and the cap: counted exactly",
                sc(r)["stdout_bytes"] == 200000 + 1 + len("'end'\n") and
                sc(r)["stdout_truncated"] is True, sc(r).get("stdout_bytes"))
        r = c.code("python3", "import threading, time\n"
                   "def late():\n    time.sleep(0.2)\n"
                   "    print('late output', flush=True)\n"
                   "    open('/workspace/late.done', 'w').close()\n"
                   "threading.Thread(target=late).start()\n'now'", "py")
        R.check("a call's own output", out(r) == "'now'\n", r)
        # the thread has printed, between two calls, once its file is there
        printed = poll_until(lambda: c.call("read_file", {
            "path": "late.done"}).get("isError") is not True,
            attempts=100, pause_s=0.05)
        r = c.code("python3", "'next'", "py")
        R.check("output between two calls reaches neither",
                printed and out(r) == "'next'\n", r)


def resources(c, other):
    with R.step("resources"):
        r = c.req("resources/list", {})["result"]["resources"]
        got = sorted(x["uri"] for x in r if x["uri"].startswith("session://"))
        R.check("each open session is a resource",
                got == ["session://js", "session://py", "session://sh",
                       "session://stubborn"] and
                all(x["mimeType"] == "application/json" for x in r
                    if x["uri"].startswith("session://")), got)
        m = c.req("resources/read", {"uri": "session://py"})
        body = json.loads(m["result"]["contents"][0]["text"])
        R.check("its JSON: language, calls, age, memory",
                body["name"] == "py" and body["language"] == "python3" and
                body["calls"] > 5 and body["busy"] is False and
                body["age_ms"] > 0 and "memory_bytes" in body, body)
        m = other.req("resources/read", {"uri": "session://py"})
        R.check("another client reads no session of this one",
                m.get("error", {}).get("code") == -32002, m)
        r = other.req("resources/list", {})["result"]["resources"]
        R.check("nor lists one",
                [x for x in r if x["uri"].startswith("session://")] == [], r)


def ends(c):
    with R.step("ends"):
        r = c.call("end_session", {"session": "stubborn"})
        R.check("end_session of a restarted session",
                r.get("isError") is not True and sc(r)["calls"] == 1, r)
        r = c.code("sh", "echo 1", "other")
        r = c.code("python3", "1", "other")
        R.check("a session of another language is refused, naming both",
                r.get("isError") is True and err_text(r) ==
                "The session 'other' is a sh session, and this call is "
                "python3. Call again with that language, with restart: true "
                "to start it afresh in yours, or with another session "
                "name.", r)
        r = c.call("list_sessions", {})
        names = sorted(s["name"] for s in sc(r)["sessions"])
        R.check("list_sessions lists this client's sessions",
                names == ["js", "other", "py", "sh"], names)
        r = c.call("end_session", {"session": "other"})
        R.check("end_session ends it", r.get("isError") is not True and
                sc(r)["name"] == "other" and sc(r)["calls"] == 1, r)
        r = c.code("sh", "echo 1", "other")
        R.check("the next call is told it was ended",
                r.get("isError") is True and
                "(end_session ended it)" in err_text(r), r)
        r = c.call("end_session", {"session": "nosuch"})
        R.check("end_session of an unknown name says so",
                r.get("isError") is True and err_text(r) ==
                "No session 'nosuch' is open for this client "
                "(list_sessions lists those that are).", r)
        r = c.code("python3", "1", "py", args=["a"])
        R.check("args are refused with a session",
                r.get("isError") is True and "args cannot be given to a "
                "session" in err_text(r), r)


def caps_and_idle():
    with R.step("the per-client cap and the idle end"):
        c = Client("--sessions-per-client", "2", "--session-idle-ms", "1000")
        c.code("sh", "true", "a")
        c.code("sh", "true", "b")
        r = c.code("sh", "true", "c")
        R.check("past sessions_per_client: refused, saying what to do",
                r.get("isError") is True and err_text(r) ==
                "2 sessions are open for this client, its most "
                "(sessions_per_client); end one with end_session "
                "(list_sessions lists them).", r)

        def gone():
            r = c.call("list_sessions", {})
            return (sc(r)["sessions"] == [] and
                    len(sc(r)["ended"]) == 2)
        R.check("idle sessions end at session_idle_ms",
                poll_until(gone, attempts=100, pause_s=0.05))
        r = c.code("sh", "true", "a")
        R.check("and the next call is told so",
                r.get("isError") is True and "(it was idle for 1 s)" in
                err_text(r), r)
        c.close()


def server_cap_and_parallel():
    with R.step("the server's cap; two sessions at once"):
        c = Client("--max-sessions", "2")
        c.code("sh", "true", "a")
        # two calls on two sessions run at once: the first waits for a
        # file only the second makes (serialised, it would time out)
        first = c.start("tools/call", {"name": "run_code", "arguments": {
            "language": "python3", "session": "b", "timeout_ms": 20000,
            "code": "import os, time\n"
            "while not os.path.exists('/workspace/flag'):\n"
            "    time.sleep(0.01)\n'seen'"}})
        r = c.code("sh", "touch /workspace/flag", "a")
        m = c.wait(first)
        R.check("calls on two sessions run at once",
                r.get("isError") is not True and
                out(m["result"]) == "'seen'\n", m)
        r = c.code("sh", "true", "c")
        R.check("past max_sessions: refused, saying what to do",
                r.get("isError") is True and err_text(r) ==
                "The server holds its most sessions (max_sessions: 2); end "
                "one of this client's with end_session, or try again "
                "later.", r)
        c.close()


def memory():
    with R.step("memory"):
        c = Client("--memory-mb", "64")
        r = c.code("python3", "import subprocess", "big")
        r = c.code("python3", "b = bytearray(200 << 20)", "big")
        R.check("one process past memory_mb: MemoryError, the session lives",
                "MemoryError" in sc(r)["stderr"] and
                "ended" not in sc(r)["session"], r)
        if sc(r)["session"]["memory_bytes"] is None:
            print("skip: no cgroup bounds this server's sandboxes")
            c.close()
            return
        r = c.code("python3", "ps = [subprocess.Popen(['python3', '-c', "
                   "'b = bytearray(40 << 20); import time; time.sleep(5)']) "
                   "for i in range(4)]\n[p.wait() for p in ps]", "big",
                   timeout_ms=10000)
        s = sc(r).get("session", {})
        R.check("the session past its cgroup's memory is ended, and says so",
                s.get("ended") == "it ran out of memory at 64 MiB" and
                sc(r)["memory_limit_reached"] is True and
                r.get("isError") is True, r)
        c.close()


def network():
    with R.step("network"):
        import http.server
        import threading

        class Hello(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = b"hello " + self.path.encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass
        web = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hello)
        threading.Thread(target=web.serve_forever, daemon=True).start()
        port = web.server_address[1]
        c = Client("--allow-domain", "127.0.0.1:%d" % port)
        fetch = ("import urllib.request\n"
                 "urllib.request.urlopen('http://127.0.0.1:%d/%%s')"
                 ".read()" % port)
        r = c.code("python3", fetch % "one", "web")
        conns = sc(r).get("network", {}).get("connections", [])
        R.check("a session with the policy's network reaches an allowed "
                "host through its proxy",
                out(r) == "b'hello /one'\n" and len(conns) == 1 and
                conns[0]["allowed"] is True, r)
        r = c.code("python3", fetch % "two", "web")
        conns = sc(r).get("network", {}).get("connections", [])
        R.check("each call's result lists its own connections",
                out(r) == "b'hello /two'\n" and len(conns) == 1, r)
        r = c.code("python3", "1", "web", network=False)
        R.check("a call without network on a session with it is refused",
                r.get("isError") is True and "started with network" in
                err_text(r), r)
        r = c.code("python3", "urllib.request.urlopen('http://127.0.0.1:1/')",
                   "web")
        R.check("the egress rules hold in a session",
                sc(r)["exit_code"] == 1 and "403" in sc(r)["stderr"], r)
        c.close()
        web.shutdown()


def protected_names():
    with R.step("protected names"):
        ws = tempfile.mkdtemp(prefix="mcp-sessions-ws-")
        # a root server's sandboxes write as 65534; an unprivileged one
        # runs as 65534 itself
        os.chown(ws, NOBODY, NOBODY)
        try:
            c = Client("--workspace", ws)
            r = c.code("sh", "mkdir .git && echo '[core]' > .git/config",
                       "git")
            aside = [n for n in os.listdir(ws)
                     if n.startswith(".git.from-sandbox-")]
            R.check("a .git a call of a session makes is moved aside when "
                    "the call ends", not os.path.exists(
                        os.path.join(ws, ".git")) and len(aside) == 1 and
                    "moved to .git.from-sandbox-" in err_text(r), r)
            c.code("sh", "(sleep 0.2; mkdir .hg) &", "git")
            made = poll_until(lambda: os.path.isdir(os.path.join(ws, ".hg")))
            r = c.call("end_session", {"session": "git"})
            R.check("one its background made between calls is moved aside "
                    "when the session ends", made and
                    not os.path.exists(os.path.join(ws, ".hg")) and
                    [n for n in os.listdir(ws)
                     if n.startswith(".hg.from-sandbox-")] != [], r)
            c.close()
        finally:
            shutil.rmtree(ws, ignore_errors=True)


def two_clients():
    with R.step("two clients"):
        a, b = Client(), Client()
        a.code("python3", "secret = 'a-only'", "main")
        r = b.code("python3", "print(globals().get('secret'))", "main")
        R.check("the same name in another client is its own session",
                out(r) == "None\n" and sc(r)["session"]["started"], r)
        a.close()
        b.close()


def main():
    if UNPRIV and not nobody_can("test", "-x", SERVER):
        print("skip: uid 65534 cannot run %s" % SERVER)
        return 77
    c = Client()
    try:
        bounds(c)
        state_across_calls(c)
        errors_keep_it(c)
        interrupts(c)
        cancel(c)
        framing(c)
        other = Client()
        resources(c, other)
        other.close()
        ends(c)
    finally:
        c.close()
    caps_and_idle()
    server_cap_and_parallel()
    memory()
    network()
    protected_names()
    two_clients()
    return R.end()


if __name__ == "__main__":
    sys.exit(main())
