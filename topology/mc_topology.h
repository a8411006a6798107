/*
 * mc_topology.h - the facts memcore needs about a node, from hwloc 2.x:
 * the live machine or an XML file written by lstopo (v1 or v2 format).
 *
 * The product is a small plain struct (no pointers) so that slurmd can
 * compute it once and hand it to every slurmstepd.
 *
 * What counts as a GPU: a PCI device of class 0x0300 (VGA), 0x0302 (3D),
 * 0x0380 (other display, e.g. AMD MI250X GCDs) or 0x1200 (processing
 * accelerator, e.g. AMD MI300A) from NVIDIA (0x10de) or AMD (0x1002), or any
 * such device that hwloc gave a GPU/co-processor OS device (cuda, nvml,
 * rsmi, opencl), or one whose vendor id is unknown (0x0000, sysfs snapshots
 * without vendor files) but is a display-class device; never a
 * management VGA chip (ASPEED, Matrox) and never another co-processor. Each
 * PCI device counts once, whatever OS devices hang below it.
 *
 * Order: by PCI domain:bus:dev.fn, which is the order of Slurm's GPU
 * indices (gres.conf AutoDetect and the NVIDIA driver's PCI_BUS_ID order).
 *
 * GPU memory: the CUDAGlobalMemorySize or RSMIVRAMSize info attribute (KiB)
 * of an OS device under the GPU, else unknown (0, MC_MEM_SRC_NONE); the
 * caller applies the policy's GpuMemory.
 *
 * Host RAM: the sum of the NUMA nodes' local memory, leaving out NUMA nodes
 * whose subtype is "GPUMemory" and CPU-less NUMA nodes (GPU memory exposed
 * as NUMA by POWER9/NVLink hosts).
 */
#ifndef MC_TOPOLOGY_H
#define MC_TOPOLOGY_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <limits.h>

#include "mc_gpu_memory.h"
#include "mc_limits.h"

#define MC_MAX_NUMA 64
#define MC_CPULIST_MAX 512	/* "0-23,48-71": hwloc list format */
#define MC_BUSID_MAX 16		/* "0000:06:00.0" */
#define MC_MODEL_MAX 64
/* PUs whose core is recorded (OS indices 0..MC_MAX_PUS-1). hwloc numbers
 * a 2-socket 192-core SMT node up to 767; 4096 leaves room. */
#define MC_MAX_PUS 4096
#define MC_PU_NONE 0xffffu	/* pu_core[]: no such PU */
/* A NUMA node's CPUs as a bitmask of MC_MAX_PUS bits, parsed once by
 * the loader (hwloc_bitmap_from_ulongs takes it as it is). */
#define MC_CPUMASK_WORDS (MC_MAX_PUS / (8 * sizeof(unsigned long)))

/* enum mc_mem_source and its names: policy/mc_gpu_memory.h */

struct mc_numa {
	unsigned os_index;		/* NUMA node P# */
	uint64_t memory_bytes;		/* local memory */
	uint32_t cores;			/* Core objects inside its cpuset */
	int package;			/* its Package P#, -1 unknown */
	char cpus[MC_CPULIST_MAX];	/* its PUs, OS indices, list format */
	unsigned long cpu_mask[MC_CPUMASK_WORDS];	/* the same, parsed */
};

/* A MIG slice (NVIDIA Multi-Instance GPU) that Slurm schedules as a GPU. */
#define MC_MAX_MIG 128		/* 7 slices on each of 16 cards */
#define MC_MIG_PROFILE_MAX 16	/* "1g.10gb", "3g.40gb" */
struct mc_mig {
	uint16_t parent;		/* index in gpus[] of its card */
	uint64_t memory_bytes;		/* its memory, 0 unknown */
	char profile[MC_MIG_PROFILE_MAX];	/* "" when unknown */
};

struct mc_gpu {
	unsigned index;			/* Slurm index: position in PCI order */
	char pci_bus_id[MC_BUSID_MAX];	/* "0000:06:00.0" */
	uint16_t vendor_id, device_id, class_id;
	int numa_os_index;		/* NUMA node P# of the GPU, -1 unknown */
	uint64_t memory_bytes;		/* 0 = unknown */
	enum mc_mem_source memory_source;
	char model[MC_MODEL_MAX];	/* GPUModel/PCI model, may be "" */
	/* An APU: the GPU has no memory of its own and shares the host's
	 * (AMD MI300A, detected by PCI id); see mc_facts_unified(). */
	int apu;
};

