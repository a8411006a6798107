/*
 * mc_stage.c - the plan and the parallel copy of `memcore stage`
 * (mc_stage.h).
 */
#define _GNU_SOURCE	/* copy_file_range */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <inttypes.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mc_stage.h"
#include "mc_util.h"

#define NONE MC_STAGE_NONE
enum { CHUNK = 8 << 20, RW_BUF = 1 << 20, MSG = 2 * PATH_MAX };
/* A directory reached below SRC or DEST: never through a symlink. */
#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

static const char FIX_DEST[] = "stage into a directory of your own, e.g. "
	"LocalScratch/job_J which memcore makes for your job";
static const char FIX_BELOW[] = "remove it or stage elsewhere";

/* "PATH: strerror(e)" into err, the path escaped; returns -1. */
static int path_error(char *err, size_t errlen, const char *path, int e)
{
	char q[2 * PATH_MAX];

	snprintf(err, errlen, "%s: %s", mc_escape(path, 0, q, sizeof(q)),
		 strerror(e));
	return -1;
}

/* Where entry i is, below SRC or at DEST (for messages): built from the
 * names up; a path too long for buf keeps its deepest part. */
static const char *entry_path(const struct mc_stage_plan *p, size_t i,
			      bool dst, char *buf, size_t len)
{
	size_t o = len - 1, l;

	buf[o] = '\0';
	if (i == NONE)
		return p->dest;
	for (;; i = p->e[i].parent) {
		const struct mc_stage_entry *e = &p->e[i];
		bool top = e->parent == NONE;
		const char *n = top && !dst ? p->srcs[e->src].path : e->name;

		if ((l = strlen(n)) + 1 > o)
			break;
		o -= l;
		memcpy(buf + o, n, l);
		if (top && !dst)
			break;
		buf[--o] = '/';
		if (top) {
			if ((l = strlen(p->dest)) <= o)
				memcpy(buf + (o -= l), p->dest, l);
			break;
		}
	}
	return buf + o;
}

/* The length of entry_path's whole path, without a buffer: the walk
 * asks at each level of a deep tree. */
static size_t path_len(const struct mc_stage_plan *p, size_t i, bool dst)
{
	size_t l = 0;

	for (; i != NONE; i = p->e[i].parent) {
		if (p->e[i].parent == NONE && !dst)
			return l + strlen(p->srcs[p->e[i].src].path);
		l += strlen(p->e[i].name) + 1;
	}
	return l + strlen(p->dest);
}

/* "PATH: strerror(e)" for entry i (or "DIR/name" below it). */
static int entry_error(const struct mc_stage_plan *p, size_t i, bool dst,
		       const char *name, int e, char *err, size_t errlen)
{
	char buf[MSG], path[MSG];

	snprintf(path, sizeof(path), "%s%s%s", entry_path(p, i, dst, buf,
		 sizeof(buf)), name ? "/" : "", name ? name : "");
	return path_error(err, errlen, path, e);
}

/*
 * What a swap between the plan and the copy is said as: entry i (below
 * SRC, or at DEST) is no longer what the plan read or made. e is why:
 * ESTALE another file or directory there now; ELOOP/ENOTDIR a symlink or
 * no directory; else its strerror. Returns -1.
 */
static int changed(const struct mc_stage_plan *p, size_t i, bool dst, int e,
		   char *err, size_t errlen)
{
	char buf[MSG], q[2 * MSG];

	snprintf(err, errlen, "%s: changed since it was read (%s); stage "
		 "again", mc_escape(entry_path(p, i, dst, buf, sizeof(buf)), 0,
		 q, sizeof(q)), e == ESTALE ? "another file or directory now" :
		 e == ELOOP || e == ENOTDIR ? "a symlink or no directory now" :
		 strerror(e));
	return -1;
}

/* "name (uid N)" or "uid N" of an owner, for messages. */
static const char *owner_name(uid_t uid, char *buf, size_t len)
{
	struct passwd *pw = getpwuid(uid);

	if (pw)
		snprintf(buf, len, "%s (uid %u)", pw->pw_name, (unsigned)uid);
	else
		snprintf(buf, len, "uid %u", (unsigned)uid);
	return buf;
}

/*
 * A directory the stage writes in (DEST, one under it, one it made) is the
 * caller's alone: owned by the effective user, writable by neither group
 * nor others, who could swap what is in it. 0, or -1 with err naming path,
 * why and fix.
 */
static int own_dir(const struct stat *st, const char *path, const char *fix,
		   char *err, size_t errlen)
{
	char q[2 * PATH_MAX], who[320];

	if (st->st_mode & 022) {
		snprintf(err, errlen, "%s: %s can write it (mode %04o); %s",
			 mc_escape(path, 0, q, sizeof(q)), st->st_mode & 002 ?
			 "others" : "its group", (unsigned)(st->st_mode & 07777),
			 fix);
		return -1;
	}
	if (st->st_uid != geteuid()) {
		snprintf(err, errlen, "%s: owned by %s, not by you; %s",
			 mc_escape(path, 0, q, sizeof(q)),
			 owner_name(st->st_uid, who, sizeof(who)), fix);
		return -1;
	}
	return 0;
}

/* The length of path without its last component ("a/b/" -> "a/"). */
static size_t cut_last(const char *path, size_t cut)
{
	while (cut > 0 && path[cut - 1] == '/')
		cut--;
	while (cut > 0 && path[cut - 1] != '/')
		cut--;
	return cut;
}

/*
 * The named path's symlinks, each checked to be the caller's or root's:
 * one another user owns could point the stage anywhere the caller may
 * write or read (the kernel's protected_symlinks guards sticky
 * directories only, and may be off). 0, or -1 with err.
 */
static int own_links(const char *path, char *err, size_t errlen)
{
	char pre[PATH_MAX], q[2 * PATH_MAX], who[320];
	size_t cut = strlen(path);
	struct stat st;

	if (cut >= sizeof(pre))
		return path_error(err, errlen, path, ENAMETOOLONG);
	for (; cut > 0; cut = cut_last(path, cut)) {
		size_t n = cut;

		/* "a/link/" would be followed by lstat: the name alone,
		 * without its trailing slashes, is what is a symlink. */
		while (n > 1 && path[n - 1] == '/')
			n--;
		snprintf(pre, sizeof(pre), "%.*s", (int)n, path);
		if (lstat(pre, &st) != 0 || !S_ISLNK(st.st_mode) ||
		    st.st_uid == geteuid() || st.st_uid == 0)
			continue;
		snprintf(err, errlen, "%s: a symlink owned by %s, not by you "
			 "or root; name the directory it points to yourself",
			 mc_escape(pre, 0, q, sizeof(q)),
			 owner_name(st.st_uid, who, sizeof(who)));
		return -1;
	}
	return 0;
}

