/*
 * mc_step.c - read what a step got on this node (see mc_step.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "mc_list.h"
#include "mc_parse.h"
#include "mc_step.h"

int mc_step_getenv(spank_t sp, const char *name, char **val, char *err,
		   size_t len)
{
	size_t size = 256;

	*val = NULL;
	for (;;) {
		char *buf = malloc(size);
		spank_err_t rc;

		if (!buf) {
			snprintf(err, len, "%s: out of memory", name);
			return -1;
		}
		rc = spank_getenv(sp, name, buf, (int)size);
		if (rc == ESPANK_SUCCESS) {
			if (!buf[0]) {
				free(buf);
				return 0;	/* empty: unset */
			}
			*val = buf;
			return 1;
		}
		free(buf);
		if (rc != ESPANK_NOSPACE)
			return 0;
		if (size >= MC_ENV_VALUE_READ_MAX) {
			snprintf(err, len, "%s: value longer than %u bytes",
				 name, MC_ENV_VALUE_READ_MAX);
			return -1;
		}
		size *= 2;
	}
}

/* A variable into a fixed buffer: 1 found, 0 unset or empty, -1 (err
 * set) longer than the buffer, when `cut` is false; with `cut`, a long
 * value is cut to the buffer (for names shown in messages only). */
static int get_env(spank_t sp, const char *name, char *buf, size_t size,
		   bool cut, char *err, size_t len)
{
	char *v;
	int rc = mc_step_getenv(sp, name, &v, err, len);

	buf[0] = '\0';
	if (rc <= 0)
		return cut ? 0 : rc;
	if (strlen(v) >= size && !cut) {
		snprintf(err, len, "%s: a value of %zu characters, longer "
			 "than memcore takes (%zu)", name, strlen(v),
			 size - 1);
		free(v);
		return -1;
	}
	snprintf(buf, size, "%s", v);
	free(v);
	return 1;
}

static int count_cores(spank_t sp, spank_item_t item)
{
	char *list = NULL;

	if (spank_get_item(sp, item, &list) != ESPANK_SUCCESS || !list)
		return -1;
	return mc_list_parse(list, NULL, MC_LIST_INDEX_MAX + 1u);
}

/*
 * A shared GPU (mc_step.h): Slurm 22.05+ gres/shard sets
 * SLURM_SHARDS_ON_NODE to the step's shards on the node (and unsets it for
 * other steps); gres/mps sets CUDA_MPS_ACTIVE_THREAD_PERCENTAGE to the
 * step's share of the card in percent. Either names one card: a step
 * without a GPU count from Slurm counts that one. A user who sets them by
 * hand only lowers the RAM memcore asks of their own step.
 */
static int read_share(spank_t sp, struct mc_step *s, char *err, size_t len)
{
	char *v = NULL, why[MC_ERR_MAX];
	int rc = mc_step_getenv(sp, "SLURM_SHARDS_ON_NODE", &v, err, len);

	s->shards = s->mps_percent = 0;
	s->share_gpu = false;
	s->user_err[0] = '\0';
	/* Slurm writes a count here, or nothing: a value that is not one
	 * (or too long to read) came from the job's environment. It is the
	 * user's error on a step Slurm gave GPUs (mc_stepd.c refuses it
	 * under any OnError), and nothing at all on one it gave none: a
	 * CPU-only step is never memcore's business. */
	if (rc < 0 || (rc > 0 && mc_parse_count(v, 1u << 20, &s->shards,
						why, sizeof(why)) < 0)) {
		if (s->gpus)
			snprintf(s->user_err, sizeof(s->user_err),
				 "SLURM_SHARDS_ON_NODE=%.32s%s in the job's "
				 "environment: %s; Slurm sets it only to a "
				 "shard count (--gres=shard:N), so it was set "
				 "by the job: unset it", v ? v : "",
				 v && strlen(v) > 32 ? "..." : "",
				 rc < 0 ? err : why);
		s->shards = 0;
		free(v);
		return 0;
	}
	free(v);
	/* A count with no GPU from Slurm's GPU variables: a --gres=shard
	 * step, where gres/shard sets it, or a CPU-only step where the job
	 * set it by hand (a node without gres/shard leaves it alone). Which
	 * one is the node's shard count's to say (mc_stepd_step). */
	if (s->shards && !s->gpus)
		s->share_gpu = true;
	v = NULL;
	if (!s->shards) {
		rc = mc_step_getenv(sp, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE",
				    &v, err, len);
		if (rc < 0)
			return -1;
		/* Slurm 22.05 gives a batch step of an mps job 0 (the step
		 * holds no gres of its own): a share that is not 1-100 is
		 * unknown, and the step counts the whole card (too high,
		 * never too low), not a refusal of the user's job. */
		if (rc > 0 && mc_parse_count(v, 100, &s->mps_percent, why,
					     sizeof(why)) < 0)
			s->mps_percent = 0;
		free(v);
		if (rc > 0 && !s->mps_percent && !s->gpus)
			s->gpus = 1;
	}
	if ((s->shards || s->mps_percent) && !s->gpus)
		s->gpus = 1;
	return 0;
}

