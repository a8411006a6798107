/*
 * mc_parse.c - strict parsers and byte formatting (see mc_parse.h).
 *
 * Everything here parses by hand instead of with strtoull/strtod: those
 * accept leading blanks, signs, "inf", hex and locale decimal points, and
 * report overflow through errno, none of which a strict parser wants.
 */
#include "mc_parse.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define KIB ((uint64_t)1 << 10)
#define MIB ((uint64_t)1 << 20)
#define GIB ((uint64_t)1 << 30)
#define TIB ((uint64_t)1 << 40)

int mc_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * The common refusals, checked before any digit: a NULL or empty string, a
 * sign (a size or count is never negative, and "+5" is not how anyone
 * writes one) and anything that does not start with a digit.
 */
static int check_start(const char *s, char *err, size_t errlen)
{
	if (!s || !*s)
		return mc_err(err, errlen, "empty value");
	if (*s == '-')
		return mc_err(err, errlen, "negative value not allowed");
	if (!is_digit(*s))
		return mc_err(err, errlen, "not a number");
	return 0;
}

/* Leading digits into *v; returns the count of digits, -1 on overflow. */
static int scan_u64(const char **sp, uint64_t *v)
{
	const char *s = *sp;
	uint64_t acc = 0;
	int n = 0;

	for (; is_digit(*s); s++, n++) {
		unsigned d = (unsigned)(*s - '0');

		if (acc > (UINT64_MAX - d) / 10)
			return -1;
		acc = acc * 10 + d;
	}
	*sp = s;
	*v = acc;
	return n;
}

/* The exact size, in the largest unit that writes it whole and is not
 * below default_unit ("1536M" for 1.5G), into buf; "" when none does. */
static void whole_hint(unsigned __int128 bytes, uint64_t default_unit,
		       char *buf, size_t len)
{
	static const struct { uint64_t unit; char suffix; } u[] = {
		{ TIB, 'T' }, { GIB, 'G' }, { MIB, 'M' }, { KIB, 'K' },
	};

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(u) / sizeof(u[0]); i++) {
		if (u[i].unit < default_unit || bytes % u[i].unit ||
		    bytes / u[i].unit > UINT64_MAX)
			continue;
		snprintf(buf, len, "%llu%c",
			 (unsigned long long)(bytes / u[i].unit), u[i].suffix);
		return;
	}
}

/* mc_parse_size, and with allow_frac Slurm's own rounded figures. */
static int parse_size(const char *s, uint64_t default_unit, bool allow_frac,
		      uint64_t *out, char *err, size_t errlen)
{
	const char *p = s;
	uint64_t whole, frac = 0, frac_div = 1, unit;
	unsigned __int128 total;
	bool has_frac = false;

	if (check_start(s, err, errlen))
		return -1;
	if (scan_u64(&p, &whole) < 0)
		return mc_err(err, errlen, "too large");
	if (*p == '.') {
		p++;
		if (!is_digit(*p))
			return mc_err(err, errlen, "not a number");
		has_frac = true;
		/* 19 fraction digits are far below a byte for any unit; the
		 * rest only matter for rounding down, so they are dropped. */
		for (int n = 0; is_digit(*p); p++, n++) {
			if (n < 19) {
				frac = frac * 10 + (uint64_t)(*p - '0');
				frac_div *= 10;
			}
		}
	}
	if (!*p) {
		unit = default_unit ? default_unit : 1;
	} else {
		const char *suf = p;
		size_t len = strlen(suf);

		switch (toupper((unsigned char)suf[0])) {
		case 'K': unit = KIB; break;
		case 'M': unit = MIB; break;
		case 'G': unit = GIB; break;
		case 'T': unit = TIB; break;
		default: unit = 0; break;
		}
		/* K or KB (any case), all binary: what sbatch 22.05 takes for
		 * --mem* (str_to_mbytes: the letter, then at most a B); it
		 * refuses P, KiB and a bare B ("Invalid --mem
		 * specification"). */
		if (!unit || !(len == 1 || (len == 2 &&
					    toupper((unsigned char)suf[1]) ==
					    'B')))
			return mc_err(err, errlen, "unknown size suffix '%s' "
				      "(%s)", suf, MC_SIZE_SUFFIXES);
	}
	total = (unsigned __int128)whole * unit +
		(unsigned __int128)frac * unit / frac_div;
	if (has_frac && !allow_frac) {
		char hint[32];

		/* sbatch's --mem=1.5G: "Invalid --mem specification". */
		if ((unsigned __int128)frac * unit % frac_div == 0)
			whole_hint(total, default_unit ? default_unit : 1,
				   hint, sizeof(hint));
		else
			hint[0] = '\0';
		if (hint[0])
			return mc_err(err, errlen, "not a whole number: sizes "
				      "are whole, as Slurm takes them (%s)",
				      hint);
		return mc_err(err, errlen, "not a whole number: sizes are "
			      "whole, as Slurm takes them");
	}
	if (total > UINT64_MAX)
		return mc_err(err, errlen, "too large");
	*out = (uint64_t)total;
	return 0;
}

