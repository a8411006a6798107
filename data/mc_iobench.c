/*
 * mc_iobench.c - the book's read-pattern benchmark on a sample of the
 * user's files, and the figure kept for the user's next jobs
 * (mc_iobench.h).
 */
#define _GNU_SOURCE
#include "mc_iobench.h"

#include <errno.h>
#include <fcntl.h>
#include <fts.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mc_parse.h"
#include "mc_util.h"

const char *const mc_iobench_pattern_name[MC_IOB_PATTERNS] = {
	"sequential read()", "mmap, rows in order", "mmap, shuffled rows",
};

static int by_name(const FTSENT **a, const FTSENT **b)
{
	return strcmp((*a)->fts_name, (*b)->fts_name);
}

void mc_iobench_sample_free(struct mc_iobench_sample *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->f[i].path);
	free(s->f);
	memset(s, 0, sizeof(*s));
}

static int sample_add(struct mc_iobench_sample *s, const char *path,
		      uint64_t size, uint64_t max_bytes)
{
	uint64_t take = size < max_bytes - s->bytes ? size
						    : max_bytes - s->bytes;
	struct mc_iobench_file *f;

	if (!s->n) {
		s->f = calloc(MC_IOBENCH_FILES_MAX, sizeof(*s->f));
		if (!s->f)
			return -1;
	}
	f = &s->f[s->n];
	f->path = strdup(path);
	if (!f->path)
		return -1;
	f->bytes = take;
	s->n++;
	s->bytes += take;
	if (take < size)
		s->more = true;
	return 0;
}

int mc_iobench_sample(char *const *paths, size_t npaths, uint64_t max_bytes,
		      struct mc_iobench_sample *s, char *err, size_t errlen)
{
	char q[MC_QUOTE_MAX];

	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < npaths; i++) {
		char *argv[2] = { paths[i], NULL };
		FTS *fts;
		FTSENT *e;

		if (access(paths[i], R_OK) < 0) {
			mc_err(err, errlen, "%s: %s",
			       mc_escape(paths[i], 0, q, sizeof(q)),
			       strerror(errno));
			goto fail;
		}
		fts = fts_open(argv, FTS_PHYSICAL | FTS_XDEV | FTS_NOCHDIR |
			       FTS_COMFOLLOW, by_name);
		if (!fts) {
			mc_err(err, errlen, "%s: %s",
			       mc_escape(paths[i], 0, q, sizeof(q)),
			       strerror(errno));
			goto fail;
		}
		while ((e = fts_read(fts))) {
			if (e->fts_info == FTS_DNR || e->fts_info == FTS_ERR) {
				if (e->fts_level == 0) {
					mc_err(err, errlen, "%s: %s",
					       mc_escape(paths[i], 0, q,
							 sizeof(q)),
					       strerror(e->fts_errno));
					fts_close(fts);
					goto fail;
				}
				continue;
			}
			if (e->fts_info != FTS_F || e->fts_statp->st_size <= 0)
				continue;
			if (s->bytes >= max_bytes ||
			    s->n >= MC_IOBENCH_FILES_MAX) {
				s->more = true;
				break;
			}
			/* Only what the user can read: a file of the
			 * dataset they may not read is no part of it. */
			if (access(e->fts_accpath, R_OK) < 0)
				continue;
			if (sample_add(s, e->fts_path,
				       (uint64_t)e->fts_statp->st_size,
				       max_bytes) < 0) {
				fts_close(fts);
				mc_err(err, errlen, "out of memory");
				goto fail;
			}
		}
		fts_close(fts);
	}
	if (!s->n) {
		mc_err(err, errlen, "no file with data the caller can read "
		       "under %s%s", mc_escape(paths[0], 0, q, sizeof(q)),
		       npaths > 1 ? " and the other paths" : "");
		goto fail;
	}
	return 0;
fail:
	mc_iobench_sample_free(s);
	return -1;
}

static double since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) +
	       (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static int open_file(const struct mc_iobench_file *f, char *err,
		     size_t errlen)
{
	char q[MC_QUOTE_MAX];
	int fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NOCTTY |
		      O_NONBLOCK);

	if (fd < 0)
		mc_err(err, errlen, "%s: %s", mc_escape(f->path, 0, q,
						       sizeof(q)),
		       strerror(errno));
	return fd;
}

