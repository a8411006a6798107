/*
 * test_rules.c - the sizing rules, DeepSpeed's offload figures, the verdict
 * and its explanation, and the node audit (mc_rules.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "mc_gpu_memory.h"
#include "mc_rules.h"
#include "mc_test_checks.h"

#define GiB ((uint64_t)1 << 30)
#define MiB ((uint64_t)1 << 20)

/* t5-3b, DeepSpeed's documentation example. */
#define T5_3B 2851598336ULL

static char err[256];

/* The verdict tests' policy: RamPerTask=0, ReservedCores=4. */
static void policy(struct mc_policy *p)
{
	mc_policy_defaults(p);
	p->ram_per_task_bytes = 0;
	p->reserved_cores = 4;
}

static struct mc_request req(uint32_t gpus, uint64_t gpu_mem, uint32_t w)
{
	struct mc_request r = {
		.gpus = gpus, .nodes = 1, .dataloader_workers = w,
		.gpu_memory_bytes = gpu_mem,
	};
	return r;
}

static struct mc_node node(uint64_t ram, uint32_t cores, uint32_t gpus)
{
	struct mc_node n = {
		.ram_bytes = ram, .cores = cores, .threads_per_core = 1,
		.gpus = gpus,
	};
	return n;
}

static struct mc_alloc alloc(uint64_t mem, uint32_t cores, const char *src)
{
	struct mc_alloc a = { .mem_bytes = mem, .cores = cores,
			      .mem_source = src };
	return a;
}

static void dump(const struct mc_explanation *e)
{
	for (size_t i = 0; i < e->n; i++)
		fprintf(stderr, "| %s\n", e->line[i]);
}

/*
 * The verdict tests are tables: a row per step (request, node, allocation
 * and how the policy differs from policy()), with what the verdict and its
 * explanation must say. A failure names the row.
 */

/* What one row gives: the verdict, and what is made of it. */
struct outcome {
	struct mc_verdict v;
	size_t lines;		/* of the explanation */
	bool impossible;	/* mc_verdict_impossible() */
	enum mc_misfit why;	/* mc_verdict_why() */
	size_t fixes;		/* mc_verdict_fix_options() */
};

/* A figure of the outcome (OUT) or of its verdict (V), to be w. */
#define OUT(f, w) MC_CHECK(struct outcome, f, w)
#define V(f, w) OUT(v.f, w)

/* req(), node() and alloc() as initializers (REQ and ALLOC take other
 * fields after; NODE_T: threads a core other than 1). */
#define REQ(g, m, w, ...) { .gpus = (g), .nodes = 1, \
			    .dataloader_workers = (w), \
			    .gpu_memory_bytes = (m), __VA_ARGS__ }
#define NODE_T(ram, c, g, threads) { .ram_bytes = (ram), .cores = (c), \
					 .threads_per_core = (threads), \
					 .gpus = (g) }
#define NODE(ram, c, g) NODE_T(ram, c, g, 1)
#define ALLOC(m, c, src, ...) { .mem_bytes = (m), .cores = (c), \
				.mem_source = (src), __VA_ARGS__ }

struct vrow {
	const char *name;
	struct {		/* policy() but these, where not 0 */
		uint64_t ram_per_worker, ram_per_task;
		uint32_t min_cores_per_gpu;
		uint32_t workers_per_core;
	} pol;
	struct mc_request r;
	struct mc_node n;
	struct mc_alloc a;
	struct mc_check want[20];		/* up to the first without what */
	/* the explanation, for this step and host (NULL: none named) */
	const char *step, *host;
	bool long_names;		/* 399-character step and host */
	const char *line[8];		/* exactly, by index; NULL: any */
	const char *says[8];		/* in some line */
	const char *not_says[4];	/* in none */
	const char *reason;		/* mc_verdict_reason(); NULL: any */
	const char *fix[MC_FIX_OPTIONS];	/* the options; NULL: any */
};

/* Every line is short enough and the whole text contains want. */
static void assert_explains(const char *row, const struct mc_explanation *e,
			    const char *want)
{
	for (size_t i = 0; i < e->n; i++) {
		if (strlen(e->line[i]) >= MC_EXPLAIN_LINE_MAX) {
			dump(e);
			fail_msg("%s: line %zu too long", row, i);
		}
		if (strchr(e->line[i], '\n')) {
			dump(e);
			fail_msg("%s: line %zu has a newline", row, i);
		}
		if (strstr(e->line[i], want))
			return;
	}
	dump(e);
	fail_msg("%s: explanation lacks '%s'", row, want);
}

static void assert_not_explains(const char *row,
				const struct mc_explanation *e,
				const char *unwanted)
{
	for (size_t i = 0; i < e->n; i++) {
		if (strstr(e->line[i], unwanted)) {
			dump(e);
			fail_msg("%s: explanation has '%s'", row, unwanted);
		}
	}
}

static void run_verdicts(const struct vrow *rows, size_t n_rows)
{
	static char longname[400];

	memset(longname, 'x', sizeof(longname) - 1);
	for (const struct vrow *c = rows; c < rows + n_rows; c++) {
		struct mc_policy p;
		struct outcome o;
		struct mc_explanation e;
		char why[96], opt[MC_FIX_OPTIONS][MC_FIX_OPTION_MAX];
		const char *reason;

		fprintf(stderr, "row: %s\n", c->name);
		policy(&p);
		if (c->pol.ram_per_worker)
			p.ram_per_worker_bytes = c->pol.ram_per_worker;
		if (c->pol.ram_per_task)
			p.ram_per_task_bytes = c->pol.ram_per_task;
		if (c->pol.min_cores_per_gpu)
			p.min_cores_per_gpu = c->pol.min_cores_per_gpu;
		if (c->pol.workers_per_core)
			p.workers_per_core = c->pol.workers_per_core;
		memset(&o, 0, sizeof(o));
		mc_verdict_compute(&p, &c->r, &c->n, &c->a, &o.v);
		mc_verdict_explain(&p, &o.v, c->long_names ? longname : c->step,
				   c->long_names ? longname : c->host, &e);
		o.lines = e.n;
		o.impossible = mc_verdict_impossible(&o.v);
		o.why = mc_verdict_why(&o.v);
		o.fixes = mc_verdict_fix_options(&p, &o.v, opt);
		mc_assert_checks(c->name, &o, c->want);
		for (size_t i = 0; i < e.n; i++)
			if (strlen(e.line[i]) >= MC_EXPLAIN_LINE_MAX)
				fail_msg("%s: line %zu too long", c->name, i);
		for (size_t i = 0; i < 8; i++) {
			if (c->line[i] && (i >= e.n ||
					   strcmp(e.line[i], c->line[i]))) {
				dump(&e);
				fail_msg("%s: line %zu is not '%s'", c->name, i,
					 c->line[i]);
			}
		}
		for (size_t i = 0; i < 8 && c->says[i]; i++)
			assert_explains(c->name, &e, c->says[i]);
		for (size_t i = 0; i < 4 && c->not_says[i]; i++)
			assert_not_explains(c->name, &e, c->not_says[i]);
		reason = mc_verdict_reason(&o.v, why, sizeof(why));
		if (c->reason && strcmp(reason, c->reason))
			fail_msg("%s: reason '%s', want '%s'", c->name, reason,
				 c->reason);
		for (size_t i = 0; i < MC_FIX_OPTIONS; i++) {
			if (c->fix[i] && (i >= o.fixes ||
					  strcmp(opt[i], c->fix[i])))
				fail_msg("%s: fix option %zu is '%s', want "
					 "'%s'", c->name, i,
					 i < o.fixes ? opt[i] : "(none)",
					 c->fix[i]);
		}
	}
}

#define RUN(rows) run_verdicts(rows, sizeof(rows) / sizeof(rows[0]))

