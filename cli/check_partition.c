/*
 * check_partition.c - memcore check against the nodes of a partition as
 * slurmctld knows them: one verdict per node shape, one answer naming the
 * nodes it fits; and the JSON of a verdict (shared with cmd_check.c).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "cli.h"
#include "mc_util.h"
#include "mc_parse.h"
#include "mc_judge.h"
#include "mc_shapes.h"

/* Shapes whose explanation is printed when none fits. */
#define SHAPES_EXPLAINED 4

static json_t *fix_options_json(const struct mc_policy *p,
				const struct mc_verdict *v)
{
	char opt[MC_FIX_OPTIONS][MC_FIX_OPTION_MAX];
	size_t n = mc_verdict_fix_options(p, v, opt);
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_string(opt[i]));
	return a;
}

json_t *mc_cli_verdict_json(const struct mc_policy *p,
			    enum mc_node_source node_source,
			    const struct mc_verdict *v,
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
	/* ram_zero_bytes's name before 0.2; kept for one release so that a
	 * site script that reads it gets the figure, not null. */
	json_object_set_new(o, "ram_offload_bytes",
			    json_integer((json_int_t)v->ram_zero_bytes));
	/* --dataset-in-memory's term, only with the option: the output of
	 * a job without it stays as it was. */
	if (v->req.use.dataset_bytes)
		json_object_set_new(o, "dataset_in_memory_bytes", json_integer(
				    (json_int_t)v->req.use.dataset_bytes));
	/* The term table's rows, each under its key when it counts: the
	 * output of a job without one stays as it was. */
	for (size_t i = 0; i < MC_TERM_COUNT; i++)
		if (v->ram_term_bytes[i] || (i == MC_TERM_DATASET &&
					     v->req.use.dataset_bytes))
			json_object_set_new(o, mc_term_table[i].json_key,
					    json_integer((json_int_t)
							 v->ram_term_bytes[i]));
	if (v->req.use.dataset_bytes) {
		/* How it was counted: its kind and the copies per task. */
		json_object_set_new(o, "dataset_in_memory_kind", json_string(
				    mc_dataset_kind_words[
				    v->req.use.dataset_kind]));
		json_object_set_new(o, "dataset_copies_per_task", json_integer(
				    mc_terms_dataset_copies(&v->req.use,
				    v->req.dataloader_workers)));
	}
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
	json_object_set_new(o, "node_gpus", json_integer(v->node.gpus));
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
	json_object_set_new(o, "node_source",
			    json_string(mc_node_source_words[node_source]));
	json_object_set_new(o, "fix_options", fix_options_json(p, v));
	json_object_set_new(o, "impossible",
			    json_boolean(!v->fits && mc_verdict_impossible(v)));
	json_object_set_new(o, "explanation", lines);
	return o;
}

void mc_cli_launch_json(json_t *o, const struct mc_policy *p, bool user_warn,
			enum mc_launch launch)
{
	const char *line = mc_launch_line(p, user_warn, launch);

	json_object_set_new(o, "launch", json_string(mc_launch_words[launch]));
	/* --memcore=warn or MEMCORE_MODE=warn as the job will have it */
	json_object_set_new(o, "user_warn", json_boolean(user_warn));
	json_object_set_new(o, "launch_line",
			    line ? json_string(line) : json_null());
}

/* One node shape of the partition and its verdict. */
struct shape_verdict {
	const struct mc_node_record *rec;	/* its first node */
	size_t count;
	uint64_t gpu_memory_bytes;
	enum mc_mem_source mem_source;
	char hosts[1024];			/* "gpu[01-12]" */
	bool excluded;				/* no candidate for the job */
	bool bound;				/* the unjudged nodes' bound */
	struct mc_cli_grant grant;	/* what a node of it grants */
	bool unsure;			/* fits, maybe not what Slurm gives */
	char unsure_why[320];
	struct mc_decision d;		/* its judgement: d.j */
};

/* What judge_shape needs besides the shape: mc_check_partition's
 * arguments, passed on as they came. */
struct part_ask {
	const struct mc_policy *p;
	const struct mc_ctld_nodes *nodes;
	const struct mc_case *c;
	uint64_t gpu_memory_override;
	const struct mc_cli_ask *ask;	/* what the job asks of a node */
	bool user_warn;
};

/* What mc_check_partition works out before it answers. */
struct part_answer {
	size_t *shape_of;		/* each node's shape */
	struct shape_verdict *sv;	/* candidates first (n_cand) */
	size_t n_shapes, n_cand, n_fit, n_excluded, n_bound;
	size_t unjudged;		/* nodes neither judged nor bounded */
	/* A step on N nodes (--nodes) needs N nodes that each fit. */
	size_t n_need;
	size_t rep;			/* the shape shown; SIZE_MAX none */
	size_t n_doubt, first_doubt;
	char doubt[1024];		/* the candidates it does not fit */
	bool let_through;
	char let_why[512];
	const char *placement;		/* sv[].grant.why: "  placement: ..." */
};

