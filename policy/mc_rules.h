/*
 * mc_rules.h - the sizing rules, the verdict for one step on one node, and
 * its explanation. Pure C on plain data: no Slurm, no hwloc, no I/O, no
 * allocation; the same code runs in slurmstepd and in the memcore command.
 *
 * Sources:
 *  - Stas Bekman, "Machine Learning Engineering Open Book",
 *    compute/cpu/README.md ("How many cpu cores do you need": one core per
 *    GPU process plus one per DataLoader worker, plus a few for the OS) and
 *    compute/cpu-memory/README.md (host RAM at least the GPUs' memory, plus
 *    the DataLoader workers' RAM).
 *  - DeepSpeed, deepspeed/runtime/zero/stage_1_and_2.py
 *    estimate_zero2_model_states_mem_needs() and
 *    deepspeed/runtime/zero/stage3.py estimate_zero3_model_states_mem_needs()
 *    (CPU memory for ZeRO offload).
 *
 * Units: bytes as uint64_t, cores as uint32_t (physical cores, what Slurm's
 * S_STEP_ALLOC_CORES lists), counts of GPUs per node.
 */
#ifndef MC_RULES_H
#define MC_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mc_config.h"
#include "mc_terms.h"

enum mc_offload { MC_OFFLOAD_NONE = 0, MC_OFFLOAD_OPTIMIZER, MC_OFFLOAD_ALL };
extern const char *const mc_offload_words[];	/* none optimizer all */

/* Whether the model is built under deepspeed.zero.Init (ZeRO-3). */
enum mc_zero_init_src {
	MC_ZERO_INIT_POLICY = 0,	/* the policy's ZeroInit */
	MC_ZERO_INIT_YES,		/* --zero-init=yes */
	MC_ZERO_INIT_NO,		/* --zero-init=no */
};

/* What the step asks for, per node. */
struct mc_request {
	uint32_t gpus;			/* g: GPUs of the step on this node */
	uint32_t nodes;			/* N: nodes of the step (>= 1) */
	uint32_t dataloader_workers;	/* w: per GPU */
	uint64_t gpu_memory_bytes;	/* M: memory of one GPU (the largest
					 * of the step's GPUs); 0 = unknown */
	/* Where M came from, for the explanation (mc_mem_source_text():
	 * "memcore.conf GpuTypeMemory= for h100", the topology file);
	 * NULL: "this node", the node's own figure at launch. The caller
	 * keeps the text while the request is judged. */
	const char *gpu_memory_source;
	uint64_t model_params;		/* P: 0 = no ZeRO term */
	uint32_t zero_stage;		/* 0..3 */
	enum mc_offload offload;
	uint64_t largest_layer_params;	/* L: 0 = unknown (counts as P) */
	enum mc_zero_init_src zero_init;
	/* The node's GPU memory is its host RAM (an APU such as the AMD
	 * MI300A, mc_facts_unified()): M is the GPU working set inside the
	 * one pool, counted once (HostRamPerGpuRam does not apply: there is
	 * no host copy); M unknown, the GPUs get what the allocation leaves. */
	bool unified_memory;
	/* The job's other uses of host RAM and its ranks (mc_terms.h). */
	struct mc_usage use;
};

/* What the node has (from the topology or memcore.conf NodeRam/NodeCores).
 * A ram_bytes or cores of 0 is unknown: the node rules on it are skipped. */
struct mc_node {
	uint64_t ram_bytes;		/* host RAM, GPU-memory NUMA excluded */
	uint32_t cores;			/* physical cores */
	uint32_t threads_per_core;	/* PUs per core (>= 1); for --cpus-per-gpu */
	uint32_t gpus;			/* G: GPUs of the node */
	bool unified_memory;		/* APU: GPU memory is this RAM */
};

/*
 * The memory option the user asked with, and the CPU option: a fix names
 * the same ones (Slurm refuses --mem next to --mem-per-gpu/--mem-per-cpu,
 * and a user who wrote -c reads -c best).
 */
enum mc_mem_form { MC_MEM_PER_NODE = 0, MC_MEM_PER_GPU, MC_MEM_PER_CPU };
enum mc_cpu_form { MC_CPUS_PER_GPU = 0, MC_CPUS_PER_TASK };

