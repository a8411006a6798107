/*
 * test_tmpfs.c - the node's tmpfs mounts for the OOM explanation
 * (cgroup/mc_tmpfs.h): mountinfo parsing, what is left out, the text.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "mc_tmpfs.h"

#define GIB (1024ULL * 1024 * 1024)

/* A compute node's mountinfo: a tmpfs /tmp next to /dev/shm (mounted
 * twice, the second hides the first), the system's tmpfs, a read-only
 * one, a RAM disk with a space in its name, a user's /run/user. */
static const char MOUNTINFO[] =
	"22 27 0:21 / /proc rw,relatime - proc proc rw\n"
	"24 27 0:6 / /dev rw,relatime - devtmpfs devtmpfs rw,size=123k\n"
	"25 24 0:23 / /dev/shm rw,nosuid,nodev - tmpfs tmpfs rw\n"
	"27 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
	"28 27 0:25 / /run rw,nosuid,nodev shared:5 - tmpfs tmpfs rw,mode=755\n"
	"29 28 0:26 / /run/lock rw,nosuid - tmpfs tmpfs rw,size=5120k\n"
	"30 25 0:27 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=2g\n"
	"31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
	"32 27 0:29 / /tmp rw,nosuid,nodev shared:9 master:2 - tmpfs tmpfs rw\n"
	"33 27 0:30 / /opt/tools ro,relatime - tmpfs tools ro,size=4k\n"
	"34 27 0:31 / /scratch\\040ram rw - ramfs ramfs rw\n"
	"35 28 0:32 / /run/user/1000 rw,nosuid - tmpfs tmpfs rw,uid=1000\n"
	"36 27 0:33 / /data rw - nfs4 srv:/data rw\n"
	"garbage line without the separator\n"
	"37 27 0:34 / /tmp ro,relatime - tmpfs tmpfs ro";

static void test_parse(void **state)
{
	struct mc_tmpfs_mount m[MC_TMPFS_MAX];
	size_t n;

	(void)state;
	n = mc_tmpfs_parse(MOUNTINFO, m, MC_TMPFS_MAX);
	/* /tmp was hidden by a read-only overmount at the end. */
	assert_int_equal(n, 3);
	assert_string_equal(m[0].path, "/dev/shm");
	assert_string_equal(m[1].path, "/scratch ram");
	assert_string_equal(m[2].path, "/run/user/1000");
	/* Without the read-only overmount, /tmp is there. */
	{
		char text[sizeof(MOUNTINFO)];
		char *cut;

		memcpy(text, MOUNTINFO, sizeof(text));
		cut = strstr(text, "37 27");
		*cut = '\0';
		n = mc_tmpfs_parse(text, m, MC_TMPFS_MAX);
		assert_int_equal(n, 4);
		assert_string_equal(m[1].path, "/tmp");
	}
	/* Bounded by max; empty and NULL text. */
	assert_int_equal(mc_tmpfs_parse(MOUNTINFO, m, 1), 1);
	assert_int_equal(mc_tmpfs_parse("", m, MC_TMPFS_MAX), 0);
	assert_int_equal(mc_tmpfs_parse(NULL, m, MC_TMPFS_MAX), 0);
}

static void test_describe(void **state)
{
	struct mc_tmpfs_mount m[3] = {
		{ "/tmp", 3 * GIB, 0, 0 }, { "/dev/shm", 12ULL << 20, 0, 0 },
		{ "/run/user/1000", 0, 0, 0 },
	};
	char buf[160];

	(void)state;
	/* Those holding data, with their use (sorted by the scan). */
	assert_string_equal(mc_tmpfs_describe(m, 3, buf, sizeof(buf)),
			    "/tmp 3 GiB, /dev/shm 12 MiB");
	/* None holds data: every mount point. */
	m[0].used_bytes = m[1].used_bytes = 0;
	assert_string_equal(mc_tmpfs_describe(m, 3, buf, sizeof(buf)),
			    "/tmp, /dev/shm, /run/user/1000");
	/* None at all: the usual place. */
	assert_string_equal(mc_tmpfs_describe(m, 0, buf, sizeof(buf)),
			    "/dev/shm");
	/* Cut, never overflowing. */
	assert_true(strlen(mc_tmpfs_describe(m, 3, buf, 8)) < 8);
}

/* The scan reads a file and asks statvfs: a fixture naming /dev/shm and
 * a tmpfs that does not exist (its use stays 0). */
static void test_scan(void **state)
{
	char path[] = "/tmp/mc_tmpfs_XXXXXX";
	struct mc_tmpfs_mount m[MC_TMPFS_MAX];
	char buf[160];
	int fd = mkstemp(path);
	FILE *fp;
	size_t n;

	(void)state;
	assert_true(fd >= 0);
	fp = fdopen(fd, "w");
	fputs("1 0 0:1 / /nonexistent-tmpfs rw - tmpfs tmpfs rw\n"
	      "2 0 0:2 / /dev/shm rw - tmpfs tmpfs rw\n", fp);
	fclose(fp);
	n = mc_tmpfs_scan(path, m, MC_TMPFS_MAX);
	unlink(path);
	assert_int_equal(n, 2);
	assert_int_equal(m[1].used_bytes, 0);
	assert_non_null(mc_tmpfs_describe(m, n, buf, sizeof(buf)));
	assert_int_equal(mc_tmpfs_scan("/nonexistent/mountinfo", m,
				       MC_TMPFS_MAX), 0);
	/* The live node: something printable, never empty. */
	assert_true(strlen(mc_tmpfs_where(0, buf, sizeof(buf))) > 0);
}

/*
 * Only the job's own tmpfs is named (mc_tmpfs.h): one its user owns and
 * may write, or one anyone may write (/dev/shm). Another user's RAM disk
 * and /run/user/UID are left out, their paths never shown, even when they
 * hold the most; a group's tmpfs too.
 */
static void test_own(void **state)
{
	struct mc_tmpfs_mount m[5] = {
		{ "/mnt/bob-ramdisk", 8ULL << 30, 1002, S_IFDIR | 0700 },
		{ "/run/user/1002", 1ULL << 30, 1002, S_IFDIR | 0700 },
		{ "/mnt/alice", 512ULL << 20, 1001, S_IFDIR | 0755 },
		{ "/dev/shm", 64ULL << 20, 0, S_IFDIR | 01777 },
		{ "/mnt/team", 32ULL << 20, 0, S_IFDIR | 0770 },
	};
	char buf[256];
	size_t n;

	(void)state;
	n = mc_tmpfs_own(m, 5, 1001);
	assert_int_equal(n, 2);
	assert_string_equal(mc_tmpfs_describe(m, n, buf, sizeof(buf)),
			    "/mnt/alice 512 MiB, /dev/shm 64 MiB");
	assert_null(strstr(buf, "bob"));
	assert_null(strstr(buf, "1002"));
	/* a mode never read (stat failed) is nobody's: left out */
	m[0].mode = 0;
	m[0].owner = 1001;
	assert_int_equal(mc_tmpfs_own(m, 1, 1001), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_describe),
		cmocka_unit_test(test_scan),
		cmocka_unit_test(test_own),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
