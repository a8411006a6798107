#!/bin/bash
# The page cache squeezed by the limit, after the step: a step that maps a
# 256 MiB file and reads its pages in a new shuffled order each pass (what
# a training job does to a memory-mapped dataset), twice:
#  (a) under --mem=128M, half the file: the kernel evicts the pages and
#      reads them again. The summary, slurmd's line and memcore report give
#      the file data read again (memory.stat workingset_refault_file) within
#      bounds computed from the access order alone (below) and, on cgroup
#      v2, the time the step stalled on memory (memory.pressure), with the
#      fix: --mem for the working set, or memcore stage;
#  (b) under --mem=1G: nothing read again, no stall worth a word, no fix.
# On cgroup v1 (the host) there is no memory.pressure per cgroup: the
# summary and the report say that the stall time is not available there
# (and refaults are measured where the kernel's v1 memory.stat has them);
# on v2 under a kernel with PSI off (no psi=1), they say that instead.
#
# The bounds of (a): pass 1 reads every page once, from disk (the program
# drops the file's cache first, which leaves no trace a refault could be
# counted from); in pass 2 at most the limit's 128 MiB of the file is still
# cached, so at least 256 - 128 MiB are read again, and at most all 256 MiB
# (one page per fault: the program asks for no read-around).
# guest: bookworm
# guest: why: the kernel's cgroup v2 counters of a squeezed page cache
#   (memory.stat workingset_refault_file, memory.pressure with psi=1 on the
#   guest's command line); the 6.1 kernel is the same in every suite and the
#   limit is memcore's own cgroup, made alike under every Slurm release: one
#   suite shows it
. "$(dirname "$0")/lib.sh"

MC_SOCKETS=1 MC_CORES_PER_SOCKET=2 MC_THREADS_PER_CORE=1
MC_REAL_MEMORY=1500 MC_GPUS=2
# Random page faults under reclaim are slow in a TCG guest.
MC_CMD_TIMEOUT=600
PROGS=$MEMCORE_BUILD/progs
MEMCORE=$MEMCORE_BUILD/memcore
[ -x "$PROGS/mc_mmap_shuffle" ] || mc_die "$PROGS/mc_mmap_shuffle missing: make progs"

FILE_MIB=256 TIGHT_MIB=128 PASSES=2
V2=0 PSI=0
[ -r /sys/fs/cgroup/cgroup.controllers ] && ! grep -q '^[0-9]*:memory:' /proc/self/cgroup && V2=1
# A kernel with PSI off (psi=0, or built with CONFIG_PSI_DEFAULT_DISABLED
# and booted without psi=1) has no
# /proc/pressure: on v2 the summary then says so instead of a stall time.
cat /proc/pressure/memory >/dev/null 2>&1 && PSI=1
mc_log "cgroup v$((V2 + 1)), PSI $([ $PSI = 1 ] && echo on || echo off)"


mc_cluster_start
mc_squeeze_setup shuffle.bin $FILE_MIB 500ms

# run MEM: the shuffled passes under --mem=MEM; sets OUT, ERR, JOB.
run() {
	mc_run srun -n1 --gpus=1 --mem="$1" --memcore=explain "$PROGS/mc_mmap_shuffle" "$f" $PASSES
	mc_log "--mem=$1: $MC_OUT $MC_ERR"
	OUT=$MC_OUT ERR=$MC_ERR
	JOB=$(grep -oE "memcore: step [0-9]+\.0 on" <<<"$ERR" | grep -oE "[0-9]+" | head -n1)
}

# --- (a) --mem=128M: squeezed ---------------------------------------------
run ${TIGHT_MIB}M
assert_rc 0 "(a) the step under --mem=${TIGHT_MIB}M runs"
assert_contains "$OUT" "read $((FILE_MIB * 256)) pages x $PASSES passes in shuffled order" "(a) it read every page of the file $PASSES times"
line=$(grep -E "^  page cache   " <<<"$ERR")
rf=$(mc_mib "$line" "read again after the kernel evicted it")
mf=$(mc_mib_after "$line" "the largest page cache")
mc_between "$rf" $(((PASSES - 1) * (FILE_MIB - TIGHT_MIB))) $(((PASSES - 1) * FILE_MIB + 16))
assert_eq 0 $? "(a) ${rf} MiB read again: at least the $((FILE_MIB - TIGHT_MIB)) MiB the limit could not keep, at most the $FILE_MIB MiB of pass 2"
mc_between "$mf" 1 $TIGHT_MIB
assert_eq 0 $? "(a) the largest page cache (${mf} MiB) is within the ${TIGHT_MIB} MiB limit"
if [ $V2 = 1 ] && [ $PSI = 0 ]; then
	assert_contains "$line" "memory stall time not available: the kernel has PSI off (psi=1 on its command line)" "(a) v2, PSI off: said so, no stall time made up"
elif [ $V2 = 1 ]; then
	st=$(grep -oE "[0-9.]+ s stalled on memory \(memory\.pressure some, [0-9.]+% of the wall time\)" <<<"$line")
	stall=${st%% s *}
	awk -v s="$stall" 'BEGIN { exit !(s > 0) }'
	assert_eq 0 $? "(a) v2: the stall time is shown and not 0 (${stall:-none} s)"
else
	assert_contains "$line" "memory stall time not available on cgroup v1 (the kernel keeps it per cgroup on v2 only)" "(a) v1: the stall time is said to be v2's only"
