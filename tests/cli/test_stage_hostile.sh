#!/bin/bash
# memcore stage against hostile input: an empty DEST (never "/NAME"), a
# relative DEST whose directories are still to be made (the free-space
# check still applies: nothing written), a progress interval shorter than
# a line takes to print (no hang, SIGTERM still stops it), a tree deeper
# than the stack would take with a path buffer per level (no crash).
. "$(dirname "$0")/lib.sh"

# 1. DEST "" is an input error: DEST/NAME would be /NAME.
name=memcore-stage-empty-dest-$$
mkdir -p "$TMP/e/$name" && echo x >"$TMP/e/$name/f"
(cd "$TMP" && run_mc stage "$TMP/e/$name" ""; echo "$RC" >"$TMP/rc1"; printf '%s' "$ERR" >"$TMP/err1")
expect_eq "empty DEST: rc" "$(cat "$TMP/rc1")" 2
expect_contains "empty DEST: the message" "$(cat "$TMP/err1")" "memcore: stage: DEST is empty"
if [ -e "/$name" ]; then fail "empty DEST: /$name was written"; rm -rf "/${name:?}"; fi

# 2. A relative DEST still to be made ("new/job_2" from inside a 1 MiB
# tmpfs): its free space is the working directory's, checked before
# anything is written, as for an absolute DEST.
mkdir -p "$TMP/big"
for f in a b; do head -c 600000 /dev/zero >"$TMP/big/$f"; done
if [ "$(id -u)" = 0 ] && mkdir "$TMP/small" && mount -t tmpfs -o size=1m tmpfs "$TMP/small" 2>/dev/null; then
	trap 'umount "$TMP/small" 2>/dev/null; rm -rf "$TMP"' EXIT
	(cd "$TMP/small" && run_mc stage -q "$TMP/big" new/job_2; echo "$RC" >"$TMP/rc2"; printf '%s' "$ERR" >"$TMP/err2")
	expect_eq "relative DEST, too small: rc" "$(cat "$TMP/rc2")" 1
	expect_contains "relative DEST: the space check's line" "$(cat "$TMP/err2")" "memcore: stage: not enough space on new/job_2: need"
	expect_eq "relative DEST: nothing written" "$(find "$TMP/small" -mindepth 1 | wc -l)" 0
	umount "$TMP/small"
else
	echo "skip: the tmpfs case needs root and mount"
fi

# 3. --progress-interval=1e-9: each line takes longer than the interval;
# the copy still ends (the monitor once held its lock for good, and SIGTERM
# could not stop it). Progress goes to /dev/null: a hang would fill a file.
mkdir -p "$TMP/p"
for i in $(seq 1 20); do head -c 100000 /dev/zero >"$TMP/p/f$i"; done
rc=0
timeout -s KILL 20 "$MEMCORE" stage -j 1 --progress-interval=1e-9 "$TMP/p" "$TMP/p-out" >/dev/null 2>&1 || rc=$?
expect_eq "--progress-interval=1e-9: rc (137: killed, a hang)" "$rc" 0
expect_eq "--progress-interval=1e-9: all copied" "$(find "$TMP/p-out/p" -type f | wc -l)" 20

# 4. A tree 1000 directories deep (a path of 2,000 bytes, within
# PATH_MAX): staged whole, no crash (8 KiB of path buffers a level once
# ran past an 8 MiB stack).
mkdir -p "$TMP/deep" && (cd "$TMP/deep" && for i in $(seq 1 1000); do mkdir a && cd a || exit; done; echo x >f)
rc=0
(ulimit -s 8192 -n 1024; "$MEMCORE" stage -q "$TMP/deep" "$TMP/deep-out" >/dev/null 2>"$TMP/err4") || rc=$?
expect_eq "1000 levels deep: rc" "$rc" 0
expect_eq "1000 levels deep: the bottom file" "$(find "$TMP/deep-out" -name f -type f | wc -l)" 1

