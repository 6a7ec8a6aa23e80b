#!/usr/bin/env python3
"""Secrets added at the egress proxy (issue 24), end to end.

Loopback only: HTTPS servers on 127.0.0.1 with certificates of a test CA
(openssl), names pinned with --resolve, the proxy told to trust that CA
with --egress-ca. The real mcp-sandbox runs over stdio with a plain PATH,
as root or (--unpriv) as uid 65534. Each case asserts what the real host
received (the value, or the placeholder unchanged), what the sandbox saw
(only the placeholder), and the record the model reads.

usage: test_secrets.py BINARY [--unpriv] [CASE...]
"""

import http.server
import json
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, HERE)
import test_egress as te  # noqa: E402  (its fixtures and its client)
from mcptest import Fail, eq, expect, nobody_can  # noqa: E402

PLAIN_PATH = te.PLAIN_PATH
SECRET = "ghp_T0kenV4lue-0123456789abcdefXYZ"   # 34 bytes, not alnum only
OTHER = "sk_other_secret_value_0123456789"


class Echo(http.server.BaseHTTPRequestHandler):
    """Answers with the request line and headers (and body), 5 bytes a
    write: a value in them crosses TLS records. Keeps what it saw."""
    protocol_version = "HTTP/1.1"
    seen = []

    def log_message(self, *a):
        pass

    def _answer(self, body_in=b""):
        got = ("%s\n%s" % (self.requestline, self.headers)).encode() + body_in
        Echo.seen.append(got)
        self.send_response(200)
        self.send_header("Content-Length", str(len(got)))
        self.send_header("X-Echo-Auth", self.headers.get("Authorization", "-"))
        self.end_headers()
        for i in range(0, len(got), 5):
            self.wfile.write(got[i:i + 5])
            self.wfile.flush()

    def do_GET(self):
        self._answer()

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        self._answer(self.rfile.read(n))


class GitRepo(http.server.SimpleHTTPRequestHandler):
    """A bare repository over git's dumb HTTP protocol (static files),
    behind Basic credentials that must carry the real value: git sends
    them only after a 401, as it does for GitHub."""
    protocol_version = "HTTP/1.1"
    auth = None      # "Basic ..." expected

    def log_message(self, *a):
        pass

    def _ok(self):
        if self.headers.get("Authorization") == GitRepo.auth:
            return True
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="git"')
        self.send_header("Content-Length", "0")
        self.end_headers()
        return False

    def do_GET(self):
        if self._ok():
            super().do_GET()

    def do_HEAD(self):
        if self._ok():
            super().do_HEAD()


def serve_tls(key, crt, handler=None):
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler or Echo)
    srv.daemon_threads = True
    srv.handle_error = lambda *a: None
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(crt, key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, srv.server_address[1]


def self_signed(d, name):
    key, crt = os.path.join(d, name + ".key"), os.path.join(d, name + ".pem")
    te.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
            "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out",
            crt, "-days", "2", "-subj", "/CN=" + name, "-addext",
            "subjectAltName=DNS:" + name])
    return key, crt


def sh(code):
    return {"language": "sh", "code": code, "network": True,
            "timeout_ms": 30000}


def out(r):
    return r["structuredContent"]["stdout"]


def conns(r):
    return te.net(r)["connections"]


def seen_since(n):
    return b"".join(Echo.seen[n:]).decode(errors="replace")


# ---- the cases ---------------------------------------------------------------

def case_curl_swap_and_scrub(m):
    n = len(Echo.seen)
    r = m.call("run_code", sh(
        'curl -sS -H "X-Tok: $TOK" "https://a.test:%d/p?t=$TOK"' % HTTPS))
    ph = PH[0]
    seen = seen_since(n)
    expect("GET /p?t=%s HTTP/1.1" % SECRET in seen, "the URL's value: %s" % seen)
    expect("X-Tok: %s" % SECRET in seen, "the header's value: %s" % seen)
    expect("Connection: close" in seen and "Accept-Encoding" not in seen, seen)
    o = out(r)
    expect(SECRET not in o and ("X-Tok: %s" % ph) in o and
           ("/p?t=%s" % ph) in o, "the sandbox saw the placeholder: %r" % o)
    c = conns(r)[0]
    eq((c["method"], c["host"], c["port"], c["status"], c["intercepted"],
        c["secrets"], c["reason"]),
       ("CONNECT", "a.test", HTTPS, 200, True, ["TOK"],
        "the server's answer carried the value of TOK: the program got the "
        "placeholder"), "the record")


