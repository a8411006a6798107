/*
 * mc_slurmctld.c - the partition's nodes from slurmctld (libslurm), for
 * memcore check and memcore audit (see mc_slurmctld.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

#include "mc_parse.h"
#include "mc_shape_cache.h"
#include "mc_slurmctld.h"
#include "mc_slurm_compat.h"
#include "mc_util.h"

#define MC_SLURM_CONF_DEFAULT "/etc/slurm/slurm.conf"

const char *mc_ctld_conf_path(void)
{
	const char *conf = getenv("SLURM_CONF");

	return conf && *conf ? conf : MC_SLURM_CONF_DEFAULT;
}

const char *mc_ctld_conf(void)
{
	const char *conf = mc_ctld_conf_path();

	return access(conf, R_OK) == 0 ? conf : NULL;
}

static bool initialized;

/*
 * libslurm's parser ends the process (fatal(), exit(1)) on a slurm.conf it
 * cannot read, before memcore can say anything or finish its --json.
 * exit() still runs atexit handlers: while slurm_init() runs, one says
 * what happened and ends with memcore's usage status instead (memcore
 * runs no other program and forks no child to parse it first).
 */
static const char *initializing;	/* the slurm.conf being parsed */

static void parse_failed(void)
{
	if (!initializing)
		return;
	fflush(stdout);
	fprintf(stderr, "memcore: slurm.conf %s: libslurm cannot read it "
		"(its parser's message is above)\n", initializing);
	_exit(MC_CTLD_EXIT_UNREADABLE);
}

