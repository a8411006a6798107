#!/bin/bash
# The login host's shape cache (cli/mc_shape_cache.c) against a slurmctld
# alone (no slurmd) of State=CLOUD nodes in two shapes, counted by
# slurmctld itself: sdiag's REQUEST_NODE_INFO count is the number of node
# table loads (slurm_load_node) memcore made.
#  - a node state change (drain, resume, power up) does not make the next
#    call load the node table: the cache is revalidated by the partitions'
#    and slurm.conf's update times, not the node table's;
#  - a shape change (RealMemory edited in slurmctld's slurm.conf, then
#    scontrol reconfigure) is seen by the next call;
#  - an answer from the cache that would refuse is given only after a
#    fresh load says the same (one more REQUEST_NODE_INFO), and a cache
#    poisoned to refuse (records edited, checksum made right again) never
#    refuses a job that fits.
# memcore reads a login copy of slurm.conf that is never edited, as on a
# login host whose copy lags slurmctld's: what changes is seen through
# slurmctld's answers, not through the file the cache is keyed on.
. "$(dirname "$0")/lib.sh"

MC_GPUS=0
MC_SLURM_CONF_LINES="PrivateData=cloud
SuspendProgram=/bin/true
ResumeProgram=/bin/true
SuspendTime=600
ResumeTimeout=600
NodeName=cb[1-4] Sockets=2 CoresPerSocket=32 ThreadsPerCore=1 RealMemory=2097152 Gres=gpu:h100:8 State=CLOUD
NodeName=cs[1-4] Sockets=2 CoresPerSocket=16 ThreadsPerCore=1 RealMemory=524288 Gres=gpu:a100:4 State=CLOUD
PartitionName=big Nodes=cb[1-4],cs[1-4] MaxTime=INFINITE State=UP"
_mc_start_nodes() { :; }	# a slurmctld alone: the cloud nodes need none
mc_cluster_start

CONF=$MC_CONF_DIR/memcore.conf
echo "GpuTypeMemory=h100:80G,a100:40G" >"$CONF"
LOGIN=$MC_CONF_DIR/slurm-login.conf
cp "$SLURM_CONF" "$LOGIN"
export MEMCORE_CACHE_DIR=$MC_WORK/shape-cache
MB=$((1 << 20))
# slurmctld's own count of node table loads
node_rpcs() { sdiag | awk '$1 == "REQUEST_NODE_INFO" { sub(/.*count:/, ""); print $1 + 0; exit }'; }
check() { mc_run env SLURM_CONF="$LOGIN" "$MEMCORE_BUILD/memcore" check --config "$CONF" --json --partition big "$@"; }
FIT=(--gpus 8 --mem 800G --cpus-per-gpu 6)	# fits the h100 nodes (2 TiB)
BIG=(--gpus 8 --mem 3000G --cpus-per-gpu 6)	# fits no node
jf() { jq -r "$1" <<<"$MC_OUT"; }
# slurmctld moves its partition update time a few times in the seconds
# after it starts or reconfigures (seen on 22.05: registration of the
# nodes, power save), and answers "no change" only to a time at least a
# second after the last change (update_time - 1 >= last_part_update):
# wait until a call after a call is one without a node table load.
settle() {
	local i a
	for ((i = 0; i < 30; i++)); do
		check "${FIT[@]}"; sleep 1.1
		a=$(node_rpcs); check "${FIT[@]}"
		[ "$(node_rpcs)" = "$a" ] && return 0
	done
	mc_die "slurmctld's partition or configuration time never settled"
}
h100_ram() { jf '.shapes[] | select(.gpu_type == "h100") | .ram_bytes'; }

# --- cold, then warm --------------------------------------------------------
settle
rm -rf "$MEMCORE_CACHE_DIR"
n0=$(node_rpcs)
assert_match "$n0" "^[0-9]+$" "sdiag counts REQUEST_NODE_INFO"
check "${FIT[@]}"
assert_rc 0 "cold: fits"
assert_eq 8 "$(jf .nodes)" "cold: the partition's 8 nodes"
assert_eq $((2097152 * MB)) "$(h100_ram)" "cold: the h100 nodes' 2 TiB"
ref=$MC_OUT
assert_eq $((n0 + 1)) "$(node_rpcs)" "cold: one node table load"
n0=$(node_rpcs)
check "${FIT[@]}"
assert_eq "$ref" "$MC_OUT" "warm: the same answer"
assert_eq "" "$MC_ERR" "warm: nothing on stderr"
assert_eq "$n0" "$(node_rpcs)" "warm: no node table load"

# --- node state changes: no load ---------------------------------------------
for st in "DRAIN Reason=t58" RESUME POWER_UP; do
	scontrol update NodeName=cb2 State=$st || mc_die "scontrol update cb2 $st"
	n0=$(node_rpcs)
	check "${FIT[@]}"
	assert_rc 0 "after cb2 ${st%% *}: fits"
	assert_eq "$n0" "$(node_rpcs)" "after cb2 ${st%% *} (slurmctld's node update time moved): the cache is still valid, no node table load"
	[ "$st" = RESUME ] || mc_log "cb2: $(scontrol show node cb2 | grep -o 'State=[^ ]*')"
	[ "${st%% *}" = DRAIN ] && assert_contains "$(scontrol show node cb2 | grep -o 'State=[^ ]*')" DRAIN "cb2 is drained (scontrol)"