def case_python_urllib_and_body(m):
    n = len(Echo.seen)
    code = ("import os,urllib.request as u\n"
            "t=os.environ['TOK']\n"
            "q=u.Request('https://a.test:%d/post',data=('body:'+t).encode(),"
            "headers={'X-Tok':t})\n"
            "print(u.urlopen(q,timeout=20).read().decode())\n" % HTTPS)
    r = m.call("run_code", {"language": "python3", "code": code,
                            "network": True, "timeout_ms": 30000})
    seen = seen_since(n)
    expect("X-Tok: %s" % SECRET in seen, "header swapped: %s" % seen)
    expect(seen.endswith("body:" + PH[0]), "a body goes as it is: %r" % seen)
    expect(SECRET not in out(r), "the sandbox: %r" % out(r))
    eq(conns(r)[0]["secrets"], ["TOK"], "record")


def case_basic_credentials(m):
    # git's https://user:TOKEN@host and curl -u send user:password in base64
    import base64
    n = len(Echo.seen)
    r = m.call("run_code", sh(
        'curl -sS -u "x-access-token:$TOK" https://a.test:%d/git' % HTTPS))
    real = base64.b64encode(("x-access-token:" + SECRET).encode()).decode()
    mine = base64.b64encode(("x-access-token:" + PH[0]).encode()).decode()
    seen = seen_since(n)
    expect("Authorization: Basic %s" % real in seen, "swapped inside: %s" % seen)
    o = out(r)
    expect(real not in o and ("Authorization: Basic %s" % mine) in o,
           "the echo carries the program's own form back: %r" % o)
    eq(conns(r)[0]["secrets"], ["TOK"], "record")


def case_git_clone(m):
    r = m.call("run_code", sh(
        'cd /tmp && git clone -q "https://x-access-token:$TOK@pypi.test:%d/repo.git"'
        ' r 2>&1; cat r/README' % GIT))
    eq(out(r), "from the forge\n", "git cloned through the proxy: %r" % out(r))
    cs = conns(r)
    expect(len(cs) >= 2 and all(c["intercepted"] for c in cs) and
           any(c["secrets"] == ["TOK"] for c in cs), "records: %r" % cs)


def case_header_from_policy(m):
    n = len(Echo.seen)
    r = m.call("run_code", sh(
        'curl -sS -D - -H "Authorization: mine" https://good.w.test:%d/' % HTTPS))
    seen = seen_since(n)
    expect("Authorization: Bearer %s" % OTHER in seen and "mine" not in seen,
           "the header set from the secret: %s" % seen)
    o = out(r)
    expect(OTHER not in o and ("X-Echo-Auth: Bearer %s" % PH[1]) in o,
           "the answer's header scrubbed: %r" % o)
    eq(conns(r)[0]["secrets"], ["API"], "record")


def case_unbound_not_intercepted(m):
    n = len(Echo.seen)
    # the real certificate reaches the program: it verifies with the test
    # CA alone, and with the proxy's bundle alone it cannot
    r = m.call("run_code", sh(
        'curl -sS --cacert /workspace/ca.pem -H "X-Tok: $TOK" '
        'https://b.test:%d/; echo; curl -sS -o /dev/null '
        '--cacert /run/mcp-sandbox/egress-ca.pem https://b.test:%d/; '
        'echo "rc=$?"' % (HTTPS, HTTPS)))
    seen = seen_since(n)
    expect("X-Tok: %s" % PH[0] in seen and SECRET not in seen,
           "the placeholder arrives unchanged: %s" % seen)
    expect(out(r).endswith("rc=60\n"), "proxy's CA not used: %r" % out(r))
    for c in conns(r):
        eq((c["host"], c["intercepted"], c["secrets"]),
           ("b.test", False, []), "record")


