#!/bin/bash
# tests/bench/run.sh - make bench: what memcore costs per step launch.
#
# 1. bench_load (no Slurm): node-facts cache read vs hwloc loads (XML and
#    live) for this machine and the 256-PU H200 node; verdict + binding
#    plan for an 8-GPU step on every topology in tests/data.
# 2. A test cluster (tests/integration/lib.sh) whose node claims the H200
#    node (2 x 64 cores x 2 threads, 4 GPUs, its hwloc XML as TopologyFile),
#    in two configurations, one cluster each: "taskcgroup" (Slurm's
#    task/cgroup owns the step's limit) and "own" (task/none: memcore's
#    own cgroup). In each, `srun -N1 -n1 --gpus=1 --mem=150G true` with
#    memcore loaded (A) and without (B), interleaved A B A B by rewriting
#    plugstack.conf, MC_BENCH_LAUNCHES (default 100) of each; then
#    MC_BENCH_PROFILE_LAUNCHES (default 30) more with slurmd at debug,
#    where memcore's hook timers say how much of a launch is memcore's.
#    In "own", slurmd's RSS over MC_BENCH_RSS_LAUNCHES (default 1000)
#    launches with memcore, against the same loop without it for the noise
#    band.
# 3. tests/bench/launch_multinode.sh: the same ratio for a 3-node
#    `srun -N3 --gpus-per-node=1 true` on the multi-node test cluster.
# 4. tests/bench/ctld_partition.sh: one `memcore check --partition` against
#    a slurmctld alone of 10,000 State=CLOUD nodes, without the shape cache,
#    cold and warm: median wall time and peak RSS per call.
# Writes BENCHMARKS.md at the top of the repo, prints name=value lines last.
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
B=${MEMCORE_BUILD:-$top/build}
H200=$top/tests/data/lenovo-sd665nv3-2xepyc9555-nps4-4xh200.xml
N=${MC_BENCH_LAUNCHES:-100}
NRSS=${MC_BENCH_RSS_LAUNCHES:-1000}
OUT=${MC_BENCH_OUT:-$top/BENCHMARKS.md}
RAW=$B/bench/raw
mkdir -p "$RAW"
[ -x "$B/bench/bench_load" ] || { echo "bench: build first (make bench)" >&2; exit 2; }

# -- 1. without Slurm ---------------------------------------------------------
echo "bench: loads and verdicts (bench_load)" >&2
"$B/bench/bench_load" "$RAW/loads.txt" "$top/tests/data" "$H200" >"$RAW/loads.out" || exit 1
val() { sed -n "s/^$1=//p" "$RAW/loads.out"; }
# A running step's live gauges file, rewritten: on disk (/var/tmp, as a
# node_exporter textfile directory usually is) and on tmpfs (/dev/shm).
echo "bench: live gauges file writes (bench_gauges)" >&2
"$B/bench/bench_gauges" "$RAW/gauges_disk.txt" >"$RAW/gauges_disk.out" || exit 1
gshm=$(mktemp -d /dev/shm/mc-bench-gauges.XXXXXX) || exit 1
"$B/bench/bench_gauges" "$RAW/gauges_tmpfs.txt" "$gshm" >"$RAW/gauges_tmpfs.out" || exit 1
rmdir "$gshm"
gval() { sed -n "s/^$2=//p" "$RAW/gauges_$1.out"; }
gfs=$(df -T /var/tmp | awk 'NR == 2 {print $2}')

