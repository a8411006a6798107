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

const char *const mc_hf_model_types[] = {
	"llama", "mistral", "qwen2", "gpt2", "gptj", "mixtral", "qwen2_moe",
	NULL
};

enum family {
	F_LLAMA, F_MISTRAL, F_QWEN2, F_GPT2, F_GPTJ, F_MIXTRAL, F_QWEN2_MOE
};

#define FB(f) (1u << (f))
#define LLAMA_LIKE (FB(F_LLAMA) | FB(F_MISTRAL) | FB(F_QWEN2) | \
		    FB(F_MIXTRAL) | FB(F_QWEN2_MOE))

/*
 * Keys that change what transformers builds in some model type, and the
 * types whose count here reads them. Present (not null) in a file of
 * another type, the key means a model this count does not describe (a
 * Mixtral file labelled "mistral": its experts would be dropped), so the
 * file is refused, whatever its model_type. n_routed_experts and
 * n_shared_experts are DeepSeek's (modeling_deepseek_v2/v3), counted by no
 * type here. attention_bias and mlp_bias only when true: false is every
 * type's default.
 */
static const struct count_key {
	const char *key;
	unsigned readers;
	bool only_true;		/* refused only when true */
	const char *what;	/* what it adds, where no type counts it */
} count_keys[] = {
	{ "num_local_experts", FB(F_MIXTRAL), false, NULL },
	{ "num_experts", FB(F_QWEN2_MOE), false, NULL },
	{ "moe_intermediate_size", FB(F_QWEN2_MOE), false, NULL },
	{ "shared_expert_intermediate_size", FB(F_QWEN2_MOE), false, NULL },
	{ "decoder_sparse_step", FB(F_QWEN2_MOE), false, NULL },
	{ "mlp_only_layers", FB(F_QWEN2_MOE), false, NULL },
	{ "n_routed_experts", 0, false, NULL },
	{ "n_shared_experts", 0, false, NULL },
	{ "num_shared_experts", 0, false, NULL },
	{ "moe_layer_freq", 0, false, NULL },
	{ "first_k_dense_replace", 0, false, NULL },
	{ "head_dim", LLAMA_LIKE, false, NULL },
	{ "attention_bias", FB(F_LLAMA), true, NULL },
	{ "mlp_bias", FB(F_LLAMA), true, NULL },
	/* GPT-2 as a decoder of an encoder-decoder: a cross-attention and
	 * its layer norm in every block (modeling_gpt2.py GPT2Block) */
	{ "add_cross_attention", 0, true, "a cross-attention and its layer "
	  "norm in every block" },
};

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

/* Saturating: a count beyond 2^64 stays huge and is refused by the
 * caller's bound (1e15), never wrapped into a small one. */
static void count(enum family f, struct mc_model_shape *m)
{
	uint64_t H = m->hidden, I = m->intermediate, V = m->vocab;
	uint64_t L = m->layers, D = m->head_dim, KV = m->kv_heads;
	uint64_t A = (uint64_t)m->heads * D;	/* q's and o's width */
	uint64_t E = m->experts, Im = m->expert_intermediate;
	uint64_t Is = m->shared_intermediate, S = m->sparse_layers;
	uint64_t attn, dense, sparse, total, big;

	switch (f) {
	case F_LLAMA:
	case F_MISTRAL:
	case F_QWEN2:
	case F_MIXTRAL:
	case F_QWEN2_MOE:
		attn = add(add(mul(2 * H, A), mul(2 * H, KV * D)), 2 * H);
		if (f == F_QWEN2 || f == F_QWEN2_MOE ||
		    (f == F_LLAMA && m->attention_bias))
			attn = add(attn, A + 2 * KV * D);
		if (f == F_LLAMA && m->attention_bias)
			attn = add(attn, H);
		dense = mul(3 * H, I);
		if (f == F_LLAMA && m->mlp_bias)
			dense = add(dense, 2 * I + H);
		sparse = 0;
		if (f == F_MIXTRAL) {
			/* gate H*E + E experts of w1, w2, w3 */
			sparse = add(H * E, mul(E, mul(3 * H, I)));
		} else if (f == F_QWEN2_MOE) {
			/* gate, experts, shared expert and its gate */
			sparse = add(add(H * E, mul(E, mul(3 * H, Im))),
				     add(mul(3 * H, Is), H));
		}
		if (f != F_MIXTRAL && f != F_QWEN2_MOE)
			S = 0;
		total = add(add(mul(L, attn), mul(L - S, dense)),
			    mul(S, sparse));
		total = add(add(total, mul(V, H)), H);
		if (!m->tied)
			total = add(total, mul(V, H));
		break;
	case F_GPT2:
		total = 4 * H + (3 * H * H + 3 * H) + (H * H + H) +
			(H * I + I) + (I * H + H);
		total = add(add(mul(L, total), mul(V, H)),
			    add(mul(m->max_positions, H), 2 * H));
		break;
	case F_GPTJ:
	default:
		total = 2 * H + 4 * H * H + (H * I + I) + (I * H + H);
		total = add(add(mul(L, total), mul(V, H)), 2 * H);
		if (!m->tied)
			total = add(total, mul(V, H) + V);
		break;
	}
	m->params = total;
	big = max64(mul(V, H), max64(mul(H, I), mul(H, A ? A : H)));
	big = max64(big, max64(mul(H, Im), mul(H, Is)));
	m->largest_layer_params = big;
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
			      k->readers & (FB(F_MIXTRAL) | FB(F_QWEN2_MOE)) ||
			      !k->readers ? " (memcore counts a mixture of "
			      "experts as model_type mixtral or qwen2_moe)"
			      : "");
	}
	return 0;
}

