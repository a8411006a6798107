#!/bin/bash
# The step's memory on a real Slurm (cgroup v1, as on this machine), twice:
#  1. task/cgroup with ConstrainRAMSpace=yes (AllowedRAMSpace=200, so Slurm
#     sets twice the allocation and memcore must tighten it), and
#  2. task/cgroup with ConstrainRAMSpace=no, where nothing limits the step
#     and memcore makes its own cgroup (memcore_<job>_<step>).
# Each round: a --mem=256M step that writes a 512 MiB file (twice the
# limit) and reads it twice through mmap runs, and `memcore usage` shows
# the file pages as reclaimable;
# a step touching anonymous memory past --mem is OOM-killed with memcore's
# explanation (limit, anon); a step filling /dev/shm is counted as
# non-reclaimable and explained as shared memory, naming the tmpfs mounts
# that hold it (/dev/shm, and a tmpfs mounted for the test).
# guest: no: on cgroup v2 (the guests) test_35_cgroup_v2 makes each of
#   these checks in Slurm's cgroup/v2 layout; the v1 assertions here (where
#   the limit sits, memsw) have no v2 counterpart to run
. "$(dirname "$0")/lib.sh"

# A node like this VM: 2 cores, 2 fake GPUs (one per NUMA node in the
# topology), ~20 GB. The policy lets a 1-GPU step with --mem=256M fit.
MC_SOCKETS=1 MC_CORES_PER_SOCKET=2 MC_THREADS_PER_CORE=1
MC_REAL_MEMORY=20000 MC_GPUS=2
PROGS=$MEMCORE_BUILD/progs
MEMCORE=$MEMCORE_BUILD/memcore
MIB=$((1 << 20))
SHM=/dev/shm/mc_test30_$$
TMPFS=/tmp/mc_test30_tmpfs_$$
mkdir -p "$TMPFS"
mc_at_exit 'rm -f "$SHM" "$SHM".small; umount "$TMPFS" 2>/dev/null; rmdir "$TMPFS"'
for p in mc_mmap_reader mc_anon_toucher mc_shm_writer; do
	[ -x "$PROGS/$p" ] || mc_die "$PROGS/$p missing: make build/progs/$p (make integration builds them)"
done

policy() {
	mc_small_policy
	"$MEMCORE" check --config "$MC_CONF_DIR/memcore.conf" --gpus 1 --mem 256M --cores 1 >/dev/null \
		|| mc_die "the test policy must let a 1-GPU step with --mem=256M fit"
}

