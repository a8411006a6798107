/*
 * mc_plan.c - the binding plan (see mc_plan.h).
 */
#include "mc_plan.h"
#include "mc_parse.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mc_list.h"

const char *mc_plan_cpulist(hwloc_const_bitmap_t set, char *buf,
			    size_t buflen)
{
	if (!buflen)
		return buf;
	buf[0] = '\0';
	/* hwloc's list format is Slurm's ("0-3,8"); an empty set prints
	 * nothing, an infinite one cannot come from a plan. */
	if (set && !hwloc_bitmap_iszero(set))
		hwloc_bitmap_list_snprintf(buf, buflen, set);
	return buf;
}

void mc_plan_node_cpus(const struct mc_node_facts *f, hwloc_bitmap_t set)
{
	hwloc_bitmap_zero(set);
	for (unsigned pu = 0; pu < MC_MAX_PUS; pu++)
		if (f->pu_core[pu] != MC_PU_NONE)
			hwloc_bitmap_set(set, pu);
}

int mc_plan_parse_cpulist(const char *s, hwloc_bitmap_t set)
{
	unsigned *idx;
	int n;

	/* mc_list_parse is the strict parser used for every Slurm list;
	 * hwloc's own accepts "0-" (infinite) and trailing junk. */
	n = mc_list_parse(s, NULL, MC_LIST_INDEX_MAX + 1u);
	if (n < 0)
		return -1;
	idx = calloc((size_t)n, sizeof(*idx));
	if (!idx)
		return -1;
	n = mc_list_parse(s, idx, (size_t)n);
	hwloc_bitmap_zero(set);
	for (int i = 0; i < n; i++)
		hwloc_bitmap_set(set, idx[i]);
	free(idx);
	return n < 0 ? -1 : 0;
}

void mc_plan_free(struct mc_plan *plan)
{
	for (size_t i = 0; i < plan->n; i++)
		hwloc_bitmap_free(plan->gpu[i].cpus);
	plan->n = 0;
}

/* A NUMA node's CPUs into set, from the mask the loader parsed once
 * (mc_topology.h): -1 when it has none. m is one of f->numa[]; words[] (0:
 * not known yet, else 1 + the mask's words up to its last CPU) keeps what
 * a plan found for each node, as a plan asks for the same nodes often. */
static int numa_cpus(const struct mc_node_facts *f, const struct mc_numa *m,
		     unsigned *words, hwloc_bitmap_t set)
{
	unsigned *w = &words[m - f->numa];
	unsigned nr;

	/* Only the words up to the last CPU: the same set, and every
	 * bitmap operation after it on this set walks that many words,
	 * not the 64 of a 4096-PU mask. */
	if (!*w) {
		nr = MC_CPUMASK_WORDS;
		while (nr && !m->cpu_mask[nr - 1])
			nr--;
		*w = nr + 1;
	}
	nr = *w - 1;
	if (!nr)
		return -1;
	if (hwloc_bitmap_from_ulongs(set, nr, m->cpu_mask) < 0)
		return -1;
	return hwloc_bitmap_iszero(set) ? -1 : 0;
}

static const struct mc_numa *find_numa(const struct mc_node_facts *f,
				       int os_index)
{
	for (uint32_t i = 0; os_index >= 0 && i < f->n_numa; i++)
		if (f->numa[i].os_index == (unsigned)os_index)
			return &f->numa[i];
	return NULL;
}

/* The core (its lowest PU) of PU `pu`; a PU the facts do not know is
 * its own core, so a plan never gives away a PU twice. */
static unsigned core_of(const struct mc_node_facts *f, unsigned pu)
{
	if (pu < MC_MAX_PUS && f->pu_core[pu] != MC_PU_NONE)
		return f->pu_core[pu];
	return pu;
}

/* Hyperthreads per core on this NUMA node, for the --cpus-per-gpu hint
 * (Slurm counts CPUs there, we count cores). */
static unsigned threads_per_core(const struct mc_numa *m,
				 hwloc_const_bitmap_t numa_set)
{
	int pus = hwloc_bitmap_weight(numa_set);

	if (!m->cores || pus <= 0)
		return 1;
	return ((unsigned)pus + m->cores - 1) / m->cores;
}

