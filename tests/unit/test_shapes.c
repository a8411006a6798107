/*
 * test_shapes.c - node records from slurmctld: Gres strings, grouping by
 * shape, GPU memory by GpuTypeMemory= or GpuMemory=, the shape's words
 * (mc_shapes.h), and the GpuTypeMemory= key (mc_config.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "mc_shapes.h"

#define GiB ((uint64_t)1 << 30)

static void test_gres(void **state)
{
	static const struct {
		const char *gres;
		int rc;
		uint32_t count;
		const char *type;
	} cases[] = {
		{ "gpu:h100:8(S:0-1)", 0, 8, "h100" },
		{ "gpu:4", 0, 4, "" },
		{ "gpu", 0, 1, "" },
		{ "gpu:a100:2,gpu:a100:2", 0, 4, "a100" },
		{ "gpu:a100:2(S:0,2),gpu:v100:1(S:1)", 0, 3, "a100" },
		{ "nic:1,gpu:t4:8", 0, 8, "t4" },
		{ "gpu:h100:no_consume:8", 0, 8, "h100" },
		{ "gpus:2", 0, 0, "" },		/* not "gpu" */
		{ "mps:100", 0, 0, "" },
		{ "(null)", 0, 0, "" },
		{ "", 0, 0, "" },
		{ NULL, 0, 0, "" },
		{ "gpu:a100:99999999", -1, 0, "" },
	};
	uint32_t n;
	char type[MC_GPU_TYPE_NAME_MAX];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = mc_gres_gpus(cases[i].gres, &n, type, sizeof(type));

		assert_int_equal(rc, cases[i].rc);
		if (rc)
			continue;
		assert_int_equal(n, cases[i].count);
		assert_string_equal(type, cases[i].type);
	}
}

static struct mc_node_record rec(const char *name, uint64_t ram, uint32_t cores,
				 uint32_t tpc, uint32_t gpus, const char *type)
{
	struct mc_node_record r = { .ram_bytes = ram, .cores = cores,
				    .threads_per_core = tpc, .gpus = gpus };

	snprintf(r.name, sizeof(r.name), "%s", name);
	snprintf(r.gpu_type, sizeof(r.gpu_type), "%s", type);
	return r;
}

static void test_group(void **state)
{
	struct mc_node_record n[6] = {
		rec("gpu01", 2048 * GiB, 112, 2, 8, "h100"),
		rec("gpu13", 512 * GiB, 64, 1, 4, "a100"),
		rec("gpu02", 2048 * GiB, 112, 2, 8, "h100"),
		rec("gpu14", 512 * GiB, 64, 1, 4, "a100"),
		/* one field apart each: shapes of their own */
		rec("gpu15", 512 * GiB, 64, 2, 4, "a100"),
		rec("gpu16", 512 * GiB, 64, 1, 4, "v100"),
	};
	size_t shape_of[6];

	(void)state;
	assert_int_equal(mc_shapes_group(n, 6, shape_of), 4);
	assert_int_equal(shape_of[0], 0);
	assert_int_equal(shape_of[1], 1);
	assert_int_equal(shape_of[2], 0);
	assert_int_equal(shape_of[3], 1);
	assert_int_equal(shape_of[4], 2);
	assert_int_equal(shape_of[5], 3);
	assert_true(mc_same_shape(&n[0], &n[2]));
	assert_false(mc_same_shape(&n[1], &n[4]));
	assert_int_equal(mc_shapes_group(n, 0, shape_of), 0);
}

static void test_gpu_memory(void **state)
{
	struct mc_config cfg;
	struct mc_policy p;
	struct mc_node_record h = rec("a", 2048 * GiB, 112, 2, 8, "H100");
	struct mc_node_record t = rec("b", 512 * GiB, 64, 1, 4, "t4");
	struct mc_node_record u = rec("c", 512 * GiB, 64, 1, 4, "");
	enum mc_mem_source src;
	char err[MC_ERR_MAX], d[160];
	const char *text = "GpuTypeMemory=h100:80G,a100:40G\n"
			   "PartitionName=old GpuMemory=16G\n";

	(void)state;
	assert_int_equal(mc_config_parse(text, strlen(text), "t.conf", &cfg,
					 err, sizeof(err)), 0);
	mc_config_policy(&cfg, NULL, &p);
	/* the Gres type, case-insensitive */
	assert_int_equal(mc_shape_gpu_memory(&p, &h, 0, &src), 80 * GiB);
	assert_int_equal(src, MC_MEM_SRC_GPU_TYPE);
	assert_string_equal(mc_mem_source_key(src), "GpuTypeMemory");
	/* the user's --gpu-memory first */
	assert_int_equal(mc_shape_gpu_memory(&p, &h, 94 * GiB, &src), 94 * GiB);
	assert_int_equal(src, MC_MEM_SRC_OPTION);
	/* a type the policy does not name, no GpuMemory: unknown */
	assert_int_equal(mc_shape_gpu_memory(&p, &t, 0, &src), 0);
	assert_int_equal(src, MC_MEM_SRC_NONE);
	/* the partition's GpuMemory= stands in */
	mc_config_policy(&cfg, "old", &p);
	assert_int_equal(mc_shape_gpu_memory(&p, &u, 0, &src), 16 * GiB);
	assert_int_equal(src, MC_MEM_SRC_POLICY);
	assert_int_equal(mc_shape_gpu_memory(&p, &h, 0, &src), 80 * GiB);

	assert_string_equal(mc_shape_describe(&h, 80 * GiB, d, sizeof(d)),
			    "8 x H100 80 GiB, 2048 GiB, 112 cores x 2 threads");
	assert_string_equal(mc_shape_describe(&u, 0, d, sizeof(d)),
			    "4 x GPU, 512 GiB, 64 cores");
}

static void test_gpu_type_memory_key(void **state)
{
	static const struct {
		const char *line, *why;
	} bad[] = {
		{ "GpuTypeMemory=h100", "expected TYPE:SIZE" },
		{ "GpuTypeMemory=:80G", "expected TYPE:SIZE" },
		{ "GpuTypeMemory=h100:80Q", "unknown size suffix" },
		{ "GpuTypeMemory=h100:0", "size out of range" },
		{ "GpuTypeMemory=h100:80G,H100:94G", "given twice" },
		{ "GpuTypeMemory=h100:80G,", "empty entry" },
		{ "GpuTypeMemory=", "missing value" },
	};
	struct mc_config cfg;
	char err[MC_ERR_MAX];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(mc_config_parse(bad[i].line,
			strlen(bad[i].line), "t.conf", &cfg, err,
			sizeof(err)), -1);
		if (!strstr(err, bad[i].why) || !strstr(err, "t.conf:1"))
			fail_msg("%s: got '%s', want '%s'", bad[i].line, err,
				 bad[i].why);
	}
	assert_int_equal(mc_config_parse("GpuTypeMemory=mi250x:64G", 24,
					 "t.conf", &cfg, err, sizeof(err)), 0);
	assert_int_equal(mc_policy_gpu_type_memory(&cfg.global, "MI250X"),
			 64 * GiB);
	assert_int_equal(mc_policy_gpu_type_memory(&cfg.global, ""), 0);
	assert_int_equal(mc_policy_gpu_type_memory(&cfg.global, NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gres),
		cmocka_unit_test(test_group),
		cmocka_unit_test(test_gpu_memory),
		cmocka_unit_test(test_gpu_type_memory_key),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
