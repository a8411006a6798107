/*
 * test_decision.c - the plugin and the command decide a step alike: the
 * same job on the same node, read once as `memcore check --slurm-options`
 * reads it at submission and once as slurmstepd hands it to the plugin at
 * launch, gives the same decision record (policy/mc_decision.h).
 *
 * What each side reads is its own, and that is what is put to the test:
 *   - submission (cli/cmd_check.c job_alloc, cli/check_partition.c
 *     judge_shape): the job's Slurm options (mc_slurm_job_set) and the
 *     node's record, through Slurm's allocation as memcore models it
 *     (mc_slurm_alloc), into a struct mc_case;
 *   - launch (spank/mc_stepd.c verdict): what Slurm gives that step on
 *     that node, as the job's environment and slurmstepd's items
 *     (mc_fake_spank.h stands in for slurmstepd), through mc_step_read,
 *     mc_step_case and mc_step_alloc.
 * From there both go through policy/mc_decision.h, the one builder and
 * the one decision (mc_case_request(), mc_decide()); the figures a user
 * is told and held to (fits, RAM and cores needed and allocated, the
 * launch outcome, the memory limit, the DataLoader workers, the GPUs and
 * a share's GPU memory) must come out the same. A difference is a job that memcore
 * check lets through and the plugin refuses, or the other way round.
 *
 * Each case also names whether it fits, so that a case meant to misfit
 * does (on RAM, on cores): equal figures that both say the wrong thing
 * fail too.
 *
 * A real disagreement, when one is found, is kept in the table, marked
 * (dcase.known), and printed as KNOWN DISAGREEMENT on every run rather
 * than taken out. None is marked now: the one this test found (gres/mps
 * with a count that is no whole percent of the card) is mended.
 *
 * The launch side is the batch step (SLURM_BATCH_SCRIPT): it is the one
 * step whose SLURM_MEM_PER_GPU/SLURM_MEM_PER_CPU are the job's own
 * (mc_step_read), so the memory form is read, not assumed. Its task
 * count is the grant's tasks on the node, which is what the job's srun
 * step there gets (the batch script itself is one task).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "../../spank/mc_step.c"
#include "mc_fake_spank.h"

#include "mc_decision.h"
#include "mc_opts.h"
#include "mc_shapes.h"
#include "mc_slurm_alloc.h"
#include "mc_test_slurm_job.h"
#include "mc_terms.h"

#define GiB ((uint64_t)1 << 30)

/* 8 x h100, 2048 GiB, 2 sockets x 56 cores x 2 threads. */
static const struct mc_node_record H100 = {
	.name = "h01", .ram_bytes = 2048 * GiB, .cores = 112,
	.threads_per_core = 2, .sockets = 2, .gpus = 8, .gpu_type = "h100",
};

/* 4 x a100, 512 GiB, 2 sockets x 32 cores x 2 threads. */
static const struct mc_node_record A100 = {
	.name = "a01", .ram_bytes = 512 * GiB, .cores = 64,
	.threads_per_core = 2, .sockets = 2, .gpus = 4, .gpu_type = "a100",
};

/* 8 x l40s shared as Gres=gpu:l40s:8,shard:64: 8 shards a card. */
static const struct mc_node_record L40S = {
	.name = "s01", .ram_bytes = 1024 * GiB, .cores = 64,
	.threads_per_core = 2, .sockets = 2, .gpus = 8, .gpu_type = "l40s",
	.shards = 64,
};

/* 4 x a100 under gres/mps, Gres=gpu:a100:4,mps:800: 200 a card, so an
 * MPS count is not a percentage here. */
static const struct mc_node_record MPS = {
	.name = "m01", .ram_bytes = 512 * GiB, .cores = 64,
	.threads_per_core = 2, .sockets = 2, .gpus = 4, .gpu_type = "a100",
	.mps = 800,
};

/* The figures compared, as bits: a case's known disagreement names its. */
enum {
	F_FITS = 1u << 0,
	F_RAM_NEEDED = 1u << 1,
	F_RAM_ALLOCATED = 1u << 2,
	F_CORES_NEEDED = 1u << 3,
	F_CORES_ALLOCATED = 1u << 4,
	F_LAUNCH = 1u << 5,
	F_REFUSED = 1u << 6,
	F_WORKERS = 1u << 7,
	F_GPUS = 1u << 8,
	F_GPU_MEMORY = 1u << 9,
	F_RANKS = 1u << 10,
	F_MEM_FORM = 1u << 11,
	F_ENFORCE = 1u << 12,
	F_LIMIT = 1u << 13,
};

