/*
 * mc_keep.c - keep the step's summary with the job (issue 19 item 3): at
 * slurmstepd's exit (root), memcore's record for this step and node goes
 * into the job's AdminComment (policy/mc_jobrec.h), where Slurm keeps it
 * with the job (slurmctld, then slurmdbd with accounting) and shows it only
 * to whom it lets read the job; `memcore report` reads it back. No daemon
 * of memcore's own, nothing on the node's disk.
 *
 * The update goes through the libslurm already loaded in slurmstepd
 * (libslurmfull: slurm_load_job, slurm_update_job), as slurm_kill_job_step
 * in mc_nodes.c: memcore.so itself never links libslurm (a second copy in
 * slurmstepd).
 * Setting AdminComment needs root or SlurmUser (Slurm's
 * validate_operator), which slurmstepd is at exit; the user cannot.
 *
 * When: slurmctld refuses to change a job that has finished. The record
 * goes out at the last task_exit, from a thread of its own, so that the
 * step's end is not held up by slurmctld (three round trips), and the exit
 * hook waits for it (MC_KEEP_EXIT_WAIT_MS at most) before slurmstepd ends.
 * A step of a batch job (srun inside sbatch, and the batch step, whose end
 * slurmctld learns after this exit hook) is kept; a step of an allocation
 * that srun made itself ends with it, and when srun's end reaches
 * slurmctld first the record is refused ("Job has already finished") and
 * only slurmd's log line remains: said there.
 *
 * Several nodes and steps of a job end at once, and Slurm sets the whole
 * field: read, merge, write, read again to check that the record is
 * there, up to KEEP_TRIES times with a wait that differs per process.
 */
#define _GNU_SOURCE	/* pthread_timedjoin_np */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/spank.h>

#include "mc_jobrec.h"
#include "mc_slurm_compat.h"
#include "mc_plugin.h"

#define KEEP_TRIES 4

/* The job's AdminComment now, into buf ("" when none). 0, or -1. */
static int current(uint32_t job, char *buf, size_t len)
{
	job_info_msg_t *m = NULL;
	int rc = -1;

	buf[0] = '\0';
	if (mc_load_job(&m, job) != 0 || !m)
		return -1;
	for (uint32_t i = 0; i < m->record_count; i++)
		if (m->job_array[i].job_id == job) {
			snprintf(buf, len, "%s",
				 m->job_array[i].admin_comment
				 ? m->job_array[i].admin_comment : "");
			rc = 0;
			break;
		}
	mc_free_job_info_msg(m);
	return rc;
}

static void pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void *keep(void *arg)
{
	const struct mc_plugin *p = arg;
	const struct mc_after *a = &p->after;
	static char cur[MC_JOBREC_MAX * 2], next[MC_JOBREC_MAX * 2];
	char rec[MC_SUMMARY_RECORD_MAX + 1];
	uint32_t job = p->step.job_id;
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (mc_summary_record(&a->usage, &a->advice, p->step.step_name,
			      p->step.host, rec, sizeof(rec)) < 0)
		return NULL;
	for (int t = 0; t < KEEP_TRIES; t++) {
		job_desc_msg_t d;

		if (t)	/* another node wrote between our read and write */
			pause_ms(20L * t + getpid() % 37);
		if (current(job, cur, sizeof(cur)) < 0)
			break;
		if (mc_jobrec_has(cur, rec))
			return NULL;
		if (mc_jobrec_merge(cur, rec, next, sizeof(next),
				    MC_JOBREC_MAX) < 0)
			break;
		slurm_init_job_desc_msg(&d);
		MC_JOB_DESC_SET_ID(&d, job);
		d.admin_comment = next;
		if (slurm_update_job(&d) != 0) {
			slurm_info("memcore: job %s: cannot keep the summary "
				   "with the job (AdminComment): %m%s",
				   p->step.step_name,
				   errno == ESLURM_JOB_FINISHED
				   ? " (an allocation srun made ends with its "
				     "step: run steps in sbatch or salloc to "
				     "keep them)" : "");
			return NULL;
		}
		if (current(job, cur, sizeof(cur)) == 0 &&
		    mc_jobrec_has(cur, rec)) {
			clock_gettime(CLOCK_MONOTONIC, &t1);
			slurm_debug("memcore: job %s: summary kept in the "
				    "job's AdminComment (%zu bytes) in %ld us",
				    p->step.step_name, strlen(cur),
				    (long)((t1.tv_sec - t0.tv_sec) * 1000000L +
					   (t1.tv_nsec - t0.tv_nsec) / 1000));
			return NULL;
		}
	}
	slurm_info("memcore: job %s: the summary could not be kept with the "
		   "job (slurmctld unreachable, or %d tries lost to other "
		   "nodes); it is in this log line only", p->step.step_name,
		   KEEP_TRIES);
	return NULL;
}

void mc_keep_start(struct mc_plugin *p)
{
	struct mc_keeper *k = &p->after.keeper;
	sigset_t all, old;

	if (k->started)
		return;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	k->started = pthread_create(&k->thread, NULL, keep, p) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!k->started)
		keep(p);	/* no thread: in line, once */
}

void mc_keep_wait(struct mc_plugin *p, unsigned ms)
{
	struct mc_keeper *k = &p->after.keeper;
	struct timespec dl;

	if (!k->started || k->joined)
		return;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += ms / 1000;
	dl.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	k->joined = pthread_timedjoin_np(k->thread, NULL, &dl) == 0;
}
