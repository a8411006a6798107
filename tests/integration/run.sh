#!/bin/bash
# tests/integration/run.sh [PATTERN...] - run tests/integration/test_*.sh in
# order (those whose name contains a PATTERN, if given).  Each test starts
# its own throwaway cluster through lib.sh (about 1-3 s here).  Prints
# PASS/FAIL per test; exits 1 when any failed, 77 when not root.
#
#   MEMCORE_BUILD   the build dir with memcore.so (default: <repo>/build)
#   MC_TEST_TIMEOUT seconds per test script (default 300)
#   MC_KEEP_WORK=1  keep every test's work dir (a failed test's is always kept)
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
export MC_TOP=$top
export MEMCORE_BUILD=${MEMCORE_BUILD:-$top/build}
timeout_s=${MC_TEST_TIMEOUT:-300}

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: the integration tests start slurmctld, slurmd and munged: run them as root" >&2
	exit 77
fi

logdir=$here/.work/logs
mkdir -p "$logdir"

tests=()
for t in "$here"/test_*.sh; do
	[ -e "$t" ] || continue
	n=$(basename "$t" .sh)
	if [ $# -gt 0 ]; then
		m=0
		for p in "$@"; do [[ $n == *"$p"* ]] && m=1; done
		[ $m = 1 ] || continue
	fi
	tests+=("$t")
done
[ ${#tests[@]} -gt 0 ] || { echo "no tests match: $*" >&2; exit 1; }

pass=0 fail=0 failed=() t_all=$SECONDS
for t in "${tests[@]}"; do
	n=$(basename "$t" .sh)
	log=$logdir/$n.log
	t0=$SECONDS
	timeout -k 15 "$timeout_s" bash "$t" >"$log" 2>&1 </dev/null
	rc=$?
	dt=$((SECONDS - t0))
	if [ $rc = 0 ]; then
		pass=$((pass + 1))
		printf 'PASS  %-40s %4ss\n' "$n" "$dt"
	else
		fail=$((fail + 1)); failed+=("$n")
		why="rc $rc"; [ $rc = 124 ] && why="timed out after ${timeout_s}s"
		printf 'FAIL  %-40s %4ss  (%s; log %s)\n' "$n" "$dt" "$why" "$log"
		grep -E '^(FAIL|  )' "$log" | head -n 40 | sed 's/^/      /'
		echo "      ----- last lines of $log -----"
		tail -n 30 "$log" | sed 's/^/      /'
	fi
done
printf '%d passed, %d failed, %ss\n' "$pass" "$fail" "$((SECONDS - t_all))"
[ $fail = 0 ] || { printf 'failed: %s\n' "${failed[*]}"; exit 1; }