/* "gpu[01-12] (8 x h100 80 GiB, 2048 GiB, 112 cores)" */
static void put_shape(FILE *f, const struct shape_verdict *s)
{
	char d[160];

	char m[32], ram[32];

	if (s->bound && !strcmp(s->rec->gpu_type, "*")) {
		fprintf(f, "%s (hidden from slurmctld's node list; by the "
			"partition's TRES together at most %s, GPUs unknown)",
			s->hosts, mc_fmt_bytes(s->rec->ram_bytes, ram,
					       sizeof(ram)));
		return;
	}
	if (s->bound) {
		fprintf(f, "%s (hidden from slurmctld's node list; by the "
			"partition's TRES together at most %u x %s%s%s, %s)",
			s->hosts, s->rec->gpus, s->rec->gpu_type[0]
			? s->rec->gpu_type : "GPU", s->gpu_memory_bytes ? " "
			: "", s->gpu_memory_bytes ? mc_fmt_bytes(
			s->gpu_memory_bytes, m, sizeof(m)) : "",
			mc_fmt_bytes(s->rec->ram_bytes, ram, sizeof(ram)));
		return;
	}
	fprintf(f, "%s (%s)", s->hosts, mc_shape_describe(s->rec,
		s->gpu_memory_bytes, d, sizeof(d)));
}

/*
 * Judge shape s (its rec and hosts set): the case c on a node of that
 * shape, built and decided as launch builds and decides it
 * (mc_decision.h), with the shape's GPU memory and shard count. False
 * when it is no candidate.
 */
static bool judge_shape(const struct part_ask *q, struct shape_verdict *s)
{
	const struct mc_policy *p = q->p;
	struct mc_case c = *q->c;
	struct mc_request r;
	struct mc_node node;
	const struct mc_alloc *alloc = &s->grant.alloc;
	char from[96], err[MC_ERR_MAX];

	s->gpu_memory_bytes = mc_shape_gpu_memory(p, s->rec,
		q->gpu_memory_override, &s->mem_source);
	/* A bound of GPUs of unknown type: their memory is unknown too
	 * (GpuMemory= could be more than theirs). */
	if (s->bound && !strcmp(s->rec->gpu_type, "*")) {
		s->gpu_memory_bytes = 0;
		s->mem_source = MC_MEM_SRC_NONE;
	}
	c.gpu_memory_bytes = s->gpu_memory_bytes;
	/* At submission there is no "this node": the figure is the
	 * option's or memcore.conf's (slurmctld knows no GPU memory). */
	c.gpu_memory_source = mc_mem_source_text(s->mem_source,
		s->rec->gpu_type, NULL, from, sizeof(from));
	/* A shard or MPS step: its share of this node's cards, by the
	 * node's count unless the user gave one (--shards-per-gpu). */
	if (c.share_kind && !c.share_per_gpu && s->rec->gpus)
		c.share_per_gpu = c.share_kind == 1
			? mc_shards_per_gpu(p, s->rec->shards, s->rec->gpus,
					    NULL)
			: s->rec->mps / s->rec->gpus;
	mc_shape_node(s->rec, &node);
	node.unified_memory = p->unified_memory == MC_UNIFIED_YES;
	if (!mc_cli_ask_alloc(q->ask, q->nodes, s->rec, &node, &c,
			      &s->grant)) {
		s->excluded = true;
		return false;
	}
	/* The combination was checked once before any shape: a node
	 * changes none of it. */
	mc_case_request(p, &c, &node, &r, err, sizeof(err));
	mc_decide(p, &r, alloc, &node, q->user_warn, false, NULL, s->hosts,
		  &s->d);
	s->unsure = mc_cli_cores_unsure(p, &r, alloc, &node, s->hosts,
					&s->d.j, s->unsure_why,
					sizeof(s->unsure_why));
	return true;
}

bool mc_cli_cores_unsure(const struct mc_policy *p,
			 const struct mc_request *r, const struct mc_alloc *a,
			 const struct mc_node *n, const char *host,
			 const struct mc_judgement *j, char *line, size_t len)
{
	struct mc_alloc fewest = *a;
	struct mc_judgement *lo;
	uint32_t tpc = n->threads_per_core ? n->threads_per_core : 1;
	uint32_t g = r->gpus ? r->gpus : 1;
	bool unsure;

	if (!j->v.fits || !a->cores_fewest || a->cores_fewest >= a->cores)
		return false;
	lo = malloc(sizeof(*lo));	/* an explanation: kilobytes */
	if (!lo)
		return true;		/* no false refusal */
	fewest.cores = a->cores_fewest;
	mc_judge(p, r, &fewest, n, NULL, host, lo);
	unsure = !lo->v.fits;
	free(lo);
	if (unsure)
		snprintf(line, len, "memcore: the cores of this job on %s "
			 "cannot be judged: Slurm decides them as it "
			 "allocates (--ntasks-per-gpu with -c and no -n: %u to "
			 "%u cores; it needs %u); the launch judges "
			 "(--cpus-per-gpu=%u instead of -c makes it certain)",
			 host && host[0] ? host : "this node",
			 a->cores_fewest, a->cores, j->v.cores_needed,
			 (j->v.cores_needed + g - 1) / g * tpc);
	return unsure;
}

