/*
 * test_summary.c - after the step: the running peaks
 * (report/mc_summary.h), the advice and its rule floor, the record kept
 * with the job, and the sampler's reads (cgroup/mc_cgread.h) on the
 * fixture trees of tests/data/cgroup and on files that change between
 * reads.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "mc_test_files.h"
#include "mc_test_cg.h"

#include "mc_jobrec.h"
#include "mc_metrics.h"
#include "mc_cgread.h"
#include "mc_summary.h"

#define MIB (1024ULL * 1024)
#define GIB (1024ULL * MIB)

/* The peak is the sample with the most non-reclaimable memory, and the
 * page cache beside it is that sample's, not the largest seen. */
static void test_peak(void **state)
{
	struct mc_peak pk = { 0 };

	(void)state;
	/* usage, anon, shmem, file */
	mc_peak_add(&pk, 2348 * MIB, 300 * MIB, 0, 2048 * MIB);
	mc_peak_add(&pk, 1100 * MIB, 1024 * MIB, 10 * MIB, 50 * MIB);
	mc_peak_add(&pk, 3000 * MIB, 100 * MIB, 64 * MIB, 2900 * MIB);
	mc_peak_add(&pk, 10 * MIB, 0, 0, 20 * MIB);	/* v1: usage < file */
	assert_int_equal(pk.samples, 4);
	assert_int_equal(pk.nr_bytes, 1050 * MIB);
	assert_int_equal(pk.file_at_nr_bytes, 50 * MIB);
	assert_int_equal(pk.anon_at_nr_bytes, 1024 * MIB);
	assert_int_equal(pk.shmem_at_nr_bytes, 10 * MIB);
	assert_int_equal(pk.max_shmem_bytes, 64 * MIB);
	assert_int_equal(pk.max_file_bytes, 2900 * MIB);
	assert_int_equal(pk.max_usage_bytes, 3000 * MIB);
}

/* The same sample as often as the advice needs (MC_SUMMARY_MIN_SAMPLES). */
static void peak_enough(struct mc_peak *pk, uint64_t usage, uint64_t anon,
			uint64_t shmem, uint64_t file)
{
	for (int i = 0; i < MC_SUMMARY_MIN_SAMPLES; i++)
		mc_peak_add(pk, usage, anon, shmem, file);
}

/* 8 GPUs, 2 workers, 4 GiB per worker: the seed example's shape. */
static struct mc_used usage8(void)
{
	struct mc_used u = { 0 };

	u.asked_bytes = 800 * GIB;
	u.gpus = 8;
	u.workers = 2;
	u.cores_allocated = 24;
	u.rule_bytes = 704 * GIB;
	u.rule_cores = 24;
	u.ram_per_worker_bytes = 4 * GIB;
	u.wall_usec = 1000000000ULL;	/* 1000 s */
	u.cpu_usec = 12 * u.wall_usec;	/* 12 cores busy: half */
	return u;
}

static void test_advise(void **state)
{
	struct mc_used u = usage8();
	struct mc_advice a;

	(void)state;
	/* The peak well below the rule: the rule's figure, said so. */
	mc_peak_add(&u.peak, 100 * GIB, 100 * GIB, 0, 0);
	mc_summary_advise(&u, &a);
	assert_int_equal(a.busy_milli, 12000);
	assert_int_equal(a.workers, 2);
	assert_int_equal(a.cpus_per_gpu, 3);
	assert_true(a.mem_is_rule);
	/* On a node of 2 threads per core, Slurm's --cpus-per-gpu counts
	 * threads: the same 3 cores are --cpus-per-gpu=6. */
	u.threads_per_core = 2;
	mc_summary_advise(&u, &a);
	assert_int_equal(a.cpus_per_gpu, 3 * 2);
	u.threads_per_core = 0;
	mc_summary_advise(&u, &a);
	assert_int_equal(a.mem_bytes, 704 * GIB);
	assert_int_equal(a.mem_from_peak_bytes, 120 * GIB);

	/* Above the rule: peak + 20%, rounded up to MiB. */
	u = usage8();
	mc_peak_add(&u.peak, 700 * GIB + 1, 700 * GIB + 1, 0, 0);
	mc_summary_advise(&u, &a);
	assert_false(a.mem_is_rule);
	assert_int_equal(a.mem_bytes, 840 * GIB + MIB);

	/* Saturated cores (23 of 24): one more worker, its core and RAM. */
	u = usage8();
	u.cpu_usec = 23 * u.wall_usec;
	mc_summary_advise(&u, &a);
	assert_int_equal(a.workers, 3);
	assert_int_equal(a.cpus_per_gpu, 4);
	assert_int_equal(a.mem_bytes, 704 * GIB + 8 * 4 * GIB);

	/* Mostly idle cores (8 of 24 busy, w=4): fewer workers, never
	 * fewer than one; the rule for them is lower by their RAM. */
	u = usage8();
	u.workers = 4;
	u.rule_bytes = 768 * GIB;
	u.rule_cores = 40;
	u.cores_allocated = 40;
	u.cpu_usec = 8 * u.wall_usec;
	mc_summary_advise(&u, &a);
	assert_int_equal(a.workers, 1);
	assert_int_equal(a.cpus_per_gpu, 2);
	assert_int_equal(a.mem_bytes, 768 * GIB - 3 * 8 * 4 * GIB);

	/* WorkersPerCore=2 (deit#81's 4 workers on 4 CPUs a GPU): one
	 * more worker than 4 needs ceil(5 / 2) + 1 = 4 cores, not 6; a
	 * record without the field (0) is the book's rule, w + 1. */
	u = usage8();
	u.workers = 4;
	u.workers_per_core = 2;
	u.rule_cores = 24;
	u.cores_allocated = 24;
	u.cpu_usec = 24 * u.wall_usec;
	mc_summary_advise(&u, &a);
	assert_int_equal(a.workers, 5);
	assert_int_equal(a.cpus_per_gpu, 4);
	u.workers_per_core = 0;
	u.rule_cores = 40;
	u.cores_allocated = 40;
	u.cpu_usec = 40 * u.wall_usec;
	mc_summary_advise(&u, &a);
	assert_int_equal(a.cpus_per_gpu, 6);

	/* MinCoresPerGpu=16 (the rule's cores above w + 1) holds. */
	u = usage8();
	u.rule_cores = 128;
	u.cores_allocated = 128;
	mc_summary_advise(&u, &a);
	assert_int_equal(a.cpus_per_gpu, 16);

	/* OOM-killed: 1.5 x the limit at least, flagged. */
	u = usage8();
	u.asked_bytes = 256 * MIB;
	u.rule_bytes = 100 * MIB;
	u.oom_kills = 1;
	u.kernel_peak_bytes = 256 * MIB;
	mc_summary_oom_peak(&u, 16 * MIB);
	assert_true(u.peak.at_kill);
	assert_int_equal(u.peak.nr_bytes, 256 * MIB);
	assert_int_equal(u.peak.shmem_at_nr_bytes, 16 * MIB);
	assert_int_equal(u.peak.anon_at_nr_bytes, 240 * MIB);
	mc_summary_advise(&u, &a);
	assert_true(a.mem_unknown_oom);
	assert_int_equal(a.mem_bytes, 384 * MIB);
}

/*
 * srun --mem=4176M --dataloader-workers=1 true: a step of a few
 * milliseconds, sampled every second, ends before its first sample. No
 * advice from that (its CPU time over 4 ms is noise), said; the same
 * from the record kept with the job (memcore report recomputes it).
 */
