#!/bin/bash
# memcore check --dataset-in-memory[=SIZE][:KIND]: a dataset held in RAM
# as Python objects (the default) is one copy per task and one per
# DataLoader worker (the Open Book, CPU memory), so the RAM need grows by
# exactly SIZE x (workers + 1) x tasks; numpy/Arrow data (:arrays) one per
# task, the workers sharing it; the explanation says the formula and the
# fix, the JSON carries the term, SIZE defaults to the --dataset paths'
# measured size, and bad values exit 2 naming the option.
. "$(dirname "$0")/lib.sh"

GIB=1073741824
MIB=1048576
printf 'RamPerTask=1G\nReservedCores=4\nNodeRam=2048G\nNodeCores=96\nNodeGpus=8\nLocalScratch=/local/scratch\n' >"$TMP/node.conf"
check() { run_mc check --config "$TMP/node.conf" --gpu-memory 40G "$@"; }
field() { jq -r "$1" <<<"$OUT"; }
expl() { jq -r '.explanation | join("\n")' <<<"$OUT"; }

# the figure, from the sentence: one copy in each task, one in each worker
copies() { echo $(($1 * $3 + $1 * $3 * $2)); }	# SIZE WORKERS TASKS

# GPUS WORKERS SIZE_ARG SIZE_BYTES TASKS [more options]
row() {
	local g=$1 w=$2 arg=$3 bytes=$4 t=$5
	shift 5
	check --json --gpus "$g" --dataloader-workers "$w" --mem 1500G "$@"
	expect_eq "g=$g w=$w without: exit" "$RC" 0
	local base
	base=$(field .ram_needed_bytes)
	expect_eq "g=$g w=$w without: no dataset key" "$(field 'has("ram_dataset_bytes")')" false
	check --json --gpus "$g" --dataloader-workers "$w" --mem 1500G \
		--dataset-in-memory="$arg" "$@"
	expect_eq "g=$g w=$w $arg: exit" "$RC" 0
	local want
	want=$(copies "$bytes" "$w" "$t")
	expect_eq "g=$g w=$w $arg: ram_dataset_bytes" "$(field .ram_dataset_bytes)" "$want"
	expect_eq "g=$g w=$w $arg: dataset_in_memory_bytes" "$(field .dataset_in_memory_bytes)" "$bytes"
	expect_eq "g=$g w=$w $arg: need grows by exactly the copies" \
		"$(($(field .ram_needed_bytes) - base))" "$want"
}
row 3 4 20G $((20 * GIB)) 3
row 8 2 5G $((5 * GIB)) 8
row 1 0 512 $((512 * MIB)) 1		# MiB without a suffix, as --mem
row 2 3 3G $((3 * GIB)) 8 --ntasks-per-node 8 --cpus-per-task 4

# 8+2 loaders are 10 workers a rank
check --json --gpus 4 --dataloader-workers 8+2 --mem 1500G --dataset-in-memory=1G
expect_eq "8+2: ten workers' copies" "$(field .ram_dataset_bytes)" "$(copies $GIB 10 4)"

# The explanation: the formula with its numbers, and the fix when the step
# does not fit (3 x 40 GiB floor + 3 x 4 x 4 GiB workers + 3 tasks + 300).
check --gpus 3 --dataloader-workers 4 --mem 400G --dataset-in-memory=20G
expect_eq "refused exit" "$RC" 1
expect_contains "sum" "$OUT" "host RAM      471 GiB needed = 120 GiB GPU floor + 12 workers x 4 GiB + 3 tasks x 1 GiB + 300 GiB dataset in RAM"
expect_contains "formula line" "$OUT" "
                dataset in RAM  3 tasks x 20 GiB x (4 workers + 1) = 300 GiB: a copy in each task and each DataLoader worker"
expect_contains "fix" "$OUT" "instead: stage the dataset to local scratch and map it (keep_in_memory=False)"
case $OUT in *"stage it first"*) fail "a staging command without a --dataset path" ;; esac
check --json --gpus 3 --dataloader-workers 4 --mem 400G --dataset-in-memory=20G
expect_contains "json explanation" "$(expl)" "dataset in RAM  3 tasks x 20 GiB x (4 workers + 1) = 300 GiB"
expect_eq "json fix_mem_bytes" "$(field .fix_mem_bytes)" $((471 * GIB))
# A small dataset on a step that fits: the line, no advice.
check --gpus 3 --dataloader-workers 4 --mem 400G --dataset-in-memory=1G
expect_eq "small exit" "$RC" 0
case $OUT in *"--dataset-in-memory"*|*"keep_in_memory=False"*) fail "advice for a small dataset: $OUT" ;; esac
expect_contains "small line" "$OUT" "= 15 GiB: a copy in each task"

# Without SIZE: the --dataset paths' measured size (files' st_size, here
# sparse), counted independently; and the staging command.
mkdir -p "$TMP/ds/train"
truncate -s 6G "$TMP/ds/train/data-00000.arrow"
truncate -s 1234567 "$TMP/ds/train/state.json"
size=$(find "$TMP/ds" -type f -printf '%s\n' | awk '{ s += $1 } END { print s }')
check --json --gpus 2 --dataloader-workers 2 --mem 1500G --dataset "$TMP/ds" --dataset-in-memory
expect_eq "measured exit" "$RC" 0
expect_eq "measured size" "$(field .dataset_in_memory_bytes)" "$size"
expect_eq "measured copies" "$(field .ram_dataset_bytes)" "$(copies "$size" 2 2)"
real=$(realpath "$TMP/ds")
expect_contains "staging command" "$(expl)" "stage it first: memcore stage $real /local/scratch/job_\$SLURM_JOB_ID"
MEMCORE_DATASET_IN_MEMORY=yes MEMCORE_DATASET=$TMP/ds check --json --gpus 2 --dataloader-workers 2 --mem 1500G
expect_eq "variables: measured" "$(field .dataset_in_memory_bytes)" "$size"
MEMCORE_DATASET_IN_MEMORY=2G check --json --gpus 2 --dataloader-workers 2 --mem 1500G
expect_eq "variable SIZE" "$(field .dataset_in_memory_bytes)" $((2 * GIB))

