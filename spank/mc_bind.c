/*
 * mc_bind.c - NUMA binding of each GPU task, in slurm_spank_task_init
 * (the task's own process, after Slurm's task/affinity set its mask, as
 * the user, before exec).
 *
 * Tasks are separate processes and do not talk to each other, so each one
 * computes the same plan (mc_plan.h) from the same inputs: the step's GPUs
 * on this node (recorded in task_init_privileged, where Slurm still shows
 * the step-wide list), the DataLoader workers, the node facts, and its own
 * CPU mask, and then keeps the cores of the GPUs it drives. Where every
 * task has the same mask (task/none, task/cgroup alone, one task) the
 * GPUs' cores are disjoint by construction; where task/affinity gave each
 * task its own cores, each task chooses inside its own mask, so tasks never
 * overlap more than Slurm made them overlap.
 *
 * Which GPUs a task drives: the GPUs Slurm shows this task
 * (SLURM_STEP_GPUS, else SLURM_JOB_GPUS for the batch step; global indices,
 * unlike CUDA_VISIBLE_DEVICES, which Slurm renumbers under
 * ConstrainDevices). With --gpus-per-task each task sees its own. When a
 * task sees all of the step's GPUs and the node runs exactly as many tasks
 * as GPUs (srun -n8 --gpus=8, each rank picking cuda:LOCAL_RANK), local
 * task i drives the step's i-th GPU. Otherwise a task drives every GPU it
 * sees.
 *
 * Nothing here stops a task: a failure is logged, the task runs with the
 * mask Slurm gave it. The mask is never widened (the plan only picks from
 * it), so sched_setaffinity cannot fail with EINVAL on an empty set.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/mempolicy.h>

#include <hwloc.h>
#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "mc_list.h"
#include "mc_plan.h"
#include "mc_plugin.h"
#include "mc_rules.h"
#include "mc_nodefacts.h"
#include "mc_bind.h"
#include "mc_step.h"
#include "mc_log.h"

/* NUMA node numbers a preferred policy can name (the kernel's nodemask
 * is at most this wide on x86_64/arm64/ppc64 builds). */
#define MC_NODEMASK_BITS 1024

void mc_bind_task_init_privileged(struct mc_plugin *p, spank_t sp)
{
	char *v = NULL, err[MC_ERR_MAX];

	p->bind_user_cpu_bind[0] = '\0';
	/* srun puts the user's --cpu-bind (or SLURM_CPU_BIND) type here:
	 * unset without one, "" for --cpu-bind=verbose alone. By task_init,
	 * task/affinity has overwritten it with "mask_cpu:" either way. */
	if (mc_step_getenv(sp, "SLURM_CPU_BIND_TYPE", &v, err,
			   sizeof(err)) > 0)
		snprintf(p->bind_user_cpu_bind, sizeof(p->bind_user_cpu_bind),
			 "%s", v);
	free(v);
}

