#!/usr/bin/env python3
"""The committed test files that a generator writes are what it writes
now: tests/integration/tools/gen_cases.py (the tools' .case files and
bad-config.json; a case it does not write, such as 109-perimeter.case, is
written by hand) and tests/fuzz/make-seeds.py (every seed of its corpora,
which hold nothing else; proxy's and state's are written by hand). Each
generator writes into a scratch directory (--out) and the trees are
compared, name by name and byte by
byte; a difference names the files and the command that fixes it.

usage: check_generated.py   (ctest unit.generated; exit 0 or 1)"""
import filecmp
import os
import subprocess
import sys
import tempfile

TESTS = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(TESTS, "integration", "tools")
CORPUS = os.path.join(TESTS, "fuzz", "corpus")
SEED_TARGETS = ("jsonrpc", "validator", "calculate", "http")


def files(d):
    return set(n for n in os.listdir(d) if os.path.isfile(os.path.join(d, n)))


def compare(made, committed, what, owns_all):
    """Differences between what a generator made and what is committed;
    owns_all: every committed file there is the generator's (else only
    those it writes, beside files written by hand)."""
    names_made, names_committed = files(made), files(committed)
    out = ["%s: %s is written but not committed" % (what, n)
           for n in sorted(names_made - names_committed)]
    if owns_all:
        out += ["%s: %s is committed but no longer written" % (what, n)
                for n in sorted(names_committed - names_made)]
    for n in sorted(names_made & names_committed):
        if not filecmp.cmp(os.path.join(made, n), os.path.join(committed, n),
                           shallow=False):
            out.append("%s: %s differs from what is written" % (what, n))
    return out


def run(script, out):
    subprocess.run([sys.executable, script, "--out", out], check=True)


def main():
    bad = []
    # some 2,700 small files: in memory where there is a tmpfs for it
    # (0.3 s, against 4 s on this machine's disk)
    shm = "/dev/shm" if os.access("/dev/shm", os.W_OK | os.X_OK) else None
    with tempfile.TemporaryDirectory(prefix="mcp-generated-", dir=shm) as tmp:
        made = os.path.join(tmp, "cases")
        os.mkdir(made)
        run(os.path.join(CASES, "gen_cases.py"), made)
        bad += [b + "; run tests/integration/tools/gen_cases.py and commit"
                for b in compare(made, CASES, "tests/integration/tools",
                                 False)]
        made = os.path.join(tmp, "corpus")
        run(os.path.join(TESTS, "fuzz", "make-seeds.py"), made)
        for t in SEED_TARGETS:
            found = compare(os.path.join(made, t), os.path.join(CORPUS, t),
                            "tests/fuzz/corpus/" + t, True)
            bad += found[:5] + (["... and %d more" % (len(found) - 5)]
                                if len(found) > 5 else [])
        if bad:
            bad.append("(seeds: run tests/fuzz/make-seeds.py and commit)")
    for b in bad:
        print(b)
    if not bad:
        print("generated test files: as committed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