struct dcase {
	const char *slurm;		/* the job's options, as sbatch hands
					 * them to cli_filter:
					 * "name=value;name=value" */
	const char *memcore;		/* memcore's options, the same form
					 * ("" none: the policy's) */
	const struct mc_node_record *rec;	/* the node */
	uint64_t gpu_memory;		/* one card's, both sides alike: the
					 * resolver is test_judge.c's */
	bool fits;			/* what the rule says at submission,
					 * worked out by hand in the comment
					 * above it */
	/*
	 * A real disagreement between the two sides, kept in the table so
	 * that it is seen, not hidden: the F_* figures that differ. The
	 * test prints them as KNOWN DISAGREEMENT on every run and fails
	 * when any other figure differs, or when these stop differing
	 * (then the mark goes). 0 for every case that agrees.
	 */
	unsigned known;
};

/*
 * The policy's defaults (etc/memcore.conf): RAM = g x M + ranks x w x
 * 4G + ranks x 1G (+ ZeRO); cores = ranks x (w + 1); w = 2. Mode=enforce,
 * CgroupMemory=yes; AllowUserWarn=yes so that --memcore=warn runs a
 * misfit held to its limit, a case where enforce is not trivially off.
 */
static const char POLICY[] =
	"Mode=enforce\n"
	"CgroupMemory=yes\n"
	"AllowUserWarn=yes\n";

