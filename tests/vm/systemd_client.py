#!/usr/bin/env python3
"""The unit from outside (tests/vm/systemd.sh, in the VM, as root):
the endpoint answers with the token (and 401 without), a sandboxed call
runs in a cgroup of its own under the unit's delegated subtree with the
policy's memory and pids limits (memory.max, pids.max) in force, and
`systemctl stop` cancels a call in flight and leaves no sandbox cgroup.
usage: systemd_client.py TOKEN"""
import json
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

URL = "http://127.0.0.1:8080/mcp"
TOKEN = sys.argv[1]
UNIT_CG = "/sys/fs/cgroup/system.slice/mcp-sandbox.service"
MEMORY_MB, PROCESSES = 64, 16       # systemd.sh's policy
FAILED = []


def check(name, cond, detail=""):
    print(("ok   " if cond else "FAIL ") + name +
          ("" if cond else ": " + str(detail)[:1500]), flush=True)
    if not cond:
        FAILED.append(name)


def post(body, headers=None):
    h = {"Content-Type": "application/json",
         "Accept": "application/json, text/event-stream"}
    h.update(headers or {})
    req = urllib.request.Request(URL, json.dumps(body).encode(), h)
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def result(raw):
    text = raw.decode()
    if text.startswith("event:") or "\ndata: " in text or \
            text.startswith("data: "):
        msgs = [json.loads(ln[6:]) for ln in text.splitlines()
                if ln.startswith("data: ")]
        return [m for m in msgs if "id" in m][-1]
    return json.loads(text)


def runs():
    """The run.* cgroups under the unit's subtree."""
    out = []
    for d, subs, _ in os.walk(UNIT_CG):
        out += [os.path.join(d, s) for s in subs if s.startswith("run.")]
    return out


def read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def main():
    end = time.monotonic() + 60
    up = False
    while time.monotonic() < end and not up:
        try:
            with urllib.request.urlopen("http://127.0.0.1:8080/healthz",
                                        timeout=5) as r:
                up = r.status == 200
        except (urllib.error.URLError, OSError):
            time.sleep(0.2)
    check("the endpoint is up (/healthz)", up)
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "vm", "version": "1"}}}
    st, _, _ = post(init)
    check("no token: 401", st == 401, st)
    auth = {"Authorization": "Bearer " + TOKEN}
    st, h, body = post(init, auth)
    sid = {k.lower(): v for k, v in h.items()}.get("mcp-session-id")
    check("the token from the credential: 200 and a session", st == 200 and
          sid, (st, body[:300]))
    hs = dict(auth, **{"Mcp-Session-Id": sid,
                       "MCP-Protocol-Version": "2025-11-25"})
    post({"jsonrpc": "2.0", "method": "notifications/initialized"}, hs)

    def call(rid, code, lang="sh"):
        st, _, body = post({"jsonrpc": "2.0", "id": rid, "method":
                            "tools/call", "params": {"name": "run_code",
                            "arguments": {"language": lang, "code": code,
                                          "timeout_ms": 30000}}}, hs)
        return result(body) if st == 200 else {"status": st}

    got = {}
    t = threading.Thread(target=lambda: got.update(r=call(2, "sleep 2; "
                                                          "echo done")))
    t.start()
    seen, limits = [], []
    end = time.monotonic() + 20
    while time.monotonic() < end and t.is_alive() and not seen:
        seen = [d for d in runs() if read(d + "/cgroup.procs")]
        # read while the call runs: its cgroup goes with it
        limits = [(read(d + "/memory.max"), read(d + "/pids.max"))
                  for d in seen]
        time.sleep(0.05)
    t.join()
    check("a call runs in a cgroup of its own under the unit's subtree, "
          "with memory.max and pids.max of the policy",
          seen and all(m == str(MEMORY_MB << 20) and
                       p == str(PROCESSES + 1)   # its init too
                       for m, p in limits), (seen, limits, runs()))
    check("and answers", got.get("r", {}).get("result", {}).get(
        "structuredContent", {}).get("stdout") == "done\n", got)
    # four processes of 30 MiB each: under the per-process RLIMIT_AS,
    # over the cgroup's 64 MiB for the sandbox as a whole
    r = call(3, "for i in 1 2 3 4; do python3 -c 'b = bytearray(30 << 20); "
             "import time; time.sleep(3)' & done; wait; echo survived")
    sc = r.get("result", {}).get("structuredContent", {})
    check("the memory limit holds for the sandbox as a whole: 4 x 30 MiB "
          "in 64 MiB", sc.get("memory_limit_reached") is True, r)
    r = call(4, "for i in $(seq 40); do sleep 1 & done; wait; echo ok")
    sc = r.get("result", {}).get("structuredContent", {})
    check("the pids limit holds: 40 processes in a sandbox of 16",
          sc.get("process_limit_reached") is True, r)

    got.clear()
    t = threading.Thread(target=lambda: got.update(r=call(5, "sleep 25; "
                                                          "echo done")))
    t.start()
    end = time.monotonic() + 20
    while time.monotonic() < end and not any(
            read(d + "/cgroup.procs") for d in runs()):
        time.sleep(0.05)
    t0 = time.monotonic()
    rc = subprocess.run(["systemctl", "stop", "mcp-sandbox.service"]).returncode
    took = time.monotonic() - t0
    t.join(timeout=30)
    state = subprocess.run(["systemctl", "is-active", "mcp-sandbox.service"],
                           capture_output=True, text=True).stdout.strip()
    print("systemctl stop took %.1f s (the shutdown grace is 10 s)" % took)
    res = got.get("r", {}).get("result", {})
    check("systemctl stop drains as documented: the call in flight is "
          "killed after the grace and answers with its tool error, the "
          "service stops", rc == 0 and state == "inactive" and
          res.get("isError") is True and "done" not in json.dumps(got),
          (rc, state, got))
    check("no sandbox cgroup is left", runs() == [], runs())
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
