"""Streamable HTTP transport over raw requests: every status code and
header rule of issue 5, both protocol eras, the endpoint's guards and caps.

usage: test_http.py MCP_SANDBOX_BIN [unittest args]"""
import base64
import json
import os
import re
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
from http_client import (ACCEPT_BOTH, MODERN, STOP_DEADLINE_S,  # noqa: E402
                         Conn, Server, _read_response, initialize_body,
                         modern_headers, modern_meta, raw_post)
from mcptest import pids_with, poll_until  # noqa: E402

BIN = None

# The caps in transport/http_limits.h and server/mcp_limits.h.
MAX_MSG = 4 * 1024 * 1024
MAX_HEADER_BYTES = 16 * 1024
MAX_CONNECTIONS = 256
MAX_SESSIONS = 64
MAX_SESSION_CALLS = 16
HEADER_DEADLINE_S = 10
BODY_DEADLINE_S = 30
SHUTDOWN_GRACE_S = 10
# MCP_HTTP_FLAG_MIN_S: the least --header-deadline, --body-deadline and
# --shutdown-grace accept; the tests that wait for one use it
FLAG_MIN_S = 1
SHORT_BODY_DEADLINE_S = FLAG_MIN_S
# the flags that shorten a time, with their defaults (the most they take)
SECONDS_FLAGS = (("--header-deadline", HEADER_DEADLINE_S),
                 ("--body-deadline", BODY_DEADLINE_S),
                 ("--shutdown-grace", SHUTDOWN_GRACE_S))


def rpc_error(resp):
    return resp.json()["error"]


def start_session(srv, headers=None):
    r = srv.post(initialize_body(), headers)
    assert r.status == 200, (r.status, r.body)
    sid = r.header("Mcp-Session-Id")
    h = {"Mcp-Session-Id": sid}
    h.update(headers or {})
    r2 = srv.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, h)
    assert r2.status == 202, r2.status
    return sid


