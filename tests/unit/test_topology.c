/*
 * test_topology.c - mc_topology_load() on real GPU servers' hwloc XML dumps
 * (tests/data, see ATTRIBUTION.md) and on broken input.
 *
 * Table-driven: every *.xml in tests/data must have a row here, so that a
 * topology added to the data set without expectations fails the suite.
 * Expected numbers come from the dumps' sources (ATTRIBUTION.md) and were
 * cross-checked with lstopo-no-graphics (hwloc 2.9.0).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "mc_test_files.h"

#include <hwloc.h>

#include "mc_plan.h"
#include "mc_topology.h"

#define GIB	(1024.0 * 1024.0 * 1024.0)
#define KIB	1024ULL

struct gpu_exp {
	const char *bus;
	int numa;
};

struct topo_case {
	const char *file;
	double host_ram_gib;		/* SOURCES.md, +- 0.1 GiB */
	uint32_t cores, pus, n_numa;
	const unsigned *numa_os;	/* host NUMA P#, in facts order */
	uint32_t n_gpus;
	const struct gpu_exp *gpus;	/* in PCI (= Slurm index) order */
	uint16_t vendor, class_id;	/* of every GPU */
	uint64_t gpu_mem_kib;		/* 0 = unknown */
	enum mc_mem_source mem_src;
	const char *model;		/* of every GPU */
};

static const unsigned numa_0_1[] = { 0, 1 };
static const unsigned numa_0_8[] = { 0, 8 };
static const unsigned numa_0_3[] = { 0, 1, 2, 3 };
static const unsigned numa_0_7[] = { 0, 1, 2, 3, 4, 5, 6, 7 };

static const struct gpu_exp dgx2_gpus[] = {
	{ "0000:34:00.0", 0 }, { "0000:36:00.0", 0 }, { "0000:39:00.0", 0 },
	{ "0000:3b:00.0", 0 }, { "0000:57:00.0", 0 }, { "0000:59:00.0", 0 },
	{ "0000:5c:00.0", 0 }, { "0000:5e:00.0", 0 }, { "0000:b7:00.0", 1 },
	{ "0000:b9:00.0", 1 }, { "0000:bc:00.0", 1 }, { "0000:be:00.0", 1 },
	{ "0000:e0:00.0", 1 }, { "0000:e2:00.0", 1 }, { "0000:e5:00.0", 1 },
	{ "0000:e7:00.0", 1 },
};
static const struct gpu_exp h200_gpus[] = {
	{ "0000:06:00.0", 1 }, { "0000:16:00.0", 2 },
	{ "0000:96:00.0", 6 }, { "0000:e6:00.0", 7 },
};
static const struct gpu_exp lassen_gpus[] = {
	{ "0004:04:00.0", 0 }, { "0004:05:00.0", 0 },
	{ "0035:03:00.0", 8 }, { "0035:04:00.0", 8 },
};
static const struct gpu_exp g4dn_gpus[] = {
	{ "0000:18:00.0", 0 }, { "0000:19:00.0", 0 }, { "0000:35:00.0", 0 },
	{ "0000:36:00.0", 0 }, { "0000:e7:00.0", 1 }, { "0000:e8:00.0", 1 },
	{ "0000:f4:00.0", 1 }, { "0000:f5:00.0", 1 },
};
/* PCI order, not rsmi order: rsmi0 is c1 (NUMA 3), rsmi4 is d1 (NUMA 0). */
static const struct gpu_exp tioga_gpus[] = {
	{ "0000:c1:00.0", 3 }, { "0000:c6:00.0", 3 }, { "0000:c9:00.0", 1 },
	{ "0000:ce:00.0", 1 }, { "0000:d1:00.0", 0 }, { "0000:d6:00.0", 0 },
	{ "0000:d9:00.0", 2 }, { "0000:de:00.0", 2 },
};
static const struct gpu_exp mi300a_gpus[] = {
	{ "0000:02:00.0", 0 }, { "0001:02:00.0", 1 },
	{ "0002:02:00.0", 2 }, { "0003:02:00.0", 3 },
};
/* PCI order again: the file lists rsmi0 (63:00.0) first. */
static const struct gpu_exp mi50_gpus[] = {
	{ "0000:03:00.0", 0 }, { "0000:27:00.0", 0 }, { "0000:43:00.0", 0 },
	{ "0000:63:00.0", 0 }, { "0000:83:00.0", 1 }, { "0000:a3:00.0", 1 },
	{ "0000:c3:00.0", 1 }, { "0000:e3:00.0", 1 },
};
static const struct gpu_exp juwels_gpus[] = {
	{ "0000:03:00.0", 3 }, { "0000:44:00.0", 1 },
	{ "0000:84:00.0", 7 }, { "0000:c4:00.0", 5 },
};
static const struct gpu_exp ac922_gpus[] = {
	{ "0004:05:00.0", 0 }, { "0004:06:00.0", 0 }, { "0006:00:00.0", 0 },
	{ "0007:00:00.0", 8 }, { "0035:04:00.0", 8 }, { "0035:05:00.0", 8 },
};
static const struct gpu_exp local_gpus[] = {
	{ "0000:01:00.0", 0 }, { "0000:81:00.0", 1 },
};

