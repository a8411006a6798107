/*
 * mc_cgroup.c - find memory cgroups, write inside one safely (mc_cgroup.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mc_cgroup.h"
#include "mc_memstat.h"
#include "mc_util.h"

/* /proc/<pid>/cgroup lists a dozen lines; mountinfo of a busy host a few
 * hundred. Bounded buffers keep slurmstepd's cost flat. */
#define PROC_CGROUP_BUF 8192
#define MOUNTINFO_BUF 262144

bool mc_cgroup_list_has(const char *s, size_t n, const char *word)
{
	size_t wl = strlen(word);
	const char *end = s + n;

	while (s < end) {
		const char *c = memchr(s, ',', (size_t)(end - s));
		size_t l = c ? (size_t)(c - s) : (size_t)(end - s);

		if (l == wl && !memcmp(s, word, wl))
			return true;
		s += l + 1;
	}
	return false;
}

int mc_cgroup_parse_proc(const char *text, const struct mc_cgroup_ops **ops,
			 char *rel,
			 size_t rellen, char *err, size_t errlen)
{
	const char *line = text, *v2 = NULL;
	size_t v2len = 0;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);
		const char *c1 = memchr(line, ':', n), *c2;

		if (c1 && (c2 = memchr(c1 + 1, ':', n - (size_t)(c1 + 1 - line)))) {
			const char *path = c2 + 1;
			size_t pl = n - (size_t)(path - line);

			if (mc_cgroup_list_has(c1 + 1, (size_t)(c2 - c1 - 1), "memory")) {
				if (pl == 0 || pl >= rellen || path[0] != '/')
					goto bad;
				memcpy(rel, path, pl);
				rel[pl] = '\0';
				*ops = &mc_cgroup_v1;
				return 0;
			}
			if (c1 - line == 1 && line[0] == '0' && c2 == c1 + 1) {
				v2 = path;
				v2len = pl;
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	if (v2) {
		if (v2len == 0 || v2len >= rellen || v2[0] != '/')
			goto bad;
		memcpy(rel, v2, v2len);
		rel[v2len] = '\0';
		*ops = &mc_cgroup_v2;
		return 0;
	}
	snprintf(err, errlen, "no memory cgroup: neither a v1 'memory' line "
		 "nor a v2 '0::' line");
	return -1;
bad:
	snprintf(err, errlen, "malformed cgroup path or path too long");
	return -1;
}

/* Copy a mountinfo field, decoding \ooo escapes. */
static int unescape(const char *s, size_t n, char *out, size_t outlen)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (c == '\\' && i + 3 < n &&
		    s[i + 1] >= '0' && s[i + 1] <= '3' &&
		    s[i + 2] >= '0' && s[i + 2] <= '7' &&
		    s[i + 3] >= '0' && s[i + 3] <= '7') {
			c = (char)((s[i + 1] - '0') * 64 +
				   (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
			i += 3;
		}
		if (o + 1 >= outlen)
			return -1;
		out[o++] = c;
	}
	out[o] = '\0';
	return 0;
}

int mc_cgroup_parse_mountinfo(const char *text,
			      const struct mc_cgroup_ops *ops, char *mount,
			      size_t mountlen, char *root, size_t rootlen,
			      char *err, size_t errlen)
{
	const char *line = text;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);
		const char *f[12];
		size_t fl[12];
		unsigned nf = 0, dash = 0;
		const char *p = line, *end = line + n;

		line = nl ? nl + 1 : NULL;
		/* Fields: id parent maj:min root mountpoint opts [optional
		 * fields...] - fstype source superopts */
		while (p < end && nf < 12) {
			const char *sp = memchr(p, ' ', (size_t)(end - p));
			size_t l = sp ? (size_t)(sp - p) : (size_t)(end - p);

			f[nf] = p;
			fl[nf] = l;
			if (l == 1 && *p == '-' && !dash && nf >= 6)
				dash = nf;
			nf++;
			p += l + 1;
		}
		if (!dash || nf < dash + 4)
			continue;
		if (!ops->mount_is(f[dash + 1], fl[dash + 1], f[dash + 3],
				   fl[dash + 3]))
			continue;
		if (unescape(f[4], fl[4], mount, mountlen) < 0 ||
		    unescape(f[3], fl[3], root, rootlen) < 0) {
			snprintf(err, errlen, "mount point too long");
			return -1;
		}
		return 0;
	}
	snprintf(err, errlen, "no %s mount in mountinfo", ops->mount_name);
	return -1;
}

