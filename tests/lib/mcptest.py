"""Helpers the Python test scripts share (one copy each, here): failures
for the scripts that run one case per process, bounded polling, the
processes /proc shows, the Landlock ABI, the text of a tool result, the
setpriv words that run a command as uid 65534, and the ok/FAIL report of
the scripts that check many things and go on.
HTTP requests by hand are in http_client.py beside this file.

A script finds this directory with, before its imports from here:

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(
        __file__)), "..", "lib"))

(tests/vm copies this file beside the script it runs, where Python looks
first anyway)."""
import contextlib
import ctypes
import json
import os
import select
import subprocess
import time

# Bounded polling for effects that land on another thread or process:
# attempts x pause, 10 s in all, not a timing assertion.
POLL_ATTEMPTS = 400
POLL_PAUSE_S = 0.025

# The unprivileged user the scripts run a server or the CLI as (--unpriv),
# and the kernel uid of a root server's sandboxes.
NOBODY = 65534
# setpriv's words for "as uid and gid 65534, without supplementary groups"
SETPRIV_NOBODY = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}",
                  "--clear-groups"]
# the same without inheritable capabilities: how a server or CLI is started
# unprivileged
AS_NOBODY = SETPRIV_NOBODY + ["--inh-caps=-all"]


class Fail(Exception):
    """A case's check failed: the script prints it and exits 1."""


def expect(cond, what):
    if not cond:
        raise Fail(what)


def eq(got, want, what):
    if got != want:
        raise Fail("%s:\n  got  %r\n  want %r" % (what, got, want))


def poll_until(fn, attempts=POLL_ATTEMPTS, pause_s=POLL_PAUSE_S):
    """Whether fn() became true within attempts tries, pause_s apart."""
    for _ in range(attempts):
        if fn():
            return True
        time.sleep(pause_s)
    return False


def text(result):
    """The text of a tool result's first content block."""
    return result["content"][0]["text"]


def pids_with(marker):
    """Pids whose command line contains marker (bytes)."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/cmdline" % d, "rb") as f:
                    if marker in f.read():
                        out.append(int(d))
            except OSError:
                pass
    return out


def descendants(pid):
    """Every process whose parent chain reaches pid (pid itself not)."""
    parent = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d) as f:
                    st = f.read()
                parent[int(d)] = int(st[st.rindex(")") + 2:].split()[1])
            except (OSError, ValueError):
                pass
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parent.items() if pp == p]
        out += kids
        todo += kids
    return out


def nobody_can(*cmd):
    """Whether cmd, run as uid 65534 (SETPRIV_NOBODY), exits 0: e.g.
    ("unshare", "-U", "true") for user namespaces, ("test", "-x", path)
    for a binary it must reach. Its output is not shown."""
    return subprocess.run(SETPRIV_NOBODY + list(cmd),
                          capture_output=True).returncode == 0


def landlock_abi():
    """The kernel's Landlock ABI version, 0 without Landlock."""
    libc = ctypes.CDLL(None, use_errno=True)
    # landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)
    v = libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint(1))
    return v if v > 0 else 0


class Report:
    """ok/FAIL lines, one a check, for scripts that go on past a failure;
    end() prints the timings and the failures and gives the exit code."""

    DETAIL_MAX = 3000       # characters of a failure's detail shown

    def __init__(self, what):
        self.what = what
        self.failures = []
        self.timings = []

    def check(self, name, cond, detail=""):
        if cond:
            print("ok   " + name, flush=True)
        else:
            print("FAIL %s: %s" % (name, str(detail)[:self.DETAIL_MAX]),
                  flush=True)
            self.failures.append(name)
        return cond

    @contextlib.contextmanager
    def step(self, name):
        """with report.step(name): a step announced and timed."""
        t0 = time.monotonic()
        print("== " + name, flush=True)
        try:
            yield
        finally:
            self.timings.append((name, time.monotonic() - t0))

    def end(self):
        for name, t in self.timings:
            print("time %s: %.1f s" % (name, t))
        if self.failures:
            print("%d failed: %s" % (len(self.failures),
                                     ", ".join(self.failures)))
            return 1
        print("%s: all passed" % self.what)
        return 0


class StdioServer:
    """One mcp-sandbox on stdio, initialized: request() sends a request and
    returns its answer (other messages skipped), each read bounded by
    deadline_s; close() sends EOF and returns the exit status. capabilities
    are the client's, as initialize declares them. argv is the
    whole command line (a setpriv prefix included); env replaces the
    environment (a plain PATH by default, no developer shims)."""

    PLAIN_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}

    def __init__(self, argv, env=None, version="2025-11-25", deadline_s=60,
                 capabilities=None):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL,
                                  env=env or self.PLAIN_ENV)
        self.deadline_s = deadline_s
        self.buf = b""
        self.n = 0
        self.init = self.request("initialize", {
            "protocolVersion": version, "capabilities": capabilities or {},
            "clientInfo": {"name": "mcptest", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()

    def read(self):
        """The next message from the server."""
        end = time.monotonic() + self.deadline_s
        while b"\n" not in self.buf:
            left = end - time.monotonic()
            if left <= 0:
                raise Fail("no answer from the server within %d s" %
                           self.deadline_s)
            r, _, _ = select.select([self.p.stdout], [], [], left)
            if not r:
                continue
            chunk = os.read(self.p.stdout.fileno(), 65536)
            if not chunk:
                raise Fail("the server closed its stdout")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def start(self, method, params):
        """Sends a request without waiting: its id."""
        self.n += 1
        self.send({"jsonrpc": "2.0", "id": self.n, "method": method,
                   "params": params})
        return self.n

    def wait(self, rid):
        """The answer to request rid (other messages skipped)."""
        while True:
            m = self.read()
            if m.get("id") == rid:
                return m

    def request(self, method, params):
        return self.wait(self.start(method, params))

    def close(self):
        self.p.stdin.close()
        return self.p.wait(timeout=30)
