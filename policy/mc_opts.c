/*
 * mc_opts.c - parse the user's memcore options (see mc_opts.h).
 */
#include "mc_opts.h"

#include <stdio.h>
#include <string.h>

#include "mc_parse.h"
#include "mc_util.h"

static const struct {
	const char *name, *env, *arginfo, *help;
} table[MC_OPT_COUNT] = {
	[MC_OPT_WORKERS] = { "dataloader-workers",
		"MEMCORE_DATALOADER_WORKERS", "N[+N...]",
		"DataLoader worker processes per GPU; several loaders per "
		"rank as a sum (8+2: train + validation); memcore sizes "
		"cores and RAM for the total" },
	[MC_OPT_PARAMS] = { "model-params", "MEMCORE_MODEL_PARAMS", "SIZE",
		"model parameters (7B, 70B, 6.7e9), for DeepSpeed ZeRO's "
		"host RAM" },
	[MC_OPT_STAGE] = { "zero-stage", "MEMCORE_ZERO_STAGE", "0-3",
		"DeepSpeed ZeRO stage" },
	[MC_OPT_OFFLOAD] = { "offload", "MEMCORE_OFFLOAD",
		"none|optimizer|all", "DeepSpeed ZeRO offload to host RAM" },
	[MC_OPT_MODE] = { "memcore", "MEMCORE_MODE", "explain|warn",
		"explain: print the RAM/core plan even when the step fits, "
		"and at its end what it used and what to ask next time; "
		"warn: run a misfit step with a warning, where the site "
		"allows it" },
	[MC_OPT_LARGEST_LAYER] = { "largest-layer-params",
		"MEMCORE_LARGEST_LAYER_PARAMS", "SIZE",
		"parameters of the model's largest layer (e.g. 32.9M), for "
		"ZeRO-3 with zero.Init; unknown: the whole model" },
	[MC_OPT_ZERO_INIT] = { "zero-init", "MEMCORE_ZERO_INIT", "yes|no",
		"whether the model is built under deepspeed.zero.Init "
		"(default: the policy's ZeroInit)" },
	[MC_OPT_DS_CONFIG] = { "deepspeed-config", "MEMCORE_DEEPSPEED_CONFIG",
		"FILE", "the job's DeepSpeed ds_config.json: ZeRO stage, "
		"offload devices, cpu_checkpointing, micro-batch, bf16/fp16, "
		"16-bit gather on save (read as you, at submission)" },
	[MC_OPT_MODEL_CONFIG] = { "model-config", "MEMCORE_MODEL_CONFIG",
		"FILE|DIR", "the model's Hugging Face config.json: "
		"parameters, largest layer, layers and hidden size; or its "
		"directory, counted from the safetensors headers (read as "
		"you, at submission)" },
	[MC_OPT_MODEL_DTYPE] = { "model-dtype", "MEMCORE_MODEL_DTYPE",
		"fp32|bf16|fp16", "the dtype each rank builds the model in "
		"without ZeRO (default fp32, from_pretrained's)" },
	[MC_OPT_MODEL_LOAD] = { "model-load", "MEMCORE_MODEL_LOAD",
		"per-rank|rank0|meta", "without ZeRO: every rank builds the "
		"model on the host (default), only rank 0 (FSDP "
		"sync_module_states), or none (meta device)" },
	[MC_OPT_SAVE] = { "checkpoint-save", "MEMCORE_CHECKPOINT_SAVE",
		"none|rank0|all", "a consolidated checkpoint gathered in "
		"host RAM (FSDP FULL_STATE_DICT offload_to_cpu) on rank 0 or "
		"on every rank" },
	[MC_OPT_SAVE_OPTIM] = { "save-optimizer", "MEMCORE_SAVE_OPTIMIZER",
		"yes|no", "the consolidated checkpoint holds the optimizer "
		"state too (Adam's two moments, in the model's dtype)" },
	[MC_OPT_CPU_CKPT] = { "cpu-checkpointing", "MEMCORE_CPU_CHECKPOINTING",
		"yes|no", "DeepSpeed activation checkpoints kept in host RAM "
		"(activation_checkpointing.cpu_checkpointing)" },
	[MC_OPT_SEQ_LEN] = { "seq-len", "MEMCORE_SEQ_LEN", "N",
		"sequence length, for activation offload (default: the "
		"model's max_position_embeddings)" },
	[MC_OPT_MICRO_BATCH] = { "micro-batch", "MEMCORE_MICRO_BATCH", "N",
		"micro-batch per GPU, for activation offload (default: "
		"ds_config's train_micro_batch_size_per_gpu)" },
	[MC_OPT_MODEL_PARALLEL] = { "model-parallel", "MEMCORE_MODEL_PARALLEL",
		"N", "model-parallel degree that partition_activations "
		"divides the activations by (default 1)" },
	[MC_OPT_RAM_PER_WORKER] = { "ram-per-worker", "MEMCORE_RAM_PER_WORKER",
		"SIZE", "host RAM each DataLoader worker holds (default: the "
		"policy's RamPerWorker, within its MinRamPerWorker and "
		"MaxRamPerWorker)" },
	[MC_OPT_DATASET] = { "dataset", "MEMCORE_DATASET", "PATH[,PATH...]",
		"the job's dataset: memcore says when it lies on a network "
		"filesystem and how to stage it to local scratch (read as "
		"you, at submission)" },
	[MC_OPT_DATASET_IN_MEMORY] = { "dataset-in-memory",
		"MEMCORE_DATASET_IN_MEMORY", "SIZE[:KIND]",
		"the dataset is held in RAM: a copy in every task, and in "
		"every DataLoader worker for Python objects (lists of "
		"samples; the default KIND, objects), tasks x SIZE x "
		"(workers + 1), or shared by the workers for numpy/Arrow "
		"data (KIND arrays: keep_in_memory=True, image caches), "
		"tasks x SIZE; without SIZE (or yes) the --dataset paths' "
		"measured size" },
};

