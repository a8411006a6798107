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
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "mc_slurm_compat.h"
#include "mc_step.h"
#include "mc_log.h"

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

/* Is id in slurmctld's het_job_id_set ("123-125", "123,125-126")? */
static bool id_in_set(const char *set, uint32_t id, uint32_t *count)
{
	const char *p = set;
	bool in = false;

	*count = 0;
	while (p && *p) {
		char *end;
		unsigned long a = strtoul(p, &end, 10), b = a;

		if (end == p)
			return false;
		if (*end == '-') {
			p = end + 1;
			b = strtoul(p, &end, 10);
			if (end == p || b < a)
				return false;
		}
		if (id >= a && id <= b)
			in = true;
		*count += (uint32_t)(b - a + 1);
		if (*end && *end != ',')
			return false;
		p = *end ? end + 1 : end;
	}
	return in;
}

void mc_step_het_check(struct mc_step *s)
{
	job_info_msg_t *msg = NULL;
	const slurm_job_info_t *j = NULL;
	uint32_t n = 0, k = 0;

	if (s->het_checked)
		return;
	s->het_checked = true;
	if (!s->n_het)
		return;
	s->n_het = 0;
	if (mc_load_job(&msg, s->job_id) != 0 || !msg) {
		mc_log_info("memcore: step %s: slurmctld did not say whether "
			    "job %u is heterogeneous (%m): ended as its own "
			    "job's step only", s->step_name, s->job_id);
		return;
	}
	for (uint32_t i = 0; i < msg->record_count; i++)
		if (msg->job_array[i].job_id == s->job_id)
			j = &msg->job_array[i];
	if (!j || !j->het_job_id || j->het_job_id == NO_VAL ||
	    !j->het_job_id_set ||
	    !id_in_set(j->het_job_id_set, s->job_id, &n) ||
	    n > MC_HET_MAX) {
		mc_log_info("memcore: step %s: job %u is not heterogeneous by "
			    "slurmctld: the job environment's SLURM_HET_SIZE "
			    "and SLURM_JOB_ID_HET_GROUP_* are ignored",
			    s->step_name, s->job_id);
		mc_free_job_info_msg(msg);
		return;
	}
	/* The components, in order, from the set itself. */
	for (const char *p = j->het_job_id_set; *p && k < n;) {
		char *end;
		unsigned long a = strtoul(p, &end, 10), b = a;

		if (*end == '-')
			b = strtoul(end + 1, &end, 10);
		for (unsigned long id = a; id <= b && k < n; id++)
			s->het_job_id[k++] = (uint32_t)id;
		p = *end ? end + 1 : end;
	}
	s->n_het = k;
	mc_free_job_info_msg(msg);
}

/*
 * Runs in the refused task's own process, which exits as soon as memcore
 * returns: it becomes the job's user for good first (memcore never forks
 * or runs a program), so the requests can only reach steps the user could
 * cancel anyway.
 */
void mc_step_end_everywhere(const struct mc_step *step)
{
	struct mc_step c = *step;
	const struct mc_step *s = &c;

	if (s->uid == UINT32_MAX || s->gid == UINT32_MAX)
		return;
	if (setgroups(0, NULL) != 0 || setgid((gid_t)s->gid) != 0 ||
	    setuid((uid_t)s->uid) != 0 || getuid() != (uid_t)s->uid ||
	    (s->uid != 0 && setuid(0) == 0)) {
		mc_log_info("memcore: step %s: cannot become uid %u to end it "
			    "on its other nodes: %m", s->step_name, s->uid);
		return;
	}
	/* Let the other refusing nodes print their own lines first: the
	 * kill reaches their tasks too. */
	usleep(MC_STEP_END_DELAY_MS * 1000);
	mc_step_het_check(&c);	/* as the user, when not asked yet */
	if (!s->n_het) {
		if (mc_kill_job_step(s->job_id, s->step_id) != 0)
			mc_log_info("memcore: step %s: ending it on its other "
				    "nodes failed: %m", s->step_name);
		return;
	}
	/* A component without this step id has no part in the step. */
	for (uint32_t k = 0; k < s->n_het; k++)
		if (mc_kill_job_step(s->het_job_id[k], s->step_id) != 0)
			mc_log_debug("memcore: step %s: component job %u: %m",
				     s->step_name, s->het_job_id[k]);
}
