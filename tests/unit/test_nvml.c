/*
 * test_nvml.c - GPU memory from NVML / ROCm SMI (mc_gpu_probe.h), driven
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

#include "mc_facts.h"
#include "mc_gpu_probe.h"
#include "mc_parse.h"
#include "mc_plan.h"
#include "mc_topology.h"
#include "mc_test_checks.h"

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

static const struct mc_gpu_probe_backend fake_nvml = {
	"NVML", 0x10de, MC_MEM_SRC_NVML, nv_open, fake_memory, fake_close,
	NULL,
};
static const struct mc_gpu_probe_backend fake_rocm = {
	"ROCm SMI", 0x1002, MC_MEM_SRC_RSMI, amd_open, fake_memory, fake_close,
	NULL,
};
static const struct mc_gpu_probe_backend *const both[] = {
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

/* What a probe row gives: mc_gpu_probe_fill's count, the facts after it,
 * and how each fake library was used. */
struct probe_out {
	int rc;
	struct mc_node_facts f;
	struct fake nv, amd;
};

#define GOT(x, w) MC_CHECK(struct probe_out, x, w)

static const struct fake_gpu h200[] = {
	{ "0000:c6:00.0", 141 * GIB }, { "0000:06:00.0", 140 * GIB },
};
static const struct fake_gpu a100_08[] = { { "0000:08:00.0", 40 * GIB } };
static const struct fake_gpu mi_c1[] = { { "0000:c1:00.0", 64 * GIB } };
static const struct fake_gpu wrong_c1[] = { { "0000:c1:00.0", 1 } };
static const struct fake_gpu only_99[] = { { "0000:99:00.0", GIB } };

/*
 * The node's GPUs as the topology gave them, the libraries as they answer
 * (NVML for 0x10de, ROCm SMI for 0x1002), and what mc_gpu_probe_fill must
 * make of them.
 */
