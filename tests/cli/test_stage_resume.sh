#!/bin/bash
# memcore stage of a dataset of a few hundred MiB in many files (192 MiB
# in 512 shards of 384 KiB over 4 directories, and one 48 MiB file):
#  - killed mid-copy (RLIMIT_FSIZE of 32 MiB: the kernel's SIGXFSZ ends
#    it as abruptly as a kill -9, at a point that does not depend on the
#    machine's speed): nothing under a real name is partial, the
#    temporary files are left;
#  - the rerun copies exactly what was missing, skips what was whole,
#    removes the temporary files the killed run left, and the tree is
#    the source's (diff -r); its progress counts the whole dataset, the
#    whole files as done from the start ("N MiB already there", computed
#    here from the files the killed run left whole), with a rate in MiB/s
#    and an ETA that is the bytes left at that rate;
#  - on a terminal (an 80-column tmux window) the progress is one bar
#    redrawn in place, never wider than the terminal, then the summary.
# About 5 s.
. "$(dirname "$0")/lib.sh"

S=$TMP/src/ds
for d in 0 1 2 3; do mkdir -p "$S/d$d"; done
head -c $((192 << 20)) /dev/urandom | split -b $((384 << 10)) -a 3 - "$S/part."
i=0
for f in "$S"/part.*; do mv "$f" "$S/d$((i % 4))/"; i=$((i + 1)); done
head -c $((48 << 20)) /dev/urandom >"$S/d2/big.arrow"
NFILES=$(find "$S" -type f | wc -l)
expect_eq "the dataset's files" "$NFILES" 513
D=$TMP/scratch/job_7

# 1. Killed mid-copy: the 48 MiB file passes the 32 MiB file size limit.
RC=0
{ (ulimit -f $((32 << 10)); ulimit -c 0; exec "$MEMCORE" stage -j 2 --progress-interval=0 "$S" "$D") \
	>"$TMP/out" 2>"$TMP/err"; } 2>/dev/null || RC=$?
