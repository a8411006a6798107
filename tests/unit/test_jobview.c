/*
 * test_jobview.c - slurmd's view of a job kept root-only (mc_jobview.h):
 * the directory from the plugstack arguments, a record written and read
 * back, and the records that are not believed (another's, writable by
 * others, a second link, not a record, too long) reading as none.
 */
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dir),
		cmocka_unit_test_setup_teardown(test_round_trip, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
