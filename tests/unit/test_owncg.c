/*
 * test_owncg.c - memcore's own cgroups (cgroup/mc_owncg.h): the names a
 * run takes, the names the sweep may touch, and, on this machine's real
 * memory cgroup hierarchy (root only; skipped elsewhere), that a held or
 * populated cgroup is never taken or removed while an empty, unheld one
 * of memcore's names is, at once, whatever its age.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "mc_cgroup.h"
#include "mc_owncg.h"
#include "mc_test_cg.h"

static char err[1024];

static void test_names(void **state)
{
	char b[64];

	(void)state;
	assert_int_equal(mc_owncg_name(17, "0", 0, b, sizeof(b)), 0);
	assert_string_equal(b, "memcore_17_0");
	assert_int_equal(mc_owncg_name(17, "batch", 0, b, sizeof(b)), 0);
	assert_string_equal(b, "memcore_17_batch");
	assert_int_equal(mc_owncg_name(4294967295u, "4294967294", 15, b,
				       sizeof(b)), 0);
	assert_string_equal(b, "memcore_4294967295_4294967294_15");
	assert_int_equal(mc_owncg_name(17, "3", 2, b, sizeof(b)), 0);
	assert_string_equal(b, "memcore_17_3_2");
	/* out of range, malformed step, short buffer */
	assert_int_equal(mc_owncg_name(17, "0", MC_OWNCG_RUNS, b, sizeof(b)),
			 -1);
	assert_int_equal(mc_owncg_name(17, "x", 0, b, sizeof(b)), -1);
	assert_int_equal(mc_owncg_name(17, "0/..", 0, b, sizeof(b)), -1);
	assert_int_equal(mc_owncg_name(17, "", 0, b, sizeof(b)), -1);
	assert_int_equal(mc_owncg_name(17, "0", 0, b, 8), -1);
	/* Every name made is one the sweep knows. */
	for (unsigned r = 0; r < MC_OWNCG_RUNS; r++) {
		assert_int_equal(mc_owncg_name(123, "batch", r, b, sizeof(b)),
				 0);
		assert_true(mc_owncg_name_match(b));
		assert_int_equal(mc_owncg_name(123, "45", r, b, sizeof(b)), 0);
		assert_true(mc_owncg_name_match(b));
	}
}

