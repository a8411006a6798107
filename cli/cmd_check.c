/*
 * memcore check - would a step with these GPUs and this allocation fit?
 * The same verdict and explanation as the plugin gives at step launch.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "mc_util.h"
#include "mc_facts.h"
#include "mc_judge.h"
#include "mc_opts.h"
#include "mc_parse.h"
#include "mc_rules.h"
#include "mc_slurmctld.h"

static void check_usage(FILE *out)
{
	fprintf(out,
"usage: memcore check --gpus N [options]\n"
"\n"
"Would a step with N GPUs on one node fit its allocation and the node?\n"
"Exit 0: fits; 1: refused (the explanation says what to change);\n"
"2: usage or input error.\n"
"\n"
"  --gpus N                  GPUs of the step on the node (required)\n"
"  --dataloader-workers W    DataLoader workers per GPU; several loaders per\n"
"                            rank as a sum, 8+2 (train + validation) counting\n"
"                            as 10 (default: the policy's DataloaderWorkers)\n"
"  --mem SIZE                memory of the step on the node, as --mem takes it\n"
"                            (MiB without suffix; K/M/G/T; default: the node)\n"
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
"  --model-params SIZE       model parameters (7B, 70B, 6.7e9), for DeepSpeed\n"
"                            ZeRO's host RAM\n"
"  --zero-stage S            DeepSpeed ZeRO stage 0..3\n"
"  --offload none|optimizer|all  DeepSpeed ZeRO offload\n"
"  --largest-layer-params SIZE  parameters of the largest layer (ZeRO-3\n"
"                            without offload, with zero.Init; default: the\n"
"                            whole model)\n"
"  --zero-init yes|no        model built under deepspeed.zero.Init (default:\n"
"                            the policy's ZeroInit)\n"
"  --partition P             partition P: its policy, and its nodes from\n"
"                            slurmctld (default: slurm.conf's default one)\n"
"  --config FILE             policy file (default %s if present)\n"
"  --topology FILE.xml       this exact node's hwloc XML\n"
"  --json                    one JSON object on stdout (with the policy's\n"
"                            mode, allow_user_warn, fix_options and\n"
"                            node_source: topology-file, policy, slurmctld\n"
"                            or live)\n"
"  -h, --help                this text\n"
"\n"
"The node, in this order: --topology (or TopologyFile=), NodeRam= and\n"
"NodeCores= in memcore.conf, the partition's nodes from slurmctld when\n"
"slurm.conf is readable (SLURM_CONF, else /etc/slurm/slurm.conf; exit 3\n"
"when slurmctld does not answer), this machine when it has GPUs.\n",
		MC_DEFAULT_CONFIG);
}

enum {
	OPT_GPUS = 256, OPT_MEM, OPT_CORES, OPT_JOB_CORES,
	OPT_NODES, OPT_GPU_MEMORY,
	OPT_MEM_PER_GPU, OPT_MEM_PER_CPU, OPT_CPUS, OPT_CPUS_PER_GPU,
	OPT_CPUS_PER_TASK, OPT_TASKS, OPT_GPU_TYPE,
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
	{ "model-params", required_argument, NULL, OPT_USER + MC_OPT_PARAMS },
	{ "zero-stage", required_argument, NULL, OPT_USER + MC_OPT_STAGE },
	{ "offload", required_argument, NULL, OPT_USER + MC_OPT_OFFLOAD },
	{ "largest-layer-params", required_argument, NULL,
	  OPT_USER + MC_OPT_LARGEST_LAYER },
	{ "zero-init", required_argument, NULL, OPT_USER + MC_OPT_ZERO_INIT },
	MC_CLI_NODE_OPTIONS,
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* What the command line said; *_set tell given from default. */
struct check_args {
	struct mc_cli_common common;
	struct mc_opts opts;		/* user options, as the plugin's */
	uint32_t gpus, cores, cpus, job_cores, nodes, tasks;
	uint64_t mem_bytes, gpu_memory_bytes;
	bool gpus_set, mem_set, cores_set, cpus_set, gpu_memory_set;
	uint64_t mig_bytes;		/* from --gpu-type's MIG profile */
	const char *gpu_type;
	/* which memory option: OPT_MEM, OPT_MEM_PER_GPU, OPT_MEM_PER_CPU */
	int mem_opt;
	/* which CPU option: OPT_CPUS, OPT_CPUS_PER_GPU, OPT_CPUS_PER_TASK */
	int cpus_opt;
	const char *mem_arg;
};

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
	case OPT_NODES:
	case OPT_TASKS: {
		uint32_t *n = opt == OPT_NODES ? &a->nodes : &a->tasks;

		rc = mc_parse_count(v, 1u << 20, n, err, sizeof(err));
		if (!rc && !*n) {
			snprintf(err, sizeof(err), "must be at least 1");
			rc = -1;
		}
		break;
	}
	case OPT_GPU_MEMORY:
		rc = mc_parse_size(v, 1ULL << 20, &a->gpu_memory_bytes, err,
				   sizeof(err));
		a->gpu_memory_set = true;
		break;
	case OPT_GPU_TYPE:
		if (a->gpu_type && strcmp(a->gpu_type, v)) {
			snprintf(err, sizeof(err), "given twice with "
				 "different values");
			rc = -1;
			break;
		}
		a->gpu_type = v;
		if (mc_mig_profile(v, &a->mig_bytes, NULL, 0) < 0)
			a->mig_bytes = 0;	/* not MIG: nothing to size */
		break;
	}
	if (rc < 0)
		mc_cli_usage_error("--%s=%s: %s", name, v, err);
	return rc;
}

