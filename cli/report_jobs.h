/*
 * report_jobs.h - memcore report over several jobs (issue 38 item 8): a
 * line per job (asked RAM, peak non-reclaimable, efficiency, next time's
 * options) and a line per job name across its runs, for several job ids,
 * an array, or a user's jobs over a time window. One plain job id keeps
 * cmd_report.c's detailed view.
 */
#ifndef MC_REPORT_JOBS_H
#define MC_REPORT_JOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <slurm/slurm.h>

/* A JOBID argument: "12" (the job, or every task of array 12), "12_3",
 * "12_[1-3,5]". */
struct mc_jobspec {
	uint32_t job;
	bool tasks_given;		/* "_T" or "_[...]" */
	char tasks[128];		/* "3", "1-3,5" */
};

/* Parse s into js: 0, or -1 (not one of the forms, a job id outside 1 to
 * 4294967294, a task id past 4294967294). */
int mc_jobspec_parse(const char *s, struct mc_jobspec *js);

/* What the list view is asked for. */
struct mc_jobs_args {
	struct mc_jobspec *specs;	/* the JOBID arguments */
	size_t n_specs;
	const char *user;		/* -u USER, NULL none */
	time_t start, end;		/* -S, -E (end 0: now) */
	bool json;
};

/*
 * Parse a -S / -E DATE: YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS] (local time,
 * as sacct reads it), "now", or "now-Nd"/"now-Nh". 0, or -1.
 */
int mc_report_date(const char *s, time_t *t);

/*
 * The list view: the jobs from slurmctld, else slurmdbd when conf has
 * accounting (-u: slurmdbd first, slurmctld's jobs without it), each shown
 * only to its user, root and SlurmUser. Returns the exit status: 0 when
 * a job was shown, 1 none, 3 slurmctld did not answer.
 */
int mc_report_jobs(const struct mc_jobs_args *a, const slurm_conf_t *conf);

/* Slurm's base job state (enum job_states, the flags above it ignored) as
 * scontrol names it: "COMPLETED", ...; "UNKNOWN" past the last. */
const char *mc_job_state_name(uint32_t state);

#endif
