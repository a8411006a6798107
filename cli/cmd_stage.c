/*
 * memcore stage - copy a dataset (files and directory trees) to node-local
 * scratch in parallel, resumably, after checking that it fits: what the
 * launch note on a dataset on a network filesystem tells the user to run
 * (mc_dataset.h). The copy itself is mc_stage.c; here are the options, the
 * free-space check, the progress and the summary.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "mc_parse.h"
#include "mc_stage.h"
#include "mc_util.h"

static void stage_usage(FILE *out)
{
	fprintf(out,
"usage: memcore stage [options] SRC [SRC...] DEST\n"
"\n"
"Copy each SRC (a file or a directory tree) into the directory DEST as\n"
"DEST/NAME, NAME being SRC's last component: a dataset from a network\n"
"filesystem to node-local scratch. Directories, regular files and symlinks\n"
"(made again as symlinks, never followed below SRC) are copied with their\n"
"mtimes and their permission bits less set-user/group-ID and less group\n"
"and other write; other types are skipped, with a line naming each. A file\n"
"already at DEST with the same size and mtime is skipped, so a rerun\n"
"resumes; each file is written under a temporary name and renamed into\n"
"place once complete. Nothing is written when the bytes still to copy do\n"
"not fit in DEST's free space.\n"
"\n"
"DEST must be yours and writable by no one else (not a shared 1777\n"
"scratch itself: LocalScratch/job_J, made for your job, is); so must each\n"
"directory already under it. A missing DEST is made (mkdir -p) mode 0700:\n"
"chmod it yourself to share the copy. Below SRC and DEST nothing is\n"
"reached by name again after the plan: each directory is opened without\n"
"following symlinks and checked to be the one read or made before; a swap\n"
"stops the copy (\"changed since it was read\"). root stages under the\n"
"same rules (its DEST root's own; a SRC or DEST symlink followed only when\n"
"root owns it); the copies are the caller's.\n"
"  -j, --jobs N              files copied at once (default: the online\n"
"                            CPUs, at most 8; 1..256)\n"
"  --progress-interval SECS  without a terminal on stderr: a progress line\n"
"                            every SECS seconds (default 10; 0: after each\n"
"                            file); on a terminal, a progress bar\n"
"  -q, --quiet               no progress, no summary, no line for a\n"
"                            skipped type (errors only)\n"
"Progress counts the whole: files already there are done from the start\n"
"(\"100 MiB already there\"); its rate (MiB/s) and ETA are this run's.\n"
"The summary (files copied, skipped, bytes, seconds, MiB/s) is printed on\n"
"stdout, progress on stderr.\n"
"\n"
"Exit status (memcore(8) EXIT STATUS):\n"
"  0  everything was copied (or was there already)\n"
"  1  the copy failed (not enough free space on DEST, checked before\n"
"     anything is written; a write error; something below SRC or DEST\n"
"     changed since it was read; interrupted by a signal)\n"
"  2  usage or input error (a SRC or a file in it that cannot be read,\n"
"     DEST not a directory, DEST or a directory under it not the caller's\n"
"     or writable by others, something of another type in the way under\n"
"     DEST); nothing was written\n");
}

enum { OPT_INTERVAL = 256 };

static const struct option stage_options[] = {
	{ "jobs", required_argument, NULL, 'j' },
	{ "progress-interval", required_argument, NULL, OPT_INTERVAL },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct stage_opts {
	unsigned jobs;
	double interval;	/* seconds; 0: a line per file */
	bool quiet;
};

/* Watched by the progress thread and the per-file callback. */
struct monitor {
	struct mc_stage_progress *pr;
	uint64_t total_bytes;	/* still to copy */
	size_t total_files;
	uint64_t skip_bytes;	/* already there: done from the start */
	size_t skip_files;
	struct timespec t0;
	double interval;
	bool tty, quiet;
	/* Set before the lock is taken, read by the monitor each round:
	 * a monitor behind schedule never waits, so never lets go of the
	 * lock (an interval shorter than a line takes to print). */
	_Atomic bool done;
	pthread_mutex_t lock;	/* stderr lines, done */
	pthread_cond_t wake;
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static double since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) +
	       (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static int parse_opts(int argc, char **argv, struct stage_opts *o)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	char *end;
	int opt;

	o->jobs = cpus < 1 ? 1 : cpus > 8 ? 8 : (unsigned)cpus;
	o->interval = 10;
	o->quiet = false;
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":hqj:", stage_options, NULL))
	       != -1) {
		unsigned long j;

		switch (opt) {
		case 'h':
			stage_usage(stdout);
			return -1;
		case 'q':
			o->quiet = true;
			break;
		case 'j':
			errno = 0;
			j = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || j < 1 || j > 256)
				return mc_cli_usage_error("stage: --jobs=%s: "
					"expected a whole number 1..256",
					optarg);
			o->jobs = (unsigned)j;
			break;
		case OPT_INTERVAL:
			errno = 0;
			o->interval = strtod(optarg, &end);
			if (errno || end == optarg || *end ||
			    !isfinite(o->interval) || o->interval < 0 ||
			    o->interval > 86400)
				return mc_cli_usage_error("stage: "
					"--progress-interval=%s: expected "
					"seconds 0..86400", optarg);
			break;
		default:
			return mc_cli_option_error("stage", opt, argv);
		}
	}
	if (argc - optind < 2)
		return mc_cli_usage_error("stage: expected SRC [SRC...] DEST "
					  "(see memcore stage --help)");
	return 0;
}