#define N(a) (uint32_t)(sizeof(a) / sizeof((a)[0]))

static const struct topo_case cases[] = {
	/* Trimmed to 4 cores; nvml osdevs typed COPROC without subtype. */
	{ "nvidia-dgx2h-16xv100-trimmed.xml", 1510.6, 4, 4, 2, numa_0_1,
	  N(dgx2_gpus), dgx2_gpus, 0x10de, 0x0302, 0, MC_MEM_SRC_NONE,
	  "Tesla V100-SXM3-32GB-H" },
	{ "lenovo-sd665nv3-2xepyc9555-nps4-4xh200.xml", 1511.4, 128, 256, 8,
	  numa_0_7, N(h200_gpus), h200_gpus, 0x10de, 0x0302, 146593728,
	  MC_MEM_SRC_CUDA, "NVIDIA H200" },
	{ "ibm-ac922-lassen-2xpower9-4xv100.xml", 255.4, 40, 160, 2, numa_0_8,
	  N(lassen_gpus), lassen_gpus, 0x10de, 0x0302, 16515072,
	  MC_MEM_SRC_CUDA, "Tesla V100-SXM2-16GB" },
	/* 4 CPU-less GPU-memory NUMA nodes (63 GiB) left out of host RAM;
	 * DRM osdevs only, and no PCIDevice name in this v1 dump: the name
	 * comes from the PCI ids. */
	{ "ibm-ac922-lassen-2xpower9-4xv100-hwloc1.xml", 255.4, 40, 160, 2,
	  numa_0_8, N(lassen_gpus), lassen_gpus, 0x10de, 0x0302, 0,
	  MC_MEM_SRC_NONE, "NVIDIA [10de:1db1]" },
	{ "aws-g4dn-metal-2xxeon8259cl-8xt4.xml", 377.5, 48, 96, 2, numa_0_1,
	  N(g4dn_gpus), g4dn_gpus, 0x10de, 0x0302, 15472384, MC_MEM_SRC_CUDA,
	  "Tesla T4" },
	/* Locality object is an L3Cache below the NUMA level. */
	{ "hpe-ex235a-tioga-epyc7a53-4xmi250x-8gcd.xml", 503.4, 64, 128, 4,
	  numa_0_3, N(tioga_gpus), tioga_gpus, 0x1002, 0x0380, 67092480,
	  MC_MEM_SRC_RSMI, "AMD INSTINCT MI200 (MCM) OAM LC MBA HPE C2" },
	/* Class 1200 (processing accelerator); unified memory, no VRAM. */
	{ "hpe-ex255a-4xmi300a-spx.xml", 502.0, 96, 192, 4, numa_0_3,
	  N(mi300a_gpus), mi300a_gpus, 0x1002, 0x1200, 0, MC_MEM_SRC_NONE,
	  "Aqua Vanjaram [Instinct MI300A]" },
	/* The model string is cut like that in the file itself. */
	{ "supermicro-as4124gs-2xepyc7402-8xmi50-v1format.xml", 251.4, 48, 96,
	  2, numa_0_1, N(mi50_gpus), mi50_gpus, 0x1002, 0x0380, 33538048,
	  MC_MEM_SRC_RSMI, "deon Instinct MI50 32GB" },
	{ "juwels-booster-2xepyc7402-nps4-4xa100-pcionly.xml", 503.5, 48, 96, 8,
	  numa_0_7, N(juwels_gpus), juwels_gpus, 0x10de, 0x0302, 0,
	  MC_MEM_SRC_NONE, "NVIDIA [10de:20b0]" },
	/* 6 GPUMemory NUMA nodes (90 GiB) left out; vendor 0000, so no
	 * name at all. */
	{ "ibm-ac922-2xpower9-6xv100-gpumemnuma-DERIVED.xml", 251.6, 8, 32, 2,
	  numa_0_8, N(ac922_gpus), ac922_gpus, 0x0000, 0x0300, 0,
	  MC_MEM_SRC_NONE, "" },
	{ "local-2numa-2gpu.xml", 24.0, 2, 2, 2, numa_0_1, N(local_gpus),
	  local_gpus, 0x10de, 0x0302, 16777216, MC_MEM_SRC_CUDA,
	  "NVIDIA H200" },
};

