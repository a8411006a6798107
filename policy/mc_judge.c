/*
 * mc_judge.c - the one judgement (see mc_judge.h).
 */
#include <string.h>

#include "mc_judge.h"

void mc_judge(const struct mc_policy *p, const struct mc_request *r,
	      const struct mc_alloc *a, const struct mc_node *n,
	      const char *step, const char *host, struct mc_judgement *out)
{
	mc_verdict_compute(p, r, n, a, &out->v);
	out->why = mc_verdict_why(&out->v);
	out->impossible = mc_verdict_impossible(&out->v);
	mc_verdict_explain(p, &out->v, step, host, &out->e);
}

void mc_judge_node(const struct mc_policy *p, const struct mc_node *n,
		   uint64_t gpu_memory_bytes, uint64_t gpu_memory_total_bytes,
		   bool gpu_memory_known, const char *gpu_memory_source,
		   const char *host, struct mc_node_judgement *out)
{
	memset(out, 0, sizeof(*out));
	mc_audit_node(p, n, gpu_memory_total_bytes, gpu_memory_known,
		      &out->rule);
	/* The step a site's GPU node exists for: every GPU, the policy's
	 * defaults, the whole node (as --exclusive --mem=0 asks). */
	out->req.gpus = n->gpus;
	out->req.nodes = 1;
	out->req.dataloader_workers = p->dataloader_workers;
	out->req.gpu_memory_bytes = gpu_memory_known ? gpu_memory_bytes : 0;
	out->req.gpu_memory_source = gpu_memory_source;
	out->req.unified_memory = n->unified_memory;
	out->req.zero_init = MC_ZERO_INIT_POLICY;
	out->alloc.mem_bytes = n->ram_bytes;
	out->alloc.cores = n->cores;
	out->alloc.mem_source = "the whole node";
	out->alloc.requested = true;
	mc_judge(p, &out->req, &out->alloc, n, NULL, host, &out->step);
	out->ok = out->rule.ram_rule_ok && out->rule.cores_rule_ok &&
		  out->step.v.fits;
}
