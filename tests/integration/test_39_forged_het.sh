#!/bin/bash
# guest: trixie sid
# guest: why: the het-job variables each Slurm release sets and how its
#   slurmctld answers memcore's question (no cgroup is involved; the host
#   runs it on 22.05, bookworm's release)
# The kill of a refused step believes slurmctld, not the job's environment.
# A one-node GPU step that memcore refuses, run by user
# nobody with SLURM_HET_SIZE / SLURM_JOB_ID_HET_GROUP_* forged to name
# another job of the same user (with and without its own job id among
# them), sends no kill request at all (slurmctld logs every RPC at debug2:
# none is a REQUEST_CANCEL_JOB_STEP), says nothing about components, and
# the other job's step 0 runs on.
. "$(dirname "$0")/lib.sh"

MC_SOCKETS=1 MC_CORES_PER_SOCKET=2 MC_THREADS_PER_CORE=1
MC_REAL_MEMORY=3000 MC_GPUS=2 MC_DEBUG=debug2
id nobody >/dev/null 2>&1 || mc_skip "no user nobody"
command -v runuser >/dev/null || mc_skip "no runuser"
mc_cluster_start
mc_small_policy
CTLD=$MC_LOG_DIR/slurmctld.log
U=$MC_WORK/u
mkdir -p "$U" && chmod 1777 "$U"
as_nobody() { (cd "$U" && runuser -u nobody -- "$@" </dev/null); }
cancels() { grep -c "Processing RPC: REQUEST_CANCEL_JOB_STEP" "$CTLD"; }
step_runs() { squeue -h -s -o '%i' | grep -qx "$1"; }

# Another job of nobody's, whose step 0 would be the victim.
B=$(as_nobody sbatch --parsable -n1 --mem=100M -o "$U/b.out" --wrap 'srun -n1 --mem=100M sleep 300')
B=${B%%;*}
for ((i = 0; i < 100; i++)); do step_runs "$B.0" && break; sleep 0.3; done
step_runs "$B.0"; assert_eq 0 $? "the other job $B of nobody runs its step 0"

# The log names a step kill request when one comes (a control: nobody
# cancels a step of its own, then the count is taken).
C=$(as_nobody sbatch --parsable -n1 --mem=100M -o /dev/null --wrap 'srun -n1 --mem=100M sleep 300')
C=${C%%;*}
for ((i = 0; i < 100; i++)); do step_runs "$C.0" && break; sleep 0.3; done
n0=$(cancels)
as_nobody scancel "$C.0"
for ((i = 0; i < 30; i++)); do [ "$(cancels)" -gt "$n0" ] && break; sleep 0.2; done
assert_ne "$n0" "$(cancels)" "control: a step kill request shows in slurmctld's log"
scancel "$C"
# C's end sends requests of its own (its srun's, as it is killed): the
# count below starts once C is over, or one of them arrives late and is
# taken for the refused steps' (seen with the guest tier beside)
mc_wait_job "$C" 60 >/dev/null

# A refused one-node step (1 GPU, --mem=10M: the policy needs 164 MiB),
# the het variables forged to name job B.
# srun takes SLURM_HET_SIZE from its own environment as a heterogeneous
# allocation (and launches nothing), so the forged variables go to the
# step's environment through --export, where memcore reads them.
printf '%s\n' '#!/bin/bash' \
	"srun --export=ALL,SLURM_HET_SIZE=1,SLURM_JOB_ID_HET_GROUP_0=$B -n1 --gpus=1 --mem=10M echo ran-a; echo \"a_rc=\$?\"" \
	"srun --export=ALL,SLURM_HET_SIZE=2,SLURM_JOB_ID_HET_GROUP_0=\$SLURM_JOB_ID,SLURM_JOB_ID_HET_GROUP_1=$B -n1 --gpus=1 --mem=10M echo ran-b; echo \"b_rc=\$?\"" \
	"srun --export=ALL,SLURM_HET_SIZE=2,SLURM_JOB_ID_HET_GROUP_0=$B,SLURM_JOB_ID_HET_GROUP_1=\$SLURM_JOB_ID -n1 --gpus=1 --mem=10M echo ran-c; echo \"c_rc=\$?\"" \
	>"$U/a.sh"
chmod 0755 "$U/a.sh"
n0=$(cancels)
A=$(as_nobody sbatch --parsable -n1 --gpus=1 --mem=256M -o "$U/a.out" "$U/a.sh")
A=${A%%;*}
mc_wait_job "$A" 120 >/dev/null
out=$(cat "$U/a.out")
for x in a b c; do
	assert_match "$out" "${x}_rc=[1-9]" "forged het variables ($x): the step is refused"
	assert_not_contains "$out" "ran-$x" "forged het variables ($x): its program never ran"
done
n=$(grep -c "memcore: step $A\.[0-2].* needs more than it was given" <<<"$out")
assert_eq 3 "$n" "three refusals explained"
[ "$n" = 3 ] || printf '%s\n' "$out" >&2
assert_not_contains "$out" "component" "the refusals say nothing about components"
assert_not_contains "$out" "ended on all" "... nor that the step was ended elsewhere"
sleep 1
assert_eq "$n0" "$(cancels)" "slurmctld got no step kill request from the refused steps"
assert_not_contains "$(cat "$CTLD")" "Security violation" "slurmctld saw no request for a job that is not the user's"
step_runs "$B.0"; assert_eq 0 $? "job $B's step 0 still runs"
assert_eq RUNNING "$(mc_job_state "$B")" "job $B is RUNNING"
assert_contains "$(cat "$MC_LOG_DIR/slurmd.log")" "memcore: step $A.0: job $A is not heterogeneous by slurmctld" \
	"slurmd's log: the forged variables were checked with slurmctld"
scancel "$B"
