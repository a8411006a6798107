/*
 * mc_memstat.c - read a memory cgroup's use and split it (mc_memstat.h).
 *
 * Reads go through openat(O_NOFOLLOW) from the directory, so a symlink put
 * in place of a cgroup file is never followed, and every file is read into
 * a bounded buffer: cgroupfs files are small and a fixture that is not must
 * not make slurmstepd allocate.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mc_memstat.h"
#include "mc_util.h"

/* memory.stat is about 1.5 KiB on 6.x kernels; room for growth. */
#define STAT_BUF 16384

/* A decimal uint64 with nothing but blanks after it. */
static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	while (*end == ' ' || *end == '\t' || *end == '\n')
		end++;
	if (*end)
		return -1;
	*out = v;
	return 0;
}

int mc_memstat_parse_limit(const char *text, uint64_t *bytes)
{
	const char *s = text;
	uint64_t v;

	while (*s == ' ' || *s == '\t')
		s++;
	if (!strncmp(s, "max", 3) && (s[3] == '\0' || s[3] == '\n')) {
		*bytes = MC_MEM_UNLIMITED;
		return 0;
	}
	if (parse_u64(s, &v) < 0)
		return -1;
	*bytes = v >= MC_MEM_UNLIMITED_MIN ? MC_MEM_UNLIMITED : v;
	return 0;
}

int mc_memstat_parse_oom_kill(const char *text, uint64_t *count)
{
	const char *line = text;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);
		char val[32];

		if (n > 9 && !strncmp(line, "oom_kill ", 9) && n - 9 < sizeof(val)) {
			memcpy(val, line + 9, n - 9);
			val[n - 9] = '\0';
			return parse_u64(val, count);
		}
		line = nl ? nl + 1 : NULL;
	}
	return -1;
}

/* Where each slot of the table's memory.stat keys (struct mc_cg_stat_keys)
 * goes. */
static const struct {
	unsigned bit;
	size_t off;
} slots[MC_CG_STAT_KEYS] = {
	{ MC_MEMSTAT_ANON, offsetof(struct mc_memstat_fields, anon) },
	{ MC_MEMSTAT_SHMEM, offsetof(struct mc_memstat_fields, shmem) },
	{ MC_MEMSTAT_ACTIVE_FILE,
	  offsetof(struct mc_memstat_fields, active_file) },
	{ MC_MEMSTAT_INACTIVE_FILE,
	  offsetof(struct mc_memstat_fields, inactive_file) },
	{ MC_MEMSTAT_HLIMIT,
	  offsetof(struct mc_memstat_fields, hierarchical_limit) },
};

int mc_memstat_parse(const char *text, const struct mc_cgroup_ops *ops,
		     struct mc_memstat_fields *f, char *err, size_t errlen)
{
	/* A local field (v1's) only counts while its total has not been
	 * seen: v1's total_* include the children, which is the step's use. */
	const struct mc_cg_stat_keys *ks = ops->stat;
	unsigned from_total = 0;
	const char *line = text;

	memset(f, 0, sizeof(*f));
	f->hierarchical_limit = MC_MEM_UNLIMITED;
	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);
		const char *sp = memchr(line, ' ', n);
		const char *start = line;
		char key[64], val[32];
		size_t kl, vl;

		line = nl ? nl + 1 : NULL;
		if (!sp)
			continue;
		kl = (size_t)(sp - start);
		vl = n - kl - 1;
		if (kl >= sizeof(key) || vl >= sizeof(val))
			continue;
		memcpy(key, start, kl);
		key[kl] = '\0';
		memcpy(val, sp + 1, vl);
		val[vl] = '\0';
		for (size_t i = 0; i < MC_CG_STAT_KEYS; i++) {
			unsigned bit = slots[i].bit;
			uint64_t *dst = (uint64_t *)((char *)f + slots[i].off);
			bool total = ks->total[i] && !strcmp(key, ks->total[i]);
			bool local = !total && ks->local[i] &&
				     !strcmp(key, ks->local[i]);
			uint64_t v;

			if (!total && !local)
				continue;
			if (local && (from_total & bit))
				break;
			if (parse_u64(val, &v) < 0) {
				snprintf(err, errlen, "memory.stat: %s: '%s' "
					 "is not a number", key, val);
				return -1;
			}
			if (bit == MC_MEMSTAT_HLIMIT &&
			    v >= MC_MEM_UNLIMITED_MIN)
				v = MC_MEM_UNLIMITED;
			*dst = v;
			f->found |= bit;
			if (total)
				from_total |= bit;
			break;
		}
	}
	if ((f->found & MC_MEMSTAT_NEEDED) != MC_MEMSTAT_NEEDED) {
		for (unsigned i = 0; i < MC_CG_STAT_KEYS; i++)
			if ((slots[i].bit & MC_MEMSTAT_NEEDED) &&
			    !(f->found & slots[i].bit)) {
				snprintf(err, errlen, "memory.stat: no '%s' "
					 "line", ks->total[i]);
				break;
			}
		return -1;
	}
	return 0;
}

