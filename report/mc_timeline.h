/*
 * mc_timeline.h - what a step's memory did over time, bounded: at most
 * MC_TIMELINE_POINTS points per step and node, each the maximum over its
 * samples of non-reclaimable memory, page cache and cores busy. Pure: the
 * sampler thread (spank/mc_sampler.c) adds samples, the record kept with
 * the job (mc_summary_record, key "s") carries it encoded, `memcore
 * report --plot/--svg/--json` draws it. Nothing here allocates: the
 * sampler thread runs between slurmstepd's forks.
 *
 * Bounded at any length of step: when the points are full, pairs are
 * merged (the maximum of each pair) and each point then stands for twice
 * as many samples: past MC_TIMELINE_POINTS samples a step has 60 to 120
 * points (a 10-hour step at SampleInterval=1s: 71 points of 512 s); a
 * step of at most MC_TIMELINE_POINTS samples has one point per sample.
 *
 * Kept as 6 bits a value (64 levels of the step's own largest value):
 * 3 characters a point, at most ~380 bytes a record, so that the records
 * of a job stay within memcore's share of the AdminComment
 * (mc_jobrec.h). The levels round up: a value above 0 never reads back
 * as 0, and the largest reads back as the scale.
 */
#ifndef MC_TIMELINE_H
#define MC_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MC_TIMELINE_POINTS 120
/* The largest level of the record's 6-bit values. */
#define MC_TIMELINE_LEVELS 63
/* mc_timeline_encode's longest text, with its NUL. */
#define MC_TIMELINE_TEXT_MAX (64 + 3 * MC_TIMELINE_POINTS)

struct mc_timeline {
	uint32_t n;			/* points filled */
	uint32_t per_point;		/* samples a full point stands for */
	uint32_t in_last;		/* samples in point n - 1 */
	uint32_t interval_ms;		/* between samples (SampleInterval) */
	uint64_t nr_bytes[MC_TIMELINE_POINTS];	 /* max non-reclaimable */
	uint64_t file_bytes[MC_TIMELINE_POINTS]; /* max page cache */
	uint32_t cpu_milli[MC_TIMELINE_POINTS];	 /* max cores busy x 1000 */
	bool has_cpu;			/* cpu_milli holds figures */
	int32_t oom_point;		/* point of the first OOM kill, -1 */
	/* The previous sample, for the CPU rate between two samples. */
	bool have_prev;
	uint64_t prev_t_usec, prev_cpu_usec, prev_oom_kills;
};

/* An empty timeline for samples every interval_ms (> 0). */
void mc_timeline_init(struct mc_timeline *tl, uint32_t interval_ms);

/*
 * Add one sample taken at t_usec (any monotonic clock, microseconds):
 * non-reclaimable nr and page cache file in bytes; cpu_usec the step's
 * CPU time so far (has_cpu false: none, v1); oom_kills the step's OOM
 * kills so far (the first sample's count is the base). The CPU figure of
 * a sample is (cpu_usec - previous) / (t_usec - previous), in cores.
 */
void mc_timeline_add(struct mc_timeline *tl, uint64_t t_usec, uint64_t nr,
		     uint64_t file, bool has_cpu, uint64_t cpu_usec,
		     uint64_t oom_kills);

/*
 * The step ended with OOM kills that no sample saw (the kill came after
 * the last sample, or v1 counted it in a task's cgroup below the one
 * sampled): the first kill is taken to be at the last point. No change
 * when a sample saw one or there are no points.
 */
void mc_timeline_oom_at_end(struct mc_timeline *tl);

/* How long one full point lasts, in ms (per_point x interval_ms). */
uint64_t mc_timeline_point_ms(const struct mc_timeline *tl);

/*
 * The record's text: "MS~MEMMIB~CPUMILLI~OOM~DATA", MS a full point's
 * length in ms, MEMMIB the scale of memory in MiB (the largest value,
 * rounded up), CPUMILLI the scale of cores busy x 1000 (0: no CPU
 * figures), OOM the point of the first OOM kill or "x", DATA 3 characters
 * a point (non-reclaimable, page cache, cores busy) of the base64url
 * alphabet, each a level 0..63 of its scale. No ',' ';' '=' ':' in it.
 * A step whose cores were never busy reads back as one without CPU
 * figures (CPUMILLI 0).
 * Returns the length, or -1 when len is too small (buf then "").
 */
int mc_timeline_encode(const struct mc_timeline *tl, char *buf, size_t len);

/*
 * Read text (n bytes, not NUL-terminated) back into tl: the values are
 * the levels times the scale (bytes, x1000 cores), per_point and
 * interval_ms such that mc_timeline_point_ms gives MS (per_point 1).
 * Returns 0, or -1 when text is not one (tl then empty).
 */
int mc_timeline_decode(const char *text, size_t n, struct mc_timeline *tl);

#endif
