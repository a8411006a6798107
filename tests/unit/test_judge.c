/*
 * test_judge.c - the one judgement (mc_judge.h): why a step does not fit
 * decided in one place and read the same by every caller, the one
 * GPU-memory resolver (mc_gpu_memory.h) in its documented order, and the
 * audit's node judgement (the rule plus the full-node step).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "mc_gpu_memory.h"
#include "mc_decision.h"
#include "mc_judge.h"

#define GiB ((uint64_t)1 << 30)

static struct mc_config cfg;

static void policy(const char *text, struct mc_policy *p)
{
	char err[MC_ERR_MAX];

	assert_int_equal(mc_config_parse(text, strlen(text), "t.conf", &cfg,
					 err, sizeof(err)), 0);
	mc_config_policy(&cfg, NULL, p);
}

/* Each rung of the resolver's order, and what it falls to below it. */
static void test_gpu_memory_order(void **state)
{
	struct mc_policy p;
	enum mc_mem_source src;
	static const struct {
		struct mc_gpu_memory_in in;
		uint64_t want;
		enum mc_mem_source src;
	} cases[] = {
		/* 1. the user's --gpu-memory over everything */
		{ { 94 * GiB, 40 * GiB, MC_MEM_SRC_CUDA, false, "h100" },
		  94 * GiB, MC_MEM_SRC_OPTION },
		/* 2. a measured MIG slice over its profile's name */
		{ { 0, 9 * GiB, MC_MEM_SRC_NVML, true, "1g.10gb" },
		  9 * GiB, MC_MEM_SRC_NVML },
		/* 3. a MIG type over the measured card: GpuTypeMemory= for
		 * it, else the memory in its name */
		{ { 0, 80 * GiB, MC_MEM_SRC_CUDA, false, "3g.40gb" },
		  39 * GiB, MC_MEM_SRC_GPU_TYPE },
		{ { 0, 80 * GiB, MC_MEM_SRC_CUDA, false, "1g.10gb" },
		  10 * GiB, MC_MEM_SRC_MIG_PROFILE },
		/* 4. the measured card over the policy's keys */
		{ { 0, 40 * GiB, MC_MEM_SRC_CUDA, false, "h100" },
		  40 * GiB, MC_MEM_SRC_CUDA },
		/* 5. GpuTypeMemory= for a Gres type, case-insensitive */
		{ { 0, 0, MC_MEM_SRC_NONE, false, "H100" },
		  80 * GiB, MC_MEM_SRC_GPU_TYPE },
		/* 6. GpuMemory= */
		{ { 0, 0, MC_MEM_SRC_NONE, false, "t4" },
		  16 * GiB, MC_MEM_SRC_POLICY },
		{ { 0, 0, MC_MEM_SRC_NONE, false, NULL },
		  16 * GiB, MC_MEM_SRC_POLICY },
		/* an unknown slice is not its card: GpuMemory= */
		{ { 0, 0, MC_MEM_SRC_NVML, true, NULL },
		  16 * GiB, MC_MEM_SRC_POLICY },
	};

	(void)state;
	policy("GpuTypeMemory=h100:80G,3g.40gb:39G\nGpuMemory=16G\n", &p);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t m = mc_gpu_memory(&p, &cases[i].in, &src);

		if (m != cases[i].want || src != cases[i].src)
			fail_msg("case %zu: %llu (%s), want %llu (%s)", i,
				 (unsigned long long)m, mc_mem_source_name(src),
				 (unsigned long long)cases[i].want,
				 mc_mem_source_name(cases[i].src));
	}
	/* 7. nothing known */
	policy("", &p);
	{
		struct mc_gpu_memory_in none = { 0 };

		assert_int_equal(mc_gpu_memory(&p, &none, &src), 0);
		assert_int_equal(src, MC_MEM_SRC_NONE);
	}
	assert_string_equal(mc_mem_source_name(MC_MEM_SRC_POLICY), "policy");
	assert_string_equal(mc_mem_source_key(MC_MEM_SRC_POLICY), "GpuMemory");
	assert_string_equal(mc_mem_source_key(MC_MEM_SRC_GPU_TYPE),
			    "GpuTypeMemory");
}