/* Half of PATH_MAX, so that dir + "/" + file name always fits a path. */
static char data_dir[PATH_MAX / 2];
static char tmp_dir[PATH_MAX / 2];

static void set_dirs(void)
{
	const char *top = getenv("MC_TOP");
	const char *tmp = getenv("TMPDIR");

	if (top && *top)
		snprintf(data_dir, sizeof(data_dir), "%s/tests/data", top);
	else
		snprintf(data_dir, sizeof(data_dir), "tests/data");
	snprintf(tmp_dir, sizeof(tmp_dir), "%s/mc-topo-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(tmp_dir)) {
		fprintf(stderr, "mkdtemp %s: %s\n", tmp_dir, strerror(errno));
		exit(1);
	}
}

static struct mc_node_facts *facts_new(void)
{
	struct mc_node_facts *f = malloc(sizeof(*f));

	assert_non_null(f);
	return f;
}

static void check_case(void **state)
{
	const struct topo_case *c = *state;
	struct mc_node_facts *f = facts_new();
	char path[PATH_MAX], err[512];
	uint64_t numa_ram = 0;
	uint32_t numa_cores = 0, i;

	snprintf(path, sizeof(path), "%s/%s", data_dir, c->file);
	if (mc_topology_load(path, f, err, sizeof(err)) != 0)
		fail_msg("%s: %s", c->file, err);
	assert_string_equal(f->source, path);

	if (f->host_ram_bytes / GIB < c->host_ram_gib - 0.1 ||
	    f->host_ram_bytes / GIB > c->host_ram_gib + 0.1)
		fail_msg("%s: host RAM %.2f GiB, expected %.1f", c->file,
			 f->host_ram_bytes / GIB, c->host_ram_gib);
	assert_int_equal(f->cores, c->cores);
	assert_int_equal(f->pus, c->pus);
	assert_int_equal(f->n_numa, c->n_numa);
	for (i = 0; i < f->n_numa; i++) {
		assert_int_equal(f->numa[i].os_index, c->numa_os[i]);
		assert_true(f->numa[i].memory_bytes > 0);
		assert_true(f->numa[i].cores > 0);
		assert_true(f->numa[i].cpus[0] != '\0');
		/* The parsed mask (what plans read) is the list, exactly. */
		{
			hwloc_bitmap_t a = hwloc_bitmap_alloc();
			hwloc_bitmap_t b = hwloc_bitmap_alloc();

			assert_int_equal(mc_plan_parse_cpulist(f->numa[i].cpus,
							       a), 0);
			assert_int_equal(hwloc_bitmap_from_ulongs(b,
					MC_CPUMASK_WORDS, f->numa[i].cpu_mask),
					 0);
			assert_true(hwloc_bitmap_isequal(a, b));
			hwloc_bitmap_free(a);
			hwloc_bitmap_free(b);
		}
		numa_ram += f->numa[i].memory_bytes;
		numa_cores += f->numa[i].cores;
	}
	/* Host RAM is exactly the host NUMA nodes, nothing else. */
	assert_true(numa_ram == f->host_ram_bytes);
	/* From XML, host RAM is hwloc's figure. */
	assert_true(f->hwloc_ram_bytes == f->host_ram_bytes);
	assert_int_equal(numa_cores, f->cores);

	assert_int_equal(f->n_gpus, c->n_gpus);
	for (i = 0; i < f->n_gpus; i++) {
		const struct mc_gpu *g = &f->gpus[i];

		assert_int_equal(g->index, i);
		if (strcmp(g->pci_bus_id, c->gpus[i].bus) != 0)
			fail_msg("%s: GPU %u at %s, expected %s", c->file, i,
				 g->pci_bus_id, c->gpus[i].bus);
		if (g->numa_os_index != c->gpus[i].numa)
			fail_msg("%s: GPU %u (%s) on NUMA %d, expected %d",
				 c->file, i, g->pci_bus_id, g->numa_os_index,
				 c->gpus[i].numa);
		assert_int_equal(g->vendor_id, c->vendor);
		assert_int_equal(g->class_id, c->class_id);
		assert_true(g->memory_bytes == c->gpu_mem_kib * KIB);
		assert_int_equal(g->memory_source, c->mem_src);
		assert_string_equal(g->model, c->model);
		/* Only the MI300A is an APU (one memory pool with the host). */
		assert_int_equal(g->apu, strstr(c->file, "mi300a") != NULL);
	}
	/* Every NUMA node knows its package; these dumps all carry hwloc's
	 * NUMA latency matrix except the v1 and trimmed ones. */
	for (i = 0; i < f->n_numa; i++)
		assert_true(f->numa[i].package >= 0 ||
			    strstr(c->file, "hwloc1") ||
			    strstr(c->file, "v1format"));
	if (f->numa_distances)
		for (i = 0; i < f->n_numa; i++)
			assert_int_equal(f->numa_distance[i][i], 10);
	free(f);
}

