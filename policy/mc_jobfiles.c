/*
 * mc_jobfiles.c - the job's ds_config.json and config.json figures: read
 * (user side), carried to slurmstepd, applied to the request (see
 * mc_jobfiles.h for where and why).
 */
#include "mc_jobfiles.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mc_filekind.h"
#include "mc_jsonfile.h"
#include "mc_safetensors.h"
#include "mc_parse.h"
#include "mc_util.h"

/* The base name, made safe for the figures' "k=v,k=v" form. */
static void base_name(const char *path, char *out, size_t len)
{
	const char *b = strrchr(path, '/');
	size_t i = 0;

	b = b && b[1] ? b + 1 : path;
	for (; *b && i + 1 < len; b++)
		out[i++] = (strchr(",=", *b) || *b < 0x21 || *b > 0x7e) ? '_'
									: *b;
	out[i] = '\0';
}

/*
 * What names a job file in every message: the option as the user gave it,
 * or its variable ("--deepspeed-config=ds.json",
 * "MEMCORE_DEEPSPEED_CONFIG=ds.json"), so a message says which option,
 * which file and (from the parsers) where in it.
 */
static const char *file_option(const struct mc_opts *o, enum mc_opt_id id,
			       char *buf, size_t len)
{
	if (o->from_env[id])
		snprintf(buf, len, "%s", mc_opt_env(id));
	else
		snprintf(buf, len, "--%s", mc_opt_name(id));
	return buf;
}

/* "--deepspeed-config=PATH" for the parsers' messages, PATH cut (with
 * "...") so that where in the file and why always show. */
static void file_name(const char *opt, const char *path, char *buf,
		      size_t len)
{
	char q[MC_QUOTE_MAX];

	snprintf(buf, len, "%s=%s", opt, mc_escape(path, 0, q, sizeof(q)));
}

/*
 * Read option id's file at path (the option's own, or, with key, the path
 * the option's file names under that key) as the user, and check it is of
 * kind want: *text (malloc'd) and the name for messages
 * ("--accelerate-config's deepspeed_config_file=ds.json"). Returns 0 or
 * -1 with err.
 */
static int read_job_file(const struct mc_opts *o, enum mc_opt_id id,
			 const char *key, const char *path,
			 enum mc_file_kind want, char **text, size_t *len,
			 char *name, size_t namelen, char *err, size_t errlen)
{
	char opt[96];

	file_option(o, id, opt, sizeof(opt));
	if (key) {
		size_t n = strlen(opt);

		snprintf(opt + n, sizeof(opt) - n, "'s %s", key);
	}
	file_name(opt, path, name, namelen);
	if (mc_jsonfile_read(path, opt, text, len, err, errlen) < 0)
		return -1;
	if (mc_file_kind_check(*text, *len, want, name, err, errlen) < 0) {
		free(*text);
		return -1;
	}
	return 0;
}

/* A ds_config.json at path, for option id (--deepspeed-config, or the
 * Accelerate config whose deepspeed_config_file it is). */
static int load_ds(const struct mc_opts *o, enum mc_opt_id id,
		   const char *path, struct mc_jobfiles *f, char *err,
		   size_t errlen)
{
	char *text, name[MC_QUOTE_MAX + 64];
	size_t len;
	int rc;

	if (read_job_file(o, id, id == MC_OPT_DS_CONFIG ? NULL :
			  "deepspeed_config_file", path, MC_FILE_DEEPSPEED,
			  &text, &len, name, sizeof(name), err, errlen) < 0)
		return -1;
	rc = mc_dsconfig_parse(text, len, name, &f->ds, err, errlen);
	free(text);
	if (rc < 0)
		return -1;
	f->has_ds = true;
	base_name(path, f->ds_name, sizeof(f->ds_name));
	return 0;
}

/* The trainer files: an Accelerate config, a torchtune recipe, a PEFT
 * adapter config; each into f->tr. */