static void test_cores(void **state)
{
	struct mc_policy p;

	(void)state;
	mc_policy_defaults(&p);
	/* Open Book compute/cpu: 28 cores at w=2 (NLP), 44 at w=4 (CV). */
	assert_int_equal(mc_step_cores_needed(&p, 8, 2), 24);
	assert_int_equal(mc_node_cores_needed(&p, 8, 2), 28);
	assert_int_equal(mc_step_cores_needed(&p, 8, 4), 40);
	assert_int_equal(mc_node_cores_needed(&p, 8, 4), 44);
	assert_int_equal(mc_step_cores_needed(&p, 0, 4), 0);
	assert_int_equal(mc_node_cores_needed(&p, 0, 4), 4);
	assert_int_equal(mc_step_cores_needed(&p, 1, 0), 1);

	/* The flat ratio wins when larger, and only then. */
	p.min_cores_per_gpu = 16;
	assert_int_equal(mc_step_cores_needed(&p, 8, 2), 128);
	assert_int_equal(mc_node_cores_needed(&p, 8, 2), 132);
	assert_int_equal(mc_step_cores_needed(&p, 2, 20), 42);
	assert_int_equal(mc_node_cores_needed(&p, 2, 20), 46);

	/* WorkersPerCore: ceil(w / N) + 1 a GPU, 1 the book's rule, 0 as 1;
	 * MinCoresPerGpu still the floor. Written from the rule. */
	for (uint32_t n = 0; n <= 5; n++) {
		for (uint32_t w = 0; w <= 33; w++) {
			uint32_t per = n ? (w + n - 1) / n + 1 : w + 1;

			p.min_cores_per_gpu = 0;
			p.workers_per_core = n;
			assert_int_equal(mc_step_cores_needed(&p, 8, w),
					 8 * per);
			assert_int_equal(mc_node_cores_needed(&p, 8, w),
					 8 * per + 4);
			p.min_cores_per_gpu = 6;
			assert_int_equal(mc_step_cores_needed(&p, 8, w),
					 8 * (per > 6 ? per : 6));
		}
	}
	p.workers_per_core = 1;

	/* Saturation, never wrap-around. */
	p.min_cores_per_gpu = 0;
	assert_int_equal(mc_step_cores_needed(&p, UINT32_MAX, 1024),
			 UINT32_MAX);
	assert_int_equal(mc_node_cores_needed(&p, UINT32_MAX, 1), UINT32_MAX);
	assert_int_equal(mc_step_cores_needed(&p, 1, UINT32_MAX), UINT32_MAX);
}

static void test_ram(void **state)
{
	struct mc_policy p;
	struct mc_request r = req(8, 80 * GiB, 2);

	(void)state;
	policy(&p);
	assert_int_equal(mc_ram_floor_bytes(&p, 8, 80 * GiB), 640 * GiB);
	assert_int_equal(mc_ram_workers_bytes(&p, 8, 2), 64 * GiB);
	assert_int_equal(mc_ram_needed_bytes(&p, &r), 704 * GiB);

	p.ram_per_task_bytes = GiB;
	assert_int_equal(mc_ram_needed_bytes(&p, &r), 712 * GiB);

	p.host_ram_per_gpu_ram = 1.5;
	assert_int_equal(mc_ram_floor_bytes(&p, 8, 80 * GiB), 960 * GiB);
	/* Rounded up to a byte: 3 * 1.5 = 4.5 -> 5. */
	assert_int_equal(mc_ram_floor_bytes(&p, 1, 3), 5);
	p.host_ram_per_gpu_ram = 1.0;

	/* Saturation. */
	assert_int_equal(mc_ram_floor_bytes(&p, 8, UINT64_MAX / 2), UINT64_MAX);
	p.host_ram_per_gpu_ram = 2.0;
	assert_int_equal(mc_ram_floor_bytes(&p, 1, UINT64_MAX / 2 + 1),
			 UINT64_MAX);
	/* 2^32 GPUs x 1024 workers x 4 GiB is about 2^74 bytes. */
	assert_int_equal(mc_ram_workers_bytes(&p, UINT32_MAX, 1024),
			 UINT64_MAX);
	r = req(UINT32_MAX, UINT64_MAX, 1024);
	assert_int_equal(mc_ram_needed_bytes(&p, &r), UINT64_MAX);
}

static double gib(uint64_t b)
{
	return (double)b / (double)GiB;
}

static void assert_gib(uint64_t bytes, double want)
{
	if (fabs(gib(bytes) - want) > 0.005)
		fail_msg("%.4f GiB, want %.2f", gib(bytes), want);
}

static void test_offload(void **state)
{
	struct mc_policy p;
	struct mc_request r = req(8, 80 * GiB, 2);

	(void)state;
	mc_policy_defaults(&p);
	r.model_params = T5_3B;

	/* DeepSpeed docs, t5-3b on one node of 8 GPUs, f = 1.5. */
	r.zero_stage = 2;
	r.offload = MC_OFFLOAD_OPTIMIZER;
	assert_gib(mc_zero_ram_bytes(&p, &r), 127.48);
	assert_int_equal(mc_zero_ram_bytes(&p, &r), T5_3B * 32 * 3 / 2);
	r.zero_stage = 1;
	assert_int_equal(mc_zero_ram_bytes(&p, &r), T5_3B * 32 * 3 / 2);

	r.zero_stage = 3;
	r.offload = MC_OFFLOAD_ALL;
	p.zero_init = 1;
	assert_gib(mc_zero_ram_bytes(&p, &r), 71.71);
	assert_int_equal(mc_zero_ram_bytes(&p, &r), T5_3B * 18 * 3 / 2);
	p.zero_init = 0;
	assert_gib(mc_zero_ram_bytes(&p, &r), 127.48);
	r.offload = MC_OFFLOAD_OPTIMIZER;
	p.zero_init = 1;
	assert_gib(mc_zero_ram_bytes(&p, &r), 63.74);
	assert_int_equal(mc_zero_ram_bytes(&p, &r), T5_3B * 16 * 3 / 2);
	/* Without zero_init, optimizer only: P * max(4 * 8, 16) * f. */
	p.zero_init = 0;
	assert_gib(mc_zero_ram_bytes(&p, &r), 127.48);

	/* Several nodes. ZeRO-2 counts all GPUs: 2 x 8 -> P * 64 * f. */
	r.nodes = 2;
	r.zero_stage = 2;
	assert_int_equal(mc_zero_ram_bytes(&p, &r), T5_3B * 64 * 3 / 2);
	/* ZeRO-3 zero_init splits the states over the nodes. */
	r.zero_stage = 3;
	r.offload = MC_OFFLOAD_ALL;
	p.zero_init = 1;
	assert_int_equal(mc_zero_ram_bytes(&p, &r), T5_3B * 18 * 3 / 2 / 2);
	/* Without zero_init, one GPU on 8 nodes: max(4, 18/8) = 4. */
	p.zero_init = 0;
	r.gpus = 1;
	r.nodes = 8;
	assert_int_equal(mc_zero_ram_bytes(&p, &r), T5_3B * 4 * 3 / 2);
	/* ... and on 4 nodes 18/4 = 4.5 wins over 4. */
	r.nodes = 4;
	assert_int_equal(mc_zero_ram_bytes(&p, &r), T5_3B * 18 * 3 / 2 / 4);

	/* No parameter count, or stage 0: no term. */
	r = req(8, 80 * GiB, 2);
	r.model_params = 0;
	r.zero_stage = 3;
	assert_int_equal(mc_zero_ram_bytes(&p, &r), 0);
	r.offload = MC_OFFLOAD_OPTIMIZER;
	assert_int_equal(mc_zero_ram_bytes(&p, &r), 0);
	r.model_params = T5_3B;
	r.offload = MC_OFFLOAD_NONE;
	r.zero_stage = 0;
	assert_int_equal(mc_zero_ram_bytes(&p, &r), 0);
	/* Unsupported combinations give 0 (mc_request_check refuses). */
	r.model_params = T5_3B;
	r.zero_stage = 0;
	assert_int_equal(mc_zero_ram_bytes(&p, &r), 0);
	r.zero_stage = 2;
	r.offload = MC_OFFLOAD_ALL;
	assert_int_equal(mc_zero_ram_bytes(&p, &r), 0);

	/* Into the total. */
	policy(&p);
	r = req(8, 80 * GiB, 2);
	r.model_params = T5_3B;
	r.zero_stage = 2;
	r.offload = MC_OFFLOAD_OPTIMIZER;
	assert_int_equal(mc_ram_needed_bytes(&p, &r),
			 704 * GiB + T5_3B * 32 * 3 / 2);

	/* Huge models saturate. */
	r.model_params = 1000000000000000ULL;
	r.nodes = 1u << 20;
	r.gpus = 1u << 16;
	assert_int_equal(mc_zero_ram_bytes(&p, &r), UINT64_MAX);
}

