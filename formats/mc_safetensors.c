/*
 * mc_safetensors.c - a checkpoint's parameters from its safetensors
 * headers (see mc_safetensors.h for the format, the bounds and why the
 * files are read as the user).
 */
#include "mc_safetensors.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "mc_jsonfile.h"
#include "mc_parse.h"
#include "mc_util.h"

/* safetensors' Dtype enum (safetensors/src/tensor.rs), with each
 * element's bits. */
static const struct {
	const char *name;
	unsigned bits;
} dtypes[MC_ST_DTYPES] = {
	[MC_ST_BOOL] = { "BOOL", 8 }, [MC_ST_U8] = { "U8", 8 },
	[MC_ST_I8] = { "I8", 8 }, [MC_ST_F8_E5M2] = { "F8_E5M2", 8 },
	[MC_ST_F8_E4M3] = { "F8_E4M3", 8 }, [MC_ST_F8_E8M0] = { "F8_E8M0", 8 },
	[MC_ST_I16] = { "I16", 16 }, [MC_ST_U16] = { "U16", 16 },
	[MC_ST_F16] = { "F16", 16 }, [MC_ST_BF16] = { "BF16", 16 },
	[MC_ST_I32] = { "I32", 32 }, [MC_ST_U32] = { "U32", 32 },
	[MC_ST_F32] = { "F32", 32 }, [MC_ST_F64] = { "F64", 64 },
	[MC_ST_I64] = { "I64", 64 }, [MC_ST_U64] = { "U64", 64 },
	[MC_ST_C64] = { "C64", 64 }, [MC_ST_F4] = { "F4", 4 },
	[MC_ST_F6_E2M3] = { "F6_E2M3", 6 }, [MC_ST_F6_E3M2] = { "F6_E3M2", 6 },
};

const char *mc_st_dtype_name(enum mc_st_dtype d)
{
	return d < MC_ST_DTYPES ? dtypes[d].name : "?";
}

unsigned mc_st_dtype_bits(enum mc_st_dtype d)
{
	return d < MC_ST_DTYPES ? dtypes[d].bits : 0;
}

/* A JSON integer 0 .. 2^63 - 1 (jansson's json_int_t is long long). */
static bool count_value(json_t *v, uint64_t *out)
{
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return false;
	*out = (uint64_t)json_integer_value(v);
	return true;
}

/* One tensor's entry: dtype, shape, data_offsets. */
static int tensor(const char *name, const char *key, json_t *t,
		  uint64_t data_len, struct mc_st_figures *f, char *err,
		  size_t errlen)
{
	json_t *dt = json_object_get(t, "dtype");
	json_t *shape = json_object_get(t, "shape");
	json_t *off = json_object_get(t, "data_offsets");
	uint64_t n = 1, b, e, need;
	char q[MC_ST_NAME_MAX], dq[64];
	int d;

	mc_escape(key, 60, q, sizeof(q));
	if (!json_is_object(t))
		return mc_err(err, errlen, "%s: safetensors header: %s: "
			      "expected an object of dtype, shape and "
			      "data_offsets", name, q);
	for (d = 0; d < MC_ST_DTYPES; d++)
		if (json_is_string(dt) &&
		    !strcmp(json_string_value(dt), dtypes[d].name))
			break;
	if (d == MC_ST_DTYPES)
		return mc_err(err, errlen, "%s: safetensors header: %s: dtype "
			      "\"%s\" is not one safetensors defines", name, q,
			      json_is_string(dt) ? mc_escape(json_string_value(
			      dt), 16, dq, sizeof(dq)) : "(not a string)");
	if (!json_is_array(shape))
		return mc_err(err, errlen, "%s: safetensors header: %s: shape: "
			      "expected a list of sizes", name, q);
	for (size_t i = 0; i < json_array_size(shape); i++) {
		uint64_t dim;

		if (!count_value(json_array_get(shape, i), &dim))
			return mc_err(err, errlen, "%s: safetensors header: "
				      "%s: shape: expected a list of sizes",
				      name, q);
		if (__builtin_mul_overflow(n, dim, &n))
			return mc_err(err, errlen, "%s: safetensors header: "
				      "%s: shape: more than 2^64 elements",
				      name, q);
	}
	if (!json_is_array(off) || json_array_size(off) != 2 ||
	    !count_value(json_array_get(off, 0), &b) ||
	    !count_value(json_array_get(off, 1), &e) || e < b)
		return mc_err(err, errlen, "%s: safetensors header: %s: "
			      "data_offsets: expected [begin, end] byte "
			      "offsets", name, q);
	if (e > data_len)
		return mc_err(err, errlen, "%s: safetensors header: %s: "
			      "data_offsets [%llu, %llu] beyond the file's "
			      "%llu data bytes (truncated?)", name, q,
			      (unsigned long long)b, (unsigned long long)e,
			      (unsigned long long)data_len);
	/* The bytes the shape holds, rounded up for sub-byte dtypes. */
	if (n > UINT64_MAX / 64)
		return mc_err(err, errlen, "%s: safetensors header: %s: shape: "
			      "more than 2^58 elements", name, q);
	need = (n * dtypes[d].bits + 7) / 8;
	if (e - b != need)
		return mc_err(err, errlen, "%s: safetensors header: %s: "
			      "data_offsets: %llu bytes, not the %llu its "
			      "shape and dtype hold", name, q,
			      (unsigned long long)(e - b),
			      (unsigned long long)need);
	f->tensors++;
	f->params = mc_add_sat64(f->params, n);
	f->bytes = mc_add_sat64(f->bytes, need);
	f->dtype_params[d] = mc_add_sat64(f->dtype_params[d], n);
	if (n > f->largest_params) {
		f->largest_params = n;
		snprintf(f->largest, sizeof(f->largest), "%s", q);
	}
	return 0;
}

