/*
 * mc_decision.h - one case, built once, and the decision every caller
 * reads.
 *
 * What each caller reads differs and stays with it, because it is I/O or
 * Slurm: slurmstepd reads Slurm's grant from the step's environment and
 * items and the node's facts from its cache (spank/mc_stepd.c); memcore
 * check reads the command line or the job's own Slurm options, and a
 * topology, memcore.conf or slurmctld's node records (cli/cmd_check.c,
 * cli/check_partition.c, hence the cli_filter). What it read goes into a
 * struct mc_case and a struct mc_alloc, and from there:
 *   - mc_case_request() is the one builder of the request: memcore's
 *     options over the policy's defaults, the job's files, the GPU
 *     memory, a shared card's share, the dataset, then the check of the
 *     combination;
 *   - mc_decide() is the one decision: the judgement (mc_judge.h), what
 *     launch does with it (runs, warned, refused, unchecked), and what the
 *     step is then held to: the memory limit and the DataLoader workers
 *     every task is told. The plugin keeps it: binding (spank/mc_bind.c),
 *     enforcement (spank/mc_enforce.c) and the summary after the step
 *     (mc_used_decided, report/mc_summary.h) read it instead of working
 *     any of it out again.
 *
 * Pure C on plain data: no Slurm, no hwloc, no I/O, no allocation.
 */
#ifndef MC_DECISION_H
#define MC_DECISION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mc_config.h"
#include "mc_jobfiles.h"
#include "mc_judge.h"
#include "mc_opts.h"
#include "mc_rules.h"

/* What a caller read of one step on one node, before any rule. */
struct mc_case {
	const struct mc_opts *opts;	/* memcore's options, as the user
					 * gave them (never NULL) */
	const struct mc_jobfiles *files;	/* the job's files' figures;
						 * NULL: none */
	uint32_t gpus;			/* GPUs of the step on the node (a
					 * shared card: 1) */
	uint32_t nodes;			/* nodes of the step; 0 counts as 1 */
	uint32_t ranks;			/* tasks of the step on the node;
					 * 0: one per GPU */
	/*
	 * One GPU's memory in bytes (0: unknown), and where it came from
	 * (mc_mem_source_text; NULL: "this node"). For a shared card the
	 * whole card's: the builder sizes the share. The caller keeps the
	 * text while the decision is read.
	 */
	uint64_t gpu_memory_bytes;
	const char *gpu_memory_source;
	/*
	 * A shared card: share_kind 1 gres/shard, 2 gres/mps (0: none); the
	 * step's count (shards, or MPS percentage at launch), and the count
	 * of one GPU (0: unknown; an MPS count without one is a percentage
	 * of 100). share_from names what Slurm set at launch (e.g.
	 * "SLURM_SHARDS_ON_NODE") for the explanation's note; NULL at
	 * submission.
	 */
	uint32_t share_kind, share_count, share_per_gpu;
	const char *share_from;
	/*
	 * --dataset-in-memory without SIZE: the dataset's size in RAM as the
	 * caller measured it (dataset_measured; bytes). dataset_stage: the
	 * command that stages the job's --dataset for the fix (NULL: none).
	 */
	bool dataset_measured;
	uint64_t dataset_bytes;
	const char *dataset_stage;
};

/*
 * The request of case c on node n (its unified memory), under policy p:
 * memcore's options over p's defaults (mc_opts_request), the ranks, the
 * job's files (mc_jobfiles_apply, with its notes), the GPU memory and a
 * share's part of the card (mc_share_apply: card x count / per GPU), the
 * dataset, then the combination the user chose (mc_request_check).
 * Returns 0, or -1 with err = the user's mistake ("--offload=all needs
 * --zero-stage=3"); r is filled either way.
 */
int mc_case_request(const struct mc_policy *p, const struct mc_case *c,
		    const struct mc_node *n, struct mc_request *r, char *err,
		    size_t errlen);

/* What launch does with a step, and what the step is held to. */
struct mc_decision {
	struct mc_judgement j;		/* the verdict, its figures (with the
					 * request, node and allocation
					 * judged: j.v.req, j.v.node,
					 * j.v.alloc), its explanation */
	enum mc_launch launch;		/* mc_launch_outcome() */
	/* The line the explanation ends with (mc_launch_line(); NULL:
	 * none); each caller places it after its own lines. */
	const char *launch_line;
	bool refused;			/* launch refuses the step */
	/*
	 * The step runs held to limit_bytes (its allocation on this node):
	 * it runs (fits or warned), CgroupMemory=yes, and Slurm gave it a
	 * memory figure (mc_alloc.mem_unset false). Never for a refused or
	 * unchecked step.
	 */
	bool enforce;
	uint64_t limit_bytes;		/* 0 when not enforced */
	/* DataLoader workers per GPU, all loaders together: what every task
	 * is told (MEMCORE_DATALOADER_WORKERS) and what the cores are bound
	 * for; the judged request's, else the option's or the policy's. */
	uint32_t workers;
};

/*
 * Decide request r (mc_case_request) with allocation a on node n under
 * policy p: judge it (mc_judge; step and host name them in the
 * explanation, either may be NULL), and what launch does with it by p's
 * Mode and AllowUserWarn and user_warn (--memcore=warn).
 * dataset_refuses: NetworkDataset=refuse refuses the step's dataset
 * (mc_dataset_note): then it is refused wherever a misfit would be.
 * Never fails.
 */
void mc_decide(const struct mc_policy *p, const struct mc_request *r,
	       const struct mc_alloc *a, const struct mc_node *n,
	       bool user_warn, bool dataset_refuses, const char *step,
	       const char *host, struct mc_decision *d);

/*
 * The decision for a step that is not judged (Mode=off; a broken policy
 * under OnError=allow): it runs unchecked and unlimited, its tasks told
 * the workers of o (mc_opts_workers).
 */
void mc_decision_unchecked(const struct mc_policy *p, const struct mc_opts *o,
			   struct mc_decision *d);

/* A node judged for the audit. */
struct mc_node_judgement {
	struct mc_audit rule;		/* the node sizing rule */
	/* The full-node step: all the node's GPUs, the policy's
	 * DataloaderWorkers, no ZeRO, the whole node's memory and cores
	 * (what --exclusive --mem=0 gives), built by mc_case_request as
	 * any step is. Judged only on a GPU node. */
	struct mc_request req;
	struct mc_alloc alloc;
	struct mc_judgement step;
	/* The rule holds and the full-node step fits: the node can feed
	 * its GPUs under this policy. */
	bool ok;
};

/*
 * The audit of node n (its GPUs' memory: each M = gpu_memory_bytes, the
 * largest, and the total over its GPUs; known false when any GPU's is
 * unknown). host names the node in the step's explanation (may be NULL).
 * gpu_memory_source says where the GPU memory came from in the
 * explanation (mc_request.gpu_memory_source; NULL: "this node").
 * With unknown GPU memory the step is judged without its RAM floor and
 * the rule says unknown (ok false, as the rule has always said).
 */
void mc_judge_node(const struct mc_policy *p, const struct mc_node *n,
		   uint64_t gpu_memory_bytes, uint64_t gpu_memory_total_bytes,
		   bool gpu_memory_known, const char *gpu_memory_source,
		   const char *host, struct mc_node_judgement *out);

#endif
