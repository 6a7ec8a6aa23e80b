#!/usr/bin/env python3
"""The layering of HACKING.md, checked on the tree and on the build.

1. Which directory's headers each directory's sources include (#include
   "..."), against the table below: a transport including a tools/ header,
   or server/ including sandbox.h, fails here even where the compiler's
   include path would let it through.
2. The include path the build gives each source (compile_commands.json):
   transport/ must have no tools/, policy/ or sandbox/ directory on it.
3. No cycle among the source files of server/, transport/, tools/ and
   policy/, a file using another when it calls a function or reads data
   the other defines (nm on the built objects): the kind of cycle
   tools/sbcall.c <-> tools/warm.c was.

Usage: check_layers.py SOURCE_DIR BUILD_DIR
"""
import json
import os
import re
import subprocess
import sys

# directory -> the directories of ours whose headers it may include
ALLOWED = {
    "transport": {"transport", "server", "schemas", "util"},
    "server": {"server", "tools", "workspace", "schemas", "util"},
    "tools": {"tools", "workspace", "policy", "sandbox", "schemas", "util"},
    "policy": {"policy"},
    "schemas": {"schemas"},
    "sandbox": {"sandbox"},
    "util": {"util"},
    "workspace": {"workspace"},
    "cli": {"cli", "sandbox"},
}
# files that see every layer, and the sandbox CLI modes
EXCEPT = {"cli/main.c": set(ALLOWED)}
NO_PATH = {"transport": ("tools", "policy", "sandbox")}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def sources(root):
    for d in ALLOWED:
        for f in sorted(os.listdir(os.path.join(root, d))):
            if f.endswith((".c", ".h")):
                yield d, f


def symbol_graph(root, commands):
    """file -> the files whose symbols it uses, from nm on the objects the
    build makes now (the compile commands' -o: a build dir may also hold
    objects of files that moved)."""
    names = {}
    for e in commands:
        rel = os.path.relpath(e["file"], root)
        if rel.split("/", 1)[0] not in ("server", "transport", "tools",
                                        "policy") or rel in EXCEPT:
            continue
        m = re.search(r"\s-o\s+(\S+)", e["command"])
        if m:
            names[os.path.join(e["directory"], m.group(1))] = rel
    defs, undef = {}, {}
    out = subprocess.run(["nm", "-A"] + sorted(names), capture_output=True,
                         text=True, check=True).stdout
    for line in out.splitlines():
        obj, _, rest = line.partition(":")
        name, f = names[obj], rest.split()
        if len(f) == 3 and f[1] in "TDBR":
            defs[f[2]] = name
        elif len(f) == 2 and f[0] == "U":
            undef.setdefault(name, set()).add(f[1])
    return {n: {defs[u] for u in us if u in defs and defs[u] != n}
            for n, us in undef.items()}


def main():
    root, build = sys.argv[1], sys.argv[2]
    where = {}                     # header name -> its directory
    for d, f in sources(root):
        if f.endswith(".h"):
            where.setdefault(f, d)
    bad = []
    for d, f in sources(root):
        rel = d + "/" + f
        ok = EXCEPT.get(rel, ALLOWED[d])
        with open(os.path.join(root, rel)) as fh:
            text = fh.read()
        for inc in INCLUDE.findall(text):
            hd = where.get(inc)
            if hd is None:
                continue           # generated (version.h) or system
            if hd not in ok:
                bad.append("%s includes %s/%s" % (rel, hd, inc))
    with open(os.path.join(build, "compile_commands.json")) as fh:
        commands = json.load(fh)
    for e in commands:
        rel = os.path.relpath(e["file"], root)
        d = rel.split("/", 1)[0]
        for banned in NO_PATH.get(d, ()):
            path = os.path.join(root, banned)
            if re.search(r"-I\s*%s(\s|$)" % re.escape(path), e["command"]):
                bad.append("%s is built with %s on its include path"
                           % (rel, banned))
    uses = symbol_graph(root, commands)
    state = {}

    def visit(m, stack):
        state[m] = 1
        for n in sorted(uses.get(m, ())):
            if state.get(n) == 1:
                bad.append("include cycle: " + " -> ".join(
                    stack[stack.index(n):] + [n]))
            elif n not in state:
                visit(n, stack + [n])
        state[m] = 2

    for m in sorted(uses):
        if m not in state:
            visit(m, [m])
    for b in bad:
        print("layering: " + b)
    print("layering: %d violations" % len(bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
