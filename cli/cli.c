/*
 * cli.c - the helpers the memcore subcommands share (cli.h): options every
 * node-reading subcommand takes, usage errors, the policy, the node facts
 * and slurmctld's nodes, JSON output.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "cli.h"
#include "mc_util.h"
#include "mc_gpu_probe.h"
#include "mc_jsonout.h"

/* "memcore: " and msg as one line, whatever the user typed: a value's
 * control bytes (a newline that would forge a second "memcore:" line, an
 * escape sequence) are written as mc_escape writes them (mc_oneline). */
static void put_oneline(const char *msg)
{
	size_t len = 4 * strlen(msg) + 1;
	char small[1024], *line = len > sizeof(small) ? malloc(len) : small;

	if (!line) {	/* cut when memory is short */
		line = small;
		len = sizeof(small);
	}
	fprintf(stderr, "memcore: %s\n", mc_oneline(msg, line, len));
	if (line != small)
		free(line);
}

int mc_cli_usage_error(const char *fmt, ...)
{
	char buf[4096], *msg = buf;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(buf) && (msg = malloc((size_t)n + 1))) {
		va_start(ap, fmt);
		vsnprintf(msg, (size_t)n + 1, fmt, ap);
		va_end(ap);
	} else {
		msg = buf;	/* cut at 4 KiB when memory is short */
		if (n < 0)
			buf[0] = '\0';
	}
	put_oneline(msg);
	if (msg != buf)
		free(msg);
	return MC_EXIT_USAGE;
}

bool mc_cli_node_option(int opt, const char *arg, struct mc_cli_common *c)
{
	switch (opt) {
	case MC_CLI_OPT_PARTITION:
		c->partition = arg;
		return true;
	case MC_CLI_OPT_CONFIG:
		c->config = arg;
		return true;
	case MC_CLI_OPT_TOPOLOGY:
		c->topology = arg;
		return true;
	case MC_CLI_OPT_JSON:
		c->json = true;
		return true;
	}
	return false;
}

int mc_cli_option_error(const char *cmd, int opt, char **argv)
{
	char q[256];	/* the user's word, escaped: one line, no ESC */
	const char *w = argv[optind - 1];

	/* An unknown letter inside a bundle ("-xh"): getopt has not moved
	 * past the word yet, so the word before it is argv[optind - 1];
	 * optopt is the letter. A long option's word starts with "--". */
	if (opt == '?' && optopt > ' ' && optopt < 127 && strncmp(w, "--", 2))
		snprintf(q, sizeof(q), "-%c", optopt);
	else
		mc_escape(w, 64, q, sizeof(q));
	if (opt == ':')
		return mc_cli_usage_error("%s: %s: missing value", cmd, q);
	return mc_cli_usage_error("%s: unknown option '%s' (see memcore %s "
				  "--help)", cmd, q, cmd);
}

int mc_cli_read_options(const char *cmd, int argc, char **argv,
			const struct option *options, void (*usage)(FILE *),
			struct mc_cli_common *common, mc_cli_option_fn take,
			void *ctx)
{
	int opt, idx = 0, rc;

	optind = 1;
	opterr = 0;	/* the messages are memcore's (mc_cli_option_error) */
	while ((opt = getopt_long(argc, argv, ":h", options, &idx)) != -1) {
		if (opt == 'h') {
			usage(stdout);
			return 0;
		}
		if (opt == ':' || opt == '?')
			return mc_cli_option_error(cmd, opt, argv);
		if (common && mc_cli_node_option(opt, optarg, common)) {
			/* "--topology=" is no file and "--partition=" no
			 * partition: never this host nor the default in
			 * their place (--config= says so itself). */
			if (optarg && !*optarg && opt != MC_CLI_OPT_CONFIG)
				return mc_cli_usage_error("--%s=: empty value",
							  options[idx].name);
			continue;
		}
		rc = take(ctx, opt, optarg, options[idx].name);
		if (rc != MC_CLI_ON)
			return rc;
	}
	if (mc_cli_no_arguments(cmd, argc, argv))
		return MC_EXIT_USAGE;
	return MC_CLI_ON;
}

int mc_cli_no_arguments(const char *cmd, int argc, char **argv)
{
	char q[256];

	if (optind < argc)
		return mc_cli_usage_error("%s: unexpected argument '%s'", cmd,
					  mc_escape(argv[optind], 64, q,
						    sizeof(q)));
	return 0;
}

int mc_cli_policy(const struct mc_cli_common *c, struct mc_config *cfg,
		  struct mc_policy *p)
{
	char err[MC_ERR_MAX];
	struct stat st;
	const char *path = c->config;

	mc_config_init(cfg);
	/* Without --config the site's file is used when there is one, so the
	 * command answers like the plugin on this host. */
	if (!path && stat(MC_DEFAULT_CONFIG, &st) == 0)
		path = MC_DEFAULT_CONFIG;
	if (path && mc_config_load(path, cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "memcore: %s\n", err);
		return -1;
	}
	/* Not an error (the answer stands), but the administrator must
	 * see it wherever the policy is read. */
	if (cfg->key_off[0])
		fprintf(stderr, "memcore: warning: %s\n", cfg->key_off);
	mc_config_policy(cfg, c->partition, p);
	return 0;
}

int mc_cli_facts(const struct mc_cli_common *c, const struct mc_policy *p,
		 struct mc_node_facts *f)
{
	char err[MC_ERR_MAX];
	const char *xml = c->topology ? c->topology : p->topology_file;

	if (mc_topology_load(xml, f, err, sizeof(err)) < 0) {
		fprintf(stderr, "memcore: %s\n", err);
		return -1;
	}
	/* This node (not another machine's --topology): GPU memory the
	 * topology lacks from NVML / ROCm SMI, as slurmd puts in the cache,
	 * so that the command answers like the plugin. */
	if (!c->topology)
		mc_gpu_probe_fill_default(f, err, sizeof(err));
	return 0;
}

