/*
 * mc_enforce.c - the step's memory cgroup and OOM reports, in slurmstepd.
 *
 * Where each part runs (verified on Slurm 22.05 with cgroup v1, see
 * tests/integration/NOTES.md):
 *  - user_init, in slurmstepd before it forks the tasks, with privileges
 *    dropped to the user: find the step's memory cgroup and remember it
 *    (the task processes inherit the copy). With task/cgroup memory
 *    constraints Slurm has already moved slurmstepd into the step's cgroup
 *    (.../job_J/step_S); otherwise slurmstepd sits in slurmd's cgroup.
 *    Only reads: nothing here may need root.
 *  - task_init_privileged, in each task's process, root, before exec, once
 *    the verdict lets the step run: Slurm's step cgroup is tightened (local
 *    task 0), or each task makes sure memcore's own cgroup exists, limits it
 *    and moves itself into it.
 *  - task_exit, in slurmstepd after each task: an OOM kill is explained once
 *    per step; after the last task, the --memcore=explain line. slurmstepd's
 *    stderr is local task 0's stderr stream here, so slurm_spank_log reaches
 *    srun's stderr or the batch output file.
 *  - exit, in slurmstepd, root: memcore's own cgroup is removed.
 *
 * A failure never stops the step: one warning on task 0's stderr, and the
 * step runs as Slurm set it up.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "mc_cgroup.h"
#include "mc_memstat.h"
#include "mc_parse.h"
#include "mc_plugin.h"
#include "mc_tmpfs.h"
#include "mc_step.h"

/* rmdir of memcore's own cgroup waits this long for the last task's
 * processes to be gone (slurmstepd has killed them by exit). */
#define RMDIR_TRIES 50
#define RMDIR_WAIT_NS 20000000L
/* After an OOM explanation: time for slurmstepd's I/O thread to forward it
 * to srun before the task's exit status goes out. */
#define OOM_IO_WAIT_NS 300000000L

static const char *limit_file(int version)
{
	return version == 1 ? "memory.limit_in_bytes" : "memory.max";
}

int mc_enforce_user_init(struct mc_plugin *p, spank_t sp)
{
	struct mc_enforce *e = &p->enf;
	struct mc_policy pol;
	struct mc_step s;
	struct mc_cgroup cg;
	char err[MC_ERR_MAX], token[16], steprel[PATH_MAX];
	uint32_t n = 0;

	memset(e, 0, sizeof(*e));
	/* The step as slurmstepd read it once (mc_stepd.c). */
	if (!mc_stepd_step(p, sp) || mc_step_ignored(&p->step))
		return 0;
	s = p->step;
	mc_config_policy(&p->cfg, s.partition, &pol);
	/* A broken policy is reported by the verdict; no limit without one.
	 * No memory figure (0: "the whole node") leaves nothing to hold. */
	if (p->cfg_err[0] || pol.mode == MC_MODE_OFF || !pol.cgroup_memory ||
	    !s.mem_mb)
		return 0;
	snprintf(e->step_name, sizeof(e->step_name), "%s", s.step_name);
	snprintf(e->mem_source, sizeof(e->mem_source), "%s", s.mem_source);
	e->limit_bytes = s.mem_mb << 20;
	if (spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &n) == ESPANK_SUCCESS)
		e->local_tasks = n;
	if (mc_cgroup_find(NULL, 0, &cg, err, sizeof(err)) < 0) {
		snprintf(e->warning, sizeof(e->warning), "memcore: step %s: "
			 "cannot find the step's memory cgroup (%s); the step "
			 "runs without memcore's memory limit", s.step_name,
			 err);
		return 0;
	}
	if (s.step_id == SLURM_BATCH_SCRIPT)
		snprintf(token, sizeof(token), "batch");
	else
		snprintf(token, sizeof(token), "%" PRIu32, s.step_id);
	e->version = cg.version;
	snprintf(e->mount, sizeof(e->mount), "%s", cg.mount);
	if (mc_cgroup_slurm_step(cg.rel, s.job_id, token, steprel,
				 sizeof(steprel)) == 0) {
		/* Slurm's task/cgroup made the step's cgroup. */
		snprintf(e->scope, sizeof(e->scope), "%s%s", cg.mount,
			 steprel);
		/* slurmstepd itself is in it (v1: step_S, v2: step_S/slurm). */
		e->stepd_inside = true;
		if (mc_memstat_oom_kills(e->scope, e->version, &e->oom_start,
					 err, sizeof(err)) < 0)
			e->oom_start = 0;
	} else {
		/* Nobody limits the step: memcore's own cgroup, a child of
		 * the one slurmstepd is in, so it stays inside whatever
		 * holds slurmd and its steps. */
		e->own = true;
		snprintf(e->parent, sizeof(e->parent), "%s", cg.dir);
		snprintf(e->name, sizeof(e->name), "memcore_%" PRIu32 "_%s",
			 s.job_id, token);
		snprintf(e->scope, sizeof(e->scope), "%s/%s", cg.dir,
			 e->name);
		/* A leftover of an earlier run of this job id counts from
		 * where it is. */
		if (mc_memstat_oom_kills(e->scope, e->version, &e->oom_start,
					 err, sizeof(err)) < 0)
			e->oom_start = 0;
	}
	e->active = true;
	return 0;
}

