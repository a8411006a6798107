/*
 * test_iobench.c - memcore iobench's engine (mc_iobench.h): the decision
 * and its thresholds, the figure kept in the user's cache (format, strict
 * parse, never read when another user could have written it), its trip
 * through MEMCORE_DATASET_FACTS (io=) into the launch note, and a real run
 * on files of this machine's disk: the page cache of the sample dropped
 * before each pattern (mincore reads 0 resident pages), every row read.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "mc_iobench.h"
#include "mc_util.h"

static struct mc_iobench_run run_of(double seq, double rows, double shuf)
{
	struct mc_iobench_run r;

	memset(&r, 0, sizeof(r));
	r.seconds[MC_IOB_SEQ] = seq;
	r.seconds[MC_IOB_ROWS] = rows;
	r.seconds[MC_IOB_SHUF] = shuf;
	return r;
}

/* The book's own rows: Lustre against local NVMe stages; NVMe alone is
 * as is; Lustre without a scratch column is pre-shuffled. */
static void test_decide(void **state)
{
	struct mc_iobench_run lustre = run_of(1.87, 3.11, 94.2);
	struct mc_iobench_run nvme = run_of(0.14, 0.53, 0.78);
	double ratio, gain;

	(void)state;
	assert_int_equal(mc_iobench_decide(&lustre, &nvme, &ratio, &gain),
			 MC_IOB_STAGE);
	assert_true(ratio > 50.3 && ratio < 50.4);	/* +4,937% */
	assert_true(gain > 120 && gain < 121);
	assert_int_equal(mc_iobench_decide(&nvme, &nvme, &ratio, &gain),
			 MC_IOB_AS_IS);
	assert_true(ratio > 5.5 && ratio < 5.6);	/* +457% */
	assert_int_equal(mc_iobench_decide(&lustre, NULL, &ratio, &gain),
			 MC_IOB_PRESHUFFLE);
	assert_true(gain == 0);
	/* Just under the stage gain: not staged. */
	{
		struct mc_iobench_run a = run_of(1, 1, 1.99);
		struct mc_iobench_run b = run_of(1, 1, 1);

		assert_int_equal(mc_iobench_decide(&a, &b, &ratio, &gain),
				 MC_IOB_AS_IS);
		a.seconds[MC_IOB_SHUF] = 2.0;
		assert_int_equal(mc_iobench_decide(&a, &b, &ratio, &gain),
				 MC_IOB_STAGE);
	}
}

static void test_known_format(void **state)
{
	struct mc_iobench_known k = { .fs_magic = 0x6969, .fsid = 0xabcdef12,
				      .when = 1765000000, .ratio_x100 = 5037,
				      .gain_x100 = 12077,
				      .verdict = MC_IOB_STAGE }, b;
	char line[256], err[256];

	(void)state;
	mc_iobench_known_format(&k, line, sizeof(line));
	assert_string_equal(line, "memcore-iobench 1 fs=6969 fsid=abcdef12 "
			    "when=1765000000 ratio=5037 gain=12077 "
			    "verdict=1\n");
	assert_int_equal(mc_iobench_known_parse(line, &b, err, sizeof(err)),
			 0);
	assert_int_equal(b.fs_magic, k.fs_magic);
	assert_int_equal(b.fsid, k.fsid);
	assert_int_equal(b.when, k.when);
	assert_int_equal(b.ratio_x100, k.ratio_x100);
	assert_int_equal(b.gain_x100, k.gain_x100);
	assert_int_equal(b.verdict, k.verdict);
	/* Strict: another version, trailing bytes, a verdict memcore has
	 * not, a date of 0. */
	assert_int_equal(mc_iobench_known_parse("memcore-iobench 2 fs=6969 "
		"fsid=1 when=1 ratio=1 gain=1 verdict=1\n", &b, err,
		sizeof(err)), -1);
	assert_int_equal(mc_iobench_known_parse("memcore-iobench 1 fs=6969 "
		"fsid=1 when=1 ratio=1 gain=1 verdict=1\nx", &b, err,
		sizeof(err)), -1);
	assert_int_equal(mc_iobench_known_parse("memcore-iobench 1 fs=6969 "
		"fsid=1 when=1 ratio=1 gain=1 verdict=3\n", &b, err,
		sizeof(err)), -1);
	assert_int_equal(mc_iobench_known_parse("memcore-iobench 1 fs=6969 "
		"fsid=1 when=0 ratio=1 gain=1 verdict=1\n", &b, err,
		sizeof(err)), -1);
	/* a date past year 9999 (strftime could not print it) */
	assert_int_equal(mc_iobench_known_parse("memcore-iobench 1 fs=6969 "
		"fsid=1 when=40000000000000000 ratio=1 gain=1 verdict=1\n",
		&b, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a figure memcore iobench wrote"));
}

static char tmpdir[] = "/tmp/mc_iobench_test.XXXXXX";

static void write_file(const char *path, const char *s, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, s, strlen(s)), (ssize_t)strlen(s));
	close(fd);
	assert_int_equal(chmod(path, mode), 0);
}