static bool same_values(const struct check_args *x,
			const struct check_args *y)
{
	return x->gpus == y->gpus &&
	       x->cpus == y->cpus && x->tasks == y->tasks &&
	       x->cores == y->cores && x->job_cores == y->job_cores &&
	       x->nodes == y->nodes &&
	       x->mem_bytes == y->mem_bytes &&
	       x->gpu_memory_bytes == y->gpu_memory_bytes;
}

/*
 * What the command line asks of a node like `node`: cores from --cpus,
 * --cpus-per-gpu or --cpus-per-task (threads, counted in whole cores on
 * SMT nodes as Slurm does) or --cores, else the whole node; memory from
 * --mem, --mem-per-gpu or --mem-per-cpu, else the whole node.
 */
static void check_alloc(const void *args, const struct mc_node *node,
			struct mc_alloc *alloc, char *mem_source,
			size_t mem_source_len)
{
	const struct check_args *a = args;
	uint32_t tpc = node->threads_per_core ? node->threads_per_core : 1;
	uint64_t cpus = 0, mem = a->mem_bytes;

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
	if (a->mem_set) {
		snprintf(mem_source, mem_source_len, "--%s=%s",
			 a->mem_opt == OPT_MEM_PER_GPU ? "mem-per-gpu"
			 : a->mem_opt == OPT_MEM_PER_CPU ? "mem-per-cpu"
			 : "mem", a->mem_arg);
		alloc->mem_source = mem_source;
	} else {
		alloc->mem_source = "the whole node";
	}
}

/* The answer for a GPU-less step: one line, exit 0. */
static int not_a_gpu_step(bool json)
{
	const char *line = "memcore: --gpus=0: not a GPU step; memcore has "
			   "nothing to check";

	if (json) {
		json_t *o = json_object(), *lines = json_array();

		json_array_append_new(lines, json_string(line));
		json_object_set_new(o, "fits", json_true());
		json_object_set_new(o, "gpus", json_integer(0));
		json_object_set_new(o, "fix_options", json_array());
		json_object_set_new(o, "explanation", lines);
		mc_cli_json_print(o);
	} else {
		puts(line);
	}
	return MC_EXIT_FITS;
}

