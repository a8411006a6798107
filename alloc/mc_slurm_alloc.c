/*
 * mc_slurm_alloc.c - the allocation Slurm gives a job on a node (see
 * mc_slurm_alloc.h for the rules and their sources).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mc_parse.h"
#include "mc_slurm_alloc.h"
#include "mc_util.h"

#define MB (1ULL << 20)

int mc_slurm_mem_mb(const char *s, uint64_t *mb, char *err, size_t errlen)
{
	static const char units[] = "KMGTP";
	char *end;
	unsigned long long v;
	const char *u;
	int shift;

	if (!s || !isdigit((unsigned char)*s)) {
		snprintf(err, errlen, "not a size");
		return -1;
	}
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno) {
		snprintf(err, errlen, "too large");
		return -1;
	}
	/* sbatch prints 0 as "0?" (mbytes_to_str ran out of units). */
	if (!*end || (v == 0 && !strcmp(end, "?"))) {
		*mb = v;
		return 0;
	}
	u = strchr(units, toupper((unsigned char)*end));
	if (!u || !*u || (end[1] && strcasecmp(end + 1, "B"))) {
		snprintf(err, errlen, "unknown size suffix '%s'", end);
		return -1;
	}
	/* K is 1/1024 MB: rounded up, as Slurm's str_to_mbytes does. */
	shift = (int)(u - units) * 10 - 10;
	if (shift < 0) {
		*mb = (v + 1023) / 1024;
		return 0;
	}
	if (shift && v > (UINT64_MAX >> shift)) {
		snprintf(err, errlen, "too large");
		return -1;
	}
	*mb = (uint64_t)v << shift;
	return 0;
}

