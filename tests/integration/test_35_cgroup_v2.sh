#!/bin/bash
# guest: yes
# memcore on cgroup v2 as Slurm's cgroup/v2 lays it out: slurmstepd
# in <job>/step_S/slurm, the tasks in <job>/step_S/user/task_T (task_special
# without ConstrainRAMSpace), the step's limit at step_S/user. Needs a v2
# memory controller (the guests of tests/vm; this project's hosts have v1):
# exit 77 (skip) elsewhere. Two rounds on a real Slurm:
#  1. task/cgroup, ConstrainRAMSpace=yes AllowedRAMSpace=200 (Slurm sets
#     twice the allocation: memcore tightens it at step_S/user, not at
#     step_S), ConstrainSwapSpace=yes AllowedSwapSpace=10 (Slurm's
#     memory.swap.max is left as Slurm set it);
#  2. task/cgroup, ConstrainRAMSpace=no: memcore's own cgroup, made beside
#     the task's cgroup under step_S/user, holds the limit and is gone after.
# Each round: a misfit step refused (node IDLE), a fitting one bound to its
# GPU's NUMA CPU, slurmstepd's cgroup not under the step's limit, `memcore
# usage --pid` naming the limit and the cgroup that holds it, a 1 GiB file
# read twice through mmap under --mem=256M exits 0, 600 MB of anonymous
# memory OOM-killed with memcore's explanation, /dev/shm past the limit
# explained as shared memory with slurmstepd alive (srun returns, node IDLE).
. "$(dirname "$0")/lib.sh"

[ -r /sys/fs/cgroup/cgroup.controllers ] &&
	grep -qw memory /sys/fs/cgroup/cgroup.controllers &&
	! grep -q '^[0-9]*:memory:' /proc/self/cgroup || {
	echo "test_35: SKIP: no cgroup v2 memory controller here (a v1 host): run it in a guest (tests/vm)" >&2
	exit 77
}

MC_SOCKETS=1 MC_CORES_PER_SOCKET=2 MC_THREADS_PER_CORE=1
MC_REAL_MEMORY=1500 MC_GPUS=2
MC_TASK_PLUGIN=task/cgroup,task/affinity
PROGS=$MEMCORE_BUILD/progs
MEMCORE=$MEMCORE_BUILD/memcore
MIB=$((1 << 20))
CG=/sys/fs/cgroup
SHM=/dev/shm/mc_test35_$$
mc_at_exit 'rm -f "$SHM"'
for p in mc_mmap_reader mc_anon_toucher mc_shm_writer; do
	[ -x "$PROGS/$p" ] || mc_die "$PROGS/$p missing: make build/progs/$p (make integration builds them)"
done

policy() { mc_small_policy; }

