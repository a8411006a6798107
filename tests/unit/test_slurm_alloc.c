/*
 * test_slurm_alloc.c - the allocation Slurm gives a job on a node
 * (mc_slurm_alloc.h), rule by rule, against figures worked out by hand
 * from sbatch(1) and slurm.conf(5) (22.05): the memory options and their
 * order, the partition's defaults, every --exclusive form, --mem=0 as
 * sbatch hands it over ("0?"), threads versus cores, typed GPUs, per-task,
 * per-socket and tres forms, and a total spread over nodes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "mc_slurm_alloc.h"
#include "mc_test_slurm_job.h"

#define MiB ((uint64_t)1 << 20)
#define GiB ((uint64_t)1 << 30)

/* 8 x h100, 2048 GiB, 2 sockets x 56 cores x 2 threads. */
static const struct mc_node_record H100 = {
	.name = "h01", .ram_bytes = 2048 * GiB, .cores = 112,
	.threads_per_core = 2, .sockets = 2, .gpus = 8, .gpu_type = "h100",
};

struct want {
	bool excluded;
	uint32_t gpus, tasks, cores;
	uint64_t mem;
	const char *mem_source;
	enum mc_mem_form mem_form;
};

struct tcase {
	const char *opts;		/* "name=value;name=value" */
	struct mc_slurm_part part;
	struct want w;
};

static void run(const struct tcase *c, size_t n)
{
	struct mc_slurm_job j;
	struct mc_slurm_grant g;

	for (size_t i = 0; i < n; i++) {
		job_of(c[i].opts, &j);
		mc_slurm_alloc(&j, &c[i].part, &H100, &g);
		if (g.excluded != c[i].w.excluded)
			fail_msg("%s: excluded %d", c[i].opts, g.excluded);
		if (g.excluded)
			continue;
		if (g.gpus != c[i].w.gpus || g.tasks != c[i].w.tasks ||
		    g.alloc.cores != c[i].w.cores ||
		    g.alloc.mem_bytes != c[i].w.mem ||
		    strcmp(g.mem_source, c[i].w.mem_source) ||
		    g.alloc.mem_form != c[i].w.mem_form)
			fail_msg("%s: gpus %u tasks %u cores %u mem %llu MiB "
				 "'%s' form %d; want %u %u %u %llu MiB '%s' %d",
				 c[i].opts, g.gpus, g.tasks, g.alloc.cores,
				 (unsigned long long)(g.alloc.mem_bytes / MiB),
				 g.mem_source, g.alloc.mem_form, c[i].w.gpus,
				 c[i].w.tasks, c[i].w.cores,
				 (unsigned long long)(c[i].w.mem / MiB),
				 c[i].w.mem_source, c[i].w.mem_form);
		assert_true(g.alloc.requested);
		assert_ptr_equal(g.alloc.mem_source, g.mem_source);
	}
}

