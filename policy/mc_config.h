/*
 * mc_config.h - the memcore.conf policy file and plugstack arguments.
 *
 * Format (slurm.conf conventions): one `Key=Value` per line or several
 * separated by blanks, case-insensitive keys, `#` starts a comment, sizes
 * with binary K/M/G/T suffixes. Override lines
 *     PartitionName=debug Mode=warn DataloaderWorkers=1
 * apply their keys on top of the global ones for jobs in that partition
 * (the order of lines does not matter: globals are resolved first).
 *
 * Parsing starts from mc_policy_defaults() and refuses unknown keys,
 * duplicate keys (within the globals or within one partition line), bad
 * values, lines over MC_CONF_LINE_MAX bytes and NUL bytes. Every error
 * message names file, line and key:
 *     "/etc/slurm/memcore.conf:12: RamPerWorker=4Q: unknown size suffix 'Q'"
 * Nothing is half-applied: on error the output config is left as defaults.
 * Sizes without a suffix are MiB, as in slurm.conf and --mem. A
 * PartitionName= key must start its line; partition names are compared
 * case-sensitively, as Slurm does.
 */
#ifndef MC_CONFIG_H
#define MC_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <limits.h>
#include <stdbool.h>

#include "mc_limits.h"

#define MC_CONF_LINE_MAX 4096
#define MC_PARTITION_NAME_MAX 64
#define MC_MAX_PARTITIONS 64
#define MC_ERR_MAX 512
#define MC_DEFAULT_CONFIG "/etc/slurm/memcore.conf"
/* GpuTypeMemory=: at most this many types, each name shorter than this. */
#define MC_GPU_TYPES_MAX 16
#define MC_GPU_TYPE_NAME_MAX 32
/* SampleInterval=: the default, and the shortest accepted. One sample
 * costs about 10 us of CPU on the test machine (make bench, sample_cpu_us): at 1 s that
 * is 0.001% of one core. */
#define MC_SAMPLE_INTERVAL_DEFAULT_MS 1000
#define MC_SAMPLE_INTERVAL_MIN_MS 100

enum mc_mode { MC_MODE_ENFORCE = 0, MC_MODE_WARN, MC_MODE_OFF };
enum mc_bind { MC_BIND_NUMA = 0, MC_BIND_NONE };
enum mc_on_error { MC_ON_ERROR_REFUSE = 0, MC_ON_ERROR_ALLOW };
/* UnifiedMemory=: whether the GPUs share host RAM (APUs, see mc_facts.h). */
enum mc_unified { MC_UNIFIED_AUTO = 0, MC_UNIFIED_YES, MC_UNIFIED_NO };
/* NetworkDataset=: what a dataset on a network filesystem gets (mc_dataset.h). */
enum mc_netds { MC_NETDS_NOTE = 0, MC_NETDS_IGNORE, MC_NETDS_REFUSE };

/* Word lists for mc_parse_word(), indexed by the enums above. */
extern const char *const mc_mode_words[];	/* enforce warn off */
extern const char *const mc_bind_words[];	/* numa none */
extern const char *const mc_on_error_words[];	/* refuse allow */
extern const char *const mc_unified_words[];	/* auto yes no */
extern const char *const mc_netds_words[];	/* note ignore refuse */

/* One GpuTypeMemory= entry: the memory of one GPU of a Slurm GRES type. */
struct mc_gpu_type_memory {
	char type[MC_GPU_TYPE_NAME_MAX];	/* as in Gres=gpu:TYPE:N */
	uint64_t bytes;
};

/*
 * The policy for one step. Defaults and their sources are in
 * etc/memcore.conf; the rules that use them are in mc_rules.h.
 */
