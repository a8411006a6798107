/*
 * mc_iobench.h - the read-pattern benchmark of `memcore iobench`
 * (cli/cmd_iobench.c): the ML Engineering Open Book's storage chapter
 * (mmap-io-bench.py) on a sample of the user's own dataset files.
 *
 * The method, as the book gives it: the sample's page cache is dropped
 * (posix_fadvise POSIX_FADV_DONTNEED on each file) before each of three
 * patterns, which read the whole sample once each:
 *   sequential  read() of whole files, in order, 1 MiB at a time;
 *   mmap rows   the files mapped, rows of row_bytes copied in file order;
 *   mmap shuf   the same rows copied in a shuffled order (Fisher-Yates,
 *               every row once, across all files): what a training job
 *               that shuffles a memory-mapped Arrow dataset does.
 * The mappings keep the kernel's default advice, as pyarrow's do. The
 * book's table (1 GiB of Arrow rows, 32,768 rows of 32 KiB in 3 shards):
 * local NVMe 0.14 s / 0.53 s (+279%) / 0.78 s (+457%); Lustre 1.87 s /
 * 3.11 s (+66%) / 94.2 s (+4,937%).
 *
 * The drop is advice: a filesystem that keeps its pages (tmpfs, a page
 * pinned by another mapping) keeps them. So the residency of the sample
 * (mincore) is read after each drop and kept with the pattern: a pattern
 * that started from cached pages says so rather than pass for a cold read.
 *
 * Bounds: the sample is at most max_bytes, the first bytes of the files
 * in walk order; memory of its own is one row buffer, the read buffer,
 * 4 bytes a row (MC_IOBENCH_ROWS_MAX rows) and the file list; what it
 * reads is page cache (file pages, reclaimable: a sample larger than the
 * job's memory limit is read, not killed). Each pattern stops at its time
 * bound and its time is then extrapolated from the rows it read (cut).
 *
 * A measured figure is kept in the user's cache (mc_iobench_known_*), one
 * small file per filesystem (statfs f_type and f_fsid), for the launch
 * note and `memcore check --dataset` (mc_dataset_note) of the user's next
 * jobs. It is read only when the user owns it and the directory holding
 * it and nobody else can write either: never across users.
 */
#ifndef MC_IOBENCH_H
#define MC_IOBENCH_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "mc_dataset.h"

#define MC_IOBENCH_SAMPLE_DEFAULT (1ULL << 30)	/* the book's 1 GiB */
#define MC_IOBENCH_ROW_DEFAULT 32768u		/* the book's 32 KiB rows */
#define MC_IOBENCH_ROW_MAX (16u << 20)
#define MC_IOBENCH_ROWS_MAX (4u << 20)		/* 16 MiB of row order */
#define MC_IOBENCH_FILES_MAX 4096
#define MC_IOBENCH_READ_BUF (1u << 20)
/* Staging pays when shuffled mmap reads at least this many times faster
 * on local scratch than where the dataset is. */
#define MC_IOBENCH_STAGE_GAIN 2.0
/* Shuffled over sequential at or above this (between the book's local
 * NVMe, 5.6x, and Lustre, 50x): pre-shuffle into epoch shards. */
#define MC_IOBENCH_PRESHUFFLE_RATIO 20.0

enum { MC_IOB_SEQ = 0, MC_IOB_ROWS, MC_IOB_SHUF, MC_IOB_PATTERNS };

/* "sequential read()", "mmap, rows in order", "mmap, shuffled rows". */
extern const char *const mc_iobench_pattern_name[MC_IOB_PATTERNS];

struct mc_iobench_file {
	char *path;
	uint64_t bytes;		/* taken from its start */
};

struct mc_iobench_sample {
	struct mc_iobench_file *f;
	size_t n;
	uint64_t bytes;		/* summed */
	bool more;		/* the dataset holds more than the sample */
};

/*
 * The sample: regular files under each path (a file or a directory,
 * walked in name order without following symlinks below it nor leaving
 * its filesystem), as the calling user, until max_bytes are taken (the
 * last file only its first part) or MC_IOBENCH_FILES_MAX files. Empty
 * files are left out. Returns 0, or -1 with err ("PATH: strerror", "no
 * file with data under PATH...") and nothing allocated.
 */
int mc_iobench_sample(char *const *paths, size_t npaths, uint64_t max_bytes,
		      struct mc_iobench_sample *s, char *err, size_t errlen);
void mc_iobench_sample_free(struct mc_iobench_sample *s);