int mc_parse_size(const char *s, uint64_t default_unit, uint64_t *out,
		  char *err, size_t errlen)
{
	return parse_size(s, default_unit, false, out, err, errlen);
}

int mc_parse_size_rounded(const char *s, uint64_t default_unit,
			  uint64_t *out, char *err, size_t errlen)
{
	return parse_size(s, default_unit, true, out, err, errlen);
}

int mc_parse_count(const char *s, uint32_t max, uint32_t *out,
		   char *err, size_t errlen)
{
	const char *p = s;
	uint64_t v;

	if (check_start(s, err, errlen))
		return -1;
	if (scan_u64(&p, &v) < 0 || (!*p && v > max))
		return mc_err(err, errlen, "out of range (at most %u)", max);
	if (*p)
		return mc_err(err, errlen, "not a whole number");
	*out = (uint32_t)v;
	return 0;
}

int mc_parse_count_min1(const char *s, uint32_t max, uint32_t *out,
			char *err, size_t errlen)
{
	if (mc_parse_count(s, max, out, err, errlen) < 0)
		return -1;
	if (!*out)
		return mc_err(err, errlen, "must be at least 1");
	return 0;
}

/*
 * digits[.digits] as a mantissa of up to 19 significant digits and a power
 * of ten; *sp is left after the number. Returns -1 when there is no digit
 * before the point or none after it.
 */
static int scan_decimal(const char **sp, uint64_t *mant, int *exp10)
{
	const char *s = *sp;
	uint64_t m = 0;
	int e = 0;

	if (!is_digit(*s))
		return -1;
	for (; is_digit(*s); s++) {
		if (m < UINT64_MAX / 100)
			m = m * 10 + (uint64_t)(*s - '0');
		else
			e++;	/* precision beyond 18 digits is noise */
	}
	if (*s == '.') {
		s++;
		if (!is_digit(*s))
			return -1;
		for (; is_digit(*s); s++) {
			if (m < UINT64_MAX / 100) {
				m = m * 10 + (uint64_t)(*s - '0');
				e--;
			}
		}
	}
	*sp = s;
	*mant = m;
	*exp10 = e;
	return 0;
}

int mc_parse_ratio(const char *s, double min, double max, double *out,
		   char *err, size_t errlen)
{
	const char *p = s;
	uint64_t m;
	int e;
	double v;

	if (check_start(s, err, errlen))
		return -1;
	if (scan_decimal(&p, &m, &e) || *p)
		return mc_err(err, errlen, "not a number");
	v = (double)m;
	/* Dividing by an exact power of ten keeps "1.5" exactly 1.5. */
	for (; e < 0; e++)
		v /= 10;
	for (; e > 0 && v <= max; e--)
		v *= 10;
	if (!isfinite(v) || v < min || v > max)
		return mc_err(err, errlen, "out of range (%g to %g)", min, max);
	*out = v;
	return 0;
}

#define MC_PARAMS_MAX 1000000000000000ULL	/* 1e15 */

int mc_parse_params(const char *s, uint64_t *out, char *err, size_t errlen)
{
	const char *p = s, *sfx;
	uint64_t m;
	int e;

	if (check_start(s, err, errlen))
		return -1;
	if (scan_decimal(&p, &m, &e))
		return mc_err(err, errlen, "not a number");
	sfx = p;
	if (*p == 'e' || *p == 'E') {
		int neg = 0, x = 0;

		p++;
		if (*p == '+' || *p == '-')
			neg = *p++ == '-';
		if (!is_digit(*p))
			return mc_err(err, errlen, "not a number");
		for (; is_digit(*p); p++)
			if (x < 1000)
				x = x * 10 + (*p - '0');
		e += neg ? -x : x;
	} else if (*p) {
		switch (toupper((unsigned char)*p)) {
		case 'K': e += 3; break;
		case 'M': e += 6; break;
		case 'B': case 'G': e += 9; break;
		case 'T': e += 12; break;
		default: p--; break;	/* not one: named below */
		}
		p++;
	}
	/* The whole suffix ("GB", not its second letter): one letter is
	 * taken, and the message lists exactly those. */
	if (*p)
		return mc_err(err, errlen, "unknown suffix '%s' (one letter: "
			    "K, M, B or G (the same: 1e9), T; or an exponent "
			    "as in 6.7e9)", sfx);
	if (m == 0)
		return mc_err(err, errlen, "must be at least 1");
	/* Scale to parameters; a fraction of a parameter is dropped. */
	for (; e < 0 && m; e++)
		m /= 10;
	for (; e > 0; e--) {
		if (m > MC_PARAMS_MAX / 10)
			return mc_err(err, errlen, "too large (at most 1e15)");
		m *= 10;
	}
	if (m == 0)
		return mc_err(err, errlen, "must be at least 1");
	if (m > MC_PARAMS_MAX)
		return mc_err(err, errlen, "too large (at most 1e15)");
	*out = m;
	return 0;
}

