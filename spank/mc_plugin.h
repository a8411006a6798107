/*
 * mc_plugin.h - the state of memcore.so in one Slurm process (srun, sbatch,
 * salloc, slurmd or one slurmstepd): the policy from plugstack.conf and
 * memcore.conf, and the user's options. SPANK option callbacks carry no
 * context pointer, so this one struct is the plugin's only global; every
 * function below takes it explicitly.
 */
#ifndef MC_PLUGIN_H
#define MC_PLUGIN_H

#include <stdbool.h>

#include <slurm/spank.h>

#include "mc_config.h"
#include "mc_opts.h"

struct mc_plugin {
	bool initialized;		/* init ran (plugin listed twice?) */
	struct mc_config cfg;
	/* A broken policy file or plugstack argument: "" when fine. Never
	 * fatal in init (that would drain the node); delivered to GPU steps. */
	char cfg_err[MC_ERR_MAX];
	struct mc_opts opts;
	/* An option value that arrived bad in slurmstepd (a newer srun, a
	 * hand-set variable): delivered with the verdict. */
	char opts_err[MC_ERR_MAX];
};

/*
 * Parse plugstack.conf arguments: `config=PATH` (default
 * MC_DEFAULT_CONFIG) and any memcore.conf key as `key=value`, which
 * overrides the file. Fills p->cfg and p->cfg_err.
 */
void mc_plugin_configure(struct mc_plugin *p, int ac, char **av);

/* Register the options with Slurm (every context that sees them). */
int mc_plugin_register_options(struct mc_plugin *p, spank_t sp);

/*
 * Apply the MEMCORE_* environment defaults: in srun/sbatch/salloc from the
 * process environment, in slurmstepd from the job's. Returns 0 or -1 with
 * err set (a bad value).
 */
int mc_plugin_env_defaults(struct mc_plugin *p, spank_t sp, bool remote,
			   char *err, size_t errlen);

/* slurmstepd: the verdict for this task's step, delivered (mc_stepd.c). */
int mc_stepd_task_init_privileged(struct mc_plugin *p, spank_t sp);

#endif
