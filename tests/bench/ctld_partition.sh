#!/bin/bash
# tests/bench/ctld_partition.sh - what one `memcore check --partition`
# costs against a slurmctld of MC_BENCH_CTLD_NODES (default 10,000) nodes
# in three shapes, State=CLOUD (powered down; PrivateData=cloud shows them
# to the node API): a slurmctld alone (munged and slurmctld of
# tests/integration/lib.sh, no slurmd). The call is the one the cli_filter
# makes, `memcore check --json --partition gpu --gpus 8 --mem 800G --cpus-per-gpu 6`, timed
# MC_BENCH_CTLD_CALLS (default 30) times in three ways:
#   none: MEMCORE_CACHE_DIR=none (no shape cache: the whole node table on
#         every call, as before cli/mc_shape_cache.c)
#   cold: the shape cache emptied before each call (a full load, then the
#         cache written)
#   warm: the cache in place and slurmctld unchanged (two "no change"
#         answers and the cache file)
#   busy: warm, but a node's state changed before each call (scontrol
#         update State=DRAIN, then RESUME, outside the timing), as a job
#         starting or ending anywhere does: the node table's update time
#         moves, the partitions' and slurm.conf's do not; sdiag must count
#         no node table load (REQUEST_NODE_INFO) over these calls
# Wall time (bash EPOCHREALTIME around the call) and peak RSS (GNU time's
# %M, KiB) per call; the medians are the figures. Every answer must be the
# same JSON as the first uncached one, or the bench fails.
# Prints name=value lines; writes the Markdown section to
# $B/bench/raw/ctld_partition.md, and into BENCHMARKS.md between its
# markers when run alone with MC_BENCH_UPDATE=1 (tests/bench/run.sh
# includes the section itself).
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
B=${MEMCORE_BUILD:-$top/build}
RAW=$B/bench/raw
NODES=${MC_BENCH_CTLD_NODES:-10000}
CALLS=${MC_BENCH_CTLD_CALLS:-30}
mkdir -p "$RAW"
[ -x "$B/memcore" ] || { echo "bench: build first (make)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench: GNU time missing (make deps DEPS_TARGET=bench)" >&2; exit 2; }

MC_NAME=bench_ctld
MC_GPUS=0 MC_DEBUG=info
# shellcheck source=../integration/lib.sh
. "$top/tests/integration/lib.sh"

