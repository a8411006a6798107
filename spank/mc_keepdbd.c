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
 * When: the job epilog, on the job's first node only (slurmd's own
 * SLURM_JOB_NODELIST and SLURMD_NODENAME of the epilog's environment,
 * which a user cannot set: decided before any fork or RPC, so other
 * nodes cost nothing), once every node's epilog has ended: the job no
 * longer COMPLETING in slurmctld, every step's record (mc_keep.c) in its
 * AdminComment, every node's, a cancelled job's too. One write per job
 * (slurmdbd keeps each in its transaction table, PurgeTXNAfter).
 *
 * How: in a detached process (mc_run_detached): slurmd never waits on
 * slurmdbd (a slow epilog drains the node), a crash or hang there never
 * touches the epilog, and the accounting_storage plugin libslurm loads
 * for the connection lives and dies with that process; an alarm bounds
 * it. Through the libslurm the epilog's slurmstepd has loaded
 * (slurm_load_job, slurmdb_job_modify), as sacctmgr does, never through
 * sacctmgr itself: it lowercases every value it sets (strip_quotes).
 * Slurm 24.11 and later hand `slurmstepd spank epilog` a reduced
 * configuration without slurmdbd's address (pack_slurm_conf_lite in
 * src/slurmd/common/slurmstepd_init.c): the copy takes it from
 * slurmctld's answer (dbd_address). That path is compiled against 24.11
 * and 26.05 here but run only on 22.05 (the guests have no MariaDB).
 */
#include <errno.h>
#include <signal.h>
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
/* The wait for every node's epilog, polled at this pace. */
#define KEEPDBD_WAIT_S 40
#define KEEPDBD_POLL_MS 250

/* SystemComment in slurmdbd: what slurmctld keeps there, then memcore's
 * block (about 8 KiB, MC_JOBREC_MAX, and slurmctld's text). */
#define KEEPDBD_MAX (MC_JOBREC_MAX * 3)

/* slurmctld's AdminComment and SystemComment of job, and whether it is
 * still COMPLETING (some node's epilog runs). 0; -1 (errno) when
 * slurmctld does not answer or no longer knows the job. */
static int comments(uint32_t job, char *ac, char *sc, size_t len,
		    bool *completing)
{
	job_info_msg_t *m = NULL;
	int rc = -1;

	if (mc_load_job(&m, job) != 0 || !m)
		return -1;
	errno = ESLURM_INVALID_JOB_ID;
	for (uint32_t i = 0; i < m->record_count; i++)
		if (m->job_array[i].job_id == job) {
			const job_info_t *j = &m->job_array[i];

			snprintf(ac, len, "%s",
				 j->admin_comment ? j->admin_comment : "");
			snprintf(sc, len, "%s",
				 j->system_comment ? j->system_comment : "");
			*completing = j->job_state & JOB_COMPLETING;
			rc = 0;
			break;
		}
	mc_free_job_info_msg(m);
	return rc;
}

/*
 * slurmdbd's address in this process's libslurm configuration, from
 * slurmctld's (ctld) when the one this process was handed has none
 * (Slurm 24.11+'s `slurmstepd spank epilog`). Only the detached copy's:
 * it never returns to the epilog. libslurm's global, weak so that a
 * libslurm without it leaves the configuration as it is.
 */
extern slurm_conf_t slurm_conf __attribute__((weak));
static void dbd_address(const slurm_conf_t *ctld)
{
	if (!&slurm_conf || slurm_conf.accounting_storage_host ||
	    !ctld->accounting_storage_host)
		return;
	slurm_conf.accounting_storage_host =
		strdup(ctld->accounting_storage_host);
	if (ctld->accounting_storage_backup_host)
		slurm_conf.accounting_storage_backup_host =
			strdup(ctld->accounting_storage_backup_host);
	slurm_conf.accounting_storage_port = ctld->accounting_storage_port;
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
	uint32_t job = *(uint32_t *)arg;
	slurm_conf_t *conf = NULL;
	char why[MC_ERR_MAX] = "";
	const char *block;
	char *mine;
	bool seen = false, completing = true;
	void *db = NULL;

	/* A handler another plugin set would keep a hung copy alive. */
	signal(SIGALRM, SIG_DFL);
	alarm(KEEPDBD_ALARM_S);
	/* Every node's epilog ended: every record in. A job slurmctld has
	 * purged meanwhile (MinJobAge) is taken as last seen. */
	for (int t = 0; completing && t * KEEPDBD_POLL_MS < KEEPDBD_WAIT_S * 1000;
	     t++) {
		if (t)
			usleep(KEEPDBD_POLL_MS * 1000);
		if (comments(job, ac, sc, sizeof(ac), &completing) < 0) {
			if (!seen)
				snprintf(why, sizeof(why), "slurmctld: %s",
					 slurm_strerror(errno));
			break;
		}
		seen = true;
	}
	block = seen ? mc_jobrec_block(ac) : NULL;
	if (!block)
		goto out;	/* none kept, or slurmctld did not answer */
	if (!mc_jobrec_sql_safe(block)) {
		snprintf(why, sizeof(why), "its AdminComment's block holds a "
			 "character slurmdbd cannot take");
		goto out;
	}
	/* slurmctld's own text first, when slurmdbd can take it. */
	if ((mine = strstr(sc, MC_JOBREC_TAG)))
		*mine = '\0';
	if (!mc_jobrec_sql_safe(sc))
		sc[0] = '\0';
	snprintf(value, sizeof(value), "%s%s%s", sc, sc[0] ? " " : "", block);
	if (slurm_load_ctl_conf((time_t)0, &conf) != 0 || !conf) {
		conf = NULL;
		snprintf(why, sizeof(why), "slurmctld: %s",
			 slurm_strerror(errno));
		goto out;
	}
	if (!conf->accounting_storage_type ||
	    !strstr(conf->accounting_storage_type, "slurmdbd"))
		goto out;	/* no slurmdbd: AdminComment is all there is */
	dbd_address(conf);
	if (!(db = slurmdb_connection_get(NULL))) {
		snprintf(why, sizeof(why), "slurmdbd does not answer");
		goto out;
	}
	if (dbd_set(db, job, conf->cluster_name, value, why,
		    sizeof(why)) == 0)
		mc_log_verbose("memcore: job %u: records copied to slurmdbd's "
			       "SystemComment", job);
out:
	if (why[0])
		mc_log_error("memcore: job %u: records not copied to "
			     "slurmdbd's SystemComment (%s): a tool that "
			     "replaces the job's AdminComment after the job "
			     "takes them with it", job, why);
	if (db)
		slurmdb_connection_close(&db);
	if (conf)
		mc_free_ctl_conf(conf);
}

/* Is this node the job's first (the copy's)? From slurmd's environment
 * of the epilog; true when it names none (one copy too many is
 * harmless, none is not). */
static bool first_node(void)
{
	const char *list = getenv("SLURM_JOB_NODELIST"),
		   *me = getenv("SLURMD_NODENAME");
	char node[256];

	if (!list || !*list)
		list = getenv("SLURM_NODELIST");
	return !list || !*list || !me || !*me ||
	       mc_hostlist_nth(list, 0, node, sizeof(node)) < 0 ||
	       !strcmp(node, me);
}

void mc_keepdbd_job_end(uint32_t job_id)
{
	if (!first_node())
		return;
	if (mc_run_detached(copy, &job_id) < 0)
		mc_log_error("memcore: job %u: records not copied to "
			     "slurmdbd's SystemComment: fork: %m", job_id);
}
