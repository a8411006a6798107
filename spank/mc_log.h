/*
 * mc_log.h - memcore's lines in slurmd's and slurmstepd's log (and, from
 * srun, sbatch and a task, on the user's stderr, where Slurm prints them).
 *
 * Every such line may quote what a user set: a variable of the job's
 * environment (MEMCORE_JOB_FILES, MEMCORE_DATASET_FACTS, SLURM_CPU_BIND),
 * an option's value, a file name. A newline in it would forge a line of
 * slurmd's log that an administrator (or a log shipper) takes for Slurm's
 * or memcore's own; an escape sequence would drive the terminal of whoever
 * reads the log. So no call goes to slurm_error/info/verbose/debug itself:
 * these format the whole message and write it as one line (mc_oneline:
 * control bytes as \n, \xNN), whatever any argument holds. A message is
 * cut at MC_LOG_MAX bytes, and at 2 * MC_LOG_MAX once escaped.
 * slurm_spank_log, whose text goes only to the step's own stderr and
 * whose explanations are several lines by design, is not wrapped: the
 * values inside those lines are escaped where they are written.
 */
#ifndef MC_LOG_H
#define MC_LOG_H

#define MC_LOG_MAX 2048

enum mc_log_level { MC_LOG_ERROR, MC_LOG_INFO, MC_LOG_VERBOSE, MC_LOG_DEBUG };

/* The message of fmt (printf's, %m included) at level lv, as one line. */
void mc_log(enum mc_log_level lv, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define mc_log_error(...) mc_log(MC_LOG_ERROR, __VA_ARGS__)
#define mc_log_info(...) mc_log(MC_LOG_INFO, __VA_ARGS__)
#define mc_log_verbose(...) mc_log(MC_LOG_VERBOSE, __VA_ARGS__)
#define mc_log_debug(...) mc_log(MC_LOG_DEBUG, __VA_ARGS__)

#endif
