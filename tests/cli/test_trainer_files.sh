#!/bin/bash
# memcore check with the files users launch training with, as published
# (tests/data/trainers, sources in its README.md): an Accelerate config,
# a torchtune recipe, axolotl's DeepSpeed files; a file given to the wrong
# option; the terms' JSON keys. Figures computed here from their sources.
. "$(dirname "$0")/lib.sh"

TR=$DATA/trainers
M=$DATA/models
# One node of 8 GPUs of 80 GiB, 2 TiB of RAM, 128 cores.
printf 'NodeRam=2T\nNodeCores=128\nNodeGpus=8\nGpuMemory=80G\n' >"$TMP/node.conf"
J() { jq -r "$1" <<<"$OUT"; }

# torchtune's llama3_1/70B_full.yaml (fsdp_cpu_offload, dtype bf16):
# PyTorch FSDP's CPUOffload keeps the bf16 parameters, their gradients and
# AdamW's two moments on the host: 2 + 2 + 2 x 2 bytes a parameter.
P=70553706496
run_mc check --config "$TMP/node.conf" --gpus 8 --mem 1900G --torchtune-config "$TR/torchtune-llama3_1-70B_full.yaml" --model-params $P --json
expect_eq "torchtune 70B rc" "$RC" 0
expect_eq "FSDP CPU offload figure" "$(J .ram_fsdp_offload_bytes)" $((P * 2 + P * 2 + P * 4))
expect_eq "rank 0's bf16 gather" "$(J .ram_save_bytes)" $((P * 2))
expect_contains "its explanation" "$OUT" "(FSDP CPU offload: (70.55B parameters x 2 + 70.55B trainable x 6 for gradients and Adam's 2 moments) / 1 node, 16-bit)"
# Without the file the term is not there, and the output says nothing of it.
run_mc check --config "$TMP/node.conf" --gpus 8 --mem 1900G --model-params $P --json
expect_eq "no key without the term" "$(J .ram_fsdp_offload_bytes)" null

# alignment-handbook's zero3.yaml: Accelerate's DeepSpeed keys, stage 3,
# zero3_init_flag, zero3_save_16bit_model; no offload: DeepSpeed's
# estimate_zero3 with zero_init, the largest layer (32000 x 4096) x 4
# bytes x 8 ranks x 1.5.
run_mc check --config "$TMP/node.conf" --gpus 8 --mem 900G --accelerate-config "$TR/alignment-handbook-zero3.yaml" --model-config "$M/llama-2-7b-hf.config.json" --json
expect_eq "handbook zero3 rc" "$RC" 0
expect_eq "ZeRO-3 with zero.Init" "$(J .ram_zero_bytes)" $((32000 * 4096 * 4 * 8 * 3 / 2))
expect_eq "16-bit gather" "$(J .ram_save_bytes)" $((6738415616 * 2))

# axolotl's offload_param-only file: 2 bytes a parameter x 1.5 on the host,
# the optimizer on the GPUs (no OffloadCoresPerGpu: 8 x (2 + 1) cores).
run_mc check --config "$TMP/node.conf" --gpus 8 --mem 900G --deepspeed-config "$TR/axolotl-zero3_bf16_cpuoffload_params.json" --model-params 32B --json
expect_eq "params-only ZeRO" "$(J .ram_zero_bytes)" $((32000000000 * 2 * 3 / 2))
expect_eq "params-only cores" "$(J .cores_needed)" 24

# A file given to the wrong option is named as what it is; exit 2.
run_mc check --config "$TMP/node.conf" --gpus 8 --deepspeed-config "$TR/alignment-handbook-fsdp.yaml"
expect_eq "wrong kind rc" "$RC" 2
expect_contains "wrong kind named" "$ERR" "alignment-handbook-fsdp.yaml: this is an Accelerate config, not a DeepSpeed config: give it as --accelerate-config"
run_mc check --config "$TMP/node.conf" --gpus 8 --torchtune-config "$TR/llamafactory-ds_z3_offload_config.json"
expect_contains "a DeepSpeed file to --torchtune-config" "$ERR" "this is a DeepSpeed config, not a torchtune recipe: give it as --deepspeed-config"
# A bad key of an Accelerate file names the key.
printf 'distributed_type: FSDP\nfsdp_config:\n  fsdp_offload_params: maybe\n' >"$TMP/acc.yaml"
run_mc check --config "$TMP/node.conf" --gpus 8 --accelerate-config "$TMP/acc.yaml"
expect_eq "bad key rc" "$RC" 2
expect_contains "bad key named" "$ERR" "acc.yaml: fsdp_config.fsdp_offload_params: expected true or false"

# The ds_config an Accelerate file names is named as that key of that
# option, not as the option's own file (found by review).
printf 'distributed_type: DEEPSPEED\ndeepspeed_config:\n  deepspeed_config_file: %s\n' "$TMP/missing.json" >"$TMP/acc-ds.yaml"
run_mc check --config "$TMP/node.conf" --gpus 8 --accelerate-config "$TMP/acc-ds.yaml"
expect_eq "named ds_config missing rc" "$RC" 2
expect_contains "named ds_config: the key and its option" "$ERR" "--accelerate-config's deepspeed_config_file=$TMP/missing.json: cannot open: No such file or directory"

[ "$FAILS" = 0 ] && echo ok || { echo "$FAILS failure(s)"; exit 1; }
