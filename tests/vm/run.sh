#!/bin/sh
# Boots a Debian kernel under qemu (software emulation is enough) with a
# small Debian root filesystem that holds this build's mcp-sandbox and a
# guest script, runs the script as root inside, and exits with its status.
# For what the host cannot show: cgroup v2 (these machines are v1), a
# kernel without Landlock (--append lsm=...), without unprivileged user
# namespaces (the guest script writes the sysctl), another kernel package
# (--kernel-package). tests/vm/README.md has examples.
#
# Usage: tests/vm/run.sh [--kernel-package PKG] [--append ARGS]
#            [--memory MB] [--timeout S] [--systemd] BINARY GUEST-SCRIPT
#            [FILE...]
# --systemd: systemd is pid 1 (the root filesystem has it, and the
# libraries the .deb needs); the guest script runs as a unit of its own,
# mcp-guest.service, once the system is up (systemd-init here).
# BINARY lands at /opt/mcp/mcp-sandbox, GUEST-SCRIPT at /opt/mcp/guest.sh
# and each FILE at /opt/mcp/<its name>; the guest runs
# `sh /opt/mcp/guest.sh` in /opt/mcp with MCP_SANDBOX set to the binary.
# Exit: the guest script's status; 77 (skip) when qemu, mmdebstrap or the
# kernel package cannot be had; 124 when the VM did not finish in time.
#
# Cached (by content) in $MCP_VM_CACHE (default ~/.cache/mcp-sandbox/vm):
# the kernel, and the root filesystem as an initramfs archive, keyed by
# its package list and the machine's apt sources. The binary, the script
# and the files go into a second, small archive made on every run.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
cache=${MCP_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mcp-sandbox/vm}
kpkg=""
append=""
# Guest RAM: the root filesystem lives in it (~150 MiB) beside the tests.
mem=1024
# The whole VM run, boot to power-off; a test that hangs fails, not CI.
timeout_s=900
# What the root filesystem holds beyond Debian's Essential set: python3
# for the test payloads, mount for /init; the binary's libraries from ldd.
extra_pkgs="python3 mount"
systemd=""
# Bump to rebuild every cached root filesystem (the recipe changed).
recipe=1

skip()
{
	echo "SKIP: $*"
	exit 77
}

while [ $# -gt 0 ]; do
	case $1 in
	--kernel-package) kpkg=$2; shift 2 ;;
	--append) append="$append $2"; shift 2 ;;
	--memory) mem=$2; shift 2 ;;
	--timeout) timeout_s=$2; shift 2 ;;
	--systemd) systemd=1; shift ;;
	--) shift; break ;;
	-*) echo "usage: tests/vm/run.sh [--kernel-package PKG] [--append ARGS]" \
	    "[--memory MB] [--timeout S] BINARY GUEST-SCRIPT [FILE...]" >&2
	    exit 2 ;;
	*) break ;;
	esac
done
[ $# -ge 2 ] || { echo "tests/vm/run.sh: BINARY and GUEST-SCRIPT needed" >&2;
    exit 2; }
binary=$1
script=$2
shift 2

command -v qemu-system-x86_64 >/dev/null 2>&1 ||
	skip "qemu-system-x86_64 is not installed (apt-get install qemu-system-x86; tests/setup.sh --test does)"
command -v mmdebstrap >/dev/null 2>&1 ||
	skip "mmdebstrap is not installed (tests/setup.sh --test installs it)"
command -v cpio >/dev/null 2>&1 || skip "cpio is not installed"
[ "$(id -u)" -eq 0 ] || skip "building the root filesystem needs root"
[ -x "$binary" ] || { echo "tests/vm/run.sh: $binary is not executable" >&2;
    exit 2; }
# a service manager, and what the .deb depends on that ldd does not show
# (libmicrohttpd is loaded when HTTP is asked for)
[ -z "$systemd" ] ||
	extra_pkgs="$extra_pkgs systemd systemd-sysv dbus libmicrohttpd12"

