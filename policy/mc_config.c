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

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
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

/* A policy file larger than this is not a policy file. */
#define MC_CONF_SIZE_MAX (1 << 20)

/* Upper bounds that keep the rules' products far from overflow. */
#define MC_CORES_MAX (1U << 20)
#define MC_GPUS_MAX (1U << 16)

/* The keys, in set_mask bit order. */
enum mc_key {
	K_MODE, K_DATALOADER_WORKERS, K_MAX_DATALOADER_WORKERS,
	K_RESERVED_CORES, K_MIN_CORES_PER_GPU, K_HOST_RAM_PER_GPU_RAM,
	K_RAM_PER_WORKER, K_RAM_PER_TASK, K_GPU_MEMORY,
	K_OFFLOAD_BUFFER_FACTOR, K_ZERO_INIT, K_BIND, K_TOPOLOGY_FILE,
	K_CGROUP_MEMORY, K_ALLOW_USER_WARN, K_ON_ERROR, K_NODE_RAM,
	K_NODE_CORES, K_NODE_GPUS, K_GPU_TYPE_MEMORY, K_UNIFIED_MEMORY,
	K_SAMPLE_INTERVAL, K_REPORT, K_PROMETHEUS_TEXTFILE,
	K_COUNT
};

static const char *const key_names[K_COUNT] = {
	[K_MODE] = "Mode",
	[K_DATALOADER_WORKERS] = "DataloaderWorkers",
	[K_MAX_DATALOADER_WORKERS] = "MaxDataloaderWorkers",
	[K_RESERVED_CORES] = "ReservedCores",
	[K_MIN_CORES_PER_GPU] = "MinCoresPerGpu",
	[K_HOST_RAM_PER_GPU_RAM] = "HostRamPerGpuRam",
	[K_RAM_PER_WORKER] = "RamPerWorker",
	[K_RAM_PER_TASK] = "RamPerTask",
	[K_GPU_MEMORY] = "GpuMemory",
	[K_OFFLOAD_BUFFER_FACTOR] = "OffloadBufferFactor",
	[K_ZERO_INIT] = "ZeroInit",
	[K_BIND] = "Bind",
	[K_TOPOLOGY_FILE] = "TopologyFile",
	[K_CGROUP_MEMORY] = "CgroupMemory",
	[K_ALLOW_USER_WARN] = "AllowUserWarn",
	[K_ON_ERROR] = "OnError",
	[K_NODE_RAM] = "NodeRam",
	[K_NODE_CORES] = "NodeCores",
	[K_NODE_GPUS] = "NodeGpus",
	[K_GPU_TYPE_MEMORY] = "GpuTypeMemory",
	[K_UNIFIED_MEMORY] = "UnifiedMemory",
	[K_SAMPLE_INTERVAL] = "SampleInterval",
	[K_REPORT] = "Report",
	[K_PROMETHEUS_TEXTFILE] = "PrometheusTextfile",
};

_Static_assert(K_COUNT <= 64, "set_mask has 64 bits");

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
	p->unified_memory = MC_UNIFIED_AUTO;
	p->sample_interval_ms = MC_SAMPLE_INTERVAL_DEFAULT_MS;
	p->report = 0;
	p->prometheus_textfile[0] = '\0';
}

void mc_config_init(struct mc_config *cfg)
{
	cfg->path[0] = '\0';
	mc_policy_defaults(&cfg->global);
	cfg->n_partitions = 0;
	/* The partition slots are only read below n_partitions. */
}

static int key_lookup(const char *name)
{
	for (int k = 0; k < K_COUNT; k++)
		if (!strcasecmp(name, key_names[k]))
			return k;
	return -1;
}

/*
 * GpuTypeMemory=TYPE:SIZE[,TYPE:SIZE...] (sizes as GpuMemory=, MiB without
 * a suffix). A type named twice is an error.
 */
static int set_gpu_type_memory(struct mc_policy *p, const char *v,
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
		if (!t[n].bytes || t[n].bytes > ((uint64_t)1 << 50))
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
	memcpy(p->gpu_type_memory, t, sizeof(t[0]) * n);
	p->n_gpu_type_memory = n;
	return 0;
}

