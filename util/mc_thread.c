/*
 * mc_thread.c - helper threads (mc_thread.h).
 */
#include <signal.h>
#include <time.h>

#include "mc_thread.h"

int mc_thread_start(pthread_t *t, size_t stack, bool detached,
		    void *(*fn)(void *), void *arg)
{
	pthread_attr_t at;
	sigset_t all, old;
	int rc;

	rc = pthread_attr_init(&at);
	if (rc)
		return rc;
	if (stack)
		pthread_attr_setstacksize(&at, stack);
	if (detached)
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(t, &at, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&at);
	return rc;
}

void mc_cond_init_monotonic(pthread_cond_t *cv)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(cv, &ca);
	pthread_condattr_destroy(&ca);
}
