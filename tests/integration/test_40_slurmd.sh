#!/bin/bash
# slurmd context on a real Slurm: at slurmd start memcore reads the node
# once, writes the node-facts cache into slurmd's spool directory and logs
# one start line (version, Slurm version, topology, policy, audit); every
# slurmstepd then takes the facts from the cache, not from hwloc, and falls
# back to hwloc with one log line when the cache is corrupt or missing. A
# node that breaks the sizing rule gets a warning and runs; a broken policy
# never stops slurmd, `required` or not (test_42 shows the steps then).
. "$(dirname "$0")/lib.sh"

TOPO=$MC_TOP/tests/data/aws-g4dn-metal-2xxeon8259cl-8xt4.xml
MEMCORE=$MEMCORE_BUILD/memcore
mc_cluster_start
CONF=$MC_CONF_DIR/memcore.conf
CACHE=$MC_WORK/state/d/memcore-node-facts      # inside SlurmdSpoolDir
LOG=$MC_LOG_DIR/slurmd.log
SLURM_VER=$(slurmd -V | awk '{print $2}')
VERSION=$(sed -n 's/^VERSION *:= *//p' "$MC_TOP/Makefile")	# the one built
printf 'TopologyFile=%s\n' "$TOPO" >"$CONF"
plug() { mc_set_plugstack "$1 $MEMCORE_BUILD/memcore.so config=$CONF cache=$CACHE"; }
log_lines() { wc -l <"$LOG"; }
log_since() { tail -n +"$(($1 + 1))" "$LOG"; }
FITS=(-N1 -n1 --gpus=1 --dataloader-workers=2 --cpus-per-gpu=12 --mem=40G)

# --- the start line and the cache ------------------------------------------
plug required
mc_restart_slurmd || mc_die "slurmd did not come back with memcore"
start=$(grep -E "memcore [0-9.]+ \(Slurm" "$LOG" | tail -n1)
assert_contains "$start" "memcore $VERSION (Slurm $SLURM_VER) on $(hostname)" "start line: memcore $VERSION (the Makefile's) and Slurm versions"
assert_contains "$start" "topology $TOPO" "start line: the topology source"
assert_contains "$start" "policy $CONF" "start line: the policy file"
assert_contains "$start" "8 GPUs x 14.76 GiB (cuda)" "start line: the GPUs"
assert_contains "$start" "audit at 2 workers: ok" "start line: the audit result"
assert_contains "$start" "cache $CACHE" "start line: where the cache went"
assert_file "$CACHE"
assert_eq "644 root" "$(stat -c '%a %U' "$CACHE")" "cache: mode 0644, owned by root"
assert_eq "" "$(ls "$(dirname "$CACHE")" | grep -F '.tmp.')" "cache: no temporary file left"
# The cache and memcore audit --json carry the same facts.
mc_run "$MEMCORE" audit --config "$CONF" --cache "$CACHE" --json
assert_rc 0 "memcore audit --cache reads slurmd's cache"
from_cache=$MC_OUT
mc_run "$MEMCORE" audit --config "$CONF" --topology "$TOPO" --json
assert_eq "$MC_OUT" "$from_cache" "audit --json: the same facts from the cache as from hwloc"

# --- slurmstepd uses the cache ---------------------------------------------
n=$(log_lines)
mc_run srun "${FITS[@]}" -n2 echo ran
assert_rc 0 "a fitting GPU step runs with the cache"
new=$(log_since "$n")
assert_contains "$new" "memcore: node facts from cache $CACHE" "slurmstepd read the cache"
assert_not_contains "$new" "node facts from hwloc" "slurmstepd did not load hwloc"
assert_eq 1 "$(grep -c 'node facts from' <<<"$new")" "one load for a step of two tasks"
mc_run srun -N1 -n1 --gpus=8 --cpus-per-gpu=6 --mem=100G true
assert_contains "$MC_ERR" "8 x 14.76 GiB" "a refusal from cached facts has the GPUs' memory"
assert_contains "$MC_ERR" "fix: --mem=191G" "a refusal from cached facts has the same fix"
# A CPU-only step never pays for the facts.
n=$(log_lines)
mc_run srun -N1 -n1 --mem=1G true
assert_not_contains "$(log_since "$n")" "node facts" "CPU-only step: no facts loaded"

