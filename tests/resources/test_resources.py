"""Results a model can see (issue 16), through the real binary on both
transports and both eras: the files a run made (structuredContent.files and
a text line each), images as image content whose bytes are the file's, the
caps and the resource_link past them, read_file of an image, the workspace
as resources (list with pages, read, templates, subscriptions), one
session's workspace invisible to another, and every confinement attack of
the file tools repeated through resources/read.

usage: test_resources.py MCP_SANDBOX_BIN [--unpriv] [unittest args]

--unpriv runs the servers as uid 65534 (exit 77 when that cannot be done);
then the attacks and the schema check run, not the result shapes."""
import base64
import json
import os
import re
import select
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
# the helpers the test scripts share: tests/lib
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
from http_client import (MODERN, Server, initialize_body,  # noqa: E402
                         modern_headers, modern_meta)
from mcptest import SETPRIV_NOBODY, nobody_can, poll_until  # noqa: E402

BIN = None
UNPRIV = False
PLAIN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# Longest wait for one stdio response line (a deadline, not a timing check).
READ_DEADLINE_S = 30

# The caps in tools/workspace_files.h and server/session.h.
IMAGE_MAX = 256 * 1024
RESULT_MAX = 768 * 1024
MAX_IMAGES = 8
MAX_LISTED = 64
PAGE = 100          # WSR_PAGE_SIZE, tools/workspace_resources.h
PREFIX = "file:///workspace/"

# A pure-Python PNG encoder run inside the sandbox: 4x3 red pixels.
PNG_CODE = r'''
import struct, zlib
def chunk(t, d):
    return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
w, h = 4, 3
raw = b"".join(b"\x00" + b"\xff\x00\x00" * w for _ in range(h))
png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
       + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
open("plot.png", "wb").write(png)
print(len(png))
'''

# The sandbox's /etc holds only passwd, group and hosts, so Debian's
# /etc/matplotlibrc is not there: point matplotlib at the copy in its data
# folder, and its cache at the private /tmp.
MATPLOTLIB_CODE = r'''
import os
os.environ["MATPLOTLIBRC"] = "/usr/share/matplotlib/mpl-data"
os.environ["MPLCONFIGDIR"] = "/tmp/mpl"
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
plt.plot([1, 2, 3], [1, 4, 9])
plt.title("squares")
plt.savefig("chart.png")
'''

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def matplotlib_present():
    env = {"PATH": PLAIN_PATH}
    return subprocess.run(["python3", "-c", "import matplotlib"], env=env,
                          capture_output=True).returncode == 0


def server_cmd(flags):
    cmd = [BIN, *flags]
    return SETPRIV_NOBODY + cmd if UNPRIV else cmd


class Stdio:
    """One stdio server; rpc() returns (response, notifications before it)."""

    def __init__(self, flags, modern=False):
        self.modern = modern
        self.proc = subprocess.Popen(server_cmd(flags), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL,
                                     env={"PATH": PLAIN_PATH})
        self.buf = b""
        self.id = 0
        if not modern:
            r, _ = self.rpc("initialize", initialize_body()["params"])
            assert "result" in r, r
            self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()

    def line(self):
        deadline = time.monotonic() + READ_DEADLINE_S
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError("no response line")
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise EOFError("server closed stdout")
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return json.loads(line)

    def rpc(self, method, params=None):
        self.id += 1
        params = dict(params or {})
        if self.modern:
            params["_meta"] = modern_meta()
        self.send({"jsonrpc": "2.0", "id": self.id, "method": method,
                   "params": params})
        notes = []
        while True:
            m = self.line()
            if m.get("id") == self.id:
                return m, notes
            notes.append(m)

    def close(self):
        self.proc.stdin.close()
        assert self.proc.wait(timeout=READ_DEADLINE_S) == 0
        self.proc.stdout.close()


