/*
 * mc_stepd.c - slurmstepd: read the step's GPUs and allocation, compute the
 * verdict and deliver it in slurm_spank_task_init_privileged.
 *
 * Runs in every task's process (forked from slurmstepd, still root) before
 * the task's program. Local task 0 prints; every task fails when refused,
 * so that srun exits non-zero and a batch job ends FAILED, while the node
 * stays IDLE. A step of several nodes is judged on each by that node's
 * GPUs, allocation and facts; one node's refusal ends it on all of them.
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
#include "mc_step.h"

/* Print the lines on task 0 only: every task runs this. */
static void say(const struct mc_step *s, const char *text)
{
	if (s->task_id == 0)
		slurm_spank_log("%s", text);
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
		slurm_info("%s", line);	/* log only: the user has it once */
	return allow ? 0 : refused(s);
}

/* mc_plugin_facts() is in mc_nodefacts.c: the cache, else hwloc. */

int mc_stepd_task_init_privileged(struct mc_plugin *p, spank_t sp)
{
	const struct mc_node_facts *facts;
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

	if (mc_step_read(sp, &s, err, sizeof(err)) < 0) {
		mc_config_policy(&p->cfg, s.partition, &pol);
		return setup_error(p, &pol, &s, err);
	}
	/* The extern step runs no user task; steps without GPUs are not
	 * memcore's business. */
	if (mc_step_ignored(&s))
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
	facts = mc_plugin_facts(p, &pol, err, sizeof(err));
	if (!facts)
		return setup_error(p, &pol, &s, err);

	mc_facts_node(facts, &pol, &node);	/* the rules count the step's
						 * GPUs as the node's at least */
	req.gpus = s.gpus;
	req.nodes = s.nodes;
	mc_opts_request(&p->opts, &pol, &req);
	req.gpu_memory_bytes = mc_facts_step_gpu_memory(facts, &pol,
			s.gpu_idx, s.n_gpu_idx > 0 ? (size_t)s.n_gpu_idx : 0);
	req.unified_memory = node.unified_memory;

	alloc.mem_bytes = s.mem_mb ? s.mem_mb << 20 : node.ram_bytes;
	alloc.cores = s.cores >= 0 ? (uint32_t)s.cores : node.cores;
	alloc.job_cores = s.job_cores >= 0 ? (uint32_t)s.job_cores : 0;
	alloc.mem_source = s.mem_source;
	alloc.mem_form = s.mem_form;	/* the fix names the user's option */

	/* A user's mistake in the options is refused like a misfit. */
	why[0] = '\0';
	if (p->opts_err[0])
		snprintf(why, sizeof(why), "%s", p->opts_err);
	else
		mc_request_check(&pol, &req, why, sizeof(why));
	if (why[0]) {
		snprintf(err, sizeof(err), "memcore: step %s: %s", s.step_name,
			 why);
		say(&s, err);
		if (s.task_id == 0)
			slurm_info("memcore: job %s: refused: %s",
				   s.step_name, why);
		return refused(&s);
	}

	mc_verdict_compute(&pol, &req, &node, &alloc, &v);
	warn_ok = pol.mode == MC_MODE_WARN ||
		  ((p->opts.mode & MC_USER_WARN) && pol.allow_user_warn);
	refuse = !v.fits && !warn_ok;
	if (!v.fits || (p->opts.mode & MC_USER_EXPLAIN)) {
		char text[MC_EXPLAIN_LINES * (MC_EXPLAIN_LINE_MAX + 1) + 128];
		size_t used = 0;

		mc_verdict_explain(&pol, &v, s.step_name, s.host, &e);
		if (!v.fits && !refuse && e.n < MC_EXPLAIN_LINES)
			snprintf(e.line[e.n++], MC_EXPLAIN_LINE_MAX, "%s",
				 pol.mode == MC_MODE_WARN
				 ? "memcore: Mode=warn: the step runs anyway"
				 : "memcore: --memcore=warn: the step runs "
				   "anyway");
		if (!v.fits && refuse && (p->opts.mode & MC_USER_WARN) &&
		    e.n < MC_EXPLAIN_LINES)
			snprintf(e.line[e.n++], MC_EXPLAIN_LINE_MAX, "%s",
				 "memcore: --memcore=warn is not allowed here "
				 "(AllowUserWarn=no)");
		if (refuse && ends_everywhere(&s) && e.n < MC_EXPLAIN_LINES)
			snprintf(e.line[e.n++], MC_EXPLAIN_LINE_MAX,
				 s.n_het ? "memcore: step %s is ended on all "
					   "its nodes, in every component"
					 : "memcore: step %s is ended on all "
					   "its %u nodes",
				 s.step_name, s.nodes);
		/* One message, so that srun's own lines cannot land in the
		 * middle of the explanation. */
		text[0] = '\0';
		for (size_t i = 0; i < e.n && used < sizeof(text); i++)
			used += (size_t)snprintf(text + used,
						 sizeof(text) - used, "%s%s",
						 i ? "\n" : "", e.line[i]);
		say(&s, text);
	}
	outcome = v.fits ? "fits" : refuse ? "refused" : "warned";
	if (s.task_id == 0) {
		char need[32], have[32];

		slurm_info("memcore: job %s: %s: gpus=%u workers=%u ram "
			   "needed=%s allocated=%s cores needed=%u "
			   "allocated=%u node cores needed=%u has=%u "
			   "nodes=%u",
			   s.step_name, outcome, req.gpus,
			   req.dataloader_workers,
			   mc_fmt_bytes(v.ram_needed_bytes, need,
					sizeof(need)),
			   mc_fmt_bytes(v.ram_allocated_bytes, have,
					sizeof(have)),
			   v.cores_needed, v.cores_allocated,
			   v.node_cores_needed, v.node_cores, req.nodes);
	}
	if (refuse)
		return refused(&s);
	/* The step runs: hold it to its memory (mc_enforce.c). */
	mc_enforce_task_init_privileged(p, sp, s.task_id);
	return 0;
}
