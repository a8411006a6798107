#!/bin/bash
# The job's own uses of host RAM on a real Slurm, on a node
# claiming an AWS g4dn.metal (8 x T4 of 14.76 GiB, 48 cores x 2 threads,
# 377 GiB) with 64 shards (8 per GPU):
#  - --deepspeed-config and --model-config (the real Llama-2-7B config.json):
#    refused with the ZeRO-3 offload term computed here from DeepSpeed's
#    estimator, then run with the --mem the refusal printed;
#  - a config file the job's user cannot read is refused with the file and
#    the reason, and a root-only file is never read by anyone (its atime,
#    set three days back, stays put: relatime would move it on any read);
#  - a --gres=shard:2 step sized by its share of the card (2/8), at launch
#    and by memcore check, and running;
#  - --dataset-in-memory: a dataset held in RAM, its size measured by srun,
#    refused with its line (a copy in the task and in each worker);
#  - 16 ranks on 2 GPUs: RamPerTask for each of the 16, one binding
#    message for the step.
# guest: trixie sid
# guest: why: the shard variable (SLURM_SHARDS_ON_NODE) and the ranks'
#   binding depend on the Slurm release; bookworm's 22.05 is the host's
. "$(dirname "$0")/lib.sh"

TOPO=$MC_TOP/tests/data/aws-g4dn-metal-2xxeon8259cl-8xt4.xml
MC_GRES_TYPES=gpu,shard
MC_GRES_EXTRA=,shard:64
MC_GRES_CONF_LINES="NodeName=$MC_NODE_NAME Name=gpu File=$MC_WORK/dev/gpu[0-7]
NodeName=$MC_NODE_NAME Name=shard Count=64 File=$MC_WORK/dev/gpu[0-7]"
mc_cluster_start
CONF=$MC_CONF_DIR/memcore.conf
policy() {
	{ echo "TopologyFile=$TOPO"; echo "ShardsPerGpu=8"; printf '%s\n' "$@"; } >"$CONF"
}
policy "Bind=none"
mc_set_plugstack "required $MEMCORE_BUILD/memcore.so config=$CONF"