/*
 * DEST's absolute path with every symlink resolved, whether or not it
 * exists yet: its deepest existing ancestor through realpath(3), the
 * components still to be made appended ("." dropped, ".." taking one
 * off). Returns a malloc'd string, or NULL when no ancestor resolves.
 */
static char *dest_resolved(const char *dest)
{
	char pre[PATH_MAX], real[PATH_MAX], out[PATH_MAX];
	size_t cut = strlen(dest), o;
	const char *t;

	if (cut >= sizeof(pre))
		return NULL;
	for (;;) {
		/* dest[0..cut) with its trailing slashes; "" is "." */
		snprintf(pre, sizeof(pre), "%.*s", (int)cut, dest);
		if (realpath(*pre ? pre : ".", real))
			break;
		if (errno != ENOENT && errno != ENOTDIR)
			return NULL;
		cut = cut_last(dest, cut);
		if (cut == 0 && dest[0] == '/')
			return NULL;
	}
	o = (size_t)snprintf(out, sizeof(out), "%s", real);
	for (t = dest + cut; *t;) {
		size_t n = strcspn(t, "/");

		if (n == 2 && !strncmp(t, "..", 2)) {
			while (o > 1 && out[o - 1] != '/')
				o--;
			o = o > 1 ? o - 1 : 1;
			out[o] = 0;
		} else if (n && !(n == 1 && *t == '.')) {
			if (o + 1 + n >= sizeof(out))
				return NULL;
			o += (size_t)snprintf(out + o, sizeof(out) - o, "%s%.*s",
					      o > 1 ? "/" : "", (int)n, t);
		}
		t += n + (t[n] == '/');
	}
	return strdup(out);
}

/* DEST's descriptor held, once checked to be the caller's alone. */
static int hold_dest(struct mc_stage_plan *p, int fd, const char *fix,
		     char *err, size_t errlen)
{
	struct stat st;

	if (fstat(fd, &st) != 0) {
		close(fd);
		return path_error(err, errlen, p->dest, errno);
	}
	if (own_dir(&st, p->dest, fix, err, errlen) < 0) {
		close(fd);
		return -1;
	}
	p->dest_fd = fd;
	p->dest_dev = st.st_dev;
	p->dest_ino = st.st_ino;
	return 0;
}

int mc_stage_plan_init(struct mc_stage_plan *plan, const char *dest,
		       char *err, size_t errlen)
{
	char q[2 * PATH_MAX];
	int fd;

	memset(plan, 0, sizeof(*plan));
	plan->dest_fd = -1;
	if (!(plan->dest = strdup(dest)))
		return path_error(err, errlen, dest, ENOMEM);
	plan->dest_real = dest_resolved(dest);
	if (own_links(dest, err, errlen) < 0)
		return -1;
	fd = open(dest, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 && errno == ENOTDIR) {
		snprintf(err, errlen, "%s: not a directory (DEST is the "
			 "directory the SRCs are copied into)",
			 mc_escape(dest, 0, q, sizeof(q)));
		return -1;
	}
	if (fd < 0)
		return errno == ENOENT ? 0 : path_error(err, errlen, dest,
							errno);
	return hold_dest(plan, fd, FIX_DEST, err, errlen);
}

void mc_stage_plan_free(struct mc_stage_plan *plan)
{
	for (size_t i = 0; i < plan->n; i++) {
		free(plan->e[i].name);
		free(plan->e[i].target);
	}
	for (size_t i = 0; i < plan->nsrcs; i++) {
		free(plan->srcs[i].path);
		close(plan->srcs[i].fd);
	}
	if (plan->dest_fd >= 0)
		close(plan->dest_fd);
	free(plan->e);
	free(plan->srcs);
	free(plan->dest);
	free(plan->dest_real);
	memset(plan, 0, sizeof(*plan));
	plan->dest_fd = -1;
}

/* ---- directories reached again from the held SRC or DEST ---- */

/*
 * One thread's way into one side's tree: the last directory it reached
 * (entry at; MC_STAGE_NONE: DEST itself) held open, so that the next one
 * is a step or two from it, up by ".." or down by name, each checked
 * against the plan. One descriptor, whatever the tree's size.
 */
struct cursor {
	struct mc_stage_plan *p;
	bool dst;		/* DEST's side, else the source's */
	size_t at;
	int fd;			/* -1: none held */
	size_t *down;		/* the way down, max_depth + 1 long */
};

static int cur_init(struct cursor *c, struct mc_stage_plan *p, bool dst)
{
	*c = (struct cursor){ .p = p, .dst = dst, .at = NONE, .fd = -1 };
	c->down = malloc(((size_t)p->max_depth + 2) * sizeof(*c->down));
	return c->down ? 0 : -1;
}

