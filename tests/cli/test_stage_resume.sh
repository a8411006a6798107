#!/bin/bash
# memcore stage of a dataset of a few hundred MiB in many files (192 MiB
# in 512 shards of 384 KiB over 4 directories, and one 48 MiB file):
#  - killed mid-copy (RLIMIT_FSIZE of 32 MiB: the kernel's SIGXFSZ ends
#    it as abruptly as a kill -9, at a point that does not depend on the
#    machine's speed): nothing under a real name is partial, the
#    temporary files are left;
#  - the rerun copies exactly what was missing, skips what was whole,
#    removes the temporary files the killed run left, and the tree is
#    the source's (diff -r);
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
whole=0
while IFS= read -r f; do
	rel=${f#"$D/ds/"}
	if cmp -s "$f" "$S/$rel"; then whole=$((whole + 1)); else fail "$rel: under its real name but not the source's bytes"; fi
done < <(find "$D/ds" -type f ! -name '.memcore-stage.*')
echo "killed: $whole of $NFILES files in place, $tmps temporary files left"
[ "$whole" -lt "$NFILES" ] || fail "every file was in place before the kill"
tmp_bytes=$(find "$D" -name '.memcore-stage.*' -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')

# 2. The rerun: what was missing, nothing else; the leftovers removed.
run_mc stage "$S" "$D"
expect_eq "rerun rc" "$RC" 0
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
	expect_contains "tmux: the bar at its end" "$(grep '^\[' <<<"$screen")" \
		"[####################] 100% 240 MiB/240 MiB  $NFILES/$NFILES files  "
	expect_eq "tmux: no per-file line on a terminal" "$(grep -c ' of .* files, ' <<<"$screen")" 0
	expect_contains "tmux: the summary below it" "$screen" "memcore: stage: $NFILES files copied, 0 skipped"
	long=$(awk 'length > 80' <<<"$screen")
	expect_eq "tmux: no line wider than the terminal" "$long" ""
else
	fail "no tmux (contrib/install-deps.sh check installs it)"
fi
finish
