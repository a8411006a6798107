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
 *    cgroup v2 (Slurm's cgroup/v2, seen on 24.11 in a guest): slurmstepd
 *    sits in ".../<step>/slurm" and the tasks go to ".../<step>/user/task_T"
 *    (or "user/task_special"); Slurm's step limit is on ".../<step>/user",
 *    so that is the step's cgroup, and slurmstepd is never under it.
 *  - task_init_privileged, in each task's process, root, before exec, once
 *    the verdict lets the step run: Slurm's step cgroup is tightened (local
 *    task 0). On Slurm 24.11 this runs before slurmstepd has moved the task
 *    into its cgroup, so nothing here may move a task.
 *  - task_post_fork, in slurmstepd, root, after Slurm has placed each task
 *    in its cgroups and before the task may exec: memcore's own cgroup is
 *    made (first task, exclusively: never one that exists) next to the
 *    task's cgroup, limited, and each task is moved into it. A name an
 *    earlier run of the job still holds (a requeued job, whose processes
 *    outlived its first run) is never joined: the run takes the next name
 *    (mc_owncg.h); with every name held the step is refused, never run
 *    without its limit.
 *  - task_exit, in slurmstepd after each task: an OOM kill is explained once
 *    per step; after the last task, the --memcore=explain line, and
 *    memcore's own cgroup is removed at once. slurmstepd's stderr is local
 *    task 0's stderr stream here, so slurm_spank_log reaches srun's stderr
 *    or the batch output file.
 *  - exit, in slurmstepd, root: the own cgroup when a process of the step
 *    was still in it at the last task_exit (a short back-off); one that a
 *    process outlives (escaped the step) is left to the next step on the
 *    node, which removes the empty, unheld ones of memcore's names it
 *    finds beside its own (mc_owncg_sweep).
 *
 * A failure never stops the step (one warning on task 0's stderr, and the
 * step runs as Slurm set it up), except that every name of the own cgroup
 * is held by earlier runs: that refuses the step.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "mc_cgroup.h"
#include "mc_enforce.h"
#include "mc_memstat.h"
#include "mc_owncg.h"
#include "mc_parse.h"
#include "mc_stepcg.h"
#include "mc_summary.h"
#include "mc_tmpfs.h"
#include "mc_util.h"
#include "mc_log.h"

/* At exit, rmdir of memcore's own cgroup retries while a process of the
 * step is still leaving it: 50 us, doubling, about 3 ms in all at most;
 * then it is left to the next step's sweep (never a wait that grows). */
#define RMDIR_TRIES 7
#define RMDIR_FIRST_WAIT_NS 50000L
/* Where slurmstepd cannot be protected (no CAP_SYS_RESOURCE), each task
 * of a step whose cgroup also charges slurmstepd raises its own
 * oom_score_adj to this (raising needs no privilege): the OOM killer's
 * score then adds the whole limit to every task, so it picks a task, never
 * slurmstepd, while a task is left. */
#define TASK_OOM_SCORE_ADJ "1000"
/* After an OOM explanation: time for slurmstepd's I/O thread to forward it
 * to srun before the task's exit status goes out. */
#define OOM_IO_WAIT_NS 300000000L

/* Microseconds since t0 (CLOCK_MONOTONIC), for the debug lines that say
 * what the own cgroup costs a launch. */
static long us_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000000L +
	       (t.tv_nsec - t0->tv_nsec) / 1000;
}

void mc_enforce_slurmd_sweep(void)
{
	struct mc_cgroup cg, dir;
	char err[MC_ERR_MAX];
	int n;

	/* slurmstepd starts where slurmd is (v1: slurmd's memory cgroup;
	 * v2: <scope>/slurmd, and slurmstepd without task/cgroup in
	 * <scope>/system) and makes its own beside that: in the same
	 * place as seen from slurmd. */
	if (mc_cgroup_find(NULL, 0, &cg, err, sizeof(err)) < 0 ||
	    mc_stepcg_own_parent(&cg, &dir, err, sizeof(err)) < 0)
		return;
	n = mc_owncg_sweep(&dir, NULL);
	if (n > 0)
		mc_log_info("memcore: removed %d empty memcore cgroup%s "
			    "(memcore_<job>, memcore_<job>_<step>) left in %s "
			    "by ended jobs and steps", n, n == 1 ? "" : "s",
			    dir.dir);
}

