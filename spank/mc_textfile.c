/*
 * mc_textfile.c - the node_exporter textfile of the cluster view
 * (policy/mc_metrics.h), updated by slurmstepd (root) at each GPU step's
 * end when memcore.conf names PrometheusTextfile=.
 *
 * Concurrent steps on the node must not lose counts, and node_exporter
 * must never read half a file: under an exclusive flock on the file's
 * directory (no lock file is left behind) the file is read, the step
 * added, and the result written to ".<name>.tmp" (node_exporter reads
 * only *.prom) and renamed over it. A slurmstepd killed meanwhile leaves
 * at most that temporary file, which the next step removes, and the
 * kernel drops its lock. Written as root into a directory others may
 * write: the file is read only when a regular file, opened O_NONBLOCK (a
 * FIFO planted there must not hang slurmstepd), and the temporary file
 * is created anew, O_EXCL|O_NOFOLLOW, so a symlink or FIFO planted under
 * its name is never followed nor opened: the write fails, said in the
 * log. The lock is waited for LOCK_WAIT_MS at most: a
 * step's end is never held up longer; its counts are then lost, said in
 * slurmd's log.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "mc_metrics.h"
#include "mc_plugin.h"
#include "mc_util.h"

#define LOCK_WAIT_MS 2000
#define TEXT_MAX (256 * 1024)

static int lock_dir(int dfd)
{
	struct timespec ts = { 0, 10000000L };	/* 10 ms */

	for (int waited = 0; waited < LOCK_WAIT_MS; waited += 10) {
		if (flock(dfd, LOCK_EX | LOCK_NB) == 0)
			return 0;
		if (errno != EWOULDBLOCK && errno != EINTR)
			return -1;
		nanosleep(&ts, NULL);
	}
	errno = ETIMEDOUT;
	return -1;
}

/* Read the textfile (name in dfd) into buf, NUL-terminated: a regular
 * file only, never through a symlink, never blocking on a FIFO. Returns
 * 0 (an absent file reads as empty) or -1 with errno set. */
static int read_prom(int dfd, const char *name, char *buf, size_t len)
{
	struct stat st;
	size_t got = 0;
	ssize_t n;
	int fd, e;

	buf[0] = '\0';
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
		    O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	e = fstat(fd, &st) < 0 ? errno : !S_ISREG(st.st_mode) ? EINVAL : 0;
	if (e) {
		close(fd);
		errno = e;
		return -1;
	}
	while (got + 1 < len) {
		n = read(fd, buf + got, len - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	close(fd);
	return 0;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

void mc_textfile_add(const struct mc_plugin *p)
{
	static char text[TEXT_MAX];
	static struct mc_metrics m;
	const struct mc_after *a = &p->after;
	struct mc_metrics_step st = { 0 };
	char dir[PATH_MAX], tmp[NAME_MAX + 1];
	const char *path = a->textfile, *base, *what = "open its directory";
	int dfd, fd = -1, len;

	if (!*path || !a->judged)
		return;
	base = strrchr(path, '/');
	if (!base || !base[1] || (size_t)(base - path) >= sizeof(dir) ||
	    strlen(base + 1) + 6 > NAME_MAX) {
		slurm_info("memcore: PrometheusTextfile=%s: not an absolute "
			   "file path", path);
		return;
	}
	memcpy(dir, path, (size_t)(base - path));
	dir[base - path] = '\0';
	base++;
	snprintf(tmp, sizeof(tmp), ".%s.tmp", base);
	st.node = p->step.host;
	st.partition = p->step.partition;
	st.v[MC_M_STEPS_JUDGED] = 1;
	st.v[MC_M_STEPS_REFUSED] = a->refused;
	if (!a->refused) {
		const struct mc_used *u = &a->usage;

		st.v[MC_M_STEPS_OOM_KILLED] = u->oom_kills > 0;
		st.v[MC_M_MEMORY_ASKED_BYTES] = (double)u->asked_bytes;
		st.v[MC_M_MEMORY_PEAK_NR_BYTES] = (double)u->peak.nr_bytes;
		st.v[MC_M_CORES_ASKED] = u->cores_allocated;
		st.v[MC_M_CORE_SECONDS_ASKED] = u->cores_allocated *
						(u->wall_usec / 1e6);
		st.v[MC_M_CPU_SECONDS] = u->cpu_usec / 1e6;
	}
	dfd = open(dir[0] ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		goto fail;
	what = "lock its directory";
	if (lock_dir(dfd) < 0)
		goto fail;
	if (read_prom(dfd, base, text, sizeof(text)) < 0) {
		what = "read it (a regular file)";
		goto fail;
	}
	mc_metrics_parse(text, &m);
	what = "add a series (too many node and partition pairs)";
	if (mc_metrics_add(&m, &st) < 0)
		goto fail;
	what = "format it";
	len = mc_metrics_format(&m, text, sizeof(text));
	if (len < 0)
		goto fail;
	what = "remove its old temporary file";
	if (unlinkat(dfd, tmp, 0) < 0 && errno != ENOENT)
		goto fail;
	/* Under the lock no other step makes it: whatever is there now was
	 * planted, and is refused (EEXIST), never followed or opened. */
	what = "create its temporary file";
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		    O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644);
	if (fd < 0)
		goto fail;
	what = "write its temporary file";
	if (write_all(fd, text, (size_t)len) < 0 || fsync(fd) < 0)
		goto fail;
	close(fd);
	fd = -1;
	what = "rename its temporary file over it";
	if (renameat(dfd, tmp, dfd, base) < 0)
		goto fail;
	close(dfd);	/* and the lock with it */
	return;
fail:
	slurm_info("memcore: step %s: PrometheusTextfile=%s: cannot %s (%m); "
		   "this step is not counted there", p->step.step_name, path,
		   what);
	if (fd >= 0) {
		close(fd);
		unlinkat(dfd, tmp, 0);
	}
	if (dfd >= 0)
		close(dfd);
}
