#!/usr/bin/env python3
"""docker/Dockerfile built and run for real, with podman (no Docker engine
and no image registry here).

  1. A Debian 12 base made locally: mmdebstrap from this machine's apt
     sources, `podman import`ed (kept in podman's storage and reused while
     its tag exists: it is a function of the apt sources, not of our code).
  2. `podman build` of docker/Dockerfile with BASE and RUNTIME_BASE set to
     it (its build stage runs the unit tests that need no sandbox).
  3. `podman run` without --privileged, as docker/README.md says: seccomp
     profile, unmasked /proc, every capability dropped, read-only root, a
     tmpfs /tmp, no-new-privileges, uid 10001. `--check` in it must say the
     default policy can run; the server behind the entry point must serve
     a sandboxed run_command and run_code over HTTP on loopback (a token,
     since it listens on 0.0.0.0 inside).
  4. Without the unmask: --check names the cause and the exact flags.

The OCI runtime is runc with lowered nofile/nproc limits: crun fails on this
host's hybrid cgroups (docker/README.md). Exit 77 (skipped) with a message
when podman, runc or mmdebstrap is missing or not root.

usage: container_test.py SOURCE_DIR
"""
import http.client
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time

# the helpers the test scripts share: tests/lib
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from mcptest import Report  # noqa: E402

SKIP = 77
BASE = "localhost/mcp-sandbox-base:bookworm"
IMAGE = "localhost/mcp-sandbox:test"
RUNTIME = ["--runtime", "runc"]
# runc on this host: the default nproc (32768) and nofile limits make the
# container's init fail; these are ample for the server (its own caps are
# far lower: 272 connections, 64 processes a sandbox).
ULIMITS = ["--ulimit", "nofile=4096:4096", "--ulimit", "nproc=4096:4096"]
BUILD_DEADLINE_S = 1500  # first build downloads the toolchain with apt
RUN_DEADLINE_S = 60

REPORT = Report("container")
check = REPORT.check


def run(args, timeout=RUN_DEADLINE_S, **kw):
    return subprocess.run(args, capture_output=True, timeout=timeout, **kw)


def make_base():
    if run(["podman", "image", "exists", BASE]).returncode == 0:
        print(f"base {BASE}: already made (podman rmi it to make it again)")
        return True
    sources = "/etc/apt/sources.list.d/debian.sources"
    if not os.path.exists(sources):
        sources = "/etc/apt/sources.list"
    with tempfile.TemporaryDirectory(dir="/var/tmp") as d:
        tar = os.path.join(d, "base.tar")
        r = run(["mmdebstrap", "--variant=apt", "--include=ca-certificates",
                 "bookworm", tar, sources], timeout=BUILD_DEADLINE_S)
        check("mmdebstrap bookworm", r.returncode == 0, r.stderr[-2000:])
        if r.returncode != 0:
            return False
        r = run(["podman", "import", tar, BASE], timeout=300)
        check("podman import", r.returncode == 0, r.stderr[-1000:])
        return r.returncode == 0


def build(src):
    r = run(["podman", *RUNTIME, "build", "-f", "docker/Dockerfile",
             "--ignorefile", "docker/Dockerfile.dockerignore",
             "--build-arg", f"BASE={BASE}",
             "--build-arg", f"RUNTIME_BASE={BASE}",
             "--label", "mcp-sandbox.test=1",
             *ULIMITS, "-t", IMAGE, "."], cwd=src, timeout=BUILD_DEADLINE_S)
    # the image this build replaced, untagged now: ours only, by label
    run(["podman", "image", "prune", "-f", "--filter",
         "label=mcp-sandbox.test=1"], timeout=120)
    out = r.stdout.decode(errors="replace")
    check("podman build", r.returncode == 0,
          out[-3000:] + r.stderr.decode(errors="replace")[-2000:])
    # the build stage's unit tests ran (and all passed)
    check("build stage ran the unit tests",
          re.search(r"100% tests passed, 0 tests failed out of \d+", out)
          is not None, out[-1500:])
    return r.returncode == 0


def security(src, unmask=True):
    opts = ["--security-opt", "seccomp=" + os.path.join(src,
                                                         "docker/seccomp.json"),
            "--security-opt", "no-new-privileges",
            "--cap-drop", "ALL", "--read-only",
            "--tmpfs", "/tmp:rw,size=512m,mode=1777"]
    if unmask:
        opts += ["--security-opt", "unmask=ALL"]
    return opts


def check_in_container(src):
    r = run(["podman", *RUNTIME, "run", "--rm", *ULIMITS, *security(src),
             "--entrypoint", "mcp-sandbox", IMAGE, "--check"])
    out = r.stdout.decode()
    check("--check in the container: exit 0", r.returncode == 0,
          out + r.stderr.decode())
    check("--check: the default policy can run",
          out.endswith("verdict: the default policy can run here\n"), out)
    check("--check: runs as uid 10001, not root",
          "user namespace" in out and "server is root" not in out, out)


