/*
 * mc_config.c - memcore.conf and plugstack arguments (see mc_config.h).
 *
 * No allocation: the file is read through a fixed line buffer, and the
 * parse writes straight into the caller's config (reset to defaults on any
 * error), because a second struct mc_config (hundreds of KiB, PATH_MAX per
 * partition) is too big for a stack in slurmstepd.
 */
#include "mc_config.h"
#include "mc_parse.h"
#include "mc_util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const mc_mode_words[] = { "enforce", "warn", "off", NULL };
const char *const mc_bind_words[] = { "numa", "none", NULL };
const char *const mc_on_error_words[] = { "refuse", "allow", NULL };
const char *const mc_unified_words[] = { "auto", "yes", "no", NULL };
const char *const mc_netds_words[] = { "note", "ignore", "refuse", NULL };

/* A policy file larger than this is not a policy file. */
#define MC_CONF_SIZE_MAX (1 << 20)

#define F(field) offsetof(struct mc_policy, field), \
	sizeof(((struct mc_policy *)0)->field)
#define P1 ((double)MC_SIZE_MAX_BYTES)

static const char *const auto_word[] = { "auto", NULL };
/* PrometheusTextfile: slurmstepd writes it as root (spank/mc_textfile.c),
 * so only where memcore.conf(5) promises: an absolute path ending in .prom
 * (node_exporter's textfile collector reads only *.prom), never /etc/passwd
 * nor a path relative to slurmstepd's working directory. */
static const char *const prom_suffix[] = { ".prom", NULL };

/*
 * Every memcore.conf key, one line each, in set_mask bit order (a new key
 * goes at the end: the bit of every other key stays).
 *   name                    type           field                  min max excl words           partition
 */
const struct mc_key mc_keys[] = {
	{ "Mode",                 MC_KEY_WORD,  F(mode),                  0, 0, false, mc_mode_words,   true },
	{ "DataloaderWorkers",    MC_KEY_COUNT, F(dataloader_workers),    0, MC_WORKERS_LIMIT, false, NULL, true },
	{ "MaxDataloaderWorkers", MC_KEY_COUNT, F(max_dataloader_workers),0, MC_WORKERS_LIMIT, false, NULL, true },
	{ "ReservedCores",        MC_KEY_COUNT, F(reserved_cores),        0, MC_MAX_CORES, false, NULL,     true },
	{ "MinCoresPerGpu",       MC_KEY_COUNT, F(min_cores_per_gpu),     0, MC_MAX_CORES, false, NULL,     true },
	{ "HostRamPerGpuRam",     MC_KEY_RATIO, F(host_ram_per_gpu_ram),  0, 16, true,  NULL,               true },
	{ "RamPerWorker",         MC_KEY_SIZE,  F(ram_per_worker_bytes),  0, P1, false, NULL,               true },
	{ "RamPerTask",           MC_KEY_SIZE,  F(ram_per_task_bytes),    0, P1, false, NULL,               true },
	{ "GpuMemory",            MC_KEY_SIZE,  F(gpu_memory_bytes),      0, P1, false, auto_word,          true },
	/* DeepSpeed's additional_buffer_factor: a margin, never < 1. */
	{ "OffloadBufferFactor",  MC_KEY_RATIO, F(offload_buffer_factor), 1, 16, false, NULL,               true },
	{ "ZeroInit",             MC_KEY_BOOL,  F(zero_init),             0, 0, false, NULL,                true },
	{ "Bind",                 MC_KEY_WORD,  F(bind),                  0, 0, false, mc_bind_words,       true },
	{ "TopologyFile",         MC_KEY_PATH,  F(topology_file),         0, 0, false, NULL,                true },
	{ "CgroupMemory",         MC_KEY_BOOL,  F(cgroup_memory),         0, 0, false, NULL,                true },
	{ "AllowUserWarn",        MC_KEY_BOOL,  F(allow_user_warn),       0, 0, false, NULL,                true },
	{ "OnError",              MC_KEY_WORD,  F(on_error),              0, 0, false, mc_on_error_words,   true },
	{ "NodeRam",              MC_KEY_SIZE,  F(node_ram_bytes),        0, P1, false, NULL,               true },
	{ "NodeCores",            MC_KEY_COUNT, F(node_cores),            0, MC_MAX_CORES, false, NULL,     true },
	{ "NodeGpus",             MC_KEY_COUNT, F(node_gpus),             0, MC_MAX_GPUS, false, NULL,      true },
	{ "GpuTypeMemory",        MC_KEY_GPU_TYPES, F(gpu_type_memory),   0, P1, false, NULL,               true },
	{ "UnifiedMemory",        MC_KEY_WORD,  F(unified_memory),        0, 0, false, mc_unified_words,    true },
	/* A job's --ram-per-worker lies within these (mc_terms.h). */
	{ "MinRamPerWorker",      MC_KEY_SIZE,  F(min_ram_per_worker_bytes), 0, P1, false, NULL,            true },
	{ "MaxRamPerWorker",      MC_KEY_SIZE,  F(max_ram_per_worker_bytes), 0, P1, false, NULL,            true },
	{ "OffloadCoresPerGpu",   MC_KEY_COUNT, F(offload_cores_per_gpu), 0, 1024, false, NULL,             true },
	{ "ShardsPerGpu",         MC_KEY_COUNT, F(shards_per_gpu),        0, 1u << 20, false, NULL,         true },
	{ "SampleInterval",       MC_KEY_DURATION, F(sample_interval_ms), MC_SAMPLE_INTERVAL_MIN_MS, 3600000, false, NULL, true },
	{ "Report",               MC_KEY_BOOL,  F(report),                0, 0, false, NULL,                true },
	{ "PrometheusTextfile",   MC_KEY_PATH,  F(prometheus_textfile),   0, 0, false, prom_suffix,         false },
	{ "NetworkDataset",       MC_KEY_WORD,  F(network_dataset),       0, 0, false, mc_netds_words,      true },
	{ "LocalScratch",         MC_KEY_PATH,  F(local_scratch),         0, 0, false, NULL,                true },
	/* DataLoader workers that share one core (mc_rules.h): at least 1,
	 * the Open Book's one each. */
	{ "WorkersPerCore",       MC_KEY_COUNT, F(workers_per_core),      1, MC_WORKERS_LIMIT, false, NULL, true },
};

