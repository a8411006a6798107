#!/bin/bash
# The data path at launch on a real Slurm (--dataset, mc_dataset.h):
#  - a dataset on local disk gets no note, with NetworkDataset=note or
#    refuse, through srun and sbatch, and the step runs;
#  - a dataset only root can read, named by the user nobody: the step runs,
#    gets no note, and no file in it is read (atime set back stays put);
#  - a bad --dataset is refused by srun before anything is queued;
#  - the HF_HOME layout is looked at when set;
#  - the note's staging command is `memcore stage PATH... SCRATCH/job_J`
#    (figures of an NFS path handed to a batch step in
#    MEMCORE_DATASET_FACTS by an sbatch without the plugin);
#  - memcore stage in a batch job: a plain progress line per file in the
#    job's output, the summary, and the staged job_J removed at the end;
#  - the job prolog makes LocalScratch/job_J for the job; the epilog takes
#    it away (a tree with a symlink out of it: the target survives; a
#    job_J the job made a symlink is removed, its target untouched), the
#    tree emptied by a detached sweeper that says each removal in
#    slurmd's log (test_31 and test_32 have the hostile cases).
# No network filesystem on this host (no nfsd module in its kernel): the
# note's text on NFS/Lustre is the unit test's (tests/unit/test_dataset.c),
# and test_29_nfs_dataset shows it all on a real NFS mount in the bookworm
# guest (tests/vm).
# About 20 s.
. "$(dirname "$0")/lib.sh"

MC_SOCKETS=1 MC_CORES_PER_SOCKET=2 MC_THREADS_PER_CORE=1
MC_REAL_MEMORY=20000 MC_GPUS=2
mc_cluster_start
# memcore.conf after the start (the start makes a fresh work dir)
mc_small_policy
CONF=$MC_CONF_DIR/memcore.conf
# A scratch of the test's own: the epilog removes job_J under it.
mc_local_scratch
# What is under LocalScratch but memcore's own .memcore-removing, and in it.
scratch_left() { ls -A "$SCR" | grep -v '^\.memcore-removing$'; ls -A "$SCR/.memcore-removing" 2>/dev/null; }

D=$(mktemp -d /tmp/mc-ds.XXXXXX)
chmod 0755 "$D"
mc_at_exit "rm -rf '$D'"
mkdir -p "$D/ds" "$D/hf/datasets" "$D/secret"
for i in 1 2 3; do head -c 1M /dev/zero >"$D/ds/shard$i.arrow"; done
chmod -R a+rX "$D/ds" "$D/hf"
head -c 1M /dev/zero >"$D/secret/data.arrow"
chmod 0700 "$D/secret"
chmod 0600 "$D/secret/data.arrow"
touch -a -d '3 days ago' "$D/secret/data.arrow"
AT0=$(stat -c %X "$D/secret/data.arrow")

mc_run srun -n1 --gpus=1 --mem=256M --memcore=explain --dataset="$D/ds" echo local-ran
assert_rc 0 "a step with a dataset on local disk runs"
assert_contains "$MC_OUT" "local-ran" "... its program ran"
assert_not_contains "$MC_ERR" "is on " "... and gets no network-filesystem note"

echo "NetworkDataset=refuse" >>"$CONF"
mc_run srun -n1 --gpus=1 --mem=256M --dataset="$D/ds" echo refuse-ran
assert_rc 0 "NetworkDataset=refuse: a local dataset is not refused"
jid=$(mc_sbatch -n1 --gpus=1 --mem=256M --dataset="$D/ds" --wrap "echo batch-ran")
mc_wait_job "$jid" >/dev/null
assert_eq COMPLETED "$(mc_job_state "$jid")" "sbatch --dataset on local disk: the batch step runs"

mc_run runuser -u nobody -- srun --chdir=/tmp -n1 --gpus=1 --mem=256M --memcore=explain --dataset="$D/secret" echo nobody-ran
assert_rc 0 "as nobody: a dataset only root can read does not stop the step"
assert_not_contains "$MC_ERR" "is on " "... no note for a path the user cannot read"
assert_eq "$AT0" "$(stat -c %X "$D/secret/data.arrow")" "the root-only file was never read (atime unchanged)"

mc_run srun -n1 --gpus=1 --mem=256M --dataset="$D/ds,,x" true
assert_ne 0 "$MC_RC" "an empty path in --dataset is refused"
assert_contains "$MC_ERR" "--dataset=$D/ds,,x: expected PATH[,PATH...] (no empty path)" "... by srun, naming the value"

mc_run env HF_HOME="$D/hf" srun -n1 --gpus=1 --mem=256M bash -c 'echo "facts=$MEMCORE_DATASET_FACTS"'
assert_rc 0 "HF_HOME set: the step runs"
assert_contains "$MC_OUT" "from=2,path=$D/hf/datasets" "... and its datasets cache was looked at"

