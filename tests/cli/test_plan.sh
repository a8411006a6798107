#!/bin/bash
# memcore plan: the binding plan on real topologies, --json shape, exit codes.
. "$(dirname "$0")/lib.sh"

LENOVO=$DATA/lenovo-sd665nv3-2xepyc9555-nps4-4xh200.xml
LOCAL=$DATA/local-2numa-2gpu.xml

run_mc plan --config "$TMP/empty.conf" --topology "$LENOVO" --gpus 4 --dataloader-workers 2 --json
expect_eq "lenovo rc" "$RC" 0
expect_eq "lenovo indices" "$(jq -c '[.gpus[].index]' <<<"$OUT")" "[0,1,2,3]"
expect_eq "lenovo numa" "$(jq -c '[.gpus[].numa_node]' <<<"$OUT")" "[1,2,6,7]"
expect_eq "lenovo cpus" "$(jq -c '[.gpus[].cpus]' <<<"$OUT")" \
	'["16-18,144-146","32-34,160-162","96-98,224-226","112-114,240-242"]'
expect_eq "lenovo warnings" "$(jq -c '[.gpus[].warnings | length] | add' <<<"$OUT")" 0

run_mc plan --config "$TMP/empty.conf" --topology "$LENOVO" --gpus 2 --dataloader-workers 0
expect_eq "text rc" "$RC" 0
expect_contains "text" "$OUT" "GPU 0  NUMA 1  cpus 16,144  (1 of 1 cores)"

# Allowed CPUs without NUMA node 1: a warning in JSON, exit 1.
run_mc plan --config "$TMP/empty.conf" --topology "$LOCAL" --gpus 2 --dataloader-workers 0 --cpu-list 0 --json
expect_eq "warning rc" "$RC" 1
expect_eq "warning cpus" "$(jq -c '[.gpus[].cpus]' <<<"$OUT")" '["0",""]'
expect_contains "warning text" "$(jq -r '.gpus[1].warnings[0]' <<<"$OUT")" \
	"memcore: GPU 1 is on NUMA node 1"
run_mc plan --config "$TMP/empty.conf" --topology "$LOCAL" --gpus 2 --dataloader-workers 0 --cpu-list 0
expect_contains "text warning on stderr" "$ERR" "--gres-flags=enforce-binding"

# JUWELS Booster, NPS4: 6 cores per NUMA node, 4 GPUs at w=8 need 9 each;
# the extra 3 come from a GPU-less NUMA node of the same package.
JUWELS=$DATA/juwels-booster-2xepyc7402-nps4-4xa100-pcionly.xml
run_mc plan --config "$TMP/empty.conf" --topology "$JUWELS" --gpus 4 --dataloader-workers 8 --json
expect_eq "juwels rc" "$RC" 0
expect_eq "juwels cores" "$(jq -c '[.gpus[].cores]' <<<"$OUT")" "[9,9,9,9]"
expect_eq "juwels cpus" "$(jq -c '[.gpus[].cpus]' <<<"$OUT")" \
	'["0-2,18-23,48-50,66-71","3-11,51-59","24-26,42-47,72-74,90-95","27-35,75-83"]'
expect_eq "juwels warnings" "$(jq -c '[.gpus[].warnings | length] | add' <<<"$OUT")" 0
expect_eq "juwels own cores" "$(jq -c '[.gpus[].cores_local]' <<<"$OUT")" "[6,6,6,6]"
run_mc plan --config "$TMP/empty.conf" --topology "$JUWELS" --gpus 1 --dataloader-workers 8
expect_contains "juwels text borrowed" "$OUT" "GPU 0  NUMA 3  cpus 0-2,18-23,48-50,66-71  (9 of 9 cores, 3 from nearby NUMA nodes)"
# check agrees: the whole node fits 4 GPUs at w=8 (36 + 4 <= 48 cores).
run_mc check --config "$TMP/empty.conf" --topology "$JUWELS" --gpus 4 --dataloader-workers 8 --gpu-memory 40G --mem 300G
expect_eq "juwels check rc" "$RC" 0
# Only GPU 0's own 6-core domain: 6 of 9, a warning, exit 1; check refuses.
run_mc plan --config "$TMP/empty.conf" --topology "$JUWELS" --gpus 1 --dataloader-workers 8 --cores 18-23,66-71
expect_eq "juwels own domain rc" "$RC" 1
expect_contains "juwels own domain plan" "$OUT" "GPU 0  NUMA 3  cpus 18-23,66-71  (6 of 9 cores)"
expect_contains "juwels own domain warning" "$ERR" "memcore: GPU 0 gets 6 of the 9 cores it needs"
run_mc check --config "$TMP/empty.conf" --topology "$JUWELS" --gpus 1 --dataloader-workers 8 --gpu-memory 40G --mem 250G --cpus 12
expect_eq "juwels own domain check rc" "$RC" 1

# Bad input: exit 2 with a message.
# Without --gpus: every GPU of the node.
run_mc plan --config "$TMP/empty.conf" --topology "$LENOVO" --dataloader-workers 2 --json
expect_eq "default gpus rc" "$RC" 0
expect_eq "default gpus indices" "$(jq -c '[.gpus[].index]' <<<"$OUT")" "[0,1,2,3]"
expect_eq "default gpus numa" "$(jq -c '[.gpus[].numa_node]' <<<"$OUT")" "[1,2,6,7]"
run_mc plan --config "$TMP/empty.conf" --topology "$LOCAL" --dataloader-workers 0
expect_eq "default gpus local rc" "$RC" 0
expect_contains "default gpus local" "$OUT" "2 GPUs x (0 workers + 1) cores"
run_mc plan --help
expect_contains "help: default" "$OUT" "default: every GPU of the node"
# A node without GPUs has nothing to plan (a GPU-less test machine).
if [ "$("$MEMCORE" audit --config "$TMP/empty.conf" --json | jq '.gpus | length')" = 0 ]; then
	run_mc plan --config "$TMP/empty.conf"
	expect_eq "no GPUs rc" "$RC" 2
	expect_contains "no GPUs message" "$ERR" "memcore: plan: this machine has no GPUs; name a GPU node with --topology FILE.xml"
fi

for args in "--gpus 3" "--gpus 0" "--gpus 2 --cores 0-" "--gpus 2 --cores x" \
	    "--gpus 2 --dataloader-workers -1" "--gpus 2 extra" "--gpus 2 --bogus"; do
	# shellcheck disable=SC2086
	run_mc plan --config "$TMP/empty.conf" --topology "$LOCAL" $args
	expect_eq "plan $args: rc" "$RC" 2
	expect_contains "plan $args: message" "$ERR" "memcore: "
done
finish
