#!/usr/bin/env python3
"""The .deb, built, installed into this machine, used, and removed.

  1. Configure a Release build with the Debian prefix (/usr), build the
     binary and the man page only, and run CPack.
  2. The package: its Depends (libc6 from dpkg-shlibdeps, libmicrohttpd12
     named because it is dlopen()ed), its conffiles, its files.
  3. Install it with apt-get (dpkg underneath, waiting for the dpkg lock a
     shared machine may hold) and run what it installed:
     `mcp-sandbox --version` and `--check`; an initialize over stdio; the
     example policy loads; man finds and renders mcp-sandbox(1), which names
     every flag of --help and of `exec --help`; bash completion offers the
     flags; `systemd-analyze verify` accepts the unit.
  4. The unit's SystemCallFilter= against reality: the installed server,
     under strace -f, serves calls of every sandboxed kind, and every
     system call it and its sandboxes made is in the filter's allowed set
     and none in its denied groups.
  5. Purge it: no file of it is left.

Needs root (dpkg). Skips (exit 77) when not root or when dpkg, cpack or
apt-get is missing. Runs under a lock: two runs on one machine queue.

usage: package_test.py SOURCE_DIR
"""
import fcntl
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

# the helpers the test scripts share: tests/lib
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from mcptest import Report  # noqa: E402

SKIP = 77
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
ENV = {"PATH": PATH, "LANG": "C.UTF-8", "HOME": "/root"}
LOCK = "/run/lock/mcp-sandbox-package-test.lock"
DPKG_LOCK_WAIT_S = 300  # another engineer's apt-get may hold the lock
PKG = "mcp-sandbox"
FILES = ["/usr/bin/mcp-sandbox", "/usr/libexec/mcp-sandbox/mcp-sandbox-init",
         "/usr/share/man/man1/mcp-sandbox.1.gz",
         "/usr/share/doc/mcp-sandbox/examples/policy.json",
         "/usr/share/doc/mcp-sandbox/copyright",
         "/etc/mcp-sandbox/policy.json", "/etc/default/mcp-sandbox",
         "/lib/systemd/system/mcp-sandbox.service",
         "/usr/lib/sysusers.d/mcp-sandbox.conf",
         "/usr/share/bash-completion/completions/mcp-sandbox"]
UNIT = "/lib/systemd/system/mcp-sandbox.service"

REPORT = Report("package")
check = REPORT.check
Step = REPORT.step


def sh(args, timeout=600, **kw):
    return subprocess.run(args, capture_output=True, timeout=timeout,
                          env=kw.pop("env", ENV), **kw)


def build_deb(src, work):
    bd = os.path.join(work, "build")
    r = sh(["cmake", "-S", src, "-B", bd, "-DCMAKE_BUILD_TYPE=Release",
            "-DCMAKE_INSTALL_PREFIX=/usr",
            # install needs only what it installs, not the test programs
            "-DCMAKE_SKIP_INSTALL_ALL_DEPENDENCY=ON"])
    check("configure", r.returncode == 0, r.stderr[-2000:])
    r = sh(["cmake", "--build", bd, "-j", str(os.cpu_count() or 2),
            "--target", "mcp-sandbox", "mcp-sandbox-init", "mcp_manpage"])
    check("build", r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:])
    out = os.path.join(work, "deb")
    r = sh(["cpack", "--config", os.path.join(bd, "CPackConfig.cmake"),
            "-B", out])
    check("cpack", r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:])
    debs = [f for f in os.listdir(out) if f.endswith(".deb")]
    check("one .deb", len(debs) == 1, debs)
    return os.path.join(out, debs[0])


def inspect_deb(deb, version):
    field = lambda f: sh(["dpkg-deb", "-f", deb, f]).stdout.decode().strip()
    check("Package", field("Package") == PKG, field("Package"))
    check("Version", field("Version") == version, field("Version"))
    deps = field("Depends")
    check("Depends: libmicrohttpd12 (dlopen'ed)",
          re.search(r"\blibmicrohttpd12 \(>= [0-9.]+\)", deps) is not None,
          deps)
    check("Depends: libc6 from shlibdeps",
          re.search(r"\blibc6 \(>= 2\.[0-9]+\)", deps) is not None, deps)
    check("Recommends the toolchains", "python3" in field("Recommends"),
          field("Recommends"))
    listing = sh(["dpkg-deb", "-c", deb]).stdout.decode()
    have = {ln.split()[-1].lstrip(".") for ln in listing.splitlines()
            if not ln.endswith("/")}
    check("files", sorted(have) == sorted(FILES), sorted(have))
    ctl = tempfile.mkdtemp()
    sh(["dpkg-deb", "-e", deb, ctl])
    with open(os.path.join(ctl, "conffiles")) as f:
        check("conffiles", f.read().split() ==
              ["/etc/mcp-sandbox/policy.json", "/etc/default/mcp-sandbox"])
    shutil.rmtree(ctl)