/* Read one number file (a limit or a count) in dfd. */
static int read_limit(int dfd, const char *dir, const char *name,
		      uint64_t *out, char *err, size_t errlen)
{
	char buf[64];

	if (mc_read_at(dfd, name, buf, sizeof(buf)) < 0) {
		snprintf(err, errlen, "%s/%s: %s", dir, name, strerror(errno));
		return -1;
	}
	if (mc_memstat_parse_limit(buf, out) < 0) {
		buf[strcspn(buf, "\n")] = '\0';
		snprintf(err, errlen, "%s/%s: '%s' is not a byte count", dir,
			 name, buf);
		return -1;
	}
	return 0;
}

int mc_memstat_oom_kills(const struct mc_cgroup *cg, uint64_t *count,
			 char *err, size_t errlen)
{
	const char *dir = cg->dir;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc;

	if (dfd < 0) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	rc = cg->ops->oom_kills(dfd, dir, count, err, errlen);
	close(dfd);
	return rc;
}

/* The smallest of file from dir up to root (own: dir's) into *limit, with
 * the cgroup that holds it in where (wlen): the memory limit (v2
 * memory.max, which the root cgroup has not; v1 memory.limit_in_bytes),
 * and the same walk for the swap limit. */
static void effective_limit(const char *dir, const char *root,
			    const char *file, uint64_t own, uint64_t *limit,
			    char *where, size_t wlen)
{
	char path[PATH_MAX], rroot[PATH_MAX];
	uint64_t v;
	size_t rl;

	*limit = own;
	where[0] = '\0';
	if (!realpath(dir, path))
		return;
	if (own != MC_MEM_UNLIMITED)
		snprintf(where, wlen, "%s", path);
	if (!root || !realpath(root, rroot))
		return;
	rl = strcmp(rroot, "/") ? strlen(rroot) : 0;
	for (int i = 0; i < 64; i++) {
		char *slash = strrchr(path, '/');
		char err[8];
		int fd;

		if (!slash || slash == path)
			break;
		*slash = '\0';
		/* Stop above the mount point: no cgroups there. */
		if (strlen(path) < rl || strncmp(path, rroot, rl) ||
		    (path[rl] != '/' && path[rl] != '\0'))
			break;
		fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			break;
		if (read_limit(fd, path, file, &v, err, sizeof(err)) == 0 &&
		    v < *limit) {
			*limit = v;
			snprintf(where, wlen, "%s", path);
		}
		close(fd);
	}
}

int mc_memstat_read(const struct mc_cgroup *cg, struct mc_memstat *m,
		    char *err, size_t errlen)
{
	const char *dir = cg->dir, *root = cg->mount[0] ? cg->mount : NULL;
	char buf[STAT_BUF];
	struct mc_memstat_fields f;
	uint64_t file;
	const struct mc_cgroup_ops *ops = cg->ops;
	int dfd, rc = -1;

	memset(m, 0, sizeof(*m));
	mc_assert(ops);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	m->version = ops->version;
	if (mc_read_at(dfd, "memory.stat", buf, sizeof(buf)) < 0) {
		snprintf(err, errlen, "%s/memory.stat: %s", dir,
			 strerror(errno));
		goto out;
	}
	if (mc_memstat_parse(buf, ops, &f, err, errlen) < 0) {
		char why[256];

		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "%s/%s", dir, why);
		goto out;
	}
	if (read_limit(dfd, dir, ops->usage_file, &m->usage_bytes, err,
		       errlen) < 0 ||
	    read_limit(dfd, dir, ops->limit_file, &m->limit_bytes, err,
		       errlen) < 0)
		goto out;
	if (m->usage_bytes == MC_MEM_UNLIMITED)
		m->usage_bytes = 0;
	effective_limit(dir, root, ops->limit_file, m->limit_bytes,
			&m->limit_bytes, m->limit_dir, sizeof(m->limit_dir));
	if (f.hierarchical_limit < m->limit_bytes) {
		/* A limit above root (a container's view): value only. Only
		 * v1's memory.stat has one (hierarchical_memory_limit). */
		m->limit_bytes = f.hierarchical_limit;
		m->limit_dir[0] = '\0';
	}
	/* Optional files: older kernels, swapaccount=0. */
	if (read_limit(dfd, dir, ops->swap_file, &m->swap_limit_bytes, err,
		       errlen) < 0)
		m->swap_limit_bytes = MC_MEM_UNLIMITED;
	/* A task's cgroup has none of its own: its step's (or job's)
	 * applies, found as the memory limit is. */
	effective_limit(dir, root, ops->swap_file, m->swap_limit_bytes,
			&m->swap_limit_bytes, m->swap_limit_dir,
			sizeof(m->swap_limit_dir));
	/* MC_MEM_UNLIMITED: none kept ("max" cannot be a peak). */
	if (read_limit(dfd, dir, ops->peak_file,
		       &m->peak_bytes, err, errlen) < 0)
		m->peak_bytes = MC_MEM_UNLIMITED;
	if (ops->oom_kills(dfd, dir, &m->oom_kills, err, errlen) < 0)
		goto out;
	m->anon_bytes = f.anon;
	m->shmem_bytes = f.shmem;
	file = f.active_file + f.inactive_file;
	m->file_bytes = file;
	/* v1 usage_in_bytes is approximate (per-CPU charge batches): it can
	 * lag the stat counters, so clamp instead of wrapping. */
	m->non_reclaimable_bytes = m->usage_bytes > file
				   ? m->usage_bytes - file : 0;
	err[0] = '\0';
	rc = 0;
out:
	close(dfd);
	return rc;
}
