/*
 * memcore usage (issue 3). Placeholder until it lands.
 */
#include "cli.h"

int mc_cmd_usage(int argc, char **argv)
{
	return mc_cli_usage_error("usage: not available in this build");
}
