/*
 * bench_gauges.c - what a running step's live gauges cost its sampler
 * thread (spank/mc_gaugefile.c): one mc_gaugefile_write() of a step's
 * file (format, create the temporary file, write, rename over the file),
 * as slurmstepd's sampler makes it at most every MC_GAUGEFILE_EVERY_MS.
 *
 *   bench_gauges RAW_FILE [DIR]
 *
 * DIR: where the file is written (default: a new directory in /var/tmp,
 * on disk as a node_exporter textfile directory usually is; removed
 * after). CPU time of the thread and wall time per write, 20 rounds of 200
 * writes; prints the rounds' medians as name=value lines (microseconds)
 * on stdout, every round to RAW_FILE ("name value" per line). No Slurm.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mc_gauges.h"
#include "../../spank/mc_gaugefile.h"

#define ROUNDS 20
#define WRITES 200

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double us(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) * 1e6 +
	       (double)(b->tv_nsec - a->tv_nsec) / 1e3;
}

int main(int argc, char **argv)
{
	static struct mc_gaugefile g;
	/* Labels as long as a real step's. */
	struct mc_gauge_ids ids = { "1234567", "0", "someuser", "gpu-node-017",
				    "gpu" };
	char tmpl[] = "/var/tmp/mc-bench-gauges.XXXXXX";
	const char *dir = argc > 2 ? argv[2] : NULL;
	double cpu[ROUNDS], wall[ROUNDS];
	FILE *raw;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: bench_gauges RAW_FILE [DIR]\n");
		return 2;
	}
	raw = fopen(argv[1], "w");
	if (!raw || (!dir && !(dir = mkdtemp(tmpl)))) {
		perror(raw ? "mkdtemp" : argv[1]);
		return 1;
	}
	if (mc_gauges_labels(&ids, g.labels, sizeof(g.labels)) < 0 ||
	    mc_gaugefile_name(g.name, ids.node, (long)getpid(), 1234567,
			      "0") < 0)
		return 1;
	snprintf(g.tmp, sizeof(g.tmp), ".%s.tmp", g.name);
	g.dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (g.dfd < 0) {
		perror(dir);
		return 1;
	}
	g.v[MC_G_LIMIT] = 64ULL << 30;
	g.v[MC_G_RULE] = 48ULL << 30;
	g.every_ms = 1000;
	g.on = true;
	for (int r = 0; r < ROUNDS; r++) {
		struct timespec c0, c1, w0, w1;

		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
		clock_gettime(CLOCK_MONOTONIC, &w0);
		for (int i = 0; i < WRITES; i++)
			mc_gaugefile_write(&g, (20ULL << 30) + (uint64_t)i * 4096,
					   (7ULL << 30) + (uint64_t)r, true);
		clock_gettime(CLOCK_MONOTONIC, &w1);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
		cpu[r] = us(&c0, &c1) / WRITES;
		wall[r] = us(&w0, &w1) / WRITES;
		fprintf(raw, "gauge_write_cpu_us %.2f\ngauge_write_wall_us %.2f\n",
			cpu[r], wall[r]);
	}
	if (g.failures) {
		fprintf(stderr, "bench_gauges: %llu writes failed in %s\n",
			(unsigned long long)g.failures, dir);
		return 1;
	}
	mc_gaugefile_remove(&g);
	if (argc < 3)
		rmdir(dir);
	printf("gauge_write_cpu_us=%.2f\ngauge_write_wall_us=%.2f\n",
	       median(cpu, ROUNDS), median(wall, ROUNDS));
	fclose(raw);
	return 0;
}
