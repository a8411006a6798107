/*
 * fuzz_list.c - Slurm index lists (mc_list_parse): never a crash or more
 * entries than asked for; a list that parses formats back to a list that
 * parses to the same indices.
 */
#include "fuzz.h"
#include "mc_list.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned a[256], b[256];
	static char buf[4096];
	char *s = mc_fuzz_str(data, size);
	int n = mc_list_parse(s, a, 256), m;

	if (n > 256)
		abort();
	if (mc_list_parse(s, NULL, 256) != n)
		abort();	/* counting agrees with filling */
	if (n > 0) {
		mc_list_format(a, (size_t)n, buf, sizeof(buf));
		if (strlen(buf) + 1 < sizeof(buf)) {	/* not truncated */
			m = mc_list_parse(buf, b, 256);
			if (m != n || memcmp(a, b, (size_t)n * sizeof(*a)))
				abort();
		}
		mc_list_format(a, (size_t)n, buf, 5);	/* truncation */
	}
	free(s);
	return 0;
}
