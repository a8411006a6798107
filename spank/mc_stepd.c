/*
 * mc_stepd.c - slurmstepd: read the step's GPUs and allocation, compute the
 * verdict once, and deliver it in every task's
 * slurm_spank_task_init_privileged.
 *
 * slurmstepd reads the step and computes the verdict with its explanation
 * in init_post_opt, before it forks the tasks: an -n8 step pays for one
 * verdict, not eight, and every task process inherits the result. Each
 * task then only delivers it (forked from slurmstepd, still root, before
 * the task's program): local task 0 prints; every task fails when refused,
 * so that srun exits non-zero and a batch job ends FAILED, while the node
 * stays IDLE. Nothing fails in init_post_opt itself (that can drain the
 * node); it only remembers. A step of several nodes is judged on each by
 * that node's GPUs, allocation and facts; one node's refusal ends it on
 * all of them.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include <sys/statvfs.h>

#include "mc_dataset.h"
#include "mc_facts.h"
#include "mc_jobfiles.h"
#include "mc_jobview.h"
#include "mc_judge.h"
#include "mc_list.h"
#include "mc_parse.h"
#include "mc_plugin.h"
#include "mc_nodefacts.h"
#include "mc_after.h"
#include "mc_args.h"
#include "mc_bind.h"
#include "mc_enforce.h"
#include "mc_stepd.h"
#include "mc_util.h"
#include "mc_rules.h"
#include "mc_topology.h"
#include "mc_step.h"
#include "mc_log.h"

/*
 * The step's partition from slurmd's own record of the job (mc_jobview.h),
 * never from the step's environment. No record, or one not to be
 * believed: "" (memcore.conf's global policy), said in slurmd's log.
 */
static void trusted_partition(struct mc_plugin *p)
{
	char dir[PATH_MAX], err[MC_ERR_MAX];
	struct mc_step *s = &p->step;
	int rc;

	if (mc_jobview_dir(p->ac, p->av, mc_cache_default_path(), dir,
			   sizeof(dir)) < 0) {
		s->partition[0] = '\0';
		return;
	}
	rc = mc_jobview_read(dir, s->job_id, s->partition,
			     sizeof(s->partition), err, sizeof(err));
	if (rc == 0)
		mc_log_info("memcore: step %s: no record of job %u in %s (the "
			    "job prolog did not run: slurmd started before "
			    "memcore was in its plugstack?): the global "
			    "policy, whatever the step's partition",
			    s->step_name, s->job_id, dir);
	else if (rc < 0)
		mc_log_error("memcore: step %s: %s: the global policy, "
			     "whatever the step's partition", s->step_name,
			     err);
}

const struct mc_step *mc_stepd_step(struct mc_plugin *p, spank_t sp)
{
	if (!p->step_loaded) {
		p->step_loaded = true;
		p->step_rc = mc_step_read(sp, &p->step, p->step_err,
					  sizeof(p->step_err));
		/* memcore.conf is read for the steps memcore checks, and
		 * for a malformed one (OnError decides): a CPU-only step
		 * never parses it. */
		if (!p->configured &&
		    (p->step_rc < 0 || !mc_step_ignored(&p->step))) {
			p->configured = true;
			mc_plugin_configure(p, p->ac, p->av);
		}
		if (p->step_rc < 0 || !mc_step_ignored(&p->step))
			trusted_partition(p);
		/* A shard count without a GPU from Slurm makes a GPU step
		 * only where the node has shards (Slurm's count, or the
		 * policy's override): elsewhere gres/shard is not there to
		 * set or clear it, and the job set it on a CPU-only step,
		 * which memcore leaves alone. The counts come with the
		 * node's facts, or, where those cannot load, from libslurm
		 * itself: a CPU-only step never fails over a topology. */
		if (p->step_rc == 0 && p->step.share_gpu && !p->cfg_err[0]) {
			struct mc_policy pol;
			const struct mc_node_facts *f;
			char err[MC_ERR_MAX];
			uint32_t gpus, shards;

			mc_config_policy(&p->cfg, p->step.partition, &pol);
			f = mc_plugin_facts(p, &pol, err, sizeof(err));
			if (f) {
				gpus = f->slurm_gpus;
				shards = f->slurm_shards;
			} else {
				mc_plugin_slurm_counts(&gpus, &shards);
			}
			if (!mc_shards_per_gpu(&pol, shards, gpus, NULL))
				p->step.gpus = p->step.shards = 0;
		}
	}
	return p->step_rc < 0 ? NULL : &p->step;
}

