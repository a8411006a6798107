#!/bin/bash
# guest: no  (run in the bookworm, trixie and sid guests by hand for 0.3.0; the
# own cgroup per run uses the same path as test_36, which the guests run)
# A requeued job's steps keep memcore's memory limit.
# With memcore's own cgroup (task/none, proctrack/linuxproc) a requeued job
# keeps its job id and starts its step ids again, and the processes its
# earlier run left behind (`setsid -f sleep`, which linuxproc never finds)
# keep that run's memcore_<job>_batch and memcore_<job>_0 populated. Those
# are never joined; each run gets names of its own (..._1, _2, ...) with
# its --mem as the limit, so a 1 GiB toucher under --mem=256M is killed
# for memory in every run. As user nobody: requeued by the user from the
# script, by root (`scontrol requeue`), and by a node failure (slurmd
# killed with the job's slurmstepd, the node set DOWN, which requeues the
# job, slurmd started again, the node resumed). With every name of a step
# held, the step is refused, never run unlimited.
. "$(dirname "$0")/lib.sh"

MC_SOCKETS=1 MC_CORES_PER_SOCKET=2 MC_THREADS_PER_CORE=1
MC_REAL_MEMORY=3000 MC_GPUS=2
PROGS=$MEMCORE_BUILD/progs
MIB=$((1 << 20))
[ -x "$PROGS/mc_anon_toucher" ] || mc_die "$PROGS/mc_anon_toucher missing: make progs"
id nobody >/dev/null 2>&1 || mc_skip "no user nobody"
command -v runuser >/dev/null || mc_skip "no runuser"
HOLDERS=() LEFT_DIRS=() PARENT= J=
# Every process left in a memcore cgroup of this test's jobs, and the
# cgroups, go at exit.
cleanup_left() {
	local d p
	# every cgroup of this test's jobs, also those no check recorded
	[ -n "${PARENT:-}" ] && [ -n "${J:-}" ] &&
		for d in "$PARENT"/memcore_"$J"_* "$PARENT"/memcore_$((J + 1))_*; do
			[ -d "$d" ] && LEFT_DIRS+=("$d")
		done
	for d in "${LEFT_DIRS[@]}"; do
		[ -d "$d" ] || continue
		for p in $(cat "$d/cgroup.procs" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
	done
	for p in "${HOLDERS[@]}"; do kill -9 "$p" 2>/dev/null; done
	sleep 0.3
	for d in "${LEFT_DIRS[@]}"; do rmdir "$d" 2>/dev/null; done
	# the jobs' own cgroups, which held the steps' (mc_owncg.h)
	[ -n "${PARENT:-}" ] && [ -n "${J:-}" ] &&
		rmdir "$PARENT" "${PARENT%/*}/memcore_$((J + 1))" 2>/dev/null
	return 0
}
mc_at_exit cleanup_left

mc_cluster_start
mc_small_policy

if [ "$(sed -n 's/^[0-9]*:memory://p' /proc/self/cgroup)" ]; then
	MNT=/sys/fs/cgroup/memory LIMIT=memory.limit_in_bytes
else
	MNT=/sys/fs/cgroup LIMIT=memory.max
fi

U=$MC_WORK/u
mkdir -p "$U" && chmod 1777 "$U"
{
	echo '#!/bin/bash'
	echo 'r=${SLURM_RESTART_COUNT:-0}'
	echo "exec >\"$U/run\$r.log\" 2>&1"
	echo 'echo "batch_cg=$(sed -n "s/^[0-9]*:memory://p; s/^0:://p" /proc/$$/cgroup | head -n1)"'
	echo 'setsid -f sleep 400 </dev/null >/dev/null 2>&1'
	echo "srun -n1 --gpus=1 --mem=256M bash -c 'echo \"step_cg=\$(sed -n \"s/^[0-9]*:memory://p; s/^0:://p\" /proc/self/cgroup | head -n1)\"; setsid -f sleep 400 </dev/null >/dev/null 2>&1; exec $PROGS/mc_anon_toucher 1024'"
	echo 'echo "toucher_rc=$?"'
	echo 'echo ready'
	echo '[ "$r" = 0 ] && scontrol requeue "$SLURM_JOB_ID"'
	echo 'sleep 300'
} >"$U/job.sh"
chmod 0755 "$U/job.sh"

J=$(cd "$U" && runuser -u nobody -- sbatch --parsable --requeue -o "$U/slurm-%j.out" \
	-n1 --gpus=1 --mem=512M "$U/job.sh" </dev/null)
J=${J%%;*}
[[ $J =~ ^[0-9]+$ ]] || mc_die "sbatch as nobody failed: $J"
mc_log "job $J as nobody"

wait_ready() { # RUN: until run RUN's script says ready
	local i
	for ((i = 0; i < 240; i++)); do
		grep -qx ready "$U/run$1.log" 2>/dev/null && return 0
		sleep 0.5
	done
	mc_log "run $1 of job $J not ready; job: $(scontrol -o show job "$J")"
	cat "$U/run$1.log" "$U/slurm-$J.out" >&2 2>/dev/null
	return 1
}
# Slurm holds a requeued job for a while (Reason=BeginTime): root lets it
# start sooner, which changes nothing memcore sees, once the node is done
# with the last run and a second has passed (slurmd refuses a credential
# of the job made in the second its last run's was revoked).
release() {
	local i
	for ((i = 0; i < 120; i++)); do
		[ "$(mc_job_state "$J")" = PENDING ] && break
		sleep 0.5
	done
	mc_wait_node_state IDLE 60
	sleep 2
	scontrol update jobid="$J" starttime=now
}
check_run() { # RUN HOW: run RUN has cgroups of its own, each with its --mem
	local r=$1 how=$2 sfx='' log bcg scg
	[ "$r" -gt 0 ] && sfx=_$r
	log=$(cat "$U/run$r.log")
	bcg=$(sed -n 's/^batch_cg=//p' <<<"$log")
	scg=$(sed -n 's/^step_cg=//p' <<<"$log")
	assert_match "$bcg" "/memcore_${J}/memcore_${J}_batch${sfx}\$" "run $r ($how): the batch step in a cgroup of its own, in the job's"
	assert_match "$scg" "/memcore_${J}/memcore_${J}_0${sfx}\$" "run $r ($how): step 0 in a cgroup of its own, in the job's"
	LEFT_DIRS+=("$MNT$bcg" "$MNT$scg")
	[ -n "$bcg" ] && PARENT=$(dirname "$MNT$bcg")
	# The escaped sleeps hold them after the step: their limits are read.
	assert_eq $((512 * MIB)) "$(cat "$MNT$bcg/$LIMIT" 2>/dev/null)" "run $r ($how): the batch step limited to its --mem=512M"
	assert_eq $((256 * MIB)) "$(cat "$MNT$scg/$LIMIT" 2>/dev/null)" "run $r ($how): step 0 limited to its --mem=256M"
	assert_contains "$log" "memcore: step $J.0 was killed for memory" "run $r ($how): the 1 GiB toucher is killed for memory"
	assert_not_contains "$log" "touched 1024 MiB" "run $r ($how): it never held 1 GiB"
	assert_not_contains "$log$(cat "$U/slurm-$J.out")" "without memcore's memory limit" "run $r ($how): no step runs unlimited"
	assert_ne "" "$(cat "$MNT$scg/cgroup.procs" 2>/dev/null)" "run $r ($how): the step's escaped sleep still holds its cgroup"
}

# --- run 0, then requeued by the user from the script ------------------------
wait_ready 0 || mc_die "the first run did not start"
check_run 0 "first run"
release
wait_ready 1 || mc_die "the user's requeue did not run the job again"
check_run 1 "requeued by user nobody"

# --- requeued by root ----------------------------------------------------------
scontrol requeue "$J"
assert_eq 0 $? "root requeues job $J"
release
wait_ready 2 || mc_die "the job did not run again after root's requeue"
check_run 2 "requeued by root"
assert_file_contains "$MC_LOG_DIR/slurmd.log" "memcore_${J}_0_1 is in use (an earlier run of the job, requeued?): never joined, the next name" \
	"slurmd's log says which names were held"

# --- a node failure: slurmd dies with the job's slurmstepd, the node goes DOWN
# (Slurm requeues the job), slurmd starts again, the node comes back.
p=$(_mc_pid_of slurmd) && kill -9 "$p"
for p in $(pgrep -f "^slurmstepd: \[$J\."); do kill -9 "$p"; done
scontrol update nodename="$MC_NODE_NAME" state=down reason="reboot simulated by $MC_NAME"
for ((i = 0; i < 60; i++)); do
	case $(mc_job_state "$J") in PENDING|REQUEUED) break ;; esac
	sleep 0.5