#undef F
#undef P1

const size_t mc_n_keys = sizeof(mc_keys) / sizeof(mc_keys[0]);
#define K_COUNT (sizeof(mc_keys) / sizeof(mc_keys[0]))

_Static_assert(K_COUNT <= 64, "set_mask has 64 bits");
/* WORD and BOOL keys are stored through an int. */
_Static_assert(sizeof(enum mc_mode) == sizeof(int) &&
	       sizeof(enum mc_bind) == sizeof(int) &&
	       sizeof(enum mc_on_error) == sizeof(int) &&
	       sizeof(enum mc_unified) == sizeof(int) &&
	       sizeof(enum mc_netds) == sizeof(int), "enums are ints");

void mc_policy_defaults(struct mc_policy *p)
{
	memset(p, 0, sizeof(*p));
	p->mode = MC_MODE_ENFORCE;
	p->dataloader_workers = 2;		/* Open Book: NLP */
	p->max_dataloader_workers = 64;
	p->reserved_cores = 4;
	p->min_cores_per_gpu = 0;
	p->host_ram_per_gpu_ram = 1.0;
	p->ram_per_worker_bytes = (uint64_t)4 << 30;
	p->ram_per_task_bytes = (uint64_t)1 << 30;
	p->gpu_memory_bytes = 0;		/* auto */
	p->offload_buffer_factor = 1.5;		/* DeepSpeed's default */
	p->zero_init = 1;
	p->bind = MC_BIND_NUMA;
	p->topology_file[0] = '\0';
	p->cgroup_memory = 1;
	p->allow_user_warn = 0;		/* a site opts in */
	p->on_error = MC_ON_ERROR_REFUSE;
	p->node_ram_bytes = 0;
	p->node_cores = 0;
	p->node_gpus = 0;
	p->min_ram_per_worker_bytes = (uint64_t)512 << 20;
	p->max_ram_per_worker_bytes = (uint64_t)128 << 30;
	p->offload_cores_per_gpu = 2;	/* memcore.conf(5): CPU Adam */
	p->shards_per_gpu = 0;		/* unknown */
	p->unified_memory = MC_UNIFIED_AUTO;
	p->sample_interval_ms = MC_SAMPLE_INTERVAL_DEFAULT_MS;
	p->report = 0;
	p->prometheus_textfile[0] = '\0';
	p->network_dataset = MC_NETDS_NOTE;	/* refuse is a site's choice */
	p->local_scratch[0] = '\0';
	p->workers_per_core = 1;	/* Open Book: a core per worker */
}

void mc_config_init(struct mc_config *cfg)
{
	cfg->path[0] = '\0';
	cfg->key_off[0] = '\0';
	mc_policy_defaults(&cfg->global);
	cfg->n_partitions = 0;
	/* The partition slots are only read below n_partitions. */
}

const struct mc_key *mc_key_find(const char *name)
{
	for (size_t k = 0; k < K_COUNT; k++)
		if (!strcasecmp(name, mc_keys[k].name))
			return &mc_keys[k];
	return NULL;
}

static int key_lookup(const char *name)
{
	const struct mc_key *k = mc_key_find(name);

	return k ? (int)(k - mc_keys) : -1;
}

/*
 * GpuTypeMemory=TYPE:SIZE[,TYPE:SIZE...] (sizes as GpuMemory=, MiB without
 * a suffix). A type named twice is an error.
 */