static bool in_list(const unsigned *v, int n, unsigned x)
{
	for (int i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

/* Prefer (not bind) the GPU's NUMA node for the task's memory: first
 * touch still lands elsewhere when the node is full, never an OOM kill.
 * hwloc_set_membind would need a loaded topology; the syscall does not. */
static int prefer_node(int node)
{
	unsigned long mask[MC_NODEMASK_BITS / (8 * sizeof(unsigned long))];

	if (node < 0 || node >= MC_NODEMASK_BITS) {
		errno = EINVAL;
		return -1;
	}
	memset(mask, 0, sizeof(mask));
	mask[node / (8 * sizeof(unsigned long))] |=
		1UL << (node % (8 * sizeof(unsigned long)));
	return (int)syscall(SYS_set_mempolicy, MPOL_PREFERRED, mask,
			    (unsigned long)MC_NODEMASK_BITS);
}

static hwloc_bitmap_t get_affinity(void)
{
	cpu_set_t *set = CPU_ALLOC(MC_MAX_PUS);
	size_t size = CPU_ALLOC_SIZE(MC_MAX_PUS);
	hwloc_bitmap_t b = NULL;

	if (!set)
		return NULL;
	if (sched_getaffinity(0, size, set) == 0 &&
	    (b = hwloc_bitmap_alloc()) != NULL)
		for (unsigned i = 0; i < MC_MAX_PUS; i++)
			if (CPU_ISSET_S(i, size, set))
				hwloc_bitmap_set(b, i);
	CPU_FREE(set);
	return b;
}

static int set_affinity(hwloc_const_bitmap_t b)
{
	cpu_set_t *set = CPU_ALLOC(MC_MAX_PUS);
	size_t size = CPU_ALLOC_SIZE(MC_MAX_PUS);
	int i, rc;

	if (!set) {
		errno = ENOMEM;
		return -1;
	}
	CPU_ZERO_S(size, set);
	hwloc_bitmap_foreach_begin(i, b) {
		if (i < MC_MAX_PUS)
			CPU_SET_S((unsigned)i, size, set);
	} hwloc_bitmap_foreach_end();
	rc = sched_setaffinity(0, size, set);
	CPU_FREE(set);
	return rc;
}

/*
 * This task's GPUs (global indices) into mine[]; the step's into step[].
 * Returns the count of this task's GPUs, 0 when Slurm names none.
 */
static int task_gpus(const struct mc_plugin *p, spank_t sp,
		     const struct mc_step *s, unsigned *mine, unsigned *step,
		     int *n_step)
{
	uint32_t local_tasks = 0;
	int n = s->n_gpu_idx > 0 ? s->n_gpu_idx : 0;
	const struct mc_step *st = &p->step;	/* the step-wide view */
	bool subset = p->step_loaded && p->step_rc == 0 && st->n_gpu_idx > 0;

	memcpy(mine, s->gpu_idx, (size_t)n * sizeof(*mine));
	for (int i = 0; subset && i < n; i++)
		if (!in_list(st->gpu_idx, st->n_gpu_idx, mine[i]))
			subset = false;
	/* The step's list, unless Slurm's two views disagree: then this
	 * task's own is all we trust. */
	if (subset) {
		*n_step = st->n_gpu_idx;
		memcpy(step, st->gpu_idx, (size_t)*n_step * sizeof(*step));
	} else {
		*n_step = n;
		memcpy(step, mine, (size_t)n * sizeof(*step));
	}
	if (n > 1 && n == *n_step &&
	    spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &local_tasks) ==
	    ESPANK_SUCCESS && local_tasks == (uint32_t)n &&
	    s->task_id >= 0 && s->task_id < n) {
		mine[0] = step[s->task_id];
		n = 1;
	}
	return n;
}

/*
 * Whether GPU g's lack of cores is worth a warning to this task: always
 * when its NUMA node has no CPU in the task's mask, or when the mask
 * cannot give it w + 1 cores even from nearby NUMA nodes; when lower GPUs
 * took them all, only if one of those is another task's (a task's own
 * GPUs share its cores anyway, and the verdict has judged the core count).
 */
static bool must_warn(const struct mc_plan *plan, const struct mc_plan_gpu *g,
		      const unsigned *mine, int n_mine)
{
	if (g->cores)
		return g->cores < g->cores_wanted;
	if (g->outside)
		return true;
	for (size_t i = 0; i < plan->n; i++) {
		const struct mc_plan_gpu *o = &plan->gpu[i];

		if (o->cores && o->index < g->index &&
		    o->numa_os_index == g->numa_os_index &&
		    !in_list(mine, n_mine, o->index))
			return true;
	}
	return false;
}

/* What a task's GPUs give it, gathered GPU by GPU (add_gpu). */
struct task_bind {
	hwloc_bitmap_t use;	/* the CPUs to bind to */
	int node;		/* their NUMA node (OS index), -1 none yet */
	bool one_node;		/* all on one node */
	char *per_gpu;		/* MEMCORE_GPU_CPUS: "0-2;3-5" */
	size_t len;
	char *which;		/* the log's "GPU 0: CPUs 0-2, GPU 1: ..." */
	size_t wlen;
	const struct mc_plan_gpu *warning;	/* the first to warn of */
	char also[256];		/* the others: "3 (NUMA 1), ..." */
	size_t more;
};

#define PER_GPU_MAX (MC_MAX_GPUS * (MC_CPULIST_MAX + 1))
#define WHICH_MAX (MC_MAX_GPUS * (MC_CPULIST_MAX + 32))

/* GPU g, the task's k-th, into b. */
static void add_gpu(struct task_bind *b, const struct mc_plan *plan,
		    const struct mc_plan_gpu *g, int k, const unsigned *mine,
		    int n_mine)
{
	char list[MC_CPULIST_MAX];

	if (g->warning[0] && must_warn(plan, g, mine, n_mine)) {
		if (!b->warning) {
			b->warning = g;
		} else if (b->more < sizeof(b->also) - 1) {
			/* Bounded: a long list is cut, never written past
			 * the buffer. */
			int w = snprintf(b->also + b->more,
					 sizeof(b->also) - b->more,
					 "%s%u (NUMA %d)", b->more ? ", " : "",
					 g->index, g->numa_os_index);

			if (w > 0)
				b->more += (size_t)w;
			if (b->more > sizeof(b->also) - 1)
				b->more = sizeof(b->also) - 1;
		}
	}
	if (g->cores) {
		hwloc_bitmap_or(b->use, b->use, g->cpus);
		if (b->node >= 0 && b->node != g->numa_os_index)
			b->one_node = false;
		b->node = g->numa_os_index;
	}
	mc_plan_cpulist(g->cpus, list, sizeof(list));
	b->len += (size_t)snprintf(b->per_gpu + b->len, PER_GPU_MAX - b->len,
				   "%s%s", k ? ";" : "", list);
	b->wlen += (size_t)snprintf(b->which + b->wlen, WHICH_MAX - b->wlen,
				    "%sGPU %u: %s%s", b->wlen ? ", " : "",
				    g->index, list[0] ? "CPUs " : "no CPUs",
				    list);
}

/* One warning on the task's stderr, however many of its GPUs lack cores:
 * the task runs, the user learns how to fix it. Ranks that share GPUs
 * (MPS-style, 16 one-core ranks on 2 GPUs) would each hear the same
 * advice, and it contradicts their recipe: one message for the step,
 * from local task 0. */
static void warn_task(const struct task_bind *b, const struct mc_step *s,
		      int n_step, unsigned cores_per_gpu)
{
	if (!b->warning)
		return;
	if (s->tasks > (uint32_t)n_step && n_step > 0) {
		if (s->task_id == 0)
			slurm_spank_log("memcore: step %s: %u ranks share %d "
				"%s on this node: each rank stays on the CPUs "
				"Slurm gave it, within its GPU's NUMA cores "
				"where they meet (the cores rule counted %u "
				"per rank; one message for the step)",
				s->step_name, s->tasks, n_step,
				n_step == 1 ? "GPU" : "GPUs", cores_per_gpu);
		return;
	}
	slurm_spank_log("%s%s%s", b->warning->warning,
			b->more ? ". Likewise GPU " : "", b->also);
}

/* Bind this process to b's CPUs, its memory to their node when there is
 * one; left as Slurm set it when it has no GPU core or the call fails. */
static void apply(const struct task_bind *b, const struct mc_step *s,
		  hwloc_const_bitmap_t allowed)
{
	char list[MC_CPULIST_MAX];

	if (hwloc_bitmap_iszero(b->use)) {
		mc_log_verbose("memcore: step %s task %d: no GPU core in its "
			       "CPUs %s, left as Slurm set it", s->step_name,
			       s->task_id, mc_plan_cpulist(allowed, list,
							   sizeof(list)));
		return;
	}
	if (set_affinity(b->use) < 0) {
		mc_log_error("memcore: step %s task %d: sched_setaffinity(%s): "
			     "%m; left as Slurm set it", s->step_name,
			     s->task_id, mc_plan_cpulist(b->use, list,
							 sizeof(list)));
		return;
	}
	/* Several GPUs on several NUMA nodes: no single node to prefer;
	 * the kernel's local allocation follows the bound threads. */
	if (b->one_node && prefer_node(b->node) < 0)
		mc_log_verbose("memcore: step %s task %d: set_mempolicy"
			       "(MPOL_PREFERRED, node %d): %m", s->step_name,
			       s->task_id, b->node);
	mc_log_info("memcore: step %s task %d: %s; bound to CPUs %s%s",
		    s->step_name, s->task_id, b->which,
		    mc_plan_cpulist(b->use, list, sizeof(list)),
		    b->one_node ? ", memory prefers the GPU's NUMA node" : "");
}

static void bind_task(struct mc_plugin *p, spank_t sp,
		      const struct mc_node_facts *f, const struct mc_step *s,
		      unsigned cores_per_gpu)
{
	unsigned mine[MC_MAX_GPUS], step[MC_MAX_GPUS];
	int n_mine, n_step = 0;
	struct mc_plan *plan = calloc(1, sizeof(*plan));
	hwloc_bitmap_t allowed = get_affinity();
	struct task_bind b = {
		.use = hwloc_bitmap_alloc(), .node = -1, .one_node = true,
		.per_gpu = calloc(1, PER_GPU_MAX),
		.which = calloc(1, WHICH_MAX),
	};
	char err[MC_ERR_MAX];

	if (!allowed) {
		mc_log_error("memcore: step %s task %d: cannot read its CPU "
			     "mask (%m), not bound", s->step_name, s->task_id);
		goto out;
	}
	if (!plan || !b.use || !b.per_gpu || !b.which) {
		mc_log_error("memcore: step %s task %d: out of memory, not "
			     "bound", s->step_name, s->task_id);
		goto out;
	}
	n_mine = task_gpus(p, sp, s, mine, step, &n_step);
	if (n_mine <= 0)
		goto out;
	if (mc_plan_compute(f, cores_per_gpu, allowed, step, (size_t)n_step, plan,
			    err, sizeof(err)) < 0) {
		mc_log_error("memcore: step %s task %d: not bound: %s",
			     s->step_name, s->task_id, err);
		goto out;
	}
	for (int k = 0; k < n_mine; k++) {
		const struct mc_plan_gpu *g = NULL;

		for (size_t i = 0; i < plan->n; i++)
			if (plan->gpu[i].index == mine[k])
				g = &plan->gpu[i];
		if (g)
			add_gpu(&b, plan, g, k, mine, n_mine);
	}
	warn_task(&b, s, n_step, cores_per_gpu);
	if (n_mine > 1 && spank_setenv(sp, "MEMCORE_GPU_CPUS", b.per_gpu, 1)
	    != ESPANK_SUCCESS)
		mc_log_error("memcore: step %s task %d: cannot set "
			     "MEMCORE_GPU_CPUS", s->step_name, s->task_id);
	apply(&b, s, allowed);
out:
	if (plan) {
		mc_plan_free(plan);
		free(plan);
	}
	hwloc_bitmap_free(allowed);
	hwloc_bitmap_free(b.use);
	free(b.per_gpu);
	free(b.which);
}

int mc_bind_task_init(struct mc_plugin *p, spank_t sp,
		      const struct mc_step *st)
{
	const struct mc_node_facts *f;
	struct mc_policy pol;
	struct mc_step s;
	char err[MC_ERR_MAX], buf[16];
	char list[MC_WORKERS_PARTS_MAX * 12];	/* "1024+0+..." */
	unsigned workers;

	/* A malformed step was reported by task_init_privileged. */
	if (!st || mc_step_ignored(st))
		return 0;
	/* The step as read once; this task's own GPUs and id on top. */
	s = *st;
	spank_get_item(sp, S_TASK_ID, &s.task_id);
	if (mc_step_read_gpus(sp, &s, err, sizeof(err)) < 0)
		return 0;
	mc_config_policy(&p->cfg, s.partition, &pol);
	if (p->cfg_err[0] || pol.mode == MC_MODE_OFF)
		return 0;
	/* The decision's (mc_decision.h): what the step was judged with. */
	workers = p->decision.workers;
	/* Every task of a GPU step, bound or not: scripts pass it on as
	 * DataLoader(num_workers=...). The total per GPU stays a plain
	 * number (scripts read it with int(), and a nested srun sizes the
	 * same); each loader's share ("8+2", or "10" for one) is in _LIST. */
	snprintf(buf, sizeof(buf), "%u", workers);
	if (spank_setenv(sp, "MEMCORE_DATALOADER_WORKERS", buf, 1) !=
	    ESPANK_SUCCESS)
		mc_log_error("memcore: step %s task %d: cannot set "
			     "MEMCORE_DATALOADER_WORKERS", s.step_name,
			     s.task_id);
	mc_opts_workers_list(&p->opts, workers, list, sizeof(list));
	if (spank_setenv(sp, "MEMCORE_DATALOADER_WORKERS_LIST", list, 1) !=
	    ESPANK_SUCCESS)
		mc_log_error("memcore: step %s task %d: cannot set "
			     "MEMCORE_DATALOADER_WORKERS_LIST", s.step_name,
			     s.task_id);
	if (pol.bind == MC_BIND_NONE)
		return 0;
	/* The user chose a binding (--cpu-bind=cores, map_cpu:..., none):
	 * theirs wins. */
	if (p->bind_user_cpu_bind[0]) {
		mc_log_verbose("memcore: step %s task %d: --cpu-bind=%s given, "
			       "not bound", s.step_name, s.task_id,
			       p->bind_user_cpu_bind);
		return 0;
	}
	f = mc_plugin_facts(p, &pol, err, sizeof(err));
	if (!f) {
		mc_log_error("memcore: step %s task %d: not bound: %s",
			     s.step_name, s.task_id, err);
		return 0;
	}
	/* The cores each GPU wants: the rule the step was judged by. */
	bind_task(p, sp, f, &s, mc_cores_per_gpu_at(workers,
			pol.workers_per_core, pol.min_cores_per_gpu));
	return 0;
}
