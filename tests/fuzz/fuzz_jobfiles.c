/*
 * fuzz_jobfiles.c - the job's files as a user writes them: the first byte
 * picks the reader (a Hugging Face config.json, a DeepSpeed ds_config.json,
 * the MEMCORE_JOB_FILES figures slurmstepd parses, a safetensors header);
 * the rest is the text.
 * A parsed file's figures must survive the trip to slurmstepd unchanged.
 */
#include "fuzz.h"
#include "mc_dsconfig.h"
#include "mc_hfconfig.h"
#include "mc_jobfiles.h"
#include "mc_safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mc_jobfiles f, g;
	char err[MC_ERR_MAX], buf[1024];
	char *s;

	if (size < 1)
		return 0;
	memset(&f, 0, sizeof(f));
	s = mc_fuzz_str(data + 1, size - 1);
	switch (data[0] % 4) {
	case 0:
		if (mc_hfconfig_parse((const char *)data + 1, size - 1, "c", 0,
				      &f.model, err, sizeof(err)) == 0) {
			f.has_model = true;
			strcpy(f.model_name, "config.json");
			if (!f.model.params || f.model.largest_layer_params >
			    f.model.params)
				abort();
		}
		break;
	case 1:
		if (mc_dsconfig_parse((const char *)data + 1, size - 1, "d",
				      &f.ds, err, sizeof(err)) == 0) {
			f.has_ds = true;
			strcpy(f.ds_name, "ds.json");
			if (f.ds.stage > 3)
				abort();
		}
		break;
	case 3: {
		/* the largest tensor is one of those summed */
		struct mc_st_figures st;

		memset(&st, 0, sizeof(st));
		if (mc_safetensors_header((const char *)data + 1, size - 1,
					  UINT64_MAX, "h", &st, err,
					  sizeof(err)) == 0 &&
		    st.largest_params > st.params)
			abort();
		break;
	}
	default:
		(void)mc_jobfiles_parse(s, &g, err, sizeof(err));
		break;
	}
	if (f.has_model || f.has_ds) {
		mc_jobfiles_format(&f, buf, sizeof(buf));
		if (mc_jobfiles_parse(buf, &g, err, sizeof(err)) < 0 ||
		    g.model.params != f.model.params ||
		    g.ds.stage != f.ds.stage)
			abort();
	}
	free(s);
	return 0;
}
