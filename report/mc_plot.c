/*
 * mc_plot.c - a step's timeline as text and as SVG (mc_plot.h).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "mc_plot.h"

#define MIB ((uint64_t)1 << 20)
#define GIB ((uint64_t)1 << 30)

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

/* What the chart is scaled to: the limit, the rule's figure or the
 * largest usage, whichever is most. */
static uint64_t top_of(const struct mc_plot_in *in)
{
	const struct mc_timeline *tl = in->tl;
	uint64_t top = in->limit_bytes > in->rule_bytes ? in->limit_bytes
							: in->rule_bytes;

	for (uint32_t i = 0; i < tl->n; i++)
		if (tl->nr_bytes[i] + tl->file_bytes[i] > top)
			top = tl->nr_bytes[i] + tl->file_bytes[i];
	return top ? top : MIB;
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

/* The grid: the limit and rule lines first (a bar through them hides
 * them there), then a column of '#' (non-reclaimable) and ':' (page
 * cache) for each column's points, and the OOM kill's 'X'. */
static void fill_grid(const struct mc_plot_in *in, uint64_t top,
		      struct plot_grid *g)
{
	const struct mc_timeline *tl = in->tl;
	unsigned prev_ft = 0;

	memset(g->cell, ' ', sizeof(g->cell));
	g->has_r = in->rule_bytes && rows_of(in->rule_bytes, top);
	g->has_l = in->limit_bytes && rows_of(in->limit_bytes, top);
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

/* The grid's rows, top first, labelled: the limit, the rule, the top
 * and its half. Returns the lines printed. */
static unsigned print_grid(FILE *out, const struct mc_plot_in *in,
			   uint64_t top, unsigned width, struct plot_grid *g)
{
	char buf[MC_PLOT_MAX_WIDTH + 64], a[32];
	unsigned lines = 0;

	for (int r = MC_PLOT_ROWS - 1; r >= 0; r--) {
		const char *label = "";

		if (g->has_l && (unsigned)r == g->lr)
			label = mc_plot_fmt_bytes(in->limit_bytes, a, sizeof(a));
		else if (g->has_r && (unsigned)r == g->rr)
			label = mc_plot_fmt_bytes(in->rule_bytes, a, sizeof(a));
		else if (r == MC_PLOT_ROWS - 1)
			label = mc_plot_fmt_bytes(top, a, sizeof(a));
		else if (r == MC_PLOT_ROWS / 2 - 1)
			label = mc_plot_fmt_bytes(top / 2, a, sizeof(a));
		g->cell[r][g->cols] = '\0';
		snprintf(buf, sizeof(buf), "%*s |%s",
			 MC_PLOT_LABEL_COLS - 2, label, g->cell[r]);
		line(out, width, buf);
		lines++;
	}
	return lines;
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

/* The legend: the marks, the lines, the largest figures, the kill.
 * Returns the lines printed. */
static unsigned plot_legend(FILE *out, const struct mc_plot_in *in,
			    unsigned width, uint64_t pms, uint64_t total_ms)
{
	const struct mc_timeline *tl = in->tl;
	char buf[MC_PLOT_MAX_WIDTH + 64], a[32];
	uint64_t big_nr = 0, big_tot = 0;
	unsigned lines = 0;

	snprintf(buf, sizeof(buf), "  # non-reclaimable  : page cache");
	lines += say(out, width, buf);
	if (tl->has_cpu && in->cores) {
		snprintf(buf, sizeof(buf), "  cores busy: tenths of the %" PRIu32
			 " allocated, 0 to 9, '.' under a tenth", in->cores);
		lines += say(out, width, buf);
	}
	if (in->limit_bytes) {
		snprintf(buf, sizeof(buf), "  = asked %s%s%s%s",
			 mc_plot_fmt_bytes(in->limit_bytes, a, sizeof(a)),
			 in->limit_option ? " (" : "",
			 in->limit_option ? in->limit_option : "",
			 in->limit_option ? ")" : "");
		lines += say(out, width, buf);
	}
	if (in->rule_bytes) {
		snprintf(buf, sizeof(buf), "  - the rule's figure %s",
			 mc_plot_fmt_bytes(in->rule_bytes, a, sizeof(a)));
		lines += say(out, width, buf);
	}
	for (uint32_t i = 0; i < tl->n; i++) {
		if (tl->nr_bytes[i] > big_nr)
			big_nr = tl->nr_bytes[i];
		if (tl->nr_bytes[i] + tl->file_bytes[i] > big_tot)
			big_tot = tl->nr_bytes[i] + tl->file_bytes[i];
	}
	snprintf(buf, sizeof(buf), "  largest: %s non-reclaimable",
		 mc_plot_fmt_bytes(big_nr, a, sizeof(a)));
	if (in->limit_bytes)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf),
			 ", %.0f%% of asked", 100.0 * (double)big_nr /
			 (double)in->limit_bytes);
	snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), ", %s with "
		 "page cache", mc_plot_fmt_bytes(big_tot, a, sizeof(a)));
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
	uint64_t top = top_of(in), pms = mc_timeline_point_ms(tl);
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
	fill_grid(in, top, &g);
	lines += print_grid(out, in, top, width, &g);
	lines += time_axis(out, width, total_ms, &g);
	if (tl->has_cpu && in->cores)
		lines += cores_row(out, in, width, g.cols);
	lines += plot_legend(out, in, width, pms, total_ms);
	return (int)lines;
}

