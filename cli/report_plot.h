/*
 * report_plot.h - the timelines of `memcore report` (--plot, --svg FILE,
 * and the series in --json): the record's encoded timeline
 * (mc_summary.h, key "s") read back, or why there is none, drawn with
 * mc_plot.h.
 */
#ifndef REPORT_PLOT_H
#define REPORT_PLOT_H

#include <stdio.h>

#include <jansson.h>

#include "mc_plot.h"
#include "mc_summary.h"
#include "mc_timeline.h"

/*
 * u's timeline decoded into tl. Returns NULL, or when there is none to
 * draw the line that says why ("timeline not kept: ...", "timeline
 * unreadable: ..."), tl then empty.
 */
const char *mc_report_timeline(const struct mc_used *u,
			       struct mc_timeline *tl);

/*
 * The record's series for --json: {"point_ms", "points": [{"t_ms",
 * "nonreclaimable_bytes", "page_cache_bytes", "cores_busy"}], "oom_point",
 * "oom_t_ms"}, or null when there is none (*why then the reason, else
 * NULL).
 */
json_t *mc_report_timeline_json(const struct mc_used *u, const char **why);

/* The steps kept for --svg, in the order they were added. */
struct mc_report_svg;
struct mc_report_svg *mc_report_svg_new(void);
/* Keep u's timeline (when it has one) with what the chart names. */
void mc_report_svg_add(struct mc_report_svg *s, const struct mc_used *u,
		       const char *step, const char *host);
/* Write them to out (mc_plot_svg) and free s. Returns 0, or -1 when
 * writing failed. */
int mc_report_svg_write(struct mc_report_svg *s, FILE *out);

/* The chart of u on stdout at width, or the line that says why not; a
 * step with nothing to show (mc_plot_nothing) is kept for
 * mc_report_plot_folded instead. */
void mc_report_plot(const struct mc_used *u, const char *step,
		    const char *host, unsigned width);

/* After the job's steps: the one line naming the steps mc_report_plot
 * drew nothing for ("steps 5.batch, 5.3: no memory to show ..."), or
 * nothing. */
void mc_report_plot_folded(unsigned width);

#endif
