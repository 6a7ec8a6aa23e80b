#!/usr/bin/env python3
"""The issue-24 benchmark: what adding a secret at the proxy costs.

In one run, one server, one sandboxed call that fetches the same small
page ROUNDS times each way from an HTTPS server on 127.0.0.1 (a test CA
made with openssl): through a plain CONNECT tunnel (a host no secret is
bound to, curl trusting the system's CAs and the test CA), and intercepted (a bound host: the
proxy ends the TLS, adds the value, connects over TLS of its own, scrubs
the answer). curl's own time_total of each fetch; medians and p90, the
difference and the ratio. Then the server's start to its first answer
with and without a bound secret (the CA is made and GnuTLS loaded at
start only when one is bound).

usage: secrets_bench.py BINARY [ROUNDS (<= 32)]   (root: the sandbox's netns)
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "egress"))
import test_secrets as ts  # noqa: E402  (its servers and fixtures)
import test_egress as te  # noqa: E402

PLAIN_PATH = te.PLAIN_PATH
BIG = 64 << 20          # bytes of the bulk row's one download each way


class Page(ts.Echo):
    """One small page in one write (the test's echo writes 5 bytes at a
    time, which delayed ACKs would make the figure)."""

    def setup(self):
        super().setup()
        import socket
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_GET(self):
        if self.path == "/big":
            self.send_response(200)
            self.send_header("Content-Length", str(BIG))
            self.end_headers()
            chunk = b"y" * (1 << 20)
            for _ in range(BIG >> 20):
                self.wfile.write(chunk)
            return
        body = b"x" * 512
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def serve(key, crt):
    import http.server
    import ssl
    import threading
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    srv.daemon_threads = True
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(crt, key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, srv.server_address[1]


def q(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p * len(v)))]


def start_ms(binary, args):
    """spawn to initialize answered, median of 15."""
    init = (json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                        "params": {"protocolVersion": "2025-11-25",
                                   "capabilities": {},
                                   "clientInfo": {"name": "b", "version": "1"}}})
            + "\n").encode()
    t = []
    for _ in range(15):
        t0 = time.perf_counter()
        p = subprocess.Popen([binary] + args, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             env={"PATH": PLAIN_PATH})
        p.stdin.write(init)
        p.stdin.flush()
        p.stdout.readline()
        t.append((time.perf_counter() - t0) * 1000)
        p.stdin.close()
        p.wait()
    return statistics.median(t)


def main():
    binary = os.path.abspath(sys.argv[1])
    # both ways in one call, within its 64 connections (max_connections)
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    if os.geteuid() != 0:
        print("secrets_bench: run as root", file=sys.stderr)
        return 2
    tmp = tempfile.mkdtemp(prefix="secrets-bench-")
    os.chmod(tmp, 0o755)
    ws = te.WS = os.path.join(tmp, "ws")
    os.mkdir(ws)
    ca, key, crt = te.make_ca(tmp)
    # the reference trusts a bundle of the same size as the sandbox's
    # (the system's CAs and one more): curl's load of it is ~15 ms of
    # each fetch, which the two ways must share
    with open(os.path.join(ws, "ca.pem"), "w") as f:
        with open("/etc/ssl/certs/ca-certificates.crt") as s:
            f.write(s.read())
        with open(ca) as s:
            f.write(s.read())
    os.chown(ws, 65534, 65534)
    tok = os.path.join(tmp, "tok")
    with open(tok, "w") as f:
        f.write(ts.SECRET)
    os.chmod(tok, 0o600)
    srv, port = serve(key, crt)
    base = ["--allow-domain", "a.test:%d" % port, "--allow-domain",
            "b.test:%d" % port, "--resolve", "a.test:*:127.0.0.1",
            "--resolve", "b.test:*:127.0.0.1", "--egress-ca", ca,
            "--max-timeout-ms", "60000"]
    args = base + ["--secret", "TOK=a.test:%d:file:%s" % (port, tok)]
    m = te.Mcp(binary, args, False)
    fetch = ('for i in $(seq %d); do curl -sS -o /dev/null -w "%%{time_total}\\n" '
             '%s https://%s:%d/x; done')
    bulk = ('; echo ---; curl -sS -o /dev/null -w "%%{speed_download}\n" '
            '--cacert /workspace/ca.pem https://b.test:%d/big; '
            'curl -sS -o /dev/null -w "%%{speed_download}\n" '
            'https://a.test:%d/big' % (port, port))
    code = (fetch % (rounds, "--cacert /workspace/ca.pem", "b.test", port) +
            "; echo ---; " + fetch % (rounds, '-H "X-Tok: $TOK"', "a.test", port)
            + bulk)
    try:
        r = m.call("run_code", {"language": "sh", "code": code,
                                "network": True, "timeout_ms": 60000})
        m.close()
    finally:
        if m.p.poll() is None:
            m.p.kill()
        srv.shutdown()
    out = r["structuredContent"]["stdout"]
    tun, icp, big = out.split("---\n")
    btun, bicp = [float(x) / 1e6 for x in big.split()]
    tun = [float(x) * 1000 for x in tun.split()]
    icp = [float(x) * 1000 for x in icp.split()]
    if len(tun) != rounds or len(icp) != rounds:
        print("secrets_bench: %d and %d fetches of %d: %r" % (
            len(tun), len(icp), rounds, r["structuredContent"]), file=sys.stderr)
        return 2
    n_icp = sum(1 for c in r["structuredContent"]["network"]["connections"]
                if c.get("intercepted"))
    print("load: %s on %d CPUs; %d fetches each way, %d intercepted" % (
        " ".join(open("/proc/loadavg").read().split()[:3]), os.cpu_count(),
        rounds, n_icp))
    mt, mi = statistics.median(tun), statistics.median(icp)
    print("| HTTPS fetch through the proxy (curl time_total) | p50 | p90 |")
    print("|---|---|---|")
    print("| tunnel, no secret (reference) | %.2f ms | %.2f ms |" % (mt, q(tun, .9)))
    print("| intercepted, a secret added | %.2f ms | %.2f ms |" % (mi, q(icp, .9)))
    print("| difference, ratio | +%.2f ms | %.2fx |" % (mi - mt, mi / mt))
    print("| %d MiB download, tunnel / intercepted | %.0f MB/s | %.0f MB/s "
          "(%.2fx) |" % (BIG >> 20, btun, bicp, bicp / btun))
    s0, s1 = start_ms(binary, base), start_ms(binary, args)
    print("| start to initialize answered: without a secret (reference) / "
          "with one | %.2f ms | %.2f ms (+%.2f ms, %.2fx) |" % (
              s0, s1, s1 - s0, s1 / s0))
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