/* Text for XML: the record's names have no markup, but say so anyway. */
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
		else if ((unsigned char)*s >= 0x20 && (unsigned char)*s < 0x7f)
			fputc(*s, out);
	}
}

#define SVG_W 900
#define SVG_PANEL_H 330
#define SVG_L 90	/* plot area: left, top, width, height */
#define SVG_T 40
#define SVG_PW 780
#define SVG_PH 220

/* A value's height in the panel at y0, of a chart whose top is top. */
static double svg_y(unsigned y0, uint64_t top, uint64_t v)
{
	return y0 + SVG_T + SVG_PH - (double)v * SVG_PH / (double)top;
}

/* The panel's marks over the series: the rule's figure and the limit
 * asked as lines, labelled, and the OOM kill; each on a white halo.
 * xs: the width of a point. */
static void svg_marks(FILE *out, const struct mc_plot_in *in, unsigned y0,
		      uint64_t top, double xs)
{
	const struct mc_timeline *tl = in->tl;
	char a[32];

#define Y(v) svg_y(y0, top, (v))
	if (in->rule_bytes) {
		fprintf(out, "<path class=\"halo\" d=\"M %d %.1f L %d %.1f\"/>"
			"\n", SVG_L, Y(in->rule_bytes), SVG_L + SVG_PW,
			Y(in->rule_bytes));
		fprintf(out, "<path class=\"rule\" d=\"M %d %.1f L %d %.1f\"/>"
			"\n<text class=\"ll\" x=\"%d\" y=\"%.1f\">the rule's "
			"figure %s</text>\n", SVG_L, Y(in->rule_bytes),
			SVG_L + SVG_PW, Y(in->rule_bytes), SVG_L + SVG_PW - 4,
			Y(in->rule_bytes) + 14,
			mc_plot_fmt_bytes(in->rule_bytes, a, sizeof(a)));
	}
	if (in->limit_bytes) {
		fprintf(out, "<path class=\"halo\" d=\"M %d %.1f L %d %.1f\"/>"
			"\n", SVG_L, Y(in->limit_bytes), SVG_L + SVG_PW,
			Y(in->limit_bytes));
		fprintf(out, "<path class=\"limit\" d=\"M %d %.1f L %d %.1f\"/>"
			"\n<text class=\"ll\" x=\"%d\" y=\"%.1f\">asked %s",
			SVG_L, Y(in->limit_bytes), SVG_L + SVG_PW,
			Y(in->limit_bytes), SVG_L + SVG_PW - 4,
			Y(in->limit_bytes) - 5,
			mc_plot_fmt_bytes(in->limit_bytes, a, sizeof(a)));
		if (in->limit_option) {
			fputs(" (", out);
			xml_text(out, in->limit_option);
			fputs(")", out);
		}
		fputs("</text>\n", out);
	}
	if (tl->oom_point >= 0) {
		double x = SVG_L + (tl->oom_point + 0.5) * xs;

		fprintf(out, "<path class=\"halo\" d=\"M %.1f %d L %.1f %d\"/>\n"
			"<path class=\"oom\" d=\"M %.1f %d L %.1f %d\"/>\n"
			"<text class=\"oomt\" x=\"%.1f\" y=\"%d\">OOM kill"
			"</text>\n", x, y0 + SVG_T, x, y0 + SVG_T + SVG_PH,
			x, y0 + SVG_T, x, y0 + SVG_T + SVG_PH,
			x - 6, y0 + SVG_T + SVG_PH - 10);
	}
#undef Y
}

