/*
 * memcore.c - the SPANK entry points: a dispatcher by context, each hook
 * routing to one function of its context's file: mc_args.c (srun,
 * sbatch, salloc), mc_slurmd.c (slurmd), mc_stepd.c (slurmstepd, which
 * calls mc_enforce.c for the step's memory cgroup, mc_bind.c for NUMA
 * binding and mc_after.c for the summary) and mc_prolog.c (the job's
 * prolog and epilog). What stays here is what every hook shares: the
 * guard against a second plugstack line and the launch profile.
 *
 * Where each step of the work sits follows what Slurm 22.05 does with a
 * failure (spank(8), src/common/spank.c): a bad option is refused by its
 * callback in srun/sbatch/salloc before anything is queued; nothing fails in
 * remote init (that can drain a node); the refusal comes from
 * slurm_spank_task_init_privileged, which srun and sbatch report to the user.
 *
 * In slurmstepd, in the order Slurm calls them (each hook below calls the
 * modules; no module calls another's hook):
 *   init               options registered (mc_args.c)
 *   init_post_opt      MEMCORE_* defaults; the verdict, once (mc_stepd.c)
 *   user_init          the step's memory cgroup found (mc_enforce.c)
 *   after each fork, side by side (slurmstepd / the task's process):
 *   task_post_fork     per task: memcore's own cgroup made, task moved in
 *   task_init_privileged  per task: GPUs recorded (mc_bind.c), the verdict
 *                      delivered (mc_stepd.c), then, if it runs, Slurm's
 *                      limit tightened (mc_enforce.c)
 *   task_init          per task: bound, MEMCORE_* exported (mc_bind.c)
 *   task_exit          per task: OOM explained, own cgroup removed
 *   exit               own cgroup removed if still there (mc_enforce.c)
 *
 * Forked by slurmd for the job, root (mc_prolog.c):
 *   job_prolog         slurmd's view of the job kept for its steps
 *   job_epilog         removed
 */
#include <stdio.h>
#include <time.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "mc_args.h"
#include "mc_plugin.h"
#include "mc_prolog.h"
#include "mc_slurmd.h"
#include "mc_stepd.h"
#include "mc_log.h"

SPANK_PLUGIN(memcore, 1);

static struct mc_plugin plugin;

/*
 * memcore's own time in a slurmstepd, hook by hook, for the launch
 * profile (BENCHMARKS.md, `make bench`): slurmstepd's hooks add up and
 * are logged at debug level when the step ends; the task hooks run in
 * each task's process before its program and are logged there.
 */

static long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000L + ts.tv_nsec / 1000;
}
#define MC_TIMED(slot, expr)						\
	({ long t0_ = now_us(); __typeof__(expr) r_ = (expr);		\
	   plugin.spent_us[slot] += now_us() - t0_; r_; })

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
	/* Listed twice in plugstack.conf, Slurm loads the same .so once and
	 * calls init again: one set of options, one verdict. */
	if (plugin.initialized)
		return 0;
	plugin.initialized = true;
	switch (spank_context()) {
	case S_CTX_SLURMD:
		return mc_slurmd_init(&plugin, ac, av);
	case S_CTX_LOCAL:
	case S_CTX_ALLOCATOR:
		return mc_args_init(&plugin, sp, ac, av);
	case S_CTX_REMOTE:
		return MC_TIMED(MC_HOOK_INIT,
				mc_stepd_init(&plugin, sp, ac, av));
	default:
		return 0;
	}
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	spank_context_t ctx = spank_context();
	MC_ONCE();

	if (ctx == S_CTX_LOCAL || ctx == S_CTX_ALLOCATOR)
		MC_ONCE_RETURN(mc_args_init_post_opt(&plugin, sp));
	if (ctx == S_CTX_REMOTE)
		MC_TIMED(MC_HOOK_POST_OPT,
			 (mc_stepd_init_post_opt(&plugin, sp), 0));
	return 0;
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
	if (spank_context() != S_CTX_REMOTE)
		return 0;
	MC_ONCE();
	MC_ONCE_RETURN(MC_TIMED(MC_HOOK_USER_INIT,
				mc_stepd_user_init(&plugin, sp)));
}

