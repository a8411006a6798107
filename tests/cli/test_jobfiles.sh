#!/bin/bash
# memcore check with the job's own files (--deepspeed-config,
# --model-config), read as the user running it; shared GPUs (--shards,
# --mps); ranks per GPU. Figures computed here from their sources.
. "$(dirname "$0")/lib.sh"

T=$DATA/aws-g4dn-metal-2xxeon8259cl-8xt4.xml
T4=15843721216
M=$DATA/models
gib() { awk -v b="$1" 'BEGIN { printf "%.2f GiB", b / 2^30 }'; }

# DDP of GPT-J-6B on 8 T4s: each rank builds the fp32 model (no ZeRO).
run_mc check --config "$TMP/empty.conf" --topology "$T" --gpus 8 --cpus 48 --mem 300G --model-config "$M/gpt-j-6b.config.json"
expect_eq "gptj ddp rc" "$RC" 1
P=6050882784
expect_contains "load term" "$OUT" "loading $(gib $((8 * P * 4))) = 8 copies x $(gib $((P * 4)))"
expect_contains "a 16-bit torch_dtype is not silently taken" "$OUT" "6.05B parameters"
run_mc check --config "$TMP/empty.conf" --topology "$T" --gpus 8 --cpus 48 --mem 300G --model-config "$M/gpt-j-6b.config.json" --model-load rank0
expect_eq "rank0 load fits" "$RC" 0

# ds_config with nvme: only pinned buffers (5 x 1e8 x 2 bytes per rank).
cat >"$TMP/ds.json" <<'JSON'
{"zero_optimization": {"stage": 3, "offload_param": {"device": "nvme"}}}
JSON
run_mc check --config "$TMP/empty.conf" --topology "$T" --gpus 1 --cpus 6 --mem 100G --deepspeed-config "$TMP/ds.json" --model-config "$M/llama-2-7b-hf.config.json"
expect_contains "nvme pinned" "$OUT" "953.67 MiB nvme pinned buffers"
expect_contains "nvme note" "$OUT" "offloads to nvme: host RAM holds only its pinned buffers"

# Errors name the file, the key and what was expected; exit 2.
printf '{"model_type": "t5"}' >"$TMP/t5.json"
run_mc check --config "$TMP/empty.conf" --topology "$T" --gpus 1 --model-config "$TMP/t5.json"
expect_eq "unknown model_type rc" "$RC" 2
expect_contains "unknown model_type" "$ERR" "t5.json: model_type \"t5\" is not one memcore counts"
run_mc check --config "$TMP/empty.conf" --topology "$T" --gpus 1 --deepspeed-config "$TMP/missing.json"
expect_eq "missing file rc" "$RC" 2
expect_contains "missing file" "$ERR" "--deepspeed-config=$TMP/missing.json: cannot open: No such file or directory"
head -c 1100000 /dev/zero | tr '\0' ' ' >"$TMP/big.json"
run_mc check --config "$TMP/empty.conf" --topology "$T" --gpus 1 --deepspeed-config "$TMP/big.json"
expect_contains "bounded" "$ERR" "larger than the 1048576"
run_mc check --config "$TMP/empty.conf" --topology "$T" --gpus 1 --deepspeed-config /dev/zero
expect_contains "not regular" "$ERR" "not a regular file"
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	cp "$TMP/ds.json" "$TMP/secret.json"
	chmod 0600 "$TMP/secret.json"
	chmod 0755 "$TMP"
	RC=0
	ERR=$(runuser -u nobody -- "$MEMCORE" check --config "$TMP/empty.conf" --topology "$T" --gpus 1 --deepspeed-config "$TMP/secret.json" 2>&1 >/dev/null) || RC=$?
	expect_eq "as nobody: unreadable rc" "$RC" 2
	expect_contains "as nobody: unreadable" "$ERR" "--deepspeed-config=$TMP/secret.json: cannot open: Permission denied"
fi
# activation offload needs its sequence: from the model, noted.
cat >"$TMP/act.json" <<'JSON'
{"train_micro_batch_size_per_gpu": 2, "bf16": {"enabled": true},
 "zero_optimization": {"stage": 3},
 "activation_checkpointing": {"cpu_checkpointing": true}}
