/*
 * memcore audit - does a node meet the GPU sizing rule?
 * Host RAM at least the GPUs' memory (times HostRamPerGpuRam) and
 * G * (w + 1) + ReservedCores cores at the policy's DataloaderWorkers.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "cli.h"
#include "mc_cache.h"
#include "mc_facts.h"
#include "mc_judge.h"
#include "mc_parse.h"
#include "mc_shapes.h"

static void audit_usage(FILE *out)
{
	fprintf(out,
"usage: memcore audit [--topology FILE.xml | --cache FILE] [--config FILE]\n"
"                     [--partition P | --all] [--json] [--write-cache FILE]\n"
"\n"
"Report a node's GPUs (in Slurm index order, with NUMA node and memory),\n"
"host RAM and cores, and whether they meet the sizing rule.\n"
"\n"
"With --partition P (and no --topology, --cache or TopologyFile=) or --all,\n"
"every GPU node of the partition (of the cluster) as slurmctld knows it,\n"
"one line per node shape. GPU memory from GpuTypeMemory= or GpuMemory=.\n"
"slurm.conf (SLURM_CONF, else /etc/slurm/slurm.conf) must be readable:\n"
"without it --partition is an error naming the path, never an audit of\n"
"this host.\n"
"\n"
"  --all               every GPU node slurmctld knows (the global policy)\n"
"  --cache FILE        the node facts from the cache slurmd wrote (checked:\n"
"                      this memcore, this host, intact); exit 2 when unusable\n"
"  --write-cache FILE  write the facts read to a cache file, as slurmd does\n"
"\n"
"Without --topology and --cache, GPU memory the topology lacks is read from\n"
"NVML or ROCm SMI when present, as slurmd does for the cache.\n"
"\n"
"Exit status (memcore(8) EXIT STATUS):\n"
"  0  the node (every GPU node shape) meets the rule and its full-node step\n"
"     fits\n"
"  1  it does not (or its GPU memory is unknown), or ShardsPerGpu= differs\n"
"     from Slurm's shards per GPU\n"
"  2  usage or input error (an unusable --cache file, an unknown partition,\n"
"     --partition or --all without a readable slurm.conf, a host with no\n"
"     GPUs and no node described)\n"
"  3  slurmctld could not be reached (--partition, --all)\n");
}

enum { OPT_CACHE = 256, OPT_WRITE_CACHE, OPT_ALL };

static const struct option audit_options[] = {
	MC_CLI_NODE_OPTIONS,
	{ "cache", required_argument, NULL, OPT_CACHE },
	{ "write-cache", required_argument, NULL, OPT_WRITE_CACHE },
	{ "all", no_argument, NULL, OPT_ALL },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* The full-node step's verdict, for --json. */
static json_t *step_json(const struct mc_node_judgement *nj)
{
	json_t *o = json_object(), *lines = json_array();
	const struct mc_verdict *v = &nj->step.v;
	char why[96];

	for (size_t i = 0; i < nj->step.e.n; i++)
		json_array_append_new(lines, json_string(nj->step.e.line[i]));
	json_object_set_new(o, "fits", json_boolean(v->fits));
	json_object_set_new(o, "gpus", json_integer(nj->req.gpus));
	json_object_set_new(o, "dataloader_workers",
			    json_integer(nj->req.dataloader_workers));
	json_object_set_new(o, "ram_needed_bytes",
			    json_integer((json_int_t)v->ram_needed_bytes));
	json_object_set_new(o, "cores_needed", json_integer(v->cores_needed));
	json_object_set_new(o, "reason", json_string(
			    mc_verdict_reason(v, why, sizeof(why))));
	json_object_set_new(o, "explanation", lines);
	return o;
}

/*
 * The line of the full-node step (all the node's GPUs at the policy's
 * DataloaderWorkers, the whole node):
 *   full-node step: ok - 8 GPUs x 2 workers need 190.04 GiB of 376.95 GiB
 *   and 24 of 48 cores
 * and when it fails, the judgement's explanation under it.
 */