uint64_t mc_policy_gpu_type_memory(const struct mc_policy *p,
				   const char *type)
{
	if (!type || !*type)
		return 0;
	for (uint32_t i = 0; i < p->n_gpu_type_memory; i++)
		if (!strcasecmp(p->gpu_type_memory[i].type, type))
			return p->gpu_type_memory[i].bytes;
	return 0;
}

/*
 * SampleInterval=: "0" (off), "N" or "Ns" seconds, "Nms" milliseconds;
 * from MC_SAMPLE_INTERVAL_MIN_MS to an hour.
 */
static int set_sample_interval(struct mc_policy *p, const char *v,
			       char *why, size_t whylen)
{
	unsigned long long n;
	char *end;

	if (*v < '0' || *v > '9')
		return mc_err(why, whylen, "expected a duration such as 1s "
			      "or 500ms, or 0 for off");
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || n > 3600000ULL)
		return mc_err(why, whylen, "too large (at most 3600s)");
	if (!strcmp(end, "ms"))
		;
	else if (!*end || !strcmp(end, "s"))
		n *= 1000;
	else
		return mc_err(why, whylen, "unknown unit '%s' (s or ms)", end);
	if (n > 3600000ULL)
		return mc_err(why, whylen, "too large (at most 3600s)");
	if (n && n < MC_SAMPLE_INTERVAL_MIN_MS)
		return mc_err(why, whylen, "below %dms: the sampler would "
			      "cost the step more than it tells",
			      MC_SAMPLE_INTERVAL_MIN_MS);
	p->sample_interval_ms = (uint32_t)n;
	return 0;
}

