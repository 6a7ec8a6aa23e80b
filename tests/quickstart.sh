#!/bin/sh
# Runs the README's first command exactly as README.md writes it (the first
# ```sh block of "Quick start"), from the top of the checkout, with one
# initialize request on stdin and then EOF, and checks the answer: the
# server must build from scratch in Release and answer on stdout with
# nothing else there. Exit 0 only if it did.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cmd=$(awk '/^## Quick start/ { q = 1 } q && /^```sh$/ { getline; print; exit }' README.md)
[ -n "$cmd" ] || { echo "quickstart: no command under '## Quick start' in README.md" >&2; exit 1; }
echo "quickstart: $cmd"

out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"quickstart","version":"1"}}}'
if ! printf '%s\n' "$init" | sh -c "$cmd" >"$out" 2>"$err"; then
	echo "quickstart: the command failed; its stderr ends with:" >&2
	tail -n 30 "$err" >&2
	exit 1
fi
# stdout: the build's output comes first (cmake prints there), the
# server's answer is the last line and must be exactly one JSON-RPC result.
last=$(tail -n 1 "$out")
python3 - "$last" <<'PY'
import json, sys
msg = json.loads(sys.argv[1])
assert msg.get("jsonrpc") == "2.0" and msg.get("id") == 1, msg
res = msg["result"]
assert res["protocolVersion"] == "2025-11-25", res
assert res["serverInfo"]["name"] == "mcp-sandbox", res
assert "tools" in res["capabilities"], res
PY
grep -Eq "serving [0-9]+ tools on stdio" "$err" ||
	{ echo "quickstart: the server did not say it was serving" >&2; tail -n 5 "$err" >&2; exit 1; }
echo "quickstart: ok: $(printf '%.100s' "$last")..."
