/*
 * mc_summary.c - the step's use against its judgement, and the advice
 * (mc_summary.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mc_config.h"
#include "mc_memstat.h"
#include "mc_parse.h"
#include "mc_summary.h"
#include "mc_util.h"

#define MIB ((uint64_t)1 << 20)

void mc_peak_add(struct mc_peak *pk, uint64_t usage, uint64_t anon,
		 uint64_t shmem, uint64_t file)
{
	uint64_t nr = usage > file ? usage - file : 0;

	if (!pk->samples || nr > pk->nr_bytes) {
		pk->nr_bytes = nr;
		pk->file_at_nr_bytes = file;
		pk->anon_at_nr_bytes = anon;
		pk->shmem_at_nr_bytes = shmem;
	}
	if (shmem > pk->max_shmem_bytes)
		pk->max_shmem_bytes = shmem;
	if (file > pk->max_file_bytes)
		pk->max_file_bytes = file;
	if (usage > pk->max_usage_bytes)
		pk->max_usage_bytes = usage;
	pk->samples++;
}

void mc_summary_oom_peak(struct mc_used *u, uint64_t end_shmem)
{
	struct mc_peak *pk = &u->peak;
	uint64_t at = u->kernel_peak_bytes;
	uint64_t shm = pk->max_shmem_bytes > end_shmem ? pk->max_shmem_bytes
						       : end_shmem;

	if (!u->oom_kills)
		return;
	if (u->asked_bytes && at > u->asked_bytes)
		at = u->asked_bytes;
	if (at <= pk->nr_bytes)
		return;
	if (shm > at)
		shm = at;
	pk->nr_bytes = at;
	pk->shmem_at_nr_bytes = shm;
	pk->anon_at_nr_bytes = at - shm;
	pk->file_at_nr_bytes = 0;
	if (shm > pk->max_shmem_bytes)
		pk->max_shmem_bytes = shm;
	pk->at_kill = 1;
}

static uint64_t round_up_mib(uint64_t b)
{
	return (b + MIB - 1) / MIB * MIB;
}

/* Whether the step's usage came near its limit (MC_SQUEEZE_NEAR_PCT):
 * only then can the limit be what squeezed its page cache. */
static bool near_limit(const struct mc_used *u)
{
	uint64_t top = u->peak.max_usage_bytes > u->kernel_peak_bytes
		       ? u->peak.max_usage_bytes : u->kernel_peak_bytes;

	/* Bytes below 2^57 (128 PiB): times 100 stays within 64 bits. */
	return u->asked_bytes &&
	       top / 4 * 100 >= u->asked_bytes / 4 * MC_SQUEEZE_NEAR_PCT;
}

/* Page cache squeezed by the limit (mc_summary.h, MC_SQUEEZE_*). */
static void squeeze(const struct mc_used *u, struct mc_advice *a)
{
	uint64_t floor;

	if (!near_limit(u))
		return;
	if (u->squeeze & MC_SQUEEZE_REFAULT)
		a->refault_large =
			u->refault_file_bytes >= MC_SQUEEZE_REFAULT_MIN_BYTES &&
			u->refault_file_bytes >= u->peak.max_file_bytes;
	if ((u->squeeze & MC_SQUEEZE_STALL) && u->wall_usec)
		a->stall_large = u->stall_usec * 100 >=
				 u->wall_usec * MC_SQUEEZE_STALL_PCT;
	if (!a->refault_large && !a->stall_large)
		return;
	a->squeeze_mem_bytes = round_up_mib(a->mem_bytes +
					    u->peak.max_file_bytes +
					    u->refault_file_bytes);
	/* Short of memory, so never a figure below what it had. */
	floor = round_up_mib(u->asked_bytes + u->refault_file_bytes);
	if (a->squeeze_mem_bytes < floor)
		a->squeeze_mem_bytes = floor;
}

uint64_t mc_summary_oom_next(uint64_t asked_bytes, uint64_t held_bytes)
{
	uint64_t b = asked_bytes > held_bytes ? asked_bytes : held_bytes;

	return round_up_mib(b + b / 2);
}

