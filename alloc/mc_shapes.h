/*
 * mc_shapes.h - a partition's nodes as slurmctld describes them, grouped
 * by shape, so that a request is judged once per kind of node.
 *
 * Pure C on plain data: the records come from libslurm in the memcore
 * command (cli/mc_slurmctld.c) or from a test table; nothing here calls
 * Slurm, allocates or does I/O.
 */
#ifndef MC_SHAPES_H
#define MC_SHAPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mc_config.h"
#include "mc_gpu_memory.h"
#include "mc_rules.h"

#define MC_NODE_NAME_MAX 64

/* One node as slurm.conf / slurmctld knows it. */
struct mc_node_record {
	char name[MC_NODE_NAME_MAX];
	uint64_t ram_bytes;		/* RealMemory (MB) in bytes */
	uint32_t cores;			/* Sockets x CoresPerSocket */
	uint32_t threads_per_core;	/* ThreadsPerCore (>= 1) */
	uint32_t sockets;		/* Sockets (0 unknown); for
					 * --gpus-per-socket */
	uint32_t gpus;			/* GPUs in Gres=gpu[:type]:N */
	char gpu_type[MC_GPU_TYPE_NAME_MAX];	/* "" when untyped; the
						 * first type when mixed */
	uint32_t shards, mps;		/* Gres=...,shard:N / mps:N (0 none) */
};

/*
 * The count of one GRES name in a node's Gres string: "shard" in
 * "gpu:8,shard:64" is 64, summed over entries ("shard:a100:32,shard:32"),
 * "(S:...)" ignored. Returns 0 with *count (0 when absent), or -1 when an
 * entry's count cannot be read.
 */
int mc_gres_count(const char *gres, const char *name, uint32_t *count);

/*
 * The GPUs of a node's Gres string as slurmctld prints it:
 * "gpu:h100:8(S:0-1)", "gpu:4", "gpu:a100:2,gpu:a100:2", "gpu" (one),
 * "gpu:h100:8(S:0-1),nic:1". Sums every gpu entry into *count and puts the
 * first entry's type in type[typelen] ("" when untyped). NULL or "(null)"
 * is no GPU. Returns 0, or -1 when a gpu entry's count cannot be read.
 */
int mc_gres_gpus(const char *gres, uint32_t *count, char *type,
		 size_t typelen);

/* Same RAM, cores, threads per core, GPU count and GPU type. */
bool mc_same_shape(const struct mc_node_record *a,
		   const struct mc_node_record *b);

/*
 * Group n nodes by shape: shape_of[i] is node i's shape, numbered 0.. in
 * the order each shape first appears. Returns the number of shapes.
 */
size_t mc_shapes_group(const struct mc_node_record *nodes, size_t n,
		       size_t *shape_of);


/*
 * The memory of one GPU of the node, by mc_gpu_memory() with its Gres
 * type: override (the user's --gpu-memory) when not 0, else GpuTypeMemory=
 * for its GPU type (a MIG profile type: else the memory in its name), else
 * GpuMemory=, else 0 (unknown). *source says which.
 */
uint64_t mc_shape_gpu_memory(const struct mc_policy *p,
			     const struct mc_node_record *r,
			     uint64_t override,
			     enum mc_mem_source *source);

/* The node as the rules see it. */
void mc_shape_node(const struct mc_node_record *r, struct mc_node *n);

/*
 * "8 x h100 80 GiB, 2048 GiB, 112 cores" (the type when known, the memory
 * when known; "x 2 threads" when SMT). Returns buf.
 */
const char *mc_shape_describe(const struct mc_node_record *r,
			      uint64_t gpu_memory_bytes, char *buf,
			      size_t buflen);

#endif
