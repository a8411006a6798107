/*
 * mc_gpu_probe.c - GPU memory from NVML and ROCm SMI (see mc_gpu_probe.h).
 *
 * The vendor headers are not needed (nor installed on build hosts): the
 * few calls used are declared here as the libraries' ABI has them since
 * NVML 7 (the _v2 entry points) and ROCm SMI 1.0.
 */
#include "mc_gpu_probe.h"
#include "mc_parse.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MC_VENDOR_NVIDIA 0x10de
#define MC_VENDOR_AMD 0x1002

int mc_gpu_probe_bdfid(const char *pci_bus_id, uint64_t *bdfid)
{
	unsigned long dom;
	unsigned bus, dev, fn;
	char tail;

	/* Hex digits and separators only: scanf's %x would take "0x". */
	if (!pci_bus_id ||
	    pci_bus_id[strspn(pci_bus_id, "0123456789abcdefABCDEF:.")] ||
	    sscanf(pci_bus_id, "%lx:%x:%x.%x%c", &dom, &bus, &dev, &fn,
		   &tail) != 4 ||
	    dom > 0xffffffffUL || bus > 0xff || dev > 0x1f || fn > 0x7)
		return -1;
	*bdfid = ((uint64_t)dom << 32) | ((uint64_t)bus << 8) |
		 ((uint64_t)dev << 3) | fn;
	return 0;
}

/* ------------------------------------------------------------- NVML --- */

typedef int nvml_return_t;		/* nvmlReturn_t: 0 = NVML_SUCCESS */
typedef void *nvml_device_t;		/* nvmlDevice_t */
struct nvml_memory {			/* nvmlMemory_t */
	unsigned long long total, free, used;
};

struct nvml_ctx {
	void *dl;
	nvml_return_t (*shutdown)(void);
	nvml_return_t (*by_bus_id)(const char *, nvml_device_t *);
	nvml_return_t (*memory_info)(nvml_device_t, struct nvml_memory *);
	/* MIG (NVML 11+, optional): nvmlDeviceGetMigMode,
	 * nvmlDeviceGetMaxMigDeviceCount, nvmlDeviceGetMigDeviceHandleByIndex,
	 * nvmlDeviceGetName ("NVIDIA A100-SXM4-80GB MIG 1g.10gb"). */
	nvml_return_t (*mig_mode)(nvml_device_t, unsigned *, unsigned *);
	nvml_return_t (*mig_count)(nvml_device_t, unsigned *);
	nvml_return_t (*mig_handle)(nvml_device_t, unsigned, nvml_device_t *);
	nvml_return_t (*name)(nvml_device_t, char *, unsigned);
};

static int nvml_open(void **ctxp, char *err, size_t errlen)
{
	struct nvml_ctx *c;
	nvml_return_t (*init)(void);
	void *dl = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!dl) {
		snprintf(err, errlen, "libnvidia-ml.so.1 not loadable");
		return -1;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		dlclose(dl);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	c->dl = dl;
	init = (nvml_return_t (*)(void))dlsym(dl, "nvmlInit_v2");
	c->shutdown = (nvml_return_t (*)(void))dlsym(dl, "nvmlShutdown");
	c->by_bus_id = (nvml_return_t (*)(const char *, nvml_device_t *))
		dlsym(dl, "nvmlDeviceGetHandleByPciBusId_v2");
	c->memory_info = (nvml_return_t (*)(nvml_device_t,
					    struct nvml_memory *))
		dlsym(dl, "nvmlDeviceGetMemoryInfo");
	c->mig_mode = (nvml_return_t (*)(nvml_device_t, unsigned *,
					 unsigned *))
		dlsym(dl, "nvmlDeviceGetMigMode");
	c->mig_count = (nvml_return_t (*)(nvml_device_t, unsigned *))
		dlsym(dl, "nvmlDeviceGetMaxMigDeviceCount");
	c->mig_handle = (nvml_return_t (*)(nvml_device_t, unsigned,
					   nvml_device_t *))
		dlsym(dl, "nvmlDeviceGetMigDeviceHandleByIndex");
	c->name = (nvml_return_t (*)(nvml_device_t, char *, unsigned))
		dlsym(dl, "nvmlDeviceGetName");
	if (!init || !c->shutdown || !c->by_bus_id || !c->memory_info) {
		snprintf(err, errlen, "libnvidia-ml.so.1 lacks the NVML "
			 "calls memcore uses");
		goto fail;
	}
	if (init() != 0) {
		snprintf(err, errlen, "nvmlInit_v2 failed (no driver?)");
		goto fail;
	}
	*ctxp = c;
	return 0;
fail:
	dlclose(dl);
	free(c);
	return -1;
}

static int nvml_memory(void *ctx, const char *bus_id, uint64_t *bytes)
{
	struct nvml_ctx *c = ctx;
	nvml_device_t dev = NULL;
	struct nvml_memory m = { 0, 0, 0 };

	if (c->by_bus_id(bus_id, &dev) != 0 ||
	    c->memory_info(dev, &m) != 0 || !m.total)
		return -1;
	*bytes = m.total;
	return 0;
}

