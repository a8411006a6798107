#!/bin/bash
# WorkersPerCore= at launch, through real srun: the node rule and the
# step's cores are counted with the site's workers a core, as memcore
# check counts them (tests/cli/test_workers_per_core.sh, deit#81). The node
# claims an AWS g4dn.metal (48 cores x 2 threads, 8 x T4 of 14.76 GiB).
# At 5 workers a GPU the book's rule needs 8 x (5 + 1) + 4 = 52 cores of
# 48: refused; with WorkersPerCore=2, 8 x (3 + 1) + 4 = 36: it runs, and
# the step's 32 cores are --cpus-per-gpu=8 (2 threads a core).
. "$(dirname "$0")/lib.sh"

TOPO=$MC_TOP/tests/data/aws-g4dn-metal-2xxeon8259cl-8xt4.xml
mc_cluster_start
CONF=$MC_CONF_DIR/memcore.conf
policy() { # the g4dn topology, no binding (this VM is not a g4dn), lines
	{ echo "TopologyFile=$TOPO"; echo "Bind=none"; printf '%s\n' "$@"; } >"$CONF"
}
mc_set_plugstack "required $MEMCORE_BUILD/memcore.so config=$CONF"
# 8 x 14.76 GiB + 40 workers x 4 GiB + 8 x 1 GiB = 286.04 GiB
STEP=(--gpus=8 --dataloader-workers=5 --cpus-per-gpu=8 --mem=300G)

policy
mc_run srun -N1 -n1 "${STEP[@]}" true
assert_ne 0 "$MC_RC" "the book's rule: refused at launch"
assert_contains "$MC_ERR" "node has 48 cores, needs 52 = 8 GPUs x (5 workers + 1) + 4 reserved" "the book's rule in words"
assert_contains "$MC_ERR" "--dataloader-workers=4 is the most this node can hold" "the fix by the book's rule"

policy "WorkersPerCore=2"
mc_run srun -N1 -n1 "${STEP[@]}" --memcore=explain printenv MEMCORE_DATALOADER_WORKERS
assert_eq 0 "$MC_RC" "WorkersPerCore=2: the step runs"
assert_contains "$MC_ERR" "32 needed = 8 GPUs x (5 workers / WorkersPerCore=2, rounded up, + 1)" "the site's rule in words, at launch"
assert_eq 5 "$MC_OUT" "the step's workers as judged"
assert_node_idle "node IDLE at the end"
