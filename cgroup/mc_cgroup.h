/*
 * mc_cgroup.h - find a process's memory cgroup, and change a step's memory
 * cgroup without ever writing outside it.
 *
 * Finding: from /proc/<pid>/cgroup, never by building a path from job or
 * step ids (Slurm's layout differs across versions and between cgroup v1
 * and v2). v1: the line whose controller list has "memory", under the
 * mount of type "cgroup" with the "memory" super option; v2: the "0::"
 * line, under the "cgroup2" mount (kernel Documentation/admin-guide/
 * cgroup-v1/cgroups.rst and cgroup-v2.rst, "/proc/<pid>/cgroup"; proc(5)
 * for /proc/self/mountinfo). v1 wins when both are there (hybrid hosts
 * mount a v2 hierarchy without the memory controller).
 *
 * Writing: every write names a "scope" directory (the step's own cgroup)
 * and a path relative to it. The scope must be canonical (realpath of it
 * is itself: no symlink anywhere) and the relative path is walked one
 * component at a time with openat(O_NOFOLLOW): a symlink, "..", "." or an
 * empty component is refused, so no write can land outside the scope.
 * Files are opened without O_CREAT: a write never creates a file.
 *
 * libcgroup 2.0.2 serves for the mount lookup when /proc/self/mountinfo
 * has no answer (cgroup_get_subsys_mount_point). Its writers
 * (cgroup_set_value_*, cgroup_create_cgroup, cgroup_attach_task) build
 * paths from strings and follow symlinks, so they cannot keep the rule
 * above and are not used.
 *
 * Errors: functions return 0 or -1 with err set to "memcore"-free text
 * naming the path and the reason (callers add the prefix), and errno
 * preserved where it matters (EEXIST, EROFS, EACCES, ENOENT, EBUSY).
 */
#ifndef MC_CGROUP_H
#define MC_CGROUP_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "mc_cgops.h"

/*
 * A memory cgroup, located: the one handle the rest of memcore holds. The
 * hierarchy's table of operations (mc_cgops.h) is chosen once, where the
 * cgroup is found (mc_cgroup_find, mc_cgroup_at) and travels inside the
 * handle; callers ask it for files, operations and capabilities
 * (mc_cgroup_has), never for a version. Like Slurm's cgroup plugin
 * interface (cgroup_g_*), chosen once per node.
 */
struct mc_cgroup {
	const struct mc_cgroup_ops *ops;	/* mc_cgroup_v1 or _v2 */
	char mount[PATH_MAX];	/* the hierarchy's mount point; limits are
				 * looked for up to it ("": dir's own) */
	char dir[PATH_MAX];	/* the directory: mount + its path inside
				 * the hierarchy (mc_cgroup_rel) */
};

/* cg's path inside its hierarchy, derived from dir and mount ("/" for
 * the root; dir itself when mount is "" or "/"). Points into cg. */
const char *mc_cgroup_rel(const struct mc_cgroup *cg);

/*
 * Parse /proc/<pid>/cgroup text: the memory cgroup's path inside its
 * hierarchy. Sets *ops (mc_cgroup_v1: a v1 "N:...memory...:/path" line;
 * mc_cgroup_v2: the "0::/path" line, used when there is no v1 memory line)
 * and rel. Returns 0, or -1 with err set (no memory line, no v2 line,
 * malformed).
 */
int mc_cgroup_parse_proc(const char *text, const struct mc_cgroup_ops **ops,
			 char *rel, size_t rellen, char *err, size_t errlen);

/*
 * Parse /proc/self/mountinfo text: the mount point of ops's hierarchy
 * (ops->mount_is: the v1 memory hierarchy, or the cgroup2 one), with
 * octal escapes (\040) decoded, and that mount's root inside the
 * hierarchy (field 4; "/" except in containers). Returns 0, or -1 with
 * err set when there is no such mount.
 */
int mc_cgroup_parse_mountinfo(const char *text,
			      const struct mc_cgroup_ops *ops, char *mount,
			      size_t mountlen, char *root, size_t rootlen,
			      char *err, size_t errlen);

/*
 * The mount point of this host's hierarchy of ops (v1 memory, or cgroup2),
 * from /proc/self/mountinfo. Returns 0, or -1 with err set.
 */
int mc_cgroup_mount_of(const struct mc_cgroup_ops *ops, char *mount,
		       size_t len, char *err, size_t errlen);

/*
 * Locate the memory cgroup of pid (0: this process) from
 * <proc>/<pid>/cgroup and <proc>/self/mountinfo; proc NULL means "/proc"
 * (tests pass a fixture tree). A mount root other than "/" is stripped
 * from the path. Returns 0, or -1 with err set.
 */
int mc_cgroup_find(const char *proc, pid_t pid, struct mc_cgroup *cg,
		   char *err, size_t errlen);

/*
 * A memory cgroup named by its directory (memcore usage --cgroup DIR): the
 * table from its files (mc_cgroup_ops_at),
 * the mount point of that hierarchy when dir is under it, else "/" (a
 * copied tree: limits are looked for up to "/"). dir is used as given
 * (callers resolve symlinks first). Returns 0, or -1 with err set ("DIR:
 * not a memory cgroup ...", unreadable, too long).
 */
int mc_cgroup_at(const char *dir, struct mc_cgroup *cg, char *err,
		 size_t errlen);

