/*
 * test_trainer.c - the files users launch training with, read as their
 * trainers read them (tests/data/trainers: axolotl's, LLaMA-Factory's,
 * alignment-handbook's and torchtune's published files, sources in its
 * README.md), through the whole path a job takes: read as the user
 * (mc_jobfiles_load), carried in MEMCORE_JOB_FILES (format, parse),
 * applied to the request, and each host-RAM figure checked against its
 * formula computed here from its source, not from memcore's code.
 * Also: DeepSpeed's every spelling (zero/config.py), a file of the wrong
 * kind, the YAML reader, and LoRA's adapter count.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <jansson.h>

#include "mc_dsconfig.h"
#include "mc_jobfiles.h"
#include "mc_jsonfile.h"
#include "mc_rules.h"
#include "mc_trainer.h"
#include "mc_yamlfile.h"

static char err[MC_ERR_MAX];

#define GiB (1024.0 * 1024 * 1024)

/* A fixture's path under tests/data/DIR (two at a time: the call's
 * arguments). */
static const char *data_path(const char *dir, const char *file)
{
	static char path[2][4096];
	static int k;
	const char *top = getenv("MC_TOP");

	k ^= 1;
	snprintf(path[k], sizeof(path[k]), "%s/tests/data/%s/%s",
		 top ? top : ".", dir, file);
	return path[k];
}

#define fixture(f) data_path("trainers", f)
#define model_fixture(f) data_path("models", f)

static void opt(struct mc_opts *o, enum mc_opt_id id, const char *v)
{
	if (mc_opts_set(o, id, v, false, err, sizeof(err)) < 0)
		fail_msg("%s", err);
}

/*
 * The job's path: the files read as the user, the figures through
 * MEMCORE_JOB_FILES to slurmstepd, applied to an 8-GPU step on one node,
 * and its verdict against a node large enough that only the terms count.
 */
static void judge(const struct mc_opts *o, struct mc_request *r,
		  struct mc_verdict *v)
{
	struct mc_jobfiles f, g;
	struct mc_policy p;
	struct mc_node node = { .ram_bytes = 1ULL << 44, .cores = 256,
				.threads_per_core = 1, .gpus = 8 };
	struct mc_alloc a = { .mem_bytes = 1ULL << 44, .cores = 256 };
	char buf[1024];