/* A count; anything else (Slurm's unset sentinels "-2", "1-0") is 0. */
static uint32_t count_of(const char *s)
{
	char *end;
	unsigned long v;

	if (!s || !isdigit((unsigned char)*s))
		return 0;
	v = strtoul(s, &end, 10);
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* Keep the first GPU type a request names. */
static void set_type(struct mc_slurm_job *j, const char *t, size_t len)
{
	if (j->gpu_type[0] || !len)
		return;
	if (len >= sizeof(j->gpu_type))
		len = sizeof(j->gpu_type) - 1;
	memcpy(j->gpu_type, t, len);
	j->gpu_type[len] = '\0';
}

/*
 * A GPU count of a request, len bytes of s: digits only. What Slurm took
 * is digits; anything else here is not Slurm's, and reading it as 0 would
 * call a GPU job "not a GPU step".
 */
static int gpu_count(const char *s, size_t len, uint64_t *total)
{
	uint64_t v = 0;

	if (!len)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		if (v < UINT32_MAX)
			v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*total += v > UINT32_MAX ? UINT32_MAX : v;
	return 0;
}

/*
 * GPUs of a [type:]N[,[type:]N...] value (--gpus, --gpus-per-node, ...)
 * summed into *gpus; the first type kept. A bare type ("h100") is one
 * GPU. -1 for a count that is not digits.
 */
static int gpu_list(struct mc_slurm_job *j, const char *v, uint32_t *gpus)
{
	static const char *const tres_prefix[] = { "gres/", "gres:", "gpu:" };
	uint64_t total = 0;

	while (v && *v) {
		const char *end = strchr(v, ',');
		size_t len = end ? (size_t)(end - v) : strlen(v);
		const char *colon;

		/* The TRES forms a newer Slurm may print ("gres/gpu:h100:8",
		 * "gpu:8") name the GRES first: the rest is [type:]N. */
		for (size_t k = 0; k < sizeof(tres_prefix) /
		     sizeof(tres_prefix[0]); k++) {
			size_t pl = strlen(tres_prefix[k]);

			if (len > pl && !strncmp(v, tres_prefix[k], pl)) {
				v += pl;
				len -= pl;
			}
		}
		colon = memchr(v, ':', len);
		if (colon) {
			set_type(j, v, (size_t)(colon - v));
			if (gpu_count(colon + 1, len - (size_t)(colon + 1 - v),
				      &total) < 0)
				return -1;
		} else if (isdigit((unsigned char)*v)) {
			if (gpu_count(v, len, &total) < 0)
				return -1;
		} else {
			set_type(j, v, len);
			total += 1;
		}
		v = end ? end + 1 : NULL;
	}
	*gpus = total > UINT32_MAX ? UINT32_MAX : (uint32_t)total;
	return 0;
}

/*
 * --gres as slurm_opt prints it: "gres:gpu:h100:8,gres:nic:1", "gpu:2",
 * "gres/gpu:2" (tres forms), "gpu" (one). With cpus, a "cpu=N"/"cpu:N"
 * entry of --tres-per-task sets -c. The GPUs into *gpus, shard and MPS
 * counts into j; -1 for a GPU count that is not digits, -2 for a shard
 * count, -3 for an MPS count (the error names which).
 */
static int gres_list(struct mc_slurm_job *j, const char *v, uint32_t *gpus,
		     uint32_t *cpus)
{
	uint64_t total = 0, shards = j->shards, mps = j->mps;

	while (v && *v) {
		const char *end = strchr(v, ',');
		size_t len = end ? (size_t)(end - v) : strlen(v);
		char item[128];
		char *name, *rest, *last;

		snprintf(item, sizeof(item), "%.*s", (int)len, v);
		/* "=" of the tres forms reads as ":" */
		for (char *c = item; *c; c++)
			if (*c == '=')
				*c = ':';
		name = item;
		if (!strncmp(name, "gres:", 5) || !strncmp(name, "gres/", 5))
			name += 5;
		rest = strchr(name, ':');
		if (rest)
			*rest++ = '\0';
		if (!strcmp(name, "gpu")) {
			if (!rest) {
				total += 1;
			} else {
				last = strrchr(rest, ':');
				if (last) {
					set_type(j, rest,
						 (size_t)(last - rest));
					if (gpu_count(last + 1, strlen(last + 1),
						      &total) < 0)
						return -1;
				} else if (isdigit((unsigned char)*rest)) {
					if (gpu_count(rest, strlen(rest),
						      &total) < 0)
						return -1;
				} else {
					set_type(j, rest, strlen(rest));
					total += 1;
				}
			}
		} else if (!strcmp(name, "cpu") && cpus && rest) {
			*cpus = count_of(rest);
		} else if (!strcmp(name, "shard") || !strcmp(name, "mps")) {
			/* shard, shard:type (one), shard:N, shard:type:N; a
			 * count read as GPU counts are (digits, summed in 64
			 * bits and held at UINT32_MAX): one that is no count is
			 * an error, never a job without GPUs. */
			const char *n = rest ? strrchr(rest, ':') : NULL;
			uint64_t *sum = name[0] == 's' ? &shards : &mps;

			if (!rest || (!n && !isdigit((unsigned char)*rest)))
				*sum += 1;
			else if (gpu_count(n ? n + 1 : rest,
					   strlen(n ? n + 1 : rest), sum) < 0)
				return name[0] == 's' ? -2 : -3;
		}
		v = end ? end + 1 : NULL;
	}
	*gpus = total > UINT32_MAX ? UINT32_MAX : (uint32_t)total;
	j->shards = shards > UINT32_MAX ? UINT32_MAX : (uint32_t)shards;
	j->mps = mps > UINT32_MAX ? UINT32_MAX : (uint32_t)mps;
	return 0;
}

int mc_slurm_job_set(struct mc_slurm_job *j, const char *name,
		     const char *value, char *err, size_t errlen)
{
	char why[MC_ERR_MAX];
	enum mc_job_mem kind = MC_JOB_MEM_NONE;
	int bad = 0;

	if (!name || !value)
		return 0;
	if (!strcmp(name, "mem"))
		kind = MC_JOB_MEM_NODE;
	else if (!strcmp(name, "mem-per-gpu"))
		kind = MC_JOB_MEM_GPU;
	else if (!strcmp(name, "mem-per-cpu"))
		kind = MC_JOB_MEM_CPU;
	if (kind) {
		if (mc_slurm_mem_mb(value, &j->mem_mb, why, sizeof(why)) < 0) {
			snprintf(err, errlen, "--%s=%s: %s", name, value, why);
			return -1;
		}
		j->mem_kind = kind;
		snprintf(j->mem_opt, sizeof(j->mem_opt), "--%s=%s", name,
			 j->mem_mb ? value : "0");
	} else if (!strcmp(name, "nodes")) {
		const char *dash = strchr(value, '-');

		j->nodes_min = count_of(value);
		j->nodes_max = dash ? count_of(dash + 1) : j->nodes_min;
	} else if (!strcmp(name, "ntasks")) {
		j->ntasks = count_of(value);
	} else if (!strcmp(name, "ntasks-per-node")) {
		j->ntasks_per_node = count_of(value);
	} else if (!strcmp(name, "cpus-per-task")) {
		j->cpus_per_task = count_of(value);
	} else if (!strcmp(name, "cpus-per-gpu")) {
		j->cpus_per_gpu = count_of(value);
	} else if (!strcmp(name, "sockets-per-node")) {
		j->sockets_per_node = count_of(value);
	} else if (!strcmp(name, "cores-per-socket")) {
		j->cores_per_socket = count_of(value);
	} else if (!strcmp(name, "threads-per-core")) {
		j->threads_per_core = count_of(value);
		if (j->threads_per_core == 1)
			j->one_thread_per_core = true;
	} else if (!strcmp(name, "mincpus")) {
		j->mincpus = count_of(value);
	} else if (!strcmp(name, "ntasks-per-gpu") ||
		   !strcmp(name, "ntasks-per-tres")) {
		j->ntasks_per_gpu = count_of(value);
	} else if (!strcmp(name, "hint")) {
		/* proc_args.c verify_hint (22.05): compute_bound,
		 * memory_bound and nomultithread each set min_threads 1 */
		if (strstr(value, "nomultithread") ||
		    strstr(value, "compute_bound") ||
		    strstr(value, "memory_bound"))
			j->one_thread_per_core = true;
	} else if (!strcmp(name, "exclusive")) {
		j->exclusive = !strcmp(value, "exclusive") ? MC_EXCL_NODE
			: !strcmp(value, "user") ? MC_EXCL_USER
			: !strcmp(value, "mcs") ? MC_EXCL_MCS
			: !strcmp(value, "topo") ? MC_EXCL_TOPO : MC_EXCL_NONE;
	} else if (!strcmp(name, "gpus-per-node")) {
		bad = gpu_list(j, value, &j->gpus_per_node);
	} else if (!strcmp(name, "gpus-per-task")) {
		bad = gpu_list(j, value, &j->gpus_per_task);
	} else if (!strcmp(name, "gpus-per-socket")) {
		bad = gpu_list(j, value, &j->gpus_per_socket);
	} else if (!strcmp(name, "gpus")) {
		bad = gpu_list(j, value, &j->gpus_total);
	} else if (!strcmp(name, "gres") || !strcmp(name, "tres-per-node")) {
		uint32_t g = 0;

		bad = gres_list(j, value, &g, NULL);
		if (g)
			j->gpus_per_node = g;
	} else if (!strcmp(name, "tres-per-task")) {
		uint32_t cpus = 0, g = 0;

		bad = gres_list(j, value, &g, &cpus);
		if (g)
			j->gpus_per_task = g;
		if (cpus)
			j->cpus_per_task = cpus;
	}
	if (bad) {
		snprintf(err, errlen, "--%s=%s: %s count that is not a "
			 "whole number (expected [type:]count)", name, value,
			 bad == -2 ? "a shard" : bad == -3 ? "an MPS" : "a GPU");
		return -1;
	}
	return 0;
}

/*
 * Slurm's options that change a job's CPUs, tasks, memory, GPUs or nodes
 * and that memcore does not model at submission (the let-through option
 * rows of tests/integration/corpus/slurm_alloc.tsv, names and reasons
 * word for word; tests/cli/test_alloc_table.sh holds the two together).
 */
static const struct {
	const char *name, *why;
} let_through[] = {
	{ "ntasks-per-core",
	  "the most tasks a core, which can take more nodes" },
	{ "ntasks-per-socket",
	  "the most tasks a socket, which can take more nodes" },
	{ "extra-node-info",
	  "-B sockets:cores:threads selects nodes and their CPUs" },
	{ "core-spec",
	  "cores withheld for the system on each node" },
	{ "thread-spec",
	  "threads withheld for the system on each node" },
	{ "overcommit",
	  "fewer CPUs than tasks" },
	{ "oversubscribe",
	  "CPUs shared with other jobs" },
	{ "distribution",
	  "task placement over nodes and sockets" },
	{ "spread-job",
	  "the job spread over as many nodes as it can" },
	{ "use-min-nodes",
	  "the fewest nodes of a -N range" },
	{ "contiguous",
	  "contiguous nodes only" },
	{ "nodefile",
	  "which nodes, from a file: a job that fits some is let through" },
	{ "constraint",
	  "node features: a job that fits some nodes is let through" },
	{ "gres-flags",
	  "GPU-to-core binding such as enforce-binding" },
	{ "gpu-bind",
	  "the binding of tasks to GPUs" },
	{ "cpu-bind",
	  "the binding of tasks to CPUs" },
	{ "mem-bind",
	  "the binding of tasks to memory" },
	{ "whole",
	  "an srun step given its job's whole nodes" },
	{ "exact",
	  "an srun step given exactly the CPUs it asks" },
	{ "overlap",
	  "an srun step sharing its job's resources" },
};

const char *mc_slurm_let_through(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < sizeof(let_through) / sizeof(let_through[0]);
	     i++)
		if (!strcmp(name, let_through[i].name))
			return let_through[i].why;
	return NULL;
}

