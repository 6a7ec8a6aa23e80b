#!/usr/bin/python3
"""Attacks on what surrounds the sandbox on the host side (issue 10).

Each case starts the real `mcp-sandbox` server on stdio, as the running user
(root in CI) or, with --unpriv, as uid 65534 (setpriv), and attacks through
its tools as a model would: sandboxed code (run_command, run_code) changes
what it can reach, then a host-side tool (query_sqlite, write_file) is called
and its exact answer checked, with the host checked before and after.
Usage: host_perimeter.py --server BIN [--unpriv] CASE
Exit 0 pass, 1 fail, 77 skipped (ctest SKIP_RETURN_CODE).
"""
import argparse
import ctypes
import json
import os
import re
import select
import shutil
import sqlite3
import struct
import subprocess
import sys
import tempfile
import time

# the helpers the test scripts share: tests/lib
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from mcptest import (AS_NOBODY, NOBODY, Fail, eq, expect,  # noqa: E402
                     nobody_can, poll_until, text)

SKIP = 77
PLAIN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
READ_DEADLINE_S = 20	# one answer; a sandboxed call takes milliseconds


class Skip(Exception):
    pass


class Server:
    """One mcp-sandbox on stdio, initialized; call() returns a result."""

    def __init__(self, suite, args, env=None):
        e = {"PATH": PLAIN_PATH}
        if env:
            e.update(env)
        self.p = subprocess.Popen(suite.prefix() + [suite.server] + args,
                                  stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=e)
        self.buf = b""
        self.next_id = 1
        r = self.request("initialize", {"protocolVersion": "2025-11-25",
                                        "capabilities": {}})
        expect("result" in r, f"initialize: {r}")
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.p.stdin.write(json.dumps(msg).encode() + b"\n")
        self.p.stdin.flush()

    def read(self):
        end = time.monotonic() + READ_DEADLINE_S
        while b"\n" not in self.buf:
            left = end - time.monotonic()
            if left <= 0:
                raise Fail("no answer within the deadline")
            r, _, _ = select.select([self.p.stdout], [], [], left)
            if not r:
                continue
            chunk = os.read(self.p.stdout.fileno(), 65536)
            if not chunk:
                raise Fail("server closed stdout: " +
                           self.p.stderr.read().decode("utf-8", "replace"))
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def request(self, method, params):
        rid = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": rid, "method": method,
                   "params": params})
        while True:
            m = self.read()
            if m.get("id") == rid:
                return m

    def call(self, name, args):
        r = self.request("tools/call", {"name": name, "arguments": args})
        expect("result" in r, f"{name}: {r}")
        return r["result"]

    def close(self):
        """EOF; the server must exit 0. Returns its stderr."""
        self.p.stdin.close()
        try:
            rc = self.p.wait(timeout=READ_DEADLINE_S)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            raise Fail("server did not exit after EOF")
        errtext = self.p.stderr.read().decode("utf-8", "replace")
        eq(rc, 0, "server exit status (stderr: " + errtext + ")")
        return errtext


def sh(srv, script, code=0):
    """Runs script in the sandbox (run_code sh); checks its exit status."""
    r = srv.call("run_code", {"language": "sh", "code": script})
    sc = r.get("structuredContent", {})
    eq(sc.get("exit_code"), code, f"sandboxed sh exit ({sc.get('stderr')!r})")
    return sc


class Suite:
    def __init__(self, server, unpriv):
        self.server = server
        self.unpriv = unpriv
        self.tmp = tempfile.mkdtemp(prefix="mcp-perim-")
        os.chmod(self.tmp, 0o755)
        # the uid the server runs as, and the host uid of its sandboxes
        self.suid = NOBODY if unpriv else os.geteuid()
        self.kuid = NOBODY
        self.vtmp = None

    def cleanup(self):
        shutil.rmtree(self.tmp, ignore_errors=True)
        if self.vtmp:
            shutil.rmtree(self.vtmp, ignore_errors=True)

    def outside_tmp(self):
        """A scratch dir outside /tmp (every sandbox makes its own /tmp,
        so a program there cannot be bound): under /var/tmp."""
        if not self.vtmp:
            self.vtmp = tempfile.mkdtemp(prefix="mcp-perim-", dir="/var/tmp")
            os.chmod(self.vtmp, 0o755)
        return self.vtmp

    def prefix(self):
        if not self.unpriv:
            return []
        return AS_NOBODY

    def give(self, path, uid):
        if os.geteuid() == 0:
            os.chown(path, uid, uid)

    def workspace(self):
        """A user's --workspace the sandboxes may write."""
        d = tempfile.mkdtemp(dir=self.tmp)
        os.chmod(d, 0o755)
        self.give(d, self.kuid)
        return d


def make_db(path, value, owner):
    c = sqlite3.connect(path)
    c.execute("CREATE TABLE t(v TEXT)")
    c.execute("INSERT INTO t VALUES (?)", (value,))
    c.commit()
    c.close()
    os.chmod(path, 0o644)
    if os.geteuid() == 0:
        os.chown(path, owner, owner)


def query(srv, db="d"):
    return srv.call("query_sqlite", {"database": db,
                                     "sql": "SELECT v FROM t"})


def rows(res):
    expect(not res.get("isError"), f"query failed: {text(res)}")
    return res["structuredContent"]["rows"]


# class 1: host-side opens of paths a sandbox can change ---------------------

def secret_db(s):
    """A database only the server's uid can read, outside every bind."""
    d = os.path.join(s.tmp, "private")
    os.mkdir(d, 0o700)
    s.give(d, s.suid)
    p = os.path.join(d, "secret.sqlite")
    make_db(p, "SECRET", s.suid)
    os.chmod(p, 0o600)
    return p