/* Lower `file` in scope to limit when it is above it: never raise. */
static int tighten(const struct mc_enforce *e, const char *file,
		   uint64_t limit, bool *changed, char *err, size_t len)
{
	char buf[64];
	uint64_t cur;
	int fd = mc_cgroup_open_within(e->scope, file, O_RDONLY, err, len);
	ssize_t n;

	*changed = false;
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0) {
		snprintf(err, len, "%s/%s: cannot read it", e->scope, file);
		return -1;
	}
	buf[n] = '\0';
	if (mc_memstat_parse_limit(buf, &cur) < 0) {
		snprintf(err, len, "%s/%s: '%s' is not a byte count", e->scope,
			 file, buf);
		return -1;
	}
	if (cur <= limit)
		return 0;
	*changed = true;
	return mc_cgroup_write_u64(e->scope, file, limit, err, len);
}

/* Swap off for the step: whenever the step's memory is limited and nobody
 * (Slurm's ConstrainSwapSpace) limited its swap, memory+swap = memory
 * (v1) or swap.max = 0 (v2). A GPU step that swaps runs many times slower
 * while the node thrashes; killed with an explanation, it can be fixed. A
 * swap limit someone set is left as it is. */
static void swap_off(const struct mc_enforce *e)
{
	char err[MC_ERR_MAX];
	bool changed;

	if (e->version == 1) {
		struct mc_memstat m;
		char buf[64];
		uint64_t lim;
		int fd = mc_cgroup_open_within(e->scope, "memory.limit_in_bytes",
					       O_RDONLY, err, sizeof(err));
		ssize_t n;

		if (fd < 0)
			return;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			return;
		buf[n] = '\0';
		if (mc_memstat_parse_limit(buf, &lim) < 0 ||
		    lim == MC_MEM_UNLIMITED)
			return;
		/* swapaccount=0 kernels have no memsw files: nothing to do. */
		if (mc_memstat_read(e->scope, NULL, &m, err, sizeof(err)) < 0 ||
		    m.swap_limit_bytes != MC_MEM_UNLIMITED)
			return;
		tighten(e, "memory.memsw.limit_in_bytes", lim, &changed, err,
			sizeof(err));
	} else {
		struct mc_memstat m;

		if (mc_memstat_read(e->scope, NULL, &m, err, sizeof(err)) < 0 ||
		    m.swap_limit_bytes != MC_MEM_UNLIMITED)
			return;
		mc_cgroup_write(e->scope, "memory.swap.max", "0", err,
				sizeof(err));
	}
}

/*
 * Slurm 22.05 charges slurmstepd to the step's memory cgroup (it moves
 * itself into step_S before user_init) and, in _fork_all_tasks, drops its
 * own oom_score_adj from -1000 to 0 so that the tasks inherit 0; only
 * SLURMSTEPD_OOM_ADJ raises it again. When shared memory, which no kill
 * frees, fills the step, the OOM killer then picks slurmstepd (its RSS is
 * larger than that of a writer whose pages sit in tmpfs): srun hangs, the
 * step is never cleaned up and nobody explains (seen on the test machine).
 * Each task runs task_init_privileged right after its own fork, so only the
 * last local task knows that every task is forked: it gives its parent back
 * -1000 then, which changes no task's score. Needs CAP_SYS_RESOURCE (the
 * test VM's sandbox lacks it: EACCES, logged at debug level).
 */
static void protect_stepd(const struct mc_enforce *e)
{
	char path[64], comm[32];
	pid_t pp = getppid();
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pp);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, comm, sizeof(comm) - 1);
	close(fd);
	if (n <= 0)
		return;
	comm[n] = '\0';
	if (strcmp(comm, "slurmstepd\n"))
		return;
	snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", (int)pp);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (write(fd, "-1000", 5) != 5)
		slurm_debug("memcore: job %s: cannot protect slurmstepd from "
			   "the OOM killer: %m", e->step_name);
	close(fd);
}

