#!/bin/bash
# guest: bookworm
# The data path at launch on a real network filesystem (test_28
# has the rest, with NFS figures handed in): NFSv4 over loopback, the
# kernel's nfsd serving a directory of the guest's disk, on the real Slurm,
# the jobs the user nobody's, LocalScratch a tmpfs of its own:
#  - NetworkDataset=refuse: a GPU step with --dataset on the mount is
#    refused: srun exits 1, its stderr has the note: "is on NFS", the size
#    and count of its files (summed here with find on the server's side),
#    LocalScratch's free space (df) and the exact `memcore stage` command,
#    with the job id of the refused step's job, then the refusal;
#  - NetworkDataset=note: the same step with its dataset on local disk
#    runs and gets no note (its figures name the filesystem stat -f does);
#    a batch job with the dataset on NFS gets the note and runs. A second
#    path in its list that only root can read (0700, root's;
#    no_root_squash: root could) is read as the user: EACCES in
#    MEMCORE_DATASET_FACTS, in no line of the note, not in the size, its
#    directory never listed (atime kept on the server; root's own listing
#    at the end moves it, so that check can fail). The job runs the
#    staging command of its own note, as given, as the user: the files
#    arrive in LocalScratch/job_J (checksums against the server's; job_J
#    made for nobody by the prolog), and the epilog takes job_J away at
#    the job's end, a detached sweeper empties it;
#  - the server stopped (a hard mount: statfs there waits for ever): srun
#    gives up on the path after the walk's bound + 1 s and the step runs,
#    no note, the path's figures ETIMEDOUT (it hung srun before).
# About 30 s in the bookworm guest alone (four jobs; 80-115 s when the
# host was loaded by other guests and builds).
# guest: why: a real NFS mount over loopback: the host kernel has no nfs module
. "$(dirname "$0")/lib.sh"

why=$(mc_nfs_usable) || mc_skip "no NFS over loopback here: $why (the bookworm guest of tests/vm has it: bash tests/vm/check.sh bookworm -- test_29)"

# A size as the note prints it (mc_fmt_bytes): B, KiB, MiB or GiB, two
# decimals (rounded half up) unless whole.
fmt_bytes() {
	local b=$1 u=0 div=1 h units=(B KiB MiB GiB)
	while [ $u -lt 3 ] && [ $((b / div)) -ge 1024 ]; do div=$((div * 1024)) u=$((u + 1)); done
	if [ $((b % div)) = 0 ]; then
		printf '%s %s\n' $((b / div)) "${units[u]}"
	else
		h=$(((b * 100 + div / 2) / div))
		printf '%d.%02d %s\n' $((h / 100)) $((h % 100)) "${units[u]}"
	fi
}

MC_SOCKETS=1 MC_CORES_PER_SOCKET=2 MC_THREADS_PER_CORE=1
MC_REAL_MEMORY=20000 MC_GPUS=2
mc_cluster_start
# The NFS server first: its 10 s grace period passes while slurmd restarts.
EXP=$MC_WORK/export NFS=$MC_WORK/nfs
mc_nfs_mount "$EXP" "$NFS"
assert_eq "6969 nfs" "$(stat -f -c '%t %T' "$NFS")" "the mount is NFS (statfs NFS_SUPER_MAGIC)"
mc_small_policy
CONF=$MC_CONF_DIR/memcore.conf
# LocalScratch: a filesystem of its own, so that its free space stays
# what df says until the step reads it.
LS=$MC_WORK/lscratch
mkdir -p "$LS"
mount -t tmpfs -o size=50000k,mode=1777 mc-lscratch "$LS" || mc_die "cannot mount a tmpfs on $LS"
mc_at_exit "umount -l '$LS'"
echo "LocalScratch=$LS" >>"$CONF"
mc_restart_slurmd

# The dataset, written on the server's side, the user's; sizes that print
# with decimals. A root-only directory beside it.
mkdir -p "$EXP/ds/sub" "$EXP/secret"
n=0
for s in 700001 1048576 333333 1500000 12345; do
	head -c "$s" /dev/urandom >"$EXP/ds/shard$n.arrow"; n=$((n + 1))
done
head -c 98765 /dev/urandom >"$EXP/ds/sub/index.json"
chown -R nobody: "$EXP/ds"
head -c 1M /dev/urandom >"$EXP/secret/data.arrow"
chmod 0700 "$EXP/secret"
touch -a -d '3 days ago' "$EXP/secret"
AT0=$(stat -c %X "$EXP/secret")
BYTES=$(find "$EXP/ds" -type f -printf '%s\n' | awk '{ s += $1 } END { print s }')
FILES=$(find "$EXP/ds" -type f | wc -l)
SUMS=$(cd "$EXP/ds" && find . -type f -exec md5sum {} + | sort -k2)
# The same files on local disk.
cp -a "$EXP/ds" "$MC_WORK/local-ds"
U=$MC_WORK/user
mkdir -p "$U" && chown nobody: "$U"

