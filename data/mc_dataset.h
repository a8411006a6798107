/*
 * mc_dataset.h - where the job's dataset lives: the filesystem of each path
 * the job names (--dataset, MEMCORE_DATASET) or the Hugging Face libraries
 * use (HF_DATASETS_CACHE, else HF_HOME/datasets, when set), its size, and
 * what the policy says about a dataset on a network filesystem
 * (NetworkDataset=ignore|note|refuse, LocalScratch=).
 *
 * Why it matters (the ML Engineering Open Book, storage and CPU-memory
 * chapters; 1 GiB of Arrow rows, 32,768 x 32 KiB, page cache dropped):
 * mmap in shuffled order - ordinary training - took 0.78 s on local NVMe
 * and 94.2 s on Lustre, about 50 times the sequential read (1.87 s on
 * Lustre, 0.14 s on NVMe). A dataset on a network filesystem belongs on
 * node-local scratch before training.
 *
 * Where the paths are read: as the job's user only, in srun, sbatch and
 * salloc and in memcore check (the model of mc_jobfiles.h): the kernel
 * applies the user's permissions, a path only root may read is never read
 * by root. The walk is bounded in time and in entries; the figures travel
 * to slurmstepd in MEMCORE_DATASET_FACTS. slurmstepd only reads the
 * policy's LocalScratch (the administrator's path) with statvfs.
 *
 * mc_dataset_probe() does the I/O; the rest is pure.
 */
#ifndef MC_DATASET_H
#define MC_DATASET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/vfs.h>

#include "mc_config.h"

#define MC_DATASET_ENV "MEMCORE_DATASET_FACTS"
#define MC_DATASET_PATHS_MAX 8
#define MC_DATASET_PATH_MAX 1024
/* A path quoted in a line of the note, escaped and cut with "..." (200
 * bytes: the filesystem, size and count after it always show); in an
 * error message, MC_QUOTE_MAX (mc_util.h). */
#define MC_DATASET_NOTE_PATH 72
/* The walk's bounds: a tree larger than this is reported as "at least". */
#define MC_DATASET_WALK_ENTRIES 200000
#define MC_DATASET_WALK_MS 2000
/* How much longer than the walk's bound the probe waits for a filesystem
 * that does not answer at all. */
#define MC_DATASET_ANSWER_MS 1000

/* statfs f_type values (linux/magic.h and the filesystems' own sources). */
#define MC_FS_LUSTRE 0x0BD00BD0u
#define MC_FS_GPFS 0x47504653u
#define MC_FS_BEEGFS 0x19830326u
#define MC_FS_NFS 0x6969u
#define MC_FS_CEPH 0x00C36400u
#define MC_FS_CIFS 0xFF534D42u
#define MC_FS_SMB2 0xFE534D42u
#define MC_FS_SMB 0x517Bu

/* Where a path came from. */
enum mc_dataset_from { MC_DS_OPTION = 0, MC_DS_HF_DATASETS_CACHE,
		       MC_DS_HF_HOME };

/* The latest time a kept iobench figure may carry (epoch seconds, the end
 * of year 9999): any later is forged, and its date would not print. */
#define MC_IOBENCH_WHEN_MAX 253402300799LL

struct mc_dataset_path {
	char path[MC_DATASET_PATH_MAX];	/* as given (absolute after probe) */
	enum mc_dataset_from from;
	int err;			/* errno of the user's stat, 0 ok */
	uint32_t fs_magic;		/* statfs f_type */
	uint64_t bytes;			/* regular files' st_size, summed */
	uint64_t files;			/* regular files counted */
	bool partial;			/* walk stopped at a bound */
	uint64_t fsid;			/* statfs f_fsid (not carried) */
	/* A figure `memcore iobench` measured on this filesystem
	 * (mc_iobench.h), io_when 0: none, the book's figure is quoted. */
	int64_t io_when;		/* epoch seconds, at most
					 * MC_IOBENCH_WHEN_MAX */
	uint32_t io_ratio_x100;		/* shuffled / sequential x 100 */
	uint32_t io_gain_x100;		/* over local scratch x 100, 0 none */
	uint32_t io_verdict;		/* enum mc_iobench_verdict */
};

struct mc_dataset {
	size_t n;
	struct mc_dataset_path p[MC_DATASET_PATHS_MAX];
};

/* "Lustre", "GPFS", "BeeGFS", "NFS", "CephFS", "SMB/CIFS", or NULL for
 * a filesystem memcore does not count as a network one. */
const char *mc_fs_network_name(uint32_t magic);

/*
 * The paths to look at: the option's comma-separated list (NULL or "" for
 * none), then HF_DATASETS_CACHE when set, else HF_HOME/datasets when
 * HF_HOME is set (the datasets library's default layout). Empty entries
 * are refused. Returns 0, or -1 with err naming the entry.
 */
int mc_dataset_paths(const char *option, const char *hf_datasets_cache,
		     const char *hf_home, struct mc_dataset *d, char *err,
		     size_t errlen);