static int load_trainer(const struct mc_opts *o, struct mc_jobfiles *f,
			char *err, size_t errlen)
{
	static const struct {
		enum mc_opt_id id;
		enum mc_file_kind kind;
		int (*parse)(const char *, size_t, const char *,
			     struct mc_trainer_facts *, char *, size_t);
	} files[] = {
		{ MC_OPT_ACCEL_CONFIG, MC_FILE_ACCELERATE, mc_accelerate_parse },
		{ MC_OPT_TUNE_CONFIG, MC_FILE_TORCHTUNE, mc_torchtune_parse },
		{ MC_OPT_LORA_CONFIG, MC_FILE_PEFT, mc_peft_parse },
	};
	const char *paths[] = { o->accel_config, o->tune_config,
				o->lora_config };
	struct mc_trainer_facts t;
	char *text, name[MC_QUOTE_MAX + 64];
	size_t len;
	int rc;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		if (!o->set[files[i].id] || !paths[i][0])
			continue;
		if (read_job_file(o, files[i].id, NULL, paths[i],
				  files[i].kind,
				  &text, &len, name, sizeof(name), err,
				  errlen) < 0)
			return -1;
		rc = files[i].parse(text, len, name, &t, err, errlen);
		free(text);
		if (rc < 0)
			return -1;
		if (files[i].id == MC_OPT_LORA_CONFIG) {
			/* The adapter only: LoRA beside the trainer's own. */
			if (f->tr.lora_rank)
				return mc_err(err, errlen, "%s: LoRA given twice "
					      "(the recipe's model builder and "
					      "this adapter): keep one", name);
			if (!f->has_trainer) {
				f->tr = t;
				base_name(paths[i], f->trainer_name,
					  sizeof(f->trainer_name));
			}
			f->tr.lora_rank = t.lora_rank;
			f->tr.lora_targets = t.lora_targets;
		} else if (f->has_trainer) {
			return mc_err(err, errlen, "%s: one trainer's file at a "
				      "time (--accelerate-config or "
				      "--torchtune-config)", name);
		} else {
			f->tr = t;
			base_name(paths[i], f->trainer_name,
				  sizeof(f->trainer_name));
		}
		f->has_trainer = true;
		if (t.has_ds || t.ds_file[0]) {
			if (f->has_ds)
				return mc_err(err, errlen, "%s: DeepSpeed's "
					      "settings beside --deepspeed-"
					      "config: keep one", name);
			if (t.ds_file[0]) {
				if (load_ds(o, files[i].id, t.ds_file, f, err,
					    errlen) < 0)
					return -1;
			} else {
				f->ds = t.ds;
				f->has_ds = true;
				snprintf(f->ds_name, sizeof(f->ds_name), "%s",
					 f->trainer_name);
			}
		}
	}
	return 0;
}

int mc_jobfiles_load(const struct mc_opts *o, struct mc_jobfiles *f,
		     char *err, size_t errlen)
{
	char *text, opt[64], name[MC_QUOTE_MAX + 64];
	size_t len;
	int rc;

	memset(f, 0, sizeof(*f));
	if (o->set[MC_OPT_DS_CONFIG] && o->ds_config[0] &&
	    load_ds(o, MC_OPT_DS_CONFIG, o->ds_config, f, err, errlen) < 0)
		return -1;
	if (o->set[MC_OPT_MODEL_CONFIG] && o->model_config[0]) {
		struct stat st;

		file_option(o, MC_OPT_MODEL_CONFIG, opt, sizeof(opt));
		file_name(opt, o->model_config, name, sizeof(name));
		/* A directory: the checkpoint counts itself, any family. */
		if (stat(o->model_config, &st) == 0 && S_ISDIR(st.st_mode)) {
			if (mc_modeldir_read(o->model_config, name, &f->model,
					     NULL, NULL, err, errlen) < 0)
				return -1;
		} else {
			if (mc_jsonfile_read(o->model_config, opt, &text,
					     &len, err, errlen) < 0)
				return -1;
			if (mc_file_kind_check(text, len, MC_FILE_MODEL, name,
					       err, errlen) < 0) {
				free(text);
				return -1;
			}
			/* With --model-params any model_type serves for the
			 * shape: the count is the option's. */
			rc = mc_hfconfig_parse(text, len, name,
					       o->set[MC_OPT_PARAMS] ?
					       MC_HF_ANY_TYPE : 0, &f->model,
					       err, errlen);
			free(text);
			if (rc < 0)
				return -1;
		}
		f->has_model = true;
		base_name(o->model_config, f->model_name,
			  sizeof(f->model_name));
	}
	if (load_trainer(o, f, err, errlen) < 0)
		return -1;
	if (f->tr.lora_rank && f->has_model)
		f->lora_trainable = mc_lora_params(&f->model, f->tr.lora_rank,
						   f->tr.lora_targets);
	return 0;
}