int mc_iobench_drop(const struct mc_iobench_sample *s, uint64_t *resident,
		    uint64_t *pages, char *err, size_t errlen)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	/* mincore's vector for 64 MiB at a time: 16 KiB, whatever the
	 * sample's size. */
	size_t chunk = (size_t)64 << 20;
	unsigned char *vec = malloc(chunk / pg);

	*resident = *pages = 0;
	if (!vec)
		return mc_err(err, errlen, "out of memory");
	for (size_t i = 0; i < s->n; i++) {
		const struct mc_iobench_file *f = &s->f[i];
		int fd = open_file(f, err, errlen);

		if (fd < 0) {
			free(vec);
			return -1;
		}
		/* Clean pages only leave the cache: the sample is only
		 * read, but a copy just written must be on disk first. */
		(void)fdatasync(fd);
		(void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		for (uint64_t off = 0; off < f->bytes; off += chunk) {
			size_t len = f->bytes - off < chunk
				     ? (size_t)(f->bytes - off) : chunk;
			size_t np = (len + pg - 1) / pg;
			void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd,
				       (off_t)off);

			if (m == MAP_FAILED || mincore(m, len, vec) < 0) {
				mc_err(err, errlen, "mincore: %s",
				       strerror(errno));
				if (m != MAP_FAILED)
					munmap(m, len);
				close(fd);
				free(vec);
				return -1;
			}
			for (size_t k = 0; k < np; k++)
				*resident += vec[k] & 1;
			*pages += np;
			munmap(m, len);
		}
		close(fd);
	}
	free(vec);
	return 0;
}

/* RssAnon of this process: its own memory, not the page cache it maps. */
static uint64_t anon_bytes(void)
{
	char buf[4096], *p;
	ssize_t n;
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = mc_read_fd(fd, buf, sizeof(buf));
	close(fd);
	if (n <= 0)
		return 0;
	p = strstr(buf, "\nRssAnon:");
	return p ? strtoull(p + 9, NULL, 10) * 1024 : 0;
}

/* xorshift64: the same order for the same seed, no libc state. */
static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

struct maps {
	unsigned char **base;
	uint64_t *first_row;	/* of each file; [n] = all rows */
	size_t n;
	uint32_t row;
};

static void maps_free(struct maps *m, const struct mc_iobench_sample *s)
{
	for (size_t i = 0; m->base && i < m->n; i++)
		if (m->base[i])
			munmap(m->base[i], (size_t)s->f[i].bytes);
	free(m->base);
	free(m->first_row);
}

static int maps_open(struct maps *m, const struct mc_iobench_sample *s,
		     uint32_t row, char *err, size_t errlen)
{
	m->n = s->n;
	m->row = row;
	m->base = calloc(s->n, sizeof(*m->base));
	m->first_row = calloc(s->n + 1, sizeof(*m->first_row));
	if (!m->base || !m->first_row)
		return mc_err(err, errlen, "out of memory");
	for (size_t i = 0; i < s->n; i++) {
		int fd = open_file(&s->f[i], err, errlen);
		void *p;

		if (fd < 0)
			return -1;
		p = mmap(NULL, (size_t)s->f[i].bytes, PROT_READ, MAP_SHARED,
			 fd, 0);
		close(fd);
		if (p == MAP_FAILED)
			return mc_err(err, errlen, "mmap: %s", strerror(errno));
		m->base[i] = p;
		m->first_row[i + 1] = m->first_row[i] +
				      (s->f[i].bytes + row - 1) / row;
	}
	return 0;
}

/* Copy row r (global index) to buf; returns its first byte. */
static unsigned char copy_row(const struct maps *m,
			      const struct mc_iobench_sample *s, uint64_t r,
			      unsigned char *buf)
{
	size_t lo = 0, hi = m->n;
	uint64_t off, len;

	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (m->first_row[mid] <= r)
			lo = mid;
		else
			hi = mid;
	}
	off = (r - m->first_row[lo]) * m->row;
	len = s->f[lo].bytes - off < m->row ? s->f[lo].bytes - off : m->row;
	memcpy(buf, m->base[lo] + off, (size_t)len);
	return buf[0];
}

