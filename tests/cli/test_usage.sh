#!/bin/bash
# memcore usage: the split on the v1 and v2 fixtures, --json, bad input.
. "$(dirname "$0")/lib.sh"
CG=$DATA/cgroup

for d in v1/slurm_n1/uid_0/job_7/step_0 v2/job_7/step_0; do
	run_mc usage --cgroup "$CG/$d" --json
	expect_eq "$d: rc" "$RC" 0
	j=$OUT
	get() { printf '%s' "$j" | jq -r ".$1"; }
	expect_eq "$d: non_reclaimable_bytes" "$(get non_reclaimable_bytes)" 3006476288
	expect_eq "$d: anon_bytes" "$(get anon_bytes)" 2684354560
	expect_eq "$d: shmem_bytes" "$(get shmem_bytes)" 322121728
	expect_eq "$d: file_bytes" "$(get file_bytes)" 15032385536
	expect_eq "$d: usage_bytes" "$(get usage_bytes)" 18038861824
	expect_eq "$d: oom_kills" "$(get oom_kills)" 2
done
# The effective limit: the lowest on the path to the root, and where it
# sits. v1: on the step; v2: on the job above the step (whose own
# memory.max is "max").
run_mc usage --cgroup "$CG/v1/slurm_n1/uid_0/job_7/step_0" --json
expect_eq "v1 limit_bytes" "$(printf '%s' "$OUT" | jq -r .limit_bytes)" 34359738368
expect_eq "v1 limit_cgroup" "$(printf '%s' "$OUT" | jq -r .limit_cgroup)" "$CG/v1/slurm_n1/uid_0/job_7/step_0"
run_mc usage --cgroup "$CG/v2/job_7/step_0" --json
expect_eq "v2 step limit_bytes (the job's, above)" "$(printf '%s' "$OUT" | jq -r .limit_bytes)" 34359738368
expect_eq "v2 step limit_cgroup" "$(printf '%s' "$OUT" | jq -r .limit_cgroup)" "$CG/v2/job_7"
# Slurm's cgroup/v2 layout as read in a guest (24.11; 26.05's job name): a
# task's limit is the step's, at step_0/user.
for job in job_1 s9Z5M8QCVENS00; do
	S=$CG/v2-slurm/system.slice/vm_slurmstepd.scope/$job/step_0
	run_mc usage --cgroup "$S/user/task_0" --json
	expect_eq "$job task_0 limit_bytes" "$(printf '%s' "$OUT" | jq -r .limit_bytes)" 268435456
	expect_eq "$job task_0 limit_cgroup" "$(printf '%s' "$OUT" | jq -r .limit_cgroup)" "$S/user"
	# Its swap limit too: Slurm's memory.swap.max at step_0/user
	# (26841088, read from the fixture), none on task_0 itself.
	expect_eq "$job task_0 swap_limit_bytes" "$(printf '%s' "$OUT" | jq -r .swap_limit_bytes)" "$(cat "$S/user/memory.swap.max")"
	expect_eq "$job task_0 swap_limit_cgroup" "$(printf '%s' "$OUT" | jq -r .swap_limit_cgroup)" "$S/user"
	run_mc usage --cgroup "$S/user/task_0"
	expect_contains "$job text" "$OUT" "limit            256 MiB, set at $S/user"
	expect_contains "$job swap text" "$OUT" "swap limit       25.60 MiB, set at $S/user"
done
# v2 fixture: task_0's swap.max is "max", the step's 0 (no swap), the
# job's "max": the lowest on the path is the step's.
T=$CG/v2/job_7/step_0/user/task_0
expect_eq "v2 fixture task_0 swap.max" "$(cat "$T/memory.swap.max")" max
expect_eq "v2 fixture step swap.max" "$(cat "$CG/v2/job_7/step_0/memory.swap.max")" 0
run_mc usage --cgroup "$T" --json
expect_eq "v2 task_0 swap_limit_bytes" "$(printf '%s' "$OUT" | jq -r .swap_limit_bytes)" 0
expect_eq "v2 task_0 swap_limit_cgroup" "$(printf '%s' "$OUT" | jq -r .swap_limit_cgroup)" "$CG/v2/job_7/step_0"
# No swap limit anywhere on the path: null, no cgroup named.
run_mc usage --cgroup "$CG/v2/job_7" --json
expect_eq "v2 job swap_limit_bytes" "$(printf '%s' "$OUT" | jq -r .swap_limit_bytes)" null
expect_eq "v2 job swap_limit_cgroup" "$(printf '%s' "$OUT" | jq -r .swap_limit_cgroup)" null
# peak_bytes: null where the kernel keeps none (no memory.peak), a peak of
# 0 is 0 (a cgroup nothing ran in yet).
P=$TMP/peak
mkdir "$P"
cp -r "$CG/v2/job_7" "$P/"
rm "$P/job_7/step_0/memory.peak"
run_mc usage --cgroup "$P/job_7/step_0" --json
expect_eq "no memory.peak: rc" "$RC" 0
expect_eq "no memory.peak: peak_bytes" "$(printf '%s' "$OUT" | jq -r .peak_bytes)" null
run_mc usage --cgroup "$P/job_7/step_0"
case "$OUT" in *"peak  "*) fail "no memory.peak: a peak line in: $OUT" ;; esac
echo 0 > "$P/job_7/step_0/memory.peak"
run_mc usage --cgroup "$P/job_7/step_0" --json
expect_eq "memory.peak 0: peak_bytes" "$(printf '%s' "$OUT" | jq -r .peak_bytes)" 0