bool mc_slurm_may_give_more(const char *name, const char *value)
{
	static const char *const more[] = {
		"ntasks-per-core", "ntasks-per-socket", "spread-job",
		"extra-node-info", "whole", "core-spec", "thread-spec",
	};

	if (!name || !mc_slurm_let_through(name))
		return false;
	/* block and cyclic place the tasks memcore counts; plane,
	 * arbitrary and nopack change how many go to a node. */
	if (!strcmp(name, "distribution"))
		return value && (strstr(value, "plane") ||
				 strstr(value, "arbitrary") ||
				 strstr(value, "nopack"));
	for (size_t i = 0; i < sizeof(more) / sizeof(more[0]); i++)
		if (!strcmp(name, more[i]))
			return true;
	return false;
}

/* GPUs asked in a GPU form (not derived from --ntasks-per-gpu). */
static bool gpu_form(const struct mc_slurm_job *j)
{
	return j->gpus_per_node || j->gpus_per_task || j->gpus_per_socket ||
	       j->gpus_total;
}

/* -N with one count (min = max, or no max). */
static bool nodes_fixed(const struct mc_slurm_job *j)
{
	return j->nodes_min &&
	       (j->nodes_max == j->nodes_min || !j->nodes_max);
}

/*
 * The tasks and GPUs Slurm sets itself after the cli_filter (rules in
 * the header): what the user wrote in *in, what Slurm makes of it in
 * *out.
 */
static void slurm_sets(const struct mc_slurm_job *in,
		       struct mc_slurm_job *out)
{
	*out = *in;
	/* fewer tasks than -N: sbatch sets the nodes to the tasks ("can't
	 * run 1 processes on 2 nodes, setting nnodes to 1"; 22.05.8 gave
	 * -N2 -n1 --gpus=4 one node of 4 GPUs, test_63_oracle) */
	if (in->ntasks && in->nodes_min > in->ntasks) {
		out->nodes_min = in->ntasks;
		out->nodes_max = in->ntasks;
	}
	if (nodes_fixed(in) && !in->ntasks) {
		uint32_t t = in->nodes_min;
		bool set = false;

		if (in->srun) {
			if (in->sockets_per_node && in->cores_per_socket &&
			    in->threads_per_core) {
				t = mc_mul_sat32(t, in->sockets_per_node);
				t = mc_mul_sat32(t, in->cores_per_socket);
				t = mc_mul_sat32(t, in->threads_per_core);
				set = true;
			}
		} else {
			const uint32_t f[] = { in->sockets_per_node,
					       in->cores_per_socket,
					       in->threads_per_core };

			for (int i = 0; i < 3; i++)
				if (f[i]) {
					t = mc_mul_sat32(t, f[i]);
					set = true;
				}
		}
		/* tasks a node from -B's parts: each node gets its
		 * share (22.05.8 gave -N2 --sockets-per-node=1
		 * --threads-per-core=2 2 + 2, not packed; test_63_oracle) */
		if (set) {
			out->ntasks = t;
			out->tasks_even = true;
		}
	}
	if (in->ntasks_per_gpu && !gpu_form(in)) {
		if (!out->ntasks && nodes_fixed(in)) {
			out->ntasks = mc_mul_sat32(in->nodes_min,
						   in->ntasks_per_gpu);
			/* one GPU a node: its tasks, not packed */
			out->tasks_even = true;
		}
		out->gpus_total = out->ntasks / in->ntasks_per_gpu;
		out->ntasks_per_gpu = 0;	/* the tasks are given */
	}
}

