/*
 * test_scratch.c - the job's staging directory (mc_scratch.h): made for
 * the job after a squatter's job_J (directory, symlink, file) is moved
 * away, never adopted nor followed; a squatted .memcore-removing replaced
 * by one of ours; job_J renamed out of reach at the end and swept (a
 * symlink out of it removed, its target kept; each entry counted and
 * said), in this process or a detached one; a LocalScratch others can
 * write without the sticky bit refused; the mount-id decision; the
 * load-time rule (mc_dir_shared_root), its ownership cases as root.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "mc_scratch.h"
#include "mc_util.h"

static char top[64];
static char said[4][1024];
static int n_said;

static void say(bool problem, const char *line)
{
	(void)problem;
	if (n_said < 4)
		snprintf(said[n_said++], sizeof(said[0]), "%s", line);
}

static void sub(const char *rel, char *p, size_t len)
{
	snprintf(p, len, "%s/%s", top, rel);
}

static void put(const char *rel, const char *text)
{
	char p[256];
	FILE *f;

	sub(rel, p, sizeof(p));
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A shell command, %1$s the test's directory, %2$s arg. */
#define sh(fmt, arg) do {						\
		char cmd_[512];						\
									\
		snprintf(cmd_, sizeof(cmd_), fmt, top, arg);		\
		assert_int_equal(system(cmd_), 0);			\
	} while (0)

/* A fresh sticky scratch (1777, as /scratch is) named rel, opened. */
static void fresh(const char *rel, struct mc_scratch *s)
{
	char p[256], err[512];

	sh("rm -rf '%1$s/%2$s' && mkdir -p '%1$s/outside' && "
	   "echo keep >'%1$s/outside/keep'", rel);
	sub(rel, p, sizeof(p));
	assert_int_equal(mkdir(p, 0700), 0);
	assert_int_equal(chmod(p, 01777), 0);
	assert_int_equal(mc_scratch_open(s, p, err, sizeof(err)), 0);
}

static void assert_kept(void)
{
	char p[256];
	struct stat st;

	sub("outside/keep", p, sizeof(p));
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_size, 5);
}

/* job_J as the prolog leaves it: a directory of uid's, 0700, empty. */
static void assert_made(const char *rel)
{
	char p[256];
	struct stat st;

	sub(rel, p, sizeof(p));
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_equal(st.st_uid, getuid());
	assert_int_equal(st.st_nlink, 2);	/* nothing adopted in it */
}

static void test_squatters(void **state)
{
	struct mc_scratch s;
	char p[256], q[256], note[512];

	(void)state;
	fresh("s1", &s);
	sh("mkdir -m 0777 '%1$s/%2$s/job_7' && touch '%1$s/%2$s/job_7/planted'",
	   "s1");
	sub("outside", p, sizeof(p));
	sub("s1/job_8", q, sizeof(q));
	assert_int_equal(symlink(p, q), 0);
	put("s1/job_9", "a file");
	assert_int_equal(mc_scratch_make(&s, 7, getuid(), getgid(), note,
					 sizeof(note)), 1);
	assert_non_null(strstr(note, "/s1/job_7 was there already (a "
			       "directory of uid "));
	assert_non_null(strstr(note, "mode 0777): moved away, not used"));
	assert_made("s1/job_7");
	assert_int_equal(mc_scratch_make(&s, 8, getuid(), getgid(), note,
					 sizeof(note)), 1);
	assert_non_null(strstr(note, "(a symbolic link of uid "));
	assert_made("s1/job_8");
	assert_int_equal(mc_scratch_make(&s, 9, getuid(), getgid(), note,
					 sizeof(note)), 1);
	assert_non_null(strstr(note, "(a file of uid "));
	assert_made("s1/job_9");
	/* nothing there: made, no note */
	assert_int_equal(mc_scratch_make(&s, 10, getuid(), getgid(), note,
					 sizeof(note)), 0);
	assert_string_equal(note, "");
	assert_made("s1/job_10");
	assert_kept();
	/* the squatters wait in .memcore-removing, then go */
	assert_true(mc_scratch_pending(&s));
	n_said = 0;
	assert_int_equal(mc_scratch_sweep(s.tfd, s.path, say), 4);
	assert_false(mc_scratch_pending(&s));
	assert_int_equal(n_said, 3);
	assert_non_null(strstr(said[0], "memcore: job "));
	assert_non_null(strstr(said[0], ": removed what stood at "));
	assert_kept();
	mc_scratch_close(&s);
	mc_scratch_close(&s);	/* safe twice */
}