static void print_step(const struct mc_node_judgement *nj)
{
	const struct mc_verdict *v = &nj->step.v;
	char b1[32], b2[32], why[96];

	if (!nj->req.gpus)
		return;
	printf("full-node step: %s - %u GPUs x %u workers need %s of %s and "
	       "%u of %u cores%s%s\n", v->fits ? "ok" : "FAILS", nj->req.gpus,
	       nj->req.dataloader_workers,
	       mc_fmt_bytes(v->ram_needed_bytes, b1, sizeof(b1)),
	       mc_fmt_bytes(v->node.ram_bytes, b2, sizeof(b2)),
	       v->cores_needed, v->node_cores, v->fits ? "" : ": ",
	       v->fits ? "" : mc_verdict_reason(v, why, sizeof(why)));
	if (!v->fits)
		for (size_t i = 0; i < nj->step.e.n; i++)
			printf("  %s\n", nj->step.e.line[i]);
}

/* Node* keys describe the node instead of the facts read. */
/*
 * The shard finding (mc_shards_disagree): ShardsPerGpu= against Slurm's
 * own count for a node of `shards` gres/shard and `gpus` GPUs, into buf
 * ("" none). Returns whether there is one.
 */
static bool shards_finding(const struct mc_policy *p, uint32_t shards,
			   uint32_t gpus, char *buf, size_t len)
{
	uint32_t per;

	buf[0] = '\0';
	if (!mc_shards_disagree(p, shards, gpus, &per))
		return false;
	snprintf(buf, len, "shards FAIL: ShardsPerGpu=%u in memcore.conf, but "
		 "Slurm configures %u shards per GPU (Gres shard:%u over %u "
		 "GPUs): shard steps are sized by ShardsPerGpu=; remove it to "
		 "follow Slurm", p->shards_per_gpu, per, shards, gpus);
	return true;
}

static bool described(const struct mc_policy *p)
{
	return p->node_ram_bytes || p->node_cores || p->node_gpus;
}