class Legacy(unittest.TestCase):
    """Handshake era: sessions, JSON and SSE answers, DELETE."""

    @classmethod
    def setUpClass(cls):
        cls.srv = Server(BIN)

    @classmethod
    def tearDownClass(cls):
        assert cls.srv.stop() == 0

    def test_initialize_mints_a_hex_session_id(self):
        r = self.srv.post(initialize_body())
        self.assertEqual(r.status, 200)
        self.assertEqual(r.header("Content-Type"), "application/json")
        self.assertRegex(r.header("Mcp-Session-Id"), r"^[0-9a-f]{32}$")
        self.assertEqual(r.json()["result"]["protocolVersion"], "2025-11-25")

    def test_session_ids_differ(self):
        a = self.srv.post(initialize_body()).header("Mcp-Session-Id")
        b = self.srv.post(initialize_body()).header("Mcp-Session-Id")
        self.assertNotEqual(a, b)

    def test_notification_gets_202_without_body(self):
        sid = start_session(self.srv)
        r = self.srv.post({"jsonrpc": "2.0", "method": "notifications/cancelled",
                           "params": {"requestId": 99}},
                          {"Mcp-Session-Id": sid})
        self.assertEqual((r.status, r.body), (202, b""))

    def test_response_message_gets_202(self):
        sid = start_session(self.srv)
        r = self.srv.post({"jsonrpc": "2.0", "id": 5, "result": {}},
                          {"Mcp-Session-Id": sid})
        self.assertEqual((r.status, r.body), (202, b""))

    def test_request_without_session_is_400(self):
        r = self.srv.post({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        self.assertEqual(r.status, 400)
        e = rpc_error(r)
        self.assertEqual(e["code"], -32600)
        self.assertIn("Mcp-Session-Id", e["message"])
        self.assertIsNone(r.json()["id"])

    def test_unknown_session_is_404(self):
        r = self.srv.post({"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                          {"Mcp-Session-Id": "0" * 32})
        self.assertEqual(r.status, 404)
        self.assertEqual(rpc_error(r)["code"], -32600)

    def test_tools_list_in_session_is_json(self):
        sid = start_session(self.srv)
        r = self.srv.post({"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
                          {"Mcp-Session-Id": sid,
                           "MCP-Protocol-Version": "2025-11-25"})
        self.assertEqual(r.status, 200)
        self.assertEqual(r.header("Content-Type"), "application/json")
        names = [t["name"] for t in r.json()["result"]["tools"]]
        self.assertIn("test_simple_text", names)
        self.assertIn("calculate", names)

    def test_older_protocol_version_header_is_accepted(self):
        sid = start_session(self.srv)
        r = self.srv.post({"jsonrpc": "2.0", "id": 3, "method": "ping"},
                          {"Mcp-Session-Id": sid,
                           "MCP-Protocol-Version": "2025-03-26"})
        self.assertEqual((r.status, r.json()["result"]), (200, {}))

    def test_unsupported_protocol_version_header_is_400(self):
        sid = start_session(self.srv)
        r = self.srv.post({"jsonrpc": "2.0", "id": 3, "method": "ping"},
                          {"Mcp-Session-Id": sid,
                           "MCP-Protocol-Version": "1999-01-01"})
        self.assertEqual(r.status, 400)
        e = rpc_error(r)
        self.assertEqual(e["code"], -32022)
        self.assertEqual(e["data"]["requested"], "1999-01-01")
        self.assertIn("2025-11-25", e["data"]["supported"])
        self.assertIn(MODERN, e["data"]["supported"])

    def test_progress_call_answers_with_sse(self):
        sid = start_session(self.srv)
        r = self.srv.post({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                           "params": {"name": "test_tool_with_progress",
                                      "arguments": {},
                                      "_meta": {"progressToken": "tok"}}},
                          {"Mcp-Session-Id": sid})
        self.assertEqual(r.status, 200)
        self.assertEqual(r.header("Content-Type"), "text/event-stream")
        self.assertEqual(r.header("Cache-Control"), "no-cache")
        ev = r.events()
        self.assertEqual([e.get("method") for e in ev],
                         ["notifications/progress"] * 3 + [None])
        self.assertEqual([e["params"]["progress"] for e in ev[:3]],
                         [0, 50, 100])
        self.assertEqual({e["params"]["progressToken"] for e in ev[:3]}, {"tok"})
        self.assertEqual(ev[3]["id"], 7)
        self.assertIn("result", ev[3])

    def test_logging_call_after_set_level_answers_with_sse(self):
        sid = start_session(self.srv)
        h = {"Mcp-Session-Id": sid}
        r = self.srv.post({"jsonrpc": "2.0", "id": 8, "method": "logging/setLevel",
                           "params": {"level": "debug"}}, h)
        self.assertEqual(r.json()["result"], {})
        r = self.srv.post({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                           "params": {"name": "test_tool_with_logging"}}, h)
        self.assertEqual(r.header("Content-Type"), "text/event-stream")
        ev = r.events()
        self.assertEqual([e["params"]["data"] for e in ev[:3]],
                         ["Tool execution started", "Tool processing data",
                          "Tool execution completed"])
        self.assertEqual(ev[3]["id"], 9)

    def test_call_without_notifications_is_json(self):
        sid = start_session(self.srv)
        r = self.srv.post({"jsonrpc": "2.0", "id": 10, "method": "tools/call",
                           "params": {"name": "calculate",
                                      "arguments": {"expression": "1/3+1/6"}}},
                          {"Mcp-Session-Id": sid})
        self.assertEqual(r.header("Content-Type"), "application/json")
        self.assertEqual(r.json()["result"]["structuredContent"]["value"], "1/2")

    def test_protocol_errors_ride_on_200(self):
        sid = start_session(self.srv)
        r = self.srv.post({"jsonrpc": "2.0", "id": 11, "method": "tools/call",
                           "params": {"name": "no_such_tool"}},
                          {"Mcp-Session-Id": sid})
        self.assertEqual(r.status, 200)
        self.assertEqual(rpc_error(r)["code"], -32602)
        self.assertEqual(r.json()["id"], 11)

    def test_delete_ends_the_session(self):
        sid = start_session(self.srv)
        c = self.srv.conn()
        try:
            r = c.request("DELETE", "/mcp", None, {"Mcp-Session-Id": sid})
            self.assertEqual((r.status, r.body), (200, b""))
            r = c.request("DELETE", "/mcp", None, {"Mcp-Session-Id": sid})
            self.assertEqual(r.status, 404)
        finally:
            c.close()
        r = self.srv.post({"jsonrpc": "2.0", "id": 1, "method": "ping"},
                          {"Mcp-Session-Id": sid})
        self.assertEqual(r.status, 404)

    def test_delete_removes_the_session_workspace(self):
        sid = start_session(self.srv)
        m = re.search(r"session %s\.\.\. workspace (\S+)" % sid[:8],
                      self.srv.stderr())
        self.assertIsNotNone(m, "no workspace logged for the session")
        ws = m.group(1)
        self.assertTrue(os.path.isdir(ws))
        other = start_session(self.srv)
        m2 = re.search(r"session %s\.\.\. workspace (\S+)" % other[:8],
                       self.srv.stderr())
        self.assertNotEqual(m2.group(1), ws, "sessions share a workspace")
        c = self.srv.conn()
        try:
            self.assertEqual(c.request("DELETE", "/mcp", None,
                                       {"Mcp-Session-Id": sid}).status, 200)
        finally:
            c.close()
        self.assertTrue(poll_until(lambda: not os.path.exists(ws)),
                        "the workspace outlived its session")
        self.assertTrue(os.path.isdir(m2.group(1)))

    def test_delete_without_session_is_400(self):
        c = self.srv.conn()
        try:
            r = c.request("DELETE", "/mcp")
            self.assertEqual(r.status, 400)
            self.assertEqual(rpc_error(r)["code"], -32600)
        finally:
            c.close()

    def test_delete_cancels_running_calls(self):
        sid = start_session(self.srv)
        c = self.srv.conn()
        try:
            c.send_raw(self._call_bytes(c.port, sid, 21))
            first = c.f.readline()
            self.assertTrue(first.startswith(b"HTTP/1.1 200"), first)
            d = self.srv.conn()
            r = d.request("DELETE", "/mcp", None, {"Mcp-Session-Id": sid})
            d.close()
            self.assertEqual(r.status, 200)
            rest = c.f.read1(65536) if hasattr(c.f, "read1") else b""
            # the stream ends; the cancelled call sends no response
            body = rest
            while b"0\r\n\r\n" not in body:
                more = c.sock.recv(65536)
                if not more:
                    break
                body += more
            self.assertNotIn(b'"id":21', body)
        finally:
            c.close()

    def _call_bytes(self, port, sid, rid):
        body = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                           "params": {"name": "test_wait_cancel",
                                      "_meta": {"progressToken": rid}}}).encode()
        return (("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
                 "Content-Type: application/json\r\nAccept: %s\r\n"
                 "Mcp-Session-Id: %s\r\nContent-Length: %d\r\n\r\n")
                % (port, ACCEPT_BOTH, sid, len(body))).encode() + body

    def test_get_is_405_with_allow(self):
        r = self.srv.get("/mcp", {"Accept": "text/event-stream"})
        self.assertEqual(r.status, 405)
        self.assertEqual(r.header("Allow"), "POST, DELETE, OPTIONS")
        self.assertEqual(rpc_error(r)["code"], -32600)

    def test_put_is_405(self):
        c = self.srv.conn()
        try:
            r = c.request("PUT", "/mcp", "{}", {"Content-Type": "application/json"})
            self.assertEqual(r.status, 405)
        finally:
            c.close()

    def test_other_path_is_404(self):
        self.assertEqual(self.srv.get("/nope").status, 404)

    def test_healthz(self):
        r = self.srv.get("/healthz")
        self.assertEqual((r.status, r.body), (200, b"ok\n"))
        self.assertEqual(r.header("Content-Type"), "text/plain")

    def test_healthz_and_metrics_are_get_only(self):
        for path in ("/healthz", "/metrics"):
            c = self.srv.conn()
            try:
                r = c.request("POST", path, "{}",
                              {"Content-Type": "application/json"})
            finally:
                c.close()
            self.assertEqual(r.status, 405, path)
            self.assertEqual(r.header("Allow"), "GET, HEAD")

    def test_accept_without_event_stream_is_406(self):
        r = self.srv.post(initialize_body(), {"Accept": "application/json"})
        self.assertEqual(r.status, 406)
        self.assertEqual(rpc_error(r)["code"], -32600)

    def test_missing_accept_is_406(self):
        r = self.srv.post(initialize_body(), {"Accept": None})
        self.assertEqual(r.status, 406)

    def test_wildcard_accept_is_fine(self):
        r = self.srv.post(initialize_body(), {"Accept": "*/*"})
        self.assertEqual(r.status, 200)

    def test_wrong_content_type_is_415(self):
        r = self.srv.post(initialize_body(), {"Content-Type": "text/plain"})
        self.assertEqual(r.status, 415)
        self.assertEqual(rpc_error(r)["code"], -32600)

    def test_json_with_charset_is_fine(self):
        r = self.srv.post(initialize_body(),
                          {"Content-Type": "application/json; charset=utf-8"})
        self.assertEqual(r.status, 200)

    def test_not_json_is_400_parse_error(self):
        r = self.srv.post("{nope")
        self.assertEqual(r.status, 400)
        self.assertEqual(rpc_error(r)["code"], -32700)

    def test_batch_is_400_invalid_request(self):
        r = self.srv.post([initialize_body()])
        self.assertEqual(r.status, 400)
        self.assertEqual(rpc_error(r)["code"], -32600)


class Modern(unittest.TestCase):
    """2026-07-28: stateless, headers checked against the body."""

    @classmethod
    def setUpClass(cls):
        cls.srv = Server(BIN)

    @classmethod
    def tearDownClass(cls):
        assert cls.srv.stop() == 0

    def call(self, method, params, headers, rid=1):
        return self.srv.post({"jsonrpc": "2.0", "id": rid, "method": method,
                              "params": params}, headers)

    def test_discover(self):
        r = self.call("server/discover", {"_meta": modern_meta()},
                      modern_headers("server/discover"))
        self.assertEqual(r.status, 200)
        res = r.json()["result"]
        self.assertEqual(res["resultType"], "complete")
        self.assertIn(MODERN, res["supportedVersions"])
        self.assertIsNone(r.header("Mcp-Session-Id"))

    def test_tools_list_has_cache_hints(self):
        r = self.call("tools/list", {"_meta": modern_meta()},
                      modern_headers("tools/list"))
        res = r.json()["result"]
        self.assertEqual((r.status, res["cacheScope"]), (200, "public"))
        self.assertGreaterEqual(res["ttlMs"], 0)

    def test_tools_call_with_matching_headers(self):
        r = self.call("tools/call", {"name": "calculate",
                                     "arguments": {"expression": "2^10"},
                                     "_meta": modern_meta()},
                      modern_headers("tools/call", "calculate"))
        self.assertEqual(r.status, 200)
        self.assertEqual(r.json()["result"]["structuredContent"]["value"], "1024")

    def test_base64_mcp_name_is_decoded(self):
        name = "=?base64?%s?=" % base64.b64encode(b"calculate").decode()
        r = self.call("tools/call", {"name": "calculate",
                                     "arguments": {"expression": "1"},
                                     "_meta": modern_meta()},
                      modern_headers("tools/call", name))
        self.assertEqual(r.status, 200)

    def assert_mismatch(self, r):
        self.assertEqual(r.status, 400)
        self.assertEqual(rpc_error(r)["code"], -32020)

    def test_missing_method_header_is_400_32020(self):
        h = modern_headers("tools/list")
        del h["Mcp-Method"]
        self.assert_mismatch(self.call("tools/list", {"_meta": modern_meta()}, h))

    def test_method_header_mismatch_is_400_32020(self):
        self.assert_mismatch(self.call("tools/list", {"_meta": modern_meta()},
                                       modern_headers("prompts/list")))

    def test_missing_name_header_is_400_32020(self):
        self.assert_mismatch(self.call(
            "tools/call", {"name": "calculate", "arguments": {"expression": "1"},
                           "_meta": modern_meta()}, modern_headers("tools/call")))

    def test_name_header_mismatch_is_400_32020(self):
        self.assert_mismatch(self.call(
            "tools/call", {"name": "calculate", "arguments": {"expression": "1"},
                           "_meta": modern_meta()},
            modern_headers("tools/call", "other")))

    def test_bad_base64_name_is_400_32020(self):
        self.assert_mismatch(self.call(
            "tools/call", {"name": "calculate", "arguments": {"expression": "1"},
                           "_meta": modern_meta()},
            modern_headers("tools/call", "=?base64?Y2FsY3VsYXR?=")))

    def test_version_header_differs_from_meta_is_400_32020(self):
        m = modern_meta()
        m["io.modelcontextprotocol/protocolVersion"] = "2099-01-01"
        self.assert_mismatch(self.call("tools/list", {"_meta": m},
                                       modern_headers("tools/list")))

    def test_mirrored_param_header_must_match(self):
        p = {"name": "test_header_param", "arguments": {"region": "eu"},
             "_meta": modern_meta()}
        h = modern_headers("tools/call", "test_header_param")
        self.assert_mismatch(self.call("tools/call", p, h))
        h["Mcp-Param-Region"] = "us"
        self.assert_mismatch(self.call("tools/call", p, h))
        h["Mcp-Param-Region"] = "eu"
        self.assertEqual(self.call("tools/call", p, h).status, 200)
        h["Mcp-Param-Region"] = "=?base64?ZXU=?="
        self.assertEqual(self.call("tools/call", p, h).status, 200)

    def test_missing_meta_is_400_32602(self):
        r = self.call("tools/list", {}, modern_headers("tools/list"))
        self.assertEqual(r.status, 400)
        self.assertEqual(rpc_error(r)["code"], -32602)

    def test_unknown_method_is_404_32601(self):
        r = self.call("prompts/list", {"_meta": modern_meta()},
                      modern_headers("prompts/list"))
        self.assertEqual(r.status, 404)
        self.assertEqual(rpc_error(r)["code"], -32601)

    def test_removed_method_is_404(self):
        r = self.call("ping", {"_meta": modern_meta()}, modern_headers("ping"))
        self.assertEqual(r.status, 404)
        r = self.call("initialize", {"_meta": modern_meta()},
                      modern_headers("initialize"))
        self.assertEqual(r.status, 404)

    def test_missing_capability_is_400_32021(self):
        r = self.call("tools/call", {"name": "test_missing_capability",
                                     "_meta": modern_meta()},
                      modern_headers("tools/call", "test_missing_capability"))
        self.assertEqual(r.status, 400)
        e = rpc_error(r)
        self.assertEqual(e["code"], -32021)
        self.assertEqual(e["data"]["requiredCapabilities"], {"sampling": {}})

    def test_unknown_tool_is_400_32602(self):
        r = self.call("tools/call", {"name": "nope", "_meta": modern_meta()},
                      modern_headers("tools/call", "nope"))
        self.assertEqual(r.status, 400)
        self.assertEqual(rpc_error(r)["code"], -32602)

    def test_log_level_in_meta_gives_sse(self):
        r = self.call("tools/call", {"name": "test_tool_with_logging",
                                     "_meta": modern_meta(**{
                                         "io.modelcontextprotocol/logLevel":
                                         "info"})},
                      modern_headers("tools/call", "test_tool_with_logging"))
        self.assertEqual(r.header("Content-Type"), "text/event-stream")
        self.assertEqual(r.header("X-Accel-Buffering"), "no")
        ev = r.events()
        self.assertEqual([e.get("method") for e in ev],
                         ["notifications/message"] * 3 + [None])
        self.assertEqual(ev[3]["result"]["resultType"], "complete")

    def test_no_log_without_log_level(self):
        r = self.call("tools/call", {"name": "test_logging_tool",
                                     "_meta": modern_meta()},
                      modern_headers("tools/call", "test_logging_tool"))
        self.assertEqual(r.header("Content-Type"), "application/json")
        self.assertIn("result", r.json())

    def test_closed_stream_cancels_the_call(self):
        body = json.dumps({"jsonrpc": "2.0", "id": 31, "method": "tools/call",
                           "params": {"name": "test_wait_cancel",
                                      "_meta": modern_meta(progressToken=1)}}
                          ).encode()
        h = modern_headers("tools/call", "test_wait_cancel")
        before = self.srv.metric(
            'mcp_tool_calls_total{tool="test_wait_cancel",outcome="ok"}')
        c = Conn(self.srv.port)
        c.send_raw(raw_post(self.srv.port, body, h))
        self.assertTrue(c.f.readline().startswith(b"HTTP/1.1 200"))
        while b"notifications/progress" not in c.f.readline():
            pass
        c.close()
        self.assertTrue(poll_until(lambda: self.srv.metric(
            'mcp_tool_calls_total{tool="test_wait_cancel",outcome="ok"}')
            == before + 1), "the call did not end after its stream closed")
        self.assertGreaterEqual(self.srv.metric(
            'mcp_http_streams_closed_total{cancelled="true"}'), 1)


class ModernSandbox(unittest.TestCase):
    """A closed response stream kills the call's sandbox (2026-07-28)."""

    @classmethod
    def setUpClass(cls):
        cls.srv = Server(BIN)
        r = cls.srv.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                          "params": {"_meta": modern_meta()}},
                         modern_headers("tools/list"))
        cls.tools = [t["name"] for t in r.json()["result"]["tools"]]

    @classmethod
    def tearDownClass(cls):
        assert cls.srv.stop() == 0

    def test_sandbox_runs_are_timed_in_metrics(self):
        if "run_command" not in self.tools:
            self.skipTest("run_command is not offered here")
        m = 'mcp_tool_run_seconds_count{tool="run_command"}'
        before = self.srv.metric(m)
        r = self.srv.post({"jsonrpc": "2.0", "id": 42, "method": "tools/call",
                           "params": {"name": "run_command",
                                      "arguments": {"command": "echo",
                                                    "args": ["hi"]},
                                      "_meta": modern_meta()}},
                          modern_headers("tools/call", "run_command"))
        res = r.json()["result"]
        if res.get("isError"):
            self.skipTest("the sandbox cannot run here: " +
                          res["content"][0]["text"][:80])
        self.assertEqual(res["structuredContent"]["stdout"], "hi\n")
        self.assertEqual(self.srv.metric(m), before + 1)
        self.assertEqual(self.srv.metric(
            'mcp_tool_run_seconds_bucket{tool="run_command",le="+Inf"}'),
            before + 1)

    def test_closing_a_plain_call_kills_its_sandbox(self):
        if "run_code" not in self.tools:
            self.skipTest("run_code is not offered here")
        marker = "marker_%d_%d" % (os.getpid(), time.monotonic_ns())
        code = "import time\n%s = 1\ntime.sleep(60)\n" % marker
        body = json.dumps({"jsonrpc": "2.0", "id": 41, "method": "tools/call",
                           "params": {"name": "run_code",
                                      "arguments": {"language": "python3",
                                                    "code": code,
                                                    "timeout_ms": 60000},
                                      "_meta": modern_meta()}}).encode()
        h = modern_headers("tools/call", "run_code")
        c = Conn(self.srv.port)
        c.send_raw(raw_post(self.srv.port, body, h))
        if not poll_until(lambda: pids_with(marker.encode())):
            c.close()
            self.skipTest("the sandboxed program never started (no sandbox "
                          "here?)")
        c.close()
        self.assertTrue(poll_until(lambda: not pids_with(marker.encode())),
                        "the sandbox outlived its closed response stream")
        self.assertTrue(poll_until(lambda: self.srv.metric(
            'mcp_tool_calls_total{tool="run_code",outcome="tool_error"}') +
            self.srv.metric(
            'mcp_tool_calls_total{tool="run_code",outcome="ok"}') == 1))
        self.assertEqual(self.srv.metric(
            'mcp_http_streams_closed_total{cancelled="true"}'), 1)


class Guards(unittest.TestCase):
    """Origin, Host, caps: every refusal has its status and a JSON body."""

    @classmethod
    def setUpClass(cls):
        # the session table's own cap (64): no workspace bound below it
        cls.srv = Server(BIN, "--allow-origin", "https://app.example",
                         "--workspaces-mb", "0")

    @classmethod
    def tearDownClass(cls):
        assert cls.srv.stop() == 0

    def test_foreign_origin_is_403(self):
        r = self.srv.post(initialize_body(), {"Origin": "http://evil.example.com"})
        self.assertEqual(r.status, 403)
        self.assertEqual(rpc_error(r)["code"], -32600)

    def test_null_origin_is_403(self):
        self.assertEqual(self.srv.post(initialize_body(),
                                       {"Origin": "null"}).status, 403)

    def test_loopback_origins_are_allowed(self):
        for o in ("http://localhost:3000", "http://127.0.0.1",
                  "https://[::1]:8443"):
            self.assertEqual(self.srv.post(initialize_body(),
                                           {"Origin": o}).status, 200, o)

    def test_cors_for_an_allowed_origin(self):
        r = self.srv.post(initialize_body(), {"Origin": "https://app.example"})
        self.assertEqual(r.status, 200)
        self.assertEqual(r.header("Access-Control-Allow-Origin"),
                         "https://app.example")
        self.assertIn("Mcp-Session-Id",
                      r.header("Access-Control-Expose-Headers"))
        self.assertIsNone(self.srv.post(initialize_body())
                          .header("Access-Control-Allow-Origin"))

    def test_preflight_is_answered_without_a_token(self):
        c = self.srv.conn()
        try:
            r = c.request("OPTIONS", "/mcp", None,
                          {"Origin": "https://app.example",
                           "Access-Control-Request-Method": "POST"})
        finally:
            c.close()
        self.assertEqual(r.status, 204)
        self.assertEqual(r.header("Access-Control-Allow-Origin"),
                         "https://app.example")
        self.assertIn("POST", r.header("Access-Control-Allow-Methods"))
        self.assertIn("Mcp-Session-Id", r.header("Access-Control-Allow-Headers"))
        c = self.srv.conn()
        try:
            r = c.request("OPTIONS", "/mcp", None,
                          {"Origin": "https://evil.example"})
        finally:
            c.close()
        self.assertEqual(r.status, 403)
        self.assertIsNone(r.header("Access-Control-Allow-Origin"))

    def test_configured_origin_is_allowed(self):
        self.assertEqual(self.srv.post(
            initialize_body(), {"Origin": "https://app.example"}).status, 200)
        self.assertEqual(self.srv.post(
            initialize_body(), {"Origin": "https://app.example:444"}).status, 403)

    def test_foreign_host_is_403(self):
        r = self.srv.post(initialize_body(), host="evil.example.com")
        self.assertEqual(r.status, 403)
        r = self.srv.post(initialize_body(), host="localhost.evil.com:80")
        self.assertEqual(r.status, 403)

    def test_loopback_hosts_are_allowed(self):
        for h in ("localhost", "localhost:%d" % self.srv.port, "[::1]:1"):
            self.assertEqual(self.srv.post(initialize_body(), host=h).status,
                             200, h)

    def test_guards_apply_to_metrics_too(self):
        r = self.srv.get("/metrics", {"Origin": "http://evil.example.com"})
        self.assertEqual(r.status, 403)

    def test_body_over_cap_is_413_before_reading(self):
        c = self.srv.conn()
        try:
            head = ("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    "Content-Type: application/json\r\nAccept: %s\r\n"
                    "Content-Length: %d\r\n\r\n" % (ACCEPT_BOTH, MAX_MSG + 1))
            c.send_raw(head.encode())
            r = _read_response(c.f)
            self.assertEqual(r.status, 413)
            self.assertEqual(rpc_error(r)["code"], -32600)
        finally:
            c.close()
        self.assertEqual(self.srv.get("/healthz").status, 200)

    def test_chunked_body_over_cap_is_413(self):
        c = self.srv.conn()
        try:
            c.send_raw(("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                        "Content-Type: application/json\r\nAccept: %s\r\n"
                        "Transfer-Encoding: chunked\r\n\r\n" % ACCEPT_BOTH).encode())
            chunk = b" " * 65536
            for _ in range(MAX_MSG // len(chunk) + 1):
                c.send_raw(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
            c.send_raw(b"0\r\n\r\n")
            r = _read_response(c.f)
            self.assertEqual(r.status, 413)
        finally:
            c.close()

    def test_body_at_cap_is_read(self):
        body = json.dumps(initialize_body())
        body += " " * (MAX_MSG - len(body))
        r = self.srv.post(body)
        self.assertEqual(r.status, 200)

    @staticmethod
    def _slow_body(srv, pause_s):
        # a body of which 10 bytes come, then the rest after pause_s
        body = json.dumps(initialize_body()).encode()
        c = srv.conn()
        try:
            c.send_raw(("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                        "Content-Type: application/json\r\nAccept: %s\r\n"
                        "Content-Length: %d\r\n\r\n" % (ACCEPT_BOTH, len(body))
                        ).encode() + body[:10])
            # waits past a deadline: at least pause_s pass, whatever the load
            time.sleep(pause_s)
            c.send_raw(body[10:])
            return _read_response(c.f)
        finally:
            c.close()

    def test_body_slower_than_the_deadline_is_408(self):
        # a body still arriving after the deadline: a server of its own
        # with the shortest deadline, so that the wait is 2 s and not 31
        srv = Server(BIN, "--body-deadline", str(SHORT_BODY_DEADLINE_S))
        try:
            r = self._slow_body(srv, SHORT_BODY_DEADLINE_S + 1)
            self.assertEqual(r.status, 408)
            self.assertEqual(rpc_error(r)["code"], -32600)
        finally:
            srv.stop()

    def test_body_within_the_default_deadline_is_read(self):
        # the same pause on the default deadline (30 s) is no refusal
        r = self._slow_body(self.srv, SHORT_BODY_DEADLINE_S + 1)
        self.assertEqual(r.status, 200)

    def test_headers_over_cap_are_431(self):
        r = self.srv.post(initialize_body(), {"X-Pad": "a" * MAX_HEADER_BYTES})
        self.assertEqual(r.status, 431)
        self.assertEqual(rpc_error(r)["code"], -32600)

    def test_session_cap_takes_the_oldest_idle_session(self):
        # one principal (no tokens) holds the whole cap; a new session
        # beyond it ends that principal's oldest idle one (a 503 comes
        # only when every session has a call running: test_http_session.c)
        made = []
        try:
            for _ in range(MAX_SESSIONS + 1):
                r = self.srv.post(initialize_body())
                self.assertEqual(r.status, 200)
                made.append(r.header("Mcp-Session-Id"))
            self.assertEqual(self.srv.metric("mcp_sessions"), MAX_SESSIONS)
            ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
            self.assertEqual(self.srv.post(ping, {"Mcp-Session-Id":
                                                  made[0]}).status, 404)
            self.assertEqual(self.srv.post(ping, {"Mcp-Session-Id":
                                                  made[-1]}).status, 200)
        finally:
            for sid in made[1:]:
                c = self.srv.conn()
                c.request("DELETE", "/mcp", None, {"Mcp-Session-Id": sid})
                c.close()
        self.assertEqual(self.srv.post(initialize_body()).status, 200)

    def test_per_session_call_cap_is_429(self):
        sid = start_session(self.srv)
        held = []
        try:
            for rid in range(MAX_SESSION_CALLS):
                c = self.srv.conn()
                held.append(c)
                c.send_raw(Legacy._call_bytes(None, c.port, sid, 100 + rid))
                self.assertTrue(c.f.readline().startswith(b"HTTP/1.1 200"))
                while b"notifications/progress" not in c.f.readline():
                    pass
            r = self.srv.post({"jsonrpc": "2.0", "id": 1, "method": "ping"},
                              {"Mcp-Session-Id": sid})
            self.assertEqual(r.status, 429)
            self.assertEqual(r.header("Retry-After"), "1")
            self.assertEqual(rpc_error(r)["code"], -32603)
        finally:
            c = self.srv.conn()
            self.assertEqual(c.request("DELETE", "/mcp", None,
                                       {"Mcp-Session-Id": sid}).status, 200)
            c.close()
            for h in held:
                h.close()

    def test_connection_cap_is_503(self):
        idle = []
        last = []

        # Past our cap MHD still accepts (MCP_HTTP_CONN_SLACK), so the
        # one outcome is an HTTP answer: 200 until the server has counted
        # every connection, then 503. A reset or a close without an answer
        # would be a bug here, and is raised, not polled past.
        def over_cap():
            r = self.srv.get("/healthz")
            last[:] = [r]
            return r.status == 503
        try:
            # each open connection counts; one more is over the cap. They
            # come from two addresses: one may hold only half of them
            # (MCP_HTTP_MAX_CONN_PER_ADDR, test_tenancy.py)
            # Each sends one request and stays open (keep-alive), so that
            # the header deadline (10 s from accept) cannot close it while
            # the others are opened.
            for i in range(MAX_CONNECTIONS):
                c = socket.create_connection(
                    ("127.0.0.1", self.srv.port), timeout=30,
                    source_address=("127.0.0.%d" % (2 + i % 2), 0))
                c.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                idle.append(c)
            for c in idle:
                self.assertEqual(_read_response(c.makefile("rb")).status,
                                 200)
            self.assertTrue(poll_until(over_cap))
            r = last[0]
            self.assertEqual(r.header("Connection"), "close")
            self.assertEqual(r.header("Retry-After"), "1")
            self.assertEqual(rpc_error(r)["code"], -32603)
        finally:
            for c in idle:
                c.close()
        self.assertTrue(poll_until(
            lambda: self.srv.get("/healthz").status == 200))

    def test_metrics_count_refusals(self):
        self.srv.post(initialize_body(), {"Origin": "http://evil.example"})
        text = self.srv.get("/metrics").body.decode()
        self.assertRegex(text, r'mcp_http_rejected_total\{reason="origin"\} [1-9]')
        self.assertIn('# TYPE mcp_tool_run_seconds histogram', text)
        self.assertIn('mcp_tool_calls_total{tool="calculate",outcome="ok"}', text)


class Auth(unittest.TestCase):
    """--token-file: bearer tokens, constant-time, sessions bound to one."""

    TOKEN_A = "a" * 40
    TOKEN_B = "b" * 40

    @classmethod
    def setUpClass(cls):
        cls.tokens = tempfile.NamedTemporaryFile("w", delete=False)
        cls.tokens.write("# two clients\n%s\n\n%s\n" % (cls.TOKEN_A, cls.TOKEN_B))
        cls.tokens.close()
        cls.srv = Server(BIN, "--token-file", cls.tokens.name)

    @classmethod
    def tearDownClass(cls):
        assert cls.srv.stop() == 0
        os.unlink(cls.tokens.name)

    def bearer(self, tok):
        return {"Authorization": "Bearer " + tok}

    def test_missing_token_is_401_with_challenge(self):
        r = self.srv.post(initialize_body())
        self.assertEqual(r.status, 401)
        self.assertEqual(r.header("WWW-Authenticate"), 'Bearer realm="mcp-sandbox"')
        self.assertEqual(rpc_error(r)["code"], -32600)

    def test_wrong_token_is_401(self):
        self.assertEqual(self.srv.post(initialize_body(),
                                       self.bearer("c" * 40)).status, 401)
        self.assertEqual(self.srv.post(initialize_body(),
                                       self.bearer(self.TOKEN_A[:-1])).status, 401)
        self.assertEqual(self.srv.post(initialize_body(),
                                       {"Authorization": "Basic " + self.TOKEN_A}
                                       ).status, 401)

    def test_right_tokens_are_200(self):
        for t in (self.TOKEN_A, self.TOKEN_B):
            self.assertEqual(self.srv.post(initialize_body(),
                                           self.bearer(t)).status, 200)

    def test_preflight_needs_no_token(self):
        c = self.srv.conn()
        try:
            r = c.request("OPTIONS", "/mcp", None,
                          {"Origin": "http://localhost:5173",
                           "Access-Control-Request-Method": "POST"})
        finally:
            c.close()
        self.assertEqual(r.status, 204)
        self.assertIn("Authorization", r.header("Access-Control-Allow-Headers"))

    def test_healthz_needs_no_token_metrics_an_operator(self):
        # /metrics counts both principals' calls: neither may read it
        self.assertEqual(self.srv.get("/healthz").status, 200)
        self.assertEqual(self.srv.get("/metrics").status, 401)
        for t in (self.TOKEN_A, self.TOKEN_B):
            r = self.srv.get("/metrics", self.bearer(t))
            self.assertEqual(r.status, 403)
            self.assertIn(b"Forbidden: /metrics has every principal's "
                          b"figures; with several tokens it answers a "
                          b"token of --metrics-token-file only", r.body)

    def test_metrics_token_file(self):
        ops = tempfile.NamedTemporaryFile("w", delete=False)
        ops.write("%s\n" % ("m" * 40))
        ops.close()
        srv = Server(BIN, "--token-file", self.tokens.name,
                     "--metrics-token-file", ops.name)
        try:
            r = srv.get("/metrics", self.bearer("m" * 40))
            self.assertEqual(r.status, 200)
            self.assertIn(b"mcp_", r.body)
            for t in (self.TOKEN_A, self.TOKEN_B, "x" * 40):
                r = srv.get("/metrics", self.bearer(t))
                self.assertEqual(r.status, 401)
                self.assertIn(b"Unauthorized: /metrics needs a token of "
                              b"--metrics-token-file", r.body)
            # the operator's token is no principal's: no session with it
            self.assertEqual(srv.post(initialize_body(),
                                      self.bearer("m" * 40)).status, 401)
            self.assertEqual(srv.post(initialize_body(),
                                      self.bearer(self.TOKEN_A)).status, 200)
        finally:
            self.assertEqual(srv.stop(), 0)
            os.unlink(ops.name)

    def test_session_is_bound_to_its_token(self):
        sid = start_session(self.srv, self.bearer(self.TOKEN_A))
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        h = {"Mcp-Session-Id": sid}
        h.update(self.bearer(self.TOKEN_B))
        self.assertEqual(self.srv.post(ping, h).status, 404)
        h.update(self.bearer(self.TOKEN_A))
        self.assertEqual(self.srv.post(ping, h).status, 200)
        c = self.srv.conn()
        try:
            d = {"Mcp-Session-Id": sid}
            d.update(self.bearer(self.TOKEN_B))
            self.assertEqual(c.request("DELETE", "/mcp", None, d).status, 404)
        finally:
            c.close()


class Stop(unittest.TestCase):
    """SIGTERM with calls that never end on their own, in both eras: after
    the grace period (test_tenancy.py; the shortest here) they are stopped
    and still answer; the server exits 0."""

    def test_sigterm_answers_calls_in_both_eras(self):
        srv = Server(BIN, "--shutdown-grace", str(FLAG_MIN_S))
        held = []
        try:
            sid = start_session(srv)
            c = srv.conn()
            held.append(c)
            c.send_raw(Legacy._call_bytes(None, c.port, sid, 51))
            self.assertTrue(c.f.readline().startswith(b"HTTP/1.1 200"))
            while b"notifications/progress" not in c.f.readline():
                pass
            body = json.dumps({"jsonrpc": "2.0", "id": 52, "method": "tools/call",
                               "params": {"name": "test_wait_cancel",
                                          "_meta": modern_meta(progressToken=2)}}
                              ).encode()
            h = modern_headers("tools/call", "test_wait_cancel")
            d = srv.conn()
            held.append(d)
            d.send_raw(raw_post(srv.port, body, h))
            self.assertTrue(d.f.readline().startswith(b"HTTP/1.1 200"))
            while b"notifications/progress" not in d.f.readline():
                pass
            srv.proc.send_signal(signal.SIGTERM)
            for x, rid in ((c, 51), (d, 52)):
                rest = b""
                while True:
                    line = x.f.readline()
                    if not line:
                        break
                    rest += line
                self.assertIn(b'"id":%d,"result"' % rid, rest)
                self.assertIn(b'cancelled', rest)
            self.assertEqual(srv.proc.wait(STOP_DEADLINE_S), 0)
            log = srv.stderr()
            self.assertIn("requests in flight have %d s to finish" %
                          FLAG_MIN_S, log)
            self.assertIn("requests still running after %d s; killing "
                          "their sandboxes" % FLAG_MIN_S, log)
        finally:
            rc = srv.stop()
            for x in held:
                x.close()
        self.assertEqual(rc, 0)


class Cli(unittest.TestCase):
    """The HTTP flags: one-line errors and exit 2; refusals at start."""

    def run_bin(self, *args):
        return subprocess.run([BIN, *args], stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=30, check=False)

    def assert_usage_error(self, args, text):
        r = self.run_bin(*args)
        self.assertEqual(r.returncode, 2, r.stderr)
        err = r.stderr.decode()
        self.assertEqual(err.count("\n"), 1, err)
        self.assertIn(text, err)

    def test_bad_listen_addresses(self):
        for v in ("8080x", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536",
                  "127.0.0.1:-1", "[::1]8080", "example.com:80", ":80"):
            self.assert_usage_error(["--http", v], "bad --http")

    def test_bare_port_binds_loopback(self):
        p = subprocess.Popen([BIN, "--http", "0"], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            for line in p.stderr:
                if b" serving " in line:
                    break
            self.assertIn(b"on http://127.0.0.1:0/mcp", line)
        finally:
            p.terminate()
            rc = p.wait(timeout=10)
            p.stderr.close()
        self.assertEqual(rc, 0)

    def test_non_loopback_without_token_is_refused(self):
        self.assert_usage_error(["--http", "0.0.0.0:0"], "without --token-file")

    def test_http_flags_need_http(self):
        self.assert_usage_error(["--token-file", "/dev/null"], "need --http")
        self.assert_usage_error(["--allow-origin", "http://a.example"],
                                "need --http")
        for flag, _ in SECONDS_FLAGS:
            self.assert_usage_error([flag, "5"], flag + " needs --http")

    def test_bad_seconds(self):
        for flag, most in SECONDS_FLAGS:
            for v in ("0", "%d" % (most + 1), "-1", "+5", "5s", "", " 5",
                      "99999999999999999999"):
                self.assert_usage_error(
                    ["--http", "127.0.0.1:0", flag, v],
                    'bad %s "%s": use whole seconds from %d to %d' %
                    (flag, v, FLAG_MIN_S, most))

    def test_seconds_at_their_bounds_are_taken(self):
        for flag, most in SECONDS_FLAGS:
            for v in (FLAG_MIN_S, most):
                srv = Server(BIN, flag, str(v))
                self.assertEqual(srv.stop(), 0, (flag, v))

    def test_bad_origin(self):
        for v in ("a.example", "ftp://a.example", "http://a.example/path",
                  "http://"):
            self.assert_usage_error(["--http", "127.0.0.1:0",
                                     "--allow-origin", v],
                                    "bad --allow-origin")

    def test_missing_value(self):
        self.assert_usage_error(["--http"], "needs a value")

    def test_bad_token_files_stop_the_start(self):
        with tempfile.TemporaryDirectory() as d:
            short = os.path.join(d, "short")
            with open(short, "w") as f:
                f.write("tooshort\n")
            empty = os.path.join(d, "empty")
            with open(empty, "w") as f:
                f.write("# nothing\n\n")
            for path, text in ((short, "shorter than"), (empty, "no token"),
                               (os.path.join(d, "none"), "No such file")):
                r = self.run_bin("--http", "127.0.0.1:0", "--token-file", path)
                self.assertEqual(r.returncode, 1, path)
                self.assertIn(text, r.stderr.decode())

    def test_help_lists_http_flags_but_not_fixtures(self):
        r = self.run_bin("--help")
        out = r.stdout.decode()
        self.assertEqual(r.returncode, 0)
        for flag in ("--http [ADDR:]PORT", "--token-file FILE",
                     "--allow-origin ORIGIN"):
            self.assertIn(flag, out)
        self.assertNotIn("conformance", out)
        ours = [l for l in out.splitlines()
                if re.match(r"\s+--(http|token-file|allow-origin) ", l)]
        self.assertEqual(len(ours), 3)
        self.assertTrue(all(len(l) <= 80 for l in ours), ours)
        for flag, most in SECONDS_FLAGS:
            line = [l for l in out.splitlines()
                    if re.match(r"\s+%s SECONDS " % flag, l)]
            self.assertEqual(len(line), 1, out)
            self.assertIn("(%d-%d, the default)" % (FLAG_MIN_S, most),
                          line[0])
            self.assertLessEqual(len(line[0]), 80)

    def test_fixtures_are_absent_without_the_flag(self):
        srv = Server(BIN, fixtures=False)
        try:
            r = srv.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                          "params": {"_meta": modern_meta()}},
                         modern_headers("tools/list"))
            names = [t["name"] for t in r.json()["result"]["tools"]]
            self.assertIn("calculate", names)
            self.assertEqual([n for n in names if n.startswith("test_") or
                              n == "json_schema_2020_12_tool"], [])
        finally:
            self.assertEqual(srv.stop(), 0)


if __name__ == "__main__":
    BIN = sys.argv.pop(1)
    unittest.main(verbosity=2)
