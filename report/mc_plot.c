/*
 * mc_plot.c - a step's timeline as text and as SVG (mc_plot.h).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "mc_plot.h"

#define MIB ((uint64_t)1 << 20)
#define GIB ((uint64_t)1 << 30)
#define TIB ((uint64_t)1 << 40)

const char *mc_plot_fmt_time(uint64_t ms, uint64_t scale_ms, char *buf,
			     size_t len)
{
	if (scale_ms < 10000)
		snprintf(buf, len, "%.1f s", ms / 1000.0);
	else if (scale_ms < 180000)
		snprintf(buf, len, "%.0f s", ms / 1000.0);
	else if (scale_ms < 3 * 3600000ULL)
		snprintf(buf, len, "%.1f min", ms / 60000.0);
	else
		snprintf(buf, len, "%.1f h", ms / 3600000.0);
	/* "12.0 min" reads as "12 min" */
	{
		char *dot = strstr(buf, ".0 ");

		if (dot)
			memmove(dot, dot + 2, strlen(dot + 2) + 1);
	}
	return buf;
}

const char *mc_plot_fmt_bytes(uint64_t bytes, char *buf, size_t len)
{
	if (bytes >= 100 * GIB)
		snprintf(buf, len, "%" PRIu64 " GiB", (bytes + GIB / 2) / GIB);
	else if (bytes >= GIB)
		snprintf(buf, len, "%.1f GiB", (double)bytes / GIB);
	else
		snprintf(buf, len, "%" PRIu64 " MiB", (bytes + MIB / 2) / MIB);
	{
		char *dot = strstr(buf, ".0 ");

		if (dot)
			memmove(dot, dot + 2, strlen(dot + 2) + 1);
	}
	return buf;
}

uint64_t mc_plot_peak(const struct mc_timeline *tl)
{
	uint64_t peak = 0;

	for (uint32_t i = 0; i < tl->n; i++)
		if (tl->nr_bytes[i] + tl->file_bytes[i] > peak)
			peak = tl->nr_bytes[i] + tl->file_bytes[i];
	return peak;
}

bool mc_plot_nothing(const struct mc_plot_in *in)
{
	return !in->tl->n || (in->tl->oom_point < 0 &&
			      mc_plot_peak(in->tl) <= MC_PLOT_NOTHING_BYTES);
}

/* What the axis must hold: the usage; a mark just above it, so that it is
 * drawn where it is rather than named off the top; the limit of a step
 * killed there. */
static uint64_t scale_value(const struct mc_plot_in *in)
{
	uint64_t peak = mc_plot_peak(in->tl), v = peak;
	const uint64_t marks[2] = { in->limit_bytes, in->rule_bytes };

	for (int k = 0; k < 2; k++)
		if (marks[k] > v && marks[k] - peak <= peak / 4)
			v = marks[k];
	if (in->tl->oom_point >= 0 && in->limit_bytes > v &&
	    peak >= in->limit_bytes / 2)
		v = in->limit_bytes;
	return v;
}

/* The digits a tick's label needs: 2 for 0.25, 1 for 0.5 or 2.5. */
static int decimals_of(double step)
{
	for (int d = 0; d < 2; d++, step *= 10)
		if (step - (double)(uint64_t)(step + 1e-9) < 1e-6)
			return d;
	return 2;
}

void mc_plot_axis_of(const struct mc_plot_in *in, struct mc_plot_axis *ax)
{
	static const double mult[] = { 1, 2, 2.5, 5 };
	uint64_t vb = scale_value(in);
	double v, p;

	ax->unit = vb >= 3 * TIB / 4 ? TIB : vb >= 3 * GIB / 4 ? GIB : MIB;
	ax->unit_name = ax->unit == TIB ? "TiB" : ax->unit == GIB ? "GiB"
								 : "MiB";
	v = (double)vb / (double)ax->unit;
	/* the smallest round step that leaves at most MC_PLOT_MAX_TICKS
	 * intervals up to the first multiple above v (MiB: whole ones) */
	for (p = ax->unit == MIB ? 1 : 0.1;; p *= 10)
		for (size_t k = 0; k < 4; k++) {
			double n = (double)(uint64_t)(v / (p * mult[k]) + 1e-9)
				   + 1;

			if (n > MC_PLOT_MAX_TICKS)
				continue;
			ax->step = p * mult[k];
			ax->ticks = (unsigned)n;
			ax->top = n * ax->step;
			ax->top_bytes = (uint64_t)(ax->top * (double)ax->unit +
						   0.5);
			ax->decimals = decimals_of(ax->step);
			return;
		}
}

const char *mc_plot_fmt_tick(const struct mc_plot_axis *ax, unsigned k,
			     char *buf, size_t len)
{
	if (!k)
		snprintf(buf, len, "0");
	else
		snprintf(buf, len, "%.*f %s", ax->decimals, k * ax->step,
			 ax->unit_name);
	return buf;
}

/* Rows of MC_PLOT_ROWS that v fills, rounded to the nearest. */
static unsigned rows_of(uint64_t v, uint64_t top)
{
	unsigned __int128 r = ((unsigned __int128)v * MC_PLOT_ROWS + top / 2) /
			      top;

	return r > MC_PLOT_ROWS ? MC_PLOT_ROWS : (unsigned)r;
}

