/*
 * mc_slurm_alloc.h - the allocation Slurm gives a job on one node, as
 * Slurm computes it, from the job's options as the user wrote them
 * (sbatch/srun/salloc, as cli_filter/lua hands them over:
 * slurm.json_cli_options()) and slurmctld's resolved partition and node
 * records (PartitionName=DEFAULT lines and Include files already
 * applied). The submit-time half of the one judgement (mc_judge.h): its
 * product is the mc_alloc that mc_judge() takes.
 *
 * Pure C on plain data: no Slurm, no I/O, no allocation. The rules and
 * their sources (Slurm 22.05 unless said; docs/memcore.8 "SUBMISSION"):
 *  - memory, first that applies (sbatch(1) --mem/--mem-per-cpu/
 *    --mem-per-gpu "mutually exclusive"; slurm.conf(5) DefMemPerCPU,
 *    DefMemPerGPU, DefMemPerNode "mutually exclusive"; slurmctld
 *    job_mgr.c _valid_pn_min_mem and select/cons_tres
 *    gres_select_util_job_mem_set: a per-GPU default only for a job that
 *    set no memory):
 *      --mem=N: N per node; --mem-per-gpu=N: N x the node's GPUs;
 *      --mem-per-cpu=N: N x the node's allocated CPUs;
 *      none: the partition's DefMemPerGPU (a GPU job), else its
 *      DefMemPerCPU or DefMemPerNode (the partition's, else slurm.conf's);
 *      none of them: the whole node (RealMemory).
 *    A size of 0 (sbatch(1): "a memory size specification of zero ...
 *    grants the job access to all of the memory on each node"; cons_tres
 *    job_test.c: a zero request takes the node's available memory) is the
 *    whole node, for --mem and --mem-per-cpu. --mem-per-gpu=0 is no
 *    memory asked: the partition's default applies, the whole node only
 *    without one (22.05.8: DefMemPerGPU, issue 41; DefMemPerCPU x the
 *    CPUs, tests/integration/test_63_oracle.sh). Real
 *    sbatch hands 0 to the filter as "0?" (mbytes_to_str): accepted.
 *  - MaxMemPerCPU (slurm.conf(5): "that job's count of CPUs per task
 *    will try to automatically increase"): a per-CPU figure above it
 *    raises CPUs per task to ceil(mem / max) x, the figure per CPU falls
 *    to match. --mem per node above it raises the CPUs a node to
 *    ceil(mem / max) (22.05 src/slurmctld/job_mgr.c _valid_pn_min_mem,
 *    pn_min_cpus). MaxMemPerNode: Slurm 22.05.8 queues a job above it
 *    (sbatch exits 0) and keeps it pending for good, reason
 *    MaxMemPerLimit (job_mgr.c job_limits_check -> _valid_pn_min_mem;
 *    seen by test_61_corpus_gen). The figure it compares is the
 *    request's: --mem; a per-CPU one x the CPUs the request names (the
 *    node's for a whole-node job, else max(--ntasks-per-node or 1,
 *    ceil(-n / -N)) x -c, at least --mincpus); DefMemPerCPU/DefMemPerNode
 *    without --mem; and the node's memory for --mem=0, --mem-per-gpu and
 *    no memory at all (even with DefMemPerGPU), so -n2 -c24
 *    --mem-per-cpu=4G (96G compared, 192G allocated) runs under
 *    MaxMemPerNode=180000 and a job without --mem there never does
 *    (both seen on 22.05.8). The grant carries both figures
 *    (alloc.mem_limit_*): the judgement refuses with the reason and the
 *    --mem that fits under the ceiling.
 *  - CPUs per node: --exclusive (plain; sbatch(1) "allocated all CPUs and
 *    GRES on all nodes ... but is only allocated as much memory as it
 *    requested") all the node's CPUs; --exclusive=user/mcs (and =topo,
 *    24.11) only keep others off: the CPUs are as asked. Otherwise
 *    max(tasks x cpus-per-task, GPUs x cpus-per-gpu), cpus-per-gpu being
 *    DefCpuPerGPU when neither -c nor --cpus-per-gpu is given
 *    (slurm.conf(5) DefCpuPerGPU), at least one per task; tasks per node
 *    --ntasks-per-node, else -n / -N, without -N at most what the node's
 *    CPUs hold (Slurm takes more nodes). Slurm allocates
 *    whole cores (CR_Core*): cores = ceil(CPUs / ThreadsPerCore), all the
 *    core's threads count as allocated CPUs; with --hint=nomultithread,
 *    compute_bound or memory_bound (proc_args.c verify_hint: min_threads
 *    1) or --threads-per-core=1 one CPU is one core, with
 *    --threads-per-core=T below the node's a core holds T (22.05.8: -c24
 *    =2 on 4 threads a core is 12 cores; slurm.conf(5) DefMemPerCPU
 *    NOTE: "usable allocated CPUs"). -n over -N without
 *    --ntasks-per-node: Slurm may pack the first nodes (22.05.8: -N2
 *    -n12 --gpus-per-task=1 -c6 on 8-GPU nodes 8 + 4; not always to the
 *    full): judged at the most a node may get (all but one task for
 *    each other node of -N min, at most what its CPUs and per-task GPUs
 *    hold), with a placement line; tasks Slurm sets itself (below) are
 *    split evenly.
 *  - GPUs on the node: --gpus-per-node=[type:]N and --gres=gpu[:type]:N
 *    (N); --gpus-per-socket=N (N x --sockets-per-node, else the node's
 *    sockets; at most the node's GPUs: 22.05 gives a node whose gres.conf
 *    binds no GPU to a socket its GPUs); --gpus-per-task=N and --tres-per-task=gres/gpu:N (N x the
 *    node's tasks); --tres-per-node=gres/gpu:N (N); --gpus=N with -N:
 *    every placement Slurm may choose, judged at its worst: all but one
 *    a node for the others (-N min-max: min), at most the node's own
 *    (22.05.8 split 8 over -N2 as 7 + 1, 12 as 8 + 4), with a
 *    placement line naming --gpus-per-node for the even split. Without -N a total (--gpus, or -n with a per-task
 *    count) is spread over nodes (Slurm picks as many as it needs): a
 *    node gets at most its own GPUs, so -n16 --gpus-per-task=1 on 8-GPU
 *    nodes is 8 + 8, judged as 8 tasks of one GPU per node.
 *  - Tasks Slurm sets itself (sbatch/salloc/srun _opt_verify, after the
 *    cli_filter; gres.c gres_job_state_validate, 22.05 to 26.05):
 *    -N with a fixed count and no -n gives -N x --sockets-per-node x
 *    --cores-per-socket x --threads-per-core tasks (sbatch and salloc:
 *    each that is given; srun: only all three, else x
 *    --ntasks-per-node); --ntasks-per-gpu=N (--ntasks-per-tres) gives N
 *    tasks per GPU of a GPU request, and without one the job gets
 *    -n / N GPUs (-N without -n: -N x N tasks first, so one GPU a node).
 *    With -c but no -n nor --ntasks-per-node, Slurm may give as few as
 *    max(tasks, -c) CPUs a node (sbatch's min_cpus is its own one task
 *    x -c; cons_tres job_test.c: 22.05.8 gave --gpus-per-node=4
 *    --ntasks-per-gpu=1 -c12 12 CPUs): judged at that fewest, the fix
 *    in --cpus-per-gpu.
 *  - --mincpus=N: at least N CPUs on each node (cons_tres job_test.c
 *    pn_min_cpus). A partition with OverSubscribe=EXCLUSIVE gives whole
 *    nodes, as plain --exclusive does (slurm.conf(5) OverSubscribe).
 *  - A typed request (h100:8 in any GPU form) runs only on nodes whose
 *    Gres type is that type (gres.conf Type=, case-insensitive): the
 *    others are not candidates at all (excluded, not refusals).
 * Shards and MPS (--gres=shard:N, mps:N) are read into shards and mps:
 * the step is sized as that share of one card (memcore check --shards).
 */
