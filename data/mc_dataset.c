/*
 * mc_dataset.c - the job's dataset paths, their filesystem and size, and
 * the policy's note (see mc_dataset.h).
 */
#include "mc_dataset.h"

#include <errno.h>
#include <fts.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <time.h>

#include "mc_parse.h"
#include "mc_thread.h"
#include "mc_util.h"

static const char *const from_words[] = { "--dataset", "HF_DATASETS_CACHE",
					  "HF_HOME" };

const char *mc_fs_network_name(uint32_t magic)
{
	switch (magic) {
	case MC_FS_LUSTRE: return "Lustre";
	case MC_FS_GPFS: return "GPFS (Spectrum Scale)";
	case MC_FS_BEEGFS: return "BeeGFS";
	case MC_FS_NFS: return "NFS";
	case MC_FS_CEPH: return "CephFS";
	case MC_FS_CIFS: case MC_FS_SMB2: case MC_FS_SMB: return "SMB/CIFS";
	default: return NULL;
	}
}

static int add_path(struct mc_dataset *d, const char *s, size_t l,
		    enum mc_dataset_from from, char *err, size_t errlen)
{
	if (!l) {
		snprintf(err, errlen, "--dataset: an empty path in the list "
			 "(expected PATH[,PATH...])");
		return -1;
	}
	if (l >= MC_DATASET_PATH_MAX) {
		snprintf(err, errlen, "%s: a path of %zu characters (at most "
			 "%d)", from_words[from], l, MC_DATASET_PATH_MAX - 1);
		return -1;
	}
	if (d->n == MC_DATASET_PATHS_MAX) {
		snprintf(err, errlen, "--dataset: more than %d paths",
			 MC_DATASET_PATHS_MAX);
		return -1;
	}
	memcpy(d->p[d->n].path, s, l);
	d->p[d->n].path[l] = '\0';
	d->p[d->n].from = from;
	d->n++;
	return 0;
}

int mc_dataset_paths(const char *option, const char *hf_datasets_cache,
		     const char *hf_home, struct mc_dataset *d, char *err,
		     size_t errlen)
{
	memset(d, 0, sizeof(*d));
	for (const char *p = option; p && *p;) {
		const char *e = strchr(p, ',');
		size_t l = e ? (size_t)(e - p) : strlen(p);

		if (add_path(d, p, l, MC_DS_OPTION, err, errlen) < 0)
			return -1;
		if (!e)
			break;
		p = e + 1;
		if (!*p)
			return add_path(d, p, 0, MC_DS_OPTION, err, errlen);
	}
	if (hf_datasets_cache && *hf_datasets_cache)
		return add_path(d, hf_datasets_cache,
				strlen(hf_datasets_cache),
				MC_DS_HF_DATASETS_CACHE, err, errlen);
	if (hf_home && *hf_home) {
		char buf[MC_DATASET_PATH_MAX + 16];
		int l = snprintf(buf, sizeof(buf), "%s/datasets", hf_home);

		return add_path(d, buf, (size_t)l, MC_DS_HF_HOME, err, errlen);
	}
	return 0;
}

static uint64_t ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)(t.tv_sec - t0->tv_sec) * 1000 +
	       (uint64_t)((t.tv_nsec - t0->tv_nsec) / 1000000);
}

/* Where the probe of one path stands, as the caller sees it at its
 * deadline. */
enum { PS_ASKED = 0, PS_WALKING, PS_DONE };

/*
 * Shared by the caller and the thread that does the I/O: the figures are
 * published here under mu as they come. The caller stops waiting at its
 * deadline; the thread may stay blocked in the filesystem long after, so
 * the last of the two to let go frees it.
 */
struct probe_ctx {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int refs;
	bool finished;
	bool abandoned;
	uint64_t max_entries;
	uint32_t max_ms;
	bool local;
	mc_dataset_statfs_fn fs;
	struct mc_dataset d;
	unsigned char state[MC_DATASET_PATHS_MAX];
};

/* Publish one path's figures; returns true when the caller has given up
 * on the probe (no use going on). */