static int nvml_slices(void *ctx, const char *bus_id, struct mc_mig *out,
		       unsigned max, unsigned *n)
{
	struct nvml_ctx *c = ctx;
	nvml_device_t dev = NULL;
	unsigned cur = 0, pending = 0, count = 0;

	*n = 0;
	if (c->by_bus_id(bus_id, &dev) != 0)
		return -1;
	/* An NVML without MIG, or a card without it: no slices. */
	if (!c->mig_mode || !c->mig_count || !c->mig_handle ||
	    c->mig_mode(dev, &cur, &pending) != 0 || cur != 1 ||
	    c->mig_count(dev, &count) != 0)
		return 0;
	for (unsigned i = 0; i < count && *n < max; i++) {
		nvml_device_t mig = NULL;
		struct nvml_memory m = { 0, 0, 0 };
		struct mc_mig *s = &out[*n];
		char name[96] = "";
		uint64_t bytes;

		/* Unpopulated positions answer NVML_ERROR_NOT_FOUND. */
		if (c->mig_handle(dev, i, &mig) != 0)
			continue;
		memset(s, 0, sizeof(*s));
		if (c->memory_info(mig, &m) == 0)
			s->memory_bytes = m.total;
		if (c->name && c->name(mig, name, sizeof(name)) == 0)
			mc_mig_profile(name, &bytes, s->profile,
				       sizeof(s->profile));
		(*n)++;
	}
	return 0;
}

static void nvml_close(void *ctx)
{
	struct nvml_ctx *c = ctx;

	c->shutdown();
	dlclose(c->dl);
	free(c);
}

const struct mc_gpu_probe_backend mc_gpu_probe_nvml = {
	"NVML", MC_VENDOR_NVIDIA, MC_MEM_SRC_NVML,
	nvml_open, nvml_memory, nvml_close, nvml_slices,
};

/* --------------------------------------------------------- ROCm SMI --- */

typedef int rsmi_status_t;		/* 0 = RSMI_STATUS_SUCCESS */
#define RSMI_MEM_TYPE_VRAM 0
/* ROCm 6 puts a partition id in bits 28-31 of the BDF id. */
#define RSMI_BDFID_MASK (~(0xfULL << 28))

struct rocm_gpu {
	uint64_t bdfid, vram_bytes;
};

struct rocm_ctx {
	void *dl;
	uint32_t n;
	struct rocm_gpu gpu[MC_MAX_GPUS];
};

static void *rocm_dlopen(void)
{
	static const char *const names[] = {
		"librocm_smi64.so", "librocm_smi64.so.7", "librocm_smi64.so.6",
		"librocm_smi64.so.5", "/opt/rocm/lib/librocm_smi64.so",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		void *dl = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);

		if (dl)
			return dl;
	}
	return NULL;
}

