#!/usr/bin/python3
"""Adversarial suite of the sandbox: real attacks through the real CLI.

Each case runs `$CLI exec [limits] -- PROGRAM ...` and asserts the exact
outcome (exit code, output, errno names printed by the probe) and checks the
host before and after (processes carrying a per-case marker, files, sysctls).
Usage: sandbox_attacks.py --cli CLI --probe-dir DIR [--unpriv] CASE
Exit 0 pass, 1 fail, 77 skipped (ctest SKIP_RETURN_CODE).
"""
import argparse
import hashlib
import os
import pty
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

# the helpers the test scripts share: tests/lib
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from mcptest import (AS_NOBODY, NOBODY, Fail, eq, expect,  # noqa: E402
                     landlock_abi, nobody_can, pids_with, poll_until)

SKIP = 77
# Host sysctls a sandbox must never change (read before and after each case).
SYSCTLS = [
    "/proc/sys/kernel/hostname",
    "/proc/sys/kernel/domainname",
    "/proc/sys/vm/dirty_writeback_centisecs",
    "/proc/sys/user/max_user_namespaces",
    "/proc/sys/kernel/core_pattern",
    "/proc/sys/net/ipv4/ip_forward",
]
# Host files whose content must not change.
HOST_FILES = ["/etc/passwd", "/etc/hostname", "/etc/hosts"]


