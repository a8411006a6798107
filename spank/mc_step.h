/*
 * mc_step.h - what a step got on this node, as slurmstepd tells a SPANK
 * plugin: GPUs (from Slurm's variables, never from an inherited
 * CUDA_VISIBLE_DEVICES), memory (S_STEP_ALLOC_MEM, else S_JOB_ALLOC_MEM; MB;
 * with no --mem Slurm gives the node's RealMemory), cores
 * (S_STEP_ALLOC_CORES: Slurm's core list, cores not CPUs).
 */
#ifndef MC_STEP_H
#define MC_STEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <slurm/spank.h>

#include "mc_config.h"
#include "mc_decision.h"
#include "mc_rules.h"
#include "mc_topology.h"

#define MC_HET_MAX 32		/* components of a heterogeneous job read */

/* What the step got on this node, read from Slurm. */
struct mc_step {
	uint32_t job_id, step_id;
	uint32_t uid, gid;		/* the job's user (S_JOB_UID/GID) */
	int task_id;			/* local task id */
	char host[64];
	char partition[MC_PARTITION_NAME_MAX];
	uint32_t gpus;
	unsigned gpu_idx[MC_MAX_GPUS];
	int n_gpu_idx;			/* -1: no index list */
	uint32_t nodes;			/* this step's (component's) nodes */
	uint32_t het_job_id[MC_HET_MAX];/* a step of a heterogeneous job:
					 * the components' job ids */
	uint32_t n_het;			/* 0: not heterogeneous */
	bool het_checked;		/* het_job_id and n_het are
					 * slurmctld's (mc_step_het_check) */
	uint64_t mem_mb;		/* 0: whole node */
	int cores, job_cores;		/* -1: unknown */
	char mem_source[96];
	enum mc_mem_form mem_form;	/* the option mem_source names */
	char step_name[48];		/* "1234.0", "1234.batch" */
	uint32_t tasks;			/* tasks of the step on this node
					 * (S_JOB_LOCAL_TASK_COUNT), 0 unknown */
	/* A shared GPU: --gres=shard:N (SLURM_SHARDS_ON_NODE, Slurm 22.05+)
	 * or --gres=mps:N (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE, the share in
	 * percent of the card that gres/mps sets). */
	uint32_t shards;		/* 0: not a shard step */
	bool share_gpu;			/* the step's one GPU is its shards'
					 * (none from Slurm's GPU variables):
					 * whether gres/shard gave them is
					 * mc_shards_per_gpu's (mc_stepd.c) */
	uint32_t mps_percent;		/* 0: not an MPS step */
	/* A value only the job's environment can have made (a malformed
	 * SLURM_SHARDS_ON_NODE on a GPU step): the user's error, refused
	 * under any OnError; "" none. */
	char user_err[256];
};

/* The longest job variable memcore reads whole (Linux takes at most
 * 128 KiB per environment string at exec); a longer one is an error. */
#define MC_ENV_VALUE_READ_MAX (1u << 20)

/*
 * The job's variable `name` in remote context, of any length up to
 * MC_ENV_VALUE_READ_MAX (spank_getenv with a growing buffer: a fixed one
 * fails on a long value, which must never read as unset). Returns 1 with
 * *val malloc'd (the caller frees it), 0 when unset or empty (*val NULL),
 * -1 with err set ("NAME: value longer than ...", no memory).
 */
int mc_step_getenv(spank_t sp, const char *name, char **val, char *err,
		   size_t len);

/*
 * Read the step in remote context (any callback from user_init on).
 * Returns 0, or -1 with err set when Slurm's view of the step's GPUs is
 * malformed (the struct is still filled as far as it could be). A value
 * only the job could have written is no failure: s->user_err. The
 * partition is left "": it is not the environment's to say (mc_jobview.h).
 */
int mc_step_read(spank_t sp, struct mc_step *s, char *err, size_t len);

/* Only the GPUs, into s->gpus, s->gpu_idx and s->n_gpu_idx (s->step_id
 * set): in task_init, where --gpus-per-task shows each task its own.
 * 0, or -1 with err set as mc_step_read. */
int mc_step_read_gpus(spank_t sp, struct mc_step *s, char *err, size_t len);

/*
 * The nth (0-based) host of a Slurm hostlist expression such as
 * "gpu[01-04,07],login1" into buf. Returns 0, or -1 when the list is
 * malformed or shorter. In mc_nodes.c (libslurm's hostlist).
 */
int mc_hostlist_nth(const char *list, uint32_t n, char *buf, size_t len);

/*
 * The components of the step's heterogeneous job, from slurmctld: the job
 * environment only says whether to ask (SLURM_HET_SIZE and
 * SLURM_JOB_ID_HET_GROUP_<k> are the user's to set, and Slurm gives a
 * SPANK plugin no item for them in 22.05, 24.11 or 26.05). slurmctld's
 * record of the step's own job (het_job_id, het_job_id_set) replaces
 * het_job_id and n_het; a job slurmctld does not call heterogeneous, or no
 * answer, leaves n_het 0: the step is this job's alone. Sets het_checked.
 * An RPC: called for refused steps only, never on the launch path of one
 * that runs. In mc_nodes.c.
 */
void mc_step_het_check(struct mc_step *s);

/*
 * A step refused here that runs on several nodes is ended on all of them
 * (slurm_kill_job_step, SIGKILL, after MC_STEP_END_DELAY_MS): its tasks on
 * the nodes where it fits would start and wait for ranks that never come.
 * A step of a heterogeneous job is ended in every component (its step id
 * is the same in each; the job's step ids are unique across components).
 * The components are slurmctld's (mc_step_het_check, asked here when it
 * was not yet), never the job environment's. The request goes out as the
 * job's user, never as root, so it can only reach steps the user could
 * cancel anyway. The calling process
 * becomes that user for good: call it only from a refused task, last.
 * Called by local task 0 of a refusing node; never for the batch step,
 * whose failure ends the job anyway. In mc_nodes.c.
 */
#define MC_STEP_END_DELAY_MS 200
void mc_step_end_everywhere(const struct mc_step *s);

/* true for the steps memcore leaves alone: the extern step, no GPUs. */
bool mc_step_ignored(const struct mc_step *s);

/*
 * What the step got on this node, as a case for the one builder
 * (mc_decision.h): its GPUs, nodes and tasks here, and a shared card's
 * share as Slurm set it (gres/shard: SLURM_SHARDS_ON_NODE, its count per
 * GPU left 0 for the caller, who knows the node's; gres/mps:
 * CUDA_MPS_ACTIVE_THREAD_PERCENTAGE, out of 100). The options, files,
 * GPU memory and dataset are the caller's to add. Pure: no Slurm call.
 */
void mc_step_case(const struct mc_step *s, struct mc_case *c);

/*
 * Slurm's grant to the step on node n, for the decision: its memory
 * (bytes; no figure: the node's RAM, mem_unset), cores (unknown: the
 * node's), the job's cores here, and the option the memory was asked
 * with. Pure: no Slurm call.
 */
void mc_step_alloc(const struct mc_step *s, const struct mc_node *n,
		   struct mc_alloc *a);

#endif
