#!/usr/bin/env python3
"""Drive the real mcp-sandbox binary over stdio with raw bytes; see README.md."""

import json
import os
import re
import select
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

DEADLINE = 10.0  # seconds a single expected line or exit may take


class CaseError(Exception):
    pass


def match(want, got, partial):
    if want == "$any":
        return True
    if isinstance(want, str) and want.startswith("$re:"):
        return isinstance(got, str) and re.fullmatch(want[4:], got, re.S) is not None
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return False
        if not partial and set(want) != set(got):
            return False
        return all(k in got and match(v, got[k], partial) for k, v in want.items())
    if isinstance(want, list):
        return (isinstance(got, list) and len(want) == len(got)
                and all(match(w, g, partial) for w, g in zip(want, got)))
    if isinstance(want, bool) or isinstance(got, bool):
        return want is got
    return want == got and type(want) == type(got)  # ids keep their JSON type


class Server:
    def __init__(self, binary, args, env):
        self.p = subprocess.Popen([binary] + args, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  env=env)
        self.buf = b""
        self.err = b""
        os.set_blocking(self.p.stdout.fileno(), False)
        os.set_blocking(self.p.stderr.fileno(), False)

    def send(self, data):
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def _pump(self, until):
        fds = [self.p.stdout.fileno(), self.p.stderr.fileno()]
        left = until - time.monotonic()
        if left <= 0:
            return False
        r, _, _ = select.select(fds, [], [], left)
        for fd in r:
            chunk = os.read(fd, 65536)
            if fd == fds[0]:
                if not chunk:
                    return None
                self.buf += chunk
            else:
                self.err += chunk
        return True

    def line(self):
        until = time.monotonic() + DEADLINE
        while b"\n" not in self.buf:
            r = self._pump(until)
            if r is None:
                raise CaseError("server closed stdout; stderr:\n" + self.err.decode(errors="replace"))
            if r is False:
                raise CaseError("no line within %ss" % DEADLINE)
        ln, self.buf = self.buf.split(b"\n", 1)
        return ln

    def wait_exit(self):
        until = time.monotonic() + DEADLINE
        while True:
            rc = self.p.poll()
            if rc is not None:
                self._drain()
                return rc
            if self._pump(min(until, time.monotonic() + 0.05)) is None:
                rc = self.p.wait(timeout=max(0.1, until - time.monotonic()))
                self._drain()
                return rc
            if time.monotonic() > until:
                raise CaseError("server did not exit within %ss" % DEADLINE)

    def _drain(self):
        # the process is gone: whatever is left in both pipes is complete
        for f, attr in ((self.p.stdout, "buf"), (self.p.stderr, "err")):
            os.set_blocking(f.fileno(), True)
            rest = f.read()
            if rest:
                setattr(self, attr, getattr(self, attr) + rest)

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


def expect_line(srv, kind, payload):
    raw = srv.line()
    if kind == "<re":
        if not re.fullmatch(payload, raw.decode(errors="replace")):
            raise CaseError("line %r does not match /%s/" % (raw, payload))
        return
    try:
        got = json.loads(raw)
    except ValueError:
        raise CaseError("stdout line is not JSON: %r" % raw)
    want = json.loads(payload)
    if not match(want, got, kind == "<~"):
        raise CaseError("got  %s\nwant %s" % (raw.decode(errors="replace"), payload))


def expect_unordered(srv, payloads):
    wants = [json.loads(p) for p in payloads]
    gots = [srv.line() for _ in payloads]
    for raw in gots:
        got = json.loads(raw)
        for i, w in enumerate(wants):
            if match(w, got, False):
                del wants[i]
                break
        else:
            raise CaseError("unexpected line %s" % raw.decode(errors="replace"))