/* Parse value for key k into p; on error, a bare reason in why. */
static int set_key(struct mc_policy *p, int k, const char *v,
		   char *why, size_t whylen)
{
	uint64_t sz;
	uint32_t n;
	double d;
	int b, w;

	switch (k) {
	case K_MODE:
		if (mc_parse_word(v, mc_mode_words, &w, why, whylen))
			return -1;
		p->mode = (enum mc_mode)w;
		return 0;
	case K_DATALOADER_WORKERS:
		if (mc_parse_count(v, MC_WORKERS_LIMIT, &n, why, whylen))
			return -1;
		p->dataloader_workers = n;
		return 0;
	case K_MAX_DATALOADER_WORKERS:
		if (mc_parse_count(v, MC_WORKERS_LIMIT, &n, why, whylen))
			return -1;
		p->max_dataloader_workers = n;
		return 0;
	case K_RESERVED_CORES:
		if (mc_parse_count(v, MC_CORES_MAX, &n, why, whylen))
			return -1;
		p->reserved_cores = n;
		return 0;
	case K_MIN_CORES_PER_GPU:
		if (mc_parse_count(v, MC_CORES_MAX, &n, why, whylen))
			return -1;
		p->min_cores_per_gpu = n;
		return 0;
	case K_HOST_RAM_PER_GPU_RAM:
		if (mc_parse_ratio(v, 0, 16, &d, why, whylen))
			return -1;
		if (d <= 0) {
			snprintf(why, whylen, "must be above 0");
			return -1;
		}
		p->host_ram_per_gpu_ram = d;
		return 0;
	case K_RAM_PER_WORKER:
	case K_RAM_PER_TASK:
	case K_NODE_RAM:
		/* No suffix means MiB, as slurm.conf's RealMemory and --mem. */
		if (mc_parse_size(v, (uint64_t)1 << 20, &sz, why, whylen))
			return -1;
		/* 1 PiB keeps g * w * RamPerWorker inside 64 bits. */
		if (sz > ((uint64_t)1 << 50)) {
			snprintf(why, whylen, "too large (at most 1P)");
			return -1;
		}
		if (k == K_RAM_PER_WORKER)
			p->ram_per_worker_bytes = sz;
		else if (k == K_RAM_PER_TASK)
			p->ram_per_task_bytes = sz;
		else
			p->node_ram_bytes = sz;
		return 0;
	case K_GPU_MEMORY:
		if (!strcasecmp(v, "auto")) {
			p->gpu_memory_bytes = 0;
			return 0;
		}
		if (mc_parse_size(v, (uint64_t)1 << 20, &sz, why, whylen))
			return -1;
		if (sz > ((uint64_t)1 << 50)) {
			snprintf(why, whylen, "too large (at most 1P)");
			return -1;
		}
		p->gpu_memory_bytes = sz;
		return 0;
	case K_OFFLOAD_BUFFER_FACTOR:
		/* DeepSpeed's additional_buffer_factor: a margin, never < 1. */
		if (mc_parse_ratio(v, 1, 16, &d, why, whylen))
			return -1;
		p->offload_buffer_factor = d;
		return 0;
	case K_ZERO_INIT:
	case K_CGROUP_MEMORY:
	case K_ALLOW_USER_WARN:
		if (mc_parse_bool(v, &b, why, whylen))
			return -1;
		if (k == K_ZERO_INIT)
			p->zero_init = b;
		else if (k == K_CGROUP_MEMORY)
			p->cgroup_memory = b;
		else
			p->allow_user_warn = b;
		return 0;
	case K_BIND:
		if (mc_parse_word(v, mc_bind_words, &w, why, whylen))
			return -1;
		p->bind = (enum mc_bind)w;
		return 0;
	case K_ON_ERROR:
		if (mc_parse_word(v, mc_on_error_words, &w, why, whylen))
			return -1;
		p->on_error = (enum mc_on_error)w;
		return 0;
	case K_TOPOLOGY_FILE:
		if (strlen(v) >= sizeof(p->topology_file)) {
			snprintf(why, whylen, "path too long");
			return -1;
		}
		memcpy(p->topology_file, v, strlen(v) + 1);
		return 0;
	case K_NODE_CORES:
		if (mc_parse_count(v, MC_CORES_MAX, &n, why, whylen))
			return -1;
		p->node_cores = n;
		return 0;
	case K_NODE_GPUS:
		if (mc_parse_count(v, MC_GPUS_MAX, &n, why, whylen))
			return -1;
		p->node_gpus = n;
		return 0;
	case K_GPU_TYPE_MEMORY:
		return set_gpu_type_memory(p, v, why, whylen);
	case K_UNIFIED_MEMORY:
		if (mc_parse_word(v, mc_unified_words, &w, why, whylen))
			return -1;
		p->unified_memory = (enum mc_unified)w;
		return 0;
	case K_SAMPLE_INTERVAL:
		return set_sample_interval(p, v, why, whylen);
	case K_REPORT:
		if (mc_parse_bool(v, &b, why, whylen))
			return -1;
		p->report = b;
		return 0;
	case K_PROMETHEUS_TEXTFILE:
		if (*v != '/' || strlen(v) >= sizeof(p->prometheus_textfile)) {
			snprintf(why, whylen, "expected an absolute path "
				 "shorter than %zu bytes",
				 sizeof(p->prometheus_textfile));
			return -1;
		}
		memcpy(p->prometheus_textfile, v, strlen(v) + 1);
		return 0;
	}
	snprintf(why, whylen, "unknown key");
	return -1;
}

