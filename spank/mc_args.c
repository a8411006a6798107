/*
 * mc_args.c - plugstack.conf arguments and the user's options.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/spank.h>

#include "mc_dataset.h"
#include "mc_iobench.h"
#include "mc_jobfiles.h"
#include "mc_plugin.h"
#include "mc_args.h"
#include "mc_step.h"
#include "mc_log.h"

/* The one instance the callbacks below reach (they get no context). */
static struct mc_plugin *cb_plugin;

void mc_plugin_configure(struct mc_plugin *p, int ac, char **av)
{
	mc_config_plugstack(&p->cfg, ac, av, mc_cache_default_path(),
			    p->cache_path, sizeof(p->cache_path), p->cfg_err,
			    sizeof(p->cfg_err));
}

/*
 * One callback for every option: in srun/sbatch/salloc a bad value is an
 * error that stops the command before anything is queued; in slurmstepd
 * (remote) it is kept and delivered with the verdict, because failing there
 * would fail the step before the user can be told why.
 */
static int option_cb(int val, const char *arg, int remote)
{
	char err[MC_ERR_MAX];

	if (!cb_plugin || val < 0 || val >= MC_OPT_COUNT)
		return -1;
	if (mc_opts_set(&cb_plugin->opts, (enum mc_opt_id)val, arg, false,
			err, sizeof(err)) == 0)
		return 0;
	if (!remote) {
		mc_log_error("memcore: %s", err);
		return -1;
	}
	if (!cb_plugin->opts_err[0])
		snprintf(cb_plugin->opts_err, sizeof(cb_plugin->opts_err),
			 "%s", err);
	return 0;
}

int mc_plugin_register_options(struct mc_plugin *p, spank_t sp)
{
	cb_plugin = p;
	for (int i = 0; i < MC_OPT_COUNT; i++) {
		spank_err_t rc;

		/* Names, value words and help come from the one option table
		 * the memcore command shares (policy/mc_opts.c). */
		snprintf(p->option_help[i], sizeof(p->option_help[i]),
			 "[memcore] %s (env %s)", mc_opt_help(i),
			 mc_opt_env(i));
		p->options[i] = (struct spank_option){
			.name = (char *)mc_opt_name(i),
			.arginfo = (char *)mc_opt_arginfo(i),
			.usage = p->option_help[i],
			/* 2: an optional value, "--dataset-in-memory" or
			 * "--dataset-in-memory=SIZE" (Slurm hands it to
			 * getopt_long as optional_argument). */
			.has_arg = mc_opt_value_optional(i) ? 2 : 1,
			.val = i,
			.cb = option_cb,
		};
		rc = spank_option_register(sp, &p->options[i]);

		/* Another plugin owning the name is the admin's to fix; the
		 * rest of memcore still works. */
		if (rc != ESPANK_SUCCESS)
			mc_log_error("memcore: cannot register --%s: %s",
				     p->options[i].name, spank_strerror(rc));
	}
	return 0;
}