static void missing_case(void **state)
{
	fail_msg("%s has no row in test_topology.c's table",
		 (const char *)*state);
}

/* Load must fail with -1 and a message naming the file (and `want`). */
static void expect_fail(const char *path, const char *want)
{
	struct mc_node_facts *f = facts_new();
	char err[512];

	memset(err, 'x', sizeof(err));
	assert_int_equal(mc_topology_load(path, f, err, sizeof(err)), -1);
	assert_non_null(memchr(err, '\0', sizeof(err)));
	if (!strstr(err, path))
		fail_msg("error without the file name: %s", err);
	if (strncmp(err, "topology ", 9) != 0)
		fail_msg("error not in 'topology FILE: reason' form: %s", err);
	if (want && !strstr(err, want))
		fail_msg("error without '%s': %s", want, err);
	/* A caller that ignores rc must not see stale facts. */
	assert_int_equal(f->n_gpus, 0);
	assert_int_equal(f->n_numa, 0);
	assert_true(f->host_ram_bytes == 0);
	free(f);
}

static char *read_file(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "r");
	struct stat st;
	char *buf;

	assert_non_null(fp);
	assert_int_equal(fstat(fileno(fp), &st), 0);
	buf = malloc((size_t)st.st_size + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)st.st_size, fp),
			 (size_t)st.st_size);
	fclose(fp);
	*len = (size_t)st.st_size;
	return buf;
}

static void test_missing_file(void **state)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/no-such-topology.xml", data_dir);
	expect_fail(path, "No such file or directory");
}

static void test_directory(void **state)
{
	char path[PATH_MAX];

	expect_fail(tmp_dir, "Is a directory");
	/* A FIFO must be refused, not block the caller (slurmd) forever. */
	snprintf(path, sizeof(path), "%s/fifo.xml", tmp_dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	expect_fail(path, "not a regular file");
	unlink(path);
}

static void test_empty_file(void **state)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/empty.xml", tmp_dir);
	mc_test_write(path, "", 0);
	expect_fail(path, "empty");
	unlink(path);
}