static bool publish(struct probe_ctx *c, size_t i,
		    const struct mc_dataset_path *p, unsigned char state)
{
	bool abandoned;

	pthread_mutex_lock(&c->mu);
	c->d.p[i] = *p;
	c->state[i] = state;
	abandoned = c->abandoned;
	pthread_mutex_unlock(&c->mu);
	return abandoned;
}

/* FNV-1a, 64 bits: a key from a mount's source and type. */
static uint64_t fnv1a(const char *s, uint64_t h)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

uint64_t mc_dataset_fsid(const char *path, const struct statfs *sf)
{
	uint64_t id = 0;
	char line[4096];
	struct stat st;
	FILE *f;

	memcpy(&id, &sf->f_fsid, sizeof(id) < sizeof(sf->f_fsid) ?
	       sizeof(id) : sizeof(sf->f_fsid));
	if (id)
		return id;
	/* No f_fsid (NFS gives none): the mount's source and type, the
	 * same on every node that mounts that export. */
	if (stat(path, &st) < 0)
		return 0;
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned maj, min;
		char *dash, type[64], src[1024];

		if (sscanf(line, "%*s %*s %u:%u", &maj, &min) != 2 ||
		    makedev(maj, min) != st.st_dev ||
		    !(dash = strstr(line, " - ")) ||
		    sscanf(dash + 3, "%63s %1023s", type, src) != 2)
			continue;
		id = fnv1a(src, fnv1a(" ", fnv1a(type,
						 0xcbf29ce484222325ULL))) | 1;
		break;
	}
	fclose(f);
	return id;
}

static void probe_run(struct probe_ctx *c)
{
	struct timespec t0;
	uint64_t seen = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (size_t i = 0; i < c->d.n; i++) {
		struct mc_dataset_path p;
		char *argv[2] = { p.path, NULL };
		char abs[PATH_MAX];
		struct statfs sf;
		FTS *fts;
		FTSENT *e;

		pthread_mutex_lock(&c->mu);
		p = c->d.p[i];
		pthread_mutex_unlock(&c->mu);
		/* The user's own stat: EACCES is the kernel's answer for a
		 * path the user may not read. */
		if (c->fs(p.path, &sf) < 0) {
			p.err = errno;
			if (publish(c, i, &p, PS_DONE))
				return;
			continue;
		}
		p.fs_magic = (uint32_t)sf.f_type;
		p.fsid = mc_dataset_fsid(p.path, &sf);
		if (realpath(p.path, abs) && strlen(abs) < sizeof(p.path))
			snprintf(p.path, sizeof(p.path), "%s", abs);
		if (!c->local && !mc_fs_network_name(p.fs_magic)) {
			if (publish(c, i, &p, PS_DONE))
				return;
			continue;
		}
		if (publish(c, i, &p, PS_WALKING))
			return;
		fts = fts_open(argv, FTS_PHYSICAL | FTS_XDEV | FTS_NOCHDIR,
			       NULL);
		if (!fts) {
			p.err = errno;
			if (publish(c, i, &p, PS_DONE))
				return;
			continue;
		}
		while ((e = fts_read(fts))) {
			if (seen++ >= c->max_entries ||
			    ((seen & 255) == 0 && ms_since(&t0) > c->max_ms)) {
				p.partial = true;
				break;
			}
			if (e->fts_info == FTS_F) {
				p.files++;
				p.bytes += (uint64_t)e->fts_statp->st_size;
			} else if (e->fts_info == FTS_DNR && e->fts_level == 0) {
				p.err = e->fts_errno;
			}
			/* What the caller takes at its deadline. */
			if ((seen & 255) == 0 &&
			    publish(c, i, &p, PS_WALKING))
				break;
		}
		fts_close(fts);
		if (publish(c, i, &p, PS_DONE))
			return;
	}
}

