/*
 * test_nvml.c - GPU memory from NVML / ROCm SMI (mc_gpumem.h), driven
 * through the backend seam with fake libraries' answers: which GPUs ask
 * which library, matching by PCI bus id, what is left unknown and said in
 * the note, that a library is opened only when needed and always closed.
 * The real backends are run too: on a machine without the libraries they
 * must fail to open cleanly.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <fcntl.h>
#include <unistd.h>

#include <cmocka.h>

#include "mc_gpumem.h"
#include "mc_topology.h"

#define GIB (1024ULL * 1024 * 1024)

struct fake_gpu {
	const char *bus_id;
	uint64_t bytes;
};

struct fake {
	bool fail_open;
	const struct fake_gpu *gpus;
	size_t n;
	int opened, closed, queries;
};

static struct fake nv, amd;

static int fake_open(struct fake *f, void **ctx, char *err, size_t len)
{
	f->opened++;
	if (f->fail_open) {
		snprintf(err, len, "library not loadable");
		return -1;
	}
	*ctx = f;
	return 0;
}

static int fake_memory(void *ctx, const char *bus_id, uint64_t *bytes)
{
	struct fake *f = ctx;

	f->queries++;
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->gpus[i].bus_id, bus_id)) {
			*bytes = f->gpus[i].bytes;
			return 0;
		}
	return -1;
}

static void fake_close(void *ctx)
{
	((struct fake *)ctx)->closed++;
}

static int nv_open(void **ctx, char *err, size_t len)
{
	return fake_open(&nv, ctx, err, len);
}

static int amd_open(void **ctx, char *err, size_t len)
{
	return fake_open(&amd, ctx, err, len);
}

static const struct mc_gpumem_backend fake_nvml = {
	"NVML", 0x10de, MC_MEM_SRC_NVML, nv_open, fake_memory, fake_close,
};
static const struct mc_gpumem_backend fake_rocm = {
	"ROCm SMI", 0x1002, MC_MEM_SRC_RSMI, amd_open, fake_memory, fake_close,
};
static const struct mc_gpumem_backend *const both[] = {
	&fake_nvml, &fake_rocm,
};

static struct mc_node_facts f;

static void add_gpu(const char *bus, uint16_t vendor, uint64_t bytes,
		    enum mc_mem_source src)
{
	struct mc_gpu *g = &f.gpus[f.n_gpus];

	memset(g, 0, sizeof(*g));
	g->index = f.n_gpus++;
	snprintf(g->pci_bus_id, sizeof(g->pci_bus_id), "%s", bus);
	g->vendor_id = vendor;
	g->memory_bytes = bytes;
	g->memory_source = src;
}

static int reset(void **state)
{
	memset(&f, 0, sizeof(f));
	memset(&nv, 0, sizeof(nv));
	memset(&amd, 0, sizeof(amd));
	return 0;
}

/* A live H200 node on Debian's hwloc: no memory in the topology. */
static void test_nvml_fills_by_bus_id(void **state)
{
	static const struct fake_gpu h200[] = {
		{ "0000:c6:00.0", 141 * GIB }, { "0000:06:00.0", 140 * GIB },
	};
	char note[256];

	add_gpu("0000:06:00.0", 0x10de, 0, MC_MEM_SRC_NONE);
	add_gpu("0000:c6:00.0", 0x10de, 0, MC_MEM_SRC_NONE);
	nv.gpus = h200;
	nv.n = 2;
	assert_int_equal(mc_gpumem_fill(&f, both, 2, note, sizeof(note)), 2);
	assert_int_equal(f.gpus[0].memory_bytes, 140 * GIB);
	assert_int_equal(f.gpus[1].memory_bytes, 141 * GIB);
	assert_int_equal(f.gpus[0].memory_source, MC_MEM_SRC_NVML);
	assert_string_equal(note, "");
	assert_int_equal(nv.opened, 1);
	assert_int_equal(nv.closed, 1);
	/* No AMD GPU: ROCm SMI is never loaded. */
	assert_int_equal(amd.opened, 0);
}

