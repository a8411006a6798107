/*
 * mc_plugin.h - the state of memcore.so in one Slurm process (srun, sbatch,
 * salloc, slurmd or one slurmstepd): the policy from plugstack.conf and
 * memcore.conf, and the user's options. This one struct (spank/memcore.c's
 * `plugin`) holds all of it, the option table Slurm keeps pointers to and
 * the hook timings included; every function below takes it explicitly.
 * SPANK option callbacks carry no context pointer, so the only other global
 * is the pointer they reach it through (mc_args.c).
 */
#ifndef MC_PLUGIN_H
#define MC_PLUGIN_H

#include <stdbool.h>

#include <slurm/spank.h>

#include "mc_after.h"
#include "mc_cache.h"
#include "mc_config.h"
#include "mc_decision.h"
#include "mc_enforce.h"
#include "mc_opts.h"
#include "mc_step.h"
#include "mc_topology.h"

/* The hooks whose time memcore.c adds up (spent_us). */
enum mc_hook { MC_HOOK_INIT, MC_HOOK_POST_OPT, MC_HOOK_USER_INIT,
	       MC_HOOK_POST_FORK, MC_HOOK_TASK_EXIT, MC_HOOK_EXIT,
	       MC_HOOK_TASK_PRIV, MC_HOOK_TASK_INIT, MC_HOOK_COUNT };

struct mc_plugin {
	bool initialized;		/* init ran (plugin listed twice?) */
	/* The plugstack arguments, kept from init: slurmstepd reads
	 * memcore.conf only for a step that has GPUs (mc_stepd_step). */
	int ac;
	char **av;
	bool configured;		/* mc_plugin_configure ran */
	struct mc_config cfg;
	/* A broken policy file or plugstack argument: "" when fine. Never
	 * fatal in remote init (that would drain the node); delivered to GPU
	 * steps. Fatal in slurmd's init, at its start (mc_slurmd.c). */
	char cfg_err[MC_ERR_MAX];
	struct mc_opts opts;
	/* An option value that arrived bad in slurmstepd (a newer srun, a
	 * hand-set variable): delivered with the verdict. */
	char opts_err[MC_ERR_MAX];
	/* The step's memory cgroup, from user_init on (mc_enforce.h). */
	struct mc_enforce enf;
	/* The node's facts, loaded at most once per process (slurmstepd and
	 * each task it forks see the copy made before the fork). */
	bool facts_loaded;
	struct mc_node_facts facts;
	/* The node-facts cache slurmd writes and slurmstepd reads
	 * (plugstack cache=PATH, default mc_cache_default_path(); "" = off). */
	char cache_path[PATH_MAX];
	/* slurmstepd: the step on this node, read once (mc_stepd_step),
	 * in init_post_opt before the tasks fork, so that every task and
	 * every later hook shares it. Its GPU list is the step's (in
	 * task_init, --gpus-per-task shows each task only its own). */
	bool step_loaded;
	int step_rc;			/* mc_step_read's: -1 malformed */
	struct mc_step step;
	char step_err[MC_ERR_MAX];
	/* The verdict, computed once per slurmstepd (mc_stepd.c) and
	 * delivered by each task in task_init_privileged. */
	bool verdict_done;
	int verdict_rc;			/* 0: the step runs; -1: refused */
	/* The decision (mc_decision.h): binding reads its workers,
	 * enforcement its limit, the summary its figures. */
	struct mc_decision decision;
	char *verdict_text;		/* local task 0 prints it; NULL none */
	/* What task_init needs but only task_init_privileged sees (the
	 * same task process runs both): the user's --cpu-bind (in
	 * task_init, task/affinity has replaced it with the mask it set).
	 * Filled by mc_bind_task_init_privileged. */
	char bind_user_cpu_bind[64];	/* SLURM_CPU_BIND_TYPE, "" none */
	/* Registered with Slurm, which keeps pointers to them: they live as
	 * long as the plugin (mc_plugin_register_options). */
	struct spank_option options[MC_OPT_COUNT];
	char option_help[MC_OPT_COUNT][320];
	/* memcore's own time in this process, hook by hook (memcore.c). */
	long spent_us[MC_HOOK_COUNT];
	/* After the step: the sampler and the summary (mc_after.h). */
	struct mc_after after;
};

/*
 * Parse plugstack.conf arguments: `config=PATH` (default
 * MC_DEFAULT_CONFIG), `cache=PATH|none` (the node-facts cache, default
 * mc_cache_default_path()) and any memcore.conf key as `key=value`, which
 * overrides the file. Fills p->cfg, p->cache_path and p->cfg_err.
 */
void mc_plugin_configure(struct mc_plugin *p, int ac, char **av);

/* Register the options with Slurm (every context that sees them). */
int mc_plugin_register_options(struct mc_plugin *p, spank_t sp);

/*
 * Apply the MEMCORE_* environment defaults: in srun/sbatch/salloc from the
 * process environment, in slurmstepd from the job's, whole whatever
 * their length. Returns 0 or -1 with err set (a bad value, or one longer
 * than MC_OPT_VALUE_MAX, named by its variable).
 */
int mc_plugin_env_defaults(struct mc_plugin *p, spank_t sp, bool remote,
			   char *err, size_t errlen);

