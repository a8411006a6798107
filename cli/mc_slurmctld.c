/*
 * mc_slurmctld.c - the partition's nodes from slurmctld (libslurm), for
 * memcore check and memcore audit (see mc_slurmctld.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

#include "mc_parse.h"
#include "mc_slurmctld.h"
#include "mc_slurm_compat.h"
#include "mc_util.h"

#define MC_SLURM_CONF_DEFAULT "/etc/slurm/slurm.conf"

const char *mc_ctld_conf(void)
{
	const char *conf = getenv("SLURM_CONF");

	if (!conf || !*conf)
		conf = MC_SLURM_CONF_DEFAULT;
	return access(conf, R_OK) == 0 ? conf : NULL;
}

static bool initialized;

static void ctld_init(const char *conf)
{
	if (!initialized) {
		slurm_init(conf);
		initialized = true;
	}
}

/* The partition's name, the default one when name is NULL, or NULL with
 * err naming the partitions that exist. */
static const partition_info_t *find_partition(const partition_info_msg_t *pm,
					      const char *name, char *err,
					      size_t errlen)
{
	size_t used = 0;

	for (uint32_t i = 0; i < pm->record_count; i++) {
		const partition_info_t *pi = &pm->partition_array[i];

		if (!pi->name)
			continue;
		if (name ? !strcmp(pi->name, name)
			 : (pi->flags & PART_FLAG_DEFAULT) != 0)
			return pi;
	}
	if (name)
		mc_appendf(err, errlen, &used, "--partition=%s: no such "
			   "partition (partitions:", name);
	else
		mc_appendf(err, errlen, &used, "no default partition in "
			   "slurm.conf: give --partition (partitions:");
	for (uint32_t i = 0; i < pm->record_count; i++)
		if (pm->partition_array[i].name)
			mc_appendf(err, errlen, &used, "%s %s", i ? "," : "",
				   pm->partition_array[i].name);
	mc_appendf(err, errlen, &used, ")");
	return NULL;
}

static void record_of(const node_info_t *ni, struct mc_node_record *r)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", ni->name);
	r->ram_bytes = ni->real_memory << 20;	/* MB */
	r->cores = (uint32_t)ni->sockets * ni->cores;
	r->threads_per_core = ni->threads ? ni->threads : 1;
	if (mc_gres_gpus(ni->gres, &r->gpus, r->gpu_type,
			 sizeof(r->gpu_type)) < 0)
		r->gpus = 0;
}

int mc_ctld_load(const char *partition, bool all, struct mc_ctld_nodes *out,
		 char *err, size_t errlen)
{
	const char *conf = mc_ctld_conf();
	partition_info_msg_t *pm = NULL;
	node_info_msg_t *nm = NULL;
	const partition_info_t *pi = NULL;
	mc_hostlist_t hl = NULL;
	int rc = MC_CTLD_ERROR;

	memset(out, 0, sizeof(*out));
	if (!conf) {
		snprintf(err, errlen, "no slurm.conf to read (SLURM_CONF or %s)",
			 MC_SLURM_CONF_DEFAULT);
		return MC_CTLD_ERROR;
	}
	ctld_init(conf);
	if (slurm_load_partitions((time_t)0, &pm, SHOW_ALL) != SLURM_SUCCESS ||
	    slurm_load_node((time_t)0, &nm, SHOW_ALL) != SLURM_SUCCESS) {
		snprintf(err, errlen, "cannot reach slurmctld (slurm.conf %s): "
			 "%s", conf, slurm_strerror(errno));
		rc = MC_CTLD_UNREACHABLE;
		goto out;
	}
	if (!all) {
		pi = find_partition(pm, partition, err, errlen);
		if (!pi) {
			rc = MC_CTLD_NO_PARTITION;
			goto out;
		}
		snprintf(out->partition, sizeof(out->partition), "%s",
			 pi->name);
		hl = slurm_hostlist_create(pi->nodes ? pi->nodes : "");
		if (!hl) {
			snprintf(err, errlen, "partition %s: cannot read its "
				 "node list '%s'", pi->name,
				 pi->nodes ? pi->nodes : "");
			goto out;
		}
	}
	out->node = calloc(nm->record_count ? nm->record_count : 1,
			   sizeof(*out->node));
	if (!out->node) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < nm->record_count; i++) {
		const node_info_t *ni = &nm->node_array[i];

		if (!ni->name || (hl && slurm_hostlist_find(hl, ni->name) < 0))
			continue;
		record_of(ni, &out->node[out->n++]);
	}
	if (!out->n) {
		snprintf(err, errlen, "partition %s has no nodes",
			 out->partition);
		goto out;
	}
	rc = 0;
out:
	if (hl)
		slurm_hostlist_destroy(hl);
	if (nm)
		slurm_free_node_info_msg(nm);
	if (pm)
		slurm_free_partition_info_msg(pm);
	if (rc)
		mc_ctld_free(out);
	return rc;
}

void mc_ctld_free(struct mc_ctld_nodes *nodes)
{
	free(nodes->node);
	nodes->node = NULL;
	nodes->n = 0;
}

const char *mc_ctld_hostlist(const struct mc_ctld_nodes *nodes,
			     const size_t *shape_of, size_t shape, char *buf,
			     size_t buflen)
{
	mc_hostlist_t hl = slurm_hostlist_create(NULL);

	buf[0] = '\0';
	if (!hl)
		return buf;
	for (size_t i = 0; i < nodes->n; i++)
		if (shape_of[i] == shape)
			slurm_hostlist_push_host(hl, nodes->node[i].name);
	/* In every release since 22.05 (the _malloc form is gone in 24.11).
	 * A list longer than buf is cut, and says so. */
	if (slurm_hostlist_ranged_string(hl, buflen, buf) < 0 && buflen > 4)
		snprintf(buf + buflen - 4, 4, "...");
	slurm_hostlist_destroy(hl);
	return buf;
}
