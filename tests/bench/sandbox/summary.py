#!/usr/bin/python3
"""Median and p95 of each hyperfine row, then the ratios of issue 3.

Usage: summary.py RESULTS.json
Rows are matched by the names sandbox_bench.sh gives them (--command-name).
Exit 0 when both targets are met for /bin/true, 1 when one is missed.
"""
import json
import sys

# Targets of issue 3: full isolation at most 0.4x bubblewrap's time and at
# most 3x a bare fork+exec of the same program.
MAX_VS_BWRAP = 0.4
MAX_VS_BARE = 3.0


def pct(times, q):
    t = sorted(times)
    return t[min(len(t) - 1, int(round(q * (len(t) - 1))))]


def main():
    res = json.load(open(sys.argv[1]))["results"]
    rows = {}
    for r in res:
        rows[r["command"]] = (pct(r["times"], 0.5) * 1e3,
                              pct(r["times"], 0.95) * 1e3, len(r["times"]))
    w = max(len(k) for k in rows)
    print(f"{'row':<{w}}  {'n':>4}  {'median ms':>9}  {'p95 ms':>8}")
    for k, (med, p95, n) in rows.items():
        print(f"{k:<{w}}  {n:>4}  {med:9.3f}  {p95:8.3f}")
    ok = True
    print()
    for prog in ("true", "python"):
        ours, bw, bare = (rows.get(f"{x}-{prog}") for x in
                          ("mcp-sandbox", "bwrap", "bare"))
        if not ours or not bw or not bare:
            continue
        for label, (i, name) in (("median", (0, "median")),
                                 ("p95", (1, "p95"))):
            vb, vr = ours[i] / bw[i], ours[i] / bare[i]
            print(f"{prog:>6} {label:>6}: mcp-sandbox/bwrap = {vb:5.2f}x "
                  f"(target <= {MAX_VS_BWRAP}x)  mcp-sandbox/bare = "
                  f"{vr:5.2f}x (target <= {MAX_VS_BARE}x)")
        if prog == "true":
            ok = (ours[0] / bw[0] <= MAX_VS_BWRAP and
                  ours[0] / bare[0] <= MAX_VS_BARE)
    floor_over = False
    bw, bare, ours = (rows.get(x) for x in
                      ("bwrap-true", "bare-true", "mcp-sandbox-true"))
    for name, what in (("launcher-true", "a launcher, no isolation "
                        "(unshare --fork)"),
                       ("namespaces-true", "our namespaces only "
                        "(unshare -Umpiuc --net --fork)")):
        row = rows.get(name)
        if not row or not bw or not bare:
            continue
        vb, vr = row[0] / bw[0], row[0] / bare[0]
        print(f"  floor, {what}: /bwrap = {vb:5.2f}x  /bare = {vr:5.2f}x"
              f"  (mcp-sandbox = {ours[0] / row[0]:4.2f}x of it)")
        if name == "launcher-true" and (vb > MAX_VS_BWRAP or
                                        vr > MAX_VS_BARE):
            floor_over = True
    print("\ntargets (median, /bin/true):", "met" if ok else "MISSED")
    if not ok and floor_over:
        print("  a launcher that only forks and execs, with no isolation at "
              "all, is itself over a target here (first floor row)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