static int set_gpu_type_memory(struct mc_gpu_types *out, const char *v,
			       char *why, size_t whylen)
{
	struct mc_gpu_type_memory t[MC_GPU_TYPES_MAX];
	uint32_t n = 0;
	const char *s = v;

	while (*s) {
		const char *end = strchr(s, ','), *colon;
		size_t len = end ? (size_t)(end - s) : strlen(s);
		char item[MC_GPU_TYPE_NAME_MAX + 64];

		if (n == MC_GPU_TYPES_MAX)
			return mc_err(why, whylen, "at most %d GPU types",
				      MC_GPU_TYPES_MAX);
		if (len >= sizeof(item))
			return mc_err(why, whylen, "entry too long");
		memcpy(item, s, len);
		item[len] = '\0';
		colon = strchr(item, ':');
		if (!colon || colon == item ||
		    (size_t)(colon - item) >= MC_GPU_TYPE_NAME_MAX)
			return mc_err(why, whylen, "'%s': expected TYPE:SIZE "
				      "(e.g. h100:80G)", item);
		memcpy(t[n].type, item, (size_t)(colon - item));
		t[n].type[colon - item] = '\0';
		if (mc_parse_size(colon + 1, (uint64_t)1 << 20, &t[n].bytes,
				  why, whylen))
			return -1;
		if (!t[n].bytes || t[n].bytes > MC_SIZE_MAX_BYTES)
			return mc_err(why, whylen, "'%s': size out of range",
				      item);
		for (uint32_t i = 0; i < n; i++)
			if (!strcasecmp(t[i].type, t[n].type))
				return mc_err(why, whylen, "GPU type '%s' "
					      "given twice", t[n].type);
		n++;
		s += len;
		if (*s == ',' && !*++s)
			return mc_err(why, whylen, "empty entry after ','");
	}
	if (!n)
		return mc_err(why, whylen, "expected TYPE:SIZE[,TYPE:SIZE...]");
	memcpy(out->t, t, sizeof(t[0]) * n);
	out->n = n;
	return 0;
}

uint64_t mc_policy_gpu_type_memory(const struct mc_policy *p,
				   const char *type)
{
	if (!type || !*type)
		return 0;
	for (uint32_t i = 0; i < p->gpu_type_memory.n; i++)
		if (!strcasecmp(p->gpu_type_memory.t[i].type, type))
			return p->gpu_type_memory.t[i].bytes;
	return 0;
}

const char *mc_key_describe(const struct mc_key *k, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	switch (k->type) {
	case MC_KEY_WORD:
		for (size_t i = 0; k->words[i]; i++)
			mc_appendf(buf, len, &n, "%s%s", i ? " | " : "",
				   k->words[i]);
		break;
	case MC_KEY_BOOL:
		mc_appendf(buf, len, &n, "yes | no");
		break;
	case MC_KEY_COUNT:
		mc_appendf(buf, len, &n, "N (%.0f to %.0f)", k->min, k->max);
		break;
	case MC_KEY_SIZE:
		mc_appendf(buf, len, &n, "%s%sSIZE (at most 1024T)",
			   k->words ? k->words[0] : "",
			   k->words ? " | " : "");
		break;
	case MC_KEY_RATIO:
		mc_appendf(buf, len, &n, "RATIO (%s%g to %g)",
			   k->min_exclusive ? "above " : "", k->min, k->max);
		break;
	case MC_KEY_PATH:
		mc_appendf(buf, len, &n, "PATH");
		if (k->words)
			mc_appendf(buf, len, &n, " (absolute, ending in %s)",
				   k->words[0]);
		break;
	case MC_KEY_GPU_TYPES:
		mc_appendf(buf, len, &n, "TYPE:SIZE[,TYPE:SIZE...]");
		break;
	case MC_KEY_DURATION:
		mc_appendf(buf, len, &n, "DURATION (0 = off, or %.0fms to "
			   "%.0fs)", k->min, k->max / 1000);
		break;
	}
	return buf;
}

/* A PATH key with a required ending: absolute, ending in suffix (after a
 * name: "/x/.prom" is no file name), and no ".." component. */
static int check_path(const char *v, const char *suffix, char *why,
		      size_t whylen)
{
	size_t n = strlen(v), sl = strlen(suffix);
	const char *c;

	if (v[0] != '/')
		return mc_err(why, whylen, "expected an absolute path");
	if (n <= sl || strcmp(v + n - sl, suffix) || v[n - sl - 1] == '/')
		return mc_err(why, whylen, "expected a file name ending in "
			      "%s", suffix);
	for (c = v; (c = strstr(c, "..")); c += 2)
		if (c[-1] == '/' && (c[2] == '/' || !c[2]))
			return mc_err(why, whylen, "a \"..\" component: "
				      "expected a path without one");
	return 0;
}

/* A DURATION key: "0" (off), "N" or "Ns" seconds, "Nms" milliseconds. */
static int set_duration_ms(uint32_t *field, const struct mc_key *key,
			   const char *v, char *why, size_t whylen)
{
	unsigned long long n;
	char *end;

	if (*v < '0' || *v > '9')
		return mc_err(why, whylen, "expected a duration such as 1s "
			      "or 500ms, or 0 for off");
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || n > (unsigned long long)key->max)
		return mc_err(why, whylen, "too large (at most %.0fs)",
			      key->max / 1000);
	if (!*end || !strcmp(end, "s"))
		n *= 1000;
	else if (strcmp(end, "ms"))
		return mc_err(why, whylen, "unknown unit '%s' (s or ms)", end);
	if (n > (unsigned long long)key->max)
		return mc_err(why, whylen, "too large (at most %.0fs)",
			      key->max / 1000);
	if (n && n < (unsigned long long)key->min)
		return mc_err(why, whylen, "below %.0fms: the sampler would "
			      "cost the step more than it tells", key->min);
	*field = (uint32_t)n;
	return 0;
}