/* What the topology knows (CUDAGlobalMemorySize) is kept, and a node
 * whose topology knows every GPU never loads a library. */
static void test_topology_wins(void **state)
{
	char note[256];

	add_gpu("0000:06:00.0", 0x10de, 80 * GIB, MC_MEM_SRC_CUDA);
	add_gpu("0000:07:00.0", 0x10de, 80 * GIB, MC_MEM_SRC_CUDA);
	assert_int_equal(mc_gpumem_fill(&f, both, 2, note, sizeof(note)), 0);
	assert_int_equal(nv.opened + amd.opened, 0);
	assert_int_equal(f.gpus[1].memory_source, MC_MEM_SRC_CUDA);

	add_gpu("0000:08:00.0", 0x10de, 0, MC_MEM_SRC_NONE);
	static const struct fake_gpu one[] = { { "0000:08:00.0", 40 * GIB } };
	nv.gpus = one;
	nv.n = 1;
	assert_int_equal(mc_gpumem_fill(&f, both, 2, note, sizeof(note)), 1);
	/* Only the GPU without memory was asked for. */
	assert_int_equal(nv.queries, 1);
	assert_int_equal(f.gpus[0].memory_bytes, 80 * GIB);
	assert_int_equal(f.gpus[2].memory_bytes, 40 * GIB);
}

/* A mixed node: each vendor's GPUs go to their own library. */
static void test_vendors(void **state)
{
	static const struct fake_gpu mi[] = { { "0000:c1:00.0", 64 * GIB } };
	static const struct fake_gpu nvd[] = { { "0000:c1:00.0", 1 } };
	char note[256];

	add_gpu("0000:c1:00.0", 0x1002, 0, MC_MEM_SRC_NONE);
	amd.gpus = mi;
	amd.n = 1;
	nv.gpus = nvd;	/* would answer wrongly if it were asked */
	nv.n = 1;
	assert_int_equal(mc_gpumem_fill(&f, both, 2, note, sizeof(note)), 1);
	assert_int_equal(nv.opened, 0);
	assert_int_equal(f.gpus[0].memory_bytes, 64 * GIB);
	assert_int_equal(f.gpus[0].memory_source, MC_MEM_SRC_RSMI);
}

/* Without the library: memory stays unknown (the policy's GpuMemory then
 * applies) and the note says why. */
static void test_no_library(void **state)
{
	char note[256];

	add_gpu("0000:06:00.0", 0x10de, 0, MC_MEM_SRC_NONE);
	nv.fail_open = true;
	assert_int_equal(mc_gpumem_fill(&f, both, 2, note, sizeof(note)), 0);
	assert_int_equal(f.gpus[0].memory_bytes, 0);
	assert_int_equal(f.gpus[0].memory_source, MC_MEM_SRC_NONE);
	assert_string_equal(note, "NVML: library not loadable");
	assert_int_equal(nv.closed, 0);
}

/* A GPU the library does not know (bus id mismatch): unknown, noted. */
static void test_unknown_device(void **state)
{
	static const struct fake_gpu other[] = { { "0000:99:00.0", GIB } };
	char note[256];

	add_gpu("0000:06:00.0", 0x10de, 0, MC_MEM_SRC_NONE);
	add_gpu("0000:99:00.0", 0x10de, 0, MC_MEM_SRC_NONE);
	nv.gpus = other;
	nv.n = 1;
	assert_int_equal(mc_gpumem_fill(&f, both, 2, note, sizeof(note)), 1);
	assert_int_equal(f.gpus[0].memory_bytes, 0);
	assert_int_equal(f.gpus[1].memory_bytes, GIB);
	assert_string_equal(note, "NVML: does not know GPU 0000:06:00.0");
	assert_int_equal(nv.closed, 1);
	/* NULL note is fine. */
	f.gpus[1].memory_bytes = 0;
	assert_int_equal(mc_gpumem_fill(&f, both, 2, NULL, 0), 1);
}

/* A sysfs snapshot without vendor ids: NVML is asked first, then ROCm
 * SMI; neither failing to open is worth a note for such a GPU. */