/* Copy the field of key k from src to dst (partition overrides). */
static void copy_key(struct mc_policy *dst, const struct mc_policy *src,
		     int k)
{
	switch (k) {
	case K_MODE: dst->mode = src->mode; break;
	case K_DATALOADER_WORKERS:
		dst->dataloader_workers = src->dataloader_workers; break;
	case K_MAX_DATALOADER_WORKERS:
		dst->max_dataloader_workers = src->max_dataloader_workers;
		break;
	case K_RESERVED_CORES: dst->reserved_cores = src->reserved_cores; break;
	case K_MIN_CORES_PER_GPU:
		dst->min_cores_per_gpu = src->min_cores_per_gpu; break;
	case K_HOST_RAM_PER_GPU_RAM:
		dst->host_ram_per_gpu_ram = src->host_ram_per_gpu_ram; break;
	case K_RAM_PER_WORKER:
		dst->ram_per_worker_bytes = src->ram_per_worker_bytes; break;
	case K_RAM_PER_TASK:
		dst->ram_per_task_bytes = src->ram_per_task_bytes; break;
	case K_GPU_MEMORY: dst->gpu_memory_bytes = src->gpu_memory_bytes; break;
	case K_OFFLOAD_BUFFER_FACTOR:
		dst->offload_buffer_factor = src->offload_buffer_factor; break;
	case K_ZERO_INIT: dst->zero_init = src->zero_init; break;
	case K_BIND: dst->bind = src->bind; break;
	case K_TOPOLOGY_FILE:
		memcpy(dst->topology_file, src->topology_file,
		       sizeof(dst->topology_file));
		break;
	case K_CGROUP_MEMORY: dst->cgroup_memory = src->cgroup_memory; break;
	case K_ALLOW_USER_WARN:
		dst->allow_user_warn = src->allow_user_warn; break;
	case K_ON_ERROR: dst->on_error = src->on_error; break;
	case K_NODE_RAM: dst->node_ram_bytes = src->node_ram_bytes; break;
	case K_NODE_CORES: dst->node_cores = src->node_cores; break;
	case K_NODE_GPUS: dst->node_gpus = src->node_gpus; break;
	case K_GPU_TYPE_MEMORY:
		memcpy(dst->gpu_type_memory, src->gpu_type_memory,
		       sizeof(dst->gpu_type_memory));
		dst->n_gpu_type_memory = src->n_gpu_type_memory;
		break;
	case K_UNIFIED_MEMORY:
		dst->unified_memory = src->unified_memory; break;
	case K_SAMPLE_INTERVAL:
		dst->sample_interval_ms = src->sample_interval_ms; break;
	case K_REPORT: dst->report = src->report; break;
	case K_PROMETHEUS_TEXTFILE:
		memcpy(dst->prometheus_textfile, src->prometheus_textfile,
		       sizeof(dst->prometheus_textfile));
		break;
	}
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

/*
 * Split a token into key and value. Reports "'word': expected Key=Value"
 * and "KEY: missing value" itself.
 */
static int split_token(struct conf_state *st, char *tok, char **key,
		       char **val)
{
	char *eq = strchr(tok, '=');

	if (!eq || eq == tok) {
		mc_err(st->err, st->errlen, "%s:%u: '%s': expected Key=Value",
			st->name, st->lineno, tok);
		return -1;
	}
	*eq = '\0';
	*key = tok;
	*val = eq + 1;
	if (!**val) {
		mc_err(st->err, st->errlen, "%s:%u: %s: missing value",
			st->name, st->lineno, tok);
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
	char why[MC_ERR_MAX];
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
				"%s:%u: %s=%s: duplicate key on this line",
				st->name, st->lineno, key, val);
			return -1;
		}
		k = key_lookup(key);
		if (k < 0) {
			mc_err(st->err, st->errlen,
				"%s:%u: %s=%s: unknown key", st->name,
				st->lineno, key, val);
			return -1;
		}
		if (seen[k]) {
			mc_err(st->err, st->errlen,
				"%s:%u: %s=%s: duplicate key on this line",
				st->name, st->lineno, key, val);
			return -1;
		}
		seen[k] = 1;
		if (set_key(&part->values, k, val, why, sizeof(why))) {
			mc_err(st->err, st->errlen, "%s:%u: %s=%s: %s",
				st->name, st->lineno, key, val, why);
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
	char why[MC_ERR_MAX];
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
					"%s:%u: %s=%s: PartitionName= must start its line",
					st->name, st->lineno, key, val);
				return -1;
			}
			return parse_partition_line(st, val, rest);
		}
		first = false;
		k = key_lookup(key);
		if (k < 0) {
			mc_err(st->err, st->errlen,
				"%s:%u: %s=%s: unknown key", st->name,
				st->lineno, key, val);
			return -1;
		}
		if (st->global_line[k]) {
			mc_err(st->err, st->errlen,
				"%s:%u: %s=%s: duplicate key (first set on line %u)",
				st->name, st->lineno, key, val,
				st->global_line[k]);
			return -1;
		}
		if (set_key(&st->cfg->global, k, val, why, sizeof(why))) {
			mc_err(st->err, st->errlen, "%s:%u: %s=%s: %s",
				st->name, st->lineno, key, val, why);
			return -1;
		}
		st->global_line[k] = st->lineno;
	}
	return 0;
}

/*
 * Where the default worker count is above the maximum (which would make
 * every default job exceed its own policy): -1 in the globals, i for
 * partition i, or -2 nowhere.
 */
