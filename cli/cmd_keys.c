/*
 * memcore keys - the memcore.conf keys and what each takes, from the one
 * key table the parser reads (policy/mc_config.c), so the listing cannot
 * drift from what a file may say.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "mc_util.h"

int mc_cmd_keys(int argc, char **argv)
{
	char desc[128];

	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		printf("usage: memcore keys\n\nList the memcore.conf keys "
		       "and the values each takes (memcore.conf(5)).\n"
		       "\n"
		       "Exit status (memcore(8) EXIT STATUS):\n"
		       "  0  the keys were listed\n"
		       "  2  usage error\n");
		return MC_EXIT_FITS;
	}
	char q[256];

	if (argc > 1)
		return mc_cli_usage_error("keys: unexpected argument '%s'",
					  mc_escape(argv[1], 64, q, sizeof(q)));
	for (size_t i = 0; i < mc_n_keys; i++)
		printf("%s=%s%s\n", mc_keys[i].name,
		       mc_key_describe(&mc_keys[i], desc, sizeof(desc)),
		       mc_keys[i].per_partition ? "" : " (global only)");
	/* Not a key of the table but the line the others may follow:
	 * where a site sets a partition's own policy. */
	printf("PartitionName=NAME KEY=VALUE... (a line of its own: the keys "
	       "not global only, for jobs of partition NAME)\n");
	return MC_EXIT_FITS;
}
