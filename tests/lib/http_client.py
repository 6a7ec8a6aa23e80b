"""Raw HTTP/1.1 for the transport tests (tests/http, faults, resources):
exact bytes out, status, headers and body back. No HTTP library between
the test and the server, so every header is the one the test wrote."""
import json
import os
import re
import signal
import socket
import subprocess
import tempfile
import time

# Longest wait for the server to log its port, and for requests.
START_DEADLINE_S = 10
# Longest wait for a stop: the server's shutdown grace and abort periods
# (MCP_HTTP_SHUTDOWN_GRACE_S + MCP_HTTP_SHUTDOWN_ABORT_S) and some.
STOP_DEADLINE_S = 25
IO_TIMEOUT_S = 30

ACCEPT_BOTH = "application/json, text/event-stream"
MODERN = "2026-07-28"


class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers      # lower-case name -> value
        self.body = body            # bytes

    def json(self):
        return json.loads(self.body)

    def header(self, name):
        return self.headers.get(name.lower())

    def events(self):
        """The JSON messages of an SSE body, in order."""
        out = []
        for block in self.body.decode().split("\n\n"):
            data = [l[6:] for l in block.split("\n") if l.startswith("data: ")]
            if data:
                out.append(json.loads("\n".join(data)))
        return out


def raw_post(port, body, headers):
    """The bytes of a POST to /mcp with body (bytes) and headers."""
    head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % port
    head += "Content-Type: application/json\r\nAccept: %s\r\n" % ACCEPT_BOTH
    head += "".join("%s: %s\r\n" % kv for kv in headers.items())
    head += "Content-Length: %d\r\n\r\n" % len(body)
    return head.encode() + body


def _read_response(f):
    """One response from the file f of a socket; ConnectionError when the
    connection closes before its status line."""
    line = f.readline()
    if not line:
        raise ConnectionError("connection closed before a status line")
    status = int(line.split()[1])
    headers = {}
    while True:
        line = f.readline().decode("latin-1").rstrip("\r\n")
        if line == "":
            break
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    body = b""
    if headers.get("transfer-encoding", "").lower() == "chunked":
        while True:
            size = int(f.readline().split(b";")[0], 16)
            if size == 0:
                f.readline()
                break
            body += f.read(size)
            f.readline()
    elif "content-length" in headers:
        body = f.read(int(headers["content-length"]))
    return Response(status, headers, body)


class Conn:
    """One keep-alive connection."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port),
                                             timeout=IO_TIMEOUT_S)
        self.f = self.sock.makefile("rb")
        self.port = port

    def send_raw(self, data):
        self.sock.sendall(data)

    def request(self, method, path, body=None, headers=None, host=None):
        h = {"Host": host or "127.0.0.1:%d" % self.port}
        if body is not None:
            if not isinstance(body, (bytes, str)):
                body = json.dumps(body)
            if isinstance(body, str):
                body = body.encode()
            h["Content-Length"] = str(len(body))
        h.update(headers or {})
        head = "%s %s HTTP/1.1\r\n" % (method, path)
        head += "".join("%s: %s\r\n" % kv for kv in h.items() if kv[1] is not None)
        self.sock.sendall(head.encode() + b"\r\n" + (body or b""))
        return _read_response(self.f)

    def close(self):
        self.f.close()
        self.sock.close()


class Server:
    """mcp-sandbox --http 127.0.0.1:0 with extra flags; stopped by pid."""

    def __init__(self, binary, *flags, fixtures=True, env=None):
        self.log = tempfile.NamedTemporaryFile(prefix="mcp-http-", suffix=".log",
                                               delete=False)
        fx = ["--conformance-fixtures"] if fixtures else []
        self.proc = subprocess.Popen(
            [binary, "--http", "127.0.0.1:0", *fx,
             "--log-level", "debug", *flags],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=self.log, env=env)
        deadline = time.monotonic() + START_DEADLINE_S
        self.port = None
        while time.monotonic() < deadline:
            m = re.search(r"\(port (\d+)\)", self.stderr())
            if m:
                self.port = int(m.group(1))
                break
            if self.proc.poll() is not None:
                raise RuntimeError("server exited: " + self.stderr())
            time.sleep(0.02)
        if self.port is None:
            self.proc.kill()
            raise RuntimeError("server did not log its port")

    def stderr(self):
        with open(self.log.name, encoding="utf-8", errors="replace") as f:
            return f.read()

    def conn(self):
        return Conn(self.port)

    def post(self, body, headers=None, **kw):
        c = self.conn()
        try:
            h = {"Content-Type": "application/json", "Accept": ACCEPT_BOTH}
            h.update(headers or {})
            return c.request("POST", "/mcp", body, h, **kw)
        finally:
            c.close()

    def get(self, path, headers=None):
        c = self.conn()
        try:
            return c.request("GET", path, None, headers)
        finally:
            c.close()

    def metric(self, line_prefix, headers=None):
        for line in self.get("/metrics", headers).body.decode().splitlines():
            if line.startswith(line_prefix + " "):
                return int(float(line.rsplit(" ", 1)[1]))
        raise KeyError(line_prefix)

    def stop(self):
        """SIGTERM; returns the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=STOP_DEADLINE_S)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            self.log.close()
            os.unlink(self.log.name)
        return rc


def initialize_body(rid=1, version="2025-11-25"):
    return {"jsonrpc": "2.0", "id": rid, "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": {},
                       "clientInfo": {"name": "http-test", "version": "1"}}}


def modern_meta(caps=None, **extra):
    m = {"io.modelcontextprotocol/protocolVersion": MODERN,
         "io.modelcontextprotocol/clientCapabilities": caps or {}}
    m.update(extra)
    return m


def modern_headers(method, name=None):
    h = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if name is not None:
        h["Mcp-Name"] = name
    return h
