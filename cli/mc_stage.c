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
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mc_stage.h"
#include "mc_util.h"

/* The permission bits kept: no set-user/group-ID (the copy is the
 * caller's, not the source owner's). */
#define MODE_BITS 01777
enum { CHUNK = 8 << 20, RW_BUF = 1 << 20 };

/* "PATH: strerror(e)" into err, the path escaped; returns -1. */
static int path_error(char *err, size_t errlen, const char *path, int e)
{
	char q[2 * PATH_MAX];

	snprintf(err, errlen, "%s: %s", mc_escape(path, 0, q, sizeof(q)),
		 strerror(e));
	return -1;
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
		while (cut > 0 && dest[cut - 1] == '/')
			cut--;
		while (cut > 0 && dest[cut - 1] != '/')
			cut--;
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

void mc_stage_plan_init(struct mc_stage_plan *plan, const char *dest)
{
	struct stat st;

	memset(plan, 0, sizeof(*plan));
	if (stat(dest, &st) == 0) {
		plan->dest_known = true;
		plan->dest_dev = st.st_dev;
		plan->dest_ino = st.st_ino;
	}
	plan->dest_real = dest_resolved(dest);
}

void mc_stage_plan_free(struct mc_stage_plan *plan)
{
	for (size_t i = 0; i < plan->n; i++) {
		free(plan->e[i].src);
		free(plan->e[i].dst);
	}
	free(plan->e);
	free(plan->dest_real);
	memset(plan, 0, sizeof(*plan));
}

static struct mc_stage_entry *add(struct mc_stage_plan *plan,
				  const char *src, const char *dst,
				  enum mc_stage_kind kind,
				  const struct stat *st)
{
	struct mc_stage_entry *e;

	if (plan->n == plan->cap) {
		size_t cap = plan->cap ? 2 * plan->cap : 256;
		void *p = realloc(plan->e, cap * sizeof(*plan->e));

		if (!p)
			return NULL;
		plan->e = p;
		plan->cap = cap;
	}
	e = &plan->e[plan->n];
	*e = (struct mc_stage_entry){
		.src = strdup(src), .dst = strdup(dst), .kind = kind,
		.mode = st->st_mode & MODE_BITS, .size = (uint64_t)st->st_size,
		.mtime = st->st_mtim,
	};
	if (!e->src || !e->dst) {
		free(e->src);
		free(e->dst);
		return NULL;
	}
	plan->n++;
	return e;
}

/* Two symlinks with the same target (a link already staged). */
static bool same_link(const char *a, const char *b)
{
	char ta[PATH_MAX], tb[PATH_MAX];
	ssize_t na = readlink(a, ta, sizeof(ta)), nb = readlink(b, tb,
							       sizeof(tb));

	return na >= 0 && na == nb && !memcmp(ta, tb, (size_t)na);
}

/*
 * What is at e->dst already: the skip rule (mc_stage.h), or -1 with err
 * when something of another kind is in the way (a file where a directory
 * goes, a directory where a file goes): nothing is replaced by force.
 */
static int judge_dest(struct mc_stage_plan *plan, struct mc_stage_entry *e,
		      char *err, size_t errlen)
{
	char q[2 * PATH_MAX];
	struct stat d;

	if (lstat(e->dst, &d) != 0) {
		if (errno != ENOENT)
			return path_error(err, errlen, e->dst, errno);
	} else if ((e->kind == MC_STAGE_DIR) != !!S_ISDIR(d.st_mode)) {
		snprintf(err, errlen, "%s: is in the way (%s, where the "
			 "source has a %s); remove it or stage elsewhere",
			 mc_escape(e->dst, 0, q, sizeof(q)),
			 S_ISDIR(d.st_mode) ? "a directory" : "not a directory",
			 e->kind == MC_STAGE_DIR ? "directory" : "file");
		return -1;
	} else if (e->kind == MC_STAGE_DIR) {
		e->skip = true;
	} else if (e->kind == MC_STAGE_FILE) {
		e->skip = S_ISREG(d.st_mode) &&
			  (uint64_t)d.st_size == e->size &&
			  d.st_mtim.tv_sec == e->mtime.tv_sec &&
			  d.st_mtim.tv_nsec == e->mtime.tv_nsec;
	} else {
		e->skip = S_ISLNK(d.st_mode) && same_link(e->src, e->dst);
	}
	if (e->kind == MC_STAGE_DIR)
		plan->new_dirs += !e->skip;
	else if (e->skip) {
		plan->skip_files++;
		plan->skip_bytes += e->kind == MC_STAGE_FILE ? e->size : 0;
	} else {
		plan->copy_files++;
		plan->copy_bytes += e->kind == MC_STAGE_FILE ? e->size : 0;
	}
	return 0;
}

static const char *type_word(mode_t m)
{
	return S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket" :
	       S_ISCHR(m) ? "a character device" :
	       S_ISBLK(m) ? "a block device" : "of an unknown type";
}

static int walk(struct mc_stage_plan *plan, const char *src,
		const char *dst, bool quiet, char *err, size_t errlen);

/* "memcore: stage: skipped SRC: WHY". Out of line: its escape buffer is
 * not on the stack of each level of the walk. */
static __attribute__((noinline)) void say_skipped(const char *src,
						  const char *why,
						  const char *what)
{
	char q[2 * PATH_MAX];

	fprintf(stderr, "memcore: stage: skipped %s: %s%s\n",
		mc_escape(src, 0, q, sizeof(q)), why, what);
}

/* One entry of the walk: listed, judged, and walked when a directory. */
static int plan_one(struct mc_stage_plan *plan, const char *src,
		    const char *dst, const struct stat *st, bool quiet,
		    char *err, size_t errlen)
{
	struct mc_stage_entry *e;
	enum mc_stage_kind kind;

	if (S_ISDIR(st->st_mode) && plan->dest_known &&
	    st->st_dev == plan->dest_dev && st->st_ino == plan->dest_ino) {
		if (!quiet)
			say_skipped(src, "it is DEST itself", "");
		return 0;
	}
	if (S_ISDIR(st->st_mode))
		kind = MC_STAGE_DIR;
	else if (S_ISREG(st->st_mode))
		kind = MC_STAGE_FILE;
	else if (S_ISLNK(st->st_mode))
		kind = MC_STAGE_LINK;
	else {
		plan->others++;
		if (!quiet)
			say_skipped(src, type_word(st->st_mode), " (only "
				    "files, directories and symlinks are "
				    "staged)");
		return 0;
	}
	e = add(plan, src, dst, kind, st);
	if (!e)
		return path_error(err, errlen, src, ENOMEM);
	if (judge_dest(plan, e, err, errlen) < 0)
		return -1;
	return kind == MC_STAGE_DIR ? walk(plan, src, dst, quiet, err, errlen)
				    : 0;
}

/* The entries of directory src, never through a symlink (O_NOFOLLOW,
 * lstat), each with its path under dst. Recursive, one level a
 * directory: the path buffers are on the heap, not 8 KiB of stack a
 * level (a tree 1000 deep is within PATH_MAX). */
static int walk(struct mc_stage_plan *plan, const char *src,
		const char *dst, bool quiet, char *err, size_t errlen)
{
	char *s = malloc(2 * PATH_MAX), *d = s + PATH_MAX;
	const size_t len = PATH_MAX;
	struct dirent *de;
	struct stat st;
	int fd, rc = 0;
	DIR *dir;

	if (!s)
		return path_error(err, errlen, src, ENOMEM);
	fd = open(src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || !(dir = fdopendir(fd))) {
		rc = errno;
		if (fd >= 0)
			close(fd);
		free(s);
		return path_error(err, errlen, src, rc);
	}
	for (errno = 0; rc == 0 && (de = readdir(dir)); errno = 0) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if ((size_t)snprintf(s, len, "%s/%s", src, de->d_name)
		    >= len || (size_t)snprintf(d, len, "%s/%s",
		    dst, de->d_name) >= len)
			rc = path_error(err, errlen, s, ENAMETOOLONG);
		else if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW))
			rc = path_error(err, errlen, s, errno);
		/* A file its user cannot read is an input error found now,
		 * as an unreadable directory is, not a copy failed halfway. */
		else if (S_ISREG(st.st_mode) && faccessat(fd, de->d_name, R_OK,
							  AT_EACCESS) != 0)
			rc = path_error(err, errlen, s, errno);
		else
			rc = plan_one(plan, s, d, &st, quiet, err, errlen);
	}
	if (rc == 0 && errno)
		rc = path_error(err, errlen, src, errno);
	closedir(dir);
	free(s);
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

