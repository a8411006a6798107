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
 */
static void take_cores(const struct mc_node_facts *f,
		       hwloc_const_bitmap_t free_set, struct mc_plan_gpu *g)
{
	int pu;

	hwloc_bitmap_foreach_begin(pu, free_set) {
		unsigned core = core_of(f, (unsigned)pu);
		int sib;

		if (g->cores >= g->cores_wanted)
			break;
		if (hwloc_bitmap_isset(g->cpus, (unsigned)pu))
			continue;	/* a sibling of a core already taken */
		g->cores++;
		hwloc_bitmap_foreach_begin(sib, free_set) {
			if (core_of(f, (unsigned)sib) == core)
				hwloc_bitmap_set(g->cpus, (unsigned)sib);
		} hwloc_bitmap_foreach_end();
	} hwloc_bitmap_foreach_end();
}

static void warn_none(struct mc_plan_gpu *g, const struct mc_numa *m,
		      hwloc_const_bitmap_t numa_set,
		      hwloc_const_bitmap_t allowed_numa,
		      hwloc_const_bitmap_t allowed, const char *takers)
{
	char numa_list[MC_CPULIST_MAX], allowed_list[MC_CPULIST_MAX];
	unsigned cpg = g->cores_wanted * threads_per_core(m, numa_set);

	mc_plan_cpulist(numa_set, numa_list, sizeof(numa_list));
	mc_plan_cpulist(allowed, allowed_list, sizeof(allowed_list));
	if (hwloc_bitmap_iszero(allowed_numa))
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
	else
		snprintf(g->warning, sizeof(g->warning),
			 "memcore: GPU %u is on NUMA node %d, but the cores of "
			 "that node this task may use went to GPUs %s: GPU %u "
			 "gets none of its own. Ask for more cores next to "
			 "the GPUs: srun --cpus-per-gpu=%u "
			 "--gres-flags=enforce-binding",
			 g->index, g->numa_os_index, takers, g->index, cpg);
}

static int cmp_unsigned(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return x < y ? -1 : x > y;
}

int mc_plan_compute(const struct mc_node_facts *f, unsigned workers,
		    hwloc_const_bitmap_t allowed, const unsigned *gpus,
		    size_t n, struct mc_plan *plan, char *err, size_t errlen)
{
	hwloc_bitmap_t taken = hwloc_bitmap_alloc();
	hwloc_bitmap_t numa_set = hwloc_bitmap_alloc();
	hwloc_bitmap_t avail = hwloc_bitmap_alloc();
	unsigned order[MC_MAX_GPUS];
	int rc = -1;

	plan->n = 0;
	if (!taken || !numa_set || !avail) {
		mc_err(err, errlen, "out of memory");
		goto out;
	}
	if (n > MC_MAX_GPUS || n > f->n_gpus) {
		mc_err(err, errlen, "%zu GPUs asked for, the node has %u",
			    n, f->n_gpus);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		if (gpus[i] >= f->n_gpus) {
			mc_err(err, errlen, "GPU %u is not on this node "
				    "(%u GPUs)", gpus[i], f->n_gpus);
			goto out;
		}
		for (size_t j = 0; j < i; j++)
			if (gpus[j] == gpus[i]) {
				mc_err(err, errlen, "GPU %u listed twice",
					    gpus[i]);
				goto out;
			}
	}
	for (size_t i = 0; i < n; i++) {
		struct mc_plan_gpu *g = &plan->gpu[i];

		memset(g, 0, sizeof(*g));
		g->cpus = hwloc_bitmap_alloc();
		plan->n = i + 1;
		if (!g->cpus) {
			mc_err(err, errlen, "out of memory");
			goto out;
		}
		g->index = gpus[i];
		g->numa_os_index = f->gpus[gpus[i]].numa_os_index;
		g->cores_wanted = workers + 1;
		order[i] = gpus[i];
	}
	/* Slurm index order decides who gets the lowest cores, whatever
	 * order the caller listed the GPUs in: every task must agree. */
	qsort(order, n, sizeof(order[0]), cmp_unsigned);
	for (size_t k = 0; k < n; k++) {
		struct mc_plan_gpu *g = NULL;
		const struct mc_numa *m;

		for (size_t i = 0; i < n; i++)
			if (plan->gpu[i].index == order[k])
				g = &plan->gpu[i];
		m = find_numa(f, g->numa_os_index);
		if (!m) {
			g->outside = true;
			snprintf(g->warning, sizeof(g->warning),
				 "memcore: GPU %u: the node's topology gives "
				 "it no NUMA node with CPUs, so it is not "
				 "bound", g->index);
			continue;
		}
		if (hwloc_bitmap_from_ulongs(numa_set, MC_CPUMASK_WORDS,
					     m->cpu_mask) < 0 ||
		    hwloc_bitmap_iszero(numa_set)) {
			g->outside = true;
			snprintf(g->warning, sizeof(g->warning),
				 "memcore: GPU %u: NUMA node %d has no usable "
				 "CPU list ('%s'), so it is not bound",
				 g->index, g->numa_os_index, m->cpus);
			continue;
		}
		if (allowed)
			hwloc_bitmap_and(avail, numa_set, allowed);
		else
			hwloc_bitmap_copy(avail, numa_set);
		/* avail: the NUMA node's allowed CPUs; keep it for the
		 * warning, take from what the GPUs before left. */
		hwloc_bitmap_andnot(numa_set, avail, taken);
		take_cores(f, numa_set, g);
		g->outside = hwloc_bitmap_iszero(avail);
		if (g->cores == 0) {
			char takers[MC_PLAN_MSG_MAX / 4] = "";
			size_t len = 0;

			/* Who took them: the GPUs before it on this node. */
			for (size_t j = 0; j < k; j++)
				for (size_t i = 0; i < n; i++)
					if (plan->gpu[i].index == order[j] &&
					    plan->gpu[i].cores &&
					    plan->gpu[i].numa_os_index ==
					    g->numa_os_index && len <
					    sizeof(takers))
						len += (size_t)snprintf(
						    takers + len,
						    sizeof(takers) - len,
						    "%s%u", len ? ", " : "",
						    order[j]);
			if (hwloc_bitmap_from_ulongs(numa_set,
						     MC_CPUMASK_WORDS,
						     m->cpu_mask) < 0)
				hwloc_bitmap_zero(numa_set);
			warn_none(g, m, numa_set, avail, allowed,
				  takers[0] ? takers : "others");
		}
		hwloc_bitmap_or(taken, taken, g->cpus);
	}
	rc = 0;
out:
	if (rc < 0)
		mc_plan_free(plan);
	hwloc_bitmap_free(taken);
	hwloc_bitmap_free(numa_set);
	hwloc_bitmap_free(avail);
	return rc;
}