/* The verdict's outcome, for every task to deliver. */
static void keep(struct mc_plugin *p, int rc, const char *text)
{
	p->verdict_rc = rc;
	free(p->verdict_text);
	p->verdict_text = text && *text ? strdup(text) : NULL;
}

/* A refused step of several nodes is ended on all of them (mc_step.h). */
static bool ends_everywhere(const struct mc_step *s)
{
	return (s->nodes > 1 || s->n_het > 1) &&
	       s->step_id != SLURM_BATCH_SCRIPT;
}

/* Every refusal of a step ends here; local task 0 ends the step. */
static int refused(const struct mc_step *s)
{
	if (s->task_id == 0 && ends_everywhere(s))
		mc_step_end_everywhere(s);
	return -1;
}

/* A problem of the node's set-up (policy file, topology): OnError says
 * whether a GPU step runs. Never a node drain: we only fail tasks. */
static void setup_error(struct mc_plugin *p, const struct mc_policy *pol,
			const struct mc_step *s, const char *what)
{
	char line[MC_ERR_MAX + 192];
	bool allow = pol->on_error == MC_ON_ERROR_ALLOW;

	snprintf(line, sizeof(line), "memcore: step %s on %s: %s%s",
		 s->step_name, s->host, what,
		 allow ? " (OnError=allow: the step runs unchecked)"
		       : " (OnError=refuse: GPU steps cannot start until the "
			 "administrator fixes it)");
	mc_log_info("%s", line);	/* log once: the user has it from task 0 */
	keep(p, allow ? 0 : -1, line);
}

/*
 * The figures srun/sbatch read from the job's own files, from the job's
 * environment (slurmstepd never opens the files: mc_jobfiles.h), into
 * c->files (NULL: none). Returns 0, or -1 with err (the user's to fix).
 */
static int job_files(struct mc_plugin *p, spank_t sp, struct mc_case *c,
		     char *err, size_t errlen)
{
	static struct mc_jobfiles f;
	char *v = NULL;
	int rc = mc_step_getenv(sp, MC_JOBFILES_ENV, &v, err, errlen);

	c->files = NULL;
	if (rc < 0)
		return -1;
	if (rc == 0) {
		static const enum mc_opt_id files[] = {
			MC_OPT_DS_CONFIG, MC_OPT_MODEL_CONFIG,
			MC_OPT_ACCEL_CONFIG, MC_OPT_TUNE_CONFIG,
			MC_OPT_LORA_CONFIG,
		};
		const char *named = NULL;
		char opt[40];

		for (size_t i = 0; !named && i < sizeof(files) /
		     sizeof(files[0]); i++)
			if (p->opts.set[files[i]]) {
				snprintf(opt, sizeof(opt), "--%s",
					 mc_opt_name(files[i]));
				named = opt;
			}

		if (named) {
			snprintf(err, errlen, "%s: its figures did not reach "
				 "the step (srun/sbatch read the file as you "
				 "and pass them in %s; was it dropped, e.g. by "
				 "--export=NONE?)", named, MC_JOBFILES_ENV);
			return -1;
		}
		return 0;
	}
	rc = mc_jobfiles_parse(v, &f, err, errlen);
	free(v);
	if (rc < 0)
		return -1;
	c->files = &f;
	return 0;
}