class Suite:
    def __init__(self, cli, probe_dir, unpriv):
        self.cli = cli
        self.probe_dir = probe_dir
        self.unpriv = unpriv
        self.abi = landlock_abi()
        self.tmp = tempfile.mkdtemp(prefix="mcp-sbx-adv-")
        os.chmod(self.tmp, 0o755)
        # When the suite runs as root the sandbox's kernel uid is 65534;
        # unprivileged, it is our own.
        self.kuid = NOBODY if os.geteuid() == 0 else os.geteuid()
        self._check = None

    def check_ok(self, layer):
        """Whether --check says the layer holds here."""
        if self._check is None:
            r = subprocess.run(self.prefix() + [self.cli, "--check"],
                               capture_output=True, text=True, timeout=60)
            self._check = r.stdout.splitlines()
        return any(ln.startswith(f"ok       {layer}: ") for ln in self._check)

    def memory_cgroup(self):
        """Runs get a memory cgroup here, which counts memfd pages: then
        memfd_create is allowed."""
        return self.check_ok("cgroup memory")

    def cleanup(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def prefix(self):
        if not self.unpriv:
            return []
        return AS_NOBODY

    def run(self, args, timeout=60, stdin=None, env=None, pass_fds=(),
            input_bytes=None):
        cmd = self.prefix() + [self.cli, "exec"] + args
        return subprocess.run(cmd, capture_output=True, timeout=timeout,
                              stdin=stdin, env=env, pass_fds=pass_fds,
                              input=input_bytes)

    def workspace(self, owner=None):
        d = tempfile.mkdtemp(dir=self.tmp)
        os.chmod(d, 0o755)
        if os.geteuid() == 0:
            os.chown(d, NOBODY, NOBODY)
        return d

    def probe_args(self):
        return ["--bind", f"{self.probe_dir}:/opt/probe"]

    # host state -----------------------------------------------------------

    def snapshot(self):
        state = {}
        for p in SYSCTLS + HOST_FILES:
            try:
                with open(p, "rb") as f:
                    state[p] = hashlib.sha256(f.read()).hexdigest()
            except OSError as e:
                state[p] = f"error {e.errno}"
        return state

    @staticmethod
    def marker(k):
        """A sleep duration no other run uses: pid-based, per case step."""
        return str(9000000000 + os.getpid() * 10 + k)

    @staticmethod
    def marked(marker):
        """Pids whose command line carries marker."""
        return pids_with(marker.encode())


def out(r):
    return r.stdout.decode("utf-8", "replace")


def err(r):
    return r.stderr.decode("utf-8", "replace")


# cases --------------------------------------------------------------------

def case_probe_syscalls(s):
    """Risky syscalls, each with its exact errno (or the signal it kills)."""
    name = f"mcp-sandbox-probe-{os.getpid()}"
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(b"\0" + name.encode())
    srv.listen()
    try:
        r = s.run(s.probe_args() + ["--", "/opt/probe/sandbox-probe",
                                   "syscalls", name])
    finally:
        srv.close()
    eq(r.returncode, 0, "probe exit")
    got = dict(line.split(" ", 1) for line in out(r).splitlines())
    ll = s.abi
    want = {
        "uid": "1000 euid 1000",
        "pid": "2 ppid 1",
        "open_etc_shadow": "ENOENT", "open_root_home": "ENOENT",
        "open_work": "ENOENT", "create_in_usr": "EROFS",
        "create_in_etc": "EROFS", "create_in_root": "EROFS",
        "write_etc_passwd": "EACCES", "write_proc_sys": "ENOENT",
        "write_sysrq": "ENOENT", "read_kcore": "ENOENT",
        "read_keys": "ENOENT", "read_init_environ": "EACCES",
        # pid 1 (our reaper) is not dumpable: its exe, root and memory
        # are closed to the program (the CVE-2019-5736 route)
        "open_init_exe": "EACCES", "open_init_root": "EACCES",
        "open_init_mem": "EACCES",
        "open_dev_tty": "ENOENT", "open_sys": "ENOENT",
        "mknod_char": "EPERM",
        "socket_inet": "ok",
        # Landlock (ABI >= 4) refuses TCP before routing; else no route.
        "tcp_connect_internet": "EACCES" if ll >= 4 else "ENETUNREACH",
        "udp_send_internet": "ENETUNREACH",
        "udp_send_loopback": "ENETUNREACH",
        # no CAP_NET_RAW; ping sockets: gid 1000 not in ping_group_range
        "socket_raw_icmp": "EPERM", "socket_ping_dgram": "EACCES",
        "socket_packet": "ENOSYS", "socket_netlink": "ENOSYS",
        "socket_vsock": "ENOSYS", "socket_alg": "ENOSYS",
        "abstract_unix_host": "ECONNREFUSED",
        "keyctl": "EPERM", "add_key": "EPERM", "request_key": "EPERM",
        "userfaultfd": "EPERM", "io_uring_setup": "EPERM", "bpf": "EPERM",
        "perf_event_open": "EPERM", "ptrace_attach_init": "EPERM",
        "ptrace_traceme": "EPERM", "process_vm_readv": "EPERM",
        "kcmp": "EPERM", "pidfd_getfd": "EPERM", "kexec_load": "EPERM",
        "init_module": "EPERM", "finit_module": "EPERM", "reboot": "EPERM",
        "swapon": "EPERM", "settimeofday": "EPERM",
        "clock_settime": "EPERM", "iopl": "EPERM",
        "open_by_handle_at": "EPERM", "mount_tmpfs": "EPERM",
        "umount_proc": "EPERM", "pivot_root": "EPERM", "chroot": "EPERM",
        "fsopen": "EPERM", "open_tree": "EPERM", "move_mount": "EPERM",
        "mount_setattr": "EPERM", "unshare_user": "EPERM",
        "unshare_mount": "EPERM", "unshare_net": "EPERM", "setns": "EPERM",
        "clone_newuser": "EPERM", "clone_newnet": "EPERM",
        "clone3": "ENOSYS", "sethostname": "EPERM",
        "setuid_root": "EINVAL",
        "unknown_syscall_1000": "ENOSYS", "unknown_syscall_600": "ENOSYS",
        "x32_getpid": f"signal={int(signal.SIGSYS)}",
        "i386_int80_getpid": f"signal={int(signal.SIGSYS)}",
        "tiocsti": "EPERM", "tiocsti_high_bits": "EPERM",
        "tioclinux": "EPERM",
        "personality_addr_no_randomize": "ENOSYS",
        # Landlock (ABI >= 6) scopes signals; else pid 1 ignores it (ok).
        "kill_init": "EPERM" if ll >= 6 else "ok",
        "seccomp_more_filters": "EFAULT",
        # issue 10, class 3: nothing set-id is made, by any call
        "create_plain": "ok", "chmod_plain": "ok", "chmod_setuid": "EPERM",
        "chmod_setgid": "EPERM", "fchmod_setuid": "EPERM",
        "fchmodat_setgid": "EPERM", "fchmodat2_setuid": "EPERM",
        "fchmodat2_plain": "ok",
        # file capabilities need CAP_SETFCAP, which nothing inside has
        "setxattr_file_caps": "EPERM",
        "open_creat_setuid": "EPERM", "openat_creat_setgid": "EPERM",
        "open_tmpfile_setuid": "EPERM", "creat_setuid": "EPERM",
        "mknod_reg_setuid": "EPERM", "mknodat_reg_setgid": "EPERM",
        "openat2_creat_setuid": "ENOSYS", "open_rdonly_setuid_mode": "ok",
        "mkdir_setid_mode": "ok", "mkdir_mode": "0755", "setid_files": "0",
        # class 4: memfd is shmem no rlimit counts; a memory cgroup does
        "memfd_create": "ok" if s.memory_cgroup() else "ENOSYS",
        "memfd_secret": "ENOSYS",
        # class 7: socketpair filtered like socket (family, protocol);
        # AF_INET passes the filter and the kernel refuses the pair
        "socketpair_unix": "ok", "socketpair_inet": "EOPNOTSUPP",
        "socketpair_netlink": "ENOSYS", "socketpair_alg": "ENOSYS",
        "socketpair_vsock": "ENOSYS", "socketpair_packet": "ENOSYS",
        "socketpair_unix_proto_tcp": "EPROTONOSUPPORT",
        "socket_sctp": "ENOSYS", "socket_mptcp": "ENOSYS",
        "socket_udplite": "ENOSYS", "socket_l2tp": "ENOSYS",
        "socket_smc": "ENOSYS",
        "fds": "0 1 2",
    }
    bad = [f"{k}: got {got.get(k)!r}, want {v!r}" for k, v in want.items()
           if got.get(k) != v]
    extra = sorted(set(got) - set(want))
    expect(not bad and not extra, "; ".join(bad + [f"unexpected {extra}"]))


def case_host_files(s):
    """Host secrets and trees outside the mounts do not exist inside."""
    r = s.run(["--", "/bin/sh", "-c",
               "cat /etc/shadow; ls /root /home /work /var 2>&1 | wc -l; "
               "cat /etc/passwd"])
    eq(r.returncode, 0, "exit")
    eq(err(r), "cat: /etc/shadow: No such file or directory\n", "stderr")
    lines = out(r).splitlines()
    eq(lines[0], "4", "ls error lines")
    eq(lines[1:], ["root:x:0:0:root:/root:/usr/sbin/nologin",
                   "sandbox:x:1000:1000:sandbox:/tmp:/bin/sh",
                   "nobody:x:65534:65534:nobody:/nonexistent:"
                   "/usr/sbin/nologin"], "generated /etc/passwd")


def case_write_outside_workspace(s):
    """The root, /usr and /etc are read-only; the host is unchanged."""
    r = s.run(["--", "/bin/sh", "-c",
               "for p in /usr/mcp-x /etc/mcp-x /mcp-x /proc/mcp-x; do "
               "touch $p 2>/dev/null || echo denied $p; done"])
    eq(r.returncode, 0, "exit")
    eq(out(r), "denied /usr/mcp-x\ndenied /etc/mcp-x\ndenied /mcp-x\n"
       "denied /proc/mcp-x\n", "stdout")
    for p in ("/usr/mcp-x", "/etc/mcp-x", "/mcp-x"):
        expect(not os.path.exists(p), f"{p} appeared on the host")


def case_proc_sys(s):
    """/proc is pid-only: no /proc/sys, sysrq-trigger; host sysctls stay."""
    r = s.run(["--", "/bin/sh", "-c",
               "echo 60 > /proc/sys/vm/dirty_writeback_centisecs; "
               "echo b > /proc/sysrq-trigger; ls /proc"])
    eq(r.returncode, 0, "exit")
    eq(err(r).count("Directory nonexistent") +
       err(r).count("No such file"), 2, "two refused writes: " + err(r))
    names = out(r).split()
    expect("sys" not in names and "sysrq-trigger" not in names and
           "kcore" not in names, f"/proc shows {names}")
    pids = [n for n in names if n.isdigit()]
    eq(sorted(int(p) for p in pids)[:2], [1, 2], "only sandbox pids")


def case_setuid_binaries(s):
    """Setuid-root binaries (mount, su) do not gain root: nosuid + NNP."""
    r = s.run(["--", "/usr/bin/mount", "-t", "tmpfs", "none", "/tmp"])
    eq(r.returncode, 32, "mount exit")
    expect("must be superuser" in err(r), err(r))
    r = s.run(["--", "/bin/su", "-c", "id"])
    eq(r.returncode, 1, "su exit")
    r = s.run(["--", "/bin/sh", "-c",
               "grep -E '^(CapEff|CapPrm|CapBnd|CapAmb|NoNewPrivs|"
               "Seccomp):' /proc/self/status"])
    eq(out(r).split(), ["CapPrm:", "0000000000000000", "CapEff:",
                        "0000000000000000", "CapBnd:", "0000000000000000",
                        "CapAmb:", "0000000000000000", "NoNewPrivs:", "1",
                        "Seccomp:", "2"], "status")


def case_root_owned_file(s):
    """A root-owned file in a writable workspace stays unwritable."""
    if os.geteuid() != 0:
        print("skip: needs a root-owned file (run as root)")
        sys.exit(SKIP)
    ws = s.workspace()
    for name, mode in (("root644.txt", 0o644), ("root660.txt", 0o660)):
        p = os.path.join(ws, name)
        with open(p, "w") as f:
            f.write("orig\n")
        os.chmod(p, mode)
    r = s.run(["--workspace", ws, "--", "/bin/sh", "-c",
               "echo pwned > root644.txt; echo pwned > root660.txt; "
               "echo ok > mine.txt; cat mine.txt"])
    eq(r.returncode, 0, "exit")
    eq(out(r), "ok\n", "own file written")
    eq(err(r).count("Permission denied"), 2, err(r))
    for name in ("root644.txt", "root660.txt"):
        with open(os.path.join(ws, name)) as f:
            eq(f.read(), "orig\n", name)
    st = os.stat(os.path.join(ws, "mine.txt"))
    eq((st.st_uid, st.st_gid), (s.kuid, s.kuid), "new file's host owner")


def case_readonly_workspace(s):
    """A read-only workspace refuses writes (EROFS)."""
    ws = s.workspace()
    r = s.run(["--workspace", ws, "--read-only", "--", "/bin/sh", "-c",
               "pwd; touch x 2>&1"])
    eq(out(r), "/workspace\ntouch: cannot touch 'x': Read-only file "
       "system\n", "stdout")
    eq(os.listdir(ws), [], "host workspace")


def case_leaked_fds(s):
    """An fd the server holds (without CLOEXEC) never reaches inside."""
    fd = os.open("/etc/hostname", os.O_RDONLY)
    os.set_inheritable(fd, True)
    sock = socket.socket()
    os.set_inheritable(sock.fileno(), True)
    try:
        r = s.run(s.probe_args() + ["--", "/opt/probe/sandbox-probe", "fds"],
                  pass_fds=(fd, sock.fileno()))
    finally:
        os.close(fd)
        sock.close()
    eq(out(r), "fds 0 1 2\n", "open fds inside")


def case_tiocsti_terminal(s):
    """Run from a terminal: the sandbox gets no tty and cannot type into it."""
    master, slave = pty.openpty()
    try:
        r = s.run(s.probe_args() + ["--", "/bin/sh", "-c",
                  "tty; /opt/probe/sandbox-probe syscalls | grep tio"],
                  stdin=slave)
        os.set_blocking(master, False)
        try:
            typed = os.read(master, 100)
        except BlockingIOError:
            typed = b""
    finally:
        os.close(master)
        os.close(slave)
    eq(out(r), "not a tty\ntiocsti EPERM\ntiocsti_high_bits EPERM\n"
       "tioclinux EPERM\n", "stdout")
    eq(typed, b"", "bytes typed into the terminal")


def case_network(s):
    """No route out, no host loopback service, no DNS."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    port = srv.getsockname()[1]
    code = ("import socket,errno\n"
            "def t(a):\n"
            " s=socket.socket()\n"
            " try: s.connect(a); return 'connected'\n"
            " except OSError as e: return errno.errorcode[e.errno]\n"
            f"print(t(('127.0.0.1',{port})), t(('1.1.1.1',443)))\n"
            "try: socket.getaddrinfo('example.com',80); print('resolved')\n"
            "except socket.gaierror as e: print('gaierror', e.errno)\n")
    try:
        r = s.run(["--", "/usr/bin/python3", "-I", "-c", code])
    finally:
        srv.close()
    tcp = "EACCES" if s.abi >= 4 else "ENETUNREACH"
    eq(out(r), f"{tcp} {tcp}\ngaierror -3\n", "stdout")


def case_fork_bomb(s):
    """A fork bomb hits RLIMIT_NPROC, dies at the deadline, leaves nothing."""
    m = s.marker(1)
    r = s.run(["--timeout", "2000", "--nproc", "32", "--", "/bin/sh", "-c",
               f"b(){{ b|b& }}; b; sleep {m}"], timeout=30)
    eq(r.returncode, 124, "timed out")
    expect("Cannot fork" in err(r), "NPROC refused forks")
    eq(s.marked(m), [], "processes left")


def case_memory_balloon(s):
    """A 10 GB allocation fails inside (RLIMIT_AS); the server is fine."""
    r = s.run(["--memory", str(1 << 30), "--", "/usr/bin/python3", "-I",
               "-c", "b=bytearray(10**10)"])
    eq(r.returncode, 1, "exit")
    expect(err(r).rstrip().endswith("MemoryError"), err(r))


def case_cpu_spin_deadline(s):
    """A busy loop is killed at the wall deadline (exit 124)."""
    t0 = time.monotonic()
    r = s.run(["--timeout", "1000", "--", "/bin/sh", "-c",
               "while :; do :; done"], timeout=30)
    dt = time.monotonic() - t0
    eq(r.returncode, 124, "timed out")
    expect(1.0 <= dt < 10.0, f"killed after {dt:.2f} s")


def case_cpu_rlimit(s):
    """RLIMIT_CPU: SIGXCPU after one CPU second (exit 128+24)."""
    r = s.run(["--cpu", "1", "--timeout", "30000", "--", "/bin/sh", "-c",
               "while :; do :; done"], timeout=60)
    eq(r.returncode, 128 + int(signal.SIGXCPU), "killed by SIGXCPU")


def case_daemons(s):
    """setsid, nohup and double-fork children die with the program."""
    m = [s.marker(k) for k in range(5)]
    r = s.run(["--", "/bin/sh", "-c",
               f"setsid sleep {m[0]} & nohup sleep {m[1]} >/dev/null 2>&1 & "
               f"(sleep {m[2]} &); echo started"])
    eq((r.returncode, out(r)), (0, "started\n"), "result")
    r = s.run(["--timeout", "500", "--", "/bin/sh", "-c",
               f"setsid sleep {m[3]} & exec sleep {m[4]}"], timeout=30)
    eq(r.returncode, 124, "timed out")
    for x in m:
        eq(s.marked(x), [], f"sleep {x} left behind")


def case_output_flood(s):
    """50 MB of output: 8000 bytes kept, every byte counted, exit 0."""
    r = s.run(["--", "/usr/bin/head", "-c", "50000000", "/dev/zero"])
    eq(r.returncode, 0, "exit")
    eq(len(r.stdout), 8000, "kept")
    eq(err(r), "[mcp-sandbox: stdout truncated: 8000 of 50000000 bytes "
       "kept]\n", "stderr")
    r = s.run(["--stderr-cap", "100", "--", "/bin/sh", "-c",
               "head -c 30000000 /dev/zero >&2; echo done"])
    eq((r.returncode, out(r)), (0, "done\n"), "result")
    eq(r.stderr, b"\0" * 100 + b"[mcp-sandbox: stderr truncated: 100 of "
       b"30000000 bytes kept]\n", "stderr")
    r = s.run(["--timeout", "1000", "--", "/usr/bin/yes"], timeout=30)
    eq((r.returncode, len(r.stdout)), (124, 8000), "yes until deadline")


def case_server_killed(s):
    """SIGKILL of the launcher mid-run: the whole sandbox dies with it."""
    m = s.marker(7)
    p = subprocess.Popen(s.prefix() + [s.cli, "exec", "--", "/bin/sh", "-c",
                         f"setsid sleep {m} & sleep {m}"],
                         stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    # both sleeps run: counted by their exact command line, since the
    # shell's forked copies carry the marker too until each execs (a
    # count of all marked pids rises and dips while they do)
    def sleeps():
        got = []
        for pid in s.marked(m):
            try:
                with open("/proc/%d/cmdline" % pid, "rb") as f:
                    if f.read() == b"sleep\0%s\0" % m.encode():
                        got.append(pid)
            except OSError:
                pass
        return got
    expect(poll_until(lambda: len(sleeps()) == 2, attempts=500,
                      pause_s=0.01),
           "sandbox did not start: marked %r" % s.marked(m))
    p.kill()
    p.wait()
    if not poll_until(lambda: not s.marked(m), attempts=500, pause_s=0.01):
        raise Fail(f"orphans left: {s.marked(m)}")


def case_env_leak(s):
    """Nothing of the launcher's environment is inherited."""
    env = dict(os.environ, AWS_SECRET_ACCESS_KEY="leak", MCP_TOKEN="leak",
               LD_LIBRARY_PATH="/nonexistent", PYTHONPATH="/nonexistent")
    r = s.run(["--", "/usr/bin/env"], env=env)
    eq(out(r), "PATH=/usr/local/bin:/usr/bin:/bin\nLANG=C.UTF-8\n"
       "HOME=/tmp\nTMPDIR=/tmp\n", "environment")
    r = s.run(["--env", "A=1", "--", "/usr/bin/env"], env=env)
    eq(out(r), "A=1\n", "explicit environment only")


def case_isolation_unavailable(s):
    """No user namespaces: the run refuses (125) and nothing runs."""
    marker = os.path.join(s.tmp, "ran-unsandboxed")
    probe = os.path.join(s.probe_dir, "sandbox-probe")
    r = subprocess.run(s.prefix() + [probe, "deny-userns", "--", s.cli,
                       "exec", "--", "/usr/bin/touch", marker],
                       capture_output=True, timeout=60)
    eq(r.returncode, 125, "exit")
    expect(err(r).startswith("mcp-sandbox exec: not run: sandbox clone "
           "failed: creating the namespaces: Operation not permitted"),
           err(r))
    expect(not os.path.exists(marker), "the program ran unsandboxed")
    if os.geteuid() == 0 and not s.unpriv:
        # user.max_user_namespaces=0, set in a parent user namespace only.
        r = subprocess.run([probe, "userns-limit", "--", s.cli, "exec", "--",
                            "/usr/bin/touch", marker],
                           capture_output=True, timeout=60)
        eq(r.returncode, 125, "exit under max_user_namespaces=0")
        # a user namespace of its own that allows none: another sandbox
        # around us, as srt or bubblewrap --disable-userns make (issue 26)
        expect(err(r).startswith("mcp-sandbox exec: not run: sandbox clone "
               "failed: creating the namespaces: No space left on device "
               "(likely cause: this server runs inside another sandbox (a "
               "user namespace of its own whose user.max_user_namespaces "
               "is 0"), err(r))
        expect(not os.path.exists(marker), "ran unsandboxed")


def case_child_dies_early(s):
    """The sandbox child dies before it is released: a clean refusal (125),
    never a SIGPIPE (141) of the launcher, repeatedly."""
    marker = os.path.join(s.tmp, "ran-unsandboxed")
    probe = os.path.join(s.probe_dir, "sandbox-probe")
    for _ in range(20):
        r = subprocess.run(s.prefix() + [probe, "deny-dupfd", "--", s.cli,
                           "exec", "--", "/usr/bin/touch", marker],
                           capture_output=True, timeout=60)
        eq(r.returncode, 125, "exit")
        expect(err(r).startswith("mcp-sandbox exec: not run: sandbox "),
               err(r))
    expect(not os.path.exists(marker), "ran unsandboxed")


def case_proc_masked(s):
    """A masked /proc (as in Docker) makes the proc stage refuse: 125."""
    if s.unpriv or os.geteuid() != 0:
        print("skip: needs root to build a masked /proc")
        sys.exit(SKIP)
    marker = os.path.join(s.tmp, "ran-unsandboxed")
    r = subprocess.run(["unshare", "-m", "--propagation", "private",
                        "/bin/sh", "-c", "mount --bind /dev/null /proc/uptime"
                        f" && exec {s.cli} exec -- /usr/bin/touch {marker}"],
                       capture_output=True, timeout=60)
    eq(r.returncode, 125, "exit")
    expect(err(r).startswith("mcp-sandbox exec: not run: sandbox proc "
                             "failed: /proc: Operation not permitted"), err(r))
    expect(not os.path.exists(marker), "ran unsandboxed")


def case_symlink_escape(s):
    """Symlinks made in the workspace resolve inside the sandbox only."""
    ws = s.workspace()
    before = s.snapshot()
    r = s.run(["--workspace", ws, "--", "/bin/sh", "-c",
               "ln -s /etc/passwd l; echo x >> l; "
               "ln -s ../../../../../etc/shadow s; cat s"])
    eq(r.returncode, 1, "exit")
    eq(err(r), "/bin/sh: 1: cannot create l: Permission denied\n"
       "cat: s: No such file or directory\n", "stderr")
    eq(s.snapshot(), before, "host files and sysctls")


def case_tmp_full(s):
    """/tmp is a size-capped tmpfs: ENOSPC at the cap."""
    r = s.run(["--tmp", str(1 << 20), "--", "/bin/sh", "-c",
               "dd if=/dev/zero of=/tmp/big bs=65536 count=100 2>&1 | "
               "head -1"])
    eq(out(r), "dd: error writing '/tmp/big': No space left on device\n",
       "stdout")


def case_file_size_limit(s):
    """RLIMIT_FSIZE: SIGXFSZ past the limit (exit 128+25)."""
    r = s.run(["--fsize", "1000", "--", "/bin/sh", "-c",
               "exec head -c 5000 /dev/zero > /tmp/f"])
    eq(r.returncode, 128 + int(signal.SIGXFSZ), "killed by SIGXFSZ")


def case_nested_userns(s):
    """unshare(1) cannot make a nested user namespace."""
    r = s.run(["--", "/usr/bin/unshare", "-Ur", "/bin/true"])
    eq(r.returncode, 1, "exit")
    eq(err(r), "unshare: unshare failed: Operation not permitted\n", "stderr")


def case_identity(s):
    """Hostname, ids, cwd and stdin bytes as documented."""
    ws = s.workspace()
    r = s.run(["--workspace", ws, "--stdin", "--", "/bin/sh", "-c",
               "hostname; id; pwd; cat"], input_bytes=b"in\x00put")
    eq(r.stdout, b"sandbox\nuid=1000(sandbox) gid=1000(sandbox) "
       b"groups=1000(sandbox)\n/workspace\nin\x00put", "stdout")


def case_toolchains(s):
    """python3 -I, node and gcc (compiled and run inside) all work."""
    r = s.run(["--", "/usr/bin/python3", "-I", "-c", "print(6*7)"])
    eq((r.returncode, out(r)), (0, "42\n"), "python3")
    if os.path.exists("/usr/bin/node"):
        r = s.run(["--", "/usr/bin/node", "-e", "console.log(6*7)"])
        eq((r.returncode, out(r)), (0, "42\n"), "node")
    r = s.run(["--", "/bin/sh", "-c", "cd /tmp && printf '#include <stdio.h>"
               "\\nint main(void){puts(\"cc ok\");return 0;}\\n' > a.c && "
               "gcc a.c -o a && ./a"], timeout=120)
    eq((r.returncode, out(r)), (0, "cc ok\n"), "gcc")


def case_fail_closed_bad_request(s):
    """A program outside the mounts (its execve inside fails), or a bad
    bind, is refused (125)."""
    r = s.run(["--", "/root/evil"])
    eq(r.returncode, 125, "program outside")
    expect("sandbox exec failed: No such file or directory" in err(r), err(r))
    r = s.run(["--", "/dev/null"])
    eq(r.returncode, 125, "a device as the program")
    expect("sandbox exec failed: Permission denied" in err(r), err(r))
    r = s.run(["--bind", "/etc:/usr/etc", "--", "/bin/true"])
    eq(r.returncode, 125, "bind on a reserved path")
    r = s.run(["--nofile", "x", "--", "/bin/true"])
    eq(r.returncode, 2, "bad flag")


# issue 10: the perimeter, inside the sandbox ---------------------------

def case_setid_workspace(s):
    """No set-id file leaves a sandbox: copies of setuid binaries lose the
    bit, chmod u+s/g+s fail, and the host workspace holds nothing set-id."""
    ws = s.workspace()
    py = ("import os\n"
          "for m in (0o4755, 0o2755, 0o6755):\n"
          " try: os.chmod('su', m); print('set', oct(m))\n"
          " except OSError as e: print('refused', oct(m), e.errno)\n"
          "try: os.open('new', os.O_WRONLY | os.O_CREAT, 0o4755)\n"
          "except OSError as e: print('refused new', e.errno)\n")
    r = s.run(["--workspace", ws, "--", "/bin/sh", "-c",
               "cp /bin/su su; cp -p /bin/su su2; chmod u+s su; "
               "chmod g+s su; chmod 4755 su2; "
               f"/usr/bin/python3 -I -c \"{py}\"; ls -l su su2 | cut -c1-10"])
    eq(out(r), "refused 0o4755 1\nrefused 0o2755 1\nrefused 0o6755 1\n"
       "refused new 1\n-rwxr-xr-x\n-rwxr-xr-x\n", "stdout")
    # cp -p quietly drops the bits it may not set; chmod(1) is refused
    eq(err(r), "chmod: changing permissions of 'su': Operation not "
       "permitted\n" * 2 + "chmod: changing permissions of 'su2': "
       "Operation not permitted\n", "stderr")
    for root, dirs, files in os.walk(ws):
        for n in dirs + files:
            st = os.lstat(os.path.join(root, n))
            expect(st.st_mode & 0o6000 == 0,
                   f"{n} left with mode {oct(st.st_mode)}")


ASIDE = r"\.from-sandbox-[0-9a-f]{16}"


def git_repo(s, ws):
    """A repository made by git init on the host, with one commit, its
    files the workspace owner's (65534 when the suite runs as root)."""
    env = git_env(s)
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "init"]):
        subprocess.run(["git", "-c", "safe.directory=*", "-C", ws] + args,
                       env=env, check=True,
                       capture_output=True)
    if os.geteuid() == 0:
        for d, ds, fs in os.walk(ws):
            for n in [d] + [os.path.join(d, x) for x in ds + fs]:
                os.lchown(n, NOBODY, NOBODY)