static void test_unknown_vendor(void **state)
{
	static const struct fake_gpu mi[] = { { "0000:c1:00.0", 64 * GIB } };
	char note[256];

	add_gpu("0000:c1:00.0", 0x0000, 0, MC_MEM_SRC_NONE);
	nv.fail_open = true;
	amd.gpus = mi;
	amd.n = 1;
	assert_int_equal(mc_gpumem_fill(&f, both, 2, note, sizeof(note)), 1);
	assert_int_equal(nv.opened, 1);
	assert_string_equal(note, "");
	assert_int_equal(f.gpus[0].memory_source, MC_MEM_SRC_RSMI);
}

static void test_bdfid(void **state)
{
	uint64_t id;

	assert_int_equal(mc_gpumem_bdfid("0000:c1:00.0", &id), 0);
	assert_int_equal(id, 0xc1ULL << 8);
	assert_int_equal(mc_gpumem_bdfid("00000001:03:1f.7", &id), 0);
	assert_int_equal(id, (1ULL << 32) | (3 << 8) | (0x1f << 3) | 7);
	assert_int_equal(mc_gpumem_bdfid("0000:c1:00", &id), -1);
	assert_int_equal(mc_gpumem_bdfid("0000:c1:20.0", &id), -1);
	assert_int_equal(mc_gpumem_bdfid("0000:c1:00.8", &id), -1);
	assert_int_equal(mc_gpumem_bdfid("0000:c1:00.0x", &id), -1);
	assert_int_equal(mc_gpumem_bdfid("", &id), -1);
	assert_int_equal(mc_gpumem_bdfid(NULL, &id), -1);
}

/* The vendor libraries talk on stderr when they find no GPU (ROCm SMI:
 * "Failed to open drm root directory", "Exception caught: rsmi_init");
 * that is their expected answer on a machine without GPUs, not a test
 * failure, so the real backends run with stderr on /dev/null. memcore's
 * own word is the note and err, which the asserts read. */
static int quiet_begin(void)
{
	int saved, null;

	fflush(stderr);
	saved = dup(STDERR_FILENO);
	null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, STDERR_FILENO);
		close(null);
	}
	return saved;
}

static void quiet_end(int saved)
{
	fflush(stderr);
	if (saved >= 0) {
		dup2(saved, STDERR_FILENO);
		close(saved);
	}
}

/* The real backends on a machine without NVIDIA or AMD drivers (this
 * one; on a GPU node they may open). Never crash, never leak a handle. */
static void test_real_backends(void **state)
{
	const struct mc_gpumem_backend *real[] = {
		&mc_gpumem_nvml, &mc_gpumem_rocm,
	};
	char note[256];
	int saved;

	for (size_t i = 0; i < 2; i++) {
		void *ctx = NULL;
		char err[160] = "";
		int rc, mem_rc = -1;
		uint64_t b = 0;

		saved = quiet_begin();
		rc = real[i]->open(&ctx, err, sizeof(err));
		if (rc == 0) {
			/* A bus id no machine has. */
			mem_rc = real[i]->memory(ctx, "00ff:ff:1f.7", &b);
			real[i]->close(ctx);
		}
		quiet_end(saved);
		if (rc == 0)
			assert_int_equal(mem_rc, -1);
		else
			assert_true(err[0] != '\0');
	}
	add_gpu("0000:06:00.0", 0x10de, 0, MC_MEM_SRC_NONE);
	saved = quiet_begin();
	(void)mc_gpumem_fill_default(&f, note, sizeof(note));
	quiet_end(saved);
	if (!f.gpus[0].memory_bytes)
		assert_non_null(strstr(note, "NVML"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_nvml_fills_by_bus_id, reset),
		cmocka_unit_test_setup(test_topology_wins, reset),
		cmocka_unit_test_setup(test_vendors, reset),
		cmocka_unit_test_setup(test_no_library, reset),
		cmocka_unit_test_setup(test_unknown_device, reset),
		cmocka_unit_test_setup(test_unknown_vendor, reset),
		cmocka_unit_test_setup(test_bdfid, reset),
		cmocka_unit_test_setup(test_real_backends, reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
