/*
 * test_jobview.c - slurmd's view of a job kept root-only (mc_jobview.h):
 * the directory from the plugstack arguments, a record written and read
 * back, and the records that are not believed (another's, writable by
 * others, a second link, not a record, too long) reading as none; the
 * per-job lock of the records kept with the job.
 */
#define _GNU_SOURCE	/* F_OFD_SETLK, in mc_jobview.c */
#include <errno.h>
#include <time.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "../../spank/mc_jobview.c"

static char dir[64];

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/mc-jobview-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_dir(void **state)
{
	char d[256];
	char *a[] = { "config=/etc/x.conf", "cache=/spool/d/facts" };
	char *none[] = { "cache=none" };

	assert_int_equal(mc_jobview_dir(2, a, "/var/spool/slurmd/f", d,
					sizeof(d)), 0);
	assert_string_equal(d, "/spool/d");
	assert_int_equal(mc_jobview_dir(1, none, "/var/spool/slurmd/f", d,
					sizeof(d)), 0);
	assert_string_equal(d, "/var/spool/slurmd");
	assert_int_equal(mc_jobview_dir(0, NULL, "/f", d, sizeof(d)), 0);
	assert_string_equal(d, "/");
}

static void put(const char *name, const char *text, mode_t mode)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	unlink(p);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	chmod(p, mode);
}

static void test_round_trip(void **state)
{
	char part[64], err[256], p[256], q[256];

	assert_int_equal(mc_jobview_read(dir, 7, part, sizeof(part), err,
					 sizeof(err)), 0);
	assert_string_equal(part, "");
	assert_int_equal(mc_jobview_write(dir, 7, "gpu", err, sizeof(err)),
			 0);
	if (geteuid() != 0)
		skip();		/* records are believed only when root's */
	assert_int_equal(mc_jobview_read(dir, 7, part, sizeof(part), err,
					 sizeof(err)), 1);
	assert_string_equal(part, "gpu");
	/* No name: nothing written. */
	assert_int_equal(mc_jobview_write(dir, 8, "", err, sizeof(err)), -1);
	assert_int_equal(mc_jobview_write(dir, 8, "a b", err, sizeof(err)),
			 -1);
	/* Writable by others: not believed. */
	put("memcore-job-9", "partition=lax\n", 0666);
	assert_int_equal(mc_jobview_read(dir, 9, part, sizeof(part), err,
					 sizeof(err)), -1);
	assert_string_equal(part, "");
	/* Not a record. */
	put("memcore-job-9", "partition=lax", 0600);
	assert_int_equal(mc_jobview_read(dir, 9, part, sizeof(part), err,
					 sizeof(err)), -1);
	/* Longer than the caller takes. */
	put("memcore-job-9", "partition=abcdefghijklmnop\n", 0600);
	assert_int_equal(mc_jobview_read(dir, 9, part, 8, err, sizeof(err)),
			 -1);
	assert_string_equal(part, "");
	/* A second link. */
	snprintf(p, sizeof(p), "%s/memcore-job-7", dir);
	snprintf(q, sizeof(q), "%s/other", dir);
	assert_int_equal(link(p, q), 0);
	assert_int_equal(mc_jobview_read(dir, 7, part, sizeof(part), err,
					 sizeof(err)), -1);
	unlink(q);
	mc_jobview_remove(dir, 7);
	assert_int_equal(mc_jobview_read(dir, 7, part, sizeof(part), err,
					 sizeof(err)), 0);
}

static long ms_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long)t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

/* One holder per job at a time, jobs apart; the file root's only; a file
 * others could open is not a lock. */
static void test_lock(void **state)
{
	char err[256], p[128];
	struct stat st;
	int a, b, c;
	long t0;

	(void)state;
	if (geteuid() != 0)
		skip();
	a = mc_jobview_lock(dir, 7, 0, err, sizeof(err));
	assert_true(a >= 0);
	snprintf(p, sizeof(p), "%s/memcore-keep.lock", dir);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(st.st_uid, 0);
	/* The same job: waits, then gives up, saying so. */
	t0 = ms_now();
	assert_int_equal(mc_jobview_lock(dir, 7, 40, err, sizeof(err)), -1);
	assert_int_equal(errno, ETIMEDOUT);
	assert_true(ms_now() - t0 >= 40);
	assert_non_null(strstr(err, "job 7's lock still held after 40 ms"));
	/* Another job (byte 4294967294 too): at once. */
	b = mc_jobview_lock(dir, 8, 0, err, sizeof(err));
	assert_true(b >= 0);
	c = mc_jobview_lock(dir, 4294967294u, 0, err, sizeof(err));
	assert_true(c >= 0);
	close(c);
	/* Let go: the next one gets it. */
	close(a);
	a = mc_jobview_lock(dir, 7, 0, err, sizeof(err));
	assert_true(a >= 0);
	close(a);
	close(b);
	/* A lock file others may open is not believed. */
	assert_int_equal(chmod(p, 0644), 0);
	assert_int_equal(mc_jobview_lock(dir, 7, 0, err, sizeof(err)), -1);
	assert_int_equal(errno, EPERM);
	assert_non_null(strstr(err, "not a regular file of root's that only "
				   "root can open"));
	unlink(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dir),
		cmocka_unit_test_setup_teardown(test_round_trip, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_lock, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
