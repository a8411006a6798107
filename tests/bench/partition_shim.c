/*
 * partition_shim.c - slurmctld's three answers to `memcore check
 * --partition` made in-process, for an LD_PRELOAD into the memcore command
 * (tests/bench/partition_shim.sh): what memcore itself costs on a cold
 * call, without a slurmctld and without libslurm's RPC and unpack of the
 * node table (which it replaces).
 *
 * 10,000 nodes in the three shapes of tests/bench/ctld_partition.sh (8 x
 * h100, 4 x a100, 8 x l40s), all in partition gpu. slurm_load_partitions
 * and slurm_load_ctl_conf answer "no change" to the update time 1000 they
 * give, so a shape cache written from them is a hit next time. For
 * checking that answers stay the same in other cases:
 *   FAKE_SKIP=k   every k-th node left out of the node table (hidden)
 *   FAKE_BAD=i    node i with a Gres memcore cannot read
 *   FAKE_SHARD=1  every 1000th node (7th of each) with shards and MPS
 *   FAKE_TRES=... the partition's TRES string (hidden nodes' bound)
 *   FAKE_LONG=NAME node 1 named NAME (in the partition's list)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

#define N 10000

static char *xs(const char *s) { return strdup(s); }

int slurm_load_node(time_t t, node_info_msg_t **resp, uint16_t flags)
{
	node_info_msg_t *m = calloc(1, sizeof(*m));
	int n1 = N / 3, n2 = 2 * N / 3;
	const char *e = getenv("FAKE_SKIP");	/* every k-th node hidden */
	int skip = e ? atoi(e) : 0, j = 0;
	const char *b = getenv("FAKE_BAD");	/* node number with bad gres */
	int bad = b ? atoi(b) : 0;

	m->last_update = 1000;
	m->record_count = N;
	m->node_array = calloc(N, sizeof(node_info_t));
	for (int i = 0; i < N; i++) {
		node_info_t *ni = &m->node_array[j];
		char name[256];
		int k = i + 1;

		if (skip && k % skip == 0)
			continue;
		j++;

		snprintf(name, sizeof(name), "cn%05d", k);
		if (k == 1 && getenv("FAKE_LONG"))
			snprintf(name, sizeof(name), "%s", getenv("FAKE_LONG"));
		ni->name = xs(name);
		ni->node_hostname = xs(name);
		ni->node_addr = xs(name);
		ni->sockets = 2;
		ni->boards = 1;
		if (k <= n1) {
			ni->cores = 56; ni->threads = 2; ni->real_memory = 2048000;
			ni->gres = xs("gpu:h100:8");
		} else if (k <= n2) {
			ni->cores = 32; ni->threads = 1; ni->real_memory = 1024000;
			ni->gres = xs("gpu:a100:4");
		} else {
			ni->cores = 48; ni->threads = 2; ni->real_memory = 1536000;
			ni->gres = xs("gpu:l40s:8");
		}
		if (k == bad) {
			free(ni->gres);
			ni->gres = xs("gpu:h100:x8");
		}
		if (k % 1000 == 7 && getenv("FAKE_SHARD")) {
			free(ni->gres);
			ni->gres = xs("gpu:h100:8(S:0-1),shard:h100:64,mps:800");
		}
		ni->cpus = ni->sockets * ni->cores * ni->threads;
		ni->partitions = xs("gpu");
		ni->arch = xs("x86_64");
		ni->os = xs("Linux");
	}
	m->record_count = j;
	*resp = m;
	return SLURM_SUCCESS;
}

void slurm_free_node_info_msg(node_info_msg_t *m)
{
	if (!m)
		return;
	for (uint32_t i = 0; i < m->record_count; i++) {
		node_info_t *ni = &m->node_array[i];
		free(ni->name); free(ni->node_hostname); free(ni->node_addr);
		free(ni->gres); free(ni->partitions); free(ni->arch); free(ni->os);
	}
	free(m->node_array);
	free(m);
}

int slurm_load_partitions(time_t t, partition_info_msg_t **resp, uint16_t f)
{
	partition_info_msg_t *m;

	if (t == 1000) {	/* the cache's: nothing changed */
		errno = SLURM_NO_CHANGE_IN_DATA;
		*resp = NULL;
		return SLURM_ERROR;
	}
	m = calloc(1, sizeof(*m));
	m->last_update = 1000;
	m->record_count = 1;
	m->partition_array = calloc(1, sizeof(partition_info_t));
	m->partition_array[0].name = xs("gpu");
	if (getenv("FAKE_LONG")) {
		char b[400];
		snprintf(b, sizeof(b), "%s,cn[00002-10000]", getenv("FAKE_LONG"));
		m->partition_array[0].nodes = xs(b);
	} else
		m->partition_array[0].nodes = xs("cn[00001-10000]");
	m->partition_array[0].flags = PART_FLAG_DEFAULT;
	m->partition_array[0].def_mem_per_cpu = NO_VAL64;
	m->partition_array[0].max_mem_per_cpu = NO_VAL64;
	if (getenv("FAKE_TRES"))
		m->partition_array[0].tres_fmt_str = xs(getenv("FAKE_TRES"));
	*resp = m;
	return SLURM_SUCCESS;
}

void slurm_free_partition_info_msg(partition_info_msg_t *m)
{
	if (!m)
		return;
	free(m->partition_array[0].name);
	free(m->partition_array[0].nodes);
	free(m->partition_array);
	free(m);
}

int slurm_load_ctl_conf(time_t t, slurm_conf_t **resp)
{
	slurm_conf_t *c;

	if (t == 1000) {
		errno = SLURM_NO_CHANGE_IN_DATA;
		*resp = NULL;
		return SLURM_ERROR;
	}
	c = calloc(1, sizeof(*c));
	c->last_update = 1000;
	c->def_mem_per_cpu = 0;
	c->max_mem_per_cpu = 0;
	*resp = c;
	return SLURM_SUCCESS;
}

void slurm_free_ctl_conf(slurm_conf_t *c)
{
	free(c);
}

/* Its name from 26.05 on (compat/mc_slurm_compat.h calls whichever is
 * there); not declared by older headers. */
void slurm_free_conf(slurm_conf_t *c);
void slurm_free_conf(slurm_conf_t *c)
{
	free(c);
}
