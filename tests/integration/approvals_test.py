#!/usr/bin/env python3
"""Approvals (issue 23) over stdio, against the real binary: a call asking
for a host or a deadline beyond the policy, inside the operator's ceiling,
runs only on the user's yes. 2025-11-25: the elicitation/create form on the
call's stream and each answer (once, for this session, deny, decline,
cancel, a malformed one, an error, none at all), a client without
elicitation, a cancel while the question waits, the ceiling refusing
without asking. 2026-07-28: input_required with a requestState, the
retried call, and the state forged, replayed, expired, for other arguments,
or wider than what was approved, each refused. The audit log's lines. The
sandbox's own network is a local web server reached by a pinned name
(--resolve): loopback only. As root, and with --unpriv as uid 65534.

usage: approvals_test.py MCP_SANDBOX [--unpriv]"""
import http.server
import json
import os
import sys
import tempfile
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(
    __file__)), "..", "lib"))
from mcptest import (AS_NOBODY, Report, StdioServer,  # noqa: E402
                     nobody_can, poll_until)

SERVER = sys.argv[1]
UNPRIV = "--unpriv" in sys.argv[2:]
R = Report("approvals" + (" (uid 65534)" if UNPRIV else ""))
ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}
MODERN = "2026-07-28"
META_V = "io.modelcontextprotocol/protocolVersion"
META_C = "io.modelcontextprotocol/clientCapabilities"
HITS = []


class Web(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        HITS.append(self.headers.get("Host"))
        self.send_response(200)
        self.send_header("Content-Length", "5")
        self.end_headers()
        self.wfile.write(b"hello")

    def log_message(self, *a):
        pass


WEB = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Web)
threading.Thread(target=WEB.serve_forever, daemon=True).start()
PORT = WEB.server_address[1]
A = "a.approved.test:%d" % PORT     # hosts inside the ceiling
B = "b.approved.test:%d" % PORT
AUDIT = tempfile.mkdtemp(prefix="approvals-audit-")
os.chmod(AUDIT, 0o777)


def fetch(host):
    return ("import urllib.request\n"
            "try:\n"
            " print(urllib.request.urlopen('http://%s/', timeout=5).read())\n"
            "except Exception as e:\n"
            " print('failed', e)\n" % host)


class Client(StdioServer):
    def __init__(self, *flags, elicits=True, audit=None):
        argv = ([] if not UNPRIV else AS_NOBODY) + [
            SERVER, "--ask-network", "--ask-domain", "*.approved.test:*",
            "--resolve", "a.approved.test:%d:127.0.0.1" % PORT,
            "--resolve", "b.approved.test:%d:127.0.0.1" % PORT,
            "--ask-timeout-ms", "120000", *flags]
        if audit:
            argv += ["--audit-log", audit]
        super().__init__(argv, env=ENV, capabilities={"elicitation": {}}
                         if elicits else {})
        assert "result" in self.init, self.init

    def call(self, args, tool="run_code"):
        return self.start("tools/call", {"name": tool, "arguments": args})

    def close(self):
        rc = super().close()
        R.check("the server exits 0 at EOF", rc == 0, rc)


def code_args(host, **kw):
    return dict(language="python3", code=fetch(host), **kw)


def text(res):
    return "\n".join(c.get("text", "") for c in res["result"]["content"])


def next_ask(c):
    """The next elicitation/create, past notifications (a task's status)."""
    while True:
        m = c.read()
        if m.get("method") != "notifications/tasks/status":
            return m


def answer(c, ask, decision=None, action="accept", raw=None):
    if raw is not None:
        c.send(dict(raw, jsonrpc="2.0", id=ask["id"]))
        return
    result = {"action": action}
    if action == "accept":
        result["content"] = {"decision": decision}
    c.send({"jsonrpc": "2.0", "id": ask["id"], "result": result})


