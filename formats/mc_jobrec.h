/*
 * mc_jobrec.h - memcore's records kept with a job: one
 * per step and node (mc_summary_record), in the job's AdminComment, which
 * only root and SlurmUser can set, slurmctld keeps while it knows the job
 * and slurmdbd keeps after it (sacct -o AdminComment), and which Slurm
 * shows only to whom it lets read the job (PrivateData=jobs).
 *
 * Layout: whatever another tool put there is kept in front, then
 *     memcore1:[AGG;]REC;REC;...
 * A record for a step and node already there is replaced (a retry, so a
 * merge done twice is done once), a new one appended. When the block
 * would pass max bytes the records' timelines go first (the value of
 * their "s", mc_timeline.h, replaced by MC_JOBREC_CUT, so that the report
 * can say it was cut), the oldest record's first and the new one's last;
 * when that is not enough, the oldest records go, and the aggregate AGG,
 * the first item, stands for them:
 *     dropped=N,p=BYTES,o=K,at=STEP@HOST[,u=U]
 * N records dropped, the largest peak non-reclaimable among them (p, as
 * in the record) and which step and node had it (at), the OOM kills among
 * them (o, summed); u: how many of the N came from a memcore that wrote a
 * bare "dropped=N" (0.3.0), whose figures are not known. A bare
 * "dropped=N" reads as N dropped, all N without figures; 0.3.0 itself
 * reads the new form's N (it took the digits after "dropped="). Pure text,
 * no I/O.
 */
#ifndef MC_JOBREC_H
#define MC_JOBREC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MC_JOBREC_TAG "memcore1:"
/* At most this much of a job's AdminComment is memcore's: about 10
 * step-node records with their timelines, about 25 without. */
#define MC_JOBREC_MAX 8192
/* A record's "s" once its timeline was dropped for the bound. */
#define MC_JOBREC_CUT "cut"


/* What stands for the records the bound pushed out. */
struct mc_jobrec_agg {
	unsigned steps;		/* step-node records dropped, 0 none */
	unsigned unknown;	/* of them, without figures (0.3.0's) */
	uint64_t peak_bytes;	/* largest peak non-reclaimable, bytes */
	uint64_t oom_kills;	/* OOM kills among them, summed */
	char peak_at[112];	/* "step@host" of that peak, "" none */
};

/*
 * out = cur (NULL: empty) with rec merged in, memcore's block at most max
 * bytes, dropped records folded into the aggregate. Returns 0, or -1 when
 * rec alone (with a full aggregate) is longer than max, has a ';' or no
 * "step@host:" prefix, or out is too small for the foreign text plus the
 * block.
 */
int mc_jobrec_merge(const char *cur, const char *rec, char *out,
		    size_t outlen, size_t max);

/* Does text hold rec (as one of its records), exactly or with its timeline
 * cut for the bound (a merge that kept it and its figures)? */
bool mc_jobrec_has(const char *text, const char *rec);

/*
 * The records of text, in order: recs[i] points into text, lens[i] long
 * (no NUL). Returns how many (at most max); agg (NULL: not wanted) gets
 * the aggregate, all zero when there is none. text without memcore's
 * block: 0.
 */
size_t mc_jobrec_split(const char *text, const char **recs, size_t *lens,
		       size_t max, struct mc_jobrec_agg *agg);

/* memcore's block in text (from MC_JOBREC_TAG to the end), NULL when
 * text (NULL: none) holds none. */
const char *mc_jobrec_block(const char *text);

/*
 * Of a job's AdminComment and SystemComment (slurmdbd's; NULL: none),
 * the one that holds memcore's records: admin when it has them, else
 * system when it has them (the copy the job epilog leaves there,
 * spank/mc_keepdbd.c: jobstats' slurmctld epilog replaces the whole
 * AdminComment after the job), else admin. *from_system (NULL: not
 * wanted) says which.
 */
const char *mc_jobrec_pick(const char *admin, const char *system,
			   bool *from_system);

/*
 * Can text go into slurmdbd as it is? slurmdbd puts a job's comments
 * into its SQL between single quotes without escaping them
 * (as_mysql_modify_job, Slurm 22.05-26.05): printable ASCII only, no
 * quote of any kind and no backslash. memcore's records never hold one.
 */
bool mc_jobrec_sql_safe(const char *text);

#endif