def case_host_header_pinned(m):
    n = len(Echo.seen)
    r = m.call("run_code", sh(
        'curl -sS -H "Host: b.test:%d" -H "X-Tok: $TOK" https://a.test:%d/'
        % (HTTPS, HTTPS)))
    eq(seen_since(n), "", "nothing reached the server")
    reason = ("Host header 'b.test:%d' is not 'a.test', the host the secret "
              "is added for" % HTTPS)
    expect(reason in out(r), "the program read it: %r" % out(r))
    c = conns(r)[0]
    eq((c["status"], c["reason"], c["secrets"]), (403, reason, []), "record")


def case_untrusted_upstream(m):
    r = m.call("run_code", sh(
        'curl -sS https://u.test:%d/; echo "rc=$?"' % UNTRUSTED))
    c = conns(r)[0]
    eq((c["host"], c["status"], c["allowed"]), ("u.test", 502, False), "record")
    expect(c["reason"].startswith("the certificate of 'u.test' was refused: ")
           and "issuer is unknown" in c["reason"], c["reason"])
    expect("rc=56" in out(r), out(r))


def case_name_mismatch(m):
    r = m.call("run_code", sh('curl -sS https://x.test:%d/' % HTTPS))
    c = conns(r)[0]
    eq(c["status"], 502, "record")
    expect(c["reason"].startswith("the certificate of 'x.test' was refused: ")
           and "does not match" in c["reason"], c["reason"])


def case_plain_http_refused(m):
    r = m.call("run_code", sh('curl -sS http://a.test:%d/' % HTTP))
    c = conns(r)[0]
    eq((c["method"], c["status"], c["reason"]),
       ("GET", 403, "TOK is bound to 'a.test' over HTTPS only: plain http:// "
        "would carry it in clear (use https://, or allow_http in the "
        "policy's secret)"), "record")


def case_no_leak_in_sandbox(m):
    r = m.call("run_code", sh(
        'cat /proc/self/environ | tr "\\0" "\\n" | grep -c "^TOK=%s$"; '
        'env > /workspace/env.txt; grep -c SSL_CERT_FILE=/run/mcp-sandbox/'
        'egress-ca.pem /workspace/env.txt; grep -c "BEGIN CERTIFICATE" '
        '/run/mcp-sandbox/egress-ca.pem' % PH[0]))
    lines = out(r).split()
    eq(lines[:2], ["1", "1"], "placeholder and CA variable: %r" % out(r))
    expect(int(lines[2]) >= 2, "the system's CAs and the proxy's: %r" % lines)
    with open(os.path.join(WS, "env.txt")) as f:
        env = f.read()
    expect(SECRET not in env and OTHER not in env, "no value in the sandbox")
    eq(len(PH[0]), len(SECRET), "placeholder's length")
    expect(PH[0] != SECRET, "placeholder differs")


def dumpable_hits(pid, needles):
    """Which needles lie in mappings a core dump would hold (all but the
    VmFlags "dd" ones, MADV_DONTDUMP), and whether any lies in a dd one."""
    import re
    regions, cur = [], None
    with open("/proc/%d/smaps" % pid) as f:
        for line in f:
            mm = re.match(r"^([0-9a-f]+)-([0-9a-f]+) (\S+)", line)
            if mm:
                cur = [int(mm.group(1), 16), int(mm.group(2), 16),
                       mm.group(3), ""]
                regions.append(cur)
            elif line.startswith("VmFlags:") and cur is not None:
                cur[3] = line
    with open("/proc/%d/maps" % pid) as f:
        asan = "libasan" in f.read()
    hits, in_dd = set(), False
    step, over = 16 << 20, 4096
    with open("/proc/%d/mem" % pid, "rb", 0) as mem:
        for a, b, perm, flags in regions:
            # ASan's shadow and allocator reserve terabytes it never
            # touches: its build looks at what it mapped for real only
            if "r" not in perm or (asan and b - a > 1 << 30):
                continue
            for at in range(a, b, step):
                try:
                    mem.seek(max(a, at - over))
                    data = mem.read(min(b, at + step) - max(a, at - over))
                except OSError:
                    break
                for n in needles:
                    if n in data:
                        if " dd" in flags:
                            in_dd = True
                        else:
                            hits.add(n)
    return hits, in_dd


