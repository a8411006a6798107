#!/bin/bash
# Shards per GPU from Slurm's own configuration, on a node claiming an AWS
# g4dn.metal (8 x T4 of 14.76 GiB) whose slurm.conf Gres and gres.conf give
# 64 shards (8 per GPU) and whose memcore.conf has no ShardsPerGpu=:
#  - slurmd reads Slurm's counts at its start into the node-facts cache;
#  - a --gres=shard:2 step is judged by its share (2/8 of the card), runs
#    with the --mem that share needs, is refused below it, and is limited
#    to what it was given;
#  - memcore check (the slurmctld path, as the cli_filter runs it) and
#    sbatch --test-only through contrib/cli_filter.lua give the same
#    figures;
#  - ShardsPerGpu= overrides Slurm's count, and one that disagrees with it
#    is a finding of memcore audit (slurmctld's view and slurmd's cache)
#    and of slurmd's start-up line, with both numbers.
# guest: trixie sid
# guest: why: slurmd's gres count (libslurm's gres_get_system_cnt, whose
#   arguments changed in 25.05) and SLURM_SHARDS_ON_NODE depend on the
#   Slurm release; bookworm's 22.05 is the host's
. "$(dirname "$0")/lib.sh"

TOPO=$MC_TOP/tests/data/aws-g4dn-metal-2xxeon8259cl-8xt4.xml
MC_GRES_TYPES=gpu,shard
MC_GRES_EXTRA=,shard:64
MC_GRES_CONF_LINES="NodeName=$MC_NODE_NAME Name=gpu File=$MC_WORK/dev/gpu[0-7]
NodeName=$MC_NODE_NAME Name=shard Count=64 File=$MC_WORK/dev/gpu[0-7]"
mc_cluster_start
CONF=$MC_CONF_DIR/memcore.conf
CACHE=$MC_WORK/state/d/memcore-node-facts
printf 'TopologyFile=%s\nBind=none\n' "$TOPO" >"$CONF"
mc_set_plugstack "required $MEMCORE_BUILD/memcore.so config=$CONF cache=$CACHE"
mc_restart_slurmd

# The T4's memory in the topology: 15843721216 bytes (14.76 GiB). A share
# of 2 of its 8 shards, 1 worker of 4 GiB and 1 task of 1 GiB.
CARD=15843721216
SHARE=$(awk -v c=$CARD 'BEGIN { printf "%.2f GiB", c * 2 / 8 / 2^30 }')
SNEED=$(awk -v c=$CARD 'BEGIN { printf "%.2f GiB", (c * 2 / 8 + 5 * 2^30) / 2^30 }')
SNEED_B=$(awk -v c=$CARD 'BEGIN { printf "%d", c * 2 / 8 + 5 * 2^30 }')

# --- slurmd's cache holds Slurm's counts -----------------------------------
# (the node reads IDLE again before the new slurmd has loaded its plugins:
# the trixie guest asserted before the cache was written)
mc_wait_until 30 test -s "$CACHE"
assert_file "$CACHE"
mc_run "$MEMCORE_BUILD/memcore" audit --config "$CONF" --cache "$CACHE"
assert_rc 0 "audit of slurmd's cache without ShardsPerGpu=: no finding"
assert_not_contains "$MC_OUT" "shards FAIL" "... and no shard line"

# --- at launch: sized by 2/8 of the card -----------------------------------
# The step's memory limit as the task sees it: v1, its memory cgroup's
# limit_in_bytes; v2, the smallest memory.max from its cgroup up.
LIMIT_CMD='if [ -f /sys/fs/cgroup/cgroup.controllers ]; then d=/sys/fs/cgroup$(sed -n "s/^0:://p" /proc/self/cgroup); m=max; while [ "$d" != /sys/fs/cgroup ]; do v=$(cat "$d/memory.max" 2>/dev/null); if [ -n "$v" ] && [ "$v" != max ] && { [ "$m" = max ] || [ "$v" -lt "$m" ]; }; then m=$v; fi; d=${d%/*}; done; echo "$m"; else cat /sys/fs/cgroup/memory$(sed -n "s/^[0-9]*:memory://p" /proc/self/cgroup)/memory.limit_in_bytes; fi'
mc_run srun -n1 --gres=shard:2 -c4 --mem=9G --dataloader-workers=1 --memcore=explain bash -c "echo shards=\$SLURM_SHARDS_ON_NODE; $LIMIT_CMD"
assert_rc 0 "a shard:2 step with --mem=9G runs (a whole card would need 19.76 GiB)"
assert_contains "$MC_OUT" "shards=2" "... Slurm gave it SLURM_SHARDS_ON_NODE=2"
assert_contains "$MC_ERR" "gres/shard (SLURM_SHARDS_ON_NODE): 2/8 of a 14.76 GiB GPU" "the share from Slurm's 64 shards over 8 GPUs, no ShardsPerGpu="
assert_contains "$MC_ERR" "1 x $SHARE (this node)" "sized by its share: $SHARE"
assert_contains "$MC_ERR" "$SNEED needed" "needed = share + 1 worker x 4 GiB + 1 task = $SNEED"
limit=$(tail -n1 <<<"$MC_OUT")
assert_eq $((9 * 1073741824)) "$limit" "the step's cgroup holds it to the 9 GiB it was given"
mc_run srun -n1 --gres=shard:2 -c4 --mem=6G --dataloader-workers=1 true
assert_ne 0 "$MC_RC" "the same step with --mem=6G is refused"
assert_contains "$MC_ERR" "$SNEED needed" "... at the share's figure"
assert_node_idle "a refused shard step leaves the node idle"

