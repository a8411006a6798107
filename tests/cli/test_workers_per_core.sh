#!/bin/bash
# WorkersPerCore= (memcore.conf(5)): how many DataLoader workers share a
# core. The field case, facebookresearch/deit#81
# (https://github.com/facebookresearch/deit/issues/81): "We use 32 cpu and 8
# gpu, the total memory(RAM) is 200G", --nproc_per_node=8 --num_workers 32,
# the GPUs starved; the maintainer's "should be 4 in your case", the
# reporter's "I set the num_workers to be 4 and it worked now!". By the
# book's rule (the default, a core a worker) 4 needs 8 x (4 + 1) + 4 = 44
# cores and memcore's fix is 2; with WorkersPerCore=2 the maintainers' 4
# fits (8 x (4 / 2 + 1) + 4 = 28) and is the fix. Every place that counts
# or says cores agrees: check, check --partition (a partition line's key),
# the audit, the binding plan, the JSON.
. "$(dirname "$0")/lib.sh"

NODE='NodeRam=200G\nNodeCores=32\nNodeGpus=8\n'
printf "$NODE" >"$TMP/book.conf"
printf "${NODE}WorkersPerCore=2\n" >"$TMP/wpc.conf"
# A partition that says it, beside one that does not.
printf "${NODE}PartitionName=deit WorkersPerCore=2\nPartitionName=other Mode=enforce\n" >"$TMP/part.conf"
check() { run_mc check --gpus 8 --mem 190G --cpus-per-gpu 4 "$@"; }
field() { jq -r "$1" <<<"$OUT"; }
# the rule, from the sentence: a core for the GPU's process, the workers'
# cores w / N rounded up
node_cores() { echo $((8 * (($1 + $2 - 1) / $2 + 1) + 4)); }	# W N

# CONF N W RC MOST: the verdict at W workers under WorkersPerCore=N, its
# node cores from the rule and the most workers the node holds.
row() {
	check --config "$TMP/$1.conf" --dataloader-workers "$3" --json
	expect_eq "$1, w=$3: exit" "$RC" "$4"
	expect_eq "$1, w=$3: node cores" "$(field .node_cores_needed)" "$(node_cores "$3" "$2")"
	expect_eq "$1, w=$3: most workers" "$(field .max_dataloader_workers)" "$5"
}
# The default is the book's rule: the reporter's 32 and the maintainers'
# 4 are refused, memcore's fix is 2. WorkersPerCore=2: the maintainers' 4
# fits, and is what the reporter's 32 is told; an odd w rounds up.
row book 1 32 1 2
row book 1 4 1 2
row book 1 2 0 2
row wpc 2 4 0 4
row wpc 2 32 1 4
row wpc 2 5 1 4
check --config "$TMP/book.conf" --dataloader-workers 32
expect_contains "book, w=32: the fix" "$OUT" "--dataloader-workers=2 is the most this node can hold"
check --config "$TMP/book.conf" --dataloader-workers 4
expect_contains "book, w=4: the rule's line" "$OUT" "node has 32 cores, needs 44 = 8 GPUs x (4 workers + 1) + 4 reserved"
check --config "$TMP/wpc.conf" --dataloader-workers 4
expect_contains "WorkersPerCore=2: the rule in words" "$OUT" "CPU cores     24 needed = 8 GPUs x (4 workers / WorkersPerCore=2 + 1)"
check --config "$TMP/wpc.conf" --dataloader-workers 32
expect_contains "WorkersPerCore=2, w=32: the maintainers' 4" "$OUT" "--dataloader-workers=4 is the most this node can hold"
expect_contains "WorkersPerCore=2, w=32: the rule" "$OUT" "needs $(node_cores 32 2) = 8 GPUs x (32 workers / WorkersPerCore=2 + 1) + 4 reserved"

# A partition line's key, through check --partition, and only there.
check --config "$TMP/part.conf" --partition deit --dataloader-workers 4 --json
expect_eq "partition deit, w=4: fits" "$RC" 0
expect_eq "partition deit: node cores" "$(field .node_cores_needed)" 28
check --config "$TMP/part.conf" --partition other --dataloader-workers 4 --json
expect_eq "partition other, w=4: refused" "$RC" 1
expect_eq "partition other: node cores" "$(field .node_cores_needed)" 44

# The audit counts the node's rule with it (at DataloaderWorkers=4).
printf "DataloaderWorkers=4\nWorkersPerCore=2\n" >"$TMP/audit.conf"
run_mc audit --config "$TMP/audit.conf" --topology "$DATA/aws-g4dn-metal-2xxeon8259cl-8xt4.xml"
expect_contains "audit: the rule" "$OUT" "cores rule: ok - 48 cores, 28 needed = 8 GPUs x (4 workers / WorkersPerCore=2 + 1) + 4 reserved"
run_mc audit --config "$TMP/audit.conf" --topology "$DATA/aws-g4dn-metal-2xxeon8259cl-8xt4.xml" --json
expect_eq "audit --json: cores_needed" "$(field .cores_needed)" 28

# The binding plan wants the rule's cores a GPU: 4 / 2 + 1 = 3.
run_mc plan --config "$TMP/wpc.conf" --topology "$DATA/aws-g4dn-metal-2xxeon8259cl-8xt4.xml" --gpus 2 --dataloader-workers 4
expect_eq "plan: exit" "$RC" 0
expect_contains "plan: the rule" "$OUT" "2 GPUs x (4 workers / WorkersPerCore=2 + 1) cores"
expect_contains "plan: 3 cores a GPU" "$OUT" "(3 of 3 cores"

# 0 means nothing: an error naming the file and line, nothing judged.
printf 'Mode=enforce\n\nWorkersPerCore=0\n' >"$TMP/zero.conf"
check --config "$TMP/zero.conf" --dataloader-workers 4
expect_eq "WorkersPerCore=0: exit" "$RC" 2
expect_contains "WorkersPerCore=0: file and line" "$ERR" "$TMP/zero.conf:3: WorkersPerCore: must be at least 1"
expect_eq "WorkersPerCore=0: nothing on stdout" "$OUT" ""
run_mc keys
expect_contains "keys: WorkersPerCore's range" "$OUT" "WorkersPerCore=N (1 to 1024)"
finish