def case_sqlite_symlink_swap(s):
    """The database in the workspace becomes a symlink to another SQLite
    file the server can read: the server refuses, never follows it."""
    ws = s.workspace()
    make_db(os.path.join(ws, "data.sqlite"), "good", s.kuid)
    secret = secret_db(s)
    srv = Server(s, ["--workspace", ws, "--database",
                     f"d={ws}/data.sqlite"])
    eq(rows(query(srv)), [["good"]], "before the swap")
    sh(srv, f"ln -sfn {secret} /workspace/data.sqlite")
    expect(os.path.islink(os.path.join(ws, "data.sqlite")), "no symlink")
    r = query(srv)
    eq(r.get("isError"), True, "query after the swap is refused")
    eq(text(r), "The database file was replaced by a symbolic link since "
       "the server started; it is not followed.", "refusal")
    sh(srv, "rm /workspace/data.sqlite")
    r = query(srv)
    eq(text(r), "The database file is gone from its directory since the "
       "server started (No such file or directory).", "after removal")
    srv.close()


def case_sqlite_rename_swap(s):
    """Another SQLite file renamed over the database: refused (inode)."""
    ws = s.workspace()
    make_db(os.path.join(ws, "data.sqlite"), "good", s.kuid)
    srv = Server(s, ["--workspace", ws, "--database",
                     f"d={ws}/data.sqlite"])
    eq(rows(query(srv)), [["good"]], "before the swap")
    sh(srv, "python3 -c \"import sqlite3; c = sqlite3.connect("
       "'/workspace/evil.sqlite'); c.execute('CREATE TABLE t(v)'); "
       "c.execute(\\\"INSERT INTO t VALUES ('evil')\\\"); c.commit()\" && "
       "mv /workspace/evil.sqlite /workspace/data.sqlite")
    r = query(srv)
    eq(r.get("isError"), True, "query after the rename is refused")
    eq(text(r), "The database file was replaced by another file since the "
       "server started; only the file found at start is opened (restart "
       "the server to use the new one).", "refusal")
    srv.close()


def case_sqlite_dir_swap(s):
    """The database's directory renamed away and replaced by a symlink to
    a directory holding another database of the same name: the server
    still reads the file it found at start (its directory fd is pinned)."""
    ws = s.workspace()
    sub = os.path.join(ws, "sub")
    os.mkdir(sub)
    s.give(sub, s.kuid)
    make_db(os.path.join(sub, "data.sqlite"), "good", s.kuid)
    other = os.path.join(s.tmp, "other")
    os.mkdir(other, 0o755)
    make_db(os.path.join(other, "data.sqlite"), "SECRET", s.suid)
    os.chmod(os.path.join(other, "data.sqlite"), 0o600)
    srv = Server(s, ["--workspace", ws, "--database",
                     f"d={sub}/data.sqlite"])
    eq(rows(query(srv)), [["good"]], "before the swap")
    sh(srv, f"mv /workspace/sub /workspace/old && "
       f"ln -s {other} /workspace/sub")
    eq(rows(query(srv)), [["good"]], "after the swap: the pinned file")
    srv.close()


def case_sqlite_journal_symlink(s):
    """Symlinks planted at the journal names (-journal, -wal) are never
    opened: the query reads the database alone."""
    ws = s.workspace()
    make_db(os.path.join(ws, "data.sqlite"), "good", s.kuid)
    secret = secret_db(s)
    srv = Server(s, ["--workspace", ws, "--database",
                     f"d={ws}/data.sqlite"])
    sh(srv, f"ln -s {secret} /workspace/data.sqlite-journal && "
       f"ln -s {secret} /workspace/data.sqlite-wal")
    r = query(srv)
    expect("SECRET" not in json.dumps(r), f"the secret leaked: {r}")
    eq(rows(r), [["good"]], "the database, without the planted journals")
    srv.close()


def case_sqlite_wal_unlink(s):
    """An empty database whose directory is renamed away and replaced by a
    symlink to another directory, with a -wal planted beside the pinned
    file: SQLite removes a -wal it finds beside an empty database, and
    that removal must happen in the pinned directory, never through the
    symlink (where another database's -wal of the same name would go)."""
    ws = s.workspace()
    sub = os.path.join(ws, "sub")
    os.mkdir(sub, 0o755)
    s.give(sub, s.kuid)
    db = os.path.join(sub, "data.sqlite")
    open(db, "w").close()
    os.chmod(db, 0o644)
    s.give(db, s.kuid)
    other = os.path.join(s.tmp, "other")
    os.mkdir(other, 0o755)
    s.give(other, s.suid)
    victim = os.path.join(other, "data.sqlite-wal")
    with open(victim, "w") as f:
        f.write("another database's log\n")
    os.chmod(victim, 0o644)
    s.give(victim, s.suid)
    srv = Server(s, ["--workspace", ws, "--database", f"d={db}"])
    sh(srv, "mv /workspace/sub /workspace/old && "
       "echo planted > /workspace/old/data.sqlite-wal && "
       f"ln -s {other} /workspace/sub")
    # reads the schema: the database is opened (SELECT 1 would not)
    r = srv.call("query_sqlite", {"database": "d",
                                  "sql": "SELECT count(*) FROM sqlite_master"})
    expect(os.path.exists(victim), "the server removed the -wal of the "
           "directory the symlink leads to")
    with open(victim) as f:
        eq(f.read(), "another database's log\n", "the other -wal")
    eq(rows(r), [[0]], "the empty pinned database")
    expect(not os.path.exists(os.path.join(ws, "old", "data.sqlite-wal")),
           "the planted -wal beside the pinned file is removed")
    srv.close()


PLANT_WAL = """import os, shutil, sqlite3
shutil.copy('/workspace/data.sqlite', '/tmp/c.sqlite')
c = sqlite3.connect('/tmp/c.sqlite', isolation_level=None)
c.execute('PRAGMA journal_mode=WAL')
c.execute('PRAGMA wal_autocheckpoint=0')
c.execute("UPDATE t SET v = 'evil'")
shutil.copy('/tmp/c.sqlite-wal', '/workspace/data.sqlite-wal')
os._exit(0)	# no close: the -wal is not checkpointed away
"""