	mc_policy_defaults(&p);
	if (mc_jobfiles_load(o, &f, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	mc_jobfiles_format(&f, buf, sizeof(buf));
	if (mc_jobfiles_parse(buf, &g, err, sizeof(err)) < 0)
		fail_msg("%s: %s", buf, err);
	memset(r, 0, sizeof(*r));
	r->gpus = 8;
	r->nodes = 1;
	r->gpu_memory_bytes = 80ULL << 30;
	mc_opts_request(o, &p, r);
	mc_jobfiles_apply(&g, o, &p, r);
	assert_int_equal(mc_request_check(&p, r, err, sizeof(err)), 0);
	mc_verdict_compute(&p, r, &node, &a, v);
}

/* Whether the notes hold s. */
static bool noted(const struct mc_request *r, const char *s)
{
	for (uint32_t i = 0; i < r->use.n_notes; i++)
		if (strstr(r->use.notes[i], s))
			return true;
	return false;
}

/* DeepSpeed's defaults (policy): OffloadBufferFactor 1.5 is DeepSpeed's
 * additional_buffer_factor; 8 GPUs, 1 node. */
static const double f15 = 1.5;

/*
 * axolotl's zero3_bf16.json writes the gather without its stage3_ prefix,
 * the field's own name (zero/config.py gather_16bit_weights_on_model_save,
 * alias stage3_...): DeepSpeedEngine._zero3_consolidated_16bit_state_dict
 * then gathers 2 bytes a parameter on rank 0. Main dropped it (no term).
 */
static void test_axolotl_gather_unprefixed(void **state)
{
	struct mc_opts o = { 0 };
	struct mc_request r;
	struct mc_verdict v;
	const uint64_t P = 32000000000ULL;

	(void)state;
	opt(&o, MC_OPT_DS_CONFIG, fixture("axolotl-zero3_bf16.json"));
	opt(&o, MC_OPT_PARAMS, "32B");
	judge(&o, &r, &v);
	assert_int_equal(r.zero_stage, 3);
	assert_true(r.use.save_16bit);
	assert_int_equal(v.ram_term_bytes[MC_TERM_SAVE], P * 2);
	/* The figure: 61 GiB for a 32B model (59.60 GiB exactly). */
	assert_true(v.ram_term_bytes[MC_TERM_SAVE] / GiB > 59.5 &&
		    v.ram_term_bytes[MC_TERM_SAVE] / GiB < 59.7);
}

/*
 * axolotl's zero3_bf16_cpuoffload_params.json: offload_param alone.
 * DeepSpeed (partition_parameters.py _partition_param) keeps each rank's
 * 16-bit partition on the CPU, P x 2 / G a rank, P x 2 / N on the node,
 * the buffer factor as the estimators apply it; the optimizer stays on
 * the GPUs, so no OffloadCoresPerGpu. Main sized it as the full offload
 * (18 bytes) with the CPU optimizer's cores.
 */
static void test_axolotl_params_only(void **state)
{
	struct mc_opts o = { 0 };
	struct mc_request r;
	struct mc_verdict v;
	const uint64_t P = 32000000000ULL;

	(void)state;
	opt(&o, MC_OPT_DS_CONFIG,
	    fixture("axolotl-zero3_bf16_cpuoffload_params.json"));
	opt(&o, MC_OPT_PARAMS, "32B");
	judge(&o, &r, &v);
	assert_int_equal(r.offload, MC_OFFLOAD_PARAMS);
	assert_int_equal(v.ram_zero_bytes, (uint64_t)((double)P * 2 * f15));
	/* 8 ranks x (2 workers + 1): the policy's defaults, no CPU Adam. */
	assert_int_equal(v.cores_needed, 8 * (2 + 1));
	assert_int_equal(v.ram_term_bytes[MC_TERM_SAVE], P * 2);

	/* The same file's _all sibling: both offloaded, 18 bytes. */
	memset(&o, 0, sizeof(o));
	opt(&o, MC_OPT_DS_CONFIG,
	    fixture("axolotl-zero3_bf16_cpuoffload_all.json"));
	opt(&o, MC_OPT_PARAMS, "32B");
	judge(&o, &r, &v);
	assert_int_equal(r.offload, MC_OFFLOAD_ALL);
	assert_int_equal(v.ram_zero_bytes, (uint64_t)((double)P * 18 * f15));
	assert_int_equal(v.cores_needed, 8 * (2 + 1 + 2));
}

/* LLaMA-Factory's ds_z3_offload_config.json: stage 3, both offloaded to
 * cpu, the prefixed gather, "auto" bf16/fp16 and batch sizes. */
static void test_llamafactory_z3_offload(void **state)
{
	struct mc_opts o = { 0 };
	struct mc_request r;
	struct mc_verdict v;
	const uint64_t P = 6738415616ULL;	/* Llama-2-7B */

	(void)state;
	opt(&o, MC_OPT_DS_CONFIG,
	    fixture("llamafactory-ds_z3_offload_config.json"));
	opt(&o, MC_OPT_MODEL_CONFIG, model_fixture("llama-2-7b-hf.config.json"));
	judge(&o, &r, &v);
	assert_int_equal(r.model_params, P);
	assert_int_equal(r.offload, MC_OFFLOAD_ALL);
	assert_int_equal(v.ram_zero_bytes, (uint64_t)((double)P * 18 * f15));
	assert_int_equal(v.ram_term_bytes[MC_TERM_SAVE], P * 2);
}

/*
 * alignment-handbook's recipes/accelerate_configs/zero3.yaml: Accelerate's
 * DeepSpeed plugin keys, zero_stage 3, no offload, zero3_init_flag (the
 * largest layer, L x 4 bytes x g x f: estimate_zero3_model_states_mem_needs
 * with zero_init), zero3_save_16bit_model (2P on rank 0).
 */
static void test_handbook_zero3_yaml(void **state)
{
	struct mc_opts o = { 0 };
	struct mc_request r;
	struct mc_verdict v;
	const uint64_t P = 6738415616ULL, L = 32000ULL * 4096;

	(void)state;
	opt(&o, MC_OPT_ACCEL_CONFIG, fixture("alignment-handbook-zero3.yaml"));
	opt(&o, MC_OPT_MODEL_CONFIG, model_fixture("llama-2-7b-hf.config.json"));
	opt(&o, MC_OPT_ZERO_INIT, "no");	/* the file says yes */
	judge(&o, &r, &v);
	/* the option wins: P x 4g x f */
	assert_int_equal(v.ram_zero_bytes, (uint64_t)((double)P * 4 * 8 * f15));
	memset(&o, 0, sizeof(o));
	opt(&o, MC_OPT_ACCEL_CONFIG, fixture("alignment-handbook-zero3.yaml"));
	opt(&o, MC_OPT_MODEL_CONFIG, model_fixture("llama-2-7b-hf.config.json"));
	judge(&o, &r, &v);
	assert_int_equal(r.zero_stage, 3);
	assert_int_equal(r.offload, MC_OFFLOAD_NONE);
	assert_int_equal(r.zero_init, MC_ZERO_INIT_YES);
	assert_int_equal(v.ram_zero_bytes, (uint64_t)((double)L * 4 * 8 * f15));
	assert_int_equal(v.ram_term_bytes[MC_TERM_SAVE], P * 2);
}

/*
 * alignment-handbook's fsdp.yaml: FSDP without offload, SHARDED_STATE_DICT
 * (no gathered save), fsdp_cpu_ram_efficient_loading with
 * sync_module_states (rank 0 alone builds the model: one fp32 copy, P x 4,
 * from_pretrained's default dtype).
 */
static void test_handbook_fsdp_yaml(void **state)
{
	struct mc_opts o = { 0 };
	struct mc_request r;
	struct mc_verdict v;
	const uint64_t P = 6738415616ULL;

	(void)state;
	opt(&o, MC_OPT_ACCEL_CONFIG, fixture("alignment-handbook-fsdp.yaml"));
	opt(&o, MC_OPT_MODEL_CONFIG, model_fixture("llama-2-7b-hf.config.json"));
	judge(&o, &r, &v);
	assert_int_equal(r.zero_stage, 0);
	assert_int_equal(r.use.load, MC_LOAD_RANK0);
	assert_int_equal(r.use.save, MC_SAVE_NONE);
	assert_false(r.use.fsdp_offload);
	assert_int_equal(v.ram_load_bytes, P * 4);
	assert_int_equal(v.ram_term_bytes[MC_TERM_SAVE], 0);
	assert_int_equal(v.ram_term_bytes[MC_TERM_FSDP_OFFLOAD], 0);
}

/*
 * torchtune's llama3_1/70B_full.yaml (fsdp_cpu_offload: True, dtype bf16,
 * "tested on 8 x A100"): FSDP CPU offload keeps the parameters (2 bytes),
 * their gradients (2) and AdamW's exp_avg and exp_avg_sq (2 + 2, zeros_like
 * the bf16 parameter) on the host: 8 bytes a parameter over the node. The
 * model: torchtune's llama3_1_70b builder, 70,553,706,496 parameters (the
 * Hub's safetensors total for meta-llama/Llama-3.1-70B). The issue's
 * "about 526 GiB"; main could only say DeepSpeed's 1774 GiB.
 */
static void test_torchtune_70b_full(void **state)
{
	struct mc_opts o = { 0 };
	struct mc_request r;
	struct mc_verdict v;
	const uint64_t P = 70553706496ULL;

	(void)state;
	opt(&o, MC_OPT_TUNE_CONFIG, fixture("torchtune-llama3_1-70B_full.yaml"));
	opt(&o, MC_OPT_PARAMS, "70553706496");
	judge(&o, &r, &v);
	assert_true(r.use.fsdp_offload);
	assert_int_equal(r.use.dtype_bytes, 2);
	assert_int_equal(v.ram_term_bytes[MC_TERM_FSDP_OFFLOAD],
			 P * 2 + P * 2 + P * 2 * 2);
	assert_true(v.ram_term_bytes[MC_TERM_FSDP_OFFLOAD] / GiB > 525.6 &&
		    v.ram_term_bytes[MC_TERM_FSDP_OFFLOAD] / GiB < 525.7);
	/* built on the meta device, the checkpoint mmap'd: no load copy;
	 * the full save gathered on rank 0 in bf16 */
	assert_int_equal(v.ram_load_bytes, 0);
	assert_int_equal(v.ram_term_bytes[MC_TERM_SAVE], P * 2);
	assert_true(noted(&r, "FSDP CPU offload"));
}

/*
 * LoRA's adapters as torchtune's LoRALinear and PEFT's lora.Linear build
 * them: lora_a in x r, lora_b r x out for each targeted projection. The
 * shape: torchtune/models/llama3_1/_model_builders.py llama3_1_70b
 * (embed_dim 8192, num_heads 64, num_kv_heads 8, intermediate_dim 28672,
 * num_layers 80, vocab 128256); the recipe 70B_lora.yaml: rank 16 on
 * q_proj, v_proj, output_proj and the MLP (w1, w2, w3).
 */
static void test_lora_count(void **state)
{
	struct mc_trainer_facts t;
	struct mc_model_shape m = { .layers = 80, .hidden = 8192,
		.intermediate = 28672, .vocab = 128256, .heads = 64,
		.kv_heads = 8, .head_dim = 128 };
	char *text;
	size_t len;
	const uint64_t r = 16, hd = 8192 / 64;
	/* in x r + r x out, module by module */
	uint64_t q = 8192 * r + r * (64 * hd);
	uint64_t vv = 8192 * r + r * (8 * hd);
	uint64_t out = (64 * hd) * r + r * 8192;
	uint64_t w1 = 8192 * r + r * 28672, w3 = w1;
	uint64_t w2 = 28672 * r + r * 8192;

	(void)state;
	assert_int_equal(mc_jsonfile_read(fixture("torchtune-llama3_1-70B_lora"
						  ".yaml"), "--torchtune-config",
					  &text, &len, err, sizeof(err)), 0);
	assert_int_equal(mc_torchtune_parse(text, len, "70B_lora.yaml", &t,
					    err, sizeof(err)), 0);
	free(text);
	assert_int_equal(t.lora_rank, 16);
	assert_int_equal(t.lora_targets, MC_LORA_Q | MC_LORA_V | MC_LORA_O |
			 MC_LORA_GATE | MC_LORA_UP | MC_LORA_DOWN);
	assert_false(t.fsdp_offload);
	assert_int_equal(t.save, MC_SAVE_NONE);	/* adapters only */
	assert_int_equal(mc_lora_params(&m, t.lora_rank, t.lora_targets),
			 80 * (q + vv + out + w1 + w2 + w3));
}

/*
 * LoRA in the terms: ZeRO-3 offload of both keeps the 16-bit parameters
 * (2P) and the optimizer state of the trainable ones only (16T); FSDP CPU
 * offload keeps d x P and 3d x T. PEFT's adapter_config.json as
 * LoraConfig.save_pretrained writes it (keys r, target_modules,
 * peft_type), on Llama-2-7B's config.json.
 */
static void test_lora_terms(void **state)
{
	static const char adapter[] = "{\"peft_type\": \"LORA\", \"r\": 8, "
		"\"lora_alpha\": 16, \"target_modules\": [\"q_proj\", "
		"\"v_proj\"], \"task_type\": \"CAUSAL_LM\"}";
	static const char gpt2[] = "{\"peft_type\": \"LORA\", \"r\": 8, "
		"\"target_modules\": [\"c_attn\"]}";
	const uint64_t P = 6738415616ULL;
	/* q: 4096 -> 4096, v: 4096 -> 4096 (Llama-2-7B: no GQA), 32 layers */
	const uint64_t T = 32ULL * 8 * ((4096 + 4096) + (4096 + 4096));
	struct mc_trainer_facts t;
	struct mc_policy p;
	struct mc_request r = { .gpus = 8, .nodes = 1, .model_params = P,
				.zero_stage = 3, .offload = MC_OFFLOAD_ALL,
				.zero_init = MC_ZERO_INIT_YES };
	struct mc_term_ctx c = { .gpus = 8, .nodes = 2, .params = P };
	struct mc_usage u = { .fsdp_offload = true, .dtype_bytes = 2,
			      .trainable_params = T };

	(void)state;
	mc_policy_defaults(&p);
	assert_int_equal(mc_peft_parse(adapter, sizeof(adapter) - 1, "a.json",
				       &t, err, sizeof(err)), 0);
	assert_int_equal(t.lora_rank, 8);
	assert_int_equal(t.lora_targets, MC_LORA_Q | MC_LORA_V);
	assert_int_equal(T, 4194304);
	r.use.trainable_params = T;
	assert_int_equal(mc_zero_ram_bytes(&p, &r),
			 (uint64_t)((double)(2 * P + 16 * T) * f15));
	assert_int_equal(mc_terms_fsdp_offload_bytes(&u, &c),
			 (2 * P + 6 * T) / 2);
	/* A module memcore does not count is named, not dropped. */
	assert_int_equal(mc_peft_parse(gpt2, strlen(gpt2), "a.json", &t, err,
				       sizeof(err)), -1);
	assert_non_null(strstr(err, "a.json: target_modules: \"c_attn\" is "
			       "not a module memcore counts"));
}

/* DeepSpeed's other spellings, as zero/config.py accepts or refuses them:
 * never dropped. */
static void test_deepspeed_spellings(void **state)
{
	struct mc_ds_facts d;
	struct {
		const char *zero;
		int rc;
		const char *msg;
	} t[] = {
		{ "\"stage3_gather_fp16_weights_on_model_save\": true", 0, NULL },
		{ "\"gather_16bit_weights_on_model_save\": true", 0, NULL },
		{ "\"cpu_offload_param\": true, \"cpu_offload\": true", 0, NULL },
		{ "\"cpu_offload_use_pin_memory\": true", 0, NULL },
		{ "\"stage3_gather_fp16_weights_on_model_save\": true, "
		  "\"gather_16bit_weights_on_model_save\": true", -1,
		  "ds.json: zero_optimization.stage3_gather_fp16_weights_on_"
		  "model_save: a legacy key beside its new one, gather_16bit_"
		  "weights_on_model_save (DeepSpeed refuses both together): "
		  "keep gather_16bit_weights_on_model_save" },
		{ "\"gather_16bit_weights_on_model_save\": true, "
		  "\"stage3_gather_16bit_weights_on_model_save\": false", -1,
		  "ds.json: zero_optimization.stage3_gather_16bit_weights_on_"
		  "model_save and gather_16bit_weights_on_model_save: two names "
		  "of one setting that disagree: keep one" },
		{ "\"cpu_offload\": true, \"offload_optimizer\": {\"device\": "
		  "\"none\"}", -1, "ds.json: zero_optimization.cpu_offload: a "
		  "legacy key beside its new one, offload_optimizer (DeepSpeed "
		  "refuses both together): keep offload_optimizer" },
		{ "\"cpu_offload_param\": 1", -1, "ds.json: zero_optimization."
		  "cpu_offload_param: expected true or false" },
	};
	char text[512];

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		snprintf(text, sizeof(text), "{\"zero_optimization\": "
			 "{\"stage\": 3, %s}}", t[i].zero);
		assert_int_equal(mc_dsconfig_parse(text, strlen(text),
						   "ds.json", &d, err,
						   sizeof(err)), t[i].rc);
		if (t[i].msg)
			assert_string_equal(err, t[i].msg);
	}
	snprintf(text, sizeof(text), "{\"zero_optimization\": {\"stage\": 3, "
		 "\"stage3_gather_fp16_weights_on_model_save\": true}}");
	assert_int_equal(mc_dsconfig_parse(text, strlen(text), "ds.json", &d,
					   err, sizeof(err)), 0);
	assert_true(d.gather_16bit_on_save);
	snprintf(text, sizeof(text), "{\"zero_optimization\": {\"stage\": 3, "
		 "\"cpu_offload_param\": true}}");
	assert_int_equal(mc_dsconfig_parse(text, strlen(text), "ds.json", &d,
					   err, sizeof(err)), 0);
	assert_int_equal(d.offload_param, MC_DS_CPU);
	assert_int_equal(d.offload_optimizer, MC_DS_NONE);
}

/* A file given to the wrong option is named as what it is. */
static void test_wrong_kind(void **state)
{
	struct {
		enum mc_opt_id id;
		const char *file, *says;
	} t[] = {
		{ MC_OPT_DS_CONFIG, "alignment-handbook-zero3.yaml",
		  "this is an Accelerate config, not a DeepSpeed config: give "
		  "it as --accelerate-config" },
		{ MC_OPT_ACCEL_CONFIG, "axolotl-zero3_bf16.json",
		  "this is a DeepSpeed config, not an Accelerate config: give "
		  "it as --deepspeed-config" },
		{ MC_OPT_DS_CONFIG, "torchtune-llama3_1-70B_full.yaml",
		  "this is a torchtune recipe, not a DeepSpeed config: give "
		  "it as --torchtune-config" },
		{ MC_OPT_TUNE_CONFIG, "alignment-handbook-fsdp.yaml",
		  "this is an Accelerate config, not a torchtune recipe: give "
		  "it as --accelerate-config" },
	};
	struct mc_jobfiles f;

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct mc_opts o = { 0 };

		opt(&o, t[i].id, fixture(t[i].file));
		assert_int_equal(mc_jobfiles_load(&o, &f, err, sizeof(err)),
				 -1);
		if (!strstr(err, t[i].says))
			fail_msg("%s", err);
	}
}

