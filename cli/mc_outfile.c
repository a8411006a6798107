/*
 * mc_outfile.c - write a file where the caller says, never through what a
 * user planted there (see mc_outfile.h).
 */
#include "mc_outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mc_parse.h"

/* path's directory, opened (O_PATH is not enough for openat's O_CREAT),
 * and its last component into base. -1 with errno. */
static int open_parent(const char *path, char *base, size_t len)
{
	const char *slash = strrchr(path, '/');
	char dir[4096];

	if (!*path || (slash && !slash[1])) {	/* "" names nothing */
		errno = *path ? EISDIR : ENOENT;
		return -1;
	}
	if ((size_t)snprintf(base, len, "%s", slash ? slash + 1 : path) >=
	    len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if ((size_t)snprintf(dir, sizeof(dir), "%.*s",
				  slash == path ? 1 : (int)(slash - path),
				  path) >= sizeof(dir)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* The rules of mc_outfile.h on dfd/base: 0, or -1 with why. */
static int check_at(int dfd, const char *base, char *why, size_t whylen)
{
	struct stat d, st;

	if (fstat(dfd, &d) < 0)
		return mc_err(why, whylen, "%s", strerror(errno));
	if ((d.st_mode & S_IWOTH) && !(d.st_mode & S_ISVTX))
		return mc_err(why, whylen, "its directory is writable by "
			      "anyone (mode %04o) and not sticky: anyone "
			      "could replace the file; refused",
			      (unsigned)(d.st_mode & 07777));
	if (faccessat(dfd, ".", W_OK | X_OK, AT_EACCESS) < 0)
		return mc_err(why, whylen, "its directory: %s",
			      strerror(errno));
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : mc_err(why, whylen, "%s",
						    strerror(errno));
	if (S_ISLNK(st.st_mode))
		return mc_err(why, whylen, "a symbolic link: refused, never "
			      "followed (name the file itself)");
	if (!S_ISREG(st.st_mode))
		return mc_err(why, whylen, "not a regular file: refused");
	if (st.st_uid != geteuid())
		return mc_err(why, whylen, "a file of uid %u, not yours: "
			      "refused, never replaced", (unsigned)st.st_uid);
	return 0;
}

int mc_outfile_check(const char *path, char *why, size_t whylen)
{
	char base[256];
	int dfd = open_parent(path, base, sizeof(base)), rc;

	if (dfd < 0)
		return mc_err(why, whylen, "%s", strerror(errno));
	rc = check_at(dfd, base, why, whylen);
	close(dfd);
	return rc;
}

/* A new file beside base, O_EXCL: a name another made first is skipped,
 * never opened. fd, or -1 with errno. */
static int make_tmp(struct mc_outfile *o)
{
	for (unsigned i = 0; i < 100; i++) {
		int fd;

		snprintf(o->tmp, sizeof(o->tmp), ".%s.%ld.%u.tmp", o->base,
			 (long)getpid(), i);
		fd = openat(o->dfd, o->tmp, O_WRONLY | O_CREAT | O_EXCL |
			    O_NOFOLLOW | O_CLOEXEC, 0666);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return -1;
}

int mc_outfile_open(struct mc_outfile *o, const char *path, char *why,
		    size_t whylen)
{
	int fd;

	o->f = NULL;
	o->dfd = open_parent(path, o->base, sizeof(o->base));
	if (o->dfd < 0)
		return mc_err(why, whylen, "%s", strerror(errno));
	if (check_at(o->dfd, o->base, why, whylen) < 0)
		goto fail;
	fd = make_tmp(o);
	if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
		snprintf(why, whylen, "%s", strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlinkat(o->dfd, o->tmp, 0);
		}
		goto fail;
	}
	return 0;
fail:
	close(o->dfd);
	return -1;
}

int mc_outfile_commit(struct mc_outfile *o, int ok, char *why,
		      size_t whylen)
{
	int rc = -1;

	if (fclose(o->f) != 0 && ok) {
		snprintf(why, whylen, "%s", strerror(errno));
		ok = 0;
	} else if (!ok) {
		snprintf(why, whylen, "not written");
	}
	/* Checked again: what was planted meanwhile is refused too. */
	if (ok && check_at(o->dfd, o->base, why, whylen) == 0) {
		rc = renameat(o->dfd, o->tmp, o->dfd, o->base);
		if (rc < 0)
			snprintf(why, whylen, "%s", strerror(errno));
	}
	if (rc < 0)
		unlinkat(o->dfd, o->tmp, 0);
	close(o->dfd);
	return rc;
}
