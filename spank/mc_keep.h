/*
 * mc_keep.h - the step's record kept with the job (AdminComment), from a
 * thread of its own (spank/mc_keep.c).
 */
#ifndef MC_KEEP_H
#define MC_KEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <slurm/spank.h>

struct mc_plugin;

/* slurmstepd, last task_exit (root): the step's summary into the job's
 * AdminComment, from a thread of its own (mc_keep.c), serialised with the
 * job's other steps on this node and retried until a deadline; wait for
 * it ms at most: true when it is done (or never started), false when it
 * is still out (waited for again at exit; a thread still out then ends
 * with slurmstepd). */
void mc_keep_start(struct mc_plugin *p);
bool mc_keep_wait(struct mc_plugin *p, unsigned ms);

#endif
