/*
 * mc_sampler.h - one thread per step in slurmstepd that samples the step's
 * memory cgroup every SampleInterval.
 *
 * Why a thread and why it is safe there:
 *  - it is started in slurmstepd at the first task_post_fork, once the
 *    step's cgroup is known (memcore's own is made then), and stopped at
 *    the last task_exit (again at exit, should a task_exit be missed);
 *  - it only preads files opened at start into a buffer inside struct
 *    mc_sampler (cgroup/mc_cgread.h): no allocation, no stdio, no lock
 *    but its own, so a fork slurmstepd makes meanwhile copies no lock the
 *    child could need;
 *  - every signal is blocked in it (slurmstepd's handlers run in its own
 *    threads, as before);
 *  - stopping waits MC_SAMPLER_JOIN_MS at most: a cgroup read that hangs
 *    (a stuck kernel) is left behind, detached, and never delays the step's
 *    end; the plugin is linked -z nodelete so that its code stays mapped
 *    for such a thread until slurmstepd exits, which ends every thread. A
 *    kill -9 of slurmstepd ends it with the process; it writes no file.
 */
#ifndef MC_SAMPLER_H
#define MC_SAMPLER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <time.h>

#include "mc_cgread.h"
#include "mc_summary.h"
#include "mc_timeline.h"

#define MC_SAMPLER_JOIN_MS 200
#define MC_SAMPLER_STACK (64 * 1024)

struct mc_sampler {
	bool started;			/* the thread was created */
	bool stopped;			/* mc_sampler_stop ran */
	bool joined;			/* ... and the thread is gone */
	pthread_t thread;
	pthread_mutex_t mu;		/* guards stop and the figures */
	pthread_cond_t cv;
	bool stop;
	uint32_t interval_ms;
	struct mc_cgread_src src;	/* only the thread reads it */
	struct mc_peak peak;
	struct mc_timeline timeline;	/* the samples over time, bounded */
	bool has_cpu;			/* v2 cpu.stat */
	uint64_t cpu_first_usec, cpu_last_usec;
	uint64_t own_cpu_ns;		/* the thread's CPU on its samples */
	uint64_t read_errors;
	struct timespec t_start;	/* CLOCK_MONOTONIC */
	uint64_t wall_usec;		/* start to stop */
	struct rusage children_start;	/* v1: CPU of the reaped tasks */
	/* mc_cgread_read; tests give one that hangs (mc_sampler_start_with) */
	int (*read)(struct mc_cgread_src *src, struct mc_sample *out);
	/* mc_sampler_set_hook's, guarded by mu */
	void (*hook)(void *arg, const struct mc_sample *smp);
	void *hook_arg;
};

/*
 * Start sampling the memory cgroup cg every interval_ms
 * (> 0). Returns 0, or -1 with err set (the cgroup's files cannot be
 * opened, the thread cannot be made): the step runs unsampled.
 */
int mc_sampler_start(struct mc_sampler *s, const struct mc_cgroup *cg,
		     uint32_t interval_ms, char *err, size_t errlen);

/* mc_sampler_start with another reader than mc_cgread_read (tests: one
 * that hangs, as a stuck cgroup read would). */
int mc_sampler_start_with(struct mc_sampler *s, const struct mc_cgroup *cg,
			  uint32_t interval_ms,
			  int (*read)(struct mc_cgread_src *, struct mc_sample *),
			  char *err, size_t errlen);

/*
 * Have the thread call hook(arg, sample) after each sample it read, with
 * no lock held and in its CPU time; NULL: no more calls (one already
 * under way may still finish). The hook obeys the thread's rules above:
 * no allocation, no stdio, no lock. Call after mc_sampler_start.
 */
void mc_sampler_set_hook(struct mc_sampler *s,
			 void (*hook)(void *arg, const struct mc_sample *smp),
			 void *arg);

/*
 * Stop the thread (waiting MC_SAMPLER_JOIN_MS at most) and give its
 * figures: the peaks, the step's CPU time (v2 cpu.stat; else the CPU of
 * slurmstepd's reaped children since the start) and wall time, in us.
 * Safe to call again (the same figures) and when never started (zeros).
 */
void mc_sampler_stop(struct mc_sampler *s, struct mc_peak *peak,
		     uint64_t *cpu_usec, uint64_t *wall_usec);

/*
 * The step's samples over time (mc_timeline.h) into out, with the one
 * mc_sampler_stop took at the end: call it after mc_sampler_stop. Empty
 * (no points) when never started.
 */
void mc_sampler_timeline(struct mc_sampler *s, struct mc_timeline *out);

#endif
