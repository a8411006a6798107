#!/bin/bash
# memcore iobench inside a real Slurm job's memory cgroup, its sample
# larger than the job's --mem: a 1-GPU step under --mem=128M (memcore's
# own cgroup on v1, the step's on v2, limited to the allocation) runs
# `memcore iobench --sample 300M` on a 300 MiB dataset of three shards,
# its scratch column on LocalScratch, as the job's user (nobody). What it
# reads is page cache, reclaimable: it completes, no OOM kill (memcore
# usage: the cgroup's own counter), its scratch copy removed, and its own
# memory (RssAnon after each pattern, in its JSON) stays under 32 MiB:
# the figure BENCHMARKS.md quotes. The control: the same step touching
# 300 MiB of anonymous memory is OOM-killed, so the limit is real.
. "$(dirname "$0")/lib.sh"

MC_SOCKETS=1 MC_CORES_PER_SOCKET=2 MC_THREADS_PER_CORE=1
MC_REAL_MEMORY=1500 MC_GPUS=2
PROGS=$MEMCORE_BUILD/progs
MEMCORE=$MEMCORE_BUILD/memcore
[ -x "$PROGS/mc_anon_toucher" ] || mc_die "$PROGS/mc_anon_toucher missing: make progs"
MIB=$((1 << 20))

mc_cluster_start
# The rule's figure below 128 MiB for one GPU (mc_squeeze_setup's), no
# file of its own.
mc_squeeze_setup iobench-unused.bin 1 1s
mc_local_scratch
DS=$MC_WORK/tmp/iob-ds U=$MC_WORK/tmp/iob-user
mkdir -p "$DS" "$U"
for i in 0 1 2; do dd if=/dev/urandom of="$DS/shard$i.arrow" bs=1M count=100 conv=fsync status=none; done
chown -R nobody: "$DS" "$U"
mc_at_exit "rm -rf '$DS' '$U'"

cat >"$U/run.sh" <<EOS
#!/bin/bash
export XDG_CACHE_HOME=$U/cache
"$MEMCORE" iobench --json --sample 300M --time-limit 300 --scratch "$SCR" "$DS" >"$U/iob.json" || echo "iobench rc \$?"
"$MEMCORE" usage --pid \$\$ --json >"$U/usage.json"
EOS
chmod 0755 "$U/run.sh"
MC_CMD_TIMEOUT=900
mc_run runuser -u nobody -- srun --chdir=/tmp -n1 --gpus=1 --mem=128M "$U/run.sh"
mc_log "iobench step: rc $MC_RC: $MC_OUT $MC_ERR"
assert_rc 0 "the iobench step under --mem=128M completes"
assert_not_contains "$MC_OUT" "iobench rc" "... memcore iobench exits 0"
assert_not_contains "$MC_ERR" "killed for memory" "... no OOM kill said by srun"
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
SAMPLE=$(json "$U/iob.json" 'd["sample_bytes"]')
LIMIT=$(json "$U/usage.json" 'd["limit_bytes"]')
ANON=$(json "$U/iob.json" 'max(d["here"]["anon_peak_bytes"], d["scratch"]["anon_peak_bytes"])')
assert_eq $((300 * MIB)) "$SAMPLE" "the sample is 300 MiB"
assert_eq $((128 * MIB)) "$LIMIT" "the cgroup's limit is the 128 MiB allocation"
assert_eq 0 "$(json "$U/usage.json" 'd["oom_kills"]')" "memcore usage: no OOM kill in the step's cgroup"
assert_eq 1 "$([ "$ANON" -lt $((32 * MIB)) ] 2>/dev/null && echo 1 || echo 0)" \
	"memcore iobench's own memory (RssAnon) stays under 32 MiB: $ANON bytes"
mc_log "iobench under --mem=128M: sample $SAMPLE bytes, limit $LIMIT bytes, RssAnon peak $ANON bytes, shuffled/sequential $(json "$U/iob.json" 'round(d["shuffled_over_sequential"], 2)'), verdict $(json "$U/iob.json" 'd["verdict"]')"
assert_eq "" "$(ls -A "$SCR" | grep -v '^\.memcore-removing$')" "the scratch copy is removed"

# The control: the limit is real.
mc_run srun -n1 --gpus=1 --mem=128M "$PROGS/mc_anon_toucher" 300
assert_ne 0 "$MC_RC" "(control) 300 MiB of anonymous memory under --mem=128M is killed"
assert_not_contains "$MC_OUT" "touched 300 MiB" "(control) ... it never touched it all"