int mc_cli_no_gpus_here(const char *cmd, const char *so)
{
	return mc_cli_usage_error("%s: this host has no GPUs, so %s; "
		"describe the node with --topology FILE.xml (its hwloc XML), "
		"--partition P with a readable slurm.conf (its nodes from "
		"slurmctld), or NodeRam=, NodeCores= and NodeGpus= in "
		"memcore.conf", cmd, so);
}

const char *const mc_node_source_words[] = {
	[MC_NODE_TOPOLOGY_FILE] = "topology-file",
	[MC_NODE_POLICY] = "policy",
	[MC_NODE_SLURMCTLD] = "slurmctld",
	[MC_NODE_LIVE] = "live",
};

enum mc_node_source mc_cli_node_source(const struct mc_cli_common *c,
				       const struct mc_policy *p)
{
	if (c->topology || p->topology_file[0])
		return MC_NODE_TOPOLOGY_FILE;
	if (p->node_ram_bytes && p->node_cores)
		return MC_NODE_POLICY;
	if (mc_ctld_conf())
		return MC_NODE_SLURMCTLD;
	return MC_NODE_LIVE;
}

int mc_cli_partition_nodes(const char *cmd, const struct mc_cli_common *c,
			   const struct mc_policy *p, const char *cache)
{
	const char *path = mc_ctld_conf_path();
	int e;

	if (!c->partition || cache ||
	    mc_cli_node_source(c, p) != MC_NODE_LIVE)
		return 0;
	e = access(path, R_OK) == 0 ? 0 : errno;
	return mc_cli_usage_error("%s: --partition=%s: cannot read slurm.conf "
		"%s (%s), where the partition's nodes come from; this host "
		"is not judged in their place: set SLURM_CONF to a readable "
		"slurm.conf, or describe the node with --topology FILE.xml%s "
		"or NodeRam=/NodeCores= on the partition's line of "
		"memcore.conf", cmd, c->partition, path,
		e ? strerror(e) : "unreadable", strcmp(cmd, "audit") ? ""
		: ", --cache FILE");
}

int mc_cli_partition_known(const char *cmd, const struct mc_cli_common *c,
			   const struct mc_config *cfg,
			   const struct mc_policy *p)
{
	char err[MC_ERR_MAX], name[MC_PARTITION_NAME_MAX];
	size_t used = 0;
	int rc, e;

	/* From slurmctld the load itself refuses an unknown one. */
	if (!c->partition || mc_cli_node_source(c, p) == MC_NODE_SLURMCTLD)
		return 0;
	if (mc_ctld_conf()) {
		rc = mc_ctld_find_partition(c->partition, name, sizeof(name),
					    err, sizeof(err));
		if (rc == MC_CTLD_UNREACHABLE) {
			fprintf(stderr, "memcore: %s\n", err);
			return MC_EXIT_UNREACHABLE;
		}
		return rc ? mc_cli_usage_error("%s", err) : 0;
	}
	for (size_t i = 0; i < cfg->n_partitions; i++)
		if (!strcmp(cfg->partitions[i].name, c->partition))
			return 0;
	e = access(mc_ctld_conf_path(), R_OK) == 0 ? 0 : errno;
	mc_appendf(err, sizeof(err), &used, "%s: --partition=%s: no such "
		   "partition in %s (", cmd, c->partition,
		   cfg->path[0] ? cfg->path : "the built-in policy");
	if (!cfg->n_partitions)
		mc_appendf(err, sizeof(err), &used, "no PartitionName= lines");
	for (size_t i = 0; i < cfg->n_partitions; i++)
		mc_appendf(err, sizeof(err), &used, "%s%s", i ? ", " :
			   "partitions: ", cfg->partitions[i].name);
	mc_appendf(err, sizeof(err), &used, "); slurm.conf %s, which "
		   "lists them all, is not readable (%s)", mc_ctld_conf_path(),
		   e ? strerror(e) : "unreadable");
	return mc_cli_usage_error("%s", err);
}

int mc_cli_ctld_load(const struct mc_cli_common *c,
		     const struct mc_config *cfg, struct mc_policy *p,
		     bool all, bool fresh, struct mc_ctld_nodes *out)
{
	char err[MC_ERR_MAX];
	int rc = mc_ctld_load(c->partition, all, fresh, out, err, sizeof(err));

	if (rc < 0) {
		fprintf(stderr, "memcore: %s\n", err);
		return rc == MC_CTLD_UNREACHABLE ? MC_EXIT_UNREACHABLE
						 : MC_EXIT_USAGE;
	}
	/* Without --partition: the default partition's policy. */
	if (!all)
		mc_config_policy(cfg, out->partition, p);
	return 0;
}

void mc_cli_json_print(json_t *o)
{
	json_t *w = json_object();
	char *text;

	/* The schema first, so that a script can check it before it reads
	 * anything else. */
	json_object_set_new(w, "schema", json_integer(MC_JSON_SCHEMA));
	json_object_update(w, o);
	json_decref(o);
	text = mc_json_dumps(w);
	if (text)
		fputs(text, stdout);
	fputc('\n', stdout);
	free(text);
	json_decref(w);
}

unsigned mc_cli_term_width(int fd)
{
	struct winsize ws;
	const char *c = getenv("COLUMNS");

	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col)
		return ws.ws_col;
	if (c && *c) {
		char *end;
		unsigned long v = strtoul(c, &end, 10);

		if (!*end && v > 0 && v < 10000)
			return (unsigned)v;
	}
	return 80;
}
