/*
 * mc_keepdbd.c - a copy of memcore's records in slurmdbd's SystemComment,
 * made at the job's end (mc_keepdbd.h).
 *
 * Why: the records live in the job's AdminComment (mc_keep.c), which
 * slurmdbd keeps after the job. Tools sites already run set that whole
 * field once the job has ended (Princeton's jobstats: its slurmctld
 * epilog runs `sacctmgr update job ... set AdminComment=JS1:...`), and
 * the records go with it. SystemComment is the field beside it: only an
 * administrator sets it in slurmdbd (as_mysql_modify_job), slurmctld
 * writes it at the job's end only when it holds one (burst buffer
 * plugins), and jobstats leaves it alone. `memcore report` reads the
 * records from AdminComment, and from this copy when AdminComment has
 * none (mc_jobrec_pick).
 *
 * When: the job epilog, after every step of the job kept its record (a
 * step's record is in before its tasks' exit reaches srun, mc_keep.c):
 * slurmctld's AdminComment holds the job's whole block by then, every
 * node's. The job's first node copies it (one slurmdbd connection per
 * job, not one per node); a copy that reads a newer block after its write
 * writes again. Other nodes, and jobs without a block, cost one job read
 * from slurmctld, in the detached process.
 *
 * How: in a detached process (mc_run_detached): slurmd never waits on
 * slurmdbd (a slow epilog drains the node), a crash or hang there never
 * touches the epilog, and the accounting_storage plugin libslurm loads
 * for the connection lives and dies with that process; an alarm bounds
 * it. Through the libslurm the epilog's slurmstepd has loaded
 * (slurm_load_job, slurmdb_job_modify), as sacctmgr does, never through
 * sacctmgr itself: it lowercases every value it sets (strip_quotes).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/slurmdb.h>

#include "mc_jobrec.h"
#include "mc_keepdbd.h"
#include "mc_log.h"
#include "mc_slurm_compat.h"
#include "mc_slurmdb_compat.h"
#include "mc_step.h"
#include "mc_detach.h"
#include "mc_util.h"

/* The copy's whole life, slurmdbd's connection timeouts included. */
#define KEEPDBD_ALARM_S 60
/* Writes when other nodes' records keep coming in, and the pause between
 * a write and the look at slurmctld's block after it. */
#define KEEPDBD_TRIES 4
#define KEEPDBD_SETTLE_MS 300

/* SystemComment in slurmdbd: what slurmctld keeps there, then memcore's
 * block (about 8 KiB, MC_JOBREC_MAX, and slurmctld's text). */
#define KEEPDBD_MAX (MC_JOBREC_MAX * 3)

/* slurmctld's AdminComment and SystemComment of job, and whether this
 * node is its first (true when slurmd did not name this node). 0, or
 * -1. */
static int comments(uint32_t job, char *ac, char *sc, size_t len,
		    bool *first)
{
	const char *me = getenv("SLURMD_NODENAME");
	char node[256];

	job_info_msg_t *m = NULL;
	int rc = -1;

	ac[0] = sc[0] = '\0';
	if (mc_load_job(&m, job) != 0 || !m)
		return -1;
	for (uint32_t i = 0; i < m->record_count; i++)
		if (m->job_array[i].job_id == job) {
			const job_info_t *j = &m->job_array[i];

			snprintf(ac, len, "%s",
				 j->admin_comment ? j->admin_comment : "");
			snprintf(sc, len, "%s",
				 j->system_comment ? j->system_comment : "");
			*first = !me || !j->nodes ||
				 mc_hostlist_nth(j->nodes, 0, node,
						 sizeof(node)) < 0 ||
				 !strcmp(node, me);
			rc = 0;
			break;
		}
	mc_free_job_info_msg(m);
	return rc;
}