/* The points column c of cols stands for: [*p0, *p1). */
static void points_of(uint32_t n, unsigned c, unsigned cols, uint32_t *p0,
		      uint32_t *p1)
{
	*p0 = (uint32_t)((uint64_t)c * n / cols);
	*p1 = (uint32_t)((uint64_t)(c + 1) * n / cols);
	if (*p1 <= *p0)
		*p1 = *p0 + 1;
	if (*p1 > n)
		*p1 = n;
}

/* A round time between ticks of a total_ms axis cols wide: the smallest
 * of 1, 2, 5, 10, 15, 30 s, 1, 2, 5, 10, 15, 30 min, 1, 2, 3, 6, 12, 24 h
 * that leaves 10 columns between ticks. */
static uint64_t tick_ms(uint64_t total_ms, unsigned cols)
{
	static const uint64_t steps[] = {
		100, 200, 500, 1000, 2000, 5000, 10000, 15000, 30000, 60000,
		120000, 300000, 600000, 900000, 1800000, 3600000, 7200000,
		10800000, 21600000, 43200000, 86400000,
	};

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		if ((unsigned __int128)steps[i] * cols >= (unsigned __int128)
		    total_ms * 10)
			return steps[i];
	return total_ms / 4 + 1;
}

/* One line, cut at width. */
static void line(FILE *out, unsigned width, const char *s)
{
	size_t l = strlen(s);

	while (l && s[l - 1] == ' ')
		l--;
	if (l > width)
		l = width;
	fprintf(out, "%.*s\n", (int)l, s);
}

/* A legend's text: wrapped at ", " to width, the rest indented by 4.
 * Returns the lines written. */
static unsigned say(FILE *out, unsigned width, const char *s)
{
	unsigned n = 1;
	const char *cont = "";

	for (;;) {
		size_t l = strlen(s), ind = strlen(cont);
		const char *cut = NULL, *p;

		if (l + ind <= width)
			break;
		for (p = s; (p = strstr(p, ", ")) && (size_t)(p - s) + 1 + ind
		     <= width; p++)
			cut = p;
		if (!cut)
			break;
		fprintf(out, "%s%.*s\n", cont, (int)(cut - s + 1), s);
		s = cut + 2;
		cont = "    ";
		n++;
	}
	fprintf(out, "%s", cont);
	line(out, width - (unsigned)strlen(cont), s);
	return n;
}

/* The chart's grid, and where its lines and the kill are. */
struct plot_grid {
	char cell[MC_PLOT_ROWS][MC_PLOT_MAX_WIDTH + 1];
	unsigned cols;
	unsigned lr, rr;		/* rows of the limit and the rule */
	unsigned oom_col;
	bool has_l, has_r, has_oom;
	struct mc_plot_axis ax;
};

/* The title, in two lines when it is wider than width (each cut at
 * width). Returns the lines printed. */
static unsigned plot_title(FILE *out, const struct mc_plot_in *in,
			   unsigned width, uint64_t total_ms, uint64_t pms)
{
	char buf[MC_PLOT_MAX_WIDTH + 64], a[32], b[32];
	unsigned lines = 0;

	snprintf(buf, sizeof(buf), "step %s on %s: memory over %s, a point "
		 "every %s", in->step, in->host,
		 mc_plot_fmt_time(total_ms, total_ms, a, sizeof(a)),
		 mc_plot_fmt_time(pms, pms, b, sizeof(b)));
	if (strlen(buf) > width) {
		char *colon = strchr(buf, ':');

		*colon = '\0';
		fprintf(out, "%.*s:\n", (int)width - 1, buf);
		snprintf(buf, sizeof(buf), "  memory over %s, a point every "
			 "%s", a, b);
		lines++;
	}
	line(out, width, buf);
	return lines + 1;
}

/* The grid: the limit and rule lines first where they are inside the
 * axis (a bar through them hides them there), then a column of '#'
 * (non-reclaimable) and ':' (page cache) for each column's points, and
 * the OOM kill's 'X'. */
static void fill_grid(const struct mc_plot_in *in, uint64_t top,
		      struct plot_grid *g)
{
	const struct mc_timeline *tl = in->tl;
	unsigned prev_ft = 0;

