#!/bin/bash
# tests/bench/partition_shim.sh - memcore's own cost of `memcore check
# --json --partition gpu --gpus 8 --mem 800G --cpus-per-gpu 6` at 10,000
# nodes, without a slurmctld: slurmctld's answers come from
# tests/bench/partition_shim.c, preloaded (no RPC, no unpack; the node
# table is built in-process instead). Not part of make bench: a
# micro-benchmark of the parts that are memcore's (records, shapes, the
# hidden-node check, verdicts, host lists, the cache write).
#
#   partition_shim.sh [CALLS] [MEMCORE...]   (default 30, build/memcore)
#
# Several binaries (a build before and after a change) are called in turn,
# A B A B, in each mode: none (MEMCORE_CACHE_DIR=none), cold (the cache
# emptied before each call), warm (the cache in place). Prints the median
# wall ms, CPU ms (user + sys, bash's times) and peak RSS MB (GNU time's %M)
# per binary and mode; fails when two answers differ.
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
B=${MEMCORE_BUILD:-$top/build}
CALLS=${1:-30}
shift
bins=("$@")
[ ${#bins[@]} -gt 0 ] || bins=("$B/memcore")
[ -x /usr/bin/time ] || { echo "partition_shim: GNU time missing" >&2; exit 2; }
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
cc -O2 -shared -fPIC -o "$work/shim.so" "$here/partition_shim.c" || exit 1
cat >"$work/slurm.conf" <<CONF
ClusterName=bench
SlurmctldHost=localhost
NodeName=cn[00001-03333] Sockets=2 CoresPerSocket=56 ThreadsPerCore=2 RealMemory=2048000 Gres=gpu:h100:8 State=CLOUD
NodeName=cn[03334-06666] Sockets=2 CoresPerSocket=32 ThreadsPerCore=1 RealMemory=1024000 Gres=gpu:a100:4 State=CLOUD
NodeName=cn[06667-10000] Sockets=2 CoresPerSocket=48 ThreadsPerCore=2 RealMemory=1536000 Gres=gpu:l40s:8 State=CLOUD
PartitionName=gpu Nodes=cn[00001-10000] Default=YES MaxTime=INFINITE State=UP
GresTypes=gpu
CONF
echo "GpuTypeMemory=h100:80G,a100:40G,l40s:48G" >"$work/memcore.conf"
export SLURM_CONF=$work/slurm.conf

cpu_us() {
	tail -n1 "$1" | awk '{ t = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] } printf "%d", t * 1000000 }'
}
call() { # BIN CACHEDIR OUT
	local t0 t1
	times >"$work/t0"
	t0=${EPOCHREALTIME/[.,]/}
	LD_PRELOAD=$work/shim.so MEMCORE_CACHE_DIR=$2 /usr/bin/time -f %M -o "$work/rss" \
		"$1" check --config "$work/memcore.conf" --json --partition gpu --gpus 8 \
		--mem 800G --cpus-per-gpu 6 >"$work/out.json" 2>"$work/err" ||
		{ echo "partition_shim: $1 failed: $(cat "$work/err")" >&2; exit 1; }
	t1=${EPOCHREALTIME/[.,]/}
	times >"$work/t1"
	echo "$((t1 - t0)) $(tail -n1 "$work/rss") $(($(cpu_us "$work/t1") - $(cpu_us "$work/t0")))" >>"$3"
	if [ -z "${REF:-}" ]; then REF=$(cat "$work/out.json")
	else [ "$(cat "$work/out.json")" = "$REF" ] || { echo "partition_shim: $1 answered otherwise" >&2; exit 1; }; fi
}
med() { awk -v k="$2" '{print $k}' "$1" | sort -n | awk '{v[NR]=$1} END {if (NR % 2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
for mode in none cold warm; do
	for ((i = 0; i < CALLS; i++)); do
		for ((k = 0; k < ${#bins[@]}; k++)); do
			j=$k; [ $((i % 2)) = 1 ] && j=$((${#bins[@]} - 1 - k))
			c=none
			if [ $mode != none ]; then
				c=$work/cache.$j
				[ $mode = cold ] && rm -rf "$c"
				[ -d "$c" ] || { mkdir -m 0700 "$c"; [ $mode = warm ] && call "${bins[$j]}" "$c" /dev/null; }
			fi
			call "${bins[$j]}" "$c" "$work/$mode.$j"
		done
	done
	for ((j = 0; j < ${#bins[@]}; j++)); do
		awk -v m="$mode" -v b="${bins[$j]}" -v w="$(med "$work/$mode.$j" 1)" -v r="$(med "$work/$mode.$j" 2)" \
		    -v c="$(med "$work/$mode.$j" 3)" -v n="$CALLS" 'BEGIN {
			printf "%-5s %s: wall %.1f ms, CPU %.1f ms, peak RSS %.2f MB (median of %d)\n", m, b, w / 1000, c / 1000, r / 1024, n }'
	done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
