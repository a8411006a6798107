/*
 * mc_opts.h - the user's memcore options, the same under sbatch, salloc and
 * srun and for `memcore check`: --dataloader-workers, --model-params,
 * --zero-stage, --offload, --largest-layer-params, --zero-init,
 * --memcore=explain|warn, the job's files, its other uses of host RAM and
 * its dataset (--dataset, --dataset-in-memory[=SIZE]), each with an environment default
 * (MEMCORE_DATALOADER_WORKERS, MEMCORE_MODEL_PARAMS, MEMCORE_ZERO_STAGE,
 * MEMCORE_OFFLOAD, MEMCORE_LARGEST_LAYER_PARAMS, MEMCORE_ZERO_INIT,
 * MEMCORE_MODE). An option on the command line wins over its variable.
 *
 * One parser with one set of messages: the plugin's option callbacks, its
 * environment defaults, the memcore command's flags and the unit tests all
 * go through mc_opts_set(), and mc_opts_request() turns the result into the
 * request the rules take. Pure C, no I/O, no allocation.
 */
#ifndef MC_OPTS_H
#define MC_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mc_config.h"
#include "mc_rules.h"

enum mc_opt_id {
	MC_OPT_WORKERS = 0,
	MC_OPT_PARAMS,
	MC_OPT_STAGE,
	MC_OPT_OFFLOAD,
	MC_OPT_MODE,
	MC_OPT_LARGEST_LAYER,
	MC_OPT_ZERO_INIT,
	/* the job's own files and its other uses of host RAM */
	MC_OPT_DS_CONFIG,		/* --deepspeed-config=ds_config.json */
	MC_OPT_MODEL_CONFIG,		/* --model-config=config.json */
	MC_OPT_MODEL_DTYPE,		/* --model-dtype=fp32|bf16|fp16 */
	MC_OPT_MODEL_LOAD,		/* --model-load=per-rank|rank0|meta */
	MC_OPT_SAVE,			/* --checkpoint-save=none|rank0|all */
	MC_OPT_SAVE_OPTIM,		/* --save-optimizer=yes|no */
	MC_OPT_CPU_CKPT,		/* --cpu-checkpointing=yes|no */
	MC_OPT_SEQ_LEN,			/* --seq-len=N */
	MC_OPT_MICRO_BATCH,		/* --micro-batch=N */
	MC_OPT_MODEL_PARALLEL,		/* --model-parallel=N */
	MC_OPT_RAM_PER_WORKER,		/* --ram-per-worker=SIZE */
	MC_OPT_DATASET,			/* --dataset=PATH[,PATH...] */
	MC_OPT_DATASET_IN_MEMORY,	/* --dataset-in-memory[=SIZE] */
	MC_OPT_COUNT
};

/* --memcore=... flags */
#define MC_USER_EXPLAIN 0x1
#define MC_USER_WARN 0x2

/* The longest MEMCORE_* value taken (no valid one comes near). */
#define MC_OPT_VALUE_MAX 255

/* --deepspeed-config / --model-config: the longest path taken */
#define MC_OPT_PATH_MAX 1024

/* --dataloader-workers=8+2: at most this many loaders (parts) per rank */
#define MC_WORKERS_PARTS_MAX 8

struct mc_opts {
	bool set[MC_OPT_COUNT];		/* given by option or variable */
	bool from_env[MC_OPT_COUNT];	/* ... and by the variable */
	uint32_t workers;		/* per GPU, all loaders together */
	uint32_t worker_parts[MC_WORKERS_PARTS_MAX]; /* each loader's */
	uint32_t n_worker_parts;	/* 1 for a plain N */
	uint64_t params;
	uint32_t stage;
	int offload;			/* enum mc_offload */
	unsigned mode;			/* MC_USER_* */
	uint64_t largest_layer_params;	/* of the largest layer */
	int zero_init;			/* 1 yes, 0 no (when set) */
	char ds_config[MC_OPT_PATH_MAX];	/* paths as given ("" none) */
	char model_config[MC_OPT_PATH_MAX];
	int model_dtype;		/* mc_dtype_words index */
	int model_load;			/* enum mc_load */
	int save;			/* enum mc_save */
	int save_optimizer;		/* 1 yes, 0 no */
	int cpu_checkpointing;		/* 1 yes, 0 no */
	uint32_t seq_len, micro_batch, model_parallel;
	uint64_t ram_per_worker_bytes;
	char dataset[MC_OPT_PATH_MAX];	/* as given ("" none) */
	/* --dataset-in-memory's SIZE, one copy in RAM; 0 with the option
	 * set: the --dataset paths' measured size (mc_opts_dataset_measured) */
	uint64_t dataset_in_memory_bytes;
	int dataset_kind;		/* enum mc_dataset_kind (:KIND) */
};

