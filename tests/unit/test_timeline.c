/*
 * test_timeline.c - a step's memory over time (report/mc_timeline.h): the
 * bounded series against a plain reference computed here (each point the
 * maximum of a run of per_point samples, per_point the smallest power of
 * two that fits the step in MC_TIMELINE_POINTS), the record's text and
 * its reading back, and texts that are not one; the chart drawn from it
 * (cli/report_plot.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mc_jobrec.h"
#include "mc_plot.h"
#include "mc_summary.h"
#include "mc_timeline.h"

#define MIB (1024ULL * 1024)
#define GIB (1024ULL * MIB)

/* A fixed pseudo-random series: the same on every run. */
static uint64_t rnd_state;
static uint64_t rnd(void)
{
	rnd_state = rnd_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return rnd_state >> 17;
}

struct ref {
	uint64_t n, per_point, points;
	uint64_t nr[MC_TIMELINE_POINTS], file[MC_TIMELINE_POINTS];
	uint64_t cpu[MC_TIMELINE_POINTS];
	int64_t oom;
};

/* Feed n samples every interval_ms into tl, and the reference: samples
 * kept whole, maxima taken afterwards. */
static void feed(struct mc_timeline *tl, struct ref *r, uint64_t n,
		 uint32_t interval_ms, uint64_t oom_at)
{
	uint64_t *nr = calloc(n, 8), *file = calloc(n, 8), *cpu = calloc(n, 8);
	uint64_t cpu_total = 0, t;

	assert_non_null(nr);
	assert_non_null(file);
	assert_non_null(cpu);
	mc_timeline_init(tl, interval_ms);
	memset(r, 0, sizeof(*r));
	r->oom = -1;
	for (uint64_t k = 0; k < n; k++) {
		/* cores busy between this sample and the last: 0 to 8 */
		uint64_t busy_milli = rnd() % 8001;

		t = 1000000ULL + k * interval_ms * 1000ULL;
		nr[k] = (rnd() % (64 * GIB)) & ~4095ULL;
		file[k] = rnd() % (8 * GIB);
		if (k) {
			cpu_total += busy_milli * interval_ms; /* usec */
			cpu[k] = busy_milli;
		}
		mc_timeline_add(tl, t, nr[k], file[k], true, cpu_total,
				k >= oom_at ? 1 : 0);
	}
	r->n = n;
	r->per_point = 1;
	while (r->per_point * MC_TIMELINE_POINTS < n)
		r->per_point *= 2;
	r->points = (n + r->per_point - 1) / r->per_point;
	for (uint64_t k = 0; k < n; k++) {
		uint64_t j = k / r->per_point;

		if (nr[k] > r->nr[j])
			r->nr[j] = nr[k];
		if (file[k] > r->file[j])
			r->file[j] = file[k];
		if (cpu[k] > r->cpu[j])
			r->cpu[j] = cpu[k];
	}
	if (oom_at && oom_at < n)
		r->oom = (int64_t)(oom_at / r->per_point);
	free(nr);
	free(file);
	free(cpu);
}

/* Whatever the step's length, the points are the maxima of equal runs of
 * samples, at most MC_TIMELINE_POINTS of them, and the OOM kill is in the
 * point that holds the sample that first saw it. */
static void test_series(void **state)
{
	static const uint64_t lens[] = { 1, 2, 119, 120, 121, 240, 241, 480,
					 1000, 36000 };
	struct mc_timeline tl;
	struct ref r;

	(void)state;
	rnd_state = 42;
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		uint64_t n = lens[i];

		feed(&tl, &r, n, 1000, n > 3 ? n * 3 / 4 : 0);
		assert_true(tl.n <= MC_TIMELINE_POINTS);
		assert_int_equal(tl.n, r.points);
		assert_int_equal(tl.per_point, r.per_point);
		assert_int_equal(mc_timeline_point_ms(&tl),
				 r.per_point * 1000);
		for (uint32_t j = 0; j < tl.n; j++) {
			assert_int_equal(tl.nr_bytes[j], r.nr[j]);
			assert_int_equal(tl.file_bytes[j], r.file[j]);
			/* integer division of the rate: within a milli */
			assert_true(tl.cpu_milli[j] <= r.cpu[j] &&
				    tl.cpu_milli[j] + 1 >= r.cpu[j]);
		}
		assert_int_equal(tl.oom_point, r.oom);
		assert_true(tl.has_cpu);
	}
	/* Past 120 samples, 60 to 120 points. */
	for (uint64_t n = 121; n < 2000; n += 37) {
		feed(&tl, &r, n, 1000, 0);
		assert_true(tl.n > 60 && tl.n <= 120);
	}
}

/* The OOM count before the first sample is the base; a step with kills
 * that no sample saw gets its kill at the last point, once. */
