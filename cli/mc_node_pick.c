/*
 * mc_node_pick.c - which of a partition's nodes a job may be given (-w,
 * -x); see mc_node_pick.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/slurm.h>

#include "mc_node_pick.h"
#include "mc_slurm_compat.h"
#include "mc_util.h"

static void unmodelled(struct mc_node_pick *pick, const char *name)
{
	if (!pick->unmodelled[0])
		snprintf(pick->unmodelled, sizeof(pick->unmodelled), "--%s",
			 name);
}

bool mc_node_pick_option(struct mc_node_pick *pick, const char *name,
			 const char *value)
{
	char *to;

	if (!strcmp(name, "nodelist"))
		to = pick->nodelist;
	else if (!strcmp(name, "exclude"))
		to = pick->exclude;
	else if (!strcmp(name, "constraint") || !strcmp(name, "nodefile")) {
		unmodelled(pick, name);
		return true;
	} else
		return false;
	/* A file of names (sbatch reads a '/' as one) is not read here;
	 * nor is a list longer than the buffer. */
	if (strchr(value, '/') ||
	    (size_t)snprintf(to, MC_NODE_PICK_MAX, "%s", value) >=
	    MC_NODE_PICK_MAX) {
		to[0] = '\0';
		unmodelled(pick, name);
	}
	return true;
}

/* Whether name is in hostlist hl (callers pass only a list they have). */
static bool in(mc_hostlist_t hl, const char *name)
{
	return slurm_hostlist_find(hl, name) >= 0;
}

/* The whole unjudged list narrowed as the nodes were. */
static void pick_unjudged(struct mc_ctld_nodes *nodes, mc_hostlist_t want,
			  mc_hostlist_t drop)
{
	size_t len = strlen(nodes->unjudged);
	mc_hostlist_t all, keep;
	char *name;

	if (!nodes->n_unjudged ||
	    (len >= 3 && !strcmp(nodes->unjudged + len - 3, "...")))
		return;
	all = slurm_hostlist_create(nodes->unjudged);
	keep = slurm_hostlist_create(NULL);
	if (!all || !keep)
		goto out;
	nodes->n_unjudged = 0;
	while ((name = slurm_hostlist_shift(all))) {
		if ((!want || in(want, name)) && (!drop || !in(drop, name))) {
			slurm_hostlist_push_host(keep, name);
			nodes->n_unjudged++;
		}
		free(name);
	}
	nodes->unjudged[0] = '\0';
	if (nodes->n_unjudged)
		slurm_hostlist_ranged_string(keep, sizeof(nodes->unjudged),
					     nodes->unjudged);
out:
	if (all)
		slurm_hostlist_destroy(all);
	if (keep)
		slurm_hostlist_destroy(keep);
}

void mc_node_pick_apply(struct mc_ctld_nodes *nodes,
			const struct mc_node_pick *pick)
{
	mc_hostlist_t want = NULL, drop = NULL;
	size_t k = 0;

	snprintf(nodes->pick_unmodelled, sizeof(nodes->pick_unmodelled), "%s",
		 pick->unmodelled);
	if (pick->nodelist[0] &&
	    !(want = slurm_hostlist_create(pick->nodelist)))
		snprintf(nodes->pick_unmodelled,
			 sizeof(nodes->pick_unmodelled), "--nodelist");
	if (pick->exclude[0] &&
	    !(drop = slurm_hostlist_create(pick->exclude)))
		snprintf(nodes->pick_unmodelled,
			 sizeof(nodes->pick_unmodelled), "--exclude");
	if (want || drop) {
		for (size_t i = 0; i < nodes->n; i++) {
			const char *name = nodes->node[i].name;

			if ((!want || in(want, name)) &&
			    (!drop || !in(drop, name)))
				nodes->node[k++] = nodes->node[i];
		}
		nodes->n = k;
		pick_unjudged(nodes, want, drop);
	}
	if (want)
		slurm_hostlist_destroy(want);
	if (drop)
		slurm_hostlist_destroy(drop);
}