/* Read only when the caller alone owns and can write the file and its
 * directory: another user's figure (or one anyone could have edited)
 * never reaches the caller's note. */
static void test_known_load(void **state)
{
	struct mc_iobench_known k = { .fs_magic = 0x6969, .fsid = 77,
				      .when = 1765000000, .ratio_x100 = 400,
				      .verdict = MC_IOB_AS_IS }, b;
	char dir[256], path[320], name[64], line[256], err[512];

	(void)state;
	assert_non_null(mkdtemp(tmpdir));
	snprintf(dir, sizeof(dir), "%s/memcore", tmpdir);
	assert_int_equal(mkdir(dir, 0700), 0);
	mc_iobench_known_name(k.fs_magic, k.fsid, name, sizeof(name));
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	mc_iobench_known_format(&k, line, sizeof(line));
	/* none yet; a filesystem without an id: none */
	assert_int_equal(mc_iobench_known_load(dir, k.fs_magic, k.fsid,
					       getuid(), &b, err,
					       sizeof(err)), 0);
	write_file(path, line, 0600);
	assert_int_equal(mc_iobench_known_load(dir, k.fs_magic, 0, getuid(),
					       &b, err, sizeof(err)), 0);
	assert_int_equal(mc_iobench_known_load(dir, k.fs_magic, k.fsid,
					       getuid(), &b, err,
					       sizeof(err)), 1);
	assert_int_equal(b.ratio_x100, 400);
	/* another uid asks: not its file */
	assert_int_equal(mc_iobench_known_load(dir, k.fs_magic, k.fsid,
					       getuid() + 1, &b, err,
					       sizeof(err)), -1);
	assert_non_null(strstr(err, "not yours alone"));
	/* group-writable file */
	assert_int_equal(chmod(path, 0620), 0);
	assert_int_equal(mc_iobench_known_load(dir, k.fs_magic, k.fsid,
					       getuid(), &b, err,
					       sizeof(err)), -1);
	assert_non_null(strstr(err, "not a file of yours alone"));
	assert_int_equal(chmod(path, 0600), 0);
	/* a directory anyone can write */
	assert_int_equal(chmod(dir, 0777), 0);
	assert_int_equal(mc_iobench_known_load(dir, k.fs_magic, k.fsid,
					       getuid(), &b, err,
					       sizeof(err)), -1);
	assert_int_equal(chmod(dir, 0700), 0);
	/* a symlink in its place, to a file of the caller's */
	{
		char real[340];

		snprintf(real, sizeof(real), "%s/real", tmpdir);
		write_file(real, line, 0600);
		assert_int_equal(unlink(path), 0);
		assert_int_equal(symlink(real, path), 0);
		assert_int_equal(mc_iobench_known_load(dir, k.fs_magic,
						       k.fsid, getuid(), &b,
						       err, sizeof(err)), -1);
		unlink(path);
		unlink(real);
	}
	/* a file for another filesystem under this one's name */
	k.fsid = 78;
	mc_iobench_known_format(&k, line, sizeof(line));
	write_file(path, line, 0600);
	assert_int_equal(mc_iobench_known_load(dir, k.fs_magic, 77, getuid(),
					       &b, err, sizeof(err)), -1);
	unlink(path);
	rmdir(dir);
	rmdir(tmpdir);
}

/* The figure travels from srun to slurmstepd in MEMCORE_DATASET_FACTS
 * (io=) and the note says it with its date; without one the note quotes
 * the book and says it is the book's. */
