/*
 * mc_filekind.c - what a job file is (see mc_filekind.h for the marks).
 */
#include "mc_filekind.h"

#include <stdbool.h>
#include <string.h>

#include <jansson.h>

#include "mc_parse.h"
#include "mc_util.h"
#include "mc_yamlfile.h"

static const struct {
	const char *name, *option;
} kinds[] = {
	[MC_FILE_UNKNOWN] = { "an unknown file", "" },
	[MC_FILE_DEEPSPEED] = { "a DeepSpeed config", "--deepspeed-config" },
	[MC_FILE_MODEL] = { "a model's config.json", "--model-config" },
	[MC_FILE_PEFT] = { "a PEFT adapter_config.json", "--lora-config" },
	[MC_FILE_ACCELERATE] = { "an Accelerate config",
				 "--accelerate-config" },
	[MC_FILE_TORCHTUNE] = { "a torchtune recipe", "--torchtune-config" },
};

const char *mc_file_kind_name(enum mc_file_kind k)
{
	return kinds[k].name;
}

const char *mc_file_kind_option(enum mc_file_kind k)
{
	return kinds[k].option;
}

static bool has(json_t *o, const char *key)
{
	return json_object_get(o, key) != NULL;
}

/* A torchtune.* _component_ under key. */
static bool tune_component(json_t *o, const char *key)
{
	json_t *c = json_object_get(json_object_get(o, key), "_component_");

	return json_is_string(c) &&
	       !strncmp(json_string_value(c), "torchtune.", 10);
}

static enum mc_file_kind kind_of(json_t *o, bool yaml)
{
	if (!json_is_object(o))
		return MC_FILE_UNKNOWN;
	if (has(o, "peft_type"))
		return MC_FILE_PEFT;
	if (has(o, "model_type") || has(o, "architectures"))
		return MC_FILE_MODEL;
	if (has(o, "distributed_type") || has(o, "compute_environment"))
		return MC_FILE_ACCELERATE;
	if (tune_component(o, "model") || tune_component(o, "checkpointer") ||
	    tune_component(o, "tokenizer"))
		return MC_FILE_TORCHTUNE;
	if (!yaml && (has(o, "zero_optimization") ||
		      has(o, "train_micro_batch_size_per_gpu") ||
		      has(o, "train_batch_size") ||
		      has(o, "gradient_accumulation_steps")))
		return MC_FILE_DEEPSPEED;
	return MC_FILE_UNKNOWN;
}

enum mc_file_kind mc_file_kind_of(const char *text, size_t len)
{
	char err[512];	/* unread: an unknown kind is the answer */
	enum mc_file_kind k;
	bool yaml = false;
	json_t *o = json_loadb(text, len, JSON_DECODE_ANY, NULL);

	if (!o) {
		o = mc_yamlfile_parse(text, len, "", err, sizeof(err));
		yaml = true;
	}
	k = kind_of(o, yaml);
	json_decref(o);
	return k;
}

int mc_file_kind_check(const char *text, size_t len, enum mc_file_kind want,
		       const char *name, char *err, size_t errlen)
{
	enum mc_file_kind k = mc_file_kind_of(text, len);

	if (k == MC_FILE_UNKNOWN || k == want)
		return 0;
	return mc_err(err, errlen, "%s: this is %s, not %s: give it as %s",
		      name, kinds[k].name, kinds[want].name, kinds[k].option);
}