const char *mc_jobfiles_format(const struct mc_jobfiles *f, char *buf,
			       size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	if (f->has_ds) {
		const struct mc_ds_facts *d = &f->ds;

		n += (size_t)snprintf(buf + n, len - n, "ds=%s,st=%d,oo=%d,"
			"op=%d,obc=%u,pbc=%u,pbs=%llu,g16=%d,cc=%d,pa=%d,mb=%u,"
			"mba=%d,dt=%u", f->ds_name,
			d->has_stage ? (int)d->stage : -1,
			(int)d->offload_optimizer, (int)d->offload_param,
			d->optimizer_buffer_count, d->param_buffer_count,
			(unsigned long long)d->param_buffer_size,
			d->gather_16bit_on_save, d->cpu_checkpointing,
			d->partition_activations, d->micro_batch,
			d->micro_batch_auto, d->dtype_bytes);
		/* Only when set: an older slurmstepd refuses a key it does
		 * not know, and such a file was refused before anyway. */
		if (d->auto_mask && n < len)
			n += (size_t)snprintf(buf + n, len - n, ",au=%u",
					      d->auto_mask);
	}
	if (f->has_model && n < len) {
		const struct mc_model_shape *m = &f->model;

		n += (size_t)snprintf(buf + n, len - n, "%smf=%s,mt=%s,L=%u,"
			"H=%u,I=%u,V=%u,nh=%u,kv=%u,pos=%u,tied=%d,mdt=%u,P=%llu,"
			"LL=%llu", n ? "," : "", f->model_name, m->model_type,
			m->layers, m->hidden, m->intermediate, m->vocab,
			m->heads, m->kv_heads, m->max_positions, m->tied,
			m->dtype_bytes, (unsigned long long)m->params,
			(unsigned long long)m->largest_layer_params);
		/* Only when set, as au= above. */
		if (m->from_checkpoint && n < len)
			n += (size_t)snprintf(buf + n, len - n, ",ck=1");
	}
	if (f->has_trainer && n < len) {
		const struct mc_trainer_facts *t = &f->tr;

		/* ld, sv and zi one above their value: 0 is "not said". */
		n += (size_t)snprintf(buf + n, len - n, "%stf=%s,fs=%d,fo=%d,"
			"sh=%d,ld=%d,sv=%d,zi=%d,tdt=%u,ao=%d,lr=%u,tp=%llu",
			n ? "," : "", f->trainer_name, t->fsdp,
			t->fsdp_offload, (int)t->shard, t->load + 1,
			t->save + 1, t->zero_init + 1, t->dtype_bytes,
			t->act_offload, t->lora_rank,
			(unsigned long long)f->lora_trainable);
	}
	return buf;
}

/* A strict decimal up to max. */
static int num(const char *v, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long x;

	if (!*v || *v < '0' || *v > '9')
		return -1;
	x = strtoull(v, &end, 10);
	if (*end || x > max)
		return -1;
	*out = x;
	return 0;
}

