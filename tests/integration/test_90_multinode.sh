#!/bin/bash
# Multi-node GPU steps on a real multi-node Slurm: three slurmd
# nodes, each in its own network, UTS and mount namespaces
# (lib_multinode.sh): mc-n1 and mc-n2 claim an AWS g4dn.metal (8 x T4 of
# 14.76 GiB, 2 x 24 x 2), mc-n3 an IBM AC922 (4 x V100 of 15.75 GiB,
# 2 x 20 x 4), each memcore reading its own machine's topology.
#  - every node is judged by its own GPUs, memory, cores and facts;
#  - one node's refusal (a misfit, or its broken policy) fails the whole
#    step: srun exits non-zero, the explanation comes once per refusing
#    node with the node named, tasks already started on a fitting node are
#    ended, every node stays IDLE;
#  - --gpus=12 -N2 spread 8+4: the 8-GPU node refuses, the 4-GPU node's
#    "fits" is in its slurmd log;
#  - ZeRO-3 offload across 3 nodes uses N=3 from Slurm (srun and batch);
#  - a heterogeneous batch job: the GPU component is refused with its
#    numbers, the CPU-only component is untouched, the job FAILED.
. "$(dirname "$0")/lib_multinode.sh"

T8=$MC_TOP/tests/data/aws-g4dn-metal-2xxeon8259cl-8xt4.xml
T4=$MC_TOP/tests/data/ibm-ac922-lassen-2xpower9-4xv100.xml
MC_MN_NODES="mc-n1:$T8 mc-n2:$T8 mc-n3:$T4"
# Bind=none: the nodes claim 96 and 160 CPUs on this VM's 2 (test_20 binds).
mc_mn_policy "Bind=none"
mc_cluster_start
T_START=$SECONDS

# count TEXT NEEDLE: lines of TEXT containing NEEDLE.
count() { printf '%s\n' "$1" | grep -cF -- "$2"; }
slurmd_log() { cat "$MC_LOG_DIR/slurmd-$1.log"; }
all_idle() { mc_jobs_idle 30; mc_mn_all_idle 30; assert_eq 0 $? "every node IDLE $1: $(mc_mn_states)"; }

# --- the cluster itself: three nodes, own host names and addresses ---------
mc_run srun -N3 -n3 bash -c 'echo "$(hostname) $(cat /proc/sys/kernel/hostname)"'
assert_rc 0 "srun -N3 on the three namespaced nodes"
for n in mc-n1 mc-n2 mc-n3; do
	assert_contains "$MC_OUT" "$n $n" "$n runs tasks under its own host name"
done
assert_eq "10.213.77.13" "$(mc_node_field NodeAddr mc-n3)" "mc-n3 has its own address"
assert_contains "$(mc_mn_exec mc-n3 cat /etc/hosts)" "10.213.77.11 mc-n1" "mc-n3 sees its private /etc/hosts"
assert_contains "$(mc_mn_exec mc-n3 cat "$MC_MN_NODE_DIR/memcore.conf")" "$T4" "mc-n3's memcore.conf names its own topology"
assert_contains "$(slurmd_log mc-n3)" "4 GPUs" "mc-n3's slurmd read the 4-GPU topology"
assert_file "$MC_WORK/nodes/mc-n3/memcore-node-facts" "mc-n3's node-facts cache is its own"
assert_file "$MC_WORK/state/mc-n3" "mc-n3's spool dir is its own"

# --- 2 nodes x 8 GPUs: fits, then refused on both nodes ----------------------
# 8 T4 at w=2: 118.04 GiB floor + 64 GiB workers + 8 GiB tasks = 190.04 GiB;
# 4 T4: 59.04 + 32 + 4 = 95.04 GiB. --mem=100G fits 4 GPUs, not 8.
mc_run srun -N2 -w mc-n1,mc-n2 -n2 --gpus-per-node=8 --cpus-per-gpu=6 --mem=200G hostname
assert_rc 0 "2 nodes x 8 GPUs with --mem=200G run"
assert_contains "$MC_OUT" "mc-n1" "the step ran on mc-n1"
assert_contains "$MC_OUT" "mc-n2" "the step ran on mc-n2"
assert_not_contains "$MC_ERR" "memcore" "a fitting step prints nothing"
mc_run srun -N2 -w mc-n1,mc-n2 -n2 --gpus-per-node=4 --cpus-per-gpu=6 --mem=100G \
	bash -c 'echo "$(hostname) $(sed -n "s/^[0-9]*:memory://p" /proc/self/cgroup)"'
assert_rc 0 "2 nodes x 4 GPUs with --mem=100G run"
# No Slurm cgroup limits the step (task/none): memcore makes its own under
# slurmstepd's, which must be the node's own (mcmn_<node>), not shared.
for n in mc-n1 mc-n2; do
	assert_match "$MC_OUT" "^$n .*/mcmn_$n/memcore_[0-9]+/memcore_[0-9]+_0\$" "$n's tasks are in $n's own memcore cgroup"