static void svg_panel(FILE *out, const struct mc_plot_in *in, unsigned y0)
{
	const struct mc_timeline *tl = in->tl;
	uint64_t top = top_of(in), pms = mc_timeline_point_ms(tl);
	uint64_t total_ms = pms * (tl->n ? tl->n : 1);
	char a[32], b[32];
	double xs = (double)SVG_PW / (tl->n ? tl->n : 1);

#define Y(v) svg_y(y0, top, (v))
	fprintf(out, "<g>\n<text x=\"%d\" y=\"%u\" font-size=\"15\" "
		"font-weight=\"bold\">step ", SVG_L, y0 + 22);
	xml_text(out, in->step);
	fputs(" on ", out);
	xml_text(out, in->host);
	fprintf(out, ": memory over %s, a point every %s</text>\n",
		mc_plot_fmt_time(total_ms, total_ms, a, sizeof(a)),
		mc_plot_fmt_time(pms, pms, b, sizeof(b)));
	/* the usage (nr + page cache) as a step outline, filled light, the
	 * non-reclaimable part over it, filled dark */
	for (int part = 0; part < 2 && tl->n; part++) {
		fprintf(out, "<path class=\"%s\" d=\"M %d %.1f",
			part ? "nr" : "cache", SVG_L, Y(0));
		for (uint32_t i = 0; i < tl->n; i++) {
			uint64_t v = tl->nr_bytes[i] +
				     (part ? 0 : tl->file_bytes[i]);

			fprintf(out, " L %.1f %.1f L %.1f %.1f", SVG_L + i * xs,
				Y(v), SVG_L + (i + 1) * xs, Y(v));
		}
		fprintf(out, " L %.1f %.1f Z\"/>\n", SVG_L + tl->n * xs, Y(0));
	}
	/* axes */
	fprintf(out, "<path class=\"axis\" d=\"M %d %d L %d %d L %d %d\"/>\n",
		SVG_L, y0 + SVG_T, SVG_L, y0 + SVG_T + SVG_PH, SVG_L + SVG_PW,
		y0 + SVG_T + SVG_PH);
	for (int k = 0; k <= 4; k++) {
		uint64_t v = top / 4 * (uint64_t)k;

		fprintf(out, "<text class=\"yl\" x=\"%d\" y=\"%.1f\">%s</text>\n",
			SVG_L - 6, Y(v) + 4,
			mc_plot_fmt_bytes(v, a, sizeof(a)));
	}
	/* round times, 100 px apart or more */
	for (uint64_t t = 0, tick = tick_ms(total_ms, SVG_PW / 10);
	     t <= total_ms; t += tick) {
		double x = SVG_L + (double)SVG_PW * (double)t /
			   (double)total_ms;

		fprintf(out, "<path class=\"axis\" d=\"M %.1f %d L %.1f %d\"/>"
			"\n<text class=\"xl\" x=\"%.1f\" y=\"%u\">%s</text>\n",
			x, y0 + SVG_T + SVG_PH, x, y0 + SVG_T + SVG_PH + 4, x,
			y0 + SVG_T + SVG_PH + 18,
			mc_plot_fmt_time(t, total_ms, a, sizeof(a)));
	}
	svg_marks(out, in, y0, top, xs);
	/* legend */
	fprintf(out, "<rect class=\"nr\" x=\"%d\" y=\"%d\" width=\"14\" "
		"height=\"10\"/><text x=\"%d\" y=\"%d\">non-reclaimable</text>"
		"\n<rect class=\"cache\" x=\"%d\" y=\"%d\" width=\"14\" "
		"height=\"10\"/><text x=\"%d\" y=\"%d\">page cache</text>\n",
		SVG_L, y0 + SVG_PANEL_H - 30, SVG_L + 20, y0 + SVG_PANEL_H - 21,
		SVG_L + 160, y0 + SVG_PANEL_H - 30, SVG_L + 180,
		y0 + SVG_PANEL_H - 21);
	fputs("</g>\n", out);
#undef Y
}

int mc_plot_svg(FILE *out, const struct mc_plot_in *in, size_t n)
{
	unsigned h = (unsigned)(n ? n : 1) * SVG_PANEL_H;

	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%u\" viewBox=\"0 0 %d %u\" "
		"font-family=\"sans-serif\" font-size=\"12\">\n"
		"<title>memcore: memory over time</title>\n"
		"<style>\n"
		".nr { fill: #6e6e6e; stroke: #222222; stroke-width: 0.5 }\n"
		".halo { stroke: #ffffff; stroke-width: 3.5 }\n"
		".cache { fill: #cfcfcf; stroke: #888888; stroke-width: 0.5 }\n"
		".axis { fill: none; stroke: #000000; stroke-width: 1 }\n"
		".limit { stroke: #000000; stroke-width: 2 }\n"
		".rule { stroke: #000000; stroke-width: 1.5; "
		"stroke-dasharray: 8 5 }\n"
		".oom { stroke: #000000; stroke-width: 2; "
		"stroke-dasharray: 2 3 }\n"
		".yl { text-anchor: end }\n"
		".xl { text-anchor: middle }\n"
		".ll { text-anchor: end; font-weight: bold; stroke: #ffffff; "
		"stroke-width: 3; paint-order: stroke }\n"
		".oomt { text-anchor: end; font-weight: bold; stroke: #ffffff; "
		"stroke-width: 3; paint-order: stroke }\n"
		"</style>\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n",
		SVG_W, h, SVG_W, h);
	for (size_t i = 0; i < n; i++)
		svg_panel(out, &in[i], (unsigned)i * SVG_PANEL_H);
	if (!n)
		fprintf(out, "<text x=\"%d\" y=\"40\">no step of this job "
			"kept a timeline</text>\n", SVG_L);
	fputs("</svg>\n", out);
	return ferror(out) ? -1 : 0;
}
