/*
 * cli.h - shared pieces of the memcore command's subcommands.
 * Exit codes: MC_EXIT_FITS 0, MC_EXIT_REFUSED 1, MC_EXIT_USAGE 2,
 * MC_EXIT_UNREACHABLE 3 (slurmctld did not answer).
 */
#ifndef MC_CLI_H
#define MC_CLI_H

#include <getopt.h>
#include <stdbool.h>

#include <jansson.h>

#include "mc_config.h"
#include "mc_decision.h"
#include "mc_judge.h"
#include "mc_rules.h"
#include "mc_slurmctld.h"
#include "mc_topology.h"

enum { MC_EXIT_FITS = 0, MC_EXIT_REFUSED = 1, MC_EXIT_USAGE = 2,
       MC_EXIT_UNREACHABLE = 3 };

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
enum { MC_CLI_OPT_PARTITION = 0x1000, MC_CLI_OPT_CONFIG, MC_CLI_OPT_TOPOLOGY,
       MC_CLI_OPT_JSON };
#define MC_CLI_NODE_OPTIONS \
	{ "partition", required_argument, NULL, MC_CLI_OPT_PARTITION }, \
	{ "config", required_argument, NULL, MC_CLI_OPT_CONFIG }, \
	{ "topology", required_argument, NULL, MC_CLI_OPT_TOPOLOGY }, \
	{ "json", no_argument, NULL, MC_CLI_OPT_JSON }

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

/* What a step of a command returns when it gave no answer: the next step
 * goes on (an exit status, 0 included, ends the command). */
#define MC_CLI_ON (-1)

/*
 * One option of a command's own (not --help, not MC_CLI_NODE_OPTIONS):
 * opt as getopt_long returned it, its value (NULL: none) and long name.
 * Returns MC_CLI_ON to go on, else the exit status to stop with (having
 * said why).
 */
typedef int (*mc_cli_option_fn)(void *ctx, int opt, const char *arg,
				const char *name);

/*
 * A command's command line, read as every command reads it: --help prints
 * usage(stdout) and ends it (0); MC_CLI_NODE_OPTIONS go into common (NULL:
 * the command takes none of them); every other option to take(ctx, ...);
 * a missing value, an unknown option (mc_cli_option_error) or an argument
 * after the options (mc_cli_no_arguments) is a usage error. MC_CLI_ON when
 * the whole line was read, else the exit status.
 */
int mc_cli_read_options(const char *cmd, int argc, char **argv,
			const struct option *options, void (*usage)(FILE *),
			struct mc_cli_common *common, mc_cli_option_fn take,
			void *ctx);

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

/*
 * Where the node facts come from, in this order: "topology-file"
 * (--topology or TopologyFile=: this exact node), "policy" (NodeRam= and
 * NodeCores= in memcore.conf), "slurmctld" (slurm.conf readable: the
 * partition's nodes), "live" (this machine).
 */
/*
 * --partition names a partition that exists, when the node is not read
 * from slurmctld (--topology, TopologyFile=, NodeRam=/NodeCores=): one
 * slurmctld knows when slurm.conf is readable, else one of memcore.conf's
 * PartitionName= lines. Returns 0, MC_EXIT_USAGE after "memcore: ...: no
 * such partition ..." naming where it looked, or MC_EXIT_UNREACHABLE.
 */
int mc_cli_partition_known(const char *cmd, const struct mc_cli_common *c,
			   const struct mc_config *cfg,
			   const struct mc_policy *p);

/*
 * --partition P names nodes only slurmctld knows: when none of the sources
 * above describes the node and slurm.conf cannot be read, this machine is
 * not judged in their place. Returns 0, or MC_EXIT_USAGE after "memcore:
 * CMD: --partition=P: cannot read slurm.conf PATH (why) ..." on stderr.
 * cache: audit's --cache FILE (a node source too), else NULL.
 */
int mc_cli_partition_nodes(const char *cmd, const struct mc_cli_common *c,
			   const struct mc_policy *p, const char *cache);

const char *mc_cli_node_source(const struct mc_cli_common *c,
			       const struct mc_policy *p);

/*
 * Load the nodes of --partition (else the default partition; with all,
 * of the whole cluster) from slurmctld and set *p to that partition's
 * policy. Returns 0, or the exit code after printing "memcore: <why>":
 * MC_EXIT_UNREACHABLE, or MC_EXIT_USAGE (unknown partition, no nodes).
 * fresh: never from the shape cache (mc_ctld_load).
 */
