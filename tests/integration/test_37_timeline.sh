#!/bin/bash
# A step's memory over time on a real Slurm: the sampler keeps the
# timeline with the step's record, and memcore report draws it.
#  (a) a step that climbs 8 MiB every 150 ms to its OOM kill at --mem=256M,
#      drawn by `memcore report JOBID --plot` in an 80-column tmux window:
#      the axis up to 300 MiB (round, above the limit it was killed at),
#      the climb, the limit's '=' row that the bars reach, the OOM marker
#      near the end of the time axis;
#  (b) a step that holds a fifth of its --mem=1G: scaled to what it used
#      (its bars fill most of the chart), the limit named above it,
#      "20% of asked" or so;
#  (c) --svg FILE: well-formed (xmllint), one panel, the OOM kill named;
#  (d) --json: the series, its largest non-reclaimable point at the
#      record's peak (rounded up by a 63rd at most), the OOM point at the
#      end of the series.
# The captures and the SVG are kept beside the test's log, in
# tests/integration/.work/logs/test_37_timeline.{oom.txt,fifth.txt,svg}.
# guest: yes
# guest: why: cgroup v2's memory.events oom_kill read with each sample
#   (hierarchical there) and cpu.stat's cores busy per point, and the
#   record with its timeline through each Slurm release's AdminComment
. "$(dirname "$0")/lib.sh"

MC_SOCKETS=1 MC_CORES_PER_SOCKET=2 MC_THREADS_PER_CORE=1
MC_REAL_MEMORY=20000 MC_GPUS=2
PROGS=$MEMCORE_BUILD/progs
MEMCORE=$MEMCORE_BUILD/memcore
for p in mc_climb; do
	[ -x "$PROGS/$p" ] || mc_die "$PROGS/$p missing: make build/progs/$p (make integration builds them)"
done
command -v jq >/dev/null || mc_skip "jq missing (contrib/install-deps.sh check)"
# The guests' images have neither tmux nor xmllint (tests/vm/common.sh):
# there the chart is drawn to a pipe with COLUMNS=80 and the SVG is not
# parsed; the host has both (contrib/install-deps.sh check).
HAVE_TMUX=1 HAVE_XMLLINT=1
command -v tmux >/dev/null || { HAVE_TMUX=0; mc_log "no tmux: --plot with COLUMNS=80 into a pipe"; }
command -v xmllint >/dev/null || { HAVE_XMLLINT=0; mc_log "no xmllint: the SVG is not parsed here"; }

mc_cluster_start
mc_small_policy
printf '%s\n' "SampleInterval=200ms" >>"$MC_CONF_DIR/memcore.conf"

# plot JOB NAME: memcore report JOB --plot in a detached 80x50 tmux window;
# the pane's text (with what scrolled off) into $MC_WORK/NAME.txt and PANE.
SOCK=$MC_WORK/tmux.sock
KEEP=$MC_TOP/tests/integration/.work/logs/$MC_NAME
mkdir -p "${KEEP%/*}"
mc_at_exit 'tmux -S "$SOCK" kill-server 2>/dev/null'
plot() {
	local f=$MC_WORK/$2.txt
	if [ "$HAVE_TMUX" = 0 ]; then
		{ COLUMNS=80 "$MEMCORE" report "$1" --plot; echo "MC-PLOT-RC=$?"; } >"$f" 2>&1
	else
		tmux -S "$SOCK" new-session -d -x 80 -y 50 -s "$2" \
			"$MEMCORE report $1 --plot; echo MC-PLOT-RC=\$?; sleep 600"
		mc_wait_until 30 bash -c "tmux -S '$SOCK' capture-pane -p -t '$2' -S -200 | grep -q MC-PLOT-RC=" ||
			mc_log "$2: no end in 30 s"
		tmux -S "$SOCK" capture-pane -p -t "$2" -S -200 >"$f"
		tmux -S "$SOCK" kill-session -t "$2"
	fi
	PANE=$(cat "$f")
	cp "$f" "$KEEP.${2#timeline-}.txt"
	mc_log "$2 (80 columns):"$'\n'"$PANE"
}
# rows: the 12 plot rows of PANE (column 10 is '|'), top first.
rows() { awk 'length($0) > 9 && substr($0, 10, 1) == "|"' <<<"$PANE"; }
# bar_heights: per plot column, the rows with '#' or ':' in it.
bar_heights() {
	rows | awk '{ for (c = 11; c <= 80; c++) { ch = substr($0, c, 1);
		if (ch == "#" || ch == ":") h[c]++ } }
		END { for (c = 11; c <= 80; c++) print h[c] + 0 }'
}

