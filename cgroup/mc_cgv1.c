/*
 * mc_cgv1.c - the cgroup v1 memory hierarchy's table of operations
 * (mc_cgops.h): its file names, memory.stat keys, and the operations whose
 * way differs from v2's (kernel Documentation/admin-guide/cgroup-v1/
 * memory.rst, cgroups.rst).
 */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libcgroup.h>

#include "mc_cgroup.h"
#include "mc_memstat.h"
#include "mc_util.h"

/* A step's subtree is small: bounds keep a runaway tree from stalling the
 * OOM count. */
#define SUBTREE_MAX_DIRS 4096
#define SUBTREE_MAX_DEPTH 16

/* The v1 memory hierarchy: type "cgroup" with the "memory" super option
 * (a v1 mount may carry several controllers: "rw,cpuset,memory"). */
static bool mount_is(const char *fstype, size_t fl, const char *opts,
		     size_t ol)
{
	return fl == 6 && !memcmp(fstype, "cgroup", 6) &&
	       mc_cgroup_list_has(opts, ol, "memory");
}

/* libcgroup knows the v1 mount points when mountinfo could not be read. */
static int libcgroup_mount(char *mount, size_t len)
{
	char *mnt = NULL;
	int rc = -1;

	if (cgroup_init() != 0)
		return -1;
	if (cgroup_get_subsys_mount_point("memory", &mnt) == 0 && mnt &&
	    strlen(mnt) < len) {
		snprintf(mount, len, "%s", mnt);
		rc = 0;
	}
	free(mnt);
	return rc;
}

/* The oom_kill counts of dfd and its descendants, summed into *sum: v1
 * counts each kill in the victim's own cgroup only. */
static int sum_oom(int dfd, int depth, unsigned *dirs, uint64_t *sum)
{
	char buf[256];
	uint64_t n;
	DIR *d;
	struct dirent *e;

	if (mc_read_at(dfd, "memory.oom_control", buf, sizeof(buf)) < 0 ||
	    mc_memstat_parse_oom_kill(buf, &n) < 0)
		return -1;
	*sum += n;
	if (depth >= SUBTREE_MAX_DEPTH)
		return 0;
	d = mc_opendir_fd(dfd);
	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL && *dirs < SUBTREE_MAX_DIRS) {
		int cfd;

		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		cfd = openat(dfd, e->d_name, O_RDONLY | O_DIRECTORY |
			     O_NOFOLLOW | O_CLOEXEC);
		if (cfd < 0)
			continue;	/* removed meanwhile */
		(*dirs)++;
		/* A child that vanished or cannot be read adds nothing. */
		sum_oom(cfd, depth + 1, dirs, sum);
		close(cfd);
	}
	closedir(d);
	return 0;
}

static int oom_kills(int dfd, const char *dir, uint64_t *count, char *err,
		     size_t errlen)
{
	unsigned dirs = 0;

	*count = 0;
	if (sum_oom(dfd, 0, &dirs, count) < 0) {
		snprintf(err, errlen, "%s/memory.oom_control: no oom_kill "
			 "count", dir);
		return -1;
	}
	return 0;
}

/* v1 has no "high" mark events; memory.failcnt counts hits of the hard
 * limit. */
static void limit_events(int dfd, uint64_t *high, uint64_t *max)
{
	char buf[64];
	uint64_t v;

	(void)high;
	if (mc_read_at(dfd, "memory.failcnt", buf, sizeof(buf)) > 0 &&
	    mc_memstat_parse_limit(buf, &v) == 0 && v != MC_MEM_UNLIMITED)
		*max = v;
}

/* A pid in its cgroup.procs, or any child directory (v1 has no
 * cgroup.events). */
static int populated(int dfd)
{
	char buf[512];
	DIR *d;
	struct dirent *de;
	int rc;

	if (mc_read_at(dfd, "cgroup.procs", buf, sizeof(buf)) < 0)
		return -1;
	d = mc_opendir_fd(dfd);
	if (!d)
		return -1;
	rc = buf[0] != '\0';
	while (rc == 0 && (de = readdir(d)) != NULL)
		if (de->d_type == DT_DIR && de->d_name[0] != '.')
			rc = 1;
	closedir(d);
	return rc;
}

/* Does the component [s, s+n) equal prefix followed by exactly want? */
static bool comp_is(const char *s, size_t n, const char *prefix,
		    const char *want)
{
	size_t pl = strlen(prefix), wl = strlen(want);

	return n == pl + wl && !memcmp(s, prefix, pl) &&
	       !memcmp(s + pl, want, wl);
}

int mc_cgroup_slurm_step(const char *rel, uint32_t job_id, const char *step,
			 char *out, size_t outlen)
{
	char job[16];
	const char *prev = NULL, *p = rel, *found = NULL;
	size_t prevlen = 0;

	snprintf(job, sizeof(job), "%" PRIu32, job_id);
	while (*p) {
		const char *c;
		size_t n;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		c = strchr(p, '/');
		n = c ? (size_t)(c - p) : strlen(p);
		if (prev && comp_is(prev, prevlen, "job_", job) &&
		    comp_is(p, n, "step_", step))
			found = p + n;
		prev = p;
		prevlen = n;
		p += n;
	}
	if (!found || (size_t)(found - rel) >= outlen)
		return -1;
	memcpy(out, rel, (size_t)(found - rel));
	out[found - rel] = '\0';
	return 0;
}

/* Slurm's cgroup/v1 puts slurmstepd and the tasks under job_J/step_S,
 * which holds the step's limit: the same from either. */
static int slurm_step_dir(const struct mc_cgroup *cg, uint32_t job,
			  const char *token, bool from_task, char *dir,
			  size_t len)
{
	char path[PATH_MAX];

	(void)from_task;
	if (mc_cgroup_slurm_step(mc_cgroup_rel(cg), job, token, path,
				 sizeof(path)) < 0 ||
	    (size_t)snprintf(dir, len, "%s%s", cg->mount, path) >= len) {
		if (len)
			dir[0] = '\0';
		return -1;
	}
	return 0;
}

/* The hierarchical total_* fields (the cgroup and its children: the
 * step's use), each cgroup's own as the fallback. */
static const struct mc_cg_stat_keys stat_keys = {
	.total = { "total_rss", "total_shmem", "total_active_file",
		   "total_inactive_file", "hierarchical_memory_limit" },
	.local = { "rss", "shmem", "active_file", "inactive_file", NULL },
	.refault_total = "total_workingset_refault_file",
	.refault = "workingset_refault_file",
};

const struct mc_cgroup_ops mc_cgroup_v1 = {
	.version = 1,
	.features = MC_CG_SWAP_IS_MEMSW,
	.mount_name = "cgroup v1 memory",
	.usage_file = "memory.usage_in_bytes",
	.peak_file = "memory.max_usage_in_bytes",
	.limit_file = "memory.limit_in_bytes",
	.soft_file = "memory.soft_limit_in_bytes",
	.swap_file = "memory.memsw.limit_in_bytes",
	.oom_file = "memory.oom_control",
	.cpu_file = NULL,
	.stat = &stat_keys,
	.mount_is = mount_is,
	.mount_fallback = libcgroup_mount,
	.oom_kills = oom_kills,
	.limit_events = limit_events,
	.populated = populated,
	.slurm_step_dir = slurm_step_dir,
};
