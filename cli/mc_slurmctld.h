/*
 * mc_slurmctld.h - a partition's nodes as slurmctld knows them, through
 * libslurm (the calls sinfo and scontrol make). Only the memcore command
 * links libslurm; memcore.so never does (tests/cli/test_build.sh).
 */
#ifndef MC_SLURMCTLD_H
#define MC_SLURMCTLD_H

#include <stdbool.h>
#include <stddef.h>

#include "mc_ctld_nodes.h"

/* What mc_ctld_load returns besides 0. */
enum {
	MC_CTLD_UNREACHABLE = -3,	/* slurmctld did not answer */
	MC_CTLD_NO_PARTITION = -2,	/* no such partition (err lists them) */
	MC_CTLD_ERROR = -1,		/* anything else (err says what) */
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
