#!/bin/bash
# Defined fault behaviour on a real Slurm (memcore(8) FAULTS):
#  - a broken policy file or an unreadable topology: OnError=refuse (the
#    default) refuses every GPU step with the file, line and reason; OnError=
#    allow on the plugstack line runs them with one warning; CPU-only steps
#    always run; the node is never drained;
#  - no GPU memory in the topology and no GpuMemory=: the explanation says
#    the floor was not checked; GpuMemory= fills it in;
#  - memcore listed twice in plugstack.conf: one set of options, one verdict;
#  - a compute node whose plugstack.conf lacks memcore while the submitting
#    host has it: srun knows the options, the node ignores them, the step
#    runs unchecked.
. "$(dirname "$0")/lib.sh"

TOPO=$MC_TOP/tests/data/aws-g4dn-metal-2xxeon8259cl-8xt4.xml
mc_cluster_start
CONF=$MC_CONF_DIR/memcore.conf
SO=$MEMCORE_BUILD/memcore.so
PLUG="required $SO config=$CONF"
policy() { { echo "TopologyFile=$TOPO"; printf '%s\n' "$@"; } >"$CONF"; }
ONE=(-N1 -n1 --gpus=1 --mem=50G -c 6)
SHORT=(-N1 -n1 --gpus=8 --dataloader-workers=2 --cpus-per-gpu=6 --mem=100G)
FITS=(-N1 -n1 --gpus=8 --dataloader-workers=2 --cpus-per-gpu=6 --mem=200G)
# IDLE, not DRAIN: a refused step's job may still be COMPLETING for a
# moment after srun returns (assert_node_idle waits for Slurm to settle).
idle() { assert_node_idle "node IDLE: $1"; }
cpu_runs() {
	mc_run srun -N1 -n1 --mem=1G echo cpu-ran
	assert_rc 0 "CPU-only step runs: $1"
	assert_contains "$MC_OUT" cpu-ran "CPU-only step ran: $1"
	assert_not_contains "$MC_ERR" memcore "CPU-only step: nothing from memcore ($1)"
}

# --- a broken policy file, OnError=refuse (default) ------------------------
mc_set_plugstack "$PLUG"
policy "Mode=enforce" "Bogus=1"
mc_run srun "${ONE[@]}" echo gpu-ran
assert_rc 1 "broken memcore.conf: a GPU step is refused"
assert_contains "$MC_ERR" "$CONF:3: Bogus: unknown key" "names file, line and reason"
assert_contains "$MC_ERR" "OnError=refuse: GPU steps cannot start until the administrator fixes it" "says what happens"
assert_not_contains "$MC_OUT" gpu-ran "the refused step did not run"
idle "broken policy, refused srun"
jid=$(mc_sbatch "${ONE[@]}" --wrap "echo batch-ran")
assert_eq FAILED "$(mc_wait_job "$jid")" "broken memcore.conf: a GPU batch job FAILS"
assert_file_contains "$(mc_job_out "$jid")" "$CONF:3: Bogus: unknown key"
idle "broken policy, failed batch job"
cpu_runs "broken policy"
assert_file_contains "$MC_LOG_DIR/slurmd.log" "$CONF:3: Bogus: unknown key"
# OnError=allow inside the broken file does not count: nothing of a broken
# file is applied.
policy "OnError=allow" "RamPerWorker=4Q"
mc_run srun "${ONE[@]}" true
assert_rc 1 "OnError=allow in the broken file itself: still refused"
assert_contains "$MC_ERR" "RamPerWorker: unknown size suffix 'Q'" "names the bad key (not its value)"
# --- OnError=allow on the plugstack line: runs, one warning ----------------
mc_set_plugstack "$PLUG onerror=allow"
mc_run srun "${ONE[@]}" echo gpu-ran
assert_rc 0 "broken memcore.conf, OnError=allow: the GPU step runs"
assert_contains "$MC_OUT" gpu-ran "it ran"
assert_contains "$MC_ERR" "OnError=allow: the step runs unchecked" "with the warning"
assert_eq 1 "$(grep -c 'RamPerWorker: unknown size suffix' <<<"$MC_ERR")" "one warning, not one per hook"
cpu_runs "broken policy, OnError=allow"
idle "OnError=allow"

