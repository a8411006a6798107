/*
 * mc_slurmdb_compat.h - slurmdbd's job query as memcore asks it, the same
 * in `memcore report` (cli/) and the job epilog's copy of the records
 * (spank/mc_keepdbd.c), for the Slurm releases of mc_slurm_compat.h.
 */
#ifndef MC_SLURMDB_COMPAT_H
#define MC_SLURMDB_COMPAT_H

#include <stdint.h>
#include <string.h>

#include <slurm/slurm.h>
#include <slurm/slurmdb.h>

/* libslurm's list types by what its functions return: `List` up to 23.x,
 * `list_t *` later; neither name is needed. */
typedef __typeof__(slurmdb_jobs_get((void *)0, (void *)0)) mc_list;
typedef __typeof__(slurm_list_iterator_create((mc_list)0)) mc_list_iter;

/*
 * cond (zeroed here) selects job job_id in slurmdbd as `sacct -j JOB`
 * does: any step, array task or het component, whenever it ran, in any
 * state; of cluster (NULL: none named, slurmdbd takes the caller's own).
 * sel is the caller's and must outlive cond's use. The lists have no
 * destructor (libslurm's would xfree what is not its own): free them with
 * mc_job_cond_free. 0, or -1 (no memory; nothing to free).
 */
static inline int mc_job_cond_one(slurmdb_job_cond_t *cond,
				  slurm_selected_step_t *sel, uint32_t job_id,
				  const char *cluster)
{
	memset(cond, 0, sizeof(*cond));
	memset(sel, 0, sizeof(*sel));
	sel->array_task_id = NO_VAL;
	sel->het_job_offset = NO_VAL;
	sel->step_id.job_id = job_id;
	sel->step_id.step_id = NO_VAL;
	sel->step_id.step_het_comp = NO_VAL;
	if (!(cond->step_list = slurm_list_create(NULL)))
		return -1;
	slurm_list_append(cond->step_list, sel);
	if (cluster) {
		if (!(cond->cluster_list = slurm_list_create(NULL))) {
			slurm_list_destroy(cond->step_list);
			cond->step_list = NULL;
			return -1;
		}
		slurm_list_append(cond->cluster_list, (void *)cluster);
	}
	cond->db_flags = SLURMDB_JOB_FLAG_NOTSET;	/* any (0 matches none) */
	return 0;
}

static inline void mc_job_cond_free(slurmdb_job_cond_t *cond)
{
	if (cond->step_list)
		slurm_list_destroy(cond->step_list);
	if (cond->cluster_list)
		slurm_list_destroy(cond->cluster_list);
	cond->step_list = cond->cluster_list = NULL;
}

#endif