void mc_summary_advise(const struct mc_used *u, struct mc_advice *a)
{
	uint32_t w = u->workers, nw = w, base, cw, cnw;
	uint64_t alloc_milli = (uint64_t)u->cores_allocated * 1000;
	uint64_t rule, from_peak;
	int64_t dw;

	memset(a, 0, sizeof(*a));
	a->busy_milli = u->wall_usec
			? (uint32_t)(u->cpu_usec * 1000 / u->wall_usec) : 0;
	/* An OOM kill is advice enough whatever the samples: more. */
	if (!u->oom_kills && ((u->sample_interval_ms &&
			       u->peak.samples < MC_SUMMARY_MIN_SAMPLES) ||
			      u->wall_usec < MC_SUMMARY_MIN_WALL_USEC)) {
		a->too_few = true;
		a->workers = w;
		a->mem_bytes = u->asked_bytes;
		a->cpus_per_gpu = u->gpus ? (u->cores_allocated + u->gpus - 1) /
				  u->gpus : 0;
		return;
	}
	/* Workers: saturated cores want one more worker per GPU (and the
	 * cores for it); mostly idle ones, as many as the busy cores feed.
	 * A step that ran without samples of CPU (no wall time) keeps w. */
	if (u->gpus && alloc_milli && u->wall_usec) {
		if ((uint64_t)a->busy_milli * 100 >=
		    alloc_milli * MC_SUMMARY_BUSY_HIGH_PCT) {
			if (w < MC_WORKERS_LIMIT)
				nw = w + 1;
		} else if ((uint64_t)a->busy_milli * 100 <
			   alloc_milli * MC_SUMMARY_BUSY_LOW_PCT && w > 1) {
			/* Cores busy per GPU, one of them its main process. */
			uint32_t per_gpu = (uint32_t)(((uint64_t)a->busy_milli +
					   u->gpus * 1000ULL - 1) /
					   (u->gpus * 1000ULL));

			nw = per_gpu > 2 ? per_gpu - 1 : 1;
			if (nw > w)
				nw = w;
		}
	}
	a->workers = nw;
	/* Cores: the rule for nw workers, g * (ceil(nw / WorkersPerCore) +
	 * 1), unless the site's MinCoresPerGpu asks more (the rule's figure
	 * per GPU above the workers' own at w). */
	cw = mc_cores_per_gpu_at(w, u->workers_per_core, 0);
	cnw = mc_cores_per_gpu_at(nw, u->workers_per_core, 0);
	base = u->gpus ? (u->rule_cores + u->gpus - 1) / u->gpus : cnw;
	a->cpus_per_gpu = base > cw && base > cnw ? base : cnw;
	/* Slurm's --cpus-per-gpu counts threads on an SMT node. */
	if (u->threads_per_core > 1)
		a->cpus_per_gpu *= u->threads_per_core;
	/* Memory: the rule's figure for nw workers, or the peak with
	 * headroom when that is more. Page cache is left out: the kernel
	 * reclaims it before it kills. */
	dw = (int64_t)nw - (int64_t)w;
	rule = u->rule_bytes;
	if (dw > 0)
		rule += (uint64_t)dw * u->gpus * u->ram_per_worker_bytes;
	else if (dw < 0) {
		uint64_t less = (uint64_t)(-dw) * u->gpus *
				u->ram_per_worker_bytes;

		rule = rule > less ? rule - less : 0;
	}
	from_peak = u->peak.nr_bytes;
	if (u->oom_kills) {
		a->mem_unknown_oom = true;
		from_peak = mc_summary_oom_next(u->asked_bytes, from_peak);
	} else {
		from_peak += from_peak * MC_SUMMARY_HEADROOM_PCT / 100;
	}
	a->mem_from_peak_bytes = round_up_mib(from_peak);
	a->mem_is_rule = rule >= a->mem_from_peak_bytes;
	a->mem_bytes = a->mem_is_rule ? rule : a->mem_from_peak_bytes;
	squeeze(u, a);
}

