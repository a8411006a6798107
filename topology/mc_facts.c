/*
 * mc_facts.c - node facts seen through a policy (see mc_facts.h).
 */
#include "mc_facts.h"

/* What the facts know of GPU `index`, for mc_gpu_memory(). */
static void gpu_in(const struct mc_node_facts *f, unsigned index,
		   uint64_t override, const char *type,
		   struct mc_gpu_memory_in *in)
{
	in->override = override;
	in->type = type;
	in->measured = 0;
	in->measured_source = MC_MEM_SRC_NONE;
	/* MIG slices are Slurm's GPUs: a slice's memory, never its card's
	 * (mc_gpu_probe.h records them from NVML); an unknown slice is not
	 * its card either. */
	in->measured_is_slice = f->n_mig != 0;
	if (f->n_mig) {
		if (index < f->n_mig && index < MC_MAX_MIG) {
			in->measured = f->mig[index].memory_bytes;
			in->measured_source = MC_MEM_SRC_NVML;
		}
	} else if (index < f->n_gpus) {
		/* 0 on PCI-only dumps, no NVML/ROCm backend in hwloc: then
		 * GpuMemory= stands in. */
		in->measured = f->gpus[index].memory_bytes;
		in->measured_source = f->gpus[index].memory_source;
	}
}

uint64_t mc_facts_gpu_memory(const struct mc_node_facts *f,
			     const struct mc_policy *p, unsigned index,
			     enum mc_mem_source *source)
{
	struct mc_gpu_memory_in in;

	gpu_in(f, index, 0, NULL, &in);
	return mc_gpu_memory(p, &in, source);
}

uint64_t mc_facts_step_gpu_memory(const struct mc_node_facts *f,
				  const struct mc_policy *p,
				  const unsigned *idx, size_t n)
{
	return mc_facts_step_gpu_memory_for(f, p, idx, n, 0, NULL, NULL);
}

uint64_t mc_facts_step_gpu_memory_for(const struct mc_node_facts *f,
				      const struct mc_policy *p,
				      const unsigned *idx, size_t n,
				      uint64_t override, const char *type,
				      enum mc_mem_source *source)
{
	struct mc_gpu_memory_in in;
	enum mc_mem_source src = MC_MEM_SRC_NONE, s;
	uint64_t largest = 0;
	size_t count = n ? n : mc_topology_slurm_gpus(f);

	if (source)
		*source = MC_MEM_SRC_NONE;
	if (!count) {	/* a node without GPUs in its topology */
		uint64_t m;

		gpu_in(f, 0, override, type, &in);
		m = mc_gpu_memory(p, &in, &s);
		if (source)
			*source = m ? s : MC_MEM_SRC_NONE;
		return m;
	}
	for (size_t i = 0; i < count; i++) {
		uint64_t m;

		gpu_in(f, n ? idx[i] : (unsigned)i, override, type, &in);
		m = mc_gpu_memory(p, &in, &s);

		if (!m)	/* one unknown GPU makes the floor unknown */
			return 0;
		if (m > largest) {
			largest = m;
			src = s;
		}
	}
	if (source)
		*source = src;
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

void mc_facts_judge(const struct mc_node_facts *f, const struct mc_policy *p,
		    struct mc_node *node, struct mc_node_judgement *nj)
{
	uint64_t total = 0, largest = 0;
	enum mc_mem_source src = MC_MEM_SRC_NONE, s;
	static char from[96];	/* read by the explanation, made here */
	bool known = true;

	mc_facts_node(f, p, node);
	for (unsigned i = 0; i < node->gpus; i++) {
		uint64_t m = mc_facts_gpu_memory(f, p, i, &s);

		if (!m)
			known = false;
		total += m;
		if (m > largest) {
			largest = m;
			src = s;
		}
	}
	/* The audited node's own figure is "this node"'s; one from
	 * memcore.conf is named as such. */
	mc_judge_node(p, node, largest, total, known,
		      mc_mem_source_text(known ? src : MC_MEM_SRC_NONE, NULL,
					 NULL, from, sizeof(from)), NULL, nj);
}
