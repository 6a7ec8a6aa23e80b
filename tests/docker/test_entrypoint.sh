#!/bin/sh
# docker/entrypoint.sh with a stand-in server (MCP_SANDBOX_BIN) that logs
# how it was called: --check runs first and its output is the first thing
# logged; a failing check stops the start unless MCP_REQUIRE_SANDBOX=0;
# the server is exec'd with the arguments unchanged. Then once with the
# real binary: --check output first, then the server's own answer.
#
# usage: test_entrypoint.sh REPO_ROOT [MCP_SANDBOX_BIN]
set -u

root=$1
real=${2:-}
ep=$root/docker/entrypoint.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

fail()
{
	echo "FAIL: $*" >&2
	fails=$((fails + 1))
}

# A fake server: --check prints a line and exits $FAKE_CHECK_RC; anything
# else records its argv (one per line) and prints "served".
cat >"$tmp/fake" <<'FAKE'
#!/bin/sh
if [ "$1" = "--check" ]; then
	echo "ok       fake check line"
	exit "${FAKE_CHECK_RC:-0}"
fi
printf '%s\n' "$@" >"$FAKE_ARGS"
echo served
FAKE
chmod +x "$tmp/fake"
export MCP_SANDBOX_BIN="$tmp/fake" FAKE_ARGS="$tmp/args"

# 1. check passes: check output first on stderr, then exec with args as is
out=$(FAKE_CHECK_RC=0 sh "$ep" --http 0.0.0.0:8080 "two words" 2>"$tmp/err")
rc=$?
[ $rc -eq 0 ] || fail "passing check: exit $rc"
[ "$out" = "served" ] || fail "passing check: stdout '$out'"
[ "$(sed -n 1p "$tmp/err")" = "entrypoint: mcp-sandbox --check" ] ||
	fail "first stderr line: $(sed -n 1p "$tmp/err")"
[ "$(sed -n 2p "$tmp/err")" = "ok       fake check line" ] ||
	fail "second stderr line is not the check output: $(sed -n 2p "$tmp/err")"
printf '%s\n' --http 0.0.0.0:8080 "two words" >"$tmp/want"
cmp -s "$tmp/want" "$tmp/args" || fail "arguments changed on the way: $(cat "$tmp/args")"

# 2. check fails: exit 1, server never started, reason logged
rm -f "$tmp/args"
FAKE_CHECK_RC=3 sh "$ep" --http 0.0.0.0:8080 >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] || fail "failing check: exit $rc, want 1"
[ ! -e "$tmp/args" ] || fail "failing check: the server was started"
grep -q "check exit 3" "$tmp/err" || fail "failing check: no reason logged"
[ "$(sed -n 2p "$tmp/err")" = "ok       fake check line" ] ||
	fail "failing check: check output not logged first"

# 3. check fails, MCP_REQUIRE_SANDBOX=0: starts anyway, says so
out=$(FAKE_CHECK_RC=3 MCP_REQUIRE_SANDBOX=0 sh "$ep" --x 2>"$tmp/err")
rc=$?
[ $rc -eq 0 ] && [ "$out" = "served" ] || fail "MCP_REQUIRE_SANDBOX=0: exit $rc, stdout '$out'"
grep -q "starting anyway" "$tmp/err" || fail "MCP_REQUIRE_SANDBOX=0: not logged"

# 4. a bad MCP_REQUIRE_SANDBOX is refused before anything runs
rm -f "$tmp/args"
MCP_REQUIRE_SANDBOX=yes sh "$ep" --x >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 2 ] || fail "bad MCP_REQUIRE_SANDBOX: exit $rc, want 2"
[ ! -e "$tmp/args" ] || fail "bad MCP_REQUIRE_SANDBOX: the server was started"

# 5. the real binary: --check first, then the server answers --version
if [ -n "$real" ] && [ -x "$real" ]; then
	out=$(MCP_SANDBOX_BIN=$real sh "$ep" --version 2>"$tmp/err")
	rc=$?
	case $out in
	"mcp-sandbox "*) ;;
	*) fail "real binary: stdout '$out'" ;;
	esac
	if [ $rc -eq 0 ]; then
		grep -q "^verdict:" "$tmp/err" || fail "real binary: no --check verdict logged"
		[ "$(sed -n 1p "$tmp/err")" = "entrypoint: mcp-sandbox --check" ] ||
			fail "real binary: first line $(sed -n 1p "$tmp/err")"
	else
		grep -q "not starting" "$tmp/err" || fail "real binary: exit $rc without a reason"
	fi
fi

[ $fails -eq 0 ] || exit 1
echo "entrypoint: all checks passed"
