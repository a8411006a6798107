/*
 * mc_rules.c - the sizing rules, the verdict and its explanation (see
 * mc_rules.h for the rules and their sources).
 *
 * Every product saturates instead of wrapping: a wrapped RAM figure would
 * turn "needs 2^64 bytes" into "needs 3 bytes" and let the step through.
 */
#include "mc_rules.h"
#include "mc_parse.h"
#include "mc_rules_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *const mc_offload_words[] = { "none", "optimizer", "all", NULL };

static uint32_t sat_add32(uint32_t a, uint32_t b)
{
	uint32_t r;

	return __builtin_add_overflow(a, b, &r) ? UINT32_MAX : r;
}

/* A non-negative long double to bytes, rounded up, saturated (no libm). */
static uint64_t ld_to_bytes(long double x)
{
	uint64_t u;

	if (!(x > 0))
		return 0;
	if (x >= 18446744073709551616.0L)
		return UINT64_MAX;
	u = (uint64_t)x;
	if ((long double)u < x && u < UINT64_MAX)
		u++;
	return u;
}

static uint32_t max32(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

uint32_t mc_cores_per_gpu_at(uint32_t workers, uint32_t workers_per_core,
			     uint32_t min_cores)
{
	uint32_t n = workers_per_core ? workers_per_core : 1;

	/* One for the GPU's process, the workers' cores rounded up: a
	 * share of a core is a whole core to Slurm. */
	return max32(sat_add32(workers / n + (workers % n != 0), 1),
		     min_cores);
}

/* Cores per GPU under policy p: the rule above at its WorkersPerCore and
 * MinCoresPerGpu. */
uint32_t mc_cores_per_gpu(const struct mc_policy *p, uint32_t workers)
{
	return mc_cores_per_gpu_at(workers, p->workers_per_core,
				   p->min_cores_per_gpu);
}

uint32_t mc_step_cores_needed(const struct mc_policy *p, uint32_t gpus,
			      uint32_t workers)
{
	return mc_mul_sat32(gpus, mc_cores_per_gpu(p, workers));
}

bool mc_cpu_optimizer(const struct mc_request *r)
{
	return r->offload != MC_OFFLOAD_NONE && r->zero_stage > 0 &&
	       r->model_params;
}

uint32_t mc_step_cores(const struct mc_policy *p, const struct mc_request *r,
		       uint32_t w)
{
	uint32_t ranks = mc_terms_ranks(&r->use, r->gpus);

	if (!r->gpus)
		return 0;
	return mc_mul_sat32(ranks, sat_add32(mc_cores_per_gpu(p, w),
			 mc_terms_offload_cores(p, mc_cpu_optimizer(r))));
}

uint32_t mc_node_cores_needed(const struct mc_policy *p, uint32_t node_gpus,
			      uint32_t workers)
{
	return sat_add32(mc_mul_sat32(node_gpus, mc_cores_per_gpu(p, workers)),
			 p->reserved_cores);
}

uint64_t mc_ram_floor_bytes(const struct mc_policy *p, uint32_t gpus,
			    uint64_t gpu_memory_bytes)
{
	uint64_t total = mc_mul_sat64(gpus, gpu_memory_bytes);

	/* The usual ratio of 1 stays in exact integers. */
	if (p->host_ram_per_gpu_ram == 1.0 || total == UINT64_MAX)
		return total;
	return ld_to_bytes((long double)total *
			   (long double)p->host_ram_per_gpu_ram);
}

uint64_t mc_ram_workers_bytes(const struct mc_policy *p, uint32_t gpus,
			      uint32_t workers)
{
	return mc_mul_sat64(mc_mul_sat64(gpus, workers), p->ram_per_worker_bytes);
}

bool mc_zero_init(const struct mc_policy *p, const struct mc_request *r)
{
	if (r->zero_init == MC_ZERO_INIT_YES)
		return true;
	if (r->zero_init == MC_ZERO_INIT_NO)
		return false;
	return p->zero_init != 0;
}

bool mc_zero_is_offload(const struct mc_request *r)
{
	return r->offload != MC_OFFLOAD_NONE;
}

/*
 * The products are formed before the one division by N, so that figures
 * DeepSpeed gets as whole numbers (f = 1.5) come out exact: P * 18 * 1.5 is
 * exact in a long double, and a correctly rounded quotient of an exact
 * integer result is that integer.
 */
uint64_t mc_zero_ram_bytes(const struct mc_policy *p,
			   const struct mc_request *r)
{
	long double P = (long double)r->model_params;
	long double f = (long double)p->offload_buffer_factor;
	uint64_t n = r->nodes ? r->nodes : 1;
	uint64_t g = r->gpus;
	/* Each rank of the node materialises the fp32 model (4 bytes a
	 * parameter) on the host: the no-offload term of both estimators. */
	long double load = 4.0L * (long double)g * f;
	uint64_t m;

	if (!r->model_params || !g)
		return 0;
	switch (r->zero_stage) {
	case 1:
	case 2: {
		/* estimate_zero2_model_states_mem_needs(cpu_offload). */
		uint64_t gpus_total = g * n;	/* < 2^64: both < 2^32 */
		long double k;

		if (r->offload == MC_OFFLOAD_NONE)
			return ld_to_bytes(P * load);
		if (r->offload != MC_OFFLOAD_OPTIMIZER)
			return 0;
		k = 4.0L * (long double)gpus_total;
		if (k < 16)
			k = 16;
		return ld_to_bytes(P * k * f);
	}
	case 3:
		/* estimate_zero3_model_states_mem_needs: 18 bytes a param
		 * with the parameters offloaded too, 16 without; without
		 * offload, the largest layer with zero.Init. */
		if (r->offload == MC_OFFLOAD_NONE) {
			long double L = (long double)r->largest_layer_params;

			if (!mc_zero_init(p, r) || !r->largest_layer_params)
				L = P;
			return ld_to_bytes(L * load);
		}
		m = r->offload == MC_OFFLOAD_ALL ? 18 : 16;
		if (mc_zero_init(p, r) || 4 * g * n < m)
			return ld_to_bytes(P * (long double)m * f /
					   (long double)n);
		return ld_to_bytes(P * 4.0L * (long double)g * f);
	default:
		return 0;
	}
}

int mc_request_check(const struct mc_policy *p, const struct mc_request *r,
		     char *err, size_t errlen)
{
	const char *why = NULL;
	const char *off = r->offload <= MC_OFFLOAD_ALL
			  ? mc_offload_words[r->offload] : "?";
	char buf[MC_ERR_MAX];

	if (r->dataloader_workers > MC_WORKERS_LIMIT) {
		snprintf(buf, sizeof(buf),
			 "--dataloader-workers=%u: at most %u per GPU",
			 r->dataloader_workers, MC_WORKERS_LIMIT);
		why = buf;
	} else if (p && r->dataloader_workers > p->max_dataloader_workers) {
		snprintf(buf, sizeof(buf), "--dataloader-workers=%u: more "
			 "than MaxDataloaderWorkers=%u allows",
			 r->dataloader_workers, p->max_dataloader_workers);
		why = buf;
	} else if (r->zero_stage > 3) {
		snprintf(buf, sizeof(buf),
			 "--zero-stage=%u: must be 0, 1, 2 or 3",
			 r->zero_stage);
		why = buf;
	} else if (r->offload > MC_OFFLOAD_ALL) {
		why = "--offload: expected none, optimizer or all";
	} else if (r->offload == MC_OFFLOAD_ALL && r->zero_stage < 3) {
		snprintf(buf, sizeof(buf), "--offload=all (parameter offload) "
			 "needs --zero-stage=3, %s: add --zero-stage=3, or "
			 "use --offload=optimizer with stage 1 or 2",
			 r->zero_stage ? "not 1 or 2" : "and no stage is given");
		why = buf;
	} else if (r->offload != MC_OFFLOAD_NONE && r->zero_stage == 0) {
		snprintf(buf, sizeof(buf), "--offload=%s needs --zero-stage=1, "
			 "2 or 3 (ZeRO offload has no stage 0): add "
			 "--zero-stage, or drop --offload", off);
		why = buf;
	} else if (r->offload != MC_OFFLOAD_NONE && !r->model_params) {
		snprintf(buf, sizeof(buf), "--offload=%s needs --model-params "
			 "(the offloaded host RAM is sized from the model): add "
			 "e.g. --model-params=7B", off);
		why = buf;
	} else if (r->model_params && r->largest_layer_params >
		   r->model_params) {
		why = "--largest-layer-params: more than --model-params";
	}
	if (!why && mc_terms_check(p, &r->use, buf, sizeof(buf)) < 0)
		why = buf;
	if (!why)
		return 0;
	if (err && errlen)
		snprintf(err, errlen, "%s", why);
	return -1;
}

/* The GPU term of the step's RAM: the floor, or on unified memory the
 * GPUs' working set in the pool, counted once. */
static uint64_t gpu_term(const struct mc_policy *p, const struct mc_request *r)
{
	if (r->unified_memory)
		return mc_mul_sat64(r->gpus, r->gpu_memory_bytes);
	return mc_ram_floor_bytes(p, r->gpus, r->gpu_memory_bytes);
}

/* Workers of every rank: ranks x w x the job's RAM per worker. */
static uint64_t workers_term(const struct mc_policy *p,
			     const struct mc_request *r, uint32_t w)
{
	return mc_mul_sat64(mc_mul_sat64(mc_terms_ranks(&r->use, r->gpus), w),
			 mc_terms_ram_per_worker(p, &r->use));
}

static uint64_t tasks_term(const struct mc_policy *p,
			   const struct mc_request *r)
{
	return r->gpus ? mc_mul_sat64(mc_terms_ranks(&r->use, r->gpus),
				   p->ram_per_task_bytes) : 0;
}

uint64_t mc_ram_needed_bytes(const struct mc_policy *p,
			     const struct mc_request *r)
{
	/* Peaks and resident terms as they coexist (mc_terms.h): the
	 * ranks' dataset copies are there during the load peak too. */
	return mc_terms_combine(gpu_term(p, r), tasks_term(p, r),
		mc_add_sat64(mc_terms_load_bytes(&r->use, r->gpus,
						 r->model_params,
						 r->zero_stage),
			     mc_terms_dataset_task_bytes(&r->use, r->gpus)),
		mc_add_sat64(workers_term(p, r, r->dataloader_workers),
			     mc_terms_dataset_bytes(&r->use, r->gpus,
						    r->dataloader_workers)),
		mc_zero_ram_bytes(p, r), mc_terms_act_bytes(&r->use, r->gpus),
		mc_terms_nvme_bytes(&r->use, r->gpus),
		mc_terms_save_bytes(&r->use, r->gpus, r->model_params));
}

/* The step's RAM had it asked for w workers instead. */
uint64_t mc_ram_at(const struct mc_policy *p, const struct mc_request *r,
		       uint32_t w)
{
	struct mc_request x = *r;

	x.dataloader_workers = w;
	return mc_ram_needed_bytes(p, &x);
}

/* The node's GPU count G: never below the step's own g. */
uint32_t mc_node_gpus(const struct mc_request *r, const struct mc_node *n)
{
	return max32(n->gpus, r->gpus);
}

/* The shards (or MPS count) the node has: G x the count of one GPU. */
uint64_t mc_node_shares(const struct mc_request *r, const struct mc_node *n)
{
	return (uint64_t)n->gpus * r->use.share_per_gpu;
}

/*
 * Does w fit the node alone: its cores rule, the step's cores within the
 * node, the step's RAM within the node's? A node figure of 0 is unknown
 * and not checked.
 */
static bool fits_node(const struct mc_policy *p, const struct mc_request *r,
		      const struct mc_node *n, uint32_t w)
{
	if (n->cores &&
	    (mc_node_cores_needed(p, mc_node_gpus(r, n), w) > n->cores ||
	     mc_step_cores(p, r, w) > n->cores))
		return false;
	return !n->ram_bytes || mc_ram_at(p, r, w) <= n->ram_bytes;
}

static uint32_t workers_cap(const struct mc_policy *p)
{
	return p->max_dataloader_workers < MC_WORKERS_LIMIT ?
		p->max_dataloader_workers : MC_WORKERS_LIMIT;
}

/*
 * The largest w <= top that fits the node and, with need_cores and/or
 * need_mem, the allocation's cores and memory; -1 when none. Every rule
 * grows with w, so the first fit from the top is the answer.
 */
int32_t mc_largest_w(const struct mc_policy *p, const struct mc_request *r,
			 const struct mc_node *n, const struct mc_alloc *a,
			 uint32_t top, bool need_cores, bool need_mem)
{
	for (uint32_t w = top + 1; w-- > 0;) {
		if (!fits_node(p, r, n, w))
			continue;
		if (need_cores && mc_step_cores(p, r, w) > a->cores)
			continue;
		if (need_mem && mc_ram_at(p, r, w) > a->mem_bytes)
			continue;
		return (int32_t)w;
	}
	return -1;
}

/* The most GPUs (below the step's) that a step like r fits on node n
 * alone, at most the node's own; 0 when none. */
static uint32_t largest_g(const struct mc_policy *p, const struct mc_request *r,
			  const struct mc_node *n)
{
	struct mc_request x = *r;
	uint32_t top = r->gpus ? r->gpus - 1 : 0;

	if (n->gpus && n->gpus < top)
		top = n->gpus;
	for (x.gpus = top; x.gpus > 0; x.gpus--)
		if (fits_node(p, &x, n, x.dataloader_workers))
			return x.gpus;
	return 0;
}

enum mc_misfit mc_verdict_why(const struct mc_verdict *v)
{
	if (v->fits)
		return MC_MISFIT_NONE;
	if (v->node_gpus_short)
		return MC_MISFIT_NODE_GPUS;
	if (v->node_shares_short)
		return MC_MISFIT_NODE_SHARES;
	if (v->node_ram_rule_fails)
		return MC_MISFIT_NODE_RAM_RULE;
	if (v->alloc_mem_over_node)
		return MC_MISFIT_MEM_OVER_NODE;
	if (v->alloc_cores_over_node)
		return MC_MISFIT_CORES_OVER_NODE;
	if (v->node_ram_short)
		return MC_MISFIT_NODE_RAM;
	/* The step's own cores beyond the node's: no -c fixes it. The node
	 * rule alone (G * (w + 1) + ReservedCores) is fixed by fewer
	 * workers, so it is a limit, not "cannot fit". */
	if (v->node_cores && v->cores_needed > v->node_cores)
		return MC_MISFIT_NODE_CORES;
	if (v->node_cores_short)
		return MC_MISFIT_NODE_CORES_RULE;
	if (v->alloc_mem_over_limit)
		return MC_MISFIT_MEM_OVER_LIMIT;
	if (v->ram_short)
		return MC_MISFIT_RAM;
	return MC_MISFIT_CORES;
}

bool mc_verdict_impossible(const struct mc_verdict *v)
{
	enum mc_misfit w = mc_verdict_why(v);

	return w >= MC_MISFIT_NODE_GPUS && w <= MC_MISFIT_NODE_CORES;
}

/* The host RAM terms of step r and their sum, against the allocation
 * and the node. */
static void ram_terms(const struct mc_policy *p, const struct mc_request *r,
		      const struct mc_node *node, const struct mc_alloc *alloc,
		      struct mc_verdict *v)
{
	uint32_t g = r->gpus, w = r->dataloader_workers;

	v->gpu_memory_unknown = r->gpu_memory_bytes == 0;
	v->ram_floor_bytes = gpu_term(p, r);
	v->ram_workers_bytes = workers_term(p, r, w);
	v->ram_zero_bytes = mc_zero_ram_bytes(p, r);
	v->ram_tasks_bytes = tasks_term(p, r);
	v->ram_load_bytes = mc_terms_load_bytes(&r->use, g, r->model_params,
						r->zero_stage);
	v->ram_save_bytes = mc_terms_save_bytes(&r->use, g, r->model_params);
	v->ram_act_bytes = mc_terms_act_bytes(&r->use, g);
	v->ram_nvme_bytes = mc_terms_nvme_bytes(&r->use, g);
	v->ram_dataset_bytes = mc_terms_dataset_bytes(&r->use, g, w);
	v->ram_needed_bytes = mc_ram_needed_bytes(p, r);
	v->ram_short = v->ram_needed_bytes > alloc->mem_bytes;
	v->node_ram_short = node->ram_bytes &&
		v->ram_needed_bytes > node->ram_bytes;
}

/* What a request made before submission asks beyond the node (its
 * GPUs, shares, memory, cores) or beyond MaxMemPerNode. */
static void requested_over(const struct mc_request *r,
			   const struct mc_node *node,
			   const struct mc_alloc *alloc, struct mc_verdict *v)
{
	v->node_gpus_short = node->gpus && r->gpus > node->gpus;
	v->node_shares_short = r->use.share_kind && r->use.share_per_gpu &&
		node->gpus && r->use.share_count > mc_node_shares(r, node);
	v->alloc_mem_over_node = node->ram_bytes &&
		alloc->mem_bytes > node->ram_bytes;
	v->alloc_cores_over_node = node->cores &&
		alloc->cores > node->cores;
	v->alloc_mem_over_limit = alloc->mem_limit_bytes &&
		alloc->mem_limit_asked_bytes > alloc->mem_limit_bytes;
	/* slurmctld compares a per-GPU figure as the node's memory
	 * (mc_slurm_alloc.h): under the ceiling only --mem fits. */
	if (v->alloc_mem_over_limit && v->alloc.mem_form == MC_MEM_PER_GPU)
		v->alloc.mem_form = MC_MEM_PER_NODE;
}

/* The fixes the verdict offers: the memory to ask, --cpus-per-gpu (Slurm
 * counts CPUs, hyperthreads, not cores), and -c for an srun step that got
 * fewer CPUs than its job holds. */
static void verdict_fixes(const struct mc_alloc *alloc, uint32_t tpc,
			  struct mc_verdict *v)
{
	uint32_t g = v->req.gpus;

	if ((v->ram_short || v->alloc_mem_over_node ||
	     v->alloc_mem_over_limit) && !v->node_ram_short &&
	    !v->node_gpus_short)
		v->fix_mem_bytes = v->ram_needed_bytes;
	/* Under MaxMemPerNode no memory request holds more than it. */
	if (v->alloc_mem_over_limit &&
	    v->fix_mem_bytes > alloc->mem_limit_bytes)
		v->fix_mem_bytes = 0;
	if ((v->cores_short || v->alloc_cores_over_node) &&
	    !v->node_cores_short && !v->node_gpus_short)
		v->fix_cpus_per_gpu = mc_mul_sat32((v->cores_needed + g - 1) / g,
						   tpc);
	/*
	 * Since Slurm 22.05 srun no longer inherits sbatch's -c: the job
	 * holds the CPUs but a plain srun step gets one per task.
	 */
	if (v->cores_short && alloc->job_cores &&
	    alloc->job_cores >= v->cores_needed) {
		v->step_cpus_hint = true;
		/* One task per GPU, the usual srun launch. */
		v->fix_cpus_per_task = mc_mul_sat32((v->cores_needed + g - 1) /
						    g, tpc);
	}
}

void mc_verdict_compute(const struct mc_policy *p, const struct mc_request *r,
			const struct mc_node *node,
			const struct mc_alloc *alloc, struct mc_verdict *v)
{
	uint32_t w = r->dataloader_workers;
	uint32_t tpc = node->threads_per_core ? node->threads_per_core : 1;
	struct mc_request rr;

	/* The ranks on the node: the request's (the step's tasks at launch),
	 * else the tasks Slurm's allocation puts there (at submission). */
	if (!r->use.ranks && alloc->tasks > r->gpus) {
		rr = *r;
		rr.use.ranks = alloc->tasks;
		r = &rr;
	}
	memset(v, 0, sizeof(*v));
	v->req = *r;
	v->node = *node;
	v->alloc = *alloc;
	v->ram_allocated_bytes = alloc->mem_bytes;
	v->cores_allocated = alloc->cores;
	v->node_cores = node->cores;
	v->max_dataloader_workers = -1;
	v->node_max_dataloader_workers = -1;
	if (!r->gpus) {
		/* Nothing to size: CPU steps are not memcore's business. */
		v->fits = true;
		return;
	}
	ram_terms(p, r, node, alloc, v);
	v->cores_needed = mc_step_cores(p, r, w);
	v->node_cores_needed = mc_node_cores_needed(p, mc_node_gpus(r, node), w);
	v->cores_short = alloc->cores < v->cores_needed;
	v->node_cores_short = node->cores &&
		(node->cores < v->node_cores_needed ||
		 node->cores < v->cores_needed);
	if (alloc->requested)
		requested_over(r, node, alloc, v);
	/* The audit's RAM rule for the node's own GPUs (at this step's M,
	 * a shared card's whole memory); an APU's one memory pool meets it
	 * by construction. */
	if (v->node_ram_short && node->gpus && mc_card_bytes(r) &&
	    !r->unified_memory) {
		uint64_t rule = mc_ram_floor_bytes(p, node->gpus,
						   mc_card_bytes(r));

		v->node_ram_rule_fails = node->ram_bytes < rule;
		v->node_ram_rule_bytes = rule;
	}

	v->fits = !v->ram_short && !v->cores_short && !v->node_cores_short &&
		!v->node_ram_short && !v->node_gpus_short &&
		!v->node_shares_short &&
		!v->alloc_mem_over_node && !v->alloc_cores_over_node &&
		!v->alloc_mem_over_limit;
	if (mc_verdict_impossible(v))
		v->max_gpus = largest_g(p, r, node);

	v->max_dataloader_workers = mc_largest_w(p, r, node, alloc, workers_cap(p),
					      true, true);
	v->node_max_dataloader_workers = mc_largest_w(p, r, node, alloc,
						   workers_cap(p), false,
						   false);
	verdict_fixes(alloc, tpc, v);
}

void mc_audit_node(const struct mc_policy *p, const struct mc_node *node,
		   uint64_t gpu_memory_total_bytes, bool gpu_memory_known,
		   struct mc_audit *a)
{
	memset(a, 0, sizeof(*a));
	a->gpu_memory_total_bytes = gpu_memory_total_bytes;
	a->gpu_memory_known = gpu_memory_known;
	a->workers = p->dataloader_workers;
	a->ram_needed_bytes = mc_ram_floor_bytes(p, 1, gpu_memory_total_bytes);
	a->cores_needed = mc_node_cores_needed(p, node->gpus, a->workers);
	a->ram_rule_ok = gpu_memory_known &&
		node->ram_bytes >= a->ram_needed_bytes;
	if (node->unified_memory) {
		/* One pool: the GPUs' memory is this RAM, not a second copy
		 * of it (AMD MI300A); the step rule sizes what shares it. */
		a->unified_memory = true;
		a->ram_needed_bytes = 0;
		a->ram_rule_ok = node->ram_bytes > 0;
	}
	a->cores_rule_ok = node->cores >= a->cores_needed;
}
