#!/bin/bash
# memcore stage in a real batch job, between two local users (issue 37):
# the victim's job stages a group dataset into LocalScratch/job_J (made for
# the job's user, 0700, by the job prolog); between memcore's plan and its copy (the LD_PRELOAD hook of
# tests/cli/stage_hook.c, built here, never shipped: the first
# pthread_create waits for this test) the attacker swaps their `sub` in the
# dataset for a symlink to the victim's ~/.ssh. The stage stops naming the
# path ("changed since it was read"), no byte of the victim's key is in
# job_J, and the epilog still takes job_J away and its sweeper empties it. tests/cli/test_stage_users.sh
# holds the DEST side and root's; this is the same on a real node.
# About 15 s.
. "$(dirname "$0")/lib.sh"

MC_SOCKETS=1 MC_CORES_PER_SOCKET=2 MC_THREADS_PER_CORE=1
MC_REAL_MEMORY=20000 MC_GPUS=2
mc_cluster_start
mc_small_policy
mc_local_scratch

A=mcatk$$ V=mcvic$$ G=mcgrp$$
W=$(mktemp -d /tmp/mc-users.XXXXXX)
chmod 0755 "$W"
mc_at_exit "userdel -r '$A' >/dev/null 2>&1; userdel -r '$V' >/dev/null 2>&1; groupdel '$G' >/dev/null 2>&1; rm -rf '$W'"
groupadd "$G"
useradd -M -d "$W/home-$A" -s /bin/sh -G "$G" "$A"
useradd -m -d "$W/home-$V" -s /bin/sh -G "$G" "$V"
VH=$W/home-$V
mkdir -m 0700 "$VH/.ssh" && echo VICTIM-SECRET >"$VH/.ssh/id_ed25519" && chmod 0600 "$VH/.ssh/id_ed25519"
chown -R "$V:$V" "$VH/.ssh"
cc -shared -fPIC -o "$W/hook.so" "$MC_TOP/tests/cli/stage_hook.c" -ldl
H=$W/h
mkdir -m 0777 "$H"
printf '#!/bin/sh\n: >%s/at\ni=0\nwhile [ ! -e %s/go ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done\n' \
	"$H" "$H" >"$W/hook.sh"
chmod 0755 "$W/hook.so" "$W/hook.sh"
# The group's dataset: the attacker's sub/ in it, with a file named as the
# victim's key.
DS=$W/grp/ds
mkdir -p -m 2775 "$DS" && chown "$V:$G" "$W/grp" "$DS" && chmod 2775 "$W/grp"
runuser -u "$A" -- sh -c "mkdir -m 0777 '$DS/sub' && echo decoy >'$DS/sub/id_ed25519' && chmod 0644 '$DS/sub/id_ed25519'"
OUT=$W/out
mkdir -m 0700 "$OUT" && chown "$V" "$OUT"

jid=$(cd "$OUT" && runuser -u "$V" -- sbatch --parsable -n1 --gpus=1 --mem=256M -o "$OUT/stage-%j.out" --wrap "
S=$SCR/job_\$SLURM_JOB_ID
env LD_PRELOAD=$W/hook.so MC_TEST_HOOK=$W/hook.sh $MEMCORE_BUILD/memcore stage -q -j 1 $DS \$S
echo rc=\$?
stat -c mode=%a \$S
grep -rl VICTIM-SECRET \$S | sed 's/^/leak=/'
true")
assert_ne "" "$jid" "the victim's staging job is submitted"
mc_wait_until 30 test -e "$H/at"
assert_eq yes "$([ -e "$H/at" ] && echo yes)" "the stage reached the hook between its plan and its copy"
runuser -u "$A" -- sh -c "mv '$DS/sub' '$DS/sub.old' && ln -s '$VH/.ssh' '$DS/sub'"
assert_eq "$VH/.ssh" "$(readlink "$DS/sub")" "the attacker swapped sub for a symlink to the victim's ~/.ssh"
: >"$H/go"
assert_eq COMPLETED "$(mc_wait_job "$jid")" "the staging job completes"
out=$(cat "$OUT/stage-$jid.out")
assert_contains "$out" "rc=1" "memcore stage exits 1 (the copy failed)"
assert_contains "$out" "memcore: stage: $DS/sub: changed since it was read" "... naming the swapped path"
assert_contains "$out" "mode=700" "job_J is the victim's alone (0700)"
assert_not_contains "$out" "leak=" "no byte of the victim's key in job_J"
mc_wait_until 20 eval '[ -z "$(ls -A "$SCR" | grep -vx .memcore-removing)" ] && [ -z "$(ls -A "$SCR/.memcore-removing" 2>/dev/null)" ]'
assert_eq "" "$(ls -A "$SCR" | grep -vx .memcore-removing)" "the epilog took job_J away"
assert_eq "" "$(ls -A "$SCR/.memcore-removing" 2>/dev/null)" "... and its sweeper emptied it"