/* 8 x 80 GiB at w=2, RamPerTask 1 GiB: 640 + 64 + 8 = 712 GiB, 24 cores. */
static void judge(const struct mc_policy *p, uint64_t node_ram,
		  uint32_t node_cores, uint32_t node_gpus, uint64_t mem,
		  uint32_t cores, bool requested, struct mc_judgement *j)
{
	struct mc_request r = { .gpus = 8, .nodes = 1, .dataloader_workers = 2,
				.gpu_memory_bytes = 80 * GiB };
	struct mc_node n = { .ram_bytes = node_ram, .cores = node_cores,
			     .threads_per_core = 1, .gpus = node_gpus };
	struct mc_alloc a = { .mem_bytes = mem, .cores = cores,
			      .requested = requested };

	mc_judge(p, &r, &a, &n, NULL, NULL, j);
}

/* Why, impossible, the first line and the node list's words agree. */
static void test_why(void **state)
{
	struct mc_policy p;
	static struct mc_judgement j;
	char why[96];
	static const struct {
		uint64_t node_ram;
		uint32_t node_cores, node_gpus;
		uint64_t mem;
		uint32_t cores;
		bool requested;
		enum mc_misfit want;
		bool impossible;
		const char *head, *reason;
	} cases[] = {
		{ 2048 * GiB, 96, 8, 712 * GiB, 24, true, MC_MISFIT_NONE,
		  false, "memcore: this step fits:", "" },
		{ 2048 * GiB, 96, 4, 712 * GiB, 24, true, MC_MISFIT_NODE_GPUS,
		  true, "memcore: this step cannot fit: it asks for 8 GPUs, "
		  "the node has 4:", "has 4 GPUs" },
		{ 600 * GiB, 96, 8, 600 * GiB, 24, true,
		  MC_MISFIT_NODE_RAM_RULE, true, "memcore: this step cannot "
		  "fit: the node fails the site's RAM rule (600 GiB for 8 x "
		  "80 GiB GPUs):", "fails the site's RAM rule" },
		{ 1024 * GiB, 96, 8, 2048 * GiB, 24, true,
		  MC_MISFIT_MEM_OVER_NODE, true, "memcore: this step cannot "
		  "fit: it asks for 2048 GiB of memory, the node has 1024 "
		  "GiB:", "has 1024 GiB, not 2048 GiB" },
		{ 700 * GiB, 96, 8, 700 * GiB, 24, true, MC_MISFIT_NODE_RAM,
		  true, "memcore: this step cannot fit: it needs 712 GiB of "
		  "RAM, the node has 700 GiB:", "has 700 GiB, needs 712 GiB" },
		{ 2048 * GiB, 20, 8, 712 * GiB, 20, true,
		  MC_MISFIT_NODE_CORES, true, "memcore: this step cannot fit: "
		  "it needs 24 cores, the node has 20:",
		  "has 20 cores, needs 28" },
		{ 2048 * GiB, 26, 8, 712 * GiB, 26, true,
		  MC_MISFIT_NODE_CORES_RULE, false, "memcore: this step is "
		  "refused by the node's cores rule, not its allocation: the "
		  "node's 8 GPUs at 2 DataLoader workers each need 28 cores, "
		  "it has 26:", "has 26 cores, needs 28" },
		{ 2048 * GiB, 96, 8, 400 * GiB, 24, true, MC_MISFIT_RAM,
		  false, "memcore: this step needs more than it was given:",
		  "needs 712 GiB" },
		{ 2048 * GiB, 96, 8, 712 * GiB, 16, true, MC_MISFIT_CORES,
		  false, "memcore: this step needs more than it was given:",
		  "needs 24 cores" },
	};

	(void)state;
	policy("RamPerTask=1G\n", &p);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		judge(&p, cases[i].node_ram, cases[i].node_cores,
		      cases[i].node_gpus, cases[i].mem, cases[i].cores,
		      cases[i].requested, &j);
		if (j.why != cases[i].want)
			fail_msg("case %zu: why %d, want %d", i, j.why,
				 cases[i].want);
		assert_int_equal(j.why, mc_verdict_why(&j.v));
		assert_int_equal(j.impossible, cases[i].impossible);
		assert_int_equal(j.impossible, mc_verdict_impossible(&j.v));
		assert_int_equal(j.v.fits, cases[i].want == MC_MISFIT_NONE);
		assert_true(j.e.n > 0);
		assert_string_equal(j.e.line[0], cases[i].head);
		assert_string_equal(mc_verdict_reason(&j.v, why, sizeof(why)),
				    cases[i].reason);
	}
}