/*
 * Give GPU g up to g->cores_wanted cores from `free_set` (its NUMA node's
 * allowed CPUs not yet taken), lowest first, with every free PU of each
 * chosen core.
 *
 * free_set is a subset of a NUMA node's mask (MC_CPUMASK_WORDS words), so
 * it is walked as plain words: hwloc_bitmap_foreach over a 4096-bit set
 * (and its assert's hwloc_bitmap_weight on every pass) for each core was
 * most of a plan's time. A chosen core's siblings are looked for from its
 * first free PU on: one below it would have been met first and taken the
 * core (and this PU with it).
 */
static void take_cores(const struct mc_node_facts *f,
		       hwloc_const_bitmap_t free_set, struct mc_plan_gpu *g)
{
	const unsigned bits = 8 * sizeof(unsigned long);
	unsigned long fw[MC_CPUMASK_WORDS];
	int nr = hwloc_bitmap_nr_ulongs(free_set);
	unsigned nw;

	if (g->cores >= g->cores_wanted || nr <= 0)
		return;
	nw = (unsigned)nr < MC_CPUMASK_WORDS ? (unsigned)nr : MC_CPUMASK_WORDS;
	hwloc_bitmap_to_ulongs(free_set, nw, fw);
	for (unsigned w = 0; w < nw; w++) {
		for (unsigned long x = fw[w]; x; x &= x - 1) {
			unsigned pu = w * bits + (unsigned)__builtin_ctzl(x);
			unsigned core = core_of(f, pu);

			if (g->cores >= g->cores_wanted)
				return;
			if (hwloc_bitmap_isset(g->cpus, pu))
				continue;	/* a sibling of a core taken */
			g->cores++;
			for (unsigned v = w; v < nw; v++) {
				unsigned long y = v == w ? x : fw[v];

				for (; y; y &= y - 1) {
					unsigned sib = v * bits +
						(unsigned)__builtin_ctzl(y);

					if (core_of(f, sib) == core)
						hwloc_bitmap_set(g->cpus, sib);
				}
			}
		}
	}
}

static void warn_none(struct mc_plan_gpu *g, const struct mc_numa *m,
		      hwloc_const_bitmap_t numa_set,
		      hwloc_const_bitmap_t allowed_numa,
		      hwloc_const_bitmap_t allowed, const char *takers)
{
	char numa_list[MC_CPULIST_MAX], allowed_list[MC_CPULIST_MAX];
	unsigned cpg = g->cores_wanted * threads_per_core(m, numa_set);

	if (hwloc_bitmap_iszero(allowed_numa)) {
		/* The lists only this text names: the other one has none. */
		mc_plan_cpulist(numa_set, numa_list, sizeof(numa_list));
		mc_plan_cpulist(allowed, allowed_list, sizeof(allowed_list));
		snprintf(g->warning, sizeof(g->warning),
			 "memcore: GPU %u is on NUMA node %d (CPUs %s), but "
			 "none of those CPUs is among the CPUs this task may "
			 "use (%s): it keeps them, and GPU %u's host memory "
			 "traffic crosses NUMA nodes. To get cores next to "
			 "the GPU: srun --cpus-per-gpu=%u "
			 "--gres-flags=enforce-binding (allocates cores on "
			 "the GPU's socket; needs Cores= in gres.conf), or "
			 "--gpu-bind=closest (gives each task the GPU next "
			 "to its cores)",
			 g->index, g->numa_os_index, numa_list,
			 allowed_list[0] ? allowed_list : "none", g->index,
			 cpg);
	} else {
		snprintf(g->warning, sizeof(g->warning),
			 "memcore: GPU %u is on NUMA node %d, but the cores of "
			 "that node this task may use went to GPUs %s: GPU %u "
			 "gets none of its own. Ask for more cores next to "
			 "the GPUs: srun --cpus-per-gpu=%u "
			 "--gres-flags=enforce-binding",
			 g->index, g->numa_os_index, takers, g->index, cpg);
	}
}

/* Position of NUMA node os_index in f->numa[], or -1. */
static int numa_pos(const struct mc_node_facts *f, int os_index)
{
	for (uint32_t i = 0; os_index >= 0 && i < f->n_numa; i++)
		if (f->numa[i].os_index == (unsigned)os_index)
			return (int)i;
	return -1;
}

/* How far NUMA node b is from a (positions in f->numa[]): hwloc's latency
 * matrix when the topology has one, else 1 in the same package and 2
 * across packages (or when the package is unknown). */