static void test_too_few_samples(void **state)
{
	struct mc_used u = { 0 }, v;
	struct mc_advice a, back;
	struct mc_summary_text t;
	char buf[1024], step[16], host[16];

	(void)state;
	u.asked_bytes = 4176 * MIB;
	u.gpus = 1;
	u.workers = 1;
	u.cores_allocated = 2;
	u.rule_bytes = 4176 * MIB;
	u.rule_cores = 2;
	u.ram_per_worker_bytes = 4 * GIB;
	u.sample_interval_ms = 1000;
	u.wall_usec = 4000;
	u.cpu_usec = 3900;
	mc_summary_advise(&u, &a);
	assert_true(a.too_few);
	assert_int_equal(a.workers, 1);
	assert_int_equal(a.mem_bytes, 4176 * MIB);
	mc_summary_explain(&u, &a, "7.0", "g4dn", NULL, &t);
	assert_string_equal(t.line[t.n - 1], "  next time    no advice: 0 "
			    "samples over 0.0 s are too few to size a next "
			    "run (at least 3, over 1 s or more): ask as this "
			    "time");
	mc_summary_log_line(&u, &a, "7.0", buf, sizeof(buf));
	assert_non_null(strstr(buf, " next=none (too few samples)"));
	assert_null(strstr(buf, "--dataloader-workers"));
	assert_int_equal(mc_summary_record(&u, &a, "7.0", "g4dn", buf,
					   sizeof(buf)), 0);
	assert_int_equal(mc_summary_record_parse(buf, &v, &back, step,
						 sizeof(step), host,
						 sizeof(host)), 0);
	assert_true(back.too_few);
	/* Two samples over 2 s: still too few; a third is enough. */
	u.wall_usec = 2000000;
	u.cpu_usec = 1000000;
	mc_peak_add(&u.peak, 300 * MIB, 300 * MIB, 0, 0);
	mc_peak_add(&u.peak, 300 * MIB, 300 * MIB, 0, 0);
	mc_summary_advise(&u, &a);
	assert_true(a.too_few);
	mc_peak_add(&u.peak, 300 * MIB, 300 * MIB, 0, 0);
	mc_summary_advise(&u, &a);
	assert_false(a.too_few);
	/* An OOM kill is advice whatever the samples. */
	u = v;
	u.oom_kills = 1;
	mc_summary_advise(&u, &a);
	assert_false(a.too_few);
	assert_true(a.mem_unknown_oom);
}

static void test_text(void **state)
{
	struct mc_used u = usage8();
	struct mc_advice a;
	struct mc_summary_text t;
	char buf[1024];
	bool next = false, why = false;

	(void)state;
	u.mem_form = MC_MEM_PER_GPU;
	peak_enough(&u.peak, 100 * GIB, 90 * GIB, 10 * GIB, 30 * GIB);
	mc_summary_advise(&u, &a);
	assert_string_equal(mc_summary_mem_option(&u, 704 * GIB, buf,
						  sizeof(buf)),
			    "--mem-per-gpu=88G");
	u.sample_interval_ms = 1000;
	u.cgroup_version = 2;
	mc_summary_explain(&u, &a, "12.0", "gpu07", NULL, &t);
	assert_string_equal(t.line[0], "memcore: step 12.0 on gpu07 used (3 "
			    "samples, every 1000 ms, over 17 min):");
	for (size_t i = 0; i < t.n; i++) {
		if (strstr(t.line[i], "next time    --mem-per-gpu=88G "
			   "--cpus-per-gpu=3 --dataloader-workers=2"))
			next = true;
		if (strstr(t.line[i], "the rule's figure: the peak plus 20% "
			   "is only 84 GiB"))
			why = true;
	}
	assert_true(next);
	assert_true(why);
	mc_summary_log_line(&u, &a, "12.0", buf, sizeof(buf));
	assert_non_null(strstr(buf, "peak_nonreclaimable=70 GiB "
			       "page_cache_at_peak=30 GiB"));
}

static void test_record(void **state)
{
	struct mc_used u = usage8(), v;
	struct mc_advice a, b;
	char rec[MC_SUMMARY_RECORD_MAX + 1], step[48], host[64];

	(void)state;
	u.mem_form = MC_MEM_PER_CPU;
	u.kernel_peak_bytes = 123456789;
	u.oom_kills = 2;
	mc_peak_add(&u.peak, 5 * GIB, 4 * GIB, GIB, 0);
	mc_summary_advise(&u, &a);
	assert_int_equal(mc_summary_record(&u, &a, "12.batch", "gpu07", rec,
					   sizeof(rec)), 0);
	assert_true(strlen(rec) <= MC_SUMMARY_RECORD_MAX);
	assert_int_equal(mc_summary_record_parse(rec, &v, &b, step,
						 sizeof(step), host,
						 sizeof(host)), 0);
	assert_string_equal(step, "12.batch");
	assert_string_equal(host, "gpu07");
	assert_memory_equal(&u, &v, sizeof(u));
	assert_int_equal(a.mem_bytes, b.mem_bytes);
	/* Not ours, or broken: refused, never half read. */
	assert_int_equal(mc_summary_record_parse("hello", &v, &b, step,
						 sizeof(step), host,
						 sizeof(host)), -1);
	assert_int_equal(mc_summary_record_parse("1.0@n:a=x", &v, &b, step,
						 sizeof(step), host,
						 sizeof(host)), -1);
	/* A separator in a name would break the list it is kept in. */
	assert_int_equal(mc_summary_record(&u, &a, "1.0", "a;b", rec,
					   sizeof(rec)), -1);
}

/* On a node of 2 threads per core the record keeps them, so that the advice
 * rebuilt from it (memcore report) is the step's own: --cpus-per-gpu in
 * threads. A record without "t" (before 0.3.0) reads as it did then. */
static void test_record_threads(void **state)
{
	struct mc_used u = { 0 }, v;
	struct mc_advice live, back;
	struct mc_summary_text tl, tb;
	char rec[MC_SUMMARY_RECORD_MAX + 1], step[48], host[64], *t;

	(void)state;
	/* srun --gpus=1 --cpus-per-gpu=6 --mem=24G: 3 cores of 2 threads,
	 * 1 worker, cores mostly idle. */
	u.asked_bytes = 24 * GIB;
	u.gpus = 1;
	u.workers = 1;
	u.cores_allocated = 3;
	u.threads_per_core = 2;
	u.rule_bytes = 16 * GIB;
	u.rule_cores = 2;
	u.ram_per_worker_bytes = 4 * GIB;
	u.wall_usec = 100000000ULL;
	u.cpu_usec = u.wall_usec;	/* 1 core busy of 3 */
	mc_peak_add(&u.peak, 17 * GIB, 16 * GIB, 0, GIB);
	mc_summary_advise(&u, &live);
	/* (1 worker + 1) cores x 2 threads. */
	assert_int_equal(live.cpus_per_gpu, (1 + 1) * 2);
	assert_int_equal(mc_summary_record(&u, &live, "1.0", "g4dn", rec,
					   sizeof(rec)), 0);
	assert_non_null(strstr(rec, ",t=2"));
	assert_int_equal(mc_summary_record_parse(rec, &v, &back, step,
						 sizeof(step), host,
						 sizeof(host)), 0);
	assert_int_equal(v.threads_per_core, 2);
	assert_int_equal(back.cpus_per_gpu, live.cpus_per_gpu);
	assert_int_equal(back.workers, live.workers);
	assert_int_equal(back.mem_bytes, live.mem_bytes);
	mc_summary_explain(&u, &live, "1.0", "g4dn", NULL, &tl);
	mc_summary_explain(&v, &back, step, host, NULL, &tb);
	assert_int_equal(tl.n, tb.n);
	for (size_t i = 0; i < tl.n; i++)
		assert_string_equal(tl.line[i], tb.line[i]);
	/* An older record: no "t", one thread per core as then. */
	t = strstr(rec, ",t=2");
	*t = '\0';
	assert_int_equal(mc_summary_record_parse(rec, &v, &back, step,
						 sizeof(step), host,
						 sizeof(host)), 0);
	assert_int_equal(v.threads_per_core, 0);
	assert_int_equal(back.cpus_per_gpu, 1 + 1);
}

