/*
 * mc_climb STEP_MIB INTERVAL_MS MAX_MIB HOLD_MS - memory that climbs in
 * known steps, as a training run whose cache or leak grows: touch STEP_MIB
 * MiB more of anonymous memory every INTERVAL_MS until MAX_MIB (0: until
 * the kernel kills it), then hold it HOLD_MS. Prints "climbed to N MiB"
 * and exits 0; an OOM kill ends it with SIGKILL first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static void sleep_ms(unsigned long ms)
{
	struct timespec t = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };

	while (nanosleep(&t, &t) != 0)
		;
}

int main(int argc, char **argv)
{
	unsigned long step, interval, max, hold, held = 0;

	if (argc != 5) {
		fprintf(stderr, "usage: %s STEP_MIB INTERVAL_MS MAX_MIB "
			"HOLD_MS\n", argv[0]);
		return 1;
	}
	step = strtoul(argv[1], NULL, 10);
	interval = strtoul(argv[2], NULL, 10);
	max = strtoul(argv[3], NULL, 10);
	hold = strtoul(argv[4], NULL, 10);
	if (!step)
		return 1;
	while (!max || held < max) {
		size_t len = (size_t)step << 20;
		unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		memset(p, 1, len);
		held += step;
		sleep_ms(interval);
	}
	sleep_ms(hold);
	printf("climbed to %lu MiB\n", held);
	return 0;
}
