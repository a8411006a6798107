/*
 * mc_cgv2.c - cgroup v2's table of operations (mc_cgops.h): its file
 * names, memory.stat keys, and the operations whose way differs from v1's
 * (kernel Documentation/admin-guide/cgroup-v2.rst; Slurm's cgroup/v2
 * layout as the guest tier sees it, tests/vm/LAYOUTS.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mc_cgread.h"
#include "mc_cgroup.h"
#include "mc_memstat.h"
#include "mc_util.h"

/* The one cgroup2 mount: type "cgroup2", whatever its options. */
static bool mount_is(const char *fstype, size_t fl, const char *opts,
		     size_t ol)
{
	(void)opts;
	(void)ol;
	return fl == 7 && !memcmp(fstype, "cgroup2", 7);
}

/* memory.events' oom_kill is hierarchical already. */
static int oom_kills(int dfd, const char *dir, uint64_t *count, char *err,
		     size_t errlen)
{
	char buf[512];

	*count = 0;
	if (mc_read_at(dfd, "memory.events", buf, sizeof(buf)) < 0) {
		snprintf(err, errlen, "%s/memory.events: %s", dir,
			 strerror(errno));
		return -1;
	}
	if (mc_memstat_parse_oom_kill(buf, count) < 0) {
		snprintf(err, errlen, "%s/memory.events: no oom_kill count",
			 dir);
		return -1;
	}
	return 0;
}

/* memory.events "high" (throttled at memory.high) and "max" (at
 * memory.max). */
static void limit_events(int dfd, uint64_t *high, uint64_t *max)
{
	char buf[1024];

	if (mc_read_at(dfd, "memory.events", buf, sizeof(buf)) > 0)
		mc_cgread_parse_events(buf, high, max);
}

/* cgroup.events "populated": the subtree has a process. */
static int populated(int dfd)
{
	char buf[512];
	const char *p;

	if (mc_read_at(dfd, "cgroup.events", buf, sizeof(buf)) >= 0 &&
	    (p = strstr(buf, "populated ")) && (p == buf || p[-1] == '\n'))
		return p[10] == '0' ? 0 : 1;
	return -1;
}

int mc_cgroup_v2_step_user(const char *stepd_dir, char *user, size_t len)
{
	char parent[PATH_MAX], probe[PATH_MAX];
	const char *base = strrchr(stepd_dir, '/');
	struct stat st;

	if (!base || strcmp(base + 1, "slurm") ||
	    mc_cgroup_parent(stepd_dir, parent, sizeof(parent)) < 0)
		return -1;
	if ((size_t)snprintf(probe, sizeof(probe), "%s/user/memory.max",
			     parent) >= sizeof(probe) ||
	    lstat(probe, &st) < 0 || !S_ISREG(st.st_mode))
		return -1;
	if ((size_t)snprintf(user, len, "%s/user", parent) >= len)
		return -1;
	return 0;
}

/* From a task's leaf: the nearest ancestor "user" beside a "slurm"
 * (mc_cgroup_v2_step_user), where the step's limit is and under which all
 * its tasks are. */
static int task_step_user(const char *leaf, char *out, size_t len)
{
	char d[PATH_MAX], parent[PATH_MAX], stepd[PATH_MAX + 8];

	snprintf(d, sizeof(d), "%s", leaf);
	for (int up = 0; up < 4; up++) {
		const char *base = strrchr(d, '/');

		if (!base || mc_cgroup_parent(d, parent, sizeof(parent)) < 0)
			return -1;
		if (!strcmp(base + 1, "user")) {
			snprintf(stepd, sizeof(stepd), "%s/slurm", parent);
			return mc_cgroup_v2_step_user(stepd, out, len);
		}
		snprintf(d, sizeof(d), "%s", parent);
	}
	return -1;
}

/* Slurm's cgroup/v2: slurmstepd in <step>/slurm, the tasks under
 * <step>/user. From slurmstepd, Slurm holds the step's memory only when
 * "user" has a limit of its own (memory.max not "max": task/cgroup with
 * ConstrainRAMSpace); from a task, the step's level whatever its limit
 * (memcore report reads it). The job level's name differs across Slurm
 * versions, so only the leaf names are looked at. */
static int slurm_step_dir(const struct mc_cgroup *cg, uint32_t job,
			  const char *token, bool from_task, char *dir,
			  size_t len)
{
	char path[PATH_MAX], buf[64];
	uint64_t v;

	(void)job;
	(void)token;
	if (from_task ? task_step_user(cg->dir, dir, len) == 0
		      : mc_cgroup_v2_step_user(cg->dir, dir, len) == 0 &&
			(size_t)snprintf(path, sizeof(path), "%s/memory.max",
					 dir) < sizeof(path) &&
			mc_read_at(AT_FDCWD, path, buf, sizeof(buf)) > 0 &&
			mc_memstat_parse_limit(buf, &v) == 0 &&
			v != MC_MEM_UNLIMITED)
		return 0;
	if (len)
		dir[0] = '\0';
	return -1;
}

/* v2's memory.stat is hierarchical: plain keys, no limit line. */
static const struct mc_cg_stat_keys stat_keys = {
	.total = { "anon", "shmem", "active_file", "inactive_file", NULL },
	.local = { NULL, NULL, NULL, NULL, NULL },
	.refault_total = NULL,
	.refault = "workingset_refault_file",
};

const struct mc_cgroup_ops mc_cgroup_v2 = {
	.version = 2,
	.features = MC_CG_HAS_PSI | MC_CG_LEAF_PROCS,
	.mount_name = "cgroup2",
	.usage_file = "memory.current",
	.peak_file = "memory.peak",
	.limit_file = "memory.max",
	.soft_file = "memory.high",
	.swap_file = "memory.swap.max",
	.oom_file = "memory.events",
	.cpu_file = "cpu.stat",
	.stat = &stat_keys,
	.mount_is = mount_is,
	.mount_fallback = NULL,
	.oom_kills = oom_kills,
	.limit_events = limit_events,
	.populated = populated,
	.slurm_step_dir = slurm_step_dir,
};
