/*
 * mc_enforce.c - the step's memory cgroup and OOM reports (issue 3).
 * Placeholder until the cgroup enforcement lands: does nothing.
 */
#include "mc_plugin.h"

int mc_enforce_user_init(struct mc_plugin *p, spank_t sp)
{
	return 0;
}

int mc_enforce_task_exit(struct mc_plugin *p, spank_t sp)
{
	return 0;
}

int mc_enforce_exit(struct mc_plugin *p, spank_t sp)
{
	return 0;
}