/* The memory options, their order and the defaults. */
static void test_memory(void **state)
{
	const struct mc_slurm_part none = { 0 };
	const struct mc_slurm_part gpu_def = { .def_mem_per_gpu_mb = 81920,
					       .def_mem_per_cpu_mb = 4096,
					       .def_cpu_per_gpu = 6 };
	const struct mc_slurm_part cpu_def = { .def_mem_per_cpu_mb = 4096 };
	const struct mc_slurm_part node_def = { .def_mem_per_node_mb = 512000 };
	const struct mc_slurm_part maxcpu = { .max_mem_per_cpu_mb = 8192 };
	const struct mc_slurm_part maxcpu2000 = { .max_mem_per_cpu_mb = 2000 };
	const struct mc_slurm_part maxcpu_n1 = { .max_mem_per_cpu_mb = 2000,
						 .first_node_mem_mb = 386000 };
	const struct tcase c[] = {
		/* --mem per node, as the user wrote it */
		{ "gpus=8;mem=400G;cpus-per-gpu=6", none,
		  { false, 8, 1, 24, 400 * GiB, "--mem=400G", MC_MEM_PER_NODE } },
		/* --mem=0 reaches the filter as "0?": the whole node */
		{ "gpus=8;mem=0?;cpus-per-gpu=6", none,
		  { false, 8, 1, 24, 2048 * GiB, "--mem=0: the whole node",
		    MC_MEM_PER_NODE } },
		{ "gpus-per-node=8;mem-per-gpu=0?;cpus-per-gpu=6", none,
		  { false, 8, 1, 24, 2048 * GiB, "--mem-per-gpu=0: the whole "
		    "node", MC_MEM_PER_GPU } },
		/* --mem-per-gpu=0 is no memory asked: the partition's
		 * default (22.05.8, issue 41: DefMemPerGPU; test_63_oracle:
		 * DefMemPerCPU x the CPUs) */
		{ "gpus-per-node=8;mem-per-gpu=0?;cpus-per-gpu=6", gpu_def,
		  { false, 8, 1, 24, 8 * 80 * GiB, "--mem-per-gpu=0: "
		    "DefMemPerGPU=80G", MC_MEM_PER_GPU } },
		{ "gpus-per-node=2;mem-per-gpu=0?", cpu_def,
		  { false, 2, 1, 1, 2 * 4 * GiB, "--mem-per-gpu=0: "
		    "DefMemPerCPU=4G x 2 CPUs", MC_MEM_PER_GPU } },
		/* per GPU: x the node's GPUs */
		{ "gpus=8;mem-per-gpu=90G;cpus-per-gpu=6", none,
		  { false, 8, 1, 24, 720 * GiB, "--mem-per-gpu=90G",
		    MC_MEM_PER_GPU } },
		/* per CPU: x the CPUs of whole cores (48 CPUs = 24 cores) */
		{ "gpus=8;mem-per-cpu=8G;cpus-per-gpu=6", none,
		  { false, 8, 1, 24, 384 * GiB, "--mem-per-cpu=8G",
		    MC_MEM_PER_CPU } },
		/* an odd CPU count: Slurm gives the whole core, both threads */
		{ "gpus=1;mem-per-cpu=1G;cpus-per-task=3", none,
		  { false, 1, 1, 2, 4 * GiB, "--mem-per-cpu=1G",
		    MC_MEM_PER_CPU } },
		/* the user's option before any default */
		{ "gpus=8;mem=100G", gpu_def,
		  { false, 8, 1, 24, 100 * GiB, "--mem=100G", MC_MEM_PER_NODE } },
		/* no option: DefMemPerGPU for a GPU job, DefCpuPerGPU */
		{ "gpus=8", gpu_def,
		  { false, 8, 1, 24, 640 * GiB, "DefMemPerGPU=80G",
		    MC_MEM_PER_GPU } },
		/* DefMemPerCPU x the allocated CPUs (1 task: 1 core, 2) */
		{ "gpus=8", cpu_def,
		  { false, 8, 1, 1, 8 * GiB, "DefMemPerCPU=4G x 2 CPUs",
		    MC_MEM_PER_CPU } },
		{ "gpus=8", node_def,
		  { false, 8, 1, 1, 500 * GiB, "DefMemPerNode=500G",
		    MC_MEM_PER_NODE } },
		/* nothing at all: the whole node */
		{ "gpus=8;cpus-per-gpu=6", none,
		  { false, 8, 1, 24, 2048 * GiB, "the whole node",
		    MC_MEM_PER_NODE } },
		/* MaxMemPerCPU: 32G per CPU over 8G raises -c 1 to 4 (2
		 * cores, 4 CPUs at 8G) */
		{ "gpus=1;mem-per-cpu=32G", maxcpu,
		  { false, 1, 1, 2, 32 * GiB, "--mem-per-cpu=32G",
		    MC_MEM_PER_CPU } },
		/* MaxMemPerCPU=2000 with --mem=200G per node: Slurm raises
		 * the node's CPUs to 204800/2000 = 103, 52 whole cores
		 * (the corpus' dlw5 row ran on a 40-core node that memcore
		 * said needed 24 cores for 48 CPUs) */
		{ "gpus-per-node=4;cpus-per-gpu=12;mem=200G", maxcpu2000,
		  { false, 4, 1, 52, 200 * GiB, "--mem=200G",
		    MC_MEM_PER_NODE } },
		/* under the limit: the CPUs asked stand (24 cores) */
		{ "gpus-per-node=4;cpus-per-gpu=12;mem=90G", maxcpu2000,
		  { false, 4, 1, 24, 90 * GiB, "--mem=90G",
		    MC_MEM_PER_NODE } },
		/* --mem-per-gpu and --mem-per-cpu=0 are compared as the
		 * partition's first node's memory, 386000 MB: 193 CPUs,
		 * 97 cores (22.05.8 found no node of 96 CPUs for them) */
		{ "gpus-per-node=8;cpus-per-gpu=6;mem-per-gpu=24G", maxcpu_n1,
		  { false, 8, 1, 97, 192 * GiB, "--mem-per-gpu=24G",
		    MC_MEM_PER_GPU } },
		{ "gpus-per-node=4;cpus-per-gpu=12;mem-per-cpu=0?", maxcpu_n1,
		  { false, 4, 1, 97, 2048 * GiB, "--mem-per-cpu=0: the whole "
		    "node", MC_MEM_PER_CPU } },
		/* no memory asked, no per-CPU or per-node default: the
		 * same (22.05.8 raised -N2 --cpus-per-gpu=4
		 * --gpus-per-node=4 to 33 of 40 cores; test_63_oracle) */
		{ "gpus-per-node=4;cpus-per-gpu=4", maxcpu_n1,
		  { false, 4, 1, 97, 2048 * GiB, "the whole node",
		    MC_MEM_PER_NODE } },
		/* unknown first node: this node's 2048 GiB, 1049 CPUs */
		{ "gpus-per-node=8;cpus-per-gpu=6;mem-per-gpu=24G", maxcpu2000,
		  { false, 8, 1, 525, 192 * GiB, "--mem-per-gpu=24G",
		    MC_MEM_PER_GPU } },
		/* --exclusive is all the node's CPUs, more when the memory
		 * takes more: 2048 GiB / 2000 MB = 1049 CPUs */
		{ "gpus-per-node=8;exclusive=exclusive;mem=0?", maxcpu2000,
		  { false, 8, 1, 525, 2048 * GiB, "--mem=0: the whole node",
		    MC_MEM_PER_NODE } },
		{ "gpus-per-node=8;exclusive=exclusive;mem=200G", maxcpu2000,
		  { false, 8, 1, 112, 200 * GiB, "--mem=200G",
		    MC_MEM_PER_NODE } },
	};

	(void)state;
	run(c, sizeof(c) / sizeof(c[0]));
}

/* --exclusive: plain gives all CPUs but only the memory asked; the
 * others keep other jobs off and give what was asked. */
