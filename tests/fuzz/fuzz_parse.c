/*
 * fuzz_parse.c - the strict value parsers (sizes, counts, ratios, model
 * parameters, booleans, words) and the byte formatting of what they give.
 */
#include <math.h>

#include "fuzz.h"
#include "mc_config.h"
#include "mc_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = mc_fuzz_str(data, size);
	char err[MC_ERR_MAX], buf[64];
	uint64_t u;
	uint32_t c;
	double d;
	int i;

	if (mc_parse_size(s, 1, &u, err, sizeof(err)) == 0) {
		mc_fmt_bytes(u, buf, sizeof(buf));
		mc_fmt_mem_option(u, buf, sizeof(buf));
	}
	if (mc_parse_size(s, 1ULL << 20, &u, err, sizeof(err)) == 0)
		mc_fmt_mem_option(u, buf, 4);	/* a short buffer too */
	if (mc_parse_count(s, MC_WORKERS_LIMIT, &c, err, sizeof(err)) == 0 &&
	    c > MC_WORKERS_LIMIT)
		abort();
	if (mc_parse_ratio(s, 0.0, 16.0, &d, err, sizeof(err)) == 0 &&
	    (!isfinite(d) || d < 0.0 || d > 16.0))
		abort();
	if (mc_parse_params(s, &u, err, sizeof(err)) == 0 &&
	    (u < 1 || u > 1000000000000000ULL))
		abort();
	mc_parse_bool(s, &i, err, sizeof(err));
	mc_parse_word(s, mc_mode_words, &i, err, sizeof(err));
	if (size >= 8) {
		memcpy(&u, data, 8);
		mc_fmt_bytes(u, buf, sizeof(buf));
		mc_fmt_mem_option(u, buf, sizeof(buf));
	}
	free(s);
	return 0;
}
