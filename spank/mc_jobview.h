/*
 * mc_jobview.h - slurmd's own view of a job on this node, kept where the
 * job's user cannot write it.
 *
 * Why: a fact that chooses a policy, a limit or a label (the partition,
 * which picks memcore.conf's PartitionName= line) must not come from the
 * step's environment: srun, the user's own program, builds it, and a
 * preloaded shim that rewrites SLURM_JOB_PARTITION reaches slurmstepd
 * (seen on Slurm 22.05; `srun --export` and a plain exported variable do
 * not: srun overwrites those). Slurm 22.05, 24.11 and 26.05 give a SPANK
 * plugin no partition item. The environment slurmd builds for the job
 * prolog is slurmd's own: slurm_spank_job_prolog runs there as root
 * (S_CTX_JOB_SCRIPT, "slurmstepd spank prolog"), before any step of the
 * job starts on the node, and writes the record; each step reads it; the
 * job epilog removes it.
 *
 * Verified on Slurm 22.05.8 here: slurm_spank_job_prolog and _epilog run
 * as root with no Prolog= script and without PrologFlags=Alloc (then at
 * the job's first step on the node; slurmd holds the step until the
 * prolog is done), but only when slurmd started with the plugin in its
 * plugstack (slurmd decides at its start whether a SPANK prolog exists).
 * The prolog's SLURM_JOB_PARTITION is the job's partition even when the
 * step's was forged.
 *
 * The record: <dir>/memcore-job-<job id>, one line "partition=<name>",
 * mode 0600, owned by root, written to a temporary file and renamed. A
 * record is believed only when it is a regular file owned by root that
 * nobody else can write, with one link; anything else, or no record (a
 * job that started before memcore was in slurmd's plugstack, a prolog
 * that failed), reads as "no partition": memcore.conf's global policy,
 * never the step's own value.
 */
#ifndef MC_JOBVIEW_H
#define MC_JOBVIEW_H

#include <stddef.h>
#include <stdint.h>

/*
 * The directory of the records: that of the node-facts cache, from the
 * plugstack arguments (`cache=PATH`: its directory; `cache=none` or none:
 * that of default_cache, the cache's default path). slurmd's prolog and
 * slurmstepd read the same arguments, so they agree. Returns 0, or -1
 * when the result does not fit.
 */
int mc_jobview_dir(int ac, char **av, const char *default_cache, char *dir,
		   size_t len);

/*
 * Write job job_id's record into dir (the prolog, root). partition: the
 * job's partition from slurmd's environment; NULL or "" writes none.
 * Returns 0, or -1 with err set ("PATH: reason").
 */
int mc_jobview_write(const char *dir, uint32_t job_id, const char *partition,
		     char *err, size_t errlen);

/*
 * Read job job_id's partition from its record in dir into partition
 * (len bytes). Returns 1 read; 0 no record (partition ""); -1 a record
 * that is not to be believed or does not fit (partition "", err says
 * why).
 */
int mc_jobview_read(const char *dir, uint32_t job_id, char *partition,
		    size_t len, char *err, size_t errlen);

/* Remove job job_id's record from dir (the epilog); none is no error. */
void mc_jobview_remove(const char *dir, uint32_t job_id);

/*
 * Serialise what this node's slurmstepds write into job job_id's record
 * kept with the job (spank/mc_keep.c: read, merge, write at slurmctld,
 * which has no compare-and-set). The lock: an open-file-description
 * write lock (F_OFD_SETLK) on byte job_id of <dir>/memcore-keep.lock,
 * one file for every job, created mode 0600 by root and never removed
 * (nothing to clean up when no epilog runs); per byte, so jobs do not
 * wait for each other; held by the returned descriptor (a thread may
 * hold it) and gone when it is closed or its process ends, however it
 * ends. The file is believed only when it is a regular file of root's
 * that only root can open, with one link (a user who could open it could
 * hold every job's lock). Waits up to wait_ms, trying again after 1, 2, 4 ... 16 ms.
 * Returns the descriptor (close it to unlock), or -1 with err set
 * ("PATH: reason"; errno ETIMEDOUT when another holder kept it wait_ms).
 */
int mc_jobview_lock(const char *dir, uint32_t job_id, unsigned wait_ms,
		    char *err, size_t errlen);

#endif