const char *mc_opt_name(enum mc_opt_id id)
{
	return table[id].name;
}

const char *mc_opt_env(enum mc_opt_id id)
{
	return table[id].env;
}

const char *mc_opt_arginfo(enum mc_opt_id id)
{
	return table[id].arginfo;
}

const char *mc_opt_help(enum mc_opt_id id)
{
	return table[id].help;
}

bool mc_opt_value_optional(enum mc_opt_id id)
{
	return id == MC_OPT_DATASET_IN_MEMORY;
}

int mc_opt_lookup(const char *name)
{
	for (int i = 0; name && i < MC_OPT_COUNT; i++)
		if (!strcmp(name, table[i].name))
			return i;
	return -1;
}

/* --memcore takes a comma-separated set of explain and warn. */
static int parse_mode(const char *s, unsigned *out, char *err, size_t len)
{
	static const char *const words[] = { "explain", "warn", NULL };
	char buf[64];
	unsigned mode = 0;

	if (!s || !*s || strlen(s) >= sizeof(buf)) {
		snprintf(err, len, "expected explain, warn or explain,warn");
		return -1;
	}
	strcpy(buf, s);
	for (char *save = NULL, *w = strtok_r(buf, ",", &save); w;
	     w = strtok_r(NULL, ",", &save)) {
		int i;

		if (mc_parse_word(w, words, &i, err, len) < 0)
			return -1;
		mode |= i == 0 ? MC_USER_EXPLAIN : MC_USER_WARN;
	}
	if (!mode) {
		snprintf(err, len, "expected explain, warn or explain,warn");
		return -1;
	}
	*out = mode;
	return 0;
}

/* --dataloader-workers: N, or the loaders' parts "8+2" summed. */
static int parse_workers(const char *s, struct mc_opts *n, char *err,
			 size_t len)
{
	uint32_t parts[MC_WORKERS_PARTS_MAX], total = 0, k = 0;
	char buf[32], why[MC_ERR_MAX];

	if (!s || !strchr(s, '+')) {
		if (mc_parse_count(s, MC_WORKERS_LIMIT, &total, err, len) < 0)
			return -1;
		parts[k++] = total;
	} else {
		for (const char *p = s;; p++) {
			const char *e = strchr(p, '+');
			size_t l = e ? (size_t)(e - p) : strlen(p);

			if (!l) {
				snprintf(err, len, "an empty part: expected N "
					 "or one count per DataLoader joined "
					 "by +, such as 8+2");
				return -1;
			}
			if (k == MC_WORKERS_PARTS_MAX) {
				snprintf(err, len, "more than %d DataLoaders "
					 "(parts joined by +)",
					 MC_WORKERS_PARTS_MAX);
				return -1;
			}
			snprintf(buf, sizeof(buf), "%.*s", (int)l, p);
			if (l >= sizeof(buf) ||
			    mc_parse_count(buf, MC_WORKERS_LIMIT, &parts[k],
					   why, sizeof(why)) < 0) {
				snprintf(err, len, "'%.*s': %s", (int)l, p,
					 l >= sizeof(buf) ? "out of range"
					 : why);
				return -1;
			}
			total += parts[k++];
			if (total > MC_WORKERS_LIMIT) {
				snprintf(err, len, "out of range (at most %u "
					 "in all)", MC_WORKERS_LIMIT);
				return -1;
			}
			if (!e)
				break;
			p = e;
		}
	}
	memset(n->worker_parts, 0, sizeof(n->worker_parts));
	memcpy(n->worker_parts, parts, k * sizeof(parts[0]));
	n->n_worker_parts = k;
	n->workers = total;
	return 0;
}

