#!/bin/sh
# Installs the pinned npm packages that the SDK client tests (tests/sdk) and
# the benchmarks (tests/bench) use, exactly as locked in each folder's
# package-lock.json, with `npm ci`.  Nothing is installed globally and no
# package install scripts run.  Safe to run again: `npm ci` starts from a
# clean node_modules every time.
#
# Usage: tests/npm-setup.sh [sdk] [bench]     (default: both)
#
# Needs Node.js 20 or newer and npm (Debian 12: the nodejs/npm packages from
# NodeSource or another Node 20 build; Debian's own nodejs 18 is too old for
# @hono/node-server, a dependency of the SDK).
set -eu

# The oldest Node major the locked packages accept (@hono/node-server: >=20).
MIN_NODE_MAJOR=20

here=$(cd "$(dirname "$0")" && pwd)

die()
{
	echo "npm-setup: $*" >&2
	exit 1
}

command -v node >/dev/null 2>&1 ||
	die "node not found; install Node.js $MIN_NODE_MAJOR or newer (e.g. apt-get install nodejs)"
command -v npm >/dev/null 2>&1 ||
	die "npm not found; install it (e.g. apt-get install npm)"

node_major=$(node -p 'process.versions.node.split(".")[0]')
[ "$node_major" -ge "$MIN_NODE_MAJOR" ] ||
	die "node $(node --version) is too old; need $MIN_NODE_MAJOR or newer"

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
