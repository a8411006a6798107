/*
 * mc_ctld_nodes.h - a partition's nodes as slurmctld describes them: the
 * value that mc_slurmctld.h loads and mc_shape_cache.h keeps. It sits
 * below both, with no libslurm call, so that the cache (which the loader
 * calls) needs nothing of the loader's.
 */
#ifndef MC_CTLD_NODES_H
#define MC_CTLD_NODES_H

#include <stdbool.h>
#include <stddef.h>

#include "mc_config.h"
#include "mc_shapes.h"
#include "mc_slurm_alloc.h"

/* The nodes of one partition, or of the whole cluster. */
struct mc_ctld_nodes {
	char partition[MC_PARTITION_NAME_MAX];	/* "" for the whole cluster */
	size_t n;
	struct mc_node_record *node;	/* n records, malloc'd */
	/* The partition's memory and CPU defaults as slurmctld resolved
	 * them (PartitionName=DEFAULT and Include already applied): its
	 * DefMemPerCPU/DefMemPerNode/MaxMemPer*, JobDefaults (DefCpuPerGPU,
	 * DefMemPerGPU), each else slurm.conf's global one. */
	struct mc_slurm_part part;
	/*
	 * Nodes of the partition that memcore cannot judge: not in
	 * slurmctld's node list (powered-down State=CLOUD nodes are hidden
	 * unless PrivateData=cloud), or a Gres it cannot read. unjudged is
	 * their ranged hostlist (cut, with "...", when long).
	 */
	size_t n_unjudged;
	char unjudged[512];
	char unjudged_why[160];
	/*
	 * An upper bound of any one unjudged node: the partition's TRES
	 * (scontrol show partition TRES=, which counts the hidden nodes too)
	 * less the nodes seen: all their memory, GPUs and CPUs together, and
	 * their one GPU type. ok false when it cannot be had (no TRES, GPUs
	 * of several types or some untyped among them).
	 */
	bool hidden_bound_ok;
	struct mc_node_record hidden_bound;
	/* Read from the login host's shape cache (cli/mc_shape_cache.h),
	 * which can be stale in the ways it lists: an answer from it that
	 * would refuse must be confirmed with a fresh load (fresh). */
	bool from_cache;
	/* The job picks among these nodes in a way memcore does not model
	 * ("--constraint", mc_node_pick.h): they are a superset of its
	 * candidates. "" when not. */
	char pick_unmodelled[32];
};

/*
 * Free nodes' records (node set to NULL, n to 0); the other fields are
 * left as they are. nodes itself is the caller's. Never fails.
 */
void mc_ctld_free(struct mc_ctld_nodes *nodes);

#endif