static void print_json(const struct mc_node_facts *f,
		       const struct mc_policy *p, const struct mc_node *node,
		       const struct mc_node_judgement *nj, const char *shards)
{
	const struct mc_audit *a = &nj->rule;
	json_t *o = json_object(), *gpus = json_array(), *numa = json_array();

	for (uint32_t i = 0; i < f->n_numa; i++) {
		json_t *n = json_object();

		json_object_set_new(n, "os_index",
				    json_integer(f->numa[i].os_index));
		json_object_set_new(n, "memory_bytes", json_integer(
				    (json_int_t)f->numa[i].memory_bytes));
		json_object_set_new(n, "cores", json_integer(f->numa[i].cores));
		json_object_set_new(n, "cpus", json_string(f->numa[i].cpus));
		json_array_append_new(numa, n);
	}
	for (uint32_t i = 0; i < f->n_gpus; i++) {
		const struct mc_gpu *g = &f->gpus[i];
		enum mc_mem_source src;
		uint64_t m = mc_facts_gpu_memory(f, p, i, &src);
		json_t *j = json_object();

		json_object_set_new(j, "index", json_integer(g->index));
		json_object_set_new(j, "pci_bus_id",
				    json_string(g->pci_bus_id));
		json_object_set_new(j, "numa_node", g->numa_os_index < 0
				    ? json_null()
				    : json_integer(g->numa_os_index));
		json_object_set_new(j, "memory_bytes", m ? json_integer(
				    (json_int_t)m) : json_null());
		json_object_set_new(j, "memory_source",
				    json_string(mc_mem_source_name(src)));
		json_object_set_new(j, "model", json_string(g->model));
		json_object_set_new(j, "apu", json_boolean(g->apu));
		json_array_append_new(gpus, j);
	}
	json_object_set_new(o, "source", json_string(f->source));
	/* The node audited: the facts, or memcore.conf's Node* keys. */
	json_object_set_new(o, "node_keys", json_boolean(described(p)));
	json_object_set_new(o, "host_ram_bytes",
			    json_integer((json_int_t)node->ram_bytes));
	/* hwloc's NUMA memory; host_ram_bytes is the kernel's on the live
	 * machine (slurmd's RealMemory), hwloc's from XML. */
	json_object_set_new(o, "hwloc_ram_bytes", f->hwloc_ram_bytes
			    ? json_integer((json_int_t)f->hwloc_ram_bytes)
			    : json_null());
	json_object_set_new(o, "ram_disagrees",
			    json_boolean(mc_topology_ram_disagrees(f)));
	json_object_set_new(o, "cores", json_integer(node->cores));
	json_object_set_new(o, "pus", json_integer(p->node_cores
			    ? node->cores * node->threads_per_core : f->pus));
	json_object_set_new(o, "node_gpus", json_integer(node->gpus));
	json_object_set_new(o, "numa_nodes", json_integer(f->n_numa));
	json_object_set_new(o, "numa", numa);
	json_object_set_new(o, "gpus", gpus);
	{
		/* NVIDIA MIG slices, Slurm's GPUs when present (NVML). */
		json_t *mig = json_array();

		for (uint32_t i = 0; i < f->n_mig && i < MC_MAX_MIG; i++) {
			json_t *j = json_object();

			json_object_set_new(j, "index", json_integer(i));
			json_object_set_new(j, "parent",
					    json_integer(f->mig[i].parent));
			json_object_set_new(j, "numa_node", json_integer(
				mc_topology_gpu_numa(f, i)));
			json_object_set_new(j, "memory_bytes", json_integer(
				(json_int_t)f->mig[i].memory_bytes));
			json_object_set_new(j, "profile",
					    json_string(f->mig[i].profile));
			json_array_append_new(mig, j);
		}
		json_object_set_new(o, "mig", mig);
	}
	json_object_set_new(o, "gpu_memory_total_bytes", a->gpu_memory_known
			    ? json_integer((json_int_t)
					   a->gpu_memory_total_bytes)
			    : json_null());
	json_object_set_new(o, "dataloader_workers",
			    json_integer(a->workers));
	json_object_set_new(o, "ram_needed_bytes", a->gpu_memory_known
			    ? json_integer((json_int_t)a->ram_needed_bytes)
			    : json_null());
	json_object_set_new(o, "cores_needed", json_integer(a->cores_needed));
	json_object_set_new(o, "unified_memory",
			    json_boolean(a->unified_memory));
	json_object_set_new(o, "ram_rule_ok", json_boolean(a->ram_rule_ok));
	json_object_set_new(o, "cores_rule_ok",
			    json_boolean(a->cores_rule_ok));
	json_object_set_new(o, "full_node_step", nj->req.gpus ? step_json(nj)
			    : json_null());
	json_object_set_new(o, "shards_finding", shards ? json_string(shards)
			    : json_null());
	json_object_set_new(o, "ok", json_boolean(nj->ok && !shards));
	mc_cli_json_print(o);
}

static void print_rules(const struct mc_policy *p, const struct mc_node *node,
			const struct mc_node_judgement *nj, char *b1, char *b2,
			char *b3);