static void test_oom(void **state)
{
	struct mc_timeline tl;

	(void)state;
	mc_timeline_init(&tl, 500);
	mc_timeline_add(&tl, 0, 1 * MIB, 0, false, 0, 3);
	mc_timeline_add(&tl, 500000, 2 * MIB, 0, false, 0, 3);
	assert_int_equal(tl.oom_point, -1);
	mc_timeline_add(&tl, 1000000, 3 * MIB, 0, false, 0, 4);
	mc_timeline_add(&tl, 1500000, 1 * MIB, 0, false, 0, 5);
	assert_int_equal(tl.oom_point, 2);
	assert_false(tl.has_cpu);
	mc_timeline_oom_at_end(&tl);
	assert_int_equal(tl.oom_point, 2);

	mc_timeline_init(&tl, 500);
	mc_timeline_oom_at_end(&tl);
	assert_int_equal(tl.oom_point, -1);	/* no points */
	for (int k = 0; k < 5; k++)
		mc_timeline_add(&tl, (uint64_t)k * 500000, MIB, 0, false, 0,
				0);
	mc_timeline_oom_at_end(&tl);
	assert_int_equal(tl.oom_point, 4);
}

static bool text_clean(const char *s)
{
	return !strpbrk(s, ",;=:@ \n");
}

/* Written and read back: every value at or above what was fed (levels
 * round up) by less than a level of the step's largest, the largest at
 * the scale (its MiB, rounded up), the OOM point and the point's length
 * kept; none of the record's separators in the text. */
static void test_encode_decode(void **state)
{
	static const uint64_t lens[] = { 1, 7, 120, 121, 5000 };
	char buf[MC_TIMELINE_TEXT_MAX];
	struct mc_timeline tl, back;
	struct ref r;

	(void)state;
	rnd_state = 7;
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		uint64_t scale = 0, cscale = 0;
		int len;

		feed(&tl, &r, lens[i], 2000, lens[i] / 2);
		len = mc_timeline_encode(&tl, buf, sizeof(buf));
		assert_true(len > 0);
		assert_int_equal((size_t)len, strlen(buf));
		assert_true(text_clean(buf));
		assert_int_equal(mc_timeline_decode(buf, (size_t)len, &back),
				 0);
		assert_int_equal(back.n, tl.n);
		assert_int_equal(mc_timeline_point_ms(&back),
				 mc_timeline_point_ms(&tl));
		assert_int_equal(back.oom_point, tl.oom_point);
		for (uint32_t j = 0; j < tl.n; j++) {
			scale = tl.nr_bytes[j] > scale ? tl.nr_bytes[j] : scale;
			scale = tl.file_bytes[j] > scale ? tl.file_bytes[j]
							 : scale;
			cscale = tl.cpu_milli[j] > cscale ? tl.cpu_milli[j]
							  : cscale;
		}
		scale = (scale + MIB - 1) / MIB * MIB;
		assert_int_equal(back.has_cpu, cscale > 0);
		for (uint32_t j = 0; j < tl.n; j++) {
			assert_true(back.nr_bytes[j] >= tl.nr_bytes[j]);
			assert_true(back.nr_bytes[j] - tl.nr_bytes[j] <=
				    scale / MC_TIMELINE_LEVELS + 1);
			assert_true(back.file_bytes[j] >= tl.file_bytes[j]);
			assert_true(back.file_bytes[j] - tl.file_bytes[j] <=
				    scale / MC_TIMELINE_LEVELS + 1);
			assert_true(back.cpu_milli[j] >= tl.cpu_milli[j]);
			assert_true(back.cpu_milli[j] - tl.cpu_milli[j] <=
				    cscale / MC_TIMELINE_LEVELS + 1);
			if (tl.nr_bytes[j])
				assert_true(back.nr_bytes[j] > 0);
		}
		/* 3 characters a point after a short head */
		assert_true((size_t)len <= 64 + 3 * tl.n);
	}
	/* The full 120 points fit the ~380 bytes the record allows. */
	assert_true(strlen(buf) <= 64 + 3 * MC_TIMELINE_POINTS);
	/* Too small a buffer: -1 and "". */
	assert_int_equal(mc_timeline_encode(&tl, buf, 20), -1);
	assert_string_equal(buf, "");
}

/* A small series by hand: 3 points of 1 s, 4 GiB the largest. */
static void test_decode_by_hand(void **state)
{
	struct mc_timeline tl;
	char buf[MC_TIMELINE_TEXT_MAX];
	int len;

	(void)state;
	mc_timeline_init(&tl, 1000);
	mc_timeline_add(&tl, 0, 1 * GIB, 0, false, 0, 0);
	mc_timeline_add(&tl, 1000000, 2 * GIB, 1 * GIB, false, 0, 0);
	mc_timeline_add(&tl, 2000000, 4 * GIB, 0, false, 0, 1);
	len = mc_timeline_encode(&tl, buf, sizeof(buf));
	/* 4096 MiB the scale; 1 GiB is level 16 (15.75 up), 2 GiB 32
	 * (31.5 up), 4 GiB 63; no CPU: level 0 ("A"). */
	assert_string_equal(buf, "1000~4096~0~2~QAAgQA_AA");
	assert_int_equal(len, (int)strlen(buf));
}

