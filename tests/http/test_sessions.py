"""run_code sessions over HTTP (issue 21), both eras, two principals:
in 2025-11-25 a session belongs to its MCP session, which no other
session of the same token reaches, and ends with it (DELETE); in
2026-07-28 it belongs to the principal, lasting across stateless
requests, and another token's same name is another session.

usage: test_sessions.py MCP_SANDBOX_BIN [unittest args]"""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from http_client import (Server, initialize_body, modern_headers,  # noqa: E402
                         modern_meta)
from mcptest import pids_with, poll_until  # noqa: E402

# what every python session's interpreter has on its command line
DRIVER = b"_mcp_session"


def drivers():
    return len(pids_with(DRIVER))

BIN = None
TOKEN_A = "a" * 40
TOKEN_B = "b" * 40
# what a plain system gives; no developer shims decide which python runs
ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}


def bearer(tok):
    return {"Authorization": "Bearer " + tok}


def result_of(r):
    """The JSON-RPC result of a response (plain JSON or one SSE event)."""
    if r.header("Content-Type").startswith("text/event-stream"):
        msgs = [json.loads(e) for e in r.events()]
        return [m for m in msgs if "id" in m][-1]["result"]
    return r.json()["result"]


class Sessions(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tokens = tempfile.NamedTemporaryFile("w", delete=False)
        cls.tokens.write("%s\n%s\n" % (TOKEN_A, TOKEN_B))
        cls.tokens.close()
        cls.srv = Server(BIN, "--token-file", cls.tokens.name, fixtures=False,
                         env=ENV)
        cls.rid = 100

    @classmethod
    def tearDownClass(cls):
        assert cls.srv.stop() == 0
        os.unlink(cls.tokens.name)

    def next_id(self):
        type(self).rid += 1
        return self.rid

    def legacy_open(self, tok):
        r = self.srv.post(initialize_body(), bearer(tok))
        self.assertEqual(r.status, 200)
        sid = r.header("Mcp-Session-Id")
        h = dict(bearer(tok), **{"Mcp-Session-Id": sid,
                                 "MCP-Protocol-Version": "2025-11-25"})
        r = self.srv.post({"jsonrpc": "2.0",
                           "method": "notifications/initialized"}, h)
        self.assertEqual(r.status, 202)
        return h

    def legacy_code(self, h, code, session, **kw):
        args = dict(language="python3", code=code, session=session, **kw)
        r = self.srv.post({"jsonrpc": "2.0", "id": self.next_id(),
                           "method": "tools/call",
                           "params": {"name": "run_code",
                                      "arguments": args}}, h)
        self.assertEqual(r.status, 200, r.body)
        return result_of(r)

    def modern_code(self, tok, code, session):
        h = dict(bearer(tok), **modern_headers("tools/call", "run_code"))
        r = self.srv.post({"jsonrpc": "2.0", "id": self.next_id(),
                           "method": "tools/call",
                           "params": {"name": "run_code", "arguments": {
                               "language": "python3", "code": code,
                               "session": session},
                               "_meta": modern_meta()}}, h)
        self.assertEqual(r.status, 200, r.body)
        return result_of(r)

    def test_legacy_session_owns_them(self):
        a1 = self.legacy_open(TOKEN_A)
        a2 = self.legacy_open(TOKEN_A)
        r = self.legacy_code(a1, "v = 'one'", "main")
        self.assertTrue(r["structuredContent"]["session"]["started"])
        r = self.legacy_code(a1, "v", "main")
        self.assertEqual(r["structuredContent"]["stdout"], "'one'\n")
        # the same token, another MCP session: its own "main"
        r = self.legacy_code(a2, "globals().get('v')", "main")
        self.assertTrue(r["structuredContent"]["session"]["started"])
        self.assertEqual(r["structuredContent"]["stdout"], "")
        # DELETE ends the MCP session and its sessions with it
        before = drivers()
        c = self.srv.conn()
        try:
            d = c.request("DELETE", "/mcp", None, a1)
        finally:
            c.close()
        self.assertIn(d.status, (200, 204))
        self.assertTrue(poll_until(lambda: drivers() == before - 1),
                        "the ended MCP session's interpreter is still there")
        a3 = self.legacy_open(TOKEN_A)
        r = self.legacy_code(a3, "globals().get('v')", "main")
        self.assertTrue(r["structuredContent"]["session"]["started"])

    def test_modern_principal_owns_them(self):
        r = self.modern_code(TOKEN_A, "w = 7", "m")
        self.assertTrue(r["structuredContent"]["session"]["started"])
        r = self.modern_code(TOKEN_A, "w * 6", "m")
        self.assertEqual(r["structuredContent"]["stdout"], "42\n")
        self.assertFalse(r["structuredContent"]["session"]["started"])
        r = self.modern_code(TOKEN_B, "globals().get('w')", "m")
        self.assertTrue(r["structuredContent"]["session"]["started"])
        self.assertEqual(r["structuredContent"]["stdout"], "")
        # another era's session of the same token is not the principal's
        h = self.legacy_open(TOKEN_A)
        r = self.legacy_code(h, "globals().get('w')", "m")
        self.assertTrue(r["structuredContent"]["session"]["started"])


class Shares(Sessions):
    """At max_sessions, a client that holds more than one more session
    than the one asking gives up its least recently used idle one."""

    @classmethod
    def setUpClass(cls):
        cls.tokens = tempfile.NamedTemporaryFile("w", delete=False)
        cls.tokens.write("%s\n%s\n" % (TOKEN_A, TOKEN_B))
        cls.tokens.close()
        cls.srv = Server(BIN, "--token-file", cls.tokens.name,
                         "--max-sessions", "2", "--sessions-per-client",
                         "2", fixtures=False, env=ENV)
        cls.rid = 500

    def test_legacy_session_owns_them(self):
        pass

    def test_modern_principal_owns_them(self):
        pass

    def test_a_client_gives_up_what_is_beyond_its_share(self):
        a, b = self.legacy_open(TOKEN_A), self.legacy_open(TOKEN_B)
        self.legacy_code(a, "1", "old")
        self.legacy_code(a, "2", "new")
        r = self.legacy_code(b, "3", "mine")
        self.assertTrue(r["structuredContent"]["session"]["started"], r)
        r = self.legacy_code(a, "1", "old")
        self.assertTrue(r["isError"])
        self.assertEqual(r["content"][0]["text"], "The session 'old' ended "
                         "(the server needed room for another client's "
                         "session (max_sessions), and this client held more "
                         "than its share), so what it held is gone. Call "
                         "again with \"restart\": true to start it afresh, "
                         "or use another name.")
        r = self.legacy_code(a, "2", "new")
        self.assertEqual(r["structuredContent"]["stdout"], "2\n")
        # one each now: neither gives up one to the other
        r = self.legacy_code(b, "4", "second")
        self.assertTrue(r["isError"])
        self.assertIn("The server holds its most sessions (max_sessions: "
                      "2)", r["content"][0]["text"])


if __name__ == "__main__":
    BIN = sys.argv.pop(1)
    unittest.main()
