/*
 * memcore iobench - the ML Engineering Open Book's read-pattern benchmark
 * (storage chapter, mmap-io-bench.py) on a sample of the user's own
 * dataset, where it is and copied to local scratch, with the decision
 * it supports: stage it, read it as is, or pre-shuffle it. The method
 * is data/mc_iobench.c; here are the options, the scratch copy, the
 * table, and the figure kept for the user's next jobs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "mc_iobench.h"
#include "mc_jsonout.h"
#include "mc_outfile.h"
#include "mc_parse.h"
#include "mc_util.h"

static void iobench_usage(FILE *out)
{
	fprintf(out,
"usage: memcore iobench [options] PATH [PATH...]\n"
"\n"
"The ML Engineering Open Book's read-pattern benchmark on a sample of your\n"
"dataset (the files under each PATH, as you): the sample's page cache\n"
"dropped (POSIX_FADV_DONTNEED) before each of sequential read(), mmap in\n"
"row order and mmap in shuffled row order; then the same on a copy of the\n"
"sample in local scratch. Prints the book's table (seconds, slowdown\n"
"against sequential, MB/s) and one line: stage it, read it as is, or\n"
"pre-shuffle it. The figure is kept in your cache for the launch note of\n"
"your next jobs on this filesystem and memcore check --dataset.\n"
"  --sample SIZE        bytes of the dataset read (default 1G, the book's;\n"
"                       K, M, G, T suffixes)\n"
"  --row SIZE           the row that mmap reads copy (default 32K, the\n"
"                       book's)\n"
"  --scratch DIR        the local directory of the other column (default:\n"
"                       memcore.conf LocalScratch=); the copy is made in a\n"
"                       new directory of yours under it and removed\n"
"  --no-scratch         measure where the dataset is only\n"
"  --time-limit SECS    each pattern stops after SECS (default 120) and its\n"
"                       time is extrapolated from the rows it read\n"
"  --no-keep            keep no figure for your next jobs\n"
"  --config FILE        memcore.conf (for LocalScratch=)\n"
"  --json               the figures as JSON on stdout\n"
"Progress goes to stderr on a terminal only.\n"
"\n"
"Exit status: 0 measured; 1 a read or the copy failed, or interrupted;\n"
"2 usage or input error (a PATH that cannot be read).\n");
}

enum { OPT_SAMPLE = 256, OPT_ROW, OPT_SCRATCH, OPT_NO_SCRATCH, OPT_LIMIT,
       OPT_NO_KEEP, OPT_CONFIG, OPT_JSON };

static const struct option iobench_options[] = {
	{ "sample", required_argument, NULL, OPT_SAMPLE },
	{ "row", required_argument, NULL, OPT_ROW },
	{ "scratch", required_argument, NULL, OPT_SCRATCH },
	{ "no-scratch", no_argument, NULL, OPT_NO_SCRATCH },
	{ "time-limit", required_argument, NULL, OPT_LIMIT },
	{ "no-keep", no_argument, NULL, OPT_NO_KEEP },
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct iobench_opts {
	uint64_t sample;
	uint32_t row;
	const char *scratch;
	bool no_scratch, no_keep, json;
	double limit;
	const char *config;
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static int parse_opts(int argc, char **argv, struct iobench_opts *o)
{
	char err[MC_ERR_MAX], *end;
	uint64_t v;
	int opt;

	memset(o, 0, sizeof(*o));
	o->sample = MC_IOBENCH_SAMPLE_DEFAULT;
	o->row = MC_IOBENCH_ROW_DEFAULT;
	o->limit = 120;
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":h", iobench_options, NULL))
	       != -1) {
		switch (opt) {
		case 'h':
			iobench_usage(stdout);
			return 0;
		case OPT_SAMPLE:
		case OPT_ROW:
			if (mc_parse_size(optarg, 1, &v, err, sizeof(err)) < 0
			    || !v || (opt == OPT_ROW &&
				      v > MC_IOBENCH_ROW_MAX))
				return mc_cli_usage_error("iobench: --%s=%s: "
					"expected a size above 0%s (%s)",
					opt == OPT_ROW ? "row" : "sample",
					optarg, opt == OPT_ROW ?
					", at most 16M" : "", err[0] ? err :
					"0");
			if (opt == OPT_ROW)
				o->row = (uint32_t)v;
			else
				o->sample = v;
			break;
		case OPT_SCRATCH:
			o->scratch = optarg;
			break;
		case OPT_NO_SCRATCH:
			o->no_scratch = true;
			break;
		case OPT_LIMIT:
			errno = 0;
			o->limit = strtod(optarg, &end);
			if (errno || end == optarg || *end ||
			    !isfinite(o->limit) || o->limit <= 0 ||
			    o->limit > 86400)
				return mc_cli_usage_error("iobench: "
					"--time-limit=%s: expected seconds "
					"above 0, at most 86400", optarg);
			break;
		case OPT_NO_KEEP:
			o->no_keep = true;
			break;
		case OPT_CONFIG:
			o->config = optarg;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		default:
			return mc_cli_option_error("iobench", opt, argv);
		}
	}
	if (optind >= argc)
		return mc_cli_usage_error("iobench: expected PATH [PATH...] "
					  "(see memcore iobench --help)");
	return MC_CLI_ON;
}

/* Progress on a terminal: one line, rewritten. */
struct progress {
	bool tty;
	const char *column;
	int last_pct;
};