static void test_exclusive(void **state)
{
	const struct mc_slurm_part none = { 0 };
	const struct mc_slurm_part cpu_def = { .def_mem_per_cpu_mb = 4096 };
	const struct mc_slurm_part excl_part = { .exclusive = true };
	const struct tcase c[] = {
		{ "gpus=8;exclusive=exclusive;mem=400G", none,
		  { false, 8, 1, 112, 400 * GiB, "--mem=400G",
		    MC_MEM_PER_NODE } },
		/* the per-CPU default x all 224 CPUs */
		{ "gpus=8;exclusive=exclusive", cpu_def,
		  { false, 8, 1, 112, 896 * GiB, "DefMemPerCPU=4G x 224 CPUs",
		    MC_MEM_PER_CPU } },
		{ "gpus=8;exclusive=exclusive;mem=0?", none,
		  { false, 8, 1, 112, 2048 * GiB, "--mem=0: the whole node",
		    MC_MEM_PER_NODE } },
		/* a whole node has every GPU of the node, whatever it asks
		 * (22.05.8: --exclusive --gpus-per-node=4 got 8) */
		{ "gpus-per-node=4;exclusive=exclusive;mem=400G", none,
		  { false, 8, 1, 112, 400 * GiB, "--mem=400G",
		    MC_MEM_PER_NODE } },
		{ "gpus-per-node=4;mem=400G", excl_part,
		  { false, 8, 1, 112, 400 * GiB, "--mem=400G",
		    MC_MEM_PER_NODE } },
		{ "gpus-per-node=4;exclusive=user;mem=400G", none,
		  { false, 4, 1, 1, 400 * GiB, "--mem=400G", MC_MEM_PER_NODE } },
		{ "gpus=8;exclusive=user;mem=400G", none,
		  { false, 8, 1, 1, 400 * GiB, "--mem=400G", MC_MEM_PER_NODE } },
		{ "gpus=8;exclusive=mcs;mem=400G;cpus-per-gpu=4", none,
		  { false, 8, 1, 16, 400 * GiB, "--mem=400G",
		    MC_MEM_PER_NODE } },
		{ "gpus=8;exclusive=topo;mem=400G", none,
		  { false, 8, 1, 1, 400 * GiB, "--mem=400G", MC_MEM_PER_NODE } },
		{ "gpus=8;exclusive=oversubscribe;mem=400G", none,
		  { false, 8, 1, 1, 400 * GiB, "--mem=400G", MC_MEM_PER_NODE } },
	};

	(void)state;
	run(c, sizeof(c) / sizeof(c[0]));
}

/* The GPU forms, typed requests, spreading and threads. */
static void test_gpus(void **state)
{
	const struct mc_slurm_part none = { 0 };
	const struct tcase c[] = {
		{ "gpus-per-node=h100:8;mem=1T", none,
		  { false, 8, 1, 1, 1024 * GiB, "--mem=1T", MC_MEM_PER_NODE } },
		{ "gres=gres:gpu:h100:4;mem=1T", none,
		  { false, 4, 1, 1, 1024 * GiB, "--mem=1T", MC_MEM_PER_NODE } },
		{ "gpus=H100:8;mem=1T", none,
		  { false, 8, 1, 1, 1024 * GiB, "--mem=1T", MC_MEM_PER_NODE } },
		/* another type: not a candidate */
		{ "gpus-per-node=a100:8", none, { .excluded = true } },
		{ "gres=gres:gpu:a100:8", none, { .excluded = true } },
		{ "gpus=a100:8", none, { .excluded = true } },
		/* -n16 --gpus-per-task=1, no -N: 8 tasks on an 8-GPU node */
		{ "ntasks=16;gpus-per-task=1;cpus-per-task=3;mem=1T", none,
		  { false, 8, 8, 12, 1024 * GiB, "--mem=1T",
		    MC_MEM_PER_NODE } },
		/* with -N2 the tasks are 8 a node as well */
		{ "nodes=2;ntasks=16;gpus-per-task=1;mem=1T", none,
		  { false, 8, 8, 4, 1024 * GiB, "--mem=1T", MC_MEM_PER_NODE } },
		/* -N1: 16 on one node, more than it has */
		{ "nodes=1;ntasks=16;gpus-per-task=1;mem=1T", none,
		  { false, 16, 16, 8, 1024 * GiB, "--mem=1T",
		    MC_MEM_PER_NODE } },
		/* -n64 -c6 --gpus-per-node=8 without -N: the node's 224
		 * CPUs hold 37 tasks (222 CPUs, 111 cores): Slurm spreads */
		{ "ntasks=64;cpus-per-task=6;gpus-per-node=8;mem=1T", none,
		  { false, 8, 37, 111, 1024 * GiB, "--mem=1T",
		    MC_MEM_PER_NODE } },
		/* --gpus=16 without -N: at most the node's 8 */
		{ "gpus=16;ntasks=2;mem=1T", none,
		  { false, 8, 1, 1, 1024 * GiB, "--mem=1T", MC_MEM_PER_NODE } },
		/* -N1-4: Slurm may put the node's own 8 on one node (and
		 * does: two nodes of 8): every placement, judged at its
		 * worst */
		{ "nodes=1-4;gpus=16;mem=1T", none,
		  { false, 8, 1, 1, 1024 * GiB, "--mem=1T", MC_MEM_PER_NODE } },
		/* -N1: all of them, more than the node has (short) */
		{ "nodes=1;gpus=16;mem=1T", none,
		  { false, 16, 1, 1, 1024 * GiB, "--mem=1T", MC_MEM_PER_NODE } },
		/* -N2 --gpus=24 on 8-GPU nodes: at least the even 12 */
		{ "nodes=2;gpus=24;mem=1T", none,
		  { false, 12, 1, 1, 1024 * GiB, "--mem=1T", MC_MEM_PER_NODE } },
		/* -N2 --gpus=8: all but one on a node (22.05.8: 7 + 1) */
		{ "nodes=2;gpus=8;mem=1T", none,
		  { false, 7, 1, 1, 1024 * GiB, "--mem=1T", MC_MEM_PER_NODE } },
		{ "nodes=3;gpus=4;mem=1T", none,
		  { false, 2, 1, 1, 1024 * GiB, "--mem=1T", MC_MEM_PER_NODE } },
		{ "nodes=2;gpus=16;mem=1T", none,
		  { false, 8, 1, 1, 1024 * GiB, "--mem=1T", MC_MEM_PER_NODE } },
		/* tres forms (24.11 sbatch) */
		{ "tres-per-task=gres/gpu:2;ntasks-per-node=4;mem=1T", none,
		  { false, 8, 4, 2, 1024 * GiB, "--mem=1T", MC_MEM_PER_NODE } },
		{ "tres-per-task=cpu=6,gres/gpu=1;ntasks-per-node=8;mem=1T",
		  none, { false, 8, 8, 24, 1024 * GiB, "--mem=1T",
			  MC_MEM_PER_NODE } },
		{ "tres-per-node=gres/gpu:8;mem=1T", none,
		  { false, 8, 1, 1, 1024 * GiB, "--mem=1T", MC_MEM_PER_NODE } },
		/* per socket: x --sockets-per-node, else the node's 2 */
		{ "gpus-per-socket=4;mem=1T", none,
		  { false, 8, 1, 1, 1024 * GiB, "--mem=1T", MC_MEM_PER_NODE } },
		{ "gpus-per-socket=4;sockets-per-node=1;mem=1T", none,
		  { false, 4, 1, 1, 1024 * GiB, "--mem=1T", MC_MEM_PER_NODE } },
		/* 2 x 8 on an 8-GPU node: Slurm 22.05 gives the node's 8,
		 * and CPUs for the 16 asked: 6 x 16 = 96 CPUs, 48 cores */
		{ "gpus-per-socket=8;sockets-per-node=2;cpus-per-gpu=6;mem=1T",
		  none, { false, 8, 1, 48, 1024 * GiB, "--mem=1T",
			  MC_MEM_PER_NODE } },
		/* compute_bound is one thread a core (proc_args.c
		 * verify_hint: min_threads 1; 22.05.8 gave -c3 on 4 threads
		 * a core whole cores, issue 41) */
		{ "gpus-per-node=1;ntasks=8;cpus-per-task=3;hint=compute_bound;"
		  "mem=1T", none, { false, 1, 8, 24, 1024 * GiB, "--mem=1T",
				   MC_MEM_PER_NODE } },
		/* nomultithread: one CPU a core */
		{ "gpus=8;cpus-per-gpu=3;hint=nomultithread;mem-per-cpu=1G",
		  none, { false, 8, 1, 24, 24 * GiB, "--mem-per-cpu=1G",
			  MC_MEM_PER_CPU } },
		{ "gpus=8;cpus-per-gpu=3;mem-per-cpu=1G", none,
		  { false, 8, 1, 12, 24 * GiB, "--mem-per-cpu=1G",
		    MC_MEM_PER_CPU } },
	};

	(void)state;
	run(c, sizeof(c) / sizeof(c[0]));
}

