/*
 * mc_summary.h - what a step used against what it was judged to need, and
 * what to ask next time. Pure: the sampler (spank/mc_sampler.c)
 * feeds it readings of the step's memory cgroup (cgroup/mc_cgread.h) and
 * the verdict's figures; it prints nothing and reads no file.
 *
 * The figures (docs/memcore.8 "AFTER THE STEP"):
 *  - peak non-reclaimable: the largest usage - active_file - inactive_file
 *    over the samples (anon + shmem + kernel memory: what no reclaim can
 *    free), with the page cache of that same sample beside it;
 *  - largest shmem: the largest shmem figure of any sample (/dev/shm,
 *    tmpfs, SysV shm), which survives the step's processes;
 *  - kernel peak: v2 memory.peak, v1 memory.max_usage_in_bytes, which the
 *    kernel keeps exactly but which counts file pages too (the MaxRSS-like
 *    number): shown beside, never used for the advice;
 *  - cores busy: CPU time of the step / wall time, in cores.
 * A sample can miss a spike shorter than SampleInterval; the kernel peak
 * cannot, which is why both are kept.
 */
#ifndef MC_SUMMARY_H
#define MC_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mc_decision.h"
#include "mc_rules.h"
#include "mc_timeline.h"

/* The running maxima of the samples. All bytes. */
struct mc_peak {
	uint64_t samples;
	uint64_t nr_bytes;		/* peak non-reclaimable */
	uint64_t file_at_nr_bytes;	/* page cache in that sample */
	uint64_t anon_at_nr_bytes, shmem_at_nr_bytes;
	uint64_t max_shmem_bytes;	/* largest shmem of any sample */
	uint64_t max_file_bytes;	/* largest page cache */
	uint64_t max_usage_bytes;	/* largest usage seen */
	/* nr_bytes and its split are the kill's, not a sample's
	 * (mc_summary_oom_peak). */
	uint64_t at_kill;
};

/* Add one sample: usage and the memory.stat split. file = active_file +
 * inactive_file. A usage below file (v1's approximate usage) counts as 0
 * non-reclaimable. */
void mc_peak_add(struct mc_peak *pk, uint64_t usage, uint64_t anon,
		 uint64_t shmem, uint64_t file);

struct mc_used;
/*
 * An OOM-killed step: its memory at the kill is gone by the time it is
 * read, and a sample may have missed the climb. When the kernel's peak
 * (capped at the limit) is above the sampled peak, take it as the
 * non-reclaimable peak (the kernel reclaims page cache before it kills,
 * so what it could not free was non-reclaimable): shmem is the larger of
 * the largest sampled and end_shmem (shared memory outlives the kill),
 * the rest anon, page cache 0. Sets peak.at_kill. Source: the kernel's
 * Documentation/admin-guide/cgroup-v2.rst, "memory.max" (OOM after
 * reclaim fails).
 */
void mc_summary_oom_peak(struct mc_used *u, uint64_t end_shmem);

/*
 * What to ask after an OOM kill, in bytes: half as much again as the
 * larger of what was asked and what was held (killed at the limit, it
 * needed more than it held; a floor to try, not a measurement), rounded
 * up to MiB. The one figure of an OOM kill: the summary's next time
 * (mc_summary_advise, unless the rule's figure is more) and the kill's
 * own explanation on stderr (spank/mc_enforce.c) both say it.
 */
uint64_t mc_summary_oom_next(uint64_t asked_bytes, uint64_t held_bytes);

/* Everything the summary of one step on one node is made from. */
struct mc_used {
	/* What the user asked and how (the advice uses the same option). */
	uint64_t asked_bytes;		/* the allocation on this node */
	enum mc_mem_form mem_form;
	uint32_t gpus;			/* on this node */
	uint32_t workers;		/* DataLoader workers per GPU asked */
	uint32_t cores_allocated;
	/* Hardware threads per core (0 or 1: none): --cpus-per-gpu counts
	 * threads, as Slurm does, while the rule counts cores. */
	uint32_t threads_per_core;
	/* The rule's figures for that request (mc_verdict), and what one
	 * more worker per GPU costs (RamPerWorker). */
	uint64_t rule_bytes;
	uint32_t rule_cores;
	uint64_t ram_per_worker_bytes;
	/* The policy's WorkersPerCore the rule counted cores with (0: 1). */
	uint32_t workers_per_core;
	struct mc_peak peak;
	uint64_t kernel_peak_bytes;	/* 0: the kernel has none */
	uint64_t oom_kills, high_events, max_events;
	uint64_t cpu_usec, wall_usec;
	/* How it was measured: SampleInterval (0: not sampled) and the
	 * cgroup version (the kernel peak's file), for the report. */
	uint32_t sample_interval_ms, cgroup_version;
	/* Page cache squeezed by the limit, over the step (first task to
	 * its end; cgroup/mc_cgread.h mc_cgread_squeeze_read): file data
	 * read again after the kernel evicted it, in bytes, and the time at
	 * least one task waited on memory (PSI "some"), in us. Each counts
	 * only where squeeze says it was measured (MC_SQUEEZE_*); a record
	 * of a memcore that did not measure them has squeeze 0. */
	uint64_t refault_file_bytes;
	uint64_t stall_usec;
	uint32_t squeeze;
	/* The samples over time as mc_timeline_encode wrote them, "" none
	 * (sampling off, or an older memcore's record), MC_JOBREC_CUT
	 * (mc_jobrec.h) when the job's records passed MC_JOBREC_MAX and it
	 * was dropped. */
	char timeline[MC_TIMELINE_TEXT_MAX];
};