/* MiB/s: the rate in the binary units of the sizes beside it. */
static double mib_per_s(uint64_t b, double s)
{
	return s > 0 ? (double)b / 1048576.0 / s : 0.0;
}

/*
 * The time left at the rate so far: "12.3 s", "4 min 05 s", "2 h 07 min",
 * or "--" before anything was copied (no rate yet). The rate is this
 * run's: bytes a resumed stage found already there took no time.
 */
static const char *fmt_eta(uint64_t left, uint64_t b, double s, char *buf,
			   size_t len)
{
	double t;

	if (!left) {
		snprintf(buf, len, "0 s");
		return buf;
	}
	if (!b || s <= 0) {
		snprintf(buf, len, "--");
		return buf;
	}
	t = (double)left * s / (double)b;
	if (t < 59.95)
		snprintf(buf, len, "%.1f s", t);
	else if (t < 3600)
		snprintf(buf, len, "%u min %02u s", (unsigned)(t + 0.5) / 60,
			 (unsigned)(t + 0.5) % 60);
	else if (t < 1e7)
		snprintf(buf, len, "%u h %02u min", (unsigned)(t / 3600),
			 (unsigned)(t / 60) % 60);
	else
		snprintf(buf, len, "over 100 days");
	return buf;
}

/*
 * One line of progress: "memcore: stage: 150 MiB of 200 MiB (75%), 40 of
 * 50 files, 310.2 MiB/s, 0.5 s, ETA 0.2 s" or, on a terminal, the bar
 * redrawn in place. The whole dataset is counted: what a resumed stage
 * found already there is done from the start, and said ("75%, 100 MiB
 * already there"). Caller holds m->lock.
 */
static void progress_line(struct monitor *m, bool final)
{
	uint64_t b = m->pr->bytes, done = m->skip_bytes + b,
		 whole = m->skip_bytes + m->total_bytes,
		 left = m->total_bytes > b ? m->total_bytes - b : 0;
	size_t f = m->skip_files + m->pr->files,
	       nf = m->skip_files + m->total_files;
	double s = since(&m->t0), pct = whole
		? 100.0 * (double)done / (double)whole : 100.0;
	char x[32], y[32], z[32], eta[32], there[64] = "", bar[21], line[200];
	unsigned cols;

	mc_fmt_bytes(done, x, sizeof(x));
	mc_fmt_bytes(whole, y, sizeof(y));
	fmt_eta(left, b, s, eta, sizeof(eta));
	if (m->skip_bytes)
		snprintf(there, sizeof(there), "%s already there",
			 mc_fmt_bytes(m->skip_bytes, z, sizeof(z)));
	if (!m->tty) {
		fprintf(stderr, "memcore: stage: %s of %s (%.0f%%%s%s), %zu of "
			"%zu files, %.1f MiB/s, %.1f s, ETA %s\n", x, y, pct,
			*there ? ", " : "", there, f, nf, mib_per_s(b, s), s,
			eta);
		return;
	}
	for (int i = 0; i < 20; i++)
		bar[i] = i < (int)(pct * 20 / 100) ? '#' : '.';
	bar[20] = '\0';
	/* What matters most first: a narrow terminal cuts the end. */
	snprintf(line, sizeof(line), "[%s] %3.0f%% %s/%s  %.1f MiB/s  ETA %s"
		 "  %zu/%zu files%s%s%s", bar, pct, x, y, mib_per_s(b, s), eta,
		 f, nf, *there ? "  (" : "", there, *there ? ")" : "");
	/* One row less than the terminal is wide: a line that wrapped is
	 * not redrawn in place by "\r" (the row above keeps the old one). */
	cols = mc_cli_term_width(STDERR_FILENO);
	if (cols > 1 && strlen(line) > cols - 1)
		line[cols - 1] = '\0';
	fprintf(stderr, "\r\033[K%s%s", line, final ? "\n" : "");
}

