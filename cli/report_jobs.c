/*
 * report_jobs.c - memcore report over several jobs (report_jobs.h).
 *
 * Figures of a job, from its records (mc_jobrec.h), as seff and jobstats
 * put them: memory efficiency = the largest peak non-reclaimable of a
 * step on a node over the largest allocation a step had on a node (what
 * was asked for RAM); CPU efficiency = the CPU time of the job's steps
 * over their CPUs x wall time (CPUs as Slurm counts them: cores x
 * threads per core). Next time: the largest --mem advice of its steps, in
 * that step's own form, and the largest --cpus-per-gpu.
 */
#define _GNU_SOURCE	/* strptime */
#include <errno.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/slurmdb.h>

#include "cli.h"
#include "mc_jobrec.h"
#include "mc_jsonout.h"
#include "mc_parse.h"
#include "mc_slurm_compat.h"
#include "mc_slurmdb_compat.h"
#include "mc_summary.h"
#include "mc_util.h"
#include "report_jobs.h"


#define MC_JOB_ID_MAX 4294967294u
#define RECS_MAX 256

/* What the records of one job add up to. */
struct figures {
	size_t recs;
	uint64_t asked, peak;		/* the largest of a step on a node */
	uint64_t cpu_usec, cpu_avail_usec;
	bool advised;			/* some step gave advice */
	uint64_t next_mem;
	char next_opt[64];
	uint32_t next_cpg;
};

struct rjob {
	uint32_t job_id, array_job_id, array_task_id, uid;
	char name[128], state[32], nodes[256], source[16];
	time_t start, end;		/* end 0: not ended */
	struct figures f;
};

struct rjobs {
	struct rjob *v;
	size_t n, cap;
	size_t hidden;			/* not the caller's: left out */
};

const char *mc_job_state_name(uint32_t state)
{
	static const char *const names[] = {
		"PENDING", "RUNNING", "SUSPENDED", "COMPLETED", "CANCELLED",
		"FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL",
		"DEADLINE", "OUT_OF_MEMORY",
	};
	uint32_t base = state & JOB_STATE_BASE;

	return base < sizeof(names) / sizeof(names[0]) ? names[base]
						       : "UNKNOWN";
}

int mc_jobspec_parse(const char *s, struct mc_jobspec *js)
{
	char head[16], err[MC_ERR_MAX];
	const char *us = strchr(s, '_');
	size_t hl = us ? (size_t)(us - s) : strlen(s);
	const char *t;

	memset(js, 0, sizeof(*js));
	if (!hl || hl >= sizeof(head))
		return -1;
	memcpy(head, s, hl);
	head[hl] = '\0';
	if (mc_parse_count(head, MC_JOB_ID_MAX, &js->job, err,
			   sizeof(err)) < 0 || !js->job)
		return -1;
	if (!us)
		return 0;
	t = us + 1;
	if (*t == '[') {
		size_t l = strlen(t);

		if (l < 3 || t[l - 1] != ']' || l - 2 >= sizeof(js->tasks))
			return -1;
		snprintf(js->tasks, sizeof(js->tasks), "%.*s", (int)(l - 2),
			 t + 1);
	} else {
		snprintf(js->tasks, sizeof(js->tasks), "%s", t);
	}
	if (!js->tasks[0] ||
	    strspn(js->tasks, "0123456789-,") != strlen(js->tasks))
		return -1;
	js->tasks_given = true;
	return 0;
}

/* Is task t in set ("1-3,5")? */
static bool task_in(const char *set, uint32_t t)
{
	while (*set) {
		char *end;
		unsigned long lo = strtoul(set, &end, 10), hi = lo;

		if (*end == '-')
			hi = strtoul(end + 1, &end, 10);
		if (t >= lo && t <= hi)
			return true;
		set = *end == ',' ? end + 1 : end + strlen(end);
	}
	return false;
}

/* Does a job (id, array job, task) match spec? */
static bool spec_has(const struct mc_jobspec *js, uint32_t id,
		     uint32_t array_job, uint32_t task)
{
	bool in_array = array_job == js->job && task != NO_VAL;

	if (js->tasks_given)
		return in_array && task_in(js->tasks, task);
	return id == js->job || in_array;
}

