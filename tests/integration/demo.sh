#!/bin/bash
# make demo: a throwaway local Slurm (munge, slurmctld, slurmd from Debian)
# with memcore in its plugstack; one GPU job refused with its explanation,
# the same job with enough memory running. The node claims an AWS
# g4dn.metal (8 x T4, 48 cores, 377 GiB) through its real hwloc topology;
# its GPUs are fake device files, so the jobs run `true`-sized programs.
MC_NAME=demo
MC_TASK_PLUGIN=${MC_TASK_PLUGIN:-task/cgroup,task/affinity}
MC_CONSTRAIN_RAM=${MC_CONSTRAIN_RAM:-yes}
. "$(dirname "$0")/lib.sh"

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
show() { printf '$ %s\n' "$*"; "$@"; }

say "starting a local Slurm (logs in $MC_WORK/log)"
mc_cluster_start
CONF=$MC_CONF_DIR/memcore.conf
echo "TopologyFile=$MC_TOP/tests/data/aws-g4dn-metal-2xxeon8259cl-8xt4.xml" >"$CONF"
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
	--memcore=explain bash -c '
	echo "running: GPUs $CUDA_VISIBLE_DEVICES, MEMCORE_DATALOADER_WORKERS=${MEMCORE_DATALOADER_WORKERS:-unset}"
	grep Cpus_allowed_list /proc/self/status
	cg=$(awk -F: "\$2 == \"memory\" {print \$3}" /proc/self/cgroup)
	[ -n "$cg" ] && echo "memory cgroup $cg, limit $(( $(cat /sys/fs/cgroup/memory$cg/memory.limit_in_bytes) >> 30 )) GiB"'
echo "srun exit status: $?"

say "3. the same through sbatch: the refused job ends FAILED with the explanation"
jid=$(mc_sbatch -N1 -n1 --gpus=8 --mem=100G --wrap "echo never printed")
echo "job $jid: $(mc_wait_job "$jid")"
show cat "$(mc_job_out "$jid")"

say "slurmd's log: one line per decision"
grep "memcore: job" "$MC_LOG_DIR/slurmd.log" | sed 's/^.*memcore:/memcore:/'
say "done; stopping the local Slurm"
