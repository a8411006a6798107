/*
 * mc_sampler.c - the step's sampler thread in slurmstepd (mc_sampler.h).
 */
#define _GNU_SOURCE	/* pthread_timedjoin_np */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "mc_sampler.h"
#include "mc_thread.h"

static uint64_t ts_ns(const struct timespec *t)
{
	return (uint64_t)t->tv_sec * 1000000000ULL + (uint64_t)t->tv_nsec;
}

static uint64_t tv_us(const struct timeval *t)
{
	return (uint64_t)t->tv_sec * 1000000ULL + (uint64_t)t->tv_usec;
}

static void call_hook(struct mc_sampler *s, const struct mc_sample *smp)
{
	void (*hook)(void *, const struct mc_sample *);
	void *arg;

	pthread_mutex_lock(&s->mu);
	hook = s->hook;
	arg = s->hook_arg;
	pthread_mutex_unlock(&s->mu);
	if (hook)
		hook(arg, smp);
}

void mc_sampler_set_hook(struct mc_sampler *s,
			 void (*hook)(void *arg, const struct mc_sample *smp),
			 void *arg)
{
	if (!s->started)
		return;
	pthread_mutex_lock(&s->mu);
	s->hook = hook;
	s->hook_arg = arg;
	pthread_mutex_unlock(&s->mu);
}

static void *run(void *arg)
{
	struct mc_sampler *s = arg;
	struct timespec next;

	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;) {
		struct mc_sample smp;
		struct timespec c0, c1;
		bool ok, stop;

		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
		ok = s->read(&s->src, &smp) == 0;	/* no lock held */
		if (ok)
			call_hook(s, &smp);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
		pthread_mutex_lock(&s->mu);
		s->own_cpu_ns += ts_ns(&c1) - ts_ns(&c0);
		if (ok) {
			mc_peak_add(&s->peak, smp.usage_bytes, smp.anon_bytes,
				    smp.shmem_bytes, smp.file_bytes);
			/* at its deadline: the points keep the interval */
			mc_timeline_add(&s->timeline, ts_ns(&next) / 1000,
					smp.non_reclaimable_bytes,
					smp.file_bytes, smp.has_cpu,
					smp.cpu_usec, smp.oom_kills);
			if (smp.has_cpu) {
				if (!s->has_cpu)
					s->cpu_first_usec = smp.cpu_usec;
				s->has_cpu = true;
				s->cpu_last_usec = smp.cpu_usec;
			}
		} else {
			s->read_errors++;
		}
		/* Absolute deadlines: the interval does not drift with the
		 * time a sample takes. */
		next.tv_sec += s->interval_ms / 1000;
		next.tv_nsec += (long)(s->interval_ms % 1000) * 1000000L;
		if (next.tv_nsec >= 1000000000L) {
			next.tv_sec++;
			next.tv_nsec -= 1000000000L;
		}
		while (!s->stop &&
		       pthread_cond_timedwait(&s->cv, &s->mu, &next) == EINTR)
			;
		stop = s->stop;
		pthread_mutex_unlock(&s->mu);
		if (stop)
			return NULL;
	}
}

int mc_sampler_start(struct mc_sampler *s, const struct mc_cgroup *cg,
		     uint32_t interval_ms, char *err, size_t errlen)
{
	return mc_sampler_start_with(s, cg, interval_ms,
				     mc_cgread_read, err, errlen);
}

int mc_sampler_start_with(struct mc_sampler *s, const struct mc_cgroup *cg,
			  uint32_t interval_ms,
			  int (*read)(struct mc_cgread_src *, struct mc_sample *),
			  char *err, size_t errlen)
{
	int rc;

	memset(s, 0, sizeof(*s));
	if (mc_cgread_open(&s->src, cg, err, errlen) < 0)
		return -1;
	s->interval_ms = interval_ms;
	mc_timeline_init(&s->timeline, interval_ms);
	s->read = read;
	clock_gettime(CLOCK_MONOTONIC, &s->t_start);
	getrusage(RUSAGE_CHILDREN, &s->children_start);
	pthread_mutex_init(&s->mu, NULL);
	mc_cond_init_monotonic(&s->cv);
	rc = mc_thread_start(&s->thread, MC_SAMPLER_STACK, false, run, s);
	if (rc) {
		snprintf(err, errlen, "cannot start the sampler thread: %s",
			 strerror(rc));
		mc_cgread_close(&s->src);
		pthread_cond_destroy(&s->cv);
		pthread_mutex_destroy(&s->mu);
		return -1;
	}
	s->started = true;
	return 0;
}

void mc_sampler_stop(struct mc_sampler *s, struct mc_peak *peak,
		     uint64_t *cpu_usec, uint64_t *wall_usec)
{
	struct timespec now, dl;
	struct rusage ru;

	memset(peak, 0, sizeof(*peak));
	*cpu_usec = *wall_usec = 0;
	if (!s->started)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!s->stopped) {
		s->stopped = true;
		pthread_mutex_lock(&s->mu);
		s->stop = true;
		pthread_cond_signal(&s->cv);
		pthread_mutex_unlock(&s->mu);
		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_nsec += MC_SAMPLER_JOIN_MS * 1000000L;
		dl.tv_sec += dl.tv_nsec / 1000000000L;
		dl.tv_nsec %= 1000000000L;
		if (pthread_timedjoin_np(s->thread, NULL, &dl) == 0) {
			struct mc_sample last;

			s->joined = true;
			/* The CPU time up to the end, not the last sample;
			 * the timeline's last point sees an OOM kill that
			 * ended the step. */
			if (s->read(&s->src, &last) == 0) {
				if (s->has_cpu && last.has_cpu)
					s->cpu_last_usec = last.cpu_usec;
				mc_timeline_add(&s->timeline,
						ts_ns(&now) / 1000,
						last.non_reclaimable_bytes,
						last.file_bytes, last.has_cpu,
						last.cpu_usec, last.oom_kills);
			}
			mc_cgread_close(&s->src);
		} else {
			/* Stuck in a read: left to end with slurmstepd. Its
			 * files stay open for it. */
			pthread_detach(s->thread);
		}
		/* The step's wall time ends here, at its last task. */
		s->wall_usec = (ts_ns(&now) - ts_ns(&s->t_start)) / 1000;
	}
	*wall_usec = s->wall_usec;
	pthread_mutex_lock(&s->mu);
	*peak = s->peak;
	if (s->has_cpu) {
		*cpu_usec = s->cpu_last_usec - s->cpu_first_usec;
	} else {
		getrusage(RUSAGE_CHILDREN, &ru);
		*cpu_usec = tv_us(&ru.ru_utime) + tv_us(&ru.ru_stime) -
			    tv_us(&s->children_start.ru_utime) -
			    tv_us(&s->children_start.ru_stime);
	}
	pthread_mutex_unlock(&s->mu);
}

void mc_sampler_timeline(struct mc_sampler *s, struct mc_timeline *out)
{
	if (!s->started) {
		mc_timeline_init(out, s->interval_ms);
		return;
	}
	pthread_mutex_lock(&s->mu);
	*out = s->timeline;
	pthread_mutex_unlock(&s->mu);
}
