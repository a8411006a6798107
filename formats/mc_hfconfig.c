/*
 * mc_hfconfig.c - a Hugging Face config.json into parameters and layer
 * sizes (see mc_hfconfig.h for the formulas and their sources).
 */
#include "mc_hfconfig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "mc_jsonfile.h"
#include "mc_parse.h"
#include "mc_util.h"

enum family {
	F_LLAMA, F_MISTRAL, F_QWEN2, F_GPT2, F_GPTJ, F_MIXTRAL, F_QWEN2_MOE,
	F_QWEN3, F_QWEN3_MOE, F_GEMMA2, F_GEMMA3, F_PHI3, F_STARCODER2,
	F_OLMO2, F_DEEPSEEK_V2, F_DEEPSEEK_V3, F_GPT_BIGCODE, F_COUNT
};

/* Which biases the attention's projections carry. */
enum attn_bias {
	AB_NONE,	/* none, whatever the file says */
	AB_QKV,		/* q, k and v always (Qwen2) */
	AB_OPT,		/* q, k, v and o when attention_bias is true */
	AB_USE_BIAS	/* q, k, v, o and the MLP's when use_bias (default
			 * true: Starcoder2Config) */
};

/* The per-head norms of q and k (Qwen3, Gemma-3: RMSNorm(head_dim) each;
 * OLMo-2: RMSNorm over all of q's and k's width). */
enum qk_norm { QK_NONE, QK_HEAD, QK_FULL };

enum moe { M_NONE, M_MIXTRAL, M_QWEN2, M_QWEN3, M_DEEPSEEK };

enum layout { DECODER, GPT2, GPTJ, BIGCODE };

/*
 * The model types memcore counts, each as transformers builds it (the
 * modeling file named). A decoder layer is: attention (q, k, v, o at
 * width A = heads * head_dim, k and v at KV * head_dim), `norms` H-wide
 * norm weights (LayerNorm's bias doubling them where norm_bias), and a
 * dense MLP (gate/up/down 3*H*I where gated, else c_fc/c_proj 2*H*I) or,
 * on a sparse layer, the mixture of experts named by `moe`.
 */
static const struct family_row {
	const char *type;
	enum layout layout;
	enum attn_bias bias;
	enum qk_norm qk;
	enum moe moe;
	unsigned norms;		/* H-wide norm weights per layer */
	bool norm_bias;		/* LayerNorm with a bias */
	bool gated;		/* gate/up/down; else c_fc, c_proj */
	bool mla;		/* DeepSeek's multi-head latent attention */
	bool tied;		/* tie_word_embeddings' default */
} families[F_COUNT] = {
	/* modeling_llama.py LlamaDecoderLayer */
	[F_LLAMA] = { "llama", DECODER, AB_OPT, QK_NONE, M_NONE, 2, false,
		      true, false, false },
	/* modeling_mistral.py */
	[F_MISTRAL] = { "mistral", DECODER, AB_NONE, QK_NONE, M_NONE, 2,
			false, true, false, false },
	/* modeling_qwen2.py: q/k/v_proj bias=True */
	[F_QWEN2] = { "qwen2", DECODER, AB_QKV, QK_NONE, M_NONE, 2, false,
		      true, false, false },
	[F_GPT2] = { "gpt2", GPT2, AB_NONE, QK_NONE, M_NONE, 0, true, false,
		     false, true },
	[F_GPTJ] = { "gptj", GPTJ, AB_NONE, QK_NONE, M_NONE, 0, true, false,
		     false, false },
	/* modeling_mixtral.py MixtralSparseMoeBlock */
	[F_MIXTRAL] = { "mixtral", DECODER, AB_NONE, QK_NONE, M_MIXTRAL, 2,
			false, true, false, false },
	/* modeling_qwen2_moe.py Qwen2MoeSparseMoeBlock */
	[F_QWEN2_MOE] = { "qwen2_moe", DECODER, AB_QKV, QK_NONE, M_QWEN2, 2,
			  false, true, false, false },
	/* modeling_qwen3.py Qwen3Attention: bias=config.attention_bias,
	 * q_norm and k_norm Qwen3RMSNorm(head_dim) */
	[F_QWEN3] = { "qwen3", DECODER, AB_OPT, QK_HEAD, M_NONE, 2, false,
		      true, false, false },
	/* modeling_qwen3_moe.py Qwen3MoeSparseMoeBlock: gate and experts,
	 * no shared expert */
	[F_QWEN3_MOE] = { "qwen3_moe", DECODER, AB_OPT, QK_HEAD, M_QWEN3, 2,
			  false, true, false, false },
	/* modeling_gemma2.py Gemma2DecoderLayer: input, post_attention,
	 * pre_feedforward and post_feedforward layernorms; lm_head tied
	 * (Gemma2Config tie_word_embeddings=True) */
	[F_GEMMA2] = { "gemma2", DECODER, AB_OPT, QK_NONE, M_NONE, 4, false,
		       true, false, true },
	/* modeling_gemma3.py Gemma3ForCausalLM (the text-only models: 1B):
	 * Gemma-2's layer with q_norm and k_norm Gemma3RMSNorm(head_dim) */
	[F_GEMMA3] = { "gemma3_text", DECODER, AB_OPT, QK_HEAD, M_NONE, 4,
		       false, true, false, true },
	/* modeling_phi3.py: qkv_proj H x (A + 2 KV D) and gate_up_proj
	 * H x 2I, fused, no biases: Llama's count */
	[F_PHI3] = { "phi3", DECODER, AB_NONE, QK_NONE, M_NONE, 2, false,
		     true, false, false },
	/* modeling_starcoder2.py: nn.LayerNorm (weight and bias), q/k/v/o
	 * and c_fc/c_proj with bias=config.use_bias; PretrainedConfig's
	 * tie_word_embeddings=True (the published files do not set it) */
	[F_STARCODER2] = { "starcoder2", DECODER, AB_USE_BIAS, QK_NONE,
			   M_NONE, 2, true, false, false, true },
	/* modeling_olmo2.py Olmo2Attention: q_norm RMSNorm(heads * D),
	 * k_norm RMSNorm(KV * D); post_attention and post_feedforward
	 * norms */
	[F_OLMO2] = { "olmo2", DECODER, AB_OPT, QK_FULL, M_NONE, 2, false,
		      true, false, false },
	/* modeling_deepseek_v2.py / modeling_deepseek_v3.py (and the
	 * models' own modeling_deepseek.py) */
	[F_DEEPSEEK_V2] = { "deepseek_v2", DECODER, AB_NONE, QK_NONE,
			    M_DEEPSEEK, 2, false, true, true, false },
	[F_DEEPSEEK_V3] = { "deepseek_v3", DECODER, AB_NONE, QK_NONE,
			    M_DEEPSEEK, 2, false, true, true, false },
	/* modeling_gpt_bigcode.py: GPT-2's block, c_attn H x (H + 2 D)
	 * with multi_query */
	[F_GPT_BIGCODE] = { "gpt_bigcode", BIGCODE, AB_NONE, QK_NONE, M_NONE,
			    0, true, false, false, true },
};