/* The YAML reader types plain scalars as YAML 1.1 and refuses what it
 * does not read. */
static void test_yaml(void **state)
{
	static const char y[] = "a: yes\nb: 'no'\nc: 3\nd: 1e9\ne: ~\n"
		"f: [x, 2]\ng: {h: On}\ni: 0.5\nj: 007x\n";
	json_t *o;

	(void)state;
	o = mc_yamlfile_parse(y, sizeof(y) - 1, "y", err, sizeof(err));
	assert_non_null(o);
	assert_true(json_is_true(json_object_get(o, "a")));
	assert_string_equal(json_string_value(json_object_get(o, "b")), "no");
	assert_int_equal(json_integer_value(json_object_get(o, "c")), 3);
	assert_true(json_real_value(json_object_get(o, "d")) == 1e9);
	assert_true(json_is_null(json_object_get(o, "e")));
	assert_int_equal(json_array_size(json_object_get(o, "f")), 2);
	assert_true(json_is_true(json_object_get(json_object_get(o, "g"),
						 "h")));
	assert_string_equal(json_string_value(json_object_get(o, "j")),
			    "007x");
	json_decref(o);
	/* YAML 1.1's numbers, and what only looks like one: scanned by
	 * hand since review (a regex per scalar cost seconds a MiB). */
	{
		static const char n[] = "a: -12\nb: +1.\nc: .5e-3\nd: 2E4\n"
			"e: 1e\nf: .\ng: 1.2.3\nh: +\ni: 12a\nj: e5\n";

		o = mc_yamlfile_parse(n, sizeof(n) - 1, "n", err, sizeof(err));
		assert_non_null(o);
		assert_int_equal(json_integer_value(json_object_get(o, "a")),
				 -12);
		assert_true(json_real_value(json_object_get(o, "b")) == 1.0);
		assert_true(json_real_value(json_object_get(o, "c")) == .5e-3);
		assert_true(json_real_value(json_object_get(o, "d")) == 2e4);
		for (const char *k = "efghij"; *k; k++) {
			char key[2] = { *k, 0 };

			assert_true(json_is_string(json_object_get(o, key)));
		}
		json_decref(o);
	}
	assert_null(mc_yamlfile_parse("a: 1\na: 2\n", 10, "y", err,
				      sizeof(err)));
	assert_string_equal(err, "y: line 2: key \"a\" given twice");
	assert_null(mc_yamlfile_parse("a: &x 1\nb: *x\n", 14, "y", err,
				      sizeof(err)));
	assert_string_equal(err, "y: line 1: an alias or anchor (not read)");
	assert_null(mc_yamlfile_parse("a: [1\n", 6, "y", err, sizeof(err)));
	assert_non_null(strstr(err, "y: not YAML at line"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_axolotl_gather_unprefixed),
		cmocka_unit_test(test_axolotl_params_only),
		cmocka_unit_test(test_llamafactory_z3_offload),
		cmocka_unit_test(test_handbook_zero3_yaml),
		cmocka_unit_test(test_handbook_fsdp_yaml),
		cmocka_unit_test(test_torchtune_70b_full),
		cmocka_unit_test(test_lora_count),
		cmocka_unit_test(test_lora_terms),
		cmocka_unit_test(test_deepspeed_spellings),
		cmocka_unit_test(test_wrong_kind),
		cmocka_unit_test(test_yaml),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