class Http:
    """One HTTP server: a legacy session, or stateless 2026-07-28 requests."""

    def __init__(self, flags, modern=False, srv=None, token=None):
        self.modern = modern
        self.own = srv is None
        self.auth = {"Authorization": "Bearer " + token} if token else {}
        if srv is not None:
            self.srv = srv
        elif UNPRIV:
            self.srv = UnprivServer(flags)
        else:
            self.srv = Server(BIN, *flags, fixtures=False)
        self.id = 0
        self.sid = None
        if not modern:
            r = self.srv.post(initialize_body(), dict(self.auth))
            assert r.status == 200, (r.status, r.body)
            self.sid = r.header("Mcp-Session-Id")
            self.srv.post({"jsonrpc": "2.0",
                           "method": "notifications/initialized"},
                          dict(self.auth, **{"Mcp-Session-Id": self.sid}))

    def rpc(self, method, params=None):
        self.id += 1
        params = dict(params or {})
        if self.modern:
            params["_meta"] = modern_meta()
            name = params.get("uri") if method == "resources/read" else \
                params.get("name") if method == "tools/call" else None
            h = modern_headers(method, name)
        else:
            h = {"Mcp-Session-Id": self.sid}
        h.update(self.auth)
        r = self.srv.post({"jsonrpc": "2.0", "id": self.id, "method": method,
                           "params": params}, h)
        msgs = r.events() if r.header("Content-Type") == \
            "text/event-stream" else [r.json()]
        return msgs[-1], msgs[:-1]

    def close(self):
        if self.own:
            assert self.srv.stop() == 0


class UnprivServer(Server):
    """Server() with the binary run as uid 65534."""

    def __init__(self, flags):
        # Server() runs [binary, --http ...]; setpriv takes the binary as
        # its argument, so the flags follow the real binary through a shim
        self.shim = tempfile.NamedTemporaryFile("w", suffix=".sh",
                                                delete=False)
        self.shim.write("#!/bin/sh\nexec %s %s \"$@\"\n" % (
            " ".join(SETPRIV_NOBODY), BIN))
        self.shim.close()
        os.chmod(self.shim.name, 0o755)
        super().__init__(self.shim.name, *flags, fixtures=False)

    def stop(self):
        try:
            return super().stop()
        finally:
            os.unlink(self.shim.name)


def text_of(result):
    return [b["text"] for b in result["content"] if b["type"] == "text"]


def blocks(result, kind):
    return [b for b in result["content"] if b["type"] == kind]


# The host uid sandboxed programs run as under a root server
# (SB_DEFAULT_UID), and the uid of an --unpriv server: a user's workspace
# must be theirs to write.
SANDBOX_UID = 65534


def make_workspace():
    d = tempfile.mkdtemp(prefix="mcp-res-test-")
    os.chmod(d, 0o755)
    if os.geteuid() == 0:
        os.chown(d, SANDBOX_UID, SANDBOX_UID)
    return d


TRANSPORTS = [("stdio", Stdio, False), ("stdio-2026", Stdio, True),
              ("http", Http, False), ("http-2026", Http, True)]