/* The type rule --gpu-type shares with --slurm-options' --gres types. */
static void test_type_excludes(void **state)
{
	char why[128] = "";

	assert_false(mc_slurm_type_excludes(NULL, "a100", why, sizeof(why)));
	assert_false(mc_slurm_type_excludes("", "a100", why, sizeof(why)));
	assert_false(mc_slurm_type_excludes("H100", "h100", why, sizeof(why)));
	assert_false(mc_slurm_type_excludes("h100", "*", why, sizeof(why)));
	assert_string_equal(why, "");
	assert_true(mc_slurm_type_excludes("h100", "a100", why, sizeof(why)));
	assert_string_equal(why, "its GPUs are a100, the job asks for h100");
	assert_true(mc_slurm_type_excludes("h100", "", why, sizeof(why)));
	assert_string_equal(why, "its GPUs are untyped, the job asks for h100");
}

static void test_values(void **state)
{
	struct mc_slurm_job j;
	uint64_t mb;
	char err[128];

	(void)state;
	assert_int_equal(mc_slurm_mem_mb("0?", &mb, err, sizeof(err)), 0);
	assert_int_equal(mb, 0);
	assert_int_equal(mc_slurm_mem_mb("1000", &mb, err, sizeof(err)), 0);
	assert_int_equal(mb, 1000);
	assert_int_equal(mc_slurm_mem_mb("2T", &mb, err, sizeof(err)), 0);
	assert_int_equal(mb, 2 << 20);
	assert_int_equal(mc_slurm_mem_mb("1P", &mb, err, sizeof(err)), 0);
	assert_int_equal(mb, 1ULL << 30);
	assert_int_equal(mc_slurm_mem_mb("1536K", &mb, err, sizeof(err)), 0);
	assert_int_equal(mb, 2);
	assert_int_equal(mc_slurm_mem_mb("5?", &mb, err, sizeof(err)), -1);
	assert_string_equal(err, "unknown size suffix '?'");
	memset(&j, 0, sizeof(j));
	assert_int_equal(mc_slurm_job_set(&j, "mem", "12X", err, sizeof(err)),
			 -1);
	assert_string_equal(err, "--mem=12X: unknown size suffix 'X'");
	/* shards and MPS: a share of one card (sized by mc_share_apply) */
	assert_int_equal(mc_slurm_job_set(&j, "gres", "gres:shard:2", err,
					  sizeof(err)), 0);
	assert_false(mc_slurm_job_has_gpus(&j));
	assert_int_equal(j.shards, 2);
	memset(&j, 0, sizeof(j));
	assert_int_equal(mc_slurm_job_set(&j, "gres", "gres:mps:50", err,
					  sizeof(err)), 0);
	assert_int_equal(j.mps, 50);
	/* Counts read as GPU counts are: summed in 64 bits and held at the
	 * largest, never wrapped to a job without GPUs; a type alone is
	 * one; what is no count is an error, not "no GPUs". */
	memset(&j, 0, sizeof(j));
	assert_int_equal(mc_slurm_job_set(&j, "gres", "gres:mps:2147483648,"
					  "gres:mps:2147483648", err,
					  sizeof(err)), 0);
	assert_int_equal(j.mps, UINT32_MAX);
	memset(&j, 0, sizeof(j));
	assert_int_equal(mc_slurm_job_set(&j, "gres", "gres:shard:4294967295,"
					  "gres:shard:5", err, sizeof(err)), 0);
	assert_int_equal(j.shards, UINT32_MAX);
	memset(&j, 0, sizeof(j));
	assert_int_equal(mc_slurm_job_set(&j, "gres", "gres:shard:a100", err,
					  sizeof(err)), 0);
	assert_int_equal(j.shards, 1);
	memset(&j, 0, sizeof(j));
	assert_int_equal(mc_slurm_job_set(&j, "gres", "gres:shard:a100:3", err,
					  sizeof(err)), 0);
	assert_int_equal(j.shards, 3);
	/* "mps:abc" is a type named abc, one share, as Slurm reads it (and
	 * refuses a type it does not know); a count that is not digits is
	 * an error. */
	for (const char *const *b = (const char *const[]){ "gres:mps:25x",
	     "gres:shard:a100:x", "gres:mps:a100:", "gres:shard:1k", NULL };
	     *b; b++) {
		memset(&j, 0, sizeof(j));
		if (mc_slurm_job_set(&j, "gres", *b, err, sizeof(err)) != -1)
			fail_msg("--gres=%s read as mps %u, shards %u", *b,
				 j.mps, j.shards);
	}
	/* Slurm's unset sentinels read as unset */
	assert_int_equal(mc_slurm_job_set(&j, "ntasks-per-node", "-2", err,
					  sizeof(err)), 0);
	assert_int_equal(j.ntasks_per_node, 0);
	assert_int_equal(mc_slurm_job_set(&j, "nodes", "2-4", err,
					  sizeof(err)), 0);
	assert_int_equal(j.nodes_min, 2);
	assert_int_equal(j.nodes_max, 4);
}