static const struct dcase cases[] = {
	/* 320 + 32 + 4 = 356G of 400G; 12 cores of 16 (32 CPUs). */
	{ "gpus-per-node=4;mem=400G;cpus-per-gpu=8", "", &H100, 80 * GiB,
	  true, 0 },
	/* Cores short: 16 CPUs are 8 whole cores, 12 needed. */
	{ "gpus-per-node=4;mem=400G;cpus-per-gpu=4", "", &H100, 80 * GiB,
	  false, 0 },
	/* 640 + 8 x 4 x 4 = 128 + 8 = 776G of 8 x 100G; 40 cores of 48. */
	{ "gpus-per-node=8;mem-per-gpu=100G;cpus-per-gpu=12",
	  "dataloader-workers=4", &H100, 80 * GiB, true, 0 },
	/* RAM short: 776G needed, 8 x 40G given. */
	{ "gpus-per-node=8;mem-per-gpu=40G;cpus-per-gpu=12",
	  "dataloader-workers=4", &H100, 80 * GiB, false, 0 },
	/* --gpus without -N on a 4-GPU node: 2 here, 2 tasks; no --mem:
	 * the whole 512G; 80 + 16 + 2 = 98G; 6 cores of 12 CPUs. */
	{ "gpus=2;ntasks=2;cpus-per-task=6", "", &A100, 40 * GiB, true, 0 },
	/* A shard step: 2 of a card's 8 shards, 48G x 2 / 8 = 12G;
	 * 12 + 8 + 1 = 21G of 32G; 3 cores of 6 CPUs. */
	{ "gres=shard:2;mem=32G;cpus-per-task=6", "", &L40S, 48 * GiB,
	  true, 0 },
	/* RAM short on a share: 24 + 8 + 1 = 33G, 16G given. */
	{ "gres=shard:4;mem=16G;cpus-per-task=6", "", &L40S, 48 * GiB,
	  false, 0 },
	/* Plain --exclusive: all 4 GPUs and 64 cores of the node;
	 * 160 + 32 + 4 = 196G of 256G. */
	{ "gpus-per-node=2;exclusive=exclusive;mem=256G", "", &A100,
	  40 * GiB, true, 0 },
	/* --mem-per-cpu x 16 CPUs = 128G; 80 + 16 + 2 = 98G; 6 of 8
	 * cores. */
	{ "gpus-per-node=2;cpus-per-gpu=8;mem-per-cpu=8G", "", &A100,
	  40 * GiB, true, 0 },
	/* --mem-per-cpu short on both: 4G x 16 = 64G of 356G, 8 of 12
	 * cores. */
	{ "gpus-per-node=4;cpus-per-gpu=4;mem-per-cpu=4G", "", &H100,
	  80 * GiB, false, 0 },
	/* More tasks than GPUs: 4 ranks of 2 GPUs, 160 + 4 x 2 x 4 + 4 =
	 * 196G of 200G; 4 x 3 = 12 cores of 24 CPUs. */
	{ "gpus-per-node=2;ntasks-per-node=4;cpus-per-task=6;mem=200G", "",
	  &H100, 80 * GiB, true, 0 },
	/* No DataLoader workers: 80 + 1 = 81G; 1 core of 2 CPUs. */
	{ "gpus-per-node=1;mem=100G;cpus-per-gpu=2", "dataloader-workers=0",
	  &H100, 80 * GiB, true, 0 },
	/* --hint=nomultithread: one CPU a core, 6 cores for 6 needed. */
	{ "gpus-per-node=2;cpus-per-gpu=3;hint=nomultithread;mem=200G", "",
	  &H100, 80 * GiB, true, 0 },
	/* gres/mps: 50 of a card's 200, launch's 25%: 40G / 4 = 10G;
	 * 10 + 8 + 1 = 19G of 32G; 3 cores of 6 CPUs. */
	{ "gres=mps:50;mem=32G;cpus-per-task=6", "", &MPS, 40 * GiB, true, 0 },
	/*
	 * gres/mps with a count that is no whole percent of the card: at
	 * launch Slurm gives CUDA_MPS_ACTIVE_THREAD_PERCENTAGE = 25 x 100 /
	 * 200 = 12 (whole percent, cut), and submission sizes the same 12%
	 * (mc_share_apply): 4.8G, 4.8 + 8 + 1 = 13.8G. It was a
	 * disagreement (submission sized the exact 25/200 = 5G, 14G): the
	 * --mem=14233M between the two figures shows it gone, the job fits
	 * on both sides.
	 */
	{ "gres=mps:25;mem=14233M;cpus-per-task=6", "", &MPS, 40 * GiB, true,
	  0 },
	/* An MPS count below one percent of the card: Slurm's at least 1%
	 * (mps:1 of 200 is 1%, not 0.5%): 0.4 + 8 + 1 = 9.4G. */
	{ "gres=mps:1;mem=32G;cpus-per-task=6", "", &MPS, 40 * GiB, true, 0 },
	/* --memcore=warn: misfits on both (196G of 64G, 12 of 8 cores),
	 * runs warned and held to its 64G. */
	{ "gpus-per-node=4;mem=64G;cpus-per-gpu=4", "memcore=warn", &A100,
	  40 * GiB, false, 0 },
	/* --gpus-per-task x --ntasks-per-node: 4 GPUs, 4 tasks, 16 cores;
	 * 356G of 500G. */
	{ "gpus-per-task=1;ntasks-per-node=4;cpus-per-task=8;mem=500G", "",
	  &H100, 80 * GiB, true, 0 },
	/* ZeRO-3 with the optimizer offloaded (7B): its host RAM on top of
	 * 640 + 64 + 8 = 712G stays well under 1500G; 8 x (3 + 2 Adam)
	 * = 40 cores of 48. */
	{ "gpus-per-node=8;mem=1500G;cpus-per-gpu=12",
	  "model-params=7B;zero-stage=3;offload=optimizer", &H100, 80 * GiB,
	  true, 0 },
};

static struct mc_config cfg;

static void policy(struct mc_policy *p)
{
	char err[MC_ERR_MAX];

	if (mc_config_parse(POLICY, strlen(POLICY), "t.conf", &cfg, err,
			    sizeof(err)) < 0)
		fail_msg("%s", err);
	mc_config_policy(&cfg, NULL, p);
}

/* memcore's options, the same form, through the one parser both sides
 * use (the plugin's option callbacks, the command's flags). */
static void opts_of(const char *text, struct mc_opts *o)
{
	char buf[512], err[MC_ERR_MAX];
	char *save = NULL;

	memset(o, 0, sizeof(*o));
	snprintf(buf, sizeof(buf), "%s", text);
	for (char *kv = strtok_r(buf, ";", &save); kv;
	     kv = strtok_r(NULL, ";", &save)) {
		char *eq = strchr(kv, '=');
		int id;

		assert_non_null(eq);
		*eq = '\0';
		id = mc_opt_lookup(kv);
		if (id < 0)
			fail_msg("--%s: no such memcore option", kv);
		if (mc_opts_set(o, (enum mc_opt_id)id, eq + 1, false, err,
				sizeof(err)) < 0)
			fail_msg("%s", err);
	}
	if (mc_opts_check(o, err, sizeof(err)) < 0)
		fail_msg("%s", err);
}