struct mc_node_facts {
	char source[PATH_MAX];		/* XML path, or "live" */
	/* Host RAM without GPU-memory NUMA nodes. From an XML topology,
	 * hwloc's NUMA memory; on the live machine, the kernel's (what
	 * slurmd's RealMemory counts: _SC_PHYS_PAGES x page size, i.e.
	 * MemTotal) less the GPU-memory NUMA nodes hwloc sees. */
	uint64_t host_ram_bytes;
	/* hwloc's figure: the host NUMA nodes' memory. Equal to
	 * host_ram_bytes from XML; on the live machine it may be less than
	 * the kernel's (memory the kernel counts outside any node's
	 * meminfo), and the audit says so. */
	uint64_t hwloc_ram_bytes;
	uint32_t cores;			/* Core objects (allowed) */
	uint32_t pus;			/* PU objects (allowed) */
	uint32_t n_numa;		/* host NUMA nodes */
	struct mc_numa numa[MC_MAX_NUMA];
	uint32_t n_gpus;
	struct mc_gpu gpus[MC_MAX_GPUS];
	/* hwloc's NUMA distance matrix (relative latency, e.g. 10 local,
	 * 12 same package, 32 other package), between numa[i] and numa[j]
	 * by their position in numa[]; numa_distances 0 when the topology
	 * has none (then the Package decides nearness). */
	int numa_distances;
	uint16_t numa_distance[MC_MAX_NUMA][MC_MAX_NUMA];
	/* MIG slices from NVML (slurmd, mc_gpu_probe.h), in the order of
	 * Slurm's GPU indices when the node's GPUs are MIG slices: card by
	 * card in PCI order, slices in NVML's order. 0 = no MIG. */
	uint32_t n_mig;
	struct mc_mig mig[MC_MAX_MIG];
	/* The core each PU belongs to, named by the lowest OS index of the
	 * core's PUs; MC_PU_NONE for no such PU. Binding gives whole cores
	 * (the policy counts cores, a hyperthread shares its core's units),
	 * so it must know which PUs are siblings. Without Core objects
	 * (some hwloc 1.x dumps) each PU is its own core. */
	uint16_t pu_core[MC_MAX_PUS];
	/* Slurm's own configuration of this node as slurmd read it at its
	 * start (libslurm's gres counts; spank/mc_slurmd.c): its GPUs and
	 * its gres/shard count, 0 when unknown or none. Shards per GPU come
	 * from them (mc_shards_per_gpu()). Never set by hwloc. */
	uint32_t slurm_gpus, slurm_shards;
};

/*
 * Slurm's GPUs on this node: the MIG slices when NVML reported any (Slurm
 * schedules each slice as a GPU), else the PCI GPUs.
 */
uint32_t mc_topology_slurm_gpus(const struct mc_node_facts *f);

/*
 * NUMA node P# of Slurm GPU `index`: a MIG slice's is its parent card's.
 * -1 when unknown or past the node's GPUs.
 */
int mc_topology_gpu_numa(const struct mc_node_facts *f, unsigned index);

/*
 * Whether a GPU of this PCI vendor and device id is an APU whose memory is
 * the host's (one pool): the AMD Instinct MI300A (1002:74a0). 1 or 0.
 */
int mc_pci_is_apu(uint16_t vendor_id, uint16_t device_id);

/*
 * The short name of a GPU vendor by PCI vendor id ("NVIDIA" for 0x10de,
 * "AMD" for 0x1002, "Intel" for 0x8086), NULL for any other. Names a GPU
 * whose topology has no PCI names (hwloc 1.x dumps): "NVIDIA [10de:1db1]".
 */
const char *mc_pci_vendor_name(uint16_t vendor_id);

/*
 * Whether hwloc's NUMA memory (hwloc_ram_bytes) and the host RAM used
 * (the kernel's, on the live machine) differ by more than 1% of the
 * larger: the audit then gives both. False when hwloc gave no figure
 * (facts from slurmctld or Node* keys).
 */
bool mc_topology_ram_disagrees(const struct mc_node_facts *f);

/*
 * The kernel's RAM in bytes, as slurmd counts RealMemory:
 * sysconf(_SC_PHYS_PAGES) x sysconf(_SC_PAGESIZE) (/proc/meminfo's
 * MemTotal). 0 when unknown.
 */
uint64_t mc_kernel_ram_bytes(void);

/*
 * Load the facts of a node. xml_path NULL or "" means the live machine,
 * whose host_ram_bytes is the kernel's (mc_kernel_ram_bytes(), less any
 * GPU-memory NUMA nodes); hwloc's NUMA total is kept in hwloc_ram_bytes.
 * Sets the hwloc I/O filter to keep PCI and OS devices before loading
 * (hwloc ignores a filter set after load without an error).
 * Returns 0, or -1 with err set: "topology FILE: reason" (missing file,
 * XML hwloc cannot read, such as format 3.0, no NUMA node, too many GPUs).
 * A topology without GPUs is not an error (n_gpus = 0).
 */
int mc_topology_load(const char *xml_path, struct mc_node_facts *f,
		     char *err, size_t errlen);

#endif
