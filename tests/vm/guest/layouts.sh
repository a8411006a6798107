#!/bin/bash
# tests/vm/guest/layouts.sh OUT.md - in a guest: record the cgroup v2 layout
# this Slurm makes (task/cgroup, ConstrainRAMSpace=yes, then =no with
# memcore), as a task and slurmstepd see it, into OUT.md (markdown). Facts
# for the unit fixtures; it asserts only that a step ran.
. "$(dirname "$0")/../../integration/lib.sh"
out=${1:?usage: layouts.sh OUT.md}
MC_SOCKETS=1 MC_CORES_PER_SOCKET=2 MC_THREADS_PER_CORE=1 MC_REAL_MEMORY=1500 MC_GPUS=2
MC_TASK_PLUGIN=task/cgroup,task/affinity

# dump: run a step that prints its own layout while it runs
dump() { # TITLE SRUN-ARGS...
	local title=$1; shift
	printf '\n### %s\n\n`srun %s`, cgroup.conf: `%s`\n\n```\n' "$title" "$*" \
		"$(grep -v '^$' "$MC_CONF_DIR/cgroup.conf" | tr '\n' ' ')"
	mc_run srun "$@" bash -c '
		echo "# task: cat /proc/self/cgroup"; cat /proc/self/cgroup
		echo "# the job id fields of scontrol -o show job $SLURM_JOB_ID"
		scontrol -o show job "$SLURM_JOB_ID" | tr " " "\n" | grep -iE "^(JobId|SLUID|ArrayJobId)=" | tr "\n" " "; echo
		s=$(pgrep -f "slurmstepd: \[$SLURM_JOB_ID.$SLURM_STEP_ID\]" | head -n1)
		echo "# slurmstepd [$SLURM_JOB_ID.$SLURM_STEP_ID] (pid $s): cat /proc/$s/cgroup"; cat /proc/$s/cgroup
		echo "# slurmd: cat /proc/$(pgrep -x slurmd | head -n1)/cgroup"; cat /proc/$(pgrep -x slurmd | head -n1)/cgroup
		echo "# the tree under /sys/fs/cgroup/system.slice (memory.max; cgroup.procs; cgroup.subtree_control)"
		cd /sys/fs/cgroup/system.slice
		find . -mindepth 1 -type d | sort | while read -r d; do
			printf "%s  max=%s procs=[%s] subtree=[%s]\n" "$d" \
				"$(cat $d/memory.max 2>/dev/null || echo -)" \
				"$(for p in $(cat $d/cgroup.procs); do tr -d "\n" < /proc/$p/comm 2>/dev/null && printf " "; done)" \
				"$(cat $d/cgroup.subtree_control)"
		done
		t=$(cut -d: -f3 /proc/self/cgroup)
		echo "# memory.max from the task up to the root"
		while [ -n "$t" ] && [ "$t" != / ]; do
			printf "%s  memory.max=%s memory.swap.max=%s\n" "$t" \
				"$(cat /sys/fs/cgroup$t/memory.max 2>/dev/null || echo -)" \
				"$(cat /sys/fs/cgroup$t/memory.swap.max 2>/dev/null || echo -)"
			t=${t%/*}
		done'
	printf '%s\n' "$MC_OUT"
	[ -n "$MC_ERR" ] && printf -- '-- stderr:\n%s\n' "$MC_ERR"
	printf '```\n'
	assert_rc 0 "layout: $title: the step ran"
}

{
	printf '## %s, Slurm %s, kernel %s\n' "$(. /etc/os-release; echo "$PRETTY_NAME")" \
		"$(dpkg-query -W -f '${Version}' slurmd)" "$(uname -r)"
	printf '\nroot cgroup.controllers: `%s`; /proc/1/cgroup: `%s`\n' \
		"$(cat /sys/fs/cgroup/cgroup.controllers)" "$(cat /proc/1/cgroup)"
} > "$out"


MC_CONSTRAIN_RAM=yes MC_CGROUP_CONF_LINES="ConstrainSwapSpace=yes
AllowedSwapSpace=10"
mc_cluster_start
dump "ConstrainRAMSpace=yes, without memcore" -n1 --gpus=1 --mem=256M >> "$out"
mc_small_policy
dump "ConstrainRAMSpace=yes, with memcore" -n1 --gpus=1 --mem=256M >> "$out"
mc_cluster_stop

MC_CONSTRAIN_RAM=no MC_CGROUP_CONF_LINES=
MC_PLUGSTACK_LINES=
mc_cluster_start
dump "ConstrainRAMSpace=no, without memcore" -n1 --gpus=1 --mem=256M >> "$out"
mc_small_policy
dump "ConstrainRAMSpace=no, with memcore (its own cgroup)" -n1 --gpus=1 --mem=256M >> "$out"
mc_cluster_stop

# The harness's default: no task/cgroup (task/none, proctrack/linuxproc)
MC_TASK_PLUGIN=task/none MC_PLUGSTACK_LINES=
mc_cluster_start
dump "TaskPlugin=task/none (proctrack/linuxproc), without memcore" -n1 --gpus=1 --mem=256M >> "$out"
mc_small_policy
dump "TaskPlugin=task/none, with memcore" -n1 --gpus=1 --mem=256M >> "$out"
printf '\nslurmd log, memcore lines:\n```\n%s\n```\n' "$(grep -h 'memcore' "$MC_LOG_DIR"/slurmd.log | grep -iv 'debug' | tail -n 8)" >> "$out"
