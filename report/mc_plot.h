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
 *
 * Scaled to the data (mc_plot_axis): the memory axis runs from 0 to a
 * round value just above what the step used, so that a 1.4 GiB climb
 * under --mem=30G fills the picture; the limit and the rule's figure are
 * lines where they fall inside it, and named at the top edge with their
 * value where they are above it. A step that used next to nothing
 * (mc_plot_nothing) gets no chart: such steps are named together in one
 * line (mc_plot_text_folded).
 */
#ifndef MC_PLOT_H
#define MC_PLOT_H

#include <stdbool.h>
#include <stddef.h>
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
/* A step whose usage never passed this has nothing to show: a batch step
 * that only ran srun (a shell and srun), a step with no samples. */
#define MC_PLOT_NOTHING_BYTES (32ULL << 20)
/* The memory axis' most intervals between ticks. */
#define MC_PLOT_MAX_TICKS 5

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
 * The memory axis of a chart: 0 to top_bytes, a tick every step units.
 * top is the smallest multiple of a round step (1, 2, 2.5 or 5 x 10^n of
 * the unit shown, at most MC_PLOT_MAX_TICKS intervals) strictly above the
 * step's largest usage; raised to a limit or rule's figure that is at
 * most a quarter above that usage (drawn rather than named off the top),
 * and for an OOM-killed step to its limit (where the kernel killed it)
 * when the usage reached half of it.
 */
struct mc_plot_axis {
	uint64_t top_bytes;
	uint64_t unit;			/* bytes: MiB, GiB or TiB */
	const char *unit_name;		/* "MiB", "GiB", "TiB" */
	double step, top;		/* in unit */
	unsigned ticks;			/* intervals: top / step */
	int decimals;			/* of each tick's label */
};
void mc_plot_axis_of(const struct mc_plot_in *in, struct mc_plot_axis *ax);

/* Tick k of ax's axis (0..ticks): "0", "0.5 GiB", "250 MiB". Returns
 * buf. */
const char *mc_plot_fmt_tick(const struct mc_plot_axis *ax, unsigned k,
			     char *buf, size_t len);

/* The step's largest usage (non-reclaimable + page cache) of its
 * timeline; 0 without points. */
uint64_t mc_plot_peak(const struct mc_timeline *tl);

/* Nothing to show: no points, or usage never above MC_PLOT_NOTHING_BYTES
 * and no OOM kill. */
bool mc_plot_nothing(const struct mc_plot_in *in);

/* One text label of the SVG, placed: its anchor point (x, the baseline
 * y), and the box it covers, estimated from its font size and length. */
struct mc_plot_label {
	double x, y;
	double bx, by, bw, bh;		/* box: left, top, width, height */
	char anchor;			/* 's' start, 'm' middle, 'e' end */
	const char *cls;		/* its SVG class */
	char text[160];			/* UTF-8, not escaped */
};
/* The most labels of one panel. */
#define MC_PLOT_LABELS_MAX 40

/*
 * The labels of in's SVG panel, in the panel's coordinates (its top at
 * 0): the title, the axes' ticks, the limit and rule's names (at their
 * line, or off the top), the OOM kill's, the legend; the marks' names
 * nudged until no two boxes overlap. Returns how many were put in l
 * (at most MC_PLOT_LABELS_MAX).
 */
size_t mc_plot_svg_labels(const struct mc_plot_in *in,
			  struct mc_plot_label *l);

/* The SVG panel's plot area, in the panel's coordinates. */
#define MC_PLOT_SVG_LEFT 90
#define MC_PLOT_SVG_TOP 52
#define MC_PLOT_SVG_WIDTH 780
#define MC_PLOT_SVG_HEIGHT 220

/*
 * The text chart, every line at most width columns (clamped to
 * MC_PLOT_MIN_WIDTH..MC_PLOT_MAX_WIDTH), plain ASCII. Lines: a title;
 * the limit and rule's figure above the axis, named with '^' (when there
 * are); the MC_PLOT_ROWS rows of the plot (top first), the ticks of
 * mc_plot_axis labelled on their rows; the time axis, its labels, the
 * cores busy (with CPU figures and cores), the legend. Returns the
 * number of lines written.
 */
int mc_plot_text(FILE *out, const struct mc_plot_in *in, unsigned width);

/*
 * One line naming the steps of in[0..n) that have nothing to show
 * (mc_plot_nothing): "  steps 5.batch, 5.3: no memory to show (32 MiB
 * or less)", wrapped at width. Nothing when there is none. Returns the
 * lines written.
 */
int mc_plot_text_folded(FILE *out, const struct mc_plot_in *in, size_t n,
			unsigned width);

/* The SVG of n steps, a standalone document: one panel each (the memory
 * chart of mc_plot_text, not the cores busy), one above the other; the
 * steps with nothing to show in one line under them. Returns 0, or -1
 * when out reported an error. */
int mc_plot_svg(FILE *out, const struct mc_plot_in *in, size_t n);

/* A time in ms for an axis: "45 s", "1.5 min", "2 h" (unit from
 * scale_ms, the axis' whole length). Returns buf. */
const char *mc_plot_fmt_time(uint64_t ms, uint64_t scale_ms, char *buf,
			     size_t len);

/* Bytes for an axis, at most 8 characters: "512 MiB", "7.5 GiB". */
const char *mc_plot_fmt_bytes(uint64_t bytes, char *buf, size_t len);

#endif
