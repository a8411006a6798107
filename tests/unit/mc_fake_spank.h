/*
 * mc_fake_spank.h - slurmstepd as a table, for the tests that compile
 * spank/mc_step.c in (test_step.c, test_decision.c): what a SPANK plugin
 * asks of slurmstepd at launch (spank_getenv for the job's environment,
 * spank_get_item for the step's items) and libslurm's hostlist
 * (mc_hostlist_nth, in mc_nodes.c) answer from `fake` instead, so that a
 * test sets exactly what Slurm would give one step on one node.
 *
 * Include it once per test binary, after "../../spank/mc_step.c": the
 * three functions are the real ones' definitions (slurm/spank.h and
 * mc_step.h declare them extern, so they cannot be static here).
 */
#ifndef MC_FAKE_SPANK_H
#define MC_FAKE_SPANK_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include <slurm/spank.h>

/* Variables a test may set at once (the last slot stays the end mark). */
#define MC_FAKE_ENV_MAX 32

/* The fake step: the job's environment and slurmstepd's items. */
static struct {
	const char *env[MC_FAKE_ENV_MAX][2];	/* name, value; the values
						 * are the test's to keep */
	uint32_t job_id, step_id, nnodes, node_id;
	uint32_t local_tasks;		/* S_JOB_LOCAL_TASK_COUNT */
	int task_id;
	uint64_t step_mem, job_mem;		/* MB, as Slurm gives them */
	const char *step_cores, *job_cores;	/* core lists; NULL: none */
	/* S_JOB_UID/S_JOB_GID: answered only when ids is set, so that a
	 * test that does not set them reads them as unknown. */
	bool ids;
	uid_t uid;
	gid_t gid;
} fake;

spank_err_t spank_getenv(spank_t sp, const char *var, char *buf, int len)
{
	for (int i = 0; i < MC_FAKE_ENV_MAX && fake.env[i][0]; i++) {
		if (strcmp(fake.env[i][0], var))
			continue;
		if ((int)strlen(fake.env[i][1]) >= len)
			return ESPANK_NOSPACE;
		strcpy(buf, fake.env[i][1]);
		return ESPANK_SUCCESS;
	}
	return ESPANK_ENV_NOEXIST;
}

spank_err_t spank_get_item(spank_t sp, spank_item_t item, ...)
{
	va_list ap;
	spank_err_t rc = ESPANK_SUCCESS;

	va_start(ap, item);
	switch (item) {
	case S_JOB_ID:
		*va_arg(ap, uint32_t *) = fake.job_id;
		break;
	case S_JOB_STEPID:
		*va_arg(ap, uint32_t *) = fake.step_id;
		break;
	case S_JOB_NNODES:
		*va_arg(ap, uint32_t *) = fake.nnodes;
		break;
	case S_TASK_ID:
		*va_arg(ap, int *) = fake.task_id;
		break;
	case S_JOB_NODEID:
		*va_arg(ap, uint32_t *) = fake.node_id;
		break;
	case S_JOB_LOCAL_TASK_COUNT:
		*va_arg(ap, uint32_t *) = fake.local_tasks;
		break;
	case S_JOB_UID:
		if (fake.ids)
			*va_arg(ap, uid_t *) = fake.uid;
		rc = fake.ids ? ESPANK_SUCCESS : ESPANK_NOT_AVAIL;
		break;
	case S_JOB_GID:
		if (fake.ids)
			*va_arg(ap, gid_t *) = fake.gid;
		rc = fake.ids ? ESPANK_SUCCESS : ESPANK_NOT_AVAIL;
		break;
	case S_STEP_ALLOC_MEM:
		*va_arg(ap, uint64_t *) = fake.step_mem;
		break;
	case S_JOB_ALLOC_MEM:
		*va_arg(ap, uint64_t *) = fake.job_mem;
		break;
	case S_STEP_ALLOC_CORES:
		*va_arg(ap, const char **) = fake.step_cores;
		rc = fake.step_cores ? ESPANK_SUCCESS : ESPANK_NOT_AVAIL;
		break;
	case S_JOB_ALLOC_CORES:
		*va_arg(ap, const char **) = fake.job_cores;
		rc = fake.job_cores ? ESPANK_SUCCESS : ESPANK_NOT_AVAIL;
		break;
	default:
		rc = ESPANK_BAD_ARG;
	}
	va_end(ap);
	return rc;
}

/* libslurm's hostlist stands in as a plain comma list (mc_nodes.c). */
int mc_hostlist_nth(const char *list, uint32_t n, char *buf, size_t len)
{
	const char *p = list, *end;

	for (; n; n--) {
		p = strchr(p, ',');
		if (!p)
			return -1;
		p++;
	}
	end = strchr(p, ',');
	snprintf(buf, len, "%.*s", (int)(end ? (size_t)(end - p) : strlen(p)),
		 p);
	return 0;
}

/* Set (or replace) one variable of the job's environment; "" unsets it
 * as Slurm's reader sees it (an empty value reads as unset). */
static void setenv_fake(const char *name, const char *value)
{
	int i;

	for (i = 0; i < MC_FAKE_ENV_MAX - 1 && fake.env[i][0]; i++)
		if (!strcmp(fake.env[i][0], name))
			break;
	fake.env[i][0] = name;
	fake.env[i][1] = value;
}

#endif