/* t5-3b's largest layer (the shared embedding, 32128 x 1024), as
 * DeepSpeed's estimate_zero3_model_states_mem_needs_all_live counts it. */
#define T5_3B_LARGEST 32899072ULL

/*
 * DeepSpeed's published estimator tables for t5-3b ("per CPU" column,
 * docs/code-docs/source/memory.rst, 1 node x 8 GPUs) and the same
 * estimators at 2 nodes x 8 GPUs, every offload and zero.Init row, to
 * 0.01 GiB; each row also exact to the byte (f = 1.5).
 */
static void test_zero_tables(void **state)
{
	static const struct {
		uint32_t stage, nodes;
		enum mc_offload offload;
		enum mc_zero_init_src zi;
		double gib;
		uint64_t bytes;
	} rows[] = {
		/* estimate_zero2_model_states_mem_needs, 1 node */
		{ 2, 1, MC_OFFLOAD_OPTIMIZER, MC_ZERO_INIT_POLICY, 127.48,
		  T5_3B * 48 },
		{ 2, 1, MC_OFFLOAD_NONE, MC_ZERO_INIT_POLICY, 127.48,
		  T5_3B * 48 },
		{ 1, 1, MC_OFFLOAD_NONE, MC_ZERO_INIT_POLICY, 127.48,
		  T5_3B * 48 },
		/* 2 nodes: offload counts all 16 GPUs, the load the node's 8 */
		{ 2, 2, MC_OFFLOAD_OPTIMIZER, MC_ZERO_INIT_POLICY, 254.95,
		  T5_3B * 96 },
		{ 2, 2, MC_OFFLOAD_NONE, MC_ZERO_INIT_POLICY, 127.48,
		  T5_3B * 48 },
		/* estimate_zero3_model_states_mem_needs, 1 node */
		{ 3, 1, MC_OFFLOAD_ALL, MC_ZERO_INIT_YES, 71.71, T5_3B * 27 },
		{ 3, 1, MC_OFFLOAD_ALL, MC_ZERO_INIT_NO, 127.48, T5_3B * 48 },
		{ 3, 1, MC_OFFLOAD_OPTIMIZER, MC_ZERO_INIT_YES, 63.74,
		  T5_3B * 24 },
		{ 3, 1, MC_OFFLOAD_OPTIMIZER, MC_ZERO_INIT_NO, 127.48,
		  T5_3B * 48 },
		{ 3, 1, MC_OFFLOAD_NONE, MC_ZERO_INIT_YES, 1.47,
		  T5_3B_LARGEST * 48 },
		{ 3, 1, MC_OFFLOAD_NONE, MC_ZERO_INIT_NO, 127.48, T5_3B * 48 },
		/* 2 nodes */
		{ 3, 2, MC_OFFLOAD_ALL, MC_ZERO_INIT_YES, 35.85,
		  T5_3B * 27 / 2 },
		{ 3, 2, MC_OFFLOAD_ALL, MC_ZERO_INIT_NO, 127.48, T5_3B * 48 },
		{ 3, 2, MC_OFFLOAD_OPTIMIZER, MC_ZERO_INIT_YES, 31.87,
		  T5_3B * 12 },
		{ 3, 2, MC_OFFLOAD_OPTIMIZER, MC_ZERO_INIT_NO, 127.48,
		  T5_3B * 48 },
		{ 3, 2, MC_OFFLOAD_NONE, MC_ZERO_INIT_YES, 1.47,
		  T5_3B_LARGEST * 48 },
		{ 3, 2, MC_OFFLOAD_NONE, MC_ZERO_INIT_NO, 127.48, T5_3B * 48 },
	};
	struct mc_policy p;

	(void)state;
	mc_policy_defaults(&p);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct mc_request r = req(8, 80 * GiB, 2);

		r.model_params = T5_3B;
		r.largest_layer_params = T5_3B_LARGEST;
		r.zero_stage = rows[i].stage;
		r.nodes = rows[i].nodes;
		r.offload = rows[i].offload;
		r.zero_init = rows[i].zi;
		assert_gib(mc_zero_ram_bytes(&p, &r), rows[i].gib);
		assert_int_equal(mc_zero_ram_bytes(&p, &r), rows[i].bytes);
	}
}

/* ZeRO-3 without offload: the request's zero.Init wins over the policy's
 * ZeroInit; an unknown largest layer counts as the whole model. */
static void test_zero3_model_load(void **state)
{
	struct mc_policy p;
	struct mc_request r = req(8, 80 * GiB, 2);
	struct mc_node n = node(2048 * GiB, 128, 8);
	struct mc_alloc a = alloc(720 * GiB, 128, "--mem=720G");
	struct mc_verdict v;
	struct mc_explanation e;

	(void)state;
	policy(&p);
	r.model_params = T5_3B;
	r.zero_stage = 3;
	/* Policy ZeroInit=yes, largest layer known: 1.47 GiB. */
	r.largest_layer_params = T5_3B_LARGEST;
	assert_int_equal(mc_zero_ram_bytes(&p, &r), T5_3B_LARGEST * 48);
	/* Policy ZeroInit=no: the whole model, whatever the layer. */
	p.zero_init = 0;
	assert_int_equal(mc_zero_ram_bytes(&p, &r), T5_3B * 48);
	/* ... unless the user says zero.Init. */
	r.zero_init = MC_ZERO_INIT_YES;
	assert_int_equal(mc_zero_ram_bytes(&p, &r), T5_3B_LARGEST * 48);
	/* zero.Init but the layer unknown: the whole model. */
	r.largest_layer_params = 0;
	assert_int_equal(mc_zero_ram_bytes(&p, &r), T5_3B * 48);

	/* The fault this fixes: 640 + 64 GiB fit 720 GiB until the ranks'
	 * 127.48 GiB of model load is counted; the step is now refused. */
	mc_verdict_compute(&p, &r, &n, &a, &v);
	assert_false(v.fits);
	assert_int_equal(v.ram_zero_bytes, T5_3B * 48);
	mc_verdict_explain(&p, &v, "7.0", "gpu07", &e);
	dump(&e);
	assert_non_null(strstr(e.line[2], "127.48 GiB ZeRO-3 model load"));
	assert_non_null(strstr(e.line[3], "largest layer unknown"));
	/* With the largest layer the step fits: 704 + 1.47 GiB. */
	r.largest_layer_params = T5_3B_LARGEST;
	mc_verdict_compute(&p, &r, &n, &a, &v);
	assert_true(v.fits);
	mc_verdict_explain(&p, &v, "7.0", "gpu07", &e);
	assert_non_null(strstr(e.line[2], "1.47 GiB ZeRO-3 model load"));
	assert_non_null(strstr(e.line[3], "largest layer with zero.Init"));

	/* A layer larger than the model is a typo. */
	r.largest_layer_params = T5_3B + 1;
	err[0] = '\0';
	assert_int_equal(mc_request_check(&p, &r, err, sizeof(err)), -1);
	assert_string_equal(err,
			    "--largest-layer-params: more than --model-params");
}

/*
 * An APU (AMD MI300A: 4 APUs sharing 502 GiB): the GPUs' working set, the
 * workers and the tasks share one pool, the working set counted once and
 * never times HostRamPerGpuRam; with the working set unknown the GPUs get
 * what the allocation leaves, and the explanation says so.
 */
