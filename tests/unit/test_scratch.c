/*
 * test_scratch.c - the job's staging directory removed at its end
 * (mc_scratch.h): a tree with files, a nested directory and symlinks goes;
 * a symlink inside pointing out is removed, not followed; a job_J that is
 * itself a symlink is left with its target; none is no error.
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

#include "mc_scratch.h"

static char top[64];

static void put(const char *rel, const char *text)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void sub(const char *rel, char *p, size_t len)
{
	snprintf(p, len, "%s/%s", top, rel);
}

static void test_tree(void **state)
{
	char p[256], q[256], err[512];
	struct stat st;

	(void)state;
	sub("scratch/job_7/d/e", p, sizeof(p));
	assert_int_equal(system(strcat(strcpy(q, "mkdir -p "), p)), 0);
	sub("outside", p, sizeof(p));
	assert_int_equal(mkdir(p, 0755), 0);
	put("outside/keep", "keep");
	put("scratch/job_7/a", "a");
	put("scratch/job_7/d/e/b", "b");
	sub("scratch/job_7/d/out", q, sizeof(q));
	assert_int_equal(symlink(p, q), 0);	/* to outside/ */
	/* 5 entries below job_7 (a, d, d/e, d/e/b, d/out) and job_7 */
	sub("scratch", p, sizeof(p));
	assert_int_equal(mc_scratch_remove(p, 7, err, sizeof(err)), 6);
	sub("scratch/job_7", q, sizeof(q));
	assert_int_equal(lstat(q, &st), -1);
	sub("outside/keep", q, sizeof(q));
	assert_int_equal(stat(q, &st), 0);
	/* none: 0, no error */
	assert_int_equal(mc_scratch_remove(p, 7, err, sizeof(err)), 0);
	/* no LocalScratch directory at all: 0 */
	sub("nowhere", q, sizeof(q));
	assert_int_equal(mc_scratch_remove(q, 7, err, sizeof(err)), 0);
}

static void test_symlink_top(void **state)
{
	char p[256], q[256], err[512];
	struct stat st;

	(void)state;
	sub("outside", p, sizeof(p));
	sub("scratch/job_8", q, sizeof(q));
	assert_int_equal(symlink(p, q), 0);
	sub("scratch", p, sizeof(p));
	assert_int_equal(mc_scratch_remove(p, 8, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "job_8: is a symlink, not a directory: "
			       "left as it is"));
	assert_int_equal(lstat(q, &st), 0);
	sub("outside/keep", q, sizeof(q));
	assert_int_equal(stat(q, &st), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree),
		cmocka_unit_test(test_symlink_top),
	};
	char cmd[128];
	int rc;

	snprintf(top, sizeof(top), "/tmp/mc-scratch.XXXXXX");
	if (!mkdtemp(top))
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	if (system(cmd) != 0)
		rc = 1;
	return rc;
}
