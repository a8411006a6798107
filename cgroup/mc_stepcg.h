/*
 * mc_stepcg.h - a Slurm step's memory cgroup, the same calls on cgroup v1
 * and v2: where the differences between the two (file names, where Slurm
 * puts the step's limit, where memcore's own cgroup may go, how swap is
 * limited) live, so that the plugin has no version branch. Like Slurm's
 * cgroup/v1 and cgroup/v2 plugins behind its task/cgroup.
 *
 * Layouts (Slurm 22.05 on v1; 22.05, 24.11 and 26.05 on v2, seen in the
 * guest tier, tests/vm/LAYOUTS.md):
 *  - v1: slurmstepd moves itself into .../job_J/step_S, which holds the
 *    step's limit (memory.limit_in_bytes, memory.soft_limit_in_bytes,
 *    memory.memsw.limit_in_bytes).
 *  - v2: slurmstepd sits in .../<step>/slurm and the tasks under
 *    .../<step>/user, which holds the step's limit (memory.max,
 *    memory.high, memory.swap.max); the job level's name changed in 26.05
 *    ("job_12" before, "s9Z5M8QCVENS00" after), so only the leaf names are
 *    looked at. Processes live only in leaves: memcore's own cgroup goes
 *    beside a task's cgroup, not in it.
 *
 * Errors as in mc_cgroup.h: 0 or -1 with err naming the path and reason.
 */
#ifndef MC_STEPCG_H
#define MC_STEPCG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mc_cgroup.h"

/* Slurm's name for a step in its cgroup paths: "batch" for the batch
 * script (SLURM_BATCH_SCRIPT), else the step number. Returns buf. */
const char *mc_stepcg_token(uint32_t step_id, char *buf, size_t len);

/*
 * Does Slurm's task/cgroup hold the memory of step job_id.step_id, seen
 * from slurmstepd's memory cgroup cg? v1: cg's path has job_J/step_S; v2:
 * cg is <step>/slurm and its sibling <step>/user has a limit of its own.
 * When it does, the cgroup that holds the limit goes to scope and the
 * answer is true; when not, scope holds cg's hierarchy and no directory
 * ("": memcore's own cgroup, made later, goes there).
 */
bool mc_stepcg_slurm_scope(const struct mc_cgroup *cg, uint32_t job_id,
			   uint32_t step_id, struct mc_cgroup *scope);

/*
 * What to set on a step's (or a job's) memory cgroup, one struct for every
 * path (Slurm's cgroup_limits_t and cgroup_g_constrain_set are the model):
 * a field left at its zero value leaves the kernel's setting alone.
 */
enum mc_cg_mem {
	MC_CG_MEM_LEAVE = 0,	/* the hard limit is not touched */
	MC_CG_MEM_SET,		/* set it to mem_bytes (memcore's own) */
	MC_CG_MEM_LOWER,	/* lower it to mem_bytes when above, never
				 * raise (Slurm's, or a job's shared one);
				 * when it moved, the soft limit (v1) or
				 * high mark (v2) too, since one above the
				 * hard limit means nothing */
};

enum mc_cg_swap {
	MC_CG_SWAP_LEAVE = 0,
	/* No swap beyond the memory limit, unless someone (Slurm's
	 * ConstrainSwapSpace) set a swap limit, which stays: v1
	 * memory+swap = memory (nothing on kernels without memsw files), v2
	 * memory.swap.max = 0. */
	MC_CG_SWAP_OFF,
	/* The same for a cgroup memcore has just made with hard limit
	 * mem_bytes: nobody can have set its swap limit yet, so it is
	 * written without reading first. */
	MC_CG_SWAP_OFF_NEW,
};

struct mc_cg_limits {
	enum mc_cg_mem mem;
	uint64_t mem_bytes;	/* bytes, for MC_CG_MEM_SET and _LOWER */
	enum mc_cg_swap swap;
};

/*
 * Constrain cg to l: the hard limit first, then swap. *changed (may be
 * NULL) says whether the hard limit moved. Swap is a refinement of the
 * memory limit, never a condition of it: its failures are not reported,
 * and nothing is done to swap when the memory limit failed. Returns 0, or
 * -1 with err set and errno kept (the hard limit could not be read, parsed
 * or written: ENOENT no memory controller there; EBUSY v1 below a use it
 * cannot reclaim).
 */
int mc_stepcg_constrain(const struct mc_cgroup *cg,
			const struct mc_cg_limits *l, bool *changed,
			char *err, size_t len);

/*
 * Where memcore's own cgroup goes, seen from the memory cgroup cg of the
 * process it is for (a task's, or slurmd's for the sweep): v1 cg itself;
 * v2 its parent (a v2 cgroup with processes cannot have children that
 * use a controller). Returns 0, or -1 with err set ("DIR: at the root").
 */
int mc_stepcg_own_parent(const struct mc_cgroup *cg, struct mc_cgroup *out,
			 char *err, size_t errlen);

/*
 * Can a child of parent have a memory limit? v1 always; v2 when parent's
 * cgroup.subtree_control has "memory". Returns 0, or -1 with err saying
 * where to enable it.
 */
int mc_stepcg_own_ready(const struct mc_cgroup *parent, char *err,
			size_t len);

/*
 * Let the children of cg (memcore's own job cgroup, which holds no
 * process) have memory limits: v2 writes "+memory" to its
 * cgroup.subtree_control unless it is there; v1 needs nothing (the kernel
 * counts a child's use in its parent's). Returns 0, or -1 with err set.
 */
int mc_stepcg_own_enable(const struct mc_cgroup *cg, char *err, size_t len);

#endif
