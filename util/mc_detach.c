/*
 * mc_detach.c - mc_run_detached (mc_detach.h).
 */
#include <fcntl.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mc_detach.h"

int mc_run_detached(void (*fn)(void *arg), void *arg)
{
	pid_t pid;
	int st;

	fflush(NULL);	/* nothing buffered is written twice */
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		sigset_t none;
		int null;

		if (setsid() < 0 || fork() != 0)
			_exit(0);
		/* Nothing of the epilog's output stays open: slurmd reads
		 * it to its end. */
		null = open("/dev/null", O_RDWR | O_CLOEXEC);
		for (int i = 0; i < 3; i++)
			if (null < 0 || dup2(null, i) < 0)
				close(i);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		fn(arg);
		_exit(0);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return 0;
}
