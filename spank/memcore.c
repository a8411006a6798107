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
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "mc_plugin.h"

SPANK_PLUGIN(memcore, 1);

static struct mc_plugin plugin;

/*
 * memcore's own time in a slurmstepd, hook by hook, for the launch
 * profile (BENCHMARKS.md, `make bench`): slurmstepd's hooks add up and
 * are logged at debug level when the step ends; the task hooks run in
 * each task's process before its program and are logged there.
 */
enum { T_INIT, T_POST_OPT, T_USER_INIT, T_POST_FORK, T_TASK_EXIT, T_EXIT,
       T_TASK_PRIV, T_TASK_INIT, T_COUNT };
static long spent_us[T_COUNT];

static long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000L + ts.tv_nsec / 1000;
}
#define MC_TIMED(slot, expr)						\
	({ long t0_ = now_us(); __typeof__(expr) r_ = (expr);		\
	   spent_us[slot] += now_us() - t0_; r_; })

static const char *step_name(void)
{
	return plugin.step_loaded ? plugin.step.step_name : "(unread)";
}

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
	/* slurmstepd reads memcore.conf once it knows the step has GPUs
	 * (mc_stepd_step): a CPU-only step never parses it. */
	plugin.ac = ac;
	plugin.av = av;
	if (ctx != S_CTX_REMOTE) {
		plugin.configured = true;
		mc_plugin_configure(&plugin, ac, av);
	}
	if (ctx == S_CTX_SLURMD)
		return mc_slurmd_init(&plugin);
	if (ctx == S_CTX_LOCAL || ctx == S_CTX_ALLOCATOR ||
	    ctx == S_CTX_REMOTE)
		return MC_TIMED(T_INIT,
				mc_plugin_register_options(&plugin, sp));
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
		/* Options that no policy accepts together (--offload without
		 * --zero-stage) stop it too: only here are all known. */
		if (mc_opts_check(&plugin.opts, err, sizeof(err)) < 0) {
			slurm_error("memcore: %s", err);
			MC_ONCE_RETURN(-1);
		}
	} else if (ctx == S_CTX_REMOTE) {
		long t0 = now_us();

		if (mc_plugin_env_defaults(&plugin, sp, true, err,
					   sizeof(err)) < 0 &&
		    !plugin.opts_err[0])
			snprintf(plugin.opts_err, sizeof(plugin.opts_err),
				 "%s", err);
		mc_stepd_init_post_opt(&plugin, sp);
		spent_us[T_POST_OPT] += now_us() - t0;
	}
	return 0;
}

int slurm_spank_task_init_privileged(spank_t sp, int ac, char **av)
{
	if (spank_context() != S_CTX_REMOTE)
		return 0;
	MC_ONCE();
	long t0 = now_us();

	mc_bind_task_init_privileged(&plugin, sp);
	once_rc = mc_stepd_task_init_privileged(&plugin, sp);
	spent_us[T_TASK_PRIV] += now_us() - t0;
	return once_rc;
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
	if (spank_context() != S_CTX_REMOTE)
		return 0;
	MC_ONCE();
	MC_ONCE_RETURN(MC_TIMED(T_USER_INIT,
				mc_enforce_user_init(&plugin, sp)));
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	if (spank_context() != S_CTX_REMOTE)
		return 0;
	MC_ONCE();
	once_rc = MC_TIMED(T_TASK_INIT, mc_bind_task_init(&plugin, sp));
	if (plugin.step_loaded && !mc_step_ignored(&plugin.step)) {
		int task = -1;

		spank_get_item(sp, S_TASK_ID, &task);
		slurm_debug("memcore: step %s task %d: memcore took %ld us "
			    "before the program (task_init_privileged %ld, "
			    "task_init %ld)", step_name(), task,
			    spent_us[T_TASK_PRIV] + spent_us[T_TASK_INIT],
			    spent_us[T_TASK_PRIV], spent_us[T_TASK_INIT]);
	}
	return once_rc;
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
	MC_TIMED(T_POST_FORK, mc_enforce_task_post_fork(&plugin, sp));
	MC_TIMED(T_POST_FORK, (mc_after_task_post_fork(&plugin, sp), 0));
	return 0;
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
	/* The summary reads the step's cgroup before enforce removes it. */
	MC_TIMED(T_TASK_EXIT, (mc_after_task_exit(&plugin, sp), 0));
	return last_rc = MC_TIMED(T_TASK_EXIT,
				  mc_enforce_task_exit(&plugin, sp));
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	if (spank_context() != S_CTX_REMOTE)
		return 0;
	MC_ONCE();
	MC_TIMED(T_EXIT, (mc_after_exit(&plugin, sp), 0));
	once_rc = MC_TIMED(T_EXIT, mc_enforce_exit(&plugin, sp));
	slurm_debug("memcore: step %s: memcore took %ld us in slurmstepd "
		    "(init %ld, init_post_opt %ld, user_init %ld, "
		    "task_post_fork %ld, task_exit %ld, exit %ld)",
		    step_name(),
		    spent_us[T_INIT] + spent_us[T_POST_OPT] +
		    spent_us[T_USER_INIT] + spent_us[T_POST_FORK] +
		    spent_us[T_TASK_EXIT] + spent_us[T_EXIT],
		    spent_us[T_INIT], spent_us[T_POST_OPT],
		    spent_us[T_USER_INIT], spent_us[T_POST_FORK],
		    spent_us[T_TASK_EXIT], spent_us[T_EXIT]);
	free(plugin.verdict_text);	/* slurmstepd ends with no leak */
	plugin.verdict_text = NULL;
	return once_rc;
}
