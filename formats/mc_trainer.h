/*
 * mc_trainer.h - the files users launch training with, beside
 * ds_config.json, into what memcore sizes host RAM with:
 *
 * Accelerate's config YAML (`accelerate config`, `accelerate launch
 * --config_file`; keys as accelerate/commands/config/config_args.py
 * writes them and accelerate/utils/dataclasses.py DeepSpeedPlugin and
 * FullyShardedDataParallelPlugin read them):
 *   distributed_type                DEEPSPEED, FSDP (others: no term)
 *   mixed_precision                 no | fp16 | bf16 (| fp8): dtype
 *   deepspeed_config.zero_stage     0..3
 *   deepspeed_config.offload_optimizer_device, offload_param_device
 *                                   none | cpu | nvme
 *   deepspeed_config.zero3_init_flag         zero.Init (--zero-init)
 *   deepspeed_config.zero3_save_16bit_model  the 16-bit gather on save
 *   deepspeed_config.deepspeed_config_file   a ds_config.json instead
 *     (Accelerate refuses the keys above beside it: so does memcore)
 *   fsdp_config.fsdp_offload_params       CPUOffload(offload_params=True)
 *   fsdp_config.fsdp_sharding_strategy    FULL_SHARD, SHARD_GRAD_OP,
 *     NO_SHARD, HYBRID_SHARD, _HYBRID_SHARD_ZERO2 (or 1..5, the older
 *     numbers in that order)
 *   fsdp_config.fsdp_state_dict_type      FULL_STATE_DICT: gathered on
 *     rank 0 in host RAM (Accelerate's FullStateDictConfig(offload_to_cpu
 *     =True, rank0_only=True)); SHARDED_/LOCAL_STATE_DICT: none
 *   fsdp_config.fsdp_cpu_ram_efficient_loading  true: only rank 0 loads
 *     the weights, the others build on the meta device (--model-load=
 *     rank0); fsdp_sync_module_states must then be true, as Accelerate
 *     requires
 *
 * torchtune's recipe YAML (recipes/configs/..., read by OmegaConf; keys as
 * recipes/full_finetune_distributed.py and lora_finetune_distributed.py
 * read them):
 *   fsdp_cpu_offload                FSDP CPU offload
 *   dtype                           bf16 | fp32 (| fp16): the model's
 *   enable_activation_offloading    activations to host (said in a note)
 *   model._component_               torchtune.models.<family>.<builder>;
 *     a lora_ builder trains adapters only: lora_rank, lora_attn_modules
 *     (q_proj, k_proj, v_proj, output_proj), apply_lora_to_mlp (w1, w2,
 *     w3), apply_lora_to_output (output)
 *   save_adapter_weights_only       LoRA: only the adapters are gathered
 *   the checkpointer's full save    gathered on rank 0 in host RAM
 *     (training.gather_cpu_state_dict)
 *   the model's load                built on the meta device, the
 *     checkpoint mmap'd (safe_torch_load mmap=True): --model-load=meta
 *
 * PEFT's adapter_config.json (LoraConfig.save_pretrained): r,
 * target_modules (names, or "all-linear"), peft_type LORA.
 */
#ifndef MC_TRAINER_H
#define MC_TRAINER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mc_dsconfig.h"
#include "mc_hfconfig.h"

/* The modules a LoRA adapter may target, as bits (Llama's layout). */
#define MC_LORA_Q	(1u << 0)
#define MC_LORA_K	(1u << 1)
#define MC_LORA_V	(1u << 2)
#define MC_LORA_O	(1u << 3)
#define MC_LORA_GATE	(1u << 4)
#define MC_LORA_UP	(1u << 5)
#define MC_LORA_DOWN	(1u << 6)
#define MC_LORA_HEAD	(1u << 7)
#define MC_LORA_ALL	0xffu

/* FSDP's sharding: over every rank of the job, within a node, none. */
enum mc_fsdp_shard { MC_SHARD_JOB = 0, MC_SHARD_NODE, MC_SHARD_NONE };

#define MC_TRAINER_PATH_MAX 1024

struct mc_trainer_facts {
	/* DeepSpeed's settings (Accelerate DEEPSPEED): into ds, has_ds set;
	 * or the deepspeed_config_file to read instead (ds_file[0]). */
	bool has_ds;
	struct mc_ds_facts ds;
	char ds_file[MC_TRAINER_PATH_MAX];
	int zero_init;			/* -1 not said, 0 no, 1 yes */
	bool fsdp;			/* FSDP is the engine */
	bool fsdp_offload;
	enum mc_fsdp_shard shard;
	int load;			/* -1 not said, else enum mc_load */
	int save;			/* -1 not said, else enum mc_save */
	uint32_t dtype_bytes;		/* 0 not said */
	bool act_offload;		/* torchtune's activation offload */
	/* LoRA: rank (0: none) and the modules it targets. */
	uint32_t lora_rank;
	uint32_t lora_targets;
};

/*
 * Parse an Accelerate config (YAML, or the JSON Accelerate also reads) /
 * a torchtune recipe / a PEFT adapter_config.json. name is the option and
 * file in messages. Returns 0, or -1 with err naming the key and what was
 * expected ("NAME: fsdp_config.fsdp_offload_params: expected true or
 * false", "NAME: deepspeed_config.zero_stage: expected 0, 1, 2 or 3",
 * "NAME: deepspeed_config.deepspeed_config_file beside zero_stage:
 * Accelerate refuses both: keep one", "NAME: target_modules: \"c_attn\"
 * is not a module memcore counts (q_proj ... lm_head): give
 * --trainable-params").
 */
int mc_accelerate_parse(const char *text, size_t len, const char *name,
			struct mc_trainer_facts *t, char *err, size_t errlen);
int mc_torchtune_parse(const char *text, size_t len, const char *name,
		       struct mc_trainer_facts *t, char *err, size_t errlen);
int mc_peft_parse(const char *text, size_t len, const char *name,
		  struct mc_trainer_facts *t, char *err, size_t errlen);

/*
 * The parameters a LoRA adapter of rank r on targets adds and trains, for
 * model m: r x (in + out) for each targeted nn.Linear of each layer (A is
 * in x r, B is r x out: PEFT's and torchtune's LoRALinear), q_proj H ->
 * heads x head_dim, k_proj and v_proj H -> kv_heads x head_dim, o_proj
 * heads x head_dim -> H, gate_proj and up_proj H -> I, down_proj I -> H,
 * lm_head H -> V once. A mixture-of-experts model's MLP targets are not
 * counted (0 returned: give --trainable-params). Saturating.
 */
uint64_t mc_lora_params(const struct mc_model_shape *m, uint32_t r,
			uint32_t targets);

#endif
