/*
 * bench_load.c - what memcore costs inside one step launch, without Slurm:
 * reading the node-facts cache against loading the topology with hwloc
 * (from XML and live), and computing a step's verdict and binding plan.
 *
 *   bench_load RAW_FILE DATA_DIR H200_XML
 *
 * Prints name=value lines (medians, microseconds) on stdout and every
 * single timing to RAW_FILE ("name sample_us" per line). Run by
 * tests/bench/run.sh (make bench).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hwloc.h>

#include "mc_cache.h"
#include "mc_cgroup.h"
#include "mc_cgread.h"
#include "mc_summary.h"
#include "mc_timeline.h"
#include "mc_config.h"
#include "mc_facts.h"
#include "mc_plan.h"
#include "mc_rules.h"
#include "mc_topology.h"

#define LOADS 50
#define VERDICTS 2000

static FILE *raw;
static struct mc_node_facts facts;

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median of v[0..n); v is sorted in place. */
static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void record(const char *name, const double *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(raw, "%s %.3f\n", name, v[i]);
}

static void die(const char *what, const char *err)
{
	fprintf(stderr, "bench_load: %s: %s\n", what, err);
	exit(1);
}

/* Median microseconds of LOADS hwloc loads of xml (NULL: live). */
static double bench_topology(const char *name, const char *xml)
{
	double t[LOADS];
	char err[512];

	for (int i = 0; i < LOADS; i++) {
		double t0 = now_us();

		if (mc_topology_load(xml, &facts, err, sizeof(err)) < 0)
			die(name, err);
		t[i] = now_us() - t0;
	}
	record(name, t, LOADS);
	return median(t, LOADS);
}

/* Median microseconds of LOADS reads of a cache made from xml. */
static double bench_cache(const char *name, const char *xml,
			  const char *path)
{
	double t[LOADS];
	char err[512];

	if (mc_topology_load(xml, &facts, err, sizeof(err)) < 0 ||
	    mc_cache_write(path, &facts, err, sizeof(err)) < 0)
		die(name, err);
	for (int i = 0; i < LOADS; i++) {
		double t0 = now_us();

		if (mc_cache_read(path, facts.source, &facts, NULL, err,
				  sizeof(err)) < 0)
			die(name, err);
		t[i] = now_us() - t0;
	}
	record(name, t, LOADS);
	unlink(path);
	return median(t, LOADS);
}

/* This machine as an XML file, for topology_xml_load_us on it. */
static void export_live(const char *path)
{
	hwloc_topology_t topo;

	if (hwloc_topology_init(&topo) < 0 ||
	    hwloc_topology_set_io_types_filter(topo,
			HWLOC_TYPE_FILTER_KEEP_ALL) < 0 ||
	    hwloc_topology_load(topo) < 0 ||
	    hwloc_topology_export_xml(topo, path, 0) < 0)
		die("export", "hwloc cannot export this machine");
	hwloc_topology_destroy(topo);
}

/*
 * The work of one GPU step's verdict in slurmstepd, from loaded facts:
 * node summary, GPU memory, verdict, and the binding plan of its GPUs.
 * An 8-GPU step, or all the node's GPUs when it has fewer.
 */
static double bench_verdict(const char *file, const struct mc_policy *pol,
			    double *t)
{
	unsigned idx[MC_MAX_GPUS];
	struct mc_request req = { 0 };
	struct mc_alloc alloc = { 0 };
	struct mc_node node;
	struct mc_verdict v;
	struct mc_plan plan;
	char err[512];
	size_t g;

	if (mc_topology_load(file, &facts, err, sizeof(err)) < 0)
		die(file, err);
	g = facts.n_gpus < 8 ? facts.n_gpus : 8;
	for (size_t i = 0; i < g; i++)
		idx[i] = (unsigned)i;
	for (int i = 0; i < VERDICTS; i++) {
		double t0 = now_us();

		mc_facts_node(&facts, pol, &node);
		req.gpus = (uint32_t)g;
		req.nodes = 1;
		req.dataloader_workers = pol->dataloader_workers;
		req.gpu_memory_bytes = mc_facts_step_gpu_memory(&facts, pol,
								idx, g);
		alloc.mem_bytes = node.ram_bytes;
		alloc.cores = node.cores;
		mc_verdict_compute(pol, &req, &node, &alloc, &v);
		if (mc_plan_compute(&facts, req.dataloader_workers, NULL, idx,
				    g, &plan, err, sizeof(err)) < 0)
			die(file, err);
		mc_plan_free(&plan);
		t[i] = now_us() - t0;
	}
	return median(t, VERDICTS);
}

/*
 * The sampler's price (spank/mc_sampler.c): what its thread does each
 * SampleInterval, one mc_cgread_read() of this process's own memory
 * cgroup (the files a step's sampler reads) with the sample added to the
 * peaks and the timeline, CPU time of this thread per sample, in 20
 * rounds of 500 samples; the median round. No Slurm needed: the same
 * kernel files as in a step.
 */
