/*
 * mc_trainer.c - Accelerate configs, torchtune recipes and PEFT adapter
 * configs into sizing facts (see mc_trainer.h for the keys and sources).
 */
#include "mc_trainer.h"

#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "mc_jsonfile.h"
#include "mc_parse.h"
#include "mc_util.h"
#include "mc_yamlfile.h"

/* The load and save words of policy/mc_terms.h, by value. */
enum { LOAD_PER_RANK = 0, LOAD_RANK0 = 1, LOAD_META = 2 };
enum { SAVE_NONE = 0, SAVE_RANK0 = 1 };

/* A job file's text, YAML or JSON (JSON is YAML too, but jansson's
 * messages for a JSON file are the better ones). */
static json_t *load_tree(const char *text, size_t len, const char *name,
			 char *err, size_t errlen)
{
	json_t *o;
	size_t i = 0;

	while (i < len && strchr(" \t\r\n", text[i]))
		i++;
	if (i < len && text[i] == '{')
		o = mc_jsonfile_parse(text, len, name, true, err, errlen);
	else
		o = mc_yamlfile_parse(text, len, name, err, errlen);
	if (o && !json_is_object(o)) {
		mc_err(err, errlen, "%s: expected a mapping of keys", name);
		json_decref(o);
		return NULL;
	}
	return o;
}

/* A boolean at o[key] (absent or null: *out untouched, 0). */
static int get_bool(json_t *o, const char *name, const char *path,
		    const char *key, bool *out, bool *given, char *err,
		    size_t errlen)
{
	json_t *v = o ? json_object_get(o, key) : NULL;

	if (given)
		*given = false;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_boolean(v))
		return mc_err(err, errlen, "%s: %s%s: expected true or false",
			      name, path, key);
	*out = json_is_true(v);
	if (given)
		*given = true;
	return 0;
}

/* A word of words[] at o[key] (a string; an integer n picks words[n -
 * base] when base > 0); -1 absent. */
static int get_word(json_t *o, const char *name, const char *path,
		    const char *key, const char *const *words, int base,
		    const char *expected, int *out, char *err, size_t errlen)
{
	json_t *v = o ? json_object_get(o, key) : NULL;
	int n = 0;

	*out = -1;
	if (!v || json_is_null(v))
		return 0;
	while (words[n])
		n++;
	if (base && json_is_integer(v) && json_integer_value(v) >= base &&
	    json_integer_value(v) < base + n) {
		*out = (int)(json_integer_value(v) - base);
		return 0;
	}
	if (json_is_string(v))
		for (int i = 0; i < n; i++)
			if (!strcasecmp(json_string_value(v), words[i])) {
				*out = i;
				return 0;
			}
	if (json_is_string(v)) {
		char q[64];

		return mc_err(err, errlen, "%s: %s%s: expected %s, got \"%s\"",
			      name, path, key, expected,
			      mc_escape(json_string_value(v), 32, q,
					sizeof(q)));
	}
	return mc_err(err, errlen, "%s: %s%s: expected %s", name, path, key,
		      expected);
}

static const char *const device_words[] = { "none", "cpu", "nvme", NULL };