done

# 16 tasks, one GPU each: one explanation per node, not per task.
mc_run srun -N2 -w mc-n1,mc-n2 -n16 --ntasks-per-node=8 --gpus-per-task=1 --cpus-per-gpu=6 --mem=100G sleep 60
assert_ne 0 "$MC_RC" "2 nodes x 8 GPUs with --mem=100G: srun exits non-zero"
for n in mc-n1 mc-n2; do
	assert_eq 1 "$(count "$MC_ERR" "on $n needs more than it was given")" \
		"the refusal is explained once for $n (16 tasks)"
done
assert_eq 2 "$(count "$MC_ERR" "190.04 GiB needed")" "both explanations carry the numbers"
assert_eq 2 "$(count "$MC_ERR" "short 90.04 GiB")" "both name the shortfall"
assert_contains "$MC_ERR" "is ended on all its 2 nodes" "the user is told the whole step ends"
all_idle "after a step refused on both nodes"

# --- --gpus=12 on 2 nodes, spread 8 + 4 --------------------------------------
# mc-n1 (8 T4) needs 190.04 GiB; mc-n3 (4 V100) needs 63 + 32 + 4 = 99 GiB.
t0=$SECONDS
mc_run srun -N2 -w mc-n1,mc-n3 --gpus=12 --cpus-per-gpu=12 --mem=110G \
	bash -c 'echo "started on $(hostname) with $SLURM_GPUS_ON_NODE GPUs"; sleep 60'
took=$((SECONDS - t0))
assert_ne 0 "$MC_RC" "--gpus=12 -N2: srun exits non-zero"
assert_contains "$MC_ERR" "on mc-n1 needs more than it was given" "mc-n1 (8 GPUs) refuses"
assert_contains "$MC_ERR" "8 x 14.76 GiB (this node)" "mc-n1 counts its own 8 GPUs"
assert_contains "$MC_ERR" "110 GiB allocated (--mem=110G)" "mc-n1 counts its own memory"
assert_contains "$MC_ERR" "short 80.04 GiB" "mc-n1 names its shortfall"
assert_not_contains "$MC_ERR" "on mc-n3 needs" "mc-n3 (4 GPUs) does not refuse"
assert_not_contains "$MC_OUT" "mc-n1 with" "no task started on the refusing node"
assert_match "$(slurmd_log mc-n3)" "memcore: job [0-9]+\.0: fits: gpus=4 workers=2 ram needed=99 GiB allocated=110 GiB .* nodes=2" \
	"mc-n3's slurmd log: its own verdict fits (4 GPUs, 99 GiB)"
assert_match "$(slurmd_log mc-n1)" "memcore: job [0-9]+\.0: refused: gpus=8 workers=2 ram needed=190.04 GiB allocated=110 GiB .* nodes=2" \
	"mc-n1's slurmd log: refused (8 GPUs, 190.04 GiB)"
[ "$took" -lt 40 ]; assert_eq 0 $? "the fitting node's task was ended, not left to run (${took}s < 40s of a 60s sleep)"
all_idle "after --gpus=12 -N2"

# The same as an ordinary user: the refusing node ends the step as the
# job's user (never as root), which may cancel its own step.
t0=$SECONDS
mc_run runuser -u nobody -- srun -N2 -w mc-n1,mc-n3 --gpus=12 --cpus-per-gpu=12 --mem=110G sleep 60
took=$((SECONDS - t0))
assert_ne 0 "$MC_RC" "as user nobody: srun exits non-zero"
assert_contains "$MC_ERR" "on mc-n1 needs more than it was given" "as user nobody: mc-n1 refuses"
[ "$took" -lt 40 ]; assert_eq 0 $? "as user nobody: mc-n3's task was ended too (${took}s < 40s of a 60s sleep)"
all_idle "after the refused step of user nobody"

# --- a node whose policy is broken (OnError=refuse) fails the whole step ----
cp "$MC_WORK/nodes/mc-n3/memcore.conf" "$MC_WORK/mc-n3.conf.good"
echo "NoSuchKey=1" >> "$MC_WORK/nodes/mc-n3/memcore.conf"
t0=$SECONDS
mc_run srun -N2 -w mc-n1,mc-n3 -n2 --gpus-per-node=4 --cpus-per-gpu=12 --mem=110G \
	bash -c 'echo "started on $(hostname)"; sleep 60'
took=$((SECONDS - t0))
cp "$MC_WORK/mc-n3.conf.good" "$MC_WORK/nodes/mc-n3/memcore.conf"
assert_ne 0 "$MC_RC" "a step with one misconfigured node: srun exits non-zero"
assert_match "$MC_ERR" "memcore: step [0-9]+\.0 on mc-n3: .*NoSuchKey.*OnError=refuse" "the node with the broken policy names itself"
assert_not_contains "$MC_ERR" "on mc-n1:" "mc-n1's policy is fine"
[ "$took" -lt 40 ]; assert_eq 0 $? "mc-n1's task was ended too (${took}s < 40s of a 60s sleep)"
all_idle "after a step refused by a misconfigured node"

