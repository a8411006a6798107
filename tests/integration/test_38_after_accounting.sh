#!/bin/bash
# memcore report with Slurm accounting on: slurmdbd with MariaDB
# from Debian's packages, started and stopped by this test
# (lib_slurmdbd.sh). After the job has left slurmctld's memory
# (MinJobAge), memcore report still shows what each step used, read from
# slurmdbd's AdminComment, with Slurm's MaxRSS of the step beside
# memcore's non-reclaimable peak; sacct shows the same AdminComment; the
# job's user reads it, another user is refused. Several jobs (issue 38
# item 8): a line per job for several ids, an array and -u USER -S DATE
# from slurmdbd, each figure against one computed here from the jobs' own
# records and sacct, and the line per job name; a running job (item 7):
# its step read now on this node, against the step's cgroup files read
# here; a job whose step was refused: where the refusal is; the records
# kept through jobstats, which replaces the AdminComment (item 2).
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
# slurmd itself loads the plugin: the job epilog copies the records to
# slurmdbd's SystemComment (item 2).
mc_restart_slurmd

# A step that maps a 512 MiB file and holds 200 MiB, as user nobody.
d=/tmp/mc_test38_$$.bin
mc_at_exit "rm -f $d $d.ready"
out=/tmp/mc_test38_$$.out
mc_at_exit "rm -f $out"
job=$(runuser -u nobody -- sbatch --parsable --gpus=1 --mem=2G --chdir=/tmp -o "$out" \
	--wrap "srun -n1 --gpus=1 --mem=2G $PROGS/mc_hold 200 3 $d 512" </dev/null)
# Jobs for the list view, queued now so that they end while job $job
# leaves slurmctld: two runs of one name (150 and 300 MiB held), an
# array of two tasks, and one whose step is refused (4 cores on a 2-core
# node).
sub() { runuser -u nobody -- sbatch --parsable --chdir=/tmp -o /dev/null "$@" </dev/null; }
ja=$(sub --job-name=mctrain --gpus=1 --mem=1G --wrap "srun -n1 --gpus=1 --mem=1G $PROGS/mc_hold 150 2")
jb=$(sub --job-name=mctrain --gpus=1 --mem=1G --wrap "srun -n1 --gpus=1 --mem=1G $PROGS/mc_hold 300 2")
arr=$(sub --job-name=mcarr --array=1-2 --gpus=1 --mem=512M --wrap "srun -n1 --gpus=1 --mem=512M $PROGS/mc_hold 64 1")
jr=$(sub --job-name=mcrefused --gpus=1 --mem=512M --wrap "srun -n1 --gpus=1 --mem=512M --dataloader-workers=3 true")
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
# The axis is scaled to what the step used (the 2 GiB limit is far above
# its ~0.7 GiB with the mapped file): the limit is named over the chart.
assert_match "$MC_OUT" "\^ above the chart: asked 2 GiB \(--mem=2G\)" "... its limit named above the chart"
mc_run runuser -u daemon -- "$MEMCORE" report "$job"
assert_eq 1 "$MC_RC" "another user is refused"
assert_not_contains "$MC_OUT" "non-reclaimable" "... and shown nothing"

# --- several jobs (issue 38 item 8) -------------------------------------------
acct_state() { sacct -n -X -P -j "$1" -o State 2>/dev/null | head -n1; }
end=$((SECONDS + 120))
for j in "$ja" "$jb" "$jr" "${arr}_1" "${arr}_2"; do
	until case $(acct_state "$j") in COMPLETED|FAILED|CANCELLED*) true ;; *) false ;; esac; do
		[ $SECONDS -ge $end ] && break; sleep 1
	done
