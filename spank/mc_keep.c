/*
 * mc_keep.c - keep the step's summary with the job: at
 * slurmstepd's end (root), memcore's record for this step and node goes
 * into the job's AdminComment (formats/mc_jobrec.h), where Slurm keeps it
 * with the job (slurmctld, then slurmdbd with accounting) and shows it only
 * to whom it lets read the job; `memcore report` reads it back. No daemon
 * of memcore's own, nothing on the node's disk but one lock file.
 *
 * The update goes through the libslurm already loaded in slurmstepd
 * (libslurmfull: slurm_load_job, slurm_update_job), as slurm_kill_job_step
 * in mc_nodes.c: memcore.so itself never links libslurm (a second copy in
 * slurmstepd).
 * Setting AdminComment needs root or SlurmUser (Slurm's
 * validate_operator), which slurmstepd is at exit; the user cannot.
 *
 * When: slurmctld refuses to change a job that has finished, and a job
 * ends when its batch script (or the srun that made it) does, which can
 * be at once after its last step. The record goes out at the last
 * task_exit, and that hook waits for it (MC_KEEP_TASK_EXIT_WAIT_MS at
 * most): slurmstepd calls task_exit for each task as it reaps it and
 * sends srun the tasks' exit only after (Slurm's
 * src/slurmd/slurmstepd/mgr.c, _wait_for_any_task before
 * stepd_send_pending_exit_msgs), so srun, and a batch script after it,
 * cannot end the job before the record is in. The batch step's own end
 * reaches slurmctld after its exit hook. The write runs in a thread of
 * its own so that the wait is bounded whatever slurmctld does; the exit
 * hook waits for the rest (MC_KEEP_EXIT_WAIT_MS).
 *
 * Many steps and nodes of a job end at once, and Slurm sets the whole
 * field (no append, no compare-and-set): read, merge, write, read again
 * to check that the record is there. On one node the steps of a job take
 * turns (mc_jobview_lock, a lock only root can open). Across nodes a
 * write based on a read from before another node's write undoes it: each
 * try that loses goes again after a growing pause (10 ms doubled to 400
 * ms, plus a share that differs per process) until KEEP_DEADLINE_MS, and
 * in a job of several nodes a record is checked once more KEEP_SETTLE_MS
 * after it was seen in (longer than one read-to-write of another node).
 * The merge replaces this step and node's record, so going again never
 * doubles it; a record no longer there because the bound moved it into
 * the aggregate is counted there, not written again.
 */
#define _GNU_SOURCE	/* pthread_timedjoin_np */
#include <errno.h>
#include <limits.h>
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
#include "mc_jobview.h"
#include "mc_slurm_compat.h"
#include "mc_thread.h"
#include "mc_plugin.h"
#include "mc_keep.h"
#include "mc_log.h"

/* The write's whole time: within the two waits of the hooks
 * (MC_KEEP_TASK_EXIT_WAIT_MS + MC_KEEP_EXIT_WAIT_MS). */
#define KEEP_DEADLINE_MS 6000
#define KEEP_BACKOFF_MS 10
#define KEEP_BACKOFF_MAX_MS 400
/* Jobs of several nodes: the second look. Longer than a read and a write
 * at slurmctld (2-10 ms here, 40 steps at once included). */
#define KEEP_SETTLE_MS 50

/* The job's AdminComment now, into buf ("" when none), and its node
 * count. 0, or -1. */
static int current(uint32_t job, char *buf, size_t len, uint32_t *nodes)
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
			*nodes = m->job_array[i].num_nodes;
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

static long since_ms(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (long)(t1.tv_sec - t0->tv_sec) * 1000L +
	       (t1.tv_nsec - t0->tv_nsec) / 1000000L;
}

