/*
 * mc_node_pick.h - which of a partition's nodes a job may be given, as
 * its own options say: sbatch/salloc/srun -w (--nodelist) and -x
 * (--exclude), each a Slurm hostlist ("gpu[01-04],gpu07"). Slurm gives a
 * -w job every node it lists and never a node -x names (sbatch(1)), so
 * memcore check --partition judges only those nodes: a job that keeps
 * itself off the nodes it does not fit is not refused for them.
 *
 * Node choices memcore does not model (--constraint's features, a
 * --nodefile, a -w naming a file) are said in `unmodelled`: the
 * partition's nodes are then a superset of the job's, and a job that
 * fits some of them is let through (the launch check judges the node it
 * gets).
 */
#ifndef MC_NODE_PICK_H
#define MC_NODE_PICK_H

#include <stdbool.h>
#include <stddef.h>

#include "mc_ctld_nodes.h"

#define MC_NODE_PICK_MAX 1024

struct mc_node_pick {
	char nodelist[MC_NODE_PICK_MAX];	/* -w hostlist; "" none */
	char exclude[MC_NODE_PICK_MAX];		/* -x hostlist; "" none */
	/* The first option that picks nodes in a way not modelled
	 * ("--constraint"), else "". */
	char unmodelled[32];
};

/*
 * Take a job option into pick when it is one of the node choices above:
 * name is the option's long name without "--" ("nodelist", "exclude",
 * "constraint", "nodefile"), value as the user gave it. Returns true
 * when the option was one of them (taken), false otherwise. A value too
 * long for the buffers, or a -w naming a file (a '/'), is taken as
 * unmodelled.
 */
bool mc_node_pick_option(struct mc_node_pick *pick, const char *name,
			 const char *value);

/*
 * Keep in nodes only those the job may get: those in pick->nodelist
 * when set, less those in pick->exclude. The unjudged (hidden) nodes
 * are narrowed the same way when their list is whole (not cut with
 * "..."). pick->unmodelled goes to nodes->pick_unmodelled; a hostlist
 * libslurm cannot read is not applied and is named there instead.
 */
void mc_node_pick_apply(struct mc_ctld_nodes *nodes,
			const struct mc_node_pick *pick);

#endif