/* The audit: the rule and the full-node step at the policy's defaults. */
static void test_judge_node(void **state)
{
	struct mc_policy p;
	static struct mc_node_judgement nj;
	struct mc_node n = { .ram_bytes = 700 * GiB, .cores = 32,
			     .threads_per_core = 1, .gpus = 8 };

	(void)state;
	policy("RamPerTask=1G\n", &p);
	/* 700 GiB >= 640 GiB: the rule holds; the step needs 712 GiB */
	mc_judge_node(&p, &n, 80 * GiB, 640 * GiB, true, NULL, "gpu01", &nj);
	assert_true(nj.rule.ram_rule_ok);
	assert_true(nj.rule.cores_rule_ok);
	assert_false(nj.step.v.fits);
	assert_int_equal(nj.step.why, MC_MISFIT_NODE_RAM);
	assert_int_equal(nj.step.v.ram_needed_bytes, 712 * GiB);
	assert_int_equal(nj.req.gpus, 8);
	assert_int_equal(nj.req.dataloader_workers, 2);
	assert_false(nj.ok);
	assert_string_equal(nj.step.e.line[0], "memcore: this step on gpu01 "
			    "cannot fit: it needs 712 GiB of RAM, the node "
			    "has 700 GiB:");
	/* with 712 GiB it fits */
	n.ram_bytes = 712 * GiB;
	mc_judge_node(&p, &n, 80 * GiB, 640 * GiB, true, NULL, NULL, &nj);
	assert_true(nj.ok);
	/* HostRamPerGpuRam=1.5: 960 GiB rule, 1032 GiB step */
	policy("RamPerTask=1G\nHostRamPerGpuRam=1.5\n", &p);
	n.ram_bytes = 1000 * GiB;
	mc_judge_node(&p, &n, 80 * GiB, 640 * GiB, true, NULL, NULL, &nj);
	assert_int_equal(nj.rule.ram_needed_bytes, 960 * GiB);
	assert_true(nj.rule.ram_rule_ok);
	assert_int_equal(nj.step.v.ram_needed_bytes, 1032 * GiB);
	assert_false(nj.ok);
	/* a GPU-less node: nothing to judge, the step "fits" */
	n.gpus = 0;
	mc_judge_node(&p, &n, 0, 0, true, NULL, NULL, &nj);
	assert_true(nj.step.v.fits);
	assert_int_equal(nj.step.e.n, 0);
}

/* What launch does, by Mode, AllowUserWarn and --memcore=warn: the one
 * decision of the plugin and memcore check. */
static void test_launch_outcome(void **state)
{
	struct mc_policy p;

	(void)state;
	policy("", &p);			/* Mode=enforce, AllowUserWarn=no */
	assert_int_equal(mc_launch_outcome(&p, false, true), MC_LAUNCH_RUNS);
	assert_int_equal(mc_launch_outcome(&p, false, false),
			 MC_LAUNCH_REFUSED);
	assert_int_equal(mc_launch_outcome(&p, true, false),
			 MC_LAUNCH_REFUSED);
	assert_string_equal(mc_launch_line(&p, true, MC_LAUNCH_REFUSED),
			    "memcore: --memcore=warn cannot turn this refusal "
			    "into a warning at this site (AllowUserWarn=no)");
	assert_null(mc_launch_line(&p, false, MC_LAUNCH_RUNS));
	policy("AllowUserWarn=yes", &p);
	assert_int_equal(mc_launch_outcome(&p, false, false),
			 MC_LAUNCH_REFUSED);
	assert_int_equal(mc_launch_outcome(&p, true, false),
			 MC_LAUNCH_WARNED);
	assert_string_equal(mc_launch_line(&p, true, MC_LAUNCH_WARNED),
			    "memcore: --memcore=warn: the step runs anyway");
	policy("Mode=warn", &p);
	assert_int_equal(mc_launch_outcome(&p, false, false),
			 MC_LAUNCH_WARNED);
	assert_int_equal(mc_launch_outcome(&p, false, true), MC_LAUNCH_RUNS);
	assert_string_equal(mc_launch_line(&p, false, MC_LAUNCH_WARNED),
			    "memcore: Mode=warn: the step runs anyway");
	policy("Mode=off", &p);
	assert_int_equal(mc_launch_outcome(&p, false, false),
			 MC_LAUNCH_UNCHECKED);
	assert_int_equal(mc_launch_outcome(&p, false, true),
			 MC_LAUNCH_UNCHECKED);
	assert_string_equal(mc_launch_words[MC_LAUNCH_UNCHECKED], "unchecked");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gpu_memory_order),
		cmocka_unit_test(test_why),
		cmocka_unit_test(test_judge_node),
		cmocka_unit_test(test_launch_outcome),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