# --- ZeRO-3 offload across 3 nodes: N from Slurm ----------------------------
# DeepSpeed's estimate_zero3_model_states_mem_needs with zero_init (memcore's
# ZeroInit default), params + optimizer offloaded, per node:
# 18 * P / N * 1.5 bytes; 2^30-byte units as DeepSpeed prints.
P=7000000000
z3() { awk -v p=$P -v n="$1" 'BEGIN { printf "%.2f GiB ZeRO-3 offload", 18 * p / n * 1.5 / 2^30 }'; }
Z3_N3=$(z3 3) Z3_N1=$(z3 1)
ZERO=(--model-params=7B --zero-stage=3 --offload=all)
mc_run srun -N3 -n3 --gpus-per-node=1 --cpus-per-gpu=20 --mem=100G "${ZERO[@]}" --memcore=explain true
assert_rc 0 "3-node ZeRO-3 offload step fits"
assert_eq 3 "$(count "$MC_ERR" "$Z3_N3")" "each of the 3 nodes counts DeepSpeed's 3-node figure ($Z3_N3)"
assert_not_contains "$MC_ERR" "$Z3_N1" "no node counts the 1-node figure ($Z3_N1)"
for n in mc-n1 mc-n2 mc-n3; do
	assert_contains "$MC_ERR" "on $n fits" "$n judged the step"
done
# The batch step runs on one node but launches the job's training: N is
# the job's node count there too.
jid=$(mc_sbatch -N3 --gpus-per-node=1 --cpus-per-gpu=12 --mem=100G "${ZERO[@]}" --memcore=explain --wrap 'echo batch-ran')
assert_eq COMPLETED "$(mc_wait_job "$jid")" "3-node ZeRO-3 batch job COMPLETED"
assert_file_contains "$(mc_job_out "$jid")" "$Z3_N3" "the batch step counts the job's 3 nodes ($Z3_N3)"
all_idle "after the ZeRO-3 steps"

# --- a heterogeneous batch job: CPU-only component + 8-GPU component --------
cat > "$MC_JOB_DIR/het.sh" <<'EOS'
#!/bin/bash
#SBATCH -N1 -n1 --mem=1G
#SBATCH hetjob
#SBATCH -N1 -n1 --gpus=8 --cpus-per-gpu=6 --mem=100G
echo "het-ran on $(hostname)"
srun --het-group=0 bash -c 'echo "cpu-step on $(hostname)"'
t0=$SECONDS
srun --het-group=0,1 bash -c 'sleep 60; echo "het-step ran on $(hostname)"'
echo "het-step rc=$? after $((SECONDS - t0))s"
srun --het-group=1 bash -c 'echo "gpu-step on $(hostname)"'
EOS
jid=$(mc_sbatch "$MC_JOB_DIR/het.sh")
assert_eq FAILED "$(mc_wait_job "$jid")" "heterogeneous job with a misfit GPU component ends FAILED"
gpu_node=$(mc_job_field $((jid + 1)) NodeList)
out=$(cat "$(mc_job_out "$jid")" 2>/dev/null)
assert_contains "$out" "het-ran" "the batch step (CPU-only component) ran"
assert_contains "$out" "cpu-step on" "the CPU-only component's step ran"
assert_not_contains "$out" "gpu-step on" "the GPU component's step did not run"
assert_contains "$out" "on $gpu_node needs more than it was given" "the GPU component is refused, its node ($gpu_node) named"
assert_contains "$out" "8 x 14.76 GiB (this node)" "with its GPUs"
assert_contains "$out" "100 GiB allocated (--mem=100G)" "with its memory"
assert_contains "$out" "short 90.04 GiB" "with its shortfall"
assert_eq 2 "$(count "$out" "on $gpu_node needs more than it was given")" \
	"one explanation per refused step (--het-group=0,1 and --het-group=1)"
# A step across both components: refused in the GPU one, ended in both.
assert_match "$out" "het-step rc=[1-9][0-9]* after ([0-9]|[1-3][0-9])s" \
	"the --het-group=0,1 step fails, its CPU-only part ended too (< 40s of a 60s sleep)"
assert_not_contains "$out" "het-step ran on" "no part of the refused heterogeneous step ran to its end"
assert_contains "$out" "is ended on all its nodes, in every component" "the user is told"
logs=$(cat "$MC_LOG_DIR"/slurmd-*.log)
assert_not_contains "$logs" "memcore: job $jid." "the CPU-only component has no memcore verdict"
assert_match "$logs" "memcore: job $((jid + 1))\.[0-9]+: refused: gpus=8" "the GPU component's verdict: refused"
all_idle "after the heterogeneous job"

mc_log "multi-node checks took $((SECONDS - T_START))s after a ${MC_START_SECONDS}s start"