#define FB(f) (1u << (f))
#define ALL_FAMILIES ((1u << F_COUNT) - 1)
#define GPT_LIKE (FB(F_GPT2) | FB(F_GPTJ) | FB(F_GPT_BIGCODE))
#define DECODERS (ALL_FAMILIES & ~GPT_LIKE)
#define QWEN_MOE (FB(F_QWEN2_MOE) | FB(F_QWEN3_MOE))
#define DEEPSEEK (FB(F_DEEPSEEK_V2) | FB(F_DEEPSEEK_V3))
#define OPT_BIAS (FB(F_LLAMA) | FB(F_QWEN3) | FB(F_QWEN3_MOE) | \
		  FB(F_GEMMA2) | FB(F_GEMMA3) | FB(F_OLMO2))

/*
 * Keys that change what transformers builds in some model type, and the
 * types whose count here reads them. Present (not null) in a file of
 * another type, the key means a model this count does not describe (a
 * Mixtral file labelled "mistral": its experts would be dropped), so the
 * file is refused, whatever its model_type. attention_bias and mlp_bias
 * only when true: false is every type's default.
 */
static const struct count_key {
	const char *key;
	unsigned readers;
	bool only_true;		/* refused only when true */
	const char *what;	/* what it adds, where no type counts it */
} count_keys[] = {
	{ "num_local_experts", FB(F_MIXTRAL), false, NULL },
	{ "num_experts", QWEN_MOE, false, NULL },
	{ "moe_intermediate_size", QWEN_MOE | DEEPSEEK, false, NULL },
	{ "shared_expert_intermediate_size", FB(F_QWEN2_MOE), false, NULL },
	{ "decoder_sparse_step", QWEN_MOE, false, NULL },
	{ "mlp_only_layers", QWEN_MOE, false, NULL },
	{ "n_routed_experts", DEEPSEEK, false, NULL },
	{ "n_shared_experts", DEEPSEEK, false, NULL },
	{ "num_shared_experts", 0, false, NULL },
	{ "moe_layer_freq", DEEPSEEK, false, NULL },
	{ "first_k_dense_replace", DEEPSEEK, false, NULL },
	{ "kv_lora_rank", DEEPSEEK, false, NULL },
	{ "q_lora_rank", DEEPSEEK, false, NULL },
	/* DeepSeek's saved configs carry head_dim (= qk_rope_head_dim),
	 * which MLA's count does not read */
	{ "head_dim", DECODERS, false, NULL },
	{ "attention_bias", OPT_BIAS, true, NULL },
	{ "mlp_bias", FB(F_LLAMA), true, NULL },
	/* GPT-2 as a decoder of an encoder-decoder: a cross-attention and
	 * its layer norm in every block (modeling_gpt2.py GPT2Block) */
	{ "add_cross_attention", 0, true, "a cross-attention and its layer "
	  "norm in every block" },
};