# --- at submission: the same figures from slurmctld's view ------------------
# A login node's memcore.conf: no TopologyFile (the partition's nodes come
# from slurmctld), the T4's memory as GpuMemory= (15843721216 = 15472384K).
CLIENT=$MC_CONF_DIR/client.conf
echo "GpuMemory=15472384K" >"$CLIENT"
mc_run "$MEMCORE_BUILD/memcore" check --config "$CLIENT" --shards 2 --cpus 4 --mem 6G --dataloader-workers 1 --json
assert_rc 1 "memcore check --shards 2 --mem 6G is refused"
assert_eq slurmctld "$(jq -r .node_source <<<"$MC_OUT")" "... judged on slurmctld's node record"
assert_eq "$SNEED_B" "$(jq -r .ram_needed_bytes <<<"$MC_OUT")" "... needing the launch figure, $SNEED"
mc_run "$MEMCORE_BUILD/memcore" check --config "$CLIENT" --shards 2 --cpus 4 --mem 9G --dataloader-workers 1
assert_rc 0 "memcore check --shards 2 --mem 9G fits"
assert_contains "$MC_OUT" "gres/shard: 2/8 of a 14.76 GiB GPU" "memcore check: the same share, from the node's Gres"
mc_submit_host "$CLIENT"
mc_run env SLURM_CONF="$MC_SUBMIT_CONF" sbatch --test-only -n1 --gres=shard:2 -c4 --mem=6G --dataloader-workers=1 --wrap true
assert_ne 0 "$MC_RC" "cli_filter: a shard:2 job with --mem=6G is refused at submission"
assert_contains "$MC_ERR" "$SNEED needed" "... with the launch figure ($SNEED)"
mc_run env SLURM_CONF="$MC_SUBMIT_CONF" sbatch --test-only -n1 --gres=shard:2 -c4 --mem=9G --dataloader-workers=1 --wrap true
assert_rc 0 "cli_filter: the same job with --mem=9G passes"
assert_eq "" "$(squeue -h -t PENDING,RUNNING 2>/dev/null)" "nothing queued by --test-only"

# --- ShardsPerGpu= overrides, and a disagreement is a finding ---------------
printf 'TopologyFile=%s\nBind=none\nShardsPerGpu=4\n' "$TOPO" >"$CONF"
mc_run srun -n1 --gres=shard:2 -c4 --mem=13G --dataloader-workers=1 --memcore=explain true
assert_rc 0 "with ShardsPerGpu=4 the shard:2 step (2/4: 12.38 GiB needed) runs with --mem=13G"
assert_contains "$MC_ERR" "gres/shard (SLURM_SHARDS_ON_NODE): 2/4 of a 14.76 GiB GPU" "ShardsPerGpu= overrides Slurm's count at launch"
FINDING="ShardsPerGpu=4 in memcore.conf, but Slurm configures 8 shards per GPU (Gres shard:64 over 8 GPUs)"
mc_run "$MEMCORE_BUILD/memcore" audit --config "$CONF" --cache "$CACHE"
assert_rc 1 "audit of slurmd's cache: ShardsPerGpu=4 against Slurm's 8 fails"
assert_contains "$MC_OUT" "shards FAIL: $FINDING" "... naming both numbers"
printf 'GpuMemory=15472384K\nShardsPerGpu=4\n' >"$CLIENT"
mc_run "$MEMCORE_BUILD/memcore" audit --config "$CLIENT" --partition "$(sinfo -h -o %P | tr -d '*' | head -n1)" --json
assert_rc 1 "audit --partition (slurmctld's records): the same finding fails"
assert_contains "$(jq -r '.shapes[0].shards_finding' <<<"$MC_OUT")" "$FINDING" "... in the shape's shards_finding"
mc_restart_slurmd
logged=no
mc_wait_until 30 grep -qF "ShardsPerGpu=4 in $CONF, but Slurm configures 8 shards per GPU here (Gres shard:64 over 8 GPUs)" "$MC_LOG_DIR/slurmd.log" && logged=yes
assert_eq yes "$logged" "slurmd's start-up audit logs the disagreement with both numbers"
