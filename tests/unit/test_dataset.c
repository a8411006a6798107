/*
 * test_dataset.c - the data path (mc_dataset.h): the paths a job names and
 * the libraries' cache, the walk's figures and bounds, the figures'
 * round trip through the job's environment, the policy's note and refusal.
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

#include "mc_dataset.h"
#include "mc_opts.h"
#include "mc_util.h"

static void test_paths(void **state)
{
	struct mc_dataset d;
	char err[512];

	(void)state;
	assert_int_equal(mc_dataset_paths("/a,/b", NULL, NULL, &d, err,
					  sizeof(err)), 0);
	assert_int_equal(d.n, 2);
	assert_string_equal(d.p[1].path, "/b");
	assert_int_equal(mc_dataset_paths(NULL, NULL, "/home/u/hf", &d, err,
					  sizeof(err)), 0);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.p[0].path, "/home/u/hf/datasets");
	assert_int_equal(d.p[0].from, MC_DS_HF_HOME);
	/* HF_DATASETS_CACHE wins over HF_HOME's layout, as in datasets */
	assert_int_equal(mc_dataset_paths("/x", "/c", "/h", &d, err,
					  sizeof(err)), 0);
	assert_int_equal(d.n, 2);
	assert_string_equal(d.p[1].path, "/c");
	assert_int_equal(mc_dataset_paths("/a,", NULL, NULL, &d, err,
					  sizeof(err)), -1);
	assert_non_null(strstr(err, "empty path"));
	assert_int_equal(mc_dataset_paths("/1,/2,/3,/4,/5,/6,/7,/8,/9", NULL,
					  NULL, &d, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "more than 8"));
}

static void test_option(void **state)
{
	struct mc_opts o;
	char err[512];

	(void)state;
	memset(&o, 0, sizeof(o));
	assert_int_equal(mc_opts_set(&o, MC_OPT_DATASET, "/d1,/d2", false,
				     err, sizeof(err)), 0);
	assert_string_equal(o.dataset, "/d1,/d2");
	assert_int_equal(mc_opt_lookup("dataset"), MC_OPT_DATASET);
	assert_string_equal(mc_opt_env(MC_OPT_DATASET), "MEMCORE_DATASET");
	assert_int_equal(mc_opts_set(&o, MC_OPT_DATASET, "/a,,/b", false,
				     err, sizeof(err)), -1);
	assert_string_equal(err, "--dataset=/a,,/b: expected PATH[,PATH...] "
			    "(no empty path)");
}

static void test_fs_names(void **state)
{
	(void)state;
	assert_string_equal(mc_fs_network_name(0x0BD00BD0), "Lustre");
	assert_string_equal(mc_fs_network_name(0x6969), "NFS");
	assert_string_equal(mc_fs_network_name(0x19830326), "BeeGFS");
	assert_string_equal(mc_fs_network_name(0x00C36400), "CephFS");
	assert_non_null(strstr(mc_fs_network_name(0x47504653), "GPFS"));
	assert_string_equal(mc_fs_network_name(0xFF534D42), "SMB/CIFS");
	assert_null(mc_fs_network_name(0xEF53));	/* ext4 */
	assert_null(mc_fs_network_name(0x01021994));	/* tmpfs */
}

/* A tree of a few files, a symbolic link out of it, walked as we are. */
/* The filesystem type of path, as statfs says it. */
static long sf_magic(const char *path)
{
	struct statfs sf;

	return statfs(path, &sf) == 0 ? (long)sf.f_type : -1;
}

