/*
 * report_plot.c - the timelines of `memcore report` (report_plot.h).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mc_jobrec.h"
#include "mc_jsonout.h"
#include "report_plot.h"

#define SVG_MAX 256

const char *mc_report_timeline(const struct mc_used *u,
			       struct mc_timeline *tl)
{
	mc_timeline_init(tl, 1);
	if (!u->timeline[0])
		return u->sample_interval_ms
		       ? "timeline not kept: the record comes from a memcore "
			 "without timelines (0.3.0 or older)"
		       : "timeline not kept: the step was not sampled "
			 "(SampleInterval=0, or its cgroup could not be read)";
	if (!strcmp(u->timeline, MC_JOBREC_CUT)) {
		static char cut[256];

		snprintf(cut, sizeof(cut), "timeline not kept: the job's "
			 "records passed memcore's %u bytes of the "
			 "AdminComment; the oldest steps' timelines went first, "
			 "to keep their figures", MC_JOBREC_MAX);
		return cut;
	}
	if (mc_timeline_decode(u->timeline, strlen(u->timeline), tl) < 0)
		return "timeline unreadable: the record's \"s\" is not a "
		       "timeline memcore can read";
	return NULL;
}

json_t *mc_report_timeline_json(const struct mc_used *u, const char **why)
{
	struct mc_timeline tl;
	json_t *o, *pts;
	uint64_t pms;

	*why = mc_report_timeline(u, &tl);
	if (*why)
		return json_null();
	pms = mc_timeline_point_ms(&tl);
	o = json_object();
	pts = json_array();
	json_object_set_new(o, "point_ms", mc_json_u64(pms));
	for (uint32_t i = 0; i < tl.n; i++) {
		json_t *p = json_object();

		json_object_set_new(p, "t_ms", mc_json_u64(pms * i));
		json_object_set_new(p, "nonreclaimable_bytes",
				    mc_json_u64(tl.nr_bytes[i]));
		json_object_set_new(p, "page_cache_bytes",
				    mc_json_u64(tl.file_bytes[i]));
		json_object_set_new(p, "cores_busy", tl.has_cpu
				    ? json_real(tl.cpu_milli[i] / 1000.0)
				    : json_null());
		json_array_append_new(pts, p);
	}
	json_object_set_new(o, "points", pts);
	json_object_set_new(o, "oom_point", tl.oom_point >= 0
			    ? json_integer(tl.oom_point) : json_null());
	json_object_set_new(o, "oom_t_ms", tl.oom_point >= 0
			    ? mc_json_u64(pms * (uint64_t)tl.oom_point)
			    : json_null());
	return o;
}

struct mc_report_svg {
	size_t n;
	struct mc_plot_in in[SVG_MAX];
	struct mc_timeline tl[SVG_MAX];
	char step[SVG_MAX][48], host[SVG_MAX][64], opt[SVG_MAX][48];
};

struct mc_report_svg *mc_report_svg_new(void)
{
	return calloc(1, sizeof(struct mc_report_svg));
}

static void plot_in(struct mc_plot_in *in, const struct mc_used *u,
		    const struct mc_timeline *tl, const char *step,
		    const char *host, char *opt, size_t optlen)
{
	memset(in, 0, sizeof(*in));
	in->step = step;
	in->host = host;
	in->tl = tl;
	in->limit_bytes = u->asked_bytes;
	in->limit_option = u->asked_bytes
			   ? mc_summary_mem_option(u, u->asked_bytes, opt,
						   optlen) : NULL;
	in->rule_bytes = u->rule_bytes;
	in->cores = u->cores_allocated;
}

void mc_report_svg_add(struct mc_report_svg *s, const struct mc_used *u,
		       const char *step, const char *host)
{
	size_t i = s->n;

	if (i >= SVG_MAX || mc_report_timeline(u, &s->tl[i]))
		return;
	snprintf(s->step[i], sizeof(s->step[i]), "%s", step);
	snprintf(s->host[i], sizeof(s->host[i]), "%s", host);
	plot_in(&s->in[i], u, &s->tl[i], s->step[i], s->host[i], s->opt[i],
		sizeof(s->opt[i]));
	s->n++;
}

int mc_report_svg_write(struct mc_report_svg *s, FILE *out)
{
	int rc = mc_plot_svg(out, s->in, s->n);

	free(s);
	return rc;
}

/* The steps --plot drew no chart for (nothing to show), named together
 * by mc_report_plot_folded: one command, one job, so kept here. */
static struct {
	size_t n;
	char step[SVG_MAX][48];
} folded;

void mc_report_plot(const struct mc_used *u, const char *step,
		    const char *host, unsigned width)
{
	static struct mc_timeline tl;
	struct mc_plot_in in;
	char opt[48];
	const char *why = mc_report_timeline(u, &tl);

	if (why) {
		printf("  %s\n", why);
		return;
	}
	plot_in(&in, u, &tl, step, host, opt, sizeof(opt));
	if (mc_plot_nothing(&in)) {
		if (folded.n < SVG_MAX)
			snprintf(folded.step[folded.n++],
				 sizeof(folded.step[0]), "%s", step);
		return;
	}
	printf("\n");
	mc_plot_text(stdout, &in, width);
	printf("\n");
}

void mc_report_plot_folded(unsigned width)
{
	static struct mc_timeline empty;
	static struct mc_plot_in in[SVG_MAX];

	for (size_t i = 0; i < folded.n; i++) {
		in[i].step = folded.step[i];
		in[i].host = "";
		in[i].tl = &empty;
	}
	if (folded.n)
		printf("\n");
	mc_plot_text_folded(stdout, in, folded.n, width);
	folded.n = 0;
}
