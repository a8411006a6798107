#!/bin/bash
# memcore check: the small cases from real reports give their verdicts, with
# exit status, JSON fields and explanation; bad input exits 2 and names it.
. "$(dirname "$0")/lib.sh"

GIB=1073741824
# The node is described by the policy (as on a login host): no topology.
node_conf() { # RAM CORES GPUS [more keys]
	printf 'RamPerTask=0\nReservedCores=4\nNodeRam=%s\nNodeCores=%s\nNodeGpus=%s\n%s\n' \
		"$1" "$2" "$3" "${4:-}" >"$TMP/node.conf"
}
check() { run_mc check --config "$TMP/node.conf" --json "$@"; }
field() { jq -r "$1" <<<"$OUT"; }
expl() { jq -r '.explanation | join("\n")' <<<"$OUT"; }

# 1 GPU of 16 GiB, w=4, RamPerWorker=5G, --mem=32G: 36 GiB needed, refused;
# w=1 fits with 21 GiB.
node_conf 512G 64 1 RamPerWorker=5G
check --gpus 1 --gpu-memory 16G --dataloader-workers 4 --mem 32G --cores 8
expect_eq "1gpu w=4 exit" "$RC" 1
expect_eq "1gpu w=4 fits" "$(field .fits)" false
expect_eq "1gpu w=4 needed" "$(field .ram_needed_bytes)" $((36 * GIB))
expect_eq "1gpu w=4 allocated" "$(field .ram_allocated_bytes)" $((32 * GIB))
expect_contains "1gpu w=4 text" "$(expl)" "36 GiB needed"
check --gpus 1 --gpu-memory 16G --dataloader-workers 1 --mem 32G --cores 8
expect_eq "1gpu w=1 exit" "$RC" 0
expect_eq "1gpu w=1 needed" "$(field .ram_needed_bytes)" $((21 * GIB))

# Two DataLoaders per rank (train + validation): 3+1 workers are the
# same needs as 4, and the same verdict, JSON for JSON.
check --gpus 1 --gpu-memory 16G --dataloader-workers 4 --mem 32G --cores 8
W4=$OUT
check --gpus 1 --gpu-memory 16G --dataloader-workers 3+1 --mem 32G --cores 8
expect_eq "1gpu w=3+1 exit" "$RC" 1
expect_eq "1gpu w=3+1 same as w=4" "$OUT" "$W4"
check --gpus 4 --gpu-memory 16G --dataloader-workers 8+2 --mem 512G --cores 64
W82=$OUT
check --gpus 4 --gpu-memory 16G --dataloader-workers 10 --mem 512G --cores 64
expect_eq "4gpu w=8+2 same as w=10" "$W82" "$OUT"
expect_eq "4gpu w=8+2 cores" "$(field .cores_needed)" 44

# 2 GPUs on a 16-core node, w=12: refused; 5 is the most the node holds.
node_conf 512G 16 2
check --gpus 2 --gpu-memory 16G --dataloader-workers 12 --mem 256G --cores 16
expect_eq "2gpu exit" "$RC" 1
expect_eq "2gpu max workers" "$(field .max_dataloader_workers)" 5
expect_contains "2gpu fix" "$(expl)" "--dataloader-workers=5"

# 8 GPUs on a 24-core node, w=4: 44 node cores needed; w=1 is the most.
node_conf 1T 24 8
check --gpus 8 --gpu-memory 16G --dataloader-workers 4 --mem 512G --cores 24
expect_eq "8gpu/24 exit" "$RC" 1
expect_eq "8gpu/24 node cores" "$(field .node_cores_needed)" 44
expect_eq "8gpu/24 max workers" "$(field .max_dataloader_workers)" 1
expect_contains "8gpu/24 text" "$(expl)" "44"
# 4 GPUs on a 40-core node, w=4: fits.
node_conf 1T 40 4
check --gpus 4 --gpu-memory 16G --dataloader-workers 4 --mem 512G --cores 20
expect_eq "4gpu/40 exit" "$RC" 0
expect_eq "4gpu/40 fits" "$(field .fits)" true
expect_eq "4gpu/40 cores" "$(field .cores_needed)" 20