static void on_progress(void *arg, int pattern, uint64_t done,
			uint64_t total)
{
	struct progress *pr = arg;
	int pct = total ? (int)(done * 100 / total) : 100;

	if (!pr->tty || pct == pr->last_pct)
		return;
	pr->last_pct = pct;
	fprintf(stderr, "\rmemcore: iobench: %s: %-20s %3d%%", pr->column,
		mc_iobench_pattern_name[pattern], pct);
	fflush(stderr);
}

static void progress_end(struct progress *pr)
{
	if (pr->tty)
		fprintf(stderr, "\r\033[K");
}

/*
 * The sample copied into a new directory of the caller's under dir
 * (mkdtemp: mode 0700, a name no one else holds, so a shared 1777
 * scratch is fine), each file created O_EXCL there: nothing outside it
 * is written. Returns 0 with copy's paths and *made, or -1 with err
 * (what was made removed).
 */
static int scratch_copy(const struct mc_iobench_sample *s, const char *dir,
			char *made, size_t madelen,
			struct mc_iobench_sample *copy, char *err,
			size_t errlen)
{
	struct statvfs sv;
	struct stat st;
	char q[MC_QUOTE_MAX], a[32], b[32];
	unsigned char *buf;

	errno = 0;
	memset(copy, 0, sizeof(*copy));
	/* Another user must not be able to rename the directory made below
	 * and put a link in its place (the copy then lands where they
	 * choose, and the removal unlinks there): a directory others may
	 * write must be sticky, as /tmp and a LocalScratch are. */
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return mc_err(err, errlen, "%s: %s", mc_escape(dir, 0, q,
							      sizeof(q)),
			      errno ? strerror(errno) : "not a directory");
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
		return mc_err(err, errlen, "%s: others may write it and it is "
			      "not sticky (chmod +t, or give --scratch a "
			      "directory of yours)", mc_escape(dir, 0, q,
							      sizeof(q)));
	if (statvfs(dir, &sv) < 0)
		return mc_err(err, errlen, "%s: %s", mc_escape(dir, 0, q,
							      sizeof(q)),
			      strerror(errno));
	if ((uint64_t)sv.f_bavail * sv.f_frsize < s->bytes + (64u << 20))
		return mc_err(err, errlen, "%s: %s free, the sample needs %s "
			      "and 64 MiB to spare", mc_escape(dir, 0, q,
							       sizeof(q)),
			      mc_fmt_bytes((uint64_t)sv.f_bavail * sv.f_frsize,
					   a, sizeof(a)),
			      mc_fmt_bytes(s->bytes, b, sizeof(b)));
	if ((size_t)snprintf(made, madelen, "%s/.memcore-iobench.XXXXXX",
			     dir) >= madelen || !mkdtemp(made)) {
		made[0] = '\0';
		return mc_err(err, errlen, "%s: cannot make a directory "
			      "there: %s", mc_escape(dir, 0, q, sizeof(q)),
			      strerror(errno));
	}
	copy->f = calloc(s->n, sizeof(*copy->f));
	buf = malloc(MC_IOBENCH_READ_BUF);
	if (!copy->f || !buf) {
		free(buf);
		return mc_err(err, errlen, "out of memory");
	}
	for (size_t i = 0; i < s->n; i++) {
		char path[PATH_MAX];
		uint64_t left = s->f[i].bytes;
		int in, out, e;
		bool bad;

		snprintf(path, sizeof(path), "%s/f%zu", made, i);
		copy->f[i].path = strdup(path);
		copy->n = i + 1;
		errno = 0;
		in = open(s->f[i].path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
			   O_CLOEXEC, 0600);
		while (in >= 0 && out >= 0 && left && !stop_signal) {
			ssize_t n = read(in, buf, left < MC_IOBENCH_READ_BUF ?
					 (size_t)left : MC_IOBENCH_READ_BUF);

			if (n <= 0 || mc_write_all(out, buf, (size_t)n) < 0)
				break;
			left -= (uint64_t)n;
		}
		if (in >= 0)
			close(in);
		/* On disk before the clock starts: write-back of the copy
		 * would otherwise run under its first pattern. */
		bad = out < 0 || left || fdatasync(out) < 0;
		e = errno;
		if (out >= 0 && close(out) < 0 && !bad) {
			bad = true;
			e = errno;
		}
		if (bad) {
			free(buf);
			return mc_err(err, errlen, "copying %s to %s: %s",
				      mc_escape(s->f[i].path, 0, q, sizeof(q)),
				      path, stop_signal ? "interrupted" :
				      e ? strerror(e) : "short read");
		}
		copy->f[i].bytes = s->f[i].bytes;
		copy->bytes += s->f[i].bytes;
	}
	free(buf);
	return 0;
}