/*
 * --dataset-in-memory (mc_terms.h): without SIZE, the --dataset paths'
 * size as srun/sbatch measured it as the user (MEMCORE_DATASET_FACTS);
 * with a --dataset path, the command that stages it to the policy's
 * LocalScratch, for the explanation's fix; into c. Returns 0, or -1 with
 * err when the size is unknown here (the figures did not reach the step,
 * or do not say it): the user is told to give SIZE.
 */
static int dataset_in_memory(struct mc_plugin *p, spank_t sp,
			     const struct mc_step *s,
			     const struct mc_policy *pol, struct mc_case *c,
			     char *err, size_t errlen)
{
	static struct mc_dataset d;
	static char stage[1024];
	char job[16], why[MC_ERR_MAX];
	bool measure = mc_opts_dataset_measured(&p->opts);
	char *v = NULL;
	int rc;

	if (!p->opts.set[MC_OPT_DATASET_IN_MEMORY])
		return 0;
	memset(&d, 0, sizeof(d));
	rc = mc_step_getenv(sp, MC_DATASET_ENV, &v, why, sizeof(why));
	if (rc > 0) {
		rc = mc_dataset_parse(v, &d, why, sizeof(why));
		free(v);
	} else if (rc == 0 && p->opts.set[MC_OPT_DATASET]) {
		snprintf(why, sizeof(why), "%s is not in the job's "
			 "environment; was it dropped, e.g. by --export=NONE?",
			 MC_DATASET_ENV);
		rc = -1;
	}
	if (rc < 0) {
		if (!measure)
			return 0;	/* SIZE given: judged without a stage
					 * command */
		snprintf(err, errlen, "--dataset-in-memory: the dataset's "
			 "measured size did not reach the step (%s): give its "
			 "size in RAM: --dataset-in-memory=SIZE", why);
		return -1;
	}
	if (measure) {
		if (mc_dataset_in_memory_bytes(&d, &c->dataset_bytes, err,
					       errlen) < 0)
			return -1;
		c->dataset_measured = true;
	}
	snprintf(job, sizeof(job), "%u", s->job_id);
	mc_dataset_stage_cmd(&d, false, pol->local_scratch, job, stage,
			     sizeof(stage));
	c->dataset_stage = stage;
	return 0;
}

/*
 * What this node's slurmstepd read of the step, as one case
 * (mc_decision.h): Slurm's grant (mc_step_case), memcore's options, the
 * job's files and dataset from its environment, the GPUs' memory and a
 * shard's count per GPU from the node's facts. Returns 0, or -1 with err
 * = the user's mistake in the job's figures, -2 with err = a shard count
 * the job set itself (both refused whatever OnError says).
 */
static int step_case(struct mc_plugin *p, spank_t sp, const struct mc_step *s,
		     const struct mc_policy *pol,
		     const struct mc_node_facts *facts, struct mc_case *c,
		     char *err, size_t errlen)
{
	static char mem_from[96];
	enum mc_mem_source mem_src;

	mc_step_case(s, c);
	c->opts = &p->opts;
	if (job_files(p, sp, c, err, errlen) < 0 ||
	    dataset_in_memory(p, sp, s, pol, c, err, errlen) < 0)
		return -1;
	c->gpu_memory_bytes = mc_facts_step_gpu_memory_for(facts, pol,
			s->gpu_idx, s->n_gpu_idx > 0 ? (size_t)s->n_gpu_idx : 0,
			0, NULL, &mem_src);
	/* "this node" when the node measured it, else memcore.conf's key */
	c->gpu_memory_source = mc_mem_source_text(mem_src, NULL, NULL,
						  mem_from, sizeof(mem_from));
	if (c->share_kind == 1) {
		c->share_per_gpu = mc_shards_per_gpu(pol, facts->slurm_shards,
						     facts->slurm_gpus, NULL);
		/* A step of a GPU from Slurm whose node has no shard count:
		 * gres/shard is not configured here, so Slurm never set
		 * SLURM_SHARDS_ON_NODE: the job did. That is the user's
		 * error under every OnError (a set-up error would let
		 * OnError=allow run the step unchecked on the job's say). */
		if (!c->share_per_gpu) {
			snprintf(err, errlen, "SLURM_SHARDS_ON_NODE=%u in the "
				 "job's environment, but this node has no shards "
				 "(no shard in its Gres=, no ShardsPerGpu=), so "
				 "Slurm did not set it: the job did: unset it",
				 s->shards);
			return -2;
		}
	}
	return 0;
}

