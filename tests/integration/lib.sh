# shellcheck shell=bash
# tests/integration/lib.sh - a throwaway single-node Slurm cluster for tests.
#
# Source it from a test script (as root), set the MC_* knobs you need, then:
#
#     . "$(dirname "$0")/lib.sh"
#     MC_PLUGSTACK_LINES="required $MEMCORE_BUILD/memcore.so config=$MC_WORK/memcore.conf"
#     mc_cluster_start
#     mc_run srun -n1 true;  assert_eq 0 "$MC_RC" "srun true"
#
# Everything (configs, munge key and socket, spool, state, logs, fake GPU
# devices, job output) lives in $MC_WORK.  The daemons are our own munged,
# slurmctld and slurmd on free loopback ports; nothing in /etc/slurm or
# /etc/munge is read or written.  An EXIT/INT/TERM trap always stops the
# cluster.  The test's exit status is non-zero when any assertion failed.
# See tests/integration/NOTES.md for the API (knobs, variables, functions,
# asserts) and the facts verified on Slurm 22.05.

# ---------------------------------------------------------------- knobs ----
# Set before mc_cluster_start (defaults below).  Node layout: AWS g4dn.metal.
: "${MC_TOP:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${MC_NAME:=$(basename "${0%.sh}")}"
: "${MEMCORE_BUILD:=$MC_TOP/build}"
: "${MC_NODE_NAME:=mc-node1}"
: "${MC_PARTITION:=gpu}"
: "${MC_SOCKETS:=2}"
: "${MC_CORES_PER_SOCKET:=24}"
: "${MC_THREADS_PER_CORE:=2}"
: "${MC_REAL_MEMORY:=386000}"          # MB, as slurm.conf RealMemory
: "${MC_GPUS:=8}"                      # 0 = no GRES on the node
: "${MC_GPU_TYPE:=}"                   # e.g. t4 -> Gres=gpu:t4:8
: "${MC_GRES_CONF_LINES:=}"            # replaces the generated gres.conf node line(s)
: "${MC_GRES_EXTRA:=}"                 # appended to the node's Gres=, e.g. ,shard:64
: "${MC_GRES_TYPES:=gpu}"              # slurm.conf GresTypes, e.g. gpu,shard
: "${MC_TASK_PLUGIN:=task/none}"       # e.g. task/cgroup,task/affinity
: "${MC_PROCTRACK:=}"                  # default: proctrack/cgroup if task/cgroup, else linuxproc
: "${MC_CONSTRAIN_RAM:=no}"            # cgroup.conf ConstrainRAMSpace
: "${MC_CONSTRAIN_CORES:=no}"          # cgroup.conf ConstrainCores
: "${MC_CGROUP_CONF_LINES:=}"          # extra cgroup.conf lines
: "${MC_CGROUP_CONF_EXTRA:=}"          # more cgroup.conf lines, always after those (tests override
                                       # MC_CGROUP_CONF_LINES; the guests set IgnoreSystemd=yes here)
: "${MC_JOBACCT_GATHER:=jobacct_gather/none}"  # slurm.conf JobAcctGatherType (MaxRSS: jobacct_gather/linux)
: "${MC_ACCOUNTING_LINES:=AccountingStorageType=accounting_storage/none}"  # replaced by a slurmdbd's lines (lib_slurmdbd.sh)
: "${MC_MIN_JOB_AGE:=300}"               # slurm.conf MinJobAge: s an ended job stays in slurmctld
: "${MC_DEF_MEM_PER_CPU:=}"            # slurm.conf DefMemPerCPU (empty: Slurm default)
: "${MC_SLURM_CONF_LINES:=}"           # extra slurm.conf lines (appended last)
: "${MC_PLUGSTACK_LINES:=}"            # plugstack.conf content
: "${MC_DEBUG:=debug}"                 # SlurmctldDebug/SlurmdDebug
: "${MC_START_TIMEOUT:=60}"            # s, until the node is IDLE
: "${MC_JOB_TIMEOUT:=120}"             # s, mc_wait_job default
: "${MC_CMD_TIMEOUT:=120}"             # s, limit for each mc_run/mc_srun/mc_sbatch
: "${MC_KEEP_WORK:=0}"                 # 1: keep $MC_WORK after a passing test
: "${MC_FAIL_FAST:=0}"                 # 1: the first failed assertion ends the test
: "${MC_PORT_RANGE:=20000-29999}"      # where free ports are looked for
: "${MC_LOCK_FILE:=/tmp/memcore-test-cluster.lock}"  # one test cluster at a time on this machine
: "${MC_SANITIZE:=0}"                  # 1: MEMCORE_BUILD's memcore.so is an ASan/UBSan build
                                       # (make integration-asan): the ASan runtime preloaded into slurmd
                                       # and the slurmstepd it starts, reports checked at the end

MC_FAILURES=0
MC_CHECKS=0
MC_STARTED=0
MC_AT_EXIT=()

# Unix socket paths (munge socket, slurmstepd sockets in the spool) must stay
# well under 108 bytes, so a deep checkout gets its work dir under /tmp.
if [ -z "${MC_WORK:-}" ]; then
	MC_WORK=$MC_TOP/tests/integration/.work/$MC_NAME
	if [ ${#MC_WORK} -gt 52 ]; then
		MC_WORK=/tmp/mc-it.${MC_NAME:0:20}.$$
	fi
fi
MC_CONF_DIR=$MC_WORK/etc
MC_LOG_DIR=$MC_WORK/log
MC_JOB_DIR=$MC_WORK/jobs
MC_GPU_DEV_DIR=$MC_WORK/dev
MC_MUNGE_DIR=$MC_WORK/munge
MC_MUNGE_SOCKET=$MC_MUNGE_DIR/munge.socket
MC_HOST=$(hostname -s 2>/dev/null || hostname)
export SLURM_CONF=$MC_CONF_DIR/slurm.conf
export MC_WORK MEMCORE_BUILD

# A test may run inside someone's allocation: Slurm's input variables would
# leak into every command.  Keep only SLURM_CONF.
while IFS='=' read -r _v _; do
	case $_v in
	SLURM_CONF) ;;
	SLURM_*|SBATCH_*|SALLOC_*|SRUN_*|SQUEUE_*|SINFO_*|SCONTROL_*) unset "$_v" ;;
	esac
done < <(env)
unset _v

# --------------------------------------------------------------- output ----
mc_log()  { printf '[%s %s] %s\n' "$(date +%T)" "$MC_NAME" "$*" >&2; }
mc_die()  { printf '[%s %s] FATAL: %s\n' "$(date +%T)" "$MC_NAME" "$*" >&2; exit 1; }
# mc_skip WHY: end the test as skipped (exit 77; run.sh counts it as SKIP).
mc_skip() { printf '[%s %s] SKIP: %s\n' "$(date +%T)" "$MC_NAME" "$*" >&2; exit 77; }
# mc_cgroup_version: 1 or 2, the memory cgroup this process is accounted in
# (a v1 memory line in /proc/self/cgroup, else the v2 one).
mc_cgroup_version() { if grep -q '^[0-9]*:memory:' /proc/self/cgroup; then echo 1; else echo 2; fi; }

