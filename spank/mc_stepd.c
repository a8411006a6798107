/*
 * mc_stepd.c - slurmstepd: read the step's GPUs and allocation, compute the
 * verdict and deliver it in slurm_spank_task_init_privileged.
 *
 * Runs in every task's process (forked from slurmstepd, still root) before
 * the task's program. Local task 0 prints; every task fails when refused,
 * so that srun exits non-zero and a batch job ends FAILED, while the node
 * stays IDLE.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "mc_facts.h"
#include "mc_list.h"
#include "mc_parse.h"
#include "mc_plugin.h"
#include "mc_rules.h"
#include "mc_topology.h"

/* What the step got on this node, read from Slurm. */
struct mc_step {
	uint32_t job_id, step_id;
	int task_id;			/* local task id */
	char host[64];
	char partition[MC_PARTITION_NAME_MAX];
	uint32_t gpus;
	unsigned gpu_idx[MC_MAX_GPUS];
	int n_gpu_idx;			/* -1: no index list */
	uint32_t nodes;
	uint64_t mem_mb;		/* 0: whole node */
	int cores, job_cores;		/* -1: unknown */
	char mem_source[96];
	char step_name[48];		/* "1234.0", "1234.batch" */
};

static bool get_env(spank_t sp, const char *name, char *buf, int len)
{
	return spank_getenv(sp, name, buf, len) == ESPANK_SUCCESS && buf[0];
}

static int count_cores(spank_t sp, spank_item_t item)
{
	char *list = NULL;

	if (spank_get_item(sp, item, &list) != ESPANK_SUCCESS || !list)
		return -1;
	return mc_list_parse(list, NULL, MC_LIST_INDEX_MAX + 1u);
}

/*
 * Read the step. Returns 0, or -1 with err set when Slurm's own view of the
 * step's GPUs is inconsistent. GPUs come from Slurm's variables only: an
 * inherited CUDA_VISIBLE_DEVICES says nothing about what this step got.
 */
static int read_step(spank_t sp, struct mc_step *s, char *err, size_t len)
{
	char buf[1024], why[MC_ERR_MAX];
	uint64_t mem = 0;

	memset(s, 0, sizeof(*s));
	s->n_gpu_idx = -1;
	spank_get_item(sp, S_JOB_ID, &s->job_id);
	spank_get_item(sp, S_JOB_STEPID, &s->step_id);
	spank_get_item(sp, S_TASK_ID, &s->task_id);
	if (spank_get_item(sp, S_JOB_NNODES, &s->nodes) != ESPANK_SUCCESS ||
	    !s->nodes)
		s->nodes = 1;
	if (s->step_id == SLURM_BATCH_SCRIPT)
		snprintf(s->step_name, sizeof(s->step_name), "%u.batch",
			 s->job_id);
	else
		snprintf(s->step_name, sizeof(s->step_name), "%u.%u",
			 s->job_id, s->step_id);
	/* Slurm's node name, which may differ from the host name. */
	if (!get_env(sp, "SLURMD_NODENAME", s->host, sizeof(s->host))) {
		const char *env = getenv("SLURMD_NODENAME");

		if (env && *env)
			snprintf(s->host, sizeof(s->host), "%s", env);
		else if (gethostname(s->host, sizeof(s->host)) != 0)
			snprintf(s->host, sizeof(s->host), "this node");
		s->host[sizeof(s->host) - 1] = '\0';
	}
	get_env(sp, "SLURM_JOB_PARTITION", s->partition,
		sizeof(s->partition));

	if (get_env(sp, "SLURM_GPUS_ON_NODE", buf, sizeof(buf)) &&
	    mc_parse_count(buf, MC_MAX_GPUS, &s->gpus, why, sizeof(why)) < 0) {
		snprintf(err, len, "SLURM_GPUS_ON_NODE=%s: %s", buf, why);
		return -1;
	}
	if (get_env(sp, "SLURM_STEP_GPUS", buf, sizeof(buf)) ||
	    get_env(sp, "SLURM_JOB_GPUS", buf, sizeof(buf))) {
		s->n_gpu_idx = mc_list_parse(buf, s->gpu_idx, MC_MAX_GPUS);
		if (s->n_gpu_idx < 0) {
			snprintf(err, len, "GPU index list '%s' from Slurm is "
				 "not a list of GPU indices", buf);
			return -1;
		}
		if (!s->gpus)
			s->gpus = (uint32_t)s->n_gpu_idx;
	}

	if (spank_get_item(sp, S_STEP_ALLOC_MEM, &mem) != ESPANK_SUCCESS ||
	    !mem)
		spank_get_item(sp, S_JOB_ALLOC_MEM, &mem);
	s->mem_mb = mem;
	s->cores = count_cores(sp, S_STEP_ALLOC_CORES);
	s->job_cores = count_cores(sp, S_JOB_ALLOC_CORES);

	/* Say how the memory was asked for, in the user's own terms when
	 * the job's environment tells them. */
	if (get_env(sp, "SLURM_MEM_PER_GPU", buf, 32))
		snprintf(s->mem_source, sizeof(s->mem_source),
			 "--mem-per-gpu=%sM", buf);
	else if (get_env(sp, "SLURM_MEM_PER_CPU", buf, 32))
		snprintf(s->mem_source, sizeof(s->mem_source),
			 "--mem-per-cpu=%sM", buf);
	else if (s->mem_mb)
		snprintf(s->mem_source, sizeof(s->mem_source), "--mem=%s",
			 mc_fmt_mem_option(s->mem_mb << 20, buf, sizeof(buf)));
	else
		snprintf(s->mem_source, sizeof(s->mem_source),
			 "no memory limit: the whole node");
	return 0;
}

