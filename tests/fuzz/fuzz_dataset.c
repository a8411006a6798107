/*
 * fuzz_dataset.c - MEMCORE_DATASET_FACTS as slurmstepd parses it: the
 * user can set the variable by hand. What parses must survive the trip
 * (format, parse again: the same figures), and neither the error nor any
 * line of the note nor --dataset-in-memory's error may hold a control
 * byte (a forged line of stderr or of slurmd's log), whatever a path's
 * %-escapes decode to.
 */
#include "fuzz.h"
#include "mc_dataset.h"
#include "mc_util.h"

static void check_messages(const struct mc_dataset *d)
{
	char lines[8][200], err[MC_ERR_MAX];
	uint64_t b;
	bool refuse;
	size_t n = mc_dataset_note(d, MC_NETDS_REFUSE, "/scratch", 1ULL << 40,
				   7, lines, 8, &refuse);

	for (size_t i = 0; i < n; i++)
		if (mc_has_ctrl(lines[i]))
			abort();
	err[0] = '\0';
	if (mc_dataset_in_memory_bytes(d, &b, err, sizeof(err)) < 0 &&
	    mc_has_ctrl(err))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct mc_dataset d, e;
	static char buf[MC_DATASET_PATHS_MAX * (3 * MC_DATASET_PATH_MAX + 96)];
	char err[MC_ERR_MAX];
	char *s = mc_fuzz_str(data, size);

	if (mc_dataset_parse(s, &d, err, sizeof(err)) < 0) {
		if (mc_has_ctrl(err))
			abort();
	} else {
		check_messages(&d);
		mc_dataset_format(&d, buf, sizeof(buf));
		if (d.n && (mc_dataset_parse(buf, &e, err, sizeof(err)) < 0 ||
			    memcmp(&d, &e, sizeof(d))))
			abort();
	}
	free(s);
	return 0;
}