static void print_text(const struct mc_node_facts *f,
		       const struct mc_policy *p, const struct mc_node *node,
		       const struct mc_node_judgement *nj)
{
	char b1[32], b2[32], b3[32];

	if (described(p)) {
		/* The node memcore.conf describes, not the machine this
		 * runs on: its figures, and none of this machine's GPUs. */
		char keys[48] = "";
		const char *sep = "";

		if (p->node_ram_bytes) {
			strcat(keys, "NodeRam=");
			sep = ", ";
		}
		if (p->node_cores) {
			strcat(keys, sep);
			strcat(keys, "NodeCores=");
			sep = ", ";
		}
		if (p->node_gpus) {
			strcat(keys, sep);
			strcat(keys, "NodeGpus=");
		}
		printf("node described by memcore.conf (%s): %s host RAM, %u "
		       "cores, %u GPUs\n", keys,
		       mc_fmt_bytes(node->ram_bytes, b1, sizeof(b1)),
		       node->cores, node->gpus);
		print_rules(p, node, nj, b1, b2, b3);
		return;
	}
	printf("node %s: %s host RAM, %u cores (%u CPUs), %u NUMA nodes, "
	       "%u GPUs\n", f->source, mc_fmt_bytes(f->host_ram_bytes, b1,
	       sizeof(b1)), f->cores, f->pus, f->n_numa, f->n_gpus);
	if (mc_topology_ram_disagrees(f))
		printf("note: host RAM %s is the kernel's (MemTotal, what "
		       "slurmd's RealMemory counts); hwloc's NUMA nodes hold "
		       "%s\n", mc_fmt_bytes(f->host_ram_bytes, b1, sizeof(b1)),
		       mc_fmt_bytes(f->hwloc_ram_bytes, b2, sizeof(b2)));
	for (uint32_t i = 0; i < f->n_gpus; i++) {
		const struct mc_gpu *g = &f->gpus[i];
		enum mc_mem_source src;
		uint64_t m = mc_facts_gpu_memory(f, p, i, &src);

		printf("  GPU %u  %s  NUMA %d  %s (%s)  %s\n", g->index,
		       g->pci_bus_id, g->numa_os_index,
		       m ? mc_fmt_bytes(m, b1, sizeof(b1)) : "memory unknown",
		       mc_mem_source_name(src), g->model);
	}
	for (uint32_t i = 0; i < f->n_mig && i < MC_MAX_MIG; i++)
		printf("  MIG slice %u (Slurm GPU %u) of GPU %u  NUMA %d  %s  "
		       "%s\n", i, i, f->mig[i].parent,
		       mc_topology_gpu_numa(f, i),
		       mc_fmt_bytes(f->mig[i].memory_bytes, b1, sizeof(b1)),
		       f->mig[i].profile[0] ? f->mig[i].profile : "");
	print_rules(p, node, nj, b1, b2, b3);
}

/* The RAM rule, the cores rule and the full-node step, as lines. */
static void print_rules(const struct mc_policy *p, const struct mc_node *node,
			const struct mc_node_judgement *nj, char *b1, char *b2,
			char *b3)
{
	const struct mc_audit *a = &nj->rule;
	char rule[96];

	if (a->unified_memory)
		printf("RAM rule: %s - an APU node (%s): GPU memory is this "
		       "host RAM, one pool of %s for the GPUs' working set, "
		       "workers and tasks, so host RAM >= GPU memory holds by "
		       "construction; steps are sized against the pool\n",
		       a->ram_rule_ok ? "ok" : "FAILS",
		       p->unified_memory == MC_UNIFIED_YES
		       ? "UnifiedMemory=yes" : "AMD MI300A by PCI id",
		       mc_fmt_bytes(node->ram_bytes, b1, 32));
	else if (!a->gpu_memory_known)
		printf("RAM rule: unknown - GPU memory not in the topology; "
		       "set GpuMemory= in memcore.conf\n");
	else
		printf("RAM rule: %s - host RAM %s, GPUs' memory %s x %.2f "
		       "= %s\n", a->ram_rule_ok ? "ok" : "FAILS",
		       mc_fmt_bytes(node->ram_bytes, b1, 32),
		       mc_fmt_bytes(a->gpu_memory_total_bytes, b2, 32),
		       p->host_ram_per_gpu_ram,
		       mc_fmt_bytes(a->ram_needed_bytes, b3, 32));
	printf("cores rule: %s - %u cores, %u needed = %s + %u reserved\n",
	       a->cores_rule_ok ? "ok" : "FAILS", node->cores,
	       a->cores_needed, mc_cores_rule_text(p, node->gpus, a->workers,
						   false, rule, sizeof(rule)),
	       p->reserved_cores);
	print_step(nj);
}

/* The judgement of one node shape from slurmctld. */
static void audit_shape(const struct mc_policy *p,
			const struct mc_node_record *r, const char *hosts,
			struct mc_node_judgement *nj,
			uint64_t *gpu_memory_bytes,
			enum mc_mem_source *src)
{
	struct mc_node node;
	uint64_t m = mc_shape_gpu_memory(p, r, 0, src);
	char from[96];

	mc_shape_node(r, &node);
	node.unified_memory = p->unified_memory == MC_UNIFIED_YES;
	*gpu_memory_bytes = m;
	/* slurmctld knows no GPU memory: it is memcore.conf's */
	mc_judge_node(p, &node, m, m * r->gpus, m != 0,
		      mc_mem_source_text(*src, r->gpu_type, NULL, from,
					 sizeof(from)), hosts, nj);
}

