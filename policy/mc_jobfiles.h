/*
 * mc_jobfiles.h - the figures of a job's own configuration files
 * (--deepspeed-config, --model-config), from where they are read to the
 * request the rules judge.
 *
 * Where the files are read, and why there: in the user's own processes
 * only - srun, sbatch and salloc (SPANK local and allocator contexts, which
 * run as the job's user), memcore check and the cli_filter (which runs
 * memcore check as the user) - never in slurmd or slurmstepd, which run as
 * root. Reading as the user makes the kernel apply the user's own
 * permissions: a file only root may read is refused there with EACCES and
 * never opened by root on the user's behalf (a root read would be a
 * confused deputy: the path is the user's to choose). Dropping to the
 * user's uid in slurmstepd for the read was the alternative; it is not
 * sound there: slurmstepd is multi-threaded and setfsuid/seteuid are
 * per-thread or process-wide races, supplementary groups and ACLs need
 * initgroups, and the path is relative to the submission's directory,
 * which may not exist on the node. The figures (a few numbers) travel to
 * slurmstepd in the job's environment, MEMCORE_JOB_FILES: the user could
 * forge them, but they are the user's own claims either way, exactly as
 * --model-params is, and slurmstepd parses them strictly.
 */
#ifndef MC_JOBFILES_H
#define MC_JOBFILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mc_dsconfig.h"
#include "mc_hfconfig.h"
#include "mc_opts.h"
#include "mc_rules.h"
#include "mc_trainer.h"

/* The job environment variable that carries the figures. */
#define MC_JOBFILES_ENV "MEMCORE_JOB_FILES"
#define MC_JOBFILES_NAME_MAX 64

struct mc_jobfiles {
	bool has_ds, has_model;
	char ds_name[MC_JOBFILES_NAME_MAX];	/* the file's base name */
	char model_name[MC_JOBFILES_NAME_MAX];
	struct mc_ds_facts ds;
	struct mc_model_shape model;
	/* --accelerate-config / --torchtune-config / --lora-config: the
	 * trainer's settings (its DeepSpeed part is in ds above), the file
	 * that gave them, and LoRA's trainable parameters counted on the
	 * model (0: not known). */
	bool has_trainer;
	char trainer_name[MC_JOBFILES_NAME_MAX];
	struct mc_trainer_facts tr;
	uint64_t lora_trainable;
};

/*
 * Read and parse the files the options name (as the calling user; see
 * above). A file of another kind than its option's is refused naming what
 * it is and its option (mc_filekind.h); an Accelerate config's
 * deepspeed_config_file is read as --deepspeed-config would be, and
 * refused beside --deepspeed-config; a LoRA adapter's trainable
 * parameters are counted on --model-config's shape (mc_lora_params).
 * Returns 0 (f->has_* say which were named), or -1 with err naming the
 * option, the file, the key and what was expected.
 */
int mc_jobfiles_load(const struct mc_opts *o, struct mc_jobfiles *f,
		     char *err, size_t errlen);

/* The figures as MEMCORE_JOB_FILES' value ("ds=1,stage=3,..."); returns
 * buf, "" when no file was named. */
const char *mc_jobfiles_format(const struct mc_jobfiles *f, char *buf,
			       size_t len);

/* Parse MEMCORE_JOB_FILES' value back. Returns 0, or -1 with err =
 * "MEMCORE_JOB_FILES: KEY=VALUE: ..." */
int mc_jobfiles_parse(const char *s, struct mc_jobfiles *f, char *err,
		      size_t errlen);

/*
 * Fill what the options left unset from the files, and say so: the
 * request r (after mc_opts_request) gets the model's parameters, largest
 * layer, layers and hidden size, the ZeRO stage and offload from
 * ds_config, cpu_checkpointing, partition_activations, micro-batch, the
 * activation dtype, nvme's pinned buffers and the 16-bit gather on save.
 * Explicit options override the files. Every value that a file gave, an
 * option overrode, or that another value makes moot is added to
 * r->use.notes. f may be NULL (no files: only the moot notes).
 */
void mc_jobfiles_apply(const struct mc_jobfiles *f, const struct mc_opts *o,
		       const struct mc_policy *p, struct mc_request *r);



/*
 * The options and the files' figures taken together, before submission
 * (mc_opts_check's companion): the request built from both must pass
 * mc_request_check without a policy (cpu_checkpointing without a sequence
 * length, ds_config's offload_param cpu below stage 3, ...). f may be
 * NULL. Returns 0 or -1 with err.
 */
int mc_jobfiles_check(const struct mc_jobfiles *f, const struct mc_opts *o,
		      char *err, size_t errlen);

#endif
