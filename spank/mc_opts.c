/*
 * mc_opts.c - parse the user's memcore options (see mc_opts.h).
 */
#include "mc_opts.h"

#include <stdio.h>
#include <string.h>

#include "mc_config.h"
#include "mc_parse.h"
#include "mc_rules.h"

static const char *const names[MC_OPT_COUNT] = {
	"dataloader-workers", "model-params", "zero-stage", "offload",
	"memcore",
};
static const char *const envs[MC_OPT_COUNT] = {
	"MEMCORE_DATALOADER_WORKERS", "MEMCORE_MODEL_PARAMS",
	"MEMCORE_ZERO_STAGE", "MEMCORE_OFFLOAD", "MEMCORE_MODE",
};

const char *mc_opt_name(enum mc_opt_id id)
{
	return names[id];
}

const char *mc_opt_env(enum mc_opt_id id)
{
	return envs[id];
}

/* --memcore takes a comma-separated set of explain and warn. */
static int parse_mode(const char *s, unsigned *out, char *err, size_t len)
{
	static const char *const words[] = { "explain", "warn", NULL };
	char buf[64];
	unsigned mode = 0;

	if (!s || !*s || strlen(s) >= sizeof(buf)) {
		snprintf(err, len, "expected explain, warn or explain,warn");
		return -1;
	}
	strcpy(buf, s);
	for (char *save = NULL, *w = strtok_r(buf, ",", &save); w;
	     w = strtok_r(NULL, ",", &save)) {
		int i;

		if (mc_parse_word(w, words, &i, err, len) < 0)
			return -1;
		mode |= i == 0 ? MC_USER_EXPLAIN : MC_USER_WARN;
	}
	if (!mode) {
		snprintf(err, len, "expected explain, warn or explain,warn");
		return -1;
	}
	*out = mode;
	return 0;
}

int mc_opts_set(struct mc_opts *o, enum mc_opt_id id, const char *value,
		bool from_env, char *err, size_t errlen)
{
	struct mc_opts n = *o;
	char why[MC_ERR_MAX];
	int rc = -1;

	if (from_env && o->set[id] && !o->from_env[id])
		return 0;	/* the command line wins */
	switch (id) {
	case MC_OPT_WORKERS:
		rc = mc_parse_count(value, MC_WORKERS_LIMIT, &n.workers, why,
				    sizeof(why));
		break;
	case MC_OPT_PARAMS:
		rc = mc_parse_params(value, &n.params, why, sizeof(why));
		break;
	case MC_OPT_STAGE:
		rc = mc_parse_count(value, 3, &n.stage, why, sizeof(why));
		if (rc < 0)
			snprintf(why, sizeof(why),
				 "expected a ZeRO stage 0, 1, 2 or 3");
		break;
	case MC_OPT_OFFLOAD:
		rc = mc_parse_word(value, mc_offload_words, &n.offload, why,
				   sizeof(why));
		break;
	case MC_OPT_MODE:
		rc = parse_mode(value, &n.mode, why, sizeof(why));
		break;
	default:
		snprintf(why, sizeof(why), "unknown option");
		break;
	}
	if (rc == 0 && o->set[id] && !o->from_env[id] && !from_env &&
	    memcmp(&n, o, sizeof(n)) != 0) {
		snprintf(why, sizeof(why), "given twice with different values");
		rc = -1;
	}
	if (rc < 0) {
		if (from_env)
			snprintf(err, errlen, "%s=%s: %s", envs[id],
				 value ? value : "", why);
		else
			snprintf(err, errlen, "--%s=%s: %s", names[id],
				 value ? value : "", why);
		return -1;
	}
	n.set[id] = true;
	n.from_env[id] = from_env;
	*o = n;
	return 0;
}
