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

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
show() { printf '$ %s\n' "$*"; "$@"; }

say "starting a local Slurm (logs in $MC_WORK/log)"
mc_cluster_start
CONF=$MC_CONF_DIR/memcore.conf
# Bind=none here: the claimed node's 96 CPUs are not this machine's 2.
printf '%s\n' "TopologyFile=$MC_TOP/tests/data/aws-g4dn-metal-2xxeon8259cl-8xt4.xml" \
	"Bind=none" >"$CONF"
mc_set_plugstack "required $MEMCORE_BUILD/memcore.so config=$CONF"
show cat "$MC_CONF_DIR/plugstack.conf"
show cat "$CONF"

say "the node, as memcore sees it"
show "$MEMCORE_BUILD/memcore" audit --config "$CONF"

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

say "3. the same through sbatch: the refused job ends FAILED with the explanation"
echo "$ sbatch -N1 -n1 --gpus=8 --dataloader-workers=2 --cpus-per-gpu=6 --mem=100G --wrap 'python train.py'"
jid=$(mc_sbatch -N1 -n1 --gpus=8 --dataloader-workers=2 --cpus-per-gpu=6 --mem=100G --wrap "echo never printed")
echo "job $jid: $(mc_wait_job "$jid")"
show cat "$(mc_job_out "$jid")"

say "slurmd's log: one line per decision"
grep "memcore: job" "$MC_LOG_DIR/slurmd.log" | sed 's/^.*memcore:/memcore:/'

say "part 2: a node shaped like this machine, bound and limited"
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
mc_set_plugstack "required $MEMCORE_BUILD/memcore.so config=$CONF"
show cat "$CONF"
show "$MEMCORE_BUILD/memcore" plan --config "$CONF" --topology "$MC_TOP/tests/data/local-2numa-2gpu.xml" --gpus 2 --dataloader-workers 0
show timeout 60 srun -n2 --gpus-per-task=1 --mem=1G --memcore=explain bash -c '
	sleep 0.$SLURM_LOCALID
	echo "task $SLURM_LOCALID: GPU $SLURM_STEP_GPUS, $(grep Cpus_allowed_list /proc/self/status | tr -s "\t" " ")"
	if [ "$SLURM_LOCALID" = 0 ]; then '"$MEMCORE_BUILD"'/memcore usage --pid $$; fi'
echo "srun exit status: $?"
say "done; stopping the local Slurm"
