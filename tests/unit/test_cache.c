/*
 * test_cache.c - the node-facts cache (mc_cache.h): what slurmd writes,
 * slurmstepd reads back unchanged; every file it must not trust (missing,
 * corrupt, truncated, another memcore, another host, another topology, a
 * topology edited since, loose permissions, not a file) is refused with a
 * reason, and the facts handed back are zeroed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <cmocka.h>

#include "mc_cache.h"
#include "mc_topology.h"

#define H200 "lenovo-sd665nv3-2xepyc9555-nps4-4xh200.xml"
#define G4DN "aws-g4dn-metal-2xxeon8259cl-8xt4.xml"

static char dir[PATH_MAX];
static struct mc_node_facts facts, back;

static void data_path(const char *name, char *buf, size_t len)
{
	const char *top = getenv("MC_TOP");

	snprintf(buf, len, "%s/tests/data/%s", top ? top : ".", name);
}

static void cache_path(const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/mc-test-cache.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void load(const char *name)
{
	char xml[PATH_MAX], err[512];

	data_path(name, xml, sizeof(xml));
	assert_int_equal(mc_topology_load(xml, &facts, err, sizeof(err)), 0);
}

/* Write the facts of `name`, return the cache path in buf. */
static void write_cache(const char *topo, const char *file, char *buf,
			size_t len)
{
	char err[512];

	load(topo);
	cache_path(file, buf, len);
	assert_int_equal(mc_cache_write(buf, &facts, err, sizeof(err)), 0);
}

static void expect_refused(const char *path, const char *want,
			   const char *needle)
{
	char err[512];

	memset(&back, 0x5a, sizeof(back));
	assert_int_equal(mc_cache_read(path, want, &back, NULL, err,
				       sizeof(err)), -1);
	if (!strstr(err, needle))
		fail_msg("error '%s' lacks '%s'", err, needle);
	/* A refused file's bytes never reach the caller. */
	assert_int_equal(back.n_gpus, 0);
	assert_int_equal(back.n_numa, 0);
	assert_int_equal(back.host_ram_bytes, 0);
}

static void test_round_trip(void **state)
{
	static const char *const topos[] = { H200, G4DN };

	for (size_t i = 0; i < 2; i++) {
		char path[PATH_MAX], err[512];
		struct mc_cache_header h;
		struct stat st;

		write_cache(topos[i], "rt", path, sizeof(path));
		assert_int_equal(mc_cache_read(path, facts.source, &back, &h,
					       err, sizeof(err)), 0);
		assert_memory_equal(&facts, &back, sizeof(facts));
		assert_string_equal(h.version, MC_VERSION);
		assert_int_equal(h.format, MC_CACHE_FORMAT);
		/* Any source is fine for memcore audit --cache. */
		assert_int_equal(mc_cache_read(path, NULL, &back, NULL, err,
					       sizeof(err)), 0);
		assert_int_equal(stat(path, &st), 0);
		assert_int_equal(st.st_mode & 07777, 0644);
		assert_int_equal(st.st_uid, geteuid());
	}
	assert_int_equal(back.n_gpus, 8);
}

static void test_live_round_trip(void **state)
{
	char path[PATH_MAX], err[512];

	assert_int_equal(mc_topology_load(NULL, &facts, err, sizeof(err)), 0);
	cache_path("live", path, sizeof(path));
	assert_int_equal(mc_cache_write(path, &facts, err, sizeof(err)), 0);
	assert_int_equal(mc_cache_read(path, mc_cache_source_of(""), &back,
				       NULL, err, sizeof(err)), 0);
	assert_memory_equal(&facts, &back, sizeof(facts));
	assert_string_equal(mc_cache_source_of(NULL), "live");
	assert_string_equal(mc_cache_source_of("/x.xml"), "/x.xml");
	/* A policy naming a TopologyFile does not take live facts. */
	expect_refused(path, "/etc/slurm/node.xml", "built from topology live");
}

static void test_no_temp_left(void **state)
{
	char path[PATH_MAX], err[512], cmd[PATH_MAX + 64];

	write_cache(G4DN, "tmpcheck", path, sizeof(path));
	/* Overwriting goes through a new file, never in place. */
	assert_int_equal(mc_cache_write(path, &facts, err, sizeof(err)), 0);
	snprintf(cmd, sizeof(cmd), "ls '%s' | grep -q '\\.tmp\\.'", dir);
	assert_int_not_equal(system(cmd), 0);
}

static void test_write_fails(void **state)
{
	char path[PATH_MAX], err[512];

	load(G4DN);
	cache_path("no/such/dir/cache", path, sizeof(path));
	assert_int_equal(mc_cache_write(path, &facts, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "No such file or directory"));
	assert_int_equal(mc_cache_write("", &facts, err, sizeof(err)), -1);
}

static void test_missing(void **state)
{
	char path[PATH_MAX];

	cache_path("absent", path, sizeof(path));
	expect_refused(path, NULL, "No such file or directory");
	expect_refused("", NULL, "no file name");
}

/* Flip one byte at off: the checksum must catch it. */
static void test_corrupt(void **state)
{
	static const long offsets[] = { 0x40, 400, 5000, 54000 };

	for (size_t i = 0; i < 4; i++) {
		char path[PATH_MAX];
		unsigned char c;
		int fd;

		write_cache(H200, "corrupt", path, sizeof(path));
		fd = open(path, O_RDWR);
		assert_true(fd >= 0);
		assert_int_equal(pread(fd, &c, 1, offsets[i]), 1);
		c ^= 0x01;
		assert_int_equal(pwrite(fd, &c, 1, offsets[i]), 1);
		close(fd);
		expect_refused(path, NULL, "checksum mismatch (corrupt)");
	}
}