def case_sqlite_wal_planted(s):
    """Sandboxed code that can write the database's directory but not the
    database (a root server; the file is root's) plants a -wal made from a
    changed copy: its pages would replace the database's. A journal owned
    by neither the database's owner nor the server reads as absent: the
    query reads the database."""
    ws = s.workspace()
    db = os.path.join(ws, "data.sqlite")
    make_db(db, "good", 0)
    srv = Server(s, ["--workspace", ws, "--database", f"d={db}"])
    eq(rows(query(srv)), [["good"]], "before")
    r = srv.call("write_file", {"path": "plant.py", "content": PLANT_WAL})
    expect(not r.get("isError"), f"write_file: {r}")
    sh(srv, "python3 /workspace/plant.py && test -s /workspace/data.sqlite-wal")
    eq(os.stat(os.path.join(ws, "data.sqlite-wal")).st_uid, s.kuid,
       "the planted -wal is the sandbox's")
    eq(rows(query(srv)), [["good"]], "after planting a -wal")
    srv.close()


def case_sqlite_wal_no_leftovers(s):
    """A database in WAL mode whose writer closed it (no -wal, no -shm), in
    a directory sandboxed code can write: a read-only query makes neither
    (they would be the server's, renamed away and replaced by the
    sandbox's: every later query failed). It reads the file immutable,
    and still does once the sandbox has planted a -wal and a -shm."""
    ws = s.workspace()
    db = os.path.join(ws, "data.sqlite")
    make_db(db, "good", 0)
    c = sqlite3.connect(db)
    eq(c.execute("PRAGMA journal_mode=WAL").fetchone()[0], "wal", "WAL")
    c.close()
    for suffix in ("-wal", "-shm"):
        expect(not os.path.exists(db + suffix), suffix + " before")
    srv = Server(s, ["--workspace", ws, "--database", f"d={db}"])
    for i in range(2):
        eq(rows(query(srv)), [["good"]], "query %d" % i)
        for suffix in ("-wal", "-shm"):
            expect(not os.path.exists(db + suffix), "the query made " + suffix)
    sh(srv, "echo planted > /workspace/data.sqlite-wal && "
       "echo planted > /workspace/data.sqlite-shm")
    eq(rows(query(srv)), [["good"]], "with a planted -wal and -shm")
    srv.close()


LEGIT_WAL = """import os, sqlite3, sys
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute('PRAGMA journal_mode=WAL')
c.execute('PRAGMA wal_autocheckpoint=0')
c.execute("UPDATE t SET v = 'newer'")
os._exit(0)	# no close: the change stays in the -wal
"""


def case_sqlite_wal_legit(s):
    """A database in WAL mode whose writer (its owner) left a change in its
    -wal: the server reads the change (journals of the database's owner
    are used)."""
    d = os.path.join(s.tmp, "wal")
    os.mkdir(d, 0o755)
    s.give(d, s.suid)
    db = os.path.join(d, "data.sqlite")
    make_db(db, "older", s.suid)
    cmd = ["python3", "-c", LEGIT_WAL, db]
    if s.unpriv:
        cmd = s.prefix() + cmd
    subprocess.run(cmd, check=True, env={"PATH": PLAIN_PATH}, timeout=20)
    for suffix in ("-wal", "-shm"):
        st = os.stat(db + suffix)
        eq(st.st_uid, s.suid, f"{suffix} is the owner's")
    srv = Server(s, ["--database", f"d={db}"])
    eq(rows(query(srv)), [["newer"]], "the change in the -wal")
    srv.close()


IN_CREATE = 0x100
IN_NONBLOCK = 0o4000


class Inotify:
    """Names created in one directory (libc's inotify, through ctypes)."""

    def __init__(self, path):
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.fd = self.libc.inotify_init1(IN_NONBLOCK)
        expect(self.fd >= 0, "inotify_init1")
        expect(self.libc.inotify_add_watch(self.fd, path.encode(),
                                           IN_CREATE) >= 0, "inotify watch")

    def names(self):
        data = b""
        while True:
            try:
                chunk = os.read(self.fd, 65536)
            except BlockingIOError:
                break
            if not chunk:
                break
            data += chunk
        names, off = [], 0
        while off + 16 <= len(data):
            _, _, _, n = struct.unpack_from("iIII", data, off)
            names.append(data[off + 16:off + 16 + n].rstrip(b"\0").decode())
            off += 16 + n
        os.close(self.fd)
        return names


def case_sqlite_temp_files(s):
    """A query too big for SQLite's cache spills to temporary files, which
    SQLite makes where SQLITE_TMPDIR, TMPDIR or else /var/tmp say: here an
    allow_read_write directory, where sandboxed code (of the server's uid,
    when it is unprivileged) could open one before SQLite unlinks it and
    change it under the query. They are made in the server's private
    parent instead, outside every sandbox."""
    base = s.outside_tmp()
    rw = os.path.join(base, "rw")
    tmp = os.path.join(base, "tmp")
    for d in (rw, tmp):
        os.mkdir(d, 0o755)
    s.give(rw, s.kuid)
    s.give(tmp, s.suid)
    db = os.path.join(base, "big.sqlite")
    c = sqlite3.connect(db)
    c.execute("CREATE TABLE t(v TEXT)")
    c.executemany("INSERT INTO t VALUES (?)",
                  ((("%06d" % i) * 50,) for i in range(40000)))
    c.commit()
    c.close()
    os.chmod(db, 0o644)
    cfg = os.path.join(base, "policy.json")
    with open(cfg, "w") as f:
        json.dump({"allow_read_write": [rw]}, f)
    os.chmod(cfg, 0o644)
    srv = Server(s, ["--config", cfg, "--database", f"d={db}"],
                 env={"TMPDIR": tmp, "SQLITE_TMPDIR": rw})
    watch = Inotify(rw)
    r = srv.call("query_sqlite", {"database": "d", "sql":
                                  "SELECT count(*) FROM "
                                  "(SELECT DISTINCT v FROM t)"})
    made = watch.names()
    eq(rows(r), [[40000]], "the query")
    eq(made, [], "files SQLite made in the allow_read_write directory")
    srv.close()


# class 3 (workspace part) and class 10: the fresh workspace ------------------

def tmpdir_for(s):
    """A TMPDIR of the server's own: its private parent is the one entry."""
    d = os.path.join(s.tmp, "tmpdir")
    os.mkdir(d, 0o755)
    s.give(d, s.suid)
    return d