/* Accelerate's DeepSpeed plugin keys (deepspeed_config:). */
static int accel_deepspeed(json_t *dc, const char *name,
			   struct mc_trainer_facts *t, char *err,
			   size_t errlen)
{
	static const char *const stages[] = { "0", "1", "2", "3", NULL };
	static const char *const plugin_keys[] = { "zero_stage",
		"offload_optimizer_device", "offload_param_device",
		"zero3_init_flag", "zero3_save_16bit_model", NULL };
	const char *P = "deepspeed_config.";
	json_t *f = json_object_get(dc, "deepspeed_config_file");
	int stage = -1, oo, op;
	bool b, given;

	if (f && !json_is_null(f)) {
		if (!json_is_string(f) || !*json_string_value(f) ||
		    strlen(json_string_value(f)) >= sizeof(t->ds_file))
			return mc_err(err, errlen, "%s: %sdeepspeed_config_file:"
				      " expected a path", name, P);
		/* DeepSpeedPlugin.__post_init__ refuses the plugin's keys
		 * beside a config file ("Please specify them in the
		 * DeepSpeed config file"). */
		for (int i = 0; plugin_keys[i]; i++)
			if (json_object_get(dc, plugin_keys[i]))
				return mc_err(err, errlen, "%s: %s"
					      "deepspeed_config_file beside %s:"
					      " Accelerate refuses both: keep "
					      "one", name, P, plugin_keys[i]);
		snprintf(t->ds_file, sizeof(t->ds_file), "%s",
			 json_string_value(f));
		return 0;
	}
	memset(&t->ds, 0, sizeof(t->ds));
	t->ds.optimizer_buffer_count = 4;
	t->ds.param_buffer_count = 5;
	t->ds.param_buffer_size = 100000000;
	if (json_is_integer(json_object_get(dc, "zero_stage")) &&
	    json_integer_value(json_object_get(dc, "zero_stage")) >= 0 &&
	    json_integer_value(json_object_get(dc, "zero_stage")) <= 3)
		stage = (int)json_integer_value(json_object_get(dc,
								"zero_stage"));
	else if (get_word(dc, name, P, "zero_stage", stages, 0,
			  "0, 1, 2 or 3", &stage, err, errlen))
		return -1;
	if (get_word(dc, name, P, "offload_optimizer_device", device_words, 0,
		     "none, cpu or nvme", &oo, err, errlen) ||
	    get_word(dc, name, P, "offload_param_device", device_words, 0,
		     "none, cpu or nvme", &op, err, errlen))
		return -1;
	t->ds.has_stage = stage >= 0;
	t->ds.stage = stage >= 0 ? (uint32_t)stage : 0;
	t->ds.offload_optimizer = oo > 0 ? (enum mc_ds_device)oo : MC_DS_NONE;
	t->ds.offload_param = op > 0 ? (enum mc_ds_device)op : MC_DS_NONE;
	if (get_bool(dc, name, P, "zero3_init_flag", &b, &given, err, errlen))
		return -1;
	if (given)
		t->zero_init = b;
	b = false;
	if (get_bool(dc, name, P, "zero3_save_16bit_model", &b, NULL, err,
		     errlen))
		return -1;
	t->ds.gather_16bit_on_save = b;
	t->ds.dtype_bytes = t->dtype_bytes ? t->dtype_bytes : 4;
	t->has_ds = true;
	return 0;
}

/* Accelerate's FSDP plugin keys (fsdp_config:). */
static int accel_fsdp(json_t *fc, const char *name,
		      struct mc_trainer_facts *t, char *err, size_t errlen)
{
	/* torch.distributed.fsdp.ShardingStrategy, in its order (1..5). */
	static const char *const shards[] = { "FULL_SHARD", "SHARD_GRAD_OP",
		"NO_SHARD", "HYBRID_SHARD", "_HYBRID_SHARD_ZERO2", NULL };
	static const char *const dicts[] = { "FULL_STATE_DICT",
		"LOCAL_STATE_DICT", "SHARDED_STATE_DICT", NULL };
	const char *P = "fsdp_config.";
	bool efficient = false, sync = false, given_sync;
	int s, d;

	t->fsdp = true;
	if (get_bool(fc, name, P, "fsdp_offload_params", &t->fsdp_offload,
		     NULL, err, errlen) ||
	    get_word(fc, name, P, "fsdp_sharding_strategy", shards, 1,
		     "FULL_SHARD, SHARD_GRAD_OP, NO_SHARD, HYBRID_SHARD or "
		     "_HYBRID_SHARD_ZERO2", &s, err, errlen) ||
	    get_word(fc, name, P, "fsdp_state_dict_type", dicts, 0,
		     "FULL_STATE_DICT, LOCAL_STATE_DICT or SHARDED_STATE_DICT",
		     &d, err, errlen) ||
	    get_bool(fc, name, P, "fsdp_cpu_ram_efficient_loading", &efficient,
		     NULL, err, errlen) ||
	    get_bool(fc, name, P, "fsdp_sync_module_states", &sync, &given_sync,
		     err, errlen))
		return -1;
	t->shard = s == 2 ? MC_SHARD_NONE : s >= 3 ? MC_SHARD_NODE
						     : MC_SHARD_JOB;
	if (d >= 0)
		t->save = d == 0 ? SAVE_RANK0 : SAVE_NONE;
	if (efficient && given_sync && !sync)
		return mc_err(err, errlen, "%s: %sfsdp_cpu_ram_efficient_loading "
			      "needs fsdp_sync_module_states: true (Accelerate "
			      "refuses it without)", name, P);
	t->load = efficient ? LOAD_RANK0 : LOAD_PER_RANK;
	return 0;
}