/*
 * What Slurm sets itself after the cli_filter (sbatch/salloc/srun
 * _opt_verify, gres.c gres_job_state_validate; 22.05 to 26.05), and
 * --mincpus and OverSubscribe=EXCLUSIVE. The H100 node: 224 CPUs, 112
 * cores. Each figure by hand from those rules.
 */
static void test_set_by_slurm(void **state)
{
	static const struct mc_slurm_part none = { 0 }, excl = {
		.exclusive = true };
	static const struct tcase c[] = {
		/* at least 96 CPUs: 48 cores */
		{ "gpus-per-node=8;mincpus=96;mem=400G", none,
		  { false, 8, 1, 48, 400 * GiB, "--mem=400G", MC_MEM_PER_NODE } },
		/* below what the tasks take: no change */
		{ "gpus-per-node=8;mincpus=2;cpus-per-gpu=6;mem=400G", none,
		  { false, 8, 1, 24, 400 * GiB, "--mem=400G", MC_MEM_PER_NODE } },
		/* 2 tasks per GPU of 8: 16 tasks x 4 CPUs = 32 cores (and
		 * as few as max(16 tasks, 4) = 8: test_cores_fewest) */
		{ "gpus-per-node=8;ntasks-per-gpu=2;cpus-per-task=4;mem=400G",
		  none,
		  { false, 8, 16, 32, 400 * GiB, "--mem=400G", MC_MEM_PER_NODE } },
		/* -n given: sbatch's min_cpus is -n x -c */
		{ "nodes=1;ntasks=4;gpus-per-node=4;ntasks-per-gpu=1;"
		  "cpus-per-task=12;mem=400G", none,
		  { false, 4, 4, 24, 400 * GiB, "--mem=400G", MC_MEM_PER_NODE } },
		{ "gpus=8;nodes=1;ntasks-per-tres=1;cpus-per-task=6;mem=400G",
		  none,
		  { false, 8, 8, 24, 400 * GiB, "--mem=400G", MC_MEM_PER_NODE } },
		/* -n8 with 2 tasks per GPU: 4 GPUs */
		{ "nodes=1;ntasks=8;ntasks-per-gpu=2;cpus-per-task=4;mem=400G",
		  none,
		  { false, 4, 8, 16, 400 * GiB, "--mem=400G", MC_MEM_PER_NODE } },
		/* -N2 alone: 2 x 3 tasks, 6 / 3 = 2 GPUs, one a node */
		{ "nodes=2;ntasks-per-gpu=3;mem=400G", none,
		  { false, 1, 3, 2, 400 * GiB, "--mem=400G", MC_MEM_PER_NODE } },
		/* sbatch: -N1 --cores-per-socket=24: 24 tasks, x 2 CPUs */
		{ "nodes=1;cores-per-socket=24;cpus-per-task=2;gpus-per-node=8;"
		  "mem=400G", none,
		  { false, 8, 24, 24, 400 * GiB, "--mem=400G", MC_MEM_PER_NODE } },
		{ "nodes=1;sockets-per-node=2;cores-per-socket=4;"
		  "threads-per-core=2;gpus-per-node=8;mem=400G", none,
		  { false, 8, 16, 8, 400 * GiB, "--mem=400G", MC_MEM_PER_NODE } },
		/* a node range: Slurm sets no tasks */
		{ "nodes=1-2;cores-per-socket=24;gpus-per-node=8;mem=400G", none,
		  { false, 8, 1, 1, 400 * GiB, "--mem=400G", MC_MEM_PER_NODE } },
		/* -n given: it stays */
		{ "nodes=1;ntasks=2;cores-per-socket=24;gpus-per-node=8;mem=400G",
		  none,
		  { false, 8, 2, 1, 400 * GiB, "--mem=400G", MC_MEM_PER_NODE } },
		/* OverSubscribe=EXCLUSIVE: the whole node's cores */
		{ "gpus-per-node=8;mem=400G", excl,
		  { false, 8, 1, 112, 400 * GiB, "--mem=400G", MC_MEM_PER_NODE } },
	};
	struct mc_slurm_job j;
	struct mc_slurm_grant g;

	(void)state;
	run(c, sizeof(c) / sizeof(c[0]));
	/* srun: --cores-per-socket sets tasks only with all three given */
	job_of("nodes=1;cores-per-socket=24;cpus-per-task=2;gpus-per-node=8;"
	       "mem=400G", &j);
	j.srun = true;
	mc_slurm_alloc(&j, &none, &H100, &g);
	assert_int_equal(g.tasks, 1);
	assert_int_equal(g.alloc.cores, 1);
	job_of("nodes=1;sockets-per-node=2;cores-per-socket=4;"
	       "threads-per-core=2;gpus-per-node=8;mem=400G", &j);
	j.srun = true;
	mc_slurm_alloc(&j, &none, &H100, &g);
	assert_int_equal(g.tasks, 16);
	/* a GPU job by --ntasks-per-gpu alone */
	job_of("ntasks=8;ntasks-per-gpu=2", &j);
	assert_true(mc_slurm_job_has_gpus(&j));
	job_of("nodes=2;ntasks-per-gpu=2", &j);
	assert_true(mc_slurm_job_has_gpus(&j));
	job_of("ntasks-per-gpu=2", &j);
	assert_false(mc_slurm_job_has_gpus(&j));
}