class Confinement(unittest.TestCase):
    """The file tools' attacks, through resources/read, on every transport
    and era: only files of the workspace come back; everything else is an
    error with the uri in its data, and nothing blocks."""

    @classmethod
    def setUpClass(cls):
        cls.outside = tempfile.mkdtemp(prefix="mcp-res-outside-")
        with open(os.path.join(cls.outside, "secret"), "w") as f:
            f.write("host secret\n")
        os.chmod(cls.outside, 0o755)
        os.chmod(os.path.join(cls.outside, "secret"), 0o644)
        cls.ws = make_workspace()
        w = cls.ws
        with open(os.path.join(w, "real"), "w") as f:
            f.write("inside\n")
        os.makedirs(os.path.join(w, "d", "e"))
        with open(os.path.join(w, "d", "e", "f.txt"), "w") as f:
            f.write("deep\n")
        with open(os.path.join(w, "big.bin"), "wb") as f:
            f.write(b"\x00" * 5000)
        os.symlink(os.path.join(cls.outside, "secret"), os.path.join(w, "out"))
        os.symlink("../../../../../../" + cls.outside.lstrip("/"),
                   os.path.join(w, "up"))
        os.symlink("real", os.path.join(w, "alias"))
        os.symlink("/proc/self/root" + cls.outside + "/secret",
                   os.path.join(w, "magic"))
        os.symlink("/dev/zero", os.path.join(w, "zero"))
        os.mkfifo(os.path.join(w, "pipe"))
        cls.have_dev = False
        if os.geteuid() == 0:
            os.mknod(os.path.join(w, "null"), 0o666 | stat.S_IFCHR,
                     os.makedev(1, 3))
            cls.have_dev = True
        for root, dirs, files in os.walk(w):
            for n in dirs + files:
                p = os.path.join(root, n)
                if not os.path.islink(p) and UNPRIV:
                    os.lchown(p, SANDBOX_UID, SANDBOX_UID)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.ws)
        shutil.rmtree(cls.outside)

    def each(self, fn):
        for name, cls, modern in TRANSPORTS:
            t = cls(["--workspace", self.ws, "--read-cap", "4096"], modern)
            try:
                with self.subTest(transport=name):
                    fn(t, modern)
            finally:
                t.close()

    def refused(self, t, uri, words):
        r, _ = t.rpc("resources/read", {"uri": uri})
        self.assertIn("error", r, (uri, r))
        self.assertEqual(r["error"]["code"], -32602, (uri, r))
        self.assertIn(words, r["error"]["message"], uri)
        self.assertEqual(r["error"]["data"], {"uri": uri})
        self.assertNotIn("host secret", json.dumps(r))

    def test_attacks(self):
        def run(t, modern):
            outside = "is outside the workspace"
            # absolute paths, spelled every way a uri can
            self.refused(t, PREFIX + "/etc/passwd", outside)
            self.refused(t, PREFIX + "%2Fetc%2Fpasswd", outside)
            self.refused(t, PREFIX + self.outside.lstrip("/").replace(
                "/", "%2F").join(["%2F", "%2Fsecret"]), outside)
            # '..' above the root, plain and encoded
            self.refused(t, PREFIX + "../../../../etc/passwd", outside)
            self.refused(t, PREFIX + "%2e%2e/%2e%2e/%2e%2e/etc/passwd",
                         outside)
            self.refused(t, PREFIX + "d/../../etc/passwd", outside)
            # symlinks pointing out, directly and as a directory
            self.refused(t, PREFIX + "out", outside)
            self.refused(t, PREFIX + "up/secret", outside)
            self.refused(t, PREFIX + "magic", outside)
            self.refused(t, PREFIX + "zero", outside)
            # what is not a regular file: refused before any open
            self.refused(t, PREFIX + "pipe", "not a regular file")
            if self.have_dev:
                self.refused(t, PREFIX + "null", "not a regular file")
            self.refused(t, PREFIX + "d", "is a directory")
            # the read bound (--read-cap 4096)
            self.refused(t, PREFIX + "big.bin", "larger than the read "
                         "limit of 4096 bytes")
            # a NUL would cut the path: not a uri of ours
            r, _ = t.rpc("resources/read", {"uri": PREFIX + "real%00.txt"})
            self.assertEqual(r["error"]["code"], -32602 if modern else -32002)
            self.assertEqual(r["error"]["message"],
                             "Resource not found: " + PREFIX + "real%00.txt")
            # other schemes and hosts name nothing here
            for uri in ("file:///etc/passwd", "file://host/workspace/real",
                        PREFIX + "real?x", PREFIX + "real#x", PREFIX,
                        "http://127.0.0.1/"):
                r, _ = t.rpc("resources/read", {"uri": uri})
                self.assertEqual(r["error"]["code"],
                                 -32602 if modern else -32002, uri)
                self.assertEqual(r["error"]["data"], {"uri": uri})
            # what stays inside works: '..' that stays, a link inside
            for uri, want in ((PREFIX + "d/../real", "inside\n"),
                              (PREFIX + "alias", "inside\n"),
                              (PREFIX + "d/e/f.txt", "deep\n"),
                              (PREFIX + "d/e/%66.txt", "deep\n")):
                r, _ = t.rpc("resources/read", {"uri": uri})
                self.assertEqual(r["result"]["contents"], [
                    {"uri": uri, "mimeType": "text/plain", "text": want}])
            # the listing shows regular files only, links never followed
            r, _ = t.rpc("resources/list")
            names = [x["name"] for x in r["result"]["resources"]]
            self.assertEqual(names, ["big.bin", "d/e/f.txt", "real"])
            # resources/read with no uri or a wrong type
            r, _ = t.rpc("resources/read", {"uri": 7})
            self.assertEqual(r["error"]["code"], -32602)
        self.each(run)