bool mc_slurm_job_has_gpus(const struct mc_slurm_job *j)
{
	struct mc_slurm_job s;

	slurm_sets(j, &s);
	return gpu_form(&s);
}

static uint32_t div_up32(uint32_t a, uint32_t b)
{
	return b ? a / b + (a % b != 0) : a;
}

static uint32_t min32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/*
 * The threads of a core the job may use: one with --hint=nomultithread/
 * compute_bound/memory_bound or --threads-per-core=1, T with
 * --threads-per-core=T below the node's, else all. Slurm still
 * allocates whole cores, so a job of C CPUs gets ceil(C / that) cores
 * (22.05.8, seen by test_63_oracle: -c24 --threads-per-core=2 on 4
 * threads a core got 12 cores, --threads-per-core=2 --cpus-per-gpu=4
 * 2 cores).
 */
static uint32_t usable_tpc(const struct mc_slurm_job *j,
			   const struct mc_node_record *n)
{
	uint32_t tpc = n->threads_per_core ? n->threads_per_core : 1;

	if (j->one_thread_per_core)
		return 1;
	return j->threads_per_core && j->threads_per_core < tpc
	       ? j->threads_per_core : tpc;
}

/*
 * --gpus=N over -N: Slurm does not split the total evenly (cons_tres gives
 * each node at least one and fills nodes as it finds them: 22.05.8 put
 * 8 GPUs over -N2 as 7 + 1 and 12 as 8 + 4), so a node may get all but
 * one a node for the others, at most its own, and at least the even
 * share (a node with fewer cannot take part: judged as short). -N1: all
 * of them. The most on node n.
 */
static uint32_t total_worst(const struct mc_slurm_job *j,
			    const struct mc_node_record *n)
{
	uint32_t fewest = j->nodes_min ? j->nodes_min : 1;
	uint32_t most = j->nodes_max > fewest ? j->nodes_max : fewest;
	uint32_t even = div_up32(j->gpus_total, most);
	uint32_t w = j->gpus_total > fewest - 1 ? j->gpus_total - (fewest - 1)
						: 1;

	if (most > 1 && n->gpus && w > n->gpus)
		w = n->gpus;
	return w < even ? even : w;
}

/* GPUs and tasks of the job on node n. */
static void gpus_and_tasks(const struct mc_slurm_job *j,
			   const struct mc_node_record *n, uint32_t *gpus,
			   uint32_t *tasks, uint32_t *asked, uint32_t *packed)
{
	/* -N min-max: Slurm may use up to max nodes, the fewest GPUs and
	 * tasks a node (no false refusal for a range). */
	uint32_t nodes = j->nodes_max > j->nodes_min ? j->nodes_max
		       : j->nodes_min;
	uint32_t t = j->ntasks_per_node ? j->ntasks_per_node
		   : nodes && j->ntasks ? div_up32(j->ntasks, nodes)
		   : j->ntasks;
	uint32_t g = 0;

	*asked = 0;
	*packed = 0;
	/* -n without -N: Slurm takes as many nodes as the tasks' CPUs
	 * need, so a node holds at most what its CPUs hold. */
	uint32_t cpt = j->cpus_per_task ? j->cpus_per_task : 1;
	uint32_t fit = mc_mul_sat32(n->cores, usable_tpc(j, n)) / cpt;

	if (!nodes && !j->ntasks_per_node && t > 1 && n->cores) {
		if (fit && t > fit)
			t = fit;
	}
	/*
	 * -n over -N nodes: Slurm may pack the first nodes and give the
	 * last the rest, whatever --distribution (22.05.8: -N2 -n12
	 * --gpus-per-task=1 -c6 on 8-GPU nodes is 8 + 4, -N1-2 -n6 -c12 on
	 * 48 CPUs 4 + 2; issue 41), but not always to the full (-N2 -n8
	 * -c6 --gpus-per-node=2 on 128 cores 5 + 3, -N2 -n12
	 * --hint=nomultithread 6 + 6; test_63_oracle): judged, as --gpus
	 * over -N, at the most a node may get (a placement line says so
	 * and names --ntasks-per-node): all but one task for each other
	 * node of -N min, at most what its CPUs and (per task) GPUs hold,
	 * never fewer than the even split. *packed: that most.
	 */
	if (nodes && j->ntasks && !j->ntasks_per_node && !j->tasks_even &&
	    n->cores) {
		uint32_t most = j->ntasks - min32(j->ntasks,
						  j->nodes_min - 1);

		if (j->gpus_per_task && n->gpus)
			fit = min32(fit, n->gpus / j->gpus_per_task);
		if (fit && most > fit)
			most = fit;
		if (most > t) {
			*packed = most;
			t = most;
		}
	}
	if (j->gpus_per_node) {
		g = j->gpus_per_node;
	} else if (j->gpus_per_socket) {
		g = mc_mul_sat32(j->gpus_per_socket, j->sockets_per_node
				 ? j->sockets_per_node
				 : n->sockets ? n->sockets : 1);
		/* Slurm 22.05 on a node whose gres.conf binds no GPU to a
		 * socket (no Cores=) gives the node's GPUs, but sizes
		 * --cpus-per-gpu from the GPUs asked (seen by the
		 * submit-vs-launch corpus): never more than it has. */
		*asked = g;
		if (n->gpus && g > n->gpus)
			g = n->gpus;
	} else if (j->gpus_per_task) {
		if (!t)
			t = 1;
		/* -n without -N: Slurm spreads the tasks over as many
		 * nodes as their GPUs need; a node holds what fits it. */
		if (!nodes && !j->ntasks_per_node && n->gpus &&
		    n->gpus >= j->gpus_per_task)
			t = min32(t, n->gpus / j->gpus_per_task);
		g = mc_mul_sat32(j->gpus_per_task, t);
	} else if (j->gpus_total) {
		if (nodes) {
			/* every placement: judged at the most on a node */
			g = total_worst(j, n);
		} else {
			/* spread: at most the node's own */
			g = n->gpus ? min32(j->gpus_total, n->gpus)
				    : j->gpus_total;
			if (t && j->gpus_total > g)
				t = div_up32(mc_mul_sat32(t, g),
					     j->gpus_total);
		}
	}
	/* --ntasks-per-gpu with GPUs asked: that many tasks per GPU. */
	if (j->ntasks_per_gpu && g)
		t = mc_mul_sat32(g, j->ntasks_per_gpu);
	*gpus = g;
	*tasks = t ? t : 1;
	if (!*asked)
		*asked = g;
}

