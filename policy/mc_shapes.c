/*
 * mc_shapes.c - node records from slurmctld, grouped by shape (see
 * mc_shapes.h).
 */
#include "mc_shapes.h"
#include "mc_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int mc_gres_gpus(const char *gres, uint32_t *count, char *type,
		 size_t typelen)
{
	const char *s = gres;

	*count = 0;
	if (typelen)
		type[0] = '\0';
	if (!s || !strcmp(s, "(null)"))
		return 0;
	while (*s) {
		size_t len = strcspn(s, ",");
		char item[128], *paren, *last, *first_colon;
		unsigned long n = 1;

		/* A comma inside "(S:0-1,3)" is no separator. */
		const char *open = memchr(s, '(', len);

		if (open) {
			const char *close = strchr(open, ')');

			len = close ? (size_t)(close - s) + 1 : strlen(s);
			len += strcspn(s + len, ",");
		}
		if (len >= sizeof(item))
			return -1;
		memcpy(item, s, len);
		item[len] = '\0';
		s += len;
		if (*s == ',')
			s++;
		paren = strchr(item, '(');
		if (paren)
			*paren = '\0';
		if (strncmp(item, "gpu", 3) || (item[3] && item[3] != ':'))
			continue;
		first_colon = item[3] ? item + 3 : NULL;
		last = strrchr(item, ':');
		if (last) {
			char *end;

			if (last[1] >= '0' && last[1] <= '9') {
				n = strtoul(last + 1, &end, 10);
				if (*end || n > (1UL << 16))
					return -1;
				*last = '\0';
			}
		}
		/* what is left between "gpu:" and the count is the type */
		if (first_colon && first_colon[0] == ':' && first_colon[1] &&
		    typelen && !type[0]) {
			snprintf(type, typelen, "%s", first_colon + 1);
			/* "gpu:h100:no_consume:8": the type is the first word */
			type[strcspn(type, ":")] = '\0';
		}
		*count += (uint32_t)n;
	}
	return 0;
}

bool mc_same_shape(const struct mc_node_record *a,
		   const struct mc_node_record *b)
{
	return a->ram_bytes == b->ram_bytes && a->cores == b->cores &&
	       a->threads_per_core == b->threads_per_core &&
	       a->gpus == b->gpus && !strcmp(a->gpu_type, b->gpu_type);
}

size_t mc_shapes_group(const struct mc_node_record *nodes, size_t n,
		       size_t *shape_of)
{
	size_t shapes = 0;

	for (size_t i = 0; i < n; i++) {
		size_t j;

		/* The first earlier node of the same shape gives its number;
		 * quadratic, but partitions have thousands of nodes at most
		 * and few shapes. */
		for (j = 0; j < i; j++)
			if (mc_same_shape(&nodes[i], &nodes[j]))
				break;
		shape_of[i] = j < i ? shape_of[j] : shapes++;
	}
	return shapes;
}

uint64_t mc_shape_gpu_memory(const struct mc_policy *p,
			     const struct mc_node_record *r,
			     uint64_t override,
			     enum mc_mem_source *source)
{
	struct mc_gpu_memory_in in = {
		.override = override,
		.type = r->gpu_type,
	};

	return mc_gpu_memory(p, &in, source);
}

void mc_shape_node(const struct mc_node_record *r, struct mc_node *n)
{
	n->ram_bytes = r->ram_bytes;
	n->cores = r->cores;
	n->threads_per_core = r->threads_per_core ? r->threads_per_core : 1;
	n->gpus = r->gpus;
	/* slurmctld cannot tell an APU; UnifiedMemory=yes says it. */
	n->unified_memory = false;
}

const char *mc_shape_describe(const struct mc_node_record *r,
			      uint64_t gpu_memory_bytes, char *buf,
			      size_t buflen)
{
	char m[32], ram[32], thr[32] = "";

	if (r->threads_per_core > 1)
		snprintf(thr, sizeof(thr), " x %u threads",
			 r->threads_per_core);
	snprintf(buf, buflen, "%u x %s%s%s, %s, %u cores%s", r->gpus,
		 r->gpu_type[0] ? r->gpu_type : "GPU",
		 gpu_memory_bytes ? " " : "",
		 gpu_memory_bytes ? mc_fmt_bytes(gpu_memory_bytes, m, sizeof(m))
				  : "",
		 mc_fmt_bytes(r->ram_bytes, ram, sizeof(ram)), r->cores, thr);
	return buf;
}
