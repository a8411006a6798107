/*
 * mc_bind.c - NUMA binding of each GPU task (issue 3).
 * Placeholder until binding lands: does nothing.
 */
#include "mc_plugin.h"

int mc_bind_task_init(struct mc_plugin *p, spank_t sp)
{
	return 0;
}
