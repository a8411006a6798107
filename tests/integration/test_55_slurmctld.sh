#!/bin/bash
# memcore check, memcore audit and the cli_filter judge a partition's nodes
# as slurmctld knows them (libslurm), with no Node* keys and no topology in
# memcore.conf: RAM = RealMemory, cores = Sockets x CoresPerSocket, threads
# per core and the GPUs from the node line, GPU memory from GpuTypeMemory=.
# Partition gpu (the default) holds the harness's node (g4dn.metal shape:
# 8 x t4, 386000 MB, 2 x 24 cores x 2 threads); partition mixed adds two
# nodes of another shape (4 x a100, 512 GiB, 64 cores) that never run
# slurmd: slurmctld's record of them is what matters. Then slurmctld is
# stopped: memcore check exits 3 and the cli_filter lets the job through.
. "$(dirname "$0")/lib.sh"

MC_GPU_TYPE=t4
MC_SLURM_CONF_LINES="CliFilterPlugins=cli_filter/lua
NodeName=mc-big[1-2] NodeAddr=192.0.2.1 Sockets=2 CoresPerSocket=32 ThreadsPerCore=1 RealMemory=524288 Gres=gpu:a100:4 State=DOWN
PartitionName=mixed Nodes=$MC_NODE_NAME,mc-big[1-2] MaxTime=INFINITE State=UP"
mc_cluster_start

CONF=$MC_CONF_DIR/memcore.conf
echo "GpuTypeMemory=t4:16G,a100:40G" >"$CONF"
MC=("$MEMCORE_BUILD/memcore")
check() { mc_run "${MC[@]}" check --config "$CONF" "$@"; }
jf() { jq -r "$1" <<<"$MC_OUT"; }
NODE1="$MC_NODE_NAME (8 x t4 16 GiB, 376.95 GiB, 48 cores x 2 threads)"
BIG="mc-big[1-2] (4 x a100 40 GiB, 512 GiB, 64 cores)"

# --- the default partition: the node as slurm.conf describes it -----------
# 8 x 16 GiB + 16 workers x 4 GiB + 8 tasks x 1 GiB = 200 GiB.
check --gpus 8 --mem 300G --json
assert_rc 0 "check --mem 300G on the default partition fits"
assert_eq slurmctld "$(jf .node_source)" "node_source names slurmctld"
assert_eq gpu "$(jf .partition)" "the default partition (Default=YES)"
assert_eq $((386000 * 1048576)) "$(jf .node_ram_bytes)" "RAM = RealMemory"
assert_eq 48 "$(jf .node_cores)" "cores = Sockets x CoresPerSocket"
assert_eq 2 "$(jf '.shapes[0].threads_per_core')" "ThreadsPerCore from the node line"
assert_eq 8 "$(jf .node_gpus)" "GPUs from Gres"
assert_eq t4 "$(jf '.shapes[0].gpu_type')" "the GPU type from Gres"
assert_eq GpuTypeMemory "$(jf .gpu_memory_source)" "GPU memory from GpuTypeMemory="
assert_eq $((200 * 1073741824)) "$(jf .ram_needed_bytes)" "200 GiB needed"
# memcore(8) JSON OUTPUT: the keys --partition adds, and the schema first.
for k in $(sed -n '/^\.SH JSON OUTPUT/,/^\.SH /p' "$MC_TOP/docs/memcore.8" | sed -n '/^With \\-\\-partition/,/^\.S[SH] /p' | grep -Eo '^\.BR? [a-z_]+' | awk '{print $2}'); do
	assert_eq true "$(jq "has(\"$k\")" <<<"$MC_OUT")" "check --partition --json has $k (memcore(8) JSON OUTPUT)"
