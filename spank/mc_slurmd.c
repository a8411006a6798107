/*
 * mc_slurmd.c - slurmd context: at slurmd start, read the node once (hwloc,
 * then NVML / ROCm SMI for GPU memory the topology lacks), write the
 * node-facts cache every slurmstepd reads, audit the node against the
 * sizing rule and say so in one line of the slurmd log.
 *
 * Slurm stops slurmd when a `required` plugin's init fails in slurmd
 * context, and from 23.11 `scontrol reconfigure` re-executes slurmd, so
 * that init runs again: nothing here ever fails. A broken policy is logged
 * at error level (file, line, key) and slurmd runs on as it does after a
 * reconfigure on 22.05: each slurmstepd reads memcore.conf afresh, so GPU
 * steps are refused naming the mistake, CPU-only steps run, and the next
 * step after the fix fits. A node that breaks the sizing rule, a topology
 * hwloc cannot read or a cache that cannot be written are logged the same
 * way.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/slurm_version.h>
#include <slurm/spank.h>

#include "mc_cache.h"
#include "mc_facts.h"
#include "mc_gpu_probe.h"
#include "mc_parse.h"
#include "mc_args.h"
#include "mc_plugin.h"
#include "mc_nodefacts.h"
#include "mc_slurmd.h"
#include "mc_log.h"

/* One line for the GPUs: "4 x 139.8 GiB (cuda)", or each when mixed. */
static void describe_gpus(const struct mc_node_facts *f,
			  const struct mc_policy *pol, char *buf, size_t len)
{
	enum mc_mem_source src0, src;
	uint64_t m0 = mc_facts_gpu_memory(f, pol, 0, &src0);
	bool same = true;
	char b[32];
	/* With MIG on, Slurm's GPUs are the slices. */
	uint32_t n = mc_topology_slurm_gpus(f);
	const char *what = f->n_mig ? "MIG slices" : "GPUs";

	if (!n) {
		snprintf(buf, len, "no GPUs");
		return;
	}
	for (uint32_t i = 1; i < n; i++)
		if (mc_facts_gpu_memory(f, pol, i, &src) != m0 || src != src0)
			same = false;
	if (same)
		snprintf(buf, len, "%u %s x %s (%s)", n, what,
			 m0 ? mc_fmt_bytes(m0, b, sizeof(b)) : "memory unknown",
			 mc_mem_source_name(src0));
	else
		snprintf(buf, len, "%u %s of mixed memory", n, what);
}

/* "22.05.8": Debian's slurm_version.h has the number, not the string. */
static void slurm_version(char *buf, size_t len)
{
#ifdef SLURM_VERSION_STRING
	snprintf(buf, len, "%s", SLURM_VERSION_STRING);
#else
	snprintf(buf, len, "%d.%02d.%d",
		 SLURM_VERSION_MAJOR(SLURM_VERSION_NUMBER),
		 SLURM_VERSION_MINOR(SLURM_VERSION_NUMBER),
		 SLURM_VERSION_MICRO(SLURM_VERSION_NUMBER));
#endif
}

/* Write the node facts where steps read them (cache= in plugstack.conf);
 * what the start line says of it into line. */
static void write_cache(const struct mc_plugin *p,
			const struct mc_node_facts *facts, char *line,
			size_t len)
{
	char err[MC_ERR_MAX];

	if (!p->cache_path[0]) {
		snprintf(line, len, "cache off");
	} else if (mc_cache_write(p->cache_path, facts, err, sizeof(err)) < 0) {
		unlink(p->cache_path);
		snprintf(line, len, "%s (not written: steps load the topology "
			 "themselves; name a file in slurmd's SlurmdSpoolDir "
			 "with cache= in plugstack.conf)", err);
	} else {
		snprintf(line, len, "cache %s", p->cache_path);
	}
}