/* What one side made of the case. */
struct side {
	struct mc_request req;
	struct mc_alloc alloc;
	struct mc_node node;
	struct mc_decision d;
};

/*
 * Submission, as memcore check --slurm-options on a node of this shape
 * (cmd_check.c job_alloc, check_partition.c judge_shape). g is kept:
 * the allocation's mem_source points into it.
 */
static void cli_side(const struct mc_policy *p, const struct dcase *c,
		     const struct mc_opts *o, const struct mc_slurm_job *job,
		     struct mc_slurm_grant *g, struct side *out)
{
	/* No partition defaults: the memory is the job's own option. */
	static const struct mc_slurm_part part;
	const struct mc_node_record *rec = c->rec;
	struct mc_case cc;
	char err[MC_ERR_MAX];

	mc_slurm_alloc(job, &part, rec, g);
	if (g->excluded)
		fail_msg("%s: excluded: %s", c->slurm, g->why);
	memset(&cc, 0, sizeof(cc));
	cc.opts = o;
	/* A shard or MPS job drives one shared card. */
	cc.gpus = g->gpus ? g->gpus : job->shards || job->mps ? 1 : 0;
	cc.nodes = 1;
	cc.ranks = 0;		/* the grant's tasks say (alloc.tasks) */
	cc.gpu_memory_bytes = c->gpu_memory;
	cc.share_kind = job->shards ? 1 : job->mps ? 2 : 0;
	cc.share_count = job->shards ? job->shards : job->mps;
	if (cc.share_kind && rec->gpus)
		cc.share_per_gpu = cc.share_kind == 1
			? mc_shards_per_gpu(p, rec->shards, rec->gpus, NULL)
			: rec->mps / rec->gpus;
	mc_shape_node(rec, &out->node);
	out->node.unified_memory = p->unified_memory == MC_UNIFIED_YES;
	out->alloc = g->alloc;
	if (mc_case_request(p, &cc, &out->node, &out->req, err,
			    sizeof(err)) < 0)
		fail_msg("%s: submission: %s", c->slurm, err);
	mc_decide(p, &out->req, &out->alloc, &out->node,
		  o->mode & MC_USER_WARN, false, NULL, NULL, &out->d);
}

/* The values the fake environment points at, kept for the read. */
static struct {
	char gpus[16], gpu_list[MC_MAX_GPUS * 4], cores[32], shards[16],
	     mps[16], mem_per[32];
} envbuf;

/*
 * Launch: what Slurm gives the job's batch step on that node, as
 * slurmstepd tells the plugin, and the decision spank/mc_stepd.c
 * verdict() makes of it. mc_step.c's readers are the real ones.
 */
static void launch_side(const struct mc_policy *p, const struct dcase *c,
			const struct mc_opts *o, const struct mc_slurm_job *job,
			const struct mc_slurm_grant *g, struct mc_step *s,
			struct side *out)
{
	const struct mc_node_record *rec = c->rec;
	struct mc_case lc;
	char err[MC_ERR_MAX];
	size_t n = 0;

