#!/usr/bin/env python3
"""Real MCP clients against mcp-sandbox (label clients; README.md here).

  inspector  MCP Inspector CLI: tools/list with --strict (no schema
             warning), then every tool called, over stdio and Streamable
             HTTP, in both protocol eras (legacy 2025-11-25, modern
             2026-07-28).
  claude-approvals  Claude Code meeting an approval (what it does with
             our input_required when there is no user: cancel).
  claude     Claude Code, gemini Gemini CLI, codex Codex CLI: each started
             headless with our server over stdio and its model API pointed
             at fake_model.mjs on loopback, which answers with scripted
             calls of calculate, run_command and run_code and records the
             tool results the client sends back (results.jsonl). The test
             checks the client declared our tools, called all three, got
             our results back to the "model", and finished.

Each client is the npm package pinned in package.json (npm ci here, which
tests/setup.sh --test does). One not installed is skipped (exit 77) with a
message. Network: loopback only (the stand-in model, our HTTP server).

usage: clients_test.py CLIENT MCP_SANDBOX_BINARY NODE [RESULTS_DIR]
RESULTS_DIR keeps the stand-in's records (results.jsonl, requests.jsonl)
for a later reader (issue 16); by default a temporary directory.
"""
import json
import os
import re
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import time

# the helpers the test scripts share: tests/lib
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from mcptest import Report  # noqa: E402

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BINS = os.path.join(HERE, "node_modules", ".bin")
SYS_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
CLIENT_DEADLINE_S = 180
SKILLS = os.path.join(ROOT, "tests", "integration", "tools", "skills")
DB = os.path.join(ROOT, "tests", "integration", "tools", "empty.sqlite")
NOBODY = 65534

REPORT = None           # Report(the client), made by main()


def check(name, cond, detail=""):
    return REPORT.check(name, cond, detail)


def env_with(node, home, **extra):
    e = {"PATH": os.path.dirname(node) + ":" + SYS_PATH, "HOME": home,
         "LANG": "C.UTF-8", "NO_COLOR": "1", "CI": "1"}
    e.update(extra)
    return e


def workspace(tmp):
    ws = tempfile.mkdtemp(prefix="ws-", dir=tmp)
    if os.geteuid() == 0:  # a root server's sandboxes run as 65534
        os.chown(ws, NOBODY, NOBODY)
    return ws


def server_args(ws):
    return ["--workspace", ws, "--skills-dir", SKILLS,
            "--database", f"db={DB}"]


# ---- MCP Inspector ----

# (tool, arguments, a check of structuredContent)
CALLS = [
    ("calculate", {"expression": "2^64"},
     lambda sc: sc["value"] == "18446744073709551616"),
    ("run_command", {"command": "echo", "args": ["hi"]},
     lambda sc: sc["exit_code"] == 0 and sc["stdout"] == "hi\n"),
    ("run_code", {"language": "python3", "code": "print(6*7)"},
     lambda sc: sc["exit_code"] == 0 and sc["stdout"] == "42\n"),
    ("write_file", {"path": "notes/a.txt", "content": "inspected\n",
                    "create_dirs": True},
     lambda sc: sc["bytes_written"] == 10),
    ("read_file", {"path": "notes/a.txt"},
     lambda sc: sc["content"] == "inspected\n"),
    ("list_directory", {"path": "notes"},
     lambda sc: [e["path"] for e in sc["entries"]] == ["notes/a.txt"]),
    ("search_files", {"content": "inspect"},
     lambda sc: len(sc["matches"]) == 1),
    ("run_skill_script", {"skill": "greeter", "script": "greet.py",
                          "args": ["Ada"]},
     lambda sc: sc["greeting"] == "hello Ada"),
    ("query_sqlite", {"database": "db", "sql": "select 6*7 as x"},
     lambda sc: sc["rows"] == [[42]]),
]