/* The same open files read again see the new content (pread from 0),
 * as cgroupfs files do; fixtures for v1 and v2. */
static void test_sample(void **state)
{
	char dir[] = "/tmp/mc_test_sample.XXXXXX", err[512], path[4200];
	const char *top = getenv("MC_TOP");
	struct mc_cgread_src src;
	struct mc_sample s;
	struct mc_cgread_end end;

	(void)state;
	assert_non_null(mkdtemp(dir));
	mc_test_put(dir, "memory.current", "3221225472\n");
	mc_test_put(dir, "memory.stat", "anon 314572800\nfile 2147483648\n"
	    "shmem 0\nactive_file 1073741824\ninactive_file 1073741824\n");
	mc_test_put(dir, "cpu.stat", "usage_usec 1500000\nuser_usec 1000000\n");
	assert_int_equal(mc_cgread_open(&src, MC_TEST_CG(dir, 2, NULL), err, sizeof(err)), 0);
	assert_int_equal(mc_cgread_read(&src, &s), 0);
	assert_int_equal(s.usage_bytes, 3221225472ULL);
	assert_int_equal(s.file_bytes, 2 * GIB);
	assert_int_equal(s.non_reclaimable_bytes, GIB);
	assert_true(s.has_cpu);
	assert_int_equal(s.cpu_usec, 1500000);
	/* Rewritten in place (same inode), as the kernel's are. */
	mc_test_put(dir, "memory.current", "1048576\n");
	mc_test_put(dir, "cpu.stat", "usage_usec 2500000\n");
	assert_int_equal(mc_cgread_read(&src, &s), 0);
	assert_int_equal(s.usage_bytes, MIB);
	assert_int_equal(s.non_reclaimable_bytes, 0);
	assert_int_equal(s.cpu_usec, 2500000);
	/* A memory.stat that lost a field: the sample is skipped. */
	mc_test_put(dir, "memory.stat", "anon 1\n");
	assert_int_equal(mc_cgread_read(&src, &s), -1);
	mc_cgread_close(&src);
	mc_cgread_close(&src);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	assert_int_equal(system(path), 0);

	assert_int_equal(mc_cgread_open(&src, MC_TEST_CG("/nonexistent/cg", 2, NULL), err,
					sizeof(err)), -1);
	assert_non_null(strstr(err, "/nonexistent/cg"));

	if (!top)
		top = ".";
	/* The fixtures of tests/data/cgroup (README.md there): the same
	 * step, 2.80 GiB non-reclaimable, 2 OOM kills. */
	snprintf(path, sizeof(path), "%s/tests/data/cgroup/v1/slurm_n1/uid_0/"
		 "job_7/step_0", top);
	assert_int_equal(mc_cgread_open(&src, MC_TEST_CG(path, 1, NULL), err, sizeof(err)), 0);
	assert_int_equal(mc_cgread_read(&src, &s), 0);
	assert_int_equal(s.non_reclaimable_bytes, 3006476288ULL);
	assert_false(s.has_cpu);
	mc_cgread_close(&src);
	assert_int_equal(mc_cgread_end_read(MC_TEST_CG(path, 1, NULL), &end, err, sizeof(err)),
			 0);
	assert_int_equal(end.oom_kills, 2);
	assert_true(end.kernel_peak_bytes > 0);
	assert_int_equal(end.cgroup_version, 1);
	assert_ptr_equal(mc_cgroup_ops_at(path, err, sizeof(err)),
			 &mc_cgroup_v1);
	snprintf(path, sizeof(path), "%s/tests/data/cgroup/v2/job_7/step_0/"
		 "user/task_0", top);
	assert_int_equal(mc_cgread_open(&src, MC_TEST_CG(path, 2, NULL), err, sizeof(err)), 0);
	assert_int_equal(mc_cgread_read(&src, &s), 0);
	assert_int_equal(s.non_reclaimable_bytes, 3006476288ULL);
	mc_cgread_close(&src);
	assert_int_equal(mc_cgread_end_read(MC_TEST_CG(path, 2, NULL), &end, err, sizeof(err)),
			 0);
	assert_int_equal(end.max_events, 31);
	assert_int_equal(end.oom_kills, 2);
	assert_true(end.kernel_peak_bytes > 0);
	assert_int_equal(end.cgroup_version, 2);
	/* The table is chosen by the cgroup's own files. */
	assert_ptr_equal(mc_cgroup_ops_at(path, err, sizeof(err)),
			 &mc_cgroup_v2);
	/* A step whose cgroup was never found has no table: nothing is
	 * read and its record keeps no hierarchy ("cv" 0). */
	assert_int_equal(mc_cgread_end_read(&(struct mc_cgroup){ .ops = NULL },
					    &end, err, sizeof(err)), -1);
	assert_int_equal(end.cgroup_version, 0);
}

static void test_parse(void **state)
{
	uint64_t high = 7, max = 7, us = 0;

	(void)state;
	mc_cgread_parse_events("low 0\nhigh 12\nmax 3\noom 1\noom_kill 1\n",
			       &high, &max);
	assert_int_equal(high, 12);
	assert_int_equal(max, 3);
	high = max = 7;
	mc_cgread_parse_events("oom_kill 1\n", &high, &max);
	assert_int_equal(high, 7);
	assert_int_equal(mc_cgread_parse_cpu_stat("user_usec 5\nusage_usec 9\n",
						  &us), 0);
	assert_int_equal(us, 9);
	assert_int_equal(mc_cgread_parse_cpu_stat("user_usec 5\n", &us), -1);
}

/* The counters of a squeezed page cache as the kernel prints them: the
 * refault line of memory.stat (v2; v1's hierarchical total first) and the
 * totals of memory.pressure (Documentation/accounting/psi.rst's format). */
