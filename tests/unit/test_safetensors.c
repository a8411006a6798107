/*
 * test_safetensors.c - a model counted from its checkpoint
 * (mc_safetensors.h): a Hub-style model directory written here (config.json,
 * model.safetensors.index.json and two shards of tiny tensors, each in the
 * safetensors layout: 8-byte little-endian header length, JSON header,
 * data) counted exactly from its headers and from its index, the Hub
 * cache's layout (refs/main, snapshots/<commit> of links into blobs/), and
 * malformed files refused naming the file and what was wrong.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "mc_hfconfig.h"
#include "mc_safetensors.h"
#include "mc_test_files.h"

static char err[1024];
static char dir[PATH_MAX];

/* A tiny Llama (modeling_llama.py's modules): V 16, H 8, I 12, 2 layers,
 * 2 heads of 4, 1 KV head, untied. */
static const char config[] = "{\"architectures\": [\"LlamaForCausalLM\"], "
	"\"model_type\": \"llama\", \"hidden_size\": 8, \"intermediate_size\""
	": 12, \"num_hidden_layers\": 2, \"num_attention_heads\": 2, "
	"\"num_key_value_heads\": 1, \"vocab_size\": 16, "
	"\"max_position_embeddings\": 64, \"tie_word_embeddings\": false, "
	"\"torch_dtype\": \"bfloat16\"}";

struct t { const char *name; uint64_t rows, cols; };

/* Layer l's tensors (rows x cols; cols 0: a vector). */
static size_t layer(int l, struct t *out, char names[][64])
{
	static const struct t shapes[] = {
		{ "self_attn.q_proj.weight", 8, 8 },
		{ "self_attn.k_proj.weight", 4, 8 },
		{ "self_attn.v_proj.weight", 4, 8 },
		{ "self_attn.o_proj.weight", 8, 8 },
		{ "mlp.gate_proj.weight", 12, 8 },
		{ "mlp.up_proj.weight", 12, 8 },
		{ "mlp.down_proj.weight", 8, 12 },
		{ "input_layernorm.weight", 8, 0 },
		{ "post_attention_layernorm.weight", 8, 0 },
	};

	for (size_t i = 0; i < 9; i++) {
		snprintf(names[i], 64, "model.layers.%d.%s", l, shapes[i].name);
		out[i] = shapes[i];
		out[i].name = names[i];
	}
	return 9;
}

/* A safetensors file of BF16 tensors (zeros), as safetensors writes it. */
static uint64_t write_shard(const char *file, const struct t *ts, size_t n)
{
	char hdr[8192], path[PATH_MAX + 64];
	size_t used = 0;
	uint64_t off = 0, len;
	unsigned char le[8];
	FILE *f;

	used += (size_t)snprintf(hdr + used, sizeof(hdr) - used,
				 "{\"__metadata__\": {\"format\": \"pt\"}");
	for (size_t i = 0; i < n; i++) {
		uint64_t e = ts[i].rows * (ts[i].cols ? ts[i].cols : 1);
		char shape[64];

		/* a vector's shape has one size */
		if (ts[i].cols)
			snprintf(shape, sizeof(shape), "%llu, %llu",
				 (unsigned long long)ts[i].rows,
				 (unsigned long long)ts[i].cols);
		else
			snprintf(shape, sizeof(shape), "%llu",
				 (unsigned long long)ts[i].rows);
		used += (size_t)snprintf(hdr + used, sizeof(hdr) - used,
			", \"%s\": {\"dtype\": \"BF16\", \"shape\": [%s], "
			"\"data_offsets\": [%llu, %llu]}", ts[i].name, shape,
			(unsigned long long)off,
			(unsigned long long)(off + 2 * e));
		off += 2 * e;
	}
	used += (size_t)snprintf(hdr + used, sizeof(hdr) - used, "}");
	len = used;
	for (int i = 0; i < 8; i++)
		le[i] = (unsigned char)(len >> (8 * i));
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(le, 1, 8, f), 8);
	assert_int_equal(fwrite(hdr, 1, used, f), used);
	for (uint64_t i = 0; i < off; i++)
		fputc(0, f);
	assert_int_equal(fclose(f), 0);
	return off;
}

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/mc-st-XXXXXX");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/*
 * The model of config.json written as transformers' save_pretrained
 * shards it: layer 0 with the embedding in shard 1, layer 1, the norm
 * and lm_head in shard 2; the index's total_size is the tensors' bytes.
 * Returns that total.
 */
