/*
 * memcore report JOBID - what each step of an ended (or running) job used
 * on each node, against what it asked and what the rule needs, with what to
 * ask next time and Slurm's own MaxRSS beside memcore's non-reclaimable
 * peak.
 *
 * Where it comes from: the records slurmstepd kept in the job's
 * AdminComment (spank/mc_keep.c, formats/mc_jobrec.h), read from slurmctld
 * while it knows the job (MinJobAge after its end), else from slurmdbd
 * when the cluster has accounting. MaxRSS is Slurm's step statistic
 * (TRES mem of tres_usage_in_max), which only slurmdbd keeps.
 *
 * Who may read it: Slurm decides first (PrivateData=jobs hides other
 * users' jobs from slurmctld and slurmdbd); then memcore shows a job only
 * to its user, root and SlurmUser.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/slurmdb.h>

#include "cli.h"
#include "mc_jobrec.h"
#include "mc_jsonout.h"
#include "mc_memstat.h"
#include "mc_outfile.h"
#include "mc_slurm_compat.h"
#include "mc_slurmdb_compat.h"
#include "mc_parse.h"
#include "mc_slurmctld.h"
#include "mc_summary.h"
#include "mc_util.h"
#include "report_jobs.h"
#include "report_live.h"
#include "report_plot.h"


#define RECS_MAX 256
/* Slurm's job ids: 0 is none, 0xfffffffe and 0xffffffff its NO_VAL and
 * INFINITE markers. */
#define MC_JOB_ID_MAX 4294967294u
#define TRES_MEM_ID 2	/* Slurm's TRES id of "mem" (TRES_MEM) */

static void report_usage(FILE *out)
{
	fprintf(out,
"usage: memcore report JOBID [--json] [--plot] [--svg FILE]\n"
"       memcore report JOBID JOBID... [--json]\n"
"       memcore report -u USER [-S DATE] [-E DATE] [--json]\n"
"\n"
"What each step of the job used on each node, as memcore measured it in\n"
"slurmstepd: asked, the rule's figure, the peak non-reclaimable memory with\n"
"the page cache beside it, the largest shared memory, cores busy, and what\n"
"to ask next time; with Slurm's MaxRSS of the step beside it when Slurm's\n"
"accounting (slurmdbd) has it. Read from the job's AdminComment, which\n"
"slurmctld keeps until MinJobAge after the job ends and slurmdbd after\n"
"that. Only the job's user, root and SlurmUser may read it. A running\n"
"job: its running steps, read now on this node (non-reclaimable, page\n"
"cache, limit), and where the others' figures are.\n"
"\n"
"Several jobs (JOBID JOBID..., an array: 12_[1-3], 12_3, or 12 for all its\n"
"tasks; -u USER over a time): a line per job, its asked RAM, peak\n"
"non-reclaimable, efficiency (memory: peak / asked; CPU: CPU time /\n"
"(CPUs x wall time)) and next time's --mem and --cpus-per-gpu, then a\n"
"line per job name with the largest peak across its runs and the --mem\n"
"that covers them all.\n"
"  -u, --user USER  the user's jobs (from slurmdbd; without it, those\n"
"                slurmctld still knows)\n"
"  -S, --starttime DATE  jobs running at or after DATE: YYYY-MM-DD,\n"
"                YYYY-MM-DDTHH:MM[:SS] (local time), now, now-Nd, now-Nh\n"
"                (default: today 00:00, as sacct)\n"
"  -E, --endtime DATE  ... and at or before DATE (default: now)\n"
"  --json        machine-readable output, with each step's timeline (the\n"
"                series of its memory over time)\n"
"  --plot        under each step and node, its memory over time as a text\n"
"                chart, as wide as the terminal: non-reclaimable '#', page\n"
"                cache ':' above it, the limit asked '=', the rule's figure\n"
"                '-', the OOM kill 'X'; on cgroup v2 the cores busy below\n"
"  --svg FILE    the same charts as one SVG picture, written to FILE (a new\n"
"                file renamed over it: never through a symbolic link, into\n"
"                a FIFO, over another user's file, or in a directory anyone\n"
"                can write that is not sticky)\n"
"\n"
"Exit status (memcore(8) EXIT STATUS):\n"
"  0  something to show (a job, several: at least one)\n"
"  1  nothing to show (or the job is not yours)\n"
"  2  usage or input error (no readable slurm.conf, one libslurm cannot\n"
"     parse, not a job id, not a DATE, no such USER, an --svg FILE that\n"
"     cannot be written or is refused)\n"
"  3  slurmctld could not be reached\n");
}

