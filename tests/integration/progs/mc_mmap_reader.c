/*
 * mc_mmap_reader FILE MIB [CMD] - write MIB MiB to FILE, then read it twice
 * through mmap, as a training job reads a memory-mapped dataset. CMD (run
 * with sh -c) runs between the two passes, while the mapping is live: the
 * tests run `memcore usage` there. Prints "read N MiB twice, sum S" and
 * exits 0; any failure exits 1 with the reason.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static uint64_t pass(const unsigned char *p, size_t len)
{
	uint64_t sum = 0;

	/* One byte per page: every page is faulted in, none is copied. */
	for (size_t i = 0; i < len; i += 4096)
		sum += p[i];
	return sum;
}

int main(int argc, char **argv)
{
	static unsigned char buf[1 << 20];
	size_t mib, len;
	unsigned char *p;
	uint64_t s1, s2;
	int fd;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: %s FILE MIB [CMD]\n", argv[0]);
		return 1;
	}
	mib = strtoul(argv[2], NULL, 10);
	len = mib << 20;
	fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 7 + 1);
	for (size_t m = 0; m < mib; m++) {
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
			perror("write");
			return 1;
		}
	}
	p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	s1 = pass(p, len);
	if (argc == 4 && system(argv[3]) != 0)
		fprintf(stderr, "mc_mmap_reader: '%s' failed\n", argv[3]);
	s2 = pass(p, len);
	if (s1 != s2) {
		fprintf(stderr, "mc_mmap_reader: passes differ\n");
		return 1;
	}
	munmap(p, len);
	close(fd);
	printf("read %zu MiB twice, sum %llu\n", mib, (unsigned long long)s1);
	return 0;
}