	memset(g->cell, ' ', sizeof(g->cell));
	g->has_r = in->rule_bytes && in->rule_bytes <= top &&
		   rows_of(in->rule_bytes, top);
	g->has_l = in->limit_bytes && in->limit_bytes <= top &&
		   rows_of(in->limit_bytes, top);
	if (g->has_r) {
		g->rr = rows_of(in->rule_bytes, top) - 1;
		memset(g->cell[g->rr], '-', g->cols);
	}
	if (g->has_l) {
		g->lr = rows_of(in->limit_bytes, top) - 1;
		memset(g->cell[g->lr], '=', g->cols);
	}
	for (unsigned c = 0; c < g->cols; c++) {
		uint64_t nr = 0, tot = 0;
		uint32_t p0, p1;
		unsigned fn, ft;

		points_of(tl->n, c, g->cols, &p0, &p1);
		for (uint32_t i = p0; i < p1; i++) {
			if (tl->nr_bytes[i] > nr)
				nr = tl->nr_bytes[i];
			if (tl->nr_bytes[i] + tl->file_bytes[i] > tot)
				tot = tl->nr_bytes[i] + tl->file_bytes[i];
		}
		fn = rows_of(nr, top);
		ft = rows_of(tot, top);
		if (ft < fn)
			ft = fn;
		for (unsigned r = 0; r < ft; r++)
			g->cell[r][c] = r < fn ? '#' : ':';
		/* At the top of the kill's column, or of the one before when
		 * the kill had already freed its memory. */
		if (!g->has_oom && tl->oom_point >= 0 &&
		    (uint32_t)tl->oom_point >= p0 &&
		    (uint32_t)tl->oom_point < p1) {
			unsigned at = ft > prev_ft ? ft : prev_ft;

			g->has_oom = true;
			g->oom_col = c;
			g->cell[at ? at - 1 : 0][c] = 'X';
		}
		prev_ft = ft;
	}
}

/* The grid's rows, top first, each tick of the axis labelled on its row
 * (the rows of 0..top, MC_PLOT_ROWS of them, are top / MC_PLOT_ROWS
 * each; a tick is on the row it ends). Returns the lines printed. */
static unsigned print_grid(FILE *out, unsigned width, struct plot_grid *g)
{
	char buf[MC_PLOT_MAX_WIDTH + 64];
	const char *label[MC_PLOT_ROWS] = { NULL };
	char ticks[MC_PLOT_MAX_TICKS + 1][32];

	for (unsigned k = 1; k <= g->ax.ticks; k++) {
		uint64_t v = (uint64_t)((double)g->ax.top_bytes * k /
					g->ax.ticks + 0.5);
		unsigned r = rows_of(v, g->ax.top_bytes);

		if (r)
			label[r - 1] = mc_plot_fmt_tick(&g->ax, k, ticks[k],
							sizeof(ticks[k]));
	}
	for (int r = MC_PLOT_ROWS - 1; r >= 0; r--) {
		g->cell[r][g->cols] = '\0';
		snprintf(buf, sizeof(buf), "%*s |%s", MC_PLOT_LABEL_COLS - 2,
			 label[r] ? label[r] : "", g->cell[r]);
		line(out, width, buf);
	}
	return MC_PLOT_ROWS;
}

/* The marks above the axis' top, named over the chart with '^'. Returns
 * the lines printed (0: none). */
static unsigned off_top(FILE *out, const struct mc_plot_in *in,
			unsigned width, uint64_t top)
{
	char buf[MC_PLOT_MAX_WIDTH + 128], a[32];
	bool lim = in->limit_bytes > top, rule = in->rule_bytes > top;

	if (!lim && !rule)
		return 0;
	snprintf(buf, sizeof(buf), "%*s ^ above the chart:",
		 MC_PLOT_LABEL_COLS - 2, "");
	if (lim)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf),
			 " asked %s%s%s%s%s", mc_plot_fmt_bytes(in->limit_bytes,
			 a, sizeof(a)), in->limit_option ? " (" : "",
			 in->limit_option ? in->limit_option : "",
			 in->limit_option ? ")" : "", rule ? "," : "");
	if (rule)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf),
			 " the rule's figure %s",
			 mc_plot_fmt_bytes(in->rule_bytes, a, sizeof(a)));
	/* too wide: a comma where say() may cut, each mark on its line */
	if (strlen(buf) > width)
		buf[strlen(buf) - strlen(strchr(buf, ':'))] = ',';
	return say(out, width, buf);
}

/* The time axis: ticks at round times, 10 columns apart or more,
 * labelled below; the kill's column an 'X'. Two lines. */
static unsigned time_axis(FILE *out, unsigned width, uint64_t total_ms,
			  const struct plot_grid *g)
{
	uint64_t tick = tick_ms(total_ms, g->cols), t;
	char axis[MC_PLOT_MAX_WIDTH + 1], labels[MC_PLOT_MAX_WIDTH + 1];
	char buf[MC_PLOT_MAX_WIDTH + 64], a[32];
	size_t free_at = 0;

	memset(axis, '-', g->cols);
	axis[g->cols] = '\0';
	memset(labels, ' ', sizeof(labels));
	for (t = 0; total_ms && t < total_ms; t += tick) {
		unsigned c = (unsigned)((unsigned __int128)t * g->cols /
					total_ms);
		size_t l;

		if (c)
			axis[c] = '+';
		mc_plot_fmt_time(t, total_ms, a, sizeof(a));
		l = strlen(a);
		if (c < free_at || c + l > g->cols)
			continue;
		memcpy(labels + c, a, l);
		free_at = c + l + 1;
	}
	labels[g->cols] = '\0';
	if (g->has_oom)
		axis[g->oom_col] = 'X';
	snprintf(buf, sizeof(buf), "%*s +%s", MC_PLOT_LABEL_COLS - 2, "0",
		 axis);
	line(out, width, buf);
	snprintf(buf, sizeof(buf), "%*s%s", MC_PLOT_LABEL_COLS, "", labels);
	line(out, width, buf);
	return 2;
}

