#!/usr/bin/env python3
"""The layering of HACKING.md, checked on the tree and on the build.

1. Which directory's headers each directory's sources include (#include
   "..."), against the table below: a transport including a tools/ header,
   or server/ including sandbox.h, fails here even where the compiler's
   include path would let it through. Every source of the tree is placed:
   a top-level directory with C sources that is neither a library of the
   table nor in NOT_LAYERS, an include that names no header of ours (nor
   one made from a .h.in), or a header name two directories share, fails
   rather than being skipped. Of a layer in PUBLIC, the others see only
   its public headers (sandbox.h, not internal.h).
2. The include path the build gives each source (compile_commands.json):
   transport/ must have no tools/, workspace/, policy/, egress/ or
   sandbox/ directory on it.
3. No cycle among the source files of the layers in CYCLES, a file using
   another when it calls a function or reads data the other defines (nm on
   the built objects): the kind of cycle tools/sbcall.c <-> tools/warm.c
   was.

Before the tree, the check runs itself on a small made-up tree (self_test)
and stops if it would let an unplaceable include or directory through.

Usage: check_layers.py SOURCE_DIR BUILD_DIR
"""
import json
import os
import re
import subprocess
import sys
import tempfile

# directory -> the directories of ours whose headers it may include
ALLOWED = {
    "cli": {"cli", "sandbox"},
    "transport": {"transport", "server", "schemas", "util"},
    "server": {"server", "tools", "workspace", "schemas", "util"},
    "tools": {"tools", "workspace", "policy", "egress", "sandbox", "schemas",
              "util"},
    "workspace": {"workspace"},
    "policy": {"policy", "egress"},
    "egress": {"egress"},
    "schemas": {"schemas"},
    "sandbox": {"sandbox"},
    "util": {"util"},
}
# a layer whose users see one header of it only: its others are its own
# (HACKING.md: sandbox.h is the interface, internal.h for sandbox/ alone)
PUBLIC = {"sandbox": {"sandbox.h"}}
# the file that sees every layer: it builds them and hands them over
EXCEPT = {"cli/main.c": set(ALLOWED)}
# top-level directories that are no layer: tests may include any layer's
# headers (they name every library they link). A build tree (any directory
# with a CMakeCache.txt) is none either.
NOT_LAYERS = {"tests", "dist", "docker"}
NO_PATH = {"transport": ("tools", "workspace", "policy", "egress",
                         "sandbox")}
# the layers checked for call cycles between their files: all but the
# validator's files of schemas/, which call each other by design of a
# recursive evaluator
CYCLES = ("cli", "server", "transport", "tools", "workspace", "policy",
          "egress", "sandbox")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def sources(root):
    """(directory, path below it) of every .c, .h and .h.in under root's
    top-level directories but NOT_LAYERS and hidden ones."""
    for d in sorted(os.listdir(root)):
        top = os.path.join(root, d)
        if d in NOT_LAYERS or d.startswith(".") or not os.path.isdir(top) \
                or os.path.exists(os.path.join(top, "CMakeCache.txt")):
            continue
        for dirpath, dirnames, files in os.walk(top):
            dirnames[:] = sorted(n for n in dirnames if not n.startswith("."))
            for f in sorted(files):
                if f.endswith((".c", ".h", ".h.in")):
                    yield d, os.path.relpath(os.path.join(dirpath, f),
                                             os.path.join(root, d))


def check_includes(root):
    """The violations of rule 1 in the tree at root, as sentences."""
    bad, where, seen = [], {}, set()
    for d, f in sources(root):
        if d not in ALLOWED:
            if d not in seen:
                bad.append("%s/ has C sources but is no layer of the table"
                           % d)
                seen.add(d)
            continue
        if f.endswith(".h.in"):
            f = f[:-3]     # configured into the build dir (version.h)
        if f.endswith(".h"):
            name = os.path.basename(f)
            if name in where and where[name] != d:
                bad.append("%s is a header of both %s/ and %s/"
                           % (name, where[name], d))
            where[name] = d
    for d, f in sources(root):
        if d not in ALLOWED or f.endswith(".h.in"):
            continue
        rel = d + "/" + f
        ok = EXCEPT.get(rel, ALLOWED[d])
        with open(os.path.join(root, rel)) as fh:
            text = fh.read()
        for inc in INCLUDE.findall(text):
            hd = where.get(inc)
            if hd is None:
                bad.append("%s includes \"%s\", which is no header of ours"
                           % (rel, inc))
            elif hd not in ok:
                bad.append("%s includes %s/%s" % (rel, hd, inc))
            elif hd != d and hd in PUBLIC and inc not in PUBLIC[hd]:
                bad.append("%s includes %s/%s, which is %s/'s own"
                           % (rel, hd, inc, hd))
    return bad


def self_test():
    """check_includes on a made-up tree: what it must refuse, it refuses,
    and what it must accept, it accepts. A list of what went wrong."""
    trees = {
        "clean": ({"tools/a.c": '#include "a.h"\n#include "sandbox.h"\n',
                   "tools/a.h": "", "sandbox/sandbox.h": "",
                   "server/version.h.in": "",
                   "server/b.c": '#include "version.h"\n',
                   "tests/t.c": '#include "anything.h"\n'}, 0),
        "unplaceable include": ({"tools/a.c": '#include "nowhere.h"\n'}, 1),
        "include by path": ({"tools/a.c": '#include "../sandbox/s.h"\n',
                             "sandbox/s.h": ""}, 1),
        "unknown directory": ({"newlib/x.c": "", "newlib/x.h": ""}, 1),
        "build tree": ({"b2/CMakeCache.txt": "", "b2/gen.c": ""}, 0),
        "shared header name": ({"tools/x.h": "", "server/x.h": ""}, 1),
        "upward include": ({"sandbox/s.c": '#include "tool.h"\n',
                            "tools/tool.h": ""}, 1),
        "subdirectory": ({"tools/sub/a.c": '#include "nowhere.h"\n'}, 1),
        "private header": ({"cli/a.c": '#include "internal.h"\n',
                            "sandbox/internal.h": ""}, 1),
    }
    wrong = []
    for name, (files, want) in sorted(trees.items()):
        with tempfile.TemporaryDirectory() as tmp:
            for rel, text in files.items():
                os.makedirs(os.path.dirname(os.path.join(tmp, rel)),
                            exist_ok=True)
                with open(os.path.join(tmp, rel), "w") as fh:
                    fh.write(text)
            got = check_includes(tmp)
        if len(got) != want:
            wrong.append("self test %r: %d violations, want %d: %s"
                         % (name, len(got), want, got))
    return wrong


def symbol_graph(root, commands):
    """file -> the files whose symbols it uses, from nm on the objects the
    build makes now (the compile commands' -o: a build dir may also hold
    objects of files that moved)."""
    names = {}
    for e in commands:
        rel = os.path.relpath(e["file"], root)
        if rel.split("/", 1)[0] not in CYCLES or rel in EXCEPT:
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
    wrong = self_test()
    if wrong:
        for w in wrong:
            print("layering: " + w)
        return 1
    bad = check_includes(root)
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
