/*
 * mc_cgread.c - repeated cheap reads of a step's memory cgroup
 * (mc_cgread.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mc_memstat.h"
#include "mc_util.h"
#include "mc_cgread.h"

static int open_in(int dfd, const char *name)
{
	/* O_NONBLOCK: cgroupfs ignores it, but a file that is not what it
	 * should be (a FIFO in a fixture) must not hang the sampler. */
	return openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC |
		      O_NONBLOCK);
}

int mc_cgread_open(struct mc_cgread_src *src, const struct mc_cgroup *cg,
		   char *err, size_t errlen)
{
	const char *dir = cg->dir, *usage = cg->ops->usage_file;
	int dfd;

	src->ops = cg->ops;
	src->stat_fd = src->usage_fd = src->cpu_fd = src->oom_fd = -1;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	src->stat_fd = open_in(dfd, "memory.stat");
	if (src->stat_fd < 0) {
		snprintf(err, errlen, "%s/memory.stat: %s", dir,
			 strerror(errno));
		goto fail;
	}
	src->usage_fd = open_in(dfd, usage);
	if (src->usage_fd < 0) {
		snprintf(err, errlen, "%s/%s: %s", dir, usage,
			 strerror(errno));
		goto fail;
	}
	if (cg->ops->cpu_file)
		src->cpu_fd = open_in(dfd, cg->ops->cpu_file);
	src->oom_fd = open_in(dfd, cg->ops->oom_file);
	close(dfd);
	return 0;
fail:
	close(dfd);
	mc_cgread_close(src);
	return -1;
}

void mc_cgread_close(struct mc_cgread_src *src)
{
	int *fds[] = { &src->stat_fd, &src->usage_fd, &src->cpu_fd,
		       &src->oom_fd };

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (*fds[i] >= 0) {
			close(*fds[i]);
			*fds[i] = -1;
		}
}