def only_entry(d):
    names = os.listdir(d)
    eq(len(names), 1, f"entries of {d}")
    return os.path.join(d, names[0])


def as_other_user(cmd):
    """cmd as a local user who is neither the server nor its sandboxes."""
    return subprocess.run(["setpriv", "--reuid=12345", "--regid=12345",
                           "--clear-groups", "--inh-caps=-all"] + cmd,
                          capture_output=True, text=True)


def case_workspace_parent(s):
    """A sandbox makes its workspace world-writable and leaves a file
    there: another local user still cannot traverse to it, because fresh
    workspaces live in a 0700 parent owned by the server."""
    tmpdir = tmpdir_for(s)
    # uncapped: the workspace is a directory on the host's file system
    # (a capped one is a tmpfs only the server's mount namespace holds)
    srv = Server(s, ["--workspace-mb", "0"], env={"TMPDIR": tmpdir})
    sh(srv, "chmod 0777 /workspace && echo private > /workspace/f && "
       "chmod 0666 /workspace/f")
    parent = only_entry(tmpdir)
    st = os.stat(parent)
    eq((st.st_mode & 0o7777, st.st_uid), (0o700, s.suid), "the parent")
    ws = only_entry(parent)
    eq(os.stat(ws).st_mode & 0o777, 0o777, "the sandbox's chmod held")
    r = as_other_user(["cat", os.path.join(ws, "f")])
    eq((r.returncode, r.stdout, r.stderr),
       (1, "", f"cat: {ws}/f: Permission denied\n"), "another user reads")
    r = as_other_user(["ls", parent])
    eq(r.returncode, 2, f"another user lists the parent ({r.stderr})")
    srv.close()
    eq(os.listdir(tmpdir), [], "the parent is removed at exit")


def case_workspace_full(s):
    """A run fills its fresh workspace: ENOSPC inside at the cap, the host
    file system untouched, write_file says why, the server keeps serving;
    the tmpfs lives in the server's mount namespace only."""
    tmpdir = tmpdir_for(s)
    srv = Server(s, ["--workspace-mb", "8"], env={"TMPDIR": tmpdir})
    sc = sh(srv, "head -c 16M /dev/zero > /workspace/big; echo $?; "
            "wc -c < /workspace/big")
    eq(sc["stdout"], "1\n8388608\n", "the fill stopped at the cap")
    eq(sc["stderr"], "head: error writing 'standard output': No space "
       "left on device\n", "the sandbox saw ENOSPC")
    parent = only_entry(tmpdir)
    ws = only_entry(parent)
    # the host's view: an empty directory; the server's: the full tmpfs
    eq(os.listdir(ws), [], "the host's namespace sees the mount point")
    with open("/proc/self/mountinfo") as f:
        expect(ws not in f.read(), "the tmpfs is in the host's namespace")
    mine = f"/proc/{srv.p.pid}/root{ws}"
    eq(os.path.getsize(mine + "/big"), 8 << 20, "the server's view")
    with open(f"/proc/{srv.p.pid}/mountinfo") as f:
        m = [l.split() for l in f if l.split()[4] == ws]
    eq(len(m), 1, "one mount on the workspace in the server's namespace")
    expect(m[0][-3:-1] == ["tmpfs", "mcp-workspace"], f"its fs: {m[0]}")
    expect("size=8192k" in m[0][-1], f"its options: {m[0][-1]}")
    r = srv.call("write_file", {"path": "note.txt", "content": "x" * 65536})
    eq(r.get("isError"), True, "write_file on a full workspace")
    eq(text(r), "No space left for 'note.txt': the workspace is full (a "
       "fresh workspace holds at most workspace_mb = 8 MiB; a --workspace "
       "directory, what its file system has free). Nothing was changed: a "
       "file is replaced whole or not at all. Remove files and try "
       "again.", "its message")
    expect(not os.path.exists(mine + "/note.txt"), "half a file was kept")
    sh(srv, "rm /workspace/big")
    r = srv.call("write_file", {"path": "note.txt", "content": "hello"})
    eq(r.get("isError"), None, f"write_file after freeing: {r}")
    eq(r["structuredContent"]["size"], 5, "written")
    srv.close()
    eq(os.listdir(tmpdir), [], "workspace and parent removed at exit")


def case_workspace_uncapped(s):
    """Where the server may not make the namespaces (here: the server run
    inside a sandbox, whose seccomp filter refuses unshare), it warns at
    start and --check gives the cause and the fix."""
    d = os.path.dirname(os.path.realpath(s.server))
    # room for an ASan build: its shadow map needs far more address
    # space than exec's default, and LeakSanitizer needs ptrace, which
    # the sandbox refuses (both are ignored by a release build)
    inner = s.prefix() + [s.server, "exec", "--memory", str(1 << 45),
                          "--env", "ASAN_OPTIONS=detect_leaks=0",
                          "--bind", f"{d}:/opt/srv",
                          "--", "/opt/srv/mcp-sandbox"]
    r = subprocess.run(inner, capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, env={"PATH": PLAIN_PATH},
                       timeout=30)
    eq(r.returncode, 0, f"the server in a sandbox ({r.stderr})")
    why = ("an unprivileged server needs a user namespace of its own to "
           "mount a tmpfs, and unshare(CLONE_NEWUSER) failed: Operation not "
           "permitted")
    expect(f"warn: fresh workspaces are not size-capped: {why} (see "
           "mcp-sandbox --check)" in r.stderr, f"start-up warning: {r.stderr}")
    r = subprocess.run(inner + ["--check"], capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, env={"PATH": PLAIN_PATH},
                       timeout=30)
    lines = r.stdout.splitlines()
    i = [k for k, l in enumerate(lines) if "workspace cap:" in l]
    eq(len(i), 1, f"one workspace cap line: {r.stdout}")
    eq(lines[i[0]:i[0] + 2], [
        f"absent   workspace cap: fresh workspaces are not size-capped: "
        f"{why}; a run can fill the file system of $TMPDIR (/tmp)",
        "         fix: let the server make a user and a mount namespace "
        "(unprivileged user namespaces allowed, no seccomp filter or "
        "container policy refusing unshare), or run it as root, or give "
        "--workspace DIR on a file system with a quota or a size limit of "
        "its own (and set TMPDIR there for skill copies)"], "--check")
    r = subprocess.run(s.prefix() + [s.server, "--check"],
                       capture_output=True, text=True,
                       env={"PATH": PLAIN_PATH}, timeout=30)
    expect("ok       workspace cap: fresh workspaces and skill copies are "
           "tmpfs of workspace_mb (default 256 MiB)" in r.stdout,
           f"--check outside a sandbox: {r.stdout}")

