/*
 * mc_stage.h - the copy engine of `memcore stage SRC... DEST` (cmd_stage.c):
 * a dataset staged from a network filesystem to node-local scratch.
 *
 * Two phases. The plan (mc_stage_plan_src, one thread) opens each SRC
 * (SRC itself, named by the user, is followed) and walks it through
 * directory descriptors, openat(..., O_NOFOLLOW) at every level, never a
 * path below SRC resolved by name; it lists its directories, regular files
 * and symlinks with the device and inode each had, the symlinks' targets,
 * and what is already at DEST; every other type is left out with a line
 * naming it. Each file already at the destination as a regular file with
 * the same size and mtime (seconds and nanoseconds) is marked skipped:
 * that makes a rerun resume. Nothing is written while planning. The copy
 * (mc_stage_run) then makes the directories (mode 0700 while it runs),
 * copies the files and symlinks from a shared list with N threads, and
 * sets the directories' modes and mtimes last.
 *
 * Neither side is trusted between the plan and the copy (DESIGN.md, trust
 * boundaries): every directory below SRC and below DEST is reached again
 * from the SRC or DEST descriptor held open since the plan, one component
 * at a time with O_NOFOLLOW, and its device and inode compared with what
 * the plan recorded (each copy thread keeps the last directory it reached
 * on each side open, so a directory's files cost one openat each). A
 * source file is opened the same way and checked too. Anything swapped
 * since (a symlink, another directory or file) is an error naming the
 * path: "PATH: changed since it was read (...); stage again". Only one
 * descriptor a side per thread is held, whatever the tree's size.
 *
 * Modes: the source's permission bits less set-user/group-ID and less
 * group and other write (MC_STAGE_MODE_BITS): a copy is never writable by
 * anyone but its owner, the caller. DEST and every directory already under
 * it must be the caller's and writable by no one else (mc_stage_plan_init,
 * the plan); the directories the stage makes are the caller's, 0700 until
 * the copy ends.
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

/* The permission bits a copy keeps: no set-user/group-ID (the copy is the
 * caller's, not the source owner's), no group or other write. */
#define MC_STAGE_MODE_BITS 01755

/* The parent of a SRC's entry: DEST on the destination side. */
#define MC_STAGE_NONE ((size_t)-1)

enum mc_stage_kind { MC_STAGE_DIR, MC_STAGE_FILE, MC_STAGE_LINK };

struct mc_stage_entry {
	char *name;		/* last component; a SRC's: NAME under DEST */
	char *target;		/* a symlink's target, read by the walk */
	size_t parent;		/* its directory (index), or MC_STAGE_NONE */
	size_t src;		/* the SRC it is under (index in srcs) */
	unsigned depth;		/* 0 for a SRC, 1 for its entries, ... */
	enum mc_stage_kind kind;
	mode_t mode;		/* source bits & MC_STAGE_MODE_BITS */
	uint64_t size;		/* bytes (files) */
	struct timespec mtime;	/* source mtime */
	dev_t dev;		/* the source as the walk read it */
	ino_t ino;
	dev_t ddev;		/* a directory at DEST, as found or made */
	ino_t dino;
	bool dthere;		/* a directory already at DEST (ddev/dino) */
	bool skip;		/* already at dst (same size, mtime; same
				 * link target; an existing directory) */
};

/* A SRC as named: its resolved path (messages) and its descriptor, held
 * from the plan to the end (a directory, or the file itself). */
struct mc_stage_src {
	char *path;
	int fd;
	size_t entry;
};

struct mc_stage_plan {
	struct mc_stage_entry *e;	/* parents before their children */
	size_t n, cap;
	struct mc_stage_src *srcs;
	size_t nsrcs;
	unsigned max_depth;
	uint64_t copy_bytes;	/* file bytes still to copy */
	size_t copy_files;	/* files and symlinks still to copy */
	size_t skip_files;	/* files and symlinks already there */
	uint64_t skip_bytes;
	size_t new_dirs;	/* directories still to make */
	size_t others;		/* left out: not a file, dir or symlink */
	char *dest;		/* DEST as named (messages) */
	int dest_fd;		/* DEST held open; -1 until it exists */
	dev_t dest_dev;		/* its identity (when dest_fd >= 0) */
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

/*
 * Reset plan to empty for DEST (a non-empty path) and check DEST when it
 * exists: a directory (opened and held; a symlink DEST is followed only
 * when the caller or root owns each symlink on its path), owned by the
 * effective user and writable by neither its group nor others (a sticky
 * 1777 directory such as LocalScratch itself is no DEST). DEST's resolved
 * path is kept whether or not it exists (so that a DEST inside a SRC is
 * refused, never copied into itself). Returns 0, or -1 with err naming
 * DEST and what to do ("PATH: others can write it (mode 1777); stage into
 * a directory of your own, ..."); mc_stage_plan_free in both cases.
 */
int mc_stage_plan_init(struct mc_stage_plan *plan, const char *dest,
		       char *err, size_t errlen);

/*
 * Add SRC (a file, directory or symlink to one) to plan, to go to
 * DEST/basename(SRC), and walk it. SRC is opened and held; root follows a
 * SRC symlink only when root owns each on its path. Returns 0, or -1 with
 * err = "PATH: strerror" for what cannot be read (a missing SRC, an
 * unreadable file or directory), "PATH: why" for a destination of another
 * type in the way or a directory under DEST that is not the caller's
 * alone, or "DEST ... is inside SRC ..." for a directory SRC that holds
 * DEST (or is it), symlinks resolved. Left-out types are printed to stderr
 * ("memcore: stage: skipped PATH: a FIFO ...") unless quiet.
 */
int mc_stage_plan_src(struct mc_stage_plan *plan, const char *src,
		      bool quiet, char *err, size_t errlen);

/*
 * mkdir -p DEST when it does not exist: each directory made mode 0700
 * under the one before it, held open (O_NOFOLLOW), and checked as an
 * existing DEST is; the deepest existing one is reached by its name (the
 * caller's word). Returns 0 (DEST held open), -1 with err "PATH:
 * strerror" when a directory cannot be made, or -2 with err naming the
 * path when what is there is not the caller's alone (one made by someone
 * else in the meantime).
 */
int mc_stage_make_dest(struct mc_stage_plan *plan, char *err, size_t errlen);

/*
 * Copy what plan lists into the DEST held open (mc_stage_make_dest first)
 * with `jobs` threads (at least 1). Returns 0, or -1 with err naming the
 * first failure ("PATH: strerror"; "PATH: changed since it was read (...);
 * stage again" for a swap on either side; "interrupted" after a signal
 * set *pr->stop); the other threads stop taking files then. Records the
 * identities of the directories it makes in plan.
 */
int mc_stage_run(struct mc_stage_plan *plan, unsigned jobs,
		 struct mc_stage_progress *pr, char *err, size_t errlen);

/* Free plan's lists and close the descriptors it holds. */
void mc_stage_plan_free(struct mc_stage_plan *plan);

#endif