/* Not a timeline: refused with the series left empty, never read past
 * the text's length. */
static void test_decode_bad(void **state)
{
	static const char *bad[] = {
		"", "~", "1000", "1000~4096~0~x", "1000~4096~0~x~A",
		"1000~4096~0~x~AAAA", "0~4096~0~x~AAA", "1000~4096~0~3~AAA",
		"1000~4096~0~y~AAA", "1000~4096~0~x~A,A", "1000~-1~0~x~AAA",
		"99999999999~1~0~x~AAA", "1000~99999999999999999~0~x~AAA",
		"1000~4096~99999999999~x~AAA",
		"1000~99999999999999999999999~0~x~AAA", "x~1~0~x~AAA",
		"1000~4096~0~x~AA=",
	};
	struct mc_timeline tl;
	char big[MC_TIMELINE_TEXT_MAX + 16];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(mc_timeline_decode(bad[i], strlen(bad[i]),
						    &tl), -1);
		assert_int_equal(tl.n, 0);
		assert_int_equal(tl.oom_point, -1);
	}
	/* 121 points: more than any timeline holds. */
	snprintf(big, sizeof(big), "1000~1~0~x~");
	for (int i = 0; i < 121; i++)
		strcat(big, "AAA");
	assert_int_equal(mc_timeline_decode(big, strlen(big), &tl), -1);
	/* Only the given length is read: a valid text followed by junk. */
	assert_int_equal(mc_timeline_decode("1000~1~0~0~_AA,zz", 14, &tl), 0);
	assert_int_equal(tl.n, 1);
	assert_int_equal(tl.nr_bytes[0], MIB);
	assert_int_equal(tl.oom_point, 0);
}

/* The chart's lines, rendered at width. */
struct chart {
	char *text;
	char *line[64];
	int n;
};

static void render(struct chart *c, const struct mc_plot_in *in,
		   unsigned width)
{
	size_t len;
	FILE *f = open_memstream(&c->text, &len);
	char *save = NULL, *l;

	assert_non_null(f);
	c->n = mc_plot_text(f, in, width);
	fclose(f);
	assert_true(c->n > MC_PLOT_ROWS && c->n < 64);
	c->n = 0;
	for (l = strtok_r(c->text, "\n", &save); l && c->n < 64;
	     l = strtok_r(NULL, "\n", &save))
		c->line[c->n++] = l;
}

/* The plot rows (top first): the lines whose column 9 is '|'. */
static int plot_rows(const struct chart *c, char **rows)
{
	int k = 0;

	for (int i = 0; i < c->n; i++)
		if (strlen(c->line[i]) > 9 && c->line[i][9] == '|')
			rows[k++] = c->line[i];
	return k;
}

/* One of c's lines holds s. */
static bool chart_has(const struct chart *c, const char *s)
{
	for (int i = 0; i < c->n; i++)
		if (strstr(c->line[i], s))
			return true;
	return false;
}

static int count_in_column(char **rows, int nrows, size_t col, char ch)
{
	int k = 0;

	for (int r = 0; r < nrows; r++)
		if (strlen(rows[r]) > col && rows[r][col] == ch)
			k++;
	return k;
}

/* A step that climbs by 64 MiB a second to its 2 GiB limit and is killed
 * there, drawn at 80 and at 40 columns: no line wider than asked, the
 * axis up to 2.5 GiB (the round value above its 2 GiB and 8 MiB), the
 * limit's row all '=' until the climb reaches it, the bars growing to it,
 * the OOM marker on the time axis where the kill was (as a share of the
 * step's length), named in the legend. */
