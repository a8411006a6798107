/*
 * mc_cgops.h - what differs between the cgroup v1 memory hierarchy and
 * cgroup v2, as one table of operations that each version implements in a
 * file of its own (mc_cgv1.c, mc_cgv2.c). The rest of memcore holds a
 * cgroup handle whose ops point at one of the two tables, chosen once where
 * the cgroup is found (mc_cgroup_find, mc_cgroup_at), and asks the table
 * for a file name, an operation or a capability (mc_cgroup_has): nothing
 * outside mc_cgv1.c and mc_cgv2.c compares a version number.
 *
 * The model is Slurm's cgroup interface (src/interfaces/cgroup.h): its
 * cgroup/v1 and cgroup/v2 plugins fill one ops struct, and callers ask
 * cgroup_g_has_feature(CG_MEMCG_SWAP, ...) rather than which plugin is
 * loaded.
 *
 * Sources of each entry: the kernel's Documentation/admin-guide/
 * cgroup-v1/memory.rst and cgroup-v2.rst (file names, memory.stat keys,
 * "no internal processes", memory+swap on v1 against swap alone on v2),
 * Documentation/accounting/psi.rst (memory.pressure, v2 only).
 */
#ifndef MC_CGOPS_H
#define MC_CGOPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mc_cgroup;

/* Capabilities a caller may ask of a hierarchy (mc_cgroup_has). */
enum mc_cg_feature {
	/* memory.pressure per cgroup (PSI): v2 only. */
	MC_CG_HAS_PSI = 1u << 0,
	/* The swap limit file limits memory+swap together (v1
	 * memory.memsw.limit_in_bytes), not swap alone (v2 memory.swap.max):
	 * "no swap" is then the memory limit, not 0. */
	MC_CG_SWAP_IS_MEMSW = 1u << 1,
	/* Processes live only in leaves ("no internal processes", v2): a
	 * cgroup of memcore's own goes beside a process's cgroup, and its
	 * parent must list "memory" in cgroup.subtree_control. */
	MC_CG_LEAF_PROCS = 1u << 2,
};

/*
 * memory.stat's keys for the split (mc_memstat_parse), by slot: anon,
 * shmem, active_file, inactive_file, the hierarchical limit. total[i] is
 * the key taken first (v1's hierarchical total_*, v2's plain key), local[i]
 * the one taken while total[i] has not been seen (v1's own-cgroup key);
 * NULL: none.
 */
#define MC_CG_STAT_KEYS 5
struct mc_cg_stat_keys {
	const char *total[MC_CG_STAT_KEYS];
	const char *local[MC_CG_STAT_KEYS];
	/* The refault counter of page cache (workingset_refault_file, pages):
	 * v1's hierarchical total first when it has one, then the plain key
	 * (mc_cgread_parse_refault). */
	const char *refault_total, *refault;
};

struct mc_cgroup_ops {
	/* 1 or 2: printed (memcore usage) and kept in the step's record
	 * ("cv"), never compared to choose a behaviour. */
	int version;
	unsigned features;		/* enum mc_cg_feature bits */
	const char *mount_name;		/* for messages: "cgroup v1 memory" */
	/* Files of a memory cgroup. */
	const char *usage_file;		/* memory.usage_in_bytes / .current */
	const char *peak_file;		/* memory.max_usage_in_bytes / .peak */
	const char *limit_file;		/* hard limit */
	const char *soft_file;		/* soft limit (v1) / high mark (v2) */
	const char *swap_file;		/* memsw (v1) / swap.max (v2) */
	const char *oom_file;		/* the file with the oom_kill line */
	const char *cpu_file;		/* cpu.stat usage_usec; NULL: none */
	const struct mc_cg_stat_keys *stat;
	/*
	 * Is a mountinfo entry of file system type fstype (length fl) with
	 * super options opts (length ol) this hierarchy's mount?
	 */
	bool (*mount_is)(const char *fstype, size_t fl, const char *opts,
			 size_t ol);
	/* The mount point when mountinfo has none; NULL: no other source.
	 * 0, or -1. */
	int (*mount_fallback)(char *mount, size_t len);
	/*
	 * OOM kills in the cgroup open at dfd (named dir in messages) and
	 * below it, into *count. 0, or -1 with err set.
	 */
	int (*oom_kills)(int dfd, const char *dir, uint64_t *count, char *err,
			 size_t errlen);
	/* The counts of the limit being hit at the step's end, from the
	 * cgroup open at dfd: high (v2 only, left 0 on v1) and max. */
	void (*limit_events)(int dfd, uint64_t *high, uint64_t *max);
	/* Is a process in the cgroup open at dfd or below? 1, 0, or -1. */
	int (*populated)(int dfd);
	/*
	 * The cgroup in which Slurm's task/cgroup holds step job.step (token:
	 * mc_stepcg_token), seen from a memory cgroup cg of that step (its
	 * slurmstepd's, or a task's when from_task): its directory into dir.
	 * Found from the path and the files there, never built from ids.
	 * Returns 0, or -1 when Slurm does not hold this step's memory there.
	 */
	int (*slurm_step_dir)(const struct mc_cgroup *cg, uint32_t job,
			      const char *token, bool from_task, char *dir,
			      size_t len);
};

/* The two tables (mc_cgv1.c, mc_cgv2.c). */
extern const struct mc_cgroup_ops mc_cgroup_v1;
extern const struct mc_cgroup_ops mc_cgroup_v2;

/*
 * The table of a version number kept in a step's record (memcore report
 * reads records written before and after this table): 1 is v1, anything
 * else v2, as the record's readers have always taken it (a record without
 * "cv" reads as v2's peak file and stall time).
 */
const struct mc_cgroup_ops *mc_cgroup_ops_of(uint32_t version);

/* Does cg's hierarchy have feature f? */
bool mc_cgroup_has(const struct mc_cgroup *cg, enum mc_cg_feature f);

/* Does the table have feature f (for a record's table, mc_cgroup_ops_of)? */
bool mc_cgroup_ops_has(const struct mc_cgroup_ops *ops,
		       enum mc_cg_feature f);

#endif