static void test_unified_memory(void **state)
{
	struct mc_policy p;
	struct mc_request r = req(4, 0, 4);
	struct mc_node n = node(502 * GiB, 96, 4);
	struct mc_alloc a = alloc(502 * GiB, 96, "the whole node");
	struct mc_verdict v;
	struct mc_explanation e;

	(void)state;
	policy(&p);
	p.ram_per_task_bytes = GiB;
	p.host_ram_per_gpu_ram = 1.5;
	n.unified_memory = r.unified_memory = true;
	/* Working set unknown: 16 workers x 4 GiB + 4 tasks; fits. */
	mc_verdict_compute(&p, &r, &n, &a, &v);
	assert_true(v.fits);
	assert_int_equal(v.ram_needed_bytes, 68 * GiB);
	mc_verdict_explain(&p, &v, NULL, NULL, &e);
	dump(&e);
	assert_non_null(strstr(e.line[4], "APU: GPU memory is this host RAM"));
	assert_non_null(strstr(e.line[5], "the GPUs' working set gets the "
			       "rest: 434 GiB of this allocation"));
	/* A 96 GiB working set per APU: 384 + 68 = 452 GiB, once. */
	r.gpu_memory_bytes = 96 * GiB;
	mc_verdict_compute(&p, &r, &n, &a, &v);
	assert_true(v.fits);
	assert_int_equal(v.ram_floor_bytes, 384 * GiB);
	assert_int_equal(v.ram_needed_bytes, 452 * GiB);
	mc_verdict_explain(&p, &v, NULL, NULL, &e);
	assert_non_null(strstr(e.line[2], "384 GiB GPU working set + "));
	/* The discrete rule on the same numbers: 1.5 x 384 + 68 > 502. */
	n.unified_memory = r.unified_memory = false;
	mc_verdict_compute(&p, &r, &n, &a, &v);
	assert_false(v.fits);
	assert_int_equal(v.ram_needed_bytes, 644 * GiB);
}

static void assert_check_err(const struct mc_request *r, const char *want)
{
	err[0] = '\0';
	assert_int_equal(mc_request_check(NULL, r, err, sizeof(err)), -1);
	assert_string_equal(err, want);
}

static void test_request_check(void **state)
{
	struct mc_request r = req(8, 80 * GiB, 2);

	(void)state;
	assert_int_equal(mc_request_check(NULL, &r, err, sizeof(err)), 0);
	r.zero_stage = 4;
	assert_check_err(&r, "--zero-stage=4: must be 0, 1, 2 or 3");
	r.zero_stage = 0;
	r.offload = MC_OFFLOAD_OPTIMIZER;
	r.model_params = T5_3B;
	assert_check_err(&r, "--offload=optimizer needs --zero-stage=1, 2 or "
			 "3 (ZeRO offload has no stage 0): add --zero-stage, "
			 "or drop --offload");
	r.zero_stage = 2;
	r.offload = MC_OFFLOAD_ALL;
	assert_check_err(&r, "--offload=all (parameter offload) needs "
			 "--zero-stage=3, not 1 or 2: add --zero-stage=3, or "
			 "use --offload=optimizer with stage 1 or 2");
	r.zero_stage = 3;
	assert_int_equal(mc_request_check(NULL, &r, err, sizeof(err)), 0);
	r.model_params = 0;
	assert_check_err(&r, "--offload=all needs --model-params (the "
			 "offloaded host RAM is sized from the model): add "
			 "e.g. --model-params=7B");
	r.offload = MC_OFFLOAD_NONE;
	assert_int_equal(mc_request_check(NULL, &r, err, sizeof(err)), 0);
	r.dataloader_workers = MC_WORKERS_LIMIT;
	assert_int_equal(mc_request_check(NULL, &r, err, sizeof(err)), 0);
	r.dataloader_workers = MC_WORKERS_LIMIT + 1;
	assert_check_err(&r, "--dataloader-workers=1025: at most 1024 per GPU");
}

/* The README's worked example, number for number. */
static void test_design_example(void **state)
{
	static const struct vrow rows[] = {
		{ "README: 8 x 80 GiB, w=2, --mem=400G and 16 cores",
		  .r = REQ(8, 80 * GiB, 2), .n = NODE(1024 * GiB, 64, 8),
		  .a = ALLOC(400 * GiB, 16, "--mem=400G"),
		  .want = { V(fits, false), V(ram_floor_bytes, 640 * GiB),
			    V(ram_workers_bytes, 64 * GiB),
			    V(ram_needed_bytes, 704 * GiB),
			    V(ram_short, true), V(node_ram_short, false),
			    V(cores_needed, 24), V(cores_allocated, 16),
			    V(cores_short, true), V(node_cores_needed, 28),
			    V(node_cores_short, false),
			    V(fix_mem_bytes, 704 * GiB),
			    V(fix_cpus_per_gpu, 3), V(step_cpus_hint, false),
			    /* Even w=0 needs 640 GiB > 400 GiB: nothing fits
			     * as allocated. */
			    V(max_dataloader_workers, -1),
			    /* The node: 8 (w+1) + 4 <= 64 -> w <= 6;
			     * 640 + 32w <= 1024 -> 12. */
			    V(node_max_dataloader_workers, 6),
			    OUT(lines, 7) },
		  .step = "1234.0", .host = "gpu07",
		  .line = {
			"memcore: step 1234.0 on gpu07 needs more than it "
			"was given:",
			"  GPUs          8 x 80 GiB (this node)",
			"  host RAM      704 GiB needed = 640 GiB GPU floor + "
			"16 workers x 4 GiB",
			"                400 GiB allocated (--mem=400G)"
			"            short 304 GiB",
			"  CPU cores     24 needed = 8 GPUs x (2 workers + 1)",
			"                16 allocated"
			"                              short 8",
			"  fix: --mem=704G --cpus-per-gpu=3, or "
			"--dataloader-workers=1 with --mem=672G" } },
		/* Hyperthreads: --cpus-per-gpu counts CPUs, two per core. */
		{ "README, 2 threads a core",
		  .r = REQ(8, 80 * GiB, 2),
		  .n = NODE_T(1024 * GiB, 64, 8, 2),
		  .a = ALLOC(400 * GiB, 16, "--mem=400G"),
		  .want = { V(fix_cpus_per_gpu, 6) },
		  .line = { "memcore: this step needs more than it was "
			    "given:" },
		  .says = { "fix: --mem=704G --cpus-per-gpu=6, or "
			    "--dataloader-workers=1 with --mem=672G" } },
		/* Enough of both: it fits, and says so. */
		{ "README given 704 GiB and 24 cores",
		  .r = REQ(8, 80 * GiB, 2), .n = NODE(1024 * GiB, 64, 8),
		  .a = ALLOC(704 * GiB, 24, NULL),
		  .want = { V(fits, true), V(max_dataloader_workers, 2),
			    V(fix_mem_bytes, 0), V(fix_cpus_per_gpu, 0) },
		  .step = "7.0",
		  .line = { "memcore: step 7.0 fits:" },
		  .says = { "704 GiB allocated" },
		  .not_says = { "short", "fix:" } },
	};
	struct mc_policy p;
	struct mc_request r = req(8, 80 * GiB, 2);
	struct mc_node n = node(1024 * GiB, 64, 8);
	struct mc_alloc a = alloc(400 * GiB, 16, "--mem=400G");
	struct mc_verdict v;
	struct mc_explanation e;

	(void)state;
	RUN(rows);

	/* At submission there is no "this node": the GPU line names where M
	 * came from (mc_mem_source_text), each source in its words. */
	policy(&p);
	{
		static const struct {
			enum mc_mem_source src;
			const char *type, *on, *want;
		} c[] = {
			{ MC_MEM_SRC_POLICY, NULL, NULL,
			  "memcore.conf GpuMemory=" },
			{ MC_MEM_SRC_GPU_TYPE, "h100", NULL,
			  "memcore.conf GpuTypeMemory= for h100" },
			{ MC_MEM_SRC_OPTION, NULL, NULL, "--gpu-memory" },
			{ MC_MEM_SRC_MIG_PROFILE, "1g.10gb", NULL,
			  "MIG profile 1g.10gb" },
			{ MC_MEM_SRC_CUDA, NULL, "topology x.xml",
			  "topology x.xml" },
			{ MC_MEM_SRC_NVML, NULL, NULL, "this node" },
			{ MC_MEM_SRC_NONE, NULL, NULL,
			  "no GpuTypeMemory= or GpuMemory=" },
		};
		char from[96], want[160];

		for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
			r.gpu_memory_source = mc_mem_source_text(c[i].src,
				c[i].type, c[i].on, from, sizeof(from));
			assert_string_equal(from, c[i].want);
			mc_verdict_compute(&p, &r, &n, &a, &v);
			mc_verdict_explain(&p, &v, NULL, "gpu[01-12]", &e);
			snprintf(want, sizeof(want), "  GPUs          8 x 80 "
				 "GiB (%s)", c[i].want);
			assert_string_equal(e.line[1], want);
		}
	}
}

