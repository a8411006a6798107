/*
 * mc_gaugefile.c - one running step's gauges file (mc_gaugefile.h).
 * Nothing here links libslurm: tests/bench times mc_gaugefile_write.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>	/* renameat */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mc_gaugefile.h"
#include "mc_util.h"

static bool name_chars_ok(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '.' || *s == '-'))
			return false;
	return true;
}

/* Append s to name at *n (NAME_MAX + 1 bytes); false when too long. */
static bool cat(char *name, size_t *n, const char *s)
{
	size_t l = strlen(s);

	if (*n + l > NAME_MAX)
		return false;
	memcpy(name + *n, s, l + 1);
	*n += l;
	return true;
}

int mc_gaugefile_name(char *name, const char *node, long pid, uint32_t job,
		      const char *step)
{
	char p[21], j[21];
	size_t n = 0;

	name[0] = '\0';
	if (pid <= 0 || !name_chars_ok(node) || !name_chars_ok(step) ||
	    !strcmp(node, ".") || !strcmp(node, ".."))
		return -1;
	mc_gauges_u64((uint64_t)pid, p);
	mc_gauges_u64(job, j);
	if (!cat(name, &n, MC_GAUGEFILE_PREFIX) || !cat(name, &n, node) ||
	    !cat(name, &n, "_") || !cat(name, &n, p) || !cat(name, &n, "_") ||
	    !cat(name, &n, j) || !cat(name, &n, "_") || !cat(name, &n, step) ||
	    !cat(name, &n, ".prom") || n + 5 > NAME_MAX) {
		name[0] = '\0';
		return -1;
	}
	return 0;
}

static int failed(struct mc_gaugefile *g, const char *what)
{
	if (!g->failures++) {
		g->first_errno = errno;
		g->first_what = what;
	}
	return -1;
}

int mc_gaugefile_write(struct mc_gaugefile *g, uint64_t nonreclaimable,
		       uint64_t page_cache, bool force)
{
	struct timespec now;
	int fd, len, e;

	if (!g->on)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &now);
	/* Samples come on absolute deadlines, a few ms either side: a
	 * tenth of slack keeps a write per second at SampleInterval=1s. */
	if (!force && g->have_last &&
	    ((int64_t)(now.tv_sec - g->last.tv_sec) * 1000 +
	     (now.tv_nsec - g->last.tv_nsec) / 1000000) * 10 <
	    (int64_t)g->every_ms * 9)
		return 0;
	g->last = now;
	g->have_last = true;
	g->v[MC_G_NONRECLAIMABLE] = nonreclaimable;
	g->v[MC_G_PAGE_CACHE] = page_cache;
	len = mc_gauges_format(g->labels, g->v, g->text, sizeof(g->text));
	if (len < 0) {
		errno = ENOBUFS;
		return failed(g, "format it");
	}
	/* The temporary file's name holds this slurmstepd's pid: nothing
	 * else of memcore makes it, so whatever is there is a leftover of
	 * an earlier failed write, or planted: removed (the link itself,
	 * never its target), and O_EXCL refuses whatever comes back. */
	fd = openat(g->dfd, g->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		    O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644);
	if (fd < 0 && errno == EEXIST) {
		if (unlinkat(g->dfd, g->tmp, 0) == 0)
			fd = openat(g->dfd, g->tmp, O_WRONLY | O_CREAT |
				    O_EXCL | O_NOFOLLOW | O_NONBLOCK |
				    O_NOCTTY | O_CLOEXEC, 0644);
		else
			errno = EEXIST;	/* what is in the way, not why */
	}
	if (fd < 0)
		return failed(g, "create its temporary file");
	if (mc_write_all(fd, g->text, (size_t)len) < 0) {
		e = errno;
		close(fd);
		unlinkat(g->dfd, g->tmp, 0);
		errno = e;
		return failed(g, "write its temporary file");
	}
	close(fd);
	if (renameat(g->dfd, g->tmp, g->dfd, g->name) < 0) {
		e = errno;
		unlinkat(g->dfd, g->tmp, 0);
		errno = e;
		return failed(g, "rename its temporary file over it");
	}
	g->written = true;
	g->writes++;
	return 0;
}

int mc_gaugefile_remove(struct mc_gaugefile *g)
{
	int e = 0;

	if (!g->on)
		return 0;
	if (unlinkat(g->dfd, g->name, 0) < 0 && errno != ENOENT)
		e = errno;
	if (unlinkat(g->dfd, g->tmp, 0) < 0 && errno != ENOENT && !e)
		e = errno;
	g->written = false;
	errno = e;
	return e ? -1 : 0;
}

/* Whether pid is a running slurmstepd (of this node). */
static bool stepd_alive(long pid)
{
	char path[40] = "/proc/", comm[32];
	ssize_t n;
	int fd;

	if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
		return false;
	mc_gauges_u64((uint64_t)pid, path + strlen(path));
	strcat(path, "/comm");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno != ENOENT;	/* unsure: kept */
	n = read(fd, comm, sizeof(comm) - 1);
	close(fd);
	if (n <= 0)
		return true;
	comm[n] = '\0';
	return !strcmp(comm, "slurmstepd\n");
}

int mc_gaugefile_clean(int dfd, const char *node, long self)
{
	char prefix[NAME_MAX + 1];
	struct dirent *de;
	size_t plen;
	int removed = 0;
	DIR *d;

	plen = strlen(MC_GAUGEFILE_PREFIX) + strlen(node) + 1;
	if (plen >= sizeof(prefix) || !name_chars_ok(node))
		return 0;
	strcpy(prefix, MC_GAUGEFILE_PREFIX);
	strcat(prefix, node);
	strcat(prefix, "_");
	d = mc_opendir_fd(dfd);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		const char *n = de->d_name;
		char *end;
		long pid;

		/* ours: PREFIX<node>_<pid>_... and .PREFIX<node>_<pid>_... */
		if (*n == '.')
			n++;
		if (strncmp(n, prefix, plen))
			continue;
		errno = 0;
		pid = strtol(n + plen, &end, 10);
		if (errno || end == n + plen || *end != '_' || pid <= 0 ||
		    pid == self || stepd_alive(pid))
			continue;
		if (unlinkat(dfd, de->d_name, 0) == 0)
			removed++;
	}
	closedir(d);
	return removed;
}
