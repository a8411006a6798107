/*
 * mc_shape_cache.c - the partition's nodes cached on the login host,
 * revalidated by slurmctld's update times (see mc_shape_cache.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <slurm/slurm_errno.h>

#include "mc_cache.h"
#include "mc_shape_cache.h"
#include "mc_util.h"

#define SHAPE_MAGIC "MCSHAPE"	/* 7 characters and a NUL */
/* 2: revalidated by partitions + config; 3: the partition's first
 * node's memory (mc_slurm_part.first_node_mem_mb) */
#define SHAPE_FORMAT 3u
#define SHAPE_KEY_MAX 1024
#define SHAPE_PATH_MAX 4096
/* Files a directory keeps (one per slurm.conf file and partition): more,
 * and the others are removed when one is written, so that test clusters
 * or many slurm.conf copies cannot fill it. */
#define SHAPE_FILES_MAX 64

struct shape_header {
	char magic[8];			/* SHAPE_MAGIC */
	uint32_t format;		/* SHAPE_FORMAT */
	uint32_t header_bytes;		/* sizeof(struct shape_header) */
	uint32_t nodes_bytes;		/* sizeof(struct mc_ctld_nodes) */
	uint32_t record_bytes;		/* sizeof(struct mc_node_record) */
	uint64_t n;			/* records that follow */
	int64_t conf_update;		/* slurm_conf_t.last_update */
	int64_t part_update;		/* partition_info_msg_t.last_update */
	uint64_t checksum;		/* FNV-1a 64, this field 0 */
	char key[SHAPE_KEY_MAX];	/* see cache_key() */
};

/* The directory, made when missing; -1 when it is not the caller's own
 * (said once) or the cache is switched off (MEMCORE_CACHE_DIR=none). */
static int cache_dir(char *buf, size_t len)
{
	const char *d = getenv("MEMCORE_CACHE_DIR");
	const char *x = getenv("XDG_RUNTIME_DIR");
	struct stat st;

	if (d && !strcmp(d, "none"))
		return -1;
	if (d && *d)
		snprintf(buf, len, "%s", d);
	else if (x && x[0] == '/' && stat(x, &st) == 0 &&
		 st.st_uid == geteuid())	/* not another user's (sudo) */
		snprintf(buf, len, "%s/memcore", x);
	else
		snprintf(buf, len, "/tmp/memcore-%u", (unsigned)geteuid());
	if (mkdir(buf, 0700) < 0 && errno != EEXIST)
		return -1;	/* e.g. a read-only place: no cache, quietly */
	/* Someone else's directory (made first in /tmp) could feed us
	 * another cluster's nodes: never use it. */
	if (lstat(buf, &st) < 0 || !S_ISDIR(st.st_mode) ||
	    st.st_uid != geteuid() || (st.st_mode & 077)) {
		static bool said;	/* once per call of the command */

		if (!said)
			fprintf(stderr, "memcore: shape cache directory %s is "
				"not this user's own 0700 directory: not "
				"used\n", buf);
		said = true;
		return -1;
	}
	return 0;
}

/* What the cached nodes are of: this slurm.conf (as a file: path, inode,
 * size, mtime), this memcore executable (a rebuilt or upgraded one may
 * lay the records out otherwise), and the partition. */
static int cache_key(const char *conf, const char *partition, bool all,
		     char *key, size_t len)
{
	struct stat c, e;

	if (stat(conf, &c) < 0 || stat("/proc/self/exe", &e) < 0)
		return -1;
	snprintf(key, len, "conf=%s ino=%ju size=%jd mtime=%jd.%09ld "
		 "exe=%ju:%jd:%jd.%09ld partition=%s", conf,
		 (uintmax_t)c.st_ino, (intmax_t)c.st_size,
		 (intmax_t)c.st_mtim.tv_sec, c.st_mtim.tv_nsec,
		 (uintmax_t)e.st_ino, (intmax_t)e.st_size,
		 (intmax_t)e.st_mtim.tv_sec, e.st_mtim.tv_nsec,
		 all ? "(all)" : partition ? partition : "(default)");
	return 0;
}

static int cache_path(const char *key, char *path, size_t len)
{
	char dir[SHAPE_PATH_MAX];

	if (cache_dir(dir, sizeof(dir)) < 0)
		return -1;
	snprintf(path, len, "%s/shapes-%016jx", dir, (uintmax_t)
		 mc_cache_hash(MC_CACHE_HASH_INIT, key, strlen(key) + 1));
	return 0;
}