/* The placement line: only where the worst is not the even split. */
/* --threads-per-core=T below the node's: whole cores of T usable
 * threads (22.05.8: -c24 --threads-per-core=2 on an IBM AC922, 4 threads
 * a core, got 12 cores; issue 41, test_63_oracle). */
static void test_smt4(void **state)
{
	static const struct mc_node_record p9 = {
		.name = "p9", .ram_bytes = 256 * GiB, .cores = 40,
		.threads_per_core = 4, .sockets = 2, .gpus = 4,
	};
	static const struct { const char *opts; uint32_t cores, cpus; } c[] = {
		{ "gpus-per-node=1;cpus-per-task=24;threads-per-core=2", 12, 24 },
		{ "gpus-per-node=1;cpus-per-task=24", 6, 24 },
		{ "gpus-per-node=1;cpus-per-task=24;threads-per-core=1", 24, 24 },
		{ "gpus-per-node=1;ntasks-per-node=4;cpus-per-gpu=4;"
		  "threads-per-core=2", 2, 4 },
	};
	const struct mc_slurm_part none = { 0 };
	struct mc_slurm_job j;
	struct mc_slurm_grant g;

	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		job_of(c[i].opts, &j);
		mc_slurm_alloc(&j, &none, &p9, &g);
		if (g.alloc.cores != c[i].cores || g.cpus != c[i].cpus)
			fail_msg("%s: %u cores %u CPUs, want %u %u", c[i].opts,
				 g.alloc.cores, g.cpus, c[i].cores, c[i].cpus);
	}
}

/* -n over -N: judged at the most a node may get, with a placement line
 * (22.05.8: -N2 -n12 --gpus-per-task=1 -c6 on 8-GPU nodes is 8 + 4,
 * issue 41); not for tasks a node Slurm sets from -B's parts or
 * --ntasks-per-gpu, nor with --ntasks-per-node. */
static void test_packed(void **state)
{
	static const struct {
		const char *opts;
		uint32_t tasks, gpus;
		const char *has;	/* in the placement line; "" none */
	} c[] = {
		{ "nodes=2;ntasks=12;gpus-per-task=1;cpus-per-task=6", 8, 8,
		  "up to 8 of the 12 tasks on one node (-n over -N is packed, "
		  "not split evenly), so this is judged at 8; "
		  "--ntasks-per-node=6 splits them evenly" },
		{ "nodes=2;ntasks=12;ntasks-per-node=6;gpus-per-task=1;"
		  "cpus-per-task=6", 6, 6, "" },
		{ "nodes=2;ntasks=2;gpus-per-node=4", 1, 4, "" },
		{ "nodes=2;sockets-per-node=1;threads-per-core=2;"
		  "gpus-per-node=1", 2, 1, "" },
		/* a range: all on one node if they fit (22.05.8: -N1-2 -n6
		 * -c12 on 48 CPUs 4 + 2) */
		{ "nodes=1-2;ntasks=3;cpus-per-task=56;gpus-per-node=4", 3, 4,
		  "up to 3 of the 3 tasks" },
		{ "nodes=1-2;ntasks=6;cpus-per-task=56;gpus-per-node=4", 4, 4,
		  "up to 4 of the 6 tasks" },
	};
	const struct mc_slurm_part none = { 0 };
	struct mc_slurm_job j;
	struct mc_slurm_grant g;

	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		job_of(c[i].opts, &j);
		mc_slurm_alloc(&j, &none, &H100, &g);
		if (g.tasks != c[i].tasks || g.gpus != c[i].gpus)
			fail_msg("%s: %u tasks %u GPUs, want %u %u", c[i].opts,
				 g.tasks, g.gpus, c[i].tasks, c[i].gpus);
		if (c[i].has[0] ? !strstr(g.placement, c[i].has)
				: g.placement[0] != '\0')
			fail_msg("%s: placement '%s', want '%s'", c[i].opts,
				 g.placement, c[i].has);
	}
}