static void cur_drop(struct cursor *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

static void cur_free(struct cursor *c)
{
	cur_drop(c);
	free(c->down);
}

/* The cursor now holds fd, entry i's directory (checked by the caller). */
static void cur_take(struct cursor *c, size_t i, int fd)
{
	cur_drop(c);
	c->at = i;
	c->fd = fd;
}

static long depth_of(const struct mc_stage_plan *p, size_t i)
{
	return i == NONE ? -1 : (long)p->e[i].depth;
}

/* Whether fd is entry i as the plan has it (i NONE: DEST). 0, or ESTALE
 * (another one there now) or fstat's errno. */
static int same_id(const struct cursor *c, size_t i, int fd)
{
	const struct mc_stage_entry *e = i == NONE ? NULL : &c->p->e[i];
	struct stat st;
	dev_t dev = !e ? c->p->dest_dev : c->dst ? e->ddev : e->dev;
	ino_t ino = !e ? c->p->dest_ino : c->dst ? e->dino : e->ino;

	if (fstat(fd, &st) != 0)
		return errno;
	return st.st_dev == dev && st.st_ino == ino ? 0 : ESTALE;
}

/* Back to the base of j's tree: the SRC's directory, or DEST. */
static int cur_restart(struct cursor *c, size_t j)
{
	const struct mc_stage_src *s = c->dst ? NULL
					      : &c->p->srcs[c->p->e[j].src];
	int fd = fcntl(s ? s->fd : c->p->dest_fd, F_DUPFD_CLOEXEC, 0);

	if (fd < 0)
		return errno;
	cur_take(c, s ? s->entry : NONE, fd);
	return 0;
}

/* One step: openat(name) with O_NOFOLLOW, checked to be entry to. */
static int cur_step(struct cursor *c, const char *name, size_t to)
{
	int fd = openat(c->fd, name, DIR_FLAGS), rc;

	if (fd < 0)
		return errno;
	if ((rc = same_id(c, to, fd)) != 0) {
		close(fd);
		return rc;
	}
	cur_take(c, to, fd);
	return 0;
}

/* From at to j: up to their common ancestor (by ".."), then down by
 * name; *bad is the entry a failed step was for. 0 or an errno. */
static int cur_go(struct cursor *c, size_t j, size_t *bad)
{
	const struct mc_stage_plan *p = c->p;
	size_t a = c->at, b = j, nd = 0, ups = 0;
	int rc;

	while (depth_of(p, b) > depth_of(p, a)) {
		c->down[nd++] = b;
		b = p->e[b].parent;
	}
	for (; a != b; ups++) {
		if (depth_of(p, a) == depth_of(p, b)) {
			c->down[nd++] = b;
			b = p->e[b].parent;
		}
		a = p->e[a].parent;
	}
	for (; ups > 0; ups--)
		if ((rc = cur_step(c, "..", *bad = p->e[c->at].parent)) != 0)
			return rc;
	while (nd-- > 0)
		if ((rc = cur_step(c, p->e[*bad = c->down[nd]].name,
				   c->down[nd])) != 0)
			return rc;
	return 0;
}

/*
 * The descriptor of directory entry j (MC_STAGE_NONE: DEST) on the
 * cursor's side, reached from the last one it held, or from the base.
 * The cursor keeps it: not to be closed. -1 with err when a step fails
 * (changed: the plan's directory is no longer there).
 */
static int cur_dir(struct cursor *c, size_t j, char *err, size_t errlen)
{
	size_t bad = j;
	int rc = 0;

	if (c->fd >= 0 && c->at == j)
		return c->fd;
	if (c->fd < 0 || (!c->dst && (c->at == NONE ||
	    c->p->e[c->at].src != c->p->e[j].src)))
		rc = cur_restart(c, j);
	if (!rc)
		rc = cur_go(c, j, &bad);
	/* ".." from a directory whose final mode the copy has set may be
	 * closed to the caller (no x): from the base down instead. */
	if (rc == EACCES && !(rc = cur_restart(c, j)))
		rc = cur_go(c, j, &bad);
	if (rc) {
		cur_drop(c);
		return changed(c->p, bad, c->dst, rc, err, errlen);
	}
	return c->fd;
}

/* ---- the plan ---- */

/* Entry for name under parent (NONE: a SRC), from what lstat read. Its
 * index, or NONE when memory is short. */
static size_t add(struct mc_stage_plan *p, size_t parent, size_t src,
		  const char *name, enum mc_stage_kind kind,
		  const struct stat *st)
{
	struct mc_stage_entry *e;

	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 256;
		void *m = realloc(p->e, cap * sizeof(*p->e));

		if (!m)
			return NONE;
		p->e = m;
		p->cap = cap;
	}
	e = &p->e[p->n];
	*e = (struct mc_stage_entry){
		.name = strdup(name), .parent = parent, .src = src,
		.depth = parent == NONE ? 0 : p->e[parent].depth + 1,
		.kind = kind, .mode = st->st_mode & MC_STAGE_MODE_BITS,
		.size = (uint64_t)st->st_size, .mtime = st->st_mtim,
		.dev = st->st_dev, .ino = st->st_ino,
	};
	if (!e->name)
		return NONE;
	if (e->depth > p->max_depth)
		p->max_depth = e->depth;
	return p->n++;
}

static const char *type_word(mode_t m)
{
	return S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket" :
	       S_ISCHR(m) ? "a character device" :
	       S_ISBLK(m) ? "a block device" : "of an unknown type";
}

/* "memcore: stage: skipped DIR/NAME: WHY". Out of line: its buffers are
 * not on the stack of each level of the walk. */
static __attribute__((noinline)) void say_skipped(
	const struct mc_stage_plan *p, size_t dir, const char *name,
	const char *why, const char *what)
{
	char buf[MSG], path[MSG], q[2 * MSG];

	if (dir == NONE)
		snprintf(path, sizeof(path), "%s", name);
	else
		snprintf(path, sizeof(path), "%s/%s", entry_path(p, dir,
			 false, buf, sizeof(buf)), name);
	fprintf(stderr, "memcore: stage: skipped %s: %s%s\n",
		mc_escape(path, 0, q, sizeof(q)), why, what);
}

/* The kind staged for a type, or -1 for a type left out (said unless
 * quiet). */
static int kind_of(struct mc_stage_plan *p, size_t dir, const char *name,
		   const struct stat *st, bool quiet)
{
	if (S_ISDIR(st->st_mode) && p->dest_fd >= 0 &&
	    st->st_dev == p->dest_dev && st->st_ino == p->dest_ino) {
		if (!quiet)
			say_skipped(p, dir, name, "it is DEST itself", "");
		return -1;
	}
	if (S_ISDIR(st->st_mode) || S_ISREG(st->st_mode) ||
	    S_ISLNK(st->st_mode))
		return S_ISDIR(st->st_mode) ? MC_STAGE_DIR :
		       S_ISREG(st->st_mode) ? MC_STAGE_FILE : MC_STAGE_LINK;
	p->others++;
	if (!quiet)
		say_skipped(p, dir, name, type_word(st->st_mode), " (only "
			    "files, directories and symlinks are staged)");
	return -1;
}

static int walk(struct mc_stage_plan *p, size_t dir, int fd, bool quiet,
		char *err, size_t errlen);

