/*
 * mc_jobenv.h - a variable's value in the environment a job will have,
 * as Slurm builds it from the submitting process's environment and the
 * job's --export and --export-file options. memcore's own variables
 * (MEMCORE_DATALOADER_WORKERS, ...) are read by the plugin from the
 * step's environment at launch; at submission (the cli_filter, `memcore
 * check --slurm-options`) they must be read from the environment the job
 * will get, not from sbatch's own. Pure: the caller passes the
 * environment as a lookup and the file's entries as strings.
 *
 * The rules, each from Slurm's source (22.05.8, 24.11.5, 26.05.3):
 *   sbatch (src/sbatch/sbatch.c main and _fill_job_desc_from_opts,
 *   src/common/env.c env_merge_filter and env_array_from_file): the job's
 *   environment starts as the --export-file's NAME=VALUE entries
 *   (NUL-separated), and with one sbatch has unset its own environment
 *   first (env_unset_environment, after the cli_filter ran), so that
 *   "the environment" below is then empty; then
 *     --export unset: the environment over the entries; from 26.05 the
 *       entries are dropped (the environment replaces them:
 *       env_array_exclude of SLURM_JWT);
 *     --export=ALL: the environment over them;
 *     --export=NONE, and NIL from 23.02.3: nothing (SLURM_* only);
 *     any other list, split at commas outside quotes (find_quote_token),
 *       left to right over the entries: ALL the environment, NAME=VALUE
 *       that value, NAME that variable when set.
 *   srun (src/srun/launch.c _build_user_env, 22.05's
 *   src/plugins/launch/slurm/launch_slurm.c): --export unset: the whole
 *   environment; else the list up to a NONE token, NAME=VALUE and NAME as
 *   above, and an ALL token anywhere merges the whole environment last,
 *   over the list's values. No --export-file.
 *   salloc: no --export; its shell, and the steps it runs, have the
 *   whole environment.
 * sbatch's NONE and lists also set SLURM_GET_USER_ENV, so that slurmd
 * adds the user's login environment at launch; a MEMCORE_* variable set
 * only there is not seen at submission (memcore(8) SUBMISSION).
 */
#ifndef MC_JOBENV_H
#define MC_JOBENV_H

#include <stdbool.h>
#include <stddef.h>

enum mc_submit_cmd { MC_SUBMIT_SBATCH, MC_SUBMIT_SRUN, MC_SUBMIT_SALLOC };

/* "sbatch", "srun" or "salloc" (cli_filter's options.type): 0, or -1. */
int mc_submit_cmd_parse(const char *s, enum mc_submit_cmd *cmd);

struct mc_jobenv {
	enum mc_submit_cmd cmd;
	const char *export_opt;		/* --export as given; NULL: not given */
	bool export_file;		/* an --export-file is given */
	/* its "NAME=VALUE" entries, each of its length (not NUL-terminated:
	 * mc_jobenv_file_entries) */
	const char *const *file;
	const size_t *file_lens;
	size_t nfile;
	/* The Slurm release whose rules apply, SLURM_VERSION_NUM form
	 * ((major << 16) | (minor << 8) | micro, e.g. 0x160508 for 22.05.8). */
	unsigned long slurm_version;
	/* The submitting process's environment: NAME's value or NULL. */
	const char *(*get)(const char *name, void *ctx);
	void *ctx;
};

/*
 * NAME's value in the job's environment by the rules above, or NULL when
 * the job will not have it. The value points into the environment or is
 * copied into buf (len bytes: a file's entry, a NAME=VALUE of --export,
 * its quotes removed); one longer than buf reads as unset (memcore's
 * values are short).
 */
const char *mc_jobenv_get(const struct mc_jobenv *e, const char *name,
			  char *buf, size_t len);

/* Whether slurmd adds the user's login environment (sbatch's NONE and
 * lists: SLURM_GET_USER_ENV). */
bool mc_jobenv_login(const struct mc_jobenv *e);

/*
 * Split an --export-file's text (len bytes, NUL-separated NAME=VALUE
 * entries, as env_array_from_file reads them: reading stops at the first
 * empty entry; a last entry without its NUL counts) into at most max
 * entries, each a pointer into text and its length. An entry without
 * '=' is skipped. Returns how many the text holds: more than max means
 * the rest were not kept.
 */
size_t mc_jobenv_file_entries(const char *text, size_t len,
			      const char **entries, size_t *lens, size_t max);

#endif
