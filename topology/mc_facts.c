/*
 * mc_facts.c - node facts seen through a policy (see mc_facts.h).
 */
#include "mc_facts.h"

uint64_t mc_facts_gpu_memory(const struct mc_node_facts *f,
			     const struct mc_policy *p, unsigned index,
			     enum mc_mem_source *source)
{
	enum mc_mem_source src = MC_MEM_SRC_NONE;
	uint64_t bytes = 0;

	if (f->n_mig) {
		/* MIG slices are Slurm's GPUs: a slice's memory, never its
		 * card's (mc_gpumem.h records them from NVML). */
		if (index < f->n_mig && index < MC_MAX_MIG &&
		    f->mig[index].memory_bytes) {
			bytes = f->mig[index].memory_bytes;
			src = MC_MEM_SRC_NVML;
		} else if (p->gpu_memory_bytes) {
			bytes = p->gpu_memory_bytes;
			src = MC_MEM_SRC_POLICY;
		}
	} else if (index < f->n_gpus && f->gpus[index].memory_bytes) {
		bytes = f->gpus[index].memory_bytes;
		src = f->gpus[index].memory_source;
	} else if (p->gpu_memory_bytes) {
		/* GpuMemory= stands in for what the topology cannot tell
		 * (PCI-only dumps, no NVML/ROCm backend in hwloc). */
		bytes = p->gpu_memory_bytes;
		src = MC_MEM_SRC_POLICY;
	}
	if (source)
		*source = src;
	return bytes;
}

uint64_t mc_facts_step_gpu_memory(const struct mc_node_facts *f,
				  const struct mc_policy *p,
				  const unsigned *idx, size_t n)
{
	uint64_t largest = 0;
	size_t count = n ? n : mc_topology_slurm_gpus(f);

	if (!count)	/* a node without GPUs in its topology */
		return mc_facts_gpu_memory(f, p, 0, NULL);
	for (size_t i = 0; i < count; i++) {
		uint64_t m = mc_facts_gpu_memory(f, p,
						 n ? idx[i] : (unsigned)i,
						 NULL);

		if (!m)	/* one unknown GPU makes the floor unknown */
			return 0;
		if (m > largest)
			largest = m;
	}
	return largest;
}

void mc_facts_node(const struct mc_node_facts *f, const struct mc_policy *p,
		   struct mc_node *n)
{
	n->ram_bytes = p->node_ram_bytes ? p->node_ram_bytes
					 : f->host_ram_bytes;
	n->cores = p->node_cores ? p->node_cores : f->cores;
	n->threads_per_core = (f->cores && f->pus >= f->cores)
			      ? f->pus / f->cores : 1;
	n->gpus = p->node_gpus ? p->node_gpus : mc_topology_slurm_gpus(f);
	n->unified_memory = mc_facts_unified(f, p);
}

bool mc_facts_unified(const struct mc_node_facts *f,
		      const struct mc_policy *p)
{
	if (p->unified_memory != MC_UNIFIED_AUTO)
		return p->unified_memory == MC_UNIFIED_YES;
	for (uint32_t i = 0; i < f->n_gpus && i < MC_MAX_GPUS; i++)
		if (f->gpus[i].apu)
			return true;
	return false;
}

void mc_facts_audit(const struct mc_node_facts *f, const struct mc_policy *p,
		    struct mc_audit *a)
{
	struct mc_node node;
	uint64_t total = 0;
	bool known = true;

	mc_facts_node(f, p, &node);
	for (unsigned i = 0; i < node.gpus; i++) {
		uint64_t m = mc_facts_gpu_memory(f, p, i, NULL);

		if (!m)
			known = false;
		total += m;
	}
	mc_audit_node(p, &node, total, known, a);
}