# Three shapes, a third of the nodes each: 8 x h100 (2 x 56 cores x 2
# threads, 2000 GiB), 4 x a100 (2 x 32 x 1, 1000 GiB), 8 x l40s (2 x 48 x
# 2, 1500 GiB). Powered-down cloud nodes: no slurmd is ever asked.
n1=$((NODES / 3)) n2=$((2 * NODES / 3))
w=${#NODES}
rng() { printf 'cn[%0*d-%0*d]' "$w" "$1" "$w" "$2"; }
eval "_mc_write_configs_plain() $(declare -f _mc_write_configs | tail -n +2)"
_mc_write_configs() {
	_mc_write_configs_plain
	awk -v a="NodeName=$(rng 1 "$n1") Sockets=2 CoresPerSocket=56 ThreadsPerCore=2 RealMemory=2048000 Gres=gpu:h100:8 State=CLOUD" \
	    -v b="NodeName=$(rng $((n1 + 1)) "$n2") Sockets=2 CoresPerSocket=32 ThreadsPerCore=1 RealMemory=1024000 Gres=gpu:a100:4 State=CLOUD" \
	    -v c="NodeName=$(rng $((n2 + 1)) "$NODES") Sockets=2 CoresPerSocket=48 ThreadsPerCore=2 RealMemory=1536000 Gres=gpu:l40s:8 State=CLOUD" \
	    -v p="PartitionName=gpu Nodes=$(rng 1 "$NODES") Default=YES MaxTime=INFINITE State=UP" '
		/^NodeName=/ { print a; print b; print c; next }
		/^PartitionName=/ { print p; next }
		{ print }
		END { print "PrivateData=cloud"
		      print "SuspendProgram=/bin/true"; print "ResumeProgram=/bin/true"
		      print "SuspendTime=600"; print "ResumeTimeout=600" }' \
		"$SLURM_CONF" >"$SLURM_CONF.b" && mv "$SLURM_CONF.b" "$SLURM_CONF"
}
_mc_start_nodes() { :; }	# a slurmctld alone
MC_START_TIMEOUT=300
mc_cluster_start

CONF=$MC_CONF_DIR/memcore.conf
echo "GpuTypeMemory=h100:80G,a100:40G,l40s:48G" >"$CONF"
CACHE=$MC_WORK/shape-cache
seen=$(sinfo -h -p gpu -o %D)
[ "$seen" = "$NODES" ] || mc_die "sinfo sees '$seen' nodes in partition gpu, not $NODES"

# CPU time of this shell's waited-for children (user + system, µs), from
# bash's times (ms resolution) just before and after the call, in this
# shell (a $(...) subshell's children are not these): the call's own CPU,
# whatever the shared machine's load.
cpu_us() {
	tail -n1 "$1" | awk '{ t = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] } printf "%d", t * 1000000 }'
}
call() { # DIR OUT: one call; appends "wall-us rss-kib cpu-us" to OUT; its JSON to $RAW/ctld_last.json
	local t0 t1 rc
	times >"$RAW/ctld_times0"
	t0=${EPOCHREALTIME/[.,]/}
	MEMCORE_CACHE_DIR=$1 /usr/bin/time -f %M -o "$RAW/ctld_rss" \
		"$B/memcore" check --config "$CONF" --json --partition gpu --gpus 8 --mem 800G --cpus-per-gpu 6 \
		>"$RAW/ctld_last.json" 2>"$RAW/ctld_last.err"
	rc=$?
	t1=${EPOCHREALTIME/[.,]/}
	times >"$RAW/ctld_times1"
	[ $rc = 0 ] || mc_die "memcore check exit $rc: $(cat "$RAW/ctld_last.err")"
	[ -s "$RAW/ctld_last.err" ] && mc_die "memcore check said: $(cat "$RAW/ctld_last.err")"
	# wall µs, peak RSS KiB, CPU (user + system) µs
	echo "$((t1 - t0)) $(tail -n1 "$RAW/ctld_rss") $(($(cpu_us "$RAW/ctld_times1") - $(cpu_us "$RAW/ctld_times0")))" >>"$2"
	if [ -z "${REF:-}" ]; then REF=$(cat "$RAW/ctld_last.json")
	else [ "$(cat "$RAW/ctld_last.json")" = "$REF" ] || mc_die "another answer with $1: $(diff <(echo "$REF") "$RAW/ctld_last.json")"; fi
}
for mode in none cold warm busy; do : >"$RAW/ctld_$mode.txt"; done
node_rpcs() { sdiag | awk '$1 == "REQUEST_NODE_INFO" { sub(/.*count:/, ""); print $1 + 0; exit }'; }
call none /dev/null	# warm-up: slurmctld's first dump, page cache
for ((i = 0; i < CALLS; i++)); do
	call none "$RAW/ctld_none.txt"
	rm -rf "$CACHE"
	call "$CACHE" "$RAW/ctld_cold.txt"
done
call "$CACHE" /dev/null	# the cache in place
for ((i = 0; i < CALLS; i++)); do call "$CACHE" "$RAW/ctld_warm.txt"; done
rpc0=$(node_rpcs)
for ((i = 0; i < CALLS; i++)); do
	st=(State=RESUME)
	[ $((i % 2)) = 0 ] && st=(State=DRAIN Reason=bench)
	scontrol update NodeName="$(printf 'cn%0*d' "$w" $((i / 2 + 1)))" "${st[@]}" || mc_die "scontrol update ${st[*]} failed"
	call "$CACHE" "$RAW/ctld_busy.txt"
done
busy_loads=$(($(node_rpcs) - rpc0))
[ "$busy_loads" = 0 ] || mc_die "node state changes made $busy_loads node table loads over $CALLS calls (sdiag REQUEST_NODE_INFO)"
cache_bytes=$(stat -c %s "$CACHE"/shapes-* | head -n1)
jq -e '.nodes == '"$NODES"' and (.shapes | length) == 3' "$RAW/ctld_last.json" >/dev/null ||
	mc_die "the answer does not cover $NODES nodes in 3 shapes: $(head -c 600 "$RAW/ctld_last.json")"

med() { awk -v k="$2" '{print $k}' "$1" | sort -n | awk '{v[NR]=$1} END {if (NR % 2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
ms() { awk -v u="$1" 'BEGIN {printf "%.1f", u / 1000}'; }
mb() { awk -v k="$1" 'BEGIN {printf "%.1f", k / 1024}'; }
for mode in none cold warm busy; do
	eval "T_$mode=$(med "$RAW/ctld_$mode.txt" 1) R_$mode=$(med "$RAW/ctld_$mode.txt" 2) C_$mode=$(med "$RAW/ctld_$mode.txt" 3)"
done
commit=$(git -C "$top" rev-parse --short HEAD 2>/dev/null)$(git -C "$top" diff --quiet HEAD 2>/dev/null || echo "+changes")
goal() { awk -v t="$1" -v r="$2" 'BEGIN {exit !(t <= 50000 && r <= 10240)}' && echo meets || echo MISSES; }

cat >"$RAW/ctld_partition.md" <<EOF
<!-- ctld_partition: written by tests/bench/ctld_partition.sh -->
## memcore check --partition at $NODES nodes

\`memcore check --json --partition gpu --gpus 8 --mem 800G --cpus-per-gpu 6\` (the call the
cli_filter makes) against a slurmctld alone (no slurmd) of $NODES State=CLOUD
nodes in three shapes (8 x h100, 4 x a100, 8 x l40s; PrivateData=cloud),
$CALLS calls each, medians; memcore at $commit, $(date -u +%Y-%m-%dT%H:%MZ),
on this machine ($(nproc) CPUs, shared). Peak RSS is GNU time's %M.

| call | median wall | median CPU (user + sys) | median peak RSS | goal (<= 50 ms, <= 10 MB) |
|---|---|---|---|---|
| no shape cache (MEMCORE_CACHE_DIR=none: the whole node table each call) | $(ms "$T_none") ms | $(ms "$C_none") ms | $(mb "$R_none") MB | $(goal "$T_none" "$R_none") |
| cold (cache emptied before each call: full load, cache written) | $(ms "$T_cold") ms | $(ms "$C_cold") ms | $(mb "$R_cold") MB | $(goal "$T_cold" "$R_cold") |
| warm, quiet (cache in place, slurmctld unchanged: two "no change" answers) | $(ms "$T_warm") ms | $(ms "$C_warm") ms | $(mb "$R_warm") MB | $(goal "$T_warm" "$R_warm") |
| warm, busy (a node drained or resumed before each call: sdiag counted $busy_loads node table loads in $CALLS calls) | $(ms "$T_busy") ms | $(ms "$C_busy") ms | $(mb "$R_busy") MB | $(goal "$T_busy" "$R_busy") |

Load average when measured: $(cut -d' ' -f1-3 /proc/loadavg) (the machine is shared:
wall times grow with the load; CPU time is the call's own, from bash's
times around it, at 1 ms resolution).

A cold call is a full load, and stays one: its time and memory are
libslurm's slurm_load_node() receiving, hashing and unpacking the whole
node table (perf: most of it in slurm_unpack_received_msg and the message
hash), the floor of any call that needs the nodes; it misses the goal. The
cache turns the calls after it into two "no change" answers
(slurm_load_partitions and slurm_load_ctl_conf with the cached
last_update) for as long as slurmctld's partitions and configuration stay
put. Node state changes (a job starting or ending anywhere, a drain, a
power-up) do not move those, so a busy cluster stays warm (the busy row);
a reconfigure, a restart of slurmctld or a partition update makes the next
call one full load. What the two times cannot see (a node's Gres changed
with scontrol update, a node registering other resources, dynamic nodes)
can leave the cache stale until then: memcore then confirms any refusal
from the cache with a fresh load (one full load, on a refusal only), and
a let-through from stale shapes is judged again by the plugin at launch
(tests/integration/test_59_shape_cache.sh, memcore(8)).

The cache file for the partition holds $cache_bytes bytes. Every answer was
the same JSON. Raw (wall µs, KiB, CPU µs per call): build/bench/raw/ctld_{none,cold,warm,busy}.txt.
<!-- /ctld_partition -->
EOF
if [ "${MC_BENCH_UPDATE:-0}" = 1 ]; then
	out=$top/BENCHMARKS.md
	if grep -q '^<!-- ctld_partition' "$out"; then
		awk -v f="$RAW/ctld_partition.md" '
			/^<!-- ctld_partition/ { while ((getline l < f) > 0) print l; skip = 1; next }
			/^<!-- \/ctld_partition/ { skip = 0; next }
			!skip { print }' "$out" >"$out.new" && mv "$out.new" "$out"
	else
		{ echo; cat "$RAW/ctld_partition.md"; } >>"$out"
	fi
	echo "bench: updated $out" >&2
fi
cat <<EOF
ctld_partition_nodes=$NODES
ctld_partition_ms_none=$(ms "$T_none")
ctld_partition_ms_cold=$(ms "$T_cold")
ctld_partition_ms_warm=$(ms "$T_warm")
ctld_partition_ms_busy=$(ms "$T_busy")
ctld_partition_busy_node_loads=$busy_loads
ctld_partition_rss_mb_none=$(mb "$R_none")
ctld_partition_rss_mb_cold=$(mb "$R_cold")
ctld_partition_rss_mb_warm=$(mb "$R_warm")
ctld_partition_rss_mb_busy=$(mb "$R_busy")
ctld_partition_cpu_ms_none=$(ms "$C_none")
ctld_partition_cpu_ms_cold=$(ms "$C_cold")
ctld_partition_cpu_ms_warm=$(ms "$C_warm")
ctld_partition_cpu_ms_busy=$(ms "$C_busy")
EOF
