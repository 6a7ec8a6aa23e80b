#!/usr/bin/python3
"""A cgroup per sandbox, tried as an attacker would, through the real server.

Each case starts `mcp-sandbox` on stdio, calls its sandboxed tools with
payloads that hold memory the way rlimits do not count (memfd, SysV shared
memory, tmpfs files) or fork without end, and asserts the exact outcome:
the run's own error ("the run reached its memory limit of N MiB"), the
cgroup's accounting in structuredContent, the server still answering, and
no cgroup of ours left behind (also after SIGKILL of the server, once it
starts again). The other bounds that could stop these payloads first are
set large (/tmp and the file size limit 1 GiB, no warm python), so what
stops them is the cgroup: without one, the SysV payload holds all 256 MiB.

Works on cgroup v1 (memory and pids hierarchies) and v2 (tests/vm boots a
v2 kernel and runs this same file). Usage:
  test_cgroup.py --server BIN [--unpriv] CASE
Exit 0 pass, 1 fail, 77 skipped (no cgroup can be had here).
"""
import argparse
import json
import fcntl
import os
import select
import signal
import subprocess
import sys
import time

# the helpers the test scripts share: tests/lib
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from mcptest import AS_NOBODY, NOBODY, Fail, eq, expect, text  # noqa: E402

SKIP = 77
MNT = "/sys/fs/cgroup"
PREFIX = "mcp-sandbox."
DEADLINE_S = 30          # every read from the server
MEMORY_MB = 64           # the sandbox's limit in these cases
HOLD_MB = 256            # what each payload tries to hold (4x the limit)
PLAIN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def version():
    """2 on a unified hierarchy, 1 on v1 (hybrid or legacy), 0 without."""
    if os.path.exists(f"{MNT}/cgroup.controllers"):
        return 2
    if os.path.isdir(f"{MNT}/memory"):
        return 1
    return 0


def own_dirs(pid):
    """The cgroup dirs a server with this pid would nest its own under."""
    dirs = []
    with open(f"/proc/{pid}/cgroup") as f:
        lines = f.read().splitlines()
    for line in lines:
        _, ctls, path = line.split(":", 2)
        path = "" if path == "/" else path
        if version() == 2 and ctls == "":
            dirs.append(MNT + path)
        elif version() == 1 and set(ctls.split(",")) & {"memory", "pids"}:
            dirs.append(f"{MNT}/{ctls}{path}")
    return dirs


def server_dirs(where, pid):
    """Dirs named for the server pid under any of where (and one level
    down: v2 servers sit in their leaf, their dir is its parent)."""
    found = []
    for d in where:
        for base in (d, os.path.dirname(d), os.path.dirname(
                os.path.dirname(d))):
            try:
                names = os.listdir(base)
            except OSError:
                continue
            found += [os.path.join(base, n) for n in names
                      if n.startswith(f"{PREFIX}{pid}.")]
    return sorted(set(found))


def runs_in(dirs):
    out = []
    for d in dirs:
        try:
            out += [os.path.join(d, n) for n in os.listdir(d)
                    if n.startswith("run.")]
        except OSError:
            pass
    return out


def finished_runs(dirs):
    """Run cgroups with no process in them: a finished run's, which must
    be gone once its call is answered. The sandboxes built ahead (the
    pool) wait with processes in theirs; one being built may be empty
    for the moment between its mkdir and its init's move, so an empty
    one counts only if it stays so (2 s at most)."""
    def empty(r):
        try:
            with open(os.path.join(r, "cgroup.procs")) as f:
                return f.read().strip() == ""
        except OSError:
            return False        # removed meanwhile
    left = [r for r in runs_in(dirs) if empty(r)]
    for _ in range(200):
        if not left:
            break
        time.sleep(0.01)
        left = [r for r in left if empty(r)]
    return left


