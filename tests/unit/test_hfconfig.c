/*
 * test_hfconfig.c - Hugging Face config.json parameter counts
 * (mc_hfconfig.h) against published counts of real models, the DeepSpeed
 * ds_config.json reader (mc_dsconfig.h), and the job-files figures
 * carried to slurmstepd (mc_jobfiles.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mc_dsconfig.h"
#include "mc_hfconfig.h"
#include "mc_jobfiles.h"
#include "mc_jsonfile.h"

static char err[MC_ERR_MAX];

static int load(const char *file, struct mc_model_shape *m)
{
	char path[4096], *text;
	size_t len;
	const char *top = getenv("MC_TOP");
	int rc;

	snprintf(path, sizeof(path), "%s/tests/data/models/%s",
		 top ? top : ".", file);
	if (mc_jsonfile_read(path, "--model-config", &text, &len, err,
			     sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	rc = mc_hfconfig_parse(text, len, file, 0, m, err, sizeof(err));
	free(text);
	if (rc)
		fprintf(stderr, "%s\n", err);
	return rc;
}

/*
 * The count derived here from the parameters transformers creates, named
 * as in the model's state dict (modeling_llama.py / modeling_qwen2.py /
 * modeling_mistral.py; modeling_gpt2.py; modeling_gptj.py), each as its
 * shape: an independent tally, not the product's formula.
 */
struct shape { const char *name; uint64_t a, b; };

static uint64_t tally(const struct shape *s, size_t n, uint64_t times)
{
	uint64_t t = 0;

	for (size_t i = 0; i < n; i++)
		t += s[i].a * (s[i].b ? s[i].b : 1);
	return t * times;
}

/*
 * What the Llama family shares (modeling_llama.py and those built on it):
 * the embedding, the final norm and lm_head; in each of L layers the
 * attention (q, k, v with biases where the model has them, o) and its two
 * norms. The MLP is each model's own.
 */
static uint64_t llama_base(uint64_t V, uint64_t H, uint64_t L,
			   uint64_t heads, uint64_t kv, uint64_t D, int bias,
			   int tied)
{
	struct shape top[] = {
		{ "model.embed_tokens.weight", V, H },
		{ "model.norm.weight", H, 0 },
		{ "lm_head.weight", tied ? 0 : V, H },
	};
	struct shape layer[] = {
		{ "self_attn.q_proj.weight", heads * D, H },
		{ "self_attn.q_proj.bias", bias ? heads * D : 0, 0 },
		{ "self_attn.k_proj.weight", kv * D, H },
		{ "self_attn.k_proj.bias", bias ? kv * D : 0, 0 },
		{ "self_attn.v_proj.weight", kv * D, H },
		{ "self_attn.v_proj.bias", bias ? kv * D : 0, 0 },
		{ "self_attn.o_proj.weight", H, heads * D },
		{ "input_layernorm.weight", H, 0 },
		{ "post_attention_layernorm.weight", H, 0 },
	};

	return tally(top, 3, 1) + tally(layer, 9, L);
}

/* Llama, Mistral, Qwen2: a dense MLP of gate, up and down (I x H). */
static uint64_t llama_hd(uint64_t V, uint64_t H, uint64_t I, uint64_t L,
			 uint64_t heads, uint64_t kv, uint64_t D, int bias,
			 int tied)
{
	struct shape mlp[] = {
		{ "mlp.gate_proj.weight", I, H },
		{ "mlp.up_proj.weight", I, H },
		{ "mlp.down_proj.weight", H, I },
	};

	return llama_base(V, H, L, heads, kv, D, bias, tied) +
	       tally(mlp, 3, L);
}

static uint64_t llama_like(uint64_t V, uint64_t H, uint64_t I, uint64_t L,
			   uint64_t heads, uint64_t kv, int bias, int tied)
{
	return llama_hd(V, H, I, L, heads, kv, H / heads, bias, tied);
}

/*
 * Mixtral (modeling_mixtral.py): the attention of Mistral, the MLP
 * replaced by block_sparse_moe: gate (E x H) and E experts of w1 (I x H),
 * w2 (H x I), w3 (I x H).
 */
static uint64_t mixtral(uint64_t V, uint64_t H, uint64_t I, uint64_t L,
			uint64_t heads, uint64_t kv, uint64_t E)
{
	struct shape moe[] = {
		{ "block_sparse_moe.gate.weight", E, H },
	};
	struct shape expert[] = {
		{ "w1.weight", I, H }, { "w2.weight", H, I },
		{ "w3.weight", I, H },
	};

	return llama_base(V, H, L, heads, kv, H / heads, 0, 0) +
	       tally(moe, 1, L) + tally(expert, 3, E * L);
}

/*
 * Qwen2-MoE (modeling_qwen2_moe.py), every layer sparse
 * (decoder_sparse_step 1, no mlp_only_layers): Qwen2's attention with q,
 * k, v biases; mlp.gate (E x H), E experts of gate/up/down_proj at Im,
 * mlp.shared_expert at Is and mlp.shared_expert_gate (1 x H).
 */
static uint64_t qwen2_moe(uint64_t V, uint64_t H, uint64_t L, uint64_t heads,
			  uint64_t kv, uint64_t E, uint64_t Im, uint64_t Is)
{
	struct shape moe[] = {
		{ "mlp.gate.weight", E, H },
		{ "mlp.shared_expert.gate_proj.weight", Is, H },
		{ "mlp.shared_expert.up_proj.weight", Is, H },
		{ "mlp.shared_expert.down_proj.weight", H, Is },
		{ "mlp.shared_expert_gate.weight", 1, H },
	};
	struct shape expert[] = {
		{ "gate_proj.weight", Im, H }, { "up_proj.weight", Im, H },
		{ "down_proj.weight", H, Im },
	};

	return llama_base(V, H, L, heads, kv, H / heads, 1, 0) +
	       tally(moe, 5, L) + tally(expert, 3, E * L);
}

