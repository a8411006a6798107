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
};

/*
 * The slurm.conf that libslurm would read: SLURM_CONF when set, else
 * /etc/slurm/slurm.conf; NULL when that file cannot be read (libslurm
 * exits the process on a missing slurm.conf, so it is never called then).
 */
const char *mc_ctld_conf(void);

/*
 * Load the nodes of partition (NULL: slurm.conf's default partition; with
 * all, every node of the cluster and partition is ignored) into out.
 * Returns 0, or one of the MC_CTLD_* codes with err set:
 * "cannot reach slurmctld (slurm.conf /etc/slurm/slurm.conf): ...",
 * "--partition=gpx: no such partition (partitions: gpu, debug)".
 */
int mc_ctld_load(const char *partition, bool all, struct mc_ctld_nodes *out,
		 char *err, size_t errlen);

void mc_ctld_free(struct mc_ctld_nodes *nodes);

/*
 * The nodes whose shape_of[] is shape, as Slurm's ranged hostlist
 * ("gpu[01-12]"), in buf. Returns buf.
 */
const char *mc_ctld_hostlist(const struct mc_ctld_nodes *nodes,
			     const size_t *shape_of, size_t shape, char *buf,
			     size_t buflen);

#endif