def inspector(node, binary, tmp):
    exe = os.path.join(BINS, "mcp-inspector")
    if not os.path.exists(exe):
        print("skip: MCP Inspector is not installed (cd tests/clients && "
              "npm ci)")
        return SKIP
    ver = subprocess.run([node, exe, "--cli", "--version"],
                         capture_output=True, text=True, timeout=60)
    print(f"MCP Inspector {ver.stdout.strip()}")
    home = tempfile.mkdtemp(prefix="home-", dir=tmp)
    env = env_with(node, home, MCP_CATALOG_PATH=os.path.join(home, "c.json"))

    def cli(target, era, *args):
        r = subprocess.run([node, exe, "--cli", *target, "--protocol-era",
                            era, "--format", "json", *args],
                           capture_output=True, text=True, env=env,
                           timeout=CLIENT_DEADLINE_S)
        return r

    def session(label, target, era):
        r = cli(target, era, "--method", "tools/list", "--strict")
        check(f"{label}: tools/list --strict exit 0", r.returncode == 0,
              r.stderr[-1500:])
        tools = json.loads(r.stdout or "{}").get("result", {}).get("tools", [])
        check(f"{label}: 11 tools", len(tools) == 11, [t["name"] for t in tools])
        check(f"{label}: --strict reports nothing",
              "Warning" not in r.stderr and "warnings" not in r.stderr,
              r.stderr[-1500:])
        for name, args, ok in CALLS:
            r = cli(target, era, "--method", "tools/call", "--tool-name", name,
                    "--tool-args-json", json.dumps(args))
            try:
                res = json.loads(r.stdout)["result"]
                good = not res.get("isError") and ok(res["structuredContent"])
            except (ValueError, KeyError, TypeError) as e:
                res, good = (r.stdout[-800:] + r.stderr[-800:], e), False
            check(f"{label}: {name}", r.returncode == 0 and good, res)

    for era in ("legacy", "modern"):
        ws = workspace(tmp)
        session(f"stdio {era}", [binary, *server_args(ws)], era)
    # HTTP: one server, both eras
    ws = workspace(tmp)
    log = open(os.path.join(tmp, "http.log"), "w+")
    srv = subprocess.Popen([binary, "--http", "127.0.0.1:0",
                            *server_args(ws)], stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=log,
                           env={"PATH": SYS_PATH})
    try:
        port = None
        deadline = time.monotonic() + 20
        while port is None and time.monotonic() < deadline and \
                srv.poll() is None:
            log.seek(0)
            m = re.search(r"\(port (\d+)\)", log.read())
            port = m and m.group(1)
            if port is None:
                time.sleep(0.05)  # the server's first log line
        check("HTTP server up", port is not None, "no port in its log")
        if port:
            url = f"http://127.0.0.1:{port}/mcp"
            for era in ("legacy", "modern"):
                session(f"http {era}", [url, "--transport", "http"], era)
    finally:
        srv.terminate()
        srv.wait(timeout=30)
        log.close()
    return 0


# ---- model clients, driven by the stand-in model ----

SCRIPT_TOOLS = ["calculate", "run_command", "run_code"]
EXPECT = {"calculate": "18446744073709551616",
          "run_command": "hello from the sandbox",
          "run_code": "42"}
FINAL = "All three tools answered."


class StandIn:
    def __init__(self, node, out, script=None):
        self.results = os.path.join(out, "results.jsonl")
        self.requests = os.path.join(out, "requests.jsonl")
        for f in (self.results, self.requests):
            if os.path.exists(f):
                os.unlink(f)
        self.p = subprocess.Popen(
            [node, os.path.join(HERE, "fake_model.mjs"), "--record",
             self.results, "--log", self.requests] +
            (["--script", json.dumps(script)] if script else []),
            stdout=subprocess.PIPE, text=True, env={"PATH": SYS_PATH})
        line = self.p.stdout.readline()
        self.port = int(line.split()[1])
        self.url = f"http://127.0.0.1:{self.port}"

    def stop(self):
        self.p.terminate()
        self.p.wait(timeout=10)

    def recorded(self):
        if not os.path.exists(self.results):
            return []
        with open(self.results) as f:
            return [json.loads(ln) for ln in f]

    def declared(self):
        if not os.path.exists(self.requests):
            return []
        with open(self.requests) as f:
            return [json.loads(ln) for ln in f]


