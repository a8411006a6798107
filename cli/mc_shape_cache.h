/*
 * mc_shape_cache.h - the partition's nodes (struct mc_ctld_nodes) kept on
 * the login host between two `memcore check --partition` calls, and
 * revalidated by slurmctld's own update times: slurm_load_partitions()
 * and slurm_load_node() take the last_update of the message the cache was
 * made from, and slurmctld answers SLURM_NO_CHANGE_IN_DATA (a small
 * return-code message) when nothing changed since (slurm.h, 22.05:
 * "update_time - time of current configuration data"; slurmctld's
 * _slurm_rpc_dump_nodes/_slurm_rpc_dump_partitions compare it with
 * last_node_update/last_part_update). A burst of submissions then costs
 * slurmctld two small answers each instead of the whole node table
 * (10,000 nodes: 17 MB and 140 ms per call without the cache).
 *
 * File: one per user, slurm.conf and partition (or the whole cluster), in
 * the directory MEMCORE_CACHE_DIR (the word "none": no cache), else
 * $XDG_RUNTIME_DIR/memcore when XDG_RUNTIME_DIR is the caller's own, else
 * /tmp/memcore-<uid>. The directory must
 * be a real directory (no symlink) owned by the caller with mode 0700, the
 * file a regular file owned by the caller and written by nobody else;
 * otherwise the cache is not used (one line says why) and the nodes are
 * loaded from slurmctld as without it. Format: a header (magic, format,
 * struct sizes, the key: slurm.conf's path, inode, size and mtime, the
 * memcore executable's identity and the partition) and the records as
 * this build lays them out, with an FNV-1a 64 checksum over all of it; at
 * most MC_SHAPE_CACHE_MAX_NODES records; a directory holding more than 64
 * such files keeps only the one just written. A file that does not match in
 * every one is said so on stderr ("memcore: shape cache FILE: REASON:
 * loading the nodes from slurmctld"), removed, and replaced by a fresh
 * load: a damaged cache costs one full load, never a wrong answer.
 * Written under a temporary name in the same directory, then renamed.
 */
#ifndef MC_SHAPE_CACHE_H
#define MC_SHAPE_CACHE_H

#include <stdbool.h>
#include <time.h>

#include <slurm/slurm.h>

#include "mc_slurmctld.h"

/* Bounds the file: 1,000,000 nodes is several times today's largest
 * clusters (about 136 MB of records at most). */
#define MC_SHAPE_CACHE_MAX_NODES 1000000u

enum { MC_SHAPE_CACHE_HIT = 0, MC_SHAPE_CACHE_MISS = 1 };

/*
 * The cached nodes of partition (NULL: the default one; all: the whole
 * cluster) for slurm.conf conf, revalidated with slurmctld. libslurm must
 * be initialised (slurm_init). Returns MC_SHAPE_CACHE_HIT with *out
 * filled (free it with mc_ctld_free), or MC_SHAPE_CACHE_MISS with *out
 * empty; then *pm and *nm are the messages slurmctld sent in full while
 * revalidating (the caller's to use and free), or NULL where it must load
 * them itself.
 */
int mc_shape_cache_get(const char *conf, const char *partition, bool all,
		       struct mc_ctld_nodes *out, partition_info_msg_t **pm,
		       node_info_msg_t **nm);

/*
 * Keep nodes, made from a node message of node_update and a partition
 * message of part_update (their last_update), for the next call with the
 * same conf, partition and all. A cache that cannot be written is no
 * error: the next call loads from slurmctld.
 */
void mc_shape_cache_put(const char *conf, const char *partition, bool all,
			const struct mc_ctld_nodes *nodes, time_t node_update,
			time_t part_update);

#endif