static void test_match(void **state)
{
	static const char *const no[] = {
		"memcore_", "memcore_admin", "memcore_1", "memcore_1_",
		"memcore__0", "memcore_x_0", "memcore_1_x", "memcore_01_0",
		"memcore_1_00", "memcore_1_batch_", "memcore_1_batchx",
		"memcore_1_0_0", "memcore_1_0_16", "memcore_1_0_01",
		"memcore_1_0_1_1", "memcore_1_0x", "memcore_4294967296_0",
		"memcore_1_4294967296", "memcore_12345678901_0", "Memcore_1_0",
		"memcore_1_0 ", "memcore_-1_0", "memcore_+1_0", "xmemcore_1_0",
		"memcore_1_batch_0", "memcore_1_0_x",
	};
	static const char *const yes[] = {
		"memcore_0_0", "memcore_1_0", "memcore_1_batch",
		"memcore_4294967295_4294967295", "memcore_1_0_1",
		"memcore_1_batch_15", "memcore_77_12_9",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (mc_owncg_name_match(no[i]))
			fail_msg("'%s' matched", no[i]);
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		if (!mc_owncg_name_match(yes[i]))
			fail_msg("'%s' did not match", yes[i]);
}

/* ---- on the real hierarchy ------------------------------------------- */
static char parent[PATH_MAX];
static int version;
static struct mc_cgroup pcg;	/* parent's handle */

static bool exists(const char *name)
{
	char p[PATH_MAX * 2];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", parent, name);
	return stat(p, &st) == 0;
}

static int live_setup(void **state)
{
	struct mc_cgroup cg;
	char mount[PATH_MAX];

	(void)state;
	if (geteuid() != 0 ||
	    mc_cgroup_find(NULL, 0, &cg, err, sizeof(err)) < 0 ||
	    mc_cgroup_mount_of(cg.ops, mount, sizeof(mount), err,
			       sizeof(err)) < 0)
		return 0;
	version = cg.ops->version;
	/* A parent of our own at the hierarchy's root: v2 needs processes
	 * in leaves only, so the test parent holds none. */
	snprintf(parent, sizeof(parent), "%s/mc_test_owncg.%d", mount,
		 (int)getpid());
	if (mkdir(parent, 0755) != 0) {
		parent[0] = '\0';
		return 0;
	}
	pcg = mc_test_cg(parent, version, mount);
	if (mc_cgroup_has(&pcg, MC_CG_LEAF_PROCS)) {
		char p[PATH_MAX * 2];
		int fd;

		snprintf(p, sizeof(p), "%s/cgroup.subtree_control", parent);
		fd = open(p, O_WRONLY);
		if (fd < 0 || write(fd, "+memory", 7) != 7) {
			/* processes may still live in the children */
		}
		if (fd >= 0)
			close(fd);
	}
	return 0;
}

static int live_teardown(void **state)
{
	static const char *const names[] = {
		"memcore_5_0", "memcore_5_0_1", "memcore_admin", "memcore_",
		"memcore_5_batch", "memcore_6_0",
		"memcore_7", "memcore_8",
	};

	(void)state;
	if (!parent[0])
		return 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		mc_cgroup_rmdir(parent, names[i], err, sizeof(err));
	rmdir(parent);
	return 0;
}

static void test_live_lock_and_sweep(void **state)
{
	int fd, fd2;

	(void)state;
	if (!parent[0])
		skip();
	/* Made and held: a second make (another step) finds it taken, a
	 * sweep leaves it, though it is empty and only just made. */
	assert_int_equal(mc_owncg_make(&pcg, "memcore_5_0", &fd,
				       err, sizeof(err)), 0);
	assert_true(fd >= 0);
	assert_int_equal(mc_owncg_make(&pcg, "memcore_5_0", &fd2,
				       err, sizeof(err)), MC_OWNCG_TAKEN);
	assert_int_equal(fd2, -1);
	assert_int_equal(mc_owncg_sweep(&pcg, NULL), 0);
	assert_true(exists("memcore_5_0"));
	/* Names that are not memcore's own, empty and unheld: never. */
	assert_int_equal(mc_cgroup_mkdir(parent, "memcore_admin", err,
					 sizeof(err)), 0);
	assert_int_equal(mc_cgroup_mkdir(parent, "memcore_", err,
					 sizeof(err)), 0);
	/* A leftover of an ended step (unheld, empty), a second old: gone
	 * at the first sweep, no age asked. */
	assert_int_equal(mc_cgroup_mkdir(parent, "memcore_5_batch", err,
					 sizeof(err)), 0);
	assert_int_equal(mc_owncg_sweep(&pcg, NULL), 1);
	assert_false(exists("memcore_5_batch"));
	assert_true(exists("memcore_admin"));
	assert_true(exists("memcore_"));
	assert_true(exists("memcore_5_0"));
	/* Released (slurmstepd ended): the next sweep removes it. */
	close(fd);
	assert_int_equal(mc_owncg_sweep(&pcg, "memcore_6_0"), 1);
	assert_false(exists("memcore_5_0"));
	assert_true(exists("memcore_admin"));
}

/* The job level (mc_owncg.h): memcore_<job> and nothing else is a job
 * cgroup's name. */
static void test_job_names(void **state)
{
	static const char *const no[] = {
		"memcore_", "memcore_01", "memcore_1_0", "memcore_admin",
		"memcore_4294967296", "memcore_1x", "Memcore_1",
	};
	char b[32];

	(void)state;
	assert_int_equal(mc_owncg_job_name(17, b, sizeof(b)), 0);
	assert_string_equal(b, "memcore_17");
	assert_int_equal(mc_owncg_job_name(17, b, 5), -1);
	assert_true(mc_owncg_job_name_match("memcore_17"));
	assert_true(mc_owncg_job_name_match("memcore_4294967295"));
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (mc_owncg_job_name_match(no[i]))
			fail_msg("'%s' taken for a job cgroup's name", no[i]);
}

/* Two steps hold the job's cgroup: the first to leave keeps it, the last
 * removes it with its empty step leftovers; a sweep takes an unheld one. */
static void test_live_job(void **state)
{
	int a, b, fd;
	bool made;
	char job[PATH_MAX * 2];

	(void)state;
	if (!parent[0])
		skip();
	assert_int_equal(mc_owncg_job_join(&pcg, "memcore_7", &a, &made,
					   err, sizeof(err)), 0);
	assert_true(made);
	assert_int_equal(mc_owncg_job_join(&pcg, "memcore_7", &b, &made,
					   err, sizeof(err)), 0);
	assert_false(made);
	snprintf(job, sizeof(job), "%s/memcore_7", parent);
	assert_int_equal(mc_owncg_make(MC_TEST_CG(job, version, NULL), "memcore_7_0", &fd, err,
				       sizeof(err)), 0);
	close(fd);	/* its step ended; the cgroup is a leftover */
	assert_int_equal(mc_owncg_sweep(&pcg, NULL), 0);
	assert_int_equal(mc_owncg_job_leave(&pcg, "memcore_7", a),
			 0);
	assert_true(exists("memcore_7"));
	assert_int_equal(mc_owncg_job_leave(&pcg, "memcore_7", b),
			 1);
	assert_false(exists("memcore_7"));
	/* Unheld (the epilog's case, or a sweep): removed. */
	assert_int_equal(mc_cgroup_mkdir(parent, "memcore_8", err,
					 sizeof(err)), 0);
	assert_int_equal(mc_owncg_sweep(&pcg, NULL), 1);
	assert_false(exists("memcore_8"));
	assert_int_equal(mc_owncg_job_leave(&pcg, "memcore_8", -1),
			 1);
}

static void test_live_populated(void **state)
{
	char child[PATH_MAX * 2], pid[32];
	int fd, fd2, st;
	pid_t p;

	(void)state;
	if (!parent[0])
		skip();
	/* An empty, unheld leftover of the name: made afresh. */
	assert_int_equal(mc_cgroup_mkdir(parent, "memcore_6_0", err,
					 sizeof(err)), 0);
	assert_int_equal(mc_owncg_make(&pcg, "memcore_6_0", &fd,
				       err, sizeof(err)), 0);
	/* A process in it (escaped from an earlier run), its lock gone
	 * with that run's slurmstepd: still taken, never removed. */
	p = fork();
	assert_true(p >= 0);
	if (p == 0) {
		pause();
		_exit(0);
	}
	snprintf(child, sizeof(child), "%s/memcore_6_0", parent);
	snprintf(pid, sizeof(pid), "%d", (int)p);
	assert_int_equal(mc_cgroup_write(child, "cgroup.procs", pid, err,
					 sizeof(err)), 0);
	close(fd);
	assert_int_equal(mc_owncg_make(&pcg, "memcore_6_0", &fd2,
				       err, sizeof(err)), MC_OWNCG_TAKEN);
	assert_int_equal(mc_owncg_sweep(&pcg, NULL), 0);
	assert_true(exists("memcore_6_0"));
	/* The next run's name is free. */
	assert_int_equal(mc_owncg_make(&pcg, "memcore_5_0_1",
				       &fd2, err, sizeof(err)), 0);
	close(fd2);
	kill(p, SIGKILL);
	waitpid(p, &st, 0);
	for (int i = 0; i < 100 && mc_cgroup_populated(child, mc_cgroup_ops_of(version)); i++)
		usleep(10000);
	assert_int_equal(mc_owncg_sweep(&pcg, NULL), 2);
	assert_false(exists("memcore_6_0"));
	assert_false(exists("memcore_5_0_1"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_job_names),
	};
	const struct CMUnitTest live[] = {
		cmocka_unit_test(test_live_lock_and_sweep),
		cmocka_unit_test(test_live_populated),
		cmocka_unit_test(test_live_job),
	};
	int fails = cmocka_run_group_tests_name("owncg", tests, NULL, NULL);

	fails += cmocka_run_group_tests_name("owncg on the live hierarchy",
					     live, live_setup, live_teardown);
	return fails ? 1 : 0;
}
