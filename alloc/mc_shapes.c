/*
 * mc_shapes.c - node records from slurmctld, grouped by shape (see
 * mc_shapes.h).
 */
#include "mc_shapes.h"
#include "mc_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The next entry of a Gres string into item ("gpu:h100:8", its "(S:0-1)"
 * cut off; a comma inside the parentheses is no separator), *s moved past
 * it. Returns 1, 0 at the end, -1 when an entry is too long.
 */
static int next_item(const char **s, char *item, size_t size)
{
	size_t len;
	const char *open;
	char *paren;

	if (!**s)
		return 0;
	len = strcspn(*s, ",");
	open = memchr(*s, '(', len);
	if (open) {
		const char *close = strchr(open, ')');

		len = close ? (size_t)(close - *s) + 1 : strlen(*s);
		len += strcspn(*s + len, ",");
	}
	if (len >= size)
		return -1;
	memcpy(item, *s, len);
	item[len] = '\0';
	*s += len;
	if (**s == ',')
		(*s)++;
	paren = strchr(item, '(');
	if (paren)
		*paren = '\0';
	return 1;
}

int mc_gres_count(const char *gres, const char *name, uint32_t *count)
{
	size_t nl = strlen(name);
	const char *s = gres;
	uint64_t total = 0;
	char item[128];
	int rc;

	*count = 0;
	if (!s || !strcmp(s, "(null)"))
		return 0;
	while ((rc = next_item(&s, item, sizeof(item))) > 0) {
		char *last, *end;
		unsigned long n = 1;

		if (strncmp(item, name, nl) || (item[nl] && item[nl] != ':'))
			continue;
		last = strrchr(item, ':');
		if (last && last[1] >= '0' && last[1] <= '9') {
			n = strtoul(last + 1, &end, 10);
			if (*end || n > (1UL << 24))
				return -1;
		}
		total += n;
	}
	if (rc < 0)
		return -1;
	*count = total > UINT32_MAX ? UINT32_MAX : (uint32_t)total;
	return 0;
}

int mc_gres_gpus(const char *gres, uint32_t *count, char *type,
		 size_t typelen)
{
	const char *s = gres;
	char item[128];
	int rc;

	*count = 0;
	if (typelen)
		type[0] = '\0';
	if (!s || !strcmp(s, "(null)"))
		return 0;
	while ((rc = next_item(&s, item, sizeof(item))) > 0) {
		char *last, *first_colon;
		unsigned long n = 1;

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
			/* snprintf "%s"'s bytes (cut to fit), without its
			 * format parsing on every node of a partition */
			size_t len = strnlen(first_colon + 1, typelen - 1);

			memcpy(type, first_colon + 1, len);
			type[len] = '\0';
			/* "gpu:h100:no_consume:8": the type is the first word */
			type[strcspn(type, ":")] = '\0';
		}
		*count += (uint32_t)n;
	}
	return rc < 0 ? -1 : 0;
}

bool mc_same_shape(const struct mc_node_record *a,
		   const struct mc_node_record *b)
{
	return a->ram_bytes == b->ram_bytes && a->cores == b->cores &&
	       a->threads_per_core == b->threads_per_core &&
	       a->sockets == b->sockets &&
	       a->gpus == b->gpus && !strcmp(a->gpu_type, b->gpu_type) &&
	       a->shards == b->shards && a->mps == b->mps;
}

size_t mc_shapes_group(const struct mc_node_record *nodes, size_t n,
		       size_t *shape_of)
{
	size_t shapes = 0;

	for (size_t i = 0; i < n; i++) {
		size_t j;

		/* The node before, when of the same shape (a partition's
		 * nodes come in runs of one shape: 10,000 nodes in three
		 * runs took 37 ms without this); else the first earlier
		 * node of the same shape gives its number. */
		if (i && mc_same_shape(&nodes[i], &nodes[i - 1])) {
			shape_of[i] = shape_of[i - 1];
			continue;
		}
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