def run_case(path, binary, data_dir):
    work = tempfile.mkdtemp(prefix="mcp-ws-")
    scratch = tempfile.mkdtemp(prefix="mcp-tmp-")
    os.chmod(work, 0o755)
    # a root server wants a --workspace its sandboxes' uid (65534) owns
    if os.geteuid() == 0:
        os.chown(work, 65534, 65534)
    subst = {"$WORKSPACE": work, "$TMP": scratch, "$DATA": data_dir,
             "$CASEDIR": os.path.dirname(os.path.abspath(path))}

    def sub(s):
        for k, v in subst.items():
            s = s.replace(k, v)
        return s

    lines = open(path, encoding="utf-8").read().splitlines()
    args = []
    for ln in lines:
        if ln.startswith("@args "):
            args += [sub(a) for a in shlex.split(ln[6:])]
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    srv = Server(binary, args, env)
    pending = []
    try:
        for no, ln in enumerate(lines, 1):
            try:
                if not ln.strip() or ln.startswith("#") or ln.startswith("@args "):
                    continue
                if pending and not ln.startswith("<* "):
                    expect_unordered(srv, pending)
                    pending = []
                head, _, rest = ln.partition(" ")
                rest = sub(rest)
                if head == ">":
                    srv.send(rest.encode() + b"\n")
                elif head == ">raw":
                    v = eval(rest, {"__builtins__": {}})  # our own test data
                    srv.send(v.encode("latin-1") if isinstance(v, str) else v)
                elif head in ("<", "<~", "<re"):
                    expect_line(srv, head, rest)
                elif head == "<*":
                    pending.append(rest)
                elif head == "!close":
                    srv.p.stdin.close()
                elif head == "!term":
                    srv.p.send_signal(signal.SIGTERM)
                elif head == "!exit":
                    rc = srv.wait_exit()
                    if rc != int(rest):
                        raise CaseError("exit code %d, want %s; stderr:\n%s" % (rc, rest, srv.err.decode(errors="replace")))
                    if srv.buf.strip():
                        raise CaseError("unexpected stdout: %r" % srv.buf)
                elif head == "!file":
                    p, _, content = rest.partition(" ")
                    want = json.loads(content)
                    got = open(os.path.join(work, p), encoding="utf-8", errors="surrogateescape").read()
                    if got != want:
                        raise CaseError("file %s holds %r, want %r" % (p, got, want))
                elif head in ("!filematch", "!filenot"):
                    p, _, rx = rest.partition(" ")
                    fp = p if os.path.isabs(p) else os.path.join(work, p)
                    text = open(fp, encoding="utf-8").read()
                    found = re.fullmatch(rx, text, re.S) if head == "!filematch" else re.search(rx, text)
                    if head == "!filematch" and not found:
                        raise CaseError("file %s does not match /%s/:\n%s" % (p, rx, text))
                    if head == "!filenot" and found:
                        raise CaseError("file %s contains /%s/" % (p, rx))
                elif head == "!nofile":
                    if os.path.lexists(os.path.join(work, rest)):
                        raise CaseError("file %s exists" % rest)
                elif head == "!noproc":
                    out = subprocess.run(["pgrep", "-f", "--", rest], capture_output=True, text=True)
                    if out.stdout.strip():
                        raise CaseError("processes still running for /%s/: %s" % (rest, out.stdout.strip()))
                elif head == "!stderr":
                    if not re.search(rest, srv.err.decode(errors="replace")):
                        raise CaseError("stderr lacks /%s/:\n%s" % (rest, srv.err.decode(errors="replace")))
                else:
                    raise CaseError("bad directive %r" % head)
            except CaseError as e:
                raise CaseError("%s:%d: %s" % (os.path.basename(path), no, e))
        if pending:
            expect_unordered(srv, pending)
    finally:
        srv.kill()
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(scratch, ignore_errors=True)


def main():
    if len(sys.argv) < 3:
        print("usage: run_cases.py BINARY CASE-FILE-OR-DIR...", file=sys.stderr)
        return 2
    binary = sys.argv[1]
    data_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
    files = []
    for a in sys.argv[2:]:
        if os.path.isdir(a):
            files += sorted(os.path.join(a, f) for f in os.listdir(a) if f.endswith(".case"))
        else:
            files.append(a)
    passed = failed = 0
    for f in files:
        try:
            run_case(f, binary, data_dir)
            passed += 1
            print("ok   %s" % os.path.basename(f))
        except CaseError as e:
            failed += 1
            print("FAIL %s" % e)
    print("integration: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
