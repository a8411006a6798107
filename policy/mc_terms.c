/*
 * mc_terms.c - the job's host-RAM terms beyond the GPU floor (see
 * mc_terms.h for each formula, its source and how they combine).
 */
#include "mc_terms.h"
#include "mc_rules.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "mc_parse.h"
#include "mc_util.h"

const char *const mc_load_words[] = { "per-rank", "rank0", "meta", NULL };
const char *const mc_save_words[] = { "none", "rank0", "all", NULL };
const char *const mc_dtype_words[] = { "fp32", "bf16", "fp16", NULL };
const char *const mc_dataset_kind_words[] = { "objects", "arrays", NULL };

/* Saturating, as the rules are: a wrapped figure would let a step
 * through. */
#define mul mc_mul_sat64
#define add mc_add_sat64

uint64_t mc_share_bytes(uint64_t card, uint32_t num, uint32_t den)
{
	unsigned __int128 x;

	if (!den || !card)
		return card;
	if (num >= den)
		return card;
	x = (unsigned __int128)card * num;
	return (uint64_t)(x / den + (x % den != 0));
}

uint32_t mc_shards_per_gpu(const struct mc_policy *p, uint32_t node_shards,
			   uint32_t node_gpus, const char **from)
{
	if (p && p->shards_per_gpu) {
		if (from)
			*from = "ShardsPerGpu";
		return p->shards_per_gpu;
	}
	if (node_gpus && node_shards / node_gpus) {
		if (from)
			*from = "Slurm";
		return node_shards / node_gpus;
	}
	if (from)
		*from = "";
	return 0;
}

bool mc_shards_disagree(const struct mc_policy *p, uint32_t node_shards,
			uint32_t node_gpus, uint32_t *slurm_per)
{
	uint32_t per = node_gpus ? node_shards / node_gpus : 0;

	if (slurm_per)
		*slurm_per = per;
	return p && p->shards_per_gpu && per && per != p->shards_per_gpu;
}

void mc_share_apply(struct mc_request *r, uint32_t per_gpu, const char *from)
{
	struct mc_usage *u = &r->use;
	uint32_t den = u->share_per_gpu ? u->share_per_gpu : per_gpu;
	uint64_t card = r->gpu_memory_bytes;
	char a[32];

	if (!u->share_kind || !u->share_count)
		return;
	if (!den && u->share_kind == 2)
		den = 100;
	if (!den) {
		mc_usage_note(u, "gres/shard: shards per GPU unknown here "
			      "(no shard count in the node's Gres, no "
			      "ShardsPerGpu=): sized as the whole card");
		return;
	}
	/* Kept: the verdict compares the count with the node's shares, and
	 * the node's RAM rule is the whole card's. */
	u->share_per_gpu = den;
	u->share_card_bytes = card;
	if (u->share_kind == 2 && den != 100) {
		/* What launch sees of an MPS count: the whole percentage
		 * Slurm's gres/mps sets, count x 100 / the card's count cut
		 * to a whole number and at least 1 (_set_env, gres_mps.c
		 * 22.05 to 26.05: CUDA_MPS_ACTIVE_THREAD_PERCENTAGE). */
		uint64_t pct = (uint64_t)u->share_count * 100 / den;

		if (!pct)
			pct = 1;
		if (pct > UINT32_MAX)
			pct = UINT32_MAX;
		r->gpu_memory_bytes = mc_share_bytes(card, (uint32_t)pct, 100);
		mc_usage_note(u, "gres/mps%s%s%s: %u of %u per GPU, Slurm's "
			      "%" PRIu64 "%% of a %s GPU", from ? " (" : "",
			      from ? from : "", from ? ")" : "",
			      u->share_count, den, pct,
			      card ? mc_fmt_bytes(card, a, sizeof(a))
			      : "unknown-memory");
		return;
	}
	r->gpu_memory_bytes = mc_share_bytes(card, u->share_count, den);
	mc_usage_note(u, "%s%s%s%s: %u/%u of a %s GPU", u->share_kind == 1 ?
		      "gres/shard" : "gres/mps", from ? " (" : "",
		      from ? from : "", from ? ")" : "", u->share_count, den,
		      card ? mc_fmt_bytes(card, a, sizeof(a))
		      : "unknown-memory");
}