static unsigned numa_distance(const struct mc_node_facts *f, int a, int b)
{
	if (f->numa_distances)
		return f->numa_distance[a][b];
	return f->numa[a].package >= 0 &&
	       f->numa[a].package == f->numa[b].package ? 1 : 2;
}

/* has_gpu[i]: whether any GPU of the node sits on NUMA node numa[i]. */
static void numa_gpus(const struct mc_node_facts *f, bool *has_gpu)
{
	for (uint32_t i = 0; i < f->n_numa; i++) {
		has_gpu[i] = false;
		for (uint32_t k = 0; k < f->n_gpus && !has_gpu[i]; k++)
			if (f->gpus[k].numa_os_index == (int)f->numa[i].os_index)
				has_gpu[i] = true;
	}
}

/*
 * The NUMA nodes a GPU on numa[own] borrows cores from when its own has
 * too few (NPS4, SNC): nearest first; at the same distance a GPU-less
 * node before another GPU's (has_gpu[], numa_gpus()); then by P#. Returns
 * how many, in order[].
 */
static size_t spill_order(const struct mc_node_facts *f, int own,
			  const bool *has_gpu, int *order)
{
	size_t n = 0;

	for (uint32_t i = 0; i < f->n_numa; i++) {
		size_t j;

		if ((int)i == own)
			continue;
		/* insertion sort: at most MC_MAX_NUMA nodes */
		for (j = n; j > 0; j--) {
			int o = order[j - 1];
			unsigned di = numa_distance(f, own, (int)i);
			unsigned dO = numa_distance(f, own, o);
			bool gi = has_gpu[i];
			bool gO = has_gpu[o];

			if (dO < di || (dO == di && (gO < gi ||
			    (gO == gi && f->numa[o].os_index <
					 f->numa[i].os_index))))
				break;
			order[j] = order[j - 1];
		}
		order[j] = (int)i;
		n++;
	}
	return n;
}

static int cmp_unsigned(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return x < y ? -1 : x > y;
}

/* The plan entry of Slurm GPU `index` (present: the caller listed it). */
static struct mc_plan_gpu *by_index(struct mc_plan *plan, unsigned index)
{
	for (size_t i = 0; i < plan->n; i++)
		if (plan->gpu[i].index == index)
			return &plan->gpu[i];
	return &plan->gpu[0];
}

/* out = set & allowed (when given) minus what GPUs already took. */
static void allowed_free(hwloc_const_bitmap_t set, hwloc_const_bitmap_t allowed,
			 hwloc_const_bitmap_t taken, hwloc_bitmap_t out)
{
	if (allowed)
		hwloc_bitmap_and(out, set, allowed);
	else
		hwloc_bitmap_copy(out, set);
	hwloc_bitmap_andnot(out, out, taken);
}

/* takers()'s list so far: GPUs order[0..k) looked at for NUMA node numa,
 * len as the loop left it. */
struct takers_memo {
	bool valid;
	int numa;
	size_t k, len;
};

/* "0, 1": the GPUs before order[k] that took cores of g's NUMA node.
 * Asked with a growing k (the warnings' loop), it goes on from where the
 * last call for the same node stopped (memo) instead of from order[0]:
 * the same appends in the same order, so the same text. */
static const char *takers(const struct mc_plan *plan, const unsigned *order,
			  size_t k, const struct mc_plan_gpu *g, char *buf,
			  size_t buflen, struct takers_memo *memo)
{
	size_t len = 0, j0 = 0;

	if (memo->valid && memo->numa == g->numa_os_index && memo->k <= k) {
		j0 = memo->k;
		len = memo->len;
	} else {
		buf[0] = '\0';
	}
	for (size_t j = j0; j < k; j++)
		for (size_t i = 0; i < plan->n; i++)
			if (plan->gpu[i].index == order[j] &&
			    plan->gpu[i].cores &&
			    plan->gpu[i].numa_os_index == g->numa_os_index &&
			    len < buflen)
				len += (size_t)snprintf(buf + len,
							buflen - len, "%s%u",
							len ? ", " : "",
							order[j]);
	memo->valid = true;
	memo->numa = g->numa_os_index;
	memo->k = k;
	memo->len = len;
	return buf[0] ? buf : "others";
}