# 8 x 80 GiB on a 500 GiB node, --mem=480G, w=2, RamPerWorker=2G: 672 GiB
# needed, more than the node has, whose RAM is below its 8 GPUs' 640 GiB:
# the node fails the site's RAM rule, and no allocation on it can fit.
node_conf 500G 64 8 RamPerWorker=2G
check --gpus 8 --gpu-memory 80G --dataloader-workers 2 --mem 480G --cores 24
expect_eq "8x80 exit" "$RC" 1
expect_eq "8x80 needed" "$(field .ram_needed_bytes)" $((672 * GIB))
expect_contains "8x80 text" "$(expl)" "cannot fit: the node fails the site's RAM rule (500 GiB for 8 x 80 GiB GPUs)"
expect_eq "8x80 impossible" "$(field .impossible)" true
expect_eq "8x80 no fix options" "$(field '.fix_options | length')" 0
# 4 x 80 GiB on 360 GiB at w=8: the node meets its rule (320 GiB), but the
# step's 384 GiB does not fit it; w=5 does.
node_conf 360G 64 4 RamPerWorker=2G
check --gpus 4 --gpu-memory 80G --dataloader-workers 8 --mem 300G --cores 40
expect_eq "4x80/360 exit" "$RC" 1
expect_eq "4x80/360 header" "$(field '.explanation[0]')" "memcore: this step cannot fit: it needs 384 GiB of RAM, the node has 360 GiB:"
expect_contains "4x80/360 fix" "$(expl)" "no allocation on this node can fit 384 GiB (node has 360 GiB)"
expect_contains "4x80/360 fix" "$(expl)" "--dataloader-workers=5 is the most this node can hold with --mem=360G"

# A job of 4 GPUs with -c 6 whose srun step got 4 cores (1 CPU per task),
# w=4: the step's 4 cores are checked, and the fix gives the step its CPUs.
node_conf 1T 64 4
check --gpus 4 --gpu-memory 16G --dataloader-workers 4 --mem 512G --cores 4 --job-cores 24
expect_eq "-c 6 exit" "$RC" 1
expect_eq "-c 6 cores needed" "$(field .cores_needed)" 20
expect_eq "-c 6 cores allocated" "$(field .cores_allocated)" 4
expect_contains "-c 6 fix" "$(expl)" "--cpus-per-task"
expect_contains "-c 6 env" "$(expl)" "SRUN_CPUS_PER_TASK"

# The README's example: 8 x 80 GiB, w=2, 4 GiB per worker, 400G, 16 cores.
node_conf 2T 64 8 RamPerWorker=4G
check --gpus 8 --gpu-memory 80G --dataloader-workers 2 --mem 400G --cores 16
expect_eq "example exit" "$RC" 1
expect_eq "example needed" "$(field .ram_needed_bytes)" $((704 * GIB))
expect_eq "example cores" "$(field .cores_needed)" 24
expect_contains "example text" "$(expl)" "704 GiB needed"
expect_contains "example fix" "$(expl)" "--mem=704G"
# Human output: the same lines on stdout, exit 1.
run_mc check --config "$TMP/node.conf" --gpus 8 --gpu-memory 80G --dataloader-workers 2 --mem 400G --cores 16
expect_eq "text exit" "$RC" 1
expect_contains "text first line" "$OUT" "memcore: "
expect_contains "text short" "$OUT" "short 304 GiB"

