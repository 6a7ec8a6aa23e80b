"""A sandbox's memory holds nothing of the server's: the bearer tokens
it was started with, another principal's arguments it parsed before.

The server runs over Streamable HTTP with two random bearer tokens (a
--token-file, fresh for each run). Principal B first runs a command whose
argument is a random marker, so the server's heap has held it; then
principal A's call runs `sleep 30` in a sandbox. While that sleeps, this
script (root) reads every readable mapping of every process below the
server (the sandbox's init and its program) through /proc/PID/mem and
looks for both tokens, their SHA-256 digests (what the server keeps of a
token) and the marker. None may be there. The same scan of the server
itself must find A's token (its request is in flight): the scanner sees
what is there, so a clean sandbox is not an empty scan.

Mappings larger than SCAN_MAP_CAP are named and skipped: the only ones
are AddressSanitizer's shadow (14 TiB, one byte per 8 of the program's
memory, saying which bytes are addressable, never the bytes themselves).

usage: test_init_memory.py MCP_SANDBOX_BIN [--unpriv]
  --unpriv: the server runs as uid 65534 (setpriv); the scanner stays root.
Exit 0 pass, 1 fail, 77 skip (not root, no sandbox here, uid 65534 cannot
reach the binary or make a user namespace)."""
import argparse
import hashlib
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

# the helpers the test scripts share: tests/lib
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from http_client import (START_DEADLINE_S, Conn, Server,  # noqa: E402
                         _read_response, modern_headers, modern_meta,
                         raw_post)
from mcptest import (AS_NOBODY, NOBODY, Report, descendants,  # noqa: E402
                     nobody_can, poll_until)

SKIP = 77
# how long the sandbox's processes get to start and settle, and to go
SETTLE_DEADLINE_S = 5
GONE_DEADLINE_S = 5
PAUSE_S = 0.025
# the probed call: long enough to outlive the scan, ended by closing its
# response stream (a deadline of its own in case that fails)
PROBE_ARGV = ["sleep", "30"]
PROBE_TIMEOUT_MS = 20000
# bytes read from /proc/PID/mem at once, and the largest mapping scanned
CHUNK = 4 << 20
SCAN_MAP_CAP = 1 << 30
PAGE = os.sysconf("SC_PAGE_SIZE")


class PrefixedServer(Server):
    """http_client.Server, its command line behind prefix (setpriv)."""

    def __init__(self, prefix, binary, *flags):
        self.log = tempfile.NamedTemporaryFile(prefix="mcp-http-",
                                               suffix=".log", delete=False)
        os.chmod(self.log.name, 0o644)
        self.proc = subprocess.Popen(
            prefix + [binary, "--http", "127.0.0.1:0", "--log-level", "debug",
                      *flags],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=self.log)
        self.port = None
        deadline = time.monotonic() + START_DEADLINE_S
        while time.monotonic() < deadline:
            m = re.search(r"\(port (\d+)\)", self.stderr())
            if m:
                self.port = int(m.group(1))
                return
            if self.proc.poll() is not None:
                raise RuntimeError("server exited: " + self.stderr())
            time.sleep(PAUSE_S)
        self.proc.kill()
        self.proc.wait()
        raise RuntimeError("server did not log its port")


def call_body(rid, name, args):
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                       "params": {"name": name, "arguments": args,
                                  "_meta": modern_meta()}}).encode()


def call_headers(name, token):
    h = modern_headers("tools/call", name)
    h["Authorization"] = "Bearer " + token
    return h


def children(pid):
    """pid's descendants: /proc/PID/task/*/children, recursively, where the
    kernel has them (CONFIG_PROC_CHILDREN); else every process's parent
    from /proc/*/stat (mcptest.descendants)."""
    if not os.path.exists("/proc/self/task/%d/children" % os.getpid()):
        return descendants(pid)
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            tids = os.listdir("/proc/%d/task" % p)
        except OSError:
            continue
        for t in tids:
            try:
                with open("/proc/%d/task/%s/children" % (p, t)) as f:
                    kids = [int(k) for k in f.read().split()]
            except OSError:
                continue
            out += kids
            todo += kids
    return out