int mc_jobfiles_parse(const char *s, struct mc_jobfiles *f, char *err,
		      size_t errlen)
{
	char buf[1024];
	char *save = NULL;

	memset(f, 0, sizeof(*f));
	if (strlen(s) >= sizeof(buf))
		return mc_err(err, errlen, "%s: too long", MC_JOBFILES_ENV);
	/* srun writes no control byte (an option's value with one is
	 * refused): one here was set by hand, and quoted it would forge a
	 * line of slurmd's log or of the user's stderr. */
	if (mc_has_ctrl(s))
		return mc_err(err, errlen, "%s: a control byte: not a value "
			      "memcore wrote (the variable is memcore's own: "
			      "unset it)", MC_JOBFILES_ENV);
	strcpy(buf, s);
	for (char *t = strtok_r(buf, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		char *v = strchr(t, '=');
		uint64_t x = 0;
		int bad = 0;

		if (!v)
			return mc_err(err, errlen, "%s: '%.32s': expected "
				      "KEY=VALUE", MC_JOBFILES_ENV, t);
		*v++ = '\0';
#define U(key, field, max)						\
		else if (!strcmp(t, key)) {				\
			bad = num(v, max, &x);				\
			field = x;					\
		}
		if (!strcmp(t, "ds")) {
			f->has_ds = true;
			snprintf(f->ds_name, sizeof(f->ds_name), "%s", v);
		} else if (!strcmp(t, "tf")) {
			f->has_trainer = true;
			snprintf(f->trainer_name, sizeof(f->trainer_name), "%s",
				 v);
		} else if (!strcmp(t, "mf")) {
			f->has_model = true;
			snprintf(f->model_name, sizeof(f->model_name), "%s", v);
		} else if (!strcmp(t, "mt")) {
			/* any type: one memcore does not count travels
			 * for its shape (mc_hfconfig.h MC_HF_ANY_TYPE) */
			bad = !*v || strlen(v) >= sizeof(f->model.model_type)
			      || v[strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEF"
					  "GHIJKLMNOPQRSTUVWXYZ0123456789_.-")];
			snprintf(f->model.model_type,
				 sizeof(f->model.model_type), "%s", v);
		} else if (!strcmp(t, "st")) {
			f->ds.has_stage = strcmp(v, "-1") != 0;
			bad = f->ds.has_stage && num(v, 3, &x);
			f->ds.stage = (uint32_t)x;
		}
		U("oo", f->ds.offload_optimizer, 2)
		U("op", f->ds.offload_param, 2)
		U("obc", f->ds.optimizer_buffer_count, 1024)
		U("pbc", f->ds.param_buffer_count, 1024)
		U("pbs", f->ds.param_buffer_size, 1ULL << 40)
		U("g16", f->ds.gather_16bit_on_save, 1)
		U("cc", f->ds.cpu_checkpointing, 1)
		U("pa", f->ds.partition_activations, 1)
		U("mb", f->ds.micro_batch, 1u << 20)
		U("mba", f->ds.micro_batch_auto, 1)
		U("dt", f->ds.dtype_bytes, 4)
		U("au", f->ds.auto_mask, MC_DS_AUTO_ALL)
		U("L", f->model.layers, 100000)
		U("H", f->model.hidden, 1u << 20)
		U("I", f->model.intermediate, 1u << 22)
		U("V", f->model.vocab, 1u << 24)
		U("nh", f->model.heads, 1u << 20)
		U("kv", f->model.kv_heads, 1u << 20)
		U("pos", f->model.max_positions, 1u << 24)
		U("tied", f->model.tied, 1)
		U("mdt", f->model.dtype_bytes, 4)
		U("P", f->model.params, 1000000000000000ULL)
		U("LL", f->model.largest_layer_params, 1000000000000000ULL)
		U("fs", f->tr.fsdp, 1)
		U("fo", f->tr.fsdp_offload, 1)
		U("sh", f->tr.shard, MC_SHARD_NONE)
		U("ld", f->tr.load, 3)
		U("sv", f->tr.save, 3)
		U("zi", f->tr.zero_init, 2)
		U("tdt", f->tr.dtype_bytes, 8)
		U("ao", f->tr.act_offload, 1)
		U("lr", f->tr.lora_rank, 65536)
		U("tp", f->lora_trainable, 1000000000000000ULL)
		U("ck", f->model.from_checkpoint, 1)
		else
			return mc_err(err, errlen, "%s: unknown key '%.16s'",
				      MC_JOBFILES_ENV, t);
#undef U
		if (bad)
			return mc_err(err, errlen, "%s: %s=%.32s: not a value "
				      "memcore wrote", MC_JOBFILES_ENV, t, v);
	}
	/* Back to their values (-1: not said). */
	f->tr.load -= 1;
	f->tr.save -= 1;
	f->tr.zero_init -= 1;
	return 0;
}

/* "6.74B" for a parameter count. */
static const char *fmt_params(uint64_t n, char *buf, size_t len)
{
	if (n >= 1000000000ULL)
		snprintf(buf, len, "%.2fB", (double)n / 1e9);
	else if (n >= 1000000ULL)
		snprintf(buf, len, "%.2fM", (double)n / 1e6);
	else
		snprintf(buf, len, "%llu", (unsigned long long)n);
	return buf;
}

static void apply_model(const struct mc_jobfiles *f, const struct mc_opts *o,
			struct mc_request *r)
{
	const struct mc_model_shape *m = &f->model;
	struct mc_usage *u = &r->use;
	char a[32], b[32];

