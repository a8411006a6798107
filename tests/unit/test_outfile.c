/*
 * test_outfile.c - cli/mc_outfile.c: memcore report --svg's file is a new
 * file renamed over FILE; a link, a FIFO or another's file planted at FILE
 * (before the check, or between the check and the rename) is refused and
 * left as it was.
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

#include "../../cli/mc_outfile.c"

static char dir[] = "/tmp/mc_outfile_XXXXXX";

static void path_of(const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

static void slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

/* Written, and written again over the caller's own file. */
static void test_write(void **state)
{
	struct mc_outfile o;
	char p[256], why[256], got[64];

	(void)state;
	path_of("a.svg", p, sizeof(p));
	for (int i = 0; i < 2; i++) {
		assert_int_equal(mc_outfile_open(&o, p, why, sizeof(why)), 0);
		fprintf(o.f, "<svg %d/>", i);
		assert_int_equal(mc_outfile_commit(&o, 1, why, sizeof(why)),
				 0);
		slurp(p, got, sizeof(got));
		assert_string_equal(got, i ? "<svg 1/>" : "<svg 0/>");
	}
	/* a failed write leaves the old file and no temporary behind */
	assert_int_equal(mc_outfile_open(&o, p, why, sizeof(why)), 0);
	assert_int_equal(mc_outfile_commit(&o, 0, why, sizeof(why)), -1);
	assert_string_equal(why, "not written");
	slurp(p, got, sizeof(got));
	assert_string_equal(got, "<svg 1/>");
}

/* A link planted after the check: the rename replaces the link, never
 * its target; planted before: refused. */
static void test_planted_link(void **state)
{
	struct mc_outfile o;
	char p[256], t[256], why[256], got[64];
	FILE *f;

	(void)state;
	path_of("target", t, sizeof(t));
	path_of("b.svg", p, sizeof(p));
	f = fopen(t, "w");
	fputs("secret", f);
	fclose(f);
	assert_int_equal(mc_outfile_open(&o, p, why, sizeof(why)), 0);
	assert_int_equal(symlink(t, p), 0);
	fputs("<svg/>", o.f);
	assert_int_equal(mc_outfile_commit(&o, 1, why, sizeof(why)), -1);
	assert_string_equal(why, "a symbolic link: refused, never followed "
			    "(name the file itself)");
	slurp(t, got, sizeof(got));
	assert_string_equal(got, "secret");
	assert_int_equal(mc_outfile_check(p, why, sizeof(why)), -1);
	unlink(p);
	assert_int_equal(mkfifo(p, 0600), 0);
	assert_int_equal(mc_outfile_open(&o, p, why, sizeof(why)), -1);
	assert_string_equal(why, "not a regular file: refused");
	unlink(p);
}

static int teardown(void **state)
{
	char cmd[64];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write),
		cmocka_unit_test(test_planted_link),
	};

	if (!mkdtemp(dir))
		return 1;
	return cmocka_run_group_tests(tests, NULL, teardown);
}