/* Cores busy (v2), a digit a column: tenths of the allocation. One
 * line. */
static unsigned cores_row(FILE *out, const struct mc_plot_in *in,
			  unsigned width, unsigned cols)
{
	const struct mc_timeline *tl = in->tl;
	char row[MC_PLOT_MAX_WIDTH + 1], buf[MC_PLOT_MAX_WIDTH + 64];

	for (unsigned c = 0; c < cols; c++) {
		uint32_t p0, p1, busy = 0;
		uint64_t tenths;

		points_of(tl->n, c, cols, &p0, &p1);
		for (uint32_t i = p0; i < p1; i++)
			if (tl->cpu_milli[i] > busy)
				busy = tl->cpu_milli[i];
		tenths = (uint64_t)busy * 10 / (in->cores * 1000ULL);
		row[c] = !tenths ? '.' : tenths > 9 ? '9'
				 : (char)('0' + tenths);
	}
	row[cols] = '\0';
	snprintf(buf, sizeof(buf), "%*s  %s", MC_PLOT_LABEL_COLS - 2,
		 "cores", row);
	line(out, width, buf);
	return 1;
}

/* The legend of the lines drawn: the limit's, the rule's (the limit's
 * row shows both when they fall on one). Returns the lines printed. */
static unsigned legend_lines(FILE *out, const struct mc_plot_in *in,
			     unsigned width, const struct plot_grid *g)
{
	char buf[MC_PLOT_MAX_WIDTH + 64], a[32];
	unsigned lines = 0;

	if (g->has_l) {
		snprintf(buf, sizeof(buf), "  = asked %s%s%s%s",
			 mc_plot_fmt_bytes(in->limit_bytes, a, sizeof(a)),
			 in->limit_option ? " (" : "",
			 in->limit_option ? in->limit_option : "",
			 in->limit_option ? ")" : "");
		lines += say(out, width, buf);
	}
	if (g->has_r) {
		snprintf(buf, sizeof(buf), "  - the rule's figure %s%s",
			 mc_plot_fmt_bytes(in->rule_bytes, a, sizeof(a)),
			 g->has_l && g->lr == g->rr ? " (on the '=' row: "
			 "that row holds both)" : "");
		lines += say(out, width, buf);
	}
	return lines;
}

/* The legend: the marks, the lines, the largest figures, the kill.
 * Returns the lines printed. */
static unsigned plot_legend(FILE *out, const struct mc_plot_in *in,
			    unsigned width, const struct plot_grid *g,
			    uint64_t pms, uint64_t total_ms)
{
	const struct mc_timeline *tl = in->tl;
	char buf[MC_PLOT_MAX_WIDTH + 64], a[32];
	uint64_t big_nr = 0;
	unsigned lines = 0;

	snprintf(buf, sizeof(buf), "  # non-reclaimable  : page cache");
	lines += say(out, width, buf);
	if (tl->has_cpu && in->cores) {
		snprintf(buf, sizeof(buf), "  cores busy: tenths of the %" PRIu32
			 " allocated, 0 to 9, '.' under a tenth", in->cores);
		lines += say(out, width, buf);
	}
	lines += legend_lines(out, in, width, g);
	for (uint32_t i = 0; i < tl->n; i++)
		if (tl->nr_bytes[i] > big_nr)
			big_nr = tl->nr_bytes[i];
	snprintf(buf, sizeof(buf), "  largest: %s non-reclaimable",
		 mc_plot_fmt_bytes(big_nr, a, sizeof(a)));
	if (in->limit_bytes)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf),
			 ", %.0f%% of asked", 100.0 * (double)big_nr /
			 (double)in->limit_bytes);
	snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), ", %s with "
		 "page cache", mc_plot_fmt_bytes(mc_plot_peak(tl), a,
						 sizeof(a)));
	lines += say(out, width, buf);
	if (tl->oom_point >= 0) {
		snprintf(buf, sizeof(buf), "  X OOM kill, by %s",
			 mc_plot_fmt_time(pms * ((uint64_t)tl->oom_point + 1),
					  total_ms, a, sizeof(a)));
		lines += say(out, width, buf);
	}
	return lines;
}

int mc_plot_text(FILE *out, const struct mc_plot_in *in, unsigned width)
{
	const struct mc_timeline *tl = in->tl;
	struct plot_grid g;
	uint64_t pms = mc_timeline_point_ms(tl);
	uint64_t total_ms = pms * tl->n;
	unsigned lines;

	if (width < MC_PLOT_MIN_WIDTH)
		width = MC_PLOT_MIN_WIDTH;
	if (width > MC_PLOT_MAX_WIDTH)
		width = MC_PLOT_MAX_WIDTH;
	lines = plot_title(out, in, width, total_ms, pms);
	if (!tl->n) {
		line(out, width, "  (no samples)");
		return (int)lines + 1;
	}
	memset(&g, 0, sizeof(g));
	g.cols = width - MC_PLOT_LABEL_COLS;
	mc_plot_axis_of(in, &g.ax);
	lines += off_top(out, in, width, g.ax.top_bytes);
	fill_grid(in, g.ax.top_bytes, &g);
	lines += print_grid(out, width, &g);
	lines += time_axis(out, width, total_ms, &g);
	if (tl->has_cpu && in->cores)
		lines += cores_row(out, in, width, g.cols);
	lines += plot_legend(out, in, width, &g, pms, total_ms);
	return (int)lines;
}

