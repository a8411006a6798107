/*
 * mc_gauges.h - the live view for admins: one running step's memory as
 * Prometheus gauges, the text of the file its slurmstepd keeps beside the
 * cluster counters (mc_metrics.h) while the step runs (spank/mc_livegauges.c
 * writes and removes it). Pure.
 *
 * Names follow mc_metrics.h: memcore_step_ prefix, bytes. Labels jobid,
 * step, user, node, partition (jobid, not job: Prometheus gives every
 * series its scrape job's name as label job, and would rename a job label
 * of node_exporter's to exported_job unless the scrape had honor_labels);
 * the series are bounded by the steps running
 * now, since each step's file is removed at its end. Label values come
 * only from what slurmstepd trusts (Slurm's job and step ids, the job's
 * uid resolved by the node's name service, slurmd's node name and
 * partition record), never from the job's environment; each must pass
 * mc_metrics_label_ok, else the step has no gauges (a repaired value
 * could name another user's or node's step).
 *
 * mc_gauges_format runs in the sampler thread (spank/mc_sampler.h): it
 * allocates nothing, takes no lock and uses no stdio (its own integer
 * formatter), so that a fork slurmstepd makes meanwhile copies no lock
 * the child could need.
 */
#ifndef MC_GAUGES_H
#define MC_GAUGES_H

#include <stddef.h>
#include <stdint.h>

enum mc_gauge {
	MC_G_NONRECLAIMABLE,	/* usage less page cache, this sample */
	MC_G_PAGE_CACHE,	/* active + inactive file, this sample */
	MC_G_LIMIT,		/* the step's allocation on the node */
	MC_G_RULE,		/* the rule's figure for what it asked */
	MC_G_COUNT
};

/* Each gauge's name (mc_gauges.c). */
extern const char *const mc_gauge_names[MC_G_COUNT];

/* The label set, braces included, as mc_gauges_labels prints it: five
 * values of at most MC_METRICS_LABEL_MAX - 1 bytes, each escaped to at
 * most twice that. */
#define MC_GAUGES_LABELS_MAX 768
/* The whole text: HELP and TYPE lines and one sample per gauge. */
#define MC_GAUGES_TEXT_MAX 6144

/* The step a file is of. Strings, none NULL. */
struct mc_gauge_ids {
	const char *job;	/* "1234" */
	const char *step;	/* "0", "batch" */
	const char *user;	/* the job's user name, or its uid */
	const char *node;	/* slurmd's NodeName */
	const char *partition;	/* slurmd's record; "" none: MC_METRICS_OTHER */
};

/*
 * Print the label set `{jobid="..",step="..",user="..",node="..",
 * partition=".."}` into out (len bytes), values escaped (\\ \" \n). A
 * partition "" is printed as MC_METRICS_OTHER, as the counters do.
 * Returns the length, or -1 when a value is no valid label
 * (mc_metrics_label_ok) or out is too small: the step gets no gauges.
 */
int mc_gauges_labels(const struct mc_gauge_ids *ids, char *out, size_t len);

/*
 * Print the gauges file into buf (len bytes, NUL-terminated): for each
 * gauge a HELP line, a TYPE gauge line and one sample, labels as given by
 * mc_gauges_labels, the value v[gauge] in bytes as a decimal integer.
 * Returns the length, or -1 when buf is too small (buf is then "").
 * No allocation, no stdio, no lock.
 */
int mc_gauges_format(const char *labels, const uint64_t v[MC_G_COUNT],
		     char *buf, size_t len);

/* Print v in decimal into buf (at least 21 bytes), NUL-terminated;
 * returns the length. No stdio. */
size_t mc_gauges_u64(uint64_t v, char *buf);

#endif