static void test_placement_line(void **state)
{
	static const struct {
		const char *opts;
		const char *line;	/* the placement, exactly; or */
		const char *has;	/* ... a part of it */
		uint32_t gpus;		/* judged at; 0: not checked */
		int fixed;		/* gpus_fixed: 1 yes, -1 no, 0 any */
	} c[] = {
		{ "nodes=2;gpus=8;mem=120G",
		  "  placement: Slurm may put up to 7 of the 8 GPUs on one "
		  "node (--gpus over -N is not split evenly), so this is "
		  "judged at 7; --gpus-per-node=4 splits them evenly",
		  NULL, 0, -1 },
		/* 7 over -N2 has no even split; a range none either */
		{ "nodes=2;gpus=7;mem=120G",
		  "  placement: Slurm may put up to 6 of the 7 GPUs on one "
		  "node (--gpus over -N is not split evenly), so this is "
		  "judged at 6; --gpus-per-node with a fixed -N gives every "
		  "node the same", NULL, 0, 0 },
		{ "nodes=2-4;gpus=8;mem=120G", NULL, "with a fixed -N gives",
		  7, 0 },
		{ "nodes=2;gpus=16;mem=120G", "", NULL, 0, 0 }, /* 8 + 8 */
		{ "nodes=2;gpus-per-node=4;mem=120G", "", NULL, 0, 0 },
		{ "nodes=1;gpus=8;mem=120G", "", NULL, 0, 1 },
	};
	const struct mc_slurm_part none = { 0 };
	struct mc_slurm_job j;
	struct mc_slurm_grant g;

	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		job_of(c[i].opts, &j);
		mc_slurm_alloc(&j, &none, &H100, &g);
		if (c[i].line && strcmp(g.placement, c[i].line))
			fail_msg("%s: placement '%s', want '%s'", c[i].opts,
				 g.placement, c[i].line);
		if (c[i].has && !strstr(g.placement, c[i].has))
			fail_msg("%s: placement '%s' lacks '%s'", c[i].opts,
				 g.placement, c[i].has);
		if (c[i].gpus && g.gpus != c[i].gpus)
			fail_msg("%s: %u GPUs, want %u", c[i].opts, g.gpus,
				 c[i].gpus);
		if (c[i].fixed && g.gpus_fixed != (c[i].fixed > 0))
			fail_msg("%s: gpus_fixed %d", c[i].opts, g.gpus_fixed);
	}
}

/*
 * --ntasks-per-gpu with -c and neither -n nor --ntasks-per-node: the grant
 * is tasks x -c, and Slurm may give as few as max(tasks, -c) CPUs a node
 * (sbatch's min_cpus; 22.05.8 gave -N1 --gpus-per-node=4
 * --ntasks-per-gpu=1 -c12 12 CPUs). Whole cores on the H100 (2 threads).
 */
static void test_cores_fewest(void **state)
{
	const struct mc_slurm_part none = { 0 };
	const struct {
		const char *opts;
		uint32_t cores, fewest;
	} c[] = {
		{ "nodes=1;gpus-per-node=4;ntasks-per-gpu=1;cpus-per-task=12",
		  24, 6 },
		{ "gpus-per-node=8;ntasks-per-gpu=2;cpus-per-task=4", 32, 8 },
		/* --cpus-per-gpu is honoured: 4 x 8 = 32 CPUs at least */
		{ "nodes=1;gpus-per-node=4;ntasks-per-gpu=1;cpus-per-task=12;"
		  "cpus-per-gpu=8", 24, 16 },
		/* -n given (sbatch's min_cpus is -n x -c), one CPU a task,
		 * --ntasks-per-node: what is asked is given */
		{ "nodes=1;ntasks=4;gpus-per-node=4;ntasks-per-gpu=1;"
		  "cpus-per-task=12", 24, 0 },
		/* -n below the tasks --ntasks-per-gpu gives: as few as
		 * -n x -c (22.05.8: -n3 -c4 --gpus-per-node=4
		 * --ntasks-per-gpu=1 got 12 CPUs; test_63_oracle) */
		{ "nodes=1;ntasks=3;gpus-per-node=4;ntasks-per-gpu=1;"
		  "cpus-per-task=4", 8, 6 },
		{ "nodes=1;gpus-per-node=4;ntasks-per-gpu=1", 2, 0 },
		{ "nodes=1;ntasks-per-node=4;gpus-per-node=4;ntasks-per-gpu=1;"
		  "cpus-per-task=12", 24, 0 },
		/* --exclusive: the whole node either way */
		{ "nodes=1;gpus-per-node=4;ntasks-per-gpu=1;cpus-per-task=12;"
		  "exclusive=exclusive", 112, 0 },
	};
	struct mc_slurm_job j;
	struct mc_slurm_grant g;

	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		job_of(c[i].opts, &j);
		mc_slurm_alloc(&j, &none, &H100, &g);
		if (g.alloc.cores != c[i].cores ||
		    g.alloc.cores_fewest != c[i].fewest)
			fail_msg("%s: cores %u fewest %u; want %u %u",
				 c[i].opts, g.alloc.cores, g.alloc.cores_fewest,
				 c[i].cores, c[i].fewest);
	}
	/* MaxMemPerCPU's raise on a job whose tasks are counted (-n, or
	 * -B's parts): 22.05.8 gave -N1 --cores-per-socket=6 -c2
	 * --gpus-per-node=4 --mem=200G its 6 tasks x 2 CPUs, and -n1 -c2
	 * --gres=gpu:2 --mem=150G, -n4 --gpus-per-task=1 --mem=100G theirs
	 * (test_63_oracle): judged at both ends, the tasks' CPUs the fewest,
	 * 103 CPUs = 52 cores the most; without a task count the raise
	 * sizes the job. */
	{
		const struct mc_slurm_part mm = { .max_mem_per_cpu_mb = 2000 };

		job_of("nodes=1;cores-per-socket=6;cpus-per-task=2;"
		       "gpus-per-node=4;mem=200G", &j);
		mc_slurm_alloc(&j, &mm, &H100, &g);
		assert_int_equal(g.alloc.cores, 52);
		assert_int_equal(g.alloc.cores_fewest, 6);
		job_of("nodes=1;ntasks=6;cpus-per-task=2;gpus-per-node=4;"
		       "mem=200G", &j);
		mc_slurm_alloc(&j, &mm, &H100, &g);
		assert_int_equal(g.alloc.cores, 52);
		assert_int_equal(g.alloc.cores_fewest, 6);
		job_of("nodes=1;cpus-per-gpu=6;gpus-per-node=4;mem=200G", &j);
		mc_slurm_alloc(&j, &mm, &H100, &g);
		assert_int_equal(g.alloc.cores, 52);
		assert_int_equal(g.alloc.cores_fewest, 0);
	}
}