JSON
run_mc check --config "$TMP/empty.conf" --topology "$T" --gpus 1 --cpus 6 --mem 300G --deepspeed-config "$TMP/act.json"
expect_eq "cpu_checkpointing without a model rc" "$RC" 2
expect_contains "cpu_checkpointing without a model" "$ERR" "add --model-config=config.json"
run_mc check --config "$TMP/empty.conf" --topology "$T" --gpus 1 --cpus 6 --mem 300G --deepspeed-config "$TMP/act.json" --model-config "$M/llama-2-7b-hf.config.json" --seq-len 2048
[ $((32 * 2 * 2048 * 4096 * 2)) = $((1 << 30)) ] || fail "activation arithmetic"
expect_contains "activation offload" "$OUT" "1 GiB activation offload"
# a moot flag says so
run_mc check --config "$TMP/empty.conf" --topology "$T" --gpus 1 --cpus 6 --mem 300G --save-optimizer yes --seq-len 100
expect_contains "moot save-optimizer" "$OUT" "note: --save-optimizer: moot without --checkpoint-save"
expect_contains "moot seq-len" "$OUT" "note: --seq-len/--micro-batch: moot without activation offload"

# Shared GPUs: 2 of 8 shards of a T4; MPS 25 of 100.
run_mc check --config "$TMP/empty.conf" --topology "$T" --shards 2 --shards-per-gpu 8 --cpus 6 --mem 9G --dataloader-workers 1
expect_eq "shard fits" "$RC" 0
expect_contains "shard share" "$OUT" "1 x $(gib $((T4 * 2 / 8)))"
run_mc check --config "$TMP/empty.conf" --topology "$T" --mps 25 --cpus 6 --mem 9G --dataloader-workers 1
expect_contains "mps share" "$OUT" "1 x $(gib $((T4 / 4)))"
# 16 ranks on 2 GPUs
run_mc check --config "$TMP/empty.conf" --topology "$T" --gpus 2 --ntasks-per-node 16 --cpus 32 --mem 60G --dataloader-workers 0
expect_contains "ranks: tasks" "$OUT" "16 tasks x 1 GiB"
expect_contains "ranks: cores" "$OUT" "16 needed = 16 ranks x (0 workers + 1)"

# One rank: one copy (not "1 copies"); one task driving 8 GPUs: RamPerTask
# counted per GPU process, not as 8 tasks the step does not have.
run_mc check --config "$TMP/empty.conf" --topology "$T" --gpus 1 --mem 100G --model-params 7B
expect_contains "one rank: one copy" "$OUT" "loading 26.08 GiB = 1 copy x 26.08 GiB (model built in host RAM, fp32)"
expect_contains "one rank: one task" "$OUT" "+ 1 task x 1 GiB +"
run_mc check --config "$TMP/empty.conf" --topology "$T" --gpus 8 --ntasks-per-node 1 --mem 100G
expect_contains "one task, 8 GPUs" "$OUT" "190.04 GiB needed = 118.04 GiB GPU floor + 16 workers x 4 GiB + 8 GPU processes x 1 GiB"
run_mc check --config "$TMP/empty.conf" --topology "$T" --gpus 8 --mem 100G
expect_contains "a task per GPU" "$OUT" "+ 16 workers x 4 GiB + 8 tasks x 1 GiB"

# Accelerate's DeepSpeed guide's config with "auto" where accelerate launch
# fills it (stage, offload devices, 16-bit gather on save, bf16, batch):
# taken, "auto" read as not given, one note naming memcore's options.
cat >"$TMP/acc_ds.json" <<'JSON'
{
    "bf16": {"enabled": "auto"},
    "zero_optimization": {
        "stage": "auto",
        "stage3_gather_16bit_weights_on_model_save": "auto",
        "offload_optimizer": {"device": "auto"},
        "offload_param": {"device": "auto"}
    },
    "gradient_clipping": "auto",
    "train_batch_size": "auto",
    "train_micro_batch_size_per_gpu": "auto",
    "gradient_accumulation_steps": "auto",
    "steps_per_print": 2000000
}
JSON
run_mc check --config "$TMP/empty.conf" --topology "$T" --gpus 8 --deepspeed-config "$TMP/acc_ds.json"
expect_eq "Accelerate auto config: exit" "$RC" 0
expect_eq "Accelerate auto config: stderr" "$ERR" ""
expect_contains "Accelerate auto config: note" "$OUT" 'note: acc_ds.json: "auto" read as not given (Accelerate fills it at launch): stage (--zero-stage), offload devices (--offload), 16-bit gather on save (--checkpoint-save)'
run_mc check --config "$TMP/empty.conf" --topology "$T" --gpus 8 --deepspeed-config "$TMP/acc_ds.json" --zero-stage 3 --offload all --model-params 7B
expect_eq "Accelerate auto config with options: exit" "$RC" 0
expect_contains "Accelerate auto config with options: ZeRO-3 offload sized" "$OUT" "ZeRO-3 offload"
expect_contains "Accelerate auto config with options: note" "$OUT" 'note: acc_ds.json: "auto" read as not given (Accelerate fills it at launch): 16-bit gather on save (--checkpoint-save)'
case "$OUT" in *overrides*) fail "Accelerate auto config: an option called an override of \"auto\": $OUT" ;; esac