static int run_seq(const struct mc_iobench_sample *s, double max_s,
		   mc_iobench_progress_fn progress, void *arg,
		   volatile sig_atomic_t *stop, struct mc_iobench_run *r,
		   unsigned char *buf, char *err, size_t errlen)
{
	struct timespec t0;
	uint64_t done = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (size_t i = 0; i < s->n && !r->cut[MC_IOB_SEQ]; i++) {
		int fd = open_file(&s->f[i], err, errlen);
		uint64_t left = s->f[i].bytes;

		if (fd < 0)
			return -1;
		while (left) {
			ssize_t n = read(fd, buf, left < MC_IOBENCH_READ_BUF ?
					 (size_t)left : MC_IOBENCH_READ_BUF);

			if (n < 0 && errno == EINTR && !(stop && *stop))
				continue;
			if (n <= 0) {
				mc_err(err, errlen, "read: %s", n ? strerror(errno)
				       : "the file shrank while read");
				close(fd);
				return -1;
			}
			r->sum += buf[0];
			left -= (uint64_t)n;
			done += (uint64_t)n;
			if (stop && *stop) {
				close(fd);
				return mc_err(err, errlen, "interrupted");
			}
			if (since(&t0) > max_s) {
				r->cut[MC_IOB_SEQ] = true;
				break;
			}
			if (progress)
				progress(arg, MC_IOB_SEQ, done >> 20,
					 s->bytes >> 20);
		}
		close(fd);
	}
	r->seconds[MC_IOB_SEQ] = since(&t0);
	r->rows_done[MC_IOB_SEQ] = (done + MC_IOBENCH_ROW_DEFAULT - 1) /
				   MC_IOBENCH_ROW_DEFAULT;
	if (r->cut[MC_IOB_SEQ] && done)
		r->seconds[MC_IOB_SEQ] *= (double)s->bytes / (double)done;
	return 0;
}

static int run_rows(const struct mc_iobench_sample *s, const struct maps *m,
		    const uint32_t *order, int pattern, double max_s,
		    mc_iobench_progress_fn progress, void *arg,
		    volatile sig_atomic_t *stop, struct mc_iobench_run *r,
		    unsigned char *buf, char *err, size_t errlen)
{
	struct timespec t0;
	uint64_t rows = m->first_row[m->n], i;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < rows; i++) {
		r->sum += copy_row(m, s, order ? order[i] : i, buf);
		if ((i & 15) == 15) {
			if (stop && *stop)
				return mc_err(err, errlen, "interrupted");
			if (since(&t0) > max_s) {
				r->cut[pattern] = true;
				i++;
				break;
			}
			if (progress)
				progress(arg, pattern, i + 1, rows);
		}
	}
	r->seconds[pattern] = since(&t0);
	r->rows_done[pattern] = i;
	if (r->cut[pattern] && i)
		r->seconds[pattern] *= (double)rows / (double)i;
	return 0;
}