def legacy(audit):
    c = Client(audit=audit)
    try:
        with R.step("2025-11-25: the question, and once"):
            rid = c.call(code_args(A, allow_domains=[A]))
            ask = c.read()
            p = ask.get("params", {})
            sch = p.get("requestedSchema", {})
            R.check("the call's first message is elicitation/create, a form",
                    ask.get("method") == "elicitation/create" and
                    isinstance(ask.get("id"), str) and
                    p.get("mode") == "form", ask)
            R.check("it says what and for which tool",
                    A in p.get("message", "") and
                    "run_code" in p["message"], p)
            R.check("one choice: once, session, deny",
                    [o["const"] for o in sch["properties"]["decision"]
                     ["oneOf"]] == ["once", "session", "deny"] and
                    sch.get("required") == ["decision"], sch)
            n = len(HITS)
            answer(c, ask, "once")
            r = c.wait(rid)["result"]
            sc = r["structuredContent"]
            R.check("once: it ran and reached the host",
                    sc["stdout"] == "b'hello'\n" and len(HITS) == n + 1, r)
            R.check("structuredContent.approvals says what and how",
                    sc.get("approvals") == [{"kind": "domain", "value": A,
                                             "granted": "once",
                                             "asked": True}], sc)
            r = c.wait(c.call(code_args(A)))["result"]
            R.check("once covers that call only: the next has no network",
                    r["structuredContent"]["stdout"].startswith("failed") and
                    "approvals" not in r["structuredContent"], r)
        with R.step("2025-11-25: for this session"):
            rid = c.call(code_args(B, allow_domains=[B]))
            answer(c, c.read(), "session")
            r = c.wait(rid)["result"]
            R.check("session: it ran",
                    r["structuredContent"]["stdout"] == "b'hello'\n" and
                    r["structuredContent"]["approvals"][0]["granted"] ==
                    "session", r)
            rid = c.call(code_args(B, allow_domains=[B]))
            m = c.read()
            R.check("a later call is not asked again", m.get("id") == rid and
                    m["result"]["structuredContent"]["approvals"] ==
                    [{"kind": "domain", "value": B, "granted": "session",
                      "asked": False}], m)
            m = c.wait(c.call(code_args(B)))
            R.check("nor one that does not list the host",
                    m["result"]["structuredContent"]["stdout"] ==
                    "b'hello'\n", m)
            rid = c.call(code_args(A))
            ask = c.read()
            R.check("a host not granted, inside the ceiling, not listed: "
                    "the proxy asks mid-run", ask.get("method") ==
                    "elicitation/create" and A in ask["params"]["message"],
                    ask)
            answer(c, ask, action="decline")
            m = c.wait(rid)
            conns = m["result"]["structuredContent"]["network"]["connections"]
            R.check("declined: the proxy's 403 says so",
                    m["result"]["structuredContent"]["stdout"].startswith(
                        "failed") and conns and conns[0]["status"] == 403 and
                    "the user did not allow it" in conns[0]["reason"], m)
        with R.step("2025-11-25: every other answer is a no"):
            for name, kw, want in [
                    ("deny", dict(decision="deny"), "(deny)"),
                    ("decline", dict(action="decline"), "(decline)"),
                    ("cancel", dict(action="cancel"), "(cancel)"),
                    ("a choice not offered", dict(decision="always"),
                     "was not one of once, session or deny"),
                    ("an error response", dict(raw={"error": {
                        "code": -1, "message": "no"}}),
                     "was not one of once, session or deny")]:
                n = len(HITS)
                rid = c.call(code_args(A, allow_domains=[A]))
                answer(c, c.read(), **kw)
                r = c.wait(rid)
                R.check("%s: refused, nothing ran" % name,
                        r["result"].get("isError") is True and
                        want in text(r) and "was not run" in text(r) and
                        len(HITS) == n, r)
        with R.step("2025-11-25: a longer deadline"):
            rid = c.call(dict(language="sh", code="echo ok",
                              timeout_ms=90000))
            ask = c.read()
            R.check("asked, naming the deadline and the policy's",
                    ask.get("method") == "elicitation/create" and
                    "90000 ms" in ask["params"]["message"] and
                    "60000 ms" in ask["params"]["message"], ask)
            answer(c, ask, "once")
            r = c.wait(rid)["result"]
            R.check("it ran with it (and the session's host grant)",
                    r["structuredContent"]["approvals"] ==
                    [{"kind": "domain", "value": B, "granted": "session",
                      "asked": False},
                     {"kind": "timeout", "value": "90000", "granted": "once",
                      "asked": True}], r)
            r = c.wait(c.call(dict(language="sh", code="echo ok",
                                   timeout_ms=120001)))
            R.check("past the ceiling: refused by the schema, not asked",
                    r["result"].get("isError") is True and
                    "Invalid arguments" in text(r), r)
        with R.step("2025-11-25: outside the ceiling, never asked"):
            rid = c.call(code_args("evil.test", allow_domains=["evil.test"]))
            m = c.read()
            R.check("refused at once, naming the rule and the flag",
                    m.get("id") == rid and m["result"].get("isError") and
                    "not in network.ask_domains" in text(m) and
                    "--allow-domain evil.test" in text(m), m)
            rid = c.call(code_args(A, allow_domains=[A], network=False))
            m = c.read()
            R.check("network: false with allow_domains: refused",
                    m.get("id") == rid and "contradict" in text(m), m)
        with R.step("2025-11-25: cancelled while the question waits"):
            rid = c.call(code_args(A, allow_domains=[A]))
            ask = c.read()
            c.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": rid}})
            answer(c, ask, "once")      # too late: dropped
            m = c.request("ping", {})
            R.check("no answer to the call; the server serves on",
                    m.get("result") == {}, m)
    finally:
        c.close()
    with R.step("2025-11-25: a client that cannot ask"):
        c = Client(elicits=False)
        try:
            r = c.wait(c.call(code_args(A, allow_domains=[A])))
            R.check("refused readably, naming the flag to set ahead",
                    r["result"].get("isError") is True and
                    "cannot ask" in text(r) and
                    "--allow-domain %s" % A in text(r), r)
        finally:
            c.close()
    with R.step("2025-11-25: asked mid-run, by the proxy"):
        c = Client("--allow-domain", "allowed.test:%d" % PORT, "--resolve",
                   "allowed.test:%d:127.0.0.1" % PORT)
        try:
            n = len(HITS)
            rid = c.call(code_args(A))
            ask = c.read()
            R.check("a host inside the ceiling, not listed: the proxy holds "
                    "the connection and the user is asked",
                    ask.get("method") == "elicitation/create" and
                    A in ask["params"]["message"] and len(HITS) == n, ask)
            answer(c, ask, "once")
            r = c.wait(rid)["result"]
            sc = r["structuredContent"]
            R.check("once: the connection goes through, and says so",
                    sc["stdout"] == "b'hello'\n" and
                    sc["network"]["connections"][0]["rule"] ==
                    "(the user's approval)" and sc.get("approvals") ==
                    [{"kind": "domain", "value": A, "granted": "once",
                      "asked": True}], r)
            rid = c.call(code_args(B))
            answer(c, c.read(), action="decline")
            r = c.wait(rid)["result"]
            conn = r["structuredContent"]["network"]["connections"][0]
            R.check("declined: a 403 that says so",
                    r["structuredContent"]["stdout"].startswith("failed") and
                    conn["status"] == 403 and
                    "the user did not allow it" in conn["reason"], r)
            both = dict(language="python3",
                        code=fetch(B) + fetch(A).replace("import urllib."
                                                         "request\n", ""))
            rid = c.call(both)
            answer(c, c.read(), action="decline")
            m = c.read()
            conns = m.get("result", {}).get("structuredContent", {}).get(
                "network", {}).get("connections", [])
            R.check("after a no, the call's proxy asks no more",
                    m.get("id") == rid and len(conns) == 2 and
                    all(x["status"] == 403 for x in conns), m)
            quick = dict(language="python3", code=fetch(A).replace(
                "timeout=5", "timeout=1"))
            rid = c.call(quick)
            ask = c.read()
            m = c.read()
            R.check("the program gives up while its proxy asks: the server "
                    "withdraws its question (notifications/cancelled)",
                    m.get("method") == "notifications/cancelled" and
                    m["params"]["requestId"] == ask.get("id"), m)
            m = c.wait(rid)
            R.check("and the call answers", "failed" in
                    m["result"]["structuredContent"]["stdout"], m)
            rid = c.call(code_args(A))
            m = c.read()
            R.check("once covered that call only: the next one asks again",
                    m.get("method") == "elicitation/create", m)
            c.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": rid}})
            m = c.request("ping", {})
            R.check("a call cancelled while its proxy asks ends; the server "
                    "serves on", m.get("result") == {}, m)
        finally:
            c.close()
    with R.step("2025-11-25: a call run as a task asks before it starts"):
        c = Client()
        try:
            rid = c.start("tools/call", {
                "name": "run_code", "arguments": code_args(A,
                                                           allow_domains=[A]),
                "task": {"ttl": 60000}})
            ask = c.read()
            R.check("the question comes before the task",
                    ask.get("method") == "elicitation/create", ask)
            answer(c, ask, "once")
            m = c.wait(rid)
            tid = m.get("result", {}).get("task", {}).get("taskId")
            R.check("then the task", tid is not None, m)
            res = c.request("tasks/result", {"taskId": tid}).get("result", {})
            R.check("the task ran with the grant",
                    res.get("structuredContent", {}).get("stdout") ==
                    "b'hello'\n" and res["structuredContent"].get(
                        "approvals", [{}])[0].get("granted") == "once", res)
            rid = c.start("tools/call", {
                "name": "run_code", "arguments": code_args(A,
                                                           allow_domains=[A]),
                "task": {"ttl": 60000}})
            answer(c, next_ask(c), action="decline")
            m = c.wait(rid)
            R.check("declined: refused, no task",
                    "task" not in m["result"] and
                    m["result"].get("isError") is True, m)
        finally:
            c.close()
    with R.step("2025-11-25: stdin ends while a question waits"):
        c = Client()
        rid = c.call(code_args(A, allow_domains=[A]))
        c.read()
        c.p.stdin.close()   # no answer can come now
        m = c.wait(rid)
        R.check("the call is told no at once (not after ask_wait_ms), the "
                "server exits 0", "the request ended before the user "
                "answered" in text(m) and c.p.wait(timeout=30) == 0, m)
    with R.step("2025-11-25: no answer"):
        c = Client("--ask-wait-ms", "1000")
        try:
            rid = c.call(code_args(A, allow_domains=[A]))
            ask = c.read()
            m = c.read()
            R.check("no answer within ask_wait_ms: the question is withdrawn",
                    m.get("method") == "notifications/cancelled" and
                    m["params"] == {"requestId": ask["id"],
                                    "reason": "no answer in time"}, m)
            r = c.wait(rid)
            R.check("no answer within ask_wait_ms is a no",
                    r["result"].get("isError") is True and
                    "no answer came within 1000 ms" in text(r), r)
        finally:
            c.close()