/* Is every shape refused for the same impossible reason? */
static bool all_shapes(const struct shape_verdict *sv, size_t n,
		       size_t field)
{
	for (size_t k = 0; k < n; k++)
		if (!*(const bool *)((const char *)&sv[k].d.j.v + field))
			return false;
	return true;
}

/* The answer's first line: which nodes of the partition it fits. */
static char *summary_line(const char *partition,
			  const struct shape_verdict *sv, size_t n_shapes,
			  size_t n_nodes, size_t n_fit)
{
	char *line = NULL, b[32];
	size_t len = 0;
	FILE *f = open_memstream(&line, &len);
	const char *sep = "";
	const struct mc_verdict *v0 = &sv[0].d.j.v;
	bool unknown = false;

	if (!f)
		return NULL;
	/* A fitting shape whose GPU memory is unknown was judged without
	 * its RAM floor: no false refusal, but no "fits" either. */
	for (size_t k = 0; k < n_shapes; k++)
		unknown |= sv[k].d.j.v.fits && sv[k].d.j.v.gpu_memory_unknown;
	if (n_fit) {
		fprintf(f, "memcore: fits%s on %zu of %zu %s of partition "
			"%s: ", unknown ? " as far as memcore can tell" : "",
			n_fit, n_nodes, n_nodes == 1 ? "node" : "nodes",
			partition);
		for (size_t k = 0; k < n_shapes; k++) {
			if (!sv[k].d.j.v.fits)
				continue;
			fputs(sep, f);
			put_shape(f, &sv[k]);
			sep = ", ";
		}
		sep = "; ";
	} else if (all_shapes(sv, n_shapes,
			      offsetof(struct mc_verdict, node_gpus_short))) {
		fprintf(f, "memcore: no node of partition %s has %u GPUs",
			partition, v0->req.gpus);
		sep = ": ";
	} else if (all_shapes(sv, n_shapes, offsetof(struct mc_verdict,
						     alloc_mem_over_node))) {
		fprintf(f, "memcore: no node of partition %s has %s of "
			"memory", partition, mc_fmt_bytes(v0->alloc.mem_bytes,
							  b, sizeof(b)));
		sep = ": ";
	} else if (all_shapes(sv, n_shapes, offsetof(struct mc_verdict,
						     alloc_cores_over_node))) {
		fprintf(f, "memcore: no node of partition %s has %u cores",
			partition, v0->alloc.cores);
		sep = ": ";
	} else {
		fprintf(f, "memcore: fits on none of the %zu %s of partition "
			"%s", n_nodes, n_nodes == 1 ? "node" : "nodes",
			partition);
		sep = ": ";
	}
	for (size_t k = 0; k < n_shapes; k++) {
		char why[96];

		if (sv[k].d.j.v.fits)
			continue;
		fprintf(f, "%snot on ", sep);
		put_shape(f, &sv[k]);
		fprintf(f, ": %s", mc_verdict_reason(&sv[k].d.j.v, why,
						     sizeof(why)));
		sep = "; ";
	}
	if (unknown)
		fprintf(f, "; GPU memory unknown (no GpuTypeMemory=/"
			"GpuMemory=): the RAM floor was not checked; launch "
			"measures it and may refuse");
	fclose(f);
	return line;
}

/*
 * Where the GPU memory came from (slurmctld does not know it): one line
 * naming the memcore.conf keys used, and one per shape whose memory is
 * unknown, with the key that would give it.
 */