# Parameter counts of config.json files, each against a count this test
# makes itself in Python from the file as json.load reads it (as
# transformers does: a key given twice, the last wins) and the modules
# transformers builds (modeling_mistral/mixtral/qwen2_moe.py), and
# against the published total: memcore's is the one copy of the fp32 model
# a single rank loads (ram_needed - floor - tasks, 4 bytes a parameter).
py_count() {
	python3 - "$1" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
t = c["model_type"]
H, I, V, L = c["hidden_size"], c["intermediate_size"], c["vocab_size"], c["num_hidden_layers"]
nh = c["num_attention_heads"]; kv = c.get("num_key_value_heads", nh)
D = c.get("head_dim") or H // nh
attn = H * nh * D + 2 * H * kv * D + nh * D * H + 2 * H
if t == "qwen2_moe":
    attn += nh * D + 2 * kv * D
if t == "mixtral":
    E = c.get("num_local_experts", 8)
    mlp = [H * E + E * 3 * H * I] * L
elif t == "qwen2_moe":
    E, Im, Is = c.get("num_experts", 60), c.get("moe_intermediate_size", 1408), c.get("shared_expert_intermediate_size", 5632)
    step, only = c.get("decoder_sparse_step", 1), c.get("mlp_only_layers", [])
    mlp = [H * E + E * 3 * H * Im + 3 * H * Is + H if i not in only and (i + 1) % step == 0 else 3 * H * I for i in range(L)]
else:
    mlp = [3 * H * I] * L
print(V * H * (1 if c.get("tie_word_embeddings") else 2) + H + L * attn + sum(mlp))
PY
}
printf 'NodeRam=4T\nNodeCores=64\nNodeGpus=8\nGpuMemory=80G\n' >"$TMP/big.conf"
mc_params() {
	run_mc check --config "$TMP/big.conf" --gpus 1 --dataloader-workers 0 --json --model-config "$1"
	[ "$RC" = 0 ] || { echo "refused (rc $RC): $ERR"; return; }
	python3 -c 'import json,sys; j=json.load(sys.stdin); print((j["ram_needed_bytes"]-j["ram_floor_bytes"]-j["ram_tasks_bytes"])//4)' <<<"$OUT"
}
for f in mistral-nemo-base-2407:12247782400 mixtral-8x7b-v0.1:46702792704 qwen1.5-moe-a2.7b:14315784192; do
	file=$M/${f%%:*}.config.json
	got=$(mc_params "$file")
	expect_eq "${f%%:*}: memcore's count is Python's" "$got" "$(py_count "$file")"
	expect_near "${f%%:*}: within 0.1% of the published ${f#*:}" "$(awk -v g="$got" -v p="${f#*:}" 'BEGIN { print g / p }')" 1 0.001
done
run_mc check --config "$TMP/big.conf" --gpus 8 --model-config "$M/mixtral-8x7b-v0.1.config.json"
expect_contains "Mixtral: the note" "$OUT" "mixtral-8x7b-v0.1.config.json (mixtral): 46.70B parameters"
# a Mixtral file labelled mistral: refused, naming the key and the file
sed 's/"model_type": "mixtral"/"model_type": "mistral"/' "$M/mixtral-8x7b-v0.1.config.json" >"$TMP/mislabelled.json"
run_mc check --config "$TMP/big.conf" --gpus 8 --model-config "$TMP/mislabelled.json"
expect_eq "mislabelled MoE rc" "$RC" 2
expect_contains "mislabelled MoE: key and file" "$ERR" "mislabelled.json: num_local_experts: changes the parameter count of other models, not of model_type \"mistral\""
expect_eq "mislabelled MoE: nothing printed" "$OUT" ""
# GPT-2 as a decoder with cross-attention: more weights than memcore counts
sed 's/"model_type": "gpt2"/"add_cross_attention": true, "model_type": "gpt2"/' "$M/gpt2.config.json" >"$TMP/gpt2x.json"
run_mc check --config "$TMP/big.conf" --gpus 8 --model-config "$TMP/gpt2x.json"
expect_eq "gpt2 with cross-attention rc" "$RC" 2
expect_contains "gpt2 with cross-attention: named" "$ERR" "gpt2x.json: add_cross_attention: adds a cross-attention and its layer norm in every block, which memcore does not count: give --model-params"
# a key twice: read as Python reads it; a DeepSpeed config refuses it, as
# DeepSpeed's own loader does (dict_raise_error_on_duplicate_keys)
sed 's/"vocab_size": 131072/"vocab_size": 1, "vocab_size": 131072/' "$M/mistral-nemo-base-2407.config.json" >"$TMP/twice.json"
expect_eq "duplicate key: the last wins, as in Python" "$(mc_params "$TMP/twice.json")" "$(py_count "$TMP/twice.json")"
run_mc check --config "$TMP/big.conf" --gpus 8 --model-config "$TMP/twice.json"
expect_eq "duplicate key: rc" "$RC" 0
expect_contains "duplicate key: Mistral-Nemo's count" "$OUT" "(mistral): 12.25B parameters"
printf '{"zero_optimization": {"stage": 2, "stage": 3}}' >"$TMP/ds_twice.json"
run_mc check --config "$TMP/big.conf" --gpus 8 --deepspeed-config "$TMP/ds_twice.json"
expect_eq "duplicate ds key rc" "$RC" 2
expect_contains "duplicate ds key" "$ERR" "ds_twice.json: not JSON at line 1, column 42: duplicate object key"

# Loading or saving is what does not fit: the job-side fix, re-judged.
# LlamaFactory#103: LLaMA-65B (65.2B) on 8 x A100 80 GB, 900 GB of RAM,
# from_pretrained in bf16 on every rank.
printf 'NodeRam=900G\nNodeCores=64\nNodeGpus=8\nGpuMemory=80G\n' >"$TMP/lf103.conf"
run_mc check --config "$TMP/lf103.conf" --gpus 8 --model-params 65.2B --model-dtype bf16 --mem 700G
expect_eq "LlamaFactory#103 rc" "$RC" 1
G=$((1 << 30))
R0=$(( (648 * G + 65200000000 * 2 + G - 1) / G ))
expect_contains "LlamaFactory#103: loading" "$OUT" "loading $(gib $((8 * 65200000000 * 2))) = 8 copies"
expect_contains "LlamaFactory#103: job fix" "$OUT" "or, in the job: --model-load=rank0 with --mem=${R0}G"
run_mc check --config "$TMP/lf103.conf" --gpus 8 --model-params 65.2B --model-dtype bf16 --mem 700G --json
expect_eq "LlamaFactory#103: --json fix_options" "$(python3 -c 'import json,sys; print(" ".join(json.load(sys.stdin)["fix_options"]))' <<<"$OUT")" "--model-load=rank0 --mem=${R0}G"
run_mc check --config "$TMP/lf103.conf" --gpus 8 --model-params 65.2B --model-dtype bf16 --mem ${R0}G --model-load rank0
expect_eq "LlamaFactory#103: the fix fits" "$RC" 0
# axolotl#1828: a 405B full state dict on rank 0, built in bf16 on the
# meta device, on 8 x 80 GB with 1 TiB: saved in bf16, 2 bytes a parameter
printf 'NodeRam=1T\nNodeCores=64\nNodeGpus=8\nGpuMemory=80G\n' >"$TMP/ax.conf"
run_mc check --config "$TMP/ax.conf" --gpus 8 --model-params 405B --model-dtype bf16 --model-load meta --checkpoint-save rank0
expect_eq "axolotl#1828 rc" "$RC" 1
expect_contains "axolotl#1828: the save in bf16" "$OUT" "$(gib $((405000000000 * 2))) checkpoint gather"
expect_contains "axolotl#1828: the save's source" "$OUT" "(checkpoint: full state dict on rank 0, 16-bit weights, 2 bytes a parameter, as saved)"
expect_contains "axolotl#1828: job fix" "$OUT" "or, in the job: --checkpoint-save=none (fits the memory given)"
run_mc check --config "$TMP/ax.conf" --gpus 8 --model-params 405B --model-dtype bf16 --model-load meta --checkpoint-save none
expect_eq "axolotl#1828: the fix fits" "$RC" 0

[ "$FAILS" = 0 ] && echo ok || { echo "$FAILS failure(s)"; exit 1; }