done
assert_eq schema "$(jq -r 'keys_unsorted[0]' <<<"$MC_OUT")" "check --partition --json: schema first"
check --gpus 8 --mem 300G
assert_eq "memcore: fits on 1 of 1 node of partition gpu: $NODE1" "$(head -n1 <<<"$MC_OUT")" "the answer names the node"
assert_contains "$MC_OUT" "  GPU memory from memcore.conf (slurmctld does not know it): GpuTypeMemory=" "text: where the GPU memory came from"
assert_contains "$MC_OUT" "  GPU memory from memcore.conf (slurmctld does not know it): GpuTypeMemory=t4:16G" "text: the GpuTypeMemory= value used, as memcore.conf has it"
# without it the RAM floor is unchecked, and the answer says which key
: >"$MC_CONF_DIR/empty.conf"
check_empty() { mc_run "${MC[@]}" check --config "$MC_CONF_DIR/empty.conf" "$@"; }
check_empty --gpus 8 --mem 300G
assert_contains "$MC_OUT" "  GPU memory unknown for $MC_NODE_NAME: an administrator sets GpuTypeMemory=t4:SIZE or GpuMemory= in memcore.conf" "unknown GPU memory: the key that gives it"
assert_rc 0 "unknown GPU memory: no false refusal"
assert_match "$(head -n1 <<<"$MC_OUT")" "^memcore: fits as far as memcore can tell on 1 of 1 node of partition gpu: $MC_NODE_NAME .*; GPU memory unknown \(no GpuTypeMemory=/GpuMemory=\): the RAM floor was not checked; launch measures it and may refuse\$" \
	"unknown GPU memory: the first line says the GPU-memory term was not checked, not \"fits\""

# --mem above RealMemory: the "no node" header, exit 1
check --gpus 8 --mem 400G
assert_rc 1 "check --mem 400G (above RealMemory) is refused"
assert_eq "memcore: no node of partition gpu has 400 GiB of memory: not on $NODE1: has 376.95 GiB, not 400 GiB" \
	"$(head -n1 <<<"$MC_OUT")" "no node has 400 GiB"
assert_contains "$MC_OUT" "memcore: this step on $MC_NODE_NAME cannot fit: it asks for 400 GiB of memory, the node has 376.95 GiB:" "the node's own header"
assert_contains "$MC_OUT" "fix: --mem=200G" "the fix that fits the node"

# a mistyped partition is an error naming the partitions
check --gpus 8 --partition gpx
assert_rc 2 "an unknown partition exits 2"
assert_eq "memcore: --partition=gpx: no such partition (partitions: gpu, mixed)" "$MC_ERR" "it names the partitions"
# ... also when the node comes from a topology (TopologyFile=, --topology):
# slurm.conf is readable, so slurmctld says which partitions exist
check --gpus 8 --partition gpx --topology "$MC_TOP/tests/data/aws-g4dn-metal-2xxeon8259cl-8xt4.xml"
assert_rc 2 "an unknown partition exits 2 with --topology too"
assert_eq "memcore: --partition=gpx: no such partition (partitions: gpu, mixed)" "$MC_ERR" "--topology: it names slurmctld's partitions"
check --gpus 8 --partition mixed --topology "$MC_TOP/tests/data/aws-g4dn-metal-2xxeon8259cl-8xt4.xml"
assert_rc 0 "a known partition with --topology is judged on the topology"
assert_contains "$MC_OUT" "memcore: this step fits:" "--topology, known partition: the topology's verdict"

# --- two node shapes: the answer names both node lists --------------------
check --partition mixed --gpus 8 --mem 300G
assert_rc 0 "8 GPUs fit some node of partition mixed"
assert_eq "memcore: fits on 1 of 3 nodes of partition mixed: $NODE1; not on $BIG: has 4 GPUs" \
	"$(head -n1 <<<"$MC_OUT")" "per shape: fits on $MC_NODE_NAME, not on mc-big[1-2]"
check --partition mixed --gpus 4 --mem 450G --json
assert_rc 0 "4 GPUs with 450G fit the big nodes"
assert_eq "memcore: fits on 2 of 3 nodes of partition mixed: $BIG; not on $NODE1: has 376.95 GiB, not 450 GiB" \
	"$(jf '.explanation[0]')" "per shape: the other way round"
assert_eq 2 "$(jf '.shapes | length')" "two shapes in the JSON"
assert_eq 2 "$(jf .nodes_fit)" "nodes_fit"
# a multi-node request: N nodes that each fit
check --partition mixed --gpus 4 --mem 450G --nodes 2 --json
assert_rc 0 "4 GPUs x 2 nodes with 450G fit the two big nodes"
assert_eq "memcore: a step on 2 nodes fits: 2 of the partition's nodes fit it" \
	"$(jf '.explanation[1]')" "--nodes 2: two fitting nodes named"
