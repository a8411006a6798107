/*
 * mc_dsconfig.c - a DeepSpeed ds_config.json into sizing facts (see
 * mc_dsconfig.h for the keys and their sources).
 */
#include "mc_dsconfig.h"

#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "mc_jsonfile.h"
#include "mc_parse.h"
#include "mc_util.h"

const char *const mc_ds_device_words[] = { "none", "cpu", "nvme", NULL };

/* An object member that must be an object when present. */
static int get_obj(json_t *o, const char *name, const char *key,
		   json_t **out, char *err, size_t errlen)
{
	json_t *v = json_object_get(o, key);

	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_object(v))
		return mc_err(err, errlen, "%s: %s: expected an object", name,
			      key);
	*out = v;
	return 0;
}

/* "auto": the Trainer or Accelerate fills it in at launch. */
static bool is_auto_value(const json_t *v)
{
	return json_is_string(v) && !strcmp(json_string_value(v), "auto");
}

/* A boolean that may also be "auto" (reads as dflt, *is_auto set). */
static int get_bool(json_t *o, const char *name, const char *path,
		    const char *key, bool dflt, bool *out, bool *is_auto,
		    char *err, size_t errlen)
{
	json_t *v = o ? json_object_get(o, key) : NULL;

	*out = dflt;
	if (is_auto)
		*is_auto = false;
	if (!v || json_is_null(v))
		return 0;
	if (json_is_boolean(v)) {
		*out = json_is_true(v);
		return 0;
	}
	if (is_auto && is_auto_value(v)) {
		*is_auto = true;
		return 0;
	}
	return mc_err(err, errlen, "%s: %s%s: expected true or false%s", name,
		      path, key, is_auto ? " (or \"auto\")" : "");
}

