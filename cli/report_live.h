/*
 * report_live.h - memcore report on a running job: its running steps and
 * what each holds now (issue 38 item 7). The records of the job's
 * AdminComment are written as each step ends (spank/mc_keep.c), so a
 * running step has none; its memory cgroup has the figures now, on the
 * node where it runs.
 */
#ifndef MC_REPORT_LIVE_H
#define MC_REPORT_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "mc_memstat.h"

#define MC_LIVE_STEPS_MAX 64

/* One running step on one node. */
struct mc_live_step {
	char step[48];			/* "12.0", "12.batch" */
	char node[64];
	bool here;			/* on the node this command runs on */
	bool read;			/* m holds its cgroup, read now */
	struct mc_memstat m;		/* here and read: its memory now */
	char cgroup[256];		/* the directory read, "" none */
	char why[256];			/* here and not read: why */
};

/*
 * The running steps of job (slurm_get_job_steps; the extern container
 * left out: no task of the job's runs in it), one entry per step and
 * node, at most max. A step on this node (the Slurm node whose NodeName
 * or NodeHostname is this host's name) is read now: a task's pid from
 * slurmd (slurm_job_step_get_pids, which slurmd answers to the job's
 * user, root and SlurmUser), its memory cgroup from /proc, the step's
 * level above the task's (Slurm's step_S, or step_S/user on cgroup v2),
 * then mc_memstat_read as memcore usage reads it. Returns how many, or
 * -1 when slurmctld does not answer (errno set).
 */
int mc_report_live(uint32_t job, struct mc_live_step *out, size_t max);

/* The steps as text, under the job's line: this node's figures, the
 * other nodes' with where to read them. */
void mc_report_live_text(uint32_t job, const struct mc_live_step *s,
			 size_t n);

/* The steps as the JSON array "running_steps". */
json_t *mc_report_live_json(const struct mc_live_step *s, size_t n);

/*
 * Where a step refused at launch left its refusal, for a job with no
 * record: its stderr, slurmd's log line "memcore: job J.S: refused: ..."
 * on nodes, and the cluster view's counter. Into buf; returns buf.
 */
const char *mc_report_refusal_note(uint32_t job, const char *nodes,
				   char *buf, size_t len);

#endif
