/*
 * mc_cgread.h - read a step's memory cgroup over and over, cheaply: the
 * files are opened once and re-read with pread at offset 0 (cgroupfs files
 * are seq_files: a read from 0 makes the kernel print them afresh), into a
 * buffer inside the struct. Nothing here allocates after mc_cgread_open,
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
 * events) need no sampling: mc_cgread_end reads them once at the end.
 * Nor do the counters of a page cache squeezed by the limit
 * (mc_cgread_squeeze_read): read at the step's first task and at its end,
 * from the caller's thread, never the sampler's.
 */
#ifndef MC_CGREAD_H
#define MC_CGREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mc_cgroup.h"

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
struct mc_cgread_end {
	/* v2 memory.peak, v1 memory.max_usage_in_bytes: the total with file
	 * pages, never below any sample; 0 when the kernel has none
	 * (v2 before Linux 5.19). */
	uint64_t kernel_peak_bytes;
	uint64_t oom_kills;		/* as mc_memstat_oom_kills */
	uint64_t high_events;		/* v2 memory.events "high" */
	uint64_t max_events;		/* v2 "max"; v1 memory.failcnt */
	/* The hierarchy the figures came from (ops->version), as data for
	 * the step's record: memcore report finds its table by it
	 * (mc_cgroup_ops_of), names the peak file and says why a hierarchy
	 * without PSI has no stall time. */
	uint32_t cgroup_version;
};

/* The open files of one cgroup, and the read buffer. */
struct mc_cgread_src {
	const struct mc_cgroup_ops *ops;	/* the hierarchy's table */
	int stat_fd, usage_fd, cpu_fd;	/* -1 when not open */
	int oom_fd;			/* -1 when not open */
	char buf[8192];			/* memory.stat is ~1.5 KiB on 6.x */
};

/*
 * Open cg's files for sampling.
 * Returns 0, or -1 with err set ("DIR/FILE: reason") and nothing left
 * open. cpu.stat and the OOM kill count's file are optional.
 */
int mc_cgread_open(struct mc_cgread_src *src, const struct mc_cgroup *cg,
		   char *err, size_t errlen);

/*
 * One sample into out. No allocation, a fixed number of system calls (4 on
 * v2, 3 on v1). Returns 0, or -1 (errno set) when a read failed or
 * memory.stat lacked a needed field: a sample is then skipped, not
 * guessed.
 */
int mc_cgread_read(struct mc_cgread_src *src, struct mc_sample *out);

/* Close what mc_cgread_open opened (safe twice). */
void mc_cgread_close(struct mc_cgread_src *src);

/*
 * The kernel's counters of cg at the end (see struct mc_cgread_end).
 * Missing files leave their field 0; cgroup_version is set even when it
 * fails (a cgroup not made: its dir ""), left 0 when cg has no table (its
 * cgroup was never found). Returns 0, or -1 with err set when cg->dir is
 * not a memory cgroup directory.
 */
int mc_cgread_end_read(const struct mc_cgroup *cg, struct mc_cgread_end *out,
		       char *err, size_t errlen);

/*
 * Page cache squeezed by the limit: the kernel's cumulative counters of one
 * cgroup, whose differences between the step's first task and its end are
 * the step's figures.
 *  - refault_file_pages: memory.stat workingset_refault_file (v2), the
 *    hierarchical total_workingset_refault_file on v1 (printed there by
 *    newer kernels only: has_refault false when absent). A count of pages:
 *    "Number of refaults of previously evicted file pages" (kernel
 *    Documentation/admin-guide/cgroup-v2.rst, memory.stat; mm/memcontrol.c
 *    prints the WORKINGSET_* items with a unit of 1, not PAGE_SIZE, on v1
 *    and v2 alike), so bytes = pages x the page size.
 *  - some_usec: memory.pressure "some ... total=USEC", the microseconds in
 *    which at least one task of the cgroup waited on memory (reclaim, a
 *    refault of a page it had been using) (Documentation/accounting/
 *    psi.rst). v2 only: v1 keeps no pressure per cgroup.
 */
enum mc_psi_state {
	MC_PSI_READ = 0,	/* some_usec holds the figure */
	MC_PSI_NONE,		/* the hierarchy keeps no memory.pressure
				 * per cgroup (v1: no MC_CG_HAS_PSI) */
	MC_PSI_OFF,		/* the kernel has PSI off: no /proc/pressure
				 * (psi=0, or CONFIG_PSI_DEFAULT_DISABLED
				 * without psi=1), so no cgroup file either */
	MC_PSI_UNREADABLE,	/* PSI is on but this cgroup's file is not
				 * readable (cgroup.pressure 0, ...) */
};

struct mc_squeeze {
	bool has_refault;
	uint64_t refault_file_pages;
	enum mc_psi_state psi;
	uint64_t some_usec, full_usec;
};

/*
 * The counters of the memory cgroup cg into out; what
 * cannot be read is said by has_refault and psi. Reads two or three small
 * files into stack buffers: for slurmstepd's hooks, not the sampler
 * thread (which it would not harm, but it has no use for them).
 */
void mc_cgread_squeeze_read(const struct mc_cgroup *cg,
			    struct mc_squeeze *out);

/*
 * The refault counter of memory.stat text: v2 "workingset_refault_file N",
 * v1 "total_workingset_refault_file N" (the local line when the total is
 * absent). Pages. 0, or -1 when the text has none.
 */
int mc_cgread_parse_refault(const char *memstat,
			    const struct mc_cgroup_ops *ops, uint64_t *pages);

/*
 * The totals of memory.pressure text ("some avg10=0.00 avg60=0.00
 * avg300=0.00 total=123\nfull avg10=... total=45\n"), microseconds.
 * "full" is absent from some files (the kernel's /proc/pressure/cpu
 * before 5.13): full left 0 then. 0, or -1 when "some ... total=" is not
 * there.
 */
int mc_cgread_parse_pressure(const char *text, uint64_t *some_usec,
			     uint64_t *full_usec);

/* Parse the usage_usec line of v2 cpu.stat text; 0, or -1 when absent. */
int mc_cgread_parse_cpu_stat(const char *text, uint64_t *usec);

/* Parse "high N" and "max N" of v2 memory.events text (either may be
 * missing: left unchanged). */
void mc_cgread_parse_events(const char *text, uint64_t *high, uint64_t *max);

#endif