done

# --- a refusal from the cache is confirmed by a fresh load -------------------
n0=$(node_rpcs)
check "${BIG[@]}"
assert_rc 1 "3000G on 8 GPUs: refused"
assert_eq false "$(jf .fits)" "refused: fits false"
assert_eq $((n0 + 1)) "$(node_rpcs)" "the refusal from the cache was confirmed: one fresh node table load"
check "${FIT[@]}"
assert_eq "$ref" "$MC_OUT" "after the confirming load: the same fitting answer"

# --- a cache poisoned to refuse: never refuses a job that fits ---------------
# Every record's ram_bytes OLD -> NEW, then the checksum (FNV-1a 64 by
# 8-byte words over the file, its field at byte 48 zero) made right again.
poison() { # OLD NEW
	for f in "$MEMCORE_CACHE_DIR"/shapes-*; do
		python3 - "$f" "$1" "$2" <<'EOF' || mc_die "poison $f"
import struct, sys
f, old, new = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
d = bytearray(open(f, "rb").read())
assert d[:7] == b"MCSHAPE", "not a shape cache"
hits = 0
for j in range(1080, len(d) - 7, 8):	# after the header
    if struct.unpack_from("<Q", d, j)[0] == old:
        struct.pack_into("<Q", d, j, new); hits += 1
assert hits, "no record of that size"
d[48:56] = bytes(8)
h, M = 0xcbf29ce484222325, (1 << 64) - 1
for j in range(0, len(d) - len(d) % 8, 8):
    h = ((h ^ struct.unpack_from("<Q", d, j)[0]) * 0x100000001b3) & M
for b in d[len(d) - len(d) % 8:]:
    h = ((h ^ b) * 0x100000001b3) & M
struct.pack_into("<Q", d, 48, h)
open(f, "wb").write(d)
EOF
	done
}
poison $((2097152 * MB)) $((1 * 1024 * MB))	# the h100 nodes "have 1 GiB"
n0=$(node_rpcs)
check "${FIT[@]}"
assert_eq "" "$MC_ERR" "the poisoned cache was read as valid (no damaged-cache line)"
assert_rc 0 "a cache poisoned to refuse: the job that fits is not refused"
assert_eq "$ref" "$MC_OUT" "the answer of the fresh load"
assert_eq $((n0 + 1)) "$(node_rpcs)" "the cached refusal was checked with one fresh node table load"
n0=$(node_rpcs)
check "${FIT[@]}"
assert_eq "$n0" "$(node_rpcs)" "and the fresh load rewrote the cache: no load on the next call"
# The other way round (documented, memcore(8)): a cache stale towards
# "fits" lets the job through without a load; the launch judges it again.
poison $((2097152 * MB)) $((4096 * 1024 * MB))	# "4 TiB"
n0=$(node_rpcs)
check "${BIG[@]}"
assert_rc 0 "a cache stale towards fits: let through (the plugin judges at launch)"
assert_eq "$n0" "$(node_rpcs)" "a let-through from the cache costs no load"
rm -rf "$MEMCORE_CACHE_DIR"
check "${BIG[@]}"
assert_rc 1 "without the cache: refused"

# --- a shape change is seen ----------------------------------------------------
check "${FIT[@]}"
assert_eq "$ref" "$MC_OUT" "cache rebuilt"
sed -i 's/^NodeName=cb\[1-4\] \(.*\)RealMemory=2097152/NodeName=cb[1-4] \1RealMemory=1572864/' "$SLURM_CONF"
grep -q 'NodeName=cb.*RealMemory=1572864' "$SLURM_CONF" || mc_die "slurm.conf not edited"
scontrol reconfigure || mc_die "scontrol reconfigure"
for ((i = 0; i < 50; i++)); do scontrol ping 2>/dev/null | grep -q 'is UP' && break; sleep 0.2; done
cmp -s "$SLURM_CONF" "$LOGIN" && mc_die "the login copy changed too"
sleep 1.1
n0=$(node_rpcs)
check "${FIT[@]}"
assert_rc 0 "after reconfigure: fits"
assert_eq $((1572864 * MB)) "$(h100_ram)" "after RealMemory=1572864 and scontrol reconfigure: the h100 nodes' 1.5 TiB seen at once"
assert_eq $((n0 + 1)) "$(node_rpcs)" "the reconfigure made the cache stale: one node table load"
settle
n0=$(node_rpcs)
check "${FIT[@]}"
assert_eq $((1572864 * MB)) "$(h100_ram)" "warm after it: 1.5 TiB"
assert_eq "$n0" "$(node_rpcs)" "warm after it: no load"