def judge(client, out, r, stand):
    text = (r.stdout or "") + (r.stderr or "")
    check(f"{client}: exit 0", r.returncode == 0, text[-2000:])
    reqs = stand.declared()
    names = json.dumps([q["tools"] for q in reqs])
    check(f"{client}: sent our tools to the model",
          all(t in names for t in SCRIPT_TOOLS), names[:1500])
    rec = stand.recorded()
    got = {e["tool"]: json.dumps(e["result"]) for e in rec}
    for t in SCRIPT_TOOLS:
        check(f"{client}: {t} called, its result sent back to the model",
              t in got and EXPECT[t] in got[t], got.get(t, rec))
    check(f"{client}: finished with the model's last answer",
          FINAL in (r.stdout or ""), (r.stdout or "")[-1500:])
    print(f"{client}: {len(reqs)} model requests; tool results in "
          f"{stand.results}")


def claude(node, binary, tmp, out):
    exe = os.path.join(BINS, "claude")
    if not os.path.exists(exe):
        print("skip: Claude Code is not installed (cd tests/clients && npm ci)")
        return SKIP
    home = tempfile.mkdtemp(prefix="home-", dir=tmp)
    cfg = os.path.join(home, "mcp.json")
    with open(cfg, "w") as f:
        json.dump({"mcpServers": {"sandbox": {
            "command": binary, "args": server_args(workspace(tmp))}}}, f)
    stand = StandIn(node, out)
    try:
        ver = subprocess.run([exe, "--version"], capture_output=True,
                             text=True, env=env_with(node, home), timeout=60)
        print(f"Claude Code {ver.stdout.strip()}")
        r = subprocess.run(
            [exe, "-p", "Use the sandbox tools.", "--mcp-config", cfg,
             "--strict-mcp-config", "--output-format", "json",
             "--allowedTools", *[f"mcp__sandbox__{t}" for t in SCRIPT_TOOLS]],
            capture_output=True, text=True, cwd=home, timeout=CLIENT_DEADLINE_S,
            env=env_with(node, home, ANTHROPIC_BASE_URL=stand.url,
                         ANTHROPIC_API_KEY="sk-ant-stand-in",
                         # every tool declared up front, not found through
                         # its ToolSearch tool
                         ENABLE_TOOL_SEARCH="false",
                         CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
                         DISABLE_AUTOUPDATER="1"))
        judge("claude", out, r, stand)
    finally:
        stand.stop()
    return 0


# ---- Claude Code with MCP tasks (issue 22) ----

# The call the stand-in makes: background asks our server for a task.
TASK_SCRIPT = [["run_code", {"language": "python3",
                             "code": "print('built', 6*7)",
                             "background": True}]]
TASK_ID = re.compile(r"started server-side task ([0-9a-f]{32})\b")


def loopback_only():
    """Whether this process's network namespace has no interface but lo
    (the tasks run needs Claude Code's telemetry switch on, which would
    otherwise try the internet)."""
    return interfaces() == ["lo"]


def interfaces():
    """This network namespace's interfaces (/proc/self/net is the
    namespace's; /sys/class/net is the one sysfs was mounted in)."""
    with open("/proc/self/net/dev") as f:
        return sorted(ln.split(":")[0].strip() for ln in f.readlines()[2:])


