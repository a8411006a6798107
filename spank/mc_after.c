/*
 * mc_after.c - the step's use, sampled while it runs and summarised at its
 * end, in slurmstepd (mc_after.h).
 *
 * Where each part runs:
 *  - task_post_fork (slurmstepd, root), first task: the step's memory
 *    cgroup is known by then (memcore's own is made at this hook, just
 *    before): the sampler thread starts;
 *  - task_exit (slurmstepd), last task, before mc_enforce_task_exit
 *    removes memcore's own cgroup: the sampler stops, the kernel's
 *    counters are read, the summary goes to task 0's stderr (when asked)
 *    and to slurmd's log;
 *    and the record kept with the job is written (mc_keep.c), waited
 *    for before slurmstepd tells srun that the tasks ended;
 *  - exit: the sampler again, should no task_exit have been the last, the
 *    record's thread is waited for, and the step is counted in the
 *    PrometheusTextfile (mc_textfile.c), refused steps too.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "mc_memstat.h"
#include "mc_plugin.h"
#include "mc_textfile.h"
#include "mc_keep.h"
#include "mc_livegauges.h"
#include "mc_after.h"
#include "mc_cgread.h"
#include "mc_tmpfs.h"
#include "mc_log.h"

void mc_after_task_post_fork(struct mc_plugin *p, spank_t sp)
{
	struct mc_after *a = &p->after;
	const struct mc_enforce *e = &p->enf;
	char err[MC_ERR_MAX];

	if (a->clock_started || !a->judged || a->refused || !e->active ||
	    !e->scope.dir[0])
		return;
	/* Wall and CPU time from the first task, sampled or not. */
	a->clock_started = true;
	clock_gettime(CLOCK_MONOTONIC, &a->t_start);
	getrusage(RUSAGE_CHILDREN, &a->children_start);
	/* Cumulative counters: the step's share is what they gain from
	 * here (memcore's own cgroup is new, Slurm's step cgroup has held
	 * slurmstepd since before the tasks). */
	mc_cgread_squeeze_read(&e->scope, &a->squeeze_start);
	if (!a->sample_interval_ms)
		return;
	if (mc_sampler_start(&a->sampler, &e->scope, a->sample_interval_ms,
			     err, sizeof(err)) < 0)
		mc_log_info("memcore: job %s: the step runs unsampled: %s",
			    e->step_name, err);
	mc_livegauges_start(p);	/* the live gauges, from the sampler */
}

/* The page cache squeeze over the step: the counters' gains since the
 * first task, each only where it was read at both ends (mc_cgread.h). */
static void squeeze_end(struct mc_after *a, const struct mc_enforce *e)
{
	const struct mc_squeeze *s0 = &a->squeeze_start;
	struct mc_squeeze s1;
	struct mc_used *u = &a->usage;
	long page = sysconf(_SC_PAGESIZE);

	mc_cgread_squeeze_read(&e->scope, &s1);
	u->squeeze = MC_SQUEEZE_MEASURED;
	if (s0->has_refault && s1.has_refault && page > 0 &&
	    s1.refault_file_pages >= s0->refault_file_pages) {
		u->squeeze |= MC_SQUEEZE_REFAULT;
		u->refault_file_bytes = (s1.refault_file_pages -
					 s0->refault_file_pages) *
					(uint64_t)page;
	}
	if (s0->psi == MC_PSI_READ && s1.psi == MC_PSI_READ &&
	    s1.some_usec >= s0->some_usec) {
		u->squeeze |= MC_SQUEEZE_STALL;
		u->stall_usec = s1.some_usec - s0->some_usec;
	} else if (s0->psi == MC_PSI_OFF || s1.psi == MC_PSI_OFF) {
		u->squeeze |= MC_SQUEEZE_PSI_OFF;
	}
}

