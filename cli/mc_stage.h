/*
 * mc_stage.h - the copy engine of `memcore stage SRC... DEST` (cmd_stage.c):
 * a dataset staged from a network filesystem to node-local scratch.
 *
 * Two phases. The plan (mc_stage_plan_src, one thread) walks each SRC
 * without following a symbolic link below it (lstat; SRC itself, named by
 * the user, is followed) and lists its directories, regular files and
 * symlinks with the destination path of each (DEST/basename(SRC)/...);
 * every other type is left out with a line naming it. Each file already at
 * the destination as a regular file with the same size and mtime (seconds
 * and nanoseconds) is marked skipped: that makes a rerun resume. Nothing
 * is written while planning. The copy (mc_stage_run) then makes the
 * directories, copies the files and symlinks from a shared list with N
 * threads, and sets the directories' modes and mtimes last.
 *
 * Each file is written to a temporary name in its own directory
 * (.memcore-stage.PID.N, made with O_EXCL) and renamed over the real name
 * only once its data, mode and mtime are in place: an interrupted stage
 * never leaves a half file under the real name. A killed one leaves its
 * temporary file; a rerun removes those of stages whose process is gone
 * (the PID in the name not alive on this node) from the directories it
 * finds already there, before it copies. A file whose size or
 * mtime changed while it was copied is not renamed either (an error
 * naming it): the copy is no state of the source. Data is copied with
 * copy_file_range(2), else read/write where the kernel or the filesystems
 * cannot (EXDEV, EINVAL, ENOSYS, EOPNOTSUPP, or no progress).
 */
#ifndef MC_STAGE_H
#define MC_STAGE_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

enum mc_stage_kind { MC_STAGE_DIR, MC_STAGE_FILE, MC_STAGE_LINK };

struct mc_stage_entry {
	char *src;		/* source path */
	char *dst;		/* destination path */
	enum mc_stage_kind kind;
	mode_t mode;		/* source permission bits (& 01777) */
	uint64_t size;		/* bytes (files) */
	struct timespec mtime;	/* source mtime */
	bool skip;		/* already at dst (same size, mtime; same
				 * link target; an existing directory) */
};

struct mc_stage_plan {
	struct mc_stage_entry *e;	/* parents before their children */
	size_t n, cap;
	uint64_t copy_bytes;	/* file bytes still to copy */
	size_t copy_files;	/* files and symlinks still to copy */
	size_t skip_files;	/* files and symlinks already there */
	uint64_t skip_bytes;
	size_t new_dirs;	/* directories still to make */
	size_t others;		/* left out: not a file, dir or symlink */
	bool dest_known;	/* DEST exists: its dev/ino below */
	dev_t dest_dev;
	ino_t dest_ino;
	char *dest_real;	/* DEST resolved, made or not (NULL: none) */
};

/* What the copy threads share with whoever watches them. */
struct mc_stage_progress {
	_Atomic uint64_t bytes;		/* data bytes written so far */
	_Atomic size_t files;		/* files and symlinks done */
	_Atomic bool failed;		/* a copy failed: no new file taken */
	size_t stale_files;		/* temporary files of a killed stage */
	uint64_t stale_bytes;		/* removed, and their bytes */
	volatile sig_atomic_t *stop;	/* set by a signal: stop now */
	/* Called after each file, from the thread that copied it. */
	void (*on_file)(void *arg);
	void *arg;
};

/* Reset plan to empty, DEST's identity taken when it exists and its
 * resolved path whether or not it does (so that a DEST inside a SRC is
 * refused, never copied into itself). */
void mc_stage_plan_init(struct mc_stage_plan *plan, const char *dest);

/*
 * Add SRC (a file, directory or symlink) to plan, to go to
 * DEST/basename(SRC), and walk it. Returns 0, or -1 with err = "PATH:
 * strerror" for what cannot be read (a missing SRC, an unreadable file or
 * directory), "PATH: why" for a destination of another type in the
 * way, or "DEST ... is inside SRC ..." for a directory SRC that holds
 * DEST (or is it), symlinks resolved. Left-out types are printed to stderr ("memcore: stage: skipped
 * PATH: a FIFO ...") unless quiet.
 */
int mc_stage_plan_src(struct mc_stage_plan *plan, const char *src,
		      const char *dest, bool quiet, char *err, size_t errlen);

/*
 * Copy what plan lists with `jobs` threads (at least 1). Returns 0, or -1
 * with err naming the first failure ("PATH: strerror"; "interrupted" after
 * a signal set *pr->stop); the other threads stop taking files then.
 */
int mc_stage_run(const struct mc_stage_plan *plan, unsigned jobs,
		 struct mc_stage_progress *pr, char *err, size_t errlen);

void mc_stage_plan_free(struct mc_stage_plan *plan);

#endif
