/*
 * mc_stepcg.c - a Slurm step's memory cgroup on v1 and v2 (mc_stepcg.h).
 */
#include "mc_stepcg.h"
#include "mc_memstat.h"
#include "mc_util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <slurm/slurm.h>

/* The files of one limit, by version. */
struct limit_files {
	const char *hard, *soft, *swap;
};

static const struct limit_files files_v1 = {
	"memory.limit_in_bytes", "memory.soft_limit_in_bytes",
	"memory.memsw.limit_in_bytes",
};
static const struct limit_files files_v2 = {
	"memory.max", "memory.high", "memory.swap.max",
};

static const struct limit_files *files(int version)
{
	return version == 1 ? &files_v1 : &files_v2;
}

const char *mc_stepcg_token(uint32_t step_id, char *buf, size_t len)
{
	if (step_id == SLURM_BATCH_SCRIPT)
		snprintf(buf, len, "batch");
	else
		snprintf(buf, len, "%" PRIu32, step_id);
	return buf;
}

/* Read scope/file, a limit ("max" or bytes), through the scope's guard. */
static int read_limit(const char *scope, const char *file, uint64_t *v,
		      char *err, size_t len)
{
	char buf[64];
	int fd = mc_cgroup_open_within(scope, file, O_RDONLY, err, len);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0) {
		snprintf(err, len, "%s/%s: cannot read it", scope, file);
		return -1;
	}
	buf[n] = '\0';
	if (mc_memstat_parse_limit(buf, v) < 0) {
		snprintf(err, len, "%s/%s: '%s' is not a byte count", scope,
			 file, buf);
		return -1;
	}
	return 0;
}

bool mc_stepcg_slurm_scope(const struct mc_cgroup *cg, uint32_t job_id,
			   uint32_t step_id, char *scope, size_t len)
{
	char token[16], steprel[PATH_MAX], path[PATH_MAX], buf[64];
	uint64_t v;

	if (cg->version == 1)
		return mc_cgroup_slurm_step(cg->rel, job_id,
					    mc_stepcg_token(step_id, token,
							    sizeof(token)),
					    steprel, sizeof(steprel)) == 0 &&
		       (size_t)snprintf(scope, len, "%s%s", cg->mount,
					steprel) < len;
	/* v2: the sibling "user" with a limit of its own (memory.max not
	 * "max"); a read, so no guard is needed. */
	return mc_cgroup_v2_step_user(cg->dir, scope, len) == 0 &&
	       (size_t)snprintf(path, sizeof(path), "%s/memory.max", scope)
	       < sizeof(path) &&
	       mc_read_at(AT_FDCWD, path, buf, sizeof(buf)) > 0 &&
	       mc_memstat_parse_limit(buf, &v) == 0 && v != MC_MEM_UNLIMITED;
}

/* Lower file in scope to limit when it is above it: never raise. */
static int lower(const char *scope, const char *file, uint64_t limit,
		 bool *changed, char *err, size_t len)
{
	uint64_t cur;

	*changed = false;
	if (read_limit(scope, file, &cur, err, len) < 0)
		return -1;
	if (cur <= limit)
		return 0;
	*changed = true;
	return mc_cgroup_write_u64(scope, file, limit, err, len);
}

int mc_stepcg_tighten(const char *scope, int version, uint64_t limit,
		      bool *changed, char *err, size_t len)
{
	char e2[128];
	bool soft;

	if (lower(scope, files(version)->hard, limit, changed, err, len) < 0)
		return -1;
	if (*changed)
		lower(scope, files(version)->soft, limit, &soft, e2,
		      sizeof(e2));
	return 0;
}

int mc_stepcg_set_limit(const char *scope, int version, uint64_t limit,
			char *err, size_t len)
{
	return mc_cgroup_write_u64(scope, files(version)->hard, limit, err,
				   len);
}

void mc_stepcg_swap_off(const char *scope, int version)
{
	char err[512];
	struct mc_memstat m;
	uint64_t lim;
	bool changed;

	/* swapaccount=0 kernels (v1) have no memsw files: nothing to do.
	 * Someone's swap limit stays. */
	if (mc_memstat_read(scope, NULL, &m, err, sizeof(err)) < 0 ||
	    m.swap_limit_bytes != MC_MEM_UNLIMITED)
		return;
	if (version == 2) {
		mc_cgroup_write(scope, files_v2.swap, "0", err, sizeof(err));
		return;
	}
	/* v1 limits memory+swap: set it to the memory limit. */
	if (read_limit(scope, files_v1.hard, &lim, err, sizeof(err)) < 0 ||
	    lim == MC_MEM_UNLIMITED)
		return;
	lower(scope, files_v1.swap, lim, &changed, err, sizeof(err));
}

void mc_stepcg_swap_off_new(const char *scope, int version, uint64_t limit)
{
	char err[512];

	if (version == 2)
		mc_cgroup_write(scope, files_v2.swap, "0", err, sizeof(err));
	else
		mc_cgroup_write_u64(scope, files_v1.swap, limit, err,
				    sizeof(err));
}

int mc_stepcg_own_parent(const struct mc_cgroup *cg, char *out, size_t len,
			 char *err, size_t errlen)
{
	if (cg->version == 1) {
		snprintf(out, len, "%s", cg->dir);
		return 0;
	}
	if (mc_cgroup_parent(cg->dir, out, len) < 0 ||
	    strncmp(out, cg->mount, strlen(cg->mount))) {
		snprintf(err, errlen, "%s: at the root", cg->dir);
		return -1;
	}
	return 0;
}

int mc_stepcg_own_ready(const char *parent, int version, char *err,
			size_t len)
{
	if (version == 1 || mc_cgroup_subtree_has(parent, "memory") == 1)
		return 0;
	snprintf(err, len, "%s/cgroup.subtree_control has no 'memory': enable "
		 "it there (Slurm's cgroup/v2 does with task/cgroup)", parent);
	return -1;
}

int mc_stepcg_own_enable(const char *dir, int version, char *err,
			 size_t len)
{
	if (version == 1 || mc_cgroup_subtree_has(dir, "memory") == 1)
		return 0;
	return mc_cgroup_write(dir, "cgroup.subtree_control", "+memory", err,
			       len);
}