# --------------------------------------------------------------- asserts ---
_mc_fail() {
	MC_FAILURES=$((MC_FAILURES + 1))
	{
		printf 'FAIL: %s\n' "$1"; shift
		for l in "$@"; do printf '  %s\n' "$l"; done
		printf '  at %s\n' "$(caller 1 2>/dev/null)"
	} >&2
	[ "$MC_FAIL_FAST" = 1 ] && exit 1
	return 1
}
_mc_ok() { MC_CHECKS=$((MC_CHECKS + 1)); printf 'ok: %s\n' "$1" >&2; return 0; }
_mc_indent() { printf '%s' "$1" | sed 's/^/      | /'; }

# assert_eq EXPECTED ACTUAL [MSG]
assert_eq() {
	local msg=${3:-values equal}
	if [ "$1" = "$2" ]; then _mc_ok "$msg"; else
		MC_CHECKS=$((MC_CHECKS + 1))
		_mc_fail "$msg" "expected: '$1'" "actual:   '$2'"; fi
}
# assert_ne UNEXPECTED ACTUAL [MSG]
assert_ne() {
	local msg=${3:-values differ}
	if [ "$1" != "$2" ]; then _mc_ok "$msg"; else
		MC_CHECKS=$((MC_CHECKS + 1))
		_mc_fail "$msg" "expected anything but: '$1'"; fi
}
# assert_contains HAYSTACK NEEDLE [MSG]   (fixed string)
assert_contains() {
	local msg=${3:-output contains \'$2\'}
	if [[ $1 == *"$2"* ]]; then _mc_ok "$msg"; else
		MC_CHECKS=$((MC_CHECKS + 1))
		_mc_fail "$msg" "missing:  '$2'" "in:" "$(_mc_indent "$1")"; fi
}
# assert_not_contains HAYSTACK NEEDLE [MSG]
assert_not_contains() {
	local msg=${3:-output lacks \'$2\'}
	if [[ $1 != *"$2"* ]]; then _mc_ok "$msg"; else
		MC_CHECKS=$((MC_CHECKS + 1))
		_mc_fail "$msg" "unexpected: '$2'" "in:" "$(_mc_indent "$1")"; fi
}
# assert_match HAYSTACK ERE [MSG]   (grep -E on the whole text)
assert_match() {
	local msg=${3:-output matches /$2/}
	if printf '%s\n' "$1" | grep -Eq -- "$2"; then _mc_ok "$msg"; else
		MC_CHECKS=$((MC_CHECKS + 1))
		_mc_fail "$msg" "no match for: /$2/" "in:" "$(_mc_indent "$1")"; fi
}
# assert_file FILE [MSG]
assert_file() {
	local msg=${2:-file $1 exists}
	if [ -e "$1" ]; then _mc_ok "$msg"; else
		MC_CHECKS=$((MC_CHECKS + 1))
		_mc_fail "$msg" "no such file: $1" "$(ls -la "$(dirname "$1")" 2>&1)"; fi
}
# assert_file_contains FILE NEEDLE [MSG]
assert_file_contains() {
	if [ -e "$1" ]; then assert_contains "$(cat "$1")" "$2" "${3:-$1 contains '$2'}"
	else assert_file "$1" "${3:-$1 contains '$2'}"; fi
}
# assert_rc EXPECTED_RC [MSG]   (checks $MC_RC from the last mc_run)
assert_rc() {
	local msg=${2:-exit status $1: $MC_CMD}
	if [ "$1" = "$MC_RC" ]; then _mc_ok "$msg"; else
		MC_CHECKS=$((MC_CHECKS + 1))
		_mc_fail "$msg" "expected rc $1, got $MC_RC" "command: $MC_CMD" \
			"stdout:" "$(_mc_indent "$MC_OUT")" "stderr:" "$(_mc_indent "$MC_ERR")"; fi
}

# ------------------------------------------------------------- commands ----
# Long commands run in the background and are waited for, so that INT/TERM
# (a CI timeout) reach the EXIT trap at once instead of after the command.
_mc_fg() { "$@" & MC_CHILD=$!; wait "$MC_CHILD"; local rc=$?; MC_CHILD=; return $rc; }
# The helpers below avoid forks where a builtin does: in the guests (QEMU
# without KVM) each fork and exec costs about 0.1 s, and a test makes
# hundreds of these calls.
# _mc_slurp VAR FILE: VAR = FILE's text without its trailing newlines, as
# $(cat FILE) gives it, without a process.
_mc_slurp() {
	local -n _v=$1
	_v=
	IFS= read -r -d '' _v <"$2"
	while [[ $_v == *$'\n' ]]; do _v=${_v%$'\n'}; done
}
# mc_run CMD ARGS...: run with a time limit; sets MC_RC, MC_OUT, MC_ERR, MC_CMD.
mc_run() {
	local o=$MC_WORK/tmp/mc_run.out e=$MC_WORK/tmp/mc_run.err
	MC_CMD="$*"
	_mc_fg timeout -k 5 "$MC_CMD_TIMEOUT" "$@" >"$o" 2>"$e" </dev/null
	MC_RC=$?
	_mc_slurp MC_OUT "$o"; _mc_slurp MC_ERR "$e"
	[ "$MC_RC" = 124 ] && mc_log "timed out after ${MC_CMD_TIMEOUT}s: $MC_CMD"
	return 0
}
# mc_srun ARGS...: srun with a time limit, output passes through; returns srun's rc.
mc_srun()    { _mc_fg timeout -k 5 "$MC_CMD_TIMEOUT" srun "$@" </dev/null; }
# mc_sbatch ARGS...: submits from $MC_JOB_DIR (so default output is
# $MC_JOB_DIR/slurm-<id>.out); prints the job id; non-zero rc on failure.
mc_sbatch() {
	local out rc
	out=$(cd "$MC_JOB_DIR" && timeout -k 5 "$MC_CMD_TIMEOUT" sbatch --parsable "$@" </dev/null)
	rc=$?
	[ $rc = 0 ] || { mc_log "sbatch $* failed (rc $rc): $out"; return $rc; }
	printf '%s\n' "${out%%;*}"
}
# mc_job_out JOBID: path of the default output file of a job from mc_sbatch.
mc_job_out() { printf '%s\n' "$MC_JOB_DIR/slurm-$1.out"; }
# mc_job_field JOBID KEY: one field of `scontrol show job -o` (e.g. State, ExitCode, Reason).
mc_job_field() {
	local l; l=$(scontrol -o show job "$1" 2>/dev/null)
	[[ " $l" =~ \ $2=([^ ]*) ]] && printf '%s\n' "${BASH_REMATCH[1]}"
	return 0
}
mc_job_state() { mc_job_field "$1" JobState; }
# mc_wait_job JOBID [TIMEOUT]: wait until the job is finished; prints the
# final state (COMPLETED, FAILED, ...); rc 1 on timeout.
mc_wait_job() {
	local id=$1 t=${2:-$MC_JOB_TIMEOUT} s end=$((SECONDS + ${2:-$MC_JOB_TIMEOUT}))
	while :; do
		s=$(mc_job_state "$id")
		case $s in
		COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|PREEMPTED|BOOT_FAIL|DEADLINE|SPECIAL_EXIT)
			printf '%s\n' "$s"; return 0 ;;
		esac
		if [ $SECONDS -ge $end ]; then
			mc_log "job $id not finished after ${t}s (state '${s:-unknown}'):"
			scontrol show job "$id" >&2
			printf '%s\n' "${s:-UNKNOWN}"; return 1
		fi
		sleep 0.3
	done
}
# mc_node_field KEY [NODE]: one field of `scontrol show node -o` (State, Reason, AllocTRES, ...).
mc_node_field() {
	local l; l=$(scontrol -o show node "${2:-$MC_NODE_NAME}" 2>/dev/null)
	[[ " $l" =~ \ $1=([^ ]*) ]] && printf '%s\n' "${BASH_REMATCH[1]}"
	return 0
}
# The backfill scheduler's +PLANNED flag is dropped: it marks a node held for
# a job that was pending at its last pass and stays until the next pass (CI
# saw IDLE+PLANNED after test_58's corpus in the bookworm guest); it says
# nothing about the node's health, which is what the tests assert.
mc_node_state() { local s; s=$(mc_node_field State); printf '%s\n' "${s//+PLANNED/}"; }
# mc_wait_node_state STATE [TIMEOUT]: wait until State is exactly STATE (e.g. IDLE).
mc_wait_node_state() {
	local want=$1 s end=$((SECONDS + ${2:-30}))
	while :; do
		s=$(mc_node_state)
		[ "$s" = "$want" ] && return 0
		if [ $SECONDS -ge $end ]; then
			mc_log "node $MC_NODE_NAME is '$s', not '$want'"
			return 1
		fi
		sleep 0.3
	done
}
# mc_node_state_settled [TIMEOUT] [NODE]: the node's State once Slurm has
# finished with it: waits (up to TIMEOUT s, default 30) while it is
# ALLOCATED, MIXED or COMPLETING, states every step passes through in Slurm's
# own time (epilog, step cleanup, the next scheduling pass), then prints it.
# A DRAIN or DOWN node is printed at once: the tests assert "IDLE, not
# drained", and waiting would only hide the drain for TIMEOUT seconds.
mc_node_state_settled() {
	local s end=$((SECONDS + ${1:-30}))
	while :; do
		s=$(mc_node_field State "${2:-$MC_NODE_NAME}"); s=${s//+PLANNED/}
		case $s in
		*DRAIN*|*DOWN*|*FAIL*|*INVAL*) break ;;
		ALLOCATED*|MIXED*|*COMPLETING*|"") ;;
		*) break ;;
		esac
		[ $SECONDS -ge $end ] && break
		sleep 0.2
	done
	printf '%s\n' "$s"
}
# assert_node_idle MSG [TIMEOUT]: the node comes back IDLE (not DRAIN, not
# DOWN) once its jobs are done: mc_node_state_settled, then IDLE asserted.
assert_node_idle() { assert_eq IDLE "$(mc_node_state_settled "${2:-30}")" "$1"; }
# mc_wait_until TIMEOUT CMD...: poll CMD (every 0.1 s) until it succeeds, at
# most TIMEOUT s; rc 0 when it did. For what Slurm or slurmstepd writes in
# its own time (a log line, a textfile): the assertion that follows reads
# it, so a lost write still fails there, after TIMEOUT, not by chance.
mc_wait_until() {
	local end=$((SECONDS + $1)); shift
	until "$@"; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.1
	done
}
# mc_jobs_idle [TIMEOUT]: wait until no job is pending/running.
mc_jobs_idle() {
	local end=$((SECONDS + ${1:-30}))
	while [ -n "$(squeue -h -t PD,R,CG,CF -o %i 2>/dev/null)" ]; do
		[ $SECONDS -ge $end ] && { mc_log "jobs still queued:"; squeue >&2; return 1; }
		sleep 0.3
	done
}
# mc_set_plugstack LINES: rewrite plugstack.conf.  srun/sbatch and each new
# slurmstepd read it afresh; slurmd-side hooks need mc_restart_slurmd.
mc_set_plugstack() { printf '%s\n' "$1" > "$MC_CONF_DIR/plugstack.conf"; MC_PLUGSTACK_LINES=$1; }
# mc_small_policy: $MC_CONF_DIR/memcore.conf for tests/data/local-2numa-2gpu.xml
# that lets a 1-GPU step with --mem=256M and one core fit, and the plugstack
# line that loads memcore with it (test_30, test_35, test_36,
# tests/vm/guest/layouts.sh).
mc_small_policy() {
	cat >"$MC_CONF_DIR/memcore.conf" <<EOF
TopologyFile=$MC_TOP/tests/data/local-2numa-2gpu.xml
HostRamPerGpuRam=0.01
RamPerWorker=0
RamPerTask=0
DataloaderWorkers=0
ReservedCores=0
EOF
	# The node-facts cache in this cluster's SlurmdSpoolDir, not memcore's
	# default (the system's /var/spool/slurmd or /var/lib/slurm/slurmd):
	# a test's slurmd must not write there nor its steps read from there.
	# slurmd writes it only when it starts with this line (mc_restart_slurmd).
	mc_set_plugstack "required $MEMCORE_BUILD/memcore.so config=$MC_CONF_DIR/memcore.conf cache=$MC_WORK/state/d/memcore-node-facts"
}
# mc_squeeze_setup NAME MIB INTERVAL: mc_small_policy with the rule's
# figure below 128 MiB (0.005 of the fake GPU's memory, so that a step
# under --mem=128M is let run), SampleInterval=INTERVAL, and a file of MIB
# MiB written to disk, $MC_WORK/tmp/NAME, in f (removed at exit): the page
# cache squeeze tests (test_37_squeeze, test_37_squeeze_shared).
mc_squeeze_setup() {
	mc_small_policy
	sed -i 's/^HostRamPerGpuRam=.*/HostRamPerGpuRam=0.005/' "$MC_CONF_DIR/memcore.conf"
	printf 'SampleInterval=%s\n' "$3" >>"$MC_CONF_DIR/memcore.conf"
	f=$MC_WORK/tmp/$1
	mc_at_exit "rm -f '$f'"
	dd if=/dev/zero of="$f" bs=1M count="$2" conv=fsync status=none || mc_die "cannot write $f"
}
# mc_at_exit CMD: run CMD (eval'd) at exit, before the cluster stops.
mc_at_exit() { MC_AT_EXIT+=("$1"); }

