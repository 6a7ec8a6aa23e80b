#!/bin/sh
# Builds mcp-sandbox twice (release, and ASan+UBSan) and runs every test
# suite in both builds (and also builds it with gcc -O3 and with clang,
# warnings as errors, without running the tests there): unit, integration (stdio and HTTP), adversarial
# (sandbox escapes), SDK client, conformance and soak; in the release build
# also the real clients, the .deb (package), the podman image (container)
# and the Kubernetes manifests (k8s). Then builds the libFuzzer harnesses
# with clang (build-fuzz) and runs each for a bounded time (label fuzz,
# tests/fuzz/README.md). Exit 0 only if all pass.
# Run tests/setup.sh --test first (the README's test command does).
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc 2>/dev/null || echo 2)

build()
{
	dir=$1
	shift
	cmake -S "$root" -B "$dir" "$@" >/dev/null
	cmake --build "$dir" -j"$jobs"
}

echo "== release build"
build "$root/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo
echo "== sanitizer build (ASan + UBSan)"
build "$root/build-asan" -DCMAKE_BUILD_TYPE=Debug -DMCP_SANITIZE=ON
# Built, not tested: each compiler and optimisation level warns about
# different things, and every build is -Werror (CMakeLists.txt says why).
echo "== gcc Release build (-O3), warnings as errors"
build "$root/build-gcc-release" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=gcc
if command -v clang >/dev/null 2>&1; then
	echo "== clang build, warnings as errors"
	build "$root/build-clang" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang
else
	echo "run-all: clang is not installed (tests/setup.sh --test installs it)" >&2
	exit 1
fi

echo "== fuzz build (clang, libFuzzer + ASan + UBSan)"
cmake -S "$root" -B "$root/build-fuzz" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang -DMCP_FUZZ=ON >/dev/null
cmake --build "$root/build-fuzz" -j"$jobs" --target fuzzers

status=0
echo "== tests, release build"
ctest --test-dir "$root/build" --output-on-failure || status=1
echo "== tests, sanitizer build (unit, integration, adversarial)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir "$root/build-asan" --output-on-failure \
    -L 'unit|integration|adversarial' || status=1
echo "== fuzz tests (each harness for a bounded time)"
ctest --test-dir "$root/build-fuzz" --output-on-failure -L fuzz || status=1
[ $status -eq 0 ] && echo "run-all: every suite passed in both builds"
exit $status
