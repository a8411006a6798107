/*
 * mc_outfile.h - a file a memcore command writes where its caller says
 * (memcore report --svg FILE), safe when the caller is root and FILE's
 * name passes through a directory a user can write.
 *
 * What a user could plant at FILE, and what memcore does:
 *  - a symbolic link (to /etc/shadow, say): refused, never followed; the
 *    picture is written to a new file and renamed over FILE, and rename(2)
 *    replaces a link planted after the check, never its target;
 *  - a FIFO, a device, a directory: refused, never opened (opening a FIFO
 *    waits for a reader for ever);
 *  - a file of another user: refused, never truncated nor replaced
 *    (root too);
 *  - FILE in a directory anyone can write that is not sticky (mode 0777):
 *    refused, since anyone could replace the file once it is written.
 *    A group-writable directory is taken (user private groups, umask 002).
 * The new file is made O_CREAT | O_EXCL | O_NOFOLLOW in FILE's own
 * directory (no name there is reused), mode 0666 less the umask.
 */
#ifndef MC_OUTFILE_H
#define MC_OUTFILE_H

#include <stdio.h>
#include <stddef.h>

struct mc_outfile {
	int dfd;		/* FILE's directory, held open */
	char base[256];		/* FILE's last component */
	char tmp[288];		/* the new file's name in dfd */
	FILE *f;		/* open on tmp, for the caller to write */
};

/*
 * Whether path may be written as above. Returns 0, or -1 with why (the
 * reason only, e.g. "a symbolic link: refused, never followed"). Said
 * before any work, and checked again when the file is put in place.
 */
int mc_outfile_check(const char *path, char *why, size_t whylen);

/* Check path and open the new file beside it: 0 with o->f, or -1 with
 * why (nothing made). */
int mc_outfile_open(struct mc_outfile *o, const char *path, char *why,
		    size_t whylen);

/*
 * Close o->f and, when ok and the check still holds, rename the new file
 * over path; otherwise remove it. Returns 0, or -1 with why (also when
 * ok is false: "not written").
 */
int mc_outfile_commit(struct mc_outfile *o, int ok, char *why,
		      size_t whylen);

#endif