/* One node shape of the partition, audited: hosts, count of nodes, its
 * first node's record r, its GPU memory m (0 unknown) from src, the
 * rule's judgement nj, a ShardsPerGpu= finding (NULL none). */
struct shape_audit {
	const char *hosts;
	size_t count;
	const struct mc_node_record *r;
	uint64_t m;
	enum mc_mem_source src;
	struct mc_node_judgement nj;
	const char *finding;
};

static json_t *shape_audit_json(const struct shape_audit *sa)
{
	const struct mc_audit *a = &sa->nj.rule;
	json_t *o = mc_cli_shape_json(sa->hosts, sa->count, sa->r, sa->m,
				      sa->src);

	json_object_set_new(o, "shards_finding", sa->finding ?
			    json_string(sa->finding) : json_null());
	json_object_set_new(o, "ram_needed_bytes", sa->m ?
			    json_integer((json_int_t)a->ram_needed_bytes)
			    : json_null());
	json_object_set_new(o, "cores_needed", json_integer(a->cores_needed));
	json_object_set_new(o, "ram_rule_ok", json_boolean(a->ram_rule_ok));
	json_object_set_new(o, "cores_rule_ok",
			    json_boolean(a->cores_rule_ok));
	json_object_set_new(o, "full_node_step", step_json(&sa->nj));
	json_object_set_new(o, "ok", json_boolean(sa->nj.ok && !sa->finding));
	return o;
}

/*
 *   gpu[13-16]: 4 x a100 40 GiB, 512 GiB, 64 cores: RAM rule ok (...),
 *   cores rule ok (...)
 * then the finding and the full-node step.
 */
static void shape_audit_text(const struct mc_policy *p,
			     const struct shape_audit *sa)
{
	const struct mc_audit *a = &sa->nj.rule;
	const struct mc_node_record *r = sa->r;
	char d[160], b1[32], b2[32], rule[96];

	printf("%s: %s: ", sa->hosts, mc_shape_describe(r, sa->m, d,
							sizeof(d)));
	if (!sa->m)
		printf("RAM rule unknown (set GpuTypeMemory= or GpuMemory= in "
		       "memcore.conf)");
	else
		printf("RAM rule %s (%s %s %s = %u x %s x %.2f)",
		       a->ram_rule_ok ? "ok" : "FAILS",
		       mc_fmt_bytes(r->ram_bytes, b1, sizeof(b1)),
		       a->ram_rule_ok ? ">=" : "<",
		       mc_fmt_bytes(a->ram_needed_bytes, b2, sizeof(b2)),
		       r->gpus, mc_fmt_bytes(sa->m, d, sizeof(d)),
		       p->host_ram_per_gpu_ram);
	printf(", cores rule %s (%u %s %u = %s + %u)\n",
	       a->cores_rule_ok ? "ok" : "FAILS", r->cores,
	       a->cores_rule_ok ? ">=" : "<", a->cores_needed,
	       mc_cores_rule_text(p, r->gpus, a->workers, true, rule,
				  sizeof(rule)), p->reserved_cores);
	if (sa->finding)
		printf("  %s\n", sa->finding);
	print_step(&sa->nj);
}

/* The partition's (or cluster's) answer after its shapes: the JSON
 * object around them, or the text's closing line. */
static void audit_partition_end(const struct mc_cli_common *c,
				const struct mc_ctld_nodes *ctld, bool all,
				json_t *shapes, bool ok, size_t n_gpu_nodes)
{
	if (c->json) {
		json_t *o = json_object();

		json_object_set_new(o, "source", json_string("slurmctld"));
		json_object_set_new(o, "partition", all ? json_null()
				    : json_string(ctld->partition));
		json_object_set_new(o, "gpu_nodes",
				    json_integer((json_int_t)n_gpu_nodes));
		json_object_set_new(o, "ok", json_boolean(ok));
		json_object_set_new(o, "unjudged_nodes", ctld->n_unjudged ?
				    json_string(ctld->unjudged) : json_null());
		json_object_set_new(o, "shapes", shapes);
		mc_cli_json_print(o);
		return;
	}
	json_decref(shapes);
	if (ctld->n_unjudged)
		printf("memcore: %zu %s of partition %s cannot be audited: "
		       "%s %s\n", ctld->n_unjudged,
		       ctld->n_unjudged == 1 ? "node" : "nodes",
		       ctld->partition, ctld->unjudged, ctld->unjudged_why);
	else if (!n_gpu_nodes)
		printf("memcore: %s%s has no GPU nodes\n",
		       all ? "the cluster" : "partition ",
		       all ? "" : ctld->partition);
}

