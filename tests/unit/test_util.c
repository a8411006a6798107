/*
 * test_util.c - the small helpers every module shares (mc_util.h): the
 * bounded append, the saturating multiplies, the safe opener and its
 * messages, the read/write-all loop and the small-file reader; the text
 * of --json (mc_jsonout.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "mc_jsonout.h"
#include "mc_util.h"

static void test_appendf(void **state)
{
	char buf[8];
	size_t used = 0;

	(void)state;
	assert_int_equal(mc_appendf(buf, sizeof(buf), &used, "%s", "abc"), 0);
	assert_int_equal(used, 3);
	assert_int_equal(mc_appendf(buf, sizeof(buf), &used, "%d", 42), 0);
	assert_string_equal(buf, "abc42");
	/* Cut: what fits stays, terminated; used is len - 1. */
	assert_int_equal(mc_appendf(buf, sizeof(buf), &used, "%s", "xyz"),
			 -1);
	assert_string_equal(buf, "abc42xy");
	assert_int_equal(used, 7);
	/* Full: nothing more, still terminated. */
	assert_int_equal(mc_appendf(buf, sizeof(buf), &used, "q"), -1);
	assert_string_equal(buf, "abc42xy");
	used = 0;
	assert_int_equal(mc_appendf(buf, 0, &used, "q"), -1);
}

static void test_mul_sat(void **state)
{
	(void)state;
	assert_int_equal(mc_mul_sat32(65536, 65535), 4294901760u);
	assert_int_equal(mc_mul_sat32(65536, 65536), UINT32_MAX);
	assert_true(mc_mul_sat64(UINT64_MAX / 2, 2) == UINT64_MAX - 1);
	assert_true(mc_mul_sat64(UINT64_MAX / 2, 3) == UINT64_MAX);
	assert_true(mc_mul_sat64(0, UINT64_MAX) == 0);
}

/* A quoted value stays one line that no terminal acts on. */
static void test_escape(void **state)
{
	char b[32];

	(void)state;
	assert_false(mc_has_ctrl("plain text, \xc3\xa9 too"));
	assert_false(mc_has_ctrl(NULL));
	assert_true(mc_has_ctrl("3\nmemcore: this step fits:"));
	assert_true(mc_has_ctrl("\x1b[31m"));
	assert_true(mc_has_ctrl("a\rb"));
	assert_true(mc_has_ctrl("\x7f"));
	assert_string_equal(mc_escape("3\nx\ry\tz", 0, b, sizeof(b)),
			    "3\\nx\\ry\\tz");
	assert_string_equal(mc_escape("\x1b[31m\x7f\\", 0, b, sizeof(b)),
			    "\\x1b[31m\\x7f\\\\");
	assert_string_equal(mc_escape(NULL, 0, b, sizeof(b)), "");
	/* cut by max or by the buffer: "..." says so, never a half escape */
	assert_string_equal(mc_escape("abcdef", 3, b, sizeof(b)), "abc...");
	assert_string_equal(mc_escape("abcdefgh", 0, b, 8), "abcd...");
	assert_string_equal(mc_escape("abcdefg", 0, b, 8), "abcdefg");
	assert_string_equal(mc_escape("ab\x1b\x1b", 0, b, 8), "ab...");
	assert_string_equal(mc_escape("abc", 0, b, 1), "");
}

/* A whole message made one line (a log line of slurmd): control bytes
 * escaped, a backslash kept, so an mc_escape'd value inside reads the
 * same; cut to the buffer, never a half escape. */
static void test_oneline(void **state)
{
	char b[32];

	(void)state;
	assert_string_equal(mc_oneline("job 5: ds=x\nslurmd: forged", b,
				       sizeof(b)), "job 5: ds=x\\nslurmd: forged");
	assert_string_equal(mc_oneline("a\x1b[31m b\\x1b", b, sizeof(b)),
			    "a\\x1b[31m b\\x1b");
	assert_string_equal(mc_oneline(NULL, b, sizeof(b)), "");
	assert_string_equal(mc_oneline("ab\x1b", b, 5), "ab");
	assert_ptr_equal(mc_oneline("abc", b, 0), b);
}

/* What sh makes of word: the one argument it parses, read back through
 * printf %s (the shell itself is the reference, not our own rules). */
