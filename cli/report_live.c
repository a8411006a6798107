/*
 * report_live.c - a running job's steps, read now (report_live.h).
 *
 * The step's cgroup is found from a task's /proc/PID/cgroup, never built
 * from ids (mc_cgroup.h): Slurm's layout differs across releases and
 * cgroup versions, and memcore's own cgroups (task/none) are elsewhere.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <slurm/slurm.h>

#include "mc_cgroup.h"
#include "mc_jsonout.h"
#include "mc_memstat.h"
#include "mc_parse.h"
#include "mc_stepcg.h"
#include "mc_util.h"
#include "mc_slurm_compat.h"
#include "report_live.h"

/* This host's Slurm node name: the node whose NodeName or NodeHostname
 * is this host's name (full or up to its first '.'); "" when none. */
static void here_node(char *buf, size_t len)
{
	node_info_msg_t *nm = NULL;
	char host[256], shrt[256];

	buf[0] = '\0';
	if (gethostname(host, sizeof(host)) != 0)
		return;
	host[sizeof(host) - 1] = '\0';
	snprintf(shrt, sizeof(shrt), "%.*s", (int)strcspn(host, "."), host);
	if (slurm_load_node((time_t)0, &nm, SHOW_ALL) != 0 || !nm)
		return;
	for (uint32_t i = 0; i < nm->record_count && !buf[0]; i++) {
		const node_info_t *n = &nm->node_array[i];
		const char *hn = n->node_hostname ? n->node_hostname : "";

		if (n->name && (!strcmp(n->name, host) ||
				!strcmp(n->name, shrt) || !strcmp(hn, host) ||
				!strcmp(hn, shrt)))
			snprintf(buf, len, "%s", n->name);
	}
	slurm_free_node_info_msg(nm);
}

/* The memory cgroup of step job.step from its task pid: the step's level
 * (v1 job_J/step_S, v2 step_S/user: the table's slurm_step_dir), else
 * the task's own (memcore's own step cgroup holds its tasks directly). 0, or -1 with err. */
static int step_cgroup(pid_t pid, uint32_t job, uint32_t step,
		       struct mc_cgroup *cg, char *err, size_t len)
{
	struct mc_cgroup leaf;
	char token[16], dir[PATH_MAX];

	if (mc_cgroup_find(NULL, pid, &leaf, err, len) < 0)
		return -1;
	if (leaf.ops->slurm_step_dir(&leaf, job,
				     mc_stepcg_token(step, token,
						     sizeof(token)),
				     true, dir, sizeof(dir)) < 0) {
		*cg = leaf;
		return 0;
	}
	return mc_cgroup_at(dir, cg, err, len);
}

/* A pid of step id's tasks on node, from slurmd; 0 when none. */
static pid_t step_pid(slurm_step_id_t id, const char *node)
{
	job_step_pids_response_msg_t *r = NULL;
	job_step_pids_t *p;
	pid_t pid = 0;
	char nl[64];
	__typeof__(slurm_list_iterator_create(r->pid_list)) it;

	snprintf(nl, sizeof(nl), "%s", node);
	if (slurm_job_step_get_pids(&id, nl, &r) != 0 || !r)
		return 0;
	if (r->pid_list) {
		it = slurm_list_iterator_create(r->pid_list);
		while (!pid && (p = slurm_list_next(it)))
			if (p->pid_cnt && p->pid)
				pid = (pid_t)p->pid[0];
		slurm_list_iterator_destroy(it);
	}
	slurm_job_step_pids_response_msg_free(r);
	return pid;
}

/* Read step s (on this node) now. */
static void read_here(struct mc_live_step *s, slurm_step_id_t id)
{
	struct mc_cgroup cg;
	pid_t pid = step_pid(id, s->node);

	if (!pid) {
		snprintf(s->why, sizeof(s->why), "slurmd lists no task of "
			 "it (starting or ending)");
		return;
	}
	if (step_cgroup(pid, id.job_id, id.step_id, &cg, s->why,
			sizeof(s->why)) < 0 ||
	    mc_memstat_read(&cg, &s->m, s->why, sizeof(s->why)) < 0)
		return;
	snprintf(s->cgroup, sizeof(s->cgroup), "%s", cg.dir);
	s->read = true;
}

/* Step st's nodes into out from *n on, this node's read now. */
static void add_step(const job_step_info_t *st, const char *here,
		     struct mc_live_step *out, size_t *n, size_t max)
{
	mc_hostlist_t hl = slurm_hostlist_create(st->nodes ? st->nodes : "");
	char *node, step[48];
	uint32_t sid = st->step_id.step_id;