void mc_enforce_job_epilog(uint32_t job_id)
{
	struct mc_cgroup cg, dir;
	char err[MC_ERR_MAX], name[32];

	/* The epilog runs where slurmd is, so it finds the place as the
	 * slurmd sweep does. */
	if (mc_cgroup_find(NULL, 0, &cg, err, sizeof(err)) < 0 ||
	    mc_stepcg_own_parent(&cg, &dir, err, sizeof(err)) < 0 ||
	    mc_owncg_job_name(job_id, name, sizeof(name)) < 0)
		return;
	if (!mc_owncg_job_leave(&dir, name, -1))
		mc_log_info("memcore: job %u: %s/%s is still in use at the job's "
			    "end (a process outlived it); the next step on this "
			    "node removes it once it is empty", job_id,
			    dir.dir, name);
}

void mc_enforce_user_init(struct mc_enforce *e, const struct mc_step *s,
			  const struct mc_decision *d, spank_t sp)
{
	struct mc_cgroup cg;
	char err[MC_ERR_MAX], token[16];
	uint32_t n = 0;

	memset(e, 0, sizeof(*e));
	e->lock_fd = e->job_lock_fd = -1;
	/* The decision says whether and to what (mc_decision.h): a refused
	 * or unchecked step, CgroupMemory=no, or no memory figure leave
	 * nothing to hold. */
	if (!d->enforce)
		return;
	mc_assert(d->limit_bytes && !d->refused);
	snprintf(e->step_name, sizeof(e->step_name), "%s", s->step_name);
	e->uid = s->uid;
	snprintf(e->mem_source, sizeof(e->mem_source), "%s", s->mem_source);
	e->limit_bytes = d->limit_bytes;
	if (spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &n) == ESPANK_SUCCESS)
		e->local_tasks = n;
	if (mc_cgroup_find(NULL, 0, &cg, err, sizeof(err)) < 0) {
		snprintf(e->warning, sizeof(e->warning), "memcore: step %s: "
			 "cannot find the step's memory cgroup (%s); the step "
			 "runs without memcore's memory limit", s->step_name,
			 err);
		return;
	}
	if (mc_stepcg_slurm_scope(&cg, s->job_id, s->step_id, &e->scope)) {
		/* v1: slurmstepd itself is in step_S. v2: slurmstepd is
		 * beside <step>/user but still under the job's limit, which
		 * Slurm sets to the same figure for a one-step job: an OOM
		 * there may pick it as on v1, so it is protected the same
		 * way. */
		e->stepd_inside = true;
	} else {
		/* Nobody limits the step: memcore's own cgroup, made beside
		 * the first task's cgroup at task_post_fork. */
		e->own = true;
		e->job_id = s->job_id;
		snprintf(e->token, sizeof(e->token), "%s",
			 mc_stepcg_token(s->step_id, token, sizeof(token)));
		mc_owncg_name(e->job_id, e->token, 0, e->name,
			      sizeof(e->name));
		/* Overlap steps each get their own allocation: the job's
		 * caps them all (mc_owncg.h). */
		uint64_t job_mb = 0;

		if (spank_get_item(sp, S_JOB_ALLOC_MEM, &job_mb) ==
		    ESPANK_SUCCESS && job_mb)
			e->job_limit_bytes = job_mb << 20;
	}
	if (!e->own && mc_memstat_oom_kills(&e->scope, &e->oom_start, err,
					    sizeof(err)) < 0)
		e->oom_start = 0;
	e->active = true;
}

bool mc_cap_sys_resource(void)
{
	char buf[4096];
	const char *p;
	unsigned long long eff;

	if (mc_read_at(AT_FDCWD, "/proc/self/status", buf, sizeof(buf)) < 0 ||
	    !(p = strstr(buf, "\nCapEff:")) ||
	    sscanf(p + 8, "%llx", &eff) != 1)
		return false;
	return (eff >> 24) & 1;	/* CAP_SYS_RESOURCE */
}