/* 1 GPU of 16 GiB, RamPerWorker=5G, --mem=32G. */
static void test_verdict_small_gpu(void **state)
{
	static const struct vrow rows[] = {
		{ "1 x 16 GiB, w=4, RamPerWorker=5G, --mem=32G",
		  .pol = { .ram_per_worker = 5 * GiB },
		  .r = REQ(1, 16 * GiB, 4), .n = NODE(512 * GiB, 64, 1),
		  .a = ALLOC(32 * GiB, 8, "--mem=32G"),
		  .want = { V(fits, false), V(ram_short, true),
			    V(cores_short, false),
			    V(ram_needed_bytes, 36 * GiB),
			    V(fix_mem_bytes, 36 * GiB),
			    V(fix_cpus_per_gpu, 0),
			    /* 16 + 5w <= 32 -> w = 3. */
			    V(max_dataloader_workers, 3) },
		  .host = "n1",
		  .line = { "memcore: this step on n1 needs more than it was "
			    "given:" },
		  .says = { "36 GiB needed = 16 GiB GPU floor + 4 workers x "
			    "5 GiB",
			    "short 4 GiB",
			    "fix: --mem=36G, or --dataloader-workers=3" },
		  .not_says = { "--cpus-per-gpu" } },
		{ "the same at w=1",
		  .pol = { .ram_per_worker = 5 * GiB },
		  .r = REQ(1, 16 * GiB, 1), .n = NODE(512 * GiB, 64, 1),
		  .a = ALLOC(32 * GiB, 8, "--mem=32G"),
		  .want = { V(fits, true), V(ram_needed_bytes, 21 * GiB) } },
	};

	(void)state;
	RUN(rows);
}

/* 2 GPUs on a 16-core node, w=12. */
static void test_verdict_node_cores(void **state)
{
	static const struct vrow rows[] = {
		{ "2 GPUs, w=12, 16-core node",
		  .r = REQ(2, 40 * GiB, 12), .n = NODE(512 * GiB, 16, 2),
		  .a = ALLOC(256 * GiB, 16, "--mem=256G"),
		  .want = { V(fits, false), V(node_cores_short, true),
			    V(node_cores_needed, 30), V(cores_needed, 26),
			    V(fix_cpus_per_gpu, 0),	/* no fix at w=12 */
			    V(node_max_dataloader_workers, 5),
			    V(max_dataloader_workers, 5) },
		  .says = { "node has 16 cores, needs 30 = 2 GPUs x "
			    "(12 workers + 1) + 4 reserved",
			    "fix: --dataloader-workers=5 is the most this "
			    "node can hold" } },
	};

	(void)state;
	RUN(rows);
}

/*
 * facebookresearch/deit#81: "We use 32 cpu and 8 gpu, the total
 * memory(RAM) is 200G", torch.distributed.launch --nproc_per_node=8 with
 * --num_workers 32: the GPUs starved. The maintainer: num_workers "should
 * be 4 in your case"; the reporter: "I set the num_workers to be 4 and it
 * worked now!". By the book's rule (the default) 4 needs 8 x (4 + 1) + 4
 * = 44 cores and the node holds 2; a site whose workers share cores as
 * deit's did says WorkersPerCore=2: 8 x (4 / 2 + 1) + 4 = 28, and 4 is
 * then the most the node holds, the maintainers' figure.
 */
static void test_verdict_deit_81(void **state)
{
	static const struct vrow rows[] = {
		{ "deit#81 as reported: 32 workers, the book's rule",
		  .r = REQ(8, 0, 32), .n = NODE(200 * GiB, 32, 8),
		  .a = ALLOC(200 * GiB, 32, NULL),
		  .want = { V(fits, false), V(node_cores_short, true),
			    V(cores_needed, 8 * 33),
			    V(node_max_dataloader_workers, 2) },
		  .says = { "--dataloader-workers=2 is the most this node "
			    "can hold" } },
		{ "deit#81, the maintainers' 4, the book's rule",
		  .r = REQ(8, 0, 4), .n = NODE(200 * GiB, 32, 8),
		  .a = ALLOC(200 * GiB, 32, NULL),
		  .want = { V(fits, false), V(node_cores_short, true),
			    V(node_cores_needed, 44), V(cores_needed, 40),
			    V(node_max_dataloader_workers, 2) },
		  .says = { "node has 32 cores, needs 44 = 8 GPUs x "
			    "(4 workers + 1) + 4 reserved" } },
		{ "deit#81, memcore's 2, the book's rule",
		  .r = REQ(8, 0, 2), .n = NODE(200 * GiB, 32, 8),
		  .a = ALLOC(200 * GiB, 32, NULL),
		  .want = { V(fits, true), V(node_cores_needed, 28),
			    V(cores_needed, 24) } },
		{ "deit#81, the maintainers' 4, WorkersPerCore=2",
		  .pol = { .workers_per_core = 2 },
		  .r = REQ(8, 0, 4), .n = NODE(200 * GiB, 32, 8),
		  .a = ALLOC(200 * GiB, 32, NULL),
		  .want = { V(fits, true), V(node_cores_needed, 28),
			    V(cores_needed, 24),
			    V(node_max_dataloader_workers, 4) },
		  .says = { "CPU cores     24 needed = 8 GPUs x (4 workers / "
			    "WorkersPerCore=2 + 1)" } },
		{ "deit#81 as reported, WorkersPerCore=2: the fix is 4",
		  .pol = { .workers_per_core = 2 },
		  .r = REQ(8, 0, 32), .n = NODE(200 * GiB, 32, 8),
		  .a = ALLOC(200 * GiB, 32, NULL),
		  .want = { V(fits, false), V(node_cores_short, true),
			    V(node_cores_needed, 8 * 17 + 4),
			    V(node_max_dataloader_workers, 4) },
		  .says = { "node has 32 cores, needs 140 = 8 GPUs x (32 "
			    "workers / WorkersPerCore=2 + 1) + 4 reserved",
			    "--dataloader-workers=4 is the most this node "
			    "can hold" } },
		{ "WorkersPerCore=2 at an odd w: rounded up",
		  .pol = { .workers_per_core = 2 },
		  .r = REQ(8, 0, 5), .n = NODE(200 * GiB, 32, 8),
		  .a = ALLOC(200 * GiB, 32, NULL),
		  .want = { V(fits, false), V(node_cores_needed, 36),
			    V(cores_needed, 32) },
		  .says = { "needs 36 = 8 GPUs x (5 workers / WorkersPerCore=2"
			    ", rounded up, + 1) + 4 reserved" } },
	};

	(void)state;
	RUN(rows);
}

/* 8 GPUs on a 24-core node at w=4; 4 GPUs on a 40-core node. */
static void test_verdict_24_cores(void **state)
{
	static const struct vrow rows[] = {
		{ "8 GPUs, w=4, 24-core node",
		  .r = REQ(8, 80 * GiB, 4), .n = NODE(2048 * GiB, 24, 8),
		  .a = ALLOC(1024 * GiB, 24, NULL),
		  .want = { V(fits, false), V(node_cores_short, true),
			    V(cores_short, true), V(node_cores_needed, 44),
			    V(cores_needed, 40),
			    V(node_max_dataloader_workers, 1),
			    V(max_dataloader_workers, 1) },
		  .says = { "node has 24 cores, needs 44 = 8 GPUs x "
			    "(4 workers + 1) + 4 reserved",
			    "--dataloader-workers=1 is the most this node "
			    "can hold" } },
		{ "4 GPUs, w=4, 40-core node",
		  .r = REQ(4, 80 * GiB, 4), .n = NODE(512 * GiB, 40, 4),
		  .a = ALLOC(400 * GiB, 20, "--mem=400G"),
		  .want = { V(cores_needed, 20), V(node_cores_needed, 24),
			    V(ram_needed_bytes, 384 * GiB), V(fits, true),
			    V(node_cores_short, false), V(cores_short, false),
			    V(ram_short, false), V(node_ram_short, false) } },
	};

	(void)state;
	RUN(rows);
}