done
assert_match "$(mc_job_state "$J")" "^(PENDING|REQUEUED)$" "the node failure requeues job $J"
# slurmctld delivers the kill of the failed run when slurmd is back: held
# until then, or it would end the next run (same job id) as it starts.
scontrol hold "$J"
n=$(wc -l <"$MC_LOG_DIR/slurmd.log")
_mc_spawn slurmd slurmd -D -f "$SLURM_CONF" -N "$MC_NODE_NAME"
for ((i = 0; i < 60; i++)); do
	tail -n +"$((n + 1))" "$MC_LOG_DIR/slurmd.log" | grep -q "_rpc_terminate_job: .*JobId=$J\b" && break
	sleep 0.25
done
[ "$(mc_node_state)" = DOWN ] && scontrol update nodename="$MC_NODE_NAME" state=resume
mc_wait_node_state IDLE 30
scontrol release "$J"
release
wait_ready 3 || mc_die "the job did not run again after the node failure"
check_run 3 "requeued by a node failure"
scancel "$J"
mc_wait_job "$J" 60 >/dev/null

# --- every name of a step held: refused, never unlimited -----------------------
# Job ids are handed out in order: the next job's id follows J.
N=$((J + 1))
parent=$(dirname "$(dirname "$MNT$(sed -n 's/^step_cg=//p' "$U/run0.log")")")/memcore_$N
mkdir -p "$parent" || mc_die "cannot make the job's cgroup $parent"
for ((r = 0; r < 16; r++)); do
	d=$parent/memcore_${N}_0
	[ $r -gt 0 ] && d=${d}_$r
	mkdir "$d" || mc_die "cannot make $d"
	LEFT_DIRS+=("$d")
	sleep 600 &
	HOLDERS+=($!)
	echo $! >"$d/cgroup.procs"
done
mc_run runuser -u nobody -- srun -n1 --gpus=1 --mem=256M "$PROGS/mc_anon_toucher" 1024
assert_ne 0 "$MC_RC" "all 16 names of step $N.0 held: srun fails"
assert_contains "$MC_ERR" "memcore: step $N.0: refused: every memory cgroup name of this step is held by processes of earlier runs of the job (requeued?)" \
	"... and says why"
assert_not_contains "$MC_OUT" "touched" "... the program never ran"
mc_wait_node_state IDLE 30
assert_node_idle "the node stays IDLE"
mc_run runuser -u nobody -- srun -n1 --gpus=1 --mem=256M true
assert_rc 0 "the next job's step (other names) runs"