static void warn_task0(int task_id, const struct mc_enforce *e,
		       const char *what, const char *err)
{
	if (task_id != 0)
		return;
	slurm_spank_log("memcore: step %s: %s (%s); the step runs without "
			"memcore's memory limit", e->step_name, what, err);
	slurm_info("memcore: job %s: %s: %s", e->step_name, what, err);
}

void mc_enforce_task_init_privileged(struct mc_plugin *p, spank_t sp,
				     int task_id)
{
	struct mc_enforce *e = &p->enf;
	char err[MC_ERR_MAX];
	bool changed;
	int created;

	if (e->warning[0] && task_id == 0) {
		slurm_spank_log("%s", e->warning);
		slurm_info("%s", e->warning);
	}
	if (!e->active)
		return;
	if (!e->own) {
		/* Slurm's limit holds for every task already; one task is
		 * enough to tighten it. */
		if (e->stepd_inside && e->local_tasks &&
		    (uint32_t)task_id == e->local_tasks - 1)
			protect_stepd(e);
		if (task_id != 0)
			return;
		if (tighten(e, limit_file(e->version), e->limit_bytes,
			    &changed, err, sizeof(err)) < 0) {
			warn_task0(task_id, e, "cannot tighten Slurm's memory "
				   "limit", err);
			return;
		}
		if (changed) {
			char b[32];

			slurm_info("memcore: job %s: memory limit of %s "
				   "tightened to %s", e->step_name, e->scope,
				   mc_fmt_bytes(e->limit_bytes, b, sizeof(b)));
			/* A soft limit (v1) or high mark (v2) above the hard
			 * one means nothing; keep them coherent. */
			tighten(e, e->version == 1 ? "memory.soft_limit_in_bytes"
				: "memory.high", e->limit_bytes, &changed, err,
				sizeof(err));
		}
		swap_off(e);
		return;
	}
	/* memcore's own cgroup: every task makes sure it exists and is
	 * limited before it moves in (tasks start in any order); the writes
	 * are the same each time. */
	if (mc_cgroup_mkdir(e->parent, e->name, &created, err,
			    sizeof(err)) < 0) {
		warn_task0(task_id, e, errno == EROFS
			   ? "the cgroup tree is read-only"
			   : "cannot create a memory cgroup for the step", err);
		return;
	}
	if (mc_cgroup_write_u64(e->scope, limit_file(e->version),
				e->limit_bytes, err, sizeof(err)) < 0) {
		warn_task0(task_id, e, errno == ENOENT
			   ? "no memory controller in the step's cgroup"
			   : "cannot set the step's memory limit", err);
		return;
	}
	swap_off(e);
	if (mc_cgroup_write_u64(e->scope, "cgroup.procs", (uint64_t)getpid(),
				err, sizeof(err)) < 0)
		warn_task0(task_id, e, "cannot move the task into its memory "
			   "cgroup", err);
}

/* The explanation of an OOM kill, on task 0's stderr (slurmstepd's). */
static void explain_oom(const struct mc_enforce *e, uint64_t kills,
			const struct mc_memstat *m)
{
	char lim[32], at[32], anon[32], shm[32], file[32], more[32];
	char where[160];	/* the node's tmpfs mounts (mc_tmpfs.h) */
	uint64_t limit = m->limit_bytes != MC_MEM_UNLIMITED ? m->limit_bytes
							     : e->limit_bytes;
	/* The victim's memory is gone by now: what the step held at the
	 * kill is its peak (use hits the limit when the kernel gives up
	 * reclaiming), and shared memory survives the kill in /dev/shm or
	 * tmpfs, so the rest of the peak was anonymous. */
	uint64_t peak = m->peak_bytes && m->peak_bytes < limit ? m->peak_bytes
							       : limit;
	uint64_t shmem = m->shmem_bytes < peak ? m->shmem_bytes : peak;
	uint64_t anon_est = peak - shmem;
	bool shm_big = shmem > anon_est;

	if (m->anon_bytes > anon_est)
		anon_est = m->anon_bytes;
	slurm_spank_log("memcore: step %s was killed for memory (%" PRIu64
			" OOM kill%s): its non-reclaimable memory reached "
			"the limit of %s (%s)", e->step_name, kills,
			kills == 1 ? "" : "s",
			mc_fmt_bytes(limit, lim, sizeof(lim)), e->mem_source);
	slurm_spank_log("  non-reclaimable  about %s at the kill: anon %s "
			"(process memory: heap, tensors, DataLoader "
			"batches), shmem %s (files in tmpfs: %s; pinned "
			"buffers)", mc_fmt_bytes(peak, at, sizeof(at)),
			mc_fmt_bytes(anon_est, anon, sizeof(anon)),
			mc_fmt_bytes(shmem, shm, sizeof(shm)),
			mc_tmpfs_where(where, sizeof(where)));
	slurm_spank_log("  not counted      %s of file pages (page cache, "
			"memory-mapped files): the kernel reclaims them "
			"before it kills", mc_fmt_bytes(m->file_bytes, file,
							sizeof(file)));
	mc_fmt_mem_option(limit * 2, more, sizeof(more));
	if (shm_big)
		slurm_spank_log("  fix: most of it was shared memory: delete "
				"what the job leaves in tmpfs (%s), use less "
				"of "
				"it (a DataLoader with fewer workers, a smaller "
				"pinned-memory pool), or ask for more with "
				"--mem (e.g. --mem=%s)", where, more);
	else
		slurm_spank_log("  fix: ask for more with --mem (e.g. "
				"--mem=%s), or use less: fewer DataLoader "
				"workers (--dataloader-workers), smaller "
				"batches; less data in tmpfs (%s)", more,
				where);
	slurm_info("memcore: job %s: %" PRIu64 " OOM kill(s), limit %s, "
		   "peak %s, anon ~%s, shmem %s, file %s", e->step_name, kills,
		   lim, at, anon, shm, file);
}

