/*
 * fuzz_opts.c - the user's option values (mc_opts_set): the first byte
 * picks the option and whether it came from the environment; the rest,
 * split at newlines, are successive values (repeats, env after option).
 */
#include "fuzz.h"
#include "mc_config.h"
#include "mc_opts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mc_opts o = { 0 };
	char err[MC_ERR_MAX];
	char *s, *save = NULL;

	if (size < 1)
		return 0;
	s = mc_fuzz_str(data + 1, size - 1);
	for (char *v = strtok_r(s, "\n", &save); v;
	     v = strtok_r(NULL, "\n", &save)) {
		enum mc_opt_id id = (enum mc_opt_id)(data[0] % MC_OPT_COUNT);
		bool env = (data[0] / MC_OPT_COUNT) & 1;
		struct mc_opts before = o;

		if (mc_opts_set(&o, id, v, env, err, sizeof(err)) < 0) {
			if (memcmp(&before, &o, sizeof(o)) != 0)
				abort();	/* unchanged on error */
		} else if (o.workers > MC_WORKERS_LIMIT || o.stage > 3) {
			abort();
		}
	}
	free(s);
	return 0;
}