	memset(&fake, 0, sizeof(fake));
	memset(&envbuf, 0, sizeof(envbuf));
	fake.job_id = 4242;
	fake.step_id = SLURM_BATCH_SCRIPT;
	fake.nnodes = 0;		/* the batch step's item */
	/* The grant's tasks on the node: what the job's srun step there
	 * counts (the batch script alone is 1; see the header). */
	fake.local_tasks = g->tasks;
	/* Slurm's figures are MB; the grant's are whole MB here. */
	fake.step_mem = fake.job_mem = g->alloc.mem_bytes >> 20;
	snprintf(envbuf.cores, sizeof(envbuf.cores), "0-%u",
		 g->alloc.cores - 1);
	fake.step_cores = fake.job_cores = envbuf.cores;
	setenv_fake("SLURMD_NODENAME", rec->name);
	setenv_fake("SLURM_JOB_NUM_NODES", "1");
	if (g->gpus) {
		snprintf(envbuf.gpus, sizeof(envbuf.gpus), "%u", g->gpus);
		for (uint32_t i = 0; i < g->gpus; i++)
			n += (size_t)snprintf(envbuf.gpu_list + n,
					      sizeof(envbuf.gpu_list) - n,
					      "%s%u", i ? "," : "", i);
		setenv_fake("SLURM_GPUS_ON_NODE", envbuf.gpus);
		setenv_fake("SLURM_JOB_GPUS", envbuf.gpu_list);
	}
	/* gres/shard sets the step's shard count and no GPU variable. */
	if (job->shards) {
		snprintf(envbuf.shards, sizeof(envbuf.shards), "%u",
			 job->shards);
		setenv_fake("SLURM_SHARDS_ON_NODE", envbuf.shards);
	}
	/* gres/mps gives the share in whole percent of the card, cut, at
	 * least 1 (Slurm's gres/mps: gres_per_node * 100 / count_on_dev). */
	if (job->mps && rec->gpus && rec->mps) {
		uint64_t pct = (uint64_t)job->mps * 100 /
			       (rec->mps / rec->gpus);

		snprintf(envbuf.mps, sizeof(envbuf.mps), "%llu",
			 (unsigned long long)(pct ? pct : 1));
		setenv_fake("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", envbuf.mps);
	}
	/* The job's memory option as sbatch exports it (MB). */
	if (job->mem_kind == MC_JOB_MEM_GPU ||
	    job->mem_kind == MC_JOB_MEM_CPU) {
		snprintf(envbuf.mem_per, sizeof(envbuf.mem_per), "%llu",
			 (unsigned long long)job->mem_mb);
		setenv_fake(job->mem_kind == MC_JOB_MEM_GPU
			    ? "SLURM_MEM_PER_GPU" : "SLURM_MEM_PER_CPU",
			    envbuf.mem_per);
	}

	err[0] = '\0';
	if (mc_step_read(NULL, s, err, sizeof(err)) < 0)
		fail_msg("%s: launch: %s", c->slurm, err);
	if (s->user_err[0])
		fail_msg("%s: launch: %s", c->slurm, s->user_err);
	if (mc_step_ignored(s))
		fail_msg("%s: launch: the step reads as no GPU step", c->slurm);
	/* verdict() calls a count that disagrees with the list a set-up
	 * error: the fake must not be that. */
	if (s->n_gpu_idx >= 0 && (uint32_t)s->n_gpu_idx != s->gpus)
		fail_msg("%s: launch: %u GPUs, %d listed", c->slurm, s->gpus,
			 s->n_gpu_idx);
	mc_shape_node(rec, &out->node);
	out->node.unified_memory = p->unified_memory == MC_UNIFIED_YES;
	mc_step_case(s, &lc);
	lc.opts = o;
	lc.gpu_memory_bytes = c->gpu_memory;
	/* The node's shards per card, as mc_stepd.c step_case counts them
	 * from the node's Gres. */
	if (lc.share_kind == 1)
		lc.share_per_gpu = mc_shards_per_gpu(p, rec->shards,
						     rec->gpus, NULL);
	mc_step_alloc(s, &out->node, &out->alloc);
	if (mc_case_request(p, &lc, &out->node, &out->req, err,
			    sizeof(err)) < 0)
		fail_msg("%s: launch: %s", c->slurm, err);
	mc_decide(p, &out->req, &out->alloc, &out->node,
		  o->mode & MC_USER_WARN, false, s->step_name, s->host,
		  &out->d);
}

/* What the figures of one case came to. */
struct tally {
	int diffs;		/* differences not known: failures */
	unsigned known_seen;	/* the known ones that showed */
};

/* One figure of both records: a difference is printed with the case. */
static void same(const struct dcase *c, unsigned bit, const char *what,
		 uint64_t cli, uint64_t launch, struct tally *t)
{
	bool known = c->known & bit;

	if (cli == launch)
		return;
	if (known)
		t->known_seen |= bit;
	else
		t->diffs++;
	print_error("%s: %s [%s] on %s: %s: check %llu, launch %llu\n",
		    known ? "KNOWN DISAGREEMENT" : "DIFFERS", c->slurm,
		    c->memcore, c->rec->name, what, (unsigned long long)cli,
		    (unsigned long long)launch);
}

/* Both records of case c; the count of failures (differences not
 * known, a wrong fits, a known disagreement gone). */