static void test_squeeze_parse(void **state)
{
	uint64_t pages = 7, some = 7, full = 7;

	(void)state;
	/* A 6.1 memory.stat, trimmed: the anon line must not be taken. */
	assert_int_equal(mc_cgread_parse_refault(
		"anon 1\nworkingset_refault_anon 11\n"
		"workingset_refault_file 57344\nworkingset_activate_file 3\n",
		&mc_cgroup_v2, &pages), 0);
	assert_int_equal(pages, 57344);
	/* v1: total_ (the step's children included), wherever it is. */
	assert_int_equal(mc_cgread_parse_refault(
		"workingset_refault_file 684\ncache 1\n"
		"total_workingset_refault_file 101353\n", &mc_cgroup_v1, &pages), 0);
	assert_int_equal(pages, 101353);
	/* v1 without the total: the local line. */
	assert_int_equal(mc_cgread_parse_refault(
		"workingset_refault_file 684\n", &mc_cgroup_v1, &pages), 0);
	assert_int_equal(pages, 684);
	/* Older kernels print none: said, not 0. */
	pages = 7;
	assert_int_equal(mc_cgread_parse_refault("cache 1\nrss 2\n", &mc_cgroup_v1,
						 &pages), -1);
	assert_int_equal(pages, 7);
	assert_int_equal(mc_cgread_parse_refault("workingset_refault 9\n", &mc_cgroup_v2,
						 &pages), -1);
	assert_int_equal(mc_cgread_parse_refault(
		"workingset_refault_file x\n", &mc_cgroup_v2, &pages), -1);

	assert_int_equal(mc_cgread_parse_pressure(
		"some avg10=12.50 avg60=3.10 avg300=0.70 total=4211337\n"
		"full avg10=10.00 avg60=2.00 avg300=0.50 total=3900001\n",
		&some, &full), 0);
	assert_int_equal(some, 4211337);
	assert_int_equal(full, 3900001);
	/* "full" missing: some still read, full 0. */
	assert_int_equal(mc_cgread_parse_pressure(
		"some avg10=0.00 avg60=0.00 avg300=0.00 total=18446744073709551\n",
		&some, &full), 0);
	assert_int_equal(some, 18446744073709551ULL);
	assert_int_equal(full, 0);
	/* Order does not matter; the "some" line's own total is taken. */
	assert_int_equal(mc_cgread_parse_pressure(
		"full avg10=0.00 avg60=0.00 avg300=0.00 total=5\n"
		"some avg10=0.00 avg60=0.00 avg300=0.00 total=9\n",
		&some, &full), 0);
	assert_int_equal(some, 9);
	assert_int_equal(full, 5);
	some = 7;
	assert_int_equal(mc_cgread_parse_pressure("", &some, &full), -1);
	assert_int_equal(mc_cgread_parse_pressure(
		"some avg10=0.00 avg60=0.00 avg300=0.00\n"
		"full avg10=0.00 avg60=0.00 avg300=0.00 total=5\n",
		&some, &full), -1);
	assert_int_equal(mc_cgread_parse_pressure(
		"somewhere total=3\n", &some, &full), -1);
	assert_int_equal(some, 7);
}

/* Read from a cgroup's files: what is there, and why what is not. */
static void test_squeeze_read(void **state)
{
	char dir[] = "/tmp/mc_test_squeeze.XXXXXX", cmd[4200], buf[64];
	struct mc_squeeze q;
	int fd;
	bool psi_on;

	(void)state;
	assert_non_null(mkdtemp(dir));
	mc_test_put(dir, "memory.stat", "anon 1\nworkingset_refault_file 25\n");
	mc_test_put(dir, "memory.pressure",
		    "some avg10=0.00 avg60=0.00 avg300=0.00 total=1500000\n"
		    "full avg10=0.00 avg60=0.00 avg300=0.00 total=900000\n");
	mc_cgread_squeeze_read(MC_TEST_CG(dir, 2, NULL), &q);
	assert_true(q.has_refault);
	assert_int_equal(q.refault_file_pages, 25);
	assert_int_equal(q.psi, MC_PSI_READ);
	assert_int_equal(q.some_usec, 1500000);
	assert_int_equal(q.full_usec, 900000);
	/* v1: no pressure per cgroup, whatever files are there. */
	mc_cgread_squeeze_read(MC_TEST_CG(dir, 1, NULL), &q);
	assert_int_equal(q.psi, MC_PSI_NONE);
	assert_true(q.has_refault);
	/* No memory.pressure: the kernel has PSI off when it has no
	 * /proc/pressure either (read here, as the code does not). */
	snprintf(cmd, sizeof(cmd), "%s/memory.pressure", dir);
	assert_int_equal(unlink(cmd), 0);
	fd = open("/proc/pressure/memory", O_RDONLY);
	psi_on = fd >= 0 && read(fd, buf, sizeof(buf)) > 0;
	if (fd >= 0)
		close(fd);
	mc_cgread_squeeze_read(MC_TEST_CG(dir, 2, NULL), &q);
	assert_int_equal(q.psi, psi_on ? MC_PSI_UNREADABLE : MC_PSI_OFF);
	/* A kernel without the refault line. */
	mc_test_put(dir, "memory.stat", "anon 1\n");
	mc_cgread_squeeze_read(MC_TEST_CG(dir, 2, NULL), &q);
	assert_false(q.has_refault);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	/* No cgroup at all: nothing read, nothing made up. */
	mc_cgread_squeeze_read(MC_TEST_CG("/nonexistent/cg", 2, NULL), &q);
	assert_false(q.has_refault);
	assert_int_not_equal(q.psi, MC_PSI_READ);
}

/* A step that reads a 100 GiB dataset on a 60 GiB limit: the thresholds
 * (64 MiB and the largest page cache; 10% of the wall time) and the
 * memory that would hold its files, against figures computed here. */