# CAP_SYS_RESOURCE (bit 24) in our effective set: needed to lower an
# oom_score_adj, as memcore does for slurmstepd.
_cap_sys_resource() {
	local c; c=$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status)
	(( (16#$c >> 24) & 1 ))
}

json() { jq -r ".$2" "$1" 2>/dev/null; }
CGV=$(mc_cgroup_version)

round() { # NAME: the checks, on a started cluster
	local r=$1 d j lim memsw cgpath
	policy

	# --- where the step's memory is held ---------------------------------
	mc_run srun -n1 --gpus=1 --mem=256M sh -c '
		p=$(sed -n "s/^[0-9]*:memory://p" /proc/self/cgroup)
		d=/sys/fs/cgroup/memory${p%/task_[0-9]*}
		echo "cg=$p"; echo "lim=$(cat $d/memory.limit_in_bytes)"
		echo "memsw=$(cat $d/memory.memsw.limit_in_bytes 2>/dev/null)"
		echo "adj=$(cat /proc/self/oom_score_adj) stepd_adj=$(cat /proc/$PPID/oom_score_adj)"'
	assert_rc 0 "$r: a 1-GPU step with --mem=256M runs"
	cgpath=$(sed -n 's/^cg=//p' <<<"$MC_OUT")
	lim=$(sed -n 's/^lim=//p' <<<"$MC_OUT")
	memsw=$(sed -n 's/^memsw=//p' <<<"$MC_OUT")
	if [ "$r" = slurm ]; then
		# slurmstepd is charged to step_S here: either it is protected
		# (-1000, needs CAP_SYS_RESOURCE) or every task raised its own
		# score so that the OOM killer picks a task first.
		if _cap_sys_resource; then
			assert_contains "$MC_OUT" "adj=0 stepd_adj=-1000" "$r: slurmstepd protected from the OOM killer"
		else
			assert_contains "$MC_OUT" "adj=1000 stepd_adj=0" "$r: no CAP_SYS_RESOURCE: the task raised its oom_score_adj to 1000 instead"
		fi
	fi
	# These read v1's memory hierarchy; cgroup v2 has its own checks.
	if [ "$CGV" != 1 ]; then
		mc_log "$r: cgroup v$CGV: the v1 checks of where the limit sits are left out"
	elif [ "$r" = slurm ]; then
		assert_match "$cgpath" "/job_[0-9]+/step_0/task_0$" "$r: the task is in Slurm's step cgroup"
		assert_eq $((256 * MIB)) "$lim" "$r: Slurm's 512 MiB (AllowedRAMSpace=200) tightened to the 256 MiB allocation"
	else
		assert_match "$cgpath" "/memcore_[0-9]+_0$" "$r: the task is in memcore's own cgroup"
		assert_eq $((256 * MIB)) "$lim" "$r: memcore's cgroup is limited to the allocation"
		assert_eq "" "$(ls -d /sys/fs/cgroup/memory"$cgpath" 2>/dev/null)" "$r: memcore's cgroup is removed at step end"
	fi
	# (this host's kernel accounts swap: memory.memsw.* exists, so an
	# empty value is a failure here, not a reason to skip the check)
	[ "$CGV" = 1 ] && assert_eq "$lim" "$memsw" "$r: swap off (memory+swap limit = memory limit)"

	# --- (a) a 512 MiB memory-mapped file read twice under --mem=256M -----
	d=$MC_WORK/tmp/data.bin j=$MC_WORK/tmp/usage-a.json
	mc_run srun -n1 --gpus=1 --mem=256M --memcore=explain \
		"$PROGS/mc_mmap_reader" "$d" 512 "$MEMCORE usage --pid \$PPID --json > $j"
	assert_rc 0 "$r: (a) the mmap reader exits 0"
	assert_contains "$MC_OUT" "read 512 MiB twice" "$r: (a) it read the file twice"
	assert_not_contains "$MC_ERR" "killed for memory" "$r: (a) no OOM kill"
	assert_eq 0 "$(json "$j" oom_kills)" "$r: (a) memcore usage: no OOM kill"
	assert_eq $((256 * MIB)) "$(json "$j" limit_bytes)" "$r: (a) memcore usage: the 256 MiB limit"
	assert_match "$(json "$j" non_reclaimable_bytes)" '^[0-9]+$' "$r: (a) non_reclaimable_bytes is a number"
	[ "$(json "$j" non_reclaimable_bytes)" -lt $((256 * MIB)) ] 2>/dev/null
	assert_eq 0 $? "$r: (a) non-reclaimable $(json "$j" non_reclaimable_bytes) < 256 MiB"
	[ "$(json "$j" file_bytes)" -gt $((64 * MIB)) ] 2>/dev/null
	assert_eq 0 $? "$r: (a) the mapped file's pages ($(json "$j" file_bytes) bytes) are counted as reclaimable"
	assert_match "$MC_ERR" "memcore: step [0-9]+\.0 memory at its end: .* non-reclaimable \(anon .*, shmem .*\) of .* in use, .* reclaimable file pages; peak .*, limit 256 MiB" \
		"$r: (a) --memcore=explain: one line at step end"
	rm -f "$d"

	# --- (b) anonymous memory past --mem: OOM kill, explained once -------
	mc_run srun -n2 --gpus=1 --mem=256M "$PROGS/mc_anon_toucher" 512
	assert_ne 0 "$MC_RC" "$r: (b) the anon toucher is OOM-killed"
	assert_not_contains "$MC_OUT" "touched 512 MiB" "$r: (b) it did not finish"
	assert_match "$MC_ERR" "memcore: step [0-9]+\.0 was killed for memory \([0-9]+ OOM kills?\): .* the limit of 256 MiB \(--mem=256M\)" \
		"$r: (b) the explanation names the limit"
	assert_match "$MC_ERR" "non-reclaimable  about [0-9.]+ MiB at the kill: anon (2[0-9][0-9]|25[0-6])(\.[0-9]+)? MiB" \
		"$r: (b) ... and the anonymous memory"
	assert_contains "$MC_ERR" "not counted" "$r: (b) ... and the file pages that did not count"
	assert_contains "$MC_ERR" "fix: ask for more with --mem (e.g. --mem=384M), or use less: fewer DataLoader workers" "$r: (b) ... and what to change"
	# One figure for one kill: the summary's next time, where it is
	# printed, says the same, and no other figure is given.
	if grep -q "  next time    " <<<"$MC_ERR"; then
		assert_match "$MC_ERR" "next time    --mem=384M" "$r: (b) ... the summary's next time is that figure"
	fi
	assert_not_contains "$MC_ERR" "--mem=512M" "$r: (b) ... and no other"
	assert_eq 1 "$(grep -c 'was killed for memory' <<<"$MC_ERR")" "$r: (b) explained once per step, not per task"

	# --- (c) /dev/shm: non-reclaimable, and an OOM explained as shmem -----
	j=$MC_WORK/tmp/usage-c.json
	mc_run srun -n1 --gpus=1 --mem=256M sh -c \
		"$PROGS/mc_shm_writer $SHM.small 128 && $MEMCORE usage --pid \$\$ --json > $j; rm -f $SHM.small"
	assert_rc 0 "$r: (c) 128 MiB in /dev/shm under --mem=256M runs"
	[ "$(json "$j" shmem_bytes)" -ge $((128 * MIB)) ] 2>/dev/null
	assert_eq 0 $? "$r: (c) memcore usage: shmem $(json "$j" shmem_bytes) >= 128 MiB"
	[ "$(json "$j" non_reclaimable_bytes)" -ge $((128 * MIB)) ] 2>/dev/null
	assert_eq 0 $? "$r: (c) memcore usage: /dev/shm counts as non-reclaimable ($(json "$j" non_reclaimable_bytes))"
	[ "$(json "$j" file_bytes)" -lt $((64 * MIB)) ] 2>/dev/null
	assert_eq 0 $? "$r: (c) memcore usage: /dev/shm is not reclaimable file pages ($(json "$j" file_bytes))"
	# Past the limit in Slurm's cgroup, slurmstepd (charged to the step on
	# v1) must not be the OOM victim: memcore gives it back the -1000 that
	# Slurm 22.05 drops before forking (CAP_SYS_RESOURCE), or, where it
	# cannot (this VM's sandbox), each task raises its own oom_score_adj.
	mc_run srun -n1 --gpus=1 --mem=256M "$PROGS/mc_shm_writer" "$SHM" 512
	assert_ne 0 "$MC_RC" "$r: (c) writing 512 MiB into /dev/shm under --mem=256M is OOM-killed"
	assert_match "$MC_ERR" "was killed for memory .* the limit of 256 MiB" "$r: (c) explained"
	assert_match "$MC_ERR" "shmem (2[0-9][0-9]|25[0-6])(\.[0-9]+)? MiB \(files in tmpfs: [^;]*/dev/shm [0-9.]+ MiB[^;]*; pinned buffers\)" \
		"$r: (c) ... with the shared memory figure and where it is"
	assert_match "$MC_ERR" "fix: most of it was shared memory: delete what the job leaves in tmpfs \([^)]*/dev/shm" \
		"$r: (c) ... and the /dev/shm fix"
	assert_ne 124 "$MC_RC" "$r: (c) srun returned by itself (slurmstepd alive), not by the harness's timeout"
	rm -f "$SHM"

	# --- (d) a tmpfs other than /dev/shm (a site's tmpfs /tmp) -----------
	mount -t tmpfs -o mode=1777,size=1g mc_test30 "$TMPFS"
	mc_run srun -n1 --gpus=1 --mem=256M "$PROGS/mc_shm_writer" "$TMPFS/fill" 512
	assert_ne 0 "$MC_RC" "$r: (d) writing 512 MiB into a tmpfs under --mem=256M is OOM-killed"
	assert_match "$MC_ERR" "files in tmpfs: [^;]*$TMPFS [0-9.]+ MiB" \
		"$r: (d) the explanation names the tmpfs the step filled"
	assert_contains "$MC_ERR" "delete what the job leaves in tmpfs ($TMPFS " \
		"$r: (d) ... first, in the fix"
	umount "$TMPFS"
	mc_jobs_idle 30
	assert_node_idle "$r: node IDLE"
	assert_eq "" "$(squeue -h -o %i)" "$r: (c) no job left running"
}

t0=$SECONDS
MC_TASK_PLUGIN=task/cgroup,task/affinity MC_CONSTRAIN_RAM=yes
MC_CGROUP_CONF_LINES="AllowedRAMSpace=200"
mc_cluster_start
round slurm
mc_cluster_stop

# A fresh work dir: memcore.conf comes back with policy(), after the start
# (slurmd refuses to start with a plugstack line whose config is missing).
MC_TASK_PLUGIN=task/cgroup,task/affinity MC_CONSTRAIN_RAM=no MC_CGROUP_CONF_LINES=
MC_PLUGSTACK_LINES=
mc_cluster_start
round own
mc_log "both rounds in $((SECONDS - t0))s"
