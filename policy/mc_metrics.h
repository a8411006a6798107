/*
 * mc_metrics.h - the cluster view for admins (issue 19 item 4): counters
 * per node and partition in the Prometheus text format, for
 * node_exporter's textfile collector. Pure: parse the file's text, add one
 * step, print it again (spank/mc_textfile.c reads and writes the file).
 *
 * Names follow Prometheus' conventions (prometheus.io/docs/practices/
 * naming): memcore_ prefix, base units (bytes, seconds), _total for
 * counters; labels node and partition. Cores busy is a rate: the counters
 * are CPU seconds used and core seconds allocated, whose rates divide
 * into the share of asked cores that was busy.
 */
#ifndef MC_METRICS_H
#define MC_METRICS_H

#include <stddef.h>
#include <stdint.h>

enum mc_metric {
	MC_M_STEPS_JUDGED, MC_M_STEPS_REFUSED, MC_M_STEPS_OOM_KILLED,
	MC_M_MEMORY_ASKED_BYTES, MC_M_MEMORY_PEAK_NR_BYTES,
	MC_M_CORES_ASKED, MC_M_CORE_SECONDS_ASKED, MC_M_CPU_SECONDS,
	MC_M_COUNT
};

/* Each metric's name and help text (mc_metrics.c). */
extern const char *const mc_metric_names[MC_M_COUNT];

#define MC_METRICS_SERIES_MAX 128	/* node x partition pairs kept */
#define MC_METRICS_LABEL_MAX 64

struct mc_metrics {
	size_t n;
	struct mc_series {
		char node[MC_METRICS_LABEL_MAX];
		char partition[MC_METRICS_LABEL_MAX];
		double v[MC_M_COUNT];
	} s[MC_METRICS_SERIES_MAX];
};

/* What one step adds. */
struct mc_metrics_step {
	const char *node, *partition;
	double v[MC_M_COUNT];
};

/*
 * Parse a textfile memcore wrote into m (reset first): its memcore_*
 * samples; comments and other lines are skipped, so a damaged file loses
 * only the lines that are damaged. Never fails.
 */
void mc_metrics_parse(const char *text, struct mc_metrics *m);

/* Add one step to its node's and partition's series. Returns 0, or -1
 * when MC_METRICS_SERIES_MAX series exist already (the step is not
 * counted) or a label is too long. */
int mc_metrics_add(struct mc_metrics *m, const struct mc_metrics_step *st);

/*
 * Print m in the Prometheus text exposition format (HELP, TYPE counter,
 * one sample per series), labels escaped. Returns the length, or -1 when
 * buf is too small.
 */
int mc_metrics_format(const struct mc_metrics *m, char *buf, size_t len);

#endif