# class 2: binds no wider than the program needs ------------------------------

GREET_LIB = "const char *greet(void) { return \"hello from libgreet\"; }\n"
GREET_MAIN = ("#include <stdio.h>\nconst char *greet(void);\n"
              "int main(void) { puts(greet()); return 0; }\n")


def home_like(s):
    """A home directory with a program in ~/bin, a library in ~/lib it
    finds through RUNPATH $ORIGIN/../lib, and secrets beside them."""
    home = os.path.join(s.outside_tmp(), "home")
    for d in ("bin", "lib", ".ssh"):
        os.makedirs(os.path.join(home, d), 0o755)
    key = os.path.join(home, ".ssh", "id_ed25519")
    with open(key, "w") as f:
        f.write("FAKE-PRIVATE-KEY\n")
    os.chmod(key, 0o644)	# readable by anyone who can reach it
    with open(os.path.join(home, ".npmrc"), "w") as f:
        f.write("//registry.npmjs.org/:_authToken=FAKE-TOKEN\n")
    os.chmod(os.path.join(home, ".npmrc"), 0o644)
    shutil.copy("/usr/bin/cat", os.path.join(home, "bin", "mycat"))
    src = os.path.join(s.tmp, "src")
    os.mkdir(src)
    with open(os.path.join(src, "greet.c"), "w") as f:
        f.write(GREET_LIB)
    with open(os.path.join(src, "main.c"), "w") as f:
        f.write(GREET_MAIN)
    for cmd in (["cc", "-shared", "-fPIC", "-o",
                 os.path.join(home, "lib", "libgreet.so"),
                 os.path.join(src, "greet.c")],
                ["cc", "-o", os.path.join(home, "bin", "greet"),
                 os.path.join(src, "main.c"), "-L" + home + "/lib",
                 "-lgreet", "-Wl,-rpath,$ORIGIN/../lib",
                 "-Wl,--enable-new-dtags"]):
        r = subprocess.run(cmd, capture_output=True, text=True)
        eq(r.returncode, 0, f"building the fixture: {r.stderr}")
    os.chmod(home, 0o755)
    return home


def run_cmd(srv, command, args=()):
    r = srv.call("run_command", {"command": command, "args": list(args)})
    sc = r["structuredContent"]
    return sc["exit_code"], sc["stdout"], sc["stderr"]


def case_home_program(s):
    """~/bin/mycat and ~/bin/greet (with ~/lib/libgreet.so through its
    RUNPATH) run; the home's key and token stay out of reach, and
    --print-config lists exactly the files bound."""
    home = home_like(s)
    args = ["--allow-command", f"{home}/bin/mycat",
            "--allow-command", f"{home}/bin/greet"]
    r = subprocess.run(s.prefix() + [s.server] + args + ["--print-config"],
                       capture_output=True, text=True,
                       env={"PATH": PLAIN_PATH})
    eq(r.returncode, 0, f"--print-config ({r.stderr})")
    binds = json.loads(r.stdout)["_resolved"]["binds"]["commands"]
    eq(binds.get("mycat"), [{"host": f"{home}/bin/mycat",
                             "inside": f"{home}/bin/mycat", "mode": "ro"}],
       "mycat's binds")
    eq(binds.get("greet"), [
        {"host": f"{home}/bin/greet", "inside": f"{home}/bin/greet",
         "mode": "ro"},
        {"host": f"{home}/lib/libgreet.so",
         "inside": f"{home}/lib/libgreet.so", "mode": "ro"}],
       "greet's binds")
    srv = Server(s, args)
    eq(run_cmd(srv, "greet"), (0, "hello from libgreet\n", ""), "greet")
    for secret in (".ssh/id_ed25519", ".npmrc"):
        eq(run_cmd(srv, "mycat", [f"{home}/{secret}"]),
           (1, "", f"mycat: {home}/{secret}: No such file or directory\n"),
           f"reading ~/{secret}")
    # each program has its own files only: not even its neighbour's
    for other in ("bin/greet", "lib/libgreet.so"):
        eq(run_cmd(srv, "mycat", [f"{home}/{other}"]),
           (1, "", f"mycat: {home}/{other}: No such file or directory\n"),
           f"mycat reads ~/{other}")
    srv.close()


def pyenv_python():
    import glob
    for exe in sorted(glob.glob("/root/.pyenv/versions/3.*/bin/python3.*")):
        base = os.path.basename(exe)
        if base.count(".") == 1 and base[len("python3."):].isdigit():
            return exe
    return None


def case_python_nonsystem(s):
    """A pyenv python first on PATH runs with its own standard library
    (import struct works) and nothing else of its prefix."""
    exe = pyenv_python()
    if exe is None:
        raise Skip("no pyenv python at /root/.pyenv")
    prefix = os.path.dirname(os.path.dirname(exe))
    ver = os.path.basename(exe)[len("python"):]
    # and the most binds a run can have: 8 allowed paths, deep ones
    deep = [os.path.join(s.outside_tmp(), "a", "b", f"d{i}", "e", "f")
            for i in range(8)]
    for d in deep:
        os.makedirs(d)
    cfg = os.path.join(s.outside_tmp(), "policy.json")
    with open(cfg, "w") as f:
        json.dump({"allow_read": deep}, f)
    srv = Server(s, ["--warm-python", "0", "--config", cfg],
                 env={"PATH": os.path.dirname(exe) + ":" + PLAIN_PATH})
    r = srv.call("run_code", {"language": "python3", "code":
                 "import struct, sys, os\n"
                 "print(sys.prefix, struct.pack('<H', 258).hex())\n"
                 "print(sorted(os.listdir(sys.prefix)))\n"
                 "print(sorted(os.listdir(sys.prefix + '/bin')))\n"
                 "print(os.path.exists('/root/.pyenv/shims'))\n"
                 f"print(len(os.listdir('{s.outside_tmp()}/a/b')))\n"})
    eq(r.get("structuredContent", {}).get("stdout"),
       f"{prefix} 0201\n['bin', 'lib']\n['python{ver}']\nFalse\n8\n",
       f"the pyenv python inside ({text(r)})")
    srv.close()