/* --model-params: a parameter count no smaller than any model's. */
static int parse_params(const char *value, struct mc_opts *n, char *why,
			size_t wl)
{
	if (mc_parse_params(value, &n->params, why, wl) < 0)
		return -1;
	/* No model is this small: a bare 7 is 7 billion meant without its
	 * suffix, and would be sized as 7 parameters. */
	if (n->params < MC_PARAMS_MIN) {
		const char *v = strspn(value, "0123456789.") == strlen(value)
				? value : "7";

		snprintf(why, wl, "%llu parameters is below 1M (1e6), the "
			 "smallest model taken; give the count with its "
			 "suffix: %sB for %s billion, %sM for %s million",
			 (unsigned long long)n->params, v, v, v, v);
		return -1;
	}
	return 0;
}

/* --deepspeed-config, --model-config: a file name, kept whole. */
static int parse_path(const char *value, char *dst, char *why, size_t wl)
{
	if (!value || !*value)
		return mc_err(why, wl, "expected a file name");
	if (strlen(value) >= MC_OPT_PATH_MAX)
		return mc_err(why, wl, "a path of %zu characters (at most %d)",
			      strlen(value), MC_OPT_PATH_MAX - 1);
	memset(dst, 0, MC_OPT_PATH_MAX);
	memcpy(dst, value, strlen(value));
	return 0;
}

/* --dataset: PATH[,PATH...], no path empty. */
static int parse_dataset(const char *value, struct mc_opts *n, char *why,
			 size_t wl)
{
	if (!value || !*value || value[strlen(value) - 1] == ',' ||
	    value[0] == ',' || strstr(value, ",,"))
		return mc_err(why, wl, "expected PATH[,PATH...] (no empty "
			      "path)");
	if (strlen(value) >= MC_OPT_PATH_MAX)
		return mc_err(why, wl, "%zu characters (at most %d)",
			      strlen(value), MC_OPT_PATH_MAX - 1);
	memset(n->dataset, 0, MC_OPT_PATH_MAX);
	memcpy(n->dataset, value, strlen(value));
	return 0;
}

/* --dataset-in-memory[=SIZE][:KIND]: a size from 1M to 1024T, or none;
 * KIND objects (the default) or arrays, alone or after the size. */
static int parse_dataset_in_memory(const char *value, struct mc_opts *n,
				   char *why, size_t wl)
{
	const char *colon = value ? strrchr(value, ':') : NULL;
	const char *kind = colon ? colon + 1 : value;
	char size[32];
	int k;

	n->dataset_kind = MC_DATASET_OBJECTS;
	if (!value)
		value = "";
	/* A kind alone ("arrays"), or after the size ("200G:arrays"). */
	if (kind && mc_parse_word(kind, mc_dataset_kind_words, &k, why,
				  wl) == 0) {
		n->dataset_kind = k;
		if (!colon) {
			n->dataset_in_memory_bytes = 0;
			return 0;
		}
		if ((size_t)(colon - value) >= sizeof(size))
			return mc_err(why, wl, "expected SIZE[:arrays|"
				      ":objects]");
		memcpy(size, value, (size_t)(colon - value));
		size[colon - value] = '\0';
		value = size;
	} else if (colon) {
		return mc_err(why, wl, "unknown kind '%s' after ':' (arrays: "
			      "numpy/Arrow data the workers share; objects: "
			      "Python objects each worker copies)", kind);
	}
	/* No SIZE: the option alone (srun passes slurmstepd ""), or "yes",
	 * which a variable can say. */
	if (!*value || !strcmp(value, "yes")) {
		n->dataset_in_memory_bytes = 0;
		return 0;
	}
	if (mc_parse_size(value, (uint64_t)1 << 20,
			  &n->dataset_in_memory_bytes, why, wl) < 0)
		return -1;
	if (n->dataset_in_memory_bytes < ((uint64_t)1 << 20) ||
	    n->dataset_in_memory_bytes > ((uint64_t)1 << 50))
		return mc_err(why, wl, "expected a size from 1M to 1024T, or "
			      "no value for the --dataset paths' measured "
			      "size");
	return 0;
}