/* The names of in[0..n)'s steps with nothing to show, "5.batch, 5.3",
 * into buf; a step named again (another node) once. Returns how many. */
static size_t folded_names(const struct mc_plot_in *in, size_t n,
			   char *buf, size_t len)
{
	size_t k = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		bool seen = false;

		if (!mc_plot_nothing(&in[i]))
			continue;
		for (size_t j = 0; j < i && !seen; j++)
			seen = mc_plot_nothing(&in[j]) &&
			       !strcmp(in[j].step, in[i].step);
		if (seen)
			continue;
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s",
			 k ? ", " : "", in[i].step);
		k++;
	}
	return k;
}

/* "steps 5.batch, 5.3: no memory to show (32 MiB or less)" into buf;
 * "" when none. */
static void folded_line(const struct mc_plot_in *in, size_t n, char *buf,
			size_t len)
{
	char names[1024];
	size_t k = folded_names(in, n, names, sizeof(names));

	if (!k)
		buf[0] = '\0';
	else
		snprintf(buf, len, "%s %s: no memory to show (%llu MiB or "
			 "less)", k > 1 ? "steps" : "step", names,
			 MC_PLOT_NOTHING_BYTES >> 20);
}

int mc_plot_text_folded(FILE *out, const struct mc_plot_in *in, size_t n,
			unsigned width)
{
	char buf[1200];

	folded_line(in, n, buf + 2, sizeof(buf) - 2);
	if (!buf[2])
		return 0;
	memcpy(buf, "  ", 2);
	return (int)say(out, width < MC_PLOT_MIN_WIDTH ? MC_PLOT_MIN_WIDTH
			: width, buf);
}

/* Text for XML: <>&" escaped, control characters dropped; the rest (the
 * labels' UTF-8 arrow) as it is. */
static void xml_text(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '<')
			fputs("&lt;", out);
		else if (*s == '>')
			fputs("&gt;", out);
		else if (*s == '&')
			fputs("&amp;", out);
		else if (*s == '"')
			fputs("&quot;", out);
		else if ((unsigned char)*s >= 0x20 && *s != 0x7f)
			fputc(*s, out);
	}
}

/* A record's name for a label: printable ASCII only (the record's names
 * are; a label must stay well-formed XML whatever it holds). */
static void ascii_name(char *dst, size_t len, const char *s)
{
	size_t k = 0;

	for (; s && *s && k + 1 < len; s++)
		if ((unsigned char)*s >= 0x20 && (unsigned char)*s < 0x7f)
			dst[k++] = *s;
	dst[k] = '\0';
}

#define SVG_W 900
#define SVG_PANEL_H 340
#define SVG_L MC_PLOT_SVG_LEFT
#define SVG_T MC_PLOT_SVG_TOP
#define SVG_PW MC_PLOT_SVG_WIDTH
#define SVG_PH MC_PLOT_SVG_HEIGHT
#define SVG_B (SVG_T + SVG_PH)	/* the plot area's bottom */
#define SVG_OFF_Y (SVG_T - 8)	/* baseline of the marks above the top */
#define SVG_FOLD_H 36		/* the line of steps with nothing to show */
#define SVG_NUDGE 15		/* a mark's name moves by this */

/* A value's height in a panel whose top is 0, of an axis up to top. */
static double svg_y(uint64_t top, uint64_t v)
{
	return SVG_B - (double)v * SVG_PH / (double)top;
}

/* The classes of labels: font size and weight, for their boxes. */
static double font_of(const char *cls, bool *bold)
{
	*bold = strcmp(cls, "yl") && strcmp(cls, "xl") && strcmp(cls, "lg");
	return !strcmp(cls, "title") ? 15 : 12;
}

/* Characters of UTF-8 s. */
static size_t chars_of(const char *s)
{
	size_t k = 0;

	for (; *s; s++)
		k += ((unsigned char)*s & 0xc0) != 0x80;
	return k;
}

/* l's box from its anchor point, text and class: an estimate on the
 * wide side (DejaVu Sans, the sans-serif of Debian's Chromium, is about
 * 0.6 em a character, bold 0.68; its ascent 0.93 em, descent 0.24), the
 * white halo's 1.5 px around. */
static void label_box(struct mc_plot_label *l)
{
	bool bold;
	double fs = font_of(l->cls, &bold);

	l->bw = (double)chars_of(l->text) * fs * (bold ? 0.7 : 0.62) + 3;
	l->bh = fs * 1.17 + 3;
	l->bx = l->anchor == 's' ? l->x - 1.5 : l->anchor == 'e'
		? l->x - l->bw + 1.5 : l->x - l->bw / 2;
	l->by = l->y - fs * 0.93 - 1.5;
}