static void test_trash_squatted(void **state)
{
	struct mc_scratch s;
	char p[256], q[256], err[512];
	struct stat st;

	(void)state;
	sh("rm -rf '%1$s/%2$s' && mkdir -m 1777 '%1$s/%2$s' && "
	   "mkdir -m 0777 '%1$s/%2$s/.memcore-removing'", "s2");
	put("s2/.memcore-removing/planted", "x");
	sub("s2", p, sizeof(p));
	assert_int_equal(chmod(p, 01777), 0);
	assert_int_equal(mc_scratch_open(&s, p, err, sizeof(err)), 0);
	assert_int_equal(fstat(s.tfd, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_equal(st.st_uid, geteuid());
	/* the squat is inside ours, to be swept, not used */
	assert_true(mc_scratch_pending(&s));
	assert_int_equal(mc_scratch_sweep(s.tfd, s.path, say), 2);
	mc_scratch_close(&s);
	/* a symlink squat is moved, never followed */
	sub("s2/.memcore-removing", q, sizeof(q));
	sh("rm -rf '%1$s/%2$s/.memcore-removing'", "s2");
	sub("outside", err, sizeof(err));
	assert_int_equal(symlink(err, q), 0);
	assert_int_equal(mc_scratch_open(&s, p, err, sizeof(err)), 0);
	assert_int_equal(lstat(q, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(mc_scratch_sweep(s.tfd, s.path, say), 1);
	assert_kept();
	mc_scratch_close(&s);
}

static void test_retire_sweep(void **state)
{
	struct mc_scratch s;
	char p[256], q[256], err[512];
	struct stat st;

	(void)state;
	fresh("s3", &s);
	sh("mkdir -p '%1$s/%2$s/job_5/d/e' && echo a >'%1$s/%2$s/job_5/a' && "
	   "echo b >'%1$s/%2$s/job_5/d/e/b'", "s3");
	sub("outside", p, sizeof(p));
	sub("s3/job_5/d/out", q, sizeof(q));
	assert_int_equal(symlink(p, q), 0);
	assert_int_equal(mc_scratch_retire(&s, 5, err, sizeof(err)), 1);
	sub("s3/job_5", q, sizeof(q));
	assert_int_equal(lstat(q, &st), -1);	/* out of reach at once */
	assert_int_equal(mc_scratch_retire(&s, 5, err, sizeof(err)), 0);
	n_said = 0;
	/* 5 entries below job_5 (a, d, d/e, d/e/b, d/out) and job_5 */
	assert_int_equal(mc_scratch_sweep(s.tfd, s.path, say), 6);
	assert_int_equal(n_said, 1);
	snprintf(p, sizeof(p), "memcore: job 5: removed %s/s3/job_5 (6 "
		 "entries, ", top);
	assert_non_null(strstr(said[0], p));
	assert_non_null(strstr(said[0], " s, out of Slurm's wait)"));
	assert_kept();
	/* a job_J that is a symlink is moved, its target kept */
	sub("outside", p, sizeof(p));
	sub("s3/job_6", q, sizeof(q));
	assert_int_equal(symlink(p, q), 0);
	assert_int_equal(mc_scratch_retire(&s, 6, err, sizeof(err)), 1);
	assert_int_equal(mc_scratch_sweep(s.tfd, s.path, say), 1);
	assert_kept();
	mc_scratch_close(&s);
}

static void test_detached(void **state)
{
	struct mc_scratch s;
	char err[512];
	int i;

	(void)state;
	fresh("s4", &s);
	sh("mkdir -p '%1$s/%2$s/job_4/x' && touch '%1$s/%2$s/job_4/x/y'", "s4");
	assert_int_equal(mc_scratch_retire(&s, 4, err, sizeof(err)), 1);
	assert_int_equal(mc_scratch_sweep_detached(&s, say), 0);
	for (i = 0; i < 500 && mc_scratch_pending(&s); i++)
		usleep(10000);
	assert_false(mc_scratch_pending(&s));
	mc_scratch_close(&s);
}

static void test_open_refused(void **state)
{
	struct mc_scratch s;
	char p[256], err[512];

	(void)state;
	sh("rm -rf '%1$s/%2$s' && mkdir '%1$s/%2$s'", "s5");
	sub("s5", p, sizeof(p));
	assert_int_equal(chmod(p, 0777), 0);
	assert_int_equal(mc_scratch_open(&s, p, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "/s5: not a directory of root's writable "
			       "by root alone or sticky ("));
	assert_non_null(strstr(err, "mode 0777)"));
	sub("nowhere", p, sizeof(p));
	assert_int_equal(mc_scratch_open(&s, p, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "No such file or directory"));
}

static void test_same_mount(void **state)
{
	struct statx a, b;

	(void)state;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a.stx_mask = b.stx_mask = STATX_MNT_ID;
	a.stx_mnt_id = b.stx_mnt_id = 31;
	a.stx_dev_major = b.stx_dev_major = 8;	/* same device */
	assert_true(mc_scratch_same_mount(&a, &b));
	b.stx_mnt_id = 97;	/* a bind mount of the same filesystem */
	assert_false(mc_scratch_same_mount(&a, &b));
	b.stx_mnt_id = 31;
	b.stx_mask = 0;		/* no mount id from this kernel: left */
	assert_false(mc_scratch_same_mount(&a, &b));
}

static void test_shared_dir_rule(void **state)
{
	struct stat st;
	char p[256], q[256], why[512];

	(void)state;
	memset(&st, 0, sizeof(st));
	st.st_mode = S_IFDIR | 01777;
	assert_true(mc_st_shared_dir_ok(&st, 0));
	st.st_mode = S_IFDIR | 0755;
	assert_true(mc_st_shared_dir_ok(&st, 0));
	st.st_mode = S_IFDIR | 0777;
	assert_false(mc_st_shared_dir_ok(&st, 0));
	st.st_mode = S_IFDIR | 0755;
	st.st_uid = 1001;
	assert_false(mc_st_shared_dir_ok(&st, 0));
	assert_int_equal(mc_dir_shared_root("scratch", why, sizeof(why)), -1);
	assert_string_equal(why, "expected an absolute path");
	if (geteuid() != 0)
		return;		/* ownership below needs root */
	sh("rm -rf '%1$s/%2$s' && mkdir -p -m 0755 '%1$s/%2$s/in' && "
	   "chmod 1777 '%1$s/%2$s/in' && chmod 0755 '%1$s/%2$s'", "r");
	sub("r/in/", p, sizeof(p));
	assert_int_equal(mc_dir_shared_root(p, why, sizeof(why)), 0);
	sh("chown 65534 '%1$s/%2$s'", "r");	/* a user's directory above */
	assert_int_equal(mc_dir_shared_root(p, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "is owned by uid 65534, not root"));
	sh("chown 0 '%1$s/%2$s' && chmod 0777 '%1$s/%2$s/in'", "r");
	assert_int_equal(mc_dir_shared_root(p, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "is writable by others than root (mode 0777)"));
	sub("r/link", q, sizeof(q));	/* a user's symlink to it */
	assert_int_equal(symlink(p, q), 0);
	assert_int_equal(lchown(q, 65534, 65534), 0);
	assert_int_equal(mc_dir_shared_root(q, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "is a symbolic link of uid 65534"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_squatters),
		cmocka_unit_test(test_trash_squatted),
		cmocka_unit_test(test_retire_sweep),
		cmocka_unit_test(test_detached),
		cmocka_unit_test(test_open_refused),
		cmocka_unit_test(test_same_mount),
		cmocka_unit_test(test_shared_dir_rule),
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