int mc_iobench_measure(const struct mc_iobench_sample *s, uint32_t row_bytes,
		       double max_s, uint64_t seed,
		       mc_iobench_progress_fn progress, void *arg,
		       volatile sig_atomic_t *stop, struct mc_iobench_run *r,
		       char *err, size_t errlen)
{
	struct maps m = { 0 };
	unsigned char *buf = NULL;
	uint32_t *order = NULL;
	uint64_t rows, st = seed ? seed : 0x9e3779b97f4a7c15ULL, anon;
	int rc = -1;

	memset(r, 0, sizeof(*r));
	r->bytes = s->bytes;
	if (!row_bytes || row_bytes > MC_IOBENCH_ROW_MAX)
		return mc_err(err, errlen, "a row of %" PRIu32 " bytes: "
			      "expected 1..%u", row_bytes, MC_IOBENCH_ROW_MAX);
	buf = malloc(row_bytes > MC_IOBENCH_READ_BUF ? row_bytes
						       : MC_IOBENCH_READ_BUF);
	if (!buf) {
		mc_err(err, errlen, "out of memory");
		goto out;
	}
	rows = 0;
	for (size_t i = 0; i < s->n; i++)
		rows += (s->f[i].bytes + row_bytes - 1) / row_bytes;
	r->rows = rows;
	if (rows > MC_IOBENCH_ROWS_MAX) {
		mc_err(err, errlen, "%" PRIu64 " rows of %" PRIu32 " bytes: "
		       "more than %u; a larger row or a smaller sample",
		       rows, row_bytes, MC_IOBENCH_ROWS_MAX);
		goto out;
	}
	order = malloc((size_t)rows * sizeof(*order));
	if (!order) {
		mc_err(err, errlen, "out of memory");
		goto out;
	}
	for (uint64_t i = 0; i < rows; i++)
		order[i] = (uint32_t)i;
	/* Fisher-Yates: every row once. */
	for (uint64_t i = rows - 1; i > 0; i--) {
		uint64_t j = next_rand(&st) % (i + 1);
		uint32_t t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	for (int p = 0; p < MC_IOB_PATTERNS; p++) {
		if (mc_iobench_drop(s, &r->resident[p], &r->pages, err,
				    errlen) < 0)
			goto out;
		/* Mapped afresh for each pattern: the kernel drops no page
		 * a mapping still holds. */
		if (p != MC_IOB_SEQ &&
		    maps_open(&m, s, row_bytes, err, errlen) < 0)
			goto out;
		if (p == MC_IOB_SEQ ? run_seq(s, max_s, progress, arg, stop,
					       r, buf, err, errlen)
		    : run_rows(s, &m, p == MC_IOB_SHUF ? order : NULL, p,
			       max_s, progress, arg, stop, r, buf, err,
			       errlen))
			goto out;
		anon = anon_bytes();
		if (anon > r->anon_peak_bytes)
			r->anon_peak_bytes = anon;
		maps_free(&m, s);
		memset(&m, 0, sizeof(m));
		anon = anon_bytes();
		if (anon > r->anon_peak_bytes)
			r->anon_peak_bytes = anon;
	}
	/* Leave the page cache as it was found: cold. */
	{
		uint64_t a, b;

		(void)mc_iobench_drop(s, &a, &b, NULL, 0);
	}
	rc = 0;
out:
	maps_free(&m, s);
	free(order);
	free(buf);
	return rc;
}

const char *mc_iobench_verdict_word(enum mc_iobench_verdict v)
{
	return v == MC_IOB_STAGE ? "stage" : v == MC_IOB_PRESHUFFLE
					     ? "pre-shuffle" : "as is";
}

enum mc_iobench_verdict mc_iobench_decide(const struct mc_iobench_run *here,
					  const struct mc_iobench_run *scratch,
					  double *ratio, double *gain)
{
	double seq = here->seconds[MC_IOB_SEQ];
	double shuf = here->seconds[MC_IOB_SHUF];

	*ratio = seq > 0 ? shuf / seq : 0;
	*gain = 0;
	if (scratch && scratch->seconds[MC_IOB_SHUF] > 0)
		*gain = shuf / scratch->seconds[MC_IOB_SHUF];
	if (*gain >= MC_IOBENCH_STAGE_GAIN)
		return MC_IOB_STAGE;
	if (*ratio >= MC_IOBENCH_PRESHUFFLE_RATIO)
		return MC_IOB_PRESHUFFLE;
	return MC_IOB_AS_IS;
}

const char *mc_iobench_cache_dir(const char *xdg_cache_home,
				 const char *home, char *buf, size_t len)
{
	int n;

	if (xdg_cache_home && xdg_cache_home[0] == '/')
		n = snprintf(buf, len, "%s/memcore", xdg_cache_home);
	else if (home && home[0] == '/')
		n = snprintf(buf, len, "%s/.cache/memcore", home);
	else
		return NULL;
	return n > 0 && (size_t)n < len ? buf : NULL;
}

void mc_iobench_known_name(uint32_t fs_magic, uint64_t fsid, char *buf,
			   size_t len)
{
	snprintf(buf, len, "iobench-%08" PRIx32 "-%016" PRIx64, fs_magic,
		 fsid);
}

void mc_iobench_known_format(const struct mc_iobench_known *k, char *buf,
			     size_t len)
{
	snprintf(buf, len, "memcore-iobench 1 fs=%" PRIx32 " fsid=%" PRIx64
		 " when=%" PRId64 " ratio=%" PRIu32 " gain=%" PRIu32
		 " verdict=%d\n", k->fs_magic, k->fsid, k->when,
		 k->ratio_x100, k->gain_x100, (int)k->verdict);
}

int mc_iobench_known_parse(const char *s, struct mc_iobench_known *k,
			   char *err, size_t errlen)
{
	unsigned long long fs, fsid, ratio, gain, verdict;
	long long when;
	int used = -1;

	memset(k, 0, sizeof(*k));
	if (sscanf(s, "memcore-iobench 1 fs=%llx fsid=%llx when=%lld "
		   "ratio=%llu gain=%llu verdict=%llu\n%n", &fs, &fsid, &when,
		   &ratio, &gain, &verdict, &used) != 6 || used < 0 ||
	    s[used] || fs > UINT32_MAX || when <= 0 ||
	    when > MC_IOBENCH_WHEN_MAX || ratio > UINT32_MAX ||
	    gain > UINT32_MAX || verdict > MC_IOB_PRESHUFFLE)
		return mc_err(err, errlen, "not a figure memcore iobench "
			      "wrote");
	k->fs_magic = (uint32_t)fs;
	k->fsid = fsid;
	k->when = when;
	k->ratio_x100 = (uint32_t)ratio;
	k->gain_x100 = (uint32_t)gain;
	k->verdict = (enum mc_iobench_verdict)verdict;
	return 0;
}

/* Only the caller's, writable by nobody else. */
static bool owned_alone(const struct stat *st, uid_t uid)
{
	return st->st_uid == uid && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

int mc_iobench_known_load(const char *dir, uint32_t fs_magic, uint64_t fsid,
			  uid_t uid, struct mc_iobench_known *k, char *err,
			  size_t errlen)
{
	char name[64], buf[256];
	struct stat st;
	ssize_t n;
	int dfd, fd;

	if (!fsid || !dir)
		return 0;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (dfd < 0)
		return errno == ENOENT ? 0 : mc_err(err, errlen, "%s: %s",
						    dir, strerror(errno));
	if (fstat(dfd, &st) < 0 || !owned_alone(&st, uid)) {
		close(dfd);
		return mc_err(err, errlen, "%s: not yours alone (owner %u, "
			      "mode %04o): its figures are not read", dir,
			      (unsigned)st.st_uid,
			      (unsigned)(st.st_mode & 07777));
	}
	mc_iobench_known_name(fs_magic, fsid, name, sizeof(name));
	fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW |
		    O_NONBLOCK | O_NOCTTY);
	close(dfd);
	if (fd < 0)
		return errno == ENOENT ? 0 : mc_err(err, errlen, "%s/%s: %s",
						    dir, name,
						    strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    !owned_alone(&st, uid)) {
		close(fd);
		return mc_err(err, errlen, "%s/%s: not a file of yours alone "
			      "(owner %u, mode %04o): not read", dir, name,
			      (unsigned)st.st_uid,
			      (unsigned)(st.st_mode & 07777));
	}
	n = mc_read_fd(fd, buf, sizeof(buf));
	close(fd);
	if (n <= 0 || (size_t)n >= sizeof(buf))
		return mc_err(err, errlen, "%s/%s: not a figure memcore "
			      "iobench wrote", dir, name);
	buf[n] = '\0';
	if (mc_iobench_known_parse(buf, k, NULL, 0) < 0 ||
	    k->fs_magic != fs_magic || k->fsid != fsid)
		return mc_err(err, errlen, "%s/%s: not a figure memcore "
			      "iobench wrote", dir, name);
	return 1;
}

void mc_iobench_known_fill(struct mc_dataset *d, const char *dir, uid_t uid)
{
	for (size_t i = 0; i < d->n; i++) {
		struct mc_dataset_path *p = &d->p[i];
		struct mc_iobench_known k;

		p->io_when = 0;
		if (!dir || p->err || !mc_fs_network_name(p->fs_magic) ||
		    mc_iobench_known_load(dir, p->fs_magic, p->fsid, uid, &k,
					  NULL, 0) != 1)
			continue;
		p->io_when = k.when;
		p->io_ratio_x100 = k.ratio_x100;
		p->io_gain_x100 = k.gain_x100;
		p->io_verdict = (uint32_t)k.verdict;
	}
}