done
assert_eq "COMPLETED COMPLETED" "$(acct_state "$ja") $(acct_state "$jb")" "the two mctrain runs completed"
# Independently, from each job's own records (the one-job view) and sacct.
figures() { # JOB: "peak asked mem_eff cpu_eff next_mem_bytes next_option"
	"$MEMCORE" report "$1" --json | jq -r '[.steps[]] as $s |
		($s | map(.peak_nonreclaimable_bytes) | max) as $p | ($s | map(.asked_bytes) | max) as $a |
		($s | map(.cpu_usec) | add) as $c | ($s | map(.cores_allocated * .threads_per_core * .wall_usec) | add) as $w |
		($s | map(select(.next != null)) | max_by(.next.mem_bytes)) as $n |
		"\($p) \($a) \($p / $a) \($c / $w) \($n.next.mem_bytes) \($n.next.mem_option)"'
}
read -r pa aa ea ca na oa <<<"$(figures "$ja")"
read -r pb ab eb cb nb ob <<<"$(figures "$jb")"
mc_log "records: $ja peak $pa asked $aa eff $ea cpu $ca next $oa; $jb peak $pb asked $ab eff $eb cpu $cb next $ob"
mc_run runuser -u nobody -- "$MEMCORE" report "$ja" "$jb" --json
assert_rc 0 "memcore report $ja $jb by their user"
assert_eq 2 "$(jq '.jobs | length' <<<"$MC_OUT")" "two ids, two jobs"
close() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; exit !(d < 1e-9 && d > -1e-9) }'; }
for x in "$ja $pa $aa $ea $ca $na" "$jb $pb $ab $eb $cb $nb"; do
	read -r j p a e c n <<<"$x"
	o=$(jq -c ".jobs[] | select(.job_id == $j)" <<<"$MC_OUT")
	assert_eq "$p $a $n" "$(jq -r '"\(.peak_nonreclaimable_bytes) \(.asked_bytes) \(.next_mem_bytes)"' <<<"$o")" "job $j: peak, asked and next time's --mem as its records have them"
	close "$e" "$(jq -r .memory_efficiency <<<"$o")"; assert_eq 0 $? "job $j: memory efficiency = peak / asked ($e)"
	close "$c" "$(jq -r .cpu_efficiency <<<"$o")"; assert_eq 0 $? "job $j: CPU efficiency = CPU time / (CPUs x wall) ($c)"
	IFS='|' read -r s_start s_end <<<"$(sacct -n -X -P -j "$j" -o Start,End | head -n1)"
	assert_eq "$(date -d "$s_start" +%s) $(date -d "$s_end" +%s)" "$(jq -r '"\(.start_epoch) \(.end_epoch)"' <<<"$o")" "job $j: start and end as sacct has them ($s_start, $s_end)"
	assert_eq "$(date -u -d "$s_start" +%Y-%m-%dT%H:%M:%SZ)" "$(jq -r .start_time <<<"$o")" "job $j: start_time in ISO 8601 UTC"
done
# The documented keys (memcore(8) JSON OUTPUT, "memcore report --json
# (several jobs)"), no more, no fewer.
doc=$(awk '/^\.S[HS]/ { k = ($0 ~ /^\.SS memcore report .*several jobs/) } k && p && /^\.B [a-z_]+$/ { print $2 } { p = ($0 == ".TP") }' "$MC_TOP/docs/memcore.8" | sort)
got=$( (jq -r 'keys[]' <<<"$MC_OUT"; jq -r '.jobs[0] | keys[]' <<<"$MC_OUT"; jq -r '.names[0] | keys[]' <<<"$MC_OUT") | sort -u)
assert_eq "" "$(comm -3 <(printf '%s\n' "$doc") <(printf '%s\n' "$got"))" "report --json (several jobs): its keys are those memcore(8) lists"
# -u USER -S DATE, from slurmdbd (every job has left slurmctld by now or
# is read from slurmdbd alike), as text.
mc_run runuser -u nobody -- "$MEMCORE" report -u nobody -S "$(date +%Y-%m-%d)"
mc_log "report -u nobody: $MC_OUT $MC_ERR"
assert_rc 0 "report -u nobody -S today"
for j in "$job" "$ja" "$jb" "$jr" "${arr}_1" "${arr}_2"; do
	assert_match "$MC_OUT" "^$j +" "-u nobody: a line for job $j"