bool mc_slurm_type_excludes(const char *want, const char *have, char *why,
			    size_t len)
{
	/* "*": a bound of nodes whose type is unknown matches any */
	if (!want || !want[0] || !strcasecmp(want, have) || !strcmp(have, "*"))
		return false;
	snprintf(why, len, "its GPUs are %s, the job asks for %s",
		 have[0] ? have : "untyped", want);
	return true;
}

/*
 * The CPUs a node that slurmctld multiplies a per-CPU figure by to compare
 * it with MaxMemPerNode: from the request, not the allocation (22.05
 * job_mgr.c _valid_pn_min_mem): the node's CPUs for a whole-node job,
 * else max(--ntasks-per-node or 1, ceil(-n / -N max)) x -c, at least
 * --mincpus.
 */
static uint64_t limit_cpus(const struct mc_slurm_job *j,
			   const struct mc_slurm_part *p,
			   const struct mc_node_record *n, uint32_t tpc)
{
	uint32_t max_nodes = j->nodes_max > j->nodes_min ? j->nodes_max
			   : j->nodes_min;
	uint64_t c;

	if (j->exclusive == MC_EXCL_NODE || p->exclusive)
		return (uint64_t)n->cores * tpc;
	c = j->ntasks_per_node ? j->ntasks_per_node : 1;
	if (j->ntasks && max_nodes && div_up32(j->ntasks, max_nodes) > c)
		c = div_up32(j->ntasks, max_nodes);
	if (j->cpus_per_task)
		c *= j->cpus_per_task;
	return c < j->mincpus ? j->mincpus : c;
}

/*
 * The job's memory a node as slurmctld compares it with MaxMemPerNode
 * (job_limits_check -> _valid_pn_min_mem, 22.05): --mem's figure; a per-CPU
 * figure (--mem-per-cpu, else the partition's DefMemPerCPU) x limit_cpus();
 * DefMemPerNode for a job without --mem; and for --mem=0, --mem-per-gpu,
 * DefMemPerGPU and no memory at all (pn_min_memory 0) the partition's
 * first node's memory (_mem_per_node_part; p->first_node_mem_mb, else
 * this node's). In MB.
 */
static uint64_t limit_asked_mb(const struct mc_slurm_job *j,
			       const struct mc_slurm_part *p,
			       const struct mc_node_record *n, uint32_t tpc)
{
	uint64_t node_mb = p->first_node_mem_mb ? p->first_node_mem_mb
						: n->ram_bytes / MB;

	switch (j->mem_kind) {
	case MC_JOB_MEM_NODE:
		return j->mem_mb ? j->mem_mb : node_mb;
	case MC_JOB_MEM_CPU:
		return j->mem_mb ? mc_mul_sat64(j->mem_mb,
						limit_cpus(j, p, n, tpc))
				 : node_mb;
	case MC_JOB_MEM_GPU:
		return node_mb;
	case MC_JOB_MEM_NONE:
		break;
	}
	if (p->def_mem_per_cpu_mb)
		return mc_mul_sat64(p->def_mem_per_cpu_mb,
				    limit_cpus(j, p, n, tpc));
	return p->def_mem_per_node_mb ? p->def_mem_per_node_mb : node_mb;
}

/*
 * The GPUs and tasks the job gets on node n, whether they are fixed by
 * the job (g->gpus_fixed), and the placement line where --gpus over -N
 * leaves the split to Slurm. *asked: the GPUs its per-GPU options count.
 */
static void grant_gpus(const struct mc_slurm_job *j,
		       const struct mc_slurm_part *p,
		       const struct mc_node_record *n,
		       struct mc_slurm_grant *g, uint32_t *asked)
{
	uint32_t packed;