int mc_stage_plan_src(struct mc_stage_plan *plan, const char *src,
		      const char *dest, bool quiet, char *err, size_t errlen)
{
	char real[PATH_MAX], name[PATH_MAX], dst[PATH_MAX], q[2 * PATH_MAX],
	     q2[2 * PATH_MAX];
	const char *b;
	struct stat st;

	/* SRC itself is the user's word: followed, and read from its
	 * resolved path so that nothing below it is. */
	if (stat(src, &st) != 0 || !realpath(src, real)) {
		snprintf(err, errlen, "SRC %s: %s", mc_escape(src, 0, q,
			 sizeof(q)), strerror(errno));
		return -1;
	}
	b = src_name(src, real, name, sizeof(name));
	if (!*b) {
		snprintf(err, errlen, "%s: has no name to stage it under "
			 "(the root directory); name a directory below it",
			 mc_escape(src, 0, q, sizeof(q)));
		return -1;
	}
	/* A copy into itself: DEST/NAME/... would sit inside SRC, the
	 * stage writing into the dataset it reads. */
	if (S_ISDIR(st.st_mode) && plan->dest_real) {
		size_t rl = strlen(real);

		if (!strncmp(plan->dest_real, real, rl) &&
		    (plan->dest_real[rl] == '/' || !plan->dest_real[rl])) {
			snprintf(err, errlen, "DEST %s is %s SRC %s; stage to "
				 "a directory outside it", mc_escape(dest, 0, q,
				 sizeof(q)), plan->dest_real[rl] ? "inside" :
				 "the same directory as", mc_escape(src, 0, q2,
				 sizeof(q2)));
			return -1;
		}
	}
	if ((size_t)snprintf(dst, sizeof(dst), "%s/%s", dest, b) >=
	    sizeof(dst))
		return path_error(err, errlen, dst, ENAMETOOLONG);
	for (size_t i = 0; i < plan->n; i++)
		if (!strcmp(plan->e[i].dst, dst)) {
			snprintf(err, errlen, "%s: another SRC goes to %s "
				 "too; stage them apart", mc_escape(src, 0, q,
				 sizeof(q)), mc_escape(plan->e[i].dst, 0, q2,
				 sizeof(q2)));
			return -1;
		}
	return plan_one(plan, real, dst, &st, quiet, err, errlen);
}

