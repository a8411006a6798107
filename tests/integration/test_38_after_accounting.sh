#!/bin/bash
# memcore report with Slurm accounting on: slurmdbd with MariaDB
# from Debian's packages, started and stopped by this test
# (lib_slurmdbd.sh). After the job has left slurmctld's memory
# (MinJobAge), memcore report still shows what each step used, read from
# slurmdbd's AdminComment, with Slurm's MaxRSS of the step beside
# memcore's non-reclaimable peak; sacct shows the same AdminComment; the
# job's user reads it, another user is refused.
. "$(dirname "$0")/lib_slurmdbd.sh"

MC_SOCKETS=1 MC_CORES_PER_SOCKET=2 MC_THREADS_PER_CORE=1
MC_REAL_MEMORY=20000 MC_GPUS=2
MC_MIN_JOB_AGE=2
MC_SLURM_CONF_LINES="JobAcctGatherFrequency=task=1"
PROGS=$MEMCORE_BUILD/progs
MEMCORE=$MEMCORE_BUILD/memcore
[ -x "$PROGS/mc_hold" ] || mc_die "$PROGS/mc_hold missing (make progs)"


mc_cluster_start
mc_small_policy
printf 'SampleInterval=500ms\n' >>"$MC_CONF_DIR/memcore.conf"

# A step that maps a 512 MiB file and holds 200 MiB, as user nobody.
d=/tmp/mc_test38_$$.bin
mc_at_exit "rm -f $d $d.ready"
out=/tmp/mc_test38_$$.out
mc_at_exit "rm -f $out"
job=$(runuser -u nobody -- sbatch --parsable --gpus=1 --mem=2G --chdir=/tmp -o "$out" \
	--wrap "srun -n1 --gpus=1 --mem=2G $PROGS/mc_hold 200 3 $d 512" </dev/null)
assert_eq COMPLETED "$(mc_wait_job "$job")" "a batch job of user nobody with a GPU step completes"
rm -f "$d" "$d.ready"

# Gone from slurmctld: it purges ended jobs MinJobAge (2 s) after their
# end, at its next purge pass (up to a minute).
end=$((SECONDS + 120))
while scontrol -o show job "$job" >/dev/null 2>&1 && [ $SECONDS -lt $end ]; do sleep 2; done
scontrol -o show job "$job" >/dev/null 2>&1
assert_ne 0 $? "job $job has left slurmctld's memory"
assert_contains "$(sacct -n -X -P -j "$job" -o AdminComment 2>&1)" "$job.0@mc-node1:" "sacct shows memcore's record in the job's AdminComment"

mc_run runuser -u nobody -- "$MEMCORE" report "$job"
mc_log "memcore report: $MC_OUT $MC_ERR"
assert_rc 0 "memcore report by the job's user, after the job left slurmctld"
assert_match "$MC_OUT" "memcore: job $job \(user nobody, COMPLETED\), from slurmdbd: 2 step-node summaries" "read from slurmdbd (the GPU step and the batch step)"
step=$(sed -n "/step $job\.0 on/,/Slurm MaxRSS/p" <<<"$MC_OUT")
nr=$(mc_mib "$step" "non-reclaimable")
mc_between "$nr" 195 300; assert_eq 0 $? "the peak non-reclaimable (${nr} MiB) is the 200 MiB held"
rss=$(grep -oE "Slurm MaxRSS [0-9.]+ (MiB|GiB)" <<<"$step" | awk '{ f = $4 == "GiB" ? 1024 : 1; printf "%d\n", $3 * f }')
# Independently: sacct's own MaxRSS of the step.
sacct_rss=$(sacct -n -P -j "$job.0" -o MaxRSS --noconvert 2>/dev/null | head -n1)
mc_log "sacct MaxRSS of $job.0: $sacct_rss; memcore report: ${rss} MiB"
assert_eq "$((sacct_rss / 1048576))" "$rss" "Slurm's MaxRSS beside it, as sacct has it ($sacct_rss bytes)"
[ -n "$rss" ] && [ "$rss" -ge 650 ]
assert_eq 0 $? "MaxRSS (${rss} MiB) counts the mapped file, memcore's peak (${nr} MiB) does not"
mc_run "$MEMCORE" report "$job" --json
assert_eq "$sacct_rss" "$(jq -r ".steps[] | select(.step == \"$job.0\") | .slurm_max_rss_bytes" <<<"$MC_OUT")" "--json: slurm_max_rss_bytes"
assert_eq "slurmdbd" "$(jq -r '.source' <<<"$MC_OUT")" "--json: the source"
# The step's timeline came through slurmdbd with its record: its points
# (3 s held at 500 ms), the largest at the record's peak (the series'
# values round up, by a 63rd of the step's largest at most).
st=$(jq -c ".steps[] | select(.step == \"$job.0\")" <<<"$MC_OUT")
n=$(jq '.timeline.points | length' <<<"$st")
peak=$(jq '.peak_nonreclaimable_bytes' <<<"$st")
smax=$(jq '[.timeline.points[].nonreclaimable_bytes, .timeline.points[].page_cache_bytes] | max' <<<"$st")
snr=$(jq '[.timeline.points[].nonreclaimable_bytes] | max' <<<"$st")
[ "$n" -ge 6 ] && [ "$snr" -ge "$peak" ] && [ "$snr" -le $((peak + smax / 63 + 1048576)) ]
assert_eq 0 $? "--json from slurmdbd: the timeline, $n points, largest non-reclaimable $snr against the peak $peak"
mc_run runuser -u nobody -- "$MEMCORE" report "$job" --plot
assert_match "$MC_OUT" "step $job\.0 on mc-node1: memory over [0-9.]+ s" "--plot from slurmdbd draws the step"
assert_match "$MC_OUT" "2 GiB \|=+" "... under its limit's row"
mc_run runuser -u daemon -- "$MEMCORE" report "$job"
assert_eq 1 "$MC_RC" "another user is refused"
assert_not_contains "$MC_OUT" "non-reclaimable" "... and shown nothing"
