/*
 * mc_tmpfs.h - where a step's shared memory can live: the tmpfs (and
 * ramfs) mounts of the node, for the OOM explanation.
 *
 * Files in tmpfs are shared memory to the kernel: swap-backed pages on the
 * anon LRU, charged to the cgroup of the task that wrote them, never
 * reclaimed as page cache, and still charged after the writer is killed.
 * /dev/shm is the usual one, but sites also mount a tmpfs /tmp, a job
 * container's tmpfs, or a RAM disk for data sets: an explanation that only
 * says "/dev/shm" sends the user to the wrong place. The kernel does not
 * say which mount holds which cgroup's pages, so the explanation names
 * the job's own writable tmpfs that hold data at the time, largest first.
 *
 * The job's own (DESIGN: a job is told only what is its own): a tmpfs
 * whose mount root the job's user may write by its mode alone: owned by
 * that user with the owner's write bit, or writable by anyone (/dev/shm,
 * a tmpfs /tmp, mode 1777). Only there can the job have put files; another
 * user's tmpfs (/run/user/UID of another uid, a 0700 RAM disk of
 * another's) is left out silently, its path never shown and no advice to
 * shrink it. A tmpfs writable only through a group is left out too: the
 * rule reads the mount root's owner and mode, not the job's groups, which
 * slurmstepd would have to look up (NSS) at the moment of an OOM kill.
 * Pages are charged to the writer's cgroup wherever the file lies, so the
 * job's own shared memory is always under one of the mounts named.
 *
 * Source: the kernel's Documentation/filesystems/proc.rst
 * (/proc/<pid>/mountinfo: "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 -
 * ext3 /dev/root rw,errors=continue", mount point octal-escaped) and
 * Documentation/filesystems/tmpfs.rst.
 */
#ifndef MC_TMPFS_H
#define MC_TMPFS_H

#include <stddef.h>
#include <stdint.h>

#define MC_TMPFS_MAX 32
#define MC_TMPFS_PATH_MAX 256

struct mc_tmpfs_mount {
	char path[MC_TMPFS_PATH_MAX];	/* mount point, unescaped */
	uint64_t used_bytes;		/* in use (statvfs), 0 if unknown */
	uint32_t owner;			/* the mount root's uid (stat) */
	uint32_t mode;			/* its st_mode; 0 if unknown */
};

/*
 * Parse the text of a /proc/<pid>/mountinfo: the writable tmpfs and ramfs
 * mounts, each mount point once (the last mount on a path is the one
 * visible), leaving out the system's own (/sys, /proc, /run and
 * /run/lock; /run/user/UID stays) and read-only ones. Pure: no I/O.
 * Returns how many were written to out[0..max) (more are dropped);
 * used_bytes is 0.
 */
size_t mc_tmpfs_parse(const char *text, struct mc_tmpfs_mount *out,
		      size_t max);

/*
 * mc_tmpfs_parse() of the file at path (NULL: /proc/self/mountinfo), with
 * each mount's used bytes from statvfs(2) and its root's owner and mode
 * from stat(2), sorted by used bytes, largest first (then by path).
 * Returns the count, 0 when the file is unreadable.
 */
size_t mc_tmpfs_scan(const char *path, struct mc_tmpfs_mount *out,
		     size_t max);

/*
 * The mounts for a person to read: those holding data, largest first,
 * with their use ("/tmp 3 GiB, /dev/shm 12 MiB"); when none holds any,
 * every mount point ("/dev/shm, /tmp"); when there are none, "/dev/shm".
 * Cut to fit buflen. Returns buf.
 */
const char *mc_tmpfs_describe(const struct mc_tmpfs_mount *m, size_t n,
			      char *buf, size_t buflen);

/*
 * Keep of m[0..n) only the mounts of user uid (the rule above), in their
 * order, and return how many. Pure.
 */
size_t mc_tmpfs_own(struct mc_tmpfs_mount *m, size_t n, uint32_t uid);

/* mc_tmpfs_describe of mc_tmpfs_own(mc_tmpfs_scan(NULL, ...), uid): the
 * live node's tmpfs of the job's user uid. */
const char *mc_tmpfs_where(uint32_t uid, char *buf, size_t buflen);

#endif
