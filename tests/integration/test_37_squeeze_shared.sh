#!/bin/bash
# Two jobs share one file's page cache (issue 38 item 4). Job S, under
# --mem=128M, reads a 256 MiB file in shuffled passes: the pages it reads
# in are charged to its memory cgroup, and its limit evicts them. Job L,
# under --mem=1G, reads the same file at the same time as a second reader
# (mc_mmap_shuffle "shared": it finds S's pages in the cache) and reads
# again what S's limit evicted: the kernel counts those refaults in L's
# cgroup (memory.stat workingset_refault_file), though L's own usage never
# came near its limit. L must not be told that its limit squeezed its page
# cache, nor be given a fix (a --mem below the 1G it had). The refaults L
# had are shown all the same, and the test checks that they are what a
# memcore before the near-the-limit rule (MC_SQUEEZE_NEAR_PCT) judged a
# squeeze by (at least 64 MiB, and as much as the largest page cache L
# held). (L starts once S has read the whole file:
# every page L then faults in is one S's limit evicted, a refault.)
# guest: no: the page cache of two cgroups on the host's cgroup v1 shows
#   it; test_37_squeeze has the counters on v2 in the bookworm guest, and
#   the rule is the same code on both
. "$(dirname "$0")/lib.sh"

MC_SOCKETS=1 MC_CORES_PER_SOCKET=2 MC_THREADS_PER_CORE=1
MC_REAL_MEMORY=2000 MC_GPUS=2
PROGS=$MEMCORE_BUILD/progs
MEMCORE=$MEMCORE_BUILD/memcore
[ -x "$PROGS/mc_mmap_shuffle" ] || mc_die "$PROGS/mc_mmap_shuffle missing: make progs"
FILE_MIB=256 S_MIB=128 L_MIB=1024 MIB=1048576

mc_cluster_start
mc_squeeze_setup shared.bin $FILE_MIB 250ms

# S first: its first pass reads every page in (dropping the file's cache
# before it), its limit keeping at most 128 MiB of them; it goes on
# reading until L has ended.
timeout -k 5 "$MC_CMD_TIMEOUT" srun -n1 --gpus=1 --mem=${S_MIB}M -J mc-squeeze-s --memcore=explain \
	"$PROGS/mc_mmap_shuffle" "$f" 12 >"$MC_WORK/tmp/s.out" 2>"$MC_WORK/tmp/s.err" </dev/null &
S_PID=$!
mc_at_exit 'kill "$S_PID" 2>/dev/null'
mc_wait_until 30 eval '[ -n "$(squeue -h -n mc-squeeze-s -t R -o %i)" ]' || mc_die "job S did not start"
S=$(squeue -h -n mc-squeeze-s -o %i)
# S has read every page once when its cgroup first reads one again (the
# kernel evicted it, S's limit holding half the file): half the file is
# cached, charged to S, the other half evicted by S's limit.
s_refaults() {
	local cg
	cg=$("$MEMCORE" report "$S" --json 2>/dev/null | jq -r '.running_steps[]? | select(.step | endswith(".0")) | .cgroup')
	[ -n "$cg" ] && awk '$1 == "workingset_refault_file" { print $2 }' "$cg/memory.stat"
}
mc_wait_until 60 eval '[ "$(s_refaults)" -gt 0 ]' || mc_die "job S never read a page again"
mc_log "S has read the file once: $(s_refaults) pages read again so far"

# L: the same file, its pages shared, 3 passes.
mc_run srun -n1 --gpus=1 --mem=${L_MIB}M -J mc-squeeze-l --memcore=explain "$PROGS/mc_mmap_shuffle" "$f" 3 7 shared
mc_log "L: $MC_OUT $MC_ERR"
assert_rc 0 "job L (--mem=${L_MIB}M) ran beside job S"
L=$(grep -oE "memcore: step [0-9]+\.0 on" <<<"$MC_ERR" | grep -oE "[0-9]+" | head -n1)
line=$(grep -E "^  page cache   " <<<"$MC_ERR")
rf=$(mc_mib "$line" "read again after the kernel evicted it")
mf=$(mc_mib_after "$line" "the largest page cache")
peak=$(grep -E "^  peak " <<<"$MC_ERR")
mc_log "L: read again ${rf} MiB, largest page cache ${mf} MiB; $peak"
assert_not_contains "$MC_ERR" "  squeezed     " "L is not told its limit squeezed its page cache: its usage never came near --mem=${L_MIB}M"
assert_not_contains "$MC_ERR" "rather than next time's figure" "... and given no squeeze fix"
mc_wait_until 10 grep -qE "memcore: job $L\.0: after the step: " "$MC_LOG_DIR/slurmd.log"
assert_match "$(grep "job $L\.0: after the step" "$MC_LOG_DIR/slurmd.log")" "refault_file=[0-9.]+ MiB memory_stall=none squeezed=no" "slurmd's line: L's refaults, not squeezed"
mc_run "$MEMCORE" report "$L" --json
st=$(jq -c ".steps[] | select(.step == \"$L.0\")" <<<"$MC_OUT")
assert_eq "false null" "$(jq -r '"\(.page_cache_squeezed) \(.squeeze_fix)"' <<<"$st")" "report --json: not squeezed, no fix"
rb=$(jq -r '.refault_file_bytes' <<<"$st") mb=$(jq -r '.max_page_cache_bytes' <<<"$st")
[ $((rb / MIB - rf)) -le 1 ] && [ $((rf - rb / MIB)) -le 1 ] && [ $((mb / MIB - mf)) -le 1 ] && [ $((mf - mb / MIB)) -le 1 ]
assert_eq 0 $? "report --json: the refaults ($rb bytes) and the largest page cache ($mb) as the summary said"
# What the pages are: S's limit evicted them, L read them again: every
# page L held came so (all but the odd page whose eviction the kernel
# forgot). Runs here gave refaults equal to or above the largest page
# cache, which with 64 MiB is what the old rule called squeezed.
[ "$rb" -ge $((64 * MIB)) ] && [ "$rb" -ge $((mb - MIB)) ]
assert_eq 0 $? "L read again $rb bytes that S's limit evicted: at least 64 MiB and all of its largest page cache ($mb bytes) but a MiB at most"

# S ran its passes under its limit (the pages L took over relieved it:
# the squeeze of a step alone is test_37_squeeze's).
wait "$S_PID"
assert_eq 0 $? "job S read its 12 passes under --mem=${S_MIB}M"
mc_log "S: $(cat "$MC_WORK/tmp/s.err")"
