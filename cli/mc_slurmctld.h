/*
 * mc_slurmctld.h - a partition's nodes as slurmctld knows them, through
 * libslurm (the calls sinfo and scontrol make). Only the memcore command
 * links libslurm; memcore.so never does (tests/cli/test_build.sh).
 */
#ifndef MC_SLURMCTLD_H
#define MC_SLURMCTLD_H

#include <stdbool.h>
#include <stddef.h>

#include "mc_config.h"
#include "mc_shapes.h"
#include "mc_slurm_alloc.h"

/* What mc_ctld_load returns besides 0. */
enum {
	MC_CTLD_UNREACHABLE = -3,	/* slurmctld did not answer */
	MC_CTLD_NO_PARTITION = -2,	/* no such partition (err lists them) */
	MC_CTLD_ERROR = -1,		/* anything else (err says what) */
};

/* The nodes of one partition, or of the whole cluster. */
struct mc_ctld_nodes {
	char partition[MC_PARTITION_NAME_MAX];	/* "" for the whole cluster */
	size_t n;
	struct mc_node_record *node;	/* n records, malloc'd */
	/* The partition's memory and CPU defaults as slurmctld resolved
	 * them (PartitionName=DEFAULT and Include already applied): its
	 * DefMemPerCPU/DefMemPerNode/MaxMemPer*, JobDefaults (DefCpuPerGPU,
	 * DefMemPerGPU), each else slurm.conf's global one. */
	struct mc_slurm_part part;
	/*
	 * Nodes of the partition that memcore cannot judge: not in
	 * slurmctld's node list (powered-down State=CLOUD nodes are hidden
	 * unless PrivateData=cloud), or a Gres it cannot read. unjudged is
	 * their ranged hostlist (cut, with "...", when long).
	 */
	size_t n_unjudged;
	char unjudged[512];
	char unjudged_why[160];
	/*
	 * An upper bound of any one unjudged node: the partition's TRES
	 * (scontrol show partition TRES=, which counts the hidden nodes too)
	 * less the nodes seen: all their memory, GPUs and CPUs together, and
	 * their one GPU type. ok false when it cannot be had (no TRES, GPUs
	 * of several types or some untyped among them).
	 */
	bool hidden_bound_ok;
	struct mc_node_record hidden_bound;
	/* Read from the login host's shape cache (cli/mc_shape_cache.h),
	 * which can be stale in the ways it lists: an answer from it that
	 * would refuse must be confirmed with a fresh load (fresh). */
	bool from_cache;
	/* The job picks among these nodes in a way memcore does not model
	 * ("--constraint", mc_node_pick.h): they are a superset of its
	 * candidates. "" when not. */
	char pick_unmodelled[32];
};

/*
 * The slurm.conf that libslurm would read: SLURM_CONF when set, else
 * /etc/slurm/slurm.conf; NULL when that file cannot be read (libslurm
 * exits the process on a missing slurm.conf, so it is never called then).
 */
const char *mc_ctld_conf(void);

/* The slurm.conf path libslurm would read (SLURM_CONF, else
 * /etc/slurm/slurm.conf), readable or not: for messages. */
const char *mc_ctld_conf_path(void);

/*
 * libslurm initialised from conf, once per process. A conf libslurm's
 * parser cannot read ends the process there (libslurm's fatal()): memcore
 * then says "memcore: slurm.conf P: libslurm cannot read it (its parser's
 * message is above)" and exits MC_CTLD_EXIT_UNREADABLE, the usage status.
 */
#define MC_CTLD_EXIT_UNREADABLE 2	/* MC_EXIT_USAGE of cli.h */
void mc_ctld_init(const char *conf);

/*
 * Load the nodes of partition (NULL: slurm.conf's default partition; with
 * all, every node of the cluster and partition is ignored) into out:
 * from the shape cache when slurmctld says it is valid, unless fresh
 * (then always from slurmctld; the cache is written again either way).
 * Returns 0, or one of the MC_CTLD_* codes with err set:
 * "cannot reach slurmctld (slurm.conf /etc/slurm/slurm.conf): ...",
 * "--partition=gpx: no such partition (partitions: gpu, debug)".
 */
int mc_ctld_load(const char *partition, bool all, bool fresh,
		 struct mc_ctld_nodes *out, char *err, size_t errlen);

void mc_ctld_free(struct mc_ctld_nodes *nodes);

/*
 * The default partition's name (Default=YES, as slurmctld resolved it)
 * into buf. Returns 0, or one of the MC_CTLD_* codes with err set.
 */
int mc_ctld_default_partition(char *buf, size_t len, char *err,
			      size_t errlen);

/*
 * Partition name as slurmctld knows it (NULL: the default one) into buf:
 * 0, or MC_CTLD_NO_PARTITION with err "--partition=gpx: no such partition
 * (partitions: gpu, debug)", or another MC_CTLD_* code.
 */
int mc_ctld_find_partition(const char *name, char *buf, size_t len,
			   char *err, size_t errlen);

/*
 * The nodes whose shape_of[] is shape, as Slurm's ranged hostlist
 * ("gpu[01-12]"), in buf. Returns buf.
 */
const char *mc_ctld_hostlist(const struct mc_ctld_nodes *nodes,
			     const size_t *shape_of, size_t shape, char *buf,
			     size_t buflen);

#endif