int mc_cgroup_mount_of(const struct mc_cgroup_ops *ops, char *mount,
		       size_t len, char *err, size_t errlen)
{
	char root[PATH_MAX];
	char *buf = malloc(MOUNTINFO_BUF);
	int rc = -1;

	if (!buf) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (mc_read_at(AT_FDCWD, "/proc/self/mountinfo", buf, MOUNTINFO_BUF)
	    < 0)
		snprintf(err, errlen, "/proc/self/mountinfo: %s",
			 strerror(errno));
	else
		rc = mc_cgroup_parse_mountinfo(buf, ops, mount, len, root,
					       sizeof(root), err, errlen);
	free(buf);
	return rc;
}

int mc_cgroup_find(const char *proc, pid_t pid, struct mc_cgroup *cg,
		   char *err, size_t errlen)
{
	char path[PATH_MAX], root[PATH_MAX], rel[PATH_MAX], why[256];
	char *buf;
	size_t rl;
	int rc = -1;

	memset(cg, 0, sizeof(*cg));
	if (!proc)
		proc = "/proc";
	buf = malloc(MOUNTINFO_BUF);
	if (!buf) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (pid > 0)
		snprintf(path, sizeof(path), "%s/%d/cgroup", proc, (int)pid);
	else
		snprintf(path, sizeof(path), "%s/self/cgroup", proc);
	if (mc_read_at(AT_FDCWD, path, buf, PROC_CGROUP_BUF) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (mc_cgroup_parse_proc(buf, &cg->ops, rel, sizeof(rel), why,
				 sizeof(why)) < 0) {
		snprintf(err, errlen, "%s: %s", path, why);
		goto out;
	}
	snprintf(path, sizeof(path), "%s/self/mountinfo", proc);
	if (mc_read_at(AT_FDCWD, path, buf, MOUNTINFO_BUF) < 0 ||
	    mc_cgroup_parse_mountinfo(buf, cg->ops, cg->mount,
				      sizeof(cg->mount), root, sizeof(root),
				      why, sizeof(why)) < 0) {
		if (!cg->ops->mount_fallback ||
		    cg->ops->mount_fallback(cg->mount, sizeof(cg->mount)) < 0) {
			snprintf(err, errlen, "%s: %s", path, why);
			goto out;
		}
		snprintf(root, sizeof(root), "/");
	}
	/* In a container the mount shows a subtree ("root" /docker/x) while
	 * /proc/<pid>/cgroup may print the full path. */
	rl = strlen(root);
	if (rl > 1 && !strncmp(rel, root, rl) &&
	    (rel[rl] == '/' || rel[rl] == '\0')) {
		memmove(rel, rel + rl, strlen(rel + rl) + 1);
		if (!rel[0])
			snprintf(rel, sizeof(rel), "/");
	}
	if (strlen(cg->mount) + strlen(rel) + 1 >= sizeof(cg->dir)) {
		snprintf(err, errlen, "cgroup path too long");
		goto out;
	}
	if (!strcmp(rel, "/"))
		snprintf(cg->dir, sizeof(cg->dir), "%s", cg->mount);
	else
		snprintf(cg->dir, sizeof(cg->dir), "%s%s", cg->mount, rel);
	rc = 0;
out:
	free(buf);
	return rc;
}

int mc_cgroup_at(const char *dir, struct mc_cgroup *cg, char *err,
		 size_t errlen)
{
	char why[256];
	size_t ml;

	memset(cg, 0, sizeof(*cg));
	if (strlen(dir) >= sizeof(cg->dir)) {
		snprintf(err, errlen, "%s: path too long", dir);
		return -1;
	}
	cg->ops = mc_cgroup_ops_at(dir, err, errlen);
	if (!cg->ops)
		return -1;
	snprintf(cg->dir, sizeof(cg->dir), "%s", dir);
	/* The walk up for limits stops at the hierarchy's mount point when
	 * dir is under it; elsewhere (a copied tree) at "/". */
	if (mc_cgroup_mount_of(cg->ops, cg->mount, sizeof(cg->mount), why,
			       sizeof(why)) < 0 ||
	    strncmp(dir, cg->mount, (ml = strlen(cg->mount))) ||
	    (dir[ml] != '/' && dir[ml] != '\0' && strcmp(cg->mount, "/")))
		snprintf(cg->mount, sizeof(cg->mount), "/");
	return 0;
}

const char *mc_cgroup_rel(const struct mc_cgroup *cg)
{
	size_t ml = strlen(cg->mount);

	if (ml <= 1 || strncmp(cg->dir, cg->mount, ml))
		return cg->dir;
	return cg->dir[ml] ? cg->dir + ml : "/";
}

int mc_cgroup_child(const struct mc_cgroup *parent, const char *name,
		    struct mc_cgroup *child)
{
	if (!name[0] || strchr(name, '/') || child == parent)
		return -1;
	child->ops = parent->ops;
	if ((size_t)snprintf(child->dir, sizeof(child->dir), "%s/%s",
			     parent->dir, name) >= sizeof(child->dir))
		return -1;
	snprintf(child->mount, sizeof(child->mount), "%s", parent->mount);
	return 0;
}

int mc_cgroup_attach(const struct mc_cgroup *cg, pid_t pid, char *err,
		     size_t errlen)
{
	return mc_cgroup_write_u64(cg->dir, "cgroup.procs", (uint64_t)pid, err,
				   errlen);
}

static bool bad_component(const char *s, size_t n)
{
	return n == 0 || (n == 1 && s[0] == '.') ||
	       (n == 2 && s[0] == '.' && s[1] == '.') || n >= NAME_MAX;
}

/* Open the scope directory after checking that its path has no symlink:
 * its canonical form must be itself. */
static int open_scope(const char *scope, char *err, size_t errlen)
{
	char real[PATH_MAX], want[PATH_MAX];
	size_t l;
	int fd;

	if (!scope || scope[0] != '/') {
		snprintf(err, errlen, "%s: not an absolute path",
			 scope ? scope : "(null)");
		errno = EINVAL;
		return -1;
	}
	snprintf(want, sizeof(want), "%s", scope);
	l = strlen(want);
	while (l > 1 && want[l - 1] == '/')
		want[--l] = '\0';
	if (!realpath(want, real)) {
		int e = errno;

		snprintf(err, errlen, "%s: %s", scope, strerror(e));
		errno = e;
		return -1;
	}
	if (strcmp(real, want)) {
		snprintf(err, errlen, "%s: refused: the path goes through a "
			 "symlink or is not canonical (%s)", scope, real);
		errno = ELOOP;
		return -1;
	}
	fd = open(want, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		snprintf(err, errlen, "%s: %s", scope, strerror(e));
		errno = e;
	}
	return fd;
}

int mc_cgroup_open_within(const char *scope, const char *rel, int flags,
			  char *err, size_t errlen)
{
	int fd = open_scope(scope, err, errlen);
	const char *p = rel ? rel : "";

	if (fd < 0)
		return -1;
	if (*p == '/') {
		snprintf(err, errlen, "%s: refused: absolute path inside "
			 "the step's cgroup", rel);
		close(fd);
		errno = EINVAL;
		return -1;
	}
	if (!*p)
		return fd;
	for (;;) {
		const char *c = strchr(p, '/');
		size_t n = c ? (size_t)(c - p) : strlen(p);
		char comp[NAME_MAX + 1];
		bool last = !c || !c[1];
		int nfd, e;

		if (bad_component(p, n)) {
			snprintf(err, errlen, "%s/%s: refused: '%.*s' would "
				 "leave the step's cgroup", scope, rel,
				 (int)n, p);
			close(fd);
			errno = EPERM;
			return -1;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		nfd = openat(fd, comp, (last ? flags : O_RDONLY | O_DIRECTORY)
			     | O_NOFOLLOW | O_CLOEXEC);
		e = errno;
		if (nfd < 0 && (e == ELOOP || e == ENOTDIR)) {
			struct stat st;

			/* O_NOFOLLOW says ELOOP for a link, O_DIRECTORY may
			 * say ENOTDIR first: name the link either way. */
			if (fstatat(fd, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISLNK(st.st_mode))
				e = ELOOP;
		}
		close(fd);
		if (nfd < 0) {
			snprintf(err, errlen, "%s/%s: %s", scope, rel,
				 e == ELOOP ? "refused: a symlink"
					    : strerror(e));
			errno = e;
			return -1;
		}
		fd = nfd;
		if (last)
			break;
		p = c + 1;
	}
	return fd;
}

int mc_cgroup_write(const char *scope, const char *rel, const char *value,
		    char *err, size_t errlen)
{
	struct stat st;
	size_t len = strlen(value);
	ssize_t n;
	int fd, e;

	fd = mc_cgroup_open_within(scope, rel, O_WRONLY | O_TRUNC, err,
				   errlen);
	if (fd < 0)
		return -1;
	/* Only a regular file: never a FIFO or device put in its place. */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s/%s: refused: not a regular file",
			 scope, rel);
		close(fd);
		errno = EPERM;
		return -1;
	}
	do {
		n = write(fd, value, len);
	} while (n < 0 && errno == EINTR);
	e = errno;
	close(fd);
	if (n < 0 || (size_t)n != len) {
		snprintf(err, errlen, "%s/%s: writing %s: %s", scope, rel,
			 value, n < 0 ? strerror(e) : "short write");
		errno = n < 0 ? e : EIO;
		return -1;
	}
	return 0;
}

int mc_cgroup_write_u64(const char *scope, const char *rel, uint64_t value,
			char *err, size_t errlen)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64, value);
	return mc_cgroup_write(scope, rel, buf, err, errlen);
}