	if (sid == SLURM_BATCH_SCRIPT)
		snprintf(step, sizeof(step), "%" PRIu32 ".batch",
			 st->step_id.job_id);
	else
		snprintf(step, sizeof(step), "%" PRIu32 ".%" PRIu32,
			 st->step_id.job_id, sid);
	while (hl && *n < max && (node = slurm_hostlist_shift(hl))) {
		struct mc_live_step *s = &out[(*n)++];

		memset(s, 0, sizeof(*s));
		snprintf(s->step, sizeof(s->step), "%s", step);
		snprintf(s->node, sizeof(s->node), "%s", node);
		s->here = here[0] && !strcmp(node, here);
		if (s->here)
			read_here(s, st->step_id);
		free(node);
	}
	if (hl)
		slurm_hostlist_destroy(hl);
}

int mc_report_live(uint32_t job, struct mc_live_step *out, size_t max)
{
	job_step_info_response_msg_t *r = NULL;
	char here[64];
	size_t n = 0;

	if (mc_get_job_steps(job, &r) != 0)
		return -1;
	here_node(here, sizeof(here));
	for (uint32_t i = 0; r && i < r->job_step_count; i++) {
		const job_step_info_t *st = &r->job_steps[i];

		if (st->step_id.step_id == SLURM_EXTERN_CONT ||
		    st->state != JOB_RUNNING)
			continue;
		add_step(st, here, out, &n, max);
	}
	slurm_free_job_step_info_response_msg(r);
	return (int)n;
}

void mc_report_live_text(uint32_t job, const struct mc_live_step *s,
			 size_t n)
{
	char a[32], b[32], c[32];

	if (!n)
		printf("  running: no step of it runs now\n");
	for (size_t i = 0; i < n; i++, s++) {
		if (!s->here) {
			printf("  running: step %s on %s: its figures are on "
			       "%s: memcore report %" PRIu32 " there reads "
			       "them now (so does memcore usage --pid with "
			       "one of its tasks), and so do the gauges "
			       "memcore_step_memory_* where "
			       "PrometheusTextfile is set\n", s->step,
			       s->node, s->node, job);
			continue;
		}
		if (!s->read) {
			printf("  running: step %s on %s (this node): not "
			       "read: %s\n", s->step, s->node, s->why);
			continue;
		}
		printf("  running: step %s on %s (this node), now: "
		       "non-reclaimable %s, page cache %s, limit %s (cgroup "
		       "%s)\n", s->step, s->node,
		       mc_fmt_bytes(s->m.non_reclaimable_bytes, a, sizeof(a)),
		       mc_fmt_bytes(s->m.file_bytes, b, sizeof(b)),
		       s->m.limit_bytes == MC_MEM_UNLIMITED ? "none"
		       : mc_fmt_bytes(s->m.limit_bytes, c, sizeof(c)),
		       s->cgroup);
	}
}

static json_t *bytes_or_null(uint64_t v)
{
	return v == MC_MEM_UNLIMITED ? json_null() : mc_json_u64(v);
}

json_t *mc_report_live_json(const struct mc_live_step *s, size_t n)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < n; i++, s++) {
		json_t *o = json_object();

		json_object_set_new(o, "step", json_string(s->step));
		json_object_set_new(o, "node", json_string(s->node));
		json_object_set_new(o, "this_node", json_boolean(s->here));
		json_object_set_new(o, "cgroup", s->read
				    ? json_string(s->cgroup) : json_null());
		json_object_set_new(o, "nonreclaimable_bytes", s->read
				    ? mc_json_u64(s->m.non_reclaimable_bytes)
				    : json_null());
		json_object_set_new(o, "page_cache_bytes", s->read
				    ? mc_json_u64(s->m.file_bytes)
				    : json_null());
		json_object_set_new(o, "limit_bytes", s->read
				    ? bytes_or_null(s->m.limit_bytes)
				    : json_null());
		json_object_set_new(o, "unread", s->here && !s->read
				    ? json_string(s->why) : json_null());
		json_array_append_new(arr, o);
	}
	return arr;
}

const char *mc_report_refusal_note(uint32_t job, const char *nodes,
				   char *buf, size_t len)
{
	snprintf(buf, len, "a step refused at launch ran nothing and kept "
		 "nothing: its refusal is in the step's stderr (the job's "
		 "output for a batch step) and in slurmd's log on %s, "
		 "\"memcore: job %" PRIu32 ".S: refused: ...\", and counted "
		 "in memcore_steps_refused_total where PrometheusTextfile is "
		 "set", nodes && *nodes ? nodes : "the job's nodes", job);
	return buf;
}
