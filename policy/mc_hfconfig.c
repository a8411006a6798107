/*
 * mc_hfconfig.c - a Hugging Face config.json into parameters and layer
 * sizes (see mc_hfconfig.h for the formulas and their sources).
 */
#include "mc_hfconfig.h"

#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "mc_jsonfile.h"
#include "mc_parse.h"
#include "mc_util.h"

const char *const mc_hf_model_types[] = {
	"llama", "mistral", "qwen2", "gpt2", "gptj", NULL
};

enum family { F_LLAMA, F_MISTRAL, F_QWEN2, F_GPT2, F_GPTJ };

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

/* Every figure below 2^32 and a count of parameters below 2^64: products
 * of two 32-bit values fit, and the sums stay far below (the largest
 * model a config.json can describe is checked by the caller's bounds). */
static void count(enum family f, struct mc_model_shape *m)
{
	uint64_t H = m->hidden, I = m->intermediate, V = m->vocab;
	uint64_t L = m->layers, D = H / m->heads, KV = m->kv_heads;
	uint64_t layer, total;

	switch (f) {
	case F_LLAMA:
	case F_MISTRAL:
	case F_QWEN2:
		layer = 2 * H * H + 2 * H * KV * D + 3 * H * I + 2 * H;
		if (f == F_QWEN2)
			layer += H + 2 * KV * D;
		total = V * H + L * layer + H + (m->tied ? 0 : V * H);
		break;
	case F_GPT2:
		layer = 4 * H + (3 * H * H + 3 * H) + (H * H + H) +
			(H * I + I) + (I * H + H);
		total = V * H + (uint64_t)m->max_positions * H + L * layer +
			2 * H;
		break;
	case F_GPTJ:
	default:
		layer = 2 * H + 4 * H * H + (H * I + I) + (I * H + H);
		total = V * H + L * layer + 2 * H + (m->tied ? 0 : V * H + V);
		break;
	}
	m->params = total;
	m->largest_layer_params = max64(V * H, max64(H * I, H * H));
}

int mc_hfconfig_parse(const char *text, size_t len, const char *name,
		      struct mc_model_shape *m, char *err, size_t errlen)
{
	json_t *o, *t, *dt;
	const char *type;
	enum family f;
	int rc = -1, i;
	bool gpt;

	memset(m, 0, sizeof(*m));
	o = mc_jsonfile_parse(text, len, name, err, errlen);
	if (!o)
		return -1;
	if (!json_is_object(o)) {
		mc_err(err, errlen, "%s: expected a JSON object (a Hugging "
		       "Face config.json)", name);
		goto out;
	}
	t = json_object_get(o, "model_type");
	if (!json_is_string(t)) {
		mc_err(err, errlen, "%s: model_type: %s (expected a string "
		       "such as \"llama\")", name, t ? "not a string"
		       : "missing");
		goto out;
	}
	type = json_string_value(t);
	for (i = 0; mc_hf_model_types[i]; i++)
		if (!strcmp(type, mc_hf_model_types[i]))
			break;
	if (!mc_hf_model_types[i]) {
		char q[40 * 4 + 4];

		mc_err(err, errlen, "%s: model_type \"%s\" is not one "
		       "memcore sizes (llama, mistral, qwen2, gpt2, gptj): "
		       "give --model-params instead", name,
		       mc_escape(type, 40, q, sizeof(q)));
		goto out;
	}
	f = (enum family)i;
	snprintf(m->model_type, sizeof(m->model_type), "%s", type);
	gpt = f == F_GPT2 || f == F_GPTJ;
	if (gpt) {
		if (get_u32(o, name, "n_embd", NULL, 0, &m->hidden, err,
			    errlen) ||
		    get_u32(o, name, "n_layer", NULL, 0, &m->layers, err,
			    errlen) ||
		    get_u32(o, name, "n_head", NULL, 0, &m->heads, err,
			    errlen) ||
		    get_u32(o, name, "n_positions", NULL, 0,
			    &m->max_positions, err, errlen) ||
		    get_u32(o, name, "vocab_size", NULL, 0, &m->vocab, err,
			    errlen))
			goto out;
		/* n_inner null: 4 * n_embd (GPT2Config, GPTJConfig). */
		if (m->hidden > UINT32_MAX / 4) {
			mc_err(err, errlen, "%s: n_embd: too large", name);
			goto out;
		}
		if (get_u32(o, name, "n_inner", NULL, 4 * m->hidden,
			    &m->intermediate, err, errlen))
			goto out;
		m->kv_heads = m->heads;
	} else {
		if (get_u32(o, name, "hidden_size", NULL, 0, &m->hidden, err,
			    errlen) ||
		    get_u32(o, name, "num_hidden_layers", NULL, 0, &m->layers,
			    err, errlen) ||
		    get_u32(o, name, "intermediate_size", NULL, 0,
			    &m->intermediate, err, errlen) ||
		    get_u32(o, name, "num_attention_heads", NULL, 0, &m->heads,
			    err, errlen) ||
		    get_u32(o, name, "vocab_size", NULL, 0, &m->vocab, err,
			    errlen) ||
		    get_u32(o, name, "max_position_embeddings", NULL, 2048,
			    &m->max_positions, err, errlen))
			goto out;
		/* No num_key_value_heads: multi-head attention (one KV head
		 * per head), as LlamaConfig defaults it. */
		if (get_u32(o, name, "num_key_value_heads", NULL, m->heads,
			    &m->kv_heads, err, errlen))
			goto out;
	}
	/* GPT-2 always ties lm_head to wte; the others default untied. */
	if (get_bool(o, name, "tie_word_embeddings", f == F_GPT2, &m->tied,
		     err, errlen))
		goto out;
	if (m->hidden % m->heads) {
		mc_err(err, errlen, "%s: hidden size %u is not a multiple of "
		       "%s %u", name, m->hidden, gpt ? "n_head"
		       : "num_attention_heads", m->heads);
		goto out;
	}
	if (m->kv_heads > m->heads || m->heads % m->kv_heads) {
		mc_err(err, errlen, "%s: num_key_value_heads: expected a "
		       "divisor of num_attention_heads (%u), got %u", name,
		       m->heads, m->kv_heads);
		goto out;
	}
	/* Far beyond any real model (2^32 layers of 2^32 hidden would
	 * overflow): 1M hidden, 1M intermediate, 100k layers, 16M vocab. */
	if (m->hidden > (1u << 20) || m->intermediate > (1u << 22) ||
	    m->layers > 100000 || m->vocab > (1u << 24) ||
	    m->max_positions > (1u << 24)) {
		mc_err(err, errlen, "%s: hidden %u, intermediate %u, layers "
		       "%u, vocab %u: beyond any model memcore sizes", name,
		       m->hidden, m->intermediate, m->layers, m->vocab);
		goto out;
	}
	dt = json_object_get(o, "torch_dtype");
	if (json_is_string(dt)) {
		const char *d = json_string_value(dt);

		if (!strcmp(d, "float32"))
			m->dtype_bytes = 4;
		else if (!strcmp(d, "bfloat16") || !strcmp(d, "float16"))
			m->dtype_bytes = 2;
	}
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
