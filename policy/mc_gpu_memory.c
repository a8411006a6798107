/*
 * mc_gpu_memory.c - the one GPU-memory resolver (see mc_gpu_memory.h).
 */
#include "mc_gpu_memory.h"

#include <stdio.h>

#include "mc_parse.h"

const char *mc_mem_source_name(enum mc_mem_source s)
{
	switch (s) {
	case MC_MEM_SRC_NONE: return "none";
	case MC_MEM_SRC_CUDA: return "cuda";
	case MC_MEM_SRC_RSMI: return "rsmi";
	case MC_MEM_SRC_NVML: return "nvml";
	case MC_MEM_SRC_POLICY: return "policy";
	case MC_MEM_SRC_OPTION: return "option";
	case MC_MEM_SRC_GPU_TYPE: return "GpuTypeMemory";
	case MC_MEM_SRC_MIG_PROFILE: return "MIG profile";
	}
	return "none";
}

const char *mc_mem_source_key(enum mc_mem_source s)
{
	return s == MC_MEM_SRC_POLICY ? "GpuMemory" : mc_mem_source_name(s);
}

const char *mc_mem_source_text(enum mc_mem_source s, const char *type,
			       const char *measured_on, char *buf, size_t len)
{
	const char *t = type && *type ? type : NULL;

	switch (s) {
	case MC_MEM_SRC_OPTION:
		snprintf(buf, len, "--gpu-memory");
		break;
	case MC_MEM_SRC_POLICY:
		snprintf(buf, len, "memcore.conf GpuMemory=");
		break;
	case MC_MEM_SRC_GPU_TYPE:
		snprintf(buf, len, "memcore.conf GpuTypeMemory=%s%s",
			 t ? " for " : "", t ? t : "");
		break;
	case MC_MEM_SRC_MIG_PROFILE:
		snprintf(buf, len, "MIG profile%s%s", t ? " " : "",
			 t ? t : "");
		break;
	case MC_MEM_SRC_CUDA:
	case MC_MEM_SRC_RSMI:
	case MC_MEM_SRC_NVML:
		snprintf(buf, len, "%s", measured_on && *measured_on
			 ? measured_on : "this node");
		break;
	case MC_MEM_SRC_NONE:
	default:
		snprintf(buf, len, "no GpuTypeMemory= or GpuMemory=");
		break;
	}
	return buf;
}

uint64_t mc_gpu_memory(const struct mc_policy *p,
		       const struct mc_gpu_memory_in *in,
		       enum mc_mem_source *source)
{
	enum mc_mem_source src = MC_MEM_SRC_NONE;
	const char *type = in->type && *in->type ? in->type : NULL;
	uint64_t m = 0, mig = 0;
	bool is_mig = type && mc_mig_profile(type, &mig, NULL, 0) == 0 && mig;

	if (in->override) {
		m = in->override;
		src = MC_MEM_SRC_OPTION;
	} else if (in->measured && in->measured_is_slice) {
		m = in->measured;
		src = in->measured_source;
	} else if (is_mig && (m = mc_policy_gpu_type_memory(p, type))) {
		src = MC_MEM_SRC_GPU_TYPE;
	} else if (is_mig) {
		m = mig;
		src = MC_MEM_SRC_MIG_PROFILE;
	} else if (in->measured) {
		m = in->measured;
		src = in->measured_source;
	} else if (type && (m = mc_policy_gpu_type_memory(p, type))) {
		src = MC_MEM_SRC_GPU_TYPE;
	} else if ((m = p->gpu_memory_bytes)) {
		src = MC_MEM_SRC_POLICY;
	}
	if (source)
		*source = src;
	return m;
}