expect_eq "killed by SIGXFSZ mid-copy (128 + 25)" "$RC" 153
tmps=$(find "$D" -name '.memcore-stage.*' | wc -l)
[ "$tmps" -ge 1 ] || fail "the killed stage left no temporary file (it was not killed mid-file)"
[ -e "$D/ds/d2/big.arrow" ] && fail "the 48 MiB file is under its real name after a kill at 32 MiB"
whole=0 whole_bytes=0
while IFS= read -r f; do
	rel=${f#"$D/ds/"}
	if cmp -s "$f" "$S/$rel"; then whole=$((whole + 1)) whole_bytes=$((whole_bytes + $(stat -c %s "$f"))); else fail "$rel: under its real name but not the source's bytes"; fi
done < <(find "$D/ds" -type f ! -name '.memcore-stage.*')
echo "killed: $whole of $NFILES files in place, $tmps temporary files left"
[ "$whole" -lt "$NFILES" ] || fail "every file was in place before the kill"
tmp_bytes=$(find "$D" -name '.memcore-stage.*' -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')

# 2. The rerun: what was missing, nothing else; the leftovers removed.
run_mc stage --progress-interval=0 "$S" "$D"
expect_eq "rerun rc" "$RC" 0
# A line per file copied, each counting the whole 240 MiB and 513 files,
# the whole files already there as done: "D of 240 MiB (P%, W already
# there), F of 513 files, R MiB/s, T s, ETA E".
TOTAL=$(((192 + 48) << 20))
mapfile -t plines < <(grep ' of [0-9]* files, ' <<<"$ERR")
expect_eq "rerun: a progress line per file copied" "${#plines[@]}" "$((NFILES - whole))"
re='^memcore: stage: ([0-9.]+) (B|KiB|MiB|GiB) of ([^(]*) \(([0-9]+)%, ([^)]*) already there\), ([0-9]+) of ([0-9]+) files, ([0-9.]+) MiB/s, ([0-9.]+) s, ETA (.*)$'
n=0
for l in "${plines[@]}"; do
	n=$((n + 1))
	if ! [[ $l =~ $re ]]; then
		fail "rerun: progress line $n not as documented: $l"
		continue
	fi
	done_b=$(awk -v v="${BASH_REMATCH[1]}" -v u="${BASH_REMATCH[2]}" 'BEGIN { m = u == "GiB" ? 2^30 : u == "MiB" ? 2^20 : u == "KiB" ? 1024 : 1; printf "%.0f", v * m }')
	expect_eq "rerun line $n: the whole dataset" "${BASH_REMATCH[3]}" "$(fmt_bytes $TOTAL)"
	expect_eq "rerun line $n: what was already there ($whole files, $whole_bytes bytes)" "${BASH_REMATCH[5]}" "$(fmt_bytes $whole_bytes)"
	expect_eq "rerun line $n: of all the files" "${BASH_REMATCH[7]}" "$NFILES"
	[ "${BASH_REMATCH[6]}" -gt "$whole" ] || fail "rerun line $n: ${BASH_REMATCH[6]} files done, not more than the $whole already there"
	[ "$done_b" -ge "$whole_bytes" ] || fail "rerun line $n: $done_b bytes done, less than the $whole_bytes already there"
	expect_near "rerun line $n: the percentage of the whole" "${BASH_REMATCH[4]}" "$(awk -v d="$done_b" -v t=$TOTAL 'BEGIN { print 100 * d / t }')" 0.6
	# The ETA: the bytes left at this run's rate (what it copied over its
	# seconds), within the rounding of the printed figures.
	rate=${BASH_REMATCH[8]} eta=${BASH_REMATCH[10]}
	if [ "$done_b" -ge $TOTAL ]; then
		expect_eq "rerun line $n: all done, ETA 0 s" "$eta" "0 s"
	elif [[ $eta =~ ^([0-9.]+)\ s$ ]] && awk -v r="$rate" 'BEGIN { exit !(r >= 1) }'; then
		want=$(awk -v t=$TOTAL -v d="$done_b" -v r="$rate" 'BEGIN { printf "%.3f", (t - d) / (r * 1048576) }')
		tol=$(awk -v w="$want" 'BEGIN { printf "%.3f", 0.06 + w * 0.03 }')
		expect_near "rerun line $n: ETA, the bytes left at ${rate} MiB/s" "${BASH_REMATCH[1]}" "$want" "$tol"
	else
		[[ $eta =~ ^[0-9]+\ min\ [0-9]{2}\ s$ ]] || fail "rerun line $n: ETA '$eta' (rate $rate MiB/s): neither seconds nor minutes"
	fi
done
expect_contains "rerun: the last line, all of it" "${plines[-1]:-}" "memcore: stage: 240 MiB of 240 MiB (100%, $(fmt_bytes $whole_bytes) already there), $NFILES of $NFILES files, "
expect_contains "rerun: the last line, nothing left" "${plines[-1]:-}" ", ETA 0 s"
echo "rerun: ${#plines[@]} progress lines; first: ${plines[0]:-}"
expect_contains "rerun: copies the rest, skips the whole ones" "$OUT" \
	"memcore: stage: $((NFILES - whole)) files copied, $whole skipped (already there)"
expect_contains "rerun: removes the killed run's temporary files" "$ERR" \
	"memcore: stage: removed $tmps temporary files ("
expect_eq "rerun: no temporary file left" "$(find "$D" -name '.memcore-stage.*' | wc -l)" 0
diff -r "$S" "$D/ds" >/dev/null || fail "after the rerun the staged tree differs from the source (diff -r)"
echo "the killed run's temporary files held $tmp_bytes bytes"

# A stage still running is not robbed of its temporary file: one named
# for a live process (this shell) stays.
keep=$D/ds/d0/.memcore-stage.$$.1
: >"$keep"
run_mc stage --quiet "$S" "$D"
expect_eq "a live stage's temporary file rc" "$RC" 0
[ -e "$keep" ] || fail "a temporary file of a live process was removed"
rm -f "$keep"

# 3. On a terminal: an 80-column tmux window.
if command -v tmux >/dev/null; then
	sock=$TMP/tmux.sock
	tmux -S "$sock" new-session -d -x 80 -y 24 -s stage \
		"'$MEMCORE' stage '$S' '$TMP/scratch/job_8'; echo STAGE-RC=\$?; sleep 60"
	for ((i = 0; i < 300; i++)); do
		tmux -S "$sock" capture-pane -p -t stage | grep -q 'STAGE-RC=' && break
		sleep 0.1
	done
	screen=$(tmux -S "$sock" capture-pane -p -t stage)
	tmux -S "$sock" kill-server 2>/dev/null
	printf '%s\n' "$screen" | sed '/^$/d'
	expect_contains "tmux: the stage ended" "$screen" "STAGE-RC=0"
	bars=$(grep -c '^\[[#.]\{20\}\] ' <<<"$screen")
	expect_eq "tmux: one progress bar, redrawn in place" "$bars" 1
	expect_match() { [[ $2 =~ $3 ]] || fail "$1: '$3' does not match: $2"; }
	expect_match "tmux: the bar at its end (MiB/s, ETA, files)" "$(grep '^\[' <<<"$screen")" \
		"^\[####################\] 100% 240 MiB/240 MiB  [0-9.]+ MiB/s  ETA 0 s  $NFILES/$NFILES fi"
	expect_eq "tmux: no per-file line on a terminal" "$(grep -c ' of .* files, ' <<<"$screen")" 0
	expect_contains "tmux: the summary below it" "$screen" "memcore: stage: $NFILES files copied, 0 skipped"
	long=$(awk 'length > 80' <<<"$screen")
	expect_eq "tmux: no line wider than the terminal" "$long" ""
else
	fail "no tmux (contrib/install-deps.sh check installs it)"
fi
finish
