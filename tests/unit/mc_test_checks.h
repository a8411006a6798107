/*
 * mc_test_checks.h - the expected figures of a table row: each a field of
 * what the row gives (named as written, found by offset and size) with
 * its value worked out by hand, compared by one function that names the
 * row and the field in a failure. For integer, bool and enum fields.
 * Header-only (each test is one .c file linked with libmemcore.a); include
 * it after <cmocka.h>.
 */
#ifndef MC_TEST_CHECKS_H
#define MC_TEST_CHECKS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct mc_check {
	const char *what;	/* NULL ends a list */
	size_t off, size;
	uint64_t want;
};

/* Field f of a T is to be w. */
#define MC_CHECK(T, f, w) { #f, offsetof(T, f), sizeof(((T *)0)->f), \
			    (uint64_t)(w) }

static inline uint64_t mc_check_field(const void *base, size_t off,
				      size_t size)
{
	union {
		uint8_t u8;
		uint16_t u16;
		uint32_t u32;
		uint64_t u64;
	} u;

	if (size != 1 && size != 2 && size != 4 && size != 8)
		fail_msg("a field of %zu bytes", size);
	memcpy(&u, (const char *)base + off, size);
	return size == 1 ? u.u8 : size == 2 ? u.u16 : size == 4 ? u.u32
								  : u.u64;
}

/* Each check of the list c against got (a T of MC_CHECK), up to the first
 * without what; a difference fails, naming row and field. */
static inline void mc_assert_checks(const char *row, const void *got,
				    const struct mc_check *c)
{
	for (; c->what; c++) {
		uint64_t mask = c->size < 8 ?
				((uint64_t)1 << (8 * c->size)) - 1 : UINT64_MAX;
		uint64_t have = mc_check_field(got, c->off, c->size);

		/* as signed too: -1 reads as -1 */
		if (have != (c->want & mask))
			fail_msg("%s: %s is %llu (%lld), want %lld", row,
				 c->what, (unsigned long long)have,
				 (long long)(c->size == 4 ? (int32_t)have
							  : (int64_t)have),
				 (long long)(c->size == 4 ? (int32_t)c->want
							  : (int64_t)c->want));
	}
}

#endif