static void test_squeeze_advice(void **state)
{
	struct mc_used u = usage8(), v;
	struct mc_advice a;
	struct mc_summary_text t;
	char buf[1024], opt[48];
	bool fig = false, sq = false, fix = false;
	uint64_t want;

	(void)state;
	u.asked_bytes = 900 * GIB;
	peak_enough(&u.peak, 800 * GIB, 750 * GIB, 0, 50 * GIB);
	u.cgroup_version = 2;
	u.sample_interval_ms = 1000;
	u.squeeze = MC_SQUEEZE_MEASURED | MC_SQUEEZE_REFAULT | MC_SQUEEZE_STALL;
	/* Refaulted just under the largest page cache, stalled just under
	 * 10% of 1000 s: not squeezed. */
	u.refault_file_bytes = 50 * GIB - 1;
	u.stall_usec = 100000000ULL - 1;
	mc_summary_advise(&u, &a);
	assert_false(a.refault_large);
	assert_false(a.stall_large);
	assert_int_equal(a.squeeze_mem_bytes, 0);
	mc_summary_explain(&u, &a, "12.0", "gpu07", NULL, &t);
	for (size_t i = 0; i < t.n; i++) {
		assert_null(strstr(t.line[i], "squeezed"));
		if (strstr(t.line[i], "  page cache   50.00 GiB read again after "
			   "the kernel evicted it (workingset_refault_file; the "
			   "largest page cache 50 GiB); 100.0 s stalled on memory "
			   "(memory.pressure some, 10.0% of the wall time)"))
			fig = true;
	}
	assert_true(fig);
	/* At the largest page cache: squeezed; the fix holds the advice,
	 * the page cache and what was read again. */
	u.refault_file_bytes = 50 * GIB;
	mc_summary_advise(&u, &a);
	assert_true(a.refault_large);
	assert_false(a.stall_large);
	/* 750 GiB non-reclaimable + 20% = 900 GiB, above the rule's 704. */
	assert_int_equal(a.mem_bytes, 900 * GIB);
	want = 900 * GIB + 50 * GIB + 50 * GIB;
	assert_int_equal(a.squeeze_mem_bytes, want);
	mc_summary_explain(&u, &a, "12.0", "gpu07", NULL, &t);
	assert_true(t.n <= MC_SUMMARY_LINES);
	mc_summary_mem_option(&u, want, opt, sizeof(opt));
	assert_string_equal(opt, "--mem=1000G");
	for (size_t i = 0; i < t.n; i++) {
		if (strstr(t.line[i], "  squeezed     the limit left too "
			   "little page cache"))
			sq = true;
		/* Whole: the longest line, not cut at MC_SUMMARY_LINE_MAX. */
		if (strstr(t.line[i], "  fix          --mem=1000G rather than "
			   "next time's figure, which counts no page cache: "
			   "that plus the largest page cache (50 GiB) and what "
			   "was read again (50 GiB), an upper bound; ") &&
		    strstr(t.line[i], "where reading them again is cheap"))
			fix = true;
	}
	assert_true(sq);
	assert_true(fix);
	/* The same refaults and stall while the step's usage stayed far
	 * below its limit (two jobs reading one file: the one with the
	 * small --mem evicts the pages both read): not squeezed by its
	 * limit, and no fix at all, never one below what it had. */
	v = u;
	v.asked_bytes = 30 * GIB;
	v.peak = (struct mc_peak){ 0 };
	peak_enough(&v.peak, GIB + 40 * MIB, GIB, 0, GIB);
	v.kernel_peak_bytes = GIB + 50 * MIB;
	v.refault_file_bytes = 2 * GIB;
	v.stall_usec = 200000000ULL;
	mc_summary_advise(&v, &a);
	assert_false(a.refault_large || a.stall_large);
	assert_int_equal(a.squeeze_mem_bytes, 0);
	mc_summary_explain(&v, &a, "12.0", "gpu07", NULL, &t);
	for (size_t i = 0; i < t.n; i++)
		assert_null(strstr(t.line[i], "squeezed"));
	/* ... the kernel's peak at the limit (a climb between samples):
	 * squeezed, and the fix above what it had plus what was read
	 * again, though the sampled figures alone would ask less. */
	v.kernel_peak_bytes = 30 * GIB;
	mc_summary_advise(&v, &a);
	assert_true(a.refault_large);
	assert_true(a.squeeze_mem_bytes >= 32 * GIB);
	assert_true(a.squeeze_mem_bytes > v.asked_bytes);
	/* The stall alone is enough; small refaults are noise even when the
	 * page cache was smaller still. */
	u.refault_file_bytes = MC_SQUEEZE_REFAULT_MIN_BYTES - 1;
	u.peak = (struct mc_peak){ 0 };
	peak_enough(&u.peak, 800 * GIB, 750 * GIB, 0, MIB);
	u.stall_usec = 100000000ULL;
	mc_summary_advise(&u, &a);
	assert_false(a.refault_large);
	assert_true(a.stall_large);
	mc_summary_log_line(&u, &a, "12.0", buf, sizeof(buf));
	assert_non_null(strstr(buf, "refault_file=64.00 MiB memory_stall=100.0 s "
			       "squeezed=yes"));
	/* Figures not measured never count, whatever they hold. */
	v = u;
	v.squeeze = MC_SQUEEZE_MEASURED | MC_SQUEEZE_PSI_OFF;
	v.refault_file_bytes = 500 * GIB;
	mc_summary_advise(&v, &a);
	assert_false(a.refault_large || a.stall_large);
	mc_summary_log_line(&v, &a, "12.0", buf, sizeof(buf));
	assert_non_null(strstr(buf, "refault_file=none memory_stall=none "
			       "squeezed=no"));
	mc_summary_explain(&v, &a, "12.0", "gpu07", NULL, &t);
	fig = false;
	for (size_t i = 0; i < t.n; i++)
		if (strstr(t.line[i], "  page cache   file data read again not "
			   "available (") &&
		    strstr(t.line[i], "memory stall time not available: the "
			   "kernel has PSI off (psi=1 on its command line)"))
			fig = true;
	assert_true(fig);
	assert_non_null(mc_summary_squeeze_note(&v, buf, sizeof(buf)));
	assert_non_null(strstr(buf, "; memory stall time not available"));
	/* v1: the refaults, and the stall said to be v2's only. */
	v.squeeze = MC_SQUEEZE_MEASURED | MC_SQUEEZE_REFAULT;
	v.cgroup_version = 1;
	assert_non_null(mc_summary_squeeze_note(&v, buf, sizeof(buf)));
	assert_string_equal(buf, "memory stall time not available on cgroup "
			    "v1 (the kernel keeps it per cgroup on v2 only)");
	/* A step with too few samples: no advice, no squeeze either. */
	v = u;
	v.wall_usec = MC_SUMMARY_MIN_WALL_USEC - 1;
	v.stall_usec = v.wall_usec;
	mc_summary_advise(&v, &a);
	assert_true(a.too_few);
	assert_false(a.stall_large);
	/* An older memcore's record: no line, the note says why. */
	v = u;
	v.squeeze = 0;
	mc_summary_advise(&v, &a);
	mc_summary_explain(&v, &a, "12.0", "gpu07", NULL, &t);
	for (size_t i = 0; i < t.n; i++)
		assert_null(strstr(t.line[i], "page cache  "));
	assert_non_null(mc_summary_squeeze_note(&v, buf, sizeof(buf)));
	assert_non_null(strstr(buf, "not measured"));
	v.squeeze = MC_SQUEEZE_MEASURED | MC_SQUEEZE_REFAULT | MC_SQUEEZE_STALL;
	assert_null(mc_summary_squeeze_note(&v, buf, sizeof(buf)));
}

/* The report's brief form: the reasons left to its one note. */
static void test_squeeze_brief(void **state)
{
	struct mc_used u = usage8();
	struct mc_advice a;
	struct mc_summary_text full, brief;
	size_t pc = 0;

	(void)state;
	peak_enough(&u.peak, 800 * GIB, 750 * GIB, 0, 50 * GIB);
	u.sample_interval_ms = 1000;
	u.refault_file_bytes = 3 * MIB;
	u.stall_usec = 1500000;
	/* Both measured: the same lines. */
	u.cgroup_version = 2;
	u.squeeze = MC_SQUEEZE_MEASURED | MC_SQUEEZE_REFAULT | MC_SQUEEZE_STALL;
	mc_summary_advise(&u, &a);
	mc_summary_explain(&u, &a, "1.0", "n1", NULL, &full);
	mc_summary_explain_brief(&u, &a, "1.0", "n1", &brief);
	assert_int_equal(full.n, brief.n);
	for (size_t i = 0; i < full.n; i++)
		assert_string_equal(full.line[i], brief.line[i]);
	/* v1: the refaults alone, the reason left out. */
	u.cgroup_version = 1;
	u.squeeze = MC_SQUEEZE_MEASURED | MC_SQUEEZE_REFAULT;
	mc_summary_explain_brief(&u, &a, "1.0", "n1", &brief);
	for (size_t i = 0; i < brief.n; i++)
		if (!strncmp(brief.line[i], "  page cache   ", 15)) {
			pc++;
			assert_string_equal(brief.line[i], "  page cache   3 MiB "
				"read again after the kernel evicted it "
				"(workingset_refault_file; the largest page "
				"cache 50 GiB)");
		}
	assert_int_equal(pc, 1);
	/* Nothing measured: no line. */
	u.cgroup_version = 2;
	u.squeeze = MC_SQUEEZE_MEASURED | MC_SQUEEZE_PSI_OFF;
	mc_summary_explain_brief(&u, &a, "1.0", "n1", &brief);
	for (size_t i = 0; i < brief.n; i++)
		assert_null(strstr(brief.line[i], "page cache   "));
}

