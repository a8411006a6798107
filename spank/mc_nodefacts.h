/*
 * mc_nodefacts.h - the node's facts in slurmstepd (the node-facts cache, else
 * hwloc) and Slurm's own GPU and shard counts (spank/mc_nodefacts.c).
 */
#ifndef MC_NODEFACTS_H
#define MC_NODEFACTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <slurm/spank.h>

struct mc_plugin;
struct mc_policy;
struct mc_node_facts;

/*
 * The node's facts for this policy (TopologyFile or the live machine),
 * loaded on first use: from the node-facts cache when it matches, else
 * from hwloc with one log line saying why (mc_nodefacts.c). Returns a
 * pointer into p, or NULL with err set.
 */
const struct mc_node_facts *mc_plugin_facts(struct mc_plugin *p,
					    const struct mc_policy *pol,
					    char *err, size_t errlen);
/*
 * Slurm's own configuration of this node into f->slurm_gpus and
 * f->slurm_shards: the gpu and shard counts libslurm holds in slurmd
 * (slurm.conf's Gres= for this node, read before SPANK's slurmd init;
 * slurmctld schedules by the same line, and drains a node whose gres.conf
 * Count= is lower) and in slurmstepd (sent by slurmd with the step). 0 for a GRES
 * not configured. Only in slurmd or slurmstepd (mc_nodefacts.c).
 */
void mc_plugin_slurm_gres(struct mc_node_facts *f);
/* The same two counts, without facts (a step whose facts cannot load). */
void mc_plugin_slurm_counts(uint32_t *gpus, uint32_t *shards);

#endif
