#!/bin/bash
# memcore check: the node's cores rule (G x (w + 1) + ReservedCores) is said
# to be the node's, not the step's allocation, in the first line; the
# worker limit says whether the node or the allocation sets it.
. "$(dirname "$0")/lib.sh"

T4=$DATA/aws-g4dn-metal-2xxeon8259cl-8xt4.xml	# 8 GPUs, 48 cores
# 1 GPU, w=10: the step's 11 cores are there (48), the node's 8 x 11 + 4 = 92
# are not.
run_mc check --config "$TMP/empty.conf" --topology "$T4" --gpus 1 --dataloader-workers 10
expect_eq "node rule: exit" "$RC" 1
expect_eq "node rule: first line" "$(head -n1 <<<"$OUT")" \
	"memcore: this step is refused by the node's cores rule, not its allocation: the node's 8 GPUs at 10 DataLoader workers each need $((8 * (10 + 1) + 4)) cores, it has 48:"
expect_contains "node rule: the rule's line" "$OUT" "node has 48 cores, needs 92 = 8 GPUs x (10 workers + 1) + 4 reserved"
# and the allocation short as well (5 cores < 11)
run_mc check --config "$TMP/empty.conf" --topology "$T4" --gpus 1 --dataloader-workers 10 --cores 5
expect_eq "node rule + short allocation: first line" "$(head -n1 <<<"$OUT")" \
	"memcore: this step is refused by the node's cores rule, and needs more than it was given: the node's 8 GPUs at 10 DataLoader workers each need 92 cores, it has 48:"

# The worker limit: 8 x (w + 1) + 4 <= 48 gives w <= 4, set by the node
# (the whole node's 48 cores would allow 47 for one GPU).
run_mc check --config "$TMP/empty.conf" --topology "$T4" --gpus 1 --dataloader-workers 1 --json
expect_eq "limit: max_dataloader_workers" "$(jq -r .max_dataloader_workers <<<"$OUT")" $(((48 - 4) / 8 - 1))
run_mc check --config "$TMP/empty.conf" --topology "$T4" --gpus 1 --dataloader-workers 1
expect_eq "limit by the node: text" "$(tail -n1 <<<"$OUT")" \
	"  up to 4 DataLoader workers per GPU fit this node (its cores and RAM rules; more allocation would not raise it)"
# 4 cores for one GPU: w + 1 <= 4 gives 3, the allocation's limit
run_mc check --config "$TMP/empty.conf" --topology "$T4" --gpus 1 --dataloader-workers 1 --cores 4
expect_eq "limit by the allocation: text" "$(tail -n1 <<<"$OUT")" \
	"  up to 3 DataLoader workers per GPU fit this allocation"
finish