/*
 * The dataset's note (mc_dataset.h): the figures srun/sbatch measured as
 * the user, from the job's environment, against the policy's LocalScratch,
 * whose free space slurmstepd reads itself (the administrator's path).
 * Appends its lines to text; returns true when NetworkDataset=refuse
 * refuses the step. A malformed variable is said in slurmd's log and
 * noted nowhere else: the step is judged as without a dataset.
 */
static bool dataset_note(spank_t sp, const struct mc_step *s,
			 const struct mc_policy *pol, char *text, size_t len,
			 size_t *used)
{
	static struct mc_dataset d;
	char lines[8][200], err[MC_ERR_MAX];
	uint64_t free_bytes = UINT64_MAX;
	struct statvfs sv;
	char *v = NULL;
	bool refuse = false;
	size_t n;
	int rc;

	if (pol->network_dataset == MC_NETDS_IGNORE)
		return false;
	rc = mc_step_getenv(sp, MC_DATASET_ENV, &v, err, sizeof(err));
	if (rc <= 0)
		return false;
	rc = mc_dataset_parse(v, &d, err, sizeof(err));
	free(v);
	if (rc < 0) {
		mc_log_info("memcore: step %s: %s", s->step_name, err);
		return false;
	}
	if (pol->local_scratch[0] && statvfs(pol->local_scratch, &sv) == 0)
		free_bytes = (uint64_t)sv.f_bavail * sv.f_frsize;
	n = mc_dataset_note(&d, pol->network_dataset, pol->local_scratch,
			    free_bytes, s->job_id, lines, 8, &refuse);
	for (size_t i = 0; i < n; i++)
		mc_appendf(text, len, used, "%s%s", *used ? "\n" : "",
			   lines[i]);
	if (n)
		mc_log_info("memcore: job %s: dataset on a network filesystem"
			    "%s", s->step_name, refuse ? ": refused" : "");
	return refuse;
}

/* What stops the step before it is judged (the user's environment, a
 * broken policy, Slurm's own GPU list, node facts that cannot be had),
 * kept as its verdict; or, when none, the node's facts. s: the step,
 * not one memcore leaves alone. */
static const struct mc_node_facts *before_judging(struct mc_plugin *p,
						  const struct mc_step *s,
						  const struct mc_policy *pol)
{
	const struct mc_node_facts *facts;
	bool user_warn = p->opts.mode & MC_USER_WARN;
	char err[MC_ERR_MAX];

	/* What only the job's environment can have made is the user's
	 * error, never the node's set-up: refused whatever OnError says
	 * (Mode=off checks nothing, so nothing is refused there). */
	if (s->user_err[0] && (p->cfg_err[0] ||
			       mc_launch_outcome(pol, user_warn, true) !=
			       MC_LAUNCH_UNCHECKED)) {
		snprintf(err, sizeof(err), "memcore: step %s: refused: %s",
			 s->step_name, s->user_err);
		mc_log_info("memcore: job %s: refused: %s", s->step_name,
			    s->user_err);
		keep(p, -1, err);
		return NULL;
	}
	if (p->cfg_err[0]) {
		setup_error(p, pol, s, p->cfg_err);
		return NULL;
	}
	if (mc_launch_outcome(pol, user_warn, true) == MC_LAUNCH_UNCHECKED)
		return NULL;
	if (s->n_gpu_idx >= 0 && (uint32_t)s->n_gpu_idx != s->gpus) {
		snprintf(err, sizeof(err), "Slurm says %u GPUs on this node "
			 "(SLURM_GPUS_ON_NODE) but lists %d", s->gpus,
			 s->n_gpu_idx);
		setup_error(p, pol, s, err);
		return NULL;
	}
	facts = mc_plugin_facts(p, pol, err, sizeof(err));
	if (!facts)
		setup_error(p, pol, s, err);
	return facts;
}

