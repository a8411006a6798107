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
	char token[16];		/* own: the step id or "batch" */
	int version;		/* cgroup v1 or v2 */
	char mount[PATH_MAX];	/* the memory hierarchy's mount point */
	char scope[PATH_MAX];	/* the step's cgroup: no write leaves it
				 * (own: set when it is made) */
	char parent[PATH_MAX];	/* own: the cgroup it is made in */
	char name[64];		/* own: memcore_<job>_<step>[_<run>] */
	uint64_t limit_bytes;	/* the step's allocation on this node */
	uint64_t oom_start;	/* OOM kills in scope when the step began */
	uint32_t local_tasks, exited;
	char step_name[48];	/* "12.0", "12.batch" */
	char mem_source[96];	/* "--mem=256M", ... */
	/* A problem found in user_init, where nothing reaches the user:
	 * local task 0 prints it in task_init_privileged. */
	char warning[640];
};

#endif