def case_no_value_in_a_core(binary, unpriv):
    # a server started with both secrets: the values are only in the
    # pages kept out of a core (a core holds what /proc/PID/mem shows
    # outside "dd" mappings). Not asserted after intercepted requests:
    # GnuTLS's freed record buffers may hold a request's plaintext until
    # reused (the ASan build, whose quarantine keeps freed memory, shows
    # it); README says so.
    m2 = te.Mcp(binary, ["--config", POLICY] + COMMON, unpriv)
    try:
        hits, in_dd = dumpable_hits(m2.p.pid, [SECRET.encode(),
                                               OTHER.encode()])
        m2.close()
    finally:
        if m2.p.poll() is None:
            m2.p.kill()
    eq(sorted(hits), [], "values in dumpable memory")
    expect(in_dd, "the values' own pages are found, marked dd")


def case_start_refusals(binary, unpriv):
    def start(*args):
        p = subprocess.run([binary] + list(args) + ["--print-config"],
                           capture_output=True, text=True,
                           env={"PATH": PLAIN_PATH})
        return p.returncode, p.stderr.strip()
    eq(start("--secret", "TOK=z.test:file:" + TOKF),
       (2, "mcp-sandbox: secrets: TOK is bound to 'z.test', which network."
        "allowed_domains does not allow (--allow-domain z.test)"), "unallowed")
    loose = os.path.join(TMP, "loose")
    with open(loose, "w") as f:
        f.write(SECRET)
    os.chmod(loose, 0o644)
    eq(start("--allow-domain", "z.test", "--secret", "TOK=z.test:file:" + loose),
       (2, "mcp-sandbox: secrets: TOK: %s: group or others may read or write "
        "it (mode 0644): chmod 600 it" % loose), "mode")
    short = os.path.join(TMP, "short")
    with open(short, "w") as f:
        f.write("0123456789\n")
    os.chmod(short, 0o600)
    eq(start("--allow-domain", "z.test", "--secret", "TOK=z.test:file:" + short),
       (2, "mcp-sandbox: secrets: TOK: its value is 10 bytes: 16 to 4096 are "
        "taken (a shorter one's placeholder could be guessed)"), "short")


def case_print_config_and_logs(binary, unpriv):
    p = subprocess.run([binary] + COMMON + ["--print-config"], check=True,
                       capture_output=True, text=True, env={"PATH": PLAIN_PATH})
    cfg = json.loads(p.stdout)
    eq(cfg["secrets"][0], {"name": "TOK", "hosts": ["a.test:%d" % HTTPS,
       "a.test:%d" % HTTP, "x.test:%d" % HTTPS, "u.test:%d" % UNTRUSTED,
       "pypi.test:%d" % GIT],
       "from": "file:" + TOKF, "allow_http": False}, "print-config")
    expect(SECRET not in p.stdout + p.stderr and OTHER not in p.stdout,
           "no value printed")
    with open(AUDIT) as f:
        audit = f.read()
    expect(len(audit) > 0 and SECRET not in audit and OTHER not in audit,
           "no value in the audit log")


SHARED = [case_curl_swap_and_scrub, case_python_urllib_and_body,
          case_basic_credentials, case_git_clone,
          case_header_from_policy, case_unbound_not_intercepted,
          case_host_header_pinned, case_untrusted_upstream, case_name_mismatch,
          case_plain_http_refused, case_no_leak_in_sandbox]
OWN = [case_start_refusals, case_print_config_and_logs,
       case_no_value_in_a_core]