def case_python_refused(s):
    """A python whose standard library is not beside it (a lone copy in
    ~/bin) is passed over at start with the reason; the system python is
    used instead."""
    exe = pyenv_python()
    if exe is None:
        raise Skip("no pyenv python at /root/.pyenv")
    home = os.path.join(s.outside_tmp(), "home")
    os.makedirs(os.path.join(home, "bin"), 0o755)
    ver = os.path.basename(exe)[len("python"):]
    lone = os.path.join(home, "bin", f"python{ver}")
    shutil.copy(exe, lone)
    os.symlink(f"python{ver}", os.path.join(home, "bin", "python3"))
    env = {"PATH": f"{home}/bin:{PLAIN_PATH}"}
    r = subprocess.run(s.prefix() + [s.server, "--print-config"],
                       capture_output=True, text=True, env=env)
    cfg = json.loads(r.stdout)
    eq(cfg["_resolved"]["languages"]["python3"],
       os.path.realpath("/usr/bin/python3"), "the python used")
    srv = Server(s, ["--warm-python", "0"], env=env)
    errtext = srv.close()
    want = (f"policy: python3: the first on PATH is passed over: the "
            f"standard library of the Python at {lone} is not where it "
            f"looks for it ({home}/lib/python{ver}/os.py)")
    expect(want in errtext, f"start-up note: {errtext}")


def case_allow_paths(s):
    """allow_read and allow_read_write bind exactly the named paths, read-
    only and read-write, into every sandbox; a path a sandbox makes itself
    is refused at start with the reason."""
    base = s.outside_tmp()
    ro = os.path.join(base, "data")
    rw = os.path.join(base, "out")
    for d in (ro, rw):
        os.mkdir(d, 0o755)
    s.give(rw, s.kuid)
    with open(os.path.join(ro, "x"), "w") as f:
        f.write("shared data\n")
    os.chmod(os.path.join(ro, "x"), 0o644)
    cfg = os.path.join(base, "policy.json")
    with open(cfg, "w") as f:
        json.dump({"allow_read": [ro], "allow_read_write": [rw]}, f)
    os.chmod(cfg, 0o644)
    r = subprocess.run(s.prefix() + [s.server, "--config", cfg,
                                     "--print-config"],
                       capture_output=True, text=True,
                       env={"PATH": PLAIN_PATH})
    eq(json.loads(r.stdout)["_resolved"]["binds"]["every_sandbox"],
       [{"host": ro, "inside": ro, "mode": "ro"},
        {"host": rw, "inside": rw, "mode": "rw"}], "--print-config")
    srv = Server(s, ["--config", cfg])
    sc = sh(srv, f"cat {ro}/x; echo new > {rw}/y; echo bad > {ro}/z; "
            f"ls {base}")
    eq(sc["stdout"], "shared data\ndata\nout\n", "what the sandbox sees")
    eq(sc["stderr"], f"sh: 1: cannot create {ro}/z: Read-only file "
       "system\n", "allow_read is read-only")
    with open(os.path.join(rw, "y")) as f:
        eq(f.read(), "new\n", "written through allow_read_write")
    expect(not os.path.exists(os.path.join(ro, "z")), "wrote to allow_read")
    # class 5: the writable bind is id-mapped like the workspace, so a
    # root server's run with it has a kernel uid of its own, and what it
    # wrote is the server's kernel uid's on disk
    eq(os.stat(os.path.join(rw, "y")).st_uid, s.kuid, "owner on disk")
    sc = sh(srv, "cat /proc/self/uid_map /proc/self/mountinfo")
    kuid = int(sc["stdout"].split()[1])
    if os.geteuid() == 0 and not s.unpriv:
        expect(0x70000000 <= kuid < 0x70004000, f"the run's uid {kuid}")
    else:
        eq(kuid, os.geteuid() if not s.unpriv else NOBODY, "the run's uid")
    # class 8: each bind's root field is its own path, where it is
    # mounted inside too; the fresh workspace, a tmpfs, shows "/"
    roots = {f[4]: f[3] for f in (line.split() for line in
                                  sc["stdout"].splitlines()[1:])}
    eq((roots[ro], roots[rw], roots["/workspace"]), (ro, rw, "/"),
       "mount roots")
    srv.close()
    with open(cfg, "w") as f:
        json.dump({"allow_read": ["/tmp"]}, f)
    r = subprocess.run(s.prefix() + [s.server, "--config", cfg],
                       capture_output=True, text=True, stdin=subprocess.DEVNULL,
                       env={"PATH": PLAIN_PATH})
    eq((r.returncode, r.stderr), (2, "mcp-sandbox: allow_read: /tmp is on "
       "or above /tmp, which every sandbox makes or binds itself; name a "
       "path outside it\n"), "a reserved path")


def init_children(pid):
    """Pids of the sandbox inits (comm sandbox-init) pid has started."""
    out = []
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{t}/children") as f:
                kids = f.read().split()
        except OSError:
            continue
        for k in kids:
            try:
                with open(f"/proc/{k}/comm") as f:
                    if f.read().strip() == "sandbox-init":
                        out.append(int(k))
            except OSError:
                pass
    return out