static double bench_sample(void)
{
	static struct mc_cgread_src src;
	static struct mc_timeline tl;
	struct mc_peak pk = { 0 };
	struct mc_cgroup cg;
	struct mc_sample smp;
	char err[512];
	double per[20];
	uint64_t t = 0;

	if (mc_cgroup_find(NULL, 0, &cg, err, sizeof(err)) < 0 ||
	    mc_cgread_open(&src, &cg, err, sizeof(err)) < 0)
		die("the sampler's cgroup files", err);
	mc_timeline_init(&tl, 1000);
	for (int r = 0; r < 20; r++) {
		struct timespec a, b;

		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
		for (int i = 0; i < 500; i++) {
			if (mc_cgread_read(&src, &smp) < 0)
				die(cg.dir, "mc_cgread_read failed");
			mc_peak_add(&pk, smp.usage_bytes, smp.anon_bytes,
				    smp.shmem_bytes, smp.file_bytes);
			mc_timeline_add(&tl, t += 1000000,
					smp.non_reclaimable_bytes,
					smp.file_bytes, smp.has_cpu,
					smp.cpu_usec, smp.oom_kills);
		}
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
		per[r] = ((b.tv_sec - a.tv_sec) * 1e6 +
			  (b.tv_nsec - a.tv_nsec) / 1e3) / 500;
	}
	mc_cgread_close(&src);
	record("sample_cpu_us", per, 20);
	return median(per, 20);
}

/*
 * The timeline's share of a sample: mc_timeline_add() alone, ns per call,
 * over a 10-hour step at 1 s (36,000 samples, its pairs merged 9 times),
 * 20 rounds; the median round.
 */
static double bench_timeline(void)
{
	static struct mc_timeline tl;
	double per[20];

	for (int r = 0; r < 20; r++) {
		struct timespec a, b;

		mc_timeline_init(&tl, 1000);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
		for (uint64_t i = 0; i < 36000; i++)
			mc_timeline_add(&tl, i * 1000000, (i * 7919) << 12,
					(i * 104729) << 10, true, i * 900000,
					i > 30000);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
		per[r] = ((b.tv_sec - a.tv_sec) * 1e9 +
			  (b.tv_nsec - a.tv_nsec)) / 36000;
	}
	record("timeline_add_ns", per, 20);
	return median(per, 20);
}

int main(int argc, char **argv)
{
	static double vt[VERDICTS], all[64];
	struct mc_policy pol;
	char live_xml[] = "/tmp/mc-bench-live.XXXXXX", cache[64];
	size_t n_topos = 0;
	struct dirent **ents;
	int n;

	if (argc != 4) {
		fprintf(stderr, "usage: bench_load RAW_FILE DATA_DIR H200_XML\n");
		return 2;
	}
	raw = fopen(argv[1], "w");
	if (!raw)
		die(argv[1], "cannot write");
	close(mkstemp(live_xml));
	export_live(live_xml);
	snprintf(cache, sizeof(cache), "/tmp/mc-bench-cache.%ld",
		 (long)getpid());
	mc_policy_defaults(&pol);

	printf("node_facts_load_us_h200=%.1f\n",
	       bench_cache("node_facts_load_us_h200", argv[3], cache));
	printf("node_facts_load_us_this=%.1f\n",
	       bench_cache("node_facts_load_us_this", NULL, cache));
	printf("topology_xml_load_us_h200=%.1f\n",
	       bench_topology("topology_xml_load_us_h200", argv[3]));
	printf("topology_xml_load_us_this=%.1f\n",
	       bench_topology("topology_xml_load_us_this", live_xml));
	printf("topology_live_load_us_this=%.1f\n",
	       bench_topology("topology_live_load_us_this", NULL));
	unlink(live_xml);

	n = scandir(argv[2], &ents, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;
		size_t len = strlen(name);
		char path[4096], key[300];

		if (len > 4 && !strcmp(name + len - 4, ".xml") &&
		    n_topos < 64) {
			snprintf(path, sizeof(path), "%s/%s", argv[2], name);
			all[n_topos] = bench_verdict(path, &pol, vt);
			snprintf(key, sizeof(key), "verdict_us %.*s",
				 (int)(len - 4), name);
			record(key, vt, VERDICTS);
			printf("verdict_us[%.*s]=%.2f\n", (int)(len - 4), name,
			       all[n_topos]);
			n_topos++;
		}
		free(ents[i]);
	}
	if (n >= 0)
		free(ents);
	/* The headline: the slowest topology's median. */
	qsort(all, n_topos, sizeof(all[0]), cmp_double);
	printf("verdict_us_max=%.2f\n", n_topos ? all[n_topos - 1] : 0.0);
	printf("sample_cpu_us=%.2f\n", bench_sample());
	printf("timeline_add_ns=%.1f\n", bench_timeline());
	fclose(raw);
	return 0;
}