/* --ram-per-worker: a size from 1M to 1024T. */
static int parse_ram_per_worker(const char *value, struct mc_opts *n,
				char *why, size_t wl)
{
	if (mc_parse_size(value, (uint64_t)1 << 20, &n->ram_per_worker_bytes,
			  why, wl) < 0)
		return -1;
	if (!n->ram_per_worker_bytes ||
	    n->ram_per_worker_bytes > ((uint64_t)1 << 50))
		return mc_err(why, wl, "expected a size from 1M to 1024T");
	return 0;
}

/* Option id's value into n; -1 with why. A table of one parser each. */
static int parse_option(enum mc_opt_id id, const char *value,
			struct mc_opts *n, char *why, size_t wl)
{
	switch (id) {
	case MC_OPT_WORKERS:
		return parse_workers(value, n, why, wl);
	case MC_OPT_PARAMS:
		return parse_params(value, n, why, wl);
	case MC_OPT_STAGE:
		if (mc_parse_count(value, 3, &n->stage, why, wl) < 0)
			return mc_err(why, wl,
				      "expected a ZeRO stage 0, 1, 2 or 3");
		return 0;
	case MC_OPT_OFFLOAD:
		return mc_parse_word(value, mc_offload_words, &n->offload, why,
				     wl);
	case MC_OPT_MODE:
		return parse_mode(value, &n->mode, why, wl);
	case MC_OPT_LARGEST_LAYER:
		return mc_parse_params(value, &n->largest_layer_params, why,
				       wl);
	case MC_OPT_ZERO_INIT:
		return mc_parse_bool(value, &n->zero_init, why, wl);
	case MC_OPT_DS_CONFIG:
		return parse_path(value, n->ds_config, why, wl);
	case MC_OPT_MODEL_CONFIG:
		return parse_path(value, n->model_config, why, wl);
	case MC_OPT_DATASET:
		return parse_dataset(value, n, why, wl);
	case MC_OPT_DATASET_IN_MEMORY:
		return parse_dataset_in_memory(value, n, why, wl);
	case MC_OPT_MODEL_DTYPE:
		return mc_parse_word(value, mc_dtype_words, &n->model_dtype,
				     why, wl);
	case MC_OPT_MODEL_LOAD:
		return mc_parse_word(value, mc_load_words, &n->model_load, why,
				     wl);
	case MC_OPT_SAVE:
		return mc_parse_word(value, mc_save_words, &n->save, why, wl);
	case MC_OPT_SAVE_OPTIM:
		return mc_parse_bool(value, &n->save_optimizer, why, wl);
	case MC_OPT_CPU_CKPT:
		return mc_parse_bool(value, &n->cpu_checkpointing, why, wl);
	case MC_OPT_SEQ_LEN:
		return mc_parse_count_min1(value, 1u << 24, &n->seq_len, why,
					   wl);
	case MC_OPT_MICRO_BATCH:
		return mc_parse_count_min1(value, 1u << 24, &n->micro_batch,
					   why, wl);
	case MC_OPT_MODEL_PARALLEL:
		return mc_parse_count_min1(value, 1u << 24,
					   &n->model_parallel, why, wl);
	case MC_OPT_RAM_PER_WORKER:
		return parse_ram_per_worker(value, n, why, wl);
	default:
		return mc_err(why, wl, "unknown option");
	}
}

int mc_opts_set(struct mc_opts *o, enum mc_opt_id id, const char *value,
		bool from_env, char *err, size_t errlen)
{
	struct mc_opts n = *o;
	char why[MC_ERR_MAX];
	int rc;

	if (from_env && o->set[id] && !o->from_env[id])
		return 0;	/* the command line wins */
	/* Before any parsing, so that no message and no log line of
	 * slurmd's ever quotes the raw value (a newline forges a line). */
	if (mc_has_ctrl(value)) {
		char q[MC_ERR_MAX / 2];

		mc_escape(value, 0, q, sizeof(q));
		if (from_env)
			snprintf(err, errlen, "%s=\"%s\": a control character "
				 "in the value", table[id].env, q);
		else
			snprintf(err, errlen, "--%s=\"%s\": a control character "
				 "in the value", table[id].name, q);
		return -1;
	}
	rc = parse_option(id, value, &n, why, sizeof(why));
	if (rc == 0 && o->set[id] && !o->from_env[id] && !from_env &&
	    memcmp(&n, o, sizeof(n)) != 0) {
		snprintf(why, sizeof(why), "given twice with different values");
		rc = -1;
	}
	if (rc < 0) {
		char q[MC_QUOTE_MAX];

		/* A long value (a --dataset path) cut with "...": the reason
		 * after it always shows. */
		mc_escape(value, 0, q, sizeof(q));
		if (from_env)
			snprintf(err, errlen, "%s=%s: %s", table[id].env, q,
				 why);
		else
			snprintf(err, errlen, "--%s=%s: %s", table[id].name, q,
				 why);
		return -1;
	}
	n.set[id] = true;
	n.from_env[id] = from_env;
	*o = n;
	return 0;
}

