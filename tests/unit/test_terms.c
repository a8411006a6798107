/*
 * test_terms.c - the host-RAM terms of mc_terms.h, each against a figure
 * this test derives from its source: the model copies of from_pretrained
 * per rank (4 bytes a parameter in fp32), FSDP's FULL_STATE_DICT (every
 * parameter in the dtype it was built in, plus Adam's two moments in the
 * same dtype), DeepSpeed's 16-bit
 * gather (2 bytes a parameter), DeepSpeed's activation checkpoints (one
 * layer input of micro-batch x seq x hidden per layer), nvme's pinned
 * buffers; a dataset held in RAM (one copy per task and per DataLoader
 * worker); how they combine; cores per rank; shared GPUs; the fix,
 * including the job's own load and save options where those are what
 * does not fit.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "mc_judge.h"
#include "mc_parse.h"
#include "mc_rules.h"
#include "mc_terms.h"

#define GiB ((uint64_t)1 << 30)
#define GPTJ 6053381344ULL	/* EleutherAI/gpt-j-6b model card */
#define LLAMA7 6738415616ULL	/* meta-llama/Llama-2-7b-hf */

static char buf[64];

static const char *gib(uint64_t b)
{
	return mc_fmt_bytes(b, buf, sizeof(buf));
}

struct row { const char *what; uint64_t got, want; const char *shown; };

static void table(const struct row *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		fprintf(stderr, "  %-52s %20llu B  %s\n", t[i].what,
			(unsigned long long)t[i].got, gib(t[i].got));
		assert_int_equal(t[i].got, t[i].want);
		if (t[i].shown)
			assert_string_equal(gib(t[i].got), t[i].shown);
	}
}

static void test_load(void **state)
{
	struct mc_usage u = { 0 };
	struct mc_usage r0 = { .load = MC_LOAD_RANK0 };
	struct mc_usage meta = { .load = MC_LOAD_META };
	struct mc_usage bf = { .dtype_bytes = 2 };
	/* aicomp#16: GPT-J-6B in fp32 is 22.55 GiB a rank */
	uint64_t copy = GPTJ * 4;
	struct row t[] = {
		{ "GPT-J-6B fp32, one copy", mc_terms_load_bytes(&u, 1, GPTJ, 0),
		  copy, "22.55 GiB" },
		{ "GPT-J-6B fp32, 8 ranks per node", mc_terms_load_bytes(&u, 8,
		  GPTJ, 0), 8 * copy, "180.40 GiB" },
		{ "... --model-load=rank0", mc_terms_load_bytes(&r0, 8, GPTJ,
		  0), copy, NULL },
		{ "... --model-load=meta", mc_terms_load_bytes(&meta, 8, GPTJ,
		  0), 0, NULL },
		{ "... bf16, 8 ranks", mc_terms_load_bytes(&bf, 8, GPTJ, 0),
		  8 * GPTJ * 2, NULL },
		{ "... with a ZeRO stage (DeepSpeed's term instead)",
		  mc_terms_load_bytes(&u, 8, GPTJ, 2), 0, NULL },
	};

	table(t, sizeof(t) / sizeof(t[0]));
}

static void test_save(void **state)
{
	struct mc_usage r0 = { .save = MC_SAVE_RANK0 };
	struct mc_usage all = { .save = MC_SAVE_ALL };
	struct mc_usage r0o = { .save = MC_SAVE_RANK0, .save_optimizer = true };
	struct mc_usage ds = { .save_16bit = true };
	/* Built in bf16 (--model-dtype=bf16): saved in bf16, and Adam's
	 * moments are zeros_like(param), bf16 too. */
	struct mc_usage bf = { .save = MC_SAVE_RANK0, .dtype_bytes = 2 };
	struct mc_usage bfo = { .save = MC_SAVE_RANK0, .dtype_bytes = 2,
				.save_optimizer = true };
	/* FSDP FULL_STATE_DICT: every parameter as an fp32 tensor; Adam's
	 * full optimizer state dict: exp_avg and exp_avg_sq, fp32 each. */
	uint64_t sd = LLAMA7 * 4, osd = LLAMA7 * (4 + 4);
	struct row t[] = {
		{ "Llama-2-7B FULL_STATE_DICT rank0_only", mc_terms_save_bytes(
		  &r0, 8, LLAMA7), sd, "25.10 GiB" },
		{ "... on every one of 8 ranks", mc_terms_save_bytes(&all, 8,
		  LLAMA7), 8 * sd, NULL },
		{ "... rank0, with the optimizer state", mc_terms_save_bytes(
		  &r0o, 8, LLAMA7), sd + osd, "75.31 GiB" },
		{ "... rank0, weights built (and saved) in bf16",
		  mc_terms_save_bytes(&bf, 8, LLAMA7), LLAMA7 * 2,
		  "12.55 GiB" },
		{ "... bf16, with Adam's two bf16 moments",
		  mc_terms_save_bytes(&bfo, 8, LLAMA7), LLAMA7 * (2 + 2 + 2),
		  "37.65 GiB" },
		{ "DeepSpeed 16-bit gather on save (rank 0)",
		  mc_terms_save_bytes(&ds, 8, LLAMA7), LLAMA7 * 2,
		  "12.55 GiB" },
	};

	table(t, sizeof(t) / sizeof(t[0]));
}

