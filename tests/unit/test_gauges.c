/*
 * test_gauges.c - a running step's live gauges: the text (report/
 * mc_gauges.c) against text printed here independently with stdio, and
 * the file (spank/mc_gaugefile.c, built in: it links no Slurm) in a
 * temporary directory: written whole, never through a planted link,
 * removed, and the stale files of dead slurmstepds cleaned; and the
 * sampler thread (spank/mc_sampler.c) writing it through its hook from a
 * fixture cgroup, until the hook is taken off.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mc_gauges.h"
#include "mc_metrics.h"
#include "mc_test_files.h"
#include "mc_test_cg.h"
#include "../../spank/mc_gaugefile.c"
#include "../../spank/mc_sampler.c"

/* Escape v as the text format wants, with stdio. */
static void esc(char *out, size_t len, const char *v)
{
	size_t n = 0;

	for (; *v && n + 3 < len; v++)
		n += (size_t)snprintf(out + n, len - n, "%s",
				      *v == '\\' ? "\\\\" : *v == '"' ? "\\\""
				      : *v == '\n' ? "\\n"
				      : (char[2]){ *v, 0 });
	out[n] = '\0';
}

static void test_u64(void **state)
{
	uint64_t vals[] = { 0, 1, 9, 10, 99, 100, 4294967295ULL,
			    4294967296ULL, 1ULL << 53, UINT64_MAX - 1,
			    UINT64_MAX };
	char got[21], want[32];
	uint64_t x = 88172645463325252ULL;

	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		snprintf(want, sizeof(want), "%" PRIu64, vals[i]);
		assert_int_equal(mc_gauges_u64(vals[i], got), strlen(want));
		assert_string_equal(got, want);
	}
	for (int i = 0; i < 10000; i++) {	/* xorshift64 */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		snprintf(want, sizeof(want), "%" PRIu64, x >> (i % 64));
		mc_gauges_u64(x >> (i % 64), got);
		assert_string_equal(got, want);
	}
}