/* The job's SystemComment in slurmdbd set to value. 0, or -1 with why. */
static int dbd_set(void *db, uint32_t job, const char *cluster,
		   const char *value, char *why, size_t whylen)
{
	slurmdb_job_cond_t cond;
	slurm_selected_step_t sel;
	slurmdb_job_rec_t rec;
	mc_list done;
	int rc = -1;

	if (mc_job_cond_one(&cond, &sel, job, cluster) < 0) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	cond.flags = JOBCOND_FLAG_NO_DEFAULT_USAGE;
	memset(&rec, 0, sizeof(rec));
	rec.derived_ec = NO_VAL;	/* 0 would set the job's to 0 */
	rec.system_comment = (char *)value;
	errno = 0;
	done = slurmdb_job_modify(db, &cond, &rec);
	if (done && slurm_list_count(done) > 0) {
		rc = slurmdb_connection_commit(db, true) == 0 ? 0 : -1;
		if (rc)
			snprintf(why, whylen, "slurmdbd did not commit it");
	} else {
		snprintf(why, whylen, "slurmdbd: %s", errno
			 ? slurm_strerror(errno)
			 : "it does not know the job (yet)");
	}
	if (done)
		slurm_list_destroy(done);
	mc_job_cond_free(&cond);
	return rc;
}

/* The detached copy (mc_run_detached). */
static void copy(void *arg)
{
	static char ac[KEEPDBD_MAX], sc[KEEPDBD_MAX], value[KEEPDBD_MAX];
	static char last[KEEPDBD_MAX];
	uint32_t job = *(uint32_t *)arg;
	slurm_conf_t *conf = NULL;
	char why[MC_ERR_MAX] = "";
	void *db = NULL;
	unsigned writes = 0;

	alarm(KEEPDBD_ALARM_S);
	for (unsigned t = 0; t < KEEPDBD_TRIES; t++) {
		const char *block;
		char *mine;
		bool first = true;

		if (comments(job, ac, sc, sizeof(ac), &first) < 0) {
			snprintf(why, sizeof(why), "slurmctld: %s",
				 slurm_strerror(errno));
			break;
		}
		block = mc_jobrec_block(ac);
		if (!first || !block || !strcmp(block, last))
			break;		/* another's, none, or the one written */
		if (!mc_jobrec_sql_safe(block)) {
			snprintf(why, sizeof(why), "its AdminComment's block "
				 "holds a character slurmdbd cannot take");
			break;
		}
		/* slurmctld's own text first, when slurmdbd can take it. */
		if ((mine = strstr(sc, MC_JOBREC_TAG)))
			*mine = '\0';
		if (!mc_jobrec_sql_safe(sc))
			sc[0] = '\0';
		snprintf(value, sizeof(value), "%s%s%s", sc, sc[0] ? " " : "",
			 block);
		if (!conf && (slurm_load_ctl_conf((time_t)0, &conf) != 0 ||
			      !conf)) {
			conf = NULL;
			snprintf(why, sizeof(why), "slurmctld: %s",
				 slurm_strerror(errno));
			break;
		}
		if (!conf->accounting_storage_type ||
		    !strstr(conf->accounting_storage_type, "slurmdbd"))
			break;	/* no slurmdbd: AdminComment is all there is */
		if (!db && !(db = slurmdb_connection_get(NULL))) {
			snprintf(why, sizeof(why), "slurmdbd does not answer");
			break;
		}
		if (dbd_set(db, job, conf->cluster_name, value, why,
			    sizeof(why)) < 0)
			break;
		snprintf(last, sizeof(last), "%s", block);
		writes++;
		why[0] = '\0';
		usleep(KEEPDBD_SETTLE_MS * 1000);
	}
	if (why[0])
		mc_log_error("memcore: job %u: records not copied to "
			     "slurmdbd's SystemComment (%s): a tool that "
			     "replaces the job's AdminComment after the job "
			     "takes them with it", job, why);
	else if (writes)
		mc_log_verbose("memcore: job %u: records copied to "
			       "slurmdbd's SystemComment (%u write%s)", job,
			       writes, writes == 1 ? "" : "s");
	if (db)
		slurmdb_connection_close(&db);
	if (conf)
		mc_free_ctl_conf(conf);
}

void mc_keepdbd_job_end(uint32_t job_id)
{
	if (mc_run_detached(copy, &job_id) < 0)
		mc_log_error("memcore: job %u: records not copied to "
			     "slurmdbd's SystemComment: fork: %m", job_id);
}