#ifndef MC_SLURM_ALLOC_H
#define MC_SLURM_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mc_config.h"
#include "mc_rules.h"
#include "mc_shapes.h"

/* --exclusive, as slurm_opt prints it: unset/oversubscribe, exclusive,
 * user, mcs, topo. */
enum mc_excl {
	MC_EXCL_NONE = 0,
	MC_EXCL_NODE,		/* plain --exclusive: all CPUs */
	MC_EXCL_USER,		/* =user */
	MC_EXCL_MCS,		/* =mcs */
	MC_EXCL_TOPO,		/* =topo (24.11) */
};

/* Which memory option the job gave (at most one: sbatch refuses two). */
enum mc_job_mem { MC_JOB_MEM_NONE = 0, MC_JOB_MEM_NODE, MC_JOB_MEM_GPU,
		  MC_JOB_MEM_CPU };

#define MC_JOB_OPT_MAX 64

/* A job's request, as the user wrote it. 0 is unset for every count. */
struct mc_slurm_job {
	uint32_t nodes_min, nodes_max;	/* -N min[-max] */
	uint32_t ntasks;		/* -n */
	uint32_t ntasks_per_node;	/* --ntasks-per-node */
	uint32_t cpus_per_task;		/* -c */
	uint32_t cpus_per_gpu;		/* --cpus-per-gpu */
	uint32_t sockets_per_node;	/* --sockets-per-node */
	uint32_t cores_per_socket;	/* --cores-per-socket */
	uint32_t threads_per_core;	/* --threads-per-core */
	bool one_thread_per_core;	/* --hint=nomultithread,
					 * --threads-per-core=1 */
	uint32_t mincpus;		/* --mincpus: CPUs per node, at least */
	uint32_t ntasks_per_gpu;	/* --ntasks-per-gpu, --ntasks-per-tres */
	bool srun;			/* srun's rules (else sbatch/salloc) */
	enum mc_job_mem mem_kind;
	uint64_t mem_mb;		/* that option's MB; 0: whole node */
	char mem_opt[MC_JOB_OPT_MAX];	/* "--mem=400G" as written */
	enum mc_excl exclusive;
	/* GPUs, in the form given (each 0 when not) */
	uint32_t gpus_per_node;		/* --gpus-per-node, --gres=gpu,
					 * --tres-per-node=gres/gpu */
	uint32_t gpus_per_task;		/* --gpus-per-task,
					 * --tres-per-task=gres/gpu */
	uint32_t gpus_per_socket;	/* --gpus-per-socket */
	uint32_t gpus_total;		/* --gpus */
	char gpu_type[MC_GPU_TYPE_NAME_MAX];	/* "" untyped */
	/* A shared GPU: --gres=shard:N or mps:N (0 when not); sized by
	 * the judgement as its share of one card (mc_terms.h). */
	uint32_t shards, mps;
	/* Set by the model, not the user: the tasks were set by Slurm
	 * itself (-B's parts, --ntasks-per-gpu) and are split evenly. */
	bool tasks_even;
};

