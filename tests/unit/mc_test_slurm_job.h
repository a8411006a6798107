/*
 * mc_test_slurm_job.h - a job's Slurm options written "name=value;..."
 * (names and values as cli_filter's slurm.json_cli_options() gives them,
 * mc_slurm_job_set) into a struct mc_slurm_job, for the unit tests that
 * feed Slurm's allocation model (test_slurm_alloc.c, test_decision.c).
 * A value the model cannot read fails the test with its message.
 */
#ifndef MC_TEST_SLURM_JOB_H
#define MC_TEST_SLURM_JOB_H

#include <stdio.h>
#include <string.h>

#include "mc_slurm_alloc.h"

static inline void job_of(const char *opts, struct mc_slurm_job *j)
{
	char buf[512], err[128];
	char *save = NULL;

	memset(j, 0, sizeof(*j));
	snprintf(buf, sizeof(buf), "%s", opts);
	for (char *kv = strtok_r(buf, ";", &save); kv;
	     kv = strtok_r(NULL, ";", &save)) {
		char *eq = strchr(kv, '=');

		assert_non_null(eq);
		*eq = '\0';
		if (mc_slurm_job_set(j, kv, eq + 1, err, sizeof(err)) < 0)
			fail_msg("%s=%s: %s", kv, eq + 1, err);
	}
}

#endif
