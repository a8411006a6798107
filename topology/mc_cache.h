/*
 * mc_cache.h - the node-facts cache: slurmd computes the node's facts
 * (mc_topology.h, plus GPU memory from NVML or ROCm SMI) once at its start
 * and writes them to one small file; every slurmstepd reads that file
 * instead of loading hwloc (2-3 ms from XML for a 256-PU node, 10 ms or
 * more live, against a 34 ms bare srun launch).
 *
 * File format (version MC_CACHE_FORMAT): a struct mc_cache_header followed
 * by a struct mc_node_facts, both as this build lays them out in memory
 * (native byte order). The file never leaves its node and is rewritten at
 * every slurmd start, so a portable encoding would buy nothing; instead the
 * header says which memcore, which format, which struct size, which host
 * and which topology source wrote it, and a 64-bit FNV-1a checksum (over
 * 64-bit words) covers
 * header and facts. A reader refuses any file that does not match it in
 * every one of those, so a foreign, stale, truncated or corrupt file can
 * only ever cost a fallback to hwloc, never wrong facts.
 *
 * Written under a temporary name in the same directory, then renamed: a
 * reader sees the old file or the new one, never half a file. Mode 0644,
 * owned by the writer (root, in slurmd); a reader accepts only files owned
 * by root or by itself and writable by nobody else, since the facts decide
 * what a job may use.
 */
#ifndef MC_CACHE_H
#define MC_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "mc_topology.h"

#define MC_CACHE_MAGIC "MCFACTS"	/* 7 characters and a NUL */
/* 2: NUMA packages and distances, APU flag, MIG slices;
 * 3: NUMA CPU masks stored parsed;
 * 4: live host RAM from the kernel, hwloc's kept apart;
 * 5: Slurm's GPU and shard counts of the node. */
#define MC_CACHE_FORMAT 5u
#define MC_CACHE_HOST_MAX 256
#define MC_CACHE_VERSION_MAX 32
/* The default cache file: Slurm's default SlurmdSpoolDir plus our name.
 * A site with another SlurmdSpoolDir names its file with the plugstack
 * argument cache=PATH (SPANK cannot tell a plugin the spool directory). */
#define MC_CACHE_DEFAULT_PATH "/var/spool/slurmd/memcore-node-facts"
/* Debian's slurmd package makes this spool directory instead. */
#define MC_CACHE_DEBIAN_PATH "/var/lib/slurm/slurmd/memcore-node-facts"

/*
 * The cache file when plugstack.conf names none: MC_CACHE_DEFAULT_PATH
 * when /var/spool/slurmd exists, else MC_CACHE_DEBIAN_PATH when
 * /var/lib/slurm/slurmd exists, else MC_CACHE_DEFAULT_PATH. slurmd and
 * slurmstepd on one node see the same directories, so they agree.
 */
const char *mc_cache_default_path(void);

struct mc_cache_header {
	char magic[8];			/* MC_CACHE_MAGIC */
	uint32_t format;		/* MC_CACHE_FORMAT */
	uint32_t header_bytes;		/* sizeof(struct mc_cache_header) */
	uint64_t facts_bytes;		/* sizeof(struct mc_node_facts) */
	uint64_t checksum;		/* FNV-1a 64 of header (this field 0)
					 * and facts */
	int64_t written_at;		/* time(2) of writing */
	/* The topology file's size and mtime when the facts were read from
	 * it (0 for "live"): an XML edited in place makes the cache stale. */
	uint64_t source_size;
	int64_t source_mtime_ns;
	char version[MC_CACHE_VERSION_MAX];	/* MC_VERSION of the writer */
	char host[MC_CACHE_HOST_MAX];		/* gethostname(2) */
};

/*
 * Write f to path (temporary file in the same directory, fsync, rename),
 * mode 0644. f->source names the topology ("live" or the XML path); an
 * XML's size and mtime are recorded. Returns 0, or -1 with err set
 * ("cache PATH: reason"); a failed write leaves no temporary file and the
 * previous cache, if any, in place.
 */
int mc_cache_write(const char *path, const struct mc_node_facts *f,
		   char *err, size_t errlen);

/*
 * Read the cache at path into f. want_source is the topology the caller's
 * policy names ("live" for the live machine, else the TopologyFile path),
 * or NULL to accept any source (memcore audit --cache). Refused, with -1
 * and err set ("cache PATH: reason"), f zeroed: a missing or unreadable
 * file, one not owned by root or the caller or writable by others, a
 * wrong size, magic or format, another memcore version, another host, a
 * bad checksum, another topology source, or a topology file changed since.
 * hdr, when not NULL, receives the header (valid only on success).
 */
int mc_cache_read(const char *path, const char *want_source,
		  struct mc_node_facts *f, struct mc_cache_header *hdr,
		  char *err, size_t errlen);

/* The checksum mc_cache_write stores for this header and these facts
 * (the header's checksum field is ignored). For tests and tools. */
uint64_t mc_cache_checksum(const struct mc_cache_header *h,
			   const struct mc_node_facts *f);

/*
 * FNV-1a 64 over 64-bit words, then the tail bytes, continuing from h
 * (MC_CACHE_HASH_INIT to start): the checksum of this cache, for other
 * caches of the memcore command (cli/mc_shape_cache.c) too.
 */
#define MC_CACHE_HASH_INIT 0xcbf29ce484222325ULL
uint64_t mc_cache_hash(uint64_t h, const void *data, size_t len);

/* "live" for an empty TopologyFile, else the path: the source a cache
 * must carry to serve a policy with this TopologyFile. */
const char *mc_cache_source_of(const char *topology_file);

#endif