/* A request (memcore check, cli_filter) beyond the node: impossible, with
 * its own header, never "fits"; at launch (Slurm's grant) not questioned. */
static void test_verdict_impossible(void **state)
{
	static const struct vrow rows[] = {
		{ "8 GPUs asked of a 4-GPU node",
		  .r = REQ(8, 80 * GiB, 2), .n = NODE(2048 * GiB, 128, 4),
		  .a = ALLOC(2000 * GiB, 128, "--mem=2000G",
			     .requested = true),
		  .want = { V(fits, false), V(node_gpus_short, true),
			    OUT(impossible, true), V(max_gpus, 4) },
		  .line = { "memcore: this step cannot fit: it asks for 8 "
			    "GPUs, the node has 4:" },
		  .says = { "  fix: at most 4 GPUs per node fit this node "
			    "(use more nodes), or another partition" },
		  .not_says = { "fix: --mem" } },
		/* the same at launch: Slurm granted 8 GPUs, the rules count 8 */
		{ "8 GPUs granted on a 4-GPU node (launch)",
		  .r = REQ(8, 80 * GiB, 2), .n = NODE(2048 * GiB, 128, 4),
		  .a = ALLOC(2000 * GiB, 128, "--mem=2000G"),
		  .want = { V(node_gpus_short, false), V(fits, true) } },
		{ "--mem=3000G asked of a 1511 GiB node",
		  .r = REQ(4, 80 * GiB, 2), .n = NODE(1511 * GiB, 128, 4),
		  .a = ALLOC(3000 * GiB, 128, "--mem=3000G",
			     .requested = true),
		  .want = { V(fits, false), V(alloc_mem_over_node, true),
			    V(fix_mem_bytes, 352 * GiB) },
		  .step = "", .host = "gpu07",
		  .line = { "memcore: this step on gpu07 cannot fit: it asks "
			    "for 3000 GiB of memory, the node has 1511 "
			    "GiB:" },
		  .says = { "  fix: --mem=352G" },
		  .not_says = { "--dataloader-workers" } },
		{ "500 cores asked of a 128-core node",
		  .r = REQ(4, 80 * GiB, 2), .n = NODE(1511 * GiB, 128, 4),
		  .a = ALLOC(1000 * GiB, 500, NULL, .requested = true),
		  .want = { V(fits, false), V(alloc_cores_over_node, true) },
		  .line = { "memcore: this step cannot fit: it asks for 500 "
			    "cores, the node has 128:" },
		  .says = { "  fix: --cpus-per-gpu=3" },
		  /* every reason in a few words, for a list of nodes */
		  .reason = "has 128 cores, not 500" },
		{ "8 GPUs asked of a 4-GPU node, the reason",
		  .r = REQ(8, 80 * GiB, 2), .n = NODE(2048 * GiB, 128, 4),
		  .a = ALLOC(2000 * GiB, 128, NULL, .requested = true),
		  .reason = "has 4 GPUs" },
	};

	(void)state;
	RUN(rows);
}

/*
 * Above the partition's MaxMemPerNode Slurm keeps the job pending for
 * good (reason MaxMemPerLimit): a requested allocation over it does not
 * fit whatever the rules say, and the fix is the --mem the rules need
 * when that is under the ceiling; when it is not, no --mem fixes it.
 * One 80 GiB GPU at w=2, asking 200G under MaxMemPerNode=180000: the
 * rules need 80 + 2 x 4 = 88 GiB.
 */
_Static_assert(88 * GiB <= 180000 * MiB, "88 GiB is under the ceiling");

static void test_verdict_mem_limit(void **state)
{
	static const struct vrow rows[] = {
		{ "1 x 80 GiB, w=2, --mem=200G, no ceiling",
		  .r = REQ(1, 80 * GiB, 2), .n = NODE(2048 * GiB, 128, 8),
		  .a = ALLOC(200 * GiB, 32, "--mem=200G", .requested = true),
		  .want = { V(fits, true), V(ram_needed_bytes, 88 * GiB) } },
		/* the same step under MaxMemPerNode=180000 (175.78 GiB) */
		{ "--mem=200G over MaxMemPerNode=180000",
		  .r = REQ(1, 80 * GiB, 2), .n = NODE(2048 * GiB, 128, 8),
		  .a = ALLOC(200 * GiB, 32, "--mem=200G", .requested = true,
			     .mem_limit_bytes = 180000 * MiB,
			     .mem_limit_asked_bytes = 200 * GiB),
		  .want = { V(fits, false), V(alloc_mem_over_limit, true),
			    V(ram_short, false), OUT(impossible, false),
			    OUT(why, MC_MISFIT_MEM_OVER_LIMIT),
			    V(fix_mem_bytes, 88 * GiB) },
		  .line = { "memcore: this step would never start: it asks "
			    "for 200 GiB a node, above the partition's "
			    "MaxMemPerNode=180000, and Slurm keeps it pending "
			    "(reason MaxMemPerLimit):" },
		  .says = { "  fix: --mem=88G" },
		  .not_says = { "--dataloader-workers", "fewer GPUs a node" },
		  .reason = "asks for 200 GiB, above MaxMemPerNode=180000" },
		/* --mem-per-gpu is compared as the node's memory: the fix is
		 * --mem (--mem-per-gpu=88G would be refused the same way) */
		{ "--mem-per-gpu over MaxMemPerNode",
		  .r = REQ(1, 80 * GiB, 2), .n = NODE(2048 * GiB, 128, 8),
		  .a = ALLOC(200 * GiB, 32, "--mem=200G", .requested = true,
			     .mem_form = MC_MEM_PER_GPU,
			     .mem_limit_bytes = 180000 * MiB,
			     .mem_limit_asked_bytes = 2048 * GiB),
		  .want = { V(fits, false) },
		  .says = { "  fix: --mem=88G" },
		  .not_says = { "--mem-per-gpu" } },
		{ "at the ceiling: fits",
		  .r = REQ(1, 80 * GiB, 2), .n = NODE(2048 * GiB, 128, 8),
		  .a = ALLOC(200 * GiB, 32, "--mem=200G", .requested = true,
			     .mem_limit_bytes = 180000 * MiB,
			     .mem_limit_asked_bytes = 180000 * MiB),
		  .want = { V(alloc_mem_over_limit, false) } },
		/* the rules need more than the ceiling: no --mem fixes it */
		{ "a ceiling of 87 GiB, under the 88 needed",
		  .r = REQ(1, 80 * GiB, 2), .n = NODE(2048 * GiB, 128, 8),
		  .a = ALLOC(200 * GiB, 32, "--mem=200G", .requested = true,
			     .mem_limit_bytes = 87 * GiB,
			     .mem_limit_asked_bytes = 200 * GiB),
		  .want = { V(fits, false), V(fix_mem_bytes, 0) },
		  .says = { "  fix: memcore needs 88 GiB a node for it, more "
			    "than MaxMemPerNode=89088: fewer GPUs a node or "
			    "another partition" } },
		/* at launch (not requested) the ceiling is not the judge's */
		{ "a ceiling of 87 GiB at launch",
		  .r = REQ(1, 80 * GiB, 2), .n = NODE(2048 * GiB, 128, 8),
		  .a = ALLOC(200 * GiB, 32, "--mem=200G",
			     .mem_limit_bytes = 87 * GiB,
			     .mem_limit_asked_bytes = 200 * GiB),
		  .want = { V(fits, true) } },
	};

	(void)state;
	RUN(rows);
}

/*
 * Where only fewer workers fit the node (its cores rule: 8 GPUs x (5 + 1)
 * + 4 = 52 cores of 48), fix_options carries the explanation's fix, not
 * nothing: --dataloader-workers=4, and what 4 workers then need beyond
 * the allocation.
 */