int mc_safetensors_header(const char *json, size_t len, uint64_t data_len,
			  const char *name, struct mc_st_figures *f,
			  char *err, size_t errlen)
{
	char what[MC_QUOTE_MAX + 32];
	struct mc_st_figures add = *f;
	const char *key;
	json_t *o, *t;
	int rc = 0;

	snprintf(what, sizeof(what), "%s: safetensors header", name);
	/* safetensors refuses a repeated name (serde's map) */
	o = mc_jsonfile_parse(json, len, what, true, err, errlen);
	if (!o)
		return -1;
	if (!json_is_object(o)) {
		json_decref(o);
		return mc_err(err, errlen, "%s: expected a JSON object of "
			      "tensors", what);
	}
	json_object_foreach(o, key, t) {
		if (!strcmp(key, "__metadata__"))
			continue;
		rc = tensor(name, key, t, data_len, &add, err, errlen);
		if (rc)
			break;
	}
	json_decref(o);
	if (!rc)
		*f = add;
	return rc;
}

/* Open file under dirfd as the caller: a regular file, its size in *size.
 * Links are followed (the Hub cache's snapshots are links to blobs). */
static int open_under(int dirfd, const char *file, const char *name,
		      uint64_t *size, char *err, size_t errlen)
{
	struct stat st;
	int fd = openat(dirfd, file, O_RDONLY | O_CLOEXEC | O_NONBLOCK |
			O_NOCTTY);

	if (fd < 0)
		return mc_err(err, errlen, "%s: cannot open: %s", name,
			      strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return mc_err(err, errlen, "%s: not a regular file", name);
	}
	*size = (uint64_t)st.st_size;
	return fd;
}

int mc_safetensors_file(int dirfd, const char *file, const char *name,
			struct mc_st_figures *f, char *err, size_t errlen)
{
	unsigned char le[9];	/* mc_read_fd's NUL after the 8 */
	uint64_t size, n = 0;
	char *buf;
	ssize_t got;
	int fd, rc;