# ------------------------------------------------------------------ NFS ----
# mc_nfs_usable: rc 0 when this machine can serve NFS to itself over
# loopback (the guests of tests/vm can; this project's host kernel has no
# nfs module); else rc 1 with why on stdout. A machine where an NFS server
# already runs is not touched: the test's `rpc.nfsd 0` at exit would stop
# that server too.
mc_nfs_usable() {
	local b
	{ modprobe -q nfsd && modprobe -q nfsv4; } 2>/dev/null ||
		{ echo "no nfsd or nfsv4 kernel module (kernel $(uname -r))"; return 1; }
	for b in rpc.nfsd rpc.mountd exportfs mount.nfs4; do
		command -v "$b" >/dev/null || { echo "no $b (nfs-kernel-server, nfs-common)"; return 1; }
	done
	if pgrep -x nfsd >/dev/null || pgrep -x rpc.mountd >/dev/null; then
		echo "an NFS server runs here already (nfsd threads or rpc.mountd): not touched"
		return 1
	fi
	return 0
}
# mc_nfs_mount EXPORT MNT: a real network filesystem for the test: the
# directory EXPORT (made) exported to 127.0.0.1 by the kernel's nfsd and
# mounted at MNT (made) with NFSv4 over loopback (statfs NFS_SUPER_MAGIC;
# the server checks the caller's uid on every access). no_root_squash:
# root may read everything there, so only reading as the job's user keeps
# a root-only path unread. NFSv4 only: no rpcbind, no lockd, mountd only
# answering the kernel's export upcalls. rpc.mountd and the nfsd threads
# are the test's, stopped at exit with the mount. The v4 grace period
# (opens wait while it lasts) is cut to its least, 10 s. Needs
# mc_nfs_usable.
mc_nfs_mount() {
	local e=$1 m=$2 t0=$SECONDS
	mkdir -p "$e" "$m"
	MC_NFS_EXPORT=$e MC_NFS_MNT=$m MC_NFS_PIDS=
	mc_at_exit _mc_nfs_stop
	if ! grep -qs '^nfsd /proc/fs/nfsd ' /proc/mounts; then
		mount -t nfsd nfsd /proc/fs/nfsd || mc_die "cannot mount the nfsd filesystem"
		MC_NFS_FS=1
	fi
	# written before nfsd starts (EBUSY after)
	echo 10 >/proc/fs/nfsd/nfsv4gracetime && echo 10 >/proc/fs/nfsd/nfsv4leasetime ||
		mc_die "cannot set nfsd's v4 grace and lease times"
	exportfs -o rw,sync,no_subtree_check,no_root_squash "127.0.0.1:$e" || mc_die "exportfs of $e failed"
	rpc.mountd -N 2 -N 3 || mc_die "rpc.mountd did not start"
	MC_NFS_PIDS=$(pgrep -x rpc.mountd)
	rpc.nfsd -N 3 2 || mc_die "rpc.nfsd did not start"
	mount -t nfs4 -o sec=sys "127.0.0.1:$e" "$m" ||
		mc_die "cannot mount 127.0.0.1:$e on $m (NFSv4 over loopback): $(dmesg | grep -iE 'nfs|rpc' | tail -n 5)"
	MC_NFS_MOUNTED=1
	mc_log "NFS: 127.0.0.1:$e on $m ($(awk -v m="$m" '$2 == m {print $3 " " $4}' /proc/mounts)), $((SECONDS - t0)) s"
}
_mc_nfs_stop() {
	local p
	# (a server that stopped answering: a plain umount could wait on it;
	# -i -c: no umount.nfs helper, no realpath, both of which touch it)
	[ "${MC_NFS_MOUNTED:-0}" = 1 ] && { timeout 20 umount "$MC_NFS_MNT" 2>/dev/null || umount -i -c -f -l "$MC_NFS_MNT"; }
	MC_NFS_MOUNTED=0
	pgrep -x nfsd >/dev/null && rpc.nfsd 0
	exportfs -u "127.0.0.1:$MC_NFS_EXPORT" 2>/dev/null
	for p in $MC_NFS_PIDS; do kill "$p" 2>/dev/null; done
	MC_NFS_PIDS=
	[ "${MC_NFS_FS:-0}" = 1 ] && umount /proc/fs/nfsd 2>/dev/null
	MC_NFS_FS=0
	return 0
}
# mc_dump_logs [LINES]: tail of every daemon log, to stderr.
mc_dump_logs() {
	local f
	MC_LOGS_DUMPED=1
	for f in "$MC_LOG_DIR"/*.stdout "$MC_LOG_DIR"/*.log; do
		[ -s "$f" ] || continue
		printf '\n----- %s (last %s lines) -----\n' "$f" "${1:-40}"
		tail -n "${1:-40}" "$f"
	done >&2
}

# ---------------------------------------------------------------- ports ----
_mc_port_free() {
	! ss -Htan 2>/dev/null | awk '{print $4}' | grep -Eq "[:.]$1\$"
}
_mc_pick_ports() {
	local lo=${MC_PORT_RANGE%-*} hi=${MC_PORT_RANGE#*-} p n=0
	while [ $n -lt 200 ]; do
		p=$((lo + (RANDOM * 32768 + RANDOM) % (hi - lo - 1)))
		if _mc_port_free "$p" && _mc_port_free $((p + 1)); then
			MC_CTLD_PORT=$p MC_SLURMD_PORT=$((p + 1)); return 0
		fi
		n=$((n + 1))
	done
	mc_die "no two free ports in $MC_PORT_RANGE"
}

# -------------------------------------------------------------- configs ----
_mc_write_configs() {
	local gres='' task_cg=0 proctrack=$MC_PROCTRACK
	case $MC_TASK_PLUGIN in *cgroup*) task_cg=1 ;; esac
	[ -n "$proctrack" ] || { [ $task_cg = 1 ] && proctrack=proctrack/cgroup || proctrack=proctrack/linuxproc; }
	if [ "$MC_GPUS" -gt 0 ]; then
		gres="Gres=gpu:${MC_GPU_TYPE:+$MC_GPU_TYPE:}$MC_GPUS$MC_GRES_EXTRA"
	fi
	cat > "$SLURM_CONF" <<EOF
# generated by tests/integration/lib.sh for $MC_NAME
ClusterName=mc${MC_NAME//[^a-z0-9]/}
SlurmctldHost=$MC_HOST(127.0.0.1)
SlurmctldPort=$MC_CTLD_PORT
SlurmdPort=$MC_SLURMD_PORT
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MC_MUNGE_SOCKET
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$MC_WORK/state/ctld
SlurmdSpoolDir=$MC_WORK/state/d
SlurmctldPidFile=$MC_WORK/run/slurmctld.pid
SlurmdPidFile=$MC_WORK/run/slurmd.pid
SlurmctldLogFile=$MC_LOG_DIR/slurmctld.log
SlurmdLogFile=$MC_LOG_DIR/slurmd.log
SlurmctldDebug=$MC_DEBUG
SlurmdDebug=$MC_DEBUG
DebugFlags=Gres
PlugStackConfig=$MC_CONF_DIR/plugstack.conf
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0${MC_SCHED_PARAMS:+,$MC_SCHED_PARAMS}
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
GresTypes=$MC_GRES_TYPES
ProctrackType=$proctrack
TaskPlugin=$MC_TASK_PLUGIN
SlurmdParameters=config_overrides
ReturnToService=2
MinJobAge=$MC_MIN_JOB_AGE
MpiDefault=none
SwitchType=switch/none
JobAcctGatherType=$MC_JOBACCT_GATHER
$MC_ACCOUNTING_LINES
JobCompType=jobcomp/none
MailProg=/bin/true
SlurmctldTimeout=30
SlurmdTimeout=60
InactiveLimit=0
KillWait=5
MessageTimeout=20
TmpFS=$MC_WORK/tmp
${MC_DEF_MEM_PER_CPU:+DefMemPerCPU=$MC_DEF_MEM_PER_CPU}
NodeName=$MC_NODE_NAME NodeHostname=$MC_HOST NodeAddr=127.0.0.1 Sockets=$MC_SOCKETS CoresPerSocket=$MC_CORES_PER_SOCKET ThreadsPerCore=$MC_THREADS_PER_CORE RealMemory=$MC_REAL_MEMORY $gres State=UNKNOWN
PartitionName=$MC_PARTITION Nodes=$MC_NODE_NAME Default=YES MaxTime=INFINITE State=UP
$MC_SLURM_CONF_LINES
EOF
	{
		echo "AutoDetect=off"
		if [ -n "$MC_GRES_CONF_LINES" ]; then
			printf '%s\n' "$MC_GRES_CONF_LINES"
		elif [ "$MC_GPUS" -gt 0 ]; then
			echo "NodeName=$MC_NODE_NAME Name=gpu ${MC_GPU_TYPE:+Type=$MC_GPU_TYPE }File=$MC_GPU_DEV_DIR/gpu[0-$((MC_GPUS - 1))]"
		fi
	} > "$MC_CONF_DIR/gres.conf"
	cat > "$MC_CONF_DIR/cgroup.conf" <<EOF
CgroupPlugin=autodetect
ConstrainCores=$MC_CONSTRAIN_CORES
ConstrainRAMSpace=$MC_CONSTRAIN_RAM
ConstrainSwapSpace=no
ConstrainDevices=no
$MC_CGROUP_CONF_LINES
$MC_CGROUP_CONF_EXTRA
EOF
	printf '%s\n' "$MC_PLUGSTACK_LINES" > "$MC_CONF_DIR/plugstack.conf"
	local i
	for ((i = 0; i < MC_GPUS; i++)); do
		mknod -m 0666 "$MC_GPU_DEV_DIR/gpu$i" c 1 3 || mc_die "mknod $MC_GPU_DEV_DIR/gpu$i failed"
	done
}

# -------------------------------------------------------------- daemons ----
# Each daemon runs with MC_DAEMON_TAG=$MC_WORK in its environment (inherited
# by slurmstepd), so the stop can find exactly our processes.
_mc_spawn() { # NAME CMD...
	local name=$1 san=(); shift
	case $name in slurmd*) [ "$MC_SANITIZE" = 1 ] && san=("${MC_SAN_ENV[@]}") ;; esac
	env MC_DAEMON_TAG="$MC_WORK" SLURM_CONF="$SLURM_CONF" "${san[@]}" setsid "$@" \
		>>"$MC_LOG_DIR/$name.stdout" 2>&1 </dev/null 9>&- &
	echo $! > "$MC_WORK/run/$name.spawn.pid"
}
_mc_alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }
_mc_tagged() { # PID: has our tag?
	tr "\0" "\n" 2>/dev/null < "/proc/$1/environ" | grep -qxF "MC_DAEMON_TAG=$MC_WORK"
}
_mc_pid_of() { # NAME: pid from the daemon's pid file, else from our spawn record
	local p
	for f in "$MC_WORK/run/$1.pid" "$MC_WORK/run/$1.spawn.pid"; do
		p=$(cat "$f" 2>/dev/null) || continue
		_mc_alive "$p" && _mc_tagged "$p" && { echo "$p"; return 0; }
	done
	return 1
}
_mc_kill_wait() { # SIGNAL PIDS...: signal, wait up to 10 s, then SIGKILL
	local sig=$1 p end; shift
	[ $# -gt 0 ] || return 0
	kill -"$sig" "$@" 2>/dev/null
	end=$((SECONDS + 10))
	for p in "$@"; do
		while _mc_alive "$p" && [ $SECONDS -lt $end ]; do sleep 0.1; done
		_mc_alive "$p" && kill -KILL "$p" 2>/dev/null
	done
	return 0
}
_mc_tagged_pids() { # every process carrying our tag, and their descendants
	local tagged all pid ppid changed=1 tree
	tagged=$(grep -lzxF "MC_DAEMON_TAG=$MC_WORK" /proc/[0-9]*/environ 2>/dev/null \
		| sed 's|^/proc/\([0-9]*\)/environ$|\1|' | grep -vx "$$")
	[ -n "$tagged" ] || return 0
	# add descendants (job tasks that are not tagged themselves)
	all=" ${tagged//$'\n'/ } "
	tree=$(ps -eo pid=,ppid= 2>/dev/null)
	while [ $changed = 1 ]; do
		changed=0
		while read -r pid ppid; do
			[[ $all == *" $ppid "* && $all != *" $pid "* ]] && { all+="$pid "; changed=1; }
		done <<< "$tree"
	done
	# shellcheck disable=SC2086
	echo $all
}

