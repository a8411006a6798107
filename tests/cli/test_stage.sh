#!/bin/bash
# memcore stage: a tree (files, a nested directory, symlinks, a FIFO) copied
# byte for byte with its modes and mtimes; a rerun skips everything; a file
# whose size changed is the only one copied again; a DEST too small (a
# 1 MiB tmpfs) is refused with the figures and nothing written; a missing
# SRC, a DEST that is a file and a directory in the way are input errors;
# progress lines without a terminal (the whole dataset, MiB/s, an ETA; a
# rerun's files already there counted as done and said).
. "$(dirname "$0")/lib.sh"

S=$TMP/src/ds
mkdir -p "$S/sub/deeper" "$TMP/outside"
head -c 300000 /dev/urandom >"$S/shard0.arrow"
head -c 70000 /dev/urandom >"$S/sub/shard1.arrow"
printf 'x' >"$S/sub/deeper/tiny"
: >"$S/empty"
echo secret >"$TMP/outside/target"
ln -s shard0.arrow "$S/link-in"
ln -s "$TMP/outside/target" "$S/sub/link-out"
mkfifo "$S/fifo"
chmod 0640 "$S/shard0.arrow"
chmod 0750 "$S/sub/deeper"
touch -d '2020-01-02 03:04:05.123456789' "$S/sub/shard1.arrow"
touch -d '2021-05-06 07:08:09' "$S/sub/deeper"
D=$TMP/dest/job_1
NFILES=$(find "$S" -type f -o -type l | wc -l)	# 6
BYTES=$(find "$S" -type f -printf '%s\n' | awk '{s += $1} END {print s}')

# 1. The first copy: everything, and the same bytes, modes, mtimes.
run_mc stage --progress-interval=0 -j 3 "$S" "$D"
expect_eq "first stage rc" "$RC" 0
expect_contains "summary: all copied" "$OUT" "memcore: stage: $NFILES files copied, 0 skipped (already there)"
expect_contains "summary: the bytes" "$OUT" "($BYTES bytes)"
expect_contains "summary: MiB/s (the sizes' binary units)" "$OUT" " MiB/s, to $D"
expect_contains "the FIFO is skipped, named" "$ERR" "memcore: stage: skipped $S/fifo: a FIFO (only files, directories and symlinks are staged)"
for f in shard0.arrow sub/shard1.arrow sub/deeper/tiny empty; do
	cmp -s "$S/$f" "$D/ds/$f" || fail "$f: copied bytes differ (cmp)"
	expect_eq "$f: mode" "$(stat -c %a "$D/ds/$f")" "$(stat -c %a "$S/$f")"
	expect_eq "$f: mtime" "$(stat -c %y "$D/ds/$f")" "$(stat -c %y "$S/$f")"
done
for d in "" /sub /sub/deeper; do
	expect_eq "dir ds$d: mode" "$(stat -c %a "$D/ds$d")" "$(stat -c %a "$S$d")"
	expect_eq "dir ds$d: mtime" "$(stat -c %y "$D/ds$d")" "$(stat -c %y "$S$d")"
done
expect_eq "link-in is a symlink" "$(readlink "$D/ds/link-in")" "shard0.arrow"
expect_eq "link-out is a symlink, not a copy of its target" "$(readlink "$D/ds/sub/link-out")" "$TMP/outside/target"
[ -e "$D/ds/fifo" ] && fail "the FIFO was made at DEST"
expect_eq "no temporary file left" "$(find "$TMP/dest" -name '.memcore-stage.*' | wc -l)" 0
# Progress without a terminal, --progress-interval=0: a line per file,
# the last one at 100%.
lines=$(grep -c '^memcore: stage: .* of .* files, [0-9.]* MiB/s, [0-9.]* s, ETA ' <<<"$ERR")
expect_eq "a progress line per file (MiB/s, ETA)" "$lines" "$NFILES"
expect_contains "the last progress line" "$(grep ' files, ' <<<"$ERR" | tail -1)" \
	"memcore: stage: $(fmt_bytes "$BYTES") of $(fmt_bytes "$BYTES") (100%), $NFILES of $NFILES files, "
expect_contains "the last progress line: nothing left" "$(grep ' files, ' <<<"$ERR" | tail -1)" ", ETA 0 s"
expect_eq "no MB/s (decimal) anywhere" "$(grep -c 'MB/s' <<<"$OUT$ERR")" 0

# 2. A rerun skips everything and writes nothing.
before=$(find "$D" -printf '%p %i %y\n' | sort)
run_mc stage "$S" "$D"
expect_eq "rerun rc" "$RC" 0
expect_contains "rerun: all skipped" "$OUT" "memcore: stage: 0 files copied, $NFILES skipped (already there), 0 B (0 bytes)"
expect_eq "rerun: default interval, a fast copy: no progress line" "$(grep -c ' of .* files, ' <<<"$ERR")" 0
expect_eq "rerun: the same inodes (nothing rewritten)" "$(find "$D" -printf '%p %i %y\n' | sort)" "$before"

# 3. One file's size changes: only it is copied.
printf 'more' >>"$S/sub/deeper/tiny"
run_mc stage --progress-interval=0 "$S" "$D"
expect_eq "changed file rc" "$RC" 0
expect_contains "changed file: one copied" "$OUT" "memcore: stage: 1 file copied, $((NFILES - 1)) skipped (already there), 5 B (5 bytes)"
# Its progress counts the whole: the other files (all bytes but tiny's 1)
# already there, done from the start, and said.
expect_eq "changed file: its progress line, the whole" "$(grep ' of [0-9]* files, ' <<<"$ERR")" \
	"$(printf 'memcore: stage: %s of %s (100%%, %s already there), %s of %s files, ' "$(fmt_bytes $((BYTES + 4)))" "$(fmt_bytes $((BYTES + 4)))" "$(fmt_bytes $((BYTES - 1)))" "$NFILES" "$NFILES")$(grep -o '[0-9.]* MiB/s, [0-9.]* s, ETA 0 s$' <<<"$ERR")"