int mc_step_read_gpus(spank_t sp, struct mc_step *s, char *err, size_t len)
{
	char *v = NULL, why[MC_ERR_MAX];
	int rc;

	s->gpus = 0;
	s->n_gpu_idx = -1;
	rc = mc_step_getenv(sp, "SLURM_GPUS_ON_NODE", &v, err, len);
	if (rc < 0)
		return -1;
	if (rc > 0 && mc_parse_count(v, MC_MAX_GPUS, &s->gpus, why,
				     sizeof(why)) < 0) {
		snprintf(err, len, "SLURM_GPUS_ON_NODE=%.64s%s: %s", v,
			 strlen(v) > 64 ? "..." : "", why);
		free(v);
		return -1;
	}
	free(v);
	v = NULL;
	/* The index list Slurm itself sets for this kind of step: a batch
	 * step has SLURM_JOB_GPUS only, so a SLURM_STEP_GPUS there came from
	 * the user's environment (sbatch --export=ALL) and is not read. */
	rc = 0;
	if (s->step_id != SLURM_BATCH_SCRIPT)
		rc = mc_step_getenv(sp, "SLURM_STEP_GPUS", &v, err, len);
	if (rc == 0)
		rc = mc_step_getenv(sp, "SLURM_JOB_GPUS", &v, err, len);
	if (rc < 0)
		return -1;
	if (rc > 0) {
		s->n_gpu_idx = mc_list_parse(v, s->gpu_idx, MC_MAX_GPUS);
		if (s->n_gpu_idx < 0) {
			snprintf(err, len, "GPU index list '%.64s%s' from "
				 "Slurm is not a list of GPU indices", v,
				 strlen(v) > 64 ? "..." : "");
			free(v);
			return -1;
		}
		if (!s->gpus)
			s->gpus = (uint32_t)s->n_gpu_idx;
	}
	free(v);
	return read_share(sp, s, err, len);
}

/* Whether the step claims to be of a heterogeneous job (SLURM_HET_SIZE,
 * SLURM_JOB_ID_HET_GROUP_<k>); n_het stays 0 when they cannot be read.
 * The user sets these as they like: a refused step asks slurmctld for
 * the real components before it ends any (mc_step_het_check). */
