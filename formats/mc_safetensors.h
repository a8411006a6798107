/*
 * mc_safetensors.h - a model's parameter count from its checkpoint: the
 * safetensors files a Hugging Face model directory (or the Hub cache's
 * snapshot of one) holds, read headers only.
 *
 * The format (huggingface/safetensors, docs "Format"): 8 bytes, a
 * little-endian unsigned header length N; N bytes of JSON, an object of
 * tensor name -> {"dtype", "shape", "data_offsets": [begin, end]} (offsets
 * into the data that follows the header) and an optional "__metadata__"
 * object of strings; then the data. A sharded checkpoint adds
 * model.safetensors.index.json: {"metadata": {"total_size": BYTES},
 * "weight_map": {tensor name -> shard file}} (transformers'
 * save_pretrained; total_size is the tensors' bytes).
 *
 * The count is every tensor's elements: what from_pretrained loads, of
 * any model family, with the dtypes it is stored in; the largest tensor
 * is the largest layer DeepSpeed's estimate takes.
 *
 * Read as the calling user, like mc_jsonfile.h's files (only in the
 * user's own processes, never in slurmd or slurmstepd): a symbolic link
 * is followed, since the Hub cache's snapshot files are links into its
 * blobs/ directory, and the kernel applies the user's permissions to
 * each. Bounded: a header of at most MC_ST_HEADER_MAX bytes, an index of
 * at most MC_ST_INDEX_MAX, MC_ST_SHARDS_MAX shards; only the 8 bytes and
 * the header of each shard are read, never the tensors; O_NONBLOCK, so a
 * FIFO in place of a file cannot hang the submission.
 */
#ifndef MC_SAFETENSORS_H
#define MC_SAFETENSORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mc_hfconfig.h"

/* safetensors' own reader refuses a header over 100 MB; a real one is
 * under 1 MiB (DeepSeek-V3's largest shard: about 600 tensors). */
#define MC_ST_HEADER_MAX (16u << 20)
/* DeepSeek-V3's index (91,000 tensors) is about 9 MiB. */
#define MC_ST_INDEX_MAX (32u << 20)
#define MC_ST_SHARDS_MAX 4096
#define MC_ST_NAME_MAX 96

/* The dtypes safetensors names, in the order of this table. */
enum mc_st_dtype {
	MC_ST_BOOL, MC_ST_U8, MC_ST_I8, MC_ST_F8_E5M2, MC_ST_F8_E4M3,
	MC_ST_F8_E8M0, MC_ST_I16, MC_ST_U16, MC_ST_F16, MC_ST_BF16,
	MC_ST_I32, MC_ST_U32, MC_ST_F32, MC_ST_F64, MC_ST_I64, MC_ST_U64,
	MC_ST_C64, MC_ST_F4, MC_ST_F6_E2M3, MC_ST_F6_E3M2, MC_ST_DTYPES
};

/* The name ("BF16") and the bits of one element (16) of a dtype. */
const char *mc_st_dtype_name(enum mc_st_dtype d);
unsigned mc_st_dtype_bits(enum mc_st_dtype d);

/* What the headers of a checkpoint's files say, summed over them. */
struct mc_st_figures {
	uint64_t tensors;
	uint64_t params;		/* elements of every tensor */
	uint64_t bytes;			/* their data bytes */
	uint64_t dtype_params[MC_ST_DTYPES];	/* elements per dtype */
	uint64_t largest_params;	/* the largest tensor's elements */
	char largest[MC_ST_NAME_MAX];	/* its name, escaped */
};

/*
 * Add one header's tensors to *f. json is the header (len bytes, need not
 * be NUL-terminated); data_len the bytes after it in the file (every
 * tensor's data_offsets must lie inside), UINT64_MAX when not known. name
 * says which file in messages. Returns 0, or -1 with *f unchanged and err
 * = "NAME: safetensors header: not JSON at ...", "NAME: safetensors
 * header: TENSOR: dtype \"X\" is not one safetensors defines", "...:
 * shape: expected a list of sizes", "...: shape [..]: more than 2^64
 * elements", "...: data_offsets [B, E] beyond the file's N data bytes",
 * "...: data_offsets: E - B bytes, not the S its shape and dtype hold".
 */
