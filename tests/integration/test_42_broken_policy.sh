#!/bin/bash
# guest: trixie sid
# guest: why: `scontrol reconfigure` re-executes slurmd from Slurm 23.11
#   (24.11, 26.05) but not in 22.05 (the host's and bookworm's release)
# A broken memcore.conf never takes the node from its jobs: with memcore `required`, slurmd restarted with the broken file, and
# `scontrol reconfigure` with it (Slurm 23.11 and later re-execute slurmd
# there, so memcore's slurmd init runs again) behave alike: slurmd runs,
# the node is not drained, CPU-only steps run, GPU steps are refused naming
# the file, the line and the key; with the file fixed, the next GPU step
# fits, without a restart. slurmd's start line carries the version built
# (the Makefile's VERSION).
. "$(dirname "$0")/lib.sh"

MC_SOCKETS=1 MC_CORES_PER_SOCKET=2 MC_THREADS_PER_CORE=1
MC_REAL_MEMORY=3000 MC_GPUS=2
mc_cluster_start
mc_small_policy
CONF=$MC_CONF_DIR/memcore.conf
LOG=$MC_LOG_DIR/slurmd.log
GOOD=$(cat "$CONF")
VERSION=$(sed -n 's/^VERSION *:= *//p' "$MC_TOP/Makefile")
SLURM_VER=$(slurmd -V | awk '{print $2}')
[ -n "$VERSION" ] || mc_die "no VERSION in $MC_TOP/Makefile"
log_lines() { wc -l <"$LOG"; }
log_since() { tail -n +"$(($1 + 1))" "$LOG"; }
BADLINE=$(($(wc -l <"$CONF") + 1))
break_conf() { printf '%s\nRamPerWorker=4Q\n' "$GOOD" >"$CONF"; }
fix_conf() { printf '%s\n' "$GOOD" >"$CONF"; }

mc_restart_slurmd || mc_die "slurmd did not start with a good policy"
assert_contains "$(grep -E "memcore [0-9.]+ \(Slurm" "$LOG" | tail -n1)" \
	"memcore $VERSION (Slurm $SLURM_VER) on $(hostname)" "slurmd's start line: the version built ($VERSION)"

behaves() { # HOW: what a broken policy must give after HOW
	local how=$1
	mc_run srun -n1 --mem=100M echo cpu-ran
	assert_rc 0 "$how: a CPU-only step runs"
	assert_contains "$MC_OUT" cpu-ran "$how: ... and prints"
	mc_run srun -n1 --gpus=1 --mem=256M echo gpu-ran
	assert_ne 0 "$MC_RC" "$how: a GPU step is refused"
	assert_not_contains "$MC_OUT" gpu-ran "$how: ... its program never ran"
	assert_contains "$MC_ERR" "$CONF:$BADLINE: RamPerWorker:" "$how: ... naming the file, the line and the key"
	assert_node_idle "$how: the node is IDLE, not drained" 20
	assert_eq "" "$(mc_node_field Reason)" "$how: no drain reason"
	fix_conf
	mc_run srun -n1 --gpus=1 --mem=256M echo gpu-ran
	assert_rc 0 "$how: file fixed: the next GPU step fits"
	assert_contains "$MC_OUT" gpu-ran "$how: ... and runs"
}

# --- slurmd restarted with the broken file -------------------------------------
break_conf
n=$(log_lines)
p=$(_mc_pid_of slurmd) && _mc_kill_wait TERM "$p"
_mc_spawn slurmd slurmd -D -f "$SLURM_CONF" -N "$MC_NODE_NAME"
mc_wait_node_state IDLE 30
assert_node_idle "restart with a broken policy: slurmd comes up, the node IDLE"
# memcore's init has read the broken file (its line is logged) and slurmd
# lived on after it: waited for, not slept on
logged() { log_since "$n" | grep -q -- "$1"; }
mc_wait_until 30 logged "memcore $VERSION (Slurm .*$CONF:$BADLINE: RamPerWorker:"
_mc_alive "$(_mc_pid_of slurmd)"
assert_eq 0 $? "restart with a broken policy: slurmd still runs"
new=$(log_since "$n")
assert_contains "$new" "memcore $VERSION (Slurm $SLURM_VER) on $(hostname): $CONF:$BADLINE: RamPerWorker:" \
	"restart: slurmd's log says what is wrong, where"
assert_contains "$new" "GPU steps are refused until the policy is fixed" "restart: ... and what it means"
assert_not_contains "$new" "plugin_load" "restart: no plugin load failure"
behaves "slurmd restarted with a broken policy"

# --- scontrol reconfigure with the broken file ---------------------------------
break_conf
n=$(log_lines)
scontrol reconfigure
assert_eq 0 $? "scontrol reconfigure with a broken policy"
# What slurmd does with it depends on the release, and the test says which
# it expects: from 23.11 slurmd executes itself again, memcore's init with
# it (its line names the mistake); 22.05 re-reads its files in place and
# logs "got reconfigure request". The wait ends on that line, not a sleep.
ver_ge() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" = "$2" ]; }
if ver_ge "$SLURM_VER" 23.11; then
	mc_wait_until 30 logged "memcore $VERSION (Slurm .*$CONF:$BADLINE: RamPerWorker:"
	assert_contains "$(log_since "$n")" "$CONF:$BADLINE: RamPerWorker:" \
		"Slurm $SLURM_VER: reconfigure re-executed slurmd, memcore's init with it: its log names the mistake"
else
	mc_wait_until 30 logged "got reconfigure request"
	assert_contains "$(log_since "$n")" "got reconfigure request" "Slurm $SLURM_VER: slurmd took the reconfigure in place"
	assert_not_contains "$(log_since "$n")" "memcore $VERSION (Slurm" \
		"Slurm $SLURM_VER: ... without executing itself again (memcore's init did not run again)"
fi
mc_wait_node_state IDLE 30
assert_node_idle "reconfigure with a broken policy: the node IDLE"
_mc_alive "$(_mc_pid_of slurmd)"
assert_eq 0 $? "reconfigure with a broken policy: slurmd still runs"
behaves "reconfigured with a broken policy"
