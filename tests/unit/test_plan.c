/*
 * test_plan.c - the binding plan (mc_plan.h) on real GPU servers' hwloc
 * XML dumps (tests/data, see ATTRIBUTION.md) and on the hand-written
 * 2-NUMA test machine: each GPU gets w+1 whole cores of its own NUMA node,
 * lowest first in Slurm index order, never shared, never outside the
 * allowed CPUs; a GPU without any gets a warning that says how to fix it.
 * NUMA CPU lists cross-checked with `memcore audit --json`.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mc_plan.h"
#include "mc_topology.h"

static struct mc_node_facts facts;	/* large: off the stack */
static struct mc_plan plan;

static void load(const char *file)
{
	char path[PATH_MAX], err[512];
	const char *top = getenv("MC_TOP");

	snprintf(path, sizeof(path), "%s/tests/data/%s", top ? top : ".",
		 file);
	if (mc_topology_load(path, &facts, err, sizeof(err)) < 0)
		fail_msg("%s", err);
}

/* Plan the node's first n GPUs (or the given list) inside `allowed`
 * ("": every CPU). */
static void plan_for(unsigned workers, const char *allowed,
		     const unsigned *list, size_t n)
{
	unsigned idx[MC_MAX_GPUS];
	hwloc_bitmap_t set = NULL;
	char err[512] = "";

	for (size_t i = 0; i < n; i++)
		idx[i] = list ? list[i] : (unsigned)i;
	if (allowed[0]) {
		set = hwloc_bitmap_alloc();
		assert_int_equal(mc_plan_parse_cpulist(allowed, set), 0);
	}
	/* The Open Book's rule: w + 1 cores a GPU. */
	if (mc_plan_compute(&facts, workers + 1, set, idx, n, &plan, err,
			    sizeof(err)) < 0)
		fail_msg("mc_plan_compute: %s", err);
	hwloc_bitmap_free(set);
	assert_int_equal(plan.n, n);
}

static const struct mc_plan_gpu *gpu(unsigned index)
{
	for (size_t i = 0; i < plan.n; i++)
		if (plan.gpu[i].index == index)
			return &plan.gpu[i];
	fail_msg("GPU %u not in the plan", index);
	return NULL;
}

static const char *cpus(unsigned index)
{
	static char buf[MC_CPULIST_MAX];

	return mc_plan_cpulist(gpu(index)->cpus, buf, sizeof(buf));
}

/* Every GPU's CPUs lie in its own NUMA node and no two GPUs share a core
 * (sharing a PU would be the same core; siblings go together). */
static void assert_numa_local_disjoint(void)
{
	hwloc_bitmap_t numa = hwloc_bitmap_alloc();

	for (size_t i = 0; i < plan.n; i++) {
		const struct mc_plan_gpu *g = &plan.gpu[i];
		const struct mc_numa *m = NULL;

		for (uint32_t k = 0; k < facts.n_numa; k++)
			if ((int)facts.numa[k].os_index == g->numa_os_index)
				m = &facts.numa[k];
		assert_non_null(m);
		assert_int_equal(mc_plan_parse_cpulist(m->cpus, numa), 0);
		assert_true(hwloc_bitmap_isincluded(g->cpus, numa));
		for (size_t j = 0; j < i; j++) {
			int pu;

			assert_false(hwloc_bitmap_intersects(g->cpus,
						plan.gpu[j].cpus));
			/* no sibling of one GPU's PU in another's set */
			hwloc_bitmap_foreach_begin(pu, g->cpus) {
				int q;

				hwloc_bitmap_foreach_begin(q, plan.gpu[j].cpus) {
					assert_int_not_equal(
						facts.pu_core[pu],
						facts.pu_core[q]);
				} hwloc_bitmap_foreach_end();
			} hwloc_bitmap_foreach_end();
		}
	}
	hwloc_bitmap_free(numa);
}

static int teardown(void **state)
{
	mc_plan_free(&plan);
	return 0;
}

