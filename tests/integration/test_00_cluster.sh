#!/bin/bash
# Smoke test of the harness: a local Slurm 22.05 whose one node claims an AWS
# g4dn.metal (2 x 24 cores x 2 threads, 386000 MB, 8 fake GPUs) runs srun and
# sbatch jobs with GPUs, and the harness cleans up after itself.
# guest: trixie sid
# guest: why: the GPU variables Slurm sets (SLURM_GPUS_ON_NODE,
#   SLURM_STEP_GPUS, CUDA_VISIBLE_DEVICES), what it refuses itself, and the
#   harness's start and stop, on 24.11 and 26.05; bookworm's 22.05 is the
#   host's, and every bookworm test starts the harness on cgroup v2
. "$(dirname "$0")/lib.sh"

mc_cluster_start

# --- the node claims the big server, not this VM
assert_eq 96 "$(mc_node_field CPUTot)" "node claims 96 CPUs"
assert_eq 386000 "$(mc_node_field RealMemory)" "node claims 386000 MB"
assert_eq 2 "$(mc_node_field Sockets)" "node claims 2 sockets"
assert_eq 2 "$(mc_node_field ThreadsPerCore)" "node claims 2 threads per core"
assert_eq gpu:8 "$(mc_node_field Gres)" "node has 8 GPUs"
assert_node_idle "node IDLE after start"
assert_eq "$MC_WORK/etc/slurm.conf" "$SLURM_CONF" "SLURM_CONF points into the work dir"

# --- a bare step
mc_run srun -N1 -n1 true
assert_rc 0 "srun -N1 -n1 true"

# --- GPUs reach the step's environment
mc_run srun --gpus=2 env
assert_rc 0 "srun --gpus=2 env"
assert_contains "$MC_OUT" "SLURM_GPUS_ON_NODE=2" "--gpus=2: SLURM_GPUS_ON_NODE"
assert_contains "$MC_OUT" "CUDA_VISIBLE_DEVICES=0,1" "--gpus=2: CUDA_VISIBLE_DEVICES"
assert_contains "$MC_OUT" "SLURM_STEP_GPUS=0,1" "--gpus=2: SLURM_STEP_GPUS"

mc_run srun --gpus-per-node=3 env
assert_rc 0 "srun --gpus-per-node=3 env"
assert_contains "$MC_OUT" "SLURM_GPUS_ON_NODE=3" "--gpus-per-node=3: SLURM_GPUS_ON_NODE"

# --- the whole claimed node: 8 GPUs, 48 CPUs, memory far beyond this VM's
mc_run srun --mem=1G --gpus=8 -c 48 env
assert_rc 0 "srun --mem=1G --gpus=8 -c 48"
assert_contains "$MC_OUT" "SLURM_GPUS_ON_NODE=8" "8 GPUs on the node"
assert_contains "$MC_OUT" "CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7" "all 8 GPUs visible"
assert_contains "$MC_OUT" "SLURM_CPUS_ON_NODE=48" "48 CPUs allocated"
mc_run srun --mem=300G --gpus=8 -c 96 true
assert_rc 0 "srun --mem=300G --gpus=8 -c 96 (more than this VM has)"

# --- more than the node has is refused by Slurm itself
mc_run srun --gpus=9 true
assert_ne 0 "$MC_RC" "srun --gpus=9 refused"
assert_match "$MC_ERR" "not available|Requested node configuration" "--gpus=9: Slurm says why"

# --- a batch job
id=$(mc_sbatch --gpus=1 --wrap 'echo hello-from-batch; env | grep -E "^(SLURM_GPUS_ON_NODE|SLURM_JOB_GPUS|CUDA_VISIBLE_DEVICES)=" | sort')
assert_match "$id" '^[0-9]+$' "sbatch printed a job id"
assert_eq COMPLETED "$(mc_wait_job "$id")" "batch job $id COMPLETED"
assert_eq 0:0 "$(mc_job_field "$id" ExitCode)" "batch job exit code"
out=$(mc_job_out "$id")
assert_file "$out" "batch output file"
assert_file_contains "$out" "hello-from-batch"
assert_file_contains "$out" "SLURM_GPUS_ON_NODE=1"
assert_file_contains "$out" "SLURM_JOB_GPUS=0"

# --- a failing batch job ends FAILED, the node is not drained
id=$(mc_sbatch --wrap 'exit 3')
assert_eq FAILED "$(mc_wait_job "$id")" "batch job exiting 3 is FAILED"
assert_eq 3:0 "$(mc_job_field "$id" ExitCode)" "its exit code"

# --- the node is back to IDLE
mc_jobs_idle 30
mc_wait_node_state IDLE 30
assert_node_idle "node IDLE at the end"

# --- the harness stops everything it started, and can be called twice
mc_cluster_stop
mc_cluster_stop
assert_eq "" "$(mc_cluster_pids)" "no daemon or step of ours left after mc_cluster_stop"
assert_eq "" "$(ls -d /sys/fs/cgroup/*/slurm_"$MC_NODE_NAME"/uid_*/job_* 2>/dev/null)" "no job cgroups left"
