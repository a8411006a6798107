/*
 * mc_terms.h - the host-RAM uses of a training job beyond the GPU floor,
 * DataLoader workers and DeepSpeed's ZeRO estimate, each with its source,
 * units and knob, and how they combine (memcore.conf(5) "HOST RAM TERMS").
 *
 *  load    model copies built on the host by ranks without ZeRO
 *          (torchrun/DDP, FSDP, Accelerate: each rank's from_pretrained
 *          builds the whole model, pytorch/pytorch#122582; 8 ranks loading
 *          GPT-J-6B need 8 x 22.55 GiB in fp32, ai-computing/aicomp#16):
 *          loaders x P x dtype bytes; loaders = ranks (--model-load=
 *          per-rank), 1 (rank0: FSDP sync_module_states from rank 0) or 0
 *          (meta: built on the meta device); dtype --model-dtype (fp32
 *          default: from_pretrained builds fp32 unless told torch_dtype).
 *          Only without a ZeRO stage: with one, DeepSpeed's term sizes it.
 *          A transient peak (the host copy goes once the model is on the
 *          GPU).
 *  save    a consolidated checkpoint gathered in host RAM: FSDP
 *          FULL_STATE_DICT with offload_to_cpu (pytorch/pytorch#118520,
 *          facebookresearch/fairscale#844), rank0_only or on every rank
 *          (--checkpoint-save=rank0|all): P x dtype bytes per copy, in the
 *          dtype the parameters are saved in, the one the model was built
 *          in (--model-dtype, fp32 default): FSDP's state_dict() under
 *          StateDictType.FULL_STATE_DICT gathers the unsharded parameters
 *          in their own dtype (not MixedPrecision's param_dtype, which is
 *          only the compute copy), and transformers'
 *          PreTrainedModel.save_pretrained() writes each tensor as it is
 *          (torch_dtype records it). + P x 2 x dtype bytes with
 *          --save-optimizer=yes: Adam's exp_avg and exp_avg_sq, which
 *          torch.optim.Adam/AdamW create as zeros_like(param), in the
 *          parameter's dtype, gathered by FSDP.optim_state_dict() /
 *          full_optim_state_dict(). DeepSpeed's stage3_gather_16bit_
 *          weights_on_model_save: P x 2 bytes on rank 0
 *          (DeepSpeedEngine._zero3_consolidated_16bit_state_dict();
 *          DeepSpeed saves optimizer state partitioned, never gathered).
 *          A transient peak during training.
 *  act     DeepSpeed activation offload (activation_checkpointing.
 *          cpu_checkpointing): per rank layers x micro-batch x sequence x
 *          hidden x bytes (2 with bf16/fp16, else 4), divided by the
 *          model-parallel degree with partition_activations. Resident.
 *  nvme    ZeRO-Infinity offload to NVMe keeps only pinned buffers in
 *          host RAM: per rank offload_param buffer_count x buffer_size x 2
 *          bytes and offload_optimizer buffer_count x the rank's fp32
 *          partition (P / G, at most DeepSpeed's sub_group_size 1e9) x 4.
 *          Resident.
 *  workers g x w x RamPerWorker, or the job's --ram-per-worker within
 *          [MinRamPerWorker, MaxRamPerWorker]. Resident.
 *  dataset a dataset held in RAM (--dataset-in-memory[=SIZE][:KIND]):
 *          Hugging Face datasets with keep_in_memory=True, samples loaded
 *          into Python lists, an image cache of numpy arrays. Each rank
 *          holds its own copy (DDP ranks are separate processes that each
 *          build their dataset: ultralytics/ultralytics#22307, 8 ranks, 8
 *          copies of a 205.4 GiB cache). Its forked DataLoader workers
 *          share the rank's pages until they write them, and what they
 *          write follows what the data is (KIND):
 *            objects  Python objects (lists of samples, dicts): reading an
 *                     item writes its reference count, so the pages are
 *                     copied into every worker over an epoch
 *                     (pytorch/pytorch#13246; the Open Book's CPU-memory
 *                     chapter): ranks x S x (w + 1). The default: the
 *                     count that cannot be short.
 *            arrays   numpy arrays, Arrow tables, torch tensors: only the
 *                     arrays' small headers have reference counts, the
 *                     data buffers are never written (pytorch#13246's
 *                     workaround is to hold the data so; pytorch#20433
 *                     measures a list of strings growing in every worker
 *                     and an np.array not): the workers share the
 *                     rank's copy, ranks x S.
 *          S the dataset's size in RAM. The ranks' own copies (ranks x S)
 *          are loaded before or after the model and so coexist with the
 *          load peak; the workers' (ranks x w x S, objects) exist once
 *          they fork. Resident.
 *
 * They combine as they coexist: the load peak comes before the DataLoader
 * workers fork and before DeepSpeed offloads anything, and its host copy
 * is gone once the model is on the GPUs; the save peak comes during
 * training, with everything resident still there. So
 *     needed = GPU floor + ranks x RamPerTask
 *              + max(load + ranks x S,
 *                    workers + dataset + ZeRO + act + nvme + save)
 * (S = 0 without --dataset-in-memory: the terms as before it).
 * Units: bytes (uint64_t), saturating; parameters as counts.
 */
