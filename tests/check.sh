#!/bin/bash
# tests/check.sh - make check after its packages: every tier, timed.
#
#   1. build: the plugin, the command, the test programs and the unit
#      binaries, with every CPU (make -jN);
#   2. the guest tier (make vm-check) starts in the background: its guests
#      wait on Slurm's timers and srun round trips about half of the time,
#      which is what the host tier fills;
#   3. the host tiers in the foreground, in order: unit (cmocka and
#      tests/cli, tests/pool.sh), sanitize, valgrind, integration (a real
#      Slurm 22.05 on this host's cgroup v1), integration-asan (the
#      plugin's integration tests with memcore.so under ASan/UBSan in that
#      slurmd and slurmstepd);
#   4. the guest tier's output, whole, once it ends;
#   5. each tier's time and the ten slowest tests (tests/times.sh), also
#      when a tier failed. Exit 1 when any tier failed.
#
#   MC_CHECK_SERIAL=1   the guest tier after the host tiers, not beside
#                       them (to time each alone)
#   MC_CHECK_TIERS      the host tiers to run (default: unit sanitize
#                       valgrind integration integration-asan); VM_SUITES= runs no guest
#                       (then MEMCORE_VM_ALLOW_SKIP=1 is needed: a check
#                       without guests is not a whole check)
# Needs root for the integration and guest tiers (make check is run as root).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
B=${B:-build}
# the make that called us, with -Werror (make check's own flags)
read -ra make <<<"${MC_MAKE:-make --no-print-directory WERROR=-Werror}"
mkdir -p "$B/logs"
export MC_TIMES=$top/$B/check-times.tsv
: >"$MC_TIMES"
tier() { bash tests/times.sh tier "$MC_TIMES" "$@"; }
t_all=${EPOCHREALTIME/,/.}
failed=()

tier build "${make[@]}" -j"$(nproc)" all progs unit-bins || failed+=(build)

vm_log=$B/logs/vm-check.log vm_pid=
vm_tier() { tier "guest tier" "${make[@]}" vm-check >"$vm_log" 2>&1; }
if [ ${#failed[@]} = 0 ] && [ "${MC_CHECK_SERIAL:-0}" != 1 ]; then
	echo "memcore: the guest tier runs beside the host tiers; its output: $vm_log (printed when it ends)"
	# in a process group of its own (set -m), so that an interrupted check
	# stops exactly its guest tier (tests/vm/check.sh then stops its guests)
	set -m
	vm_tier &
	vm_pid=$!
	set +m
	trap '[ -n "$vm_pid" ] && kill -TERM -- -"$vm_pid" 2>/dev/null' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
fi

if [ ${#failed[@]} = 0 ]; then
	for t in ${MC_CHECK_TIERS:-unit sanitize valgrind integration integration-asan}; do
		printf '\n== make %s\n' "$t"
		tier "$t" "${make[@]}" "$t" || failed+=("$t")
	done
fi

if [ -n "$vm_pid" ]; then
	wait "$vm_pid" || failed+=("guest tier")
	vm_pid=
	printf '\n== make vm-check (ran beside the host tiers)\n'
	cat "$vm_log"
elif [ ${#failed[@]} = 0 ] || [ "${failed[*]}" != build ]; then
	printf '\n== make vm-check\n'
	tier "guest tier" "${make[@]}" vm-check || failed+=("guest tier")
fi
trap - EXIT

printf 'tier\tmake check (all)\t%s\n' "$(awk -v a="$t_all" -v b="${EPOCHREALTIME/,/.}" 'BEGIN { printf "%.0f", b - a }')" >>"$MC_TIMES"
bash tests/times.sh report "$MC_TIMES" 10
if [ ${#failed[@]} -gt 0 ]; then
	printf '\nmemcore: make check FAILED in: %s\n' "${failed[*]}"
	exit 1
fi
printf '\nmemcore: make check passed\n'