static void test_truncated(void **state)
{
	char path[PATH_MAX];

	write_cache(H200, "short", path, sizeof(path));
	assert_int_equal(truncate(path, 1000), 0);
	expect_refused(path, NULL, "bytes, this memcore writes");
	assert_int_equal(truncate(path, 0), 0);
	expect_refused(path, NULL, "0 bytes");
}

/* Rewrite the header with `edit` applied and a matching checksum: what
 * another memcore or another host would have written. */
static void rewrite_header(const char *path,
			   void (*edit)(struct mc_cache_header *h))
{
	struct mc_cache_header h;
	int fd = open(path, O_RDWR);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &h, sizeof(h), 0), (ssize_t)sizeof(h));
	assert_int_equal(pread(fd, &back, sizeof(back), sizeof(h)),
			 (ssize_t)sizeof(back));
	edit(&h);
	h.checksum = mc_cache_checksum(&h, &back);
	assert_int_equal(pwrite(fd, &h, sizeof(h), 0), (ssize_t)sizeof(h));
	close(fd);
}

static void other_version(struct mc_cache_header *h)
{
	snprintf(h->version, sizeof(h->version), "0.0.1-old");
}

static void other_host(struct mc_cache_header *h)
{
	snprintf(h->host, sizeof(h->host), "gpu-node-that-is-not-this-one");
}

static void other_magic(struct mc_cache_header *h)
{
	memcpy(h->magic, "NOTOURS", 8);
}

static void other_format(struct mc_cache_header *h)
{
	h->format = MC_CACHE_FORMAT + 1;
}

/* A cache another memcore or another host wrote: refused, saying why. */
static void test_foreign(void **state)
{
	char format[64];
	const struct {
		const char *name;	/* also the cache's file name */
		void (*edit)(struct mc_cache_header *h);
		const char *want;
	} rows[] = {
		{ "other-version", other_version,
		  "written by memcore 0.0.1-old, this is " MC_VERSION },
		{ "other-host", other_host,
		  "written on host gpu-node-that-is-not-this-one" },
		{ "other-magic", other_magic,
		  "not a memcore node-facts cache" },
		{ "other-format", other_format, format },
	};

	snprintf(format, sizeof(format), "format %u, this memcore reads %u",
		 MC_CACHE_FORMAT + 1, MC_CACHE_FORMAT);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char path[PATH_MAX];

		fprintf(stderr, "row: %s\n", rows[i].name);
		write_cache(G4DN, rows[i].name, path, sizeof(path));
		rewrite_header(path, rows[i].edit);
		expect_refused(path, NULL, rows[i].want);
	}
}

static void test_other_source(void **state)
{
	char path[PATH_MAX], xml[PATH_MAX];

	write_cache(G4DN, "source", path, sizeof(path));
	data_path(H200, xml, sizeof(xml));
	expect_refused(path, xml, "built from topology");
	expect_refused(path, "live", "the policy names live");
}

/* An XML edited in place after slurmd started: the cache is stale. */
static void test_source_changed(void **state)
{
	char xml[PATH_MAX], copy[PATH_MAX], path[PATH_MAX], err[512];
	char cmd[3 * PATH_MAX];
	struct timeval tv[2] = { { 1000000000, 0 }, { 1000000000, 0 } };

	data_path(G4DN, xml, sizeof(xml));
	cache_path("g4dn.xml", copy, sizeof(copy));
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", xml, copy);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(mc_topology_load(copy, &facts, err, sizeof(err)), 0);
	cache_path("stale", path, sizeof(path));
	assert_int_equal(mc_cache_write(path, &facts, err, sizeof(err)), 0);
	assert_int_equal(mc_cache_read(path, copy, &back, NULL, err,
				       sizeof(err)), 0);
	assert_int_equal(utimes(copy, tv), 0);
	expect_refused(path, copy, "changed since slurmd wrote the cache");
	unlink(copy);
	expect_refused(path, copy, "No such file or directory");
}

static void test_permissions(void **state)
{
	char path[PATH_MAX];

	write_cache(G4DN, "perm", path, sizeof(path));
	assert_int_equal(chmod(path, 0666), 0);
	expect_refused(path, NULL, "writable by group or others (mode 0666)");
	assert_int_equal(chmod(path, 0644), 0);
	if (geteuid() == 0) {
		assert_int_equal(chown(path, 4321, 4321), 0);
		expect_refused(path, NULL, "owned by uid 4321, not root");
	}
}

static void test_not_a_file(void **state)
{
	char path[PATH_MAX];

	cache_path("adir", path, sizeof(path));
	assert_int_equal(mkdir(path, 0755), 0);
	expect_refused(path, NULL, "not a regular file");
	cache_path("fifo", path, sizeof(path));
	assert_int_equal(mkfifo(path, 0644), 0);
	/* Must return at once, not wait for a writer. */
	expect_refused(path, NULL, "not a regular file");
	cache_path("link", path, sizeof(path));
	assert_int_equal(symlink("/etc/hostname", path), 0);
	expect_refused(path, NULL, "Too many levels of symbolic links");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_live_round_trip),
		cmocka_unit_test(test_no_temp_left),
		cmocka_unit_test(test_write_fails),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_foreign),
		cmocka_unit_test(test_other_source),
		cmocka_unit_test(test_source_changed),
		cmocka_unit_test(test_permissions),
		cmocka_unit_test(test_not_a_file),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
