/*
 * memcore check - would a step with these GPUs and this allocation fit?
 * The same verdict and explanation as the plugin gives at step launch.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <slurm/slurm_version.h>

#include "cli.h"
#include "mc_dataset.h"
#include "mc_util.h"
#include "mc_facts.h"
#include "mc_jobenv.h"
#include "mc_jobfiles.h"
#include "mc_node_pick.h"
#include "mc_judge.h"
#include "mc_opts.h"
#include "mc_parse.h"
#include "mc_rules.h"
#include "mc_slurm_alloc.h"
#include "mc_slurmctld.h"

static void check_usage(FILE *out)
{
	fprintf(out,
"usage: memcore check --gpus N [options]\n"
"\n"
"Would a step with N GPUs on one node fit its allocation and the node?\n"
"\n"
"  --gpus N                  GPUs of the step on the node (required)\n"
"  --dataloader-workers W    DataLoader workers per GPU; several loaders per\n"
"                            rank as a sum, 8+2 (train + validation) counting\n"
"                            as 10 (default: the policy's DataloaderWorkers)\n"
"  --mem SIZE                memory of the step on the node, as --mem takes it\n"
"                            (a whole number, MiB without suffix; K/M/G/T;\n"
"                            default: the node)\n"
"  --mem-per-gpu SIZE        memory per GPU, as Slurm's --mem-per-gpu (instead\n"
"                            of --mem)\n"
"  --mem-per-cpu SIZE        memory per CPU, as Slurm's --mem-per-cpu (instead\n"
"                            of --mem; CPUs rounded up to whole cores)\n"
"  --cores N                 cores of the step on the node (default: the node)\n"
"  --cpus N                  CPUs of the step on the node, as Slurm counts them\n"
"                            (threads; instead of --cores: N / threads per\n"
"                            core of the node, rounded up)\n"
"  --cpus-per-gpu N          CPUs per GPU, as Slurm's --cpus-per-gpu (instead\n"
"                            of --cpus; the fix then names it)\n"
"  --cpus-per-task N         CPUs per task, as Slurm's -c (instead of --cpus;\n"
"                            the fix then names it)\n"
"  --ntasks-per-node N       tasks of the step on the node, for\n"
"                            --cpus-per-task (default 1)\n"
"  --job-cores N             cores of the whole job on the node, when the\n"
"                            step got fewer than the job holds\n"
"  --nodes N                 nodes of the step (DeepSpeed offload; default 1)\n"
"  --gpu-memory SIZE         memory of one GPU (default: topology, else\n"
"                            the policy's GpuMemory)\n"
"  --gpu-type TYPE           the GPU type asked for (--gres=gpu:TYPE:N); an\n"
"                            NVIDIA MIG profile (1g.10gb, a100_3g.40gb) sizes\n"
"                            the RAM floor per slice (unless --gpu-memory)\n"
"  --nodelist HOSTS          with --partition: only these nodes (sbatch -w,\n"
"                            a Slurm hostlist such as gpu[01-04])\n"
"  --exclude HOSTS           with --partition: not these nodes (sbatch -x)\n"
"  --model-params SIZE       model parameters (7B, 70B, 6.7e9), for DeepSpeed\n"
"                            ZeRO's host RAM\n"
"  --zero-stage S            DeepSpeed ZeRO stage 0..3\n"
"  --offload none|optimizer|all  DeepSpeed ZeRO offload\n"
"  --largest-layer-params SIZE  parameters of the largest layer (ZeRO-3\n"
"                            without offload, with zero.Init; default: the\n"
"                            whole model)\n"
"  --zero-init yes|no        model built under deepspeed.zero.Init (default:\n"
"                            the policy's ZeroInit)\n"
"  --deepspeed-config FILE   the job's ds_config.json: stage, offload devices\n"
"                            (nvme: pinned buffers only), cpu_checkpointing,\n"
"                            micro-batch, bf16/fp16, 16-bit gather on save\n"
"  --model-config FILE       the model's Hugging Face config.json: parameters,\n"
"                            largest layer, layers, hidden size (llama,\n"
"                            mistral, qwen2, gpt2, gptj, mixtral,\n"
"                            qwen2_moe); options override\n"
"  --model-dtype fp32|bf16|fp16  dtype each rank builds the model in without\n"
"                            ZeRO (default fp32)\n"
"  --model-load per-rank|rank0|meta  who builds the model on the host without\n"
"                            ZeRO (default per-rank)\n"
"  --checkpoint-save none|rank0|all  a consolidated checkpoint gathered in host\n"
"                            RAM (FSDP FULL_STATE_DICT offload_to_cpu)\n"
"  --save-optimizer yes|no   ... with the optimizer state (Adam: 2 x the\n"
"                            model dtype's bytes a parameter)\n"
"  --cpu-checkpointing yes|no  DeepSpeed activation checkpoints in host RAM\n"
"  --seq-len N               sequence length (activation offload)\n"
"  --micro-batch N           micro-batch per GPU (activation offload)\n"
"  --model-parallel N        model-parallel degree (partition_activations)\n"
"  --ram-per-worker SIZE     RAM per DataLoader worker for this job, within\n"
"                            the policy's MinRamPerWorker..MaxRamPerWorker\n"
"  --dataset PATH[,PATH...]  the job's dataset: checked as a list here; its\n"
"                            filesystem is judged at launch (memcore(8))\n"
"  --dataset-in-memory[=SIZE]  the dataset held in RAM (datasets\n"
"                            keep_in_memory=True, Python lists): tasks x\n"
"                            SIZE x (workers + 1) more host RAM; without\n"
"                            SIZE the --dataset paths' size, measured here\n"
"  --shards N                a --gres=shard:N step: sized by its share of\n"
"                            the card (shards per GPU: --shards-per-gpu, the\n"
"                            policy's ShardsPerGpu, else the node's Gres)\n"
"  --shards-per-gpu N        shards of one GPU (instead of the node's Gres)\n"
"  --mps N                   a --gres=mps:N step: N of the GPU's MPS count\n"
"                            (the node's Gres mps, else 100 per GPU)\n"
"  --slurm-options JSON      the whole request as Slurm's cli_filter has it\n"
"                            (slurm.json_cli_options(); \"spank:NAME\" for\n"
"                            memcore's options, MEMCORE_* for the rest): what\n"
"                            Slurm allocates on each node is predicted as\n"
"                            Slurm computes it (memcore(8) SUBMISSION RULES);\n"
"                            no --gpus, --mem*, --cpus* or --cores with it;\n"
"                            MEMCORE_* as the job will have them (its\n"
"                            \"export\" and \"export-file\", memcore(8))\n"
"  --slurm-command CMD       sbatch (default), srun or salloc: whose --export\n"
"                            rules give the job its environment\n"
"  --partition P             partition P: its policy, and its nodes from\n"
"                            slurmctld (default: slurm.conf's default one);\n"
"                            without a readable slurm.conf and no node\n"
"                            described, an error (never this host); a\n"
"                            partition slurmctld does not know (without a\n"
"                            readable slurm.conf: no PartitionName= line of\n"
"                            memcore.conf names it) is an error, also with\n"
"                            --topology or TopologyFile=\n"
"  --config FILE             policy file (default %s if present)\n"
"  --topology FILE.xml       this exact node's hwloc XML\n"
"  --json                    one JSON object on stdout (with the policy's\n"
"                            mode, allow_user_warn, what launch would do:\n"
"                            launch (runs, warned, refused, unchecked),\n"
"                            fix_options and node_source: topology-file,\n"
"                            policy, slurmctld or live)\n"
"  -h, --help                this text\n"
"\n"
"memcore's variables (MEMCORE_DATALOADER_WORKERS, MEMCORE_MODEL_PARAMS, ...,\n"
"memcore(8) OPTIONS) fill what the options leave unset, as in the plugin.\n"
"\n"
"The node, in this order: --topology (or TopologyFile=), NodeRam= and\n"
"NodeCores= in memcore.conf, the partition's nodes from slurmctld when\n"
"slurm.conf is readable (SLURM_CONF, else /etc/slurm/slurm.conf), this\n"
"machine when it has GPUs.\n"
"\n"
"The explanation ends as the plugin's does: what launch does with a step\n"
"that does not fit, by the policy's Mode= and AllowUserWarn= and\n"
"MEMCORE_MODE=warn (\"memcore: Mode=warn: the step runs anyway\").\n"
"\n"
"Exit status (memcore(8) EXIT STATUS):\n"
"  0  the step would run: it fits (from slurmctld: every node of the\n"
"     partition Slurm may start it on), or runs with a warning (Mode=warn, or\n"
"     MEMCORE_MODE=warn where AllowUserWarn=yes), or Mode=off\n"
"  1  launch would refuse it (the explanation says what to change)\n"
"  2  usage or input error (a bad option, variable, policy or job file, an\n"
"     unknown partition, --partition without a readable slurm.conf and no\n"
"     node described, a host with no GPUs and no node described)\n"
"  3  slurmctld could not be reached (slurm.conf read, but no answer)\n",
		MC_DEFAULT_CONFIG);
}

enum {
	OPT_GPUS = 256, OPT_MEM, OPT_CORES, OPT_JOB_CORES,
	OPT_NODES, OPT_GPU_MEMORY,
	OPT_MEM_PER_GPU, OPT_MEM_PER_CPU, OPT_CPUS, OPT_CPUS_PER_GPU,
	OPT_CPUS_PER_TASK, OPT_TASKS, OPT_GPU_TYPE, OPT_SLURM_OPTIONS,
	OPT_SHARDS, OPT_SHARDS_PER_GPU, OPT_MPS, OPT_SLURM_COMMAND,
	OPT_NODELIST, OPT_EXCLUDE,
	/* The user's options, parsed by policy/mc_opts.c as the plugin's. */
	OPT_USER = 0x2000,
};

