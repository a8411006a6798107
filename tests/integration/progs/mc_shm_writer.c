/*
 * mc_shm_writer FILE MIB - write MIB MiB into FILE on a tmpfs (/dev/shm),
 * as a DataLoader that passes batches through shared memory. The file is
 * left in place (as a killed job leaves it); the caller removes it.
 * Prints "wrote N MiB" and exits 0 if the kernel let it.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static unsigned char buf[1 << 20];
	size_t mib;
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: %s FILE MIB\n", argv[0]);
		return 1;
	}
	mib = strtoul(argv[2], NULL, 10);
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	memset(buf, 0x5a, sizeof(buf));
	for (size_t m = 0; m < mib; m++) {
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
			perror("write");
			return 1;
		}
	}
	close(fd);
	printf("wrote %zu MiB\n", mib);
	return 0;
}
