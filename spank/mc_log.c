/*
 * mc_log.c - one line per log message, whatever it quotes (see mc_log.h).
 */
#include "mc_log.h"

#include <stdarg.h>
#include <stdio.h>

#include <slurm/spank.h>

#include "mc_util.h"

void mc_log(enum mc_log_level lv, const char *fmt, ...)
{
	/* Small enough for the sampler thread's stack (mc_sampler.h): a
	 * message of many control bytes is cut, never written raw. */
	char msg[MC_LOG_MAX], line[2 * MC_LOG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);	/* %m: errno, still the
						 * caller's here */
	va_end(ap);
	mc_oneline(msg, line, sizeof(line));
	switch (lv) {
	case MC_LOG_ERROR: slurm_error("%s", line); break;
	case MC_LOG_INFO: slurm_info("%s", line); break;
	case MC_LOG_VERBOSE: slurm_verbose("%s", line); break;
	default: slurm_debug("%s", line); break;
	}
}