#ifndef MC_TERMS_H
#define MC_TERMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mc_config.h"

struct mc_request;

enum mc_load { MC_LOAD_PER_RANK = 0, MC_LOAD_RANK0, MC_LOAD_META };
extern const char *const mc_load_words[];	/* per-rank rank0 meta */
enum mc_save { MC_SAVE_NONE = 0, MC_SAVE_RANK0, MC_SAVE_ALL };
extern const char *const mc_save_words[];	/* none rank0 all */
extern const char *const mc_dtype_words[];	/* fp32 bf16 fp16 */
/* What an in-memory dataset is, for how its workers share it (above). */
enum mc_dataset_kind { MC_DATASET_OBJECTS = 0, MC_DATASET_ARRAYS };
extern const char *const mc_dataset_kind_words[];	/* objects arrays */

#define MC_NOTES_MAX 8
/* A note fills an explanation line (MC_EXPLAIN_LINE_MAX) after its
 * indent and "note: ". */
#define MC_NOTE_MAX 176

/* What the job's own uses of host RAM are, beside the GPUs and ZeRO. */
struct mc_usage {
	uint32_t ranks;			/* processes on this node; 0: one per
					 * GPU (the step's tasks, for MPS) */
	uint32_t dtype_bytes;		/* model built in; 0 = 4 (fp32) */
	enum mc_load load;
	enum mc_save save;
	bool save_optimizer;
	bool save_16bit;		/* DeepSpeed's 16-bit gather */
	bool cpu_checkpointing;
	bool partition_activations;
	uint32_t layers, hidden;	/* the activation term's */
	uint32_t seq_len, micro_batch;
	uint32_t model_parallel;	/* 0 = 1 */
	uint32_t act_bytes;		/* 0 = 4 */
	uint64_t nvme_pinned_bytes;	/* per rank */
	uint64_t ram_per_worker_bytes;	/* 0: the policy's RamPerWorker */
	/* --dataset-in-memory: the size of one copy of the dataset in RAM
	 * (0: none), and the command that stages the job's --dataset to
	 * local scratch for the explanation's fix (NULL: no path known; the
	 * caller keeps the text while the request is judged). */
	uint64_t dataset_bytes;
	const char *dataset_stage;
	enum mc_dataset_kind dataset_kind;	/* --dataset-in-memory's :KIND */
	/* A shared GPU asked for at submission: --gres=shard:N or mps:N
	 * (share_kind 1 shard, 2 mps), and the count per GPU when known. */
	uint32_t share_kind, share_count, share_per_gpu;
	/* The shared card's whole memory, bytes (mc_share_apply; 0: no
	 * share): the node's RAM rule is the card's, not the step's part. */
	uint64_t share_card_bytes;
	/* Values given that do not change the verdict because another one
	 * makes them moot, and where a file's value came from: said in the
	 * explanation (nothing dropped silently). */
	uint32_t n_notes;
	char notes[MC_NOTES_MAX][MC_NOTE_MAX];
};

/*
 * A shared GPU's memory for the step: card x num / den, rounded up (a
 * --gres=shard:num of den shards per GPU, or gres/mps's percentage of
 * 100), as a MIG slice is sized by its own memory. card 0 (unknown)
 * stays 0; den 0 gives the card.
 */
uint64_t mc_share_bytes(uint64_t card, uint32_t num, uint32_t den);

/*
 * Shards (gres/shard) of one GPU on a node, the one rule the plugin, the
 * memcore command and the audit all use: the policy's ShardsPerGpu= when
 * set (an override), else Slurm's own configuration of the node,
 * node_shards (its Gres shard count: slurm.conf Gres=...,shard:N as
 * slurmd and slurmctld read it) over node_gpus (its GPU count), rounded
 * down. Slurm's gres/shard gives each GPU count/G and the remainder to
 * the last GPUs (src/plugins/gres/common/gres_c_s.c _distribute_count),
 * so the floor is the fewest shards a GPU has: a step's share of that
 * GPU is its largest (too much RAM asked, never too little). 0: unknown
 * (no override and no shards configured, or no GPUs). *from (may be
 * NULL) names the source: "ShardsPerGpu", "Slurm" or "".
 */
uint32_t mc_shards_per_gpu(const struct mc_policy *p, uint32_t node_shards,
			   uint32_t node_gpus, const char **from);