# Size unknown: a clear error saying to pass SIZE, never a silent 0.
check --gpus 2 --dataset-in-memory
expect_eq "no path exit" "$RC" 2
expect_contains "no path" "$ERR" "memcore: --dataset-in-memory without SIZE measures the --dataset paths, and none is given: add --dataset=PATH, or give its size in RAM: --dataset-in-memory=SIZE"
check --gpus 2 --dataset-in-memory --dataset "$TMP/nothing-here"
expect_eq "missing path exit" "$RC" 2
expect_contains "missing path" "$ERR" "(--dataset) is unknown: it cannot be read (No such file or directory); give its size in RAM: --dataset-in-memory=SIZE"
mkdir -p "$TMP/empty-ds"
check --gpus 2 --dataset-in-memory --dataset "$TMP/empty-ds"
expect_eq "empty path exit" "$RC" 2
expect_contains "empty path" "$ERR" "measured 0 bytes"

# Bad values: exit 2, the option and the value named.
for v in abc:"not a number" 0:"expected a size from 1M to 1024T" \
	-5G:"negative value not allowed" 99999999999999999999:"too large" \
	1.5G:"not a whole number" 2P:"unknown size suffix"; do
	check --gpus 2 --dataset-in-memory="${v%%:*}"
	expect_eq "--dataset-in-memory=${v%%:*} exit" "$RC" 2
	expect_contains "--dataset-in-memory=${v%%:*}" "$ERR" "memcore: --dataset-in-memory=${v%%:*}: ${v#*:}"
	[ -z "$OUT" ] || fail "--dataset-in-memory=${v%%:*}: stdout not empty: $OUT"
done
MEMCORE_DATASET_IN_MEMORY=abc check --gpus 2
expect_eq "bad variable exit" "$RC" 2
expect_contains "bad variable" "$ERR" "memcore: MEMCORE_DATASET_IN_MEMORY=abc: not a number"
# What the data is (:KIND). ultralytics/ultralytics#22307
# (https://github.com/ultralytics/ultralytics/issues/22307): DDP on 8 GPUs
# with cache=True, "Caching images (205.4GB RAM)" (ultralytics/data/
# base.py: a list of numpy images per rank, GB = 1 << 30), a 1.7 TB node,
# "each GPU process creates its own copy": 8 copies, OOM. Its workers
# (default 8) share the numpy pages: as arrays, 8 x 205.4 GiB; as objects
# (Python lists, the default, pytorch#13246) 8 x 9 copies.
printf 'NodeRam=1700G\nNodeCores=128\nNodeGpus=8\n' >"$TMP/yolo.conf"
cache=$((210330 * MIB))		# 205.4 GiB to the MiB
run_mc check --config "$TMP/yolo.conf" --gpus 8 --dataloader-workers 8 --dataset-in-memory=210330M:arrays --json
expect_eq "22307 arrays: refused, as the node OOMed" "$RC" 1
expect_eq "22307 arrays: the reporter's 8 copies" "$(field .ram_dataset_bytes)" $((8 * cache))
expect_eq "22307 arrays: kind" "$(field .dataset_in_memory_kind)" arrays
expect_eq "22307 arrays: copies a task" "$(field .dataset_copies_per_task)" 1
expect_contains "22307 arrays: the line" "$(expl)" "dataset in RAM  8 tasks x 205.40 GiB = 1643.20 GiB: a copy in each task, its DataLoader workers share it"
expect_contains "22307 arrays: the fix maps it" "$(expl)" "instead: stage the dataset to local scratch"
run_mc check --config "$TMP/yolo.conf" --gpus 8 --dataloader-workers 8 --dataset-in-memory=210330M --json
expect_eq "22307 objects: 72 copies" "$(field .ram_dataset_bytes)" $((72 * cache))
expect_eq "22307 objects: kind" "$(field .dataset_in_memory_kind)" objects
expect_eq "22307 objects: copies a task" "$(field .dataset_copies_per_task)" 9
expect_contains "22307 objects: arrays offered" "$(expl)" "if it is that, say --dataset-in-memory=206G:arrays (1643.20 GiB, not 14788.83 GiB)"
# the kind alone measures the --dataset paths; the variable says it too
check --json --gpus 2 --dataloader-workers 2 --mem 1500G --dataset "$TMP/ds" --dataset-in-memory=arrays
expect_eq "arrays, measured: copies" "$(field .ram_dataset_bytes)" $((2 * size))
MEMCORE_DATASET_IN_MEMORY=2G:arrays check --json --gpus 2 --dataloader-workers 2 --mem 1500G
expect_eq "variable 2G:arrays" "$(field .ram_dataset_bytes)" $((4 * GIB))
check --gpus 2 --dataset-in-memory=2G:numpy
expect_eq "unknown kind: exit" "$RC" 2
expect_contains "unknown kind" "$ERR" "memcore: --dataset-in-memory=2G:numpy: unknown kind 'numpy' after ':'"

check --gpus 2 --dataset-in-memory=2G --dataset-in-memory=3G
expect_eq "twice exit" "$RC" 2
expect_contains "twice" "$ERR" "given twice with different values"
finish