void mc_usage_note(struct mc_usage *u, const char *fmt, ...)
{
	va_list ap;

	if (u->n_notes >= MC_NOTES_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(u->notes[u->n_notes], MC_NOTE_MAX, fmt, ap);
	va_end(ap);
	u->n_notes++;
}

uint32_t mc_terms_ranks(const struct mc_usage *u, uint32_t gpus)
{
	return u->ranks > gpus ? u->ranks : gpus;
}

uint64_t mc_terms_ram_per_worker(const struct mc_policy *p,
				 const struct mc_usage *u)
{
	return u->ram_per_worker_bytes ? u->ram_per_worker_bytes
				       : p->ram_per_worker_bytes;
}

uint64_t mc_terms_load_bytes(const struct mc_usage *u, uint32_t gpus,
			     uint64_t params, uint32_t zero_stage)
{
	uint64_t loaders;

	if (!params || zero_stage > 0 || !gpus)
		return 0;
	loaders = u->load == MC_LOAD_META ? 0
		: u->load == MC_LOAD_RANK0 ? 1 : mc_terms_ranks(u, gpus);
	return mul(mul(loaders, params), u->dtype_bytes ? u->dtype_bytes : 4);
}

uint32_t mc_terms_save_param_bytes(const struct mc_usage *u)
{
	uint32_t db = u->dtype_bytes ? u->dtype_bytes : 4;

	if (u->save == MC_SAVE_NONE)
		return u->save_16bit ? 2 : 0;	/* DeepSpeed: 16-bit */
	return u->save_optimizer ? 3 * db : db;
}

uint64_t mc_terms_save_bytes(const struct mc_usage *u, uint32_t gpus,
			     uint64_t params)
{
	uint64_t copies;

	if (!params || !gpus)
		return 0;
	/* DeepSpeed's gather is on rank 0; FSDP's on rank 0 or on all. */
	copies = u->save == MC_SAVE_ALL ? mc_terms_ranks(u, gpus) : 1;
	return mul(copies, mul(params, mc_terms_save_param_bytes(u)));
}

uint64_t mc_terms_act_bytes(const struct mc_usage *u, uint32_t gpus)
{
	uint64_t per;
	uint32_t mp = u->model_parallel ? u->model_parallel : 1;

	if (!u->cpu_checkpointing || !gpus)
		return 0;
	per = mul(mul(mul(u->layers, u->micro_batch),
		      mul(u->seq_len, u->hidden)),
		  u->act_bytes ? u->act_bytes : 4);
	if (u->partition_activations && mp > 1)
		per = per / mp + (per % mp != 0);
	return mul(per, mc_terms_ranks(u, gpus));
}

uint64_t mc_terms_nvme_bytes(const struct mc_usage *u, uint32_t gpus)
{
	return mul(u->nvme_pinned_bytes, gpus ? mc_terms_ranks(u, gpus) : 0);
}

uint64_t mc_terms_dataset_task_bytes(const struct mc_usage *u,
				     uint32_t gpus)
{
	return gpus ? mul(u->dataset_bytes, mc_terms_ranks(u, gpus)) : 0;
}

uint32_t mc_terms_dataset_copies(const struct mc_usage *u, uint32_t workers)
{
	/* Arrays: the rank's copy, its workers' pages shared; objects: one
	 * in the rank and one in each of its workers. */
	if (u->dataset_kind == MC_DATASET_ARRAYS)
		return 1;
	return workers < UINT32_MAX ? workers + 1 : UINT32_MAX;
}

uint64_t mc_terms_dataset_bytes(const struct mc_usage *u, uint32_t gpus,
				uint32_t workers)
{
	return mul(mc_terms_dataset_task_bytes(u, gpus),
		   mc_terms_dataset_copies(u, workers));
}

uint32_t mc_terms_offload_cores(const struct mc_policy *p, bool offloaded)
{
	return offloaded ? p->offload_cores_per_gpu : 0;
}

uint64_t mc_terms_combine(uint64_t floor, uint64_t tasks, uint64_t load,
			  uint64_t workers, uint64_t zero, uint64_t act,
			  uint64_t nvme, uint64_t save)
{
	uint64_t resident = add(add(add(add(workers, zero), act), nvme), save);

	return add(add(floor, tasks), load > resident ? load : resident);
}

int mc_terms_check(const struct mc_policy *p, const struct mc_usage *u,
		   char *err, size_t errlen)
{
	char a[32], b[32], c[32];

	if (p && u->ram_per_worker_bytes &&
	    (u->ram_per_worker_bytes < p->min_ram_per_worker_bytes ||
	     u->ram_per_worker_bytes > p->max_ram_per_worker_bytes))
		return mc_err(err, errlen, "--ram-per-worker=%s: outside "
			      "what the site allows (MinRamPerWorker=%s, "
			      "MaxRamPerWorker=%s)",
			      mc_fmt_bytes(u->ram_per_worker_bytes, a,
					   sizeof(a)),
			      mc_fmt_bytes(p->min_ram_per_worker_bytes, b,
					   sizeof(b)),
			      mc_fmt_bytes(p->max_ram_per_worker_bytes, c,
					   sizeof(c)));
	if (!u->cpu_checkpointing)
		return 0;
	if (!u->layers || !u->hidden)
		return mc_err(err, errlen, "activation offload "
			      "(cpu_checkpointing) is sized from the model's "
			      "layers and hidden size: add --model-config="
			      "config.json");
	if (!u->seq_len)
		return mc_err(err, errlen, "activation offload "
			      "(cpu_checkpointing) needs the sequence length: "
			      "add --seq-len=N");
	if (!u->micro_batch)
		return mc_err(err, errlen, "activation offload "
			      "(cpu_checkpointing) needs the micro-batch "
			      "(train_micro_batch_size_per_gpu is absent or "
			      "\"auto\"): add --micro-batch=N");
	return 0;
}

uint64_t mc_card_bytes(const struct mc_request *r)
{
	return r->use.share_card_bytes ? r->use.share_card_bytes
				       : r->gpu_memory_bytes;
}
