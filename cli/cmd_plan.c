/*
 * memcore plan - which cores each GPU gets: the binding the plugin applies
 * (mc_plan.h), without Slurm.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "mc_list.h"
#include "mc_opts.h"
#include "mc_parse.h"
#include "mc_plan.h"
#include "mc_rules.h"

static void plan_usage(FILE *out)
{
	fprintf(out,
"usage: memcore plan [--gpus N] [--dataloader-workers W] [--cpu-list LIST]\n"
"                    [--topology FILE.xml] [--config FILE] [--partition P]\n"
"                    [--json]\n"
"\n"
"Print the CPUs each of the node's first N GPUs (Slurm indices 0..N-1;\n"
"default: every GPU of the node)\n"
"gets: W+1 whole cores of the GPU's NUMA node, lowest first, never shared\n"
"between GPUs, chosen inside --cpu-list (the CPUs the task may use, as a\n"
"Slurm-style list of OS CPU numbers: \"0-3,8\" is CPUs 0, 1, 2, 3 and 8,\n"
"\"4\" is CPU 4 alone; default: every CPU). A NUMA node with fewer free\n"
"cores (AMD NPS4, Intel SNC) is topped up from the nearest other NUMA\n"
"nodes (hwloc's distances, else the same package), GPU-less ones first.\n"
"This is the plan memcore.so applies to GPU tasks. W defaults to the\n"
"policy's DataloaderWorkers; W takes the plugin's forms (8+2: two loaders,\n"
"10 workers) and MEMCORE_DATALOADER_WORKERS is read as the plugin reads it\n"
"(the option wins).\n"
"\n"
"--cores LIST is the older name of --cpu-list, for a list with '-' or ','\n"
"only: a bare number (--cores 4) is refused, as it could be a count (what\n"
"memcore check --cores N means) or one CPU.\n"
"\n"
"Exit status (memcore(8) EXIT STATUS):\n"
"  0  every GPU gets its W+1 cores\n"
"  1  a GPU gets fewer (the warning says why)\n"
"  2  usage or input error\n");
}

enum { OPT_GPUS = 256, OPT_WORKERS, OPT_CORES, OPT_CPU_LIST };

static const struct option plan_options[] = {
	{ "gpus", required_argument, NULL, OPT_GPUS },
	{ "dataloader-workers", required_argument, NULL, OPT_WORKERS },
	{ "cpu-list", required_argument, NULL, OPT_CPU_LIST },
	{ "cores", required_argument, NULL, OPT_CORES },
	MC_CLI_NODE_OPTIONS,
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void print_json(const struct mc_node_facts *f, unsigned workers,
		       const char *cores, const struct mc_plan *plan)
{
	json_t *o = json_object(), *gpus = json_array();
	char list[MC_CPULIST_MAX];

	for (size_t i = 0; i < plan->n; i++) {
		const struct mc_plan_gpu *g = &plan->gpu[i];
		json_t *j = json_object(), *w = json_array();

		if (g->warning[0])
			json_array_append_new(w, json_string(g->warning));
		json_object_set_new(j, "index", json_integer(g->index));
		json_object_set_new(j, "numa_node", g->numa_os_index < 0
				    ? json_null()
				    : json_integer(g->numa_os_index));
		json_object_set_new(j, "cpus", json_string(
				    mc_plan_cpulist(g->cpus, list,
						    sizeof(list))));
		json_object_set_new(j, "cores", json_integer(g->cores));
		json_object_set_new(j, "cores_wanted",
				    json_integer(g->cores_wanted));
		/* cores - cores_local came from nearby NUMA nodes */
		json_object_set_new(j, "cores_local",
				    json_integer(g->cores_local));
		json_object_set_new(j, "warnings", w);
		json_array_append_new(gpus, j);
	}
	json_object_set_new(o, "source", json_string(f->source));
	json_object_set_new(o, "dataloader_workers", json_integer(workers));
	json_object_set_new(o, "allowed_cpus", cores ? json_string(cores)
						     : json_null());
	json_object_set_new(o, "gpus", gpus);
	mc_cli_json_print(o);
}

static void print_text(const struct mc_policy *p,
		       const struct mc_node_facts *f, unsigned workers,
		       const char *cores, int n_cpus, const struct mc_plan *plan)
{
	char list[MC_CPULIST_MAX], rule[96];

	printf("node %s: %s cores, inside ", f->source,
	       mc_cores_rule_text(p, (uint32_t)plan->n, workers, false, rule,
				  sizeof(rule)));
	if (cores)
		printf("CPU list %s (%d CPU%s)\n", cores, n_cpus,
		       n_cpus == 1 ? "" : "s");
	else
		printf("all CPUs\n");
	for (size_t i = 0; i < plan->n; i++) {
		const struct mc_plan_gpu *g = &plan->gpu[i];

		printf("  GPU %u  NUMA %d  cpus %s  (%u of %u cores",
		       g->index, g->numa_os_index,
		       g->cores ? mc_plan_cpulist(g->cpus, list, sizeof(list))
				: "none", g->cores, g->cores_wanted);
		if (g->cores > g->cores_local)
			printf(", %u from nearby NUMA nodes",
			       g->cores - g->cores_local);
		printf(")\n");
	}
	for (size_t i = 0; i < plan->n; i++)
		if (plan->gpu[i].warning[0])
			fprintf(stderr, "%s\n", plan->gpu[i].warning);
}