def case_protected_after_warm_start(s):
    """A .git its owner makes after a warm python was started for the
    workspace is read-only to the call that python would have served (it
    is started again, cold), and stays where it is, unmoved; a .git the
    run itself makes is moved aside."""
    ws = s.workspace()
    srv = Server(s, ["--workspace", ws, "--warm-python", "1"])
    r = srv.call("run_code", {"language": "python3", "code": "print(1)"})
    eq(r["structuredContent"]["stdout"], "1\n", "first call")
    # after the answer the pool starts one python for ws: wait for it
    poll_until(lambda: init_children(srv.p.pid), attempts=2000,
               pause_s=0.005)
    expect(init_children(srv.p.pid), "no warm python was started")
    git = os.path.join(ws, ".git")
    os.mkdir(git)
    with open(os.path.join(git, "config"), "w") as f:
        f.write("[core]\n")
    for p in (git, os.path.join(git, "config")):
        s.give(p, s.kuid)	# the owner's repo, writable by the sandboxes
    r = srv.call("run_code", {"language": "python3", "code":
                              "try:\n open('.git/config', 'a').write('x')\n"
                              " print('written')\n"
                              "except OSError as e:\n print(e.strerror)"})
    eq(r["structuredContent"]["stdout"], "Read-only file system\n",
       "the owner's new .git inside")
    with open(os.path.join(git, "config")) as f:
        eq(f.read(), "[core]\n", ".git/config on the host")
    eq(sorted(os.listdir(ws)), [".git"], "the owner's .git stays")
    # one the run makes (.hg, absent at its start) is moved aside
    sc = sh(srv, "mkdir .hg")
    expect(sc["stdout"] == "", sc)
    left = sorted(os.listdir(ws))
    eq(len(left), 2, f"after: {left}")
    expect(left[0] == ".git" and
           re.fullmatch(r"\.hg\.from-sandbox-[0-9a-f]{16}", left[1]), left)
    srv.close()


def make_skill(root, name, line):
    d = os.path.join(root, name)
    os.makedirs(os.path.join(d, "scripts"))
    with open(os.path.join(d, "SKILL.md"), "w") as f:
        f.write(f"---\nname: {name}\ndescription: says a line\n---\n")
    with open(os.path.join(d, "scripts", "say.sh"), "w") as f:
        f.write(f"echo {line}\n")
    for dp, dirs, files in os.walk(root):
        for n in dirs:
            os.chmod(os.path.join(dp, n), 0o755)
        for n in files:
            os.chmod(os.path.join(dp, n), 0o644)


def case_skills_swap(s):
    """The skills directory sits in the workspace; sandboxed code moves
    it away and puts a symlink to its own look-alike in its place: the
    server still copies the skill folder it found at start."""
    ws = s.workspace()
    skills = os.path.join(ws, "skills")
    os.mkdir(skills, 0o755)
    make_skill(skills, "greet", "original")
    for dp, dirs, files in os.walk(ws):
        for n in dirs + files:
            s.give(os.path.join(dp, n), s.kuid)
    srv = Server(s, ["--workspace", ws, "--skills-dir", skills])
    def say():
        r = srv.call("run_skill_script", {"skill": "greet",
                                          "script": "say.sh"})
        return r["structuredContent"]["stdout"]
    eq(say(), "original\n", "before the swap")
    sh(srv, "mkdir -p /workspace/fake/greet/scripts && "
       "printf '%s\\n' '---' 'name: greet' '---' > "
       "/workspace/fake/greet/SKILL.md && "
       "echo 'echo evil' > /workspace/fake/greet/scripts/say.sh && "
       "mv /workspace/skills /workspace/old && "
       f"ln -s {ws}/fake /workspace/skills")
    eq(say(), "original\n", "after the swap: the folder found at start")
    srv.close()


def case_host_files_in_workspace(s):
    """The audit log (or the config, or the token file) inside the
    workspace could be replaced by sandboxed code: refused at start;
    an audit log that is a symlink or a FIFO is never opened."""
    ws = s.workspace()
    for args, what, path in (
            (["--audit-log", f"{ws}/audit.log"], "audit_log",
             f"{ws}/audit.log"),
            (["--http", "127.0.0.1:0", "--token-file", f"{ws}/tokens"],
             "--token-file", f"{ws}/tokens")):
        r = subprocess.run(s.prefix() + [s.server, "--workspace", ws] +
                           args, capture_output=True, text=True,
                           stdin=subprocess.DEVNULL,
                           env={"PATH": PLAIN_PATH}, timeout=20)
        eq((r.returncode, r.stderr), (2, f"mcp-sandbox: {what} {path} lies "
           f"in {ws}, which sandboxed code can write: it could replace the "
           "file the server trusts; keep it outside\n"), what)
    cfg = os.path.join(ws, "policy.json")
    with open(cfg, "w") as f:
        json.dump({"workspace": ws}, f)
    os.chmod(cfg, 0o644)
    r = subprocess.run(s.prefix() + [s.server, "--config", cfg],
                       capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, env={"PATH": PLAIN_PATH},
                       timeout=20)
    eq((r.returncode, r.stderr), (2, f"mcp-sandbox: --config {cfg} lies in "
       f"{ws}, which sandboxed code can write: it could replace the file "
       "the server trusts; keep it outside\n"), "--config")
    # outside the workspace, planted by someone else: not followed
    d = os.path.join(s.tmp, "logs")
    os.mkdir(d, 0o755)
    s.give(d, s.suid)
    victim = os.path.join(s.tmp, "victim")
    with open(victim, "w") as f:
        f.write("untouched\n")
    os.chmod(victim, 0o666)
    os.symlink(victim, os.path.join(d, "audit.log"))
    os.mkfifo(os.path.join(d, "fifo.log"), 0o666)
    s.give(os.path.join(d, "fifo.log"), s.suid)
    for name, why in (("audit.log", "it is a symbolic link"),
                      ("fifo.log", "it is not a regular file")):
        r = subprocess.run(s.prefix() + [s.server, "--audit-log",
                                         f"{d}/{name}"],
                           capture_output=True, text=True,
                           stdin=subprocess.DEVNULL,
                           env={"PATH": PLAIN_PATH}, timeout=20)
        want = f"cannot open audit log {d}/{name}: {why}"
        eq(r.returncode, 1, f"{name}: exit ({r.stderr})")
        expect(want in r.stderr, f"{name}: {r.stderr}")
    with open(victim) as f:
        eq(f.read(), "untouched\n", "the symlink's target")


