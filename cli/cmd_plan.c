/*
 * memcore plan (issue 3). Placeholder until it lands.
 */
#include "cli.h"

int mc_cmd_plan(int argc, char **argv)
{
	return mc_cli_usage_error("plan: not available in this build");
}
