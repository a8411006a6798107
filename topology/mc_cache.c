/*
 * mc_cache.c - the node-facts cache file (see mc_cache.h).
 *
 * Runs in slurmd (write, once per start) and in every slurmstepd (read):
 * no allocation, every descriptor closed on every path, nothing that can
 * block on a FIFO or follow a planted symlink.
 */
#include "mc_cache.h"
#include "mc_util.h"
#include "mc_parse.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef MC_VERSION
#define MC_VERSION "unknown"
#endif

#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL

/*
 * FNV-1a over 64-bit words (then the tail bytes): 8 times fewer rounds
 * than the byte-wise hash, which alone took 50 us for the 54 KB of facts,
 * half the budget of a cache read.
 */
static uint64_t fnv1a(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t w;

		memcpy(&w, p + i, sizeof(w));
		h ^= w;
		h *= FNV_PRIME;
	}
	for (; i < len; i++) {
		h ^= p[i];
		h *= FNV_PRIME;
	}
	return h;
}

uint64_t mc_cache_checksum(const struct mc_cache_header *h,
			   const struct mc_node_facts *f)
{
	struct mc_cache_header copy = *h;

	copy.checksum = 0;
	return fnv1a(fnv1a(FNV_OFFSET, &copy, sizeof(copy)), f, sizeof(*f));
}

const char *mc_cache_source_of(const char *topology_file)
{
	return topology_file && *topology_file ? topology_file : "live";
}

const char *mc_cache_default_path(void)
{
	struct stat st;

	if (stat("/var/spool/slurmd", &st) == 0 && S_ISDIR(st.st_mode))
		return MC_CACHE_DEFAULT_PATH;
	if (stat("/var/lib/slurm/slurmd", &st) == 0 && S_ISDIR(st.st_mode))
		return MC_CACHE_DEBIAN_PATH;
	return MC_CACHE_DEFAULT_PATH;
}

static void this_host(char *buf, size_t len)
{
	memset(buf, 0, len);
	if (gethostname(buf, len - 1) != 0)
		snprintf(buf, len, "unknown");
}

/* Size and mtime of the topology file, zero for the live machine. */
static int source_stamp(const char *source, uint64_t *size, int64_t *mtime_ns,
			char *why, size_t whylen)
{
	struct stat st;

	*size = 0;
	*mtime_ns = 0;
	if (!strcmp(source, "live"))
		return 0;
	if (stat(source, &st) < 0) {
		snprintf(why, whylen, "%s", strerror(errno));
		return -1;
	}
	*size = (uint64_t)st.st_size;
	*mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000LL +
		    st.st_mtim.tv_nsec;
	return 0;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int mc_cache_write(const char *path, const struct mc_node_facts *f,
		   char *err, size_t errlen)
{
	struct mc_cache_header h;
	char tmp[PATH_MAX], why[128];
	int fd, n;

	if (!path || !*path || !f) {
		mc_err(err, errlen, "cache: no file name");
		return -1;
	}
	n = snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	if (n < 0 || (size_t)n >= sizeof(tmp)) {
		mc_err(err, errlen, "cache %s: %s", path,
			  strerror(ENAMETOOLONG));
		return -1;
	}
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, MC_CACHE_MAGIC, sizeof(MC_CACHE_MAGIC));
	h.format = MC_CACHE_FORMAT;
	h.header_bytes = sizeof(h);
	h.facts_bytes = sizeof(*f);
	h.written_at = (int64_t)time(NULL);
	if (source_stamp(f->source, &h.source_size, &h.source_mtime_ns, why,
			 sizeof(why)) < 0) {
		mc_err(err, errlen, "cache %s: topology %s: %s", path,
			  f->source, why);
		return -1;
	}
	snprintf(h.version, sizeof(h.version), "%s", MC_VERSION);
	this_host(h.host, sizeof(h.host));
	h.checksum = mc_cache_checksum(&h, f);

	/* O_EXCL + O_NOFOLLOW: never write through a name someone else
	 * prepared; a leftover of a crashed writer with our pid goes. */
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0644);
	if (fd < 0) {
		mc_err(err, errlen, "cache %s: %s", tmp, strerror(errno));
		return -1;
	}
	/* 0644 whatever slurmd's umask: every slurmstepd must read it. */
	if (fchmod(fd, 0644) < 0 || write_all(fd, &h, sizeof(h)) < 0 ||
	    write_all(fd, f, sizeof(*f)) < 0 || fsync(fd) < 0) {
		int e = errno;

		close(fd);
		unlink(tmp);
		mc_err(err, errlen, "cache %s: %s", tmp, strerror(e));
		return -1;
	}
	if (close(fd) < 0 || rename(tmp, path) < 0) {
		int e = errno;

		unlink(tmp);
		mc_err(err, errlen, "cache %s: %s", path, strerror(e));
		return -1;
	}
	return 0;
}

