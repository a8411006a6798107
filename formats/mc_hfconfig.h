/*
 * mc_hfconfig.h - a Hugging Face model config (config.json, what
 * transformers' PretrainedConfig.save_pretrained() writes) into the
 * figures memcore sizes host RAM with: parameters, the largest layer and
 * the hidden size and layer count of the activation term.
 *
 * Parameter counts follow the modules transformers builds for each
 * model_type (the modeling_<type>.py of transformers 4.40 to 4.46):
 *  - llama, mistral, qwen2 (LlamaForCausalLM, MistralForCausalLM,
 *    Qwen2ForCausalLM): embed V*H; per layer q H*A (A = heads * D, D =
 *    head_dim when the file gives it, else H / heads: the attention
 *    classes' getattr(config, "head_dim", hidden_size // heads); Mistral-
 *    Nemo-Base-2407 has D 128 with H 5120 and 32 heads), k and v H*KV*D
 *    each (KV = num_key_value_heads), o A*H, gate/up/down 3*H*I, two
 *    RMSNorm weights 2H; qwen2 adds the q, k, v biases A + 2*KV*D; llama
 *    adds them and o's bias H with attention_bias, and gate/up/down's 2I +
 *    H with mlp_bias (LlamaConfig); final norm H; lm_head V*H unless
 *    tie_word_embeddings.
 *  - mixtral (MixtralForCausalLM): as mistral, the MLP replaced by the
 *    MixtralSparseMoeBlock: a router gate H*E (E = num_local_experts,
 *    default 8) and E experts of w1/w2/w3 3*H*I each.
 *  - qwen2_moe (Qwen2MoeForCausalLM): as qwen2 (q/k/v biases); on a
 *    sparse layer (layer index i with (i + 1) % decoder_sparse_step == 0
 *    and i not in mlp_only_layers) the Qwen2MoeSparseMoeBlock: router
 *    gate H*E (E = num_experts, default 60), E experts of 3*H*Im (Im =
 *    moe_intermediate_size, default 1408), one shared expert of 3*H*Is
 *    (Is = shared_expert_intermediate_size, default 5632) and its
 *    shared_expert_gate H; a dense layer has the MLP of 3*H*I.
 *  - gpt2 (GPT2LMHeadModel): wte V*H, wpe n_positions*H; per layer ln_1,
 *    ln_2 (weight and bias) 4H, c_attn 3H*H + 3H, c_proj H*H + H, c_fc
 *    H*I + I, mlp c_proj I*H + H (I = n_inner or 4H); ln_f 2H; lm_head
 *    tied to wte (always, in GPT-2).
 *  - gptj (GPTJForCausalLM): wte V*H; per layer ln_1 2H, q/k/v/out 4*H*H
 *    (no biases), fc_in H*I + I, fc_out I*H + H; ln_f 2H; lm_head V*H + V
 *    (untied, with a bias).
 *  - qwen3 (Qwen3ForCausalLM): Llama's layer without q/k/v biases
 *    (q, k, v and o biased only with attention_bias), plus q_norm and
 *    k_norm, RMSNorm(head_dim) each: 2D per layer.
 *  - qwen3_moe (Qwen3MoeForCausalLM): qwen3's attention; a sparse layer
 *    (as qwen2_moe's rule) holds Qwen3MoeSparseMoeBlock: router gate H*E
 *    (E = num_experts, default 128) and E experts of 3*H*Im (Im default
 *    768); no shared expert.
 *  - gemma2 (Gemma2ForCausalLM): Llama's attention (head_dim given, q, k,
 *    v, o biased with attention_bias), four norms per layer (input,
 *    post_attention, pre_feedforward, post_feedforward: 4H), lm_head tied
 *    by default (Gemma2Config).
 *  - gemma3_text (Gemma3ForCausalLM, the text-only Gemma-3 1B): gemma2's
 *    layer plus q_norm and k_norm RMSNorm(head_dim). The multimodal
 *    "gemma3" (4B and up: a SigLIP vision tower) is not counted here.
 *  - phi3 (Phi3ForCausalLM): qkv_proj H*(A + 2*KV*D) and gate_up_proj
 *    H*2I fused, no biases: the same count as Llama's.
 *  - starcoder2 (Starcoder2ForCausalLM): nn.LayerNorm (weight and bias:
 *    2 per layer, 4H, final 2H); q, k, v, o and the MLP's c_fc H*I,
 *    c_proj I*H biased when use_bias (default true); lm_head tied
 *    (PretrainedConfig's default; the published files do not set it).
 *  - olmo2 (Olmo2ForCausalLM): Llama's layer plus q_norm RMSNorm(A) and
 *    k_norm RMSNorm(KV*D) (over all heads, not per head).
 *  - deepseek_v2, deepseek_v3 (DeepseekV2/V3ForCausalLM, and the models'
 *    own modeling_deepseek.py): multi-head latent attention: q_a_proj
 *    H*R + q_a_layernorm R + q_b_proj R*heads*(nope + rope) with R =
 *    q_lora_rank (else one q_proj H*heads*(nope + rope)),
 *    kv_a_proj_with_mqa H*(kv_lora_rank + rope), kv_a_layernorm
 *    kv_lora_rank, kv_b_proj kv_lora_rank*heads*(nope + v_head_dim),
 *    o_proj heads*v_head_dim*H; a layer i >= first_k_dense_replace with
 *    i % moe_layer_freq == 0 is sparse: router gate H*E (E =
 *    n_routed_experts; V3 adds e_score_correction_bias E), E experts of
 *    3*H*Im and shared_experts, one MLP of 3*H*(Im * n_shared_experts);
 *    the others have the dense MLP 3*H*I. DeepSeek-V3's multi-token
 *    prediction layer (num_nextn_predict_layers) is not built by
 *    transformers and not counted: the published 671B, not the 685B on
 *    the Hub.
 *  - gpt_bigcode (GPTBigCodeForCausalLM): GPT-2's block with c_attn
 *    H*(H + 2D) + (H + 2D) under multi_query (default true), else 3H.
 * A key that changes the count in some model type and that this type's
 * count does not read (num_local_experts, num_experts, n_routed_experts,
 * n_shared_experts, moe_intermediate_size, shared_expert_intermediate_size,
 * decoder_sparse_step, mlp_only_layers, kv_lora_rank, q_lora_rank,
 * head_dim on GPT, attention_bias true where the type has no such bias)
 * is refused, not ignored: a Mixtral file labelled "mistral" would be
 * counted as one dense expert (7.24B instead of 46.7B).
 * The largest layer is the largest single module (an nn.Linear or
 * nn.Embedding), as DeepSpeed's estimate_zero3_model_states_mem_needs_all_live
 * takes it: max(V*H, H*I, H*A, the expert's and the shared expert's H*I).
 *
 * Checked in tests/unit/test_hfconfig.c against the published counts of
 * Llama-2-7B (6,738,415,616), Llama-2-13B, Mistral-7B-v0.1, Mistral-Nemo-
 * Base-2407 (12.2B), Mixtral-8x7B-v0.1 (46.7B), Qwen1.5-MoE-A2.7B (14.3B),
 * Qwen2-0.5B, GPT-2, GPT-J-6B, Qwen3-8B, Qwen3-30B-A3B, Gemma-2-9B,
 * Gemma-3-1B, Phi-3-mini, StarCoder2-3B, OLMo-2-7B, DeepSeek-V2-Lite and
 * DeepSeek-V3 (fixtures in tests/data/models with their sources).
 *
 * Pure C on a buffer (jansson); no I/O: the reading is mc_jsonfile.h's.
 */
