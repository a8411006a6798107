/*
 * mc_scratch.c - the job's staging directory under LocalScratch=: made
 * for the job, taken out of reach at its end, emptied out of Slurm's
 * wait, never through a symlink nor across a mount (mc_scratch.h).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mc_parse.h"
#include "mc_scratch.h"
#include "mc_detach.h"
#include "mc_util.h"

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
/* Attempts against a user who keeps making the name we need. */
#define TRIES 8

static void job_name(uint32_t job_id, char *name, size_t len)
{
	snprintf(name, len, "job_%u", job_id);
}

/* "a directory of uid 1001, mode 0777" */
static const char *kind(const struct stat *st, char *buf, size_t len)
{
	snprintf(buf, len, "a %s of uid %u, mode %04o",
		 S_ISDIR(st->st_mode) ? "directory" : S_ISLNK(st->st_mode) ?
		 "symbolic link" : S_ISREG(st->st_mode) ? "file" :
		 "special file", (unsigned)st->st_uid,
		 (unsigned)(st->st_mode & 07777));
	return buf;
}

/*
 * Move from/name, whatever it is, into the directory to as
 * NAME@INODE[suffix] (renameat2 never follows a symlink and, with
 * RENAME_NOREPLACE, never replaces anything there). 0 moved, 1 nothing
 * there, -1 with errno.
 */
static int take_away(int from, const char *name, int to, const char *suffix)
{
	char dest[NAME_MAX + 1];
	struct stat st;

	if (fstatat(from, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return errno == ENOENT ? 1 : -1;
	for (int i = 0; i < TRIES; i++) {
		snprintf(dest, sizeof(dest), "%s@%ju%s.%d", name,
			 (uintmax_t)st.st_ino, suffix, i);
		if (renameat2(from, name, to, dest, RENAME_NOREPLACE) == 0)
			return 0;
		if (errno == ENOENT)
			return 1;
		if (errno != EEXIST)
			return -1;
	}
	return -1;
}

/* .memcore-removing when it is ours: the caller's directory, 0700. */
static int trash_try(int sfd)
{
	struct stat st;
	int fd = openat(sfd, MC_SCRATCH_TRASH, DIR_FLAGS);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) &&
	    st.st_uid == geteuid() && (st.st_mode & 07777) == 0700)
		return fd;
	close(fd);
	return -1;
}

