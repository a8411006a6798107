/*
 * mc_gaugefile.h - the file of one running step's gauges (report/
 * mc_gauges.h), rewritten from the sampler thread and removed at the
 * step's end; spank/mc_livegauges.c sets it up and tears it down.
 *
 * One file per step, in the PrometheusTextfile's directory (root's alone,
 * memcore.conf(5)), named MC_GAUGEFILE_PREFIX<node>_<pid>_<job>_<step>.prom
 * (pid: the step's slurmstepd): no two steps share a file, so none waits
 * for another or loses anything, and node_exporter, which reads every
 * *.prom there, sees exactly the steps running now. A file a slurmstepd
 * killed by SIGKILL left behind is removed by the next step on the node
 * that starts or ends (mc_gaugefile_clean): its pid is gone, or no longer
 * a slurmstepd.
 *
 * mc_gaugefile_write runs in the sampler thread (spank/mc_sampler.h): no
 * allocation, no stdio, no lock, only system calls on a directory
 * descriptor opened beforehand. node_exporter never reads half a file:
 * the text goes to ".<name>.tmp", created anew (O_EXCL | O_NOFOLLOW: a
 * link or FIFO planted under that name is refused, never followed nor
 * opened), then renamed over the file. No fsync: the file is worth
 * nothing after a crash (the next step removes it), and an fsync each
 * second would cost each step a disk write.
 */
#ifndef MC_GAUGEFILE_H
#define MC_GAUGEFILE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "mc_gauges.h"

#define MC_GAUGEFILE_PREFIX "memcore_step_"
/* The file is rewritten at a sample when this long has passed since the
 * last write: Prometheus scrapes every 15 s or more, and a rename each
 * SampleInterval of 100 ms would cost for nothing. */
#define MC_GAUGEFILE_EVERY_MS 1000

struct mc_gaugefile {
	bool on;			/* set up: the rest is valid */
	int dfd;			/* the directory */
	char name[NAME_MAX + 1];
	char tmp[NAME_MAX + 1];
	char labels[MC_GAUGES_LABELS_MAX];
	uint64_t v[MC_G_COUNT];		/* limit and rule set at start */
	char text[MC_GAUGES_TEXT_MAX];
	uint32_t every_ms;
	/* The writer's own (the sampler thread's), read once it stopped. */
	bool written;			/* the file is there */
	bool have_last;
	struct timespec last;		/* CLOCK_MONOTONIC of the last write */
	uint64_t writes, failures;
	int first_errno;		/* of the first failure */
	const char *first_what;		/* what failed first */
};

/*
 * The file's name for a step: MC_GAUGEFILE_PREFIX<node>_<pid>_<job>_<step>
 * .prom into name (NAME_MAX + 1 bytes). node and step may hold only
 * [A-Za-z0-9.-] (a '_' would make names ambiguous, a '/' leave the
 * directory). Returns 0, or -1 when one does not, or it is too long.
 */
int mc_gaugefile_name(char *name, const char *node, long pid, uint32_t job,
		      const char *step);

/*
 * Write the gauges of a sample (non-reclaimable and page cache bytes; the
 * limit and rule are g->v's) unless the last write was less than
 * g->every_ms ago (force: write anyway). Returns 0 written or skipped, -1
 * failed (counted in g->failures, the first's errno and step kept; the
 * step goes on). Sampler thread only; no allocation, no stdio.
 */
int mc_gaugefile_write(struct mc_gaugefile *g, uint64_t nonreclaimable,
		       uint64_t page_cache, bool force);

/*
 * Remove this step's file and its temporary file (g->dfd open). Returns 0,
 * or -1 with errno set when one was there and could not be removed.
 */
int mc_gaugefile_remove(struct mc_gaugefile *g);

/*
 * Remove from the directory dfd the gauge files (and their temporary
 * files) of node `node` whose slurmstepd is gone: its pid names no
 * process, or one whose /proc/PID/comm is not "slurmstepd". The pid
 * `self` is never touched. Other nodes' files (a directory on a shared
 * file system) are left alone: their pids are not this node's. Returns
 * how many were removed.
 */
int mc_gaugefile_clean(int dfd, const char *node, long self);

#endif