static void test_activations(void **state)
{
	/* Llama-2-7B: 32 layers, hidden 4096; micro-batch 4, seq 4096,
	 * bf16: one checkpoint of mb x seq x hidden x 2 bytes per layer. */
	struct mc_usage u = { .cpu_checkpointing = true, .layers = 32,
			      .hidden = 4096, .seq_len = 4096,
			      .micro_batch = 4, .act_bytes = 2 };
	struct mc_usage part = u, off = u;
	uint64_t per_rank = 32ULL * 4 * 4096 * 4096 * 2;
	struct row t[3];

	part.partition_activations = true;
	part.model_parallel = 2;
	off.cpu_checkpointing = false;
	t[0] = (struct row){ "activations per rank", mc_terms_act_bytes(&u, 1),
			     per_rank, "4 GiB" };
	t[1] = (struct row){ "8 ranks, partition_activations over mp 2",
			     mc_terms_act_bytes(&part, 8), 8 * per_rank / 2,
			     "16 GiB" };
	t[2] = (struct row){ "no cpu_checkpointing", mc_terms_act_bytes(&off,
			     8), 0, NULL };
	table(t, 3);
}

static void test_combine(void **state)
{
	/* The load peak comes before the workers and the offload; the save
	 * peak during training, on top of them. */
	assert_int_equal(mc_terms_combine(640, 8, 200, 64, 0, 0, 0, 0),
			 640 + 8 + 200);
	assert_int_equal(mc_terms_combine(640, 8, 50, 64, 0, 0, 0, 25),
			 640 + 8 + 89);
	assert_int_equal(mc_terms_combine(1, 1, 0, 1, 1, 1, 1, 1), 7);
	assert_int_equal(mc_terms_combine(UINT64_MAX, 1, 0, 1, 0, 0, 0, 0),
			 UINT64_MAX);
}

static struct mc_judgement J;

/* mc_judge on a node of node_ram and 96 cores with 8 GPUs, the step given
 * mem and cores; the explanation to stderr. */
static void judge_node(const struct mc_policy *p, const struct mc_request *r,
		       uint64_t node_ram, uint64_t mem, uint32_t cores)
{
	struct mc_node n = { .ram_bytes = node_ram, .cores = 96,
			     .threads_per_core = 1, .gpus = 8 };
	struct mc_alloc a = { .mem_bytes = mem, .cores = cores,
			      .mem_source = "--mem" };

	mc_judge(p, r, &a, &n, NULL, NULL, &J);
	for (size_t i = 0; i < J.e.n; i++)
		fprintf(stderr, "| %s\n", J.e.line[i]);
}

/* On a 2048 GiB node. */
static void judge(const struct mc_policy *p, const struct mc_request *r,
		  uint64_t mem, uint32_t cores)
{
	judge_node(p, r, 2048 * GiB, mem, cores);
}

/* On a node of node_ram, all its cores given. */
static void judge_on(const struct mc_policy *p, const struct mc_request *r,
		     uint64_t node_ram, uint64_t mem)
{
	judge_node(p, r, node_ram, mem, 96);
}

static bool said(const char *s)
{
	for (size_t i = 0; i < J.e.n; i++)
		if (strstr(J.e.line[i], s))
			return true;
	return false;
}