static long workers_conflict(const struct mc_config *cfg)
{
	struct mc_policy eff;

	if (cfg->global.dataloader_workers > cfg->global.max_dataloader_workers)
		return -1;
	for (size_t i = 0; i < cfg->n_partitions; i++) {
		mc_config_policy(cfg, cfg->partitions[i].name, &eff);
		if (eff.dataloader_workers > eff.max_dataloader_workers)
			return (long)i;
	}
	return -2;
}

/* The cross-key check once every line of a file is in. */
static int check_workers(struct conf_state *st)
{
	struct mc_config *cfg = st->cfg;
	long c = workers_conflict(cfg);
	struct mc_policy eff;

	if (c == -1) {
		unsigned ln = st->global_line[K_DATALOADER_WORKERS];
		int k = ln ? K_DATALOADER_WORKERS : K_MAX_DATALOADER_WORKERS;

		if (!ln)
			ln = st->global_line[K_MAX_DATALOADER_WORKERS];
		mc_err(st->err, st->errlen,
			"%s:%u: %s=%u: DataloaderWorkers=%u is above MaxDataloaderWorkers=%u",
			st->name, ln, key_names[k],
			k == K_DATALOADER_WORKERS ?
				cfg->global.dataloader_workers :
				cfg->global.max_dataloader_workers,
			cfg->global.dataloader_workers,
			cfg->global.max_dataloader_workers);
		return -1;
	}
	if (c >= 0) {
		const struct mc_partition *pt = &cfg->partitions[c];

		mc_config_policy(cfg, pt->name, &eff);
		mc_err(st->err, st->errlen,
			"%s:%u: PartitionName=%s: DataloaderWorkers=%u is above MaxDataloaderWorkers=%u",
			st->name, st->part_line[c], pt->name,
			eff.dataloader_workers, eff.max_dataloader_workers);
		return -1;
	}
	return 0;
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
	if (check_workers(&st))
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
	struct stat sb;
	/* One line plus its newline, so an overlong line is still seen. */
	char buf[MC_CONF_LINE_MAX + 2];
	size_t have = 0, total = 0;
	int fd;

	mc_config_init(cfg);
	if (!path || !*path) {
		mc_err(err, errlen, "memcore.conf: no file name");
		return -1;
	}
	/* O_NONBLOCK: a FIFO put in place of the file must not hang us. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		mc_err(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &sb)) {
		mc_err(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	if (S_ISDIR(sb.st_mode) || !S_ISREG(sb.st_mode)) {
		mc_err(err, errlen, "%s: %s", path, S_ISDIR(sb.st_mode) ?
			"is a directory" : "not a regular file");
		close(fd);
		return -1;
	}
	if (sb.st_size > MC_CONF_SIZE_MAX) {
		mc_err(err, errlen, "%s: larger than %d bytes", path,
			MC_CONF_SIZE_MAX);
		close(fd);
		return -1;
	}
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
	if (check_workers(&st)) {
		mc_config_init(cfg);
		return -1;
	}
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
	/* An argument overrides the whole file, partition lines included:
	 * `mode=off` in plugstack.conf must switch memcore off everywhere.
	 * The file's cross-key check holds for arguments too; on a conflict
	 * the old value and partition lines come back. */
	old = cfg->global;
	for (size_t i = 0; i < cfg->n_partitions; i++) {
		masks[i] = cfg->partitions[i].set_mask;
		cfg->partitions[i].set_mask &= ~((uint64_t)1 << k);
	}
	copy_key(&cfg->global, &tmp, k);
	c = workers_conflict(cfg);
	if (c != -2) {
		struct mc_policy eff;

		mc_config_policy(cfg, c >= 0 ? cfg->partitions[c].name : NULL,
				 &eff);
		mc_err(err, errlen, "%s: %s=%s: DataloaderWorkers=%u is above "
			"MaxDataloaderWorkers=%u%s%s", origin, key, value,
			eff.dataloader_workers, eff.max_dataloader_workers,
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
		for (int k = 0; k < K_COUNT; k++)
			if (pt->set_mask & ((uint64_t)1 << k))
				copy_key(out, &pt->values, k);
		return;
	}
}