static void check(const char *file, uint64_t published, uint64_t derived)
{
	struct mc_model_shape m;
	double off;

	assert_int_equal(load(file, &m), 0);
	off = (double)m.params / (double)published - 1.0;
	fprintf(stderr, "%-28s %14llu params, published %14llu (%+.4f%%), "
		"derived %14llu\n", file, (unsigned long long)m.params,
		(unsigned long long)published, off * 100.0,
		(unsigned long long)derived);
	assert_true(off < 0.001 && off > -0.001);
	assert_int_equal(m.params, derived);
}

static void test_published_counts(void **state)
{
	uint64_t H, I, V, L, P;

	/* Llama family */
	check("llama-2-7b-hf.config.json", 6738415616ULL,
	      llama_like(32000, 4096, 11008, 32, 32, 32, 0, 0));
	check("llama-2-13b-hf.config.json", 13015864320ULL,
	      llama_like(32000, 5120, 13824, 40, 40, 40, 0, 0));
	check("mistral-7b-v0.1.config.json", 7241732096ULL,
	      llama_like(32000, 4096, 14336, 32, 32, 8, 0, 0));
	check("qwen2-0.5b.config.json", 494032768ULL,
	      llama_like(151936, 896, 4864, 24, 14, 2, 1, 1));
	/* head_dim 128 given, not hidden / heads = 160: q and o are
	 * 5120 x 4096 (SOURCES.md: 12,247,782,400) */
	check("mistral-nemo-base-2407.config.json", 12247782400ULL,
	      llama_hd(131072, 5120, 14336, 40, 32, 8, 128, 0, 0));
	/* Mixture of experts: every expert counted (46.7B, 14.3B total) */
	check("mixtral-8x7b-v0.1.config.json", 46702792704ULL,
	      mixtral(32000, 4096, 14336, 32, 32, 8, 8));
	check("qwen1.5-moe-a2.7b.config.json", 14315784192ULL,
	      qwen2_moe(151936, 2048, 24, 16, 16, 60, 1408, 5632));
	/* GPT family: GPT-2 (wte, wpe, Conv1D weights and biases, tied
	 * lm_head) */
	H = 768; I = 3072; V = 50257; L = 12; P = 1024;
	{
		struct shape top[] = { { "wte", V, H }, { "wpe", P, H },
				       { "ln_f.weight", H, 0 },
				       { "ln_f.bias", H, 0 } };
		struct shape layer[] = {
			{ "ln_1.weight", H, 0 }, { "ln_1.bias", H, 0 },
			{ "attn.c_attn.weight", H, 3 * H },
			{ "attn.c_attn.bias", 3 * H, 0 },
			{ "attn.c_proj.weight", H, H },
			{ "attn.c_proj.bias", H, 0 },
			{ "ln_2.weight", H, 0 }, { "ln_2.bias", H, 0 },
			{ "mlp.c_fc.weight", H, I }, { "mlp.c_fc.bias", I, 0 },
			{ "mlp.c_proj.weight", I, H },
			{ "mlp.c_proj.bias", H, 0 },
		};

		check("gpt2.config.json", 124439808ULL,
		      tally(top, 4, 1) + tally(layer, 12, L));
	}
	/* GPT-J-6B (untied lm_head with a bias, no attention biases) */
	H = 4096; I = 16384; V = 50400; L = 28;
	{
		struct shape top[] = { { "wte", V, H }, { "ln_f.weight", H, 0 },
				       { "ln_f.bias", H, 0 },
				       { "lm_head.weight", V, H },
				       { "lm_head.bias", V, 0 } };
		struct shape layer[] = {
			{ "ln_1.weight", H, 0 }, { "ln_1.bias", H, 0 },
			{ "attn.q_proj", H, H }, { "attn.k_proj", H, H },
			{ "attn.v_proj", H, H }, { "attn.out_proj", H, H },
			{ "mlp.fc_in.weight", I, H }, { "mlp.fc_in.bias", I, 0 },
			{ "mlp.fc_out.weight", H, I },
			{ "mlp.fc_out.bias", H, 0 },
		};

		check("gpt-j-6b.config.json", 6053381344ULL,
		      tally(top, 5, 1) + tally(layer, 10, L));
	}
}

static int parse_hf(const char *s);
static int parse_hf_flags(const char *s, unsigned flags);

/*
 * A decoder layer as the state dict names it (modeling_qwen3.py,
 * modeling_gemma2/3.py, modeling_olmo2.py, modeling_phi3.py,
 * modeling_starcoder2.py): q, k, v, o (biases where `bias`), the q/k
 * norms (per head: qk 1, q_norm/k_norm of head_dim; over all heads: qk 2,
 * of heads*D and kv*D), `norms` norm weights of H (LayerNorm's bias
 * where ln_bias) and the MLP: gate/up/down (gated) or c_fc/c_proj.
 */
struct dec {
	uint64_t V, H, I, L, heads, kv, D;
	int bias, qk, norms, ln_bias, gated, mlp_bias, tied;
};

