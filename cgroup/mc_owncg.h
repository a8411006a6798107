/*
 * mc_owncg.h - memcore's own memory cgroups (where nothing else limits a
 * step: task/none, proctrack/linuxproc): their names, making one that no
 * other run can hold, and removing the ones ended steps left behind.
 *
 * Names: memcore_<job>_<step> for the first run of a step on a node, where
 * <step> is the step id or "batch"; memcore_<job>_<step>_<n>, n from 1 to
 * MC_OWNCG_RUNS - 1, when an earlier run's cgroup of that name is still
 * held. A requeued job (scontrol requeue, a node failure, preemption)
 * keeps its job id and starts its step ids again, and a process the first
 * run left behind (setsid) keeps that run's cgroup populated: the next
 * run's is another name, never the held one, never none. The suffix is
 * memcore's own count, not Slurm's restart count: it takes nothing from
 * the job (SLURM_RESTART_COUNT in its environment is the user's to set),
 * and it also steps past a held name that is no earlier run's.
 *
 * Who may remove what: a step holds flock(LOCK_EX) on its own cgroup's
 * directory from just after mkdir until slurmstepd ends (the descriptor is
 * close-on-exec, never a task's). A sweep removes only a cgroup whose name
 * is one of the above (never memcore_admin, memcore_ or another's), that
 * no step holds and that is empty: no age guess (cgroupfs resets a
 * directory's ctime when it re-instantiates the inode), no window in which
 * a just-made cgroup, empty until its first task moves in, could go.
 *
 * The job level: memcore_<job> in the same place, with the job's
 * allocation on this node as its limit, holds every step cgroup of the
 * job (memcore_<job>/memcore_<job>_<step>[_<run>]), as Slurm's task/cgroup
 * puts job_J above step_S: overlap steps (srun --overlap) each get their
 * step's allocation, and the job's caps them all. Every step holds
 * flock(LOCK_SH) on it while it lives; the last to leave (or the job
 * epilog, or a sweep) removes it when it can take LOCK_EX and it is empty.
 */
#ifndef MC_OWNCG_H
#define MC_OWNCG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mc_cgroup.h"

/* Runs of one step on one node whose cgroups may be held at once; one
 * more is refused (MC_OWNCG_TAKEN from every name). */
#define MC_OWNCG_RUNS 16

/*
 * The name of run `run` (0 .. MC_OWNCG_RUNS - 1) of step `step` ("batch"
 * or the step id in decimal) of job `job` into buf. Returns 0, or -1 when
 * run is out of range, step is not digits or "batch", or buf is too short.
 */
int mc_owncg_name(uint32_t job, const char *step, unsigned run, char *buf,
		  size_t len);

/* Is `name` one of memcore's own cgroup names (mc_owncg_name's form: job
 * and step ids of 1-10 digits, no leading zero, run 1-15)? */
bool mc_owncg_name_match(const char *name);

#define MC_OWNCG_TAKEN 1

/*
 * Make cgroup `name` under parent (exclusively) and lock it for this
 * process: *lock_fd gets the open, locked directory (close it after the
 * rmdir, or let the process end). A cgroup of that name that exists, no
 * step holds and is empty is a leftover of this job id: removed and made
 * afresh.
 * Returns 0; MC_OWNCG_TAKEN when it exists and a step holds it or a
 * process is in it (never joined: try the next run's name); -1 with err
 * set and errno kept (EROFS, EACCES, ENOSPC...) on any other failure.
 */
int mc_owncg_make(const struct mc_cgroup *parent, const char *name,
		  int *lock_fd, char *err, size_t len);

/*
 * Remove the cgroups under parent that mc_owncg_name_match names, other
 * than keep (NULL: none), that no step holds and that are empty; and the
 * job cgroups (mc_owncg_job_name_match) no step holds, with their empty
 * unheld step cgroups, once empty. rmdir only removes empty cgroups, so
 * nothing in use can go. Returns how many were removed.
 */
int mc_owncg_sweep(const struct mc_cgroup *parent, const char *keep);

/* The job cgroup's name, memcore_<job>, into buf: 0, or -1 too short. */
int mc_owncg_job_name(uint32_t job, char *buf, size_t len);

/* Is `name` a job cgroup's name (memcore_<id>, no leading zero)? */
bool mc_owncg_job_name_match(const char *name);

/*
 * Make job cgroup `name` under parent, or join the one there, and hold
 * it for this step: *lock_fd gets it open with flock(LOCK_SH) (close it
 * at the step's end, or let mc_owncg_job_leave do). *made says whether
 * this call made it. Returns 0, or -1 with err set and errno kept.
 */
int mc_owncg_job_join(const struct mc_cgroup *parent, const char *name,
		      int *lock_fd, bool *made, char *err, size_t len);

/*
 * Leave job cgroup `name` under parent and remove it when no other step
 * holds it (LOCK_EX, never waited for) and it is empty, after its empty
 * unheld step cgroups. lock_fd: this step's hold (closed here), or -1
 * (the job epilog, which holds none). Returns 1 removed (or already
 * gone), 0 still held or in use.
 */
int mc_owncg_job_leave(const struct mc_cgroup *parent, const char *name,
		       int lock_fd);

#endif