static void test_verdict_fix_fewer_workers(void **state)
{
	static const struct vrow rows[] = {
		{ "8 GPUs, w=5, 48-core node, all of it asked",
		  .r = REQ(8, 16 * GiB, 5), .n = NODE(1024 * GiB, 48, 8),
		  .a = ALLOC(1024 * GiB, 48, NULL, .requested = true),
		  .want = { OUT(why, MC_MISFIT_NODE_CORES_RULE),
			    OUT(fixes, 1) },
		  .fix = { "--dataloader-workers=4" },
		  .says = { "  fix: --dataloader-workers=4 is the most this "
			    "node can hold" } },
		/* Given less: 4 workers need 8 x 16 + 32 x 4 = 256 GiB and 40
		 * cores, beyond the 200 GiB and 24 asked: all three options. */
		{ "the same, 200 GiB and 24 cores asked",
		  .r = REQ(8, 16 * GiB, 5), .n = NODE(1024 * GiB, 48, 8),
		  .a = ALLOC(200 * GiB, 24, NULL, .requested = true),
		  .want = { OUT(fixes, 3) },
		  .fix = { "--dataloader-workers=4", "--mem=256G",
			   "--cpus-per-gpu=5" },
		  .says = { "  fix: --dataloader-workers=4 is the most this "
			    "node can hold with --mem=256G --cpus-per-gpu=5" } },
	};

	(void)state;
	RUN(rows);
}

/* The fix names the option the user gave: Slurm refuses --mem next to
 * --mem-per-gpu/--mem-per-cpu. 8 x 80 GiB, w=2: 704 GiB, 24 cores. */
static void test_verdict_fix_forms(void **state)
{
	static const struct vrow rows[] = {
		{ "--mem-per-gpu=50G",
		  .r = REQ(8, 80 * GiB, 2), .n = NODE(2048 * GiB, 112, 8),
		  .a = ALLOC(400 * GiB, 16, "--mem-per-gpu=50G",
			     .requested = true, .mem_form = MC_MEM_PER_GPU),
		  .want = { OUT(fixes, 2) },
		  .fix = { "--mem-per-gpu=88G", "--cpus-per-gpu=3" },
		  .says = { "  fix: --mem-per-gpu=88G --cpus-per-gpu=3, or "
			    "--dataloader-workers=1 with --mem-per-gpu=84G" },
		  .not_says = { "--mem=" } },
		/* --mem-per-cpu: per CPU of the step once fixed (24 cores x 2
		 * threads = 48 CPUs): 704 GiB / 48 = 15019 MiB and a third */
		{ "--mem-per-cpu=4G x 32 CPUs, 8 tasks, 2 threads a core",
		  .r = REQ(8, 80 * GiB, 2),
		  .n = NODE_T(2048 * GiB, 112, 8, 2),
		  .a = ALLOC(16 * 2 * 4 * GiB, 16, "--mem-per-gpu=50G",
			     .requested = true, .mem_form = MC_MEM_PER_CPU,
			     .cpu_form = MC_CPUS_PER_TASK, .tasks = 8),
		  .want = { OUT(fixes, 2) },
		  .fix = { "--mem-per-cpu=15019M", "--cpus-per-task=6" } },
		/* one task driving all 8 GPUs: -c 48 */
		{ "the same, one task",
		  .r = REQ(8, 80 * GiB, 2),
		  .n = NODE_T(2048 * GiB, 112, 8, 2),
		  .a = ALLOC(16 * 2 * 4 * GiB, 16, "--mem-per-gpu=50G",
			     .requested = true, .mem_form = MC_MEM_PER_CPU,
			     .cpu_form = MC_CPUS_PER_TASK, .tasks = 1),
		  .fix = { NULL, "--cpus-per-task=48" } },
		/* whole GiB print as G: 16 GiB / 2 */
		{ "--mem-per-cpu, 1 x 16 GiB on 1 core of 2 threads",
		  .r = REQ(1, 16 * GiB, 0),
		  .n = NODE_T(2048 * GiB, 112, 8, 2),
		  .a = ALLOC(4 * GiB, 1, NULL, .mem_form = MC_MEM_PER_CPU),
		  .want = { OUT(fixes, 1) },
		  .fix = { "--mem-per-cpu=8G" } },
		/* the default forms: --mem and --cpus-per-gpu */
		{ "the default forms, 2 threads a core",
		  .r = REQ(8, 80 * GiB, 2),
		  .n = NODE_T(2048 * GiB, 112, 8, 2),
		  .a = ALLOC(400 * GiB, 16, NULL),
		  .fix = { "--mem=704G", "--cpus-per-gpu=6" } },
	};

	(void)state;
	RUN(rows);
}

static void test_verdict_node_ram(void **state)
{
	static const struct vrow rows[] = {
		/* 500 GiB for 8 x 80 GiB: the node itself fails the RAM
		 * rule, so no request fits it with 8 GPUs; 5 GPUs (400 + 20
		 * GiB) do. */
		{ "8 x 80 GiB on a 500 GiB node, RamPerWorker=2G",
		  .pol = { .ram_per_worker = 2 * GiB },
		  .r = REQ(8, 80 * GiB, 2), .n = NODE(500 * GiB, 64, 8),
		  .a = ALLOC(480 * GiB, 64, "--mem=480G"),
		  .want = { V(fits, false), V(ram_needed_bytes, 672 * GiB),
			    V(ram_short, true), V(node_ram_short, true),
			    V(fix_mem_bytes, 0),
			    V(max_dataloader_workers, -1),
			    V(node_max_dataloader_workers, -1),
			    V(node_ram_rule_fails, true),
			    V(node_ram_rule_bytes, 640 * GiB),
			    OUT(impossible, true), V(max_gpus, 5) },
		  .line = { "memcore: this step cannot fit: the node fails "
			    "the site's RAM rule (500 GiB for 8 x 80 GiB "
			    "GPUs):" },
		  .says = { "  node RAM 500 GiB is below the site's RAM rule "
			    "(640 GiB = 8 GPUs x 80 GiB x HostRamPerGpuRam "
			    "1):",
			    "  fix: at most 5 GPUs per node fit this node "
			    "(use more nodes), or another partition" },
		  .not_says = { "fix: --mem", "or a node with more RAM" } },
		/* Where some w fits the node, name it. 4 x 80 GiB on 360 GiB:
		 * 320 + 8w <= 360 -> w = 5. */
		{ "4 x 80 GiB, w=8, on a 360 GiB node",
		  .pol = { .ram_per_worker = 2 * GiB },
		  .r = REQ(4, 80 * GiB, 8), .n = NODE(360 * GiB, 64, 4),
		  .a = ALLOC(300 * GiB, 64, NULL),
		  .want = { V(node_ram_short, true),
			    V(node_max_dataloader_workers, 5) },
		  .says = { "no allocation on this node can fit 384 GiB "
			    "(node has 360 GiB)",
			    "--dataloader-workers=5 is the most this node can "
			    "hold with --mem=360G" } },
	};

	(void)state;
	RUN(rows);
}

/* sbatch -c 6 for 4 GPU tasks, a plain srun step got 4 cores. */
static void test_verdict_step_cpus(void **state)
{
	static const struct vrow rows[] = {
		{ "4 GPUs, w=4, the job 24 cores, the step 4",
		  .r = REQ(4, 80 * GiB, 4), .n = NODE(1024 * GiB, 64, 4),
		  .a = ALLOC(512 * GiB, 4, NULL, .job_cores = 24),
		  .want = { V(fits, false), V(cores_short, true),
			    V(ram_short, false), V(cores_needed, 20),
			    V(cores_allocated, 4), V(step_cpus_hint, true),
			    V(fix_cpus_per_task, 5) },
		  .step = "55.0", .host = "g1",
		  .says = { "4 allocated to this step",
			    "short 16",
			    "the job holds 24 cores on this node, but this "
			    "step got only 4",
			    "srun --cpus-per-task=5",
			    "export SRUN_CPUS_PER_TASK=5",
			    "srun does not inherit sbatch's "
			    "-c/--cpus-per-task",
			    "one task driving all 4 GPUs needs 20" } },
		/* The job holds fewer cores than needed: no hint. */
		{ "the same, the job 16 cores",
		  .r = REQ(4, 80 * GiB, 4), .n = NODE(1024 * GiB, 64, 4),
		  .a = ALLOC(512 * GiB, 4, NULL, .job_cores = 16),
		  .want = { V(step_cpus_hint, false),
			    V(fix_cpus_per_gpu, 5) },
		  .not_says = { "SRUN_CPUS_PER_TASK" },
		  .says = { "--cpus-per-gpu=5" } },
	};

	(void)state;
	RUN(rows);
}

