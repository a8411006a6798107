/*
 * mc_scratch.c - remove a job's staging directory under LocalScratch=
 * without following a symlink or crossing a mount (mc_scratch.h).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mc_scratch.h"
#include "mc_util.h"

struct rm_state {
	dev_t dev;		/* job_J's filesystem: never left */
	long removed;
	char *err;		/* the first problem */
	size_t errlen;
	const char *top;	/* scratch/job_J, for messages */
};

/* The first problem, "TOP[: entry NAME]: why (strerror(e))" (e 0:
 * none); why starts with ": ". */
static void note(struct rm_state *r, const char *name, const char *why,
		 int e)
{
	char q[1024];	/* a user's file name: one line in slurmd's log */

	if (!r->err[0])
		snprintf(r->err, r->errlen, "%s%s%s%s%s%s%s", r->top,
			 name ? ": entry " : "", name ? mc_escape(name, 0, q,
			 sizeof(q)) : "", why, e ? " (" : "",
			 e ? strerror(e) : "", e ? ")" : "");
}

static void rm_entries(int fd, int depth, struct rm_state *r);

/* One entry of the directory fd: a subdirectory emptied first. */
static void rm_entry(int fd, const char *name, int depth,
		     struct rm_state *r)
{
	struct stat st;
	int sub;

	if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		note(r, name, ": cannot be read", errno);
		return;
	}
	if (S_ISDIR(st.st_mode)) {
		if (st.st_dev != r->dev) {
			note(r, name, ": on another filesystem (a mount): "
			     "left", 0);
			return;
		}
		if (depth >= MC_SCRATCH_DEPTH_MAX) {
			note(r, name, ": too deep: left", 0);
			return;
		}
		sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			     O_CLOEXEC);
		if (sub < 0) {
			note(r, name, ": cannot be opened: left", errno);
			return;
		}
		rm_entries(sub, depth + 1, r);	/* closes sub */
	}
	if (unlinkat(fd, name, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) == 0)
		r->removed++;
	else
		note(r, name, ": cannot be removed", errno);
}

/* Every entry of the open directory fd (which is closed here). */
static void rm_entries(int fd, int depth, struct rm_state *r)
{
	struct dirent *de;
	struct stat st;
	DIR *dir;

	/* The opened one itself: a mount swapped in after the lstat. */
	if (fstat(fd, &st) != 0 || st.st_dev != r->dev) {
		close(fd);
		note(r, NULL, ": a directory on another filesystem: left", 0);
		return;
	}
	dir = fdopendir(fd);
	if (!dir) {
		note(r, NULL, ": a directory cannot be read", errno);
		close(fd);
		return;
	}
	while ((de = readdir(dir)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			rm_entry(dirfd(dir), de->d_name, depth, r);
	closedir(dir);
}

long mc_scratch_remove(const char *scratch, uint32_t job_id, char *err,
		       size_t errlen)
{
	char name[32], top[4096];
	struct stat sst, st;
	struct rm_state r = { .err = err, .errlen = errlen, .top = top };
	int sfd, fd;

	err[0] = '\0';
	snprintf(name, sizeof(name), "job_%u", job_id);
	snprintf(top, sizeof(top), "%s/%s", scratch, name);
	sfd = open(scratch, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sfd < 0 || fstat(sfd, &sst) != 0) {
		if (sfd >= 0)
			close(sfd);
		return errno == ENOENT ? 0 : (snprintf(err, errlen, "%s: %s",
			scratch, strerror(errno)), -1);
	}
	if (fstatat(sfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		int e = errno;

		close(sfd);
		return e == ENOENT ? 0 : (snprintf(err, errlen, "%s: %s", top,
			strerror(e)), -1);
	}
	r.dev = sst.st_dev;
	if (!S_ISDIR(st.st_mode))
		note(&r, NULL, S_ISLNK(st.st_mode) ? ": is a symlink, not a "
		     "directory: left as it is" : ": not a directory: left",
		     0);
	else if (st.st_dev != r.dev)
		note(&r, NULL, ": on another filesystem (a mount): left", 0);
	else if ((fd = openat(sfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			      O_CLOEXEC)) < 0)
		note(&r, NULL, ": cannot be opened: left", errno);
	else {
		rm_entries(fd, 1, &r);
		if (unlinkat(sfd, name, AT_REMOVEDIR) == 0)
			r.removed++;
		else
			note(&r, NULL, ": cannot be removed", errno);
	}
	close(sfd);
	return err[0] ? -1 : r.removed;
}