class ToolResults(unittest.TestCase):
    """What a run made, as the model gets it."""

    @classmethod
    def setUpClass(cls):
        if UNPRIV:
            raise unittest.SkipTest("runs sandboxes as root only")

    def setUp(self):
        self.ws = make_workspace()

    def tearDown(self):
        shutil.rmtree(self.ws)

    def file(self, name):
        with open(os.path.join(self.ws, name), "rb") as f:
            return f.read()

    def run_code(self, t, code, lang="python3"):
        r, notes = t.rpc("tools/call", {"name": "run_code", "arguments": {
            "language": lang, "code": code}})
        self.assertIn("result", r, r)
        return r["result"], notes

    def each(self, fn, flags=()):
        for name, cls, modern in TRANSPORTS:
            for n in os.listdir(self.ws):
                p = os.path.join(self.ws, n)
                shutil.rmtree(p) if os.path.isdir(p) else os.unlink(p)
            t = cls(["--workspace", self.ws, *flags], modern)
            try:
                with self.subTest(transport=name):
                    fn(t, modern)
            finally:
                t.close()

    def test_png_from_pure_python_comes_back_as_its_bytes(self):
        def run(t, modern):
            res, _ = self.run_code(t, PNG_CODE)
            png = self.file("plot.png")
            self.assertTrue(png.startswith(PNG_MAGIC))
            self.assertEqual(res["structuredContent"]["files"], [
                {"path": "plot.png", "size": len(png), "type": "image/png",
                 "uri": PREFIX + "plot.png"}])
            self.assertEqual(res["structuredContent"]["files_omitted"], 0)
            img = blocks(res, "image")
            self.assertEqual(len(img), 1)
            self.assertEqual(img[0]["mimeType"], "image/png")
            self.assertEqual(base64.b64decode(img[0]["data"]), png)
            self.assertEqual(text_of(res)[1], "Files created or changed "
                             "(1):\n- plot.png (%d bytes, image/png; shown "
                             "below as an image)" % len(png))
            # the uri of the listing resolves to the same bytes
            r, _ = t.rpc("resources/read", {"uri": PREFIX + "plot.png"})
            c = r["result"]["contents"][0]
            self.assertEqual((c["mimeType"], base64.b64decode(c["blob"])),
                             ("image/png", png))
            # and read_file of it is an image too
            r, _ = t.rpc("tools/call", {"name": "read_file",
                                        "arguments": {"path": "plot.png"}})
            img = blocks(r["result"], "image")
            self.assertEqual(base64.b64decode(img[0]["data"]), png)
            self.assertEqual(text_of(r["result"]), [
                "'plot.png': image/png, %d bytes (the image follows)." %
                len(png)])
        self.each(run)

    def test_matplotlib_agg_plot_comes_back_as_an_image(self):
        if not matplotlib_present():
            self.skipTest("python3-matplotlib is not installed")
        t = Stdio(["--workspace", self.ws, "--timeout-ms", "60000"])
        try:
            res, _ = self.run_code(t, MATPLOTLIB_CODE)
            self.assertNotIn("isError", res, res)
            png = self.file("chart.png")
            img = blocks(res, "image")
            self.assertEqual(len(img), 1)
            self.assertEqual(base64.b64decode(img[0]["data"]), png)
            self.assertEqual(res["structuredContent"]["files"][0]["path"],
                             "chart.png")
        finally:
            t.close()

    def test_text_files_are_listed_and_unchanged_ones_are_not(self):
        def run(t, modern):
            with open(os.path.join(self.ws, "old.txt"), "w") as f:
                f.write("kept\n")
            res, _ = self.run_code(t, "mkdir -p out; printf 'a,b\\n1,2\\n' > "
                                   "out/table.csv; echo hi > notes.txt; "
                                   "ln -s /etc/passwd link; mkfifo fifo",
                                   "sh")
            self.assertEqual(res["structuredContent"]["files"], [
                {"path": "notes.txt", "size": 3, "type": "text/plain",
                 "uri": PREFIX + "notes.txt"},
                {"path": "out/table.csv", "size": 8, "type": "text/plain",
                 "uri": PREFIX + "out/table.csv"}])
            self.assertEqual(text_of(res)[1], "Files created or changed "
                             "(2):\n- notes.txt (3 bytes, text/plain)\n"
                             "- out/table.csv (8 bytes, text/plain)")
            self.assertEqual(blocks(res, "image"), [])
            # a run that changes one of them lists that one only
            res, _ = self.run_code(t, "echo more >> notes.txt; cat old.txt",
                                   "sh")
            self.assertEqual([f["path"] for f in
                              res["structuredContent"]["files"]],
                             ["notes.txt"])
            # a run that changes nothing lists nothing, with no extra text
            res, _ = self.run_code(t, "cat notes.txt >/dev/null", "sh")
            self.assertEqual(res["structuredContent"]["files"], [])
            self.assertEqual(len(res["content"]), 1)
        self.each(run)

    def test_type_comes_from_the_bytes_not_the_name(self):
        def run(t, modern):
            res, _ = self.run_code(t, (
                "open('fake.png','w').write('not a picture\\n')\n"
                "open('noext','wb').write(b'GIF89a' + bytes(20))\n"
                "open('photo.txt','wb').write(b'\\xff\\xd8\\xff\\xe0' + "
                "bytes(30))\n"
                "open('w.dat','wb').write(b'RIFF\\x10\\0\\0\\0WEBPVP8 ' + "
                "bytes(8))\n"
                "open('b.png','wb').write(b'\\x89PNG\\r\\n\\x1a')\n"))
            files = {f["path"]: f["type"] for f in
                     res["structuredContent"]["files"]}
            self.assertEqual(files, {
                "b.png": "application/octet-stream",  # magic cut short
                "fake.png": "text/plain", "noext": "image/gif",
                "photo.txt": "image/jpeg", "w.dat": "image/webp"})
            got = sorted((b["mimeType"], base64.b64decode(b["data"]))
                         for b in blocks(res, "image"))
            self.assertEqual(got, sorted([
                ("image/gif", self.file("noext")),
                ("image/jpeg", self.file("photo.txt")),
                ("image/webp", self.file("w.dat"))]))
            # read_file of the fake is text, of the real one an image
            r, _ = t.rpc("tools/call", {"name": "read_file",
                                        "arguments": {"path": "fake.png"}})
            self.assertEqual(r["result"]["content"], [
                {"type": "text", "text": "not a picture\n"}])
        self.each(run)

    def test_caps_and_the_resource_link_past_them(self):
        def run(t, modern):
            # one over the per-image cap; four that together pass the
            # per-result cap; ten small ones past the image count
            res, _ = self.run_code(t, (
                "M = b'\\x89PNG\\r\\n\\x1a\\n'\n"
                "open('a_big.png','wb').write(M + bytes(%d))\n"
                "for i in range(4):\n"
                "    open('b%%d.png' %% i,'wb').write(M + bytes(%d))\n"
                % (IMAGE_MAX, 200 * 1024)))
            big = self.file("a_big.png")
            links = blocks(res, "resource_link")
            imgs = blocks(res, "image")
            # a_big is linked; b0..b2 fit 3 x 200 KiB < 768 KiB, b3 not
            self.assertEqual(len(imgs), 3)
            self.assertEqual([b["uri"] for b in links],
                             [PREFIX + "a_big.png", PREFIX + "b3.png"])
            self.assertEqual(links[0], {
                "type": "resource_link", "uri": PREFIX + "a_big.png",
                "name": "a_big.png", "mimeType": "image/png",
                "size": len(big)})
            self.assertIn("- a_big.png (%d bytes, image/png; too large to "
                          "show here: linked below (resources/read))" %
                          len(big), text_of(res)[1])
            # the link resolves to the file (within the read cap)
            r, _ = t.rpc("resources/read", {"uri": links[0]["uri"]})
            self.assertEqual(base64.b64decode(
                r["result"]["contents"][0]["blob"]), big)
            total = sum(len(base64.b64decode(b["data"])) for b in imgs)
            self.assertLessEqual(total, RESULT_MAX)
            res, _ = self.run_code(t, (
                "for i in range(10):\n"
                "    open('s%d.png' % i,'wb').write(b'\\x89PNG\\r\\n\\x1a\\n')\n"))
            self.assertEqual(len(blocks(res, "image")), MAX_IMAGES)
            self.assertEqual([b["uri"] for b in blocks(res, "resource_link")],
                             [PREFIX + "s8.png", PREFIX + "s9.png"])
        self.each(run, ["--read-cap", str(4 << 20)])

    def test_listing_cap_counts_the_rest(self):
        def run(t, modern):
            res, _ = self.run_code(t, "for i in $(seq 1 70); do "
                                   "echo $i > f$(printf %03d $i); done", "sh")
            sc = res["structuredContent"]
            self.assertEqual(len(sc["files"]), MAX_LISTED)
            self.assertEqual(sc["files"][0]["path"], "f001")
            self.assertEqual(sc["files_omitted"], 70 - MAX_LISTED)
            self.assertTrue(text_of(res)[1].startswith(
                "Files created or changed (70):\n- f001 (2 bytes"))
            self.assertTrue(text_of(res)[1].endswith("\n- and 6 more, not "
                                                     "listed"))
        self.each(run)

    def test_list_pages_and_templates(self):
        def run(t, modern):
            for i in range(2 * PAGE + 50):
                with open(os.path.join(self.ws, "n%03d" % i), "w") as f:
                    f.write("x")
            seen, cursor, pages = [], None, 0
            while True:
                r, _ = t.rpc("resources/list",
                             {"cursor": cursor} if cursor else {})
                res = r["result"]
                pages += 1
                seen += [x["name"] for x in res["resources"]]
                if modern:
                    self.assertEqual((res["ttlMs"], res["cacheScope"]),
                                     (0, "private"))
                if "nextCursor" not in res:
                    break
                cursor = res["nextCursor"]
            self.assertEqual(pages, 3)
            self.assertEqual(seen, ["n%03d" % i for i in range(2 * PAGE + 50)])
            self.assertEqual(r["result"]["resources"][-1], {
                "uri": PREFIX + "n249", "name": "n249",
                "mimeType": "text/plain", "size": 1})
            r, _ = t.rpc("resources/list", {"cursor": "!!"})
            self.assertEqual(r["error"]["code"], -32602)
            r, _ = t.rpc("resources/templates/list")
            self.assertEqual([x["uriTemplate"] for x in
                              r["result"]["resourceTemplates"]],
                             ["file:///workspace/{+path}"])
        self.each(run)

    def test_content_only_leaves_the_model_text_and_images(self):
        """--content-only: what clients that show the model only
        structuredContent (Claude Code, Codex, opencode) need for the
        image to reach it."""
        def run(t, modern):
            r, _ = t.rpc("tools/list")
            tools = {x["name"]: x for x in r["result"]["tools"]}
            self.assertEqual([n for n, x in tools.items()
                              if "outputSchema" in x], [])
            res, _ = self.run_code(t, PNG_CODE)
            self.assertNotIn("structuredContent", res)
            png = self.file("plot.png")
            self.assertEqual([b["type"] for b in res["content"]],
                             ["text", "text", "image"])
            self.assertEqual(res["content"][0]["text"],
                             "The code exited with status 0.\n--- stdout "
                             "---\n%d\n" % len(png))
            self.assertEqual(base64.b64decode(res["content"][2]["data"]),
                             png)
        self.each(run, ["--content-only"])
        # subscriptions still see what changed
        t = Stdio(["--workspace", self.ws, "--content-only"])
        try:
            t.rpc("resources/subscribe", {"uri": PREFIX + "plot.png"})
            _, notes = self.run_code(t, PNG_CODE)
            self.assertEqual([n["params"]["uri"] for n in notes],
                             [PREFIX + "plot.png"])
        finally:
            t.close()

    def test_subscriptions_tell_of_changes_by_a_call(self):
        for name, cls in (("stdio", Stdio), ("http", Http)):
            t = cls(["--workspace", self.ws])
            try:
                with self.subTest(transport=name):
                    uri = PREFIX + "watched-%s.txt" % name
                    r, _ = t.rpc("resources/subscribe", {"uri": uri})
                    self.assertEqual(r["result"], {})
                    _, notes = self.run_code(
                        t, "echo 1 > watched-%s.txt; echo 2 > other" % name,
                        "sh")
                    self.assertEqual(notes, [{
                        "jsonrpc": "2.0",
                        "method": "notifications/resources/updated",
                        "params": {"uri": uri}}])
                    # write_file is a tool call that changes files too
                    r, notes = t.rpc("tools/call", {
                        "name": "write_file", "arguments": {
                            "path": "watched-%s.txt" % name,
                            "content": "3"}})
                    self.assertEqual([n["params"]["uri"] for n in notes],
                                     [uri])
                    # a call that leaves it alone says nothing
                    _, notes = self.run_code(t, "echo 3 > other", "sh")
                    self.assertEqual(notes, [])
                    t.rpc("resources/unsubscribe", {"uri": uri})
                    _, notes = self.run_code(
                        t, "echo 4 > watched-%s.txt" % name, "sh")
                    self.assertEqual(notes, [])
                    r, _ = t.rpc("resources/subscribe",
                                 {"uri": "https://example.org/x"})
                    self.assertEqual(r["error"]["code"], -32602)
            finally:
                t.close()
        # 2026-07-28 has no resources/subscribe (subscriptions/listen)
        t = Stdio(["--workspace", self.ws], modern=True)
        try:
            r, _ = t.rpc("resources/subscribe", {"uri": PREFIX + "x"})
            self.assertEqual(r["error"]["code"], -32601)
        finally:
            t.close()