def proc_state(pid):
    """(state letter, argv) of pid, or None once it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            st = f.read()
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return None
    return st[st.rindex(")") + 2], argv


def settled(server_pid, prog):
    """The processes below the server once the probed program runs and
    every one of them sleeps (the init waits for its program, the program
    in nanosleep: past the init's own start-up; a sandbox built ahead: its
    init suspended in vfork (D), its program's process waiting on its
    stdin for a call): else None."""
    pids = sorted(children(server_pid))
    states = {p: proc_state(p) for p in pids}
    if len(pids) < 2 or None in states.values():
        return None
    if not any(s[1][:len(prog)] == prog for s in states.values()):
        return None
    if any(s[0] not in "SD" for s in states.values()):
        return None
    return pids


def read_span(fd, start, end):
    """The readable bytes of [start, end) of fd (a /proc/PID/mem), as
    (offset, bytes) pieces; pages that do not read are left out."""
    out, at = [], start
    while at < end:
        try:
            b = os.pread(fd, end - at, at)
        except OSError:
            b = b""
        if b:
            out.append((at, b))
            at += len(b)
            continue
        at += PAGE          # an unreadable page: go on after it
    return out


def scan(pid, needles):
    """Every readable mapping of pid through /proc/PID/mem: a dict of
    bytes scanned, mappings scanned and skipped (with why) and hits
    (needle name, address, the mapping's maps line)."""
    res = {"bytes": 0, "maps": 0, "skipped": [], "hits": []}
    longest = max(len(v) for v in needles.values())
    with open("/proc/%d/maps" % pid) as f:
        maps = f.read().splitlines()
    fd = os.open("/proc/%d/mem" % pid, os.O_RDONLY)
    try:
        for line in maps:
            rng, perm = line.split()[:2]
            if perm[0] != "r":
                continue
            start, end = (int(x, 16) for x in rng.split("-"))
            if end - start > SCAN_MAP_CAP:
                res["skipped"].append((line, "larger than the cap"))
                continue
            got = 0
            # chunks overlap by one needle less a byte: a needle across
            # their border is found once, in the chunk where it starts
            for at in range(start, end, CHUNK):
                stop = min(end, at + CHUNK + longest - 1)
                for off, data in read_span(fd, at, stop):
                    got += min(len(data), max(0, at + CHUNK - off))
                    for name, v in needles.items():
                        i = data.find(v)
                        while i >= 0:
                            if off + i < at + CHUNK:
                                res["hits"].append((name, off + i, line))
                            i = data.find(v, i + 1)
            if got == 0:
                res["skipped"].append((line, "unreadable"))
                continue
            res["maps"] += 1
            res["bytes"] += got
    finally:
        os.close(fd)
    return res


def name_of(pid):
    s = proc_state(pid)
    return s[1][0].decode("utf-8", "replace") if s else "?"


def run(binary, unpriv, rep):
    tmp = tempfile.mkdtemp(prefix="mcp-initmem-")
    token_a = secrets.token_hex(24)     # 48 hex characters, this run's
    token_b = secrets.token_hex(24)
    marker = "mcp-marker-" + secrets.token_hex(16)
    needles = {
        "token A": token_a.encode(),
        "token B": token_b.encode(),
        "digest of A": hashlib.sha256(token_a.encode()).digest(),
        "digest of B": hashlib.sha256(token_b.encode()).digest(),
        "B's marker": marker.encode(),
    }
    tokfile = os.path.join(tmp, "tokens")
    with open(tokfile, "w") as f:
        f.write("%s\n%s\n" % (token_a, token_b))
    os.chmod(tokfile, 0o600)
    if unpriv:
        os.chown(tmp, NOBODY, NOBODY)
        os.chown(tokfile, NOBODY, NOBODY)
    # no pythons started ahead: below the server are A's sandbox and the
    # sandboxes built ahead (pool_size), made after B's call had passed
    # through the server's heap; all of them are scanned
    try:
        srv = PrefixedServer(AS_NOBODY if unpriv else [], binary,
                             "--token-file", tokfile,
                             "--allow-command", "sleep",
                             "--warm-python", "0", "--shutdown-grace", "1")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    conn = None
    thread = None
    answer = {}
    try:
        # B's call: the marker passes through the server's heap (request
        # body, parsed arguments, the argv it built, the output it read)
        r = srv.post(call_body(1, "run_command",
                               {"command": "echo", "args": [marker]}),
                     call_headers("run_command", token_b))
        res = r.json().get("result", {})
        if r.status != 200 or res.get("isError"):
            print("skip: the sandbox cannot run here: %r" % r.body[:300])
            return SKIP
        rep.check("B's run answered with its marker",
                  res["structuredContent"]["stdout"] == marker + "\n",
                  r.body[:300])

        # A's call, left running on a thread of its own
        conn = Conn(srv.port)

        def probe():
            try:
                conn.send_raw(raw_post(srv.port, call_body(
                    2, "run_command", {"command": PROBE_ARGV[0],
                                       "args": PROBE_ARGV[1:],
                                       "timeout_ms": PROBE_TIMEOUT_MS}),
                    call_headers("run_command", token_a)))
                answer["r"] = _read_response(conn.f)
            except (OSError, ValueError) as e:
                answer["error"] = e
        thread = threading.Thread(target=probe, daemon=True)
        thread.start()

        prog = [a.encode() for a in PROBE_ARGV]
        pids, last = None, None
        deadline = time.monotonic() + SETTLE_DEADLINE_S
        while time.monotonic() < deadline and thread.is_alive():
            now = settled(srv.proc.pid, prog)
            # the same processes asleep on two looks in a row
            if now is not None and now == last:
                pids = now
                break
            last = now
            time.sleep(PAUSE_S)
        if not rep.check("the sandbox runs: its init and program, asleep",
                         pids is not None,
                         "within %d s; the call's answer: %r; below the "
                         "server: %r" % (SETTLE_DEADLINE_S, answer,
                                         {p: proc_state(p) for p in
                                          children(srv.proc.pid)})):
            return None

        total, found = 0, []
        for p in pids:
            s = scan(p, needles)
            total += s["bytes"]
            print("scanned pid %d (%s): %d mappings, %d bytes" %
                  (p, name_of(p), s["maps"], s["bytes"]))
            for line, why in s["skipped"]:
                print("  skipped (%s): %s" % (why, line))
            for name, addr, line in s["hits"]:
                found.append("%s in pid %d (%s) at %#x, mapping: %s" %
                             (name, p, name_of(p), addr, line))
        # the scan is not vacuous: both processes, and bytes of them
        rep.check("at least 2 sandbox processes scanned", len(pids) >= 2,
                  pids)
        rep.check("sandbox bytes scanned", total > 0, total)
        rep.check("the call is still running while scanned",
                  thread.is_alive(), answer)
        # the positive control: the scanner finds what is there
        s = scan(srv.proc.pid, needles)
        held = sorted({h[0] for h in s["hits"]})
        print("scanned the server, pid %d: %d mappings, %d bytes; it holds "
              "%s" % (srv.proc.pid, s["maps"], s["bytes"],
                      ", ".join(held) or "none of them"))
        rep.check("the server's own memory holds token A (the scanner "
                  "works)", "token A" in held, held)
        rep.check("no sandbox process holds a token, a digest or the "
                  "marker", not found, "\n  " + "\n  ".join(found))
    finally:
        # end the call: a closed response stream kills its sandbox
        if conn is not None:
            try:
                conn.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if thread is not None:
            thread.join(GONE_DEADLINE_S)
            rep.check("the call ended with its stream", not thread.is_alive())
        if conn is not None:
            conn.close()
        def probe_left():
            return [p for p in children(srv.proc.pid)
                    if (proc_state(p) or (0, []))[1][:len(PROBE_ARGV)] ==
                    [a.encode() for a in PROBE_ARGV]]
        rep.check("the sandbox is gone", poll_until(
            lambda: not probe_left(), int(GONE_DEADLINE_S / PAUSE_S),
            PAUSE_S), {p: proc_state(p) for p in children(srv.proc.pid)})
        left = children(srv.proc.pid)
        rc = srv.stop()
        rep.check("the server stopped with 0", rc == 0, rc)
        rep.check("no sandbox built ahead outlives the server", poll_until(
            lambda: not [p for p in left if proc_state(p) is not None],
            int(GONE_DEADLINE_S / PAUSE_S), PAUSE_S),
            {p: proc_state(p) for p in left})
        shutil.rmtree(tmp, ignore_errors=True)
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--unpriv", action="store_true",
                    help="run the server as uid 65534 (setpriv)")
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("skip: reading a sandbox's memory needs root")
        return SKIP
    if a.unpriv:
        if not shutil.which("setpriv"):
            print("skip: --unpriv needs setpriv to drop to 65534")
            return SKIP
        if not nobody_can("unshare", "-U", "true"):
            print("skip: unprivileged user namespaces are not allowed here")
            return SKIP
        if not nobody_can("test", "-x", a.binary):
            print("skip: %s is not reachable by uid 65534" % a.binary)
            return SKIP
    rep = Report("init_memory" + ("_unpriv" if a.unpriv else ""))
    with rep.step("scan"):
        rc = run(os.path.abspath(a.binary), a.unpriv, rep)
    return rc if rc is not None else rep.end()


if __name__ == "__main__":
    sys.exit(main())