/* torchrun/DDP of GPT-J-6B on 8 x 80 GiB: no longer dropped silently. */
static void test_ddp_model_load(void **state)
{
	struct mc_policy p;
	struct mc_request r = { .gpus = 8, .nodes = 1,
				.dataloader_workers = 2,
				.gpu_memory_bytes = 80 * GiB,
				.model_params = GPTJ };

	mc_policy_defaults(&p);
	judge(&p, &r, 900 * GiB, 24);
	/* 640 floor + 8 tasks + max(8 x 22.55 load, 16 workers x 4) */
	assert_int_equal(J.v.ram_needed_bytes,
			 640 * GiB + 8 * GiB + 8 * GPTJ * 4);
	assert_true(said("loading 180.40 GiB = 8 copies x 22.55 GiB"));
	assert_true(J.v.fits);
}

static void test_cores_and_ranks(void **state)
{
	struct mc_policy p;
	struct mc_request off = { .gpus = 8, .nodes = 1,
				  .dataloader_workers = 2,
				  .gpu_memory_bytes = 80 * GiB,
				  .model_params = 13000000000ULL,
				  .zero_stage = 3,
				  .offload = MC_OFFLOAD_ALL };
	struct mc_request mps = { .gpus = 2, .nodes = 1,
				  .dataloader_workers = 0,
				  .gpu_memory_bytes = 16 * GiB };

	mc_policy_defaults(&p);
	/* ZeRO-Offload: 8 x (2 + 1 + OffloadCoresPerGpu 2) */
	judge(&p, &off, 1100 * GiB, 24);
	assert_int_equal(J.v.cores_needed, 40);
	assert_true(said("8 ranks x (2 workers + 1 + 2 for the CPU optimizer"));
	/* 16 ranks on 2 GPUs: RamPerTask and cores per process */
	mps.use.ranks = 16;
	judge(&p, &mps, 64 * GiB, 16);
	assert_int_equal(J.v.ram_tasks_bytes, 16 * GiB);
	assert_int_equal(J.v.cores_needed, 16);
	assert_true(said("16 ranks x (0 workers + 1)"));
	assert_true(J.v.fits);
}

static void test_share(void **state)
{
	static const struct {
		const char *name;
		int kind;			/* 1 shard, 2 MPS */
		uint32_t count, per_gpu;	/* asked; the node's per GPU */
		uint64_t gpu_mem, want;		/* the card's; the share's */
		const char *note;		/* NULL: not checked */
	} rows[] = {
		{ "shard:2 of 8 per GPU", 1, 2, 8, 80 * GiB, 20 * GiB,
		  "gres/shard: 2/8 of a 80 GiB GPU" },
		{ "mps:25 of 100", 2, 25, 0, 80 * GiB, 20 * GiB, NULL },
		/* MPS of 200 per GPU: Slurm's whole percentage, 25 x 100 /
		 * 200 = 12 (cut), as launch gets it in
		 * CUDA_MPS_ACTIVE_THREAD_PERCENTAGE; at least 1. */
		{ "mps:25 of 200 per GPU", 2, 25, 200, 100 * GiB, 12 * GiB,
		  "gres/mps: 25 of 200 per GPU, Slurm's 12% of a 100 GiB "
		  "GPU" },
		{ "mps:1 of 200 per GPU", 2, 1, 200, 100 * GiB, 1 * GiB,
		  NULL },
	};

	/* shard:8 of 64: an eighth of the card, as a 10 GiB MIG slice */
	assert_int_equal(mc_share_bytes(80 * GiB, 8, 64), 10 * GiB);
	assert_int_equal(mc_share_bytes(80 * GiB, 1, 3),
			 (80 * GiB + 2) / 3);
	assert_int_equal(mc_share_bytes(80 * GiB, 9, 8), 80 * GiB);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct mc_request r = { .gpus = 1,
					.gpu_memory_bytes = rows[i].gpu_mem };

		r.use.share_kind = rows[i].kind;
		r.use.share_count = rows[i].count;
		mc_share_apply(&r, rows[i].per_gpu, NULL);
		if (r.gpu_memory_bytes != rows[i].want)
			fail_msg("%s: %llu bytes, want %llu", rows[i].name,
				 (unsigned long long)r.gpu_memory_bytes,
				 (unsigned long long)rows[i].want);
		if (rows[i].note && strcmp(r.use.notes[0], rows[i].note))
			fail_msg("%s: note '%s', want '%s'", rows[i].name,
				 r.use.notes[0], rows[i].note);
		/* The node's RAM rule stays the whole card's. */
		if (mc_card_bytes(&r) != rows[i].gpu_mem)
			fail_msg("%s: the card %llu bytes, want %llu",
				 rows[i].name,
				 (unsigned long long)mc_card_bytes(&r),
				 (unsigned long long)rows[i].gpu_mem);
	}
}