def stream_client(argv, env, cwd, prompt, done):
    """Runs a stream-json Claude Code session: one user message in, every
    event out, stdin closed once done(events) holds (a session whose input
    is open stays up for the background task's notification). Returns
    (exit code, events, stderr)."""
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, cwd=cwd, env=env)
    p.stdin.write(json.dumps({"type": "user", "message": {
        "role": "user", "content": prompt}}) + "\n")
    p.stdin.flush()
    events, deadline = [], time.monotonic() + CLIENT_DEADLINE_S
    while time.monotonic() < deadline:
        r, _, _ = select.select([p.stdout], [], [], 1.0)
        if not r:
            continue
        line = p.stdout.readline()
        if not line:
            break
        try:
            events.append(json.loads(line))
        except ValueError:
            events.append({"type": "unparsed", "line": line[:500]})
        if done(events) and not p.stdin.closed:
            p.stdin.close()
    if p.poll() is None:
        p.kill()
    rc = p.wait()
    return rc, events, p.stderr.read()


def claude_approvals(node, binary, tmp, out):
    """Claude Code headless meets an approval (issue 23): it speaks
    2026-07-28, so a call asking for a host inside the ceiling gets our
    input_required result; with no user to show the form to (-p), it
    retries with the answer "cancel", and the model reads our refusal.
    Our audit log records both steps."""
    exe = os.path.join(BINS, "claude")
    if not os.path.exists(exe):
        print("skip: Claude Code is not installed (cd tests/clients && npm ci)")
        return SKIP
    home = tempfile.mkdtemp(prefix="home-", dir=tmp)
    audit = os.path.join(tmp, "audit.jsonl")
    cfg = os.path.join(home, "mcp.json")
    with open(cfg, "w") as f:
        json.dump({"mcpServers": {"sandbox": {
            "command": binary, "args": server_args(workspace(tmp)) + [
                "--ask-network", "--ask-domain", "*.approved.test",
                "--audit-log", audit]}}}, f)
    stand = StandIn(node, out, script=[["run_command", {
        "command": "echo", "args": ["x"],
        "allow_domains": ["a.approved.test"]}]])
    try:
        r = subprocess.run(
            [exe, "-p", "Use the sandbox tools.", "--mcp-config", cfg,
             "--strict-mcp-config", "--output-format", "json",
             "--allowedTools", "mcp__sandbox__run_command"],
            capture_output=True, text=True, cwd=home, timeout=CLIENT_DEADLINE_S,
            env=env_with(node, home, ANTHROPIC_BASE_URL=stand.url,
                         ANTHROPIC_API_KEY="sk-ant-stand-in",
                         ENABLE_TOOL_SEARCH="false",
                         CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
                         DISABLE_AUTOUPDATER="1"))
        check("claude-approvals: exit 0", r.returncode == 0,
              (r.stdout + r.stderr)[-2000:])
        got = [json.dumps(e["result"]) for e in stand.recorded()]
        check("claude-approvals: the model read our refusal (cancel)",
              len(got) == 1 and "the user did not allow it (cancel)" in
              got[0], got)
        with open(audit) as f:
            lines = [json.loads(ln) for ln in f]
        asks = [ln["answer"] for ln in lines if ln.get("event") ==
                "approval"]
        reasons = [ln.get("reason") for ln in lines if "reason" in ln]
        check("claude-approvals: input_required first, then the retry's "
              "answer", reasons == ["approval: input required",
                                    "approval: cancel"] and
              asks == ["cancel"], lines)
    finally:
        stand.stop()
    return 0


