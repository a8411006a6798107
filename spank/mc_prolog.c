/*
 * mc_prolog.c - the job prolog and epilog (S_CTX_JOB_SCRIPT: "slurmstepd
 * spank prolog/epilog", forked by slurmd, root): slurmd's own view of the
 * job kept for its steps (mc_jobview.h), and removed when the job ends on
 * the node; also the job's staging directory LocalScratch=/job_J
 * (mc_scratch.h), where the dataset note has the user `memcore stage`:
 * made for the job's user at the start, taken away at the end.
 *
 * Neither ever fails: a failed prolog drains the node and requeues the
 * job, and a missing record only means the global policy for its steps.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "mc_jobview.h"
#include "mc_keepdbd.h"
#include "mc_plugin.h"
#include "mc_log.h"
#include "mc_prolog.h"
#include "mc_scratch.h"

static uint32_t job_id(spank_t sp)
{
	uint32_t id = 0;

	if (spank_get_item(sp, S_JOB_ID, &id) != ESPANK_SUCCESS)
		id = 0;
	return id;
}

/* Where the detached sweeper's lines go (mc_scratch_sweep): slurmd's
 * log, whose descriptor the sweeper inherits. */
static void say(bool problem, const char *line)
{
	if (problem)
		mc_log_error("%s", line);
	else
		mc_log_info("%s", line);
}

/*
 * LocalScratch of the job's partition (memcore.conf as the plugstack
 * names it), opened into s; false when there is none, it was turned off
 * at load (said at error level: the administrator must hear it), or it
 * cannot be opened (said).
 */
static bool scratch_open(uint32_t id, int ac, char **av, struct mc_scratch *s)
{
	static struct mc_config cfg;	/* 1 MB: not on the stack */
	struct mc_policy pol;
	char cache[PATH_MAX], err[MC_ERR_MAX];

	mc_config_plugstack(&cfg, ac, av, mc_cache_default_path(), cache,
			    sizeof(cache), err, sizeof(err));
	/* The process environment here is slurmd's for the job. */
	mc_config_policy(&cfg, getenv("SLURM_JOB_PARTITION"), &pol);
	if (cfg.key_off[0])
		mc_log_error("memcore: job %u: %s", id, cfg.key_off);
	if (!pol.local_scratch[0])
		return false;
	if (mc_scratch_open(s, pol.local_scratch, err, sizeof(err)) == 0)
		return true;
	mc_log_error("memcore: job %u: no staging directory under "
		     "LocalScratch: %s", id, err);
	return false;
}

/* Leftovers (a squatter moved away, an earlier sweeper's crash) go now,
 * out of Slurm's wait. */
static void scratch_sweep(uint32_t id, struct mc_scratch *s)
{
	if (mc_scratch_pending(s) && mc_scratch_sweep_detached(s, say) < 0)
		mc_log_error("memcore: job %u: %s/%s not emptied: fork: %m",
			     id, s->path, MC_SCRATCH_TRASH);
}

/*
 * The prolog: LocalScratch/job_J made for the job's user, 0700 (a
 * squatter's job_J moved away first). Never fails: a failed prolog
 * drains the node; without job_J the user's stage fails and says why.
 */
static void scratch_job_start(spank_t sp, uint32_t id, int ac, char **av)
{
	struct mc_scratch s;
	char note[MC_ERR_MAX];
	uid_t uid;
	gid_t gid;
	int rc;

	if (!scratch_open(id, ac, av, &s))
		return;
	if (spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_GID, &gid) != ESPANK_SUCCESS)
		mc_log_error("memcore: job %u: the job's user is unknown here: "
			     "no staging directory made", id);
	else if ((rc = mc_scratch_make(&s, id, uid, gid, note,
				       sizeof(note))) < 0)
		mc_log_error("memcore: job %u: no staging directory made: %s",
			     id, note);
	else if (rc > 0)
		mc_log_error("memcore: job %u: %s", id, note);
	scratch_sweep(id, &s);
	mc_scratch_close(&s);
}

/*
 * The epilog: job_J renamed out of the user's reach at once, emptied by
 * a detached sweeper: the user's file count never decides how long the
 * epilog runs. What is left is said in slurmd's log, and the epilog still
 * succeeds: a failed epilog drains the node.
 */
static void scratch_job_end(uint32_t id, int ac, char **av)
{
	struct mc_scratch s;
	char err[MC_ERR_MAX];

	if (!scratch_open(id, ac, av, &s))
		return;
	if (mc_scratch_retire(&s, id, err, sizeof(err)) < 0)
		mc_log_error("memcore: job %u: staging directory not removed "
			     "at the job's end: %s", id, err);
	scratch_sweep(id, &s);
	mc_scratch_close(&s);
}

void mc_prolog_job(spank_t sp, int ac, char **av)
{
	char dir[PATH_MAX], err[MC_ERR_MAX];
	uint32_t id = job_id(sp);

	if (!id)
		return;
	/* The process environment here is slurmd's for the job (its
	 * partition from the job's credential), not the step's. */
	if (mc_jobview_dir(ac, av, mc_cache_default_path(), dir,
			   sizeof(dir)) == 0 &&
	    mc_jobview_write(dir, id, getenv("SLURM_JOB_PARTITION"), err,
			     sizeof(err)) < 0)
		mc_log_error("memcore: job %u: cannot keep slurmd's view of the "
			     "job (%s): its steps get the global policy", id,
			     err);
	scratch_job_start(sp, id, ac, av);
}

void mc_prolog_job_end(spank_t sp, int ac, char **av)
{
	char dir[PATH_MAX];
	uint32_t id = job_id(sp);

	if (!id)
		return;
	if (mc_jobview_dir(ac, av, mc_cache_default_path(), dir,
			   sizeof(dir)) == 0)
		mc_jobview_remove(dir, id);
	/* The job's own memory cgroup, if its last step could not. */
	mc_enforce_job_epilog(id);
	scratch_job_end(id, ac, av);
	/* The records, safe from tools that replace AdminComment. */
	mc_keepdbd_job_end(id);
}
