# shellcheck shell=bash
# tests/integration/lib_multinode.sh - a throwaway multi-node Slurm cluster:
# one slurmctld (root namespaces) and one slurmd per node, each node in its
# own network, UTS and mount namespaces, joined by a bridge the harness
# makes.  Everything else (knobs, asserts, mc_run, mc_sbatch, cleanup) is
# lib.sh's.
#
#     . "$(dirname "$0")/lib_multinode.sh"
#     MC_MN_NODES="mc-n1:$T8 mc-n2:$T8 mc-n3:$T4"   # NAME:TOPOLOGY.xml ...
#     mc_mn_policy "Bind=none"          # memcore.conf per node (its topology)
#     mc_cluster_start
#     mc_run srun -N2 --gpus-per-node=8 true
#
# Network: a bridge $MC_MN_BRIDGE in the root namespace with the host's
# address $MC_MN_NET.1/24; node i gets veth "${MC_MN_BRIDGE}v<i>" whose
# peer is "eth0" at $MC_MN_NET.(10+i) in the node's namespace.  slurmctld
# and the test's srun/sbatch run in the root namespaces and reach the nodes
# on the bridge; the nodes reach slurmctld (and srun's I/O ports) at .1.
# Nothing is routed or forwarded: traffic stays on the bridge and loopback.
#
# Per node (a private mount namespace, bind mounts seen only there):
#   $MC_WORK/nodes/<name>/  bind-mounted on $MC_MN_NODE_DIR ($MC_WORK/node)
#                           holds memcore.conf (TopologyFile = the node's
#                           XML) and memcore-node-facts (the cache), so one
#                           plugstack line serves every node;
#   /etc/hosts              <- $MC_WORK/nodes/hosts (every node and the host);
#   host name               the node name (UTS namespace);
#   SlurmdSpoolDir, SlurmdPidFile, SlurmdLogFile use %n: state/<name>,
#   run/slurmd-<name>.pid, log/slurmd-<name>.log.
# Memory cgroups: each slurmd in its own parent cgroup (mcmn_<node>, see
# _mc_mn_cgroup_dir) with TaskPlugin=task/none (lib.sh's default), so that
# memcore's own per-step cgroups, made under slurmstepd's, are per node.
# See NOTES.md.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# ---------------------------------------------------------------- knobs ----
: "${MC_MN_NODES:=}"                   # NAME:TOPOLOGY.xml ... (required)
: "${MC_MN_BRIDGE:=mcmnbr}"            # bridge name; veths are ${MC_MN_BRIDGE}v<i>
: "${MC_MN_NET:=10.213.77}"            # /24 on the bridge: .1 host, .11.. nodes
MC_MN_NODE_DIR=$MC_WORK/node           # each node's own dir is mounted here
MC_MN_NAMES=()                         # node names, in order
declare -A MC_MN_TOPO MC_MN_ADDR MC_MN_NS_PID