assert_eq 2 "$(jf .nodes_needed)" "nodes_needed"
check --partition mixed --gpus 4 --mem 450G --nodes 3
assert_rc 1 "a 3-node step does not fit: only 2 nodes fit"
assert_contains "$MC_OUT" "memcore: a step on 3 nodes does not fit: only 2 of the partition's nodes fit it (--nodes=2 at most)" "--nodes 3: says how many nodes fit"
check --partition mixed --gpus 16
assert_rc 1 "16 GPUs fit no node"
first=$(head -n1 <<<"$MC_OUT")
assert_match "$first" "^memcore: no node of partition mixed has 16 GPUs: not on " "no node has 16 GPUs"
assert_contains "$first" "not on $NODE1: has 8 GPUs" "16 GPUs: $MC_NODE_NAME has 8"
assert_contains "$first" "not on $BIG: has 4 GPUs" "16 GPUs: mc-big[1-2] have 4"
assert_contains "$MC_OUT" "memcore: this step on mc-big[1-2] cannot fit: it asks for 16 GPUs, the node has 4:" "each shape's explanation"

# --- --gpu-type: only the nodes of that type are candidates, as Slurm ------
# places a typed job (the same rule as --slurm-options' --gres=gpu:TYPE:N).
check --partition mixed --gpus 4 --mem 450G --gpu-type t4 --json
assert_rc 1 "--gpu-type t4: 450G fits no t4 node, whatever the a100 nodes have"
assert_eq "mc-big[1-2]" "$(jf .excluded_nodes)" "--gpu-type t4: the a100 nodes are no candidates"
assert_eq 1 "$(jf '.shapes | length')" "--gpu-type t4: one shape judged"
assert_eq t4 "$(jf '.shapes[0].gpu_type')" "--gpu-type t4: ... the t4 one"
check --partition mixed --gpus 4 --mem 300G --gpu-type A100
assert_rc 0 "--gpu-type A100 (case-insensitive, as Slurm): fits the a100 nodes"
assert_eq "memcore: fits on 2 of 2 nodes of partition mixed: $BIG" "$(head -n1 <<<"$MC_OUT")" "--gpu-type a100: only the a100 nodes judged"
assert_contains "$MC_OUT" "  not candidates: $MC_NODE_NAME (its GPUs are t4, the job asks for A100)" "--gpu-type a100: the t4 node named as no candidate"
# No node of the type: no candidate, no verdict of memcore's (Slurm refuses
# a type no node has), never "fits on" nodes of another type.
check --partition mixed --gpus 4 --gpu-type h100
assert_rc 0 "--gpu-type h100: no candidate, let through to Slurm"
assert_not_contains "$MC_OUT" "fits on" "--gpu-type h100: no node judged to fit"
assert_match "$(head -n1 <<<"$MC_OUT")" "^memcore: no node of partition mixed is a candidate for this job \(.*: its GPUs are (a100|t4), the job asks for h100\): Slurm decides\$" "--gpu-type h100: the nodes excluded by their type"

# --- placement: Slurm, not memcore, picks the node -------------------------
# 4 GPUs with 150G fit $MC_NODE_NAME (4 x 16 GiB + 8 workers x 4 GiB + 4
# tasks = 100 GiB) and Slurm may give the job a big node too (4 GPUs,
# 512 GiB), where 4 x 40 GiB + 32 + 4 = 196 GiB does not fit: refused,
# with the fix that keeps it off them and the big nodes' own figures.
check --partition mixed --gpus 4 --mem 150G --json
assert_rc 1 "fits $MC_NODE_NAME, not the big nodes Slurm may give it: refused"
assert_eq false "$(jf .fits)" "fits: false"
assert_eq "mc-big[1-2]" "$(jf .doubt_nodes)" "doubt_nodes: the big nodes"
assert_eq 1 "$(jf .nodes_fit)" "nodes_fit still counts the node it fits"
assert_match "$(jf '.explanation[0]')" "^memcore: fits on 1 of 3 nodes of partition mixed: $MC_NODE_NAME .*; not on mc-big\[1-2\] .*: needs 196 GiB" "the first line: where it fits, where not"
assert_eq "memcore: Slurm may start the job on any of these nodes, and the launch refuses it on mc-big[1-2]: keep the job off those nodes (--exclude=mc-big[1-2]) or size it for those nodes as below" \
	"$(jf '.explanation[1]')" "the doubt line and its fix"