/* 0 when every CPU of the list is the node's, else the usage error. */
static int lacked_cpus(const struct mc_node_facts *f,
		       hwloc_const_bitmap_t allowed, const char *opt_name,
		       const char *list)
{
	hwloc_bitmap_t node = hwloc_bitmap_alloc(), lack = hwloc_bitmap_alloc();
	char a[MC_CPULIST_MAX], b[MC_CPULIST_MAX];
	int rc = 0;

	if (!node || !lack) {
		rc = mc_cli_usage_error("plan: out of memory");
	} else {
		mc_plan_node_cpus(f, node);
		hwloc_bitmap_andnot(lack, allowed, node);
		if (!hwloc_bitmap_iszero(lack))
			rc = mc_cli_usage_error("plan: --%s=%s: CPUs %s are "
				"not on %s%s (its CPUs: %s)", opt_name, list,
				mc_plan_cpulist(lack, a, sizeof(a)),
				strcmp(f->source, "live") ? "node " : "",
				strcmp(f->source, "live") ? f->source
				: "this machine",
				mc_plan_cpulist(node, b, sizeof(b)));
	}
	hwloc_bitmap_free(node);
	hwloc_bitmap_free(lack);
	return rc;
}

/* What the command line asks. */
struct plan_args {
	struct mc_cli_common c;
	struct mc_opts opts;		/* --dataloader-workers, the plugin's */
	uint32_t gpus;
	bool gpus_set;
	const char *cores;		/* the CPU list, NULL none */
	const char *opt_name;		/* the option that gave it */
};

/* --cores LIST (the older name) or --cpu-list LIST: one list, taken
 * as a list only. MC_CLI_ON, else the exit status. */
static int take_cpu_list(int opt, const char *arg, struct plan_args *a)
{
	char err[MC_ERR_MAX];
	uint32_t n;

	if (opt == OPT_CORES) {
		/* "--cores 4" reads as 4 cores to anyone who knows memcore
		 * check; a list cannot be taken for that. */
		if (!strpbrk(arg, "-,") &&
		    mc_parse_count(arg, MC_LIST_INDEX_MAX, &n, err,
				   sizeof(err)) == 0 && n > 1)
			return mc_cli_usage_error("plan: --cores=%s: %s cores, "
				"or CPU %s? memcore plan takes the CPUs the "
				"task may use as a list: --cpu-list=0-%u for "
				"the first %s CPUs, --cpu-list=%s for CPU %s "
				"alone", arg, arg, arg, n - 1, arg, arg, arg);
		if (!strpbrk(arg, "-,"))
			return mc_cli_usage_error("plan: --cores=%s: a count or "
				"a CPU? memcore plan takes the CPUs the task "
				"may use as a list: --cpu-list=%s for CPU %s "
				"alone", arg, arg, arg);
		a->opt_name = "cores";
	}
	if (a->cores && strcmp(a->cores, arg))
		return mc_cli_usage_error("plan: --%s=%s: given twice with "
					  "different values",
					  opt == OPT_CORES ? "cores"
					  : "cpu-list", arg);
	if (opt == OPT_CPU_LIST)
		a->opt_name = "cpu-list";
	a->cores = arg;
	return MC_CLI_ON;
}

/* One of plan's own options (mc_cli_option_fn). */
static int take_plan_option(void *ctx, int opt, const char *arg,
			    const char *name)
{
	struct plan_args *a = ctx;
	char err[MC_ERR_MAX];

	switch (opt) {
	case OPT_GPUS:
		if (mc_parse_count(arg, MC_MAX_GPUS, &a->gpus, err,
				   sizeof(err)) < 0)
			return mc_cli_usage_error("--gpus=%s: %s", arg, err);
		a->gpus_set = true;
		return MC_CLI_ON;
	case OPT_WORKERS:
		/* The plugin's parser: N or 8+2 (the total binds). */
		if (mc_opts_set(&a->opts, MC_OPT_WORKERS, arg, false, err,
				sizeof(err)) < 0)
			return mc_cli_usage_error("%s", err);
		return MC_CLI_ON;
	default:	/* OPT_CORES, OPT_CPU_LIST */
		return take_cpu_list(opt, arg, a);
	}
}