int mc_cmd_check(int argc, char **argv)
{
	struct check_args a = { .nodes = 1 };
	static struct mc_config cfg;	/* large: keep it off the stack */
	static struct mc_node_facts facts;
	struct mc_ctld_nodes ctld = { .n = 0 };
	struct mc_policy p;
	struct mc_request req = { 0 };
	struct mc_node node;
	struct mc_alloc alloc;
	struct mc_judgement j;
	char err[MC_ERR_MAX], mem_source[96];
	const char *node_source;
	int opt, idx, rc;
	unsigned seen = 0;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":h", check_options, &idx))
	       != -1) {
		switch (opt) {
		case 'h':
			check_usage(stdout);
			return 0;
		case ':':
		case '?':
			return mc_cli_option_error("check", opt, argv);
		default: {
			if (mc_cli_node_option(opt, optarg, &a.common))
				break;
			if (opt >= OPT_USER && opt < OPT_USER + MC_OPT_COUNT) {
				/* Same parser, same messages as the plugin;
				 * it refuses a second, different value. */
				if (mc_opts_set(&a.opts, (enum mc_opt_id)
						(opt - OPT_USER), optarg, false,
						err, sizeof(err)) < 0)
					return mc_cli_usage_error("%s", err);
				break;
			}
			/* A value given twice must be the same, as the
			 * plugin's options say (no silent "last one wins"). */
			struct check_args prev = a;
			unsigned bit = 1u << (opt - OPT_GPUS);

			if (parse_value(opt, check_options[idx].name, optarg,
					&a) < 0)
				return MC_EXIT_USAGE;
			if ((seen & bit) && !same_values(&prev, &a))
				return mc_cli_usage_error("--%s=%s: given "
					"twice with different values",
					check_options[idx].name, optarg);
			seen |= bit;
		}
		}
	}
	if (mc_cli_no_arguments("check", argc, argv))
		return MC_EXIT_USAGE;
	if (!a.gpus_set)
		return mc_cli_usage_error("check: --gpus is required");
	/* The plugin's refusal in srun/sbatch/salloc, word for word. */
	if (mc_opts_check(&a.opts, err, sizeof(err)) < 0)
		return mc_cli_usage_error("%s", err);
	if (a.cores_set && a.cpus_set)
		return mc_cli_usage_error("check: --cores and --%s exclude "
					  "each other",
					  a.cpus_opt == OPT_CPUS ? "cpus"
					  : a.cpus_opt == OPT_CPUS_PER_GPU
					  ? "cpus-per-gpu" : "cpus-per-task");

	if (mc_cli_policy(&a.common, &cfg, &p) < 0)
		return MC_EXIT_USAGE;
	if (!a.gpus)
		return not_a_gpu_step(a.common.json);
	/*
	 * The node, in this order: this exact node (--topology or the
	 * policy's TopologyFile), the policy's NodeRam/NodeCores, the
	 * partition's nodes from slurmctld, this machine when it has GPUs.
	 */
	memset(&facts, 0, sizeof(facts));
	node_source = mc_cli_node_source(&a.common, &p);
	if (!strcmp(node_source, "slurmctld")) {
		rc = mc_cli_ctld_load(&a.common, &cfg, &p, false, &ctld);
		if (rc)
			return rc;
	} else if (strcmp(node_source, "policy") &&
		   mc_cli_facts(&a.common, &p, &facts) < 0) {
		return MC_EXIT_USAGE;
	}
	if (!strcmp(node_source, "live") && !facts.n_gpus && !p.node_gpus)
		return mc_cli_usage_error("check: this host has no GPUs, so it "
			"is not the node to judge; describe the node with "
			"--topology FILE.xml (its hwloc XML), --partition P "
			"with a readable slurm.conf (its nodes from "
			"slurmctld), or NodeRam=, NodeCores= and NodeGpus= "
			"in memcore.conf");
	mc_facts_node(&facts, &p, &node);

	req.gpus = a.gpus;
	req.nodes = a.nodes;
	req.unified_memory = node.unified_memory;
	mc_opts_request(&a.opts, &p, &req);
	/* The one resolver: --gpu-memory, else the node's, a MIG slice
	 * sized as a slice (--gpu-type), else GpuTypeMemory=/GpuMemory=. */
	req.gpu_memory_bytes = a.gpu_memory_set && a.gpu_memory_bytes
		? a.gpu_memory_bytes
		: mc_facts_step_gpu_memory_for(&facts, &p, NULL, 0, 0,
					       a.gpu_type);
	if (mc_request_check(&p, &req, err, sizeof(err)) < 0) {
		mc_ctld_free(&ctld);
		return mc_cli_usage_error("%s", err);
	}

	if (ctld.n) {
		rc = mc_check_partition(&p, &ctld, &req, a.gpu_memory_set ?
					a.gpu_memory_bytes : a.mig_bytes,
					check_alloc,
					&a, a.common.json);
		mc_ctld_free(&ctld);
		return rc;
	}
	check_alloc(&a, &node, &alloc, mem_source, sizeof(mem_source));
	mc_judge(&p, &req, &alloc, &node, NULL, NULL, &j);
	if (a.common.json) {
		mc_cli_json_print(mc_cli_verdict_json(&p, node_source, &j.v,
						      &j.e));
	} else {
		for (size_t i = 0; i < j.e.n; i++)
			puts(j.e.line[i]);
	}
	return j.v.fits ? MC_EXIT_FITS : MC_EXIT_REFUSED;
}