static uint64_t write_model(void)
{
	struct t a[16], b[16];
	char na[16][64], nb[16][64], index[8192];
	size_t n1, n2, used = 0;
	uint64_t total;

	n1 = layer(0, a, na);
	a[n1++] = (struct t){ "model.embed_tokens.weight", 16, 8 };
	n2 = layer(1, b, nb);
	b[n2++] = (struct t){ "model.norm.weight", 8, 0 };
	b[n2++] = (struct t){ "lm_head.weight", 16, 8 };
	total = write_shard("model-00001-of-00002.safetensors", a, n1);
	total += write_shard("model-00002-of-00002.safetensors", b, n2);
	used += (size_t)snprintf(index, sizeof(index), "{\"metadata\": "
		"{\"total_size\": %llu}, \"weight_map\": {",
		(unsigned long long)total);
	for (size_t i = 0; i < n1 + n2; i++)
		used += (size_t)snprintf(index + used, sizeof(index) - used,
			"%s\"%s\": \"model-0000%d-of-00002.safetensors\"",
			i ? ", " : "", i < n1 ? a[i].name : b[i - n1].name,
			i < n1 ? 1 : 2);
	snprintf(index + used, sizeof(index) - used, "}}");
	mc_test_put(dir, "model.safetensors.index.json", index);
	mc_test_put(dir, "config.json", config);
	return total;
}

/* The count from the headers equals the config's count (tallied here)
 * and the index's total_size over bf16's 2 bytes; the largest tensor is
 * the embedding (16 x 8, lm_head ties it in size; the first kept). */
static void test_model_dir_exact(void **state)
{
	struct mc_model_shape m, c;
	struct mc_st_figures f;
	enum mc_modeldir_source src;
	/* embed, lm_head, norm; per layer q, k, v, o, gate, up, down and
	 * two norms */
	uint64_t tally = 16 * 8 * 2 + 8 +
			 2 * (64 + 32 + 32 + 64 + 3 * 96 + 2 * 8);
	uint64_t total = write_model();

	assert_int_equal(mc_modeldir_read(dir, "DIR", &m, &f, &src, err,
					  sizeof(err)), 0);
	assert_int_equal(src, MC_MODELDIR_HEADERS);
	assert_int_equal(m.params, tally);
	assert_int_equal(f.tensors, 2 * 9 + 3);
	assert_int_equal(f.bytes, total);
	assert_int_equal(m.params, total / 2);
	assert_int_equal(f.dtype_params[MC_ST_BF16], tally);
	assert_int_equal(m.largest_layer_params, 16 * 8);
	assert_int_equal(m.dtype_bytes, 2);
	assert_true(m.from_checkpoint);
	assert_string_equal(m.model_type, "llama");
	/* the shape from config.json */
	assert_int_equal(m.layers, 2);
	assert_int_equal(m.hidden, 8);
	assert_int_equal(m.max_positions, 64);
	/* config.json's own count agrees */
	assert_int_equal(mc_hfconfig_parse(config, strlen(config), "c", 0, &c,
					   err, sizeof(err)), 0);
	assert_int_equal(c.params, tally);

	/* The index alone (shards not downloaded): total_size / 2 */
	{
		char p[PATH_MAX + 64];

		snprintf(p, sizeof(p), "%s/model-00001-of-00002.safetensors",
			 dir);
		assert_int_equal(unlink(p), 0);
		snprintf(p, sizeof(p), "%s/model-00002-of-00002.safetensors",
			 dir);
		assert_int_equal(unlink(p), 0);
	}
	assert_int_equal(mc_modeldir_read(dir, "DIR", &m, NULL, &src, err,
					  sizeof(err)), 0);
	assert_int_equal(src, MC_MODELDIR_INDEX);
	assert_int_equal(m.params, tally);
}