static void sh_parse(const char *word, char *out, size_t len)
{
	char cmd[512];
	FILE *f;
	size_t n;

	snprintf(cmd, sizeof(cmd), "set -- %s; [ $# = 1 ] && printf %%s \"$1\"",
		 word);
	f = popen(cmd, "r");
	assert_non_null(f);
	n = fread(out, 1, len - 1, f);
	out[n] = '\0';
	pclose(f);
}

static void test_shell_word(void **state)
{
	static const char *const paths[] = {
		"/lustre/ds/train", "/data/my dataset", "/d/it's",
		"/d/$HOME/`id`", "/d/a\\b", "/d/*.arrow", "/d/a;rm -rf x",
		"/d/\"q\"", "-x", "/d/a\tb",
	};
	char b[128], back[128];

	(void)state;
	/* safe text stays as it is */
	assert_string_equal(mc_shell_word("/scratch/job_42", b, sizeof(b)),
			    "/scratch/job_42");
	assert_string_equal(mc_shell_word("", b, sizeof(b)), "''");
	assert_string_equal(mc_shell_word("a b", b, sizeof(b)), "'a b'");
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		if (mc_has_ctrl(paths[i]))
			continue;
		mc_shell_word(paths[i], b, sizeof(b));
		sh_parse(b, back, sizeof(back));
		assert_string_equal(back, paths[i]);
	}
	/* a control byte: escaped, the word stays on one line */
	mc_shell_word("/d/a\nb", b, sizeof(b));
	assert_string_equal(b, "'/d/a\\nb'");
	/* does not fit: "", never a word cut open */
	assert_string_equal(mc_shell_word("/d/it's here", b, 8), "");
	assert_string_equal(mc_shell_word("/long/safe/path", b, 8), "");
}

