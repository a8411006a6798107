/*
 * mc_nodefacts.c - the node's facts in slurmstepd: from the cache slurmd
 * wrote at its start (mc_slurmd.c), else from hwloc.
 *
 * slurmstepd loads them once, with the verdict in init_post_opt
 * (mc_stepd.c), before it forks the tasks, so that every task of the step
 * inherits one copy and a fallback to hwloc costs one log line per step,
 * not one per task.
 */
#include <stdio.h>
#include <string.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "mc_cache.h"
#include "mc_slurm_compat.h"
#include "mc_plugin.h"
#include "mc_nodefacts.h"
#include "mc_step.h"
#include "mc_log.h"

/* A libslurm count as memcore keeps it: 0 for none or unknown. */
static uint32_t gres_count(const char *name)
{
	uint64_t n = mc_gres_system_cnt(name);

	return n == NO_VAL64 || n > UINT32_MAX ? 0 : (uint32_t)n;
}

void mc_plugin_slurm_counts(uint32_t *gpus, uint32_t *shards)
{
	*gpus = gres_count("gpu");
	*shards = *gpus ? gres_count("shard") : 0;
}

void mc_plugin_slurm_gres(struct mc_node_facts *f)
{
	mc_plugin_slurm_counts(&f->slurm_gpus, &f->slurm_shards);
}

const struct mc_node_facts *mc_plugin_facts(struct mc_plugin *p,
					    const struct mc_policy *pol,
					    char *err, size_t errlen)
{
	const char *want = mc_cache_source_of(pol->topology_file);
	char why[MC_ERR_MAX];

	/* A partition line with another TopologyFile needs other facts. */
	if (p->facts_loaded && !strcmp(p->facts.source, want))
		return &p->facts;
	p->facts_loaded = false;
	if (p->cache_path[0]) {
		if (mc_cache_read(p->cache_path, want, &p->facts, NULL, why,
				  sizeof(why)) == 0) {
			mc_log_debug("memcore: node facts from cache %s",
				     p->cache_path);
			p->facts_loaded = true;
			return &p->facts;
		}
		mc_log_info("memcore: %s; node facts from hwloc (%s) instead",
			    why, want);
	}
	if (mc_topology_load(pol->topology_file, &p->facts, err, errlen) < 0)
		return NULL;
	/* slurmd passed its gres counts to slurmstepd with the step. */
	mc_plugin_slurm_gres(&p->facts);
	mc_log_debug("memcore: node facts from hwloc (%s)", want);
	p->facts_loaded = true;
	return &p->facts;
}