	fd = open_under(dirfd, file, name, &size, err, errlen);
	if (fd < 0)
		return -1;
	/* mc_read_fd: up to len - 1 bytes from here, to the end */
	got = mc_read_fd(fd, (char *)le, sizeof(le));
	if (got != 8) {
		close(fd);
		return mc_err(err, errlen, "%s: truncated: %lld bytes, no "
			      "safetensors header length", name,
			      (long long)(got < 0 ? 0 : got));
	}
	for (int i = 7; i >= 0; i--)
		n = n << 8 | le[i];
	if (n > MC_ST_HEADER_MAX) {
		close(fd);
		return mc_err(err, errlen, "%s: a header of %llu bytes: larger "
			      "than the %u memcore reads (not a safetensors "
			      "file?)", name, (unsigned long long)n,
			      MC_ST_HEADER_MAX);
	}
	/* size from fstat: the file may have grown past 8 bytes since */
	if (size < 8 || n > size - 8) {
		close(fd);
		return mc_err(err, errlen, "%s: a header of %llu bytes: beyond "
			      "the file's end (%llu bytes; truncated?)", name,
			      (unsigned long long)n, (unsigned long long)size);
	}
	buf = malloc(n + 1);
	if (!buf) {
		close(fd);
		return mc_err(err, errlen, "%s: out of memory", name);
	}
	got = mc_read_fd(fd, buf, n + 1);
	close(fd);
	if (got != (ssize_t)n) {
		free(buf);
		return mc_err(err, errlen, "%s: truncated: the header's %llu "
			      "bytes could not be read", name,
			      (unsigned long long)n);
	}
	rc = mc_safetensors_header(buf, n, size - 8 - n, name, f, err, errlen);
	free(buf);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void mc_st_index_free(struct mc_st_index *ix)
{
	for (size_t i = 0; i < ix->n_shards; i++)
		free(ix->shards[i]);
	free(ix->shards);
	memset(ix, 0, sizeof(*ix));
}

/* A plain file name in this directory, ending .safetensors. */
static bool shard_name(const char *s)
{
	size_t n = strlen(s);
	static const char ext[] = ".safetensors";

	return n > sizeof(ext) - 1 && !strchr(s, '/') && s[0] != '.' &&
	       !strcmp(s + n - (sizeof(ext) - 1), ext) && !mc_has_ctrl(s);
}

/* Add s to the shard list unless there: kept sorted. */
static int add_shard(struct mc_st_index *ix, const char *s)
{
	char **at, **grown;

	at = ix->n_shards ? bsearch(&s, ix->shards, ix->n_shards,
				    sizeof(*ix->shards), cmp_str) : NULL;
	if (at)
		return 0;
	if (ix->n_shards == MC_ST_SHARDS_MAX)
		return 1;
	grown = realloc(ix->shards, (ix->n_shards + 1) * sizeof(*grown));
	if (!grown)
		return -1;
	ix->shards = grown;
	if (!(ix->shards[ix->n_shards] = strdup(s)))
		return -1;
	ix->n_shards++;
	qsort(ix->shards, ix->n_shards, sizeof(*ix->shards), cmp_str);
	return 0;
}

int mc_safetensors_index(const char *text, size_t len, const char *name,
			 struct mc_st_index *ix, char *err, size_t errlen)
{
	json_t *o, *map, *meta, *ts, *v;
	const char *key;
	char q[MC_ST_NAME_MAX], q2[MC_ST_NAME_MAX];
	int rc = -1;