/* The start line's word on the node's audit (mc_facts_judge). */
static const char *audit_word(const struct mc_node_facts *facts,
			      const struct mc_node_judgement *nj)
{
	const struct mc_audit *a = &nj->rule;

	if (!facts->n_gpus)
		return "no GPUs";
	if (!a->gpu_memory_known)
		return a->cores_rule_ok ? "RAM rule unknown (GPU memory "
			"unknown: set GpuMemory=), cores ok"
			: "RAM rule unknown (GPU memory unknown: set "
			  "GpuMemory=), cores FAIL";
	if (a->ram_rule_ok && a->cores_rule_ok && nj->step.v.fits)
		return "ok";
	if (a->ram_rule_ok && a->cores_rule_ok)
		return "the rule holds, but a step of all its GPUs at the "
		       "policy's defaults does not fit the whole node";
	return "FAILS the sizing rule";
}

/* The lines after the start line: each rule the node breaks, the RAM
 * figures that disagree, shards the policy counts otherwise than Slurm. */
static void warnings(const char *host, const char *ram, const char *policy,
		     const struct mc_node_facts *f,
		     const struct mc_policy *pol, const struct mc_node *node,
		     const struct mc_node_judgement *nj)
{
	const struct mc_audit *a = &nj->rule;
	char need[32], gmem[32], rule[96];
	uint32_t per;

	if (mc_topology_ram_disagrees(f)) {
		char hw[32];

		mc_log_info("memcore: host RAM %s is the kernel's (MemTotal, "
			    "as RealMemory); hwloc's NUMA nodes hold %s", ram,
			    mc_fmt_bytes(f->hwloc_ram_bytes, hw,
					 sizeof(hw)));
	}
	if (f->n_gpus && a->gpu_memory_known && !a->ram_rule_ok) {
		mc_fmt_bytes(a->ram_needed_bytes, need, sizeof(need));
		mc_fmt_bytes(a->gpu_memory_total_bytes, gmem, sizeof(gmem));
		mc_log_info("memcore: warning: %s breaks the RAM sizing rule: "
			    "%s host RAM, %s needed = %s of GPU memory x %.2f "
			    "(HostRamPerGpuRam); GPU steps will be refused "
			    "RAM they cannot get", host, ram, need, gmem,
			    pol->host_ram_per_gpu_ram);
	}
	if (mc_shards_disagree(pol, f->slurm_shards, f->slurm_gpus,
			       &per))
		mc_log_info("memcore: warning: %s: ShardsPerGpu=%u in %s, but "
			    "Slurm configures %u shards per GPU here (Gres "
			    "shard:%u over %u GPUs): shard steps are sized by "
			    "ShardsPerGpu=; remove it to follow Slurm", host,
			    pol->shards_per_gpu, policy, per, f->slurm_shards,
			    f->slurm_gpus);
	if (f->n_gpus && !a->cores_rule_ok)
		mc_log_info("memcore: warning: %s breaks the cores sizing rule: "
			    "%u cores, %u needed = %s + %u reserved", host,
			    f->cores, a->cores_needed,
			    mc_cores_rule_text(pol, f->n_gpus, a->workers,
					       false, rule, sizeof(rule)),
			    pol->reserved_cores);
	if (f->n_gpus && a->ram_rule_ok && a->cores_rule_ok &&
	    !nj->step.v.fits) {
		char why[160];

		mc_log_info("memcore: warning: %s: a step of all its %u GPUs "
			    "at %u workers, given the whole node, does not fit: "
			    "%s (memcore audit explains)", host, node->gpus,
			    a->workers, mc_verdict_reason(&nj->step.v, why,
							  sizeof(why)));
	}
}

/* The node facts cache, the audit and the start line, for a policy read
 * (p->cfg) or not (p->cfg_err). */
