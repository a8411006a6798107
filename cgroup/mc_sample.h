/*
 * mc_sample.h - read a step's memory cgroup over and over, cheaply: the
 * files are opened once and re-read with pread at offset 0 (cgroupfs files
 * are seq_files: a read from 0 makes the kernel print them afresh), into a
 * buffer inside the struct. Nothing here allocates after mc_sample_open,
 * so the sampler thread in slurmstepd (spank/mc_sampler.c) never takes
 * malloc's lock between slurmstepd's forks.
 *
 * What a sample holds (kernel Documentation/admin-guide/cgroup-v1/
 * memory.rst and cgroup-v2.rst):
 *  - usage: v1 memory.usage_in_bytes, v2 memory.current;
 *  - anon, shmem, file (active_file + inactive_file) from memory.stat, the
 *    hierarchical total_* fields on v1 (mc_memstat_parse), so that
 *    non-reclaimable = usage - file as everywhere in memcore;
 *  - cpu_usec: v2 cpu.stat usage_usec (present in every v2 cgroup, with or
 *    without the cpu controller); v1 has no CPU figure in the memory
 *    hierarchy (0, has_cpu false: the caller counts its children instead).
 * The kernel's own cumulative counters (peak, OOM kills, v2 high/max
 * events) need no sampling: mc_sample_end reads them once at the end.
 */
#ifndef MC_SAMPLE_H
#define MC_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One reading of the step's cgroup. Bytes and microseconds. */
struct mc_sample {
	uint64_t usage_bytes;
	uint64_t anon_bytes;
	uint64_t shmem_bytes;
	uint64_t file_bytes;
	uint64_t non_reclaimable_bytes;	/* usage - file, never below 0 */
	uint64_t cpu_usec;
	bool has_cpu;
	/* OOM kills so far: the oom_kill line of v2 memory.events
	 * (hierarchical) or v1 memory.oom_control (this cgroup's own) */
	uint64_t oom_kills;
	bool has_oom;
};

/* The kernel's counters at the step's end. */
struct mc_sample_end {
	/* v2 memory.peak, v1 memory.max_usage_in_bytes: the total with file
	 * pages, never below any sample; 0 when the kernel has none
	 * (v2 before Linux 5.19). */
	uint64_t kernel_peak_bytes;
	uint64_t oom_kills;		/* as mc_memstat_oom_kills */
	uint64_t high_events;		/* v2 memory.events "high" */
	uint64_t max_events;		/* v2 "max"; v1 memory.failcnt */
};

/* The open files of one cgroup, and the read buffer. */
struct mc_sample_src {
	int version;			/* 1 or 2 */
	int stat_fd, usage_fd, cpu_fd;	/* -1 when not open */
	int oom_fd;			/* -1 when not open */
	char buf[8192];			/* memory.stat is ~1.5 KiB on 6.x */
};

/*
 * Open dir's files for sampling (version 1 or 2, as mc_memstat_version).
 * Returns 0, or -1 with err set ("DIR/FILE: reason") and nothing left
 * open. cpu.stat and the OOM kill count's file are optional.
 */
int mc_sample_open(struct mc_sample_src *src, const char *dir, int version,
		   char *err, size_t errlen);

/*
 * One sample into out. No allocation, a fixed number of system calls (4 on
 * v2, 3 on v1). Returns 0, or -1 (errno set) when a read failed or
 * memory.stat lacked a needed field: a sample is then skipped, not
 * guessed.
 */
int mc_sample_read(struct mc_sample_src *src, struct mc_sample *out);

/* Close what mc_sample_open opened (safe twice). */
void mc_sample_close(struct mc_sample_src *src);

/*
 * The kernel's counters of dir at the end (see struct mc_sample_end).
 * Missing files leave their field 0. Returns 0, or -1 with err set when
 * dir is not a memory cgroup.
 */
int mc_sample_end_read(const char *dir, int version,
		       struct mc_sample_end *out, char *err, size_t errlen);

/* Parse the usage_usec line of v2 cpu.stat text; 0, or -1 when absent. */
int mc_sample_parse_cpu_stat(const char *text, uint64_t *usec);

/* Parse "high N" and "max N" of v2 memory.events text (either may be
 * missing: left unchanged). */
void mc_sample_parse_events(const char *text, uint64_t *high, uint64_t *max);

#endif