/* ---- the copy ---- */

/* A temporary name in dst's directory, unique in this process. */
static void tmp_name(const char *dst, char *buf, size_t len)
{
	static _Atomic unsigned long seq;
	const char *slash = strrchr(dst, '/');
	int dl = slash ? (int)(slash - dst) : 1;

	snprintf(buf, len, "%.*s/.memcore-stage.%ld.%lu", dl,
		 slash ? dst : ".", (long)getpid(), atomic_fetch_add(&seq, 1));
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

/* A regular file, through a temporary name (mc_stage.h). 0 or -1. */
static int copy_file(const struct mc_stage_entry *e,
		     struct mc_stage_progress *pr, char **buf, char *err,
		     size_t errlen)
{
	char tmp[PATH_MAX];
	struct stat st, now;
	int in, out = -1, rc = 0;

	/* O_NONBLOCK: a FIFO swapped in since the walk does not hang us. */
	in = open(e->src, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (in < 0 || fstat(in, &st) != 0 || !S_ISREG(st.st_mode)) {
		rc = in < 0 || !S_ISREG(st.st_mode) ? (in < 0 ? errno : EINVAL)
						     : errno;
		if (in >= 0)
			close(in);
		return path_error(err, errlen, e->src, rc);
	}
	do {
		tmp_name(e->dst, tmp, sizeof(tmp));
		out = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	} while (out < 0 && errno == EEXIST);
	if (out < 0) {
		rc = errno;
		close(in);
		return path_error(err, errlen, e->dst, rc);
	}
	rc = copy_data(in, out, pr, buf);
	/* Written to while copied: the copy is no state of the source (and
	 * would carry the mtime read before): not renamed into place. */
	if (!rc && (fstat(in, &now) != 0 || now.st_size != st.st_size ||
		    now.st_mtim.tv_sec != st.st_mtim.tv_sec ||
		    now.st_mtim.tv_nsec != st.st_mtim.tv_nsec)) {
		char q[2 * PATH_MAX];

		snprintf(err, errlen, "%s: changed while it was copied "
			 "(size or mtime); stage it again once it is still",
			 mc_escape(e->src, 0, q, sizeof(q)));
		close(out);
		close(in);
		unlink(tmp);
		return -1;
	}
	if (!rc && fchmod(out, e->mode) != 0)
		rc = errno;
	/* The mtime of what was read: the next run's skip rule. */
	if (!rc && futimens(out, (struct timespec[2]){ st.st_atim,
						       st.st_mtim }) != 0)
		rc = errno;
	if (close(out) != 0 && !rc)
		rc = errno;
	close(in);
	if (!rc && rename(tmp, e->dst) != 0)
		rc = errno;
	if (rc) {
		unlink(tmp);
		return path_error(err, errlen, e->dst, rc);
	}
	return 0;
}

/* A symlink, made again with the same target (never followed). */
static int copy_link(const struct mc_stage_entry *e, char *err,
		     size_t errlen)
{
	char target[PATH_MAX], tmp[PATH_MAX];
	ssize_t n = readlink(e->src, target, sizeof(target) - 1);
	int rc;

	if (n < 0)
		return path_error(err, errlen, e->src, errno);
	target[n] = '\0';
	do {
		tmp_name(e->dst, tmp, sizeof(tmp));
		rc = symlink(target, tmp) ? errno : 0;
	} while (rc == EEXIST);
	if (rc)
		return path_error(err, errlen, e->dst, rc);
	utimensat(AT_FDCWD, tmp, (struct timespec[2]){
		{ .tv_nsec = UTIME_OMIT }, e->mtime }, AT_SYMLINK_NOFOLLOW);
	if (rename(tmp, e->dst) != 0) {
		rc = errno;
		unlink(tmp);
		return path_error(err, errlen, e->dst, rc);
	}
	return 0;
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

/* The temporary files a killed stage left in dir (one that existed
 * before this run), removed: a rerun's copy is whole without them. */
static void sweep_dir(const char *dir, struct mc_stage_progress *pr)
{
	struct dirent *de;
	struct stat st;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, ".memcore-stage.", 15) ||
		    !stale_tmp(de->d_name) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    S_ISDIR(st.st_mode) ||
		    unlinkat(dirfd(d), de->d_name, 0) != 0)
			continue;
		pr->stale_files++;
		if (S_ISREG(st.st_mode))
			pr->stale_bytes += (uint64_t)st.st_size;
	}
	closedir(d);
}

