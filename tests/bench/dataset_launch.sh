#!/bin/bash
# The launch cost of --dataset (BENCHMARKS.md, dataset_launch_ratio): srun
# -n1 --gpus=1 true with and without --dataset naming a tree of 10,000
# files on local disk, interleaved A B A B, N each (default 20), on
# tests/integration/lib.sh's cluster. srun walks the tree as the user
# (mc_dataset.h); slurmstepd only parses the figures.
# MEMCORE_BUILD=$PWD/build bash tests/bench/dataset_launch.sh
MC_NAME=bench_dataset
. "$(dirname "$0")/../integration/lib.sh"
N=${N:-20}
MC_SOCKETS=1 MC_CORES_PER_SOCKET=2 MC_THREADS_PER_CORE=1
MC_REAL_MEMORY=20000 MC_GPUS=2
mc_cluster_start
mc_small_policy
mc_restart_slurmd
T=$(mktemp -d /tmp/mc-ds-bench.XXXXXX)
mc_at_exit "rm -rf '$T'"
for d in $(seq 0 99); do
	mkdir -p "$T/d$d"
	for f in $(seq 0 99); do : >"$T/d$d/f$f"; done
done
us() { local t0 t1; t0=$(date +%s%N); srun -n1 --gpus=1 --mem=256M "$@" true >/dev/null 2>&1 </dev/null; t1=$(date +%s%N); echo $(((t1 - t0) / 1000)); }
a=() b=()
for i in $(seq "$N"); do a+=("$(us)"); b+=("$(us --dataset="$T")"); done
med() { printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
ma=$(med "${a[@]}") mb=$(med "${b[@]}")
echo "dataset_launch_ratio=$(awk -v a="$ma" -v b="$mb" 'BEGIN { printf "%.3f", b / a }') (median $mb us with --dataset on 10,000 files / $ma us without, $N each)"
