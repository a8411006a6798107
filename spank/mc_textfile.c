/*
 * mc_textfile.c - the node_exporter textfile of the cluster view
 * (report/mc_metrics.h), updated by slurmstepd (root) at each GPU step's
 * end when memcore.conf names PrometheusTextfile=.
 *
 * Concurrent steps on the node must not lose counts, and node_exporter
 * must never read half a file: under an exclusive flock on a lock file
 * only root can open (memcore-textfile.lock, mode 0600, in the root-only
 * directory of the node-facts cache and the job records, mc_jobview.h)
 * the file is read, the step added, and the result written to
 * ".<name>.tmp" (node_exporter reads only *.prom) and renamed over it.
 * The lock is not taken on the textfile's directory: anyone who can open
 * a directory can flock it, and each step would wait for that user. A
 * slurmstepd killed meanwhile leaves at most the temporary file, which
 * the next step removes, and the kernel drops its lock. The lock is
 * waited for LOCK_WAIT_MS at most (only other steps' updates hold it): a
 * step's end is never held up longer; its counts are then lost, said in
 * slurmd's log.
 *
 * memcore.conf refuses a textfile directory others can write
 * (mc_dir_root_only), but a file may have been planted before that or by
 * hand, so what is read back is believed only when it is a regular file
 * owned by root that nobody else can write, with one link; otherwise the
 * counts start afresh and slurmd's log says why. Of a believed file only
 * this node's series are kept (mc_metrics_parse). The file is read
 * opened O_NONBLOCK|O_NOFOLLOW (a FIFO or link planted there must not
 * hang slurmstepd nor be followed), and the temporary file is created
 * anew, O_EXCL|O_NOFOLLOW, so a link or FIFO planted under its name is
 * never followed nor opened: the write fails, said in the log.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "mc_jobview.h"
#include "mc_metrics.h"
#include "mc_plugin.h"
#include "mc_textfile.h"
#include "mc_util.h"
#include "mc_log.h"

#define LOCK_WAIT_MS 2000
#define TEXT_MAX (256 * 1024)

#define LOCK_NAME "memcore-textfile.lock"

/* Open and flock the lock file (path): root's alone, or refused. Returns
 * the descriptor, or -1 with errno set (EPERM: not root's alone). */
static int lock_file(const char *path)
{
	struct timespec ts = { 0, 10000000L };	/* 10 ms */
	struct stat st;
	int fd = open(path, O_RDONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK |
		      O_NOCTTY | O_CLOEXEC, 0600);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !mc_st_root_only(&st, 077)) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	for (int waited = 0; waited < LOCK_WAIT_MS; waited += 10) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return fd;
		if (errno != EWOULDBLOCK && errno != EINTR)
			break;
		nanosleep(&ts, NULL);
	}
	if (errno == EWOULDBLOCK || errno == EINTR)
		errno = ETIMEDOUT;
	{
		int e = errno;

		close(fd);
		errno = e;
	}
	return -1;
}

/* Read the textfile (name in dfd) into buf, NUL-terminated: a regular
 * file only, never through a symlink, never blocking on a FIFO; its
 * fstat in *st. Returns 1 read, 0 absent (buf empty) or -1 with errno
 * set. */
static int read_prom(int dfd, const char *name, char *buf, size_t len,
		     struct stat *stp)
{
	struct stat st;
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
	n = mc_read_fd(fd, buf, len);
	e = errno;
	close(fd);
	if (n < 0) {
		errno = e;
		return -1;
	}
	*stp = st;
	return 1;
}

/* Why a textfile read back is not memcore's to believe, or NULL. */
static const char *untrusted(const struct stat *st, char *buf, size_t len)
{
	if (st->st_uid != 0)
		snprintf(buf, len, "owned by uid %u, not root",
			 (unsigned)st->st_uid);
	else if (st->st_mode & 022)
		snprintf(buf, len, "writable by others than root (mode %04o)",
			 (unsigned)(st->st_mode & 07777));
	else if (st->st_nlink != 1)
		snprintf(buf, len, "%u links to it, not one",
			 (unsigned)st->st_nlink);
	else
		return NULL;
	return buf;
}

void mc_textfile_node(char *buf, size_t len)
{
	const char *env = getenv("SLURMD_NODENAME");

	if (env && *env)
		snprintf(buf, len, "%s", env);
	else if (gethostname(buf, len) != 0)
		snprintf(buf, len, "unknown");
	buf[len - 1] = '\0';
}

/* This step's series: judged, refused, and what a step that ran used. */
static void step_series(const struct mc_plugin *p, const char *node,
			struct mc_metrics_step *st)
{
	const struct mc_after *a = &p->after;
	const struct mc_used *u = &a->usage;

	st->node = node;
	st->partition = p->step.partition;	/* slurmd's record, or "" */
	st->v[MC_M_STEPS_JUDGED] = 1;
	st->v[MC_M_STEPS_REFUSED] = a->refused;
	if (a->refused)
		return;
	st->v[MC_M_STEPS_OOM_KILLED] = u->oom_kills > 0;
	st->v[MC_M_MEMORY_ASKED_BYTES] = (double)u->asked_bytes;
	st->v[MC_M_MEMORY_PEAK_NR_BYTES] = (double)u->peak.nr_bytes;
	{
		uint64_t need = u->rule_bytes > u->peak.nr_bytes
				? u->rule_bytes : u->peak.nr_bytes;

		st->v[MC_M_MEMORY_NEEDED_BYTES] =
			(double)(need < u->asked_bytes ? need : u->asked_bytes);
	}
	st->v[MC_M_CORES_ASKED] = u->cores_allocated;
	st->v[MC_M_CORE_SECONDS_ASKED] = u->cores_allocated *
					 (u->wall_usec / 1e6);
	st->v[MC_M_CPU_SECONDS] = u->cpu_usec / 1e6;
}

