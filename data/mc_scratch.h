/*
 * mc_scratch.h - the job's staging directory under LocalScratch=
 * (PATH/job_J, where the dataset note tells the user to `memcore stage`
 * the dataset, mc_dataset.h): made for the job by the job prolog and
 * taken away by the job epilog (root, slurmd's children: spank/mc_prolog.c).
 *
 * LocalScratch is often a shared 1777 directory: any user can make any
 * name in it, and job ids are sequential. So job_J belongs to the job:
 * the prolog moves away whatever stands at job_J (a squatter's directory,
 * file or symlink: never adopted, never followed) and makes job_J itself,
 * the job's user's, mode 0700. Everything goes through descriptors held
 * open from LocalScratch (openat, mkdirat, renameat2 with O_NOFOLLOW or
 * RENAME_NOREPLACE): no path under it is resolved again.
 *
 * Nothing a user controls decides how long the epilog runs (Slurm kills a
 * slow epilog and drains the node): the epilog only renames job_J into
 * LocalScratch/.memcore-removing (root's, 0700, on the same filesystem:
 * out of the user's reach at once), and a detached process (double fork,
 * setsid, out of Slurm's wait) empties that directory afterwards, one
 * sweeper at a time (flock), never following a symlink, never crossing a
 * mount (every directory's mount id, statx STATX_MNT_ID, against the
 * one of .memcore-removing: a bind mount of the same filesystem has the
 * same st_dev), depth bounded (MC_SCRATCH_DEPTH_MAX). What an earlier
 * sweeper left (a crash, a reboot) is swept by the next prolog or epilog.
 */
#ifndef MC_SCRATCH_H
#define MC_SCRATCH_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#define MC_SCRATCH_DEPTH_MAX 128
/* Root's directory in LocalScratch that retired trees wait in. */
#define MC_SCRATCH_TRASH ".memcore-removing"

/* LocalScratch opened for the prolog or the epilog (mc_scratch_open). */
struct mc_scratch {
	int sfd;		/* LocalScratch itself */
	int tfd;		/* LocalScratch/.memcore-removing */
	char path[PATH_MAX];	/* LocalScratch as configured: messages */
};

/*
 * Open LocalScratch (path: the policy's, its load-time rule checked,
 * mc_dir_shared_root) and its .memcore-removing into s. LocalScratch must
 * be a directory of the calling user's (root in the prolog) writable by
 * no one else, or sticky (mc_st_shared_dir_ok). .memcore-removing is
 * used when it is that user's directory of mode 0700; anything else of
 * that name (a user's squat in a 1777 scratch) is moved away into a fresh
 * one made under a unique name and renamed into place, never followed nor
 * adopted. Returns 0, or -1 with err ("/scratch: No such file or
 * directory", "/scratch: not a directory of root's writable by root alone
 * or sticky (uid 1001, mode 0777)") and s closed.
 */
int mc_scratch_open(struct mc_scratch *s, const char *path, char *err,
		    size_t errlen);

/* Close what mc_scratch_open opened (safe twice). */
void mc_scratch_close(struct mc_scratch *s);

/*
 * The prolog: make job_<job_id> for the job's user (uid, gid), mode 0700,
 * after moving anything of that name into .memcore-removing. Returns 0
 * made, 1 made after moving a squatter away (note: "/scratch/job_7 was
 * there already (a directory of uid 1001, mode 0777): moved away, not
 * used"), or -1 not made (note says why; job_J is then absent or
 * root's, and the user's stage into it fails cleanly).
 */
int mc_scratch_make(struct mc_scratch *s, uint32_t job_id, uid_t uid,
		    gid_t gid, char *note, size_t notelen);

/*
 * The epilog: rename job_<job_id>, whatever it is (a symlink is moved,
 * never followed), into .memcore-removing under a unique name. Returns 1
 * moved, 0 there was none, -1 with err (e.g. a mount point: "Device or
 * resource busy").
 */
int mc_scratch_retire(struct mc_scratch *s, uint32_t job_id, char *err,
		      size_t errlen);

/* Whether .memcore-removing holds anything to sweep. */
bool mc_scratch_pending(const struct mc_scratch *s);

/*
 * Where the sweep's lines go: problem true for what was left and why,
 * false for what was removed. Each line starts "memcore: ".
 */
typedef void (*mc_scratch_say_fn)(bool problem, const char *line);

/*
 * Empty .memcore-removing (the open directory tfd of a LocalScratch
 * called scratch in messages) now, in this process: every entry removed
 * with what is below it, one line per entry said ("memcore: job 7:
 * removed /scratch/job_7 (900001 entries, 41.20 s, out of Slurm's wait)";
 * what was left: "memcore: job 7: /scratch/job_7: 3 entries left: entry
 * m: on another mount: left"). Returns the entries removed.
 */
long mc_scratch_sweep(int tfd, const char *scratch, mc_scratch_say_fn say);

/*
 * mc_scratch_sweep in a detached process: forked twice, in a session of
 * its own (out of Slurm's wait and of a kill of the epilog's process
 * group), at nice 10, holding an exclusive flock on .memcore-removing
 * (waiting for a sweeper already running: the last one sweeps what was
 * added meanwhile). Returns 0 once the intermediate child is reaped (at
 * once), -1 with errno when fork fails.
 */
int mc_scratch_sweep_detached(const struct mc_scratch *s,
			      mc_scratch_say_fn say);

/*
 * Whether a directory (dir, from statx with STATX_MNT_ID) is on the mount
 * of top: only then is it entered. Unknown mount ids (a kernel before
 * 5.8) are never the same: the directory is left.
 */
struct statx;
bool mc_scratch_same_mount(const struct statx *top, const struct statx *dir);

#endif