static void test_probe_fill(void **state)
{
	static const struct {
		const char *name;
		struct {
			const char *bus;	/* NULL ends the list */
			uint16_t vendor;
			uint64_t bytes;
			enum mc_mem_source src;
		} gpus[3];
		struct fake nv, amd;
		bool no_note;			/* a NULL note */
		const char *note;		/* NULL: not checked */
		struct mc_check want[8];
	} rows[] = {
		/* A live H200 node on Debian's hwloc: no memory in the
		 * topology. */
		{ "H200s, NVML knows both by bus id",
		  { { "0000:06:00.0", 0x10de, 0, MC_MEM_SRC_NONE },
		    { "0000:c6:00.0", 0x10de, 0, MC_MEM_SRC_NONE } },
		  .nv = { .gpus = h200, .n = 2 },
		  .note = "",
		  .want = { GOT(rc, 2), GOT(f.gpus[0].memory_bytes, 140 * GIB),
			    GOT(f.gpus[1].memory_bytes, 141 * GIB),
			    GOT(f.gpus[0].memory_source, MC_MEM_SRC_NVML),
			    GOT(nv.opened, 1), GOT(nv.closed, 1),
			    /* No AMD GPU: ROCm SMI is never loaded. */
			    GOT(amd.opened, 0) } },
		/* What the topology knows (CUDAGlobalMemorySize) is kept, and
		 * a node whose topology knows every GPU never loads a
		 * library. */
		{ "the topology knows every GPU",
		  { { "0000:06:00.0", 0x10de, 80 * GIB, MC_MEM_SRC_CUDA },
		    { "0000:07:00.0", 0x10de, 80 * GIB, MC_MEM_SRC_CUDA } },
		  .want = { GOT(rc, 0), GOT(nv.opened, 0), GOT(amd.opened, 0),
			    GOT(f.gpus[1].memory_source, MC_MEM_SRC_CUDA) } },
		/* Only the GPU without memory is asked for. */
		{ "the topology knows two GPUs of three",
		  { { "0000:06:00.0", 0x10de, 80 * GIB, MC_MEM_SRC_CUDA },
		    { "0000:07:00.0", 0x10de, 80 * GIB, MC_MEM_SRC_CUDA },
		    { "0000:08:00.0", 0x10de, 0, MC_MEM_SRC_NONE } },
		  .nv = { .gpus = a100_08, .n = 1 },
		  .want = { GOT(rc, 1), GOT(nv.queries, 1),
			    GOT(f.gpus[0].memory_bytes, 80 * GIB),
			    GOT(f.gpus[2].memory_bytes, 40 * GIB) } },
		/* A mixed node: each vendor's GPUs go to their own library
		 * (NVML would answer wrongly if it were asked). */
		{ "an AMD GPU goes to ROCm SMI, not NVML",
		  { { "0000:c1:00.0", 0x1002, 0, MC_MEM_SRC_NONE } },
		  .nv = { .gpus = wrong_c1, .n = 1 },
		  .amd = { .gpus = mi_c1, .n = 1 },
		  .want = { GOT(rc, 1), GOT(nv.opened, 0),
			    GOT(f.gpus[0].memory_bytes, 64 * GIB),
			    GOT(f.gpus[0].memory_source, MC_MEM_SRC_RSMI) } },
		/* Without the library: memory stays unknown (the policy's
		 * GpuMemory then applies) and the note says why. */
		{ "NVML not loadable",
		  { { "0000:06:00.0", 0x10de, 0, MC_MEM_SRC_NONE } },
		  .nv = { .fail_open = true },
		  .note = "NVML: library not loadable",
		  .want = { GOT(rc, 0), GOT(f.gpus[0].memory_bytes, 0),
			    GOT(f.gpus[0].memory_source, MC_MEM_SRC_NONE),
			    GOT(nv.closed, 0) } },
		/* A GPU the library does not know (bus id mismatch): unknown,
		 * noted. */
		{ "a GPU NVML does not know",
		  { { "0000:06:00.0", 0x10de, 0, MC_MEM_SRC_NONE },
		    { "0000:99:00.0", 0x10de, 0, MC_MEM_SRC_NONE } },
		  .nv = { .gpus = only_99, .n = 1 },
		  .note = "NVML: does not know GPU 0000:06:00.0",
		  .want = { GOT(rc, 1), GOT(f.gpus[0].memory_bytes, 0),
			    GOT(f.gpus[1].memory_bytes, GIB),
			    GOT(nv.closed, 1) } },
		{ "the same, a NULL note",
		  { { "0000:06:00.0", 0x10de, 0, MC_MEM_SRC_NONE },
		    { "0000:99:00.0", 0x10de, 0, MC_MEM_SRC_NONE } },
		  .nv = { .gpus = only_99, .n = 1 },
		  .no_note = true,
		  .want = { GOT(rc, 1) } },
		/* A sysfs snapshot without vendor ids: NVML is asked first,
		 * then ROCm SMI; neither failing to open is worth a note for
		 * such a GPU. */
		{ "no vendor id: NVML first, then ROCm SMI",
		  { { "0000:c1:00.0", 0x0000, 0, MC_MEM_SRC_NONE } },
		  .nv = { .fail_open = true },
		  .amd = { .gpus = mi_c1, .n = 1 },
		  .note = "",
		  .want = { GOT(rc, 1), GOT(nv.opened, 1),
			    GOT(f.gpus[0].memory_source, MC_MEM_SRC_RSMI) } },
	};
	static struct probe_out got;	/* large: off the stack */

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char note[256] = "(not written)";

		reset(state);
		for (size_t k = 0; k < 3 && rows[i].gpus[k].bus; k++)
			add_gpu(rows[i].gpus[k].bus, rows[i].gpus[k].vendor,
				rows[i].gpus[k].bytes, rows[i].gpus[k].src);
		nv = rows[i].nv;
		amd = rows[i].amd;
		got.rc = mc_gpu_probe_fill(&f, both, 2,
					   rows[i].no_note ? NULL : note,
					   rows[i].no_note ? 0 : sizeof(note));
		got.f = f;
		got.nv = nv;
		got.amd = amd;
		mc_assert_checks(rows[i].name, &got, rows[i].want);
		if (rows[i].note && strcmp(note, rows[i].note))
			fail_msg("%s: note '%s', want '%s'", rows[i].name, note,
				 rows[i].note);
	}
}