# --- an unreadable topology ------------------------------------------------
mc_set_plugstack "$PLUG"
{ echo "TopologyFile=$MC_WORK/none.xml"; } >"$CONF"
mc_run srun "${ONE[@]}" true
assert_rc 1 "missing topology: a GPU step is refused"
assert_contains "$MC_ERR" "topology $MC_WORK/none.xml: No such file or directory" "names the file and reason"
cpu_runs "missing topology"
head -c 5000 "$TOPO" >"$MC_WORK/trunc.xml"
{ echo "TopologyFile=$MC_WORK/trunc.xml"; } >"$CONF"
mc_run srun "${ONE[@]}" true
assert_rc 1 "truncated topology: refused"
assert_contains "$MC_ERR" "hwloc cannot load this XML" "says hwloc cannot load it"
mc_set_plugstack "$PLUG onerror=allow"
mc_run srun "${ONE[@]}" echo gpu-ran
assert_rc 0 "truncated topology, OnError=allow: runs"
assert_contains "$MC_ERR" "OnError=allow: the step runs unchecked" "with the warning"
cpu_runs "truncated topology"
idle "topology faults"

# --- no GPU memory in the topology, no GpuMemory= --------------------------
# The g4dn topology without its CUDA/OpenCL/NVML OS devices: the GPUs are
# there (PCI) but not their memory.
awk '/<object type="OSDev"/ { skip = 1 } !skip { print } skip && /<\/object>/ { skip = 0 }' \
	"$TOPO" >"$MC_WORK/nomem.xml"
mc_set_plugstack "$PLUG"
printf 'TopologyFile=%s\n' "$MC_WORK/nomem.xml" >"$CONF"
mc_run srun "${FITS[@]}" --memcore=explain echo gpu-ran
assert_contains "$MC_ERR" "GPU memory unknown: the RAM floor was not checked (an administrator sets GpuMemory= in memcore.conf)" \
	"no GPU memory: the explanation says it is missing"
printf 'TopologyFile=%s\nGpuMemory=16G\n' "$MC_WORK/nomem.xml" >"$CONF"
mc_run srun "${SHORT[@]}" true
assert_rc 1 "GpuMemory=16G: the floor is checked again"
assert_contains "$MC_ERR" "128 GiB GPU floor" "8 x 16 GiB floor"
idle "GPU memory"

# --- memcore listed twice --------------------------------------------------
policy
mc_set_plugstack "$PLUG
$PLUG"
mc_run srun --help
assert_eq 1 "$(grep -c -- '--dataloader-workers' <<<"$MC_OUT")" "listed twice: --dataloader-workers registered once"
mc_run srun "${SHORT[@]}" true
assert_rc 1 "listed twice: a short step is refused"
assert_eq 1 "$(grep -c 'needs more than it was given' <<<"$MC_ERR")" "listed twice: one verdict"
mc_run srun "${FITS[@]}" --dataloader-workers=2 echo gpu-ran
assert_rc 0 "listed twice: a fitting step runs (the option given once)"
dups=$(grep memcore <<<"$MC_ERR" | sort | uniq -d)
assert_eq "" "$dups" "listed twice: no memcore line printed twice"
mc_run srun "${FITS[@]}" --memcore=explain true
assert_eq 1 "$(grep -c 'fits' <<<"$MC_ERR")" "listed twice: --memcore=explain prints one plan"
cpu_runs "listed twice"
idle "listed twice"

# --- the compute node lacks memcore, the submitting host has it ------------
# srun reads the plugstack.conf of its own slurm.conf: a copy that lists
# memcore plays the login host; the node's (the cluster's) lists nothing.
mc_set_plugstack ""
sed "s|^PlugStackConfig=.*|PlugStackConfig=$MC_WORK/login-plugstack.conf|" "$SLURM_CONF" >"$MC_WORK/login-slurm.conf"
echo "$PLUG" >"$MC_WORK/login-plugstack.conf"
RC=0
ERR=$(SLURM_CONF=$MC_WORK/login-slurm.conf timeout 60 srun "${ONE[@]}" --dataloader-workers=abc true 2>&1) || RC=$?
assert_eq 255 "$RC" "memcore on the login host only: srun still refuses a bad value"
assert_contains "$ERR" "memcore: --dataloader-workers=abc" "named by srun"
RC=0
OUT=$(SLURM_CONF=$MC_WORK/login-slurm.conf timeout 60 srun "${SHORT[@]}" echo unchecked-ran 2>&1) || RC=$?
assert_eq 0 "$RC" "memcore on the login host only: a short step runs unchecked"
assert_contains "$OUT" unchecked-ran "the step ran"
assert_not_contains "$OUT" "needs more than" "no verdict from a node without memcore"
idle "node without memcore"
mc_set_plugstack "$PLUG"
assert_not_contains "$(scontrol show node)" DRAIN "the node was never drained"