/* The record keeps the squeeze; one without its keys (an older memcore's)
 * parses, as not measured; the largest figures fit the record's bound. */
static void test_squeeze_record(void **state)
{
	struct mc_used u = usage8(), v;
	struct mc_advice a, b;
	char rec[MC_SUMMARY_RECORD_MAX + 1], step[48], host[64], *p;

	(void)state;
	u.refault_file_bytes = 123 * GIB + 4096;
	u.stall_usec = 4211337;
	u.squeeze = MC_SQUEEZE_MEASURED | MC_SQUEEZE_REFAULT | MC_SQUEEZE_STALL;
	peak_enough(&u.peak, 800 * GIB, 750 * GIB, 0, 50 * GIB);
	mc_summary_advise(&u, &a);
	assert_int_equal(mc_summary_record(&u, &a, "12.0", "gpu07", rec,
					   sizeof(rec)), 0);
	assert_non_null(strstr(rec, ",rf=132070248448,st=4211337,sq=7"));
	assert_int_equal(mc_summary_record_parse(rec, &v, &b, step,
						 sizeof(step), host,
						 sizeof(host)), 0);
	assert_memory_equal(&u, &v, sizeof(u));
	assert_int_equal(a.refault_large, b.refault_large);
	assert_int_equal(a.squeeze_mem_bytes, b.squeeze_mem_bytes);
	/* Without them: as an older memcore kept it. */
	p = strstr(rec, ",rf=");
	*p = '\0';
	assert_int_equal(mc_summary_record_parse(rec, &v, &b, step,
						 sizeof(step), host,
						 sizeof(host)), 0);
	assert_int_equal(v.squeeze, 0);
	assert_int_equal(v.refault_file_bytes, 0);
	assert_false(b.refault_large || b.stall_large);
	/* A long step of a large node still fits: 8 TiB figures, 30 days
	 * of 256 busy cores sampled every 100 ms, 1 PiB read again, stalled
	 * the whole time, the largest ids. */
	u.asked_bytes = u.rule_bytes = u.kernel_peak_bytes = 8192 * GIB;
	u.peak.nr_bytes = u.peak.file_at_nr_bytes = u.peak.anon_at_nr_bytes =
		u.peak.shmem_at_nr_bytes = u.peak.max_shmem_bytes =
		u.peak.max_file_bytes = u.peak.max_usage_bytes = 8192 * GIB;
	u.wall_usec = u.stall_usec = 30ULL * 86400 * 1000000;
	u.peak.samples = u.wall_usec / 100000;
	u.cpu_usec = 256 * u.wall_usec;
	u.oom_kills = u.high_events = u.max_events = 4294967295ULL;
	u.refault_file_bytes = 1024 * 1024 * GIB;
	assert_int_equal(mc_summary_record(&u, &a, "4294967294.4294967294",
					   "a-long-node-name-0123456789",
					   rec, sizeof(rec)), 0);
	assert_true(strlen(rec) <= MC_SUMMARY_RECORD_MAX);
}

/* The records in a job's AdminComment: another tool's text kept in front,
 * a step and node replaced, the oldest folded into the aggregate past the
 * bound. */
static void test_jobrec(void **state)
{
	char out[1024];
	const char *recs[8];
	size_t lens[8];
	struct mc_jobrec_agg agg;

	(void)state;
	assert_int_equal(mc_jobrec_merge(NULL, "1.0@n1:a=1", out, sizeof(out),
					 300), 0);
	assert_string_equal(out, "memcore1:1.0@n1:a=1");
	assert_int_equal(mc_jobrec_merge("JS1:abc", "1.0@n1:a=1", out,
					 sizeof(out), 300), 0);
	assert_string_equal(out, "JS1:abc memcore1:1.0@n1:a=1");
	assert_int_equal(mc_jobrec_merge("JS1:abc memcore1:1.0@n1:a=1",
					 "1.0@n2:a=2", out, sizeof(out), 300),
			 0);
	assert_string_equal(out, "JS1:abc memcore1:1.0@n1:a=1;1.0@n2:a=2");
	assert_true(mc_jobrec_has(out, "1.0@n2:a=2"));
	assert_false(mc_jobrec_has(out, "1.0@n2:a=3"));
	/* The same step and node again: replaced, not doubled. */
	assert_int_equal(mc_jobrec_merge("memcore1:1.0@n1:a=1;1.0@n2:a=2",
					 "1.0@n1:a=9", out, sizeof(out), 300),
			 0);
	assert_string_equal(out, "memcore1:1.0@n2:a=2;1.0@n1:a=9");
	/* Not a record: refused, out untouched by the caller's use. */
	assert_int_equal(mc_jobrec_merge(NULL, "no key", out, sizeof(out),
					 300), -1);
	assert_int_equal(mc_jobrec_merge(NULL, "1.0@n1:a=1;x", out,
					 sizeof(out), 300), -1);
	/* A bound too small for one record beside a full aggregate. */
	assert_int_equal(mc_jobrec_merge(NULL, "1.0@n1:a=1", out, sizeof(out),
					 40), -1);
	assert_int_equal(mc_jobrec_split("JS1:abc", recs, lens, 8, &agg), 0);
	assert_int_equal(agg.steps, 0);
}

/* Past the bound, many steps: each record is either kept or counted in
 * the aggregate, which keeps the largest peak of those it counts (and
 * where), and their OOM kills; a merge done twice is done once. */
/* The aggregate as a record holds it, hostile: a sign is no count, and
 * counts saturate instead of wrapping back to nothing. */
/* The records' copy in SystemComment (spank/mc_keepdbd.c): read when
 * AdminComment lost them (jobstats' summary there), never over it; and
 * what slurmdbd's unescaped SQL could not take is never sent. */
static void test_jobrec_pick(void **state)
{
	const char *rec = MC_JOBREC_TAG "1.0@n1:a=1";
	char sc[64], full[MC_SUMMARY_RECORD_MAX + 64];
	struct mc_used u = usage8();
	struct mc_advice a;
	bool sys = true;

	(void)state;
	snprintf(sc, sizeof(sc), "bb %s", rec);
	assert_ptr_equal(mc_jobrec_pick(rec, sc, &sys), rec);
	assert_false(sys);
	assert_ptr_equal(mc_jobrec_pick("js1:abc", sc, &sys), sc);
	assert_true(sys);
	assert_string_equal(mc_jobrec_block(sc), rec);
	assert_ptr_equal(mc_jobrec_pick("JS1:abc", "bb", &sys), "JS1:abc");
	assert_false(sys);
	assert_null(mc_jobrec_pick(NULL, NULL, NULL));
	assert_null(mc_jobrec_block("JS1:abc"));
	/* A record with its timeline, as the plugin writes it. */
	mc_peak_add(&u.peak, 5 * GIB, 4 * GIB, GIB, 0);
	mc_summary_advise(&u, &a);
	strcpy(full, MC_JOBREC_TAG);
	assert_int_equal(mc_summary_record(&u, &a, "12.batch", "gpu-07",
					   full + strlen(full),
					   sizeof(full) - strlen(full)), 0);
	assert_true(mc_jobrec_sql_safe(full));
	assert_false(mc_jobrec_sql_safe("a'; drop table job_table; --"));
	assert_false(mc_jobrec_sql_safe("a\\"));
	assert_false(mc_jobrec_sql_safe("a\"b"));
	assert_false(mc_jobrec_sql_safe("a`b"));
	assert_false(mc_jobrec_sql_safe("a\nb"));
	assert_false(mc_jobrec_sql_safe("caf\xc3\xa9"));
}