/*
 * MaxMemPerNode: the figure slurmctld compares (22.05 job_mgr.c
 * _valid_pn_min_mem, the request's, not the allocation's), worked out by
 * hand from that function on the H100 node (224 CPUs, 2048 GiB). The rows
 * marked "seen" were run on Slurm 22.05.8 under MaxMemPerNode=180000 on a
 * 96-CPU node: -n2 -c24 --mem-per-cpu=4G compares 96G and runs (192G
 * allocated); --exclusive --mem-per-cpu=2G, --mem-per-gpu, --mem=0 and no
 * memory at all stay pending (MaxMemPerLimit).
 */
static void test_max_mem_per_node(void **state)
{
	const struct mc_slurm_part mmn = { .max_mem_per_node_mb = 180000 };
	const struct mc_slurm_part mmn_dmc = { .max_mem_per_node_mb = 180000,
					       .def_mem_per_cpu_mb = 4000 };
	const struct mc_slurm_part mmn_dmn = { .max_mem_per_node_mb = 180000,
					       .def_mem_per_node_mb = 100000 };
	const struct mc_slurm_part mmn_excl = { .max_mem_per_node_mb = 180000,
						.exclusive = true };
	const struct {
		const char *opts;
		const struct mc_slurm_part *part;
		uint64_t asked_mb;
	} c[] = {
		{ "gpus-per-node=8;mem=200G", &mmn, 204800 },
		{ "gpus-per-node=8;mem=150G", &mmn, 153600 },
		/* seen: --mem=0, --mem-per-gpu, nothing: the node's memory */
		{ "gpus-per-node=8;mem=0?", &mmn, 2048 * 1024 },
		{ "gpus-per-node=2;mem-per-gpu=10G", &mmn, 2048 * 1024 },
		{ "gpus-per-node=8", &mmn, 2048 * 1024 },
		/* seen: -n2 -c24 without -N: 1 x 24 CPUs x 4G */
		{ "gpus=1;ntasks=2;cpus-per-task=24;mem-per-cpu=4G", &mmn,
		  24 * 4096 },
		/* -N2 -n8 -c4: ceil(8 / 2) x 4 = 16 CPUs */
		{ "nodes=2;ntasks=8;cpus-per-task=4;gpus-per-node=4;"
		  "mem-per-cpu=4G", &mmn, 16 * 4096 },
		/* --ntasks-per-node=6 -c2, --mincpus=20 above it */
		{ "ntasks-per-node=6;cpus-per-task=2;gpus-per-node=4;"
		  "mincpus=20;mem-per-cpu=1G", &mmn, 20 * 1024 },
		/* seen: --exclusive: all the node's CPUs */
		{ "exclusive=exclusive;gpus-per-node=8;mem-per-cpu=2G", &mmn,
		  224 * 2048 },
		{ "gpus-per-node=8;mem-per-cpu=1G", &mmn_excl, 224 * 1024 },
		/* the partition's defaults without --mem */
		{ "gpus-per-node=8;cpus-per-task=10", &mmn_dmc, 10 * 4000 },
		{ "gpus-per-node=8", &mmn_dmn, 100000 },
	};
	struct mc_slurm_job j;
	struct mc_slurm_grant g;

	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		job_of(c[i].opts, &j);
		mc_slurm_alloc(&j, c[i].part, &H100, &g);
		assert_false(g.excluded);
		if (g.alloc.mem_limit_bytes != 180000 * MiB ||
		    g.alloc.mem_limit_asked_bytes != c[i].asked_mb * MiB)
			fail_msg("%s: limit %llu MiB asked %llu MiB; want 180000 "
				 "%llu", c[i].opts, (unsigned long long)
				 (g.alloc.mem_limit_bytes / MiB),
				 (unsigned long long)
				 (g.alloc.mem_limit_asked_bytes / MiB),
				 (unsigned long long)c[i].asked_mb);
	}
	/* no ceiling: nothing to compare */
	job_of("gpus-per-node=8;mem=200G", &j);
	mc_slurm_alloc(&j, &(const struct mc_slurm_part){ 0 }, &H100, &g);
	assert_int_equal(g.alloc.mem_limit_bytes, 0);
	assert_int_equal(g.alloc.mem_limit_asked_bytes, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_memory),
		cmocka_unit_test(test_exclusive),
		cmocka_unit_test(test_gpus),
		cmocka_unit_test(test_type_excludes),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_set_by_slurm),
		cmocka_unit_test(test_max_mem_per_node),
		cmocka_unit_test(test_cores_fewest),
		cmocka_unit_test(test_placement_line),
		cmocka_unit_test(test_smt4),
		cmocka_unit_test(test_packed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