static void test_plot_oom(void **state)
{
	static const unsigned widths[] = { 80, 40 };
	const uint64_t limit = 2 * GIB, rule = 1536 * MIB;
	struct mc_timeline tl, back;
	char buf[MC_TIMELINE_TEXT_MAX];
	struct mc_plot_in in = { .step = "42.0", .host = "node7",
				 .limit_bytes = limit,
				 .limit_option = "--mem=2G",
				 .rule_bytes = rule };
	uint64_t k, n = 0;

	(void)state;
	mc_timeline_init(&tl, 1000);
	for (k = 0; (k + 1) * 64 * MIB <= limit; k++, n++)
		mc_timeline_add(&tl, k * 1000000, (k + 1) * 64 * MIB, 8 * MIB,
				false, 0, 0);
	mc_timeline_add(&tl, k * 1000000, 0, 0, false, 0, 1);	/* killed */
	n++;
	assert_true(mc_timeline_encode(&tl, buf, sizeof(buf)) > 0);
	assert_int_equal(mc_timeline_decode(buf, strlen(buf), &back), 0);
	in.tl = &back;
	for (size_t w = 0; w < 2; w++) {
		struct chart c;
		char *rows[MC_PLOT_ROWS + 1], *axis = NULL;
		unsigned cols = widths[w] - MC_PLOT_LABEL_COLS;
		/* 12 rows of 2.5 GiB: the limit's 2 GiB ends row 9.6, the
		 * 10th from the bottom (the 3rd from the top); the rule's
		 * 1.5 GiB row 7.2, the 7th (the 6th from the top) */
		int nrows, lim_row = 2, rule_row = 5;
		double want;
		char *x;
		int prev = 0;

		render(&c, &in, widths[w]);
		for (int i = 0; i < c.n; i++)
			assert_true(strlen(c.line[i]) <= widths[w]);
		nrows = plot_rows(&c, rows);
		assert_int_equal(nrows, MC_PLOT_ROWS);
		assert_non_null(strstr(rows[0], " 2.5 GiB |"));
		assert_non_null(strstr(rows[lim_row], " 2.0 GiB |"));
		assert_non_null(strstr(rows[rule_row], " 1.5 GiB |"));
		/* the first half of the step: far below the limit */
		assert_int_equal(rows[lim_row][10], '=');
		assert_int_equal(rows[rule_row][10], '-');
		/* bars grow (non-reclaimable) until the kill */
		for (size_t col = 10; col < 10 + cols * 9 / 10; col++) {
			int h = count_in_column(rows, nrows, col, '#');

			assert_true(h >= prev);
			prev = h;
		}
		/* ... to the row under the limit's by 90% of the step */
		assert_true(prev >= MC_PLOT_ROWS - lim_row - 1);
		/* the OOM marker on the axis, where the kill was in time */
		for (int i = 0; i < c.n; i++)
			if (!strncmp(c.line[i], "       0 +", 10))
				axis = c.line[i];
		assert_non_null(axis);
		x = strchr(axis, 'X');
		assert_non_null(x);
		assert_null(strchr(x + 1, 'X'));
		want = 10 + (double)(n - 1) / n * cols;
		assert_true((double)(x - axis) >= want - 2 &&
			    (double)(x - axis) <= want + 2);
		/* ... and at the top of its column */
		assert_int_equal(count_in_column(rows, nrows,
						 (size_t)(x - axis), 'X'), 1);
		{
			bool named = false;

			for (int i = 0; i < c.n; i++)
				named |= !strncmp(c.line[i], "  X OOM kill", 12);
			assert_true(named);
		}
		free(c.text);
	}
}

/* A step that holds a fifth of its 10 GiB for a minute: scaled to what
 * it used (2 GiB, up to 2.5 GiB), its bars up to the 10th row of 12;
 * the limit above the chart, named in the line over it with '^', no '='
 * row; no OOM marker. */
static void test_plot_fifth(void **state)
{
	struct mc_timeline tl;
	struct mc_plot_in in = { .step = "43.0", .host = "node7",
				 .limit_bytes = 10 * GIB,
				 .limit_option = "--mem=10G", .tl = &tl };
	struct chart c;
	char *rows[MC_PLOT_ROWS + 1];
	int nrows;

	(void)state;
	mc_timeline_init(&tl, 1000);
	for (uint64_t k = 0; k < 60; k++)
		mc_timeline_add(&tl, k * 1000000, 2 * GIB - 100 * MIB,
				100 * MIB, false, 0, 0);
	render(&c, &in, 80);
	nrows = plot_rows(&c, rows);
	assert_int_equal(nrows, MC_PLOT_ROWS);
	for (int r = 0; r < nrows; r++) {
		bool bar = strpbrk(rows[r] + 10, "#:") != NULL;

		/* row r from the top: 2 of 2.5 GiB is 9.6 rows */
		assert_int_equal(bar, r >= MC_PLOT_ROWS - 10);
		assert_null(strchr(rows[r], '='));
	}
	assert_non_null(strstr(rows[0], " 2.5 GiB |"));
	assert_string_equal(c.line[1], "         ^ above the chart: asked "
			    "10 GiB (--mem=10G)");
	assert_false(chart_has(&c, "X"));
	/* the time axis says its unit */
	{
		bool unit = false;

		for (int i = 0; i < c.n; i++)
			unit |= strstr(c.line[i], " 30 s ") != NULL;
		assert_true(unit);
	}
	free(c.text);
}

/* With CPU figures (v2) and the cores allocated: a row of digits, tenths
 * of the allocation busy, under the time axis; none without either. */
