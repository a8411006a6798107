/*
 * test_cgroup.c - the memory split on v1 and v2 fixtures, finding a
 * cgroup from /proc text, and that no write leaves the step's cgroup.
 * Fixtures: tests/data/cgroup (README.md there); MC_TOP is the repo root.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "mc_test_files.h"

#include <libcgroup.h>

#include "mc_cgroup.h"
#include "mc_test_cg.h"
#include "mc_stepcg.h"
#include <slurm/slurm.h>
#include "mc_memstat.h"
#include "mc_parse.h"

#define GiB ((uint64_t)1 << 30)
#define ANON (5 * GiB / 2)
#define SHMEM ((uint64_t)78643 * 4096)		/* 0.3 GiB in pages */
#define FILE_PAGES (14 * GiB)
#define USAGE (ANON + SHMEM + FILE_PAGES)

static char data[PATH_MAX];
static char err[1024];

static const char *fixture(const char *rel, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", data, rel);
	return buf;
}

static void assert_split(const struct mc_memstat *m)
{
	char b[32];

	assert_int_equal(m->usage_bytes, USAGE);
	assert_int_equal(m->anon_bytes, ANON);
	assert_int_equal(m->shmem_bytes, SHMEM);
	assert_int_equal(m->file_bytes, FILE_PAGES);
	assert_int_equal(m->non_reclaimable_bytes, ANON + SHMEM);
	assert_string_equal(mc_fmt_bytes(m->non_reclaimable_bytes, b,
					 sizeof(b)), "2.80 GiB");
	assert_int_equal(m->limit_bytes, 32 * GiB);
	assert_int_equal(m->oom_kills, 2);
}

/* v1: the step's total_* fields (its task's pages) and the OOM kill
 * counted in the task's cgroup below it. */