const char *mc_summary_mem_option(const struct mc_used *u, uint64_t bytes,
				  char *buf, size_t len)
{
	char v[32];
	const char *opt = "--mem";
	uint32_t div = 1;

	if (u->mem_form == MC_MEM_PER_GPU && u->gpus) {
		opt = "--mem-per-gpu";
		div = u->gpus;
	} else if (u->mem_form == MC_MEM_PER_CPU && u->cores_allocated) {
		opt = "--mem-per-cpu";
		div = u->cores_allocated;
	}
	mc_fmt_mem_option((bytes + div - 1) / div, v, sizeof(v));
	snprintf(buf, len, "%s=%s", opt, v);
	return buf;
}

/* "1.5 s", "3 min": a duration for people. */
static const char *fmt_duration(uint64_t usec, char *buf, size_t len)
{
	if (usec < 120000000ULL)
		snprintf(buf, len, "%.1f s", (double)usec / 1e6);
	else if (usec < 7200000000ULL)
		snprintf(buf, len, "%.0f min", (double)usec / 6e7);
	else
		snprintf(buf, len, "%.1f h", (double)usec / 3.6e9);
	return buf;
}

/* The squeeze's two figures for people, or why each is not there. */
static void squeeze_figures(const struct mc_used *u, char *rf, size_t rfl,
			    char *st, size_t stl)
{
	char b[32], c[32], w[32];

	if (u->squeeze & MC_SQUEEZE_REFAULT)
		snprintf(rf, rfl, "%s read again after the kernel evicted it "
			 "(workingset_refault_file; the largest page cache %s)",
			 mc_fmt_bytes(u->refault_file_bytes, b, sizeof(b)),
			 mc_fmt_bytes(u->peak.max_file_bytes, c, sizeof(c)));
	else
		snprintf(rf, rfl, "file data read again not available (the "
			 "kernel's memory.stat has no workingset_refault_file)");
	if (u->squeeze & MC_SQUEEZE_STALL)
		snprintf(st, stl, "%s stalled on memory (memory.pressure "
			 "some, %.1f%% of the wall time)",
			 fmt_duration(u->stall_usec, w, sizeof(w)),
			 u->wall_usec ? 100.0 * (double)u->stall_usec /
					(double)u->wall_usec : 0.0);
	else if (!mc_cgroup_ops_has(mc_cgroup_ops_of(u->cgroup_version),
				    MC_CG_HAS_PSI))
		snprintf(st, stl, "memory stall time not available on cgroup "
			 "v1 (the kernel keeps it per cgroup on v2 only)");
	else if (u->squeeze & MC_SQUEEZE_PSI_OFF)
		snprintf(st, stl, "memory stall time not available: the kernel "
			 "has PSI off (psi=1 on its command line)");
	else
		snprintf(st, stl, "memory stall time not available: the "
			 "step's memory.pressure could not be read");
}

const char *mc_summary_squeeze_note(const struct mc_used *u, char *buf,
				    size_t len)
{
	char rf[160], st[160];
	bool r = u->squeeze & MC_SQUEEZE_REFAULT,
	     t = u->squeeze & MC_SQUEEZE_STALL;

	if (!(u->squeeze & MC_SQUEEZE_MEASURED)) {
		snprintf(buf, len, "not measured: the record was kept by a "
			 "memcore that did not read workingset_refault_file "
			 "and memory.pressure");
		return buf;
	}
	if (r && t)
		return NULL;
	squeeze_figures(u, rf, sizeof(rf), st, sizeof(st));
	snprintf(buf, len, "%s%s%s", r ? "" : rf, !r && !t ? "; " : "",
		 t ? "" : st);
	return buf;
}

static void explain(const struct mc_used *u, const struct mc_advice *a,
		    const char *step, const char *host,
		    const char *tmpfs_where, bool notes,
		    struct mc_summary_text *t);

void mc_summary_explain(const struct mc_used *u, const struct mc_advice *a,
			const char *step, const char *host,
			const char *tmpfs_where, struct mc_summary_text *t)
{
	explain(u, a, step, host, tmpfs_where, true, t);
}

void mc_summary_explain_brief(const struct mc_used *u,
			      const struct mc_advice *a, const char *step,
			      const char *host, struct mc_summary_text *t)
{
	explain(u, a, step, host, NULL, false, t);
}

/* A line of t, while there is room. */
#define LINE(...) mc_lines_add(t->line[0], &t->n, MC_SUMMARY_LINES, \
			       MC_SUMMARY_LINE_MAX, __VA_ARGS__)

