/*
 * cli.h - shared pieces of the memcore command's subcommands.
 * Exit codes: MC_EXIT_FITS 0, MC_EXIT_REFUSED 1, MC_EXIT_USAGE 2.
 */
#ifndef MC_CLI_H
#define MC_CLI_H

#include <stdbool.h>

#include "mc_config.h"
#include "mc_topology.h"

enum { MC_EXIT_FITS = 0, MC_EXIT_REFUSED = 1, MC_EXIT_USAGE = 2 };

/* Options every subcommand that reads a node takes. */
struct mc_cli_common {
	const char *config;	/* --config, NULL: the default file if any */
	const char *topology;	/* --topology, NULL: policy's, else live */
	const char *partition;	/* --partition */
	bool json;		/* --json */
};

/*
 * Load the policy (for the partition) from --config, or from
 * MC_DEFAULT_CONFIG when it exists, else the built-in defaults. Prints
 * "memcore: <reason>" to stderr and returns -1 on error.
 */
int mc_cli_policy(const struct mc_cli_common *c, struct mc_config *cfg,
		  struct mc_policy *p);

/* Load the node facts from --topology, the policy's TopologyFile, or the
 * live machine. Prints the reason and returns -1 on error. */
int mc_cli_facts(const struct mc_cli_common *c, const struct mc_policy *p,
		 struct mc_node_facts *f);

/* "memcore: <what>" on stderr, then MC_EXIT_USAGE. */
int mc_cli_usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

int mc_cmd_check(int argc, char **argv);
int mc_cmd_audit(int argc, char **argv);
int mc_cmd_plan(int argc, char **argv);
int mc_cmd_usage(int argc, char **argv);

#endif
