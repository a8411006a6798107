/*
 * mc_list.c - Slurm-style index lists (see mc_list.h).
 */
#include "mc_list.h"
#include "mc_util.h"

#include <stdio.h>
#include <string.h>

/* Read one decimal index at *p; advances *p. -1 when there is none or it
 * is above MC_LIST_INDEX_MAX (which also stops any overflow). */
static long read_index(const char **p)
{
	const char *s = *p;
	unsigned long v = 0;

	if (*s < '0' || *s > '9')
		return -1;
	while (*s >= '0' && *s <= '9') {
		v = v * 10 + (unsigned long)(*s - '0');
		if (v > MC_LIST_INDEX_MAX)
			return -1;
		s++;
	}
	*p = s;
	return (long)v;
}

int mc_list_parse(const char *s, unsigned *idx, size_t max)
{
	size_t n = 0;

	if (!s || !*s)
		return -1;
	for (;;) {
		long lo = read_index(&s), hi;

		if (lo < 0)
			return -1;
		hi = lo;
		if (*s == '-') {
			s++;
			hi = read_index(&s);
			if (hi < lo)
				return -1;
		}
		for (long v = lo; v <= hi; v++) {
			if (n >= max)
				return -1;
			if (idx)
				idx[n] = (unsigned)v;
			n++;
		}
		if (*s == '\0')
			break;
		if (*s != ',')
			return -1;
		s++;
	}
	return (int)n;
}

const char *mc_list_format(const unsigned *idx, size_t n, char *buf,
			   size_t buflen)
{
	size_t used = 0;

	if (!buflen)
		return buf;
	buf[0] = '\0';
	for (size_t i = 0; i < n;) {
		size_t j = i;
		int w;

		while (j + 1 < n && idx[j + 1] == idx[j] + 1)
			j++;
		size_t before = used;

		if (j > i)
			w = mc_appendf(buf, buflen, &used, "%s%u-%u",
				       used ? "," : "", idx[i], idx[j]);
		else
			w = mc_appendf(buf, buflen, &used, "%s%u",
				       used ? "," : "", idx[i]);
		if (w < 0) {
			buf[before] = '\0';	/* never a half-written entry */
			break;
		}
		i = j + 1;
	}
	return buf;
}
