/*
 * mc_jobrec.c - memcore's records in a job's AdminComment (mc_jobrec.h).
 */
#include <inttypes.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mc_jobrec.h"

#define RECS_MAX 256
/* The aggregate's longest text: "dropped=" and u= at 10 digits, p= and o=
 * at 20, at= a step@host of sizeof(peak_at). */
#define AGG_MAX 200
#define AGG_KEY "dropped="

/* The digits of key in a "k=v,k=v" list of len bytes; false when absent. */
static bool field_u64(const char *s, size_t len, const char *key,
		      uint64_t *v)
{
	size_t kl = strlen(key);
	const char *p = s, *end = s + len;

	while (p < end) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *stop = comma ? comma : end;

		if ((size_t)(stop - p) > kl && !memcmp(p, key, kl) &&
		    p[kl] == '=') {
			/* digits only (strtoull would take "-1" as the
			 * largest count), at most UINT64_MAX */
			const char *d = p + kl + 1;

			if (d >= stop || !isdigit((unsigned char)*d))
				return false;
			errno = 0;
			*v = strtoull(d, NULL, 10);
			if (errno == ERANGE)
				*v = UINT64_MAX;
			return true;
		}
		p = stop + 1;
	}
	return false;
}

static void agg_parse(const char *s, size_t len, struct mc_jobrec_agg *a)
{
	const char *comma = memchr(s, ',', len), *at;
	uint64_t v;

	memset(a, 0, sizeof(*a));
	{
		const char *d = s + strlen(AGG_KEY);
		unsigned long long n = isdigit((unsigned char)*d)
				       ? strtoull(d, NULL, 10) : 0;

		a->steps = n > UINT_MAX ? UINT_MAX : (unsigned)n;
	}
	if (!comma) {	/* 0.3.0's bare count: no figures */
		a->unknown = a->steps;
		return;
	}
	len -= (size_t)(comma + 1 - s);
	s = comma + 1;
	if (field_u64(s, len, "p", &v))
		a->peak_bytes = v;
	if (field_u64(s, len, "o", &v))
		a->oom_kills = v;
	if (field_u64(s, len, "u", &v))
		a->unknown = v < a->steps ? (unsigned)v : a->steps;
	for (at = s; at && at < s + len;) {
		const char *stop = memchr(at, ',', (size_t)(s + len - at));
		size_t l = (size_t)((stop ? stop : s + len) - at);

		if (l > 3 && !memcmp(at, "at=", 3) && l - 3 < sizeof(a->peak_at)) {
			memcpy(a->peak_at, at + 3, l - 3);
			a->peak_at[l - 3] = '\0';
		}
		at = stop ? stop + 1 : NULL;
	}
}

/* The aggregate's text (no ';'), its length; 0 when there is none. */
static size_t agg_text(const struct mc_jobrec_agg *a, char *buf, size_t len)
{
	int n;

	if (!a->steps) {
		buf[0] = '\0';
		return 0;
	}
	n = snprintf(buf, len, AGG_KEY "%u,p=%" PRIu64 ",o=%" PRIu64 "%s%s",
		     a->steps, a->peak_bytes, a->oom_kills,
		     a->peak_at[0] ? ",at=" : "", a->peak_at);
	if (a->unknown && n >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, ",u=%u", a->unknown);
	return n < 0 ? 0 : (size_t)n;
}

/* Fold one dropped record into the aggregate. */
static void agg_add(struct mc_jobrec_agg *a, const char *rec, size_t len)
{
	const char *colon = memchr(rec, ':', len);
	uint64_t p = 0, o = 0;
	size_t kl;

	if (a->steps < UINT_MAX)	/* saturates: never back to 0 */
		a->steps++;
	if (!colon)
		return;
	kl = (size_t)(colon - rec);
	len -= kl + 1;
	field_u64(colon + 1, len, "p", &p);
	field_u64(colon + 1, len, "o", &o);
	a->oom_kills = a->oom_kills > UINT64_MAX - o ? UINT64_MAX
			: a->oom_kills + o;
	if ((p > a->peak_bytes || !a->peak_at[0]) && kl < sizeof(a->peak_at)) {
		a->peak_bytes = p;
		memcpy(a->peak_at, rec, kl);
		a->peak_at[kl] = '\0';
	}
}

size_t mc_jobrec_split(const char *text, const char **recs, size_t *lens,
		       size_t max, struct mc_jobrec_agg *agg)
{
	const char *p = mc_jobrec_block(text);
	struct mc_jobrec_agg none;
	size_t n = 0;

	if (!agg)
		agg = &none;
	memset(agg, 0, sizeof(*agg));
	if (!p)
		return 0;
	p += strlen(MC_JOBREC_TAG);
	while (*p && n < max) {
		const char *end = strchr(p, ';');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len > strlen(AGG_KEY) &&
		    !strncmp(p, AGG_KEY, strlen(AGG_KEY)))
			agg_parse(p, len, agg);
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

/* Where the value of a record's "s" (its timeline) is, and how long; false
 * when it has none or only MC_JOBREC_CUT already. */
static bool timeline_at(const char *rec, size_t len, size_t *at, size_t *vl)
{
	const char *colon = memchr(rec, ':', len), *end = rec + len, *p;

	for (p = colon ? colon + 1 : end; p < end;) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *stop = comma ? comma : end;

		if (stop - p >= 2 && p[0] == 's' && p[1] == '=') {
			*at = (size_t)(p + 2 - rec);
			*vl = (size_t)(stop - p - 2);
			return !(*vl == strlen(MC_JOBREC_CUT) &&
				 !memcmp(p + 2, MC_JOBREC_CUT, *vl));
		}
		p = stop + 1;
	}
	return false;
}