	if (o->set[MC_OPT_PARAMS] && !m->params) {
		mc_usage_note(u, "%s (%s, not counted by memcore): "
			      "--model-params=%s gives the count, the file "
			      "its shape", f->model_name, m->model_type,
			      fmt_params(o->params, a, sizeof(a)));
	} else if (o->set[MC_OPT_PARAMS]) {
		mc_usage_note(u, "--model-params=%s overrides %s's %s "
			      "parameters", fmt_params(o->params, a, sizeof(a)),
			      f->model_name, fmt_params(m->params, b,
							sizeof(b)));
	} else {
		r->model_params = m->params;
		mc_usage_note(u, "%s (%s): %s parameters%s, largest layer %s",
			      f->model_name, m->model_type,
			      fmt_params(m->params, a, sizeof(a)),
			      m->from_checkpoint ? " (its safetensors "
			      "checkpoint)" : "",
			      fmt_params(m->largest_layer_params, b,
					 sizeof(b)));
	}
	if (!o->set[MC_OPT_LARGEST_LAYER] &&
	    m->largest_layer_params &&
	    m->largest_layer_params <= r->model_params)
		r->largest_layer_params = m->largest_layer_params;
	u->layers = m->layers;
	u->hidden = m->hidden;
	if (!u->seq_len && u->cpu_checkpointing) {
		u->seq_len = m->max_positions;
		mc_usage_note(u, "sequence length %u: %s's "
			      "max_position_embeddings (give --seq-len for "
			      "your data's)", m->max_positions, f->model_name);
	}
	if (m->dtype_bytes == 2 && !o->set[MC_OPT_MODEL_DTYPE] &&
	    r->zero_stage == 0 && u->load != MC_LOAD_META)
		mc_usage_note(u, "%s: torch_dtype 16-bit, but from_pretrained "
			      "builds fp32 without torch_dtype=: counted fp32 "
			      "(else --model-dtype=bf16)", f->model_name);
}

/* The offload the ds_config's devices mean for host RAM (DeepSpeed
 * offloads parameters only at stage 3). */
static enum mc_offload ds_offload(const struct mc_ds_facts *d, uint32_t stage)
{
	if (d->offload_param == MC_DS_CPU && stage == 3)
		return d->offload_optimizer == MC_DS_CPU ? MC_OFFLOAD_ALL
							 : MC_OFFLOAD_PARAMS;
	if (d->offload_optimizer == MC_DS_CPU)
		return MC_OFFLOAD_OPTIMIZER;
	return MC_OFFLOAD_NONE;
}

/*
 * The keys a ds_config may leave "auto" for Accelerate to fill from its
 * launch options (--zero_stage, --offload_optimizer_device,
 * --offload_param_device, --zero3_save_16bit_model), and the option of
 * memcore's that says each: named in one note, unless that option is
 * given (both offload devices under one name).
 */
static const struct {
	uint32_t bit;
	const char *what;
	enum mc_opt_id opt;
	const char *option;
} ds_autos[] = {
	{ MC_DS_AUTO_STAGE, "stage", MC_OPT_STAGE, "--zero-stage" },
	{ MC_DS_AUTO_OFFLOAD_OPTIMIZER | MC_DS_AUTO_OFFLOAD_PARAM,
	  "offload devices", MC_OPT_OFFLOAD, "--offload" },
	{ MC_DS_AUTO_GATHER_16BIT, "16-bit gather on save", MC_OPT_SAVE,
	  "--checkpoint-save" },
};

static void auto_note(const struct mc_jobfiles *f, const struct mc_opts *o,
		      struct mc_usage *u)
{
	char list[MC_NOTE_MAX];
	size_t used = 0;

	list[0] = '\0';
	for (size_t i = 0; i < sizeof(ds_autos) / sizeof(ds_autos[0]); i++)
		if ((f->ds.auto_mask & ds_autos[i].bit) &&
		    !o->set[ds_autos[i].opt])
			mc_appendf(list, sizeof(list), &used, "%s%s (%s)",
				   used ? ", " : "", ds_autos[i].what,
				   ds_autos[i].option);
	if (used)
		mc_usage_note(u, "%s: \"auto\" read as not given (Accelerate "
			      "fills it at launch): %s", f->ds_name, list);
}

