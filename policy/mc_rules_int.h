/*
 * mc_rules_int.h - the rules' helpers that the explanation (mc_explain.c)
 * shares with the verdict (mc_rules.c). Internal to policy/: not part of
 * the engine's interface.
 */
#ifndef MC_RULES_INT_H
#define MC_RULES_INT_H

#include "mc_rules.h"
#include "mc_util.h"


/* Cores per GPU: ceil(w / WorkersPerCore) + 1, or MinCoresPerGpu when
 * larger (mc_cores_per_gpu_at). */
uint32_t mc_cores_per_gpu(const struct mc_policy *p, uint32_t workers);

/* Whether the step's optimizer runs on the CPU (ZeRO offload). */
bool mc_cpu_optimizer(const struct mc_request *r);

/* The step's cores at w workers: ranks x (w + 1, or MinCoresPerGpu),
 * plus OffloadCoresPerGpu per rank when mc_cpu_optimizer (mc_terms.h). */
uint32_t mc_step_cores(const struct mc_policy *p, const struct mc_request *r,
		       uint32_t w);

/* The step's RAM had it asked for w workers instead. */
uint64_t mc_ram_at(const struct mc_policy *p, const struct mc_request *r,
		   uint32_t w);

/* The node's GPU count G: never below the step's own g. */
uint32_t mc_node_gpus(const struct mc_request *r, const struct mc_node *n);

/* The node's shards (or MPS count): G x r->use.share_per_gpu. */
uint64_t mc_node_shares(const struct mc_request *r, const struct mc_node *n);

/*
 * The largest w <= top that fits the node and, with need_cores and/or
 * need_mem, the allocation's cores and memory; -1 when none.
 */
int32_t mc_largest_w(const struct mc_policy *p, const struct mc_request *r,
		     const struct mc_node *n, const struct mc_alloc *a,
		     uint32_t top, bool need_cores, bool need_mem);

#endif