const char *mc_hfconfig_types(char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < F_COUNT; i++)
		mc_appendf(buf, len, &used, "%s%s", i ? ", " : "",
			   families[i].type);
	return buf;
}

/* A positive integer key; `alt` is the other spelling (n_embd), or NULL.
 * dflt 0: required. */
static int get_u32(json_t *o, const char *name, const char *key,
		   const char *alt, uint32_t dflt, uint32_t *out, char *err,
		   size_t errlen)
{
	json_t *v = json_object_get(o, key);
	const char *k = key;

	if (!v && alt) {
		v = json_object_get(o, alt);
		k = alt;
	}
	if (!v || json_is_null(v)) {
		if (dflt) {
			*out = dflt;
			return 0;
		}
		return mc_err(err, errlen, "%s: %s: missing (expected a "
			      "positive integer%s%s)", name, key,
			      alt ? ", or " : "", alt ? alt : "");
	}
	if (!json_is_integer(v) || json_integer_value(v) < 1 ||
	    json_integer_value(v) > (json_int_t)UINT32_MAX)
		return mc_err(err, errlen, "%s: %s: expected a positive "
			      "integer", name, k);
	*out = (uint32_t)json_integer_value(v);
	return 0;
}

/* A key that must be written (DeepSeek's), null meaning 0 ("none"). */
static int get_u32_or_null(json_t *o, const char *name, const char *key,
			   uint32_t *out, char *err, size_t errlen)
{
	json_t *v = json_object_get(o, key);

	if (v && json_is_null(v)) {
		*out = 0;
		return 0;
	}
	if (!v)
		return mc_err(err, errlen, "%s: %s: missing (expected a "
			      "positive integer, or null)", name, key);
	return get_u32(o, name, key, NULL, 0, out, err, errlen);
}

static int get_bool(json_t *o, const char *name, const char *key, bool dflt,
		    bool *out, char *err, size_t errlen)
{
	json_t *v = json_object_get(o, key);

	if (!v || json_is_null(v)) {
		*out = dflt;
		return 0;
	}
	if (!json_is_boolean(v))
		return mc_err(err, errlen, "%s: %s: expected true or false",
			      name, key);
	*out = json_is_true(v);
	return 0;
}

static uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

#define mul mc_mul_sat64
#define add mc_add_sat64

/* DeepSeek's attention (DeepseekV2Attention / DeepseekV3Attention): q
 * through a low-rank q_a_proj, q_a_layernorm, q_b_proj when q_lora_rank,
 * else one q_proj; kv_a_proj_with_mqa H x (kv_lora_rank + rope),
 * kv_a_layernorm, kv_b_proj kv_lora_rank x heads (nope + v); o_proj
 * heads v x H. */
static uint64_t mla_attention(const struct mc_model_shape *m, uint64_t *big)
{
	uint64_t H = m->hidden, N = m->heads, R = m->q_lora_rank;
	uint64_t KR = m->kv_lora_rank, QD = m->qk_nope_dim + m->qk_rope_dim;
	uint64_t q, kv, o;

	q = R ? add(add(mul(H, R), R), mul(R, mul(N, QD))) : mul(H, mul(N, QD));
	kv = add(add(mul(H, KR + m->qk_rope_dim), KR),
		 mul(KR, mul(N, m->qk_nope_dim + m->v_head_dim)));
	o = mul(mul(N, m->v_head_dim), H);
	*big = max64(max64(R ? mul(R, mul(N, QD)) : mul(H, mul(N, QD)),
			   mul(KR, mul(N, m->qk_nope_dim + m->v_head_dim))), o);
	return add(add(q, kv), o);
}