int mc_accelerate_parse(const char *text, size_t len, const char *name,
			struct mc_trainer_facts *t, char *err, size_t errlen)
{
	static const char *const mp_words[] = { "no", "fp16", "bf16", "fp8",
						NULL };
	static const char *const types[] = { "NO", "MULTI_GPU", "DEEPSPEED",
		"FSDP", "MULTI_CPU", "MULTI_NPU", "MULTI_XPU", "MULTI_MLU",
		"MULTI_SDAA", "MULTI_MUSA", "MULTI_HPU", "XLA", "MEGATRON_LM",
		"TP", NULL };
	json_t *o = load_tree(text, len, name, err, errlen), *sub;
	int type, mp = -1, rc = -1;

	memset(t, 0, sizeof(*t));
	t->zero_init = t->load = t->save = -1;
	if (!o)
		return -1;
	if (get_word(o, name, "", "distributed_type", types, 0,
		     "an Accelerate DistributedType (NO, MULTI_GPU, DEEPSPEED, "
		     "FSDP, ...)", &type, err, errlen))
		goto out;
	/* mixed_precision: no is YAML 1.1's false unless quoted. */
	if (json_is_false(json_object_get(o, "mixed_precision")))
		mp = 0;
	else if (get_word(o, name, "", "mixed_precision", mp_words, 0,
			  "no, fp16, bf16 or fp8", &mp, err, errlen))
		goto out;
	if (mp > 0)
		t->dtype_bytes = 2;
	sub = json_object_get(o, "deepspeed_config");
	if (type == 2 && sub && !json_is_object(sub)) {
		mc_err(err, errlen, "%s: deepspeed_config: expected a mapping",
		       name);
		goto out;
	}
	if (type == 2 && accel_deepspeed(sub, name, t, err, errlen))
		goto out;
	sub = json_object_get(o, "fsdp_config");
	if (type == 3 && sub && !json_is_object(sub)) {
		mc_err(err, errlen, "%s: fsdp_config: expected a mapping",
		       name);
		goto out;
	}
	if (type == 3 && accel_fsdp(sub, name, t, err, errlen))
		goto out;
	/* mixed_precision is the compute dtype (DeepSpeed's bf16/fp16
	 * block, FSDP's MixedPrecision): the model itself is built as
	 * from_pretrained builds it, so it says no model dtype. */
	t->dtype_bytes = 0;
	rc = 0;
out:
	json_decref(o);
	return rc;
}

