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
			   uint32_t step_id, struct mc_cgroup *scope)
{
	char token[16];

	memset(scope, 0, sizeof(*scope));
	scope->ops = cg->ops;
	snprintf(scope->mount, sizeof(scope->mount), "%s", cg->mount);
	/* Reads only, so no guard is needed. */
	return cg->ops->slurm_step_dir(cg, job_id,
				       mc_stepcg_token(step_id, token,
						       sizeof(token)),
				       false, scope->dir,
				       sizeof(scope->dir)) == 0;
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

/* The hard limit of l on scope; *changed whether it moved. */
static int constrain_mem(const char *scope, const struct mc_cgroup_ops *f,
			 const struct mc_cg_limits *l, bool *changed,
			 char *err, size_t len)
{
	char e2[128];
	bool soft;

	switch (l->mem) {
	case MC_CG_MEM_SET:
		*changed = true;
		return mc_cgroup_write_u64(scope, f->limit_file, l->mem_bytes,
					   err, len);
	case MC_CG_MEM_LOWER:
		if (lower(scope, f->limit_file, l->mem_bytes, changed, err,
			  len) < 0)
			return -1;
		if (*changed)
			lower(scope, f->soft_file, l->mem_bytes, &soft, e2,
			      sizeof(e2));
		return 0;
	case MC_CG_MEM_LEAVE:
		break;
	}
	return 0;
}

/* Swap off as l says (mc_cg_swap); failures are not errors. */
static void constrain_swap(const char *scope, const struct mc_cgroup_ops *f,
			   const struct mc_cg_limits *l)
{
	char err[512];
	uint64_t lim;
	bool changed;

	if (l->swap == MC_CG_SWAP_LEAVE)
		return;
	/* swapaccount=0 kernels (v1) have no memsw files: nothing to do.
	 * Someone's swap limit stays. */
	if (l->swap == MC_CG_SWAP_OFF &&
	    (read_limit(scope, f->swap_file, &lim, err, sizeof(err)) < 0 ||
	     lim != MC_MEM_UNLIMITED))
		return;
	if (!mc_cgroup_ops_has(f, MC_CG_SWAP_IS_MEMSW)) {
		mc_cgroup_write(scope, f->swap_file, "0", err, sizeof(err));
		return;
	}
	/* A memory+swap limit (v1): set it to the memory limit. */
	if (l->swap == MC_CG_SWAP_OFF_NEW) {
		mc_cgroup_write_u64(scope, f->swap_file, l->mem_bytes, err,
				    sizeof(err));
		return;
	}
	if (read_limit(scope, f->limit_file, &lim, err, sizeof(err)) < 0 ||
	    lim == MC_MEM_UNLIMITED)
		return;
	lower(scope, f->swap_file, lim, &changed, err, sizeof(err));
}

int mc_stepcg_constrain(const struct mc_cgroup *cg,
			const struct mc_cg_limits *l, bool *changed,
			char *err, size_t len)
{
	bool moved = false;

	mc_assert(l->mem == MC_CG_MEM_LEAVE || l->mem_bytes);
	mc_assert(l->swap != MC_CG_SWAP_OFF_NEW || l->mem != MC_CG_MEM_LEAVE);
	if (changed)
		*changed = false;
	if (constrain_mem(cg->dir, cg->ops, l, &moved, err, len) < 0)
		return -1;
	if (changed)
		*changed = moved;
	constrain_swap(cg->dir, cg->ops, l);
	return 0;
}

int mc_stepcg_own_parent(const struct mc_cgroup *cg, struct mc_cgroup *out,
			 char *err, size_t errlen)
{
	size_t ml = strlen(cg->mount);

	if (!mc_cgroup_has(cg, MC_CG_LEAF_PROCS)) {
		*out = *cg;
		return 0;
	}
	memset(out, 0, sizeof(*out));
	out->ops = cg->ops;
	snprintf(out->mount, sizeof(out->mount), "%s", cg->mount);
	if (mc_cgroup_parent(cg->dir, out->dir, sizeof(out->dir)) < 0 ||
	    strncmp(out->dir, cg->mount, ml)) {
		snprintf(err, errlen, "%s: at the root", cg->dir);
		return -1;
	}
	return 0;
}

int mc_stepcg_own_ready(const struct mc_cgroup *parent, char *err,
			size_t len)
{
	if (!mc_cgroup_has(parent, MC_CG_LEAF_PROCS) ||
	    mc_cgroup_subtree_has(parent->dir, "memory") == 1)
		return 0;
	snprintf(err, len, "%s/cgroup.subtree_control has no 'memory': enable "
		 "it there (Slurm's cgroup/v2 does with task/cgroup)",
		 parent->dir);
	return -1;
}

int mc_stepcg_own_enable(const struct mc_cgroup *cg, char *err, size_t len)
{
	if (!mc_cgroup_has(cg, MC_CG_LEAF_PROCS) ||
	    mc_cgroup_subtree_has(cg->dir, "memory") == 1)
		return 0;
	return mc_cgroup_write(cg->dir, "cgroup.subtree_control", "+memory",
			       err, len);
}
