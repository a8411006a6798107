/*
 * mc_jsonout.h - the text of memcore's --json objects: indented, keys in
 * insertion order, every unsigned 64-bit figure exact (jansson's integers
 * are signed 64-bit) and reals without binary noise.
 */
#ifndef MC_JSONOUT_H
#define MC_JSONOUT_H

#include <stdint.h>

#include <jansson.h>

/* A uint64_t, exact above 2^63 - 1 too, under any key. */
json_t *mc_json_u64(uint64_t v);

/*
 * o as text (malloc'd; NULL when out of memory). An integer of a *_bytes
 * or *_usec key that reads negative is a uint64_t above 2^63 - 1 that
 * json_integer() wrapped: it is written as its unsigned digits. o is
 * changed (the markers for them), so print it once.
 */
char *mc_json_dumps(json_t *o);

#endif
