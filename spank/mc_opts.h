/*
 * mc_opts.h - the user's memcore options, the same under sbatch, salloc and
 * srun: --dataloader-workers, --model-params, --zero-stage, --offload,
 * --memcore=explain|warn, each with an environment default
 * (MEMCORE_DATALOADER_WORKERS, MEMCORE_MODEL_PARAMS, MEMCORE_ZERO_STAGE,
 * MEMCORE_OFFLOAD, MEMCORE_MODE). An option on the command line wins over
 * its variable.
 *
 * The values are parsed by pure functions here, so the plugin's callbacks,
 * its environment defaults and the unit tests share one parser.
 */
#ifndef MC_OPTS_H
#define MC_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum mc_opt_id {
	MC_OPT_WORKERS = 0,
	MC_OPT_PARAMS,
	MC_OPT_STAGE,
	MC_OPT_OFFLOAD,
	MC_OPT_MODE,
	MC_OPT_COUNT
};

/* --memcore=... flags */
#define MC_USER_EXPLAIN 0x1
#define MC_USER_WARN 0x2

struct mc_opts {
	bool set[MC_OPT_COUNT];		/* given by option or variable */
	bool from_env[MC_OPT_COUNT];	/* ... and by the variable */
	uint32_t workers;
	uint64_t params;
	uint32_t stage;
	int offload;			/* enum mc_offload */
	unsigned mode;			/* MC_USER_* */
};

/* The option's name without dashes ("dataloader-workers") and its
 * environment variable ("MEMCORE_DATALOADER_WORKERS"). */
const char *mc_opt_name(enum mc_opt_id id);
const char *mc_opt_env(enum mc_opt_id id);

/*
 * Parse one value into o. from_env says it came from the variable. A second
 * value for an option already set on the command line is accepted when it
 * is the same and refused when it differs; a variable never overrides an
 * option. Returns 0, or -1 with err = "--dataloader-workers=abc: not a
 * number" (or "MEMCORE_DATALOADER_WORKERS=abc: ...").
 */
int mc_opts_set(struct mc_opts *o, enum mc_opt_id id, const char *value,
		bool from_env, char *err, size_t errlen);

#endif
