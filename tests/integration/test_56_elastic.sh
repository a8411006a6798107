#!/bin/bash
# The submit-time answer against a real slurmctld (22.05) and the real
# sbatch with contrib/cli_filter.lua, on the forms a hand-written corpus missed:
#  - an elastic partition (State=CLOUD nodes, no PrivateData=cloud) whose
#    big nodes are powered down, hence hidden from the node API: a job that
#    fits them is queued, never refused; with PrivateData=cloud they are
#    seen, and judged;
#  - sbatch --mem=0, --mem-per-gpu=0 (sbatch hands the filter "0?"),
#    --exclusive --mem=0 and -n16 --gpus-per-task=1 without -N: queued;
#  - DefMemPerGPU/DefCpuPerGPU from a PartitionName=DEFAULT line and
#    DefMemPerGPU from a partition in an Include'd file: the job without a
#    memory option is judged against what Slurm gives it;
#  - typed GPUs judged only against nodes of that type;
#  - memcore audit --partition under valgrind: no error;
#  - the shape cache across a real job's start and end: no node table load.
# The harness node is the g4dn.metal shape (8 x t4, 386000 MB, 2 x 24 cores
# x 2 threads); mc-peer is a DOWN twin (so that a 16-GPU job has a second
# node); mc-cloud[1-2] are powered-down cloud nodes of 8 x h100, 2 TiB.
. "$(dirname "$0")/lib.sh"

INC_DIR=$(mktemp -d /tmp/memcore-t56.XXXXXX)
mc_at_exit "rm -rf '$INC_DIR'"
echo "PartitionName=inc Nodes=$MC_NODE_NAME DefMemPerGPU=40960 MaxTime=INFINITE State=UP" >"$INC_DIR/parts.conf"

MC_GPU_TYPE=t4
MC_SLURM_CONF_LINES="CliFilterPlugins=cli_filter/lua
SuspendProgram=/bin/true
ResumeProgram=/bin/true
SuspendTime=600
ResumeTimeout=600
NodeName=mc-peer NodeAddr=192.0.2.1 Sockets=2 CoresPerSocket=24 ThreadsPerCore=2 RealMemory=386000 Gres=gpu:t4:8 State=DOWN
NodeName=mc-cloud[1-2] Sockets=2 CoresPerSocket=32 ThreadsPerCore=1 RealMemory=2097152 Gres=gpu:h100:8 State=CLOUD
PartitionName=pair Nodes=$MC_NODE_NAME,mc-peer MaxTime=INFINITE State=UP
PartitionName=elastic Nodes=$MC_NODE_NAME,mc-cloud[1-2] MaxTime=INFINITE State=UP
PartitionName=DEFAULT DefCpuPerGPU=6 DefMemPerGPU=10240
PartitionName=defs Nodes=$MC_NODE_NAME MaxTime=INFINITE State=UP
Include $INC_DIR/parts.conf"
mc_cluster_start

CONF=$MC_CONF_DIR/memcore.conf
echo "GpuTypeMemory=t4:16G,h100:80G" >"$CONF"
MC=("$MEMCORE_BUILD/memcore")
jf() { jq -r "$1" <<<"$MC_OUT"; }
check() { mc_run "${MC[@]}" check --config "$CONF" --json "$@"; }
queued() { squeue -h -o %i | sort; }

# --- the elastic partition, cloud nodes powered down and hidden -----------
# (seen on 22.05 here: slurm_load_node, and slurm_load_node_single that
# scontrol show node NAME makes, both leave it out, even with SHOW_ALL)
assert_contains "$(scontrol show node mc-cloud1 2>&1)" "Node mc-cloud1 not found" "the powered-down cloud node is hidden from the node API (no PrivateData=cloud)"
# 8 x h100 at w=2: 640 + 64 + 8 = 712 GiB; 1500G fits only the cloud nodes
check --partition elastic --slurm-options '{"gpus-per-node":"8","mem":"1500G","cpus-per-gpu":"3"}'
assert_rc 0 "fits only the hidden nodes: let through"
assert_eq true "$(jf .fits)" "fits: true"
assert_eq "mc-cloud[1-2]" "$(jf .unjudged_nodes)" "the hidden nodes are named"
assert_eq "memcore: 2 nodes of partition elastic cannot be judged: mc-cloud[1-2] not in slurmctld's node list (powered-down cloud nodes are hidden without PrivateData=cloud); the job is let through (the launch check remains)" \
	"$(jf .let_through)" "the reason, for sbatch -v"