static void gpu_memory_lines(const struct shape_verdict *sv, size_t n_shapes,
			     json_t *lines)
{
	bool used[MC_MEM_SRC_MIG_PROFILE + 1] = { false };
	char line[MC_EXPLAIN_LINE_MAX * 2];

	for (size_t k = 0; k < n_shapes; k++)
		used[sv[k].mem_source] = true;
	if (used[MC_MEM_SRC_GPU_TYPE] || used[MC_MEM_SRC_POLICY]) {
		char types[512] = "", gm[32] = "", sz[32];
		size_t n = 0;

		/* The values used, as the admin wrote them: each GRES type's
		 * once, in the order the shapes come. */
		for (size_t k = 0; k < n_shapes; k++) {
			bool seen = false;

			if (sv[k].mem_source == MC_MEM_SRC_POLICY && !gm[0])
				mc_fmt_mem_option(sv[k].gpu_memory_bytes, gm,
						  sizeof(gm));
			if (sv[k].mem_source != MC_MEM_SRC_GPU_TYPE)
				continue;
			for (size_t i = 0; i < k; i++)
				seen |= sv[i].mem_source == MC_MEM_SRC_GPU_TYPE &&
					!strcasecmp(sv[i].rec->gpu_type,
						    sv[k].rec->gpu_type);
			if (!seen)
				mc_appendf(types, sizeof(types), &n, "%s%s:%s",
					   n ? "," : "", sv[k].rec->gpu_type,
					   mc_fmt_mem_option(
						sv[k].gpu_memory_bytes, sz,
						sizeof(sz)));
		}
		snprintf(line, sizeof(line), "  GPU memory from "
				       "memcore.conf (slurmctld does not know "
				       "it): %s%s%s%s%s",
				       used[MC_MEM_SRC_GPU_TYPE]
				       ? "GpuTypeMemory=" : "", types,
				       used[MC_MEM_SRC_GPU_TYPE] &&
				       used[MC_MEM_SRC_POLICY] ? ", " : "",
				       used[MC_MEM_SRC_POLICY]
				       ? "GpuMemory=" : "", gm);
		json_array_append_new(lines, json_string(line));
	}
	for (size_t k = 0; k < n_shapes; k++) {
		if (sv[k].mem_source != MC_MEM_SRC_NONE || sv[k].bound)
			continue;
		if (sv[k].rec->gpu_type[0])
			snprintf(line, sizeof(line), "  GPU memory unknown for "
				 "%s: an administrator sets GpuTypeMemory=%s:"
				 "SIZE or GpuMemory= in memcore.conf",
				 sv[k].hosts, sv[k].rec->gpu_type);
		else
			snprintf(line, sizeof(line), "  GPU memory unknown for "
				 "%s (its Gres names no GPU type): an "
				 "administrator sets GpuMemory= in memcore.conf",
				 sv[k].hosts);
		json_array_append_new(lines, json_string(line));
	}
}

json_t *mc_cli_shape_json(const char *hosts, size_t count,
			  const struct mc_node_record *rec,
			  uint64_t gpu_memory_bytes, enum mc_mem_source src)
{
	json_t *o = json_object();

	json_object_set_new(o, "nodes", json_string(hosts));
	json_object_set_new(o, "count", json_integer((json_int_t)count));
	json_object_set_new(o, "gpus", json_integer(rec->gpus));
	json_object_set_new(o, "gpu_type", json_string(rec->gpu_type));
	json_object_set_new(o, "gpu_memory_bytes", gpu_memory_bytes ?
			    json_integer((json_int_t)gpu_memory_bytes)
			    : json_null());
	json_object_set_new(o, "gpu_memory_source",
			    json_string(mc_mem_source_key(src)));
	json_object_set_new(o, "ram_bytes",
			    json_integer((json_int_t)rec->ram_bytes));
	json_object_set_new(o, "cores", json_integer(rec->cores));
	json_object_set_new(o, "threads_per_core",
			    json_integer(rec->threads_per_core));
	return o;
}

/* What the job is allocated on a node of the shape, as modelled (the
 * job's own Slurm options only; null for plain check options). */
static json_t *grant_json(const struct mc_cli_grant *g)
{
	if (!g->has_job)
		return json_null();
	return json_pack("{s:i, s:i, s:i, s:i, s:i, s:I}",
			 "tasks", (int)g->job_tasks, "cpus", (int)g->job_cpus,
			 "cores", (int)g->alloc.cores,
			 "cores_fewest", (int)g->alloc.cores_fewest,
			 "gpus", (int)g->job_gpus,
			 "mem_bytes", (json_int_t)g->alloc.mem_bytes);
}

static json_t *shape_json(const struct mc_policy *p,
			  const struct shape_verdict *s)
{
	json_t *o = mc_cli_shape_json(s->hosts, s->count, s->rec,
				      s->gpu_memory_bytes, s->mem_source);
	char why[96];

	json_object_set_new(o, "fits", json_boolean(s->d.j.v.fits));
	json_object_set_new(o, "impossible", json_boolean(!s->d.j.v.fits &&
			    mc_verdict_impossible(&s->d.j.v)));
	json_object_set_new(o, "reason", json_string(
			    mc_verdict_reason(&s->d.j.v, why, sizeof(why))));
	json_object_set_new(o, "fix_options", fix_options_json(p, &s->d.j.v));
	json_object_set_new(o, "grant", grant_json(&s->grant));
	return o;
}