int mc_safetensors_header(const char *json, size_t len, uint64_t data_len,
			  const char *name, struct mc_st_figures *f,
			  char *err, size_t errlen);

/*
 * Read one .safetensors file's header (the 8-byte length, then at most
 * MC_ST_HEADER_MAX bytes of JSON; never the tensors) from file under the
 * directory dirfd, as the caller, and add it to *f. name says which file
 * in messages. Errors: "NAME: cannot open: <strerror>", "NAME: not a
 * regular file", "NAME: truncated: N bytes, no safetensors header
 * length", "NAME: a header of N bytes: larger than the 16777216 memcore
 * reads", "NAME: a header of N bytes: beyond the file's end (M bytes)",
 * and those of mc_safetensors_header.
 */
int mc_safetensors_file(int dirfd, const char *file, const char *name,
			struct mc_st_figures *f, char *err, size_t errlen);

/* A model.safetensors.index.json: its total_size and the shards its
 * weight_map names, each once (sorted; at most MC_ST_SHARDS_MAX). */
struct mc_st_index {
	uint64_t total_size;	/* 0 when the file has none */
	uint64_t tensors;	/* weight_map's entries */
	char **shards;
	size_t n_shards;
};

/*
 * Parse an index's text. A shard name must be a plain file name ending
 * ".safetensors" (no '/', not "." or ".."): the index cannot send the
 * reader out of the model's directory. Returns 0, or -1 with err =
 * "NAME: weight_map: missing (expected an object of tensor -> shard
 * file)", "NAME: weight_map: TENSOR: \"../x\" is not a shard file name in
 * this directory", "NAME: metadata.total_size: expected a byte count",
 * "NAME: more than 4096 shards". mc_st_index_free() releases it.
 */
int mc_safetensors_index(const char *text, size_t len, const char *name,
			 struct mc_st_index *ix, char *err, size_t errlen);
void mc_st_index_free(struct mc_st_index *ix);

/* How a model directory was counted. */
enum mc_modeldir_source {
	MC_MODELDIR_HEADERS,	/* every shard's header */
	MC_MODELDIR_INDEX	/* total_size / torch_dtype's bytes: the
				 * index without its shards */
};

/*
 * Count the model in directory path (what names the option in messages,
 * "--model-config=DIR"): a Hugging Face model directory (config.json,
 * model.safetensors or model.safetensors.index.json and its shards) or
 * the Hub cache's repository directory (models--ORG--NAME: the snapshot
 * refs/main names). config.json, when there, gives the shape the other
 * terms read (any model_type: mc_hfconfig_parse with MC_HF_ANY_TYPE) and
 * torch_dtype. With the shards present the count is their headers'
 * (exact), checked against the index (the same tensors); with the index
 * alone, total_size divided by torch_dtype's bytes. On success m holds
 * the shape, params (the checkpoint's), largest_layer_params (its largest
 * tensor), dtype_bytes (the dtype most parameters are stored in, when
 * 16 or 32 bits) and model_type (config.json's, else "safetensors"); f
 * (may be NULL) the headers' figures; *src how. Errors name the file and
 * what was wrong in it ("DIR/model-00002-of-00004.safetensors: a header
 * of ... bytes: beyond the file's end", "DIR: neither
 * model.safetensors.index.json nor model.safetensors (memcore reads the
 * safetensors format only: give --model-params)").
 */
int mc_modeldir_read(const char *path, const char *what,
		     struct mc_model_shape *m, struct mc_st_figures *f,
		     enum mc_modeldir_source *src, char *err, size_t errlen);

#endif