/* Shards per GPU: Slurm's count over the node's GPUs, ShardsPerGpu= an
 * override; a disagreement is the audit's finding with both numbers. */
static void test_shards_per_gpu(void **state)
{
	struct mc_policy p;
	const char *from = NULL;
	uint32_t per = 99;

	mc_policy_defaults(&p);
	/* gpu:8,shard:64: 8 per GPU, from Slurm */
	assert_int_equal(mc_shards_per_gpu(&p, 64, 8, &from), 8);
	assert_string_equal(from, "Slurm");
	/* shard:10 over 4 GPUs: gres/shard gives 2, 2, 3, 3; the fewest */
	assert_int_equal(mc_shards_per_gpu(&p, 10, 4, NULL), 2);
	/* unknown: no shards configured, no GPUs, fewer shards than GPUs */
	assert_int_equal(mc_shards_per_gpu(&p, 0, 8, &from), 0);
	assert_string_equal(from, "");
	assert_int_equal(mc_shards_per_gpu(&p, 64, 0, NULL), 0);
	assert_int_equal(mc_shards_per_gpu(&p, 3, 4, NULL), 0);
	assert_false(mc_shards_disagree(&p, 64, 8, &per));
	assert_int_equal(per, 8);
	/* ShardsPerGpu=4 wins, and disagrees with Slurm's 8 */
	p.shards_per_gpu = 4;
	assert_int_equal(mc_shards_per_gpu(&p, 64, 8, &from), 4);
	assert_string_equal(from, "ShardsPerGpu");
	assert_int_equal(mc_shards_per_gpu(&p, 0, 0, NULL), 4);
	assert_true(mc_shards_disagree(&p, 64, 8, &per));
	assert_int_equal(per, 8);
	/* the same number, or Slurm's unknown: no finding */
	assert_false(mc_shards_disagree(&p, 32, 8, NULL));
	assert_false(mc_shards_disagree(&p, 0, 8, &per));
	assert_int_equal(per, 0);
	assert_false(mc_shards_disagree(&p, 64, 0, NULL));
	assert_false(mc_shards_disagree(NULL, 64, 8, NULL));
}

/* Short of RAM only: the fix offers the workers that fit what was given. */
static void test_fix_fewer_workers(void **state)
{
	struct mc_policy p;
	struct mc_request r = { .gpus = 8, .nodes = 1,
				.dataloader_workers = 8,
				.gpu_memory_bytes = 80 * GiB };

	mc_policy_defaults(&p);
	/* 640 + 64 x 4 + 8 = 904 GiB needed; 800 given holds
	 * 640 + 8 + 8w x 4: w = 4 (776) */
	judge(&p, &r, 800 * GiB, 96);
	assert_false(J.v.fits);
	assert_true(said("fix: --mem=904G, or --dataloader-workers=4 (fits "
			 "the memory and cores given)"));
}

/*
 * LlamaFactory#103: LLaMA-65B on 8 x A100 80 GB with 900 GB of RAM, each
 * rank's from_pretrained building a bf16 copy. The job-side fixes are
 * offered, each only where the step, judged again with it, fits.
 */
#define LLAMA65 65200000000ULL	/* "65.2B" (the LLaMA paper's table) */