/* What the step used: the samples, the memory asked, the peaks, the page
 * cache squeeze, the cores, the OOM kills. */
static void explain_used(const struct mc_used *u, const struct mc_advice *a,
			 const char *step, const char *host,
			 const char *tmpfs_where, bool notes,
			 struct mc_summary_text *t)
{
	char asked[32], opt[48], rule[32], nr[32], fc[32], an[32], sh[32],
	     msh[32], kp[32], wall[32];
	const struct mc_peak *pk = &u->peak;
	uint32_t interval_ms = u->sample_interval_ms;
	const char *kernel_peak_name =
		mc_cgroup_ops_of(u->cgroup_version)->peak_file;

	t->n = 0;
	if (interval_ms && pk->samples)
		LINE("memcore: step %s on %s used (%" PRIu64 " sample%s, "
		     "every %" PRIu32 " ms, over %s):", step, host,
		     pk->samples, pk->samples == 1 ? "" : "s", interval_ms,
		     fmt_duration(u->wall_usec, wall, sizeof(wall)));
	else
		LINE("memcore: step %s on %s used (no samples: %s; %s):",
		     step, host, interval_ms ? "it ended before the first"
					     : "SampleInterval=0",
		     fmt_duration(u->wall_usec, wall, sizeof(wall)));
	mc_summary_mem_option(u, u->asked_bytes, opt, sizeof(opt));
	LINE("  host RAM     asked %s (%s), the rule's figure %s",
	     mc_fmt_bytes(u->asked_bytes, asked, sizeof(asked)), opt,
	     mc_fmt_bytes(u->rule_bytes, rule, sizeof(rule)));
	/* One line for both peaks; at an OOM kill the kernel had already
	 * reclaimed the page cache, so the file pages read as what was left. */
	if (pk->at_kill || pk->samples)
		LINE("  peak         %s non-reclaimable%s (anon %s, shmem %s%s"
		     "%s%s; largest shmem (tmpfs, /dev/shm) %s",
		     mc_fmt_bytes(pk->nr_bytes, nr, sizeof(nr)),
		     pk->at_kill ? " at the OOM kill" : "",
		     mc_fmt_bytes(pk->anon_at_nr_bytes, an, sizeof(an)),
		     mc_fmt_bytes(pk->shmem_at_nr_bytes, sh, sizeof(sh)),
		     pk->at_kill ? "; the kernel had reclaimed the page "
				   "cache, " : ") with ",
		     mc_fmt_bytes(pk->file_at_nr_bytes, fc, sizeof(fc)),
		     pk->at_kill ? " left)" : " of page cache at that moment",
		     mc_fmt_bytes(pk->max_shmem_bytes, msh, sizeof(msh)));
	if (u->kernel_peak_bytes)
		LINE("  kernel peak  %s (%s, exact but with file pages: like "
		     "Slurm's MaxRSS it counts page cache the kernel can "
		     "reclaim)", mc_fmt_bytes(u->kernel_peak_bytes, kp,
					      sizeof(kp)), kernel_peak_name);
	if (u->squeeze & MC_SQUEEZE_MEASURED) {
		char rf[160], st[160];
		bool r = u->squeeze & MC_SQUEEZE_REFAULT,
		     s = u->squeeze & MC_SQUEEZE_STALL;

		squeeze_figures(u, rf, sizeof(rf), st, sizeof(st));
		if (notes || (r && s))
			LINE("  page cache   %s; %s", rf, st);
		else if (r || s)
			LINE("  page cache   %s", r ? rf : st);
	}
	LINE("  CPU cores    %" PRIu32 " allocated, the rule's figure %"
	     PRIu32 "; %.2f busy on average (CPU time / wall time)",
	     u->cores_allocated, u->rule_cores, a->busy_milli / 1000.0);
	if (u->oom_kills)
		LINE("  OOM          %" PRIu64 " kill%s at the limit of %s: "
		     "held by anon %s (process memory) and shmem %s (tmpfs: "
		     "%s) at the peak of %s non-reclaimable; %" PRIu64
		     " max event%s",
		     u->oom_kills, u->oom_kills == 1 ? "" : "s", asked, an, sh,
		     tmpfs_where && *tmpfs_where ? tmpfs_where : "none seen",
		     nr, u->max_events, u->max_events == 1 ? "" : "s");
}

