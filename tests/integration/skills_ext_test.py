#!/usr/bin/env python3
"""The Skills extension (SEP-2640, issue 26) over stdio against the real
binary: the capability in both eras; skills/list entries with the
frontmatter verbatim and every regular file with the digest and size the
test computes itself; skills/get and its -32602; each SKILL.md a
resource; files read as skill://NAME/PATH, markdown as text/markdown,
binary as base64; a symlink neither listed nor followed; '..' and a
skill folder's outside refused; skills the extension cannot carry (bad
name, YAML beyond the subset) not served. As root, and with --unpriv as
uid 65534.

usage: skills_ext_test.py MCP_SANDBOX [--unpriv]"""
import base64
import hashlib
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(
    __file__)), "..", "lib"))
from mcptest import (AS_NOBODY, NOBODY, Report, StdioServer,  # noqa: E402
                     nobody_can)

SERVER = sys.argv[1]
UNPRIV = "--unpriv" in sys.argv[2:]
R = Report("skills extension" + (" (uid 65534)" if UNPRIV else ""))
ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}
EXT = "io.modelcontextprotocol/skills"

ALPHA_MD = """---
name: alpha
description: >
  Does alpha things,
  carefully.
license: Apache-2.0
metadata:
  version: "2.1"
  reviewed: true
---
# Alpha

See references/guide.md.
"""


class Client(StdioServer):
    """One stdio server (as uid 65534 with --unpriv) and its client."""

    def __init__(self, *flags, version="2025-11-25"):
        super().__init__(([] if not UNPRIV else AS_NOBODY) + [SERVER, *flags],
                         env=ENV, version=version)

    def req(self, method, params):
        return self.request(method, params)

    def close(self):
        R.check("the server exits 0", super().close() == 0)


def make_skills(root):
    a = os.path.join(root, "alpha")
    os.makedirs(os.path.join(a, "references"))
    os.makedirs(os.path.join(a, "scripts"))
    files = {
        "SKILL.md": ALPHA_MD.encode(),
        "references/guide.md": b"# Guide\nstep 1\n",
        "references/odd name #1.txt": b"odd\n",
        "scripts/run.py": b"print('alpha')\n",
        "logo.bin": bytes(range(256)),
    }
    for rel, data in files.items():
        with open(os.path.join(a, rel), "wb") as f:
            f.write(data)
    os.symlink("/etc/passwd", os.path.join(a, "references", "passwd"))
    for name, md in (("badname", "---\nname: Bad_Name\ndescription: x\n---\n"),
                     ("flowy", "---\nname: flowy\ndescription: x\n"
                      "tags: [a, b]\n---\n")):
        os.makedirs(os.path.join(root, name))
        with open(os.path.join(root, name, "SKILL.md"), "w") as f:
            f.write(md)
    for d, _, names in os.walk(root):
        os.chown(d, NOBODY, NOBODY)
        for n in names:
            os.chown(os.path.join(d, n), NOBODY, NOBODY, follow_symlinks=False)
    return files


def main():
    if UNPRIV and not nobody_can("test", "-x", SERVER):
        print("skip: uid 65534 cannot run %s" % SERVER)
        return 77
    root = tempfile.mkdtemp(prefix="mcp-skills-")
    os.chmod(root, 0o755)
    try:
        files = make_skills(root)
        run(root, files)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return R.end()


