#!/bin/bash
# make demo: a throwaway local Slurm (munge, slurmctld, slurmd from Debian)
# with memcore in its plugstack.
#  Part 1: the node claims an AWS g4dn.metal (8 x T4, 48 cores, 377 GiB)
#  through its real hwloc topology; an 8-GPU job short of RAM is refused
#  with its explanation, the same job with the memory memcore asks for runs.
#  Part 2: a node shaped like this machine (2 NUMA nodes of one core, one
#  GPU on each): a 2-task job that fits runs with each task bound to its
#  GPU's core and the step held to its --mem in its memory cgroup.
# The GPUs are fake device files, so the jobs run small shell programs.
MC_NAME=demo
MC_TASK_PLUGIN=${MC_TASK_PLUGIN:-task/cgroup,task/affinity}
MC_CONSTRAIN_CORES=${MC_CONSTRAIN_CORES:-yes}
MC_CONSTRAIN_RAM=${MC_CONSTRAIN_RAM:-yes}
. "$(dirname "$0")/lib.sh"

# Bold headings on a terminal only: no escape codes in a redirected log.
if [ -t 1 ]; then BOLD=$'\033[1m' PLAIN=$'\033[0m'; else BOLD= PLAIN=; fi
say() { printf '\n%s== %s%s\n' "$BOLD" "$*" "$PLAIN"; }
# A command as one would type it: arguments with spaces or quotes quoted.
shell_quote() {
	local a q out=
	for a in "$@"; do
		if [[ $a =~ ^[A-Za-z0-9_./=,:@%+-]+$ ]]; then
			out+=" $a"
		else
			q=${a//\'/\'\\\'\'}
			out+=" '$q'"
		fi
	done
	printf '%s' "${out# }"
}
show() { printf '$ %s\n' "$(shell_quote "$@")"; "$@"; }

# The cluster's work directory goes when it stops; its logs and job output
# are copied here first, so every path the demo names is still there after.
KEEP=$MC_TOP/tests/integration/.work/demo-logs
rm -rf "$KEEP"
# keep_logs PART: the cluster's configuration, logs and job output into
# $KEEP/PART
keep_logs() {
	mkdir -p "$KEEP/$1"
	cp -rT "$MC_CONF_DIR" "$KEEP/$1/etc" 2>/dev/null
	cp -rT "$MC_LOG_DIR" "$KEEP/$1/log" 2>/dev/null
	cp -rT "$MC_JOB_DIR" "$KEEP/$1/jobs" 2>/dev/null
}
say "starting a local Slurm (its logs are kept in $KEEP/part1/log)"
mc_cluster_start
CONF=$MC_CONF_DIR/memcore.conf
# Bind=none here: the claimed node's 96 CPUs are not this machine's 2.
printf '%s\n' "TopologyFile=$MC_TOP/tests/data/aws-g4dn-metal-2xxeon8259cl-8xt4.xml" \
	"Bind=none" >"$CONF"
# The node-facts cache in this cluster's SlurmdSpoolDir: memcore's default
# is the system's spool (/var/spool/slurmd or Debian's /var/lib/slurm/slurmd),
# not this throwaway slurmd's. slurmd writes it when it starts with memcore in
# its plugstack, so slurmd restarts; each step then reads it (no hwloc load).
PLUG="required $MEMCORE_BUILD/memcore.so config=$CONF cache=$MC_WORK/state/d/memcore-node-facts"
mc_set_plugstack "$PLUG"
mc_restart_slurmd || mc_die "slurmd did not come back with memcore"
keep_logs part1
show cat "$KEEP/part1/etc/plugstack.conf"
show cat "$KEEP/part1/etc/memcore.conf"

say "the node, as memcore sees it"
show "$MEMCORE_BUILD/memcore" audit --config "$KEEP/part1/etc/memcore.conf"

say "1. an 8-GPU training step with 2 DataLoader workers per GPU and --mem=100G"
show timeout 60 srun -N1 -n1 --gpus=8 --dataloader-workers=2 --cpus-per-gpu=6 --mem=100G \
	echo "this line is never printed"
echo "srun exit status: $?"
echo "node state: $(mc_node_state)"

say "2. the same step with the memory memcore asked for"
show timeout 60 srun -N1 -n1 --gpus=8 --dataloader-workers=2 --cpus-per-gpu=6 --mem=191G \
	--memcore=explain bash -c \
	'echo "running: GPUs $CUDA_VISIBLE_DEVICES, MEMCORE_DATALOADER_WORKERS=$MEMCORE_DATALOADER_WORKERS"'
echo "srun exit status: $?"
ram_kib=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)
cat <<EOF
(The "limit" at the end is the step's memory cgroup limit. It is not
191 GiB because Slurm's task/cgroup caps every limit at MaxRAMPercent
(default 100%) of the RAM the machine really has, $((ram_kib / 1024)) MiB here:
this node only claims a g4dn.metal's 377 GiB. On a real node the limit is
the step's --mem, and memcore checks that Slurm set it.)
EOF

say "3. the same through sbatch: the refused job ends FAILED with the explanation"
echo "$ sbatch -N1 -n1 --gpus=8 --dataloader-workers=2 --cpus-per-gpu=6 --mem=100G --wrap 'python train.py'"
jid=$(mc_sbatch -N1 -n1 --gpus=8 --dataloader-workers=2 --cpus-per-gpu=6 --mem=100G --wrap "echo never printed")
echo "job $jid: $(mc_wait_job "$jid")"
keep_logs part1
show cat "$KEEP/part1/jobs/$(basename "$(mc_job_out "$jid")")"

say "slurmd's log: memcore's start line (the node, its cache), one line per decision"
grep -E "memcore [0-9][^ ]* \(Slurm [^)]*\) on |memcore: job [0-9.a-z]+: (fits|refused|warned):" \
	"$MC_LOG_DIR/slurmd.log" | sed -E 's/^\[[^]]*\] (\[[^]]*\] )?//'
if grep -q "cannot protect slurmstepd from the OOM killer" "$MC_LOG_DIR/slurmd.log"; then
	grep -m1 "cannot protect slurmstepd from the OOM killer" "$MC_LOG_DIR/slurmd.log" |
		sed 's/^.*memcore:/memcore:/'
	cat <<EOF
(Expected on this machine: root here lacks CAP_SYS_RESOURCE (a container),
so slurmstepd's oom_score_adj cannot be lowered and the kernel's OOM killer
could pick slurmstepd instead of the step's task. On a compute node, where
slurmd runs as root with every capability, the line does not appear.)
EOF
fi

say "part 2: a node shaped like this machine, bound and limited"
keep_logs part1
mc_cluster_stop
MC_PLUGSTACK_LINES=""	# the new cluster starts without memcore, as part 1 did
MC_SOCKETS=1 MC_CORES_PER_SOCKET=2 MC_THREADS_PER_CORE=1 MC_GPUS=2 MC_REAL_MEMORY=20000
mc_cluster_start
# Its topology: 2 NUMA nodes (CPU 0, CPU 1), one 16 GiB GPU on each. The
# policy is sized for a 2-core machine: no DataLoader workers (one core per
# GPU process), no reserved cores, small per-task RAM.
printf '%s\n' "TopologyFile=$MC_TOP/tests/data/local-2numa-2gpu.xml" \
	"DataloaderWorkers=0" "RamPerWorker=256M" "RamPerTask=256M" \
	"HostRamPerGpuRam=0.01" "ReservedCores=0" >"$CONF"
mc_set_plugstack "$PLUG"
mc_restart_slurmd || mc_die "slurmd did not come back with memcore"
keep_logs part2
show cat "$KEEP/part2/etc/memcore.conf"
show "$MEMCORE_BUILD/memcore" plan --config "$KEEP/part2/etc/memcore.conf" --topology "$MC_TOP/tests/data/local-2numa-2gpu.xml" --gpus 2 --dataloader-workers 0
show timeout 60 srun -n2 --gpus-per-task=1 --mem=1G --memcore=explain bash -c '
	sleep 0.$SLURM_LOCALID
	echo "task $SLURM_LOCALID: GPU $SLURM_STEP_GPUS, $(grep Cpus_allowed_list /proc/self/status | tr -s "\t" " ")"
	if [ "$SLURM_LOCALID" = 0 ]; then '"$MEMCORE_BUILD"'/memcore usage --pid $$; fi'
echo "srun exit status: $?"
keep_logs part2
say "done; stopping the local Slurm and removing its work dir $MC_WORK (configuration, logs and job output kept in $KEEP)"
# What to try next: the same engine without Slurm, on a real server's
# layout (README "Where memcore check gets the node").
cat <<EOF

Next, without Slurm: would 8 GPUs with 4 DataLoader workers each and --mem=64G
fit an AWS g4dn.metal (8 x T4)? memcore check answers as the plugin would:
  $MEMCORE_BUILD/memcore check --topology $MC_TOP/tests/data/aws-g4dn-metal-2xxeon8259cl-8xt4.xml --gpus 8 --dataloader-workers 4 --mem 64G
More: memcore check --help, memcore plan --help, man docs/memcore.8
EOF