def git_env(s):
    home = os.path.join(s.tmp, "home")
    os.makedirs(home, exist_ok=True)
    return {"PATH": "/usr/bin:/bin", "HOME": home,
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "o",
            "GIT_AUTHOR_EMAIL": "o@x", "GIT_COMMITTER_NAME": "o",
            "GIT_COMMITTER_EMAIL": "o@x"}


def moved_note(*paths):
    """The note of exec for the paths moved aside, as a regex."""
    return ("mcp-sandbox exec: protected names appeared in the workspace: "
            + "; ".join(re.escape(p) + " moved to " + re.escape(p) + ASIDE
                        for p in paths)
            + re.escape(" (--protect, --no-protect)") + "\n")


def case_protected_git(s):
    """In a repository git init made, git add and git commit work inside;
    what makes git run code on the host (.git/config, hooks/, info/) is
    read-only over itself: written, renamed or replaced, it fails. A .hg
    the run makes is moved aside; a symlinked protected name is refused;
    --no-protect turns it off."""
    if not shutil.which("git"):
        print("skip: no git")
        sys.exit(SKIP)
    ws = s.workspace()
    with open(os.path.join(ws, "a"), "w") as f:
        f.write("a\n")
    git_repo(s, ws)
    with open(os.path.join(ws, ".git", "config")) as f:
        config = f.read()
    attack = ("export HOME=/tmp GIT_AUTHOR_NAME=s GIT_AUTHOR_EMAIL=s@x "
              "GIT_COMMITTER_NAME=s GIT_COMMITTER_EMAIL=s@x; "
              "echo b > b && git add b && git commit -qm sb && echo committed;"
              " printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' "
              ">> .git/config; echo x > .git/hooks/post-checkout; "
              "mv .git/hooks .git/h; mv .git/info .git/i; mv .git/config c; "
              "rm -f .git/config; mkdir .hg; echo done")
    r = s.run(["--workspace", ws, "--", "/bin/sh", "-c", attack])
    eq(out(r), "committed\ndone\n", "stdout")
    lines = err(r).splitlines()
    eq(lines[:-1], [
        "/bin/sh: 1: cannot create .git/config: Read-only file system",
        "/bin/sh: 1: cannot create .git/hooks/post-checkout: Read-only "
        "file system",
        "mv: cannot move '.git/hooks' to '.git/h': Device or resource busy",
        "mv: cannot move '.git/info' to '.git/i': Device or resource busy",
        "mv: cannot move '.git/config' to 'c': Device or resource busy",
        "rm: cannot remove '.git/config': Device or resource busy"],
       "refusals")
    expect(re.fullmatch(moved_note(".hg"), lines[-1] + "\n"), lines[-1])
    with open(os.path.join(ws, ".git", "config")) as f:
        eq(f.read(), config, ".git/config on the host")
    expect("post-checkout" not in os.listdir(os.path.join(ws, ".git",
                                                          "hooks")), "hook")
    log = subprocess.run(["git", "-c", "safe.directory=*", "-C", ws, "log",
                          "--format=%s"],
                         env=git_env(s), capture_output=True, text=True)
    eq(log.stdout, "sb\ninit\n", "the sandbox's commit, seen on the host")
    left = sorted(os.listdir(ws))
    eq(left[:3], [".git", ".hg" + left[1][3:], "a"], "workspace")
    expect(re.fullmatch(r"\.hg" + ASIDE, left[1]), left[1])
    shutil.rmtree(os.path.join(ws, left[1]))
    # a protected name that is a symlink cannot be kept read-only: refused
    os.symlink("/etc", os.path.join(ws, ".svn"))
    r = s.run(["--workspace", ws, "--protect", ".svn", "--", "/bin/true"])
    eq(r.returncode, 125, "symlinked protected name")
    expect("is a symlink or neither a file nor a dir" in err(r), err(r))
    os.unlink(os.path.join(ws, ".svn"))
    # so is a symlinked entry of .git
    hooks = os.path.join(ws, ".git", "hooks")
    os.rename(hooks, hooks + ".real")
    os.symlink("hooks.real", hooks)
    r = s.run(["--workspace", ws, "--", "/bin/true"])
    eq(r.returncode, 125, "symlinked .git/hooks")
    expect("is a symlink or neither a file nor a dir" in err(r), err(r))
    os.unlink(hooks)
    os.rename(hooks + ".real", hooks)
    # the switch: no protection at all
    r = s.run(["--workspace", ws, "--no-protect", "--", "/bin/sh", "-c",
               "echo '# mine' >> .git/config && echo written"])
    eq(out(r), "written\n", "--no-protect")


