#!/bin/sh
# Runs one libFuzzer harness for a bounded time, as ctest's fuzz tests do:
#   run.sh FUZZER SEED_DIR SECONDS
# The seeds are copied to a scratch corpus (the tree is never written);
# new inputs the run finds are thrown away with it. Exit status is the
# fuzzer's: nonzero on any crash, leak, sanitizer report, timeout of one
# input or out-of-memory.
set -eu
fuzzer=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
seeds=$2
secs=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/fuzz-run.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
mkdir "$work/corpus"
cp "$seeds"/* "$work/corpus/"
cd "$work"
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
"$fuzzer" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
    -max_len=65536 -print_final_stats=1 "$work/corpus"
