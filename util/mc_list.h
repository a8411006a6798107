/*
 * mc_list.h - Slurm-style index lists: "0-3,8", "0,1,2", "0-11,24-35".
 * The shape of SLURM_STEP_GPUS, S_STEP_ALLOC_CORES and cpuset lists.
 * Pure C, no allocation.
 */
#ifndef MC_LIST_H
#define MC_LIST_H

#include <stddef.h>

/* The largest index a list may name; Slurm's own bitmaps stop far below. */
#define MC_LIST_INDEX_MAX 65535u

/*
 * Parse a list into idx[0..max) in the order written ("2,0-1" gives 2,0,1).
 * Returns the count, or -1 for an empty or malformed list (junk, a sign,
 * a descending range "3-1", an index above MC_LIST_INDEX_MAX) or more than
 * max entries. idx may be NULL to only count (max is then still the cap).
 */
int mc_list_parse(const char *s, unsigned *idx, size_t max);

/*
 * Write idx[0..n) as a compact list ("0-3,8"), ranges for runs of
 * consecutive ascending values. Returns buf ("" for n = 0); truncates
 * safely to buflen.
 */
const char *mc_list_format(const unsigned *idx, size_t n, char *buf,
			   size_t buflen);

#endif