static int check_name(const char *scope, const char *name, char *err,
		      size_t errlen)
{
	if (!name || strchr(name, '/') || bad_component(name, strlen(name))) {
		snprintf(err, errlen, "%s: refused: '%s' is not one directory "
			 "name", scope, name ? name : "(null)");
		errno = EPERM;
		return -1;
	}
	return 0;
}

/* mkdir (make) or rmdir of the child `name` of scope, through the scope's
 * guard; a missing child is no error for rmdir. */
static int child_dir(const char *scope, const char *name, bool make,
		     char *err, size_t errlen)
{
	int fd, e;

	if (check_name(scope, name, err, errlen) < 0)
		return -1;
	fd = open_scope(scope, err, errlen);
	if (fd < 0)
		return -1;
	if ((make ? mkdirat(fd, name, 0755)
		  : unlinkat(fd, name, AT_REMOVEDIR)) == 0 ||
	    (!make && errno == ENOENT)) {
		close(fd);
		return 0;
	}
	e = errno;
	close(fd);
	snprintf(err, errlen, "%s/%s: %s", scope, name, make && e == EEXIST
		 ? "refused: it exists already (memcore makes its own "
		   "cgroup afresh, never joins one)" : strerror(e));
	errno = e;
	return -1;
}

int mc_cgroup_mkdir(const char *scope, const char *name, char *err,
		    size_t errlen)
{
	return child_dir(scope, name, true, err, errlen);
}

