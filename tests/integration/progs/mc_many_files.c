/*
 * mc_many_files DIR FILES DIRS - what a job that leaves a huge tree in
 * its staging directory does, quickly: makes DIRS directories d0..dN-1
 * under DIR (which must exist) and FILES empty files spread evenly over
 * them, each made with openat relative to its directory's descriptor (no
 * path resolved per file: about 1 us a file on tmpfs, a few on ext4).
 * Prints "made F files in D directories" and exits 0; a failure exits 1.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static int fill(int dfd, const char *dname, unsigned long n)
{
	char name[32];
	int sub, fd;

	if (mkdirat(dfd, dname, 0755) != 0)
		return -1;
	sub = openat(dfd, dname, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sub < 0)
		return -1;
	for (unsigned long i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "f%lu", i);
		fd = openat(sub, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
			    0644);
		if (fd < 0) {
			close(sub);
			return -1;
		}
		close(fd);
	}
	close(sub);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long files, dirs;
	char dname[32];
	int dfd;

	if (argc != 4) {
		fprintf(stderr, "usage: %s DIR FILES DIRS\n", argv[0]);
		return 1;
	}
	files = strtoul(argv[2], NULL, 10);
	dirs = strtoul(argv[3], NULL, 10);
	dfd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || dirs == 0) {
		perror(argv[1]);
		return 1;
	}
	for (unsigned long d = 0; d < dirs; d++) {
		/* the first files % dirs directories take one more */
		unsigned long n = files / dirs + (d < files % dirs);

		snprintf(dname, sizeof(dname), "d%lu", d);
		if (fill(dfd, dname, n) != 0) {
			perror(dname);
			return 1;
		}
	}
	printf("made %lu files in %lu directories\n", files, dirs);
	return 0;
}
