#!/usr/bin/env python3
"""stdin on a terminal: a last line without its newline that is a
tools/call, then end of input (^D ends the line, ^D again ends input). The
call answers and the server exits 0 on its own: a terminal says EOF once,
so the server must not read again after it (it would block).

Usage: tty_eof.py BINARY"""
import json
import os
import pty
import select
import subprocess
import sys
import termios
import time

DEADLINE_S = 10.0	# the whole exchange; a hang fails the test


def main():
    binary = sys.argv[1]
    master, slave = pty.openpty()
    attrs = termios.tcgetattr(slave)
    attrs[3] &= ~termios.ECHO
    termios.tcsetattr(slave, termios.TCSANOW, attrs)
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    p = subprocess.Popen([binary], stdin=slave, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env)
    os.close(slave)
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}}}
    call = {"jsonrpc": "2.0", "id": "last", "method": "tools/call",
            "params": {"name": "run_code",
                       "arguments": {"language": "sh", "code": "echo last"}}}
    os.write(master, json.dumps(init).encode() + b"\n")
    os.write(master, json.dumps(call).encode() + b"\x04\x04")
    until = time.monotonic() + DEADLINE_S
    out = b""
    while time.monotonic() < until:
        r, _, _ = select.select([p.stdout], [], [], until - time.monotonic())
        if not r:
            break
        chunk = os.read(p.stdout.fileno(), 65536)
        if not chunk:
            break
        out += chunk
    try:
        rc = p.wait(max(0.0, until - time.monotonic()))
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        print("FAIL: the server still runs %.0f s after EOF on its "
              "terminal; stdout: %r" % (DEADLINE_S, out))
        return 1
    os.close(master)
    lines = [json.loads(ln) for ln in out.splitlines()]
    ids = [m.get("id") for m in lines]
    last = [m for m in lines if m.get("id") == "last"]
    if rc != 0 or ids != [1, "last"] or \
            last[0]["result"]["structuredContent"]["stdout"] != "last\n":
        print("FAIL: exit %r, answers %r; stderr:\n%s" %
              (rc, out, p.stderr.read().decode(errors="replace")))
        return 1
    print("ok   tty_eof: the unterminated last call answered, exit 0")
    return 0


if __name__ == "__main__":
    sys.exit(main())
