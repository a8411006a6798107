/*
 * mc_jsonfile.c - read a job's configuration file, bounded (see
 * mc_jsonfile.h).
 */
#include "mc_jsonfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "mc_parse.h"
#include "mc_util.h"

json_t *mc_jsonfile_parse(const char *text, size_t len, const char *name,
			  bool reject_dups, char *err, size_t errlen)
{
	json_error_t jerr;
	/* Without JSON_REJECT_DUPLICATES jansson keeps the last value of a
	 * repeated key (json_object_set replaces), as Python does. */
	json_t *o = json_loadb(text, len, reject_dups ? JSON_REJECT_DUPLICATES
			       : 0, &jerr);
	char q[sizeof(jerr.text) * 4];

	if (o)
		return o;
	/* jansson quotes the file's own text ("near '...'"): escaped */
	mc_escape(jerr.text, 0, q, sizeof(q));
	if (jerr.line > 0 && jerr.column > 0)
		mc_err(err, errlen, "%s: not JSON at line %d, column %d: %s",
		       name, jerr.line, jerr.column, q);
	else if (jerr.line > 0)
		mc_err(err, errlen, "%s: not JSON at line %d: %s", name,
		       jerr.line, q);
	else
		mc_err(err, errlen, "%s: not JSON: %s", name, q);
	return NULL;
}

int mc_jsonfile_read(const char *path, const char *what, char **text,
		     size_t *len, char *err, size_t errlen)
{
	struct stat st;
	char *buf = NULL, q[MC_QUOTE_MAX];
	size_t got = 0;
	int fd;

	*text = NULL;
	*len = 0;
	/* The user's path in every message below: cut, the reason shows. */
	mc_escape(path, 0, q, sizeof(q));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return mc_err(err, errlen, "%s=%s: cannot open: %s", what, q,
			      strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return mc_err(err, errlen, "%s=%s: not a regular file", what,
			      q);
	}
	if (st.st_size > MC_JSONFILE_MAX) {
		close(fd);
		return mc_err(err, errlen, "%s=%s: %lld bytes, larger than "
			      "the %u memcore reads", what, q,
			      (long long)st.st_size, MC_JSONFILE_MAX);
	}
	buf = malloc(MC_JSONFILE_MAX + 1);
	if (!buf) {
		close(fd);
		return mc_err(err, errlen, "%s=%s: out of memory", what, q);
	}
	/* Read to the bound, not to st_size: a file that grows between the
	 * stat and the read is still cut off at the bound. */
	for (;;) {
		ssize_t n = read(fd, buf + got, MC_JSONFILE_MAX + 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			mc_err(err, errlen, "%s=%s: cannot read: %s", what,
			       q, strerror(errno));
			goto fail;
		}
		if (n == 0)
			break;
		got += (size_t)n;
		if (got > MC_JSONFILE_MAX) {
			mc_err(err, errlen, "%s=%s: larger than the %u bytes "
			       "memcore reads", what, q, MC_JSONFILE_MAX);
			goto fail;
		}
	}
	close(fd);
	buf[got] = '\0';
	*text = buf;
	*len = got;
	return 0;
fail:
	close(fd);
	free(buf);
	return -1;
}
