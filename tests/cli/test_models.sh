#!/bin/bash
# memcore check with today's model families: a published config.json
# counted (Qwen3-8B, DeepSeek-V3), a config of a family memcore does not
# count beside --model-params (its shape still read), and a model
# directory counted from its safetensors checkpoint (written here).
. "$(dirname "$0")/lib.sh"

T=$DATA/aws-g4dn-metal-2xxeon8259cl-8xt4.xml
M=$DATA/models

# Qwen3-8B: 16,381,470,720 bytes of bf16 in its safetensors index
run_mc check --config "$TMP/empty.conf" --topology "$T" --gpus 1 --cpus 6 --mem 300G --model-config "$M/qwen3-8b.config.json"
expect_contains "qwen3 counted" "$OUT" "qwen3-8b.config.json (qwen3): 8.19B parameters"
run_mc check --config "$TMP/empty.conf" --topology "$T" --gpus 1 --cpus 6 --mem 300G --model-config "$M/deepseek-v3.config.json" --zero-stage 3 --offload all
expect_contains "deepseek_v3 counted" "$OUT" "deepseek-v3.config.json (deepseek_v3): 671.03B parameters"

# The multimodal Gemma-3 (its language model under text_config): refused
# alone, naming what to give; beside --model-params its shape serves the
# activation-offload term.
cat >"$TMP/gemma3.json" <<'JSON'
{"architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3",
 "text_config": {"hidden_size": 2560, "num_hidden_layers": 34,
  "max_position_embeddings": 131072, "model_type": "gemma3_text"},
 "torch_dtype": "bfloat16"}
JSON
run_mc check --config "$TMP/empty.conf" --topology "$T" --gpus 1 --model-config "$TMP/gemma3.json"
expect_eq "gemma3 alone rc" "$RC" 2
expect_contains "gemma3 alone" "$ERR" "model_type \"gemma3\" is not one memcore counts"
expect_contains "gemma3 alone: what to give" "$ERR" "give the model's directory"
run_mc check --config "$TMP/empty.conf" --topology "$T" --gpus 1 --cpus 6 --mem 300G --model-config "$TMP/gemma3.json" --model-params 4.3B --zero-stage 3 --cpu-checkpointing yes --seq-len 4096 --micro-batch 1
expect_eq "gemma3 with --model-params rc" "$RC" 0
expect_contains "gemma3 with --model-params" "$OUT" "gemma3.json (gemma3, not counted by memcore): --model-params=4.30B gives the count, the file its shape"
expect_contains "gemma3: its layers and hidden size serve the activation term" "$OUT" "34 layers"

# A model directory: config.json and one model.safetensors of a
# 1000 x 1000 BF16 tensor and a 1000 F32 vector, in safetensors' layout
# (8-byte little-endian header length, JSON header, data).
D=$TMP/model
mkdir -p "$D"
printf '{"model_type": "t5", "d_model": 1000, "num_layers": 4, "torch_dtype": "bfloat16"}' >"$D/config.json"
H='{"__metadata__":{"format":"pt"},"w":{"dtype":"BF16","shape":[1000,1000],"data_offsets":[0,2000000]},"b":{"dtype":"F32","shape":[1000],"data_offsets":[2000000,2004000]}}'
le8() { local n=$1 i; for i in 0 1 2 3 4 5 6 7; do printf "\\x$(printf %02x $(( (n >> (8 * i)) & 255 )))"; done; }
{ le8 ${#H}; printf '%s' "$H"; head -c 2004000 /dev/zero; } >"$D/model.safetensors"
run_mc check --config "$TMP/empty.conf" --topology "$T" --gpus 1 --cpus 6 --mem 300G --model-config "$D" --zero-stage 3
expect_eq "model dir rc" "$RC" 0
expect_contains "model dir counted" "$OUT" "model (t5): 1.00M parameters (its safetensors checkpoint), largest layer 1.00M"
# truncated: the tensor data cut short is named with the file
head -c 1000 "$D/model.safetensors" >"$D/cut" && mv "$D/cut" "$D/model.safetensors"
run_mc check --config "$TMP/empty.conf" --topology "$T" --gpus 1 --model-config "$D"
expect_eq "truncated rc" "$RC" 2
expect_contains "truncated" "$ERR" "$D/model.safetensors: safetensors header: w: data_offsets [0, 2000000] beyond the file's"

[ "$FAILS" = 0 ] && echo ok || { echo "$FAILS failure(s)"; exit 1; }
