#!/bin/bash
# Step records under load: 48 GPU steps of one batch job of user nobody end
# together on one node, and the batch script ends right after them. Every
# step's summary (and the batch step's: 49) is in `memcore report`, either
# as its own entry or counted in the aggregate that stands for the entries
# the record's size bound (MC_JOBREC_MAX) pushed out; the aggregate's
# largest peak (and its step) and OOM kills are those of the steps it
# counts, as each slurmstepd logged them; and no slurmstepd logged a
# record it could not keep. 48:
# enough 190-byte records to pass the 8 KiB bound.
. "$(dirname "$0")/lib.sh"

MEMCORE=$MEMCORE_BUILD/memcore
N=48
PROGS=$MEMCORE_BUILD/progs
[ -x "$PROGS/mc_hold" ] || mc_die "$PROGS/mc_hold missing (make progs)"
mc_cluster_start
mc_small_policy
# Sampled often enough to see each step's 1 s hold.
printf 'SampleInterval=200ms\n' >>"$MC_CONF_DIR/memcore.conf"

# The job's files, where nobody can write them and root can read them.
d=/tmp/mc_test41_$$
mkdir -p "$d" && chown nobody "$d"
mc_at_exit "rm -rf $d"
# Each step holds 1 MiB more than the step before it (peaks that differ,
# for the aggregate's; 1.2 GiB in all, inside the job's 2G: no OOM kill
# expected, but the aggregate's count is checked against the steps' own),
# says it runs, and waits for the go; the script starts all of them, lets
# them go at once when all run, and ends as soon as they have ended.
cat >"$d/job.sh" <<EOF
#!/bin/sh
for i in \$(seq $N); do
	srun --overlap -n1 --gpus=1 --mem=256M sh -c '$PROGS/mc_hold \$((SLURM_STEP_ID + 2)) 600 >/dev/null & h=\$!
		touch $d/ready.\$SLURM_STEP_ID
		while [ ! -e $d/go ]; do sleep 0.05; done
		kill \$h; wait \$h 2>/dev/null; exit 0' &
done
t=0
while [ \$(ls $d | grep -c '^ready\.') -lt $N ] && [ \$t -lt 600 ]; do sleep 0.1; t=\$((t + 1)); done
touch $d/go
wait
EOF
chmod 755 "$d/job.sh"
job=$(runuser -u nobody -- sbatch --parsable -n1 --gpus=1 --mem=2G --chdir="$d" -o "$d/out" "$d/job.sh" </dev/null)
assert_match "$job" "^[0-9]+$" "a batch job of user nobody is submitted"
assert_eq COMPLETED "$(mc_wait_job "$job")" "the job with $N steps completes"
assert_eq "$N" "$(ls "$d" | grep -c '^ready\.')" "all $N steps ran at once"
mc_log "job output: $(cat "$d/out")"

mc_run runuser -u nobody -- "$MEMCORE" report "$job" --json
assert_rc 0 "memcore report --json by the job's user"
rep=$MC_OUT
shown=$(jq -r '.steps[].step' <<<"$rep" | sort)
mc_log "shown: $(tr '\n' ' ' <<<"$shown")"
agg=$(jq -r '.dropped' <<<"$rep")
want=$( (seq 0 $((N - 1)) | sed "s/^/$job./"; echo "$job.batch") | sort)
assert_eq "" "$(comm -13 <(echo "$want") <(echo "$shown"))" "no entry for a step the job did not have"
assert_eq "" "$(sort <<<"$shown" | uniq -d)" "no step shown twice"
assert_eq $((N + 1)) $(($(grep -c . <<<"$shown") + agg)) "all $((N + 1)) summaries are in the report: $(grep -c . <<<"$shown") shown, $agg in the aggregate"

# Each step's peak as its slurmstepd logged it, in KiB; the aggregate's is
# the largest of those not shown.
declare -A logged ooms
while read -r step kills; do ooms[$step]=$kills; done < <(grep -oE "memcore: job $job\.[0-9a-z]+: after the step: .* oom_kills=[0-9]+" "$MC_LOG_DIR/slurmd.log" |
	sed -E 's/memcore: job ([^:]+): .*oom_kills=([0-9]+)/\1 \2/')