void mc_cli_notes_append(json_t *lines, const struct mc_cli_notes *n)
{
	for (size_t i = 0; n && i < n->n; i++)
		json_array_append_new(lines, json_string(n->line[i]));
}

/*
 * Whether Slurm may start the job on a node of this verdict: not when it
 * asks more GPUs, shares, memory or cores than the node has (Slurm never
 * gives it such a node; the launch never sees it there).
 */
static bool placeable(const struct mc_verdict *v)
{
	return !v->node_gpus_short && !v->node_shares_short &&
	       !v->alloc_mem_over_node && !v->alloc_cores_over_node;
}

/*
 * The candidates Slurm may start the job on that it does not fit: their
 * node count, their hosts joined with "," into hosts (a Slurm hostlist),
 * and the first of them in *first.
 */
static size_t doubt_nodes(const struct shape_verdict *sv, size_t n_cand,
			  char *hosts, size_t len, size_t *first)
{
	size_t n = 0, used = 0;

	hosts[0] = '\0';
	for (size_t k = 0; k < n_cand; k++) {
		if (sv[k].d.j.v.fits || !placeable(&sv[k].d.j.v))
			continue;
		if (!n)
			*first = k;
		n += sv[k].count;
		if (used < len)
			used += (size_t)snprintf(hosts + used, len - used,
						 "%s%s", used ? "," : "",
						 sv[k].hosts);
	}
	return n;
}

/*
 * The unjudged nodes, by an upper bound of any one of them (the
 * partition's TRES less the nodes seen): a step that does not fit the
 * bound fits none of them, and one of another GPU type runs on none of
 * them. Only where a bigger node can never be the worse one: the step's
 * GPUs on a node fixed by the job, its memory not per CPU (threads per
 * core unknown). Otherwise they stay unjudged. The bound is the shape
 * after the others (sv has room for it).
 */
static void judge_hidden_bound(const struct part_ask *q,
			       struct part_answer *a)
{
	const struct mc_ctld_nodes *nodes = q->nodes;
	struct shape_verdict *s = &a->sv[a->n_shapes];

	if (!a->unjudged || !nodes->hidden_bound_ok)
		return;
	s->rec = &nodes->hidden_bound;
	s->count = nodes->n_unjudged;
	s->bound = true;
	snprintf(s->hosts, sizeof(s->hosts), "%s", nodes->unjudged);
	if (!judge_shape(q, s)) {
		a->n_excluded += s->count;
		a->n_bound = s->count;
		a->unjudged = 0;
		a->n_shapes++;
	} else if (s->grant.gpus_fixed && !s->d.j.v.fits &&
		   s->d.j.v.alloc.mem_form != MC_MEM_PER_CPU) {
		a->n_bound = s->count;
		a->unjudged = 0;
		a->n_shapes++;
	}
}

/* Group the nodes by shape and judge each shape; -1 out of memory. */
static int judge_shapes(const struct part_ask *q, struct part_answer *a)
{
	const struct mc_ctld_nodes *nodes = q->nodes;

	a->shape_of = calloc(nodes->n ? nodes->n : 1, sizeof(*a->shape_of));
	if (!a->shape_of)
		return -1;
	a->n_shapes = mc_shapes_group(nodes->node, nodes->n, a->shape_of);
	/* One per shape (8.5 KiB each, not one per node: 85 MB at 10,000
	 * nodes), and one more: the unjudged nodes' bound. */
	a->sv = calloc(a->n_shapes + 1, sizeof(*a->sv));
	if (!a->sv)
		return -1;
	for (size_t i = 0; i < nodes->n; i++) {
		struct shape_verdict *s = &a->sv[a->shape_of[i]];

		if (!s->rec)
			s->rec = &nodes->node[i];
		s->count++;
	}
	for (size_t k = 0; k < a->n_shapes; k++) {
		struct shape_verdict *s = &a->sv[k];

		mc_ctld_hostlist(nodes, a->shape_of, k, s->hosts,
				 sizeof(s->hosts));
		if (!judge_shape(q, s))
			a->n_excluded += s->count;
	}
	judge_hidden_bound(q, a);
	return 0;
}

/* Candidates first: a node of another GPU type is no answer of
 * memcore's (Slurm never places the job there). Then the nodes that fit
 * and the shape to show: the first that fits, one that surely fits
 * before one that may not. */
/* A shape moved in the array: its pointers into its own grant's words
 * (the memory option, alloc.mem_source, copied into its decision) still
 * name old, the grant's place before the move. */
static void moved(struct shape_verdict *s, const char *old)
{
	const char **p[] = { &s->grant.alloc.mem_source,
			     &s->d.j.v.alloc.mem_source };

	for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++)
		if (*p[i] == old)
			*p[i] = s->grant.mem_source;
}