class Server:
    def __init__(self, binary, flags, unpriv):
        pre = []
        if unpriv:
            pre = AS_NOBODY
        env = {"PATH": PLAIN_PATH, "LANG": "C.UTF-8"}
        self.p = subprocess.Popen(pre + [binary] + flags,
                                  stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=env)
        self.buf = b""
        self.next_id = 1
        self.call("initialize", {"protocolVersion": "2025-11-25",
                                 "capabilities": {},
                                 "clientInfo": {"name": "t",
                                                "version": "1"}})
        self.send({"jsonrpc": "2.0",
                   "method": "notifications/initialized"})

    def send(self, msg):
        self.p.stdin.write(json.dumps(msg).encode() + b"\n")
        self.p.stdin.flush()

    def line(self):
        end = time.monotonic() + DEADLINE_S
        while b"\n" not in self.buf:
            left = end - time.monotonic()
            expect(left > 0, "no answer from the server within "
                   f"{DEADLINE_S} s")
            r, _, _ = select.select([self.p.stdout], [], [], left)
            if r:
                chunk = os.read(self.p.stdout.fileno(), 65536)
                if not chunk:
                    self.p.kill()
                    raise Fail("the server closed stdout: " + self.p.stderr
                               .read().decode(errors="replace"))
                self.buf += chunk
        ln, self.buf = self.buf.split(b"\n", 1)
        return json.loads(ln)

    def start(self, method, params):
        i = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": i, "method": method,
                   "params": params})
        return i

    def wait(self, i):
        while True:
            m = self.line()
            if m.get("id") == i:
                expect("result" in m, f"error answer: {m}")
                return m["result"]

    def call(self, method, params):
        return self.wait(self.start(method, params))

    def tool(self, name, args):
        return self.call("tools/call", {"name": name, "arguments": args})

    def close(self):
        self.p.stdin.close()
        try:
            rc = self.p.wait(timeout=DEADLINE_S)
        except subprocess.TimeoutExpired:
            self.p.kill()
            raise Fail("the server did not exit after EOF")
        err = self.p.stderr.read().decode(errors="replace")
        return rc, err


CGROUP_PARENT = []      # --cgroup-parent DIR, from our own command line


def flags(extra=()):
    # /tmp and the file size far above the limit, no warm python: nothing
    # but the cgroup stops these payloads at MEMORY_MB
    return ["--memory-mb", str(MEMORY_MB), "--tmp-mb", "1024",
            "--max-file-size-mb", "1024",
            "--warm-python", "0", "--max-processes", "16"] + \
        CGROUP_PARENT + list(extra)


# payloads: hold HOLD_MB one MiB at a time, printing each MiB held
HOLD = f"""
import sys
MIB = 1 << 20
def held(n):
    sys.stdout.write(f"{{n}}\\n"); sys.stdout.flush()
"""
MEMFD = HOLD + f"""
import os
fd = os.memfd_create("hold")
for n in range({HOLD_MB}):
    os.write(fd, b"x" * MIB); held(n + 1)
"""
SHM = HOLD + f"""
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
libc.shmdt.argtypes = [ctypes.c_void_p]
SEG = 4
# 4 MiB segments: the ipc namespace's own limits (shmall: the memory
# figure; 64 segments) would refuse the 17th; the cgroup must end it first
for n in range({HOLD_MB} // SEG):
    # IPC_PRIVATE, IPC_CREAT | 0600; never removed: it outlives the mapping
    i = libc.shmget(0, SEG * MIB, 0o1000 | 0o600)
    assert i >= 0, ctypes.get_errno()
    a = libc.shmat(i, None, 0)
    for k in range(SEG):
        ctypes.memset(a + k * MIB, 120, MIB)
        held(n * SEG + k + 1)
    libc.shmdt(ctypes.c_void_p(a))
"""
TMPFS = HOLD + f"""
with open("/tmp/hold", "wb") as f:
    for n in range({HOLD_MB}):
        f.write(b"x" * MIB); f.flush(); held(n + 1)
"""


def memory_attack(s, code):
    """The payload is ended at the memory limit, and says so."""
    srv = Server(s.binary, flags(), s.unpriv)
    r = srv.tool("run_code", {"language": "python3", "code": code,
                              "timeout_ms": 20000})
    st = r["structuredContent"]
    held = [int(x) for x in st["stdout"].split()]
    expect(r.get("isError") is True, f"not an error: {text(r)}")
    expect(text(r).startswith("Out of memory: the run reached its memory "
                              f"limit of {MEMORY_MB} MiB"), text(r))
    eq(st["memory_limit_reached"], True, "memory_limit_reached")
    eq(st["process_limit_reached"], False, "process_limit_reached")
    eq((st["exit_code"], st["signal"]), (None, signal.SIGKILL), "ended")
    expect(held and max(held) < MEMORY_MB,
           f"held {max(held) if held else 0} MiB of a {MEMORY_MB} MiB "
           "limit")
    peak = st["memory_peak_bytes"]
    expect(peak is not None and (MEMORY_MB - 8) << 20 <= peak <=
           MEMORY_MB << 20, f"peak {peak} for a {MEMORY_MB} MiB limit")
    alive_and_clean(s, srv)