static const struct option report_options[] = {
	{ "json", no_argument, NULL, MC_CLI_OPT_JSON },
	{ "plot", no_argument, NULL, 'p' },
	{ "svg", required_argument, NULL, 's' },
	{ "user", required_argument, NULL, 'u' },
	{ "starttime", required_argument, NULL, 'S' },
	{ "endtime", required_argument, NULL, 'E' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* What is known of the job, from wherever it came. */
struct job_view {
	uint32_t job_id, uid;
	char state[32];
	char source[16];		/* "slurmctld", "slurmdbd" */
	char *admin_comment;		/* malloc'd, NULL none */
	char *system_comment;		/* malloc'd, NULL none (slurmdbd's) */
	bool from_system;		/* the records: SystemComment's copy */
	char nodes[256];		/* the job's nodes, "" none yet */
	bool accounting, running;
	struct step_rss {
		char step[48];
		uint64_t max_rss_bytes;
		char node[64];
	} rss[64];
	size_t n_rss;
	char note[512];			/* why something is missing */
};

/* "1=123,2=4567,..." -> the value of TRES id. */
static bool tres_value(const char *s, int id, uint64_t *v)
{
	while (s && *s) {
		char *end;
		long k = strtol(s, &end, 10);

		if (*end != '=')
			return false;
		if (k == id) {
			*v = strtoull(end + 1, NULL, 10);
			return true;
		}
		s = strchr(end, ',');
		if (s)
			s++;
	}
	return false;
}

static void step_name(uint32_t job, uint32_t step, char *buf, size_t len)
{
	if (step == SLURM_BATCH_SCRIPT)
		snprintf(buf, len, "%" PRIu32 ".batch", job);
	else if (step == SLURM_EXTERN_CONT)
		snprintf(buf, len, "%" PRIu32 ".extern", job);
	else
		snprintf(buf, len, "%" PRIu32 ".%" PRIu32, job, step);
}

/* From slurmdbd: the job's AdminComment (when slurmctld had none) and
 * every step's MaxRSS. 0, -1 when slurmdbd does not know the job, 2 when
 * need_comment and it is an array's (the list view). */
static int from_dbd(struct job_view *jv, const char *cluster,
		    bool need_comment)
{
	slurmdb_job_cond_t cond;
	slurm_selected_step_t sel;
	void *db;
	mc_list jobs;
	mc_list_iter it;
	slurmdb_job_rec_t *j;
	int rc = -1;
	bool array = false;

	db = slurmdb_connection_get(NULL);
	if (!db) {
		snprintf(jv->note, sizeof(jv->note), "slurmdbd does not "
			 "answer: Slurm's MaxRSS cannot be shown");
		return -1;
	}
	/* This cluster's job, whenever it ran (sacct does the same). */
	if (mc_job_cond_one(&cond, &sel, jv->job_id, cluster) < 0) {
		slurmdb_connection_close(&db);
		return -1;
	}
	cond.flags = JOBCOND_FLAG_NO_TRUNC;
	jobs = slurmdb_jobs_get(db, &cond);
	mc_job_cond_free(&cond);
	if (jobs) {
		it = slurm_list_iterator_create(jobs);
		while ((j = slurm_list_next(it))) {
			slurmdb_step_rec_t *st;
			mc_list_iter si;

			if (need_comment && j->array_job_id == jv->job_id &&
			    j->array_task_id != NO_VAL)
				array = true;
			if (j->jobid != jv->job_id)
				continue;
			rc = 0;
			if (need_comment) {
				jv->uid = j->uid;
				snprintf(jv->state, sizeof(jv->state), "%s",
					 mc_job_state_name(j->state));
				snprintf(jv->nodes, sizeof(jv->nodes), "%s",
					 j->nodes ? j->nodes : "");
				snprintf(jv->source, sizeof(jv->source),
					 "slurmdbd");
				free(jv->admin_comment);
				jv->admin_comment = j->admin_comment
					? strdup(j->admin_comment) : NULL;
				/* The job epilog's copy (mc_keepdbd.c). */
				free(jv->system_comment);
				jv->system_comment = j->system_comment
					? strdup(j->system_comment) : NULL;
			}
			if (!j->steps)
				continue;
			si = slurm_list_iterator_create(j->steps);
			while ((st = slurm_list_next(si)) &&
			       jv->n_rss < sizeof(jv->rss) / sizeof(jv->rss[0])) {
				struct step_rss *r = &jv->rss[jv->n_rss];
				uint64_t node = 0;

				if (!tres_value(st->stats.tres_usage_in_max,
						TRES_MEM_ID, &r->max_rss_bytes))
					continue;
				step_name(jv->job_id, st->step_id.step_id,
					  r->step, sizeof(r->step));
				r->node[0] = '\0';
				if (st->nodes && st->nnodes == 1)
					snprintf(r->node, sizeof(r->node), "%s",
						 st->nodes);
				else if (st->nodes &&
					 tres_value(st->stats.
						    tres_usage_in_max_nodeid,
						    TRES_MEM_ID, &node))
					snprintf(r->node, sizeof(r->node),
						 "node %" PRIu64 " of %s", node,
						 st->nodes);
				jv->n_rss++;
			}
			slurm_list_iterator_destroy(si);
		}
		slurm_list_iterator_destroy(it);
		slurm_list_destroy(jobs);
	}
	slurmdb_connection_close(&db);
	return array ? 2 : rc;
}

/* Does m hold tasks of array job_id (the list view shows them all)? */
static bool is_array(const job_info_msg_t *m, uint32_t job_id)
{
	for (uint32_t i = 0; m && i < m->record_count; i++)
		if (m->job_array[i].array_job_id == job_id &&
		    m->job_array[i].array_task_id != NO_VAL)
			return true;
	return false;
}

/* From slurmctld. 0; 1 when it does not know the job (any more); 2 when
 * it is an array's (its tasks: the list view); -1 with the reason
 * printed when it does not answer. */
static int from_ctld(struct job_view *jv)
{
	job_info_msg_t *m = NULL;

	if (mc_load_job(&m, jv->job_id) != 0) {
		int e = errno;

		if (e == ESLURM_INVALID_JOB_ID)
			return 1;
		fprintf(stderr, "memcore: report: job %" PRIu32 ": %s\n",
			jv->job_id, slurm_strerror(e));
		return -1;
	}
	if (is_array(m, jv->job_id)) {
		mc_free_job_info_msg(m);
		return 2;
	}
	for (uint32_t i = 0; m && i < m->record_count; i++) {
		const job_info_t *j = &m->job_array[i];

		if (j->job_id != jv->job_id)
			continue;
		jv->uid = j->user_id;
		jv->running = (j->job_state & JOB_STATE_BASE) == JOB_RUNNING;
		snprintf(jv->nodes, sizeof(jv->nodes), "%s",
			 j->nodes ? j->nodes : "");
		snprintf(jv->state, sizeof(jv->state), "%s",
			 mc_job_state_name(j->job_state));
		snprintf(jv->source, sizeof(jv->source), "slurmctld");
		jv->admin_comment = j->admin_comment
				    ? strdup(j->admin_comment) : NULL;
		mc_free_job_info_msg(m);
		return 0;
	}
	mc_free_job_info_msg(m);
	return 1;
}

static const char *user_name(uint32_t uid, char *buf, size_t len)
{
	struct passwd *pw = getpwuid((uid_t)uid);

	if (pw)
		snprintf(buf, len, "%s", pw->pw_name);
	else
		snprintf(buf, len, "uid %" PRIu32, uid);
	return buf;
}

static const struct step_rss *rss_of(const struct job_view *jv,
				     const char *step)
{
	for (size_t i = 0; i < jv->n_rss; i++)
		if (!strcmp(jv->rss[i].step, step))
			return &jv->rss[i];
	return NULL;
}

static json_t *record_json(const struct mc_used *u, const struct mc_advice *a,
			   const char *step, const char *host,
			   const struct step_rss *rss)
{
	json_t *o = json_object(), *next = json_object();
	char opt[64], note[400];
	const char *why;

#define SETI(k, v) json_object_set_new(o, k, mc_json_u64(v))
	json_object_set_new(o, "step", json_string(step));
	json_object_set_new(o, "node", json_string(host));
	SETI("asked_bytes", u->asked_bytes);
	json_object_set_new(o, "asked_option",
			    json_string(mc_summary_mem_option(u, u->asked_bytes,
							      opt,
							      sizeof(opt))));
	SETI("rule_bytes", u->rule_bytes);
	SETI("samples", u->peak.samples);
	SETI("sample_interval_ms", u->sample_interval_ms);
	SETI("peak_nonreclaimable_bytes", u->peak.nr_bytes);
	json_object_set_new(o, "peak_at_oom_kill",
			    json_boolean(u->peak.at_kill));
	SETI("peak_anon_bytes", u->peak.anon_at_nr_bytes);
	SETI("peak_shmem_bytes", u->peak.shmem_at_nr_bytes);
	SETI("page_cache_at_peak_bytes", u->peak.file_at_nr_bytes);
	SETI("max_page_cache_bytes", u->peak.max_file_bytes);
	SETI("max_shmem_bytes", u->peak.max_shmem_bytes);
	SETI("kernel_peak_bytes", u->kernel_peak_bytes);
	json_object_set_new(o, "kernel_peak_source",
			    json_string(mc_cgroup_ops_of(
					u->cgroup_version)->peak_file));
	SETI("cores_allocated", u->cores_allocated);
	SETI("threads_per_core",
	     u->threads_per_core ? u->threads_per_core : 1);
	SETI("rule_cores", u->rule_cores);
	json_object_set_new(o, "cores_busy", json_real(a->busy_milli / 1000.0));
	SETI("cpu_usec", u->cpu_usec);
	SETI("wall_usec", u->wall_usec);
	SETI("oom_kills", u->oom_kills);
	SETI("max_events", u->max_events);
	SETI("high_events", u->high_events);
	/* The page cache squeeze: null where not measured, and why. */
	json_object_set_new(o, "refault_file_bytes",
			    u->squeeze & MC_SQUEEZE_REFAULT
			    ? mc_json_u64(u->refault_file_bytes) : json_null());
	json_object_set_new(o, "memory_stall_usec",
			    u->squeeze & MC_SQUEEZE_STALL
			    ? mc_json_u64(u->stall_usec) : json_null());
	json_object_set_new(o, "squeeze_unavailable",
			    mc_summary_squeeze_note(u, note, sizeof(note))
			    ? json_string(note) : json_null());
	json_object_set_new(o, "page_cache_squeezed",
			    json_boolean(a->refault_large || a->stall_large));
	if (a->refault_large || a->stall_large) {
		json_t *fix = json_object();

		json_object_set_new(fix, "mem_option",
				    json_string(mc_summary_mem_option(
					u, a->squeeze_mem_bytes, opt,
					sizeof(opt))));
		json_object_set_new(fix, "mem_bytes",
				    mc_json_u64(a->squeeze_mem_bytes));
		json_object_set_new(fix, "stage",
				    json_string("memcore stage SRC DEST"));
		json_object_set_new(o, "squeeze_fix", fix);
	} else {
		json_object_set_new(o, "squeeze_fix", json_null());
	}
	json_object_set_new(o, "slurm_max_rss_bytes",
			    rss ? json_integer((json_int_t)rss->max_rss_bytes)
				: json_null());
	json_object_set_new(next, "mem_option",
			    json_string(mc_summary_mem_option(u, a->mem_bytes,
							      opt,
							      sizeof(opt))));
	json_object_set_new(next, "mem_bytes",
			    json_integer((json_int_t)a->mem_bytes));
	json_object_set_new(next, "mem_is_rule", json_boolean(a->mem_is_rule));
	json_object_set_new(next, "cpus_per_gpu",
			    json_integer((json_int_t)a->cpus_per_gpu));
	json_object_set_new(next, "dataloader_workers",
			    json_integer((json_int_t)a->workers));
	/* No advice from too few samples (mc_summary_advise): said. */
	if (a->too_few) {
		json_decref(next);
		next = json_null();
	}
	json_object_set_new(o, "next", next);
	json_object_set_new(o, "next_withheld", a->too_few
			    ? json_string("too few samples") : json_null());
	json_object_set_new(o, "timeline", mc_report_timeline_json(u, &why));
	json_object_set_new(o, "timeline_note",
			    why ? json_string(why) : json_null());
#undef SETI
	return o;
}

/* "step@host" -> step and host ("" when there is no '@'). */
static void split_at(const char *at, char *step, size_t sl, char *host,
		     size_t hl)
{
	const char *c = strchr(at, '@');

	snprintf(step, sl, "%.*s", c ? (int)(c - at) : 0, at);
	snprintf(host, hl, "%s", c ? c + 1 : "");
}

/* The aggregate that stands for the records the bound pushed out
 * (mc_jobrec.h): said, with what is known of them. */
static void agg_text(const struct mc_jobrec_agg *g)
{
	char b[32], step[64], host[64];
	unsigned known = g->steps - g->unknown;

	if (!g->steps)
		return;
	if (!known) {
		printf("  %u older step-node summar%s not shown one by one (the "
		       "record's bound): dropped by memcore 0.3.0, which kept "
		       "no figures of them\n", g->steps,
		       g->steps == 1 ? "y is" : "ies are");
		return;
	}
	split_at(g->peak_at, step, sizeof(step), host, sizeof(host));
	printf("  %u older step-node summar%s not shown one by one (the "
	       "record's bound): their largest peak non-reclaimable %s "
	       "(step %s on %s), %" PRIu64 " OOM kill%s", g->steps,
	       g->steps == 1 ? "y is" : "ies are",
	       mc_fmt_bytes(g->peak_bytes, b, sizeof(b)), step, host,
	       g->oom_kills, g->oom_kills == 1 ? "" : "s");
	if (g->unknown)
		printf("; %u of them dropped by memcore 0.3.0, without "
		       "figures", g->unknown);
	printf("\n");
}

static json_t *agg_json(const struct mc_jobrec_agg *g)
{
	json_t *o;
	char step[64], host[64], note[256];
	unsigned known = g->steps - g->unknown;

	if (!g->steps)
		return json_null();
	o = json_object();
	split_at(g->peak_at, step, sizeof(step), host, sizeof(host));
	json_object_set_new(o, "steps", json_integer(g->steps));
	json_object_set_new(o, "without_figures", json_integer(g->unknown));
	json_object_set_new(o, "largest_peak_nonreclaimable_bytes",
			    known ? mc_json_u64(g->peak_bytes) : json_null());
	json_object_set_new(o, "largest_peak_step",
			    known && step[0] ? json_string(step) : json_null());
	json_object_set_new(o, "largest_peak_node",
			    known && host[0] ? json_string(host) : json_null());
	json_object_set_new(o, "oom_kills",
			    known ? mc_json_u64(g->oom_kills) : json_null());
	snprintf(note, sizeof(note), "older step-node summaries that the "
		 "record's bound (%u bytes of the job's AdminComment) keeps "
		 "only as this aggregate; without_figures: dropped by memcore "
		 "0.3.0, which kept only their count", MC_JOBREC_MAX);
	json_object_set_new(o, "note", json_string(note));
	return o;
}

/* "memcore: report: --svg FILE: why", FILE escaped and cut (the reason
 * always shows). Returns the exit status, 2. */
static int svg_error(const char *path, const char *why)
{
	char q[MC_QUOTE_MAX];

	return mc_cli_usage_error("report: --svg %s: %s",
				  mc_escape(path, 0, q, sizeof(q)), why);
}

/* The SVG of svg's steps into path (svg freed), never through what a
 * user planted there (mc_outfile.h). 0, or the exit status said. */
static int report_svg_write(const char *path, struct mc_report_svg *svg)
{
	struct mc_outfile o;
	char why[MC_ERR_MAX];
	int rc;

	if (!svg)
		return svg_error(path, "out of memory");
	if (mc_outfile_open(&o, path, why, sizeof(why)) < 0) {
		free(svg);
		return svg_error(path, why);
	}
	rc = mc_report_svg_write(svg, o.f);
	if (mc_outfile_commit(&o, rc == 0, why, sizeof(why)) < 0)
		return svg_error(path, why);
	return 0;
}

/* The distinct reasons the records' squeeze figures are missing
 * (mc_summary_squeeze_note): the text says each once. */
#define SQUEEZE_NOTES 4
static void squeeze_notes(const char **recs, const size_t *lens, size_t n,
			  char (*notes)[400], size_t *n_notes)
{
	for (size_t i = 0; i < n; i++) {
		char rec[MC_SUMMARY_RECORD_MAX + 1], step[48], host[64],
		     note[400];
		struct mc_used u;
		struct mc_advice a;
		size_t k;

		if (lens[i] >= sizeof(rec))
			continue;
		memcpy(rec, recs[i], lens[i]);
		rec[lens[i]] = '\0';
		if (mc_summary_record_parse(rec, &u, &a, step, sizeof(step),
					    host, sizeof(host)) < 0 ||
		    !mc_summary_squeeze_note(&u, note, sizeof(note)))
			continue;
		for (k = 0; k < *n_notes && strcmp(notes[k], note); k++)
			;
		if (k == *n_notes && *n_notes < SQUEEZE_NOTES)
			snprintf(notes[(*n_notes)++], 400, "%s", note);
	}
}

/* What the command line asks. */
struct report_args {
	bool json, plot;
	const char *svg_path;		/* --svg FILE, NULL none */
	struct mc_jobs_args list;	/* the JOBIDs, -u, -S, -E */
};

/* -S / -E DATE into *t: MC_CLI_ON, or the usage error. */
static int take_date(const char *opt, const char *arg, time_t *t)
{
	char q[80];

	if (mc_report_date(arg, t) == 0)
		return MC_CLI_ON;
	return mc_cli_usage_error("report: %s %s: not a DATE (YYYY-MM-DD, "
				  "YYYY-MM-DDTHH:MM[:SS], now, now-Nd, "
				  "now-Nh)", opt, mc_escape(arg, 64, q,
							    sizeof(q)));
}

/* One option of report's: MC_CLI_ON, else the exit status. */
static int take_option(struct report_args *ra, int opt, char **argv)
{
	switch (opt) {
	case MC_CLI_OPT_JSON: ra->json = ra->list.json = true; return MC_CLI_ON;
	case 'p': ra->plot = true; return MC_CLI_ON;
	case 's': ra->svg_path = optarg; return MC_CLI_ON;
	case 'u': ra->list.user = optarg; return MC_CLI_ON;
	case 'S': return take_date("-S", optarg, &ra->list.start);
	case 'E': return take_date("-E", optarg, &ra->list.end);
	case 'h': report_usage(stdout); return 0;
	default: return mc_cli_option_error("report", opt, argv);
	}
}

/* The JOBID arguments into ra->list.specs (argc entries at most):
 * MC_CLI_ON, else the usage error. */
static int take_jobids(int argc, char **argv, struct report_args *ra)
{
	ra->list.specs = calloc((size_t)argc + 1, sizeof(*ra->list.specs));
	if (!ra->list.specs)
		return mc_cli_usage_error("report: out of memory");
	/* Digits only, in Slurm's range: strtoul would take " 5" and "+5"
	 * and wrap 4294967297 to job 1, someone else's job. */
	for (int i = optind; i < argc; i++) {
		char q[80];

		if (mc_jobspec_parse(argv[i],
				     &ra->list.specs[ra->list.n_specs++]) < 0)
			return mc_cli_usage_error("report: '%s' is not a job "
				"id (1 to %u, digits only; an array's tasks: "
				"12_3, 12_[1-3,5])", mc_escape(argv[i], 64, q,
				sizeof(q)), MC_JOB_ID_MAX);
	}
	return MC_CLI_ON;
}

/* The one plain job of the detailed view, else 0 (the list view). */
static uint32_t single_job(const struct report_args *ra)
{
	const struct mc_jobs_args *l = &ra->list;

	return l->n_specs == 1 && !l->user && !l->specs[0].tasks_given
	       ? l->specs[0].job : 0;
}

/* The command line: the options and job ids into ra.
 * MC_CLI_ON, else the exit status (--help: 0). */
static int read_report_args(int argc, char **argv, struct report_args *ra)
{
	char err[MC_ERR_MAX];
	int opt, rc;

	optind = 1;
	opterr = 0;	/* the messages are memcore's (mc_cli_option_error) */
	while ((opt = getopt_long(argc, argv, ":hu:S:E:", report_options,
				  NULL)) != -1)
		if ((rc = take_option(ra, opt, argv)) != MC_CLI_ON)
			return rc;
	if ((rc = take_jobids(argc, argv, ra)) != MC_CLI_ON)
		return rc;
	if (!ra->list.n_specs == !ra->list.user)
		return mc_cli_usage_error("report: expected JOBID... or -u "
					  "USER (see memcore report --help)");
	if ((ra->list.start || ra->list.end) && !ra->list.user)
		return mc_cli_usage_error("report: -S and -E go with -u USER");
	if ((ra->plot || ra->svg_path) && !single_job(ra))
		return mc_cli_usage_error("report: --plot and --svg take one "
					  "job");
	/* A FILE that cannot be written is said before Slurm is asked. */
	if (ra->svg_path && mc_outfile_check(ra->svg_path, err,
					     sizeof(err)) < 0)
		return svg_error(ra->svg_path, err);
	return MC_CLI_ON;
}

/* -u without -S: from today's 00:00, as sacct. */
static time_t today(void)
{
	time_t now = time(NULL);
	struct tm tm;

	localtime_r(&now, &tm);
	tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
	tm.tm_isdst = -1;
	return mktime(&tm);
}

/* slurm.conf read, slurmctld's configuration into *conf (the caller frees
 * it): MC_CLI_ON, else the exit status. */
static int report_conf(slurm_conf_t **conf)
{
	const char *cpath = mc_ctld_conf();

	if (!cpath)
		return mc_cli_usage_error("report: no readable slurm.conf "
					  "(SLURM_CONF, or the default "
					  "/etc/slurm/slurm.conf)");
	mc_ctld_init(cpath);
	if (slurm_load_ctl_conf((time_t)0, conf) != 0 || !*conf) {
		fprintf(stderr, "memcore: report: slurmctld does not answer: "
			"%s\n", slurm_strerror(errno));
		return MC_EXIT_UNREACHABLE;
	}
	return MC_CLI_ON;
}

/* load_job's answer for an array's id: its tasks go to the list view. */
#define REPORT_ARRAY (-2)

/*
 * The job from slurmctld, else slurmdbd, shown only to its user, root
 * and SlurmUser: MC_CLI_ON, REPORT_ARRAY, else the exit status.
 */
static int load_job(struct job_view *jv, slurm_conf_t **conf)
{
	uid_t me = getuid();
	slurm_conf_t *cf = *conf;
	int rc, dbd = 0;

	jv->accounting = cf->accounting_storage_type &&
			 strcmp(cf->accounting_storage_type,
				"accounting_storage/none");
	rc = from_ctld(jv);
	if (rc == 2)
		return REPORT_ARRAY;
	if (rc < 0) {
		return MC_EXIT_UNREACHABLE;
	}
	if (rc == 1 && !jv->accounting) {
		fprintf(stderr, "memcore: report: job %" PRIu32 " is not known "
			"to slurmctld (it forgets a job MinJobAge=%" PRIu32
			" s after its end, and hides other users' jobs with "
			"PrivateData=jobs) and this cluster keeps no "
			"accounting (AccountingStorageType=accounting_storage/"
			"none), where memcore's summaries would stay: what is "
			"left is the one 'after the step' line per step in "
			"each node's slurmd log\n", jv->job_id,
			(uint32_t)cf->min_job_age);
		return MC_EXIT_REFUSED;
	}
	if (jv->accounting)
		dbd = from_dbd(jv, cf->cluster_name, rc == 1);
	if (dbd == 2) {
		free(jv->admin_comment);
		free(jv->system_comment);
		jv->admin_comment = jv->system_comment = NULL;
		return REPORT_ARRAY;
	}
	if (dbd < 0 && rc == 1) {
		fprintf(stderr, "memcore: report: job %" PRIu32 " is known "
			"neither to slurmctld nor to slurmdbd (or Slurm does "
			"not let you see it)%s%s\n", jv->job_id,
			jv->note[0] ? ": " : "", jv->note);
		return MC_EXIT_REFUSED;
	}
	/* Slurm showed it; memcore shows it to its user and the admins. */
	if (me != 0 && me != cf->slurm_user_id && me != jv->uid) {
		fprintf(stderr, "memcore: report: job %" PRIu32 " is not "
			"yours: only its user, root and SlurmUser (%s) may "
			"read its report\n", jv->job_id,
			cf->slurm_user_name ? cf->slurm_user_name : "?");
		free(jv->admin_comment);
		free(jv->system_comment);
		return MC_EXIT_REFUSED;
	}
	if (!jv->accounting)
		snprintf(jv->note, sizeof(jv->note), "Slurm's MaxRSS is not "
			 "shown: without accounting (AccountingStorageType="
			 "accounting_storage/none) Slurm keeps no step "
			 "statistics after a step (sstat shows them while it "
			 "runs)");
	return MC_CLI_ON;
}

/*
 * An AdminComment without memcore's records that holds another tool's
 * text: the records may have been there and been replaced. Princeton's
 * jobstats sets the whole field ("JS1:" and its summary) from
 * slurmctld's epilog after the job ends (sacctmgr update job ... set
 * AdminComment=JS1:...), which slurmdbd then keeps instead of memcore's
 * records; others may do the same. The records may still be read from
 * their copy in SystemComment (mc_keepdbd.c). NULL when the field is
 * empty (nothing was kept) or holds the records.
 */
static const char *records_replaced(const struct job_view *jv)
{
	const char *c = jv->admin_comment;

	if (!c || !*c || mc_jobrec_block(c))
		return NULL;
	/* sacctmgr lowercases the unquoted value jobstats' epilog passes. */
	if (!strncasecmp(c, "JS1:", 4))
		return "this job's AdminComment holds jobstats' summary "
		       "(JS1:...): jobstats' slurmctld epilog replaces the "
		       "whole field after the job ends, and with it any "
		       "record memcore kept there (memcore(8), AFTER THE "
		       "STEP)";
	return "this job's AdminComment holds another tool's text and no "
	       "memcore record: a tool that sets the whole field after the "
	       "job ends replaces the records memcore kept there";
}

/* The JSON answer's job keys (its "steps" come after). */
static json_t *job_json(const struct job_view *jv, size_t n,
			const struct mc_jobrec_agg *agg)
{
	json_t *o = json_object();
	char who[64];

	json_object_set_new(o, "job_id", json_integer(jv->job_id));
	json_object_set_new(o, "user",
			    json_string(user_name(jv->uid, who, sizeof(who))));
	json_object_set_new(o, "state", json_string(jv->state));
	json_object_set_new(o, "source", json_string(jv->source));
	json_object_set_new(o, "records_field", !n ? json_null()
			    : json_string(jv->from_system ? "SystemComment"
							  : "AdminComment"));
	json_object_set_new(o, "accounting", json_boolean(jv->accounting));
	json_object_set_new(o, "dropped", json_integer(agg->steps));
	json_object_set_new(o, "aggregate", agg_json(agg));
	json_object_set_new(o, "note", jv->note[0]
			    ? json_string(jv->note) : json_null());
	return o;
}

/* The text answer's head: the job, its notes, the aggregate. */
static void job_text(const struct job_view *jv, size_t n,
		     const struct mc_jobrec_agg *agg, const char **recs,
		     const size_t *lens)
{
	static char notes[SQUEEZE_NOTES][400];
	size_t n_notes = 0;
	char who[64];

	squeeze_notes(recs, lens, n, notes, &n_notes);
	printf("memcore: job %" PRIu32 " (user %s, %s), from %s: %zu "
	       "step-node summar%s", jv->job_id,
	       user_name(jv->uid, who, sizeof(who)), jv->state,
	       jv->source, n, n == 1 ? "y" : "ies");
	if (agg->steps)
		printf(", and %u older one%s in one aggregate",
		       agg->steps, agg->steps == 1 ? "" : "s");
	printf("\n");
	if (jv->note[0])
		printf("  note: %s\n", jv->note);
	if (jv->from_system)
		printf("  note: read from the records' copy in the job's "
		       "SystemComment, left there by the job epilog: %s\n",
		       records_replaced(jv) ? records_replaced(jv)
		       : "its AdminComment holds none");
	/* Why a squeeze figure is missing: once, not per step. */
	for (size_t i = 0; i < n_notes; i++)
		printf("  note: %s\n", notes[i]);
	agg_text(agg);
}

/* One step on one node, as text: its summary, Slurm's MaxRSS beside it,
 * its chart (--plot) or why its timeline is missing. */
static void step_text(const struct job_view *jv, const struct mc_used *u,
		      const struct mc_advice *a, const char *step,
		      const char *host, bool plot)
{
	const struct step_rss *rss = rss_of(jv, step);
	struct mc_summary_text t;
	char b1[32], b2[32];

	mc_summary_explain_brief(u, a, step, host, &t);
	for (size_t l = 0; l < t.n; l++)
		printf("%s\n", l ? t.line[l] : t.line[l] + strlen("memcore: "));
	if (rss)
		printf("  Slurm MaxRSS %s (the step's largest task%s%s: "
		       "resident pages, mapped files included) against "
		       "memcore's %s non-reclaimable peak\n",
		       mc_fmt_bytes(rss->max_rss_bytes, b1, sizeof(b1)),
		       rss->node[0] ? ", on " : "", rss->node,
		       mc_fmt_bytes(u->peak.nr_bytes, b2, sizeof(b2)));
	else
		printf("  Slurm MaxRSS not available%s\n",
		       jv->accounting ? " (slurmdbd has no statistics "
		       "for this step)" : " (no accounting)");
	if (plot) {
		mc_report_plot(u, step, host, mc_cli_term_width(STDOUT_FILENO));
	} else {
		/* cut or unreadable: said without --plot too */
		struct mc_timeline tl;
		const char *why = u->timeline[0]
				  ? mc_report_timeline(u, &tl) : NULL;

		if (why)
			printf("  %s\n", why);
	}
}

/* Where a refusal would be is worth saying: nothing kept, or a job that
 * ended other than COMPLETED (a refused step fails its job). */
static bool refusal_matters(const struct job_view *jv, bool kept)
{
	return !jv->running && (!kept || strcmp(jv->state, "COMPLETED"));
}

/* The detailed view's end, text: a running job's steps now; for a job
 * with no record, where a refused step's refusal is, or what replaced
 * the records. */
static void live_text(const struct job_view *jv, bool kept,
		      const struct mc_live_step *ls, int nls)
{
	const char *gone = kept ? NULL : records_replaced(jv);
	char note[512];

	if (jv->running && nls >= 0) {
		mc_report_live_text(jv->job_id, ls, (size_t)nls);
		return;
	}
	if (!refusal_matters(jv, kept))
		return;
	if (gone) {
		/* Steps ran and were recorded: no refusal to point at. */
		printf("  memcore's records are not there, nor their copy in "
		       "SystemComment: %s\n", gone);
		return;
	}
	if (!kept)
		printf("  memcore kept nothing with this job: no GPU step of "
		       "it ran to its end under memcore's sampler\n");
	printf("  note: %s\n", mc_report_refusal_note(jv->job_id, jv->nodes,
						       note, sizeof(note)));
}

/* The same in the JSON answer: running_steps and refusal_note. */
static void live_json(json_t *o, const struct job_view *jv, bool kept,
		      const struct mc_live_step *ls, int nls)
{
	const char *gone = records_replaced(jv);
	char note[512];

	json_object_set_new(o, "running_steps", jv->running && nls >= 0
			    ? mc_report_live_json(ls, (size_t)nls)
			    : json_null());
	json_object_set_new(o, "refusal_note", !refusal_matters(jv, kept) ||
			    gone ? json_null()
			    : json_string(mc_report_refusal_note(
				jv->job_id, jv->nodes, note, sizeof(note))));
	json_object_set_new(o, "records_replaced",
			    gone ? json_string(gone) : json_null());
}

/* One step-node record into the answer (JSON, text, SVG). */
static void report_record(const struct job_view *jv,
			  const struct report_args *ra, const char *r,
			  size_t len, json_t *arr, struct mc_report_svg **svg)
{
	char rec[MC_SUMMARY_RECORD_MAX + 1], step[48], host[64];
	struct mc_used u;
	struct mc_advice a;

	if (len >= sizeof(rec))
		return;
	memcpy(rec, r, len);
	rec[len] = '\0';
	if (mc_summary_record_parse(rec, &u, &a, step, sizeof(step), host,
				    sizeof(host)) < 0)
		return;
	if (*svg || (ra->svg_path && (*svg = mc_report_svg_new())))
		mc_report_svg_add(*svg, &u, step, host);
	if (ra->json)
		json_array_append_new(arr, record_json(&u, &a, step, host,
						       rss_of(jv, step)));
	else
		step_text(jv, &u, &a, step, host, ra->plot);
}

/* The detailed view of one job: the exit status, or REPORT_ARRAY. */
static int report_one(const struct report_args *ra, uint32_t job,
		      slurm_conf_t **conf)
{
	static struct job_view jv;
	const char *recs[RECS_MAX];
	size_t lens[RECS_MAX], n;
	struct mc_jobrec_agg agg;
	struct mc_report_svg *svg = NULL;
	struct mc_live_step *ls = NULL;
	json_t *o = NULL, *arr = NULL;
	int rc, nls = -1;

	jv.job_id = job;
	if ((rc = load_job(&jv, conf)) != MC_CLI_ON)
		return rc;
	n = mc_jobrec_split(mc_jobrec_pick(jv.admin_comment, jv.system_comment,
					   &jv.from_system),
			    recs, lens, RECS_MAX, &agg);
	if (jv.running && (ls = calloc(MC_LIVE_STEPS_MAX, sizeof(*ls))))
		nls = mc_report_live(job, ls, MC_LIVE_STEPS_MAX);
	if (ra->json) {
		o = job_json(&jv, n + agg.steps, &agg);
		arr = json_array();
	} else {
		job_text(&jv, n, &agg, recs, lens);
	}
	for (size_t i = 0; i < n; i++)
		report_record(&jv, ra, recs[i], lens[i], arr, &svg);
	if (ra->plot && !ra->json)
		mc_report_plot_folded(mc_cli_term_width(STDOUT_FILENO));
	if (ra->svg_path && !svg)
		svg = mc_report_svg_new();
	rc = n || agg.steps || nls > 0 ? MC_EXIT_FITS : MC_EXIT_REFUSED;
	if (ra->svg_path && report_svg_write(ra->svg_path, svg) != 0) {
		json_decref(o);
		json_decref(arr);
		rc = MC_EXIT_USAGE;
	} else if (ra->json) {
		json_object_set_new(o, "steps", arr);
		live_json(o, &jv, n || agg.steps, ls, nls);
		mc_cli_json_print(o);
	} else {
		live_text(&jv, n || agg.steps, ls, nls);
	}
	free(ls);
	free(jv.admin_comment);
	free(jv.system_comment);
	return rc;
}

int mc_cmd_report(int argc, char **argv)
{
	static struct report_args ra;
	slurm_conf_t *conf = NULL;
	int rc;

	memset(&ra, 0, sizeof(ra));
	if ((rc = read_report_args(argc, argv, &ra)) == MC_CLI_ON &&
	    (rc = report_conf(&conf)) == MC_CLI_ON) {
		if (ra.list.user && !ra.list.start)
			ra.list.start = today();
		rc = single_job(&ra) ? report_one(&ra, single_job(&ra), &conf)
				     : REPORT_ARRAY;
		if (rc == REPORT_ARRAY)
			rc = mc_report_jobs(&ra.list, conf);
	}
	if (conf)
		mc_free_ctl_conf(conf);
	free(ra.list.specs);
	return rc;
}