static void candidates_first(struct part_answer *a)
{
	struct shape_verdict *sv = a->sv;
	size_t k_out = 0;

	for (size_t k = 0; k < a->n_shapes; k++) {
		if (sv[k].excluded)
			continue;
		if (k != k_out) {
			struct shape_verdict t = sv[k_out];

			sv[k_out] = sv[k];
			sv[k] = t;
			moved(&sv[k_out], sv[k].grant.mem_source);
			moved(&sv[k], sv[k_out].grant.mem_source);
		}
		k_out++;
	}
	a->n_cand = k_out;
	for (size_t k = 0; k < a->n_cand; k++)
		if (sv[k].d.j.v.fits) {
			a->n_fit += sv[k].count;
			if (a->rep == SIZE_MAX || (sv[a->rep].unsure &&
						   !sv[k].unsure))
				a->rep = k;
		}
}

/*
 * No false refusal: a partition whose nodes memcore cannot all judge
 * lets the job through when none of those it judged fits (a hidden node
 * may be the one Slurm picks), and so does a job for which no node is a
 * candidate (Slurm answers that one itself).
 */
static void let_through_why(const struct mc_ctld_nodes *nodes,
			    const struct mc_cli_notes *notes,
			    struct part_answer *a)
{
	const struct shape_verdict *sv = a->sv;
	size_t rep = a->rep;
	char where[160];

	if ((!a->n_cand || a->n_fit < a->n_need) && a->unjudged) {
		a->let_through = true;
		snprintf(a->let_why, sizeof(a->let_why), "memcore: %zu %s of "
			 "partition %s cannot be judged: %s %s; the job is let "
			 "through (the launch check remains)",
			 nodes->n_unjudged, nodes->n_unjudged == 1 ? "node"
			 : "nodes", nodes->partition, nodes->unjudged,
			 nodes->unjudged_why);
	} else if ((!a->n_cand || a->n_fit < a->n_need) &&
		   (snprintf(where, sizeof(where), "any node of partition %s",
			     nodes->partition), true) &&
		   mc_cli_unmodelled_why(notes, where, a->let_why,
					 sizeof(a->let_why))) {
		a->let_through = true;
	} else if (rep != SIZE_MAX && sv[rep].unsure) {
		/* Every shape that fits fits only the most cores Slurm may
		 * give: never a refusal on a guess (the launch judges). */
		a->let_through = true;
		snprintf(a->let_why, sizeof(a->let_why), "%s",
			 sv[rep].unsure_why);
	} else if (!nodes->n && !nodes->n_unjudged) {
		a->let_through = true;
		snprintf(a->let_why, sizeof(a->let_why), "memcore: the job's "
			 "--nodelist/--exclude leave no node of partition %s: "
			 "Slurm decides", nodes->partition);
	} else if (!a->n_cand) {
		a->let_through = true;
		snprintf(a->let_why, sizeof(a->let_why), "memcore: no node of "
			 "partition %s is a candidate for this job (%s: %s): "
			 "Slurm decides", nodes->partition, sv[0].hosts,
			 sv[0].grant.why);
	}
}

/*
 * Slurm starts the job on any candidate it can place it on, not on one
 * memcore picks: a job that fits some of them and not others would queue
 * and then be refused at launch on the others. So it is refused here,
 * with the fix that keeps it off them (or sizes it for them), unless the
 * job picks its nodes in a way memcore does not model (--constraint):
 * then the fitting ones may be all it can get, and it is let through.
 */
static void doubt_check(const struct mc_ctld_nodes *nodes,
			struct part_answer *a)
{
	a->n_doubt = 0;
	if (!a->n_cand || a->n_fit < a->n_need || a->let_through)
		return;
	a->n_doubt = doubt_nodes(a->sv, a->n_cand, a->doubt,
				 sizeof(a->doubt), &a->first_doubt);
	if (a->n_doubt && nodes->pick_unmodelled[0]) {
		a->let_through = true;
		snprintf(a->let_why, sizeof(a->let_why), "memcore: it does "
			 "not fit %s; the job's %s decides whether Slurm may "
			 "give it one (not modelled at submission): let "
			 "through, the launch check judges the node it gets",
			 a->doubt, nodes->pick_unmodelled);
		a->n_doubt = 0;
	}
}

/* The text answer: its lines, then the launch line (NULL: none). */
static void print_lines(json_t *lines, const char *last)
{
	for (size_t i = 0; i < json_array_size(lines); i++)
		puts(json_string_value(json_array_get(lines, i)));
	if (last)
		puts(last);
}

/* The --json answer's partition keys: its name, its nodes, how many of
 * them the step fits. */
static void partition_keys(json_t *o, const struct mc_ctld_nodes *nodes,
			   size_t n_fit)
{
	json_object_set_new(o, "partition", json_string(nodes->partition));
	json_object_set_new(o, "nodes", json_integer((json_int_t)nodes->n));
	json_object_set_new(o, "nodes_fit", json_integer((json_int_t)n_fit));
}

