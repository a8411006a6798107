/*
 * mc_jobrec.h - memcore's records kept with a job (issue 19 item 3): one
 * per step and node (mc_summary_record), in the job's AdminComment, which
 * only root and SlurmUser can set, slurmctld keeps while it knows the job
 * and slurmdbd keeps after it (sacct -o AdminComment), and which Slurm
 * shows only to whom it lets read the job (PrivateData=jobs).
 *
 * Layout: whatever another tool put there is kept in front, then
 *     memcore1:REC;REC;...
 * A record for a step and node already there is replaced (a retry), a new
 * one appended; when the block would pass max bytes the oldest records go
 * and "dropped=N" (the first item) counts them. Pure text, no I/O.
 */
#ifndef MC_JOBREC_H
#define MC_JOBREC_H

#include <stdbool.h>
#include <stddef.h>

#define MC_JOBREC_TAG "memcore1:"
/* At most this much of a job's AdminComment is memcore's: about 20
 * step-node records. */
#define MC_JOBREC_MAX 8192

/*
 * out = cur (NULL: empty) with rec merged in, memcore's block at most max
 * bytes. Returns 0, or -1 when rec alone is longer than max, has a ';' or
 * no "step@host:" prefix, or out is too small for the foreign text plus
 * the block.
 */
int mc_jobrec_merge(const char *cur, const char *rec, char *out,
		    size_t outlen, size_t max);

/* Does text hold rec exactly (as one of its records)? */
bool mc_jobrec_has(const char *text, const char *rec);

/*
 * The records of text, in order: recs[i] points into text, lens[i] long
 * (no NUL). Returns how many (at most max); *dropped the N of
 * "dropped=N" (0 when none). text without memcore's block: 0.
 */
size_t mc_jobrec_split(const char *text, const char **recs, size_t *lens,
		       size_t max, unsigned *dropped);

#endif
