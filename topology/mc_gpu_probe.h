/*
 * mc_gpu_probe.h - GPU memory from the vendor's management library, for GPUs
 * whose memory the hwloc topology lacks (Debian's hwloc has no CUDA or
 * ROCm SMI backend, so a live NVIDIA or AMD node usually shows none).
 *
 * Only slurmd (once, at its start, for the node-facts cache) and the
 * memcore command call this: loading NVML takes from milliseconds to
 * seconds and may touch the GPUs, which no step launch should wait for.
 * The libraries are dlopen()ed, so memcore neither links nor depends on
 * them; a node without them keeps the memory unknown and the policy's
 * GpuMemory applies.
 *
 * Each library sits behind a struct of function pointers (a backend), so
 * that unit tests drive mc_gpu_probe_fill() with fake answers.
 */
#ifndef MC_GPU_PROBE_H
#define MC_GPU_PROBE_H

#include <stddef.h>
#include <stdint.h>

#include "mc_topology.h"

struct mc_gpu_probe_backend {
	const char *name;		/* "NVML", "ROCm SMI": for messages */
	uint16_t vendor_id;		/* PCI vendor of the GPUs it knows */
	enum mc_mem_source source;	/* recorded for the GPUs it fills */
	/* Start the library; 0, or -1 with err set (absent, no driver).
	 * *ctx is the backend's, handed to memory() and close(). */
	int (*open)(void **ctx, char *err, size_t errlen);
	/* Total memory of the GPU at this PCI bus id ("0000:06:00.0");
	 * 0, or -1 when the library does not know that device. */
	int (*memory)(void *ctx, const char *pci_bus_id, uint64_t *bytes);
	/* Stop the library, free ctx. Called once after a successful open. */
	void (*close)(void *ctx);
	/* NVIDIA MIG: the slices of the GPU at this bus id, in the
	 * library's order, each with its memory and its profile ("1g.10gb",
	 * "" unknown; parent is set by the caller); *n = 0 when MIG is off.
	 * 0, or -1 when the library does not know the device. NULL for a
	 * library without MIG. A backend with it is opened for every GPU of
	 * its vendor, not only for GPUs without memory. */
	int (*slices)(void *ctx, const char *pci_bus_id, struct mc_mig *out,
		      unsigned max, unsigned *n);
};

/* The real backends: libnvidia-ml.so.1 and librocm_smi64.so. */
extern const struct mc_gpu_probe_backend mc_gpu_probe_nvml;
extern const struct mc_gpu_probe_backend mc_gpu_probe_rocm;

/*
 * Fill in the memory of f's GPUs that have none (memory_bytes 0), from
 * the backends in order: a backend serves the GPUs of its vendor (and of
 * an unknown vendor 0x0000), matched by PCI bus id, and is opened only
 * when such a GPU lacks memory, or, for a backend with slices(), when the
 * node has a GPU of its vendor. The MIG slices it reports go to f->mig[]
 * (f->n_mig), card by card in PCI order, each with its parent card: with
 * MIG on, Slurm's GPU indices count slices (mc_topology_slurm_gpus()).
 * Returns how many GPUs got their memory.
 * note (may be NULL) receives a line for the log when a backend that
 * was needed could not be opened or did not know a GPU, else "".
 */
unsigned mc_gpu_probe_fill(struct mc_node_facts *f,
			const struct mc_gpu_probe_backend *const *backends,
			size_t n_backends, char *note, size_t notelen);

/* mc_gpu_probe_fill() with NVML, then ROCm SMI. */
unsigned mc_gpu_probe_fill_default(struct mc_node_facts *f, char *note,
				size_t notelen);

/*
 * Parse "DDDD:BB:DD.F" (hex; a domain of up to 8 digits, as NVML prints
 * it) into ROCm SMI's BDF id: domain << 32 | bus << 8 | device << 3 |
 * function. Returns 0, or -1 when it is not a bus id.
 */
int mc_gpu_probe_bdfid(const char *pci_bus_id, uint64_t *bdfid);

#endif