def case_protected_created(s):
    """What a run makes where a protected path named nothing at its start
    (.git/commondir, .git/hooks/, a submodule's config, a top .git, a
    symlink as .hg) is renamed aside when the run ends, the entry itself,
    to NAME.from-sandbox-<64 random bits>; a read-only workspace, or one
    without protection, keeps what it has."""
    if not shutil.which("git"):
        print("skip: no git")
        sys.exit(SKIP)
    ws = s.workspace()
    with open(os.path.join(ws, "a"), "w") as f:
        f.write("a\n")
    git_repo(s, ws)
    git = os.path.join(ws, ".git")
    shutil.rmtree(os.path.join(git, "hooks"))
    sub = os.path.join(git, "modules", "m")
    os.makedirs(os.path.join(sub, "hooks"))
    if os.geteuid() == 0:
        for d in (os.path.join(git, "modules"), sub,
                  os.path.join(sub, "hooks")):
            os.chown(d, NOBODY, NOBODY)
    make = ("echo /workspace/evil > .git/commondir && mkdir .git/hooks && "
            "echo x > .git/hooks/pre-commit && "
            "echo '[core]' > .git/modules/m/config && echo made")
    r = s.run(["--workspace", ws, "--", "/bin/sh", "-c", make])
    eq((r.returncode, out(r)), (0, "made\n"), "the run")
    expect(re.fullmatch(moved_note(".git/commondir", ".git/hooks",
                                   ".git/modules/m/config"), err(r)), err(r))
    for d, n in ((git, "commondir"), (git, "hooks"), (sub, "config")):
        expect(not os.path.lexists(os.path.join(d, n)), f"{n} left")
        aside = [x for x in os.listdir(d)
                 if re.fullmatch(re.escape(n) + ASIDE, x)]
        eq(len(aside), 1, f"{n} moved aside: {os.listdir(d)}")
    # a top .git and a symlink as .hg (whose target stays untouched)
    shutil.rmtree(git)
    r = s.run(["--workspace", ws, "--", "/bin/sh", "-c",
               "mkdir .git && echo '[core]' > .git/config && ln -s /etc .hg"])
    eq(r.returncode, 0, err(r))
    expect(re.fullmatch(moved_note(".git", ".hg"), err(r)), err(r))
    left = sorted(os.listdir(ws))
    eq(len(left), 3, f"workspace {left}")
    expect(left[0] == "a" and re.fullmatch(r"\.git" + ASIDE, left[1]) and
           re.fullmatch(r"\.hg" + ASIDE, left[2]) or
           re.fullmatch(r"\.git" + ASIDE, left[0]) and
           re.fullmatch(r"\.hg" + ASIDE, left[1]) and left[2] == "a", left)
    for n in left:
        if n.startswith(".hg"):
            eq(os.readlink(os.path.join(ws, n)), "/etc", "the link itself")
            os.unlink(os.path.join(ws, n))
        elif n.startswith(".git"):
            shutil.rmtree(os.path.join(ws, n))
    # without protection the run's .git stays; read-only, none is made
    r = s.run(["--workspace", ws, "--no-protect", "--", "/bin/sh", "-c",
               "mkdir .git"])
    eq((r.returncode, err(r)), (0, ""), "--no-protect")
    expect(os.path.isdir(os.path.join(ws, ".git")), ".git kept")
    os.rmdir(os.path.join(ws, ".git"))
    r = s.run(["--workspace", ws, "--read-only", "--", "/bin/sh", "-c",
               "mkdir .git"])
    # (LANG=C.UTF-8 inside: coreutils quotes with U+2018/U+2019)
    eq((r.returncode, err(r)), (1, "mkdir: cannot create directory "
       "\u2018.git\u2019: Read-only file system\n"), "a read-only workspace")
    eq(os.listdir(ws), ["a"], "workspace after")