static int start(struct mc_plugin *p)
{
	static struct mc_node_facts facts;	/* 50 KiB: not on the stack */
	static struct mc_node_judgement nj;	/* with its explanation */
	struct mc_policy pol;
	struct mc_node node;
	char host[64] = "", slurm[32], err[MC_ERR_MAX], note[MC_ERR_MAX];
	char gpus[96], ram[32], cache[MC_ERR_MAX + 64];
	const char *policy = p->cfg.path[0] ? p->cfg.path : "(none)";

	slurm_version(slurm, sizeof(slurm));
	if (gethostname(host, sizeof(host) - 1) != 0)
		snprintf(host, sizeof(host), "this node");
	if (p->cfg_err[0]) {
		/* Facts cached under a policy that cannot be read may name
		 * another topology than the fixed one will: steps load their
		 * own until slurmd starts with a good policy. */
		if (p->cache_path[0] == '/')
			unlink(p->cache_path);
		mc_log_error("memcore %s (Slurm %s) on %s: %s; GPU steps are "
			     "refused until the policy is fixed (each step "
			     "reads it afresh: no restart needed), CPU-only "
			     "steps run; no node facts cached", MC_VERSION,
			     slurm, host, p->cfg_err);
		return 0;
	}
	/* A key turned off at load (PrometheusTextfile=, LocalScratch=):
	 * the policy stands. */
	if (p->cfg.key_off[0])
		mc_log_error("memcore on %s: %s", host, p->cfg.key_off);
	mc_config_policy(&p->cfg, NULL, &pol);
	if (pol.cgroup_memory && pol.mode != MC_MODE_OFF)
		mc_enforce_slurmd_sweep();
	if (pol.cgroup_memory && pol.mode != MC_MODE_OFF &&
	    !mc_cap_sys_resource())
		mc_log_error("memcore on %s: slurmd has no CAP_SYS_RESOURCE, "
			     "so memcore cannot give slurmstepd back its "
			     "oom_score_adj of -1000 where Slurm's cgroup "
			     "charges slurmstepd to the step (cgroup v1): each "
			     "task raises its own oom_score_adj to 1000 "
			     "instead, so that the OOM killer picks a task "
			     "first. Run slurmd with CAP_SYS_RESOURCE (a "
			     "container's or sandbox's capability set) to "
			     "protect slurmstepd", host);
	if (mc_topology_load(pol.topology_file, &facts, err, sizeof(err)) < 0) {
		/* A stale cache must not outlive the topology it came from. */
		if (p->cache_path[0])
			unlink(p->cache_path);
		mc_log_error("memcore %s (Slurm %s) on %s: %s; policy %s; no "
			     "node facts cached, GPU steps load the topology "
			     "themselves", MC_VERSION, slurm, host, err,
			     policy);
		return 0;
	}
	/* Only here, never in slurmstepd: NVML may take seconds to start. */
	mc_gpu_probe_fill_default(&facts, note, sizeof(note));
	if (note[0])
		mc_log_info("memcore: GPU memory: %s (GpuMemory= in %s "
			    "applies)", note, policy);
	/* Slurm's own GPU and shard counts: the shards per GPU of every
	 * --gres=shard step here (mc_shards_per_gpu). */
	mc_plugin_slurm_gres(&facts);

	write_cache(p, &facts, cache, sizeof(cache));

	/* memcore audit's own judgement of this node (mc_facts_judge). */
	mc_facts_judge(&facts, &pol, &node, &nj);
	describe_gpus(&facts, &pol, gpus, sizeof(gpus));
	mc_fmt_bytes(facts.host_ram_bytes, ram, sizeof(ram));
	mc_log_info("memcore %s (Slurm %s) on %s: topology %s; policy %s; "
		    "%s host RAM, %u cores, %u NUMA nodes, %s; audit at "
		    "%u workers: %s; %s", MC_VERSION, slurm, host,
		    facts.source, policy, ram, facts.cores, facts.n_numa, gpus,
		    nj.rule.workers, audit_word(&facts, &nj), cache);
	warnings(host, ram, policy, &facts, &pol, &node, &nj);
	return 0;
}

int mc_slurmd_init(struct mc_plugin *p, int ac, char **av)
{
	p->ac = ac;
	p->av = av;
	p->configured = true;
	mc_plugin_configure(p, ac, av);
	return start(p);
}
