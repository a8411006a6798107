/*
 * tests/asan/memcore_asan.c - linked into the ASan build of memcore.so
 * only (make integration-asan), never into the product.
 *
 * slurmd starts the job prolog and epilog (`slurmstepd spank prolog`)
 * with an environment of its own making, without the LD_PRELOAD of
 * the ASan runtime and the ASAN_OPTIONS the test gave slurmd. The runtime
 * then comes in
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

/*
 * The proof that a daemon's ASan was its first library, not memcore.so's
 * late dependency: with the ASan runtime preloaded, malloc as the process
 * resolves it lies in that runtime (dladdr names it); brought in by
 * memcore.so it is libc's (the heap is then not checked). Where the harness set MC_SAN_PROOF_DIR (slurmd, the
 * slurmstepd it execs, and the test's own srun), memcore.so's load writes
 * "<exe> preloaded|late" into MC_SAN_PROOF_DIR/<exe>.<pid>; lib.sh's
 * _mc_san_check reads them. One open, write and close: ASan's own report
 * file is opened only when there is something to report, since slurmstepd
 * closes every inherited descriptor at its start and a descriptor ASan
 * kept open would become another (a report written into slurmd's socket
 * to slurmctld was seen with verbosity=1).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((constructor)) static void mc_asan_proof(void)
{
	const char *dir = getenv("MC_SAN_PROOF_DIR");
	char exe[64] = "?", path[512], line[128];
	Dl_info where;
	void *m;
	int fd, n;

	if (!dir)
		return;
	fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, exe, sizeof(exe) - 1);
		exe[n > 0 ? n : 0] = '\0';
		exe[strcspn(exe, "\n")] = '\0';
		close(fd);
	}
	m = dlsym(RTLD_DEFAULT, "malloc");
	snprintf(path, sizeof(path), "%s/%s.%d", dir, exe, (int)getpid());
	n = snprintf(line, sizeof(line), "%s %s\n", exe,
		     m && dladdr(m, &where) && where.dli_fname &&
		     strstr(where.dli_fname, "asan") ? "preloaded" : "late");
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (write(fd, line, (size_t)n) < 0)
		n = 0;
	close(fd);
}
