/*
 * cli.h - shared pieces of the memcore command's subcommands.
 * Exit codes: MC_EXIT_FITS 0, MC_EXIT_REFUSED 1, MC_EXIT_USAGE 2.
 */
#ifndef MC_CLI_H
#define MC_CLI_H

#include <getopt.h>
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
 * The long options every subcommand that reads a node takes, with ids
 * above any subcommand's own (which start at 256).
 */
enum { MC_OPT_PARTITION = 0x1000, MC_OPT_CONFIG, MC_OPT_TOPOLOGY,
       MC_OPT_JSON };
#define MC_CLI_NODE_OPTIONS \
	{ "partition", required_argument, NULL, MC_OPT_PARTITION }, \
	{ "config", required_argument, NULL, MC_OPT_CONFIG }, \
	{ "topology", required_argument, NULL, MC_OPT_TOPOLOGY }, \
	{ "json", no_argument, NULL, MC_OPT_JSON }

/* Take one of the MC_CLI_NODE_OPTIONS into c; false when opt is not one. */
bool mc_cli_node_option(int opt, const char *arg, struct mc_cli_common *c);

/*
 * What ends a subcommand's getopt_long loop badly: ':' (a missing value)
 * or anything else (an unknown option). Prints "memcore: CMD: ..." naming
 * the argument and returns MC_EXIT_USAGE.
 */
int mc_cli_option_error(const char *cmd, int opt, char **argv);

/* After the loop: MC_EXIT_USAGE with a message for a stray argument,
 * else 0. */
int mc_cli_no_arguments(const char *cmd, int argc, char **argv);

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
