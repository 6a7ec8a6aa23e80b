#!/usr/bin/env python3
"""Real MCP clients against mcp-sandbox (label clients; README.md here).

  inspector  MCP Inspector CLI: tools/list with --strict (no schema
             warning), then every tool called, over stdio and Streamable
             HTTP, in both protocol eras (legacy 2025-11-25, modern
             2026-07-28).
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
        check(f"{label}: 9 tools", len(tools) == 9, [t["name"] for t in tools])
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
    def __init__(self, node, out):
        self.results = os.path.join(out, "results.jsonl")
        self.requests = os.path.join(out, "requests.jsonl")
        for f in (self.results, self.requests):
            if os.path.exists(f):
                os.unlink(f)
        self.p = subprocess.Popen(
            [node, os.path.join(HERE, "fake_model.mjs"), "--record",
             self.results, "--log", self.requests],
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
            rc = {"claude": claude, "gemini": gemini,
                  "codex": codex}[client](node, binary, tmp, out)
    finally:
        if out != tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"time {client}: {time.monotonic() - t0:.1f} s")
    if rc == SKIP:
        return SKIP
    return REPORT.end()


if __name__ == "__main__":
    sys.exit(main())
