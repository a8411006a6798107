/*
 * mc_textfile.h - the cluster view: PrometheusTextfile's counters, updated at
 * each GPU step's end (spank/mc_textfile.c).
 */
#ifndef MC_TEXTFILE_H
#define MC_TEXTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <slurm/spank.h>

struct mc_plugin;

/* slurmstepd, exit (root): count the step in PrometheusTextfile
 * (mc_textfile.c), under a lock only root can open; never fails, never
 * waits more than 2 s for other steps' updates. */
void mc_textfile_add(const struct mc_plugin *p);
/* The node label of the textfile and the live gauges: the node's own
 * name as slurmd told slurmstepd (its process environment, which
 * slurmstepd sets from slurmd's config before any step; the step's
 * environment is the user's to write), else the host name, else
 * "unknown". Always terminated (len > 0). */
void mc_textfile_node(char *buf, size_t len);

#endif