/* A new label at (x, y), its box computed. Returns it. */
static struct mc_plot_label *label_add(struct mc_plot_label *l, size_t *n,
				       double x, double y, char anchor,
				       const char *cls, const char *text)
{
	struct mc_plot_label *p = &l[*n];

	if (*n >= MC_PLOT_LABELS_MAX)
		return NULL;
	p->x = x;
	p->y = y;
	p->anchor = anchor;
	p->cls = cls;
	snprintf(p->text, sizeof(p->text), "%s", text);
	label_box(p);
	(*n)++;
	return p;
}

static bool boxes_overlap(const struct mc_plot_label *a,
			  const struct mc_plot_label *b)
{
	return a->bx < b->bx + b->bw && b->bx < a->bx + a->bw &&
	       a->by < b->by + b->bh && b->by < a->by + a->bh;
}

/* l[i] overlaps one of l[0..i). */
static bool overlaps_any(const struct mc_plot_label *l, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (boxes_overlap(&l[i], &l[j]))
			return true;
	return false;
}

/* Move l[i] (the last placed) off the others: down, up, further down ...
 * by SVG_NUDGE, its baseline kept in [ymin, ymax]; where no place is
 * free it stays where it was asked. */
static void nudge(struct mc_plot_label *l, size_t i, double ymin,
		  double ymax)
{
	double y0 = l[i].y;

	for (int k = 0; k <= 2 * (SVG_PH / SVG_NUDGE); k++) {
		double dy = (k + 1) / 2 * SVG_NUDGE * (k % 2 ? 1 : -1);

		if (y0 + dy < ymin || y0 + dy > ymax)
			continue;
		l[i].y = y0 + dy;
		label_box(&l[i]);
		if (!overlaps_any(l, i))
			return;
	}
	l[i].y = y0;
	label_box(&l[i]);
}

/* The title within the picture: without its ", a point every ..." when
 * it is too wide, then cut with "...". */
static void fit_title(struct mc_plot_label *p)
{
	char *cut;
	size_t len;

	if (!p || p->bx + p->bw <= SVG_W - 4)
		return;
	cut = strstr(p->text, ", a point every");
	if (cut)
		*cut = '\0';
	label_box(p);
	for (len = strlen(p->text); p->bx + p->bw > SVG_W - 4 && len > 8;
	     len--) {
		memcpy(p->text + len - 4, "...", 4);
		label_box(p);
	}
}

/* The title, the memory ticks, the time ticks, the legend's words. */
static void labels_fixed(const struct mc_plot_in *in,
			 const struct mc_plot_axis *ax, struct mc_plot_label *l,
			 size_t *n)
{
	const struct mc_timeline *tl = in->tl;
	uint64_t pms = mc_timeline_point_ms(tl);
	uint64_t total_ms = pms * (tl->n ? tl->n : 1);
	char buf[160], step[48], host[64], a[32], b[32];

	ascii_name(step, sizeof(step), in->step);
	ascii_name(host, sizeof(host), in->host);
	snprintf(buf, sizeof(buf), "step %s on %s: memory over %s, a point "
		 "every %s", step, host,
		 mc_plot_fmt_time(total_ms, total_ms, a, sizeof(a)),
		 mc_plot_fmt_time(pms, pms, b, sizeof(b)));
	fit_title(label_add(l, n, SVG_L, 22, 's', "title", buf));
	for (unsigned k = 0; k <= ax->ticks; k++)
		label_add(l, n, SVG_L - 6, SVG_B - (double)SVG_PH * k /
			  ax->ticks + 4, 'e', "yl",
			  mc_plot_fmt_tick(ax, k, a, sizeof(a)));
	/* round times, 100 px apart or more */
	for (uint64_t t = 0, tick = tick_ms(total_ms, SVG_PW / 10);
	     t <= total_ms; t += tick)
		label_add(l, n, SVG_L + (double)SVG_PW * (double)t /
			  (double)total_ms, SVG_B + 22, 'm', "xl",
			  mc_plot_fmt_time(t, total_ms, a, sizeof(a)));
	label_add(l, n, SVG_L + 20, SVG_PANEL_H - 21, 's', "lg",
		  "non-reclaimable");
	label_add(l, n, SVG_L + 180, SVG_PANEL_H - 21, 's', "lg",
		  "page cache");
}

/* A mark's name: "asked 8 GiB (--mem=8G)", "the rule's figure 6 GiB",
 * with " ↑" when it is above the axis. */
static void mark_text(const struct mc_plot_in *in, bool limit, bool off,
		      char *buf, size_t len)
{
	char a[32], opt[48];

	ascii_name(opt, sizeof(opt), in->limit_option);
	if (limit)
		snprintf(buf, len, "asked %s%s%s%s%s",
			 mc_plot_fmt_bytes(in->limit_bytes, a, sizeof(a)),
			 opt[0] ? " (" : "", opt, opt[0] ? ")" : "",
			 off ? " \xe2\x86\x91" : "");
	else
		snprintf(buf, len, "the rule's figure %s%s",
			 mc_plot_fmt_bytes(in->rule_bytes, a, sizeof(a)),
			 off ? " \xe2\x86\x91" : "");
}

