/*
 * mc_prolog.h - the job prolog and epilog (root, forked by slurmd)
 * (spank/mc_prolog.c).
 */
#ifndef MC_PROLOG_H
#define MC_PROLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <slurm/spank.h>

struct mc_plugin;

/* Job prolog (root, slurmd's environment): keep slurmd's view of the job
 * for its steps (mc_jobview.h). Never fails (mc_prolog.c). */
void mc_prolog_job(spank_t sp, int ac, char **av);
/* Job epilog (root): remove that record, and LocalScratch=/job_J
 * (mc_scratch.h); copy memcore's records to slurmdbd's SystemComment
 * (mc_keepdbd.h). Never fails (mc_prolog.c). */
void mc_prolog_job_end(spank_t sp, int ac, char **av);

#endif
