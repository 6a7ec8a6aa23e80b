#!/bin/sh
# Runs the official MCP conformance suite (npm @modelcontextprotocol/
# conformance, pinned in package-lock.json) against mcp-sandbox over
# Streamable HTTP, on the Node 22 runtime that the pinned npm package
# `node` brings (Debian 12's own Node is too old: the suite needs
# fs.globSync).
#
#   run.sh --setup                   install the pinned packages (npm ci)
#   run.sh BIN [SET] [OUTDIR]        run one set against BIN
#
# SET is 2025-11-25 (default: suite 0.1.16, every scenario, with
# expected-failures.yaml), 2026-07-28 (suite 0.2.0-alpha, its frozen
# 2026-07-28 requirements, with expected-failures-2026-07-28.yaml) or
# skills (suite 0.2.0-alpha, the Skills extension's server scenarios,
# sep-2640-*, the server serving tests/integration/tools/skills; each must
# pass). Each set passes only when exactly the listed N/A scenarios fail. The server
# runs with the test-only --conformance-fixtures flag on a loopback port
# the kernel picks, and must stop cleanly on SIGTERM afterwards.
# Exit 77 (skipped) when the packages are not installed.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
node=$here/node_modules/node/bin/node

# Longest wait, in tenths of a second, for the server to log its port.
START_TENTHS=100

if [ "${1:-}" = "--setup" ]; then
	# scripts must run: the `node` package fetches its binary in preinstall
	cd "$here" && exec npm ci --no-audit --no-fund --loglevel=error
fi
[ $# -ge 1 ] || { echo "usage: $0 BIN [2025-11-25|2026-07-28] [OUTDIR]" >&2; exit 2; }
bin=$1
set=${2:-2025-11-25}
out=${3:-$(mktemp -d)}

if [ ! -x "$node" ]; then
	echo "SKIP: the conformance packages are not installed; run $0 --setup" >&2
	exit 77
fi
extra=
scenarios=-
case $set in
2025-11-25)
	cli=$here/node_modules/@modelcontextprotocol/conformance/dist/index.js
	args="--suite all --expected-failures $here/expected-failures.yaml" ;;
2026-07-28)
	cli=$here/node_modules/conformance-next/dist/index.js
	args="--requirements 2026-07-28 --expected-failures $here/expected-failures-2026-07-28.yaml" ;;
skills)
	cli=$here/node_modules/conformance-next/dist/index.js
	extra="--skills-dir $here/../integration/tools/skills"
	scenarios="sep-2640-skills-enumeration sep-2640-skills-manifest sep-2640-skills-directory"
	args= ;;
*)
	echo "$0: unknown set '$set' (2025-11-25, 2026-07-28 or skills)" >&2
	exit 2 ;;
esac

mkdir -p "$out"
log=$out/server.log
# a stale log from an earlier run would hand us its port before the new
# server's redirection truncates it
rm -f "$log"
# shellcheck disable=SC2086
"$bin" --http 127.0.0.1:0 --conformance-fixtures $extra 2>"$log" &
pid=$!
trap 'kill "$pid" 2>/dev/null || true' EXIT

port=
i=0
while [ $i -lt $START_TENTHS ]; do
	port=$(sed -n 's/.*serving .* on http:.*(port \([0-9]*\)).*/\1/p' "$log" 2>/dev/null || true)
	[ -n "$port" ] && break
	kill -0 "$pid" 2>/dev/null || { echo "FAIL: the server exited at start:" >&2; cat "$log" >&2; exit 1; }
	sleep 0.1
	i=$((i + 1))
done
[ -n "$port" ] || { echo "FAIL: no port logged within $START_TENTHS tenths of a second" >&2; exit 1; }

rc=0
: >"$out/conformance.txt"
for sc in $scenarios; do
	one=
	[ "$sc" = - ] || one="--scenario $sc"
	src=0
	# shellcheck disable=SC2086
	"$node" "$cli" server --url "http://127.0.0.1:$port/mcp" $args $one \
	    -o "$out/results" >>"$out/conformance.txt" 2>&1 || src=$?
	[ $src -eq 0 ] || rc=$src
done
sed -n '/=== SUMMARY ===/,$p' "$out/conformance.txt"
# the skills set: a server that stopped declaring the extension would see
# its checks skipped, not failed; each of these must have succeeded
if [ "$set" = skills ]; then
	for c in skills-list-implemented skills-get-implemented \
	    entry-frontmatter-identical resources-complete skillmd-mimetype \
	    capability-directory-read-flag directory-read-method-registered \
	    directory-read-result-resources-shape \
	    directory-read-invalid-params; do
		sed 's/\x1b\[[0-9;]*m//g' "$out/conformance.txt" |
		    grep -q "sep-2640-$c *\] *SUCCESS" || {
			echo "FAIL: sep-2640-$c did not succeed" >&2
			rc=1
		}
	done
fi
[ $rc -eq 0 ] || { echo "FAIL: conformance set $set exited $rc (full output: $out/conformance.txt)" >&2; tail -20 "$out/conformance.txt" >&2; }

kill -TERM "$pid"
src=0
wait "$pid" || src=$?
trap - EXIT
if [ $src -ne 0 ]; then
	echo "FAIL: the server did not stop cleanly on SIGTERM (exit $src)" >&2
	cat "$log" >&2
	rc=1
fi
exit $rc
