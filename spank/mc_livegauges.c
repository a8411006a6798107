/*
 * mc_livegauges.c - the running step's live gauges (report/mc_gauges.h) in
 * the PrometheusTextfile's directory, in slurmstepd (root).
 *
 * Set up in the main thread once the sampler runs (task_post_fork): the
 * labels are resolved and checked, the directory opened, stale files of
 * killed slurmstepds removed; then the sampler thread rewrites the file
 * (mc_gaugefile_write: system calls only) at most every
 * MC_GAUGEFILE_EVERY_MS. At the step's end (the last task_exit, else
 * exit) the hook is taken off, the file removed and any failure said
 * once in slurmd's log: a failed write never fails the step.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "mc_gauges.h"
#include "mc_metrics.h"
#include "mc_plugin.h"
#include "mc_textfile.h"
#include "mc_util.h"
#include "mc_livegauges.h"
#include "mc_log.h"

/* The job's user's name from the node's name service, else its uid. */
static void user_name(uint32_t uid, char *buf, size_t len)
{
	char pwbuf[4096];
	struct passwd pw, *res = NULL;

	if (getpwuid_r((uid_t)uid, &pw, pwbuf, sizeof(pwbuf), &res) == 0 &&
	    res && res->pw_name && *res->pw_name)
		snprintf(buf, len, "%s", res->pw_name);
	else
		snprintf(buf, len, "%" PRIu32, uid);
}

static void on_sample(void *arg, const struct mc_sample *smp)
{
	mc_gaugefile_write(arg, smp->non_reclaimable_bytes, smp->file_bytes,
			   false);
}

void mc_livegauges_start(struct mc_plugin *p)
{
	struct mc_after *a = &p->after;
	struct mc_gaugefile *g = &a->gauges;
	const char *path = a->textfile, *slash, *step;
	char dir[PATH_MAX], node[MC_METRICS_LABEL_MAX], user[MC_METRICS_LABEL_MAX],
	     job[24];
	struct mc_gauge_ids ids;

	if (g->on || !*path || !a->sampler.started || a->refused)
		return;
	slash = strrchr(path, '/');
	step = strchr(p->step.step_name, '.');
	if (!slash || (size_t)(slash - path) >= sizeof(dir) || !step)
		return;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	step++;
	mc_textfile_node(node, sizeof(node));
	user_name(p->step.uid, user, sizeof(user));
	snprintf(job, sizeof(job), "%" PRIu32, p->step.job_id);
	ids.job = job;
	ids.step = step;
	ids.user = user;
	ids.node = node;
	ids.partition = p->step.partition;
	memset(g, 0, sizeof(*g));
	g->dfd = -1;
	if (mc_gauges_labels(&ids, g->labels, sizeof(g->labels)) < 0 ||
	    mc_gaugefile_name(g->name, node, (long)getpid(), p->step.job_id,
			      step) < 0) {
		mc_log_info("memcore: step %s: no live gauges in %s: a label "
			    "(user %s, node %s, partition %s) is no valid label "
			    "or file name part", p->step.step_name,
			    dir[0] ? dir : "/", user, node,
			    p->step.partition[0] ? p->step.partition : "-");
		return;
	}
	snprintf(g->tmp, sizeof(g->tmp), ".%s.tmp", g->name);
	/* The textfile's directory, as the textfile itself opens it. */
	g->dfd = mc_open_root_dir(dir[0] ? dir : "/");
	if (g->dfd < 0) {
		mc_log_info("memcore: step %s: no live gauges: cannot open %s "
			    "as a directory root's alone (%m)",
			    p->step.step_name, dir[0] ? dir : "/");
		return;
	}
	g->v[MC_G_LIMIT] = a->usage.asked_bytes;
	g->v[MC_G_RULE] = a->usage.rule_bytes;
	g->every_ms = MC_GAUGEFILE_EVERY_MS;
	g->on = true;
	mc_gaugefile_clean(g->dfd, node, (long)getpid());
	mc_sampler_set_hook(&a->sampler, on_sample, g);
}

void mc_livegauges_stop(struct mc_plugin *p)
{
	struct mc_after *a = &p->after;
	struct mc_gaugefile *g = &a->gauges;
	char node[MC_METRICS_LABEL_MAX];

	if (!g->on)
		return;
	/* No more writes once the sampler has stopped; a thread stuck in a
	 * read (left behind, mc_sampler.h) may still write once after
	 * that, and the next step on the node removes the file. */
	mc_sampler_set_hook(&a->sampler, NULL, NULL);
	if (mc_gaugefile_remove(g) < 0)
		mc_log_info("memcore: step %s: cannot remove its live gauges "
			    "file %s (%m)", p->step.step_name, g->name);
	if (g->failures)
		mc_log_info("memcore: step %s: live gauges file %s: %" PRIu64
			    " of %" PRIu64 " writes failed, the first could "
			    "not %s (%s)", p->step.step_name, g->name,
			    g->failures, g->failures + g->writes,
			    g->first_what, strerror(g->first_errno));
	mc_textfile_node(node, sizeof(node));
	mc_gaugefile_clean(g->dfd, node, (long)getpid());
	g->on = false;
	/* A thread left behind keeps its directory: never a reused fd. */
	if (!a->sampler.started || a->sampler.joined)
		close(g->dfd);
}