done
pct() { awk -v s="$1" 'BEGIN { printf "%.1f%%\n", s * 100 }'; }
line=$(grep -E "^$jb " <<<"$MC_OUT")
assert_eq "mctrain COMPLETED $(pct "$eb") $(pct "$cb") $ob" "$(awk '{ print $2, $3, $8, $9, $10 }' <<<"$line")" "-u: job $jb's name, state, efficiencies and --mem as computed here"
assert_match "$line" "^$jb +mctrain +COMPLETED +1 GiB " "-u: ... and its asked RAM (--mem=1G)"
big=$jb bigo=$ob; [ "$pa" -gt "$pb" ] && big=$ja
[ "$na" -gt "$nb" ] && bigo=$oa
nl=$(grep -E "^  mctrain: " <<<"$MC_OUT")
assert_match "$nl" "^  mctrain: 2 runs, largest peak non-reclaimable [0-9.]+ MiB \(job $big\); $bigo covers every run" "the job name's line: the largest peak and the --mem of the larger advice"
m=$(mc_mib "$nl" "(\(job)"); p=$(( (pa > pb ? pa : pb) / 1048576 ))
assert_eq "$p" "$m" "... its peak (${m} MiB) is the larger of the two runs' records"
assert_match "$(grep -E "^$jr " <<<"$MC_OUT")" "^$jr +mcrefused +FAILED " "the refused job: FAILED"
# An array: all its tasks, or those named.
mc_run runuser -u nobody -- "$MEMCORE" report "$arr"
assert_eq "${arr}_1 ${arr}_2" "$(grep -oE "^${arr}_[0-9]+" <<<"$MC_OUT" | sort | xargs)" "report ARRAY: a line per task"
mc_run runuser -u nobody -- "$MEMCORE" report "${arr}_[2]"
assert_eq "${arr}_2" "$(grep -oE "^${arr}_[0-9]+" <<<"$MC_OUT" | xargs)" "report ARRAY_[2]: that task"
mc_run runuser -u daemon -- "$MEMCORE" report "$ja" "$jb"
assert_eq 1 "$MC_RC" "another user's jobs: nothing shown"
assert_contains "$MC_ERR" "2 jobs left out: not yours" "... saying why"
# The refused job, in the one-job view: where its refusal is.
mc_run runuser -u nobody -- "$MEMCORE" report "$jr"
assert_contains "$MC_OUT" "slurmd's log on mc-node1, \"memcore: job $jr.S: refused: ...\"" "a refused job: the refusal's place named"
assert_match "$(cat "$MC_LOG_DIR/slurmd.log")" "memcore: job $jr\.0: refused: " "... where slurmd's log has it"

# --- a running job (issue 38 item 7) ------------------------------------------
lv=/tmp/mc_test38_live_$$.bin
mc_at_exit "rm -f $lv $lv.ready"
jl=$(sub --job-name=mclive --gpus=1 --mem=2G --wrap "srun -n1 --gpus=1 --mem=2G $PROGS/mc_hold 200 20 $lv 0")
mc_wait_until 60 test -e "$lv.ready"
mc_run runuser -u nobody -- "$MEMCORE" report "$jl"
mc_log "report of the running job: $MC_OUT $MC_ERR"
assert_rc 0 "a running job's report"
assert_not_contains "$MC_OUT" "kept nothing" "... never 'kept nothing'"
assert_match "$MC_OUT" "running: step $jl\.0 on mc-node1 \(this node\), now: non-reclaimable [0-9.]+ MiB, page cache [0-9.]+ (B|KiB|MiB), limit 2 GiB \(cgroup /" "its step, read now on this node, under its 2 GiB limit"
nr=$(mc_mib_after "$(grep "step $jl\.0 on" <<<"$MC_OUT")" "non-reclaimable")
mc_between "$nr" 195 300; assert_eq 0 $? "... non-reclaimable ${nr} MiB: the 200 MiB it holds"
mc_run runuser -u nobody -- "$MEMCORE" report "$jl" --json
st=$(jq -c ".running_steps[] | select(.step == \"$jl.0\")" <<<"$MC_OUT")
cg=$(jq -r .cgroup <<<"$st")
# Independently: the step's cgroup files, read here (anon + shmem: what no
# reclaim frees; the kernel's own memory of the cgroup comes on top).
if [ -e "$cg/memory.current" ]; then
	own=$(awk '$1 == "anon" || $1 == "shmem" { s += $2 } END { print s }' "$cg/memory.stat")
else
	own=$(awk '$1 == "total_rss" || $1 == "total_shmem" { s += $2 } END { print s }' "$cg/memory.stat")
fi
jnr=$(jq -r .nonreclaimable_bytes <<<"$st")
mc_log "running step: $st; anon+shmem in $cg: $own"
[ -n "$own" ] && [ "$jnr" -ge $((own - 16 * 1048576)) ] && [ "$jnr" -le $((own + 32 * 1048576)) ]
assert_eq 0 $? "--json: nonreclaimable_bytes $jnr against the cgroup's anon + shmem $own read here"
assert_eq "true 2147483648" "$(jq -r '"\(.this_node) \(.limit_bytes)"' <<<"$st")" "--json: this node, the 2 GiB limit"
assert_eq null "$(jq -r .refusal_note <<<"$MC_OUT")" "--json: no refusal note for a running job"
# -u asks slurmdbd, which learns of a job's start from slurmctld in its
# own time: wait until sacct shows the job running.
mc_wait_until 60 eval 'sacct -n -X -P -j "$jl" -o State 2>/dev/null | grep -q RUNNING'
mc_run runuser -u nobody -- "$MEMCORE" report -u nobody --json
assert_eq "RUNNING null" "$(jq -r ".jobs[] | select(.job_id == $jl) | \"\(.state) \(.end_epoch)\"" <<<"$MC_OUT")" "-u: the running job, without an end"
scancel "$jl"

