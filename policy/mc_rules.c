/*
 * mc_rules.c - the sizing rules, the verdict and its explanation (see
 * mc_rules.h for the rules and their sources).
 *
 * Every product saturates instead of wrapping: a wrapped RAM figure would
 * turn "needs 2^64 bytes" into "needs 3 bytes" and let the step through.
 */
#include "mc_rules.h"
#include "mc_parse.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *const mc_offload_words[] = { "none", "optimizer", "all", NULL };

static uint32_t sat_mul32(uint32_t a, uint32_t b)
{
	uint32_t r;

	return __builtin_mul_overflow(a, b, &r) ? UINT32_MAX : r;
}

static uint32_t sat_add32(uint32_t a, uint32_t b)
{
	uint32_t r;

	return __builtin_add_overflow(a, b, &r) ? UINT32_MAX : r;
}

static uint64_t sat_mul64(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

static uint64_t sat_add64(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
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

/* Cores per GPU: one for the GPU's process, one per worker, or the flat
 * MinCoresPerGpu when a site sizes that way and it is larger. */
static uint32_t cores_per_gpu(const struct mc_policy *p, uint32_t workers)
{
	return max32(sat_add32(workers, 1), p->min_cores_per_gpu);
}

uint32_t mc_step_cores_needed(const struct mc_policy *p, uint32_t gpus,
			      uint32_t workers)
{
	return sat_mul32(gpus, cores_per_gpu(p, workers));
}

/* Whether an optimizer step runs on the CPU (ZeRO-Offload to cpu). */
static bool cpu_optimizer(const struct mc_request *r)
{
	return r->offload != MC_OFFLOAD_NONE && r->zero_stage > 0 &&
	       r->model_params;
}

/* The step's cores: per rank (w + 1), and OffloadCoresPerGpu more per
 * rank when its optimizer runs on the CPU (mc_terms.h). */
static uint32_t step_cores(const struct mc_policy *p,
			   const struct mc_request *r, uint32_t w)
{
	uint32_t ranks = mc_terms_ranks(&r->use, r->gpus);

	if (!r->gpus)
		return 0;
	return sat_mul32(ranks, sat_add32(cores_per_gpu(p, w),
			 mc_terms_offload_cores(p, cpu_optimizer(r))));
}

uint32_t mc_node_cores_needed(const struct mc_policy *p, uint32_t node_gpus,
			      uint32_t workers)
{
	return sat_add32(sat_mul32(node_gpus, cores_per_gpu(p, workers)),
			 p->reserved_cores);
}

uint64_t mc_ram_floor_bytes(const struct mc_policy *p, uint32_t gpus,
			    uint64_t gpu_memory_bytes)
{
	uint64_t total = sat_mul64(gpus, gpu_memory_bytes);

	/* The usual ratio of 1 stays in exact integers. */
	if (p->host_ram_per_gpu_ram == 1.0 || total == UINT64_MAX)
		return total;
	return ld_to_bytes((long double)total *
			   (long double)p->host_ram_per_gpu_ram);
}

uint64_t mc_ram_workers_bytes(const struct mc_policy *p, uint32_t gpus,
			      uint32_t workers)
{
	return sat_mul64(sat_mul64(gpus, workers), p->ram_per_worker_bytes);
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
		return sat_mul64(r->gpus, r->gpu_memory_bytes);
	return mc_ram_floor_bytes(p, r->gpus, r->gpu_memory_bytes);
}

/* Workers of every rank: ranks x w x the job's RAM per worker. */
static uint64_t workers_term(const struct mc_policy *p,
			     const struct mc_request *r, uint32_t w)
{
	return sat_mul64(sat_mul64(mc_terms_ranks(&r->use, r->gpus), w),
			 mc_terms_ram_per_worker(p, &r->use));
}

static uint64_t tasks_term(const struct mc_policy *p,
			   const struct mc_request *r)
{
	return r->gpus ? sat_mul64(mc_terms_ranks(&r->use, r->gpus),
				   p->ram_per_task_bytes) : 0;
}

uint64_t mc_ram_needed_bytes(const struct mc_policy *p,
			     const struct mc_request *r)
{
	/* Peaks and resident terms as they coexist (mc_terms.h). */
	return mc_terms_combine(gpu_term(p, r), tasks_term(p, r),
		mc_terms_load_bytes(&r->use, r->gpus, r->model_params,
				    r->zero_stage),
		workers_term(p, r, r->dataloader_workers),
		mc_zero_ram_bytes(p, r), mc_terms_act_bytes(&r->use, r->gpus),
		mc_terms_nvme_bytes(&r->use, r->gpus),
		mc_terms_save_bytes(&r->use, r->gpus, r->model_params));
}

/* The step's RAM had it asked for w workers instead. */
static uint64_t ram_at(const struct mc_policy *p, const struct mc_request *r,
		       uint32_t w)
{
	struct mc_request x = *r;

	x.dataloader_workers = w;
	return mc_ram_needed_bytes(p, &x);
}

/* The node's GPU count G: never below the step's own g. */
static uint32_t node_gpus(const struct mc_request *r, const struct mc_node *n)
{
	return max32(n->gpus, r->gpus);
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
	    (mc_node_cores_needed(p, node_gpus(r, n), w) > n->cores ||
	     step_cores(p, r, w) > n->cores))
		return false;
	return !n->ram_bytes || ram_at(p, r, w) <= n->ram_bytes;
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
static int32_t largest_w(const struct mc_policy *p, const struct mc_request *r,
			 const struct mc_node *n, const struct mc_alloc *a,
			 uint32_t top, bool need_cores, bool need_mem)
{
	for (uint32_t w = top + 1; w-- > 0;) {
		if (!fits_node(p, r, n, w))
			continue;
		if (need_cores && step_cores(p, r, w) > a->cores)
			continue;
		if (need_mem && ram_at(p, r, w) > a->mem_bytes)
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

bool mc_verdict_impossible(const struct mc_verdict *v)
{
	return v->node_gpus_short || v->alloc_mem_over_node ||
	       v->alloc_cores_over_node || v->node_ram_short ||
	       (v->node_cores && v->cores_needed > v->node_cores);
}

void mc_verdict_compute(const struct mc_policy *p, const struct mc_request *r,
			const struct mc_node *node,
			const struct mc_alloc *alloc, struct mc_verdict *v)
{
	uint32_t g = r->gpus, w = r->dataloader_workers;
	uint32_t tpc = node->threads_per_core ? node->threads_per_core : 1;

	memset(v, 0, sizeof(*v));
	v->req = *r;
	v->node = *node;
	v->alloc = *alloc;
	v->ram_allocated_bytes = alloc->mem_bytes;
	v->cores_allocated = alloc->cores;
	v->node_cores = node->cores;
	v->max_dataloader_workers = -1;
	v->node_max_dataloader_workers = -1;
	if (!g) {
		/* Nothing to size: CPU steps are not memcore's business. */
		v->fits = true;
		return;
	}

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
	v->ram_needed_bytes = mc_ram_needed_bytes(p, r);
	v->ram_short = v->ram_needed_bytes > alloc->mem_bytes;
	v->node_ram_short = node->ram_bytes &&
		v->ram_needed_bytes > node->ram_bytes;

	v->cores_needed = step_cores(p, r, w);
	v->node_cores_needed = mc_node_cores_needed(p, node_gpus(r, node), w);
	v->cores_short = alloc->cores < v->cores_needed;
	v->node_cores_short = node->cores &&
		(node->cores < v->node_cores_needed ||
		 node->cores < v->cores_needed);

	if (alloc->requested) {
		v->node_gpus_short = node->gpus && g > node->gpus;
		v->alloc_mem_over_node = node->ram_bytes &&
			alloc->mem_bytes > node->ram_bytes;
		v->alloc_cores_over_node = node->cores &&
			alloc->cores > node->cores;
	}
	/* The audit's RAM rule for the node's own GPUs (at this step's M);
	 * an APU's one memory pool meets it by construction. */
	if (v->node_ram_short && node->gpus && r->gpu_memory_bytes &&
	    !r->unified_memory) {
		uint64_t rule = mc_ram_floor_bytes(p, node->gpus,
						   r->gpu_memory_bytes);

		v->node_ram_rule_fails = node->ram_bytes < rule;
		v->node_ram_rule_bytes = rule;
	}

	v->fits = !v->ram_short && !v->cores_short && !v->node_cores_short &&
		!v->node_ram_short && !v->node_gpus_short &&
		!v->alloc_mem_over_node && !v->alloc_cores_over_node;
	if (mc_verdict_impossible(v))
		v->max_gpus = largest_g(p, r, node);

	v->max_dataloader_workers = largest_w(p, r, node, alloc, workers_cap(p),
					      true, true);
	v->node_max_dataloader_workers = largest_w(p, r, node, alloc,
						   workers_cap(p), false,
						   false);

	if ((v->ram_short || v->alloc_mem_over_node) && !v->node_ram_short &&
	    !v->node_gpus_short)
		v->fix_mem_bytes = v->ram_needed_bytes;
	/* Slurm's --cpus-per-gpu counts CPUs (hyperthreads), not cores. */
	if ((v->cores_short || v->alloc_cores_over_node) &&
	    !v->node_cores_short && !v->node_gpus_short)
		v->fix_cpus_per_gpu = sat_mul32((v->cores_needed + g - 1) / g,
						tpc);
	/*
	 * Since Slurm 22.05 srun no longer inherits sbatch's -c: the job
	 * holds the CPUs but a plain srun step gets one per task.
	 */
	if (v->cores_short && alloc->job_cores &&
	    alloc->job_cores >= v->cores_needed) {
		v->step_cpus_hint = true;
		/* One task per GPU, the usual srun launch. */
		v->fix_cpus_per_task = sat_mul32((v->cores_needed + g - 1) / g,
						 tpc);
	}
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

/* ---- the explanation ---- */

/* Where the "short ..." column starts, as in DESIGN.md. */
#define SHORT_COL 58
#define INDENT "                "	/* under the value column */

__attribute__((format(printf, 2, 3)))
static void add_line(struct mc_explanation *out, const char *fmt, ...)
{
	va_list ap;

	if (out->n >= MC_EXPLAIN_LINES)
		return;
	va_start(ap, fmt);
	/* vsnprintf truncates: a line never exceeds MC_EXPLAIN_LINE_MAX. */
	vsnprintf(out->line[out->n], MC_EXPLAIN_LINE_MAX, fmt, ap);
	va_end(ap);
	out->n++;
}

/* A line with a right-hand "short ..." column. */
static void add_short_line(struct mc_explanation *out, const char *left,
			   const char *shortby)
{
	int pad = SHORT_COL - (int)strlen(left);

	if (pad < 2)
		pad = 2;
	add_line(out, "%s%*sshort %s", left, pad, "", shortby);
}

/* A bounded string builder for the lines made of optional pieces. */
struct sbuf {
	char b[MC_EXPLAIN_LINE_MAX];
	size_t len;
};

__attribute__((format(printf, 2, 3)))
static void sb_add(struct sbuf *s, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (s->len >= sizeof(s->b) - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(s->b + s->len, sizeof(s->b) - s->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		s->len += (size_t)n;
	if (s->len > sizeof(s->b) - 1)
		s->len = sizeof(s->b) - 1;
}

static const char *plural(uint32_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* "8 GPUs x (2 workers + 1)" or, when the flat minimum wins,
 * "8 GPUs x 16 (MinCoresPerGpu)". */
static void sb_cores_rule(struct sbuf *s, const struct mc_policy *p,
			  uint32_t g, uint32_t w)
{
	if (p->min_cores_per_gpu > w + 1)
		sb_add(s, "%u %s x %u (MinCoresPerGpu)", g,
		       plural(g, "GPU", "GPUs"), p->min_cores_per_gpu);
	else
		sb_add(s, "%u %s x (%u %s + 1)", g, plural(g, "GPU", "GPUs"),
		       w, plural(w, "worker", "workers"));
}

static uint64_t div_up64(uint64_t a, uint64_t b)
{
	return b ? a / b + (a % b != 0) : a;
}

/*
 * The options that give the step ram bytes (when ram is not 0) and cores
 * cores (when cores is not 0), in the user's own forms: --mem,
 * --mem-per-gpu or --mem-per-cpu; --cpus-per-gpu or --cpus-per-task
 * (CPUs as Slurm counts them: threads). Returns how many were written.
 */
static size_t fix_options_for(const struct mc_verdict *v, uint64_t ram,
			      uint32_t cores,
			      char opt[MC_FIX_OPTIONS][MC_FIX_OPTION_MAX])
{
	const struct mc_alloc *a = &v->alloc;
	uint32_t g = v->req.gpus ? v->req.gpus : 1;
	uint32_t tpc = v->node.threads_per_core ? v->node.threads_per_core : 1;
	uint32_t tasks = a->tasks ? a->tasks : g;
	/* CPUs of the step once the fix is taken. */
	uint64_t cpus = (uint64_t)(cores ? cores : a->cores) * tpc;
	size_t n = 0;
	char m[32];

	if (ram) {
		const char *name = "mem";
		uint64_t per = ram;

		if (a->mem_form == MC_MEM_PER_GPU) {
			name = "mem-per-gpu";
			per = div_up64(ram, g);
		} else if (a->mem_form == MC_MEM_PER_CPU && cpus) {
			/* Slurm's MB, rounded up: a G would add up to a
			 * GiB per CPU. */
			uint64_t mb = div_up64(div_up64(ram, cpus), 1 << 20);

			if (mb % 1024)
				snprintf(m, sizeof(m), "%lluM",
					 (unsigned long long)mb);
			else
				snprintf(m, sizeof(m), "%lluG",
					 (unsigned long long)(mb / 1024));
			snprintf(opt[n++], MC_FIX_OPTION_MAX,
				 "--mem-per-cpu=%s", m);
			name = NULL;
		}
		if (name)
			snprintf(opt[n++], MC_FIX_OPTION_MAX, "--%s=%s", name,
				 mc_fmt_mem_option(per, m, sizeof(m)));
	}
	if (cores) {
		uint64_t threads = (uint64_t)cores * tpc;

		if (a->cpu_form == MC_CPUS_PER_TASK)
			snprintf(opt[n++], MC_FIX_OPTION_MAX,
				 "--cpus-per-task=%llu", (unsigned long long)
				 div_up64(threads, tasks));
		else
			snprintf(opt[n++], MC_FIX_OPTION_MAX,
				 "--cpus-per-gpu=%llu", (unsigned long long)
				 div_up64(threads, g));
	}
	return n;
}

size_t mc_verdict_fix_options(const struct mc_verdict *v,
			      char opt[MC_FIX_OPTIONS][MC_FIX_OPTION_MAX])
{
	size_t n;

	if (v->fits)
		return 0;
	if (v->step_cpus_hint) {
		n = fix_options_for(v, v->fix_mem_bytes, 0, opt);
		snprintf(opt[n++], MC_FIX_OPTION_MAX, "--cpus-per-task=%u",
			 v->fix_cpus_per_task);
		return n;
	}
	return fix_options_for(v, v->fix_mem_bytes,
			       v->fix_cpus_per_gpu ? v->cores_needed : 0, opt);
}

/* "--mem=X --cpus-per-gpu=Y" (forms as the user's) into s. */
static void sb_options(struct sbuf *s, const char *sep,
		       char opt[MC_FIX_OPTIONS][MC_FIX_OPTION_MAX], size_t n)
{
	for (size_t i = 0; i < n; i++) {
		sb_add(s, "%s%s", sep, opt[i]);
		sep = " ";
	}
}

/*
 * " with --mem=X --cpus-per-gpu=Y": what an allocation must add for w
 * workers, or nothing when the current one already holds them.
 */
static void sb_fix_at(struct sbuf *s, const struct mc_policy *p,
		      const struct mc_verdict *v, uint32_t w)
{
	uint64_t ram = ram_at(p, &v->req, w);
	uint32_t cores = step_cores(p, &v->req, w);
	char opt[MC_FIX_OPTIONS][MC_FIX_OPTION_MAX];
	size_t n = fix_options_for(v, ram > v->alloc.mem_bytes ? ram : 0,
				   cores > v->alloc.cores ? cores : 0, opt);

	sb_options(s, " with ", opt, n);
}

static void explain_ram(const struct mc_policy *p, const struct mc_verdict *v,
			struct mc_explanation *out)
{
	const struct mc_request *r = &v->req;
	struct sbuf s = { .len = 0 };
	const char *sep = " = ";
	char a[32], b[32];

	uint32_t ranks = mc_terms_ranks(&r->use, r->gpus);
	bool peak = v->ram_load_bytes || v->ram_save_bytes ||
		    v->ram_act_bytes || v->ram_nvme_bytes;

	sb_add(&s, "  host RAM      %s needed",
	       mc_fmt_bytes(v->ram_needed_bytes, a, sizeof(a)));
	if (v->ram_floor_bytes) {
		sb_add(&s, "%s%s %s", sep,
		       mc_fmt_bytes(v->ram_floor_bytes, a, sizeof(a)),
		       r->unified_memory ? "GPU working set" : "GPU floor");
		if (p->host_ram_per_gpu_ram != 1.0 && !r->unified_memory)
			sb_add(&s, " (%g x GPU memory)",
			       p->host_ram_per_gpu_ram);
		sep = " + ";
	}
	if (v->ram_tasks_bytes && peak) {
		sb_add(&s, "%s%u %s x %s", sep, ranks,
		       plural(ranks, "task", "tasks"),
		       mc_fmt_bytes(p->ram_per_task_bytes, a, sizeof(a)));
		sep = " + ";
	}
	if (peak) {
		/* The long form: one term a line, then how they add up. */
		add_line(out, "%s + the largest of:", s.b);
		if (v->ram_load_bytes)
			add_line(out, INDENT "loading %s = %u %s x %s (model "
				 "built in host RAM, %s)",
				 mc_fmt_bytes(v->ram_load_bytes, a, sizeof(a)),
				 r->use.load == MC_LOAD_RANK0 ? 1 : ranks,
				 r->use.load == MC_LOAD_RANK0 ? "copy"
				 : "copies",
				 mc_fmt_bytes(v->ram_load_bytes /
					      (r->use.load == MC_LOAD_RANK0 ? 1
					       : ranks), b, sizeof(b)),
				 r->use.dtype_bytes == 2 ? "16-bit" : "fp32");
		s.len = 0;
		s.b[0] = '\0';
		sb_add(&s, INDENT "training %s =", mc_fmt_bytes(
			       sat_add64(sat_add64(sat_add64(
				 v->ram_workers_bytes, v->ram_zero_bytes),
				 sat_add64(v->ram_act_bytes,
					   v->ram_nvme_bytes)),
				 v->ram_save_bytes), a, sizeof(a)));
		sep = " ";
	}
	if (v->ram_workers_bytes) {
		sb_add(&s, "%s%u workers x %s", sep,
		       sat_mul32(ranks, r->dataloader_workers),
		       mc_fmt_bytes(mc_terms_ram_per_worker(p, &r->use), a,
				    sizeof(a)));
		sep = " + ";
	}
	if (v->ram_tasks_bytes && !peak) {
		sb_add(&s, "%s%u %s x %s", sep, ranks,
		       plural(ranks, "task", "tasks"),
		       mc_fmt_bytes(p->ram_per_task_bytes, a, sizeof(a)));
		sep = " + ";
	}
	if (v->ram_zero_bytes) {
		sb_add(&s, "%s%s ZeRO-%u %s", sep,
		       mc_fmt_bytes(v->ram_zero_bytes, a, sizeof(a)),
		       r->zero_stage, mc_zero_is_offload(r) ? "offload"
		       : "model load");
		sep = " + ";
	}
	if (v->ram_act_bytes) {
		sb_add(&s, "%s%s activation offload", sep,
		       mc_fmt_bytes(v->ram_act_bytes, a, sizeof(a)));
		sep = " + ";
	}
	if (v->ram_nvme_bytes) {
		sb_add(&s, "%s%s nvme pinned buffers", sep,
		       mc_fmt_bytes(v->ram_nvme_bytes, a, sizeof(a)));
		sep = " + ";
	}
	if (v->ram_save_bytes) {
		sb_add(&s, "%s%s checkpoint gather", sep,
		       mc_fmt_bytes(v->ram_save_bytes, a, sizeof(a)));
		sep = " + ";
	}
	if (!peak || strcmp(sep, " "))
		add_line(out, "%s", s.b);
	if (v->ram_act_bytes)
		add_line(out, INDENT "(activations: %u ranks x %u layers x "
			 "micro-batch %u x seq %u x hidden %u x %u bytes%s)",
			 ranks, r->use.layers, r->use.micro_batch,
			 r->use.seq_len, r->use.hidden,
			 r->use.act_bytes ? r->use.act_bytes : 4,
			 r->use.partition_activations &&
			 r->use.model_parallel > 1 ?
			 " / model-parallel degree" : "");
	if (v->ram_save_bytes)
		add_line(out, INDENT "(checkpoint: %s)",
			 r->use.save == MC_SAVE_NONE ?
			 "DeepSpeed gathers 16-bit weights on rank 0, 2 "
			 "bytes a parameter"
			 : r->use.save == MC_SAVE_ALL ?
			 (r->use.save_optimizer ? "full state dict on every "
			  "rank, fp32 weights + Adam state, 12 bytes a "
			  "parameter" : "full state dict on every rank, fp32 "
			  "weights, 4 bytes a parameter")
			 : (r->use.save_optimizer ? "full state dict on rank "
			    "0, fp32 weights + Adam state, 12 bytes a "
			    "parameter" : "full state dict on rank 0, fp32 "
			    "weights, 4 bytes a parameter"));
	if (v->ram_zero_bytes && !mc_zero_is_offload(r))
		add_line(out, INDENT "(DeepSpeed: each of %u %s builds the "
			 "fp32 model in host RAM%s)", r->gpus,
			 plural(r->gpus, "rank", "ranks"),
			 r->zero_stage < 3 ? ""
			 : !mc_zero_init(p, r) ? ", no zero.Init"
			 : r->largest_layer_params ? ", largest layer with "
						     "zero.Init"
			 : "; largest layer unknown, counted as the whole "
			   "model: give --largest-layer-params");
	for (uint32_t i = 0; i < r->use.n_notes; i++)
		add_line(out, INDENT "note: %s", r->use.notes[i]);

	s.len = 0;
	s.b[0] = '\0';
	sb_add(&s, INDENT "%s allocated",
	       mc_fmt_bytes(v->ram_allocated_bytes, a, sizeof(a)));
	if (v->alloc.mem_source && *v->alloc.mem_source)
		sb_add(&s, " (%s)", v->alloc.mem_source);
	if (v->ram_short)
		add_short_line(out, s.b,
			       mc_fmt_bytes(v->ram_needed_bytes -
					    v->ram_allocated_bytes, b,
					    sizeof(b)));
	else
		add_line(out, "%s", s.b);
	if (r->unified_memory)
		add_line(out, INDENT "APU: GPU memory is this host RAM, one "
			 "pool for the GPUs' working set, workers and tasks "
			 "(counted once)");
	if (r->unified_memory && v->gpu_memory_unknown)
		add_line(out, INDENT "the GPUs' working set gets the rest: %s "
			 "of this allocation (an administrator sizes it with "
			 "GpuMemory=)", v->ram_allocated_bytes >
			 v->ram_needed_bytes ?
			 mc_fmt_bytes(v->ram_allocated_bytes -
				      v->ram_needed_bytes, b, sizeof(b))
			 : "nothing");
	else if (v->gpu_memory_unknown)
		/* Users read this too: the setting is the administrator's. */
		add_line(out, INDENT "GPU memory unknown: the RAM floor was not "
			 "checked (an administrator sets GpuMemory= in "
			 "memcore.conf)");
}

static void explain_cores(const struct mc_policy *p,
			  const struct mc_verdict *v,
			  struct mc_explanation *out)
{
	const struct mc_request *r = &v->req;
	struct sbuf s = { .len = 0 };
	char left[MC_EXPLAIN_LINE_MAX], num[16];

	uint32_t ranks = mc_terms_ranks(&r->use, r->gpus);
	uint32_t extra = mc_terms_offload_cores(p, cpu_optimizer(r));

	sb_add(&s, "  CPU cores     %u needed = ", v->cores_needed);
	if (ranks > r->gpus || extra) {
		/* Per rank: MPS-style steps run several ranks per GPU. */
		sb_add(&s, "%u %s x (", ranks, plural(ranks, "rank", "ranks"));
		if (p->min_cores_per_gpu > r->dataloader_workers + 1)
			sb_add(&s, "%u MinCoresPerGpu", p->min_cores_per_gpu);
		else
			sb_add(&s, "%u %s + 1", r->dataloader_workers,
			       plural(r->dataloader_workers, "worker",
				      "workers"));
		if (extra)
			sb_add(&s, " + %u for the CPU optimizer, "
			       "OffloadCoresPerGpu", extra);
		sb_add(&s, ")");
	} else {
		sb_cores_rule(&s, p, r->gpus, r->dataloader_workers);
	}
	add_line(out, "%s", s.b);

	snprintf(left, sizeof(left), INDENT "%u allocated%s",
		 v->cores_allocated, v->step_cpus_hint ? " to this step" : "");
	if (v->cores_short) {
		snprintf(num, sizeof(num), "%u",
			 v->cores_needed - v->cores_allocated);
		add_short_line(out, left, num);
	} else {
		add_line(out, "%s", left);
	}
	if (v->step_cpus_hint)
		add_line(out, INDENT "the job holds %u cores on this node, "
			 "but this step got only %u", v->alloc.job_cores,
			 v->cores_allocated);
	if (v->node_cores_short) {
		s.len = 0;
		s.b[0] = '\0';
		sb_add(&s, INDENT "node has %u cores, needs %u = ",
		       v->node_cores, v->node_cores_needed);
		sb_cores_rule(&s, p, node_gpus(r, &v->node),
			      r->dataloader_workers);
		sb_add(&s, " + %u reserved", p->reserved_cores);
		add_line(out, "%s", s.b);
	}
}

/* The most workers the node holds, or advice when it holds none. */
static void explain_node_limit(const struct mc_policy *p,
			       const struct mc_verdict *v, const char *lead,
			       const char *what, struct mc_explanation *out)
{
	struct sbuf s = { .len = 0 };
	int32_t nw = v->node_max_dataloader_workers;

	if (nw >= 0 && (uint32_t)nw < v->req.dataloader_workers) {
		sb_add(&s, "%s--dataloader-workers=%d is the most this node "
		       "can hold", lead, nw);
		sb_fix_at(&s, p, v, (uint32_t)nw);
	} else {
		sb_add(&s, "%suse fewer GPUs per node, or a node with more %s",
		       lead, what);
	}
	add_line(out, "%s", s.b);
}

/* The only fixes left when the node cannot hold the step at all. */
static void explain_impossible_fix(const struct mc_verdict *v,
				   struct mc_explanation *out)
{
	if (v->max_gpus)
		add_line(out, "  fix: at most %u %s per node fit%s this node "
			 "(use more nodes), or another partition",
			 v->max_gpus, plural(v->max_gpus, "GPU", "GPUs"),
			 v->max_gpus == 1 ? "s" : "");
	else
		add_line(out, "  fix: none on this node: use another "
			 "partition");
}

static void explain_fix(const struct mc_policy *p, const struct mc_verdict *v,
			struct mc_explanation *out)
{
	const struct mc_request *r = &v->req;
	uint32_t w = r->dataloader_workers;
	struct sbuf s = { .len = 0 };
	const char *lead = "  fix: ";
	char a[32], b[32], c[32];
	char opt[MC_FIX_OPTIONS][MC_FIX_OPTION_MAX];
	size_t n_opt;

	if (v->node_gpus_short) {
		explain_impossible_fix(v, out);
		return;
	}
	if (v->node_ram_rule_fails) {
		add_line(out, "  node RAM %s is below the site's RAM rule "
			 "(%s = %u GPUs x %s x HostRamPerGpuRam %g):",
			 mc_fmt_bytes(v->node.ram_bytes, a, sizeof(a)),
			 mc_fmt_bytes(v->node_ram_rule_bytes, b, sizeof(b)),
			 v->node.gpus, mc_fmt_bytes(r->gpu_memory_bytes, c,
			 sizeof(c)), p->host_ram_per_gpu_ram);
		add_line(out, "  no step of %u GPUs fits this node, whatever "
			 "it asks; an administrator can lower", r->gpus);
		add_line(out, "  HostRamPerGpuRam or fix the node "
			 "(memcore audit lists such nodes)");
		explain_impossible_fix(v, out);
		return;
	}
	if (v->node_ram_short) {
		add_line(out, "  fix: no allocation on this node can fit %s "
			 "(node has %s)",
			 mc_fmt_bytes(v->ram_needed_bytes, a, sizeof(a)),
			 mc_fmt_bytes(v->node.ram_bytes, b, sizeof(b)));
		explain_node_limit(p, v, "       ", "RAM", out);
		return;
	}
	if (v->node_cores_short) {
		explain_node_limit(p, v, lead, "cores", out);
		return;
	}

	/* The smallest change at the asked w, in the user's forms. */
	n_opt = fix_options_for(v, v->fix_mem_bytes,
				v->fix_cpus_per_gpu && !v->step_cpus_hint
				? v->cores_needed : 0, opt);
	sb_options(&s, "", opt, n_opt);
	/* And for cores the fewest-worker way out: the largest w that the
	 * allocated cores hold, with the --mem it then needs. */
	if (w > 0 && !v->step_cpus_hint && !v->alloc_mem_over_node &&
	    !v->alloc_cores_over_node) {
		int32_t alt = largest_w(p, r, &v->node, &v->alloc, w - 1, true,
					false);

		if (alt >= 0 && (v->cores_short ||
				 ram_at(p, r, (uint32_t)alt) <=
				 v->alloc.mem_bytes)) {
			sb_add(&s, "%s--dataloader-workers=%d",
			       s.len ? ", or " : "", alt);
			sb_fix_at(&s, p, v, (uint32_t)alt);
		}
	}
	if (s.len) {
		add_line(out, "%s%s", lead, s.b);
		lead = "       ";
	}
	if (v->step_cpus_hint) {
		uint32_t n = v->fix_cpus_per_task;
		uint32_t tpc = v->node.threads_per_core ?
			v->node.threads_per_core : 1;

		add_line(out, "%sgive the step its CPUs: srun --cpus-per-task=%u"
			 " (or export SRUN_CPUS_PER_TASK=%u)", lead, n, n);
		add_line(out, "       since Slurm 22.05 srun does not inherit "
			 "sbatch's -c/--cpus-per-task");
		add_line(out, "       (%u per task for one task per GPU; one "
			 "task driving all %u GPUs needs %u)", n, r->gpus,
			 sat_mul32(v->cores_needed, tpc));
	}
}

/* The end of the first line: " fits:", " needs more than it was given:"
 * or, when no allocation can fit, " cannot fit: <why>:". */
static void sb_header_verdict(struct sbuf *s, const struct mc_verdict *v)
{
	char a[32], b[32];

	if (v->fits) {
		sb_add(s, " fits:");
	} else if (v->node_gpus_short) {
		sb_add(s, " cannot fit: it asks for %u GPUs, the node has %u:",
		       v->req.gpus, v->node.gpus);
	} else if (v->node_ram_rule_fails) {
		sb_add(s, " cannot fit: the node fails the site's RAM rule "
		       "(%s for %u x %s GPUs):",
		       mc_fmt_bytes(v->node.ram_bytes, a, sizeof(a)),
		       v->node.gpus, mc_fmt_bytes(v->req.gpu_memory_bytes, b,
						  sizeof(b)));
	} else if (v->alloc_mem_over_node) {
		sb_add(s, " cannot fit: it asks for %s of memory, the node "
		       "has %s:", mc_fmt_bytes(v->alloc.mem_bytes, a,
					      sizeof(a)),
		       mc_fmt_bytes(v->node.ram_bytes, b, sizeof(b)));
	} else if (v->alloc_cores_over_node) {
		sb_add(s, " cannot fit: it asks for %u cores, the node has "
		       "%u:", v->alloc.cores, v->node_cores);
	} else if (v->node_ram_short) {
		sb_add(s, " cannot fit: it needs %s of RAM, the node has %s:",
		       mc_fmt_bytes(v->ram_needed_bytes, a, sizeof(a)),
		       mc_fmt_bytes(v->node.ram_bytes, b, sizeof(b)));
	} else if (v->node_cores && v->cores_needed > v->node_cores) {
		sb_add(s, " cannot fit: it needs %u cores, the node has %u:",
		       v->cores_needed, v->node_cores);
	} else {
		sb_add(s, " needs more than it was given:");
	}
}

const char *mc_verdict_reason(const struct mc_verdict *v, char *buf,
			      size_t buflen)
{
	char a[32], b[32];

	if (v->fits)
		snprintf(buf, buflen, "%s", "");
	else if (v->node_gpus_short)
		snprintf(buf, buflen, "has %u GPUs", v->node.gpus);
	else if (v->node_ram_rule_fails)
		snprintf(buf, buflen, "fails the site's RAM rule");
	else if (v->alloc_mem_over_node)
		snprintf(buf, buflen, "has %s, not %s",
			 mc_fmt_bytes(v->node.ram_bytes, a, sizeof(a)),
			 mc_fmt_bytes(v->alloc.mem_bytes, b, sizeof(b)));
	else if (v->alloc_cores_over_node)
		snprintf(buf, buflen, "has %u cores, not %u", v->node_cores,
			 v->alloc.cores);
	else if (v->node_ram_short)
		snprintf(buf, buflen, "has %s, needs %s",
			 mc_fmt_bytes(v->node.ram_bytes, a, sizeof(a)),
			 mc_fmt_bytes(v->ram_needed_bytes, b, sizeof(b)));
	else if (v->node_cores_short)
		snprintf(buf, buflen, "has %u cores, needs %u", v->node_cores,
			 v->node_cores_needed > v->cores_needed
			 ? v->node_cores_needed : v->cores_needed);
	else if (v->ram_short)
		snprintf(buf, buflen, "needs %s",
			 mc_fmt_bytes(v->ram_needed_bytes, a, sizeof(a)));
	else
		snprintf(buf, buflen, "needs %u cores", v->cores_needed);
	return buf;
}

void mc_verdict_explain(const struct mc_policy *p, const struct mc_verdict *v,
			const char *step, const char *host,
			struct mc_explanation *out)
{
	const struct mc_request *r = &v->req;
	struct sbuf s = { .len = 0 };
	char a[32];

	out->n = 0;
	if (!r->gpus)
		return;		/* a GPU-less step: nothing to explain */

	/* The plugin names the step; the memcore command has none. */
	sb_add(&s, "memcore:");
	if (step && *step)
		sb_add(&s, " step %s", step);
	else
		sb_add(&s, " this step");
	if (host && *host)
		sb_add(&s, " on %s", host);
	sb_header_verdict(&s, v);
	add_line(out, "%s", s.b);

	if (v->gpu_memory_unknown)
		add_line(out, "  GPUs          %u x unknown memory (this node)",
			 r->gpus);
	else
		add_line(out, "  GPUs          %u x %s (this node)", r->gpus,
			 mc_fmt_bytes(r->gpu_memory_bytes, a, sizeof(a)));
	explain_ram(p, v, out);
	explain_cores(p, v, out);
	if (!v->fits)
		explain_fix(p, v, out);
	else if (v->max_dataloader_workers > (int32_t)r->dataloader_workers)
		add_line(out, "  up to %d DataLoader workers per GPU fit "
			 "this allocation", v->max_dataloader_workers);
}