/* The request of step s, or a refusal kept as its verdict (false): the
 * job's files or dataset refused, or a user's mistake in the options,
 * which is refused like a misfit. */
static bool request(struct mc_plugin *p, spank_t sp, const struct mc_step *s,
		    const struct mc_policy *pol,
		    const struct mc_node_facts *facts,
		    const struct mc_node *node, struct mc_request *req)
{
	struct mc_case c;
	char err[MC_ERR_MAX], why[MC_ERR_MAX];
	int rc = step_case(p, sp, s, pol, facts, &c, why, sizeof(why));

	if (rc < 0) {
		snprintf(err, sizeof(err), "memcore: step %s: %s%s",
			 s->step_name, rc == -2 ? "refused: " : "", why);
		mc_log_info("memcore: job %s: refused: %s", s->step_name, why);
		keep(p, -1, err);
		return false;
	}
	why[0] = '\0';
	if (p->opts_err[0])
		snprintf(why, sizeof(why), "%s", p->opts_err);
	else
		mc_case_request(pol, &c, node, req, why, sizeof(why));
	if (!why[0])
		return true;
	snprintf(err, sizeof(err), "memcore: step %s: %s", s->step_name, why);
	mc_log_info("memcore: job %s: refused: %s", s->step_name, why);
	keep(p, -1, err);
	/* Counted in the cluster view as refused. */
	p->after.judged = p->after.refused = true;
	snprintf(p->after.textfile, sizeof(p->after.textfile), "%s",
		 pol->prometheus_textfile);
	return false;
}

/* What the user reads: the explanation when the step does not fit or
 * asked for it (--memcore=explain), the launch line, the "ended on all
 * nodes" line, the dataset's note; one message, so that srun's own lines
 * cannot land in its middle. */
static void verdict_text(const struct mc_plugin *p, const struct mc_step *s,
			 struct mc_decision *d, const char *ds_text,
			 char *text, size_t len)
{
	struct mc_explanation *e = &d->j.e;
	size_t used = 0;

	text[0] = '\0';
	if (!d->j.v.fits || (p->opts.mode & MC_USER_EXPLAIN)) {
		if (d->launch_line && e->n < MC_EXPLAIN_LINES)
			snprintf(e->line[e->n++], MC_EXPLAIN_LINE_MAX, "%s",
				 d->launch_line);
		if (d->refused && ends_everywhere(s) &&
		    e->n < MC_EXPLAIN_LINES)
			snprintf(e->line[e->n++], MC_EXPLAIN_LINE_MAX,
				 s->n_het ? "memcore: step %s is ended on all "
					    "its nodes, in every component"
					  : "memcore: step %s is ended on all "
					    "its %u nodes",
				 s->step_name, s->nodes);
		for (size_t i = 0; i < e->n; i++)
			mc_appendf(text, len, &used, "%s%s", i ? "\n" : "",
				   e->line[i]);
		/* A monitoring key the node's policy turned off. */
		if (p->cfg.key_off[0])
			mc_appendf(text, len, &used, "%smemcore: warning: %s",
				   used ? "\n" : "", p->cfg.key_off);
	}
	if (ds_text[0])
		mc_appendf(text, len, &used, "%s%s", used ? "\n" : "",
			   ds_text);
}

/* What the summary at the step's end compares with, and slurmd's log
 * line of the verdict. */