# DeepSpeed's t5-3b figure: ZeRO-2 with optimizer offload on 8 GPUs.
check --gpus 8 --gpu-memory 80G --mem 2T --model-params 2851598336 --zero-stage 2 --offload optimizer
expect_near "t5-3b zero2 offload GiB" "$(jq '.ram_zero_bytes / 1073741824' <<<"$OUT")" 127.48 0.005
# ... and without offload: each rank builds the fp32 model, 127.48 GiB too.
check --gpus 8 --gpu-memory 80G --mem 2T --model-params 2851598336 --zero-stage 2
expect_near "t5-3b zero2 no offload GiB" "$(jq '.ram_zero_bytes / 1073741824' <<<"$OUT")" 127.48 0.005
expect_contains "zero2 model load named" "$(expl)" "127.48 GiB ZeRO-2 model load"
# ZeRO-3 without offload: the largest layer with zero.Init (1.47 GiB),
# the whole model without (127.48 GiB), the whole model when L is unknown.
t5z3() { check --gpus 8 --gpu-memory 80G --mem 2T --model-params 2851598336 --zero-stage 3 "$@"; }
t5z3 --largest-layer-params 32899072 --zero-init yes
expect_near "t5-3b zero3 zero.Init GiB" "$(jq '.ram_zero_bytes / 1073741824' <<<"$OUT")" 1.47 0.005
t5z3 --largest-layer-params 32899072 --zero-init no
expect_near "t5-3b zero3 no zero.Init GiB" "$(jq '.ram_zero_bytes / 1073741824' <<<"$OUT")" 127.48 0.005
t5z3
expect_near "t5-3b zero3 unknown layer GiB" "$(jq '.ram_zero_bytes / 1073741824' <<<"$OUT")" 127.48 0.005
expect_contains "unknown layer said" "$(expl)" "give --largest-layer-params"
# The fault: 8 x 80 GiB with 720G "fit" until the model load is counted.
run_mc check --config "$TMP/node.conf" --gpus 8 --gpu-memory 80G --mem 720G --model-params 2851598336 --zero-stage 3 --zero-init no
expect_eq "zero3 no zero.Init 720G exit" "$RC" 1
expect_contains "zero3 no zero.Init fix" "$OUT" "--mem=832G"

# MI300A SPX (4 APUs, one 501.97 GiB pool): a full-node 4-GPU job with 4
# workers per GPU fits the pool and says the APU rule; with a 96 GiB working
# set per APU it still fits (452 GiB, counted once, no HostRamPerGpuRam);
# with GpuMemory=128G it does not (580 GiB > the pool); UnifiedMemory=no
# is the discrete rule of before.
MI300A=$DATA/hpe-ex255a-4xmi300a-spx.xml
printf 'HostRamPerGpuRam=1.5\n' >"$TMP/mi.conf"
run_mc check --config "$TMP/mi.conf" --topology "$MI300A" --gpus 4 --dataloader-workers 4 --json
expect_eq "mi300a fits" "$RC" 0
expect_eq "mi300a needed" "$(jq '.ram_needed_bytes / 1073741824' <<<"$OUT")" 68
expect_contains "mi300a rule said" "$(expl)" "APU: GPU memory is this host RAM, one pool"
expect_contains "mi300a rest" "$(expl)" "the GPUs' working set gets the rest: 433.97 GiB"
run_mc check --config "$TMP/mi.conf" --topology "$MI300A" --gpus 4 --dataloader-workers 4 --gpu-memory 96G --json
expect_eq "mi300a 96G fits" "$RC" 0
expect_eq "mi300a 96G needed" "$(jq '.ram_needed_bytes / 1073741824' <<<"$OUT")" 452
expect_contains "mi300a 96G working set" "$(expl)" "384 GiB GPU working set"
run_mc check --config "$TMP/mi.conf" --topology "$MI300A" --gpus 4 --dataloader-workers 4 --gpu-memory 128G
expect_eq "mi300a 128G refused" "$RC" 1
expect_contains "mi300a 128G" "$OUT" "no allocation on this node can fit 580 GiB (node has 501.97 GiB)"
printf 'HostRamPerGpuRam=1.5\nUnifiedMemory=no\n' >"$TMP/mi-no.conf"
run_mc check --config "$TMP/mi-no.conf" --topology "$MI300A" --gpus 4 --dataloader-workers 4 --json
expect_eq "mi300a UnifiedMemory=no as before" "$RC" 0
expect_contains "mi300a UnifiedMemory=no unknown" "$(expl)" "GPU memory unknown: the RAM floor was not checked"
run_mc check --config "$TMP/mi-no.conf" --topology "$MI300A" --gpus 4 --dataloader-workers 4 --gpu-memory 96G --json
expect_eq "mi300a UnifiedMemory=no 96G refused (double count)" "$RC" 1