/* The limit's and the rule's names: at their line's right end (the
 * limit's above it, the rule's below), or in a row over the plot area,
 * right to left, when they are above the axis' top. */
static void labels_marks(const struct mc_plot_in *in, uint64_t top,
			 struct mc_plot_label *l, size_t *n)
{
	const uint64_t v[2] = { in->limit_bytes, in->rule_bytes };
	double off_x = SVG_L + SVG_PW;
	char buf[160];

	for (int k = 0; k < 2; k++) {
		struct mc_plot_label *p;
		bool off = v[k] > top;

		if (!v[k])
			continue;
		mark_text(in, k == 0, off, buf, sizeof(buf));
		if (off) {
			p = label_add(l, n, off_x, SVG_OFF_Y, 'e', "ll", buf);
			if (p)
				off_x = p->bx - 10;
			continue;
		}
		p = label_add(l, n, SVG_L + SVG_PW - 4, svg_y(top, v[k]) +
			      (k ? 14 : -5), 'e', "ll", buf);
		if (p)
			nudge(l, *n - 1, SVG_T + 12, SVG_B - 4);
	}
}

/* The OOM kill's name at the top of the plot area, left of its line (or
 * right of it, near the left edge), nudged down off the others. */
static void label_oom(const struct mc_plot_in *in, struct mc_plot_label *l,
		      size_t *n)
{
	const struct mc_timeline *tl = in->tl;
	double x = SVG_L + (tl->oom_point + 0.5) * SVG_PW / tl->n;
	struct mc_plot_label *p;

	if (tl->oom_point < 0 || !tl->n)
		return;
	p = label_add(l, n, x - 6, SVG_T + 14, 'e', "oomt", "OOM kill");
	if (!p)
		return;
	if (p->bx < SVG_L) {
		p->anchor = 's';
		p->x = x + 6;
		label_box(p);
	}
	nudge(l, *n - 1, SVG_T + 14, SVG_B - 4);
}

size_t mc_plot_svg_labels(const struct mc_plot_in *in,
			  struct mc_plot_label *l)
{
	struct mc_plot_axis ax;
	size_t n = 0;

	mc_plot_axis_of(in, &ax);
	labels_fixed(in, &ax, l, &n);
	labels_marks(in, ax.top_bytes, l, &n);
	label_oom(in, l, &n);
	return n;
}

/* A horizontal line across the plot area at v, on a white halo. */
static void svg_hline(FILE *out, const char *cls, double y)
{
	fprintf(out, "<path class=\"halo\" d=\"M %d %.1f L %d %.1f\"/>\n"
		"<path class=\"%s\" d=\"M %d %.1f L %d %.1f\"/>\n", SVG_L, y,
		SVG_L + SVG_PW, y, cls, SVG_L, y, SVG_L + SVG_PW, y);
}

/* The usage (non-reclaimable + page cache) as a step outline filled
 * light, the non-reclaimable part over it filled dark. */
static void svg_usage(FILE *out, const struct mc_timeline *tl, uint64_t top)
{
	double xs = (double)SVG_PW / tl->n;

	for (int part = 0; part < 2; part++) {
		fprintf(out, "<path class=\"%s\" d=\"M %d %d",
			part ? "nr" : "cache", SVG_L, SVG_B);
		for (uint32_t i = 0; i < tl->n; i++) {
			double y = svg_y(top, tl->nr_bytes[i] +
					 (part ? 0 : tl->file_bytes[i]));

			fprintf(out, " L %.1f %.1f L %.1f %.1f",
				SVG_L + i * xs, y, SVG_L + (i + 1) * xs, y);
		}
		fprintf(out, " L %d %d Z\"/>\n", SVG_L + SVG_PW, SVG_B);
	}
}

/* The plot area, its grid at the ticks, the axes and the time ticks. */
static void svg_frame(FILE *out, const struct mc_plot_label *l, size_t n,
		      const struct mc_plot_axis *ax)
{
	fprintf(out, "<rect class=\"area\" x=\"%d\" y=\"%d\" width=\"%d\" "
		"height=\"%d\"/>\n", SVG_L, SVG_T, SVG_PW, SVG_PH);
	for (unsigned k = 1; k <= ax->ticks; k++) {
		double y = SVG_B - (double)SVG_PH * k / ax->ticks;

		fprintf(out, "<path class=\"grid\" d=\"M %d %.1f L %d %.1f\"/>"
			"\n", SVG_L, y, SVG_L + SVG_PW, y);
	}
	for (size_t i = 0; i < n; i++)
		if (!strcmp(l[i].cls, "xl"))
			fprintf(out, "<path class=\"axis\" d=\"M %.1f %d L %.1f "
				"%d\"/>\n", l[i].x, SVG_B, l[i].x, SVG_B + 4);
}

/* The marks over the usage: the rule's figure and the limit where they
 * are inside the axis, the OOM kill's line. */
