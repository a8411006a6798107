/*
 * mc_hold ANON_MIB HOLD_S [FILE FILE_MIB] [AFTER_S] - what a training step
 * does to its memory, in a known shape: touch ANON_MIB MiB of anonymous
 * memory; with FILE, write FILE_MIB MiB to it and read every page of it
 * through mmap (a memory-mapped dataset, page cache charged to the step);
 * hold all of it for HOLD_S seconds; free the anonymous memory; sleep
 * AFTER_S more seconds (default 0) with the mapping still live. FILE_MIB
 * 0 maps nothing. Once everything is touched it creates FILE.ready (when
 * FILE is given), for a test that measures while it holds. Prints
 * "held A MiB anon, F MiB mapped" and exits 0; a failure exits 1.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char buf[1 << 20];
	size_t anon_mib, file_mib = 0, len;
	unsigned hold, after = 0;
	unsigned char *anon, *map = NULL;
	volatile unsigned long sum = 0;
	int fd;

	if (argc != 3 && argc != 5 && argc != 6) {
		fprintf(stderr, "usage: %s ANON_MIB HOLD_S [FILE FILE_MIB] "
			"[AFTER_S]\n", argv[0]);
		return 1;
	}
	anon_mib = strtoul(argv[1], NULL, 10);
	hold = (unsigned)strtoul(argv[2], NULL, 10);
	if (argc >= 5)
		file_mib = strtoul(argv[4], NULL, 10);
	if (file_mib) {
		fd = open(argv[3], O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (fd < 0) {
			perror(argv[3]);
			return 1;
		}
		memset(buf, 7, sizeof(buf));
		for (size_t i = 0; i < file_mib; i++)
			if (write(fd, buf, sizeof(buf)) != sizeof(buf)) {
				perror("write");
				return 1;
			}
		fsync(fd);	/* clean pages: reclaimable page cache */
		map = mmap(NULL, file_mib << 20, PROT_READ, MAP_SHARED, fd, 0);
		if (map == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		for (size_t i = 0; i < file_mib << 20; i += 4096)
			sum += map[i];
		close(fd);
	}
	if (argc == 6)
		after = (unsigned)strtoul(argv[5], NULL, 10);
	else if (argc == 3)
		after = 0;
	len = anon_mib << 20;
	if (len) {
		anon = mmap(NULL, len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (anon == MAP_FAILED) {
			perror("mmap anon");
			return 1;
		}
		for (size_t i = 0; i < len; i += 4096)
			anon[i] = 1;
	}
	if (argc >= 5) {
		char ready[4096];

		snprintf(ready, sizeof(ready), "%s.ready", argv[3]);
		fd = open(ready, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd >= 0)
			close(fd);
	}
	sleep(hold);
	if (len)
		munmap(anon, len);
	sleep(after);
	printf("held %zu MiB anon, %zu MiB mapped\n", anon_mib, file_mib);
	return 0;
}
