/*
 * mc_metrics.h - the cluster view for admins: counters per node and
 * partition in the Prometheus text format, for node_exporter's textfile
 * collector. Pure: parse the file's text, add one step, print it again
 * (spank/mc_textfile.c reads and writes the file).
 *
 * Names follow Prometheus' conventions (prometheus.io/docs/practices/
 * naming): memcore_ prefix, base units (bytes, seconds), _total for
 * counters; labels node and partition. Cores busy is a rate: the counters
 * are CPU seconds used and core seconds allocated, whose rates divide
 * into the share of asked cores that was busy.
 *
 * Labels come only from values memcore trusts, and the series are bounded:
 * the file is one node's, its node label that node's own name (a series of
 * any other node read back from the file is dropped); the partition label
 * is a partition slurmd named for the job (Slurm's own, so bounded by
 * slurm.conf), and whatever memcore cannot name that way (no record, a
 * name that is no valid label, a table full) is counted under the
 * catch-all partition MC_METRICS_OTHER, so a step is always counted.
 */
#ifndef MC_METRICS_H
#define MC_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum mc_metric {
	MC_M_STEPS_JUDGED, MC_M_STEPS_REFUSED, MC_M_STEPS_OOM_KILLED,
	MC_M_MEMORY_ASKED_BYTES, MC_M_MEMORY_PEAK_NR_BYTES,
	/* Per step the larger of the rule's figure and the peak, at most
	 * what was asked: asked minus this is what was asked beyond need
	 * (a step that asked what the rule says wasted nothing, whatever
	 * its peak). */
	MC_M_MEMORY_NEEDED_BYTES,
	MC_M_CORES_ASKED, MC_M_CORE_SECONDS_ASKED, MC_M_CPU_SECONDS,
	MC_M_COUNT
};

/* Each metric's name and help text (mc_metrics.c). */
extern const char *const mc_metric_names[MC_M_COUNT];

/* Series kept for the node, the catch-all included: one slot is always
 * left for it. */
#define MC_METRICS_SERIES_MAX 128
#define MC_METRICS_LABEL_MAX 64
/* The catch-all partition label. A site partition of that name shares its
 * series (memcore.conf(5)). */
#define MC_METRICS_OTHER "other"

struct mc_metrics {
	size_t n;
	struct mc_series {
		char node[MC_METRICS_LABEL_MAX];
		char partition[MC_METRICS_LABEL_MAX];
		double v[MC_M_COUNT];
	} s[MC_METRICS_SERIES_MAX];
};

/* What one step adds. partition: NULL or "" when memcore has none to
 * trust (counted under MC_METRICS_OTHER). */
struct mc_metrics_step {
	const char *node, *partition;
	double v[MC_M_COUNT];
};

/*
 * Whether v may be a label value: 1 to MC_METRICS_LABEL_MAX - 1 bytes of
 * valid UTF-8 (RFC 3629: no overlong form, no surrogate, at most
 * U+10FFFF), no control character (C0, DEL). The text format takes any
 * UTF-8 (prometheus.io/docs/instrumenting/exposition_formats), and an
 * invalid byte makes node_exporter refuse the whole file; control bytes
 * name no node or partition. Such a value is refused, never repaired: a
 * repaired name would be a label that names nothing, and two names could
 * repair into one.
 */
bool mc_metrics_label_ok(const char *v);

/*
 * Parse a textfile memcore wrote into m (reset first): the memcore_*
 * samples of node `node` whose labels unescape (\\ \" \n, the format's
 * only escapes) into valid labels and whose values are finite and not
 * negative; at most MC_METRICS_SERIES_MAX - 1 partitions besides
 * MC_METRICS_OTHER. Comments and other lines are skipped. Returns how
 * many memcore_* samples were not taken (another node's, a damaged
 * line), so the caller can say so; never fails.
 */
size_t mc_metrics_parse(const char *text, const char *node,
			struct mc_metrics *m);

/*
 * Add one step to its node's and partition's series: to MC_METRICS_OTHER
 * when the partition is absent, no valid label, or new while
 * MC_METRICS_SERIES_MAX - 1 partitions exist. Returns 0 counted under
 * the step's partition, 1 counted under MC_METRICS_OTHER although the
 * step named a partition, -1 not counted (the node name is no valid
 * label).
 */
int mc_metrics_add(struct mc_metrics *m, const struct mc_metrics_step *st);

/*
 * Print m in the Prometheus text exposition format (HELP, TYPE counter,
 * one sample per series), label values escaped (\\, \", \n). Returns the
 * length, or -1 when buf is too small.
 */
int mc_metrics_format(const struct mc_metrics *m, char *buf, size_t len);

#endif