/*
 * memcore audit --partition P / --all: every GPU node slurmctld knows, one
 * line per node shape (shape_audit_text, shape_audit_json).
 */
static int audit_partition(const struct mc_cli_common *c,
			   const struct mc_config *cfg, struct mc_policy *p,
			   bool all)
{
	struct mc_ctld_nodes ctld;
	size_t *shape_of, n_shapes, n_gpu_nodes = 0;
	bool ok = true;
	json_t *shapes = json_array();
	/* Never from the shape cache: audit is an admin's look at the
	 * nodes as they are now, its "cannot run" an answer to trust. */
	int rc = mc_cli_ctld_load(c, cfg, p, all, true, &ctld);

	if (rc)
		return rc;
	shape_of = calloc(ctld.n ? ctld.n : 1, sizeof(*shape_of));
	if (!shape_of) {
		mc_ctld_free(&ctld);
		return mc_cli_usage_error("out of memory");
	}
	n_shapes = mc_shapes_group(ctld.node, ctld.n, shape_of);
	for (size_t k = 0; k < n_shapes; k++) {
		struct shape_audit sa = { .r = NULL };
		char hosts[1024], shard_line[256];

		for (size_t i = 0; i < ctld.n; i++)
			if (shape_of[i] == k) {
				sa.r = sa.r ? sa.r : &ctld.node[i];
				sa.count++;
			}
		if (!sa.r->gpus)
			continue;	/* not a GPU node: no rule */
		n_gpu_nodes += sa.count;
		mc_ctld_hostlist(&ctld, shape_of, k, hosts, sizeof(hosts));
		sa.hosts = hosts;
		audit_shape(p, sa.r, hosts, &sa.nj, &sa.m, &sa.src);
		if (shards_finding(p, sa.r->shards, sa.r->gpus, shard_line,
				   sizeof(shard_line)))
			sa.finding = shard_line;
		ok = ok && sa.nj.ok && !sa.finding;
		if (c->json)
			json_array_append_new(shapes, shape_audit_json(&sa));
		else
			shape_audit_text(p, &sa);
	}
	audit_partition_end(c, &ctld, all, shapes, ok, n_gpu_nodes);
	free(shape_of);
	mc_ctld_free(&ctld);
	return ok ? MC_EXIT_FITS : MC_EXIT_REFUSED;
}

/* What the command line asks. */
struct audit_args {
	struct mc_cli_common c;
	const char *cache, *write_cache;	/* --cache, --write-cache */
	bool all;
};

/* One of audit's own options (mc_cli_option_fn). */
static int take_audit_option(void *ctx, int opt, const char *arg,
			     const char *name)
{
	struct audit_args *a = ctx;

	if (opt == OPT_CACHE)
		a->cache = arg;
	else if (opt == OPT_WRITE_CACHE)
		a->write_cache = arg;
	else	/* OPT_ALL */
		a->all = true;
	return MC_CLI_ON;
}

/* The command line into a, and the options that exclude each other.
 * MC_CLI_ON, else the exit status (--help: 0). */
static int read_audit_args(int argc, char **argv, struct audit_args *a)
{
	int rc = mc_cli_read_options("audit", argc, argv, audit_options,
				     audit_usage, &a->c, take_audit_option, a);

	if (rc != MC_CLI_ON)
		return rc;
	if (a->cache && a->c.topology)
		return mc_cli_usage_error("audit: --cache and --topology are "
					  "two sources; give one");
	if (a->all && (a->c.partition || a->cache || a->c.topology ||
		       a->write_cache))
		return mc_cli_usage_error("audit: --all is every node slurmctld "
					  "knows: no --partition, --topology, "
					  "--cache or --write-cache with it");
	return MC_CLI_ON;
}