# The job's files, where the user nobody can read them.
D=$(mktemp -d /tmp/mc-ram.XXXXXX)
chmod 0755 "$D"
mc_at_exit "rm -rf '$D'"
cp "$MC_TOP/tests/data/models/llama-2-7b-hf.config.json" "$D/config.json"
cat >"$D/ds_config.json" <<'JSON'
{
  "train_micro_batch_size_per_gpu": 4,
  "bf16": { "enabled": true },
  "zero_optimization": {
    "stage": 3,
    "offload_optimizer": { "device": "cpu", "pin_memory": true },
    "offload_param": { "device": "cpu", "pin_memory": true }
  }
}
JSON
chmod 0644 "$D"/*.json

# DeepSpeed's estimate_zero3_model_states_mem_needs, params and optimizer
# offloaded, zero_init (ZeroInit=yes): 18 x P / nodes x 1.5, per CPU.
P=6738415616
ZERO=$(awk -v p=$P 'BEGIN { printf "%.2f GiB", 18 * p * 1.5 / 2^30 }')
# 1 T4 floor + 2 workers x 4 GiB + 1 task x 1 GiB + ZeRO, and 1 rank x
# (2 workers + 1 + 2 OffloadCoresPerGpu) cores = 10 CPUs.
FLOOR=$(awk 'BEGIN { printf "%.2f", 15843721216 / 2^30 }')  # the T4's, as memcore reads it
NEED=$(awk -v p=$P -v f=15843721216 'BEGIN { printf "%.2f GiB", (f + 9 * 2^30 + 18 * p * 1.5) / 2^30 }')

# --- --deepspeed-config + --model-config: refused, then the printed fix ----
cd "$D"
mc_run srun -n1 --gpus=1 --cpus-per-gpu=10 --mem=40G --deepspeed-config=ds_config.json --model-config=config.json true
assert_ne 0 "$MC_RC" "a ZeRO-3 offload step sized from its files, short of RAM: refused"
assert_contains "$MC_ERR" "$ZERO ZeRO-3 offload" "the ZeRO term is DeepSpeed's estimate for P=$P: $ZERO"
assert_contains "$MC_ERR" "$NEED needed" "needed = floor + workers + task + ZeRO = $NEED"
assert_contains "$MC_ERR" "config.json (llama): 6.74B parameters" "the explanation says where P came from"
assert_contains "$MC_ERR" "5 needed = 1 rank x (2 workers + 1 + 2 for the CPU optimizer" "offloaded optimizer: cores for CPU Adam (5 cores = 10 CPUs)"
FIX=$(grep 'fix:' <<<"$MC_ERR" | grep -o -- '--mem=[0-9]*[MG]' | head -n1)
assert_eq "--mem=194G" "$FIX" "the refusal prints the fix --mem=194G (193.20 GiB rounded up)"
mc_run srun -n1 --gpus=1 --cpus-per-gpu=10 "$FIX" --deepspeed-config=ds_config.json --model-config=config.json echo fixed-ran
assert_rc 0 "the same step with $FIX runs"
assert_contains "$MC_OUT" "fixed-ran" "... and its program ran"
# Through sbatch: sbatch reads the files at submission; the batch step
# (slurmstepd, root) gets only their figures, from the job's environment.
jid=$(mc_sbatch -n1 --gpus=1 --cpus-per-gpu=10 --mem=40G --deepspeed-config="$D/ds_config.json" --model-config="$D/config.json" --wrap "echo batch-ran")
mc_wait_job "$jid" >/dev/null
assert_eq FAILED "$(mc_job_state "$jid")" "sbatch: the batch step sized from the files is refused"
assert_contains "$(cat "$(mc_job_out "$jid")")" "$NEED needed" "... with the same $NEED in its output file"
jid=$(mc_sbatch -n1 --gpus=1 --cpus-per-gpu=10 "$FIX" --deepspeed-config="$D/ds_config.json" --model-config="$D/config.json" --wrap "echo batch-ran")
mc_wait_job "$jid" >/dev/null
assert_eq COMPLETED "$(mc_job_state "$jid")" "sbatch: with $FIX the batch step runs"
assert_contains "$(cat "$(mc_job_out "$jid")")" "batch-ran" "... and its script ran"
# An explicit option overrides the file, and the explanation says so.
mc_run srun -n1 --gpus=1 --cpus-per-gpu=10 --mem=40G --zero-stage=2 --offload=optimizer --deepspeed-config=ds_config.json --model-config=config.json true
assert_contains "$MC_ERR" "--zero-stage=2 overrides ds_config.json's stage 3" "an option over a file value is said"
# The same figures at submission: memcore check reads the same files.
mc_run "$MEMCORE_BUILD/memcore" check --config "$CONF" --gpus 1 --cpus-per-gpu 10 --mem 40G --deepspeed-config ds_config.json --model-config config.json
assert_rc 1 "memcore check refuses it too"
assert_contains "$MC_OUT" "$NEED needed" "memcore check: the same $NEED"
# An unknown model_type names it.
printf '{"model_type": "bert", "hidden_size": 768}\n' >"$D/bert.json"
chmod 0644 "$D/bert.json"
mc_run srun -n1 --gpus=1 --mem=40G --model-config=bert.json true
assert_ne 0 "$MC_RC" "an unknown model_type is refused"
assert_contains "$MC_ERR" "bert.json: model_type \"bert\" is not one memcore counts" "... naming it"
# A bad key names the file, the key and what was expected.
printf '{"zero_optimization": {"stage": 7}}\n' >"$D/bad.json"
chmod 0644 "$D/bad.json"
mc_run srun -n1 --gpus=1 --mem=40G --deepspeed-config=bad.json true
assert_contains "$MC_ERR" "bad.json: zero_optimization.stage: expected 0, 1, 2, 3 or \"auto\"" "a bad ds_config value: file, key, expected"
assert_eq "" "$(squeue -h -t PENDING,RUNNING 2>/dev/null)" "nothing was queued by the refused submissions"

# --- files the job's user cannot read: refused, and never read -----------
cp "$D/ds_config.json" "$D/root-only.json"
chown root:root "$D/root-only.json"
chmod 0600 "$D/root-only.json"
touch -a -d '3 days ago' "$D/root-only.json"
AT0=$(stat -c %X "$D/root-only.json")
mc_run runuser -u nobody -- srun --chdir=/tmp -n1 --gpus=1 --cpus-per-gpu=10 --mem=300G --deepspeed-config="$D/root-only.json" echo must-not-run
assert_ne 0 "$MC_RC" "as nobody: a ds_config only root can read is refused"
assert_contains "$MC_ERR" "--deepspeed-config=$D/root-only.json: cannot open: Permission denied" "... naming the file and why"
assert_not_contains "$MC_OUT" "must-not-run" "... and nothing ran"
mc_run runuser -u nobody -- env MEMCORE_MODEL_CONFIG="$D/root-only.json" sbatch --chdir=/tmp -n1 --gpus=1 --mem=300G --wrap "echo must-not-run"
assert_ne 0 "$MC_RC" "as nobody: sbatch with MEMCORE_MODEL_CONFIG naming it is refused"
assert_contains "$MC_ERR" "MEMCORE_MODEL_CONFIG=$D/root-only.json: cannot open: Permission denied" "... named by the variable that set it, before anything is queued"
# The same user reads a file it may read: the figures reach its step.
mc_run runuser -u nobody -- srun --chdir=/tmp -n1 --gpus=1 --cpus-per-gpu=10 "$FIX" --deepspeed-config="$D/ds_config.json" --model-config="$D/config.json" echo nobody-ran
assert_rc 0 "as nobody: the readable files size the step, which runs"
assert_eq "$AT0" "$(stat -c %X "$D/root-only.json")" "the root-only file was never read (atime unchanged: not by srun, sbatch, slurmd nor slurmstepd)"
assert_eq "" "$(squeue -h -t PENDING,RUNNING 2>/dev/null)" "nothing queued"

# --- a --gres=shard:2 step: 2/8 of a T4 -----------------------------------
SHARE=$(awk 'BEGIN { printf "%.2f GiB", 15843721216 * 2 / 8 / 2^30 }')
SNEED=$(awk 'BEGIN { printf "%.2f GiB", (15843721216 * 2 / 8 + 5 * 2^30) / 2^30 }')
mc_run srun -n1 --gres=shard:2 -c4 --mem=9G --dataloader-workers=1 --memcore=explain bash -c 'echo shard-ran shards=$SLURM_SHARDS_ON_NODE'
assert_rc 0 "a shard:2 step with --mem=9G runs (a whole card would need 19.76 GiB)"
assert_contains "$MC_OUT" "shard-ran shards=2" "... Slurm gave it SLURM_SHARDS_ON_NODE=2"
assert_contains "$MC_ERR" "1 x $SHARE (this node)" "sized by its share: $SHARE"
assert_contains "$MC_ERR" "$SNEED needed" "needed = share + 1 worker x 4 GiB + 1 task = $SNEED"
assert_contains "$MC_ERR" "gres/shard (SLURM_SHARDS_ON_NODE): 2/8 of a 14.76 GiB GPU" "the explanation names the share"
mc_run srun -n1 --gres=shard:2 -c4 --mem=6G --dataloader-workers=1 true
assert_ne 0 "$MC_RC" "the same step with --mem=6G is refused"
assert_contains "$MC_ERR" "$SNEED needed" "... at the share's figure"
# 6 GiB holds the share + 1 task but not the worker's 4 GiB: the fix
# offers 0 workers beside more memory.
assert_contains "$MC_ERR" "--dataloader-workers=0 (fits the memory and cores given)" "the fix offers fewer workers that fit the memory given"
# At submission: memcore check --shards (and the cli_filter passes it).
mc_run "$MEMCORE_BUILD/memcore" check --config "$CONF" --shards 2 --cpus 4 --mem 9G --dataloader-workers 1
assert_rc 0 "memcore check --shards 2 --mem 9G fits"
assert_contains "$MC_OUT" "1 x $SHARE" "memcore check sizes the same share"

# --- at submission, through contrib/cli_filter.lua (sbatch --test-only) ---
# A client-side slurm.conf with CliFilterPlugins: the filter hands the
# job's options to memcore check, which reads the job's files as the user.
mc_submit_host "$CONF"
mc_run env SLURM_CONF="$MC_SUBMIT_CONF" sbatch --test-only -n1 --gres=shard:2 -c4 --mem=6G --dataloader-workers=1 --wrap true
assert_ne 0 "$MC_RC" "cli_filter: a shard:2 job with --mem=6G is refused at submission"
assert_contains "$MC_ERR" "$SNEED needed" "... sized by its share ($SNEED)"
assert_contains "$MC_ERR" "refused at submission" "... nothing queued"
mc_run env SLURM_CONF="$MC_SUBMIT_CONF" sbatch --test-only -n1 --gres=shard:2 -c4 --mem=9G --dataloader-workers=1 --wrap true
assert_rc 0 "cli_filter: the same job with --mem=9G passes"
mc_run env SLURM_CONF="$MC_SUBMIT_CONF" sbatch --test-only -n1 --gpus=1 --cpus-per-gpu=10 --mem=40G --deepspeed-config="$D/ds_config.json" --model-config="$D/config.json" --wrap true
assert_ne 0 "$MC_RC" "cli_filter: the job files' step short of RAM is refused at submission"
assert_contains "$MC_ERR" "$NEED needed" "... with the same $NEED"
mc_run env SLURM_CONF="$MC_SUBMIT_CONF" sbatch --test-only -n1 --gpus=1 --cpus-per-gpu=10 "$FIX" --deepspeed-config="$D/ds_config.json" --model-config="$D/config.json" --wrap true
assert_rc 0 "cli_filter: ... and passes with $FIX"
assert_eq "" "$(squeue -h -t PENDING,RUNNING 2>/dev/null)" "nothing queued by --test-only"

# --- --dataset-in-memory: a copy in the task and in each worker ----------
# Its size measured by srun as the user (a local path, walked because the
# option asks for it; 10 GiB sparse): 1 T4 floor + 2 workers x 4 GiB +
# 1 task + 1 task x 10 GiB x (2 workers + 1) > 40G, which fits without it.
mkdir -p "$D/ds"
truncate -s 10G "$D/ds/data-00000-of-00001.arrow"
DNEED=$(awk 'BEGIN { printf "%.2f GiB", (15843721216 + 9 * 2^30 + 30 * 2^30) / 2^30 }')
mc_run srun -n1 --gpus=1 --cpus-per-gpu=6 --mem=40G --dataset="$D/ds" --dataset-in-memory true
assert_ne 0 "$MC_RC" "--dataset-in-memory: a 10 GiB dataset in RAM with 2 workers, short of RAM: refused"
assert_contains "$MC_ERR" "dataset in RAM  1 task x 10 GiB x (2 workers + 1) = 30 GiB" "the line with its formula, the size measured by srun"
assert_contains "$MC_ERR" "$DNEED needed" "needed = floor + workers + task + the dataset's copies = $DNEED"
assert_contains "$MC_ERR" "map it (keep_in_memory=False)" "... and the fix"
assert_contains "$MC_ERR" "stage it first: memcore stage " "... with the staging command"

# --- 16 ranks on 2 GPUs: per process, one binding message -----------------
policy "Bind=numa"
# Hold GPUs 0-5 so that the step gets 6 and 7, on the g4dn's NUMA node 1,
# none of whose CPUs this VM's tasks have: each rank would be warned.
hold=$(mc_sbatch -n1 --gpus=6 --cpus-per-gpu=2 --mem=100G --dataloader-workers=0 --wrap "sleep 300")
for _ in $(seq 1 60); do [ "$(mc_job_state "$hold")" = RUNNING ] && break; sleep 1; done
assert_eq RUNNING "$(mc_job_state "$hold")" "the holder of GPUs 0-5 runs"
mc_run srun -n16 -c2 --gpus=2 --dataloader-workers=0 --mem=50G --memcore=explain bash -c 'echo rank=$SLURM_PROCID gpus=$SLURM_STEP_GPUS'
assert_rc 0 "16 ranks on 2 GPUs run"
assert_eq 16 "$(grep -c '^rank=' <<<"$MC_OUT")" "... all 16"
assert_contains "$MC_OUT" "gpus=6,7" "... on GPUs 6 and 7"
assert_contains "$MC_ERR" "16 tasks x 1 GiB" "RamPerTask counted for each of the 16 ranks"
assert_contains "$MC_ERR" "16 needed = 16 ranks x (0 workers + 1)" "the cores rule per rank"
n=$(grep -c 'ranks share\|memcore: GPU' <<<"$MC_ERR")
assert_eq 1 "$n" "one binding message for the step, not one per rank"
assert_contains "$MC_ERR" "16 ranks share 2 GPUs on this node" "... which says the ranks share the GPUs"
scancel "$hold"
mc_wait_job "$hold" >/dev/null