static void test_jobrec_aggregate_bounds(void **state)
{
	const char *recs[8];
	size_t lens[8];
	struct mc_jobrec_agg agg;

	(void)state;
	mc_jobrec_split(MC_JOBREC_TAG "dropped=-1,p=-1,o=-1,at=0@h", recs, lens,
			8, &agg);
	assert_int_equal(agg.steps, 0);
	assert_true(agg.peak_bytes == 0);
	assert_true(agg.oom_kills == 0);
	mc_jobrec_split(MC_JOBREC_TAG "dropped=99999999999,p=1,o="
			"99999999999999999999999,at=0@h", recs, lens, 8, &agg);
	assert_int_equal(agg.steps, UINT_MAX);
	assert_true(agg.oom_kills == UINT64_MAX);
}

static void test_jobrec_aggregate(void **state)
{
	static char cur[4096], next[4096], rec[64], first[64];
	const char *recs[64];
	size_t lens[64], n, max = 320;
	struct mc_jobrec_agg agg;
	uint64_t peak[40], want_peak = 0, want_oom = 0;
	char want_at[32] = "";

	(void)state;
	snprintf(cur, sizeof(cur), "JS1:abc");
	for (unsigned i = 0; i < 40; i++) {
		peak[i] = (uint64_t)((i * 37) % 100) << 20;
		snprintf(rec, sizeof(rec), "%u.0@n1:a=1,p=%llu,pf=7,o=%u", i,
			 (unsigned long long)peak[i], i == 3 || i == 5);
		if (!i)
			snprintf(first, sizeof(first), "%s", rec);
		assert_int_equal(mc_jobrec_merge(cur, rec, next, sizeof(next),
						 max), 0);
		assert_true(strlen(strstr(next, MC_JOBREC_TAG)) <= max);
		assert_int_equal(strncmp(next, "JS1:abc memcore1:", 17), 0);
		/* Again: the same text (a retry after a lost reply). */
		assert_int_equal(mc_jobrec_merge(next, rec, cur, sizeof(cur),
						 max), 0);
		assert_string_equal(cur, next);
	}
	n = mc_jobrec_split(cur, recs, lens, 64, &agg);
	assert_true(n > 3 && n < 40);
	assert_int_equal(n + agg.steps, 40);
	assert_int_equal(agg.unknown, 0);
	/* Those kept are the newest, in order; the rest are the aggregate. */
	for (size_t i = 0; i < n; i++) {
		char key[16];

		snprintf(key, sizeof(key), "%zu.0@n1:", 40 - n + i);
		assert_int_equal(strncmp(recs[i], key, strlen(key)), 0);
	}
	for (unsigned i = 0; i < agg.steps; i++) {
		if (peak[i] > want_peak || !want_at[0]) {
			want_peak = peak[i];
			snprintf(want_at, sizeof(want_at), "%u.0@n1", i);
		}
		want_oom += i == 3 || i == 5;
	}
	assert_int_equal(agg.peak_bytes, want_peak);
	assert_string_equal(agg.peak_at, want_at);
	assert_int_equal(agg.oom_kills, want_oom);
	assert_false(mc_jobrec_has(cur, first));
	/* pf= is not p=: the peak is the record's own p. */
	assert_int_equal(mc_jobrec_merge(NULL, "9.0@n1:pf=5,p=3", next,
					 sizeof(next), max), 0);

	/* 0.3.0's bare count: N dropped without figures, still counted. */
	assert_int_equal(mc_jobrec_split("memcore1:dropped=4;1.0@n1:a=1",
					 recs, lens, 64, &agg), 1);
	assert_int_equal(agg.steps, 4);
	assert_int_equal(agg.unknown, 4);
	assert_int_equal(agg.peak_bytes, 0);
	assert_string_equal(agg.peak_at, "");
	snprintf(cur, sizeof(cur), "memcore1:dropped=4");
	for (unsigned i = 0; i < 20; i++) {
		snprintf(rec, sizeof(rec), "%u.0@n2:a=1,p=%u,o=0", i, 100 + i);
		assert_int_equal(mc_jobrec_merge(cur, rec, next, sizeof(next),
						 max), 0);
		snprintf(cur, sizeof(cur), "%s", next);
	}
	n = mc_jobrec_split(cur, recs, lens, 64, &agg);
	assert_int_equal(n + agg.steps, 24);
	assert_int_equal(agg.unknown, 4);
	assert_int_equal(agg.peak_bytes, 100 + agg.steps - 4 - 1);
	assert_non_null(strstr(cur, ",u=4"));
	/* ... and 0.3.0's reader takes the digits after "dropped=". */
	assert_int_equal(strtoul(strstr(cur, "dropped=") + 8, NULL, 10),
			 agg.steps);
}

/* The textfile: counts add up across steps and survive a re-read; label
 * values escaped as the text format says (\\ \" \n) and unescaped when
 * read back; damaged lines lose only themselves. */
static void test_metrics(void **state)
{
	static struct mc_metrics m;
	static char text[65536];
	struct mc_metrics_step a = { "gpu07", "gpu", { 0 } },
			       b = { "gpu07", "de\"b\\ug", { 0 } };

	(void)state;
	a.v[MC_M_STEPS_JUDGED] = 1;
	a.v[MC_M_MEMORY_ASKED_BYTES] = 4294967296.0;
	a.v[MC_M_CPU_SECONDS] = 1.5;
	b.v[MC_M_STEPS_JUDGED] = 1;
	b.v[MC_M_STEPS_REFUSED] = 1;
	assert_int_equal(mc_metrics_parse("", "gpu07", &m), 0);
	assert_int_equal(m.n, 0);
	assert_int_equal(mc_metrics_add(&m, &a), 0);
	assert_int_equal(mc_metrics_add(&m, &b), 0);
	assert_true(mc_metrics_format(&m, text, sizeof(text)) > 0);
	assert_non_null(strstr(text, "# TYPE memcore_steps_judged_total "
			       "counter\n"));
	assert_non_null(strstr(text, "memcore_memory_asked_bytes_total{node="
			       "\"gpu07\",partition=\"gpu\"} 4294967296\n"));
	assert_non_null(strstr(text, "partition=\"de\\\"b\\\\ug\"} 1\n"));
	/* Read back, add the same steps again: twice the counts, the
	 * escaped label unescaped into the same series. */
	assert_int_equal(mc_metrics_parse(text, "gpu07", &m), 0);
	assert_int_equal(m.n, 2);
	assert_string_equal(m.s[1].partition, "de\"b\\ug");
	assert_int_equal(mc_metrics_add(&m, &a), 0);
	assert_int_equal(mc_metrics_add(&m, &b), 0);
	assert_int_equal(m.n, 2);
	assert_true(mc_metrics_format(&m, text, sizeof(text)) > 0);
	assert_non_null(strstr(text, "memcore_cpu_seconds_total{node=\"gpu07\","
			       "partition=\"gpu\"} 3\n"));
	assert_non_null(strstr(text, "memcore_memory_asked_bytes_total{node="
			       "\"gpu07\",partition=\"gpu\"} 8589934592\n"));
	assert_non_null(strstr(text, "memcore_steps_refused_total{node=\""
			       "gpu07\",partition=\"de\\\"b\\\\ug\"} 2\n"));
	/* Damaged lines, an escape the format does not have, values that
	 * are no count: each loses only itself. */
	assert_int_equal(mc_metrics_parse(
		"memcore_steps_judged_total{node=\"x\"} 5\n"
		"memcore_steps_judged_total{node=\"x\" 5\n"
		"garbage\n# HELP memcore_x y\n"
		"memcore_cpu_seconds_total{node=\"x\"} -1\n"
		"memcore_cpu_seconds_total{node=\"x\"} inf\n"
		"memcore_cpu_seconds_total{node=\"x\"} nan\n"
		"memcore_cpu_seconds_total{node=\"x\",partition=\"a\\tb\"} 1\n"
		"memcore_cpu_seconds_total{node=\"x\",partition=\"a\nb\"} 1\n",
		"x", &m), 7);
	assert_int_equal(m.n, 0);	/* a label must not be empty */
	assert_int_equal(mc_metrics_parse(
		"memcore_steps_judged_total{node=\"x\",partition=\"p\"} 5\n",
		"x", &m), 0);
	assert_int_equal(m.n, 1);
	assert_true(m.s[0].v[MC_M_STEPS_JUDGED] == 5);
	assert_int_equal(mc_metrics_format(&m, text, 16), -1);
}

