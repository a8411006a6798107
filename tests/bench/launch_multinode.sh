#!/bin/bash
# tests/bench/launch_multinode.sh - launch_overhead_ratio of a 3-node step:
# `srun -N3 --gpus-per-node=1 true` on tests/integration/lib_multinode.sh's
# cluster (mc-n1, mc-n2: g4dn.metal, 8 GPUs; mc-n3: AC922, 4 GPUs; each node
# in its own namespaces), with memcore loaded and without, interleaved
# A B A B by rewriting plugstack.conf, MC_BENCH_LAUNCHES_3N (default 30) of
# each. Prints name=value lines (tests/bench/run.sh adds them to
# BENCHMARKS.md). DataloaderWorkers=0: one core per node fits, so both
# sides run the same program.
MC_NAME=bench3n
MC_DEBUG=info
. "$(cd "$(dirname "$0")/../integration" && pwd)/lib_multinode.sh"
N=${MC_BENCH_LAUNCHES_3N:-30}
RAW=${MEMCORE_BUILD}/bench/raw
mkdir -p "$RAW"
MC_MN_NODES="mc-n1:$MC_TOP/tests/data/aws-g4dn-metal-2xxeon8259cl-8xt4.xml
mc-n2:$MC_TOP/tests/data/aws-g4dn-metal-2xxeon8259cl-8xt4.xml
mc-n3:$MC_TOP/tests/data/ibm-ac922-lassen-2xpower9-4xv100.xml"
mc_mn_policy "DataloaderWorkers=0" "Bind=none"
mc_cluster_start
WITH=$(mc_mn_plugstack_line)
WITHOUT="# memcore off"

launch() { # wall microseconds of one launch; fails on a failed step
	local t0=${EPOCHREALTIME/[.,]/} t1
	timeout 60 srun -N3 -n3 --gpus-per-node=1 true >/dev/null 2>"$RAW/last3n.err" || return 1
	t1=${EPOCHREALTIME/[.,]/}
	echo $((t1 - t0))
}
for ((i = 0; i < 3; i++)); do launch >/dev/null; done   # warm up
: >"$RAW/launch3n_with.txt"; : >"$RAW/launch3n_without.txt"
for ((i = 0; i < N; i++)); do
	mc_set_plugstack "$WITH"
	launch >>"$RAW/launch3n_with.txt" || mc_die "launch with memcore failed: $(cat "$RAW/last3n.err")"
	mc_set_plugstack "$WITHOUT"
	launch >>"$RAW/launch3n_without.txt" || mc_die "launch without memcore failed: $(cat "$RAW/last3n.err")"
done
med() { sort -n "$1" | awk '{v[NR]=$1} END {if (NR % 2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
mw=$(med "$RAW/launch3n_with.txt"); mo=$(med "$RAW/launch3n_without.txt")
cat <<OUT
launch_overhead_ratio_3node=$(awk -v a="$mw" -v b="$mo" 'BEGIN {printf "%.3f", a / b}')
launch_3node_median_us_with=$mw
launch_3node_median_us_without=$mo
launch_3node_launches=$N
OUT