static uint64_t decoder(const struct dec *d)
{
	uint64_t H = d->H, A = d->heads * d->D, K = d->kv * d->D, I = d->I;
	struct shape top[] = {
		{ "model.embed_tokens.weight", d->V, H },
		{ "model.norm.weight", H, 0 },
		{ "model.norm.bias", d->ln_bias ? H : 0, 0 },
		{ "lm_head.weight", d->tied ? 0 : d->V, H },
	};
	struct shape layer[] = {
		{ "self_attn.q_proj.weight", A, H },
		{ "self_attn.q_proj.bias", d->bias ? A : 0, 0 },
		{ "self_attn.k_proj.weight", K, H },
		{ "self_attn.k_proj.bias", d->bias ? K : 0, 0 },
		{ "self_attn.v_proj.weight", K, H },
		{ "self_attn.v_proj.bias", d->bias ? K : 0, 0 },
		{ "self_attn.o_proj.weight", H, A },
		{ "self_attn.o_proj.bias", d->bias ? H : 0, 0 },
		{ "self_attn.q_norm.weight", d->qk == 1 ? d->D : d->qk == 2 ?
		  A : 0, 0 },
		{ "self_attn.k_norm.weight", d->qk == 1 ? d->D : d->qk == 2 ?
		  K : 0, 0 },
		{ "*layernorm.weight", H * d->norms, 0 },
		{ "*layernorm.bias", d->ln_bias ? H * d->norms : 0, 0 },
		{ "mlp.gate_proj.weight", d->gated ? I : 0, H },
		{ "mlp.up_proj.weight / c_fc.weight", I, H },
		{ "mlp.c_fc.bias", d->mlp_bias ? I : 0, 0 },
		/* H x I, written I x H: a 0 size (no dense MLP) stays 0 */
		{ "mlp.down_proj.weight / c_proj.weight", I, H },
		{ "mlp.c_proj.bias", d->mlp_bias ? H : 0, 0 },
	};

	return tally(top, 4, 1) + tally(layer, 17, d->L);
}

/*
 * DeepSeek (modeling_deepseek_v2.py / _v3.py): MLA attention, dense MLP in
 * the first `dense` layers, then router + experts + shared experts; V3's
 * router adds e_score_correction_bias.
 */
static uint64_t deepseek(uint64_t V, uint64_t H, uint64_t I, uint64_t L,
			 uint64_t N, uint64_t qr, uint64_t kr, uint64_t nope,
			 uint64_t rope, uint64_t vd, uint64_t E, uint64_t Im,
			 uint64_t shared, uint64_t dense, int v3)
{
	struct shape top[] = {
		{ "model.embed_tokens.weight", V, H },
		{ "model.norm.weight", H, 0 }, { "lm_head.weight", V, H },
	};
	struct shape attn[] = {
		{ "self_attn.q_proj.weight", qr ? 0 : N * (nope + rope), H },
		{ "self_attn.q_a_proj.weight", qr, H },
		{ "self_attn.q_a_layernorm.weight", qr, 0 },
		/* written transposed: a 0 rank (no q LoRA) stays 0 */
		{ "self_attn.q_b_proj.weight", qr, N * (nope + rope) },
		{ "self_attn.kv_a_proj_with_mqa.weight", kr + rope, H },
		{ "self_attn.kv_a_layernorm.weight", kr, 0 },
		{ "self_attn.kv_b_proj.weight", N * (nope + vd), kr },
		{ "self_attn.o_proj.weight", H, N * vd },
		{ "input_layernorm.weight", H, 0 },
		{ "post_attention_layernorm.weight", H, 0 },
	};
	struct shape mlp[] = { { "mlp.gate_proj.weight", I, H },
			       { "mlp.up_proj.weight", I, H },
			       { "mlp.down_proj.weight", H, I } };
	struct shape moe[] = {
		{ "mlp.gate.weight", E, H },
		{ "mlp.gate.e_score_correction_bias", v3 ? E : 0, 0 },
		{ "mlp.shared_experts.gate_proj.weight", Im * shared, H },
		{ "mlp.shared_experts.up_proj.weight", Im * shared, H },
		{ "mlp.shared_experts.down_proj.weight", H, Im * shared },
	};
	struct shape expert[] = { { "gate_proj.weight", Im, H },
				  { "up_proj.weight", Im, H },
				  { "down_proj.weight", H, Im } };

	return tally(top, 3, 1) + tally(attn, 10, L) + tally(mlp, 3, dense) +
	       tally(moe, 5, L - dense) + tally(expert, 3, E * (L - dense));
}

/*
 * The families of today's training jobs, each against its published total
 * (SOURCES.md: the checkpoint's model.safetensors.index.json total_size
 * over its dtype's bytes, or the Hub's or model card's figure) and the
 * tally above.
 */
