"""docker/seccomp.json against what the sandbox needs.

Static checks: the profile is Docker's format with a deny default; every
name is a real x86_64 system call (no typo silently allows nothing); every
call of the sandbox's own allow-list (sandbox/policy.c A() entries) and
every call its setup makes (SYS_* in sandbox/*.c, and the namespace,
mount and hostname calls) is allowed; the dangerous groups the sandbox
denies (P() entries) stay denied, except the setup calls.
Dynamic check (when strace is installed): `mcp-sandbox exec` under
strace -f makes no system call the profile would refuse.

usage: test_seccomp_profile.py REPO_ROOT [MCP_SANDBOX_BIN]"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = None
BIN = None
UNISTD = "/usr/include/x86_64-linux-gnu/asm/unistd_64.h"

# Calls newer than Debian 12's kernel headers (6.1) that the sandbox's
# allow-list names; libseccomp and Docker skip names they do not know.
NEWER_THAN_HEADERS = {"fchmodat2"}

# Calls the sandbox makes through libc wrappers while building a run.
SETUP = {"clone", "clone3", "unshare", "setns", "mount", "umount2",
         "pivot_root", "mount_setattr", "open_tree", "move_mount",
         "sethostname", "personality",
         "ioctl", "socket", "prctl", "seccomp", "capset", "setrlimit",
         "prlimit64", "setgroups", "setresuid", "setresgid", "execve",
         "wait4", "waitid", "pidfd_open", "pidfd_send_signal", "kill",
         "memfd_create", "eventfd2", "close_range", "openat2"}

# Denied whatever the sandbox does: no tool needs them in a container.
ALWAYS_DENIED = {"kexec_load", "kexec_file_load", "init_module",
                 "finit_module", "delete_module", "reboot", "bpf",
                 "perf_event_open", "ptrace", "process_vm_readv",
                 "process_vm_writev", "keyctl", "add_key", "request_key",
                 "userfaultfd", "io_uring_setup", "io_uring_enter",
                 "open_by_handle_at", "swapon", "swapoff", "acct",
                 "settimeofday", "clock_settime", "syslog", "iopl",
                 "ioperm", "fanotify_init", "kcmp", "pidfd_getfd"}


def read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


def sandbox_sources():
    d = os.path.join(ROOT, "sandbox")
    return "".join(read(os.path.join("sandbox", n))
                   for n in sorted(os.listdir(d)) if n.endswith(".c"))


class Profile(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.profile = json.loads(read("docker/seccomp.json"))
        cls.allowed = set()
        cls.names = []
        for rule in cls.profile["syscalls"]:
            cls.names += rule["names"]
            if rule["action"] == "SCMP_ACT_ALLOW" and "args" not in rule:
                cls.allowed |= set(rule["names"])
        policy = read("sandbox/policy.c")
        cls.sb_allow = set(re.findall(r"\bA\((\w+)\)", policy)) - {"n"}
        cls.sb_deny = set(re.findall(r"\bP\((\w+)\)", policy)) - {"n"}
        cls.sb_sys = set(re.findall(r"\bSYS_([a-z][a-z0-9_]*)", sandbox_sources()))

    def test_default_is_deny(self):
        self.assertEqual(self.profile["defaultAction"], "SCMP_ACT_ERRNO")
        self.assertIn("SCMP_ARCH_X86_64", self.profile["architectures"])

    def test_every_rule_has_a_reason(self):
        for rule in self.profile["syscalls"]:
            self.assertTrue(rule.get("comment"), rule["names"][:3])

    def test_no_name_twice(self):
        dup = sorted({n for n in self.names if self.names.count(n) > 1})
        self.assertEqual(dup, [])

    def test_every_name_is_a_real_syscall(self):
        if not os.path.exists(UNISTD):
            self.skipTest(UNISTD + " missing")
        with open(UNISTD, encoding="utf-8") as f:
            known = set(re.findall(r"#define __NR_(\w+)", f.read()))
        known |= NEWER_THAN_HEADERS
        self.assertEqual(sorted(set(self.names) - known), [])

    def test_the_sandbox_allow_list_is_allowed(self):
        self.assertGreater(len(self.sb_allow), 100)
        self.assertEqual(sorted(self.sb_allow - self.allowed), [])

    def test_the_sandbox_setup_calls_are_allowed(self):
        self.assertEqual(sorted((SETUP | self.sb_sys) - self.allowed), [])

    def test_dangerous_groups_stay_denied(self):
        self.assertGreater(len(self.sb_deny), 40)
        self.assertEqual(sorted((self.sb_deny - SETUP) & self.allowed), [])
        self.assertEqual(sorted(ALWAYS_DENIED & self.allowed), [])


class Traced(unittest.TestCase):
    """The sandbox at work under strace: nothing outside the profile."""

    def traced_calls(self, *argv):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "trace")
            # LeakSanitizer cannot run under ptrace (sanitizer builds)
            env = dict(os.environ)
            env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") +
                                   ":detect_leaks=0").lstrip(":")
            r = subprocess.run(["strace", "-f", "-qq", "-o", out, BIN, "exec",
                                "--", *argv], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=60, check=False,
                               env=env)
            self.assertEqual(r.returncode, 0, r.stderr.decode())
            with open(out, encoding="utf-8", errors="replace") as f:
                return set(re.findall(r"^(?:\d+\s+)?([a-z0-9_]+)\(", f.read(),
                                      re.M)), r.stdout

    def setUp(self):
        if BIN is None or shutil.which("strace") is None:
            self.skipTest("needs strace and the binary")
        r = subprocess.run([BIN, "exec", "--", "/bin/true"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           check=False)
        if r.returncode != 0:
            self.skipTest("the sandbox cannot run on this machine")

    def test_shell_run_stays_inside_the_profile(self):
        used, out = self.traced_calls("/bin/sh", "-c", "echo hi; ls / >/dev/null")
        self.assertEqual(out, b"hi\n")
        self.assertEqual(sorted(used - Profile.allowed), [])
        self.assertIn("pivot_root", used)

    def test_python_run_stays_inside_the_profile(self):
        if not os.path.exists("/usr/bin/python3"):
            self.skipTest("no python3")
        used, out = self.traced_calls("/usr/bin/python3", "-c", "print(6*7)")
        self.assertEqual(out, b"42\n")
        self.assertEqual(sorted(used - Profile.allowed), [])


if __name__ == "__main__":
    ROOT = sys.argv.pop(1)
    if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        BIN = sys.argv.pop(1)
    Profile.setUpClass()
    unittest.main(verbosity=2)