# mc_cluster_pids: pids of every process of this cluster still alive
# (daemons, slurmstepd, their tasks); empty after mc_cluster_stop.
mc_cluster_pids() { _mc_tagged_pids; }

_mc_cgroup_note() { # remember which slurm cgroup roots existed before we started
	local c
	: > "$MC_WORK/run/cgroup-preexisting"
	for c in /sys/fs/cgroup/*/slurm /sys/fs/cgroup/*/slurm_"$MC_NODE_NAME" \
		 /sys/fs/cgroup/slurm /sys/fs/cgroup/slurm_"$MC_NODE_NAME"; do
		[ -d "$c" ] && echo "$c" >> "$MC_WORK/run/cgroup-preexisting"
	done
}
_mc_cgroup_cleanup() { # remove empty cgroups of our jobs; the slurm root if we made it
	local ids=$1 c id d
	for c in /sys/fs/cgroup/*/slurm /sys/fs/cgroup/*/slurm_"$MC_NODE_NAME" \
		 /sys/fs/cgroup/slurm /sys/fs/cgroup/slurm_"$MC_NODE_NAME"; do
		[ -d "$c" ] || continue
		for id in $ids; do
			for d in "$c"/uid_*/job_"$id"; do
				[ -d "$d" ] || continue
				find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
			done
		done
		if ! grep -qxF "$c" "$MC_WORK/run/cgroup-preexisting" 2>/dev/null; then
			find "$c" -depth -type d -exec rmdir {} \; 2>/dev/null
		fi
	done
	return 0
}

