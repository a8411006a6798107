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
 * answer is true.
 */
bool mc_stepcg_slurm_scope(const struct mc_cgroup *cg, uint32_t job_id,
			   uint32_t step_id, char *scope, size_t len);

/*
 * Lower scope's hard memory limit to limit when it is above it, never
 * raise it; when it changed, the soft limit (v1) or high mark (v2) too,
 * since one above the hard limit means nothing. *changed says whether the
 * hard limit moved. Returns 0, or -1 with err set (the hard limit could
 * not be read, parsed or written).
 */
int mc_stepcg_tighten(const char *scope, int version, uint64_t limit,
		      bool *changed, char *err, size_t len);

/* Set scope's hard memory limit (memcore's own cgroup). 0 or -1 with err
 * and errno (ENOENT: no memory controller there). */
int mc_stepcg_set_limit(const char *scope, int version, uint64_t limit,
			char *err, size_t len);

/*
 * Swap off for the step whose memory scope limits, unless someone
 * (Slurm's ConstrainSwapSpace) set a swap limit: v1 memory+swap = memory
 * (nothing on kernels without memsw files), v2 memory.swap.max = 0.
 * A swap limit already set is left as it is. Never fails: swap is a
 * refinement of the memory limit, not a condition of it.
 */
void mc_stepcg_swap_off(const char *scope, int version);

/*
 * mc_stepcg_swap_off for a cgroup memcore has just made with hard limit
 * limit: nobody can have set its swap limit yet, so it is written without
 * reading the cgroup's state first (memory.stat is the dearest file to
 * read). A kernel without swap accounting (no such file) is no error.
 */
void mc_stepcg_swap_off_new(const char *scope, int version, uint64_t limit);

/*
 * Where memcore's own cgroup goes, seen from the memory cgroup cg of the
 * process it is for (a task's, or slurmd's for the sweep): v1 cg itself;
 * v2 its parent (a v2 cgroup with processes cannot have children that
 * use a controller). Returns 0, or -1 with err set ("DIR: at the root").
 */
int mc_stepcg_own_parent(const struct mc_cgroup *cg, char *out, size_t len,
			 char *err, size_t errlen);

/*
 * Can a child of parent have a memory limit? v1 always; v2 when parent's
 * cgroup.subtree_control has "memory". Returns 0, or -1 with err saying
 * where to enable it.
 */
int mc_stepcg_own_ready(const char *parent, int version, char *err,
			size_t len);

/*
 * Let the children of dir (memcore's own job cgroup, which holds no
 * process) have memory limits: v2 writes "+memory" to its
 * cgroup.subtree_control unless it is there; v1 needs nothing (the kernel
 * counts a child's use in its parent's). Returns 0, or -1 with err set.
 */
int mc_stepcg_own_enable(const char *dir, int version, char *err,
			 size_t len);

#endif
