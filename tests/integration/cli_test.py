#!/usr/bin/env python3
"""The command line as a user meets it (issue 14): every message exact.

  - `exec --help` explains every flag its usage line names; an exec that
    hits its deadline says so on stderr (exit 124).
  - Config errors name the file and the line, also for a workspace or a
    command that cannot be used; what RFC 8259 refuses is refused.
  - --deny-command of a name not on the list, --allow-command of a program
    under /tmp: errors that say why.
  - A busy port is named.
  - A root server refuses a --workspace the sandbox uid (65534) could not
    write, with the fix; with the fix applied both write_file and a
    sandboxed `touch` work. An unprivileged server (uid 65534, setpriv)
    with its own directory: both work too.
  - One log line per call at info level: tool, outcome, duration; never
    the arguments or the output.

Usage: cli_test.py MCP_SANDBOX_BINARY
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile

# the helpers the test scripts share: tests/lib
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from mcptest import AS_NOBODY, NOBODY, Report  # noqa: E402

PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
ENV = {"PATH": PATH, "LANG": "C.UTF-8"}
DEADLINE = 20  # seconds for any one run of the binary

BIN = None
REPORT = Report("cli")
check = REPORT.check


def run(args, stdin=b"", prefix=(), env=None):
    return subprocess.run(list(prefix) + [BIN] + args, input=stdin,
                          capture_output=True, timeout=DEADLINE,
                          env=env or ENV)


def last_err_line(r):
    lines = r.stderr.decode(errors="replace").strip().splitlines()
    return lines[-1] if lines else ""


def strip_stamp(line):
    """'mcp-sandbox: 2026-...Z error: X' -> 'error: X'."""
    return re.sub(r"^mcp-sandbox: \S+Z ", "", line)


def test_exec_help():
    r = run(["exec", "--help"])
    out = r.stdout.decode()
    usage = out.splitlines()[0]
    flags = re.findall(r"\[(--[a-z-]+)", usage)
    check("exec --help exits 0", r.returncode == 0, r.returncode)
    # the option table's flags, read from the source: the usage line must
    # name them all, and the text explain each
    src = open(os.path.join(os.path.dirname(__file__), "..", "..", "cli",
                            "cmd_exec.c")).read()
    table = set(re.findall(r'\{ "([a-z-]+)", (?:required|no)_argument', src))
    table.discard("help")
    check("exec usage names every flag of its table",
          sorted(f[2:] for f in flags) == sorted(table), (flags, table))
    missing = [f for f in flags + ["--help"]
               if not re.search(r"^  " + re.escape(f) + r"\b", out, re.M)]
    check("exec --help explains every flag", not missing, missing)
    check("exec --help states the exit codes",
          "124 when the\ndeadline killed it" in out and "125 when nothing ran"
          in out, out[-400:])


def test_exec_deadline():
    r = run(["exec", "--timeout", "300", "--", "/bin/sleep", "5"])
    check("exec deadline: exit 124", r.returncode == 124, r.returncode)
    check("exec deadline: said on stderr", r.stderr.decode() ==
          "mcp-sandbox exec: the deadline of 300 ms was reached: the "
          "sandbox was killed with everything in it (exit 124)\n",
          r.stderr)


def test_config(tmp):
    cases = [
        ('{\n"network": false,\n}\n', 2,
         "{f}:3: invalid JSON: a comma before '}}' is not JSON "
         "(trailing comma)"),
        ('{\n  // no\n  "network": false\n}\n', 2,
         "{f}:2: invalid JSON: comments are not JSON"),
        ('{\n"limits": {"timeout_ms": NaN}}\n', 2,
         "{f}:2: invalid JSON: only true, false and null are bare words "
         "in JSON (NaN and Infinity are not numbers there)"),
        ('{\n\n"commands": {"foo": "/nonexistent/foo"}}\n', 2,
         "{f}:3: command 'foo': /nonexistent/foo: not an executable file"),
        ('{"commands": ["cat",\n  "no-such-program-xyz"]}\n', 2,
         "{f}:2: command 'no-such-program-xyz': not found on PATH"),
    ]
    for i, (text, code, want) in enumerate(cases):
        f = os.path.join(tmp, f"c{i}.json")
        with open(f, "w") as fh:
            fh.write(text)
        r = run(["--config", f, "--print-config"])
        want = "mcp-sandbox: " + want.format(f=f)
        check(f"config error {i}: exit {code}", r.returncode == code,
              r.returncode)
        check(f"config error {i}: message", r.stderr.decode() == want + "\n",
              r.stderr)
    # the workspace is checked when serving starts, and names the line
    f = os.path.join(tmp, "ws.json")
    with open(f, "w") as fh:
        fh.write('{\n"commands": ["cat"],\n"workspace": "/nonexistent/ws"\n}')
    r = run(["--config", f])
    check("config workspace: exit 1", r.returncode == 1, r.returncode)
    check("config workspace: file and line",
          strip_stamp(last_err_line(r)) == f"error: {f}:3: workspace "
          "/nonexistent/ws: cannot use it: No such file or directory",
          r.stderr)
    r = run(["--workspace", "/nonexistent/ws", "--http", "127.0.0.1:0"])
    check("flag workspace over HTTP: named too",
          strip_stamp(last_err_line(r)) == "error: --workspace: workspace "
          "/nonexistent/ws: cannot use it: No such file or directory",
          r.stderr)


def test_command_flags(tmp):
    r = run(["--deny-command", "no-such", "--print-config"])
    check("deny unknown: exit 2", r.returncode == 2, r.returncode)
    check("deny unknown: message", r.stderr.decode() ==
          "mcp-sandbox: --deny-command: 'no-such' is not on run_command's "
          "list, so there is nothing to remove (--print-config shows the "
          "list) (try --help)\n", r.stderr)
    prog = os.path.join(tmp, "mytool")
    shutil.copy("/bin/true", prog)
    r = run(["--allow-command", prog, "--print-config"])
    check("allow under /tmp: exit 2", r.returncode == 2, r.returncode)
    check("allow under /tmp: says why", r.stderr.decode() ==
          f"mcp-sandbox: --allow-command: command 'mytool': cannot run in a "
          f"sandbox: {prog} lies in /tmp, /dev, /proc or /sys, which every "
          "sandbox makes afresh, so it cannot be bound at its own path; "
          "install it elsewhere\n", r.stderr)


def test_busy_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    port = s.getsockname()[1]
    try:
        r = run(["--http", f"127.0.0.1:{port}"])
    finally:
        s.close()
    check("busy port: exit 1", r.returncode == 1, r.returncode)
    err = r.stderr.decode()
    check("busy port: named", strip_stamp(last_err_line(r)) ==
          f"error: cannot listen on 127.0.0.1:{port}: port {port} is in use "
          "(another server holds it; choose another with --http ADDR:PORT)",
          err)
    check("busy port: no 'port 0'", "port 0" not in err, err)


INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}}}


def calls(*specs):
    lines = [INIT, {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    for i, (name, args) in enumerate(specs, 1):
        lines.append({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                      "params": {"name": name, "arguments": args}})
    return ("\n".join(json.dumps(x) for x in lines) + "\n").encode()


def results(r):
    out = {}
    for ln in r.stdout.decode().splitlines():
        m = json.loads(ln)
        if "id" in m and m["id"]:
            out[m["id"]] = m.get("result", m.get("error"))
    return out


def write_then_touch(ws, prefix=()):
    r = run(["--workspace", ws], prefix=prefix, stdin=calls(
        ("write_file", {"path": "a.txt", "content": "x"}),
        # calls of a stdio server may run at once: distinct files
        ("run_command", {"command": "touch", "args": ["b.txt"]})))
    return r, results(r)


def test_root_workspace(tmp):
    if os.geteuid() != 0:
        print("skip root workspace: not root")
        return
    ws = tempfile.mkdtemp(prefix="rootws-", dir=tmp)
    r, _ = write_then_touch(ws)
    check("root-owned workspace: refused at start", r.returncode == 1,
          r.returncode)
    check("root-owned workspace: the fix", strip_stamp(last_err_line(r)) ==
          f"error: --workspace: workspace {ws}: owned by uid 0, but a root "
          "server runs its sandboxed tools as uid 65534, which could not "
          "write there while write_file could; give the directory to that "
          f"uid (chown -R 65534:65534 {ws}) or run the server as the "
          "non-root user who owns it", r.stderr)
    check("root-owned workspace: nothing answered", r.stdout == b"",
          r.stdout)
    os.chown(ws, NOBODY, NOBODY)
    r, res = write_then_touch(ws)
    check("workspace given to 65534: write_file works",
          res.get(1, {}).get("isError") is not True, res.get(1))
    check("workspace given to 65534: touch works",
          res.get(2, {}).get("structuredContent", {}).get("exit_code") == 0,
          res.get(2))
    check("workspace given to 65534: files there",
          os.path.exists(os.path.join(ws, "b.txt")) and
          os.stat(os.path.join(ws, "a.txt")).st_uid == NOBODY, os.listdir(ws))


def test_unpriv_workspace(tmp):
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        print("skip unprivileged workspace: needs root and setpriv")
        return
    prefix = AS_NOBODY
    if subprocess.run(prefix + ["unshare", "-U", "true"],
                      capture_output=True).returncode != 0:
        print("skip unprivileged workspace: no unprivileged user namespaces")
        return
    ws = tempfile.mkdtemp(prefix="userws-", dir=tmp)
    os.chown(ws, NOBODY, NOBODY)
    r, res = write_then_touch(ws, prefix)
    check("unprivileged server: write_file works",
          res.get(1, {}).get("isError") is not True, (res, r.stderr))
    check("unprivileged server: touch works",
          res.get(2, {}).get("structuredContent", {}).get("exit_code") == 0,
          res.get(2))


def test_call_log():
    secret = "s3cr3t-argument-value"
    r = run([], stdin=calls(
        ("calculate", {"expression": "2^89"}),
        ("run_command", {"command": "echo", "args": [secret]}),
        ("run_command", {"command": secret}),
        ("run_code", {"language": "sh", "code": "sleep 5",
                      "timeout_ms": 200})))
    lines = [strip_stamp(ln) for ln in r.stderr.decode().splitlines()
             if " call " in ln]
    want = [r"info: call calculate: ok, \d+\.\d{3} ms",
            r"info: call run_command: ok, exit 0, \d+\.\d{3} ms",
            r"info: call run_command: refused \(invalid arguments: enum\), "
            r"\d+\.\d{3} ms",
            r"info: call run_code: tool_error, signal 9, timed out, "
            r"\d+\.\d{3} ms"]
    # calls of a stdio server may finish in any order: match as a set
    unmatched = [w for w in want if not any(re.fullmatch(w, ln)
                                            for ln in lines)]
    check("call log: one line per call", len(lines) == 4, lines)
    check("call log: tool, outcome, duration", not unmatched,
          (unmatched, lines))
    check("call log: never arguments or output",
          secret.encode() not in r.stderr and
          b"618970019642690137449562112" not in r.stderr,
          r.stderr)
    r = run(["--log-level", "warn"], stdin=calls(
        ("calculate", {"expression": "1"})))
    check("call log: off above info", b" call " not in r.stderr, r.stderr)


def check_layers(who, out, root):
    """--check's lines of issue 10's perimeter: ipc, memory, kernel uid."""
    lines = out.splitlines()

    def layer(name):
        got = [(k, ln) for k, ln in enumerate(lines)
               if ln[9:].startswith(name + ": ")]
        check(f"--check {who}: one '{name}' line", len(got) == 1, out)
        return got[0] if got else (0, "")
    _, ipc = layer("ipc limits")
    check(f"--check {who}: ipc limits ok iff root, the figures or why",
          ipc.startswith("ok " if root else "absent ") and
          ("shmall" if root else "refused inside (ENOSYS)") in ipc, ipc)
    _, mem = layer("memory bounds")
    check(f"--check {who}: memfd counted by a cgroup, else refused",
          mem.startswith("ok ") and ("memfd_create is allowed" in mem or
                                     "memfd_create refused" in mem), mem)
    k, uid = layer("kernel uid")
    check(f"--check {who}: a kernel uid per run iff root, inotify share",
          uid.startswith("ok " if root else "absent ") and
          "16 instances" in uid, uid)
    fix = lines[k + 1] if k + 1 < len(lines) else ""
    check(f"--check {who}: kernel uid fix named",
          uid.startswith("ok ") or fix.startswith("         fix: "), fix)


def test_check():
    # a uid range of this test's own, outside the default blocks that
    # servers running meanwhile hold (as test_sandbox_lib.c does)
    base = ["--check", "--uid-base",
            str(0x40000000 + (os.getpid() & 0x3fffff) * 128)]
    r = run(base)
    check("--check: exit 0", r.returncode == 0, r.stdout + r.stderr)
    check_layers("as " + ("root" if os.geteuid() == 0 else "a user"),
                 r.stdout.decode(), os.geteuid() == 0)
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        return
    r = run(base, prefix=["setpriv", f"--reuid={NOBODY}",
                          f"--regid={NOBODY}", "--clear-groups",
                          "--inh-caps=-all"])
    if r.returncode == 0:
        check_layers("unprivileged", r.stdout.decode(), False)


def main():
    global BIN
    BIN = os.path.abspath(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix="mcp-cli-")
    os.chmod(tmp, 0o755)
    try:
        test_exec_help()
        test_exec_deadline()
        test_config(tmp)
        test_command_flags(tmp)
        test_busy_port()
        test_root_workspace(tmp)
        test_unpriv_workspace(tmp)
        test_call_log()
        test_check()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return REPORT.end()


if __name__ == "__main__":
    sys.exit(main())