static const struct option check_options[] = {
	{ "gpus", required_argument, NULL, OPT_GPUS },
	{ "dataloader-workers", required_argument, NULL,
	  OPT_USER + MC_OPT_WORKERS },
	{ "mem", required_argument, NULL, OPT_MEM },
	{ "mem-per-gpu", required_argument, NULL, OPT_MEM_PER_GPU },
	{ "mem-per-cpu", required_argument, NULL, OPT_MEM_PER_CPU },
	{ "cores", required_argument, NULL, OPT_CORES },
	{ "cpus", required_argument, NULL, OPT_CPUS },
	{ "cpus-per-gpu", required_argument, NULL, OPT_CPUS_PER_GPU },
	{ "cpus-per-task", required_argument, NULL, OPT_CPUS_PER_TASK },
	{ "ntasks-per-node", required_argument, NULL, OPT_TASKS },
	{ "job-cores", required_argument, NULL, OPT_JOB_CORES },
	{ "nodes", required_argument, NULL, OPT_NODES },
	{ "gpu-memory", required_argument, NULL, OPT_GPU_MEMORY },
	{ "gpu-type", required_argument, NULL, OPT_GPU_TYPE },
	{ "nodelist", required_argument, NULL, OPT_NODELIST },
	{ "exclude", required_argument, NULL, OPT_EXCLUDE },
	{ "slurm-options", required_argument, NULL, OPT_SLURM_OPTIONS },
	{ "slurm-command", required_argument, NULL, OPT_SLURM_COMMAND },
	{ "model-params", required_argument, NULL, OPT_USER + MC_OPT_PARAMS },
	{ "zero-stage", required_argument, NULL, OPT_USER + MC_OPT_STAGE },
	{ "offload", required_argument, NULL, OPT_USER + MC_OPT_OFFLOAD },
	{ "largest-layer-params", required_argument, NULL,
	  OPT_USER + MC_OPT_LARGEST_LAYER },
	{ "zero-init", required_argument, NULL, OPT_USER + MC_OPT_ZERO_INIT },
	{ "deepspeed-config", required_argument, NULL,
	  OPT_USER + MC_OPT_DS_CONFIG },
	{ "model-config", required_argument, NULL,
	  OPT_USER + MC_OPT_MODEL_CONFIG },
	{ "model-dtype", required_argument, NULL,
	  OPT_USER + MC_OPT_MODEL_DTYPE },
	{ "model-load", required_argument, NULL, OPT_USER + MC_OPT_MODEL_LOAD },
	{ "checkpoint-save", required_argument, NULL, OPT_USER + MC_OPT_SAVE },
	{ "save-optimizer", required_argument, NULL,
	  OPT_USER + MC_OPT_SAVE_OPTIM },
	{ "cpu-checkpointing", required_argument, NULL,
	  OPT_USER + MC_OPT_CPU_CKPT },
	{ "seq-len", required_argument, NULL, OPT_USER + MC_OPT_SEQ_LEN },
	{ "micro-batch", required_argument, NULL,
	  OPT_USER + MC_OPT_MICRO_BATCH },
	{ "model-parallel", required_argument, NULL,
	  OPT_USER + MC_OPT_MODEL_PARALLEL },
	{ "ram-per-worker", required_argument, NULL,
	  OPT_USER + MC_OPT_RAM_PER_WORKER },
	{ "dataset", required_argument, NULL, OPT_USER + MC_OPT_DATASET },
	{ "dataset-in-memory", optional_argument, NULL,
	  OPT_USER + MC_OPT_DATASET_IN_MEMORY },
	{ "shards", required_argument, NULL, OPT_SHARDS },
	{ "shards-per-gpu", required_argument, NULL, OPT_SHARDS_PER_GPU },
	{ "mps", required_argument, NULL, OPT_MPS },
	MC_CLI_NODE_OPTIONS,
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* An option's name, as check_options spells it: the one place. */
static const char *option_name(int opt)
{
	for (const struct option *o = check_options; o->name; o++)
		if (o->val == opt)
			return o->name;
	return "?";
}

/* What the command line said; *_set tell given from default. */
struct check_args {
	struct mc_cli_common common;
	struct mc_opts opts;		/* user options, as the plugin's */
	uint32_t gpus, cores, cpus, job_cores, nodes, tasks;
	uint32_t shards, shards_per_gpu, mps;
	uint64_t mem_bytes, gpu_memory_bytes;
	bool gpus_set, mem_set, cores_set, cpus_set, gpu_memory_set;
	uint64_t mig_bytes;		/* from --gpu-type's MIG profile */
	const char *gpu_type;
	/* which memory option: OPT_MEM, OPT_MEM_PER_GPU, OPT_MEM_PER_CPU */
	int mem_opt;
	/* which CPU option: OPT_CPUS, OPT_CPUS_PER_GPU, OPT_CPUS_PER_TASK */
	int cpus_opt;
	const char *mem_arg;
	const char *slurm_options;	/* --slurm-options JSON */
	const char *nodelist, *exclude;	/* Slurm hostlists, as -w, -x */
	enum mc_submit_cmd slurm_command;	/* --slurm-command */
	bool slurm_command_set;
};

/* --shards, --shards-per-gpu, --mps, --nodes, --ntasks-per-node: counts
 * of at least 1, each read the same way. */
static int parse_count_option(int opt, const char *v, struct check_args *a,
			      char *err, size_t errlen)
{
	uint32_t *n = opt == OPT_SHARDS ? &a->shards
		: opt == OPT_MPS ? &a->mps
		: opt == OPT_SHARDS_PER_GPU ? &a->shards_per_gpu
		: opt == OPT_NODES ? &a->nodes : &a->tasks;

	return mc_parse_count_min1(v, 1u << 20, n, err, errlen);
}

/* --gpu-type: one value, and the MIG slice it names (if it does). */
static int parse_gpu_type(const char *v, struct check_args *a, char *err,
			  size_t errlen)
{
	if (a->gpu_type && strcmp(a->gpu_type, v))
		return mc_err(err, errlen, "given twice with different "
			      "values");
	a->gpu_type = v;
	if (mc_mig_profile(v, &a->mig_bytes, NULL, 0) < 0)
		a->mig_bytes = 0;	/* not MIG: nothing to size */
	return 0;
}

/* Parse one option value; on error print "memcore: --opt=VALUE: why". */
static int parse_value(int opt, const char *name, const char *v,
		       struct check_args *a)
{
	char err[MC_ERR_MAX];
	int rc = 0;

	switch (opt) {
	case OPT_GPUS:
		rc = mc_parse_count(v, MC_MAX_GPUS, &a->gpus, err, sizeof(err));
		a->gpus_set = true;
		break;
	case OPT_MEM:
	case OPT_MEM_PER_GPU:
	case OPT_MEM_PER_CPU:
		if (a->mem_set && a->mem_opt != opt) {
			snprintf(err, sizeof(err), "only one of --mem, "
				 "--mem-per-gpu and --mem-per-cpu");
			rc = -1;
			break;
		}
		rc = mc_parse_size(v, 1ULL << 20, &a->mem_bytes, err,
				   sizeof(err));
		a->mem_set = true;
		a->mem_opt = opt;
		a->mem_arg = v;
		break;
	case OPT_CPUS:
	case OPT_CPUS_PER_GPU:
	case OPT_CPUS_PER_TASK:
		if (a->cpus_set && a->cpus_opt != opt) {
			rc = mc_err(err, sizeof(err), "only one of --cpus, "
				    "--cpus-per-gpu and --cpus-per-task");
			break;
		}
		rc = mc_parse_count(v, 1u << 20, &a->cpus, err, sizeof(err));
		a->cpus_set = true;
		a->cpus_opt = opt;
		break;
	case OPT_CORES:
		rc = mc_parse_count(v, 1u << 20, &a->cores, err, sizeof(err));
		a->cores_set = true;
		break;
	case OPT_JOB_CORES:
		rc = mc_parse_count(v, 1u << 20, &a->job_cores, err,
				    sizeof(err));
		break;
	case OPT_SHARDS:
	case OPT_SHARDS_PER_GPU:
	case OPT_MPS:
	case OPT_NODES:
	case OPT_TASKS:
		rc = parse_count_option(opt, v, a, err, sizeof(err));
		break;
	case OPT_GPU_MEMORY:
		rc = mc_parse_size(v, 1ULL << 20, &a->gpu_memory_bytes, err,
				   sizeof(err));
		a->gpu_memory_set = true;
		break;
	case OPT_SLURM_OPTIONS:
		a->slurm_options = v;
		break;
	case OPT_NODELIST:
		a->nodelist = v;
		break;
	case OPT_EXCLUDE:
		a->exclude = v;
		break;
	case OPT_SLURM_COMMAND:
		rc = mc_submit_cmd_parse(v, &a->slurm_command);
		if (rc < 0)
			snprintf(err, sizeof(err), "expected sbatch, srun or "
				 "salloc");
		a->slurm_command_set = true;
		break;
	case OPT_GPU_TYPE:
		rc = parse_gpu_type(v, a, err, sizeof(err));
		break;
	}
	if (rc < 0)
		mc_cli_usage_error("--%s=%s: %s", name, v, err);
	return rc;
}

static bool same_text(const char *x, const char *y)
{
	return x == y || (x && y && !strcmp(x, y));
}

static bool same_values(const struct check_args *x,
			const struct check_args *y)
{
	return x->gpus == y->gpus &&
	       x->cpus == y->cpus && x->tasks == y->tasks &&
	       x->cores == y->cores && x->job_cores == y->job_cores &&
	       x->nodes == y->nodes && x->shards == y->shards &&
	       x->shards_per_gpu == y->shards_per_gpu && x->mps == y->mps &&
	       x->mem_bytes == y->mem_bytes &&
	       x->gpu_memory_bytes == y->gpu_memory_bytes &&
	       same_text(x->nodelist, y->nodelist) &&
	       same_text(x->exclude, y->exclude);
}

/*
 * What the command line asks of a node like `node`: cores from --cpus,
 * --cpus-per-gpu or --cpus-per-task (threads, counted in whole cores on
 * SMT nodes as Slurm does) or --cores, else the whole node; memory from
 * --mem, --mem-per-gpu or --mem-per-cpu, else the whole node.
 */
static bool check_alloc(const void *args, const struct mc_ctld_nodes *nodes,
			const struct mc_node_record *rec,
			const struct mc_node *node, struct mc_case *c,
			struct mc_cli_grant *g)
{
	const struct check_args *a = args;
	struct mc_alloc *alloc = &g->alloc;
	uint32_t tpc = node->threads_per_core ? node->threads_per_core : 1;
	uint64_t cpus = 0, mem = a->mem_bytes;

	g->gpus_fixed = true;
	/* --gpu-type narrows a partition's nodes as Slurm does: only
	 * nodes of that type are candidates (a described node, rec NULL,
	 * is taken as the type asked). */
	if (rec && mc_slurm_type_excludes(a->gpu_type, rec->gpu_type, g->why,
					  sizeof(g->why)))
		return false;
	memset(alloc, 0, sizeof(*alloc));
	alloc->requested = true;
	alloc->job_cores = a->job_cores;
	if (a->cpus_set) {
		cpus = a->cpus;
		if (a->cpus_opt == OPT_CPUS_PER_GPU)
			cpus = mc_mul_sat64(a->cpus, a->gpus);
		else if (a->cpus_opt == OPT_CPUS_PER_TASK)
			cpus = mc_mul_sat64(a->cpus, a->tasks ? a->tasks : 1);
		cpus = (cpus + tpc - 1) / tpc;
		alloc->cores = cpus > UINT32_MAX ? UINT32_MAX : (uint32_t)cpus;
	} else {
		alloc->cores = a->cores_set ? a->cores : node->cores;
	}
	if (a->cpus_set && a->cpus_opt == OPT_CPUS_PER_TASK) {
		alloc->cpu_form = MC_CPUS_PER_TASK;
		alloc->tasks = a->tasks ? a->tasks : 1;
	}
	if (a->mem_set && a->mem_opt == OPT_MEM_PER_GPU) {
		mem = mc_mul_sat64(a->mem_bytes, a->gpus);
		alloc->mem_form = MC_MEM_PER_GPU;
	} else if (a->mem_set && a->mem_opt == OPT_MEM_PER_CPU) {
		mem = mc_mul_sat64(a->mem_bytes, (uint64_t)alloc->cores * tpc);
		alloc->mem_form = MC_MEM_PER_CPU;
	}
	alloc->mem_bytes = a->mem_set && mem ? mem : node->ram_bytes;
	alloc->mem_unset = !(a->mem_set && mem);
	if (a->mem_set) {
		snprintf(g->mem_source, sizeof(g->mem_source), "--%s=%s",
			 option_name(a->mem_opt), a->mem_arg);
		alloc->mem_source = g->mem_source;
	} else {
		alloc->mem_source = "the whole node";
	}
	return true;
}

/*
 * The job's own Slurm options (--slurm-options): what Slurm gives it on a
 * node of this shape (mc_slurm_alloc), with the partition's defaults.
 */
struct job_args {
	struct mc_slurm_job job;
	struct mc_slurm_part part;	/* when no slurmctld answers: none */
};

static bool job_alloc(const void *args, const struct mc_ctld_nodes *nodes,
		      const struct mc_node_record *rec,
		      const struct mc_node *node, struct mc_case *c,
		      struct mc_cli_grant *out)
{
	const struct job_args *j = args;
	struct mc_slurm_grant g;
	struct mc_node_record r;

	if (rec) {
		r = *rec;
	} else {
		/* One node described by memcore.conf or a topology: its GPU
		 * type is unknown, so a typed job is taken as asking it. */
		memset(&r, 0, sizeof(r));
		r.ram_bytes = node->ram_bytes;
		r.cores = node->cores;
		r.threads_per_core = node->threads_per_core;
		r.gpus = node->gpus;
		snprintf(r.gpu_type, sizeof(r.gpu_type), "%s",
			 j->job.gpu_type);
	}
	mc_slurm_alloc(&j->job, nodes ? &nodes->part : &j->part, &r, &g);
	out->gpus_fixed = g.gpus_fixed;
	out->has_job = true;
	out->job_gpus = g.gpus;
	out->job_tasks = g.tasks;
	out->job_cpus = g.cpus;
	if (g.excluded) {
		snprintf(out->why, sizeof(out->why), "%s", g.why);
		return false;
	}
	/* A shard or MPS job drives one shared card (its share sized by
	 * mc_share_apply). */
	c->gpus = g.gpus ? g.gpus : j->job.shards || j->job.mps ? 1 : 0;
	out->alloc = g.alloc;
	snprintf(out->mem_source, sizeof(out->mem_source), "%s",
		 g.mem_source);
	out->alloc.mem_source = out->mem_source;
	/* A candidate: why carries the placement line, if any. */
	snprintf(out->why, sizeof(out->why), "%s", g.placement);
	return true;
}

/* The job's --export and --export-file, as its options give them. */
struct job_export {
	char export_opt[8192];
	char export_file[4096];
	bool has_export, has_file;
};

/*
 * "export" or "export-file" (value s) kept in x: true when key is one
 * of them; *rc is set when the value is longer than memcore keeps (exit
 * 2 without a user's "--" message: the cli_filter lets the job through).
 */
static bool keep_export(const char *key, const char *s, struct job_export *x,
			int *rc)
{
	bool file = !strcmp(key, "export-file");
	char *dst = file ? x->export_file : x->export_opt;
	size_t cap = file ? sizeof(x->export_file) : sizeof(x->export_opt);

	if (!file && strcmp(key, "export"))
		return false;
	if (strlen(s) >= cap) {
		fprintf(stderr, "memcore: cannot read the job's options: "
			"--%s is longer than %zu bytes\n", key, cap - 1);
		*rc = MC_EXIT_USAGE;
		return true;
	}
	strcpy(dst, s);
	*(file ? &x->has_file : &x->has_export) = true;
	return true;
}

/*
 * --slurm-options JSON: the job's options as cli_filter/lua's
 * slurm.json_cli_options() gives them: "spank:NAME" keys are memcore's
 * own options (as the plugin's), the rest Slurm's, "export" and
 * "export-file" into x; memcore's variables (MEMCORE_*) fill what the
 * options leave unset, as in the plugin (read_env_defaults). Each of
 * Slurm's options that memcore does not model at submission
 * (mc_slurm_let_through) gives notes a line: never silently ignored.
 */
static int read_slurm_options(const char *text, struct mc_opts *opts,
			      struct mc_slurm_job *job, struct job_export *x,
			      struct mc_node_pick *pick,
			      struct mc_cli_notes *notes)
{
	json_error_t jerr;
	/* A key twice: Slurm's table holds each option once, so a second
	 * one is not the job's and neither is believed. */
	json_t *o = json_loads(text, JSON_REJECT_DUPLICATES, &jerr), *v;
	const char *key;
	char err[MC_ERR_MAX];
	int rc = 0;

	if (!o && !strncmp(jerr.text, "duplicate object key", 20))
		return mc_cli_usage_error("check: --slurm-options: column %d: "
					  "an option given twice (%s)",
					  jerr.column, jerr.text);
	if (!o)
		return mc_cli_usage_error("check: --slurm-options: not JSON at "
					  "column %d: %s", jerr.column,
					  jerr.text);
	if (!json_is_object(o)) {
		json_decref(o);
		return mc_cli_usage_error("check: --slurm-options: not a JSON "
					  "object");
	}
	json_object_foreach(o, key, v) {
		const char *s = json_is_string(v) ? json_string_value(v) : NULL;
		int id;

		/* slurm.json_cli_options() gives every value as a string
		 * (null: unset), and the script's arguments as "argv", an
		 * array (seen on 22.05: "argv":[]), which memcore does not
		 * read; anything else is not Slurm's and would read as an
		 * option not given. */
		if (json_is_null(v) || (!strcmp(key, "argv") && json_is_array(v)))
			continue;
		if (!s) {
			char *dump = json_dumps(v, JSON_ENCODE_ANY |
						JSON_COMPACT);
			char k[96], d[64];

			rc = mc_cli_usage_error("check: --slurm-options: \"%s\": "
						"%s is not a string (Slurm's "
						"options are strings)",
						mc_escape(key, 64, k, sizeof(k)),
						mc_escape(dump, 40, d, sizeof(d)));
			free(dump);
			break;
		}
		if (keep_export(key, s, x, &rc)) {
			if (rc)
				break;
		} else if (!strncmp(key, "spank:", 6)) {
			/* "spank:NAME" (22.05), or with the plugin's name */
			const char *nm = strrchr(key, ':') + 1;

			id = mc_opt_lookup(nm);
			if (id < 0)
				continue;
			if (mc_opts_set(opts, (enum mc_opt_id)id, s, false, err,
					sizeof(err)) < 0) {
				rc = mc_cli_usage_error("%s", err);
				break;
			}
		} else if (mc_node_pick_option(pick, key, s) &&
			   !mc_slurm_let_through(key)) {
			/* -w, -x: the partition's nodes narrowed to the
			 * job's (mc_node_pick.h) */
		} else if (mc_slurm_let_through(key)) {
			if (!notes->unmodelled[0] &&
			    mc_slurm_may_give_more(key, s))
				snprintf(notes->unmodelled,
					 sizeof(notes->unmodelled), "%s", key);
			/* one line each; Slurm's table holds each once */
			if (notes->n < MC_CLI_NOTES_MAX)
				snprintf(notes->line[notes->n++],
					 sizeof(notes->line[0]), "memcore: "
					 "--%s is not modelled at submission: "
					 "%s (the launch check judges it)", key,
					 mc_slurm_let_through(key));
		} else if (mc_slurm_job_set(job, key, s, err, sizeof(err)) < 0) {
			/* sbatch took it: memcore misreads it, so it judges
			 * nothing (exit 2 without a user's "--" message). */
			fprintf(stderr, "memcore: cannot read the job's "
				"options: %s\n", err);
			rc = MC_EXIT_USAGE;
			break;
		}
	}
	json_decref(o);
	return rc;
}

static const char *env_get(const char *name, void *ctx)
{
	(void)ctx;
	return getenv(name);
}

#define EXPORT_FILE_MAX (256 * 1024)
#define EXPORT_FILE_ENTRIES 1024

/*
 * The --export-file's entries into e, read as the user who runs this,
 * as sbatch reads it. Returns 0, or MC_EXIT_USAGE with a line that is not
 * a user's "--" message, so that the cli_filter lets the job through:
 * a file memcore cannot read (sbatch then says its own error), or a
 * number, one of sbatch's own descriptors (env_array_from_file), which
 * memcore must not consume; the launch judges that job.
 */
static int read_export_file(const char *path, struct mc_jobenv *e)
{
	static char text[EXPORT_FILE_MAX];
	static const char *ents[EXPORT_FILE_ENTRIES];
	static size_t lens[EXPORT_FILE_ENTRIES];
	char err[MC_ERR_MAX], q[256], *end;
	/* sbatch's own test, env_array_from_file (Slurm 22.05 to 26.05):
	 * (int)strtol, 3 up to _SC_OPEN_MAX; anything else is a file name
	 * (sbatch also opens it when that descriptor is not open in it,
	 * which only sbatch can know: judged at launch). */
	int fd = (int)strtol(path, &end, 10);
	ssize_t n;
	int f;

	e->export_file = true;
	if (*path && !*end && fd >= 3 && fd <= sysconf(_SC_OPEN_MAX)) {
		fprintf(stderr, "memcore: cannot read the job's options: "
			"--export-file=%s is a descriptor of sbatch's: the "
			"job's variables are judged at launch\n",
			mc_escape(path, 0, q, sizeof(q)));
		return MC_EXIT_USAGE;
	}
	f = mc_open_regular("--export-file", path, 0, EXPORT_FILE_MAX - 1,
			    NULL, err, sizeof(err));
	n = f < 0 ? -1 : read(f, text, sizeof(text) - 1);
	if (f >= 0)
		close(f);
	if (n < 0) {
		fprintf(stderr, "memcore: cannot read the job's options: %s\n",
			f < 0 ? err : strerror(errno));
		return MC_EXIT_USAGE;
	}
	e->file = ents;
	e->file_lens = lens;
	e->nfile = mc_jobenv_file_entries(text, (size_t)n, ents, lens,
					  EXPORT_FILE_ENTRIES);
	if (e->nfile > EXPORT_FILE_ENTRIES) {
		fprintf(stderr, "memcore: cannot read the job's options: "
			"--export-file holds more than %d variables\n",
			EXPORT_FILE_ENTRIES);
		return MC_EXIT_USAGE;
	}
	return 0;
}

/*
 * memcore's variables (MEMCORE_DATALOADER_WORKERS, ...) fill what the
 * options leave unset, by the plugin's own rule (mc_opts_set_env), as
 * the job will have them (mc_jobenv.h): with --slurm-options by its
 * --export and --export-file under the --slurm-command's rules of the
 * Slurm release memcore is built for; without, this shell's own
 * environment, which srun from here passes on.
 */
static int read_env_defaults(struct mc_opts *opts, const struct check_args *a,
			     const struct job_export *x)
{
	struct mc_jobenv e = {
		.cmd = a->slurm_options ? a->slurm_command : MC_SUBMIT_SALLOC,
		.export_opt = x->has_export ? x->export_opt : NULL,
		.slurm_version = SLURM_VERSION_NUMBER,
		.get = env_get,
	};
	/* A value is at most its source: the file, or --export. */
	static char buf[EXPORT_FILE_MAX + sizeof(x->export_opt)];
	char err[MC_ERR_MAX];

	if (e.cmd == MC_SUBMIT_SBATCH && x->has_file &&
	    read_export_file(x->export_file, &e))
		return MC_EXIT_USAGE;
	for (int id = 0; id < MC_OPT_COUNT; id++) {
		const char *name = mc_opt_env((enum mc_opt_id)id);

		const char *v = mc_jobenv_get(&e, name, buf, sizeof(buf));

		if (mc_opts_set_env(opts, (enum mc_opt_id)id, v, err,
				    sizeof(err)) < 0)
			return mc_cli_usage_error("%s%s", err,
				v && v != getenv(name)
				? " (as the job's --export or --export-file "
				  "gives it)" : "");
	}
	return 0;
}

/*
 * Where a measured GPU memory figure was read, for the GPU line: the
 * topology file ("topology x.xml") or this host; never "this node", as
 * memcore check runs where there is none (a login host, the cli_filter).
 */
static const char *measured_where(const struct mc_cli_common *c,
				  const struct mc_policy *p,
				  const char *node_source, char *buf,
				  size_t len)
{
	const char *topo = c->topology ? c->topology : p->topology_file;
	const char *base = strrchr(topo, '/');

	if (strcmp(node_source, "topology-file"))
		snprintf(buf, len, "this host");
	else
		snprintf(buf, len, "topology %s", base ? base + 1 : topo);
	return buf;
}

/* The answer for a step this command does not judge: one line, exit 0.
 * launch: what launch does with it ("unchecked"), or NULL where launch
 * judges it by what only the node knows (JSON null). */
static int not_judged(bool json, const char *line, const char *launch,
		      const struct mc_cli_notes *notes)
{
	if (json) {
		json_t *o = json_object(), *lines = json_array();

		json_array_append_new(lines, json_string(line));
		mc_cli_notes_append(lines, notes);
		json_object_set_new(o, "fits", json_true());
		json_object_set_new(o, "gpus", json_integer(0));
		json_object_set_new(o, "fix_options", json_array());
		json_object_set_new(o, "launch", launch ? json_string(launch)
				    : json_null());
		json_object_set_new(o, "explanation", lines);
		mc_cli_json_print(o);
	} else {
		puts(line);
		for (size_t i = 0; notes && i < notes->n; i++)
			puts(notes->line[i]);
	}
	return MC_EXIT_FITS;
}

/* The answer for a GPU-less step. */
static int not_a_gpu_step(bool json)
{
	return not_judged(json, "memcore: --gpus=0: not a GPU step; memcore "
			  "has nothing to check", "unchecked", NULL);
}

/*
 * --dataset-in-memory: the --dataset paths looked at here, as the user who
 * runs this, as srun and sbatch look at them (mc_dataset.h): without SIZE
 * their measured size, walked on local filesystems too; the command that
 * stages them for the explanation's fix (the job's id is the job's own:
 * $SLURM_JOB_ID). Returns 0, or -1 with err saying to give SIZE.
 */
static int check_dataset_in_memory(const struct mc_opts *o,
				   const struct mc_policy *p,
				   struct mc_case *c, char *err,
				   size_t errlen)
{
	static struct mc_dataset d;
	static char stage[1024];
	bool measure = mc_opts_dataset_measured(o);

	if (mc_dataset_paths(o->set[MC_OPT_DATASET] ? o->dataset : NULL,
			     NULL, NULL, &d, err, errlen) < 0)
		return -1;
	mc_dataset_probe(&d, MC_DATASET_WALK_ENTRIES, MC_DATASET_WALK_MS,
			 measure);
	if (measure) {
		if (mc_dataset_in_memory_bytes(&d, &c->dataset_bytes, err,
					       errlen) < 0)
			return -1;
		c->dataset_measured = true;
	}
	c->dataset_stage = mc_dataset_stage_cmd(&d, false,
		p->local_scratch, "$SLURM_JOB_ID", stage, sizeof(stage));
	return 0;
}

/* Everything one memcore check works with, from its command line to its
 * answer: large, so static, not on the stack. */
struct check_run {
	struct check_args a;
	struct job_export jx;		/* the job's --export, --export-file */
	struct job_args ja;
	struct mc_cli_notes notes;	/* Slurm options let through */
	struct mc_node_pick pick;	/* the job's -w, -x */
	struct mc_config cfg;
	struct mc_node_facts facts;
	struct mc_ctld_nodes ctld;
	struct mc_jobfiles files;
	struct mc_policy p;
	struct mc_decision d;
	struct mc_case c;
	struct mc_node node;
	const char *node_source;
	bool user_warn;			/* --memcore=warn */
	/* c.gpu_memory_source points into these */
	char mem_from[96], measured_on[MC_ERR_MAX];
};

/* read_command_line's state: the arguments, and which were given. */
struct check_line {
	struct check_args *a;
	unsigned seen;			/* bit (opt - OPT_GPUS): given */
};

/* One of check's own options (mc_cli_option_fn). */
static int take_check_option(void *ctx, int opt, const char *arg,
			     const char *name)
{
	struct check_line *l = ctx;
	struct check_args *a = l->a;
	char err[MC_ERR_MAX];

	if (opt >= OPT_USER && opt < OPT_USER + MC_OPT_COUNT) {
		/* Same parser, same messages as the plugin; it refuses a
		 * second, different value. */
		if (mc_opts_set(&a->opts, (enum mc_opt_id)(opt - OPT_USER), arg,
				false, err, sizeof(err)) < 0)
			return mc_cli_usage_error("%s", err);
		return MC_CLI_ON;
	}
	/* A value given twice must be the same, as the plugin's options
	 * say (no silent "last one wins"). */
	struct check_args prev = *a;
	unsigned bit = 1u << (opt - OPT_GPUS);

	if (parse_value(opt, name, arg, a) < 0)
		return MC_EXIT_USAGE;
	if ((l->seen & bit) && !same_values(&prev, a))
		return mc_cli_usage_error("--%s=%s: given twice with different "
					  "values", name, arg);
	l->seen |= bit;
	return MC_CLI_ON;
}

/* The command line into a; MC_CLI_ON, else the exit status (--help:
 * 0). */
static int read_command_line(int argc, char **argv, struct check_args *a)
{
	struct check_line l = { .a = a, .seen = 0 };

	return mc_cli_read_options("check", argc, argv, check_options,
				   check_usage, &a->common, take_check_option,
				   &l);
}

/* --slurm-options, the whole request: the step's GPUs, shares, nodes and
 * GPU type from the job's options, and its partition when it names
 * none. MC_CLI_ON, else the exit status. */
static int take_slurm_options(struct check_run *r)
{
	struct check_args *a = &r->a;
	const struct mc_slurm_job *job = &r->ja.job;
	char err[MC_ERR_MAX];
	int rc;

	if (a->gpus_set || a->mem_set || a->cpus_set || a->cores_set ||
	    a->gpu_type || a->tasks || a->job_cores || a->nodelist ||
	    a->exclude)
		return mc_cli_usage_error("check: --slurm-options is the "
			"whole request: no --gpus, --mem*, --cpus*, --cores, "
			"--gpu-type, --ntasks-per-node, --job-cores, "
			"--nodelist or --exclude with it");
	rc = read_slurm_options(a->slurm_options, &a->opts, &r->ja.job,
				&r->jx, &r->pick, &r->notes);
	if (rc)
		return rc;
	r->ja.job.srun = a->slurm_command == MC_SUBMIT_SRUN;
	a->gpus_set = true;
	a->gpus = !mc_slurm_job_has_gpus(job) ? 0
		  : job->gpus_per_node ? job->gpus_per_node : 1;
	/* --gres=shard:N / mps:N: a share of one card. */
	if (job->shards)
		a->shards = job->shards;
	else if (job->mps)
		a->mps = job->mps;
	a->nodes = job->nodes_min ? job->nodes_min : 1;
	if (job->gpu_type[0])
		a->gpu_type = job->gpu_type;
	/* The job's partition when it names none: slurmctld's default,
	 * whose memcore.conf line applies. */
	if (!a->common.partition && mc_ctld_conf()) {
		static char part[MC_PARTITION_NAME_MAX];

		rc = mc_ctld_default_partition(part, sizeof(part), err,
					       sizeof(err));
		if (rc == MC_CTLD_UNREACHABLE) {
			fprintf(stderr, "memcore: %s\n", err);
			return MC_EXIT_UNREACHABLE;
		}
		if (!rc)
			a->common.partition = part;
	}
	return MC_CLI_ON;
}

/* The request as a whole, as the plugin checks it: memcore's variables
 * for what the options leave unset, the job's files, options that
 * exclude each other. MC_CLI_ON, else the exit status. */
static int check_request(struct check_run *r)
{
	struct check_args *a = &r->a;
	char err[MC_ERR_MAX];
	int rc;

	if (a->slurm_command_set && !a->slurm_options)
		return mc_cli_usage_error("check: --slurm-command goes with "
					  "--slurm-options");
	rc = read_env_defaults(&a->opts, a, &r->jx);
	if (rc)
		return rc;
	r->user_warn = a->opts.mode & MC_USER_WARN;	/* --memcore=warn */
	/* A shard or MPS step shares one card. */
	if ((!a->gpus_set || !a->gpus) && (a->shards || a->mps)) {
		a->gpus = 1;
		a->gpus_set = true;
	}
	if (!a->gpus_set)
		return mc_cli_usage_error("check: --gpus is required");
	/* The plugin's refusal in srun/sbatch/salloc, word for word. */
	if (!mc_opts_name_files(&a->opts) &&
	    mc_opts_check(&a->opts, err, sizeof(err)) < 0)
		return mc_cli_usage_error("%s", err);
	/* The job's own files, read as the user who runs this (the
	 * cli_filter runs it in the user's sbatch/srun/salloc). */
	if (mc_jobfiles_load(&a->opts, &r->files, err, sizeof(err)) < 0 ||
	    mc_jobfiles_check(&r->files, &a->opts, err, sizeof(err)) < 0)
		return mc_cli_usage_error("%s", err);
	if (a->shards && a->mps)
		return mc_cli_usage_error("check: --shards and --mps exclude "
					  "each other");
	if (a->shards_per_gpu && !a->shards)
		return mc_cli_usage_error("check: --shards-per-gpu needs "
					  "--shards");
	if (a->cores_set && a->cpus_set)
		return mc_cli_usage_error("check: --cores and --%s exclude "
					  "each other",
					  option_name(a->cpus_opt));
	return MC_CLI_ON;
}

/*
 * The policy and the node, in this order: this exact node (--topology or
 * the policy's TopologyFile), the policy's NodeRam/NodeCores, the
 * partition's nodes from slurmctld, this machine when it has GPUs.
 * MC_CLI_ON, else the exit status (a GPU-less step's answer: 0).
 */
static int describe_node(struct check_run *r)
{
	struct check_args *a = &r->a;
	int rc;

	if (mc_cli_policy(&a->common, &r->cfg, &r->p) < 0)
		return MC_EXIT_USAGE;
	if (!a->gpus)
		return not_a_gpu_step(a->common.json);
	/* --partition without slurm.conf: never this host instead. */
	if (mc_cli_partition_nodes("check", &a->common, &r->p, NULL))
		return MC_EXIT_USAGE;
	/* A misspelt --partition is never judged by the globals. */
	rc = mc_cli_partition_known("check", &a->common, &r->cfg, &r->p);
	if (rc)
		return rc;
	memset(&r->facts, 0, sizeof(r->facts));
	r->node_source = mc_cli_node_source(&a->common, &r->p);
	/* -w/-x pick among slurmctld's nodes: one node described by a
	 * topology or memcore.conf has nothing to pick from. */
	if ((a->nodelist || a->exclude) && strcmp(r->node_source, "slurmctld"))
		return mc_cli_usage_error("check: --%s picks among a "
			"partition's nodes from slurmctld; here the node comes "
			"from %s (--topology, TopologyFile= or NodeRam=)",
			a->nodelist ? "nodelist" : "exclude", r->node_source);
	if (!strcmp(r->node_source, "slurmctld")) {
		rc = mc_cli_ctld_load(&a->common, &r->cfg, &r->p, false,
				      false, &r->ctld);
		if (rc)
			return rc;
		mc_node_pick_apply(&r->ctld, &r->pick);
	} else if (strcmp(r->node_source, "policy") &&
		   mc_cli_facts(&a->common, &r->p, &r->facts) < 0) {
		return MC_EXIT_USAGE;
	}
	if (!strcmp(r->node_source, "live") && !r->facts.n_gpus &&
	    !r->p.node_gpus)
		return mc_cli_no_gpus_here("check", "it is not the node to "
					   "judge");
	mc_facts_node(&r->facts, &r->p, &r->node);
	return MC_CLI_ON;
}

/* The case, as launch builds it (mc_decision.h), from the command line,
 * the job's files and the node described. */
static void build_case(struct check_run *r)
{
	const struct check_args *a = &r->a;
	struct mc_case *c = &r->c;
	enum mc_mem_source mem_src = MC_MEM_SRC_NONE;

	c->opts = &a->opts;
	c->files = &r->files;
	c->gpus = a->gpus;
	c->nodes = a->nodes;
	c->ranks = a->tasks;
	/* The one resolver: --gpu-memory, else the node's, a MIG slice
	 * sized as a slice (--gpu-type), else GpuTypeMemory=/GpuMemory=. */
	c->gpu_memory_bytes = a->gpu_memory_set && a->gpu_memory_bytes
		? a->gpu_memory_bytes
		: mc_facts_step_gpu_memory_for(&r->facts, &r->p, NULL, 0, 0,
					       a->gpu_type, &mem_src);
	if (a->gpu_memory_set && a->gpu_memory_bytes)
		mem_src = MC_MEM_SRC_OPTION;
	c->gpu_memory_source = mc_mem_source_text(mem_src, a->gpu_type,
		measured_where(&a->common, &r->p, r->node_source,
			       r->measured_on, sizeof(r->measured_on)),
		r->mem_from, sizeof(r->mem_from));
	/* A shard or MPS step: its share of the card, shards per GPU as
	 * launch counts them (mc_shards_per_gpu): per shape from the nodes'
	 * Gres when they come from slurmctld (check_partition.c); a node
	 * described by a topology or memcore.conf has no Slurm count, so
	 * only --shards-per-gpu or ShardsPerGpu= says it. */
	c->share_kind = a->shards ? 1 : a->mps ? 2 : 0;
	c->share_count = a->shards ? a->shards : a->mps;
	c->share_per_gpu = a->shards_per_gpu;
	if (c->share_kind == 1 && !c->share_per_gpu && !r->ctld.n)
		c->share_per_gpu = mc_shards_per_gpu(&r->p,
						     r->facts.slurm_shards,
						     r->facts.slurm_gpus, NULL);
}

/* The partition's nodes from slurmctld, each shape judged
 * (check_partition.c). */
static int judge_partition(struct check_run *r)
{
	struct check_args *a = &r->a;
	struct mc_request req;
	char err[MC_ERR_MAX];
	int rc;

	/* The combination, checked once: each shape builds its own
	 * request from c (check_partition.c judge_shape). */
	if (mc_case_request(&r->p, &r->c, &r->node, &req, err,
			    sizeof(err)) < 0) {
		mc_ctld_free(&r->ctld);
		return mc_cli_usage_error("%s", err);
	}
	uint64_t gm = a->gpu_memory_set ? a->gpu_memory_bytes
		      : a->slurm_options ? 0 : a->mig_bytes;
	mc_cli_alloc_fn fn = a->slurm_options ? job_alloc : check_alloc;
	const void *args = a->slurm_options ? (const void *)&r->ja
			   : (const void *)a;

	/*
	 * No false refusal from a stale cache: the cached shapes can lag a
	 * node's Gres/RealMemory change (mc_shape_cache.h), so an answer
	 * from them that refuses is given only once a fresh load from
	 * slurmctld says the same; a let-through from them stands (the
	 * plugin judges again at launch).
	 */
	if (r->ctld.from_cache &&
	    mc_check_partition(&r->p, &r->ctld, &r->c, gm, fn, args,
			       r->user_warn, a->common.json, false, &r->notes)
	    != MC_EXIT_FITS) {
		mc_ctld_free(&r->ctld);
		rc = mc_cli_ctld_load(&a->common, &r->cfg, &r->p, false, true,
				      &r->ctld);
		if (rc)
			return rc;
		mc_node_pick_apply(&r->ctld, &r->pick);
	}
	rc = mc_check_partition(&r->p, &r->ctld, &r->c, gm, fn, args,
				r->user_warn, a->common.json, true, &r->notes);
	mc_ctld_free(&r->ctld);
	return rc;
}

/* The one node described (a topology, memcore.conf or this host):
 * judged and answered. */
static int judge_node(struct check_run *r)
{
	const struct check_args *a = &r->a;
	const struct mc_judgement *j = &r->d.j;
	const struct mc_cli_notes *notes = &r->notes;
	struct mc_cli_grant g = { .gpus_fixed = false };
	const struct mc_alloc *alloc = &g.alloc;
	const char *err = g.why;	/* the placement line, "" none */
	struct mc_request req;
	char why[MC_ERR_MAX], unsure_why[320];
	bool unsure;

	if (a->slurm_options)
		job_alloc(&r->ja, NULL, NULL, &r->node, &r->c, &g);
	else
		check_alloc(a, NULL, NULL, &r->node, &r->c, &g);
	/* Built once, with the GPUs Slurm gives on this node (the job's
	 * options). */
	if (mc_case_request(&r->p, &r->c, &r->node, &req, why,
			    sizeof(why)) < 0)
		return mc_cli_usage_error("%s", why);
	mc_decide(&r->p, &req, alloc, &r->node, r->user_warn, false, NULL,
		  NULL, &r->d);
	unsure = mc_cli_cores_unsure(&r->p, &req, alloc, &r->node, NULL, j,
				     unsure_why, sizeof(unsure_why));
	/* Never a refusal on what is not modelled: the launch judges. */
	if (r->d.launch == MC_LAUNCH_REFUSED &&
	    mc_cli_unmodelled_why(notes, "this node", unsure_why,
				  sizeof(unsure_why))) {
		unsure = true;
		r->d.launch = mc_launch_outcome(&r->p, r->user_warn, true);
		r->d.launch_line = mc_launch_line(&r->p, r->user_warn,
						  r->d.launch);
	}
	if (a->common.json) {
		json_t *o = mc_cli_verdict_json(&r->p, r->node_source, &j->v,
						&j->e);

		if (a->common.partition)
			json_object_set_new(o, "partition",
					    json_string(a->common.partition));
		if (err[0])
			json_object_set_new(o, "placement",
					    json_string(err + 2));
		if (unsure)
			json_object_set_new(o, "let_through",
					    json_string(unsure_why));
		mc_cli_notes_append(json_object_get(o, "explanation"), notes);
		mc_cli_launch_json(o, &r->p, r->user_warn, r->d.launch);
		mc_cli_json_print(o);
	} else {
		for (size_t i = 0; i < j->e.n; i++)
			puts(j->e.line[i]);
		if (err[0])
			puts(err);
		if (unsure)
			puts(unsure_why);
		for (size_t i = 0; i < notes->n; i++)
			puts(notes->line[i]);
		if (r->d.launch_line)
			puts(r->d.launch_line);
	}
	return r->d.launch == MC_LAUNCH_REFUSED ? MC_EXIT_REFUSED
						: MC_EXIT_FITS;
}

int mc_cmd_check(int argc, char **argv)
{
	static struct check_run run;
	struct check_run *r = &run;
	char err[MC_ERR_MAX];
	int rc;

	r->a.nodes = 1;
	rc = read_command_line(argc, argv, &r->a);
	if (rc != MC_CLI_ON)
		return rc;
	if (r->a.nodelist)
		mc_node_pick_option(&r->pick, "nodelist", r->a.nodelist);
	if (r->a.exclude)
		mc_node_pick_option(&r->pick, "exclude", r->a.exclude);
	if (r->a.slurm_options && (rc = take_slurm_options(r)) != MC_CLI_ON)
		return rc;
	if ((rc = check_request(r)) != MC_CLI_ON ||
	    (rc = describe_node(r)) != MC_CLI_ON)
		return rc;
	build_case(r);
	/* The whole card would be a false refusal of what launch sizes by
	 * Slurm's count: no answer rather than a wrong one. */
	if (r->c.share_kind == 1 && !r->c.share_per_gpu && !r->ctld.n &&
	    strcmp(r->node_source, "slurmctld")) {
		mc_ctld_free(&r->ctld);
		return not_judged(r->a.common.json, "memcore: --shards: the "
			"shards of one GPU are unknown for a node described by "
			"a topology or memcore.conf (Slurm's count is in its "
			"node record, not here): not judged; launch sizes the "
			"step by the node's shard count (set ShardsPerGpu= or "
			"--shards-per-gpu to judge it here)", NULL, &r->notes);
	}
	if (r->a.opts.set[MC_OPT_DATASET_IN_MEMORY] &&
	    check_dataset_in_memory(&r->a.opts, &r->p, &r->c, err,
				    sizeof(err)) < 0) {
		mc_ctld_free(&r->ctld);
		return mc_cli_usage_error("%s", err);
	}
	if (!strcmp(r->node_source, "slurmctld"))
		return judge_partition(r);
	return judge_node(r);
}