/* Remove what scratch_copy made: its files by name in its directory. */
static void scratch_remove(struct mc_iobench_sample *copy, const char *made)
{
	for (size_t i = 0; i < copy->n; i++)
		if (copy->f[i].path)
			unlink(copy->f[i].path);
	if (made[0] && rmdir(made) < 0)
		fprintf(stderr, "memcore: iobench: could not remove %s: %s\n",
			made, strerror(errno));
	mc_iobench_sample_free(copy);
}

static double mb_s(uint64_t bytes, double s)
{
	return s > 0 ? (double)bytes / 1e6 / s : 0;
}

static void print_column(const char *title, const struct mc_iobench_run *r)
{
	double seq = r->seconds[MC_IOB_SEQ];

	printf("%s\n", title);
	printf("  %-22s %10s %10s %10s\n", "pattern", "seconds", "slowdown",
	       "MB/s");
	for (int p = 0; p < MC_IOB_PATTERNS; p++) {
		char slow[32] = "-";

		if (p != MC_IOB_SEQ && seq > 0)
			snprintf(slow, sizeof(slow), "%+.0f%%",
				 (r->seconds[p] / seq - 1) * 100);
		printf("  %-22s %10.2f %10s %10.1f%s\n",
		       mc_iobench_pattern_name[p], r->seconds[p], slow,
		       mb_s(r->bytes, r->seconds[p]),
		       r->cut[p] ? "  (cut: extrapolated)" : "");
	}
}

/* The drop is advice: say where the kernel kept pages anyway. */
static void say_kept(const char *where, const struct mc_iobench_run *r)
{
	for (int p = 0; p < MC_IOB_PATTERNS; p++)
		if (r->resident[p] * 100 > r->pages)
			fprintf(stderr, "memcore: iobench: %s: the kernel kept "
				"%" PRIu64 " of %" PRIu64 " pages of the sample "
				"cached before %s (dropped, not released: "
				"tmpfs, or pages another process holds): that "
				"time is partly from memory\n", where,
				r->resident[p], r->pages,
				mc_iobench_pattern_name[p]);
}