/* A partition as slurmctld resolved it (MB; 0 unset). */
struct mc_slurm_part {
	uint64_t def_mem_per_cpu_mb, def_mem_per_node_mb, def_mem_per_gpu_mb;
	uint32_t def_cpu_per_gpu;
	uint64_t max_mem_per_cpu_mb, max_mem_per_node_mb;
	/* What slurmctld takes for a job whose memory a node is 0 (--mem=0,
	 * --mem-per-gpu, none) when it checks MaxMemPerNode/MaxMemPerCPU:
	 * the partition's first node's RealMemory less MemSpecLimit
	 * (job_mgr.c _mem_per_node_part); 0 unknown: the node judged. */
	uint64_t first_node_mem_mb;
	bool exclusive;			/* OverSubscribe=EXCLUSIVE */
};

/*
 * One option of the job as cli_filter's slurm.json_cli_options() prints
 * it (name without "--": "mem", "gpus-per-node", "exclusive", ...; value
 * as slurm_opt's getter prints it: "400G", "0?", "h100:8", "gres:gpu:2",
 * "2-4", "exclusive"). Options memcore does not read are ignored (0).
 * Returns 0, or -1 with err ("--mem=12X: ...") for a value it cannot read.
 */
int mc_slurm_job_set(struct mc_slurm_job *j, const char *name,
		     const char *value, char *err, size_t errlen);