cmp -s "$S/sub/deeper/tiny" "$D/ds/sub/deeper/tiny" || fail "the changed file: bytes differ (cmp)"
# ... and the same size with another mtime is copied too
touch -d '2022-02-02' "$S/empty"
run_mc stage --quiet "$S" "$D"
expect_eq "--quiet: nothing on stdout" "$OUT" ""
expect_eq "--quiet: the FIFO line too" "$ERR" ""
expect_eq "mtime changed: copied again" "$(stat -c %y "$D/ds/empty")" "$(stat -c %y "$S/empty")"
# Options after the paths are options, as cp takes them: never a
# destination named "-q".
cd "$TMP" || fail "cd $TMP"
run_mc stage "$S" "$D" -q
cd - >/dev/null || fail "cd back"
expect_eq "SRC DEST -q: quiet" "$OUT$ERR" ""
expect_eq "SRC DEST -q: no directory '-q'" "$([ -e "$TMP/-q" ] && echo made)" ""

# 4. Bad input: nothing is written.
run_mc stage "$TMP/nope" "$S" "$TMP/d2"
expect_eq "missing SRC rc" "$RC" 2
expect_eq "missing SRC message" "$ERR" "memcore: stage: SRC $TMP/nope: No such file or directory; nothing was copied"
[ -e "$TMP/d2" ] && fail "missing SRC: DEST was made"
# DEST inside SRC (made or not, through a symlink too) or SRC itself: the
# stage would write into the dataset it reads.
before=$(find "$S" | sort | md5sum)
ln -s "$S" "$TMP/s-link"
for d in "$S/sub/new" "$S/sub" "$TMP/s-link/new/../x" "$S/."; do
	run_mc stage "$S" "$d"
	expect_eq "DEST $d inside SRC: rc" "$RC" 2
	expect_contains "DEST $d inside SRC: the message" "$ERR" "memcore: stage: DEST $d is "
	expect_contains "DEST $d inside SRC: the fix" "$ERR" "SRC $S; stage to a directory outside it; nothing was copied"
done
expect_contains "DEST = SRC: said so" "$ERR" "is the same directory as SRC"
expect_eq "DEST inside SRC: SRC untouched" "$(find "$S" | sort | md5sum)" "$before"
rm "$TMP/s-link"
run_mc stage "$S" "$S/shard0.arrow"
expect_eq "DEST a file rc" "$RC" 2
expect_contains "DEST a file message" "$ERR" "memcore: stage: $S/shard0.arrow: not a directory"
mkdir -p "$TMP/d3/ds" && : >"$TMP/d3/ds/sub"
run_mc stage "$S" "$TMP/d3"
expect_eq "a file where a directory goes rc" "$RC" 2
expect_contains "... named" "$ERR" "memcore: stage: $TMP/d3/ds/sub: is in the way (not a directory, where the source has a directory)"
expect_eq "... nothing written" "$(find "$TMP/d3" | wc -l)" 3
run_mc stage "$S" "$TMP/src/ds" "$TMP/d4"
expect_eq "two SRCs with one name rc" "$RC" 2
run_mc stage -j 0 "$S" "$TMP/d4"
expect_eq "-j 0 rc" "$RC" 2
run_mc stage --progress-interval=-1 "$S" "$TMP/d4"
expect_eq "--progress-interval=-1 rc" "$RC" 2
run_mc stage "$S"
expect_eq "no DEST rc" "$RC" 2
[ -e "$TMP/d4" ] && fail "a usage error made DEST"

# 5. DEST on a 1 MiB tmpfs: 3 files of 600,000 bytes do not fit; the
# figures are the files' sizes in the tmpfs's blocks and statvfs's free
# space, as stat -f reads them; nothing is written.
if [ "$(id -u)" = 0 ] && mkdir "$TMP/small" && mount -t tmpfs -o size=1m tmpfs "$TMP/small" 2>/dev/null; then
	trap 'umount "$TMP/small" 2>/dev/null; rm -rf "$TMP"' EXIT
	mkdir "$TMP/big"
	for i in 1 2 3; do head -c 600000 /dev/zero >"$TMP/big/f$i"; done
	bs=$(stat -f -c %S "$TMP/small")
	need=$((3 * ((600000 + bs - 1) / bs * bs)))
	free=$(( $(stat -f -c %a "$TMP/small") * bs ))
	run_mc stage "$TMP/big" "$TMP/small/job_9"
	expect_eq "too small rc" "$RC" 1
	expect_contains "too small: the need" "$ERR" "memcore: stage: not enough space on $TMP/small/job_9: need "
	expect_contains "too small: the need in bytes" "$ERR" "($need bytes in 3 files"
	expect_contains "too small: the free space" "$ERR" "free 1 MiB ($free bytes)"
	expect_contains "too small: nothing copied" "$ERR" "nothing was copied"
	expect_eq "too small: nothing written" "$(find "$TMP/small" -mindepth 1 | wc -l)" 0
	# What fits is copied there.
	run_mc stage "$TMP/big/f1" "$TMP/small/job_9"
	expect_eq "one file fits rc" "$RC" 0
	cmp -s "$TMP/big/f1" "$TMP/small/job_9/f1" || fail "tmpfs copy differs"
	umount "$TMP/small"
else
	echo "skip: the tmpfs case needs root and mount"
fi
finish