int mc_cli_ctld_load(const struct mc_cli_common *c,
		     const struct mc_config *cfg, struct mc_policy *p,
		     bool all, bool fresh, struct mc_ctld_nodes *out);

/*
 * The version of every --json output's keys, its "schema" (memcore(8),
 * JSON OUTPUT): it goes up when a key is removed or renamed or changes its
 * meaning or unit, not when one is added. A renamed key stays under its
 * old name too for one release (ram_offload_bytes, now ram_zero_bytes).
 */
#define MC_JSON_SCHEMA 1

/* Print a JSON object on stdout with "schema": MC_JSON_SCHEMA first, as
 * mc_json_dumps writes it (every uint64_t exact), then release it. */
void mc_cli_json_print(json_t *o);

/*
 * The JSON of memcore check for one verdict: fits, the RAM and core
 * figures, fix_mem_bytes/fix_cpus_per_gpu, fix_options (complete options
 * in the user's forms), mode, allow_user_warn, node_source, explanation.
 */
json_t *mc_cli_verdict_json(const struct mc_policy *p, const char *node_source,
			    const struct mc_verdict *v,
			    const struct mc_explanation *e);

/*
 * A new JSON object for one node shape of a partition, the keys check
 * --partition and audit --partition share, in this order: nodes (hosts,
 * "gpu[01-12]"), count, gpus, gpu_type, gpu_memory_bytes (null when 0:
 * unknown), gpu_memory_source, ram_bytes, cores, threads_per_core. The
 * caller adds its own keys and owns the object.
 */
json_t *mc_cli_shape_json(const char *hosts, size_t count,
			  const struct mc_node_record *rec,
			  uint64_t gpu_memory_bytes, enum mc_mem_source src);

/* What one kind of node grants a request (mc_cli_alloc_fn's answer). */
struct mc_cli_grant {
	struct mc_alloc alloc;
	char mem_source[96];		/* alloc.mem_source points here */
	/* No candidate: why; a candidate: the placement line
	 * ("  placement: ..."), "" none. */
	char why[200];
	/* The step's GPUs on a node do not depend on the node (an upper
	 * bound of unseen nodes can then be judged). */
	bool gpus_fixed;
	/* What Slurm allocates the job on a node of the shape, as the job's
	 * own options give it (--slurm-options: mc_slurm_grant's gpus,
	 * tasks, cpus in threads); has_job false for plain check options,
	 * whose grant is the step's only. The shapes' "grant" in --json
	 * (memcore(8)), compared with slurmctld's allocation by
	 * tests/integration/test_63_oracle.sh. */
	bool has_job;
	uint32_t job_gpus, job_tasks, job_cpus;
};

/*
 * What a request asks of one kind of node (cmd_check.c's check_alloc,
 * or the job's Slurm options through mc_slurm_alloc()): the grant g,
 * and the step's GPUs on that node into c->gpus (the case the request is
 * then built from, mc_decision.h). Returns false when the node is no
 * candidate for the job at all (a GPU type it does not have), with
 * g->why set. rec NULL: the one node described (node), nodes NULL.
 */
typedef bool (*mc_cli_alloc_fn)(const void *args,
				const struct mc_ctld_nodes *nodes,
				const struct mc_node_record *rec,
				const struct mc_node *node,
				struct mc_case *c, struct mc_cli_grant *g);

/*
 * Lines about the job's request that change no verdict, appended to the
 * explanation (text and JSON "explanation"), before the launch line:
 * memcore check --slurm-options gives one for each of the job's Slurm
 * options not modelled at submission (mc_slurm_let_through), "memcore:
 * --core-spec is not modelled at submission: REASON (the launch check
 * judges it)"; contrib/cli_filter.lua shows them at sbatch -v.
 */
#define MC_CLI_NOTES_MAX 32
struct mc_cli_notes {
	size_t n;
	char line[MC_CLI_NOTES_MAX][MC_EXPLAIN_LINE_MAX];
	/* The first such option that may give the job more than modelled
	 * ("" none; mc_slurm_may_give_more: --ntasks-per-socket spreads its
	 * tasks over nodes): a job that does not fit as modelled without it
	 * is let through to the launch check, never refused
	 * (mc_cli_unmodelled_why). */
	char unmodelled[48];
};