def case_protected_host_git(s):
    """A .git a sandbox makes at the top, with core.fsmonitor and a hook
    (post-index-change) that would write a marker, never runs on the host:
    the owner's git status after the run finds no repository (moved
    aside). Without protection the same .git does run them (so the test
    would see it). With a root server the sandboxes' files are 65534's:
    put back, root's git refuses it (dubious ownership)."""
    if not shutil.which("git"):
        print("skip: no git")
        sys.exit(SKIP)
    marks = os.path.join(s.tmp, "marks")
    os.mkdir(marks)
    os.chmod(marks, 0o777)
    mark = os.path.join(marks, "ran")
    script = f"#!/bin/sh\\necho $0 >> {mark}\\n"
    make = ("git init -q . && printf '" + script + "' > .git/fsm && "
            "cp .git/fsm .git/hooks/post-index-change && "
            "chmod +x .git/fsm .git/hooks/post-index-change && "
            "git config core.fsmonitor .git/fsm && "
            "echo a > a && echo made")
    owner = NOBODY if os.geteuid() == 0 else os.geteuid()
    as_owner = [] if os.geteuid() != 0 else [
        "setpriv", f"--reuid={owner}", f"--regid={owner}", "--clear-groups"]

    def status(ws, prefix):
        env = git_env(s)
        os.chmod(env["HOME"], 0o777)
        return subprocess.run(prefix + ["git", "-C", ws, "status",
                                        "--porcelain"], env=env,
                              capture_output=True, text=True)

    for protect in (True, False):
        ws = s.workspace()
        r = s.run(["--workspace", ws] + ([] if protect else ["--no-protect"])
                  + ["--", "/bin/sh", "-c", "HOME=/tmp; " + make])
        eq((r.returncode, out(r)), (0, "made\n"), err(r))
        st = status(ws, as_owner)
        if protect:
            expect(re.fullmatch(moved_note(".git"), err(r)), err(r))
            expect(not os.path.lexists(os.path.join(ws, ".git")), ".git")
            expect("not a git repository" in st.stderr, st.stderr)
            expect(not os.path.exists(mark), "the fsmonitor or hook ran")
            aside = [n for n in os.listdir(ws) if n.startswith(".git.")][0]
            if os.geteuid() == 0 and not s.unpriv:
                # the run's end never seen: root's git refuses it anyway
                os.rename(os.path.join(ws, aside), os.path.join(ws, ".git"))
                st = status(ws, [])
                expect("dubious ownership" in st.stderr, st.stderr)
                expect(not os.path.exists(mark), "ran for root")
        else:
            # the control: left in place, the owner's git runs them
            eq(err(r), "", "no note")
            expect(os.path.exists(mark), f"nothing ran: {st.stderr}")
            os.unlink(mark)