# -- 1b. the kernel's price of moving a process into a memory cgroup --------
# What memcore's own cgroup costs a task is mostly one write to
# cgroup.procs. Timed here without Slurm: a fresh cgroup under this
# shell's memory cgroup (v1), a sleeping process moved in (bash's builtin
# echo: no fork in the timing) and back, 5 times 200 ms apart (the pause a
# step launch leaves between two moves).
cg_move_probe() {
	local mnt base d p i t0 t1
	mnt=$(awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ {print $2; exit}' /proc/mounts)
	[ -n "$mnt" ] || { echo "no cgroup v1 memory hierarchy" >"$RAW/cg_move.txt"; return; }
	base=$mnt$(awk -F: '$2 ~ /(^|,)memory(,|$)/ {print $3}' /proc/self/cgroup)
	: >"$RAW/cg_move.txt"; : >"$RAW/cg_mkdir.txt"
	for ((i = 0; i < 5; i++)); do
		d=$base/memcore_bench_probe_$$_$i
		t0=${EPOCHREALTIME/[.,]/}
		mkdir "$d" 2>/dev/null || return
		t1=${EPOCHREALTIME/[.,]/}
		echo $((t1 - t0)) >>"$RAW/cg_mkdir.txt"
		sleep 30 & p=$!
		sleep 0.2
		t0=${EPOCHREALTIME/[.,]/}
		echo "$p" >"$d/cgroup.procs"
		t1=${EPOCHREALTIME/[.,]/}
		echo $((t1 - t0)) >>"$RAW/cg_move.txt"
		echo "$p" >"$base/cgroup.procs"
		kill "$p"; wait "$p" 2>/dev/null
		rmdir "$d"
	done
}
echo "bench: cgroup move probe" >&2
cg_move_probe
# memcore's own calls for the own cgroup, each timed (tests/bench/cg_probe.c):
# 200 ms after the last move (as between launches), and back to back.
if [ -x "$B/bench/cg_probe" ]; then
	"$B/bench/cg_probe" 9 200 >"$RAW/cg_probe.txt" 2>&1 || true
	"$B/bench/cg_probe" 9 0 >"$RAW/cg_probe_b2b.txt" 2>&1 || true
fi
probe_us() { sed -n "s/^$2_us=//p" "$RAW/$1" 2>/dev/null; }

# -- 2. on a test cluster, in both configurations ---------------------------
MC_NAME=bench
MC_SOCKETS=2 MC_CORES_PER_SOCKET=64 MC_THREADS_PER_CORE=2
MC_REAL_MEMORY=1547000 MC_GPUS=4 MC_DEBUG=info
MC_TEST_TIMEOUT=1800
P=${MC_BENCH_PROFILE_LAUNCHES:-30}
# shellcheck source=../integration/lib.sh
. "$top/tests/integration/lib.sh"

# --mem=150G (the H200 step needs 140.80 GiB): a memory figure to hold, by Slurm's task/cgroup
# (config "taskcgroup") or by memcore's own memcore_<job>/memcore_<job>_<step> cgroup
# (config "own", task/none + proctrack/linuxproc).
launch() { # prints wall microseconds of one launch; fails on a failed step
	local t0=${EPOCHREALTIME/[.,]/} t1
	timeout 60 srun -N1 -n1 --gpus=1 --mem=150G true >/dev/null 2>"$RAW/last.err" || return 1
	t1=${EPOCHREALTIME/[.,]/}
	echo $((t1 - t0))
}
slurmd_rss() { awk '/^VmRSS/ {print $2}' "/proc/$(_mc_pid_of slurmd)/status"; }
med() { sort -n "$1" | awk '{v[NR]=$1} END {if (NR % 2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
# ab COUNT SUFFIX: COUNT launches with memcore and COUNT without,
# interleaved A B A B, into launch_{with,without}_SUFFIX.txt
ab() {
	local n=$1 sfx=$2 i fails=0
	: >"$RAW/launch_with_$sfx.txt"; : >"$RAW/launch_without_$sfx.txt"
	for ((i = 0; i < n; i++)); do
		mc_set_plugstack "$WITH"
		launch >>"$RAW/launch_with_$sfx.txt" || fails=$((fails + 1))
		mc_set_plugstack "$WITHOUT"
		launch >>"$RAW/launch_without_$sfx.txt" || fails=$((fails + 1))
	done
	[ $fails = 0 ] || mc_die "$fails launches failed: $(cat "$RAW/last.err")"
}
# RSS: the same loop without memcore first (the noise band), then with.
rss_loop() { # N FILE: launches, slurmd VmRSS (KiB) every 100
	local n=$1 f=$2 k
	: >"$f"
	for ((k = 0; k < 20; k++)); do launch >/dev/null; done
	slurmd_rss >>"$f"
	for ((k = 1; k <= n; k++)); do
		launch >/dev/null || mc_die "launch failed: $(cat "$RAW/last.err")"
		[ $((k % 100)) = 0 ] && slurmd_rss >>"$f"
	done
}
# profile CFG: memcore's own timers (debug lines of spank/memcore.c and
# mc_stepd.c) over P launches with memcore, slurmd at debug level: how
# much of a launch is spent inside memcore's hooks, hook by hook.
profile() {
	local cfg=$1 log=$MC_LOG_DIR/slurmd.log from
	sed -i 's/^SlurmdDebug=.*/SlurmdDebug=debug/' "$SLURM_CONF"
	mc_set_plugstack "$WITH"
	mc_restart_slurmd || mc_die "slurmd at debug did not start"
	from=$(wc -l <"$log")
	ab "$P" "prof_$cfg"
	tail -n +"$((from + 1))" "$log" >"$RAW/profile_$cfg.log"
	# field FILE REGEX: the numbers after each "name " in the lines
	local f=$RAW/profile_$cfg.log
	grep -o 'memcore took [0-9]* us in slurmstepd ([^)]*)' "$f" |
		sed 's/[^0-9 ]//g' >"$RAW/prof_stepd_$cfg.txt"
	grep -o 'memcore took [0-9]* us before the program ([^)]*)' "$f" |
		sed 's/[^0-9 ]//g' >"$RAW/prof_task_$cfg.txt"
	grep -o 'verdict computed in [0-9]* us' "$f" | awk '{print $4}' >"$RAW/prof_verdict_$cfg.txt"
	local k
	for k in 1 2 3 4 5 6 7; do
		awk -v k=$k '{print $k}' "$RAW/prof_stepd_$cfg.txt" >"$RAW/tmp"
		eval "PROF_${cfg}_stepd_$k=\$(med \"\$RAW/tmp\")"
	done
	for k in 1 2 3; do
		awk -v k=$k '{print $k}' "$RAW/prof_task_$cfg.txt" >"$RAW/tmp"
		eval "PROF_${cfg}_task_$k=\$(med \"\$RAW/tmp\")"
	done
	eval "PROF_${cfg}_verdict=\$(med \"\$RAW/prof_verdict_$cfg.txt\")"
	eval "PROF_${cfg}_n=\$(wc -l <\"\$RAW/prof_stepd_$cfg.txt\")"
}

# bench_config CFG: a cluster in this configuration; N + N interleaved
# launches; slurmd's RSS (config own only); the profile.
bench_config() {
	local cfg=$1
	mc_cluster_start
	CONF=$MC_CONF_DIR/memcore.conf
	CACHE=$MC_WORK/state/d/memcore-node-facts
	# DataloaderWorkers=0: the bare `srun -n1 --gpus=1` (one core) fits,
	# so both sides run the same program and memcore's whole path is
	# timed. Bind=none: the claimed node's GPU 0 sits on NUMA node 1
	# (CPUs 16-31), which this 2-CPU machine cannot give a task, so
	# binding could only print its warning on every step; on a real node
	# it binds silently. Its cost, the plan, is in verdict_us.
	printf 'TopologyFile=%s\nDataloaderWorkers=0\nBind=none\n' "$H200" >"$CONF"
	WITH="required $MEMCORE_BUILD/memcore.so config=$CONF cache=$CACHE"
	WITHOUT="# memcore off"
	mc_set_plugstack "$WITH"
	mc_restart_slurmd || mc_die "slurmd with memcore did not start"
	[ -f "$CACHE" ] || mc_die "slurmd wrote no cache"
	echo "bench[$cfg]: $N + $N launches, interleaved" >&2
	local i
	for ((i = 0; i < 5; i++)); do launch >/dev/null; done   # warm caches
	ab "$N" "$cfg"
	# Which limit held the step: Slurm's (task/cgroup) or memcore's own.
	mc_set_plugstack "$WITH"
	srun -N1 -n1 --gpus=1 --mem=150G cat /proc/self/cgroup >"$RAW/cgroup_$cfg.txt" 2>&1
	eval "FALLBACKS_$cfg=\$(grep -c 'node facts from hwloc' \"\$MC_LOG_DIR/slurmd.log\")"
	if [ "$cfg" = own ]; then
		NNOISE=$(( NRSS / 2 > 100 ? NRSS / 2 : 100 ))
		echo "bench[$cfg]: slurmd RSS, $NNOISE launches without memcore, $NRSS with" >&2
		mc_set_plugstack "$WITHOUT"
		rss_loop "$NNOISE" "$RAW/rss_without.txt"
		mc_set_plugstack "$WITH"
		rss_loop "$NRSS" "$RAW/rss_with.txt"
	fi
	echo "bench[$cfg]: profile, $P + $P launches, slurmd at debug" >&2
	profile "$cfg"
	mc_cluster_stop 0
}

MC_TASK_PLUGIN=task/cgroup,task/affinity MC_PROCTRACK=proctrack/cgroup MC_CONSTRAIN_RAM=yes
bench_config taskcgroup
MC_TASK_PLUGIN=task/none MC_PROCTRACK=proctrack/linuxproc MC_CONSTRAIN_RAM=no
bench_config own

# -- 3. a 3-node step (its own cluster: lib_multinode.sh) -------------------
echo "bench: 3-node launches (launch_multinode.sh)" >&2
bash "$here/launch_multinode.sh" >"$RAW/launch3n.out" || mc_die "3-node launches failed"
val3() { sed -n "s/^$1=//p" "$RAW/launch3n.out"; }

# -- 4. memcore check --partition at 10,000 nodes (a slurmctld of its own) ---
echo "bench: check --partition at cluster scale (ctld_partition.sh)" >&2
bash "$here/ctld_partition.sh" >"$RAW/ctld_partition.out" || mc_die "check --partition bench failed"
valc() { sed -n "s/^$1=//p" "$RAW/ctld_partition.out"; }

# -- figures ------------------------------------------------------------------
figures() { # CFG: RATIO_cfg MW_cfg MO_cfg PAIRED_cfg
	local cfg=$1 mw mo
	mw=$(med "$RAW/launch_with_$cfg.txt"); mo=$(med "$RAW/launch_without_$cfg.txt")
	eval "MW_$cfg=$mw MO_$cfg=$mo"
	eval "RATIO_$cfg=$(awk -v a="$mw" -v b="$mo" 'BEGIN {printf "%.3f", a / b}')"
	paste "$RAW/launch_with_$cfg.txt" "$RAW/launch_without_$cfg.txt" | awk '{print $1 - $2}' >"$RAW/tmp"
	eval "PAIRED_$cfg=$(med "$RAW/tmp")"
	paste "$RAW/launch_with_prof_$cfg.txt" "$RAW/launch_without_prof_$cfg.txt" | awk '{print $1 - $2}' >"$RAW/tmp"
	eval "PAIRED_PROF_$cfg=$(med "$RAW/tmp")"
}
figures taskcgroup
figures own
ratio=$RATIO_own
# slurmd grows by itself (it remembers finished jobs): the baseline rate
# without memcore is taken out; the noise band is the spread of the
# baseline's 100-launch increments, over as many launches.
raw_growth=$(awk 'NR==1 {f=$1} {l=$1} END {print l - f}' "$RAW/rss_with.txt")
base_growth=$(awk 'NR==1 {f=$1} {l=$1} END {print l - f}' "$RAW/rss_without.txt")
base_scaled=$(awk -v g="$base_growth" -v a="$NNOISE" -v b="$NRSS" 'BEGIN {printf "%d", g * b / a}')
growth=$((raw_growth - base_scaled))
noise=$(awk -v b="$NRSS" 'NR>1 {d=$1-p; if (NR==2 || d<mn) mn=d; if (NR==2 || d>mx) mx=d} {p=$1} END {printf "%d", (mx - mn) * b / 100}' "$RAW/rss_without.txt")
incr() { awk 'NR>1 {printf "%s%d", (NR > 2 ? " " : ""), $1 - p} {p=$1}' "$1"; }
load_med() { grep "^$1 " "$RAW/loads.txt" | awk '{print $2}' >"$RAW/tmp"; med "$RAW/tmp"; }
row() { grep "^$1 " "$RAW/loads.txt" | awk '{printf "%s%.0f", (NR > 1 ? " " : ""), $2}'; }
pv() { eval "echo \${PROF_$1_$2:-?}"; }	# profile value
# memcore's own time on a launch's path, median µs: slurmstepd's hooks
# before the task (init + init_post_opt + user_init) and the task's hooks;
# the hooks after the task (task_exit, exit) apart.
own_before() { awk -v a="$(pv "$1" stepd_2)" -v b="$(pv "$1" stepd_3)" -v c="$(pv "$1" stepd_4)" -v e="$(pv "$1" stepd_5)" -v d="$(pv "$1" task_1)" 'BEGIN {print a + b + c + e + d}'; }
own_after() { awk -v a="$(pv "$1" stepd_6)" -v b="$(pv "$1" stepd_7)" 'BEGIN {print a + b}'; }
profile_table() { # CFG
	local c=$1
	cat <<TABLE
| memcore hook (median µs over $(pv "$c" n) steps, slurmd at debug) | $c |
|---|---|
| slurmstepd: init (options) | $(pv "$c" stepd_2) |
| slurmstepd: init_post_opt (step read, policy, cache, verdict) | $(pv "$c" stepd_3) |
| ... of which the verdict | $(pv "$c" verdict) |
| slurmstepd: user_init (the step's memory cgroup) | $(pv "$c" stepd_4) |
| slurmstepd: task_post_fork (own cgroup: move the task in) | $(pv "$c" stepd_5) |
| task: task_init_privileged + task_init, before the program | $(pv "$c" task_1) |
| ... task_init_privileged (deliver the verdict; tighten Slurm's limit) | $(pv "$c" task_2) |
| ... task_init (bind, export MEMCORE_*) | $(pv "$c" task_3) |
| slurmstepd: task_exit (OOM check, own cgroup removal after the last) | $(pv "$c" stepd_6) |
| slurmstepd: exit | $(pv "$c" stepd_7) |
| before the task runs / after it ends | $(own_before "$c") / $(own_after "$c") |
| launch with memcore minus without, paired median, this phase | $(eval echo "\$PAIRED_PROF_$c") |
TABLE
}
over() { awk -v r="$1" 'BEGIN {exit !(r > 1.02)}'; }
gap_note() { # CFG: which part of the gap is memcore's, from the profile
	local c=$1 paired before after rest libs spread
	paired=$(eval echo "\$PAIRED_PROF_$c")
	before=$(own_before "$c"); after=$(own_after "$c")
	rest=$(awk -v p="$paired" -v b="$before" -v a="$after" 'BEGIN {r = p - b - a; printf "%d", r < 0 ? 0 : r}')
	libs=$(ldd "$MEMCORE_BUILD/memcore.so" | awk '$1 ~ /hwloc|cgroup|udev/ {printf "%s%s", n++ ? ", " : "", $1}')
	spread=$(sort -n "$RAW/launch_without_$c.txt" | awk '{v[NR]=$1} END {printf "%d to %d", v[int(NR/4)+1], v[int(3*NR/4)]}')
	echo "- $c: init_post_opt took $(pv "$c" stepd_3) µs, of which the verdict $(pv "$c" verdict) µs; the rest is reading the MEMCORE_* variables, the step and the policy, and the node-facts cache."
	echo "- $c: launch_overhead_ratio $(eval echo "\$RATIO_$c") misses 1.02. In the profile phase a launch with memcore took $paired µs more than without (paired median); memcore's own hooks account for $before µs before the task starts and $after µs after it ends (table above). The remaining $rest µs are not spent in memcore's hooks, and this profile does not split them further: what is left is loading memcore.so and the libraries it links ($libs) into srun and slurmstepd, Slurm's SPANK option handling, and noise: on this shared 2-core VM the middle half of the launches without memcore took $spread µs, a spread larger than that remaining part."
	[ "$c" = own ] && [ -s "$RAW/cg_move.txt" ] &&
		echo "- own: of memcore's part, $(pv own stepd_5) µs is task_post_fork (making the own cgroup and moving the task in); the kernel alone takes $(med "$RAW/cg_move.txt") µs (median) for a first move into a fresh cgroup (section above)."
}

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)
{
cat <<EOF
# memcore benchmarks

Written by \`make bench\` (tests/bench/run.sh) on $(date -u +%Y-%m-%dT%H:%MZ).
Reproduce: \`make check\` once (it installs the packages), then \`make bench\`
(as root; about 7 minutes here, more while other test clusters hold the
machine).

## Machine

- $(nproc) CPUs: ${cpu:-unknown}; $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo) RAM; $(uname -sr)
- Slurm $(slurmd -V | awk '{print $2}'), hwloc $(pkg-config --modversion hwloc 2>/dev/null), memcore $(sed -n 's/^VERSION *:= *//p' "$top/Makefile")
- The test cluster is tests/integration/lib.sh's single node (slurmctld, slurmd,
  munged on loopback), claiming the Lenovo SD665-N V3 (2 x EPYC 9555, 256 PUs,
  4 x H200): \`TopologyFile=tests/data/$(basename "$H200")\`, fake GPU devices,
  \`DataloaderWorkers=0\` so that \`srun -n1 --gpus=1\` (one core) fits.

## Headline

Two configurations, each on a cluster of its own, each with its launches
with and without memcore interleaved A B A B:
**taskcgroup** (TaskPlugin=task/cgroup,task/affinity, proctrack/cgroup,
ConstrainRAMSpace=yes: Slurm's task/cgroup owns the step's limit, memcore
checks it) and **own** (task/none, proctrack/linuxproc: memcore makes,
limits and removes the step's own memcore_<job>_<step> cgroup, and the job's memcore_<job> at its end).

| figure | value | goal |
|---|---|---|
| launch_overhead_ratio, taskcgroup | $RATIO_taskcgroup (median $MW_taskcgroup µs with memcore / $MO_taskcgroup µs without; paired median difference $PAIRED_taskcgroup µs) | <= 1.02 |
| launch_overhead_ratio, own | $RATIO_own (median $MW_own µs with memcore / $MO_own µs without; paired median difference $PAIRED_own µs) | <= 1.02 |
| launch_overhead_ratio, 3 nodes (\`srun -N3 --gpus-per-node=1 true\`, $(val3 launch_3node_launches) each) | $(val3 launch_overhead_ratio_3node) (median $(val3 launch_3node_median_us_with) µs / $(val3 launch_3node_median_us_without) µs) | <= 1.02 |
| node_facts_load_us (cache read, H200 / this machine) | $(val node_facts_load_us_h200) / $(val node_facts_load_us_this) | <= 100 |
| topology_xml_load_us (hwloc XML, H200 / this machine) | $(val topology_xml_load_us_h200) / $(val topology_xml_load_us_this) | - |
| topology_live_load_us (hwloc live, this machine) | $(val topology_live_load_us_this) | - |
| verdict_us (verdict + binding plan, slowest topology's median) | $(val verdict_us_max) | <= 10 |
| sample_cpu_us (one sample of a step's memory cgroup, with its peaks and timeline, CPU time: SampleInterval=1s costs this per second) | $(val sample_cpu_us) | <= 50 |
| timeline_add_ns (the timeline's share of a sample: one point of a 10-hour step's series) | $(val timeline_add_ns) | - |
| gauge_write_cpu_us (one rewrite of a running step's live gauges file, CPU time; at most one a second per step, on top of that second's sample) | $(gval disk gauge_write_cpu_us) on $gfs (/var/tmp; $(gval disk gauge_write_wall_us) µs wall), $(gval tmpfs gauge_write_cpu_us) on tmpfs ($(gval tmpfs gauge_write_wall_us) µs wall) | - |
| slurmd_rss_growth_kib over $NRSS launches with memcore (own), beyond slurmd's own growth | $growth (noise band +-$noise) | 0 beyond noise |

slurmd's VmRSS grew $raw_growth KiB over $NRSS launches with memcore and
$base_growth KiB over $NNOISE launches without it ($base_scaled KiB scaled to
$NRSS): slurmd grows by itself as it remembers finished jobs. Growth per 100
launches, with memcore: $(incr "$RAW/rss_with.txt"); without: $(incr "$RAW/rss_without.txt") KiB.

$(cat "$RAW/ctld_partition.md")

## Where memcore's time goes (profile)

memcore times its own hooks (spank/memcore.c, one debug line per step in
slurmstepd and one per task), so the part of a launch spent inside memcore
is measured, not inferred: $P more launches with and without memcore per
configuration, interleaved, with SlurmdDebug=debug.

$(profile_table taskcgroup)

$(profile_table own)

The kernel's part, without Slurm (section 1b of tests/bench/run.sh):
moving a sleeping process into a fresh memory cgroup, 200 ms after the
previous move, took $(tr '\n' ' ' <"$RAW/cg_move.txt")µs (median $(med "$RAW/cg_move.txt")); making
the cgroup $(tr '\n' ' ' <"$RAW/cg_mkdir.txt")µs. A move right after another
takes tens of µs: the first write to cgroup.procs after a pause waits for
the kernel (cgroup v1's threadgroup lock and an RCU grace period), and
every step launch is such a first write. Slurm's task/cgroup pays for its
own cgroups on both sides of the taskcgroup comparison; memcore's own
cgroup pays it once more. (A prewarm that started the grace period from a
forked grandchild at init_post_opt was tried and removed: the fork cost
slurmstepd 2-4 ms on every GPU step, also where Slurm's task/cgroup holds
the limit and no own cgroup is made, for a gain the profile did not show.)

memcore's own calls for the own cgroup, without Slurm
(tests/bench/cg_probe.c: what task_post_fork does for the first task, then
the removal), median µs of 9, 200 ms apart / back to back:

| call | 200 ms apart | back to back |
|---|---|---|
$(for c in find_task_cgroup own_parent sweep mkdir constrain move_first move_second rmdir post_fork_total; do echo "| $c | $(probe_us cg_probe.txt $c) | $(probe_us cg_probe_b2b.txt $c) |"; done)

Everything but the first move into the fresh cgroup is a few hundred µs;
the first move is the kernel's wait (write(2) to cgroup.procs:
cgroup_threadgroup_rwsem's percpu_down_write waits for an RCU grace period
unless a move ran in the last few tens of ms, or the hierarchy is mounted
with favordynmods: see memcore(8), MEMORY, Cost).

The step's cgroup, as the task saw it:

- taskcgroup: $(grep memory "$RAW/cgroup_taskcgroup.txt" | head -n1)
- own: $(grep memory "$RAW/cgroup_own.txt" | head -n1)

## Goals

$(over "$RATIO_taskcgroup" && gap_note taskcgroup)
$(over "$RATIO_own" && gap_note own)
$(over "$RATIO_taskcgroup" || echo "- taskcgroup: launch_overhead_ratio $RATIO_taskcgroup meets its goal of 1.02.")
$(over "$RATIO_own" || echo "- own: launch_overhead_ratio $RATIO_own meets its goal of 1.02.")
$(awk -v u="$(val node_facts_load_us_h200)" 'BEGIN {exit !(u <= 100)}' && echo "- node_facts_load_us meets its goal (<= 100 µs): the cache is read instead of hwloc's $(val topology_xml_load_us_h200) µs XML load.")
$(awk -v u="$(val verdict_us_max)" 'BEGIN {exit !(u <= 10)}' && echo "- verdict_us meets its goal (<= 10 µs) on every topology in tests/data.")
$(awk -v g="$growth" -v n="$noise" 'BEGIN {exit !(g <= n)}' && echo "- slurmd_rss_growth_kib is within the noise band: no growth from memcore.")

## Method

- **Launches**: wall time of \`srun -N1 -n1 --gpus=1 --mem=150G true\` from fork
  to exit (bash \$EPOCHREALTIME), in each configuration $N with memcore and
  $N without, interleaved A B A B (SlurmdDebug=info):
  plugstack.conf is rewritten before each launch (srun and every slurmstepd
  read it afresh; slurmd loaded memcore at its start and wrote the
  node-facts cache). 5 launches first to warm up, not counted. Bind=none:
  the claimed node's GPU 0 sits on NUMA node 1, whose CPUs this 2-CPU VM
  cannot give a task, so binding could only print its warning on every
  step; the plan's cost is in verdict_us. Steps that
  fell back to hwloc during the runs: $FALLBACKS_taskcgroup (taskcgroup), $FALLBACKS_own (own) (0 means every step read the cache).
- **Loads** (tests/bench/bench_load.c, no Slurm): 50 calls each of
  mc_cache_read() on a cache written from the topology, mc_topology_load()
  from XML (this machine: its own live topology exported to XML first), and
  mc_topology_load() of the live machine (with PCI discovery, as slurmd
  does). Medians in µs.
- **Sampler** (tests/bench/bench_load.c, no Slurm): mc_cgread_read() of
  bench_load's own memory cgroup (memory.stat, the usage file and the OOM
  kill count, cpu.stat on v2: what slurmstepd's sampler thread reads each
  SampleInterval) with the sample added to the peaks and the timeline,
  CPU time of the thread per sample, median of 20 rounds of 500;
  timeline_add_ns: mc_timeline_add() alone over a 10-hour step at 1 s
  (36,000 samples), median of 20 rounds.
- **Live gauges** (tests/bench/bench_gauges.c, no Slurm):
  mc_gaugefile_write() of a step's gauges file, forced (format, create
  the temporary file O_EXCL, write, rename over the file: what the sampler
  thread does at most once a second), CPU time of the thread and wall time
  per write, median of 20 rounds of 200, in /var/tmp and in /dev/shm. On
  ext4 the rename over an existing file flushes the new file's data
  (auto_da_alloc): the wall time, spent in the sampler thread only.
- **Verdict**: 2000 times per topology: node summary, the step's GPU memory,
  mc_verdict_compute() and mc_plan_compute() (binding plan, topology/mc_plan.h)
  for an 8-GPU step (all GPUs where the node has fewer), from loaded facts;
  the median per topology, the headline is the slowest topology's median.
- **slurmd RSS**: VmRSS of slurmd after 20 warm-up launches and then every
  100 launches, first $NNOISE launches without memcore, then $NRSS with.
  slurmd_rss_growth_kib is the growth with memcore minus the growth
  without it scaled to the same number of launches; the noise band is the
  spread (max - min) of the baseline's 100-launch increments times
  $NRSS/100. memcore lives in slurmd only at its start (cache, start line);
  each step's plugin runs in its own slurmstepd, so growth would mean a
  leak in slurmd's side of the plugin.

## Medians and raw figures

Verdict + plan, median µs per topology:

$(sed -n 's/^verdict_us\[\(.*\)\]=\(.*\)/- \1: \2/p' "$RAW/loads.out")

Launch wall times, µs, in launch order:

- taskcgroup, with memcore: $(tr '\n' ' ' <"$RAW/launch_with_taskcgroup.txt")
- taskcgroup, without: $(tr '\n' ' ' <"$RAW/launch_without_taskcgroup.txt")
- own, with memcore: $(tr '\n' ' ' <"$RAW/launch_with_own.txt")
- own, without: $(tr '\n' ' ' <"$RAW/launch_without_own.txt")

Loads, µs, in call order:

- node_facts_load_us_h200: $(row node_facts_load_us_h200)
- node_facts_load_us_this: $(row node_facts_load_us_this)
- topology_xml_load_us_h200: $(row topology_xml_load_us_h200)
- topology_xml_load_us_this: $(row topology_xml_load_us_this)
- topology_live_load_us_this: $(row topology_live_load_us_this)

slurmd VmRSS samples, KiB (every 100 launches after warm-up):

- with memcore: $(tr '\n' ' ' <"$RAW/rss_with.txt")
- without: $(tr '\n' ' ' <"$RAW/rss_without.txt")

Every verdict sample: \`build/bench/raw/loads.txt\` (not kept in git).
EOF
} >"$OUT"

echo "bench: wrote $OUT" >&2
cat <<EOF
launch_overhead_ratio_taskcgroup=$RATIO_taskcgroup
launch_overhead_ratio_own=$RATIO_own
launch_overhead_ratio_3node=$(val3 launch_overhead_ratio_3node)
launch_paired_diff_us_taskcgroup=$PAIRED_taskcgroup
launch_paired_diff_us_own=$PAIRED_own
memcore_hooks_before_task_us_taskcgroup=$(own_before taskcgroup)
memcore_hooks_before_task_us_own=$(own_before own)
memcore_hooks_after_task_us_taskcgroup=$(own_after taskcgroup)
memcore_hooks_after_task_us_own=$(own_after own)
node_facts_load_us=$(val node_facts_load_us_h200)
node_facts_load_us_this=$(val node_facts_load_us_this)
topology_xml_load_us=$(val topology_xml_load_us_h200)
topology_xml_load_us_this=$(val topology_xml_load_us_this)
topology_live_load_us=$(val topology_live_load_us_this)
verdict_us=$(val verdict_us_max)
slurmd_rss_growth_kib=$growth
slurmd_rss_noise_kib=$noise
$(cat "$RAW/ctld_partition.out")
EOF