static void svg_marks(FILE *out, const struct mc_plot_in *in, uint64_t top)
{
	const struct mc_timeline *tl = in->tl;

	if (in->rule_bytes && in->rule_bytes <= top)
		svg_hline(out, "rule", svg_y(top, in->rule_bytes));
	if (in->limit_bytes && in->limit_bytes <= top)
		svg_hline(out, "limit", svg_y(top, in->limit_bytes));
	if (tl->oom_point >= 0 && tl->n) {
		double x = SVG_L + (tl->oom_point + 0.5) * SVG_PW / tl->n;

		fprintf(out, "<path class=\"halo\" d=\"M %.1f %d L %.1f %d\"/>"
			"\n<path class=\"oom\" d=\"M %.1f %d L %.1f %d\"/>\n", x,
			SVG_T, x, SVG_B, x, SVG_T, x, SVG_B);
	}
}

static void svg_labels(FILE *out, const struct mc_plot_label *l, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		fprintf(out, "<text class=\"%s\" x=\"%.1f\" y=\"%.1f\"%s>",
			l[i].cls, l[i].x, l[i].y, l[i].anchor == 'e'
			? " text-anchor=\"end\"" : l[i].anchor == 'm'
			? " text-anchor=\"middle\"" : "");
		xml_text(out, l[i].text);
		fputs("</text>\n", out);
	}
}

/* One step's panel, its top at y0. */
static void svg_panel(FILE *out, const struct mc_plot_in *in, unsigned y0)
{
	struct mc_plot_label l[MC_PLOT_LABELS_MAX];
	struct mc_plot_axis ax;
	size_t n = mc_plot_svg_labels(in, l);

	mc_plot_axis_of(in, &ax);
	fprintf(out, "<g class=\"panel\" transform=\"translate(0 %u)\">\n", y0);
	svg_frame(out, l, n, &ax);
	if (in->tl->n)
		svg_usage(out, in->tl, ax.top_bytes);
	fprintf(out, "<path class=\"axis\" d=\"M %d %d L %d %d L %d %d\"/>\n",
		SVG_L, SVG_T, SVG_L, SVG_B, SVG_L + SVG_PW, SVG_B);
	svg_marks(out, in, ax.top_bytes);
	fprintf(out, "<rect class=\"nr\" x=\"%d\" y=\"%d\" width=\"14\" "
		"height=\"10\"/>\n<rect class=\"cache\" x=\"%d\" y=\"%d\" "
		"width=\"14\" height=\"10\"/>\n", SVG_L, SVG_PANEL_H - 30,
		SVG_L + 160, SVG_PANEL_H - 30);
	svg_labels(out, l, n);
	fputs("</g>\n", out);
}

static const char svg_style[] =
	"<style>\n"
	".nr { fill: #3b6ea5; stroke: #1d3a5c; stroke-width: 0.5 }\n"
	".cache { fill: #a9c4e4; stroke: #6f8fb5; stroke-width: 0.5 }\n"
	".area { fill: #ffffff }\n"
	".grid { stroke: #e4e4e4; stroke-width: 1 }\n"
	".halo { stroke: #ffffff; stroke-width: 3.5 }\n"
	".axis { fill: none; stroke: #000000; stroke-width: 1 }\n"
	".limit { stroke: #c0392b; stroke-width: 2 }\n"
	".rule { stroke: #d68910; stroke-width: 2; stroke-dasharray: 8 5 }\n"
	".oom { stroke: #7d3c98; stroke-width: 2; stroke-dasharray: 2 3 }\n"
	".title { font-size: 15px; font-weight: bold }\n"
	".ll, .oomt, .fold { font-weight: bold; stroke: #ffffff; "
	"stroke-width: 3; paint-order: stroke }\n"
	"</style>\n";

/* Under the panels: the steps with nothing to show, in one line. */
static void svg_folded(FILE *out, const struct mc_plot_in *in, size_t n,
		       unsigned y0)
{
	char buf[1200];

	folded_line(in, n, buf, sizeof(buf));
	if (!buf[0])
		return;
	fprintf(out, "<text class=\"fold\" x=\"%d\" y=\"%u\">", SVG_L,
		y0 + 24);
	xml_text(out, buf);
	fputs("</text>\n", out);
}

int mc_plot_svg(FILE *out, const struct mc_plot_in *in, size_t n)
{
	size_t shown = 0, none = 0;
	unsigned h;

	for (size_t i = 0; i < n; i++)
		mc_plot_nothing(&in[i]) ? none++ : shown++;
	h = (unsigned)shown * SVG_PANEL_H + (none || !n ? SVG_FOLD_H : 0);
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%u\" viewBox=\"0 0 %d %u\" "
		"font-family=\"sans-serif\" font-size=\"12\">\n"
		"<title>memcore: memory over time</title>\n%s"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n",
		SVG_W, h, SVG_W, h, svg_style);
	shown = 0;
	for (size_t i = 0; i < n; i++)
		if (!mc_plot_nothing(&in[i]))
			svg_panel(out, &in[i], (unsigned)shown++ * SVG_PANEL_H);
	svg_folded(out, in, n, (unsigned)shown * SVG_PANEL_H);
	if (!n)
		fprintf(out, "<text x=\"%d\" y=\"24\">no step of this job "
			"kept a timeline</text>\n", SVG_L);
	fputs("</svg>\n", out);
	return ferror(out) ? -1 : 0;
}