static void test_plot_cores(void **state)
{
	struct mc_timeline tl;
	struct mc_plot_in in = { .step = "44.0", .host = "node7",
				 .limit_bytes = GIB, .tl = &tl, .cores = 2 };
	struct chart c;
	char *row = NULL;

	(void)state;
	mc_timeline_init(&tl, 1000);
	/* 30 s at 0.5 cores, then 30 s at 1.5 (of 2: 2 and 7 tenths) */
	for (uint64_t k = 0; k <= 60; k++)
		mc_timeline_add(&tl, k * 1000000, 100 * MIB, 0, true,
				k <= 30 ? k * 500000 : 15000000 +
				(k - 30) * 1500000, 0);
	for (size_t w = 0; w < 2; w++) {
		unsigned width = w ? 40 : 80, cols = width - 10;

		render(&c, &in, width);
		row = NULL;
		for (int i = 0; i < c.n; i++) {
			assert_true(strlen(c.line[i]) <= width);
			if (!strncmp(c.line[i], "   cores ", 9))
				row = c.line[i];
		}
		assert_non_null(row);
		assert_int_equal(strlen(row), width);
		/* the first sample has no rate yet: at 80 columns the first
		 * column is its alone */
		if (width == 80)
			assert_int_equal(row[10], '.');
		assert_int_equal(row[10 + cols / 4], '2');
		assert_int_equal(row[10 + cols * 3 / 4], '7');
		free(c.text);
	}
	in.cores = 0;
	render(&c, &in, 80);
	for (int i = 0; i < c.n; i++)
		assert_true(strncmp(c.line[i], "   cores ", 9));
	free(c.text);
}

/* tl: n points of nr climbing evenly to peak, killed at the last point
 * when oom. */
static void climb(struct mc_timeline *tl, uint32_t n, uint64_t peak,
		  bool oom)
{
	mc_timeline_init(tl, 1000);
	for (uint32_t k = 0; k < n; k++)
		mc_timeline_add(tl, (uint64_t)k * 1000000, peak * (k + 1) / n,
				0, false, 0, 0);
	if (oom)
		mc_timeline_add(tl, (uint64_t)n * 1000000, 0, 0, false, 0, 1);
}

/* The memory axis: a round top just above the usage, in the unit shown,
 * at most 5 intervals; a mark within a quarter above the usage and an
 * OOM-killed step's limit drawn inside it. */
static void test_plot_axis(void **state)
{
	static const struct {
		uint64_t peak, limit, rule;
		bool oom;
		const char *top, *first;	/* the top's tick, the 1st */
		unsigned ticks;
	} cases[] = {
		{ 1434 * MIB, 30 * GIB, 24 * GIB, false, "1.5 GiB", "0.5 GiB",
		  3 },
		{ 203 * MIB, 3 * GIB, 0, false, "250 MiB", "50 MiB", 5 },
		{ 250 * MIB, 256 * MIB, 0, true, "300 MiB", "100 MiB", 3 },
		{ 3 * GIB, 3 * GIB, 0, true, "4 GiB", "1 GiB", 4 },
		{ 900 * MIB, GIB, 0, false, "1.25 GiB", "0.25 GiB", 5 },
		{ 700 * MIB, 0, 0, false, "800 MiB", "200 MiB", 4 },
		{ 5 * GIB, 6 * GIB, 0, false, "8 GiB", "2 GiB", 4 },
		{ 5 * GIB, 8 * GIB, 0, false, "6 GiB", "2 GiB", 3 },
		{ 3 * MIB, 0, 0, false, "4 MiB", "1 MiB", 4 },
		{ 1536 * GIB, 0, 0, false, "2.0 TiB", "0.5 TiB", 4 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct mc_timeline tl;
		struct mc_plot_in in = { .step = "1.0", .host = "n", .tl = &tl,
					 .limit_bytes = cases[i].limit,
					 .rule_bytes = cases[i].rule };
		struct mc_plot_axis ax;
		char a[32];

		climb(&tl, 10, cases[i].peak, cases[i].oom);
		mc_plot_axis_of(&in, &ax);
		assert_string_equal(mc_plot_fmt_tick(&ax, ax.ticks, a,
						     sizeof(a)), cases[i].top);
		assert_string_equal(mc_plot_fmt_tick(&ax, 1, a, sizeof(a)),
				    cases[i].first);
		assert_string_equal(mc_plot_fmt_tick(&ax, 0, a, sizeof(a)),
				    "0");
		assert_int_equal(ax.ticks, cases[i].ticks);
		assert_true(ax.top_bytes > mc_plot_peak(&tl));
	}
}

/* A 1.4 GiB climb under --mem=30G at 80 columns: it fills the chart (the
 * top row's bar), the limit and the rule named over it, no '=' or '-'
 * row, no line past 80; the same climb at 40 columns wraps the names. */
static void test_plot_climb_text(void **state)
{
	struct mc_timeline tl;
	struct mc_plot_in in = { .step = "5.0", .host = "node1", .tl = &tl,
				 .limit_bytes = 30 * GIB,
				 .limit_option = "--mem=30G",
				 .rule_bytes = 24 * GIB };
	struct chart c;
	char *rows[MC_PLOT_ROWS + 1];

	(void)state;
	climb(&tl, 90, 1434 * MIB, false);
	for (unsigned width = 80; width >= 40; width -= 40) {
		render(&c, &in, width);
		for (int i = 0; i < c.n; i++)
			assert_true(strlen(c.line[i]) <= width);
		assert_int_equal(plot_rows(&c, rows), MC_PLOT_ROWS);
		assert_non_null(strstr(rows[0], " 1.5 GiB |"));
		assert_non_null(strstr(rows[4], " 1.0 GiB |"));
		assert_non_null(strstr(rows[8], " 0.5 GiB |"));
		assert_non_null(strchr(rows[1], '#'));
		for (int r = 0; r < MC_PLOT_ROWS; r++)
			assert_null(strpbrk(rows[r] + 10, "=-"));
		assert_true(chart_has(&c, "         ^ above the chart"));
		assert_true(chart_has(&c, "asked 30 GiB (--mem=30G)"));
		assert_true(chart_has(&c, "the rule's figure 24 GiB"));
		free(c.text);
	}
}

/* No two of l[0..n)'s boxes overlap, and each is inside the picture. */
static void assert_apart(const struct mc_plot_label *l, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (l[i].bx < 0 || l[i].bx + l[i].bw > 900)
			print_error("'%s' out\n", l[i].text);
		assert_true(l[i].bx >= 0 && l[i].bx + l[i].bw <= 900);
		assert_true(l[i].by >= 0);
		for (size_t j = 0; j < i; j++) {
			bool apart = l[i].bx >= l[j].bx + l[j].bw ||
				     l[j].bx >= l[i].bx + l[i].bw ||
				     l[i].by >= l[j].by + l[j].bh ||
				     l[j].by >= l[i].by + l[i].bh;

			if (!apart)
				print_error("'%s' over '%s'\n", l[i].text,
					    l[j].text);
			assert_true(apart);
		}
	}
}

