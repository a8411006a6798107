/*
 * mc_cli_ask.h - what a job asks of one kind of node, and what that node
 * grants it: the part memcore check (cmd_check.c) and its --partition
 * answer (check_partition.c) share, below both, so that the partition's
 * judge asks it directly instead of calling back into the command.
 *
 * Two sources, as memcore check takes them: the command line's figures
 * (--cpus/--cpus-per-gpu/--cpus-per-task or --cores, --mem/--mem-per-gpu/
 * --mem-per-cpu, --gpu-type), or the job's own Slurm options
 * (--slurm-options), which Slurm's model in alloc/ (mc_slurm_alloc)
 * turns into a grant with the partition's defaults.
 */
#ifndef MC_CLI_ASK_H
#define MC_CLI_ASK_H

#include <stdbool.h>
#include <stdint.h>

#include "mc_decision.h"
#include "mc_slurm_alloc.h"
#include "mc_slurmctld.h"

/* Which CPU option gave cpus: --cpus, --cpus-per-gpu, --cpus-per-task. */
enum mc_ask_cpus {
	MC_ASK_CPUS = 0,
	MC_ASK_CPUS_PER_GPU,
	MC_ASK_CPUS_PER_TASK,
};

/* Which memory option gave mem_bytes: --mem, --mem-per-gpu, --mem-per-cpu. */
enum mc_ask_mem {
	MC_ASK_MEM = 0,
	MC_ASK_MEM_PER_GPU,
	MC_ASK_MEM_PER_CPU,
};

struct mc_cli_ask {
	/* The job's Slurm options (job; part: the partition's defaults when
	 * no slurmctld answers, else nodes->part) rather than the figures
	 * below. */
	bool slurm;
	struct mc_slurm_job job;
	struct mc_slurm_part part;
	/* The command line's figures; *_set: given. */
	const char *gpu_type;		/* --gpu-type, NULL none */
	uint32_t gpus, tasks;		/* tasks 0: one */
	uint32_t cpus, cores, job_cores;
	bool cpus_set, cores_set, mem_set;
	enum mc_ask_cpus cpus_form;
	enum mc_ask_mem mem_form;
	uint64_t mem_bytes;		/* bytes; 0 with mem_set: whole node */
	char mem_source[96];		/* the option as given: "--mem=64G" */
};

/* What one kind of node grants a request (mc_cli_ask_alloc's answer). */
struct mc_cli_grant {
	struct mc_alloc alloc;
	char mem_source[96];		/* alloc.mem_source points here */
	/* No candidate: why; a candidate: the placement line
	 * ("  placement: ..."), "" none. */
	char why[200];
	/* The step's GPUs on a node do not depend on the node (an upper
	 * bound of unseen nodes can then be judged). */
	bool gpus_fixed;
	/* What Slurm allocates the job on a node of the shape, as the job's
	 * own options give it (--slurm-options: mc_slurm_grant's gpus,
	 * tasks, cpus in threads); has_job false for plain check options,
	 * whose grant is the step's only. The shapes' "grant" in --json
	 * (memcore(8)), compared with slurmctld's allocation by
	 * tests/integration/test_63_oracle.sh. */
	bool has_job;
	uint32_t job_gpus, job_tasks, job_cpus;
};

/*
 * What q asks of one kind of node: the grant g, and the step's GPUs on
 * that node into c->gpus (the case the request is then built from,
 * mc_decision.h). The command line's figures: cores from cpus (threads,
 * counted in whole cores on SMT nodes as Slurm does) or cores, else the
 * whole node; memory from mem_bytes by mem_form, else the whole node;
 * --gpu-type narrows a partition's nodes as Slurm does. Slurm options:
 * mc_slurm_alloc. Returns false when the node is no candidate for the
 * job at all (a GPU type it does not have), with g->why set. rec NULL:
 * the one node described (node), nodes NULL.
 */
bool mc_cli_ask_alloc(const struct mc_cli_ask *q,
		      const struct mc_ctld_nodes *nodes,
		      const struct mc_node_record *rec,
		      const struct mc_node *node, struct mc_case *c,
		      struct mc_cli_grant *g);

#endif