/* Replace base in dfd by text (len bytes) through the temporary file tmp
 * and a rename, under the caller's lock. Returns 0, or -1 with errno and
 * *what saying which part failed (the temporary file removed). */
static int replace(int dfd, const char *base, const char *tmp,
		   const char *text, size_t len, const char **what)
{
	int fd;

	*what = "remove its old temporary file";
	if (unlinkat(dfd, tmp, 0) < 0 && errno != ENOENT)
		return -1;
	/* Under the lock no other step makes it: whatever is there now was
	 * planted, and is refused (EEXIST), never followed or opened. */
	*what = "create its temporary file";
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		    O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	*what = "write its temporary file";
	if (mc_write_all(fd, text, len) < 0 || fsync(fd) < 0)
		goto fail;
	close(fd);
	*what = "rename its temporary file over it";
	if (renameat(dfd, tmp, dfd, base) == 0)
		return 0;
	fd = -1;
fail:
	{
		int e = errno;

		if (fd >= 0)
			close(fd);
		unlinkat(dfd, tmp, 0);
		errno = e;
	}
	return -1;
}

void mc_textfile_add(const struct mc_plugin *p)
{
	static char text[TEXT_MAX];
	static struct mc_metrics m;
	const struct mc_after *a = &p->after;
	struct mc_metrics_step st = { 0 };
	struct stat fst;
	char dir[PATH_MAX], lock[PATH_MAX + sizeof(LOCK_NAME) + 1],
	     tmp[NAME_MAX + 1], node[MC_METRICS_LABEL_MAX], why[96];
	const char *path = a->textfile, *base, *what = "open its lock file",
		   *bad;
	int dfd = -1, lfd = -1, len, rc;
	size_t dropped;

	if (!*path || !a->judged)
		return;
	base = strrchr(path, '/');
	if (!base || !base[1] || (size_t)(base - path) >= sizeof(dir) ||
	    strlen(base + 1) + 6 > NAME_MAX) {
		mc_log_info("memcore: PrometheusTextfile=%s: not an absolute "
			    "file path", path);
		return;
	}
	memcpy(dir, path, (size_t)(base - path));
	dir[base - path] = '\0';
	base++;
	snprintf(tmp, sizeof(tmp), ".%s.tmp", base);
	mc_textfile_node(node, sizeof(node));
	step_series(p, node, &st);
	if (mc_jobview_dir(p->ac, p->av, mc_cache_default_path(), lock,
			   sizeof(lock) - sizeof(LOCK_NAME) - 1) < 0) {
		errno = ENAMETOOLONG;
		goto fail;
	}
	snprintf(lock + strlen(lock), sizeof(LOCK_NAME) + 1, "/%s",
		 LOCK_NAME);
	lfd = lock_file(lock);
	if (lfd < 0) {
		what = errno == EPERM ? "lock (its lock file is not root's "
					"alone)" : "lock its lock file";
		goto fail;
	}
	/* Opened as judged at load: no link of another owner's on the way,
	 * root's alone (mc_open_root_dir), whoever owns the directories
	 * above it now. */
	what = "open its directory (root's alone, reached through no link "
	       "but root's)";
	dfd = mc_open_root_dir(dir[0] ? dir : "/");
	if (dfd < 0)
		goto fail;
	rc = read_prom(dfd, base, text, sizeof(text), &fst);
	if (rc < 0) {
		what = "read it (a regular file)";
		goto fail;
	}
	if (rc > 0 && (bad = untrusted(&fst, why, sizeof(why)))) {
		mc_log_info("memcore: PrometheusTextfile=%s: not adopted (%s): "
			    "its counts start afresh", path, bad);
		text[0] = '\0';
	}
	dropped = mc_metrics_parse(text, node, &m);
	if (dropped)
		mc_log_info("memcore: PrometheusTextfile=%s: %zu sample%s not "
			    "adopted (another node's than %s, or damaged)", path,
			    dropped, dropped == 1 ? "" : "s", node);
	what = "add a series (the node name is no label)";
	rc = mc_metrics_add(&m, &st);
	if (rc < 0)
		goto fail;
	if (rc > 0)
		mc_log_info("memcore: step %s: PrometheusTextfile=%s: counted "
			    "under partition=\"" MC_METRICS_OTHER "\" (its "
			    "partition is no label, or %d partitions are "
			    "counted already)", p->step.step_name, path,
			    MC_METRICS_SERIES_MAX - 1);
	what = "format it";
	len = mc_metrics_format(&m, text, sizeof(text));
	if (len < 0)
		goto fail;
	if (replace(dfd, base, tmp, text, (size_t)len, &what) < 0)
		goto fail;
	close(dfd);
	close(lfd);	/* and the lock with it */
	return;
fail:
	mc_log_info("memcore: step %s: PrometheusTextfile=%s: cannot %s (%m); "
		    "this step is not counted there", p->step.step_name, path,
		    what);
	if (dfd >= 0)
		close(dfd);
	if (lfd >= 0)
		close(lfd);
}