def alive_and_clean(s, srv):
    """The server answers a plain call; no run cgroup stays; after EOF
    the server's own cgroup dirs are gone too (v2: it moved back out of
    its leaf and turned off what it turned on)."""
    r = srv.tool("run_command", {"command": "echo", "args": ["still"]})
    eq(r["structuredContent"]["stdout"], "still\n", "next call")
    peak = r["structuredContent"]["memory_peak_bytes"]
    expect(peak is not None and 0 < peak < MEMORY_MB << 20,
           f"peak of echo: {peak}")
    mine = server_dirs(own_dirs(os.getpid()), srv.p.pid)
    expect(mine, "no cgroup dir of the server: the runs had none?")
    eq(finished_runs(mine), [], "run cgroups left")
    pid = srv.p.pid
    rc, err = srv.close()
    eq(rc, 0, f"server exit ({err})")
    eq(server_dirs(own_dirs(os.getpid()), pid), [], "dirs left")


def case_memfd(s):
    memory_attack(s, MEMFD)


def case_sysv_shm(s):
    if not s.unpriv:
        memory_attack(s, SHM)
        return
    # an unprivileged server cannot set the ipc namespace's limits, and
    # refuses System V IPC (ENOSYS) instead: nothing to hold
    srv = Server(s.binary, flags(), s.unpriv)
    r = srv.tool("run_code", {"language": "python3", "code": SHM,
                              "timeout_ms": 20000})
    st = r["structuredContent"]
    eq((st["exit_code"], st["stdout"]), (1, ""), "shmget refused")
    expect(st["stderr"].endswith("AssertionError: 38\n"), st["stderr"])
    alive_and_clean(s, srv)


def case_tmpfs(s):
    memory_attack(s, TMPFS)


def case_fork_bomb(s):
    """A fork bomb stops at 16 processes; the run says so; then the server
    serves the next call."""
    srv = Server(s.binary, flags(), s.unpriv)
    r = srv.tool("run_command", {"command": "python3", "args": [
        "-c", "import os, time\n"
        "n = 0\n"
        "while n < 1000:\n"
        "    try:\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(60); os._exit(0)\n"
        "        n += 1\n"
        "    except BlockingIOError:\n"
        "        break\n"
        "print(n, flush=True)\n"
        "os._exit(3)\n"], "timeout_ms": 20000})
    st = r["structuredContent"]
    # 16 processes in all: python itself and 15 children
    eq(st["stdout"], "15\n", "children forked")
    eq(st["exit_code"], 3, "exit")
    eq(st["process_limit_reached"], True, "process_limit_reached")
    expect("The run reached its process limit of 16:" in text(r), text(r))
    alive_and_clean(s, srv)


def decoy_tmp(base, final):
    """Where a decoy server dir is made (and locked) before it takes its
    final name: one no server reaps, as servers of other tests may start
    meanwhile. v2 cgroups cannot be renamed (cgroup2 has no kernfs rename):
    there the final name itself, and the VM runs one server at a time."""
    if version() == 2:
        return final
    return os.path.join(base, f"decoy.{os.getpid()}")


