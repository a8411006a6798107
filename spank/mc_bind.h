/*
 * mc_bind.h - NUMA binding of each task to its GPUs' cores, and the MEMCORE_*
 * it exports (spank/mc_bind.c).
 */
#ifndef MC_BIND_H
#define MC_BIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <slurm/spank.h>

struct mc_plugin;
struct mc_step;

/* Record the step's GPUs and the user's --cpu-bind for task_init; never
 * fails (mc_bind.c). */
void mc_bind_task_init_privileged(struct mc_plugin *p, spank_t sp);
/* Bind the task of step st (mc_stepd_step; NULL: Slurm's view of it is
 * malformed) to its GPUs' NUMA cores, export MEMCORE_* (mc_bind.c).
 * Always 0: binding never stops a task. */
int mc_bind_task_init(struct mc_plugin *p, spank_t sp,
		      const struct mc_step *st);

#endif