class ReportAttacks(unittest.TestCase):
    """A program trying to get a host file into its result through the
    report of what it made: a planted symlink, and a file swapped for one
    while another call's report reads it. Run as root and (--unpriv) with
    the server as uid 65534. The secret starts with a PNG signature, so if
    its bytes were ever read they would come back as an image."""

    SECRET = PNG_MAGIC + b"host-secret-" + b"s" * 64
    MAX_SWAPS = 200000  # bound on the swapping call's rounds
    READERS = 10        # calls whose reports read while it swaps
    MAX_WAIT = 100000   # a reader's checks of the count before it gives up

    @classmethod
    def setUpClass(cls):
        cls.outside = tempfile.mkdtemp(prefix="mcp-res-secret-")
        os.chmod(cls.outside, 0o755)
        cls.secret = os.path.join(cls.outside, "secret.png")
        with open(cls.secret, "wb") as f:
            f.write(cls.SECRET)
        os.chmod(cls.secret, 0o644)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.outside)

    def setUp(self):
        self.ws = make_workspace()

    def tearDown(self):
        shutil.rmtree(self.ws)

    def leaked(self, msg):
        text = json.dumps(msg)
        if "host-secret" in text:
            return True
        for b in msg.get("result", {}).get("content", []):
            if b.get("type") == "image" and \
                    base64.b64decode(b["data"]) == self.SECRET:
                return True
        return False

    def test_a_planted_symlink_is_not_reported_or_read(self):
        t = Stdio(["--workspace", self.ws])
        try:
            r, _ = t.rpc("tools/call", {"name": "run_code", "arguments": {
                "language": "sh", "code": "ln -s %s leak.png; ln -s %s "
                "dir; echo x > ok.txt" % (self.secret, self.outside)}})
            self.assertFalse(self.leaked(r))
            self.assertEqual([f["path"] for f in
                              r["result"]["structuredContent"]["files"]],
                             ["ok.txt"])
            r, _ = t.rpc("resources/list")
            self.assertEqual([x["name"] for x in r["result"]["resources"]],
                             ["ok.txt"])
        finally:
            t.close()

    def test_a_file_swapped_for_a_symlink_is_never_followed(self):
        # The swapping call runs until the last reader writes "stop" (or
        # MAX_SWAPS rounds), turning race.png from a PNG into a link to the
        # secret and back, and counting its rounds in "count". Each reader
        # waits inside its sandbox until the count moves, so race.png
        # changed between the two walks of its report, which then reads
        # whatever race.png is at that moment.
        swap = (
            "import os\n"
            "png = %r\n"
            "n = 0\n"
            "while n < %d and not os.path.exists('stop'):\n"
            "    open('t.png', 'wb').write(png)\n"
            "    os.replace('t.png', 'race.png')\n"
            "    os.symlink(%r, 's.png')\n"
            "    os.replace('s.png', 'race.png')\n"
            "    n += 1\n"
            "    open('c.tmp', 'w').write(str(n))\n"
            "    os.replace('c.tmp', 'count')\n"
            "print('swapped', n)\n" % (PNG_MAGIC + b"mine", self.MAX_SWAPS,
                                        self.secret))
        wait = ("a=$(cat count); i=0; while [ \"$(cat count)\" = \"$a\" ] "
                "&& [ $i -lt %d ]; do i=$((i+1)); done; "
                "[ $i -lt %d ] || exit 3; " % (self.MAX_WAIT, self.MAX_WAIT))
        t = Stdio(["--workspace", self.ws, "--timeout-ms", "60000"])
        try:
            t.id += 1
            swap_id = t.id
            t.send({"jsonrpc": "2.0", "id": swap_id, "method": "tools/call",
                    "params": {"name": "run_code", "arguments": {
                        "language": "python3", "code": swap}}})
            started = os.path.join(self.ws, "count")
            self.assertTrue(poll_until(lambda: os.path.exists(started)),
                            "the swapper ran")
            seen = []
            for i in range(self.READERS):
                last = i == self.READERS - 1
                r, others = t.rpc("tools/call", {
                    "name": "run_code", "arguments": {
                        "language": "sh", "code": wait + "echo %d > n.txt%s"
                        % (i, "; touch stop" if last else "")}})
                seen += [r] + others
                self.assertFalse(self.leaked(r), r)
                # the swapper moved on while this reader ran
                self.assertNotIn("isError", r["result"], r)
            swapper = [m for m in seen if m.get("id") == swap_id]
            if not swapper:
                swapper = [t.line()]
            self.assertEqual(swapper[0]["id"], swap_id)
            m = re.match(r"^swapped (\d+)\n$", swapper[0]["result"]
                         ["structuredContent"]["stdout"])
            self.assertIsNotNone(m, swapper[0])
            self.assertGreaterEqual(int(m.group(1)), self.READERS)
            self.assertFalse(any(self.leaked(m) for m in seen + swapper))
            # and what is there now reads as the link it is: refused
            r, _ = t.rpc("resources/read", {"uri": PREFIX + "race.png"})
            self.assertEqual(r["error"]["code"], -32602)
            self.assertFalse(self.leaked(r))
        finally:
            t.close()