def case_memory_ipc(s):
    """--memory 256 MiB: SysV shm holds at most that much in all (root: the
    ipc namespace's shmall/shmmax; unprivileged: SysV IPC is refused), a
    1 GiB segment is refused, memfd does not exist (but where the run's
    memory cgroup counts its pages: tests/cgroup)."""
    mem = str(256 << 20)
    # the run's memory cgroup (where there is one) far above: this case
    # is about the ipc namespace's own limits (tests/cgroup: the cgroup's)
    mem = [mem, "--memory-total", str(1 << 30)]
    r = s.run(["--memory"] + mem + s.probe_args() +
              ["--", "/opt/probe/sandbox-probe", "shm", "64"])
    root = os.geteuid() == 0 and not s.unpriv
    eq(out(r), "shm_held_mb 256 ENOSPC\n" if root else
       "shm_held_mb 0 ENOSYS\n", "64 MiB segments")
    r = s.run(["--memory"] + mem + s.probe_args() +
              ["--", "/opt/probe/sandbox-probe", "shm", "1024"])
    eq(out(r), "shm_held_mb 0 EINVAL\n" if root else
       "shm_held_mb 0 ENOSYS\n", "a 1 GiB segment")
    r = s.run(["--memory"] + mem + ["--", "/usr/bin/python3", "-I", "-c",
               "import os\ntry: os.memfd_create('x')\n"
               "except OSError as e: print(e.errno)"])
    if not s.memory_cgroup():
        eq(out(r), "38\n", "memfd_create: ENOSYS")
    else:
        eq(out(r), "", "memfd_create: counted by the cgroup")
    # messages: 16 queues at most (SB_IPC_MSGMNI), root only
    r = s.run(["--", "/usr/bin/python3", "-I", "-c",
               "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
               "n = 0\nwhile n < 100 and libc.msgget(0, 0o1600) >= 0:"
               " n += 1\nprint(n, ctypes.get_errno())"])
    eq(out(r), "16 28\n" if root else "0 38\n", "message queues")