assert_contains "$(jf '.explanation[]')" "memcore: this step on mc-big[1-2] needs more than it was given:" "the big nodes' own explanation"
assert_contains "$(jf '.fix_options[]')" "--mem=196G" "fix_options: the memory that fits them too"
check --partition mixed --gpus 4 --mem 150G --exclude 'mc-big[1-2]'
assert_rc 0 "check --exclude mc-big[1-2]: the fix works as it reads"
# The job's -x and -w narrow the nodes as Slurm does; --constraint is not
# modelled: a job that fits some node is let through, and says why.
J='"gres":"gpu:4","mem":"150G","cpus-per-gpu":"6"'
check --partition mixed --slurm-options "{$J,\"exclude\":\"mc-big[1-2]\"}" --json
assert_rc 0 "-x mc-big[1-2]: the node left fits"
assert_eq "memcore: fits on 1 of 1 node of partition mixed: $NODE1" "$(jf '.explanation[0]')" "-x: only $MC_NODE_NAME judged"
assert_eq null "$(jf .doubt_nodes)" "-x: no doubt"
check --partition mixed --slurm-options "{$J,\"nodelist\":\"mc-big1\"}"
assert_rc 1 "-w mc-big1: the job gets that node, which it does not fit"
assert_match "$(head -n1 <<<"$MC_OUT")" "^memcore: fits on none of the 1 node of partition mixed: not on mc-big1 " "-w: only mc-big1 judged"
# An option that may give the job more than modelled (issue 41): not a
# refusal on a guess, let through; one that only narrows what the job
# gets leaves the refusal.
check --partition mixed --slurm-options "{$J,\"nodelist\":\"mc-big1\",\"ntasks-per-socket\":\"2\"}" --json
assert_rc 0 "-w mc-big1 --ntasks-per-socket=2: let through"
assert_eq "true" "$(jf '.let_through | startswith("memcore: as modelled without --ntasks-per-socket the job does not fit any node of partition mixed; ")')" "... saying why"
check --partition mixed --slurm-options "{$J,\"nodelist\":\"mc-big1\",\"overcommit\":\"1\"}"
assert_rc 1 "-w mc-big1 --overcommit: still refused (it only narrows)"
check --partition mixed --slurm-options "{$J,\"nodelist\":\"$MC_NODE_NAME\"}"
assert_rc 0 "-w $MC_NODE_NAME: fits"
check --partition mixed --slurm-options "{$J,\"exclude\":\"$MC_NODE_NAME,mc-big[1-2]\"}"
assert_rc 0 "-x of every node: Slurm answers"
assert_contains "$MC_OUT" "memcore: the job's --nodelist/--exclude leave no node of partition mixed: Slurm decides" "-x of every node: said"
check --partition mixed --slurm-options "{$J,\"constraint\":\"small\"}"
assert_rc 0 "--constraint: let through"
assert_contains "$MC_OUT" "memcore: it does not fit mc-big[1-2]; the job's --constraint decides whether Slurm may give it one (not modelled at submission): let through, the launch check judges the node it gets" "--constraint: the let-through line"

# --cpus-per-gpu is CPUs (threads): 8 x 4 = 32 CPUs = 16 cores on the
# 2-thread node; 24 cores needed, so refused, and the fix names the option.
check --gpus 8 --mem 300G --cpus-per-gpu 4
assert_rc 1 "--cpus-per-gpu=4 on 2 threads per core: 16 cores, refused"
assert_contains "$MC_OUT" "16 allocated" "16 cores allocated"
assert_contains "$MC_OUT" "fix: --cpus-per-gpu=6" "fix in the user's option"
check --gpus 8 --mem-per-gpu 20G --cpus-per-gpu 6
assert_rc 1 "--mem-per-gpu=20G is 160 GiB: refused"
assert_contains "$MC_OUT" "fix: --mem-per-gpu=25G" "fix in --mem-per-gpu, never --mem next to it"

# --- audit: every GPU node of the partition, one line per shape ------------
mc_run "${MC[@]}" audit --config "$CONF" --partition mixed
assert_rc 0 "audit --partition mixed: every shape meets the rule"
assert_contains "$MC_OUT" "$MC_NODE_NAME: 8 x t4 16 GiB" "audit names the node and its shape"
assert_contains "$MC_OUT" "mc-big[1-2]: 4 x a100 40 GiB" "audit names the other shape"
echo "GpuTypeMemory=t4:16G,a100:160G" >"$MC_CONF_DIR/big-gpus.conf"
mc_run "${MC[@]}" audit --config "$MC_CONF_DIR/big-gpus.conf" --all
assert_rc 1 "audit --all: 4 x 160 GiB on 512 GiB fails the RAM rule"
assert_contains "$MC_OUT" "mc-big[1-2]: 4 x a100 160 GiB, 512 GiB, 64 cores: RAM rule FAILS" "the failing shape"