def apt(*args):
    return sh(["apt-get", "-y", "-q", "-o",
               f"DPkg::Lock::Timeout={DPKG_LOCK_WAIT_S}", *args],
              env=dict(ENV, DEBIAN_FRONTEND="noninteractive"),
              timeout=DPKG_LOCK_WAIT_S + 120)


def flags_of(text):
    return set(re.findall(r"^\s+(?:-[A-Za-z], )?(--[a-z][a-z-]+)", text,
                          re.M))


def use_installed(version):
    r = sh(["/usr/bin/mcp-sandbox", "--version"])
    check("--version", r.stdout.decode() == f"mcp-sandbox {version}\n",
          r.stdout)
    r = sh(["/usr/bin/mcp-sandbox", "--check"])
    out = r.stdout.decode()
    check("--check: exit 0", r.returncode == 0, out)
    check("--check: verdict", out.endswith(
        "verdict: the default policy can run here\n"), out[-300:])
    init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                       "params": {"protocolVersion": "2025-11-25",
                                  "capabilities": {}}})
    r = sh(["/usr/bin/mcp-sandbox"], input=(init + "\n").encode(),
           timeout=30)
    res = json.loads(r.stdout.decode().splitlines()[0])["result"]
    check("initialize over stdio", res["serverInfo"]["version"] == version,
          res)
    r = sh(["/usr/bin/mcp-sandbox", "--config", "/etc/mcp-sandbox/policy.json",
            "--print-config"])
    check("the example policy loads", r.returncode == 0, r.stderr)
    # man: found by name, renders without warnings, names every flag
    r = sh(["man", "-w", "mcp-sandbox"])
    check("man -w finds it", r.stdout.decode().strip() ==
          "/usr/share/man/man1/mcp-sandbox.1.gz", r.stdout + r.stderr)
    r = sh(["man", "--warnings", "-E", "UTF-8", "-l",
            "/usr/share/man/man1/mcp-sandbox.1.gz"],
           env=dict(ENV, MANWIDTH="100", MAN_KEEP_FORMATTING="0"))
    page = re.sub(r".\x08", "", r.stdout.decode())
    warn = [w for w in r.stderr.decode().splitlines()
            if "can't break line" not in w]   # a long synopsis line
    check("man renders without warnings", r.returncode == 0 and not warn,
          warn)
    main_flags = flags_of(sh(["/usr/bin/mcp-sandbox", "--help"]).stdout
                          .decode())
    exec_flags = flags_of(sh(["/usr/bin/mcp-sandbox", "exec", "--help"])
                          .stdout.decode())
    check("flags read from --help", len(main_flags) >= 30 and
          len(exec_flags) >= 16, (main_flags, exec_flags))
    undocumented = sorted(f for f in main_flags | exec_flags
                          if not re.search(re.escape(f) + r"\b", page))
    check("man documents every flag", not undocumented, undocumented)
    for sect in ("EXEC", "POLICY FILE", "EXIT STATUS", "EXAMPLES", "FILES"):
        check(f"man section {sect}", re.search(r"^" + sect + r"$", page,
                                               re.M) is not None)
    # bash completion: the installed file, as bash-completion loads it
    r = sh(["bash", "-c", ". /usr/share/bash-completion/completions/"
            "mcp-sandbox; COMP_WORDS=(mcp-sandbox exec --std); COMP_CWORD=2;"
            " _mcp_sandbox; echo ${COMPREPLY[*]}; COMP_WORDS=(mcp-sandbox "
            "--max-s); COMP_CWORD=1; _mcp_sandbox; echo ${COMPREPLY[*]}"])
    check("bash completion", r.stdout.decode() ==
          "--stdout-cap --stderr-cap --stdin\n--max-sandboxes --max-sessions\n",
          r.stdout + r.stderr)
    if shutil.which("systemd-analyze"):
        r = sh(["systemd-analyze", "verify", UNIT])
        check("systemd-analyze verify", r.returncode == 0 and
              r.stderr == b"", r.stderr)
    else:
        print("skip systemd-analyze: not installed")


def expand_filter(groups_and_names):
    """A SystemCallFilter= list -> the set of call names it means."""
    out, seen = set(), set()
    todo = list(groups_and_names)
    while todo:
        item = todo.pop()
        if not item.startswith("@"):
            out.add(item)
            continue
        if item in seen:
            continue
        seen.add(item)
        r = sh(["systemd-analyze", "syscall-filter", item])
        for ln in r.stdout.decode().splitlines()[1:]:
            ln = ln.strip()
            if ln and not ln.startswith("#"):
                todo.append(ln)
    return out