def check_masked(src):
    r = run(["podman", *RUNTIME, "run", "--rm", *ULIMITS,
             *security(src, unmask=False), "--entrypoint", "mcp-sandbox",
             IMAGE, "--check"])
    out = r.stdout.decode()
    check("masked /proc: --check exit 1", r.returncode == 1, out)
    check("masked /proc: the cause is named",
          "read-only /proc/sys" in out or "masks /proc" in out, out)
    check("masked /proc: the exact flags",
          "--security-opt systempaths=unconfined" in out and
          "--security-opt unmask=ALL" in out and "procMount: Unmasked" in out,
          out)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def post(port, token, body, session=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    h = {"Content-Type": "application/json",
         "Accept": "application/json, text/event-stream",
         "Authorization": f"Bearer {token}"}
    if session:
        h["Mcp-Session-Id"] = session
        h["MCP-Protocol-Version"] = "2025-11-25"
    c.request("POST", "/mcp", json.dumps(body), h)
    r = c.getresponse()
    data = r.read().decode()
    sid = r.getheader("Mcp-Session-Id")
    c.close()
    if r.getheader("Content-Type", "").startswith("text/event-stream"):
        msgs = [json.loads(ln[5:]) for ln in data.splitlines()
                if ln.startswith("data:")]
        data = json.dumps(msgs[-1]) if msgs else ""
    return r.status, (json.loads(data) if data else None), sid


def wait_healthy(port, name):
    """Polls /healthz until it answers, the container exits, or 30 s."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("GET", "/healthz")
            if c.getresponse().status == 200:
                return True
        except OSError:
            pass
        st = run(["podman", "inspect", "-f", "{{.State.Running}}", name])
        if st.stdout.strip() != b"true":
            return False
        time.sleep(0.2)  # a poll interval, not a timing assumption
    return False


def serve_over_http(src):
    port = free_port()
    token = secrets.token_hex(32)
    name = f"mcp-sandbox-test-{os.getpid()}"
    with tempfile.TemporaryDirectory() as d:
        tok = os.path.join(d, "token")
        with open(tok, "w") as f:
            f.write(token + "\n")
        os.chmod(tok, 0o644)  # read by uid 10001 in the container
        os.chmod(d, 0o755)
        r = run(["podman", *RUNTIME, "run", "-d", "--name", name, *ULIMITS,
                 *security(src), "-p", f"127.0.0.1:{port}:8080",
                 "-v", f"{tok}:/run/secrets/mcp-token:ro", IMAGE])
        check("podman run -d", r.returncode == 0, r.stderr)
        try:
            up = wait_healthy(port, name)
            logs = run(["podman", "logs", name])
            log = (logs.stdout + logs.stderr).decode()
            check("the server is up (/healthz)", up, log[-2000:])
            check("entry point logged --check first",
                  log.startswith("entrypoint: mcp-sandbox --check"), log[:300])
            if not up:
                return
            st, _, _ = post(port, "wrong" * 8, {"jsonrpc": "2.0", "id": 1,
                                                "method": "tools/list"})
            check("a wrong token gets 401", st == 401, st)
            st, res, sid = post(port, token, {
                "jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25",
                           "capabilities": {},
                           "clientInfo": {"name": "container-test",
                                          "version": "1"}}})
            check("initialize over HTTP", st == 200 and sid and
                  res["result"]["protocolVersion"] == "2025-11-25", (st, res))
            post(port, token, {"jsonrpc": "2.0",
                               "method": "notifications/initialized"}, sid)
            st, res, _ = post(port, token, {
                "jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "run_command",
                           "arguments": {"command": "ls",
                                         "args": ["-d", "/workspace"]}}}, sid)
            sc = (res or {}).get("result", {}).get("structuredContent", {})
            check("sandboxed run_command in the container",
                  st == 200 and sc.get("exit_code") == 0 and
                  sc.get("stdout") == "/workspace\n", res)
            st, res, _ = post(port, token, {
                "jsonrpc": "2.0", "id": 3, "method": "tools/call",
                "params": {"name": "run_code", "arguments": {
                    "language": "python3",
                    "code": "import os; print(os.getuid(), os.getpid())"}}},
                sid)
            sc = (res or {}).get("result", {}).get("structuredContent", {})
            # inside: nobody's uid of the sandbox's user namespace, and pid 2
            # of its own pid namespace (its init is 1)
            check("sandboxed run_code: own user and pid namespaces",
                  st == 200 and sc.get("exit_code") == 0 and
                  re.fullmatch(r"\d+ [23]\n", sc.get("stdout", "")), res)
        finally:
            run(["podman", "rm", "-f", "-t", "5", name], timeout=60)


def main():
    src = os.path.abspath(sys.argv[1])
    if os.geteuid() != 0:
        print("skip: the container test runs rootful podman (needs root)")
        return SKIP
    for tool in ("podman", "runc", "mmdebstrap"):
        if not shutil.which(tool):
            print(f"skip: {tool} is not installed (tests/setup.sh --test "
                  "installs podman, runc and mmdebstrap)")
            return SKIP
    with REPORT.step("base image (mmdebstrap, podman import)"):
        ok = make_base()
    if not ok:
        return 1
    with REPORT.step("podman build docker/Dockerfile"):
        ok = build(src)
    if not ok:
        return 1
    with REPORT.step("--check in the container"):
        check_in_container(src)
    with REPORT.step("--check with /proc masked"):
        check_masked(src)
    with REPORT.step("serve over HTTP, sandboxed calls"):
        serve_over_http(src)
    return REPORT.end()


if __name__ == "__main__":
    sys.exit(main())