int slurm_spank_task_init_privileged(spank_t sp, int ac, char **av)
{
	if (spank_context() != S_CTX_REMOTE)
		return 0;
	MC_ONCE();
	MC_ONCE_RETURN(MC_TIMED(MC_HOOK_TASK_PRIV,
				mc_stepd_task_init_privileged(&plugin, sp)));
}

/* The per-task line of the launch profile: memcore's time in this task's
 * process before its program. */
static void log_task_time(spank_t sp)
{
	const long *t = plugin.spent_us;
	int task = -1;

	if (!plugin.step_loaded || mc_step_ignored(&plugin.step))
		return;
	spank_get_item(sp, S_TASK_ID, &task);
	mc_log_debug("memcore: step %s task %d: memcore took %ld us before the "
		     "program (task_init_privileged %ld, task_init %ld)",
		     step_name(), task,
		     t[MC_HOOK_TASK_PRIV] + t[MC_HOOK_TASK_INIT],
		     t[MC_HOOK_TASK_PRIV], t[MC_HOOK_TASK_INIT]);
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	if (spank_context() != S_CTX_REMOTE)
		return 0;
	MC_ONCE();
	once_rc = MC_TIMED(MC_HOOK_TASK_INIT, mc_stepd_task_init(&plugin, sp));
	log_task_time(sp);
	return once_rc;
}

/* task_post_fork and task_exit run in slurmstepd once per task: a repeat
 * (the second plugstack line) is the same task back to back. */
static bool same_task_again(spank_t sp, bool *seen, int *last_task)
{
	int task = -1;

	spank_get_item(sp, S_TASK_ID, &task);
	if (*seen && task == *last_task)
		return true;
	*seen = true;
	*last_task = task;
	return false;
}

int slurm_spank_task_post_fork(spank_t sp, int ac, char **av)
{
	static bool seen;
	static int last_task;

	if (spank_context() != S_CTX_REMOTE ||
	    same_task_again(sp, &seen, &last_task))
		return 0;
	return MC_TIMED(MC_HOOK_POST_FORK,
			mc_stepd_task_post_fork(&plugin, sp));
}

int slurm_spank_task_exit(spank_t sp, int ac, char **av)
{
	static bool seen;
	static int last_task, last_rc;

	if (spank_context() != S_CTX_REMOTE)
		return 0;
	if (same_task_again(sp, &seen, &last_task))
		return last_rc;
	return last_rc = MC_TIMED(MC_HOOK_TASK_EXIT,
				  mc_stepd_task_exit(&plugin, sp));
}

/*
 * The job prolog and epilog run as root in S_CTX_JOB_SCRIPT, forked by
 * slurmd with slurmd's environment for the job, also with no Prolog=
 * script and without PrologFlags=Alloc (seen on Slurm 22.05), once slurmd
 * has started with memcore in its plugstack.
 */
int slurm_spank_job_prolog(spank_t sp, int ac, char **av)
{
	if (spank_context() != S_CTX_JOB_SCRIPT)
		return 0;
	MC_ONCE();
	mc_prolog_job(sp, ac, av);
	MC_ONCE_RETURN(0);
}

int slurm_spank_job_epilog(spank_t sp, int ac, char **av)
{
	if (spank_context() != S_CTX_JOB_SCRIPT)
		return 0;
	MC_ONCE();
	mc_prolog_job_end(sp, ac, av);
	MC_ONCE_RETURN(0);
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	const long *t = plugin.spent_us;

	if (spank_context() != S_CTX_REMOTE)
		return 0;
	MC_ONCE();
	once_rc = MC_TIMED(MC_HOOK_EXIT, mc_stepd_exit(&plugin, sp));
	mc_log_debug("memcore: step %s: memcore took %ld us in slurmstepd "
		     "(init %ld, init_post_opt %ld, user_init %ld, "
		     "task_post_fork %ld, task_exit %ld, exit %ld)",
		     step_name(),
		     t[MC_HOOK_INIT] + t[MC_HOOK_POST_OPT] + t[MC_HOOK_USER_INIT] +
		     t[MC_HOOK_POST_FORK] + t[MC_HOOK_TASK_EXIT] + t[MC_HOOK_EXIT],
		     t[MC_HOOK_INIT], t[MC_HOOK_POST_OPT], t[MC_HOOK_USER_INIT],
		     t[MC_HOOK_POST_FORK], t[MC_HOOK_TASK_EXIT], t[MC_HOOK_EXIT]);
	return once_rc;
}
