#!/bin/bash
# LocalScratch/job_J belongs to the job (issue 37, items 1, 7 and 8), on
# the real Slurm with two throwaway non-root users (useradd here, userdel
# at exit), LocalScratch a shared 1777 directory as /scratch usually is:
#  - item 1, squatting: the attacker pre-creates job_K (0777, a file
#    planted in it) for the next job id; the victim's job gets a job_K the
#    prolog made: the victim's, 0700, empty; the attacker can neither list,
#    read nor write it; slurmd's log says the squat was moved away; the
#    squat and job_K go at the end (the detached sweeper);
#  - item 8, a bind mount (root's) of a directory of the same filesystem
#    under job_J: the epilog does not cross it (mount ids, not st_dev):
#    the bind's source keeps its files, slurmd's log says what was left;
#    the next job's sweep removes the leftover once it is unmounted;
#  - item 7, LocalScratch under a directory a user owns: turned off with
#    its reason in slurmd's log (at start and for each job), GPU steps
#    still run, and when that user points LocalScratch elsewhere with a
#    symlink the epilog removes nothing there.
# About 40 s.
. "$(dirname "$0")/lib.sh"

MC_SOCKETS=1 MC_CORES_PER_SOCKET=2 MC_THREADS_PER_CORE=1
MC_REAL_MEMORY=20000 MC_GPUS=2
mc_cluster_start
mc_small_policy
CONF=$MC_CONF_DIR/memcore.conf
mc_local_scratch

# Two users of our own (short unique names), their jobs' files in a
# directory they can write.
A=mcatk$$ V=mcvic$$
useradd -M -N -s /bin/bash "$A" || mc_die "useradd $A failed"
mc_at_exit "userdel '$A'"
useradd -M -N -s /bin/bash "$V" || mc_die "useradd $V failed"
mc_at_exit "userdel '$V'"
OUTD=$(mktemp -d /tmp/mc-out.XXXXXX)
chmod 1777 "$OUTD"
# at exit (mc_local_scratch's: the bind mount if an assertion left it,
# then the scratch)
mc_at_exit "rm -rf '$OUTD'"
AUID=$(id -u "$A")
as() { local u=$1; shift; (cd "$OUTD" && timeout -k 5 "$MC_CMD_TIMEOUT" runuser -u "$u" -- "$@" </dev/null); }
sbatch_as() { local u=$1; shift; as "$u" sbatch --parsable -o "$OUTD/%j.out" -n1 --gpus=1 --mem=256M "$@"; }
trash_empty() { [ -z "$(ls -A "$SCR/.memcore-removing" 2>/dev/null)" ]; }

# --- item 1: the next job id squatted.
held=$(mc_sbatch -H -n1 --wrap true)
scancel "$held"
K=$((held + 1))
as "$A" bash -c "mkdir -m 0777 $SCR/job_$K && echo planted >$SCR/job_$K/planted"
assert_eq "$A 777" "$(stat -c '%U %a' "$SCR/job_$K")" "the attacker squats $SCR/job_$K (0777) before job $K exists"
vj=$(sbatch_as "$V" --wrap "D=$SCR/job_\$SLURM_JOB_ID; echo secret >\$D/data && echo \"ls=\$(ls -A \$D | tr '\n' ' ')\"; touch $OUTD/v-ready-\$SLURM_JOB_ID; sleep 3")
assert_eq "$K" "$vj" "the victim's job is job $K"
mc_wait_until 30 test -e "$OUTD/v-ready-$K"
assert_eq "$V 700 directory" "$(stat -c '%U %a %F' "$SCR/job_$K")" "while it runs, $SCR/job_$K is the victim's, 0700, a directory the prolog made"
as "$A" ls "$SCR/job_$K" >/dev/null 2>&1
assert_ne 0 "$?" "the attacker cannot list it"
as "$A" cat "$SCR/job_$K/data" >/dev/null 2>&1
assert_ne 0 "$?" "... nor read the victim's file"
as "$A" touch "$SCR/job_$K/x" 2>/dev/null
assert_ne 0 "$?" "... nor write in it"
assert_eq COMPLETED "$(mc_wait_job "$vj")" "the victim's job completes"
assert_contains "$(cat "$OUTD/$vj.out")" "ls=data " "... its job_$K held only its own file (the squat was not adopted)"
assert_file_contains "$MC_LOG_DIR/slurmd.log" "memcore: job $K: $SCR/job_$K was there already (a directory of uid $AUID, mode 0777): moved away, not used" \
	"slurmd's log says the squat was moved away"