/*
 * Slurm 22.05 charges slurmstepd to the step's memory cgroup on v1 (it
 * moves itself into step_S before user_init) and, in _fork_all_tasks,
 * drops its own oom_score_adj from -1000 to 0 so that the tasks inherit
 * 0; only SLURMSTEPD_OOM_ADJ raises it again. When shared memory, which no
 * kill frees, fills the step, the OOM killer then picks slurmstepd (its
 * RSS is larger than that of a writer whose pages sit in tmpfs): srun
 * hangs, the step is never cleaned up and nobody explains (seen with
 * Slurm 22.05 on cgroup v1). On v2 slurmstepd is under the job's limit, which Slurm
 * sets to the step's for a one-step job. Two ways out, one per task:
 *  - with CAP_SYS_RESOURCE (needed to lower a score): the last local task
 *    (each task runs this right after its own fork, so only the last one
 *    knows that every task is forked) gives slurmstepd -1000 back, which
 *    changes no task's score;
 *  - without it (a sandbox, a container): each task raises its own score
 *    to TASK_OOM_SCORE_ADJ, which never needs a privilege, so that the
 *    kernel picks a task before slurmstepd. slurmd says so at its start.
 */
static void protect_stepd(const struct mc_enforce *e, int task_id)
{
	char path[64], comm[32];
	pid_t pp = getppid();
	int fd;

	if (!mc_cap_sys_resource()) {
		fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, TASK_OOM_SCORE_ADJ,
				    strlen(TASK_OOM_SCORE_ADJ)) < 0)
			mc_log_error("memcore: step %s: cannot raise the task's "
				     "oom_score_adj, and slurmstepd cannot be "
				     "protected from the OOM killer (no "
				     "CAP_SYS_RESOURCE): %m", e->step_name);
		if (fd >= 0)
			close(fd);
		return;
	}
	if (!e->local_tasks || (uint32_t)task_id != e->local_tasks - 1)
		return;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pp);
	if (mc_read_at(AT_FDCWD, path, comm, sizeof(comm)) <= 0 ||
	    strcmp(comm, "slurmstepd\n"))
		return;
	snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", (int)pp);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "-1000", 5) != 5)
		mc_log_error("memcore: step %s: cannot protect slurmstepd from "
			     "the OOM killer: %m", e->step_name);
	if (fd >= 0)
		close(fd);
}

/* A problem with the step's memory cgroup: on task 0's stderr (srun's, or
 * the batch output file) and in slurmd's log (info: slurm_error in a task
 * would print it to the user a second time). */
static void warn_step(const struct mc_enforce *e, const char *what,
		      const char *err)
{
	slurm_spank_log("memcore: step %s: %s (%s); the step runs without "
			"memcore's memory limit", e->step_name, what, err);
	mc_log_info("memcore: step %s: %s: %s", e->step_name, what, err);
}

void mc_enforce_task_init_privileged(struct mc_enforce *e, int task_id)
{
	char err[MC_ERR_MAX];
	bool changed;

	if (e->warning[0] && task_id == 0) {
		slurm_spank_log("%s", e->warning);
		mc_log_info("%s", e->warning);
	}
	/* memcore's own cgroup is made and joined at task_post_fork. */
	if (!e->active || e->own)
		return;
	/* Slurm's limit holds for every task already; one task is enough
	 * to tighten it. */
	if (e->stepd_inside)
		protect_stepd(e, task_id);
	if (task_id != 0)
		return;
	if (mc_stepcg_constrain(&e->scope, &(struct mc_cg_limits){
					MC_CG_MEM_LOWER, e->limit_bytes,
					MC_CG_SWAP_OFF }, &changed, err,
				sizeof(err)) < 0) {
		warn_step(e, "cannot tighten Slurm's memory limit", err);
		return;
	}
	if (changed) {
		char b[32];

		mc_log_info("memcore: step %s: memory limit of %s tightened to "
			    "%s", e->step_name, e->scope.dir,
			    mc_fmt_bytes(e->limit_bytes, b, sizeof(b)));
	}
}

/* Leave the job's cgroup (the step's own is gone or failed): the last
 * step of the job on the node removes it. */