/* torchtune's LoRA builder keys under model:. */
static int tune_lora(json_t *m, const char *name, struct mc_trainer_facts *t,
		     char *err, size_t errlen)
{
	static const struct { const char *w; uint32_t bit; } attn[] = {
		{ "q_proj", MC_LORA_Q }, { "k_proj", MC_LORA_K },
		{ "v_proj", MC_LORA_V }, { "output_proj", MC_LORA_O },
	};
	json_t *r = json_object_get(m, "lora_rank");
	json_t *mods = json_object_get(m, "lora_attn_modules"), *v;
	bool mlp = false, out = false;
	size_t i;

	if (!json_is_integer(r) || json_integer_value(r) < 1 ||
	    json_integer_value(r) > 65536)
		return mc_err(err, errlen, "%s: model.lora_rank: expected an "
			      "integer from 1 to 65536", name);
	t->lora_rank = (uint32_t)json_integer_value(r);
	if (mods && !json_is_array(mods))
		return mc_err(err, errlen, "%s: model.lora_attn_modules: "
			      "expected a list", name);
	json_array_foreach(mods, i, v) {
		size_t k;

		for (k = 0; k < sizeof(attn) / sizeof(attn[0]); k++)
			if (json_is_string(v) &&
			    !strcmp(json_string_value(v), attn[k].w))
				break;
		if (k == sizeof(attn) / sizeof(attn[0]))
			return mc_err(err, errlen, "%s: model.lora_attn_modules:"
				      " expected q_proj, k_proj, v_proj or "
				      "output_proj", name);
		t->lora_targets |= attn[k].bit;
	}
	if (get_bool(m, name, "model.", "apply_lora_to_mlp", &mlp, NULL, err,
		     errlen) ||
	    get_bool(m, name, "model.", "apply_lora_to_output", &out, NULL,
		     err, errlen))
		return -1;
	if (mlp)
		t->lora_targets |= MC_LORA_GATE | MC_LORA_UP | MC_LORA_DOWN;
	if (out)
		t->lora_targets |= MC_LORA_HEAD;
	return 0;
}

int mc_torchtune_parse(const char *text, size_t len, const char *name,
		       struct mc_trainer_facts *t, char *err, size_t errlen)
{
	/* torchtune's training.PRECISION_STR_TO_DTYPE. */
	static const char *const dtypes[] = { "fp32", "bf16", "fp16", "fp64",
					      NULL };
	json_t *o = load_tree(text, len, name, err, errlen), *m, *c;
	bool adapter_only = false;
	int dt, rc = -1;

	memset(t, 0, sizeof(*t));
	t->zero_init = t->load = t->save = -1;
	if (!o)
		return -1;
	m = json_object_get(o, "model");
	c = json_object_get(m, "_component_");
	if (!json_is_object(m) || !json_is_string(c)) {
		mc_err(err, errlen, "%s: model._component_: expected the "
		       "model builder (torchtune.models....)", name);
		goto out;
	}
	if (get_bool(o, name, "", "fsdp_cpu_offload", &t->fsdp_offload, NULL,
		     err, errlen) ||
	    get_bool(o, name, "", "enable_activation_offloading",
		     &t->act_offload, NULL, err, errlen) ||
	    get_bool(o, name, "", "save_adapter_weights_only", &adapter_only,
		     NULL, err, errlen) ||
	    get_word(o, name, "", "dtype", dtypes, 0, "fp32, bf16 or fp16",
		     &dt, err, errlen))
		goto out;
	/* Recipes default to bf16 (full_finetune_distributed.py:
	 * training.get_dtype(cfg.dtype), the configs' dtype: bf16). */
	t->dtype_bytes = dt == 0 ? 4 : dt == 3 ? 8 : 2;
	t->fsdp = true;
	t->shard = MC_SHARD_JOB;
	/* The model is built on the meta device and the checkpoint read
	 * through mmap (full_finetune_distributed.py _setup_model: "we
	 * initialize the model on meta device"; _utils.py safe_torch_load
	 * mmap=True, safe_open): page cache, no copy of each rank's own. */
	t->load = LOAD_META;
	/* A lora_ builder: torchtune.models.llama3_1.lora_llama3_1_70b. */
	if (strstr(json_string_value(c), ".lora_") ||
	    strstr(json_string_value(c), ".qlora_")) {
		if (tune_lora(m, name, t, err, errlen))
			goto out;
	}
	/* The checkpointer's save gathers the state dict on rank 0 in host
	 * RAM; a LoRA run saving adapters only gathers just those. */
	t->save = t->lora_rank && adapter_only ? SAVE_NONE : SAVE_RANK0;
	rc = 0;
out:
	json_decref(o);
	return rc;
}

