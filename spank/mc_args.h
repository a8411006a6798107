/*
 * mc_args.h - the plugin's arguments and options: plugstack.conf, memcore's
 * --options, MEMCORE_* defaults, the job's files read as the user
 * (spank/mc_args.c).
 */
#ifndef MC_ARGS_H
#define MC_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <slurm/spank.h>

struct mc_plugin;

/*
 * Parse plugstack.conf arguments: `config=PATH` (default
 * MC_DEFAULT_CONFIG), `cache=PATH|none` (the node-facts cache, default
 * mc_cache_default_path()) and any memcore.conf key as `key=value`, which
 * overrides the file. Fills p->cfg, p->cache_path and p->cfg_err.
 */
void mc_plugin_configure(struct mc_plugin *p, int ac, char **av);

/* Register the options with Slurm (every context that sees them). */
int mc_plugin_register_options(struct mc_plugin *p, spank_t sp);

/*
 * Apply the MEMCORE_* environment defaults: in srun/sbatch/salloc from the
 * process environment, in slurmstepd from the job's, whole whatever
 * their length. Returns 0 or -1 with err set (a bad value, or one longer
 * than MC_OPT_VALUE_MAX, named by its variable).
 */
int mc_plugin_env_defaults(struct mc_plugin *p, spank_t sp, bool remote,
			   char *err, size_t errlen);

/*
 * srun/sbatch/salloc (the user's own process): read --deepspeed-config and
 * --model-config as the user, check them with the options, and put their
 * figures in the job's environment (MEMCORE_JOB_FILES, mc_jobfiles.h).
 * Returns 0, or -1 with err naming the option, file, key and what was
 * expected.
 */
int mc_plugin_job_files(struct mc_plugin *p, spank_t sp, char *err,
			size_t errlen);

/*
 * The hooks of srun, sbatch and salloc (S_CTX_LOCAL, S_CTX_ALLOCATOR),
 * which spank/memcore.c routes to.
 */

/* init: plugstack.conf's arguments read, the options registered. */
int mc_args_init(struct mc_plugin *p, spank_t sp, int ac, char **av);

/* init_post_opt: MEMCORE_* defaults, the options checked together, the
 * job's files read. -1 (said with slurm_error) stops the submission. */
int mc_args_init_post_opt(struct mc_plugin *p, spank_t sp);

#endif