def case_server_killed(s):
    """SIGKILL of the server mid-run leaves its cgroups; the next server
    removes them at start, and of the other dirs of ours exactly those
    whose lock is free: a dir a live process holds stays, one named for a
    live pid (ours) but unheld goes (names prove nothing)."""
    srv = Server(s.binary, flags(), s.unpriv)
    pid = srv.p.pid
    srv.start("tools/call", {"name": "run_code", "arguments": {
        "language": "sh", "code": "sleep 30", "timeout_ms": 30000}})
    where = own_dirs(os.getpid())
    for _ in range(2000):
        if runs_in(server_dirs(where, pid)):
            break
        time.sleep(0.005)
    runs = runs_in(server_dirs(where, pid))
    expect(runs, "the run's cgroup never appeared")
    base = os.path.dirname(server_dirs(where, pid)[0])
    held = os.path.join(base, f"{PREFIX}{os.getpid()}.0.held")
    unheld = os.path.join(base, f"{PREFIX}{os.getpid()}.0.unheld")
    lock = None
    try:
        for d in (held, unheld):
            tmp = decoy_tmp(base, d)
            os.mkdir(tmp)
            os.mkdir(os.path.join(tmp, "run.0"))
            if s.unpriv:
                os.chown(tmp, NOBODY, NOBODY)   # dirs it could remove
            if d == held:
                lock = os.open(tmp, os.O_RDONLY | os.O_DIRECTORY)
                fcntl.flock(lock, fcntl.LOCK_SH)
            if tmp != d:
                os.rename(tmp, d)
        srv.p.kill()
        srv.p.wait()
        # its sandbox dies with it (PDEATHSIG); its cgroups stay
        for _ in range(2000):
            if all(not open(os.path.join(r, "cgroup.procs")).read()
                   for r in runs if os.path.exists(r)):
                break
            time.sleep(0.005)
        expect(server_dirs(where, pid), "no stale dir to clean: the test "
               "proves nothing")
        again = Server(s.binary, flags(), s.unpriv)
        # the sandbox's context (which cleans up) is built as the server
        # serves: its first sandboxed call waits for it
        r = again.tool("run_command", {"command": "echo", "args": ["ok"]})
        eq(r["structuredContent"]["stdout"], "ok\n", "next server serves")
        eq(server_dirs(where, pid), [], "stale cgroups of the killed server")
        expect(os.path.isdir(os.path.join(held, "run.0")),
               "a held dir was removed")
        expect(not os.path.exists(unheld), "an unheld dir named for a live "
               "pid was kept")
        eq(again.close()[0], 0, "exit")
    finally:
        if lock is not None:
            os.close(lock)
        for d in (held, unheld, os.path.join(base, f"decoy.{os.getpid()}")):
            for x in (os.path.join(d, "run.0"), d):
                if os.path.isdir(x):
                    os.rmdir(x)


HOLDER = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
fcntl.flock(fd, fcntl.LOCK_SH)
print(os.getpid(), flush=True)
sys.stdin.read()
"""


def case_live_elsewhere(s):
    """A live server in another pid namespace, sharing our cgroup: its
    name's pid is pid 1 there (here: init, with another start time), so
    only its lock on its dir says it lives. A new server leaves its dir
    and empty run dirs alone; once the lock is gone, removes them."""
    if CGROUP_PARENT:
        base = CGROUP_PARENT[1]
    else:
        base = own_dirs(os.getpid())[0]
    with open("/proc/1/stat") as f:
        start = int(f.read().rsplit(")", 1)[1].split()[19])
    decoy = os.path.join(base, f"{PREFIX}1.{start + 1}.0")
    tmp = decoy_tmp(base, decoy)
    os.mkdir(tmp)
    os.mkdir(os.path.join(tmp, "run.0"))
    if s.unpriv:
        os.chown(tmp, NOBODY, NOBODY)       # a dir it could remove
    holder = None
    try:
        holder = subprocess.Popen(["unshare", "--pid", "--fork", sys.executable,
                                   "-c", HOLDER, tmp],
                                  stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        eq(holder.stdout.readline(), "1\n", "the holder: pid 1 of its own "
           "pid namespace, holding the lock")
        if tmp != decoy:
            os.rename(tmp, decoy)
        srv = Server(s.binary, flags(), s.unpriv)
        r = srv.tool("run_command", {"command": "echo", "args": ["ok"]})
        eq(r["structuredContent"]["stdout"], "ok\n", "the server serves")
        eq(srv.close()[0], 0, "exit")
        expect(os.path.isdir(os.path.join(decoy, "run.0")),
               "a live server's run dir was removed")
        holder.stdin.close()
        eq(holder.wait(timeout=DEADLINE_S), 0, "the holder's exit")
        holder = None
        srv = Server(s.binary, flags(), s.unpriv)
        eq(srv.close()[0], 0, "exit")     # its sandbox was built by then
        expect(not os.path.exists(decoy), "the dir of a server now gone "
               "was left")
    finally:
        if holder is not None:
            holder.kill()
            holder.wait()
        for top in (tmp, decoy):
            for d in (os.path.join(top, "run.0"), top):
                if os.path.isdir(d):
                    os.rmdir(d)


def check_output(s, extra):
    pre = []
    if s.unpriv:
        pre = AS_NOBODY
    return subprocess.run(pre + [s.binary, "--check"] + CGROUP_PARENT + extra,
                          capture_output=True, text=True, timeout=60,
                          env={"PATH": PLAIN_PATH})


def case_check(s):
    """--check says which bounds hold: here, the cgroup's."""
    r = check_output(s, [])
    eq(r.returncode, 0, r.stdout + r.stderr)
    lines = r.stdout.splitlines()
    mem = [ln for ln in lines if ln.startswith("ok       cgroup memory: ")]
    expect(mem and f"cgroup v{version()}, a run.N per sandbox" in mem[0],
           r.stdout)
    expect("ok       cgroup pids: pids.max of the whole sandbox" in lines[
        lines.index(mem[0]) + 1], r.stdout)
    # its TCP buffers count against its memory (issue 25, class 5)
    tcp = ("memory.kmem.tcp.limit_in_bytes = the memory figure" if
           version() == 1 else "memory.max counts the sandbox's TCP buffers")
    expect(lines[lines.index(mem[0]) + 2].startswith(
        "ok       cgroup socket memory: " + tcp), r.stdout)
    r = check_output(s, ["--require-cgroup"])
    eq(r.returncode, 0, "required, and there: " + r.stdout)