/*
 * What the summary after the step compares with, from the step's
 * decision d under policy p (policy/mc_decision.h): the allocation asked
 * and how, the GPUs and workers, the rule's figures. The measured fields
 * of u are left alone.
 */
void mc_used_decided(struct mc_used *u, const struct mc_decision *d,
		     const struct mc_policy *p);

/* mc_used.squeeze: what was measured, and why not. */
#define MC_SQUEEZE_MEASURED 1u	/* this memcore looked (0: an older one) */
#define MC_SQUEEZE_REFAULT 2u	/* refault_file_bytes is a measurement */
#define MC_SQUEEZE_STALL 4u	/* stall_usec is a measurement */
#define MC_SQUEEZE_PSI_OFF 8u	/* no stall figure: the kernel has PSI off
				 * (else, on v2: memory.pressure unreadable;
				 * on v1 there is none per cgroup) */

/*
 * When a squeeze is worth a fix:
 *  - refaulted file data at least MC_SQUEEZE_REFAULT_MIN_BYTES (below it,
 *    a few libraries and logs read again: noise) and at least the largest
 *    page cache the step held: it read back more file data than its limit
 *    ever let it keep, so its files went round the page cache, evicted
 *    and read again, not once by chance;
 *  - or stalled on memory (PSI "some") MC_SQUEEZE_STALL_PCT of its wall
 *    time or more: "some" is the share of time in which at least one task
 *    waited on memory (kernel Documentation/accounting/psi.rst), and in a
 *    training step the main process waiting is the GPUs waiting. The
 *    kernel gives no threshold; a tenth of the GPU time lost is worth a
 *    change of request, where a few percent is within how much one run's
 *    input time differs from the next.
 */
#define MC_SQUEEZE_REFAULT_MIN_BYTES ((uint64_t)64 << 20)
#define MC_SQUEEZE_STALL_PCT 10
/*
 * ... and only when the step's own usage came within this share of its
 * limit (the larger of its sampled usage and the kernel's peak): the
 * limit reclaims a cgroup's page cache only as its usage reaches it
 * (kernel Documentation/admin-guide/cgroup-v1/memory.rst, "2.5 Reclaim";
 * cgroup-v2.rst, memory.max and memory.high). Refaults and stalls far
 * below the limit came from elsewhere: another job evicting pages both
 * read (a page is charged to the cgroup that first touched it), or the
 * node's own pressure; a larger --mem would not have helped.
 */
#define MC_SQUEEZE_NEAR_PCT 85

/* How much above the peak the advice asks, in percent: a second run of
 * the same job differs a little (allocator, batch order). */
#define MC_SUMMARY_HEADROOM_PCT 20
/* Fewer samples than this while sampling was on, or a step shorter than
 * MC_SUMMARY_MIN_WALL_USEC, give no advice (unless killed): a step of a
 * few milliseconds has no peak to size from, and its CPU time over its
 * wall time is noise. */
#define MC_SUMMARY_MIN_SAMPLES 3
#define MC_SUMMARY_MIN_WALL_USEC 1000000ULL
/* Cores count as saturated above this share of the allocation. */
#define MC_SUMMARY_BUSY_HIGH_PCT 90
/* ... and as mostly idle below this one. */
#define MC_SUMMARY_BUSY_LOW_PCT 40

