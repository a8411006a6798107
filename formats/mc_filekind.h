/*
 * mc_filekind.h - what a job file is, from its own keys, so that a file
 * given to the wrong option is named as what it is ("this is an
 * Accelerate config, give it as --accelerate-config") rather than failing
 * as a bad file of the option's kind. The marks, each the file's own
 * required or characteristic key:
 *   DeepSpeed ds_config.json    a JSON object with zero_optimization,
 *                               train_micro_batch_size_per_gpu,
 *                               train_batch_size or gradient_accumulation_steps
 *   Hugging Face config.json    model_type or architectures
 *   PEFT adapter_config.json    peft_type
 *   Accelerate config (YAML)    distributed_type or compute_environment
 *                               (accelerate/commands/config/config_args.py
 *                               BaseConfig, what `accelerate config` writes)
 *   torchtune recipe (YAML)     a torchtune.* _component_ under model,
 *                               checkpointer or tokenizer
 */
#ifndef MC_FILEKIND_H
#define MC_FILEKIND_H

#include <stddef.h>

enum mc_file_kind {
	MC_FILE_UNKNOWN = 0,
	MC_FILE_DEEPSPEED,
	MC_FILE_MODEL,
	MC_FILE_PEFT,
	MC_FILE_ACCELERATE,
	MC_FILE_TORCHTUNE,
};

/* The kind of a job file's text (JSON or YAML); MC_FILE_UNKNOWN when it
 * parses as neither or has none of the marks. */
enum mc_file_kind mc_file_kind_of(const char *text, size_t len);

/* "a DeepSpeed config", and the option that takes it
 * ("--deepspeed-config"). */
const char *mc_file_kind_name(enum mc_file_kind k);
const char *mc_file_kind_option(enum mc_file_kind k);

/*
 * 0 when text is of kind want or unknown (the option's own parser then
 * says what is wrong with it), else -1 with err = "NAME: this is an
 * Accelerate config, not a DeepSpeed config: give it as
 * --accelerate-config".
 */
int mc_file_kind_check(const char *text, size_t len, enum mc_file_kind want,
		       const char *name, char *err, size_t errlen);

#endif