	gpus_and_tasks(j, n, &g->gpus, &g->tasks, asked, &packed);
	if (packed) {
		uint32_t most = j->nodes_max > j->nodes_min ? j->nodes_max
			      : j->nodes_min;

		snprintf(g->placement, sizeof(g->placement), "  placement: "
			 "Slurm may put up to %u of the %u tasks on one node "
			 "(-n over -N is packed, not split evenly), so this "
			 "is judged at %u; --ntasks-per-node=%u splits them "
			 "evenly", packed, j->ntasks, packed,
			 div_up32(j->ntasks, most));
	}
	/*
	 * A whole-node job (plain --exclusive, or a partition of
	 * OverSubscribe=EXCLUSIVE: whole_node 1, node_scheduler.c
	 * _resolve_shared_status) gets every GRES of its nodes
	 * (gres_ctld_job_select_whole_node): 22.05.8 gave -N1 --exclusive
	 * --gpus-per-node=4 all 8 GPUs of a g4dn node, and the launch
	 * judged 8.
	 */
	if ((j->exclusive == MC_EXCL_NODE || p->exclusive) && g->gpus &&
	    n->gpus > g->gpus)
		g->gpus = n->gpus;
	/* A total over several nodes depends on the node's own GPUs (the
	 * most it may get): only -N1 fixes it. */
	g->gpus_fixed = j->gpus_per_node ||
		(j->gpus_per_task && (j->ntasks_per_node ||
				      (j->nodes_min && !j->ntasks))) ||
		(j->gpus_total && j->nodes_min == 1 && j->nodes_max <= 1);
	if (j->gpus_total && j->nodes_min && !j->gpus_per_node &&
	    !j->gpus_per_socket && !j->gpus_per_task) {
		uint32_t most = j->nodes_max > j->nodes_min ? j->nodes_max
			      : j->nodes_min;
		uint32_t even = div_up32(j->gpus_total, most);
		int len = 0;

		if (g->gpus > even && !g->placement[0])
			len = snprintf(g->placement, sizeof(g->placement),
				       "  placement: Slurm may put up to %u of "
				       "the %u GPUs on one node (--gpus over -N "
				       "is not split evenly), so this is judged "
				       "at %u", g->gpus, j->gpus_total,
				       g->gpus);
		/* The even split exists only for a fixed -N dividing it. */
		if (len > 0 && (size_t)len < sizeof(g->placement))
			snprintf(g->placement + len,
				 sizeof(g->placement) - (size_t)len,
				 most == j->nodes_min &&
				 j->gpus_total % most == 0 ?
				 "; --gpus-per-node=%u splits them evenly" :
				 "; --gpus-per-node with a fixed -N gives every "
				 "node the same", j->gpus_total / most);
	}
}

/* Memory per CPU in MB (0: the job's memory is not per CPU), which
 * MaxMemPerCPU may trade for more CPUs: then *cpt, the CPUs per task,
 * is raised by the same factor. */
static uint64_t mem_per_cpu_mb(const struct mc_slurm_job *j,
			       const struct mc_slurm_part *p,
			       const struct mc_slurm_grant *g, uint32_t *cpt)
{
	uint64_t per_cpu = 0;

	if (j->mem_kind == MC_JOB_MEM_CPU && j->mem_mb)
		per_cpu = j->mem_mb;
	else if ((j->mem_kind == MC_JOB_MEM_NONE ||
		  (j->mem_kind == MC_JOB_MEM_GPU && !j->mem_mb)) &&
		 !(g->gpus && p->def_mem_per_gpu_mb) && p->def_mem_per_cpu_mb)
		per_cpu = p->def_mem_per_cpu_mb;
	if (per_cpu && p->max_mem_per_cpu_mb &&
	    per_cpu > p->max_mem_per_cpu_mb) {
		uint64_t f = (per_cpu + p->max_mem_per_cpu_mb - 1) /
			     p->max_mem_per_cpu_mb;

		*cpt = mc_mul_sat32(*cpt ? *cpt : 1, f > UINT32_MAX ? UINT32_MAX
				    : (uint32_t)f);
		per_cpu = (per_cpu + f - 1) / f;
	}
	return per_cpu;
}

/* The CPUs a node the job asks (cpus_asked): the most Slurm gives, the
 * fewest where Slurm decides as it allocates, and the floor MaxMemPerCPU
 * sets. */
struct cpu_ask {
	uint64_t cpus;			/* the grant */
	uint64_t low;			/* the fewest, with fewest */
	uint64_t node_cpus_min;		/* MaxMemPerCPU's raise; 0 none */
	bool fewest;
};

/*
 * Under MaxMemPerCPU, Slurm 22.05 raises the job's CPUs a node to the
 * memory over the limit, rounded up (src/slurmctld/job_mgr.c
 * _valid_pn_min_mem, "Setting job's pn_min_cpus to %u due to memory
 * limit"), so --mem=200G with MaxMemPerCPU=2000 gets 103 CPUs, not the 48
 * its GPUs ask. The figure is the one it compares (limit_asked_mb): for
 * --mem=0, --mem-per-cpu=0 and --mem-per-gpu the partition's first node's
 * memory, so a node with fewer CPUs than that takes is no place for the
 * job ("Requested node configuration is not available", seen on 22.05.8),
 * --exclusive included.
 */
static void max_mem_per_cpu_raise(const struct mc_slurm_job *j,
				  const struct mc_slurm_part *p,
				  const struct mc_node_record *n, uint32_t tpc,
				  const struct mc_slurm_grant *g,
				  struct cpu_ask *c)
{
	uint64_t need;

	/* no memory asked and no per-CPU or per-node default: the job's
	 * pn_min_memory is 0, the first node's memory (22.05.8 raised
	 * -N2 --cpus-per-gpu=4 --gpus-per-node=4 to 33 of 40 cores under
	 * MaxMemPerCPU=2000; test_63_oracle) */
	bool none0 = j->mem_kind == MC_JOB_MEM_NONE &&
		     !p->def_mem_per_cpu_mb && !p->def_mem_per_node_mb;

