#!/bin/bash
# Long-running daemons: 300 step launches (`srun -N1 -n1 --gpus=1`, one in
# three refused by memcore, the rest fitting) with memcore loaded in slurmd
# and every slurmstepd. Nothing limits the steps here (task/none), so every
# fitting step runs in memcore's own cgroup (memcore_<job>_<step>): none is
# left behind. slurmd's open file descriptors after all 300 equal
# those after the first 20, and its RSS (VmRSS) is the same within
# MC_RSS_TOLERANCE_KB (default 512 KiB: malloc arenas and Slurm's own job
# records move by a few pages); no slurmstepd is left behind. The figures
# are printed. MC_LONGRUN_STEPS changes the count (default 300).
. "$(dirname "$0")/lib.sh"

TOPO=$MC_TOP/tests/data/aws-g4dn-metal-2xxeon8259cl-8xt4.xml
STEPS=${MC_LONGRUN_STEPS:-300}
TOL_KB=${MC_RSS_TOLERANCE_KB:-512}
mc_cluster_start
CONF=$MC_CONF_DIR/memcore.conf
printf 'TopologyFile=%s\nBind=none\n' "$TOPO" >"$CONF"
# memcore in slurmd too (its start-time hook): restart slurmd with the
# plugstack in place, then measure from there.
mc_set_plugstack "required $MEMCORE_BUILD/memcore.so config=$CONF cache=$MC_WORK/state/d/memcore-node-facts"
mc_restart_slurmd || mc_die "slurmd did not come back"
pid=$(cat "$MC_WORK/run/slurmd.pid")
assert_file_contains "$MC_LOG_DIR/slurmd.log" "memcore" "memcore loaded in slurmd"

_mc_tagged "$pid" || mc_die "no slurmd pid"

rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status"; }
fds() { find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
# One T4 step: 14.76 GiB floor + 2 x 4 GiB + 1 GiB = 23.76 GiB, 3 cores.
FITS=(-N1 -n1 --gpus=1 --mem=30G -c 6)
SHORT=(-N1 -n1 --gpus=1 --mem=10G -c 6)
refused=0 fitted=0 bad=0
launch() { # N: the Nth launch; every third is refused
	local rc=0
	if [ $(($1 % 3)) = 0 ]; then
		timeout 60 srun "${SHORT[@]}" true >/dev/null 2>&1 || rc=$?
		[ $rc = 1 ] && refused=$((refused + 1)) || { bad=$((bad + 1)); mc_log "launch $1 (short): rc $rc"; }
	else
		timeout 60 srun "${FITS[@]}" true >/dev/null 2>&1 || rc=$?
		[ $rc = 0 ] && fitted=$((fitted + 1)) || { bad=$((bad + 1)); mc_log "launch $1 (fits): rc $rc"; }
	fi
}

# memcore's own cgroups anywhere in the memory hierarchy: those there
# before (another run's) are not this run's to count.
if grep -q '^[0-9]*:memory:' /proc/self/cgroup; then MNT=/sys/fs/cgroup/memory; else MNT=/sys/fs/cgroup; fi
owncgs() { find "$MNT" -maxdepth 8 -type d -name 'memcore_*' 2>/dev/null | sort; }
before=$(owncgs)
t0=${EPOCHREALTIME/,/.}
for ((i = 1; i <= 20; i++)); do launch $i; done
sleep 1
rss20=$(rss) fds20=$(fds)
for ((; i <= STEPS; i++)); do launch $i; done
t1=${EPOCHREALTIME/,/.}
sleep 1
rss_end=$(rss) fds_end=$(fds)
secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
per=$(awk -v s="$secs" -v n="$STEPS" 'BEGIN { printf "%.0f", s * 1000 / n }')
mc_log "$STEPS launches in ${secs}s (${per} ms each): $fitted ran, $refused refused, $bad unexpected"
mc_log "slurmd pid $pid after 20: VmRSS ${rss20} kB, ${fds20} fds; after $STEPS: VmRSS ${rss_end} kB, ${fds_end} fds (RSS tolerance ${TOL_KB} kB)"

assert_eq 0 "$bad" "every launch ended as expected (fits: 0, short: 1)"
assert_eq "$STEPS" $((fitted + refused)) "$STEPS launches counted"
assert_eq "$fds20" "$fds_end" "slurmd open fds after 20 = after $STEPS"
d=$((rss_end - rss20))
[ "${d#-}" -le "$TOL_KB" ] && _mc_ok "slurmd VmRSS after $STEPS within ${TOL_KB} kB of after 20 (${d} kB)" ||
	assert_eq "<= ${TOL_KB} kB" "${d} kB" "slurmd VmRSS growth over $STEPS launches"
assert_eq "$pid" "$(cat "$MC_WORK/run/slurmd.pid")" "the same slurmd throughout"
assert_node_idle "node IDLE after $STEPS launches"
sleep 0.5
new=$(comm -13 <(echo "$before") <(owncgs) | grep . || true)
mc_log "memcore cgroups left after $STEPS launches: $(grep -c . <<<"$new")"
assert_eq "" "$new" "no memcore cgroup left behind after $STEPS launches"
left=$(pgrep -f "slurmstepd" | while read -r p; do _mc_tagged "$p" && echo "$p"; done)
assert_eq "" "$left" "no slurmstepd left behind"
