#!/bin/sh
# mcp-sandbox.service under a real systemd (issue 26): builds the .deb as
# tests/package does (Release, prefix /usr, cpack), boots the VM with
# systemd as pid 1 (run.sh --systemd) and runs systemd.sh there, which
# installs the .deb and checks the unit from outside it.
# Usage: tests/vm/systemd_test.sh SOURCE-DIR
# Exit: the guest's status; 77 (skip) when root, qemu, mmdebstrap or cpack
# is missing (checked before the build: it takes a minute).
set -eu
src=$1
here=$(cd "$(dirname "$0")" && pwd)
for c in qemu-system-x86_64 mmdebstrap cpio cpack dpkg-deb; do
	command -v "$c" >/dev/null 2>&1 || { echo "SKIP: $c is not installed"
	    exit 77; }
done
[ "$(id -u)" -eq 0 ] || { echo "SKIP: the VM's root filesystem needs root"
    exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/mcp-vm-systemd.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
t0=$(date +%s)
cmake -S "$src" -B "$work/b" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_SKIP_INSTALL_ALL_DEPENDENCY=ON \
    >"$work/build.log" 2>&1 &&
cmake --build "$work/b" -j "$(nproc)" --target mcp-sandbox \
    mcp-sandbox-init mcp_manpage >>"$work/build.log" 2>&1 &&
cpack --config "$work/b/CPackConfig.cmake" -B "$work/deb" \
    >>"$work/build.log" 2>&1 || { tail -30 "$work/build.log"; exit 1; }
echo "vm-systemd: the .deb built in $(($(date +%s) - t0)) s:" \
    "$(basename "$work"/deb/*.deb)"
rc=0
sh "$here/run.sh" --systemd --timeout 900 "$work/b/server/mcp-sandbox" \
    "$here/systemd.sh" "$work"/deb/*.deb "$here/systemd_client.py" || rc=$?
exit $rc