_mc_mn_parse() {
	local i=0 n
	MC_MN_NAMES=()
	[ -n "$MC_MN_NODES" ] || mc_die "MC_MN_NODES is empty (NAME:TOPOLOGY.xml ...)"
	for n in $MC_MN_NODES; do
		i=$((i + 1))
		MC_MN_NAMES+=("${n%%:*}")
		MC_MN_TOPO[${n%%:*}]=${n#*:}
		MC_MN_ADDR[${n%%:*}]=$MC_MN_NET.$((10 + i))
		[ -r "${n#*:}" ] || mc_die "node ${n%%:*}: no topology ${n#*:}"
	done
	MC_NODE_NAME=${MC_MN_NAMES[0]}     # lib.sh's mc_node_state and friends
	MC_SLURMD_NAMES=${MC_MN_NAMES[*]/#/slurmd-}
}

# mc_mn_shape TOPOLOGY.xml: "Sockets=S CoresPerSocket=C ThreadsPerCore=T
# RealMemory=MB Gres=gpu:G" for a node claiming that machine, from
# memcore audit (the engine slurmstepd uses); a socket per NUMA node.
mc_mn_shape() {
	"$MEMCORE_BUILD/memcore" audit --json --topology "$1" | python3 -c '
import json, sys
a = json.load(sys.stdin)
s = a["numa_nodes"] if a["cores"] % a["numa_nodes"] == 0 else 1
print("Sockets=%d CoresPerSocket=%d ThreadsPerCore=%d RealMemory=%d Gres=gpu:%d"
      % (s, a["cores"] // s, a["pus"] // a["cores"], a["host_ram_bytes"] >> 20,
         len(a["gpus"])))' || mc_die "memcore audit --topology $1 failed"
}

# mc_mn_gpus NODE: GPUs in the node's topology.
mc_mn_gpus() { mc_mn_shape "${MC_MN_TOPO[$1]}" | sed 's/.*Gres=gpu://'; }

# mc_mn_policy LINES...: write every node's memcore.conf (its TopologyFile,
# then the lines) and the host's copy (the first node's topology; srun and
# sbatch read it for their own checks).  New steps read it at once.
mc_mn_policy() {
	local n d
	_mc_mn_parse
	MC_MN_POLICY=("$@")
	[ -d "$MC_WORK/nodes" ] || return 0     # written again by mc_cluster_start
	for n in "${MC_MN_NAMES[@]}" ""; do
		d=$MC_WORK/nodes/$n; [ -n "$n" ] || d=$MC_MN_NODE_DIR
		{ echo "TopologyFile=${MC_MN_TOPO[${n:-${MC_MN_NAMES[0]}}]}"
		  printf '%s\n' "$@"; } > "$d/memcore.conf"
	done
}
MC_MN_POLICY=()

# The plugstack line every node and the host share.
mc_mn_plugstack_line() {
	printf 'required %s/memcore.so config=%s/memcore.conf cache=%s/memcore-node-facts\n' \
		"$MEMCORE_BUILD" "$MC_MN_NODE_DIR" "$MC_MN_NODE_DIR"
}

# lib.sh's configs, then made multi-node: slurmctld on the bridge address,
# one NodeName line per node with its address and shape, per-node spool,
# pid and log files, gres.conf per node.
eval "_mc_write_configs_single() $(declare -f _mc_write_configs | tail -n +2)"
_mc_write_configs() {
	local n nodes='' gpus
	_mc_mn_parse
	for n in "${MC_MN_NAMES[@]}"; do   # fake devices for the largest node
		gpus=$(mc_mn_gpus "$n"); [ "$gpus" -gt "$MC_GPUS" ] && MC_GPUS=$gpus
	done
	_mc_write_configs_single
	for n in "${MC_MN_NAMES[@]}"; do
		nodes+="NodeName=$n NodeHostname=$n NodeAddr=${MC_MN_ADDR[$n]} $(mc_mn_shape "${MC_MN_TOPO[$n]}") State=UNKNOWN"$'\n'
	done
	local IFS=,
	awk -v ctl="SlurmctldHost=$MC_HOST($MC_MN_NET.1)" -v nodes="$nodes" \
	    -v part="PartitionName=$MC_PARTITION Nodes=${MC_MN_NAMES[*]} Default=YES MaxTime=INFINITE State=UP" \
	    -v w="$MC_WORK" -v l="$MC_LOG_DIR" '
		/^SlurmctldHost=/ { print ctl; next }
		/^SlurmdSpoolDir=/ { print "SlurmdSpoolDir=" w "/state/%n"; next }
		/^SlurmdPidFile=/ { print "SlurmdPidFile=" w "/run/slurmd-%n.pid"; next }
		/^SlurmdLogFile=/ { print "SlurmdLogFile=" l "/slurmd-%n.log"; next }
		/^NodeName=/ { printf "%s", nodes; next }
		/^PartitionName=/ { print part; next }
		{ print }' "$SLURM_CONF" > "$SLURM_CONF.mn" && mv "$SLURM_CONF.mn" "$SLURM_CONF"
	unset IFS
	{
		echo "AutoDetect=off"
		for n in "${MC_MN_NAMES[@]}"; do
			gpus=$(mc_mn_gpus "$n")
			echo "NodeName=$n Name=gpu File=$MC_GPU_DEV_DIR/gpu[0-$((gpus - 1))]"
		done
	} > "$MC_CONF_DIR/gres.conf"
	mkdir -p "$MC_MN_NODE_DIR" "$MC_WORK/nodes"
	{
		echo "127.0.0.1 localhost"
		echo "$MC_MN_NET.1 $MC_HOST"
		for n in "${MC_MN_NAMES[@]}"; do
			echo "${MC_MN_ADDR[$n]} $n"
			mkdir -p "$MC_WORK/nodes/$n" "$MC_WORK/state/$n"
		done
	} > "$MC_WORK/nodes/hosts"
	mc_mn_policy "${MC_MN_POLICY[@]}"
	_mc_mn_net_up
	[ -n "$MC_PLUGSTACK_LINES" ] || mc_set_plugstack "$(mc_mn_plugstack_line)"
}

# Network and namespaces.  Names are fixed: lib.sh's lock allows one test
# cluster on the machine, and a fixed name lets a crashed run's leftovers
# be removed by the next.
_mc_mn_net_down() {
	local v
	ip link del "$MC_MN_BRIDGE" 2>/dev/null
	ip route del unreachable "$MC_MN_NET.0/24" metric 4000 2>/dev/null
	for v in $(ip -o link show 2>/dev/null | sed -n "s/^[0-9]*: \(${MC_MN_BRIDGE}v[0-9]*\)@.*/\1/p"); do
		ip link del "$v" 2>/dev/null
	done
	return 0
}

# A node's namespaces are held by a tagged "sleep" (killed by lib.sh's stop
# with every tagged process); its veth goes with its network namespace.
_mc_mn_node_ns() { # NAME INDEX
	local n=$1 v=${MC_MN_BRIDGE}v$2 pid d=$MC_WORK/nodes/$1 t
	env MC_DAEMON_TAG="$MC_WORK" unshare --net --uts --mount --propagation private \
		sleep infinity </dev/null >/dev/null 2>&1 9>&- &
	pid=$!
	disown "$pid"                    # no "Killed" notice from bash at the stop
	MC_MN_NS_PID[$n]=$pid
	echo "$pid" > "$MC_WORK/run/ns-$n.pid"
	for ((t = 0; t < 50; t++)); do   # until unshare has made the namespaces
		[ "$(readlink "/proc/$pid/ns/net")" != "$(readlink /proc/self/ns/net)" ] && break
		sleep 0.05
	done
	ip link add "$v" type veth peer name "${v}p" &&
	ip link set "$v" master "$MC_MN_BRIDGE" && ip link set "$v" up &&
	ip link set "${v}p" netns "$pid" || mc_die "node $n: veth $v failed"
	nsenter -t "$pid" -n -u -m sh -ec "
		hostname $n
		ip link set lo up
		ip link set ${v}p name eth0
		ip addr add ${MC_MN_ADDR[$n]}/24 dev eth0
		ip link set eth0 up
		mount --bind $d $MC_MN_NODE_DIR
		mount --bind $MC_WORK/nodes/hosts /etc/hosts
	" || mc_die "node $n: namespace set-up failed"
}

# mc_mn_exec NODE CMD...: run CMD in NODE's namespaces (its host name,
# address, /etc/hosts and node dir).
mc_mn_exec() { local n=$1; shift; nsenter -t "${MC_MN_NS_PID[$n]}" -n -u -m "$@"; }

# The bridge and the namespaces exist before slurmctld starts: it contacts
# the nodes at once, and an address of the subnet without the bridge would
# follow the default route off the machine.  An unreachable route for the
# subnet (behind the bridge's own) keeps it here even while the bridge is
# being made or removed.
_mc_mn_net_up() {
	local n i=0
	_mc_mn_net_down
	ip route add unreachable "$MC_MN_NET.0/24" metric 4000 &&
	ip link add "$MC_MN_BRIDGE" type bridge &&
	ip addr add "$MC_MN_NET.1/24" dev "$MC_MN_BRIDGE" &&
	ip link set "$MC_MN_BRIDGE" up || mc_die "bridge $MC_MN_BRIDGE failed"
	for n in "${MC_MN_NAMES[@]}"; do
		i=$((i + 1))
		_mc_mn_node_ns "$n" "$i"
	done
}

# Each slurmd in a memory cgroup of its own, "mcmn_<node>" under the test's
# (v1: the memory hierarchy; v2: the unified one): the nodes share one
# kernel, and memcore's own cgroup for a step Slurm does not limit,
# memcore_<job>/memcore_<job>_<step> under slurmstepd's, would otherwise be one cgroup
# for the step's tasks on every node.
_mc_mn_cgroup_dir() { # NODE
	local rel
	if [ -d /sys/fs/cgroup/memory ]; then
		rel=$(sed -n 's/^[0-9]*:memory:\(.*\)/\1/p' /proc/self/cgroup)
		echo "/sys/fs/cgroup/memory${rel%/}/mcmn_$1"
	else
		rel=$(sed -n 's/^0::\(.*\)/\1/p' /proc/self/cgroup)
		echo "/sys/fs/cgroup${rel%/}/mcmn_$1"
	fi
}
_mc_mn_cgroup_rm() { # remove every node's cgroup (and memcore's inside)
	local n d
	for n in "${MC_MN_NAMES[@]}"; do
		d=$(_mc_mn_cgroup_dir "$n")
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
	done
	return 0
}

_mc_start_nodes() { # T0: lib.sh's hook
	local n cg
	_mc_mn_cgroup_rm
	for n in "${MC_MN_NAMES[@]}"; do
		cg=$(_mc_mn_cgroup_dir "$n")
		mkdir -p "$cg" || mc_die "node $n: cannot make cgroup $cg"
		# shellcheck disable=SC2016
		_mc_spawn "slurmd-$n" bash -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$cg" \
			nsenter -t "${MC_MN_NS_PID[$n]}" -n -u -m \
			slurmd -D -f "$SLURM_CONF" -N "$n"
	done
	for n in "${MC_MN_NAMES[@]}"; do
		_mc_wait_node_up "$1" "slurmd-$n" "$n"
	done
}

# Stop the daemons while the bridge still carries their messages, then
# remove it (lib.sh's stop, run again after this, finds nothing left).
_mc_mn_stop() {
	[ "$MC_STARTED" = 1 ] && _mc_stop_daemons
	_mc_mn_cgroup_rm
	_mc_mn_net_down
}
mc_at_exit _mc_mn_stop

# mc_mn_all_idle [TIMEOUT]: wait until every node is IDLE (the backfill
# scheduler's PLANNED flag allowed: it marks nodes held for a pending job
# and stays until its next pass); rc 1 (and the states logged) otherwise.
mc_mn_all_idle() {
	local end=$((SECONDS + ${1:-30})) st
	while :; do
		st=$(mc_mn_states)
		[ -n "$st" ] && ! printf '%s\n' $st | grep -qv '=IDLE\(+PLANNED\)\?$' && return 0
		[ $SECONDS -ge $end ] && { mc_log "nodes not all IDLE: $st"; return 1; }
		sleep 0.3
	done
}
# mc_mn_states: "name=STATE ..." of every node (scontrol's State, e.g. IDLE).
mc_mn_states() {
	scontrol -o show node 2>/dev/null | sed -n 's/^NodeName=\([^ ]*\) .* State=\([^ ]*\) .*/\1=\2/p' | tr '\n' ' '
}