static uint64_t checksum(const struct shape_header *h,
			 const struct mc_ctld_nodes *n,
			 const struct mc_node_record *rec)
{
	struct shape_header hc;
	uint64_t s;

	memcpy(&hc, h, sizeof(hc));
	hc.checksum = 0;
	s = mc_cache_hash(MC_CACHE_HASH_INIT, &hc, sizeof(hc));
	s = mc_cache_hash(s, n, sizeof(*n));
	return mc_cache_hash(s, rec, (size_t)h->n * sizeof(*rec));
}

/*
 * Read path into *out and *h. 0; 1 when there is no file; -1 with why
 * set when the file is not one this call may use.
 */
static int read_cache(const char *path, const char *key,
		      struct shape_header *h, struct mc_ctld_nodes *out,
		      const char **why)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	struct mc_ctld_nodes n;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (fd < 0) {
		*why = strerror(errno);
		return errno == ENOENT ? 1 : -1;
	}
	*why = "not a regular file of this user, written by nobody else";
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid() || (st.st_mode & 022))
		goto out;
	*why = "truncated";
	if ((size_t)st.st_size < sizeof(*h) + sizeof(n) ||
	    mc_io_all(fd, h, sizeof(*h), false) < 0)
		goto out;
	*why = "not a memcore shape cache of this format";
	if (memcmp(h->magic, SHAPE_MAGIC, sizeof(SHAPE_MAGIC)) ||
	    h->format != SHAPE_FORMAT || h->header_bytes != sizeof(*h) ||
	    h->nodes_bytes != sizeof(n) ||
	    h->record_bytes != sizeof(struct mc_node_record))
		goto out;
	*why = "more nodes than a cache holds";
	if (h->n == 0 || h->n > MC_SHAPE_CACHE_MAX_NODES)
		goto out;
	*why = "wrong size";
	if ((uint64_t)st.st_size != sizeof(*h) + sizeof(n) +
	    h->n * sizeof(struct mc_node_record))
		goto out;
	*why = "made for another slurm.conf, memcore or partition";
	h->key[SHAPE_KEY_MAX - 1] = '\0';
	if (strcmp(h->key, key))
		goto out;
	*why = "out of memory";
	out->node = malloc((size_t)h->n * sizeof(*out->node));
	if (!out->node)
		goto out;
	*why = "truncated";
	if (mc_io_all(fd, &n, sizeof(n), false) < 0 ||
	    mc_io_all(fd, out->node, (size_t)h->n * sizeof(*out->node),
		      false) < 0)
		goto out;
	*why = "checksum mismatch (corrupt)";
	if (checksum(h, &n, out->node) != h->checksum || n.n != h->n ||
	    n.from_cache)
		goto out;
	/* The struct as stored, with this process's pointer. */
	{
		struct mc_node_record *rec = out->node;

		*out = n;
		out->node = rec;
	}
	out->partition[sizeof(out->partition) - 1] = '\0';
	for (size_t i = 0; i < out->n; i++)
		out->node[i].name[sizeof(out->node[i].name) - 1] = '\0';
	rc = 0;
out:
	close(fd);
	if (rc) {
		free(out->node);
		memset(out, 0, sizeof(*out));
	}
	return rc;
}

/* errno after a failed slurm_load_*: "nothing changed since". */
static bool unchanged(void)
{
	return errno == SLURM_NO_CHANGE_IN_DATA;
}

/* A cache read but no longer valid: *out all zero again, as on every
 * miss (mc_ctld_free() alone keeps the counts beside the records). */
static int stale(struct mc_ctld_nodes *out)
{
	mc_ctld_free(out);
	memset(out, 0, sizeof(*out));
	return MC_SHAPE_CACHE_MISS;
}