/*
 * Look at each path as the calling user (never call it as root on a
 * user's path): statfs for the filesystem, then a walk that does not
 * follow symbolic links nor leave the path's filesystem, at most
 * max_entries entries and max_ms milliseconds over all paths. A path that
 * cannot be read keeps its errno in err (EACCES: not readable by you);
 * that is no error of the call. With local false a path on a filesystem
 * that is not a network one (mc_fs_network_name NULL) is not walked:
 * nothing is said of it, and a Hugging Face cache under HF_HOME on local
 * disk can hold hundreds of thousands of files, which every srun would
 * otherwise walk for up to max_ms. The I/O runs in a thread of its own,
 * waited for max_ms + MC_DATASET_ANSWER_MS at most: a filesystem that does
 * not answer (statfs on a hard NFS mount whose server is gone waits for
 * ever, and srun with it) leaves the paths it had not answered for with
 * err ETIMEDOUT, a walk it stopped answering in partial, and the thread
 * blocked in it until it answers or the process exits. Always returns 0.
 */
int mc_dataset_probe(struct mc_dataset *d, uint64_t max_entries,
		     uint32_t max_ms, bool local);

/* mc_dataset_probe with another statfs (tests: one that never answers, as
 * a hard NFS mount whose server is gone). */
typedef int (*mc_dataset_statfs_fn)(const char *path, struct statfs *sf);
int mc_dataset_probe_with(struct mc_dataset *d, uint64_t max_entries,
			  uint32_t max_ms, bool local,
			  mc_dataset_statfs_fn fs);

/*
 * The id memcore keys a filesystem's measured figure by (mc_iobench.h):
 * statfs f_fsid, else (NFS gives none) a hash of the mount's type and
 * source from /proc/self/mountinfo ("nfs4 server:/export": the same on
 * every node that mounts it), found by path's st_dev. 0: unknown. May
 * wait on a filesystem that does not answer (stat): call it where the
 * probe's thread does.
 */
uint64_t mc_dataset_fsid(const char *path, const struct statfs *sf);

/* The figures as MEMCORE_DATASET_FACTS' value: one entry per path,
 * "fs=6969,bytes=N,files=N,partial=0,err=0,from=0,path=%2Fnfs..." joined
 * by ';', the path percent-encoded; a path with a measured figure has
 * "io=WHEN:RATIO:GAIN:VERDICT," before its path. Returns buf; "" when d->n is 0 or it
 * does not fit. */
const char *mc_dataset_format(const struct mc_dataset *d, char *buf,
			      size_t len);

/* Parse it back, strictly. The user can set the variable by hand: a
 * path's %-escapes may hold any byte but NUL, so every message that
 * quotes a path escapes it (mc_escape) and cuts it (MC_QUOTE_MAX,
 * MC_DATASET_NOTE_PATH) before its reason. Returns 0, or -1 with err =
 * "MEMCORE_DATASET_FACTS: entry N: WHAT: not a value memcore wrote (...:
 * unset it)", one line that names nothing of the value. */
int mc_dataset_parse(const char *s, struct mc_dataset *d, char *err,
		     size_t errlen);

/* The network part of d: bytes summed over the paths on a network
 * filesystem; 0 when none is. */
uint64_t mc_dataset_network_bytes(const struct mc_dataset *d);

/*
 * What the policy says: the lines of the launch explanation (each
 * "memcore: ..."), at most max lines of linelen, for the network paths
 * of d. scratch is the policy's LocalScratch ("" none), scratch_free its
 * free bytes (UINT64_MAX unknown), job_id names the staging directory
 * (scratch/job_J: "memcore stage PATH... scratch/job_J", which the job
 * epilog removes, mc_scratch.h; 0: "$SLURM_JOB_ID", memcore check). A
 * figure `memcore iobench` kept for the filesystem (io_when) is said as
 * measured, with its date; else the book's, said as the book's. *refuse is set when NetworkDataset=refuse and the
 * scratch can hold the network part. Returns the lines written (0: no
 * dataset on a network filesystem, or NetworkDataset=ignore).
 */
size_t mc_dataset_note(const struct mc_dataset *d, enum mc_netds policy,
		       const char *scratch, uint64_t scratch_free,
		       uint32_t job_id, char (*lines)[200], size_t max,
		       bool *refuse);

/*
 * The size of one copy of the job's --dataset in RAM for
 * --dataset-in-memory without SIZE: the files of the --dataset paths
 * (from MC_DS_OPTION; the Hugging Face caches hold every dataset the user
 * downloaded, not this one), as measured. The files' size on disk is what
 * an Arrow dataset takes in RAM; a compressed one (Parquet, JPEG) takes
 * more, which only the user can say (SIZE). Returns 0 with *bytes, or -1
 * with err saying why the size is unknown and to pass SIZE: no --dataset
 * path, a path that cannot be read, a walk stopped at its bounds, or
 * nothing measured (0 bytes: no file, or a path that was not walked).
 */
int mc_dataset_in_memory_bytes(const struct mc_dataset *d, uint64_t *bytes,
			       char *err, size_t errlen);

/*
 * The command that stages the paths to local scratch, as the note says
 * it: "memcore stage P1 P2 DEST", DEST = scratch/job_<job>
 * (scratch "" or NULL: LOCAL_SCRATCH), the paths and scratch quoted for
 * the shell where they need it (mc_shell_word), job as given (a number,
 * or "$SLURM_JOB_ID" for the shell to expand). The readable paths on a network
 * filesystem with network_only, else the --dataset paths. Returns buf;
 * "" when there is no such path or it does not fit
 * (MC_DATASET_STAGE_CMD_MAX always fits).
 */
#define MC_DATASET_STAGE_CMD_MAX \
	(16 + (MC_DATASET_PATHS_MAX + 1) * (4 * MC_DATASET_PATH_MAX + 48))
const char *mc_dataset_stage_cmd(const struct mc_dataset *d,
				 bool network_only, const char *scratch,
				 const char *job, char *buf, size_t len);

#endif