class Schemas(unittest.TestCase):
    """No schema in tools/list says "type" with an array: the MCP
    Inspector's --strict mode warns about those (issue 16)."""

    def test_no_type_arrays(self):
        def arrays(node, where):
            if isinstance(node, dict):
                for k, v in node.items():
                    if k == "type" and isinstance(v, list):
                        yield where
                    yield from arrays(v, where + "/" + k)
            elif isinstance(node, list):
                for i, v in enumerate(node):
                    yield from arrays(v, "%s/%d" % (where, i))
        t = Stdio(["--conformance-fixtures"])
        try:
            r, _ = t.rpc("tools/list")
            tools = r["result"]["tools"]
            self.assertGreater(len(tools), 9)
            self.assertEqual([w for x in tools for w in arrays(x, x["name"])],
                             [])
            self.assertIn("files", {n for x in tools if x["name"] ==
                                    "run_code" for n in
                                    x["outputSchema"]["properties"]})
        finally:
            t.close()


class PerSession(unittest.TestCase):
    """Fresh workspaces: one HTTP session's files are not another's."""

    @classmethod
    def setUpClass(cls):
        if UNPRIV:
            raise unittest.SkipTest("runs sandboxes as root only")

    def test_sessions_do_not_see_each_others_files(self):
        srv = Server(BIN, fixtures=False)
        try:
            a, b = Http([], srv=srv), Http([], srv=srv)
            r, _ = a.rpc("tools/call", {"name": "write_file", "arguments": {
                "path": "mine.txt", "content": "a's"}})
            self.assertNotIn("isError", r["result"])
            r, _ = a.rpc("resources/list")
            self.assertEqual([x["name"] for x in r["result"]["resources"]],
                             ["mine.txt"])
            r, _ = b.rpc("resources/list")
            self.assertEqual(r["result"]["resources"], [])
            r, _ = b.rpc("resources/read", {"uri": PREFIX + "mine.txt"})
            self.assertEqual(r["error"]["code"], -32002)
            r, _ = a.rpc("resources/read", {"uri": PREFIX + "mine.txt"})
            self.assertEqual(r["result"]["contents"][0]["text"], "a's")
        finally:
            self.assertEqual(srv.stop(), 0)