static void own_leave_job(struct mc_enforce *e)
{
	if (e->job_lock_fd < 0)
		return;
	if (mc_owncg_job_leave(&e->top, e->job_name, e->job_lock_fd))
		mc_log_debug("memcore: step %s: %s/%s removed (the job's last "
			     "step here)", e->step_name, e->top.dir,
			     e->job_name);
	e->job_lock_fd = -1;
}

/* Join (or make) the job's own cgroup in e->top and cap it at the job's
 * allocation; the step's goes inside it (e->parent). Never raises a
 * limit: a job cgroup already capped lower keeps its limit. */
static int job_join(struct mc_enforce *e, const char **what, char *err,
		    size_t len)
{
	char b[32];
	bool made;

	*what = "cannot create the job's memory cgroup";
	if (mc_owncg_job_name(e->job_id, e->job_name, sizeof(e->job_name))
	    < 0 ||
	    mc_cgroup_child(&e->top, e->job_name, &e->parent) < 0) {
		snprintf(err, len, "%s: path too long", e->top.dir);
		return -1;
	}
	if (mc_owncg_job_join(&e->top, e->job_name, &e->job_lock_fd, &made,
			      err, len) < 0)
		return -1;
	if (mc_stepcg_own_enable(&e->parent, err, len) < 0) {
		*what = "no memory controller for the job's cgroup";
		own_leave_job(e);
		return -1;
	}
	if (!e->job_limit_bytes)
		return 0;
	/* A job limit that cannot be set (v1: EBUSY below an earlier run's
	 * use) leaves the step's own limit: said, never fatal. Swap is
	 * turned off by the step that makes it; later ones find it so. */
	if (mc_stepcg_constrain(&e->parent, &(struct mc_cg_limits){
					MC_CG_MEM_LOWER, e->job_limit_bytes,
					made ? MC_CG_SWAP_OFF_NEW
					     : MC_CG_SWAP_LEAVE }, NULL, err,
				len) < 0)
		mc_log_info("memcore: step %s: cannot cap the job's memory at "
			    "%s: %s", e->step_name,
			    mc_fmt_bytes(e->job_limit_bytes, b, sizeof(b)), err);
	return 0;
}

/* Make memcore's own cgroup where it may go beside the cgroup Slurm put
 * task `pid` in (mc_stepcg_own_parent), inside the job's, exclusively,
 * and limit it. */
static int own_make(struct mc_enforce *e, pid_t pid, const char **what,
		    char *err, size_t len)
{
	struct mc_cgroup t;

	*what = "cannot create a memory cgroup for the step";
	if (mc_cgroup_find(NULL, pid, &t, err, len) < 0 ||
	    mc_stepcg_own_parent(&t, &e->top, err, len) < 0)
		return -1;
	if (mc_stepcg_own_ready(&e->top, err, len) < 0) {
		*what = "no memory controller for the step's cgroup";
		return -1;
	}
	if (job_join(e, what, err, len) < 0)
		return -1;
	/* Other jobs' empty leftovers beside it, then this job's. */
	mc_owncg_sweep(&e->top, e->job_name);
	mc_owncg_sweep(&e->parent, e->name);
	/* A name an earlier run still holds (a requeued job's processes
	 * outlived it, or someone else's) is never joined: the next one. */
	for (unsigned run = 0;; run++) {
		int rc;

		if (run == MC_OWNCG_RUNS) {
			*what = "refused: every memory cgroup name of this "
				"step is held by processes of earlier runs of "
				"the job (requeued?)";
			snprintf(err, len, "%s/memcore_%" PRIu32 "_%s and "
				 "its %d later names; end those processes",
				 e->parent.dir, e->job_id, e->token,
				 MC_OWNCG_RUNS - 1);
			e->refused = true;
			return -1;
		}
		if (mc_owncg_name(e->job_id, e->token, run, e->name,
				  sizeof(e->name)) < 0)
			return -1;
		rc = mc_owncg_make(&e->parent, e->name, &e->lock_fd, err,
				   len);
		if (rc == 0)
			break;
		if (rc < 0) {
			if (errno == EROFS)
				*what = "the cgroup tree is read-only";
			return -1;
		}
		mc_log_info("memcore: step %s: %s/%s is in use (an earlier run "
			    "of the job, requeued?): never joined, the next "
			    "name", e->step_name, e->parent.dir, e->name);
	}
	if (mc_cgroup_child(&e->parent, e->name, &e->scope) < 0) {
		snprintf(err, len, "%s/%s: path too long", e->parent.dir,
			 e->name);
		return -1;
	}
	e->made = true;
	if (mc_stepcg_constrain(&e->scope, &(struct mc_cg_limits){
					MC_CG_MEM_SET, e->limit_bytes,
					MC_CG_SWAP_OFF_NEW }, NULL, err,
				len) < 0) {
		*what = errno == ENOENT
			? "no memory controller in the step's cgroup"
			: "cannot set the step's memory limit";
		if (mc_cgroup_rmdir(e->parent.dir, e->name, err + strlen(err),
				    0) == 0) {
			e->made = false;
			close(e->lock_fd);
			e->lock_fd = -1;
		}
		return -1;
	}
	return 0;
}

