/*
 * mc_after.h - after the step, in slurmstepd: sample the step's
 * memory cgroup while it runs (mc_sampler.h), and at its end give the
 * summary (report/mc_summary.h): on the user's stderr with
 * --memcore=explain, Report=yes or an OOM kill; always one line in slurmd's
 * log.
 */
#ifndef MC_AFTER_H
#define MC_AFTER_H

#include <stdbool.h>
#include <stdint.h>

#include <slurm/spank.h>

#include "mc_gaugefile.h"
#include "mc_sampler.h"
#include "mc_summary.h"

/* The thread that keeps the record with the job (spank/mc_keep.c). */
struct mc_keeper {
	bool started, joined;
	pthread_t thread;
};

/* How long the last task_exit waits for it: srun learns that the tasks
 * ended only after that hook (spank/mc_keep.c), so a record in by then
 * is in before the job can end; a slurmctld slower than this delays each
 * step's end by this much at most, and the exit hook waits for the rest
 * (MC_KEEP_EXIT_WAIT_MS, when the job may already have ended). */
#define MC_KEEP_TASK_EXIT_WAIT_MS 3000
#define MC_KEEP_EXIT_WAIT_MS 5000

struct mc_after {
	/* Filled with the verdict (mc_stepd.c): what the step asked and the
	 * rule's figures; the rest at the step's end. */
	bool judged;
	bool refused;
	struct mc_used usage;
	struct mc_advice advice;
	uint32_t sample_interval_ms;	/* SampleInterval of the policy */
	bool report;			/* Report=yes */
	char textfile[256];		/* PrometheusTextfile=, "" none */
	struct mc_sampler sampler;
	bool clock_started;		/* at the first task_post_fork */
	struct timespec t_start;	/* CLOCK_MONOTONIC */
	struct rusage children_start;	/* slurmstepd's reaped tasks */
	struct mc_squeeze squeeze_start;	/* the counters then */
	uint32_t exited;		/* tasks seen at task_exit */
	bool summarized;		/* usage/advice complete */
	struct mc_keeper keeper;
	struct mc_gaugefile gauges;	/* the live gauges (mc_gauges.c) */
};

struct mc_plugin;

/* slurmstepd, first task_post_fork: start the step's sampler (mc_after.c). */
void mc_after_task_post_fork(struct mc_plugin *p, spank_t sp);
/* slurmstepd, each task_exit, before mc_enforce_task_exit: at the last
 * task, the step's summary (mc_after.c). */
void mc_after_task_exit(struct mc_plugin *p, spank_t sp);
/* slurmstepd, exit: the sampler ends at the latest here (mc_after.c). */
void mc_after_exit(struct mc_plugin *p, spank_t sp);

#endif
