/*
 * mc_slurmd.h - slurmd's start: the node-facts cache, the audit, the start
 * line (spank/mc_slurmd.c).
 */
#ifndef MC_SLURMD_H
#define MC_SLURMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <slurm/spank.h>

struct mc_plugin;

/* slurmd start (S_CTX_SLURMD's init): plugstack.conf's arguments, the
 * node facts cache, the audit, the start line. -1 only for a broken
 * policy, which stops slurmd when memcore is `required` (mc_slurmd.c). */
int mc_slurmd_init(struct mc_plugin *p, int ac, char **av);

#endif