/* What Slurm gave the step on this node (or, with requested, what a user
 * asks for before submitting). */
struct mc_alloc {
	uint64_t mem_bytes;		/* step memory (0 already resolved to
					 * the node's RAM by the caller) */
	uint32_t cores;			/* cores of the step on this node */
	uint32_t job_cores;		/* cores of the job on this node, 0 if
					 * unknown (CLI); > cores means the job
					 * has CPUs the step did not get */
	const char *mem_source;		/* how it was asked, e.g. "--mem=400G";
					 * may be NULL */
	/* No memory figure was asked or given (Slurm without memory as a
	 * consumable, a check without --mem): mem_bytes is the node's RAM,
	 * and there is no limit to hold the step to (mc_decision.h). */
	bool mem_unset;
	enum mc_mem_form mem_form;	/* the fix's memory option */
	enum mc_cpu_form cpu_form;	/* the fix's CPU option */
	uint32_t tasks;			/* tasks of the step on the node, for
					 * --cpus-per-task; 0: one per GPU */
	/*
	 * A request not yet granted (memcore check, the cli_filter): asking
	 * for more GPUs, memory or cores than the node has is impossible.
	 * At launch (false) Slurm's grant is not questioned against the
	 * topology.
	 */
	bool requested;
	/*
	 * The partition's MaxMemPerNode (bytes; 0 none) and the job's
	 * memory a node as slurmctld compares it with that ceiling (not
	 * always the allocation: mc_slurm_alloc.h). Above it Slurm keeps
	 * the job pending for good. Only a requested allocation has them.
	 */
	uint64_t mem_limit_bytes;
	uint64_t mem_limit_asked_bytes;
	/* A requested allocation whose cores Slurm decides only when it
	 * allocates (--ntasks-per-gpu with -c, mc_slurm_alloc.h): it may
	 * give as few as these (0: cores is what it gives). A step that
	 * fits cores but not these cannot be judged before the launch. */
	uint32_t cores_fewest;
};

/*
 * Cores one GPU needs at w DataLoader workers: one for the GPU's own
 * process and ceil(w / n) for its workers, n = workers_per_core (the
 * policy's WorkersPerCore; 0 counts as 1), and at least min_cores
 * (MinCoresPerGpu; 0 off). n = 1 is the Open Book's rule, w + 1
 * (compute/cpu/README.md: a core per GPU process and one per worker);
 * a larger n is a site's measurement that its workers wait on I/O or
 * the GPU, e.g. facebookresearch/deit#81: 4 workers a GPU ran well on
 * 4 CPUs a GPU (32 CPUs, 8 GPUs), the GPU process sharing them.
 * Every cores figure (step, node, audit, binding, advice) comes from
 * this one.
 */
uint32_t mc_cores_per_gpu_at(uint32_t workers, uint32_t workers_per_core,
			     uint32_t min_cores);

/* Step cores g * (ceil(w / WorkersPerCore) + 1), and at least
 * g * MinCoresPerGpu. */
uint32_t mc_step_cores_needed(const struct mc_policy *p, uint32_t gpus,
			      uint32_t workers);

/* Node cores G * (ceil(w / WorkersPerCore) + 1) + ReservedCores, and at
 * least G * MinCoresPerGpu + ReservedCores. (Open Book: 28 at G=8 w=2.) */
uint32_t mc_node_cores_needed(const struct mc_policy *p, uint32_t node_gpus,
			      uint32_t workers);

/*
 * The cores rule for g GPUs at w workers in words, as every explanation
 * and audit line says it: "8 GPUs x (2 workers + 1)", with a site's
 * WorkersPerCore "8 GPUs x (4 workers / WorkersPerCore=2 + 1)", or "8
 * GPUs x 16 (MinCoresPerGpu)" where that floor wins; terse: "8 x (2 +
 * 1)", "8 x (4 / 2 + 1)", "8 x 16". Returns buf.
 */
const char *mc_cores_rule_text(const struct mc_policy *p, uint32_t g,
			       uint32_t w, bool terse, char *buf, size_t len);

