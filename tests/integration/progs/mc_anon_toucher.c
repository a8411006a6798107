/*
 * mc_anon_toucher MIB - allocate MIB MiB of anonymous memory and touch
 * every page, as a process whose tensors outgrow its --mem. Prints
 * "touched N MiB" and exits 0 if the kernel let it; an OOM kill ends it
 * with SIGKILL first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

int main(int argc, char **argv)
{
	size_t mib, len;
	unsigned char *p;

	if (argc != 2) {
		fprintf(stderr, "usage: %s MIB\n", argv[0]);
		return 1;
	}
	mib = strtoul(argv[1], NULL, 10);
	len = mib << 20;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	for (size_t i = 0; i < len; i += 4096)
		p[i] = 1;
	printf("touched %zu MiB\n", mib);
	return 0;
}