static void probe_release(struct probe_ctx *c)
{
	int left;

	pthread_mutex_lock(&c->mu);
	left = --c->refs;
	pthread_mutex_unlock(&c->mu);
	if (left)
		return;
	pthread_cond_destroy(&c->cv);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

static void *probe_thread(void *arg)
{
	struct probe_ctx *c = arg;

	probe_run(c);
	pthread_mutex_lock(&c->mu);
	c->finished = true;
	pthread_cond_signal(&c->cv);
	pthread_mutex_unlock(&c->mu);
	probe_release(c);
	return NULL;
}

int mc_dataset_probe_with(struct mc_dataset *d, uint64_t max_entries,
			  uint32_t max_ms, bool local,
			  mc_dataset_statfs_fn fs)
{
	struct probe_ctx *c;
	pthread_t t;
	struct timespec dl;
	uint64_t wait_ms = (uint64_t)max_ms + MC_DATASET_ANSWER_MS;
	int rc;

	for (size_t i = 0; i < d->n; i++) {
		d->p[i].err = 0;
		d->p[i].fs_magic = 0;
		d->p[i].bytes = d->p[i].files = 0;
		d->p[i].partial = false;
		d->p[i].fsid = 0;
		d->p[i].io_when = 0;
	}
	if (!d->n)
		return 0;
	c = calloc(1, sizeof(*c));
	if (!c) {
		for (size_t i = 0; i < d->n; i++)
			d->p[i].err = ENOMEM;
		return 0;
	}
	c->d = *d;
	c->max_entries = max_entries;
	c->max_ms = max_ms;
	c->local = local;
	c->fs = fs;
	c->refs = 2;
	pthread_mutex_init(&c->mu, NULL);
	mc_cond_init_monotonic(&c->cv);
	rc = mc_thread_start(&t, 0, true, probe_thread, c);
	if (rc) {
		/* No thread: the probe as it is, in this one. */
		c->refs = 1;
		probe_run(c);
		*d = c->d;
		probe_release(c);
		return 0;
	}
	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += (time_t)(wait_ms / 1000);
	dl.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
	dl.tv_sec += dl.tv_nsec / 1000000000L;
	dl.tv_nsec %= 1000000000L;
	pthread_mutex_lock(&c->mu);
	while (!c->finished &&
	       pthread_cond_timedwait(&c->cv, &c->mu, &dl) != ETIMEDOUT)
		;
	*d = c->d;
	if (!c->finished) {
		/* A filesystem that did not answer (a hard NFS mount whose
		 * server is gone waits for ever): what it had answered, the
		 * rest unknown. */
		c->abandoned = true;
		for (size_t i = 0; i < d->n; i++) {
			if (c->state[i] == PS_ASKED)
				d->p[i].err = ETIMEDOUT;
			else if (c->state[i] == PS_WALKING)
				d->p[i].partial = true;
		}
	}
	pthread_mutex_unlock(&c->mu);
	probe_release(c);
	return 0;
}

int mc_dataset_probe(struct mc_dataset *d, uint64_t max_entries,
		     uint32_t max_ms, bool local)
{
	return mc_dataset_probe_with(d, max_entries, max_ms, local, statfs);
}

/* Percent-encode what the list's syntax uses, and every control byte. */
static int put_path(char *buf, size_t len, size_t *used, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c <= 0x20 || c >= 0x7f || c == '%' || c == ',' ||
		    c == ';' || c == '=') {
			if (mc_appendf(buf, len, used, "%%%02X", c) < 0)
				return -1;
		} else if (mc_appendf(buf, len, used, "%c", c) < 0) {
			return -1;
		}
	}
	return 0;
}