# a typed job for them: the t4 node is no candidate, the h100 nodes hidden
check --partition elastic --slurm-options '{"gpus-per-node":"h100:8","mem":"1500G","cpus-per-gpu":"3"}'
assert_rc 0 "h100:8: only hidden candidates: let through"
assert_eq true "$(jf .fits)" "h100:8 fits: true"
# The partition's TRES counts the hidden nodes too: less the node seen it
# bounds any one of them (2 x 2048 GiB together; no GPUs in it without
# slurmdbd: any count, memory unknown). A job that does not fit even the
# bound fits none of them: 16 workers x 4 GiB + 8 tasks x 1 GiB = 72 GiB
# without the GPU floor, 10G asked.
mc_log "partition elastic: $(scontrol show partition elastic | grep -o 'TRES=[^ ]*')"
check --partition elastic --slurm-options '{"gpus-per-node":"h100:8","mem":"10G","cpus-per-gpu":"3"}'
assert_rc 1 "h100:8 --mem=10G fits not even the hidden nodes' bound: refused"
assert_eq null "$(jf .let_through)" "not let through"
assert_contains "$(jf '.explanation[0]')" "not on mc-cloud[1-2] (hidden from slurmctld's node list; by the partition's TRES together at most 4096 GiB, GPUs unknown): needs 72 GiB" "the hidden nodes judged by their bound"
check --partition elastic --slurm-options '{"gpus-per-node":"h100:8","mem":"300G","cpus-per-gpu":"3"}'
assert_rc 0 "h100:8 --mem=300G fits the bound: let through (a hidden node may hold it)"
assert_match "$(jf .let_through)" "^memcore: 2 nodes of partition elastic cannot be judged" "300G: let through"
# but where a bigger node could be the worse one (GPUs spread over the
# nodes), they stay unjudged: let through
check --partition elastic --slurm-options '{"ntasks":"8","gpus-per-task":"h100:1","mem":"300G","cpus-per-task":"3"}'
assert_rc 0 "a spread h100 job: let through"
assert_match "$(jf .let_through)" "^memcore: 2 nodes of partition elastic cannot be judged" "spread: the hidden nodes stay unjudged"

mc_cli_filter_install "$MC_CONF_DIR" "$CONF"
# (the first job makes slurmctld power a cloud node up, and then it shows:
# the -v one goes first, while both are hidden)
mc_run sbatch -v -p elastic -N1 --gpus-per-node=h100:8 --cpus-per-gpu=3 --mem=1500G --wrap "echo ran"
assert_rc 0 "sbatch --gpus-per-node=h100:8: queued"
assert_contains "$MC_ERR" "memcore: 2 nodes of partition elastic cannot be judged: mc-cloud[1-2]" "sbatch -v says why it was let through"
assert_match "$MC_OUT" "^Submitted batch job [0-9]+$" "sbatch: queued"
mc_run sbatch -p elastic -N1 --gpus-per-node=8 --cpus-per-gpu=3 --mem=1500G --wrap "echo ran"
assert_rc 0 "sbatch: a job that fits the powered-down nodes is queued"
assert_not_contains "$MC_ERR" "refused" "sbatch: no refusal"
assert_match "$MC_OUT" "^Submitted batch job [0-9]+$" "sbatch: queued"
mc_run sbatch -p elastic -N1 --gpus-per-node=h100:8 --cpus-per-gpu=3 --mem=10G --wrap "echo ran"
assert_ne 0 "$MC_RC" "sbatch h100:8 --mem=10G: refused at submission (the bound)"
assert_contains "$MC_ERR" "refused at submission in partition elastic: nothing was queued" "sbatch: nothing queued"
assert_not_contains "$MC_OUT" "Submitted batch job" "nothing more queued (no job id)"
scancel $(queued) 2>/dev/null
# the audit names the nodes it could not audit (the cloud ones may be
# powering up by now, after the jobs above: then they are audited)
mc_run "${MC[@]}" audit --config "$CONF" --partition elastic
if scontrol show node mc-cloud1 >/dev/null 2>&1 || scontrol show node mc-cloud2 >/dev/null 2>&1; then
	assert_contains "$MC_OUT" ": 8 x h100 80 GiB, 2048 GiB, 64 cores: RAM rule ok" "audit: the cloud nodes slurmctld shows by now"
else
	assert_contains "$MC_OUT" "memcore: 2 nodes of partition elastic cannot be audited: mc-cloud[1-2] not in slurmctld's node list" "audit: the hidden nodes named"
fi

