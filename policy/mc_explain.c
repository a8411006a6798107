/*
 * mc_explain.c - the explanation of a verdict, in the user's words: the
 * lines a refused step prints, the few words of a node list, the fix
 * options. Every text memcore prints about a verdict is here; what the
 * verdict is, and why a step does not fit (mc_verdict_why), is decided in
 * mc_rules.c.
 */
#include "mc_rules.h"
#include "mc_parse.h"
#include "mc_util.h"
#include "mc_rules_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- the explanation ---- */

/* Where the "short ..." column starts: past the longest figure text, so
 * the shortfalls line up in one column (mc_rules.h, mc_explain). */
#define SHORT_COL 58
#define INDENT "                "	/* under the value column */

__attribute__((format(printf, 2, 3)))
static void add_line(struct mc_explanation *out, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	mc_lines_vadd(out->line[0], &out->n, MC_EXPLAIN_LINES,
		      MC_EXPLAIN_LINE_MAX, fmt, ap);
	va_end(ap);
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

/* What a shared-GPU step counts: Slurm's gres names. */
static const char *share_name(const struct mc_request *r)
{
	return r->use.share_kind == 1 ? "shards" : "MPS shares";
}

/* Whether the flat MinCoresPerGpu, not the workers, sets the cores of
 * a GPU at w workers. */
static bool min_cores_win(const struct mc_policy *p, uint32_t w)
{
	return mc_cores_per_gpu_at(w, p->workers_per_core, 0) <
	       p->min_cores_per_gpu;
}

/* The workers' part of a GPU's cores: "2 workers + 1", or with a site's
 * WorkersPerCore "4 workers / WorkersPerCore=2 + 1" (", rounded up"
 * when it does not divide). */
static void sb_worker_cores(struct sbuf *s, const struct mc_policy *p,
			    uint32_t w)
{
	uint32_t n = p->workers_per_core ? p->workers_per_core : 1;

	sb_add(s, "%u %s", w, plural(w, "worker", "workers"));
	if (n > 1)
		sb_add(s, " / WorkersPerCore=%u%s", n,
		       w % n ? ", rounded up," : "");
	sb_add(s, " + 1");
}

/* "8 GPUs x (2 workers + 1)" or, when the flat minimum wins,
 * "8 GPUs x 16 (MinCoresPerGpu)". */
static void sb_cores_rule(struct sbuf *s, const struct mc_policy *p,
			  uint32_t g, uint32_t w)
{
	if (min_cores_win(p, w)) {
		sb_add(s, "%u %s x %u (MinCoresPerGpu)", g,
		       plural(g, "GPU", "GPUs"), p->min_cores_per_gpu);
		return;
	}
	sb_add(s, "%u %s x (", g, plural(g, "GPU", "GPUs"));
	sb_worker_cores(s, p, w);
	sb_add(s, ")");
}

const char *mc_cores_rule_text(const struct mc_policy *p, uint32_t g,
			       uint32_t w, bool terse, char *buf, size_t len)
{
	struct sbuf s = { .len = 0 };
	uint32_t n = p->workers_per_core ? p->workers_per_core : 1;

	s.b[0] = '\0';
	if (!terse)
		sb_cores_rule(&s, p, g, w);
	else if (min_cores_win(p, w))
		sb_add(&s, "%u x %u", g, p->min_cores_per_gpu);
	else if (n > 1)
		sb_add(&s, "%u x (%u / %u + 1)", g, w, n);
	else
		sb_add(&s, "%u x (%u + 1)", g, w);
	snprintf(buf, len, "%s", s.b);
	return buf;
}

/* The model's dtype in words: --model-dtype's 2 bytes or fp32. */
static const char *dtype_name(uint32_t bytes)
{
	return bytes == 2 ? "16-bit" : "fp32";
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

/* The options of the fix at w workers: what the step then needs beyond
 * its allocation (none when w fits what it was given). */
static size_t options_at(const struct mc_policy *p,
			 const struct mc_verdict *v, uint32_t w,
			 char opt[MC_FIX_OPTIONS][MC_FIX_OPTION_MAX])
{
	uint64_t ram = mc_ram_at(p, &v->req, w);
	uint32_t cores = mc_step_cores_needed(p, v->req.gpus, w);

	return fix_options_for(v, ram > v->alloc.mem_bytes ? ram : 0,
			       cores > v->alloc.cores ? cores : 0, opt);
}

/*
 * Which of the node's own limits the fix must name, where no allocation
 * on the node fits at the asked workers (the node's RAM, its cores or its
 * cores rule): the explanation's "fix:" and fix_options both read this.
 */
enum node_limit { LIMIT_NONE, LIMIT_RAM, LIMIT_CORES };

static enum node_limit node_limit(const struct mc_verdict *v)
{
	enum mc_misfit why = mc_verdict_why(v);

	if (why == MC_MISFIT_NONE || why == MC_MISFIT_NODE_GPUS ||
	    why == MC_MISFIT_NODE_SHARES || why == MC_MISFIT_NODE_RAM_RULE)
		return LIMIT_NONE;
	/* Asked beyond the node (MEM/CORES_OVER_NODE) on a node that is
	 * short itself: the node's limit is the fix to name. */
	if (why == MC_MISFIT_NODE_RAM || v->node_ram_short)
		return LIMIT_RAM;
	if (why == MC_MISFIT_NODE_CORES || why == MC_MISFIT_NODE_CORES_RULE ||
	    v->node_cores_short)
		return LIMIT_CORES;
	return LIMIT_NONE;
}

/* The most workers the node holds, when fewer than asked; else -1. */
static int32_t node_limit_workers(const struct mc_verdict *v)
{
	int32_t nw = v->node_max_dataloader_workers;

	return nw >= 0 && (uint32_t)nw < v->req.dataloader_workers ? nw : -1;
}

/*
 * The changes the job itself can make to how it loads and saves the
 * model, for when that is what does not fit (8 ranks each building
 * LLaMA-65B in host RAM; a 405B full state dict gathered on rank 0):
 * build it once or on the meta device, gather a full state dict on rank 0
 * only, or save sharded. The sources name what each option stands for.
 */
enum job_kind { JOB_LOAD, JOB_SAVE };

static const struct job_fix {
	enum job_kind kind;
	int value;		/* enum mc_load or enum mc_save */
	const char *opt, *what;
} job_fixes[] = {
	{ JOB_LOAD, MC_LOAD_RANK0, "--model-load=rank0",
	  "only rank 0 builds the model in host RAM, the others on the meta "
	  "device (FSDP sync_module_states=True; Accelerate "
	  "fsdp_cpu_ram_efficient_loading)" },
	{ JOB_LOAD, MC_LOAD_META, "--model-load=meta",
	  "no host copy: the model built on the meta device and loaded "
	  "shard by shard (Accelerate init_empty_weights, FSDP "
	  "param_init_fn; ZeRO-3 zero.Init)" },
	{ JOB_SAVE, MC_SAVE_RANK0, "--checkpoint-save=rank0",
	  "gather the full state dict on rank 0 only "
	  "(FullStateDictConfig(offload_to_cpu=True, rank0_only=True))" },
	{ JOB_SAVE, MC_SAVE_NONE, "--checkpoint-save=none",
	  "a sharded save, nothing gathered (FSDP SHARDED_STATE_DICT; "
	  "DeepSpeed without stage3_gather_16bit_weights_on_model_save; "
	  "consolidate offline)" },
};

/* The job-side fixes found for a verdict (job_fix_search). */
struct job_found {
	size_t count;			/* fixes found, 0..2 */
	bool pair;			/* fix[0] and fix[1] only together */
	const struct job_fix *fix[2];
	char opt[2][MC_FIX_OPTIONS][MC_FIX_OPTION_MAX];
	size_t n[2];			/* the allocation options each needs */
};

static void job_fix_search(const struct mc_policy *p,
			   const struct mc_verdict *v, struct job_found *jf);

/* Whether fix f changes request r's load or save at all. */
static bool job_fix_applies(const struct job_fix *f, const struct mc_verdict *v)
{
	const struct mc_usage *u = &v->req.use;

	if (f->kind == JOB_LOAD)
		return v->ram_load_bytes && f->value > (int)u->load;
	if (!v->ram_save_bytes)
		return false;
	if (f->value == MC_SAVE_RANK0)
		return u->save == MC_SAVE_ALL;
	return u->save != MC_SAVE_NONE || u->save_16bit;
}

static void job_fix_apply(const struct job_fix *f, struct mc_request *x)
{
	if (f->kind == JOB_LOAD) {
		x->use.load = (enum mc_load)f->value;
	} else {
		x->use.save = (enum mc_save)f->value;
		if (f->value == MC_SAVE_NONE)
			x->use.save_16bit = false;
	}
}

/*
 * Judge x again on the same node and allocation: true when it fits as
 * given (n 0) or with the options written to opt (n of them) that an
 * allocation on this node can give, and it needs less RAM than v.
 */
static bool job_fix_fits(const struct mc_policy *p, const struct mc_verdict *v,
			 const struct mc_request *x,
			 char opt[MC_FIX_OPTIONS][MC_FIX_OPTION_MAX], size_t *n)
{
	struct mc_verdict vx;
	enum mc_misfit why;

	mc_verdict_compute(p, x, &v->node, &v->alloc, &vx);
	*n = 0;
	if (vx.ram_needed_bytes >= v->ram_needed_bytes)
		return false;
	if (vx.fits)
		return true;
	why = mc_verdict_why(&vx);
	if ((why != MC_MISFIT_RAM && why != MC_MISFIT_CORES) ||
	    vx.step_cpus_hint)
		return false;
	*n = fix_options_for(&vx, vx.fix_mem_bytes, vx.fix_cpus_per_gpu ?
			     vx.cores_needed : 0, opt);
	return *n > 0;
}

/*
 * The first job-side fix as options (the job's, then the allocation's it
 * needs), when they are at most MC_FIX_OPTIONS; else 0.
 */
static size_t job_fix_options(const struct mc_policy *p,
			      const struct mc_verdict *v,
			      char opt[MC_FIX_OPTIONS][MC_FIX_OPTION_MAX])
{
	struct job_found jf;
	size_t k = 0;

	job_fix_search(p, v, &jf);
	if (!jf.count || (jf.pair ? 2 : 1) + jf.n[0] > MC_FIX_OPTIONS)
		return 0;
	snprintf(opt[k++], MC_FIX_OPTION_MAX, "%s", jf.fix[0]->opt);
	if (jf.pair)
		snprintf(opt[k++], MC_FIX_OPTION_MAX, "%s", jf.fix[1]->opt);
	for (size_t i = 0; i < jf.n[0]; i++)
		memcpy(opt[k++], jf.opt[0][i], MC_FIX_OPTION_MAX);
	return k;
}

size_t mc_verdict_fix_options(const struct mc_policy *p,
			      const struct mc_verdict *v,
			      char opt[MC_FIX_OPTIONS][MC_FIX_OPTION_MAX])
{
	size_t n;
	int32_t nw;

	if (v->fits)
		return 0;
	/* The node holds no allocation at these workers: fewer, and what
	 * they then need, as the explanation's fix says. */
	if (node_limit(v) != LIMIT_NONE) {
		char at[MC_FIX_OPTIONS][MC_FIX_OPTION_MAX];

		nw = node_limit_workers(v);
		if (nw < 0)
			return job_fix_options(p, v, opt);
		snprintf(opt[0], MC_FIX_OPTION_MAX, "--dataloader-workers=%d",
			 nw);
		/* At most --mem and a CPU option: both fit after it. */
		n = options_at(p, v, (uint32_t)nw, at);
		for (size_t i = 0; i < n && i + 1 < MC_FIX_OPTIONS; i++)
			memcpy(opt[i + 1], at[i], MC_FIX_OPTION_MAX);
		return n + 1 < MC_FIX_OPTIONS ? n + 1 : MC_FIX_OPTIONS;
	}
	if (v->step_cpus_hint) {
		n = fix_options_for(v, v->fix_mem_bytes, 0, opt);
		snprintf(opt[n++], MC_FIX_OPTION_MAX, "--cpus-per-task=%u",
			 v->fix_cpus_per_task);
		return n;
	}
	n = fix_options_for(v, v->fix_mem_bytes,
			    v->fix_cpus_per_gpu ? v->cores_needed : 0, opt);
	/* No allocation fits: the job's own change, where one does. */
	return n ? n : job_fix_options(p, v, opt);
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
	char opt[MC_FIX_OPTIONS][MC_FIX_OPTION_MAX];
	size_t n = options_at(p, v, w, opt);

	sb_options(s, " with ", opt, n);
}

/*
 * RamPerTask's term, "8 tasks x 1 GiB": counted per GPU process, so with
 * fewer tasks than GPUs (one task's torchrun spawning a process per GPU)
 * the count is of GPU processes, not of tasks the step does not have.
 */
static void sb_tasks(struct sbuf *s, const char *sep,
		     const struct mc_policy *p, const struct mc_request *r,
		     uint32_t ranks)
{
	char a[32];
	bool per_gpu = r->use.ranks && r->use.ranks < ranks;

	sb_add(s, "%s%u %s x %s", sep, ranks, per_gpu
	       ? plural(ranks, "GPU process", "GPU processes")
	       : plural(ranks, "task", "tasks"),
	       mc_fmt_bytes(p->ram_per_task_bytes, a, sizeof(a)));
}

/*
 * --dataset-in-memory's line, "dataset in RAM  3 tasks x 20 GiB x (4
 * workers + 1) = 300 GiB" for Python objects, "8 tasks x 205 GiB = 1.6
 * TiB" for arrays the workers share (mc_terms.h), and, when the step
 * does not fit or the copies are a quarter of its RAM or more, what
 * holds the dataset once: mapping it from local scratch (Open Book, CPU
 * memory: keep_in_memory=False); for objects, what arrays would count.
 */
static void explain_dataset(const struct mc_verdict *v, uint32_t ranks,
			    struct mc_explanation *out)
{
	const struct mc_request *r = &v->req;
	bool per_gpu = r->use.ranks && r->use.ranks < ranks;
	bool arrays = r->use.dataset_kind == MC_DATASET_ARRAYS;
	uint32_t w = r->dataloader_workers;
	const char *who = per_gpu ? plural(ranks, "GPU process",
					   "GPU processes")
				  : plural(ranks, "task", "tasks");
	char a[32], b[32], c[32];

	if (arrays)
		add_line(out, INDENT "dataset in RAM  %u %s x %s = %s: a copy "
			 "in each task, its DataLoader workers share it "
			 "(arrays: numpy/Arrow pages never written)", ranks,
			 who, mc_fmt_bytes(r->use.dataset_bytes, a, sizeof(a)),
			 mc_fmt_bytes(v->ram_dataset_bytes, b, sizeof(b)));
	else
		add_line(out, INDENT "dataset in RAM  %u %s x %s x (%u %s + 1) "
			 "= %s: a copy in each task and each DataLoader "
			 "worker (Python objects: reference counts copy the "
			 "pages)", ranks, who,
			 mc_fmt_bytes(r->use.dataset_bytes, a, sizeof(a)), w,
			 plural(w, "worker", "workers"),
			 mc_fmt_bytes(v->ram_dataset_bytes, b, sizeof(b)));
	if (v->fits && v->ram_dataset_bytes < v->ram_needed_bytes / 4)
		return;
	add_line(out, INDENT "instead: stage the dataset to local scratch and "
		 "map it (keep_in_memory=False): one page-cache copy the "
		 "kernel can reclaim, not %s of copies",
		 mc_fmt_bytes(v->ram_dataset_bytes, a, sizeof(a)));
	if (!arrays && w)
		add_line(out, INDENT "numpy or Arrow data is not copied into "
			 "the workers: if it is that, say --dataset-in-memory="
			 "%s:arrays (%s, not %s)",
			 mc_fmt_mem_option(r->use.dataset_bytes, c, sizeof(c)),
			 mc_fmt_bytes(mc_terms_dataset_task_bytes(&r->use,
								  r->gpus),
				      a, sizeof(a)),
			 mc_fmt_bytes(v->ram_dataset_bytes, b, sizeof(b)));
	if (r->use.dataset_stage && *r->use.dataset_stage)
		add_line(out, INDENT "stage it first: %s",
			 r->use.dataset_stage);
}

/* The load peak's line: the copies of the model built in host RAM,
 * with the tasks' dataset copies (ds_tasks) that are there too. */
static void ram_load_line(const struct mc_verdict *v, uint32_t ranks,
			  uint64_t ds_tasks, struct mc_explanation *out)
{
	const struct mc_request *r = &v->req;
	uint32_t copies = r->use.load == MC_LOAD_RANK0 ? 1 : ranks;
	char a[32], b[32], c[32];

	add_line(out, INDENT "loading %s = %u %s x %s (model built in host "
		 "RAM, %s)%s%s%s",
		 mc_fmt_bytes(mc_add_sat64(v->ram_load_bytes, ds_tasks), a,
			      sizeof(a)),
		 copies, plural(copies, "copy", "copies"),
		 mc_fmt_bytes(v->ram_load_bytes / copies, b, sizeof(b)),
		 dtype_name(r->use.dtype_bytes),
		 ds_tasks ? " + " : "",
		 ds_tasks ? mc_fmt_bytes(ds_tasks, c, sizeof(c)) : "",
		 ds_tasks ? " the tasks' dataset copies" : "");
}

/* The training terms after sep, each joined by " + ": workers, tasks
 * (when not in the peak's head), ZeRO, activations, nvme buffers, the
 * checkpoint gather, the dataset. Returns the separator after the last
 * (sep when there was none). */
static const char *sb_training_terms(struct sbuf *s, const char *sep,
				     const struct mc_policy *p,
				     const struct mc_verdict *v,
				     uint32_t ranks, bool peak)
{
	const struct mc_request *r = &v->req;
	/* The terms that are a figure and a name, in the line's order. */
	const struct {
		uint64_t bytes;
		const char *what;
	} terms[] = {
		{ v->ram_act_bytes, "activation offload" },
		{ v->ram_nvme_bytes, "nvme pinned buffers" },
		{ v->ram_save_bytes, "checkpoint gather" },
		{ v->ram_dataset_bytes, "dataset in RAM" },
	};
	char a[32];

	if (v->ram_workers_bytes) {
		uint32_t nw = mc_mul_sat32(ranks, r->dataloader_workers);

		sb_add(s, "%s%u %s x %s", sep, nw,
		       plural(nw, "worker", "workers"),
		       mc_fmt_bytes(mc_terms_ram_per_worker(p, &r->use), a,
				    sizeof(a)));
		sep = " + ";
	}
	if (v->ram_tasks_bytes && !peak) {
		sb_tasks(s, sep, p, r, ranks);
		sep = " + ";
	}
	if (v->ram_zero_bytes) {
		sb_add(s, "%s%s ZeRO-%u %s", sep,
		       mc_fmt_bytes(v->ram_zero_bytes, a, sizeof(a)),
		       r->zero_stage, mc_zero_is_offload(r) ? "offload"
		       : "model load");
		sep = " + ";
	}
	for (size_t i = 0; i < sizeof(terms) / sizeof(terms[0]); i++) {
		if (!terms[i].bytes)
			continue;
		sb_add(s, "%s%s %s", sep,
		       mc_fmt_bytes(terms[i].bytes, a, sizeof(a)), terms[i].what);
		sep = " + ";
	}
	return sep;
}

/* How the terms were counted: the dataset, activations, checkpoint and
 * DeepSpeed model load each in a line of its own, then the notes. */
static void ram_term_notes(const struct mc_policy *p,
			   const struct mc_verdict *v, uint32_t ranks,
			   struct mc_explanation *out)
{
	const struct mc_request *r = &v->req;

	if (v->ram_dataset_bytes)
		explain_dataset(v, ranks, out);
	if (v->ram_act_bytes)
		add_line(out, INDENT "(activations: %u ranks x %u layers x "
			 "micro-batch %u x seq %u x hidden %u x %u bytes%s)",
			 ranks, r->use.layers, r->use.micro_batch,
			 r->use.seq_len, r->use.hidden,
			 r->use.act_bytes ? r->use.act_bytes : 4,
			 r->use.partition_activations &&
			 r->use.model_parallel > 1 ?
			 " / model-parallel degree" : "");
	if (v->ram_save_bytes && r->use.save == MC_SAVE_NONE)
		add_line(out, INDENT "(checkpoint: DeepSpeed gathers 16-bit "
			 "weights on rank 0, 2 bytes a parameter)");
	else if (v->ram_save_bytes)
		add_line(out, INDENT "(checkpoint: full state dict on %s, %s "
			 "weights%s, %u bytes a parameter, as saved)",
			 r->use.save == MC_SAVE_ALL ? "every rank" : "rank 0",
			 dtype_name(r->use.dtype_bytes),
			 r->use.save_optimizer ? " + Adam state" : "",
			 mc_terms_save_param_bytes(&r->use));
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
}

/* The allocation against the need, and what unified memory or an
 * unknown GPU memory changes of the figures. */
static void ram_allocated_lines(const struct mc_verdict *v,
				struct mc_explanation *out)
{
	const struct mc_request *r = &v->req;
	struct sbuf s = { .len = 0 };
	char a[32], b[32];

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

static void explain_ram(const struct mc_policy *p, const struct mc_verdict *v,
			struct mc_explanation *out)
{
	const struct mc_request *r = &v->req;
	struct sbuf s = { .len = 0 };
	const char *sep = " = ";
	char a[32];

	uint32_t ranks = mc_terms_ranks(&r->use, r->gpus);
	bool peak = v->ram_load_bytes || v->ram_save_bytes ||
		    v->ram_act_bytes || v->ram_nvme_bytes;
	/* The ranks' own dataset copies: there in the load peak too. */
	uint64_t ds_tasks = v->ram_dataset_bytes
			    ? mc_terms_dataset_task_bytes(&r->use, r->gpus) : 0;

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
		sb_tasks(&s, sep, p, r, ranks);
		sep = " + ";
	}
	if (peak) {
		/* The long form: one term a line, then how they add up. */
		add_line(out, "%s + the largest of:", s.b);
		if (v->ram_load_bytes)
			ram_load_line(v, ranks, ds_tasks, out);
		s.len = 0;
		s.b[0] = '\0';
		sb_add(&s, INDENT "training %s =", mc_fmt_bytes(
			       mc_add_sat64(mc_add_sat64(mc_add_sat64(
				 v->ram_workers_bytes, v->ram_zero_bytes),
				 mc_add_sat64(v->ram_act_bytes,
					   v->ram_nvme_bytes)),
				 mc_add_sat64(v->ram_save_bytes,
					      v->ram_dataset_bytes)), a,
			       sizeof(a)));
		sep = " ";
	}
	sep = sb_training_terms(&s, sep, p, v, ranks, peak);
	if (!peak || strcmp(sep, " "))
		add_line(out, "%s", s.b);
	ram_term_notes(p, v, ranks, out);
	ram_allocated_lines(v, out);
}

static void explain_cores(const struct mc_policy *p,
			  const struct mc_verdict *v,
			  struct mc_explanation *out)
{
	const struct mc_request *r = &v->req;
	struct sbuf s = { .len = 0 };
	char left[MC_EXPLAIN_LINE_MAX], num[16];

	uint32_t ranks = mc_terms_ranks(&r->use, r->gpus);
	uint32_t extra = mc_terms_offload_cores(p, mc_cpu_optimizer(r));

	sb_add(&s, "  CPU cores     %u needed = ", v->cores_needed);
	if (ranks > r->gpus || extra) {
		/* Per rank: MPS-style steps run several ranks per GPU. */
		sb_add(&s, "%u %s x (", ranks, plural(ranks, "rank", "ranks"));
		if (min_cores_win(p, r->dataloader_workers))
			sb_add(&s, "%u MinCoresPerGpu", p->min_cores_per_gpu);
		else
			sb_worker_cores(&s, p, r->dataloader_workers);
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
		sb_cores_rule(&s, p, mc_node_gpus(r, &v->node),
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
	int32_t nw = node_limit_workers(v);

	if (nw >= 0) {
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

static void add_job_fix(struct mc_explanation *out, const char *opts,
			const char *what, size_t n,
			char opt[MC_FIX_OPTIONS][MC_FIX_OPTION_MAX])
{
	struct sbuf s = { .len = 0 };

	sb_add(&s, "       or, in the job: %s", opts);
	if (n)
		sb_options(&s, " with ", opt, n);
	else
		sb_add(&s, " (fits the memory given)");
	add_line(out, "%s", s.b);
	add_line(out, "         %s", what);
}

/*
 * For each of loading and saving, the first job-side fix that makes the
 * step fit when judged again with it; when neither alone does, the
 * first pair of a load and a save fix that does (pair). Each found fix comes with the
 * allocation options it then needs (n 0: it fits what was given).
 */
static void job_fix_search(const struct mc_policy *p,
			   const struct mc_verdict *v, struct job_found *jf)
{
	const struct job_fix *last[2] = { NULL, NULL };
	struct mc_request x;

	memset(jf, 0, sizeof(*jf));
	if (!v->ram_short && !v->node_ram_short)
		return;
	for (int kind = JOB_LOAD; kind <= JOB_SAVE; kind++) {
		for (size_t i = 0; i < sizeof(job_fixes) / sizeof(job_fixes[0]);
		     i++) {
			const struct job_fix *f = &job_fixes[i];

			if (f->kind != (enum job_kind)kind ||
			    !job_fix_applies(f, v))
				continue;
			last[kind] = f;
			x = v->req;
			job_fix_apply(f, &x);
			if (!job_fix_fits(p, v, &x, jf->opt[jf->count],
					  &jf->n[jf->count]))
				continue;
			jf->fix[jf->count++] = f;
			break;
		}
	}
	if (jf->count || !last[JOB_LOAD] || !last[JOB_SAVE])
		return;
	/* Loading and saving both: the smallest pair that fits (each peak
	 * alone leaves the other). */
	for (size_t i = 0; i < sizeof(job_fixes) / sizeof(job_fixes[0]); i++)
		for (size_t j = 0; j < sizeof(job_fixes) / sizeof(job_fixes[0]);
		     j++) {
			const struct job_fix *l = &job_fixes[i];
			const struct job_fix *sv = &job_fixes[j];

			if (l->kind != JOB_LOAD || sv->kind != JOB_SAVE ||
			    !job_fix_applies(l, v) || !job_fix_applies(sv, v))
				continue;
			x = v->req;
			job_fix_apply(l, &x);
			job_fix_apply(sv, &x);
			if (!job_fix_fits(p, v, &x, jf->opt[0], &jf->n[0]))
				continue;
			jf->fix[0] = l;
			jf->fix[1] = sv;
			jf->count = 1;
			jf->pair = true;
			return;
		}
}

static void explain_job_fix(const struct mc_policy *p,
			    const struct mc_verdict *v,
			    struct mc_explanation *out)
{
	struct job_found jf;
	char both[2 * MC_FIX_OPTION_MAX];

	job_fix_search(p, v, &jf);
	if (jf.pair) {
		snprintf(both, sizeof(both), "%s %s", jf.fix[0]->opt,
			 jf.fix[1]->opt);
		add_job_fix(out, both, "both: each peak alone leaves the other "
			    "(see memcore(8), --model-load and "
			    "--checkpoint-save)", jf.n[0], jf.opt[0]);
		return;
	}
	for (size_t i = 0; i < jf.count; i++)
		add_job_fix(out, jf.fix[i]->opt, jf.fix[i]->what, jf.n[i],
			    jf.opt[i]);
}

/* The fix of a step no allocation of this node can fit (too few GPUs
 * or shares, the site's RAM rule, the node's RAM or cores, MaxMemPerNode):
 * true when it is one. */
static bool explain_limit_fix(const struct mc_policy *p,
			      const struct mc_verdict *v,
			      struct mc_explanation *out)
{
	const struct mc_request *r = &v->req;
	char a[32], b[32], c[32];
	enum mc_misfit why = mc_verdict_why(v);

	if (why == MC_MISFIT_NODE_GPUS) {
		explain_impossible_fix(v, out);
		return true;
	}
	if (why == MC_MISFIT_NODE_SHARES) {
		add_line(out, "  fix: at most %llu %s on this node (%u GPUs x "
			 "%u), or another partition",
			 (unsigned long long)mc_node_shares(r, &v->node),
			 share_name(r), v->node.gpus, r->use.share_per_gpu);
		return true;
	}
	if (why == MC_MISFIT_NODE_RAM_RULE) {
		add_line(out, "  node RAM %s is below the site's RAM rule "
			 "(%s = %u GPUs x %s x HostRamPerGpuRam %g):",
			 mc_fmt_bytes(v->node.ram_bytes, a, sizeof(a)),
			 mc_fmt_bytes(v->node_ram_rule_bytes, b, sizeof(b)),
			 v->node.gpus, mc_fmt_bytes(mc_card_bytes(r), c,
			 sizeof(c)), p->host_ram_per_gpu_ram);
		add_line(out, "  no step of %u GPUs fits this node, whatever "
			 "it asks; an administrator can lower", r->gpus);
		add_line(out, "  HostRamPerGpuRam or fix the node "
			 "(memcore audit lists such nodes)");
		explain_impossible_fix(v, out);
		explain_job_fix(p, v, out);
		return true;
	}
	if (node_limit(v) == LIMIT_RAM) {
		add_line(out, "  fix: no allocation on this node can fit %s "
			 "(node has %s)",
			 mc_fmt_bytes(v->ram_needed_bytes, a, sizeof(a)),
			 mc_fmt_bytes(v->node.ram_bytes, b, sizeof(b)));
		explain_node_limit(p, v, "       ", "RAM", out);
		explain_job_fix(p, v, out);
		return true;
	}
	if (node_limit(v) == LIMIT_CORES) {
		explain_node_limit(p, v, "  fix: ", "cores", out);
		return true;
	}
	/* Under MaxMemPerNode no --mem holds what the rules need. */
	if (v->alloc_mem_over_limit && !v->fix_mem_bytes) {
		add_line(out, "  fix: memcore needs %s a node for it, more than "
			 "MaxMemPerNode=%llu: fewer GPUs a node or another "
			 "partition", mc_fmt_bytes(v->ram_needed_bytes, a,
						   sizeof(a)),
			 (unsigned long long)(v->alloc.mem_limit_bytes >> 20));
		explain_job_fix(p, v, out);
		return true;
	}
	return false;
}

/* For cores the fewest-worker way out: the largest w that the allocated
 * cores hold, with the --mem it then needs; short of RAM only, the most
 * workers that fit the memory and cores given. After s's options. */
static void sb_fewer_workers(struct sbuf *s, const struct mc_policy *p,
			     const struct mc_verdict *v)
{
	const struct mc_request *r = &v->req;
	uint32_t w = r->dataloader_workers;
	int32_t alt, in_mem;

	if (w == 0 || v->step_cpus_hint || v->alloc_mem_over_node ||
	    v->alloc_cores_over_node || v->alloc_mem_over_limit)
		return;
	alt = mc_largest_w(p, r, &v->node, &v->alloc, w - 1, true, false);
	/* Short of RAM only: so that no --mem is needed. */
	in_mem = v->ram_short && !v->cores_short ?
		mc_largest_w(p, r, &v->node, &v->alloc, w - 1, true, true)
		: -1;
	if (in_mem >= 0) {
		sb_add(s, "%s--dataloader-workers=%d", s->len ? ", or " : "",
		       in_mem);
		sb_add(s, " (fits the memory and cores given)");
	} else if (alt >= 0 && (v->cores_short ||
				mc_ram_at(p, r, (uint32_t)alt) <=
				v->alloc.mem_bytes)) {
		sb_add(s, "%s--dataloader-workers=%d", s->len ? ", or " : "",
		       alt);
		sb_fix_at(s, p, v, (uint32_t)alt);
	}
}

static void explain_fix(const struct mc_policy *p, const struct mc_verdict *v,
			struct mc_explanation *out)
{
	struct sbuf s = { .len = 0 };
	const char *lead = "  fix: ";
	char opt[MC_FIX_OPTIONS][MC_FIX_OPTION_MAX];
	size_t n_opt;

	if (explain_limit_fix(p, v, out))
		return;
	/* The smallest change at the asked w, in the user's forms. */
	n_opt = fix_options_for(v, v->fix_mem_bytes,
				v->fix_cpus_per_gpu && !v->step_cpus_hint
				? v->cores_needed : 0, opt);
	sb_options(&s, "", opt, n_opt);
	sb_fewer_workers(&s, p, v);
	if (s.len) {
		add_line(out, "%s%s", lead, s.b);
		lead = "       ";
	}
	explain_job_fix(p, v, out);
	if (v->step_cpus_hint) {
		uint32_t n = v->fix_cpus_per_task;
		uint32_t tpc = v->node.threads_per_core ?
			v->node.threads_per_core : 1;

		add_line(out, "%sgive the step its CPUs: srun --cpus-per-task=%u"
			 " (or export SRUN_CPUS_PER_TASK=%u)", lead, n, n);
		add_line(out, "       since Slurm 22.05 srun does not inherit "
			 "sbatch's -c/--cpus-per-task");
		add_line(out, "       (%u per task for one task per GPU; one "
			 "task driving all %u GPUs needs %u)", n, v->req.gpus,
			 mc_mul_sat32(v->cores_needed, tpc));
	}
}

/* The end of the first line: " fits:", " needs more than it was given:"
 * or, when no allocation can fit, " cannot fit: <why>:". */
static void sb_header_verdict(struct sbuf *s, const struct mc_verdict *v)
{
	char a[32], b[32];

	switch (mc_verdict_why(v)) {
	case MC_MISFIT_NONE:
		sb_add(s, " fits:");
		break;
	case MC_MISFIT_NODE_GPUS:
		sb_add(s, " cannot fit: it asks for %u GPUs, the node has %u:",
		       v->req.gpus, v->node.gpus);
		break;
	case MC_MISFIT_NODE_SHARES:
		sb_add(s, " cannot fit: it asks for %u %s, the node has %llu "
		       "(%u GPUs x %u):", v->req.use.share_count,
		       share_name(&v->req),
		       (unsigned long long)mc_node_shares(&v->req, &v->node),
		       v->node.gpus, v->req.use.share_per_gpu);
		break;
	case MC_MISFIT_NODE_RAM_RULE:
		sb_add(s, " cannot fit: the node fails the site's RAM rule "
		       "(%s for %u x %s GPUs):",
		       mc_fmt_bytes(v->node.ram_bytes, a, sizeof(a)),
		       v->node.gpus, mc_fmt_bytes(mc_card_bytes(&v->req), b,
						  sizeof(b)));
		break;
	case MC_MISFIT_MEM_OVER_NODE:
		sb_add(s, " cannot fit: it asks for %s of memory, the node "
		       "has %s:", mc_fmt_bytes(v->alloc.mem_bytes, a,
					      sizeof(a)),
		       mc_fmt_bytes(v->node.ram_bytes, b, sizeof(b)));
		break;
	case MC_MISFIT_CORES_OVER_NODE:
		sb_add(s, " cannot fit: it asks for %u cores, the node has "
		       "%u:", v->alloc.cores, v->node_cores);
		break;
	case MC_MISFIT_NODE_RAM:
		sb_add(s, " cannot fit: it needs %s of RAM, the node has %s:",
		       mc_fmt_bytes(v->ram_needed_bytes, a, sizeof(a)),
		       mc_fmt_bytes(v->node.ram_bytes, b, sizeof(b)));
		break;
	case MC_MISFIT_NODE_CORES:
		sb_add(s, " cannot fit: it needs %u cores, the node has %u:",
		       v->cores_needed, v->node_cores);
		break;
	case MC_MISFIT_NODE_CORES_RULE:
		/* The node's rule, not the step's allocation: more cores
		 * for the step would not help (ReservedCores= included). */
		sb_add(s, " is refused by the node's cores rule, %s: the "
		       "node's %u GPUs at %u DataLoader workers each need %u "
		       "cores, it has %u:", v->ram_short || v->cores_short
		       ? "and needs more than it was given"
		       : "not its allocation",
		       mc_node_gpus(&v->req, &v->node),
		       v->req.dataloader_workers, v->node_cores_needed,
		       v->node_cores);
		break;
	case MC_MISFIT_MEM_OVER_LIMIT:
		/* slurmctld job_mgr.c _valid_pn_min_mem from
		 * job_limits_check: pending, reason MaxMemPerLimit. */
		sb_add(s, " would never start: it asks for %s a node, above "
		       "the partition's MaxMemPerNode=%llu, and Slurm keeps "
		       "it pending (reason MaxMemPerLimit)", mc_fmt_bytes(
		       v->alloc.mem_limit_asked_bytes, a, sizeof(a)),
		       (unsigned long long)(v->alloc.mem_limit_bytes >> 20));
		sb_add(s, ":");
		break;
	case MC_MISFIT_RAM:
	case MC_MISFIT_CORES:
		sb_add(s, " needs more than it was given:");
		break;
	}
}

const char *mc_verdict_reason(const struct mc_verdict *v, char *buf,
			      size_t buflen)
{
	char a[32], b[32];

	switch (mc_verdict_why(v)) {
	case MC_MISFIT_NONE:
		snprintf(buf, buflen, "%s", "");
		break;
	case MC_MISFIT_NODE_GPUS:
		snprintf(buf, buflen, "has %u GPUs", v->node.gpus);
		break;
	case MC_MISFIT_NODE_SHARES:
		snprintf(buf, buflen, "has %llu %s",
			 (unsigned long long)mc_node_shares(&v->req, &v->node),
			 share_name(&v->req));
		break;
	case MC_MISFIT_NODE_RAM_RULE:
		snprintf(buf, buflen, "fails the site's RAM rule");
		break;
	case MC_MISFIT_MEM_OVER_NODE:
		snprintf(buf, buflen, "has %s, not %s",
			 mc_fmt_bytes(v->node.ram_bytes, a, sizeof(a)),
			 mc_fmt_bytes(v->alloc.mem_bytes, b, sizeof(b)));
		break;
	case MC_MISFIT_CORES_OVER_NODE:
		snprintf(buf, buflen, "has %u cores, not %u", v->node_cores,
			 v->alloc.cores);
		break;
	case MC_MISFIT_NODE_RAM:
		snprintf(buf, buflen, "has %s, needs %s",
			 mc_fmt_bytes(v->node.ram_bytes, a, sizeof(a)),
			 mc_fmt_bytes(v->ram_needed_bytes, b, sizeof(b)));
		break;
	case MC_MISFIT_NODE_CORES:
	case MC_MISFIT_NODE_CORES_RULE:
		snprintf(buf, buflen, "has %u cores, needs %u", v->node_cores,
			 v->node_cores_needed > v->cores_needed
			 ? v->node_cores_needed : v->cores_needed);
		break;
	case MC_MISFIT_MEM_OVER_LIMIT:
		/* MaxMemPerNode in slurm.conf's own unit, MB: a rounded
		 * "176G" would be above the ceiling. */
		snprintf(buf, buflen, "asks for %s, above MaxMemPerNode=%llu",
			 mc_fmt_bytes(v->alloc.mem_limit_asked_bytes, a,
				      sizeof(a)),
			 (unsigned long long)(v->alloc.mem_limit_bytes >> 20));
		break;
	case MC_MISFIT_RAM:
		snprintf(buf, buflen, "needs %s",
			 mc_fmt_bytes(v->ram_needed_bytes, a, sizeof(a)));
		break;
	case MC_MISFIT_CORES:
		snprintf(buf, buflen, "needs %u cores", v->cores_needed);
		break;
	}
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

	/* Where M came from: the node's own figure only at launch; at
	 * submission a key of memcore.conf, an option or a file. */
	if (v->gpu_memory_unknown)
		add_line(out, "  GPUs          %u x unknown memory (%s)",
			 r->gpus, r->gpu_memory_source ? r->gpu_memory_source
			 : "this node");
	else
		add_line(out, "  GPUs          %u x %s (%s)", r->gpus,
			 mc_fmt_bytes(r->gpu_memory_bytes, a, sizeof(a)),
			 r->gpu_memory_source ? r->gpu_memory_source
			 : "this node");
	explain_ram(p, v, out);
	explain_cores(p, v, out);
	if (!v->fits)
		explain_fix(p, v, out);
	else if (v->max_dataloader_workers > (int32_t)r->dataloader_workers)
		/* The limit is the allocation's, or (same figure as any
		 * allocation would get) the node's own. */
		add_line(out, "  up to %d DataLoader workers per GPU fit %s",
			 v->max_dataloader_workers,
			 v->max_dataloader_workers ==
			 v->node_max_dataloader_workers
			 ? "this node (its cores and RAM rules; more "
			   "allocation would not raise it)"
			 : "this allocation");
}