/* A symlink's target, read now: what the copy makes again. */
static int read_target(struct mc_stage_plan *p, size_t i, int dfd,
		       char *err, size_t errlen)
{
	char t[PATH_MAX];
	ssize_t n = readlinkat(dfd, p->e[i].name, t, sizeof(t) - 1);

	if (n < 0)
		return entry_error(p, i, false, NULL, errno, err, errlen);
	t[n] = '\0';
	if (!(p->e[i].target = strdup(t)))
		return entry_error(p, i, false, NULL, ENOMEM, err, errlen);
	return 0;
}

/* A directory below SRC: opened under its parent (dfd) without following,
 * checked to be what lstat read, and walked. */
static int walk_into(struct mc_stage_plan *p, size_t i, int dfd, bool quiet,
		     char *err, size_t errlen)
{
	int fd = openat(dfd, p->e[i].name, DIR_FLAGS), rc;
	struct stat st;

	if (fd < 0)
		return entry_error(p, i, false, NULL, errno, err, errlen);
	rc = fstat(fd, &st) != 0 ? errno : st.st_dev != p->e[i].dev ||
	     st.st_ino != p->e[i].ino ? ESTALE : 0;
	if (rc) {
		close(fd);
		return changed(p, i, false, rc, err, errlen);
	}
	return walk(p, i, fd, quiet, err, errlen);
}

/* One entry of directory dir (open as dfd): listed, and walked when a
 * directory. A file its user cannot read is an input error found now,
 * as an unreadable directory is, not a copy failed halfway. */
static int walk_one(struct mc_stage_plan *p, size_t dir, int dfd,
		    const char *name, bool quiet, char *err, size_t errlen)
{
	struct stat st;
	size_t i;
	int kind;

	/* Both sides' paths within PATH_MAX, as the tools reading them
	 * later need. */
	if (path_len(p, dir, false) + strlen(name) + 1 >= PATH_MAX ||
	    path_len(p, dir, true) + strlen(name) + 1 >= PATH_MAX)
		return entry_error(p, dir, false, name, ENAMETOOLONG, err,
				   errlen);
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
	    (S_ISREG(st.st_mode) && faccessat(dfd, name, R_OK, AT_EACCESS)))
		return entry_error(p, dir, false, name, errno, err, errlen);
	if ((kind = kind_of(p, dir, name, &st, quiet)) < 0)
		return 0;
	if ((i = add(p, dir, p->e[dir].src, name, kind, &st)) == NONE)
		return entry_error(p, dir, false, name, ENOMEM, err, errlen);
	if (kind == MC_STAGE_LINK)
		return read_target(p, i, dfd, err, errlen);
	return kind == MC_STAGE_DIR ? walk_into(p, i, dfd, quiet, err, errlen)
				    : 0;
}

/* The entries of directory dir (fd, closed here). Recursive, one level a
 * directory: one descriptor a level, the paths built only for messages
 * (a tree 1000 deep is within PATH_MAX and the stack). */
static int walk(struct mc_stage_plan *p, size_t dir, int fd, bool quiet,
		char *err, size_t errlen)
{
	struct dirent *de;
	DIR *d = fdopendir(fd);
	int rc = 0;

	if (!d) {
		rc = errno;
		close(fd);
		return entry_error(p, dir, false, NULL, rc, err, errlen);
	}
	for (errno = 0; rc == 0 && (de = readdir(d)); errno = 0)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			rc = walk_one(p, dir, dirfd(d), de->d_name, quiet, err,
				      errlen);
	if (rc == 0 && errno)
		rc = entry_error(p, dir, false, NULL, errno, err, errlen);
	closedir(d);
	return rc;
}

/* What the copy has to do for entry e, counted. */
static void count(struct mc_stage_plan *p, const struct mc_stage_entry *e)
{
	uint64_t bytes = e->kind == MC_STAGE_FILE ? e->size : 0;

	if (e->kind == MC_STAGE_DIR)
		p->new_dirs += !e->skip;
	else if (e->skip) {
		p->skip_files++;
		p->skip_bytes += bytes;
	} else {
		p->copy_files++;
		p->copy_bytes += bytes;
	}
}

/* A directory already at DEST for entry i (lstat read d): the caller's
 * alone, held by its identity from now on. */
static int judge_dir(struct mc_stage_plan *p, size_t i, int pfd,
		     const struct stat *d, char *err, size_t errlen)
{
	struct mc_stage_entry *e = &p->e[i];
	char buf[MSG];
	struct stat st;
	int fd;

	if (own_dir(d, entry_path(p, i, true, buf, sizeof(buf)), FIX_BELOW,
		    err, errlen) < 0)
		return -1;
	if ((fd = openat(pfd, e->name, DIR_FLAGS)) < 0 || fstat(fd, &st) != 0 ||
	    st.st_dev != d->st_dev || st.st_ino != d->st_ino) {
		int rc = fd < 0 ? errno : ESTALE;

		if (fd >= 0)
			close(fd);
		return changed(p, i, true, rc, err, errlen);
	}
	close(fd);
	e->ddev = st.st_dev;
	e->dino = st.st_ino;
	e->dthere = e->skip = true;
	return 0;
}

/* Whether a symlink at DEST (in pfd) has e's target. */
static bool same_target(int pfd, const struct mc_stage_entry *e)
{
	char t[PATH_MAX];
	ssize_t n = readlinkat(pfd, e->name, t, sizeof(t));

	return n >= 0 && (size_t)n == strlen(e->target) &&
	       !memcmp(t, e->target, (size_t)n);
}

/*
 * What is at entry i's destination already (in its directory pfd): the
 * skip rule (mc_stage.h), or -1 with err when something of another kind
 * is in the way (a file where a directory goes, a directory where a file
 * goes: nothing is replaced by force) or a directory not the caller's.
 */