/* Parse value for key k into p; on error, a bare reason in why. */
static int set_key(struct mc_policy *p, int k, const char *v,
		   char *why, size_t whylen)
{
	const struct mc_key *key = &mc_keys[k];
	char *field = (char *)p + key->offset;
	uint64_t sz;
	uint32_t n;
	double d;
	int w;

	switch (key->type) {
	case MC_KEY_WORD:
		if (mc_parse_word(v, key->words, &w, why, whylen))
			return -1;
		memcpy(field, &w, sizeof(w));
		return 0;
	case MC_KEY_BOOL:
		if (mc_parse_bool(v, &w, why, whylen))
			return -1;
		memcpy(field, &w, sizeof(w));
		return 0;
	case MC_KEY_COUNT:
		/* A count whose 0 means nothing (WorkersPerCore) has min 1. */
		if ((key->min >= 1 ? mc_parse_count_min1 : mc_parse_count)(
			    v, (uint32_t)key->max, &n, why, whylen))
			return -1;
		memcpy(field, &n, sizeof(n));
		return 0;
	case MC_KEY_SIZE:
		if (key->words && !strcasecmp(v, key->words[0])) {
			sz = 0;
		} else {
			/* No suffix means MiB, as slurm.conf's RealMemory
			 * and --mem. */
			if (mc_parse_size(v, (uint64_t)1 << 20, &sz, why,
					  whylen))
				return -1;
			if (sz > (uint64_t)key->max)
				return mc_err(why, whylen,
					      "too large (at most 1024T)");
		}
		memcpy(field, &sz, sizeof(sz));
		return 0;
	case MC_KEY_RATIO:
		if (mc_parse_ratio(v, key->min, key->max, &d, why, whylen))
			return -1;
		if (key->min_exclusive && d <= key->min)
			return mc_err(why, whylen, "must be above %g",
				      key->min);
		memcpy(field, &d, sizeof(d));
		return 0;
	case MC_KEY_PATH:
		if (strlen(v) >= key->size)
			return mc_err(why, whylen, "path too long");
		if (key->words && check_path(v, key->words[0], why, whylen))
			return -1;
		memcpy(field, v, strlen(v) + 1);
		return 0;
	case MC_KEY_GPU_TYPES:
		return set_gpu_type_memory((struct mc_gpu_types *)field, v,
					   why, whylen);
	case MC_KEY_DURATION:
		return set_duration_ms((uint32_t *)field, key, v, why, whylen);
	}
	return mc_err(why, whylen, "unknown key");
}

/* Copy the field of key k from src to dst (partition overrides). */
static void copy_key(struct mc_policy *dst, const struct mc_policy *src,
		     int k)
{
	memcpy((char *)dst + mc_keys[k].offset,
	       (const char *)src + mc_keys[k].offset, mc_keys[k].size);
}

/* What the line-by-line parser remembers between lines. */
struct conf_state {
	struct mc_config *cfg;
	const char *name;
	unsigned lineno;
	unsigned global_line[K_COUNT];		/* where each key was set */
	unsigned global_dlw_line, global_max_line;
	unsigned part_line[MC_MAX_PARTITIONS];
	char *err;
	size_t errlen;
};

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Split the next blank-separated token off *sp (NUL-terminating it). */
static char *next_token(char **sp)
{
	char *s = *sp, *tok;

	while (is_blank(*s))
		s++;
	if (!*s) {
		*sp = s;
		return NULL;
	}
	tok = s;
	while (*s && !is_blank(*s))
		s++;
	if (*s)
		*s++ = '\0';
	*sp = s;
	return tok;
}

/* A key as an error quotes it: escaped and cut (mc_escape), never its
 * value, which could be anything of a file that is no memcore.conf. */
#define MC_KEY_QUOTE_MAX 80

static const char *quote_key(const char *key, char *buf, size_t len)
{
	return mc_escape(key, 64, buf, len);
}

/*
 * Split a token into key and value. Reports "expected Key=Value" and
 * "KEY: missing value" itself.
 */
static int split_token(struct conf_state *st, char *tok, char **key,
		       char **val)
{
	char *eq = strchr(tok, '=');

	/* Nothing of such a word is quoted: memcore may be pointed at a
	 * file that is no memcore.conf (--config as root), and its lines
	 * are not memcore's to print. */
	if (!eq || eq == tok) {
		mc_err(st->err, st->errlen, "%s:%u: expected Key=Value (%s)",
			st->name, st->lineno, eq ? "no key before '='"
			: "a word without '='");
		return -1;
	}
	*eq = '\0';
	*key = tok;
	*val = eq + 1;
	if (!**val) {
		char q[MC_KEY_QUOTE_MAX];

		mc_err(st->err, st->errlen, "%s:%u: %s: missing value",
			st->name, st->lineno, quote_key(tok, q, sizeof(q)));
		return -1;
	}
	return 0;
}