# _mc_start_nodes T0: start the node daemon(s), wait until IDLE (counting
# MC_START_TIMEOUT from T0).  lib_multinode.sh replaces it.
_mc_start_nodes() {
	_mc_spawn slurmd slurmd -D -f "$SLURM_CONF" -N "$MC_NODE_NAME"
	_mc_wait_node_up "$1" slurmd "$MC_NODE_NAME"
}
# _mc_wait_node_up T0 SPAWN_NAME NODE: wait until NODE is IDLE; the test
# dies (logs printed) when it drains, its daemon dies or time runs out.
_mc_wait_node_up() {
	local s
	while :; do
		s=$(mc_node_field State "$3")
		[ "$s" = IDLE ] && break
		case $s in
		*DRAIN*|*INVAL*|*FAIL*)
			mc_log "node $3 is $s: $(mc_node_field Reason "$3")"; s=bad ;;
		esac
		if [ "$s" = bad ] || [ $((SECONDS - $1)) -ge "$MC_START_TIMEOUT" ] \
		   || ! _mc_alive "$(cat "$MC_WORK/run/$2.spawn.pid")"; then
			scontrol show node "$3" >&2
			mc_dump_logs 60
			mc_die "node $3 not IDLE after $((SECONDS - $1))s (state '$s')"
		fi
		sleep 0.2
	done
}