static int judge_at(struct mc_stage_plan *p, size_t i, int pfd, char *err,
		    size_t errlen)
{
	struct mc_stage_entry *e = &p->e[i];
	char buf[MSG], q[2 * MSG];
	struct stat d;

	if (fstatat(pfd, e->name, &d, AT_SYMLINK_NOFOLLOW) != 0)
		return errno == ENOENT ? 0 : entry_error(p, i, true, NULL,
							 errno, err, errlen);
	if ((e->kind == MC_STAGE_DIR) != !!S_ISDIR(d.st_mode)) {
		snprintf(err, errlen, "%s: is in the way (%s, where the "
			 "source has a %s); %s", mc_escape(entry_path(p, i,
			 true, buf, sizeof(buf)), 0, q, sizeof(q)),
			 S_ISDIR(d.st_mode) ? "a directory" : "not a directory",
			 e->kind == MC_STAGE_DIR ? "directory" : "file",
			 FIX_BELOW);
		return -1;
	}
	if (e->kind == MC_STAGE_DIR)
		return judge_dir(p, i, pfd, &d, err, errlen);
	if (e->kind == MC_STAGE_FILE)
		e->skip = S_ISREG(d.st_mode) &&
			  (uint64_t)d.st_size == e->size &&
			  d.st_mtim.tv_sec == e->mtime.tv_sec &&
			  d.st_mtim.tv_nsec == e->mtime.tv_nsec;
	else
		e->skip = S_ISLNK(d.st_mode) && same_target(pfd, e);
	return 0;
}

/* Entries from..n against DEST, each in a directory already there
 * reached through the held DEST (a new directory's entries are new). */
static int judge_dest(struct mc_stage_plan *p, size_t from, char *err,
		      size_t errlen)
{
	struct cursor c;
	int rc = 0;

	if (cur_init(&c, p, true) < 0)
		return path_error(err, errlen, p->dest, ENOMEM);
	for (size_t i = from; i < p->n && rc == 0; i++) {
		size_t up = p->e[i].parent;
		int pfd = -1;

		if (p->dest_fd >= 0 && (up == NONE || p->e[up].dthere) &&
		    (pfd = cur_dir(&c, up, err, errlen)) < 0)
			rc = -1;
		else if (pfd >= 0)
			rc = judge_at(p, i, pfd, err, errlen);
		if (rc == 0)
			count(p, &p->e[i]);
	}
	cur_free(&c);
	return rc;
}

/* The name SRC takes under DEST: its last component as given, or the
 * resolved one's for ".", ".." and the like. */
static const char *src_name(const char *arg, const char *real, char *buf,
			    size_t len)
{
	size_t l = strlen(arg);
	const char *b;

	while (l > 1 && arg[l - 1] == '/')
		l--;
	snprintf(buf, len, "%.*s", (int)l, arg);
	b = strrchr(buf, '/') ? strrchr(buf, '/') + 1 : buf;
	if (!*b || !strcmp(b, ".") || !strcmp(b, ".."))
		b = strrchr(real, '/') ? strrchr(real, '/') + 1 : real;
	return b;
}

/* Why SRC (resolved real, named src) cannot go to DEST as name: the root
 * directory, DEST inside it, another SRC of that name. 0 or -1. */
static int src_fits(const struct mc_stage_plan *p, const char *src,
		    const char *real, const char *name, bool dir, char *err,
		    size_t errlen)
{
	char q[2 * PATH_MAX], q2[2 * PATH_MAX];
	size_t rl = strlen(real);

	if (!*name) {
		snprintf(err, errlen, "%s: has no name to stage it under "
			 "(the root directory); name a directory below it",
			 mc_escape(src, 0, q, sizeof(q)));
		return -1;
	}
	/* A copy into itself: DEST/NAME/... would sit inside SRC, the
	 * stage writing into the dataset it reads. */
	if (dir && p->dest_real && !strncmp(p->dest_real, real, rl) &&
	    (p->dest_real[rl] == '/' || !p->dest_real[rl])) {
		snprintf(err, errlen, "DEST %s is %s SRC %s; stage to a "
			 "directory outside it", mc_escape(p->dest, 0, q,
			 sizeof(q)), p->dest_real[rl] ? "inside" :
			 "the same directory as", mc_escape(src, 0, q2,
			 sizeof(q2)));
		return -1;
	}
	for (size_t i = 0; i < p->nsrcs; i++)
		if (!strcmp(p->e[p->srcs[i].entry].name, name)) {
			char to[MSG];

			snprintf(to, sizeof(to), "%s/%s", p->dest, name);
			snprintf(err, errlen, "%s: another SRC goes to %s "
				 "too; stage them apart", mc_escape(src, 0, q,
				 sizeof(q)), mc_escape(to, 0, q2, sizeof(q2)));
			return -1;
		}
	return strlen(p->dest) + 1 + strlen(name) >= PATH_MAX ? path_error(
		err, errlen, name, ENAMETOOLONG) : 0;
}

/* SRC's descriptor held, its entry added (NONE: a type left out). */
static int add_src(struct mc_stage_plan *p, const char *real, int fd,
		   const char *name, const struct stat *st, bool quiet,
		   size_t *entry)
{
	void *m = realloc(p->srcs, (p->nsrcs + 1) * sizeof(*p->srcs));
	int kind = kind_of(p, NONE, real, st, quiet);
	struct mc_stage_src *s;

	*entry = NONE;
	if (!m)
		return -1;
	p->srcs = m;
	if (kind < 0) {
		close(fd);
		return 0;
	}
	s = &p->srcs[p->nsrcs];
	if (!(s->path = strdup(real)))
		return -1;
	if ((*entry = add(p, NONE, p->nsrcs, name, kind, st)) == NONE) {
		free(s->path);
		return -1;
	}
	s->fd = fd;
	s->entry = *entry;
	p->nsrcs++;
	return 0;
}

/* SRC opened as named (the user's word: followed; root only through
 * symlinks root owns), read as it is, and resolved. fd or -1. */