/*
 * srun/sbatch/salloc (the user's own process): read --deepspeed-config and
 * --model-config as the user, check them with the options, and put their
 * figures in the job's environment (MEMCORE_JOB_FILES, mc_jobfiles.h).
 * Returns 0, or -1 with err naming the option, file, key and what was
 * expected.
 */
int mc_plugin_job_files(struct mc_plugin *p, spank_t sp, char *err,
			size_t errlen);

/*
 * The node's facts for this policy (TopologyFile or the live machine),
 * loaded on first use: from the node-facts cache when it matches, else
 * from hwloc with one log line saying why (mc_nodefacts.c). Returns a
 * pointer into p, or NULL with err set.
 */
const struct mc_node_facts *mc_plugin_facts(struct mc_plugin *p,
					    const struct mc_policy *pol,
					    char *err, size_t errlen);
/*
 * Slurm's own configuration of this node into f->slurm_gpus and
 * f->slurm_shards: the gpu and shard counts libslurm holds in slurmd
 * (slurm.conf's Gres= for this node, read before SPANK's slurmd init;
 * slurmctld schedules by the same line, and drains a node whose gres.conf
 * Count= is lower) and in slurmstepd (sent by slurmd with the step). 0 for a GRES
 * not configured. Only in slurmd or slurmstepd (mc_nodefacts.c).
 */
void mc_plugin_slurm_gres(struct mc_node_facts *f);
/* The same two counts, without facts (a step whose facts cannot load). */
void mc_plugin_slurm_counts(uint32_t *gpus, uint32_t *shards);
/* slurmstepd: the step, read on first use (then memcore.conf too,
 * unless the step is one memcore leaves alone); NULL when Slurm's view of
 * it is malformed (p->step_err says why) (mc_stepd.c). */
const struct mc_step *mc_stepd_step(struct mc_plugin *p, spank_t sp);
/* slurmstepd, init_post_opt: the verdict and its explanation, once per
 * step, before the tasks fork; never fails (mc_stepd.c). */
void mc_stepd_init_post_opt(struct mc_plugin *p, spank_t sp);
/* Job prolog (root, slurmd's environment): keep slurmd's view of the job
 * for its steps (mc_jobview.h). Never fails (mc_prolog.c). */
void mc_prolog_job(spank_t sp, int ac, char **av);
/* Job epilog (root): remove that record, and LocalScratch=/job_J
 * (mc_scratch.h). Never fails (mc_prolog.c). */
void mc_prolog_job_end(spank_t sp, int ac, char **av);
/* slurmd start: node facts cache, audit, the start line. -1 only for a
 * broken policy, which stops slurmd when memcore is `required`
 * (mc_slurmd.c). */
int mc_slurmd_init(struct mc_plugin *p);

/* slurmstepd, each in its own file; 0 or -1 as SPANK callbacks return. */
/* The step's verdict, delivered by this task (mc_stepd.c): -1 refused. */
int mc_stepd_task_init_privileged(struct mc_plugin *p, spank_t sp,
				  int task_id);
/* slurmstepd, first task_post_fork: start the step's sampler (mc_after.c). */
void mc_after_task_post_fork(struct mc_plugin *p, spank_t sp);
/* slurmstepd, each task_exit, before mc_enforce_task_exit: at the last
 * task, the step's summary (mc_after.c). */
void mc_after_task_exit(struct mc_plugin *p, spank_t sp);
/* slurmstepd, exit: the sampler ends at the latest here (mc_after.c). */
void mc_after_exit(struct mc_plugin *p, spank_t sp);
/* slurmstepd, last task_exit (root): the step's summary into the job's
 * AdminComment, from a thread of its own (mc_keep.c), serialised with the
 * job's other steps on this node and retried until a deadline; wait for
 * it ms at most: true when it is done (or never started), false when it
 * is still out (waited for again at exit; a thread still out then ends
 * with slurmstepd). */
void mc_keep_start(struct mc_plugin *p);
bool mc_keep_wait(struct mc_plugin *p, unsigned ms);
/* slurmstepd, exit (root): count the step in PrometheusTextfile
 * (mc_textfile.c), under a lock only root can open; never fails, never
 * waits more than 2 s for other steps' updates. */
void mc_textfile_add(const struct mc_plugin *p);
/* The node label of the textfile and the live gauges: the node's own
 * name as slurmd told slurmstepd (its process environment, which
 * slurmstepd sets from slurmd's config before any step; the step's
 * environment is the user's to write), else the host name, else
 * "unknown". Always terminated (len > 0). */
void mc_textfile_node(char *buf, size_t len);
/* slurmstepd (root): the running step's live gauges beside the
 * PrometheusTextfile (mc_gauges.c): start once its sampler runs (first
 * task_post_fork), stop once the sampler stopped (the file is removed).
 * Never fail; each is safe to call again. */
void mc_gauges_start(struct mc_plugin *p);
void mc_gauges_stop(struct mc_plugin *p);
/* Record the step's GPUs and the user's --cpu-bind for task_init; never
 * fails (mc_bind.c). */
void mc_bind_task_init_privileged(struct mc_plugin *p, spank_t sp);
/* Bind the task to its GPUs' NUMA cores, export MEMCORE_* (mc_bind.c).
 * Always 0: binding never stops a task. */
int mc_bind_task_init(struct mc_plugin *p, spank_t sp);

#endif