/* One shard of the two: the index lists tensors it does not hold. */
static void test_model_dir_missing_shard(void **state)
{
	struct mc_model_shape m;
	char p[PATH_MAX + 64];

	write_model();
	snprintf(p, sizeof(p), "%s/model-00002-of-00002.safetensors", dir);
	assert_int_equal(unlink(p), 0);
	assert_int_equal(mc_modeldir_read(dir, "DIR", &m, NULL, NULL, err,
					  sizeof(err)), -1);
	fprintf(stderr, "%s\n", err);
	assert_string_equal(err, "DIR/model-00002-of-00002.safetensors: "
			    "cannot open: No such file or directory");
}

/* The Hub cache: models--ORG--NAME/refs/main names the snapshot, whose
 * files are links into blobs/ (huggingface_hub's layout). */
static void test_hub_cache(void **state)
{
	struct mc_model_shape m;
	char repo[PATH_MAX + 64], p[PATH_MAX * 2], q[PATH_MAX * 2];
	static const char *const files[] = {
		"config.json", "model.safetensors.index.json",
		"model-00001-of-00002.safetensors",
		"model-00002-of-00002.safetensors",
	};
	static const char commit[] = "0123456789abcdef0123456789abcdef01234567";

	write_model();
	snprintf(repo, sizeof(repo), "%s/models--org--tiny", dir);
	snprintf(p, sizeof(p), "mkdir -p '%s/blobs' '%s/refs' "
		 "'%s/snapshots/%s'", repo, repo, repo, commit);
	assert_int_equal(system(p), 0);
	for (size_t i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, files[i]);
		snprintf(q, sizeof(q), "%s/blobs/b%zu", repo, i);
		assert_int_equal(rename(p, q), 0);
		snprintf(p, sizeof(p), "%s/snapshots/%s/%s", repo, commit,
			 files[i]);
		snprintf(q, sizeof(q), "../../blobs/b%zu", i);
		assert_int_equal(symlink(q, p), 0);
	}
	snprintf(p, sizeof(p), "%s\n", commit);
	mc_test_put(repo, "refs/main", p);
	assert_int_equal(mc_modeldir_read(repo, "REPO", &m, NULL, NULL, err,
					  sizeof(err)), 0);
	assert_int_equal(m.params, 16 * 8 * 2 + 8 +
			 2 * (64 + 32 + 32 + 64 + 3 * 96 + 2 * 8));
}

/* A one-file model.safetensors written with header bytes hdr and
 * data_len bytes after it; header length as given (len_override) or the
 * header's own. */