static int open_src(const char *src, struct stat *st, char *real,
		    char *err, size_t errlen)
{
	char q[2 * PATH_MAX];
	int fd;

	if (geteuid() == 0 && own_links(src, err, errlen) < 0)
		return -1;
	/* O_NONBLOCK: a FIFO named as SRC is skipped, not waited on. */
	fd = open(src, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || fstat(fd, st) != 0 || !realpath(src, real)) {
		snprintf(err, errlen, "SRC %s: %s", mc_escape(src, 0, q,
			 sizeof(q)), strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

int mc_stage_plan_src(struct mc_stage_plan *plan, const char *src,
		      bool quiet, char *err, size_t errlen)
{
	char real[PATH_MAX], name[PATH_MAX];
	const char *b;
	size_t from = plan->n, top;
	struct stat st;
	int fd = open_src(src, &st, real, err, errlen), dfd;

	if (fd < 0)
		return -1;
	b = src_name(src, real, name, sizeof(name));
	if (src_fits(plan, src, real, b, S_ISDIR(st.st_mode), err, errlen)) {
		close(fd);
		return -1;
	}
	if (add_src(plan, real, fd, b, &st, quiet, &top) < 0) {
		close(fd);
		return path_error(err, errlen, src, ENOMEM);
	}
	if (top != NONE && plan->e[top].kind == MC_STAGE_DIR) {
		if ((dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0)
			return path_error(err, errlen, real, errno);
		if (walk(plan, top, dfd, quiet, err, errlen) < 0)
			return -1;
	}
	return judge_dest(plan, from, err, errlen);
}

/* ---- DEST made ---- */

/*
 * Directory name made (mode 0700) under fd, opened without following and
 * checked to be the caller's alone (one someone else made first is
 * refused, not adopted). Returns its descriptor, -1 (I/O, err) or -2
 * (not the caller's, err).
 */
static int make_one(int fd, const char *name, const char *path, char *err,
		    size_t errlen)
{
	bool made = mkdirat(fd, name, 0700) == 0;
	char q[2 * PATH_MAX];
	struct stat st;
	int nfd;

	if (!made && errno != EEXIST)
		return path_error(err, errlen, path, errno);
	nfd = openat(fd, name, DIR_FLAGS);
	if (nfd < 0 || fstat(nfd, &st) != 0) {
		int e = errno;

		if (nfd >= 0)
			close(nfd);
		if (e != ELOOP && e != ENOTDIR)
			return path_error(err, errlen, path, e);
		snprintf(err, errlen, "%s: not a directory of yours (a "
			 "symlink or a file there); %s", mc_escape(path, 0, q,
			 sizeof(q)), FIX_DEST);
		return -2;
	}
	/* 0700 whatever the umask took. */
	if (own_dir(&st, path, FIX_DEST, err, errlen) < 0 ||
	    (made && fchmod(nfd, 0700) != 0)) {
		close(nfd);
		return made ? path_error(err, errlen, path, errno) : -2;
	}
	return nfd;
}

/* One component of DEST still to be made, under fd: ".", ".." (as the
 * user wrote them) or a directory made. A descriptor, -1 or -2. */
static int next_dir(int fd, const char *name, const char *path, char *err,
		    size_t errlen)
{
	int nfd;

	if (strcmp(name, ".") && strcmp(name, ".."))
		return make_one(fd, name, path, err, errlen);
	nfd = openat(fd, name, DIR_FLAGS);
	return nfd >= 0 ? nfd : path_error(err, errlen, path, errno);
}

/* DEST's deepest existing directory, opened by name: the caller's word.
 * Its descriptor (*cut: the length of that prefix), or -1 with err. */
static int dest_base(const char *dest, size_t *cut, char *err, size_t errlen)
{
	char pre[PATH_MAX];
	int fd;

	for (*cut = strlen(dest);; *cut = cut_last(dest, *cut)) {
		snprintf(pre, sizeof(pre), "%.*s", (int)*cut, dest);
		fd = open(*pre ? pre : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0)
			return fd;
		if (errno != ENOENT || *cut == 0)
			return path_error(err, errlen, *pre ? pre : ".", errno);
	}
}

int mc_stage_make_dest(struct mc_stage_plan *plan, char *err, size_t errlen)
{
	const char *dest = plan->dest, *t;
	char path[PATH_MAX];
	size_t cut;
	int fd, nfd;

	if (plan->dest_fd >= 0)
		return 0;
	if ((fd = dest_base(dest, &cut, err, errlen)) < 0)
		return -1;
	for (t = dest + cut; *t; t += strspn(t, "/")) {
		size_t n = strcspn(t, "/");
		char name[NAME_MAX + 1];

		snprintf(path, sizeof(path), "%.*s", (int)(t + n - dest), dest);
		snprintf(name, sizeof(name), "%.*s", (int)n, t);
		t += n;
		nfd = n > NAME_MAX ? path_error(err, errlen, path, ENAMETOOLONG)
				   : next_dir(fd, name, path, err, errlen);
		close(fd);
		if (nfd < 0)
			return nfd;
		fd = nfd;
	}
	return hold_dest(plan, fd, FIX_DEST, err, errlen) < 0 ? -2 : 0;
}

/* ---- the copy ---- */

/* A temporary name for a directory's new entry, unique in this process. */
static void tmp_name(char *buf, size_t len)
{
	static _Atomic unsigned long seq;

	snprintf(buf, len, ".memcore-stage.%ld.%lu", (long)getpid(),
		 atomic_fetch_add(&seq, 1));
}

/* One chunk by pread/pwrite at the offsets; bytes copied, 0 at EOF. */
static ssize_t rw_chunk(int in, int out, off_t *oi, off_t *oo, char **buf)
{
	ssize_t n;

	if (!*buf && !(*buf = malloc(RW_BUF))) {
		errno = ENOMEM;
		return -1;
	}
	n = pread(in, *buf, RW_BUF, *oi);
	for (ssize_t w = 0, k; n > 0 && w < n; w += k) {
		k = pwrite(out, *buf + w, (size_t)(n - w), *oo + w);
		if (k < 0)
			return -1;
	}
	if (n > 0) {
		*oi += n;
		*oo += n;
	}
	return n;
}

/* All of in into out: copy_file_range, else read/write. 0 or errno. */
static int copy_data(int in, int out, struct mc_stage_progress *pr,
		     char **buf)
{
	off_t oi = 0, oo = 0;
	bool cfr = true;

	for (;;) {
		ssize_t n;

		if (*pr->stop)
			return EINTR;
		if (cfr) {
			n = copy_file_range(in, &oi, out, &oo, CHUNK, 0);
			/* Not between these files (EXDEV and the like), or
			 * nothing from a file that stat calls empty. */
			if ((n < 0 && (errno == EXDEV || errno == EINVAL ||
				       errno == ENOSYS || errno == EOPNOTSUPP))
			    || (n == 0 && oi == 0)) {
				cfr = false;
				continue;
			}
		} else {
			n = rw_chunk(in, out, &oi, &oo, buf);
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno;
		if (n == 0)
			return 0;
		atomic_fetch_add(&pr->bytes, (uint64_t)n);
	}
}

/* One copy thread's state: its way into each side, its buffer. */
struct worker_ctx {
	struct cursor src, dst;
	char *buf;
	char err[2 * MSG + 128];
};

/* Source file i opened for reading: under its directory reached again
 * (a SRC file: the descriptor held since the plan), no symlink followed,
 * checked to be the file the walk read. fd, or -1 with err. */
static int open_in(struct worker_ctx *w, size_t i, struct stat *st)
{
	const struct mc_stage_plan *p = w->src.p;
	const struct mc_stage_entry *e = &p->e[i];
	int dfd = -1, fd, rc;

	if (e->parent == NONE)
		fd = fcntl(p->srcs[e->src].fd, F_DUPFD_CLOEXEC, 0);
	else if ((dfd = cur_dir(&w->src, e->parent, w->err,
				sizeof(w->err))) < 0)
		return -1;
	else	/* O_NONBLOCK: a FIFO swapped in does not hang us. */
		fd = openat(dfd, e->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
			    O_CLOEXEC);
	if (fd < 0)
		return changed(p, i, false, errno, w->err, sizeof(w->err));
	rc = fstat(fd, st) != 0 ? errno : !S_ISREG(st->st_mode) ||
	     st->st_dev != e->dev || st->st_ino != e->ino ? ESTALE : 0;
	if (rc) {
		close(fd);
		return changed(p, i, false, rc, w->err, sizeof(w->err));
	}
	return fd;
}

/* The copy's final state before its rename: the source still as it was
 * when opened (else the copy is no state of it, and would carry the
 * mtime read before), mode, mtime. 0, -1 (said) or an errno. */
static int seal(struct worker_ctx *w, size_t i, int in, int out,
		const struct stat *st)
{
	const struct mc_stage_entry *e = &w->src.p->e[i];
	char buf[MSG], q[2 * MSG];
	struct stat now;

	if (fstat(in, &now) != 0 || now.st_size != st->st_size ||
	    now.st_mtim.tv_sec != st->st_mtim.tv_sec ||
	    now.st_mtim.tv_nsec != st->st_mtim.tv_nsec) {
		snprintf(w->err, sizeof(w->err), "%s: changed while it was "
			 "copied (size or mtime); stage it again once it is "
			 "still", mc_escape(entry_path(w->src.p, i, false, buf,
			 sizeof(buf)), 0, q, sizeof(q)));
		return -1;
	}
	if (fchmod(out, e->mode) != 0)
		return errno;
	/* The mtime of what was read: the next run's skip rule. */
	return futimens(out, (struct timespec[2]){ st->st_atim,
						   st->st_mtim }) ? errno : 0;
}

/* A temporary file in dfd, made with O_EXCL. fd or -1 (errno). */
static int open_tmp(int dfd, char *tmp, size_t len)
{
	int out;

	do {
		tmp_name(tmp, len);
		out = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL |
			     O_NOFOLLOW | O_CLOEXEC, 0600);
	} while (out < 0 && errno == EEXIST);
	return out;
}

/* A regular file, through a temporary name (mc_stage.h). 0 or -1. */
static int copy_file(struct worker_ctx *w, size_t i,
		     struct mc_stage_progress *pr)
{
	const struct mc_stage_plan *p = w->src.p;
	const char *name = p->e[i].name;
	char tmp[64];
	struct stat st;
	int in, out, dfd, rc;

	if ((in = open_in(w, i, &st)) < 0)
		return -1;
	if ((dfd = cur_dir(&w->dst, p->e[i].parent, w->err,
			   sizeof(w->err))) < 0 ||
	    (out = open_tmp(dfd, tmp, sizeof(tmp))) < 0) {
		rc = errno;
		close(in);
		return dfd < 0 ? -1 : entry_error(p, i, true, NULL, rc,
						  w->err, sizeof(w->err));
	}
	if (!(rc = copy_data(in, out, pr, &w->buf)))
		rc = seal(w, i, in, out, &st);
	if (close(out) != 0 && !rc)
		rc = errno;
	close(in);
	if (!rc && renameat(dfd, tmp, dfd, name) != 0)
		rc = errno;
	if (rc)
		unlinkat(dfd, tmp, 0);
	return rc <= 0 ? rc : entry_error(p, i, true, NULL, rc, w->err,
					  sizeof(w->err));
}

/* A symlink, made again with the target the walk read (never followed). */
static int copy_link(struct worker_ctx *w, size_t i)
{
	const struct mc_stage_plan *p = w->dst.p;
	const struct mc_stage_entry *e = &p->e[i];
	int dfd = cur_dir(&w->dst, e->parent, w->err, sizeof(w->err)), rc;
	char tmp[64];

	if (dfd < 0)
		return -1;
	do {
		tmp_name(tmp, sizeof(tmp));
		rc = symlinkat(e->target, dfd, tmp) ? errno : 0;
	} while (rc == EEXIST);
	if (!rc) {
		utimensat(dfd, tmp, (struct timespec[2]){
			{ .tv_nsec = UTIME_OMIT }, e->mtime },
			AT_SYMLINK_NOFOLLOW);
		if (renameat(dfd, tmp, dfd, e->name) != 0) {
			rc = errno;
			unlinkat(dfd, tmp, 0);
		}
	}
	return rc ? entry_error(p, i, true, NULL, rc, w->err, sizeof(w->err))
		  : 0;
}

/* Whether name is a temporary file of a stage whose process is gone
 * (tmp_name's ".memcore-stage.PID.N", PID not a live process here). */
static bool stale_tmp(const char *name)
{
	long pid;
	unsigned long seq;
	int end = 0;

	if (sscanf(name, ".memcore-stage.%ld.%lu%n", &pid, &seq, &end) != 2
	    || name[end] || pid <= 0 || pid == (long)getpid())
		return false;
	return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* Whether the plan copies an entry called name into directory entry dir
 * (a dataset's own file may be named like a temporary one). */
static bool planned_in(const struct mc_stage_plan *p, size_t dir,
		       const char *name)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->e[i].parent == dir && !strcmp(p->e[i].name, name))
			return true;
	return false;
}

/* The temporary files a killed stage left in directory entry dir (open
 * on fd; one that existed before this run), removed: a rerun's copy is
 * whole without them. A name the source itself has is the dataset's. */
static void sweep_dir(const struct mc_stage_plan *p, size_t dir, int fd,
		      struct mc_stage_progress *pr)
{
	struct dirent *de;
	struct stat st;
	int dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;

	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return;
	}
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, ".memcore-stage.", 15) ||
		    !stale_tmp(de->d_name) || planned_in(p, dir, de->d_name) ||
		    fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    S_ISDIR(st.st_mode) ||
		    unlinkat(dfd, de->d_name, 0) != 0)
			continue;
		pr->stale_files++;
		if (S_ISREG(st.st_mode))
			pr->stale_bytes += (uint64_t)st.st_size;
	}
	closedir(d);
}

