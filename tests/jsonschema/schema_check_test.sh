#!/bin/sh
# Runs a schema-check build and compares its exit status and stderr exactly.
# usage: schema_check_test.sh BINARY EXPECTED_RC EXPECTED_STDERR_FILE
out=$("$1" 2>&1 >/dev/null)
rc=$?
if [ "$rc" -ne "$2" ]; then
	echo "exit status $rc, expected $2; stderr:"; echo "$out"; exit 1
fi
if [ "$out" != "$(cat "$3")" ]; then
	echo "stderr differs. got:"; echo "$out"; echo "expected:"; cat "$3"; exit 1
fi