/* ROCm SMI has no lookup by bus id: read every device once at open. */
static int rocm_open(void **ctxp, char *err, size_t errlen)
{
	rsmi_status_t (*init)(uint64_t), (*shutdown)(void);
	rsmi_status_t (*count)(uint32_t *);
	rsmi_status_t (*pci_id)(uint32_t, uint64_t *);
	rsmi_status_t (*total)(uint32_t, int, uint64_t *);
	struct rocm_ctx *c;
	uint32_t n = 0;
	void *dl = rocm_dlopen();

	if (!dl) {
		snprintf(err, errlen, "librocm_smi64.so not loadable");
		return -1;
	}
	init = (rsmi_status_t (*)(uint64_t))dlsym(dl, "rsmi_init");
	shutdown = (rsmi_status_t (*)(void))dlsym(dl, "rsmi_shut_down");
	count = (rsmi_status_t (*)(uint32_t *))
		dlsym(dl, "rsmi_num_monitor_devices");
	pci_id = (rsmi_status_t (*)(uint32_t, uint64_t *))
		dlsym(dl, "rsmi_dev_pci_id_get");
	total = (rsmi_status_t (*)(uint32_t, int, uint64_t *))
		dlsym(dl, "rsmi_dev_memory_total_get");
	if (!init || !shutdown || !count || !pci_id || !total) {
		snprintf(err, errlen, "librocm_smi64.so lacks the calls "
			 "memcore uses");
		dlclose(dl);
		return -1;
	}
	if (init(0) != 0) {
		snprintf(err, errlen, "rsmi_init failed (no driver?)");
		dlclose(dl);
		return -1;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		shutdown();
		dlclose(dl);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	c->dl = dl;
	if (count(&n) != 0)
		n = 0;
	for (uint32_t i = 0; i < n && c->n < MC_MAX_GPUS; i++) {
		struct rocm_gpu *g = &c->gpu[c->n];

		if (pci_id(i, &g->bdfid) == 0 &&
		    total(i, RSMI_MEM_TYPE_VRAM, &g->vram_bytes) == 0 &&
		    g->vram_bytes)
			c->n++;
	}
	/* Everything needed is in c: the library can go now. */
	shutdown();
	*ctxp = c;
	return 0;
}

static int rocm_memory(void *ctx, const char *bus_id, uint64_t *bytes)
{
	struct rocm_ctx *c = ctx;
	uint64_t want;

	if (mc_gpu_probe_bdfid(bus_id, &want) < 0)
		return -1;
	for (uint32_t i = 0; i < c->n; i++)
		if ((c->gpu[i].bdfid & RSMI_BDFID_MASK) == want) {
			*bytes = c->gpu[i].vram_bytes;
			return 0;
		}
	return -1;
}

static void rocm_close(void *ctx)
{
	struct rocm_ctx *c = ctx;

	dlclose(c->dl);
	free(c);
}

const struct mc_gpu_probe_backend mc_gpu_probe_rocm = {
	"ROCm SMI", MC_VENDOR_AMD, MC_MEM_SRC_RSMI,
	rocm_open, rocm_memory, rocm_close, NULL,
};

/* ------------------------------------------------------------ fill --- */

static bool serves(const struct mc_gpu *g, const struct mc_gpu_probe_backend *b)
{
	return g->vendor_id == b->vendor_id || g->vendor_id == 0;
}

static bool wants(const struct mc_gpu *g, const struct mc_gpu_probe_backend *b)
{
	return !g->memory_bytes && serves(g, b);
}

/* Append the MIG slices of GPU i (its parent) to f->mig. */
static void add_slices(struct mc_node_facts *f, uint32_t i,
		       const struct mc_gpu_probe_backend *be, void *ctx)
{
	unsigned n = 0;

	if (f->n_mig >= MC_MAX_MIG ||
	    be->slices(ctx, f->gpus[i].pci_bus_id, &f->mig[f->n_mig],
		       MC_MAX_MIG - f->n_mig, &n) < 0)
		return;
	for (unsigned k = 0; k < n; k++)
		f->mig[f->n_mig + k].parent = (uint16_t)i;
	f->n_mig += n;
}

/* Append "NAME: what" to note, "; "-separated. */
static void add_note(char *note, size_t notelen, const char *name,
		     const char *what, const char *bus_id)
{
	size_t used;

	if (!note || !notelen)
		return;
	used = strlen(note);
	if (used < notelen)
		snprintf(note + used, notelen - used, "%s%s: %s%s",
			 used ? "; " : "", name, what, bus_id ? bus_id : "");
}

unsigned mc_gpu_probe_fill(struct mc_node_facts *f,
			const struct mc_gpu_probe_backend *const *backends,
			size_t n_backends, char *note, size_t notelen)
{
	unsigned filled = 0;

	if (note && notelen)
		note[0] = '\0';
	for (size_t b = 0; b < n_backends; b++) {
		const struct mc_gpu_probe_backend *be = backends[b];
		char err[160] = "";
		void *ctx = NULL;
		bool needed = false;

		for (uint32_t i = 0; i < f->n_gpus && !needed; i++)
			needed = wants(&f->gpus[i], be) ||
				 (be->slices && serves(&f->gpus[i], be));
		if (!needed)
			continue;
		if (be->open(&ctx, err, sizeof(err)) < 0) {
			/* Only worth a note when a GPU of its own vendor
			 * needed it (an unknown vendor may be the other's). */
			for (uint32_t i = 0; i < f->n_gpus; i++)
				if (!f->gpus[i].memory_bytes &&
				    f->gpus[i].vendor_id == be->vendor_id) {
					add_note(note, notelen, be->name, err,
						 NULL);
					break;
				}
			continue;
		}
		for (uint32_t i = 0; i < f->n_gpus; i++) {
			struct mc_gpu *g = &f->gpus[i];
			uint64_t bytes = 0;

			if (!wants(g, be))
				continue;
			if (be->memory(ctx, g->pci_bus_id, &bytes) == 0 &&
			    bytes) {
				g->memory_bytes = bytes;
				g->memory_source = be->source;
				filled++;
			} else if (g->vendor_id == be->vendor_id) {
				add_note(note, notelen, be->name,
					 "does not know GPU ", g->pci_bus_id);
			}
		}
		for (uint32_t i = 0; be->slices && i < f->n_gpus; i++)
			if (serves(&f->gpus[i], be))
				add_slices(f, i, be, ctx);
		be->close(ctx);
	}
	return filled;
}

unsigned mc_gpu_probe_fill_default(struct mc_node_facts *f, char *note,
				size_t notelen)
{
	static const struct mc_gpu_probe_backend *const all[] = {
		&mc_gpu_probe_nvml, &mc_gpu_probe_rocm,
	};

	return mc_gpu_probe_fill(f, all, 2, note, notelen);
}
