#!/bin/sh
# Builds mcp-sandbox twice (release, and ASan+UBSan) and runs every test
# suite in both builds: unit, integration (stdio and HTTP), adversarial
# (sandbox escapes), SDK client and conformance. Exit 0 only if all pass.
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

status=0
echo "== tests, release build"
ctest --test-dir "$root/build" --output-on-failure || status=1
echo "== tests, sanitizer build (unit, integration, adversarial)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir "$root/build-asan" --output-on-failure \
    -L 'unit|integration|adversarial' || status=1
[ $status -eq 0 ] && echo "run-all: every suite passed in both builds"
exit $status