# --- NetworkDataset=refuse: the step is refused, with the note's lines.
echo "NetworkDataset=refuse" >>"$CONF"
FREE=$(df -B1 --output=avail "$LS" | tail -n 1); FREE=${FREE// /}
mc_run runuser -u nobody -- srun --chdir=/tmp -J mc-nfs-refused -n1 --gpus=1 --mem=256M --dataset="$NFS/ds" echo must-not-run
assert_eq 1 "$MC_RC" "NetworkDataset=refuse: a GPU step with its dataset on NFS is refused (srun exits 1)"
assert_not_contains "$MC_OUT" must-not-run "... its program never ran"
RJ=$(grep -o "$LS/job_[0-9]*" <<<"$MC_ERR" | head -n 1); RJ=${RJ##*_}
assert_eq mc-nfs-refused "$(mc_job_field "${RJ:-0}" JobName)" "the job_J in its lines is the refused step's job ($RJ)"
mc_log "srun's stderr (job $RJ):"; printf '%s\n' "$MC_ERR" | grep '^memcore:' >&2
assert_contains "$MC_ERR" "memcore: dataset $NFS/ds (--dataset) is on NFS: $(fmt_bytes "$BYTES") in $FILES files" \
	"... its stderr names the dataset, NFS, its size ($BYTES bytes, find) and its files"
assert_contains "$MC_ERR" "memcore:   local scratch $LS: $(fmt_bytes "$FREE") free, the dataset is $(fmt_bytes "$BYTES") (it fits)" \
	"... LocalScratch's free space ($FREE bytes, df)"
assert_contains "$MC_ERR" "memcore:   stage it first: memcore stage $NFS/ds $LS/job_$RJ (made for you, mode 0700, removed at the job's end)" \
	"... the staging command"
assert_contains "$MC_ERR" "memcore: refused (NetworkDataset=refuse): the dataset fits on local scratch; stage it and read it from $LS/job_$RJ" \
	"... and the refusal"
sed -i '/^NetworkDataset=/d' "$CONF"

# --- NetworkDataset=note (the default): the same step with the dataset
# on local disk gets no note.
mc_run runuser -u nobody -- srun --chdir=/tmp -n1 --gpus=1 --mem=256M --dataset="$MC_WORK/local-ds" \
	bash -c 'echo "facts=$MEMCORE_DATASET_FACTS"'
assert_rc 0 "NetworkDataset=note: the same step with its dataset on local disk runs"
assert_contains "$MC_OUT" "facts=fs=$(stat -f -c %t "$MC_WORK/local-ds"),bytes=0,files=0,partial=0,err=0,from=0,path=$MC_WORK/local-ds" \
	"... its filesystem is $(stat -f -c %T "$MC_WORK/local-ds") (stat -f), not walked"
assert_not_contains "$MC_ERR" "memcore: dataset" "... and it gets no note"
assert_not_contains "$MC_ERR" "memcore stage" "... nor a staging command"

# A batch job runs the staging command its own note gave, as given, a
# root-only path in its list.
cat >"$U/stage.sh" <<'EOS'
#!/bin/bash
# $1: this job's output file (the note is in it before this runs); $2: memcore's directory
echo "facts=$MEMCORE_DATASET_FACTS"
cmd=$(sed -n "s/^memcore:   stage it first: \(memcore stage .*\) (made for you, mode 0700, removed at the job's end)\$/\1/p" "$1")
echo "cmd=$cmd"
[ -n "$cmd" ] || exit 3
PATH=$2:$PATH
$cmd || exit 4
dest=${cmd##* }
echo "entries=$(find "$dest" | wc -l)"
echo "owners=$(find "$dest" -printf '%u\n' | sort -u | tr '\n' ' ')"
(cd "$dest/ds" && find . -type f -exec md5sum {} + | sort -k2) | sed 's/^/sum /'
EOS
chmod 0755 "$U/stage.sh"
FREE=$(df -B1 --output=avail "$LS" | tail -n 1); FREE=${FREE// /}
SJ=$(cd "$U" && runuser -u nobody -- sbatch --parsable -n1 --gpus=1 --mem=256M -o "$U/stage-%j.out" \
	--dataset="$NFS/ds,$NFS/secret" --wrap "$U/stage.sh $U/stage-\$SLURM_JOB_ID.out $MEMCORE_BUILD")
assert_match "$SJ" '^[0-9]+$' "a batch job with --dataset on NFS is submitted as nobody"
assert_eq COMPLETED "$(mc_wait_job "$SJ")" "... a batch job with its dataset on NFS runs and completes"
OUT=$(cat "$U/stage-$SJ.out" 2>/dev/null)
mc_log "batch job $SJ's output:"; printf '%s\n' "$OUT" | grep -v '^sum ' >&2
NOTE=$(grep '^memcore:' <<<"$OUT" | grep -v '^memcore: stage: ')
assert_contains "$NOTE" "memcore: dataset $NFS/ds (--dataset) is on NFS: $(fmt_bytes "$BYTES") in $FILES files" \
	"its note names the dataset, NFS, its size and its files"
assert_contains "$NOTE" "memcore:   local scratch $LS: $(fmt_bytes "$FREE") free, the dataset is $(fmt_bytes "$BYTES") (it fits)" \
	"... LocalScratch's free space ($FREE bytes, df)"
assert_contains "$OUT" "cmd=memcore stage $NFS/ds $LS/job_$SJ" "... and the staging command into $LS/job_$SJ"
assert_contains "$OUT" "facts=fs=6969,bytes=$BYTES,files=$FILES,partial=0,err=0,from=0,path=$NFS/ds;" \
	"the figures sbatch measured as the user on NFS"
assert_contains "$OUT" "fs=6969,bytes=0,files=0,partial=0,err=13,from=0,path=$NFS/secret" \
	"the root-only path on NFS: EACCES, read as the user (root could read it: no_root_squash)"
assert_not_contains "$NOTE" "$NFS/secret" "... in no line of the note nor in the staging command"
assert_eq "$AT0" "$(stat -c %X "$EXP/secret")" "... its directory never listed (atime on the server unchanged)"
assert_contains "$OUT" "memcore: stage: $FILES files copied, 0 skipped (already there), $(fmt_bytes "$BYTES") ($BYTES bytes)" \
	"memcore stage copied every file from NFS, as the user"
assert_eq "$SUMS" "$(sed -n 's/^sum //p' <<<"$OUT")" "the staged files are the server's (md5sum)"
assert_contains "$OUT" "owners=nobody " "... and the user's"
ENTRIES=$(sed -n 's/^entries=//p' <<<"$OUT")
mc_wait_until 20 test ! -e "$LS/job_$SJ"
mc_wait_until 20 test -z "$(ls -A "$LS/.memcore-removing" 2>/dev/null)"
assert_eq "" "$(ls -A "$LS" | grep -v '^\.memcore-removing$'; ls -A "$LS/.memcore-removing" 2>/dev/null)" "the epilog removed $LS/job_$SJ at the job's end (nothing else under LocalScratch)"
mc_wait_until 10 grep -q "memcore: job $SJ: removed $LS/job_$SJ" "$MC_LOG_DIR/slurmd.log"
assert_file_contains "$MC_LOG_DIR/slurmd.log" "memcore: job $SJ: removed $LS/job_$SJ ($ENTRIES entries, " \
	"... said in slurmd's log, every entry counted ($ENTRIES, find in the job)"

# The atime check above can fail: root's listing over NFS moves it.
ls "$NFS/secret" >/dev/null
assert_ne "$AT0" "$(stat -c %X "$EXP/secret")" "(control) root's listing of the root-only directory over NFS moves its atime"

# --- The server gone (a hard mount: every statfs there waits for ever):
# srun waits MC_DATASET_WALK_MS + MC_DATASET_ANSWER_MS for it, then the
# step runs without a note, the path's figures ETIMEDOUT.
rpc.nfsd 0
t0=$SECONDS
mc_run timeout 60 runuser -u nobody -- srun --chdir=/tmp -n1 --gpus=1 --mem=256M --dataset="$NFS/ds" \
	bash -c 'echo "facts=$MEMCORE_DATASET_FACTS"'
assert_rc 0 "the NFS server gone: a step with --dataset there still runs ($((SECONDS - t0)) s; srun did not hang in statfs)"
assert_contains "$MC_OUT" "facts=fs=0,bytes=0,files=0,partial=0,err=110,from=0,path=$NFS/ds" \
	"... the path unanswered: ETIMEDOUT in its figures"
assert_not_contains "$MC_ERR" "memcore: dataset" "... and no note"
# (the server is not coming back: detach the mount, abort what waits on
# it; -i -c: no umount.nfs helper and no realpath, which would stat the
# mount point and wait on the server too)
# umount's status can be non-zero although it detached the mount (seen
# once under load: the cleanup's umount then said "not mounted"): the
# mount table, which reads nothing of the mount point, is the answer.
timeout 20 umount -i -c -f -l "$NFS"
mc_wait_until 20 eval '! grep -qF " $NFS " /proc/mounts' && MC_NFS_MOUNTED=0
assert_eq 0 "${MC_NFS_MOUNTED:-1}" "the dead mount is detached (umount -i -c -f -l; gone from /proc/mounts)"
assert_eq "" "$(squeue -h -t PENDING,RUNNING 2>/dev/null)" "nothing queued"