/* Cut a real dump at several points: an error every time, never a crash. */
static void test_truncated(void **state)
{
	static const size_t cuts[] = { 1000, 40, 20000, 60000 };
	char src[PATH_MAX], path[PATH_MAX];
	size_t len, i;
	char *buf;

	snprintf(src, sizeof(src), "%s/%s", data_dir,
		 "aws-g4dn-metal-2xxeon8259cl-8xt4.xml");
	buf = read_file(src, &len);
	for (i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		snprintf(path, sizeof(path), "%s/truncated-%zu.xml", tmp_dir,
			 cuts[i]);
		assert_true(cuts[i] < len);
		mc_test_write(path, buf, cuts[i]);
		expect_fail(path, "hwloc cannot load this XML");
		unlink(path);
	}
	free(buf);
}

/* hwloc 3.x's default XML format: 2.9 refuses it; say why. */
static void test_format_3(void **state)
{
	static const char xml[] =
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<!DOCTYPE topology SYSTEM \"hwloc3.dtd\">\n"
		"<topology version=\"3.0\">\n"
		"  <object type=\"Machine\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" allowed_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\" allowed_nodeset=\"0x1\" gp_index=\"1\">\n"
		"    <object type=\"NUMANode\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\" gp_index=\"2\" local_memory=\"1073741824\"/>\n"
		"    <object type=\"PU\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\" gp_index=\"3\"/>\n"
		"  </object>\n"
		"</topology>\n";
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/format3.xml", tmp_dir);
	mc_test_write(path, xml, strlen(xml));
#if HWLOC_API_VERSION >= 0x00020a00
	/* hwloc 2.10 and later (Debian 13) read the 3.x format. */
	{
		struct mc_node_facts *f = facts_new();
		char err[512] = "";

		assert_int_equal(mc_topology_load(path, f, err, sizeof(err)), 0);
		free(f);
	}
#else
	expect_fail(path, "XML format 3.x is newer than hwloc");
#endif
	unlink(path);
}

static const char head_v2[] =
	"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	"<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
	"<topology version=\"2.0\">\n";

/* hwloc itself refuses a topology without any NUMA node. */
static void test_no_numa(void **state)
{
	static const char body[] =
		"  <object type=\"Machine\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" allowed_cpuset=\"0x1\" nodeset=\"0x0\" complete_nodeset=\"0x0\" allowed_nodeset=\"0x0\" gp_index=\"1\">\n"
		"    <object type=\"PU\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x0\" complete_nodeset=\"0x0\" gp_index=\"2\"/>\n"
		"  </object>\n"
		"</topology>\n";
	char path[PATH_MAX], xml[2048];

	snprintf(xml, sizeof(xml), "%s%s", head_v2, body);
	snprintf(path, sizeof(path), "%s/no-numa.xml", tmp_dir);
	mc_test_write(path, xml, strlen(xml));
	expect_fail(path, "hwloc cannot load this XML");
	unlink(path);
}

/* hwloc loads it, but its only NUMA node is GPU memory: no host RAM. */
static void test_only_gpu_memory_numa(void **state)
{
	static const char body[] =
		"  <object type=\"Machine\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" allowed_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\" allowed_nodeset=\"0x1\" gp_index=\"1\">\n"
		"    <object type=\"NUMANode\" os_index=\"0\" subtype=\"GPUMemory\" cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\" gp_index=\"2\" local_memory=\"1073741824\"/>\n"
		"    <object type=\"Core\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\" gp_index=\"3\">\n"
		"      <object type=\"PU\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\" gp_index=\"4\"/>\n"
		"    </object>\n"
		"  </object>\n"
		"</topology>\n";
	char path[PATH_MAX], xml[2048];

	snprintf(xml, sizeof(xml), "%s%s", head_v2, body);
	snprintf(path, sizeof(path), "%s/gpumem-only.xml", tmp_dir);
	mc_test_write(path, xml, strlen(xml));
	expect_fail(path, "no NUMA node with CPUs");
	unlink(path);
}