/* What to ask next time, and why that figure; a page cache squeeze's own
 * fix. None from too few samples. */
static void explain_next(const struct mc_used *u, const struct mc_advice *a,
			 struct mc_summary_text *t)
{
	char wall[32], next[48], fp[32];
	const struct mc_peak *pk = &u->peak;

	if (a->too_few) {
		LINE("  next time    no advice: %" PRIu64 " sample%s over %s "
		     "%s too few to size a next run (at least %d, over 1 s "
		     "or more): ask as this time", pk->samples,
		     pk->samples == 1 ? "" : "s",
		     fmt_duration(u->wall_usec, wall, sizeof(wall)),
		     pk->samples == 1 ? "is" : "are", MC_SUMMARY_MIN_SAMPLES);
		return;
	}
	mc_summary_mem_option(u, a->mem_bytes, next, sizeof(next));
	LINE("  next time    %s --cpus-per-gpu=%" PRIu32
	     " --dataloader-workers=%" PRIu32, next, a->cpus_per_gpu,
	     a->workers);
	mc_fmt_bytes(a->mem_from_peak_bytes, fp, sizeof(fp));
	if (a->mem_unknown_oom)
		LINE("               (killed: it needed more than it held; %s "
		     "is 1.5 x that, a floor to try)", fp);
	else if (!pk->samples)
		LINE("               (the rule's figure: no samples to go "
		     "below it)");
	else if (a->mem_is_rule)
		LINE("               (the rule's figure: the peak plus %d%% "
		     "is only %s, but memcore refuses less than the rule "
		     "for %" PRIu32 " worker%s per GPU)", MC_SUMMARY_HEADROOM_PCT,
		     fp, a->workers, a->workers == 1 ? "" : "s");
	else
		LINE("               (the peak plus %d%%, above the rule's "
		     "figure)", MC_SUMMARY_HEADROOM_PCT);
	if (a->refault_large || a->stall_large) {
		char sq[48], mf[32], rb[32];

		mc_summary_mem_option(u, a->squeeze_mem_bytes, sq, sizeof(sq));
		LINE("  squeezed     the limit left too little page cache for "
		     "the files the step reads: the kernel evicted them and "
		     "read them again%s%s",
		     a->refault_large ? " (more than the most it could keep)"
				      : "",
		     a->stall_large ? ", and the step waited on memory" : "");
		LINE("  fix          %s rather than next time's figure, which "
		     "counts no page cache: that plus the largest page cache "
		     "(%s) and what was read again (%s), an upper bound; or "
		     "stage the files to node-local disk first (memcore stage "
		     "SRC DEST, memcore(8) STAGE), where reading them again is "
		     "cheap", sq,
		     mc_fmt_bytes(pk->max_file_bytes, mf, sizeof(mf)),
		     mc_fmt_bytes(u->refault_file_bytes, rb, sizeof(rb)));
	}
}
#undef LINE

static void explain(const struct mc_used *u, const struct mc_advice *a,
		    const char *step, const char *host,
		    const char *tmpfs_where, bool notes,
		    struct mc_summary_text *t)
{
	explain_used(u, a, step, host, tmpfs_where, notes, t);
	explain_next(u, a, t);
}