/* Is kept (kl bytes) rec (rl bytes) with its timeline cut for the bound? */
static bool is_cut_form(const char *kept, size_t kl, const char *rec,
			size_t rl)
{
	size_t at, vl, cl = strlen(MC_JOBREC_CUT), tail;

	if (!timeline_at(rec, rl, &at, &vl) || kl != rl - vl + cl)
		return false;
	tail = rl - at - vl;
	return !memcmp(kept, rec, at) && !memcmp(kept + at, MC_JOBREC_CUT, cl) &&
	       !memcmp(kept + at + cl, rec + at + vl, tail);
}

bool mc_jobrec_has(const char *text, const char *rec)
{
	const char *recs[RECS_MAX];
	size_t lens[RECS_MAX], n, rl = strlen(rec);

	n = mc_jobrec_split(text, recs, lens, RECS_MAX, NULL);
	for (size_t i = 0; i < n; i++)
		if ((lens[i] == rl && !memcmp(recs[i], rec, rl)) ||
		    is_cut_form(recs[i], lens[i], rec, rl))
			return true;
	return false;
}

int mc_jobrec_merge(const char *cur, const char *rec, char *out,
		    size_t outlen, size_t max)
{
	const char *recs[RECS_MAX], *tag;
	size_t lens[RECS_MAX], n, rl = strlen(rec), kl, first = 0, block,
	       foreign, used, hl;
	struct mc_jobrec_agg agg;
	char head[AGG_MAX + 1];
	bool keep[RECS_MAX], cut[RECS_MAX];
	size_t cut_at[RECS_MAX], cut_vl[RECS_MAX];

	kl = key_len(rec, rl);
	if (!kl || strchr(rec, ';') ||
	    rl + strlen(MC_JOBREC_TAG) + AGG_MAX + 2 > max)
		return -1;
	if (!cur)
		cur = "";
	n = mc_jobrec_split(cur, recs, lens, RECS_MAX - 1, &agg);
	/* The same step and node again: the new one replaces it. */
	for (size_t i = 0; i < n; i++)
		keep[i] = !(lens[i] >= kl && !memcmp(recs[i], rec, kl));
	recs[n] = rec;
	lens[n] = rl;
	keep[n++] = true;
	memset(cut, 0, sizeof(cut));
	/* Timelines out first, the oldest record's first; then the oldest
	 * records, into the aggregate, until the block fits. */
	for (;;) {
		size_t i;

		hl = agg_text(&agg, head, sizeof(head));
		block = strlen(MC_JOBREC_TAG) + (hl ? hl + 1 : 0);
		for (i = first; i < n; i++)
			if (keep[i])
				block += lens[i] + 1 - (cut[i] ? cut_vl[i] -
					 strlen(MC_JOBREC_CUT) : 0);
		if (block <= max + 1 || first + 1 >= n)
			break;
		for (i = first; i < n; i++)
			if (keep[i] && !cut[i] &&
			    timeline_at(recs[i], lens[i], &cut_at[i],
					&cut_vl[i]) &&
			    cut_vl[i] > strlen(MC_JOBREC_CUT))
				break;
		if (i < n) {
			cut[i] = true;
			continue;
		}
		if (keep[first])
			agg_add(&agg, recs[first], lens[first]);
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
	if (hl) {
		memcpy(out + used, head, hl);
		used += hl;
		out[used++] = ';';
	}
	for (size_t i = first; i < n; i++) {
		if (!keep[i])
			continue;
		if (cut[i]) {
			size_t tail = cut_at[i] + cut_vl[i];

			memcpy(out + used, recs[i], cut_at[i]);
			used += cut_at[i];
			used += (size_t)sprintf(out + used, MC_JOBREC_CUT);
			memcpy(out + used, recs[i] + tail, lens[i] - tail);
			used += lens[i] - tail;
		} else {
			memcpy(out + used, recs[i], lens[i]);
			used += lens[i];
		}
		out[used++] = ';';
	}
	out[used - 1] = '\0';	/* no ';' after the last */
	return 0;
}

const char *mc_jobrec_block(const char *text)
{
	return text ? strstr(text, MC_JOBREC_TAG) : NULL;
}

const char *mc_jobrec_pick(const char *admin, const char *system,
			   bool *from_system)
{
	bool sys = !mc_jobrec_block(admin) && mc_jobrec_block(system);

	if (from_system)
		*from_system = sys;
	return sys ? system : admin;
}

bool mc_jobrec_sql_safe(const char *text)
{
	for (const unsigned char *p = (const unsigned char *)text; *p; p++)
		if (*p < 0x20 || *p > 0x7e || *p == '\'' || *p == '"' ||
		    *p == '`' || *p == '\\')
			return false;
	return true;
}
