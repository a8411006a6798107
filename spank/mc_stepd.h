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
/* slurmstepd, init_post_opt: the verdict and its explanation, once per
 * step, before the tasks fork; never fails (mc_stepd.c). */
void mc_stepd_init_post_opt(struct mc_plugin *p, spank_t sp);

/* The step's verdict, delivered by this task (mc_stepd.c): -1 refused. */
int mc_stepd_task_init_privileged(struct mc_plugin *p, spank_t sp,
				  int task_id);

#endif