static int parse_partition_line(struct conf_state *st, const char *pname,
				char *rest)
{
	struct mc_config *cfg = st->cfg;
	struct mc_partition *part;
	unsigned seen[K_COUNT] = { 0 };
	char why[MC_ERR_MAX], q[MC_KEY_QUOTE_MAX];
	char *tok, *key, *val;

	if (strlen(pname) >= MC_PARTITION_NAME_MAX) {
		mc_err(st->err, st->errlen,
			"%s:%u: PartitionName=%s: name longer than %d bytes",
			st->name, st->lineno, pname, MC_PARTITION_NAME_MAX - 1);
		return -1;
	}
	/* Partition names are case-sensitive in Slurm: compare exactly. */
	for (size_t i = 0; i < cfg->n_partitions; i++) {
		if (!strcmp(cfg->partitions[i].name, pname)) {
			mc_err(st->err, st->errlen,
				"%s:%u: PartitionName=%s: duplicate partition (first on line %u)",
				st->name, st->lineno, pname, st->part_line[i]);
			return -1;
		}
	}
	if (cfg->n_partitions >= MC_MAX_PARTITIONS) {
		mc_err(st->err, st->errlen,
			"%s:%u: PartitionName=%s: more than %d partitions",
			st->name, st->lineno, pname, MC_MAX_PARTITIONS);
		return -1;
	}
	part = &cfg->partitions[cfg->n_partitions];
	memset(part->name, 0, sizeof(part->name));
	memcpy(part->name, pname, strlen(pname));
	part->set_mask = 0;
	mc_policy_defaults(&part->values);

	while ((tok = next_token(&rest))) {
		int k;

		if (split_token(st, tok, &key, &val))
			return -1;
		if (!strcasecmp(key, "PartitionName")) {
			mc_err(st->err, st->errlen,
				"%s:%u: %s: duplicate key on this line",
				st->name, st->lineno,
				quote_key(key, q, sizeof(q)));
			return -1;
		}
		k = key_lookup(key);
		if (k < 0) {
			mc_err(st->err, st->errlen,
				"%s:%u: %s: unknown key", st->name,
				st->lineno,
				quote_key(key, q, sizeof(q)));
			return -1;
		}
		if (seen[k]) {
			mc_err(st->err, st->errlen,
				"%s:%u: %s: duplicate key on this line",
				st->name, st->lineno,
				quote_key(key, q, sizeof(q)));
			return -1;
		}
		if (!mc_keys[k].per_partition) {
			mc_err(st->err, st->errlen,
				"%s:%u: %s: a global key, not for a "
				"PartitionName= line", st->name, st->lineno,
				quote_key(key, q, sizeof(q)));
			return -1;
		}
		seen[k] = 1;
		if (set_key(&part->values, k, val, why, sizeof(why))) {
			mc_err(st->err, st->errlen, "%s:%u: %s: %s",
				st->name, st->lineno, quote_key(key, q, sizeof(q)),
				why);
			return -1;
		}
		part->set_mask |= (uint64_t)1 << k;
	}
	st->part_line[cfg->n_partitions] = st->lineno;
	cfg->n_partitions++;
	return 0;
}

/* One line, already free of NUL bytes and of its newline. */
static int parse_line(struct conf_state *st, char *line)
{
	char why[MC_ERR_MAX], q[MC_KEY_QUOTE_MAX];
	char *hash = strchr(line, '#');
	char *rest = line, *tok, *key, *val;
	bool first = true;

	if (hash)
		*hash = '\0';
	while ((tok = next_token(&rest))) {
		int k;

		if (split_token(st, tok, &key, &val))
			return -1;
		if (!strcasecmp(key, "PartitionName")) {
			if (!first) {
				mc_err(st->err, st->errlen,
					"%s:%u: PartitionName= must start its line",
					st->name, st->lineno);
				return -1;
			}
			return parse_partition_line(st, val, rest);
		}
		first = false;
		k = key_lookup(key);
		if (k < 0) {
			mc_err(st->err, st->errlen,
				"%s:%u: %s: unknown key", st->name,
				st->lineno,
				quote_key(key, q, sizeof(q)));
			return -1;
		}
		if (st->global_line[k]) {
			mc_err(st->err, st->errlen,
				"%s:%u: %s: duplicate key (first set on line %u)",
				st->name, st->lineno, quote_key(key, q, sizeof(q)),
				st->global_line[k]);
			return -1;
		}
		if (set_key(&st->cfg->global, k, val, why, sizeof(why))) {
			mc_err(st->err, st->errlen, "%s:%u: %s: %s",
				st->name, st->lineno, quote_key(key, q, sizeof(q)),
				why);
			return -1;
		}
		st->global_line[k] = st->lineno;
	}
	return 0;
}

/*
 * Keys whose value may not be above another's: a default above its own
 * maximum makes every default job break its policy, and a RAM floor per
 * worker above the ceiling leaves no --ram-per-worker a job may ask.
 */
static const struct { const char *lo, *hi; } mc_key_order[] = {
	{ "DataloaderWorkers", "MaxDataloaderWorkers" },
	{ "MinRamPerWorker", "MaxRamPerWorker" },
};
#define MC_KEY_ORDER_N (sizeof(mc_key_order) / sizeof(mc_key_order[0]))

/* A count or size key's value (the only types mc_key_order names). */
static uint64_t key_value(const struct mc_policy *p, int k)
{
	const char *f = (const char *)p + mc_keys[k].offset;
	uint32_t n;
	uint64_t v;

	if (mc_keys[k].type == MC_KEY_COUNT) {
		memcpy(&n, f, sizeof(n));
		return n;
	}
	memcpy(&v, f, sizeof(v));
	return v;
}