/* The command line into a. MC_CLI_ON, else the exit status (--help:
 * 0). */
static int read_plan_args(int argc, char **argv, struct plan_args *a)
{
	int rc = mc_cli_read_options("plan", argc, argv, plan_options,
				     plan_usage, &a->c, take_plan_option, a);

	if (rc != MC_CLI_ON)
		return rc;
	if (a->gpus_set && a->gpus == 0)
		return mc_cli_usage_error("plan: --gpus=0: 1 or more, or "
					  "leave it out for every GPU");
	return MC_CLI_ON;
}

/* The GPUs to plan: --gpus, else every GPU of the node. MC_CLI_ON, else
 * the exit status. */
static int plan_gpus(struct plan_args *a, const struct mc_node_facts *f)
{
	if (!a->gpus_set) {
		a->gpus = mc_topology_slurm_gpus(f);
		if (a->gpus == 0)
			return mc_cli_usage_error("plan: %s has no GPUs; "
						  "name a GPU node with "
						  "--topology FILE.xml",
						  strcmp(f->source, "live")
						  ? f->source
						  : "this machine");
	}
	if (a->gpus > mc_topology_slurm_gpus(f))
		return mc_cli_usage_error("plan: --gpus=%u but %s has %u GPUs",
					  a->gpus, f->source,
					  mc_topology_slurm_gpus(f));
	return MC_CLI_ON;
}

/* The CPU list as a bitmap in *allowed (the caller frees it), every one
 * of them on the node. MC_CLI_ON, else the exit status. */
static int allowed_cpus(const struct plan_args *a,
			const struct mc_node_facts *f, hwloc_bitmap_t *allowed)
{
	int rc;

	*allowed = hwloc_bitmap_alloc();
	if (!*allowed)
		return mc_cli_usage_error("plan: out of memory");
	if (mc_plan_parse_cpulist(a->cores, *allowed) < 0)
		return mc_cli_usage_error("plan: --%s=%s: not a list of CPU "
					  "numbers such as 0-3,8", a->opt_name,
					  a->cores);
	/* CPUs the node lacks would plan nothing and read as the task's
	 * cores being elsewhere: say which they are. */
	rc = lacked_cpus(f, *allowed, a->opt_name, a->cores);
	return rc ? rc : MC_CLI_ON;
}

int mc_cmd_plan(int argc, char **argv)
{
	struct plan_args a = { .opt_name = "cpu-list" };
	static struct mc_config cfg;	/* large: keep it off the stack */
	static struct mc_node_facts facts;
	static struct mc_plan plan;
	struct mc_policy p;
	hwloc_bitmap_t allowed = NULL;
	unsigned idx[MC_MAX_GPUS];
	uint32_t workers;
	char err[MC_ERR_MAX];
	int rc;

	rc = read_plan_args(argc, argv, &a);
	if (rc != MC_CLI_ON)
		return rc;
	if (mc_cli_policy(&a.c, &cfg, &p) < 0 ||
	    mc_cli_facts(&a.c, &p, &facts) < 0)
		return MC_EXIT_USAGE;
	/* MEMCORE_DATALOADER_WORKERS as the plugin reads it (the command
	 * line wins), so the plan is the binding srun would get here. */
	if (mc_opts_set_env(&a.opts, MC_OPT_WORKERS,
			    getenv(mc_opt_env(MC_OPT_WORKERS)), err,
			    sizeof(err)) < 0)
		return mc_cli_usage_error("%s", err);
	workers = mc_opts_workers(&a.opts, &p);
	if ((rc = plan_gpus(&a, &facts)) != MC_CLI_ON)
		return rc;
	if (a.cores && (rc = allowed_cpus(&a, &facts, &allowed)) != MC_CLI_ON) {
		hwloc_bitmap_free(allowed);
		return rc;
	}
	for (uint32_t i = 0; i < a.gpus; i++)
		idx[i] = i;
	if (mc_plan_compute(&facts, mc_cores_per_gpu_at(workers,
			    p.workers_per_core, p.min_cores_per_gpu), allowed,
			    idx, a.gpus, &plan, err, sizeof(err)) < 0) {
		rc = mc_cli_usage_error("plan: %s", err);
		goto out;
	}
	if (a.c.json)
		print_json(&facts, workers, a.cores, &plan);
	else
		print_text(&p, &facts, workers, a.cores,
			   allowed ? hwloc_bitmap_weight(allowed) : 0, &plan);
	rc = MC_EXIT_FITS;
	for (size_t i = 0; i < plan.n; i++)
		if (plan.gpu[i].cores < plan.gpu[i].cores_wanted)
			rc = MC_EXIT_REFUSED;
out:
	mc_plan_free(&plan);
	hwloc_bitmap_free(allowed);
	return rc;
}