/* Directories first, in walk order (parents first), writable by the
 * caller while the copy runs; their own modes come last. */
static int make_dirs(const struct mc_stage_plan *plan,
		     struct mc_stage_progress *pr, char *err, size_t errlen)
{
	for (size_t i = 0; i < plan->n; i++) {
		const struct mc_stage_entry *e = &plan->e[i];

		if (e->kind != MC_STAGE_DIR)
			continue;
		if (!e->skip && mkdir(e->dst, 0700) != 0 && errno != EEXIST)
			return path_error(err, errlen, e->dst, errno);
		if (chmod(e->dst, e->mode | 0700) != 0)
			return path_error(err, errlen, e->dst, errno);
		if (e->skip)
			sweep_dir(e->dst, pr);
	}
	return 0;
}

/* Children before parents: a parent's mtime after its last entry. */
static void finish_dirs(const struct mc_stage_plan *plan)
{
	for (size_t i = plan->n; i-- > 0;) {
		const struct mc_stage_entry *e = &plan->e[i];

		if (e->kind != MC_STAGE_DIR)
			continue;
		chmod(e->dst, e->mode);
		utimensat(AT_FDCWD, e->dst, (struct timespec[2]){
			{ .tv_nsec = UTIME_OMIT }, e->mtime },
			AT_SYMLINK_NOFOLLOW);
	}
}

struct run_state {
	const struct mc_stage_plan *plan;
	struct mc_stage_progress *pr;
	_Atomic size_t next;
	pthread_mutex_t lock;	/* err */
	char *err;
	size_t errlen;
};

static void *worker(void *arg)
{
	struct run_state *r = arg;
	char err[2 * PATH_MAX + 128], *buf = NULL;

	for (;;) {
		size_t i = atomic_fetch_add(&r->next, 1);
		const struct mc_stage_entry *e;
		int rc;

		if (i >= r->plan->n || r->pr->failed || *r->pr->stop)
			break;
		e = &r->plan->e[i];
		if (e->skip || e->kind == MC_STAGE_DIR)
			continue;
		rc = e->kind == MC_STAGE_FILE
		     ? copy_file(e, r->pr, &buf, err, sizeof(err))
		     : copy_link(e, err, sizeof(err));
		if (rc < 0 && *r->pr->stop)
			break;	/* said once, as "interrupted" */
		if (rc < 0) {
			pthread_mutex_lock(&r->lock);
			if (!r->pr->failed)
				snprintf(r->err, r->errlen, "%s", err);
			r->pr->failed = true;
			pthread_mutex_unlock(&r->lock);
			break;
		}
		atomic_fetch_add(&r->pr->files, 1);
		if (r->pr->on_file)
			r->pr->on_file(r->pr->arg);
	}
	free(buf);
	return NULL;
}

int mc_stage_run(const struct mc_stage_plan *plan, unsigned jobs,
		 struct mc_stage_progress *pr, char *err, size_t errlen)
{
	struct run_state r = { .plan = plan, .pr = pr, .err = err,
			       .errlen = errlen };
	pthread_t tid[256];
	unsigned started = 0;

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
