"""A coding agent's ordinary day in a real repository (issue 26): the tools
driven as an assistant drives them, one call after another, in a git
clone: status, log, diff, search, read, a new file in a new directory, an
edit, a build and its test with make, then git add and git commit. Every
step works, or fails with a message that says what to do next. As root
(the workspace is the sandbox uid's) and, with --unpriv, as uid 65534.

usage: test_agent_day.py MCP_SANDBOX_BIN [--unpriv]"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from mcptest import AS_NOBODY, nobody_can  # noqa: E402

PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
NOBODY = 65534
MAKEFILE = """\
all: hello

hello: hello.c
\tcc -O1 -o hello hello.c

test: hello
\t./hello | grep -qx 'hello, world'
\t@echo tests passed
"""
HELLO = '#include <stdio.h>\nint main(void) { puts("hello, world"); }\n'


class Agent:
    def __init__(self, binary, ws, unpriv):
        pre = AS_NOBODY if unpriv else []
        self.p = subprocess.Popen(pre + [binary, "--workspace", ws,
                                         "--allow-command", "make",
                                         "--allow-command", "cc",
                                         "--timeout-ms", "60000"],
                                  stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL,
                                  env={"PATH": PATH, "LANG": "C.UTF-8"})
        self.id = 0
        self.rpc("initialize", {"protocolVersion": "2025-11-25",
                                "capabilities": {}})

    def rpc(self, method, params):
        self.id += 1
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.id,
                                       "method": method,
                                       "params": params}).encode() + b"\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            raise EOFError("the server closed stdout")
        return json.loads(line)["result"]

    def tool(self, name, **args):
        return self.rpc("tools/call", {"name": name, "arguments": args})

    def close(self):
        self.p.stdin.close()
        return self.p.wait(30)


failed = []


def check(what, ok, detail=""):
    print("%s %s" % ("ok  " if ok else "FAIL", what))
    if not ok:
        print("     %s" % str(detail)[:600])
        failed.append(what)


def out(r):
    return r.get("structuredContent", {}).get("stdout", "")


def text(r):
    return r["content"][0]["text"]


def git(ws, *args):
    subprocess.run(["git", "-C", ws] + list(args), check=True,
                   capture_output=True, env={"PATH": PATH, "HOME": ws,
                   "GIT_CONFIG_NOSYSTEM": "1"})


def day(binary, unpriv):
    tmp = tempfile.mkdtemp(prefix="mcp-agent-day-")
    ws = os.path.join(tmp, "repo")
    os.mkdir(ws)
    git(ws, "init", "-q", "-b", "main")
    git(ws, "config", "user.email", "dev@example.org")
    git(ws, "config", "user.name", "Dev")
    with open(os.path.join(ws, "Makefile"), "w") as f:
        f.write(MAKEFILE)
    with open(os.path.join(ws, "hello.c"), "w") as f:
        f.write(HELLO.replace("hello, world", "hello"))
    git(ws, "add", ".")
    git(ws, "commit", "-q", "-m", "start")
    # a root server's sandboxes run as 65534, an unprivileged one is it
    for root, dirs, files in os.walk(tmp):
        for n in dirs + files:
            os.lchown(os.path.join(root, n), NOBODY, NOBODY)
    os.chown(tmp, NOBODY, NOBODY)
    a = Agent(binary, ws, unpriv)
    try:
        r = a.tool("run_command", command="git", args=["status", "--short",
                                                        "--branch"])
        check("git status", out(r) == "## main\n", r)
        r = a.tool("run_command", command="git", args=["log", "--oneline"])
        check("git log", out(r).endswith(" start\n"), r)
        r = a.tool("search_files", content="puts", path=".")
        check("search finds the source", not r.get("isError") and
              "hello.c" in json.dumps(r), r)
        r = a.tool("read_file", path="hello.c")
        check("read_file", r.get("structuredContent", {}).get("content") ==
              HELLO.replace("hello, world", "hello"), r)
        # a new file in a new directory: what is missing, then made
        r = a.tool("write_file", path="notes/plan.md", content="fix it\n")
        check("write_file into a new directory says what to do",
              r.get("isError") and "the directory 'notes' does not exist"
              in text(r) and '"create_dirs": true' in text(r), r)
        r = a.tool("write_file", path="notes/plan.md", content="fix it\n",
                   create_dirs=True)
        check("write_file with create_dirs", not r.get("isError"), r)
        # the edit, the build, its test
        r = a.tool("write_file", path="hello.c", content=HELLO)
        check("the edit", not r.get("isError"), r)
        r = a.tool("run_command", command="git", args=["diff", "--stat"])
        check("git diff", "hello.c | 2 +-" in out(r), r)
        r = a.tool("run_command", command="make", args=["test"])
        check("make test builds and passes", not r.get("isError") and
              "tests passed" in out(r), r)
        r = a.tool("run_command", command="git", args=["add", "hello.c",
                                                        "notes/plan.md"])
        check("git add", not r.get("isError") and
              r["structuredContent"]["exit_code"] == 0, r)
        r = a.tool("run_command", command="git", args=[
            "commit", "-q", "-m", "say hello, world"])
        check("git commit", not r.get("isError") and
              r["structuredContent"]["exit_code"] == 0, r)
        r = a.tool("run_command", command="git", args=["log", "--oneline"])
        check("the commit is there", out(r).splitlines()[0].endswith(
              " say hello, world") if out(r) else False, r)
        r = a.tool("run_command", command="git", args=["status", "--short"])
        check("nothing left but the build's output",
              out(r) == "?? hello\n", r)
        # the hooks stay the owner's: a run cannot add one
        r = a.tool("run_command", command="cp",
                   args=["Makefile", ".git/hooks/pre-commit"])
        check("a hook cannot be planted", r["structuredContent"][
              "exit_code"] != 0 and "Read-only file system" in
              r["structuredContent"]["stderr"], r)
    finally:
        check("the server exits 0", a.close() == 0)
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    args = sys.argv[1:]
    unpriv = "--unpriv" in args
    if unpriv:
        args.remove("--unpriv")
    binary = os.path.abspath(args[0])
    for tool in ("git", "make", "cc"):
        if shutil.which(tool, path=PATH) is None:
            print("skip: %s is not installed" % tool)
            return 77
    if unpriv and (os.geteuid() != 0 or not nobody_can("unshare", "-U",
                                                        "true") or
                   not nobody_can("test", "-x", binary)):
        print("skip: --unpriv needs root, user namespaces for uid 65534 "
              "and a binary it can run")
        return 77
    day(binary, unpriv)
    print("%d failed" % len(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