int mc_report_date(const char *s, time_t *t)
{
	struct tm tm = { 0 };
	const char *end;
	char *e;

	if (!strncmp(s, "now", 3)) {
		unsigned long n = 0;

		*t = time(NULL);
		if (!s[3])
			return 0;
		if (s[3] != '-')
			return -1;
		n = strtoul(s + 4, &e, 10);
		if (e == s + 4 || (strcmp(e, "d") && strcmp(e, "h")))
			return -1;
		*t -= (time_t)n * (*e == 'd' ? 86400 : 3600);
		return 0;
	}
	end = strptime(s, "%Y-%m-%d", &tm);
	if (end && *end == 'T')
		end = strptime(end + 1, "%H:%M", &tm);
	if (end && *end == ':')
		end = strptime(end + 1, "%S", &tm);
	if (!end || *end)
		return -1;
	tm.tm_isdst = -1;
	*t = mktime(&tm);
	return *t == (time_t)-1 ? -1 : 0;
}

/* Add the figures of one record. */
static void figures_add(struct figures *f, const struct mc_used *u,
			const struct mc_advice *a)
{
	uint64_t cpus = (uint64_t)u->cores_allocated *
			(u->threads_per_core ? u->threads_per_core : 1);

	f->recs++;
	if (u->asked_bytes > f->asked)
		f->asked = u->asked_bytes;
	if (u->peak.nr_bytes > f->peak)
		f->peak = u->peak.nr_bytes;
	f->cpu_usec += u->cpu_usec;
	f->cpu_avail_usec += cpus * u->wall_usec;
	if (a->too_few)
		return;
	f->advised = true;
	if (a->mem_bytes > f->next_mem) {
		f->next_mem = a->mem_bytes;
		mc_summary_mem_option(u, a->mem_bytes, f->next_opt,
				      sizeof(f->next_opt));
	}
	if (a->cpus_per_gpu > f->next_cpg)
		f->next_cpg = a->cpus_per_gpu;
}

/* The figures of the records in comment (NULL: none). */
static void figures_of(const char *comment, struct figures *f)
{
	const char *recs[RECS_MAX];
	size_t lens[RECS_MAX], n;
	struct mc_jobrec_agg agg;

	memset(f, 0, sizeof(*f));
	n = mc_jobrec_split(comment, recs, lens, RECS_MAX, &agg);
	for (size_t i = 0; i < n; i++) {
		char rec[MC_SUMMARY_RECORD_MAX + 1], step[48], host[64];
		struct mc_used u;
		struct mc_advice a;

		if (lens[i] >= sizeof(rec))
			continue;
		memcpy(rec, recs[i], lens[i]);
		rec[lens[i]] = '\0';
		if (mc_summary_record_parse(rec, &u, &a, step, sizeof(step),
					    host, sizeof(host)) == 0)
			figures_add(f, &u, &a);
	}
	if (agg.steps - agg.unknown && agg.peak_bytes > f->peak)
		f->peak = agg.peak_bytes;
}

/* A slot for job id (a job already there from another source or spec
 * is not added again): NULL when it is there or memory is short. */
