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

#endif