# --- corrupt cache: one log line, hwloc, same verdict ----------------------
printf '\x7f' | dd of="$CACHE" bs=1 seek=4000 conv=notrunc status=none
n=$(log_lines)
mc_run srun "${FITS[@]}" -n2 echo ran
assert_rc 0 "with a corrupt cache the step still runs"
new=$(log_since "$n")
assert_eq 1 "$(grep -c 'memcore: cache' <<<"$new")" "corrupt cache: exactly one log line"
assert_contains "$new" "memcore: cache $CACHE: checksum mismatch (corrupt); node facts from hwloc ($TOPO) instead" \
	"corrupt cache: the line says why and what instead"
assert_contains "$new" "node facts from hwloc ($TOPO)" "corrupt cache: hwloc loaded"
mc_run srun -N1 -n1 --gpus=8 --cpus-per-gpu=6 --mem=100G true
assert_contains "$MC_ERR" "fix: --mem=191G" "the verdict from hwloc is the cache's"

# --- missing cache; a policy naming another topology ------------------------
rm -f "$CACHE"
n=$(log_lines)
mc_run srun "${FITS[@]}" true
assert_rc 0 "without a cache the step runs"
assert_contains "$(log_since "$n")" "memcore: cache $CACHE: No such file or directory; node facts from hwloc" \
	"missing cache: one line, then hwloc"
mc_restart_slurmd || mc_die "slurmd restart"
assert_file "$CACHE" "slurmd start writes the cache again"
H200=$MC_TOP/tests/data/lenovo-sd665nv3-2xepyc9555-nps4-4xh200.xml
printf 'TopologyFile=%s\nPartitionName=%s TopologyFile=%s\n' "$TOPO" "$MC_PARTITION" "$H200" >"$CONF"
n=$(log_lines)
mc_run srun -N1 -n1 --gpus=1 true
assert_contains "$(log_since "$n")" "built from topology $TOPO, the policy names $H200" \
	"a partition with another TopologyFile: the cache is not used"
printf 'TopologyFile=%s\n' "$TOPO" >"$CONF"

# --- a node that breaks the sizing rule: a warning, slurmd runs -------------
printf 'TopologyFile=%s\nHostRamPerGpuRam=4\nReservedCores=40\n' "$TOPO" >"$CONF"
n=$(log_lines)
mc_restart_slurmd || mc_die "slurmd must run on a node that breaks the rule"
new=$(log_since "$n")
assert_contains "$new" "audit at 2 workers: FAILS the sizing rule" "start line: the failed audit"
assert_contains "$new" "memcore: warning: $(hostname) breaks the RAM sizing rule" "a warning for RAM"
assert_contains "$new" "breaks the cores sizing rule: 48 cores, 64 needed" "a warning for cores"
assert_node_idle "the node breaking the rule is IDLE"

# --- a broken policy: slurmd runs, required or optional ---------------------
printf 'TopologyFile=%s\nRamPerWorker=4Q\n' "$TOPO" >"$CONF"
n=$(log_lines)
mc_restart_slurmd || mc_die "required memcore with a broken policy must not stop slurmd"
assert_node_idle "required memcore with a broken policy: slurmd runs, the node IDLE"
new=$(log_since "$n")
assert_contains "$new" "memcore $VERSION (Slurm $SLURM_VER) on $(hostname): $CONF:2: RamPerWorker: unknown size suffix 'Q'" \
	"the slurmd log says why"
plug optional
mc_restart_slurmd || mc_die "an optional memcore with a broken policy must not stop slurmd"
assert_node_idle "optional memcore with a broken policy: slurmd runs"
printf 'TopologyFile=%s\n' "$TOPO" >"$CONF"
