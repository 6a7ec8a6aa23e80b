#!/bin/sh
# A long fuzzing campaign: every harness (or those named) runs RUNS inputs
# (default 10 million) from its seeds, one after another, at low priority.
#   campaign.sh BUILD_DIR OUT_DIR [RUNS [TARGET...]]
# BUILD_DIR is a -DMCP_FUZZ=ON build; OUT_DIR gets corpus-TARGET/ (the
# seeds plus what the run found), TARGET.log and any crash-*/leak-*/
# timeout-* reproducer. Exit nonzero if any target failed. FUZZ_MAX_LEN
# (default 4096) bounds the inputs.
set -eu
build=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
runs=${3:-10000000}
shift 2
[ $# -gt 0 ] && shift
targets=${*:-calculate validator jsonrpc http}
here=$(cd "$(dirname "$0")" && pwd)
status=0
for t in $targets; do
	mkdir -p "$out/corpus-$t"
	cp -n "$here/corpus/$t"/* "$out/corpus-$t/"
	cd "$out"
	echo "== $t: $runs runs" >&2
	# -max_len 4096: MCP messages and expressions are short; the seeds
	# carry the long ones, and short inputs keep the rate up (jsonrpc's
	# multi-line inputs run at about 2.5 times the rate at 1024)
	if ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	    nice "$build/tests/fuzz/fuzz_$t" -runs="$runs" -max_len="${FUZZ_MAX_LEN:-4096}" \
	    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
	    -artifact_prefix="$out/$t-" "$out/corpus-$t" >"$out/$t.log" 2>&1
	then
		grep -E '^stat::number_of_executed_units|^#[0-9]+.*DONE' \
		    "$out/$t.log" >&2 || true
	else
		echo "campaign: $t FAILED, see $out/$t.log" >&2
		status=1
	fi
done
exit $status