static const char *const true_words[] = { "yes", "true", "1", "on", NULL };
static const char *const false_words[] = { "no", "false", "0", "off", NULL };

int mc_parse_bool(const char *s, int *out, char *err, size_t errlen)
{
	if (!s || !*s)
		return mc_err(err, errlen, "empty value");
	for (int i = 0; true_words[i]; i++) {
		if (!strcasecmp(s, true_words[i])) {
			*out = 1;
			return 0;
		}
		if (!strcasecmp(s, false_words[i])) {
			*out = 0;
			return 0;
		}
	}
	return mc_err(err, errlen, "expected yes or no");
}

int mc_parse_word(const char *s, const char *const *words, int *out,
		  char *err, size_t errlen)
{
	char list[256];
	size_t len = 0;

	if (!s || !*s)
		return mc_err(err, errlen, "empty value");
	for (int i = 0; words[i]; i++) {
		if (!strcasecmp(s, words[i])) {
			*out = i;
			return 0;
		}
	}
	list[0] = '\0';
	for (int i = 0; words[i] && len < sizeof(list); i++) {
		int n = snprintf(list + len, sizeof(list) - len, "%s%s",
				 i ? (words[i + 1] ? ", " : " or ") : "",
				 words[i]);
		if (n < 0)
			break;
		len += (size_t)n;
	}
	return mc_err(err, errlen, "expected %s", list);
}

const char *mc_fmt_bytes(uint64_t bytes, char *buf, size_t buflen)
{
	/* GiB at most: "1024 GiB allocated" next to "704 GiB needed" reads
	 * at a glance, where "1 TiB" makes the user convert. */
	static const char *const units[] = { "B", "KiB", "MiB", "GiB" };
	unsigned u = 0;
	uint64_t div = 1;
	unsigned __int128 hundredths;

	if (!buf || !buflen)
		return buf;
	while (u + 1 < sizeof(units) / sizeof(units[0]) &&
	       bytes / div >= 1024) {
		div *= 1024;
		u++;
	}
	if (bytes % div == 0) {
		snprintf(buf, buflen, "%llu %s",
			 (unsigned long long)(bytes / div), units[u]);
		return buf;
	}
	/* Round to the nearest hundredth in integers: no double rounding. */
	hundredths = ((unsigned __int128)bytes * 100 + div / 2) / div;
	snprintf(buf, buflen, "%llu.%02u %s",
		 (unsigned long long)(hundredths / 100),
		 (unsigned)(hundredths % 100), units[u]);
	return buf;
}

const char *mc_fmt_mem_option(uint64_t bytes, char *buf, size_t buflen)
{
	uint64_t g = bytes / GIB + (bytes % GIB != 0);
	uint64_t m = bytes / MIB + (bytes % MIB != 0);

	if (!buf || !buflen)
		return buf;
	/*
	 * Whole GiB, or 10 GiB and more (where rounding up to the next GiB
	 * adds under 10% and reads better): G. Smaller odd sizes: M, so
	 * that 513 MiB does not become a whole extra gigabyte.
	 */
	if (bytes % GIB == 0 || bytes >= 10 * GIB)
		snprintf(buf, buflen, "%lluG", (unsigned long long)g);
	else
		snprintf(buf, buflen, "%lluM", (unsigned long long)m);
	return buf;
}

/* Digits at s, at most 4 of them, into *v; how many were read. */
static size_t small_number(const char *s, unsigned *v)
{
	size_t i = 0;

	*v = 0;
	while (i < 5 && s[i] >= '0' && s[i] <= '9')
		*v = *v * 10 + (unsigned)(s[i++] - '0');
	return i <= 4 ? i : 0;
}

int mc_mig_profile(const char *s, uint64_t *bytes, char *profile,
		   size_t len)
{
	for (size_t i = 0; s && s[i]; i++) {
		unsigned g, m;
		size_t a, b, end;

		/* A word start: the string's, or after a separator. */
		if (i && isalnum((unsigned char)s[i - 1]))
			continue;
		a = small_number(s + i, &g);
		if (!a || !g || tolower((unsigned char)s[i + a]) != 'g' ||
		    s[i + a + 1] != '.')
			continue;
		b = small_number(s + i + a + 2, &m);
		end = i + a + 2 + b;
		if (!b || !m || tolower((unsigned char)s[end]) != 'g' ||
		    tolower((unsigned char)s[end + 1]) != 'b' ||
		    (s[end + 2] && s[end + 2] != '+' &&
		     isalnum((unsigned char)s[end + 2])))
			continue;
		end += 2;
		if (s[end] == '+') {	/* "1g.10gb+me": media extensions */
			size_t k = end + 1;

			while (isalnum((unsigned char)s[k]))
				k++;
			if (k > end + 1)
				end = k;
		}
		*bytes = (uint64_t)m << 30;
		if (profile && len) {
			size_t n = end - i < len - 1 ? end - i : len - 1;

			for (size_t k = 0; k < n; k++)
				profile[k] = (char)tolower(
					(unsigned char)s[i + k]);
			profile[n] = '\0';
		}
		return 0;
	}
	return -1;
}