/* One decoder layer's attention and norms (everything but its MLP). */
static uint64_t decoder_attention(const struct family_row *fr,
				  const struct mc_model_shape *m,
				  uint64_t *big)
{
	uint64_t H = m->hidden, D = m->head_dim, KV = m->kv_heads;
	uint64_t A = (uint64_t)m->heads * D;	/* q's and o's width */
	uint64_t attn;

	if (fr->mla) {
		attn = mla_attention(m, big);
	} else {
		attn = add(mul(2 * H, A), mul(2 * H, KV * D));
		*big = mul(H, A);
		if (fr->bias == AB_QKV)
			attn = add(attn, A + 2 * KV * D);
		else if (m->attention_bias)	/* AB_OPT, AB_USE_BIAS */
			attn = add(attn, A + 2 * KV * D + H);
		if (fr->qk == QK_HEAD)
			attn = add(attn, 2 * D);
		else if (fr->qk == QK_FULL)
			attn = add(attn, A + KV * D);
	}
	return add(attn, fr->norms * H * (fr->norm_bias ? 2 : 1));
}

/* A dense layer's MLP. */
static uint64_t dense_mlp(const struct family_row *fr,
			  const struct mc_model_shape *m)
{
	uint64_t H = m->hidden, I = m->intermediate;

	if (!fr->gated)		/* c_fc H x I, c_proj I x H */
		return add(mul(2 * H, I), m->mlp_bias ? I + H : 0);
	return add(mul(3 * H, I), m->mlp_bias ? 2 * I + H : 0);
}

/* A sparse layer's mixture of experts: the router gate H x E, E experts
 * of gate/up/down at Im, and the shared expert(s). */
static uint64_t sparse_mlp(const struct family_row *fr,
			   const struct mc_model_shape *m)
{
	uint64_t H = m->hidden, E = m->experts, Im = m->expert_intermediate;
	uint64_t moe = add(H * E, mul(E, mul(3 * H, Im)));

	switch (fr->moe) {
	case M_QWEN2:	/* shared_expert at Is and its 1 x H gate */
		return add(moe, add(mul(3 * H, m->shared_intermediate), H));
	case M_DEEPSEEK:
		/* shared_experts: one MLP of Im * n_shared_experts
		 * (DeepseekV2MoE); V3's router adds e_score_correction_bias
		 * (E), which its checkpoints hold */
		moe = add(moe, mul(3 * H, m->shared_intermediate));
		return fr == &families[F_DEEPSEEK_V3] ? add(moe, E) : moe;
	default:
		return moe;
	}
}

/* Saturating: a count beyond 2^64 stays huge and is refused by the
 * caller's bound (1e15), never wrapped into a small one. */
static void count(enum family f, struct mc_model_shape *m)
{
	const struct family_row *fr = &families[f];
	uint64_t H = m->hidden, I = m->intermediate, V = m->vocab;
	uint64_t L = m->layers, S = m->sparse_layers;
	uint64_t layer, total, big = 0, D = m->head_dim;

	switch (fr->layout) {
	case DECODER:
		if (fr->moe == M_NONE)
			S = 0;
		total = add(add(mul(L, decoder_attention(fr, m, &big)),
				mul(L - S, dense_mlp(fr, m))),
			    mul(S, sparse_mlp(fr, m)));
		total = add(add(total, mul(V, H)),
			    H * (fr->norm_bias ? 2 : 1));
		if (!m->tied)
			total = add(total, mul(V, H));
		break;
	case GPT2:
	case BIGCODE:
		/* c_attn: 3H, or H + 2D with GPT-BigCode's multi_query */
		layer = fr->layout == BIGCODE && m->kv_heads == 1 ? H + 2 * D
								  : 3 * H;
		layer = 4 * H + (H * layer + layer) + (H * H + H) +
			(H * I + I) + (I * H + H);
		total = add(add(mul(L, layer), mul(V, H)),
			    add(mul(m->max_positions, H), 2 * H));
		break;
	case GPTJ:
	default:
		total = 2 * H + 4 * H * H + (H * I + I) + (I * H + H);
		total = add(add(mul(L, total), mul(V, H)), 2 * H);
		if (!m->tied)
			total = add(total, mul(V, H) + V);
		break;
	}
	m->params = total;
	big = max64(big, max64(mul(V, H), mul(H, I)));
	big = max64(big, mul(H, m->expert_intermediate));
	m->largest_layer_params = max64(big, mul(H, m->shared_intermediate));
}

