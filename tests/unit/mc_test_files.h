/*
 * mc_test_files.h - scratch files for the unit tests: one writer, so that
 * every test that builds a fixture tree (cgroup files, memcore.conf,
 * topology XML) fails the same way when a write does not happen.
 * Header-only (each test is one .c file linked with libmemcore.a); include
 * it after <cmocka.h>.
 */
#ifndef MC_TEST_FILES_H
#define MC_TEST_FILES_H

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* Write len bytes of buf to path, created or truncated; a failed open,
 * short write or failed close fails the test. */
static inline void mc_test_write(const char *path, const void *buf,
				 size_t len)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* Write the NUL-terminated text to path. */
static inline void mc_test_write_text(const char *path, const char *text)
{
	mc_test_write(path, text, strlen(text));
}

/* Write the text to dir/name (a file of a fixture tree). */
static inline void mc_test_put(const char *dir, const char *name,
			       const char *text)
{
	char path[PATH_MAX * 2];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	mc_test_write_text(path, text);
}

#endif
