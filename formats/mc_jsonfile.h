/*
 * mc_jsonfile.h - read a job's own configuration file (ds_config.json,
 * config.json) for sizing, safely: only ever called in the user's own
 * processes (srun, sbatch, salloc, the memcore command), never in slurmd
 * or slurmstepd, so the kernel checks the job's user's permissions and a
 * file only root may read is never read (see memcore(8) "FILES OF THE
 * JOB"). Bounded: a regular file of at most MC_JSONFILE_MAX bytes, opened
 * with O_NOFOLLOW-free semantics of the user's own open(2) (a symlink the
 * user can follow is the user's file), O_NONBLOCK so a FIFO cannot hang
 * the submission.
 */
#ifndef MC_JSONFILE_H
#define MC_JSONFILE_H

#include <stdbool.h>
#include <stddef.h>

/* ds_config.json and config.json are a few KiB; 1 MiB is far above. */
#define MC_JSONFILE_MAX (1u << 20)

/*
 * Read path whole into a malloc'd, NUL-terminated buffer (*len bytes).
 * Returns 0, or -1 with err = "PATH: cannot open: Permission denied",
 * "PATH: not a regular file", "PATH: larger than 1 MiB (N bytes)".
 * what names the option in the messages ("--deepspeed-config").
 */
int mc_jsonfile_read(const char *path, const char *what, char **text,
		     size_t *len, char *err, size_t errlen);

/*
 * Parse a job file's text with jansson. A key given twice in one object
 * is refused with reject_dups, as DeepSpeed refuses it in its own config
 * (deepspeed/runtime/config_utils.py dict_raise_error_on_duplicate_keys,
 * the object_pairs_hook of its json/hjson load: "Duplicate keys in
 * DeepSpeed config"); without, the last one wins, as Python's json.load
 * (and so transformers' PretrainedConfig) reads it. On a
 * syntax error returns NULL with err = "NAME: not JSON at line L, column
 * C: <jansson's reason>" (the line and column as jansson counts them,
 * from 1; left out when jansson has none). name says which option and
 * file ("--deepspeed-config=ds.json"). The caller json_decref()s.
 */
struct json_t;
struct json_t *mc_jsonfile_parse(const char *text, size_t len,
				 const char *name, bool reject_dups, char *err,
				 size_t errlen);

#endif