static void test_probe(void **state)
{
	char dir[] = "/tmp/mc_ds_XXXXXX", f[128];
	struct mc_dataset d;
	char err[512];
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(f, sizeof(f), "%s/sub", dir);
	assert_int_equal(mkdir(f, 0700), 0);
	for (int i = 0; i < 5; i++) {
		snprintf(f, sizeof(f), "%s/sub/f%d", dir, i);
		fd = open(f, O_WRONLY | O_CREAT, 0600);
		assert_true(fd >= 0);
		assert_int_equal(ftruncate(fd, 1000 * (i + 1)), 0);
		close(fd);
	}
	snprintf(f, sizeof(f), "%s/link", dir);
	assert_int_equal(symlink("/usr", f), 0);	/* never followed */
	assert_int_equal(mc_dataset_paths(dir, NULL, NULL, &d, err,
					  sizeof(err)), 0);
	mc_dataset_probe(&d, 1000, 2000, true);
	assert_int_equal(d.p[0].err, 0);
	assert_int_equal(d.p[0].files, 5);
	assert_int_equal(d.p[0].bytes, 15000);
	assert_false(d.p[0].partial);
	assert_non_null(mc_fs_network_name(d.p[0].fs_magic) ? NULL : "local");
	/* local disk, as srun probes it: its filesystem, no walk */
	mc_dataset_probe(&d, 1000, 2000, false);
	assert_int_equal(d.p[0].err, 0);
	assert_int_equal(d.p[0].files, 0);
	assert_int_equal(d.p[0].bytes, 0);
	assert_int_equal(d.p[0].fs_magic, (uint32_t)sf_magic(dir));
	/* the entry bound: "at least" */
	mc_dataset_probe(&d, 3, 2000, true);
	assert_true(d.p[0].partial);
	assert_true(d.p[0].files < 5);
	/* a path that is not there keeps its errno */
	assert_int_equal(mc_dataset_paths("/nonexistent/mc", NULL, NULL, &d,
					  err, sizeof(err)), 0);
	mc_dataset_probe(&d, 1000, 2000, true);
	assert_int_equal(d.p[0].err, 2);	/* ENOENT */
	snprintf(f, sizeof(f), "rm -rf '%s'", dir);
	assert_int_equal(system(f), 0);
}

static void test_roundtrip(void **state)
{
	struct mc_dataset d, e;
	char buf[8192], err[512];

	(void)state;
	memset(&d, 0, sizeof(d));
	d.n = 2;
	snprintf(d.p[0].path, sizeof(d.p[0].path), "/nfs/a b,c;d=e%%f\nx");
	d.p[0].fs_magic = MC_FS_NFS;
	d.p[0].bytes = 314572800;
	d.p[0].files = 400;
	d.p[0].partial = true;
	snprintf(d.p[1].path, sizeof(d.p[1].path), "/h/datasets");
	d.p[1].from = MC_DS_HF_HOME;
	d.p[1].err = 13;
	mc_dataset_format(&d, buf, sizeof(buf));
	assert_null(strchr(buf, '\n'));
	assert_int_equal(mc_dataset_parse(buf, &e, err, sizeof(err)), 0);
	assert_memory_equal(&d, &e, sizeof(d));
	assert_int_equal(mc_dataset_parse("fs=6969,bytes=1,files=1,partial=0,"
					  "err=0,from=0,path=", &e, err,
					  sizeof(err)), -1);
	assert_string_equal(err, "MEMCORE_DATASET_FACTS: entry 1: path: "
			    "empty: not a value memcore wrote (the variable is "
			    "memcore's own, set by srun and sbatch: unset it)");
	assert_int_equal(mc_dataset_parse("fs=6969,bytes=-1,files=1,partial=0,"
					  "err=0,from=0,path=/x", &e, err,
					  sizeof(err)), -1);
	assert_int_equal(mc_dataset_parse("fs=6969,bytes=1,files=1,partial=0,"
					  "err=0,from=7,path=/x", &e, err,
					  sizeof(err)), -1);
	assert_int_equal(mc_dataset_parse("fs=6969,bytes=1,files=1,partial=0,"
					  "err=0,from=0,path=/x%00", &e, err,
					  sizeof(err)), -1);
}