class PerPrincipal(unittest.TestCase):
    """Stateless (2026-07-28) requests share a workspace per principal
    (bearer token): one principal's files are not another's resources."""

    TOKEN_A = "a" * 40
    TOKEN_B = "b" * 40

    @classmethod
    def setUpClass(cls):
        if UNPRIV:
            raise unittest.SkipTest("runs sandboxes as root only")

    def test_principals_do_not_see_each_others_files(self):
        tokens = tempfile.NamedTemporaryFile("w", delete=False)
        tokens.write("%s\n%s\n" % (self.TOKEN_A, self.TOKEN_B))
        tokens.close()
        srv = Server(BIN, "--token-file", tokens.name, fixtures=False)
        try:
            a = Http([], modern=True, srv=srv, token=self.TOKEN_A)
            b = Http([], modern=True, srv=srv, token=self.TOKEN_B)
            r, _ = a.rpc("tools/call", {"name": "write_file", "arguments": {
                "path": "a.txt", "content": "a's"}})
            self.assertNotIn("isError", r["result"])
            r, _ = a.rpc("resources/list")
            self.assertEqual([x["name"] for x in r["result"]["resources"]],
                             ["a.txt"])
            r, _ = b.rpc("resources/list")
            self.assertEqual(r["result"]["resources"], [])
            r, _ = b.rpc("resources/read", {"uri": PREFIX + "a.txt"})
            self.assertEqual(r["error"]["code"], -32602)
            self.assertEqual(r["error"]["message"],
                             "Resource not found: " + PREFIX + "a.txt")
            r, _ = a.rpc("resources/read", {"uri": PREFIX + "a.txt"})
            self.assertEqual(r["result"]["contents"][0]["text"], "a's")
        finally:
            self.assertEqual(srv.stop(), 0)
            os.unlink(tokens.name)


def main():
    global BIN, UNPRIV
    BIN = os.path.abspath(sys.argv[1])
    # servers in tests run with a plain system PATH (http_client's Server
    # passes the environment on)
    os.environ["PATH"] = PLAIN_PATH
    args = [sys.argv[0]] + sys.argv[2:]
    if "--unpriv" in args:
        args.remove("--unpriv")
        UNPRIV = True
        if os.geteuid() != 0 or shutil.which("setpriv") is None or \
                not nobody_can("test", "-x", BIN):
            print("skip: --unpriv needs root, setpriv and a binary uid "
                  "65534 can run")
            sys.exit(77)
    unittest.main(argv=args, verbosity=2)


if __name__ == "__main__":
    main()
