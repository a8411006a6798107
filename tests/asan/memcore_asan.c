/*
 * tests/asan/memcore_asan.c - linked into the ASan build of memcore.so
 * only (make integration-asan), never into the product.
 *
 * slurmd starts the job prolog and epilog (`slurmstepd spank prolog`)
 * with an environment of its own making, without the LD_PRELOAD of
 * libasan and the ASAN_OPTIONS the test gave slurmd. libasan then comes in
 * as memcore.so's dependency, and refuses to run unless it is the first
 * library ("ASan runtime does not come first"): the epilog fails and the
 * node drains. The runtime asks the program for default options at its
 * start, and finds this definition in the library that brought it in, so
 * the check is turned off there; such a process checks memcore's own code
 * (stack, globals, UBSan) but not the heap, hence no leak check either.
 * Where libasan was preloaded (slurmd, slurmstepd) it has started before
 * memcore.so is loaded and never sees this; ASAN_OPTIONS still come after
 * these defaults where they are set.
 */
const char *__asan_default_options(void);

const char *__asan_default_options(void)
{
	return "verify_asan_link_order=0:detect_leaks=0";
}