# --- the sbatch forms a hand-written corpus missed, on the harness node ---
# 8 x 16 GiB t4 + 16 workers x 4 GiB + 8 x 1 GiB = 200 GiB of 376.95 GiB
for form in "--mem=0" "--mem-per-gpu=0" "--exclusive --mem=0"; do
	cpus="--cpus-per-gpu=6"
	case $form in --exclusive*) cpus="" ;; esac	# all its CPUs
	# shellcheck disable=SC2086
	mc_run sbatch --test-only -N1 --gpus=8 $cpus $form --wrap "echo ran"
	assert_rc 0 "sbatch --test-only --gpus=8 $form: passes the filter and Slurm"
	assert_not_contains "$MC_ERR" "memcore:" "sbatch $form: the filter says nothing"
	# shellcheck disable=SC2086
	mc_run sbatch -N1 --gpus=8 $cpus $form --wrap "echo ran"
	assert_match "$MC_OUT" "^Submitted batch job [0-9]+$" "sbatch --gpus=8 $form: queued"
done
# what memcore saw of them
check --slurm-options '{"nodes":"1","gpus":"8","cpus-per-gpu":"6","mem":"0?"}'
assert_eq $((386000 * 1048576)) "$(jf .ram_allocated_bytes)" "--mem=0?: the whole node's RealMemory"
assert_contains "$(jf '.explanation | join("\n")')" "376.95 GiB allocated (--mem=0: the whole node)" "--mem=0: said as the whole node"
check --slurm-options '{"nodes":"1","gpus":"8","exclusive":"exclusive","mem":"0?"}'
assert_eq 48 "$(jf .cores_allocated)" "--exclusive: all 48 cores"
check --slurm-options '{"nodes":"1","gpus":"8","exclusive":"user","mem":"0?","cpus-per-gpu":"2"}'
assert_rc 1 "--exclusive=user does not give all CPUs: 16 CPUs are 8 cores, 24 needed"
assert_eq 8 "$(jf .cores_allocated)" "--exclusive=user: 8 cores"
# -n16 --gpus-per-task=1 without -N: 8 + 8 over the pair, not 16 on one
mc_run sbatch --test-only -p pair -n16 --gpus-per-task=1 --cpus-per-task=6 --mem=300G --wrap "echo ran"
assert_not_contains "$MC_ERR" "memcore:" "-n16 --gpus-per-task=1: the filter says nothing"
mc_run sbatch -p pair -n16 --gpus-per-task=1 --cpus-per-task=6 --mem=300G --wrap "echo ran"
assert_match "$MC_OUT" "^Submitted batch job [0-9]+$" "-n16 --gpus-per-task=1 (no -N): queued"
check --partition pair --slurm-options '{"ntasks":"16","gpus-per-task":"1","cpus-per-task":"6","mem":"300G"}'
assert_rc 0 "check: -n16 --gpus-per-task=1 fits the pair's nodes"
assert_eq 8 "$(jf .gpus)" "judged as 8 GPUs per node"
# with -N1 Slurm must put 16 GPUs on one 8-GPU node: refused, nothing queued
mc_run sbatch -p pair -N1 -n16 --gpus-per-task=1 --cpus-per-task=6 --mem=300G --wrap "echo ran"
assert_ne 0 "$MC_RC" "-N1 -n16 --gpus-per-task=1 is refused"
assert_not_contains "$MC_OUT" "Submitted batch job" "nothing more queued (no job id)"
scancel $(queued) 2>/dev/null

# --- defaults from a DEFAULT line and an Include'd partition ---------------
check --partition defs --slurm-options '{"nodes":"1","gpus":"8"}'
assert_rc 1 "DefMemPerGPU=10240 from the DEFAULT line: 80 GiB for 200 GiB needed"
assert_contains "$(jf '.explanation | join("\n")')" "80 GiB allocated (DefMemPerGPU=10G)" "the DEFAULT line's DefMemPerGPU"
assert_eq 24 "$(jf .cores_allocated)" "DefCpuPerGPU=6 from the DEFAULT line: 48 CPUs, 24 cores"
mc_run sbatch -p defs -N1 --gpus=8 --wrap "echo ran"
assert_ne 0 "$MC_RC" "sbatch -p defs --gpus=8: refused at submission"
assert_contains "$MC_ERR" "80 GiB allocated (DefMemPerGPU=10G)" "sbatch: the default named"
mc_run sbatch --test-only -p defs -N1 --gpus=8 --mem=250G --wrap "echo ran"
assert_rc 0 "sbatch -p defs --gpus=8 --mem=250G: passes (the user's --mem before the default)"
check --partition inc --slurm-options '{"nodes":"1","gpus":"8"}'
assert_rc 0 "the Include'd partition's DefMemPerGPU=40960: 320 GiB fits"
assert_contains "$(jf '.explanation | join("\n")')" "320 GiB allocated (DefMemPerGPU=40G)" "the Include'd partition's default"

