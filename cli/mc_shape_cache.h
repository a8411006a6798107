/*
 * mc_shape_cache.h - the partition's nodes (struct mc_ctld_nodes) kept on
 * the login host between two `memcore check --partition` calls, and
 * revalidated by slurmctld's own update times of what node SHAPES come
 * from: slurm_load_partitions() and slurm_load_ctl_conf() take the
 * last_update of the messages the cache was made from, and slurmctld
 * answers SLURM_NO_CHANGE_IN_DATA (a small return-code message) when
 * nothing changed since (slurm.h, 22.05: "update_time - time of current
 * configuration data"; slurmctld compares it with last_part_update and
 * slurm_conf.last_update). Not the node table's time (slurm_load_node's
 * last_update): slurmctld bumps it on every node state change, i.e. every
 * job that starts or ends anywhere, so on a busy cluster it would mean a
 * full load on each call (10,000 nodes: 16.6 MB and 120 ms).
 *
 * What the two times catch: scontrol reconfigure and a slurmctld restart
 * (both; every NodeName= line read again), scontrol update partition, a
 * partition whose node list changes; an edit of the login host's
 * slurm.conf changes the key (below). What they MISS, so that the cache
 * can be stale until one of those: scontrol update nodename=X Gres=...
 * (and ActiveFeatures/AvailableFeatures), a node that registers with
 * other resources than slurm.conf's (a slurmd restarted on other
 * hardware, SlurmdParameters=config_overrides), dynamic nodes created or
 * deleted (scontrol create/delete node) where no partition's node list
 * changes, and which CLOUD nodes are powered up (hidden from the node
 * API without PrivateData=cloud). A stale cache can only be acted on as
 * far as a let-through goes: the caller (memcore check) confirms every
 * refusal built from the cache (mc_ctld_nodes.from_cache) with a fresh
 * load before it says it, and a job let through on stale shapes is still
 * judged by the plugin at launch.
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

#include "mc_ctld_nodes.h"

/* Bounds the file: 1,000,000 nodes is several times today's largest
 * clusters (about 136 MB of records at most). */
#define MC_SHAPE_CACHE_MAX_NODES 1000000u

enum { MC_SHAPE_CACHE_HIT = 0, MC_SHAPE_CACHE_MISS = 1 };

/*
 * The cached nodes of partition (NULL: the default one; all: the whole
 * cluster) for slurm.conf conf, revalidated with slurmctld. libslurm must
 * be initialised (slurm_init). Returns MC_SHAPE_CACHE_HIT with *out
 * filled (free it with mc_ctld_free), or MC_SHAPE_CACHE_MISS with *out
 * empty; then *pm and *cc are the messages slurmctld sent in full while
 * revalidating (the caller's to use and free), or NULL where it must load
 * them itself. On a hit out->from_cache is true.
 */
int mc_shape_cache_get(const char *conf, const char *partition, bool all,
		       struct mc_ctld_nodes *out, partition_info_msg_t **pm,
		       slurm_conf_t **cc);

/*
 * Keep nodes, made from a configuration of conf_update and a partition
 * message of part_update (their last_update), for the next call with the
 * same conf, partition and all. A cache that cannot be written is no
 * error: the next call loads from slurmctld.
 */
void mc_shape_cache_put(const char *conf, const char *partition, bool all,
			const struct mc_ctld_nodes *nodes, time_t conf_update,
			time_t part_update);

#endif