static void unlock(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/*
 * Add record rec to job's AdminComment, whose text is cur (len bytes),
 * and read it back into cur, *nodes and *agg. Returns 0 written and read
 * back; 1 to try again (slurmctld refused the write for now, or another
 * node's write undid it); -1 never (no room, or the job has ended); why
 * says which.
 */
static int add_record(uint32_t job, const char *rec, char *cur, size_t len,
		      uint32_t *nodes, struct mc_jobrec_agg *agg,
		      unsigned tries, char *why, size_t whylen)
{
	static char next[MC_JOBREC_MAX * 2];
	const char *recs[1];
	size_t lens[1];
	job_desc_msg_t d;

	if (mc_jobrec_merge(cur, rec, next, sizeof(next), MC_JOBREC_MAX) < 0) {
		snprintf(why, whylen, "the job's AdminComment (%zu bytes) "
			 "leaves no room for it", strlen(cur));
		return -1;
	}
	slurm_init_job_desc_msg(&d);
	MC_JOB_DESC_SET_ID(&d, job);
	d.admin_comment = next;
	if (slurm_update_job(&d) != 0) {
		int e = errno;

		snprintf(why, whylen, "slurmctld: %s", slurm_strerror(e));
		return e == ESLURM_JOB_FINISHED || e == ESLURM_ALREADY_DONE ||
		       e == ESLURM_INVALID_JOB_ID ? -1 : 1;	/* for good */
	}
	if (current(job, cur, len, nodes) < 0 || !mc_jobrec_has(cur, rec)) {
		snprintf(why, whylen, "%u tries lost to other nodes' writes",
			 tries);
		return 1;
	}
	mc_jobrec_split(cur, recs, lens, 1, agg);
	return 0;
}

/* Before a try: the second look once the record is seen (a settle), or,
 * after a lost or unanswered try, a back-off with jitter that doubles up
 * to KEEP_BACKOFF_MAX_MS. false when the deadline (left ms) leaves no
 * time for it. */
static bool wait_turn(bool seen, bool *settled, unsigned tries,
		      long *backoff, long left)
{
	long w;

	if (seen && !*settled) {
		*settled = true;
		pause_ms(KEEP_SETTLE_MS);
		return true;
	}
	if (!tries)
		return true;
	w = *backoff + (long)((unsigned)getpid() * 7919u + tries * 104729u) %
		       (*backoff / 2 + 1);
	if (w >= left)
		return false;
	pause_ms(w);
	if (*backoff < KEEP_BACKOFF_MAX_MS)
		*backoff *= 2;
	return true;
}

static void *keep(void *arg)
{
	struct mc_plugin *p = arg;
	const struct mc_after *a = &p->after;
	static char cur[MC_JOBREC_MAX * 2];
	char rec[MC_SUMMARY_RECORD_MAX + 1], dir[PATH_MAX], err[MC_ERR_MAX];
	char why[MC_ERR_MAX] = "slurmctld did not answer";
	uint32_t job = p->step.job_id, nodes = 1;
	struct mc_jobrec_agg agg;
	struct timespec t0;
	unsigned agg_seen = 0, tries = 0;
	long backoff = KEEP_BACKOFF_MS;
	bool use_lock, seen = false, settled = false;
	int lock = -1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (mc_summary_record(&a->usage, &a->advice, p->step.step_name,
			      p->step.host, rec, sizeof(rec)) < 0)
		return NULL;
	use_lock = mc_jobview_dir(p->ac, p->av, mc_cache_default_path(), dir,
				  sizeof(dir)) == 0;
	for (;;) {
		long left = KEEP_DEADLINE_MS - since_ms(&t0);
		const char *recs[1];
		size_t lens[1];

		if (!wait_turn(seen, &settled, tries, &backoff, left))
			break;
		left = KEEP_DEADLINE_MS - since_ms(&t0);
		if (left <= 0)
			break;
		tries++;
		if (use_lock && lock < 0) {
			lock = mc_jobview_lock(dir, job, (unsigned)left, err,
					       sizeof(err));
			if (lock < 0 && errno == ETIMEDOUT) {
				snprintf(why, sizeof(why), "%s", err);
				break;
			}
			if (lock < 0) {	/* no lock to take here: unserialised */
				mc_log_info("memcore: job %s: %s: this node's "
					    "steps of the job write their "
					    "records without taking turns",
					    p->step.step_name, err);
				use_lock = false;
			}
		}
		if (current(job, cur, sizeof(cur), &nodes) < 0) {
			snprintf(why, sizeof(why), "slurmctld did not answer: "
				 "%s", slurm_strerror(errno));
			unlock(&lock);
			continue;
		}
		mc_jobrec_split(cur, recs, lens, 1, &agg);
		if (!mc_jobrec_has(cur, rec)) {
			int rc;

			/* Seen in before, gone since: pushed out into the
			 * aggregate by newer records (it counts this one),
			 * or undone by another node's late write. */
			if (seen && agg.steps > agg_seen)
				break;
			rc = add_record(job, rec, cur, sizeof(cur), &nodes, &agg,
					tries, why, sizeof(why));
			if (rc != 0) {
				unlock(&lock);
				seen = false;
				if (rc < 0)
					break;
				continue;
			}
			settled = false;
		}
		unlock(&lock);
		seen = true;
		agg_seen = agg.steps;
		/* One node: every writer of the job took its turn. */
		if (nodes <= 1 || settled)
			break;
	}
	unlock(&lock);
	if (seen) {
		mc_log_debug("memcore: job %s: summary kept in the job's "
			     "AdminComment (%zu bytes) in %ld ms, %u tries",
			     p->step.step_name, strlen(cur), since_ms(&t0),
			     tries);
		return NULL;
	}
	mc_log_info("memcore: job %s: the summary could not be kept with the "
		    "job (%s, after %ld ms); it is in the 'after the step' "
		    "line above only", p->step.step_name, why, since_ms(&t0));
	return NULL;
}

void mc_keep_start(struct mc_plugin *p)
{
	struct mc_keeper *k = &p->after.keeper;

	if (k->started)
		return;
	k->started = mc_thread_start(&k->thread, 0, false, keep, p) == 0;
	if (!k->started)
		keep(p);	/* no thread: in line, once */
}

bool mc_keep_wait(struct mc_plugin *p, unsigned ms)
{
	struct mc_keeper *k = &p->after.keeper;
	struct timespec dl;

	if (!k->started || k->joined)
		return true;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += ms / 1000;
	dl.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	k->joined = pthread_timedjoin_np(k->thread, NULL, &dl) == 0;
	return k->joined;
}