static void test_labels(void **state)
{
	struct mc_gauge_ids ids = { "1234", "0", "al\"ice\\", "gpu07", "" };
	char got[MC_GAUGES_LABELS_MAX], want[MC_GAUGES_LABELS_MAX], u[64];
	char long_name[MC_METRICS_LABEL_MAX + 1];

	esc(u, sizeof(u), ids.user);
	snprintf(want, sizeof(want), "{jobid=\"%s\",step=\"%s\",user=\"%s\","
		 "node=\"%s\",partition=\"%s\"}", ids.job, ids.step, u,
		 ids.node, MC_METRICS_OTHER);
	assert_int_equal(mc_gauges_labels(&ids, got, sizeof(got)),
			 strlen(want));
	assert_string_equal(got, want);
	ids.partition = "gpu";
	assert_true(mc_gauges_labels(&ids, got, sizeof(got)) > 0);
	assert_non_null(strstr(got, ",partition=\"gpu\"}"));
	/* Too small a buffer: refused, never cut. */
	assert_int_equal(mc_gauges_labels(&ids, got, strlen(want) - 3), -1);
	assert_string_equal(got, "");
	/* No valid label: no gauges (never repaired). */
	ids.user = "bad\x01user";
	assert_int_equal(mc_gauges_labels(&ids, got, sizeof(got)), -1);
	ids.user = "ok";
	ids.node = "\xc3\x28";	/* invalid UTF-8 */
	assert_int_equal(mc_gauges_labels(&ids, got, sizeof(got)), -1);
	memset(long_name, 'n', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	ids.node = long_name;
	assert_int_equal(mc_gauges_labels(&ids, got, sizeof(got)), -1);
	ids.node = "gpu07";
	ids.job = "";
	assert_int_equal(mc_gauges_labels(&ids, got, sizeof(got)), -1);
	/* The longest labels, each all escapes, fit the bound. */
	{
		char q[MC_METRICS_LABEL_MAX];

		memset(q, '"', sizeof(q) - 1);
		q[sizeof(q) - 1] = '\0';
		ids = (struct mc_gauge_ids){ q, q, q, q, q };
		assert_true(mc_gauges_labels(&ids, got, sizeof(got)) > 0);
	}
}

static void test_format(void **state)
{
	const char *labels = "{jobid=\"7\",step=\"batch\",user=\"bob\","
			     "node=\"n1\",partition=\"gpu\"}";
	uint64_t v[MC_G_COUNT] = { 104857600, 536870912, 4294967296ULL,
				   171798692 };
	char got[MC_GAUGES_TEXT_MAX], want[MC_GAUGES_TEXT_MAX];
	const char *names[] = { "memcore_step_memory_nonreclaimable_bytes",
				"memcore_step_memory_page_cache_bytes",
				"memcore_step_memory_limit_bytes",
				"memcore_step_memory_rule_bytes" };
	int len;

	len = mc_gauges_format(labels, v, got, sizeof(got));
	assert_true(len > 0);
	assert_int_equal(len, strlen(got));
	/* Each gauge: its HELP, TYPE gauge, one sample; in this order. */
	{
		const char *p = got;

		for (int k = 0; k < MC_G_COUNT; k++) {
			assert_string_equal(mc_gauge_names[k], names[k]);
			snprintf(want, sizeof(want), "# HELP %s ", names[k]);
			assert_ptr_equal(strstr(p, want), p);
			p = strchr(p, '\n') + 1;
			snprintf(want, sizeof(want), "# TYPE %s gauge\n%s%s "
				 "%" PRIu64 "\n", names[k], names[k], labels,
				 v[k]);
			assert_ptr_equal(strstr(p, want), p);
			p += strlen(want);
		}
		assert_string_equal(p, "");
	}
	/* Too small: -1 and nothing, at every length short of the whole. */
	for (int l = 0; l <= len; l++) {
		assert_int_equal(mc_gauges_format(labels, v, got, (size_t)l),
				 -1);
		if (l)
			assert_string_equal(got, "");
	}
	assert_int_equal(mc_gauges_format(labels, v, got, (size_t)len + 1),
			 len);
	/* The longest labels and values fit MC_GAUGES_TEXT_MAX. */
	{
		char big[MC_GAUGES_LABELS_MAX];
		uint64_t m[MC_G_COUNT] = { UINT64_MAX, UINT64_MAX, UINT64_MAX,
					   UINT64_MAX };

		memset(big, 'x', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		assert_true(mc_gauges_format(big, m, got, sizeof(got)) > 0);
	}
}

static char dir[64];
static int dfd = -1;

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/mc-gauges-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	return dfd < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	char cmd[128];

	close(dfd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void slurp(const char *name, char *buf, size_t len)
{
	int fd = openat(dfd, name, O_RDONLY);
	ssize_t n;

	assert_true(fd >= 0);
	n = read(fd, buf, len - 1);
	assert_true(n >= 0);
	buf[n] = '\0';
	close(fd);
}

static bool there(const char *name)
{
	struct stat st;

	return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static void test_name(void **state)
{
	char n[NAME_MAX + 1], big[NAME_MAX];

	assert_int_equal(mc_gaugefile_name(n, "gpu07", 4242, 1234, "0"), 0);
	assert_string_equal(n, "memcore_step_gpu07_4242_1234_0.prom");
	assert_int_equal(mc_gaugefile_name(n, "n-1.x", 1, 4294967295U,
					   "batch"), 0);
	assert_string_equal(n, "memcore_step_n-1.x_1_4294967295_batch.prom");
	/* '_' would make names ambiguous, '/' leave the directory. */
	assert_int_equal(mc_gaugefile_name(n, "a_b", 1, 1, "0"), -1);
	assert_int_equal(mc_gaugefile_name(n, "../x", 1, 1, "0"), -1);
	assert_int_equal(mc_gaugefile_name(n, "a", 1, 1, "0/1"), -1);
	assert_int_equal(mc_gaugefile_name(n, "", 1, 1, "0"), -1);
	assert_int_equal(mc_gaugefile_name(n, "a", 0, 1, "0"), -1);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(mc_gaugefile_name(n, big, 1, 1, "0"), -1);
}

static void setup_file(struct mc_gaugefile *g, long pid)
{
	struct mc_gauge_ids ids = { "9", "0", "bob", "n1", "gpu" };

	memset(g, 0, sizeof(*g));
	assert_true(mc_gauges_labels(&ids, g->labels, sizeof(g->labels)) > 0);
	assert_int_equal(mc_gaugefile_name(g->name, "n1", pid, 9, "0"), 0);
	snprintf(g->tmp, sizeof(g->tmp), ".%s.tmp", g->name);
	g->dfd = dfd;
	g->v[MC_G_LIMIT] = 1ULL << 32;
	g->v[MC_G_RULE] = 171798692;
	g->every_ms = 60000;
	g->on = true;
}

static void test_write(void **state)
{
	struct mc_gaugefile g;
	char got[MC_GAUGES_TEXT_MAX], want[MC_GAUGES_TEXT_MAX], victim[128];
	uint64_t v[MC_G_COUNT];
	struct stat st;
	int fd;

	setup_file(&g, (long)getpid());
	assert_int_equal(mc_gaugefile_write(&g, 100, 200, false), 0);
	assert_int_equal(g.writes, 1);
	assert_true(g.written);
	v[MC_G_NONRECLAIMABLE] = 100;
	v[MC_G_PAGE_CACHE] = 200;
	v[MC_G_LIMIT] = 1ULL << 32;
	v[MC_G_RULE] = 171798692;
	assert_true(mc_gauges_format(g.labels, v, want, sizeof(want)) > 0);
	slurp(g.name, got, sizeof(got));
	assert_string_equal(got, want);
	assert_false(there(g.tmp));
	assert_int_equal(fstatat(dfd, g.name, &st, 0), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	/* Within every_ms: skipped; forced: written. */
	assert_int_equal(mc_gaugefile_write(&g, 1, 2, false), 0);
	assert_int_equal(g.writes, 1);
	assert_int_equal(mc_gaugefile_write(&g, 300, 400, true), 0);
	assert_int_equal(g.writes, 2);
	slurp(g.name, got, sizeof(got));
	assert_non_null(strstr(got, "_nonreclaimable_bytes{jobid=\"9\",step=\"0\","
			       "user=\"bob\",node=\"n1\",partition=\"gpu\"} "
			       "300\n"));
	/* A symlink planted as the temporary file: the link goes, its
	 * target is never written. */
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	fd = open(victim, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "keep", 4), 4);
	close(fd);
	assert_int_equal(symlinkat(victim, dfd, g.tmp), 0);
	assert_int_equal(mc_gaugefile_write(&g, 500, 600, true), 0);
	slurp("victim", got, sizeof(got));
	assert_string_equal(got, "keep");
	slurp(g.name, got, sizeof(got));
	assert_non_null(strstr(got, "} 500\n"));
	assert_int_equal(g.failures, 0);
	/* A directory under the temporary name cannot be removed: the write
	 * fails, counted, the first errno kept; the file stays as it was. */
	assert_int_equal(mkdirat(dfd, g.tmp, 0700), 0);
	assert_int_equal(mc_gaugefile_write(&g, 700, 800, true), -1);
	assert_int_equal(g.failures, 1);
	assert_string_equal(g.first_what, "create its temporary file");
	assert_true(g.first_errno == EEXIST);
	slurp(g.name, got, sizeof(got));
	assert_non_null(strstr(got, "} 500\n"));
	assert_int_equal(unlinkat(dfd, g.tmp, AT_REMOVEDIR), 0);
	/* Removed at the end, and again harmlessly. */
	assert_int_equal(mc_gaugefile_remove(&g), 0);
	assert_false(there(g.name));
	assert_int_equal(mc_gaugefile_remove(&g), 0);
	unlinkat(dfd, "victim", 0);
	/* Not set up: nothing written. */
	g.on = false;
	assert_int_equal(mc_gaugefile_write(&g, 1, 1, true), 0);
	assert_false(there(g.name));
}

/* A pid that names no process: a child, reaped. */
static long dead_pid(void)
{
	pid_t c = fork();

	if (!c)
		_exit(0);
	assert_true(c > 0);
	waitpid(c, NULL, 0);
	return (long)c;
}

static void touch(const char *name)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT, 0644);

	assert_true(fd >= 0);
	close(fd);
}

static void test_clean(void **state)
{
	char n[8][NAME_MAX + 1], t[NAME_MAX + 2], exe[128];
	long dead = dead_pid(), self = (long)getpid();
	pid_t stepd;
	int status;

	/* A live process named slurmstepd: a copy of sleep under that name
	 * (its comm). */
	snprintf(exe, sizeof(exe), "%s/slurmstepd", dir);
	{
		char cmd[256];

		snprintf(cmd, sizeof(cmd), "cp /bin/sleep '%s'", exe);
		assert_int_equal(system(cmd), 0);
	}
	stepd = fork();
	if (!stepd) {
		execl(exe, "slurmstepd", "30", (char *)NULL);
		_exit(127);
	}
	assert_true(stepd > 0);
	usleep(200000);
	mc_gaugefile_name(n[0], "n1", dead, 5, "0");	/* stale: removed */
	mc_gaugefile_name(n[1], "n1", self, 6, "0");	/* ours: kept */
	mc_gaugefile_name(n[2], "n1", (long)stepd, 7, "batch"); /* kept */
	mc_gaugefile_name(n[3], "n2", dead, 8, "0");	/* other node: kept */
	mc_gaugefile_name(n[4], "n1", 1, 9, "0");	/* pid 1: no stepd */
	mc_gaugefile_name(n[5], "n1.x", dead, 10, "0");	/* other node */
	for (int i = 0; i < 6; i++)
		touch(n[i]);
	snprintf(t, sizeof(t), ".%s.tmp", n[0]);	/* stale temp */
	touch(t);
	touch("memcore.prom");				/* the counters */
	touch("memcore_step_n1_x_1_0.prom");		/* no pid: kept */
	assert_int_equal(mc_gaugefile_clean(dfd, "n1", self), 3);
	assert_false(there(n[0]));
	assert_true(there(n[1]));
	assert_true(there(n[2]));
	assert_true(there(n[3]));
	assert_false(there(n[4]));
	assert_true(there(n[5]));
	assert_false(there(t));
	assert_true(there("memcore.prom"));
	assert_true(there("memcore_step_n1_x_1_0.prom"));
	/* Once the slurmstepd is gone, its file goes too. */
	kill(stepd, SIGKILL);
	waitpid(stepd, &status, 0);
	assert_int_equal(mc_gaugefile_clean(dfd, "n1", self), 1);
	assert_false(there(n[2]));
	assert_int_equal(mc_gaugefile_clean(dfd, "a_b", self), 0);
}

static void on_sample(void *arg, const struct mc_sample *smp)
{
	mc_gaugefile_write(arg, smp->non_reclaimable_bytes, smp->file_bytes,
			   false);
}

static void cgroup_of(const char *cg, uint64_t anon, uint64_t file)
{
	char buf[256];

	snprintf(buf, sizeof(buf), "anon %llu\nshmem 0\nactive_file %llu\n"
		 "inactive_file 0\n", (unsigned long long)anon,
		 (unsigned long long)file);
	mc_test_put(cg, "memory.stat", buf);
	snprintf(buf, sizeof(buf), "%llu\n",
		 (unsigned long long)(anon + file));
	mc_test_put(cg, "memory.current", buf);
}

/* The sampler's hook writes the file from its thread, each sample's
 * figures; none once the hook is off and the sampler stopped. */
static void test_sampler_hook(void **state)
{
	static struct mc_gaugefile g;
	struct mc_sampler s;
	struct mc_peak pk;
	uint64_t cpu, wall;
	char cg[128], err[512], got[MC_GAUGES_TEXT_MAX], want[64];
	uint64_t written;

	snprintf(cg, sizeof(cg), "%s/cg", dir);
	assert_int_equal(mkdir(cg, 0700), 0);
	cgroup_of(cg, 100 << 20, 7 << 20);
	setup_file(&g, (long)getpid());
	g.every_ms = 0;		/* every sample */
	assert_int_equal(mc_sampler_start(&s, MC_TEST_CG(cg, 2, NULL), 100, err, sizeof(err)),
			 0);
	mc_sampler_set_hook(&s, on_sample, &g);
	for (int i = 0; i < 50 && !there(g.name); i++)
		usleep(20000);
	assert_true(there(g.name));
	slurp(g.name, got, sizeof(got));
	snprintf(want, sizeof(want), "} %llu\n", 100ULL << 20);
	assert_non_null(strstr(got, want));	/* non-reclaimable */
	snprintf(want, sizeof(want), "} %llu\n", 7ULL << 20);
	assert_non_null(strstr(got, want));	/* page cache */
	cgroup_of(cg, 300 << 20, 1 << 20);
	usleep(400000);
	slurp(g.name, got, sizeof(got));
	snprintf(want, sizeof(want), "} %llu\n", 300ULL << 20);
	assert_non_null(strstr(got, want));
	mc_sampler_set_hook(&s, NULL, NULL);
	mc_sampler_stop(&s, &pk, &cpu, &wall);
	assert_true(s.joined);
	written = g.writes;
	assert_true(written >= 3);
	assert_int_equal(g.failures, 0);
	usleep(300000);
	assert_int_equal(g.writes, written);
	assert_int_equal(mc_gaugefile_remove(&g), 0);
	assert_false(there(g.name));
	/* Not started: setting a hook does nothing. */
	memset(&s, 0, sizeof(s));
	mc_sampler_set_hook(&s, on_sample, &g);
	assert_null(s.hook);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_u64),
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_name),
		cmocka_unit_test_setup_teardown(test_write, setup, teardown),
		cmocka_unit_test_setup_teardown(test_clean, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sampler_hook, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