static void test_published_counts_new_families(void **state)
{
	struct dec q3 = { 151936, 4096, 12288, 36, 32, 8, 128, 0, 1, 2, 0, 1,
			  0, 0 };
	struct dec g2 = { 256000, 3584, 14336, 42, 16, 8, 256, 0, 0, 4, 0, 1,
			  0, 1 };
	struct dec g3 = { 262144, 1152, 6912, 26, 4, 1, 256, 0, 1, 4, 0, 1, 0,
			  1 };
	struct dec phi3 = { 32064, 3072, 8192, 32, 32, 32, 96, 0, 0, 2, 0, 1,
			    0, 0 };
	struct dec sc2 = { 49152, 3072, 12288, 30, 24, 2, 128, 1, 0, 2, 1, 0,
			   1, 1 };
	struct dec olmo2 = { 100352, 4096, 11008, 32, 32, 32, 128, 0, 2, 2, 0,
			     1, 0, 0 };
	/* Qwen3-30B-A3B: qwen3's attention, 48 sparse layers of a 128 x 2048
	 * router and 128 experts of 3 x 2048 x 768; no dense MLP */
	struct dec q3moe = { 151936, 2048, 0, 48, 32, 4, 128, 0, 1, 2, 0, 1, 0,
			     0 };
	uint64_t H = 2048, D = 128;

	/* 16,381,470,720 bytes of bfloat16 */
	check("qwen3-8b.config.json", 16381470720ULL / 2, decoder(&q3));
	check("qwen3-30b-a3b.config.json", 61064245248ULL / 2,
	      decoder(&q3moe) + 48 * (128 * H + 128 * 3 * H * 768));
	check("gemma-2-9b.config.json", 9241705984ULL, decoder(&g2));
	check("gemma-3-1b-pt.config.json", 999885952ULL, decoder(&g3));
	/* 7,642,159,104 bytes of bfloat16 */
	check("phi-3-mini-4k-instruct.config.json", 7642159104ULL / 2,
	      decoder(&phi3));
	check("starcoder2-3b.config.json", 3030371328ULL, decoder(&sc2));
	check("olmo-2-1124-7b.config.json", 7298617344ULL, decoder(&olmo2));
	/* 31,412,968,448 bytes of bfloat16 */
	check("deepseek-v2-lite.config.json", 31412968448ULL / 2,
	      deepseek(102400, 2048, 10944, 27, 16, 0, 512, 128, 64, 128, 64,
		       1408, 2, 1, 0));
	/* the card's 671B of the main model (the Hub's 685B adds the 14B
	 * multi-token-prediction layer transformers does not build) */
	check("deepseek-v3.config.json", 671000000000ULL,
	      deepseek(129280, 7168, 18432, 61, 128, 1536, 512, 128, 64, 128,
		       256, 2048, 1, 3, 1));
	/* GPT-BigCode (SantaCoder): GPT-2's block, c_attn 2048 x (2048 + 2 x
	 * 128) with multi_query; no published exact total: the tally only */
	{
		struct mc_model_shape m;
		uint64_t C = H + 2 * D, I = 8192;
		struct shape top[] = { { "wte", 49280, H }, { "wpe", 2048, H },
				       { "ln_f", 2 * H, 0 } };
		struct shape layer[] = {
			{ "ln_1, ln_2", 4 * H, 0 },
			{ "attn.c_attn", H, C }, { "attn.c_attn.bias", C, 0 },
			{ "attn.c_proj", H, H }, { "attn.c_proj.bias", H, 0 },
			{ "mlp.c_fc", H, I }, { "mlp.c_fc.bias", I, 0 },
			{ "mlp.c_proj", I, H }, { "mlp.c_proj.bias", H, 0 },
		};

		assert_int_equal(load("gpt_bigcode-santacoder.config.json",
				      &m), 0);
		assert_int_equal(m.params, tally(top, 3, 1) +
				 tally(layer, 9, 24));
	}
}

/* The largest module of the MoE and MLA models: DeepSeek-V3's is its
 * embedding (129280 x 7168), Qwen3-30B-A3B's too; Gemma-2's and
 * Starcoder2's ties keep one. */
static void test_largest_layer_new_families(void **state)
{
	struct mc_model_shape m;

	assert_int_equal(load("deepseek-v3.config.json", &m), 0);
	assert_int_equal(m.largest_layer_params, 129280ULL * 7168);
	assert_int_equal(m.sparse_layers, 58);
	assert_int_equal(m.layers, 61);
	assert_int_equal(load("qwen3-30b-a3b.config.json", &m), 0);
	assert_int_equal(m.sparse_layers, 48);
	assert_int_equal(load("gemma-2-9b.config.json", &m), 0);
	assert_true(m.tied);
	assert_int_equal(m.dtype_bytes, 4);
	assert_int_equal(m.head_dim, 256);
}

/* A model_type memcore does not count: refused alone, read for its shape
 * (top level or text_config) beside a count from elsewhere. */
static void test_any_type_shape(void **state)
{
	struct mc_model_shape m;
	/* google/gemma-3-4b-it's config.json: the multimodal model, its
	 * language model's keys under text_config (the keys that size it) */
	const char *g3 = "{\"architectures\": [\"Gemma3ForConditionalGeneration"
		"\"], \"model_type\": \"gemma3\", \"text_config\": {"
		"\"hidden_size\": 2560, \"intermediate_size\": 10240, "
		"\"model_type\": \"gemma3_text\", \"num_hidden_layers\": 34, "
		"\"sliding_window\": 1024}, \"torch_dtype\": \"bfloat16\", "
		"\"vision_config\": {\"hidden_size\": 1152}}";

	assert_int_equal(mc_hfconfig_parse(g3, strlen(g3), "g.json", 0, &m,
					   err, sizeof(err)), -1);
	assert_non_null(strstr(err, "g.json: model_type \"gemma3\" is not one "
			       "memcore counts"));
	assert_non_null(strstr(err, "give the model's directory"));
	assert_int_equal(mc_hfconfig_parse(g3, strlen(g3), "g.json",
					   MC_HF_ANY_TYPE, &m, err,
					   sizeof(err)), 0);
	assert_false(m.counted);
	assert_int_equal(m.params, 0);
	assert_int_equal(m.hidden, 2560);
	assert_int_equal(m.layers, 34);
	assert_int_equal(m.dtype_bytes, 2);
	assert_string_equal(m.model_type, "gemma3");
	/* a bad value is still an error naming it */
	assert_int_equal(parse_hf_flags("{\"model_type\": \"t5\", \"d_model\":"
					" -1}", MC_HF_ANY_TYPE), -1);
	assert_string_equal(err, "cfg.json: d_model: expected a positive "
			    "integer");
}

/* DeepSeek's keys are required (the defaults differ between its code
 * and transformers'); an MLA key in a Llama file is refused. */
static void test_deepseek_keys(void **state)
{
	assert_int_equal(parse_hf("{\"model_type\": \"deepseek_v3\", "
		"\"hidden_size\": 7168, \"num_hidden_layers\": 61, "
		"\"intermediate_size\": 18432, \"num_attention_heads\": 128, "
		"\"vocab_size\": 129280, \"q_lora_rank\": 1536}"), -1);
	assert_string_equal(err, "cfg.json: kv_lora_rank: missing (expected "
			    "a positive integer)");
	assert_int_equal(parse_hf("{\"model_type\": \"llama\", \"hidden_size"
		"\": 4096, \"num_hidden_layers\": 32, \"intermediate_size\": "
		"11008, \"num_attention_heads\": 32, \"vocab_size\": 32000, "
		"\"kv_lora_rank\": 512}"), -1);
	assert_non_null(strstr(err, "cfg.json: kv_lora_rank: changes the "
			       "parameter count of other models"));
}