mc_wait_until 20 test ! -e "$SCR/job_$K"
assert_eq "" "$(ls -A "$SCR" | grep -v '^\.memcore-removing$')" "job_$K gone at the job's end"
mc_wait_until 20 trash_empty
assert_eq "" "$(ls -A "$SCR/.memcore-removing")" "... the squat and job_$K swept from .memcore-removing"
assert_eq "root 700" "$(stat -c '%U %a' "$SCR/.memcore-removing")" ".memcore-removing is root's, 0700"
mc_wait_until 10 grep -q "memcore: job $K: removed $SCR/job_$K (" "$MC_LOG_DIR/slurmd.log"
assert_file_contains "$MC_LOG_DIR/slurmd.log" "memcore: job $K: removed $SCR/job_$K (2 entries, " "the sweep of job_$K is said, entries counted"
assert_file_contains "$MC_LOG_DIR/slurmd.log" "memcore: job $K: removed what stood at $SCR/job_$K before the job (2 entries, " "... and the squat's"

# --- item 8: a bind mount of the same filesystem under job_J.
SRC=$(mktemp -d /tmp/mc-bindsrc.XXXXXX)
mc_at_exit "rm -rf '$SRC'"
echo precious >"$SRC/f1"; mkdir "$SRC/d"; echo precious >"$SRC/d/f2"
assert_eq "$(stat -c %d "$SRC")" "$(stat -c %d "$SCR")" "(setup) the bind's source is on LocalScratch's filesystem (same st_dev)"
bj=$(sbatch_as "$V" --wrap "mkdir -p $SCR/job_\$SLURM_JOB_ID/m && touch $OUTD/b-ready-\$SLURM_JOB_ID && sleep 4")
mc_wait_until 30 test -e "$OUTD/b-ready-$bj"
mount --bind "$SRC" "$SCR/job_$bj/m" || mc_die "mount --bind failed"
assert_eq COMPLETED "$(mc_wait_job "$bj")" "a job with a bind mount under its job_J completes"
mc_wait_until 20 grep -q "memcore: job $bj: $SCR/job_$bj: " "$MC_LOG_DIR/slurmd.log"
assert_file_contains "$MC_LOG_DIR/slurmd.log" "memcore: job $bj: $SCR/job_$bj: 0 entries removed in " "the sweep says what it removed"
assert_file_contains "$MC_LOG_DIR/slurmd.log" ", 1 left: entry m: on another mount: left" "... and that the mount was left"
assert_eq "precious precious" "$(cat "$SRC/f1" "$SRC/d/f2" | tr '\n' ' ' | sed 's/ $//')" "the bind's source kept its files (not emptied through the bind)"
assert_node_idle "the node stays up"
findmnt -rn -o TARGET | grep -F "$SCR/" | xargs -r -n1 umount -l
j=$(sbatch_as "$V" --wrap true)
assert_eq COMPLETED "$(mc_wait_job "$j")" "the next job runs"
mc_wait_until 20 trash_empty
assert_eq "" "$(ls -A "$SCR/.memcore-removing")" "... and its sweep takes the leftover, once unmounted"
assert_eq "precious" "$(cat "$SRC/f1")" "... the source still intact"

# --- item 7: LocalScratch under a directory the attacker owns.
UD=$(mktemp -d /tmp/mc-userdir.XXXXXX)
mc_at_exit "rm -rf '$UD'"
mkdir -m 1777 "$UD/s"
chown "$A" "$UD"
sed -i "s|^LocalScratch=.*|LocalScratch=$UD/s|" "$CONF"
mc_restart_slurmd
assert_file_contains "$MC_LOG_DIR/slurmd.log" "LocalScratch=$UD/s: directory $UD is owned by uid $AUID, not root" \
	"slurmd says LocalScratch under a user's directory breaks its rule"
assert_file_contains "$MC_LOG_DIR/slurmd.log" "LocalScratch is turned off (no staging directory is made, none removed; steps run)" "... and that it is turned off"
# The attacker points LocalScratch at the victim's files with a symlink.
VD=$(mktemp -d /tmp/mc-victim.XXXXXX)
mc_at_exit "rm -rf '$VD'"
chmod 0755 "$VD"
held=$(mc_sbatch -H -n1 --wrap true)
scancel "$held"
N=$((held + 1))
mkdir "$VD/job_$N" && echo precious >"$VD/job_$N/keep"
as "$A" bash -c "mv $UD/s $UD/old && ln -s $VD $UD/s"
mc_run runuser -u "$V" -- srun --chdir=/tmp -n1 --gpus=1 --mem=256M echo step-ran
assert_rc 0 "a GPU step runs with LocalScratch turned off"
assert_contains "$MC_OUT" "step-ran" "... its program ran"
assert_node_idle "the node is IDLE after it (no drain)"
mc_wait_until 10 grep -q "memcore: job $N: .*LocalScratch is turned off" "$MC_LOG_DIR/slurmd.log"
assert_file_contains "$MC_LOG_DIR/slurmd.log" "memcore: job $N: $CONF:" "the job's prolog says it too, naming memcore.conf"
assert_eq "precious" "$(cat "$VD/job_$N/keep" 2>/dev/null)" "the epilog removed nothing through the user's symlink ($VD/job_$N kept)"
assert_eq "" "$(squeue -h -t PENDING,RUNNING 2>/dev/null)" "nothing queued"