	if (!p->max_mem_per_cpu_mb || !(j->mem_kind == MC_JOB_MEM_NODE ||
	    j->mem_kind == MC_JOB_MEM_GPU || none0 ||
	    (j->mem_kind == MC_JOB_MEM_CPU && !j->mem_mb)))
		return;
	need = (limit_asked_mb(j, p, n, tpc) + p->max_mem_per_cpu_mb - 1) /
	       p->max_mem_per_cpu_mb;
	/* With its CPUs shaped per socket (-B's parts), 22.05.8 gave -N1
	 * --cores-per-socket=6 -c2 --mem=200G under MaxMemPerCPU=2000 its
	 * tasks' 12 CPUs on a 160-CPU node, not 103: the raise kept it off
	 * smaller nodes but did not size it. No rule for that was found in
	 * job_test.c, so both ends are judged (what it asks, and the
	 * raise), as for cores_fewest (cpus_asked). */
	/* The same with a task count (-n): 22.05.8 gave -n1 -c2
	 * --gres=gpu:2 --mem=150G, -n4 --gpus-per-task=1 --mem=100G and -n1
	 * --gpus=4 --mem=200G their tasks' CPUs under MaxMemPerCPU=2000
	 * (test_63_oracle). */
	if ((j->sockets_per_node || j->cores_per_socket ||
	     j->threads_per_core || j->ntasks || j->ntasks_per_gpu) &&
	    g->gpus && c->cpus < need) {
		if (!c->fewest)
			c->low = c->cpus;
		c->fewest = true;
	} else if (c->low < need) {
		c->low = need;
	}
	if (c->cpus < need)
		c->cpus = need;
	c->node_cpus_min = need;
}

/* The job's CPUs on the node: its tasks x -c, its GPUs x
 * --cpus-per-gpu, at least --mincpus, and MaxMemPerCPU's raise. */
static void cpus_asked(const struct mc_slurm_job *j,
		       const struct mc_slurm_part *p,
		       const struct mc_node_record *n, uint32_t tpc,
		       const struct mc_slurm_grant *g, uint32_t cpt,
		       uint32_t cpg, uint32_t asked, struct cpu_ask *c)
{
	/*
	 * --ntasks-per-gpu and -c without -n or --ntasks-per-node: the
	 * tasks come from the GPUs (gres.c gres_job_state_validate), but
	 * sbatch sized min_cpus from its own one task a node (slurm_opt.c
	 * slurm_opt_create_job_desc: ntasks x cpus_per_task, 22.05 to
	 * 26.05) and select/cons_tres job_test.c takes the most of that,
	 * one CPU a task and cpus_per_gres, so Slurm may give as few as
	 * max(tasks, -c), and it does not say when: 22.05.8 on a 96-CPU
	 * node gave --gpus-per-node=4 --ntasks-per-gpu=1 -c3 12 CPUs (all
	 * tasks x -c), -c4 4, -c12 12, with --ntasks-per-gpu=2 -c6 48, and
	 * --gpus-per-node=8 --ntasks-per-gpu=1 -c6 48. The grant is tasks
	 * x -c and cores_fewest the fewest: the judgement lets a job
	 * through that fits only the most (mc_rules.h).
	 */
	/* The same with -n below the tasks --ntasks-per-gpu gives (22.05.8:
	 * -n1 -c4 --gpus-per-node=2 --ntasks-per-gpu=1 got 4 CPUs, -n3 -c4
	 * --gpus-per-node=4 --ntasks-per-gpu=1 12; test_63_oracle):
	 * sbatch's min_cpus is -n x -c. */
	uint64_t own = (uint64_t)(j->ntasks ? j->ntasks : 1) * (cpt ? cpt : 1);

	c->fewest = j->ntasks_per_gpu && !j->ntasks_per_node && cpt > 1 &&
		    g->gpus && (!j->ntasks || j->ntasks < g->tasks);
	c->cpus = (uint64_t)g->tasks * (cpt ? cpt : 1);
	c->low = g->tasks > own ? g->tasks : own;
	c->node_cpus_min = 0;
	if ((uint64_t)asked * cpg > c->cpus)
		c->cpus = (uint64_t)asked * cpg;
	if ((uint64_t)asked * cpg > c->low)
		c->low = (uint64_t)asked * cpg;
	if (c->cpus < j->mincpus)
		c->cpus = j->mincpus;
	if (c->low < j->mincpus)
		c->low = j->mincpus;
	max_mem_per_cpu_raise(j, p, n, tpc, g, c);
}

/* The cores granted for those CPUs: all of them with plain --exclusive;
 * whole cores, whose threads are the job's CPUs (one each with
 * --hint=nomultithread); the fewest where Slurm decides. */
static void grant_cores(const struct mc_slurm_job *j,
			const struct mc_slurm_part *p,
			const struct mc_node_record *n, uint32_t tpc,
			const struct cpu_ask *c, struct mc_slurm_grant *g)
{
	uint32_t cpus = c->cpus > UINT32_MAX ? UINT32_MAX
		      : (uint32_t)c->cpus;
	uint32_t cores, ut = usable_tpc(j, n);
	bool whole_node = j->exclusive == MC_EXCL_NODE || p->exclusive;

	if (whole_node) {
		cores = n->cores;
		if ((uint64_t)cores * tpc < c->node_cpus_min)
			cores = div_up32(cpus, tpc);
	} else {
		cores = div_up32(cpus, ut);
	}
	g->cpus = mc_mul_sat32(cores, ut);
	g->alloc.cores = cores;
	g->alloc.tasks = g->tasks;
	if (c->fewest && !whole_node) {
		uint32_t l32 = c->low > UINT32_MAX ? UINT32_MAX
			     : (uint32_t)c->low;
		uint32_t lc = div_up32(l32, ut);

		if (lc < cores)
			g->alloc.cores_fewest = lc;
	}
	/* Where -c leaves the CPUs to Slurm, the fix asks per GPU, which
	 * Slurm honours (cpus_per_gres). */
	if (j->cpus_per_task && !j->cpus_per_gpu && !g->alloc.cores_fewest)
		g->alloc.cpu_form = MC_CPUS_PER_TASK;
}