/* A plan and the CPUs each GPU gets, by GPU index. */
struct plan_row {
	const char *name;
	const char *file;		/* under tests/data */
	unsigned workers;
	const char *allowed;		/* "": every CPU */
	size_t n;			/* the node's first n GPUs */
	const char *cpus[16];		/* NULL: not checked */
	bool disjoint;			/* assert_numa_local_disjoint() */
};

/* Each row planned and checked; the last row's plan is left for the
 * caller's further checks (teardown frees it). */
static void run_plans(const struct plan_row *rows, size_t n_rows)
{
	for (size_t i = 0; i < n_rows; i++) {
		const struct plan_row *c = &rows[i];

		fprintf(stderr, "row: %s\n", c->name);
		if (i)
			mc_plan_free(&plan);
		load(c->file);
		plan_for(c->workers, c->allowed, NULL, c->n);
		for (unsigned g = 0; g < 16; g++)
			if (c->cpus[g] && strcmp(cpus(g), c->cpus[g]))
				fail_msg("%s: GPU %u gets %s, want %s", c->name,
					 g, cpus(g), c->cpus[g]);
		if (c->disjoint)
			assert_numa_local_disjoint();
	}
}

#define RUN(rows) run_plans(rows, sizeof(rows) / sizeof(rows[0]))

/* Lenovo SD665-N V3, 2 x EPYC 9555 NPS4, 4 x H200: GPU 0 on NUMA 1, GPU 3
 * on NUMA 7; 2 threads per core, so 3 cores are 6 CPUs. */
static void test_lenovo_h200(void **state)
{
	static const struct plan_row rows[] = {
		{ "Lenovo H200, w=2",
		  "lenovo-sd665nv3-2xepyc9555-nps4-4xh200.xml", 2, "", 4,
		  { [0] = "16-18,144-146", [1] = "32-34,160-162",
		    [2] = "96-98,224-226", [3] = "112-114,240-242" }, true },
	};

	RUN(rows);
	assert_int_equal(gpu(0)->numa_os_index, 1);
	assert_int_equal(gpu(3)->numa_os_index, 7);
	for (unsigned i = 0; i < 4; i++) {
		assert_int_equal(gpu(i)->cores, 3);
		assert_int_equal(gpu(i)->cores_wanted, 3);
		assert_string_equal(gpu(i)->warning, "");
	}
}

/* Every task computes the plan on its own: the order it lists the GPUs in
 * must not change who gets which cores. */
static void test_order_independent(void **state)
{
	static const unsigned rev[] = { 3, 1, 2, 0 };

	load("lenovo-sd665nv3-2xepyc9555-nps4-4xh200.xml");
	plan_for(2, "", rev, 4);
	assert_int_equal(plan.gpu[0].index, 3);
	assert_string_equal(cpus(0), "16-18,144-146");
	assert_string_equal(cpus(3), "112-114,240-242");
	mc_plan_free(&plan);
	/* A step holding GPUs 1 and 3 only: the same NUMA-local cores. */
	plan_for(2, "", (const unsigned[]){ 3, 1 }, 2);
	assert_string_equal(cpus(1), "32-34,160-162");
	assert_string_equal(cpus(3), "112-114,240-242");
}

/* AWS g4dn.metal: 4 T4s per NUMA node share it, one after the other. */
static void test_g4dn(void **state)
{
	static const struct plan_row rows[] = {
		{ "g4dn, w=2", "aws-g4dn-metal-2xxeon8259cl-8xt4.xml", 2, "", 8,
		  { [0] = "0-2,48-50", [1] = "3-5,51-53", [3] = "9-11,57-59",
		    [4] = "24-26,72-74", [7] = "33-35,81-83" }, true },
		/* w=5: 6 cores each, 4 GPUs x 6 = all 24 cores of a socket. */
		{ "g4dn, w=5", "aws-g4dn-metal-2xxeon8259cl-8xt4.xml", 5, "", 8,
		  { [3] = "18-23,66-71", [7] = "42-47,90-95" }, true },
	};

	RUN(rows);
}