/* "DataloaderWorkers=8 is above MaxDataloaderWorkers=4" for pair r of p. */
static const char *order_text(const struct mc_policy *p, size_t r, char *buf,
			      size_t len)
{
	int k[2] = { key_lookup(mc_key_order[r].lo),
		     key_lookup(mc_key_order[r].hi) };
	char v[2][32];

	for (int i = 0; i < 2; i++) {
		if (mc_keys[k[i]].type == MC_KEY_COUNT)
			snprintf(v[i], sizeof(v[i]), "%llu", (unsigned long long)
				 key_value(p, k[i]));
		else
			mc_fmt_mem_option(key_value(p, k[i]), v[i],
					  sizeof(v[i]));
	}
	snprintf(buf, len, "%s=%s is above %s=%s", mc_keys[k[0]].name, v[0],
		 mc_keys[k[1]].name, v[1]);
	return buf;
}

static bool order_broken(const struct mc_policy *p, size_t r)
{
	return key_value(p, key_lookup(mc_key_order[r].lo)) >
	       key_value(p, key_lookup(mc_key_order[r].hi));
}

/*
 * Where a pair of mc_key_order is broken, its index in *r: -1 in the
 * globals, i for partition i, or -2 nowhere.
 */
static long order_conflict(const struct mc_config *cfg, size_t *r)
{
	struct mc_policy eff;

	for (*r = 0; *r < MC_KEY_ORDER_N; (*r)++)
		if (order_broken(&cfg->global, *r))
			return -1;
	for (size_t i = 0; i < cfg->n_partitions; i++) {
		mc_config_policy(cfg, cfg->partitions[i].name, &eff);
		for (*r = 0; *r < MC_KEY_ORDER_N; (*r)++)
			if (order_broken(&eff, *r))
				return (long)i;
	}
	return -2;
}

/* The cross-key check once every line of a file is in. */
static int check_key_order(struct conf_state *st)
{
	struct mc_config *cfg = st->cfg;
	size_t r;
	long c = order_conflict(cfg, &r);
	struct mc_policy eff;
	char why[128];

	if (c == -1) {
		const int kl = key_lookup(mc_key_order[r].lo);
		const int kh = key_lookup(mc_key_order[r].hi);
		/* The first key's line when the file set it, else the
		 * second's (a default broken by the other key alone). */
		unsigned ln = st->global_line[kl] ? st->global_line[kl]
			: st->global_line[kh];
		int k = st->global_line[kl] ? kl : kh;

		mc_err(st->err, st->errlen, "%s:%u: %s: %s", st->name, ln,
		       mc_keys[k].name, order_text(&cfg->global, r, why,
						   sizeof(why)));
		return -1;
	}
	if (c >= 0) {
		const struct mc_partition *pt = &cfg->partitions[c];

		mc_config_policy(cfg, pt->name, &eff);
		mc_err(st->err, st->errlen, "%s:%u: PartitionName=%s: %s",
		       st->name, st->part_line[c], pt->name,
		       order_text(&eff, r, why, sizeof(why)));
		return -1;
	}
	return 0;
}

/*
 * PrometheusTextfile= names a file slurmstepd writes and reads back as
 * root: its directory must be one only root can write (mc_dir_root_only:
 * the rule and why). Checked where the policy is loaded from a file or an
 * argument, not in mc_config_parse (text only, no file system). A
 * directory not there yet passes: nothing can be planted in it.
 */
static int check_textfile_dir(const struct mc_policy *p, char *why,
			      size_t whylen)
{
	if (!p->prometheus_textfile[0])
		return 0;
	return mc_dir_root_only(p->prometheus_textfile, why, whylen) < 0
		? -1 : 0;
}

/*
 * Turn off a key whose value failed its file system check: value (the
 * field in a policy) emptied, and cfg->key_off says "ORIGIN: KEY=VALUE:
 * why; what_off" unless it holds an earlier one (the first is the one to
 * fix). Never a refused policy (mc_config.h, key_off).
 */
static void turn_off(struct mc_config *cfg, char *value, const char *origin,
		     const char *key, const char *why, const char *what_off)
{
	char q[PATH_MAX + 16];

	if (!cfg->key_off[0])
		mc_err(cfg->key_off, sizeof(cfg->key_off), "%s: %s=%s: %s; %s",
		       origin, key, mc_escape(value, 0, q, sizeof(q)), why,
		       what_off);
	value[0] = '\0';
}

/* PrometheusTextfile= in p checked (check_textfile_dir), off when not
 * safe: monitoring is not enforcement. */
static void check_textfile(struct mc_config *cfg, struct mc_policy *p,
			   const char *origin, const char *key)
{
	char why[MC_ERR_MAX - 160];

	if (check_textfile_dir(p, why, sizeof(why)))
		turn_off(cfg, p->prometheus_textfile, origin, key, why,
			 "the textfile is off until this is fixed (a "
			 "monitoring key: GPU steps run, uncounted there)");
}

/*
 * LocalScratch= names where root makes and removes users' directories
 * (data/mc_scratch.h), so it gets PrometheusTextfile's rule and more
 * (mc_dir_shared_root). A data-path convenience, not enforcement: a bad
 * one is turned off. p is the global policy or a partition's values.
 */
static void check_scratch(struct mc_config *cfg, struct mc_policy *p,
			  const char *origin, const char *key)
{
	char why[MC_ERR_MAX - 160];

	if (p->local_scratch[0] &&
	    mc_dir_shared_root(p->local_scratch, why, sizeof(why)) != 0)
		turn_off(cfg, p->local_scratch, origin, key, why,
			 "LocalScratch is turned off (no staging directory "
			 "is made, none removed; steps run)");
}