static void test_fix_model_load(void **state)
{
	struct mc_policy p;
	struct mc_request r = { .gpus = 8, .nodes = 1,
				.dataloader_workers = 2,
				.gpu_memory_bytes = 80 * GiB,
				.model_params = LLAMA65 };
	/* resident without the load: floor 640 + 8 tasks; the load peak
	 * max(load, 16 workers x 4 GiB) */
	uint64_t base = 640 * GiB + 8 * GiB;
	uint64_t rank0 = base + LLAMA65 * 2, meta = base + 64 * GiB;
	char want[160], opt[MC_FIX_OPTIONS][MC_FIX_OPTION_MAX];

	mc_policy_defaults(&p);
	r.use.dtype_bytes = 2;
	/* 8 copies: 640 + 8 + 8 x 121.44 GiB, beyond the node */
	judge_on(&p, &r, 900 * GiB, 900 * GiB);
	assert_int_equal(J.v.ram_needed_bytes, base + 8 * LLAMA65 * 2);
	assert_true(J.impossible);
	assert_true(rank0 <= 900 * GiB);
	assert_true(said("or, in the job: --model-load=rank0 (fits the memory "
			 "given)"));
	assert_true(said("FSDP sync_module_states=True"));
	/* the memory asked holds neither: rank0 with the --mem it needs */
	judge_on(&p, &r, 900 * GiB, 700 * GiB);
	snprintf(want, sizeof(want), "or, in the job: --model-load=rank0 with "
		 "--mem=%lluG", (unsigned long long)((rank0 + GiB - 1) / GiB));
	assert_true(said(want));
	/* --json's fix_options: the same, as options */
	assert_int_equal(mc_verdict_fix_options(&p, &J.v, opt), 2);
	assert_string_equal(opt[0], "--model-load=rank0");
	snprintf(want, sizeof(want), "--mem=%lluG",
		 (unsigned long long)((rank0 + GiB - 1) / GiB));
	assert_string_equal(opt[1], want);
	/* a node between the two: rank0 does not fit it, meta does */
	assert_true(rank0 > 760 * GiB && meta <= 760 * GiB);
	judge_on(&p, &r, 760 * GiB, 760 * GiB);
	assert_false(said("--model-load=rank0"));
	assert_true(said("or, in the job: --model-load=meta (fits the memory "
			 "given)"));
	/* below the GPU floor nothing the job does fits: none offered */
	judge_on(&p, &r, 600 * GiB, 600 * GiB);
	assert_false(said("in the job"));
	assert_int_equal(mc_verdict_fix_options(&p, &J.v, opt), 0);
}

/*
 * axolotl#1828: a 405B full state dict gathered in host RAM. Built on the
 * meta device in bf16, saved on rank 0: 405e9 x 2 bytes; a sharded save
 * is what fits, gathering on rank 0 only would not.
 */
static void test_fix_checkpoint_save(void **state)
{
	struct mc_policy p;
	struct mc_request r = { .gpus = 8, .nodes = 1,
				.dataloader_workers = 2,
				.gpu_memory_bytes = 80 * GiB,
				.model_params = 405000000000ULL };
	uint64_t resident = 640 * GiB + 8 * GiB + 64 * GiB;

	mc_policy_defaults(&p);
	r.use.dtype_bytes = 2;
	r.use.load = MC_LOAD_META;
	r.use.save = MC_SAVE_RANK0;
	judge_on(&p, &r, 1024 * GiB, 1024 * GiB);
	assert_int_equal(J.v.ram_save_bytes, 405000000000ULL * 2);
	assert_int_equal(J.v.ram_needed_bytes, resident + 810000000000ULL);
	assert_true(said("(checkpoint: full state dict on rank 0, 16-bit "
			 "weights, 2 bytes a parameter, as saved)"));
	assert_true(said("or, in the job: --checkpoint-save=none (fits the "
			 "memory given)"));
	assert_true(said("FSDP SHARDED_STATE_DICT"));
	/* on every rank: rank 0 alone still needs 1466 GiB, not offered */
	r.use.save = MC_SAVE_ALL;
	judge_on(&p, &r, 1024 * GiB, 1024 * GiB);
	assert_false(said("--checkpoint-save=rank0"));
	assert_true(said("--checkpoint-save=none (fits"));
	/* a node that holds rank 0's gather: that is the smaller change */
	judge_on(&p, &r, 1536 * GiB, 1536 * GiB);
	assert_true(resident + 810000000000ULL <= 1536 * GiB);
	assert_true(said("or, in the job: --checkpoint-save=rank0 (fits the "
			 "memory given)"));
	/* every rank loading too: neither alone fits (the other peak
	 * stays), the smallest pair does: rank 0 loads 754.37 GiB over the
	 * 648 floor and tasks, rank 0 gathers 754.37 over 712 resident */
	r.use.load = MC_LOAD_PER_RANK;
	judge_on(&p, &r, 1536 * GiB, 1536 * GiB);
	assert_true(648 * GiB + 810000000000ULL <= 1536 * GiB);
	assert_true(said("or, in the job: --model-load=rank0 "
			 "--checkpoint-save=rank0 (fits the memory given)"));
	/* on 1 TiB only no host copy and a sharded save */
	judge_on(&p, &r, 1024 * GiB, 1024 * GiB);
	assert_true(said("or, in the job: --model-load=meta "
			 "--checkpoint-save=none (fits the memory given)"));
}