def run(root, files):
    with R.step("declared"):
        c = Client()
        R.check("without --skills-dir the extension is not declared",
                c.init["result"]["capabilities"].get("extensions", {}).get(
                    EXT) is None, "no skills dir: not declared")
        m = c.req("skills/list", {})
        R.check("without skills, skills/list is not a method",
                m.get("error", {}).get("code") == -32601, m)
        c.close()
    c = Client("--skills-dir", root)
    caps = c.init["result"]["capabilities"]
    R.check("with skills: the extension, and resources",
            caps.get("extensions", {}).get(EXT) == {"directoryRead": True} and
            "resources" in caps, caps)
    with R.step("skills/list"):
        m = c.req("skills/list", {})
        skills = m["result"]["skills"]
        R.check("only the skills the extension can carry are listed",
                [s["uri"] for s in skills] == ["skill://alpha/SKILL.md"],
                [s["uri"] for s in skills])
        a = skills[0] if skills else {}
        R.check("the frontmatter, verbatim", a.get("frontmatter") == {
            "name": "alpha", "description": "Does alpha things, carefully.\n",
            "license": "Apache-2.0",
            "metadata": {"version": "2.1", "reviewed": True}}, a)
        want = []
        for rel in sorted(files):
            uri = "skill://alpha/" + rel.replace(" ", "%20").replace(
                "#", "%23")
            want.append({"uri": uri, "digest": "sha256:" + hashlib.sha256(
                files[rel]).hexdigest(), "size": len(files[rel])})
        R.check("every regular file, with its digest and size; no symlink",
                a.get("resources") == want, a.get("resources"))
    with R.step("skills/get"):
        m = c.req("skills/get", {"uri": "skill://alpha/SKILL.md"})
        R.check("the same entry", m.get("result", {}).get("skill") == a, m)
        for uri in ("skill://badname/SKILL.md", "skill://alpha/guide.md",
                    "skill://none/SKILL.md"):
            m = c.req("skills/get", {"uri": uri})
            R.check("skills/get %s: -32602" % uri,
                    m.get("error", {}).get("code") == -32602, m)
    with R.step("resources"):
        m = c.req("resources/list", {})
        res = [r for r in m["result"]["resources"]
               if r["uri"].startswith("skill://")]
        R.check("each servable SKILL.md is a resource", res == [{
            "uri": "skill://alpha/SKILL.md", "name": "alpha",
            "description": "Does alpha things, carefully.\n",
            "mimeType": "text/markdown"}], res)

        def read(uri):
            return c.req("resources/read", {"uri": uri})
        m = read("skill://alpha/references/guide.md")
        x = m.get("result", {}).get("contents", [{}])[0]
        R.check("a markdown file: text/markdown, its text",
                x.get("mimeType") == "text/markdown" and
                x.get("text") == "# Guide\nstep 1\n", m)
        m = read("skill://alpha/references/odd%20name%20%231.txt")
        x = m.get("result", {}).get("contents", [{}])[0]
        R.check("a name with a space and a #, percent-encoded",
                x.get("text") == "odd\n", m)
        m = read("skill://alpha/logo.bin")
        x = m.get("result", {}).get("contents", [{}])[0]
        R.check("a binary file: base64",
                base64.b64decode(x.get("blob", "")) == bytes(range(256)), m)
        for uri in ("skill://alpha/references/passwd",
                    "skill://alpha/../badname/SKILL.md",
                    "skill://alpha/%2e%2e/flowy/SKILL.md",
                    "skill://alpha/nope.md"):
            m = read(uri)
            R.check("refused: %s" % uri, "error" in m and
                    "root:" not in json.dumps(m), m)
    with R.step("resources/directory/read"):
        m = c.req("resources/directory/read", {"uri": "skill://alpha"})
        R.check("a skill's root: its files and folders, no symlink", m.get(
            "result", {}).get("resources") == [
            {"uri": "skill://alpha/SKILL.md", "name": "SKILL.md",
             "mimeType": "text/markdown"},
            {"uri": "skill://alpha/logo.bin", "name": "logo.bin"},
            {"uri": "skill://alpha/references", "name": "references",
             "mimeType": "inode/directory"},
            {"uri": "skill://alpha/scripts", "name": "scripts",
             "mimeType": "inode/directory"}], m)
        m = c.req("resources/directory/read",
                  {"uri": "skill://alpha/references"})
        R.check("a folder of it", [x["name"] for x in m.get("result", {}).get(
            "resources", [])] == ["guide.md", "odd name #1.txt"], m)
        for uri in ("skill://alpha/SKILL.md", "skill://alpha/references/",
                    "skill://alpha/references/passwd", "skill://badname",
                    "skill://alpha/.."):
            m = c.req("resources/directory/read", {"uri": uri})
            R.check("not a directory: %s" % uri,
                    m.get("error", {}).get("code") == -32602, m)
    c.close()
    with R.step("2026-07-28"):
        c = Client("--skills-dir", root, version="2026-07-28")
        meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}}
        m = c.req("server/discover", {"_meta": meta})
        R.check("server/discover declares it",
                m.get("result", {}).get("capabilities", {}).get(
                    "extensions", {}).get(EXT) == {"directoryRead": True}, m)
        m = c.req("skills/list", {"_meta": meta})
        r = m.get("result", {})
        R.check("skills/list: resultType, ttlMs and cacheScope",
                r.get("resultType") == "complete" and r.get("ttlMs") == 0 and
                r.get("cacheScope") == "public" and len(r["skills"]) == 1, m)
        c.close()


if __name__ == "__main__":
    sys.exit(main())