/* A fresh directory of ours, 0700, under a name no one had (name). */
static int temp_dir(int sfd, char *name, size_t len)
{
	struct timespec ts;
	int fd;

	for (int i = 0; i < TRIES; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		snprintf(name, len, "%s.new.%ld.%ld", MC_SCRATCH_TRASH,
			 (long)getpid(), (long)ts.tv_nsec + i);
		if (mkdirat(sfd, name, 0700) == 0)
			break;
		if (errno != EEXIST || i == TRIES - 1)
			return -1;
	}
	fd = openat(sfd, name, DIR_FLAGS);
	if (fd >= 0 && fchmod(fd, 0700) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * .memcore-removing, made when missing. A squat of the name is moved
 * into a fresh directory which then takes the name; a fresh one that lost
 * the race to another prolog goes into the winner, to be swept.
 */
static int trash_open(int sfd)
{
	char tname[NAME_MAX + 1];
	int fd, tmp = -1;

	for (int i = 0; i < TRIES; i++) {
		if ((fd = trash_try(sfd)) >= 0) {
			if (tmp >= 0) {
				take_away(sfd, tname, fd, "");
				close(tmp);
			}
			return fd;
		}
		if (tmp < 0 && (tmp = temp_dir(sfd, tname, sizeof(tname))) < 0)
			return -1;
		if (take_away(sfd, MC_SCRATCH_TRASH, tmp, ".squat") < 0)
			break;
		if (renameat2(sfd, tname, sfd, MC_SCRATCH_TRASH,
			      RENAME_NOREPLACE) == 0)
			return tmp;
	}
	if (tmp >= 0)
		close(tmp);
	errno = EEXIST;
	return -1;
}

int mc_scratch_open(struct mc_scratch *s, const char *path, char *err,
		    size_t errlen)
{
	char q[PATH_MAX + 16];
	struct stat st;

	snprintf(s->path, sizeof(s->path), "%s", path);
	mc_escape(path, 0, q, sizeof(q));
	s->tfd = -1;
	/* Its path was checked at load (root's links, root's directories
	 * above it): only its own owner and mode are left to see. */
	s->sfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->sfd < 0)
		return mc_err(err, errlen, "%s: %s", q, strerror(errno));
	if (fstat(s->sfd, &st) != 0 || !mc_st_shared_dir_ok(&st, geteuid())) {
		mc_scratch_close(s);
		return mc_err(err, errlen, "%s: not a directory of root's "
			      "writable by root alone or sticky (uid %u, "
			      "mode %04o)", q, (unsigned)st.st_uid,
			      (unsigned)(st.st_mode & 07777));
	}
	s->tfd = trash_open(s->sfd);
	if (s->tfd < 0) {
		int e = errno;

		mc_scratch_close(s);
		return mc_err(err, errlen, "%s/%s: cannot be made root's "
			      "alone: %s", q, MC_SCRATCH_TRASH, strerror(e));
	}
	return 0;
}

void mc_scratch_close(struct mc_scratch *s)
{
	if (s->sfd >= 0)
		close(s->sfd);
	if (s->tfd >= 0)
		close(s->tfd);
	s->sfd = s->tfd = -1;
}

/* Hand the new root-made job_J (name) to the job's user, mode 0700. */
static int give(int sfd, const char *name, uid_t uid, gid_t gid)
{
	struct stat st;
	int fd = openat(sfd, name, DIR_FLAGS), rc = -1;

	if (fd < 0)
		return -1;
	/* Ours, just made: in a sticky scratch no one else can swap it. */
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) &&
	    st.st_uid == geteuid() && fchmod(fd, 0700) == 0 &&
	    fchown(fd, uid, gid) == 0)
		rc = 0;
	else if (!errno)
		errno = EPERM;
	close(fd);
	return rc;
}