static void test_bdfid(void **state)
{
	uint64_t id;

	assert_int_equal(mc_gpu_probe_bdfid("0000:c1:00.0", &id), 0);
	assert_int_equal(id, 0xc1ULL << 8);
	assert_int_equal(mc_gpu_probe_bdfid("00000001:03:1f.7", &id), 0);
	assert_int_equal(id, (1ULL << 32) | (3 << 8) | (0x1f << 3) | 7);
	assert_int_equal(mc_gpu_probe_bdfid("0000:c1:00", &id), -1);
	assert_int_equal(mc_gpu_probe_bdfid("0000:c1:20.0", &id), -1);
	assert_int_equal(mc_gpu_probe_bdfid("0000:c1:00.8", &id), -1);
	assert_int_equal(mc_gpu_probe_bdfid("0000:c1:00.0x", &id), -1);
	assert_int_equal(mc_gpu_probe_bdfid("", &id), -1);
	assert_int_equal(mc_gpu_probe_bdfid(NULL, &id), -1);
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
	const struct mc_gpu_probe_backend *real[] = {
		&mc_gpu_probe_nvml, &mc_gpu_probe_rocm,
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
	(void)mc_gpu_probe_fill_default(&f, note, sizeof(note));
	quiet_end(saved);
	if (!f.gpus[0].memory_bytes)
		assert_non_null(strstr(note, "NVML"));
}

/* ---- MIG: NVML's answers for a card split 7 x 1g.10gb ---------------- */

struct fake_mig_card {
	const char *bus_id;
	unsigned n;			/* slices, 0 = MIG off */
	uint64_t bytes;			/* each */
	const char *name;		/* NVML's device name of a slice */
};

static const struct fake_mig_card *mig_cards;
static size_t n_mig_cards;
static int mig_queries;

static int fake_slices(void *ctx, const char *bus_id, struct mc_mig *out,
		       unsigned max, unsigned *n)
{
	(void)ctx;
	mig_queries++;
	*n = 0;
	for (size_t i = 0; i < n_mig_cards; i++) {
		const struct fake_mig_card *c = &mig_cards[i];

		if (strcmp(c->bus_id, bus_id))
			continue;
		for (unsigned k = 0; k < c->n && k < max; k++) {
			uint64_t b;

			memset(&out[k], 0, sizeof(out[k]));
			out[k].memory_bytes = c->bytes;
			/* as nvml_slices() does with nvmlDeviceGetName */
			mc_mig_profile(c->name, &b, out[k].profile,
				       sizeof(out[k].profile));
			(*n)++;
		}
		return 0;
	}
	return -1;
}

static const struct mc_gpu_probe_backend fake_nvml_mig = {
	"NVML", 0x10de, MC_MEM_SRC_NVML, nv_open, fake_memory, fake_close,
	fake_slices,
};

/*
 * An H100 80GB node: card 0 (NUMA 1) split 7 x 1g.10gb (NVML answers
 * 10 GiB each), card 1 (NUMA 3) without MIG. Memory known from the
 * topology, yet
 * NVML is opened for the slices; each slice's parent and NUMA node is its
 * card's; the facts then count 7 Slurm GPUs (slices win when present), a
 * step of one slice is sized at that slice, and the plan binds a slice
 * next to its card.
 */
static void test_mig_slices(void **state)
{
	static const struct fake_mig_card cards[] = {
		{ "0000:18:00.0", 7, 10 * GIB,
		  "NVIDIA H100 80GB HBM3 MIG 1g.10gb" },
		{ "0000:9a:00.0", 0, 0, "" },
	};
	static const struct mc_gpu_probe_backend *const mig[] = {
		&fake_nvml_mig,
	};
	struct mc_policy p;
	struct mc_node node;
	char note[256];
	unsigned slice[] = { 3 };
	struct mc_plan plan;
	char err[256];

	mig_cards = cards;
	n_mig_cards = 2;
	mig_queries = 0;
	add_gpu("0000:18:00.0", 0x10de, 80 * GIB, MC_MEM_SRC_CUDA);
	add_gpu("0000:9a:00.0", 0x10de, 80 * GIB, MC_MEM_SRC_CUDA);
	f.gpus[0].numa_os_index = 1;
	f.gpus[1].numa_os_index = 3;
	assert_int_equal(mc_gpu_probe_fill(&f, mig, 1, note, sizeof(note)), 0);
	assert_int_equal(nv.opened, 1);
	assert_int_equal(nv.closed, 1);
	assert_int_equal(mig_queries, 2);
	assert_int_equal(f.n_mig, 7);
	for (unsigned i = 0; i < 7; i++) {
		assert_int_equal(f.mig[i].parent, 0);
		assert_int_equal(f.mig[i].memory_bytes, 10 * GIB);
		assert_string_equal(f.mig[i].profile, "1g.10gb");
		assert_int_equal(mc_topology_gpu_numa(&f, i), 1);
	}
	assert_int_equal(mc_topology_gpu_numa(&f, 7), -1);
	assert_int_equal(mc_topology_slurm_gpus(&f), 7);

	mc_policy_defaults(&p);
	/* A job of 1 slice: 10 GiB, not the card's 80. */
	assert_int_equal(mc_facts_step_gpu_memory(&f, &p, slice, 1), 10 * GIB);
	assert_int_equal(mc_facts_gpu_memory(&f, &p, 6, NULL), 10 * GIB);
	mc_facts_node(&f, &p, &node);
	assert_int_equal(node.gpus, 7);

	/* The plan binds slice 3 to its card's NUMA node. */
	f.n_numa = 4;
	for (unsigned i = 0; i < 4; i++) {
		f.numa[i].os_index = i;
		f.numa[i].cores = 1;
		f.numa[i].package = 0;
		snprintf(f.numa[i].cpus, sizeof(f.numa[i].cpus), "%u", i);
		/* what plans read: the list as the loader parses it */
		memset(f.numa[i].cpu_mask, 0, sizeof(f.numa[i].cpu_mask));
		f.numa[i].cpu_mask[0] = 1UL << i;
	}
	for (unsigned i = 0; i < MC_MAX_PUS; i++)
		f.pu_core[i] = MC_PU_NONE;
	assert_int_equal(mc_plan_compute(&f, 1, NULL, slice, 1, &plan, err,
					 sizeof(err)), 0);
	assert_int_equal(plan.gpu[0].numa_os_index, 1);
	assert_int_equal(hwloc_bitmap_first(plan.gpu[0].cpus), 1);
	mc_plan_free(&plan);
}

/* No NVML slices: a card's Slurm GPUs are the cards; the MIG profile in
 * the GPU type (--gres=gpu:1g.10gb:1) gives the slice's memory. */
static void test_mig_profile_names(void **state)
{
	uint64_t b = 0;
	char prof[16];

	assert_int_equal(mc_mig_profile("1g.10gb", &b, prof, sizeof(prof)), 0);
	assert_int_equal(b, 10 * GIB);
	assert_string_equal(prof, "1g.10gb");
	assert_int_equal(mc_mig_profile("3g.40gb", &b, NULL, 0), 0);
	assert_int_equal(b, 40 * GIB);
	assert_int_equal(mc_mig_profile("a100_3g.40gb", &b, prof,
					sizeof(prof)), 0);
	assert_string_equal(prof, "3g.40gb");
	assert_int_equal(mc_mig_profile("nvidia_h100_80gb_hbm3_1g.10gb+me", &b,
					prof, sizeof(prof)), 0);
	assert_string_equal(prof, "1g.10gb+me");
	assert_int_equal(b, 10 * GIB);
	assert_int_equal(mc_mig_profile("NVIDIA A100-SXM4-40GB MIG 2g.10gb",
					&b, prof, sizeof(prof)), 0);
	assert_string_equal(prof, "2g.10gb");
	/* Not MIG: a card type, or a model with "80gb" but no "Ng." */
	assert_int_equal(mc_mig_profile("a100", &b, NULL, 0), -1);
	assert_int_equal(mc_mig_profile("nvidia_h100_80gb_hbm3", &b, NULL, 0),
			 -1);
	assert_int_equal(mc_mig_profile("x1g.10gb", &b, NULL, 0), -1);
	assert_int_equal(mc_mig_profile("1g.10gbx", &b, NULL, 0), -1);
	assert_int_equal(mc_mig_profile("0g.10gb", &b, NULL, 0), -1);
	assert_int_equal(mc_mig_profile("", &b, NULL, 0), -1);
	assert_int_equal(mc_mig_profile(NULL, &b, NULL, 0), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_probe_fill, reset),
		cmocka_unit_test_setup(test_bdfid, reset),
		cmocka_unit_test_setup(test_real_backends, reset),
		cmocka_unit_test_setup(test_mig_slices, reset),
		cmocka_unit_test_setup(test_mig_profile_names, reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