static int compare(const struct mc_policy *p, const struct dcase *c)
{
	static struct side cli, launch;		/* explanations: large */
	static struct mc_step s;
	struct mc_slurm_grant g;
	struct mc_slurm_job job;
	struct mc_opts o;
	const struct mc_verdict *a = &cli.d.j.v, *b = &launch.d.j.v;
	struct tally t = { 0 };

	job_of(c->slurm, &job);
	opts_of(c->memcore, &o);
	cli_side(p, c, &o, &job, &g, &cli);
	launch_side(p, c, &o, &job, &g, &s, &launch);

	same(c, F_FITS, "fits", a->fits, b->fits, &t);
	same(c, F_RAM_NEEDED, "ram_needed_bytes", a->ram_needed_bytes,
	     b->ram_needed_bytes, &t);
	same(c, F_RAM_ALLOCATED, "ram_allocated_bytes", a->ram_allocated_bytes,
	     b->ram_allocated_bytes, &t);
	same(c, F_CORES_NEEDED, "cores_needed", a->cores_needed,
	     b->cores_needed, &t);
	same(c, F_CORES_ALLOCATED, "cores_allocated", a->cores_allocated,
	     b->cores_allocated, &t);
	same(c, F_LAUNCH, "launch", cli.d.launch, launch.d.launch, &t);
	same(c, F_REFUSED, "refused", cli.d.refused, launch.d.refused, &t);
	same(c, F_WORKERS, "workers", cli.d.workers, launch.d.workers, &t);
	same(c, F_GPUS, "req.gpus", a->req.gpus, b->req.gpus, &t);
	same(c, F_GPU_MEMORY, "req.gpu_memory_bytes", a->req.gpu_memory_bytes,
	     b->req.gpu_memory_bytes, &t);
	/* The ranks the rules counted: the grant's tasks at submission,
	 * the step's at launch. */
	same(c, F_RANKS, "ranks", mc_terms_ranks(&a->req.use, a->req.gpus),
	     mc_terms_ranks(&b->req.use, b->req.gpus), &t);
	/* The option the fix names (--mem-per-gpu, --mem-per-cpu, --mem). */
	same(c, F_MEM_FORM, "alloc.mem_form", a->alloc.mem_form,
	     b->alloc.mem_form, &t);
	/* What a step that runs is held to; a refused one is held to
	 * nothing on either side. */
	if (a->fits || b->fits || !cli.d.refused || !launch.d.refused) {
		same(c, F_ENFORCE, "enforce", cli.d.enforce, launch.d.enforce,
		     &t);
		same(c, F_LIMIT, "limit_bytes", cli.d.limit_bytes,
		     launch.d.limit_bytes, &t);
	}
	/* The case says whether it fits: a misfit meant is a misfit got. */
	if (a->fits != c->fits) {
		print_error("WRONG: %s [%s] on %s: fits %d, the case says "
			    "%d (RAM %llu of %llu, cores %u of %u)\n",
			    c->slurm, c->memcore, c->rec->name, a->fits,
			    c->fits, (unsigned long long)a->ram_needed_bytes,
			    (unsigned long long)a->ram_allocated_bytes,
			    a->cores_needed, a->cores_allocated);
		t.diffs++;
	}
	/* A known disagreement that no longer shows was fixed: its mark
	 * must go, or the table would claim what is no longer so. */
	if (t.known_seen != c->known) {
		print_error("GONE: %s [%s] on %s: marked as a known "
			    "disagreement (0x%x) that no longer shows (0x%x): "
			    "drop the mark\n", c->slurm, c->memcore,
			    c->rec->name, c->known, t.known_seen);
		t.diffs++;
	}
	return t.diffs;
}

static void test_same_decision(void **state)
{
	const size_t n = sizeof(cases) / sizeof(cases[0]);
	struct mc_policy p;
	size_t bad = 0, misfits = 0, known = 0;

	policy(&p);
	for (size_t i = 0; i < n; i++) {
		if (compare(&p, &cases[i]))
			bad++;
		misfits += !cases[i].fits;
		known += cases[i].known != 0;
	}
	print_message("%zu cases, %zu misfits, %zu known disagreement(s)\n",
		      n, misfits, known);
	/* The table keeps both kinds: a comparison of fits only proves
	 * little about refusals. */
	assert_true(misfits >= 3);
	if (bad)
		fail_msg("%zu of %zu cases decide differently at submission "
			 "and at launch (DIFFERS/WRONG/GONE lines above)", bad,
			 n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_decision),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