while read -r step peak unit; do
	logged[$step]=$(awk -v v="$peak" -v u="$unit" 'BEGIN { f = u == "GiB" ? 1048576 : u == "MiB" ? 1024 : u == "KiB" ? 1 : 1 / 1024; printf "%d\n", v * f }')
done < <(grep -oE "memcore: job $job\.[0-9a-z]+: after the step: .* peak_nonreclaimable=[0-9.]+ (B|KiB|MiB|GiB)" "$MC_LOG_DIR/slurmd.log" |
	sed -E 's/memcore: job ([^:]+): .*peak_nonreclaimable=([0-9.]+) (.*)/\1 \2 \3/')
assert_eq $((N + 1)) "${#logged[@]}" "every step logged its summary in slurmd's log"
max=0 oom=0
for s in "${!logged[@]}"; do
	grep -qx "$s" <<<"$shown" && continue
	[ "${logged[$s]}" -gt "$max" ] && max=${logged[$s]}
	oom=$((oom + ${ooms[$s]:-0}))
done
assert_ne 0 "$agg" "the record's bound (MC_JOBREC_MAX) pushed older entries into the aggregate"
if [ "$agg" -gt 0 ]; then
	akib=$(jq -r '.aggregate.largest_peak_nonreclaimable_bytes / 1024 | floor' <<<"$rep")
	[ "$max" -gt 0 ] && [ $((akib - max)) -le $((max / 100 + 1)) ] && [ $((max - akib)) -le $((max / 100 + 1)) ]
	assert_eq 0 $? "the aggregate's largest peak (${akib} KiB) is the largest logged by the steps it counts (${max} KiB)"
	at=$(jq -r '.aggregate.largest_peak_step' <<<"$rep")
	assert_eq "$max" "${logged[$at]:-none}" "the aggregate names the step of that peak ($at)"
	assert_eq "$oom" "$(jq -r '.aggregate.oom_kills' <<<"$rep")" "the aggregate's OOM kills are those the steps it counts logged"
	mc_run runuser -u nobody -- "$MEMCORE" report "$job"
	assert_contains "$MC_OUT" "$(grep -c . <<<"$shown") step-node summaries" "the text report counts the entries it shows"
	assert_match "$MC_OUT" "$agg older step-node summaries are not shown one by one \(the record's bound\): their largest peak non-reclaimable [0-9.]+ [KMG]iB \(step $job\.[0-9a-z]+ on mc-node1\), $oom OOM kills?" "the text report says what the aggregate stands for"
fi
assert_eq "" "$(grep -E "memcore: job $job\.[0-9a-z]+: (the summary could not be kept|cannot keep the summary)" "$MC_LOG_DIR/slurmd.log")" "no slurmstepd logged a summary it could not keep"

# A record kept by memcore 0.3.0, whose bound left a bare count: read as
# that many summaries without figures (set by hand, as root, on a job held
# in the queue: slurmctld refuses to change a finished one).
rec1=$(scontrol show job "$job" | grep -oE "$job\.batch@mc-node1:[^; ]+")
assert_match "$rec1" "^$job\.batch@mc-node1:a=" "the batch step's record, to copy"
old=$(mc_sbatch -n1 --mem=100M --hold --wrap "true")
mc_run scontrol update job="$old" AdminComment="memcore1:dropped=4;$rec1"
assert_rc 0 "0.3.0's form set by hand on a held job"
mc_run "$MEMCORE" report "$old"
assert_rc 0 "memcore report of it"
assert_contains "$MC_OUT" "1 step-node summary, and 4 older ones in one aggregate" "the count, with the one record shown"
assert_contains "$MC_OUT" "4 older step-node summaries are not shown one by one (the record's bound): dropped by memcore 0.3.0, which kept no figures of them" "said to be 0.3.0's, without figures"
mc_run "$MEMCORE" report "$old" --json
assert_eq "4 4 null null" "$(jq -r '[.dropped, .aggregate.without_figures, .aggregate.largest_peak_nonreclaimable_bytes, .aggregate.oom_kills] | map(tostring) | join(" ")' <<<"$MC_OUT")" "--json: 4 dropped, all without figures"
scancel "$old"