static void test_largest_layer(void **state)
{
	struct mc_model_shape m;

	/* DeepSpeed's largest layer is the largest module: the embedding */
	assert_int_equal(load("llama-2-7b-hf.config.json", &m), 0);
	assert_int_equal(m.largest_layer_params, 32000ULL * 4096);
	assert_int_equal(m.layers, 32);
	assert_int_equal(m.hidden, 4096);
	assert_int_equal(m.max_positions, 4096);
	assert_int_equal(m.dtype_bytes, 2);
	assert_false(m.tied);
}

static int parse_hf_flags(const char *s, unsigned flags)
{
	struct mc_model_shape m;

	return mc_hfconfig_parse(s, strlen(s), "cfg.json", flags, &m, err,
				 sizeof(err));
}

static int parse_hf(const char *s)
{
	return parse_hf_flags(s, 0);
}

/* A key given twice: Python's json keeps the last, so transformers loads
 * the file; memcore counts what transformers would. A DeepSpeed config
 * is still refused, as DeepSpeed refuses it. */
static void test_duplicate_keys(void **state)
{
	struct mc_model_shape m;
	struct mc_ds_facts d;
	const char *twice = "{\"model_type\": \"llama\", \"hidden_size\": "
		"4096, \"num_hidden_layers\": 2, \"intermediate_size\": 11008,"
		" \"num_attention_heads\": 32, \"vocab_size\": 32000, "
		"\"num_hidden_layers\": 32, \"torch_dtype\": \"float16\"}";

	assert_int_equal(mc_hfconfig_parse(twice, strlen(twice), "cfg.json", 0,
					   &m, err, sizeof(err)), 0);
	assert_int_equal(m.layers, 32);
	/* Llama-2-7B's shape, published 6,738,415,616 */
	assert_int_equal(m.params, 6738415616ULL);
	twice = "{\"zero_optimization\": {\"stage\": 2, \"stage\": 3}}";
	assert_int_equal(mc_dsconfig_parse(twice, strlen(twice), "ds.json", &d,
					   err, sizeof(err)), -1);
	fprintf(stderr, "%s\n", err);
	assert_non_null(strstr(err, "ds.json: not JSON at line 1"));
	assert_non_null(strstr(err, "duplicate object key"));
}

/*
 * A key that changes the count in another model type is refused with the
 * key and the file, whatever model_type says: the Mixtral file labelled
 * "mistral" would be one dense 7.24B expert.
 */
static void test_foreign_count_keys(void **state)
{
	static const char *const keys[] = {
		"\"num_local_experts\": 8", "\"num_experts\": 60",
		"\"n_routed_experts\": 64", "\"moe_intermediate_size\": 1408",
		"\"shared_expert_intermediate_size\": 5632",
		"\"attention_bias\": true",
	};
	char text[512];

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		char key[64];

		snprintf(text, sizeof(text), "{\"model_type\": \"mistral\", "
			 "\"hidden_size\": 4096, \"num_hidden_layers\": 32, "
			 "\"intermediate_size\": 14336, \"num_attention_heads"
			 "\": 32, \"num_key_value_heads\": 8, \"vocab_size\": "
			 "32000, %s}", keys[i]);
		assert_int_equal(parse_hf(text), -1);
		snprintf(key, sizeof(key), "%.*s", (int)(strchr(keys[i] + 1,
			 '"') - keys[i] - 1), keys[i] + 1);
		snprintf(text, sizeof(text), "cfg.json: %s: changes the "
			 "parameter count of other models, not of model_type "
			 "\"mistral\" as memcore counts it", key);
		fprintf(stderr, "%s\n", err);
		assert_non_null(strstr(err, text));
	}
	/* false is every type's default: not a foreign key */
	assert_int_equal(parse_hf("{\"model_type\": \"mistral\", \"hidden_"
		"size\": 4096, \"num_hidden_layers\": 32, \"intermediate_size"
		"\": 14336, \"num_attention_heads\": 32, \"vocab_size\": 32000,"
		" \"attention_bias\": false, \"num_experts\": null}"), 0);
	/* head_dim sizes attention in the Llama family only */
	assert_int_equal(parse_hf("{\"model_type\": \"gpt2\", \"n_embd\": "
		"768, \"n_layer\": 12, \"n_head\": 12, \"n_positions\": 1024,"
		" \"vocab_size\": 50257, \"head_dim\": 64}"), -1);
	assert_non_null(strstr(err, "cfg.json: head_dim: changes"));
}

/* Qwen2-MoE's dense layers: mlp_only_layers and decoder_sparse_step. */
static void test_qwen2_moe_layers(void **state)
{
	struct mc_model_shape all, some;
#define QWEN_MOE(extra) "{\"model_type\": \"qwen2_moe\", \"hidden_size\":" \
	" 2048, \"num_hidden_layers\": 24, \"intermediate_size\": 5632," \
	" \"num_attention_heads\": 16, \"vocab_size\": 151936" extra "}"
	char text[512];
	/* one layer's sparse MLP less a dense one's, from the tally's parts:
	 * gate 60 x 2048, 60 experts 3 x 2048 x 1408, shared 3 x 2048 x
	 * 5632 + its gate 2048; dense 3 x 2048 x 5632 */
	uint64_t sparse = 60ULL * 2048 + 60ULL * 3 * 2048 * 1408 +
			  3ULL * 2048 * 5632 + 2048;
	uint64_t dense = 3ULL * 2048 * 5632;

	/* Qwen2MoeConfig's defaults: 60 experts of 1408, shared 5632 */
	snprintf(text, sizeof(text), "%s", QWEN_MOE(""));
	assert_int_equal(mc_hfconfig_parse(text, strlen(text), "q.json", 0, &all,
					   err, sizeof(err)), 0);
	assert_int_equal(all.params, 14315784192ULL);
	assert_int_equal(all.sparse_layers, 24);
	/* layers 1, 3, ... sparse at step 2, and 5 and 7 dense as listed */
	snprintf(text, sizeof(text), "%s", QWEN_MOE(", \"decoder_sparse_step"
		 "\": 2, \"mlp_only_layers\": [5, 7, 7]"));
	assert_int_equal(mc_hfconfig_parse(text, strlen(text), "q.json", 0,
					   &some, err, sizeof(err)), 0);
	assert_int_equal(some.sparse_layers, 10);
	assert_int_equal(all.params - some.params, 14 * (sparse - dense));
	snprintf(text, sizeof(text), "%s", QWEN_MOE(", \"mlp_only_layers\": "
		 "[24]"));
	assert_int_equal(mc_hfconfig_parse(text, strlen(text), "q.json", 0,
					   &some, err, sizeof(err)), -1);
	assert_string_equal(err, "q.json: mlp_only_layers: expected layer "
			    "indices from 0 to 23");
}

