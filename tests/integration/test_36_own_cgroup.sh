#!/bin/bash
# guest: yes
# memcore's own memory cgroup (memcore_<job>_<step>) where nothing else
# limits the step (task/none, proctrack/linuxproc), on cgroup v1 or v2:
#  - a process that escapes the step (`setsid sleep`) keeps the cgroup in use
#    after the step; once it has exited, the next step on the node (or
#    slurmd's start) removes the empty leftover;
#  - a cgroup of memcore's name that exists with a process in it when a step
#    starts is never joined and its limit never raised: the step says so;
#  - otherwise the cgroup is gone as soon as the step is;
#  - slurmd's start says at error level when slurmstepd cannot be protected
#    from the OOM killer (no CAP_SYS_RESOURCE).
. "$(dirname "$0")/lib.sh"

MC_SOCKETS=1 MC_CORES_PER_SOCKET=2 MC_THREADS_PER_CORE=1
MC_REAL_MEMORY=1500 MC_GPUS=2
MIB=$((1 << 20))
FOREIGN= SPID=
mc_at_exit '[ -n "$SPID" ] && kill "$SPID" 2>/dev/null; [ -n "$FOREIGN" ] && { sleep 0.2; rmdir "$FOREIGN" 2>/dev/null; }'

mc_cluster_start
mc_small_policy

if [ "$(sed -n 's/^[0-9]*:memory://p' /proc/self/cgroup)" ]; then
	V=1 MNT=/sys/fs/cgroup/memory LIMIT=memory.limit_in_bytes
	cgof() { sed -n 's/^[0-9]*:memory://p' "/proc/$1/cgroup"; }
else
	V=2 MNT=/sys/fs/cgroup LIMIT=memory.max
	cgof() { sed -n 's/^0:://p' "/proc/$1/cgroup"; }
fi
empty() { # DIR: no process in it
	if [ $V = 2 ]; then grep -qx 'populated 0' "$1/cgroup.events"; else [ -z "$(cat "$1/cgroup.procs")" ]; fi
}

# --- an escaped process: the cgroup outlives the step, the next one removes it
mc_run srun -n1 --gpus=1 --mem=256M bash -c 'echo "cg=$(sed -n "s/^[0-9]*:memory://p; s/^0:://p" /proc/self/cgroup | head -n1)"; setsid sleep 3 </dev/null >/dev/null 2>&1 & exit 0'
assert_rc 0 "a step whose process escapes (setsid sleep 3) ends"
cg=$MNT$(sed -n 's/^cg=//p' <<<"$MC_OUT")
assert_match "$cg" "/memcore_[0-9]+_0$" "the step ran in memcore's own cgroup"
parent=${cg%/*}
sleep 0.5
assert_eq "$cg" "$(ls -d "$cg" 2>/dev/null)" "the escaped sleep keeps it in use after the step"
for ((i = 0; i < 100; i++)); do empty "$cg" && break; sleep 0.1; done
empty "$cg"; assert_eq 0 $? "the escaped sleep has exited: the cgroup is empty"
sleep 5	# a later step removes only leftovers at least 5 s old
mc_run srun -n1 --gpus=1 --mem=256M true
assert_rc 0 "the next step runs"
assert_eq "" "$(ls -d "$cg" 2>/dev/null)" "... and has removed the empty leftover $cg"
assert_eq "" "$(ls -d "$parent"/memcore_* 2>/dev/null)" "no memcore cgroup left in $parent"

# --- a cgroup of memcore's name with a process in it: refused, not raised ---
# Job ids are handed out in order: the next job's id follows this one's.
mc_run srun -n1 --gpus=1 --mem=256M sh -c 'echo "job=$SLURM_JOB_ID"'
id=$(( $(sed -n 's/^job=//p' <<<"$MC_OUT") + 1 ))
FOREIGN=$parent/memcore_${id}_0
mkdir "$FOREIGN" || mc_die "cannot make $FOREIGN"
echo $((1024 * MIB)) >"$FOREIGN/$LIMIT"
sleep 3600 &
SPID=$!
spid=$SPID
echo $spid >"$FOREIGN/cgroup.procs"
mc_run srun -n1 --gpus=1 --mem=256M sh -c 'echo "job=$SLURM_JOB_ID"; echo "cg=$(sed -n "s/^[0-9]*:memory://p; s/^0:://p" /proc/self/cgroup | head -n1)"'
assert_rc 0 "the step runs (without memcore's limit)"
assert_eq "$id" "$(sed -n 's/^job=//p' <<<"$MC_OUT")" "it is job $id, whose cgroup name was taken"
assert_contains "$MC_ERR" "refused to join a cgroup of memcore's name that exists with processes in it" "the step says why"
assert_not_contains "$(sed -n 's/^cg=//p' <<<"$MC_OUT")" "memcore_${id}_0" "the task did not join the foreign cgroup"
assert_eq $((1024 * MIB)) "$(cat "$FOREIGN/$LIMIT")" "its limit was not raised (1 GiB)"
assert_eq "$spid" "$(cat "$FOREIGN/cgroup.procs")" "the foreign process is still alone in it"
kill $spid; wait $spid 2>/dev/null; SPID=
for ((i = 0; i < 20; i++)); do rmdir "$FOREIGN" 2>/dev/null && break; sleep 0.1; done
FOREIGN=

# --- the ordinary case: gone with the step -----------------------------------
for ((i = 0; i < 5; i++)); do
	mc_run srun -n1 --gpus=1 --mem=256M true
	assert_rc 0 "step $i runs"
done
for ((i = 0; i < 40; i++)); do ls -d "$parent"/memcore_* >/dev/null 2>&1 || break; sleep 0.05; done
assert_eq "" "$(ls -d "$parent"/memcore_* 2>/dev/null)" "no memcore cgroup left after 5 steps"
assert_eq IDLE "$(mc_node_state)" "node IDLE"

# --- slurmd's start: it removes empty leftovers too --------------------------
mc_run srun -n1 --gpus=1 --mem=256M bash -c 'echo "cg=$(sed -n "s/^[0-9]*:memory://p; s/^0:://p" /proc/self/cgroup | head -n1)"; setsid sleep 2 </dev/null >/dev/null 2>&1 & exit 0'
cg=$MNT$(sed -n 's/^cg=//p' <<<"$MC_OUT")
sleep 0.5
assert_eq "$cg" "$(ls -d "$cg" 2>/dev/null)" "another escaped sleep keeps $cg"
for ((i = 0; i < 100; i++)); do empty "$cg" && break; sleep 0.1; done
sleep 5
mc_restart_slurmd || mc_die "slurmd did not come back"
assert_eq "" "$(ls -d "$cg" 2>/dev/null)" "slurmd's start removed the empty leftover"
assert_file_contains "$MC_LOG_DIR/slurmd.log" "memcore: removed 1 empty memcore_* cgroup left in $parent by ended steps" "... and says so"

# --- slurmd's start: an error when slurmstepd cannot be protected ----------
c=$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status)
if (( (16#$c >> 24) & 1 )); then
	assert_not_contains "$(cat "$MC_LOG_DIR/slurmd.log")" "has no CAP_SYS_RESOURCE" "CAP_SYS_RESOURCE here: no error at slurmd's start"
else
	assert_match "$(cat "$MC_LOG_DIR/slurmd.log")" "error: memcore on .*: slurmd has no CAP_SYS_RESOURCE, .* each task raises its own oom_score_adj to 1000" \
		"no CAP_SYS_RESOURCE here: slurmd's start says so at error level, and what memcore does instead"
fi