static json_t *column_json(const char *dir, const struct mc_iobench_run *r)
{
	static const char *const key[] = { "sequential", "mmap_rows",
					   "mmap_shuffled" };
	json_t *o = json_object(), *sec = json_object(), *mbs = json_object();
	json_t *res = json_object(), *cut = json_object();

	json_object_set_new(o, "dir", json_string(dir));
	for (int p = 0; p < MC_IOB_PATTERNS; p++) {
		json_object_set_new(sec, key[p], json_real(r->seconds[p]));
		json_object_set_new(mbs, key[p], json_real(mb_s(r->bytes,
							r->seconds[p])));
		json_object_set_new(res, key[p], mc_json_u64(r->resident[p]));
		json_object_set_new(cut, key[p], json_boolean(r->cut[p]));
	}
	json_object_set_new(o, "seconds", sec);
	json_object_set_new(o, "mb_per_s", mbs);
	json_object_set_new(o, "resident_pages_before", res);
	json_object_set_new(o, "cut", cut);
	json_object_set_new(o, "pages", mc_json_u64(r->pages));
	json_object_set_new(o, "shuffled_over_sequential",
			    json_real(r->seconds[MC_IOB_SEQ] > 0 ?
				      r->seconds[MC_IOB_SHUF] /
				      r->seconds[MC_IOB_SEQ] : 0));
	json_object_set_new(o, "anon_peak_bytes",
			    mc_json_u64(r->anon_peak_bytes));
	return o;
}

/*
 * Keep the figure in the caller's cache: the directory made 0700 when
 * missing, and used only when it is the caller's alone; the file written
 * beside and renamed (mc_outfile), 0600. Returns 0 with path, or -1 with
 * why.
 */
static int keep_figure(const struct mc_iobench_known *k, char *path,
		       size_t len, char *why, size_t whylen)
{
	char dir[PATH_MAX], name[64], line[256], parent[PATH_MAX];
	struct mc_outfile o;
	struct stat st;
	char *slash;

	if (!mc_iobench_cache_dir(getenv("XDG_CACHE_HOME"), getenv("HOME"),
				  dir, sizeof(dir)))
		return mc_err(why, whylen, "neither XDG_CACHE_HOME nor HOME "
			      "names a directory");
	snprintf(parent, sizeof(parent), "%s", dir);
	slash = strrchr(parent, '/');
	if (slash && slash != parent) {
		*slash = '\0';
		if (mkdir(parent, 0700) < 0 && errno != EEXIST)
			return mc_err(why, whylen, "%s: %s", parent,
				      strerror(errno));
	}
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return mc_err(why, whylen, "%s: %s", dir, strerror(errno));
	if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) ||
	    st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)))
		return mc_err(why, whylen, "%s: not a directory of yours "
			      "alone", dir);
	mc_iobench_known_name(k->fs_magic, k->fsid, name, sizeof(name));
	snprintf(path, len, "%s/%s", dir, name);
	mc_iobench_known_format(k, line, sizeof(line));
	if (mc_outfile_open(&o, path, why, whylen) < 0)
		return -1;
	/* Read back only when nobody else can write it. */
	(void)fchmod(fileno(o.f), 0600);
	fputs(line, o.f);
	return mc_outfile_commit(&o, !ferror(o.f), why, whylen);
}

static const char *fs_words(uint32_t magic, char *buf, size_t len)
{
	const char *n = mc_fs_network_name(magic);

	if (n)
		snprintf(buf, len, "%s", n);
	else
		snprintf(buf, len, "local, f_type 0x%" PRIx32, magic);
	return buf;
}