/* No node is a candidate: the job is let through (a->let_why), Slurm
 * answers it. */
static int answer_no_candidate(const struct part_ask *q, bool json,
			       bool print, const struct mc_cli_notes *notes,
			       const struct part_answer *a)
{
	const struct mc_policy *p = q->p;
	const struct mc_ctld_nodes *nodes = q->nodes;
	enum mc_launch launch = mc_launch_outcome(p, q->user_warn, true);
	json_t *lines = json_array(), *o;

	json_array_append_new(lines, json_string(a->let_why));
	mc_cli_notes_append(lines, notes);
	if (print && !json)
		print_lines(lines, mc_launch_line(p, q->user_warn, launch));
	if (print && json) {
		o = json_object();
		json_object_set_new(o, "fits", json_true());
		json_object_set_new(o, "let_through",
				    json_string(a->let_why));
		json_object_set_new(o, "placement", json_null());
		json_object_set_new(o, "doubt_nodes", json_null());
		json_object_set_new(o, "node_source",
				    json_string(mc_node_source_words[
						MC_NODE_SLURMCTLD]));
		json_object_set_new(o, "mode",
				    json_string(mc_mode_words[p->mode]));
		json_object_set_new(o, "allow_user_warn",
				    json_boolean(p->allow_user_warn));
		json_object_set_new(o, "gpus", json_integer(q->c->gpus));
		partition_keys(o, nodes, 0);
		json_object_set_new(o, "unjudged_nodes",
				    json_string(nodes->unjudged));
		json_object_set_new(o, "fix_options", json_array());
		json_object_set(o, "explanation", lines);
		mc_cli_launch_json(o, p, q->user_warn, launch);
		mc_cli_json_print(o);
	}
	json_decref(lines);
	return MC_EXIT_FITS;
}

/* The lines about the partition as a whole: which nodes it fits, those
 * that are no candidates, why it is let through or refused, --nodes. */
static void partition_lines(const struct mc_ctld_nodes *nodes,
			    const struct part_answer *a, json_t *lines)
{
	const struct shape_verdict *sv = a->sv;
	const char *those = a->n_doubt == 1 ? "that node" : "those nodes";
	char *summary = summary_line(nodes->partition, sv, a->n_cand,
				     nodes->n + a->n_bound - a->n_excluded,
				     a->n_fit);
	char line[MC_EXPLAIN_LINE_MAX * 2];

	if (summary)
		json_array_append_new(lines, json_string(summary));
	free(summary);
	if (a->n_excluded) {
		snprintf(line, sizeof(line), "  not candidates: %s (%s)",
			 sv[a->n_cand].hosts, sv[a->n_cand].grant.why);
		json_array_append_new(lines, json_string(line));
	}
	if (a->let_through)
		json_array_append_new(lines, json_string(a->let_why));
	if (a->n_doubt) {
		snprintf(line, sizeof(line), "memcore: Slurm may start the job "
			 "on any of these nodes, and the launch refuses it on "
			 "%s: keep the job off %s (--exclude=%s) or size it "
			 "for %s as below", a->doubt, those, a->doubt, those);
		json_array_append_new(lines, json_string(line));
	}
	if (a->n_need > 1 && a->n_fit) {
		if (a->n_fit >= a->n_need)
			snprintf(line, sizeof(line), "memcore: a step on %zu "
				 "nodes fits: %zu of the partition's nodes fit "
				 "it", a->n_need, a->n_fit);
		else
			snprintf(line, sizeof(line), "memcore: a step on %zu "
				 "nodes does not fit: only %zu of the "
				 "partition's nodes fit it (--nodes=%zu at "
				 "most)", a->n_need, a->n_fit, a->n_fit);
		json_array_append_new(lines, json_string(line));
	}
}

/* The shapes' own lines: the figures of the first node it does not fit,
 * when that refuses it; else the plan on the shape shown (a->rep); or
 * why each one refuses; then where Slurm's placement decides. */
static void shape_lines(struct part_answer *a, json_t *lines)
{
	const struct shape_verdict *sv = a->sv;
	size_t shown = 0;

	if (a->n_doubt)
		a->rep = a->first_doubt;
	for (size_t k = 0; k < a->n_cand; k++) {
		if (a->n_fit ? k != a->rep : shown == SHAPES_EXPLAINED)
			continue;
		shown++;
		for (size_t i = 0; i < sv[k].d.j.e.n; i++)
			json_array_append_new(lines,
					      json_string(sv[k].d.j.e.line[i]));
	}
	/* What was judged and why (the same for every shape: its first). */
	for (size_t k = 0; k < a->n_cand && !a->placement; k++)
		if (sv[k].grant.why[0]) {
			a->placement = sv[k].grant.why;
			json_array_append_new(lines, json_string(a->placement));
		}
	if (!a->n_fit && a->n_cand > SHAPES_EXPLAINED) {
		char more[96];

		snprintf(more, sizeof(more), "  (and %zu more node shapes: "
			 "see --json)", a->n_cand - SHAPES_EXPLAINED);
		json_array_append_new(lines, json_string(more));
	}
}