static int one_file(const char *hdr, uint64_t len_override, size_t data_len)
{
	struct mc_model_shape m;
	char path[PATH_MAX + 64];
	uint64_t len = len_override ? len_override : strlen(hdr);
	unsigned char le[8];
	FILE *f;

	for (int i = 0; i < 8; i++)
		le[i] = (unsigned char)(len >> (8 * i));
	snprintf(path, sizeof(path), "%s/model.safetensors", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fwrite(le, 1, 8, f);
	fwrite(hdr, 1, strlen(hdr), f);
	for (size_t i = 0; i < data_len; i++)
		fputc(0, f);
	assert_int_equal(fclose(f), 0);
	return mc_modeldir_read(dir, "D", &m, NULL, NULL, err, sizeof(err));
}

static void test_malformed(void **state)
{
	char path[PATH_MAX + 64];

	/* well-formed: 2 x 3 F32 = 24 bytes */
	assert_int_equal(one_file("{\"w\": {\"dtype\": \"F32\", \"shape\": "
				  "[2, 3], \"data_offsets\": [0, 24]}}", 0,
				  24), 0);
	/* too large a header (the bound, not the file's size) */
	assert_int_equal(one_file("{}", (uint64_t)MC_ST_HEADER_MAX + 1, 0),
			 -1);
	assert_non_null(strstr(err, "D/model.safetensors: a header of "
			       "16777217 bytes: larger than the 16777216 "
			       "memcore reads"));
	/* a header length past the file's end */
	assert_int_equal(one_file("{}", 4096, 0), -1);
	assert_non_null(strstr(err, "D/model.safetensors: a header of 4096 "
			       "bytes: beyond the file's end (10 bytes"));
	/* not JSON */
	assert_int_equal(one_file("{\"w\": [", 0, 0), -1);
	assert_non_null(strstr(err, "D/model.safetensors: safetensors header: "
			       "not JSON at line 1"));
	/* a shape whose elements overflow 64 bits */
	assert_int_equal(one_file("{\"w\": {\"dtype\": \"F32\", \"shape\": "
				  "[4294967296, 4294967296], "
				  "\"data_offsets\": [0, 0]}}", 0, 0), -1);
	assert_string_equal(err, "D/model.safetensors: safetensors header: "
			    "w: shape: more than 2^64 elements");
	/* the tensor's data past the file's end: truncated */
	assert_int_equal(one_file("{\"w\": {\"dtype\": \"F32\", \"shape\": "
				  "[2, 3], \"data_offsets\": [0, 24]}}", 0,
				  8), -1);
	assert_string_equal(err, "D/model.safetensors: safetensors header: "
			    "w: data_offsets [0, 24] beyond the file's 8 data "
			    "bytes (truncated?)");
	/* offsets that disagree with shape and dtype */
	assert_int_equal(one_file("{\"w\": {\"dtype\": \"BF16\", \"shape\": "
				  "[2, 3], \"data_offsets\": [0, 24]}}", 0,
				  24), -1);
	assert_string_equal(err, "D/model.safetensors: safetensors header: "
			    "w: data_offsets: 24 bytes, not the 12 its shape "
			    "and dtype hold");
	assert_int_equal(one_file("{\"w\": {\"dtype\": \"Q4\", \"shape\": "
				  "[2], \"data_offsets\": [0, 1]}}", 0, 1), -1);
	assert_string_equal(err, "D/model.safetensors: safetensors header: "
			    "w: dtype \"Q4\" is not one safetensors defines");
	/* shorter than the 8-byte length */
	snprintf(path, sizeof(path), "%s/model.safetensors", dir);
	mc_test_write_text(path, "abc");
	{
		struct mc_model_shape m;

		assert_int_equal(mc_modeldir_read(dir, "D", &m, NULL, NULL,
						  err, sizeof(err)), -1);
		assert_string_equal(err, "D/model.safetensors: truncated: 3 "
				    "bytes, no safetensors header length");
	}
	/* an index that points out of the directory */
	assert_int_equal(unlink(path), 0);
	mc_test_put(dir, "model.safetensors.index.json", "{\"weight_map\": "
		    "{\"w\": \"../../etc/shadow.safetensors\"}}");
	{
		struct mc_model_shape m;

		assert_int_equal(mc_modeldir_read(dir, "D", &m, NULL, NULL,
						  err, sizeof(err)), -1);
		assert_string_equal(err, "D/model.safetensors.index.json: "
				    "weight_map: w: ../../etc/shadow."
				    "safetensors is not a shard file name in "
				    "this directory");
	}
	/* no checkpoint at all */
	snprintf(path, sizeof(path), "%s/model.safetensors.index.json", dir);
	assert_int_equal(unlink(path), 0);
	{
		struct mc_model_shape m;

		assert_int_equal(mc_modeldir_read(dir, "D", &m, NULL, NULL,
						  err, sizeof(err)), -1);
		assert_non_null(strstr(err, "D: neither "
				       "model.safetensors.index.json nor "
				       "model.safetensors"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_model_dir_exact, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_model_dir_missing_shard,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_hub_cache, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_malformed, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
