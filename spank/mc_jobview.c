/*
 * mc_jobview.c - slurmd's view of a job, kept root-only (mc_jobview.h).
 * Plain libc: the prolog, slurmstepd and the unit test share it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* F_OFD_SETLK */
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mc_jobview.h"
#include "mc_util.h"

#define KEY "partition="
/* A record is one short line; a bigger file is not one of ours. */
#define RECORD_MAX 512

int mc_jobview_dir(int ac, char **av, const char *default_cache, char *dir,
		   size_t len)
{
	const char *path = default_cache, *slash;

	for (int i = 0; i < ac; i++)
		if (!strncmp(av[i], "cache=", 6) && av[i][6] == '/')
			path = av[i] + 6;
	slash = strrchr(path, '/');
	if (!slash || (size_t)(slash - path) + 1 > len)
		return -1;
	if (slash == path)
		snprintf(dir, len, "/");
	else
		snprintf(dir, len, "%.*s", (int)(slash - path), path);
	return 0;
}

static int record_path(const char *dir, uint32_t job_id, const char *pre,
		       char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%smemcore-job-%" PRIu32, dir, pre,
			 job_id);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* A name Slurm could have given (slurm.conf's PartitionName): printable,
 * no space; anything else is not written (the step reads no record). */
static int name_ok(const char *s)
{
	if (!*s || strlen(s) >= RECORD_MAX - sizeof(KEY) - 1)
		return 0;
	for (; *s; s++)
		if (*s <= ' ' || *s == 0x7f)
			return 0;
	return 1;
}

int mc_jobview_write(const char *dir, uint32_t job_id, const char *partition,
		     char *err, size_t errlen)
{
	char path[PATH_MAX], tmp[PATH_MAX], line[RECORD_MAX];
	int fd, n, e;

	if (record_path(dir, job_id, "", path, sizeof(path)) < 0 ||
	    record_path(dir, job_id, ".", tmp, sizeof(tmp)) < 0) {
		snprintf(err, errlen, "%s: path too long", dir);
		return -1;
	}
	if (!partition || !name_ok(partition)) {
		snprintf(err, errlen, "SLURM_JOB_PARTITION '%.64s': not a "
			 "partition name", partition ? partition : "");
		return -1;
	}
	n = snprintf(line, sizeof(line), KEY "%s\n", partition);
	unlink(tmp);	/* a leftover of a prolog that died (root's) */
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0) {
		e = errno;
		snprintf(err, errlen, "%s: %s", tmp, strerror(e));
		return -1;
	}
	/* The whole line or an error with its errno (ENOSPC after a short
	 * write), and the fd closed either way. */
	e = mc_write_all(fd, line, (size_t)n) < 0 ? errno : 0;
	if (close(fd) < 0 && !e)
		e = errno;
	if (e) {
		unlink(tmp);
		snprintf(err, errlen, "%s: %s", tmp, strerror(e));
		return -1;
	}
	if (rename(tmp, path) < 0) {
		e = errno;
		unlink(tmp);
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -1;
	}
	return 0;
}

int mc_jobview_read(const char *dir, uint32_t job_id, char *partition,
		    size_t len, char *err, size_t errlen)
{
	char path[PATH_MAX], buf[RECORD_MAX + 1], *nl;
	struct stat st;
	ssize_t n;
	int fd;

	partition[0] = '\0';
	if (record_path(dir, job_id, "", path, sizeof(path)) < 0) {
		snprintf(err, errlen, "%s: path too long", dir);
		return -1;
	}
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	/* Only root writes it: a file anyone else owns or may write, or a
	 * second link to it, is not the prolog's. */
	if (fstat(fd, &st) < 0 || !mc_st_root_only(&st, 022)) {
		close(fd);
		snprintf(err, errlen, "%s: not a regular file of root's that "
			 "only root can write", path);
		return -1;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0 || n >= RECORD_MAX) {
		snprintf(err, errlen, "%s: unreadable or too long", path);
		return -1;
	}
	buf[n] = '\0';
	nl = strchr(buf, '\n');
	if (strncmp(buf, KEY, strlen(KEY)) || !nl || nl[1]) {
		snprintf(err, errlen, "%s: not a memcore job record", path);
		return -1;
	}
	*nl = '\0';
	if (!name_ok(buf + strlen(KEY)) ||
	    strlen(buf + strlen(KEY)) >= len) {
		snprintf(err, errlen, "%s: partition name '%.64s' longer than "
			 "memcore takes (%zu) or not a name", path,
			 buf + strlen(KEY), len - 1);
		return -1;
	}
	snprintf(partition, len, "%s", buf + strlen(KEY));
	return 1;
}

void mc_jobview_remove(const char *dir, uint32_t job_id)
{
	char path[PATH_MAX];

	if (record_path(dir, job_id, "", path, sizeof(path)) == 0)
		unlink(path);
}

#define LOCK_NAME "memcore-keep.lock"
/* The wait between tries grows to this: 40 waiters polling every
 * millisecond would cost more CPU than the writes they wait for. */
#define LOCK_POLL_MAX_MS 16

static long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long)t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

int mc_jobview_lock(const char *dir, uint32_t job_id, unsigned wait_ms,
		    char *err, size_t errlen)
{
	char path[PATH_MAX];
	struct flock l = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
			   .l_start = (off_t)job_id, .l_len = 1 };
	struct stat st;
	long until = now_ms() + (long)wait_ms, step = 1;
	int fd, n;

	n = snprintf(path, sizeof(path), "%s/%s", dir, LOCK_NAME);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		snprintf(err, errlen, "%s: path too long", dir);
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		int e = errno;

		snprintf(err, errlen, "%s: %s", path, strerror(e));
		errno = e;
		return -1;
	}
	if (fstat(fd, &st) < 0 || !mc_st_root_only(&st, 077)) {
		close(fd);
		snprintf(err, errlen, "%s: not a regular file of root's that "
			 "only root can open", path);
		errno = EPERM;
		return -1;
	}
	while (fcntl(fd, F_OFD_SETLK, &l) < 0) {
		int e = errno;

		if ((e != EAGAIN && e != EACCES && e != EINTR) ||
		    now_ms() >= until) {
			close(fd);
			if (e == EAGAIN || e == EACCES) {
				snprintf(err, errlen, "%s: job %" PRIu32
					 "'s lock still held after %u ms",
					 path, job_id, wait_ms);
				e = ETIMEDOUT;
			} else
				snprintf(err, errlen, "%s: %s", path,
					 strerror(e));
			errno = e;
			return -1;
		}
		{
			struct timespec ts = { 0, step * 1000000L };

			nanosleep(&ts, NULL);
		}
		if (step < LOCK_POLL_MAX_MS)
			step *= 2;
	}
	return fd;
}