/* A key of count_keys in a file whose type does not read it: refused. */
static int foreign_keys(json_t *o, const char *name, enum family f,
			const char *type, char *err, size_t errlen)
{
	char q[40 * 4 + 4];

	for (size_t i = 0; i < sizeof(count_keys) / sizeof(count_keys[0]);
	     i++) {
		const struct count_key *k = &count_keys[i];
		json_t *v = json_object_get(o, k->key);

		if (!v || json_is_null(v) || (k->readers & FB(f)))
			continue;
		if (k->only_true && !json_is_true(v))
			continue;
		if (k->what)
			return mc_err(err, errlen, "%s: %s: adds %s, which "
				      "memcore does not count: give "
				      "--model-params", name, k->key, k->what);
		return mc_err(err, errlen, "%s: %s: changes the parameter "
			      "count of other models, not of model_type "
			      "\"%s\" as memcore counts it%s: fix model_type, "
			      "or give --model-params", name, k->key,
			      mc_escape(type, 40, q, sizeof(q)),
			      !(k->readers & ~(FB(F_MIXTRAL) | QWEN_MOE |
					       DEEPSEEK)) ? " (memcore counts a mixture of "
			      "experts as model_type mixtral, qwen2_moe, "
			      "qwen3_moe, deepseek_v2 or deepseek_v3)" : "");
	}
	return 0;
}

/* mlp_only_layers and decoder_sparse_step (Qwen2MoeDecoderLayer,
 * Qwen3MoeDecoderLayer): sparse when not listed and (i + 1) % step == 0. */
static int qwen_sparse_layers(json_t *o, const char *name,
			      struct mc_model_shape *m, char *err,
			      size_t errlen)
{
	uint32_t step = 1;
	json_t *only = json_object_get(o, "mlp_only_layers");
	bool *dense;

	if (get_u32(o, name, "decoder_sparse_step", NULL, 1, &step, err,
		    errlen))
		return -1;
	if (only && !json_is_null(only) && !json_is_array(only))
		return mc_err(err, errlen, "%s: mlp_only_layers: expected a "
			      "list of layer indices", name);
	dense = calloc(m->layers, sizeof(*dense));
	if (!dense)
		return mc_err(err, errlen, "%s: out of memory", name);
	for (size_t i = 0; only && i < json_array_size(only); i++) {
		json_t *x = json_array_get(only, i);

		if (!json_is_integer(x) || json_integer_value(x) < 0 ||
		    json_integer_value(x) >= (json_int_t)m->layers) {
			free(dense);
			return mc_err(err, errlen, "%s: mlp_only_layers: "
				      "expected layer indices from 0 to %u",
				      name, m->layers - 1);
		}
		dense[json_integer_value(x)] = true;
	}
	m->sparse_layers = 0;
	for (uint32_t i = 0; i < m->layers; i++)
		if (!dense[i] && (i + 1) % step == 0)
			m->sparse_layers++;
	free(dense);
	return 0;
}

/*
 * DeepSeek's MoE and MLA keys. They are required (null where the model
 * has none: q_lora_rank, n_routed_experts, n_shared_experts): every
 * published file writes them, and the configuration classes' defaults
 * differ between DeepSeek's own code and transformers'. A layer is sparse
 * when n_routed_experts and i >= first_k_dense_replace and
 * i % moe_layer_freq == 0 (DeepseekV2DecoderLayer).
 */
static int deepseek_keys(json_t *o, const char *name,
			 struct mc_model_shape *m, char *err, size_t errlen)
{
	uint32_t first = 0, freq = 1, shared = 0;
	json_t *v;

	if (get_u32_or_null(o, name, "q_lora_rank", &m->q_lora_rank, err,
			    errlen) ||
	    get_u32(o, name, "kv_lora_rank", NULL, 0, &m->kv_lora_rank, err,
		    errlen) ||
	    get_u32(o, name, "qk_nope_head_dim", NULL, 0, &m->qk_nope_dim,
		    err, errlen) ||
	    get_u32(o, name, "qk_rope_head_dim", NULL, 0, &m->qk_rope_dim,
		    err, errlen) ||
	    get_u32(o, name, "v_head_dim", NULL, 0, &m->v_head_dim, err,
		    errlen) ||
	    get_u32_or_null(o, name, "n_routed_experts", &m->experts, err,
			    errlen) ||
	    get_u32_or_null(o, name, "n_shared_experts", &shared, err,
			    errlen) ||
	    get_u32(o, name, "moe_layer_freq", NULL, 1, &freq, err, errlen))
		return -1;
	/* 0 is a value here (every layer sparse) */
	v = json_object_get(o, "first_k_dense_replace");
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return mc_err(err, errlen, "%s: first_k_dense_replace: %s "
			      "(expected a layer count, 0 or more)", name,
			      v ? "not a count" : "missing");
	if (json_integer_value(v) < (json_int_t)m->layers)
		first = (uint32_t)json_integer_value(v);
	else
		first = m->layers;
	if (m->experts && get_u32(o, name, "moe_intermediate_size", NULL, 0,
				  &m->expert_intermediate, err, errlen))
		return -1;
	if (m->q_lora_rank > (1u << 20) || m->kv_lora_rank > (1u << 20) ||
	    m->qk_nope_dim > (1u << 16) || m->qk_rope_dim > (1u << 16) ||
	    m->v_head_dim > (1u << 16) || shared > 4096)
		return mc_err(err, errlen, "%s: q_lora_rank %u, kv_lora_rank "
			      "%u, head dims %u/%u/%u: beyond any model "
			      "memcore sizes", name, m->q_lora_rank,
			      m->kv_lora_rank, m->qk_nope_dim, m->qk_rope_dim,
			      m->v_head_dim);
	m->shared_intermediate = mc_mul_sat32(m->expert_intermediate, shared);
	m->sparse_layers = 0;
	for (uint32_t i = 0; m->experts && i < m->layers; i++)
		if (i >= first && i % freq == 0)
			m->sparse_layers++;
	return 0;
}