def claude_tasks(node, binary, tmp, out):
    """Claude Code calls a run_code with background: true; our server
    answers resultType "task"; Claude Code moves the call to the
    background, polls tasks/get, and tells the model the result when the
    task ends. Claude Code runs MCP tasks only where its feature flag
    tengu_glowing_lark is on (fetched from Anthropic, cached in
    ~/.claude.json: the cache stands in for the fetch here), its telemetry
    is not switched off (which also switches the flags off), in a session
    that is not single-shot (stream-json input) and, headless, with
    CLAUDE_AUTO_BACKGROUND_TASKS=1. With telemetry on, the client is kept
    to loopback by a network namespace of lo alone."""
    exe = os.path.join(BINS, "claude")
    if not os.path.exists(exe):
        print("skip: Claude Code is not installed (cd tests/clients && npm ci)")
        return SKIP
    if not check("claude-tasks: only loopback is reachable", loopback_only(),
                 interfaces()):
        return 0
    home = tempfile.mkdtemp(prefix="home-", dir=tmp)
    with open(os.path.join(home, ".claude.json"), "w") as f:
        json.dump({"cachedGrowthBookFeatures": {"tengu_glowing_lark": True}},
                  f)
    audit = os.path.join(tmp, "audit.jsonl")
    cfg = os.path.join(home, "mcp.json")
    with open(cfg, "w") as f:
        json.dump({"mcpServers": {"sandbox": {
            "command": binary, "args": server_args(workspace(tmp)) +
            ["--audit-log", audit]}}}, f)
    stand = StandIn(node, out, TASK_SCRIPT)

    def done(events):
        # a turn ended with no task left in the background: the model
        # answered the task's notification (or no task was ever started)
        sub = [e.get("subtype") for e in events]
        return bool(events) and events[-1].get("type") == "result" and \
            sub.count("task_started") == sub.count("task_notification")
    try:
        rc, events, err = stream_client(
            [exe, "-p", "--input-format", "stream-json", "--output-format",
             "stream-json", "--verbose", "--mcp-config", cfg,
             "--strict-mcp-config", "--allowedTools", "mcp__sandbox__run_code"],
            env_with(node, home, ANTHROPIC_BASE_URL=stand.url,
                     ANTHROPIC_API_KEY="sk-ant-stand-in",
                     ENABLE_TOOL_SEARCH="false", DISABLE_AUTOUPDATER="1",
                     CLAUDE_AUTO_BACKGROUND_TASKS="1"),
            home, "Use the sandbox tools.", done)
    finally:
        stand.stop()
    check("claude-tasks: exit 0 after the last turn", rc == 0 and
          done(events), err[-1500:])
    started = [e for e in events if e.get("subtype") == "task_started"]
    check("claude-tasks: the call went to the background as an MCP task",
          [e.get("task_type") for e in started] == ["mcp_task"], started)
    rec = stand.recorded()
    first = json.dumps([e["result"] for e in rec
                        if e["result"].get("type") == "tool_result"])
    m = TASK_ID.search(first)
    check("claude-tasks: the model was told our task id at once", m, first)
    tid = m.group(1) if m else "?"
    notes = [e["result"]["text"] for e in rec
             if e["result"].get("type") == "task_notification"]
    results = [json.loads(x) for n in notes for x in re.findall(
        r"<result>\n(.*?)\n</result>", n, re.S)]
    check("claude-tasks: the task's result reached the model",
          len(notes) == 1 and tid in notes[0] and len(results) == 1 and
          results[0]["stdout"] == "built 42\n", notes)
    with open(audit) as f:
        lines = [json.loads(ln) for ln in f]
    got = [(x["event"], x["status"]) for x in lines
           if x.get("task") == tid]
    check("claude-tasks: our audit saw the task start and complete",
          got == [("task_start", "working"), ("task_end", "completed")],
          lines)
    return 0


def gemini(node, binary, tmp, out):
    exe = os.path.join(BINS, "gemini")
    if not os.path.exists(exe):
        print("skip: Gemini CLI is not installed (cd tests/clients && npm ci)")
        return SKIP
    home = tempfile.mkdtemp(prefix="home-", dir=tmp)
    os.makedirs(os.path.join(home, ".gemini"))
    with open(os.path.join(home, ".gemini", "settings.json"), "w") as f:
        json.dump({"mcpServers": {"sandbox": {
            "command": binary, "args": server_args(workspace(tmp)),
            "trust": True}},
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": False},
            "general": {"disableAutoUpdate": True}}, f)
    stand = StandIn(node, out)
    try:
        env = env_with(node, home, GEMINI_API_KEY="stand-in",
                       GOOGLE_GEMINI_BASE_URL=stand.url,
                       GEMINI_CLI_TRUST_WORKSPACE="true")
        ver = subprocess.run([node, exe, "--version"], capture_output=True,
                             text=True, env=env, timeout=60)
        print(f"Gemini CLI {ver.stdout.strip()}")
        # a fixed model: without one the CLI first asks a router model to
        # classify the prompt, which the stand-in does not play
        r = subprocess.run([node, exe, "-m", "gemini-2.5-pro", "-p",
                            "Use the sandbox tools.", "--yolo",
                            "--output-format", "json"],
                           capture_output=True, text=True, cwd=home, env=env,
                           timeout=CLIENT_DEADLINE_S)
        judge("gemini", out, r, stand)
    finally:
        stand.stop()
    return 0