void mc_ctld_init(const char *conf)
{
	static bool registered;

	if (initialized)
		return;
	if (!registered)
		registered = atexit(parse_failed) == 0;
	initializing = conf;
	slurm_init(conf);
	initializing = NULL;
	initialized = true;
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

/* A memory figure of slurm.conf: 0, NO_VAL64 and INFINITE64 are unset. */
static uint64_t mem_set(uint64_t v)
{
	return v == NO_VAL64 || v == INFINITE64 ? 0 : v;
}

/* DefCpuPerGPU / DefMemPerGPU of a JobDefaults list, where not set yet. */
static void job_defaults(void *list, struct mc_slurm_part *p)
{
	void *it;
	const job_defaults_t *d;

	if (!list || !(it = slurm_list_iterator_create(list)))
		return;
	while ((d = slurm_list_next(it))) {
		if (d->type == JOB_DEF_CPU_PER_GPU && !p->def_cpu_per_gpu)
			p->def_cpu_per_gpu = d->value > UINT32_MAX
				? UINT32_MAX : (uint32_t)d->value;
		else if (d->type == JOB_DEF_MEM_PER_GPU &&
			 !p->def_mem_per_gpu_mb)
			p->def_mem_per_gpu_mb = mem_set(d->value);
	}
	slurm_list_iterator_destroy(it);
}

/* MEM_PER_CPU marks a per-CPU figure; without it, per node. */
static void mem_pair(uint64_t v, uint64_t *per_cpu, uint64_t *per_node)
{
	if (!mem_set(v))
		return;
	if (v & MEM_PER_CPU) {
		if (!*per_cpu && !*per_node)
			*per_cpu = mem_set(v & ~MEM_PER_CPU);
	} else if (!*per_cpu && !*per_node) {
		*per_node = v;
	}
}

/*
 * The partition's defaults, then slurm.conf's for what it leaves unset
 * (slurmctld job_mgr.c: the partition's DefMemPer*, else the cluster's;
 * select/cons_tres: the partition's JobDefaults, else the cluster's).
 */
static void part_defaults(const partition_info_t *pi, const slurm_conf_t *c,
			  struct mc_slurm_part *p)
{
	uint64_t max_cpu = 0, max_node = 0;

	memset(p, 0, sizeof(*p));
	if (pi) {
		mem_pair(pi->def_mem_per_cpu, &p->def_mem_per_cpu_mb,
			 &p->def_mem_per_node_mb);
		mem_pair(pi->max_mem_per_cpu, &max_cpu, &max_node);
		job_defaults(pi->job_defaults_list, p);
		/* OverSubscribe=EXCLUSIVE, as partition_info.c prints it */
		p->exclusive = (pi->max_share & ~SHARED_FORCE) == 0;
	}
	if (c) {
		mem_pair(c->def_mem_per_cpu, &p->def_mem_per_cpu_mb,
			 &p->def_mem_per_node_mb);
		mem_pair(c->max_mem_per_cpu, &max_cpu, &max_node);
		job_defaults(c->job_defaults_list, p);
	}
	p->max_mem_per_cpu_mb = max_cpu;
	p->max_mem_per_node_mb = max_node;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The partition's nodes that the node list left out (hidden: powered-down
 * cloud nodes without PrivateData=cloud), into out->unjudged.
 */
static void hidden_nodes(const char *list, struct mc_ctld_nodes *out,
			 size_t bad, bool cut_names)
{
	mc_hostlist_t all = slurm_hostlist_create(list ? list : "");
	mc_hostlist_t hid = NULL;
	char **names = NULL;
	char *name;

	if (!all)
		goto out;
	/*
	 * The usual case (no hidden node): the nodes seen are distinct
	 * (slurmctld's node names are) and each is in the list (only those
	 * were kept), so a list of no more entries names no other node and
	 * nothing is unjudged. Expanding and sorting 10,000 names to find
	 * that out was a fifth of a cold check --partition's own work. Not
	 * when a node was left out for its Gres or its name was cut to fit
	 * a record: the comparison below counts those.
	 */
	if (!bad && !cut_names &&
	    slurm_hostlist_count(all) == (int)out->n)
		goto out;
	names = calloc(out->n ? out->n : 1, sizeof(*names));
	if (!names)
		goto out;
	for (size_t i = 0; i < out->n; i++)
		names[i] = out->node[i].name;
	qsort(names, out->n, sizeof(*names), cmp_name);
	while ((name = slurm_hostlist_shift(all))) {
		if (!bsearch(&name, names, out->n, sizeof(*names), cmp_name)) {
			if (!hid)
				hid = slurm_hostlist_create(NULL);
			if (hid)
				slurm_hostlist_push_host(hid, name);
			out->n_unjudged++;
		}
		free(name);
	}
	if (hid) {
		if (slurm_hostlist_ranged_string(hid, sizeof(out->unjudged),
						 out->unjudged) < 0)
			snprintf(out->unjudged + sizeof(out->unjudged) - 4, 4,
				 "...");
		snprintf(out->unjudged_why, sizeof(out->unjudged_why),
			 "not in slurmctld's node list (powered-down cloud "
			 "nodes are hidden without PrivateData=cloud)%s",
			 bad ? " or with a Gres memcore cannot read" : "");
	}
out:
	if (hid)
		slurm_hostlist_destroy(hid);
	if (all)
		slurm_hostlist_destroy(all);
	free(names);
}

/*
 * The bound of the unjudged nodes from the partition's TRES string
 * ("cpu=224,mem=4580304M,node=3,billing=224,gres/gpu=24,gres/gpu:h100=16,
 * gres/gpu:t4=8") less the nodes seen.
 */
static void hidden_bound(const char *tres, struct mc_ctld_nodes *out)
{
	struct mc_node_record *b = &out->hidden_bound;
	uint64_t cpu = 0, mem = 0, gpus = 0, seen_cpu = 0, seen_mem = 0;
	uint64_t seen_gpus = 0;
	char buf[1024], *save = NULL, err[64];
	size_t n_types = 0;

	memset(b, 0, sizeof(*b));
	out->hidden_bound_ok = false;
	if (!tres || !out->n_unjudged || strlen(tres) >= sizeof(buf))
		return;
	for (size_t i = 0; i < out->n; i++) {
		seen_cpu += (uint64_t)out->node[i].cores *
			    out->node[i].threads_per_core;
		seen_mem += out->node[i].ram_bytes >> 20;
		seen_gpus += out->node[i].gpus;
	}
	snprintf(buf, sizeof(buf), "%s", tres);
	for (char *kv = strtok_r(buf, ",", &save); kv;
	     kv = strtok_r(NULL, ",", &save)) {
		char *eq = strrchr(kv, '=');
		uint64_t v = 0;

		if (!eq)
			continue;
		*eq++ = '\0';
		if (!strcmp(kv, "mem")) {
			/* "4580304M" exact, or "4.37T" rounded: then 1%
			 * more keeps it a bound */
			if (mc_parse_size_rounded(eq, 1ULL << 20, &v, err,
						  sizeof(err)) < 0)
				return;
			mem = v >> 20;
			if (strchr(eq, '.'))
				mem += mem / 100 + 1;
		} else if (!strcmp(kv, "cpu")) {
			cpu = strtoull(eq, NULL, 10);
		} else if (!strcmp(kv, "gres/gpu")) {
			gpus = strtoull(eq, NULL, 10);
		} else if (!strncmp(kv, "gres/gpu:", 9)) {
			uint64_t seen = 0;

			v = strtoull(eq, NULL, 10);
			for (size_t i = 0; i < out->n; i++)
				if (!strcasecmp(out->node[i].gpu_type, kv + 9))
					seen += out->node[i].gpus;
			if (v > seen) {
				/* a type some unjudged node has */
				n_types++;
				snprintf(b->gpu_type, sizeof(b->gpu_type), "%s",
					 kv + 9);
				if (v - seen != gpus - seen_gpus)
					n_types = 2;	/* untyped ones too */
			}
		}
	}
	if (!cpu || !mem || cpu < seen_cpu || mem < seen_mem || n_types > 1 ||
	    (!n_types && gpus > seen_gpus && strchr(tres, ':')))
		return;
	snprintf(b->name, sizeof(b->name), "%s", "hidden");
	/* No gres/gpu in the TRES (it needs slurmdbd): their GPUs and type
	 * are unknown, so any count, any type ("*"), memory unknown. */
	if (!gpus && !n_types) {
		/* 0 GPUs is "unknown" to the rules: no GPU count decides */
		snprintf(b->gpu_type, sizeof(b->gpu_type), "%s", "*");
		gpus = seen_gpus;
	} else if (gpus < seen_gpus) {
		return;
	}
	b->ram_bytes = (mem - seen_mem) << 20;
	/* Cores enough that no core test decides: a bound must fit whatever
	 * one of the nodes fits, and the node rule G(w+1) + ReservedCores of
	 * all their GPUs together is no bound of one node's. Every CPU a
	 * core (threads per core 1): the most cores any CPU count gives. */
	b->cores = UINT32_MAX / 4;
	b->threads_per_core = 1;
	b->gpus = gpus - seen_gpus > UINT32_MAX ? UINT32_MAX
		  : (uint32_t)(gpus - seen_gpus);
	out->hidden_bound_ok = true;
}

/* false when its Gres cannot be read: the node cannot be judged (a
 * 0-GPU reading would refuse a job on its account). */
static bool record_of(const node_info_t *ni, struct mc_node_record *r,
		      bool *cut)
{
	size_t len = strlen(ni->name);

	memset(r, 0, sizeof(*r));
	/* As snprintf "%s" would (cut to fit, NUL-terminated), without its
	 * format parsing on each of 10,000 nodes. */
	if (len >= sizeof(r->name)) {
		*cut = true;
		len = sizeof(r->name) - 1;
	}
	memcpy(r->name, ni->name, len);
	r->ram_bytes = ni->real_memory << 20;	/* MB */
	r->cores = (uint32_t)ni->sockets * ni->cores;
	r->sockets = ni->sockets;
	r->threads_per_core = ni->threads ? ni->threads : 1;
	/* Shards and MPS per node, for a shared-GPU step's share (0 when
	 * unreadable). A Gres without the word has no such entry: most
	 * nodes, which then skip the parse. */
	if (ni->gres && strstr(ni->gres, "shard") &&
	    mc_gres_count(ni->gres, "shard", &r->shards) < 0)
		r->shards = 0;
	if (ni->gres && strstr(ni->gres, "mps") &&
	    mc_gres_count(ni->gres, "mps", &r->mps) < 0)
		r->mps = 0;
	return mc_gres_gpus(ni->gres, &r->gpus, r->gpu_type,
			    sizeof(r->gpu_type)) == 0;
}

int mc_ctld_load(const char *partition, bool all, bool fresh,
		 struct mc_ctld_nodes *out, char *err, size_t errlen)
{
	const char *conf = mc_ctld_conf();
	partition_info_msg_t *pm = NULL;
	node_info_msg_t *nm = NULL;
	slurm_conf_t *cc = NULL;
	size_t bad = 0;
	uint64_t first_mem_mb = 0;
	bool cut_names = false;
	const partition_info_t *pi = NULL;
	mc_hostlist_t hl = NULL;
	int rc = MC_CTLD_ERROR;

	memset(out, 0, sizeof(*out));
	if (!conf) {
		snprintf(err, errlen, "no slurm.conf to read (SLURM_CONF or %s)",
			 MC_SLURM_CONF_DEFAULT);
		return MC_CTLD_ERROR;
	}
	mc_ctld_init(conf);
	/* The cached nodes when slurmctld says nothing changed (two small
	 * answers); else what it sent while saying so, and the rest. */
	if (!fresh && mc_shape_cache_get(conf, partition, all, out, &pm,
					 &cc) == MC_SHAPE_CACHE_HIT)
		return 0;
	if ((!pm && slurm_load_partitions((time_t)0, &pm, SHOW_ALL) !=
		    SLURM_SUCCESS) ||
	    slurm_load_node((time_t)0, &nm, SHOW_ALL) != SLURM_SUCCESS ||
	    (!cc && slurm_load_ctl_conf((time_t)0, &cc) != SLURM_SUCCESS)) {
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
		/* The partition's first node in slurmctld's order: its
		 * memory is what a job of 0 MB a node is taken to ask. */
		if (!first_mem_mb && ni->real_memory > ni->mem_spec_limit)
			first_mem_mb = ni->real_memory - ni->mem_spec_limit;
		if (record_of(ni, &out->node[out->n], &cut_names))
			out->n++;
		else
			bad++;
	}
	part_defaults(pi, cc, &out->part);
	out->part.first_node_mem_mb = first_mem_mb;
	if (pi) {
		hidden_nodes(pi->nodes, out, bad, cut_names);
		hidden_bound(pi->tres_fmt_str, out);
	}
	if (!out->n && !out->n_unjudged) {
		snprintf(err, errlen, "partition %s has no nodes",
			 out->partition);
		goto out;
	}
	rc = 0;
	mc_shape_cache_put(conf, partition, all, out, cc->last_update,
			   pm->last_update);
out:
	if (hl)
		slurm_hostlist_destroy(hl);
	if (nm)
		slurm_free_node_info_msg(nm);
	if (cc)
		mc_free_ctl_conf(cc);
	if (pm)
		slurm_free_partition_info_msg(pm);
	if (rc)
		mc_ctld_free(out);
	return rc;
}

int mc_ctld_default_partition(char *buf, size_t len, char *err,
			      size_t errlen)
{
	return mc_ctld_find_partition(NULL, buf, len, err, errlen);
}

int mc_ctld_find_partition(const char *name, char *buf, size_t len,
			   char *err, size_t errlen)
{
	const char *conf = mc_ctld_conf();
	partition_info_msg_t *pm = NULL;
	const partition_info_t *pi;
	int rc = MC_CTLD_NO_PARTITION;

	if (!conf) {
		snprintf(err, errlen, "no slurm.conf to read (SLURM_CONF or %s)",
			 MC_SLURM_CONF_DEFAULT);
		return MC_CTLD_ERROR;
	}
	mc_ctld_init(conf);
	if (slurm_load_partitions((time_t)0, &pm, SHOW_ALL) != SLURM_SUCCESS) {
		snprintf(err, errlen, "cannot reach slurmctld (slurm.conf %s): "
			 "%s", conf, slurm_strerror(errno));
		return MC_CTLD_UNREACHABLE;
	}
	pi = find_partition(pm, name, err, errlen);
	if (pi) {
		snprintf(buf, len, "%s", pi->name);
		rc = 0;
	}
	slurm_free_partition_info_msg(pm);
	return rc;
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
