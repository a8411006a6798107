/*
 * memcore usage - a memory cgroup's use, split into non-reclaimable memory
 * (anon, shmem: what an OOM kill is about) and reclaimable file pages (page
 * cache, memory-mapped datasets: what the kernel drops first).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include <linux/magic.h>

#include <jansson.h>

#include "cli.h"
#include "mc_cgroup.h"
#include "mc_memstat.h"
#include "mc_util.h"
#include "mc_parse.h"

static void usage_usage(FILE *out)
{
	fprintf(out,
"usage: memcore usage (--cgroup DIR | --pid PID) [--json]\n"
"\n"
"Show a memory cgroup's use: non-reclaimable = usage - active_file -\n"
"inactive_file, split into anonymous memory and shared memory (/dev/shm,\n"
"tmpfs, pinned buffers), apart from the reclaimable file pages (page cache,\n"
"memory-mapped files) that the kernel drops before an OOM kill.\n"
"  --cgroup DIR  the cgroup directory (v1: under the memory hierarchy,\n"
"                e.g. /sys/fs/cgroup/memory/slurm/uid_0/job_1/step_0)\n"
"  --pid PID     the memory cgroup of this process (/proc/PID/cgroup)\n"
"  --json        machine-readable output\n"
"The limit is the effective one: the lowest on the path from the cgroup up\n"
"to the root, and the cgroup that sets it (Slurm's cgroup/v2 limits a step\n"
"at .../step_S/user and the job at its job level, above the task cgroups).\n""The swap limit is found the same way (swap_limit_cgroup in --json).\n"
"\n"
"Exit status (memcore(8) EXIT STATUS):\n"
"  0  the cgroup was read\n"
"  2  usage or input error (not a memory cgroup, no such process)\n");
}

enum { OPT_CGROUP = 256, OPT_PID };

static const struct option usage_options[] = {
	{ "cgroup", required_argument, NULL, OPT_CGROUP },
	{ "pid", required_argument, NULL, OPT_PID },
	{ "json", no_argument, NULL, MC_CLI_OPT_JSON },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static json_t *json_bytes(uint64_t v)
{
	return v == MC_MEM_UNLIMITED ? json_null()
				     : json_integer((json_int_t)v);
}

static void print_json(const char *dir, const struct mc_memstat *m)
{
	json_t *o = json_object();

	json_object_set_new(o, "cgroup", json_string(dir));
	json_object_set_new(o, "version", json_integer(m->version));
	json_object_set_new(o, "limit_bytes", json_bytes(m->limit_bytes));
	json_object_set_new(o, "limit_cgroup", m->limit_dir[0]
			    ? json_string(m->limit_dir) : json_null());
	json_object_set_new(o, "usage_bytes", json_bytes(m->usage_bytes));
	json_object_set_new(o, "non_reclaimable_bytes",
			    json_bytes(m->non_reclaimable_bytes));
	json_object_set_new(o, "anon_bytes", json_bytes(m->anon_bytes));
	json_object_set_new(o, "shmem_bytes", json_bytes(m->shmem_bytes));
	json_object_set_new(o, "file_bytes", json_bytes(m->file_bytes));
	json_object_set_new(o, "peak_bytes", json_bytes(m->peak_bytes));
	json_object_set_new(o, "swap_limit_bytes",
			    json_bytes(m->swap_limit_bytes));
	json_object_set_new(o, "swap_limit_cgroup", m->swap_limit_dir[0]
			    ? json_string(m->swap_limit_dir) : json_null());
	json_object_set_new(o, "oom_kills",
			    json_integer((json_int_t)m->oom_kills));
	mc_cli_json_print(o);
}

static void print_text(const char *dir, const struct mc_memstat *m)
{
	char a[32], b[32], c[32];

	printf("cgroup %s (v%d)\n", dir, m->version);
	if (m->limit_bytes == MC_MEM_UNLIMITED)
		printf("  limit            none (no memory limit on the path "
		       "to the root)\n");
	else if (m->limit_dir[0] && strcmp(m->limit_dir, dir))
		printf("  limit            %s, set at %s\n",
		       mc_fmt_bytes(m->limit_bytes, a, sizeof(a)),
		       m->limit_dir);
	else
		printf("  limit            %s\n",
		       mc_fmt_bytes(m->limit_bytes, a, sizeof(a)));
	printf("  in use           %s\n",
	       mc_fmt_bytes(m->usage_bytes, a, sizeof(a)));
	printf("  non-reclaimable  %s = anon %s + shmem %s (+ kernel)\n",
	       mc_fmt_bytes(m->non_reclaimable_bytes, a, sizeof(a)),
	       mc_fmt_bytes(m->anon_bytes, b, sizeof(b)),
	       mc_fmt_bytes(m->shmem_bytes, c, sizeof(c)));
	printf("  reclaimable      %s of file pages (page cache, mapped "
	       "files): not what an OOM kill is about\n",
	       mc_fmt_bytes(m->file_bytes, a, sizeof(a)));
	if (m->peak_bytes != MC_MEM_UNLIMITED)
		printf("  peak             %s (file pages included)\n",
		       mc_fmt_bytes(m->peak_bytes, a, sizeof(a)));
	if (m->swap_limit_bytes == MC_MEM_UNLIMITED)
		printf("  swap limit       none\n");
	else if (m->swap_limit_dir[0] && strcmp(m->swap_limit_dir, dir))
		printf("  swap limit       %s, set at %s\n",
		       mc_fmt_bytes(m->swap_limit_bytes, a, sizeof(a)),
		       m->swap_limit_dir);
	else
		printf("  swap limit       %s\n",
		       mc_fmt_bytes(m->swap_limit_bytes, a, sizeof(a)));
	printf("  OOM kills        %" PRIu64 "\n", m->oom_kills);
}

/*
 * The directory --cgroup names, resolved (realpath) into buf. A path that
 * resolves into a cgroup filesystem is used as resolved; one that leaves
 * it through a symlink (into root-only files, say) is refused; a plain
 * directory tree without symlinks (a copied cgroup, as the tests' data)
 * is read as it is. Returns 0, or -1 with err set.
 */