static void read_het(spank_t sp, struct mc_step *s)
{
	char buf[32], name[48], why[MC_ERR_MAX];
	uint32_t n;

	if (s->step_id == SLURM_BATCH_SCRIPT ||
	    get_env(sp, "SLURM_HET_SIZE", buf, sizeof(buf), false, why,
		    sizeof(why)) <= 0 ||
	    mc_parse_count(buf, MC_HET_MAX, &n, why, sizeof(why)) < 0)
		return;
	for (uint32_t k = 0; k < n; k++) {
		snprintf(name, sizeof(name), "SLURM_JOB_ID_HET_GROUP_%u", k);
		if (get_env(sp, name, buf, sizeof(buf), false, why,
			    sizeof(why)) <= 0 ||
		    mc_parse_count(buf, UINT32_MAX, &s->het_job_id[k], why,
				   sizeof(why)) < 0)
			return;
	}
	s->n_het = n;
}

/*
 * Slurm's node name, which may differ from the host name. An srun step
 * started inside a job inherits the batch node's SLURMD_NODENAME (and
 * SLURM_NODEID): Slurm sets this node's only after task_init_privileged.
 * SLURM_STEP_NODELIST (srun's) and S_JOB_NODEID (this node's index in the
 * step) are right there, except in a heterogeneous step: its node list is
 * every component's, its node id the component's. There the host name.
 */
static void read_node_name(spank_t sp, struct mc_step *s)
{
	char list[16384];	/* a step on thousands of scattered nodes */
	char why[MC_ERR_MAX];
	const char *env;
	uint32_t node_id;

	if (s->n_het) {
		if (gethostname(s->host, sizeof(s->host)) != 0)
			snprintf(s->host, sizeof(s->host), "this node");
		s->host[sizeof(s->host) - 1] = '\0';
		return;
	}
	if (s->step_id != SLURM_BATCH_SCRIPT &&
	    spank_get_item(sp, S_JOB_NODEID, &node_id) == ESPANK_SUCCESS &&
	    get_env(sp, "SLURM_STEP_NODELIST", list, sizeof(list), false,
		    why, sizeof(why)) > 0 &&
	    mc_hostlist_nth(list, node_id, s->host, sizeof(s->host)) == 0)
		return;
	if (get_env(sp, "SLURMD_NODENAME", s->host, sizeof(s->host), true,
		    why, sizeof(why)) > 0)
		return;
	env = getenv("SLURMD_NODENAME");
	if (env && *env)
		snprintf(s->host, sizeof(s->host), "%s", env);
	else if (gethostname(s->host, sizeof(s->host)) != 0)
		snprintf(s->host, sizeof(s->host), "this node");
	s->host[sizeof(s->host) - 1] = '\0';
}