static void test_note(void **state)
{
	struct mc_dataset d;
	char lines[8][200];
	bool refuse;
	size_t n;

	(void)state;
	memset(&d, 0, sizeof(d));
	d.n = 1;
	snprintf(d.p[0].path, sizeof(d.p[0].path), "/nfs/ds");
	d.p[0].fs_magic = MC_FS_NFS;
	d.p[0].bytes = (uint64_t)300 << 20;
	d.p[0].files = 400;
	n = mc_dataset_note(&d, MC_NETDS_NOTE, "/scratch", (uint64_t)10 << 30,
			    77, lines, 8, &refuse);
	assert_int_equal(n, 4);
	assert_false(refuse);
	assert_string_equal(lines[0], "memcore: dataset /nfs/ds (--dataset) "
			    "is on NFS: 300 MiB in 400 files");
	assert_non_null(strstr(lines[1], "94.2 s"));
	assert_string_equal(lines[2], "memcore:   local scratch /scratch: "
			    "10 GiB free, the dataset is 300 MiB (it fits)");
	assert_string_equal(lines[3], "memcore:   stage it first: memcore "
			    "stage /nfs/ds /scratch/job_77 (made for you, mode "
			    "0700, removed at the job's end)");
	n = mc_dataset_note(&d, MC_NETDS_REFUSE, "/scratch",
			    (uint64_t)10 << 30, 77, lines, 8, &refuse);
	assert_true(refuse);
	assert_non_null(strstr(lines[n - 1], "NetworkDataset=refuse"));
	/* scratch too small: no refusal, no staging command */
	n = mc_dataset_note(&d, MC_NETDS_REFUSE, "/scratch", 1 << 20, 77,
			    lines, 8, &refuse);
	assert_false(refuse);
	assert_int_equal(n, 3);
	assert_non_null(strstr(lines[2], "too small"));
	/* ignore, and a local dataset: nothing */
	assert_int_equal(mc_dataset_note(&d, MC_NETDS_IGNORE, "/scratch",
					 (uint64_t)10 << 30, 77, lines, 8,
					 &refuse), 0);
	d.p[0].fs_magic = 0xEF53;
	assert_int_equal(mc_dataset_note(&d, MC_NETDS_REFUSE, "/scratch",
					 (uint64_t)10 << 30, 77, lines, 8,
					 &refuse), 0);
	assert_false(refuse);
	/* a path the user could not read is not judged */
	d.p[0].fs_magic = MC_FS_LUSTRE;
	d.p[0].err = 13;
	assert_int_equal(mc_dataset_note(&d, MC_NETDS_NOTE, "/scratch",
					 (uint64_t)10 << 30, 77, lines, 8,
					 &refuse), 0);
}

/* --dataset-in-memory without SIZE: the --dataset paths' measured size,
 * or why it is unknown (never a silent 0); the staging command. */
static void test_in_memory(void **state)
{
	char dir[] = "/tmp/mc_ds_XXXXXX", f[128], err[512], cmd[512];
	struct mc_dataset d;
	uint64_t b = 0;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(f, sizeof(f), "%s/a.arrow", dir);
	fd = open(f, O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 3 << 20), 0);	/* sparse */
	close(fd);
	/* The HF cache is not this dataset: only --dataset counts. */
	assert_int_equal(mc_dataset_paths(NULL, dir, NULL, &d, err,
					  sizeof(err)), 0);
	mc_dataset_probe(&d, 1000, 2000, true);
	assert_int_equal(mc_dataset_in_memory_bytes(&d, &b, err, sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "--dataset-in-memory=SIZE"));
	assert_non_null(strstr(err, "none is given"));
	assert_int_equal(mc_dataset_paths(dir, NULL, NULL, &d, err,
					  sizeof(err)), 0);
	/* local, not walked (srun's plain probe): 0 measured, an error */
	mc_dataset_probe(&d, 1000, 2000, false);
	assert_int_equal(mc_dataset_in_memory_bytes(&d, &b, err, sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "measured 0 bytes"));
	mc_dataset_probe(&d, 1000, 2000, true);
	assert_int_equal(mc_dataset_in_memory_bytes(&d, &b, err, sizeof(err)),
			 0);
	assert_int_equal(b, 3 << 20);
	/* the walk's bound: the size is unknown, not "at least" */
	mc_dataset_probe(&d, 1, 2000, true);
	assert_int_equal(mc_dataset_in_memory_bytes(&d, &b, err, sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "the walk stopped"));
	/* the staging command names the --dataset paths */
	mc_dataset_probe(&d, 1000, 2000, true);
	mc_dataset_stage_cmd(&d, false, "/scratch", "42", cmd, sizeof(cmd));
	snprintf(f, sizeof(f), "memcore stage %s /scratch/job_42",
		 d.p[0].path);
	assert_string_equal(cmd, f);
	mc_dataset_stage_cmd(&d, true, "/scratch", "42", cmd, sizeof(cmd));
	assert_string_equal(cmd, "");	/* not on a network filesystem */
	/* a path with a blank and a quote is one word of the command */
	snprintf(d.p[0].path, sizeof(d.p[0].path), "/data/it's mine");
	mc_dataset_stage_cmd(&d, false, "/local scratch", "42", cmd,
			     sizeof(cmd));
	assert_string_equal(cmd, "memcore stage '/data/it'\\''s mine' "
			    "'/local scratch'/job_42");
	/* unreadable */
	assert_int_equal(mc_dataset_paths("/nonexistent/mc", NULL, NULL, &d,
					  err, sizeof(err)), 0);
	mc_dataset_probe(&d, 1000, 2000, true);
	assert_int_equal(mc_dataset_in_memory_bytes(&d, &b, err, sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "cannot be read"));
	snprintf(f, sizeof(f), "%s/a.arrow", dir);
	unlink(f);
	rmdir(dir);
}

