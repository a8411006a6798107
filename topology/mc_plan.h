/*
 * mc_plan.h - which CPUs each GPU of a step gets: the binding plan.
 *
 * Pure logic on node facts (mc_topology.h) and hwloc bitmaps; no topology
 * is loaded, so slurmstepd's tasks and the memcore command compute the
 * same plan from the same inputs without talking to each other.
 *
 * The unit is the physical core, as in the policy's rule g * (w + 1): each
 * GPU gets w + 1 cores of its own NUMA node, and a core given to a GPU
 * brings all of its PUs (hyperthreads) that are in the allowed set. A core
 * counts when at least one of its PUs is allowed.
 *
 * The rule, deterministic: the GPUs are taken in Slurm index order (the
 * order of the list given does not matter); each takes the lowest free
 * cores (by lowest PU OS index) of its NUMA node that are inside the
 * allowed set and not already given to a GPU before it. Then, in the same
 * order, a GPU whose node gave fewer than w + 1 (AMD NPS4 and Intel SNC
 * domains of 6 cores, or cores taken by lower GPUs) borrows the rest from
 * the other NUMA nodes, nearest first by hwloc's distance matrix (without
 * one: same package before other packages), a GPU-less node before another
 * GPU's at the same distance, lowest P# first; every GPU has had its own
 * node's cores before anyone borrows. A GPU none of whose node's CPUs are
 * allowed (`outside`) borrows nothing. The allowed set is never widened.
 * Fewer than w + 1 in the end (the allowed CPUs cannot give them at all):
 * a warning saying how many it got and the srun option that fixes it;
 * none: an empty set and a warning naming the GPU, its NUMA node and the
 * srun options that would fix it.
 */
#ifndef MC_PLAN_H
#define MC_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <hwloc.h>

#include "mc_topology.h"

#define MC_PLAN_MSG_MAX 640

struct mc_plan_gpu {
	unsigned index;		/* Slurm GPU index */
	int numa_os_index;	/* NUMA node P# of the GPU, -1 unknown */
	uint32_t cores_wanted;	/* w + 1 */
	uint32_t cores;		/* cores given, <= cores_wanted */
	uint32_t cores_local;	/* of them, on its own NUMA node */
	hwloc_bitmap_t cpus;	/* OS CPU indices given; empty when none */
	/* cores == 0 because no CPU of its NUMA node is allowed at all (or
	 * its NUMA node is unknown), as opposed to lower GPUs having taken
	 * them: the first is a locality problem whoever drives the GPU. */
	bool outside;
	char warning[MC_PLAN_MSG_MAX];	/* "" or "memcore: GPU ..." */
};

struct mc_plan {
	size_t n;			/* GPUs, in the order they were given */
	struct mc_plan_gpu gpu[MC_MAX_GPUS];
};

/*
 * Compute the plan for the GPUs gpus[0..n) (Slurm indices, each at most
 * once, all on this node), each GPU wanting cores_per_gpu cores (the
 * policy's cores rule at the step's workers, mc_cores_per_gpu_at).
 * allowed: the OS CPUs the task or allocation may use; NULL means every
 * CPU of the node's NUMA nodes. plan->gpu[i] answers gpus[i].
 * Returns 0, or -1 with err set ("GPU 9 is not on this node (8 GPUs)",
 * "GPU 1 listed twice", no memory) and the plan empty (safe to free).
 * Free with mc_plan_free() in both cases.
 */
int mc_plan_compute(const struct mc_node_facts *f, unsigned cores_per_gpu,
		    hwloc_const_bitmap_t allowed, const unsigned *gpus,
		    size_t n, struct mc_plan *plan, char *err, size_t errlen);

/* Release the plan's bitmaps; the plan is empty afterwards. */
void mc_plan_free(struct mc_plan *plan);

/*
 * A cpuset as a Slurm-style list of OS CPU indices ("0-3,8"), "" when
 * empty. Returns buf; a list longer than buflen is cut (buflen >=
 * MC_CPULIST_MAX holds any NUMA node's list).
 */
const char *mc_plan_cpulist(hwloc_const_bitmap_t set, char *buf,
			    size_t buflen);

/* Every CPU (PU) of the node f into set: what a CPU list may name. */
void mc_plan_node_cpus(const struct mc_node_facts *f, hwloc_bitmap_t set);

/*
 * Parse a Slurm-style CPU list ("0-3,8") into set. Returns 0, or -1 for
 * an empty or malformed list or an index above MC_LIST_INDEX_MAX.
 */
int mc_plan_parse_cpulist(const char *s, hwloc_bitmap_t set);

#endif