/* Build a 1-core node with `n` NVIDIA GPUs on consecutive buses. */
static char *many_gpus_xml(unsigned n)
{
	size_t cap = 4096 + (size_t)n * 512, len;
	char *xml = malloc(cap);
	unsigned i;

	assert_non_null(xml);
	len = (size_t)snprintf(xml, cap, "%s"
		"  <object type=\"Machine\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" allowed_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\" allowed_nodeset=\"0x1\" gp_index=\"1\">\n"
		"    <object type=\"NUMANode\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\" gp_index=\"2\" local_memory=\"1073741824\"/>\n"
		"    <object type=\"Core\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\" gp_index=\"3\">\n"
		"      <object type=\"PU\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\" gp_index=\"4\"/>\n"
		"    </object>\n"
		"    <object type=\"Bridge\" gp_index=\"5\" bridge_type=\"0-1\" depth=\"0\" bridge_pci=\"0000:[01-ff]\">\n",
		head_v2);
	for (i = 0; i < n; i++)
		len += (size_t)snprintf(xml + len, cap - len,
			"      <object type=\"PCIDev\" gp_index=\"%u\" pci_busid=\"0000:%02x:00.0\" pci_type=\"0302 [10de:2335] [10de:18be] a1\" pci_link_speed=\"0.000000\"/>\n",
			10 + i, 1 + i);
	snprintf(xml + len, cap - len, "    </object>\n  </object>\n</topology>\n");
	return xml;
}

