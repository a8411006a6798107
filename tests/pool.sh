#!/bin/bash
# tests/pool.sh [-j N] [-r RUNNER] [-p PREFIX] -l LOGDIR -- TEST... - run independent
# tests N at a time (default MC_JOBS, else the number of CPUs), each with
# its output in LOGDIR/<name>.log; one line per test as it ends (PASS/FAIL
# and its seconds), the failed tests' logs at the end, exit 1 when any
# failed. RUNNER (e.g. "bash") is put before each TEST. With MC_TIMES set,
# "test<TAB>PREFIX/NAME<TAB>SECONDS" is appended there (tests/times.sh).
#
# For tests that share nothing but the CPUs: the cmocka binaries and the
# tests/cli scripts (each works in its own mktemp -d). Both cores of a
# 2-core machine are busy while one test waits (the CLI tests' 2-second
# slurmctld timeouts, valgrind's start) and another computes.
set -u
jobs=${MC_JOBS:-$(nproc 2>/dev/null || echo 2)} runner= logdir= prefix=
while [ $# -gt 0 ]; do
	case $1 in
	-j) jobs=$2; shift 2 ;;
	-r) runner=$2; shift 2 ;;
	-l) logdir=$2; shift 2 ;;
	-p) prefix=$2/; shift 2 ;;
	--) shift; break ;;
	*) echo "usage: $0 [-j N] [-r RUNNER] [-p PREFIX] -l LOGDIR -- TEST..." >&2; exit 2 ;;
	esac
done
[ -n "$logdir" ] && [ $# -gt 0 ] || { echo "usage: $0 [-j N] [-r RUNNER] [-p PREFIX] -l LOGDIR -- TEST..." >&2; exit 2; }
[ "$jobs" -ge 1 ] 2>/dev/null || jobs=1
mkdir -p "$logdir"
fail=()
declare -A name_of=() start_of=()

finish_one() { # PID RC
	local n=${name_of[$1]} dt
	dt=$(awk -v a="${start_of[$1]}" -v b="${EPOCHREALTIME/,/.}" 'BEGIN { printf "%.1f", b - a }')
	[ -n "${MC_TIMES:-}" ] && printf 'test\t%s%s\t%s\n' "$prefix" "$n" "$dt" >>"$MC_TIMES"
	if [ "$2" = 0 ]; then
		printf 'PASS  %-36s %5ss  %s\n' "$n" "$dt" "$(tail -n 1 "$logdir/$n.log")"
	else
		printf 'FAIL  %-36s %5ss  (rc %s; log %s)\n' "$n" "$dt" "$2" "$logdir/$n.log"
		fail+=("$n")
	fi
	unset "name_of[$1]" "start_of[$1]"
}

reap() { # wait for any one test to end
	local pid rc p
	wait -n -p pid; rc=$?
	if [ -n "${pid:-}" ]; then
		finish_one "$pid" "$rc"
	elif [ "$rc" = 127 ]; then
		# No child left, yet the table holds some: their status was
		# taken elsewhere. Count them failed rather than wait forever.
		for p in "${!name_of[@]}"; do finish_one "$p" lost; done
	fi
}

for t in "$@"; do
	while [ ${#name_of[@]} -ge "$jobs" ]; do reap; done
	n=$(basename "$t"); n=${n%.sh}
	# shellcheck disable=SC2086
	$runner "$t" >"$logdir/$n.log" 2>&1 </dev/null &
	name_of[$!]=$n start_of[$!]=${EPOCHREALTIME/,/.}
done
while [ ${#name_of[@]} -gt 0 ]; do reap; done
for n in "${fail[@]}"; do
	printf '\n----- %s -----\n' "$logdir/$n.log"
	cat "$logdir/$n.log"
done
[ ${#fail[@]} = 0 ] || { printf 'failed: %s\n' "${fail[*]}"; exit 1; }