/*
 * The MoE keys with their transformers defaults (MixtralConfig,
 * Qwen2MoeConfig, Qwen3MoeConfig), and how many layers are sparse.
 */
static int moe_keys(json_t *o, const char *name, enum family f,
		    struct mc_model_shape *m, char *err, size_t errlen)
{
	switch (families[f].moe) {
	case M_MIXTRAL:
		if (get_u32(o, name, "num_local_experts", NULL, 8,
			    &m->experts, err, errlen))
			return -1;
		m->expert_intermediate = m->intermediate;
		m->sparse_layers = m->layers;
		break;
	case M_QWEN2:
		if (get_u32(o, name, "num_experts", NULL, 60, &m->experts,
			    err, errlen) ||
		    get_u32(o, name, "moe_intermediate_size", NULL, 1408,
			    &m->expert_intermediate, err, errlen) ||
		    get_u32(o, name, "shared_expert_intermediate_size", NULL,
			    5632, &m->shared_intermediate, err, errlen))
			return -1;
		break;
	case M_QWEN3:
		if (get_u32(o, name, "num_experts", NULL, 128, &m->experts,
			    err, errlen) ||
		    get_u32(o, name, "moe_intermediate_size", NULL, 768,
			    &m->expert_intermediate, err, errlen))
			return -1;
		break;
	case M_DEEPSEEK:
		if (deepseek_keys(o, name, m, err, errlen))
			return -1;
		break;
	default:
		return 0;
	}
	if (m->experts > 4096 || m->expert_intermediate > (1u << 22) ||
	    m->shared_intermediate > (1u << 22))
		return mc_err(err, errlen, "%s: %u experts of intermediate "
			      "size %u: beyond any model memcore sizes", name,
			      m->experts, m->expert_intermediate);
	if (families[f].moe == M_QWEN2 || families[f].moe == M_QWEN3)
		return qwen_sparse_layers(o, name, m, err, errlen);
	return 0;
}

/* model_type as a token for the figures' "k=v,k=v" form. */
static void keep_type(const char *type, struct mc_model_shape *m)
{
	size_t i;

	for (i = 0; type[i] && i + 1 < sizeof(m->model_type); i++)
		m->model_type[i] = (strchr("_-.", type[i]) ||
				    (type[i] >= 'a' && type[i] <= 'z') ||
				    (type[i] >= 'A' && type[i] <= 'Z') ||
				    (type[i] >= '0' && type[i] <= '9'))
				   ? type[i] : '_';
	m->model_type[i] = '\0';
}

/* model_type: one of the families memcore counts, into *f and *type
 * (and m->model_type); F_COUNT for another when flags allow it. */
static int model_family(json_t *o, const char *name, unsigned flags,
			struct mc_model_shape *m, enum family *f,
			const char **type, char *err, size_t errlen)
{
	json_t *t = json_object_get(o, "model_type");
	int i;

	if (!json_is_string(t))
		return mc_err(err, errlen, "%s: model_type: %s (expected a "
			      "string such as \"llama\")", name,
			      t ? "not a string" : "missing");
	*type = json_string_value(t);
	for (i = 0; i < F_COUNT; i++)
		if (!strcmp(*type, families[i].type))
			break;
	if (i == F_COUNT && !(flags & MC_HF_ANY_TYPE)) {
		char q[40 * 4 + 4], list[MC_HF_TYPES_MAX];

		return mc_err(err, errlen, "%s: model_type \"%s\" is not one "
			      "memcore counts (%s): give the model's "
			      "directory (its safetensors headers count any "
			      "model), or --model-params", name,
			      mc_escape(*type, 40, q, sizeof(q)),
			      mc_hfconfig_types(list, sizeof(list)));
	}
	*f = (enum family)i;
	keep_type(*type, m);
	return 0;
}

