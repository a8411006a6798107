/*
 * mc_nodes.c - a step's other nodes, through libslurm (see mc_step.h):
 * this node's name in the step's node list, and ending a refused step of
 * several nodes on all of them. Kept apart from mc_step.c, whose unit test
 * runs without libslurm.
 */
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "mc_slurm_compat.h"
#include "mc_step.h"

int mc_hostlist_nth(const char *list, uint32_t n, char *buf, size_t len)
{
	mc_hostlist_t hl = slurm_hostlist_create(list);
	char *host = NULL;
	int rc = -1;

	if (!hl)
		return -1;
	for (uint32_t i = 0; i <= n; i++) {
		free(host);
		host = slurm_hostlist_shift(hl);
		if (!host)
			break;
	}
	if (host && (size_t)snprintf(buf, len, "%s", host) < len)
		rc = 0;
	free(host);
	slurm_hostlist_destroy(hl);
	return rc;
}

/*
 * Runs in the refused task's own process, which exits as soon as memcore
 * returns: it becomes the job's user for good first (memcore never forks
 * or runs a program), so the requests can only reach steps the user could
 * cancel anyway.
 */
void mc_step_end_everywhere(const struct mc_step *s)
{
	if (s->uid == UINT32_MAX || s->gid == UINT32_MAX)
		return;
	if (setgroups(0, NULL) != 0 || setgid((gid_t)s->gid) != 0 ||
	    setuid((uid_t)s->uid) != 0 || getuid() != (uid_t)s->uid ||
	    (s->uid != 0 && setuid(0) == 0)) {
		slurm_info("memcore: step %s: cannot become uid %u to end it "
			   "on its other nodes: %m", s->step_name, s->uid);
		return;
	}
	/* Let the other refusing nodes print their own lines first: the
	 * kill reaches their tasks too. */
	usleep(MC_STEP_END_DELAY_MS * 1000);
	if (!s->n_het) {
		if (mc_kill_job_step(s->job_id, s->step_id) != 0)
			slurm_info("memcore: step %s: ending it on its other "
				   "nodes failed: %m", s->step_name);
		return;
	}
	/* A component without this step id has no part in the step. */
	for (uint32_t k = 0; k < s->n_het; k++)
		if (mc_kill_job_step(s->het_job_id[k], s->step_id) != 0)
			slurm_debug("memcore: step %s: component job %u: %m",
				    s->step_name, s->het_job_id[k]);
}
