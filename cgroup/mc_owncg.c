/*
 * mc_owncg.c - memcore's own memory cgroups: names, a make that no other
 * run can hold, the sweep of leftovers (see mc_owncg.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mc_cgroup.h"
#include "mc_owncg.h"

#define PREFIX "memcore_"

/* A decimal id as Slurm prints it: 1-10 digits, no leading zero (but
 * "0"), at most UINT32_MAX. Returns the characters taken, 0 if none. */
static size_t id_len(const char *s, uint64_t max)
{
	uint64_t v = 0;
	size_t n = 0;

	while (s[n] >= '0' && s[n] <= '9' && n < 11)
		v = v * 10 + (uint64_t)(s[n++] - '0');
	if (!n || n > 10 || (n > 1 && s[0] == '0') || v > max)
		return 0;
	return n;
}

int mc_owncg_name(uint32_t job, const char *step, unsigned run, char *buf,
		  size_t len)
{
	int n;

	if (run >= MC_OWNCG_RUNS || !step ||
	    (strcmp(step, "batch") &&
	     (!id_len(step, UINT32_MAX) || step[id_len(step, UINT32_MAX)])))
		return -1;
	n = run ? snprintf(buf, len, PREFIX "%" PRIu32 "_%s_%u", job, step,
			   run)
		: snprintf(buf, len, PREFIX "%" PRIu32 "_%s", job, step);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

bool mc_owncg_name_match(const char *name)
{
	const char *p = name;
	size_t n;

	if (strncmp(p, PREFIX, strlen(PREFIX)))
		return false;
	p += strlen(PREFIX);
	if (!(n = id_len(p, UINT32_MAX)) || p[n] != '_')
		return false;
	p += n + 1;
	if (!strncmp(p, "batch", 5))
		p += 5;
	else if ((n = id_len(p, UINT32_MAX)))
		p += n;
	else
		return false;
	if (!*p)
		return true;
	if (*p++ != '_' || !(n = id_len(p, MC_OWNCG_RUNS - 1)) || p[n] ||
	    *p == '0')
		return false;
	return true;
}

/* The directory parent/name, open for a lock (never through a symlink). */
static int open_dir(int pfd, const char *name)
{
	return openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		      O_CLOEXEC);
}

/* Is name under parent a cgroup no step holds and no process is in?
 * fd: it, open; locked by this call when true (the caller closes). */
static bool unheld_empty(const char *parent, const char *name, int fd,
			 int version)
{
	char child[PATH_MAX];

	if (flock(fd, LOCK_EX | LOCK_NB) != 0)
		return false;	/* a live step's */
	return (size_t)snprintf(child, sizeof(child), "%s/%s", parent, name)
		       < sizeof(child) &&
	       mc_cgroup_populated(child, version) == 0;
}

int mc_owncg_make(const char *parent, const char *name, int version,
		  int *lock_fd, char *err, size_t len)
{
	struct stat a, b;
	int pfd, fd, e;

	*lock_fd = -1;
	pfd = open(parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0) {
		e = errno;
		snprintf(err, len, "%s: %s", parent, strerror(e));
		errno = e;
		return -1;
	}
	/* A sweep of another step may take a just-made, still unlocked
	 * cgroup between mkdir and flock: then the name is free again. */
	for (int tries = 0; tries < 3; tries++) {
		if (mc_cgroup_mkdir(parent, name, err, len) < 0) {
			if (errno != EEXIST)
				goto fail;
			fd = open_dir(pfd, name);
			if (fd < 0)
				continue;	/* gone meanwhile */
			if (!unheld_empty(parent, name, fd, version)) {
				close(fd);
				close(pfd);
				snprintf(err, len, "%s/%s: in use", parent,
					 name);
				return MC_OWNCG_TAKEN;
			}
			/* A leftover of this job id: afresh. */
			e = mc_cgroup_rmdir(parent, name, err, len);
			close(fd);
			if (e < 0) {
				if (errno == EBUSY) {
					close(pfd);
					return MC_OWNCG_TAKEN;
				}
				goto fail;
			}
			continue;
		}
		fd = open_dir(pfd, name);
		if (fd < 0)
			continue;
		/* A sweep holds it only for its rmdir. */
		while (flock(fd, LOCK_EX) != 0 && errno == EINTR)
			;
		if (fstat(fd, &a) == 0 &&
		    fstatat(pfd, name, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
		    a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
			close(pfd);
			*lock_fd = fd;
			return 0;
		}
		close(fd);
	}
	snprintf(err, len, "%s/%s: removed as it was made, three times",
		 parent, name);
	errno = EAGAIN;
fail:
	e = errno;
	close(pfd);
	errno = e;
	return -1;
}

int mc_owncg_sweep(const char *parent, const char *keep, int version)
{
	char err[256];
	struct dirent *de;
	int removed = 0;
	DIR *d = opendir(parent);

	if (!d)
		return 0;
	while ((de = readdir(d)) != NULL) {
		int fd;

		if (de->d_type != DT_DIR || !mc_owncg_name_match(de->d_name) ||
		    (keep && !strcmp(de->d_name, keep)))
			continue;
		fd = open_dir(dirfd(d), de->d_name);
		if (fd < 0)
			continue;
		if (unheld_empty(parent, de->d_name, fd, version) &&
		    mc_cgroup_rmdir(parent, de->d_name, err, sizeof(err)) == 0)
			removed++;
		close(fd);
	}
	closedir(d);
	return removed;
}