# The note on a network filesystem: no NFS here, so the figures srun or
# sbatch would have measured on one are handed to a batch step in
# MEMCORE_DATASET_FACTS by an sbatch without the plugin (which would drop
# a variable it did not set itself).
FACTS="fs=6969,bytes=3145728,files=3,partial=0,err=0,from=0,path=$D/ds"
sed -i '/^NetworkDataset=/d' "$CONF"
BARE=$MC_WORK/etc-bare
mkdir -p "$BARE" && : >"$BARE/plugstack.conf"
sed "s|^PlugStackConfig=.*|PlugStackConfig=$BARE/plugstack.conf|" "$MC_CONF_DIR/slurm.conf" >"$BARE/slurm.conf"
njob=$(SLURM_CONF=$BARE/slurm.conf MEMCORE_DATASET_FACTS=$FACTS mc_sbatch -n1 --gpus=1 --mem=256M --wrap "echo nfs-ran")
assert_eq COMPLETED "$(mc_wait_job "$njob")" "a batch step with NFS figures runs (NetworkDataset=note)"
assert_file_contains "$(mc_job_out "$njob")" "memcore: dataset $D/ds (--dataset) is on NFS: 3 MiB in 3 files" "... the note names the dataset"
assert_file_contains "$(mc_job_out "$njob")" "memcore:   stage it first: memcore stage $D/ds $SCR/job_$njob (made for you, mode 0700, removed at the job's end)" "... and its staging command is memcore stage into LocalScratch/job_J"

# memcore stage in a batch job: plain progress lines in the job's output
# (no terminal; --progress-interval=0, a line per file), the summary, and
# LocalScratch/job_J gone at the job's end with every entry counted.
mkdir -p "$D/many/a" "$D/many/b"
for i in $(seq 1 20); do head -c 65536 /dev/urandom >"$D/many/a/f$i"; head -c 1000 /dev/urandom >"$D/many/b/g$i"; done
jid=$(mc_sbatch -n1 --gpus=1 --mem=256M -o "$MC_JOB_DIR/stage-%j.out" \
	--wrap "$MEMCORE_BUILD/memcore stage --progress-interval=0 $D/many $SCR/job_\$SLURM_JOB_ID && find $SCR/job_\$SLURM_JOB_ID | wc -l | sed 's/^/entries=/'")
assert_eq COMPLETED "$(mc_wait_job "$jid")" "a batch job that runs memcore stage completes"
out=$(cat "$MC_JOB_DIR/stage-$jid.out")
assert_eq 40 "$(grep -c '^memcore: stage: .* of .* (.*%), [0-9]* of 40 files, [0-9.]* MiB/s, [0-9.]* s, ETA .*$' <<<"$out")" \
	"... its output has a plain progress line per file (no terminal)"
assert_contains "$(grep ' of 40 files' <<<"$out" | tail -n 1)" "(100%), 40 of 40 files" "... the last at 100%"
assert_contains "$out" "memcore: stage: 40 files copied, 0 skipped (already there), 1.27 MiB ($((20 * 65536 + 20 * 1000)) bytes)" "... and the summary"
entries=$(sed -n 's/^entries=//p' <<<"$out")
mc_wait_until 20 test -z "$(scratch_left)"
assert_eq "" "$(scratch_left)" "the epilog removed the staged $SCR/job_$jid"
mc_wait_until 10 grep -q "memcore: job $jid: removed $SCR/job_$jid" "$MC_LOG_DIR/slurmd.log"
assert_file_contains "$MC_LOG_DIR/slurmd.log" "memcore: job $jid: removed $SCR/job_$jid ($entries entries, " \
	"... every entry counted ($entries, find in the job)"

# The epilog: job_J with files, a nested directory and a symlink out of
# it goes at the job's end; the symlink's target stays.
mkdir -p "$D/keep" && echo kept >"$D/keep/file"
jid=$(mc_sbatch -n1 --gpus=1 --mem=256M --wrap "S=$SCR/job_\$SLURM_JOB_ID; mkdir -p \$S/sub && echo x >\$S/x && echo y >\$S/sub/y && ln -s $D/keep \$S/sub/out")
assert_eq COMPLETED "$(mc_wait_job "$jid")" "a job that fills LocalScratch/job_J completes"
mc_wait_until 20 test -z "$(scratch_left)"
assert_eq "" "$(scratch_left)" "the epilog removed $SCR/job_$jid (nothing else under LocalScratch)"
assert_eq kept "$(cat "$D/keep/file")" "... without following the symlink out of it"
mc_wait_until 10 grep -q "memcore: job $jid: removed $SCR/job_$jid (5 entries, " "$MC_LOG_DIR/slurmd.log"
assert_file_contains "$MC_LOG_DIR/slurmd.log" "memcore: job $jid: removed $SCR/job_$jid (5 entries, " "... said in slurmd's log, with the entries counted"
# A job_J the job made a symlink is taken away, never followed.
jid=$(mc_sbatch -n1 --gpus=1 --mem=256M --wrap "rmdir $SCR/job_\$SLURM_JOB_ID && ln -s $D/keep $SCR/job_\$SLURM_JOB_ID")
assert_eq COMPLETED "$(mc_wait_job "$jid")" "a job that makes LocalScratch/job_J a symlink completes"
mc_wait_until 20 grep -q "memcore: job $jid: removed $SCR/job_$jid (1 entries, " "$MC_LOG_DIR/slurmd.log"
assert_file_contains "$MC_LOG_DIR/slurmd.log" "memcore: job $jid: removed $SCR/job_$jid (1 entries, " "the symlink job_J is removed itself"
assert_eq "" "$(scratch_left)" "... nothing left under LocalScratch"
assert_eq kept "$(cat "$D/keep/file")" "... its target untouched"
assert_node_idle "the node stays up (the epilog did not fail)"
assert_eq "" "$(squeue -h -t PENDING,RUNNING 2>/dev/null)" "nothing queued"
