#!/bin/bash
# The issue-13 benchmark: the egress proxy against direct loopback, and
# beside srt (npm @anthropic-ai/sandbox-runtime) doing the same fetch, all
# in one run (tests/bench/egress/egress_bench.c says what each row times).
# Targets: bulk through the proxy >= 0.8x direct; a small fetch adds at
# most 0.3 ms at the median; a sandbox with the proxy wired in starts at
# most 0.2 ms slower than one without. Exit 0 when all are met, 1 when one
# is missed, 2 when it could not measure.
#
# srt is installed, when it is not yet, into $BENCH_SRT_DIR (default
# /tmp/egress-bench-srt) from the npm registry at the version pinned here;
# it needs bwrap, socat and ripgrep on PATH (tests/setup.sh --bench
# installs them). Without them the srt row is left out and said so.
#
# Usage: tests/bench/egress_bench.sh [path/to/egress-bench]
#   BENCH_QUICK=1   a tenth of the rounds (a smoke run, not figures)
#   BENCH_ROUNDS    rounds of the start and small rows (default 200)
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
SRT_VERSION=0.0.83
bench=${1:-$(ls -t "$root"/build*/tests/egress/egress-bench 2>/dev/null | head -n 1)}
if [ -z "$bench" ] || [ ! -x "$bench" ]; then
	echo "egress_bench: no egress-bench binary (build the project)" >&2
	exit 2
fi
if [ "$(id -u)" != 0 ]; then
	echo "egress_bench: run as root (the netns pool, as a root server has)" >&2
	exit 2
fi
rounds=${BENCH_ROUNDS:-200}
big=256
if [ "${BENCH_QUICK:-0}" = 1 ]; then
	rounds=$((rounds / 10))
	big=64
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

srtdir=${BENCH_SRT_DIR:-/tmp/egress-bench-srt}
srt=$srtdir/node_modules/.bin/srt
cmd=()
if ! [ -x "$srt" ] && command -v npm >/dev/null; then
	mkdir -p "$srtdir"
	(cd "$srtdir" && npm install --no-audit --no-fund --silent \
		"@anthropic-ai/sandbox-runtime@$SRT_VERSION" >/dev/null 2>&1)
fi
if [ -x "$srt" ] && command -v bwrap >/dev/null && command -v socat >/dev/null &&
	command -v rg >/dev/null; then
	settings=$(mktemp /tmp/egress-bench-srt.XXXXXX.json)
	trap 'rm -f "$settings"' EXIT
	printf '{"network":{"allowedDomains":["127.0.0.1:%s"],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":["/tmp"],"denyWrite":[]}}\n' \
		"$port" > "$settings"
	cmd=(--cmd "$srt --settings $settings -c \"%s\"")
	echo "srt $SRT_VERSION: $srt"
else
	echo "srt: not installed here (needs npm, bwrap, socat, rg): its row is left out"
fi
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
exec "$bench" --rounds "$rounds" --big-mib "$big" --port "$port" "${cmd[@]}"
