/*
 * mc_metrics.c - memcore's counters in the Prometheus text format
 * (mc_metrics.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mc_metrics.h"
#include "mc_util.h"

const char *const mc_metric_names[MC_M_COUNT] = {
	[MC_M_STEPS_JUDGED] = "memcore_steps_judged_total",
	[MC_M_STEPS_REFUSED] = "memcore_steps_refused_total",
	[MC_M_STEPS_OOM_KILLED] = "memcore_steps_oom_killed_total",
	[MC_M_MEMORY_ASKED_BYTES] = "memcore_memory_asked_bytes_total",
	[MC_M_MEMORY_PEAK_NR_BYTES] =
		"memcore_memory_peak_nonreclaimable_bytes_total",
	[MC_M_MEMORY_NEEDED_BYTES] = "memcore_memory_needed_bytes_total",
	[MC_M_CORES_ASKED] = "memcore_cores_asked_total",
	[MC_M_CORE_SECONDS_ASKED] = "memcore_core_seconds_asked_total",
	[MC_M_CPU_SECONDS] = "memcore_cpu_seconds_total",
};

static const char *const help[MC_M_COUNT] = {
	[MC_M_STEPS_JUDGED] = "GPU steps memcore judged at launch.",
	[MC_M_STEPS_REFUSED] = "GPU steps memcore refused at launch.",
	[MC_M_STEPS_OOM_KILLED] = "GPU steps with an OOM kill in their "
				  "memory cgroup.",
	[MC_M_MEMORY_ASKED_BYTES] = "Memory the steps that ran were "
				    "allocated on the node.",
	[MC_M_MEMORY_PEAK_NR_BYTES] = "The steps' peak non-reclaimable "
				      "memory (usage less page cache).",
	[MC_M_MEMORY_NEEDED_BYTES] = "Per step the larger of the rule's "
				     "figure and the peak non-reclaimable "
				     "memory, at most what was allocated.",
	[MC_M_CORES_ASKED] = "Cores the steps that ran were allocated.",
	[MC_M_CORE_SECONDS_ASKED] = "Allocated cores times the steps' wall "
				    "time.",
	[MC_M_CPU_SECONDS] = "CPU time the steps used.",
};

/* A label value up to its closing quote, unescaping \\ \" \n (the text
 * format's only escapes: any other backslash is a damaged line). */
static const char *label(const char *p, char *out, size_t len)
{
	size_t n = 0;

	while (*p && *p != '"' && *p != '\n') {
		char c = *p++;

		if (c == '\\') {
			c = *p++;
			if (c == 'n')
				c = '\n';
			else if (c != '\\' && c != '"')
				return NULL;
		}
		if (n + 1 >= len)
			return NULL;
		out[n++] = c;
	}
	out[n] = '\0';
	return *p == '"' ? p + 1 : NULL;
}