/*
 * Directory entry i at DEST: made (0700) under its parent reached through
 * the cursor, or the one the plan found, checked to be the caller's (made)
 * or the same (found); the caller's alone to write while the copy runs
 * (0700), its identity recorded, left held by the cursor. 0 or -1.
 */
static int make_dir(struct cursor *c, size_t i, struct mc_stage_progress *pr,
		    char *err, size_t errlen)
{
	struct mc_stage_entry *e = &c->p->e[i];
	char buf[MSG];
	struct stat st;
	int pfd = cur_dir(c, e->parent, err, errlen), fd;

	if (pfd < 0)
		return -1;
	if (!e->skip && mkdirat(pfd, e->name, 0700) != 0 && errno != EEXIST)
		return entry_error(c->p, i, true, NULL, errno, err, errlen);
	if ((fd = openat(pfd, e->name, DIR_FLAGS)) < 0)
		return changed(c->p, i, true, errno, err, errlen);
	if (fstat(fd, &st) != 0 || (e->skip && (st.st_dev != e->ddev ||
	    st.st_ino != e->dino))) {
		close(fd);
		return changed(c->p, i, true, ESTALE, err, errlen);
	}
	if (!e->skip && own_dir(&st, entry_path(c->p, i, true, buf,
				 sizeof(buf)), FIX_BELOW, err, errlen) < 0) {
		close(fd);
		return -1;
	}
	if (fchmod(fd, 0700) != 0) {
		close(fd);
		return entry_error(c->p, i, true, NULL, errno, err, errlen);
	}
	e->ddev = st.st_dev;
	e->dino = st.st_ino;
	if (e->skip)
		sweep_dir(c->p, i, fd, pr);
	cur_take(c, i, fd);
	return 0;
}

