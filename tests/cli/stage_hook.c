/*
 * stage_hook.c - a test's LD_PRELOAD shim (tests/cli/test_stage_users.sh,
 * tests/integration/test_47_stage_users.sh), never part of memcore: the
 * first pthread_create of the process runs the command MC_TEST_HOOK names,
 * then calls through. memcore stage -q makes its first thread once, after
 * the plan and the directories at DEST and before the first file is
 * copied: the hook is where a test swaps a directory, so that the race an
 * attacker would have to win is won every time.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *,
			 void *(*)(void *), void *);

int pthread_create(pthread_t *t, const pthread_attr_t *a,
		   void *(*fn)(void *), void *arg)
{
	static int ran;
	create_fn real = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
	const char *hook = getenv("MC_TEST_HOOK");

	if (!ran++ && hook && *hook && system(hook) != 0)
		abort();
	return real(t, a, fn, arg);
}