static void apply_ds(const struct mc_jobfiles *f, const struct mc_opts *o,
		     struct mc_request *r)
{
	const struct mc_ds_facts *d = &f->ds;
	struct mc_usage *u = &r->use;
	enum mc_offload off;
	char a[32];

	auto_note(f, o, u);
	if (o->set[MC_OPT_STAGE] && d->has_stage && o->stage != d->stage)
		mc_usage_note(u, "--zero-stage=%u overrides %s's stage %u",
			      o->stage, f->ds_name, d->stage);
	else if (!o->set[MC_OPT_STAGE])
		r->zero_stage = d->stage;
	off = ds_offload(d, r->zero_stage);
	if (d->offload_param != MC_DS_NONE && r->zero_stage != 3)
		mc_usage_note(u, "%s's offload_param: moot below ZeRO stage 3 "
			      "(DeepSpeed offloads parameters only there)",
			      f->ds_name);
	/* Devices left "auto" are the option's to say: no override. */
	if (o->set[MC_OPT_OFFLOAD] && (enum mc_offload)o->offload != off &&
	    !(d->auto_mask & (MC_DS_AUTO_OFFLOAD_OPTIMIZER |
			      MC_DS_AUTO_OFFLOAD_PARAM)))
		mc_usage_note(u, "--offload=%s overrides %s's offload devices "
			      "(%s)", mc_offload_words[o->offload], f->ds_name,
			      mc_offload_words[off]);
	else if (!o->set[MC_OPT_OFFLOAD])
		r->offload = off;
	if (((d->offload_param == MC_DS_NVME && r->zero_stage == 3) ||
	     d->offload_optimizer == MC_DS_NVME) &&
	    !o->set[MC_OPT_OFFLOAD]) {
		uint64_t ranks = (uint64_t)(r->gpus ? r->gpus : 1) *
				 (r->nodes ? r->nodes : 1);
		uint64_t part = r->model_params / ranks;
		uint64_t pin = 0;

		if (part > 1000000000ULL)
			part = 1000000000ULL;	/* sub_group_size */
		if (d->offload_param == MC_DS_NVME && r->zero_stage == 3)
			pin += (uint64_t)d->param_buffer_count *
			       d->param_buffer_size * 2;
		if (d->offload_optimizer == MC_DS_NVME)
			pin += (uint64_t)d->optimizer_buffer_count * part * 4;
		u->nvme_pinned_bytes = pin;
		mc_usage_note(u, "%s offloads to nvme: host RAM holds only its "
			      "pinned buffers, %s per rank", f->ds_name,
			      mc_fmt_bytes(pin, a, sizeof(a)));
	}
	if (!o->set[MC_OPT_CPU_CKPT])
		u->cpu_checkpointing = d->cpu_checkpointing;
	else if (o->cpu_checkpointing != d->cpu_checkpointing)
		mc_usage_note(u, "--cpu-checkpointing=%s overrides %s's "
			      "cpu_checkpointing", o->cpu_checkpointing ? "yes"
			      : "no", f->ds_name);
	u->partition_activations = d->partition_activations;
	if (u->cpu_checkpointing && d->partition_activations &&
	    !o->set[MC_OPT_MODEL_PARALLEL])
		mc_usage_note(u, "%s's partition_activations: model-parallel "
			      "degree counted as 1 (give --model-parallel)",
			      f->ds_name);
	if (!o->set[MC_OPT_MICRO_BATCH])
		u->micro_batch = d->micro_batch;
	if (u->cpu_checkpointing && !o->set[MC_OPT_MICRO_BATCH] &&
	    d->micro_batch)
		mc_usage_note(u, "micro-batch %u: %s's "
			      "train_micro_batch_size_per_gpu", d->micro_batch,
			      f->ds_name);
	u->act_bytes = d->dtype_bytes ? d->dtype_bytes : 4;
	if (u->cpu_checkpointing && !d->dtype_bytes)
		mc_usage_note(u, "%s's bf16/fp16 is \"auto\": activations "
			      "counted at 4 bytes", f->ds_name);
	if (d->gather_16bit_on_save && r->zero_stage == 3) {
		if (o->set[MC_OPT_SAVE])
			mc_usage_note(u, "--checkpoint-save=%s overrides %s's "
				      "stage3_gather_16bit_weights_on_model_"
				      "save", mc_save_words[o->save],
				      f->ds_name);
		else
			u->save_16bit = true;
	}
}