def modern_call(c, args, caps=None, **extra):
    meta = {META_V: MODERN, META_C: {"elicitation": {}} if caps is None
            else caps}
    params = {"name": "run_code", "arguments": args, "_meta": meta}
    params.update(extra)
    return c.request("tools/call", params)


def modern(audit):
    c = Client("--ask-wait-ms", "1500", audit=audit)
    try:
        with R.step("2026-07-28: input_required, then the retry"):
            args = code_args(A, allow_domains=[A])
            m = modern_call(c, args)["result"]
            req = m.get("inputRequests", {}).get("approval", {})
            R.check("input_required carries the form and a requestState",
                    m.get("resultType") == "input_required" and
                    req.get("method") == "elicitation/create" and
                    A in req["params"]["message"] and
                    isinstance(m.get("requestState"), str), m)
            state = m["requestState"]
            ok = {"approval": {"action": "accept",
                               "content": {"decision": "once"}}}
            r = modern_call(c, args, inputResponses=ok, requestState=state)
            R.check("the retried call with the answer runs",
                    r["result"].get("resultType") == "complete" and
                    r["result"]["structuredContent"]["stdout"] ==
                    "b'hello'\n", r)
            r = modern_call(c, args, inputResponses=ok, requestState=state)
            R.check("replayed: refused",
                    r.get("error", {}).get("code") == -32602 and
                    "used already" in r["error"]["message"], r)
        with R.step("2026-07-28: states that are not the server's"):
            m = modern_call(c, args)["result"]
            state = m["requestState"]
            body, mac = state.split(".")
            forged = body[:-2] + ("A" if body[-2] != "A" else "B") + \
                body[-1] + "." + mac
            r = modern_call(c, args, inputResponses=ok, requestState=forged)
            R.check("altered: refused",
                    r.get("error", {}).get("code") == -32602 and
                    "signature does not match" in r["error"]["message"], r)
            r = modern_call(c, args, inputResponses=ok,
                            requestState="not-a-state")
            R.check("made up: refused",
                    r.get("error", {}).get("code") == -32602, r)
            other = code_args(A, allow_domains=[A], timeout_ms=5000)
            r = modern_call(c, other, inputResponses=ok, requestState=state)
            R.check("other arguments: refused",
                    r.get("error", {}).get("code") == -32602 and
                    "other arguments" in r["error"]["message"], r)
            r = modern_call(c, args, inputResponses={"approval": {
                "action": "decline"}}, requestState=state)
            R.check("declined: refused, nothing ran",
                    r["result"].get("isError") is True and
                    "(decline)" in text(r), r)
        with R.step("2026-07-28: expiry and a missing answer"):
            m = modern_call(c, args)["result"]
            state = m["requestState"]
            r = modern_call(c, args, requestState=state)
            R.check("no answer for the state: asked again",
                    r["result"].get("resultType") == "input_required", r)
            R.check("past ask_wait_ms the state has expired",
                    poll_until(lambda: "expired" in modern_call(
                        c, args, requestState=state).get("error", {}).get(
                        "message", "")))
        with R.step("2026-07-28: a call that becomes a task asks first"):
            tasks = {"elicitation": {}, "extensions": {
                "io.modelcontextprotocol/tasks": {}}}
            bg = code_args(A, allow_domains=[A], background=True)
            m = modern_call(c, bg, caps=tasks)["result"]
            R.check("input_required, not a task",
                    m.get("resultType") == "input_required", m)
            r = modern_call(c, bg, caps=tasks, inputResponses=ok,
                            requestState=m["requestState"])["result"]
            R.check("the retry with the answer starts the task",
                    r.get("resultType") == "task", r)
            meta = {META_V: MODERN, META_C: tasks}

            def got():
                return c.request("tasks/get", {
                    "taskId": r.get("taskId"), "_meta": meta}).get(
                        "result", {})
            R.check("the task ends", poll_until(
                lambda: got().get("status") not in (None, "working")))
            g = got()
            R.check("it ran with the grant",
                    g.get("result", {}).get("structuredContent", {}).get(
                        "stdout") == "b'hello'\n", g)
        with R.step("2026-07-28: for this session, and no capability"):
            m = modern_call(c, code_args(B, allow_domains=[B]))["result"]
            r = modern_call(c, code_args(B, allow_domains=[B]),
                            inputResponses={"approval": {
                                "action": "accept",
                                "content": {"decision": "session"}}},
                            requestState=m["requestState"])
            R.check("a session grant", r["result"]["structuredContent"]
                    ["approvals"][0]["granted"] == "session", r)
            r = modern_call(c, code_args(B, allow_domains=[B]))
            R.check("covers the principal's next call",
                    r["result"].get("resultType") == "complete" and
                    r["result"]["structuredContent"]["approvals"][0]
                    ["asked"] is False, r)
            r = modern_call(c, code_args(A))
            conns = r["result"]["structuredContent"]["network"]["connections"]
            R.check("a host not granted, inside the ceiling: in 2026-07-28 "
                    "the proxy's 403 says to call again with allow_domains",
                    conns and conns[0]["status"] == 403 and
                    "call again with allow_domains" in conns[0]["reason"], r)
            r = modern_call(c, code_args(A, allow_domains=[A]),
                            caps={"elicitation": {"url": {}}})
            R.check("a request that declares URL elicitation only: refused "
                    "(our form is a form)", r["result"].get("isError") is
                    True and "cannot ask" in text(r), r)
            r = modern_call(c, code_args(A, allow_domains=[A]), caps={})
            R.check("a request that declares no elicitation: refused",
                    r["result"].get("isError") is True and
                    "cannot ask" in text(r), r)
    finally:
        c.close()


def audit_lines(path):
    with R.step("the audit log"):
        with open(path) as f:
            lines = [json.loads(x) for x in f]
        asks = [x for x in lines if x.get("event") == "approval"]
        answers = [x["answer"] for x in asks]
        R.check("one line per question, with its answer",
                answers[:4] == ["once", "session", "decline", "deny"] and
                "gone" in answers and
                "timeout" not in answers and "no-client" not in answers and
                all(x["tool"] == "run_code" and x["asked"]["domains"] in
                    ([A], [B], []) for x in asks), answers)
        with open(path) as f:
            raw = f.read()
        R.check("never the call's arguments", "urlopen" not in raw)


def main():
    if UNPRIV and not nobody_can("test", "-x", SERVER):
        print("skip: uid 65534 cannot run %s" % SERVER)
        return 77
    path = os.path.join(AUDIT, "audit.jsonl")
    legacy(path)
    modern(os.path.join(AUDIT, "modern.jsonl"))
    audit_lines(path)
    return R.end()


if __name__ == "__main__":
    sys.exit(main())