# ------------------------------------------------------------ sanitizer ----
# MC_SANITIZE=1 (make integration-asan): memcore.so is built with
# -fsanitize=address,undefined, Slurm is not. Such a library loads only into
# a process whose first library is the ASan runtime (clang-19's), so slurmd starts with it in
# LD_PRELOAD, and every slurmstepd inherits it: slurmd execs slurmstepd with
# its own environment. Each process that has ASan writes its reports to
# $MC_SAN_DIR/report.<exe>.<pid>, and the ASan build of memcore.so writes
# at its load whether the runtime was preloaded there ($MC_SAN_DIR/proof/,
# tests/asan/memcore_asan.c): the proof that the heap was checked. No
# verbosity: slurmstepd closes every inherited descriptor at its start, and
# a report file ASan had opened early became slurmd's socket to slurmctld
# (test_92's batch launch was refused: a reply that began "==slurmstepd").
# The directories are world-writable because a task's process runs
# memcore's task_init as the job's user. _mc_san_check reads them when the
# daemons have stopped: any ASan or UBSan error fails the test; a leak fails it only
# when a frame of its allocation stack is in memcore.so. Slurm's daemons
# leak at exit by design (their own free-at-exit is a build option), and
# those stacks name only Slurm; a suppression list of Slurm's functions
# would also hide memcore's leaks, which are always allocated from under a
# Slurm frame (the plugin is called by Slurm). LSan's exit code is 0 so that
# Slurm's own leaks never change a slurmstepd's status (a spank prolog that
# exits 1 drains the node); the report files are the verdict.
_mc_san_setup() {
	local so=$MEMCORE_BUILD/memcore.so lib fmt
	lib=$(ldd "$so" 2>/dev/null | awk '$1 ~ /^(libasan\.so|libclang_rt\.asan)/ { print $3 }')
	[ -n "$lib" ] && [ -e "$lib" ] \
		|| mc_die "MC_SANITIZE=1, but $so does not link an ASan runtime (make integration-asan builds one)"
	MC_SAN_DIR=$MC_WORK/sanitizer
	mkdir -p "$MC_SAN_DIR/proof" && chmod 1777 "$MC_SAN_DIR" "$MC_SAN_DIR/proof" \
		|| mc_die "cannot create $MC_SAN_DIR"
	export MC_SAN_PROOF_DIR=$MC_SAN_DIR/proof
	# every frame with its module, so that a leak's frames in memcore.so are found
	fmt='"    #%n %p %F %L %m"'
	MC_SAN_ENV=(
		"LD_PRELOAD=$lib"
		"ASAN_OPTIONS=log_path=$MC_SAN_DIR/report:log_exe_name=1:halt_on_error=1:detect_leaks=1:strict_string_checks=1:stack_trace_format=$fmt"
		"UBSAN_OPTIONS=log_path=$MC_SAN_DIR/report:log_exe_name=1:halt_on_error=1:print_stacktrace=1:stack_trace_format=$fmt"
		"LSAN_OPTIONS=exitcode=0:fast_unwind_on_malloc=0:suppressions=$MC_TOP/tests/lsan-slurm.supp"
	)
	# srun, sbatch and salloc load memcore.so too (its options), and so
	# does the job prolog/epilog's slurmstepd, which slurmd starts with an
	# environment of its own: the runtime comes in as the library's
	# dependency there, which ASan allows only with
	# verify_asan_link_order=0 (the ASan build's own default,
	# tests/asan/memcore_asan.c); it then checks memcore's own code but
	# not the heap (malloc is not intercepted), and LSan is off there.
	# Preloading it into srun instead would put LD_PRELOAD into every
	# job's environment (srun exports its own). These options send the
	# clients' reports to the same files.
	export ASAN_OPTIONS="verify_asan_link_order=0:detect_leaks=0:halt_on_error=1:log_path=$MC_SAN_DIR/report:log_exe_name=1:stack_trace_format=$fmt"
	export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$MC_SAN_DIR/report:log_exe_name=1:stack_trace_format=$fmt"
	mc_log "sanitizer: slurmd and slurmstepd with LD_PRELOAD=$lib, reports in $MC_SAN_DIR"
}
# _mc_san_check: after the daemons stopped; counts a failure per finding.
# The processes that loaded memcore.so are listed by name and proof, a
# slurmd or slurmstepd whose runtime was not preloaded fails, and a test
# that ran a step must have had a preloaded one in slurmstepd.
_mc_san_check() {
	local f procs findings=0 leaks_slurm=0 out late
	[ -d "${MC_SAN_DIR:-}" ] || return 0
	procs=$(cat "$MC_SAN_DIR"/proof/* 2>/dev/null | sort | uniq -c | awk '{ printf "%s%s x%s (%s)", s, $2, $1, $3; s=", " }')
	late=$(grep -l '^slurm[a-z]* late$' "$MC_SAN_DIR"/proof/* 2>/dev/null)
	if [ -n "$late" ]; then
		findings=$((findings + 1))
		MC_CHECKS=$((MC_CHECKS + 1))
		_mc_fail "sanitizer: a daemon loaded memcore.so without libasan preloaded (its heap was not checked)" $late
	fi
	for f in "$MC_SAN_DIR"/report.*; do
		[ -e "$f" ] || continue
		# blocks: an ASan/UBSan error is one finding whole; each leak
		# record is memcore's when a frame is in memcore.so
		out=$(awk -v so=/memcore.so '
			/ERROR: AddressSanitizer|runtime error:|LeakSanitizer has encountered a fatal error|ERROR: UndefinedBehaviorSanitizer/ { err = 1 }
			/^(Direct|Indirect) leak of/ { inleak = 1; blk = $0 "\n"; mine = 0; next }
			inleak && /^$/ { if (mine) { printf "%s\n", blk; nmine++ } else nslurm++; inleak = 0; next }
			inleak { blk = blk $0 "\n"; if (index($0, so)) mine = 1; next }
			END {
				if (inleak) { if (mine) { printf "%s\n", blk; nmine++ } else nslurm++ }
				printf "@@ %d %d %d\n", err, nmine, nslurm
			}' "$f")
		local tally=${out##*@@ } err mine slurm
		read -r err mine slurm <<<"$tally"
		leaks_slurm=$((leaks_slurm + slurm))
		if [ "$err" = 1 ]; then
			findings=$((findings + 1))
			MC_CHECKS=$((MC_CHECKS + 1))
			_mc_fail "sanitizer: an error report in $(basename "$f")" "$(grep -v 'root region\|failed to intercept' "$f" | head -n 80)"
		elif [ "$mine" -gt 0 ]; then
			findings=$((findings + 1))
			MC_CHECKS=$((MC_CHECKS + 1))
			_mc_fail "sanitizer: $mine leak(s) with memcore.so frames in $(basename "$f")" "$(printf '%s' "${out%@@*}" | head -n 80)"
		fi
	done
	mc_log "sanitizer: the ASan memcore.so was loaded by: ${procs:-no process}; $leaks_slurm leak record(s) without a memcore.so frame (Slurm's own) ignored"
	if [[ ${MC_SAN_NEED_STEPD:-1} = 1 && " $procs" != *" slurmstepd x"*" (preloaded)"* ]]; then
		MC_CHECKS=$((MC_CHECKS + 1))
		_mc_fail "sanitizer: no slurmstepd ran memcore.so with libasan preloaded (no proof in $MC_SAN_DIR/proof)"
	elif [ $findings = 0 ]; then
		_mc_ok "sanitizer: no ASan/UBSan error and no leak from memcore.so"
	fi
	return 0
}

# mc_cluster_start: write configs, start munged, slurmctld, slurmd; wait
# until the node is IDLE (MC_START_TIMEOUT).  Exits the test on failure,
# after printing the daemons' logs.
mc_cluster_start() {
	local t0=$SECONDS s i r0=${EPOCHREALTIME/,/.}
	[ "$(id -u)" = 0 ] || mc_die "integration tests need root (slurmd, munged)"
	for b in munged munge slurmctld slurmd srun sbatch scontrol squeue ss setsid timeout mknod; do
		command -v "$b" >/dev/null || mc_die "missing $b (make deps)"
	done
	[ "$MC_STARTED" = 1 ] && mc_die "mc_cluster_start called twice"
	# One cluster at a time on a machine: they would share the slurmd cgroup
	# root (slurm_<node>) and the two cores.
	mkdir -p "$MC_TOP/tests/integration/.work"
	_mc_lock_take
	t0=$SECONDS                                 # the start timeout counts from here, not from the wait
	_mc_stop_daemons quiet                      # leftovers of an earlier run in this dir
	rm -rf "$MC_WORK"
	mkdir -p "$MC_CONF_DIR" "$MC_LOG_DIR" "$MC_JOB_DIR" "$MC_GPU_DEV_DIR" \
		"$MC_WORK/state/ctld" "$MC_WORK/state/d" "$MC_WORK/run" "$MC_WORK/tmp" \
		|| mc_die "cannot create $MC_WORK"
	# Jobs write slurm-<id>.out where they are submitted: keep them here.
	cd "$MC_JOB_DIR" || mc_die "cannot enter $MC_JOB_DIR"
	mkdir -p "$MC_MUNGE_DIR/key" && chmod 0700 "$MC_MUNGE_DIR/key"
	chmod 0755 "$MC_WORK" "$MC_MUNGE_DIR"
	MC_STARTED=1
	_mc_pick_ports
	_mc_write_configs
	_mc_cgroup_note
	[ "$MC_SANITIZE" = 1 ] && _mc_san_setup
	# Say whether the work dir outlives the cluster (mc_cluster_stop):
	# a path a reader is pointed to must still be there.
	local kept="removed when the cluster stops, kept if it fails"
	[ "$MC_KEEP_WORK" = 1 ] && kept="kept: MC_KEEP_WORK=1"
	mc_log "work dir $MC_WORK ($kept), ports $MC_CTLD_PORT/$MC_SLURMD_PORT, node ${MC_SOCKETS}x${MC_CORES_PER_SOCKET}x${MC_THREADS_PER_CORE} ${MC_REAL_MEMORY}MB gpu:$MC_GPUS, $MC_TASK_PLUGIN"

	# munge: own key, socket, pid, log, seed
	dd if=/dev/urandom of="$MC_MUNGE_DIR/key/munge.key" bs=1024 count=1 status=none
	chmod 0600 "$MC_MUNGE_DIR/key/munge.key"
	env MC_DAEMON_TAG="$MC_WORK" munged --force --socket="$MC_MUNGE_SOCKET" \
		--key-file="$MC_MUNGE_DIR/key/munge.key" --pid-file="$MC_WORK/run/munged.pid" \
		--log-file="$MC_LOG_DIR/munged.log" --seed-file="$MC_MUNGE_DIR/seed" \
		>>"$MC_LOG_DIR/munged.stdout" 2>&1 </dev/null 9>&- \
		|| { mc_dump_logs; mc_die "munged did not start"; }
	munge -S "$MC_MUNGE_SOCKET" -n </dev/null | unmunge -S "$MC_MUNGE_SOCKET" >/dev/null 2>&1 \
		|| { mc_dump_logs; mc_die "munge round trip failed on $MC_MUNGE_SOCKET"; }

	# Daemons slurmctld needs first (lib_slurmdbd.sh: MariaDB, slurmdbd).
	if declare -F mc_hook_before_slurmctld >/dev/null; then
		mc_hook_before_slurmctld || { mc_dump_logs 60; mc_die "mc_hook_before_slurmctld failed"; }
	fi
	# slurmctld: clean state (-c), foreground (-D) so we own it
	_mc_spawn slurmctld slurmctld -D -c -i -f "$SLURM_CONF"
	for ((i = 0; i < 100; i++)); do
		scontrol ping 2>/dev/null | grep -q 'is UP' && break
		_mc_alive "$(cat "$MC_WORK/run/slurmctld.spawn.pid")" || break
		sleep 0.2
	done
	scontrol ping 2>/dev/null | grep -q 'is UP' \
		|| { mc_dump_logs 60; mc_die "slurmctld did not come up"; }

	_mc_start_nodes "$t0"
	MC_START_SECONDS=$(awk -v a="$r0" -v b="${EPOCHREALTIME/,/.}" 'BEGIN{printf "%.1f", b-a}')
	mc_log "cluster up in ${MC_START_SECONDS}s: $(sinfo -h -o '%P %a %D %t %c %m %G' 2>/dev/null)"
}

# mc_restart_slurmd: restart slurmd (e.g. after mc_set_plugstack), wait for IDLE.
# mc_restart_slurmd [TIMEOUT]: slurmd stopped and started again, then IDLE
# awaited (TIMEOUT s, default 30; doubled under MC_SANITIZE). A step whose
# srun has returned may still be ending in its slurmstepd (COMPLETING: the
# ASan build's leak check at exit, under the guest tier's load, took long
# enough in CI that the new slurmd found it "apparently running" and the
# node was not IDLE in 30 s), so the node is let settle first; on failure
# the node's state and reason and our slurmstepd processes are printed.
mc_restart_slurmd() {
	local p t=${1:-30}
	[ "$MC_SANITIZE" = 1 ] && t=$((t * 2))
	mc_node_state_settled "$t" >/dev/null
	p=$(_mc_pid_of slurmd) && _mc_kill_wait TERM "$p"
	local n0
	n0=$(wc -l <"$MC_LOG_DIR/slurmd.log" 2>/dev/null || echo 0)
	_mc_spawn slurmd slurmd -D -f "$SLURM_CONF" -N "$MC_NODE_NAME"
	sleep 1
	# The node reads IDLE before the new slurmd has loaded its plugins
	# (slurmctld still has the old one's state): wait for the new one's
	# "started" line, which it logs after the plugstack's slurmd init.
	mc_wait_until "$t" eval 'tail -n +$((n0 + 1)) "$MC_LOG_DIR/slurmd.log" 2>/dev/null | grep -q "slurmd version .* started"'
	mc_wait_node_state IDLE "$t" && return 0
	mc_log "after the restart: State=$(mc_node_field State) Reason=$(mc_node_field Reason); slurmstepd:"
	ps -o pid=,etimes=,stat=,args= -p "$(_mc_tagged_pids | tr ' \n' ',,' | sed 's/,*$//')" 2>/dev/null \
		| grep slurmstepd >&2
	mc_dump_logs
	return 1
}

_mc_stop_daemons() {
	local p pids=() ids=''
	[ -d "$MC_WORK/run" ] || return 0
	# cancel our jobs so slurmstepd cleans up (cgroups, tasks)
	if _mc_pid_of slurmctld >/dev/null; then
		ids=$(timeout 10 scontrol -o show job 2>/dev/null | sed -n 's/^JobId=\([0-9]*\).*/\1/p')
		if [ -n "$(timeout 10 squeue -h -t PD,R,CG,S -o %i 2>/dev/null)" ]; then
			# shellcheck disable=SC2046
			timeout 10 scancel --quiet $(squeue -h -o %i 2>/dev/null) 2>/dev/null
			for ((p = 0; p < 30; p++)); do
				[ -z "$(timeout 5 squeue -h -o %i 2>/dev/null)" ] && break
				sleep 0.3
			done
		fi
	fi
	for p in ${MC_SLURMD_NAMES:-slurmd} slurmctld; do
		pids=(); p=$(_mc_pid_of "$p") && pids+=("$p")
		_mc_kill_wait TERM "${pids[@]}"
	done
	# what mc_hook_before_slurmctld started, stopped in order
	if declare -F mc_hook_after_slurmctld_stop >/dev/null; then
		mc_hook_after_slurmctld_stop
	fi
	# leftover slurmstepd (and their tasks): anything with our tag
	# shellcheck disable=SC2046
	_mc_kill_wait KILL $(_mc_tagged_pids | tr ' ' '\n' | grep -v "^$(cat "$MC_WORK/run/munged.pid" 2>/dev/null)\$")
	p=$(_mc_pid_of munged) && _mc_kill_wait TERM "$p"
	# anything still tagged (should be none)
	# shellcheck disable=SC2046
	_mc_kill_wait KILL $(_mc_tagged_pids)
	_mc_cgroup_cleanup "$ids"
	[ "$1" = quiet ] || true
}

# mc_cluster_stop: stop every daemon we started (by pid file, then by tag),
# remove our cgroups, remove $MC_WORK (kept when a check failed or
# MC_KEEP_WORK=1).  Safe to call twice, or without a start.
mc_cluster_stop() {
	[ "$MC_STARTED" = 1 ] || return 0
	_mc_stop_daemons
	MC_STARTED=0
	cd "$MC_TOP" || true
	if [ "$MC_KEEP_WORK" = 1 ] || [ "${1:-0}" != 0 ]; then
		mc_log "kept $MC_WORK"
	else
		rm -rf "$MC_WORK"
	fi
	_mc_lock_release
	return 0
}

# The machine lock: one lock for the machine, not per checkout (two
# clones' clusters would share slurmd's cgroup root and the cores all the
# same). It is held by a child of its own, `flock LOCK tail --pid=$$`,
# never by a descriptor of this shell: a process the test leaves behind
# (a job's task, a background command of the test, as another user too)
# would inherit that descriptor and hold the lock for every later test.
# The tail ends when this shell does, however it ends.
_mc_lock_take() {
	local t0=$SECONDS said=0
	flock -w "${MC_LOCK_TIMEOUT:-900}" "$MC_LOCK_FILE" tail --pid=$$ -f /dev/null \
		</dev/null >/dev/null 2>&1 &
	MC_LOCK_PID=$!
	until pgrep -P "$MC_LOCK_PID" -x tail >/dev/null; do
		kill -0 "$MC_LOCK_PID" 2>/dev/null || mc_die "another test cluster holds the lock $MC_LOCK_FILE"
		if [ $said = 0 ] && [ $((SECONDS - t0)) -ge 1 ]; then
			mc_log "waiting for another test cluster on this machine (lock $MC_LOCK_FILE)"
			said=1
		fi
		sleep 0.2
	done
}
_mc_lock_release() {
	[ -n "${MC_LOCK_PID:-}" ] || return 0
	pkill -P "$MC_LOCK_PID" -x tail 2>/dev/null
	wait "$MC_LOCK_PID" 2>/dev/null
	MC_LOCK_PID=
}

_mc_on_exit() {
	local rc=$? c
	trap - EXIT INT TERM
	[ -n "${MC_CHILD:-}" ] && kill -TERM "$MC_CHILD" 2>/dev/null
	for c in "${MC_AT_EXIT[@]}"; do eval "$c"; done
	# the daemons write their last reports (leaks) as they exit
	if [ "$MC_SANITIZE" = 1 ] && [ "$MC_STARTED" = 1 ]; then
		_mc_stop_daemons
		_mc_san_check
	fi
	{ [ $rc = 0 ] || [ $rc = 77 ]; } && [ $MC_FAILURES -gt 0 ] && rc=1
	if [ $rc != 0 ] && [ "$MC_STARTED" = 1 ] && [ "${MC_LOGS_DUMPED:-0}" = 0 ]; then
		mc_dump_logs 30
	fi
	mc_cluster_stop "$rc"
	if [ $rc = 0 ] && [ "$MC_CHECKS" = 0 ]; then
		:	# a script that asserts nothing (the demo) claims nothing
	elif [ $rc = 0 ]; then
		mc_log "passed ($MC_CHECKS checks)"
	elif [ $rc = 77 ]; then
		mc_log "skipped ($MC_CHECKS checks passed before)"
	else
		mc_log "FAILED (rc $rc, $MC_FAILURES of $MC_CHECKS checks failed)"
	fi
	exit $rc
}
trap _mc_on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# mc_cli_filter_install DIR CONF: contrib/cli_filter.lua as DIR/cli_filter.lua,
# calling this build's memcore with the policy CONF (what an admin edits in
# its two `local` lines).
mc_cli_filter_install() {
	sed -e "s|^local MEMCORE = .*|local MEMCORE = \"$MEMCORE_BUILD/memcore\"|" \
	    -e "s|^local MEMCORE_CONF = .*|local MEMCORE_CONF = \"$2\"|" \
	    "$MC_TOP/contrib/cli_filter.lua" >"$1/cli_filter.lua"
}

# mc_submit_host CONF: a submit host of the running cluster, its slurm.conf
# with CliFilterPlugins=cli_filter/lua and the filter calling memcore with
# CONF, in $MC_WORK/submit; MC_SUBMIT_CONF names that slurm.conf (sbatch
# reads it from SLURM_CONF).
mc_submit_host() {
	local dir=$MC_WORK/submit

	mkdir -p "$dir"
	{ cat "$SLURM_CONF"; echo "CliFilterPlugins=cli_filter/lua"; } >"$dir/slurm.conf"
	mc_cli_filter_install "$dir" "$1"
	MC_SUBMIT_CONF=$dir/slurm.conf
}

# mc_mib TEXT LABEL: the size memcore writes "N B|KiB|MiB|GiB" right before
# LABEL in TEXT (the first one), in MiB, cut to an integer.
mc_mib() {
	grep -oE "[0-9.]+ (B|KiB|MiB|GiB) $2" <<<"$1" | head -n1 |
		awk '{ f = $2 == "GiB" ? 1024 : $2 == "MiB" ? 1 : $2 == "KiB" ? 1/1024 : 0; printf "%d\n", $1 * f }'
}

# mc_mib_after TEXT LABEL: the same for the size written right after LABEL.
mc_mib_after() {
	grep -oE "$2 [0-9.]+ (B|KiB|MiB|GiB)" <<<"$1" | head -n1 | awk '{print $(NF-1), $NF}' |
		awk '{ f = $2 == "GiB" ? 1024 : $2 == "MiB" ? 1 : $2 == "KiB" ? 1/1024 : 0; printf "%d\n", $1 * f }'
}

# mc_between N LO HI: N is a number within LO..HI.
mc_between() { [ -n "$1" ] && [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }

# mc_local_scratch: LocalScratch= a fresh shared scratch of the test's own
# (mode 1777, as /scratch usually is) in memcore.conf, slurmd restarted to
# read it; SCR names it. Removed at exit, a mount a test made below it
# first (rm would empty a bind mount's source).
mc_local_scratch() {
	SCR=$(mktemp -d /tmp/mc-scratch.XXXXXX) || mc_die "no scratch directory"
	chmod 1777 "$SCR"
	mc_at_exit "findmnt -rn -o TARGET | grep -F '$SCR/' | sort -r | xargs -r -n1 umount -l; rm -rf --one-file-system '$SCR'"
	echo "LocalScratch=$SCR" >>"$MC_CONF_DIR/memcore.conf"
	mc_restart_slurmd
}