/* The option's name without dashes ("dataloader-workers"), its
 * environment variable ("MEMCORE_DATALOADER_WORKERS"), the word for its
 * value in usage texts ("N") and its one-line help (without "[memcore]"). */
const char *mc_opt_name(enum mc_opt_id id);
const char *mc_opt_env(enum mc_opt_id id);
const char *mc_opt_arginfo(enum mc_opt_id id);
const char *mc_opt_help(enum mc_opt_id id);

/* Whether the option's value may be left out (--dataset-in-memory): a
 * SPANK option with has_arg 2, getopt's optional_argument ("--name=V"). */
bool mc_opt_value_optional(enum mc_opt_id id);

/* The option whose name (without dashes) is `name`, or -1. */
int mc_opt_lookup(const char *name);

/*
 * Parse one value into o. --dataloader-workers takes N or a sum of several
 * DataLoaders' workers per rank, "8+2" (train + validation loaders): each
 * part a count, at most MC_WORKERS_PARTS_MAX parts, the total (what the
 * rules use, and what MaxDataloaderWorkers limits) at most
 * MC_WORKERS_LIMIT; an empty part ("8+", "+2", "8++2") is refused. from_env says it came from the variable. A second
 * value for an option already set on the command line is accepted when it
 * is the same and refused when it differs; a variable never overrides an
 * option. Returns 0, or -1 with err = "--dataloader-workers=abc: not a
 * number" (or "MEMCORE_DATALOADER_WORKERS=abc: ..."), o unchanged.
 */
int mc_opts_set(struct mc_opts *o, enum mc_opt_id id, const char *value,
		bool from_env, char *err, size_t errlen);

/*
 * One environment default, the same in the plugin (srun/sbatch/salloc and
 * slurmstepd) and in `memcore check`: value is the variable's (NULL when
 * unset). An empty variable is an unset one (`export MEMCORE_OFFLOAD=`
 * drops it); an option already given on the command line wins; a value
 * longer than MC_OPT_VALUE_MAX is refused. Returns 0, or -1 with err =
 * "MEMCORE_DATALOADER_WORKERS=abc: not a number", o unchanged.
 */
int mc_opts_set_env(struct mc_opts *o, enum mc_opt_id id, const char *value,
		    char *err, size_t errlen);

/*
 * The request fields that come from the user's options, with the policy's
 * defaults for what was not given: dataloader_workers (DataloaderWorkers),
 * model_params, zero_stage, offload, largest_layer_params (0 = unknown)
 * and zero_init (MC_ZERO_INIT_POLICY: the policy's ZeroInit). The other
 * fields of r (GPUs, nodes, GPU memory) are left as they are.
 */
void mc_opts_request(const struct mc_opts *o, const struct mc_policy *p,
		     struct mc_request *r);

/* DataLoader workers per GPU: the user's (option or MEMCORE_*), else the
 * policy's DataloaderWorkers. */
uint32_t mc_opts_workers(const struct mc_opts *o, const struct mc_policy *p);

/*
 * The per-loader workers as "8+2" (one part: "10") into buf, for the
 * task's MEMCORE_DATALOADER_WORKERS_LIST; `fallback` (the policy's
 * DataloaderWorkers) when the user gave none. Returns buf.
 */
const char *mc_opts_workers_list(const struct mc_opts *o, uint32_t fallback,
				 char *buf, size_t len);

/*
 * The options taken together, once all of them (and their variables) are
 * known: refuses the combinations no policy can accept, by the rules'
 * own check (mc_request_check without a policy): --offload without
 * --zero-stage or below its stage, --offload without --model-params,
 * --largest-layer-params above --model-params. Called by the plugin in
 * srun/sbatch/salloc (init_post_opt, so that nothing is queued) and by
 * `memcore check`. Returns 0, or -1 with err naming the options and the
 * fix, and the variables that set any of them ("... (MEMCORE_OFFLOAD from
 * the environment)").
 */
int mc_opts_check(const struct mc_opts *o, char *err, size_t errlen);

/*
 * --dataset-in-memory without SIZE (the option alone, "--dataset-in-
 * memory=", or MEMCORE_DATASET_IN_MEMORY=yes): the caller measures the
 * --dataset paths (mc_dataset_in_memory_bytes) and sets the request's
 * use.dataset_bytes; mc_opts_request leaves it 0.
 */
bool mc_opts_dataset_measured(const struct mc_opts *o);

/* Whether the options name a job file (--deepspeed-config,
 * --model-config): then mc_jobfiles_check() checks them together with the
 * files' figures instead of mc_opts_check(). */
bool mc_opts_name_files(const struct mc_opts *o);

#endif