int mc_plugin_env_defaults(struct mc_plugin *p, spank_t sp, bool remote,
			   char *err, size_t errlen)
{
	for (int i = 0; i < MC_OPT_COUNT; i++) {
		const char *name = mc_opt_env(i);
		char *got = NULL;
		const char *v = NULL;
		int rc;

		if (p->opts.set[i] && !p->opts.from_env[i])
			continue;
		/* Read whole in slurmstepd too: a value too long for a
		 * fixed buffer must not read as unset. */
		if (remote) {
			if (mc_step_getenv(sp, name, &got, err, errlen) < 0)
				return -1;
			v = got;
		} else {
			v = getenv(name);
		}
		/* One rule with `memcore check`: empty is unset, the
		 * command line wins, MC_OPT_VALUE_MAX. */
		rc = mc_opts_set_env(&p->opts, (enum mc_opt_id)i, v, err,
				     errlen);
		free(got);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/*
 * The dataset's filesystem and size, looked at here as the job's user
 * (mc_dataset.h), bounded; the figures travel in MEMCORE_DATASET_FACTS.
 * Nothing named: the variable is removed, so that an srun inside a batch
 * job never carries the batch script's figures for another dataset.
 * --dataset-in-memory without SIZE walks local paths too (the user asked
 * for their size), and a size that stays unknown stops the submission
 * here, saying to give SIZE.
 */
static int mc_plugin_dataset(struct mc_plugin *p, spank_t sp, char *err,
			     size_t errlen)
{
	static struct mc_dataset d;
	static char val[MC_DATASET_PATHS_MAX * (3 * MC_DATASET_PATH_MAX + 96)];
	bool measure = mc_opts_dataset_measured(&p->opts);
	uint64_t bytes;

	if (mc_dataset_paths(p->opts.set[MC_OPT_DATASET] ? p->opts.dataset
			     : NULL, getenv("HF_DATASETS_CACHE"),
			     getenv("HF_HOME"), &d, err, errlen) < 0)
		return -1;
	if (!d.n) {
		spank_unsetenv(sp, MC_DATASET_ENV);
		unsetenv(MC_DATASET_ENV);
		return measure ? mc_dataset_in_memory_bytes(&d, &bytes, err,
							    errlen) : 0;
	}
	mc_dataset_probe(&d, MC_DATASET_WALK_ENTRIES, MC_DATASET_WALK_MS,
			 measure);
	if (measure && mc_dataset_in_memory_bytes(&d, &bytes, err,
						  errlen) < 0)
		return -1;
	/* A figure the user measured on that filesystem (memcore iobench),
	 * from the user's own cache, read as the user: the note says it
	 * rather than the book's. */
	{
		char dir[1024];

		mc_iobench_known_fill(&d, mc_iobench_cache_dir(
			getenv("XDG_CACHE_HOME"), getenv("HOME"), dir,
			sizeof(dir)), getuid());
	}
	mc_dataset_format(&d, val, sizeof(val));
	if (spank_setenv(sp, MC_DATASET_ENV, val, 1) != ESPANK_SUCCESS &&
	    setenv(MC_DATASET_ENV, val, 1) != 0) {
		snprintf(err, errlen, "cannot set %s", MC_DATASET_ENV);
		return -1;
	}
	return 0;
}

int mc_plugin_job_files(struct mc_plugin *p, spank_t sp, char *err,
			size_t errlen)
{
	struct mc_jobfiles f;
	char val[1024];

	/* srun, sbatch and salloc run as the job's user: the kernel checks
	 * the user's permissions on these files (mc_jobfiles.h). */
	if (mc_jobfiles_load(&p->opts, &f, err, errlen) < 0)
		return -1;
	if (mc_jobfiles_check(&f, &p->opts, err, errlen) < 0)
		return -1;
	if (mc_plugin_dataset(p, sp, err, errlen) < 0)
		return -1;
	if (!f.has_ds && !f.has_model && !f.has_trainer)
		return 0;
	mc_jobfiles_format(&f, val, sizeof(val));
	/* The job's environment carries the figures to slurmstepd, which
	 * never opens the user's files. */
	if (spank_setenv(sp, MC_JOBFILES_ENV, val, 1) != ESPANK_SUCCESS &&
	    setenv(MC_JOBFILES_ENV, val, 1) != 0) {
		snprintf(err, errlen, "cannot set %s", MC_JOBFILES_ENV);
		return -1;
	}
	return 0;
}

int mc_args_init(struct mc_plugin *p, spank_t sp, int ac, char **av)
{
	p->ac = ac;
	p->av = av;
	p->configured = true;
	mc_plugin_configure(p, ac, av);
	return mc_plugin_register_options(p, sp);
}

int mc_args_init_post_opt(struct mc_plugin *p, spank_t sp)
{
	char err[MC_ERR_MAX];

	/* A bad MEMCORE_* variable stops the submission here, as a bad
	 * option does in its callback. Options that no policy accepts
	 * together (--offload without --zero-stage) stop it too: only here
	 * are all known. The job's own files are read here as the user,
	 * never by slurmstepd (root): a bad or unreadable one stops it; the
	 * options are checked with their figures (a --model-config gives
	 * --offload its parameters). */
	if (mc_plugin_env_defaults(p, sp, false, err, sizeof(err)) < 0 ||
	    (!mc_opts_name_files(&p->opts) &&
	     mc_opts_check(&p->opts, err, sizeof(err)) < 0) ||
	    mc_plugin_job_files(p, sp, err, sizeof(err)) < 0) {
		mc_log_error("memcore: %s", err);
		return -1;
	}
	return 0;
}