/* Host RAM floor g * M * HostRamPerGpuRam, rounded up to a byte (the
 * caller's mc_ram_needed_bytes takes g * M alone on unified memory). */
uint64_t mc_ram_floor_bytes(const struct mc_policy *p, uint32_t gpus,
			    uint64_t gpu_memory_bytes);

/* DataLoader RAM g * w * RamPerWorker. */
uint64_t mc_ram_workers_bytes(const struct mc_policy *p, uint32_t gpus,
			      uint32_t workers);

/*
 * Host (CPU) memory of DeepSpeed ZeRO on one node, bytes: DeepSpeed's
 * estimate_zero2_model_states_mem_needs() (stage_1_and_2.py, stages 1 and
 * 2) and estimate_zero3_model_states_mem_needs() (stage3.py), the "per
 * CPU" column of their tables. f = OffloadBufferFactor (DeepSpeed's
 * additional_buffer_factor, 1.5), g = GPUs per node, N = nodes, G = g * N,
 * P = model parameters, L = largest layer's parameters, zi = zero.Init
 * (the request's zero_init, else the policy's ZeroInit):
 *   stage 1/2, offload optimizer:   P * max(4G, 16) * f
 *   stage 1/2, no offload:          P * 4g * f  (each rank builds the fp32
 *                                   model on the host before partitioning)
 *   stage 3, offload all:           zi ? 18P/N * f : P * max(4g, 18/N) * f
 *   stage 3, offload optimizer:     zi ? 16P/N * f : P * max(4g, 16/N) * f
 *   stage 3, no offload:            zi ? L * 4g * f : P * 4g * f
 *   stage 0, or P = 0:              0
 * L unknown (0) counts as P: without the user's figure memcore cannot
 * assume zero.Init's saving (docs: --largest-layer-params).
 * Combinations that DeepSpeed does not support (offload with stage 0,
 * offload=all below stage 3) return 0; mc_request_check() refuses them.
 * t5-3b (P = 2,851,598,336, L = 32,899,072) on 1 node of 8 GPUs: 127.48 GiB
 * for stage 2 with and without offload; stage 3 71.71 / 127.48 (all),
 * 63.74 / 127.48 (optimizer), 1.47 / 127.48 GiB (none), zi yes / no.
 */
uint64_t mc_zero_ram_bytes(const struct mc_policy *p,
			   const struct mc_request *r);

/* Whether the ZeRO term is DeepSpeed's offload (true) or the model load
 * of a run without offload (false); for explanations. */
bool mc_zero_is_offload(const struct mc_request *r);

/* zero.Init for this request: its own answer, else the policy's. */
bool mc_zero_init(const struct mc_policy *p, const struct mc_request *r);

/*
 * Check the combination of request fields a user chose, and, with a policy
 * p (may be NULL), the workers against its MaxDataloaderWorkers; returns 0
 * or -1 with err ("--offload=all needs --zero-stage=3", ...).
 */
int mc_request_check(const struct mc_policy *p, const struct mc_request *r,
		     char *err, size_t errlen);

/* The whole step RAM: floor + workers + ZeRO + g * RamPerTask and the
 * job's other terms, as they combine (mc_terms.h). */
uint64_t mc_ram_needed_bytes(const struct mc_policy *p,
			     const struct mc_request *r);

