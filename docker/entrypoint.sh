#!/bin/sh
# Entry point of the mcp-sandbox image. The first thing it logs is
# `mcp-sandbox --check`: which isolation layers work in this container.
# When the sandbox cannot run here it refuses to start (the server would
# otherwise serve only its pure tools) unless MCP_REQUIRE_SANDBOX=0.
# Then it execs the server with the arguments given (the image's CMD by
# default): the server becomes PID 1 and gets SIGTERM directly.
#
# Environment:
#   MCP_SANDBOX_BIN      the server binary (default /usr/local/bin/mcp-sandbox)
#   MCP_REQUIRE_SANDBOX  1 (default): stop when --check fails; 0: go on
set -eu

bin=${MCP_SANDBOX_BIN:-/usr/local/bin/mcp-sandbox}
require=${MCP_REQUIRE_SANDBOX:-1}

case $require in
0|1) ;;
*)
	echo "entrypoint: MCP_REQUIRE_SANDBOX must be 0 or 1, not '$require'" >&2
	exit 2 ;;
esac

echo "entrypoint: mcp-sandbox --check" >&2
status=0
"$bin" --check >&2 || status=$?
if [ "$status" -ne 0 ]; then
	if [ "$require" = 1 ]; then
		echo "entrypoint: the sandbox cannot run in this container (--check exit $status); not starting. See docker/README.md (seccomp profile, AppArmor, /proc masking), or set MCP_REQUIRE_SANDBOX=0 to serve only the tools that need no sandbox." >&2
		exit 1
	fi
	echo "entrypoint: --check exit $status; MCP_REQUIRE_SANDBOX=0: starting anyway, sandboxed tools will refuse to run" >&2
fi
echo "entrypoint: exec mcp-sandbox $*" >&2
exec "$bin" "$@"
