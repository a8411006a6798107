/*
 * mc_gauges.c - a running step's gauges in the Prometheus text format
 * (mc_gauges.h).
 */
#include <string.h>

#include "mc_gauges.h"
#include "mc_metrics.h"

const char *const mc_gauge_names[MC_G_COUNT] = {
	[MC_G_NONRECLAIMABLE] = "memcore_step_memory_nonreclaimable_bytes",
	[MC_G_PAGE_CACHE] = "memcore_step_memory_page_cache_bytes",
	[MC_G_LIMIT] = "memcore_step_memory_limit_bytes",
	[MC_G_RULE] = "memcore_step_memory_rule_bytes",
};

/* One help text per name: node_exporter merges the files of all running
 * steps into one family per name, and their help texts must agree. */
static const char *const help[MC_G_COUNT] = {
	[MC_G_NONRECLAIMABLE] = "The running step's memory that cannot be "
				"reclaimed (usage less page cache), last "
				"sample.",
	[MC_G_PAGE_CACHE] =
		"The running step's page cache (file pages), last sample.",
	[MC_G_LIMIT] = "Memory the running step was allocated on the node.",
	[MC_G_RULE] = "The rule's figure for the running step's request.",
};

size_t mc_gauges_u64(uint64_t v, char *buf)
{
	char rev[20];
	size_t n = 0;

	do {
		rev[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		buf[i] = rev[n - 1 - i];
	buf[n] = '\0';
	return n;
}

/* Append s (n bytes) to buf at *used, keeping room for the NUL; false
 * when it does not fit. */
static int put(char *buf, size_t len, size_t *used, const char *s, size_t n)
{
	if (*used + n + 1 > len)
		return 0;
	memcpy(buf + *used, s, n);
	*used += n;
	buf[*used] = '\0';
	return 1;
}

static int puts0(char *buf, size_t len, size_t *used, const char *s)
{
	return put(buf, len, used, s, strlen(s));
}

/* A label value escaped as the text format wants (\\ \" \n). */
static int put_esc(char *buf, size_t len, size_t *used, const char *v)
{
	for (; *v; v++) {
		char e[2] = { '\\', *v == '\n' ? 'n' : *v };
		int ok = *v == '\\' || *v == '"' || *v == '\n'
			 ? put(buf, len, used, e, 2)
			 : put(buf, len, used, v, 1);

		if (!ok)
			return 0;
	}
	return 1;
}

int mc_gauges_labels(const struct mc_gauge_ids *ids, char *out, size_t len)
{
	const char *part = *ids->partition ? ids->partition : MC_METRICS_OTHER;
	const char *const name[] = { "jobid", "step", "user", "node",
				     "partition" };
	const char *const val[] = { ids->job, ids->step, ids->user, ids->node,
				    part };
	size_t used = 0;
	int ok = len > 0;

	if (len)
		out[0] = '\0';
	for (size_t i = 0; ok && i < sizeof(name) / sizeof(name[0]); i++) {
		ok = mc_metrics_label_ok(val[i]) &&
		     puts0(out, len, &used, i ? ",": "{") &&
		     puts0(out, len, &used, name[i]) &&
		     puts0(out, len, &used, "=\"") &&
		     put_esc(out, len, &used, val[i]) &&
		     puts0(out, len, &used, "\"");
	}
	ok = ok && puts0(out, len, &used, "}");
	if (!ok) {
		if (len)
			out[0] = '\0';
		return -1;
	}
	return (int)used;
}

int mc_gauges_format(const char *labels, const uint64_t v[MC_G_COUNT],
		     char *buf, size_t len)
{
	size_t used = 0;
	int ok = len > 0;

	if (len)
		buf[0] = '\0';
	for (int k = 0; ok && k < MC_G_COUNT; k++) {
		char num[21];
		size_t n = mc_gauges_u64(v[k], num);

		ok = puts0(buf, len, &used, "# HELP ") &&
		     puts0(buf, len, &used, mc_gauge_names[k]) &&
		     puts0(buf, len, &used, " ") &&
		     puts0(buf, len, &used, help[k]) &&
		     puts0(buf, len, &used, "\n# TYPE ") &&
		     puts0(buf, len, &used, mc_gauge_names[k]) &&
		     puts0(buf, len, &used, " gauge\n") &&
		     puts0(buf, len, &used, mc_gauge_names[k]) &&
		     puts0(buf, len, &used, labels) &&
		     puts0(buf, len, &used, " ") &&
		     put(buf, len, &used, num, n) &&
		     puts0(buf, len, &used, "\n");
	}
	if (!ok) {
		if (len)
			buf[0] = '\0';
		return -1;
	}
	return (int)used;
}
