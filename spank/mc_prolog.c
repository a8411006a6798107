/*
 * mc_prolog.c - the job prolog and epilog (S_CTX_JOB_SCRIPT: "slurmstepd
 * spank prolog/epilog", forked by slurmd, root): slurmd's own view of the
 * job kept for its steps (mc_jobview.h), and removed when the job ends on
 * the node; at the end also the job's staging directory LocalScratch=/job_J
 * (mc_scratch.h), where the dataset note has the user `memcore stage`.
 *
 * Neither ever fails: a failed prolog drains the node and requeues the
 * job, and a missing record only means the global policy for its steps.
 */
#include <stdint.h>
#include <stdlib.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "mc_jobview.h"
#include "mc_plugin.h"
#include "mc_prolog.h"
#include "mc_scratch.h"

static uint32_t job_id(spank_t sp)
{
	uint32_t id = 0;

	if (spank_get_item(sp, S_JOB_ID, &id) != ESPANK_SUCCESS)
		id = 0;
	return id;
}

void mc_prolog_job(spank_t sp, int ac, char **av)
{
	char dir[PATH_MAX], err[MC_ERR_MAX];
	uint32_t id = job_id(sp);

	if (!id || mc_jobview_dir(ac, av, mc_cache_default_path(), dir,
				  sizeof(dir)) < 0)
		return;
	/* The process environment here is slurmd's for the job (its
	 * partition from the job's credential), not the step's. */
	if (mc_jobview_write(dir, id, getenv("SLURM_JOB_PARTITION"), err,
			     sizeof(err)) < 0)
		slurm_error("memcore: job %u: cannot keep slurmd's view of the "
			    "job (%s): its steps get the global policy", id,
			    err);
}

/*
 * LocalScratch=/job_J of the job's partition (memcore.conf as the
 * plugstack names it), removed without following a symlink out of it.
 * What is left is said in slurmd's log, and the epilog still succeeds: a
 * failed epilog drains the node.
 */
static void scratch_job_end(uint32_t id, int ac, char **av)
{
	static struct mc_config cfg;
	static struct mc_policy pol;
	char cache[PATH_MAX], err[MC_ERR_MAX];
	long n;

	mc_config_plugstack(&cfg, ac, av, mc_cache_default_path(), cache,
			    sizeof(cache), err, sizeof(err));
	mc_config_policy(&cfg, getenv("SLURM_JOB_PARTITION"), &pol);
	if (!pol.local_scratch[0])
		return;
	n = mc_scratch_remove(pol.local_scratch, id, err, sizeof(err));
	if (n < 0)
		slurm_error("memcore: job %u: staging directory not removed "
			    "at the job's end: %s", id, err);
	else if (n > 0)
		slurm_debug("memcore: job %u: removed %s/job_%u (%ld entries)",
			    id, pol.local_scratch, id, n);
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
}