/* Tioga (HPE EX235a, 4 x MI250X = 8 GCDs): two GCDs per NUMA node, GPU
 * order unlike NUMA order (GPU 0 and 1 on NUMA 3, GPU 4 on NUMA 0). */
static void test_tioga(void **state)
{
	static const struct plan_row rows[] = {
		{ "Tioga, w=2",
		  "hpe-ex235a-tioga-epyc7a53-4xmi250x-8gcd.xml", 2, "", 8,
		  { [0] = "48-50,112-114", [1] = "51-53,115-117",
		    [4] = "0-2,64-66", [5] = "3-5,67-69" }, true },
	};

	RUN(rows);
	assert_int_equal(gpu(0)->numa_os_index, 3);
	assert_int_equal(gpu(1)->numa_os_index, 3);
}

/* The test machine's topology: one core per NUMA node. */
static void test_local_2numa(void **state)
{
	load("local-2numa-2gpu.xml");
	plan_for(0, "", NULL, 2);
	assert_string_equal(cpus(0), "0");
	assert_string_equal(cpus(1), "1");
	assert_numa_local_disjoint();
	mc_plan_free(&plan);
	/* w=1 wants 2 cores, each node has 1 and the other GPU's is
	 * taken: what is there, and a warning that it is short. */
	plan_for(1, "0-1", NULL, 2);
	assert_string_equal(cpus(0), "0");
	assert_int_equal(gpu(0)->cores, 1);
	assert_int_equal(gpu(0)->cores_wanted, 2);
	assert_non_null(strstr(gpu(0)->warning,
			       "memcore: GPU 0 gets 1 of the 2 cores"));
	assert_non_null(strstr(gpu(0)->warning, "--cpus-per-gpu=2"));
	mc_plan_free(&plan);
	/* One GPU of the two, w=1: its node's core and the other node's. */
	plan_for(1, "", NULL, 1);
	assert_string_equal(cpus(0), "0-1");
	assert_int_equal(gpu(0)->cores_local, 1);
	assert_string_equal(gpu(0)->warning, "");
}

/* An allowed set without NUMA node 1: GPU 1 gets nothing, and a warning
 * naming the GPU, its node and the srun options. */
static void test_warning_outside_allowed(void **state)
{
	const struct mc_plan_gpu *g;

	load("local-2numa-2gpu.xml");
	plan_for(0, "0", NULL, 2);
	assert_string_equal(cpus(0), "0");
	g = gpu(1);
	assert_string_equal(cpus(1), "");
	assert_int_equal(g->cores, 0);
	assert_true(g->outside);
	assert_false(gpu(0)->outside);
	assert_non_null(strstr(g->warning, "memcore: GPU 1 is on NUMA node 1"));
	assert_non_null(strstr(g->warning, "(CPUs 1)"));
	assert_non_null(strstr(g->warning, "may use (0)"));
	assert_non_null(strstr(g->warning,
			"srun --cpus-per-gpu=1 --gres-flags=enforce-binding"));
	assert_non_null(strstr(g->warning, "--gpu-bind=closest"));
	assert_string_equal(gpu(0)->warning, "");
	mc_plan_free(&plan);

	/* The Lenovo node without NUMA 1's CPUs: GPU 0 warned, 2 CPUs a
	 * core in the hint (--cpus-per-gpu counts CPUs). */
	load("lenovo-sd665nv3-2xepyc9555-nps4-4xh200.xml");
	plan_for(2, "0-15,32-143,160-255", NULL, 4);
	assert_string_equal(cpus(0), "");
	assert_non_null(strstr(gpu(0)->warning, "GPU 0 is on NUMA node 1"));
	assert_non_null(strstr(gpu(0)->warning, "--cpus-per-gpu=6"));
	assert_string_equal(cpus(3), "112-114,240-242");
	assert_string_equal(gpu(3)->warning, "");
}

