/*
 * mc_dsconfig.h - a DeepSpeed config (ds_config.json, the file passed to
 * deepspeed.initialize(config=...)) into what memcore sizes host RAM
 * with. Keys and defaults as DeepSpeed's docs (deepspeed.ai/docs/config-json)
 * and deepspeed/runtime/zero/config.py, offload_config.py,
 * activation_checkpointing/config.py define them:
 *   zero_optimization.stage                          0..3 (default 0)
 *   zero_optimization.offload_optimizer.device       none|cpu|nvme
 *   zero_optimization.offload_optimizer.buffer_count 4 (nvme swap buffers)
 *   zero_optimization.offload_param.device           none|cpu|nvme
 *   zero_optimization.offload_param.buffer_count     5 (nvme)
 *   zero_optimization.offload_param.buffer_size      1e8 elements (nvme)
 *   zero_optimization.cpu_offload                    legacy: optimizer cpu
 *   zero_optimization.cpu_offload_param              legacy: param cpu
 *   zero_optimization.cpu_offload_use_pin_memory     legacy: pinning only
 *   zero_optimization.gather_16bit_weights_on_model_save  false, also
 *     under its alias stage3_gather_16bit_weights_on_model_save and the
 *     deprecated stage3_gather_fp16_weights_on_model_save
 *   (every spelling zero/config.py accepts: a legacy key beside its new
 *   one, or the two names of the gather disagreeing, is refused naming
 *   the key, as DeepSpeed's config_utils.py refuses it)
 *   activation_checkpointing.cpu_checkpointing       false
 *   activation_checkpointing.partition_activations   false
 *   train_micro_batch_size_per_gpu                   integer or "auto"
 *   bf16.enabled, fp16.enabled                       (true: 2-byte weights)
 * "auto" (filled in at run time by the Hugging Face Trainer, or by
 * Accelerate from its own launch options: --zero_stage,
 * --offload_optimizer_device, --offload_param_device,
 * --zero3_save_16bit_model) reads as not given wherever they take it:
 * the stage, both offload devices, the 16-bit gather on save, the
 * micro-batch and bf16/fp16. The option of the same meaning must say it
 * where it matters; auto_mask keeps which, for the explanation's note.
 * nvme offload keeps only pinned staging buffers in host RAM (DeepSpeed's
 * AsyncPartitionedParameterSwapper: buffer_count x buffer_size 16-bit
 * elements; OptimizerSwapper: buffer_count x the largest fp32 partition).
 */
#ifndef MC_DSCONFIG_H
#define MC_DSCONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum mc_ds_device { MC_DS_NONE = 0, MC_DS_CPU, MC_DS_NVME };
extern const char *const mc_ds_device_words[];	/* none cpu nvme */

struct mc_ds_facts {
	bool has_stage;
	uint32_t stage;
	enum mc_ds_device offload_optimizer, offload_param;
	uint32_t optimizer_buffer_count;	/* nvme, default 4 */
	uint32_t param_buffer_count;		/* nvme, default 5 */
	uint64_t param_buffer_size;		/* nvme, elements, 1e8 */
	bool gather_16bit_on_save;
	bool cpu_checkpointing;
	bool partition_activations;
	uint32_t micro_batch;			/* 0: absent or "auto" */
	bool micro_batch_auto;
	/* 2 with bf16 or fp16 enabled, 4 with neither, 0 when "auto". */
	uint32_t dtype_bytes;
	uint32_t auto_mask;			/* MC_DS_AUTO_* read "auto" */
};

/* The keys of auto_mask: "auto" there reads as not given. */
#define MC_DS_AUTO_STAGE	(1u << 0)	/* zero_optimization.stage */
#define MC_DS_AUTO_OFFLOAD_OPTIMIZER (1u << 1)	/* ...offload_optimizer.device */
#define MC_DS_AUTO_OFFLOAD_PARAM (1u << 2)	/* ...offload_param.device */
#define MC_DS_AUTO_GATHER_16BIT	(1u << 3)	/* stage3_gather_16bit_... */
#define MC_DS_AUTO_ALL		0xfu

/*
 * Parse ds_config.json text. name is the option and file in messages
 * ("--deepspeed-config=ds.json"). Returns 0, or -1 with err = "NAME:
 * zero_optimization.stage: expected 0, 1, 2 or 3", "NAME:
 * zero_optimization.offload_param.device: expected none, cpu or nvme, got
 * \"gpu\"", "NAME: not JSON at line L, column C: ..." (mc_jsonfile_parse).
 */
int mc_dsconfig_parse(const char *text, size_t len, const char *name,
		      struct mc_ds_facts *d, char *err, size_t errlen);

#endif