fi
assert_contains "$ERR" "  squeezed     the limit left too little page cache for the files the step reads" "(a) the squeeze said"
fix=$(grep -oE "  fix          --mem=[0-9]+M rather than next time's figure" <<<"$ERR" | grep -oE "[0-9]+" | head -n1)
[ -n "$fix" ] && [ "$fix" -ge $((rf + mf)) ]
assert_eq 0 $? "(a) the fix asks --mem=${fix:-?}M: at least the page cache held (${mf} MiB) and read again (${rf} MiB)"
assert_contains "$ERR" "memcore stage SRC DEST" "(a) ... or staging the files"
mc_wait_until 10 grep -qE "memcore: job $JOB\.0: after the step: .* squeezed=yes" "$MC_LOG_DIR/slurmd.log"
assert_match "$(grep "job $JOB\.0: after the step" "$MC_LOG_DIR/slurmd.log")" "refault_file=[0-9.]+ MiB memory_stall=$([ $V2 = 1 ] && [ $PSI = 1 ] && echo '[0-9.]+ s' || echo none) squeezed=yes" "(a) slurmd's line has the figures"

# memcore report: the same figures, kept with the job.
mc_run "$MEMCORE" report "$JOB"
assert_rc 0 "(a) memcore report $JOB"
if [ $V2 = 1 ] && [ $PSI = 1 ]; then
	assert_contains "$MC_OUT" "${line#  }" "(a) the report shows the step's page cache line"
else
	why=$([ $V2 = 1 ] && echo ": the kernel has PSI off (psi=1 on its command line)" ||
		echo " on cgroup v1 (the kernel keeps it per cgroup on v2 only)")
	assert_contains "$MC_OUT" "${line%%; memory stall time not available*}" "(a) the report shows the step's refaults"
	assert_eq 1 "$(grep -c "memory stall time not available" <<<"$MC_OUT")" "(a) ... and says once that there is no stall time"
	assert_contains "$MC_OUT" "  note: memory stall time not available$why" "(a) ... in a note"
fi
assert_contains "$MC_OUT" "  squeezed     the limit left too little page cache" "(a) ... and the squeeze"
mc_run "$MEMCORE" report "$JOB" --json
st=$(jq -c ".steps[] | select(.step == \"$JOB.0\")" <<<"$MC_OUT")
mc_log "(a) report --json: $st"
jrf=$(jq -r '.refault_file_bytes / 1048576 | floor' <<<"$st")
[ -n "$jrf" ] && [ $((jrf - rf)) -le 1 ] && [ $((rf - jrf)) -le 1 ]
assert_eq 0 $? "(a) --json: refault_file_bytes (${jrf} MiB) as the text (${rf} MiB)"
assert_eq 0 $(($(jq -r '.refault_file_bytes' <<<"$st") % $(getconf PAGESIZE))) "(a) --json: refault_file_bytes is whole pages"
assert_eq true "$(jq -r '.page_cache_squeezed' <<<"$st")" "(a) --json: page_cache_squeezed"
assert_eq "--mem=${fix}M" "$(jq -r '.squeeze_fix.mem_option' <<<"$st")" "(a) --json: the fix's option"
for k in refault_file_bytes memory_stall_usec squeeze_unavailable page_cache_squeezed squeeze_fix; do
	assert_eq true "$(jq "has(\"$k\")" <<<"$st")" "(a) --json has $k"
	grep -qE "^\.BR? $k( ,)?$" "$MC_TOP/docs/memcore.8"
	assert_eq 0 $? "(a) ... and memcore(8) JSON OUTPUT lists it"
done
if [ $V2 = 1 ] && [ $PSI = 1 ]; then
	jst=$(jq -r '.memory_stall_usec' <<<"$st")
	[ "$jst" -gt 0 ] 2>/dev/null
	assert_eq 0 $? "(a) --json: memory_stall_usec ($jst)"
	assert_eq null "$(jq -r '.squeeze_unavailable' <<<"$st")" "(a) --json: nothing unavailable"
else
	assert_eq null "$(jq -r '.memory_stall_usec' <<<"$st")" "(a) --json: memory_stall_usec null"
	assert_contains "$(jq -r '.squeeze_unavailable' <<<"$st")" "memory stall time not available$why" "(a) --json: ... and why"
fi

# --- (b) --mem=1G: roomy ----------------------------------------------------
run 1G
assert_rc 0 "(b) the step under --mem=1G runs"
line=$(grep -E "^  page cache   " <<<"$ERR")
rf=$(mc_mib "$line" "read again after the kernel evicted it")
mc_between "$rf" 0 8
assert_eq 0 $? "(b) nothing to speak of read again (${rf} MiB)"
assert_not_contains "$ERR" "squeezed " "(b) no squeeze said"
assert_not_contains "$ERR" "  fix          " "(b) no fix"
mc_run "$MEMCORE" report "$JOB" --json
st=$(jq -c ".steps[] | select(.step == \"$JOB.0\")" <<<"$MC_OUT")
mc_log "(b) report --json: $st"
# The kernel's exact peak (a sample can miss the end of a fast pass).
kp=$(jq -r '.kernel_peak_bytes / 1048576 | floor' <<<"$st")
[ -n "$kp" ] && [ "$kp" -ge $FILE_MIB ]
assert_eq 0 $? "(b) the whole file was cached at once (kernel peak ${kp} MiB >= $FILE_MIB MiB)"
assert_eq false "$(jq -r '.page_cache_squeezed' <<<"$st")" "(b) --json: not squeezed"
assert_eq null "$(jq -r '.squeeze_fix' <<<"$st")" "(b) --json: no fix"
if [ $V2 = 1 ] && [ $PSI = 1 ]; then
	jst=$(jq -r '.memory_stall_usec' <<<"$st")
	wall=$(jq -r '.wall_usec' <<<"$st")
	[ "$jst" -lt $((wall / 10)) ] 2>/dev/null
	assert_eq 0 $? "(b) --json: stalled ${jst} us, under a tenth of the ${wall} us"
fi