mkdir -p "$cache"
work=$(mktemp -d "${TMPDIR:-/tmp}/mcp-vm.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

# ---- the kernel: Debian's, from the machine's apt sources ----
if [ -z "$kpkg" ]; then
	kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
	    awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
	[ -n "$kpkg" ] || skip "no linux-image-amd64 in the apt lists (apt-get update?)"
fi
kernel="$cache/$kpkg.vmlinuz"
if [ ! -s "$kernel" ]; then
	echo "vm: downloading $kpkg"
	(cd "$work" && apt-get download -q "$kpkg" >/dev/null 2>&1) ||
		skip "cannot download the kernel package $kpkg"
	dpkg-deb -x "$work"/"$kpkg"_*.deb "$work/k"
	cp "$work"/k/boot/vmlinuz-* "$kernel.part"
	mv "$kernel.part" "$kernel"
	rm -rf "$work/k" "$work"/*.deb
fi

# ---- the root filesystem: Essential + python3 + the binary's libraries ----
libpkgs=$(ldd "$binary" | awk '/=> \// { print $3 }' |
    while read -r lib; do
	    dpkg -S "$(readlink -f "$lib")" 2>/dev/null ||
		dpkg -S "$lib" 2>/dev/null
    done | cut -d: -f1 | sort -u | tr '\n' ' ')
pkgs=$(echo $extra_pkgs $libpkgs | tr ' ' '\n' | sort -u | tr '\n' ',' |
    sed 's/,$//')
sources=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
    /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v '^#' || true)
# the machine's own release (bookworm on Debian 12)
suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[ -n "$suite" ] || skip "no VERSION_CODENAME in /etc/os-release"
key=$(printf '%s\n%s\n%s\n%s\n' "$recipe" "$suite" "$pkgs" "$sources" |
    sha256sum | cut -c1-16)
rootfs="$cache/rootfs-$key.cpio"
if [ ! -s "$rootfs" ]; then
	echo "vm: building the root filesystem ($pkgs)"
	t0=$(date +%s)
	# the machine's own apt sources (deb822 or one-line), as a file each
	srcfiles=""
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
	    /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] && srcfiles="$srcfiles $f"
	done
	[ -n "$srcfiles" ] || skip "no apt sources on this machine"
	# no docs, man pages or locales: a third of the size
	mmdebstrap --quiet --variant=essential --include="$pkgs" \
	    --dpkgopt='path-exclude=/usr/share/doc/*' \
	    --dpkgopt='path-exclude=/usr/share/man/*' \
	    --dpkgopt='path-exclude=/usr/share/locale/*' \
	    --dpkgopt='path-exclude=/usr/share/info/*' \
	    "$suite" "$work/root" $srcfiles >"$work/mmdebstrap.log" 2>&1 || {
		tail -20 "$work/mmdebstrap.log"
		skip "mmdebstrap could not build the root filesystem"
	}
	rm -rf "$work/root/var/cache/apt" "$work/root/var/lib/apt/lists"
	(cd "$work/root" && find . | cpio -o -H newc --quiet) >"$rootfs.part"
	mv "$rootfs.part" "$rootfs"
	rm -rf "$work/root"
	echo "vm: root filesystem built in $(($(date +%s) - t0)) s," \
	    "$(du -m "$rootfs" | cut -f1) MiB"
fi

# ---- this run's files: /init, the binary, the script, the files ----
mkdir -p "$work/o/opt/mcp"
cp "$here/init" "$work/o/init"
chmod 755 "$work/o/init"
if [ -n "$systemd" ]; then
	# /init roots the system as before, then hands pid 1 to systemd,
	# which starts the guest script as a unit once the system is up
	mkdir -p "$work/o/etc/systemd/system/multi-user.target.wants"
	cp "$here/systemd-init/mcp-guest.service" "$work/o/etc/systemd/system/"
	ln -s ../mcp-guest.service \
	    "$work/o/etc/systemd/system/multi-user.target.wants/mcp-guest.service"
	cp "$here/systemd-init/guest-unit.sh" "$work/o/opt/mcp/guest-unit.sh"
	append="$append mcp.systemd=1"
fi
cp "$binary" "$work/o/opt/mcp/mcp-sandbox"
# the sandbox's init program sits beside the server (sandbox/ctx.c)
cp "$(dirname "$binary")/mcp-sandbox-init" "$work/o/opt/mcp/mcp-sandbox-init"
cp "$script" "$work/o/opt/mcp/guest.sh"
for f in "$@"; do
	cp -r "$f" "$work/o/opt/mcp/"
done
(cd "$work/o" && find . | cpio -o -H newc --quiet) >"$work/overlay.cpio"
# two archives in one initramfs: the kernel unpacks both, in order
cat "$rootfs" "$work/overlay.cpio" >"$work/initrd"

# ---- boot: software emulation (TCG) unless MCP_VM_ACCEL says kvm: here
# /dev/kvm exists but a guest under it hangs in the firmware ----
echo "vm: booting $kpkg (${timeout_s} s at most)"
t0=$(date +%s)
rc=0
timeout -k 10 "$timeout_s" qemu-system-x86_64 -accel "${MCP_VM_ACCEL:-tcg}" \
    -m "$mem" -smp 2 -nographic -no-reboot -nodefaults -serial stdio \
    -kernel "$kernel" -initrd "$work/initrd" \
    -append "console=ttyS0 quiet panic=-1 $append" \
    </dev/null >"$work/console.log" 2>&1 || rc=$?
cp "$work/console.log" "$cache/last-console.log"
# the guest's own lines, not the kernel's
grep -a '^MCP-VM' "$work/console.log" | tr -d '\r' || true
status=$(grep -a '^MCP-VM-EXIT ' "$work/console.log" | tr -d '\r' |
    awk '{ print $2 }' | tail -1)
echo "vm: done in $(($(date +%s) - t0)) s"
if [ -z "$status" ]; then
	echo "vm: the guest did not report (qemu status $rc); console" \
	    "(all of it in $cache/last-console.log):"
	grep -a -v '^\[ *[0-9.]*\]  ' "$work/console.log" | tail -40
	[ $rc -eq 124 ] && exit 124
	exit 1
fi
exit "$status"