struct mc_policy {
	enum mc_mode mode;		/* Mode=enforce */
	uint32_t dataloader_workers;	/* DataloaderWorkers=2 (per GPU) */
	uint32_t max_dataloader_workers;/* MaxDataloaderWorkers=64 */
	uint32_t reserved_cores;	/* ReservedCores=4 (OS and daemons) */
	uint32_t min_cores_per_gpu;	/* MinCoresPerGpu=0 (off) */
	double host_ram_per_gpu_ram;	/* HostRamPerGpuRam=1.0 */
	uint64_t ram_per_worker_bytes;	/* RamPerWorker=4G */
	uint64_t ram_per_task_bytes;	/* RamPerTask=1G */
	uint64_t gpu_memory_bytes;	/* GpuMemory=auto -> 0: from topology */
	/* GpuTypeMemory=h100:80G,a100:40G: GPU memory by Slurm GRES type, for
	 * nodes known from slurmctld (which does not know GPU memory). */
	struct mc_gpu_types {
		struct mc_gpu_type_memory t[MC_GPU_TYPES_MAX];
		uint32_t n;
	} gpu_type_memory;
	double offload_buffer_factor;	/* OffloadBufferFactor=1.5 */
	int zero_init;			/* ZeroInit=yes (DeepSpeed zero.Init) */
	enum mc_bind bind;		/* Bind=numa */
	char topology_file[PATH_MAX];	/* TopologyFile= (empty: live) */
	int cgroup_memory;		/* CgroupMemory=yes */
	int allow_user_warn;		/* AllowUserWarn=yes */
	enum mc_on_error on_error;	/* OnError=refuse */
	/* Node facts for login hosts (cli_filter) that cannot see the node:
	 * 0 = unknown, take them from the topology. */
	uint64_t node_ram_bytes;	/* NodeRam= */
	uint32_t node_cores;		/* NodeCores= */
	uint32_t node_gpus;		/* NodeGpus= */
	/* GPU memory is host RAM, one pool (AMD MI300A APUs): auto detects
	 * it from the GPUs' PCI ids. */
	enum mc_unified unified_memory;	/* UnifiedMemory=auto */
	/* A job's --ram-per-worker must lie within these (mc_terms.h). */
	uint64_t min_ram_per_worker_bytes;	/* MinRamPerWorker=512M */
	uint64_t max_ram_per_worker_bytes;	/* MaxRamPerWorker=128G */
	/* Extra cores per rank whose optimizer step runs on the CPU
	 * (ZeRO-Offload's DeepSpeedCPUAdam). */
	uint32_t offload_cores_per_gpu;	/* OffloadCoresPerGpu=2 */
	/* Shards (gres/shard) per GPU on the partition's nodes, for the
	 * share of a --gres=shard:N step at launch; 0 unknown. */
	uint32_t shards_per_gpu;	/* ShardsPerGpu=0 */
	/* After the step: how often slurmstepd samples the step's
	 * memory cgroup (0 = off), whether every step prints its summary,
	 * and the node_exporter textfile of the cluster view ("" = none). */
	uint32_t sample_interval_ms;	/* SampleInterval=1s */
	int report;			/* Report=no */
	char prometheus_textfile[256];	/* PrometheusTextfile= */
	/* The data path (mc_dataset.h): what a dataset on a network
	 * filesystem gets, and the node-local scratch to stage it to. */
	enum mc_netds network_dataset;	/* NetworkDataset=note */
	char local_scratch[PATH_MAX];	/* LocalScratch= ("" none) */
	/* DataLoader workers one core serves (mc_cores_per_gpu); >= 1. */
	uint32_t workers_per_core;	/* WorkersPerCore=1 */
};

/* One `PartitionName=` line: the keys it sets, as a bit per key. */
struct mc_partition {
	char name[MC_PARTITION_NAME_MAX];
	uint64_t set_mask;
	struct mc_policy values;
};

struct mc_config {
	char path[PATH_MAX];		/* file it came from, "" if none */
	struct mc_policy global;
	size_t n_partitions;
	struct mc_partition partitions[MC_MAX_PARTITIONS];
	/* A key the file system check turned off where it was loaded, and
	 * why (the first; "" none): "FILE:LINE: PrometheusTextfile=P: why;
	 * the textfile is off ..." or "... LocalScratch=P: why; LocalScratch
	 * is turned off ...". Never an error: monitoring and the data path
	 * are not enforcement (DESIGN.md), so it is said (slurmd's log,
	 * --memcore=explain, every memcore command) and the policy stands. */
	char key_off[MC_ERR_MAX];
};

/*
 * The memcore.conf keys: one table (mc_config.c) that parsing, partition
 * overrides, `memcore keys` and the man-page test (test_config.c) all
 * read. Adding a key is one entry there plus its field in struct
 * mc_policy, its default in mc_policy_defaults() and its paragraph in
 * docs/memcore.conf.5.
 */
enum mc_key_type {
	MC_KEY_WORD,		/* one of words[], stored as an enum (int) */
	MC_KEY_BOOL,		/* yes/no, true/false, 1/0, on/off: int */
	MC_KEY_COUNT,		/* uint32_t in [0, max] */
	MC_KEY_SIZE,		/* uint64_t bytes, MiB without a suffix, at
				 * most max; words[0] (e.g. "auto") is 0 */
	MC_KEY_RATIO,		/* double in [min, max] (above min when
				 * min_exclusive) */
	MC_KEY_PATH,		/* char[size], "" = unset */
	MC_KEY_GPU_TYPES,	/* struct mc_gpu_types: TYPE:SIZE,... */
	MC_KEY_DURATION,	/* uint32_t ms: N or Ns seconds, Nms; 0
				 * (off) or in [min, max] ms */
};