/* Directories first, in walk order (parents first); their own modes
 * come last. */
static int make_dirs(struct mc_stage_plan *p, struct mc_stage_progress *pr,
		     char *err, size_t errlen)
{
	struct cursor c;
	int rc = 0;

	if (cur_init(&c, p, true) < 0)
		return path_error(err, errlen, p->dest, ENOMEM);
	for (size_t i = 0; i < p->n && rc == 0; i++)
		if (p->e[i].kind == MC_STAGE_DIR)
			rc = make_dir(&c, i, pr, err, errlen);
	cur_free(&c);
	return rc;
}

/* Children before parents: a parent's mtime after its last entry. Each
 * reached again and checked; one that is not is left as it is. */
static void finish_dirs(struct mc_stage_plan *p)
{
	char err[2 * MSG];
	struct cursor c;

	if (cur_init(&c, p, true) < 0)
		return;
	for (size_t i = p->n; i-- > 0;) {
		const struct mc_stage_entry *e = &p->e[i];
		int fd;

		if (e->kind != MC_STAGE_DIR ||
		    (fd = cur_dir(&c, i, err, sizeof(err))) < 0)
			continue;
		fchmod(fd, e->mode);
		futimens(fd, (struct timespec[2]){
			{ .tv_nsec = UTIME_OMIT }, e->mtime });
	}
	cur_free(&c);
}

struct run_state {
	struct mc_stage_plan *plan;
	struct mc_stage_progress *pr;
	_Atomic size_t next;
	pthread_mutex_t lock;	/* err */
	char *err;
	size_t errlen;
};

/* The first failure is the one said; the others stop taking files. */
static void fail(struct run_state *r, const char *err)
{
	pthread_mutex_lock(&r->lock);
	if (!r->pr->failed)
		snprintf(r->err, r->errlen, "%s", err);
	r->pr->failed = true;
	pthread_mutex_unlock(&r->lock);
}

static void *worker(void *arg)
{
	struct run_state *r = arg;
	struct worker_ctx *w = calloc(1, sizeof(*w));

	if (!w || cur_init(&w->src, r->plan, false) < 0 ||
	    cur_init(&w->dst, r->plan, true) < 0) {
		fail(r, "out of memory");
		goto out;
	}
	for (;;) {
		size_t i = atomic_fetch_add(&r->next, 1);
		const struct mc_stage_entry *e;
		int rc;

		if (i >= r->plan->n || r->pr->failed || *r->pr->stop)
			break;
		e = &r->plan->e[i];
		if (e->skip || e->kind == MC_STAGE_DIR)
			continue;
		rc = e->kind == MC_STAGE_FILE ? copy_file(w, i, r->pr)
					      : copy_link(w, i);
		if (rc < 0 && *r->pr->stop)
			break;	/* said once, as "interrupted" */
		if (rc < 0) {
			fail(r, w->err);
			break;
		}
		atomic_fetch_add(&r->pr->files, 1);
		if (r->pr->on_file)
			r->pr->on_file(r->pr->arg);
	}
out:
	if (w) {
		cur_free(&w->src);
		cur_free(&w->dst);
		free(w->buf);
	}
	free(w);
	return NULL;
}

int mc_stage_run(struct mc_stage_plan *plan, unsigned jobs,
		 struct mc_stage_progress *pr, char *err, size_t errlen)
{
	struct run_state r = { .plan = plan, .pr = pr, .err = err,
			       .errlen = errlen };
	pthread_t tid[256];
	unsigned started = 0;

	if (plan->dest_fd < 0)
		return path_error(err, errlen, plan->dest, EBADF);
	if (make_dirs(plan, pr, err, errlen) < 0)
		return -1;
	pthread_mutex_init(&r.lock, NULL);
	if (jobs > 256)
		jobs = 256;
	while (started < jobs && pthread_create(&tid[started], NULL, worker,
						&r) == 0)
		started++;
	if (!started)
		worker(&r);	/* no thread to be had: this one copies */
	for (unsigned i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	pthread_mutex_destroy(&r.lock);
	finish_dirs(plan);
	if (!pr->failed && *pr->stop) {
		snprintf(err, errlen, "interrupted");
		return -1;
	}
	return pr->failed ? -1 : 0;
}