/* What one run of the three patterns measured. */
struct mc_iobench_run {
	uint64_t bytes, rows, pages;
	double seconds[MC_IOB_PATTERNS];   /* extrapolated when cut */
	uint64_t rows_done[MC_IOB_PATTERNS];
	bool cut[MC_IOB_PATTERNS];
	/* pages of the sample resident after the drop, before the pattern */
	uint64_t resident[MC_IOB_PATTERNS];
	uint64_t anon_peak_bytes;	/* RssAnon seen after each pattern */
	uint64_t sum;			/* of the bytes read: keeps them read */
};

/* Progress: pattern, rows (sequential: MiB) done and in all. */
typedef void (*mc_iobench_progress_fn)(void *arg, int pattern,
				       uint64_t done, uint64_t total);

/*
 * Drop the sample's page cache and count its resident pages (mincore)
 * into *resident, its pages into *pages. Returns 0, or -1 with err.
 */
int mc_iobench_drop(const struct mc_iobench_sample *s, uint64_t *resident,
		    uint64_t *pages, char *err, size_t errlen);

/*
 * Run the three patterns on s (row_bytes per row, the shuffle seeded by
 * seed, each pattern cut at max_s seconds; stop set by a signal ends it
 * with -1). Returns 0 with r, or -1 with err.
 */
int mc_iobench_measure(const struct mc_iobench_sample *s, uint32_t row_bytes,
		       double max_s, uint64_t seed,
		       mc_iobench_progress_fn progress, void *arg,
		       volatile sig_atomic_t *stop, struct mc_iobench_run *r,
		       char *err, size_t errlen);

enum mc_iobench_verdict { MC_IOB_AS_IS = 0, MC_IOB_STAGE,
			  MC_IOB_PRESHUFFLE };

/* "as is", "stage", "pre-shuffle". */
const char *mc_iobench_verdict_word(enum mc_iobench_verdict v);

/*
 * The decision from here (where the dataset is) and scratch (the same
 * sample on local scratch; NULL: not measured): STAGE when shuffled mmap
 * is at least MC_IOBENCH_STAGE_GAIN times faster on scratch; else
 * PRESHUFFLE when shuffled over sequential here is at least
 * MC_IOBENCH_PRESHUFFLE_RATIO; else AS_IS. *ratio: shuffled over
 * sequential here; *gain: here's shuffled over scratch's (0: none).
 */
enum mc_iobench_verdict mc_iobench_decide(const struct mc_iobench_run *here,
					  const struct mc_iobench_run *scratch,
					  double *ratio, double *gain);

/* A figure kept for a filesystem. */
struct mc_iobench_known {
	uint32_t fs_magic;
	uint64_t fsid;
	int64_t when;			/* epoch seconds */
	uint32_t ratio_x100;		/* shuffled / sequential x 100 */
	uint32_t gain_x100;		/* over scratch x 100; 0 none */
	enum mc_iobench_verdict verdict;
};

/*
 * The user's cache directory: XDG_CACHE_HOME/memcore when set and
 * absolute, else HOME/.cache/memcore. Returns buf, or NULL when neither
 * names an absolute path.
 */
const char *mc_iobench_cache_dir(const char *xdg_cache_home,
				 const char *home, char *buf, size_t len);

/* The file of a filesystem's figure in dir: "iobench-MAGIC-FSID". */
void mc_iobench_known_name(uint32_t fs_magic, uint64_t fsid, char *buf,
			   size_t len);

/* One line, "memcore-iobench 1 fs=6969 fsid=HEX when=N ratio=N gain=N
 * verdict=N\n", and its strict parse (-1 with err). */
void mc_iobench_known_format(const struct mc_iobench_known *k, char *buf,
			     size_t len);
int mc_iobench_known_parse(const char *s, struct mc_iobench_known *k,
			   char *err, size_t errlen);

/*
 * Read the figure of (fs_magic, fsid) from dir as the calling user: the
 * directory and the file must be the caller's (uid), writable by no one
 * else, the file regular and not a symlink. Returns 1 with k, 0 when
 * there is none (or fsid is 0: the filesystem gives no id), -1 with err
 * for one that is there and not to be trusted or not memcore's.
 */
int mc_iobench_known_load(const char *dir, uint32_t fs_magic, uint64_t fsid,
			  uid_t uid, struct mc_iobench_known *k, char *err,
			  size_t errlen);

/*
 * The figures kept in the caller's cache (dir; NULL: none) for each path
 * of d on a network filesystem, into its io_* fields; what cannot be
 * trusted is left out (no figure: the book's).
 */
void mc_iobench_known_fill(struct mc_dataset *d, const char *dir, uid_t uid);

#endif
