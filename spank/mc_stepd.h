/*
 * mc_stepd.h - the step in slurmstepd: read once, its verdict and decision
 * (policy/mc_decision.h), delivered by each task (spank/mc_stepd.c).
 */
#ifndef MC_STEPD_H
#define MC_STEPD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <slurm/spank.h>

struct mc_plugin;
struct mc_step;

/* slurmstepd: the step, read on first use (then memcore.conf too,
 * unless the step is one memcore leaves alone); NULL when Slurm's view of
 * it is malformed (p->step_err says why) (mc_stepd.c). */
const struct mc_step *mc_stepd_step(struct mc_plugin *p, spank_t sp);
/*
 * The slurmstepd hooks (S_CTX_REMOTE), one function each, which
 * spank/memcore.c routes to. None fails the step but
 * task_init_privileged's verdict.
 */

/* init: the options registered (memcore.conf waits for mc_stepd_step). */
int mc_stepd_init(struct mc_plugin *p, spank_t sp, int ac, char **av);

/* init_post_opt: the MEMCORE_* defaults from the job's environment, then
 * the verdict and its decision, once per step, before the tasks fork;
 * never fails. */
void mc_stepd_init_post_opt(struct mc_plugin *p, spank_t sp);

/* user_init: the step's memory cgroup found when the decision holds the
 * step to a limit (mc_enforce.c). Always 0. */
int mc_stepd_user_init(struct mc_plugin *p, spank_t sp);

/* task_init_privileged (each task, root): its GPUs recorded (mc_bind.c),
 * the verdict delivered, then, when it runs and the decision says so,
 * Slurm's limit tightened. -1: the step is refused. */
int mc_stepd_task_init_privileged(struct mc_plugin *p, spank_t sp);

/* task_init (each task, as the user, before its program): bound to its
 * GPUs' NUMA cores, MEMCORE_* exported (mc_bind.c). Always 0. */
int mc_stepd_task_init(struct mc_plugin *p, spank_t sp);

/* task_post_fork (slurmstepd, each task): memcore's own cgroup made and
 * the task moved in, the summary's clock and sampler started. 0. */
int mc_stepd_task_post_fork(struct mc_plugin *p, spank_t sp);

/* task_exit (slurmstepd, each task): the summary read, an OOM kill
 * explained, the own cgroup removed after the last task. 0. */
int mc_stepd_task_exit(struct mc_plugin *p, spank_t sp);

/* exit (slurmstepd): the summary's end, the own cgroup if still there,
 * the verdict's text freed. 0. */
int mc_stepd_exit(struct mc_plugin *p, spank_t sp);

#endif