/* A statfs that never answers for a path ending in "/hung" (a hard NFS
 * mount whose server is gone), until the test writes to the pipe. */
static int hung_pipe[2] = { -1, -1 };
static int hung_answered;	/* calls that returned, atomic */

static int statfs_hung(const char *path, struct statfs *sf)
{
	size_t l = strlen(path);
	char c;

	if (l >= 5 && !strcmp(path + l - 5, "/hung")) {
		if (read(hung_pipe[0], &c, 1) < 0)
			c = 0;
		__atomic_add_fetch(&hung_answered, 1, __ATOMIC_SEQ_CST);
		errno = EIO;
		return -1;
	}
	return statfs(path, sf);
}

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

static void test_probe_hung(void **state)
{
	char dir[] = "/tmp/mc_ds_XXXXXX", f[128], list[256], err[512];
	char lines[8][200];
	struct mc_dataset d;
	uint64_t t0, waited, b;
	bool refuse;
	int fd;

	(void)state;
	assert_int_equal(pipe(hung_pipe), 0);
	assert_non_null(mkdtemp(dir));
	snprintf(f, sizeof(f), "%s/a.arrow", dir);
	fd = open(f, O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 4096), 0);
	close(fd);
	/* the first path answers, the second never does */
	snprintf(list, sizeof(list), "%s,/mc/nfs/hung", dir);
	assert_int_equal(mc_dataset_paths(list, NULL, NULL, &d, err,
					  sizeof(err)), 0);
	t0 = now_ms();
	mc_dataset_probe_with(&d, 1000, 100, true, statfs_hung);
	waited = now_ms() - t0;
	/* returned at its deadline, the walk's bound + MC_DATASET_ANSWER_MS */
	assert_true(waited >= 100 + MC_DATASET_ANSWER_MS - 10);
	assert_true(waited < 100 + MC_DATASET_ANSWER_MS + 1000);
	assert_int_equal(d.p[0].err, 0);
	assert_int_equal(d.p[0].files, 1);
	assert_int_equal(d.p[0].bytes, 4096);
	assert_int_equal(d.p[1].err, ETIMEDOUT);
	assert_string_equal(d.p[1].path, "/mc/nfs/hung");
	/* it travels as an unreadable path: no note, the size unknown */
	d.p[0].fs_magic = MC_FS_NFS;	/* as if the first were on NFS */
	assert_int_equal(mc_dataset_note(&d, MC_NETDS_NOTE, "/scratch",
					 (uint64_t)10 << 30, 7, lines, 8,
					 &refuse), 4);
	for (int i = 0; i < 4; i++)
		assert_null(strstr(lines[i], "hung"));
	assert_int_equal(mc_dataset_in_memory_bytes(&d, &b, err, sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "/mc/nfs/hung (--dataset) is unknown: "
			       "it cannot be read"));
	/* hung first: the paths after it are never asked, unknown too */
	snprintf(list, sizeof(list), "/mc/nfs/hung,%s", dir);
	assert_int_equal(mc_dataset_paths(list, NULL, NULL, &d, err,
					  sizeof(err)), 0);
	mc_dataset_probe_with(&d, 1000, 100, true, statfs_hung);
	assert_int_equal(d.p[0].err, ETIMEDOUT);
	assert_int_equal(d.p[1].err, ETIMEDOUT);
	assert_int_equal(d.p[1].files, 0);
	/* the filesystem answers at last: the two threads end on their own
	 * and free what they shared with the probes (the pipe is closed
	 * only once neither reads it) */
	assert_int_equal(write(hung_pipe[1], "xx", 2), 2);
	while (__atomic_load_n(&hung_answered, __ATOMIC_SEQ_CST) < 2)
		usleep(1000);
	/* an answer in time is no timeout: the same probe, nothing hung */
	assert_int_equal(mc_dataset_paths(dir, NULL, NULL, &d, err,
					  sizeof(err)), 0);
	mc_dataset_probe_with(&d, 1000, 100, true, statfs_hung);
	assert_int_equal(d.p[0].err, 0);
	assert_int_equal(d.p[0].files, 1);
	close(hung_pipe[0]);
	close(hung_pipe[1]);
	unlink(f);
	rmdir(dir);
}