def case_no_cgroup(s):
    """Unprivileged on cgroup v1 (root's hierarchies): no cgroup. --check
    says why and the fix; rlimits hold; --require-cgroup fails closed."""
    r = check_output(s, [])
    eq(r.returncode, 0, r.stdout + r.stderr)
    lines = r.stdout.splitlines()
    i = [k for k, ln in enumerate(lines) if ln.startswith(
        "absent   cgroup per sandbox (memory, pids): ")]
    expect(i, r.stdout)
    expect(f"as uid {NOBODY}" in lines[i[0]] and "RLIMIT_AS per process"
           in lines[i[0]], lines[i[0]])
    expect(lines[i[0] + 1].startswith("         fix: run the server as "
                                      "root"), lines[i[0] + 1])
    expect("ok       rlimits: " in r.stdout, r.stdout)
    r = check_output(s, ["--require-cgroup"])
    eq(r.returncode, 1, "required and missing")
    expect("MISSING  cgroup per sandbox (memory, pids): " in r.stdout,
           r.stdout)
    # the server fails closed: pure tools serve, sandboxed ones refuse
    srv = Server(s.binary, flags(["--require-cgroup"]), s.unpriv)
    r = srv.tool("run_command", {"command": "echo", "args": ["x"]})
    eq(r.get("isError"), True, "refused")
    expect("was not run: the sandbox is not available" in text(r), text(r))
    r = srv.tool("calculate", {"expression": "1+1"})
    eq(r["structuredContent"]["value"], "2", "pure tool")
    rc, err = srv.close()
    eq(rc, 0, "exit")
    expect("sandbox cgroup failed" in err, err)
    # without the switch: it runs, under rlimits, and says it had no cgroup
    srv = Server(s.binary, flags(), s.unpriv)
    r = srv.tool("run_command", {"command": "echo", "args": ["x"]})
    eq(r["structuredContent"]["stdout"], "x\n", "runs under rlimits")
    eq(r["structuredContent"]["memory_peak_bytes"], None, "no cgroup peak")
    rc, err = srv.close()
    expect("no cgroup per sandbox" in err, err)


CASES = {n[5:]: f for n, f in globals().items() if n.startswith("case_")}


class Suite:
    def __init__(self, binary, unpriv):
        self.binary = binary
        self.unpriv = unpriv


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--unpriv", action="store_true")
    ap.add_argument("--cgroup-parent", help="cgroup v2 dir delegated to "
                    "the server (given to it as --cgroup-parent)")
    ap.add_argument("case", choices=sorted(CASES))
    a = ap.parse_args()
    if version() == 0:
        print("SKIP: no cgroup filesystem at /sys/fs/cgroup")
        return SKIP
    if a.unpriv and os.geteuid() != 0:
        print("SKIP: --unpriv needs root to drop to uid 65534")
        return SKIP
    # which cases apply: with a cgroup (root here, or v2 delegated) the
    # attacks; without one (unprivileged on v1) the fallback
    if a.cgroup_parent:
        CGROUP_PARENT.extend(["--cgroup-parent", a.cgroup_parent])
    has = not a.unpriv or (version() == 2 and bool(a.cgroup_parent))
    if (a.case == "no_cgroup") == has:
        print(f"SKIP: {a.case} does not apply "
              f"({'a' if has else 'no'} cgroup for this server here)")
        return SKIP
    try:
        CASES[a.case](Suite(a.server, a.unpriv))
    except Fail as e:
        print(f"FAIL {a.case}: {e}")
        return 1
    print(f"ok {a.case}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