int mc_shape_cache_get(const char *conf, const char *partition, bool all,
		       struct mc_ctld_nodes *out, partition_info_msg_t **pm,
		       slurm_conf_t **cc)
{
	char key[SHAPE_KEY_MAX], path[SHAPE_PATH_MAX];
	struct shape_header h;
	const char *why = NULL;
	int r;

	*pm = NULL;
	*cc = NULL;
	memset(out, 0, sizeof(*out));
	if (cache_key(conf, partition, all, key, sizeof(key)) < 0 ||
	    strlen(key) >= SHAPE_KEY_MAX - 1 ||
	    cache_path(key, path, sizeof(path)) < 0)
		return MC_SHAPE_CACHE_MISS;
	r = read_cache(path, key, &h, out, &why);
	if (r) {
		if (r < 0) {
			fprintf(stderr, "memcore: shape cache %s: %s: loading "
				"the nodes from slurmctld\n", path, why);
			unlink(path);
		}
		return MC_SHAPE_CACHE_MISS;
	}
	/*
	 * Not the node table's update time: slurmctld bumps that on every
	 * node state change (each job that starts or ends anywhere), so on
	 * a busy cluster it never says "unchanged". Shapes change with the
	 * configuration: a reconfigure or restart moves both of these, a
	 * partition update (its nodes, its TRES) the first. What neither
	 * sees is in the header comment; a refusal from the cache is
	 * confirmed by a fresh load (mc_ctld_nodes.from_cache).
	 */
	if (slurm_load_partitions((time_t)h.part_update, pm, SHOW_ALL) ==
	    SLURM_SUCCESS)
		return stale(out);
	*pm = NULL;
	if (!unchanged())
		return stale(out);	/* the full load says what failed */
	if (slurm_load_ctl_conf((time_t)h.conf_update, cc) == SLURM_SUCCESS)
		return stale(out);
	*cc = NULL;
	if (!unchanged())
		return stale(out);
	out->from_cache = true;
	return MC_SHAPE_CACHE_HIT;
}

/* Keep the directory of path to SHAPE_FILES_MAX caches: when it holds
 * more, every other one goes (each is one load from slurmctld away). */
static void prune(const char *path)
{
	char dir[SHAPE_PATH_MAX], f[SHAPE_PATH_MAX * 2];
	const char *base = strrchr(path, '/');
	struct dirent *e;
	size_t n = 0;
	DIR *d;

	if (!base)
		return;
	snprintf(dir, sizeof(dir), "%.*s", (int)(base - path), path);
	for (int pass = 0; pass < 2; pass++) {
		d = opendir(dir);
		if (!d)
			return;
		while ((e = readdir(d))) {
			if (strncmp(e->d_name, "shapes-", 7) ||
			    !strcmp(e->d_name, base + 1))
				continue;
			if (pass == 0) {
				n++;
				continue;
			}
			snprintf(f, sizeof(f), "%s/%s", dir, e->d_name);
			unlink(f);
		}
		closedir(d);
		if (n < SHAPE_FILES_MAX)
			return;
	}
}

void mc_shape_cache_put(const char *conf, const char *partition, bool all,
			const struct mc_ctld_nodes *nodes, time_t conf_update,
			time_t part_update)
{
	char key[SHAPE_KEY_MAX], path[SHAPE_PATH_MAX], tmp[SHAPE_PATH_MAX + 8];
	struct shape_header h;
	struct mc_ctld_nodes n;
	bool bad;
	int fd;

	if (!nodes->n || nodes->n > MC_SHAPE_CACHE_MAX_NODES ||
	    cache_key(conf, partition, all, key, sizeof(key)) < 0 ||
	    strlen(key) >= SHAPE_KEY_MAX - 1 ||
	    cache_path(key, path, sizeof(path)) < 0)
		return;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, SHAPE_MAGIC, sizeof(SHAPE_MAGIC));
	h.format = SHAPE_FORMAT;
	h.header_bytes = sizeof(h);
	h.nodes_bytes = sizeof(n);
	h.record_bytes = sizeof(struct mc_node_record);
	h.n = nodes->n;
	h.conf_update = (int64_t)conf_update;
	h.part_update = (int64_t)part_update;
	snprintf(h.key, sizeof(h.key), "%s", key);
	memcpy(&n, nodes, sizeof(n));
	n.node = NULL;		/* no pointer leaves the process */
	n.from_cache = false;	/* set by the read that finds it valid */
	h.checksum = checksum(&h, &n, nodes->node);

	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	fd = mkstemp(tmp);
	if (fd < 0)
		return;
	bad = fchmod(fd, 0600) < 0 ||
	      mc_io_all(fd, &h, sizeof(h), true) < 0 ||
	      mc_io_all(fd, &n, sizeof(n), true) < 0 ||
	      mc_io_all(fd, nodes->node, nodes->n * sizeof(*nodes->node),
			true) < 0;
	if (close(fd) < 0)
		bad = true;
	if (bad || rename(tmp, path) < 0)
		unlink(tmp);
	else
		prune(path);
}