static int get_count(json_t *o, const char *name, const char *path,
		     const char *key, uint64_t min, uint64_t max, uint64_t *out,
		     bool *is_auto, char *err, size_t errlen)
{
	json_t *v = o ? json_object_get(o, key) : NULL;

	if (is_auto)
		*is_auto = false;
	if (!v || json_is_null(v))
		return 0;
	if (is_auto && is_auto_value(v)) {
		*is_auto = true;
		return 0;
	}
	/* DeepSpeed's configs write 1e8 as a number: a whole real is a
	 * count too. */
	if (json_is_real(v) && json_real_value(v) >= (double)min &&
	    json_real_value(v) <= (double)max &&
	    json_real_value(v) == (double)(uint64_t)json_real_value(v)) {
		*out = (uint64_t)json_real_value(v);
		return 0;
	}
	if (!json_is_integer(v) || json_integer_value(v) < (json_int_t)min ||
	    (uint64_t)json_integer_value(v) > max)
		return mc_err(err, errlen, "%s: %s%s: expected an integer from "
			      "%llu to %llu%s", name, path, key,
			      (unsigned long long)min, (unsigned long long)max,
			      is_auto ? " (or \"auto\")" : "");
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

static int get_device(json_t *zero, const char *name, const char *key,
		      enum mc_ds_device *dev, json_t **sub, bool *is_auto,
		      char *err, size_t errlen)
{
	json_t *o, *v;
	int i;

	*dev = MC_DS_NONE;
	*is_auto = false;
	if (get_obj(zero, name, key, &o, err, errlen) < 0)
		return -1;
	*sub = o;
	if (!o)
		return 0;
	v = json_object_get(o, "device");
	if (!v || json_is_null(v))
		return 0;	/* DeepSpeed's default: none */
	if (is_auto_value(v)) {
		*is_auto = true;	/* Accelerate's --*_device fills it */
		return 0;
	}
	if (!json_is_string(v))
		return mc_err(err, errlen, "%s: zero_optimization.%s.device: "
			      "expected none, cpu, nvme or \"auto\"", name,
			      key);
	for (i = 0; mc_ds_device_words[i]; i++)
		if (!strcmp(json_string_value(v), mc_ds_device_words[i]))
			break;
	if (!mc_ds_device_words[i]) {
		char q[32 * 4 + 4];

		/* the job file's text, escaped: it reaches slurmd's log */
		return mc_err(err, errlen, "%s: zero_optimization.%s.device: "
			      "expected none, cpu, nvme or \"auto\", got \"%s\"", name,
			      key, mc_escape(json_string_value(v), 32, q,
					     sizeof(q)));
	}
	*dev = (enum mc_ds_device)i;
	return 0;
}

/* Whether key is present (not null) in o. */
static bool has_key(json_t *o, const char *key)
{
	json_t *v = o ? json_object_get(o, key) : NULL;

	return v && !json_is_null(v);
}

/*
 * A legacy key that DeepSpeed's DeepSpeedConfigModel turns into its new
 * one (config_utils.py _process_deprecated_field): refused beside the new
 * key as DeepSpeed refuses it ("Cannot provide deprecated parameter ...
 * and replacing parameter ... together").
 */
static int legacy_beside(json_t *zero, const char *name, const char *old,
			 const char *new_key, char *err, size_t errlen)
{
	if (has_key(zero, old) && has_key(zero, new_key))
		return mc_err(err, errlen, "%s: zero_optimization.%s: a legacy "
			      "key beside its new one, %s (DeepSpeed refuses "
			      "both together): keep %s", name, old, new_key,
			      new_key);
	return 0;
}

/*
 * The 16-bit gather on save under each of its names, as DeepSpeed's
 * DeepSpeedZeroConfig reads them (zero/config.py): the field
 * gather_16bit_weights_on_model_save, its alias
 * stage3_gather_16bit_weights_on_model_save (pydantic populate_by_name:
 * either is the field), and the deprecated
 * stage3_gather_fp16_weights_on_model_save that sets it.
 */
static int gather_keys(json_t *zero, const char *name, struct mc_ds_facts *d,
		       char *err, size_t errlen)
{
	static const char *const keys[] = {
		"stage3_gather_16bit_weights_on_model_save",
		"gather_16bit_weights_on_model_save",
		"stage3_gather_fp16_weights_on_model_save",
	};
	bool v[3], a[3];

	for (int i = 0; i < 3; i++)
		if (get_bool(zero, name, "zero_optimization.", keys[i], false,
			     &v[i], &a[i], err, errlen))
			return -1;
	if (has_key(zero, keys[0]) && has_key(zero, keys[1]) &&
	    (v[0] != v[1] || a[0] != a[1]))
		return mc_err(err, errlen, "%s: zero_optimization.%s and %s: "
			      "two names of one setting that disagree: keep "
			      "one", name, keys[0], keys[1]);
	if (legacy_beside(zero, name, keys[2], keys[0], err, errlen) ||
	    legacy_beside(zero, name, keys[2], keys[1], err, errlen))
		return -1;
	d->gather_16bit_on_save = v[0] || v[1] || v[2];
	if (a[0] || a[1] || a[2])
		d->auto_mask |= MC_DS_AUTO_GATHER_16BIT;
	return 0;
}

/*
 * DeepSpeed's legacy offload booleans (zero/config.py, deprecated):
 * cpu_offload sets offload_optimizer {device: cpu}, cpu_offload_param
 * sets offload_param {device: cpu}, each refused beside its new key;
 * cpu_offload_use_pin_memory only pins (no new key is set, the size is
 * the same): read, checked, and no term of its own.
 */
static int legacy_offload_keys(json_t *zero, const char *name,
			       struct mc_ds_facts *d, char *err,
			       size_t errlen)
{
	bool opt = false, par = false, pin = false;

	if (get_bool(zero, name, "zero_optimization.", "cpu_offload", false,
		     &opt, NULL, err, errlen) ||
	    get_bool(zero, name, "zero_optimization.", "cpu_offload_param",
		     false, &par, NULL, err, errlen) ||
	    get_bool(zero, name, "zero_optimization.",
		     "cpu_offload_use_pin_memory", false, &pin, NULL, err,
		     errlen) ||
	    legacy_beside(zero, name, "cpu_offload", "offload_optimizer", err,
			  errlen) ||
	    legacy_beside(zero, name, "cpu_offload_param", "offload_param",
			  err, errlen))
		return -1;
	if (opt)
		d->offload_optimizer = MC_DS_CPU;
	if (par)
		d->offload_param = MC_DS_CPU;
	return 0;
}

/* zero_optimization (zero: NULL when absent): the stage, the offload
 * devices and their buffers, the 16-bit gather on save. */
static int zero_keys(json_t *zero, const char *name, struct mc_ds_facts *d,
		     char *err, size_t errlen)
{
	json_t *oo = NULL, *op = NULL;
	uint64_t u;
	bool a1, a2;

	if (zero && json_object_get(zero, "stage")) {
		u = 0;
		if (get_count(zero, name, "zero_optimization.", "stage", 0, 3,
			      &u, &a1, err, errlen))
			return mc_err(err, errlen, "%s: zero_optimization."
				      "stage: expected 0, 1, 2, 3 or \"auto\"",
				      name);
		d->has_stage = !a1;
		d->stage = (uint32_t)u;
		if (a1)
			d->auto_mask |= MC_DS_AUTO_STAGE;
	}
	if (get_device(zero, name, "offload_optimizer", &d->offload_optimizer,
		       &oo, &a1, err, errlen) ||
	    get_device(zero, name, "offload_param", &d->offload_param, &op,
		       &a2, err, errlen))
		return -1;
	if (a1)
		d->auto_mask |= MC_DS_AUTO_OFFLOAD_OPTIMIZER;
	if (a2)
		d->auto_mask |= MC_DS_AUTO_OFFLOAD_PARAM;
	if (legacy_offload_keys(zero, name, d, err, errlen))
		return -1;
	u = d->optimizer_buffer_count;
	if (get_count(oo, name, "zero_optimization.offload_optimizer.",
		      "buffer_count", 1, 1024, &u, NULL, err, errlen))
		return -1;
	d->optimizer_buffer_count = (uint32_t)u;
	u = d->param_buffer_count;
	if (get_count(op, name, "zero_optimization.offload_param.",
		      "buffer_count", 1, 1024, &u, NULL, err, errlen))
		return -1;
	d->param_buffer_count = (uint32_t)u;
	if (get_count(op, name, "zero_optimization.offload_param.",
		      "buffer_size", 1, 1ULL << 40, &d->param_buffer_size,
		      NULL, err, errlen))
		return -1;
	return gather_keys(zero, name, d, err, errlen);
}

int mc_dsconfig_parse(const char *text, size_t len, const char *name,
		      struct mc_ds_facts *d, char *err, size_t errlen)
{
	json_t *o, *zero = NULL, *act = NULL, *bf = NULL, *fp = NULL;
	uint64_t u;
	bool bf16 = false, fp16 = false, bf_auto, fp_auto;
	int rc = -1;

	memset(d, 0, sizeof(*d));
	d->optimizer_buffer_count = 4;
	d->param_buffer_count = 5;
	d->param_buffer_size = 100000000;
	o = mc_jsonfile_parse(text, len, name, true, err, errlen);
	if (!o)
		return -1;
	if (!json_is_object(o)) {
		mc_err(err, errlen, "%s: expected a JSON object (a DeepSpeed "
		       "config)", name);
		goto out;
	}
	if (get_obj(o, name, "zero_optimization", &zero, err, errlen) ||
	    get_obj(o, name, "activation_checkpointing", &act, err, errlen) ||
	    get_obj(o, name, "bf16", &bf, err, errlen) ||
	    get_obj(o, name, "fp16", &fp, err, errlen) ||
	    zero_keys(zero, name, d, err, errlen))
		goto out;
	if (get_bool(act, name, "activation_checkpointing.",
		     "cpu_checkpointing", false, &d->cpu_checkpointing, NULL,
		     err, errlen) ||
	    get_bool(act, name, "activation_checkpointing.",
		     "partition_activations", false, &d->partition_activations,
		     NULL, err, errlen))
		goto out;
	u = 0;
	if (get_count(o, name, "", "train_micro_batch_size_per_gpu", 1,
		      1u << 20, &u, &d->micro_batch_auto, err, errlen))
		goto out;
	d->micro_batch = (uint32_t)u;
	if (get_bool(bf, name, "bf16.", "enabled", false, &bf16, &bf_auto, err,
		     errlen) ||
	    get_bool(fp, name, "fp16.", "enabled", false, &fp16, &fp_auto, err,
		     errlen))
		goto out;
	d->dtype_bytes = bf16 || fp16 ? 2 : bf_auto || fp_auto ? 0 : 4;
	rc = 0;
out:
	json_decref(o);
	return rc;
}