int mc_cmd_iobench(int argc, char **argv)
{
	struct iobench_opts o;
	static struct mc_config cfg;
	static struct mc_policy pol;
	struct mc_iobench_sample s, copy = { 0 };
	struct mc_iobench_run here, scr;
	struct mc_iobench_known k = { 0 };
	struct progress pr = { .tty = isatty(2), .last_pct = -1 };
	struct sigaction sa = { .sa_handler = on_signal };
	enum mc_iobench_verdict v;
	char err[MC_ERR_MAX], made[PATH_MAX] = "", kept[PATH_MAX] = "";
	char fsw[64], a[32], reason[1024], scratch_err[MC_ERR_MAX] = "";
	char keep_err[MC_ERR_MAX] = "", q[MC_QUOTE_MAX];
	const char *scratch;
	bool have_scratch = false;
	struct statfs sf;
	double ratio, gain;
	int rc;

	rc = parse_opts(argc, argv, &o);
	if (rc != MC_CLI_ON)
		return rc;
	{
		struct mc_cli_common c = { .config = o.config };

		if (mc_cli_policy(&c, &cfg, &pol) < 0)
			return MC_EXIT_USAGE;
	}
	scratch = o.no_scratch ? NULL : o.scratch ? o.scratch :
		  pol.local_scratch[0] ? pol.local_scratch : NULL;
	if (statfs(argv[optind], &sf) < 0) {
		fprintf(stderr, "memcore: iobench: %s: %s\n",
			mc_escape(argv[optind], 0, q, sizeof(q)),
			strerror(errno));
		return MC_EXIT_USAGE;
	}
	k.fs_magic = (uint32_t)sf.f_type;
	k.fsid = mc_dataset_fsid(argv[optind], &sf);
	if (mc_iobench_sample(argv + optind, (size_t)(argc - optind),
			      o.sample, &s, err, sizeof(err)) < 0) {
		fprintf(stderr, "memcore: iobench: %s\n", err);
		return MC_EXIT_USAGE;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	pr.column = "here";
	rc = mc_iobench_measure(&s, o.row, o.limit, 0, on_progress, &pr,
				&stop_signal, &here, err, sizeof(err));
	progress_end(&pr);
	if (rc < 0) {
		fprintf(stderr, "memcore: iobench: %s\n", err);
		mc_iobench_sample_free(&s);
		return MC_EXIT_REFUSED;
	}
	if (scratch) {
		if (scratch_copy(&s, scratch, made, sizeof(made), &copy,
				 scratch_err, sizeof(scratch_err)) == 0) {
			pr.column = "scratch";
			pr.last_pct = -1;
			have_scratch = mc_iobench_measure(&copy, o.row, o.limit,
				0, on_progress, &pr, &stop_signal, &scr,
				scratch_err, sizeof(scratch_err)) == 0;
			progress_end(&pr);
		}
		scratch_remove(&copy, made);
		if (stop_signal) {
			fprintf(stderr, "memcore: iobench: interrupted (what "
				"it wrote is removed)\n");
			mc_iobench_sample_free(&s);
			return MC_EXIT_REFUSED;
		}
	} else {
		snprintf(scratch_err, sizeof(scratch_err), "no local scratch "
			 "(LocalScratch= in memcore.conf, or --scratch DIR)");
	}
	v = mc_iobench_decide(&here, have_scratch ? &scr : NULL, &ratio,
			      &gain);
	{
		char w[4 * PATH_MAX + 3], paths[2048] = "";
		size_t used = 0;

		for (int i = optind; i < argc; i++)
			mc_appendf(paths, sizeof(paths), &used, "%s ",
				   mc_shell_word(argv[i], w, sizeof(w)));
		if (v == MC_IOB_STAGE)
			snprintf(reason, sizeof(reason), "shuffled mmap is "
				 "%.1fx slower here than sequential and %.1fx "
				 "slower than on local scratch: stage it "
				 "(memcore stage %s%s/job_$SLURM_JOB_ID)",
				 ratio, gain, paths, mc_shell_word(scratch, w,
								  sizeof(w)));
		else if (v == MC_IOB_PRESHUFFLE)
			snprintf(reason, sizeof(reason), "shuffled mmap is "
				 "%.1fx slower here than sequential%s: "
				 "pre-shuffle it into epoch shards and read "
				 "them in order", ratio, have_scratch ?
				 ", and local scratch does no better" :
				 " (local scratch not measured)");
		else
			snprintf(reason, sizeof(reason), "shuffled mmap is "
				 "%.1fx sequential here%s: read it as is",
				 ratio, have_scratch ? (gain >= 1 ?
				 ", close to local scratch" :
				 ", no slower than local scratch") : "");
	}
	k.when = (int64_t)time(NULL);
	k.ratio_x100 = (uint32_t)(ratio * 100 + 0.5 < 4e9 ? ratio * 100 + 0.5 : 4e9);
	k.gain_x100 = (uint32_t)(gain * 100 + 0.5 < 4e9 ? gain * 100 + 0.5 : 4e9);
	k.verdict = v;
	if (!o.no_keep && k.fsid &&
	    keep_figure(&k, kept, sizeof(kept), keep_err,
			sizeof(keep_err)) < 0)
		kept[0] = '\0';
	else if (!o.no_keep && !k.fsid)
		snprintf(keep_err, sizeof(keep_err), "the filesystem gives "
			 "no id (statfs f_fsid 0, no mount found)");
	if (o.json) {
		json_t *j = json_object(), *pa = json_array();

		for (int i = optind; i < argc; i++)
			json_array_append_new(pa, json_string(argv[i]));
		json_object_set_new(j, "paths", pa);
		json_object_set_new(j, "filesystem", json_string(
			fs_words(k.fs_magic, fsw, sizeof(fsw))));
		json_object_set_new(j, "fs_magic", mc_json_u64(k.fs_magic));
		json_object_set_new(j, "sample_bytes", mc_json_u64(s.bytes));
		json_object_set_new(j, "sample_files", mc_json_u64(s.n));
		json_object_set_new(j, "row_bytes", mc_json_u64(o.row));
		json_object_set_new(j, "rows", mc_json_u64(here.rows));
		json_object_set_new(j, "here", column_json(argv[optind],
							   &here));
		json_object_set_new(j, "scratch", have_scratch ?
				    column_json(scratch, &scr) : json_null());
		json_object_set_new(j, "scratch_why_not", have_scratch ?
				    json_null() : json_string(scratch_err));
		json_object_set_new(j, "shuffled_over_sequential",
				    json_real(ratio));
		json_object_set_new(j, "gain_from_scratch", json_real(gain));
		json_object_set_new(j, "verdict", json_string(
			mc_iobench_verdict_word(v)));
		json_object_set_new(j, "reason", json_string(reason));
		json_object_set_new(j, "kept", kept[0] ? json_string(kept)
				    : json_null());
		mc_cli_json_print(j);
	} else {
		char title[PATH_MAX + 64];

		printf("memcore: iobench: a sample of %s in %zu files%s, "
		       "rows of %" PRIu32 " bytes (%" PRIu64 " rows)\n",
		       mc_fmt_bytes(s.bytes, a, sizeof(a)), s.n,
		       s.more ? " (the dataset holds more)" : "", o.row,
		       here.rows);
		snprintf(title, sizeof(title), "%s (%s):",
			 mc_escape(argv[optind], 0, q, sizeof(q)),
			 fs_words(k.fs_magic, fsw, sizeof(fsw)));
		print_column(title, &here);
		if (have_scratch) {
			snprintf(title, sizeof(title), "local scratch %s (a "
				 "copy of the sample, removed):",
				 mc_escape(scratch, 0, q, sizeof(q)));
			print_column(title, &scr);
		} else {
			printf("local scratch: not measured: %s\n",
			       scratch_err);
		}
		printf("memcore: iobench: %s\n", reason);
		if (kept[0])
			printf("memcore: iobench: kept for your next jobs on "
			       "this filesystem: %s\n", kept);
	}
	say_kept("here", &here);
	if (have_scratch)
		say_kept("local scratch", &scr);
	if (!o.no_keep && keep_err[0])
		fprintf(stderr, "memcore: iobench: the figure is not kept: "
			"%s\n", keep_err);
	mc_iobench_sample_free(&s);
	return 0;
}
