/*
 * mc_plot.h - a step's timeline (mc_timeline.h) drawn for people: as text
 * for a terminal (`memcore report --plot`) and as a standalone SVG
 * (`--svg FILE`). Pure: it writes to the FILE it is given and reads
 * nothing else.
 *
 * What the chart shows, per step and node: non-reclaimable memory ('#')
 * with the page cache stacked on it (':'), their sum being the cgroup's
 * usage; the limit the step asked ('=' line) and the rule's figure ('-'
 * line); the first OOM kill ('X' at the top of its column and on the time
 * axis); a memory axis in MiB/GiB and a time axis with its unit; under it,
 * where the timeline has CPU figures (cgroup v2), the cores busy, a digit
 * a column (tenths of the allocation, '.' under one). Readable
 * without colour: each thing has its own character (SVG: its own fill or
 * dash and a text label).
 */
#ifndef MC_PLOT_H
#define MC_PLOT_H

#include <stdint.h>
#include <stdio.h>

#include "mc_timeline.h"

/* Rows of the text chart's plot area. */
#define MC_PLOT_ROWS 12
/* The text chart's narrowest and widest: a width outside is taken as the
 * nearest of them. */
#define MC_PLOT_MIN_WIDTH 32
#define MC_PLOT_MAX_WIDTH 400
/* Columns left of the plot area: the memory axis' labels and '|'. */
#define MC_PLOT_LABEL_COLS 10

/* One step on one node. */
struct mc_plot_in {
	const char *step, *host;
	const struct mc_timeline *tl;	/* decoded (mc_timeline_decode) */
	uint64_t limit_bytes;		/* asked, 0: none drawn */
	const char *limit_option;	/* "--mem=8G", NULL: not named */
	uint64_t rule_bytes;		/* the rule's figure, 0: none drawn */
	uint32_t cores;			/* allocated; 0: no cores busy row */
};

/*
 * The text chart, every line at most width columns (clamped to
 * MC_PLOT_MIN_WIDTH..MC_PLOT_MAX_WIDTH), plain ASCII. Lines: a title, the
 * MC_PLOT_ROWS rows of the plot (top first), the time axis, its labels,
 * the cores busy (with CPU figures and cores), the legend. Returns the
 * number of lines written.
 */
int mc_plot_text(FILE *out, const struct mc_plot_in *in, unsigned width);

/* The SVG of n steps (one panel each, one above the other), a standalone
 * document: the memory chart of mc_plot_text (not the cores busy). Returns 0, or -1 when out reported an error. */
int mc_plot_svg(FILE *out, const struct mc_plot_in *in, size_t n);

/* A time in ms for an axis: "45 s", "1.5 min", "2 h" (unit from
 * scale_ms, the axis' whole length). Returns buf. */
const char *mc_plot_fmt_time(uint64_t ms, uint64_t scale_ms, char *buf,
			     size_t len);

/* Bytes for an axis, at most 8 characters: "512 MiB", "7.5 GiB". */
const char *mc_plot_fmt_bytes(uint64_t bytes, char *buf, size_t len);

#endif
