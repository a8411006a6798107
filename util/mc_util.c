/*
 * mc_util.c - see mc_util.h.
 */
#include "mc_util.h"
#include "mc_parse.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void mc_lines_vadd(char *lines, size_t *n, size_t max, size_t len,
		   const char *fmt, va_list ap)
{
	if (*n >= max)
		return;
	/* vsnprintf truncates: a line never exceeds len - 1 characters. */
	vsnprintf(lines + *n * len, len, fmt, ap);
	(*n)++;
}

void mc_lines_add(char *lines, size_t *n, size_t max, size_t len,
		  const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	mc_lines_vadd(lines, n, max, len, fmt, ap);
	va_end(ap);
}

int mc_appendf(char *buf, size_t len, size_t *used, const char *fmt, ...)
{
	va_list ap;
	int w;

	if (!len || *used >= len)
		return -1;
	va_start(ap, fmt);
	w = vsnprintf(buf + *used, len - *used, fmt, ap);
	va_end(ap);
	if (w < 0) {
		buf[*used] = '\0';
		return -1;
	}
	if ((size_t)w >= len - *used) {
		*used = len - 1;
		return -1;
	}
	*used += (size_t)w;
	return 0;
}

bool mc_has_ctrl(const char *s)
{
	for (; s && *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

/* The escape of byte c into e (5 bytes); returns its length. */
static size_t escape1(unsigned char c, char *e)
{
	if (c == '\n' || c == '\r' || c == '\t' || c == '\\') {
		e[0] = '\\';
		e[1] = c == '\n' ? 'n' : c == '\r' ? 'r' : c == '\t' ? 't'
			: '\\';
		return 2;
	}
	if (c < 0x20 || c == 0x7f)
		return (size_t)snprintf(e, 5, "\\x%02x", c);
	e[0] = (char)c;
	return 1;
}

const char *mc_escape(const char *s, size_t max, char *buf, size_t len)
{
	size_t used = 0, total = 0, i, n;
	bool cut;
	char e[5];

	if (!len)
		return buf;
	s = s ? s : "";
	for (i = 0; s[i] && (!max || i < max); i++)
		total += escape1((unsigned char)s[i], e);
	cut = s[i] != '\0' || total >= len;
	/* Whole escapes only; a cut leaves room for "..." after them. */
	for (i = 0; s[i] && (!max || i < max); i++) {
		n = escape1((unsigned char)s[i], e);
		if (used + n + (cut ? 3 : 0) >= len)
			break;
		memcpy(buf + used, e, n);
		used += n;
	}
	if (cut && used + 3 < len) {
		memcpy(buf + used, "...", 3);
		used += 3;
	}
	buf[used] = '\0';
	return buf;
}

const char *mc_oneline(const char *msg, char *buf, size_t len)
{
	size_t used = 0, n;
	char e[5];

	if (!len)
		return buf;
	for (msg = msg ? msg : ""; *msg; msg++) {
		n = *msg == '\\' ? 1 : escape1((unsigned char)*msg, e);
		if (n == 1)
			e[0] = *msg;
		if (used + n >= len)
			break;
		memcpy(buf + used, e, n);
		used += n;
	}
	buf[used] = '\0';
	return buf;
}

const char *mc_shell_word(const char *s, char *buf, size_t len)
{
	static const char safe[] = "abcdefghijklmnopqrstuvwxyz"
				   "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
				   "_@%+=:,./-";
	size_t used = 0;
	char e[5];

	if (!len)
		return buf;
	s = s ? s : "";
	if (*s && strspn(s, safe) == strlen(s)) {
		if (strlen(s) >= len)
			s = "";
		memcpy(buf, s, strlen(s) + 1);
		return buf;
	}
	buf[used++] = '\'';
	for (; *s; s++) {
		const char *w = e;
		size_t n;

		if (*s == '\'') {
			w = "'\\''";
			n = 4;
		} else if ((unsigned char)*s < 0x20 || *s == 0x7f) {
			n = escape1((unsigned char)*s, e);
		} else {
			/* a backslash is itself inside single quotes */
			e[0] = *s;
			n = 1;
		}
		if (used + n + 2 > len) {
			buf[0] = '\0';
			return buf;
		}
		memcpy(buf + used, w, n);
		used += n;
	}
	if (used + 2 > len) {
		buf[0] = '\0';
		return buf;
	}
	buf[used++] = '\'';
	buf[used] = '\0';
	return buf;
}

/*
 * The directories of a resolved path (real, no link in it), "/" first:
 * each root's, and writable by no one else, except a sticky one above
 * the last (others cannot rename or remove what root put there).
 * 0, or -1 with why.
 */
static int root_chain(const char *real, bool sticky_last, char *why,
		      size_t whylen)
{
	char q[PATH_MAX + 16];
	size_t n = strlen(real), end = 1;

	for (;;) {
		char pre[PATH_MAX];
		const char *next;
		struct stat st;
		bool last = end >= n;

		memcpy(pre, real, end);
		pre[end] = '\0';
		mc_escape(pre, 0, q, sizeof(q));
		if (lstat(pre, &st) < 0)
			return mc_err(why, whylen, "directory %s: %s", q,
				      strerror(errno));
		if (!S_ISDIR(st.st_mode))
			return mc_err(why, whylen, "%s is not a directory", q);
		/* Above it a daemon's own account may own a directory
		 * (mc_util.h); the directory itself is root's. */
		if (st.st_uid != 0 && (last || st.st_uid > MC_SYSTEM_UID_MAX))
			return mc_err(why, whylen, "directory %s is owned by "
				      "uid %u, not root%s: its owner could "
				      "plant or replace the file", q,
				      (unsigned)st.st_uid, last ? "" :
				      " nor a system account");
		if ((st.st_mode & (S_IWGRP | S_IWOTH)) &&
		    ((last && !sticky_last) || !(st.st_mode & S_ISVTX)))
			return mc_err(why, whylen, "directory %s is writable by "
				      "others than root (mode %04o): anyone "
				      "could plant or replace the file", q,
				      (unsigned)(st.st_mode & 07777));
		if (last)
			return 0;
		next = strchr(real + end + (end > 1), '/');
		end = next ? (size_t)(next - real) : n;
	}
}

/*
 * Every symbolic link in dir as written is root's: a user's link (in a
 * sticky /tmp, say) passes the resolved check and can be pointed
 * elsewhere at any time. 0, or -1 with why.
 */
static int root_links(const char *dir, char *why, size_t whylen)
{
	char q[PATH_MAX + 16];
	size_t n = strlen(dir);

	for (size_t end = 1; end <= n; end++) {
		char pre[PATH_MAX];
		struct stat st;

		if (end < n && dir[end] != '/')
			continue;
		memcpy(pre, dir, end);
		pre[end] = '\0';
		if (lstat(pre, &st) < 0)
			return 0;	/* the rest is not there */
		if (S_ISLNK(st.st_mode) && st.st_uid != 0)
			return mc_err(why, whylen, "%s is a symbolic link of "
				      "uid %u, not root's: its owner could "
				      "point it elsewhere",
				      mc_escape(pre, 0, q, sizeof(q)),
				      (unsigned)st.st_uid);
	}
	return 0;
}

int mc_dir_root_only(const char *path, char *why, size_t whylen)
{
	char dir[PATH_MAX], real[PATH_MAX], q[PATH_MAX + 16];
	const char *slash = strrchr(path, '/');
	size_t n;

	if (path[0] != '/' || !slash ||
	    (size_t)(slash - path) >= sizeof(dir))
		return mc_err(why, whylen, "expected an absolute path");
	n = slash == path ? 1 : (size_t)(slash - path);
	memcpy(dir, path, n);
	dir[n] = '\0';
	if (root_links(dir, why, whylen) < 0)
		return -1;
	if (realpath(dir, real))
		return root_chain(real, false, why, whylen);
	/* Not ours to see (a user's memcore on a login host): slurmstepd,
	 * root, checks it where it writes. */
	if (errno == EACCES)
		return 1;
	if (errno != ENOENT)
		return mc_err(why, whylen, "directory %s: %s",
			      mc_escape(dir, 0, q, sizeof(q)),
			      strerror(errno));
	/* Not there yet: whoever may create it decides what is in it, so
	 * the nearest directory that is there must be root's alone (a
	 * sticky /tmp is not: anyone may make a name in it). */
	while (n > 1) {
		while (n > 1 && dir[n - 1] != '/')
			n--;
		if (n > 1)
			n--;		/* the '/' before the last name */
		dir[n] = '\0';
		if (realpath(dir, real)) {
			char up[PATH_MAX + 160];

			if (root_chain(real, false, up, sizeof(up)) < 0)
				return mc_err(why, whylen, "%s is not there "
					      "yet, and anyone could make it: "
					      "%s", mc_escape(path, 0, q,
					      sizeof(q)), up);
			return 1;
		}
		if (errno == EACCES)
			return 1;
		if (errno != ENOENT)
			break;
	}
	return mc_err(why, whylen, "directory %s: %s",
		      mc_escape(dir, 0, q, sizeof(q)), strerror(errno));
}

bool mc_st_shared_dir_ok(const struct stat *st, uid_t owner)
{
	return S_ISDIR(st->st_mode) && st->st_uid == owner &&
	       (!(st->st_mode & (S_IWGRP | S_IWOTH)) ||
		(st->st_mode & S_ISVTX));
}

int mc_dir_shared_root(const char *path, char *why, size_t whylen)
{
	char p[PATH_MAX], real[PATH_MAX], q[PATH_MAX + 16];
	size_t n = strlen(path);

	while (n > 1 && path[n - 1] == '/')
		n--;
	if (path[0] != '/' || n >= sizeof(p))
		return mc_err(why, whylen, "expected an absolute path");
	memcpy(p, path, n);
	p[n] = '\0';
	if (root_links(p, why, whylen) < 0)
		return -1;
	/* Not there yet: PrometheusTextfile's rule judges who could make
	 * it (the nearest directory there, root's alone). */
	if (!realpath(p, real))
		return errno == ENOENT ? (mc_dir_root_only(p, why, whylen) < 0
					  ? -1 : 0) : errno == EACCES ? 0 :
			mc_err(why, whylen, "%s: %s",
			       mc_escape(p, 0, q, sizeof(q)), strerror(errno));
	/* Root's all the way down, the sticky bit allowed on it too. */
	return root_chain(real, true, why, whylen);
}

bool mc_st_root_only(const struct stat *st, unsigned deny)
{
	return S_ISREG(st->st_mode) && st->st_uid == 0 &&
	       !(st->st_mode & deny) && st->st_nlink == 1;
}

int mc_open_regular(const char *what, const char *path, int flags,
		    off_t max_bytes, struct stat *st, char *err,
		    size_t errlen)
{
	const char *sp = what ? " " : "";
	char q[PATH_MAX + 64];	/* the path, quoted: it may be a user's */
	/* A long path is cut, not the reason after it: 128 bytes are
	 * left for WHAT and the longest reason. */
	size_t qlen = errlen > 192 ? errlen - 128 : errlen / 2 + 1;
	struct stat sb;
	int fd, e;

	if (!what)
		what = "";
	if (qlen > sizeof(q))
		qlen = sizeof(q);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK |
		  ((flags & MC_OPEN_NOFOLLOW) ? O_NOFOLLOW : 0));
	if (fd < 0 || fstat(fd, &sb)) {
		e = errno;
		mc_err(err, errlen, "%s%s%s: %s", what, sp,
		       mc_escape(path, 0, q, qlen), strerror(e));
		if (fd >= 0)
			close(fd);
		errno = e;
		return -1;
	}
	if (!S_ISREG(sb.st_mode)) {
		bool dir = S_ISDIR(sb.st_mode);

		mc_err(err, errlen, "%s%s%s: %s", what, sp,
		       mc_escape(path, 0, q, qlen), dir && (flags & MC_OPEN_SAY_DIR) ? "is a directory"
		       : dir && (flags & MC_OPEN_SAY_EISDIR) ? strerror(EISDIR)
		       : "not a regular file");
		close(fd);
		errno = dir ? EISDIR : EINVAL;
		return -1;
	}
	if (max_bytes && sb.st_size > max_bytes) {
		mc_err(err, errlen, "%s%s%s: larger than %lld bytes", what, sp,
		       mc_escape(path, 0, q, qlen), (long long)max_bytes);
		close(fd);
		errno = EFBIG;
		return -1;
	}
	if (st)
		*st = sb;
	return fd;
}

ssize_t mc_read_fd(int fd, char *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;

	while (got + 1 < len) {
		n = read(fd, buf + got, len - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	return (ssize_t)got;
}

ssize_t mc_read_at(int dfd, const char *name, char *buf, size_t len)
{
	/* O_NONBLOCK: no effect on a regular, /proc or cgroup file, but a
	 * FIFO in its place (a copied cgroup tree given to memcore usage)
	 * reads as empty instead of waiting for a writer forever. */
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC |
			O_NONBLOCK);
	ssize_t n;
	int e;

	if (fd < 0)
		return -1;
	n = mc_read_fd(fd, buf, len);
	e = errno;
	close(fd);
	errno = e;
	return n;
}

int mc_io_all(int fd, void *buf, size_t len, bool out)
{
	char *p = buf;

	while (len) {
		ssize_t n;

		errno = 0;
		n = out ? write(fd, p, len) : read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0 && out)
				errno = EIO;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

void mc_assert_failed(const char *expr, const char *file, int line,
		      const char *func)
{
	fprintf(stderr, "memcore: invariant broken: %s at %s:%d (%s)\n", expr,
		file, line, func);
	abort();
}

/* The next component of dir from the directory fd (its name in name[]),
 * following a link only when root owns it. Returns the new fd or -1. */
static int open_component(int fd, const char *name)
{
	struct stat st;
	int sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			 O_CLOEXEC);

	/* A link under O_NOFOLLOW | O_DIRECTORY fails ENOTDIR (or ELOOP):
	 * root's (/var/run) is followed, anyone else's refused. */
	if (sub >= 0 || (errno != ELOOP && errno != ENOTDIR))
		return sub;
	if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return -1;
	if (!S_ISLNK(st.st_mode)) {
		errno = ENOTDIR;
		return -1;
	}
	if (st.st_uid != 0) {
		errno = ELOOP;
		return -1;
	}
	return openat(fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

int mc_open_root_dir(const char *dir)
{
	char name[NAME_MAX + 1];
	struct stat st;
	int fd, sub;

	if (dir[0] != '/') {
		errno = EINVAL;
		return -1;
	}
	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (const char *p = dir; fd >= 0 && *p;) {
		size_t n;

		p += strspn(p, "/");
		n = strcspn(p, "/");
		if (!n)
			break;
		if (n > NAME_MAX) {
			close(fd);
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(name, p, n);
		name[n] = '\0';
		p += n;
		sub = open_component(fd, name);
		close(fd);
		fd = sub;
	}
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || st.st_uid != 0 ||
	    (st.st_mode & (S_IWGRP | S_IWOTH))) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	return fd;
}

DIR *mc_opendir_fd(int dfd)
{
	/* A new open file description, not dup(): its own offset, so the
	 * listing starts at the first entry however often dfd is listed. */
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d;
	int e;

	if (fd < 0)
		return NULL;
	d = fdopendir(fd);
	if (!d) {
		e = errno;
		close(fd);
		errno = e;
	}
	return d;
}