void mc_summary_log_line(const struct mc_used *u, const struct mc_advice *a,
			 const char *step, char *buf, size_t len)
{
	char asked[32], rule[32], nr[32], fc[32], msh[32], kp[32], next[48],
	     next_all[128], rf[32], st[32];

	mc_summary_mem_option(u, a->mem_bytes, next, sizeof(next));
	if (a->too_few)
		snprintf(next_all, sizeof(next_all), "none (too few samples)");
	else
		snprintf(next_all, sizeof(next_all), "%s --cpus-per-gpu=%"
			 PRIu32 " --dataloader-workers=%" PRIu32, next,
			 a->cpus_per_gpu, a->workers);
	/* The squeeze's figures, "none" where not measured. */
	snprintf(rf, sizeof(rf), "none");
	snprintf(st, sizeof(st), "none");
	if (u->squeeze & MC_SQUEEZE_REFAULT)
		mc_fmt_bytes(u->refault_file_bytes, rf, sizeof(rf));
	if (u->squeeze & MC_SQUEEZE_STALL)
		snprintf(st, sizeof(st), "%.1f s", (double)u->stall_usec / 1e6);
	snprintf(buf, len, "job %s: after the step: asked=%s rule=%s "
		 "samples=%" PRIu64 " peak_nonreclaimable=%s "
		 "page_cache_at_peak=%s max_shmem=%s kernel_peak=%s cores=%"
		 PRIu32 " busy=%.2f oom_kills=%" PRIu64 " refault_file=%s "
		 "memory_stall=%s squeezed=%s next=%s",
		 step, mc_fmt_bytes(u->asked_bytes, asked, sizeof(asked)),
		 mc_fmt_bytes(u->rule_bytes, rule, sizeof(rule)),
		 u->peak.samples,
		 mc_fmt_bytes(u->peak.nr_bytes, nr, sizeof(nr)),
		 mc_fmt_bytes(u->peak.file_at_nr_bytes, fc, sizeof(fc)),
		 mc_fmt_bytes(u->peak.max_shmem_bytes, msh, sizeof(msh)),
		 u->kernel_peak_bytes ? mc_fmt_bytes(u->kernel_peak_bytes, kp,
						     sizeof(kp)) : "none",
		 u->cores_allocated, a->busy_milli / 1000.0, u->oom_kills,
		 rf, st, a->refault_large || a->stall_large ? "yes" : "no",
		 next_all);
}

/* The record's fields: key, and where it lives. */
enum rec_where { IN_U64, IN_U32, IN_PEAK, IN_ADV64, IN_ADV32 };
struct rec_field {
	const char *key;
	enum rec_where where;
	size_t off;
};
#define U64(k, f) { k, IN_U64, offsetof(struct mc_used, f) }
#define U32(k, f) { k, IN_U32, offsetof(struct mc_used, f) }
#define PK(k, f) { k, IN_PEAK, offsetof(struct mc_peak, f) }
static const struct rec_field rec_fields[] = {
	U64("a", asked_bytes), U32("f", mem_form), U32("g", gpus),
	U32("w", workers), U32("ca", cores_allocated), U64("r", rule_bytes),
	U32("rc", rule_cores), U64("rw", ram_per_worker_bytes),
	PK("n", samples), PK("p", nr_bytes), PK("pf", file_at_nr_bytes),
	PK("pa", anon_at_nr_bytes), PK("ps", shmem_at_nr_bytes),
	PK("ms", max_shmem_bytes), PK("mf", max_file_bytes),
	PK("mu", max_usage_bytes), PK("ak", at_kill),
	U64("k", kernel_peak_bytes),
	U64("o", oom_kills), U64("h", high_events), U64("x", max_events),
	U64("cu", cpu_usec), U64("wu", wall_usec),
	U32("si", sample_interval_ms), U32("cv", cgroup_version),
	/* Added in 0.3.0: a record without it (an older memcore's) reads
	 * as 0, one thread per core, which is what it meant then. */
	U32("t", threads_per_core),
	/* The page cache squeeze: a record without them reads as not
	 * measured (squeeze 0), as an older memcore's is. */
	U64("rf", refault_file_bytes), U64("st", stall_usec),
	U32("sq", squeeze),
	/* WorkersPerCore: a record without it reads as 0, one worker a
	 * core, the only rule before it. */
	U32("wc", workers_per_core),
};
#undef U64
#undef U32
#undef PK

static void *field_at(const struct rec_field *f, struct mc_used *u)
{
	return f->where == IN_PEAK ? (char *)&u->peak + f->off
				   : (char *)u + f->off;
}

