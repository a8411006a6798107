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

/* PARENT opened as a directory (never through a symlink); -1 with ERR
 * and errno set. */
static int open_parent(const char *parent, char *err, size_t len)
{
	int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (pfd < 0) {
		int e = errno;

		snprintf(err, len, "%s: %s", parent, strerror(e));
		errno = e;
	}
	return pfd;
}

/* NAME under PFD, opened and flock'ed with OP (LOCK_EX or LOCK_SH), while it
 * is still the directory of that name: another step may remove it between
 * the open and the lock, and a lock on a removed directory holds nothing.
 * Returns the locked fd, or -1 (gone, or replaced: try again). */
static int lock_named(int pfd, const char *name, int op)
{
	struct stat a, b;
	int fd = open_dir(pfd, name);

	if (fd < 0)
		return -1;
	while (flock(fd, op) != 0 && errno == EINTR)
		;
	if (fstat(fd, &a) == 0 &&
	    fstatat(pfd, name, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
	    a.st_dev == b.st_dev && a.st_ino == b.st_ino)
		return fd;
	close(fd);
	return -1;
}

/* Is name under parent a cgroup no step holds and no process is in?
 * fd: it, open; locked by this call when true (the caller closes). */
static bool unheld_empty(const char *parent, const char *name, int fd,
			 const struct mc_cgroup_ops *ops)
{
	char child[PATH_MAX];

	if (flock(fd, LOCK_EX | LOCK_NB) != 0)
		return false;	/* a live step's */
	return (size_t)snprintf(child, sizeof(child), "%s/%s", parent, name)
		       < sizeof(child) &&
	       mc_cgroup_populated(child, ops) == 0;
}

/* Close pfd, keeping errno: -1. */
static int fail_closed(int pfd)
{
	int e = errno;

	close(pfd);
	errno = e;
	return -1;
}

/* The name kept going away under a sweep or a last step: said in err,
 * errno EAGAIN, -1. */
static int lost_race(int pfd, const char *parent, const char *name,
		     const char *how, char *err, size_t len)
{
	snprintf(err, len, "%s/%s: removed as it was %s", parent, name, how);
	errno = EAGAIN;
	return fail_closed(pfd);
}

int mc_owncg_make(const struct mc_cgroup *pcg, const char *name,
		  int *lock_fd, char *err, size_t len)
{
	const char *parent = pcg->dir;
	int pfd, fd, e;

	*lock_fd = -1;
	pfd = open_parent(parent, err, len);
	if (pfd < 0)
		return -1;
	/* A sweep of another step may take a just-made, still unlocked
	 * cgroup between mkdir and flock: then the name is free again. */
	for (int tries = 0; tries < 3; tries++) {
		if (mc_cgroup_mkdir(parent, name, err, len) < 0) {
			if (errno != EEXIST)
				return fail_closed(pfd);
			fd = open_dir(pfd, name);
			if (fd < 0)
				continue;	/* gone meanwhile */
			if (!unheld_empty(parent, name, fd, pcg->ops)) {
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
				return fail_closed(pfd);
			}
			continue;
		}
		/* A sweep holds it only for its rmdir. */
		fd = lock_named(pfd, name, LOCK_EX);
		if (fd >= 0) {
			close(pfd);
			*lock_fd = fd;
			return 0;
		}
	}
	return lost_race(pfd, parent, name, "made, three times", err, len);
}

int mc_owncg_job_name(uint32_t job, char *buf, size_t len)
{
	int n = snprintf(buf, len, PREFIX "%" PRIu32, job);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

bool mc_owncg_job_name_match(const char *name)
{
	size_t n;

	if (strncmp(name, PREFIX, strlen(PREFIX)))
		return false;
	name += strlen(PREFIX);
	n = id_len(name, UINT32_MAX);
	return n && !name[n];
}

int mc_owncg_job_join(const struct mc_cgroup *pcg, const char *name,
		      int *lock_fd, bool *made, char *err, size_t len)
{
	const char *parent = pcg->dir;
	int pfd, fd;

	*lock_fd = -1;
	*made = false;
	pfd = open_parent(parent, err, len);
	if (pfd < 0)
		return -1;
	/* The last step of the job may remove it between our mkdir (or
	 * EEXIST) and our lock: then the lock is on a removed directory,
	 * which the inode check sees, and it is made again. */
	for (int tries = 0; tries < 5; tries++) {
		bool mine = mc_cgroup_mkdir(parent, name, err, len) == 0;

		if (!mine && errno != EEXIST)
			return fail_closed(pfd);
		fd = lock_named(pfd, name, LOCK_SH);
		if (fd >= 0) {
			close(pfd);
			*lock_fd = fd;
			*made = mine;
			return 0;
		}
	}
	return lost_race(pfd, parent, name, "joined, five times", err, len);
}

static int sweep(const char *parent, const char *keep,
		 const struct mc_cgroup_ops *ops);

/* Job cgroup parent/name, open as fd: removed when this process gets
 * LOCK_EX at once (no step holds it) and it is empty once its empty,
 * unheld step cgroups are gone. Returns how many cgroups went. */
static int job_remove(const char *parent, const char *name, int fd,
		      const struct mc_cgroup_ops *ops)
{
	char dir[PATH_MAX], err[256];
	int n;

	if (flock(fd, LOCK_EX | LOCK_NB) != 0 ||
	    (size_t)snprintf(dir, sizeof(dir), "%s/%s", parent, name)
	    >= sizeof(dir))
		return 0;
	n = sweep(dir, NULL, ops);
	if (mc_cgroup_rmdir(parent, name, err, sizeof(err)) == 0)
		n++;
	return n;
}

int mc_owncg_job_leave(const struct mc_cgroup *pcg, const char *name,
		       int lock_fd)
{
	const char *parent = pcg->dir;
	char dir[PATH_MAX];
	struct stat st;
	int fd = lock_fd;

	if (fd < 0 && (size_t)snprintf(dir, sizeof(dir), "%s/%s", parent,
				       name) < sizeof(dir)) {
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			  O_CLOEXEC);
		if (fd < 0)
			return errno == ENOENT;
	}
	if (fd < 0)
		return 0;
	job_remove(parent, name, fd, pcg->ops);
	close(fd);
	return (size_t)snprintf(dir, sizeof(dir), "%s/%s", parent, name)
		       < sizeof(dir) && lstat(dir, &st) != 0 && errno == ENOENT;
}

/* mc_owncg_sweep of the directory parent, of hierarchy ops. */
static int sweep(const char *parent, const char *keep,
		 const struct mc_cgroup_ops *ops)
{
	char err[256];
	struct dirent *de;
	int removed = 0;
	DIR *d = opendir(parent);

	if (!d)
		return 0;
	while ((de = readdir(d)) != NULL) {
		int fd;

		if (de->d_type == DT_DIR && mc_owncg_job_name_match(de->d_name) &&
		    (!keep || strcmp(de->d_name, keep))) {
			fd = open_dir(dirfd(d), de->d_name);
			if (fd >= 0) {
				removed += job_remove(parent, de->d_name, fd,
						      ops);
				close(fd);
			}
			continue;
		}
		if (de->d_type != DT_DIR || !mc_owncg_name_match(de->d_name) ||
		    (keep && !strcmp(de->d_name, keep)))
			continue;
		fd = open_dir(dirfd(d), de->d_name);
		if (fd < 0)
			continue;
		if (unheld_empty(parent, de->d_name, fd, ops) &&
		    mc_cgroup_rmdir(parent, de->d_name, err, sizeof(err)) == 0)
			removed++;
		close(fd);
	}
	closedir(d);
	return removed;
}

int mc_owncg_sweep(const struct mc_cgroup *parent, const char *keep)
{
	return sweep(parent->dir, keep, parent->ops);
}
