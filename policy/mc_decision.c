/*
 * mc_decision.c - one case, built once, and the decision (mc_decision.h).
 */
#include <string.h>

#include "mc_decision.h"
#include "mc_terms.h"
#include "mc_util.h"

int mc_case_request(const struct mc_policy *p, const struct mc_case *c,
		    const struct mc_node *n, struct mc_request *r, char *err,
		    size_t errlen)
{
	mc_assert(c->opts);
	memset(r, 0, sizeof(*r));
	r->gpus = c->gpus;
	r->nodes = c->nodes ? c->nodes : 1;
	r->unified_memory = n->unified_memory;
	mc_opts_request(c->opts, p, r);
	r->use.ranks = c->ranks;
	/* The files fill what the options left, with their notes. */
	mc_jobfiles_apply(c->files, c->opts, p, r);
	r->gpu_memory_bytes = c->gpu_memory_bytes;
	r->gpu_memory_source = c->gpu_memory_source;
	/* A shared card is sized by the step's share, as a MIG slice is by
	 * its own memory. */
	if (c->share_kind && c->share_count) {
		r->use.share_kind = c->share_kind;
		r->use.share_count = c->share_count;
		mc_share_apply(r, c->share_per_gpu, c->share_from);
	}
	if (c->dataset_measured)
		r->use.dataset_bytes = c->dataset_bytes;
	r->use.dataset_stage = c->dataset_stage;
	if (err && errlen)
		err[0] = '\0';
	return mc_request_check(p, r, err, errlen);
}

void mc_decide(const struct mc_policy *p, const struct mc_request *r,
	       const struct mc_alloc *a, const struct mc_node *n,
	       bool user_warn, bool dataset_refuses, const char *step,
	       const char *host, struct mc_decision *d)
{
	mc_judge(p, r, a, n, step, host, &d->j);
	d->launch = mc_launch_outcome(p, user_warn, d->j.v.fits);
	d->launch_line = mc_launch_line(p, user_warn, d->launch);
	d->refused = d->launch == MC_LAUNCH_REFUSED ||
		     (dataset_refuses &&
		      mc_launch_outcome(p, user_warn, false) ==
		      MC_LAUNCH_REFUSED);
	d->enforce = !d->refused && d->launch != MC_LAUNCH_UNCHECKED &&
		     p->cgroup_memory && !a->mem_unset && a->mem_bytes;
	d->limit_bytes = d->enforce ? a->mem_bytes : 0;
	d->workers = r->dataloader_workers;
	/* Held to a limit only when it runs, and never to none. */
	mc_assert(!d->enforce || (!d->refused && d->limit_bytes));
}

void mc_decision_unchecked(const struct mc_policy *p, const struct mc_opts *o,
			   struct mc_decision *d)
{
	memset(d, 0, sizeof(*d));
	d->launch = MC_LAUNCH_UNCHECKED;
	d->workers = mc_opts_workers(o, p);
}


void mc_judge_node(const struct mc_policy *p, const struct mc_node *n,
		   uint64_t gpu_memory_bytes, uint64_t gpu_memory_total_bytes,
		   bool gpu_memory_known, const char *gpu_memory_source,
		   const char *host, struct mc_node_judgement *out)
{
	/* No option given: the policy's defaults. */
	static const struct mc_opts none;
	struct mc_case c = {
		.opts = &none,
		.gpus = n->gpus,
		.nodes = 1,
		.gpu_memory_bytes = gpu_memory_known ? gpu_memory_bytes : 0,
		.gpu_memory_source = gpu_memory_source,
	};

	memset(out, 0, sizeof(*out));
	mc_audit_node(p, n, gpu_memory_total_bytes, gpu_memory_known,
		      &out->rule);
	/* The step a site's GPU node exists for: every GPU, the policy's
	 * defaults, the whole node (as --exclusive --mem=0 asks). */
	mc_case_request(p, &c, n, &out->req, NULL, 0);
	out->alloc.mem_bytes = n->ram_bytes;
	out->alloc.cores = n->cores;
	out->alloc.mem_source = "the whole node";
	out->alloc.requested = true;
	mc_judge(p, &out->req, &out->alloc, n, NULL, host, &out->step);
	out->ok = out->rule.ram_rule_ok && out->rule.cores_rule_ok &&
		  out->step.v.fits;
}