static void test_v1_step(void **state)
{
	char dir[PATH_MAX];
	struct mc_memstat m;

	(void)state;
	fixture("v1/slurm_n1/uid_0/job_7/step_0", dir, sizeof(dir));
	if (mc_memstat_read(MC_TEST_CG(dir, 0, NULL), &m, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(m.version, 1);
	assert_split(&m);
	assert_int_equal(m.peak_bytes, USAGE + GiB);
	assert_int_equal(m.swap_limit_bytes, MC_MEM_UNLIMITED);
}

/* A task's leaf: unlimited itself, its step's limit applies. */
/* v1 has no cgroup.events: a pid in cgroup.procs or a child cgroup. */
static void test_v1_populated(void **state)
{
	char dir[PATH_MAX];

	(void)state;
	fixture("v1/slurm_n1/uid_0/job_7/step_0/task_0", dir, sizeof(dir));
	assert_int_equal(mc_cgroup_populated(dir, &mc_cgroup_v1), 1);
	fixture("v1/slurm_n1/uid_0/job_7/step_0", dir, sizeof(dir));
	assert_int_equal(mc_cgroup_populated(dir, &mc_cgroup_v1), 1);	/* task_0 */
	assert_int_equal(mc_cgroup_populated("/nonexistent/x", &mc_cgroup_v1), -1);
}

static void test_v1_task_hierarchical_limit(void **state)
{
	char dir[PATH_MAX];
	struct mc_memstat m;

	(void)state;
	fixture("v1/slurm_n1/uid_0/job_7/step_0/task_0", dir, sizeof(dir));
	if (mc_memstat_read(MC_TEST_CG(dir, 0, NULL), &m, err, sizeof(err)))
		fail_msg("%s", err);
	assert_split(&m);
}

/* v2: "file" includes shmem and must not be used; the limit is the job's
 * memory.max found by walking up to the mount root; memory.events is
 * hierarchical (not summed over children). */
static void test_v2_step(void **state)
{
	char dir[PATH_MAX], root[PATH_MAX];
	struct mc_memstat m;

	(void)state;
	fixture("v2/job_7/step_0", dir, sizeof(dir));
	fixture("v2", root, sizeof(root));
	if (mc_memstat_read(MC_TEST_CG(dir, 0, root), &m, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(m.version, 2);
	assert_split(&m);
	assert_int_equal(m.swap_limit_bytes, 0);
	/* Without the root only the step's own memory.max ("max"). */
	if (mc_memstat_read(MC_TEST_CG(dir, 0, NULL), &m, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(m.limit_bytes, MC_MEM_UNLIMITED);
	fixture("v2/job_7/step_0/user/task_0", dir, sizeof(dir));
	if (mc_memstat_read(MC_TEST_CG(dir, 0, root), &m, err, sizeof(err)))
		fail_msg("%s", err);
	assert_split(&m);
}

/*
 * Slurm's cgroup/v2 layout as read in a guest (Slurm 24.11.5, kernel 6.1,
 * ConstrainRAMSpace=yes ConstrainSwapSpace=yes AllowedSwapSpace=10,
 * --mem=256M): slurmstepd in job_1/step_0/slurm, tasks in
 * job_1/step_0/user/task_T, memory.max 256 MiB on user and on job_1,
 * "max" on step_0, slurm and task_0; the same with 26.05's job name.
 */
static void test_v2_slurm_layout(void **state)
{
	static const char *const jobs[] = { "job_1", "s9Z5M8QCVENS00" };
	char dir[PATH_MAX], root[PATH_MAX], want[PATH_MAX], user[PATH_MAX];
	struct mc_memstat m;

	(void)state;
	fixture("v2-slurm", root, sizeof(root));
	for (unsigned i = 0; i < 2; i++) {
		char rel[256];

		snprintf(rel, sizeof(rel), "v2-slurm/system.slice/"
			 "vm_slurmstepd.scope/%s/step_0/slurm", jobs[i]);
		fixture(rel, dir, sizeof(dir));
		/* From slurmstepd's cgroup to the step's user part. */
		assert_int_equal(mc_cgroup_v2_step_user(dir, user,
							sizeof(user)), 0);
		snprintf(rel, sizeof(rel), "v2-slurm/system.slice/"
			 "vm_slurmstepd.scope/%s/step_0/user", jobs[i]);
		assert_string_equal(user, fixture(rel, want, sizeof(want)));
		/* slurmstepd is not under the step's limit: the job's is the
		 * nearest above it. */
		if (mc_memstat_read(MC_TEST_CG(dir, 0, root), &m, err, sizeof(err)))
			fail_msg("%s", err);
		assert_int_equal(m.limit_bytes, 268435456);
		snprintf(rel, sizeof(rel), "v2-slurm/system.slice/"
			 "vm_slurmstepd.scope/%s", jobs[i]);
		assert_string_equal(m.limit_dir, fixture(rel, want,
							 sizeof(want)));
		/* A task: Slurm's step limit at user, the nearest of two. */
		snprintf(rel, sizeof(rel), "v2-slurm/system.slice/"
			 "vm_slurmstepd.scope/%s/step_0/user/task_0", jobs[i]);
		fixture(rel, dir, sizeof(dir));
		if (mc_memstat_read(MC_TEST_CG(dir, 0, root), &m, err, sizeof(err)))
			fail_msg("%s", err);
		assert_int_equal(m.limit_bytes, 268435456);
		assert_string_equal(m.limit_dir, user);
		/* Its swap limit is Slurm's at user too (memory.swap.max
		 * 26841088 there, "max" on the task). */
		assert_int_equal(m.swap_limit_bytes, 26841088);
		assert_string_equal(m.swap_limit_dir, user);
		assert_int_equal(mc_cgroup_populated(dir, &mc_cgroup_v2), 1);
		assert_int_equal(mc_cgroup_subtree_has(dir, "memory"), 0);
		assert_int_equal(mc_cgroup_subtree_has(user, "memory"), 1);
		/* Only the user part's own figures: Slurm's swap limit. */
		if (mc_memstat_read(MC_TEST_CG(user, 0, NULL), &m, err, sizeof(err)))
			fail_msg("%s", err);
		assert_int_equal(m.swap_limit_bytes, 26841088);
	}
	/* Not Slurm's step: slurmstepd without task/cgroup ("system"), a
	 * task cgroup, a "slurm" leaf without a "user" sibling. */
	fixture("v2-slurm/system.slice/vm_slurmstepd.scope/system", dir,
		sizeof(dir));
	assert_int_equal(mc_cgroup_v2_step_user(dir, user, sizeof(user)), -1);
	assert_int_equal(mc_cgroup_populated(dir, &mc_cgroup_v2), 0);
	fixture("v2/job_7/step_0/user/task_0", dir, sizeof(dir));
	assert_int_equal(mc_cgroup_v2_step_user(dir, user, sizeof(user)), -1);
	/* Parents. */
	assert_int_equal(mc_cgroup_parent("/a/b/c", dir, sizeof(dir)), 0);
	assert_string_equal(dir, "/a/b");
	assert_int_equal(mc_cgroup_parent("/a", dir, sizeof(dir)), -1);
}

/* The v1/v2 field mapping on text. */
static void test_parse_mapping(void **state)
{
	struct mc_memstat_fields f;

	(void)state;
	/* v1: total_* win over local fields, in either order. */
	assert_int_equal(mc_memstat_parse("rss 1\ntotal_rss 10\nshmem 2\n"
		"total_shmem 20\ntotal_active_file 30\nactive_file 3\n"
		"inactive_file 4\ntotal_inactive_file 40\n"
		"hierarchical_memory_limit 9223372036854771712\n", &mc_cgroup_v1, &f, err,
		sizeof(err)), 0);
	assert_int_equal(f.anon, 10);
	assert_int_equal(f.shmem, 20);
	assert_int_equal(f.active_file, 30);
	assert_int_equal(f.inactive_file, 40);
	assert_int_equal(f.hierarchical_limit, MC_MEM_UNLIMITED);
	/* v1 without total_*: the local fields. */
	assert_int_equal(mc_memstat_parse("rss 1\nshmem 2\nactive_file 3\n"
		"inactive_file 4\n", &mc_cgroup_v1, &f, err, sizeof(err)), 0);
	assert_int_equal(f.anon + f.shmem + f.active_file + f.inactive_file,
			 10);
	/* v2 names; rss_huge/anon_thp are other fields. */
	assert_int_equal(mc_memstat_parse("anon 5\nanon_thp 7\nfile 99\n"
		"shmem 6\nactive_file 7\ninactive_file 8\n", &mc_cgroup_v2, &f, err,
		sizeof(err)), 0);
	assert_int_equal(f.anon, 5);
	assert_int_equal(f.shmem, 6);
	assert_int_equal(f.active_file, 7);
	/* v1 names mean nothing in v2, and the reverse. */
	assert_int_equal(mc_memstat_parse("total_rss 1\ntotal_shmem 2\n"
		"total_active_file 3\ntotal_inactive_file 4\n", &mc_cgroup_v2, &f, err,
		sizeof(err)), -1);
	assert_non_null(strstr(err, "no 'anon' line"));
	assert_int_equal(mc_memstat_parse("anon 1\nshmem 1\nactive_file 1\n"
		"inactive_file 1\n", &mc_cgroup_v1, &f, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "total_rss"));
	assert_int_equal(mc_memstat_parse("anon x1\nshmem 1\nactive_file 1\n"
		"inactive_file 1\n", &mc_cgroup_v2, &f, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a number"));
}

static void test_parse_limits(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(mc_memstat_parse_limit("max\n", &v), 0);
	assert_int_equal(v, MC_MEM_UNLIMITED);
	assert_int_equal(mc_memstat_parse_limit("9223372036854771712\n", &v),
			 0);
	assert_int_equal(v, MC_MEM_UNLIMITED);
	assert_int_equal(mc_memstat_parse_limit("268435456\n", &v), 0);
	assert_int_equal(v, 268435456);
	assert_int_equal(mc_memstat_parse_limit("maximum", &v), -1);
	assert_int_equal(mc_memstat_parse_limit("-1", &v), -1);
	assert_int_equal(mc_memstat_parse_oom_kill("oom_kill_disable 0\n"
		"under_oom 0\noom_kill 3\n", &v), 0);
	assert_int_equal(v, 3);
	assert_int_equal(mc_memstat_parse_oom_kill("low 0\nhigh 0\nmax 1\n"
		"oom 1\noom_kill 1\noom_group_kill 0\n", &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(mc_memstat_parse_oom_kill("oom_kill_disable 0\n",
						   &v), -1);
}

static void test_not_a_memory_cgroup(void **state)
{
	struct mc_memstat m;

	(void)state;
	struct mc_cgroup cg;

	/* Told where the cgroup is found (memcore usage --cgroup). */
	assert_int_equal(mc_cgroup_at(data, &cg, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a memory cgroup"));
	assert_int_equal(mc_cgroup_at("/nonexistent/x", &cg, err,
				      sizeof(err)), -1);
	assert_non_null(strstr(err, "No such file"));
	/* And by the read of a handle whose directory went away. */
	assert_int_equal(mc_memstat_read(MC_TEST_CG("/nonexistent/x", 1, NULL),
					 &m, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "No such file"));
}

static void test_proc_cgroup(void **state)
{
	char rel[PATH_MAX];
	const struct mc_cgroup_ops *v = NULL;

	(void)state;
	assert_int_equal(mc_cgroup_parse_proc("5:cpu,cpuacct:/\n"
		"4:memory:/slurm/uid_0/job_1/step_0/task_0\n0::/x\n", &v,
		rel, sizeof(rel), err, sizeof(err)), 0);
	assert_ptr_equal(v, &mc_cgroup_v1);
	assert_string_equal(rel, "/slurm/uid_0/job_1/step_0/task_0");
	/* memory co-mounted with another controller */
	assert_int_equal(mc_cgroup_parse_proc("4:cpuset,memory:/a b\n", &v,
		rel, sizeof(rel), err, sizeof(err)), 0);
	assert_string_equal(rel, "/a b");
	/* a controller whose name only contains "memory" does not count */
	assert_int_equal(mc_cgroup_parse_proc("4:name=memoryx:/a\n"
		"0::/sys/job_1/step_0/user/task_0\n", &v, rel, sizeof(rel),
		err, sizeof(err)), 0);
	assert_ptr_equal(v, &mc_cgroup_v2);
	assert_string_equal(rel, "/sys/job_1/step_0/user/task_0");
	assert_int_equal(mc_cgroup_parse_proc("4:pids:/\n", &v, rel,
		sizeof(rel), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "no memory cgroup"));
}

static void test_mountinfo(void **state)
{
	char mnt[PATH_MAX], root[PATH_MAX];

	(void)state;
	assert_int_equal(mc_cgroup_parse_mountinfo(
		"31 30 0:28 / /sys/fs/cgroup/unified rw shared:10 - cgroup2 "
		"cgroup2 rw\n36 30 0:33 /docker/ab /sys/fs/cgroup/mem\\040ory "
		"rw,nosuid shared:16 master:3 - cgroup cgroup rw,memory\n",
		&mc_cgroup_v1, mnt, sizeof(mnt), root, sizeof(root), err,
		sizeof(err)), 0);
	assert_string_equal(mnt, "/sys/fs/cgroup/mem ory");
	assert_string_equal(root, "/docker/ab");
	assert_int_equal(mc_cgroup_parse_mountinfo(
		"31 30 0:28 / /sys/fs/cgroup/unified rw shared:10 - cgroup2 "
		"cgroup2 rw\n", &mc_cgroup_v2, mnt, sizeof(mnt), root, sizeof(root), err,
		sizeof(err)), 0);
	assert_string_equal(mnt, "/sys/fs/cgroup/unified");
	/* a v1 hierarchy without memory is not it */
	assert_int_equal(mc_cgroup_parse_mountinfo(
		"35 30 0:32 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n",
		&mc_cgroup_v1, mnt, sizeof(mnt), root, sizeof(root), err,
		sizeof(err)), -1);
	assert_non_null(strstr(err, "no cgroup v1 memory mount"));
}

/* From /proc fixtures: never built from ids, read from the task's line. */
static void test_find(void **state)
{
	char proc[PATH_MAX], step[PATH_MAX];
	struct mc_cgroup cg;

	(void)state;
	fixture("proc-v1", proc, sizeof(proc));
	if (mc_cgroup_find(proc, 4242, &cg, err, sizeof(err)))
		fail_msg("%s", err);
	assert_ptr_equal(cg.ops, &mc_cgroup_v1);
	assert_string_equal(cg.dir,
		"/sys/fs/cgroup/memory/slurm_n1/uid_0/job_7/step_0/task_0");
	assert_int_equal(mc_cgroup_slurm_step(mc_cgroup_rel(&cg), 7, "0", step,
					      sizeof(step)), 0);
	assert_string_equal(step, "/slurm_n1/uid_0/job_7/step_0");
	/* another job's or step's cgroup is not this step's */
	assert_int_equal(mc_cgroup_slurm_step(mc_cgroup_rel(&cg), 77, "0", step,
					      sizeof(step)), -1);
	assert_int_equal(mc_cgroup_slurm_step(mc_cgroup_rel(&cg), 7, "1", step,
					      sizeof(step)), -1);
	assert_int_equal(mc_cgroup_slurm_step(mc_cgroup_rel(&cg), 7, "batch", step,
					      sizeof(step)), -1);
	fixture("proc-v2", proc, sizeof(proc));
	if (mc_cgroup_find(proc, 4242, &cg, err, sizeof(err)))
		fail_msg("%s", err);
	assert_ptr_equal(cg.ops, &mc_cgroup_v2);
	assert_string_equal(cg.mount, "/sys/fs/cgroup");
	assert_int_equal(mc_cgroup_slurm_step(mc_cgroup_rel(&cg), 7, "0", step,
					      sizeof(step)), 0);
	assert_string_equal(step, "/system.slice/slurmd.service/job_7/step_0");
	assert_int_equal(mc_cgroup_slurm_step("/slurm/uid_0/job_7/step_batch",
		7, "batch", step, sizeof(step)), 0);
	assert_int_equal(mc_cgroup_slurm_step("/process_api/abc", 7, "0",
		step, sizeof(step)), -1);
	assert_int_equal(mc_cgroup_find(proc, 999999, &cg, err, sizeof(err)),
			 -1);
}

/* This process, on the live machine: our /proc reading agrees with
 * libcgroup's. Skipped where there is no v1 memory hierarchy. */
static void test_find_live_matches_libcgroup(void **state)
{
	struct mc_cgroup cg;
	char *lc = NULL;

	(void)state;
	if (mc_cgroup_find(NULL, 0, &cg, err, sizeof(err)) < 0 ||
	    cg.ops != &mc_cgroup_v1 || cgroup_init() != 0 ||
	    cgroup_get_current_controller_path(getpid(), "memory", &lc) != 0) {
		free(lc);
		skip();
	}
	assert_string_equal(mc_cgroup_rel(&cg), lc[0] ? lc : "/");
	free(lc);
}

/* A scratch tree: scope/{memory.limit_in_bytes, child/, evil ->
 * ../outside, link.limit -> ../outside/memory.limit_in_bytes},
 * outside/memory.limit_in_bytes. */
static char tmp[PATH_MAX], scope[PATH_MAX], outside[PATH_MAX];

static void get(const char *dir, const char *name, char *buf, size_t len)
{
	char p[PATH_MAX * 2];
	FILE *f;
	size_t n;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "r");
	assert_non_null(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

static int tree_setup(void **state)
{
	char p[PATH_MAX * 2];
	const char *base = getenv("TMPDIR");

	(void)state;
	snprintf(tmp, sizeof(tmp), "%s/mc_cgtest.XXXXXX", base ? base : "/tmp");
	if (!mkdtemp(tmp))
		return -1;
	/* The scope path must be canonical: resolve TMPDIR's links. */
	if (!realpath(tmp, p))
		return -1;
	snprintf(tmp, sizeof(tmp), "%s", p);
	snprintf(scope, sizeof(scope), "%s/step", tmp);
	snprintf(outside, sizeof(outside), "%s/outside", tmp);
	mkdir(scope, 0755);
	mkdir(outside, 0755);
	snprintf(p, sizeof(p), "%s/child", scope);
	mkdir(p, 0755);
	mc_test_put(scope, "memory.limit_in_bytes", "9223372036854771712\n");
	mc_test_put(scope, "child/cgroup.procs", "");
	mc_test_put(outside, "memory.limit_in_bytes", "9223372036854771712\n");
	snprintf(p, sizeof(p), "%s/evil", scope);
	if (symlink("../outside", p))
		return -1;
	snprintf(p, sizeof(p), "%s/link.limit", scope);
	if (symlink("../outside/memory.limit_in_bytes", p))
		return -1;
	snprintf(p, sizeof(p), "%s/via-link", tmp);
	if (symlink("step", p))
		return -1;
	return 0;
}

static int tree_teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	return system(cmd) == 0 ? 0 : -1;
}

static void assert_outside_untouched(void)
{
	char buf[64];

	get(outside, "memory.limit_in_bytes", buf, sizeof(buf));
	assert_string_equal(buf, "9223372036854771712\n");
}

static void test_write_inside(void **state)
{
	char buf[64];

	(void)state;
	if (mc_cgroup_write_u64(scope, "memory.limit_in_bytes", 268435456,
				err, sizeof(err)))
		fail_msg("%s", err);
	get(scope, "memory.limit_in_bytes", buf, sizeof(buf));
	assert_string_equal(buf, "268435456");
	if (mc_cgroup_write(scope, "child/cgroup.procs", "4242", err,
			    sizeof(err)))
		fail_msg("%s", err);
	get(scope, "child/cgroup.procs", buf, sizeof(buf));
	assert_string_equal(buf, "4242");
	if (mc_cgroup_mkdir(scope, "memcore_7_0", err, sizeof(err)))
		fail_msg("%s", err);
	/* Exclusive: one that exists is never taken as memcore's own. */
	assert_int_equal(mc_cgroup_mkdir(scope, "memcore_7_0", err,
					 sizeof(err)), -1);
	assert_int_equal(errno, EEXIST);
	assert_non_null(strstr(err, "exists already"));
	if (mc_cgroup_rmdir(scope, "memcore_7_0", err, sizeof(err)))
		fail_msg("%s", err);
	/* already gone: no error */
	assert_int_equal(mc_cgroup_rmdir(scope, "memcore_7_0", err,
					 sizeof(err)), 0);
}

static void test_refuse_dotdot(void **state)
{
	(void)state;
	assert_int_equal(mc_cgroup_write(scope, "../outside/memory."
		"limit_in_bytes", "1", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "leave the step's cgroup"));
	assert_int_equal(mc_cgroup_write(scope, "child/../../outside/memory."
		"limit_in_bytes", "1", err, sizeof(err)), -1);
	assert_int_equal(mc_cgroup_write(scope, "./memory.limit_in_bytes",
		"1", err, sizeof(err)), -1);
	assert_int_equal(mc_cgroup_write(scope, "child//cgroup.procs", "1",
		err, sizeof(err)), -1);
	assert_int_equal(mc_cgroup_write(scope, "/etc/passwd", "1", err,
		sizeof(err)), -1);
	assert_int_equal(mc_cgroup_mkdir(scope, "..", err,
		sizeof(err)), -1);
	assert_int_equal(mc_cgroup_mkdir(scope, "../x", err,
		sizeof(err)), -1);
	assert_int_equal(mc_cgroup_rmdir(scope, "../outside", err,
		sizeof(err)), -1);
	assert_outside_untouched();
}

static void test_refuse_symlinks(void **state)
{
	char p[PATH_MAX * 2];

	(void)state;
	/* a symlinked directory on the way */
	assert_int_equal(mc_cgroup_write(scope, "evil/memory.limit_in_bytes",
		"1", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "symlink"));
	/* a symlinked file */
	assert_int_equal(mc_cgroup_write(scope, "link.limit", "1", err,
		sizeof(err)), -1);
	assert_non_null(strstr(err, "symlink"));
	/* a scope reached through a symlink */
	snprintf(p, sizeof(p), "%s/via-link", tmp);
	assert_int_equal(mc_cgroup_write(p, "memory.limit_in_bytes", "1", err,
		sizeof(err)), -1);
	assert_non_null(strstr(err, "symlink"));
	/* mkdir through a symlinked scope, rmdir of a symlink */
	assert_int_equal(mc_cgroup_mkdir(p, "memcore_7_0", err,
		sizeof(err)), -1);
	assert_int_equal(mc_cgroup_rmdir(scope, "evil", err, sizeof(err)),
			 -1);
	snprintf(p, sizeof(p), "%s/evil", scope);
	assert_int_equal(access(p, F_OK), 0);	/* the link is still there */
	/* an existing non-directory is not taken as the cgroup */
	assert_int_equal(mc_cgroup_mkdir(scope, "link.limit", err,
		sizeof(err)), -1);
	assert_outside_untouched();
}

/* Writing never creates a file: a missing control file (no memory
 * controller here) is an error, ENOENT. */
static void test_no_create(void **state)
{
	char p[PATH_MAX * 2];

	(void)state;
	assert_int_equal(mc_cgroup_write(scope, "memory.max", "1", err,
		sizeof(err)), -1);
	assert_int_equal(errno, ENOENT);
	snprintf(p, sizeof(p), "%s/memory.max", scope);
	assert_int_equal(access(p, F_OK), -1);
}

/*
 * mc_stepcg: the same calls on v1 and v2 files. Tightening lowers the hard
 * limit (and then the soft one / memory.high) and never raises it; the
 * batch step's name; where the own cgroup goes on each version.
 */
static void test_stepcg(void **state)
{
	static const struct mc_cg_limits lower_256m = {
		MC_CG_MEM_LOWER, 268435456, MC_CG_SWAP_LEAVE
	};
	char buf[64];
	bool changed;
	struct mc_cgroup cg = { .ops = &mc_cgroup_v1 }, out;

	(void)state;
	assert_string_equal(mc_stepcg_token(SLURM_BATCH_SCRIPT, buf,
					    sizeof(buf)), "batch");
	assert_string_equal(mc_stepcg_token(3, buf, sizeof(buf)), "3");
	/* v1: hard 512 MiB, soft unlimited -> both 256 MiB. */
	mc_test_put(scope, "memory.limit_in_bytes", "536870912\n");
	mc_test_put(scope, "memory.soft_limit_in_bytes", "9223372036854771712\n");
	if (mc_stepcg_constrain(MC_TEST_CG(scope, 1, NULL), &lower_256m,
				&changed, err, sizeof(err)))
		fail_msg("%s", err);
	assert_true(changed);
	get(scope, "memory.limit_in_bytes", buf, sizeof(buf));
	assert_string_equal(buf, "268435456");
	get(scope, "memory.soft_limit_in_bytes", buf, sizeof(buf));
	assert_string_equal(buf, "268435456");
	/* Never raised. */
	assert_int_equal(mc_stepcg_constrain(MC_TEST_CG(scope, 1, NULL),
					     &(struct mc_cg_limits){
						MC_CG_MEM_LOWER, 1073741824,
						MC_CG_SWAP_LEAVE },
					     &changed, err, sizeof(err)), 0);
	assert_false(changed);
	get(scope, "memory.limit_in_bytes", buf, sizeof(buf));
	assert_string_equal(buf, "268435456");
	/* v2: memory.max "max" -> the limit, memory.high too. */
	mc_test_put(scope, "memory.max", "max\n");
	mc_test_put(scope, "memory.high", "max\n");
	assert_int_equal(mc_stepcg_constrain(MC_TEST_CG(scope, 2, NULL),
					     &lower_256m, &changed, err,
					     sizeof(err)), 0);
	assert_true(changed);
	get(scope, "memory.max", buf, sizeof(buf));
	assert_string_equal(buf, "268435456");
	get(scope, "memory.high", buf, sizeof(buf));
	assert_string_equal(buf, "268435456");
	/* A file that is no limit is an error naming it. */
	mc_test_put(scope, "memory.max", "junk\n");
	assert_int_equal(mc_stepcg_constrain(MC_TEST_CG(scope, 2, NULL),
					     &(struct mc_cg_limits){
						MC_CG_MEM_LOWER, 1,
						MC_CG_SWAP_LEAVE }, &changed,
					     err, sizeof(err)), -1);
	assert_non_null(strstr(err, "memory.max: 'junk"));
	assert_int_equal(mc_stepcg_constrain(MC_TEST_CG(scope, 2, NULL),
					     &(struct mc_cg_limits){
						MC_CG_MEM_SET, 4096,
						MC_CG_SWAP_LEAVE }, NULL,
					     err, sizeof(err)), 0);
	get(scope, "memory.max", buf, sizeof(buf));
	assert_string_equal(buf, "4096");
	/* Swap: off where nobody limited it, someone's limit kept, written
	 * without a read in a cgroup just made. v2 memory.swap.max 0. */
	mc_test_put(scope, "memory.swap.max", "max\n");
	assert_int_equal(mc_stepcg_constrain(MC_TEST_CG(scope, 2, NULL),
					     &(struct mc_cg_limits){
						.swap = MC_CG_SWAP_OFF }, NULL,
					     err, sizeof(err)), 0);
	get(scope, "memory.swap.max", buf, sizeof(buf));
	assert_string_equal(buf, "0");
	mc_test_put(scope, "memory.swap.max", "1048576\n");
	assert_int_equal(mc_stepcg_constrain(MC_TEST_CG(scope, 2, NULL),
					     &(struct mc_cg_limits){
						.swap = MC_CG_SWAP_OFF }, NULL,
					     err, sizeof(err)), 0);
	get(scope, "memory.swap.max", buf, sizeof(buf));
	assert_string_equal(buf, "1048576\n");	/* as it was put */
	/* v1 memory+swap: to the hard limit read (off), to the one just
	 * set (new); a failed memory limit touches no swap. */
	mc_test_put(scope, "memory.memsw.limit_in_bytes",
		    "9223372036854771712\n");
	assert_int_equal(mc_stepcg_constrain(MC_TEST_CG(scope, 1, NULL),
					     &(struct mc_cg_limits){
						.swap = MC_CG_SWAP_OFF }, NULL,
					     err, sizeof(err)), 0);
	get(scope, "memory.memsw.limit_in_bytes", buf, sizeof(buf));
	assert_string_equal(buf, "268435456");
	assert_int_equal(mc_stepcg_constrain(MC_TEST_CG(scope, 1, NULL),
					     &(struct mc_cg_limits){
						MC_CG_MEM_SET, 134217728,
						MC_CG_SWAP_OFF_NEW }, &changed,
					     err, sizeof(err)), 0);
	assert_true(changed);
	get(scope, "memory.memsw.limit_in_bytes", buf, sizeof(buf));
	assert_string_equal(buf, "134217728");
	mc_test_put(scope, "memory.limit_in_bytes", "junk\n");
	assert_int_equal(mc_stepcg_constrain(MC_TEST_CG(scope, 1, NULL),
					     &(struct mc_cg_limits){
						MC_CG_MEM_LOWER, 4096,
						MC_CG_SWAP_OFF }, &changed,
					     err, sizeof(err)), -1);
	get(scope, "memory.memsw.limit_in_bytes", buf, sizeof(buf));
	assert_string_equal(buf, "134217728");
	mc_test_put(scope, "memory.limit_in_bytes", "268435456\n");
	assert_outside_untouched();
	/* The own cgroup's parent: v1 the cgroup itself, v2 its parent,
	 * never the root. */
	snprintf(cg.mount, sizeof(cg.mount), "%s", tmp);
	snprintf(cg.dir, sizeof(cg.dir), "%s", scope);
	assert_int_equal(mc_stepcg_own_parent(&cg, &out, err, sizeof(err)),
			 0);
	assert_string_equal(out.dir, scope);
	cg.ops = &mc_cgroup_v2;
	assert_int_equal(mc_stepcg_own_parent(&cg, &out, err, sizeof(err)),
			 0);
	assert_string_equal(out.dir, tmp);
	assert_ptr_equal(out.ops, &mc_cgroup_v2);
	assert_string_equal(out.mount, tmp);
	snprintf(cg.dir, sizeof(cg.dir), "%s", tmp);
	snprintf(cg.mount, sizeof(cg.mount), "%s", scope);
	assert_int_equal(mc_stepcg_own_parent(&cg, &out, err, sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "at the root"));
	/* v2 needs memory in the parent's subtree_control; v1 never. */
	assert_int_equal(mc_stepcg_own_ready(MC_TEST_CG(scope, 1, NULL), err, sizeof(err)), 0);
	mc_test_put(scope, "cgroup.subtree_control", "cpu io\n");
	assert_int_equal(mc_stepcg_own_ready(MC_TEST_CG(scope, 2, NULL), err,
					     sizeof(err)), -1);
	assert_non_null(strstr(err, "cgroup.subtree_control has no 'memory'"));
	mc_test_put(scope, "cgroup.subtree_control", "cpu memory\n");
	assert_int_equal(mc_stepcg_own_ready(MC_TEST_CG(scope, 2, NULL), err,
					     sizeof(err)), 0);
	mc_test_put(scope, "memory.limit_in_bytes", "9223372036854771712\n");
}

int main(void)
{
	const char *top = getenv("MC_TOP");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v1_step),
		cmocka_unit_test(test_v1_task_hierarchical_limit),
		cmocka_unit_test(test_v1_populated),
		cmocka_unit_test(test_v2_step),
		cmocka_unit_test(test_v2_slurm_layout),
		cmocka_unit_test(test_parse_mapping),
		cmocka_unit_test(test_parse_limits),
		cmocka_unit_test(test_not_a_memory_cgroup),
		cmocka_unit_test(test_proc_cgroup),
		cmocka_unit_test(test_mountinfo),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_find_live_matches_libcgroup),
	};
	const struct CMUnitTest safety[] = {
		cmocka_unit_test(test_write_inside),
		cmocka_unit_test(test_refuse_dotdot),
		cmocka_unit_test(test_refuse_symlinks),
		cmocka_unit_test(test_no_create),
		cmocka_unit_test(test_stepcg),
	};
	int fails;

	snprintf(data, sizeof(data), "%s/tests/data/cgroup", top ? top : ".");
	fails = cmocka_run_group_tests_name("cgroup", tests, NULL, NULL);
	fails += cmocka_run_group_tests_name("cgroup path safety", safety,
					     tree_setup, tree_teardown);
	return fails ? 1 : 0;
}