/* True when no line of lines[0..n) holds a control byte. */
static bool lines_clean(char (*lines)[200], size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (mc_has_ctrl(lines[i]))
			return false;
	return true;
}

/*
 * MEMCORE_DATASET_FACTS set by hand (the user's own environment reaches
 * slurmstepd): a path whose %-escapes decode to an ESC or a newline is
 * quoted escaped in the note and in --dataset-in-memory's error (never a
 * raw control byte on stderr or in slurmd's log); a long path is cut with
 * "..." so that the filesystem, the size and the reason always show; a
 * malformed value is one line that names the variable and what to do.
 */
static void test_forged_facts(void **state)
{
	static const char forged[] = "fs=6969,bytes=1048576,files=1,partial=0,"
				     "err=0,from=0,path=/nfs/%1B[2J%0Amemcore:"
				     "%20this%20step%20fits";
	struct mc_dataset d;
	char lines[8][200], err[MC_ERR_MAX], val[8192];
	uint64_t b;
	bool refuse;
	size_t n;

	(void)state;
	assert_int_equal(mc_dataset_parse(forged, &d, err, sizeof(err)), 0);
	n = mc_dataset_note(&d, MC_NETDS_NOTE, "/scratch", (uint64_t)10 << 30,
			    77, lines, 8, &refuse);
	assert_int_equal(n, 4);
	assert_true(lines_clean(lines, n));
	assert_string_equal(lines[0], "memcore: dataset /nfs/\\x1b[2J\\nmemcore"
			    ": this step fits (--dataset) is on NFS: 1 MiB in "
			    "1 files");
	d.p[0].err = 13;
	assert_int_equal(mc_dataset_in_memory_bytes(&d, &b, err, sizeof(err)),
			 -1);
	assert_false(mc_has_ctrl(err));
	assert_non_null(strstr(err, "/nfs/\\x1b[2J\\nmemcore"));
	/* A path of 1000 characters: cut, the reason after it shown. */
	memset(&d, 0, sizeof(d));
	d.n = 1;
	memset(d.p[0].path, 'a', 1000);
	d.p[0].path[0] = '/';
	d.p[0].fs_magic = MC_FS_LUSTRE;
	d.p[0].bytes = (uint64_t)3 << 30;
	d.p[0].files = 12;
	mc_dataset_format(&d, val, sizeof(val));
	assert_int_equal(mc_dataset_parse(val, &d, err, sizeof(err)), 0);
	n = mc_dataset_note(&d, MC_NETDS_NOTE, "/scratch", (uint64_t)10 << 30,
			    77, lines, 8, &refuse);
	assert_non_null(strstr(lines[0], "a... (--dataset) is on Lustre: 3 GiB "
			       "in 12 files"));
	d.p[0].err = 2;
	assert_int_equal(mc_dataset_in_memory_bytes(&d, &b, err, sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "a... (--dataset) is unknown: it cannot be "
			       "read (No such file or directory); give its "
			       "size in RAM: --dataset-in-memory=SIZE"));
	/* Malformed: one line naming the variable, nothing of the value. */
	assert_int_equal(mc_dataset_parse("fs=6969,bytes=1\n\x1b[2J", &d, err,
					  sizeof(err)), -1);
	assert_string_equal(err, "MEMCORE_DATASET_FACTS: entry 1: bytes: a bad "
			    "value: not a value memcore wrote (the variable is "
			    "memcore's own, set by srun and sbatch: unset it)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_option),
		cmocka_unit_test(test_fs_names),
		cmocka_unit_test(test_probe),
		cmocka_unit_test(test_probe_hung),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_note),
		cmocka_unit_test(test_in_memory),
		cmocka_unit_test(test_forged_facts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