static void test_worker_bounds(void **state)
{
	struct mc_policy p;
	struct mc_usage u = { .ram_per_worker_bytes = 20 * GiB };
	char err[MC_ERR_MAX];

	mc_policy_defaults(&p);
	assert_int_equal(mc_terms_check(&p, &u, err, sizeof(err)), 0);
	assert_int_equal(mc_terms_ram_per_worker(&p, &u), 20 * GiB);
	u.ram_per_worker_bytes = 256 * GiB;
	assert_int_equal(mc_terms_check(&p, &u, err, sizeof(err)), -1);
	assert_string_equal(err, "--ram-per-worker=256 GiB: outside what the "
			    "site allows (MinRamPerWorker=512 MiB, "
			    "MaxRamPerWorker=128 GiB)");
	u.ram_per_worker_bytes = 0;
	u.cpu_checkpointing = true;
	assert_int_equal(mc_terms_check(&p, &u, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "--model-config"));
}

/*
 * --dataset-in-memory: one copy of the dataset in each task and in each of
 * its DataLoader workers (Open Book, CPU memory: keep_in_memory=True).
 * The figures are written here from that sentence, not from the code:
 * copies = tasks + tasks x workers.
 */
static uint64_t copies_of(uint64_t size, uint64_t tasks, uint64_t workers)
{
	return size * (tasks + tasks * workers);
}