static void explain_line(const struct mc_enforce *e,
			 const struct mc_memstat *m)
{
	char nr[32], anon[32], shm[32], use[32], file[32], peak[32],
	     lim[32];

	slurm_spank_log("memcore: step %s memory at its end: %s "
			"non-reclaimable (anon %s, shmem %s) of %s in use, "
			"%s of it reclaimable file pages; peak %s (file "
			"pages included), limit %s",
			e->step_name,
			mc_fmt_bytes(m->non_reclaimable_bytes, nr, sizeof(nr)),
			mc_fmt_bytes(m->anon_bytes, anon, sizeof(anon)),
			mc_fmt_bytes(m->shmem_bytes, shm, sizeof(shm)),
			mc_fmt_bytes(m->usage_bytes, use, sizeof(use)),
			mc_fmt_bytes(m->file_bytes, file, sizeof(file)),
			m->peak_bytes ? mc_fmt_bytes(m->peak_bytes, peak,
						     sizeof(peak))
				      : "unknown",
			m->limit_bytes == MC_MEM_UNLIMITED ? "none"
			: mc_fmt_bytes(m->limit_bytes, lim, sizeof(lim)));
}

int mc_enforce_task_exit(struct mc_plugin *p, spank_t sp)
{
	struct mc_enforce *e = &p->enf;
	struct mc_memstat m;
	char err[MC_ERR_MAX];
	uint64_t kills = 0;
	bool last;

	if (!e->active)
		return 0;
	e->exited++;
	last = e->local_tasks && e->exited >= e->local_tasks;
	/* Cheap first: the count alone, a few small files. */
	if (!e->explained &&
	    mc_memstat_oom_kills(e->scope, e->version, &kills, err,
				 sizeof(err)) == 0 && kills > e->oom_start) {
		e->explained = true;
		if (mc_memstat_read(e->scope, e->mount, &m, err,
				    sizeof(err)) == 0) {
			struct timespec ts = { 0, OOM_IO_WAIT_NS };

			explain_oom(e, kills - e->oom_start, &m);
			/* slurmstepd sends the task's exit status to srun when
			 * this hook returns; srun stops reading the step's
			 * output when its last task was killed ("Force
			 * Terminated"), which could beat the I/O thread
			 * forwarding these lines. Only after an OOM kill. */
			nanosleep(&ts, NULL);
		}
	}
	if (last && (p->opts.mode & MC_USER_EXPLAIN) &&
	    mc_memstat_read(e->scope, e->mount, &m, err, sizeof(err)) == 0)
		explain_line(e, &m);
	return 0;
}

int mc_enforce_exit(struct mc_plugin *p, spank_t sp)
{
	struct mc_enforce *e = &p->enf;
	char err[MC_ERR_MAX];
	struct timespec ts = { 0, RMDIR_WAIT_NS };

	if (!e->active || !e->own)
		return 0;
	for (int i = 0; i < RMDIR_TRIES; i++) {
		if (mc_cgroup_rmdir(e->parent, e->name, err, sizeof(err)) == 0)
			return 0;
		if (errno != EBUSY)
			break;
		nanosleep(&ts, NULL);
	}
	slurm_error("memcore: job %s: cannot remove its memory cgroup: %s",
		    e->step_name, err);
	return 0;
}
