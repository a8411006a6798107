/*
 * fuzz_timeline.c - a step's record read back (mc_summary_record_parse)
 * and its timeline decoded (mc_timeline_decode) from any bytes, both the
 * whole input as a record and as the "s" value alone, then drawn
 * (mc_plot_text at 40, 80 and 400 columns, mc_plot_svg): never a crash;
 * a decoded timeline holds at most MC_TIMELINE_POINTS points, an OOM
 * point inside them; no text line wider than asked; what decodes encodes
 * again and reads back the same.
 */
#include <stdio.h>

#include "fuzz.h"
#include "mc_plot.h"
#include "mc_summary.h"
#include "mc_timeline.h"

static void draw(const struct mc_timeline *tl, uint64_t limit, uint64_t rule)
{
	static const unsigned widths[] = { 40, 80, 400 };
	struct mc_plot_in in = { "1.0", "n1", tl, limit, "--mem=1G", rule, 4 };
	char *text = NULL;
	size_t len = 0;

	for (size_t w = 0; w < 3; w++) {
		FILE *f = open_memstream(&text, &len);
		const char *p;

		if (!f)
			abort();
		mc_plot_text(f, &in, widths[w]);
		fclose(f);
		for (p = text; *p;) {
			const char *nl = strchr(p, '\n');
			size_t l = nl ? (size_t)(nl - p) : strlen(p);

			if (l > widths[w])
				abort();
			p += l + (nl != NULL);
		}
		free(text);
		text = NULL;
	}
	{
		FILE *f = open_memstream(&text, &len);

		if (!f || mc_plot_svg(f, &in, 1) < 0)
			abort();
		fclose(f);
		free(text);
	}
}

static void one(const char *s, size_t n, uint64_t limit, uint64_t rule)
{
	static struct mc_timeline tl, back;
	char buf[MC_TIMELINE_TEXT_MAX];
	int len;

	if (mc_timeline_decode(s, n, &tl) < 0) {
		if (tl.n)
			abort();
		return;
	}
	if (tl.n > MC_TIMELINE_POINTS ||
	    (tl.oom_point >= 0 && (uint32_t)tl.oom_point >= tl.n))
		abort();
	draw(&tl, limit, rule);
	len = mc_timeline_encode(&tl, buf, sizeof(buf));
	if (len < 0 || mc_timeline_decode(buf, (size_t)len, &back) < 0 ||
	    back.n != tl.n || back.oom_point != tl.oom_point)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = mc_fuzz_str(data, size), step[48], host[64];
	struct mc_used u;
	struct mc_advice a;

	one(s, strlen(s), 1ULL << 30, 3ULL << 28);
	if (mc_summary_record_parse(s, &u, &a, step, sizeof(step), host,
				    sizeof(host)) == 0)
		one(u.timeline, strlen(u.timeline), u.asked_bytes,
		    u.rule_bytes);
	free(s);
	return 0;
}
