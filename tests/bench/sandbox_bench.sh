#!/bin/bash
# The issue-3 benchmark: start-up of one sandboxed command, in one hyperfine
# run (-N, no intermediate shell), against
#   - a bare fork+exec of the same program (hyperfine spawning it), and
#   - bubblewrap with the same isolation: user (uid 1000, no caps, nested
#     userns disabled), mount, pid, net, ipc, uts, cgroup namespaces, ro
#     /usr + usr-merged symlinks, ld.so.cache, fresh /proc, minimal /dev,
#     tmpfs /tmp, new session, empty environment. (bwrap gets no seccomp
#     filter, rlimits or Landlock: it does strictly less work than we do.)
# Two more rows set the floor any launcher pays on this machine, whatever
# it isolates (util-linux unshare, in the same run):
#   - launcher-true: `unshare --fork /bin/true`, no namespace at all: one
#     exec of a launcher, a fork, the exec of the program, a wait;
#   - namespaces-true: the same with our namespaces (user, mount, pid, ipc,
#     uts, cgroup, net) and nothing else: no mounts, no /proc, no seccomp.
# Programs: /bin/true and /usr/bin/python3 -I -c pass (Debian's python, not
# a pyenv shim). Prints median and p95 per row and the ratios; targets:
# at most 0.4x bwrap and at most 3x bare (medians, /bin/true).
# Then, if built, sandbox-inproc-bench: the same run from inside a server
# (context built once; fresh netns vs netns pool) against posix_spawn, and
# the cost of the cgroup per run: the pooled run without and with it, in
# turns, and the median of the pairwise differences (target: +0.3 ms).
#
# Usage: tests/bench/sandbox_bench.sh [path/to/mcp-sandbox]
#   default: $MCP_SANDBOX_BIN, else the newest build*/server/mcp-sandbox,
#   else the stand-in build*/tests/adversarial/sandbox-cli (same code).
#   BENCH_RUNS (default 300; python rows use a third), OUT=dir for the JSON.
# Exit 0 when the targets are met, 1 when one is missed, 2 when the run
# cannot be made.
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
runs=${BENCH_RUNS:-300}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"

ours=${1:-${MCP_SANDBOX_BIN:-}}
if [ -z "$ours" ]; then
	# newest build that is not a sanitizer build (those time nothing)
	ours=$(ls -t "$root"/build*/server/mcp-sandbox \
		"$root"/build*/tests/adversarial/sandbox-cli \
		"$root"/build*/adversarial/sandbox-cli 2>/dev/null |
		grep -v -E '/build[^/]*(asan|-san)[^/]*/' | head -n 1)
fi
for tool in hyperfine bwrap unshare /usr/bin/python3; do
	if ! command -v "$tool" >/dev/null; then
		echo "sandbox_bench: $tool is missing (apt-get install hyperfine" \
			"bubblewrap python3)" >&2
		exit 2
	fi
done
if [ -z "$ours" ] || [ ! -x "$ours" ]; then
	echo "sandbox_bench: no mcp-sandbox found (build it or pass its path)" >&2
	exit 2
fi
if ! "$ours" exec -- /bin/true; then
	echo "sandbox_bench: $ours exec -- /bin/true fails here; see" \
		"'$ours --check'" >&2
	exit 2
fi

bw="bwrap --unshare-all --unshare-user --disable-userns --uid 1000 --gid 1000"
bw="$bw --cap-drop ALL --die-with-parent --new-session --clearenv"
bw="$bw --setenv PATH /usr/bin:/bin --hostname sandbox"
bw="$bw --ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/sbin /sbin"
bw="$bw --symlink usr/lib /lib --symlink usr/lib64 /lib64"
bw="$bw --ro-bind /etc/ld.so.cache /etc/ld.so.cache"
bw="$bw --proc /proc --dev /dev --tmpfs /tmp --chdir /tmp"
py="/usr/bin/python3 -I -c pass"

echo "mcp-sandbox: $ours"
echo "bwrap: $(bwrap --version), hyperfine: $(hyperfine --version)"
echo "kernel $(uname -r), $(nproc) cpus, load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
hyperfine -N --warmup 20 --runs "$runs" --export-json "$out/true.json" \
	--command-name bare-true "/bin/true" \
	--command-name mcp-sandbox-true "$ours exec -- /bin/true" \
	--command-name bwrap-true "$bw /bin/true" \
	--command-name launcher-true "unshare --fork /bin/true" \
	--command-name namespaces-true "unshare --user --mount --pid --fork --ipc --uts --cgroup --net /bin/true" \
	>/dev/null || exit 2
hyperfine -N --warmup 5 --runs $((runs / 3)) --export-json "$out/python.json" \
	--command-name bare-python "$py" \
	--command-name mcp-sandbox-python "$ours exec -- $py" \
	--command-name bwrap-python "$bw $py" >/dev/null || exit 2
python3 - "$out/true.json" "$out/python.json" > "$out/all.json" <<'PY'
import json, sys
res = []
for p in sys.argv[1:]:
    res += json.load(open(p))["results"]
json.dump({"results": res}, sys.stdout)
PY
/usr/bin/python3 "$here/sandbox/summary.py" "$out/all.json"
rc=$?
inproc=$(ls -t "$root"/build*/tests/adversarial/sandbox-inproc-bench \
	"$root"/build*/adversarial/sandbox-inproc-bench 2>/dev/null |
	grep -v -E '/build[^/]*(asan|-san)[^/]*/' | head -n 1)
if [ -n "$inproc" ]; then
	echo
	echo "in-process (a server's view: context built once):"
	"$inproc" "$runs" | tee "$out/inproc.txt"
	/usr/bin/python3 - "$out/all.json" "$out/inproc.txt" <<'PY'
import json, re, sys
res = {r["command"]: sorted(r["times"]) for r in json.load(open(sys.argv[1]))["results"]}
bw = res["bwrap-true"][len(res["bwrap-true"]) // 2] * 1e6
rows = {}
for line in open(sys.argv[2]):
    m = re.match(r"(.*?)\s+n=\d+ median=\s*([\d.]+) us", line)
    if m:
        rows[m.group(1).strip()] = float(m.group(2))
bare = rows.get("bare posix_spawn+wait /bin/true")
for name in ("sb_run /bin/true, fresh netns", "sb_run /bin/true, netns pool",
             "sb_run /bin/true, pool, no cgroup",
             "sb_run /bin/true, pool, cgroup"):
    if name in rows and bare:
        print(f"{name}: {rows[name] / bw:.2f}x bwrap CLI median, "
              f"{rows[name] / bare:.2f}x in-process posix_spawn")
PY
fi
echo "(JSON in $out)"
exit $rc
