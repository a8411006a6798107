/*
 * memcore check - would a step with these GPUs and this allocation fit?
 * The same verdict and explanation as the plugin gives at step launch.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "mc_facts.h"
#include "mc_opts.h"
#include "mc_parse.h"
#include "mc_rules.h"

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
"  --dataloader-workers W    DataLoader workers per GPU\n"
"                            (default: the policy's DataloaderWorkers)\n"
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
"  --partition P             use the policy of partition P\n"
"  --config FILE             policy file (default %s if present)\n"
"  --topology FILE.xml       the node's hwloc XML (default: TopologyFile,\n"
"                            else this machine)\n"
"  --json                    one JSON object on stdout (with the policy's\n"
"                            mode, allow_user_warn, and node_source: policy,\n"
"                            topology-file or live)\n"
"  -h, --help                this text\n", MC_DEFAULT_CONFIG);
}

enum {
	OPT_GPUS = 256, OPT_MEM, OPT_CORES, OPT_JOB_CORES,
	OPT_NODES, OPT_GPU_MEMORY,
	OPT_MEM_PER_GPU, OPT_MEM_PER_CPU, OPT_CPUS, OPT_GPU_TYPE,
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
	uint32_t gpus, cores, cpus, job_cores, nodes;
	uint64_t mem_bytes, gpu_memory_bytes;
	bool gpus_set, mem_set, cores_set, cpus_set, gpu_memory_set;
	uint64_t mig_bytes;		/* from --gpu-type's MIG profile */
	const char *gpu_type;
	/* which memory option: OPT_MEM, OPT_MEM_PER_GPU, OPT_MEM_PER_CPU */
	int mem_opt;
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
		rc = mc_parse_count(v, 1u << 20, &a->cpus, err, sizeof(err));
		a->cpus_set = true;
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
		rc = mc_parse_count(v, 1u << 20, &a->nodes, err, sizeof(err));
		if (!rc && !a->nodes) {
			snprintf(err, sizeof(err), "must be at least 1");
			rc = -1;
		}
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
	case OPT_GPU_MEMORY:
		rc = mc_parse_size(v, 1ULL << 20, &a->gpu_memory_bytes, err,
				   sizeof(err));
		a->gpu_memory_set = true;
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
	       x->cores == y->cores && x->job_cores == y->job_cores &&
	       x->nodes == y->nodes &&
	       x->mem_bytes == y->mem_bytes &&
	       x->gpu_memory_bytes == y->gpu_memory_bytes;
}