# --- (a) climbing to its OOM kill -------------------------------------------
mc_run srun -n1 --gpus=1 --mem=256M sh -c \
	"echo \$SLURM_JOB_ID >$MC_WORK/tmp/job-a; exec $PROGS/mc_climb 8 150 0 0"
assert_ne 0 "$MC_RC" "(a) the climbing step is OOM-killed"
ja=$(cat "$MC_WORK/tmp/job-a")
assert_match "$ja" "^[0-9]+$" "(a) its job id"
plot "$ja" timeline-oom
assert_contains "$PANE" "MC-PLOT-RC=0" "(a) memcore report --plot exits 0"
assert_match "$PANE" "step $ja\.0 on mc-node1: memory over [0-9.]+ s, a point every" "(a) the chart names the step, the node and the time it covers"
assert_eq 12 "$(rows | wc -l)" "(a) 12 rows of memory, none wrapped at 80 columns"
assert_match "$(rows | head -n1)" "^ *300 MiB \|" "(a) the top row is 300 MiB, the round value above the limit it was killed at"
limrow=$(rows | awk 'substr($0, 11, 1) == "=" { print NR; exit }')
assert_match "$limrow" "^[23]$" "(a) the limit's row of '=' (256 MiB of 300: the 3rd from the top)"
# the climb: bars never shrink over the first 90% of the columns, and go
# from the bottom quarter to the limit's row before the kill (anywhere in
# the columns: how near the end it gets there depends on the sampling's
# timing, as seen under load at column 67 of 70)
heights=$(bar_heights)
first=$(head -n1 <<<"$heights")
top=$(sort -n <<<"$heights" | tail -n1)
awk 'NR <= 63 { if (NR > 1 && $1 < prev) bad = 1; prev = $1 } END { exit bad }' <<<"$heights"
assert_eq 0 $? "(a) the bars climb column by column: $(tr '\n' ' ' <<<"$heights")"
[ "$first" -le 3 ] && [ "$top" -ge $((12 - ${limrow:-0})) ]
assert_eq 0 $? "(a) from $first rows at the start to $top of 12 (the row under the limit's or it) before the kill"
axis=$(grep -E '^ +0 \+' <<<"$PANE")
xcol=$(awk '{ print index($0, "X") }' <<<"$axis")
[ -n "$xcol" ] && [ "$xcol" -ge $((10 + 70 * 8 / 10)) ]
assert_eq 0 $? "(a) the OOM marker 'X' on the time axis is in the last fifth (column ${xcol:-none} of 80)"
assert_match "$(grep -E '^ {10}[0-9]' <<<"$PANE")" "[0-9] s" "(a) the time axis says its unit"
assert_match "$PANE" "X OOM kill, by [0-9.]+ s" "(a) the legend says when the kill was"
assert_contains "$PANE" "= asked 256 MiB (--mem=256M)" "(a) ... and what was asked"

# --- (b) a fifth of --mem=1G -------------------------------------------------
mc_run srun -n1 --gpus=1 --mem=1G sh -c \
	"echo \$SLURM_JOB_ID >$MC_WORK/tmp/job-b; exec $PROGS/mc_climb 50 100 200 4000"
assert_rc 0 "(b) the step that holds 200 MiB of 1 GiB runs"
jb=$(cat "$MC_WORK/tmp/job-b")
plot "$jb" timeline-fifth
assert_contains "$PANE" "MC-PLOT-RC=0" "(b) memcore report --plot exits 0"
assert_eq 12 "$(rows | wc -l)" "(b) 12 rows of memory"
assert_match "$(rows | head -n1)" "^ *250 MiB \|" "(b) scaled to what it used: the top row is 250 MiB, round above its 200"
assert_contains "$PANE" "^ above the chart: asked 1 GiB (--mem=1G)" "(b) the limit named above the chart"
assert_not_contains "$(rows)" "=" "(b) ... and no '=' row in it"
max=$(bar_heights | sort -n | tail -n1)
[ "$max" -ge 8 ] && [ "$max" -le 12 ]
assert_eq 0 $? "(b) the bars fill ${max} of 12 rows (200 of 250 MiB is 9.6)"
assert_not_contains "$(rows; grep -E '^ +0 \+' <<<"$PANE")" "X" "(b) no OOM marker"
pct=$(grep -oE "[0-9]+% of asked" <<<"$PANE" | grep -oE "^[0-9]+")
[ -n "$pct" ] && [ "$pct" -ge 15 ] && [ "$pct" -le 30 ]
assert_eq 0 $? "(b) the legend says it used ${pct:-?}% of what it asked (200 MiB of 1 GiB, with the process' own)"

