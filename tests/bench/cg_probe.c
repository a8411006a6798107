/*
 * cg_probe.c - what memcore's own cgroup costs a step launch, call by
 * call, without Slurm: the calls mc_enforce_task_post_fork makes for the
 * first task (find the task's cgroup, where the own one goes, sweep, mkdir,
 * limit, swap off, move the task in) and the removal at the end, each
 * timed, on this machine's memory hierarchy (v1 or v2), as root.
 *
 *   cg_probe [ROUNDS [PAUSE_MS]]     (default 9 rounds, 200 ms apart)
 *
 * Each round forks a sleeping child (the "task") in this process's memory
 * cgroup, waits PAUSE_MS (the quiet spell between two step launches),
 * then makes memcore_probe_<pid>_<round> where memcore would and moves the
 * child in; a second child is moved in right after, to tell the first
 * move's wait from the move itself. Prints name=value lines: the median
 * microseconds of each call, then every sample. On v2 the parent needs
 * "memory" in its cgroup.subtree_control (a guest's root has it once
 * Slurm's cgroup/v2 ran; the probe adds it where it can).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mc_cgroup.h"
#include "mc_owncg.h"
#include "mc_stepcg.h"

enum { C_FIND, C_PARENT, C_READY, C_SWEEP, C_MKDIR, C_LIMIT, C_MOVE,
       C_MOVE2, C_RMDIR, C_TOTAL, C_COUNT };
static const char *const names[C_COUNT] = {
	"find_task_cgroup", "own_parent", "own_ready", "sweep", "mkdir",
	"constrain", "move_first", "move_second", "rmdir",
	"post_fork_total",
};

#define MAX_ROUNDS 64

static long now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000L + t.tv_nsec / 1000;
}

static pid_t sleeper(void)
{
	pid_t p = fork();

	if (p == 0) {
		pause();
		_exit(0);
	}
	return p;
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 9;
	int pause_ms = argc > 2 ? atoi(argv[2]) : 200;
	static long t[C_COUNT][MAX_ROUNDS];
	char err[512], name[64];
	struct mc_cgroup self, parent, scope;
	int lock = -1;

	if (rounds < 1 || rounds > MAX_ROUNDS || pause_ms < 0) {
		fprintf(stderr, "usage: cg_probe [ROUNDS (1-%d) [PAUSE_MS]]\n",
			MAX_ROUNDS);
		return 2;
	}
	if (mc_cgroup_find(NULL, 0, &self, err, sizeof(err)) < 0) {
		fprintf(stderr, "cg_probe: %s\n", err);
		return 1;
	}
	printf("cgroup_version=%d\ncgroup=%s\npause_ms=%d\n", self.ops->version,
	       self.dir, pause_ms);
	for (int r = 0; r < rounds; r++) {
		struct mc_cgroup task;
		pid_t a = sleeper(), b = sleeper();
		long t0, t1, start;
		struct timespec ts = { pause_ms / 1000,
				       (pause_ms % 1000) * 1000000L };
		int rc = 0;

		nanosleep(&ts, NULL);
		snprintf(name, sizeof(name), "memcore_probe_%d_%d",
			 (int)getpid(), r);
#define STEP(c, expr) do { t0 = now_us(); rc = (expr); t1 = now_us(); \
		t[c][r] = t1 - t0; if (rc < 0) goto fail; } while (0)
		start = now_us();
		STEP(C_FIND, mc_cgroup_find(NULL, a, &task, err, sizeof(err)));
		if (mc_cgroup_has(&task, MC_CG_LEAF_PROCS) && !strcmp(mc_cgroup_rel(&task), "/"))
			/* A shell at the v2 root: the probe's own cgroups go
			 * in the root itself. */
			STEP(C_PARENT, (parent = task, 0));
		else
			STEP(C_PARENT, mc_stepcg_own_parent(&task, &parent,
							    err, sizeof(err)));
		t0 = now_us();
		rc = mc_stepcg_own_ready(&parent, err, sizeof(err));
		if (rc < 0) {
			mc_cgroup_write(parent.dir, "cgroup.subtree_control",
					"+memory", err, sizeof(err));
			rc = mc_stepcg_own_ready(&parent, err, sizeof(err));
		}
		t[C_READY][r] = now_us() - t0;
		if (rc < 0)
			goto fail;
		STEP(C_SWEEP, (mc_owncg_sweep(&parent, name), 0));
		/* as memcore makes it: mkdir, then the lock that marks it
		 * held (mc_owncg_make) */
		STEP(C_MKDIR, mc_owncg_make(&parent, name, &lock, err,
					    sizeof(err)));
		if (mc_cgroup_child(&parent, name, &scope) < 0)
			goto fail;
		/* The limit and swap off, as memcore sets them on its own
		 * cgroup: one call. */
		STEP(C_LIMIT, mc_stepcg_constrain(&scope, &(struct mc_cg_limits){
					MC_CG_MEM_SET, (uint64_t)1 << 30,
					MC_CG_SWAP_OFF_NEW }, NULL, err,
				sizeof(err)));
		STEP(C_MOVE, mc_cgroup_attach(&scope, a, err, sizeof(err)));
		t[C_TOTAL][r] = now_us() - start;
		STEP(C_MOVE2, mc_cgroup_attach(&scope, b, err, sizeof(err)));
		kill(a, SIGKILL);
		kill(b, SIGKILL);
		waitpid(a, NULL, 0);
		waitpid(b, NULL, 0);
		/* As at task_exit: the tasks are reaped, the cgroup goes
		 * (a retry while the kernel still counts the exited tasks). */
		t0 = now_us();
		for (int i = 0; i < 200; i++) {
			if (mc_cgroup_rmdir(parent.dir, name, err,
					    sizeof(err)) == 0)
				break;
			usleep(50);
		}
		t[C_RMDIR][r] = now_us() - t0;
		if (lock >= 0)
			close(lock);
		lock = -1;
		continue;
fail:
		fprintf(stderr, "cg_probe: round %d: %s\n", r, err);
		kill(a, SIGKILL);
		kill(b, SIGKILL);
		waitpid(a, NULL, 0);
		waitpid(b, NULL, 0);
		mc_cgroup_rmdir(parent.dir, name, err, sizeof(err));
		return 1;
	}
	for (int c = 0; c < C_COUNT; c++) {
		long s[MAX_ROUNDS];

		memcpy(s, t[c], sizeof(long) * (size_t)rounds);
		qsort(s, (size_t)rounds, sizeof(long), cmp_long);
		printf("%s_us=%ld\n", names[c], s[rounds / 2]);
	}
	for (int c = 0; c < C_COUNT; c++) {
		printf("%s_samples=", names[c]);
		for (int r = 0; r < rounds; r++)
			printf("%s%ld", r ? " " : "", t[c][r]);
		printf("\n");
	}
	return 0;
}