# The job epilog's copy of the records in slurmdbd's SystemComment (issue
# 38 item 2), made by a process of its own in its own time: the same
# block as the AdminComment's.
ac=$(sacct -n -X -P -j "$job" -o AdminComment 2>&1)
mc_wait_until 60 eval 'sacct -n -X -P -j "$job" -o SystemComment 2>/dev/null | grep -q memcore1:'
sc=$(sacct -n -X -P -j "$job" -o SystemComment 2>&1)
assert_eq "memcore1:${ac#*memcore1:}" "$sc" "the job epilog copied memcore's records into slurmdbd's SystemComment"

# jobstats beside memcore: its slurmctld epilog sets the whole AdminComment
# in slurmdbd once the job has ended (Princeton's jobstats,
# slurm/slurmctldepilog.sh: the same sacctmgr command), and memcore's
# records go with it; the report reads them from their copy in
# SystemComment and says what replaced the AdminComment.
JS='JS1:H4sIAAAAAAAAA6tWKkktLlGyUlAqS8wpTtVRSi4tykvMTS0GAI2bS5sZAAAA'
mc_run sacctmgr -i update job where jobid="$job" set AdminComment="$JS"
assert_rc 0 "jobstats' epilog command sets job $job's AdminComment"
# (sacctmgr lowercases an unquoted value: jobstats' own command passes it
# so, and memcore reads the prefix either way.)
assert_eq "${JS,,}" "$(sacct -n -X -P -j "$job" -o AdminComment 2>&1 | tr 'A-Z' 'a-z')" "... to jobstats' summary alone (memcore's records gone from AdminComment)"
mc_run runuser -u nobody -- "$MEMCORE" report "$job"
mc_log "after jobstats: $MC_OUT $MC_ERR"
assert_match "$MC_OUT" "memcore: job $job \(user nobody, COMPLETED\), from slurmdbd: 2 step-node summaries" "the records survive jobstats: both step-node summaries"
assert_contains "$MC_OUT" "note: read from the records' copy in the job's SystemComment, left there by the job epilog: this job's AdminComment holds jobstats' summary (JS1:...)" "... read from the copy, saying jobstats replaced the AdminComment"
mc_run runuser -u nobody -- "$MEMCORE" report "$job" --json
assert_eq "SystemComment 2" "$(jq -r '"\(.records_field) \(.steps | length)"' <<<"$MC_OUT")" "--json: records_field, and the steps"
assert_eq "$peak" "$(jq -r ".steps[] | select(.step == \"$job.0\") | .peak_nonreclaimable_bytes" <<<"$MC_OUT")" "... the step's peak as the AdminComment had it"
assert_contains "$(jq -r .records_replaced <<<"$MC_OUT")" "jobstats' slurmctld epilog replaces the whole field" "--json: records_replaced"
mc_run runuser -u nobody -- "$MEMCORE" report -u nobody --json
assert_eq "$(jq -r ".steps[] | select(.step == \"$job.0\") | .peak_nonreclaimable_bytes" <<<"$(runuser -u nobody -- "$MEMCORE" report "$job" --json)")" \
	"$(jq -r ".jobs[] | select(.job_id == $job) | .peak_nonreclaimable_bytes" <<<"$MC_OUT")" "-u: the job's peak from the copy"
# Without the copy either: the report says what replaced the records, not
# that nothing was kept.
mc_run sacctmgr -i update job where jobid="$job" set SystemComment=
assert_rc 0 "an administrator empties the copy"
mc_run runuser -u nobody -- "$MEMCORE" report "$job"
assert_contains "$MC_OUT" "memcore's records are not there, nor their copy in SystemComment: this job's AdminComment holds jobstats' summary (JS1:...)" "no records, no copy: the report says jobstats replaced them"
assert_not_contains "$MC_OUT" "kept nothing" "... not that nothing was kept"