/* A label value is valid UTF-8 without control bytes, or refused. */
static void test_metrics_labels(void **state)
{
	static const char *const good[] = {
		"gpu", "a-b_c.d", "de\"bug", "back\\slash", "caf\xc3\xa9",
		"\xe2\x82\xac", "\xf0\x9f\x9a\x80", "\xef\xbf\xbd",
	};
	static const char *const bad[] = {
		"", "a\nb", "a\tb", "a\x7f", "\x1b[31m",
		"\xff", "\xc3", "\xc3(", "\xc0\xaf",	/* overlong '/' */
		"\xe0\x80\xaf", "\xed\xa0\x80",	/* surrogate U+D800 */
		"\xf4\x90\x80\x80",		/* above U+10FFFF */
		"\xf8\x88\x80\x80\x80", "\x80",
		"0123456789012345678901234567890123456789012345678901234567890123",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_true(mc_metrics_label_ok(good[i]));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_false(mc_metrics_label_ok(bad[i]));
}

/* The series are bounded by the node and the partitions: another node's
 * series read back is dropped, a partition that is no label or beyond
 * MC_METRICS_SERIES_MAX - 1 is counted under partition="other", which
 * always has its slot; what is written parses (no invalid byte). */
static void test_metrics_bound(void **state)
{
	static struct mc_metrics m;
	static char text[1 << 20];
	struct mc_metrics_step st = { "n1", NULL, { 0 } };
	char part[32], want[128];

	(void)state;
	st.v[MC_M_STEPS_JUDGED] = 1;
	mc_metrics_parse("", "n1", &m);
	/* no partition, an invalid one, a control byte: the catch-all */
	assert_int_equal(mc_metrics_add(&m, &st), 0);
	st.partition = "\xff\xfe";
	assert_int_equal(mc_metrics_add(&m, &st), 1);
	st.partition = "x\ny";
	assert_int_equal(mc_metrics_add(&m, &st), 1);
	assert_int_equal(m.n, 1);
	assert_string_equal(m.s[0].partition, MC_METRICS_OTHER);
	assert_true(m.s[0].v[MC_M_STEPS_JUDGED] == 3);
	/* a node name that is no label is never written */
	st.node = "n\xff";
	st.partition = "gpu";
	assert_int_equal(mc_metrics_add(&m, &st), -1);
	st.node = "n1";
	/* 127 partitions, then every new one goes to "other" */
	for (int i = 1; i < MC_METRICS_SERIES_MAX; i++) {
		snprintf(part, sizeof(part), "p%d", i);
		st.partition = part;
		assert_int_equal(mc_metrics_add(&m, &st), 0);
	}
	assert_int_equal(m.n, MC_METRICS_SERIES_MAX);
	st.partition = "one-too-many";
	assert_int_equal(mc_metrics_add(&m, &st), 1);
	st.partition = "p5";
	assert_int_equal(mc_metrics_add(&m, &st), 0);
	assert_int_equal(m.n, MC_METRICS_SERIES_MAX);
	assert_true(m.s[0].v[MC_M_STEPS_JUDGED] == 4);
	assert_true(mc_metrics_format(&m, text, sizeof(text)) > 0);
	assert_null(strstr(text, "one-too-many"));
	for (const unsigned char *c = (const unsigned char *)text; *c; c++)
		assert_true(*c >= 0x20 ? *c < 0x7f : *c == '\n');
	/* Read back as node n1: everything; as another node: nothing
	 * (9 metrics x 128 series dropped). */
	assert_int_equal(mc_metrics_parse(text, "n1", &m), 0);
	assert_int_equal(m.n, MC_METRICS_SERIES_MAX);
	assert_int_equal(mc_metrics_parse(text, "n2", &m),
			 MC_M_COUNT * MC_METRICS_SERIES_MAX);
	assert_int_equal(m.n, 0);
	/* A file with a fake node's series and more partitions than the
	 * bound: only this node's, and the bound holds on reading too. */
	{
		size_t n = 0;

		text[0] = '\0';
		for (int i = 0; i < MC_METRICS_SERIES_MAX + 10; i++)
			n += (size_t)snprintf(text + n, sizeof(text) - n,
				"memcore_steps_judged_total{node=\"n1\","
				"partition=\"q%d\"} 1\n", i);
		n += (size_t)snprintf(text + n, sizeof(text) - n,
			"memcore_steps_judged_total{node=\"fake\","
			"partition=\"q1\"} 1e300\n"
			"memcore_steps_judged_total{node=\"n1\","
			"partition=\"" MC_METRICS_OTHER "\"} 2\n");
		/* 11 partitions past the bound, the fake node's line */
		assert_int_equal(mc_metrics_parse(text, "n1", &m), 12);
		assert_int_equal(m.n, MC_METRICS_SERIES_MAX);
		assert_string_equal(m.s[m.n - 1].partition, MC_METRICS_OTHER);
		assert_true(m.s[m.n - 1].v[MC_M_STEPS_JUDGED] == 2);
		assert_true(mc_metrics_format(&m, text, sizeof(text)) > 0);
		assert_null(strstr(text, "fake"));
		snprintf(want, sizeof(want), "partition=\"q%d\"",
			 MC_METRICS_SERIES_MAX - 1);
		assert_null(strstr(text, want));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_peak),
		cmocka_unit_test(test_advise),
		cmocka_unit_test(test_too_few_samples),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_record),
		cmocka_unit_test(test_record_threads),
		cmocka_unit_test(test_sample),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_squeeze_parse),
		cmocka_unit_test(test_squeeze_read),
		cmocka_unit_test(test_squeeze_advice),
		cmocka_unit_test(test_squeeze_brief),
		cmocka_unit_test(test_squeeze_record),
		cmocka_unit_test(test_jobrec),
		cmocka_unit_test(test_jobrec_aggregate),
		cmocka_unit_test(test_jobrec_aggregate_bounds),
		cmocka_unit_test(test_jobrec_pick),
		cmocka_unit_test(test_metrics),
		cmocka_unit_test(test_metrics_labels),
		cmocka_unit_test(test_metrics_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
