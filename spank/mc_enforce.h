/*
 * mc_enforce.h - what slurmstepd remembers about a step's memory cgroup
 * between hooks (mc_enforce.c). Filled in slurm_spank_user_init, before
 * slurmstepd forks the tasks, so every task process starts with a copy;
 * task_exit and exit run in slurmstepd itself and see the original.
 */
#ifndef MC_ENFORCE_H
#define MC_ENFORCE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include <slurm/spank.h>

#include "mc_cgroup.h"
#include "mc_config.h"
#include "mc_step.h"

struct mc_enforce {
	bool active;		/* memcore limits and watches this step */
	bool own;		/* memcore's own cgroup, not Slurm's step's */
	bool explained;		/* the OOM explanation was printed */
	bool stepd_inside;	/* slurmstepd shares a limit with the step
				 * (v1: the step's; v2: the job's) */
	/* own, in slurmstepd (task_post_fork on): made by this slurmstepd,
	 * removed again, or not to be made (a warning was given). */
	bool made, removed, failed;
	bool refused;		/* own: every run's name held (mc_owncg.h):
				 * the step's tasks are ended, never run
				 * unlimited */
	int lock_fd;		/* own: the lock on it while made, or -1 */
	char refusal[640];	/* refused: said at the first task_exit,
				 * where it reaches srun */
	char token[16];		/* own: the step id or "batch" */
	uint32_t job_id;	/* own: for its name */
	/* The cgroups, each with its hierarchy (mc_cgroup.h): the step's,
	 * where no write leaves it (own: set when it is made); own, the
	 * cgroup it is made in (the job's, top/job_name). */
	struct mc_cgroup scope, parent;
	char name[64];		/* own: memcore_<job>_<step>[_<run>] */
	/* own: the job's cgroup, memcore_<job> in top, limited to the job's
	 * allocation (mc_owncg.h); held shared by this step while it runs,
	 * removed by the last step (or the job epilog). */
	struct mc_cgroup top;
	char job_name[32];
	int job_lock_fd;	/* the hold, or -1 */
	uint64_t job_limit_bytes;	/* S_JOB_ALLOC_MEM; 0: none known */
	uint64_t limit_bytes;	/* the step's allocation on this node */
	uint64_t oom_start;	/* OOM kills in scope when the step began */
	uint32_t local_tasks, exited;
	char step_name[48];	/* "12.0", "12.batch" */
	uint32_t uid;		/* the job's user: whose tmpfs the OOM
				 * explanation names (mc_tmpfs.h) */
	char mem_source[96];	/* "--mem=256M", ... */
	/* A problem found in user_init, where nothing reaches the user:
	 * local task 0 prints it in task_init_privileged. */
	char warning[640];
};

/*
 * The hooks, in the order slurmstepd runs them (spank/memcore.c calls
 * each). None fails the step: a problem is one warning on task 0's
 * stderr, and the step runs as Slurm set it up.
 */

/* slurmd start: remove the empty memcore_* cgroups that ended steps left
 * where slurmstepd makes them (a process had outlived its step). */
void mc_enforce_slurmd_sweep(void);

/* user_init (slurmstepd, as the user, before the tasks fork): the step's
 * memory cgroup for step s, when its decision d (mc_decision.h) holds it
 * to a limit (d->enforce, d->limit_bytes; otherwise nothing is set up and
 * every later hook does nothing): Slurm's, or memcore's own to make at
 * task_post_fork. */
void mc_enforce_user_init(struct mc_enforce *e, const struct mc_step *s,
			  const struct mc_decision *d, spank_t sp);

/* task_init_privileged (each task, root, before exec) of a step the
 * decision holds to its limit: tighten Slurm's limit, protect
 * slurmstepd. */
void mc_enforce_task_init_privileged(struct mc_enforce *e, int task_id);

/* task_post_fork (slurmstepd, root, after each task's fork, before it may
 * exec): make memcore's own cgroup (first task) and move the task into
 * it. Always 0. */
int mc_enforce_task_post_fork(struct mc_enforce *e, spank_t sp);

/* task_exit (slurmstepd, after each task): explain an OOM kill; after the
 * last task the --memcore=explain line (explain) and memcore's own cgroup
 * removed. Always 0. */
int mc_enforce_task_exit(struct mc_enforce *e, bool explain, spank_t sp);

/* exit (slurmstepd, root): memcore's own cgroup when a process was still
 * leaving it at the last task_exit. Always 0. */
int mc_enforce_exit(struct mc_enforce *e);

/* Job epilog (root, slurmd's child): remove job job_id's own cgroup
 * where slurmstepd makes it, once no step holds it and it is empty. */
void mc_enforce_job_epilog(uint32_t job_id);

/* Does this process hold CAP_SYS_RESOURCE (to give slurmstepd back its
 * oom_score_adj of -1000)? */
bool mc_cap_sys_resource(void);

#endif