static int read_all(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Terminate every string of facts that came from a file: a checksum
 * proves who wrote it, this proves nobody reads past an array. */
static bool facts_sane(struct mc_node_facts *f)
{
	f->source[sizeof(f->source) - 1] = '\0';
	if (f->n_numa > MC_MAX_NUMA || f->n_gpus > MC_MAX_GPUS ||
	    f->n_numa == 0)
		return false;
	for (uint32_t i = 0; i < f->n_numa; i++)
		f->numa[i].cpus[sizeof(f->numa[i].cpus) - 1] = '\0';
	for (uint32_t i = 0; i < f->n_gpus; i++) {
		f->gpus[i].pci_bus_id[sizeof(f->gpus[i].pci_bus_id) - 1] =
			'\0';
		f->gpus[i].model[sizeof(f->gpus[i].model) - 1] = '\0';
		if (f->gpus[i].index != i)
			return false;
	}
	return true;
}

static int read_checked(const char *path, const char *want_source,
			struct mc_node_facts *f, struct mc_cache_header *h,
			char *err, size_t errlen)
{
	struct stat st;
	char host[MC_CACHE_HOST_MAX], why[128];
	uint64_t size;
	int64_t mtime_ns;
	int fd, rc = -1;

	/* A FIFO or link planted at the path must not hang or fool a
	 * step. */
	fd = mc_open_regular("cache", path, MC_OPEN_NOFOLLOW, 0, &st, err,
			     errlen);
	if (fd < 0)
		return -1;
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		mc_err(err, errlen, "cache %s: owned by uid %u, not root",
			  path, (unsigned)st.st_uid);
		goto out;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		mc_err(err, errlen, "cache %s: writable by group or others "
			  "(mode %04o)", path, (unsigned)(st.st_mode & 07777));
		goto out;
	}
	if ((uint64_t)st.st_size != sizeof(*h) + sizeof(*f)) {
		mc_err(err, errlen, "cache %s: %lld bytes, this memcore "
			  "writes %zu (another build, or truncated)", path,
			  (long long)st.st_size, sizeof(*h) + sizeof(*f));
		goto out;
	}
	if (read_all(fd, h, sizeof(*h)) < 0 || read_all(fd, f, sizeof(*f)) < 0) {
		mc_err(err, errlen, "cache %s: short read", path);
		goto out;
	}
	if (memcmp(h->magic, MC_CACHE_MAGIC, sizeof(MC_CACHE_MAGIC))) {
		mc_err(err, errlen, "cache %s: not a memcore node-facts "
			  "cache", path);
		goto out;
	}
	if (h->format != MC_CACHE_FORMAT || h->header_bytes != sizeof(*h) ||
	    h->facts_bytes != sizeof(*f)) {
		mc_err(err, errlen, "cache %s: format %u, this memcore reads "
			  "%u", path, h->format, MC_CACHE_FORMAT);
		goto out;
	}
	h->version[sizeof(h->version) - 1] = '\0';
	h->host[sizeof(h->host) - 1] = '\0';
	/* The checksum before any field that came from the file is trusted:
	 * a corrupt file names itself corrupt, not "another version". */
	if (mc_cache_checksum(h, f) != h->checksum) {
		mc_err(err, errlen, "cache %s: checksum mismatch (corrupt)",
			  path);
		goto out;
	}
	if (strcmp(h->version, MC_VERSION)) {
		mc_err(err, errlen, "cache %s: written by memcore %s, this "
			  "is %s", path, h->version, MC_VERSION);
		goto out;
	}
	this_host(host, sizeof(host));
	if (strcmp(h->host, host)) {
		mc_err(err, errlen, "cache %s: written on host %s, this is "
			  "%s", path, h->host, host);
		goto out;
	}
	if (!facts_sane(f)) {
		mc_err(err, errlen, "cache %s: inconsistent facts", path);
		goto out;
	}
	if (want_source && strcmp(f->source, want_source)) {
		mc_err(err, errlen, "cache %s: built from topology %s, the "
			  "policy names %s", path, f->source, want_source);
		goto out;
	}
	if (source_stamp(f->source, &size, &mtime_ns, why, sizeof(why)) < 0) {
		mc_err(err, errlen, "cache %s: topology %s: %s", path,
			  f->source, why);
		goto out;
	}
	if (size != h->source_size || mtime_ns != h->source_mtime_ns) {
		mc_err(err, errlen, "cache %s: topology %s changed since "
			  "slurmd wrote the cache", path, f->source);
		goto out;
	}
	rc = 0;
out:
	close(fd);
	return rc;
}

int mc_cache_read(const char *path, const char *want_source,
		  struct mc_node_facts *f, struct mc_cache_header *hdr,
		  char *err, size_t errlen)
{
	struct mc_cache_header h;

	if (err && errlen)
		err[0] = '\0';
	if (!f)
		return -1;
	if (!path || !*path) {
		memset(f, 0, sizeof(*f));
		mc_err(err, errlen, "cache: no file name");
		return -1;
	}
	if (read_checked(path, want_source, f, &h, err, errlen) < 0) {
		/* Never leave a refused file's bytes for a careless caller. */
		memset(f, 0, sizeof(*f));
		return -1;
	}
	if (hdr)
		*hdr = h;
	return 0;
}
