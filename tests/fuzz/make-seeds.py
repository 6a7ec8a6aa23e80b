#!/usr/bin/env python3
"""Writes the seed corpora of tests/fuzz/corpus/ from the test cases:
  jsonrpc    every integration case's client lines, one seed per case file
             and one per line
  validator  the JSON-Schema-Test-Suite groups of tests/jsonschema as
             "schema NUL instance", and every tool's arguments in the cases
  calculate  the expressions of the unit tests and the cases
  http       each case line as a raw HTTP request in both eras
Seeds are named by the SHA-1 of their bytes, as libFuzzer names inputs.
ctest's unit.generated (tests/check_generated.py) fails when the committed
corpora are not what this writes.
usage: make-seeds.py [--out DIR]   (run from anywhere; rewrites corpus/,
                                    or DIR/TARGET instead)"""
import glob
import hashlib
import json
import os
import re
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
OUT = os.path.join(HERE, "corpus")     # --out
TARGETS = ("jsonrpc", "validator", "calculate", "http")   # not proxy, state
TOKEN = "0123456789abcdef0123456789abcdef"   # fuzz_http.c's FUZZ_TOKEN
MODERN = "2026-07-28"
MAX_SEED = 65536


def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    if len(data) > MAX_SEED:
        return
    d = os.path.join(OUT, target)
    with open(os.path.join(d, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)


def case_lines():
    for path in sorted(glob.glob(os.path.join(TESTS, "integration", "cases",
                                              "*.case")) +
                       glob.glob(os.path.join(TESTS, "integration", "tools",
                                              "*.case"))):
        lines = []
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.startswith("> "):
                    lines.append(line[2:].rstrip("\n"))
        yield lines


def http_request(body, modern, msg):
    h = ["POST /mcp HTTP/1.1", "Host: 127.0.0.1:8080",
         "Authorization: Bearer " + TOKEN,
         "Content-Type: application/json",
         "Accept: application/json, text/event-stream"]
    if modern and isinstance(msg, dict) and "method" in msg:
        h.append("MCP-Protocol-Version: " + MODERN)
        h.append("Mcp-Method: " + str(msg["method"]))
        p = msg.get("params")
        if isinstance(p, dict) and isinstance(p.get("name"), str):
            h.append("Mcp-Name: " + p["name"])
    h.append("Content-Length: %d" % len(body.encode()))
    return "\r\n".join(h) + "\r\n\r\n" + body


def modernise(msg):
    if not isinstance(msg, dict) or "method" not in msg:
        return msg
    m = json.loads(json.dumps(msg))
    p = m.setdefault("params", {})
    if isinstance(p, dict):
        p.setdefault("_meta", {})["io.modelcontextprotocol/protocolVersion"] = MODERN
        p["_meta"]["io.modelcontextprotocol/clientCapabilities"] = {}
    return m


def main():
    for t in TARGETS:
        d = os.path.join(OUT, t)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    exprs = set()
    for lines in case_lines():
        if not lines:
            continue
        put("jsonrpc", "\n".join(lines) + "\n")
        for line in lines:
            put("jsonrpc", line + "\n")
            try:
                msg = json.loads(line)
            except ValueError:
                put("http", http_request(line, False, None))
                continue
            put("http", http_request(line, False, msg))
            put("http", http_request(json.dumps(modernise(msg)), True,
                                     modernise(msg)))
            p = msg.get("params") if isinstance(msg, dict) else None
            if isinstance(p, dict) and isinstance(p.get("arguments"), dict):
                put("validator", json.dumps(p["arguments"]))
                e = p["arguments"].get("expression")
                if isinstance(e, str):
                    exprs.add(e)
    # a keep-alive connection: initialize, then a call on the session
    put("http", http_request(json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {}}}),
        False, None) + http_request(json.dumps(
        {"jsonrpc": "2.0", "id": 2, "method": "ping"}), False, None))
    for extra in ("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
                  "GET /metrics HTTP/1.1\r\nHost: localhost\r\n"
                  "Authorization: Bearer " + TOKEN + "\r\n\r\n",
                  "OPTIONS /mcp HTTP/1.1\r\nHost: [::1]\r\n"
                  "Origin: http://127.0.0.1:3000\r\n\r\n",
                  "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  "Authorization: Bearer " + TOKEN + "\r\n"
                  "Mcp-Session-Id: 00\r\n\r\n",
                  "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  "Authorization: Bearer " + TOKEN + "\r\n"
                  "Content-Type: application/json\r\n"
                  "Accept: application/json, text/event-stream\r\n"
                  "Transfer-Encoding: chunked\r\n\r\n"
                  "5\r\n{\"jso\r\n0\r\n\r\n"):
        put("http", extra)
    for path in sorted(glob.glob(os.path.join(TESTS, "jsonschema",
                                              "draft2020-12", "*.json"))):
        with open(path, encoding="utf-8") as f:
            groups = json.load(f)
        for g in groups:
            schema = json.dumps(g["schema"])
            for t in g["tests"]:
                put("validator", schema + "\0" + json.dumps(t["data"]))
    with open(os.path.join(TESTS, "unit", "test_calculate.c"),
              encoding="utf-8") as f:
        src = f.read()
    for m in re.finditer(r'check_\w+\(\s*"((?:[^"\\]|\\.)*)"', src):
        exprs.add(bytes(m.group(1), "utf-8").decode("unicode_escape"))
    for e in exprs:
        put("calculate", e)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--out"] and len(sys.argv) == 3:
        OUT = sys.argv[2]
    elif len(sys.argv) > 1:
        sys.exit("usage: make-seeds.py [--out DIR]")
    main()