struct mc_verdict {
	bool fits;
	bool gpu_memory_unknown;	/* M was 0: RAM floor not checked */
	/* RAM */
	uint64_t ram_floor_bytes, ram_workers_bytes, ram_zero_bytes,
		 ram_tasks_bytes, ram_needed_bytes, ram_allocated_bytes;
	/* The job's other uses (mc_terms.h): the load and save peaks,
	 * activation offload, nvme offload's pinned buffers. */
	uint64_t ram_load_bytes, ram_save_bytes, ram_act_bytes,
		 ram_nvme_bytes;
	/* --dataset-in-memory: ranks x S x (w + 1) (mc_terms.h). */
	uint64_t ram_dataset_bytes;
	bool ram_short;			/* needed > allocated */
	bool node_ram_short;		/* needed > node RAM: no --mem fits */
	/* cores */
	uint32_t cores_needed, cores_allocated;
	uint32_t node_cores_needed, node_cores;
	bool cores_short;		/* step cores < needed */
	bool node_cores_short;		/* node cores < G*(w+1)+Reserved */
	/*
	 * The largest DataLoader worker count (<= MaxDataloaderWorkers) that
	 * fits this allocation and this node, or -1 when none does (not even
	 * w = 0).
	 */
	int32_t max_dataloader_workers;
	/* The largest w that fits the node alone (any allocation), or -1. */
	int32_t node_max_dataloader_workers;
	/* The smallest fix at the asked w: --mem and --cpus-per-gpu to ask
	 * (0 when that part is not short or cannot be fixed on this node). */
	uint64_t fix_mem_bytes;
	uint32_t fix_cpus_per_gpu;
	/* The allocation holds the cores but the step did not get them
	 * (job_cores >= needed > step cores): fix with srun's -c.
	 * fix_cpus_per_task assumes one task per GPU: (w + 1) * threads. */
	bool step_cpus_hint;
	uint32_t fix_cpus_per_task;	/* for that hint; 0 if unknown */
	/*
	 * Impossible on this node whatever the allocation (the first three
	 * only for a requested allocation): more GPUs than the node has,
	 * memory or cores asked beyond the node's.
	 */
	bool node_gpus_short;		/* g > the node's G (G known) */
	/* --gres=shard:N or mps:N beyond the node's G x per-GPU count
	 * (both known): Slurm has no such node, whatever the memory. */
	bool node_shares_short;
	bool alloc_mem_over_node;	/* asked memory > node RAM */
	bool alloc_cores_over_node;	/* asked cores > node cores */
	/* The job's memory a node, as Slurm compares it, is above the
	 * partition's MaxMemPerNode (alloc.mem_limit_*): Slurm would keep
	 * it pending for good (reason MaxMemPerLimit). */
	bool alloc_mem_over_limit;
	/* The node breaks the site's RAM rule (node RAM below its GPUs'
	 * memory x HostRamPerGpuRam, as memcore audit says) and the step's
	 * RAM does not fit the node: no request on this node fixes it. */
	bool node_ram_rule_fails;
	uint64_t node_ram_rule_bytes;	/* that rule's RAM, when it fails */
	/* The most GPUs per node a step like this one (same w) fits on this
	 * node, when it is impossible; 0 when none. */
	uint32_t max_gpus;
	/* inputs kept for the explanation */
	struct mc_request req;
	struct mc_node node;
	struct mc_alloc alloc;
};

/*
 * The verdict for one step on one node. Never fails: the caller has
 * validated the request (mc_request_check). A GPU-less request fits.
 */
void mc_verdict_compute(const struct mc_policy *p, const struct mc_request *r,
			const struct mc_node *node,
			const struct mc_alloc *alloc, struct mc_verdict *v);

/*
 * The node sizing rule (Open Book compute/cpu-memory: host RAM at least the
 * GPU memory it feeds; compute/cpu: G * (w + 1) + ReservedCores cores), at
 * the policy's default DataLoader workers.
 */
struct mc_audit {
	uint64_t gpu_memory_total_bytes;	/* sum over the node's GPUs */
	bool gpu_memory_known;		/* every GPU's memory was known */
	uint64_t ram_needed_bytes;	/* total * HostRamPerGpuRam */
	uint32_t cores_needed;		/* G * (w + 1) + ReservedCores */
	uint32_t workers;		/* the w used */
	bool ram_rule_ok;		/* false also when memory is unknown */
	bool cores_rule_ok;
	/* An APU node: its GPU memory is its host RAM, so "host RAM >= GPU
	 * memory" holds by construction (ram_rule_ok true, needed 0). */
	bool unified_memory;
};

void mc_audit_node(const struct mc_policy *p, const struct mc_node *node,
		   uint64_t gpu_memory_total_bytes, bool gpu_memory_known,
		   struct mc_audit *a);

/*
 * Why a step does not fit: the one place that decides it (the first line
 * of the explanation, the few words of a node list, whether it is
 * impossible, which fix is offered all read this). In order of precedence:
 * the first that holds is the answer.
 */
