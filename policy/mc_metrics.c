/*
 * mc_metrics.c - memcore's counters in the Prometheus text format
 * (mc_metrics.h).
 */
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
	[MC_M_CORES_ASKED] = "Cores the steps that ran were allocated.",
	[MC_M_CORE_SECONDS_ASKED] = "Allocated cores times the steps' wall "
				    "time.",
	[MC_M_CPU_SECONDS] = "CPU time the steps used.",
};

/* A label value up to its closing quote, unescaping \\ \" \n. */
static const char *label(const char *p, char *out, size_t len)
{
	size_t n = 0;

	while (*p && *p != '"') {
		char c = *p++;

		if (c == '\\' && *p) {
			c = *p++;
			if (c == 'n')
				c = '\n';
		}
		if (n + 1 >= len)
			return NULL;
		out[n++] = c;
	}
	out[n] = '\0';
	return *p == '"' ? p + 1 : NULL;
}

static struct mc_series *series(struct mc_metrics *m, const char *node,
				const char *partition)
{
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->s[i].node, node) &&
		    !strcmp(m->s[i].partition, partition))
			return &m->s[i];
	if (m->n == MC_METRICS_SERIES_MAX ||
	    strlen(node) >= MC_METRICS_LABEL_MAX ||
	    strlen(partition) >= MC_METRICS_LABEL_MAX)
		return NULL;
	memset(&m->s[m->n], 0, sizeof(m->s[m->n]));
	snprintf(m->s[m->n].node, MC_METRICS_LABEL_MAX, "%s", node);
	snprintf(m->s[m->n].partition, MC_METRICS_LABEL_MAX, "%s", partition);
	return &m->s[m->n++];
}

void mc_metrics_parse(const char *text, struct mc_metrics *m)
{
	const char *line = text;

	m->n = 0;
	while (line && *line) {
		const char *nl = strchr(line, '\n'), *p = line;
		char node[MC_METRICS_LABEL_MAX] = "",
		     part[MC_METRICS_LABEL_MAX] = "";
		struct mc_series *s;
		int k = -1;
		char *end;
		double v;

		for (int i = 0; i < MC_M_COUNT; i++) {
			size_t l = strlen(mc_metric_names[i]);

			if (!strncmp(p, mc_metric_names[i], l) && p[l] == '{') {
				k = i;
				p += l + 1;
				break;
			}
		}
		while (k >= 0 && p && *p && *p != '}') {
			char *dst = !strncmp(p, "node=\"", 6) ? node
				    : !strncmp(p, "partition=\"", 11) ? part
				    : NULL;

			if (!dst) {
				p = NULL;
				break;
			}
			p = label(p + (dst == node ? 6 : 11), dst,
				  MC_METRICS_LABEL_MAX);
			if (p && *p == ',')
				p++;
		}
		if (k >= 0 && p && *p == '}' && p[1] == ' ') {
			v = strtod(p + 2, &end);
			if (end != p + 2 && (*end == '\n' || !*end) && v >= 0 &&
			    (s = series(m, node, part)))
				s->v[k] = v;
		}
		line = nl ? nl + 1 : NULL;
	}
}

int mc_metrics_add(struct mc_metrics *m, const struct mc_metrics_step *st)
{
	struct mc_series *s = series(m, st->node, st->partition);

	if (!s)
		return -1;
	for (int i = 0; i < MC_M_COUNT; i++)
		s->v[i] += st->v[i];
	return 0;
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
