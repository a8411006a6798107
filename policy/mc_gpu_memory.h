/*
 * mc_gpu_memory.h - the memory M of one GPU, from wherever memcore can
 * learn it, and where it came from: the one resolver that the plugin
 * (node facts), memcore check (facts or slurmctld's node shapes) and
 * memcore audit all use, with one source enum. Pure C: no I/O.
 */
#ifndef MC_GPU_MEMORY_H
#define MC_GPU_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mc_config.h"

/* Where a GPU's memory figure came from. */
enum mc_mem_source {
	MC_MEM_SRC_NONE = 0,	/* unknown */
	MC_MEM_SRC_CUDA,	/* hwloc CUDAGlobalMemorySize */
	MC_MEM_SRC_RSMI,	/* hwloc RSMIVRAMSize */
	MC_MEM_SRC_NVML,	/* read from NVML (slurmd) */
	MC_MEM_SRC_POLICY,	/* memcore.conf GpuMemory= */
	MC_MEM_SRC_OPTION,	/* the user's --gpu-memory */
	MC_MEM_SRC_GPU_TYPE,	/* memcore.conf GpuTypeMemory= for the type */
	MC_MEM_SRC_MIG_PROFILE,	/* the type is a MIG profile (1g.10gb) */
};

/* "none", "cuda", "rsmi", "nvml", "policy", "option", "GpuTypeMemory",
 * "MIG profile" (audit's per-GPU memory_source). */
const char *mc_mem_source_name(enum mc_mem_source s);

/* The same, naming memcore.conf's key for the policy's figures:
 * "GpuMemory" for MC_MEM_SRC_POLICY (check --partition's
 * gpu_memory_source, which only ever has the policy's keys). */
const char *mc_mem_source_key(enum mc_mem_source s);

/*
 * Where M came from, as the explanation's GPU line says it ("GPUs  8 x 80
 * GiB (SOURCE)"), into buf: "--gpu-memory", "memcore.conf GpuMemory=",
 * "memcore.conf GpuTypeMemory= for h100", "MIG profile 1g.10gb", and for
 * a figure measured on the node itself (CUDA, RSMI, NVML) measured_on:
 * "this node" in slurmstepd (NULL says that), the topology file or "this
 * host" for the memcore command; "no GpuTypeMemory= or GpuMemory=" when
 * unknown. Never "this node" for a figure the node did not give: at
 * submission there is no "this node". type may be NULL. Returns buf.
 */
const char *mc_mem_source_text(enum mc_mem_source s, const char *type,
			       const char *measured_on, char *buf,
			       size_t len);

/* What is known of one GPU. */
struct mc_gpu_memory_in {
	uint64_t override;		/* the user's --gpu-memory; 0 none */
	uint64_t measured;		/* the node's own figure; 0 none */
	enum mc_mem_source measured_source;	/* CUDA, RSMI or NVML */
	bool measured_is_slice;		/* measured is a MIG slice's (NVML) */
	const char *type;		/* the Gres type / asked type; may be
					 * NULL or "" */
};

/*
 * M for one GPU, in this order (the first known wins):
 *  1. override (the user's --gpu-memory),
 *  2. a measured MIG slice (NVML: Slurm's GPU is the slice),
 *  3. with a type that is a MIG profile: GpuTypeMemory= for it, else the
 *     memory in its name (1g.10gb: a slice, not its card),
 *  4. the measured card (hwloc CUDA/RSMI, NVML),
 *  5. GpuTypeMemory= for the type (slurmctld's Gres type; the login host
 *     has no card to measure),
 *  6. GpuMemory= (the partition's line, else the global one),
 *  7. 0 (unknown).
 * *source (may be NULL) says which.
 */
uint64_t mc_gpu_memory(const struct mc_policy *p,
		       const struct mc_gpu_memory_in *in,
		       enum mc_mem_source *source);

#endif
