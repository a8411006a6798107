/*
 * fuzz_metrics.c - the textfile read back (mc_metrics_parse) on any bytes,
 * then one step added under a partition taken from the input: never a
 * crash; only this node's series, every label valid (mc_metrics_label_ok),
 * values finite and not negative, at most MC_METRICS_SERIES_MAX series and
 * one catch-all; what is printed is plain text that parses back to the
 * same series, none dropped.
 */
#include <math.h>

#include "fuzz.h"
#include "mc_metrics.h"

#define NODE "n1"

static void check(const struct mc_metrics *m)
{
	size_t other = 0;

	if (m->n > MC_METRICS_SERIES_MAX)
		abort();
	for (size_t i = 0; i < m->n; i++) {
		if (strcmp(m->s[i].node, NODE) ||
		    !mc_metrics_label_ok(m->s[i].partition))
			abort();	/* another node's, or no label */
		other += !strcmp(m->s[i].partition, MC_METRICS_OTHER);
		for (int k = 0; k < MC_M_COUNT; k++)
			if (!isfinite(m->s[i].v[k]) || m->s[i].v[k] < 0)
				abort();
	}
	if (other > 1)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct mc_metrics m, back;
	static char text[1 << 20];
	char *s = mc_fuzz_str(data, size), part[MC_METRICS_LABEL_MAX + 8];
	const char *nl = strchr(s, '\n');
	struct mc_metrics_step st = { NODE, part, { 1 } };
	size_t plen = nl ? (size_t)(nl - s) : strlen(s);

	/* The first line is the step's partition, the rest the file. */
	if (plen >= sizeof(part))
		plen = sizeof(part) - 1;
	memcpy(part, s, plen);
	part[plen] = '\0';
	mc_metrics_parse(nl ? nl + 1 : "", NODE, &m);
	check(&m);
	if (mc_metrics_add(&m, &st) < 0)
		abort();	/* a valid node: always counted */
	check(&m);
	if (mc_metrics_format(&m, text, sizeof(text)) < 0)
		abort();
	for (const unsigned char *c = (const unsigned char *)text; *c; c++)
		if (*c < 0x20 && *c != '\n')
			abort();	/* no control byte reaches the file */
	if (mc_metrics_parse(text, NODE, &back) != 0 || back.n != m.n)
		abort();	/* it reads back whole */
	for (size_t i = 0; i < m.n; i++)
		if (strcmp(back.s[i].partition, m.s[i].partition) ||
		    memcmp(back.s[i].v, m.s[i].v, sizeof(m.s[i].v)))
			abort();
	free(s);
	return 0;
}