static void test_hf_errors(void **state)
{
	assert_int_equal(parse_hf("{\"model_type\": \"a\\rb\\u007f\"}"), -1);
	assert_non_null(strstr(err, "cfg.json: model_type \"a\\rb\\x7f\" is "
			       "not one "));
	assert_int_equal(parse_hf("{\"model_type\": \"bert\"}"), -1);
	assert_non_null(strstr(err, "cfg.json: model_type \"bert\" is not one "
			       "memcore counts (llama, "));
	assert_int_equal(parse_hf("{\"model_type\": \"llama\", \"hidden_size"
				  "\": 4096}"), -1);
	assert_string_equal(err, "cfg.json: num_hidden_layers: missing "
			    "(expected a positive integer)");
	assert_int_equal(parse_hf("{\"model_type\": \"llama\", \"hidden_size"
				  "\": \"4096\"}"), -1);
	assert_string_equal(err, "cfg.json: hidden_size: expected a positive "
			    "integer");
	assert_int_equal(parse_hf("{\"model_type\": 3}"), -1);
	assert_non_null(strstr(err, "model_type: not a string"));
	assert_int_equal(parse_hf("{"), -1);
	assert_string_equal(err, "cfg.json: not JSON at line 1, column 1: "
			    "string or '}' expected near end of file");
	/* where: jansson's line and column, counted from 1 */
	assert_int_equal(parse_hf("{\n \"model_type\": \"llama\",\n  ,}"),
			 -1);
	assert_string_equal(err, "cfg.json: not JSON at line 3, column 3: "
			    "string or '}' expected near ','");
	assert_int_equal(parse_hf("[]"), -1);
	assert_non_null(strstr(err, "expected a JSON object"));
	assert_int_equal(parse_hf("{\"model_type\": \"llama\", \"hidden_size"
		"\": 4096, \"num_hidden_layers\": 2, \"intermediate_size\": 8,"
		" \"num_attention_heads\": 32, \"vocab_size\": 10, "
		"\"num_key_value_heads\": 5}"), -1);
	assert_non_null(strstr(err, "num_key_value_heads: expected a divisor"));
}

static int parse_ds(const char *s, struct mc_ds_facts *d)
{
	return mc_dsconfig_parse(s, strlen(s), "ds.json", d, err, sizeof(err));
}

static void test_dsconfig(void **state)
{
	struct mc_ds_facts d;

	assert_int_equal(parse_ds("{\"train_micro_batch_size_per_gpu\": 4, "
		"\"bf16\": {\"enabled\": true}, \"zero_optimization\": "
		"{\"stage\": 3, \"offload_optimizer\": {\"device\": \"cpu\"}, "
		"\"offload_param\": {\"device\": \"nvme\", \"buffer_count\": 6, "
		"\"buffer_size\": 2e8}, "
		"\"stage3_gather_16bit_weights_on_model_save\": true}, "
		"\"activation_checkpointing\": {\"partition_activations\": true,"
		" \"cpu_checkpointing\": true}}", &d), 0);
	assert_true(d.has_stage);
	assert_int_equal(d.stage, 3);
	assert_int_equal(d.offload_optimizer, MC_DS_CPU);
	assert_int_equal(d.offload_param, MC_DS_NVME);
	assert_int_equal(d.param_buffer_count, 6);
	assert_int_equal(d.param_buffer_size, 200000000);
	assert_true(d.gather_16bit_on_save && d.cpu_checkpointing &&
		    d.partition_activations);
	assert_int_equal(d.micro_batch, 4);
	assert_int_equal(d.dtype_bytes, 2);
	/* DeepSpeed's defaults; "auto" is not given */
	assert_int_equal(parse_ds("{\"train_micro_batch_size_per_gpu\": "
				  "\"auto\", \"bf16\": {\"enabled\": \"auto\"}}",
				  &d), 0);
	assert_false(d.has_stage);
	assert_int_equal(d.micro_batch, 0);
	assert_true(d.micro_batch_auto);
	assert_int_equal(d.dtype_bytes, 0);
	assert_int_equal(d.param_buffer_count, 5);
	assert_int_equal(d.optimizer_buffer_count, 4);
	/* the legacy cpu_offload */
	assert_int_equal(parse_ds("{\"zero_optimization\": {\"stage\": 2, "
				  "\"cpu_offload\": true}}", &d), 0);
	assert_int_equal(d.offload_optimizer, MC_DS_CPU);
	/* errors name file, key and what was expected */
	assert_int_equal(parse_ds("{\"zero_optimization\": {\"stage\": 4}}",
				  &d), -1);
	assert_string_equal(err, "ds.json: zero_optimization.stage: expected "
			    "0, 1, 2, 3 or \"auto\"");
	assert_int_equal(parse_ds("{\"zero_optimization\": {\"offload_param\":"
				  " {\"device\": \"gpu\"}}}", &d), -1);
	assert_string_equal(err, "ds.json: zero_optimization.offload_param."
			    "device: expected none, cpu, nvme or \"auto\", got "
			    "\"gpu\"");
	/* a job file's string is quoted escaped: no forged line, no ESC */
	assert_int_equal(parse_ds("{\"zero_optimization\": {\"offload_param\":"
				  " {\"device\": \"x\\nmemcore: this step fits:"
				  "\\u001b[31m\"}}}", &d), -1);
	assert_string_equal(err, "ds.json: zero_optimization.offload_param."
			    "device: expected none, cpu, nvme or \"auto\", got "
			    "\"x\\nmemcore: this step fits:\\x1b[31m\"");
	assert_int_equal(parse_ds("{\"activation_checkpointing\": "
				  "{\"cpu_checkpointing\": 1}}", &d), -1);
	assert_string_equal(err, "ds.json: activation_checkpointing."
			    "cpu_checkpointing: expected true or false");
	assert_int_equal(parse_ds("{\"train_micro_batch_size_per_gpu\": 0}",
				  &d), -1);
	assert_non_null(strstr(err, "train_micro_batch_size_per_gpu: expected "
			       "an integer from 1"));
	assert_int_equal(parse_ds("{\"zero_optimization\": []}", &d), -1);
	assert_string_equal(err, "ds.json: zero_optimization: expected an "
			    "object");
}