static void judged(struct mc_plugin *p, const struct mc_step *s,
		   const struct mc_decision *d, const struct mc_policy *pol,
		   const struct mc_request *req)
{
	const struct mc_verdict *v = &d->j.v;
	char need[32], have[32];

	p->after.judged = true;
	p->after.refused = d->refused;
	mc_used_decided(&p->after.usage, d, pol);
	p->after.sample_interval_ms = pol->sample_interval_ms;
	p->after.report = pol->report;
	snprintf(p->after.textfile, sizeof(p->after.textfile), "%s",
		 pol->prometheus_textfile);
	if (p->cfg.key_off[0])
		mc_log_info("memcore: job %s: warning: %s", s->step_name,
			    p->cfg.key_off);
	mc_log_info("memcore: job %s: %s: gpus=%u workers=%u ram needed=%s "
		    "allocated=%s cores needed=%u allocated=%u node cores "
		    "needed=%u has=%u nodes=%u", s->step_name,
		    v->fits && !d->refused ? "fits"
		    : d->refused ? "refused" : "warned",
		    req->gpus, d->workers,
		    mc_fmt_bytes(v->ram_needed_bytes, need, sizeof(need)),
		    mc_fmt_bytes(v->ram_allocated_bytes, have, sizeof(have)),
		    v->cores_needed, v->cores_allocated, v->node_cores_needed,
		    v->node_cores, req->nodes);
}

static void verdict(struct mc_plugin *p, spank_t sp)
{
	const struct mc_node_facts *facts;
	const struct mc_step *s = mc_stepd_step(p, sp);
	struct mc_decision *d = &p->decision;
	struct mc_policy pol;
	struct mc_request req;
	struct mc_node node;
	struct mc_alloc alloc;
	char text[MC_EXPLAIN_LINES * (MC_EXPLAIN_LINE_MAX + 1) + 128];
	char ds_text[8 * 201];
	size_t ds_used = 0;
	bool ds_refuses;

	keep(p, 0, NULL);
	/* Until it is judged: runs unchecked, unlimited (binding and
	 * enforcement read this). */
	memset(d, 0, sizeof(*d));
	if (!s) {
		mc_config_policy(&p->cfg, p->step.partition, &pol);
		setup_error(p, &pol, &p->step, p->step_err);
		return;
	}
	/* The extern step runs no user task; steps without GPUs are not
	 * memcore's business. */
	if (mc_step_ignored(s))
		return;
	mc_config_policy(&p->cfg, s->partition, &pol);
	mc_decision_unchecked(&pol, &p->opts, d);
	facts = before_judging(p, s, &pol);
	if (!facts)
		return;
	mc_facts_node(facts, &pol, &node);	/* the rules count the step's
						 * GPUs as the node's at least */
	if (!request(p, sp, s, &pol, facts, &node, &req))
		return;
	mc_step_alloc(s, &node, &alloc);
	/* The dataset's note, and whether NetworkDataset=refuse refuses
	 * it, before the decision that reads it. */
	ds_text[0] = '\0';
	ds_refuses = dataset_note(sp, s, &pol, ds_text, sizeof(ds_text),
				  &ds_used);
	/* The same decision memcore check reports (mc_decision.h). */
	mc_decide(&pol, &req, &alloc, &node, p->opts.mode & MC_USER_WARN,
		  ds_refuses, s->step_name, s->host, d);
	/* Whether it is ended in other components is slurmctld's word,
	 * asked only now that it is refused (mc_step.h). */
	if (d->refused && p->step.n_het)
		mc_step_het_check(&p->step);
	verdict_text(p, s, d, ds_text, text, sizeof(text));
	judged(p, s, d, &pol, &req);
	/* The step runs, held to its memory when the decision says so
	 * (memcore.c, mc_enforce.c read it). */
	keep(p, d->refused ? -1 : 0, text);
}

/* The verdict, once per step, before the tasks fork: init_post_opt
 * computes it; should a Slurm skip that hook, user_init or the first task
 * does. */