def codex(node, binary, tmp, out):
    exe = os.path.join(BINS, "codex")
    if not os.path.exists(exe):
        print("skip: Codex CLI is not installed (cd tests/clients && npm ci)")
        return SKIP
    home = tempfile.mkdtemp(prefix="home-", dir=tmp)
    stand = StandIn(node, out)
    try:
        args = ", ".join(json.dumps(a) for a in server_args(workspace(tmp)))
        with open(os.path.join(home, "config.toml"), "w") as f:
            f.write(f'''model = "stand-in"
model_provider = "standin"
approval_policy = "never"
sandbox_mode = "danger-full-access"
# no traffic but to the stand-in: no update check, no analytics, and the
# ChatGPT endpoints (plugins, experiments) pointed at it too
check_for_update_on_startup = false
chatgpt_base_url = "{stand.url}/chatgpt"

[analytics]
enabled = false

[model_providers.standin]
name = "stand-in"
base_url = "{stand.url}/v1"
wire_api = "responses"
env_key = "STANDIN_API_KEY"

[mcp_servers.sandbox]
command = {json.dumps(binary)}
args = [{args}]
''')
        # what Codex still asks of the internet (a release check on
        # api.github.com, chatgpt.com) goes to a closed loopback port
        # through a proxy, so not even its DNS name leaves the machine
        env = env_with(node, home, CODEX_HOME=home, STANDIN_API_KEY="x",
                       HTTPS_PROXY="http://127.0.0.1:9",
                       HTTP_PROXY="http://127.0.0.1:9",
                       NO_PROXY="127.0.0.1,localhost")
        ver = subprocess.run([exe, "--version"], capture_output=True,
                             text=True, env=env, timeout=60)
        print(ver.stdout.strip())
        r = subprocess.run([exe, "exec", "--skip-git-repo-check",
                            "Use the sandbox tools."], capture_output=True,
                           text=True, cwd=home, env=env,
                           timeout=CLIENT_DEADLINE_S)
        judge("codex", out, r, stand)
    finally:
        stand.stop()
    return 0


def main():
    global REPORT
    client, binary, node = sys.argv[1], os.path.abspath(sys.argv[2]), \
        sys.argv[3]
    REPORT = Report(client)
    if not node or not os.path.exists(node):
        print("skip: Node 22 is not installed (tests/setup.sh --test)")
        return SKIP
    tmp = tempfile.mkdtemp(prefix=f"mcp-clients-{client}-")
    os.chmod(tmp, 0o755)
    out = sys.argv[4] if len(sys.argv) > 4 else tmp
    os.makedirs(out, exist_ok=True)
    t0 = time.monotonic()
    try:
        if client == "inspector":
            rc = inspector(node, binary, tmp)
        else:
            rc = {"claude": claude, "claude-tasks": claude_tasks,
                  "claude-approvals": claude_approvals,
                  "gemini": gemini, "codex": codex}[client](node, binary,
                                                            tmp, out)
    finally:
        if out != tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"time {client}: {time.monotonic() - t0:.1f} s")
    if rc == SKIP:
        return SKIP
    return REPORT.end()


if __name__ == "__main__":
    sys.exit(main())