/* The request of an 8-GPU step on one node: options, then the files. */
static void request_8_gpus(const struct mc_jobfiles *f,
			   const struct mc_opts *o, const struct mc_policy *p,
			   struct mc_request *r)
{
	memset(r, 0, sizeof(*r));
	r->gpus = 8;
	r->nodes = 1;
	mc_opts_request(o, p, r);
	mc_jobfiles_apply(f, o, p, r);
}

/*
 * A ds_config with "auto" wherever Accelerate fills it from its launch
 * options (its DeepSpeed guide, "Scenario 3": stage, both offload devices,
 * the 16-bit gather on save, bf16, the batch sizes): read as not given,
 * said in one note naming memcore's options, and the same after the trip
 * through MEMCORE_JOB_FILES; an option given drops its part of the note.
 */
static void test_dsconfig_accelerate_auto(void **state)
{
	static const char acc[] =
		"{\"bf16\": {\"enabled\": \"auto\"}, \"zero_optimization\": "
		"{\"stage\": \"auto\", "
		"\"stage3_gather_16bit_weights_on_model_save\": \"auto\", "
		"\"offload_optimizer\": {\"device\": \"auto\"}, "
		"\"offload_param\": {\"device\": \"auto\"}}, "
		"\"gradient_clipping\": \"auto\", \"train_batch_size\": \"auto\", "
		"\"train_micro_batch_size_per_gpu\": \"auto\", "
		"\"gradient_accumulation_steps\": \"auto\", "
		"\"steps_per_print\": 2000000}";
	struct mc_jobfiles f, g;
	struct mc_opts o;
	struct mc_policy p;
	struct mc_request r;
	char buf[1024];

	(void)state;
	memset(&f, 0, sizeof(f));
	memset(&o, 0, sizeof(o));
	mc_policy_defaults(&p);
	assert_int_equal(parse_ds(acc, &f.ds), 0);
	assert_false(f.ds.has_stage);
	assert_int_equal(f.ds.offload_optimizer, MC_DS_NONE);
	assert_int_equal(f.ds.offload_param, MC_DS_NONE);
	assert_false(f.ds.gather_16bit_on_save);
	assert_int_equal(f.ds.auto_mask, MC_DS_AUTO_ALL);
	f.has_ds = true;
	snprintf(f.ds_name, sizeof(f.ds_name), "ds_config.json");
	mc_jobfiles_format(&f, buf, sizeof(buf));
	assert_non_null(strstr(buf, ",au=15"));
	assert_int_equal(mc_jobfiles_parse(buf, &g, err, sizeof(err)), 0);
	assert_int_equal(g.ds.auto_mask, MC_DS_AUTO_ALL);
	assert_false(g.ds.has_stage);

	request_8_gpus(&g, &o, &p, &r);
	assert_int_equal(r.zero_stage, 0);
	assert_int_equal(r.offload, MC_OFFLOAD_NONE);
	assert_int_equal(r.use.n_notes, 1);
	assert_string_equal(r.use.notes[0], "ds_config.json: \"auto\" read as "
			    "not given (Accelerate fills it at launch): stage "
			    "(--zero-stage), offload devices (--offload), "
			    "16-bit gather on save (--checkpoint-save)");
	/* --zero-stage=3 --offload=all say it: no override note either. */
	assert_int_equal(mc_opts_set(&o, MC_OPT_STAGE, "3", false, err,
				     sizeof(err)), 0);
	assert_int_equal(mc_opts_set(&o, MC_OPT_OFFLOAD, "all", false, err,
				     sizeof(err)), 0);
	assert_int_equal(mc_opts_set(&o, MC_OPT_PARAMS, "7B", false, err,
				     sizeof(err)), 0);
	request_8_gpus(&g, &o, &p, &r);
	assert_int_equal(r.zero_stage, 3);
	assert_int_equal(r.offload, MC_OFFLOAD_ALL);
	assert_int_equal(r.use.n_notes, 1);
	assert_string_equal(r.use.notes[0], "ds_config.json: \"auto\" read as "
			    "not given (Accelerate fills it at launch): 16-bit "
			    "gather on save (--checkpoint-save)");
	/* A file without "auto" writes no au= (an older slurmstepd's
	 * parser refuses a key it does not know). */
	assert_int_equal(parse_ds("{\"zero_optimization\": {\"stage\": 2}}",
				  &f.ds), 0);
	assert_int_equal(f.ds.auto_mask, 0);
	mc_jobfiles_format(&f, buf, sizeof(buf));
	assert_null(strstr(buf, "au="));
	/* Still a refusal: a stage that is neither a number nor "auto". */
	assert_int_equal(parse_ds("{\"zero_optimization\": {\"stage\": "
				  "\"three\"}}", &f.ds), -1);
	assert_string_equal(err, "ds.json: zero_optimization.stage: expected "
			    "0, 1, 2, 3 or \"auto\"");
	assert_int_equal(parse_ds("{\"zero_optimization\": "
				  "{\"stage3_gather_16bit_weights_on_model_save\":"
				  " \"yes\"}}", &f.ds), -1);
	assert_string_equal(err, "ds.json: zero_optimization."
			    "stage3_gather_16bit_weights_on_model_save: "
			    "expected true or false (or \"auto\")");
}