static void test_max_gpus(void **state)
{
	struct mc_node_facts *f = facts_new();
	char path[PATH_MAX], err[512];
	char *xml;

	snprintf(path, sizeof(path), "%s/64-gpus.xml", tmp_dir);
	xml = many_gpus_xml(MC_MAX_GPUS);
	mc_test_write(path, xml, strlen(xml));
	free(xml);
	if (mc_topology_load(path, f, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	assert_int_equal(f->n_gpus, MC_MAX_GPUS);
	assert_string_equal(f->gpus[MC_MAX_GPUS - 1].pci_bus_id,
			    "0000:40:00.0");
	assert_int_equal(f->gpus[MC_MAX_GPUS - 1].numa_os_index, 0);
	unlink(path);
	free(f);

	snprintf(path, sizeof(path), "%s/65-gpus.xml", tmp_dir);
	xml = many_gpus_xml(MC_MAX_GPUS + 1);
	mc_test_write(path, xml, strlen(xml));
	free(xml);
	expect_fail(path, "more than 64 GPUs");
	unlink(path);
}

/* A caller without an error buffer must not crash us. */
static void test_null_err(void **state)
{
	struct mc_node_facts *f = facts_new();
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/no-such-topology.xml", data_dir);
	assert_int_equal(mc_topology_load(path, f, NULL, 0), -1);
	assert_int_equal(mc_topology_load(NULL, NULL, NULL, 0), -1);
	free(f);
}

/* The test machine itself: whatever it is, it has RAM, a core, a node. */
static void test_live(void **state)
{
	struct mc_node_facts *f = facts_new();
	char err[512];

	if (mc_topology_load("", f, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	assert_string_equal(f->source, "live");
	assert_true(f->n_numa >= 1);
	assert_true(f->cores >= 1);
	assert_true(f->pus >= f->cores);
	assert_true(f->host_ram_bytes > 0);
	assert_true(f->n_gpus <= MC_MAX_GPUS);
	/* Host RAM is the kernel's (slurmd's RealMemory), less any NUMA
	 * node of GPU memory; hwloc's NUMA total is kept apart. */
	assert_true(f->hwloc_ram_bytes > 0);
	assert_true(mc_kernel_ram_bytes() > 0);
	assert_true(f->host_ram_bytes <= mc_kernel_ram_bytes());
	free(f);
}

/* The audit's note: hwloc and the host RAM used differ by more than 1%. */
static void test_ram_disagrees(void **state)
{
	struct mc_node_facts *f = facts_new();

	f->host_ram_bytes = f->hwloc_ram_bytes = 24ULL << 30;
	assert_false(mc_topology_ram_disagrees(f));
	f->host_ram_bytes = (24ULL << 30) + (200ULL << 20);	/* 0.8% */
	assert_false(mc_topology_ram_disagrees(f));
	f->hwloc_ram_bytes = 22ULL << 30;			/* 9% */
	assert_true(mc_topology_ram_disagrees(f));
	f->hwloc_ram_bytes = 0;		/* from slurmctld: no hwloc figure */
	assert_false(mc_topology_ram_disagrees(f));
	free(f);
}

static void test_local_cpus(void **state)
{
	struct mc_node_facts *f = facts_new();
	char path[PATH_MAX], err[512];

	snprintf(path, sizeof(path), "%s/local-2numa-2gpu.xml", data_dir);
	if (mc_topology_load(path, f, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	assert_string_equal(f->numa[0].cpus, "0");
	assert_string_equal(f->numa[1].cpus, "1");
	assert_true(f->numa[0].memory_bytes == 12ULL << 30);
	free(f);

	snprintf(path, sizeof(path), "%s/hpe-ex235a-tioga-epyc7a53-4xmi250x-8gcd.xml",
		 data_dir);
	f = facts_new();
	if (mc_topology_load(path, f, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	assert_string_equal(f->numa[3].cpus, "48-63,112-127");
	assert_int_equal(f->numa[3].cores, 16);
	free(f);
}

static void test_mem_source_names(void **state)
{
	assert_string_equal(mc_mem_source_name(MC_MEM_SRC_NONE), "none");
	assert_string_equal(mc_mem_source_name(MC_MEM_SRC_CUDA), "cuda");
	assert_string_equal(mc_mem_source_name(MC_MEM_SRC_RSMI), "rsmi");
	assert_string_equal(mc_mem_source_name(MC_MEM_SRC_NVML), "nvml");
	assert_string_equal(mc_mem_source_name(MC_MEM_SRC_POLICY), "policy");
	assert_string_equal(mc_mem_source_name((enum mc_mem_source)99), "none");
}

static int has_xml_suffix(const char *name)
{
	size_t n = strlen(name);

	return n > 4 && strcmp(name + n - 4, ".xml") == 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void)
{
	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_directory),
		cmocka_unit_test(test_empty_file),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_format_3),
		cmocka_unit_test(test_no_numa),
		cmocka_unit_test(test_only_gpu_memory_numa),
		cmocka_unit_test(test_max_gpus),
		cmocka_unit_test(test_null_err),
		cmocka_unit_test(test_live),
		cmocka_unit_test(test_ram_disagrees),
		cmocka_unit_test(test_local_cpus),
		cmocka_unit_test(test_mem_source_names),
	};
	size_t nfixed = sizeof(fixed) / sizeof(fixed[0]);
	struct CMUnitTest *tests;
	char **names = NULL;
	size_t nnames = 0, ntests = 0, i, j;
	struct dirent *de;
	DIR *d;
	int rc;

	set_dirs();
	d = opendir(data_dir);
	if (!d) {
		fprintf(stderr, "%s: %s (set MC_TOP to the repository root)\n",
			data_dir, strerror(errno));
		return 1;
	}
	while ((de = readdir(d)) != NULL) {
		if (!has_xml_suffix(de->d_name))
			continue;
		names = realloc(names, (nnames + 1) * sizeof(*names));
		if (!names || !(names[nnames] = strdup(de->d_name)))
			return 1;
		nnames++;
	}
	closedir(d);
	if (nnames)
		qsort(names, nnames, sizeof(*names), cmp_str);

	tests = calloc(nnames + nfixed, sizeof(*tests));
	if (!tests)
		return 1;
	for (i = 0; i < nnames; i++) {
		const struct topo_case *c = NULL;

		for (j = 0; j < sizeof(cases) / sizeof(cases[0]); j++)
			if (strcmp(cases[j].file, names[i]) == 0)
				c = &cases[j];
		tests[ntests].name = names[i];
		tests[ntests].test_func = c ? check_case : missing_case;
		tests[ntests].initial_state = c ? (void *)c : names[i];
		ntests++;
	}
	/* ...and every row's file must be there. */
	for (j = 0; j < sizeof(cases) / sizeof(cases[0]); j++) {
		for (i = 0; i < nnames; i++)
			if (strcmp(cases[j].file, names[i]) == 0)
				break;
		if (i == nnames) {
			fprintf(stderr, "%s/%s: missing from the data set\n",
				data_dir, cases[j].file);
			return 1;
		}
	}
	for (i = 0; i < nfixed; i++)
		tests[ntests++] = fixed[i];

	rc = _cmocka_run_group_tests("topology", tests, ntests, NULL, NULL);

	rmdir(tmp_dir);
	for (i = 0; i < nnames; i++)
		free(names[i]);
	free(names);
	free(tests);
	return rc;
}
