"""mcp-sandbox inside a client's own sandbox (issue 26): srt
(@anthropic-ai/sandbox-runtime, pinned in package.json here), as VS Code
("sandboxEnabled") and Claude Code wrap an MCP server.

- srt's defaults leave no user namespace: --check and every sandboxed call
  say so, naming srt and the two fixes; nothing runs unsandboxed.
- "allowNestedUserNamespaces": true, srt run by a normal user (uid
  65534): the server's namespace maps its own uid alone, so it acts as an
  unprivileged server, and sandboxed calls work.
- the same run by root: its uid 0 is the host's root and no sandbox uid
  is mapped, so its sandboxes would run as root: refused, saying why.

usage: test_nested_srt.py MCP_SANDBOX_BIN NODE"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRT = os.path.join(HERE, "node_modules", ".bin", "srt")
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
NOBODY = 65534
SETTINGS = {"network": {"allowedDomains": [], "deniedDomains": []},
            "filesystem": {"denyRead": [], "allowWrite": ["/tmp"],
                           "denyWrite": []}}

failed = []


def check(what, ok, detail=""):
    print("%s %s" % ("ok  " if ok else "FAIL", what))
    if not ok:
        print("     %s" % str(detail)[:900])
        failed.append(what)


def srt(tmp, node, nested, as_nobody, command, stdin=None):
    cfg = dict(SETTINGS)
    if nested:
        cfg["allowNestedUserNamespaces"] = True
    path = os.path.join(tmp, "srt-%d-%d.json" % (nested, as_nobody))
    with open(path, "w") as f:
        json.dump(cfg, f)
    os.chmod(path, 0o644)
    pre = ["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY,
           "--clear-groups"] if as_nobody else []
    home = os.path.join(tmp, "home-nobody" if as_nobody else "home-root")
    env = {"PATH": os.path.dirname(node) + ":" + PATH, "HOME": home,
           "LANG": "C.UTF-8"}
    return subprocess.run(pre + [SRT, "--settings", path, "-c", command],
                          input=stdin, capture_output=True, text=True,
                          env=env, timeout=120, cwd=tmp)


def calls(binary, ws):
    """A stdio session's lines: initialize, then one run_command."""
    msgs = [{"jsonrpc": "2.0", "id": 0, "method": "initialize",
             "params": {"protocolVersion": "2025-11-25",
                        "capabilities": {}}},
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
             "params": {"name": "run_command", "arguments": {
                 "command": "echo", "args": ["nested ok"]}}}]
    return "".join(json.dumps(m) + "\n" for m in msgs)


def answer(stdout, rid):
    for line in stdout.splitlines():
        try:
            m = json.loads(line)
        except ValueError:
            continue
        if m.get("id") == rid:
            return m.get("result", {})
    return {}


def main():
    binary, node = os.path.abspath(sys.argv[1]), sys.argv[2]
    for tool in ("bwrap", "socat", "rg", "setpriv"):
        if shutil.which(tool, path=PATH) is None:
            print("skip: srt needs %s (tests/setup.sh --test installs it)"
                  % tool)
            return 77
    if not os.path.exists(SRT) or not os.path.exists(node):
        print("skip: srt is not installed here (tests/setup.sh --test)")
        return 77
    if os.geteuid() != 0:
        print("skip: runs srt as root and as uid 65534: needs root")
        return 77
    tmp = tempfile.mkdtemp(prefix="mcp-nested-")
    os.chmod(tmp, 0o755)
    for h, owner in (("home-nobody", NOBODY), ("home-root", 0)):
        os.mkdir(os.path.join(tmp, h))
        os.chown(os.path.join(tmp, h), owner, owner)
    ws = os.path.join(tmp, "ws")
    os.mkdir(ws)
    os.chown(ws, NOBODY, NOBODY)
    try:
        for who, as_nobody in (("a normal user", True), ("root", False)):
            r = srt(tmp, node, False, as_nobody, binary + " --check")
            check("srt's defaults, %s: --check names srt" % who,
                  "this server runs inside srt" in r.stdout and
                  "allowNestedUserNamespaces" in r.stdout and
                  "sandboxEnabled" in r.stdout and
                  "CANNOT run here" in r.stdout, r.stdout + r.stderr)
            r = srt(tmp, node, False, as_nobody, binary + " --workspace " +
                    ws, stdin=calls(binary, ws))
            res = answer(r.stdout, 1)
            text = res.get("content", [{}])[0].get("text", "")
            check("srt's defaults, %s: a call is refused, naming srt" % who,
                  res.get("isError") and "inside srt" in text, r.stdout +
                  r.stderr)
        r = srt(tmp, node, True, True, binary + " --check")
        check("nesting allowed, a normal user: --check can run",
              "the default policy can run here" in r.stdout and
              "sandboxes run as the server's own uid" in r.stdout,
              r.stdout + r.stderr)
        r = srt(tmp, node, True, True, binary + " --workspace " + ws,
                stdin=calls(binary, ws))
        res = answer(r.stdout, 1)
        check("nesting allowed, a normal user: the call runs sandboxed",
              not res.get("isError") and res.get("structuredContent", {})
              .get("stdout") == "nested ok\n", r.stdout + r.stderr)
        r = srt(tmp, node, True, False, binary + " --check")
        check("nesting allowed, root: refused, its sandboxes would be root",
              "maps uid 0 to its parent's root" in r.stdout and
              "CANNOT run here" in r.stdout, r.stdout + r.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d failed" % len(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