/* The figures survive the trip through MEMCORE_JOB_FILES. */
static void test_jobfiles_roundtrip(void **state)
{
	struct mc_jobfiles f, g;
	char buf[1024];

	memset(&f, 0, sizeof(f));
	assert_int_equal(load("mistral-7b-v0.1.config.json", &f.model), 0);
	f.has_model = true;
	snprintf(f.model_name, sizeof(f.model_name), "config.json");
	assert_int_equal(parse_ds("{\"zero_optimization\": {\"stage\": 3, "
		"\"offload_param\": {\"device\": \"cpu\"}}, "
		"\"train_micro_batch_size_per_gpu\": 2}", &f.ds), 0);
	f.has_ds = true;
	snprintf(f.ds_name, sizeof(f.ds_name), "ds_config.json");
	mc_jobfiles_format(&f, buf, sizeof(buf));
	assert_int_equal(mc_jobfiles_parse(buf, &g, err, sizeof(err)), 0);
	assert_int_equal(g.model.params, 7241732096ULL);
	assert_int_equal(g.model.kv_heads, 8);
	assert_int_equal(g.ds.stage, 3);
	assert_int_equal(g.ds.offload_param, MC_DS_CPU);
	assert_int_equal(g.ds.micro_batch, 2);
	assert_string_equal(g.ds_name, "ds_config.json");
	/* a forged or broken value is refused, naming it */
	assert_int_equal(mc_jobfiles_parse("ds=x,st=9", &g, err, sizeof(err)),
			 -1);
	assert_string_equal(err, "MEMCORE_JOB_FILES: st=9: not a value memcore "
			    "wrote");
	assert_int_equal(mc_jobfiles_parse("zz=1", &g, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "unknown key 'zz'"));
	/* A hand-set newline would forge a line of slurmd's log: refused,
	 * and the message quotes nothing of the value. */
	assert_int_equal(mc_jobfiles_parse("ds=x\nslurmd: forged,st=1", &g, err,
					   sizeof(err)), -1);
	assert_string_equal(err, "MEMCORE_JOB_FILES: a control byte: not a "
			    "value memcore wrote (the variable is memcore's "
			    "own: unset it)");
	assert_int_equal(mc_jobfiles_parse("\x1b[31m=1", &g, err, sizeof(err)),
			 -1);
	assert_null(strchr(err, 0x1b));
}

/* Options override the files, and the explanation's notes say so. */
static void test_apply_overrides(void **state)
{
	struct mc_jobfiles f;
	struct mc_opts o;
	struct mc_policy p;
	struct mc_request r;

	memset(&f, 0, sizeof(f));
	memset(&o, 0, sizeof(o));
	mc_policy_defaults(&p);
	assert_int_equal(load("llama-2-7b-hf.config.json", &f.model), 0);
	f.has_model = true;
	snprintf(f.model_name, sizeof(f.model_name), "config.json");
	assert_int_equal(parse_ds("{\"zero_optimization\": {\"stage\": 2, "
		"\"offload_optimizer\": {\"device\": \"cpu\"}}}", &f.ds), 0);
	f.has_ds = true;
	snprintf(f.ds_name, sizeof(f.ds_name), "ds.json");

	request_8_gpus(&f, &o, &p, &r);
	assert_int_equal(r.model_params, 6738415616ULL);
	assert_int_equal(r.zero_stage, 2);
	assert_int_equal(r.offload, MC_OFFLOAD_OPTIMIZER);

	assert_int_equal(mc_opts_set(&o, MC_OPT_PARAMS, "13B", false, err,
				     sizeof(err)), 0);
	assert_int_equal(mc_opts_set(&o, MC_OPT_STAGE, "3", false, err,
				     sizeof(err)), 0);
	request_8_gpus(&f, &o, &p, &r);
	assert_int_equal(r.model_params, 13000000000ULL);
	assert_int_equal(r.zero_stage, 3);
	assert_int_equal(r.use.n_notes, 2);
	assert_string_equal(r.use.notes[0], "--zero-stage=3 overrides ds.json's "
			    "stage 2");
	assert_string_equal(r.use.notes[1], "--model-params=13.00B overrides "
			    "config.json's 6.74B parameters");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_published_counts),
		cmocka_unit_test(test_largest_layer),
		cmocka_unit_test(test_published_counts_new_families),
		cmocka_unit_test(test_largest_layer_new_families),
		cmocka_unit_test(test_any_type_shape),
		cmocka_unit_test(test_deepseek_keys),
		cmocka_unit_test(test_hf_errors),
		cmocka_unit_test(test_duplicate_keys),
		cmocka_unit_test(test_foreign_count_keys),
		cmocka_unit_test(test_qwen2_moe_layers),
		cmocka_unit_test(test_dsconfig),
		cmocka_unit_test(test_jobfiles_roundtrip),
		cmocka_unit_test(test_dsconfig_accelerate_auto),
		cmocka_unit_test(test_apply_overrides),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