int mc_enforce_task_post_fork(struct mc_enforce *e, spank_t sp)
{
	char err[MC_ERR_MAX];
	const char *what;
	struct timespec t0;
	long made_us = 0;
	pid_t pid = 0;

	if (!e->active || !e->own || (e->failed && !e->refused))
		return 0;
	if (spank_get_item(sp, S_TASK_PID, &pid) != ESPANK_SUCCESS ||
	    pid <= 0)
		return 0;
	/* A refused step's tasks are killed before their exec (they wait
	 * for slurmstepd's go): srun reports them Killed and fails. Failing
	 * this hook instead makes slurmstepd abort the step without a task
	 * status, and srun exits 0 (seen on 22.05). */
	if (e->refused) {
		kill(pid, SIGKILL);	/* never runs without its limit */
		return 0;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!e->made) {
		if (own_make(e, pid, &what, err, sizeof(err)) < 0) {
			e->failed = true;
			if (e->refused) {
				/* The task waits for slurmstepd's go before
				 * its exec: it never runs its program. The
				 * user reads why at its task_exit. */
				snprintf(e->refusal, sizeof(e->refusal),
					 "memcore: step %s: %s: %s",
					 e->step_name, what, err);
				mc_log_error("%s", e->refusal);
				kill(pid, SIGKILL);
				return 0;
			}
			warn_step(e, what, err);
			return 0;
		}
		made_us = us_since(&t0);
	}
	if (mc_cgroup_attach(&e->scope, pid, err, sizeof(err)) < 0)
		warn_step(e, "cannot move the task into its memory cgroup",
			  err);
	/* The kernel's first move into any cgroup after a quiet spell waits
	 * for an RCU grace period (cgroup_threadgroup_rwsem): several ms on
	 * a small VM, the same for Slurm's own task/cgroup. */
	mc_log_debug("memcore: step %s: task %d into %s: made in %ld us, moved "
		     "in %ld us", e->step_name, (int)pid, e->scope.dir, made_us,
		     us_since(&t0) - made_us);
	return 0;
}

/* Remove memcore's own cgroup; tries > 1 backs off from 50 us while a
 * process of the step is still leaving it. Returns 0 when gone. */
static int own_remove(struct mc_enforce *e, int tries, char *err,
		      size_t len)
{
	long ns = RMDIR_FIRST_WAIT_NS;
	struct timespec t0;

	if (!e->made || e->removed)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < tries; i++) {
		struct timespec ts = { 0, ns };

		if (mc_cgroup_rmdir(e->parent.dir, e->name, err, len) == 0) {
			e->removed = true;
			close(e->lock_fd);
			e->lock_fd = -1;
			mc_log_debug("memcore: step %s: %s removed in %ld us "
				     "(%d tries)", e->step_name, e->scope.dir,
				     us_since(&t0), i + 1);
			return 0;
		}
		if (errno != EBUSY || i + 1 == tries)
			break;
		nanosleep(&ts, NULL);
		ns *= 2;
	}
	return -1;
}