/* The --json answer: the verdict of the shape shown, with the
 * partition's keys and every candidate shape. */
static void print_partition_json(const struct part_ask *q,
				 const struct part_answer *a, bool fits,
				 json_t *lines, enum mc_launch launch)
{
	const struct mc_ctld_nodes *nodes = q->nodes;
	const struct shape_verdict *r = &a->sv[a->rep];
	json_t *o = mc_cli_verdict_json(q->p, MC_NODE_SLURMCTLD, &r->d.j.v,
					&r->d.j.e);
	json_t *shapes = json_array();

	for (size_t k = 0; k < a->n_cand; k++)
		json_array_append_new(shapes, shape_json(q->p, &a->sv[k]));
	json_object_set_new(o, "fits", json_boolean(fits));
	json_object_set_new(o, "doubt_nodes", a->n_doubt ?
			    json_string(a->doubt) : json_null());
	json_object_set_new(o, "let_through", a->let_through ?
			    json_string(a->let_why) : json_null());
	json_object_set_new(o, "placement", a->placement ?
			    json_string(a->placement + 2) : json_null());
	json_object_set_new(o, "unjudged_nodes", nodes->n_unjudged ?
			    json_string(nodes->unjudged) : json_null());
	json_object_set_new(o, "excluded_nodes", a->n_excluded ?
			    json_string(a->sv[a->n_cand].hosts) : json_null());
	json_object_set_new(o, "nodes_needed",
			    json_integer((json_int_t)a->n_need));
	partition_keys(o, nodes, a->n_fit);
	json_object_set_new(o, "gpu_memory_source",
			    json_string(mc_mem_source_key(r->mem_source)));
	json_object_set_new(o, "shapes", shapes);
	json_object_set(o, "explanation", lines);
	mc_cli_launch_json(o, q->p, q->user_warn, launch);
	mc_cli_json_print(o);
}

int mc_check_partition(const struct mc_policy *p,
		       const struct mc_ctld_nodes *nodes,
		       const struct mc_case *c,
		       uint64_t gpu_memory_override,
		       const struct mc_cli_ask *ask, bool user_warn, bool json,
		       bool print,
		       const struct mc_cli_notes *notes)
{
	const struct part_ask q = {
		.p = p, .nodes = nodes, .c = c,
		.gpu_memory_override = gpu_memory_override,
		.ask = ask, .user_warn = user_warn,
	};
	struct part_answer a = {
		.rep = SIZE_MAX, .unjudged = nodes->n_unjudged,
		.n_need = c->nodes > 1 ? c->nodes : 1,
	};
	enum mc_launch launch;
	json_t *lines;
	bool fits;
	int rc;

	if (judge_shapes(&q, &a) < 0) {
		free(a.shape_of);
		free(a.sv);
		fprintf(stderr, "memcore: out of memory\n");
		return MC_EXIT_USAGE;
	}
	candidates_first(&a);
	let_through_why(nodes, notes, &a);
	doubt_check(nodes, &a);
	if (!a.n_cand) {
		rc = answer_no_candidate(&q, json, print, notes, &a);
		free(a.shape_of);
		free(a.sv);
		return rc;
	}
	lines = json_array();
	partition_lines(nodes, &a, lines);
	gpu_memory_lines(a.sv, a.n_cand, lines);
	shape_lines(&a, lines);
	mc_cli_notes_append(lines, notes);
	if (a.rep == SIZE_MAX)
		a.rep = 0;
	fits = (a.n_fit >= a.n_need && !a.n_doubt) || a.let_through;
	launch = mc_launch_outcome(p, user_warn, fits);
	if (print && json)
		print_partition_json(&q, &a, fits, lines, launch);
	else if (print)
		print_lines(lines, mc_launch_line(p, user_warn, launch));
	json_decref(lines);
	free(a.shape_of);
	free(a.sv);
	return launch == MC_LAUNCH_REFUSED ? MC_EXIT_REFUSED : MC_EXIT_FITS;
}

bool mc_cli_unmodelled_why(const struct mc_cli_notes *n, const char *where,
			   char *buf, size_t len)
{
	if (!n || !n->unmodelled[0])
		return false;
	snprintf(buf, len, "memcore: as modelled without --%s the job does "
		 "not fit %s; --%s may change what Slurm gives it (%s): let through, "
		 "the launch check judges it", n->unmodelled, where,
		 n->unmodelled, mc_slurm_let_through(n->unmodelled));
	return true;
}