static void test_verdict_edges(void **state)
{
	static const struct vrow rows[] = {
		{ "no GPUs: fits, nothing to say",
		  .r = REQ(0, 0, 2), .n = NODE(64 * GiB, 8, 0),
		  .a = ALLOC(GiB, 1, NULL),
		  .want = { V(fits, true), OUT(lines, 0) },
		  .step = "1.0", .host = "n1" },
		/* GPU memory unknown: the floor is 0 and the user is told. */
		{ "GPU memory unknown",
		  .r = REQ(2, 0, 2), .n = NODE(256 * GiB, 32, 2),
		  .a = ALLOC(32 * GiB, 6, NULL),
		  .want = { V(gpu_memory_unknown, true),
			    V(ram_floor_bytes, 0),
			    V(ram_needed_bytes, 16 * GiB), V(fits, true) },
		  .says = { "GPU memory unknown: the RAM floor was not "
			    "checked (an administrator sets GpuMemory= in "
			    "memcore.conf)" } },
		/* Offload and tasks appear in the breakdown. */
		{ "ZeRO-2 offload and RamPerTask=1G",
		  .pol = { .ram_per_task = GiB },
		  .r = REQ(8, 80 * GiB, 2, .model_params = T5_3B,
			   .zero_stage = 2, .offload = MC_OFFLOAD_OPTIMIZER),
		  .n = NODE(2048 * GiB, 128, 8),
		  .a = ALLOC(700 * GiB, 128, "--mem=700G"),
		  .want = { V(fits, false) },
		  .says = { "= 640 GiB GPU floor + 16 workers x 4 GiB + 8 "
			    "tasks x 1 GiB + 127.48 GiB ZeRO-2 offload",
			    "fix: --mem=840G" } },
		/* Long step and host names: lines stay within the limit
		 * (run_verdicts checks every line). */
		{ "the same, 399-character step and host names",
		  .pol = { .ram_per_task = GiB },
		  .r = REQ(8, 80 * GiB, 2, .model_params = T5_3B,
			   .zero_stage = 2, .offload = MC_OFFLOAD_OPTIMIZER),
		  .n = NODE(2048 * GiB, 128, 8),
		  .a = ALLOC(700 * GiB, 128, "--mem=700G"),
		  .long_names = true,
		  .says = { "fix:" } },
		/* A step cannot fit a node whose cores are fewer than its
		 * own. */
		{ "MinCoresPerGpu=16: 8 GPUs on a 96-core node",
		  .pol = { .min_cores_per_gpu = 16 },
		  .r = REQ(8, 80 * GiB, 2), .n = NODE(2048 * GiB, 96, 8),
		  .a = ALLOC(1024 * GiB, 96, NULL),
		  .want = { V(cores_needed, 128), V(node_cores_needed, 132),
			    V(node_cores_short, true), V(fits, false),
			    V(node_max_dataloader_workers, -1) },
		  .says = { "128 needed = 8 GPUs x 16 (MinCoresPerGpu)",
			    "use fewer GPUs per node, or a node with more "
			    "cores" } },
	};

	(void)state;
	RUN(rows);
}
#define AU(f, w) MC_CHECK(struct mc_audit, f, w)

static void test_audit(void **state)
{
	static const struct {
		const char *name;
		double host_ram_per_gpu_ram;	/* 0: the default's */
		uint32_t workers;		/* 0: the default's */
		struct mc_node n;
		bool unified;
		uint64_t gpu_mem;
		bool known;
		struct mc_check want[8];
	} rows[] = {
		{ "8 x 80 GiB on 512 GiB and 24 cores", 0, 0,
		  NODE(512 * GiB, 24, 8), false, 640 * GiB, true,
		  { AU(ram_needed_bytes, 640 * GiB), AU(cores_needed, 28),
		    AU(workers, 2), AU(ram_rule_ok, false),
		    AU(cores_rule_ok, false) } },
		{ "8 x 80 GiB on 1024 GiB and 28 cores", 0, 0,
		  NODE(1024 * GiB, 28, 8), false, 640 * GiB, true,
		  { AU(ram_rule_ok, true), AU(cores_rule_ok, true) } },
		/* Unknown GPU memory never passes the RAM rule. */
		{ "GPU memory unknown", 0, 0,
		  NODE(1024 * GiB, 28, 8), false, 0, false,
		  { AU(ram_rule_ok, false), AU(gpu_memory_known, false) } },
		/* An APU node (MI300A): the GPUs' memory is this RAM, the
		 * rule holds by construction, known memory or not. */
		{ "APU node, 4 x 128 GiB on 502 GiB", 0, 0,
		  NODE(502 * GiB, 96, 4), true, 512 * GiB, true,
		  { AU(unified_memory, true), AU(ram_rule_ok, true),
		    AU(ram_needed_bytes, 0) } },
		{ "APU node, memory unknown", 0, 0,
		  NODE(502 * GiB, 96, 4), true, 0, false,
		  { AU(ram_rule_ok, true) } },
		/* the double count of today */
		{ "the APU node taken as discrete GPUs", 0, 0,
		  NODE(502 * GiB, 96, 4), false, 512 * GiB, true,
		  { AU(ram_rule_ok, false) } },
		{ "HostRamPerGpuRam=1.5, w=4, 1024 GiB and 28 cores", 1.5, 4,
		  NODE(1024 * GiB, 28, 8), false, 640 * GiB, true,
		  { AU(ram_needed_bytes, 960 * GiB), AU(cores_needed, 44),
		    AU(ram_rule_ok, true),	/* 1024 GiB >= 960 GiB */
		    AU(cores_rule_ok, false) } },
		{ "HostRamPerGpuRam=1.5, w=4, 959 GiB", 1.5, 4,
		  NODE(959 * GiB, 28, 8), false, 640 * GiB, true,
		  { AU(ram_rule_ok, false) } },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct mc_policy p;
		struct mc_node n = rows[i].n;
		struct mc_audit au;

		mc_policy_defaults(&p);
		if (rows[i].host_ram_per_gpu_ram)
			p.host_ram_per_gpu_ram = rows[i].host_ram_per_gpu_ram;
		if (rows[i].workers)
			p.dataloader_workers = rows[i].workers;
		n.unified_memory = rows[i].unified;
		mc_audit_node(&p, &n, rows[i].gpu_mem, rows[i].known, &au);
		mc_assert_checks(rows[i].name, &au, rows[i].want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cores),
		cmocka_unit_test(test_ram),
		cmocka_unit_test(test_offload),
		cmocka_unit_test(test_request_check),
		cmocka_unit_test(test_design_example),
		cmocka_unit_test(test_verdict_small_gpu),
		cmocka_unit_test(test_verdict_node_cores),
		cmocka_unit_test(test_verdict_deit_81),
		cmocka_unit_test(test_verdict_24_cores),
		cmocka_unit_test(test_verdict_node_ram),
		cmocka_unit_test(test_verdict_impossible),
		cmocka_unit_test(test_verdict_fix_forms),
		cmocka_unit_test(test_verdict_fix_fewer_workers),
		cmocka_unit_test(test_verdict_step_cpus),
		cmocka_unit_test(test_verdict_edges),
		cmocka_unit_test(test_audit),
		cmocka_unit_test(test_zero_tables),
		cmocka_unit_test(test_unified_memory),
		cmocka_unit_test(test_zero3_model_load),
		cmocka_unit_test(test_verdict_mem_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
