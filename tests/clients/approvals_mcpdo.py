#!/usr/bin/env python3
"""Approvals (issue 23) seen by a real client: the MCP Inspector's mcpdo CLI
(pinned in package.json here) connected to our server over stdio, in both
protocol eras. A call that asks for a host inside the ceiling makes mcpdo
park the call and print the server's form (elicitationPending: the
question and the once / session / deny choice); answering it with
elicitation/respond gives the call's result (once: it ran, with
structuredContent.approvals; --decline: refused). In 2025-11-25 mcpdo
answers our elicitation/create request; in 2026-07-28 it shows the form of
our input_required result and retries the call with the answer and our
requestState. A private daemon (its own directory and token), HOME of its
own, no network but loopback's unix socket.

usage: approvals_mcpdo.py MCP_SANDBOX NODE"""
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from mcptest import Report  # noqa: E402

SERVER, NODE = sys.argv[1], sys.argv[2]
MCPDO = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                     "node_modules", "@modelcontextprotocol", "inspector",
                     "clients", "mcpdo", "build", "mcp-bin.js")
R = Report("approvals seen by mcpdo")
HOST = "a.approved.test"
CMD_S = 60


def mcpdo(env, *args):
    p = subprocess.run([NODE, MCPDO, "--format", "json", *args], env=env,
                       capture_output=True, text=True, timeout=CMD_S)
    try:
        return json.loads(p.stdout)
    except ValueError:
        return {"unparsed": p.stdout, "stderr": p.stderr[-2000:]}


def era(env, name):
    with R.step(name):
        c = mcpdo(env, "connect", "--era", name, "--", SERVER,
                  "--ask-network", "--ask-domain", "*.approved.test")
        R.check("%s: connected" % name, c.get("protocolEra") == name, c)
        call = ["--connection", SERVER, "tools/call", "--tool-name",
                "run_command", "--tool-args-json", json.dumps({
                    "command": "echo", "args": ["hi"],
                    "allow_domains": [HOST]})]
        p = mcpdo(env, *call).get("elicitationPending", {})
        choices = [o.get("const") for o in p.get("requestedSchema", {}).get(
            "properties", {}).get("decision", {}).get("oneOf", [])]
        R.check("%s: mcpdo shows our form" % name,
                p.get("mode") == "form" and HOST in p.get("message", "") and
                choices == ["once", "session", "deny"], p)
        r = mcpdo(env, "elicitation/respond", p.get("elicitationId", "?"),
                  "decision:=once")
        sc = r.get("structuredContent", {})
        R.check("%s: once: the call ran with the approval" % name,
                sc.get("stdout") == "hi\n" and sc.get("approvals") == [
                    {"kind": "domain", "value": HOST, "granted": "once",
                     "asked": True}], r)
        p = mcpdo(env, *call).get("elicitationPending", {})
        r = mcpdo(env, "elicitation/respond", p.get("elicitationId", "?"),
                  "--decline")
        R.check("%s: declined: refused, saying so" % name,
                r.get("isError") is True and "(decline)" in
                r.get("content", [{}])[0].get("text", ""), r)
        mcpdo(env, "disconnect", SERVER)


def main():
    if not os.path.exists(MCPDO):
        print("skip: mcpdo is not installed (npm ci in tests/clients)")
        return 77
    home = tempfile.mkdtemp(prefix="mcpdo-")
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
           "HOME": home, "MCP_INSPECTOR_SECRET_STORE": "memory",
           "MCP_INSPECTOR_DAEMON_DIR": os.path.join(home, "daemon"),
           "MCP_INSPECTOR_DAEMON_TOKEN": secrets.token_urlsafe(32)}
    try:
        era(env, "legacy")
        era(env, "modern")
    finally:
        mcpdo(env, "daemon", "stop")
        shutil.rmtree(home, ignore_errors=True)
    return R.end()


if __name__ == "__main__":
    sys.exit(main())