run_mc usage --cgroup "$CG/v1/slurm_n1/uid_0/job_7/step_0"
expect_eq "text rc" "$RC" 0
expect_contains "text" "$OUT" "non-reclaimable  2.80 GiB = anon 2.50 GiB + shmem 307.20 MiB"
expect_contains "text" "$OUT" "reclaimable      14 GiB of file pages"

run_mc usage
expect_eq "no target: rc" "$RC" 2
expect_contains "no target" "$ERR" "give one of --cgroup DIR or --pid PID"
run_mc usage --cgroup "$CG/v1" --pid 1
expect_eq "both: rc" "$RC" 2
run_mc usage --pid 12x
expect_eq "bad pid: rc" "$RC" 2
expect_contains "bad pid" "$ERR" "memcore: --pid=12x: not a process id"
run_mc usage --cgroup "$CG"
expect_eq "not a cgroup: rc" "$RC" 2
expect_contains "not a cgroup" "$ERR" "not a memory cgroup"
run_mc usage --cgroup
expect_eq "missing value: rc" "$RC" 2
run_mc usage --bogus
expect_eq "unknown option: rc" "$RC" 2
# --cgroup stays inside cgroupfs: a symlink to a directory elsewhere (a
# root-only one, or a copy of a cgroup) is refused, naming the symlink;
# the same directory named itself is read.
ln -s "$CG/v1/slurm_n1/uid_0/job_7/step_0" "$TMP/link"
run_mc usage --cgroup "$TMP/link" --json
expect_eq "symlink out of cgroupfs: rc" "$RC" 2
expect_contains "symlink out of cgroupfs" "$ERR" "memcore: --cgroup=$TMP/link: $TMP/link is a symlink to $(realpath "$CG/v1/slurm_n1/uid_0/job_7/step_0"), outside the cgroup filesystem: refused"
expect_eq "symlink out of cgroupfs: nothing on stdout" "$OUT" ""
mkdir -p "$TMP/up"
ln -s "$CG/v1/slurm_n1" "$TMP/up/n1"
run_mc usage --cgroup "$TMP/up/n1/uid_0/job_7/step_0"
expect_eq "symlink in a parent: rc" "$RC" 2
expect_contains "symlink in a parent" "$ERR" "$TMP/up/n1 is a symlink to"
run_mc usage --cgroup "$TMP/nonexistent"
expect_eq "missing dir: rc" "$RC" 2
expect_contains "missing dir" "$ERR" "--cgroup=$TMP/nonexistent: No such file or directory"
# A FIFO in place of a cgroup file (a copied tree): read as empty, never
# waited on; and the user's words escaped in the error, on one line.
mkdir -p "$TMP/fifo"
echo 1000 >"$TMP/fifo/memory.usage_in_bytes"
mkfifo "$TMP/fifo/memory.stat"
RC=0; ERR=$(timeout 20 "$MEMCORE" usage --cgroup "$TMP/fifo" 2>&1 >/dev/null) || RC=$?
expect_eq "memory.stat a FIFO: exit 2, not a hang (124)" "$RC" 2
expect_contains "memory.stat a FIFO" "$ERR" "$TMP/fifo/memory.stat: no 'total_rss' line"
run_mc usage --cgroup $'/nonexistent/\x1b[31mred\nmemcore: forged'
expect_eq "control bytes in --cgroup: rc" "$RC" 2
expect_eq "control bytes in --cgroup: escaped, one line" "$ERR" 'memcore: --cgroup=/nonexistent/\x1b[31mred\nmemcore: forged: No such file or directory'
# On the real cgroupfs (when this machine has a memory hierarchy), a path
# that resolves inside it is read, through a symlink too.
for m in /sys/fs/cgroup/memory /sys/fs/cgroup; do
	[ -e "$m/memory.stat" ] || [ -e "$m/cgroup.controllers" ] || continue
	ln -s "$m" "$TMP/cgfs"
	run_mc usage --cgroup "$TMP/cgfs" --json
	expect_eq "symlink into cgroupfs ($m): rc" "$RC" 0
	expect_eq "symlink into cgroupfs: the resolved cgroup" "$(printf '%s' "$OUT" | jq -r .cgroup)" "$(realpath "$m")"
	break
done
finish
