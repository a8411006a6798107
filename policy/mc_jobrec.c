/*
 * mc_jobrec.c - memcore's records in a job's AdminComment (mc_jobrec.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mc_jobrec.h"

#define RECS_MAX 256

size_t mc_jobrec_split(const char *text, const char **recs, size_t *lens,
		       size_t max, unsigned *dropped)
{
	const char *p = text ? strstr(text, MC_JOBREC_TAG) : NULL;
	size_t n = 0;

	*dropped = 0;
	if (!p)
		return 0;
	p += strlen(MC_JOBREC_TAG);
	while (*p && n < max) {
		const char *end = strchr(p, ';');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len > 8 && !strncmp(p, "dropped=", 8))
			*dropped = (unsigned)strtoul(p + 8, NULL, 10);
		else if (len) {
			recs[n] = p;
			lens[n++] = len;
		}
		p += len;
		if (*p == ';')
			p++;
	}
	return n;
}

/* The "step@host:" key of a record, its length; 0 when it has none. */
static size_t key_len(const char *rec, size_t len)
{
	const char *c = memchr(rec, ':', len);

	return c && memchr(rec, '@', (size_t)(c - rec)) ? (size_t)(c - rec) + 1
							: 0;
}

bool mc_jobrec_has(const char *text, const char *rec)
{
	const char *recs[RECS_MAX];
	size_t lens[RECS_MAX], n, rl = strlen(rec);
	unsigned dropped;

	n = mc_jobrec_split(text, recs, lens, RECS_MAX, &dropped);
	for (size_t i = 0; i < n; i++)
		if (lens[i] == rl && !memcmp(recs[i], rec, rl))
			return true;
	return false;
}

int mc_jobrec_merge(const char *cur, const char *rec, char *out,
		    size_t outlen, size_t max)
{
	const char *recs[RECS_MAX], *tag;
	size_t lens[RECS_MAX], n, rl = strlen(rec), kl, first = 0, block,
	       foreign, used;
	unsigned dropped;
	char head[32];
	bool keep[RECS_MAX];

	kl = key_len(rec, rl);
	if (!kl || strchr(rec, ';') || rl + strlen(MC_JOBREC_TAG) + 16 > max)
		return -1;
	if (!cur)
		cur = "";
	n = mc_jobrec_split(cur, recs, lens, RECS_MAX - 1, &dropped);
	/* The same step and node again: the new one replaces it. */
	for (size_t i = 0; i < n; i++)
		keep[i] = !(lens[i] >= kl && !memcmp(recs[i], rec, kl));
	recs[n] = rec;
	lens[n] = rl;
	keep[n++] = true;
	/* Oldest first out until the block fits. */
	for (;;) {
		block = strlen(MC_JOBREC_TAG);
		snprintf(head, sizeof(head), "dropped=%u;", dropped);
		if (dropped)
			block += strlen(head);
		for (size_t i = first; i < n; i++)
			if (keep[i])
				block += lens[i] + 1;
		if (block <= max + 1 || first + 1 >= n)
			break;
		if (keep[first])
			dropped++;
		first++;
	}
	tag = strstr(cur, MC_JOBREC_TAG);
	foreign = tag ? (size_t)(tag - cur) : strlen(cur);
	while (foreign && cur[foreign - 1] == ' ')
		foreign--;
	if (foreign + 1 + block + 1 > outlen)
		return -1;
	memcpy(out, cur, foreign);
	used = foreign;
	if (foreign)
		out[used++] = ' ';
	used += (size_t)sprintf(out + used, "%s", MC_JOBREC_TAG);
	if (dropped)
		used += (size_t)sprintf(out + used, "%s", head);
	for (size_t i = first; i < n; i++) {
		if (!keep[i])
			continue;
		memcpy(out + used, recs[i], lens[i]);
		used += lens[i];
		out[used++] = ';';
	}
	out[used - 1] = '\0';	/* no ';' after the last */
	return 0;
}