/*
 * Whether ShardsPerGpu= is set and disagrees with Slurm's own count for
 * the node (node_shards / node_gpus, as mc_shards_per_gpu; known only
 * when both are non-zero): an audit finding. *slurm_per (may be NULL)
 * receives Slurm's per-GPU count (0 unknown). No finding when either
 * side is unknown.
 */
bool mc_shards_disagree(const struct mc_policy *p, uint32_t node_shards,
			uint32_t node_gpus, uint32_t *slurm_per);

/*
 * Size r's GPU (r->gpu_memory_bytes, the card's) by its share when
 * r->use.share_kind is set: per_gpu is the shards (or MPS count) of one
 * GPU (r->use.share_per_gpu wins when set); an MPS count without one is
 * out of 100, as Slurm's gres/mps docs count a GPU; an MPS count of
 * another count per GPU is sized by the whole percentage Slurm hands the
 * step at launch (count x 100 / per_gpu, at least 1). A shard share with
 * per_gpu unknown (0) leaves the card and says so in a note. Adds the note
 * "gres/shard: 8/64 of a 80 GiB GPU" ("gres/shard (FROM): ..." with from,
 * the variable Slurm set at launch), and sets r->use.share_per_gpu to
 * the count per GPU used (the verdict checks the node has that many).
 */
void mc_share_apply(struct mc_request *r, uint32_t per_gpu, const char *from);

/* One of the node's GPUs' memory for request r, bytes: a shared card's
 * whole memory, else r->gpu_memory_bytes (0: unknown). */
uint64_t mc_card_bytes(const struct mc_request *r);

/* Add a note (dropped past MC_NOTES_MAX). */
void mc_usage_note(struct mc_usage *u, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Ranks of the step on the node: the usage's, at least the GPUs. */
uint32_t mc_terms_ranks(const struct mc_usage *u, uint32_t gpus);

/* RamPerWorker for this job: its --ram-per-worker, else the policy's. */
uint64_t mc_terms_ram_per_worker(const struct mc_policy *p,
				 const struct mc_usage *u);

/* The load term (bytes): 0 with a ZeRO stage (zero_stage > 0) or P = 0. */
uint64_t mc_terms_load_bytes(const struct mc_usage *u, uint32_t gpus,
			     uint64_t params, uint32_t zero_stage);
/* The consolidated save (bytes), in the saved dtype (above); P = 0: 0. */
uint64_t mc_terms_save_bytes(const struct mc_usage *u, uint32_t gpus,
			     uint64_t params);
/* The bytes a parameter of the consolidated save takes (weights, plus
 * Adam's two moments with save_optimizer), as above: 2 for DeepSpeed's
 * 16-bit gather, else dtype x (1, or 3 with the optimizer state). */
uint32_t mc_terms_save_param_bytes(const struct mc_usage *u);

/* Activation offload (bytes, all ranks of the node). */
uint64_t mc_terms_act_bytes(const struct mc_usage *u, uint32_t gpus);
/* nvme offload's pinned buffers (bytes, all ranks of the node). */
uint64_t mc_terms_nvme_bytes(const struct mc_usage *u, uint32_t gpus);

/* Copies of an in-memory dataset per rank at w DataLoader workers per
 * rank: w + 1 for objects, 1 for arrays (above). */
uint32_t mc_terms_dataset_copies(const struct mc_usage *u, uint32_t workers);

/* The dataset held in RAM (bytes, all ranks of the node): ranks x S x
 * mc_terms_dataset_copies, w the DataLoader workers per rank; 0 without
 * one or without GPUs. Saturating. */
uint64_t mc_terms_dataset_bytes(const struct mc_usage *u, uint32_t gpus,
				uint32_t workers);
/* Its ranks' own copies, ranks x S: the part that coexists with the
 * model's load peak (above). */
uint64_t mc_terms_dataset_task_bytes(const struct mc_usage *u,
				     uint32_t gpus);

/*
 * Extra cores per rank for an optimizer step on the CPU
 * (DeepSpeedCPUAdam, ZeRO-Offload): the policy's OffloadCoresPerGpu when
 * offloaded is true, else 0.
 */
uint32_t mc_terms_offload_cores(const struct mc_policy *p, bool offloaded);

/*
 * The combination: floor + tasks + max(load, resident + save), resident =
 * workers + zero + act + nvme. Saturating.
 */
uint64_t mc_terms_combine(uint64_t floor, uint64_t tasks, uint64_t load,
			  uint64_t workers, uint64_t zero, uint64_t act,
			  uint64_t nvme, uint64_t save);

/*
 * Check the usage against the policy: --ram-per-worker within
 * [MinRamPerWorker, MaxRamPerWorker]; activation offload with its layers,
 * hidden size, sequence and micro-batch known. p may be NULL (the
 * bounds are then not checked). Returns 0 or -1 with err naming the option
 * and the fix.
 */
int mc_terms_check(const struct mc_policy *p, const struct mc_usage *u,
		   char *err, size_t errlen);

#endif