/* GPT-2, GPT-J and GPT-BigCode's names of the shape's keys (GPT2Config,
 * GPTJConfig, GPTBigCodeConfig). */
static int gpt_keys(json_t *o, const char *name, enum family f,
		    struct mc_model_shape *m, char *err, size_t errlen)
{
	bool mq = false;

	if (get_u32(o, name, "n_embd", NULL, 0, &m->hidden, err, errlen) ||
	    get_u32(o, name, "n_layer", NULL, 0, &m->layers, err, errlen) ||
	    get_u32(o, name, "n_head", NULL, 0, &m->heads, err, errlen) ||
	    get_u32(o, name, "n_positions", NULL, 0, &m->max_positions, err,
		    errlen) ||
	    get_u32(o, name, "vocab_size", NULL, 0, &m->vocab, err, errlen))
		return -1;
	/* n_inner null: 4 * n_embd (GPT2Config, GPTJConfig). */
	if (m->hidden > UINT32_MAX / 4)
		return mc_err(err, errlen, "%s: n_embd: too large", name);
	if (get_u32(o, name, "n_inner", NULL, 4 * m->hidden,
		    &m->intermediate, err, errlen))
		return -1;
	/* GPTBigCodeConfig multi_query=True: one key/value head */
	if (f == F_GPT_BIGCODE &&
	    get_bool(o, name, "multi_query", true, &mq, err, errlen))
		return -1;
	m->kv_heads = mq ? 1 : m->heads;
	return 0;
}

/* The Llama family's keys (LlamaConfig and those that follow it). */
static int llama_keys(json_t *o, const char *name, enum family f,
		      struct mc_model_shape *m, char *err, size_t errlen)
{
	if (get_u32(o, name, "hidden_size", NULL, 0, &m->hidden, err,
		    errlen) ||
	    get_u32(o, name, "num_hidden_layers", NULL, 0, &m->layers, err,
		    errlen) ||
	    get_u32(o, name, "intermediate_size", NULL, 0, &m->intermediate,
		    err, errlen) ||
	    get_u32(o, name, "num_attention_heads", NULL, 0, &m->heads, err,
		    errlen) ||
	    get_u32(o, name, "vocab_size", NULL, 0, &m->vocab, err, errlen) ||
	    get_u32(o, name, "max_position_embeddings", NULL, 2048,
		    &m->max_positions, err, errlen))
		return -1;
	/* No num_key_value_heads: multi-head attention (one KV head per
	 * head), as LlamaConfig defaults it. */
	if (get_u32(o, name, "num_key_value_heads", NULL, m->heads,
		    &m->kv_heads, err, errlen))
		return -1;
	if (families[f].bias == AB_USE_BIAS) {
		if (get_bool(o, name, "use_bias", true, &m->attention_bias,
			     err, errlen))
			return -1;
		m->mlp_bias = m->attention_bias;
	} else if ((families[f].bias == AB_OPT &&
		    get_bool(o, name, "attention_bias", false,
			     &m->attention_bias, err, errlen)) ||
		   (f == F_LLAMA && get_bool(o, name, "mlp_bias", false,
					      &m->mlp_bias, err, errlen))) {
		return -1;
	}
	/* head_dim 0: hidden / heads, checked by shape_sane. */
	if (!families[f].mla && json_object_get(o, "head_dim") &&
	    !json_is_null(json_object_get(o, "head_dim")) &&
	    get_u32(o, name, "head_dim", NULL, 0, &m->head_dim, err, errlen))
		return -1;
	return 0;
}

/* The shape is one a model can have, within what memcore sizes; then
 * head_dim, when not given. gpt: its keys' names, for the message. */
static int shape_sane(const char *name, struct mc_model_shape *m, bool gpt,
		      char *err, size_t errlen)
{
	if (m->head_dim > (1u << 16) || m->heads > (1u << 16))
		return mc_err(err, errlen, "%s: head_dim %u x %u heads: "
			      "beyond any model memcore sizes", name,
			      m->head_dim, m->heads);
	if (!m->head_dim && m->hidden % m->heads)
		return mc_err(err, errlen, "%s: hidden size %u is not a "
			      "multiple of %s %u", name, m->hidden, gpt
			      ? "n_head" : "num_attention_heads", m->heads);
	if (m->kv_heads > m->heads || m->heads % m->kv_heads)
		return mc_err(err, errlen, "%s: num_key_value_heads: expected "
			      "a divisor of num_attention_heads (%u), got %u",
			      name, m->heads, m->kv_heads);
	/* Far beyond any real model (2^32 layers of 2^32 hidden would
	 * overflow): 1M hidden, 1M intermediate, 100k layers, 16M vocab. */
	if (m->hidden > (1u << 20) || m->intermediate > (1u << 22) ||
	    m->layers > 100000 || m->vocab > (1u << 24) ||
	    m->max_positions > (1u << 24))
		return mc_err(err, errlen, "%s: hidden %u, intermediate %u, "
			      "layers %u, vocab %u: beyond any model memcore "
			      "sizes", name, m->hidden, m->intermediate,
			      m->layers, m->vocab);
	if (!m->head_dim)
		m->head_dim = m->hidden / m->heads;
	return 0;
}