static struct rjob *slot(struct rjobs *js, uint32_t id)
{
	for (size_t i = 0; i < js->n; i++)
		if (js->v[i].job_id == id)
			return NULL;
	if (js->n == js->cap) {
		size_t cap = js->cap ? js->cap * 2 : 16;
		struct rjob *v = realloc(js->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		js->v = v;
		js->cap = cap;
	}
	memset(&js->v[js->n], 0, sizeof(js->v[0]));
	return &js->v[js->n++];
}

/* Slurm showed it; memcore shows it to its user and the admins. */
static bool may_see(uint32_t uid, const slurm_conf_t *conf)
{
	uid_t me = getuid();

	return me == 0 || me == conf->slurm_user_id || me == uid;
}

/* One job from slurmctld into js. */
static void add_ctld(struct rjobs *js, const job_info_t *j,
		     const slurm_conf_t *conf)
{
	struct rjob *r;

	if (!may_see(j->user_id, conf)) {
		js->hidden++;
		return;
	}
	if (!(r = slot(js, j->job_id)))
		return;
	r->job_id = j->job_id;
	r->array_job_id = j->array_job_id;
	r->array_task_id = j->array_task_id;
	r->uid = j->user_id;
	snprintf(r->name, sizeof(r->name), "%s", j->name ? j->name : "");
	snprintf(r->state, sizeof(r->state), "%s", mc_job_state_name(j->job_state));
	snprintf(r->nodes, sizeof(r->nodes), "%s", j->nodes ? j->nodes : "");
	snprintf(r->source, sizeof(r->source), "slurmctld");
	r->start = j->start_time;
	/* A running job's end_time is when its time limit ends it. */
	r->end = (j->job_state & JOB_STATE_BASE) > JOB_SUSPENDED
		 ? j->end_time : 0;
	figures_of(j->admin_comment, &r->f);
}

/* One job from slurmdbd into js. */
static void add_dbd(struct rjobs *js, const slurmdb_job_rec_t *j,
		    const slurm_conf_t *conf)
{
	struct rjob *r;

	if (!may_see(j->uid, conf)) {
		js->hidden++;
		return;
	}
	if (!(r = slot(js, j->jobid)))
		return;
	r->job_id = j->jobid;
	r->array_job_id = j->array_job_id;
	r->array_task_id = j->array_task_id;
	r->uid = j->uid;
	snprintf(r->name, sizeof(r->name), "%s",
		 j->jobname ? j->jobname : "");
	snprintf(r->state, sizeof(r->state), "%s", mc_job_state_name(j->state));
	snprintf(r->nodes, sizeof(r->nodes), "%s", j->nodes ? j->nodes : "");
	snprintf(r->source, sizeof(r->source), "slurmdbd");
	r->start = j->start;
	r->end = (j->state & JOB_STATE_BASE) > JOB_SUSPENDED ? j->end : 0;
	/* The job epilog's copy when AdminComment lost it (mc_keepdbd.c). */
	figures_of(mc_jobrec_pick(j->admin_comment, j->system_comment, NULL),
		   &r->f);
}

/* The jobs of spec from slurmctld: how many matched, -1 when it does
 * not answer; *array: some were an array's tasks. */
static int ctld_spec(struct rjobs *js, const struct mc_jobspec *spec,
		     const slurm_conf_t *conf, bool *array)
{
	job_info_msg_t *m = NULL;
	int n = 0;

	if (mc_load_job(&m, spec->job) != 0) {
		if (errno == ESLURM_INVALID_JOB_ID)
			return 0;
		fprintf(stderr, "memcore: report: job %" PRIu32 ": %s\n",
			spec->job, slurm_strerror(errno));
		return -1;
	}
	for (uint32_t i = 0; m && i < m->record_count; i++) {
		const job_info_t *j = &m->job_array[i];

		if (spec_has(spec, j->job_id, j->array_job_id,
			     j->array_task_id)) {
			add_ctld(js, j, conf);
			*array |= j->array_task_id != NO_VAL;
			n++;
		}
	}
	mc_free_job_info_msg(m);
	return n;
}

/* The jobs slurmdbd gives for cond (its cluster set here), each kept
 * when keep says so (spec NULL: all). -1 when slurmdbd does not answer. */
static int dbd_get(struct rjobs *js, slurmdb_job_cond_t *cond,
		   const struct mc_jobspec *spec, const slurm_conf_t *conf)
{
	void *db = slurmdb_connection_get(NULL);
	mc_list jobs;
	mc_list_iter it;
	slurmdb_job_rec_t *j;

	if (!db)
		return -1;
	cond->cluster_list = slurm_list_create(NULL);
	if (cond->cluster_list && conf->cluster_name)
		slurm_list_append(cond->cluster_list, conf->cluster_name);
	cond->flags |= JOBCOND_FLAG_NO_STEP;
	cond->db_flags = SLURMDB_JOB_FLAG_NOTSET;	/* any */
	jobs = slurmdb_jobs_get(db, cond);
	if (cond->cluster_list)
		slurm_list_destroy(cond->cluster_list);
	cond->cluster_list = NULL;
	if (jobs) {
		it = slurm_list_iterator_create(jobs);
		while ((j = slurm_list_next(it)))
			if (!spec || spec_has(spec, j->jobid, j->array_job_id,
					      j->array_task_id))
				add_dbd(js, j, conf);
		slurm_list_iterator_destroy(it);
		slurm_list_destroy(jobs);
	}
	slurmdb_connection_close(&db);
	return jobs ? 0 : -1;
}

/* The jobs of spec from slurmdbd (whenever they ran, as sacct -j). */
static int dbd_spec(struct rjobs *js, const struct mc_jobspec *spec,
		    const slurm_conf_t *conf)
{
	slurmdb_job_cond_t cond;
	slurm_selected_step_t sel;
	int rc;

	if (mc_job_cond_one(&cond, &sel, spec->job, NULL) < 0)
		return -1;
	rc = dbd_get(js, &cond, spec, conf);
	mc_job_cond_free(&cond);
	return rc;
}

/* -u USER over [start, end] from slurmdbd. */
static int dbd_user(struct rjobs *js, uint32_t uid, time_t start,
		    time_t end, const slurm_conf_t *conf)
{
	slurmdb_job_cond_t cond;
	char u[16];
	int rc;

	memset(&cond, 0, sizeof(cond));
	snprintf(u, sizeof(u), "%" PRIu32, uid);
	cond.userid_list = slurm_list_create(NULL);
	if (!cond.userid_list)
		return -1;
	slurm_list_append(cond.userid_list, u);
	cond.usage_start = start;
	cond.usage_end = end;
	rc = dbd_get(js, &cond, NULL, conf);
	slurm_list_destroy(cond.userid_list);
	return rc;
}

/* -u USER over [start, end] from slurmctld (no slurmdbd): the jobs it
 * still knows that ran in the window. */
static int ctld_user(struct rjobs *js, uint32_t uid, time_t start,
		     time_t end, const slurm_conf_t *conf)
{
	job_info_msg_t *m = NULL;

	if (slurm_load_job_user(&m, uid, SHOW_ALL) != 0) {
		fprintf(stderr, "memcore: report: slurmctld does not answer: "
			"%s\n", slurm_strerror(errno));
		return -1;
	}
	for (uint32_t i = 0; m && i < m->record_count; i++) {
		const job_info_t *j = &m->job_array[i];
		bool ended = (j->job_state & JOB_STATE_BASE) > JOB_SUSPENDED;

		if (!j->start_time || j->start_time > end ||
		    (ended && j->end_time < start))
			continue;
		add_ctld(js, j, conf);
	}
	mc_free_job_info_msg(m);
	return 0;
}

/* Every job asked for into js. 0, or the exit status. */
static int collect(struct rjobs *js, const struct mc_jobs_args *a,
		   const slurm_conf_t *conf, bool accounting)
{
	time_t end = a->end ? a->end : time(NULL);

	if (a->user) {
		struct passwd *pw = getpwnam(a->user);
		uint32_t uid;
		char err[MC_ERR_MAX];

		if (pw)
			uid = pw->pw_uid;
		else if (mc_parse_count(a->user, UINT32_MAX - 1, &uid, err,
					sizeof(err)) < 0)
			return mc_cli_usage_error("report: -u %s: no such "
						  "user", a->user);
		if (accounting && dbd_user(js, uid, a->start, end, conf) == 0)
			return 0;
		return ctld_user(js, uid, a->start, end, conf) < 0
		       ? MC_EXIT_UNREACHABLE : 0;
	}
	for (size_t i = 0; i < a->n_specs; i++) {
		bool array = false;
		int n = ctld_spec(js, &a->specs[i], conf, &array);

		if (n < 0)
			return MC_EXIT_UNREACHABLE;
		/* An array's tasks leave slurmctld one by one (MinJobAge
		 * after each ends): those gone come from slurmdbd, those
		 * still there stay slurmctld's (slot). */
		if ((!n || array) && accounting)
			dbd_spec(js, &a->specs[i], conf);
	}
	return 0;
}

static void job_label(const struct rjob *r, char *buf, size_t len)
{
	if (r->array_task_id != NO_VAL && r->array_job_id)
		snprintf(buf, len, "%" PRIu32 "_%" PRIu32, r->array_job_id,
			 r->array_task_id);
	else
		snprintf(buf, len, "%" PRIu32, r->job_id);
}

/* part / whole as a share, -1 when whole is 0. */
static double share(uint64_t part, uint64_t whole)
{
	return whole ? (double)part / (double)whole : -1.0;
}

static const char *pct(double s, char *buf, size_t len)
{
	if (s < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f%%", s * 100.0);
	return buf;
}

/* What a job without figures gets in the NEXT TIME column. */
static const char *no_figures(const struct rjob *r)
{
	if (!strcmp(r->state, "RUNNING"))
		return "(running: no step ended yet; memcore report JOBID "
		       "shows its steps now)";
	if (!strcmp(r->state, "PENDING"))
		return "(pending)";
	return "(nothing kept: no GPU step ran to its end under memcore; "
	       "a refused one: memcore report JOBID)";
}

static void job_line(const struct rjob *r)
{
	const struct figures *f = &r->f;
	char id[32], b1[32], b2[32], p1[16], p2[16], next[96];

	job_label(r, id, sizeof(id));
	if (!f->recs) {
		printf("%-14s %-16.16s %-13s %-11s %-11s %-7s %-7s %s\n", id,
		       r->name, r->state, "-", "-", "-", "-", no_figures(r));
		return;
	}
	if (!f->advised)
		snprintf(next, sizeof(next), "(too few samples)");
	else
		snprintf(next, sizeof(next), "%s --cpus-per-gpu=%" PRIu32,
			 f->next_opt, f->next_cpg);
	printf("%-14s %-16.16s %-13s %-11s %-11s %-7s %-7s %s\n", id,
	       r->name, r->state, mc_fmt_bytes(f->asked, b1, sizeof(b1)),
	       mc_fmt_bytes(f->peak, b2, sizeof(b2)),
	       pct(share(f->peak, f->asked), p1, sizeof(p1)),
	       pct(share(f->cpu_usec, f->cpu_avail_usec), p2, sizeof(p2)),
	       next);
}

/* Across the runs of one job name: how many, the largest peak and
 * which job had it, the --mem that covers every run. */
struct name_sum {
	const char *name;
	size_t runs;
	uint64_t peak;
	const struct rjob *peak_job, *mem_job;	/* NULL none */
};

static void name_sum(const struct rjobs *js, size_t first,
		     struct name_sum *s)
{
	memset(s, 0, sizeof(*s));
	s->name = js->v[first].name;
	for (size_t i = first; i < js->n; i++) {
		const struct rjob *r = &js->v[i];

		if (strcmp(r->name, s->name))
			continue;
		s->runs++;
		if (r->f.recs && (!s->peak_job || r->f.peak > s->peak)) {
			s->peak = r->f.peak;
			s->peak_job = r;
		}
		if (r->f.advised &&
		    (!s->mem_job || r->f.next_mem > s->mem_job->f.next_mem))
			s->mem_job = r;
	}
}

/* Is js->v[i]'s name the first of its kind? */
static bool first_of_name(const struct rjobs *js, size_t i)
{
	for (size_t k = 0; k < i; k++)
		if (!strcmp(js->v[k].name, js->v[i].name))
			return false;
	return true;
}

static void names_text(const struct rjobs *js)
{
	printf("by job name, across its runs:\n");
	for (size_t i = 0; i < js->n; i++) {
		struct name_sum s;
		char b[32], id[32];

		if (!first_of_name(js, i))
			continue;
		name_sum(js, i, &s);
		printf("  %s: %zu run%s", s.name[0] ? s.name : "(no name)",
		       s.runs, s.runs == 1 ? "" : "s");
		if (!s.peak_job) {
			printf(", none with figures\n");
			continue;
		}
		job_label(s.peak_job, id, sizeof(id));
		printf(", largest peak non-reclaimable %s (job %s)",
		       mc_fmt_bytes(s.peak, b, sizeof(b)), id);
		if (s.mem_job)
			printf("; %s covers every run\n",
			       s.mem_job->f.next_opt);
		else
			printf("; no advice (too few samples)\n");
	}
}

static void jobs_text(const struct rjobs *js)
{
	printf("memcore: %zu job%s\n", js->n, js->n == 1 ? "" : "s");
	printf("%-14s %-16s %-13s %-11s %-11s %-7s %-7s %s\n", "JOB", "NAME",
	       "STATE", "ASKED", "PEAK", "MEM", "CPU", "NEXT TIME");
	for (size_t i = 0; i < js->n; i++)
		job_line(&js->v[i]);
	names_text(js);
}

/* "start_time" (ISO 8601 UTC) and "start_epoch" for t (0: null). */
static void time_json(json_t *o, const char *key, const char *ekey,
		      time_t t)
{
	struct tm tm;
	char buf[32];

	if (!t || !gmtime_r(&t, &tm)) {
		json_object_set_new(o, key, json_null());
		json_object_set_new(o, ekey, json_null());
		return;
	}
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_object_set_new(o, key, json_string(buf));
	json_object_set_new(o, ekey, json_integer((json_int_t)t));
}

static json_t *share_json(uint64_t part, uint64_t whole)
{
	return whole ? json_real((double)part / (double)whole) : json_null();
}

static json_t *job_json(const struct rjob *r)
{
	const struct figures *f = &r->f;
	json_t *o = json_object();
	char who[64];
	struct passwd *pw = getpwuid((uid_t)r->uid);
	bool arr = r->array_task_id != NO_VAL && r->array_job_id;

	if (pw)
		snprintf(who, sizeof(who), "%s", pw->pw_name);
	else
		snprintf(who, sizeof(who), "uid %" PRIu32, r->uid);
	json_object_set_new(o, "job_id", json_integer(r->job_id));
	json_object_set_new(o, "array_job_id",
			    arr ? json_integer(r->array_job_id) : json_null());
	json_object_set_new(o, "array_task_id",
			    arr ? json_integer(r->array_task_id) : json_null());
	json_object_set_new(o, "name", json_string(r->name));
	json_object_set_new(o, "user", json_string(who));
	json_object_set_new(o, "state", json_string(r->state));
	json_object_set_new(o, "source", json_string(r->source));
	json_object_set_new(o, "nodes", json_string(r->nodes));
	time_json(o, "start_time", "start_epoch", r->start);
	time_json(o, "end_time", "end_epoch", r->end);
	json_object_set_new(o, "records", json_integer((json_int_t)f->recs));
	json_object_set_new(o, "asked_bytes",
			    f->recs ? mc_json_u64(f->asked) : json_null());
	json_object_set_new(o, "peak_nonreclaimable_bytes",
			    f->recs ? mc_json_u64(f->peak) : json_null());
	json_object_set_new(o, "memory_efficiency",
			    share_json(f->peak, f->recs ? f->asked : 0));
	json_object_set_new(o, "cpu_efficiency",
			    share_json(f->cpu_usec, f->cpu_avail_usec));
	json_object_set_new(o, "next_mem_option", f->advised
			    ? json_string(f->next_opt) : json_null());
	json_object_set_new(o, "next_mem_bytes", f->advised
			    ? mc_json_u64(f->next_mem) : json_null());
	json_object_set_new(o, "next_cpus_per_gpu", f->advised
			    ? json_integer(f->next_cpg) : json_null());
	return o;
}

static json_t *name_json(const struct name_sum *s)
{
	json_t *o = json_object();
	const struct rjob *m = s->mem_job;

	json_object_set_new(o, "name", json_string(s->name));
	json_object_set_new(o, "runs", json_integer((json_int_t)s->runs));
	json_object_set_new(o, "largest_peak_nonreclaimable_bytes",
			    s->peak_job ? mc_json_u64(s->peak) : json_null());
	json_object_set_new(o, "largest_peak_job_id", s->peak_job
			    ? json_integer(s->peak_job->job_id)
			    : json_null());
	json_object_set_new(o, "next_mem_option",
			    m ? json_string(m->f.next_opt) : json_null());
	json_object_set_new(o, "next_mem_bytes",
			    m ? mc_json_u64(m->f.next_mem) : json_null());
	return o;
}

static void jobs_json(const struct rjobs *js)
{
	json_t *o = json_object(), *jobs = json_array(),
	       *names = json_array();

	for (size_t i = 0; i < js->n; i++) {
		struct name_sum s;

		json_array_append_new(jobs, job_json(&js->v[i]));
		if (!first_of_name(js, i))
			continue;
		name_sum(js, i, &s);
		json_array_append_new(names, name_json(&s));
	}
	json_object_set_new(o, "jobs", jobs);
	json_object_set_new(o, "names", names);
	json_object_set_new(o, "hidden", json_integer((json_int_t)js->hidden));
	mc_cli_json_print(o);
}

int mc_report_jobs(const struct mc_jobs_args *a, const slurm_conf_t *conf)
{
	struct rjobs js = { .v = NULL };
	bool accounting = conf->accounting_storage_type &&
			  strcmp(conf->accounting_storage_type,
				 "accounting_storage/none");
	int rc = collect(&js, a, conf, accounting);

	if (rc) {
		free(js.v);
		return rc;
	}
	if (a->json)
		jobs_json(&js);
	else if (js.n)
		jobs_text(&js);
	if (js.hidden)
		fprintf(stderr, "memcore: report: %zu job%s left out: not "
			"yours (only its user, root and SlurmUser may read "
			"a job's report)\n", js.hidden,
			js.hidden == 1 ? "" : "s");
	if (!js.n && !a->json)
		fprintf(stderr, "memcore: report: no such job%s\n",
			a->user ? " of that user in that time" : "");
	rc = js.n ? MC_EXIT_FITS : MC_EXIT_REFUSED;
	free(js.v);
	return rc;
}