int mc_scratch_make(struct mc_scratch *s, uint32_t job_id, uid_t uid,
		    gid_t gid, char *note, size_t notelen)
{
	char name[32], k[64], q[PATH_MAX + 16];
	struct stat st;
	int moved = 0;

	note[0] = '\0';
	job_name(job_id, name, sizeof(name));
	mc_escape(s->path, 0, q, sizeof(q));
	for (int i = 0;; i++) {
		if (fstatat(s->sfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			if (!moved)
				snprintf(note, notelen, "%s/%s was there "
					 "already (%s): moved away, not used",
					 q, name, kind(&st, k, sizeof(k)));
			if (take_away(s->sfd, name, s->tfd, ".before") < 0)
				return mc_err(note, notelen, "%s/%s: cannot "
					      "be moved away: %s", q, name,
					      strerror(errno));
			moved = 1;
		}
		if (mkdirat(s->sfd, name, 0700) == 0)
			break;
		if (errno != EEXIST || i == TRIES - 1)
			return mc_err(note, notelen, "%s/%s: %s", q, name,
				      strerror(errno));
	}
	if (give(s->sfd, name, uid, gid) != 0) {
		int e = errno;

		take_away(s->sfd, name, s->tfd, ".failed");
		return mc_err(note, notelen, "%s/%s: cannot be given to uid "
			      "%u: %s", q, name, (unsigned)uid, strerror(e));
	}
	return moved;
}

int mc_scratch_retire(struct mc_scratch *s, uint32_t job_id, char *err,
		      size_t errlen)
{
	char name[32], q[PATH_MAX + 16];
	int rc;

	err[0] = '\0';
	job_name(job_id, name, sizeof(name));
	rc = take_away(s->sfd, name, s->tfd, "");
	if (rc < 0)
		return mc_err(err, errlen, "%s/%s: cannot be moved into %s: "
			      "%s", mc_escape(s->path, 0, q, sizeof(q)), name,
			      MC_SCRATCH_TRASH, strerror(errno));
	return rc == 0;
}

static bool dot(const char *name)
{
	return !strcmp(name, ".") || !strcmp(name, "..");
}

bool mc_scratch_pending(const struct mc_scratch *s)
{
	struct dirent *de;
	bool any = false;
	DIR *d = mc_opendir_fd(s->tfd);

	while (d && !any && (de = readdir(d)))
		any = !dot(de->d_name);
	if (d)
		closedir(d);
	return any;
}

bool mc_scratch_same_mount(const struct statx *top, const struct statx *dir)
{
	return (top->stx_mask & STATX_MNT_ID) &&
	       (dir->stx_mask & STATX_MNT_ID) &&
	       top->stx_mnt_id == dir->stx_mnt_id;
}

struct rm_state {
	struct statx top;	/* .memcore-removing: its mount is never left */
	long removed, left;
	char err[512];		/* the first problem */
};

/* The first problem, "entry NAME: why (strerror(e))" (e 0: none). */
static void note(struct rm_state *r, const char *name, const char *why,
		 int e)
{
	char q[256];	/* a user's file name: one line in slurmd's log */

	r->left++;
	if (!r->err[0])
		snprintf(r->err, sizeof(r->err), "entry %s: %s%s%s%s",
			 mc_escape(name, 0, q, sizeof(q)), why, e ? " (" : "",
			 e ? strerror(e) : "", e ? ")" : "");
}

static int mount_of(int fd, const char *name, int flags, struct statx *sx)
{
	return statx(fd, name, flags | AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT,
		     STATX_TYPE | STATX_INO | STATX_MNT_ID, sx);
}

static void rm_entries(int fd, int depth, struct rm_state *r);

/* The directory fd/name, seen as sx, emptied when it may be entered. */
static void rm_dir_below(int fd, const char *name, const struct statx *sx,
			 int depth, struct rm_state *r)
{
	struct statx in;
	int sub;

	if (!mc_scratch_same_mount(&r->top, sx)) {
		note(r, name, "on another mount: left", 0);
		return;
	}
	if (depth >= MC_SCRATCH_DEPTH_MAX) {
		note(r, name, "too deep: left", 0);
		return;
	}
	sub = openat(fd, name, DIR_FLAGS);
	if (sub < 0) {
		note(r, name, "cannot be opened: left", errno);
		return;
	}
	/* The one opened: a mount or another directory swapped in since. */
	if (mount_of(sub, "", AT_EMPTY_PATH, &in) != 0 ||
	    !mc_scratch_same_mount(&r->top, &in) || in.stx_ino != sx->stx_ino) {
		close(sub);
		note(r, name, "changed while it was read: left", 0);
		return;
	}
	rm_entries(sub, depth + 1, r);	/* closes sub */
}

/* One entry of the directory fd: a subdirectory emptied first. */
static void rm_entry(int fd, const char *name, int depth, struct rm_state *r)
{
	struct statx sx;
	bool isdir;

	if (mount_of(fd, name, 0, &sx) != 0) {
		note(r, name, "cannot be read", errno);
		return;
	}
	isdir = S_ISDIR(sx.stx_mode);
	if (isdir) {
		long before = r->left;

		rm_dir_below(fd, name, &sx, depth, r);
		if (r->left > before)
			return;	/* it keeps what was left, said */
	}
	if (unlinkat(fd, name, isdir ? AT_REMOVEDIR : 0) == 0)
		r->removed++;
	else
		note(r, name, "cannot be removed", errno);
}

/* Every entry of the open directory fd (which is closed here). */
static void rm_entries(int fd, int depth, struct rm_state *r)
{
	struct dirent *de;
	DIR *dir = fdopendir(fd);

	if (!dir) {
		note(r, ".", "a directory cannot be read", errno);
		close(fd);
		return;
	}
	while ((de = readdir(dir)))
		if (!dot(de->d_name))
			rm_entry(dirfd(dir), de->d_name, depth, r);
	closedir(dir);
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) +
	       (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/*
 * What an entry of .memcore-removing was, from its name NAME@INO[how].N:
 * who "job 7: " for job_7, else ""; what "/scratch/job_7" (taken at the
 * job's end), "what stood at /scratch/job_7 before the job" (.before),
 * else "/scratch/NAME".
 */
static void what_was(const char *entry, const char *scratch, char *who,
		     size_t wholen, char *what, size_t len)
{
	char q[PATH_MAX + 16], orig[NAME_MAX + 1], e[4 * NAME_MAX + 8];
	const char *at = strchr(entry, '@');
	size_t n = at ? (size_t)(at - entry) : strlen(entry);
	bool before = at && strstr(at, ".before.");
	unsigned job;
	char tail;

	snprintf(orig, sizeof(orig), "%.*s", (int)n, entry);
	mc_escape(scratch, 0, q, sizeof(q));
	who[0] = '\0';
	if (sscanf(orig, "job_%u%c", &job, &tail) == 1)
		snprintf(who, wholen, "job %u: ", job);
	snprintf(what, len, "%s%s/%s%s", before ? "what stood at " : "", q,
		 mc_escape(orig, 0, e, sizeof(e)),
		 before ? " before the job" : "");
}

/* One entry of .memcore-removing, removed whole and said. */
static long sweep_one(int tfd, const char *entry, const char *scratch,
		      const struct statx *top, mc_scratch_say_fn say)
{
	struct rm_state r;
	char who[32], what[2 * PATH_MAX], line[3 * PATH_MAX];
	struct timespec t0;

	memset(&r, 0, sizeof(r));
	r.top = *top;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rm_entry(tfd, entry, 1, &r);
	what_was(entry, scratch, who, sizeof(who), what, sizeof(what));
	if (r.left)
		snprintf(line, sizeof(line), "memcore: %s%s: %ld entries "
			 "removed in %.2f s, %ld left: %s", who, what,
			 r.removed, seconds_since(&t0), r.left, r.err);
	else
		snprintf(line, sizeof(line), "memcore: %sremoved %s (%ld "
			 "entries, %.2f s, out of Slurm's wait)", who, what,
			 r.removed, seconds_since(&t0));
	say(r.left > 0, line);
	return r.removed;
}

long mc_scratch_sweep(int tfd, const char *scratch, mc_scratch_say_fn say)
{
	struct statx top;
	struct dirent *de;
	long n = 0;
	DIR *d;

	if (mount_of(tfd, "", AT_EMPTY_PATH, &top) != 0 ||
	    !(top.stx_mask & STATX_MNT_ID)) {
		say(true, "memcore: LocalScratch's " MC_SCRATCH_TRASH " left "
		    "as it is: this kernel gives no mount id (statx "
		    "STATX_MNT_ID, Linux 5.8)");
		return 0;
	}
	d = mc_opendir_fd(tfd);
	while (d && (de = readdir(d)))
		if (!dot(de->d_name))
			n += sweep_one(dirfd(d), de->d_name, scratch, &top,
				       say);
	if (d)
		closedir(d);
	return n;
}

struct sweeper_arg {
	const struct mc_scratch *s;
	mc_scratch_say_fn say;
};

/* The detached sweeper's life (mc_run_detached): nicer than the epilog,
 * behind any sweeper already running. */
static void sweeper(void *arg)
{
	const struct sweeper_arg *a = arg;
	int lock = openat(a->s->tfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (setpriority(PRIO_PROCESS, 0, 10) != 0)
		errno = 0;	/* at the epilog's priority, then */
	if (lock >= 0 && flock(lock, LOCK_EX) == 0)
		mc_scratch_sweep(a->s->tfd, a->s->path, a->say);
}

int mc_scratch_sweep_detached(const struct mc_scratch *s,
			      mc_scratch_say_fn say)
{
	struct sweeper_arg a = { s, say };

	return mc_run_detached(sweeper, &a);
}
