/*
 * mc_timeline.c - a step's memory over time, bounded (mc_timeline.h).
 */
#include <stdio.h>
#include <string.h>

#include "mc_timeline.h"

static const char b64[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

void mc_timeline_init(struct mc_timeline *tl, uint32_t interval_ms)
{
	memset(tl, 0, sizeof(*tl));
	tl->per_point = 1;
	tl->interval_ms = interval_ms ? interval_ms : 1;
	tl->oom_point = -1;
}

static uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* Halve the points: each pair becomes its maximum. */
static void merge_pairs(struct mc_timeline *tl)
{
	uint32_t m = 0;

	for (uint32_t i = 0; i < tl->n; i += 2, m++) {
		uint32_t j = i + 1 < tl->n ? i + 1 : i;

		tl->nr_bytes[m] = max64(tl->nr_bytes[i], tl->nr_bytes[j]);
		tl->file_bytes[m] = max64(tl->file_bytes[i], tl->file_bytes[j]);
		tl->cpu_milli[m] = tl->cpu_milli[i] > tl->cpu_milli[j]
				   ? tl->cpu_milli[i] : tl->cpu_milli[j];
	}
	if (tl->oom_point >= 0)
		tl->oom_point /= 2;
	tl->n = m;
	tl->per_point *= 2;
	/* The last point holds what its pair held. */
	tl->in_last = tl->per_point;
}

void mc_timeline_add(struct mc_timeline *tl, uint64_t t_usec, uint64_t nr,
		     uint64_t file, bool has_cpu, uint64_t cpu_usec,
		     uint64_t oom_kills)
{
	uint32_t cpu = 0;
	uint32_t i;

	if (tl->have_prev && has_cpu && t_usec > tl->prev_t_usec &&
	    cpu_usec >= tl->prev_cpu_usec) {
		uint64_t c = (cpu_usec - tl->prev_cpu_usec) * 1000ULL /
			     (t_usec - tl->prev_t_usec);

		cpu = c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
	}
	if (!tl->n || tl->in_last >= tl->per_point) {
		if (tl->n == MC_TIMELINE_POINTS)
			merge_pairs(tl);
		if (tl->in_last >= tl->per_point || !tl->n) {
			i = tl->n++;
			tl->nr_bytes[i] = tl->file_bytes[i] = 0;
			tl->cpu_milli[i] = 0;
			tl->in_last = 0;
		}
	}
	i = tl->n - 1;
	tl->nr_bytes[i] = max64(tl->nr_bytes[i], nr);
	tl->file_bytes[i] = max64(tl->file_bytes[i], file);
	if (cpu > tl->cpu_milli[i])
		tl->cpu_milli[i] = cpu;
	tl->in_last++;
	if (has_cpu)
		tl->has_cpu = true;
	if (tl->have_prev && oom_kills > tl->prev_oom_kills &&
	    tl->oom_point < 0)
		tl->oom_point = (int32_t)i;
	tl->prev_oom_kills = oom_kills;
	tl->have_prev = true;
	tl->prev_t_usec = t_usec;
	tl->prev_cpu_usec = cpu_usec;
}

void mc_timeline_oom_at_end(struct mc_timeline *tl)
{
	if (tl->n && tl->oom_point < 0)
		tl->oom_point = (int32_t)(tl->n - 1);
}

uint64_t mc_timeline_point_ms(const struct mc_timeline *tl)
{
	return (uint64_t)tl->per_point * tl->interval_ms;
}

/* v in levels of scale, rounded up: above 0 is at least 1. */
static unsigned level(uint64_t v, uint64_t scale)
{
	if (!v || !scale)
		return 0;
	if (v >= scale)
		return MC_TIMELINE_LEVELS;
	return (unsigned)((v * MC_TIMELINE_LEVELS + scale - 1) / scale);
}

int mc_timeline_encode(const struct mc_timeline *tl, char *buf, size_t len)
{
	uint64_t mem = 0, mib;
	uint32_t cpu = 0;
	char oom[16];
	int w;

	for (uint32_t i = 0; i < tl->n; i++) {
		mem = max64(mem, max64(tl->nr_bytes[i], tl->file_bytes[i]));
		if (tl->cpu_milli[i] > cpu)
			cpu = tl->cpu_milli[i];
	}
	if (!tl->has_cpu)
		cpu = 0;
	mib = (mem + (1ULL << 20) - 1) >> 20;
	if (tl->oom_point >= 0)
		snprintf(oom, sizeof(oom), "%d", tl->oom_point);
	else
		snprintf(oom, sizeof(oom), "x");
	w = snprintf(buf, len, "%llu~%llu~%u~%s~",
		     (unsigned long long)mc_timeline_point_ms(tl),
		     (unsigned long long)mib, cpu, oom);
	if (w < 0 || (size_t)w + 3 * (size_t)tl->n + 1 > len) {
		if (len)
			buf[0] = '\0';
		return -1;
	}
	for (uint32_t i = 0; i < tl->n; i++) {
		buf[w++] = b64[level(tl->nr_bytes[i], mib << 20)];
		buf[w++] = b64[level(tl->file_bytes[i], mib << 20)];
		buf[w++] = b64[level(tl->cpu_milli[i], cpu)];
	}
	buf[w] = '\0';
	return w;
}

/* The next '~'-ended unsigned number of text[*at..n). */
static int field(const char *text, size_t n, size_t *at, uint64_t *v,
		 bool *none)
{
	size_t i = *at;
	uint64_t x = 0;

	if (none)
		*none = false;
	if (none && i < n && text[i] == 'x') {
		*none = true;
		i++;
	} else {
		size_t d = i;

		while (i < n && text[i] >= '0' && text[i] <= '9') {
			if (x > (UINT64_MAX - 9) / 10)
				return -1;
			x = x * 10 + (uint64_t)(text[i] - '0');
			i++;
		}
		if (i == d)
			return -1;
	}
	if (i >= n || text[i] != '~')
		return -1;
	*v = x;
	*at = i + 1;
	return 0;
}

static int unb64(char c)
{
	const char *p = c ? strchr(b64, c) : NULL;

	return p ? (int)(p - b64) : -1;
}

int mc_timeline_decode(const char *text, size_t n, struct mc_timeline *tl)
{
	uint64_t ms, mib, cpu, oom;
	bool no_oom;
	size_t at = 0, pts;

	mc_timeline_init(tl, 1);
	if (field(text, n, &at, &ms, NULL) || field(text, n, &at, &mib, NULL) ||
	    field(text, n, &at, &cpu, NULL) ||
	    field(text, n, &at, &oom, &no_oom) || !ms || ms > UINT32_MAX ||
	    mib > (UINT64_MAX >> 20) / MC_TIMELINE_LEVELS || cpu > UINT32_MAX ||
	    (n - at) % 3)
		goto bad;
	pts = (n - at) / 3;
	if (pts > MC_TIMELINE_POINTS || (!no_oom && oom >= pts))
		goto bad;
	tl->interval_ms = (uint32_t)ms;
	for (size_t i = 0; i < pts; i++) {
		int a = unb64(text[at + 3 * i]), f = unb64(text[at + 3 * i + 1]),
		    c = unb64(text[at + 3 * i + 2]);

		if (a < 0 || f < 0 || c < 0)
			goto bad;
		tl->nr_bytes[i] = ((mib << 20) * (uint64_t)a) /
				  MC_TIMELINE_LEVELS;
		tl->file_bytes[i] = ((mib << 20) * (uint64_t)f) /
				    MC_TIMELINE_LEVELS;
		tl->cpu_milli[i] = (uint32_t)(cpu * (uint64_t)c /
					      MC_TIMELINE_LEVELS);
	}
	tl->n = (uint32_t)pts;
	tl->in_last = 1;
	tl->has_cpu = cpu > 0;
	tl->oom_point = no_oom ? -1 : (int32_t)oom;
	return 0;
bad:
	mc_timeline_init(tl, 1);
	return -1;
}
