#!/usr/bin/env python3
"""The integration cases (tests/integration/cases, tools/) over Streamable
HTTP instead of stdio: same files, same expectations, same checker
(run_cases.py), with the server started as `--http 127.0.0.1:0` and each
`>` line sent as one POST to /mcp. Answers (a JSON body, or the events of
an SSE stream in order) become the "stdout lines" the case expects; a 202
has none, as a notification has none on stdio. Handshake-era lines carry
the session the initialize answer named; a line with a 2026-07-28 `_meta`
is sent stateless with the headers that era requires. POSTs go one at a
time, so cases that need several messages in flight at once, or bytes
that are not one JSON-RPC line, are stdio-only (STDIO_ONLY below, each
with its reason); `!close` (stdin EOF) becomes SIGTERM.

usage: run_cases_http.py BINARY CASE-FILE-OR-DIR..."""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "integration"))
import run_cases  # noqa: E402  (the stdio checker, reused as is)
# the helpers the test scripts share: tests/lib
sys.path.insert(0, os.path.join(here, "..", "lib"))
from http_client import ACCEPT_BOTH, _read_response  # noqa: E402

CaseError = run_cases.CaseError

# Cases that cannot mean the same over HTTP, and why.
STDIO_ONLY = {
    "003-framing.case": "newline framing and raw bytes are stdio's",
    "004-versions.case": "ping before initialize: over HTTP every "
                         "handshake-era request but initialize needs a "
                         "session (400; test_http.py checks it)",
    "007-sigterm.case": "a slow call in flight while other lines are sent "
                        "(test_http.py Stop covers SIGTERM over HTTP)",
    "009-concurrency.case": "a slow call in flight while other lines are "
                            "sent (test_http.py covers cancel and DELETE)",
    "013-cli-help.case": "the CLI's own output on stdout, not MCP",
    "014-cli-version.case": "the CLI's own output on stdout, not MCP",
    "011-review-findings.case": "two calls in one write and 128 calls in "
                                "flight are stdio's threads (HTTP has "
                                "its own per-session cap, test_http.py)",
    "017-reading-role.case": "lines in one write, a slow call in flight, "
                             "and stdin ending are stdio's reading role",
}


class _Stdin:
    """What run_case closes for `!close`: over HTTP, the server stops."""

    def __init__(self, proc):
        self.proc = proc

    def close(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)


class _Proc:
    def __init__(self, proc):
        self._p = proc
        self.stdin = _Stdin(proc)

    def __getattr__(self, name):
        return getattr(self._p, name)


class HttpServer:
    """run_cases.Server's interface over HTTP."""

    def __init__(self, binary, args, env):
        proc = subprocess.Popen([binary] + args + ["--http", "127.0.0.1:0"],
                                stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, env=env)
        self.p = _Proc(proc)
        self.buf = b""          # answers not yet read, one per line
        self.err = b""
        self.sid = None
        self._errlock = threading.Lock()
        self._reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._reader.start()
        until = time.monotonic() + run_cases.DEADLINE
        self.port = None
        while time.monotonic() < until and self.port is None:
            with self._errlock:
                m = re.search(rb"\(port (\d+)\)", self.err)
            if m:
                self.port = int(m.group(1))
            elif proc.poll() is not None:
                break
            else:
                time.sleep(0.01)
        # a server that refuses to start is the case's business (!exit)

    def _read_stderr(self):
        for chunk in iter(lambda: self.p._p.stderr.read1(65536), b""):
            with self._errlock:
                self.err += chunk

    def send(self, data):
        if self.port is None:
            return
        body = data[:-1] if data.endswith(b"\n") else data
        headers = {"Content-Type": "application/json", "Accept": ACCEPT_BOTH}
        try:
            msg = json.loads(body)
        except ValueError:
            msg = None
        meta = None
        if isinstance(msg, dict) and isinstance(msg.get("params"), dict):
            meta = msg["params"].get("_meta")
        version = (meta or {}).get("io.modelcontextprotocol/protocolVersion") \
            if isinstance(meta, dict) else None
        if isinstance(version, str):
            headers["MCP-Protocol-Version"] = version
            if isinstance(msg.get("method"), str):
                headers["Mcp-Method"] = msg["method"]
            name = msg["params"].get("name")
            if msg.get("method") == "tools/call" and isinstance(name, str):
                headers["Mcp-Name"] = name
        elif self.sid is not None:
            headers["Mcp-Session-Id"] = self.sid
        s = socket.create_connection(("127.0.0.1", self.port),
                                     timeout=run_cases.DEADLINE * 6)
        try:
            head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % self.port
            head += "".join("%s: %s\r\n" % kv for kv in headers.items())
            head += "Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body)
            s.sendall(head.encode() + body)
            f = s.makefile("rb")
            try:
                r = _read_response(f)
            except ConnectionError:
                raise CaseError("connection closed without an answer")
            f.close()
        finally:
            s.close()
        if r.header("Mcp-Session-Id"):
            self.sid = r.header("Mcp-Session-Id")
        if (r.header("Content-Type") or "").startswith("text/event-stream"):
            for block in r.body.decode().split("\n\n"):
                for l in block.split("\n"):
                    if l.startswith("data: "):
                        self.buf += l[6:].encode() + b"\n"
        elif r.body:
            self.buf += r.body + b"\n"

    def line(self):
        if b"\n" not in self.buf:
            raise CaseError("no answer line (HTTP)")
        ln, self.buf = self.buf.split(b"\n", 1)
        return ln

    def wait_exit(self):
        try:
            rc = self.p._p.wait(timeout=run_cases.DEADLINE)
        except subprocess.TimeoutExpired:
            raise CaseError("server did not exit within %ss" % run_cases.DEADLINE)
        self._reader.join(timeout=run_cases.DEADLINE)
        return rc

    def kill(self):
        if self.p._p.poll() is None:
            self.p._p.send_signal(signal.SIGTERM)
            try:
                self.p._p.wait(timeout=run_cases.DEADLINE)
            except subprocess.TimeoutExpired:
                self.p._p.kill()
                self.p._p.wait()


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    binary = sys.argv[1]
    data_dir = os.path.join(here, "..", "integration", "data")
    files = []
    for a in sys.argv[2:]:
        if os.path.isdir(a):
            files += sorted(os.path.join(a, f) for f in os.listdir(a)
                            if f.endswith(".case"))
        else:
            files.append(a)
    run_cases.Server = HttpServer
    passed = failed = skipped = 0
    for f in files:
        name = os.path.basename(f)
        if name in STDIO_ONLY:
            skipped += 1
            print("skip %s (%s)" % (name, STDIO_ONLY[name]))
            continue
        try:
            run_cases.run_case(f, binary, data_dir)
            passed += 1
            print("ok   %s" % name)
        except CaseError as e:
            failed += 1
            print("FAIL %s" % e)
    print("integration over HTTP: %d passed, %d failed, %d stdio-only"
          % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
