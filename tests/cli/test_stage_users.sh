#!/bin/bash
# memcore stage between two local users, an attacker and a victim, made for
# the test (and a group they share), issue 37: the swaps an attacker makes
# between memcore's plan and its copy, made deterministic by a hook
# (tests/cli/stage_hook.c, LD_PRELOAD: the first pthread_create runs a
# script that tells this test to swap, and waits until it has):
#  1. source side: the victim stages a group dataset whose `sub` the
#     attacker owns; `sub` becomes a symlink to the victim's ~/.ssh: the
#     copy stops naming it, no byte of the victim's key in DEST;
#  2. DEST side: a directory of the stage at DEST becomes a symlink to the
#     victim's ~/.ssh (by the attacker if the modes let them, else by
#     root: the copy must not follow it either): ~/.ssh keeps its mode, no
#     file lands in it;
#  3-4. the same two with root as the stager (an admin pre-staging a
#     group's dataset) and root-only stand-ins for a secret file and
#     /etc/cron.d;
#  5. modes: an attacker's 0777 directory comes out 0755, the DEST memcore
#     makes is 0700; a DEST others can write (a 1777 scratch), one another
#     user owns, or a directory under DEST another user owns is refused
#     (exit 2, nothing written); an unreadable SRC file is exit 2 with
#     DEST not made.
# Needs root (useradd, runuser) and cc; skipped otherwise. About 3 s.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ] || ! command -v useradd >/dev/null || ! command -v runuser >/dev/null ||
	! command -v cc >/dev/null; then
	echo "skipped: needs root, useradd, runuser and cc"
	exit 0
fi