/* The label named text among l[0..n), NULL if none. */
static const struct mc_plot_label *label_named(const struct mc_plot_label *l,
					       size_t n, const char *text)
{
	for (size_t i = 0; i < n; i++)
		if (!strncmp(l[i].text, text, strlen(text)))
			return &l[i];
	return NULL;
}

/* The SVG's labels never overprint: a climb far under its limit (named
 * over the chart), an OOM kill at the limit with the rule near it (the
 * issue's "OOM kill" over "asked 1 GiB"), the limit and the rule at one
 * figure, a kill at the start, a long title. */
static void test_plot_svg_labels(void **state)
{
	static const struct {
		uint64_t peak, limit, rule;
		bool oom;
		uint32_t n;
		const char *step;
	} cases[] = {
		{ 1434 * MIB, 30 * GIB, 24 * GIB, false, 90, "5.0" },
		{ GIB, GIB, 960 * MIB, true, 30, "6.0" },
		{ GIB, GIB, GIB, true, 30, "7.0" },
		{ 990 * MIB, GIB, GIB, false, 30, "7.1" },
		{ 900 * MIB, GIB, 0, true, 1, "8.0" },
		{ 200 * MIB, 3 * GIB, 2900 * MIB, false, 120,
		  "4294967294.4294967290+het_component_12345" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct mc_timeline tl;
		struct mc_plot_in in = { .step = cases[i].step, .host = "node1",
					 .tl = &tl, .limit_option = "--mem=1G",
					 .limit_bytes = cases[i].limit,
					 .rule_bytes = cases[i].rule };
		struct mc_plot_label l[MC_PLOT_LABELS_MAX];
		size_t n;

		climb(&tl, cases[i].n, cases[i].peak, cases[i].oom);
		n = mc_plot_svg_labels(&in, l);
		assert_true(n > 8);
		assert_apart(l, n);
		assert_non_null(label_named(l, n, "asked "));
		if (cases[i].oom)
			assert_non_null(label_named(l, n, "OOM kill"));
	}
	/* the first case: both marks over the plot area, with their arrow */
	{
		struct mc_timeline tl;
		struct mc_plot_in in = { .step = "5.0", .host = "node1",
					 .tl = &tl, .limit_bytes = 30 * GIB,
					 .limit_option = "--mem=30G",
					 .rule_bytes = 24 * GIB };
		struct mc_plot_label l[MC_PLOT_LABELS_MAX];
		const struct mc_plot_label *p;
		size_t n;

		climb(&tl, 90, 1434 * MIB, false);
		n = mc_plot_svg_labels(&in, l);
		p = label_named(l, n, "asked 30 GiB (--mem=30G) \xe2\x86\x91");
		assert_non_null(p);
		assert_true(p->by + p->bh <= MC_PLOT_SVG_TOP);
		p = label_named(l, n, "the rule's figure 24 GiB \xe2\x86\x91");
		assert_non_null(p);
		assert_true(p->by + p->bh <= MC_PLOT_SVG_TOP);
	}
}

/* Steps with nothing to show (no points, a few MiB, none) get no panel
 * and one line; an OOM-killed one is always drawn. */
static void test_plot_folded(void **state)
{
	static struct mc_timeline tl[4];
	struct mc_plot_in in[4] = {
		{ "5.batch", "n1", &tl[0], GIB, NULL, 0, 0 },
		{ "5.0", "n1", &tl[1], GIB, NULL, 0, 0 },
		{ "5.1", "n1", &tl[2], GIB, NULL, 0, 0 },
		{ "5.2", "n1", &tl[3], GIB, NULL, 0, 0 },
	};
	char *text = NULL;
	size_t len;
	FILE *f;

	(void)state;
	climb(&tl[0], 20, 12 * MIB, false);	/* a shell and srun */
	climb(&tl[1], 20, 500 * MIB, false);
	mc_timeline_init(&tl[2], 1000);		/* no samples */
	climb(&tl[3], 3, 5 * MIB, true);
	assert_true(mc_plot_nothing(&in[0]));
	assert_false(mc_plot_nothing(&in[1]));
	assert_true(mc_plot_nothing(&in[2]));
	assert_false(mc_plot_nothing(&in[3]));
	f = open_memstream(&text, &len);
	assert_int_equal(mc_plot_text_folded(f, in, 4, 80), 1);
	fclose(f);
	assert_string_equal(text, "  steps 5.batch, 5.1: no memory to show "
			    "(32 MiB or less)\n");
	free(text);
	f = open_memstream(&text, &len);
	assert_int_equal(mc_plot_svg(f, in, 4), 0);
	fclose(f);
	/* two panels, 340 px each, and the line under them */
	assert_non_null(strstr(text, "height=\"716\""));
	assert_non_null(strstr(text, ">steps 5.batch, 5.1: no memory to "
			       "show (32 MiB or less)</text>"));
	{
		int panels = 0;

		for (char *p = text; (p = strstr(p, "<g class=\"panel\"")); p++)
			panels++;
		assert_int_equal(panels, 2);
	}
	free(text);
	f = open_memstream(&text, &len);
	assert_int_equal(mc_plot_text_folded(f, &in[1], 1, 80), 0);
	fclose(f);
	assert_string_equal(text, "");
	free(text);
}

/* Step 9.s's record of u on n1, into rec. */
static void step_record(const struct mc_used *u, const struct mc_advice *a,
			int s, char *rec, size_t len)
{
	char name[16];

	snprintf(name, sizeof(name), "9.%d", s);
	assert_int_equal(mc_summary_record(u, a, name, "n1", rec, len), 0);
	assert_true(strlen(rec) <= MC_SUMMARY_RECORD_MAX);
}

/* rec merged into the job's records cur (next: room for the merge). */
static void merge_record(char *cur, char *next, size_t len, const char *rec)
{
	assert_int_equal(mc_jobrec_merge(cur, rec, next, len, MC_JOBREC_MAX),
			 0);
	strcpy(cur, next);
	assert_true(strlen(cur) <= MC_JOBREC_MAX);
}

/* The records' bound: timelines go before records, the oldest first; the
 * value left says so ("cut"); a record's figures read back the same. */
static void test_jobrec_cut(void **state)
{
	static char cur[4 * MC_JOBREC_MAX], next[4 * MC_JOBREC_MAX];
	char rec[MC_SUMMARY_RECORD_MAX + 1], step[48], host[64];
	const char *recs[64];
	size_t lens[64], n;
	struct mc_jobrec_agg agg;
	struct mc_timeline tl;
	struct mc_used u, v;
	struct mc_advice a;
	int cuts = 0, last_cut = -1;

	(void)state;
	memset(&u, 0, sizeof(u));
	u.asked_bytes = 8 * GIB;
	u.sample_interval_ms = 1000;
	mc_timeline_init(&tl, 1000);
	rnd_state = 3;
	for (int k = 0; k < 960; k++)	/* 120 points of 8 samples */
		mc_timeline_add(&tl, (uint64_t)k * 1000000, rnd() % (8 * GIB),
				rnd() % GIB, false, 0, 0);
	assert_true(mc_timeline_encode(&tl, u.timeline,
				       sizeof(u.timeline)) > 300);
	cur[0] = '\0';
	for (int s = 0; s < 20; s++) {
		u.peak.nr_bytes = (uint64_t)(s + 1) * GIB;
		step_record(&u, &a, s, rec, sizeof(rec));
		merge_record(cur, next, sizeof(next), rec);
		/* the writer finds its record there, timeline cut or not
		 * (slurmstepd's check that its write was not undone) */
		assert_true(mc_jobrec_has(cur, rec));
	}
	/* ... every record written, the oldest with its timeline cut */
	for (int s = 0; s < 20; s++) {
		u.peak.nr_bytes = (uint64_t)(s + 1) * GIB;
		step_record(&u, &a, s, rec, sizeof(rec));
		assert_true(mc_jobrec_has(cur, rec));
		/* another figure is another record */
		u.peak.nr_bytes++;
		step_record(&u, &a, s, rec, sizeof(rec));
		assert_false(mc_jobrec_has(cur, rec));
	}
	/* 60 more: records go too, into the aggregate; the new one is still
	 * found each time */
	for (int s = 20; s < 80; s++) {
		step_record(&u, &a, s, rec, sizeof(rec));
		merge_record(cur, next, sizeof(next), rec);
		assert_true(mc_jobrec_has(cur, rec));
	}
	n = mc_jobrec_split(cur, recs, lens, 64, &agg);
	assert_true(agg.steps > 0);
	assert_int_equal(agg.steps + n, 80);
	/* back to the 20 first, read below */
	cur[0] = '\0';
	for (int s = 0; s < 20; s++) {
		u.peak.nr_bytes = (uint64_t)(s + 1) * GIB;
		step_record(&u, &a, s, rec, sizeof(rec));
		merge_record(cur, next, sizeof(next), rec);
	}
	n = mc_jobrec_split(cur, recs, lens, 64, &agg);
	/* 20 records of ~550 bytes do not fit 8192 with their timelines
	 * but do without: all kept, the oldest cut, the newest whole */
	assert_int_equal(n, 20);
	assert_int_equal(agg.steps, 0);
	for (size_t i = 0; i < n; i++) {
		char r[MC_SUMMARY_RECORD_MAX + 1];

		assert_true(lens[i] < sizeof(r));
		memcpy(r, recs[i], lens[i]);
		r[lens[i]] = '\0';
		assert_int_equal(mc_summary_record_parse(r, &v, &a, step,
							 sizeof(step), host,
							 sizeof(host)), 0);
		assert_int_equal(v.peak.nr_bytes, (i + 1) * GIB);
		assert_int_equal(v.asked_bytes, 8 * GIB);
		if (!strcmp(v.timeline, MC_JOBREC_CUT)) {
			cuts++;
			last_cut = (int)i;
		} else {
			assert_string_equal(v.timeline, u.timeline);
		}
	}
	assert_true(cuts > 0 && cuts < 20);
	assert_int_equal(last_cut, cuts - 1);	/* the oldest ones */
}

/* Records without "s" (before timelines) still read; an "s" that is not
 * a timeline reads, and decoding it fails without harm. */
static void test_record_timeline(void **state)
{
	struct mc_used u, v;
	struct mc_advice a;
	struct mc_timeline tl;
	char step[48], host[64], rec[MC_SUMMARY_RECORD_MAX + 1];

	(void)state;
	assert_int_equal(mc_summary_record_parse("1.0@n:a=1024,p=512,t=1", &v,
						 &a, step, sizeof(step), host,
						 sizeof(host)), 0);
	assert_string_equal(v.timeline, "");
	assert_int_equal(v.peak.nr_bytes, 512);
	assert_int_equal(mc_summary_record_parse("1.0@n:a=1024,s=zz~,p=512",
						 &v, &a, step, sizeof(step),
						 host, sizeof(host)), 0);
	assert_string_equal(v.timeline, "zz~");
	assert_int_equal(v.peak.nr_bytes, 512);
	assert_int_equal(mc_timeline_decode(v.timeline, strlen(v.timeline),
					    &tl), -1);
	memset(&u, 0, sizeof(u));
	snprintf(u.timeline, sizeof(u.timeline), "1000~1~0~x~_AA");
	u.asked_bytes = 77;
	assert_int_equal(mc_summary_record(&u, &a, "2.0", "n", rec,
					   sizeof(rec)), 0);
	assert_non_null(strstr(rec, ",s=1000~1~0~x~_AA"));
	assert_int_equal(mc_summary_record_parse(rec, &v, &a, step,
						 sizeof(step), host,
						 sizeof(host)), 0);
	assert_string_equal(v.timeline, u.timeline);
	assert_int_equal(v.asked_bytes, 77);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_series),
		cmocka_unit_test(test_oom),
		cmocka_unit_test(test_encode_decode),
		cmocka_unit_test(test_decode_by_hand),
		cmocka_unit_test(test_decode_bad),
		cmocka_unit_test(test_plot_oom),
		cmocka_unit_test(test_plot_fifth),
		cmocka_unit_test(test_plot_cores),
		cmocka_unit_test(test_plot_axis),
		cmocka_unit_test(test_plot_climb_text),
		cmocka_unit_test(test_plot_svg_labels),
		cmocka_unit_test(test_plot_folded),
		cmocka_unit_test(test_jobrec_cut),
		cmocka_unit_test(test_record_timeline),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