int mc_opts_set_env(struct mc_opts *o, enum mc_opt_id id, const char *value,
		    char *err, size_t errlen)
{
	size_t n;

	if (!value || !*value || (o->set[id] && !o->from_env[id]))
		return 0;
	/* The same limit in srun and in slurmstepd, so that what one
	 * refuses the other never runs. */
	if ((n = strlen(value)) > MC_OPT_VALUE_MAX) {
		snprintf(err, errlen, "%s: a value of %zu characters is too "
			 "long (at most %d)", table[id].env, n,
			 MC_OPT_VALUE_MAX);
		return -1;
	}
	return mc_opts_set(o, id, value, true, err, errlen);
}

void mc_opts_request(const struct mc_opts *o, const struct mc_policy *p,
		     struct mc_request *r)
{
	r->dataloader_workers = mc_opts_workers(o, p);
	r->model_params = o->params;
	r->zero_stage = o->stage;
	r->offload = (enum mc_offload)o->offload;
	r->largest_layer_params = o->largest_layer_params;
	r->zero_init = !o->set[MC_OPT_ZERO_INIT] ? MC_ZERO_INIT_POLICY
		       : o->zero_init ? MC_ZERO_INIT_YES : MC_ZERO_INIT_NO;
	r->use.dtype_bytes = !o->set[MC_OPT_MODEL_DTYPE] ? 0
			     : o->model_dtype == 0 ? 4 : 2;
	r->use.load = (enum mc_load)o->model_load;
	r->use.save = (enum mc_save)o->save;
	r->use.save_optimizer = o->save_optimizer != 0;
	r->use.cpu_checkpointing = o->cpu_checkpointing != 0;
	r->use.seq_len = o->seq_len;
	r->use.micro_batch = o->micro_batch;
	r->use.model_parallel = o->model_parallel;
	r->use.ram_per_worker_bytes = o->ram_per_worker_bytes;
	r->use.dataset_bytes = o->set[MC_OPT_DATASET_IN_MEMORY]
			       ? o->dataset_in_memory_bytes : 0;
	r->use.dataset_kind = (enum mc_dataset_kind)o->dataset_kind;
}

bool mc_opts_dataset_measured(const struct mc_opts *o)
{
	return o->set[MC_OPT_DATASET_IN_MEMORY] && !o->dataset_in_memory_bytes;
}

const char *mc_opts_workers_list(const struct mc_opts *o, uint32_t fallback,
				 char *buf, size_t len)
{
	size_t n = 0;

	if (!len)
		return buf;
	buf[0] = '\0';
	if (!o->set[MC_OPT_WORKERS] || !o->n_worker_parts) {
		snprintf(buf, len, "%u", fallback);
		return buf;
	}
	for (uint32_t i = 0; i < o->n_worker_parts && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%u", i ? "+" : "",
				      o->worker_parts[i]);
	return buf;
}

int mc_opts_check(const struct mc_opts *o, char *err, size_t errlen)
{
	static const struct mc_policy none;	/* no policy defaults */
	struct mc_request r;
	char why[MC_ERR_MAX];
	size_t n;
	int k;

	memset(&r, 0, sizeof(r));
	mc_opts_request(o, &none, &r);
	if (mc_request_check(NULL, &r, why, sizeof(why)) == 0)
		return 0;
	n = (size_t)snprintf(err, errlen, "%s", why);
	/* Say which of the values came from a variable, not a flag. */
	k = 0;
	for (int i = 0; i < MC_OPT_COUNT; i++) {
		if (!o->set[i] || !o->from_env[i] || i == MC_OPT_MODE ||
		    n >= errlen)
			continue;
		n += (size_t)snprintf(err + n, errlen - n, "%s%s", k++ ?
				      ", " : " (from the environment: ",
				      table[i].env);
	}
	if (k && n < errlen)
		snprintf(err + n, errlen - n, ")");
	return -1;
}

bool mc_opts_name_files(const struct mc_opts *o)
{
	return (o->set[MC_OPT_DS_CONFIG] && o->ds_config[0]) ||
	       (o->set[MC_OPT_MODEL_CONFIG] && o->model_config[0]);
}

uint32_t mc_opts_workers(const struct mc_opts *o, const struct mc_policy *p)
{
	return o->set[MC_OPT_WORKERS] ? o->workers : p->dataloader_workers;
}