/* torch_dtype, when it names one of the dtypes memcore sizes. */
static void dtype_key(json_t *o, struct mc_model_shape *m)
{
	json_t *dt = json_object_get(o, "torch_dtype");
	const char *d;

	if (!json_is_string(dt))
		dt = json_object_get(o, "dtype");	/* transformers 4.56+ */
	if (!json_is_string(dt))
		return;
	d = json_string_value(dt);
	if (!strcmp(d, "float32"))
		m->dtype_bytes = 4;
	else if (!strcmp(d, "bfloat16") || !strcmp(d, "float16"))
		m->dtype_bytes = 2;
}

/*
 * A model_type memcore does not count: the keys the other terms read,
 * where the common spellings put them, at the top or in text_config (a
 * multimodal model's language model: Gemma-3 4B and up, LLaVA). Absent
 * ones stay 0; the term that needs one says so.
 */
static int shape_keys(json_t *o, const char *name, struct mc_model_shape *m,
		      char *err, size_t errlen)
{
	static const char *const hidden[] = { "hidden_size", "n_embd",
					      "d_model", NULL };
	static const char *const layers[] = { "num_hidden_layers", "n_layer",
					      "num_layers", NULL };
	static const char *const pos[] = { "max_position_embeddings",
					   "n_positions", NULL };
	static const char *const *const keys[] = { hidden, layers, pos };
	uint32_t *outs[] = { &m->hidden, &m->layers, &m->max_positions };
	json_t *text = json_object_get(o, "text_config");

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		for (const char *const *key = keys[i]; *key; key++) {
			json_t *where = json_object_get(o, *key) ? o : text;

			if (!json_is_object(where) ||
			    !json_object_get(where, *key))
				continue;
			if (get_u32(where, name, *key, NULL, 0, outs[i], err,
				    errlen))
				return -1;
			break;
		}
	if (m->hidden > (1u << 20) || m->layers > 100000 ||
	    m->max_positions > (1u << 24))
		return mc_err(err, errlen, "%s: hidden %u, layers %u: beyond "
			      "any model memcore sizes", name, m->hidden,
			      m->layers);
	return 0;
}

int mc_hfconfig_parse(const char *text, size_t len, const char *name,
		      unsigned flags, struct mc_model_shape *m, char *err,
		      size_t errlen)
{
	json_t *o;
	const char *type = NULL;	/* both set by model_family */
	enum family f = F_LLAMA;
	int rc = -1;
	bool gpt;

	memset(m, 0, sizeof(*m));
	/* Duplicate keys: the last wins, as in Python's json (see the
	 * header). */
	o = mc_jsonfile_parse(text, len, name, false, err, errlen);
	if (!o)
		return -1;
	if (!json_is_object(o)) {
		mc_err(err, errlen, "%s: expected a JSON object (a Hugging "
		       "Face config.json)", name);
		goto out;
	}
	if (model_family(o, name, flags, m, &f, &type, err, errlen))
		goto out;
	if (f == F_COUNT) {
		rc = shape_keys(o, name, m, err, errlen);
		dtype_key(o, m);
		goto out;
	}
	if (foreign_keys(o, name, f, type, err, errlen))
		goto out;
	gpt = families[f].layout != DECODER;
	if (gpt ? gpt_keys(o, name, f, m, err, errlen)
		: llama_keys(o, name, f, m, err, errlen))
		goto out;
	if (get_bool(o, name, "tie_word_embeddings", families[f].tied,
		     &m->tied, err, errlen) ||
	    shape_sane(name, m, gpt, err, errlen) ||
	    moe_keys(o, name, f, m, err, errlen))
		goto out;
	dtype_key(o, m);
	count(f, m);
	m->counted = true;
	/* As --model-params: at most 1e15 parameters. */
	if (m->params > 1000000000000000ULL) {
		mc_err(err, errlen, "%s: %llu parameters: beyond any model "
		       "memcore sizes (at most 1e15)", name,
		       (unsigned long long)m->params);
		goto out;
	}
	rc = 0;
out:
	json_decref(o);
	if (rc)
		memset(m, 0, sizeof(*m));
	return rc;
}
