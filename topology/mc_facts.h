/*
 * mc_facts.h - node facts (mc_topology.h) seen through a policy: the GPU
 * memory to use for each GPU, the node summary the rules take, the audit.
 * The same functions serve slurmstepd and the memcore command, so both give
 * the same answer for the same node. No allocation, no I/O.
 */
#ifndef MC_FACTS_H
#define MC_FACTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mc_config.h"
#include "mc_decision.h"
#include "mc_rules.h"
#include "mc_topology.h"

/*
 * Memory of GPU `index` (Slurm index) in bytes, by mc_gpu_memory(): the
 * topology's value when it has one, else the policy's GpuMemory (source
 * MC_MEM_SRC_POLICY), else 0 (MC_MEM_SRC_NONE). An index past the node's GPUs counts as unknown.
 */
uint64_t mc_facts_gpu_memory(const struct mc_node_facts *f,
			     const struct mc_policy *p, unsigned index,
			     enum mc_mem_source *source);

/*
 * The memory M of one GPU for a step that holds the GPUs `idx[0..n)`:
 * the largest of them (a step is sized for its biggest GPU), or, with no
 * index list (n = 0), the largest on the node. 0 when any is unknown.
 */
uint64_t mc_facts_step_gpu_memory(const struct mc_node_facts *f,
				  const struct mc_policy *p,
				  const unsigned *idx, size_t n);

/*
 * The same, with what the user's request adds: override (--gpu-memory,
 * 0 none) and type (--gpu-type, a MIG profile sizes a slice; may be NULL),
 * resolved per GPU by mc_gpu_memory(). *source (may be NULL): where the
 * largest GPU's figure came from (MC_MEM_SRC_NONE when 0).
 */
uint64_t mc_facts_step_gpu_memory_for(const struct mc_node_facts *f,
				      const struct mc_policy *p,
				      const unsigned *idx, size_t n,
				      uint64_t override, const char *type,
				      enum mc_mem_source *source);

/*
 * The node as the rules see it: RAM, cores, threads per core and GPUs from
 * the facts, each replaced by the policy's NodeRam/NodeCores/NodeGpus when
 * set (login hosts that describe a partition's nodes).
 */
void mc_facts_node(const struct mc_node_facts *f, const struct mc_policy *p,
		   struct mc_node *n);

/*
 * Whether the node's GPU memory is its host RAM (UnifiedMemory=yes, or
 * =auto and a GPU of the node is an APU by PCI id, mc_pci_is_apu()): one
 * pool that the GPUs' working set, the DataLoader workers and the tasks
 * share. NVIDIA Grace Hopper is not: its HBM is the GPU's own, next to
 * the Grace CPU's LPDDR (memcore.conf(5)).
 */
bool mc_facts_unified(const struct mc_node_facts *f,
		      const struct mc_policy *p);

/*
 * The audit of the node of facts f under policy p, the one slurmd says at
 * its start and memcore audit prints (mc_judge_node): the node as the
 * rules see it (memcore.conf's Node* keys over the facts) into *node, the
 * sizing rule on its GPUs' total memory and the full-node step at the
 * largest GPU's (its memory from this node, or named from memcore.conf)
 * into *nj. The explanation's memory source is static text: keep nj while
 * it is read, and call it from one thread.
 */
void mc_facts_judge(const struct mc_node_facts *f, const struct mc_policy *p,
		    struct mc_node *node, struct mc_node_judgement *nj);

#endif
