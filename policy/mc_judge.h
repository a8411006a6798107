/*
 * mc_judge.h - the one judgement. Every answer memcore gives about a GPU
 * step is mc_judge() of three things:
 *   - the request as the user wrote it (memcore's options and the
 *     policy's defaults: GPUs, DataLoader workers, ZeRO; mc_request),
 *   - the allocation Slurm gives it on a node (what slurmstepd says at
 *     launch; at submission what mc_slurm_alloc() predicts from
 *     slurmctld's records; mc_alloc),
 *   - the node (topology, NodeRam=/NodeCores=, or slurmctld's record;
 *     mc_node),
 * and returns the verdict, its figures and its explanation. The plugin
 * (spank/mc_stepd.c), memcore check (one node and --partition, hence the
 * cli_filter through check --json) and memcore audit (mc_judge_node: the
 * full-node step at the policy's defaults, plus the node rule) all call
 * it, through mc_decision.h; none of them decides anything a verdict
 * says.
 *
 * Pure C on plain data: no Slurm, no hwloc, no I/O, no allocation.
 */
#ifndef MC_JUDGE_H
#define MC_JUDGE_H

#include <stdbool.h>
#include <stdint.h>

#include "mc_config.h"
#include "mc_rules.h"

/* The verdict, why it does not fit, and the lines the user reads. */
struct mc_judgement {
	struct mc_verdict v;
	enum mc_misfit why;		/* mc_verdict_why(&v) */
	bool impossible;		/* no allocation on this node fits */
	struct mc_explanation e;
};

/*
 * Judge request r, given allocation a, on node n. step and host name the
 * step and node in the explanation's first line (either may be NULL:
 * "this step"). The request is valid (mc_request_check). Never fails.
 */
void mc_judge(const struct mc_policy *p, const struct mc_request *r,
	      const struct mc_alloc *a, const struct mc_node *n,
	      const char *step, const char *host, struct mc_judgement *out);

/*
 * What launch does with a step, by the policy's Mode and AllowUserWarn
 * and whether the user asked --memcore=warn (MEMCORE_MODE=warn):
 * Mode=off: not checked; a step that fits runs; one that does not runs
 * with the explanation as a warning under Mode=warn or an allowed
 * --memcore=warn, else is refused. The plugin (spank/mc_stepd.c) and
 * memcore check (hence the cli_filter) both decide by it.
 */
enum mc_launch {
	MC_LAUNCH_RUNS = 0,		/* it fits: runs */
	MC_LAUNCH_WARNED,		/* does not fit: runs with a warning */
	MC_LAUNCH_REFUSED,		/* does not fit: refused */
	MC_LAUNCH_UNCHECKED,		/* Mode=off: runs unchecked */
};
extern const char *const mc_launch_words[];	/* runs warned refused
						 * unchecked */

enum mc_launch mc_launch_outcome(const struct mc_policy *p, bool user_warn,
				 bool fits);

/*
 * The line the explanation ends with for outcome o (NULL: none): why it
 * runs anyway (warned, unchecked), or for a refusal whether the user may
 * turn it into a warning (the plugin's words, also said by check).
 */
const char *mc_launch_line(const struct mc_policy *p, bool user_warn,
			   enum mc_launch o);

#endif