def unit_filter():
    allow, deny = [], []
    with open(UNIT) as f:
        for ln in f:
            m = re.match(r"SystemCallFilter=(~?)(.*)", ln.strip())
            if m:
                (deny if m.group(1) else allow).extend(m.group(2).split())
    return expand_filter(allow), expand_filter(deny)


def traced_server(work):
    """Every system call of the installed server and its sandboxes."""
    calls = [
        ("run_command", {"command": "ls", "args": ["-la", "/"]}),
        ("run_code", {"language": "python3", "code": "print(6*7)"}),
        ("run_code", {"language": "sh", "code": "echo hi | tr a-z A-Z"}),
        ("run_code", {"language": "c",
                      "code": "#include <stdio.h>\nint main(void){"
                              "puts(\"c\");return 0;}"}),
        # a stdio server may run these at once: nothing depends on order
        ("write_file", {"path": "a.txt", "content": "x"}),
        ("list_directory", {"path": "."}),
        ("calculate", {"expression": "2^100"}),
    ]
    if os.path.exists("/usr/bin/node"):
        calls.append(("run_code", {"language": "node",
                                   "code": "console.log(1+1)"}))
    lines = [{"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25",
                         "capabilities": {}}},
             {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    for i, (name, args) in enumerate(calls, 1):
        lines.append({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                      "params": {"name": name, "arguments": args}})
    trace = os.path.join(work, "trace")
    r = sh(["strace", "-f", "-qq", "-o", trace, "/usr/bin/mcp-sandbox"],
           input=("\n".join(json.dumps(x) for x in lines) + "\n").encode(),
           timeout=120)
    answers = [json.loads(ln) for ln in r.stdout.decode().splitlines()]
    bad = [a for a in answers if a.get("id") and
           (a.get("error") or a["result"].get("isError"))]
    check(f"{len(calls)} calls answered under strace, none failed",
          len(answers) == len(calls) + 1 and not bad, (bad, r.stderr[-800:]))
    with open(trace, errors="replace") as f:
        return set(re.findall(r"^(?:\d+\s+)?([a-z0-9_]+)\(", f.read(), re.M))


def check_filter(work):
    if not shutil.which("strace") or not shutil.which("systemd-analyze"):
        print("skip SystemCallFilter check: needs strace and systemd-analyze")
        return
    allowed, denied = unit_filter()
    check("the filter expands", len(allowed) > 300 and len(denied) > 20,
          (len(allowed), len(denied)))
    used = traced_server(work)
    check("strace saw the sandbox at work",
          {"unshare", "pivot_root", "seccomp", "execve"} <= used, used)
    check("every call made is allowed by SystemCallFilter=",
          sorted(used - allowed) == [], sorted(used - allowed))
    check("no call made is in a denied group",
          sorted(used & denied) == [], sorted(used & denied))


def main():
    src = os.path.abspath(sys.argv[1])
    if os.geteuid() != 0:
        print("skip: installing a .deb needs root")
        return SKIP
    for tool in ("dpkg-deb", "cpack", "apt-get", "dpkg-shlibdeps"):
        if not shutil.which(tool):
            print(f"skip: {tool} is not installed (tests/setup.sh --test)")
            return SKIP
    with open(os.path.join(src, "CMakeLists.txt")) as f:
        version = re.search(r"project\(mcp-sandbox VERSION ([0-9.]+)",
                            f.read()).group(1)
    lock = open(LOCK, "w")
    fcntl.flock(lock, fcntl.LOCK_EX)  # another run on this machine: queue
    work = tempfile.mkdtemp(prefix="mcp-pkg-")
    installed = False
    try:
        with Step("build the .deb"):
            deb = build_deb(src, work)
        if REPORT.failures:
            return 1
        with Step("inspect it"):
            inspect_deb(deb, version)
        with Step("install it (apt-get, dpkg)"):
            r = apt("install", "--no-install-recommends", deb)
            installed = r.returncode == 0
            check("installed", installed, r.stdout[-1500:] + r.stderr[-1500:])
            st = sh(["dpkg-query", "-W", "-f", "${Status} ${Version}", PKG])
            check("dpkg says installed", st.stdout.decode() ==
                  f"install ok installed {version}", st.stdout)
        if installed:
            with Step("use what it installed"):
                use_installed(version)
            with Step("SystemCallFilter= under strace"):
                check_filter(work)
    finally:
        if installed:
            with Step("purge it"):
                r = apt("purge", PKG)
                check("purged", r.returncode == 0, r.stderr[-1500:])
                left = [p for p in FILES + ["/etc/mcp-sandbox"]
                        if os.path.exists(p)]
                check("nothing left", not left, left)
        shutil.rmtree(work, ignore_errors=True)
        lock.close()
    return REPORT.end()


if __name__ == "__main__":
    sys.exit(main())
