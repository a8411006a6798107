/*
 * fuzz.h - shared by the libFuzzer targets in tests/fuzz/: each defines
 * LLVMFuzzerTestOneInput(); clang builds them with -fsanitize=fuzzer
 * (make fuzz), and replay.c runs the same function over the corpus files
 * under ASan+UBSan with gcc (make check), so every crash once found stays
 * a regression test.
 */
#ifndef MC_FUZZ_H
#define MC_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input as a NUL-terminated string (a parser's contract); the caller
 * frees it. Embedded NULs simply end the string early. */
static inline char *mc_fuzz_str(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

#endif
