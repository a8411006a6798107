/*
 * fuzz_memstat.c - memory.stat, limit files and oom_kill lines as the
 * kernel (or a hostile fixture) might print them, for cgroup v1 and v2.
 */
#include "fuzz.h"
#include "mc_cgops.h"
#include "mc_memstat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = mc_fuzz_str(data, size);
	char err[256];
	struct mc_memstat_fields f;
	uint64_t u;

	memset(&f, 0, sizeof(f));
	mc_memstat_parse(s, &mc_cgroup_v1, &f, err, sizeof(err));
	memset(&f, 0, sizeof(f));
	mc_memstat_parse(s, &mc_cgroup_v2, &f, err, sizeof(err));
	mc_memstat_parse_limit(s, &u);
	mc_memstat_parse_oom_kill(s, &u);
	free(s);
	return 0;
}
