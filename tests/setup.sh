#!/bin/sh
# Sets up a fresh Debian 12 machine for building, running and testing
# mcp-sandbox: Debian packages with apt-get, then the pinned npm packages the
# tests use (Node 22 from the npm package `node`, the MCP SDK, the
# conformance suite, the benchmark references). Safe to run again.
#
# Usage: tests/setup.sh            build and run dependencies only
#        tests/setup.sh --test     also everything the test suites need
set -eu

here=$(cd "$(dirname "$0")" && pwd)
want_tests=0
case ${1:-} in
--test) want_tests=1 ;;
"") ;;
*) echo "usage: tests/setup.sh [--test]" >&2; exit 2 ;;
esac

as_root()
{
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo "$@"
	else
		echo "setup: need root for: $*" >&2
		exit 1
	fi
}

# Build and run: compiler, CMake, the libraries, and the toolchains the
# sandboxed tools offer (python3, node, a C compiler, coreutils, ...).
pkgs="build-essential cmake pkg-config libjson-c-dev libmicrohttpd-dev libgnutls28-dev
libseccomp-dev libgmp-dev libpcre2-dev libsqlite3-dev check python3 gcc
coreutils grep sed gawk findutils diffutils jq git sqlite3 ca-certificates"
# Tests and benchmarks. python3-matplotlib: tests/resources draws a chart
# with the Agg backend in run_code and checks the model gets it as an image.
# qemu, mmdebstrap and cpio boot the cgroup v2 test's VM (tests/vm: a
# Debian kernel and root filesystem from the apt sources).
# The package test: dpkg-dev, strace, man-db; the container test: podman
# with runc, mmdebstrap for a local base image.
# openssl and python3-pip: the egress tests (a test CA, pip download);
# socat and ripgrep: srt, beside which the egress benchmark measures.
test_pkgs="clang bubblewrap hyperfine wrk curl procps util-linux iproute2
python3-matplotlib qemu-system-x86 mmdebstrap cpio
strace man-db dpkg-dev fakeroot file
podman runc uidmap slirp4netns fuse-overlayfs catatonit
containernetworking-plugins netavark aardvark-dns
openssl python3-pip socat ripgrep"

missing=""
for p in $pkgs $( [ $want_tests -eq 1 ] && echo $test_pkgs ); do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
# node and npm by command: a machine may have them from elsewhere (e.g.
# NodeSource's nodejs, which bundles npm and conflicts with Debian's npm).
if [ $want_tests -eq 1 ]; then
	command -v node >/dev/null 2>&1 || missing="$missing nodejs"
	command -v npm >/dev/null 2>&1 || missing="$missing npm"
fi
if [ -n "$missing" ]; then
	echo "setup: installing Debian packages:$missing"
	as_root apt-get update -qq
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	    --no-install-recommends $missing >/dev/null
fi

[ $want_tests -eq 1 ] || exit 0

# Node 22 for every JavaScript test, whatever apt gave us.
echo "setup: Node.js 22 (npm package node) in tests/node"
(cd "$here/node" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
PATH="$here/node/node_modules/.bin:$PATH"
export PATH
node --version

for d in sdk bench conformance k8s clients; do
	if [ -f "$here/$d/package-lock.json" ]; then
		echo "setup: npm packages for tests/$d"
		(cd "$here/$d" && npm ci --no-audit --no-fund --loglevel=error \
		    >/dev/null)
	fi
done
echo "setup: done"