const char *mc_dataset_format(const struct mc_dataset *d, char *buf,
			      size_t len)
{
	size_t used = 0;

	if (!len)
		return buf;
	buf[0] = '\0';
	for (size_t i = 0; i < d->n; i++) {
		const struct mc_dataset_path *p = &d->p[i];

		if (mc_appendf(buf, len, &used, "%sfs=%x,bytes=%" PRIu64
			       ",files=%" PRIu64 ",partial=%d,err=%d,from=%d,",
			       i ? ";" : "", p->fs_magic, p->bytes,
			       p->files, p->partial ? 1 : 0, p->err,
			       (int)p->from) < 0 ||
		    (p->io_when > 0 &&
		     mc_appendf(buf, len, &used, "io=%" PRId64 ":%" PRIu32
				":%" PRIu32 ":%" PRIu32 ",", p->io_when,
				p->io_ratio_x100, p->io_gain_x100,
				p->io_verdict) < 0) ||
		    mc_appendf(buf, len, &used, "path=") < 0 ||
		    put_path(buf, len, &used, p->path) < 0) {
			buf[0] = '\0';
			return buf;
		}
	}
	return buf;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static int parse_u64(const char *s, size_t l, int base, uint64_t max,
		     uint64_t *out)
{
	char buf[32], *end;
	unsigned long long v;

	if (!l || l >= sizeof(buf) || s[0] == '-' || s[0] == '+')
		return -1;
	memcpy(buf, s, l);
	buf[l] = '\0';
	errno = 0;
	v = strtoull(buf, &end, base);
	if (errno || *end || v > max)
		return -1;
	*out = v;
	return 0;
}

/* "io=WHEN:RATIO:GAIN:VERDICT," (mc_iobench.h) at *q: the figure a
 * `memcore iobench` kept, read by srun from the user's cache. */
static int parse_io(const char **q, const char *end,
		    struct mc_dataset_path *p)
{
	/* WHEN at most the end of year 9999 (MC_IOBENCH_WHEN_MAX): a date
	 * strftime can print. */
	static const uint64_t max[4] = { MC_IOBENCH_WHEN_MAX, UINT32_MAX,
					 UINT32_MAX, 2 };
	const char *s = *q + 3;
	uint64_t v[4];

	for (int i = 0; i < 4; i++) {
		const char *e = memchr(s, i < 3 ? ':' : ',',
				       (size_t)(end - s));

		if (!e || parse_u64(s, (size_t)(e - s), 10, max[i], &v[i]) < 0)
			return -1;
		s = e + 1;
	}
	if (!v[0])
		return -1;
	p->io_when = (int64_t)v[0];
	p->io_ratio_x100 = (uint32_t)v[1];
	p->io_gain_x100 = (uint32_t)v[2];
	p->io_verdict = (uint32_t)v[3];
	*q = s;
	return 0;
}

static int parse_entry(const char *s, size_t l, struct mc_dataset_path *p,
		       char *why, size_t whylen)
{
	static const char *const keys[] = { "fs=", "bytes=", "files=",
					    "partial=", "err=", "from=",
					    "path=" };
	const char *q = s, *end = s + l;

	memset(p, 0, sizeof(*p));
	for (int k = 0; k < 7; k++) {
		size_t kl = strlen(keys[k]);
		const char *e;
		uint64_t v;

		if ((size_t)(end - q) < kl || strncmp(q, keys[k], kl)) {
			snprintf(why, whylen, "expected %.*s", (int)kl - 1,
				 keys[k]);
			return -1;
		}
		q += kl;
		if (k == 6)
			break;
		e = memchr(q, ',', (size_t)(end - q));
		if (!e || parse_u64(q, (size_t)(e - q), k == 0 ? 16 : 10,
				    k == 0 ? UINT32_MAX : k == 3 ? 1
				    : k == 4 ? 4095 : k == 5 ? 2 : UINT64_MAX,
				    &v) < 0) {
			snprintf(why, whylen, "%.*s: a bad value",
				 (int)kl - 1, keys[k]);
			return -1;
		}
		switch (k) {
		case 0: p->fs_magic = (uint32_t)v; break;
		case 1: p->bytes = v; break;
		case 2: p->files = v; break;
		case 3: p->partial = v != 0; break;
		case 4: p->err = (int)v; break;
		case 5: p->from = (enum mc_dataset_from)v; break;
		}
		q = e + 1;
		if (k == 5 && (size_t)(end - q) > 3 && !strncmp(q, "io=", 3) &&
		    parse_io(&q, end, p) < 0) {
			snprintf(why, whylen, "io: a bad value");
			return -1;
		}
	}
	{
		size_t n = 0;

		while (q < end) {
			char c = *q++;

			if (c == '%') {
				int hi, lo;

				if (end - q < 2 || (hi = hexval(q[0])) < 0 ||
				    (lo = hexval(q[1])) < 0 || !(hi | lo)) {
					snprintf(why, whylen, "path: a bad %% "
						 "escape");
					return -1;
				}
				c = (char)(hi * 16 + lo);
				q += 2;
			} else if ((unsigned char)c <= 0x20 ||
				   (unsigned char)c >= 0x7f || c == ',' ||
				   c == '=') {
				snprintf(why, whylen, "path: an unescaped "
					 "character");
				return -1;
			}
			if (n + 1 >= sizeof(p->path)) {
				snprintf(why, whylen, "path: too long");
				return -1;
			}
			p->path[n++] = c;
		}
		if (!n) {
			snprintf(why, whylen, "path: empty");
			return -1;
		}
		p->path[n] = '\0';
	}
	return 0;
}

int mc_dataset_parse(const char *s, struct mc_dataset *d, char *err,
		     size_t errlen)
{
	char why[MC_ERR_MAX];

	memset(d, 0, sizeof(*d));
	if (!s || !*s)
		return 0;
	for (const char *p = s;;) {
		const char *e = strchr(p, ';');
		size_t l = e ? (size_t)(e - p) : strlen(p);

		if (d->n == MC_DATASET_PATHS_MAX) {
			snprintf(err, errlen, "%s: more than %d paths: not a "
				 "value memcore wrote (the variable is memcore's "
				 "own, set by srun and sbatch: unset it)",
				 MC_DATASET_ENV, MC_DATASET_PATHS_MAX);
			return -1;
		}
		if (parse_entry(p, l, &d->p[d->n], why, sizeof(why)) < 0) {
			snprintf(err, errlen, "%s: entry %zu: %s: not a value "
				 "memcore wrote (the variable is memcore's own, "
				 "set by srun and sbatch: unset it)",
				 MC_DATASET_ENV, d->n + 1, why);
			memset(d, 0, sizeof(*d));
			return -1;
		}
		d->n++;
		if (!e)
			break;
		p = e + 1;
	}
	return 0;
}

uint64_t mc_dataset_network_bytes(const struct mc_dataset *d)
{
	uint64_t b = 0;

	for (size_t i = 0; i < d->n; i++)
		if (!d->p[i].err && mc_fs_network_name(d->p[i].fs_magic))
			b += d->p[i].bytes;
	return b;
}

/*
 * A dataset path quoted in a message: what srun measured, or what the
 * job's environment says it measured (MEMCORE_DATASET_FACTS, which the
 * user can set by hand): its control bytes escaped (a newline would forge
 * a line of the user's stderr and slurmd's log, an escape sequence drive
 * the terminal), cut with "..." to len so that the reason after it always
 * shows. Returns buf.
 */
static const char *quote_path(const char *path, char *buf, size_t len)
{
	return mc_escape(path, 0, buf, len);
}

int mc_dataset_in_memory_bytes(const struct mc_dataset *d, uint64_t *bytes,
			       char *err, size_t errlen)
{
	static const char fix[] = "give its size in RAM: "
				  "--dataset-in-memory=SIZE";
	uint64_t sum = 0;
	size_t named = 0;
	char a[32], q[MC_QUOTE_MAX];

	for (size_t i = 0; i < d->n; i++) {
		const struct mc_dataset_path *p = &d->p[i];

		if (p->from != MC_DS_OPTION)
			continue;
		named++;
		if (p->err) {
			snprintf(err, errlen, "--dataset-in-memory: the size of "
				 "%s (--dataset) is unknown: it cannot be read "
				 "(%s); %s", quote_path(p->path, q, sizeof(q)),
				 strerror(p->err), fix);
			return -1;
		}
		if (p->partial) {
			snprintf(err, errlen, "--dataset-in-memory: the size of "
				 "%s (--dataset) is unknown: the walk stopped "
				 "at its bounds after %" PRIu64 " files (at "
				 "least %s); %s", quote_path(p->path, q,
							     sizeof(q)),
				 p->files, mc_fmt_bytes(p->bytes, a, sizeof(a)),
				 fix);
			return -1;
		}
		sum = mc_add_sat64(sum, p->bytes);
	}
	if (!named) {
		snprintf(err, errlen, "--dataset-in-memory without SIZE "
			 "measures the --dataset paths, and none is given: add "
			 "--dataset=PATH, or %s", fix);
		return -1;
	}
	if (!sum) {
		snprintf(err, errlen, "--dataset-in-memory: the --dataset "
			 "paths measured 0 bytes (no files, or not measured "
			 "where they were read); %s", fix);
		return -1;
	}
	*bytes = sum;
	return 0;
}

const char *mc_dataset_stage_cmd(const struct mc_dataset *d,
				 bool network_only, const char *scratch,
				 const char *job, char *buf, size_t len)
{
	char paths[MC_DATASET_PATHS_MAX * (4 * MC_DATASET_PATH_MAX + 3) + 1];
	char w[4 * MC_DATASET_PATH_MAX + 3], dest[4 * MC_DATASET_PATH_MAX + 48];
	size_t used = 0;

	if (!len)
		return buf;
	buf[0] = paths[0] = '\0';
	for (size_t i = 0; i < d->n; i++) {
		const struct mc_dataset_path *p = &d->p[i];

		if (p->err || (network_only ? !mc_fs_network_name(p->fs_magic)
					    : p->from != MC_DS_OPTION))
			continue;
		/* Quoted: the user pastes it, and a path may hold a blank,
		 * a $ or a quote. */
		mc_appendf(paths, sizeof(paths), &used, "%s ",
			   mc_shell_word(p->path, w, sizeof(w)));
	}
	/* job is memcore's own text, a number or "$SLURM_JOB_ID" for the
	 * shell to expand: outside the quotes. */
	snprintf(dest, sizeof(dest), "%s/job_%s",
		 mc_shell_word(scratch && *scratch ? scratch : "LOCAL_SCRATCH",
			       w, sizeof(w)), job);
	/* memcore stage: parallel, resumable, checks the space first; the
	 * plugin's epilog removes SCRATCH/job_J (mc_scratch.h). */
	if (paths[0] && snprintf(buf, len, "memcore stage %s%s", paths,
				 dest) >= (int)len)
		buf[0] = '\0';
	return buf;
}

/*
 * What shuffled reads cost where the dataset is: the figure `memcore
 * iobench` measured on that filesystem and kept in the user's cache
 * (io_when), said as measured with its date; else the book's, said as
 * the book's. Returns the lines written (at most max).
 */
static size_t io_lines(const struct mc_dataset *d, char (*lines)[200],
		       size_t max)
{
	static const char *const verdict[] = { "read it as is", "stage it",
					       "pre-shuffle it" };
	size_t n = 0;

	for (size_t i = 0; i < d->n && n < max; i++) {
		const struct mc_dataset_path *p = &d->p[i];
		char day[16], gain[64] = "";
		time_t t = (time_t)p->io_when;
		struct tm tm;

		/* A date that does not print (a forged year of 11 digits)
		 * is no figure: strftime leaves day unterminated then. */
		if (p->err || !mc_fs_network_name(p->fs_magic) ||
		    p->io_when <= 0 || !gmtime_r(&t, &tm) ||
		    !strftime(day, sizeof(day), "%Y-%m-%d", &tm))
			continue;
		if (p->io_gain_x100)
			snprintf(gain, sizeof(gain), ", %.1fx local scratch's",
				 p->io_gain_x100 / 100.0);
		snprintf(lines[n++], 200, "memcore:   measured here on %s "
			 "(memcore iobench): shuffled mmap takes %.1fx its "
			 "sequential read%s: %s", day,
			 p->io_ratio_x100 / 100.0, gain,
			 verdict[p->io_verdict < 3 ? p->io_verdict : 0]);
	}
	if (!n && max)
		snprintf(lines[n++], 200, "memcore:   shuffled reads from a "
			 "network filesystem are slow: 94.2 s per GiB on "
			 "Lustre vs 0.78 s on local NVMe (the book's figure, "
			 "not measured here: memcore iobench)");
	return n;
}

size_t mc_dataset_note(const struct mc_dataset *d, enum mc_netds policy,
		       const char *scratch, uint64_t scratch_free,
		       uint32_t job_id, char (*lines)[200], size_t max,
		       bool *refuse)
{
	uint64_t need = mc_dataset_network_bytes(d);
	char a[32], b[32], dest[MC_DATASET_PATH_MAX + 32], job[16];
	char cmd[MC_DATASET_STAGE_CMD_MAX], q[MC_DATASET_NOTE_PATH];
	bool any = false, fits;
	size_t n = 0;

	*refuse = false;
	if (policy == MC_NETDS_IGNORE)
		return 0;
	for (size_t i = 0; i < d->n; i++)
		any |= !d->p[i].err && mc_fs_network_name(d->p[i].fs_magic);
	if (!any)
		return 0;
	/* The command --dataset-in-memory's fix prints too; job 0 (memcore
	 * check, before any job): the shell's $SLURM_JOB_ID. */
	if (job_id)
		snprintf(job, sizeof(job), "%u", job_id);
	else
		snprintf(job, sizeof(job), "$SLURM_JOB_ID");
	snprintf(dest, sizeof(dest), "%s/job_%s", scratch && *scratch ?
		 scratch : "LOCAL_SCRATCH", job);
	mc_dataset_stage_cmd(d, true, scratch, job, cmd, sizeof(cmd));
	for (size_t i = 0; i < d->n && n < max; i++) {
		const struct mc_dataset_path *p = &d->p[i];
		const char *fs = p->err ? NULL : mc_fs_network_name(p->fs_magic);

		if (!fs)
			continue;
		snprintf(lines[n++], 200, "memcore: dataset %s (%s) is on %s: "
			 "%s%s in %" PRIu64 " files", quote_path(p->path, q,
				 MC_DATASET_NOTE_PATH), from_words[p->from],
			 fs, p->partial ? "at least " : "",
			 mc_fmt_bytes(p->bytes, a, sizeof(a)), p->files);
	}
	n += io_lines(d, lines + n, max - n);
	fits = scratch && *scratch && scratch_free != UINT64_MAX &&
	       scratch_free >= need;
	if (n < max) {
		if (!scratch || !*scratch)
			snprintf(lines[n++], 200, "memcore:   no local scratch "
				 "is named (LocalScratch=): ask your "
				 "administrator where to stage %s",
				 mc_fmt_bytes(need, a, sizeof(a)));
		else if (scratch_free == UINT64_MAX)
			snprintf(lines[n++], 200, "memcore:   local scratch "
				 "%s: its free space is unknown, the dataset is "
				 "%s", scratch, mc_fmt_bytes(need, a, sizeof(a)));
		else
			snprintf(lines[n++], 200, "memcore:   local scratch "
				 "%s: %s free, the dataset is %s (%s)", scratch,
				 mc_fmt_bytes(scratch_free, a, sizeof(a)),
				 mc_fmt_bytes(need, b, sizeof(b)),
				 fits ? "it fits" : "too small to stage it");
	}
	if (n < max && (fits || !scratch || !*scratch))
		snprintf(lines[n++], 200, "memcore:   stage it first: %s%s",
			 cmd, scratch && *scratch ?
			 " (made for you, mode 0700, removed at the "
			 "job's end)" : "");
	if (policy == MC_NETDS_REFUSE && fits) {
		*refuse = true;
		if (n < max)
			snprintf(lines[n++], 200, "memcore: refused "
				 "(NetworkDataset=refuse): the dataset fits "
				 "on local scratch; stage it and read it from "
				 "%s", dest);
	}
	return n;
}