/* check_scratch for the file's global value and each partition's. */
static void check_scratch_all(struct conf_state *st)
{
	struct mc_config *cfg = st->cfg;
	int k = key_lookup("LocalScratch");
	char origin[PATH_MAX + 16];

	snprintf(origin, sizeof(origin), "%s:%u", st->name,
		 st->global_line[k]);
	check_scratch(cfg, &cfg->global, origin, "LocalScratch");
	for (size_t i = 0; i < cfg->n_partitions; i++) {
		if (!(cfg->partitions[i].set_mask & ((uint64_t)1 << k)))
			continue;
		snprintf(origin, sizeof(origin), "%s:%u", st->name,
			 st->part_line[i]);
		check_scratch(cfg, &cfg->partitions[i].values, origin,
			      "LocalScratch");
	}
}

static void state_init(struct conf_state *st, struct mc_config *cfg,
		       const char *name, char *err, size_t errlen)
{
	memset(st, 0, sizeof(*st));
	st->cfg = cfg;
	st->name = name ? name : "memcore.conf";
	st->err = err;
	st->errlen = errlen;
	mc_config_init(cfg);
}

/* Record the source name (truncated names are still useful in messages). */
static void set_path(struct mc_config *cfg, const char *name)
{
	if (name)
		snprintf(cfg->path, sizeof(cfg->path), "%s", name);
}

/*
 * Feed one line of len bytes (no newline). The line is copied into a
 * fixed buffer so the tokenizer can write NULs into it.
 */
static int feed_line(struct conf_state *st, const char *text, size_t len)
{
	char line[MC_CONF_LINE_MAX + 1];

	st->lineno++;
	if (len > MC_CONF_LINE_MAX) {
		mc_err(st->err, st->errlen,
			"%s:%u: line longer than %d bytes", st->name,
			st->lineno, MC_CONF_LINE_MAX);
		return -1;
	}
	if (memchr(text, '\0', len)) {
		mc_err(st->err, st->errlen, "%s:%u: NUL byte in line",
			st->name, st->lineno);
		return -1;
	}
	memcpy(line, text, len);
	line[len] = '\0';
	return parse_line(st, line);
}

int mc_config_parse(const char *text, size_t len, const char *name,
		    struct mc_config *cfg, char *err, size_t errlen)
{
	struct conf_state st;
	size_t pos = 0;

	state_init(&st, cfg, name, err, errlen);
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;

		if (feed_line(&st, text + pos, n))
			goto fail;
		pos += n + (nl ? 1 : 0);
	}
	if (check_key_order(&st))
		goto fail;
	set_path(cfg, st.name);
	return 0;
fail:
	mc_config_init(cfg);
	return -1;
}

int mc_config_load(const char *path, struct mc_config *cfg,
		   char *err, size_t errlen)
{
	struct conf_state st;
	/* One line plus its newline, so an overlong line is still seen. */
	char buf[MC_CONF_LINE_MAX + 2];
	size_t have = 0, total = 0;
	int fd;

	mc_config_init(cfg);
	if (!path || !*path) {
		mc_err(err, errlen, "memcore.conf: no file name");
		return -1;
	}
	fd = mc_open_regular(NULL, path, MC_OPEN_SAY_DIR, MC_CONF_SIZE_MAX,
			     NULL, err, errlen);
	if (fd < 0)
		return -1;
	state_init(&st, cfg, path, err, errlen);
	for (;;) {
		ssize_t r = read(fd, buf + have, sizeof(buf) - have);
		char *start = buf, *nl;

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			mc_err(err, errlen, "%s: %s", path, strerror(errno));
			goto fail;
		}
		total += (size_t)r;
		if (total > MC_CONF_SIZE_MAX) {
			mc_err(err, errlen, "%s: larger than %d bytes", path,
				MC_CONF_SIZE_MAX);
			goto fail;
		}
		have += (size_t)r;
		while ((nl = memchr(start, '\n', have - (size_t)(start - buf)))) {
			if (feed_line(&st, start, (size_t)(nl - start)))
				goto fail;
			start = nl + 1;
		}
		have -= (size_t)(start - buf);
		memmove(buf, start, have);
		if (r == 0) {
			/* The last line may lack its newline. */
			if (have && feed_line(&st, buf, have))
				goto fail;
			break;
		}
		if (have == sizeof(buf)) {
			/* A full buffer with no newline: feed_line refuses it
			 * as overlong with the right line number. */
			feed_line(&st, buf, have);
			goto fail;
		}
	}
	close(fd);
	if (check_key_order(&st)) {
		mc_config_init(cfg);
		return -1;
	}
	{
		char origin[PATH_MAX + 16];

		snprintf(origin, sizeof(origin), "%s:%u", path,
			 st.global_line[key_lookup("PrometheusTextfile")]);
		check_textfile(cfg, &cfg->global, origin,
			       "PrometheusTextfile");
	}
	check_scratch_all(&st);
	set_path(cfg, path);
	return 0;
fail:
	close(fd);
	mc_config_init(cfg);
	return -1;
}