static void test_dataset_in_memory(void **state)
{
	struct mc_policy p;
	static const struct {
		uint32_t gpus, ranks, workers;
		uint64_t size;
	} rows[] = {
		{ 3, 0, 4, 20 * GiB },		/* the 300 GiB */
		{ 8, 0, 2, 5 * GiB },
		{ 1, 0, 0, 1 << 20 },		/* no worker: the task's own */
		{ 2, 16, 1, 3 * GiB },		/* 16 ranks on 2 GPUs (MPS) */
		{ 4, 0, 10, 7 * GiB + 12345 },	/* 8+2 loaders: 10 */
	};

	(void)state;
	mc_policy_defaults(&p);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct mc_request r = { .gpus = rows[i].gpus, .nodes = 1,
					.dataloader_workers = rows[i].workers,
					.gpu_memory_bytes = 80 * GiB };
		uint64_t tasks = rows[i].ranks > rows[i].gpus ? rows[i].ranks
							      : rows[i].gpus;
		uint64_t base, want = copies_of(rows[i].size, tasks,
						rows[i].workers);
		char w[32];

		r.use.ranks = rows[i].ranks;
		base = mc_ram_needed_bytes(&p, &r);
		r.use.dataset_bytes = rows[i].size;
		fprintf(stderr, "  %u GPUs %llu tasks w=%u %s: %s\n",
			rows[i].gpus, (unsigned long long)tasks,
			rows[i].workers, gib(rows[i].size),
			mc_fmt_bytes(want, w, sizeof(w)));
		assert_int_equal(mc_terms_dataset_bytes(&r.use, r.gpus,
							rows[i].workers), want);
		assert_int_equal(mc_terms_dataset_task_bytes(&r.use, r.gpus),
				 rows[i].size * tasks);
		/* Without a model load, added whole to the need. */
		assert_int_equal(mc_ram_needed_bytes(&p, &r), base + want);
	}
	/* 3 x 20 GiB x (4 + 1) = 300 GiB, the line the user reads. */
	{
		struct mc_request r = { .gpus = 3, .nodes = 1,
					.dataloader_workers = 4,
					.gpu_memory_bytes = 80 * GiB };

		r.use.dataset_bytes = 20 * GiB;
		judge(&p, &r, 400 * GiB, 15);
		assert_int_equal(J.v.ram_dataset_bytes, 300 * GiB);
		/* 240 floor + 3 x 4 workers x 4 GiB + 3 tasks + 300 */
		assert_int_equal(J.v.ram_needed_bytes, 240 * GiB + 48 * GiB +
				 3 * GiB + 300 * GiB);
		assert_false(J.v.fits);
		assert_true(said("+ 300 GiB dataset in RAM"));
		assert_true(said("dataset in RAM  3 tasks x 20 GiB x "
				 "(4 workers + 1) = 300 GiB"));
		assert_true(said("stage the dataset to local scratch and map "
				 "it (keep_in_memory=False)"));
		assert_false(said("stage it first:"));
		r.use.dataset_stage = "memcore stage /d /scratch/job_7";
		judge(&p, &r, 400 * GiB, 15);
		assert_true(said("stage it first: memcore stage /d "
				 "/scratch/job_7"));
		/* The fix: fewer workers hold fewer copies. 1 worker: 240
		 * floor + 3 x 4 workers' + 3 tasks + 3 x 20 x 2 = 375 GiB. */
		assert_int_equal(J.v.max_dataloader_workers, 1);
		assert_true(said("--dataloader-workers=1"));
		/* A small dataset on a step that fits: no advice. */
		r.use.dataset_bytes = 1 * GiB;
		judge(&p, &r, 400 * GiB, 15);
		assert_true(J.v.fits);
		assert_true(said("= 15 GiB: a copy in each task"));
		assert_false(said("keep_in_memory=False"));
	}
	/* With a model load: the tasks' copies are in the load peak, the
	 * workers' only in training. 2 x 80 floor + 2 tasks
	 * + max(2 x 7B x 4 + 2 x 10 GiB, 2 x 2 x 4 GiB + 2 x 10 x 3). */
	{
		struct mc_request r = { .gpus = 2, .nodes = 1,
					.dataloader_workers = 2,
					.gpu_memory_bytes = 80 * GiB,
					.model_params = LLAMA7 };
		uint64_t load = 2 * LLAMA7 * 4 + 20 * GiB;
		uint64_t train = 16 * GiB + 60 * GiB;

		r.use.dataset_bytes = 10 * GiB;
		judge(&p, &r, 1024 * GiB, 6);
		assert_int_equal(J.v.ram_needed_bytes, 160 * GiB + 2 * GiB +
				 (load > train ? load : train));
		assert_true(said("+ 20 GiB the tasks' dataset copies"));
		assert_true(said("training 76 GiB = 4 workers x 4 GiB + 60 GiB "
				 "dataset in RAM"));
	}
	/* Saturating, never wrapping. */
	{
		struct mc_usage u = { .dataset_bytes = (uint64_t)1 << 50 };

		assert_int_equal(mc_terms_dataset_bytes(&u, 1 << 20, 1 << 10),
				 UINT64_MAX);
	}
}

/*
 * What the data is says how the workers hold it: Python objects are
 * copied into each forked worker as reads write their reference counts
 * (pytorch/pytorch#13246), numpy/Arrow buffers stay shared (its
 * workaround; pytorch#20433's measurement). Written from that sentence:
 * objects tasks x (w + 1) copies, arrays tasks x 1.
 */