A=mcatk$$ V=mcvic$$ G=mcgrp$$
cleanup() {
	userdel -r "$A" >/dev/null 2>&1
	userdel -r "$V" >/dev/null 2>&1
	groupdel "$G" >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT
chmod 0755 "$TMP"
groupadd "$G" || fail "groupadd $G"
useradd -M -d "$TMP/home-$A" -s /bin/sh -G "$G" "$A" || fail "useradd $A"
useradd -m -d "$TMP/home-$V" -s /bin/sh -G "$G" "$V" || fail "useradd $V"
[ "$FAILS" = 0 ] || finish
VH=$TMP/home-$V
mkdir -m 0700 "$VH/.ssh" && echo VICTIM-SECRET >"$VH/.ssh/id_ed25519" && chmod 0600 "$VH/.ssh/id_ed25519"
chown -R "$V:$V" "$VH/.ssh"

cc -shared -fPIC -o "$TMP/hook.so" "$TOP/tests/cli/stage_hook.c" -ldl || fail "cc stage_hook.c"
H=$TMP/h
mkdir -m 0777 "$H"
printf '#!/bin/sh\n: >%s/at\ni=0\nwhile [ ! -e %s/go ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done\n' \
	"$H" "$H" >"$TMP/hook.sh"
chmod 0755 "$TMP/hook.so" "$TMP/hook.sh"

# The group's dataset directory: the victim's, the group's to write.
GRP=$TMP/grp
mkdir -m 2775 "$GRP" && chown "$V:$G" "$GRP"
# dataset NAME FILE TEXT [inner]: GRP/NAME (the group's) holding the
# attacker's 0777 sub/ with FILE (or sub/inner/FILE) of TEXT.
dataset() {
	local d=$GRP/$1 at=$GRP/$1/sub
	mkdir -m 2775 "$d" && chown "$V:$G" "$d"
	runuser -u "$A" -- sh -c "umask 0; mkdir -m 0777 '$at' && { [ -z '${4:-}' ] || mkdir -m 0777 '$at/inner'; } &&
		echo '$3' >'$at/${4:+inner/}$2' && chmod 0644 '$at/${4:+inner/}$2'"
}
SCR=$TMP/scratch	# a shared local scratch, as LocalScratch
mkdir -m 1777 "$SCR"

# race WHO SWAP SRC DEST: `memcore stage -q -j 1 SRC DEST` as WHO with the
# hook; SWAP (a function) runs when the stage is between its plan and its
# copy. Sets RC, ERR; fails when the hook never ran.
race() {
	local who=$1 swap=$2 pid i
	shift 2
	rm -f "$H/at" "$H/go"
	local cmd=(env LD_PRELOAD="$TMP/hook.so" MC_TEST_HOOK="$TMP/hook.sh" "$MEMCORE" stage -q -j 1 "$@")
	if [ "$who" = root ]; then
		"${cmd[@]}" >"$TMP/out" 2>"$TMP/err" &
	else
		runuser -u "$who" -- "${cmd[@]}" >"$TMP/out" 2>"$TMP/err" &
	fi
	pid=$!
	for ((i = 0; i < 200; i++)); do [ -e "$H/at" ] && break; sleep 0.05; done
	[ -e "$H/at" ] || fail "$swap: the hook did not run (no pthread_create?)"
	[ -e "$H/at" ] && $swap
	: >"$H/go"
	RC=0
	wait "$pid" || RC=$?
	ERR=$(cat "$TMP/err")
}

# The source side: the attacker swaps their sub for a symlink to SW_TO.
swap_src() {
	runuser -u "$A" -- sh -c "mv '$SW_DIR/sub' '$SW_DIR/sub.old' && ln -s '$SW_TO' '$SW_DIR/sub'" ||
		fail "swap_src: the attacker could not swap $SW_DIR/sub"
}
# The DEST side: SW_DIR/inner (at DEST) swapped for a symlink to SW_TO, by
# the attacker when the stage's modes let them (they must not), else by
# root: memcore must not follow it whoever made it.
swap_dst() {
	BY=attacker
	runuser -u "$A" -- sh -c "mv '$SW_DIR/inner' '$SW_DIR/inner.old' && ln -s '$SW_TO' '$SW_DIR/inner'" 2>/dev/null && return
	BY=root
	{ mv "$SW_DIR/inner" "$SW_DIR/inner.old" && ln -s "$SW_TO" "$SW_DIR/inner"; } || fail "swap_dst: no swap of $SW_DIR/inner"
}

# 1. Source side, as the victim.
dataset ds1 id_ed25519 decoy
SW_DIR=$GRP/ds1 SW_TO=$VH/.ssh
race "$V" swap_src "$GRP/ds1" "$SCR/job_1"
expect_eq "source swap (victim): rc" "$RC" 1
expect_contains "source swap (victim): the path named" "$ERR" "memcore: stage: $GRP/ds1/sub: changed since it was read"
expect_eq "source swap (victim): no secret in DEST" "$(grep -rl VICTIM-SECRET "$SCR/job_1" 2>/dev/null)" ""

# 2. DEST side, as the victim (DEST made by memcore under the 1777 scratch).
dataset ds2 authorized_keys ATTACKER-KEY inner
SW_DIR=$SCR/job_2/ds2/sub SW_TO=$VH/.ssh
race "$V" swap_dst "$GRP/ds2" "$SCR/job_2"
echo "DEST swap (victim): swapped by $BY"
expect_eq "DEST swap (victim): the attacker could not swap" "$BY" root
expect_eq "DEST swap (victim): rc" "$RC" 1
expect_contains "DEST swap (victim): the path named" "$ERR" "memcore: stage: $SCR/job_2/ds2/sub/inner: changed since it was read"
expect_eq "DEST swap (victim): ~/.ssh keeps its mode" "$(stat -c %a "$VH/.ssh")" 700
expect_eq "DEST swap (victim): nothing written in ~/.ssh" "$(ls -A "$VH/.ssh")" id_ed25519

# 3. Source side, as root: a root-only secret is never read.
RO=$TMP/rootonly
mkdir -m 0700 "$RO" && echo ROOT-SECRET >"$RO/shadow" && chmod 0600 "$RO/shadow"
dataset ds3 shadow decoy
mkdir -m 0755 "$TMP/rootdest"
SW_DIR=$GRP/ds3 SW_TO=$RO
race root swap_src "$GRP/ds3" "$TMP/rootdest/job_3"
expect_eq "source swap (root): rc" "$RC" 1
expect_contains "source swap (root): the path named" "$ERR" "memcore: stage: $GRP/ds3/sub: changed since it was read"
expect_eq "source swap (root): no root secret in DEST" "$(grep -rl ROOT-SECRET "$TMP/rootdest" 2>/dev/null)" ""

# 4. DEST side, as root: a stand-in for /etc/cron.d stays as it was.
CRON=$TMP/cron.d
mkdir -m 0755 "$CRON"
dataset ds4 evil '* * * * * root ATTACKER-CRON' inner
SW_DIR=$TMP/rootdest/job_4/ds4/sub SW_TO=$CRON
race root swap_dst "$GRP/ds4" "$TMP/rootdest/job_4"
echo "DEST swap (root): swapped by $BY"
expect_eq "DEST swap (root): the attacker could not swap" "$BY" root
expect_eq "DEST swap (root): rc" "$RC" 1
expect_contains "DEST swap (root): the path named" "$ERR" "memcore: stage: $TMP/rootdest/job_4/ds4/sub/inner: changed since it was read"
expect_eq "DEST swap (root): cron.d keeps its mode" "$(stat -c %a "$CRON")" 755
expect_eq "DEST swap (root): nothing written in cron.d" "$(ls -A "$CRON")" ""

# 5. Modes, and what DEST may be.
run_v() { RC=0; runuser -u "$V" -- "$MEMCORE" "$@" >"$TMP/out" 2>"$TMP/err" || RC=$?; ERR=$(cat "$TMP/err"); }
run_v stage -q "$GRP/ds2" "$SCR/job_5"
expect_eq "plain stage: rc" "$RC" 0
expect_eq "the DEST memcore made: 0700" "$(stat -c %a "$SCR/job_5")" 700
expect_eq "the attacker's 0777 directory: 0755 at DEST" "$(stat -c %a "$SCR/job_5/ds2/sub")" 755
expect_eq "... and its 0777 subdirectory" "$(stat -c %a "$SCR/job_5/ds2/sub/inner")" 755
expect_eq "the group's 2775 directory: 0755 (no setgid, no group write)" "$(stat -c %a "$SCR/job_5/ds2")" 755
expect_eq "the copies are the victim's" "$(stat -c %U "$SCR/job_5/ds2/sub/inner/authorized_keys")" "$V"
run_v stage -q "$GRP/ds2" "$SCR"
expect_eq "DEST a 1777 scratch: rc" "$RC" 2
expect_eq "DEST a 1777 scratch: the message" "$ERR" "memcore: stage: $SCR: others can write it (mode 1777); stage into a directory of your own, e.g. LocalScratch/job_J which memcore makes for your job; nothing was copied"
expect_eq "DEST a 1777 scratch: nothing written" "$(ls -A "$SCR" | grep -c ds2)" 0
mkdir -m 0755 "$SCR/job_a" && chown "$A" "$SCR/job_a"
run_v stage -q "$GRP/ds2" "$SCR/job_a"
expect_eq "DEST the attacker's: rc" "$RC" 2
expect_contains "DEST the attacker's: named" "$ERR" "memcore: stage: $SCR/job_a: owned by $A (uid $(id -u "$A")), not by you;"
mkdir -m 0700 "$SCR/job_6" "$SCR/job_6/ds2" && chown "$V" "$SCR/job_6" && chown "$A" "$SCR/job_6/ds2"
run_v stage -q "$GRP/ds2" "$SCR/job_6"
expect_eq "a directory under DEST the attacker owns: rc" "$RC" 2
expect_contains "... named" "$ERR" "memcore: stage: $SCR/job_6/ds2: owned by $A"
expect_eq "... nothing written" "$(find "$SCR/job_6" -mindepth 2 | wc -l)" 0
ln -s "$VH/.ssh" "$SCR/job_l" && chown -h "$A" "$SCR/job_l"
run_v stage -q "$GRP/ds2" "$SCR/job_l"
expect_eq "DEST the attacker's symlink to ~/.ssh: rc" "$RC" 2
expect_contains "... named" "$ERR" "memcore: stage: $SCR/job_l: a symlink owned by $A"
expect_eq "... nothing written in ~/.ssh" "$(ls -A "$VH/.ssh")" id_ed25519
runuser -u "$A" -- sh -c "echo locked >'$GRP/locked' && chmod 0600 '$GRP/locked'"
run_v stage -q "$GRP/locked" "$SCR/job_7"
expect_eq "an unreadable SRC file: rc" "$RC" 2
expect_eq "... the message" "$ERR" "memcore: stage: SRC $GRP/locked: Permission denied; nothing was copied"
[ -e "$SCR/job_7" ] && fail "an unreadable SRC file: DEST was made"
# 6. A symlink another user owns in the middle of the path, not only as its
# last component ("a/link/" once made lstat follow it): refused for the
# victim's DEST, root's DEST (a stand-in for /etc holding cron.d) and
# root's SRC (a stand-in for /root).
mkdir -m 0700 "$VH/mid" && chown "$V" "$VH/mid"
ln -s "$VH" "$SCR/via" && chown -h "$A" "$SCR/via"
run_v stage -q "$GRP/ds2" "$SCR/via/mid"
expect_eq "the victim's DEST through the attacker's symlink in the middle: rc" "$RC" 2
expect_contains "... named" "$ERR" "memcore: stage: $SCR/via: a symlink owned by $A"
expect_eq "... nothing written" "$(ls -A "$VH/mid")" ""
ETC=$TMP/etc
mkdir -m 0755 "$ETC" "$ETC/cron.d"
mkdir -m 0755 "$GRP/cron.d" && echo '* * * * * root touch /pwned' >"$GRP/cron.d/evil" && chown -R "$A" "$GRP/cron.d"
ln -s "$TMP" "$SCR/via2" && chown -h "$A" "$SCR/via2"
run_mc stage -q "$GRP/cron.d" "$SCR/via2/etc"
expect_eq "root's DEST through the attacker's symlink in the middle: rc" "$RC" 2
expect_contains "... named" "$ERR" "memcore: stage: $SCR/via2: a symlink owned by $A"
expect_eq "... nothing in the cron.d stand-in" "$(ls -A "$ETC/cron.d")" ""
mkdir -m 0700 "$TMP/root" "$TMP/rdest" && echo ROOT-SECRET >"$TMP/root/key" && chmod 0600 "$TMP/root/key"
run_mc stage -q "$SCR/via2/root/key" "$TMP/rdest"
expect_eq "root's SRC through the attacker's symlink in the middle: rc" "$RC" 2
expect_contains "... named" "$ERR" "memcore: stage: $SCR/via2: a symlink owned by $A"
expect_eq "... nothing read" "$(ls -A "$TMP/rdest")" ""
finish
