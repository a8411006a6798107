/*
 * mc_slurm_compat.h - the libslurm calls memcore makes whose form changed
 * between the Slurm releases it is built against (SLURM_VERSION_NUMBER of
 * the <slurm/slurm.h> it is compiled with). Checked against the headers of
 * 22.05.8 (Debian 12), 24.11.5 (Debian 13) and 26.05.5 (sid), in the guest
 * tier's root filesystems; the release that made each change is taken from
 * Slurm's release notes, not compiled here.
 */
#ifndef MC_SLURM_COMPAT_H
#define MC_SLURM_COMPAT_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include <slurm/slurm.h>

/* A hostlist handle: a pointer typedef up to 23.02 (`hostlist_t`), a
 * struct typedef used by pointer from 23.11 (`hostlist_t *`). */
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 11, 0)
typedef hostlist_t *mc_hostlist_t;
#else
typedef hostlist_t mc_hostlist_t;
#endif

/* Send SIGKILL to step job_id.step_id: (job, step, signal) in 22.05,
 * (job, step, signal, flags) from 23.02, a slurm_step_id_t from 25.05.
 * Returns what slurm_kill_job_step returns (0, or -1 with errno). */
static inline int mc_kill_job_step(uint32_t job_id, uint32_t step_id)
{
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 5, 0)
	slurm_step_id_t id = {
		.job_id = job_id,
		.step_het_comp = NO_VAL,
		.step_id = step_id,
	};

	return slurm_kill_job_step(&id, SIGKILL, 0);
#elif SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 2, 0)
	return slurm_kill_job_step(job_id, step_id, SIGKILL, 0);
#else
	return slurm_kill_job_step(job_id, step_id, SIGKILL);
#endif
}

/* The count of one GRES on this node, as slurmd (and, from it,
 * slurmstepd) holds it: libslurm's gres_get_system_cnt, not in the public
 * headers but exported under the slurm_ alias in every release here;
 * (name) up to 24.11, (name, case_insensitive) from 25.05 (checked in the
 * 24.11.5 and 25.05.0 sources). NO_VAL64 when no gres plugin has that
 * name (gres/shard not in GresTypes). */
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 5, 0)
extern uint64_t slurm_gres_get_system_cnt(char *name, bool case_insensitive);
static inline uint64_t mc_gres_system_cnt(const char *name)
{
	return slurm_gres_get_system_cnt((char *)name, false);
}
#else
extern uint64_t slurm_gres_get_system_cnt(char *name);
static inline uint64_t mc_gres_system_cnt(const char *name)
{
	return slurm_gres_get_system_cnt((char *)name);
}
#endif

/* The job calls of `memcore report`, mc_keep.c and the multi-node kill.
 * Up to 24.11 (Debian 13's) a job is named by its id: slurm_load_job(resp,
 * job_id, flags), job_desc_msg_t.job_id; 26.05 (sid's) names it by a
 * slurm_step_id_t (load, job_desc_msg_t.step_id). Which release between
 * them changed it is not checked here: 25.05 is taken, as for
 * slurm_kill_job_step. mc_load_job returns what slurm_load_job returns (0,
 * or -1 with errno); free *resp with slurm_free_job_info_msg. */
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 5, 0)
static inline int mc_load_job(job_info_msg_t **resp, uint32_t job_id)
{
	slurm_step_id_t id = {
		.job_id = job_id,
		.step_het_comp = NO_VAL,
		.step_id = NO_VAL,
	};

	return slurm_load_job(resp, id, SHOW_ALL);
}
#define MC_JOB_DESC_SET_ID(d, id) ((d)->step_id.job_id = (id))
#else
static inline int mc_load_job(job_info_msg_t **resp, uint32_t job_id)
{
	return slurm_load_job(resp, job_id, SHOW_ALL);
}
#define MC_JOB_DESC_SET_ID(d, id) ((d)->job_id = (id))
#endif

/* A job's steps (memcore report on a running job): slurm_get_job_steps(
 * update_time, job_id, step_id, resp, flags) up to 24.11, (slurm_step_id_t
 * *, resp, flags) in 26.05 (sid's headers), 25.05 taken as above. Returns
 * what slurm_get_job_steps returns (0, or -1 with errno); free *resp with
 * slurm_free_job_step_info_response_msg. */
static inline int mc_get_job_steps(uint32_t job_id,
				   job_step_info_response_msg_t **resp)
{
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 5, 0)
	slurm_step_id_t id = {
		.job_id = job_id,
		.step_het_comp = NO_VAL,
		.step_id = NO_VAL,
	};

	return slurm_get_job_steps(&id, resp, SHOW_ALL);
#else
	return slurm_get_job_steps((time_t)0, job_id, NO_VAL, resp, SHOW_ALL);
#endif
}

/*
 * Free what mc_load_job gave. Slurm 22.05.8's slurm_free_job_info_members
 * frees every string of a job record but admin_comment (its disassembly
 * never touches that field; seen under ASan in slurmstepd: each step
 * whose summary mc_keep.c read back leaked the AdminComment, 17 bytes
 * more than the text, make integration-asan). memcore frees it first and
 * clears it, so that a release that frees it too sees NULL (xfree(NULL)
 * is nothing). slurm_xfree_ptr is libslurm's xfree of a pointer value;
 * weak, so that a libslurm without it leaks as before instead of failing
 * to load memcore.
 */
extern void slurm_xfree_ptr(void *ptr) __attribute__((weak));
static inline void mc_free_job_info_msg(job_info_msg_t *m)
{
	if (!m)
		return;
	for (uint32_t i = 0; slurm_xfree_ptr && m->job_array &&
	     i < m->record_count; i++) {
		slurm_xfree_ptr(m->job_array[i].admin_comment);
		m->job_array[i].admin_comment = NULL;
	}
	slurm_free_job_info_msg(m);
}

/*
 * Free what slurm_load_ctl_conf() gave: slurm_free_ctl_conf() up to 24.11
 * (Debian 13's headers have it), slurm_free_conf() in 26.05 (sid's have
 * only that). Both weak, so that whichever this libslurm defines is
 * called, whatever release in between renamed it.
 */
extern void slurm_free_ctl_conf(slurm_conf_t *conf) __attribute__((weak));
extern void slurm_free_conf(slurm_conf_t *conf) __attribute__((weak));
static inline void mc_free_ctl_conf(slurm_conf_t *conf)
{
	if (slurm_free_conf)
		slurm_free_conf(conf);
	else if (slurm_free_ctl_conf)
		slurm_free_ctl_conf(conf);
}

#endif
