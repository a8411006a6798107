/*
 * mc_tmpfs.c - the node's tmpfs mounts (see mc_tmpfs.h).
 */
#include "mc_tmpfs.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "mc_parse.h"

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(const char *s, size_t len, char *out, size_t outlen)
{
	size_t o = 0;

	for (size_t i = 0; i < len && o + 1 < outlen; i++) {
		if (s[i] == '\\' && i + 3 < len &&
		    s[i + 1] >= '0' && s[i + 1] <= '3' &&
		    s[i + 2] >= '0' && s[i + 2] <= '7' &&
		    s[i + 3] >= '0' && s[i + 3] <= '7') {
			out[o++] = (char)((s[i + 1] - '0') * 64 +
					  (s[i + 2] - '0') * 8 +
					  (s[i + 3] - '0'));
			i += 3;
		} else {
			out[o++] = s[i];
		}
	}
	out[o] = '\0';
}

/* The system's own tmpfs, which no job fills: /sys/..., /proc/..., /run
 * and /run/lock (but /run/user/UID, a user's, stays). */
static bool system_mount(const char *p)
{
	return !strncmp(p, "/sys/", 5) || !strcmp(p, "/sys") ||
	       !strncmp(p, "/proc/", 6) || !strcmp(p, "/proc") ||
	       !strcmp(p, "/run") || !strcmp(p, "/run/lock");
}

/* Field n (0-based, space-separated) of line [s, end): start and length. */
static bool field(const char *s, const char *end, int n, const char **f,
		  size_t *len)
{
	const char *p = s;

	for (int i = 0; i < n; i++) {
		p = memchr(p, ' ', (size_t)(end - p));
		if (!p)
			return false;
		p++;
	}
	*f = p;
	p = memchr(p, ' ', (size_t)(end - p));
	*len = (size_t)((p ? p : end) - *f);
	return true;
}

/* Whether the comma-separated options [o, o + len) include "ro". */
static bool read_only(const char *o, size_t len)
{
	return (len == 2 && !strncmp(o, "ro", 2)) ||
	       (len > 2 && !strncmp(o, "ro,", 3));
}

size_t mc_tmpfs_parse(const char *text, struct mc_tmpfs_mount *out,
		      size_t max)
{
	size_t n = 0;
	const char *s = text;

	while (s && *s) {
		const char *end = strchr(s, '\n'), *sep, *mp, *opts, *type;
		size_t mplen, optlen, typelen;
		char path[MC_TMPFS_PATH_MAX];
		size_t k;

		if (!end)
			end = s + strlen(s);
		/* " - " ends the optional fields; the type follows it. */
		sep = s;
		while ((sep = memchr(sep, '-', (size_t)(end - sep))) &&
		       !(sep > s && sep[-1] == ' ' && sep + 1 < end &&
			 sep[1] == ' '))
			sep++;
		if (!sep || !field(s, end, 4, &mp, &mplen) ||
		    !field(s, end, 5, &opts, &optlen) ||
		    !field(sep + 2, end, 0, &type, &typelen) ||
		    mplen == 0 || mplen >= sizeof(path) * 4)
			goto next;
		if (!((typelen == 5 && !strncmp(type, "tmpfs", 5)) ||
		      (typelen == 5 && !strncmp(type, "ramfs", 5))))
			goto next;
		unescape(mp, mplen, path, sizeof(path));
		if (system_mount(path))
			goto next;
		/* The last mount on a path hides the ones before it. */
		for (k = 0; k < n && strcmp(out[k].path, path); k++)
			;
		if (read_only(opts, optlen)) {
			if (k < n) {	/* a read-only overmount hides it */
				memmove(&out[k], &out[k + 1],
					(n - k - 1) * sizeof(out[0]));
				n--;
			}
			goto next;
		}
		if (k == n) {
			if (n >= max)
				goto next;
			n++;
		}
		snprintf(out[k].path, sizeof(out[k].path), "%s", path);
		out[k].used_bytes = 0;
		out[k].owner = out[k].mode = 0;
next:
		s = *end ? end + 1 : end;
	}
	return n;
}

static int by_use(const void *a, const void *b)
{
	const struct mc_tmpfs_mount *x = a, *y = b;

	if (x->used_bytes != y->used_bytes)
		return x->used_bytes > y->used_bytes ? -1 : 1;
	return strcmp(x->path, y->path);
}

size_t mc_tmpfs_scan(const char *path, struct mc_tmpfs_mount *out,
		     size_t max)
{
	FILE *fp = fopen(path ? path : "/proc/self/mountinfo", "re");
	char *text = NULL;
	size_t cap = 0, len = 0, n;

	if (!fp)
		return 0;
	for (;;) {
		char *t;

		if (len + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 16384;
			if (cap > (16u << 20) || !(t = realloc(text, cap)))
				break;
			text = t;
		}
		size_t got = fread(text + len, 1, cap - len - 1, fp);

		len += got;
		if (got == 0)
			break;
	}
	fclose(fp);
	if (!text)
		return 0;
	text[len] = '\0';
	n = mc_tmpfs_parse(text, out, max);
	free(text);
	for (size_t i = 0; i < n; i++) {
		struct statvfs st;
		struct stat root;

		if (statvfs(out[i].path, &st) == 0 && st.f_blocks >= st.f_bfree)
			out[i].used_bytes = (uint64_t)(st.f_blocks -
						       st.f_bfree) *
					    st.f_frsize;
		if (stat(out[i].path, &root) == 0) {
			out[i].owner = root.st_uid;
			out[i].mode = root.st_mode;
		}
	}
	qsort(out, n, sizeof(out[0]), by_use);
	return n;
}

const char *mc_tmpfs_describe(const struct mc_tmpfs_mount *m, size_t n,
			      char *buf, size_t buflen)
{
	size_t len = 0, shown = 0;
	bool any_used = false;

	if (!buflen)
		return buf;
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++)
		any_used |= m[i].used_bytes > 0;
	for (size_t i = 0; i < n && len + 1 < buflen; i++) {
		char b[32];
		int w;

		if (any_used && !m[i].used_bytes)
			continue;
		if (any_used)
			w = snprintf(buf + len, buflen - len, "%s%s %s",
				     shown ? ", " : "", m[i].path,
				     mc_fmt_bytes(m[i].used_bytes, b,
						  sizeof(b)));
		else
			w = snprintf(buf + len, buflen - len, "%s%s",
				     shown ? ", " : "", m[i].path);
		if (w < 0)
			break;
		len += (size_t)w;
		shown++;
	}
	if (len >= buflen)
		len = buflen - 1;
	if (!shown)
		snprintf(buf, buflen, "/dev/shm");
	return buf;
}

/* Whether the job's user uid may write the mount root by its mode
 * alone: the job's own tmpfs (mc_tmpfs.h). */
static bool own_mount(const struct mc_tmpfs_mount *m, uint32_t uid)
{
	return (m->mode & S_IWOTH) ||
	       (m->owner == uid && (m->mode & S_IWUSR));
}

size_t mc_tmpfs_own(struct mc_tmpfs_mount *m, size_t n, uint32_t uid)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (own_mount(&m[i], uid))
			m[k++] = m[i];
	return k;
}

const char *mc_tmpfs_where(uint32_t uid, char *buf, size_t buflen)
{
	struct mc_tmpfs_mount m[MC_TMPFS_MAX];
	size_t n = mc_tmpfs_scan(NULL, m, MC_TMPFS_MAX);

	return mc_tmpfs_describe(m, mc_tmpfs_own(m, n, uid), buf, buflen);
}