static void test_dataset_kinds(void **state)
{
	struct mc_policy p;
	static const struct {
		uint32_t gpus, ranks, workers;
		uint64_t size;
	} rows[] = {
		{ 3, 0, 4, 20 * GiB },
		{ 8, 0, 8, 5 * GiB + 777 },
		{ 2, 16, 1, 3 * GiB },		/* 16 ranks on 2 GPUs (MPS) */
		{ 1, 0, 0, 1 << 20 },		/* no worker: the same */
	};

	(void)state;
	mc_policy_defaults(&p);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct mc_usage u = { .ranks = rows[i].ranks,
				      .dataset_bytes = rows[i].size };
		uint64_t tasks = rows[i].ranks > rows[i].gpus ? rows[i].ranks
							      : rows[i].gpus;

		/* The default is objects: the count as before the kinds. */
		assert_int_equal(mc_terms_dataset_copies(&u, rows[i].workers),
				 rows[i].workers + 1);
		assert_int_equal(mc_terms_dataset_bytes(&u, rows[i].gpus,
							rows[i].workers),
				 copies_of(rows[i].size, tasks,
					   rows[i].workers));
		u.dataset_kind = MC_DATASET_ARRAYS;
		assert_int_equal(mc_terms_dataset_copies(&u, rows[i].workers),
				 1);
		assert_int_equal(mc_terms_dataset_bytes(&u, rows[i].gpus,
							rows[i].workers),
				 rows[i].size * tasks);
		/* The tasks' own copies, in the load peak, are the same. */
		assert_int_equal(mc_terms_dataset_task_bytes(&u, rows[i].gpus),
				 rows[i].size * tasks);
	}
	/* Objects refused at 300 GiB: the arrays count offered beside. */
	{
		struct mc_request r = { .gpus = 3, .nodes = 1,
					.dataloader_workers = 4,
					.gpu_memory_bytes = 80 * GiB };

		r.use.dataset_bytes = 20 * GiB;
		judge(&p, &r, 400 * GiB, 15);
		assert_true(said("each DataLoader worker (Python objects: "
				 "reference counts copy the pages)"));
		assert_true(said("say --dataset-in-memory=20G:arrays (60 GiB, "
				 "not 300 GiB)"));
		r.use.dataset_kind = MC_DATASET_ARRAYS;
		judge(&p, &r, 400 * GiB, 15);
		assert_int_equal(J.v.ram_dataset_bytes, 60 * GiB);
		/* 240 floor + 3 x 4 workers x 4 GiB + 3 tasks + 60 */
		assert_int_equal(J.v.ram_needed_bytes, 351 * GiB);
		assert_true(J.v.fits);
		assert_true(said("dataset in RAM  3 tasks x 20 GiB = 60 GiB: a "
				 "copy in each task, its DataLoader workers "
				 "share it"));
		assert_false(said(":arrays ("));
	}
}

/*
 * ultralytics/ultralytics#22307: DDP on 8 GPUs with cache=True (RAM),
 * "Caching images (205.4GB RAM)" on a 1.7 TB node, and "each GPU process
 * creates its own copy of the entire cached dataset": 8 copies, an OOM
 * crash. ultralytics' cache is a list of numpy images, one per rank
 * (ultralytics/data/base.py cache_images: self.ims[i], b += nbytes,
 * "GB" = 1 << 30), its default workers=8 (cfg/default.yaml). As arrays:
 * the reporter's 8 copies, 1643.2 GiB; as objects memcore counted 72.
 */
static void test_ultralytics_22307(void **state)
{
	struct mc_policy p;
	/* 205.4 GiB, to the MiB Slurm sizes take. */
	uint64_t cache = 210330ULL << 20;
	struct mc_request r = { .gpus = 8, .nodes = 1,
				.dataloader_workers = 8 };

	(void)state;
	mc_policy_defaults(&p);
	r.use.dataset_bytes = cache;
	r.use.dataset_kind = MC_DATASET_ARRAYS;
	judge_on(&p, &r, 1700 * GiB, 1700 * GiB);
	assert_int_equal(J.v.ram_dataset_bytes, 8 * cache);
	assert_true(said("dataset in RAM  8 tasks x 205.40 GiB = 1643.20 GiB"));
	/* With 8 workers' 4 GiB each and the tasks' 1 GiB the node is short,
	 * as the reporter's was: refused, the fix maps the cache. */
	assert_false(J.v.fits);
	assert_true(said("instead: stage the dataset to local scratch"));
	/* What memcore counted before the kinds: 72 copies. */
	r.use.dataset_kind = MC_DATASET_OBJECTS;
	judge_on(&p, &r, 1700 * GiB, 1700 * GiB);
	assert_int_equal(J.v.ram_dataset_bytes, 72 * cache);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dataset_kinds),
		cmocka_unit_test(test_ultralytics_22307),
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_save),
		cmocka_unit_test(test_activations),
		cmocka_unit_test(test_combine),
		cmocka_unit_test(test_ddp_model_load),
		cmocka_unit_test(test_cores_and_ranks),
		cmocka_unit_test(test_share),
		cmocka_unit_test(test_shards_per_gpu),
		cmocka_unit_test(test_fix_fewer_workers),
		cmocka_unit_test(test_fix_model_load),
		cmocka_unit_test(test_fix_checkpoint_save),
		cmocka_unit_test(test_worker_bounds),
		cmocka_unit_test(test_dataset_in_memory),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