/* The whole small file at fd into src->buf, from offset 0. */
static ssize_t reread(struct mc_cgread_src *src, int fd)
{
	ssize_t n;

	do
		n = pread(fd, src->buf, sizeof(src->buf) - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	src->buf[n] = '\0';
	return n;
}

/* The number after "key " on a line of its own in text; 0, or -1. */
static int line_value(const char *text, const char *key, uint64_t *v)
{
	size_t kl = strlen(key);
	const char *p = text;

	while (p && *p) {
		if (!strncmp(p, key, kl) && p[kl] == ' ') {
			char *end;
			unsigned long long n;

			errno = 0;
			n = strtoull(p + kl + 1, &end, 10);
			if (errno || end == p + kl + 1 ||
			    (*end && *end != '\n'))
				return -1;
			*v = n;
			return 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

int mc_cgread_parse_cpu_stat(const char *text, uint64_t *usec)
{
	return line_value(text, "usage_usec", usec);
}

void mc_cgread_parse_events(const char *text, uint64_t *high, uint64_t *max)
{
	const char *p = text;

	while (p && *p) {
		uint64_t *dst = !strncmp(p, "high ", 5) ? high
				: !strncmp(p, "max ", 4) ? max : NULL;

		if (dst) {
			const char *v = strchr(p, ' ') + 1;
			char *end;
			unsigned long long n;

			errno = 0;
			n = strtoull(v, &end, 10);
			if (!errno && end != v)
				*dst = n;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
}

int mc_cgread_read(struct mc_cgread_src *src, struct mc_sample *out)
{
	struct mc_memstat_fields f;
	char err[128];
	uint64_t usage;
	char *end;

	if (reread(src, src->usage_fd) < 0)
		return -1;
	errno = 0;
	usage = strtoull(src->buf, &end, 10);
	if (errno || end == src->buf) {
		errno = EINVAL;
		return -1;
	}
	if (reread(src, src->stat_fd) < 0)
		return -1;
	if (mc_memstat_parse(src->buf, src->ops, &f, err,
			     sizeof(err)) < 0) {
		errno = EINVAL;
		return -1;
	}
	out->usage_bytes = usage;
	out->anon_bytes = f.anon;
	out->shmem_bytes = f.shmem;
	out->file_bytes = f.active_file + f.inactive_file;
	/* v1 usage is approximate (per-CPU charge batches): clamp. */
	out->non_reclaimable_bytes = usage > out->file_bytes
				     ? usage - out->file_bytes : 0;
	out->has_cpu = src->cpu_fd >= 0 && reread(src, src->cpu_fd) > 0 &&
		       mc_cgread_parse_cpu_stat(src->buf, &out->cpu_usec) == 0;
	if (!out->has_cpu)
		out->cpu_usec = 0;
	out->has_oom = src->oom_fd >= 0 && reread(src, src->oom_fd) > 0 &&
		       mc_memstat_parse_oom_kill(src->buf,
						 &out->oom_kills) == 0;
	if (!out->has_oom)
		out->oom_kills = 0;
	return 0;
}

int mc_cgread_end_read(const struct mc_cgroup *cg, struct mc_cgread_end *out,
		       char *err, size_t errlen)
{
	const char *dir = cg->dir;
	char buf[64];
	uint64_t v;
	int dfd;

	memset(out, 0, sizeof(*out));
	if (!cg->ops) {
		/* The step's cgroup was never found: no hierarchy, "cv" 0. */
		snprintf(err, errlen, "no memory cgroup");
		return -1;
	}
	out->cgroup_version = (uint32_t)cg->ops->version;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	/* 0 when absent ("max" cannot be a peak). */
	if (mc_read_at(dfd, cg->ops->peak_file, buf, sizeof(buf)) > 0 &&
	    mc_memstat_parse_limit(buf, &v) == 0 && v != MC_MEM_UNLIMITED)
		out->kernel_peak_bytes = v;
	cg->ops->limit_events(dfd, &out->high_events, &out->max_events);
	close(dfd);
	if (mc_memstat_oom_kills(cg, &out->oom_kills, err, errlen) < 0)
		out->oom_kills = 0;
	err[0] = '\0';
	return 0;
}

int mc_cgread_parse_refault(const char *memstat,
			    const struct mc_cgroup_ops *ops, uint64_t *pages)
{
	/* v1: the total includes the step's children (task_T), as the
	 * other v1 figures are taken (mc_memstat_parse). */
	if (ops->stat->refault_total &&
	    line_value(memstat, ops->stat->refault_total, pages) == 0)
		return 0;
	return line_value(memstat, ops->stat->refault, pages);
}

/* "total=N" on the line of text that starts with word ("some", "full"). */
static int pressure_total(const char *text, const char *word, uint64_t *usec)
{
	size_t wl = strlen(word);
	const char *p = text;

	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		if (n > wl && !strncmp(p, word, wl) && p[wl] == ' ') {
			/* The key after a space, within this line. */
			const char *t = strstr(p + wl, " total=");
			char *end;
			unsigned long long v;

			if (!t || (size_t)(t - p) >= n)
				return -1;
			errno = 0;
			v = strtoull(t + 7, &end, 10);
			if (errno || end == t + 7 ||
			    (*end && *end != '\n' && *end != ' '))
				return -1;
			*usec = v;
			return 0;
		}
		p = nl ? nl + 1 : NULL;
	}
	return -1;
}

int mc_cgread_parse_pressure(const char *text, uint64_t *some_usec,
			     uint64_t *full_usec)
{
	uint64_t some, full = 0;

	if (pressure_total(text, "some", &some) < 0)
		return -1;
	if (pressure_total(text, "full", &full) < 0)
		full = 0;
	*some_usec = some;
	*full_usec = full;
	return 0;
}

void mc_cgread_squeeze_read(const struct mc_cgroup *cg,
			    struct mc_squeeze *out)
{
	const char *dir = cg->dir;
	char buf[8192];
	bool psi = mc_cgroup_has(cg, MC_CG_HAS_PSI);
	int dfd, e;

	memset(out, 0, sizeof(*out));
	out->psi = psi ? MC_PSI_UNREADABLE : MC_PSI_NONE;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return;
	if (mc_read_at(dfd, "memory.stat", buf, sizeof(buf)) > 0 &&
	    mc_cgread_parse_refault(buf, cg->ops,
				    &out->refault_file_pages) == 0)
		out->has_refault = true;
	if (psi) {
		errno = 0;
		if (mc_read_at(dfd, "memory.pressure", buf, sizeof(buf)) > 0) {
			if (mc_cgread_parse_pressure(buf, &out->some_usec,
						     &out->full_usec) == 0)
				out->psi = MC_PSI_READ;
		} else {
			/* A kernel with PSI off hides the cgroup files (or
			 * answers EOPNOTSUPP) and makes no /proc/pressure;
			 * PSI on there but this file unreadable is this
			 * cgroup's (cgroup.pressure 0). */
			e = errno;
			if (e == ENOENT || e == EOPNOTSUPP)
				out->psi = mc_read_at(AT_FDCWD,
						      "/proc/pressure/memory",
						      buf, sizeof(buf)) > 0
					   ? MC_PSI_UNREADABLE : MC_PSI_OFF;
		}
	}
	close(dfd);
}
