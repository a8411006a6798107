#!/bin/bash
# After the step on two nodes: a 2-node step whose tasks hold
# 100 MiB on mc-n1 and 200 MiB on mc-n2 gets one summary per node, each
# with its own node's peak, and `memcore report` shows both, kept by the
# two slurmstepds in the same AdminComment although they end together.
. "$(dirname "$0")/lib_multinode.sh"

T8=$MC_TOP/tests/data/aws-g4dn-metal-2xxeon8259cl-8xt4.xml
MC_MN_NODES="mc-n1:$T8 mc-n2:$T8"
PROGS=$MEMCORE_BUILD/progs
MEMCORE=$MEMCORE_BUILD/memcore
[ -x "$PROGS/mc_hold" ] || mc_die "$PROGS/mc_hold missing (make progs)"
# Bind=none: the nodes claim 96 CPUs on this VM's 2. A small rule so that
# --mem=1G fits one T4.
mc_mn_policy "Bind=none" "HostRamPerGpuRam=0.01" "RamPerWorker=0" \
	"RamPerTask=0" "DataloaderWorkers=0" "SampleInterval=500ms"
mc_cluster_start

# mib TEXT NODE: the peak non-reclaimable MiB of NODE's summary in TEXT.
mib() {
	sed -n "/on $2 used/,/next time/p" <<<"$1" | grep -oE "[0-9.]+ (KiB|MiB|GiB) non-reclaimable" | head -n1 |
		awk '{ f = $2 == "GiB" ? 1024 : $2 == "MiB" ? 1 : 1/1024; printf "%d\n", $1 * f }'
}

# In a batch job whose script ends right after its step: each node's
# record is in before srun learns that its tasks ended (memcore(8), AFTER
# THE STEP), so the job cannot end before the two are kept.
job=$(mc_sbatch -N2 --gpus-per-node=1 --mem=1G --wrap "srun -N2 -n2 --gpus-per-node=1 --mem=1G \
	--memcore=explain sh -c '$PROGS/mc_hold \$((100 + 100 * SLURM_NODEID)) 3'")
assert_eq COMPLETED "$(mc_wait_job "$job")" "a batch job with a 2-node step completes"
MC_ERR=$(cat "$(mc_job_out "$job")")
mc_log "output: $MC_ERR"
assert_match "$MC_ERR" "memcore: step $job\.0 on mc-n1 used" "a summary for mc-n1"
assert_match "$MC_ERR" "memcore: step $job\.0 on mc-n2 used" "a summary for mc-n2"
n1=$(mib "$MC_ERR" mc-n1) n2=$(mib "$MC_ERR" mc-n2)
mc_between "$n1" 95 160; assert_eq 0 $? "mc-n1's own peak (${n1} MiB: its task held 100 MiB)"
mc_between "$n2" 195 260; assert_eq 0 $? "mc-n2's own peak (${n2} MiB: its task held 200 MiB)"
mc_run "$MEMCORE" report "$job"
mc_log "report: $MC_OUT"
assert_rc 0 "memcore report of the 2-node job"
assert_contains "$MC_OUT" "3 step-node summaries" "both nodes of step $job.0 kept, though their slurmstepds ended together, and the batch step"
r1=$(mib "$(sed "/$job\.batch/,/Slurm MaxRSS/d" <<<"$MC_OUT")" mc-n1) r2=$(mib "$MC_OUT" mc-n2)
assert_eq "$n1" "$r1" "the report's mc-n1 peak is the one the step printed"
assert_eq "$n2" "$r2" "the report's mc-n2 peak is the one the step printed"
mc_run "$MEMCORE" report "$job" --json
assert_eq "mc-n1 mc-n2" "$(jq -r "[.steps[] | select(.step == \"$job.0\") | .node] | sort | join(\" \")" <<<"$MC_OUT")" "--json: one entry per node of step $job.0"
