/*
 * mc_thread.h - memcore's helper threads (the sampler, the summary's
 * keeper, the dataset probe), started the one way a library thread in
 * someone else's process must be.
 */
#ifndef MC_THREAD_H
#define MC_THREAD_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * Start fn(arg) in a new thread with every signal blocked: the host
 * process's handlers (srun's, slurmstepd's) keep running in its own
 * threads, never in memcore's. stack: bytes (0: the default); detached:
 * nobody joins it. The caller's signal mask is as it was on return.
 * Returns 0, or pthread_create's error number (nothing started).
 */
int mc_thread_start(pthread_t *t, size_t stack, bool detached,
		    void *(*fn)(void *), void *arg);

/* A condition variable whose timed waits count on CLOCK_MONOTONIC, so
 * that a step of the wall clock moves no deadline. */
void mc_cond_init_monotonic(pthread_cond_t *cv);

#endif