#ifndef MC_HFCONFIG_H
#define MC_HFCONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MC_MODEL_TYPE_MAX 32

struct mc_model_shape {
	char model_type[MC_MODEL_TYPE_MAX];	/* "llama" */
	uint32_t layers;		/* num_hidden_layers / n_layer */
	uint32_t hidden;		/* hidden_size / n_embd */
	uint32_t intermediate;		/* intermediate_size / n_inner */
	uint32_t vocab;			/* vocab_size */
	uint32_t heads, kv_heads;	/* num_attention_heads, ..._key_value */
	uint32_t head_dim;		/* head_dim, else hidden / heads */
	/* Mixture of experts (0 for a dense model): routed experts per
	 * sparse layer, each expert's intermediate size, the shared
	 * expert's (qwen2_moe; deepseek: all shared experts' together),
	 * and how many layers are sparse. */
	uint32_t experts, expert_intermediate, shared_intermediate;
	uint32_t sparse_layers;
	/* DeepSeek's multi-head latent attention (0 elsewhere): q_lora_rank
	 * (0: no low-rank q), kv_lora_rank, the no-rope and rope parts of a
	 * q/k head and v's head size. */
	uint32_t q_lora_rank, kv_lora_rank, qk_nope_dim, qk_rope_dim;
	uint32_t v_head_dim;
	bool attention_bias, mlp_bias;	/* llama's optional biases */
	uint32_t max_positions;		/* max_position_embeddings/n_positions */
	bool tied;			/* tie_word_embeddings */
	/* torch_dtype's bytes per parameter (2 for bfloat16/float16, 4 for
	 * float32), 0 when the file does not say. */
	uint32_t dtype_bytes;
	uint64_t params;		/* all parameters */
	uint64_t largest_layer_params;	/* the largest single module's */
	/* false: a model_type not counted here, read under MC_HF_ANY_TYPE
	 * for the shape only (params and largest layer 0) */
	bool counted;
	/* params and largest layer from the checkpoint's safetensors
	 * headers or index (mc_safetensors.h), not from this file */
	bool from_checkpoint;
};

/* mc_hfconfig_parse flags */
#define MC_HF_ANY_TYPE 1u	/* a model_type memcore does not count is
				 * read for its shape only (hidden size,
				 * layers, positions, at the top or in
				 * text_config): the count comes from
				 * elsewhere (--model-params, the checkpoint) */

/* The model types mc_hfconfig_parse counts, ", "-separated, into buf
 * (MC_HF_TYPES_MAX bytes hold them all); returns buf. */
#define MC_HF_TYPES_MAX 256
const char *mc_hfconfig_types(char *buf, size_t len);

/*
 * Parse config.json text (len bytes, need not be NUL-terminated). name is
 * the option and file in messages ("--model-config=config.json"). A key
 * given twice is read as Python's json.load reads it (the last one wins):
 * transformers loads such a file, and public copies carry them. Returns
 * 0, or -1 with err = "NAME: KEY: expected ..." (a missing or mistyped key,
 * with what was expected), "NAME: model_type \"bert\" is not one memcore
 * counts (llama, ...): give the model's directory ..., or --model-params"
 * (without MC_HF_ANY_TYPE), "NAME: KEY: changes the parameter count of
 * other models, not of model_type \"mistral\" ..." (a key this type's
 * count does not read, above), or "NAME: not JSON at line L, column C:
 * <jansson's reason>" (mc_jsonfile_parse). m->model_type keeps the file's
 * type with any byte outside [A-Za-z0-9_.-] as '_'.
 */
int mc_hfconfig_parse(const char *text, size_t len, const char *name,
		      unsigned flags, struct mc_model_shape *m, char *err,
		      size_t errlen);

#endif