static void verdict_once(struct mc_plugin *p, spank_t sp)
{
	struct timespec t0, t1;

	if (p->verdict_done)
		return;
	p->verdict_done = true;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	verdict(p, sp);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* Counted by the tests (one per step, whatever its task count) and
	 * memcore's own share of a launch (BENCHMARKS.md). */
	if (p->step_loaded && p->step_rc == 0 && !mc_step_ignored(&p->step))
		mc_log_debug("memcore: step %s: verdict computed in %ld us, "
			     "once for all its tasks", p->step.step_name,
			     (long)((t1.tv_sec - t0.tv_sec) * 1000000L +
				    (t1.tv_nsec - t0.tv_nsec) / 1000));
}

/* The step's verdict, delivered by this task: -1 refused. */
static int deliver(struct mc_plugin *p, spank_t sp, int task_id)
{
	verdict_once(p, sp);
	if (task_id == 0 && p->verdict_text)
		slurm_spank_log("%s", p->verdict_text);
	if (p->verdict_rc < 0) {
		struct mc_step s = p->step;

		s.task_id = task_id;
		return refused(&s);
	}
	return 0;
}

int mc_stepd_init(struct mc_plugin *p, spank_t sp, int ac, char **av)
{
	/* memcore.conf is read once the step is known to have GPUs
	 * (mc_stepd_step): a CPU-only step never parses it. */
	p->ac = ac;
	p->av = av;
	return mc_plugin_register_options(p, sp);
}

void mc_stepd_init_post_opt(struct mc_plugin *p, spank_t sp)
{
	char err[MC_ERR_MAX];

	/* A bad MEMCORE_* value in the job's environment is kept and
	 * delivered with the verdict, as a bad option is. */
	if (mc_plugin_env_defaults(p, sp, true, err, sizeof(err)) < 0 &&
	    !p->opts_err[0])
		snprintf(p->opts_err, sizeof(p->opts_err), "%s", err);
	verdict_once(p, sp);
}

int mc_stepd_user_init(struct mc_plugin *p, spank_t sp)
{
	const struct mc_step *s = mc_stepd_step(p, sp);

	/* The decision says whether the step is held to its memory; p->enf
	 * stays as it started (zero: nothing held) unless it does
	 * (mc_enforce_user_init sets it up). */
	verdict_once(p, sp);
	if (s && !mc_step_ignored(s))
		mc_enforce_user_init(&p->enf, s, &p->decision, sp);
	return 0;
}

int mc_stepd_task_init_privileged(struct mc_plugin *p, spank_t sp)
{
	int task = -1, rc;

	spank_get_item(sp, S_TASK_ID, &task);
	mc_bind_task_init_privileged(p, sp);
	/* The verdict first; a step it lets run is held to its memory. */
	rc = deliver(p, sp, task);
	if (rc == 0 && p->decision.enforce)
		mc_enforce_task_init_privileged(&p->enf, task);
	return rc;
}

int mc_stepd_task_init(struct mc_plugin *p, spank_t sp)
{
	return mc_bind_task_init(p, sp, mc_stepd_step(p, sp));
}

int mc_stepd_task_post_fork(struct mc_plugin *p, spank_t sp)
{
	mc_enforce_task_post_fork(&p->enf, sp);
	mc_after_task_post_fork(p, sp);
	return 0;
}

int mc_stepd_task_exit(struct mc_plugin *p, spank_t sp)
{
	/* The summary reads the step's cgroup before enforce removes it. */
	mc_after_task_exit(p, sp);
	return mc_enforce_task_exit(&p->enf, p->opts.mode & MC_USER_EXPLAIN,
				    sp);
}

int mc_stepd_exit(struct mc_plugin *p, spank_t sp)
{
	int rc;

	mc_after_exit(p, sp);
	rc = mc_enforce_exit(&p->enf);
	free(p->verdict_text);	/* slurmstepd ends with no leak */
	p->verdict_text = NULL;
	return rc;
}