int mc_step_read(spank_t sp, struct mc_step *s, char *err, size_t len)
{
	char buf[1024], why[MC_ERR_MAX];
	uint64_t mem = 0;

	memset(s, 0, sizeof(*s));
	s->n_gpu_idx = -1;
	spank_get_item(sp, S_JOB_ID, &s->job_id);
	spank_get_item(sp, S_JOB_STEPID, &s->step_id);
	spank_get_item(sp, S_TASK_ID, &s->task_id);
	s->uid = s->gid = UINT32_MAX;	/* unknown: nobody is asked */
	spank_get_item(sp, S_JOB_UID, &s->uid);
	spank_get_item(sp, S_JOB_GID, &s->gid);
	/* N of the DeepSpeed estimate: the step's nodes (S_JOB_NNODES is
	 * the step's in slurmstepd). The batch step runs on one node but
	 * launches the job's training, so it counts the job's nodes. */
	if (spank_get_item(sp, S_JOB_NNODES, &s->nodes) != ESPANK_SUCCESS ||
	    !s->nodes)
		s->nodes = 1;
	if (s->step_id == SLURM_BATCH_SCRIPT) {
		int rc = get_env(sp, "SLURM_JOB_NUM_NODES", buf, sizeof(buf),
				 false, err, len);

		if (rc < 0)
			return -1;
		if (rc > 0 && mc_parse_count(buf, UINT32_MAX, &s->nodes, why,
					     sizeof(why)) < 0) {
			snprintf(err, len, "SLURM_JOB_NUM_NODES=%s: %s", buf,
				 why);
			return -1;
		}
	}
	if (!s->nodes)
		s->nodes = 1;
	if (s->step_id == SLURM_BATCH_SCRIPT)
		snprintf(s->step_name, sizeof(s->step_name), "%u.batch",
			 s->job_id);
	else
		snprintf(s->step_name, sizeof(s->step_name), "%u.%u",
			 s->job_id, s->step_id);
	spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &s->tasks);
	read_het(sp, s);
	read_node_name(sp, s);
	/* The partition is not read here: the step's environment is the
	 * user's to write (srun builds it), and the partition picks the
	 * policy. slurmd's own view sets it (mc_jobview.h). */
	if (mc_step_read_gpus(sp, s, err, len) < 0)
		return -1;

	if (spank_get_item(sp, S_STEP_ALLOC_MEM, &mem) != ESPANK_SUCCESS ||
	    !mem)
		spank_get_item(sp, S_JOB_ALLOC_MEM, &mem);
	s->mem_mb = mem;
	s->cores = count_cores(sp, S_STEP_ALLOC_CORES);
	s->job_cores = count_cores(sp, S_JOB_ALLOC_CORES);

	/* Say how the memory was asked for, in the user's own terms when
	 * the job's environment tells them. Only the batch step's is sure:
	 * an srun step inherits sbatch's SLURM_MEM_PER_* whatever its own
	 * --mem says, so it gets its allocation as --mem. */
	bool batch = s->step_id == SLURM_BATCH_SCRIPT;

	s->mem_form = MC_MEM_PER_NODE;
	if (batch && get_env(sp, "SLURM_MEM_PER_GPU", buf, 32, false, why,
			     sizeof(why)) > 0) {
		snprintf(s->mem_source, sizeof(s->mem_source),
			 "--mem-per-gpu=%sM", buf);
		s->mem_form = MC_MEM_PER_GPU;
	} else if (batch && get_env(sp, "SLURM_MEM_PER_CPU", buf, 32, false,
				  why, sizeof(why)) > 0) {
		snprintf(s->mem_source, sizeof(s->mem_source),
			 "--mem-per-cpu=%sM", buf);
		s->mem_form = MC_MEM_PER_CPU;
	} else if (s->mem_mb)
		snprintf(s->mem_source, sizeof(s->mem_source), "--mem=%s",
			 mc_fmt_mem_option(s->mem_mb << 20, buf, sizeof(buf)));
	else
		snprintf(s->mem_source, sizeof(s->mem_source),
			 "no memory limit: the whole node");
	return 0;
}


bool mc_step_ignored(const struct mc_step *s)
{
	return s->step_id == SLURM_EXTERN_CONT || s->gpus == 0;
}

void mc_step_case(const struct mc_step *s, struct mc_case *c)
{
	memset(c, 0, sizeof(*c));
	c->gpus = s->gpus;
	c->nodes = s->nodes;
	c->ranks = s->tasks;
	if (s->shards) {
		c->share_kind = 1;
		c->share_count = s->shards;
		c->share_from = "SLURM_SHARDS_ON_NODE";
	} else if (s->mps_percent) {
		c->share_kind = 2;
		c->share_count = s->mps_percent;
		c->share_per_gpu = 100;
		c->share_from = "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE";
	}
}

void mc_step_alloc(const struct mc_step *s, const struct mc_node *n,
		   struct mc_alloc *a)
{
	memset(a, 0, sizeof(*a));
	/* Slurm's figure in MB; none: the whole node, nothing to hold. */
	a->mem_bytes = s->mem_mb ? s->mem_mb << 20 : n->ram_bytes;
	a->mem_unset = !s->mem_mb;
	a->cores = s->cores >= 0 ? (uint32_t)s->cores : n->cores;
	a->job_cores = s->job_cores >= 0 ? (uint32_t)s->job_cores : 0;
	a->mem_source = s->mem_source;
	a->mem_form = s->mem_form;	/* the fix names the user's option */
}