int mc_peft_parse(const char *text, size_t len, const char *name,
		  struct mc_trainer_facts *t, char *err, size_t errlen)
{
	/* PEFT's module names for Llama-style models, and their bits. */
	static const struct { const char *w; uint32_t bit; } mods[] = {
		{ "q_proj", MC_LORA_Q }, { "k_proj", MC_LORA_K },
		{ "v_proj", MC_LORA_V }, { "o_proj", MC_LORA_O },
		{ "gate_proj", MC_LORA_GATE }, { "up_proj", MC_LORA_UP },
		{ "down_proj", MC_LORA_DOWN }, { "lm_head", MC_LORA_HEAD },
	};
	json_t *o = mc_jsonfile_parse(text, len, name, false, err, errlen);
	json_t *pt, *r, *tm, *v;
	size_t i;
	int rc = -1;

	memset(t, 0, sizeof(*t));
	t->zero_init = t->load = t->save = -1;
	if (!o)
		return -1;
	pt = json_object_get(o, "peft_type");
	r = json_object_get(o, "r");
	tm = json_object_get(o, "target_modules");
	if (!json_is_string(pt) || strcmp(json_string_value(pt), "LORA")) {
		mc_err(err, errlen, "%s: peft_type: expected \"LORA\"", name);
		goto out;
	}
	if (!json_is_integer(r) || json_integer_value(r) < 1 ||
	    json_integer_value(r) > 65536) {
		mc_err(err, errlen, "%s: r: expected an integer from 1 to "
		       "65536", name);
		goto out;
	}
	t->lora_rank = (uint32_t)json_integer_value(r);
	/* "all-linear": every linear layer but the output one (PEFT's
	 * tuners_utils.py _maybe_include_all_linear_layers). */
	if (json_is_string(tm) && !strcmp(json_string_value(tm), "all-linear")) {
		t->lora_targets = MC_LORA_ALL & ~MC_LORA_HEAD;
		rc = 0;
		goto out;
	}
	if (!json_is_array(tm) || !json_array_size(tm)) {
		mc_err(err, errlen, "%s: target_modules: expected a list of "
		       "module names or \"all-linear\" (a regular expression "
		       "is not read: give --trainable-params)", name);
		goto out;
	}
	json_array_foreach(tm, i, v) {
		size_t k;
		char q[64];

		for (k = 0; k < sizeof(mods) / sizeof(mods[0]); k++)
			if (json_is_string(v) &&
			    !strcmp(json_string_value(v), mods[k].w))
				break;
		if (k < sizeof(mods) / sizeof(mods[0])) {
			t->lora_targets |= mods[k].bit;
			continue;
		}
		mc_err(err, errlen, "%s: target_modules: \"%s\" is not a "
		       "module memcore counts (q_proj, k_proj, v_proj, o_proj, "
		       "gate_proj, up_proj, down_proj, lm_head): give "
		       "--trainable-params", name,
		       json_is_string(v) ? mc_escape(json_string_value(v), 32,
						     q, sizeof(q)) : "?");
		goto out;
	}
	rc = 0;
out:
	json_decref(o);
	return rc;
}

uint64_t mc_lora_params(const struct mc_model_shape *m, uint32_t r,
			uint32_t targets)
{
	uint64_t H = m->hidden, I = m->intermediate;
	uint64_t hd = m->head_dim ? m->head_dim
		      : m->heads ? m->hidden / m->heads : 0;
	uint64_t q = (uint64_t)m->heads * hd;
	uint64_t kv = (uint64_t)(m->kv_heads ? m->kv_heads : m->heads) * hd;
	uint64_t per = 0, all;

	if (m->experts && (targets & (MC_LORA_GATE | MC_LORA_UP |
				      MC_LORA_DOWN)))
		return 0;
	if (targets & MC_LORA_Q)
		per += H + q;
	if (targets & MC_LORA_K)
		per += H + kv;
	if (targets & MC_LORA_V)
		per += H + kv;
	if (targets & MC_LORA_O)
		per += q + H;
	if (targets & MC_LORA_GATE)
		per += H + I;
	if (targets & MC_LORA_UP)
		per += H + I;
	if (targets & MC_LORA_DOWN)
		per += I + H;
	all = mc_mul_sat64(mc_mul_sat64(per, r), m->layers);
	if (targets & MC_LORA_HEAD)
		all = mc_add_sat64(all, mc_mul_sat64(r, H + m->vocab));
	return all;
}