/* Some cores, but fewer than it wants even from the nearest other nodes. */
static void warn_short(struct mc_plan_gpu *g, const struct mc_numa *m,
		       hwloc_const_bitmap_t numa_set,
		       hwloc_const_bitmap_t allowed)
{
	char allowed_list[MC_CPULIST_MAX];
	unsigned cpg = g->cores_wanted * threads_per_core(m, numa_set);

	mc_plan_cpulist(allowed, allowed_list, sizeof(allowed_list));
	snprintf(g->warning, sizeof(g->warning),
		 "memcore: GPU %u gets %u of the %u cores it needs (the "
		 "cores rule): the CPUs this task may use (%s) hold no more free "
		 "cores, on NUMA node %d or near it. Ask for more: srun "
		 "--cpus-per-gpu=%u", g->index, g->cores, g->cores_wanted,
		 allowed_list[0] ? allowed_list : "all", g->numa_os_index,
		 cpg);
}

/* mc_plan_compute's working state, shared by its passes. */
struct plan_work {
	const struct mc_node_facts *f;
	hwloc_const_bitmap_t allowed;	/* NULL: every CPU */
	hwloc_bitmap_t taken;		/* CPUs given to a GPU so far */
	hwloc_bitmap_t numa_set, avail;	/* scratch */
	unsigned words[MC_MAX_NUMA];	/* numa_cpus's parse, per node */
	unsigned order[MC_MAX_GPUS];	/* the GPUs in Slurm index order */
	size_t n;
};

/* The GPUs asked for: on the node, each once. */
static int check_gpus(const unsigned *gpus, size_t n, uint32_t node_gpus,
		      char *err, size_t errlen)
{
	if (n > MC_MAX_GPUS || n > node_gpus)
		return mc_err(err, errlen, "%zu GPUs asked for, the node has %u",
			      n, node_gpus);
	for (size_t i = 0; i < n; i++) {
		if (gpus[i] >= node_gpus)
			return mc_err(err, errlen, "GPU %u is not on this node "
				      "(%u GPUs)", gpus[i], node_gpus);
		for (size_t j = 0; j < i; j++)
			if (gpus[j] == gpus[i])
				return mc_err(err, errlen, "GPU %u listed "
					      "twice", gpus[i]);
	}
	return 0;
}

/* Each GPU's entry of the plan, empty, with its NUMA node and the cores
 * it wants; w->order the GPUs in Slurm index order. */
static int plan_entries(struct plan_work *w, unsigned cores_per_gpu,
			const unsigned *gpus, struct mc_plan *plan, char *err,
			size_t errlen)
{
	for (size_t i = 0; i < w->n; i++) {
		struct mc_plan_gpu *g = &plan->gpu[i];

		memset(g, 0, sizeof(*g));
		g->cpus = hwloc_bitmap_alloc();
		plan->n = i + 1;
		if (!g->cpus)
			return mc_err(err, errlen, "out of memory");
		g->index = gpus[i];
		/* A MIG slice binds like its parent card. */
		g->numa_os_index = mc_topology_gpu_numa(w->f, gpus[i]);
		g->cores_wanted = cores_per_gpu ? cores_per_gpu : 1;
		w->order[i] = gpus[i];
	}
	/* Slurm index order decides who gets the lowest cores, whatever
	 * order the caller listed the GPUs in: every task must agree. */
	qsort(w->order, w->n, sizeof(w->order[0]), cmp_unsigned);
	return 0;
}

/* Pass 1: every GPU takes from its own NUMA node first, so that a lower
 * GPU's borrowing never takes a higher GPU's own cores. */
static void take_own_node(struct plan_work *w, struct mc_plan *plan)
{
	const struct mc_node_facts *f = w->f;

	for (size_t k = 0; k < w->n; k++) {
		struct mc_plan_gpu *g = by_index(plan, w->order[k]);
		const struct mc_numa *m = find_numa(f, g->numa_os_index);

		if (!m) {
			g->outside = true;
			snprintf(g->warning, sizeof(g->warning),
				 "memcore: GPU %u: the node's topology gives "
				 "it no NUMA node with CPUs, so it is not "
				 "bound", g->index);
			continue;
		}
		if (numa_cpus(f, m, w->words, w->numa_set) < 0) {
			g->outside = true;
			snprintf(g->warning, sizeof(g->warning),
				 "memcore: GPU %u: NUMA node %d has no usable "
				 "CPU list ('%s'), so it is not bound",
				 g->index, g->numa_os_index, m->cpus);
			continue;
		}
		allowed_free(w->numa_set, w->allowed, w->taken, w->avail);
		take_cores(f, w->avail, g);
		/* No CPU of its node allowed: a locality problem, which
		 * borrowing from elsewhere would only hide. */
		if (w->allowed)
			hwloc_bitmap_and(w->numa_set, w->numa_set, w->allowed);
		g->outside = hwloc_bitmap_iszero(w->numa_set);
		g->cores_local = g->cores;
		hwloc_bitmap_or(w->taken, w->taken, g->cpus);
	}
}