/*
 * The MoE keys of mixtral and qwen2_moe, with their transformers
 * defaults (MixtralConfig, Qwen2MoeConfig), and how many layers are
 * sparse.
 */
static int moe_keys(json_t *o, const char *name, enum family f,
		    struct mc_model_shape *m, char *err, size_t errlen)
{
	uint32_t step = 1;
	json_t *only;
	bool *dense = NULL;

	if (f == F_MIXTRAL) {
		if (get_u32(o, name, "num_local_experts", NULL, 8,
			    &m->experts, err, errlen))
			return -1;
		m->expert_intermediate = m->intermediate;
		m->sparse_layers = m->layers;
	} else {
		if (get_u32(o, name, "num_experts", NULL, 60, &m->experts,
			    err, errlen) ||
		    get_u32(o, name, "moe_intermediate_size", NULL, 1408,
			    &m->expert_intermediate, err, errlen) ||
		    get_u32(o, name, "shared_expert_intermediate_size", NULL,
			    5632, &m->shared_intermediate, err, errlen) ||
		    get_u32(o, name, "decoder_sparse_step", NULL, 1, &step,
			    err, errlen))
			return -1;
	}
	if (m->experts > 4096 || m->expert_intermediate > (1u << 22) ||
	    m->shared_intermediate > (1u << 22))
		return mc_err(err, errlen, "%s: %u experts of intermediate "
			      "size %u: beyond any model memcore sizes", name,
			      m->experts, m->expert_intermediate);
	if (f == F_MIXTRAL)
		return 0;
	only = json_object_get(o, "mlp_only_layers");
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
	/* Qwen2MoeDecoderLayer: sparse when not in mlp_only_layers and
	 * (layer_idx + 1) % decoder_sparse_step == 0. */
	m->sparse_layers = 0;
	for (uint32_t i = 0; i < m->layers; i++)
		if (!dense[i] && (i + 1) % step == 0)
			m->sparse_layers++;
	free(dense);
	return 0;
}

/* model_type: one of the families memcore sizes, into *f and *type
 * (and m->model_type). */
static int model_family(json_t *o, const char *name,
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
	for (i = 0; mc_hf_model_types[i]; i++)
		if (!strcmp(*type, mc_hf_model_types[i]))
			break;
	if (!mc_hf_model_types[i]) {
		char q[40 * 4 + 4];

		return mc_err(err, errlen, "%s: model_type \"%s\" is not one "
			      "memcore sizes (llama, mistral, qwen2, gpt2, "
			      "gptj, mixtral, qwen2_moe): give --model-params "
			      "instead", name,
			      mc_escape(*type, 40, q, sizeof(q)));
	}
	*f = (enum family)i;
	snprintf(m->model_type, sizeof(m->model_type), "%s", *type);
	return 0;
}

/* GPT-2 and GPT-J's names of the shape's keys (GPT2Config,
 * GPTJConfig). */
static int gpt_keys(json_t *o, const char *name, struct mc_model_shape *m,
		    char *err, size_t errlen)
{
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
	m->kv_heads = m->heads;
	return 0;
}

/* The Llama family's keys (LlamaConfig and those that follow it:
 * mistral, qwen2, mixtral, qwen2_moe). */
static int llama_keys(json_t *o, const char *name, struct mc_model_shape *m,
		      char *err, size_t errlen)
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
	if (get_bool(o, name, "attention_bias", false, &m->attention_bias,
		     err, errlen) ||
	    get_bool(o, name, "mlp_bias", false, &m->mlp_bias, err, errlen))
		return -1;
	/* head_dim 0: hidden / heads, checked by shape_sane. */
	if (json_object_get(o, "head_dim") &&
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
		return;
	d = json_string_value(dt);
	if (!strcmp(d, "float32"))
		m->dtype_bytes = 4;
	else if (!strcmp(d, "bfloat16") || !strcmp(d, "float16"))
		m->dtype_bytes = 2;
}

int mc_hfconfig_parse(const char *text, size_t len, const char *name,
		      struct mc_model_shape *m, char *err, size_t errlen)
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
	if (model_family(o, name, m, &f, &type, err, errlen) ||
	    foreign_keys(o, name, f, type, err, errlen))
		goto out;
	gpt = f == F_GPT2 || f == F_GPTJ;
	if (gpt ? gpt_keys(o, name, m, err, errlen)
		: llama_keys(o, name, m, err, errlen))
		goto out;
	/* GPT-2 always ties lm_head to wte; the others default untied. */
	if (get_bool(o, name, "tie_word_embeddings", f == F_GPT2, &m->tied,
		     err, errlen) ||
	    shape_sane(name, m, gpt, err, errlen))
		goto out;
	if ((f == F_MIXTRAL || f == F_QWEN2_MOE) &&
	    moe_keys(o, name, f, m, err, errlen))
		goto out;
	dtype_key(o, m);
	count(f, m);
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