/* After each file (--progress-interval=0 without a terminal). */
static void line_per_file(void *arg)
{
	struct monitor *m = arg;

	pthread_mutex_lock(&m->lock);
	progress_line(m, false);
	pthread_mutex_unlock(&m->lock);
}

/* The bar 5 times a second, or a line every interval seconds, until
 * the copy says it is done. */
static void *monitor_thread(void *arg)
{
	struct monitor *m = arg;
	double step = m->tty ? 0.2 : m->interval, next = step;

	pthread_mutex_lock(&m->lock);
	while (!atomic_load(&m->done)) {
		double wait = next - since(&m->t0);
		struct timespec at;

		if (wait <= 0) {
			progress_line(m, false);
			/* Ticks missed while behind are dropped, not
			 * printed in a burst. */
			next += step;
			if (next <= since(&m->t0))
				next = since(&m->t0) + step;
			continue;
		}
		clock_gettime(CLOCK_REALTIME, &at);
		at.tv_sec += (time_t)wait;
		at.tv_nsec += (long)((wait - (double)(time_t)wait) * 1e9);
		if (at.tv_nsec >= 1000000000L) {
			at.tv_sec++;
			at.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&m->wake, &m->lock, &at);
	}
	pthread_mutex_unlock(&m->lock);
	return NULL;
}

/*
 * The bytes the plan still writes, each file rounded up to DEST's
 * fragment size, against statvfs's f_bavail (what an unprivileged writer
 * may use) of DEST or, when DEST is still to be made, of its nearest
 * existing parent (".", for a relative DEST). Returns 0, or MC_EXIT_REFUSED with the figures said.
 */
