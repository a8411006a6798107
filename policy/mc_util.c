/*
 * mc_util.c - see mc_util.h.
 */
#include "mc_util.h"
#include "mc_parse.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

int mc_open_regular(const char *path, int flags, off_t max_bytes,
		    off_t *size_out, char *err, size_t errlen)
{
	struct stat sb;
	int fd, e;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK |
		  ((flags & MC_OPEN_NOFOLLOW) ? O_NOFOLLOW : 0));
	if (fd < 0) {
		e = errno;
		mc_err(err, errlen, "%s: %s", path, strerror(e));
		errno = e;
		return -1;
	}
	if (fstat(fd, &sb)) {
		e = errno;
		mc_err(err, errlen, "%s: %s", path, strerror(e));
		close(fd);
		errno = e;
		return -1;
	}
	if (!S_ISREG(sb.st_mode)) {
		mc_err(err, errlen, "%s: %s", path, S_ISDIR(sb.st_mode) ?
		       "is a directory" : "not a regular file");
		close(fd);
		errno = S_ISDIR(sb.st_mode) ? EISDIR : EINVAL;
		return -1;
	}
	if (max_bytes && sb.st_size > max_bytes) {
		mc_err(err, errlen, "%s: larger than %lld bytes", path,
		       (long long)max_bytes);
		close(fd);
		errno = EFBIG;
		return -1;
	}
	if (size_out)
		*size_out = sb.st_size;
	return fd;
}