int mc_cgroup_rmdir(const char *scope, const char *name, char *err,
		    size_t errlen)
{
	return child_dir(scope, name, false, err, errlen);
}

int mc_cgroup_populated(const char *dir, const struct mc_cgroup_ops *ops)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int rc;

	if (dfd < 0)
		return -1;
	rc = ops->populated(dfd);
	close(dfd);
	return rc;
}

int mc_cgroup_parent(const char *dir, char *out, size_t len)
{
	const char *slash = strrchr(dir, '/');
	size_t n;

	if (!slash || slash == dir)
		return -1;
	n = (size_t)(slash - dir);
	if (n >= len)
		return -1;
	memcpy(out, dir, n);
	out[n] = '\0';
	return 0;
}

int mc_cgroup_subtree_has(const char *dir, const char *controller)
{
	char buf[512];
	size_t cl = strlen(controller);
	const char *p;
	char path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s/cgroup.subtree_control",
			     dir) >= sizeof(path) ||
	    mc_read_at(AT_FDCWD, path, buf, sizeof(buf)) < 0)
		return -1;
	for (p = buf; (p = strstr(p, controller)) != NULL; p += cl)
		if ((p == buf || p[-1] == ' ') &&
		    (p[cl] == ' ' || p[cl] == '\n' || p[cl] == '\0'))
			return 1;
	return 0;
}

const struct mc_cgroup_ops *mc_cgroup_ops_at(const char *dir, char *err,
					     size_t errlen)
{
	static const struct mc_cgroup_ops *const tables[] = {
		&mc_cgroup_v1, &mc_cgroup_v2,
	};
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	const struct mc_cgroup_ops *ops = NULL;
	struct stat st;

	if (dfd < 0) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return NULL;
	}
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]) && !ops;
	     i++)
		if (fstatat(dfd, tables[i]->usage_file, &st,
			    AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
			ops = tables[i];
	if (!ops)
		snprintf(err, errlen, "%s: not a memory cgroup (no "
			 "memory.usage_in_bytes or memory.current: is the "
			 "memory controller enabled here?)", dir);
	close(dfd);
	return ops;
}

const struct mc_cgroup_ops *mc_cgroup_ops_of(uint32_t version)
{
	return version == 1 ? &mc_cgroup_v1 : &mc_cgroup_v2;
}

bool mc_cgroup_ops_has(const struct mc_cgroup_ops *ops, enum mc_cg_feature f)
{
	return (ops->features & (unsigned)f) != 0;
}

bool mc_cgroup_has(const struct mc_cgroup *cg, enum mc_cg_feature f)
{
	return mc_cgroup_ops_has(cg->ops, f);
}