/* "q,v,o,mlp" for LoRA's targets. */
static const char *lora_targets(uint32_t t, char *buf, size_t len)
{
	static const char *const w[] = { "q", "k", "v", "o", "gate", "up",
					 "down", "lm_head" };
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < 8; i++)
		if (t & (1u << i))
			mc_appendf(buf, len, &used, "%s%s", used ? "," : "",
				   w[i]);
	return buf;
}

/* The trainer file's settings (Accelerate, torchtune, PEFT), each unless
 * its option says otherwise, and said in a note. */
static void apply_trainer(const struct mc_jobfiles *f, const struct mc_opts *o,
			  struct mc_request *r)
{
	const struct mc_trainer_facts *t = &f->tr;
	struct mc_usage *u = &r->use;
	char a[48], b[32];

	if (t->fsdp_offload) {
		u->fsdp_offload = true;
		u->fsdp_shard = (uint32_t)t->shard;
		mc_usage_note(u, "%s: FSDP CPU offload: parameters, gradients "
			      "and optimizer state in host RAM",
			      f->trainer_name);
	}
	if (t->load >= 0 && !o->set[MC_OPT_MODEL_LOAD] && r->zero_stage == 0)
		u->load = (enum mc_load)t->load;
	if (t->save >= 0 && !o->set[MC_OPT_SAVE])
		u->save = (enum mc_save)t->save;
	if (t->fsdp && (t->load >= 0 || t->save >= 0))
		mc_usage_note(u, "%s: model load %s, consolidated save %s",
			      f->trainer_name, mc_load_words[u->load],
			      mc_save_words[u->save]);
	if (t->zero_init >= 0 && !o->set[MC_OPT_ZERO_INIT])
		r->zero_init = t->zero_init ? MC_ZERO_INIT_YES
					    : MC_ZERO_INIT_NO;
	if (t->dtype_bytes && !o->set[MC_OPT_MODEL_DTYPE])
		u->dtype_bytes = t->dtype_bytes;
	if (t->act_offload)
		mc_usage_note(u, "%s: enable_activation_offloading: "
			      "activations in pinned host RAM, not sized here",
			      f->trainer_name);
	if (!t->lora_rank)
		return;
	if (o->set[MC_OPT_TRAINABLE])
		mc_usage_note(u, "--trainable-params overrides LoRA's count "
			      "(rank %u on %s)", t->lora_rank,
			      lora_targets(t->lora_targets, a, sizeof(a)));
	else if (f->lora_trainable)
		u->trainable_params = f->lora_trainable;
	if (!o->set[MC_OPT_TRAINABLE] && f->lora_trainable)
		mc_usage_note(u, "LoRA rank %u on %s: %s trainable parameters "
			      "(the adapters, on %s's shape)", t->lora_rank,
			      lora_targets(t->lora_targets, a, sizeof(a)),
			      fmt_params(f->lora_trainable, b, sizeof(b)),
			      f->model_name);
	else if (!o->set[MC_OPT_TRAINABLE])
		mc_usage_note(u, "LoRA rank %u on %s: adapters not counted "
			      "(give --model-config of a dense model, or "
			      "--trainable-params): all parameters train",
			      t->lora_rank,
			      lora_targets(t->lora_targets, a, sizeof(a)));
}

/* Values that another makes moot: said, never dropped silently. */
static void moot_notes(const struct mc_opts *o, const struct mc_policy *p,
		       struct mc_request *r)
{
	struct mc_usage *u = &r->use;