# MIG without NVML: the profile in the GPU type sizes the floor per slice
# (the H200 node's cards have 139.8 GiB; a 1g.10gb slice is 10 GiB).
H200=$DATA/lenovo-sd665nv3-2xepyc9555-nps4-4xh200.xml
run_mc check --config "$TMP/empty.conf" --topology "$H200" --gpus 1 --gpu-type 1g.10gb --json
expect_eq "mig 1g.10gb floor" "$(jq '.ram_floor_bytes / 1073741824' <<<"$OUT")" 10
run_mc check --config "$TMP/empty.conf" --topology "$H200" --gpus 2 --gpu-type nvidia_h200_3g.71gb --json
expect_eq "mig 2 x 3g.71gb floor" "$(jq '.ram_floor_bytes / 1073741824' <<<"$OUT")" 142
run_mc check --config "$TMP/empty.conf" --topology "$H200" --gpus 1 --gpu-type h200 --json
expect_eq "no MIG profile: the card" "$(jq '.gpu_memory_bytes' <<<"$OUT")" 150111977472
run_mc check --config "$TMP/empty.conf" --topology "$H200" --gpus 1 --gpu-type 1g.10gb --gpu-type 2g.20gb
expect_eq "gpu-type twice" "$RC" 2
expect_contains "gpu-type twice message" "$ERR" "--gpu-type=2g.20gb: given twice with different values"
# -w/-x pick among slurmctld's nodes: with one node described, an input
# error, never silently ignored; two different values, too.
run_mc check --config "$TMP/empty.conf" --topology "$H200" --gpus 1 --nodelist gpu01
expect_eq "--nodelist with --topology exit" "$RC" 2
expect_contains "--nodelist with --topology message" "$ERR" "memcore: check: --nodelist picks among a partition's nodes from slurmctld; here the node comes from topology-file"
run_mc check --config "$TMP/empty.conf" --topology "$H200" --gpus 1 --exclude a --exclude b
expect_eq "--exclude twice exit" "$RC" 2
expect_contains "--exclude twice message" "$ERR" "--exclude=b: given twice with different values"

# Bad input: exit 2 and the message names the option and value.
for bad in -1 abc '' 99999999999; do
	run_mc check --config "$TMP/node.conf" --gpus 1 --dataloader-workers="$bad"
	expect_eq "workers '$bad' exit" "$RC" 2
	expect_contains "workers '$bad' message" "$ERR" "--dataloader-workers=$bad"
done
run_mc check --config "$TMP/node.conf" --gpus 2 --model-params 7B --zero-stage 2 --offload all
expect_eq "offload=all stage 2 exit" "$RC" 2
expect_contains "offload=all stage 2 message" "$ERR" "--zero-stage=3"
run_mc check --config "$TMP/node.conf" --dataloader-workers 2
expect_eq "no --gpus exit" "$RC" 2
expect_contains "no --gpus message" "$ERR" "--gpus is required"
run_mc check --config "$TMP/missing.conf" --gpus 1
expect_eq "missing config exit" "$RC" 2
expect_contains "missing config message" "$ERR" "$TMP/missing.conf"
finish