def case_relative_audit_log(s):
    """An audit log named relative to a current directory that is the
    workspace, not there yet: refused like an absolute one (the check
    looks at the nearest existing ancestor, here the current directory),
    and nothing is created."""
    ws = s.workspace()
    r = subprocess.run(s.prefix() + [s.server, "--workspace", ws,
                                     "--audit-log", "audit.log"],
                       capture_output=True, text=True, cwd=ws,
                       stdin=subprocess.DEVNULL, env={"PATH": PLAIN_PATH},
                       timeout=20)
    eq((r.returncode, r.stderr), (2, "mcp-sandbox: audit_log audit.log lies "
       f"in {ws}, which sandboxed code can write: it could replace the "
       "file the server trusts; keep it outside\n"), "relative audit_log")
    eq(os.listdir(ws), [], "nothing made in the workspace")


def case_tmpdir_in_reach(s):
    """TMPDIR inside a directory every sandbox has (an allow_read_write or
    allow_read path, the workspace): the private parent of fresh
    workspaces would be in the sandboxes' reach, where sandboxed code
    could rename it and plant symlinks that the server's file tools then
    follow out of the workspace. Refused at start, nothing made there."""
    base = s.outside_tmp()
    rw = os.path.join(base, "rw")
    ro = os.path.join(base, "ro")
    for d in (rw, ro):
        os.mkdir(d, 0o755)
    s.give(rw, s.kuid)
    s.give(ro, s.suid)
    ws = s.workspace()
    cfg = os.path.join(base, "policy.json")
    with open(cfg, "w") as f:
        json.dump({"allow_read": [ro], "allow_read_write": [rw]}, f)
    os.chmod(cfg, 0o644)
    for tmpdir, where, args in ((rw, rw, []), (f"{ro}/t", ro, []),
                                (ws, ws, ["--workspace", ws])):
        r = subprocess.run(s.prefix() + [s.server, "--config", cfg] + args,
                           capture_output=True, text=True,
                           stdin=subprocess.DEVNULL,
                           env={"PATH": PLAIN_PATH, "TMPDIR": tmpdir},
                           timeout=20)
        eq((r.returncode, r.stderr), (2, f"mcp-sandbox: TMPDIR {tmpdir} lies "
           f"in {where}, which sandboxed code can reach: the private parent "
           "of fresh workspaces and skill copies would be in its reach; set "
           "TMPDIR outside it\n"), f"TMPDIR={tmpdir}")
    for d in (rw, ro, ws):
        eq(os.listdir(d), [], f"nothing made in {d}")
    # beside them, not in them: serves
    beside = os.path.join(base, "tmp")
    os.mkdir(beside, 0o755)
    s.give(beside, s.suid)
    srv = Server(s, ["--config", cfg], env={"TMPDIR": beside})
    sh(srv, "true")
    srv.close()


CASES = {
    "sqlite_symlink_swap": case_sqlite_symlink_swap,
    "sqlite_rename_swap": case_sqlite_rename_swap,
    "sqlite_dir_swap": case_sqlite_dir_swap,
    "sqlite_journal_symlink": case_sqlite_journal_symlink,
    "sqlite_wal_unlink": case_sqlite_wal_unlink,
    "sqlite_wal_planted": case_sqlite_wal_planted,
    "sqlite_wal_legit": case_sqlite_wal_legit,
    "sqlite_wal_no_leftovers": case_sqlite_wal_no_leftovers,
    "sqlite_temp_files": case_sqlite_temp_files,
    "workspace_parent": case_workspace_parent,
    "workspace_full": case_workspace_full,
    "workspace_uncapped": case_workspace_uncapped,
    "home_program": case_home_program,
    "python_nonsystem": case_python_nonsystem,
    "python_refused": case_python_refused,
    "allow_paths": case_allow_paths,
    "skills_swap": case_skills_swap,
    "host_files_in_workspace": case_host_files_in_workspace,
    "protected_after_warm_start": case_protected_after_warm_start,
    "relative_audit_log": case_relative_audit_log,
    "tmpdir_in_reach": case_tmpdir_in_reach,
}
# cases that need a root server (the tmpfs cap), or an unprivileged one
# (the pyenv pythons live in /root, which uid 65534 cannot traverse)
ROOT_ONLY = {"python_nonsystem", "python_refused",
             # an unprivileged server's sandboxes have its uid: their
             # journals cannot be told from its own
             "sqlite_wal_planted", "sqlite_wal_no_leftovers"}
UNPRIV_ONLY = set()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--unpriv", action="store_true",
                    help="run the server as uid 65534 (setpriv)")
    ap.add_argument("case", choices=sorted(CASES) + ["list"])
    a = ap.parse_args()
    if a.case == "list":
        print("\n".join(sorted(CASES)))
        return 0
    if a.unpriv:
        if os.geteuid() != 0 or not shutil.which("setpriv"):
            print("skip: --unpriv needs root and setpriv to drop to 65534")
            return SKIP
        if a.case in ROOT_ONLY:
            print("skip: this case needs a root server")
            return SKIP
        if not nobody_can("unshare", "-U", "true"):
            print("skip: unprivileged user namespaces are not allowed here")
            return SKIP
        if not nobody_can("test", "-x", a.server):
            print(f"skip: {a.server} is not reachable by uid 65534")
            return SKIP
    elif a.case in UNPRIV_ONLY:
        print("skip: this case needs an unprivileged server")
        return SKIP
    elif os.geteuid() != 0:
        # the scenes give files to uid 65534 (the sandboxes' kernel uid)
        print("skip: the cases build their scene as root")
        return SKIP
    s = Suite(a.server, a.unpriv)
    try:
        CASES[a.case](s)
    except Fail as e:
        print(f"FAIL {a.case}: {e}")
        return 1
    except Skip as e:
        print(f"skip: {e}")
        return SKIP
    finally:
        s.cleanup()
    print(f"ok {a.case}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
