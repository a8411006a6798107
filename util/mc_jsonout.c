/*
 * mc_jsonout.c - the text of memcore's --json objects (mc_jsonout.h).
 *
 * jansson holds integers as signed 64-bit, so a byte figure above 2^63 - 1
 * (a saturated sum, a size from a job file) would print negative. Such a
 * figure is put in as a marker string and written back as its unsigned
 * digits when the text is made: every *_bytes (and *_usec) key reads
 * exactly, and mc_json_u64 does the same under any key.
 */
#include "mc_jsonout.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#define MC_JSON_U64_MARK "\001mc-u64:"

/*
 * 15 significant digits: a double's decimal part without the binary
 * noise of the 17 that jansson prints by default (cores busy 0.333, not
 * 0.33300000000000002); every figure memcore computes has fewer.
 */
#define MC_JSON_REAL_DIGITS 15

/* The keys of unsigned 64-bit figures: bytes and microseconds. */
static bool is_u64_key(const char *key)
{
	size_t n = strlen(key);

	return (n >= 6 && !strcmp(key + n - 6, "_bytes")) ||
	       (n >= 5 && !strcmp(key + n - 5, "_usec"));
}

json_t *mc_json_u64(uint64_t v)
{
	char m[48];

	if (v <= (uint64_t)INT64_MAX)
		return json_integer((json_int_t)v);
	snprintf(m, sizeof(m), MC_JSON_U64_MARK "%llu\001",
		 (unsigned long long)v);
	return json_string(m);
}

static void mark_u64(json_t *j)
{
	const char *key;
	json_t *v;
	void *tmp;
	size_t i;

	if (json_is_array(j)) {
		json_array_foreach(j, i, v)
			mark_u64(v);
		return;
	}
	if (!json_is_object(j))
		return;
	json_object_foreach_safe(j, tmp, key, v) {
		if (json_is_integer(v) && json_integer_value(v) < 0 &&
		    is_u64_key(key))
			json_object_set_new(j, key, mc_json_u64(
				(uint64_t)json_integer_value(v)));
		else
			mark_u64(v);
	}
}

/* text with each "\u0001mc-u64:N\u0001" string (mark_u64) as N, in place:
 * the digits are shorter than the marker around them. */
static void unmark(char *text)
{
	static const char open[] = "\"\\u0001mc-u64:";
	static const char close[] = "\\u0001\"";
	char *w = text, *p = text, *m;

	while ((m = strstr(p, open)) != NULL) {
		char *d = m + sizeof(open) - 1, *e = d;

		while (*e >= '0' && *e <= '9')
			e++;
		memmove(w, p, (size_t)(m - p));
		w += m - p;
		if (strncmp(e, close, sizeof(close) - 1)) {
			/* not a marker after all: as it was */
			memmove(w, m, (size_t)(d - m));
			w += d - m;
			p = d;
			continue;
		}
		memmove(w, d, (size_t)(e - d));
		w += e - d;
		p = e + sizeof(close) - 1;
	}
	memmove(w, p, strlen(p) + 1);
}

char *mc_json_dumps(json_t *o)
{
	char *text;

	mark_u64(o);
	text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
			  JSON_REAL_PRECISION(MC_JSON_REAL_DIGITS));
	if (text)
		unmark(text);
	return text;
}