/* a * b, saturated at UINT64_MAX. */
static uint64_t mc_mul_sat(uint64_t a, uint64_t b)
{
	return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

static void print_json(const struct mc_policy *p, const char *node_source,
		       uint32_t node_gpus, const struct mc_verdict *v,
		       const struct mc_explanation *e)
{
	json_t *o = json_object(), *lines = json_array();

	for (size_t i = 0; i < e->n; i++)
		json_array_append_new(lines, json_string(e->line[i]));
	json_object_set_new(o, "fits", json_boolean(v->fits));
	json_object_set_new(o, "gpus", json_integer(v->req.gpus));
	json_object_set_new(o, "dataloader_workers",
			    json_integer(v->req.dataloader_workers));
	json_object_set_new(o, "gpu_memory_bytes",
			    v->gpu_memory_unknown ? json_null()
			    : json_integer((json_int_t)v->req.gpu_memory_bytes));
	json_object_set_new(o, "ram_needed_bytes",
			    json_integer((json_int_t)v->ram_needed_bytes));
	json_object_set_new(o, "ram_floor_bytes",
			    json_integer((json_int_t)v->ram_floor_bytes));
	json_object_set_new(o, "ram_workers_bytes",
			    json_integer((json_int_t)v->ram_workers_bytes));
	json_object_set_new(o, "ram_tasks_bytes",
			    json_integer((json_int_t)v->ram_tasks_bytes));
	json_object_set_new(o, "ram_zero_bytes",
			    json_integer((json_int_t)v->ram_zero_bytes));
	json_object_set_new(o, "ram_allocated_bytes",
			    json_integer((json_int_t)v->ram_allocated_bytes));
	json_object_set_new(o, "node_ram_bytes",
			    json_integer((json_int_t)v->node.ram_bytes));
	json_object_set_new(o, "cores_needed", json_integer(v->cores_needed));
	json_object_set_new(o, "cores_allocated",
			    json_integer(v->cores_allocated));
	json_object_set_new(o, "node_cores_needed",
			    json_integer(v->node_cores_needed));
	json_object_set_new(o, "node_cores", json_integer(v->node_cores));
	json_object_set_new(o, "node_gpus", json_integer(node_gpus));
	json_object_set_new(o, "max_dataloader_workers",
			    v->max_dataloader_workers < 0 ? json_null()
			    : json_integer(v->max_dataloader_workers));
	json_object_set_new(o, "fix_mem_bytes",
			    v->fix_mem_bytes ? json_integer((json_int_t)
						v->fix_mem_bytes)
					     : json_null());
	json_object_set_new(o, "fix_cpus_per_gpu",
			    v->fix_cpus_per_gpu ? json_integer(
						v->fix_cpus_per_gpu)
						: json_null());
	json_object_set_new(o, "mode", json_string(mc_mode_words[p->mode]));
	json_object_set_new(o, "allow_user_warn",
			    json_boolean(p->allow_user_warn));
	json_object_set_new(o, "node_source", json_string(node_source));
	json_object_set_new(o, "explanation", lines);
	json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', stdout);
	json_decref(o);
}

int mc_cmd_check(int argc, char **argv)
{
	struct check_args a = { .nodes = 1 };
	static struct mc_config cfg;	/* large: keep it off the stack */
	static struct mc_node_facts facts;
	struct mc_policy p;
	struct mc_request req = { 0 };
	struct mc_node node;
	struct mc_alloc alloc = { 0 };
	struct mc_verdict v;
	struct mc_explanation e;
	char err[MC_ERR_MAX], mem_source[96];
	const char *node_source = "policy";
	int opt, idx;
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
	if (a.cores_set && a.cpus_set)
		return mc_cli_usage_error("check: --cores and --cpus exclude "
					  "each other");

	if (mc_cli_policy(&a.common, &cfg, &p) < 0)
		return MC_EXIT_USAGE;
	/* The node: its topology, unless the policy describes it
	 * (NodeRam and NodeCores on login hosts) and no file was named. */
	memset(&facts, 0, sizeof(facts));
	if (a.common.topology || p.topology_file[0] || !p.node_ram_bytes ||
	    !p.node_cores) {
		if (mc_cli_facts(&a.common, &p, &facts) < 0)
			return MC_EXIT_USAGE;
		node_source = a.common.topology || p.topology_file[0]
			      ? "topology-file" : "live";
	}
	mc_facts_node(&facts, &p, &node);

	req.gpus = a.gpus;
	req.nodes = a.nodes;
	req.unified_memory = node.unified_memory;
	mc_opts_request(&a.opts, &p, &req);
	/* A MIG slice is sized as a slice, not as its card. */
	req.gpu_memory_bytes = a.gpu_memory_set ? a.gpu_memory_bytes
		: a.mig_bytes && !facts.n_mig ? a.mig_bytes
		: mc_facts_step_gpu_memory(&facts, &p, NULL, 0);
	if (mc_request_check(&p, &req, err, sizeof(err)) < 0)
		return mc_cli_usage_error("%s", err);

	/* CPUs as Slurm counts them (threads) become whole cores. */
	if (a.cpus_set) {
		uint32_t tpc = node.threads_per_core ? node.threads_per_core
						     : 1;

		a.cores = (a.cpus + tpc - 1) / tpc;
		a.cores_set = true;
	}
	alloc.cores = a.cores_set ? a.cores : node.cores;
	alloc.job_cores = a.job_cores;
	if (a.mem_set && a.mem_opt == OPT_MEM_PER_GPU) {
		a.mem_bytes = mc_mul_sat(a.mem_bytes, a.gpus);
	} else if (a.mem_set && a.mem_opt == OPT_MEM_PER_CPU) {
		uint32_t tpc = node.threads_per_core ? node.threads_per_core
						     : 1;

		a.mem_bytes = mc_mul_sat(a.mem_bytes,
					 (uint64_t)alloc.cores * tpc);
	}
	alloc.mem_bytes = a.mem_set && a.mem_bytes ? a.mem_bytes
						   : node.ram_bytes;
	if (a.mem_set) {
		snprintf(mem_source, sizeof(mem_source), "--%s=%s",
			 a.mem_opt == OPT_MEM_PER_GPU ? "mem-per-gpu"
			 : a.mem_opt == OPT_MEM_PER_CPU ? "mem-per-cpu"
			 : "mem", a.mem_arg);
		alloc.mem_source = mem_source;
	} else {
		alloc.mem_source = "the whole node";
	}

	mc_verdict_compute(&p, &req, &node, &alloc, &v);
	mc_verdict_explain(&p, &v, NULL, NULL, &e);
	if (a.common.json) {
		print_json(&p, node_source, node.gpus, &v, &e);
	} else {
		for (size_t i = 0; i < e.n; i++)
			puts(e.line[i]);
	}
	return v.fits ? MC_EXIT_FITS : MC_EXIT_REFUSED;
}