int mc_summary_record(const struct mc_used *u, const struct mc_advice *a,
		      const char *step, const char *host, char *buf,
		      size_t len)
{
	struct mc_used c = *u;
	size_t used;
	int n;

	if (len > MC_SUMMARY_RECORD_MAX + 1)
		len = MC_SUMMARY_RECORD_MAX + 1;
	n = snprintf(buf, len, "%s@%s:", step, host);
	if (n < 0 || (size_t)n >= len || strpbrk(step, "@:, ;") ||
	    strpbrk(host, "@:, ;"))
		return -1;
	used = (size_t)n;
	for (size_t i = 0; i < sizeof(rec_fields) / sizeof(rec_fields[0]);
	     i++) {
		const struct rec_field *f = &rec_fields[i];
		void *p = field_at(f, &c);
		uint64_t v = f->where == IN_U32 ? *(uint32_t *)p
						: *(uint64_t *)p;

		n = snprintf(buf + used, len - used, "%s%s=%" PRIu64,
			     i ? "," : "", f->key, v);
		if (n < 0 || (size_t)n >= len - used)
			return -1;
		used += (size_t)n;
	}
	if (u->timeline[0]) {
		n = snprintf(buf + used, len - used, ",s=%s", u->timeline);
		if (n < 0 || (size_t)n >= len - used || strpbrk(u->timeline,
								",;"))
			return -1;
	}
	(void)a;	/* the advice is recomputed from the figures */
	return 0;
}

int mc_summary_record_parse(const char *rec, struct mc_used *u,
			    struct mc_advice *a, char *step, size_t steplen,
			    char *host, size_t hostlen)
{
	const char *at = strchr(rec, '@'), *colon, *p;

	memset(u, 0, sizeof(*u));
	if (!at || !(colon = strchr(at, ':')) || at == rec ||
	    (size_t)(at - rec) >= steplen ||
	    (size_t)(colon - at - 1) >= hostlen || colon == at + 1)
		return -1;
	memcpy(step, rec, (size_t)(at - rec));
	step[at - rec] = '\0';
	memcpy(host, at + 1, (size_t)(colon - at - 1));
	host[colon - at - 1] = '\0';
	for (p = colon + 1; *p;) {
		const char *eq = strchr(p, '='), *end;
		size_t kl;
		bool known = false;
		char *e;
		unsigned long long v;

		if (!eq)
			return -1;
		kl = (size_t)(eq - p);
		if (kl == 1 && *p == 's') {	/* the timeline: text */
			size_t vl = strcspn(eq + 1, ",");

			snprintf(u->timeline, sizeof(u->timeline), "%.*s",
				 (int)vl, eq + 1);
			if (vl >= sizeof(u->timeline))
				snprintf(u->timeline, sizeof(u->timeline),
					 "!");
			p = eq[1 + vl] ? eq + 2 + vl : eq + 1 + vl;
			continue;
		}
		v = strtoull(eq + 1, &e, 10);
		if (e == eq + 1 || (*e && *e != ','))
			return -1;
		end = e;
		for (size_t i = 0;
		     i < sizeof(rec_fields) / sizeof(rec_fields[0]); i++) {
			const struct rec_field *f = &rec_fields[i];
			void *dst = field_at(f, u);

			if (strlen(f->key) != kl || strncmp(f->key, p, kl))
				continue;
			if (f->where == IN_U32)
				*(uint32_t *)dst = (uint32_t)v;
			else
				*(uint64_t *)dst = v;
			known = true;
		}
		(void)known;	/* a newer memcore's field: skipped */
		p = *end ? end + 1 : end;
	}
	if (u->mem_form > MC_MEM_PER_CPU)
		u->mem_form = MC_MEM_PER_NODE;
	mc_summary_advise(u, a);
	return 0;
}

void mc_used_decided(struct mc_used *u, const struct mc_decision *d,
		     const struct mc_policy *p)
{
	const struct mc_verdict *v = &d->j.v;

	u->asked_bytes = v->alloc.mem_bytes;
	u->mem_form = v->alloc.mem_form;
	u->gpus = v->req.gpus;
	u->workers = d->workers;
	u->cores_allocated = v->cores_allocated;
	u->threads_per_core = v->node.threads_per_core;
	u->rule_bytes = v->ram_needed_bytes;
	u->rule_cores = v->cores_needed;
	u->ram_per_worker_bytes = p->ram_per_worker_bytes;
	u->workers_per_core = p->workers_per_core;
}