/* The advice, in the user's options. */
struct mc_advice {
	uint64_t mem_bytes;		/* --mem (or per GPU/CPU) to ask */
	bool mem_is_rule;		/* the rule's figure holds it up: the
					 * peak alone would ask less */
	uint64_t mem_from_peak_bytes;	/* peak + headroom, rounded to MiB */
	bool mem_unknown_oom;		/* killed: the peak is a floor */
	uint32_t workers;		/* --dataloader-workers= */
	uint32_t cpus_per_gpu;		/* --cpus-per-gpu= in threads (cores
					 * >= workers + 1, x threads_per_core) */
	uint32_t busy_milli;		/* cores busy x 1000 */
	/* Too few samples (MC_SUMMARY_MIN_SAMPLES): no advice; the fields
	 * above repeat what was asked. */
	bool too_few;
	/* Page cache squeezed by the limit (MC_SQUEEZE_REFAULT_MIN_BYTES,
	 * MC_SQUEEZE_STALL_PCT), and the memory that holds the step's files:
	 * mem_bytes + the largest page cache + the refaulted bytes, rounded
	 * up to MiB (an upper bound: a file read n times is refaulted up to
	 * n - 1 times), and never less than what was asked plus the
	 * refaulted bytes: a step its limit squeezed needs more than it
	 * had. 0 when not squeezed. */
	bool refault_large, stall_large;
	uint64_t squeeze_mem_bytes;
};

/* Compute the advice; never below the rule's figure for the advised
 * worker count (mem_is_rule says when that is what holds it up); none
 * from too few samples (too_few). */
void mc_summary_advise(const struct mc_used *u, struct mc_advice *a);

/*
 * The option text for mem_bytes in the user's form: "--mem=5G",
 * "--mem-per-gpu=3G", "--mem-per-cpu=1024M" (per GPU/CPU: divided by the
 * step's GPUs/cores, rounded up). Returns buf.
 */
const char *mc_summary_mem_option(const struct mc_used *u, uint64_t bytes,
				  char *buf, size_t len);

#define MC_SUMMARY_LINES 11
#define MC_SUMMARY_LINE_MAX 320

/* The summary for the user, line by line (first line names step, node). */
struct mc_summary_text {
	size_t n;
	char line[MC_SUMMARY_LINES][MC_SUMMARY_LINE_MAX];
};

/* tmpfs_where: the node's tmpfs mounts, named when an OOM kill is
 * explained (NULL: none). The kernel peak is named by the peak file of
 * u->cgroup_version's table (mc_cgroup_ops_of: memory.max_usage_in_bytes,
 * memory.peak), and a missing stall time by whether that table has PSI. */
void mc_summary_explain(const struct mc_used *u, const struct mc_advice *a,
			const char *step, const char *host,
			const char *tmpfs_where, struct mc_summary_text *t);

/* mc_summary_explain for one of many steps (memcore report): the page
 * cache line leaves out why a figure is missing (the caller says that
 * once, from mc_summary_squeeze_note) and is left out when neither
 * figure was measured. */
void mc_summary_explain_brief(const struct mc_used *u,
			      const struct mc_advice *a, const char *step,
			      const char *host, struct mc_summary_text *t);

/*
 * What of the page cache squeeze was not measured, and why, in the
 * summary's words ("memory stall time not available on cgroup v1 (...)",
 * two such joined by "; "; "not measured: ..." for a record of a
 * memcore that did not look), into buf; NULL when both figures were
 * measured. The report's JSON gives it beside its nulls.
 */
const char *mc_summary_squeeze_note(const struct mc_used *u, char *buf,
				    size_t len);

/* The one slurmd log line (without the "memcore: " prefix), key=value. */
void mc_summary_log_line(const struct mc_used *u, const struct mc_advice *a,
			 const char *step, char *buf, size_t len);

/*
 * The compact record kept with the job (mc_summary_record / _parse): one
 * step on one node, as "step@host:k=v,k=v" with byte counts in bytes,
 * the page cache squeeze as "rf" (bytes), "st" (us) and "sq" (flags;
 * a record without them reads as not measured),
 * MC_SUMMARY_RECORD_MAX bytes at most. It keeps threads_per_core ("t"),
 * so that the --cpus-per-gpu advice rebuilt from it (memcore report) is
 * the one the step printed; a record without "t" reads as 1 thread per
 * core. Unknown keys (a newer memcore's) are skipped. Parse fills u (and a's fields
 * that were stored) and step/host; returns 0, or -1 when rec is not one.
 * The timeline, when there is one, is the last field, "s=" and
 * u->timeline's text (no ',' in it); its value is not checked here (the
 * report decodes it and says when it cannot): a value longer than any
 * timeline reads as "!" (unreadable). A memcore without timelines
 * (0.3.0) reads a record with "s" as not one: it took numbers only.
 */
#define MC_SUMMARY_RECORD_MAX (440 + 3 + MC_TIMELINE_TEXT_MAX)
int mc_summary_record(const struct mc_used *u, const struct mc_advice *a,
		      const char *step, const char *host, char *buf,
		      size_t len);
int mc_summary_record_parse(const char *rec, struct mc_used *u,
			    struct mc_advice *a, char *step, size_t steplen,
			    char *host, size_t hostlen);

#endif