/* The memory granted, in Slurm's order (the job's option, else the
 * partition's DefMemPerGPU, DefMemPerCPU, DefMemPerNode, else the whole
 * node), where it came from, and MaxMemPerNode's limit. per_cpu: from
 * mem_per_cpu_mb. */
static void grant_memory(const struct mc_slurm_job *j,
			 const struct mc_slurm_part *p,
			 const struct mc_node_record *n, uint32_t tpc,
			 uint64_t per_cpu, struct mc_slurm_grant *g)
{
	uint64_t mem_mb = 0;
	bool whole = false;
	const char *src = NULL;
	char b[32];
	enum mc_job_mem kind = j->mem_kind;

	/* --mem-per-gpu=0 is no memory asked: the partition's default
	 * applies (22.05.8: DefMemPerGPU's 187.5 GiB, issue 41; DefMemPerCPU
	 * x the CPUs, test_63_oracle), the whole node only without one. */
	if (kind == MC_JOB_MEM_GPU && !j->mem_mb)
		kind = MC_JOB_MEM_NONE;
	switch (kind) {
	case MC_JOB_MEM_NODE:
		whole = !j->mem_mb;
		mem_mb = j->mem_mb;
		src = j->mem_opt;
		break;
	case MC_JOB_MEM_GPU:
		whole = !j->mem_mb;
		mem_mb = j->mem_mb * g->gpus;
		g->alloc.mem_form = MC_MEM_PER_GPU;
		src = j->mem_opt;
		break;
	case MC_JOB_MEM_CPU:
		whole = !j->mem_mb;
		mem_mb = per_cpu * g->cpus;
		g->alloc.mem_form = MC_MEM_PER_CPU;
		src = j->mem_opt;
		break;
	case MC_JOB_MEM_NONE:
		if (g->gpus && p->def_mem_per_gpu_mb) {
			mem_mb = p->def_mem_per_gpu_mb * g->gpus;
			g->alloc.mem_form = MC_MEM_PER_GPU;
			snprintf(g->mem_source, sizeof(g->mem_source),
				 "DefMemPerGPU=%s", mc_fmt_mem_option(
				 p->def_mem_per_gpu_mb * MB, b, sizeof(b)));
		} else if (per_cpu) {
			mem_mb = per_cpu * g->cpus;
			g->alloc.mem_form = MC_MEM_PER_CPU;
			snprintf(g->mem_source, sizeof(g->mem_source),
				 "DefMemPerCPU=%s x %u CPUs", mc_fmt_mem_option(
				 per_cpu * MB, b, sizeof(b)), g->cpus);
		} else if (p->def_mem_per_node_mb) {
			mem_mb = p->def_mem_per_node_mb;
			snprintf(g->mem_source, sizeof(g->mem_source),
				 "DefMemPerNode=%s", mc_fmt_mem_option(
				 mem_mb * MB, b, sizeof(b)));
		} else {
			whole = true;
		}
		break;
	}
	if (kind != j->mem_kind) {	/* --mem-per-gpu=0 */
		char d[96];

		snprintf(d, sizeof(d), "%s", whole ? "the whole node"
			 : g->mem_source);
		snprintf(g->mem_source, sizeof(g->mem_source), "%s: %s",
			 j->mem_opt, d);
		g->alloc.mem_form = MC_MEM_PER_GPU;
	} else if (src) {
		snprintf(g->mem_source, sizeof(g->mem_source), "%s%s", src,
			 whole ? ": the whole node" : "");
	} else if (whole) {
		snprintf(g->mem_source, sizeof(g->mem_source),
			 "the whole node");
	}
	g->alloc.mem_bytes = whole ? n->ram_bytes
				   : mc_mul_sat64(mem_mb, MB);
	g->alloc.mem_source = g->mem_source;
	if (p->max_mem_per_node_mb) {
		g->alloc.mem_limit_bytes = mc_mul_sat64(p->max_mem_per_node_mb,
							MB);
		g->alloc.mem_limit_asked_bytes = mc_mul_sat64(
			limit_asked_mb(j, p, n, tpc), MB);
	}
}

void mc_slurm_alloc(const struct mc_slurm_job *asked_job,
		    const struct mc_slurm_part *p,
		    const struct mc_node_record *n,
		    struct mc_slurm_grant *g)
{
	struct mc_slurm_job eff, *j = &eff;
	uint32_t tpc = n->threads_per_core ? n->threads_per_core : 1;
	uint32_t cpt, cpg, asked;
	uint64_t per_cpu;
	struct cpu_ask c;

	slurm_sets(asked_job, &eff);	/* what Slurm makes of the options */
	cpt = j->cpus_per_task;
	cpg = j->cpus_per_gpu;
	memset(g, 0, sizeof(*g));
	g->alloc.requested = true;
	if (mc_slurm_type_excludes(j->gpu_type, n->gpu_type, g->why,
				   sizeof(g->why))) {
		g->excluded = true;
		return;
	}
	grant_gpus(j, p, n, g, &asked);
	per_cpu = mem_per_cpu_mb(j, p, g, &cpt);
	/* CPUs as asked; per GPU by the partition's default when the job
	 * names none. */
	if (!cpt && !cpg && g->gpus)
		cpg = p->def_cpu_per_gpu;
	cpus_asked(j, p, n, tpc, g, cpt, cpg, asked, &c);
	grant_cores(j, p, n, tpc, &c, g);
	grant_memory(j, p, n, tpc, per_cpu, g);
}
