/*
 * memcore - the memcore engine without Slurm: would this GPU request fit
 * this node (check), does this node meet the sizing rule (audit). This
 * file only dispatches; the subcommands are cmd_*.c, their shared helpers
 * cli.c (cli.h).
 */
#define _GNU_SOURCE	/* getresuid, getresgid */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "mc_util.h"

static void usage(FILE *out)
{
	fprintf(out,
"usage: memcore <command> [options]\n"
"\n"
"Size host RAM and CPU cores to GPU jobs, as the memcore Slurm plugin does.\n"
"\n"
"commands:\n"
"  check   would a step with these GPUs and this allocation fit?\n"
"  audit   does this node (or every GPU node of a partition) meet the GPU\n"
"          sizing rule?\n"
"  plan    which cores each GPU's task and DataLoader workers get\n"
"  usage   a cgroup's memory: non-reclaimable use apart from page cache\n"
"  keys    the memcore.conf keys and the values each takes\n"
"  report  what each step of a job used on each node, what to ask next\n"
"          time, Slurm's MaxRSS beside it (after the job, its user or an\n"
"          admin)\n"
"  stage   copy a dataset to node-local scratch: in parallel, resumable,\n"
"          after checking it fits\n"
"  iobench the book's read-pattern benchmark on a sample of a dataset,\n"
"          where it is and on local scratch: stage it or read it as is\n"
"\n"
"Run 'memcore <command> --help' for its options and exit status; see\n"
"memcore(8). Every command exits 2 on a usage error.\n");
}

/*
 * memcore reads what its caller names (--config, --topology, --cache,
 * --cgroup) and says what it found: installed set-user-ID or
 * set-group-ID it would read root's files for anyone (the first line of
 * /etc/shadow as a config error, file sizes through --cache). It is never
 * that: real and effective ids must agree, or it stops before reading
 * anything. Returns true when they agree.
 */
static bool ids_agree(void)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg;

	if (getresuid(&ru, &eu, &su) != 0 || getresgid(&rg, &eg, &sg) != 0)
		return false;
	if (ru == eu && rg == eg)
		return true;
	fprintf(stderr, "memcore: refusing to run set-user-ID or "
		"set-group-ID (real uid %u gid %u, effective uid %u gid %u): "
		"memcore reads the files its caller names, so it runs with "
		"the caller's own ids only; remove the setuid/setgid bit "
		"(chmod u-s,g-s)\n", (unsigned)ru, (unsigned)rg,
		(unsigned)eu, (unsigned)eg);
	return false;
}

int main(int argc, char **argv)
{
	if (!ids_agree())
		return MC_EXIT_USAGE;
	if (argc < 2) {
		usage(stderr);
		return MC_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		printf("memcore %s\n", MC_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "check"))
		return mc_cmd_check(argc - 1, argv + 1);
	if (!strcmp(argv[1], "audit"))
		return mc_cmd_audit(argc - 1, argv + 1);
	if (!strcmp(argv[1], "plan"))
		return mc_cmd_plan(argc - 1, argv + 1);
	if (!strcmp(argv[1], "usage"))
		return mc_cmd_usage(argc - 1, argv + 1);
	if (!strcmp(argv[1], "keys"))
		return mc_cmd_keys(argc - 1, argv + 1);
	if (!strcmp(argv[1], "report"))
		return mc_cmd_report(argc - 1, argv + 1);
	if (!strcmp(argv[1], "stage"))
		return mc_cmd_stage(argc - 1, argv + 1);
	if (!strcmp(argv[1], "iobench"))
		return mc_cmd_iobench(argc - 1, argv + 1);
	char q[256];

	mc_cli_usage_error("unknown command '%s'",
			   mc_escape(argv[1], 64, q, sizeof(q)));
	usage(stderr);
	return MC_EXIT_USAGE;
}
