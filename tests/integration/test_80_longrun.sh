#!/bin/bash
# Long-running daemons: 300 step launches (`srun -N1 -n1 --gpus=1`, one in
# three refused by memcore, the rest fitting) with memcore loaded in slurmd
# and every slurmstepd. Nothing limits the steps here (task/none), so every
# fitting step runs in memcore's own cgroup (memcore_<job>_<step>): none is
# left behind. slurmd's open file descriptors after all 300 equal those
# after the first 20, and no slurmstepd is left behind.
#
# slurmd's RSS: Slurm 22.05's slurmd grows by itself, about 0.4 kB a launch
# without any plugin (a run here: 7480 -> 7588 kB over 280 launches), and
# by steps of a few hundred kB when launches overlap under load (a CI run
# beside the guest tier: +580 kB), so a fixed bound on the total fails for
# Slurm's reasons. What a leak of memcore's adds is a steady slope: the
# test samples VmRSS every 20 launches, takes the median of those 20-launch
# growths (a step moves one sample, not the median), first for 100 launches
# on the same cluster with memcore not loaded (Slurm's own slope), then for
# the 300 with it, and asserts that memcore's adds at most
# MC_RSS_SLOPE_KB (default 8 kB, two pages) per 20 launches: a leak of
# 0.5 kB a launch fails. The series and the total are printed.
# MC_LONGRUN_STEPS changes the count (default 300).
. "$(dirname "$0")/lib.sh"

TOPO=$MC_TOP/tests/data/aws-g4dn-metal-2xxeon8259cl-8xt4.xml
STEPS=${MC_LONGRUN_STEPS:-300}
SLOPE_KB=${MC_RSS_SLOPE_KB:-8}
CONTROL=100
mc_cluster_start
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status"; }
fds() { find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
# median_growth "r0 r1 r2 ...": the median of the growths between successive
# samples, in kB.
median_growth() {
	awk '{ for (i = 2; i <= NF; i++) d[i - 1] = $i - $(i - 1); n = NF - 1
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (d[j] < d[i]) { t = d[i]; d[i] = d[j]; d[j] = t }
		print (n % 2) ? d[(n + 1) / 2] : int((d[n / 2] + d[n / 2 + 1]) / 2) }' <<<"$1"
}
# Slurm's own slope: the same fitting launch, memcore not in the plugstack.
pid=$(cat "$MC_WORK/run/slurmd.pid")
_mc_tagged "$pid" || mc_die "no slurmd pid"
ctl=""
for ((i = 1; i <= CONTROL + 20; i++)); do
	timeout 60 srun -N1 -n1 --gpus=1 --mem=30G -c 6 true >/dev/null 2>&1 || mc_die "control launch $i failed"
	[ $((i % 20)) = 0 ] && ctl="$ctl $(rss)"
done
ctl_slope=$(median_growth "$ctl")
mc_log "without memcore, slurmd VmRSS every 20 launches (kB):$ctl; median growth ${ctl_slope} kB"

CONF=$MC_CONF_DIR/memcore.conf
printf 'TopologyFile=%s\nBind=none\n' "$TOPO" >"$CONF"
# memcore in slurmd too (its start-time hook): restart slurmd with the
# plugstack in place, then measure from there.
mc_set_plugstack "required $MEMCORE_BUILD/memcore.so config=$CONF cache=$MC_WORK/state/d/memcore-node-facts"
mc_restart_slurmd || mc_die "slurmd did not come back"
pid=$(cat "$MC_WORK/run/slurmd.pid")
assert_file_contains "$MC_LOG_DIR/slurmd.log" "memcore" "memcore loaded in slurmd"

_mc_tagged "$pid" || mc_die "no slurmd pid"

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
series=" $rss20"
for ((; i <= STEPS; i++)); do
	launch $i
	[ $((i % 20)) = 0 ] && series="$series $(rss)"
done
t1=${EPOCHREALTIME/,/.}
sleep 1
rss_end=$(rss) fds_end=$(fds)
secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
per=$(awk -v s="$secs" -v n="$STEPS" 'BEGIN { printf "%.0f", s * 1000 / n }')
mc_log "$STEPS launches in ${secs}s (${per} ms each): $fitted ran, $refused refused, $bad unexpected"
slope=$(median_growth "$series")
mc_log "slurmd pid $pid after 20: VmRSS ${rss20} kB, ${fds20} fds; after $STEPS: VmRSS ${rss_end} kB ($((rss_end - rss20)) kB more), ${fds_end} fds"
mc_log "with memcore, slurmd VmRSS every 20 launches (kB):$series; median growth ${slope} kB (without: ${ctl_slope} kB)"

assert_eq 0 "$bad" "every launch ended as expected (fits: 0, short: 1)"
assert_eq "$STEPS" $((fitted + refused)) "$STEPS launches counted"
assert_eq "$fds20" "$fds_end" "slurmd open fds after 20 = after $STEPS"
[ $((slope - ctl_slope)) -le "$SLOPE_KB" ] &&
	_mc_ok "slurmd VmRSS grows by ${slope} kB per 20 launches with memcore, ${ctl_slope} kB without (at most ${SLOPE_KB} kB more)" ||
	assert_eq "<= $((ctl_slope + SLOPE_KB)) kB" "${slope} kB" "slurmd VmRSS median growth per 20 launches with memcore (without: ${ctl_slope} kB)"
assert_eq "$pid" "$(cat "$MC_WORK/run/slurmd.pid")" "the same slurmd throughout"
assert_node_idle "node IDLE after $STEPS launches"
sleep 0.5
new=$(comm -13 <(echo "$before") <(owncgs) | grep . || true)
mc_log "memcore cgroups left after $STEPS launches: $(grep -c . <<<"$new")"
assert_eq "" "$new" "no memcore cgroup left behind after $STEPS launches"
left=$(pgrep -f "slurmstepd" | while read -r p; do _mc_tagged "$p" && echo "$p"; done)
assert_eq "" "$left" "no slurmstepd left behind"