/* Stop the sampler, read the kernel's counters: usage and advice done. */
static void finish(struct mc_plugin *p)
{
	struct mc_after *a = &p->after;
	const struct mc_enforce *e = &p->enf;
	struct mc_cgread_end end;
	char err[MC_ERR_MAX];

	if (a->summarized)
		return;
	a->summarized = true;
	mc_sampler_stop(&a->sampler, &a->usage.peak, &a->usage.cpu_usec,
			&a->usage.wall_usec);
	mc_livegauges_stop(p);
	if (!a->sampler.started && a->clock_started) {
		struct timespec now;
		struct rusage ru;

		clock_gettime(CLOCK_MONOTONIC, &now);
		getrusage(RUSAGE_CHILDREN, &ru);
		a->usage.wall_usec = (uint64_t)(now.tv_sec - a->t_start.tv_sec)
				     * 1000000ULL +
				     (uint64_t)(now.tv_nsec -
						a->t_start.tv_nsec) / 1000;
		a->usage.cpu_usec =
			(uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec -
				   a->children_start.ru_utime.tv_sec -
				   a->children_start.ru_stime.tv_sec) *
			1000000ULL +
			(uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec -
				   a->children_start.ru_utime.tv_usec -
				   a->children_start.ru_stime.tv_usec);
	}
	/* The hierarchy goes into the record even where nothing was read
	 * (mc_cgread_end_read). */
	if (mc_cgread_end_read(&e->scope, &end, err, sizeof(err)) == 0) {
		a->usage.kernel_peak_bytes = end.kernel_peak_bytes;
		a->usage.oom_kills = end.oom_kills > e->oom_start
				     ? end.oom_kills - e->oom_start : 0;
		a->usage.high_events = end.high_events;
		a->usage.max_events = end.max_events;
	}
	a->usage.cgroup_version = end.cgroup_version;
	if (e->scope.dir[0] && a->clock_started)
		squeeze_end(a, e);
	if (a->usage.oom_kills) {
		struct mc_memstat m;

		mc_summary_oom_peak(&a->usage,
				    mc_memstat_read(&e->scope, &m, err,
						    sizeof(err)) == 0
				    ? m.shmem_bytes : 0);
	}
	if (a->sampler.started) {
		struct mc_timeline tl;

		mc_sampler_timeline(&a->sampler, &tl);
		if (a->usage.oom_kills)
			mc_timeline_oom_at_end(&tl);
		mc_timeline_encode(&tl, a->usage.timeline,
				   sizeof(a->usage.timeline));
	}
	a->usage.sample_interval_ms = a->sampler.started
				      ? a->sample_interval_ms : 0;
	mc_summary_advise(&a->usage, &a->advice);
	if (a->sampler.started)
		mc_log_debug("memcore: job %s: sampler: %" PRIu64 " samples, "
			     "%" PRIu64 " ns of CPU each, %" PRIu64
			     " unreadable%s", e->step_name,
			     a->usage.peak.samples,
			     a->usage.peak.samples
			     ? a->sampler.own_cpu_ns / a->usage.peak.samples : 0,
			     a->sampler.read_errors,
			     a->sampler.joined ? ""
			     : "; its thread was stuck in a read and is left "
			       "to end with slurmstepd");
}

/* One message, so that srun's own lines cannot land inside it. */
static void say(const struct mc_summary_text *t)
{
	char text[MC_SUMMARY_LINES * (MC_SUMMARY_LINE_MAX + 1)];
	size_t used = 0;

	text[0] = '\0';
	for (size_t i = 0; i < t->n && used < sizeof(text); i++)
		used += (size_t)snprintf(text + used, sizeof(text) - used,
					 "%s%s", i ? "\n" : "", t->line[i]);
	slurm_spank_log("%s", text);
}

void mc_after_task_exit(struct mc_plugin *p, spank_t sp)
{
	struct mc_after *a = &p->after;
	const struct mc_enforce *e = &p->enf;
	struct mc_summary_text t;
	char line[1024], where[160];

	if (!a->judged || a->refused || !e->active)
		return;
	a->exited++;
	if (!e->local_tasks || a->exited < e->local_tasks)
		return;
	finish(p);
	mc_summary_log_line(&a->usage, &a->advice, e->step_name, line,
			    sizeof(line));
	mc_log_info("memcore: %s", line);
	/* Kept with the job while slurmctld still lets it change: started
	 * now, while the job runs, and waited for below, before srun learns
	 * that the tasks ended (mc_keep.c). */
	mc_keep_start(p);
	if ((p->opts.mode & MC_USER_EXPLAIN) || a->report ||
	    a->usage.oom_kills) {
		where[0] = '\0';
		if (a->usage.oom_kills)
			mc_tmpfs_where(p->step.uid, where, sizeof(where));
		mc_summary_explain(&a->usage, &a->advice, e->step_name,
				   p->step.host, where, &t);
		say(&t);
	}
	mc_keep_wait(p, MC_KEEP_TASK_EXIT_WAIT_MS);
}

void mc_after_exit(struct mc_plugin *p, spank_t sp)
{
	struct mc_after *a = &p->after;
	struct mc_peak pk;
	uint64_t cpu, wall;

	/* A step whose last task_exit never came: the thread still ends
	 * here, before slurmstepd does. */
	if (a->sampler.started && !a->sampler.stopped)
		mc_sampler_stop(&a->sampler, &pk, &cpu, &wall);
	mc_livegauges_stop(p);
	if (!mc_keep_wait(p, MC_KEEP_EXIT_WAIT_MS))
		mc_log_info("memcore: job %s: the summary was still on its way "
			    "to slurmctld %u ms after the step's end: slurmstepd "
			    "ends without it; it is in the 'after the step' line "
			    "above only", p->step.step_name,
			    MC_KEEP_TASK_EXIT_WAIT_MS + MC_KEEP_EXIT_WAIT_MS);
	/* Refused steps count too: they end here without a task_exit. */
	if (a->judged)
		mc_textfile_add(p);
}