json() { jq -r ".$2" "$1" 2>/dev/null; }
# srun returns as the last task ends; slurmstepd removes its cgroups then.
gone() { local i; for ((i = 0; i < 40; i++)); do [ -e "$1" ] || return 0; sleep 0.05; done; }
# Inside a step: the task's cgroup, slurmstepd's, and memory.max up the path.
PROBE='t=$(sed -n "s/^0:://p" /proc/self/cgroup); s=$(sed -n "s/^0:://p" /proc/$PPID/cgroup)
echo "task=$t"; echo "stepd=$s"; echo "stepd_comm=$(cat /proc/$PPID/comm)"
d=/sys/fs/cgroup$t; while [ "$d" != /sys/fs/cgroup ]; do echo "max $d $(cat $d/memory.max) $(cat $d/memory.swap.max 2>/dev/null)"; d=${d%/*}; done
d=/sys/fs/cgroup$s; while [ "$d" != /sys/fs/cgroup ]; do echo "smax $d $(cat $d/memory.max)"; d=${d%/*}; done
'

round() { # NAME
	local r=$1 j d task stepd step lim
	policy

	# --- a misfit is refused, the node stays IDLE --------------------------
	mc_run srun -n1 --gpus=1 --mem=256M --dataloader-workers=3 true
	assert_rc 1 "$r: a step needing 4 cores on a 2-core node is refused"
	assert_match "$MC_ERR" "memcore: step [0-9]+\.0 on .* cannot fit: it needs 4 cores, the node has 2" "$r: ... with memcore's explanation"
	assert_eq IDLE "$(mc_node_state)" "$r: node IDLE after the refusal"

	# --- a fitting step: bound, limited where it must be -------------------
	j=$MC_WORK/tmp/usage-$r.json
	mc_run srun -n1 --gpus=1 -c2 --mem=256M sh -c "$PROBE"'
echo "cpus=$(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)"
'"$MEMCORE usage --pid \$\$ --json > $j"
	assert_rc 0 "$r: a 1-GPU step with --mem=256M runs"
	assert_eq 0 "$(sed -n 's/^cpus=//p' <<<"$MC_OUT")" "$r: bound to GPU 0's NUMA CPU (0) out of the 2 allocated"
	task=$(sed -n 's/^task=//p' <<<"$MC_OUT")
	stepd=$(sed -n 's/^stepd=//p' <<<"$MC_OUT")
	mc_log "$r: task in $task, slurmstepd in $stepd"
	assert_eq slurmstepd "$(sed -n 's/^stepd_comm=//p' <<<"$MC_OUT")" "$r: the task's parent is slurmstepd"
	assert_match "$stepd" "/step_0/slurm$" "$r: slurmstepd in Slurm's <job>/step_0/slurm"
	step=${stepd%/slurm}
	if [ "$r" = slurm ]; then
		assert_match "$task" "^$step/user/task_0$" "$r: the task in <job>/step_0/user/task_0"
		lim=$CG$step/user
		assert_contains "$MC_OUT" "max $CG$step/user $((256 * MIB)) " \
			"$r: Slurm's 512 MiB (AllowedRAMSpace=200) tightened to 256 MiB at step_0/user"
		assert_contains "$MC_OUT" "max $CG$step max " "$r: step_0 (above slurmstepd) left unlimited"
		# Slurm set the swap limit (10 %) at the job and at step_0/user;
		# memcore leaves it.
		local js us
		js=$(awk -v d="$CG${step%/step_0}" '$1 == "max" && $2 == d { print $4 }' <<<"$MC_OUT")
		us=$(awk -v d="$CG$step/user" '$1 == "max" && $2 == d { print $4 }' <<<"$MC_OUT")
		assert_match "$us" '^[1-9][0-9]*$' "$r: step_0/user has Slurm's swap limit ($us), not memcore's 0"
		assert_eq "$js" "$us" "$r: ... the same as Slurm's at the job level"
	else
		assert_match "$task" "^$step/user/memcore_[0-9]+/memcore_[0-9]+_0$" "$r: the task in memcore's own cgroup (in its job's), beside task_special under step_0/user"
		lim=$CG$task
		assert_contains "$MC_OUT" "max $CG$task $((256 * MIB)) 0" "$r: memcore's cgroup holds 256 MiB, swap 0 (nobody limits swap)"
		assert_contains "$MC_OUT" "max $CG$step/user max " "$r: step_0/user left as Slurm made it (unlimited)"
		gone "$CG$task"
		assert_eq "" "$(ls -d "$CG$task" 2>/dev/null)" "$r: memcore's cgroup is gone after the step"
	fi
	# slurmstepd's path up to the root never holds the step's limit.
	assert_not_contains "$(grep "^smax" <<<"$MC_OUT")" "smax $lim " "$r: slurmstepd is not under the step's limit ($lim)"
	case $lim in "$CG$stepd"/*) _mc_fail "$r: the step's limit is below slurmstepd's cgroup";; esac
	assert_eq $((256 * MIB)) "$(json "$j" limit_bytes)" "$r: memcore usage --pid: the 256 MiB limit"
	assert_eq "$lim" "$(json "$j" limit_cgroup)" "$r: memcore usage --pid: ... held by $lim"

	# --- a 1 GiB memory-mapped file read twice under --mem=256M ------------
	d=$MC_WORK/tmp/data.bin
	mc_run srun -n1 --gpus=1 --mem=256M "$PROGS/mc_mmap_reader" "$d" 1024
	assert_rc 0 "$r: the mmap reader of 1 GiB exits 0 under --mem=256M"
	assert_contains "$MC_OUT" "read 1024 MiB twice" "$r: it read the file twice"
	assert_not_contains "$MC_ERR" "killed for memory" "$r: no OOM kill"
	rm -f "$d"

	# --- 600 MB of anonymous memory: OOM kill, explained from v2 figures ---
	mc_run srun -n1 --gpus=1 --mem=256M "$PROGS/mc_anon_toucher" 600
	assert_ne 0 "$MC_RC" "$r: the 600 MB anon toucher is OOM-killed"
	assert_match "$MC_ERR" "memcore: step [0-9]+\.0 was killed for memory \(1 OOM kill\): .* the limit of 256 MiB \(--mem=256M\)" \
		"$r: explained with memory.events' oom_kill and the limit"
	assert_match "$MC_ERR" "non-reclaimable  about [0-9.]+ MiB at the kill: anon (2[0-9][0-9]|25[0-6])(\.[0-9]+)? MiB" \
		"$r: ... and the anonymous memory (memory.peak less shmem)"
	assert_contains "$MC_ERR" "fix: ask for more with --mem (e.g. --mem=512M)" "$r: ... and what to change"
	assert_eq IDLE "$(mc_node_state)" "$r: node IDLE"

	# --- /dev/shm past the limit: shared memory, slurmstepd survives -------
	mc_run srun -n1 --gpus=1 --mem=256M "$PROGS/mc_shm_writer" "$SHM" 400
	assert_ne 0 "$MC_RC" "$r: 400 MiB into /dev/shm under --mem=256M is OOM-killed, and srun returns"
	assert_ne 124 "$MC_RC" "$r: ... not by the harness's timeout (slurmstepd alive)"
	assert_match "$MC_ERR" "fix: most of it was shared memory: delete what the job leaves in tmpfs \([^)]*/dev/shm" \
		"$r: explained as shared memory"
	rm -f "$SHM"
	mc_jobs_idle 30
	assert_eq IDLE "$(mc_node_state)" "$r: node IDLE after the /dev/shm step"
	assert_eq "" "$(find $CG -name 'memcore_*' 2>/dev/null)" "$r: no memcore cgroup left anywhere"
}

t0=$SECONDS
MC_CONSTRAIN_RAM=yes
MC_CGROUP_CONF_LINES="AllowedRAMSpace=200
ConstrainSwapSpace=yes
AllowedSwapSpace=10"
mc_cluster_start
round slurm
mc_cluster_stop

MC_CONSTRAIN_RAM=no
MC_CGROUP_CONF_LINES=
MC_PLUGSTACK_LINES=
mc_cluster_start
round own
mc_log "both rounds in $((SECONDS - t0))s"