/* Only one hyperthread of a core allowed: the core counts, only that
 * PU is given. */
static void test_partial_core(void **state)
{
	static const struct plan_row rows[] = {
		{ "g4dn, w=2, CPUs 48,1-2",
		  "aws-g4dn-metal-2xxeon8259cl-8xt4.xml", 2, "48,1-2", 1,
		  { [0] = "1-2,48" }, false },
	};

	RUN(rows);
	assert_int_equal(gpu(0)->cores, 3);
}

/* Every allowed core of the node already taken by lower GPUs. */
static void test_warning_all_taken(void **state)
{
	load("nvidia-dgx2h-16xv100-trimmed.xml");
	/* The whole node: GPU 2 borrows the nearest free core. */
	plan_for(0, "", NULL, 3);
	assert_string_equal(cpus(2), "24");
	assert_string_equal(gpu(2)->warning, "");
	mc_plan_free(&plan);
	/* Only the two cores of its node allowed: GPUs 0 and 1 took them. */
	plan_for(0, "0-1", NULL, 3);
	assert_string_equal(cpus(0), "0");
	assert_string_equal(cpus(1), "1");
	assert_string_equal(cpus(2), "");
	assert_non_null(strstr(gpu(2)->warning, "went to GPUs 0, 1"));
	assert_false(gpu(2)->outside);
	assert_non_null(strstr(gpu(2)->warning, "--cpus-per-gpu=1"));
}

/*
 * JUWELS Booster, 2 x EPYC 7402 in NPS4: 8 NUMA nodes of 6 cores, 4 x A100
 * on NUMA 3, 1, 7, 5; hwloc's latency matrix says 12 inside a package, 32
 * across. At w=8 each GPU needs 9 cores: its node's 6 and 3 from a GPU-less
 * node of the same package (NUMA 0 or 2 on package 0, 4 or 6 on package
 * 1), never another GPU's; the same without the matrix (by package).
 */
static void juwels_w8(void)
{
	const unsigned gpu_numa[4] = { 3, 1, 7, 5 };
	hwloc_bitmap_t numa = hwloc_bitmap_alloc();

	plan_for(8, "", NULL, 4);
	assert_string_equal(cpus(0), "0-2,18-23,48-50,66-71");
	assert_string_equal(cpus(1), "3-11,51-59");
	assert_string_equal(cpus(2), "24-26,42-47,72-74,90-95");
	assert_string_equal(cpus(3), "27-35,75-83");
	for (unsigned i = 0; i < 4; i++) {
		const struct mc_plan_gpu *g = gpu(i);
		int pu;

		assert_int_equal(g->numa_os_index, gpu_numa[i]);
		assert_int_equal(g->cores, 9);
		assert_int_equal(g->cores_local, 6);
		assert_string_equal(g->warning, "");
		/* every borrowed CPU is on a GPU-less node of its package */
		hwloc_bitmap_foreach_begin(pu, g->cpus) {
			for (uint32_t k = 0; k < facts.n_numa; k++) {
				const struct mc_numa *m = &facts.numa[k];

				assert_int_equal(mc_plan_parse_cpulist(m->cpus,
								       numa),
						 0);
				if (!hwloc_bitmap_isset(numa, (unsigned)pu) ||
				    m->os_index == gpu_numa[i])
					continue;
				assert_true(m->os_index % 2 == 0);
				assert_int_equal(m->package,
						 gpu_numa[i] < 4 ? 0 : 1);
			}
		} hwloc_bitmap_foreach_end();
		for (unsigned j = 0; j < i; j++)
			assert_false(hwloc_bitmap_intersects(g->cpus,
							     gpu(j)->cpus));
	}
	hwloc_bitmap_free(numa);
	mc_plan_free(&plan);
}

