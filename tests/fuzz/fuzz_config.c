/*
 * fuzz_config.c - the memcore.conf parser (mc_config_parse) on any bytes,
 * and the plugstack.conf line (mc_config_plugstack: config=, cache= and
 * key=value, the code the plugin runs) from the input's first line split
 * at blanks: never a crash; on error the config is left at its defaults
 * and the message names the file; the cache path is absolute or "".
 */
#include <limits.h>
#include <stdio.h>

#include "fuzz.h"
#include "mc_config.h"

#define MAX_ARGS 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct mc_config cfg, def;
	char err[MC_ERR_MAX], cache[PATH_MAX];
	struct mc_policy p;

	err[0] = '\0';
	if (mc_config_parse((const char *)data, size, "fuzz.conf", &cfg, err,
			    sizeof(err)) < 0) {
		mc_config_init(&def);
		if (strncmp(err, "fuzz.conf", 9) != 0)
			abort();	/* every message names the file */
		if (cfg.n_partitions != 0 ||
		    memcmp(&cfg.global, &def.global, sizeof(def.global)) != 0)
			abort();	/* nothing half-applied */
	}
	mc_config_policy(&cfg, "debug", &p);

	/* The first line as a plugstack.conf line: its words are the
	 * arguments slurmd passes. A config= that names no file is the
	 * plugin's missing-file path. */
	char *s = mc_fuzz_str(data, size), *nl = strchr(s, '\n'), *tok, *save;
	char *av[MAX_ARGS];
	int ac = 0;

	if (nl)
		*nl = '\0';
	for (tok = strtok_r(s, " \t", &save); tok && ac < MAX_ARGS;
	     tok = strtok_r(NULL, " \t", &save))
		av[ac++] = tok;
	mc_config_plugstack(&cfg, ac, av, "/var/spool/memcore/facts", cache,
			    sizeof(cache), err, sizeof(err));
	if (cache[0] && cache[0] != '/')
		abort();	/* cache= takes absolute paths only */
	if (err[0] && strncmp(err, "plugstack.conf", 14) != 0 &&
	    !strchr(err, ':'))
		abort();	/* every message says where */
	free(s);
	return 0;
}