static int space_check(const struct mc_stage_plan *plan, const char *dest)
{
	char at[PATH_MAX], x[32], y[32], q[2 * PATH_MAX];
	uint64_t need = 0, avail, frag;
	struct statvfs sv;
	char *slash;

	snprintf(at, sizeof(at), "%s", dest);
	while (statvfs(at, &sv) != 0) {
		/* Unknown free space: the copy says ENOSPC if it comes. */
		if (errno != ENOENT || !strcmp(at, "."))
			return 0;
		/* A relative DEST's first component: the working
		 * directory's filesystem. */
		if (!(slash = strrchr(at, '/')))
			snprintf(at, sizeof(at), ".");
		else if (slash == at)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	frag = sv.f_frsize ? sv.f_frsize : 4096;
	for (size_t i = 0; i < plan->n; i++)
		if (plan->e[i].kind == MC_STAGE_FILE && !plan->e[i].skip)
			need += (plan->e[i].size + frag - 1) / frag * frag;
	avail = (uint64_t)sv.f_bavail * frag;
	if (need <= avail && (!sv.f_files ||
	    plan->copy_files + plan->new_dirs <= sv.f_favail))
		return 0;
	fprintf(stderr, "memcore: stage: not enough space on %s: need %s "
		"(%" PRIu64 " bytes in %zu files, in %" PRIu64 "-byte "
		"blocks), free %s (%" PRIu64 " bytes); inodes: %zu needed, %"
		PRIu64 " free; nothing was copied\n",
		mc_escape(dest, 0, q, sizeof(q)), mc_fmt_bytes(need, x,
		sizeof(x)), need, plan->copy_files, frag,
		mc_fmt_bytes(avail, y, sizeof(y)), avail,
		plan->copy_files + plan->new_dirs, (uint64_t)sv.f_favail);
	return MC_EXIT_REFUSED;
}

static void summary(const struct mc_stage_plan *plan,
		    const struct monitor *m, const char *dest)
{
	double s = since(&m->t0);
	uint64_t b = m->pr->bytes;
	char x[32], q[2 * PATH_MAX];

	printf("memcore: stage: %zu file%s copied, %zu skipped (already "
	       "there), %s (%" PRIu64 " bytes) in %.2f s, %.1f MiB/s, to %s\n",
	       (size_t)m->pr->files, m->pr->files == 1 ? "" : "s",
	       plan->skip_files, mc_fmt_bytes(b, x,
	       sizeof(x)), b, s, mib_per_s(b, s),
	       mc_escape(dest, 0, q, sizeof(q)));
}

/* The copy with its progress; signals stop it (a rerun resumes). */
static int copy_all(struct mc_stage_plan *plan,
		    const struct stage_opts *o, const char *dest)
{
	struct mc_stage_progress pr = { .stop = &stop_signal };
	struct monitor m = { .pr = &pr, .total_bytes = plan->copy_bytes,
			     .total_files = plan->copy_files,
			     .skip_bytes = plan->skip_bytes,
			     .skip_files = plan->skip_files,
			     .interval = o->interval, .quiet = o->quiet,
			     .tty = isatty(STDERR_FILENO) };
	struct sigaction sa = { .sa_handler = on_signal,
				.sa_flags = SA_RESTART };
	char err[2 * PATH_MAX + 128];
	pthread_t tid;
	bool watching;
	int rc;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	pthread_mutex_init(&m.lock, NULL);
	pthread_cond_init(&m.wake, NULL);
	clock_gettime(CLOCK_MONOTONIC, &m.t0);
	if (!o->quiet && !m.tty && o->interval == 0) {
		pr.on_file = line_per_file;
		pr.arg = &m;
	}
	watching = !o->quiet && (m.tty || o->interval > 0) &&
		   pthread_create(&tid, NULL, monitor_thread, &m) == 0;
	rc = mc_stage_run(plan, o->jobs, &pr, err, sizeof(err));
	atomic_store(&m.done, true);
	pthread_mutex_lock(&m.lock);
	pthread_cond_signal(&m.wake);
	pthread_mutex_unlock(&m.lock);
	if (watching)
		pthread_join(tid, NULL);
	if (!o->quiet && m.tty)
		progress_line(&m, true);
	if (!o->quiet && pr.stale_files) {
		char x[32];

		fprintf(stderr, "memcore: stage: removed %zu temporary files "
			"(%s) that an interrupted stage left\n",
			pr.stale_files, mc_fmt_bytes(pr.stale_bytes, x,
			sizeof(x)));
	}
	pthread_cond_destroy(&m.wake);
	pthread_mutex_destroy(&m.lock);
	if (rc < 0) {
		fprintf(stderr, "memcore: stage: %s; %zu files copied before, "
			"a rerun resumes\n", err, (size_t)pr.files);
		return MC_EXIT_REFUSED;
	}
	if (!o->quiet)
		summary(plan, &m, dest);
	return 0;
}

/* The plan of every SRC against DEST: everything checked before anything
 * is written. 0 or MC_EXIT_USAGE (said). */
static int plan_all(struct mc_stage_plan *plan, int argc, char **argv,
		    const struct stage_opts *o)
{
	char err[2 * PATH_MAX + 128];
	const char *dest = argv[argc - 1];

	/* DEST/NAME would be /NAME. */
	if (!*dest)
		return mc_cli_usage_error("stage: DEST is empty (name the "
			"directory the SRCs are copied into)");
	if (mc_stage_plan_init(plan, dest, err, sizeof(err)) < 0)
		return mc_cli_usage_error("stage: %s; nothing was copied",
					  err);
	for (int i = optind; i < argc - 1; i++)
		if (mc_stage_plan_src(plan, argv[i], o->quiet, err,
				      sizeof(err)) < 0)
			return mc_cli_usage_error("stage: %s; nothing was "
						  "copied", err);
	return 0;
}

/* DEST made when missing (mkdir -p, 0700): exit 1 when it cannot be,
 * 2 when what is there is not the caller's. */
static int make_dest(struct mc_stage_plan *plan)
{
	char err[2 * PATH_MAX + 128];
	int rc = mc_stage_make_dest(plan, err, sizeof(err));

	if (rc == -2)
		return mc_cli_usage_error("stage: %s", err);
	if (rc < 0)
		fprintf(stderr, "memcore: stage: %s\n", err);
	return rc < 0 ? MC_EXIT_REFUSED : 0;
}

int mc_cmd_stage(int argc, char **argv)
{
	struct stage_opts o;
	struct mc_stage_plan plan = { .dest_fd = -1 };
	const char *dest;
	int rc;

	rc = parse_opts(argc, argv, &o);
	if (rc)
		return rc < 0 ? 0 : rc;
	dest = argv[argc - 1];
	rc = plan_all(&plan, argc, argv, &o);
	if (!rc)
		rc = space_check(&plan, dest);
	if (!rc)
		rc = make_dest(&plan);
	if (!rc)
		rc = copy_all(&plan, &o, dest);
	mc_stage_plan_free(&plan);
	return rc;
}
