/*
 * mc_limits.h - the largest figures memcore takes anywhere, in one place so
 * that an option, a memcore.conf key and the node facts agree.
 */
#ifndef MC_LIMITS_H
#define MC_LIMITS_H

#include <stdint.h>

/* GPUs on one node: the node facts hold this many (mc_topology.h), so
 * --gpus, NodeGpus= and Slurm's step GPU count stop here too. */
#define MC_MAX_GPUS 64
/* Cores on one node (ReservedCores=, MinCoresPerGpu=, NodeCores=): keeps
 * the rules' products far from overflow. */
#define MC_MAX_CORES (1U << 20)
/* The most DataLoader workers per GPU any option or key accepts; keeps every
 * product g * (w + 1) and g * w * RamPerWorker far from overflow. */
#define MC_WORKERS_LIMIT 1024
/* The largest size a key takes: 1 PiB keeps g * w * RamPerWorker inside
 * 64 bits. */
#define MC_SIZE_MAX_BYTES ((uint64_t)1 << 50)

#endif
