/*
 * mc_scratch.h - the job's staging directory under LocalScratch=
 * (PATH/job_J, where the dataset note tells the user to `memcore stage`
 * the dataset, mc_dataset.h), removed at the job's end by the job epilog
 * (root, slurmd's child: spank/mc_prolog.c).
 *
 * What is removed is that one directory and nothing through it: job_J
 * must be a real directory (lstat: a symlink job_J, which a user can make
 * to anything, is left alone and said), on the same filesystem as PATH;
 * below it every entry is opened with O_NOFOLLOW relative to its parent's
 * descriptor (openat/unlinkat: no path is resolved again, so a directory
 * swapped for a symlink during the walk is not followed), a directory on
 * another filesystem (a mount inside it) is left with what is under it,
 * and the depth is bounded (MC_SCRATCH_DEPTH_MAX).
 */
#ifndef MC_SCRATCH_H
#define MC_SCRATCH_H

#include <stddef.h>
#include <stdint.h>

#define MC_SCRATCH_DEPTH_MAX 128

/*
 * Remove scratch/job_<job_id> as above. Returns the entries removed (the
 * directory itself counted; 0: there was none), or -1 with err saying what
 * was left and why ("PATH: is a symlink, not a directory: left as it is",
 * "PATH: strerror", "PATH: on another filesystem (a mount): left"); what
 * could be removed is removed even then.
 */
long mc_scratch_remove(const char *scratch, uint32_t job_id, char *err,
		       size_t errlen);

#endif