	/* With ZeRO the dtype still sizes a consolidated save. */
	if ((o->set[MC_OPT_MODEL_LOAD] || (o->set[MC_OPT_MODEL_DTYPE] &&
					   u->save == MC_SAVE_NONE)) &&
	    r->zero_stage > 0)
		mc_usage_note(u, "--model-load/--model-dtype: moot with ZeRO "
			      "stage %u (DeepSpeed's estimate sizes the load)",
			      r->zero_stage);
	else if ((o->set[MC_OPT_MODEL_LOAD] || o->set[MC_OPT_MODEL_DTYPE] ||
		  o->set[MC_OPT_SAVE]) && !r->model_params)
		mc_usage_note(u, "--model-load/--model-dtype/--checkpoint-save:"
			      " moot without the model's size (--model-params "
			      "or --model-config)");
	if (o->set[MC_OPT_SAVE_OPTIM] && u->save == MC_SAVE_NONE)
		mc_usage_note(u, "--save-optimizer: moot without "
			      "--checkpoint-save%s", u->save_16bit ?
			      " (DeepSpeed saves the optimizer state "
			      "partitioned, never gathered)" : "");
	if ((o->set[MC_OPT_SEQ_LEN] || o->set[MC_OPT_MICRO_BATCH]) &&
	    !u->cpu_checkpointing)
		mc_usage_note(u, "--seq-len/--micro-batch: moot without "
			      "activation offload (cpu_checkpointing)");
	if (o->set[MC_OPT_MODEL_PARALLEL] && !u->partition_activations)
		mc_usage_note(u, "--model-parallel: moot without "
			      "partition_activations");
	if (o->set[MC_OPT_LARGEST_LAYER] &&
	    (r->zero_stage != 3 || r->offload != MC_OFFLOAD_NONE ||
	     !mc_zero_init(p, r)))
		mc_usage_note(u, "--largest-layer-params: moot (only ZeRO-3 "
			      "without offload, with zero.Init, uses it)");
	if (o->set[MC_OPT_ZERO_INIT] && r->zero_stage != 3)
		mc_usage_note(u, "--zero-init: moot below ZeRO stage 3");
	if (o->set[MC_OPT_RAM_PER_WORKER] && !r->dataloader_workers)
		mc_usage_note(u, "--ram-per-worker: moot with 0 DataLoader "
			      "workers");
	if (o->set[MC_OPT_PARAMS] && r->zero_stage == 0 &&
	    u->load == MC_LOAD_META && !mc_terms_save_param_bytes(u))
		mc_usage_note(u, "--model-params: no host copy with "
			      "--model-load=meta and no ZeRO");
}

void mc_jobfiles_apply(const struct mc_jobfiles *f, const struct mc_opts *o,
		       const struct mc_policy *p, struct mc_request *r)
{
	if (f && f->has_ds)
		apply_ds(f, o, r);
	if (f && f->has_model)
		apply_model(f, o, r);
	if (f && f->has_trainer)
		apply_trainer(f, o, r);
	/* The ds_config's nvme figure needs P: redo it once P is known. */
	if (f && f->has_ds && f->has_model && r->use.nvme_pinned_bytes &&
	    f->ds.offload_optimizer == MC_DS_NVME) {
		struct mc_request x = *r;

		x.use.n_notes = 0;
		apply_ds(f, o, &x);
		r->use.nvme_pinned_bytes = x.use.nvme_pinned_bytes;
		for (uint32_t i = 0; i < r->use.n_notes; i++)
			if (strstr(r->use.notes[i], "nvme"))
				for (uint32_t k = 0; k < x.use.n_notes; k++)
					if (strstr(x.use.notes[k], "nvme"))
						memcpy(r->use.notes[i],
						       x.use.notes[k],
						       MC_NOTE_MAX);
	}
	moot_notes(o, p, r);
}

int mc_jobfiles_check(const struct mc_jobfiles *f, const struct mc_opts *o,
		      char *err, size_t errlen)
{
	static const struct mc_policy none;	/* no policy defaults */
	struct mc_request r;
	char why[MC_ERR_MAX];

	memset(&r, 0, sizeof(r));
	r.gpus = 1;
	r.nodes = 1;
	mc_opts_request(o, &none, &r);
	mc_jobfiles_apply(f, o, &none, &r);
	if (mc_request_check(NULL, &r, why, sizeof(why)) == 0)
		return 0;
	if (f && f->has_trainer)
		return mc_err(err, errlen, "%s (with %s%s%s)", why,
			      f->trainer_name, f->has_model ? " and " : "",
			      f->has_model ? f->model_name : "");
	if (f && (f->has_ds || f->has_model))
		return mc_err(err, errlen, "%s (with %s%s%s)", why,
			      f->has_ds ? f->ds_name : "",
			      f->has_ds && f->has_model ? " and " : "",
			      f->has_model ? f->model_name : "");
	return mc_err(err, errlen, "%s", why);
}