/* Pass 2: a GPU whose node is short borrows from the nearest nodes. The
 * order depends on the GPU's NUMA node only: made again only when it
 * differs from the last short GPU's (neighbours in index order mostly
 * share a node). */
static void borrow_near(struct plan_work *w, struct mc_plan *plan)
{
	const struct mc_node_facts *f = w->f;
	bool has_gpu[MC_MAX_NUMA], has_gpu_done = false;
	int near[MC_MAX_NUMA], near_of = -1;
	size_t nn = 0;

	for (size_t k = 0; k < w->n; k++) {
		struct mc_plan_gpu *g = by_index(plan, w->order[k]);
		int own = numa_pos(f, g->numa_os_index);

		if (g->outside || own < 0 || g->warning[0] ||
		    g->cores >= g->cores_wanted)
			continue;
		if (!has_gpu_done) {
			numa_gpus(f, has_gpu);
			has_gpu_done = true;
		}
		if (own != near_of) {
			nn = spill_order(f, own, has_gpu, near);
			near_of = own;
		}
		for (size_t j = 0; j < nn && g->cores < g->cores_wanted; j++) {
			if (numa_cpus(f, &f->numa[near[j]], w->words,
				      w->numa_set) < 0)
				continue;
			allowed_free(w->numa_set, w->allowed, w->taken,
				     w->avail);
			take_cores(f, w->avail, g);
		}
		hwloc_bitmap_or(w->taken, w->taken, g->cpus);
	}
}

/* The warnings: none at all, or fewer than w + 1 anywhere. */
static void plan_warnings(struct plan_work *w, struct mc_plan *plan)
{
	const struct mc_node_facts *f = w->f;
	char takers_buf[MC_PLAN_MSG_MAX / 4];
	struct takers_memo memo = { .valid = false };

	for (size_t k = 0; k < w->n; k++) {
		struct mc_plan_gpu *g = by_index(plan, w->order[k]);
		const struct mc_numa *m = find_numa(f, g->numa_os_index);

		if (g->warning[0] || !m ||
		    numa_cpus(f, m, w->words, w->numa_set) < 0)
			continue;
		if (w->allowed)
			hwloc_bitmap_and(w->avail, w->numa_set, w->allowed);
		else
			hwloc_bitmap_copy(w->avail, w->numa_set);
		if (g->cores == 0)
			warn_none(g, m, w->numa_set, w->avail, w->allowed,
				  takers(plan, w->order, k, g, takers_buf,
					 sizeof(takers_buf), &memo));
		else if (g->cores < g->cores_wanted)
			warn_short(g, m, w->numa_set, w->allowed);
	}
}

int mc_plan_compute(const struct mc_node_facts *f, unsigned cores_per_gpu,
		    hwloc_const_bitmap_t allowed, const unsigned *gpus,
		    size_t n, struct mc_plan *plan, char *err, size_t errlen)
{
	static const struct plan_work zero;
	struct plan_work w = zero;
	/* Slurm's GPUs: MIG slices count as GPUs when there are any. */
	uint32_t node_gpus = mc_topology_slurm_gpus(f);
	int rc = -1;

	w.f = f;
	w.allowed = allowed;
	w.n = n;
	w.taken = hwloc_bitmap_alloc();
	w.numa_set = hwloc_bitmap_alloc();
	w.avail = hwloc_bitmap_alloc();
	plan->n = 0;
	if (!w.taken || !w.numa_set || !w.avail) {
		mc_err(err, errlen, "out of memory");
		goto out;
	}
	if (check_gpus(gpus, n, node_gpus, err, errlen) < 0 ||
	    plan_entries(&w, cores_per_gpu, gpus, plan, err, errlen) < 0)
		goto out;
	take_own_node(&w, plan);
	borrow_near(&w, plan);
	plan_warnings(&w, plan);
	rc = 0;
out:
	if (rc < 0)
		mc_plan_free(plan);
	hwloc_bitmap_free(w.taken);
	hwloc_bitmap_free(w.numa_set);
	hwloc_bitmap_free(w.avail);
	return rc;
}