/*
 * Why Slurm's option `name` (as mc_slurm_job_set takes it: "core-spec",
 * "nodelist") is not modelled at submission ("cores withheld for the
 * system on each node"), or NULL for an option that is modelled or does
 * not change what Slurm allocates. The job is judged without that option
 * and the launch check judges it; memcore check says so in a line
 * (memcore(8), "Slurm's options and settings at submission"). The names
 * and reasons are the let-through option rows of
 * tests/integration/corpus/slurm_alloc.tsv.
 */
const char *mc_slurm_let_through(const char *name);

/*
 * Whether let-through option `name` with value (NULL: none) may give the
 * job more than memcore models without it (more nodes, or more CPUs on a
 * node): --ntasks-per-core, --ntasks-per-socket and --spread-job spread
 * tasks over more cores, sockets and nodes; -B selects nodes by their
 * sockets, cores and threads; --whole gives an srun step its job's whole
 * nodes; --core-spec and --thread-spec imply --exclusive (sbatch(1));
 * --distribution with plane, arbitrary or nopack changes how many tasks
 * a node gets (block and cyclic do not). A job that does not fit as
 * modelled is then let through to the launch check, never refused at
 * submission (a false refusal, issue 41). The others only narrow or bind
 * what the job gets (--constraint, --overcommit, --exact, the bindings):
 * a job that fits nowhere without them fits nowhere with them, and its
 * refusal stands.
 */
bool mc_slurm_may_give_more(const char *name, const char *value);

/* Whether the job asks for GPUs at all (any form). */
bool mc_slurm_job_has_gpus(const struct mc_slurm_job *j);

/*
 * A Slurm memory figure in MB: digits with an optional unit K, M, G, T, P
 * (MB without one, as sbatch takes it) or "0?" (sbatch's 0). Returns 0 or
 * -1 with err.
 */
int mc_slurm_mem_mb(const char *s, uint64_t *mb, char *err, size_t errlen);

/*
 * Whether a job asking for GPU type `want` (--gres=gpu:TYPE:N, --gpus=TYPE:N;
 * NULL or "" any) can run on a node whose Gres GPU type is `have` (""
 * untyped; "*" a bound of nodes whose type is unknown, which matches any).
 * Slurm matches the type by name, case-insensitively. When it cannot, why
 * receives "its GPUs are a100, the job asks for h100" and it returns true.
 */
bool mc_slurm_type_excludes(const char *want, const char *have, char *why,
			    size_t len);

/* What the job gets on one node. */
struct mc_slurm_grant {
	bool excluded;			/* not a candidate (GPU type) */
	char why[128];			/* why excluded */
	uint32_t gpus;			/* GPUs of the job on the node */
	uint32_t tasks;			/* tasks on the node */
	uint32_t cpus;			/* CPUs allocated (threads) */
	/* The GPUs on the node do not depend on the node (--gpus-per-node,
	 * per task with the tasks per node fixed, a total over -N): what
	 * judging an upper bound of unseen nodes needs. */
	bool gpus_fixed;
	struct mc_alloc alloc;		/* for mc_judge(); requested */
	char mem_source[96];		/* alloc.mem_source points here */
	/* Where Slurm's placement decides and the grant is its worst
	 * (--gpus over -N): an explanation line, else "". */
	char placement[200];
};

/*
 * The allocation of job j on node n of partition p (rules above).
 * g->alloc.mem_source points into g: keep g while it is used.
 */
void mc_slurm_alloc(const struct mc_slurm_job *j,
		    const struct mc_slurm_part *p,
		    const struct mc_node_record *n,
		    struct mc_slurm_grant *g);

#endif
