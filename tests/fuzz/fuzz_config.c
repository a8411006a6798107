/*
 * fuzz_config.c - the memcore.conf parser (mc_config_parse) on any bytes,
 * and plugstack arguments (mc_config_set) from the input's first line:
 * never a crash, and on error the config is left at its defaults and the
 * message names the file.
 */
#include <stdio.h>

#include "fuzz.h"
#include "mc_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct mc_config cfg, def;
	char err[MC_ERR_MAX];
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

	/* The first line as a plugstack argument key=value. */
	char *s = mc_fuzz_str(data, size), *nl = strchr(s, '\n'), *eq;

	if (nl)
		*nl = '\0';
	eq = strchr(s, '=');
	if (eq) {
		*eq = '\0';
		mc_config_set(&cfg, s, eq + 1, "plugstack.conf", err,
			      sizeof(err));
	}
	free(s);
	return 0;
}