/*
 * The let-through line of a job that does not fit as modelled and gave
 * an option not modelled at submission (n->unmodelled) into buf; false
 * (buf untouched) when it gave none. where: "any node of partition gpu",
 * "this node".
 */
bool mc_cli_unmodelled_why(const struct mc_cli_notes *n, const char *where,
			   char *buf, size_t len);

/* Append n's lines to the JSON array lines (n NULL: none). */
void mc_cli_notes_append(json_t *lines, const struct mc_cli_notes *n);

/*
 * Judge case c (mc_decision.h: built into a request and decided per
 * shape, as launch does) against every node shape of a partition from
 * slurmctld (GPU
 * memory per shape: gpu_memory_override when not 0, else GpuTypeMemory=,
 * else GpuMemory=) and print which nodes it fits:
 *   memcore: fits on 12 of 16 nodes of partition gpu: gpu[01-12] (...);
 *   not on gpu[13-16] (...): needs 704 GiB
 * then the explanation for a fitting shape, or for each shape when none
 * fits ("memcore: no node of partition gpu has 8 GPUs: ..." when none can).
 * Slurm, not memcore, picks the node: a step that fits some nodes and not
 * others Slurm may give it (placeable: enough GPUs, memory and cores
 * asked) is refused too, with a line naming those (--exclude=HOSTS) and
 * their explanation, unless nodes->pick_unmodelled says the job picks its
 * nodes in a way not modelled (let through). The explanation ends with
 * what launch would do (mc_launch_line; user_warn: --memcore=warn).
 * Returns MC_EXIT_REFUSED when launch would refuse it (on some node Slurm
 * may give it, and no warning may run it), else MC_EXIT_FITS. With
 * print false nothing is printed (the answer only: a refusal from cached
 * nodes is confirmed with a fresh load before it is said). notes: lines
 * added to the explanation before the launch line (NULL: none).
 */
int mc_check_partition(const struct mc_policy *p,
		       const struct mc_ctld_nodes *nodes,
		       const struct mc_case *c,
		       uint64_t gpu_memory_override, mc_cli_alloc_fn alloc_of,
		       const void *args, bool user_warn, bool json, bool print,
		       const struct mc_cli_notes *notes);

/*
 * Whether a step that fits allocation a (judgement j) might not fit what
 * Slurm actually gives: a->cores_fewest set (Slurm decides the cores when
 * it allocates, mc_slurm_alloc.h) and the step does not fit those. Then
 * line receives the let-through line ("memcore: the cores of this job on
 * HOST cannot be judged: Slurm decides them as it allocates ...") and
 * it returns true.
 */
bool mc_cli_cores_unsure(const struct mc_policy *p,
			 const struct mc_request *r, const struct mc_alloc *a,
			 const struct mc_node *n, const char *host,
			 const struct mc_judgement *j, char *line,
			 size_t len);

/*
 * What launch would do (mc_launch_outcome) in check's JSON: "launch"
 * (runs, warned, refused, unchecked) and "launch_line", the line the
 * plugin ends its explanation with (null: none).
 */
void mc_cli_launch_json(json_t *o, const struct mc_policy *p, bool user_warn,
			enum mc_launch launch);

/* "memcore: <what>" on stderr, then MC_EXIT_USAGE. */
/* The width in columns of the terminal on fd (TIOCGWINSZ), else
 * $COLUMNS (1-9999), else 80. */
unsigned mc_cli_term_width(int fd);

int mc_cli_usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/*
 * A command run on this host with no other node named (check, audit), and
 * this host has no GPUs: "memcore: CMD: this host has no GPUs, so SO;
 * describe the node with ..." (the ways to name one) on stderr. Returns
 * MC_EXIT_USAGE.
 */
int mc_cli_no_gpus_here(const char *cmd, const char *so);

int mc_cmd_check(int argc, char **argv);
int mc_cmd_audit(int argc, char **argv);
int mc_cmd_plan(int argc, char **argv);
int mc_cmd_usage(int argc, char **argv);
int mc_cmd_keys(int argc, char **argv);
int mc_cmd_report(int argc, char **argv);
int mc_cmd_stage(int argc, char **argv);

#endif