enum mc_misfit {
	MC_MISFIT_NONE = 0,		/* it fits */
	MC_MISFIT_NODE_GPUS,		/* more GPUs than the node has */
	MC_MISFIT_NODE_SHARES,		/* more shards/MPS than it has */
	MC_MISFIT_NODE_RAM_RULE,	/* the node breaks the site's RAM rule */
	MC_MISFIT_MEM_OVER_NODE,	/* asked memory beyond the node's */
	MC_MISFIT_CORES_OVER_NODE,	/* asked cores beyond the node's */
	MC_MISFIT_NODE_RAM,		/* needed RAM beyond the node's */
	MC_MISFIT_NODE_CORES,		/* step cores beyond the node's */
	MC_MISFIT_NODE_CORES_RULE,	/* node cores < G(w+1) + Reserved */
	MC_MISFIT_MEM_OVER_LIMIT,	/* above the partition's MaxMemPerNode */
	MC_MISFIT_RAM,			/* the allocation's memory is short */
	MC_MISFIT_CORES,		/* the allocation's cores are short */
};

/* The reason of a verdict (MC_MISFIT_NONE when it fits). */
enum mc_misfit mc_verdict_why(const struct mc_verdict *v);

/* True when no allocation on this node can make the step fit at its w:
 * mc_verdict_why() is one of NODE_GPUS .. NODE_CORES. */
bool mc_verdict_impossible(const struct mc_verdict *v);

/*
 * Why the step does not fit, in a few words for a list of nodes:
 * "has 4 GPUs", "fails the site's RAM rule", "has 512 GiB, needs 704 GiB",
 * "needs 704 GiB", "has 96 cores, needs 112", "needs 24 cores". "" when it
 * fits. Returns buf.
 */
const char *mc_verdict_reason(const struct mc_verdict *v, char *buf,
			      size_t buflen);

#define MC_FIX_OPTIONS 3
#define MC_FIX_OPTION_MAX 48

/*
 * The smallest fix at the asked DataLoader workers, as complete options in
 * the user's own forms ("--mem-per-gpu=89G", "--cpus-per-task=6"); where
 * the node itself holds no allocation at those workers (its RAM, cores or
 * cores rule), the explanation's fix: "--dataloader-workers=4" and what
 * that then needs. Where no allocation fits and loading or saving the
 * model is what does not (mc_terms.h), the job's own change that does,
 * re-judged: "--model-load=rank0" and the --mem it then needs. The count
 * (0 when the step fits or no option can fix it).
 */
size_t mc_verdict_fix_options(const struct mc_policy *p,
			      const struct mc_verdict *v,
			      char opt[MC_FIX_OPTIONS][MC_FIX_OPTION_MAX]);

#define MC_EXPLAIN_LINES 32
#define MC_EXPLAIN_LINE_MAX 200

/* The explanation, one line each, without trailing newlines. */
struct mc_explanation {
	size_t n;
	char line[MC_EXPLAIN_LINES][MC_EXPLAIN_LINE_MAX];
};

/*
 * Explain a verdict the way the user sees it (memcore(8), WHAT A USER
 * SEES); the first line starts with "memcore: " and
 * names the step and host when given (either may be NULL):
 *   memcore: step 1234.0 on gpu07 needs more than it was given:
 *     GPUs          8 x 80 GiB (this node)     (r->gpu_memory_source)
 *     host RAM      704 GiB needed = 640 GiB GPU floor + 16 workers x 4 GiB
 *                   400 GiB allocated (--mem=400G)            short 304 GiB
 *     CPU cores     24 needed = 8 GPUs x (2 workers + 1)
 *                   16 allocated                               short 8
 *     fix: --mem=704G --cpus-per-gpu=3, or --dataloader-workers=1 with --mem=672G
 * When the step fits, the same lines say "fits" (for --memcore=explain).
 * A step no allocation can fit says so in its first line ("cannot fit: the
 * node has 4 GPUs, the step asks for 8:", "cannot fit: the node fails the
 * site's RAM rule (...)") and gets only fixes that can work.
 * A GPU-less step has nothing to explain: out->n is 0.
 */
void mc_verdict_explain(const struct mc_policy *p, const struct mc_verdict *v,
			const char *step, const char *host,
			struct mc_explanation *out);

#endif
