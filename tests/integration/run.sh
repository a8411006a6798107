#!/bin/bash
# tests/integration/run.sh [PATTERN...] - run tests/integration/test_*.sh in
# order (those whose name contains a PATTERN, if given).  Each test starts
# its own throwaway cluster through lib.sh (about 1-3 s here).  Prints
# PASS/FAIL/SKIP per test; exits 1 when any failed, 77 when not root.
# A test that exits 77 is skipped (it says why on its last lines): counted
# and printed as SKIP, never as a pass.
#
#   MEMCORE_BUILD   the build dir with memcore.so (default: <repo>/build)
#   MC_TEST_TIMEOUT seconds per test script (default 300; a test with a
#                   "# timeout: SECONDS" line gets that when longer)
#   MC_KEEP_WORK=1  keep every test's work dir (a failed test's is always kept)
#   MC_GUEST_ONLY=1 only the tests marked for the guest tier (tests/vm):
#                   those that depend on cgroup v2, the kernel's memory
#                   accounting or the Slurm version, in the guest
#                   MC_GUEST_SUITE names (bookworm, trixie, sid). A test's
#                   line `# guest: yes` runs it in every suite, `# guest:
#                   trixie sid` in those (bookworm has the host's Slurm
#                   22.05: a test that depends only on the Slurm version
#                   learns nothing new there), and its `# guest: why: ...`
#                   line says what it depends on; a marked test without
#                   one FAILS. Without a mark (or `# guest: no: why`) a
#                   test runs on the host only.
#   MC_WORK_BASE    each test's work dir is MC_WORK_BASE/<test> (the guests
#                   keep it off the 9p share: unix sockets, big files)
#   MC_TIMES        append "test<TAB>NAME<TAB>SECONDS" per test to this file
#                   (make check's slowest-tests table, tests/times.sh;
#                   NAME is asan:<test> under MC_SANITIZE=1)
#   MC_SANITIZE=1   memcore.so is an ASan build (make integration-asan, lib.sh)
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

tests=() unexplained=()
for t in "$here"/test_*.sh; do
	[ -e "$t" ] || continue
	n=$(basename "$t" .sh)
	if [ $# -gt 0 ]; then
		m=0
		for p in "$@"; do [[ $n == *"$p"* ]] && m=1; done
		[ $m = 1 ] || continue
	fi
	if [ "${MC_GUEST_ONLY:-0}" = 1 ]; then
		# the first `# guest:` line that is not its why
		# (its words up to the first other character: "trixie sid",
		# "yes", "no: why")
		mark=$(sed -n '/^# guest: why:/d; s/^# guest: //p' "$t" | head -n 1)
		mark=" $(printf '%s ' ${mark%%[^a-z ]*})"
		case $mark in
		" yes "|*" ${MC_GUEST_SUITE:-none} "*) ;;
		*) continue ;;
		esac
		grep -q '^# guest: why: ' "$t" || unexplained+=("$n")
	fi
	tests+=("$t")
done
[ ${#tests[@]} -gt 0 ] || { echo "no tests match: $*" >&2; exit 1; }

pass=0 fail=0 skip=0 failed=() skipped=() t_all=$SECONDS
for n in "${unexplained[@]}"; do
	fail=$((fail + 1)); failed+=("$n")
	printf 'FAIL  %-40s    0s  (marked for the guests without a "# guest: why: ..." line saying what it depends on there)\n' "$n"
done
for t in "${tests[@]}"; do
	n=$(basename "$t" .sh)
	log=$logdir/$n.log
	t0=$SECONDS
	if [ -n "${MC_WORK_BASE:-}" ]; then export MC_WORK=$MC_WORK_BASE/$n; fi
	# a test that needs longer says so: "# timeout: SECONDS"
	t_s=$(sed -n 's/^# timeout: \([0-9][0-9]*\).*/\1/p' "$t" | head -n 1)
	[ -n "$t_s" ] && [ "$t_s" -gt "$timeout_s" ] || t_s=$timeout_s
	timeout -k 15 "$t_s" bash "$t" >"$log" 2>&1 </dev/null
	rc=$?
	dt=$((SECONDS - t0))
	# (make check's table: the sanitizer tier's runs apart from the plain ones)
	[ -n "${MC_TIMES:-}" ] && printf 'test\t%s%s\t%s\n' "$([ "${MC_SANITIZE:-0}" = 1 ] && echo asan:)" "$n" "$dt" >>"$MC_TIMES"
	if [ $rc = 0 ]; then
		pass=$((pass + 1))
		printf 'PASS  %-40s %4ss\n' "$n" "$dt"
	elif [ $rc = 77 ]; then
		skip=$((skip + 1)); skipped+=("$n")
		printf 'SKIP  %-40s %4ss  !!! SKIPPED, not passed: %s\n' "$n" "$dt" \
			"$( (grep -h 'SKIP: ' "$log" || tail -n 1 "$log") | tail -n 1)"
	else
		fail=$((fail + 1)); failed+=("$n")
		why="rc $rc"; [ $rc = 124 ] && why="timed out after ${t_s}s"
		printf 'FAIL  %-40s %4ss  (%s; log %s)\n' "$n" "$dt" "$why" "$log"
		# The failed assertions first (a test's own output lines may
		# start with two spaces too and would push them out of sight).
		grep -E -A6 '^FAIL: ' "$log" | grep -E '^(FAIL: |  )' | head -n 40 | sed 's/^/      /'
		echo "      ----- last lines of $log -----"
		tail -n 30 "$log" | sed 's/^/      /'
	fi
done
printf '%d passed, %d failed, %d skipped, %ss\n' "$pass" "$fail" "$skip" "$((SECONDS - t_all))"
[ $skip = 0 ] || printf 'SKIPPED: %s\n' "${skipped[*]}"
[ $fail = 0 ] || { printf 'failed: %s\n' "${failed[*]}"; exit 1; }