/* The explanation of an OOM kill, on task 0's stderr (slurmstepd's). */
static void explain_oom(const struct mc_enforce *e, uint64_t kills,
			const struct mc_memstat *m)
{
	char lim[32], at[32], anon[32], shm[32], file[32], more[32];
	char where[160];	/* the job's tmpfs mounts (mc_tmpfs.h) */
	uint64_t limit = m->limit_bytes != MC_MEM_UNLIMITED ? m->limit_bytes
							     : e->limit_bytes;
	/* The victim's memory is gone by now: what the step held at the
	 * kill is its peak (use hits the limit when the kernel gives up
	 * reclaiming), and shared memory survives the kill in /dev/shm or
	 * tmpfs, so the rest of the peak was anonymous. */
	uint64_t peak = m->peak_bytes != MC_MEM_UNLIMITED && m->peak_bytes &&
			m->peak_bytes < limit ? m->peak_bytes
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
			mc_tmpfs_where(e->uid, where, sizeof(where)));
	slurm_spank_log("  not counted      %s of file pages (page cache, "
			"memory-mapped files): the kernel reclaims them "
			"before it kills", mc_fmt_bytes(m->file_bytes, file,
							sizeof(file)));
	/* The step stayed well below its own limit: what was reached is the
	 * job's, which all its steps on the node share (mc_owncg.h). */
	if (e->own && e->job_limit_bytes && m->peak_bytes != MC_MEM_UNLIMITED &&
	    m->peak_bytes < e->limit_bytes / 16 * 15) {
		char job[32];

		slurm_spank_log("  the job's limit of %s on this node (all its "
				"steps together, srun --overlap ones "
				"included) was reached: its other steps held "
				"the rest", mc_fmt_bytes(e->job_limit_bytes,
							 job, sizeof(job)));
	}
	/* The summary's own figure after a kill (mc_summary_oom_next): one
	 * answer, wherever the user reads it. */
	mc_fmt_mem_option(mc_summary_oom_next(limit, peak), more, sizeof(more));
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
	mc_log_info("memcore: step %s: %" PRIu64 " OOM kill(s), limit %s, "
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
			m->peak_bytes != MC_MEM_UNLIMITED
			? mc_fmt_bytes(m->peak_bytes, peak,
						     sizeof(peak))
				      : "unknown",
			m->limit_bytes == MC_MEM_UNLIMITED ? "none"
			: mc_fmt_bytes(m->limit_bytes, lim, sizeof(lim)));
}

int mc_enforce_task_exit(struct mc_enforce *e, bool explain, spank_t sp)
{
	struct mc_memstat m;
	char err[MC_ERR_MAX];
	uint64_t kills = 0;
	bool last;

	if (!e->active)
		return 0;
	e->exited++;
	last = e->local_tasks && e->exited >= e->local_tasks;
	if (e->refusal[0]) {
		struct timespec ts = { 0, OOM_IO_WAIT_NS };

		/* Once, and time for the I/O thread as after an OOM kill. */
		slurm_spank_log("%s", e->refusal);
		e->refusal[0] = '\0';
		nanosleep(&ts, NULL);
		return 0;
	}
	/* Cheap first: the count alone, a few small files. */
	if (!e->explained &&
	    mc_memstat_oom_kills(&e->scope, &kills, err, sizeof(err)) == 0 &&
	    kills > e->oom_start) {
		e->explained = true;
		if (mc_memstat_read(&e->scope, &m, err, sizeof(err)) == 0) {
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
	if (last && explain &&
	    mc_memstat_read(&e->scope, &m, err, sizeof(err)) == 0)
		explain_line(e, &m);
	/* Every task is reaped: the own cgroup goes now, without a wait;
	 * exit tries again if a process was still leaving it. */
	if (last && e->own && own_remove(e, 1, err, sizeof(err)) == 0)
		own_leave_job(e);
	return 0;
}

int mc_enforce_exit(struct mc_enforce *e)
{
	char err[MC_ERR_MAX];

	if (!e->active || !e->own)
		return 0;
	if (own_remove(e, RMDIR_TRIES, err, sizeof(err)) < 0)
		mc_log_info("memcore: step %s: its memory cgroup is still in "
			    "use (%s): a process outlived the step; the next "
			    "step on this node removes it once it is empty",
			    e->step_name, err);
	/* Unheld from here: a later step's sweep may take it once empty. */
	if (e->lock_fd >= 0) {
		close(e->lock_fd);
		e->lock_fd = -1;
	}
	own_leave_job(e);
	return 0;
}
