/*
 * mc_memstat.h - a memory cgroup's use, split into what the kernel can
 * reclaim (file pages: page cache, memory-mapped files) and what it cannot
 * (anonymous memory, shared memory, tmpfs, page-locked buffers).
 *
 * Sources: the kernel's Documentation/admin-guide/cgroup-v1/memory.rst
 * (memory.usage_in_bytes, memory.max_usage_in_bytes, memory.limit_in_bytes,
 * memory.memsw.limit_in_bytes, memory.stat with its hierarchical total_*
 * fields, memory.oom_control) and Documentation/admin-guide/cgroup-v2.rst
 * (memory.current, memory.peak, memory.max, memory.swap.max, memory.stat,
 * memory.events).
 *
 * The rule (the kernel's cgroup-v2.rst, memory.stat: active_file and
 * inactive_file are the reclaimable file-backed pages):
 *     non-reclaimable = usage - active_file - inactive_file
 * Shared memory and tmpfs pages are swap-backed: they sit on the anon LRU
 * lists, not on the file ones, so they count as non-reclaimable even though
 * v1's "cache" and v2's "file" include them. "file" below is therefore
 * active_file + inactive_file, never v2's "file" field.
 *
 * Everything reads from a directory path so that tests can point it at a
 * fixture tree (tests/data/cgroup/) instead of /sys/fs/cgroup. Nothing here
 * writes. All figures are bytes.
 */
#ifndef MC_MEMSTAT_H
#define MC_MEMSTAT_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "mc_cgroup.h"

/* "No limit": the kernel prints v1's as PAGE_COUNTER_MAX * PAGE_SIZE
 * (9223372036854771712 on x86_64) and v2's as "max"; both read as this. */
#define MC_MEM_UNLIMITED UINT64_MAX

/* Counts at or above this (1 EiB) are taken as "no limit": v1's unlimited
 * value depends on the page size, and no host has that much RAM. */
#define MC_MEM_UNLIMITED_MIN ((uint64_t)1 << 60)

/* Fields of memory.stat; each hierarchy's keys are in its table
 * (mc_cgops.h, struct mc_cg_stat_keys). */
struct mc_memstat_fields {
	uint64_t anon;		/* v1 total_rss, v2 anon */
	uint64_t shmem;		/* v1 total_shmem, v2 shmem */
	uint64_t active_file;	/* v1 total_active_file, v2 active_file */
	uint64_t inactive_file;	/* v1 total_inactive_file, v2 inactive_file */
	/* v1 only: min of memory.limit_in_bytes over the cgroup and its
	 * ancestors (MC_MEM_UNLIMITED when absent or unlimited). */
	uint64_t hierarchical_limit;
	unsigned found;		/* bit per field above that was present */
};

enum {
	MC_MEMSTAT_ANON = 1u << 0,
	MC_MEMSTAT_SHMEM = 1u << 1,
	MC_MEMSTAT_ACTIVE_FILE = 1u << 2,
	MC_MEMSTAT_INACTIVE_FILE = 1u << 3,
	MC_MEMSTAT_HLIMIT = 1u << 4,
	/* What the split cannot do without. */
	MC_MEMSTAT_NEEDED = MC_MEMSTAT_ANON | MC_MEMSTAT_SHMEM |
			    MC_MEMSTAT_ACTIVE_FILE | MC_MEMSTAT_INACTIVE_FILE,
};

/* One cgroup's memory, as `memcore usage` and the OOM explanation show it. */
struct mc_memstat {
	int version;			/* 1 or 2 (ops->version): to print */
	uint64_t limit_bytes;		/* effective hard limit, or
					 * MC_MEM_UNLIMITED */
	char limit_dir[PATH_MAX];	/* the cgroup whose own limit that
					 * is ("" when none, or not found) */
	uint64_t swap_limit_bytes;	/* v1 memsw (memory+swap), v2 swap
					 * only, the smallest on the path as
					 * limit_bytes; MC_MEM_UNLIMITED when
					 * none or no such file */
	char swap_limit_dir[PATH_MAX];	/* the cgroup that holds it ("" as
					 * limit_dir) */
	uint64_t usage_bytes;		/* v1 usage_in_bytes, v2 current */
	uint64_t peak_bytes;		/* v1 max_usage_in_bytes, v2 peak;
					 * MC_MEM_UNLIMITED when the kernel
					 * keeps none (no such file) */
	uint64_t anon_bytes;
	uint64_t shmem_bytes;		/* /dev/shm, tmpfs, SysV shm */
	uint64_t file_bytes;		/* active_file + inactive_file:
					 * reclaimable page cache */
	uint64_t non_reclaimable_bytes;	/* usage - file, never below 0 */
	uint64_t oom_kills;		/* OOM kills in the cgroup and below */
};

/*
 * Parse memory.stat text of a cgroup of hierarchy ops, by ops->stat's
 * keys: v1 takes the hierarchical total_* fields (the cgroup and its
 * children), and falls back to the local ones when a total_* field is
 * missing; v2's are hierarchical already. Lines it does not know are
 * skipped. Returns 0, or -1 with err set when a needed field is missing
 * or a value is not a number.
 */
int mc_memstat_parse(const char *text, const struct mc_cgroup_ops *ops,
		     struct mc_memstat_fields *f, char *err, size_t errlen);

/*
 * Parse a limit file's content: a decimal byte count or "max" (v2), with
 * values >= MC_MEM_UNLIMITED_MIN read as MC_MEM_UNLIMITED. Returns 0, or
 * -1 when the text is neither.
 */
int mc_memstat_parse_limit(const char *text, uint64_t *bytes);

/*
 * The "oom_kill N" count from v1 memory.oom_control or v2 memory.events
 * text (both use the same line). Returns 0, or -1 when there is no such
 * line (kernels before 4.13).
 */
int mc_memstat_parse_oom_kill(const char *text, uint64_t *count);

/*
 * Read the cgroup cg into m: version, usage, limit, swap limit, peak, the
 * split and the OOM kills (dir below is cg->dir).
 *  - limit: the effective one, the smallest hard limit on the path from
 *    dir up to cg->mount (the hierarchy's mount point), and in limit_dir the
 *    cgroup that holds it (the nearest, when several hold the same). v1
 *    also takes memory.stat's hierarchical_memory_limit (a task's leaf
 *    cgroup has no limit of its own; its step's applies). v2: the root
 *    cgroup has no memory.max. A mount of "" reads dir's own limit only (v1:
 *    and the hierarchical one, without limit_dir when that is lower).
 *  - oom_kills: v1 counts each kill in the victim's own cgroup only, so
 *    the counts of dir and every cgroup below it are summed (at most 4096
 *    directories, 16 levels); v2 memory.events is hierarchical already.
 *  - swap limit: found as the limit is (v1 memory.memsw.limit_in_bytes,
 *    v2 memory.swap.max), the smallest on the path, in swap_limit_dir.
 *  - peak: dir's own, MC_MEM_UNLIMITED when the kernel keeps none.
 * Returns 0, or -1 with err set ("DIR: not a memory cgroup ...", "FILE:
 * reason").
 */
int mc_memstat_read(const struct mc_cgroup *cg, struct mc_memstat *m,
		    char *err, size_t errlen);

/*
 * Only the OOM kill count of cg (as in mc_memstat_read), for the cheap
 * check after each task. Returns 0, or -1 with err set.
 */
int mc_memstat_oom_kills(const struct mc_cgroup *cg, uint64_t *count,
			 char *err, size_t errlen);

#endif