struct mc_key {
	const char *name;		/* as written, compared case-blind */
	enum mc_key_type type;
	size_t offset, size;		/* the field in struct mc_policy */
	double min, max;		/* bounds (COUNT, SIZE, RATIO) */
	bool min_exclusive;
	const char *const *words;	/* WORD: the words; SIZE: its 0 word;
					 * PATH: the ending it must have
					 * (then absolute, no ".." part) */
	bool per_partition;		/* allowed on a PartitionName= line */
};

/* The keys, in set_mask bit order; mc_n_keys of them. */
extern const struct mc_key mc_keys[];
extern const size_t mc_n_keys;

/* The key named name (case-insensitive), or NULL. */
const struct mc_key *mc_key_find(const char *name);

/*
 * What a key takes, for listings and the man page: "enforce | warn | off",
 * "yes | no", "N (0 to 1024)", "SIZE (at most 1024T)", "auto | SIZE",
 * "RATIO (above 0 to 16)", "PATH", "TYPE:SIZE[,TYPE:SIZE...]". Returns buf.
 */
const char *mc_key_describe(const struct mc_key *k, char *buf, size_t len);

/* The built-in defaults (documented in etc/memcore.conf). */
void mc_policy_defaults(struct mc_policy *p);

/* Reset cfg to defaults with no partitions and no path. */
void mc_config_init(struct mc_config *cfg);

/*
 * Load a policy file into cfg (which is reset first).
 * Returns 0, or -1 with err set ("FILE:LINE: KEY=VALUE: reason", or
 * "FILE: reason" for a missing, unreadable or non-regular file) and cfg
 * left at defaults. Beyond the text, it checks the file system for one
 * key: a PrometheusTextfile= whose directory others than root can write
 * (mc_dir_root_only in mc_util.h) is turned off, not refused: the rest
 * of the file applies, and cfg->key_off says "FILE:LINE:
 * PrometheusTextfile=PATH: directory D is writable by others than root
 * (mode 0777): ...; the textfile is off ...". A LocalScratch= (global or
 * a partition's) that breaks its rule (mc_dir_shared_root) is turned off
 * the same way ("" and cfg->key_off says which and why): a data-path
 * convenience, not enforcement, never refuses a step.
 */
int mc_config_load(const char *path, struct mc_config *cfg,
		   char *err, size_t errlen);

/*
 * Parse a policy from a string (what mc_config_load does after reading);
 * name is used in messages as the file name. Same contract, less the
 * file system check of PrometheusTextfile='s directory.
 */
int mc_config_parse(const char *text, size_t len, const char *name,
		    struct mc_config *cfg, char *err, size_t errlen);

/*
 * Set one global key, e.g. from a plugstack argument `mode=warn`.
 * origin names where it came from in messages ("plugstack.conf").
 * PrometheusTextfile= is checked as in mc_config_load, and so is
 * LocalScratch=: either, when it fails, is left unset with cfg->key_off
 * saying why, and 0 is returned.
 * Returns 0 or -1 with err = "ORIGIN: KEY=VALUE: reason"; cfg unchanged on
 * error. The argument overrides the whole file: the key is also dropped
 * from every PartitionName line, so `mode=off` turns memcore off everywhere.
 */
int mc_config_set(struct mc_config *cfg, const char *key, const char *value,
		  const char *origin, char *err, size_t errlen);

/*
 * The plugstack.conf arguments, all parsed here: `config=PATH` (default
 * MC_DEFAULT_CONFIG) is loaded first, then `cache=PATH|none` (an absolute
 * path, or none: "" in cache_path; default default_cache) and every other
 * `key=value` is a memcore.conf key set with mc_config_set (it overrides
 * the file, and still applies when the file is broken so that e.g.
 * onerror=allow can say what to do then). Never fails: the first problem
 * is left in err ("" when all is well), e.g. "plugstack.conf: cache=x:
 * expected an absolute path or none" or the file's own message.
 */
void mc_config_plugstack(struct mc_config *cfg, int ac, char *const *av,
			 const char *default_cache, char *cache_path,
			 size_t cachelen, char *err, size_t errlen);

/*
 * The GpuTypeMemory= bytes for a GRES type (case-insensitive), or 0 when
 * the policy names no such type (or type is NULL or empty).
 */
uint64_t mc_policy_gpu_type_memory(const struct mc_policy *p,
				   const char *type);

/*
 * The effective policy for a partition: the globals with that partition's
 * line applied. partition may be NULL or unknown: then the globals.
 */
void mc_config_policy(const struct mc_config *cfg, const char *partition,
		      struct mc_policy *out);

#endif
