#!/bin/bash
# The epilog never waits on a user's file count (issue 37, item 6):
# PrologEpilogTimeout=4, a job of a throwaway non-root user leaves 900,000
# empty files in 300 directories in its LocalScratch/job_J
# (progs/mc_many_files). At the job's end the node is back to IDLE within
# seconds (not COMPLETING while the files go, not DRAIN, no "Epilog
# error"): the epilog only renames job_J into .memcore-removing; the
# detached sweeper removes the tree afterwards (waited for, 300 s at
# most) and says how long it took. Slurm 22.05 gives the SPANK epilog
# max(PrologEpilogTimeout, 120) s before it kills it and drains the node;
# the removal in the epilog (before) held the node COMPLETING for all of
# it (10 s here for 900,000 files on ext4, minutes on a loaded disk).
# Prints the creation and removal times. About 60 s on this 2-core host
# (creation 17 s, removal 10-20 s).
# timeout: 420
. "$(dirname "$0")/lib.sh"

FILES=${MC_MANY_FILES:-900000}
MC_SOCKETS=1 MC_CORES_PER_SOCKET=2 MC_THREADS_PER_CORE=1
MC_REAL_MEMORY=20000 MC_GPUS=2
MC_SLURM_CONF_LINES="PrologEpilogTimeout=4"
mc_cluster_start
mc_small_policy
CONF=$MC_CONF_DIR/memcore.conf
mc_local_scratch

U=mcmany$$
useradd -M -N -s /bin/bash "$U" || mc_die "useradd $U failed"
mc_at_exit "userdel '$U'"
OUTD=$(mktemp -d /tmp/mc-out.XXXXXX)
chmod 1777 "$OUTD"
mc_at_exit "rm -rf '$OUTD'"
cp "$MEMCORE_BUILD/progs/mc_many_files" "$OUTD/" || mc_die "make progs first"
chmod 0755 "$OUTD/mc_many_files"

jid=$(cd "$OUTD" && runuser -u "$U" -- sbatch --parsable -o "$OUTD/%j.out" -n1 --gpus=1 --mem=256M \
	--wrap "date +t0=%s.%N; mkdir -p $SCR/job_\$SLURM_JOB_ID; $OUTD/mc_many_files $SCR/job_\$SLURM_JOB_ID $FILES 300; date +%s.%N >$OUTD/end-\$SLURM_JOB_ID")
assert_match "$jid" '^[0-9]+$' "a job of $U leaving $FILES files in its job_J is submitted"
mc_wait_until 280 test -s "$OUTD/end-$jid"
end=$(cat "$OUTD/end-$jid")
state=$(mc_node_state_settled 60)
# seconds from A to B, two decimals
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f\n", b - a }'; }
idle_s=$(secs "$end" "$(date +%s.%N)")
mc_log "$(grep '^made' "$OUTD/$jid.out") in $(secs "$(sed -n 's/^t0=//p' "$OUTD/$jid.out")" "$end") s; the node was $state $idle_s s after the job's script ended"
assert_eq IDLE "$state" "the node is back to IDLE at the job's end (not DRAIN)"
assert_match "$idle_s" '^[0-4]?\.' "... within 5 s of the script's end (the epilog did not wait for the files): $idle_s s"
assert_eq COMPLETED "$(mc_wait_job "$jid" 10)" "the job COMPLETED"
assert_not_contains "$(cat "$MC_LOG_DIR/slurmd.log" "$MC_LOG_DIR/slurmctld.log")" "Epilog error" "no 'Epilog error'"
assert_eq "" "$(mc_node_field Reason)" "... and no reason set on the node"
assert_eq "" "$(ls -A "$SCR" | grep -v '^\.memcore-removing$')" "job_$jid out of LocalScratch at once"
t0=$SECONDS
mc_wait_until 300 grep -q "memcore: job $jid: removed $SCR/job_$jid (" "$MC_LOG_DIR/slurmd.log"
line=$(grep -o "memcore: job $jid: removed $SCR/job_$jid (.*" "$MC_LOG_DIR/slurmd.log")
mc_log "the sweeper: $line (seen $((SECONDS - t0)) s after the node was IDLE)"
assert_contains "$line" "($((FILES + 301)) entries, " "the detached sweeper removed every entry ($FILES files, 300 directories, job_J) and said so with its time"
assert_eq "" "$(ls -A "$SCR/.memcore-removing")" "... nothing left in .memcore-removing"
assert_node_idle "the node stays IDLE"