	memset(ix, 0, sizeof(*ix));
	o = mc_jsonfile_parse(text, len, name, false, err, errlen);
	if (!o)
		return -1;
	map = json_object_get(o, "weight_map");
	if (!json_is_object(map)) {
		mc_err(err, errlen, "%s: weight_map: %s (expected an object "
		       "of tensor -> shard file)", name, map ? "not an object"
		       : "missing");
		goto out;
	}
	meta = json_object_get(o, "metadata");
	ts = json_is_object(meta) ? json_object_get(meta, "total_size") : NULL;
	if (ts && !json_is_null(ts) && !count_value(ts, &ix->total_size)) {
		mc_err(err, errlen, "%s: metadata.total_size: expected a byte "
		       "count", name);
		goto out;
	}
	json_object_foreach(map, key, v) {
		int r;

		if (!json_is_string(v) || !shard_name(json_string_value(v))) {
			mc_err(err, errlen, "%s: weight_map: %s: %s is not a "
			       "shard file name in this directory", name,
			       mc_escape(key, 40, q, sizeof(q)),
			       json_is_string(v) ? mc_escape(json_string_value(
			       v), 40, q2, sizeof(q2)) : "(not a string)");
			goto out;
		}
		r = add_shard(ix, json_string_value(v));
		if (r) {
			mc_err(err, errlen, r > 0 ? "%s: more than %u shards" :
			       "%s: out of memory", name, MC_ST_SHARDS_MAX);
			goto out;
		}
		ix->tensors++;
	}
	rc = 0;
out:
	json_decref(o);
	if (rc)
		mc_st_index_free(ix);
	return rc;
}

/* A small file under dirfd, whole, NUL-terminated; 1 when absent. */
static int slurp(int dirfd, const char *file, const char *name, size_t max,
		 char **text, size_t *len, char *err, size_t errlen)
{
	uint64_t size;
	ssize_t got;
	int fd;

	*text = NULL;
	if (faccessat(dirfd, file, F_OK, 0) < 0 && errno == ENOENT)
		return 1;
	fd = open_under(dirfd, file, name, &size, err, errlen);
	if (fd < 0)
		return -1;
	if (size > max) {
		close(fd);
		return mc_err(err, errlen, "%s: %llu bytes, larger than the "
			      "%zu memcore reads", name,
			      (unsigned long long)size, max);
	}
	*text = malloc(size + 1);
	if (!*text) {
		close(fd);
		return mc_err(err, errlen, "%s: out of memory", name);
	}
	got = mc_read_fd(fd, *text, size + 1);
	close(fd);
	if (got < 0) {
		free(*text);
		*text = NULL;
		return mc_err(err, errlen, "%s: cannot read: %s", name,
			      strerror(errno));
	}
	*len = (size_t)got;
	return 0;
}

/*
 * The Hub cache's repository directory (models--ORG--NAME, what
 * huggingface_hub's snapshot_download keeps): refs/main holds the commit
 * whose snapshots/<commit> is the model directory. Returns the snapshot's
 * descriptor (dirfd closed), dirfd itself when it is not such a directory,
 * or -1.
 */
static int hub_snapshot(int dirfd, const char *what, char *err,
			size_t errlen)
{
	char *ref = NULL, sub[128], name[MC_QUOTE_MAX + 32];
	size_t len = 0;
	int fd, r;

	snprintf(name, sizeof(name), "%s/refs/main", what);
	if (faccessat(dirfd, "snapshots", F_OK, 0) < 0 ||
	    faccessat(dirfd, "config.json", F_OK, 0) == 0)
		return dirfd;
	r = slurp(dirfd, "refs/main", name, 256, &ref, &len, err, errlen);
	if (r) {
		close(dirfd);
		if (r > 0)
			mc_err(err, errlen, "%s: a Hub cache without "
			       "refs/main: give its snapshots/<commit> "
			       "directory", what);
		return -1;
	}
	ref[strcspn(ref, "\r\n")] = '\0';
	if (!*ref || strlen(ref) > 64 || ref[strspn(ref, "0123456789abcdef")]) {
		free(ref);
		close(dirfd);
		return mc_err(err, errlen, "%s: not a commit id", name);
	}
	snprintf(sub, sizeof(sub), "snapshots/%s", ref);
	free(ref);
	fd = openat(dirfd, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	close(dirfd);
	if (fd < 0)
		return mc_err(err, errlen, "%s/%s: cannot open: %s", what, sub,
			      strerror(errno));
	return fd;
}

/* config.json, when there: the shape (any model_type) and torch_dtype. */
static int dir_config(int dirfd, const char *what, struct mc_model_shape *m,
		      char *err, size_t errlen)
{
	char *text, name[MC_QUOTE_MAX + 32];
	size_t len = 0;
	int r;

	snprintf(name, sizeof(name), "%s/config.json", what);
	r = slurp(dirfd, "config.json", name, MC_JSONFILE_MAX, &text, &len,
		  err, errlen);
	if (r)
		return r < 0 ? -1 : 0;
	r = mc_hfconfig_parse(text, len, name, MC_HF_ANY_TYPE, m, err, errlen);
	free(text);
	return r;
}

/* The index and its shards' headers; *src says which counted. */
static int dir_index(int dirfd, const char *what, char *text, size_t len,
		     struct mc_model_shape *m, struct mc_st_figures *f,
		     enum mc_modeldir_source *src, char *err, size_t errlen)
{
	char name[MC_QUOTE_MAX + 64];
	struct mc_st_index ix;
	size_t have = 0;
	int rc = -1;

	snprintf(name, sizeof(name), "%s/model.safetensors.index.json", what);
	if (mc_safetensors_index(text, len, name, &ix, err, errlen))
		return -1;
	for (size_t i = 0; i < ix.n_shards; i++)
		have += faccessat(dirfd, ix.shards[i], F_OK, 0) == 0;
	if (!have && ix.n_shards) {
		/* The index alone (a download of the *.json files): its
		 * bytes over the dtype config.json stores the weights in. */
		if (!m->dtype_bytes || !ix.total_size) {
			mc_err(err, errlen, "%s: none of its %zu shards here, "
			       "and %s: cannot count (give the shards, or "
			       "--model-params)", name, ix.n_shards,
			       ix.total_size ? "config.json gives no "
			       "torch_dtype" : "no metadata.total_size");
			goto out;
		}
		m->params = ix.total_size / m->dtype_bytes;
		*src = MC_MODELDIR_INDEX;
		rc = 0;
		goto out;
	}
	for (size_t i = 0; i < ix.n_shards; i++) {
		char sname[MC_QUOTE_MAX + 64];

		snprintf(sname, sizeof(sname), "%s/%s", what, ix.shards[i]);
		if (mc_safetensors_file(dirfd, ix.shards[i], sname, f, err,
					errlen))
			goto out;
	}
	/* The same tensors as the index lists: a shard of another
	 * checkpoint, or one missing a tensor, is not this model. */
	if (f->tensors != ix.tensors) {
		mc_err(err, errlen, "%s: lists %llu tensors, its %zu shards "
		       "hold %llu (a shard of another download?)", name,
		       (unsigned long long)ix.tensors, ix.n_shards,
		       (unsigned long long)f->tensors);
		goto out;
	}
	*src = MC_MODELDIR_HEADERS;
	rc = 0;
out:
	mc_st_index_free(&ix);
	return rc;
}

int mc_modeldir_read(const char *path, const char *what,
		     struct mc_model_shape *m, struct mc_st_figures *f,
		     enum mc_modeldir_source *src, char *err, size_t errlen)
{
	struct mc_st_figures mine;
	enum mc_modeldir_source how = MC_MODELDIR_HEADERS;
	char *text = NULL, name[MC_QUOTE_MAX + 64];
	size_t len = 0;
	int dirfd, r, rc = -1, top = 0;

	if (!f)
		f = &mine;
	memset(f, 0, sizeof(*f));
	memset(m, 0, sizeof(*m));
	dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return mc_err(err, errlen, "%s: cannot open: %s", what,
			      strerror(errno));
	dirfd = hub_snapshot(dirfd, what, err, errlen);
	if (dirfd < 0)
		return -1;
	if (dir_config(dirfd, what, m, err, errlen))
		goto out;
	snprintf(name, sizeof(name), "%s/model.safetensors.index.json", what);
	r = slurp(dirfd, "model.safetensors.index.json", name,
		  MC_ST_INDEX_MAX, &text, &len, err, errlen);
	if (r < 0)
		goto out;
	if (r == 0) {
		if (dir_index(dirfd, what, text, len, m, f, &how, err, errlen))
			goto out;
	} else if (faccessat(dirfd, "model.safetensors", F_OK, 0) == 0) {
		snprintf(name, sizeof(name), "%s/model.safetensors", what);
		if (mc_safetensors_file(dirfd, "model.safetensors", name, f,
					err, errlen))
			goto out;
	} else {
		mc_err(err, errlen, "%s: neither model.safetensors.index.json "
		       "nor model.safetensors (memcore reads the safetensors "
		       "format only: give --model-params)", what);
		goto out;
	}
	if (how == MC_MODELDIR_HEADERS) {
		m->params = f->params;
		m->largest_layer_params = f->largest_params;
		/* the dtype most parameters are stored in */
		for (int d = 1; d < MC_ST_DTYPES; d++)
			if (f->dtype_params[d] > f->dtype_params[top])
				top = d;
		if (dtypes[top].bits == 16 || dtypes[top].bits == 32)
			m->dtype_bytes = dtypes[top].bits / 8;
	}
	if (!m->params || m->params > 1000000000000000ULL) {
		mc_err(err, errlen, "%s: %llu parameters: %s", what,
		       (unsigned long long)m->params, m->params ? "beyond any "
		       "model memcore sizes (at most 1e15)" : "no tensors");
		goto out;
	}
	if (m->largest_layer_params > m->params)
		m->largest_layer_params = m->params;
	if (!m->model_type[0])
		snprintf(m->model_type, sizeof(m->model_type), "safetensors");
	m->from_checkpoint = true;
	if (src)
		*src = how;
	rc = 0;
out:
	free(text);
	close(dirfd);
	if (rc)
		memset(m, 0, sizeof(*m));
	return rc;
}
