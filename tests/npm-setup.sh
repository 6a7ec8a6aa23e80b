#!/bin/sh
# Installs the pinned npm packages that the SDK client tests (tests/sdk) and
# the benchmarks (tests/bench) use, exactly as locked in each folder's
# package-lock.json, with `npm ci`.  Nothing is installed globally and no
# package install scripts run.  Safe to run again: `npm ci` starts from a
# clean node_modules every time.
#
# Usage: tests/npm-setup.sh [sdk] [bench]     (default: both)
#
# Needs npm (Debian 12: apt-get install npm).  The packages need Node.js 20
# or newer to run (@hono/node-server, a dependency of the SDK): Debian 12's
# own nodejs is 18, so tests/setup.sh --test installs Node 22 from the npm
# package `node` into tests/node; this script uses that one when present and
# only warns when the node it finds is older (installing works with 18).
set -eu

# The oldest Node major the locked packages accept (@hono/node-server: >=20).
MIN_NODE_MAJOR=20

here=$(cd "$(dirname "$0")" && pwd)

die()
{
	echo "npm-setup: $*" >&2
	exit 1
}

# Node 22 from tests/node (tests/setup.sh --test) first, as the tests use it.
if [ -x "$here/node/node_modules/.bin/node" ]; then
	PATH="$here/node/node_modules/.bin:$PATH"
	export PATH
fi
command -v node >/dev/null 2>&1 ||
	die "node not found; install Node.js (e.g. apt-get install nodejs npm)"
command -v npm >/dev/null 2>&1 ||
	die "npm not found; install it (e.g. apt-get install npm)"

node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt "$MIN_NODE_MAJOR" ]; then
	echo "npm-setup: warning: node $(node --version) is older than $MIN_NODE_MAJOR;" \
		"the SDK tests and benchmarks need Node $MIN_NODE_MAJOR+ to run" \
		"(tests/setup.sh --test installs Node 22 into tests/node)" >&2
fi

areas=${*:-sdk bench}
for area in $areas; do
	case $area in
	sdk|bench) ;;
	*) die "unknown area '$area' (expected: sdk, bench)" ;;
	esac
	dir=$here/$area
	[ -f "$dir/package-lock.json" ] || die "$dir/package-lock.json is missing"
	echo "npm-setup: installing $area packages into $dir/node_modules"
	(cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) ||
		die "npm ci failed in $dir"
done
echo "npm-setup: done (node $(node --version), npm $(npm --version))"
