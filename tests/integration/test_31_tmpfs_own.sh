#!/bin/bash
# An OOM-killed step is told only its own tmpfs (cgroup/mc_tmpfs.h): two
# non-root users, each with a 0700 tmpfs of their own; user B's holds
# 64 MiB. User A's --mem=256M step fills A's tmpfs past the limit and is
# OOM-killed: the explanation names A's tmpfs (and /dev/shm, anyone's),
# never B's path, neither in "files in tmpfs" nor in the fix.
# guest: no: the rule reads mount roots, not a cgroup (the host's v1 run
#   proves it; test_35_cgroup_v2 covers the OOM explanation on v2)
. "$(dirname "$0")/lib.sh"

MC_SOCKETS=1 MC_CORES_PER_SOCKET=2 MC_THREADS_PER_CORE=1
MC_REAL_MEMORY=20000 MC_GPUS=2
MC_TASK_PLUGIN=task/cgroup,task/affinity MC_CONSTRAIN_RAM=yes
PROGS=$MEMCORE_BUILD/progs
for c in runuser useradd userdel; do
	command -v "$c" >/dev/null || mc_skip "no $c"
done
[ -x "$PROGS/mc_shm_writer" ] || mc_die "$PROGS/mc_shm_writer missing: make progs"
UA=mc31a UB=mc31b
for u in $UA $UB; do
	id "$u" >/dev/null 2>&1 && mc_die "user $u exists already (a run before did not clean up?)"
done
TA=/tmp/mc_test31_a_$$ TB=/tmp/mc_test31_b_$$
mc_at_exit "umount '$TA' '$TB' 2>/dev/null; rmdir '$TA' '$TB'; userdel $UA; userdel $UB"
useradd -M -N -s /bin/sh "$UA" && useradd -M -N -s /bin/sh "$UB" || mc_die "useradd failed"
mkdir -p "$TA" "$TB"
mount -t tmpfs -o "mode=0700,uid=$(id -u $UA),size=1g" mc_test31a "$TA"
mount -t tmpfs -o "mode=0700,uid=$(id -u $UB),size=1g" mc_test31b "$TB"
runuser -u "$UB" -- dd if=/dev/zero of="$TB/data" bs=1M count=64 status=none
mc_cluster_start
mc_small_policy
W=$MC_WORK/u31
mkdir -p "$W" && chmod 1777 "$W" && cp "$PROGS/mc_shm_writer" "$W/" && chmod 0755 "$W/mc_shm_writer"

mc_run runuser -u "$UA" -- srun --chdir="$W" -n1 --gpus=1 --mem=256M "$W/mc_shm_writer" "$TA/fill" 512
assert_ne 0 "$MC_RC" "A's 512 MiB into its own tmpfs under --mem=256M is OOM-killed"
assert_match "$MC_ERR" "was killed for memory" "explained"
assert_match "$MC_ERR" "files in tmpfs: [^;]*$TA [0-9.]+ MiB" "the explanation names A's own tmpfs"
assert_not_contains "$MC_ERR" "$TB" "B's tmpfs (64 MiB of B's) is never named to A"
assert_not_contains "$MC_ERR" "mc_test31_b" "... nor any part of its path"
mc_jobs_idle 30