static void test_juwels_nps4(void **state)
{
	load("juwels-booster-2xepyc7402-nps4-4xa100-pcionly.xml");
	assert_int_equal(facts.n_numa, 8);
	assert_int_equal(facts.numa_distances, 1);
	assert_int_equal(facts.numa_distance[0][1], 12);
	assert_int_equal(facts.numa_distance[0][4], 32);
	assert_int_equal(facts.numa[0].package, 0);
	assert_int_equal(facts.numa[7].package, 1);
	juwels_w8();
	/* Without a matrix the package decides: the same plan. */
	facts.numa_distances = 0;
	juwels_w8();

	/* Only GPU 0's own 6-core domain allowed: 6 of 9 and a warning. */
	plan_for(8, "18-23,66-71", NULL, 1);
	assert_string_equal(cpus(0), "18-23,66-71");
	assert_int_equal(gpu(0)->cores, 6);
	assert_non_null(strstr(gpu(0)->warning,
			       "memcore: GPU 0 gets 6 of the 9 cores"));
	assert_non_null(strstr(gpu(0)->warning, "--cpus-per-gpu=18"));
}

/* With hwloc's distance matrix (Tioga, 4 NUMA nodes, each with GPUs):
 * a short GPU borrows from the nearest node, never a farther one first. */
static void test_distances(void **state)
{
	load("hpe-ex235a-tioga-epyc7a53-4xmi250x-8gcd.xml");
	assert_int_equal(facts.numa_distances, 1);
	assert_true(facts.numa_distance[0][0] <
		    facts.numa_distance[0][1]);
	/* One GCD at w=19: 16 cores of NUMA 3, 4 from the nearest node. */
	plan_for(19, "", NULL, 1);
	assert_int_equal(gpu(0)->numa_os_index, 3);
	assert_int_equal(gpu(0)->cores, 20);
	assert_int_equal(gpu(0)->cores_local, 16);
	assert_string_equal(gpu(0)->warning, "");
}

static void test_errors(void **state)
{
	char err[256];
	unsigned bad[] = { 9 }, twice[] = { 1, 1 };
	hwloc_bitmap_t set = hwloc_bitmap_alloc();

	load("local-2numa-2gpu.xml");
	assert_int_equal(mc_plan_compute(&facts, 1, NULL, bad, 1, &plan, err,
					 sizeof(err)), -1);
	assert_string_equal(err, "GPU 9 is not on this node (2 GPUs)");
	assert_int_equal(plan.n, 0);
	assert_int_equal(mc_plan_compute(&facts, 1, NULL, twice, 2, &plan,
					 err, sizeof(err)), -1);
	assert_string_equal(err, "GPU 1 listed twice");
	assert_int_equal(mc_plan_parse_cpulist("0-", set), -1);
	assert_int_equal(mc_plan_parse_cpulist("", set), -1);
	assert_int_equal(mc_plan_parse_cpulist("3-1", set), -1);
	assert_int_equal(mc_plan_parse_cpulist("0,x", set), -1);
	assert_int_equal(mc_plan_parse_cpulist("8,0-3", set), 0);
	{
		char buf[32];

		assert_string_equal(mc_plan_cpulist(set, buf, sizeof(buf)),
				    "0-3,8");
	}
	hwloc_bitmap_free(set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_lenovo_h200, teardown),
		cmocka_unit_test_teardown(test_order_independent, teardown),
		cmocka_unit_test_teardown(test_g4dn, teardown),
		cmocka_unit_test_teardown(test_tioga, teardown),
		cmocka_unit_test_teardown(test_local_2numa, teardown),
		cmocka_unit_test_teardown(test_juwels_nps4, teardown),
		cmocka_unit_test_teardown(test_distances, teardown),
		cmocka_unit_test_teardown(test_warning_outside_allowed,
					  teardown),
		cmocka_unit_test_teardown(test_partial_core, teardown),
		cmocka_unit_test_teardown(test_warning_all_taken, teardown),
		cmocka_unit_test_teardown(test_errors, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