# 5. Two SRCs with one name that holds a newline: one error line, both
# paths escaped (as every other path memcore prints).
mkdir -p "$TMP/x1/q"$'\n'"q" "$TMP/x2/q"$'\n'"q"
run_mc stage "$TMP/x1/q"$'\n'"q" "$TMP/x2/q"$'\n'"q" "$TMP/x-out"
expect_eq "two SRCs, one name: rc" "$RC" 2
expect_eq "two SRCs, one name: one line" "$(printf '%s\n' "$ERR" | wc -l)" 1
expect_contains "two SRCs, one name: DEST/NAME escaped" "$ERR" "another SRC goes to $TMP/x-out/q\\nq too"

# 6. A file appended to while it is copied: the copy matches no state of
# the source, so it is not renamed into place (exit 1, the file named);
# a rerun once it is still copies it whole.
mkdir -p "$TMP/g"
head -c 200000000 /dev/zero >"$TMP/g/grow"
( while [ ! -e "$TMP/g-stop" ]; do printf x >>"$TMP/g/grow"; done ) &
writer=$!
# The writer has started before the copy does (else a fast copy could end
# before the first append and the case would pass or fail by chance).
for ((w = 0; w < 500; w++)); do
	[ "$(stat -c %s "$TMP/g/grow")" -gt 200000000 ] && break
	sleep 0.01
done
run_mc stage -q -j 1 "$TMP/g" "$TMP/g-out"
: >"$TMP/g-stop"; wait "$writer"
expect_eq "file growing while copied: rc" "$RC" 1
expect_contains "file growing: named" "$ERR" "memcore: stage: $TMP/g/grow: changed while it was copied"
[ -e "$TMP/g-out/g/grow" ] && fail "file growing: a copy under its final name"
run_mc stage -q "$TMP/g" "$TMP/g-out"
expect_eq "file growing, rerun when still: rc" "$RC" 0
cmp -s "$TMP/g/grow" "$TMP/g-out/g/grow" || fail "file growing: the rerun's copy differs"
rm -rf "$TMP/g" "$TMP/g-out"

# 7. A file below SRC its user cannot read: an input error found by the
# walk, like an unreadable directory (exit 2, nothing written), not a copy
# failed halfway (exit 1 with the files before it copied).
if [ "$(id -u)" = 0 ] && command -v runuser >/dev/null; then
	mkdir -p "$TMP/u/src/sub" "$TMP/u/out"
	echo a >"$TMP/u/src/a"; echo b >"$TMP/u/src/sub/b"
	chmod 000 "$TMP/u/src/sub/b"
	chown -R nobody "$TMP/u"; chmod 755 "$TMP"
	rc=0
	runuser -u nobody -- "$MEMCORE" stage "$TMP/u/src" "$TMP/u/out" >/dev/null 2>"$TMP/err7" || rc=$?
	expect_eq "unreadable file below SRC: rc" "$rc" 2
	expect_contains "unreadable file: named" "$(cat "$TMP/err7")" "memcore: stage: $TMP/u/src/sub/b: Permission denied; nothing was copied"
	expect_eq "unreadable file: nothing written" "$(find "$TMP/u/out" -mindepth 1 | wc -l)" 0
else
	echo "skip: the unreadable-file case needs root and runuser"
fi

# A dataset's own file named like a temporary file of a killed stage
# (".memcore-stage.PID.N", the PID gone): a rerun keeps it (it is in the
# source); only a name the source lacks is swept.
mkdir -p "$TMP/t/ds"
echo important >"$TMP/t/ds/.memcore-stage.999999.0"
echo x >"$TMP/t/ds/a"
run_mc stage -q "$TMP/t/ds" "$TMP/t-out"
expect_eq "a temporary-looking dataset file: first stage rc" "$RC" 0
echo left >"$TMP/t-out/ds/.memcore-stage.999999.1"
run_mc stage "$TMP/t/ds" "$TMP/t-out"
expect_eq "rerun: rc" "$RC" 0
expect_eq "rerun: the dataset's own file kept" "$(cat "$TMP/t-out/ds/.memcore-stage.999999.0" 2>&1)" important
[ -e "$TMP/t-out/ds/.memcore-stage.999999.1" ] && fail "rerun: a killed stage's temporary file left"
expect_contains "rerun: one temporary file removed" "$ERR" "removed 1 temporary files"
finish
