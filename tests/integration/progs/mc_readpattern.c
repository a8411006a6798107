/*
 * mc_readpattern ROW FILE... - the tests' own measurement of the read
 * patterns memcore iobench times, written apart from it (no memcore
 * code): each FILE whole, rows of ROW bytes. Before each pattern the
 * files' page cache is dropped (POSIX_FADV_DONTNEED) and their resident
 * pages counted with mincore; then
 *   seq   read() of each file in order, 1 MiB at a time;
 *   shuf  the files mapped, one byte of every page of each row read, the
 *         rows in a shuffled order (rand_r, seed 1) across all files.
 * Prints one line per pattern, "PATTERN resident=N pages=N seconds=S",
 * then "ratio=R" (shuf over seq). Exits 1 with the reason on a failure.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* Drop, then count what stayed. */
static void drop(int n, char **files, unsigned long *res, unsigned long *pages)
{
	long pg = sysconf(_SC_PAGESIZE);

	*res = *pages = 0;
	for (int i = 0; i < n; i++) {
		int fd = open(files[i], O_RDONLY);
		struct stat st;
		unsigned char *vec;
		size_t np;
		void *m;

		if (fd < 0 || fstat(fd, &st) < 0)
			die(files[i]);
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		np = ((size_t)st.st_size + (size_t)pg - 1) / (size_t)pg;
		m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
		vec = malloc(np);
		if (m == MAP_FAILED || !vec || mincore(m, (size_t)st.st_size, vec))
			die("mincore");
		for (size_t k = 0; k < np; k++)
			*res += vec[k] & 1;
		*pages += np;
		munmap(m, (size_t)st.st_size);
		free(vec);
		close(fd);
	}
}

int main(int argc, char **argv)
{
	static char buf[1 << 20];
	long pg = sysconf(_SC_PAGESIZE);
	size_t row, nrows = 0, *fof, *rof;
	unsigned char **base;
	unsigned long res, pages, sum = 0;
	unsigned seed = 1;
	double t, seq, shuf;
	int n = argc - 2;

	if (argc < 3 || !(row = strtoul(argv[1], NULL, 10))) {
		fprintf(stderr, "usage: mc_readpattern ROW FILE...\n");
		return 1;
	}
	drop(n, argv + 2, &res, &pages);
	printf("seq resident=%lu pages=%lu", res, pages);
	t = now();
	for (int i = 0; i < n; i++) {
		int fd = open(argv[2 + i], O_RDONLY);
		ssize_t r;

		if (fd < 0)
			die(argv[2 + i]);
		while ((r = read(fd, buf, sizeof(buf))) > 0)
			sum += (unsigned char)buf[0];
		close(fd);
	}
	seq = now() - t;
	printf(" seconds=%.4f\n", seq);

	base = calloc((size_t)n, sizeof(*base));
	for (int i = 0; i < n; i++) {
		struct stat st;
		int fd = open(argv[2 + i], O_RDONLY);

		if (fd < 0 || fstat(fd, &st) < 0)
			die(argv[2 + i]);
		nrows += ((size_t)st.st_size + row - 1) / row;
		close(fd);
	}
	/* Each row as (file, offset, length). */
	fof = malloc(nrows * sizeof(*fof));
	rof = malloc(nrows * sizeof(*rof));
	{
		size_t k = 0;

		for (int i = 0; i < n; i++) {
			struct stat st;
			int fd = open(argv[2 + i], O_RDONLY);

			if (fd < 0 || fstat(fd, &st) < 0)
				die(argv[2 + i]);
			for (size_t o = 0; o < (size_t)st.st_size; o += row) {
				fof[k] = (size_t)i;
				rof[k++] = o;
			}
			close(fd);
		}
		for (size_t i = nrows - 1; i > 0; i--) {
			size_t j = (size_t)rand_r(&seed) % (i + 1), a = fof[i],
			       b = rof[i];

			fof[i] = fof[j];
			rof[i] = rof[j];
			fof[j] = a;
			rof[j] = b;
		}
	}
	drop(n, argv + 2, &res, &pages);
	printf("shuf resident=%lu pages=%lu", res, pages);
	{
		size_t *len = calloc((size_t)n, sizeof(*len));

		for (int i = 0; i < n; i++) {
			struct stat st;
			int fd = open(argv[2 + i], O_RDONLY);

			if (fd < 0 || fstat(fd, &st) < 0)
				die(argv[2 + i]);
			len[i] = (size_t)st.st_size;
			base[i] = mmap(NULL, len[i], PROT_READ, MAP_SHARED, fd, 0);
			if (base[i] == MAP_FAILED)
				die("mmap");
			close(fd);
		}
		t = now();
		for (size_t k = 0; k < nrows; k++) {
			size_t f = fof[k], end = rof[k] + row;

			if (end > len[f])
				end = len[f];
			for (size_t o = rof[k]; o < end; o += (size_t)pg)
				sum += base[f][o];
		}
		shuf = now() - t;
		free(len);
	}
	printf(" seconds=%.4f\n", shuf);
	printf("ratio=%.2f sum=%lu\n", seq > 0 ? shuf / seq : 0, sum);
	return 0;
}
