/*
 * mc_livegauges.h - the running step's live gauges beside the
 * PrometheusTextfile (report/mc_gauges.h) (spank/mc_livegauges.c).
 */
#ifndef MC_LIVEGAUGES_H
#define MC_LIVEGAUGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <slurm/spank.h>

struct mc_plugin;

/* slurmstepd (root): the running step's live gauges beside the
 * PrometheusTextfile (mc_gauges.c): start once its sampler runs (first
 * task_post_fork), stop once the sampler stopped (the file is removed).
 * Never fail; each is safe to call again. */
void mc_livegauges_start(struct mc_plugin *p);
void mc_livegauges_stop(struct mc_plugin *p);

#endif