# --- typed GPUs: judged only against nodes of that type --------------------
check --partition pair --slurm-options '{"nodes":"1","gpus-per-node":"a100:8","mem":"300G"}'
assert_rc 0 "a100:8 on t4 nodes: no candidate, Slurm answers itself"
assert_match "$(jf .let_through)" "^memcore: no node of partition pair is a candidate for this job" "says no candidate"

# --- memcore audit --partition under valgrind ------------------------------
VG=(valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite)
mc_run "${VG[@]}" "${MC[@]}" audit --config "$CONF" --partition pair
assert_rc 0 "audit --partition pair under valgrind: ok, no error"
assert_not_contains "$MC_ERR" "==" "valgrind reports nothing"
assert_contains "$MC_OUT" "$MC_NODE_NAME,mc-peer: 8 x t4 16 GiB, 376.95 GiB, 48 cores x 2 threads: RAM rule ok (376.95 GiB >= 128 GiB = 8 x 16 GiB x 1.00), cores rule ok (48 >= 28 = 8 x (2 + 1) + 4)" "the shape's rules"
assert_contains "$MC_OUT" "full-node step: ok - 8 GPUs x 2 workers need 200 GiB of 376.95 GiB and 24 of 48 cores" "the full-node step"
mc_run "${VG[@]}" "${MC[@]}" audit --config "$CONF" --all --json
assert_ne 99 "$MC_RC" "audit --all under valgrind: no error"
assert_not_contains "$MC_ERR" "==" "valgrind reports nothing (--all)"

# --- PrivateData=cloud: the cloud nodes are seen, and judged --------------
echo "PrivateData=cloud" >>"$SLURM_CONF"
scontrol reconfigure
for _ in $(seq 50); do scontrol show node mc-cloud1 >/dev/null 2>&1 && break; sleep 0.2; done
assert_contains "$(scontrol show node mc-cloud1 2>&1)" "NodeName=mc-cloud1" "PrivateData=cloud shows the cloud node"
check --partition elastic --slurm-options '{"gpus-per-node":"8","mem":"1500G","cpus-per-gpu":"3"}'
assert_rc 0 "the cloud nodes judged: fits"
assert_eq null "$(jf .unjudged_nodes)" "nothing left unjudged"
assert_eq 2 "$(jf .nodes_fit)" "fits the two cloud nodes"
check --partition elastic --slurm-options '{"gpus-per-node":"8","mem":"2100G","cpus-per-gpu":"3"}'
assert_rc 1 "2100G fits no node, all judged: refused"
assert_eq null "$(jf .let_through)" "no let-through when every node was judged"

# --- the shape cache across a job's start and end (a real slurmd) ----------
# A job starting or ending moves slurmctld's node update time; the cache
# is revalidated by the partitions' and slurm.conf's, so the calls after
# it load no node table: sdiag's REQUEST_NODE_INFO count (slurmctld's own)
# does not move.
export MEMCORE_CACHE_DIR=$MC_WORK/shape-cache-56
node_rpcs() { sdiag | awk '$1 == "REQUEST_NODE_INFO" { sub(/.*count:/, ""); print $1 + 0; exit }'; }
CK=(--partition pair --slurm-options '{"gpus-per-node":"8","mem":"200G","cpus-per-gpu":"6"}')
check "${CK[@]}"
assert_rc 0 "pair: 200G, 48 CPUs on 8 t4 fits (cache written)"
ref=$MC_OUT
# slurmctld says "no change" only to a time a second after the last
# change of its partitions (it moves it a few times in the seconds after
# a start or reconfigure): wait until a call after a call loads nothing.
for ((i = 0; i < 30; i++)); do
	sleep 1.1; check "${CK[@]}"
	n0=$(node_rpcs); check "${CK[@]}"
	[ "$(node_rpcs)" = "$n0" ] && break
done
assert_eq "$n0" "$(node_rpcs)" "warm: no node table load"
id=$(mc_sbatch -p pair -N1 -n1 --mem=1G --wrap "sleep 6") || mc_die "sbatch failed"
for ((i = 0; i < 100; i++)); do [ "$(mc_job_state "$id")" = RUNNING ] && break; sleep 0.2; done
assert_eq RUNNING "$(mc_job_state "$id")" "a job started on $MC_NODE_NAME"
n0=$(node_rpcs)
check "${CK[@]}"
assert_eq "$ref" "$MC_OUT" "with the job running: the same answer"
assert_eq "$n0" "$(node_rpcs)" "a job started since the cache was written: no node table load"
mc_wait_job "$id" >/dev/null
n0=$(node_rpcs)
check "${CK[@]}"
assert_eq "$ref" "$MC_OUT" "after the job ended: the same answer"
assert_eq "$n0" "$(node_rpcs)" "a job ended since: no node table load"
unset MEMCORE_CACHE_DIR
