/*
 * mc_cli_ask.c - what a job asks of one kind of node (mc_cli_ask.h).
 */
#include <stdio.h>
#include <string.h>

#include "mc_cli_ask.h"
#include "mc_util.h"

/* The command line's figures on a node like `node`. */
static bool figures_alloc(const struct mc_cli_ask *a,
			  const struct mc_node_record *rec,
			  const struct mc_node *node, struct mc_cli_grant *g)
{
	struct mc_alloc *alloc = &g->alloc;
	uint32_t tpc = node->threads_per_core ? node->threads_per_core : 1;
	uint64_t cpus = 0, mem = a->mem_bytes;

	g->gpus_fixed = true;
	/* --gpu-type narrows a partition's nodes as Slurm does: only
	 * nodes of that type are candidates (a described node, rec NULL,
	 * is taken as the type asked). */
	if (rec && mc_slurm_type_excludes(a->gpu_type, rec->gpu_type, g->why,
					  sizeof(g->why)))
		return false;
	memset(alloc, 0, sizeof(*alloc));
	alloc->requested = true;
	alloc->job_cores = a->job_cores;
	if (a->cpus_set) {
		cpus = a->cpus;
		if (a->cpus_form == MC_ASK_CPUS_PER_GPU)
			cpus = mc_mul_sat64(a->cpus, a->gpus);
		else if (a->cpus_form == MC_ASK_CPUS_PER_TASK)
			cpus = mc_mul_sat64(a->cpus, a->tasks ? a->tasks : 1);
		cpus = (cpus + tpc - 1) / tpc;
		alloc->cores = cpus > UINT32_MAX ? UINT32_MAX : (uint32_t)cpus;
	} else {
		alloc->cores = a->cores_set ? a->cores : node->cores;
	}
	if (a->cpus_set && a->cpus_form == MC_ASK_CPUS_PER_TASK) {
		alloc->cpu_form = MC_CPUS_PER_TASK;
		alloc->tasks = a->tasks ? a->tasks : 1;
	}
	if (a->mem_set && a->mem_form == MC_ASK_MEM_PER_GPU) {
		mem = mc_mul_sat64(a->mem_bytes, a->gpus);
		alloc->mem_form = MC_MEM_PER_GPU;
	} else if (a->mem_set && a->mem_form == MC_ASK_MEM_PER_CPU) {
		mem = mc_mul_sat64(a->mem_bytes, (uint64_t)alloc->cores * tpc);
		alloc->mem_form = MC_MEM_PER_CPU;
	}
	alloc->mem_bytes = a->mem_set && mem ? mem : node->ram_bytes;
	alloc->mem_unset = !(a->mem_set && mem);
	if (a->mem_set) {
		snprintf(g->mem_source, sizeof(g->mem_source), "%s",
			 a->mem_source);
		alloc->mem_source = g->mem_source;
	} else {
		alloc->mem_source = "the whole node";
	}
	return true;
}

/* The job's own Slurm options: what Slurm gives it on a node of this
 * shape (mc_slurm_alloc), with the partition's defaults. */
static bool slurm_alloc(const struct mc_cli_ask *j,
			const struct mc_ctld_nodes *nodes,
			const struct mc_node_record *rec,
			const struct mc_node *node, struct mc_case *c,
			struct mc_cli_grant *out)
{
	struct mc_slurm_grant g;
	struct mc_node_record r;

	if (rec) {
		r = *rec;
	} else {
		/* One node described by memcore.conf or a topology: its GPU
		 * type is unknown, so a typed job is taken as asking it. */
		memset(&r, 0, sizeof(r));
		r.ram_bytes = node->ram_bytes;
		r.cores = node->cores;
		r.threads_per_core = node->threads_per_core;
		r.gpus = node->gpus;
		snprintf(r.gpu_type, sizeof(r.gpu_type), "%s",
			 j->job.gpu_type);
	}
	mc_slurm_alloc(&j->job, nodes ? &nodes->part : &j->part, &r, &g);
	out->gpus_fixed = g.gpus_fixed;
	out->has_job = true;
	out->job_gpus = g.gpus;
	out->job_tasks = g.tasks;
	out->job_cpus = g.cpus;
	if (g.excluded) {
		snprintf(out->why, sizeof(out->why), "%s", g.why);
		return false;
	}
	/* A shard or MPS job drives one shared card (its share sized by
	 * mc_share_apply). */
	c->gpus = g.gpus ? g.gpus : j->job.shards || j->job.mps ? 1 : 0;
	out->alloc = g.alloc;
	snprintf(out->mem_source, sizeof(out->mem_source), "%s",
		 g.mem_source);
	out->alloc.mem_source = out->mem_source;
	/* A candidate: why carries the placement line, if any. */
	snprintf(out->why, sizeof(out->why), "%s", g.placement);
	return true;
}

bool mc_cli_ask_alloc(const struct mc_cli_ask *q,
		      const struct mc_ctld_nodes *nodes,
		      const struct mc_node_record *rec,
		      const struct mc_node *node, struct mc_case *c,
		      struct mc_cli_grant *g)
{
	return q->slurm ? slurm_alloc(q, nodes, rec, node, c, g)
			: figures_alloc(q, rec, node, g);
}