static void test_open_regular(void **state)
{
	char dir[] = "/tmp/mc_util_XXXXXX", path[64], err[256], want[128];
	struct stat st;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/f", dir);
	fd = open(path, O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	assert_int_equal(mc_io_all(fd, "0123456789", 10, true), 0);
	close(fd);
	fd = mc_open_regular("topology", path, 0, 0, &st, err, sizeof(err));
	assert_true(fd >= 0);
	assert_int_equal(st.st_size, 10);
	{
		char b[11] = "";

		assert_int_equal(mc_io_all(fd, b, 10, false), 0);
		assert_string_equal(b, "0123456789");
		/* Past the end: an early end of file is -1. */
		assert_int_equal(mc_io_all(fd, b, 1, false), -1);
	}
	close(fd);
	assert_int_equal(mc_open_regular(NULL, path, 0, 9, NULL, err,
					 sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s: larger than 9 bytes", path);
	assert_string_equal(err, want);
	/* A directory, in each wording its callers print. */
	assert_int_equal(mc_open_regular(NULL, dir, MC_OPEN_SAY_DIR, 0, NULL,
					 err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s: is a directory", dir);
	assert_string_equal(err, want);
	assert_int_equal(mc_open_regular("topology", dir, MC_OPEN_SAY_EISDIR,
					 0, NULL, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "topology %s: Is a directory", dir);
	assert_string_equal(err, want);
	assert_int_equal(mc_open_regular("cache", dir, 0, 0, NULL, err,
					 sizeof(err)), -1);
	snprintf(want, sizeof(want), "cache %s: not a regular file", dir);
	assert_string_equal(err, want);
	/* A link where NOFOLLOW is asked for. */
	snprintf(want, sizeof(want), "%s/l", dir);
	assert_int_equal(symlink(path, want), 0);
	assert_int_equal(mc_open_regular("cache", want, MC_OPEN_NOFOLLOW, 0,
					 NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "symbolic links"));
	fd = mc_open_regular(NULL, want, 0, 0, NULL, err, sizeof(err));
	assert_true(fd >= 0);
	close(fd);
	{
		char b[4];

		/* mc_read_at: at most len - 1 bytes, terminated; the last
		 * component is never followed. */
		assert_int_equal(mc_read_at(AT_FDCWD, path, b, sizeof(b)), 3);
		assert_string_equal(b, "012");
		assert_int_equal(mc_read_at(AT_FDCWD, want, b, sizeof(b)), -1);
	}
	{
		char b[16];

		/* mc_read_fd: from the fd's offset to the end (no error at
		 * an early end, unlike mc_io_all), the fd left open. */
		fd = open(path, O_RDONLY);
		assert_true(fd >= 0);
		assert_int_equal(lseek(fd, 4, SEEK_SET), 4);
		assert_int_equal(mc_read_fd(fd, b, sizeof(b)), 6);
		assert_string_equal(b, "456789");
		assert_int_equal(mc_read_fd(fd, b, sizeof(b)), 0);
		assert_string_equal(b, "");
		assert_int_equal(close(fd), 0);
	}
	unlink(want);
	unlink(path);
	rmdir(dir);
}

/*
 * --json: a uint64_t above 2^63 - 1 written as its digits (under a
 * *_bytes key though json_integer() wrapped it, and through mc_json_u64
 * under any key), a real without binary noise, a string that only looks
 * like the marker left as it is.
 */
/* mc_open_root_dir: what root writes the textfile and gauges into is
 * reached through no link but root's and is root's alone when opened,
 * whoever swapped something in since the policy was checked. */
static void test_open_root_dir(void **state)
{
	char top[] = "/tmp/mc-rootdir-XXXXXX", dir[64], link[64], sub[96];
	int fd;

	(void)state;
	if (geteuid() != 0) {
		skip();
		return;
	}
	assert_non_null(mkdtemp(top));
	snprintf(dir, sizeof(dir), "%s/d", top);
	snprintf(link, sizeof(link), "%s/l", top);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(symlink("d", link), 0);
	fd = mc_open_root_dir(dir);
	assert_true(fd >= 0);
	close(fd);
	/* root's link: followed, as /var/run is */
	fd = mc_open_root_dir(link);
	assert_true(fd >= 0);
	close(fd);
	/* a link of someone else's (swapped in by a daemon's account) */
	assert_int_equal(lchown(link, 103, 103), 0);
	assert_int_equal(mc_open_root_dir(link), -1);
	assert_int_equal(errno, ELOOP);
	snprintf(sub, sizeof(sub), "%s/x", link);
	assert_int_equal(mc_open_root_dir(sub), -1);
	/* the directory opened: another owner's, or writable by others */
	assert_int_equal(chown(dir, 103, 103), 0);
	assert_int_equal(mc_open_root_dir(dir), -1);
	assert_int_equal(errno, EPERM);
	assert_int_equal(chown(dir, 0, 0), 0);
	assert_int_equal(chmod(dir, 0775), 0);
	assert_int_equal(mc_open_root_dir(dir), -1);
	assert_int_equal(errno, EPERM);
	assert_int_equal(mc_open_root_dir("relative"), -1);
	assert_int_equal(errno, EINVAL);
	unlink(link);
	rmdir(dir);
	rmdir(top);
}

static void test_json_dumps(void **state)
{
	json_t *o = json_object(), *a = json_array(), *n = json_object();
	char *text;

	(void)state;
	json_object_set_new(o, "ram_allocated_bytes",
			    json_integer((json_int_t)17592186044416000000ULL));
	json_object_set_new(o, "samples", mc_json_u64(UINT64_MAX));
	json_object_set_new(o, "small", mc_json_u64(5));
	json_object_set_new(o, "cores_busy", json_real(333 / 1000.0));
	json_object_set_new(o, "text", json_string("\001mc-u64:12"));
	json_object_set_new(n, "memory_bytes",
			    json_integer((json_int_t)UINT64_MAX));
	json_array_append_new(a, n);
	json_object_set_new(o, "numa", a);
	text = mc_json_dumps(o);
	assert_non_null(text);
	assert_string_equal(text, "{\n"
		"  \"ram_allocated_bytes\": 17592186044416000000,\n"
		"  \"samples\": 18446744073709551615,\n"
		"  \"small\": 5,\n"
		"  \"cores_busy\": 0.333,\n"
		"  \"text\": \"\\u0001mc-u64:12\",\n"
		"  \"numa\": [\n"
		"    {\n"
		"      \"memory_bytes\": 18446744073709551615\n"
		"    }\n"
		"  ]\n"
		"}");
	free(text);
	json_decref(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_appendf),
		cmocka_unit_test(test_mul_sat),
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_oneline),
		cmocka_unit_test(test_shell_word),
		cmocka_unit_test(test_open_regular),
		cmocka_unit_test(test_open_root_dir),
		cmocka_unit_test(test_json_dumps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
