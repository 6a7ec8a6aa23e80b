"""Approvals over HTTP (issue 23), two principals: in 2025-11-25 the
elicitation/create form comes on the tools/call POST's own SSE stream and
the client answers with a POST of the JSON-RPC response (202), after which
the stream carries the result; a grant for this session reaches neither
another MCP session of the same token nor another token. In 2026-07-28 a
requestState issued to one token is refused to another, and a principal's
session grant is its own.

usage: test_approvals.py MCP_SANDBOX_BIN [unittest args]"""
import http.server
import json
import os
import socket
import sys
import tempfile
import threading
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from http_client import (ACCEPT_BOTH, Server, initialize_body,  # noqa: E402
                         modern_headers, modern_meta)

BIN = None
TOKEN_A = "a" * 40
TOKEN_B = "b" * 40
ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}
IO_TIMEOUT_S = 30


class Web(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", "5")
        self.end_headers()
        self.wfile.write(b"hello")

    def log_message(self, *a):
        pass


def bearer(tok):
    return {"Authorization": "Bearer " + tok}


def fetch(host):
    return ("import urllib.request\n"
            "try:\n"
            " print(urllib.request.urlopen('http://%s/', timeout=5).read())\n"
            "except Exception as e:\n"
            " print('failed', e)\n" % host)


class Stream:
    """One POST whose SSE answer is read event by event."""

    def __init__(self, port, body, headers):
        self.sock = socket.create_connection(("127.0.0.1", port),
                                             timeout=IO_TIMEOUT_S)
        self.f = self.sock.makefile("rb")
        data = json.dumps(body).encode()
        h = {"Host": "127.0.0.1:%d" % port,
             "Content-Type": "application/json", "Accept": ACCEPT_BOTH,
             "Content-Length": str(len(data))}
        h.update(headers)
        head = "POST /mcp HTTP/1.1\r\n" + "".join(
            "%s: %s\r\n" % kv for kv in h.items()) + "\r\n"
        self.sock.sendall(head.encode() + data)
        self.status = int(self.f.readline().split()[1])
        self.headers = {}
        while True:
            line = self.f.readline().decode("latin-1").rstrip("\r\n")
            if not line:
                break
            k, _, v = line.partition(":")
            self.headers[k.strip().lower()] = v.strip()
        self.buf = b""

    def event(self):
        """The next SSE message (chunked transfer)."""
        while b"\n\n" not in self.buf:
            size = int(self.f.readline().split(b";")[0], 16)
            if size == 0:
                raise EOFError("the stream ended")
            self.buf += self.f.read(size)
            self.f.readline()
        block, self.buf = self.buf.split(b"\n\n", 1)
        data = [ln[6:] for ln in block.decode().split("\n")
                if ln.startswith("data: ")]
        return json.loads("\n".join(data)) if data else self.event()

    def result(self, rid):
        while True:
            m = self.event()
            if m.get("id") == rid:
                return m

    def close(self):
        self.f.close()
        self.sock.close()


class Approvals(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.web = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Web)
        threading.Thread(target=cls.web.serve_forever, daemon=True).start()
        port = cls.web.server_address[1]
        cls.host = "a.approved.test:%d" % port
        cls.tokens = tempfile.NamedTemporaryFile("w", delete=False)
        cls.tokens.write("%s\n%s\n" % (TOKEN_A, TOKEN_B))
        cls.tokens.close()
        cls.srv = Server(BIN, "--token-file", cls.tokens.name,
                         "--ask-network", "--ask-domain", "*.approved.test:*",
                         "--resolve", "a.approved.test:%d:127.0.0.1" % port,
                         "--allow-domain", "allowed.test:%d" % port,
                         "--resolve", "allowed.test:%d:127.0.0.1" % port,
                         fixtures=False, env=ENV)
        cls.rid = 100

    @classmethod
    def tearDownClass(cls):
        assert cls.srv.stop() == 0
        os.unlink(cls.tokens.name)
        cls.web.shutdown()

    def next_id(self):
        type(self).rid += 1
        return self.rid

    def legacy_open(self, tok):
        body = initialize_body()
        body["params"]["capabilities"] = {"elicitation": {}}
        r = self.srv.post(body, bearer(tok))
        self.assertEqual(r.status, 200)
        h = dict(bearer(tok), **{"Mcp-Session-Id": r.header("Mcp-Session-Id"),
                                 "MCP-Protocol-Version": "2025-11-25"})
        r = self.srv.post({"jsonrpc": "2.0",
                           "method": "notifications/initialized"}, h)
        self.assertEqual(r.status, 202)
        return h

    def legacy_call(self, h, decision, listed=True):
        """A call that needs the host (listing it, or not: its proxy asks
        mid-run), answered decision: (its result, whether it was asked)."""
        rid = self.next_id()
        args = {"language": "python3", "code": fetch(self.host)}
        if listed:
            args["allow_domains"] = [self.host]
        s = Stream(self.srv.port, {
            "jsonrpc": "2.0", "id": rid, "method": "tools/call",
            "params": {"name": "run_code", "arguments": args}}, h)
        try:
            self.assertEqual(s.status, 200)
            if s.headers["content-type"] == "application/json":
                # nothing asked, nothing notified: the answer alone
                m = json.loads(s.f.read(int(s.headers["content-length"])))
                self.assertEqual(m["id"], rid)
                return m["result"], False
            self.assertTrue(s.headers["content-type"].startswith(
                "text/event-stream"))
            m = s.event()
            if m.get("id") == rid:
                return m["result"], False
            self.assertEqual(m["method"], "elicitation/create")
            self.assertIn(self.host, m["params"]["message"])
            res = {"action": "accept", "content": {"decision": decision}} \
                if decision in ("once", "session") else {"action": decision}
            r = self.srv.post({"jsonrpc": "2.0", "id": m["id"],
                               "result": res}, h)
            self.assertEqual(r.status, 202)
            return s.result(rid)["result"], True
        finally:
            s.close()

    def test_legacy_on_the_call_stream(self):
        h = self.legacy_open(TOKEN_A)
        res, asked = self.legacy_call(h, "once")
        self.assertTrue(asked)
        self.assertEqual(res["structuredContent"]["stdout"], "b'hello'\n")
        self.assertEqual(res["structuredContent"]["approvals"][0]["granted"],
                         "once")
        res, asked = self.legacy_call(h, "decline")
        self.assertTrue(asked)
        self.assertTrue(res["isError"])
        self.assertIn("(decline)", res["content"][0]["text"])

    def test_legacy_mid_run_on_the_call_stream(self):
        h = self.legacy_open(TOKEN_A)
        res, asked = self.legacy_call(h, "once", listed=False)
        self.assertTrue(asked, "the proxy's question came on the stream")
        self.assertEqual(res["structuredContent"]["stdout"], "b'hello'\n")
        self.assertEqual(res["structuredContent"]["network"]["connections"]
                         [0]["rule"], "(the user's approval)")

    def test_legacy_session_grant_stays_in_its_session(self):
        h1 = self.legacy_open(TOKEN_A)
        res, asked = self.legacy_call(h1, "session")
        self.assertTrue(asked and res["structuredContent"]["stdout"] ==
                        "b'hello'\n")
        res, asked = self.legacy_call(h1, "deny")
        self.assertFalse(asked, "the session's grant covers its next call")
        h2 = self.legacy_open(TOKEN_A)
        res, asked = self.legacy_call(h2, "deny")
        self.assertTrue(asked, "another MCP session of the same token asks")
        self.assertTrue(res["isError"])
        h3 = self.legacy_open(TOKEN_B)
        res, asked = self.legacy_call(h3, "deny")
        self.assertTrue(asked, "another token asks")
        # the session's end takes its grants
        c = self.srv.conn()
        try:
            r = c.request("DELETE", "/mcp", None, h1)
        finally:
            c.close()
        self.assertIn(r.status, (200, 204))

    def modern_call(self, tok, extra=None):
        params = {"name": "run_code", "arguments": {
            "language": "python3", "code": fetch(self.host),
            "allow_domains": [self.host]},
            "_meta": modern_meta({"elicitation": {}})}
        params.update(extra or {})
        r = self.srv.post({"jsonrpc": "2.0", "id": self.next_id(),
                           "method": "tools/call", "params": params},
                          dict(bearer(tok), **modern_headers("tools/call",
                                                             "run_code")))
        return r.json()

    def test_modern_state_is_the_principals(self):
        m = self.modern_call(TOKEN_A)["result"]
        self.assertEqual(m["resultType"], "input_required")
        ok = {"approval": {"action": "accept",
                           "content": {"decision": "session"}}}
        r = self.modern_call(TOKEN_B, {"inputResponses": ok,
                                       "requestState": m["requestState"]})
        self.assertEqual(r["error"]["code"], -32602)
        self.assertIn("another principal", r["error"]["message"])
        r = self.modern_call(TOKEN_A, {"inputResponses": ok,
                                       "requestState": m["requestState"]})
        self.assertEqual(r["result"]["structuredContent"]["stdout"],
                         "b'hello'\n")
        # the grant is A's: A is not asked again, B is
        r = self.modern_call(TOKEN_A)
        self.assertEqual(r["result"]["resultType"], "complete")
        r = self.modern_call(TOKEN_B)
        self.assertEqual(r["result"]["resultType"], "input_required")


if __name__ == "__main__":
    BIN = sys.argv.pop(1)
    unittest.main()
