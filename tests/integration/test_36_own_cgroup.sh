#!/bin/bash
# guest: yes
# guest: why: memcore's own cgroups on cgroup v2 (no internal processes:
#   beside the task's cgroup, the memory controller enabled above it, the
#   job's level and its steps), under the hierarchy each Slurm release's
#   cgroup/v2 makes for task/none (26.05 names the job level differently)
# memcore's own memory cgroups (memcore_<job>/memcore_<job>_<step>) where
# nothing else limits the step (task/none, proctrack/linuxproc), on cgroup
# v1 or v2:
#  - the job's cgroup caps its steps together: three `srun --overlap
#    --mem=400M` steps of a `--mem=400M` job, run by user nobody, never
#    hold 3 x 300 MiB (each step's own limit would let them), and the job's
#    cgroup is gone with the job;
#  - a process that escapes the step (`setsid sleep`) keeps the cgroup in use
#    after the step; once it has exited, the next step on the node (or
#    slurmd's start) removes the empty leftover, at once (no age guard:
#    cgroupfs ctime is no clock), and only names of memcore's own form
#    (memcore_<job>_<step>[_<run>]): memcore_admin, memcore_ and the like
#    are left alone;
#  - a cgroup of memcore's name that exists with a process in it when a step
#    starts is never joined and its limit never raised: the step takes the
#    next name (memcore_<job>_<step>_1) and its limit;
#  - otherwise the cgroup is gone as soon as the step is;
#  - slurmd's start says at error level when slurmstepd cannot be protected
#    from the OOM killer (no CAP_SYS_RESOURCE).
. "$(dirname "$0")/lib.sh"

MC_SOCKETS=1 MC_CORES_PER_SOCKET=2 MC_THREADS_PER_CORE=1
MC_REAL_MEMORY=1500 MC_GPUS=2
MIB=$((1 << 20))
FOREIGN= SPID=
mc_at_exit '[ -n "$SPID" ] && kill "$SPID" 2>/dev/null; [ -n "$FOREIGN" ] && { sleep 0.2; rmdir "$FOREIGN" "${FOREIGN%/*}" 2>/dev/null; }'

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

# --- overlap steps: the job's cgroup caps them together, as user nobody ----
U=$MC_WORK/u
mkdir -p "$U" && chmod 1777 "$U"
cp "$MEMCORE_BUILD/progs/mc_hold" "$U/" && chmod 0755 "$U/mc_hold" || mc_die "no $MEMCORE_BUILD/progs/mc_hold (make progs)"
cat >"$U/overlap.sh" <<EOF
#!/bin/bash
srun --overlap -n1 --mem=400M bash -c 'c=\$(sed -n "s/^[0-9]*:memory://p; s/^0:://p" /proc/self/cgroup | head -n1); echo "cg=\$c"; echo "joblimit=\$(cat $MNT\${c%/*}/$LIMIT)"'
for i in 1 2 3; do srun --overlap -n1 --mem=400M $U/mc_hold 300 6 & done
wait
EOF
chmod 0755 "$U/overlap.sh"
jid=$(cd "$U" && runuser -u nobody -- sbatch --parsable -n1 --gpus=1 --mem=400M -o "$U/overlap.out" "$U/overlap.sh")
jid=${jid%%;*}
mc_wait_job "$jid" 120 >/dev/null
out=$(cat "$U/overlap.out")
assert_match "$out" "cg=.*/memcore_${jid}/memcore_${jid}_0" "an overlap step runs inside its job's cgroup"
assert_eq $((400 * MIB)) "$(sed -n 's/^joblimit=//p' <<<"$out")" "the job's cgroup is capped at the job's --mem=400M"
held=$(grep -c "^held 300 MiB" <<<"$out")
mc_log "overlap steps that held 300 MiB: $held of 3"
[ "$held" -lt 3 ]; assert_eq 0 $? "three --overlap --mem=400M steps never hold 3 x 300 MiB in a --mem=400M job ($held did)"
assert_contains "$out" "was killed for memory" "... the one over the job's cap is killed and told"
assert_contains "$out" "the job's limit of 400 MiB on this node (all its steps together, srun --overlap ones included) was reached" "... that the job's limit was what it reached"
jobdir=$MNT$(sed -n 's/^cg=//p' <<<"$out" | sed 's,/[^/]*$,,')
for ((i = 0; i < 50; i++)); do [ -e "$jobdir" ] || break; sleep 0.1; done
assert_eq "" "$(ls -d "$jobdir" 2>/dev/null)" "the job's cgroup is gone with the job"