# --- the cli_filter: the same facts, no Node* keys in memcore.conf ---------
mc_cli_filter_install "$MC_CONF_DIR" "$CONF"
queued() { squeue -h -o %i; }
mc_run sbatch -N1 --gpus=8 --cpus-per-gpu=4 --mem=300G --wrap "echo ran"
assert_ne 0 "$MC_RC" "cli_filter: --cpus-per-gpu=4 refused at submission"
assert_contains "$MC_ERR" "16 allocated" "cli_filter: CPUs counted as threads, as Slurm does"
assert_contains "$MC_ERR" "fix: --cpus-per-gpu=6" "cli_filter: the fix in the user's option"
assert_contains "$MC_ERR" "refused at submission in partition gpu" "cli_filter: says so"
mc_run sbatch -N1 --gpus=8 --mem=400G --wrap "echo ran"
assert_ne 0 "$MC_RC" "cli_filter: --mem above RealMemory refused"
assert_contains "$MC_ERR" "no node of partition gpu has 400 GiB of memory" "cli_filter: the no-node header"
assert_eq "" "$(queued)" "nothing queued"
mc_run sbatch --test-only -N1 --gpus=8 --cpus-per-gpu=6 --mem=300G --wrap "echo ran"
assert_rc 0 "cli_filter: --cpus-per-gpu=6 --mem=300G passes"
# 4 GPUs with 3 CPUs each: 12 cores on the big nodes (one thread per core),
# only 6 on $MC_NODE_NAME (two), whose RAM is below 450G anyway.
# (Slurm itself may then answer that the DOWN nodes are not available:
# the filter's part is to say nothing.)
mc_run sbatch --test-only -N1 -p mixed --gpus-per-node=4 --cpus-per-gpu=3 --mem=450G --wrap "echo ran"
assert_not_contains "$MC_ERR" "memcore:" "cli_filter: fits some node of mixed: passes"
# Fits $MC_NODE_NAME, not the big nodes Slurm may give it: refused, with
# the fix; -x keeps it off them; a partition list that holds mixed is
# narrowed to gpu, which it fits, and the user is told.
mc_run sbatch --test-only -N1 -p mixed --gpus-per-node=4 --cpus-per-gpu=6 --mem=150G --wrap "echo ran"
assert_ne 0 "$MC_RC" "cli_filter: fits some nodes of mixed, not all Slurm may give it: refused"
assert_contains "$MC_ERR" "the launch refuses it on mc-big[1-2]: keep the job off those nodes (--exclude=mc-big[1-2])" "cli_filter: the fix"
mc_run sbatch --test-only -N1 -p mixed -x 'mc-big[1-2]' --gpus-per-node=4 --cpus-per-gpu=6 --mem=150G --wrap "echo ran"
assert_rc 0 "cli_filter: with -x mc-big[1-2] it passes"
assert_not_contains "$MC_ERR" "memcore:" "cli_filter: -x: nothing to say"
mc_run sbatch --test-only -N1 -p mixed,gpu --gpus-per-node=4 --cpus-per-gpu=6 --mem=150G --wrap "echo ran"
assert_rc 0 "cli_filter: -p mixed,gpu passes, narrowed"
assert_contains "$MC_ERR" "memcore: the job does not fit partition mixed (fits on 1 of 3 nodes of partition mixed: " "cli_filter: the partition it does not fit, named"
assert_contains "$MC_ERR" "): submitted to --partition=gpu only" "cli_filter: ... and where it goes"
assert_match "$MC_ERR" "in partition gpu" "sbatch --test-only: Slurm would start it in gpu"
# without CPUs a job gets one per task: refused on every shape
mc_run sbatch --test-only -N1 -p mixed --gpus-per-node=4 --mem=450G --wrap "echo ran"
assert_ne 0 "$MC_RC" "cli_filter: one CPU for 4 GPUs fits no node of mixed"
assert_contains "$MC_ERR" "memcore: fits on none of the 3 nodes of partition mixed" "cli_filter: the partition's answer"

# --- slurmctld stopped -------------------------------------------------------
_mc_kill_wait TERM "$(_mc_pid_of slurmctld)"
check --gpus 8 --mem 300G
assert_rc 3 "check with slurmctld stopped exits 3"
assert_contains "$MC_ERR" "memcore: cannot reach slurmctld (slurm.conf $SLURM_CONF)" "and says why"
mc_run sbatch -v -N1 --gpus=8 --mem=400G --wrap "echo ran"
assert_contains "$MC_ERR" "memcore: submit-time check skipped" "cli_filter lets the job through, and logs why"
assert_contains "$MC_ERR" "cannot reach slurmctld" "the reason"
assert_not_contains "$MC_ERR" "refused at submission" "no refusal without slurmctld's facts"
mc_log "check with slurmctld stopped: rc $MC_RC"