static void test_note_measured(void **state)
{
	static struct mc_dataset d, back;
	char buf[4096], err[512], lines[8][200];
	bool refuse;
	size_t n;

	(void)state;
	memset(&d, 0, sizeof(d));
	d.n = 1;
	snprintf(d.p[0].path, sizeof(d.p[0].path), "/nfs/ds");
	d.p[0].fs_magic = MC_FS_NFS;
	d.p[0].bytes = 1 << 20;
	d.p[0].files = 3;
	n = mc_dataset_note(&d, MC_NETDS_NOTE, "/scratch", 1ULL << 40, 7,
			    lines, 8, &refuse);
	assert_true(n >= 2);
	assert_string_equal(lines[1], "memcore:   shuffled reads from a "
			    "network filesystem are slow: 94.2 s per GiB on "
			    "Lustre vs 0.78 s on local NVMe (the book's "
			    "figure, not measured here: memcore iobench)");
	mc_dataset_format(&d, buf, sizeof(buf));
	assert_null(strstr(buf, "io="));
	d.p[0].io_when = 1765065600;	/* 2025-12-07 00:00 UTC */
	d.p[0].io_ratio_x100 = 3812;
	d.p[0].io_gain_x100 = 1210;
	d.p[0].io_verdict = MC_IOB_STAGE;
	mc_dataset_format(&d, buf, sizeof(buf));
	assert_non_null(strstr(buf, ",from=0,io=1765065600:3812:1210:1,"
			       "path=/nfs/ds"));
	assert_int_equal(mc_dataset_parse(buf, &back, err, sizeof(err)), 0);
	assert_int_equal(back.p[0].io_when, 1765065600);
	assert_int_equal(back.p[0].io_gain_x100, 1210);
	assert_string_equal(back.p[0].path, "/nfs/ds");
	n = mc_dataset_note(&back, MC_NETDS_NOTE, "/scratch", 1ULL << 40, 7,
			    lines, 8, &refuse);
	assert_true(n >= 2);
	assert_string_equal(lines[1], "memcore:   measured here on "
			    "2025-12-07 (memcore iobench): shuffled mmap "
			    "takes 38.1x its sequential read, 12.1x local "
			    "scratch's: stage it");
	/* a forged io= is refused whole */
	assert_int_equal(mc_dataset_parse("fs=6969,bytes=1,files=1,partial=0,"
		"err=0,from=0,io=1:2:3:9,path=%2Fx", &back, err,
		sizeof(err)), -1);
	assert_int_equal(mc_dataset_parse("fs=6969,bytes=1,files=1,partial=0,"
		"err=0,from=0,io=0:2:3:1,path=%2Fx", &back, err,
		sizeof(err)), -1);
	/* a year of 11 digits, which slurmstepd's note would print from
	 * an unterminated buffer (found by review) */
	assert_int_equal(mc_dataset_parse("fs=6969,bytes=1,files=1,partial=0,"
		"err=0,from=0,io=40000000000000000:100:0:0,path=%2Fnfs%2Fd",
		&back, err, sizeof(err)), -1);
	assert_int_equal(mc_dataset_parse("fs=6969,bytes=1,files=1,partial=0,"
		"err=0,from=0,io=253402300799:100:0:0,path=%2Fnfs%2Fd",
		&back, err, sizeof(err)), 0);
}

/* A real run on this machine's disk (the build tree: not tmpfs, whose
 * pages the drop cannot release): after each drop mincore finds none of
 * the sample's pages, every row of every pattern is read, and the
 * process's own memory stays small. */
static void test_measure(void **state)
{
	char dir[] = "build/tests/iobench.XXXXXX", path[3][64], err[512];
	char *paths[1];
	struct mc_iobench_sample s;
	struct mc_iobench_run r;
	struct statfs sf;
	static char data[1 << 20];

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(statfs(dir, &sf), 0);
	if (sf.f_type == 0x01021994) {	/* tmpfs */
		rmdir(dir);
		skip();
	}
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (char)(i * 7 + 3);
	for (int f = 0; f < 3; f++) {
		int fd;

		snprintf(path[f], sizeof(path[f]), "%s/shard%d.arrow", dir, f);
		fd = open(path[f], O_WRONLY | O_CREAT | O_TRUNC, 0600);
		assert_true(fd >= 0);
		for (int m = 0; m < 4; m++)
			assert_int_equal(write(fd, data, sizeof(data)),
					 (ssize_t)sizeof(data));
		assert_int_equal(fsync(fd), 0);
		close(fd);
	}
	paths[0] = dir;
	/* 10 MiB asked of 12: the third file in part. */
	assert_int_equal(mc_iobench_sample(paths, 1, 10 << 20, &s, err,
					   sizeof(err)), 0);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.bytes, 10 << 20);
	assert_int_equal(s.f[2].bytes, 2 << 20);
	assert_true(s.more);
	assert_int_equal(mc_iobench_measure(&s, 32768, 60, 1, NULL, NULL,
					    NULL, &r, err, sizeof(err)), 0);
	assert_int_equal(r.rows, (10 << 20) / 32768);
	assert_int_equal(r.pages, (10 << 20) / sysconf(_SC_PAGESIZE));
	for (int p = 0; p < MC_IOB_PATTERNS; p++) {
		assert_false(r.cut[p]);
		assert_true(r.seconds[p] > 0);
		assert_int_equal(r.resident[p], 0);
	}
	assert_int_equal(r.rows_done[MC_IOB_SHUF], r.rows);
	assert_true(r.anon_peak_bytes > 0 && r.anon_peak_bytes < (64 << 20));
	mc_iobench_sample_free(&s);
	for (int f = 0; f < 3; f++)
		unlink(path[f]);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decide),
		cmocka_unit_test(test_known_format),
		cmocka_unit_test(test_known_load),
		cmocka_unit_test(test_note_measured),
		cmocka_unit_test(test_measure),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