int mc_config_set(struct mc_config *cfg, const char *key, const char *value,
		  const char *origin, char *err, size_t errlen)
{
	struct mc_policy tmp, old;
	uint64_t masks[MC_MAX_PARTITIONS];
	char why[MC_ERR_MAX];
	long c;
	size_t r;
	int k;

	if (!origin)
		origin = "plugstack.conf";
	if (!key || !*key) {
		mc_err(err, errlen, "%s: '=%s': expected Key=Value", origin,
			value ? value : "");
		return -1;
	}
	if (!value || !*value) {
		mc_err(err, errlen, "%s: %s: missing value", origin, key);
		return -1;
	}
	k = key_lookup(key);
	if (k < 0) {
		mc_err(err, errlen, "%s: %s=%s: unknown key", origin, key,
			value);
		return -1;
	}
	/* Parse into a copy of the one policy: cfg is untouched on error. */
	tmp = cfg->global;
	if (set_key(&tmp, k, value, why, sizeof(why))) {
		mc_err(err, errlen, "%s: %s=%s: %s", origin, key, value, why);
		return -1;
	}
	if (!strcasecmp(mc_keys[k].name, "PrometheusTextfile"))
		check_textfile(cfg, &tmp, origin, key);
	/* An argument overrides the whole file, partition lines included:
	 * `mode=off` in plugstack.conf must switch memcore off everywhere.
	 * The file's cross-key check holds for arguments too; on a conflict
	 * the old value and partition lines come back. */
	old = cfg->global;
	for (size_t i = 0; i < cfg->n_partitions; i++) {
		masks[i] = cfg->partitions[i].set_mask;
		cfg->partitions[i].set_mask &= ~((uint64_t)1 << k);
	}
	if (!strcasecmp(mc_keys[k].name, "LocalScratch"))
		check_scratch(cfg, &tmp, origin, key);
	copy_key(&cfg->global, &tmp, k);
	c = order_conflict(cfg, &r);
	if (c != -2) {
		struct mc_policy eff;

		mc_config_policy(cfg, c >= 0 ? cfg->partitions[c].name : NULL,
				 &eff);
		mc_err(err, errlen, "%s: %s=%s: %s%s%s", origin, key, value,
			order_text(&eff, r, why, sizeof(why)),
			c >= 0 ? " in PartitionName=" : "",
			c >= 0 ? cfg->partitions[c].name : "");
		cfg->global = old;
		for (size_t i = 0; i < cfg->n_partitions; i++)
			cfg->partitions[i].set_mask = masks[i];
		return -1;
	}
	return 0;
}

void mc_config_policy(const struct mc_config *cfg, const char *partition,
		      struct mc_policy *out)
{
	*out = cfg->global;
	if (!partition)
		return;
	for (size_t i = 0; i < cfg->n_partitions; i++) {
		const struct mc_partition *pt = &cfg->partitions[i];

		if (strcmp(pt->name, partition))
			continue;
		for (size_t k = 0; k < K_COUNT; k++)
			if (pt->set_mask & ((uint64_t)1 << k))
				copy_key(out, &pt->values, k);
		return;
	}
}

void mc_config_plugstack(struct mc_config *cfg, int ac, char *const *av,
			 const char *default_cache, char *cache_path,
			 size_t cachelen, char *err, size_t errlen)
{
	const char *path = MC_DEFAULT_CONFIG;
	char e[MC_ERR_MAX];

	err[0] = '\0';
	snprintf(cache_path, cachelen, "%s", default_cache ? default_cache
							   : "");
	for (int i = 0; i < ac; i++)
		if (!strncmp(av[i], "config=", 7))
			path = av[i] + 7;
	if (!*path) {
		mc_config_init(cfg);
		snprintf(err, errlen, "plugstack.conf: config=: missing value "
			 "(the path of memcore.conf)");
	} else if (mc_config_load(path, cfg, e, sizeof(e)) < 0) {
		snprintf(err, errlen, "%s", e);
	}
	for (int i = 0; i < ac; i++) {
		char key[64];
		const char *eq = strchr(av[i], '=');
		size_t klen = eq ? (size_t)(eq - av[i]) : strlen(av[i]);

		if (!strncmp(av[i], "config=", 7))
			continue;
		/* Where slurmd keeps the node facts: a plugstack argument,
		 * not a memcore.conf key, because slurmd and every
		 * slurmstepd must agree on it whatever the partition. */
		if (!strncmp(av[i], "cache=", 6)) {
			const char *v = av[i] + 6;

			if (!strcmp(v, "none"))
				cache_path[0] = '\0';
			else if (*v != '/' && !err[0])
				snprintf(err, errlen, "plugstack.conf: cache=%s: "
					 "expected an absolute path or none", v);
			else if (*v == '/')
				snprintf(cache_path, cachelen, "%s", v);
			continue;
		}
		if (!eq || klen == 0 || klen >= sizeof(key)) {
			if (!err[0])
				snprintf(err, errlen, "plugstack.conf: '%s': "
					 "expected key=value", av[i]);
			continue;
		}
		memcpy(key, av[i], klen);
		key[klen] = '\0';
		if (mc_config_set(cfg, key, eq + 1, "plugstack.conf", e,
				  sizeof(e)) < 0 && !err[0])
			snprintf(err, errlen, "%s", e);
	}
}