static int cgroup_dir(const char *dir, char *buf, size_t len, char *err,
		      size_t errlen)
{
	char real[PATH_MAX], q[256];
	struct statfs fs;

	/* The user's words, escaped and cut (one line, no ESC): the reason
	 * after them always fits. */
	mc_escape(dir, 160, q, sizeof(q));
	if (!realpath(dir, real)) {
		snprintf(err, errlen, "--cgroup=%s: %s", q, strerror(errno));
		return -1;
	}
	if (statfs(real, &fs) != 0) {
		snprintf(err, errlen, "--cgroup=%s: %s", q, strerror(errno));
		return -1;
	}
	if (fs.f_type != CGROUP_SUPER_MAGIC &&
	    fs.f_type != CGROUP2_SUPER_MAGIC) {
		char part[PATH_MAX];
		struct stat st;

		/* Outside cgroupfs: only a tree reached without a symlink
		 * on the way (each component of the path as given). */
		size_t total = strlen(dir);

		for (size_t n = total; n > 0; n--) {
			if ((n != total && dir[n] != '/') || n >= sizeof(part))
				continue;
			memcpy(part, dir, n);
			part[n] = '\0';
			if (lstat(part, &st) == 0 &&
			    S_ISLNK(st.st_mode)) {
				char qp[256], qr[256];

				snprintf(err, errlen, "--cgroup=%s: %s is a "
					 "symlink to %s, outside the cgroup "
					 "filesystem: refused; name the "
					 "cgroup directory itself", q,
					 mc_escape(part, 160, qp, sizeof(qp)),
					 mc_escape(real, 160, qr, sizeof(qr)));
				return -1;
			}
		}
	}
	if ((size_t)snprintf(buf, len, "%s", real) >= len) {
		snprintf(err, errlen, "--cgroup=%s: path too long", q);
		return -1;
	}
	return 0;
}

/* What the command line names: --cgroup DIR or --pid PID. */
struct usage_args {
	const char *dir, *pid_arg;
};

/* One of usage's own options (mc_cli_option_fn). */
static int take_usage_option(void *ctx, int opt, const char *arg,
			     const char *name)
{
	struct usage_args *a = ctx;

	if (opt == OPT_CGROUP)
		a->dir = arg;
	else	/* OPT_PID */
		a->pid_arg = arg;
	return MC_CLI_ON;
}

int mc_cmd_usage(int argc, char **argv)
{
	struct usage_args ua = { .dir = NULL };
	struct mc_cli_common c = { 0 };	/* --json only */
	const char *dir, *pid_arg;
	struct mc_cgroup cg;
	struct mc_memstat m;
	char err[1024];
	bool json;
	int rc;

	rc = mc_cli_read_options("usage", argc, argv, usage_options,
				 usage_usage, &c, take_usage_option, &ua);
	if (rc != MC_CLI_ON)
		return rc;
	dir = ua.dir;
	pid_arg = ua.pid_arg;
	json = c.json;
	if (!dir == !pid_arg)
		return mc_cli_usage_error("usage: give one of --cgroup DIR or "
					  "--pid PID");
	if (pid_arg) {
		char *end;
		long pid;

		errno = 0;
		pid = strtol(pid_arg, &end, 10);
		if (errno || end == pid_arg || *end || pid <= 0 ||
		    pid > INT_MAX)
			return mc_cli_usage_error("--pid=%s: not a process id",
						  pid_arg);
		if (mc_cgroup_find(NULL, (pid_t)pid, &cg, err,
				   sizeof(err)) < 0)
			return mc_cli_usage_error("--pid=%s: %s", pid_arg,
						  err);
	} else {
		char resolved[PATH_MAX];

		if (cgroup_dir(dir, resolved, sizeof(resolved), err,
			       sizeof(err)) < 0 ||
		    mc_cgroup_at(resolved, &cg, err, sizeof(err)) < 0)
			return mc_cli_usage_error("%s", err);
	}
	if (mc_memstat_read(&cg, &m, err, sizeof(err)) < 0)
		return mc_cli_usage_error("%s", err);
	if (json)
		print_json(cg.dir, &m);
	else
		print_text(cg.dir, &m);
	return 0;
}