# --- an escaped process: the cgroup outlives the step, the next one removes it
mc_run srun -n1 --gpus=1 --mem=256M bash -c 'echo "cg=$(sed -n "s/^[0-9]*:memory://p; s/^0:://p" /proc/self/cgroup | head -n1)"; setsid sleep 3 </dev/null >/dev/null 2>&1 & exit 0'
assert_rc 0 "a step whose process escapes (setsid sleep 3) ends"
cg=$MNT$(sed -n 's/^cg=//p' <<<"$MC_OUT")
assert_match "$cg" "/memcore_[0-9]+/memcore_[0-9]+_0$" "the step ran in memcore's own cgroup, inside its job's"
jobcg=${cg%/*}
parent=${jobcg%/*}
# the step's end has tried to remove it (slurmstepd logs that it could not)
stepid=$(sed 's/.*memcore_\([0-9]*\)_\([0-9]*\)$/\1.\2/' <<<"$cg")
still_in_use() { grep -q "memcore: step $1: its memory cgroup is still in use" "$MC_LOG_DIR/slurmd.log"; }
mc_wait_until 20 still_in_use "$stepid"
assert_eq 0 $? "step $stepid's end found its cgroup in use and said so in slurmd's log"
assert_eq "$cg" "$(ls -d "$cg" 2>/dev/null)" "the escaped sleep keeps it in use after the step"
assert_eq "$jobcg" "$(ls -d "$jobcg" 2>/dev/null)" "... and its job's"
for ((i = 0; i < 100; i++)); do empty "$cg" && break; sleep 0.1; done
empty "$cg"; assert_eq 0 $? "the escaped sleep has exited: the cgroup is empty"
# Other names beside it, empty: not memcore's own, never removed. And a
# leftover of memcore's form made just now (its ctime fresh): removed.
OTHERS="memcore_admin memcore_ memcore_12_x memcore_007_0 memcore_1_0_0 memcore_1_0_16"
for o in $OTHERS; do mkdir "$parent/$o" || mc_die "cannot make $parent/$o"; done
mc_at_exit 'for o in $OTHERS; do rmdir "$parent/$o" 2>/dev/null; done'
mkdir "$parent/memcore_999_batch_3" || mc_die "cannot make a fresh leftover"
mc_run srun -n1 --gpus=1 --mem=256M true
assert_rc 0 "the next step runs"
assert_eq "" "$(ls -d "$cg" 2>/dev/null)" "... and has removed the empty leftover $cg, at once"
assert_eq "" "$(ls -d "$jobcg" 2>/dev/null)" "... and its job's, $jobcg"
assert_eq "" "$(ls -d "$parent/memcore_999_batch_3" 2>/dev/null)" "... and memcore_999_batch_3, made a moment ago"
for o in $OTHERS; do
	assert_eq "$parent/$o" "$(ls -d "$parent/$o" 2>/dev/null)" "... but not $o (not memcore's own name)"
done
for o in $OTHERS; do rmdir "$parent/$o"; done
assert_eq "" "$(ls -d "$parent"/memcore_* 2>/dev/null)" "no memcore cgroup left in $parent"

# --- a cgroup of memcore's name with a process in it: refused, not raised ---
# Job ids are handed out in order: the next job's id follows this one's.
mc_run srun -n1 --gpus=1 --mem=256M sh -c 'echo "job=$SLURM_JOB_ID"'
id=$(( $(sed -n 's/^job=//p' <<<"$MC_OUT") + 1 ))
FJOB=$parent/memcore_${id}
FOREIGN=$FJOB/memcore_${id}_0
mkdir -p "$FJOB" || mc_die "cannot make $FJOB"
# cgroup v2: the job level passes the memory controller on to its steps,
# as memcore's earlier run of the job left it
[ $V = 2 ] && { echo +memory >"$FJOB/cgroup.subtree_control" || mc_die "cannot enable memory in $FJOB"; }
mkdir "$FOREIGN" || mc_die "cannot make $FOREIGN"
echo $((1024 * MIB)) >"$FOREIGN/$LIMIT" || mc_die "cannot limit $FOREIGN"
sleep 3600 &
SPID=$!
spid=$SPID
echo $spid >"$FOREIGN/cgroup.procs"
mc_run srun -n1 --gpus=1 --mem=256M sh -c 'echo "job=$SLURM_JOB_ID"; c=$(sed -n "s/^[0-9]*:memory://p; s/^0:://p" /proc/self/cgroup | head -n1); echo "cg=$c"; echo "limit=$(cat '"$MNT"'$c/'"$LIMIT"')"'
assert_rc 0 "the step runs"
assert_eq "$id" "$(sed -n 's/^job=//p' <<<"$MC_OUT")" "it is job $id, whose cgroup name was taken"
assert_match "$(sed -n 's/^cg=//p' <<<"$MC_OUT")" "/memcore_${id}/memcore_${id}_0_1$" "the task did not join the foreign cgroup: memcore_${id}_0_1, the next name"
assert_eq $((256 * MIB)) "$(sed -n 's/^limit=//p' <<<"$MC_OUT")" "... limited to its --mem=256M"
assert_not_contains "$MC_ERR" "without memcore's memory limit" "the step does not run unlimited"
assert_file_contains "$MC_LOG_DIR/slurmd.log" "$FOREIGN is in use (an earlier run of the job, requeued?): never joined, the next name" "slurmd's log says so"
assert_eq $((1024 * MIB)) "$(cat "$FOREIGN/$LIMIT")" "its limit was not raised (1 GiB)"
assert_eq "$spid" "$(cat "$FOREIGN/cgroup.procs")" "the foreign process is still alone in it"
kill $spid; wait $spid 2>/dev/null; SPID=
for ((i = 0; i < 20; i++)); do rmdir "$FOREIGN" 2>/dev/null && break; sleep 0.1; done
rmdir "$FJOB"
FOREIGN=

# --- the ordinary case: gone with the step -----------------------------------
for ((i = 0; i < 5; i++)); do
	mc_run srun -n1 --gpus=1 --mem=256M true
	assert_rc 0 "step $i runs"
done
for ((i = 0; i < 40; i++)); do ls -d "$parent"/memcore_* >/dev/null 2>&1 || break; sleep 0.05; done
assert_eq "" "$(ls -d "$parent"/memcore_* 2>/dev/null)" "no memcore cgroup left after 5 steps"
assert_node_idle "node IDLE"

# --- slurmd's start: it removes empty leftovers too --------------------------
mc_run srun -n1 --gpus=1 --mem=256M bash -c 'echo "cg=$(sed -n "s/^[0-9]*:memory://p; s/^0:://p" /proc/self/cgroup | head -n1)"; setsid sleep 2 </dev/null >/dev/null 2>&1 & exit 0'
cg=$MNT$(sed -n 's/^cg=//p' <<<"$MC_OUT")
stepid=$(sed 's/.*memcore_\([0-9]*\)_\([0-9]*\)$/\1.\2/' <<<"$cg")
mc_wait_until 20 still_in_use "$stepid"
assert_eq "$cg" "$(ls -d "$cg" 2>/dev/null)" "another escaped sleep keeps $cg"
for ((i = 0; i < 100; i++)); do empty "$cg" && break; sleep 0.1; done
mkdir "$parent/memcore_admin" || mc_die "cannot make $parent/memcore_admin"
mc_restart_slurmd || mc_die "slurmd did not come back"
assert_eq "" "$(ls -d "$cg" 2>/dev/null)" "slurmd's start removed the empty leftover"
assert_eq "" "$(ls -d "${cg%/*}" 2>/dev/null)" "... and its job's"
assert_file_contains "$MC_LOG_DIR/slurmd.log" "memcore: removed 2 empty memcore cgroups (memcore_<job>, memcore_<job>_<step>) left in $parent by ended jobs and steps" "... and says so"
assert_eq "$parent/memcore_admin" "$(ls -d "$parent/memcore_admin" 2>/dev/null)" "... but not memcore_admin"
rmdir "$parent/memcore_admin"

# --- slurmd's start: an error when slurmstepd cannot be protected ----------
c=$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status)
if (( (16#$c >> 24) & 1 )); then
	assert_not_contains "$(cat "$MC_LOG_DIR/slurmd.log")" "has no CAP_SYS_RESOURCE" "CAP_SYS_RESOURCE here: no error at slurmd's start"
else
	assert_match "$(cat "$MC_LOG_DIR/slurmd.log")" "error: memcore on .*: slurmd has no CAP_SYS_RESOURCE, .* each task raises its own oom_score_adj to 1000" \
		"no CAP_SYS_RESOURCE here: slurmd's start says so at error level, and what memcore does instead"
fi