# --- (c) --svg ---------------------------------------------------------------
svg=$MC_WORK/timeline.svg
mc_run "$MEMCORE" report "$ja" --svg "$svg"
assert_rc 0 "(c) --svg FILE"
cp "$svg" "$KEEP.svg"
if [ "$HAVE_XMLLINT" = 1 ]; then
	xmllint --noout "$svg" 2>"$MC_WORK/tmp/xmllint"
	assert_eq 0 $? "(c) the SVG is well-formed XML: $(cat "$MC_WORK/tmp/xmllint")"
fi
assert_file_contains "$svg" "<svg xmlns=\"http://www.w3.org/2000/svg\"" "(c) ... an SVG document"
assert_file_contains "$svg" ">OOM kill</text>" "(c) ... with the OOM kill named"
assert_file_contains "$svg" ">asked 256 MiB (--mem=256M)</text>" "(c) ... and the limit"
assert_eq 1 "$(grep -c '^<g class="panel"' "$svg")" "(c) one panel: the job's one step"
mc_run "$MEMCORE" report "$ja" --svg /nonexistent/x.svg
assert_eq 2 "$MC_RC" "(c) an unwritable --svg FILE is an input error"
assert_contains "$MC_ERR" "memcore: report: --svg /nonexistent/x.svg: No such file or directory" "(c) ... naming it and why"

# --- (d) --json --------------------------------------------------------------
for j in "$ja" "$jb"; do
	mc_run "$MEMCORE" report "$j" --json
	assert_rc 0 "(d) report $j --json"
	st=$(jq -c '.steps[] | select(.step | endswith(".0"))' <<<"$MC_OUT")
	n=$(jq '.timeline.points | length' <<<"$st")
	[ "$n" -ge 10 ] && [ "$n" -le 120 ]
	assert_eq 0 $? "(d) job $j: $n points (10 to 120)"
	peak=$(jq '.peak_nonreclaimable_bytes' <<<"$st")
	smax=$(jq '[.timeline.points[].nonreclaimable_bytes] | max' <<<"$st")
	fmax=$(jq '[.timeline.points[].page_cache_bytes] | max' <<<"$st")
	atkill=$(jq '.peak_at_oom_kill' <<<"$st")
	scale=$(( (smax > fmax ? smax : fmax) ))
	if [ "$atkill" = true ]; then
		# the kill's peak is the kernel's (capped at the limit), which
		# a sample may not have caught: the series is not above it but
		# for its rounding up
		[ "$smax" -le $((peak + scale / 63 + 1048576)) ] && [ "$smax" -ge $((peak * 7 / 10)) ]
	else
		[ "$smax" -ge "$peak" ] && [ "$smax" -le $((peak + scale / 63 + 1048576)) ]
	fi
	assert_eq 0 $? "(d) job $j: the series' largest non-reclaimable ($smax) against the record's peak ($peak, at the kill: $atkill)"
	t1=$(jq '.timeline.points[1].t_ms - .timeline.points[0].t_ms' <<<"$st")
	assert_eq "$(jq '.timeline.point_ms' <<<"$st")" "$t1" "(d) job $j: t_ms a point_ms apart"
	# cores busy: v2's cpu.stat, per point (and the chart's row of
	# digits); v1 has none (null)
	if [ "$(mc_cgroup_version)" = 2 ]; then
		assert_match "$(cat "$MC_WORK"/timeline-*.txt)" "   cores  [.0-9]{70}" "(d) --plot has the cores busy, a digit a column"
		busy=$(jq '[.timeline.points[].cores_busy] | max' <<<"$st")
		awk -v b="$busy" 'BEGIN { exit !(b > 0 && b <= 1.5) }'
		assert_eq 0 $? "(d) job $j: cores busy up to $busy (a number, one core at most and noise)"
	else
		assert_eq null "$(jq '[.timeline.points[].cores_busy] | unique | .[0]' <<<"$st")" "(d) job $j: no cores busy on cgroup v1"
	fi
done
mc_run "$MEMCORE" report "$ja" --json
st=$(jq -c '.steps[] | select(.step | endswith(".0"))' <<<"$MC_OUT")
oomp=$(jq '.timeline.oom_point' <<<"$st")
n=$(jq '.timeline.points | length' <<<"$st")
[ "$oomp" != null ] && [ "$oomp" -ge $((n * 8 / 10)) ]
assert_eq 0 $? "(d) the OOM point ($oomp of $n) is at the end of the climb"
assert_eq null "$(jq '.timeline_note' <<<"$st")" "(d) no note when the timeline is there"
mc_run "$MEMCORE" report "$jb" --json
assert_eq null "$(jq '.steps[] | select(.step | endswith(".0")) | .timeline.oom_point' <<<"$MC_OUT")" "(d) no OOM point in the fifth-used step"