bool mc_metrics_label_ok(const char *v)
{
	const unsigned char *s = (const unsigned char *)v;
	size_t len = strlen(v);

	if (!len || len >= MC_METRICS_LABEL_MAX)
		return false;
	while (*s) {
		unsigned c = *s, need, min, cp;

		if (c < 0x20 || c == 0x7f)
			return false;
		if (c < 0x80) {
			s++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			need = 1, min = 0x80, cp = c & 0x1f;
		else if (c >= 0xe0 && c <= 0xef)
			need = 2, min = 0x800, cp = c & 0x0f;
		else if (c >= 0xf0 && c <= 0xf4)
			need = 3, min = 0x10000, cp = c & 0x07;
		else
			return false;
		for (unsigned i = 1; i <= need; i++) {
			if ((s[i] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		s += need + 1;
	}
	return true;
}

static bool is_other(const char *partition)
{
	return !strcmp(partition, MC_METRICS_OTHER);
}

/* The series of (node, partition), made when there is room: a partition
 * besides the catch-all only while fewer than MC_METRICS_SERIES_MAX - 1
 * exist, so that the catch-all always has its slot. */
static struct mc_series *series(struct mc_metrics *m, const char *node,
				const char *partition)
{
	size_t named = 0;

	for (size_t i = 0; i < m->n; i++) {
		if (!strcmp(m->s[i].node, node) &&
		    !strcmp(m->s[i].partition, partition))
			return &m->s[i];
		named += !is_other(m->s[i].partition);
	}
	if (!mc_metrics_label_ok(node) || !mc_metrics_label_ok(partition) ||
	    m->n == MC_METRICS_SERIES_MAX ||
	    (!is_other(partition) && named >= MC_METRICS_SERIES_MAX - 1))
		return NULL;
	memset(&m->s[m->n], 0, sizeof(m->s[m->n]));
	snprintf(m->s[m->n].node, MC_METRICS_LABEL_MAX, "%s", node);
	snprintf(m->s[m->n].partition, MC_METRICS_LABEL_MAX, "%s", partition);
	return &m->s[m->n++];
}

size_t mc_metrics_parse(const char *text, const char *node,
			struct mc_metrics *m)
{
	const char *line = text;
	size_t dropped = 0;

	m->n = 0;
	while (line && *line) {
		const char *nl = strchr(line, '\n'), *p = line;
		char lnode[MC_METRICS_LABEL_MAX] = "",
		     part[MC_METRICS_LABEL_MAX] = "";
		struct mc_series *s = NULL;
		int k = -1;
		char *end;
		double v;

		line = nl ? nl + 1 : NULL;
		if (strncmp(p, "memcore_", 8))
			continue;
		for (int i = 0; i < MC_M_COUNT; i++) {
			size_t l = strlen(mc_metric_names[i]);

			if (!strncmp(p, mc_metric_names[i], l) && p[l] == '{') {
				k = i;
				p += l + 1;
				break;
			}
		}
		while (k >= 0 && p && *p && *p != '}') {
			char *dst = !strncmp(p, "node=\"", 6) ? lnode
				    : !strncmp(p, "partition=\"", 11) ? part
				    : NULL;

			if (!dst) {
				p = NULL;
				break;
			}
			p = label(p + (dst == lnode ? 6 : 11), dst,
				  MC_METRICS_LABEL_MAX);
			if (p && *p == ',')
				p++;
		}
		if (k >= 0 && p && *p == '}' && p[1] == ' ' &&
		    !strcmp(lnode, node)) {
			v = strtod(p + 2, &end);
			if (end != p + 2 && (*end == '\n' || !*end) &&
			    isfinite(v) && v >= 0)
				s = series(m, lnode, part);
			if (s)
				s->v[k] = v;
		}
		dropped += !s;
	}
	return dropped;
}

int mc_metrics_add(struct mc_metrics *m, const struct mc_metrics_step *st)
{
	const char *part = st->partition ? st->partition : "";
	struct mc_series *s = NULL;
	int rc = 0;

	if (!st->node || !mc_metrics_label_ok(st->node))
		return -1;
	if (*part)
		s = series(m, st->node, part);
	if (!s) {
		rc = *part != '\0';
		s = series(m, st->node, MC_METRICS_OTHER);
	}
	if (!s)
		return -1;
	for (int i = 0; i < MC_M_COUNT; i++)
		s->v[i] += st->v[i];
	return rc;
}

/* A label value escaped as the text format wants. */
static void esc(char *buf, size_t len, size_t *n, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			mc_appendf(buf, len, n, "\\%c", *v);
		else if (*v == '\n')
			mc_appendf(buf, len, n, "\\n");
		else
			mc_appendf(buf, len, n, "%c", *v);
	}
}

int mc_metrics_format(const struct mc_metrics *m, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int k = 0; k < MC_M_COUNT; k++) {
		mc_appendf(buf, len, &n, "# HELP %s %s\n# TYPE %s counter\n",
			   mc_metric_names[k], help[k], mc_metric_names[k]);
		for (size_t i = 0; i < m->n; i++) {
			mc_appendf(buf, len, &n, "%s{node=\"",
				   mc_metric_names[k]);
			esc(buf, len, &n, m->s[i].node);
			mc_appendf(buf, len, &n, "\",partition=\"");
			esc(buf, len, &n, m->s[i].partition);
			mc_appendf(buf, len, &n, "\"} %.17g\n", m->s[i].v[k]);
		}
	}
	return n + 1 < len ? (int)n : -1;
}
