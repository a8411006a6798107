/*
 * test_sampler.c - slurmstepd's sampler thread (spank/mc_sampler.c) on a
 * fixture cgroup whose files change while it runs: it samples every
 * interval, keeps the peak, stops and is joined; a read that hangs (a stuck
 * cgroupfs) never holds mc_sampler_stop past MC_SAMPLER_JOIN_MS, and the
 * figures read so far still come back. Built from the plugin's own source:
 * the thread needs no Slurm.
 */
#define _GNU_SOURCE	/* as spank/mc_sampler.c: pthread_timedjoin_np */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "mc_test_files.h"
#include "mc_test_cg.h"

#include "../../spank/mc_sampler.c"

#define MIB (1024ULL * 1024)

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1e3 + (t.tv_nsec - t0->tv_nsec) / 1e6;
}

static char dir[] = "/tmp/mc_test_sampler.XXXXXX";

static void stat_of(uint64_t anon, uint64_t file)
{
	char buf[256];

	snprintf(buf, sizeof(buf), "anon %llu\nshmem 0\nactive_file %llu\n"
		 "inactive_file 0\n", (unsigned long long)anon,
		 (unsigned long long)file);
	mc_test_put(dir, "memory.stat", buf);
	snprintf(buf, sizeof(buf), "%llu\n",
		 (unsigned long long)(anon + file));
	mc_test_put(dir, "memory.current", buf);
}

/* A 1 GiB spike for 400 ms between small figures: kept as the peak. */
static void test_samples(void **state)
{
	struct mc_sampler s;
	struct mc_peak pk;
	uint64_t cpu, wall;
	char err[512];

	(void)state;
	stat_of(10 * MIB, 5 * MIB);
	mc_test_put(dir, "cpu.stat", "usage_usec 1000\n");
	assert_int_equal(mc_sampler_start(&s, MC_TEST_CG(dir, 2, NULL), 100, err, sizeof(err)),
			 0);
	sleep_ms(250);
	stat_of(1024 * MIB, 300 * MIB);
	mc_test_put(dir, "cpu.stat", "usage_usec 500000\n");
	sleep_ms(400);
	stat_of(20 * MIB, 2048 * MIB);
	sleep_ms(250);
	mc_sampler_stop(&s, &pk, &cpu, &wall);
	assert_true(s.joined);
	assert_true(pk.samples >= 5);
	assert_int_equal(pk.nr_bytes, 1024 * MIB);
	assert_int_equal(pk.file_at_nr_bytes, 300 * MIB);
	assert_int_equal(pk.max_file_bytes, 2048 * MIB);
	assert_int_equal(cpu, 500000 - 1000);
	assert_true(wall >= 850000 && wall < 2000000);
	/* Again: the same figures, no second join. */
	mc_sampler_stop(&s, &pk, &cpu, &wall);
	assert_int_equal(pk.nr_bytes, 1024 * MIB);
}

/* The timeline: a point per sample (a short step), the one taken at the
 * stop among them, the spike where it was, and the OOM kill in the first
 * point whose sample counted it (memory.events). */
static void test_timeline(void **state)
{
	struct mc_sampler s;
	struct mc_timeline tl;
	struct mc_peak pk;
	uint64_t cpu, wall, before;
	char err[512];
	int32_t first_big = -1;

	(void)state;
	stat_of(10 * MIB, 5 * MIB);
	mc_test_put(dir, "memory.events", "low 0\nhigh 0\nmax 0\noom 0\n"
		    "oom_kill 0\n");
	assert_int_equal(mc_sampler_start(&s, MC_TEST_CG(dir, 2, NULL), 100, err, sizeof(err)),
			 0);
	sleep_ms(250);
	stat_of(1024 * MIB, 300 * MIB);
	sleep_ms(400);
	pthread_mutex_lock(&s.mu);
	before = s.peak.samples;
	pthread_mutex_unlock(&s.mu);
	mc_test_put(dir, "memory.events", "low 0\nhigh 0\nmax 3\noom 1\n"
		    "oom_kill 1\n");
	stat_of(1 * MIB, 0);
	sleep_ms(250);
	mc_sampler_stop(&s, &pk, &cpu, &wall);
	mc_sampler_timeline(&s, &tl);
	assert_int_equal(tl.per_point, 1);
	assert_int_equal(tl.n, pk.samples + 1);	/* and the one at the stop */
	assert_int_equal(tl.nr_bytes[0], 10 * MIB);
	assert_int_equal(tl.file_bytes[0], 5 * MIB);
	for (uint32_t i = 0; i < tl.n; i++)
		if (tl.nr_bytes[i] == 1024 * MIB && first_big < 0)
			first_big = (int32_t)i;
	assert_true(first_big >= 1);
	assert_int_equal(tl.nr_bytes[tl.n - 1], 1 * MIB);
	assert_true(tl.oom_point > first_big);
	assert_true((uint64_t)tl.oom_point >= before);
}

static int hung_reads;

/* A read that never comes back in time, after one good sample. */
static int hanging_read(struct mc_cgread_src *src, struct mc_sample *out)
{
	if (hung_reads++ == 0)
		return mc_cgread_read(src, out);
	sleep(3);
	return -1;
}

static void test_stuck_read(void **state)
{
	struct mc_sampler s;
	struct mc_peak pk;
	struct timespec t0;
	uint64_t cpu, wall;
	char err[512];
	double took;

	(void)state;
	stat_of(64 * MIB, 0);
	assert_int_equal(mc_sampler_start_with(&s, MC_TEST_CG(dir, 2, NULL), 100, hanging_read,
					       err, sizeof(err)), 0);
	sleep_ms(300);		/* the second read is hanging now */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	mc_sampler_stop(&s, &pk, &cpu, &wall);
	took = ms_since(&t0);
	assert_false(s.joined);
	assert_true(took < MC_SAMPLER_JOIN_MS + 100);
	assert_true(took >= MC_SAMPLER_JOIN_MS - 10);
	assert_int_equal(pk.samples, 1);
	assert_int_equal(pk.nr_bytes, 64 * MIB);
	sleep(3);	/* let it end before the fixture goes */
}

static void test_no_cgroup(void **state)
{
	struct mc_sampler s;
	struct mc_peak pk;
	uint64_t cpu, wall;
	char err[512];

	(void)state;
	assert_int_equal(mc_sampler_start(&s, MC_TEST_CG("/nonexistent/cg", 2, NULL), 100, err,
					  sizeof(err)), -1);
	assert_non_null(strstr(err, "/nonexistent/cg"));
	mc_sampler_stop(&s, &pk, &cpu, &wall);	/* never started: zeros */
	assert_int_equal(pk.samples, 0);
	assert_int_equal(wall, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_samples),
		cmocka_unit_test(test_timeline),
		cmocka_unit_test(test_stuck_read),
		cmocka_unit_test(test_no_cgroup),
	};
	char cmd[128];
	int rc;

	if (!mkdtemp(dir))
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		rc = 1;
	return rc;
}