def case_inotify_pool(s):
    """One sandbox exhausting its inotify instances leaves the next one's
    inotify_init1 working: each has its share (16) of the per-uid pool."""
    ws = s.workspace()
    flag = os.path.join(ws, "held")
    hold = subprocess.Popen(
        s.prefix() + [s.cli, "exec", "--timeout", "60000", "--workspace",
                      ws] + s.probe_args() +
        ["--", "/opt/probe/sandbox-probe", "inotify-hold",
         "/workspace/held"], stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    try:
        poll_until(lambda: os.path.exists(flag) or hold.poll() is not None,
                   attempts=3000, pause_s=0.01)
        with open(flag) as f:
            eq(f.read(), "16 EMFILE\n", "instances the first sandbox got")
        r = s.run(s.probe_args() + ["--", "/opt/probe/sandbox-probe",
                                    "inotify-one"])
        eq(out(r), "inotify_init1 ok\n", "the next sandbox's inotify")
    finally:
        hold.kill()
        hold.wait()


def case_rlimits_explicit(s):
    """A server started with generous limits gives none of them away:
    every rlimit inside is the sandbox's own."""
    import resource

    def generous():
        # as much as this machine lets us: unlimited where we may raise
        # the hard limit (CAP_SYS_RESOURCE), else soft up to the hard one
        for res in range(16):  # RLIMIT_NLIMITS
            try:
                resource.setrlimit(res, (resource.RLIM_INFINITY,
                                         resource.RLIM_INFINITY))
            except (ValueError, OSError):
                hard = resource.getrlimit(res)[1]
                resource.setrlimit(res, (hard, hard))
    inner = s.prefix() + [s.cli, "exec", "--", "/bin/cat",
                          "/proc/self/limits"]
    r = subprocess.run(inner, capture_output=True, timeout=60,
                       preexec_fn=generous)
    eq(r.returncode, 0, "exit: " + r.stderr.decode())
    got = {}
    for line in out(r).splitlines()[1:]:
        f = line[26:].split()
        got[line[:26].strip()] = f[:2]
    want = {
        "Max cpu time": ["10", "11"],
        "Max file size": ["67108864", "67108864"],
        "Max data size": ["4294967296", "4294967296"],
        "Max stack size": ["8388608", "8388608"],
        "Max core file size": ["0", "0"],
        "Max resident set": ["4294967296", "4294967296"],
        # above the cgroup's pids.max where one holds (it refuses first)
        "Max processes": ["66", "66"] if s.check_ok("cgroup pids") else
        ["64", "64"],
        "Max open files": ["256", "256"],
        "Max locked memory": ["65536", "65536"],
        "Max address space": ["4294967296", "4294967296"],
        "Max file locks": ["256", "256"],
        "Max pending signals": ["1024", "1024"],
        "Max msgqueue size": ["819200", "819200"],
        "Max nice priority": ["0", "0"],
        "Max realtime priority": ["0", "0"],
        "Max realtime timeout": ["0", "0"],
    }
    eq(got, want, "/proc/self/limits")


def case_host_info(s):
    """pid 1 shows nothing of the launcher: its command line (which names
    host paths) and name are the sandbox's; the mount table names no host
    path but the workspace's and the binds' own (see sandbox/README.md);
    /proc/self/cgroup names no cgroup of the launcher's (where the run has
    a cgroup of its own, its namespace's root is that cgroup: "/")."""
    ws = s.workspace()
    secret = "/nonexistent/secret-token-" + s.marker(5)
    r = s.run(["--workspace", ws, "--env", f"TOKEN_FILE={secret}",
               "--env", "PATH=/usr/bin:/bin", "--", "/bin/sh", "-c",
               "od -An -v -c /proc/1/cmdline | tr -d ' \\n'; echo; "
               "cat /proc/1/comm; cat /proc/1/environ 2>&1 | wc -c; "
               "cat /proc/self/cgroup; echo --; "
               "cat /proc/self/mountinfo"])
    eq(r.returncode, 0, "exit")
    lines = out(r).splitlines()
    eq(lines[0][:len("sandbox-init\\0")], "sandbox-init\\0", "cmdline")
    eq(set(lines[0][len("sandbox-init"):].split("\\0")), {""},
       "cmdline: zeros after the name")
    eq(lines[1], "sandbox-init", "comm")
    expect(s.cli not in out(r) and "exec" not in lines[0], "launcher argv")
    sep = lines.index("--")
    cgroups = lines[3:sep]
    expect(len(cgroups) > 0, "no /proc/self/cgroup lines")
    eq({ln.split(":", 2)[2] for ln in cgroups}, {"/"}, "cgroup paths")
    roots = set()
    for line in lines[sep + 1:]:
        f = line.split()
        roots.add(f[3])
    allowed = {"/", "/usr", "/etc/ld.so.cache", "/etc/alternatives",
               "/etc/localtime", "/etc/nsswitch.conf", "/null", "/zero",
               "/full", "/random", "/urandom", ws}
    expect(roots <= allowed, f"mount roots {sorted(roots - allowed)}")


CASES = {name[5:]: fn for name, fn in globals().items()
         if name.startswith("case_")}
# Cases that need root on the host side (they build the scene as root).
ROOT_ONLY = {"root_owned_file", "proc_masked"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--probe-dir", required=True)
    ap.add_argument("--unpriv", action="store_true",
                    help="run the CLI as uid 65534 (setpriv)")
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
            print("skip: this case builds its scene as root")
            return SKIP
        if not nobody_can("unshare", "-U", "true"):
            print("skip: unprivileged user namespaces are not allowed here")
            return SKIP
        for p in (a.cli, a.probe_dir):
            if not nobody_can("test", "-r", p):
                print(f"skip: {p} is not reachable by uid 65534")
                return SKIP
    s = Suite(a.cli, a.probe_dir, a.unpriv)
    before = s.snapshot()
    try:
        CASES[a.case](s)
        eq(s.snapshot(), before, "host sysctls/files after the case")
    except Fail as e:
        print(f"FAIL {a.case}: {e}")
        return 1
    finally:
        s.cleanup()
    print(f"PASS {a.case}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