/* Print the lines on task 0 only: every task runs this. */
static void say(const struct mc_step *s, const char *text)
{
	if (s->task_id == 0)
		slurm_spank_log("%s", text);
}

/* A problem of the node's set-up (policy file, topology): OnError says
 * whether a GPU step runs. Never a node drain: we only fail tasks. */
static int setup_error(const struct mc_plugin *p, const struct mc_policy *pol,
		       const struct mc_step *s, const char *what)
{
	char line[MC_ERR_MAX + 128];
	bool allow = pol->on_error == MC_ON_ERROR_ALLOW;

	snprintf(line, sizeof(line), "memcore: step %s on %s: %s%s",
		 s->step_name, s->host, what,
		 allow ? " (OnError=allow: the step runs unchecked)"
		       : " (OnError=refuse: GPU steps cannot start until the "
			 "administrator fixes it)");
	say(s, line);
	if (s->task_id == 0)
		slurm_error("%s", line);
	return allow ? 0 : -1;
}

int mc_stepd_task_init_privileged(struct mc_plugin *p, spank_t sp)
{
	static struct mc_node_facts facts;	/* big: not on the stack */
	struct mc_policy pol;
	struct mc_step s;
	struct mc_request req = { 0 };
	struct mc_node node;
	struct mc_alloc alloc = { 0 };
	struct mc_verdict v;
	struct mc_explanation e;
	char err[MC_ERR_MAX], why[MC_ERR_MAX];
	bool refuse, warn_ok;
	const char *outcome;

	if (read_step(sp, &s, err, sizeof(err)) < 0) {
		mc_config_policy(&p->cfg, s.partition, &pol);
		return setup_error(p, &pol, &s, err);
	}
	/* The extern step runs no user task; steps without GPUs are not
	 * memcore's business. */
	if (s.step_id == SLURM_EXTERN_CONT || s.gpus == 0)
		return 0;
	mc_config_policy(&p->cfg, s.partition, &pol);
	if (p->cfg_err[0])
		return setup_error(p, &pol, &s, p->cfg_err);
	if (pol.mode == MC_MODE_OFF)
		return 0;
	if (s.n_gpu_idx >= 0 && (uint32_t)s.n_gpu_idx != s.gpus) {
		snprintf(err, sizeof(err), "Slurm says %u GPUs on this node "
			 "(SLURM_GPUS_ON_NODE) but lists %d", s.gpus,
			 s.n_gpu_idx);
		return setup_error(p, &pol, &s, err);
	}
	if (mc_topology_load(pol.topology_file, &facts, err, sizeof(err)) < 0)
		return setup_error(p, &pol, &s, err);

	mc_facts_node(&facts, &pol, &node);
	if (node.gpus < s.gpus)
		node.gpus = s.gpus;
	req.gpus = s.gpus;
	req.nodes = s.nodes;
	req.dataloader_workers = p->opts.set[MC_OPT_WORKERS]
				 ? p->opts.workers : pol.dataloader_workers;
	req.gpu_memory_bytes = mc_facts_step_gpu_memory(&facts, &pol,
			s.gpu_idx, s.n_gpu_idx > 0 ? (size_t)s.n_gpu_idx : 0);
	req.model_params = p->opts.params;
	req.zero_stage = p->opts.stage;
	req.offload = (enum mc_offload)p->opts.offload;

	alloc.mem_bytes = s.mem_mb ? s.mem_mb << 20 : node.ram_bytes;
	alloc.cores = s.cores >= 0 ? (uint32_t)s.cores : node.cores;
	alloc.job_cores = s.job_cores >= 0 ? (uint32_t)s.job_cores : 0;
	alloc.mem_source = s.mem_source;

	/* A user's mistake in the options is refused like a misfit. */
	why[0] = '\0';
	if (p->opts_err[0])
		snprintf(why, sizeof(why), "%s", p->opts_err);
	else if (req.dataloader_workers > pol.max_dataloader_workers)
		snprintf(why, sizeof(why), "--dataloader-workers=%u: more "
			 "than MaxDataloaderWorkers=%u allows",
			 req.dataloader_workers, pol.max_dataloader_workers);
	else
		mc_request_check(&req, why, sizeof(why));
	if (why[0]) {
		snprintf(err, sizeof(err), "memcore: step %s: %s", s.step_name,
			 why);
		say(&s, err);
		if (s.task_id == 0)
			slurm_info("memcore: job %s: refused: %s",
				   s.step_name, why);
		return -1;
	}

	mc_verdict_compute(&pol, &req, &node, &alloc, &v);
	warn_ok = pol.mode == MC_MODE_WARN ||
		  ((p->opts.mode & MC_USER_WARN) && pol.allow_user_warn);
	refuse = !v.fits && !warn_ok;
	if (!v.fits || (p->opts.mode & MC_USER_EXPLAIN)) {
		mc_verdict_explain(&pol, &v, s.step_name, s.host, &e);
		for (size_t i = 0; i < e.n; i++)
			say(&s, e.line[i]);
		if (!v.fits && !refuse)
			say(&s, pol.mode == MC_MODE_WARN
			    ? "memcore: Mode=warn: the step runs anyway"
			    : "memcore: --memcore=warn: the step runs anyway");
		if (!v.fits && refuse && (p->opts.mode & MC_USER_WARN))
			say(&s, "memcore: --memcore=warn is not allowed "
			    "here (AllowUserWarn=no)");
	}
	outcome = v.fits ? "fits" : refuse ? "refused" : "warned";
	if (s.task_id == 0) {
		char need[32], have[32];

		slurm_info("memcore: job %s: %s: gpus=%u workers=%u ram "
			   "needed=%s allocated=%s cores needed=%u "
			   "allocated=%u node cores needed=%u has=%u",
			   s.step_name, outcome, req.gpus,
			   req.dataloader_workers,
			   mc_fmt_bytes(v.ram_needed_bytes, need,
					sizeof(need)),
			   mc_fmt_bytes(v.ram_allocated_bytes, have,
					sizeof(have)),
			   v.cores_needed, v.cores_allocated,
			   v.node_cores_needed, v.node_cores);
	}
	return refuse ? -1 : 0;
}