/* The node's facts: from --cache (said in the text), else the topology
 * or this host; then --write-cache. MC_CLI_ON, else the exit status. */
static int audit_facts(const struct audit_args *a, const struct mc_policy *p,
		       struct mc_node_facts *facts)
{
	struct mc_cache_header hdr;
	char err[MC_ERR_MAX];

	if (a->cache) {
		if (mc_cache_read(a->cache, NULL, facts, &hdr, err,
				  sizeof(err)) < 0) {
			fprintf(stderr, "memcore: %s\n", err);
			return MC_EXIT_USAGE;
		}
		if (!a->c.json) {
			time_t t = (time_t)hdr.written_at;
			char when[32];

			strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S",
				 localtime(&t));
			printf("cache %s: memcore %s, host %s, written %s\n",
			       a->cache, hdr.version, hdr.host, when);
		}
	} else if (mc_cli_facts(&a->c, p, facts) < 0) {
		return MC_EXIT_USAGE;
	}
	if (a->write_cache &&
	    mc_cache_write(a->write_cache, facts, err, sizeof(err)) < 0) {
		fprintf(stderr, "memcore: %s\n", err);
		return MC_EXIT_USAGE;
	}
	return MC_CLI_ON;
}

int mc_cmd_audit(int argc, char **argv)
{
	struct audit_args a = { .all = false };
	struct mc_cli_common *c = &a.c;
	static struct mc_config cfg;
	static struct mc_node_facts facts;
	struct mc_policy p;
	struct mc_node node;
	static struct mc_node_judgement nj;
	char shard_line[256];
	int rc;
	bool finding;

	if ((rc = read_audit_args(argc, argv, &a)) != MC_CLI_ON)
		return rc;
	if (mc_cli_policy(c, &cfg, &p) < 0)
		return MC_EXIT_USAGE;
	if (a.all && !mc_ctld_conf())
		return mc_cli_usage_error("audit: --all: cannot read slurm.conf "
					  "%s, where the nodes come from (set "
					  "SLURM_CONF)", mc_ctld_conf_path());
	/* --partition without slurm.conf: never this host instead. */
	if (mc_cli_partition_nodes("audit", c, &p, a.cache))
		return MC_EXIT_USAGE;
	/* --partition alone: its nodes from slurmctld (Node* keys describe
	 * one node for check, not the partition's nodes to audit). */
	if (a.all || (c->partition && !a.cache && !a.write_cache &&
		      !c->topology && !p.topology_file[0] && mc_ctld_conf()))
		return audit_partition(c, &cfg, &p, a.all);
	/* A misspelt --partition is never audited by the globals (as check
	 * refuses it). */
	rc = mc_cli_partition_known("audit", c, &cfg, &p);
	if (rc)
		return rc;
	if ((rc = audit_facts(&a, &p, &facts)) != MC_CLI_ON)
		return rc;
	/* This host, read live, without GPUs: no GPU node to audit (as
	 * check says); --partition skips GPU-less nodes too. The cache
	 * asked for is written all the same (slurmd writes one on any
	 * node). */
	if (!a.cache && !c->topology && !p.topology_file[0] && !p.node_gpus &&
	    !facts.n_gpus)
		return mc_cli_no_gpus_here("audit", "there is nothing to "
					   "audit");
	mc_facts_judge(&facts, &p, &node, &nj);
	/* Slurm's counts are in slurmd's cache (mc_slurmd.c); a topology
	 * has none, so no finding there. */
	finding = shards_finding(&p, facts.slurm_shards, facts.slurm_gpus,
				 shard_line, sizeof(shard_line));
	if (c->json) {
		print_json(&facts, &p, &node, &nj,
			   finding ? shard_line : NULL);
	} else {
		print_text(&facts, &p, &node, &nj);
		if (finding)
			printf("%s\n", shard_line);
	}
	return nj.ok && !finding ? MC_EXIT_FITS : MC_EXIT_REFUSED;
}
