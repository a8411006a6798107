/*
 * mc_mmap_shuffle FILE PASSES [SEED [shared]] - read an existing FILE
 * through mmap,
 * one byte of each page, in a new random order each pass, PASSES times:
 * what a training job does to a memory-mapped dataset it shuffles (the
 * Hugging Face datasets library maps its Arrow files and reads rows in
 * shuffled order). The file's cached pages are dropped first (fsync, then
 * POSIX_FADV_DONTNEED), so that every page this process reads is read
 * from disk and charged to its own memory cgroup, whoever wrote the file;
 * with "shared", they are kept: a second reader of a dataset another job
 * reads (the pages it finds cached stay charged to whoever read them in).
 * Prints "read N pages x P passes in shuffled order, sum S" and exits 0;
 * any failure exits 1 with the reason.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* xorshift64: the same order for the same seed, no libc state. */
static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

int main(int argc, char **argv)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned long passes;
	uint64_t seed = 0x9e3779b97f4a7c15ULL, sum = 0, first = 0;
	uint32_t *order;
	size_t pages, len;
	unsigned char *p;
	struct stat st;
	int fd;

	if (argc < 3 || argc > 5 || (argc == 5 && strcmp(argv[4], "shared"))) {
		fprintf(stderr, "usage: %s FILE PASSES [SEED [shared]]\n",
			argv[0]);
		return 1;
	}
	passes = strtoul(argv[2], NULL, 10);
	if (argc >= 4)
		seed ^= strtoull(argv[3], NULL, 10);
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		perror(argv[1]);
		return 1;
	}
	len = (size_t)st.st_size;
	pages = len / (size_t)page;
	if (!pages || pages > UINT32_MAX || !passes) {
		fprintf(stderr, "mc_mmap_shuffle: %s: empty, too large, or 0 "
			"passes\n", argv[1]);
		return 1;
	}
	/* Written back, then dropped: clean pages only leave the cache. */
	if (argc < 5 &&
	    (fsync(fd) < 0 || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED))) {
		perror("fsync/posix_fadvise");
		return 1;
	}
	p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	order = malloc(pages * sizeof(*order));
	if (p == MAP_FAILED || !order) {
		perror("mmap/malloc");
		return 1;
	}
	/* One page per fault: read-around's size is the filesystem's (a
	 * FUSE or network mount reads megabytes per fault), and under a
	 * tight limit the pages it brings evict the ones still wanted; the
	 * re-reads then follow from the order alone. */
	if (madvise(p, len, MADV_RANDOM) < 0) {
		perror("madvise");
		return 1;
	}
	for (size_t i = 0; i < pages; i++)
		order[i] = (uint32_t)i;
	for (unsigned long n = 0; n < passes; n++) {
		uint64_t s = 0;

		/* Fisher-Yates: every page once per pass. */
		for (size_t i = pages - 1; i > 0; i--) {
			size_t j = (size_t)(next_rand(&seed) % (i + 1));
			uint32_t t = order[i];

			order[i] = order[j];
			order[j] = t;
		}
		for (size_t i = 0; i < pages; i++)
			s += p[(size_t)order[i] * (size_t)page];
		if (n == 0)
			first = s;
		else if (s != first) {
			fprintf(stderr, "mc_mmap_shuffle: pass %lu read other "
				"data\n", n + 1);
			return 1;
		}
		sum += s;
	}
	munmap(p, len);
	free(order);
	close(fd);
	printf("read %zu pages x %lu passes in shuffled order, sum %llu\n",
	       pages, passes, (unsigned long long)sum);
	return 0;
}
