/*
 * memcore.c - the SPANK entry points: a dispatcher by context. The work is
 * in mc_args.c (options and plugstack arguments), mc_stepd.c (the
 * verdict in slurmstepd), mc_enforce.c (the step's memory cgroup, OOM
 * reports) and mc_bind.c (NUMA binding of each task).
 *
 * Where each step of the work sits follows what Slurm 22.05 does with a
 * failure (DESIGN.md "Facts about SPANK"): a bad option is refused by its
 * callback in srun/sbatch/salloc before anything is queued; nothing fails in
 * remote init (that can drain a node); the refusal comes from
 * slurm_spank_task_init_privileged, which srun and sbatch report to the user.
 */
#include <stdio.h>
#include <string.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "mc_plugin.h"

SPANK_PLUGIN(memcore, 1);

static struct mc_plugin plugin;

/*
 * Listed twice in plugstack.conf, Slurm 22.05 dlopens the same file once but
 * calls every hook once per line, back to back in the same process. Each
 * hook below runs its work once and answers the repeat with the first
 * result: one verdict, one cgroup write, one warning. init, init_post_opt,
 * user_init and exit run once per process; task_init_privileged and
 * task_init in each task's own forked process; task_exit in slurmstepd once
 * per task, so that one is keyed by the task.
 */
#define MC_ONCE()						\
	static bool once_done;					\
	static int once_rc;					\
	if (once_done)						\
		return once_rc;					\
	once_done = true
#define MC_ONCE_RETURN(expr) return (once_rc = (expr))

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	spank_context_t ctx = spank_context();

	/* Listed twice in plugstack.conf, Slurm loads the same .so once and
	 * calls init again: one set of options, one verdict. */
	if (plugin.initialized)
		return 0;
	plugin.initialized = true;
	if (ctx == S_CTX_JOB_SCRIPT)
		return 0;
	mc_plugin_configure(&plugin, ac, av);
	if (ctx == S_CTX_SLURMD)
		return mc_slurmd_init(&plugin);
	if (ctx == S_CTX_LOCAL || ctx == S_CTX_ALLOCATOR ||
	    ctx == S_CTX_REMOTE)
		return mc_plugin_register_options(&plugin, sp);
	return 0;
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	spank_context_t ctx = spank_context();
	char err[MC_ERR_MAX];
	MC_ONCE();

	if (ctx == S_CTX_LOCAL || ctx == S_CTX_ALLOCATOR) {
		/* A bad MEMCORE_* variable stops the submission here, as a
		 * bad option does in its callback. */
		if (mc_plugin_env_defaults(&plugin, sp, false, err,
					   sizeof(err)) < 0) {
			slurm_error("memcore: %s", err);
			MC_ONCE_RETURN(-1);
		}
	} else if (ctx == S_CTX_REMOTE) {
		if (mc_plugin_env_defaults(&plugin, sp, true, err,
					   sizeof(err)) < 0 &&
		    !plugin.opts_err[0])
			snprintf(plugin.opts_err, sizeof(plugin.opts_err),
				 "%s", err);
		mc_enforce_prewarm(&plugin, sp);
		mc_stepd_preload_facts(&plugin, sp);
	}
	return 0;
}

int slurm_spank_task_init_privileged(spank_t sp, int ac, char **av)
{
	if (spank_context() != S_CTX_REMOTE)
		return 0;
	MC_ONCE();
	mc_bind_task_init_privileged(&plugin, sp);
	MC_ONCE_RETURN(mc_stepd_task_init_privileged(&plugin, sp));
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
	if (spank_context() != S_CTX_REMOTE)
		return 0;
	MC_ONCE();
	MC_ONCE_RETURN(mc_enforce_user_init(&plugin, sp));
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	if (spank_context() != S_CTX_REMOTE)
		return 0;
	MC_ONCE();
	MC_ONCE_RETURN(mc_bind_task_init(&plugin, sp));
}

int slurm_spank_task_post_fork(spank_t sp, int ac, char **av)
{
	static bool seen;
	static int last_task;
	int task = -1;

	if (spank_context() != S_CTX_REMOTE)
		return 0;
	spank_get_item(sp, S_TASK_ID, &task);
	if (seen && task == last_task)
		return 0;	/* the same task, second plugstack line */
	seen = true;
	last_task = task;
	return mc_enforce_task_post_fork(&plugin, sp);
}

int slurm_spank_task_exit(spank_t sp, int ac, char **av)
{
	static bool seen;
	static int last_task, last_rc;
	int task = -1;

	if (spank_context() != S_CTX_REMOTE)
		return 0;
	spank_get_item(sp, S_TASK_ID, &task);
	if (seen && task == last_task)
		return last_rc;	/* the same task, second plugstack line */
	seen = true;
	last_task = task;
	return last_rc = mc_enforce_task_exit(&plugin, sp);
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	if (spank_context() != S_CTX_REMOTE)
		return 0;
	MC_ONCE();
	MC_ONCE_RETURN(mc_enforce_exit(&plugin, sp));
}