/*
 * The table of the memory cgroup at dir, from its files: mc_cgroup_v1 when
 * its usage file memory.usage_in_bytes is there, mc_cgroup_v2 when
 * memory.current is; else NULL with err set (not a memory cgroup
 * directory, or unreadable).
 */
const struct mc_cgroup_ops *mc_cgroup_ops_at(const char *dir, char *err,
					     size_t errlen);

/* Does the comma-separated list s (length n) hold word? */
bool mc_cgroup_list_has(const char *s, size_t n, const char *word);

/*
 * The cgroup `name` (one component) inside parent, in the same hierarchy,
 * into child (which may not be parent). Nothing is made or read. Returns
 * 0, or -1 when name is empty or has a '/', or a path would be too long.
 */
int mc_cgroup_child(const struct mc_cgroup *parent, const char *name,
		    struct mc_cgroup *child);

/*
 * Move process pid into cg (its cgroup.procs, through the scope guard of
 * mc_cgroup_write). Returns 0, or -1 with err set and errno kept.
 */
int mc_cgroup_attach(const struct mc_cgroup *cg, pid_t pid, char *err,
		     size_t errlen);

/*
 * cgroup v1's (mc_cgv1.c; v2: mc_cgroup_v2_step_user), public for the unit
 * tests; callers use ops->slurm_step_dir. In a cgroup path such as
 * "/slurm_n1/uid_0/job_12/step_0/task_1", find the deepest
 * "job_<job_id>/step_<step>" pair naming this step and copy the path up to
 * and including step_<step> into out. step is Slurm's name for it: "0",
 * "batch", "extern". This recognizes Slurm's step cgroup in a path read
 * from /proc; it never builds one. Returns 0, or -1 when the path has no
 * such pair (Slurm does not manage this step's memory cgroup).
 */
int mc_cgroup_slurm_step(const char *rel, uint32_t job_id, const char *step,
			 char *out, size_t outlen);

/*
 * Open scope/rel for writing (rel may be "" for the scope itself, whose
 * files are then named by the last component of rel), refusing symlinks
 * and "..": see the file comment. flags are open(2) flags for the final
 * component (O_WRONLY, or O_RDONLY | O_DIRECTORY). Returns an fd, or -1
 * with err set and errno kept.
 */
int mc_cgroup_open_within(const char *scope, const char *rel, int flags,
			  char *err, size_t errlen);

/*
 * Write value (a string such as "268435456" or "max") to the file rel
 * under scope, e.g. rel "memory.limit_in_bytes" or
 * "memcore_12_0/cgroup.procs". Returns 0, or -1 with err set and errno
 * kept (EBUSY: v1 refuses a limit below the current use it cannot reclaim;
 * EINVAL: v1 memsw below memory).
 */
int mc_cgroup_write(const char *scope, const char *rel, const char *value,
		    char *err, size_t errlen);

/* mc_cgroup_write of a byte count. */
int mc_cgroup_write_u64(const char *scope, const char *rel, uint64_t value,
			char *err, size_t errlen);

/*
 * Create the child cgroup `name` (one component, no '/') in scope, mode
 * 0755, exclusively: an existing entry of that name is an error (errno
 * EEXIST), so a cgroup someone else made is never taken for memcore's own.
 * Returns 0, or -1 with err set and errno kept (EROFS: the cgroup tree is
 * read-only; EEXIST).
 */
int mc_cgroup_mkdir(const char *scope, const char *name, char *err,
		    size_t errlen);

/*
 * Remove the child cgroup `name` of scope (rmdir: the kernel refuses it,
 * EBUSY, while a process is in it; page cache still charged to it does not
 * stop it). A missing one is no error. Returns 0, or -1 with err set.
 */
int mc_cgroup_rmdir(const char *scope, const char *name, char *err,
		    size_t errlen);

/*
 * Is any process in the cgroup dir (of hierarchy ops) or below it? v2:
 * cgroup.events "populated"; v1: a pid in its cgroup.procs or any child
 * directory (ops->populated). Returns 1 (populated), 0 (empty), -1
 * (unreadable: treat as populated).
 */
int mc_cgroup_populated(const char *dir, const struct mc_cgroup_ops *ops);

/*
 * cgroup v2's (mc_cgv2.c), public for the unit tests; callers use
 * ops->slurm_step_dir. Slurm's cgroup/v2 layout, recognised from slurmstepd's own cgroup
 * (read from /proc, never built from ids): slurmstepd sits in
 * ".../<step>/slurm" and the step's tasks under ".../<step>/user", where
 * Slurm puts the step's memory limit (so that slurmstepd is not under it).
 * Slurm names the job level differently across versions ("job_12" on
 * 22.05-24.11, "s9Z5M8QCVENS00" on 26.05); only the fixed leaf names
 * "slurm" and "user" are looked at. When stepd_dir ends in "/slurm" and
 * its sibling "user" is a memory cgroup directory, copy that sibling's
 * path into user and return 0; else -1.
 */
int mc_cgroup_v2_step_user(const char *stepd_dir, char *user, size_t len);

/*
 * The parent directory of dir ("/a/b/c" -> "/a/b"). Returns 0, or -1 when
 * dir has no parent below "/" or out is too small.
 */
int mc_cgroup_parent(const char *dir, char *out, size_t len);

/*
 * v2: is `controller` (e.g. "memory") enabled for the children of dir
 * (a word of its cgroup.subtree_control)? Returns 1, 0, or -1 unreadable.
 */
int mc_cgroup_subtree_has(const char *dir, const char *controller);

#endif
