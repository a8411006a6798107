/*
 * mc_ctld_nodes.c - a partition's nodes as slurmctld describes them (see
 * mc_ctld_nodes.h).
 */
#include <stdlib.h>

#include "mc_ctld_nodes.h"

void mc_ctld_free(struct mc_ctld_nodes *nodes)
{
	free(nodes->node);
	nodes->node = NULL;
	nodes->n = 0;
}