def main():
    global TMP, WS, HTTP, HTTPS, UNTRUSTED, COMMON, TOKF, PH, AUDIT, GIT
    global POLICY
    args = sys.argv[1:]
    unpriv = "--unpriv" in args
    args = [a for a in args if a != "--unpriv"]
    binary, wanted = os.path.abspath(args[0]), set(args[1:])
    if unpriv:
        if os.geteuid() != 0 or shutil.which("setpriv") is None:
            print("skip: --unpriv needs root and setpriv")
            return 77
        if not nobody_can("unshare", "-U", "true"):
            print("skip: uid 65534 cannot make a user namespace here")
            return 77
    TMP = tempfile.mkdtemp(prefix="secrets-test-")
    os.chmod(TMP, 0o755)
    WS = te.WS = os.path.join(TMP, "ws")
    os.mkdir(WS)
    ca, key, crt = te.make_ca(TMP)
    shutil.copy(ca, os.path.join(WS, "ca.pem"))
    os.chown(WS, 65534, 65534)
    ukey, ucrt = self_signed(TMP, "u.test")
    TOKF = os.path.join(TMP, "tok")
    with open(TOKF, "w") as f:
        f.write(SECRET + "\n")
    os.chmod(TOKF, 0o600)
    apif = os.path.join(TMP, "api")
    with open(apif, "w") as f:
        f.write(OTHER)
    os.chmod(apif, 0o600)
    if unpriv:
        for p in (TMP, TOKF, apif):
            os.chown(p, 65534, 65534)
    s, HTTPS = serve_tls(key, crt)
    # the forge: a bare repository, served statically, behind the value
    import base64
    src, bare = os.path.join(TMP, "src"), os.path.join(TMP, "forge",
                                                        "repo.git")
    genv = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
                GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
    for cmd in (["git", "init", "-q", src],
                ["git", "-C", src, "commit", "-q", "--allow-empty", "-m", "0"]):
        subprocess.run(cmd, check=True, env=genv)
    with open(os.path.join(src, "README"), "w") as f:
        f.write("from the forge\n")
    for cmd in (["git", "-C", src, "add", "README"],
                ["git", "-C", src, "commit", "-q", "-m", "1"],
                ["git", "clone", "-q", "--bare", src, bare],
                ["git", "-C", bare, "update-server-info"]):
        subprocess.run(cmd, check=True, env=genv)
    GitRepo.auth = "Basic " + base64.b64encode(
        ("x-access-token:" + SECRET).encode()).decode()
    forge = os.path.join(TMP, "forge")
    g, GIT = serve_tls(key, crt, lambda *a, **k: GitRepo(
        *a, directory=forge, **k))
    u, UNTRUSTED = serve_tls(ukey, ucrt)
    h, HTTP = te.serve(TMP)
    # good.w.test is a name of the test CA's certificate too (b.test's)
    policy = POLICY = os.path.join(TMP, "policy.json")
    with open(policy, "w") as f:
        json.dump({"secrets": [{"name": "API", "hosts": ["good.w.test:%d" % HTTPS],
                                "from": "file:" + apif,
                                "header": "Authorization",
                                "format": "Bearer {}"}]}, f)
    AUDIT = os.path.join(TMP, "audit.log")
    names = ["a.test:%d" % HTTPS, "a.test:%d" % HTTP, "b.test:%d" % HTTPS,
             "x.test:%d" % HTTPS, "u.test:%d" % UNTRUSTED, "good.w.test:%d" % HTTPS,
             "pypi.test:%d" % GIT]
    COMMON = ["--egress-ca", ca, "--max-timeout-ms", "60000",
              "--secret", "TOK=a.test:%d,a.test:%d,x.test:%d,u.test:%d,"
              "pypi.test:%d:file:%s" % (HTTPS, HTTP, HTTPS, UNTRUSTED, GIT, TOKF)]
    for n in names:
        COMMON += ["--allow-domain", n]
    for n in ("a.test", "b.test", "x.test", "u.test", "good.w.test", "pypi.test"):
        COMMON += ["--resolve", "%s:*:127.0.0.1" % n]
    failed = 0
    m = te.Mcp(binary, ["--config", policy] + COMMON, unpriv, audit=AUDIT)
    try:
        r = m.call("run_code", sh('printf "%s\\n%s" "$TOK" "$API"'))
        PH = out(r).split("\n")
        eq((len(PH), len(PH[0]), len(PH[1])), (2, len(SECRET), len(OTHER)),
           "placeholders: %r" % PH)
        for case in SHARED + OWN:
            name = case.__name__[5:]
            if wanted and name not in wanted:
                continue
            try:
                if case in OWN:
                    case(binary, unpriv)
                else:
                    case(m)
                print("ok   %s" % name)
            except (Fail, Exception) as e:
                failed += 1
                print("FAIL %s: %s: %s" % (name, type(e).__name__, e))
        m.close()
    finally:
        if m.p.poll() is None:
            m.p.kill()
        for srv in (s, u, h, g):
            srv.shutdown()
        shutil.rmtree(TMP, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
